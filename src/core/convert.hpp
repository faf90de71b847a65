// How values move between storage and accumulation types (core/dtype.hpp), for the host and the
// device alike: a storage value read into its accumulation type exactly, and a sum stored as the
// output's type by Rounding (halo.hpp). SciPy's integer outputs are its C casts from double on
// x86-64, which this writes out rather than leaves to the compiler: a C cast of an out-of-range
// value is undefined, and CUDA's saturates where x86-64's cvttsd2si gives INT_MIN.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/half.hpp"
#include "core/host_device.hpp"

namespace halo::detail {

template <class T>
inline constexpr bool is_integer_storage_v = std::is_integral_v<T>;

// |v| (NaN stays NaN) and the nearest integer (ties to even), the same on host and device.
template <class A>
HALO_HOST_DEVICE inline A magnitude(A v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<A, float>) return ::fabsf(v);
  else return ::fabs(v);
#else
  return std::fabs(v);  // a mask, so that the host's loops vectorise
#endif
}
HALO_HOST_DEVICE inline double nearest_integer(double v) {
#if defined(__CUDA_ARCH__)
  return ::rint(v);
#else
  return std::nearbyint(v);
#endif
}

// A storage value as a double (complex: its real part; callers split complex data first).
template <class T>
HALO_HOST_DEVICE inline double to_double(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return static_cast<double>(to_float(v));
  else
    return static_cast<double>(v);
}
// A storage value in an accumulation type A (float or double): exact for every row of the table
// whose accumulation type A is.
template <class A, class T>
HALO_HOST_DEVICE inline A to_accum(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return static_cast<A>(to_float(v));
  else
    return static_cast<A>(v);
}

// SciPy's store of a double into an integer type T (NI_LineBufferToArray's `(type)value`, built
// for x86-64): truncation toward zero through a 32-bit cvttsd2si for T of up to 4 bytes, whose
// result is INT_MIN for NaN and for values outside int32's range; narrower types keep the low
// bits (a wrap modulo 2^8 or 2^16).
template <class T>
HALO_HOST_DEVICE inline T scipy_cast(double v) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "8/16/32-bit integers");
  const std::int32_t i = (v > -2147483649.0 && v < 2147483648.0)
                             ? static_cast<std::int32_t>(v)
                             : std::numeric_limits<std::int32_t>::min();
  return static_cast<T>(static_cast<std::uint32_t>(i));
}

// scipy_cast from a float or double sum without going through double (the same result: a float
// in int32's range converts exactly as its double would); branch-free, so that loops vectorise.
template <class T, class A>
HALO_HOST_DEVICE inline T scipy_cast_from(A v) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "8/16/32-bit integers");
  constexpr A lo = std::is_same_v<A, float> ? A(-2147483648.0f) : A(-2147483649.0);
  const bool in = std::is_same_v<A, float> ? (v >= lo && v < A(2147483648.0))
                                           : (v > lo && v < A(2147483648.0));
  const std::int32_t i = in ? static_cast<std::int32_t>(v) : std::numeric_limits<std::int32_t>::min();
  return static_cast<T>(static_cast<std::uint32_t>(i));
}

// Rounding::nearest's store: to the nearest integer, ties to even, saturated; NaN gives 0.
template <class T>
HALO_HOST_DEVICE inline T nearest_cast(double v) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4, "8/16/32-bit integers");
  if (!(v == v)) return T(0);
  constexpr double lo = double(std::numeric_limits<T>::min()),
                   hi = double(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::min();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(nearest_integer(v));
}

// A real sum stored as a floating or complex output type (to nearest).
template <class T, class A>
HALO_HOST_DEVICE inline T from_accum_float(A v) {
  if constexpr (std::is_same_v<T, float16>)
    return to_float16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>)
    return to_bfloat16(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

// Whether a sum `acc`, within `bound` of SciPy's float64 sum, may truncate to another integer
// than SciPy's: it lies within `bound` of an integer (where the truncation changes), or is not
// finite. Elsewhere acc and SciPy's sum lie strictly between the same two integers. A negative
// bound says acc is exact (an integer sum): only a non-finite or huge acc is undecided then.
// The nearest integer is found by adding and subtracting 1.5 * 2^(digits - 1) (exact for
// |acc| < 2^(digits - 2), the default rounding mode's ties to even); larger sums count as
// undecided, which costs a recomputation but is never wrong.
template <class A>
HALO_HOST_DEVICE inline bool truncation_undecided(A acc, A bound) {
  constexpr A magic = std::is_same_v<A, float> ? A(0x1.8p23) : A(0x1.8p52);
  constexpr A big = std::is_same_v<A, float> ? A(0x1p22) : A(0x1p51);
  const A nearest = (acc + magic) - magic;
  return !(magnitude(acc - nearest) > bound) | !(magnitude(acc) < big);
}

}  // namespace halo::detail
