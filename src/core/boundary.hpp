// The one index map of the boundary modes: which input element coordinate i of an axis of extent
// n reads under a mode (scipy.ndimage's meaning, for any distance from the array), on the host
// and on the device. The reference, the folding of wide filters in Problem, the CPU paths and the
// GPU border passes all use it.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "halo/halo.hpp"

namespace halo::detail {

// The input index that coordinate i reads, or -1 for cval (constant mode outside the array), in
// the integer type I: map_index() below, or int where a kernel's coordinates are 32-bit (a
// 64-bit remainder is a call on the GPU). constexpr, so that a kernel may map its ghost cells at
// compile time.
template <class I>
HALO_HOST_DEVICE constexpr I map_index_as(I i, I n, Boundary m) {
  if (i >= 0 && i < n) return i;
  switch (m) {
    case Boundary::constant:
      return -1;
    case Boundary::nearest:
      return i < 0 ? 0 : n - 1;
    case Boundary::wrap: {
      const I r = i % n;
      return r < 0 ? r + n : r;
    }
    case Boundary::reflect: {  // d c b a | a b c d | d c b a: period 2n
      const I p = 2 * n;
      I r = i % p;
      if (r < 0) r += p;
      return r < n ? r : p - 1 - r;
    }
    case Boundary::mirror: {  // d c b | a b c d | c b a: period 2n - 2; one element: itself
      if (n == 1) return 0;
      const I p = 2 * n - 2;
      I r = i % p;
      if (r < 0) r += p;
      return r < n ? r : p - r;
    }
  }
  return -1;
}
HALO_HOST_DEVICE inline std::int64_t map_index(std::int64_t i, std::int64_t n, Boundary m) {
  return map_index_as<std::int64_t>(i, n, m);
}

// The period of map_index in i (0: none, constant and nearest).
HALO_HOST_DEVICE inline std::int64_t mode_period(std::int64_t n, Boundary m) {
  switch (m) {
    case Boundary::wrap: return n;
    case Boundary::reflect: return 2 * n;
    case Boundary::mirror: return n == 1 ? 1 : 2 * n - 2;
    default: return 0;
  }
}

}  // namespace halo::detail
