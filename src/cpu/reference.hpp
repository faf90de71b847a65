// The float64-accumulating reference: plain loops, the oracle for every test. Never clever.
#pragma once

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {

// out[i] = sum_j w[j] * N[i - anchor + j] accumulated in float64, from the filter as the user
// gave it (p.filter(), p.op(): not the folded correlation weights) and ghost cells from the
// boundary mode; reports progress through p.progress() once per row. With `absolute`, computes
// sum_j |w[j]| * |N[...]| instead: the scale that bounds the rounding error of any summation order.
// `in` holds p.elements() values of p.dtype(); `out` p.elements() doubles.
void reference_f64(const Problem& p, const void* in, double* out, bool absolute = false);

}  // namespace halo::cpu
