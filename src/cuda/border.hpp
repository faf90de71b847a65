// The border pass (border.cu): boundary modes for kernels that compute zero ghosts.
#pragma once

#include "halo/halo.hpp"

namespace halo::cuda {

// Recomputes, on `stream`, the outputs of p within the filter's reach of an edge under p's
// modes, cval and folded weights; the rest of `out` is left as the interior kernel wrote it.
// Device buffers. The kernel is taken to have computed zero ghosts, except on the canonical axes
// in `applied` (bit 0: z, 1: y, 2: x), whose modes it applied itself; axes with zero ghosts
// (constant, cval 0) need no pass either.
void border_pass(const Problem& p, const void* in, void* out, void* stream,
                 unsigned applied = 0);

}  // namespace halo::cuda
