// What the filters along one axis at the integer types' own width take (CUDA's `lines`,
// cuda/lines/lines.cu; the CPU's `cpu_lines`, cpu/lines/lines.cpp): uint8, uint16 or int16 in,
// one of them or float32 out, a filter that reaches exactly one axis, not wider than it, of at
// most max_taps taps. One rule for both, so that the two backends take the same problems.
#pragma once

#include <string>

#include "halo/strategy.hpp"

namespace halo::detail {

inline bool integer_line_dtype(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::i16;
}

// The strategies' accepts_dtypes.
inline Status integer_line_dtypes(const Problem& p) {
  const DType o = p.out_dtype();
  if (integer_line_dtype(p.dtype()) && (integer_line_dtype(o) || o == DType::f32))
    return Status::success();
  return Status::failure("written for uint8, uint16 and int16 input (uint8, uint16, int16 or "
                         "float32 out)");
}

// The axis p's filter reaches, or -1 and *why where p is not such a problem (dtypes included).
inline int integer_line_axis(const Problem& p, int max_taps, std::string* why) {
  if (const Status dt = integer_line_dtypes(p); !dt) {
    *why = dt.reason;
    return -1;
  }
  int axis = -1, reached = 0;
  for (int ax = 0; ax < p.rank(); ++ax)
    if (p.filter_extents()[ax] > 1) {
      axis = ax;
      ++reached;
    }
  if (reached != 1) {
    *why = "a filter that reaches exactly one axis";
    return -1;
  }
  if (p.filter_folded()) {
    *why = "a filter wider than its axis";
    return -1;
  }
  if (p.filter_extents()[axis] > max_taps) {
    *why = "at most " + std::to_string(max_taps) + " taps";
    return -1;
  }
  return axis;
}

}  // namespace halo::detail
