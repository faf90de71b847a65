// fft's row transforms in shared memory (rows.cu): the CUDA `fft` strategy's path for
// filters along x alone in float32, where detail::cuda_fft_tiling sets FftTiling::rows.
#pragma once

#include <cuda_runtime.h>

#include "core/fft_tiling.hpp"
#include "cuda/nonfinite.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {

// p's outputs from its input on `stream`, by tiling t (t.shared with t.fft[2] of 1024, 2048 or
// 4096); a non-finite output stored is noted in `note`.
void run_fft_rows(const Problem& p, const detail::FftTiling& t, const float* in, float* out,
                  cudaStream_t stream, NonFiniteNote note);

}  // namespace halo::cuda
