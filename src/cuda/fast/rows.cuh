// The `fast` kernels' row primitives: the weight window as kernel parameters (Taps), 16-byte row
// loads with zero ghost cells, the register prefetch, the final outputs' epilogue (Finish),
// clipped 16-byte stores, and cp.async.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cuda/fast/policy.hpp"  // the shapes shared with the policy: kTx, Feed, round_up4 ...
#include "cuda/nonfinite.cuh"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda::fast {

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

// a / k for an integer k >= 1 (at most 2^20) whose reciprocal y = RN(1/k) is given: q = a y,
// then one Newton correction q + (a - k q) y (the remainder by one FMA), rounded once. Correctly
// rounded wherever a / k is a normal number: q lies within 1.5 ulp of a / k, so the corrected
// value lies within 2^-22 ulp of it, while a / k is never a midpoint between two numbers of the
// dtype and lies at least 1/(2k) ulp from one. Branch-free FMAs, where the division operator
// inlines a call to its slow path, which cost registers and spills in the kernels that hold it.
// A NaN or an infinity gives NaN (noted, and repaired, as any non-finite output).
template <class T>
__device__ __forceinline__ T div_by(T a, T k, T y) {
  const T q = a * y;
  return fma(fma(-q, k, a), y, q);
}

// What a kernel that writes final outputs does to them as it stores them (`fast`'s kernels and
// the border pass; passed by value): a box filter (every weight 1/K: box_taps_of(), run with
// weights 1) divides each sum by K once, correctly rounded, so that the mean of a constant region
// is the constant, as SciPy's uniform filter (it sums, then divides); and the outputs stored are
// probed for NaN and infinities (one FMA each). Each thread adds every output it stores into one
// probe register (apply(a, probe), probe_all) and notes it once at the kernel's end (note(probe)):
// a compare and a predicated store per stored group cost the loops that store often more than
// the register. The default divides nothing and notes nothing: the passes before the last of a
// split filter, whose sums flow into the last one's outputs.
struct Finish {
  NonFiniteNote note;
  bool box = false;  // divide by K
  float k_f = 1.f;   // K and RN(1/K), in each dtype (the reciprocal from the host: rcp.rn in a
  float y_f = 1.f;   // kernel is a MUFU and a fix-up with a slow path, per stored group)
  double k_d = 1.0;
  double y_d = 1.0;

  // A run's: the note of b (Buffers::nonfinite), the divisor K of a box filter (0: none).
  static Finish of(const Buffers& b, std::int64_t box_taps) {
    Finish f;
    f.note = NonFiniteNote::of(b);
    f.box = box_taps > 0;
    if (f.box) {
      f.k_f = float(box_taps), f.k_d = double(box_taps);
      f.y_f = 1.f / f.k_f, f.y_d = 1.0 / f.k_d;  // IEEE division: correctly rounded
    }
    return f;
  }

  // v / K (div_by).
  template <class T>
  __device__ __forceinline__ T divided(T v) const {
    if constexpr (sizeof(T) == 4)
      return div_by(v, k_f, y_f);
    else
      return div_by(v, k_d, y_d);
  }
  // A group of outputs divided where `box`, before they are stored.
  template <class T, int N>
  __device__ __forceinline__ void divide(T (&a)[N]) const {
    if (box) {
#pragma unroll
      for (int j = 0; j < N; ++j) a[j] = divided(a[j]);
    }
  }
  // A group divided and added to the thread's probe, which the kernel notes once at its end
  // (note(probe)).
  template <class T, int N>
  __device__ __forceinline__ void apply(T (&a)[N], T& probe) const {
    divide(a);
    probe_all(a, probe);
  }
  // The same for one output (the border pass).
  template <class T>
  __device__ __forceinline__ void apply(T& v, T& probe) const {
    if (box) v = divided(v);
    probe = probe_nonfinite(probe, v);
  }
  // A group added to the thread's probe without the division: kernels that never run a box filter
  // (fast_policy), or that divided the group already (divide).
  template <class T, int N>
  __device__ __forceinline__ void probe_all(const T (&a)[N], T& probe) const {
#pragma unroll
    for (int j = 0; j < N; ++j) probe = probe_nonfinite(probe, a[j]);
  }
};

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

// a[0..3] += row[x .. x+3] (clipped to nx): the passes after the first of a split filter.
template <class T>
__device__ __forceinline__ void add4(const T* __restrict__ row, std::int64_t x, std::int64_t nx,
                                     bool vec, T (&a)[kTx]) {
  if (vec && x + 3 < nx) {
    if constexpr (sizeof(T) == 4) {
      const float4 f = *reinterpret_cast<const float4*>(row + x);
      a[0] += f.x, a[1] += f.y, a[2] += f.z, a[3] += f.w;
    } else {
      const double2 p = *reinterpret_cast<const double2*>(row + x);
      const double2 q = *reinterpret_cast<const double2*>(row + x + 2);
      a[0] += p.x, a[1] += p.y, a[2] += q.x, a[3] += q.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < kTx; ++e)
      if (x + e < nx) a[e] += row[x + e];
  }
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

}  // namespace halo::cuda::fast
