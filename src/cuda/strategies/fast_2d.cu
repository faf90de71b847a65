/* strategy: fast, 2D — register-blocked row streaming.
 *
 * Who loads what: each warp owns a strip of 128 columns (4 per lane) and a chunk of rows, and
 * streams down the rows. For every input row it loads, per lane, the 4 + 2*RA elements its four
 * outputs need (RA = R rounded up to 4), as 16-byte loads straight from global memory: the halo
 * columns are the neighbouring lanes' centres, so they hit in L1, and DRAM sees each row about once.
 * Which threads compute: every lane, all the time; no shared memory, no barriers.
 * The accumulators of the 2R+1 output rows the current input row contributes to live in registers
 * (acc[q][j], q = 0 the oldest): the row adds (2R+1)^2 * 4 FFMAs, whose weights are kernel
 * parameters (constant bank operands, no loads), then the oldest row is complete: it is stored and
 * the accumulators shift by one. Where it pays (prefetch_rows), the next row's loads are issued
 * before this row's FFMAs.
 * Arithmetic intensity: each input element comes from DRAM about once (plus 2R rows per chunk)
 * and feeds (2R+1)^2 taps, so the DRAM intensity is the problem's own, (2R+1)^2 * 2 OP over 8 B
 * (read + write): the notes' tiled bound with the output write counted. Per row and lane, 1 + RA/2
 * 16-byte loads (L1 hits but one) feed (2R+1)^2 * 4 FFMAs: on an H100 the kernel is memory-bound
 * up to r ~ 4 and FFMA-bound above.
 */
#include "cuda/check.cuh"
#include "cuda/fast_kernels.cuh"

namespace halo::cuda::fast {
namespace {

template <class T, int R, bool PF>
__global__ void __launch_bounds__(kThreads)
    stream2d(const T* __restrict__ in, T* __restrict__ out, Geometry g,
             Taps<T, (2 * R + 1) * (2 * R + 1)> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t item =
      std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (item >= g.items) return;
  // item = (b * chunks + chunk) * strips + strip: strips fastest, so neighbours share halos.
  const std::int64_t strip = item % g.strips;
  const std::int64_t chunk = (item / g.strips) % g.chunks;
  const std::int64_t b = item / (g.strips * g.chunks);
  const std::int64_t x0 = strip * (32 * kTx) + lane * kTx;
  const std::int64_t y0 = chunk * g.chunk;
  const std::int64_t y1 = y0 + g.chunk < g.ny ? y0 + g.chunk : g.ny;
  const T* src = in + b * g.ny * g.nx;
  T* dst = out + b * g.ny * g.nx;

  T acc[K][kTx];
#pragma unroll
  for (int q = 0; q < K; ++q)
#pragma unroll
    for (int j = 0; j < kTx; ++j) acc[q][j] = T(0);

  // Input row s feeds outputs s-R .. s+R; output s-R is complete after it. The next row's loads
  // are issued before this row's FFMAs (software pipelining), so their latency hides behind them.
  auto fetch = [&](T(&v)[NV], std::int64_t s) {
    if (s >= 0 && s < g.ny)
      load_row(v, src + s * g.nx, x0 - RA, g.nx, g.vec);
    else
      zero_row(v, NV);
  };
  T v[NV];
  if (PF) fetch(v, y0 - R);
  for (std::int64_t s = y0 - R; s < y1 + R; ++s) {
    T next[NV];
    if (PF)
      fetch(next, s + 1);
    else
      fetch(v, s);
#pragma unroll
    for (int q = 0; q < K; ++q) {
      const int fy = 2 * R - q;  // pending output q = row s - R + q uses filter row 2R - q
#pragma unroll
      for (int fx = 0; fx < K; ++fx) {
        const T w = taps.w[fy * K + fx];
#pragma unroll
        for (int j = 0; j < kTx; ++j) acc[q][j] = fma(w, v[j + fx + RA - R], acc[q][j]);
      }
    }
    const std::int64_t done = s - R;
    if (done >= y0 && x0 < g.nx) store4(dst + done * g.nx, x0, g.nx, g.vec, acc[0]);
#pragma unroll
    for (int q = 0; q + 1 < K; ++q)
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[q][j] = acc[q + 1][j];
#pragma unroll
    for (int j = 0; j < kTx; ++j) acc[K - 1][j] = T(0);
    if (PF) {
#pragma unroll
      for (int i = 0; i < NV; ++i) v[i] = next[i];
    }
  }
}

// Prefetching the next row costs registers and so occupancy. Measured on an H100, 16384^2 float32
// (docs/BENCHMARKS.md): it pays at r = 4, 5, 6, 8, 10 (r = 4: 1.67 -> 1.07 ms) and loses at
// r = 2, 3, 7, 12 (r = 12: 9.3 -> 13.8 ms); r = 1 and 15 are even. HALO_FAST_PREFETCH=0/1
// overrides this, for tuning.
bool prefetch_rows(int R) {
  const int forced = prefetch_override();
  if (forced >= 0) return forced == 1;
  return R == 4 || R == 5 || R == 6 || R == 8 || R == 10;
}

template <class T, int R>
void run(const T* in, T* out, const Geometry& g, const double* window, cudaStream_t stream) {
  Taps<T, (2 * R + 1) * (2 * R + 1)> taps;
  for (int i = 0; i < (2 * R + 1) * (2 * R + 1); ++i) taps.w[i] = T(window[i]);
  const std::int64_t blocks = (g.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (prefetch_rows(R))
    stream2d<T, R, true><<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(in, out, g, taps);
  else
    stream2d<T, R, false><<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(in, out, g, taps);
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 2D (r=" + std::to_string(R) + ", " +
                                          std::to_string(g.ny) + "x" + std::to_string(g.nx) +
                                          ", batch " + std::to_string(g.batch) + ")");
}

}  // namespace

// Compiled radii: every r up to 8, then a few larger ones (a filter is zero-padded to the next).
#define HALO_FAST2D_RADII_F32(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(10) X(12) X(15)
#define HALO_FAST2D_RADII_F64(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)

template <>
bool launch_2d<float>(const float* in, float* out, const Geometry& g, int r, const double* w,
                      cudaStream_t s) {
#define HALO_CASE(R) \
  if (r == R) return run<float, R>(in, out, g, w, s), true;
  HALO_FAST2D_RADII_F32(HALO_CASE)
#undef HALO_CASE
  return false;
}

template <>
bool launch_2d<double>(const double* in, double* out, const Geometry& g, int r, const double* w,
                       cudaStream_t s) {
#define HALO_CASE(R) \
  if (r == R) return run<double, R>(in, out, g, w, s), true;
  HALO_FAST2D_RADII_F64(HALO_CASE)
#undef HALO_CASE
  return false;
}

int compiled_radius_2d(DType t, int r) {  // declared in fast_kernels.cuh
  int best = -1;
#define HALO_CASE(R) \
  if (best < 0 && R >= r) best = R;
  if (t == DType::f32) {
    HALO_FAST2D_RADII_F32(HALO_CASE)
  } else {
    HALO_FAST2D_RADII_F64(HALO_CASE)
  }
#undef HALO_CASE
  return best;
}

}  // namespace halo::cuda::fast
