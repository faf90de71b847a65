// What `auto` takes on the CUDA backend, problem by problem, planned as on an H100 (the device
// facts' defaults; runs without a GPU): the benchmark, realworld and crossovers suites of
// `halo bench` at their GPU sizes, as `halo bench --explain` recorded them on an H200 on
// 2026-11-28 (bench/results/dispatch-h200-2026-11-28-*.json, each row's fastest measured beside
// it; the rows where another strategy measured faster say so). The dispatch must keep these
// choices, or change one on purpose with the measurement that says the new one is faster.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "core/parse.hpp"
#include "profile.hpp"
#include "support.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

struct Row {
  int rank;
  Extents ext;
  const char* spec;   // a named filter, or empty: dense random weights of `radius`
  int radius;
  Boundary mode;
  const char* want;
};

std::string chosen(const Row& r, const FastTuning& tuning = {}) {
  const Filter f = *r.spec ? make_named_filter(r.spec, r.rank)
                           : random_filter(std::vector<std::int64_t>(std::size_t(r.rank),
                                                                     2 * r.radius + 1));
  Problem p(r.rank, r.ext, 1, f, DType::f32, Op::correlate, Edges::all(r.mode, 0.0));
  p.set_tuning(tuning);
  std::string why;
  const Strategy* s = detail::choose_within(Backend::cuda, p, &why);
  return s ? s->name() : "none: " + why;
}

std::string text(const Row& r) {
  return std::to_string(r.rank) + "-D " + detail::join_extents(r.ext, r.rank) + " " +
         (*r.spec ? std::string(r.spec) : "r=" + std::to_string(r.radius)) + " " +
         to_string(r.mode);
}

const std::vector<Row> kRows = {
    {2, {16384, 16384, 1}, "", 4, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 1, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 2, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 3, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 5, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 7, Boundary::constant, "fast"}, // fft measured 7% faster (H200)
    {2, {16384, 16384, 1}, "", 15, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "", 4, Boundary::constant, "fast"},
    {1, {268435456, 1, 1}, "", 16, Boundary::constant, "fast"},
    {1, {268435456, 1, 1}, "", 64, Boundary::constant, "fft"},
    {3, {640, 640, 640}, "", 1, Boundary::constant, "fast"},
    {3, {640, 640, 640}, "", 2, Boundary::constant, "fast"},
    {3, {640, 640, 640}, "", 3, Boundary::constant, "fast"},
    {2, {16384, 16384, 1}, "", 4, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "", 1, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "", 2, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "", 3, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "", 5, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "", 7, Boundary::reflect, "fast"}, // fft measured 8% faster (H200)
    {2, {16384, 16384, 1}, "", 15, Boundary::reflect, "fft"},
    {1, {268435456, 1, 1}, "", 4, Boundary::reflect, "fast"},
    {1, {268435456, 1, 1}, "", 16, Boundary::reflect, "fast"},
    {1, {268435456, 1, 1}, "", 64, Boundary::reflect, "fft"},
    {3, {640, 640, 640}, "", 1, Boundary::reflect, "fast"},
    {3, {640, 640, 640}, "", 2, Boundary::reflect, "fast"},
    {3, {640, 640, 640}, "", 3, Boundary::reflect, "fast"},
    {2, {16384, 16384, 1}, "gaussian:sigma=0.75", 0, Boundary::constant, "fast"}, // separable 2% faster (H200)
    {2, {16384, 16384, 1}, "gaussian:sigma=1", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "gaussian:sigma=1.25", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "gaussian:sigma=1.5", 0, Boundary::constant, "separable"},
    {3, {512, 512, 512}, "gaussian:sigma=0.25", 0, Boundary::constant, "fast"},
    {3, {512, 512, 512}, "gaussian:sigma=0.5", 0, Boundary::constant, "separable"},
    {3, {512, 512, 512}, "gaussian:sigma=0.75", 0, Boundary::constant, "separable"},
    {1, {268435456, 1, 1}, "box:33", 0, Boundary::constant, "fast"},
    {1, {268435456, 1, 1}, "box:49", 0, Boundary::constant, "fast"}, // separable measured 5% faster (H200)
    {1, {268435456, 1, 1}, "box:65", 0, Boundary::constant, "fast"}, // separable measured 24% faster (H200)
    {1, {268435456, 1, 1}, "box:66", 0, Boundary::constant, "separable"},
    {1, {268435456, 1, 1}, "box:97", 0, Boundary::constant, "separable"},
    {1, {268435456, 1, 1}, "box:129", 0, Boundary::constant, "separable"},
    {1, {268435456, 1, 1}, "gaussian:sigma=34", 0, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "gaussian:sigma=40", 0, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "gaussian:sigma=48", 0, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "gaussian:sigma=56", 0, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "gaussian:sigma=64", 0, Boundary::constant, "fft"},
    {2, {16384, 16384, 1}, "", 10, Boundary::constant, "fft"},
    {2, {16384, 16384, 1}, "", 12, Boundary::constant, "fft"},
    {2, {16384, 16384, 1}, "gaussian:sigma=2", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "gaussian:sigma=4", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "gaussian:sigma=8", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "box:31", 0, Boundary::constant, "separable"},
    {2, {16384, 16384, 1}, "log:sigma=4", 0, Boundary::constant, "lowrank"},
    {1, {268435456, 1, 1}, "gaussian:sigma=16", 0, Boundary::constant, "fft"},
    {1, {268435456, 1, 1}, "box:255", 0, Boundary::constant, "separable"},
    {3, {512, 512, 512}, "gaussian:sigma=1", 0, Boundary::constant, "separable"},
    {3, {512, 512, 512}, "gaussian:sigma=2", 0, Boundary::constant, "separable"},
    {3, {512, 512, 512}, "box:9", 0, Boundary::constant, "separable"},
};

TEST(DispatchCuda, TakesTheTablesChoices) {
  if (!find_strategy("fast")) GTEST_SKIP() << "halo was built without CUDA";
  for (const Row& r : kRows) EXPECT_EQ(chosen(r), r.want) << text(r);
}

// The same table under the H200's profile (bench/results/profile-h200-2026-11-28.json, written
// by `halo bench --suite crossovers --profile-out` from the run the table was recorded from):
// every row takes the strategy the H200 measured fastest, the five rows the H100 profile leaves
// to a slower one included.
TEST(DispatchCuda, TheH200ProfileTakesWhatTheH200MeasuredFastest) {
  if (!find_strategy("fast")) GTEST_SKIP() << "halo was built without CUDA";
  const std::string path =
      std::string(HALO_TEST_DATA_DIR) + "/../../bench/results/profile-h200-2026-11-28.json";
  const FastTuning h200 =
      detail::parse_fast_tuning(tool::tuning_with_profile(path, ""), "the H200 profile");
  const std::map<std::string, std::string> faster = {
      {"2-D 16384x16384 r=7 constant", "fft"},
      {"2-D 16384x16384 r=7 reflect", "fft"},
      {"2-D 16384x16384 gaussian:sigma=0.75 constant", "separable"},
      {"1-D 268435456 box:49 constant", "separable"},
      {"1-D 268435456 box:65 constant", "separable"}};
  for (const Row& r : kRows) {
    const auto it = faster.find(text(r));
    EXPECT_EQ(chosen(r, h200), it == faster.end() ? r.want : it->second) << text(r);
  }
}

TEST(DispatchCuda, TableCoversEveryStrategyAutoTakes) {
  if (!find_strategy("fast")) GTEST_SKIP() << "halo was built without CUDA";
  for (const char* name : {"fast", "separable", "lowrank", "fft"}) {
    bool seen = false;
    for (const Row& r : kRows) seen = seen || std::string(r.want) == name;
    EXPECT_TRUE(seen) << name << " is in no row of the table";
  }
}

}  // namespace
}  // namespace halo::test
