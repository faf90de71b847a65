// cpu_lines' SIMD kernels (kernels-inl.h, one copy per Highway target, the best for this machine
// chosen at run time in kernels.cpp): storage rows widened to the accumulation type (Widen), and
// the sums of one row of outputs stored as the output's dtype (LineSums), with SciPy's truncation
// decided lane by lane.
#pragma once

#include <cstdint>

namespace halo::cpu::lines {

// How a row's sums become outputs: SciPy's truncation decided by the sums' bound; the same where
// every sum is an integer within int32 (integral weights and cval: exact), summed in int16
// modulo 2^16, whose low 8 or 16 bits are those SciPy's cast keeps; SciPy's sum rounded to
// nearest (ties to even) with saturation, decided by the bound around half-integers; or a
// float32 output.
enum class Store : int { truncate, exact, nearest, floating };

// One output row, or four: out[g][i] = sum_j w[j] * rows[g + j][i] for i < n and g < groups, in
// the accumulation type A (float or double; int16 for Store::exact, values and weights modulo
// 2^16), stored as T.
template <class A, class T>
struct RowSums {
  const A* const* rows = nullptr;  // groups + k - 1 rows of values; rows[g + j][i]: tap j of (g, i)
  const A* w = nullptr;            // the k weights
  int k = 1;
  int groups = 1;  // output rows: 1, or 4 (rows one after another, as down an axis)
  // 1: w[j] == w[k-1-j] exactly (the pairs are added first), -1: w[j] == -w[k-1-j] (subtracted
  // first), 0: neither; k odd where nonzero.
  int pairs = 0;
  std::int64_t n = 0;
  Store store = Store::truncate;
  A bound = 0;  // truncate: core/convert.hpp's truncation_undecided bound
  // Truncate: outputs [flat_lo, flat_hi) whose taps all read one value v are flat(ctx, v), the
  // SciPy truncation of its sum over a flat window (a whole vector of them at once).
  std::int64_t flat_lo = 0, flat_hi = 0;
  T (*flat)(void* ctx, A v) = nullptr;
  void* ctx = nullptr;
};

// The most entries of `pending` beyond n per output row (a row's last vector overlaps the one
// before it).
constexpr std::int64_t kPendingSlack = 64;

// The kernels of one pair of types, as the dispatcher chose them for this machine.
// LineSums stores every output and lists in `pending` (output (g, i) as g * n + i, some twice:
// room for groups * (n + kPendingSlack)) those it leaves to the caller, who stores them from
// SciPy's own sum: truncate's undecided sums (core/convert.hpp) other than flat ones, nearest's
// within the bound of a half-integer, and any non-finite sum; returns the count listed. Widen
// converts n storage values to A and says whether they are all one value.
template <class A, class T>
struct SumKernel {
  static std::int64_t LineSums(const RowSums<A, T>& r, T* const* out, std::int32_t* pending);
};
template <class S, class A>
struct WidenKernel {
  static bool Widen(const S* src, A* dst, std::int64_t n);
};

template <class A, class T>
std::int64_t LineSums(const RowSums<A, T>& r, T* const* out, std::int32_t* pending) {
  return SumKernel<A, T>::LineSums(r, out, pending);
}
template <class S, class A>
bool Widen(const S* src, A* dst, std::int64_t n) {
  return WidenKernel<S, A>::Widen(src, dst, n);
}

}  // namespace halo::cpu::lines

// The type triples instantiated: X(accumulation, output, name) of LineSums and X(storage,
// accumulation, name) of Widen; one list for the per-target kernels (kernels-inl.h) and their
// dispatch (kernels.cpp).
#define HALO_LINES_SUM_TYPES(X)                                                          \
  X(float, std::uint8_t, F32U8) X(float, std::uint16_t, F32U16) X(float, std::int16_t, F32I16) \
  X(float, float, F32F32) X(double, std::uint8_t, F64U8) X(double, std::uint16_t, F64U16)     \
  X(double, std::int16_t, F64I16) X(double, float, F64F32)                                   \
  X(std::int16_t, std::uint8_t, I16U8) X(std::int16_t, std::uint16_t, I16U16)                \
  X(std::int16_t, std::int16_t, I16I16)
#define HALO_LINES_WIDEN_TYPES(X)                                                       \
  X(std::uint8_t, float, U8F32) X(std::uint16_t, float, U16F32)                         \
  X(std::int16_t, float, I16F32) X(std::uint8_t, double, U8F64)                         \
  X(std::uint16_t, double, U16F64) X(std::int16_t, double, I16F64)                      \
  X(std::uint8_t, std::int16_t, U8I16) X(std::uint16_t, std::int16_t, U16I16)           \
  X(std::int16_t, std::int16_t, I16I16)
