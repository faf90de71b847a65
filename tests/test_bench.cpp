// `halo bench` end to end on the CPU: every output format, the roofline columns, and bad options.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "core/parse.hpp"
#include "support.hpp"
#include "halo/info.hpp"

namespace halo::test {
namespace {

TEST(Bench, SeedSuiteOnTheCpuInEveryFormat) {
  const Result t = run_cli("bench --suite seed --backend cpu --size 96x80 --reps 3 --warmup 1");
  ASSERT_EQ(t.code, 0) << t.output;
  EXPECT_NE(t.output.find("ceilings (CPU"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("2D 96x80 r=4"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find(" cpu "), std::string::npos) << t.output;

  const Result c = run_cli("bench --suite seed --backend cpu --size 64x64 --reps 2 --format csv");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("suite,problem,strategy,backend,median_ms"), std::string::npos);
  EXPECT_NE(c.output.find("seed,2D 64x64 r=4,cpu,cpu,"), std::string::npos) << c.output;

  const std::string path = std::filesystem::temp_directory_path() /
                           ("halo-bench-" + std::to_string(::getpid()) + ".json");
  const Result j = run_cli("bench --suite 1d --backend cpu --size 5000 --radii 2,9 --reps 2 "
                           "--format json --json " + path);
  ASSERT_EQ(j.code, 0) << j.output;
  std::ifstream f(path);
  const nlohmann::json doc = nlohmann::json::parse(f);
  std::remove(path.c_str());
  ASSERT_TRUE(doc["ceilings"].contains("cpu"));
  EXPECT_GT(doc["ceilings"]["cpu"]["copy_gbs"].get<double>(), 0.0);
  EXPECT_GT(doc["ceilings"]["cpu"]["fma_gflops"].get<double>(), 0.0);
  int rows = 0;
  for (const auto& r : doc["rows"]) {
    if (r["strategy"] != "cpu") continue;
    ++rows;
    const double ms = r["median_ms"].get<double>();
    EXPECT_GT(ms, 0.0);
    EXPECT_EQ(r["runs"].get<int>(), 2);
    // GB/s, GFLOP/s and the roofline fraction follow from the time and the problem's counts.
    EXPECT_NEAR(r["gbs"].get<double>(), r["bytes"].get<double>() / (ms * 1e6), 1e-9);
    EXPECT_NEAR(r["gflops"].get<double>(), r["flops"].get<double>() / (ms * 1e6), 1e-9);
    EXPECT_NEAR(r["roofline_fraction"].get<double>(), r["floor_ms"].get<double>() / ms, 1e-9);
  }
  EXPECT_EQ(rows, 2);
}

// --explain: per problem, auto's pick and why, and the fastest strategy of those timed. With two
// strategies timed (cpu and the much slower reference), the fastest must be cpu, auto's pick.
TEST(Bench, ExplainSaysWhatAutoPicksAndWhetherItWasFastest) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("halo-explain-" + std::to_string(::getpid()) + ".json");
  const Result r = run_cli("bench --suite radii --backend cpu --strategy cpu,reference "
                           "--size 64x48 --radii 1,3 --reps 5 --warmup 1 --explain --json " + path);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("explain 2D 64x48 r=1: auto -> cpu ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("explain 2D 64x48 r=3: auto -> cpu ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fastest measured: cpu "), std::string::npos) << r.output;
  std::ifstream f(path);
  const nlohmann::json doc = nlohmann::json::parse(f);
  std::remove(path.c_str());
  ASSERT_EQ(doc["explain"].size(), 2u);
  for (const auto& e : doc["explain"]) {
    EXPECT_EQ(e["auto"], "cpu");
    EXPECT_EQ(e["fastest"], "cpu");
    EXPECT_TRUE(e["auto_is_fastest"].get<bool>());
    EXPECT_FALSE(e["why"].get<std::string>().empty());
  }
  // Without --explain there is no such section.
  const Result q = run_cli("bench --suite seed --backend cpu --size 32x32 --reps 1 --warmup 0");
  ASSERT_EQ(q.code, 0) << q.output;
  EXPECT_EQ(q.output.find("explain "), std::string::npos) << q.output;
}

// Modes per axis name the problem by all of them (quoted in CSV); one mode, by it.
TEST(Bench, ModesPerAxis) {
  const Result r = run_cli(
      "bench --suite 3d --backend cpu --strategy cpu --size 12x10x9 "
      "--radii 1 --reps 1 --warmup 0 --format csv --mode constant,wrap,reflect");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"3D 12x10x9 r=1 constant,wrap,reflect\",cpu"), std::string::npos)
      << r.output;
  const Result o = run_cli(
      "bench --suite 3d --backend cpu --strategy cpu --size 12x10x9 "
      "--radii 1 --reps 1 --warmup 0 --format csv --mode mirror");
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("3D 12x10x9 r=1 mirror,cpu"), std::string::npos) << o.output;
}

TEST(Bench, BadOptionsAreErrors) {
  const Result a = run_cli("bench --suite nope --backend cpu");
  EXPECT_NE(a.code, 0);
  EXPECT_NE(a.output.find("unknown suite 'nope'"), std::string::npos) << a.output;
  const Result b = run_cli("bench --format xml --backend cpu");
  EXPECT_NE(b.code, 0);
  EXPECT_NE(b.output.find("unknown --format 'xml'"), std::string::npos) << b.output;
  const Result c = run_cli("bench --strategy nope --backend cpu");
  EXPECT_NE(c.code, 0);
  EXPECT_NE(c.output.find("unknown strategy 'nope'"), std::string::npos) << c.output;
  // --tune is parsed strictly, before anything runs; errors name the key and its range.
  const Result t = run_cli("bench --suite seed --backend cpu --size 32x32 --tune slots=1");
  EXPECT_NE(t.code, 0);
  EXPECT_NE(t.output.find("--tune slots=1: expected 2..16"), std::string::npos) << t.output;
  EXPECT_EQ(t.output.find("ceilings"), std::string::npos) << t.output;
  const Result k = run_cli("bench --suite seed --backend cpu --size 32x32 --tune wino=0");
  EXPECT_NE(k.code, 0);
  EXPECT_NE(k.output.find("--tune: unknown key 'wino'"), std::string::npos) << k.output;
  // A valid tuning is accepted (it changes only `fast`) and reported.
  const Result ok = run_cli("bench --suite seed --backend cpu --size 32x32 --reps 1 --warmup 0 "
                            "--tune feed=tma,winograd=0");
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("fast tuned: feed=tma,winograd=0"), std::string::npos) << ok.output;
  // --mode: one mode, or one per axis where every problem of the suite has that rank.
  const Result m = run_cli("bench --suite all --backend cpu --mode reflect,wrap");
  EXPECT_NE(m.code, 0);
  EXPECT_NE(m.output.find("2 modes, but the suite has a problem of rank 1"), std::string::npos)
      << m.output;
  const Result u = run_cli("bench --suite 3d --backend cpu --mode reflect,nope,wrap");
  EXPECT_NE(u.code, 0);
  EXPECT_NE(u.output.find("--mode: unknown boundary mode 'nope'"), std::string::npos) << u.output;
  std::string why;
  if (!cuda_available(&why)) {
    const Result d = run_cli("bench --backend cuda");
    EXPECT_NE(d.code, 0);
    EXPECT_NE(d.output.find("no CUDA device"), std::string::npos) << d.output;
  }
}

// The crossovers from measured points: where the strategy below stops being no slower, going
// up (a later win after a loss does not count), and the FFT cost that turns the model's choice
// into the measured one.
TEST(Bench, CrossoversFromMeasuredPoints) {
  using tool::CrossoverPoint;
  std::vector<CrossoverPoint> pts = {
      {"sep_radius_2d", 5, 1.10, 1.00},  // separable faster
      {"sep_radius_2d", 3, 0.80, 0.95},
      {"sep_radius_2d", 4, 0.80, 0.90},
      {"sep_radius_2d", 6, 0.90, 1.00},  // fast faster again (noise): after a loss, ignored
      {"sep_radius_3d", 1, 2.00, 1.00},  // separable faster from the first
      {"box_rows_taps", 33, 0.90, 1.00},
      {"box_rows_taps", 49, 0.95, 0.99},
      {"box_rows_taps", 65, 1.05, 1.00},
      {"box_rows_taps", 97, 1.20, 1.00},
      {"long_rows_taps", 273, 3.0, 4.7},
      {"long_rows_taps", 321, 4.0, 4.7},
      {"long_rows_taps", 385, 5.0, 4.7},
      // fft_cost: the FFT faster where the model said 0.25 (so a cost below 400), no faster
      // where it said 1.0 and 0.4 (at least 100 and 250): the middle of 250 and 400, 316.
      {"fft_cost", 7, 2.0, 1.0, 0.25},
      {"fft_cost", 10, 1.0, 3.0, 1.0},
      {"fft_cost", 12, 2.0, 2.0, 0.4},
      // cpu_fft_cost: faster where the model said 1.0 (below 100), slower where it said 1.5
      // (at least 66.7): 82.
      {"cpu_fft_cost", 7, 2.0, 1.0, 1.0},
      {"cpu_fft_cost", 9, 1.0, 1.2, 1.5},
  };
  EXPECT_EQ(tool::crossovers_from(pts),
            "sep_radius_2d=4,sep_radius_3d=0,box_rows_taps=65,long_rows_taps=321,fft_cost=316,"
            "cpu_fft_cost=82");
  // The FFT's cost: the default where it picks as measured (costs from 50 to 125 would); one
  // bound alone, 10% beyond it; no cost right everywhere, the least time lost: the default
  // where it loses 0.1 ms, 49 where it would lose 1.0 (and 49 loses 0.1).
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 1.0, 2.0, 2.0}, {"fft_cost", 15, 3.0, 2.0, 0.8}}),
            100);
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 2.0, 1.0, 1.25}}), 73);
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 1.0, 2.0, 0.5}}), 220);
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 3.0, 2.0, 0.5}, {"fft_cost", 6, 1.0, 1.1, 0.4}}),
            100);
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 3.0, 2.0, 2.0}, {"fft_cost", 6, 1.0, 1.1, 1.5}}),
            49);
  EXPECT_EQ(tool::fft_cost_from({{"fft_cost", 5, 3.0, 2.0, 0.0}}), std::nullopt);
  // Each field only where it was measured; a winner everywhere puts the crossover beyond.
  EXPECT_EQ(tool::crossovers_from({{"box_rows_taps", 33, 0.5, 1.0}, {"box_rows_taps", 65, 0.5, 1.0}}),
            "box_rows_taps=66");
  EXPECT_EQ(tool::crossovers_from({{"long_rows_taps", 273, 5.0, 4.0}}), "long_rows_taps=272");
  EXPECT_EQ(tool::crossovers_from({}), "");
  // What it prints is a tuning the core takes.
  const FastTuning t = detail::parse_fast_tuning(tool::crossovers_from(pts), "test");
  EXPECT_EQ(t.sep_radius_2d, 4);
  EXPECT_EQ(t.fft_cost, 316);
  EXPECT_EQ(t.cpu_fft_cost, 82);
}

// On the CPU the suite times `cpu` against `cpu_fft` on dense filters (here on a small array)
// and prints the cpu_fft_cost that makes `auto` choose as measured, a tuning the core takes.
TEST(Bench, CrossoversSuiteOnTheCpu) {
  const Result r = run_cli("bench --suite crossovers --backend cpu --size 96x96 --reps 1 "
                           "--warmup 0 --format json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  ASSERT_TRUE(doc.contains("crossovers")) << r.output;
  const std::string tune = doc["crossovers"]["tune"].get<std::string>();
  EXPECT_EQ(tune.rfind("cpu_fft_cost=", 0), 0u) << tune;
  EXPECT_EQ(doc["crossovers"]["points"].size(), 5u);
  for (const auto& q : doc["crossovers"]["points"]) {
    EXPECT_GT(q["below_ms"].get<double>(), 0.0);
    EXPECT_GT(q["above_ms"].get<double>(), 0.0);
    EXPECT_GT(q["model"].get<double>(), 0.0);
  }
  EXPECT_TRUE(detail::parse_fast_tuning(tune, "test").cpu_fft_cost.has_value());
  for (const auto& row : doc["rows"]) {
    const std::string s = row["strategy"].get<std::string>();
    EXPECT_TRUE(s == "cpu" || s == "cpu_fft") << s;
  }
}

}  // namespace
}  // namespace halo::test
