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
HALO_LINES_SUM_TYPES(HALO_LINES_SUMS)
#undef HALO_LINES_SUMS

#define HALO_LINES_WIDEN(S, A, N)                                                          \
  HWY_EXPORT(Widen##N);                                                                    \
  template <>                                                                              \
  bool WidenKernel<S, A>::Widen(const S* src, A* dst, std::int64_t n) {                    \
    return HWY_DYNAMIC_DISPATCH(Widen##N)(src, dst, n);                                    \
  }
HALO_LINES_WIDEN_TYPES(HALO_LINES_WIDEN)
#undef HALO_LINES_WIDEN

}  // namespace halo::cpu::lines
#endif  // HWY_ONCE
