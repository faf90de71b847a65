// The `fft` strategy's cuFFT callbacks (src/cuda/fft.cu): compiled to LTO-IR, embedded in the
// library, and linked into cuFFT's kernels when a plan is made (cufftXtSetJITCallback), so that
// the gather, the product with the filter's spectrum and the scatter cost no passes of their own
// over the tiles:
//   - load (R2C / D2Z): element `offset` of the batch's tile windows, read from the input
//     through the modes' maps (cval where a mode says so, zeros beyond the window), and a tile
//     whose window holds a NaN or an infinity flagged;
//   - store (R2C / D2Z): each value of a tile's spectrum times the filter's;
//   - store (C2R / Z2D): the first outputs of each tile per axis (those that never wrap around)
//     to the output, except in flagged tiles (summed directly afterwards).
// Each receives the pointer the transform was given (the run's tile buffer), its parameters
// kFftParamBytes before it. Offsets within a batch are below 2^31 (fft.cu checks).
#include <cufftXt.h>

#include "core/boundary.hpp"
#include "cuda/fft_callbacks.cuh"

namespace {

using halo::Boundary;
using halo::cuda::FftCallbackParams;
using halo::cuda::FftTile;
using halo::cuda::kFftParamBytes;

__device__ __forceinline__ const FftCallbackParams& params_of(void* data) {
  return *reinterpret_cast<const FftCallbackParams*>(static_cast<const char*>(data) -
                                                     kFftParamBytes);
}

// Element `off` of a batch in the in-place real layout: its tile (in the batch) and coordinates.
struct Where {
  unsigned local, z, y, x;
};
__device__ __forceinline__ Where where_real(const FftCallbackParams& q, unsigned off) {
  Where w;
  w.local = q.real_dist.div(off);
  const unsigned rem = off - w.local * q.real_dist.d;
  const unsigned row = q.pitch.div(rem);
  w.x = rem - row * q.pitch.d;
  w.z = q.fy.div(row);
  w.y = row - w.z * q.fy.d;
  return w;
}

template <class T>
__device__ __forceinline__ T load_window(void* data, unsigned long long offset) {
  const FftCallbackParams& q = params_of(data);
  const Where w = where_real(q, unsigned(offset));
  const FftTile& t = q.tiles[q.first + w.local];
  if (int(w.z) >= t.win[0] || int(w.y) >= t.win[1] || int(w.x) >= t.win[2]) return T(0);
  const std::int64_t gz = t.start[0] + w.z, gy = t.start[1] + w.y, gx = t.start[2] + w.x;
  const std::int64_t iz = halo::detail::map_index(gz, q.n[0], Boundary(q.mode[0]));
  const std::int64_t iy = halo::detail::map_index(gy, q.n[1], Boundary(q.mode[1]));
  const std::int64_t ix = halo::detail::map_index(gx, q.n[2], Boundary(q.mode[2]));
  const T v = iz < 0 || iy < 0 || ix < 0
                  ? T(q.cval)
                  : static_cast<const T*>(q.in)[t.item + (iz * q.n[1] + iy) * q.n[2] + ix];
  if (!(v - v == T(0))) q.flags[w.local] = 1;
  return v;
}

template <class C>
__device__ __forceinline__ void store_product(void* data, unsigned long long offset, C v) {
  const FftCallbackParams& q = params_of(data);
  const unsigned off = unsigned(offset);
  const unsigned i = off - q.complex_dist.div(off) * q.complex_dist.d;
  const C s = static_cast<const C*>(q.spectrum)[i];
  C r;
  r.x = v.x * s.x - v.y * s.y;
  r.y = v.x * s.y + v.y * s.x;
  static_cast<C*>(data)[offset] = r;
}

template <class T>
__device__ __forceinline__ void store_output(void* data, unsigned long long offset, T v) {
  const FftCallbackParams& q = params_of(data);
  const Where w = where_real(q, unsigned(offset));
  const FftTile& t = q.tiles[q.first + w.local];
  if (int(w.z) < t.cnt[0] && int(w.y) < t.cnt[1] && int(w.x) < t.cnt[2] && !q.flags[w.local])
    static_cast<T*>(q.out)[t.out + (std::int64_t(w.z) * q.n[1] + w.y) * q.n[2] + w.x] = v;
}

}  // namespace

// The symbols fft.cu names to cuFFT, one per callback type and precision: C++ functions at global
// scope with the parameter types of cufftXt.h's callback types, as cuFFT declares them when it
// links them in (its declarations carry C++ linkage: extern "C" names do not link).
__device__ cufftReal halo_fft_load_f32(void* data, unsigned long long offset, void*, void*) {
  return load_window<float>(data, offset);
}
__device__ cufftDoubleReal halo_fft_load_f64(void* data, unsigned long long offset, void*,
                                             void*) {
  return load_window<double>(data, offset);
}
__device__ void halo_fft_product_f32(void* data, unsigned long long offset, cufftComplex v, void*,
                                     void*) {
  store_product(data, offset, v);
}
__device__ void halo_fft_product_f64(void* data, unsigned long long offset, cufftDoubleComplex v,
                                     void*, void*) {
  store_product(data, offset, v);
}
__device__ void halo_fft_store_f32(void* data, unsigned long long offset, cufftReal v, void*,
                                   void*) {
  store_output(data, offset, v);
}
__device__ void halo_fft_store_f64(void* data, unsigned long long offset, cufftDoubleReal v, void*,
                                   void*) {
  store_output(data, offset, v);
}
