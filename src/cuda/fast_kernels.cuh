// The `fast` strategy's kernels: register-blocked streaming convolution (see strategies/fast.cu for
// the design). Shared pieces: the weight window passed by value as a kernel parameter, 16-byte row
// loads with zero ghost cells, and the launch functions each rank's file instantiates.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "halo/halo.hpp"

namespace halo::cuda::fast {

// The (2R+1)^d weights of a window of radius R, by value: kernel parameters live in constant bank
// 0, so FFMA takes each weight as an operand at a compile-time offset (no load instruction).
template <class T, int N>
struct Taps {
  T w[N];
};

__host__ __device__ constexpr int ipow(int b, int e) { return e == 0 ? 1 : b * ipow(b, e - 1); }
__host__ __device__ constexpr int round_up4(int r) { return (r + 3) / 4 * 4; }

// Elements per lane along x: 4 (one 16-byte float4, or two double2).
constexpr int kTx = 4;
constexpr int kWarpsPerBlock = 4;
constexpr int kThreads = 32 * kWarpsPerBlock;

// v[i] = row[x0 - RA + i] for i < 4 + 2*RA, zero outside [0, nx). With `vec` (nx % 4 == 0 and the
// row 16-byte aligned), each aligned group of four is one 16-byte load (all in or all out).
template <class T, int NV>
__device__ __forceinline__ void load_row(T (&v)[NV], const T* __restrict__ row, std::int64_t x,
                                         std::int64_t nx, bool vec) {
#pragma unroll
  for (int c = 0; c < NV / 4; ++c) {
    const std::int64_t gx = x + 4 * c;
    if (vec && gx >= 0 && gx + 3 < nx) {
      if constexpr (sizeof(T) == 4) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(row + gx));
        v[4 * c + 0] = f.x;
        v[4 * c + 1] = f.y;
        v[4 * c + 2] = f.z;
        v[4 * c + 3] = f.w;
      } else {
        const double2 a = __ldg(reinterpret_cast<const double2*>(row + gx));
        const double2 b = __ldg(reinterpret_cast<const double2*>(row + gx + 2));
        v[4 * c + 0] = a.x;
        v[4 * c + 1] = a.y;
        v[4 * c + 2] = b.x;
        v[4 * c + 3] = b.y;
      }
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t g = gx + e;
        v[4 * c + e] = (g >= 0 && g < nx) ? __ldg(row + g) : T(0);
      }
    }
  }
}

template <class T>
__device__ __forceinline__ void zero_row(T* v, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) v[i] = T(0);
}

// out[x .. x+3] = a[0..3], clipped to nx.
template <class T>
__device__ __forceinline__ void store4(T* __restrict__ row, std::int64_t x, std::int64_t nx,
                                       bool vec, const T (&a)[kTx]) {
  if (vec && x + 3 < nx) {
    if constexpr (sizeof(T) == 4) {
      *reinterpret_cast<float4*>(row + x) = make_float4(a[0], a[1], a[2], a[3]);
    } else {
      *reinterpret_cast<double2*>(row + x) = make_double2(a[0], a[1]);
      *reinterpret_cast<double2*>(row + x + 2) = make_double2(a[2], a[3]);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kTx; ++e)
      if (x + e < nx) row[x + e] = a[e];
  }
}

// Launch parameters shared by the three ranks.
struct Geometry {
  std::int64_t batch = 1, nz = 1, ny = 1, nx = 1;
  std::int64_t strips = 1;  // warps across x (each covers 32 * kTx columns, or 32 * 8 in 1D)
  std::int64_t chunk = 1;   // rows (2D) or planes (3D) one warp streams through
  std::int64_t chunks = 1;
  std::int64_t items = 1;   // warps of work in all
  bool vec = false;
};

// Each rank's launcher: runs the kernel of the smallest compiled radius >= r on `stream`,
// with `window` the (2R+1)^d padded weights in the problem's dtype. Returns false if no compiled
// radius covers r (the strategy's can_implement keeps that from happening).
template <class T>
bool launch_1d(const T* in, T* out, const Geometry& g, int r, const double* window,
               cudaStream_t stream);
template <class T>
bool launch_2d(const T* in, T* out, const Geometry& g, int r, const double* window,
               cudaStream_t stream);
template <class T>
bool launch_3d(const T* in, T* out, const Geometry& g, int r, const double* window,
               cudaStream_t stream);

// HALO_FAST_PREFETCH=0 or 1 in the environment forces the row prefetch off or on in the 2D and 3D
// kernels (for tuning); -1 when unset.
int prefetch_override();

// The compiled radius that serves a halo of r (the smallest compiled radius >= r), or -1.
int compiled_radius_1d(DType dtype, int r);
int compiled_radius_2d(DType dtype, int r);
int compiled_radius_3d(DType dtype, int r);

}  // namespace halo::cuda::fast
