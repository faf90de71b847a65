// The kernels' side of SciPy's non-finite answers (core/nonfinite.hpp): a kernel that writes the
// output notes, at the cost of one FMA per output (half of one where it probes outputs in pairs)
// and one branch per thread, that one of its outputs is NaN or infinite; the repair kernel
// (cuda/repair.cu) then recomputes those outputs.
#pragma once

#include <cuda_runtime.h>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

// The word to set and the run's mark (Buffers::nonfinite, nonfinite_mark); a null word: nobody
// asked. Passed to kernels by value.
struct NonFiniteNote {
  unsigned int* flag = nullptr;
  unsigned int mark = 0;

  static NonFiniteNote of(const Buffers& b) { return {b.nonfinite, b.nonfinite_mark}; }
  // Sets the word where `probe` (probe_nonfinite, probe_pairs over the outputs written) is not
  // finite: NaN or an infinity from any NaN or infinity. Many threads may store the same mark.
  __device__ __forceinline__ void operator()(float probe) const {
    if (probe - probe != 0.0f && flag) *flag = mark;
  }
  __device__ __forceinline__ void operator()(double probe) const {
    if (probe - probe != 0.0 && flag) *flag = mark;
  }
};

// probe += v * 0, one FMA: stays 0 while every v is finite.
__device__ __forceinline__ float probe_nonfinite(float probe, float v) { return fmaf(v, 0.0f, probe); }
__device__ __forceinline__ double probe_nonfinite(double probe, double v) { return fma(v, 0.0, probe); }

// probe += a[0] a[1] + a[2] a[3] + ..., one FMA per pair: not finite where any a[j] is NaN or
// infinite (inf * 0 is NaN). Finite values can make it infinite too (a product or the sum beyond
// the dtype's range: float32 outputs of about 1e17 and more): a false alarm, which costs the
// repair's look at every output and changes no result. Half the probes' instructions of
// probe_nonfinite, for the kernels that store many outputs per FMA of their sums.
template <class T, int N>
__device__ __forceinline__ T probe_pairs(T probe, const T (&a)[N]) {
#pragma unroll
  for (int j = 0; j + 1 < N; j += 2) probe = fma(a[j], a[j + 1], probe);
  if constexpr (N % 2 == 1) probe = fma(a[N - 1], T(0), probe);
  return probe;
}
}  // namespace halo::cuda
