// Internal glue between the backend-neutral core and the backends. Not installed.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

using StrategyList = std::vector<std::unique_ptr<Strategy>>;

// Each backend appends its strategies here (one line per strategy in the backend's list).
void register_cpu_strategies(StrategyList& out);
void register_cuda_strategies(StrategyList& out);  // appends nothing without CUDA

// Runs a CUDA strategy's plan on host buffers: copies in, runs, copies out (throws halo::Error).
void run_cuda_on_host_buffers(const StrategyPlan& plan, const void* in, void* out, void* stream);
// The same for strategy s on p, planned for this run alone.
void run_cuda_on_host_buffers(const Strategy& s, const Problem& p, const void* in, void* out,
                              void* stream);
// s's plan for p, or halo::Error naming the strategy, the problem and why it cannot run it.
std::shared_ptr<const StrategyPlan> plan_or_throw(const Strategy& s, const Problem& p);
std::vector<DeviceInfo> query_cuda_devices(std::string* why_none);
// Free memory of the current CUDA device in bytes, and in `what` which device that is (or why
// none answers: then 0). Where halo's workspace pool alone keeps `enough` unused, that (without
// asking the device).
double device_memory_free(std::string* what,
                          double enough = std::numeric_limits<double>::infinity());
std::string cuda_archs();

// Benchmark support (`halo bench`): the two roofline ceilings of a device, measured in the run
// that uses them, and per-run times of a strategy on fresh random data.
struct Ceilings {
  double copy_gbs = 0;    // device-to-device (or memory-to-memory) copy, bytes read + written
  double fma_gflops = 0;  // FMA-bound kernel, 2 FLOPs per FMA, in the problem's dtype
  std::string device;     // what was measured
  // How the CPU's were measured (left empty by the GPU's): every timed trial with its method
  // and its GB/s or GFLOP/s, each ceiling the best of its trials, the method of that best, and
  // the threads that ran each trial (the smallest team seen).
  struct Trial {
    std::string method;  // copy: "memcpy" or "stream" (non-temporal stores); FMA: target, chains
    double value = 0;
  };
  std::vector<Trial> copy_trials, fma_trials;
  std::string copy_method, fma_method;
  int threads = 0;
};
Ceilings measure_cuda_ceilings(DType dtype);
// Milliseconds of each of `reps` runs (CUDA events) after `warmup` runs, on device buffers filled
// with random data; problems smaller than 4x the L2 cache rotate through several buffer sets.
std::vector<double> time_cuda_strategy(const Strategy& s, const Problem& p, int warmup, int reps);
Ceilings measure_cpu_ceilings(DType dtype);

// Overflow-checked product; throws halo::Error with `what` in the message on overflow.
std::int64_t checked_product(const std::int64_t* v, int n, const char* what);

std::string join_extents(const Extents& e, int rank, const char* sep = "x");

// The folded correlation weights of p placed in the (2R+1)^rank window centred on the output
// (z, y, x order, x fastest), zero where the filter does not reach; R >= p.max_radius(). Kernels
// compiled for a radius R run any filter that fits this way (even and off-centre ones too).
std::vector<double> centred_window(const Problem& p, int R);

// The median of v (the mean of the middle two for an even count); v must not be empty.
double median(std::vector<double> v);

// The strategy `auto` takes for p among backend `be`'s (whether or not a device of that backend
// is present: CUDA strategies then plan as on an H100); nullptr and the strategies' reasons,
// appended to `reasons`, where none can run p.
const Strategy* choose_within(Backend be, const Problem& p, std::string* reasons = nullptr);

// The dispatch itself, over the strategies `among` (the registry's, or a test's): each strategy
// of backend `be` is asked once (Strategy::prepare), and the plan `auto` takes is returned with
// its estimate, or null with the reasons as choose_within gives them. The plans refer to p.
std::shared_ptr<const StrategyPlan> plan_within(Backend be, const Problem& p,
                                                const std::vector<const Strategy*>& among,
                                                std::string* reasons, Estimate* estimate);

// A strategy's answer for p as the dispatch takes it: a halo::Error thrown by its analysis (a
// constant it has no value for, a dtype its code is not written for) is a reason it cannot.
Prepared prepare_for_dispatch(const Strategy& s, const Problem& p);
// A plan's estimate as the dispatch takes it: a model that throws gives no estimate.
Estimate estimate_for_dispatch(const StrategyPlan& plan);

// What choose() answers, with the plan it chose (made for p, which must outlive it).
struct Choice {
  RunInfo info;
  std::shared_ptr<const StrategyPlan> plan;
};
Choice choose_plan(const Problem& p, const Options& opt, MemorySpace space,
                   const std::vector<const Strategy*>& among);

// halo::prepare over the strategies `among` (the registry's, or a test's).
Plan prepare_among(const std::vector<const Strategy*>& among, const ArrayDesc& desc,
                   const Filter& filter, const Options& opt);

// The current CUDA device's ordinal, or -1 where none is current (or halo has no CUDA).
int current_cuda_device();

// The CUDA `fft` strategy's modelled time of p over the direct sum's that it weighs it against
// (before FastTuning::fft_cost): what `halo bench --suite crossovers` calibrates that cost by.
// Throws halo::Error where the FFT cannot run p (or halo has no CUDA).
double cuda_fft_model_ratio(const Problem& p);
// The same for the CPU's `cpu_fft` against `cpu` (before FastTuning::cpu_fft_cost).
double cpu_fft_model_ratio(const Problem& p);

}  // namespace halo::detail
