// cpu_lines' kernels compiled for every Highway target, and the dispatch to the best target of
// this machine (kernels.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/lines/kernels-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/lines/kernels-inl.h"

#if HWY_ONCE
namespace halo::cpu::lines {

#define HALO_LINES_SUMS(A, T, S)                                                          \
  HWY_EXPORT(LineSums##S);                                                                \
  template <>                                                                             \
  std::int64_t SumKernel<A, T>::LineSums(const RowSums<A, T>& r, T* const* out,           \
                                         std::int32_t* pending) {                         \
    return HWY_DYNAMIC_DISPATCH(LineSums##S)(r, out, pending);                            \
  }
HALO_LINES_SUMS(float, std::uint8_t, F32U8)
HALO_LINES_SUMS(float, std::uint16_t, F32U16)
HALO_LINES_SUMS(float, std::int16_t, F32I16)
HALO_LINES_SUMS(float, float, F32F32)
HALO_LINES_SUMS(double, std::uint8_t, F64U8)
HALO_LINES_SUMS(double, std::uint16_t, F64U16)
HALO_LINES_SUMS(double, std::int16_t, F64I16)
HALO_LINES_SUMS(double, float, F64F32)
HALO_LINES_SUMS(std::int16_t, std::uint8_t, I16U8)
HALO_LINES_SUMS(std::int16_t, std::uint16_t, I16U16)
HALO_LINES_SUMS(std::int16_t, std::int16_t, I16I16)
#undef HALO_LINES_SUMS

#define HALO_LINES_WIDEN(S, A, N)                                                          \
  HWY_EXPORT(Widen##N);                                                                    \
  template <>                                                                              \
  bool WidenKernel<S, A>::Widen(const S* src, A* dst, std::int64_t n) {                    \
    return HWY_DYNAMIC_DISPATCH(Widen##N)(src, dst, n);                                    \
  }
HALO_LINES_WIDEN(std::uint8_t, float, U8F32)
HALO_LINES_WIDEN(std::uint16_t, float, U16F32)
HALO_LINES_WIDEN(std::int16_t, float, I16F32)
HALO_LINES_WIDEN(std::uint8_t, double, U8F64)
HALO_LINES_WIDEN(std::uint16_t, double, U16F64)
HALO_LINES_WIDEN(std::int16_t, double, I16F64)
HALO_LINES_WIDEN(std::uint8_t, std::int16_t, U8I16)
HALO_LINES_WIDEN(std::uint16_t, std::int16_t, U16I16)
HALO_LINES_WIDEN(std::int16_t, std::int16_t, I16I16)
#undef HALO_LINES_WIDEN

}  // namespace halo::cpu::lines
#endif  // HWY_ONCE
