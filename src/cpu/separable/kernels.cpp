// The separable row kernels compiled for every Highway target, and the dispatch to the best
// target of this machine (Kernels<T>, kernels.hpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/separable/kernels-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "cpu/separable/kernels-inl.h"

#if HWY_ONCE
namespace halo::cpu::sep {
HWY_EXPORT(CombineF32);
HWY_EXPORT(CombineF64);
HWY_EXPORT(CombineRowsF32);
HWY_EXPORT(CombineRowsF64);
HWY_EXPORT(BoxRowF32);
HWY_EXPORT(BoxRowF64);
HWY_EXPORT(RunRowsF32);
HWY_EXPORT(RunRowsF64);

#define HALO_SEP_DISPATCH(T, S)                                                                    \
bool Kernels<T>::Combine(const T* const* rows, int K, const T* w, bool sym, const T* add, T* dst,  \
                         std::int64_t n, bool stream, Scale<T> sc, bool probe) {                   \
  return HWY_DYNAMIC_DISPATCH(Combine##S)(rows, K, w, sym, add, dst, n, stream, sc, probe);        \
}                                                                                                  \
bool Kernels<T>::CombineRows(const T* const* rows, int K, const T* w, T* const* dst,               \
                             std::int64_t n, bool stream, Scale<T> sc, bool probe) {               \
  return HWY_DYNAMIC_DISPATCH(CombineRows##S)(rows, K, w, dst, n, stream, sc, probe);              \
}                                                                                                  \
bool Kernels<T>::BoxRow(const T* src, std::int64_t n, int K, Scale<T> sc, T* dst, T* tmp,          \
                        bool stream, int restart, bool probe) {                                    \
  return HWY_DYNAMIC_DISPATCH(BoxRow##S)(src, n, K, sc, dst, tmp, stream, restart, probe);         \
}                                                                                                  \
bool Kernels<T>::RunRows(const T* const* rows, int K, const T* add, const T* sub, bool restart,    \
                         Scale<T> sc, T* acc, T* dst, std::int64_t n, bool stream, bool probe) {   \
  return HWY_DYNAMIC_DISPATCH(RunRows##S)(rows, K, add, sub, restart, sc, acc, dst, n, stream,     \
                                          probe);                                                  \
}
HALO_SEP_DISPATCH(float, F32)
HALO_SEP_DISPATCH(double, F64)
#undef HALO_SEP_DISPATCH
}  // namespace halo::cpu::sep
#endif  // HWY_ONCE
