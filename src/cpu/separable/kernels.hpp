// cpu_separable's and cpu_lowrank's SIMD row kernels (kernels-inl.h, one copy per Highway
// target, the best for this machine chosen at run time in kernels.cpp): a window of rows
// combined into one (Combine), a group of output rows at once (CombineRows), a box along a row
// (BoxRow) and running sums down rows (RunRows). Each scales its sums as a Scale says and, with
// `probe`, returns whether every output it stored was finite (NonFinite::noted).
#pragma once

#include <cstdint>

namespace halo::cpu::sep {

// Outputs per block of the x box forms (their levels stay in L1).
constexpr std::int64_t kBoxBlock = 1024;
// Output rows of a y or z pass computed together (CombineRows).
constexpr int kRowGroup = 4;
// How a pass scales its sums where it stores them: not at all, times s, or divided by s (the
// last pass of a box whose weights are whole multiples of 1/s: make_job).
template <class T>
struct Scale {
  enum Kind { none, mul, div } kind = none;
  T s = T(1);
};

// The kernels of one dtype, as the dispatcher chose them for this machine (kernels.cpp).
template <class T>
struct Kernels;
#define HALO_SEP_DECLARE(T)                                                                        \
template <>                                                                                        \
struct Kernels<T> {                                                                                \
  static bool Combine(const T* const* rows, int K, const T* w, bool sym, const T* add, T* dst,     \
                      std::int64_t n, bool stream, Scale<T> sc, bool probe);                       \
  static bool CombineRows(const T* const* rows, int K, const T* w, T* const* dst, std::int64_t n,  \
                          bool stream, Scale<T> sc, bool probe);                                   \
  static bool BoxRow(const T* src, std::int64_t n, int K, Scale<T> sc, T* dst, T* tmp,             \
                     bool stream, int restart, bool probe);                                        \
  static bool RunRows(const T* const* rows, int K, const T* add, const T* sub, bool restart,       \
                      Scale<T> sc, T* acc, T* dst, std::int64_t n, bool stream, bool probe);       \
};
HALO_SEP_DECLARE(float)
HALO_SEP_DECLARE(double)
#undef HALO_SEP_DECLARE

// dst = sc(the K rows combined by w), plus `add` where given (nullptr: nothing added); with
// `probe`, returns whether every output was finite (else true).
template <class T>
bool Combine(const T* const* rows, int K, const T* w, bool sym, T* dst, std::int64_t n,
             bool stream, const T* add = nullptr, Scale<T> sc = {}, bool probe = false) {
  return Kernels<T>::Combine(rows, K, w, sym, add, dst, n, stream, sc, probe);
}
// dst[g] = sc(rows g .. g + K - 1 combined by w), for g < kRowGroup (kRowGroup + K - 1 rows).
template <class T>
bool CombineRows(const T* const* rows, int K, const T* w, T* const* dst, std::int64_t n,
                 bool stream, Scale<T> sc, bool probe) {
  return Kernels<T>::CombineRows(rows, K, w, dst, n, stream, sc, probe);
}
// restart > 0: running sums of vectors restarted every `restart` outputs; 0: doubling.
template <class T>
bool BoxRow(const T* src, std::int64_t n, int K, Scale<T> sc, T* dst, T* tmp, bool stream,
            int restart, bool probe) {
  return Kernels<T>::BoxRow(src, n, K, sc, dst, tmp, stream, restart, probe);
}
template <class T>
bool RunRows(const T* const* rows, int K, const T* add, const T* sub, bool restart, Scale<T> sc,
             T* acc, T* dst, std::int64_t n, bool stream, bool probe) {
  return Kernels<T>::RunRows(rows, K, add, sub, restart, sc, acc, dst, n, stream, probe);
}

}  // namespace halo::cpu::sep
