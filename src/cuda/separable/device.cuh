// The device helpers that the kernel families of the separable passes share (fused.cu, volume.cu,
// box_and_long.cu): the boundary modes' maps of an index and the loads through them, 16-byte
// loads and stores, and the x taps over runs of 8 outputs.
#pragma once

#include "cuda/separable/geometry.cuh"

namespace halo::cuda::sep {

// Index i of an axis of n through `mode`, where i lies outside [0, n) by at most n - 1 and
// n > 1 (a halo no longer than the axis): a few instructions; -1: cval.
__device__ __forceinline__ i64 near_map(i64 i, i64 n, int mode) {
  const bool low = i < 0;
  switch (Boundary(mode)) {
    case Boundary::nearest:
      return low ? 0 : n - 1;
    case Boundary::wrap:
      return low ? i + n : i - n;
    case Boundary::reflect:
      return low ? -1 - i : 2 * n - 1 - i;
    case Boundary::mirror:
      return low ? -i : 2 * n - 2 - i;
    default:
      return -1;
  }
}

// The index a coordinate outside [0, n) reads (-1: cval), map_index's: a few instructions for
// a coordinate at most n - 1 outside (every halo of an axis as long as the filter), the general
// map beyond. Out of line: only the blocks at an edge call it, and inlining it at every load
// costs registers that the FFMA loops need.
inline __device__ __noinline__ i64 sep_map(i64 i, i64 n, int mode) {
  if (n > 1 && i >= 1 - n && i < 2 * n - 1) return near_map(i, n, mode);
  return detail::map_index(i, n, Boundary(mode));
}

// Element i of a line of n elements `stride` apart, through the mode's map outside [0, n)
// (cval where the mode maps it to none).
template <class T>
__device__ __forceinline__ T load_mapped(const T* __restrict__ p, i64 i, i64 n, i64 stride,
                                         int mode, T cval) {
  if (i >= 0 && i < n) return p[i * stride];
  const i64 m = sep_map(i, n, mode);
  return m < 0 ? cval : p[m * stride];
}
// Elements y .. y + N - 1 of a column of n, `stride` apart, into v: plain loads inside the
// column, the mode's map where the run reaches past an end.
template <int N>
__device__ __forceinline__ void load_column_run(const float* __restrict__ p, i64 y, i64 n,
                                                i64 stride, int mode, float cval, float (&v)[N]) {
  if (y >= 0 && y + N <= n) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = __ldg(p + (y + i) * stride);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = load_mapped(p, y + i, n, stride, mode, cval);
  }
}

// 4 elements through one 16-byte access (two for double).
template <class T>
struct Vec4 {
  T v[4];
};
template <class T>
__device__ __forceinline__ void load4(const T* __restrict__ p, Vec4<T>& o) {
  if constexpr (sizeof(T) == 4) {
    const float4 f = __ldg(reinterpret_cast<const float4*>(p));
    o.v[0] = f.x, o.v[1] = f.y, o.v[2] = f.z, o.v[3] = f.w;
  } else {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p));
    const double2 b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    o.v[0] = a.x, o.v[1] = a.y, o.v[2] = b.x, o.v[3] = b.y;
  }
}
template <class T>
__device__ __forceinline__ void store4(T* p, const T* v) {
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    reinterpret_cast<double2*>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(p)[1] = make_double2(v[2], v[3]);
  }
}

// Adds to acc[q] the x factor's taps over outputs q = 0 .. 7 of a tile row: src holds the run's
// 8 + 2 PAD inputs (PAD >= R: the run's first output reads src[PAD - R] on), read 16 bytes at a
// time; the 8 threads of a shared-memory phase reading 8 rows an odd multiple of 16 bytes apart
// see no bank conflicts.
// Adds inputs i0 .. i0 + V - 1 of a run (v) into the run's 8 outputs: input i feeds output q
// through tap i - (PAD - R) - q.
template <class T, int R, int PAD, int V>
__device__ __forceinline__ void x_taps8(int i0, const T (&v)[V], const Taps<T, R>& w,
                                        T (&acc)[8]) {
#pragma unroll
  for (int e = 0; e < V; ++e)
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int j = i0 + e - (PAD - R) - q;  // the tap of output q reading this value
      if (j >= 0 && j <= 2 * R) acc[q] = fma(w.w[j], v[e], acc[q]);
    }
}
template <class T, int R, int PAD>
__device__ __forceinline__ void x_run8(const T* src, const Taps<T, R>& w, T (&acc)[8]) {
  constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte shared-memory access
#pragma unroll
  for (int i0 = 0; i0 < 8 + 2 * PAD; i0 += V) {
    T v[V];
    if constexpr (V == 4) {
      const float4 f = *reinterpret_cast<const float4*>(src + i0);
      v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
      const double2 d = *reinterpret_cast<const double2*>(src + i0);
      v[0] = d.x, v[1] = d.y;
    }
    x_taps8<T, R, PAD>(i0, v, w, acc);
  }
}

}  // namespace halo::cuda::sep
