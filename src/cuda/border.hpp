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

// Whether border_pass (applied = 0) recomputes every output of p: an axis it recomputes has no
// output whose window stays inside the array (an axis no longer than the filter's reach from
// both edges). The interior kernel's launch is then wasted work (tiny arrays).
bool border_covers_all(const Problem& p);

// Every output of p under its modes by the border pass's one-thread-per-output kernel, in one
// launch on `stream` (for tiny arrays, where the interior kernel and a border launch per axis
// cost more host time than the work); false, with nothing launched, where that kernel does not
// take p's filter (more weights or a wider halo than it holds).
bool whole_pass(const Problem& p, const void* in, void* out, void* stream);

}  // namespace halo::cuda
