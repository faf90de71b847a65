// Row primitives that any kernel may build on: the weight window as kernel parameters (Taps),
// 16-byte row loads with zero ghost cells (load_row), a correctly rounded division by an integer
// (div_by), the register prefetch (RowOf, take_row), 16-byte global stores (store16), 16-byte
// shared-memory reads (read_groups), and cp.async (copy_async, commit_async, wait_async).
// Used by `fast` (its kernels, through fast/epilogue.cuh, and its border pass), separable and fft.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/reciprocal.hpp"

namespace halo::cuda::prim {

// The (2R+1)^d weights of a window of radius R, by value: kernel parameters live in constant bank
// 0, so FFMA takes each weight as an operand at a compile-time offset (no load instruction).
template <class T, int N>
struct Taps {
  T w[N];
};

__host__ __device__ constexpr int ipow(int b, int e) { return e == 0 ? 1 : b * ipow(b, e - 1); }

// v[i] = row[x + i] for i < NV (x = the lane's first output - RA), zero outside [0, nx). One
// branch per row: a lane whose NV elements all lie inside the row (and with `vec`: nx % 4 == 0,
// the row 16-byte aligned; x is a multiple of 4) takes NV/4 16-byte loads; a lane at the edges of
// the row, or any lane of an unaligned row, takes the element-wise path. (Deciding per 16-byte
// group instead let the compiler if-convert both paths, so every row issued the scalar path's
// compares and predicated loads as well.)
template <class T, int NV>
__device__ __forceinline__ void load_row(T (&v)[NV], const T* __restrict__ row, std::int64_t x,
                                         std::int64_t nx, bool vec) {
  static_assert(NV % 4 == 0, "rows are loaded in groups of four");
  if (vec && x >= 0 && x + NV <= nx) {
#pragma unroll
    for (int c = 0; c < NV / 4; ++c) {
      if constexpr (sizeof(T) == 4) {
        const float4 f = __ldg(reinterpret_cast<const float4*>(row + x) + c);
        v[4 * c + 0] = f.x;
        v[4 * c + 1] = f.y;
        v[4 * c + 2] = f.z;
        v[4 * c + 3] = f.w;
      } else {
        const double2 a = __ldg(reinterpret_cast<const double2*>(row + x) + 2 * c);
        const double2 b = __ldg(reinterpret_cast<const double2*>(row + x) + 2 * c + 1);
        v[4 * c + 0] = a.x;
        v[4 * c + 1] = a.y;
        v[4 * c + 2] = b.x;
        v[4 * c + 3] = b.y;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < NV; ++i) {
      const std::int64_t g = x + i;
      v[i] = (g >= 0 && g < nx) ? __ldg(row + g) : T(0);
    }
  }
}

// a / k for an integer k given as its Reciprocal (hi + lo = 1 / k, from the host): a hi + a lo,
// one FMA, correctly rounded (core/reciprocal.hpp says why and how it was checked). The division
// operator inlines a call to its slow path, which cost registers and spills in the kernels that
// hold it. Multiplying by a weight c: Reciprocal::times(c).
template <class T>
using Reciprocal = halo::detail::Reciprocal<T>;
template <class T>
__device__ __forceinline__ T div_by(T a, const Reciprocal<T>& y) {
  return fma(a, y.hi, a * y.lo);
}

// f(std::integral_constant<int, I>{}) for I = 0 .. N-1, in order.
template <class F, int... I>
__device__ __forceinline__ void for_each_index(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void for_each_index(F&& f) {
  for_each_index(f, std::make_integer_sequence<int, N>{});
}

template <class T>
__device__ __forceinline__ void zero_row(T* v, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) v[i] = T(0);
}

// N elements of a row, as a value (a fetched row that is assigned as a whole).
template <class T, int N>
struct RowOf {
  T v[N];
};

// One step of the register prefetch, whose D rows in flight sit in pipe: v = the row in pipe[k]
// (k a constant once the caller's row loop is unrolled), and `fetch(row)` loads the row D ahead
// into its place when `more`. With D = 1 the next row's loads go out before pipe[0] is read, so
// two rows overlap for a moment instead of none.
template <class T, int NV, int D, class Fetch>
__device__ __forceinline__ void take_row(RowOf<T, NV> (&pipe)[D], int k, bool more, T (&v)[NV],
                                         Fetch fetch) {
  if constexpr (D == 1) {
    RowOf<T, NV> next;
    if (more) fetch(next);
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = pipe[0].v[i];
    pipe[0] = next;
  } else {
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = pipe[k].v[i];
    if (more) fetch(pipe[k]);
  }
}

// p[0 .. 3] = a, b, c, d as one 16-byte store (p 16-byte aligned, in global memory). Written in
// PTX because the compiler split the first of a lane's float4 stores into four 4-byte ones, in
// store4's path as in a plain float4 store (so did one of the 1D wide layout's two groups: four STG.E).
__device__ __forceinline__ void store16(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d));
}
// The same with the streaming cache hint (.cs: evict first).
__device__ __forceinline__ void store16_cs(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c),
               "f"(d));
}

// v[i] = p[i] for i < NV, as 16-byte loads (p 16-byte aligned; shared memory, for the rings).
template <class T, int NV>
__device__ __forceinline__ void read_groups(const T* p, T (&v)[NV]) {
  static_assert(NV % 4 == 0, "rows are read in groups of four");
#pragma unroll
  for (int c = 0; c < NV / 4; ++c) {
    if constexpr (sizeof(T) == 4) {
      const float4 f = reinterpret_cast<const float4*>(p)[c];
      v[4 * c + 0] = f.x, v[4 * c + 1] = f.y, v[4 * c + 2] = f.z, v[4 * c + 3] = f.w;
    } else {
      const double2 a = reinterpret_cast<const double2*>(p)[2 * c];
      const double2 b = reinterpret_cast<const double2*>(p)[2 * c + 1];
      v[4 * c + 0] = a.x, v[4 * c + 1] = a.y, v[4 * c + 2] = b.x, v[4 * c + 3] = b.y;
    }
  }
}

// dst[0 .. B/sizeof(T)) = src's (or zeros unless `in`; `src` is then any valid address), dst in
// shared memory: cp.async from sm_80, with a source size of 0 for the zeros (B = 16: .cg, past
// L1); before sm_80, a plain load and store. Complete once a later cp.async.wait_group says so.
template <int B, class T>
__device__ __forceinline__ void copy_async(T* dst, const T* src, bool in) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  const std::uint32_t n = in ? B : 0u;
  if constexpr (B == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(n)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src), "n"(B),
                 "r"(n)
                 : "memory");
#else
#pragma unroll
  for (int i = 0; i < B / int(sizeof(T)); ++i) dst[i] = in ? src[i] : T(0);
#endif
}
// Closes the group of this thread's cp.async copies issued since the last commit.
__device__ __forceinline__ void commit_async() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_async() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace halo::cuda::prim
