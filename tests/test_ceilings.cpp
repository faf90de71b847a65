// The CPU's roofline ceilings (src/cpu/ceilings.cpp), as `halo bench` measures them: how they are
// measured (every thread, several trials, the best kept, both copy methods) and what
// `halo bench --help` says of the suites' sizes. That no problem then measures above its roofline
// is a benchmark's finding (docs/notes/benchmarks-history.md), not a timed test's.
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

// `halo bench --help` gives the sizes of each suite on each backend (bench.cpp's suite_problems).
TEST(CpuCeilings, BenchHelpNamesTheSizesOfBothBackends) {
  const Result r = run_cli("bench --help");
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* size : {"16384^2", "2^28", "640^3", "4096^2", "2^24", "256^3"})
    EXPECT_NE(r.output.find(size), std::string::npos) << size << " missing in\n" << r.output;
}

}  // namespace
}  // namespace halo::test
