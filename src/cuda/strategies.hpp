// The factories of the CUDA strategies other than the seed kernels (whose factories
// seeds/common.cuh declares); runtime.cu registers them all.
#pragma once

#include <memory>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

std::unique_ptr<Strategy> make_separable_strategy();  // src/cuda/separable/strategies.cu
std::unique_ptr<Strategy> make_lowrank_strategy();    // src/cuda/separable/strategies.cu
std::unique_ptr<Strategy> make_fft_strategy();        // src/cuda/fft/strategy.cu
namespace fast {
std::unique_ptr<Strategy> make_strategy();  // src/cuda/fast/strategy.cu
}  // namespace fast

}  // namespace halo::cuda
