/* strategy: cpu_separable — a rank-1 filter (an outer product of 1-D factors) as 1-D passes on
 * the CPU: OpenMP threads, Highway SIMD (dynamic dispatch, as `cpu`).
 *
 * The factors come from detail::separable_windows(): one centred window per canonical axis
 * (z, y, x), every mode, origin and op folded in. A pass of window w (K = 2R + 1 taps) is one
 * kernel, Combine: dst[j] = sum_i w[i] * rows[i][j], where rows[i] is the i-th input row of an
 * output row (the y and z passes) or the input row shifted by i (the x pass). Symmetric windows
 * (Gaussians, boxes, most derivatives) add the two inputs of a weight first: half the FMAs.
 *
 * x and y are fused: a unit (item, plane, strip of rows, chunk of columns) filters each input row
 * it needs along x into a ring of K_y rows held in L2, and each output row along y from the
 * ring, so the array is read once and written once. Rows outside the array are the rows the
 * y mode maps them to, or rows of cval * sum(w_x) in constant mode; columns outside come from a
 * short padded copy at the two ends of the row. The z pass runs after, in place on the output:
 * a unit is a chunk of columns of every plane of an item, marching along z with a ring of K_z
 * copied rows (the planes past the end that the mode maps to are copied before anything is
 * written). Filters along one axis are that pass alone, reading the input.
 *
 * A box (every window whole multiples of a step, the steps' product 1/d: uniform_filter, box:K,
 * folded or not) sums with the whole numbers in every pass, box factors by running sums of the
 * raw inputs, and the last pass divides by d once, so that a mean of a constant region is the
 * constant exactly (SciPy sums, then divides once). The last pass's kernels probe the outputs
 * they store and note a NaN or an infinity (NonFinite::noted).
 *
 * strategy: cpu_lowrank — a filter of low rank as a sum of T separable terms
 * (detail::low_rank_terms: the axis lines of a Laplacian or sharpen, else an SVD in float64), on
 * the same kernels and units. It is a sibling strategy in this file rather than a mode of
 * cpu_separable because it shares the Worker, the passes and the blocking (only the x-y unit
 * differs), while a name of its own keeps `auto`'s choice, --strategy, the tests' sweep and the
 * accuracy form (Summation::low_rank) apart from the rank-1 passes, whose behaviour is unchanged.
 * Fused: a unit reads each input row once per term that needs it, filters it along x into that
 * term's ring (terms without an x window read the input rows directly), and each output row is
 * the sum of the terms' y passes (two partial-sum rows in cache), written once: no DRAM pass per
 * term. In 3-D the axis lines' z term runs after, as z's pass of the input added to the output.
 */
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

#ifndef HALO_CPU_SEPARABLE_COMMON
#define HALO_CPU_SEPARABLE_COMMON
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
}  // namespace halo::cpu::sep
#endif  // HALO_CPU_SEPARABLE_COMMON

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/separable.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
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
// Division: a times the rounded reciprocal, then one correction by the residual a - q s (exact
// by FMA), which makes q the exact quotient wherever there is one (a box's sum of a constant
// region) and the rounded one in all but rare near-ties; cheaper than a division, whose unit
// takes 5-9 cycles per vector (docs/notes/nonfinite-cpu.md).
template <int kS, class D, class T>
HWY_INLINE hn::Vec<D> Scaled(D d, hn::Vec<D> a, T s) {
  if constexpr (kS == Scale<T>::mul) return hn::Mul(a, hn::Set(d, s));
  if constexpr (kS == Scale<T>::div) {
#if HWY_NATIVE_FMA
    const auto q = hn::Mul(a, hn::Set(d, T(1) / s));
    return hn::MulAdd(hn::NegMulAdd(q, hn::Set(d, s), a), hn::Set(d, T(1) / s), q);
#else
    return hn::Div(a, hn::Set(d, s));  // the residual needs a fused multiply-add
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

#if HWY_ONCE
#include <omp.h>

#include <atomic>
#include <memory>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/nonfinite.hpp"
#include "cpu/fft.hpp"
#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"

namespace halo::cpu {
std::unique_ptr<Strategy> make_separable_strategy();
std::unique_ptr<Strategy> make_lowrank_strategy();

namespace sep {
HWY_EXPORT(CombineF32);
HWY_EXPORT(CombineF64);
HWY_EXPORT(CombineRowsF32);
HWY_EXPORT(CombineRowsF64);
HWY_EXPORT(BoxRowF32);
HWY_EXPORT(BoxRowF64);
HWY_EXPORT(RunRowsF32);
HWY_EXPORT(RunRowsF64);

// The kernels of one dtype, as the dispatcher chose them for this machine.
template <class T>
struct Kernels;
#define HALO_SEP_DISPATCH(T, S)                                                                  \
  template <>                                                                                  \
  struct Kernels<T> {                                                                          \
    static bool Combine(const T* const* rows, int K, const T* w, bool sym, const T* add,       \
                        T* dst, std::int64_t n, bool stream, Scale<T> sc, bool probe) {        \
      return HWY_DYNAMIC_DISPATCH(Combine##S)(rows, K, w, sym, add, dst, n, stream, sc, probe);\
    }                                                                                          \
    static bool CombineRows(const T* const* rows, int K, const T* w, T* const* dst,            \
                            std::int64_t n, bool stream, Scale<T> sc, bool probe) {            \
      return HWY_DYNAMIC_DISPATCH(CombineRows##S)(rows, K, w, dst, n, stream, sc, probe);      \
    }                                                                                          \
    static bool BoxRow(const T* src, std::int64_t n, int K, Scale<T> sc, T* dst, T* tmp,       \
                       bool stream, int restart, bool probe) {                                 \
      return HWY_DYNAMIC_DISPATCH(BoxRow##S)(src, n, K, sc, dst, tmp, stream, restart, probe); \
    }                                                                                          \
    static bool RunRows(const T* const* rows, int K, const T* add, const T* sub, bool restart, \
                        Scale<T> sc, T* acc, T* dst, std::int64_t n, bool stream, bool probe) {\
      return HWY_DYNAMIC_DISPATCH(RunRows##S)(rows, K, add, sub, restart, sc, acc, dst, n,     \
                                              stream, probe);                                  \
    }                                                                                          \
  };
HALO_SEP_DISPATCH(float, F32)
HALO_SEP_DISPATCH(double, F64)
#undef HALO_SEP_DISPATCH

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

using std::int64_t;

// L2 budget of one thread's ring (and padded rows): the rows a unit keeps live.
constexpr int64_t kRingBytes = 256 << 10;
// Below this many multiply-adds a problem runs on the calling thread (as `cpu`).
constexpr double kSerialWork = double(1 << 18);
// Outputs of at least this many bytes are written with non-temporal stores (as `cpu`): with the
// input they exceed the caches, and the read-for-ownership would cost a third of the traffic.
constexpr double kStreamBytes = double(16 << 20);
// Box factors of at least this many taps take the box forms (doubling along x, running sums
// down y and z); shorter ones the paired direct sum, as fast there (docs/notes/tuning.md).
constexpr int kMinBoxTapsX = 12;
constexpr int kMinBoxTapsRows = 6;

// One axis's pass: its centred window (K = 2R + 1 taps, w[R] weighs the output's own
// coordinate), in T, whether it is symmetric, and whether it runs at all (a window {1} is none).
// A box factor (one run of equal weights c at window indices [blo, blo + bk)) may take the box
// forms instead.
template <class T>
struct Pass {
  std::vector<T> w;
  int R = 0;
  bool sym = false;
  bool on = false;
  bool box = false;
  int blo = 0, bk = 0;
  Scale<T> scale;   // at the store: a box form's weight, or the last pass's divisor (Job)
  int restart = 0;  // running sums: outputs between restarts (detail::running_restart)
  Boundary mode = Boundary::constant;
  int K() const { return 2 * R + 1; }
};

// Everything a unit needs: the shape, the three passes (z, y, x), cval as each stage sees it,
// and the blocking.
template <class T>
struct Job {
  const T* in = nullptr;
  T* out = nullptr;
  int64_t batch = 1, nz = 1, ny = 1, nx = 1;
  Pass<T> z, y, x;
  T cval = 0;           // the input's ghost value (constant mode)
  T cval_x = 0;         // a ghost row after the x pass: cval * sum(w_x)
  T cval_xy = 0;        // a ghost plane after the x and y passes: cval * sum(w_x) * sum(w_y)
  bool stream = false;  // non-temporal stores into the output
  // Where given, a stage that stores a NaN or an infinity into the final output notes it there
  // (NonFinite::noted).
  const Buffers* buffers = nullptr;
  // x-y stage: units (item, plane, strip of `strip` rows, chunk of `cw` columns).
  int64_t cw = 1, strip = 1, nchunks = 1, nstrips = 1, xy_units = 0;
  // z stage: units (item, chunk of `zcw` elements of a plane).
  int64_t zcw = 1, zchunks = 1, z_units = 0;
  int threads = 1;
  // A sum of separable terms (cpu_lowrank): the terms of the x-y stage, each its own y and x
  // pass and the value of a ghost row after its x pass (cval * sum(w_x)); with `zadd`, the z
  // stage then adds z's pass of the input (the terms along z alone) to the output. x and y
  // above are then off.
  struct Term {
    Pass<T> y, x;
    T cval_x = 0;
  };
  std::vector<Term> terms;
  bool zadd = false;
  bool xy() const { return x.on || y.on; }
  bool lr() const { return !terms.empty(); }
  int max_k() const {
    int k = std::max({x.K(), y.K(), z.K()});
    for (const Term& t : terms) k = std::max({k, t.x.K(), t.y.K()});
    return k;
  }
  int max_rx() const {
    int r = x.R;
    for (const Term& t : terms) r = std::max(r, t.x.R);
    return r;
  }
  // Rows a y or z pass keeps live: K + 1 for running sums (they subtract the row before the
  // window), else the K + kRowGroup - 1 rows of a group of outputs (CombineRows).
  static int slots(const Pass<T>& p) { return p.box ? p.K() + 1 : p.K() + kRowGroup - 1; }
  // Row pointers of one sum, and as many for the ring's rows by slot.
  int64_t row_ptrs() const { return int64_t(max_k()) + kRowGroup + 2; }
  // Ring rows of the x-y stage: y's slots per pass along x that y reads (K_y + 1 per term).
  int64_t ring_rows() const {
    if (!lr()) return y.on && x.on ? int64_t(slots(y)) : 0;
    int64_t rows = 0;
    for (const Term& t : terms) rows += t.x.on ? int64_t(t.y.K() + 1) : 0;
    return rows;
  }
  // Row pointers of the terms' rings (K_y + 1 each, x-filtered or input rows).
  int64_t term_slots() const {
    int64_t n = 0;
    for (const Term& t : terms) n += t.y.K() + 1;
    return n;
  }
  // Elements between ring rows of `width`: rounded up to a cache line, plus one, so that the
  // rows of a ring never share L1 sets (a power-of-two pitch, 4096 columns say, put every row
  // of the ring in the same sets: 2x slower measured).
  int64_t pitch(int64_t width) const {
    const int64_t line = 64 / int64_t(sizeof(T));
    return (width + line - 1) / line * line + line;
  }
};

// One thread's buffers, sized by the job: padded row ends, the ring (K + 1 rows: running sums
// subtract the row before the window), a row of cval, the running sums, the x box's levels, and
// row pointers.
template <class T>
struct Scratch {
  int64_t pad_elems = 0, ring_elems = 0, cval_elems = 0, acc_elems = 0, box_elems = 0, ptrs = 0;
  static Scratch sizes(const Job<T>& j) {
    Scratch s;
    s.pad_elems = 2 * (2 * int64_t(j.max_rx()) + 16) + 64;
    const int64_t xy_ring = j.ring_rows() * j.pitch(j.cw);
    // z: K_z + 1 ring rows and R_z rows for the planes past the end (in place after x-y).
    const int64_t z_ring =
        j.z.on && j.xy() ? int64_t(Job<T>::slots(j.z) + j.z.R) * j.pitch(j.zcw) : 0;
    s.ring_elems = std::max(xy_ring, z_ring);
    // Rows of cval: one, and one per term (its ghost rows' value).
    s.cval_row = std::max(j.cw, j.zcw);
    s.cval_elems = s.cval_row * int64_t(1 + j.terms.size());
    s.acc_elems = j.y.box || j.z.box ? std::max(j.cw, j.zcw) : 0;
    // A sum of terms: two rows of partial sums (one read, one written), or z's copy of the
    // output row it adds to.
    if (j.lr()) s.acc_elems = std::max({s.acc_elems, 2 * j.pitch(j.cw), j.zadd ? j.zcw : 0});
    s.box_elems = j.x.box ? 3 * (kBoxBlock + int64_t(j.x.bk)) : 0;
    s.ptrs = 2 * j.row_ptrs() + j.term_slots();
    return s;
  }
  int64_t cval_row = 0;
  int64_t elems() const { return pad_elems + ring_elems + cval_elems + acc_elems + box_elems; }
  int64_t bytes() const { return elems() * int64_t(sizeof(T)) + ptrs * int64_t(sizeof(void*)); }
};

template <class T>
class Worker {
 public:
  Worker(const Job<T>& j, T* mem, const T** ptrs) : j_(j), ptrs_(ptrs), slot_(ptrs + j.row_ptrs()) {
    const Scratch<T> s = Scratch<T>::sizes(j);
    pad_ = mem;
    ring_ = pad_ + s.pad_elems;
    cval_row_ = ring_ + s.ring_elems;
    acc_ = cval_row_ + s.cval_elems;
    box_ = acc_ + s.acc_elems;
    cval_elems_ = s.cval_row;
    // The terms' rings, row pointers and rows of cval, one after another.
    const T** slots = ptrs + 2 * j.row_ptrs();
    T* ring = ring_;
    for (std::size_t t = 0; t < j.terms.size(); ++t) {
      const typename Job<T>::Term& q = j.terms[t];
      T* cv = cval_row_ + int64_t(t + 1) * s.cval_row;
      std::fill(cv, cv + s.cval_row, q.x.on ? q.cval_x : j.cval);
      lr_.push_back({slots, ring, cv, 0});
      slots += q.y.K() + 1;
      if (q.x.on) ring += int64_t(q.y.K() + 1) * j.pitch(j.cw);
    }
  }

  // Output columns [x0, x0 + n) of one row along x (pass x): src is the input row, dst the output.
  // `final`: dst is the final output (its non-finite values are noted).
  void x_row(const Pass<T>& x, const T* src, int64_t x0, int64_t n, T* dst, bool stream,
             bool final = false) {
    const int R = x.R;
    const int64_t nx = j_.nx;
    const bool probe = final && j_.buffers;
    // Outputs whose K inputs are all inside: [lo, hi).
    const int64_t lo = std::clamp<int64_t>(R, x0, x0 + n);
    const int64_t hi = std::clamp<int64_t>(nx - R, lo, x0 + n);
    bool ok = true;
    if (hi > lo) ok = x_from(x, src + lo - R, hi - lo, dst + (lo - x0), stream, probe);
    ok &= edge_x(x, src, x0, lo, dst, probe);
    ok &= edge_x(x, src, hi, x0 + n, dst + (hi - x0), probe);
    if (stream) hwy::FlushStream();
    note(ok);
  }

  // x-y stage, one unit.
  void xy_unit(int64_t u) {
    const int64_t c = u % j_.nchunks, s = (u / j_.nchunks) % j_.nstrips;
    const int64_t plane = u / (j_.nchunks * j_.nstrips);  // item * nz + z
    const int64_t x0 = c * j_.cw, n = std::min(j_.cw, j_.nx - x0);
    const int64_t y0 = s * j_.strip, y1 = std::min(j_.ny, y0 + j_.strip);
    const int64_t P = j_.ny * j_.nx;
    const T* in = j_.in + plane * P;
    T* out = j_.out + plane * P;
    // Where a z stage reads this stage's output back, plain stores leave part of it in the
    // caches for it (3-D, 256^3: 26-37 ms against 46 with non-temporal ones; docs/notes/tuning.md).
    stream_ = j_.stream && !j_.z.on;
    if (!j_.y.on) {
      for (int64_t y = y0; y < y1; ++y)
        x_row(j_.x, in + y * j_.nx, x0, n, out + y * j_.nx + x0, stream_, !j_.z.on);
      return;
    }
    const int Ry = j_.y.R, slots = Job<T>::slots(j_.y);
    since_ = -1;
    int64_t next = y0;  // the next output row
    for (int64_t g = y0 - Ry; g < y1 + Ry; ++g) {
      const int64_t k = (g - (y0 - Ry)) % slots;
      const int64_t m = detail::map_index(g, j_.ny, j_.y.mode);
      if (!j_.x.on) {
        slot_[k] = m < 0 ? cval_row(j_.cval) : in + m * j_.nx + x0;
      } else if (m < 0) {
        slot_[k] = cval_row(j_.cval_x);
      } else {
        T* r = ring_ + k * j_.pitch(j_.cw);
        x_row(j_.x, in + m * j_.nx, x0, n, r, false);
        slot_[k] = r;
      }
      // Outputs [next, g - Ry] have all their rows; ring index of input row i: i - (y0 - Ry).
      next = rows_out(
          j_.y, next, std::min(g - Ry + 1, y1), g == y1 + Ry - 1, y0 - Ry, slots,
          [&](int64_t o) { return out + o * j_.nx + x0; }, n, !j_.z.on);
    }
  }

  // x-y stage of a sum of terms, one unit: each term keeps its own ring of K_y + 1 rows (the
  // input rows filtered along its x window, or the input rows themselves where it has none),
  // filled as its y window reaches them; each output row is the sum over the terms of their y
  // passes, the partial sums in two rows in L1/L2, the last term writing the output once.
  void lr_xy_unit(int64_t u) {
    const int64_t c = u % j_.nchunks, s = (u / j_.nchunks) % j_.nstrips;
    const int64_t plane = u / (j_.nchunks * j_.nstrips);
    const int64_t x0 = c * j_.cw, n = std::min(j_.cw, j_.nx - x0);
    const int64_t y0 = s * j_.strip, y1 = std::min(j_.ny, y0 + j_.strip);
    const int64_t P = j_.ny * j_.nx;
    const T* in = j_.in + plane * P;
    T* out = j_.out + plane * P;
    const std::size_t terms = j_.terms.size();
    const int64_t pitch = j_.pitch(j_.cw);
    for (std::size_t t = 0; t < terms; ++t) lr_[t].next = y0 - j_.terms[t].y.R;
    T* part[2] = {acc_, acc_ + pitch};
    for (int64_t o = y0; o < y1; ++o) {
      T* dst = out + o * j_.nx + x0;
      for (std::size_t t = 0; t < terms; ++t) {
        const typename Job<T>::Term& q = j_.terms[t];
        TermState& st = lr_[t];
        const int Ry = q.y.R, slots = q.y.K() + 1;
        for (; st.next <= o + Ry; ++st.next) {
          const int64_t g = st.next, k = (g - (y0 - Ry)) % slots;
          const int64_t m = detail::map_index(g, j_.ny, q.y.mode);
          if (m < 0) {
            st.slot[k] = st.cval;
          } else if (!q.x.on) {
            st.slot[k] = in + m * j_.nx + x0;
          } else {
            T* r = st.ring + k * pitch;
            x_row(q.x, in + m * j_.nx, x0, n, r, false);
            st.slot[k] = r;
          }
        }
        for (int i = 0; i < q.y.K(); ++i) ptrs_[i] = st.slot[(o - y0 + i) % slots];
        const bool last = t + 1 == terms;
        note(Combine(ptrs_, q.y.K(), q.y.w.data(), q.y.sym, last ? dst : part[t % 2], n,
                     last && j_.stream, t == 0 ? nullptr : part[(t + 1) % 2], q.y.scale,
                     last && !j_.zadd && j_.buffers));
      }
      if (j_.stream) hwy::FlushStream();
    }
  }

  // z stage, one unit: columns [c0, c0 + n) of every plane of one item. After the x-y stage it
  // runs in place on the output through copied rows; alone it reads the input.
  void z_unit(int64_t u) {
    const int64_t item = u / j_.zchunks, c0 = (u % j_.zchunks) * j_.zcw;
    const int64_t P = j_.ny * j_.nx, n = std::min(j_.zcw, P - c0);
    const int Rz = j_.z.R, slots = Job<T>::slots(j_.z);
    const bool in_place = j_.xy();
    const T* src = (in_place ? j_.out : j_.in) + item * j_.nz * P + c0;
    T* dst = j_.out + item * j_.nz * P + c0;
    const T cv = in_place ? j_.cval_xy : j_.cval;
    // The rows past the last plane, copied before any plane is overwritten.
    const int64_t zp = j_.pitch(j_.zcw);
    T* tail = ring_ + int64_t(slots) * zp;
    if (in_place) {
      for (int t = 0; t < Rz; ++t) {
        const int64_t m = detail::map_index(j_.nz + t, j_.nz, j_.z.mode);
        if (m >= 0) std::memcpy(tail + t * zp, src + m * P, size_t(n) * sizeof(T));
      }
    }
    stream_ = j_.stream;
    since_ = -1;
    int64_t next = 0;  // the next output plane
    for (int64_t g = -Rz; g < j_.nz + Rz; ++g) {
      const int64_t k = (g + Rz) % slots;
      const int64_t m = detail::map_index(g, j_.nz, j_.z.mode);
      if (m < 0) {
        slot_[k] = cval_row(cv);
      } else if (!in_place) {
        slot_[k] = src + m * P;
      } else if (g >= j_.nz) {
        slot_[k] = tail + (g - j_.nz) * zp;
      } else {
        T* r = ring_ + k * zp;
        std::memcpy(r, src + m * P, size_t(n) * sizeof(T));
        slot_[k] = r;
      }
      next = rows_out(
          j_.z, next, std::min(g - Rz + 1, j_.nz), g == j_.nz + Rz - 1, -Rz, slots,
          [&](int64_t o) { return dst + o * P; }, n, true, j_.zadd);
    }
  }

 private:
  // Writes the outputs [next, ready) of a y or z pass from the ring (input row i in slot
  // (i - base) % slots): in groups of kRowGroup, one by one at the `last` input row, else
  // leaving the rest for more rows; one by one at once for box factors (their running sums go
  // row by row) and where each output adds what the x-y stage wrote there (`adds`). Returns the
  // next output not written; dst(o) is output row o. `final`: the rows are the final output.
  template <class Dst>
  int64_t rows_out(const Pass<T>& q, int64_t next, int64_t ready, bool last, int64_t base,
                   int slots, Dst dst, int64_t n, bool final, bool adds = false) {
    const int K = q.K();
    const bool single = q.box || adds;
    const bool probe = final && j_.buffers;
    while (next < ready) {
      const int64_t first = next - q.R - base;  // slot index of the output's first row
      if (!single && ready - next >= kRowGroup) {
        for (int i = 0; i < K + kRowGroup - 1; ++i) ptrs_[i] = slot_[(first + i) % slots];
        T* rows[kRowGroup];
        for (int g = 0; g < kRowGroup; ++g) rows[g] = dst(next + g);
        note(CombineRows(ptrs_, K, q.w.data(), rows, n, stream_, q.scale, probe));
        if (stream_) hwy::FlushStream();
        next += kRowGroup;
      } else if (single || last) {
        for (int i = 0; i < K; ++i) ptrs_[i] = slot_[(first + i) % slots];
        T* const row = dst(next);
        if (adds) std::memcpy(acc_, row, size_t(n) * sizeof(T));  // what the x-y stage wrote
        note(column(q, row, n, adds ? acc_ : nullptr, probe));
        ++next;
      } else {
        break;
      }
    }
    return next;
  }
  // Notes a non-finite output where a probed kernel found one.
  void note(bool finite) const {
    if (!finite) detail::note_nonfinite(*j_.buffers);
  }
  // n outputs along x from src, whose first element is the first output's first input. Returns
  // whether they are finite where `probe`.
  bool x_from(const Pass<T>& x, const T* src, int64_t n, T* dst, bool stream, bool probe) {
    if (x.box) return BoxRow(src + x.blo, n, x.bk, x.scale, dst, box_, stream, x.restart, probe);
    for (int i = 0; i < x.K(); ++i) ptrs_[i] = src + i;
    const T* none = nullptr;
    return Combine(ptrs_, x.K(), x.w.data(), x.sym, dst, n, stream, none, x.scale, probe);
  }
  // Outputs [a, b) of a row along x through a padded copy of their inputs (the row's ends).
  bool edge_x(const Pass<T>& xp, const T* src, int64_t a, int64_t b, T* dst, bool probe) {
    const int R = xp.R;
    const int64_t chunk = 16;  // outputs per padded copy: the copy stays within pad_
    bool ok = true;
    for (int64_t x = a; x < b; x += chunk) {
      const int64_t n = std::min(chunk, b - x);
      for (int64_t t = 0; t < n + 2 * R; ++t) {
        const int64_t m = detail::map_index(x - R + t, j_.nx, xp.mode);
        pad_[t] = m < 0 ? j_.cval : src[m];
      }
      ok &= x_from(xp, pad_, n, dst + (x - a), false, probe);
    }
    return ok;
  }
  // One output row of a y or z pass from the K rows in ptrs_ (in order). Box factors: running
  // sums, restarted every `restart` outputs and at the start of a unit (since_ = -1).
  // `add` (not with box factors): a row added to the sum. Returns whether the outputs are finite
  // where `probe`.
  bool column(const Pass<T>& q, T* dst, int64_t n, const T* add, bool probe) {
    bool ok;
    if (!q.box) {
      ok = Combine(ptrs_, q.K(), q.w.data(), q.sym, dst, n, stream_, add, q.scale, probe);
    } else {
      const T* const* rows = ptrs_ + q.blo;
      const bool restart = since_ < 0 || since_ >= q.restart;
      ok = RunRows(rows, q.bk, rows[q.bk - 1], leaving_, restart, q.scale, acc_, dst, n, stream_,
                   probe);
      since_ = restart ? 1 : since_ + 1;
      leaving_ = rows[0];  // the next output's window no longer holds it
    }
    if (stream_) hwy::FlushStream();
    return ok;
  }
  // A row of cval_elems values v (refilled when v changes).
  const T* cval_row(T v) {
    if (!have_cval_row_ || !(v == cval_row_value_)) {
      std::fill(cval_row_, cval_row_ + cval_elems_, v);
      cval_row_value_ = v;
      have_cval_row_ = true;
    }
    return cval_row_;
  }

  const Job<T>& j_;
  const T** ptrs_;  // the K row pointers of one Combine
  const T** slot_;  // after them: the ring's rows, by input row modulo K + 1
  T* pad_;
  T* ring_;
  T* cval_row_;
  T* acc_;  // running sums of a box's rows
  T* box_;  // the x box's levels
  int64_t cval_elems_;
  T cval_row_value_ = 0;
  bool have_cval_row_ = false;
  bool stream_ = false;         // this stage's stores are non-temporal (j_.stream, last stage)
  int64_t since_ = -1;          // outputs since the running sums restarted (-1: restart next)
  const T* leaving_ = nullptr;  // the row the next running-sum step subtracts
  // A sum of terms: each term's ring slots, ring rows, row of ghost values, next row to fill.
  struct TermState {
    const T** slot;
    T* ring;
    const T* cval;
    int64_t next;
  };
  std::vector<TermState> lr_;
};

template <class T>
Pass<T> make_pass(const std::vector<double>& w, int R, Boundary mode, bool rows, bool direct,
                  bool no_box = false) {
  Pass<T> p;
  p.R = R;
  p.mode = mode;
  p.w.assign(w.begin(), w.end());
  p.on = !(R == 0 && w[0] == 1.0);
  p.sym = true;
  for (int i = 0; i < R; ++i) p.sym = p.sym && p.w[i] == p.w[2 * R - i];
  // Under direct sums only the x form by doubling (a tree sum of each output's taps) may run;
  // running sums are not a plain sum of the taps. Otherwise x takes running sums of vectors.
  const auto box = detail::box_run(w);
  if (p.on && box && box->k >= (rows ? kMinBoxTapsRows : kMinBoxTapsX) && !(rows && direct) &&
      !no_box) {
    p.box = true;
    p.blo = box->lo;
    p.bk = box->k;
    if (box->c != 1.0) p.scale = {Scale<T>::mul, T(box->c)};
    p.restart = rows || !direct ? detail::running_restart(box->k) : 0;
  }
  return p;
}

double sum(const std::vector<double>& w) {
  double s = 0;
  for (double v : w) s += v;
  return s;
}

template <class T>
void block(Job<T>& j, const Problem& p, double taps);

// A job's arrays and extents, which every job sets the same way.
template <class T>
Job<T> job_of(const Problem& p, const void* in, void* out) {
  Job<T> j;
  j.in = static_cast<const T*>(in);
  j.out = static_cast<T*>(out);
  const Dims3 n = p.dims3();
  j.batch = p.batch();
  j.nz = n.z, j.ny = n.y, j.nx = n.x;
  return j;
}

template <class T>
Job<T> make_job(const Problem& p, const detail::AxisWindows& win, const void* in, void* out) {
  Job<T> j = job_of<T>(p, in, out);
  const int rank = p.rank();
  const Boundary mz = rank == 3 ? p.mode(0) : Boundary::constant;
  const Boundary my = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  const bool direct = p.direct_sums();
  // A box (every window whole multiples of a step, the steps' product 1/d): every pass sums with
  // the whole numbers, and the last one divides by d (or multiplies by 1/d, exact for d a power
  // of two), so that a mean of a constant region is the constant exactly, as SciPy's (it sums,
  // then divides once), boxes folded by the modes (their windows' ratios such as 1/3) too.
  std::array<std::vector<double>, 3> w = win.w;
  double spread = 1, step = 1;  // the windows' largest over smallest magnitudes, multiplied
  for (const auto& v : w) {
    double least = 0, most = 0;
    for (double x : v)
      if (x != 0) {
        least = least == 0 ? std::fabs(x) : std::min(least, std::fabs(x));
        most = std::max(most, std::fabs(x));
      }
    if (least > 0) spread *= most / least;
  }
  for (auto& v : w) {
    if (v.size() == 1 && v[0] == 1.0) continue;  // no pass
    const auto m = detail::multiples(v, detail::fold_slack(spread));
    if (!m) {
      step = 0;
      break;
    }
    v = m->m;
    step *= m->step;
  }
  const double divisor = detail::whole_reciprocal(
      step, sizeof(T) == 4 ? detail::kWholeReciprocalTolF32 : detail::kWholeReciprocalTol);
  if (divisor == 0) w = win.w;
  j.z = make_pass<T>(w[0], win.radius[0], mz, true, direct);
  j.y = make_pass<T>(w[1], win.radius[1], my, true, direct);
  j.x = make_pass<T>(w[2], win.radius[2], p.mode(rank - 1), false, direct);
  if (p.footprint() == Footprint::every) {
    // SciPy's 1-D rule multiplies every weight, zeros too (0 times an infinity is NaN): a box
    // form sums only its run, so a zero weight of the filter beside the run takes the plain
    // sum instead (the window's zeros beyond the filter's extent are no weights of it).
    const Dims3 k = p.filter_dims3(), a = p.anchor3();
    const std::int64_t ext[3] = {k.z, k.y, k.x}, anc[3] = {a.z, a.y, a.x};
    Pass<T>* passes[3] = {&j.z, &j.y, &j.x};
    for (int i = 0; i < 3; ++i) {
      Pass<T>& q = *passes[i];
      const std::int64_t first = win.radius[std::size_t(i)] - anc[i];
      if (q.box && (q.blo > first || q.blo + q.bk < first + ext[i])) {
        q.box = false;
        q.scale = {};  // the weights w hold the box's weight
      }
    }
  }
  if (divisor > 0) {
    Pass<T>& last = j.z.on ? j.z : j.y.on ? j.y : j.x;
    if (last.scale.kind != Scale<T>::none) last.box = false;  // whole weights other than 1
    const bool power = std::exp2(std::round(std::log2(divisor))) == divisor;
    last.scale = {power ? Scale<T>::mul : Scale<T>::div, T(power ? 1 / divisor : divisor)};
    if (divisor == 1) last.scale = {};
  }
  j.cval = T(p.cval());
  j.cval_x = T(p.cval() * sum(w[2]));
  j.cval_xy = T(p.cval() * sum(w[2]) * sum(w[1]));
  block(j, p, double(win.taps));
  return j;
}

// The blocking of both stages and the team, for a job whose passes (or terms) are set; `taps`:
// the multiply-adds per output.
template <class T>
void block(Job<T>& j, const Problem& p, double taps) {
  j.stream = double(p.elements()) * sizeof(T) >= kStreamBytes;

  // x-y stage: chunks of columns whose ring of K_y rows fits kRingBytes (whole rows where they
  // fit), strips of rows long enough that the 2 R_y rows filtered twice at strip ends stay a
  // small part, short enough for ~8 units per thread.
  const double work = double(p.elements()) * taps;
  j.threads = work < kSerialWork ? 1 : omp_get_max_threads();
  const int64_t lanes = 64 / int64_t(sizeof(T));
  int Ry = j.y.R;  // the largest y radius
  for (const auto& t : j.terms) Ry = std::max(Ry, t.y.R);
  const bool y_on = j.lr() ? Ry > 0 : j.y.on;
  if (j.ring_rows() > 0) {
    const int64_t fit = kRingBytes / (j.ring_rows() * int64_t(sizeof(T)));
    j.cw = std::max<int64_t>(4 * lanes, fit / lanes * lanes);
  } else {
    j.cw = 16384;
  }
  j.cw = std::min(j.cw, j.nx);
  j.nchunks = (j.nx + j.cw - 1) / j.cw;
  // Chunks of equal width (a multiple of a cache line), not full ones and a sliver.
  if (j.nchunks > 1) {
    j.cw = std::min(j.cw, ((j.nx + j.nchunks - 1) / j.nchunks + lanes - 1) / lanes * lanes);
    j.nchunks = (j.nx + j.cw - 1) / j.cw;
  }
  const int64_t planes = j.batch * j.nz;
  int64_t strip = y_on ? std::max<int64_t>(64, 8 * int64_t(Ry)) : 16;
  const int64_t want = 8 * int64_t(j.threads);
  while (strip > std::max<int64_t>(16, 2 * int64_t(Ry)) &&
         planes * j.nchunks * ((j.ny + strip - 1) / strip) < want)
    strip /= 2;
  j.strip = std::min(strip, j.ny);
  j.nstrips = (j.ny + j.strip - 1) / j.strip;
  j.xy_units = j.xy() || j.lr() ? planes * j.nchunks * j.nstrips : 0;

  // z stage: chunks of a plane whose ring (K_z + 1 rows and R_z tail rows) fits kRingBytes.
  const int64_t P = j.ny * j.nx;
  if (j.z.on) {
    const int64_t fit = kRingBytes / (int64_t(Job<T>::slots(j.z) + j.z.R) * int64_t(sizeof(T)));
    j.zcw = std::max<int64_t>(4 * lanes, fit / lanes * lanes);
    j.zcw = std::min(j.zcw, P);
    while (j.zcw > 4 * lanes && j.batch * ((P + j.zcw - 1) / j.zcw) < want)
      j.zcw = std::max<int64_t>(4 * lanes, j.zcw / 2 / lanes * lanes);
    j.zcw = std::min(j.zcw, P);
    j.zchunks = (P + j.zcw - 1) / j.zcw;
    j.z_units = j.batch * j.zchunks;
  }
}

// Runs units [0, count) of one stage over the team; `f(unit, worker)`. Progress: `before` +
// `share` * the fraction done, from the calling thread.
template <class T, class F>
void run_stage(const Job<T>& j, int64_t count, T* mem, int64_t stride, const T** ptrs,
               int64_t ptr_stride, const std::function<void(double)>& progress, double before,
               double share, F f) {
  if (count == 0) return;
  const int threads = int(std::min<int64_t>(j.threads, count));
  if (threads <= 1) {
    Worker<T> w(j, mem, ptrs);
    for (int64_t u = 0; u < count; ++u) {
      f(w, u);
      if (progress) progress(before + share * double(u + 1) / double(count));
    }
    return;
  }
  std::atomic<int64_t> done{0};
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Worker<T> w(j, mem + t * stride, ptrs + t * ptr_stride);
#pragma omp for schedule(dynamic, 1)
    for (int64_t u = 0; u < count; ++u) {
      f(w, u);
      const int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (progress && t == 0) progress(before + share * double(d) / double(count));
    }
  }
}

// Runs job j of p: the x-y stage, then the z stage. `who` names the strategy in errors.
template <class T>
void run_job(const Job<T>& j, const Problem& p, const char* who) {
  const Scratch<T> s = Scratch<T>::sizes(j);
  const int64_t line = 64 / int64_t(sizeof(T));
  const int64_t stride = (s.elems() + line - 1) / line * line;
  const int threads = std::max(1, j.threads);
  auto mem = hwy::AllocateAligned<T>(size_t(stride * threads));
  if (!mem)
    throw Error(std::string(who) + ": cannot allocate " +
                std::to_string(stride * threads * sizeof(T)) + " bytes of row buffers");
  std::vector<const T*> ptrs(size_t(s.ptrs * threads));
  const auto& progress = p.progress();
  const double xy_share = j.z.on && j.xy_units > 0 ? 0.5 : 1.0;
  const bool lr = j.lr();
  run_stage(j, j.xy_units, mem.get(), stride, ptrs.data(), s.ptrs, progress, 0.0, xy_share,
            [lr](Worker<T>& w, int64_t u) {
              if (lr)
                w.lr_xy_unit(u);
              else
                w.xy_unit(u);
            });
  run_stage(j, j.z_units, mem.get(), stride, ptrs.data(), s.ptrs, progress, 1.0 - xy_share,
            xy_share < 1 ? 0.5 : 1.0, [](Worker<T>& w, int64_t u) { w.z_unit(u); });
  if (progress) progress(1.0);
}

template <class T>
void run_typed(const Problem& p, const Buffers& b) {
  const auto win = detail::separable_windows(p);
  if (!win) throw Error("cpu_separable: the filter is not rank 1");
  Job<T> j = make_job<T>(p, *win, b.input, b.output);
  if (b.nonfinite) j.buffers = &b;
  run_job(j, p, "cpu_separable");
}

// ---------------------------------------------------------------------------------------------
// cpu_lowrank: a sum of separable terms (detail::low_rank_terms).
// ---------------------------------------------------------------------------------------------

// A problem's terms by stage: those of the x-y stage (z window {1}), and those along z alone,
// added into one z window (radius rz). why_not: what this strategy cannot run.
struct LowRankSplit {
  std::optional<detail::LowRankTerms> terms;
  std::vector<detail::AxisWindows> xy;
  std::vector<double> z;  // empty: no term along z
  int rz = 0;
  std::int64_t taps = 0;  // of every pass, per output
  std::string why_not;
  // Every term a single pass (a 1-D filter along one axis): each output is then a plain sum of
  // its taps, in some order (Summation::direct).
  bool single_passes = true;
  std::size_t count() const { return xy.size() + (z.empty() ? 0 : 1); }
};

// The most terms run (each keeps a ring of rows per thread).
constexpr std::size_t kMaxTerms = 32;

bool is_one(const std::vector<double>& w) { return w.size() == 1 && w[0] == 1.0; }

LowRankSplit compute_split(const Problem& p) {
  LowRankSplit s;
  const Dims3 k = p.filter_dims3();
  const int long_axes = (k.z > 1) + (k.y > 1) + (k.x > 1);
  if (long_axes < 2) {
    s.why_not = "the filter has fewer than two axes longer than 1 (one pass: cpu or cpu_separable)";
    return s;
  }
  s.terms = detail::low_rank_terms(p);
  if (!s.terms) {
    s.why_not = long_axes == 3
                    ? "a filter of three long axes runs as a sum of terms only where its "
                      "weights lie on the lines through one point (a Laplacian)"
                    : "the filter has more than " + std::to_string(detail::kMaxSvdTaps) +
                          " taps (no SVD) or no nonzero weight";
    return s;
  }
  for (const detail::AxisWindows& t : s.terms->terms) {
    s.taps += t.taps;
    s.single_passes = s.single_passes && t.long_axes <= 1;
    for (int a = 0; a < 3; ++a)
      if (t.radius[std::size_t(a)] > (1 << 16)) s.why_not = "a term's radius exceeds 65536";
    if (is_one(t.w[0])) {
      s.xy.push_back(t);
    } else if (is_one(t.w[1]) && is_one(t.w[2])) {
      // Along z alone: added into one window.
      const int r = std::max(s.rz, t.radius[0]);
      std::vector<double> z(std::size_t(2 * r + 1), 0.0);
      for (std::size_t i = 0; i < s.z.size(); ++i) z[std::size_t(r - s.rz) + i] += s.z[i];
      for (std::size_t i = 0; i < t.w[0].size(); ++i)
        z[std::size_t(r - t.radius[0]) + i] += t.w[0][i];
      s.z = std::move(z);
      s.rz = r;
    } else {
      s.why_not =
          "a term spans z and another axis (or an origin moves a 3-D cross off the "
          "output): 3-D sums of such terms are not implemented";
    }
  }
  if (s.why_not.empty() && s.count() < 2)
    s.why_not = "the filter is rank 1 (an outer product of 1-D factors: cpu_separable)";
  if (s.why_not.empty() && s.count() > kMaxTerms)
    s.why_not =
        std::to_string(s.count()) + " separable terms: more than " + std::to_string(kMaxTerms);
  return s;
}

// The split (an SVD of up to kMaxSvdTaps weights) of the last problem this thread asked about,
// shared, not copied: choose() asks every strategy's can_implement and priority, and apply()
// then the workspace and the run, all of the same weights, and a small run (a Python call on an
// 8x8 image) must not pay for the analysis or its copies each time.
std::shared_ptr<const LowRankSplit> split_terms(const Problem& p) {
  struct Memo {
    std::vector<double> w;
    std::int64_t key[8] = {};
    std::shared_ptr<const LowRankSplit> split;
  };
  thread_local Memo memo;
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  // The dtype too: the SVD's tolerance is the dtype's; and the footprint, which decides whether
  // terms may leave zero weights out (detail::low_rank_terms).
  const std::int64_t key[8] = {k.z, k.y, k.x, a.z, a.y, a.x, std::int64_t(p.dtype()),
                               std::int64_t(p.footprint())};
  if (memo.split && std::equal(key, key + 8, memo.key) && memo.w == p.correlation_weights())
    return memo.split;
  memo.split = std::make_shared<const LowRankSplit>(compute_split(p));
  memo.w = p.correlation_weights();
  std::copy(key, key + 8, memo.key);
  return memo.split;
}

template <class T>
Job<T> make_lowrank_job(const Problem& p, const LowRankSplit& s, const void* in, void* out) {
  Job<T> j = job_of<T>(p, in, out);
  const int rank = p.rank();
  const Boundary mz = rank == 3 ? p.mode(0) : Boundary::constant;
  const Boundary my = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  const Boundary mx = p.mode(rank - 1);
  const bool direct = p.direct_sums();
  // No box forms: each term's passes are plain sums of their taps (Summation::low_rank).
  j.x = make_pass<T>({1.0}, 0, mx, false, direct, true);
  j.y = make_pass<T>({1.0}, 0, my, true, direct, true);
  j.z = s.z.empty() ? make_pass<T>({1.0}, 0, mz, true, direct, true)
                    : make_pass<T>(s.z, s.rz, mz, true, direct, true);
  j.zadd = j.z.on;
  j.cval = T(p.cval());
  for (const detail::AxisWindows& t : s.xy) {
    typename Job<T>::Term q;
    q.y = make_pass<T>(t.w[1], t.radius[1], my, true, direct, true);
    q.x = make_pass<T>(t.w[2], t.radius[2], mx, false, direct, true);
    q.cval_x = T(p.cval() * sum(t.w[2]));
    j.terms.push_back(std::move(q));
  }
  block(j, p, double(s.taps));
  return j;
}

// What a stage costs beside its taps, in taps of the same problem (fit on the 2-core development
// machine, docs/notes/tuning.md "Separable passes (CPU)"): the fused x-y stage about one (a 3x3
// filter on 2048^2 ran 2.2x faster than `cpu`'s dense sum), the z stage in place after it about six
// (2x2x2 on 160^3: 17.0 ms against 10.8 for `cpu`; 3x3x3: 12.4 against 15.0).
constexpr double kXyStageTaps = 1, kZStageTaps = 6;

class SeparableStrategy final : public Strategy {
 public:
  std::string name() const override { return "cpu_separable"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "rank-1 filters as 1-D passes (x and y fused through a ring of rows, then z in "
           "place), OpenMP threads + Highway SIMD";
  }
  Status can_implement(const Problem& p) const override {
    const auto win = detail::separable_windows(p);
    if (!win) return Status::failure("the filter is not an outer product of 1-D factors");
    if (win->long_axes == 0) return Status::failure("the filter has no axis longer than 1");
    if (p.direct_sums() && win->long_axes > 1)
      return Status::failure("direct sums required: the passes sum each output in stages");
    for (int a = 0; a < 3; ++a)
      if (win->radius[a] > (1 << 16)) return Status::failure("a factor's radius exceeds 65536");
    return Status::success();
  }
  // Above `cpu` (10) where the passes' taps and per-stage cost beat the dense filter's taps; a
  // filter along one axis is `cpu`'s (one pass either way).
  int priority(const Problem& p) const override {
    const auto win = detail::separable_windows(p);
    if (!win) return 5;
    // A box along one axis: its box form beats the direct sum and the FFT (1-D box 255 on
    // 2^24: 45.7 ms by cpu_fft; docs/notes/tuning.md).
    if (win->long_axes == 1 && has_box(p, *win)) return 25;
    if (win->long_axes < 2) return 5;
    const bool xy = win->radius[1] > 0 || win->radius[2] > 0, z = win->radius[0] > 0;
    const double cost = double(win->taps) + (xy ? kXyStageTaps : 0) + (xy && z ? kZStageTaps : 0);
    return cost < double(p.taps()) ? 20 : 5;
  }
  // Whether a factor of p takes a box form (running sums; along x doubling under direct sums).
  static bool has_box(const Problem& p, const detail::AxisWindows& win) {
    return dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      const Job<T> j = make_job<T>(p, win, nullptr, nullptr);
      return j.x.box || j.y.box || j.z.box;
    });
  }
  Summation summation(const Problem& p) const override {
    const auto win = detail::separable_windows(p);
    if (!win) return Summation::direct;
    const bool running = dispatch_dtype(p.dtype(), [&](auto d) {
      const Job<typename decltype(d)::storage> j =
          make_job<typename decltype(d)::storage>(p, *win, nullptr, nullptr);
      return j.y.box || j.z.box || (j.x.box && j.x.restart > 0);
    });
    return running              ? Summation::running
           : win->long_axes > 1 ? Summation::separable
                                : Summation::direct;
  }
  std::string plan(const Problem& p) const override {
    const auto win = detail::separable_windows(p);
    if (!win) return {};
    return dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      const Job<T> j = make_job<T>(p, *win, nullptr, nullptr);
      std::string s;
      auto pass = [](const char* a, const Pass<T>& q) {
        if (q.box)
          return std::string(a) + " (box of " + std::to_string(q.bk) + " taps: " +
                 (q.restart == 0 ? std::string("sums by doubling")
                  : a[0] == 'x'  ? "running sums of vectors restarted every " +
                                      std::to_string(q.restart)
                                 : "running sums restarted every " + std::to_string(q.restart)) +
                 ")";
        return std::string(a) + " (" + std::to_string(q.K()) + " taps" +
               (q.sym ? ", symmetric" : "") + ")";
      };
      if (j.xy()) {
        s += j.x.on && j.y.on ? pass("x", j.x) + " and " + pass("y", j.y) + " fused" +
                                    " through a ring of rows, " + std::to_string(j.cw) +
                                    " columns x " + std::to_string(j.strip) + " rows per unit"
             : j.x.on ? pass("x", j.x) + " alone"
                      : pass("y", j.y) + " alone";
      }
      if (j.z.on)
        s += std::string(j.xy() ? ", then " : "") + pass("z", j.z) +
             (j.xy() ? " in place on the output" : " alone") + ", " + std::to_string(j.zcw) +
             " columns per unit";
      return s + "; " + std::to_string(j.threads) + " threads";
    });
  }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const auto win = detail::separable_windows(p);
    if (!win) return {};
    return dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      const Job<T> j = make_job<T>(p, *win, nullptr, nullptr);
      const double per = double(Scratch<T>::sizes(j).bytes()) + 64;
      return std::vector<MemoryUse>{
          {"ring and row buffers of " + std::to_string(j.threads) + " threads", per * j.threads,
           MemorySpace::host}};
    });
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    dispatch_dtype(p.dtype(), [&](auto d) { run_typed<typename decltype(d)::storage>(p, b); });
  }
  // The last pass's stores note non-finite outputs.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

// What a term costs beside its taps, in taps (its ring, the partial sums' row), and the model
// of a run's time on one core, for the priority against cpu_fft's model: ns per output and per
// modelled tap, fit to LoG 9x9 .. 33x33 on 2048^2 float32 on the development VM and scaled to
// cpu_fft's (quiet-machine) figures; float64 taken as twice float32, as the other CPU models
// measured it (docs/notes/tuning.md, "Sums of separable terms").
constexpr double kTermTaps = 1;
// The z stage of a sum (z's pass of the input added to the output: two arrays read, one
// written, after the x-y stage), in taps: the 7-point Laplacian on 160^3 ran 43-60 ms against
// 30-44 for `cpu`'s 27 dense taps, so its 3 terms' 9 taps must model above 27.
constexpr double kZAddStageTaps = 20;
constexpr double kLowRankOutputNs[2] = {1.6, 3.2}, kLowRankTapNs[2] = {0.056, 0.112};  // f32, f64

class LowRankStrategy final : public Strategy {
 public:
  std::string name() const override { return "cpu_lowrank"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "filters of low rank as sums of separable terms (axis lines, or an SVD in float64): "
           "per unit each input row filtered along x into each term's ring, each output row the "
           "sum of the terms' y passes, written once; OpenMP threads + Highway SIMD";
  }
  Status can_implement(const Problem& p) const override {
    const auto held = split_terms(p);
    const LowRankSplit& s = *held;
    if (!s.why_not.empty()) return Status::failure(s.why_not);
    if (p.direct_sums() && !s.single_passes)
      return Status::failure(
          "direct sums required: a sum of separable terms sums each output in stages");
    return Status::success();
  }
  // The passes' taps and per-term and per-stage costs, in taps.
  static double cost(const LowRankSplit& s) {
    return double(s.taps) + kTermTaps * double(s.count()) + kXyStageTaps +
           (s.z.empty() ? 0 : kZAddStageTaps);
  }
  // Above `cpu` (10) where the cost beats the dense taps, and above `cpu_fft` (20) where the
  // model's time also beats the transforms'.
  int priority(const Problem& p) const override {
    if (!can_implement(p)) return 5;
    const double c = cost(*split_terms(p));
    if (!(c < double(p.taps()))) return 5;
    const int d = p.dtype() == DType::f64 ? 1 : 0;
    const double ns = double(p.elements()) * (kLowRankOutputNs[d] + c * kLowRankTapNs[d]);
    try {
      return ns < fft_tiling(p).fft_ns ? 22 : 15;
    } catch (const Error&) {
      return 22;  // no transform fits
    }
  }
  Summation summation(const Problem& p) const override {
    const auto held = split_terms(p);
    const LowRankSplit& s = *held;
    return s.why_not.empty() && !s.single_passes ? Summation::low_rank : Summation::direct;
  }
  std::string plan(const Problem& p) const override {
    const auto held = split_terms(p);
    const LowRankSplit& s = *held;
    if (!s.why_not.empty()) return {};
    return dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      const Job<T> j = make_lowrank_job<T>(p, s, nullptr, nullptr);
      auto pass = [](const Pass<T>& q) {
        if (!q.on) return std::string("-");
        return std::to_string(q.K()) + (q.sym ? " sym" : "");
      };
      std::string t;
      for (const auto& q : j.terms)
        t += (t.empty() ? "" : " + ") + ("[x " + pass(q.x) + ", y " + pass(q.y) + "]");
      char buf[96];
      if (s.terms->axis_lines)
        std::snprintf(buf, sizeof buf, "axis lines, exact");
      else
        std::snprintf(buf, sizeof buf, "SVD, dropped singular values %.1e of the largest",
                      s.terms->dropped / s.terms->largest);
      std::string out = std::to_string(s.count()) + " separable terms (" + buf + "): " + t;
      if (j.z.on) out += " + [z " + pass(j.z) + "]";
      out += " taps; x and y fused per unit of " + std::to_string(j.cw) + " columns x " +
             std::to_string(j.strip) + " rows, each output row written once";
      if (j.z.on)
        out += ", then z's pass of the input added to the output, " + std::to_string(j.zcw) +
               " columns per unit";
      return out + "; " + std::to_string(j.threads) + " threads";
    });
  }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const auto held = split_terms(p);
    const LowRankSplit& s = *held;
    if (!s.why_not.empty()) return {};
    return dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      const Job<T> j = make_lowrank_job<T>(p, s, nullptr, nullptr);
      const double per = double(Scratch<T>::sizes(j).bytes()) + 64;
      return std::vector<MemoryUse>{{"rings and row buffers of " + std::to_string(j.threads) +
                                         " threads (" + std::to_string(s.count()) + " terms)",
                                     per * j.threads, MemorySpace::host}};
    });
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    const auto held = split_terms(p);
    const LowRankSplit& s = *held;
    if (!s.why_not.empty()) throw Error("cpu_lowrank: " + s.why_not);
    dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      Job<T> j = make_lowrank_job<T>(p, s, b.input, b.output);
      if (b.nonfinite) j.buffers = &b;
      run_job(j, p, "cpu_lowrank");
    });
  }
  // The last term's stores (or the z stage's) note non-finite outputs.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

}  // namespace sep

std::unique_ptr<Strategy> make_separable_strategy() {
  return std::make_unique<sep::SeparableStrategy>();
}
std::unique_ptr<Strategy> make_lowrank_strategy() {
  return std::make_unique<sep::LowRankStrategy>();
}

}  // namespace halo::cpu
#endif  // HWY_ONCE
