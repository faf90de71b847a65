// The border pass (border.cu): boundary modes for kernels that compute zero ghosts.
#pragma once

#include "halo/halo.hpp"

namespace halo::cuda {

// Recomputes, on `stream`, the outputs of p within the filter's reach of an edge under p's
// modes, cval and folded weights; the rest of `out` is left as the interior kernel wrote it.
// Device buffers.
void border_pass(const Problem& p, const void* in, void* out, void* stream);

}  // namespace halo::cuda
