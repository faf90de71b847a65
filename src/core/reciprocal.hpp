// Division by a whole number k as two instructions, correctly rounded: a / k = a hi + a lo, where
// hi + lo is 1 / k as an unevaluated sum of the dtype (hi = RN(1/k); lo = RN(1/k - hi), from the
// remainder 1 - hi k, exact by one FMA), the second product rounded and the sum rounded once by
// an FMA. Used by every kernel that divides a box's sums once (a mean of a constant region is then
// the constant, as SciPy's uniform filter gives): cuda/primitives/rows.cuh (div_by), the CPU's
// direct sum and separable passes.
//
// Why it is exact: for k < 2^22, hi + lo is 1/k to 2^-48 (float32; 2^-106 in float64) and a lo's
// rounding adds at most as much, so the FMA rounds a value within 2^-47 of a / k (relative),
// while a / k, never a midpoint between two numbers of the dtype, lies at least 2^-25 / k from
// one: correctly rounded wherever a / k is at least 2^-100 (float32; below, a lo is subnormal and
// the quotient within an ulp of the smallest numbers) or normal (float64); a quotient that is a
// number of the dtype comes out exactly. Checked against exact quotients
// (docs/notes/nonfinite-separable-fft.md): every float32 significand of two binades for 23 k from
// 3 to 2^24 - 1, 4e7 random float32 and 9e6 float64 cases, 3.7e6 constants c k (subnormal c
// among them). A NaN or an infinity gives NaN (noted and repaired as any non-finite output).
#pragma once

#include <cmath>

namespace halo::detail {

template <class T>
struct Reciprocal {
  T hi = 1, lo = 0;
  // 1 / k.
  static Reciprocal of(T k) {
    const T hi = T(1) / k;
    return {hi, std::fma(-hi, k, T(1)) / k};
  }
  // A multiplication by c in the same form: {c, 0}.
  static Reciprocal times(T c) { return {c, T(0)}; }
};

// a / k as the kernels form it (the device's div_by, the CPU's vectors): a hi + a lo, one FMA.
template <class T>
inline T divided(T a, const Reciprocal<T>& y) {
  return std::fma(a, y.hi, a * y.lo);
}

}  // namespace halo::detail
