// The kernels' side of SciPy's non-finite answers (core/nonfinite.hpp): a kernel that writes the
// output notes, at the cost of one FMA per output and one branch per thread, that one of its
// outputs is NaN or infinite; the repair kernel (cuda/repair.cu) then recomputes those outputs.
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
  // Sets the word where `probe` (a sum of v * 0 over the outputs written) is not 0: NaN from any
  // NaN or infinity. Many threads may store the same mark.
  __device__ __forceinline__ void operator()(float probe) const {
    if (probe != 0.0f && flag) *flag = mark;
  }
  __device__ __forceinline__ void operator()(double probe) const {
    if (probe != 0.0 && flag) *flag = mark;
  }
};

// probe += v * 0, one FMA: stays 0 while every v is finite.
__device__ __forceinline__ float probe_nonfinite(float probe, float v) { return fmaf(v, 0.0f, probe); }
__device__ __forceinline__ double probe_nonfinite(double probe, double v) { return fma(v, 0.0, probe); }

}  // namespace halo::cuda
