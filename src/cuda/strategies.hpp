// The factories of the CUDA strategies, one per strategy (the seed kernels' one per file under
// seeds/); runtime.cu registers them all.
#pragma once

#include <memory>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

std::unique_ptr<Strategy> make_basic_strategy();                 // src/cuda/seeds/basic.cu
std::unique_ptr<Strategy> make_constant_strategy();              // src/cuda/seeds/constant.cu
std::unique_ptr<Strategy> make_tiled_input_strategy();           // src/cuda/seeds/tiled_input.cu
std::unique_ptr<Strategy> make_tiled_output_strategy();          // src/cuda/seeds/tiled_output.cu
std::unique_ptr<Strategy> make_tiled_output_twostep_strategy();  // seeds/tiled_output_twostep.cu
std::unique_ptr<Strategy> make_cached_strategy();                // src/cuda/seeds/cached.cu
std::unique_ptr<Strategy> make_separable_strategy();  // src/cuda/separable/strategies.cu
std::unique_ptr<Strategy> make_lowrank_strategy();    // src/cuda/separable/strategies.cu
std::unique_ptr<Strategy> make_fft_strategy();        // src/cuda/fft/strategy.cu
std::unique_ptr<Strategy> make_lines_strategy();      // src/cuda/lines/lines.cu
std::unique_ptr<Strategy> make_planes_strategy();     // src/cuda/lines/planes.cu
namespace fast {
std::unique_ptr<Strategy> make_strategy();  // src/cuda/fast/strategy.cu
}  // namespace fast

}  // namespace halo::cuda
