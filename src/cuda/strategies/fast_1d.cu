/* strategy: fast, 1D — register-blocked segments.
 *
 * Who loads what: each lane owns 8 consecutive outputs; it loads the 8 + 2*RA inputs they need
 * (RA = R rounded up to 4) as 16-byte loads from global memory. A warp covers 256 consecutive
 * outputs, so the halo a lane loads is its neighbours' centre and hits in L1; DRAM sees each input
 * element about once. Warps stride over the segments of the signal (and the batch).
 * Which threads compute: all; no shared memory, no barriers.
 * Each loaded element feeds up to 2R+1 outputs from registers: 8 * (2R+1) FFMAs per lane per
 * segment, weights as kernel-parameter operands. DRAM intensity: (2R+1) * 2 OP over 8 B; on an
 * H100 memory-bound up to r ~ 30, FFMA-bound above.
 */
#include "cuda/check.cuh"
#include "cuda/fast_kernels.cuh"

namespace halo::cuda::fast {
namespace {

constexpr int kTx1 = 8;  // outputs per lane: two 16-byte groups

template <class T, int R>
__global__ void __launch_bounds__(kThreads)
    stream1d(const T* __restrict__ in, T* __restrict__ out, Geometry g, Taps<T, 2 * R + 1> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx1 + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t item = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       item < g.items; item += warps) {
    const std::int64_t seg = item % g.strips;
    const std::int64_t b = item / g.strips;
    const std::int64_t x0 = seg * (32 * kTx1) + lane * kTx1;
    const T* src = in + b * g.nx;
    T* dst = out + b * g.nx;
    T v[NV];
    load_row(v, src, x0 - RA, g.nx, g.vec);
    T acc[kTx1];
#pragma unroll
    for (int j = 0; j < kTx1; ++j) acc[j] = T(0);
#pragma unroll
    for (int fx = 0; fx < K; ++fx) {
      const T w = taps.w[fx];
#pragma unroll
      for (int j = 0; j < kTx1; ++j) acc[j] = fma(w, v[j + fx + RA - R], acc[j]);
    }
    if (x0 < g.nx) {
      const T lo[kTx] = {acc[0], acc[1], acc[2], acc[3]};
      const T hi[kTx] = {acc[4], acc[5], acc[6], acc[7]};
      store4(dst, x0, g.nx, g.vec, lo);
      if (x0 + 4 < g.nx) store4(dst, x0 + 4, g.nx, g.vec, hi);
    }
  }
}

template <class T, int R>
void run(const T* in, T* out, const Geometry& g, const double* window, cudaStream_t stream) {
  Taps<T, 2 * R + 1> taps;
  for (int i = 0; i < 2 * R + 1; ++i) taps.w[i] = T(window[i]);
  int dev = 0, sms = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  HALO_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                  "querying the multiprocessor count");
  // Enough blocks to fill every SM several times over; warps stride over the rest.
  const std::int64_t need = (g.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const std::int64_t blocks = need < std::int64_t(sms) * 32 ? need : std::int64_t(sms) * 32;
  stream1d<T, R><<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(in, out, g, taps);
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
