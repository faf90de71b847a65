// fft's 2-D tile transforms in shared memory (tiles.cu): the CUDA `fft` strategy's path for
// float32 2-D filters that fit its 64 x 128 tiles, where detail::cuda_fft_tiling sets
// FftTiling::shared with fft = {1, 64, 128}.
#pragma once

#include <cuda_runtime.h>

#include "core/fft_tiling.hpp"
#include "cuda/nonfinite.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {

// p's outputs from its input on `stream`, by tiling t; a non-finite output stored is noted in
// `note`.
void run_fft_tiles(const Problem& p, const detail::FftTiling& t, const float* in, float* out,
                   cudaStream_t stream, NonFiniteNote note);

}  // namespace halo::cuda
