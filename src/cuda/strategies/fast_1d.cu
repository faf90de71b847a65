/* strategy: fast, 1D — register-blocked segments, two layouts.
 *
 * Small halos (r <= 8, memory-bound on an H100): a warp owns 128 consecutive outputs, 4 per lane,
 * like one row of the 2D kernel: each lane loads the 4 + 2*RA inputs its outputs need
 * (RA = r rounded up to 4) as 16-byte loads that are contiguous across the warp (the halo is the
 * neighbours' centre, an L1 hit), and stores one 16-byte group. Warps stride over the segments and
 * issue the next segment's loads before this one's FFMAs, so loads stay in flight.
 * Larger halos (r > 8): a lane owns 8 consecutive outputs, so each input it loads feeds up to 8
 * FFMAs from registers (8 * (2r+1) FFMAs per 8 + 2*RA loaded values); the lanes' loads overlap
 * and are served by L1. (The strip layout measured slower there, and 16 outputs per lane too.)
 * Which threads compute: all; no shared memory, no barriers; the weights are kernel parameters
 * (constant-bank operands of FFMA). DRAM intensity: (2r+1) * 2 OP over 8 B.
 */
#include "cuda/check.cuh"
#include "cuda/fast_kernels.cuh"

namespace halo::cuda::fast {
namespace {

constexpr int kStripMaxR = 8;  // above: the 8-outputs-per-lane layout
constexpr int kTxWide = 8;     // outputs per lane in that layout (16 measured slower: registers)

template <class T, int R>
__global__ void __launch_bounds__(kThreads)
    strip1d(const T* __restrict__ in, T* __restrict__ out, Geometry g, Taps<T, 2 * R + 1> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  std::int64_t item = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  // item = b * strips + strip; lane's outputs x0 .. x0+3 of item b.
  auto fetch = [&](T(&v)[NV], std::int64_t it) {
    if (it < g.items) {
      const std::int64_t b = it / g.strips;
      const std::int64_t x0 = (it % g.strips) * (32 * kTx) + lane * kTx;
      load_row(v, in + b * g.nx, x0 - RA, g.nx, g.vec);
    }
  };
  T v[NV];
  fetch(v, item);
  for (; item < g.items; item += warps) {
    T next[NV];
    fetch(next, item + warps);
    T acc[kTx];
#pragma unroll
    for (int j = 0; j < kTx; ++j) acc[j] = T(0);
#pragma unroll
    for (int fx = 0; fx < K; ++fx) {
      const T w = taps.w[fx];
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[j] = fma(w, v[j + fx + RA - R], acc[j]);
    }
    const std::int64_t b = item / g.strips;
    const std::int64_t x0 = (item % g.strips) * (32 * kTx) + lane * kTx;
    if (x0 < g.nx) store4(out + b * g.nx, x0, g.nx, g.vec, acc);
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = next[i];
  }
}

// DEPTH items in flight per warp: 0 (loaded as needed) or 1. Deeper measured slower (H100, 2^28
// float32, ms for 1 / 2 / 3: r = 12 0.836 / 0.952 / 1.030, r = 16 0.872 / 0.908 / 1.087): each
// item in flight costs 8 + 2*RA registers, and the warps lost cost more than the depth gains.
template <class T, int R, int DEPTH>
__global__ void __launch_bounds__(kThreads)
    wide1d(const T* __restrict__ in, T* __restrict__ out, Geometry g, Taps<T, 2 * R + 1> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTxWide + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  // item = b * strips + strip; lane's outputs x0 .. x0+7 of item b. With DEPTH = 1, the inputs
  // of the warp's next item are in flight while this item's FFMAs run.
  auto fetch = [&](RowOf<T, NV>& w, std::int64_t it) {
    if (it < g.items) {
      const std::int64_t b = it / g.strips;
      const std::int64_t x0 = (it % g.strips) * (32 * kTxWide) + lane * kTxWide;
      load_row(w.v, in + b * g.nx, x0 - RA, g.nx, g.vec);
    }
  };
  auto compute = [&](const T(&v)[NV], std::int64_t it) {
    const std::int64_t b = it / g.strips;
    const std::int64_t x0 = (it % g.strips) * (32 * kTxWide) + lane * kTxWide;
    T acc[kTxWide];
#pragma unroll
    for (int j = 0; j < kTxWide; ++j) acc[j] = T(0);
#pragma unroll
    for (int fx = 0; fx < K; ++fx) {
      const T w = taps.w[fx];
#pragma unroll
      for (int j = 0; j < kTxWide; ++j) acc[j] = fma(w, v[j + fx + RA - R], acc[j]);
    }
#pragma unroll
    for (int q = 0; q < kTxWide / kTx; ++q) {
      const std::int64_t x = x0 + q * kTx;
      const T part[kTx] = {acc[q * kTx], acc[q * kTx + 1], acc[q * kTx + 2], acc[q * kTx + 3]};
      if (x < g.nx) store4(out + b * g.nx, x, g.nx, g.vec, part);
    }
  };
  const std::int64_t first = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  T v[NV];
  if constexpr (DEPTH == 0) {
    for (std::int64_t item = first; item < g.items; item += warps) {
      RowOf<T, NV> row;
      fetch(row, item);
#pragma unroll
      for (int i = 0; i < NV; ++i) v[i] = row.v[i];
      compute(v, item);
    }
  } else {
    RowOf<T, NV> pipe[DEPTH];  // pipe[k]: item first + (n * DEPTH + k) * warps, n the trip
#pragma unroll
    for (int k = 0; k < DEPTH; ++k) fetch(pipe[k], first + k * warps);
    for (std::int64_t item = first; item < g.items; item += DEPTH * warps) {
#pragma unroll
      for (int k = 0; k < DEPTH; ++k) {
        const std::int64_t it = item + k * warps;
        if (it >= g.items) break;
        const std::int64_t ahead = it + DEPTH * warps;
        take_row(pipe, k, ahead < g.items, v, [&](RowOf<T, NV>& w) { fetch(w, ahead); });
        compute(v, it);
      }
    }
  }
}

// The next item's loads issued first (wide layout). ncu at r = 16 without it: 8.9 of 16.7 cycles
// per issued instruction waiting on the loads. Measured on an H100, 2^28 float32, ms off -> on:
// r = 12 1.266 -> 0.857, 16 1.120 -> 0.893, 24 0.963 -> 1.006, 32 1.148 -> 1.094. It costs NV
// more registers: compiled up to kWidePfLimit (f32). HALO_FAST_PREFETCH=0/1 overrides, for tuning.
constexpr int kWidePfLimit = 32;
template <class T, int R>
constexpr bool kWidePf = sizeof(T) == 4 && R <= kWidePfLimit;  // f64: twice the registers
// Whether the wide layout prefetches for this dtype and radius (kWidePf: where it is compiled).
bool wide_prefetch(DType t, int R) {
  if (t != DType::f32 || R > kWidePfLimit) return false;
  const int forced = prefetch_override();
  return forced >= 0 ? forced == 1 : R != 24;
}

template <class T, int R>
void run(const T* in, T* out, Geometry g, const double* window, cudaStream_t stream) {
  Taps<T, 2 * R + 1> taps;
  for (int i = 0; i < 2 * R + 1; ++i) taps.w[i] = T(window[i]);
  constexpr bool strip = R <= kStripMaxR;
  const std::int64_t width = strip ? 32 * kTx : 32 * kTxWide;  // outputs per warp item
  g.strips = (g.nx + width - 1) / width;
  g.items = g.strips * g.batch;
  // One wave of resident warps (or fewer, for a short signal); the warps stride over the rest.
  auto go = [&](auto kernel) {
    const std::int64_t need = (g.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const std::int64_t fit = resident_warps(kernel) / kWarpsPerBlock;
    const std::int64_t blocks = need < fit ? need : fit;
    kernel<<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(in, out, g, taps);
  };
  if constexpr (strip) {
    go(strip1d<T, R>);
  } else if (kWidePf<T, R> && wide_prefetch(DType::f32, R)) {
    go(wide1d<T, R, kWidePf<T, R> ? 1 : 0>);
  } else {
    go(wide1d<T, R, 0>);
  }
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 1D (r=" + std::to_string(R) + ", n " +
                                          std::to_string(g.nx) + ", batch " +
                                          std::to_string(g.batch) + ")");
}

}  // namespace

#define HALO_FAST1D_RADII_F32(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(12) X(16) X(24) X(32) X(48) X(64)
#define HALO_FAST1D_RADII_F64(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(16) X(32)

template <>
bool launch_1d<float>(const float* in, float* out, const Geometry& g, int r, const double* w,
                      cudaStream_t s) {
#define HALO_CASE(R) \
  if (r == R) return run<float, R>(in, out, g, w, s), true;
  HALO_FAST1D_RADII_F32(HALO_CASE)
#undef HALO_CASE
  return false;
}

template <>
bool launch_1d<double>(const double* in, double* out, const Geometry& g, int r, const double* w,
                       cudaStream_t s) {
#define HALO_CASE(R) \
  if (r == R) return run<double, R>(in, out, g, w, s), true;
  HALO_FAST1D_RADII_F64(HALO_CASE)
#undef HALO_CASE
  return false;
}

std::string plan_1d(DType t, int R) {
  if (R <= kStripMaxR)
    return "a warp computes 128 consecutive outputs (4 per lane, 16-byte loads), striding over "
           "the signal with the next segment's loads issued first";
  return "a lane computes " + std::to_string(kTxWide) + " consecutive outputs from " +
         std::to_string(kTxWide + 2 * round_up4(R)) + " inputs held in registers; next-segment " +
         "prefetch " + (wide_prefetch(t, R) ? "on" : "off");
}

int compiled_radius_1d(DType t, int r) {
  int best = -1;
#define HALO_CASE(R) \
  if (best < 0 && R >= r) best = R;
  if (t == DType::f32) {
    HALO_FAST1D_RADII_F32(HALO_CASE)
  } else {
    HALO_FAST1D_RADII_F64(HALO_CASE)
  }
#undef HALO_CASE
  return best;
}

}  // namespace halo::cuda::fast
