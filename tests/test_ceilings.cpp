// The CPU's roofline ceilings (src/cpu/ceilings.cpp), as `halo bench` measures them: how they are
// measured (every thread, several trials, the best kept, both copy methods), that the copy ceiling
// is not below what the `cpu` strategy itself streams, and what `halo bench --help` says of the
// suites' sizes.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

// The `cpu` strategy's best-of-3 bytes/second (input read + output written) on a 1-D copy-like
// problem: a 1-tap filter over 64 MiB of float32 (the size of the CPU suites' arrays), large
// enough for the strategy's non-temporal stores and larger than the caches.
double cpu_strategy_best_bytes_per_second() {
  const Strategy* s = find_strategy("cpu");
  EXPECT_NE(s, nullptr);
  if (!s) return 0;
  const std::int64_t n = std::int64_t(16) << 20;
  const Problem p(1, {n, 1, 1}, 1, make_named_filter("delta:1", 1), DType::f32);
  std::vector<float> in(static_cast<std::size_t>(n), 1.0f), out(static_cast<std::size_t>(n));
  s->run(p, Buffers{in.data(), out.data()}, nullptr);  // warm-up: pages, threads
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    s->run(p, Buffers{in.data(), out.data()}, nullptr);
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, p.bytes() / sec);
  }
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out.back(), 1.0f);
  return best;
}

// How the ceilings are measured: by every thread, several trials of each loop and of both copy
// methods (memcpy, and non-temporal stores as the `cpu` strategy writes large outputs), each
// ceiling the best of its trials (a median let one slow trial halve the FMA ceiling).
TEST(CpuCeilings, BestOfSeveralTrialsOnEveryThreadAndBothCopyMethods) {
  for (DType t : {DType::f32, DType::f64}) {
    SCOPED_TRACE(to_string(t));
    const detail::Ceilings c = detail::measure_cpu_ceilings(t);
    EXPECT_EQ(c.threads, omp_get_max_threads());
    int memcpy_trials = 0, stream_trials = 0;
    double best = 0;
    std::string best_method;
    for (const auto& trial : c.copy_trials) {
      EXPECT_GT(trial.value, 0.0) << trial.method;
      memcpy_trials += trial.method == "memcpy";
      stream_trials += trial.method == "stream";
      if (trial.value > best) best = trial.value, best_method = trial.method;
    }
    EXPECT_EQ(memcpy_trials + stream_trials, int(c.copy_trials.size()));
    EXPECT_GE(memcpy_trials, 3);
    EXPECT_GE(stream_trials, 3);
    EXPECT_EQ(c.copy_gbs, best);
    EXPECT_EQ(c.copy_method, best_method);
    EXPECT_GE(c.fma_trials.size(), 3u);
    best = 0;
    for (const auto& trial : c.fma_trials) {
      EXPECT_GT(trial.value, 0.0) << trial.method;
      EXPECT_NE(trial.method.find(" chains of "), std::string::npos) << trial.method;
      if (trial.value > best) best = trial.value, best_method = trial.method;
    }
    EXPECT_EQ(c.fma_gflops, best);
    EXPECT_EQ(c.fma_method, best_method);
  }
}

// The copy ceiling is what the memory can move; the `cpu` strategy streaming a 1-tap filter does
// no more than copy, so it must not beat the ceiling (it did by 30% when the ceiling was a
// median of memcpy runs, whose stores may read each destination line first). Against the noise of a
// loaded machine: 0.9x, every side the best of its trials, and the ceiling measured before and
// after the strategy's trials, the better kept, so that a busy spell must hold down every trial
// of the ceiling and spare one of the strategy for this to fail wrongly.
TEST(CpuCeilings, CopyCeilingCoversWhatTheCpuStrategyStreams) {
  const double before = detail::measure_cpu_ceilings(DType::f32).copy_gbs;
  const double strategy_gbs = cpu_strategy_best_bytes_per_second() / 1e9;
  const double after = detail::measure_cpu_ceilings(DType::f32).copy_gbs;
  const double ceiling = std::max(before, after);
  std::printf("copy ceiling %.1f GB/s (%.1f before, %.1f after); the cpu strategy streamed %.1f "
              "GB/s\n", ceiling, before, after, strategy_gbs);
  EXPECT_GE(ceiling, 0.9 * strategy_gbs)
      << "copy ceiling " << ceiling << " GB/s, the cpu strategy streamed " << strategy_gbs
      << " GB/s";
}

// `halo bench --help` gives the sizes of each suite on each backend (bench.cpp's suite_problems).
TEST(CpuCeilings, BenchHelpNamesTheSizesOfBothBackends) {
  const Result r = run_cli("bench --help");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* size : {"16384^2", "2^28", "640^3", "4096^2", "2^24", "256^3"})
    EXPECT_NE(r.output.find(size), std::string::npos) << size << " missing in\n" << r.output;
}

}  // namespace
}  // namespace halo::test
