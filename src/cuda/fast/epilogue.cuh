// What `fast`'s kernels (and its border pass) do to the outputs as they store them: a lane's
// group of kTx outputs stored clipped to the row (store4), added to the outputs of an earlier
// pass (add4), and the final outputs' epilogue (Finish: a box filter's division, the non-finite
// probe). Built on the row primitives (primitives/rows.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/fast/policy.hpp"  // the shapes shared with the policy: kTx ...
#include "cuda/nonfinite.cuh"
#include "cuda/primitives/rows.cuh"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda::fast {

// What a kernel that writes final outputs does to them as it stores them (`fast`'s kernels and
// the border pass; passed by value): a box filter (every weight 1/K: box_taps_of(), run with
// weights 1) divides each sum by K once, correctly rounded, so that the mean of a constant region
// is the constant, as SciPy's uniform filter (it sums, then divides); and the outputs stored are
// probed for NaN and infinities (one FMA per pair of outputs: probe_pairs). Each thread adds every
// output it stores into one probe register (apply(a, probe), probe_all) and notes it once at the
// kernel's end (note(probe)): a compare and a predicated store per stored group cost the loops
// that store often more than the register. The default divides nothing and notes nothing: the passes before the last of a
// split filter, whose sums flow into the last one's outputs.
struct Finish {
  NonFiniteNote note;
  bool box = false;  // divide by K
  // 1 / K in each dtype (div_by; from the host: rcp.rn in a kernel is a MUFU and a fix-up with a
  // slow path, per stored group).
  prim::Reciprocal<float> y_f;
  prim::Reciprocal<double> y_d;

  // A run's: the note of b (Buffers::nonfinite), the divisor K of a box filter (0: none).
  static Finish of(const Buffers& b, std::int64_t box_taps) {
    Finish f;
    f.note = NonFiniteNote::of(b);
    f.box = box_taps > 0;
    if (f.box) {
      f.y_f = prim::Reciprocal<float>::of(float(box_taps));
      f.y_d = prim::Reciprocal<double>::of(double(box_taps));
    }
    return f;
  }

  // v / K (div_by).
  template <class T>
  __device__ __forceinline__ T divided(T v) const {
    if constexpr (sizeof(T) == 4)
      return prim::div_by(v, y_f);
    else
      return prim::div_by(v, y_d);
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
    probe = probe_pairs(probe, a);
  }
};

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

}  // namespace halo::cuda::fast
