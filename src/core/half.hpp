// The two 16-bit floating storage types, as bits with conversions to and from float that compile
// for the host and the device alike: IEEE binary16 (float16, NumPy's float16, CUDA's __half) and
// bfloat16 (the upper half of a float32, CUDA's __nv_bfloat16). Conversions from float round to
// nearest, ties to even, as NumPy's and CUDA's do; NaN stays NaN (quiet) and infinities stay
// infinite. Arithmetic is done in float (the accumulation type of both, core/dtype.hpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.hpp"

namespace halo {

struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

namespace detail {
HALO_HOST_DEVICE inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
HALO_HOST_DEVICE inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace detail

HALO_HOST_DEVICE inline float to_float(float16 h) {
  const std::uint32_t s = std::uint32_t(h.bits & 0x8000u) << 16;
  const std::uint32_t e = (h.bits >> 10) & 0x1fu;
  std::uint32_t m = h.bits & 0x3ffu;
  if (e == 31) return detail::bits_float(s | 0x7f800000u | (m << 13));  // inf, NaN
  if (e != 0) return detail::bits_float(s | ((e + 112) << 23) | (m << 13));
  if (m == 0) return detail::bits_float(s);
  int shift = 0;  // a subnormal m * 2^-24: normalise the significand
  while (!(m & 0x400u)) {
    m <<= 1;
    ++shift;
  }
  return detail::bits_float(s | (std::uint32_t(113 - shift) << 23) | ((m & 0x3ffu) << 13));
}

HALO_HOST_DEVICE inline float16 to_float16(float f) {
  const std::uint32_t x = detail::float_bits(f);
  const std::uint16_t s = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u)  // infinity, or NaN kept quiet with its upper payload
    return {static_cast<std::uint16_t>(
        s | (a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u))};
  if (a >= 0x477ff000u) return {static_cast<std::uint16_t>(s | 0x7c00u)};  // >= 65520: inf
  if (a < 0x38800000u) {  // below 2^-14: a subnormal (units of 2^-24) or zero
    if (a < 0x33000000u) return {s};  // at most 2^-25: zero (2^-25 itself ties to even 0)
    const std::uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return {static_cast<std::uint16_t>(s | r)};
  }
  const std::uint32_t r = a - 0x38000000u;  // exponent rebiased from 127 to 15
  std::uint32_t h = r >> 13;
  const std::uint32_t rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return {static_cast<std::uint16_t>(s | h)};
}

HALO_HOST_DEVICE inline float to_float(bfloat16 h) {
  return detail::bits_float(std::uint32_t(h.bits) << 16);
}

HALO_HOST_DEVICE inline bfloat16 to_bfloat16(float f) {
  const std::uint32_t x = detail::float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((x >> 16) | 0x40u)};
  return {static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}

}  // namespace halo
