// Machine profiles as files: `halo bench --suite crossovers --profile-out FILE` writes what it
// measured; `--profile FILE` gives `auto` that machine's crossovers on apply (--tune's keys
// replacing the profile's); a file that is not a profile is an error naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/fft_tiling.hpp"
#include "core/profile.hpp"
#include "io/npy.hpp"
#include "profile.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

class ProfileFile : public TempDirTest {
 protected:
  void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
  }
  // The strategy `halo apply -v --backend cpu` reports on a 15x15 random filter over 256^2
  // (0.5 ms of direct sums by the model: above where the transforms' set-up pays).
  std::string strategy_with(const std::string& extra) {
    if (!std::filesystem::exists(path("in.npy"))) {
      const std::vector<float> in = random_vector<float>(256 * 256);
      io::write_npy(path("in.npy"), DType::f32, {256, 256}, in.data());
      const std::vector<double> w = random_vector<double>(15 * 15);
      io::write_npy(path("w.npy"), DType::f64, {15, 15}, w.data());
    }
    const Result r = run_cli("apply " + path("in.npy") + " " + path("out.npy") + " --filter " +
                             path("w.npy") + " --backend cpu -v " + extra);
    EXPECT_EQ(r.code, 0) << r.output;
    const auto at = r.output.find("strategy ");
    if (at == std::string::npos) return "(none) " + r.output;
    return r.output.substr(at + 9, r.output.find(' ', at + 9) - at - 9);
  }
};

TEST_F(ProfileFile, TheCrossoversSuiteWritesOne) {
  const Result r = run_cli("bench --suite crossovers --backend cpu --size 96x96 --reps 1 "
                           "--warmup 0 --profile-out " + path("p.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream f(path("p.json"));
  const nlohmann::json doc = nlohmann::json::parse(f);
  EXPECT_EQ(doc["halo_profile"], 1);
  EXPECT_EQ(doc["tune"].get<std::string>().rfind("cpu_fft_cost=", 0), 0u) << doc.dump();
  EXPECT_FALSE(doc["machine"].get<std::string>().empty());
  EXPECT_GT(doc["copy_gbs"].get<double>(), 0);
  EXPECT_EQ(doc["points"].size(), 5u);
  // What it wrote is what --profile reads.
  EXPECT_EQ(tool::tuning_with_profile(path("p.json"), ""), doc["tune"].get<std::string>());
  // Only the crossovers suite measures a profile.
  const Result seed = run_cli("bench --suite seed --backend cpu --profile-out " + path("q.json"));
  EXPECT_NE(seed.code, 0);
  EXPECT_NE(seed.output.find("--suite crossovers"), std::string::npos) << seed.output;
  EXPECT_FALSE(std::filesystem::exists(path("q.json")));
}

TEST_F(ProfileFile, ApplyChoosesByItsCrossoversUnderTune) {
  write("cheap.json", R"({"halo_profile": 1, "machine": "m", "tune": "cpu_fft_cost=1"})");
  write("dear.json", R"({"halo_profile": 1, "machine": "m", "tune": "cpu_fft_cost=100000"})");
  EXPECT_EQ(strategy_with("--profile " + path("cheap.json")), "cpu_fft");
  EXPECT_EQ(strategy_with("--profile " + path("dear.json")), "cpu");
  // --tune's keys replace the profile's.
  EXPECT_EQ(strategy_with("--profile " + path("cheap.json") + " --tune cpu_fft_cost=100000"),
            "cpu");
  EXPECT_EQ(tool::tuning_with_profile(path("cheap.json"), "slots=2"), "cpu_fft_cost=1,slots=2");
  EXPECT_EQ(tool::tuning_with_profile(path("cheap.json"), "cpu_fft_cost=7"), "cpu_fft_cost=7");
  EXPECT_EQ(tool::tuning_with_profile("", "slots=2"), "slots=2");
}

TEST_F(ProfileFile, WhatIsNotAProfileIsAnErrorNamingTheFile) {
  write("text.json", "not json");
  write("other.json", R"({"tune": "cpu_fft_cost=1"})");
  write("format2.json", R"({"halo_profile": 2, "tune": ""})");
  write("badkey.json", R"({"halo_profile": 1, "tune": "no_such_key=1"})");
  const auto message = [&](const std::string& name) {
    try {
      tool::tuning_with_profile(path(name), "");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string name :
       {"missing.json", "text.json", "other.json", "format2.json", "badkey.json"}) {
    const std::string m = message(name);
    EXPECT_NE(m.find(name), std::string::npos) << name << ": " << m;
  }
  EXPECT_NE(message("badkey.json").find("no_such_key"), std::string::npos);
  EXPECT_NE(message("format2.json").find("format 2"), std::string::npos);
  const std::vector<float> x = random_vector<float>(64);
  io::write_npy(path("x.npy"), DType::f32, {8, 8}, x.data());
  const Result r = run_cli("apply " + path("x.npy") + " " + path("o.npy") +
                           " --filter box:3 --profile " + path("text.json"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("text.json"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("o.npy")));
}

// A profile's measured rates (FastTuning::copy_gbs, fma_gflops: what `halo bench` measured as
// another GPU's ceilings) scale the H100's rates in every cost model: moving figures by the copy
// ratio, computing figures by the FMA ratio, set-up figures not at all; unset, the H100's own.
TEST(GpuProfile, MeasuredRatesScaleTheModels) {
  const profile::Gpu& h = profile::gpu();
  const profile::Gpu same = profile::gpu(FastTuning{});
  EXPECT_EQ(same.copy_bytes_per_ns, h.copy_bytes_per_ns);
  EXPECT_EQ(same.direct_flops_f32, h.direct_flops_f32);
  FastTuning t = detail::parse_fast_tuning(
      "copy_gbs=" + std::to_string(std::lround(h.ceiling_copy_gbs / 2)) +
          ",fma_gflops=" + std::to_string(std::lround(h.ceiling_fma_gflops * 2)),
      "test");
  const profile::Gpu g = profile::gpu(t);
  const auto near = [](double a, double b) { return std::fabs(a / b - 1) < 1e-3; };
  EXPECT_TRUE(near(g.copy_bytes_per_ns, h.copy_bytes_per_ns / 2)) << g.copy_bytes_per_ns;
  EXPECT_TRUE(near(g.fft_element_ns_f32, h.fft_element_ns_f32 * 2));
  EXPECT_TRUE(near(g.fft_stage_ns_f64, h.fft_stage_ns_f64 * 2));
  EXPECT_TRUE(near(g.direct_flops_f32, h.direct_flops_f32 * 2));
  EXPECT_TRUE(near(g.passes_flops_f64, h.passes_flops_f64 * 2));
  EXPECT_TRUE(near(g.fft_tile_pair_ns, h.fft_tile_pair_ns / 2));
  EXPECT_TRUE(near(g.fft_rows_point_ns[2], h.fft_rows_point_ns[2] / 2));
  EXPECT_EQ(g.fft_setup_ns, h.fft_setup_ns);
  EXPECT_EQ(g.sep_radius_2d, h.sep_radius_2d);
  // Through a model: cuFFT's tiles (a 99 x 99 filter) against the direct sum, whose ratio a
  // device with half the copy rate and twice the FMA rate moves by about 4.
  Problem p(2, {4096, 4096, 1}, 1, Filter(random_vector<double>(99 * 99), {99, 99}), DType::f32);
  const detail::FftTiling a = detail::cuda_fft_tiling(p);
  p.set_tuning(t);
  const detail::FftTiling b = detail::cuda_fft_tiling(p);
  ASSERT_FALSE(a.shared);
  EXPECT_TRUE(near(b.direct_ns, a.direct_ns / 2)) << b.direct_ns << " " << a.direct_ns;
  EXPECT_GT(b.fft_ns, 1.8 * a.fft_ns);
  EXPECT_GT(b.fft_ns / b.direct_ns, 3.6 * (a.fft_ns / a.direct_ns));
  // Out of range: refused by name.
  EXPECT_THROW(detail::parse_fast_tuning("copy_gbs=0", "test"), Error);
}

}  // namespace
}  // namespace halo::test
