// The CPU's two roofline ceilings, measured: a multi-threaded memory-to-memory copy (bytes read +
// written) and an FMA-bound Highway loop on the widest vectors this CPU has (dynamic dispatch).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/ceilings.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace halo::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 10 independent accumulator chains hide the FMA latency (4 cycles x 2 ports = 8 in flight).
template <class T>
T FmaChains(std::int64_t iters, std::int64_t* lanes) {
  const hn::ScalableTag<T> d;
  *lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto m = hn::Set(d, T(0.999999));
  const auto a = hn::Set(d, T(1e-7));
  auto c0 = hn::Set(d, T(1)), c1 = hn::Set(d, T(2)), c2 = hn::Set(d, T(3)), c3 = hn::Set(d, T(4));
  auto c4 = hn::Set(d, T(5)), c5 = hn::Set(d, T(6)), c6 = hn::Set(d, T(7)), c7 = hn::Set(d, T(8));
  auto c8 = hn::Set(d, T(9)), c9 = hn::Set(d, T(10));
  for (std::int64_t i = 0; i < iters; ++i) {
    c0 = hn::MulAdd(c0, m, a); c1 = hn::MulAdd(c1, m, a); c2 = hn::MulAdd(c2, m, a);
    c3 = hn::MulAdd(c3, m, a); c4 = hn::MulAdd(c4, m, a); c5 = hn::MulAdd(c5, m, a);
    c6 = hn::MulAdd(c6, m, a); c7 = hn::MulAdd(c7, m, a); c8 = hn::MulAdd(c8, m, a);
    c9 = hn::MulAdd(c9, m, a);
  }
  auto s = hn::Add(hn::Add(hn::Add(c0, c1), hn::Add(c2, c3)), hn::Add(hn::Add(c4, c5), c6));
  s = hn::Add(s, hn::Add(hn::Add(c7, c8), c9));
  return hn::GetLane(hn::SumOfLanes(d, s));
}

double FmaF32(std::int64_t iters, std::int64_t* lanes) { return FmaChains<float>(iters, lanes); }
double FmaF64(std::int64_t iters, std::int64_t* lanes) { return FmaChains<double>(iters, lanes); }

}  // namespace halo::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include "core/detail.hpp"

namespace halo {
namespace cpu {
HWY_EXPORT(FmaF32);
HWY_EXPORT(FmaF64);
}  // namespace cpu

namespace detail {
namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Ceilings measure_cpu_ceilings(DType dtype) {
  Ceilings c;
  c.device = "CPU, " + std::to_string(omp_get_max_threads()) + " threads";
  // Copy: 256 MiB each way, far beyond any CPU cache; each thread copies its own slice.
  const std::size_t bytes = std::size_t(256) << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  std::vector<double> gbs;
  for (int rep = 0; rep < 6; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
    {
      const std::size_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const std::size_t lo = bytes * t / nt, hi = bytes * (t + 1) / nt;
      std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
    }
    if (rep > 0) gbs.push_back(2.0 * bytes / seconds_since(t0) / 1e9);  // rep 0 warms up
  }
  c.copy_gbs = median(gbs);
  // FMA: every thread runs the chains; 2 FLOPs per lane per FMA, 10 FMAs per iteration.
  const std::int64_t iters = 20'000'000;
  std::vector<double> gf;
  for (int rep = 0; rep < 4; ++rep) {
    std::int64_t lanes = 0;
    double sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sink)
    {
      std::int64_t l = 0;
      sink += dtype == DType::f32 ? HWY_DYNAMIC_DISPATCH(cpu::FmaF32)(iters, &l)
                                  : HWY_DYNAMIC_DISPATCH(cpu::FmaF64)(iters, &l);
#pragma omp single
      lanes = l;
    }
    const double s = seconds_since(t0);
    if (sink == 42.0) c.device += " ";  // keeps the loop's result alive
    if (rep > 0) gf.push_back(2.0 * 10 * iters * lanes * omp_get_max_threads() / s / 1e9);
  }
  c.fma_gflops = median(gf);
  return c;
}

}  // namespace detail
}  // namespace halo
#endif  // HWY_ONCE
