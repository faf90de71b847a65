// The CPU's two roofline ceilings, measured: a memory-to-memory copy (bytes read + written) and an
// FMA-bound Highway loop on the widest vectors this CPU has (dynamic dispatch).
//
// Both loops run on every OpenMP thread, several trials each, and keep the best trial: a ceiling
// is what the machine can do, and a trial slowed by another process or a descheduled thread only
// ever measures less (a median of a few such trials once put the FMA ceiling at half its value).
// Threads take the work in pieces, dynamically, as the `cpu` strategy takes its units: a thread
// whose core is shared with another process then holds up no more than its last piece.
// The copy runs two ways and keeps the faster: memcpy, and a loop of non-temporal stores like the
// `cpu` strategy's writes of large outputs (src/cpu/direct/direct.cpp: no read-for-ownership of
// the destination), so the copy ceiling is not below what the strategy itself can stream.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/ceilings.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace halo::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Independent accumulator chains: enough FMAs in flight for the latency times the FMA units of
// the widest cores (4-5 cycles x 2 units), and all in registers with the two constants beside
// them (AVX-512: 16 + 2 of 32 vector registers; AVX2 and SSE: 12 + 2 of 16).
#if HWY_TARGET <= HWY_AVX3
constexpr int kChains = 16;
#else
constexpr int kChains = 12;
#endif

// kChains chains of `iters` FMAs each; returns a sum of the results (kept alive by the caller),
// the lanes per vector and the chains, so the caller can count the FLOPs.
template <class T>
T FmaChains(std::int64_t iters, std::int64_t* lanes, std::int64_t* chains) {
  const hn::ScalableTag<T> d;
  *lanes = static_cast<std::int64_t>(hn::Lanes(d));
  *chains = kChains;
  const auto m = hn::Set(d, T(0.999999));
  const auto a = hn::Set(d, T(1e-7));
  hn::Vec<decltype(d)> c[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) c[i] = hn::Set(d, T(i + 1));
  for (std::int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) c[i] = hn::MulAdd(c[i], m, a);
  }
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) c[0] = hn::Add(c[0], c[i]);
  return hn::GetLane(hn::SumOfLanes(d, c[0]));
}

double FmaF32(std::int64_t iters, std::int64_t* lanes, std::int64_t* chains) {
  return FmaChains<float>(iters, lanes, chains);
}
double FmaF64(std::int64_t iters, std::int64_t* lanes, std::int64_t* chains) {
  return FmaChains<double>(iters, lanes, chains);
}

// Copies n floats from `src` to `dst` (both aligned to the vector) the way the `cpu` strategy
// writes a large output: vector loads, non-temporal stores (hn::Stream), a fence at the end.
void StreamCopy(const float* HWY_RESTRICT src, float* HWY_RESTRICT dst, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const auto v0 = hn::Load(d, src + i), v1 = hn::Load(d, src + i + N);
    const auto v2 = hn::Load(d, src + i + 2 * N), v3 = hn::Load(d, src + i + 3 * N);
    hn::Stream(v0, d, dst + i);
    hn::Stream(v1, d, dst + i + N);
    hn::Stream(v2, d, dst + i + 2 * N);
    hn::Stream(v3, d, dst + i + 3 * N);
  }
  for (; i + N <= n; i += N) hn::Stream(hn::Load(d, src + i), d, dst + i);
  if (i < n) std::memcpy(dst + i, src + i, (n - i) * sizeof(float));
  hwy::FlushStream();
}

std::int64_t FmaTarget() { return HWY_TARGET; }

}  // namespace halo::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "hwy/aligned_allocator.h"

namespace halo {
namespace cpu {
HWY_EXPORT(FmaF32);
HWY_EXPORT(FmaF64);
HWY_EXPORT(StreamCopy);
HWY_EXPORT(FmaTarget);
}  // namespace cpu

namespace detail {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// In a parallel region: waits for the whole team, then the master thread reads the clock into
// *t0 and the team's size into *team, and no thread goes on before that. The clock of a trial
// thus starts once every thread is there: a ceiling is what the threads can do, not how soon a
// busy machine wakes them.
void start_together(std::chrono::steady_clock::time_point* t0, int* team) {
#pragma omp barrier
#pragma omp master
  {
    *team = omp_get_num_threads();
    *t0 = std::chrono::steady_clock::now();
  }
#pragma omp barrier
}

// The best trial (the ceiling) and how it ran.
const Ceilings::Trial& best_of(const std::vector<Ceilings::Trial>& trials) {
  return *std::max_element(trials.begin(), trials.end(),
                           [](const Ceilings::Trial& a, const Ceilings::Trial& b) {
                             return a.value < b.value;
                           });
}

// Timed trials, after one warm-up: of the FMA loop, and of each copy method (a few ms each).
constexpr int kFmaTrials = 5, kCopyTrials = 10;
}  // namespace

Ceilings measure_cpu_ceilings(DType dtype) {
  Ceilings c;
  const int threads = omp_get_max_threads();
  c.threads = threads;  // then the smallest team that ran a trial
  c.device = "CPU, " + std::to_string(threads) + " threads";

  // Copy: 64 MiB each way, the size of the CPU suites' arrays (`halo bench`: 4096^2, 2^24, 256^3
  // float32), so the copy meets the caches as the strategies do: a 32 MiB L3 still holds part of a
  // 64 MiB input from one run to the next (a copy of 256 MiB measured below what the `cpu` strategy
  // streams on 64 MiB: docs/notes/tuning.md, CPU). In at least 8 pieces per thread (of at most 1
  // MiB), whole pages, so aligned for the vector loads and stores; the threads touch the pages
  // first, each its share, so on a machine of several memory nodes the pages are spread over the
  // nodes.
  const std::int64_t pieces = std::max(64, 8 * threads);
  const std::size_t piece =
      std::max<std::size_t>(4096, (std::size_t(64) << 20) / pieces / 4096 * 4096);
  const std::size_t bytes = piece * pieces;
  const auto src = hwy::AllocateAligned<float>(bytes / sizeof(float));
  const auto dst = hwy::AllocateAligned<float>(bytes / sizeof(float));
  if (!src || !dst) throw Error("CPU ceilings: cannot allocate 2 x 64 MiB for the copy");
  char* const s = reinterpret_cast<char*>(src.get());
  char* const o = reinterpret_cast<char*>(dst.get());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < pieces; ++i) {
    std::memset(s + i * piece, 1, piece);
    std::memset(o + i * piece, 0, piece);
  }
  const char* const methods[] = {"memcpy", "stream"};
  // Each method's trials in a row, as `halo bench` repeats a strategy: the L3 then holds what a
  // run of the method leaves there (memcpy's destination lines would evict the source lines that
  // a streaming copy finds in the L3 of a repeated run).
  for (const char* method : methods) {
    for (int trial = -1; trial < kCopyTrials; ++trial) {  // trial -1 warms up
      const bool stream = method[0] == 's';
      int team = 0;
      double sec = 0;
      std::chrono::steady_clock::time_point t0;
#pragma omp parallel num_threads(threads)
      {
        start_together(&t0, &team);
#pragma omp for schedule(dynamic)
        for (std::int64_t i = 0; i < pieces; ++i) {
          if (stream)
            HWY_DYNAMIC_DISPATCH(cpu::StreamCopy)(reinterpret_cast<const float*>(s + i * piece),
                                                  reinterpret_cast<float*>(o + i * piece),
                                                  piece / sizeof(float));
          else
            std::memcpy(o + i * piece, s + i * piece, piece);
        }
#pragma omp master
        sec = seconds_since(t0);  // after the loop's barrier: every piece copied
      }
      if (trial < 0) continue;
      c.threads = std::min(c.threads, team);
      c.copy_trials.push_back({method, 2.0 * double(bytes) / sec / 1e9});
    }
  }
  const Ceilings::Trial& copy = best_of(c.copy_trials);
  c.copy_gbs = copy.value;
  c.copy_method = copy.method;

  // FMA: the threads run the chains in pieces of 800k iterations, 16 pieces per thread and trial
  // (12.8M iterations of 12-16 FMAs per thread: tens of milliseconds on a current core); 2 FLOPs
  // per lane per FMA.
  const std::int64_t iters = 800'000, fma_pieces = 16 * std::int64_t(threads);
  for (int trial = -1; trial < kFmaTrials; ++trial) {
    std::int64_t lanes = 0, chains = 0;
    int team = 0;
    double sink = 0, sec = 0;
    std::chrono::steady_clock::time_point t0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    {
      start_together(&t0, &team);
      std::int64_t l = 0, k = 0;
#pragma omp for schedule(dynamic)
      for (std::int64_t i = 0; i < fma_pieces; ++i)
        sink += dispatch_dtype(dtype, [&](auto d) {
          using T = typename decltype(d)::storage;
          static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                        "an FMA ceiling kernel per dtype");
          if constexpr (std::is_same_v<T, float>)
            return HWY_DYNAMIC_DISPATCH(cpu::FmaF32)(iters, &l, &k);
          else
            return HWY_DYNAMIC_DISPATCH(cpu::FmaF64)(iters, &l, &k);
        });
#pragma omp master
      sec = seconds_since(t0);  // after the loop's barrier: every piece done
#pragma omp critical
      if (l > 0) lanes = l, chains = k;
    }
    if (sink == 42.0) c.device += " ";  // keeps the loops' results alive
    if (trial < 0) continue;
    c.threads = std::min(c.threads, team);
    const std::string method = std::string(hwy::TargetName(HWY_DYNAMIC_DISPATCH(
                                   cpu::FmaTarget)())) + ", " + std::to_string(chains) +
                               " chains of " + std::to_string(lanes) + " lanes";
    c.fma_trials.push_back(
        {method, 2.0 * double(chains * lanes) * double(iters * fma_pieces) / sec / 1e9});
  }
  const Ceilings::Trial& fma = best_of(c.fma_trials);
  c.fma_gflops = fma.value;
  c.fma_method = fma.method;
  return c;
}

}  // namespace detail
}  // namespace halo
#endif  // HWY_ONCE
