// The per-target SIMD code of cpu_lines (kernels.hpp says what each kernel does), included once
// per Highway target by kernels.cpp (foreach_target): hence the toggled guard.
#if defined(HALO_CPU_LINES_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HALO_CPU_LINES_KERNELS_INL_H_
#undef HALO_CPU_LINES_KERNELS_INL_H_
#else
#define HALO_CPU_LINES_KERNELS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert.hpp"
#include "cpu/lines/kernels.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace halo::cpu::lines::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using std::int32_t;
using std::int64_t;

// N storage values at p as a vector of A: exact in float32 and float64; in int16, their value
// modulo 2^16 (the int16 sums are modulo 2^16: Store::exact).
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadWide(D d, const S* HWY_RESTRICT p) {
  const hn::Rebind<S, D> ds;
  if constexpr (std::is_integral_v<hn::TFromD<D>>) {
    if constexpr (sizeof(S) == 1)
      return hn::PromoteTo(d, hn::LoadU(ds, p));
    else
      return hn::BitCast(d, hn::LoadU(ds, p));
  } else {
    const hn::Rebind<int32_t, D> di;
    const auto v = hn::PromoteTo(di, hn::LoadU(ds, p));
    if constexpr (std::is_same_v<hn::TFromD<D>, float>)
      return hn::ConvertTo(d, v);
    else
      return hn::PromoteTo(d, v);
  }
}

// w * x + acc: fused for floats, a multiply and an add for the int16 sums (exact there).
template <class V>
HWY_INLINE V MulAddT(V w, V x, V acc) {
  if constexpr (std::is_integral_v<hn::TFromV<V>>)
    return hn::Add(hn::Mul(w, x), acc);
  else
    return hn::MulAdd(w, x, acc);
}

// dst = src as A; returns whether every value equals the first (a flat run).
template <class S, class A>
HWY_INLINE bool WidenT(const S* HWY_RESTRICT src, A* HWY_RESTRICT dst, int64_t n) {
  const hn::ScalableTag<A> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (n <= 0) return true;
  const auto first = hn::Set(d, static_cast<A>(src[0]));
  auto same = hn::Eq(first, first);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto v0 = LoadWide(d, src + i), v1 = LoadWide(d, src + i + N);
    hn::StoreU(v0, d, dst + i);
    hn::StoreU(v1, d, dst + i + N);
    same = hn::And(same, hn::And(hn::Eq(v0, first), hn::Eq(v1, first)));
  }
  for (; i + N <= n; i += N) {
    const auto v = LoadWide(d, src + i);
    hn::StoreU(v, d, dst + i);
    same = hn::And(same, hn::Eq(v, first));
  }
  bool flat = hn::AllTrue(d, same);
  for (; i < n; ++i) {
    dst[i] = static_cast<A>(src[i]);  // (int16 from uint16: modulo 2^16)
    flat = flat && src[i] == src[0];
  }
  return flat;
}

// Output i's sum, one lane: the vectors' terms (any order lies within the bound; int16 sums
// modulo 2^16, as the vectors wrap).
template <class A, class T>
HWY_INLINE A SumAt(const RowSums<A, T>& r, int64_t i) {
  const int k = r.k, h = k / 2;
  if constexpr (std::is_integral_v<A>) {
    std::uint32_t a = 0;  // (unsigned: defined wrapping)
    for (int j = 0; j < k; ++j)
      a += std::uint32_t(int32_t(r.w[j])) * std::uint32_t(int32_t(r.rows[j][i]));
    return A(std::uint16_t(a));
  } else {
    A a = 0;
    if (r.pairs == 0) {
      for (int j = 0; j < k; ++j) a += r.w[j] * r.rows[j][i];
      return a;
    }
    a = r.w[h] * r.rows[h][i];
    for (int j = 0; j < h; ++j)
      a += r.w[j] * (r.pairs > 0 ? r.rows[j][i] + r.rows[k - 1 - j][i]
                                 : r.rows[j][i] - r.rows[k - 1 - j][i]);
    return a;
  }
}

// One output stored from its sum, as the vectors store it; false where it is left to the caller.
template <class A, class T>
HWY_INLINE bool StoreOne(const RowSums<A, T>& r, A a, T* out) {
  if constexpr (std::is_integral_v<A>) {  // int16 sums: exact (Store::exact)
    (void)r;
    *out = static_cast<T>(static_cast<std::uint32_t>(static_cast<int32_t>(a)));
  } else {
    if (!std::isfinite(a)) return false;
    if constexpr (std::is_integral_v<T>) {
      if (r.store == Store::nearest) {  // decided where no half-integer lies within the bound
        if (detail::truncation_undecided(A(a - A(0.5)), r.bound)) return false;
        *out = detail::nearest_cast<T>(double(a));
      } else if (!detail::truncation_undecided(a, r.bound)) {
        *out = detail::scipy_cast_from<T>(a);
      } else {
        return false;
      }
    } else {
      *out = static_cast<T>(a);
    }
  }
  return true;
}

// The sums of four vectors of outputs at i (a0 .. a3), kPairs as RowSums::pairs: a weight per
// pair of inputs where the weights are (anti)symmetric, else each tap in order.
template <int kPairs, class D, class A>
HWY_INLINE void Sum4(D d, const A* const* HWY_RESTRICT rows, const A* HWY_RESTRICT w, int k,
                     int64_t i, hn::Vec<D>& a0, hn::Vec<D>& a1, hn::Vec<D>& a2,
                     hn::Vec<D>& a3) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if constexpr (kPairs != 0) {
    const int h = k / 2;
    const auto wc = hn::Set(d, w[h]);
    const A* c = rows[h] + i;
    a0 = hn::Mul(wc, hn::LoadU(d, c));
    a1 = hn::Mul(wc, hn::LoadU(d, c + N));
    a2 = hn::Mul(wc, hn::LoadU(d, c + 2 * N));
    a3 = hn::Mul(wc, hn::LoadU(d, c + 3 * N));
    for (int j = 0; j < h; ++j) {
      const A* lo = rows[j] + i;
      const A* hi = rows[k - 1 - j] + i;
      const auto wv = hn::Set(d, w[j]);
      const auto pair = [&](int64_t o) {
        if constexpr (kPairs > 0)
          return hn::Add(hn::LoadU(d, lo + o), hn::LoadU(d, hi + o));
        else
          return hn::Sub(hn::LoadU(d, lo + o), hn::LoadU(d, hi + o));
      };
      a0 = MulAddT(wv, pair(0), a0);
      a1 = MulAddT(wv, pair(N), a1);
      a2 = MulAddT(wv, pair(2 * N), a2);
      a3 = MulAddT(wv, pair(3 * N), a3);
    }
  } else {
    a0 = a1 = a2 = a3 = hn::Zero(d);
    for (int j = 0; j < k; ++j) {
      const A* x = rows[j] + i;
      const auto wv = hn::Set(d, w[j]);
      a0 = MulAddT(wv, hn::LoadU(d, x), a0);
      a1 = MulAddT(wv, hn::LoadU(d, x + N), a1);
      a2 = MulAddT(wv, hn::LoadU(d, x + 2 * N), a2);
      a3 = MulAddT(wv, hn::LoadU(d, x + 3 * N), a3);
    }
  }
}

// The sum of one vector of outputs at i.
template <int kPairs, class D, class A>
HWY_INLINE hn::Vec<D> Sum1(D d, const A* const* HWY_RESTRICT rows, const A* HWY_RESTRICT w,
                           int k, int64_t i) {
  if constexpr (kPairs != 0) {
    const int h = k / 2;
    auto a = hn::Mul(hn::Set(d, w[h]), hn::LoadU(d, rows[h] + i));
    for (int j = 0; j < h; ++j) {
      const auto x = hn::LoadU(d, rows[j] + i), y = hn::LoadU(d, rows[k - 1 - j] + i);
      a = MulAddT(hn::Set(d, w[j]), kPairs > 0 ? hn::Add(x, y) : hn::Sub(x, y), a);
    }
    return a;
  } else {
    auto a = hn::Zero(d);
    for (int j = 0; j < k; ++j) a = MulAddT(hn::Set(d, w[j]), hn::LoadU(d, rows[j] + i), a);
    return a;
  }
}

// Integer lanes v (int32, one per lane of D) stored as T: their low bits, as SciPy's cast keeps
// them (core/convert.hpp, scipy_cast). AVX-512's down-conversions where a full vector of floats
// gives 16 lanes (Highway's TruncateTo shuffles).
template <class D, class T, class VI>
HWY_INLINE void StoreLowBits(D, VI v, T* HWY_RESTRICT out) {
  if constexpr (sizeof(hn::TFromV<VI>) == 2) {  // int16 lanes (exact int16 sums)
    const hn::Rebind<std::uint16_t, D> du16;
    if constexpr (sizeof(T) == 1) {
      const hn::Rebind<std::uint8_t, D> d8;
      hn::StoreU(hn::TruncateTo(d8, hn::BitCast(du16, v)), d8,
                 reinterpret_cast<std::uint8_t*>(out));
    } else {
      hn::StoreU(hn::BitCast(du16, v), du16, reinterpret_cast<std::uint16_t*>(out));
    }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  } else if constexpr (hn::MaxLanes(D()) == 16) {  // 16 int32 lanes
    if constexpr (sizeof(T) == 1)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v.raw));
    else
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(v.raw));
#endif
  } else {
    const hn::Rebind<std::uint32_t, D> du;
    if constexpr (sizeof(T) == 1) {
      const hn::Rebind<std::uint8_t, D> d8;
      hn::StoreU(hn::TruncateTo(d8, hn::BitCast(du, v)), d8,
                 reinterpret_cast<std::uint8_t*>(out));
    } else {
      const hn::Rebind<std::uint16_t, D> d16;
      hn::StoreU(hn::TruncateTo(d16, hn::BitCast(du, v)), d16,
                 reinterpret_cast<std::uint16_t*>(out));
    }
  }
}

// Lanes of v truncated toward zero to int32: x86's own conversion where there is one (INT_MIN
// for NaN and beyond int32, as SciPy's cast; Highway's ConvertTo saturates, at three more
// instructions); the lanes the caller keeps are finite and within int32's range.
template <class D>
HWY_INLINE auto ToInt32(D d, hn::Vec<D> v) {
  const hn::Rebind<int32_t, D> di;
  if constexpr (std::is_integral_v<hn::TFromD<D>>) {  // int16 sums: stored as they are
    (void)d;
    (void)di;
    return v;
  } else if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (hn::MaxLanes(D()) == 16) return hn::Vec<decltype(di)>{_mm512_cvttps_epi32(v.raw)};
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    if constexpr (hn::MaxLanes(D()) == 8) return hn::Vec<decltype(di)>{_mm256_cvttps_epi32(v.raw)};
#endif
    (void)d;
    return hn::ConvertTo(di, v);
  } else {
    return hn::DemoteTo(di, v);
  }
}

// What a row's stores need beside the sums, as vectors: the decision's bound, the magnitude
// below which a lane converts through int32 (truncation_undecided's limit, and int32's range for
// double sums), T's range (nearest).
template <class D>
struct Limits {
  hn::Vec<D> bound, big, lo, hi;
};
template <class D, class A, class T>
HWY_INLINE Limits<D> LimitsOf(D d, const RowSums<A, T>& r) {
  if constexpr (std::is_integral_v<A>) {  // exact int16 sums: nothing to bound
    (void)r;
    return {hn::Zero(d), hn::Zero(d), hn::Zero(d), hn::Zero(d)};
  } else {
    return {hn::Set(d, r.bound), hn::Set(d, std::is_same_v<A, float> ? A(0x1p22) : A(0x1p31)),
            hn::Set(d, A(std::numeric_limits<T>::lowest())),
            hn::Set(d, A(std::numeric_limits<T>::max()))};
  }
}

// One vector of sums `a` stored as T at out (kS: the Store, a compile-time constant); returns
// the lanes stored for good (the others are the caller's: Leave).
template <Store kS, class D, class T>
HWY_INLINE hn::Mask<D> Put(D d, hn::Vec<D> a, T* HWY_RESTRICT out, Limits<D> m) {
  using A = hn::TFromD<D>;
  if constexpr (kS == Store::exact) {  // int16 sums modulo 2^16: their low bits are SciPy's
    StoreLowBits(d, ToInt32(d, a), out);
    return hn::Eq(a, a);  // every lane
  } else if constexpr (kS == Store::truncate) {
    StoreLowBits(d, ToInt32(d, a), out);
    return hn::And(hn::Gt(hn::Abs(hn::Sub(a, hn::Round(a))), m.bound), hn::Lt(hn::Abs(a), m.big));
  } else if constexpr (kS == Store::nearest) {
    // SciPy's sum rounded, ties to even: decided where no half-integer lies within the bound
    // (a - 1/2 is exact below `big`).
    StoreLowBits(d, ToInt32(d, hn::Min(hn::Max(hn::Round(a), m.lo), m.hi)), out);
    const auto h = hn::Sub(a, hn::Set(d, A(0.5)));
    return hn::And(hn::Gt(hn::Abs(hn::Sub(h, hn::Round(h))), m.bound), hn::Lt(hn::Abs(a), m.big));
  } else if constexpr (std::is_same_v<A, float>) {
    hn::StoreU(a, d, out);
    return hn::IsFinite(a);
  } else {
    const hn::Rebind<float, D> df;
    hn::StoreU(hn::DemoteTo(df, a), df, out);
    return hn::IsFinite(a);
  }
}

// The lanes of output row g's vector at i that Put left: all of it from one flat value where
// every lane is left and every tap reads that value (truncate), else listed in `pending` (as
// g * n + index; the last vector of a row overlaps the one before, whose lanes it stored again:
// those it left are listed again). Rare on most data: not inlined.
template <class D, class A, class T>
HWY_NOINLINE void Leave(D d, const RowSums<A, T>& r, int g, hn::Mask<D> stored, int64_t i,
                        T* HWY_RESTRICT out, int32_t* HWY_RESTRICT pending, int64_t* np) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto left = hn::Not(stored);
  const A* const* rows = r.rows + g;
  if (r.flat && i >= r.flat_lo && i + N <= r.flat_hi && hn::AllTrue(d, left)) {
    const auto v0 = hn::LoadU(d, rows[0] + i);
    auto same = hn::Eq(v0, hn::Set(d, hn::GetLane(v0)));
    for (int j = 1; j < r.k; ++j) same = hn::And(same, hn::Eq(hn::LoadU(d, rows[j] + i), v0));
    if (hn::AllTrue(d, same)) {
      std::fill_n(out + i, N, r.flat(r.ctx, hn::GetLane(v0)));
      return;
    }
  }
  std::uint8_t bits[16] = {};  // up to 128 lanes
  hn::StoreMaskBits(d, left, bits);
  for (int64_t l = 0; l < N; ++l)
    if ((bits[l >> 3] >> (l & 7)) & 1) pending[(*np)++] = int32_t(g * r.n + i + l);
}

// A lambda inlined where it is called (GCC leaves large ones out of line otherwise).
#define HWY_ATTR_INLINE __attribute__((always_inline))

// The vectors of a row at i, i + N, ... (n >= N): whole vectors, then the last one overlapping
// the one before it; f(i) for each.
template <class F>
HWY_INLINE void ForVectors(int64_t n, int64_t step, int64_t N, F&& f) {
  int64_t i = 0;
  for (; i + step <= n; i += step) f(i);
  for (; i < n; i = std::min(i + N, n)) f(std::min(i, n - N));
}

// One output row (r.groups == 1): four vectors of outputs at a time, each tap's values loaded.
template <int kPairs, Store kS, class A, class T>
HWY_INLINE int64_t OneRow(const RowSums<A, T>& r, T* HWY_RESTRICT out,
                          int32_t* HWY_RESTRICT pending) {
  using D = hn::ScalableTag<A>;
  const D d;
  using V = hn::Vec<D>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int k = r.k;
  const A* const* HWY_RESTRICT rows = r.rows;
  const A* HWY_RESTRICT w = r.w;
  const Limits<D> m = LimitsOf(d, r);
  int64_t np = 0;
  int64_t i = 0;
  for (; i + 4 * N <= r.n; i += 4 * N) {
    V a0, a1, a2, a3;
    Sum4<kPairs>(d, rows, w, k, i, a0, a1, a2, a3);
    const auto s0 = Put<kS>(d, a0, out + i, m);
    const auto s1 = Put<kS>(d, a1, out + i + N, m);
    const auto s2 = Put<kS>(d, a2, out + i + 2 * N, m);
    const auto s3 = Put<kS>(d, a3, out + i + 3 * N, m);
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::And(hn::And(s0, s1), hn::And(s2, s3))))) {
      if (!hn::AllTrue(d, s0)) Leave(d, r, 0, s0, i, out, pending, &np);
      if (!hn::AllTrue(d, s1)) Leave(d, r, 0, s1, i + N, out, pending, &np);
      if (!hn::AllTrue(d, s2)) Leave(d, r, 0, s2, i + 2 * N, out, pending, &np);
      if (!hn::AllTrue(d, s3)) Leave(d, r, 0, s3, i + 3 * N, out, pending, &np);
    }
  }
  ForVectors(r.n - i, N, N, [&](int64_t at) HWY_ATTR_INLINE {
    at += i;
    const auto s = Put<kS>(d, Sum1<kPairs>(d, rows, w, k, at), out + at, m);
    if (!hn::AllTrue(d, s)) Leave(d, r, 0, s, at, out, pending, &np);
  });
  return np;
}

// The sums of four output rows at i from their k + 3 rows (output row g's tap j is row g + j):
// the rows' vectors move through registers from one tap to the next, so that each is loaded
// once for the four sums it enters.
template <int kPairs, class D, class A>
HWY_INLINE void Column4(D d, const A* const* HWY_RESTRICT rows, const A* HWY_RESTRICT w, int k,
                        int64_t i, hn::Vec<D>& a0, hn::Vec<D>& a1, hn::Vec<D>& a2,
                        hn::Vec<D>& a3) {
  using V = hn::Vec<D>;
  if constexpr (kPairs != 0) {
    const int h = k / 2;
    const V wc = hn::Set(d, w[h]);
    a0 = hn::Mul(wc, hn::LoadU(d, rows[h] + i));
    a1 = hn::Mul(wc, hn::LoadU(d, rows[h + 1] + i));
    a2 = hn::Mul(wc, hn::LoadU(d, rows[h + 2] + i));
    a3 = hn::Mul(wc, hn::LoadU(d, rows[h + 3] + i));
    // lo_g: row j + g, hi_g: row k - 1 - j + g, for pair j.
    V lo0 = hn::LoadU(d, rows[0] + i), lo1 = hn::LoadU(d, rows[1] + i),
      lo2 = hn::LoadU(d, rows[2] + i), lo3 = hn::LoadU(d, rows[3] + i);
    V hi0 = hn::LoadU(d, rows[k - 1] + i), hi1 = hn::LoadU(d, rows[k] + i),
      hi2 = hn::LoadU(d, rows[k + 1] + i), hi3 = hn::LoadU(d, rows[k + 2] + i);
    for (int j = 0;; ++j) {
      const V wv = hn::Set(d, w[j]);
      if constexpr (kPairs > 0) {
        a0 = MulAddT(wv, hn::Add(lo0, hi0), a0);
        a1 = MulAddT(wv, hn::Add(lo1, hi1), a1);
        a2 = MulAddT(wv, hn::Add(lo2, hi2), a2);
        a3 = MulAddT(wv, hn::Add(lo3, hi3), a3);
      } else {
        a0 = MulAddT(wv, hn::Sub(lo0, hi0), a0);
        a1 = MulAddT(wv, hn::Sub(lo1, hi1), a1);
        a2 = MulAddT(wv, hn::Sub(lo2, hi2), a2);
        a3 = MulAddT(wv, hn::Sub(lo3, hi3), a3);
      }
      if (j + 1 == h) break;
      lo0 = lo1, lo1 = lo2, lo2 = lo3, lo3 = hn::LoadU(d, rows[j + 4] + i);
      hi3 = hi2, hi2 = hi1, hi1 = hi0, hi0 = hn::LoadU(d, rows[k - 2 - j] + i);
    }
  } else {
    a0 = a1 = a2 = a3 = hn::Zero(d);
    V x0 = hn::LoadU(d, rows[0] + i), x1 = hn::LoadU(d, rows[1] + i),
      x2 = hn::LoadU(d, rows[2] + i), x3 = hn::LoadU(d, rows[3] + i);
    for (int j = 0;; ++j) {
      const V wv = hn::Set(d, w[j]);
      a0 = MulAddT(wv, x0, a0);
      a1 = MulAddT(wv, x1, a1);
      a2 = MulAddT(wv, x2, a2);
      a3 = MulAddT(wv, x3, a3);
      if (j + 1 == k) break;
      x0 = x1, x1 = x2, x2 = x3, x3 = hn::LoadU(d, rows[j + 4] + i);
    }
  }
}

// Four output rows (r.groups == 4), a vector of each at a time (Column4).
template <int kPairs, Store kS, class A, class T>
HWY_INLINE int64_t FourRows(const RowSums<A, T>& r, T* const* HWY_RESTRICT out,
                            int32_t* HWY_RESTRICT pending) {
  using D = hn::ScalableTag<A>;
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int k = r.k;
  const A* const* HWY_RESTRICT rows = r.rows;
  const A* HWY_RESTRICT w = r.w;
  const Limits<D> m = LimitsOf(d, r);
  T* HWY_RESTRICT o0 = out[0];
  T* HWY_RESTRICT o1 = out[1];
  T* HWY_RESTRICT o2 = out[2];
  T* HWY_RESTRICT o3 = out[3];
  int64_t np = 0;
  ForVectors(r.n, N, N, [&](int64_t i) HWY_ATTR_INLINE {
    hn::Vec<D> a0, a1, a2, a3;
    Column4<kPairs>(d, rows, w, k, i, a0, a1, a2, a3);
    const auto s0 = Put<kS>(d, a0, o0 + i, m);
    const auto s1 = Put<kS>(d, a1, o1 + i, m);
    const auto s2 = Put<kS>(d, a2, o2 + i, m);
    const auto s3 = Put<kS>(d, a3, o3 + i, m);
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::And(hn::And(s0, s1), hn::And(s2, s3))))) {
      if (!hn::AllTrue(d, s0)) Leave(d, r, 0, s0, i, o0, pending, &np);
      if (!hn::AllTrue(d, s1)) Leave(d, r, 1, s1, i, o1, pending, &np);
      if (!hn::AllTrue(d, s2)) Leave(d, r, 2, s2, i, o2, pending, &np);
      if (!hn::AllTrue(d, s3)) Leave(d, r, 3, s3, i, o3, pending, &np);
    }
  });
  return np;
}

template <int kPairs, Store kS, class A, class T>
HWY_INLINE int64_t Rows(const RowSums<A, T>& r, T* const* out, int32_t* pending) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<A>()));
  if (r.n < N) {  // shorter than a vector: lane by lane
    int64_t np = 0;
    for (int g = 0; g < r.groups; ++g) {
      RowSums<A, T> one = r;
      one.rows = r.rows + g;
      for (int64_t i = 0; i < r.n; ++i)
        if (!StoreOne(one, SumAt(one, i), out[g] + i)) pending[np++] = int32_t(g * r.n + i);
    }
    return np;
  }
  if (r.groups == 4) return FourRows<kPairs, kS>(r, out, pending);
  return OneRow<kPairs, kS>(r, out[0], pending);
}

template <int kPairs, class A, class T>
HWY_INLINE int64_t RowsS(const RowSums<A, T>& r, T* const* out, int32_t* pending) {
  if constexpr (std::is_integral_v<A>) {
    return Rows<kPairs, Store::exact>(r, out, pending);
  } else if constexpr (std::is_integral_v<T>) {
    if (r.store == Store::nearest) return Rows<kPairs, Store::nearest>(r, out, pending);
    return Rows<kPairs, Store::truncate>(r, out, pending);
  } else {
    return Rows<kPairs, Store::floating>(r, out, pending);
  }
}

template <class A, class T>
HWY_INLINE int64_t LineSumsT(const RowSums<A, T>& r, T* const* out, int32_t* pending) {
  if (r.pairs > 0) return RowsS<1>(r, out, pending);
  if (r.pairs < 0) return RowsS<-1>(r, out, pending);
  return RowsS<0>(r, out, pending);
}

#define HALO_LINES_SUMS(A, T, S)                                                  \
  int64_t LineSums##S(const RowSums<A, T>& r, T* const* out, int32_t* pending) {  \
    return LineSumsT(r, out, pending);                                            \
  }
HALO_LINES_SUM_TYPES(HALO_LINES_SUMS)
#undef HALO_LINES_SUMS

#define HALO_LINES_WIDEN(S, A, N)                                   \
  bool Widen##N(const S* src, A* dst, int64_t n) { return WidenT(src, dst, n); }
HALO_LINES_WIDEN_TYPES(HALO_LINES_WIDEN)
#undef HALO_LINES_WIDEN

}  // namespace halo::cpu::lines::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // HALO_CPU_LINES_KERNELS_INL_H_
