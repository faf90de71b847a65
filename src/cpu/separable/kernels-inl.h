// The per-target SIMD code of the separable row kernels (kernels.hpp says what each does),
// included once per Highway target by kernels.cpp (foreach_target): hence the toggled guard.
#if defined(HALO_CPU_SEPARABLE_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HALO_CPU_SEPARABLE_KERNELS_INL_H_
#undef HALO_CPU_SEPARABLE_KERNELS_INL_H_
#else
#define HALO_CPU_SEPARABLE_KERNELS_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/reciprocal.hpp"
#include "cpu/separable/kernels.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace halo::cpu::sep::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using std::int64_t;

// Stores v at dst: non-temporal where `stream` (dst aligned to the vector), else plain.
template <class D, class T>
HWY_INLINE void Put(D d, hn::Vec<D> v, T* HWY_RESTRICT dst, bool stream) {
  if (stream)
    hn::Stream(v, d, dst);
  else
    hn::StoreU(v, d, dst);
}

// A sum scaled as the pass's Scale says (kind kS, a compile-time constant: no branch per vector).
// Division: a hi + a lo in one FMA (core/reciprocal.hpp), the exact quotient wherever there is one
// (a box's sum of a constant region) and correctly rounded elsewhere; cheaper than a division,
// whose unit takes 5-9 cycles per vector (docs/notes/nonfinite-cpu.md).
template <int kS, class D, class T>
HWY_INLINE hn::Vec<D> Scaled(D d, hn::Vec<D> a, T s) {
  if constexpr (kS == Scale<T>::mul) return hn::Mul(a, hn::Set(d, s));
  if constexpr (kS == Scale<T>::div) {
#if HWY_NATIVE_FMA
    const halo::detail::Reciprocal<T> y = halo::detail::Reciprocal<T>::of(s);
    return hn::MulAdd(a, hn::Set(d, y.hi), hn::Mul(a, hn::Set(d, y.lo)));
#else
    return hn::Div(a, hn::Set(d, s));  // (the sum a hi + a lo must be fused)
#endif
  }
  return a;
}
template <int kS, class T>
HWY_INLINE T Scaled(T a, T s) {
  if constexpr (kS == Scale<T>::mul) return a * s;
  if constexpr (kS == Scale<T>::div) return a / s;
  return a;
}

// The probe of the outputs a kernel stores (kProbe): v - v is 0 for a finite v and NaN
// otherwise, or'ed into p (no floating-point latency chained from store to store); several
// outputs are added first (adds, off the FMA pipes the sums saturate; a sum that overflows from
// finite outputs only notes in vain: a look at the outputs, never a wrong answer). The kernel
// then returns whether every output it stored was finite.
template <class V>
HWY_INLINE V Probe(V p, V v) {
  return hn::Or(p, hn::Sub(v, v));
}
template <class D>
HWY_INLINE bool Finite(D d, hn::Vec<D> p) {
  return hn::AllFalse(d, hn::IsNaN(p));
}
template <class T>
HWY_INLINE bool Finite(T v) {
  return v - v == T(0);
}

// The outputs before dst + j is aligned to a vector, for non-temporal stores (0 without them).
template <class T>
HWY_INLINE int64_t HeadToAlign(const T* dst, int64_t n, int64_t N, bool stream) {
  if (!stream) return 0;
  const uintptr_t bytes = uintptr_t(N) * sizeof(T);
  const uintptr_t mis = reinterpret_cast<uintptr_t>(dst) % bytes;
  if (mis % sizeof(T) != 0) return n;  // not even element-aligned: no vector store streams
  return std::min<int64_t>(n, int64_t(mis ? (bytes - mis) / sizeof(T) : 0));
}

// dst[j] = sc(sum_{i < K} w[i] * rows[i][j]) for j < n, plus add[j] after the sum where `add`
// is given (a sum of separable terms: one rounding per term added; add never aliases dst). With
// `sym` (w[i] == w[K-1-i], K odd) the pairs are added first. Four vectors per step share each
// broadcast weight. Returns whether every output was finite (always true without kProbe).
template <bool kProbe, int kS, class T>
HWY_INLINE bool CombineT(const T* const* HWY_RESTRICT rows, int K, const T* HWY_RESTRICT w,
                         bool sym, const T* HWY_RESTRICT add, T* HWY_RESTRICT dst, int64_t n,
                         bool stream, T s) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int half = K / 2;
  bool ok = true;
  const auto scalar = [&](int64_t j) {
    T a;
    if (sym) {
      a = w[half] * rows[half][j];
      for (int i = 0; i < half; ++i) a += w[i] * (rows[i][j] + rows[K - 1 - i][j]);
    } else {
      a = 0;
      for (int i = 0; i < K; ++i) a += w[i] * rows[i][j];
    }
    a = Scaled<kS>(a, s);
    if (add) a += add[j];
    if (kProbe) ok &= Finite(a);
    dst[j] = a;
  };
  V p = hn::Zero(d);
  // A sum's output at j (scaled, plus add's), stored.
  const auto put = [&](V a, int64_t j) {
    a = Scaled<kS>(d, a, s);
    if (add) a = hn::Add(a, hn::LoadU(d, add + j));
    Put(d, a, dst + j, stream);
    return a;
  };
  // Four of them, probed together.
  const auto put4 = [&](V a0, V a1, V a2, V a3, int64_t j) {
    a0 = put(a0, j);
    a1 = put(a1, j + N);
    a2 = put(a2, j + 2 * N);
    a3 = put(a3, j + 3 * N);
    if (kProbe) p = Probe(p, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)));
  };
  int64_t j = 0;
  for (const int64_t head = HeadToAlign(dst, n, N, stream); j < head; ++j) scalar(j);
  if (sym) {
    for (; j + 4 * N <= n; j += 4 * N) {
      const auto wc = hn::Set(d, w[half]);
      auto a0 = hn::Mul(wc, hn::LoadU(d, rows[half] + j));
      auto a1 = hn::Mul(wc, hn::LoadU(d, rows[half] + j + N));
      auto a2 = hn::Mul(wc, hn::LoadU(d, rows[half] + j + 2 * N));
      auto a3 = hn::Mul(wc, hn::LoadU(d, rows[half] + j + 3 * N));
      for (int i = 0; i < half; ++i) {
        const T* lo = rows[i] + j;
        const T* hi = rows[K - 1 - i] + j;
        const auto wv = hn::Set(d, w[i]);
        a0 = hn::MulAdd(wv, hn::Add(hn::LoadU(d, lo), hn::LoadU(d, hi)), a0);
        a1 = hn::MulAdd(wv, hn::Add(hn::LoadU(d, lo + N), hn::LoadU(d, hi + N)), a1);
        a2 = hn::MulAdd(wv, hn::Add(hn::LoadU(d, lo + 2 * N), hn::LoadU(d, hi + 2 * N)), a2);
        a3 = hn::MulAdd(wv, hn::Add(hn::LoadU(d, lo + 3 * N), hn::LoadU(d, hi + 3 * N)), a3);
      }
      put4(a0, a1, a2, a3, j);
    }
    for (; j + N <= n; j += N) {
      auto a = hn::Mul(hn::Set(d, w[half]), hn::LoadU(d, rows[half] + j));
      for (int i = 0; i < half; ++i)
        a = hn::MulAdd(hn::Set(d, w[i]),
                       hn::Add(hn::LoadU(d, rows[i] + j), hn::LoadU(d, rows[K - 1 - i] + j)), a);
      a = put(a, j);
      if (kProbe) p = Probe(p, a);
    }
  } else {
    for (; j + 4 * N <= n; j += 4 * N) {
      auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
      for (int i = 0; i < K; ++i) {
        const T* r = rows[i] + j;
        const auto wv = hn::Set(d, w[i]);
        a0 = hn::MulAdd(wv, hn::LoadU(d, r), a0);
        a1 = hn::MulAdd(wv, hn::LoadU(d, r + N), a1);
        a2 = hn::MulAdd(wv, hn::LoadU(d, r + 2 * N), a2);
        a3 = hn::MulAdd(wv, hn::LoadU(d, r + 3 * N), a3);
      }
      put4(a0, a1, a2, a3, j);
    }
    for (; j + N <= n; j += N) {
      auto a = hn::Zero(d);
      for (int i = 0; i < K; ++i) a = hn::MulAdd(hn::Set(d, w[i]), hn::LoadU(d, rows[i] + j), a);
      a = put(a, j);
      if (kProbe) p = Probe(p, a);
    }
  }
  for (; j < n; ++j) scalar(j);
  return !kProbe || (ok && Finite(d, p));
}

// Calls f(std::integral_constant<int, i>()) for i = 0 .. n - 1: loops over register arrays with
// compile-time indices, so that the arrays stay in registers.
template <class F, int... i>
HWY_INLINE void Unrolled(std::integer_sequence<int, i...>, F&& f) {
  (f(std::integral_constant<int, i>()), ...);
}

// dst[g][j] = sc(sum_{i < K} w[i] * rows[g + i][j]) for g < G and j < n: G output rows of a y or
// z pass from their K + G - 1 input rows, each input vector loaded once for the G sums it enters
// (one output row at a time loads every input vector K times, from L2 where the ring lies).
// Each sum runs over i in order, as CombineT's unpaired form. Returns as CombineT.
template <bool kProbe, int kS, int G, class T>
HWY_INLINE bool CombineRowsT(const T* const* HWY_RESTRICT rows, int K, const T* HWY_RESTRICT w,
                             T* const* HWY_RESTRICT dst, int64_t n, bool stream, T s) {
#if HWY_HAVE_SCALABLE
  // No arrays of sizeless vectors: one row at a time.
  bool ok = true;
  for (int g = 0; g < G; ++g)
    ok &= CombineT<kProbe, kS>(rows + g, K, w, false, nullptr, dst[g], n, stream, s);
  return ok;
#else
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
#if HWY_ARCH_X86 && HWY_TARGET > HWY_AVX3
  constexpr int kV = 2;  // 16 vector registers: G * kV sums, kV inputs, a weight
#else
  constexpr int kV = 4;
#endif
  using Gs = std::make_integer_sequence<int, G>;
  using Vs = std::make_integer_sequence<int, kV>;
  // Streaming stores need every row aligned as the first.
  for (int g = 1; g < G && stream; ++g) stream = (dst[g] - dst[0]) % N == 0;
  bool ok = true;
  const auto scalar = [&](int64_t j) {
    for (int g = 0; g < G; ++g) {
      T a = 0;
      for (int i = 0; i < K; ++i) a += w[i] * rows[g + i][j];
      a = Scaled<kS>(a, s);
      if (kProbe) ok &= Finite(a);
      dst[g][j] = a;
    }
  };
  V p = hn::Zero(d);
  int64_t j = 0;
  for (const int64_t head = HeadToAlign(dst[0], n, N, stream); j < head; ++j) scalar(j);
  for (; j + kV * N <= n; j += kV * N) {
    V a[G][kV];
    Unrolled(Gs(), [&](auto g) { Unrolled(Vs(), [&](auto v) { a[g][v] = hn::Zero(d); }); });
    for (int r = 0; r < K + G - 1; ++r) {
      V x[kV];
      Unrolled(Vs(), [&](auto v) { x[v] = hn::LoadU(d, rows[r] + j + v * N); });
      // Input row r enters output g's sum with weight w[r - g].
      Unrolled(Gs(), [&](auto g) {
        if (unsigned(r - g) < unsigned(K)) {
          const V wv = hn::Set(d, w[r - g]);
          Unrolled(Vs(), [&](auto v) { a[g][v] = hn::MulAdd(wv, x[v], a[g][v]); });
        }
      });
    }
    Unrolled(Gs(), [&](auto g) {
      Unrolled(Vs(), [&](auto v) {
        a[g][v] = Scaled<kS>(d, a[g][v], s);
        Put(d, a[g][v], dst[g] + j + v * N, stream);
      });
    });
    if (kProbe) {
      // The G * kV outputs added pairwise, then probed.
      Unrolled(Gs(), [&](auto g) {
        Unrolled(Vs(), [&](auto v) {
          if constexpr (decltype(v)::value > 0) a[g][0] = hn::Add(a[g][0], a[g][v]);
        });
        if constexpr (decltype(g)::value > 0) a[0][0] = hn::Add(a[0][0], a[g][0]);
      });
      p = Probe(p, a[0][0]);
    }
  }
  for (; j < n; ++j) scalar(j);
  return !kProbe || (ok && Finite(d, p));
#endif
}

// The next level of doubling: next[i] = cur[i] + cur[i + width] for i < m.
template <class T>
HWY_INLINE void NextLevel(const T* HWY_RESTRICT cur, T* HWY_RESTRICT next, int64_t m,
                          int64_t width) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + N <= m; i += N)
    hn::StoreU(hn::Add(hn::LoadU(d, cur + i), hn::LoadU(d, cur + i + width)), d, next + i);
  for (; i < m; ++i) next[i] = cur[i] + cur[i + width];
}

// Box along a row by doubling: dst[j] = sc(sum_{t < K} src[j + t]) for j < n. Sums of 2^b
// consecutive inputs are built level by level (each from two of the level below), and each
// output adds the levels of K's binary digits: about log2(K) + popcount(K) adds per output, in
// blocks of kBoxBlock outputs so that the levels stay in L1. Every output is a tree sum of its
// K inputs (no running drift). tmp: 2 * (kBoxBlock + K) + kBoxBlock elements. Returns as
// CombineT.
template <bool kProbe, int kS, class T>
HWY_INLINE bool BoxRowT(const T* HWY_RESTRICT src, int64_t n, int K, T s, T* HWY_RESTRICT dst,
                        T* HWY_RESTRICT tmp, bool stream) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  T* lv[2] = {tmp, tmp + kBoxBlock + K};
  T* acc = tmp + 2 * (kBoxBlock + K);
  bool ok = true;
  auto p = hn::Zero(d);
  for (int64_t b0 = 0; b0 < n; b0 += kBoxBlock) {
    const int64_t S = std::min<int64_t>(kBoxBlock, n - b0);
    const int64_t L = S + K - 1;  // inputs of this block
    const T* cur = src + b0;
    int64_t width = 1, off = 0;
    bool first = true;
    for (int bit = 0;; ++bit) {
      if ((K >> bit) & 1) {
        int64_t j = 0;
        if (first) {
          for (; j + N <= S; j += N) hn::StoreU(hn::LoadU(d, cur + off + j), d, acc + j);
          for (; j < S; ++j) acc[j] = cur[off + j];
        } else {
          for (; j + N <= S; j += N)
            hn::StoreU(hn::Add(hn::LoadU(d, acc + j), hn::LoadU(d, cur + off + j)), d, acc + j);
          for (; j < S; ++j) acc[j] += cur[off + j];
        }
        first = false;
        off += width;
      }
      if ((K >> (bit + 1)) == 0) break;
      // The next level: sums of 2 * width inputs, at positions 0 .. L - 2 * width.
      T* next = lv[bit & 1];
      NextLevel(cur, next, L - 2 * width + 1, width);
      cur = next;
      width *= 2;
    }
    T* o = dst + b0;
    const auto scalar = [&](int64_t j) {
      o[j] = Scaled<kS>(acc[j], s);
      if (kProbe) ok &= Finite(o[j]);
    };
    int64_t j = 0;
    for (const int64_t head = HeadToAlign(o, S, N, stream); j < head; ++j) scalar(j);
    for (; j + N <= S; j += N) {
      const auto v = Scaled<kS>(d, hn::LoadU(d, acc + j), s);
      if (kProbe) p = Probe(p, v);
      Put(d, v, o + j, stream);
    }
    for (; j < S; ++j) scalar(j);
  }
  return !kProbe || (ok && Finite(d, p));
}

// Box along a row by running sums of vectors (Summation::running): with W[i] the sum of the N
// inputs from i (N lanes; log2 N levels of doubling), the outputs j .. j + N - 1 step to
// j + N .. j + 2N - 1 as (s + W[j + K]) - W[j], where doubling takes log2 K + popcount K adds
// per output, each output sc(s). The vector of sums restarts from W[j], W[j + N] ... and the last
// K mod N inputs every `restart` outputs (rounded down to whole vectors) and at each block's
// start (docs/ACCURACY.md, Box factors). tmp: 2 * (kBoxBlock + K) elements. Returns as CombineT.
template <bool kProbe, int kS, class T>
HWY_INLINE bool BoxRunT(const T* HWY_RESTRICT src, int64_t n, int K, T s, T* HWY_RESTRICT dst,
                        T* HWY_RESTRICT tmp, bool stream, int restart) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t every = std::max<int64_t>(1, restart / N);  // vectors between restarts
  const int full = int(K / N), rest = int(K % N);
  T* lv[2] = {tmp, tmp + kBoxBlock + K};
  bool ok = true;
  auto p = hn::Zero(d);
  // Output j as a plain sum of its K inputs (the ends of a block).
  const auto scalar = [&](const T* in, int64_t j) {
    T a = 0;
    for (int t = 0; t < K; ++t) a += in[j + t];
    a = Scaled<kS>(a, s);
    if (kProbe) ok &= Finite(a);
    return a;
  };
  for (int64_t b0 = 0; b0 < n; b0 += kBoxBlock) {
    const int64_t S = std::min<int64_t>(kBoxBlock, n - b0);
    const int64_t L = S + K - 1;  // inputs of this block
    const T* in = src + b0;
    T* o = dst + b0;
    int64_t j = 0;
    const int64_t head = std::min<int64_t>(HeadToAlign(o, S, N, stream), S);
    for (; j < head; ++j) o[j] = scalar(in, j);
    if (S - j >= N) {
      // W: sums of N inputs at positions 0 .. L - N.
      const T* cur = in;
      for (int64_t width = 1, lvl = 0; width < N; width *= 2, ++lvl) {
        T* next = lv[lvl & 1];
        NextLevel(cur, next, L - 2 * width + 1, width);
        cur = next;
      }
      const T* W = cur;
      auto sum = hn::Zero(d);
      for (int64_t v = 0; j + N <= S; j += N, ++v) {
        if (v % every == 0) {
          auto a = hn::Zero(d), b = hn::Zero(d);
          if (2 * rest > N && j + (full + 2) * N <= L + 1) {
            // Fewer loads: one more sum of N, less the N - rest inputs past the window (they
            // and that sum lie within the block's inputs here).
            for (int m = 0; m <= full; ++m) a = hn::Add(a, hn::LoadU(d, W + j + int64_t(m) * N));
            for (int t = rest; t < N; ++t) b = hn::Add(b, hn::LoadU(d, in + j + full * N + t));
            sum = hn::Sub(a, b);
          } else {
            for (int m = 0; m < full; ++m) a = hn::Add(a, hn::LoadU(d, W + j + int64_t(m) * N));
            for (int t = 0; t < rest; ++t) b = hn::Add(b, hn::LoadU(d, in + j + full * N + t));
            sum = hn::Add(a, b);
          }
        } else {
          sum = hn::Sub(hn::Add(sum, hn::LoadU(d, W + j - N + K)), hn::LoadU(d, W + j - N));
        }
        const auto out = Scaled<kS>(d, sum, s);
        if (kProbe) p = Probe(p, out);
        Put(d, out, o + j, stream);
      }
    }
    for (; j < S; ++j) o[j] = scalar(in, j);
  }
  return !kProbe || (ok && Finite(d, p));
}

// Running sums down the rows (y or z): acc = sum of the K rows and dst = sc(acc) (`restart`),
// or acc += add - sub and dst = sc(acc). Returns as CombineT.
template <bool kProbe, int kS, class T>
HWY_INLINE bool RunRowsT(const T* const* HWY_RESTRICT rows, int K, const T* HWY_RESTRICT add,
                         const T* HWY_RESTRICT sub, bool restart, T s, T* HWY_RESTRICT acc,
                         T* HWY_RESTRICT dst, int64_t n, bool stream) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  bool ok = true;
  auto p = hn::Zero(d);
  const auto scalar = [&](int64_t j) {
    T a;
    if (restart) {
      a = rows[0][j];
      for (int i = 1; i < K; ++i) a += rows[i][j];
    } else {
      a = (acc[j] + add[j]) - sub[j];
    }
    acc[j] = a;
    dst[j] = Scaled<kS>(a, s);
    if (kProbe) ok &= Finite(dst[j]);
  };
  int64_t j = 0;
  for (const int64_t head = HeadToAlign(dst, n, N, stream); j < head; ++j) scalar(j);
  if (restart) {
    for (; j + 2 * N <= n; j += 2 * N) {
      auto a0 = hn::LoadU(d, rows[0] + j), a1 = hn::LoadU(d, rows[0] + j + N);
      for (int i = 1; i < K; ++i) {
        a0 = hn::Add(a0, hn::LoadU(d, rows[i] + j));
        a1 = hn::Add(a1, hn::LoadU(d, rows[i] + j + N));
      }
      hn::StoreU(a0, d, acc + j);
      hn::StoreU(a1, d, acc + j + N);
      const auto o0 = Scaled<kS>(d, a0, s), o1 = Scaled<kS>(d, a1, s);
      if (kProbe) p = Probe(p, hn::Add(o0, o1));
      Put(d, o0, dst + j, stream);
      Put(d, o1, dst + j + N, stream);
    }
  } else {
    for (; j + N <= n; j += N) {
      const auto a =
          hn::Sub(hn::Add(hn::LoadU(d, acc + j), hn::LoadU(d, add + j)), hn::LoadU(d, sub + j));
      hn::StoreU(a, d, acc + j);
      const auto o = Scaled<kS>(d, a, s);
      if (kProbe) p = Probe(p, o);
      Put(d, o, dst + j, stream);
    }
  }
  for (; j < n; ++j) scalar(j);
  return !kProbe || (ok && Finite(d, p));
}

// Calls f(kProbe, kS) with the compile-time forms of `probe` and the scale's kind.
template <class T, class F>
HWY_INLINE bool Forms(bool probe, const Scale<T>& sc, F&& f) {
  using P = std::true_type;
  using Q = std::false_type;
  using None = std::integral_constant<int, Scale<T>::none>;
  using Mul = std::integral_constant<int, Scale<T>::mul>;
  using Div = std::integral_constant<int, Scale<T>::div>;
  switch (sc.kind) {
    case Scale<T>::mul: return probe ? f(P(), Mul()) : f(Q(), Mul());
    case Scale<T>::div: return probe ? f(P(), Div()) : f(Q(), Div());
    default: return probe ? f(P(), None()) : f(Q(), None());
  }
}

// The exported kernels: `probe` chooses the form that returns whether every output stored was
// finite (the final pass's stores); without it they return true.
#define HALO_SEP_FORM                        \
  constexpr bool kP = decltype(p)::value;    \
  constexpr int kK = decltype(k)::value;
#define HALO_SEP_KERNELS(T, S)                                                                   \
  bool CombineRows##S(const T* const* rows, int K, const T* w, T* const* dst, int64_t n,       \
                      bool stream, Scale<T> sc, bool probe) {                                  \
    return Forms(probe, sc, [&](auto p, auto k) {                                              \
      HALO_SEP_FORM                                                                            \
      return CombineRowsT<kP, kK, kRowGroup>(rows, K, w, dst, n, stream, sc.s);                \
    });                                                                                        \
  }                                                                                            \
  bool Combine##S(const T* const* rows, int K, const T* w, bool sym, const T* add, T* dst,     \
                  int64_t n, bool stream, Scale<T> sc, bool probe) {                           \
    return Forms(probe, sc, [&](auto p, auto k) {                                              \
      HALO_SEP_FORM                                                                            \
      return CombineT<kP, kK>(rows, K, w, sym, add, dst, n, stream, sc.s);                     \
    });                                                                                        \
  }                                                                                            \
  /* A box along a row: running sums of vectors (restart > 0), or doubling. */                 \
  bool BoxRow##S(const T* src, int64_t n, int K, Scale<T> sc, T* dst, T* tmp, bool stream,     \
                 int restart, bool probe) {                                                    \
    return Forms(probe, sc, [&](auto p, auto k) {                                              \
      HALO_SEP_FORM                                                                            \
      return restart ? BoxRunT<kP, kK>(src, n, K, sc.s, dst, tmp, stream, restart)             \
                     : BoxRowT<kP, kK>(src, n, K, sc.s, dst, tmp, stream);                     \
    });                                                                                        \
  }                                                                                            \
  bool RunRows##S(const T* const* rows, int K, const T* add, const T* sub, bool restart,       \
                  Scale<T> sc, T* acc, T* dst, int64_t n, bool stream, bool probe) {           \
    return Forms(probe, sc, [&](auto p, auto k) {                                              \
      HALO_SEP_FORM                                                                            \
      return RunRowsT<kP, kK>(rows, K, add, sub, restart, sc.s, acc, dst, n, stream);          \
    });                                                                                        \
  }
HALO_SEP_KERNELS(float, F32)
HALO_SEP_KERNELS(double, F64)
#undef HALO_SEP_KERNELS
#undef HALO_SEP_FORM

}  // namespace halo::cpu::sep::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // HALO_CPU_SEPARABLE_KERNELS_INL_H_
