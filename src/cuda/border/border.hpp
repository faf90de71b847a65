// The border pass (border.cu): boundary modes for kernels that compute zero ghosts.
#pragma once

#include <cstdint>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

// Recomputes, on `stream`, the outputs of p within the filter's reach of an edge under p's
// modes, cval and folded weights; the rest of b.output is left as the interior kernel wrote it.
// Device buffers. The kernel is taken to have computed zero ghosts, except on the canonical axes
// in `applied` (bit 0: z, 1: y, 2: x), whose modes it applied itself; axes with zero ghosts
// (constant, cval 0) need no pass either. Outputs it writes as NaN or infinite are noted in
// b.nonfinite (NonFinite::noted); a box filter's (fast::box_taps_of) are its sums divided by the taps.
void border_pass(const Problem& p, const Buffers& b, void* stream, unsigned applied = 0);

// Whether border_pass (applied = 0) recomputes every output of p: an axis it recomputes has no
// output whose window stays inside the array (an axis no longer than the filter's reach from
// both edges). The interior kernel's launch is then wasted work (tiny arrays).
bool border_covers_all(const Problem& p);

// Every output of p under its modes by the border pass's one-thread-per-output kernel, in one
// launch on `stream` (for tiny arrays, where the interior kernel and a border launch per axis
// cost more host time than the work), noted and divided as border_pass's; false, with nothing
// launched, where that kernel does not take p's filter (more weights or a wider halo than it
// holds).
bool whole_pass(const Problem& p, const Buffers& b, void* stream);

}  // namespace halo::cuda
