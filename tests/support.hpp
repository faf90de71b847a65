// Shared test support: fresh random data, poisoned outputs, and the comparison with the float64
// reference that every strategy's test uses.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/parse.hpp"
#include "cpu/fft/fft.hpp"
#include "cpu/reference.hpp"
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

// Skips the test, saying why, where no CUDA device is usable (tests of the GPU strategies).
#define SKIP_WITHOUT_GPU()                                                  \
  do {                                                                      \
    std::string why_no_gpu_;                                                \
    if (!::halo::cuda_available(&why_no_gpu_)) GTEST_SKIP() << why_no_gpu_; \
  } while (0)

namespace halo::test {

// A strategy's modelled time of p (Strategy::estimate, what `auto` compares), infinity where it
// cannot run p.
inline double estimate_ns(const Strategy* s, const Problem& p) {
  return s->can_implement(p) ? s->estimate(p).ns : std::numeric_limits<double>::infinity();
}


// One test problem: rank, extents (canonical z, y, x order of Extents), filter extents, batch.
struct Case {
  int rank;
  Extents ext;
  std::vector<std::int64_t> filter;
  std::int64_t batch = 1;
};

// A fresh seed per process (never a fixed one), printed on failure so a case can be replayed:
// HALO_TEST_SEED=<seed> runs the tests on that seed instead.
inline std::uint64_t fresh_seed() {
  static const std::uint64_t s = [] {
    if (const char* e = std::getenv("HALO_TEST_SEED"))
      return std::uint64_t(std::strtoull(e, nullptr, 10));
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ rd();
  }();
  return s;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(fresh_seed());
  return g;
}

// Uniform in [-1, 1], never all zeros.
template <class T>
std::vector<T> random_vector(std::int64_t n) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(d(rng()));
  return v;
}

inline Filter random_filter(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Filter(random_vector<double>(n), shape);
}

// The rank-1 filter whose weights are the products of the 1-D factors (one per axis, the first
// axis outermost).
inline Filter outer_product(const std::vector<std::vector<double>>& f) {
  std::vector<std::int64_t> shape;
  std::int64_t n = 1;
  for (const auto& v : f) {
    shape.push_back(std::int64_t(v.size()));
    n *= shape.back();
  }
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double prod = 1;
    std::int64_t rest = i;
    for (int a = int(shape.size()) - 1; a >= 0; --a) {
      prod *= f[a][rest % shape[a]];
      rest /= shape[a];
    }
    w[i] = prod;
  }
  return Filter(w, shape);
}

// The outer product of random 1-D factors of the given extents (a rank-1 filter); the factors in
// *factors if asked.
inline Filter random_outer_product(const std::vector<std::int64_t>& shape,
                                   std::vector<std::vector<double>>* factors = nullptr) {
  std::vector<std::vector<double>> f;
  for (std::int64_t k : shape) f.push_back(random_vector<double>(k));
  if (factors) *factors = f;
  return outer_product(f);
}

// Poison: a finite value far beyond any result (the bytes 0x7E: 8.4e37 in float32, 1.6e301 in
// float64), so an element a strategy forgot to write fails every comparison. Not NaN: apply()
// recomputes non-finite outputs (the non-finite repair), which would hide an unwritten one.
constexpr unsigned char kPoisonByte = 0x7E;
template <class T>
void poison(std::vector<T>& v) {
  if (!v.empty()) std::memset(v.data(), kPoisonByte, v.size() * sizeof(T));
}

// Tolerance for one output element, from the standard bound on a dot product of n terms computed
// in any order with unit roundoff u: |err| <= n*u*sum|w||x| / (1 - n*u). The dtype's weights are
// rounded once (one more u per term), so with eps = 2u the bound (taps + 2) * eps * sum|w||x|
// leaves a margin of about 2 over the worst case. For f64 the float64 reference carries the same
// kind of error, so the margin is doubled. A wrong index or a missed tap is off by O(|w||x|),
// orders of magnitude above this.
template <class T>
double tolerance(std::int64_t taps, double abs_scale) {
  const double eps = std::numeric_limits<T>::epsilon();
  const double factor = sizeof(T) == 8 ? 2.0 : 1.0;
  return factor * double(taps + 2) * eps * abs_scale + std::numeric_limits<double>::min();
}

// The tolerance of a strategy that sums the columns of a 2-D filter in Winograd F(2,3) form
// (Summation::winograd_x in halo.hpp): its products are those of transformed weights and inputs,
// each accumulator summing at most `taps` non-zero terms, plus one rounding for each transformed
// weight and input and two for the output transform: |err| <= (taps + 4) u A, where A, the sum of
// |transformed weight| |transformed input| over the terms, is at most 2 * band (band: the sum over
// filter rows of sum_{|i - j| <= 2} |w[i]| |x[j]|, winograd_band below). With eps = 2u and the
// same margin of about 2 as tolerance(): 2 (taps + 4) eps band.
template <class T>
double winograd_tolerance(std::int64_t taps, double band) {
  return 2.0 * double(taps + 4) * std::numeric_limits<T>::epsilon() * band +
         std::numeric_limits<double>::min();
}

// band per output of a 2-D problem (ghost cells zero): sum over filter rows fy and taps i of
// |w[fy][i]| * sum_{j = i-2 .. i+2} |x[y - ay + fy][x - ax + j]|.
template <class T>
std::vector<double> winograd_band(const Problem& p, const std::vector<T>& in) {
  const Dims3 d = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::vector<double>& w = p.correlation_weights();
  std::vector<double> band(in.size(), 0.0);
  for (std::int64_t b = 0; b < p.batch(); ++b)
    for (std::int64_t y = 0; y < d.y; ++y)
      for (std::int64_t x = 0; x < d.x; ++x) {
        double sum = 0;
        for (std::int64_t fy = 0; fy < k.y; ++fy) {
          const std::int64_t iy = y - a.y + fy;
          if (iy < 0 || iy >= d.y) continue;
          const T* row = in.data() + (b * d.y + iy) * d.x;
          for (std::int64_t i = 0; i < k.x; ++i) {
            double xs = 0;
            for (std::int64_t j = i - 2; j <= i + 2; ++j) {
              const std::int64_t ix = x - a.x + j;
              if (ix >= 0 && ix < d.x) xs += std::fabs(double(row[ix]));
            }
            sum += std::fabs(w[fy * k.x + i]) * xs;
          }
        }
        band[(b * d.y + y) * d.x + x] = sum;
      }
  return band;
}

// A filter and an input of a 2-D problem on which the Winograd columns' rounding exceeds the
// direct sum's bound (docs/ACCURACY.md): along x, the filter's even taps are of size 1 and its
// odd ones 1e-4 times that, the input's odd columns of size 1 and its even ones 1e-3 times that.
// An output at an even column then reads tiny values through its large weights and large ones
// through its tiny weights (a small direct sum), while the transformed terms pair the large
// weights with the large inputs. (Odd filter widths, anchor at the centre.)
inline Filter winograd_adversary_filter(std::int64_t ky, std::int64_t kx) {
  std::uniform_real_distribution<double> d(0.5, 1.0);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> w(static_cast<std::size_t>(ky * kx));
  for (std::int64_t i = 0; i < ky * kx; ++i)
    w[std::size_t(i)] = (sign(rng()) ? -1 : 1) * d(rng()) * ((i % kx) % 2 == 0 ? 1.0 : 1e-4);
  return Filter(w, {ky, kx});
}
template <class T>
std::vector<T> winograd_adversary_input(std::int64_t rows, std::int64_t nx) {
  std::uniform_real_distribution<double> d(0.5, 1.0);
  std::bernoulli_distribution sign(0.5);
  std::vector<T> v(static_cast<std::size_t>(rows * nx));
  for (std::int64_t i = 0; i < rows * nx; ++i)
    v[std::size_t(i)] = T((sign(rng()) ? -1 : 1) * d(rng()) * ((i % nx) % 2 == 1 ? 1.0 : 1e-3));
  return v;
}

// |x| dilated along canonical axis `axis` (0: z, 1: y, 2: x) of every item by r: the largest
// |x| within r of each element along that axis.
template <class T>
std::vector<T> dilate_abs(const Problem& p, const std::vector<T>& x, int axis, std::int64_t r) {
  const Dims3 d = p.dims3();
  const std::int64_t ext[3] = {d.z, d.y, d.x};
  const std::int64_t stride = axis == 2 ? 1 : axis == 1 ? d.x : d.x * d.y;
  const std::int64_t n = ext[axis];
  std::vector<T> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t c = (std::int64_t(i) / stride) % n;
    T m = 0;
    for (std::int64_t t = std::max<std::int64_t>(0, c - r); t <= std::min(n - 1, c + r); ++t)
      m = std::max<T>(m, std::fabs(x[std::size_t(std::int64_t(i) + (t - c) * stride)]));
    out[i] = m;
  }
  return out;
}

// The tolerance of an FFT-based correlation (Summation::fft, docs/ACCURACY.md "FFT") for every
// output of a tile: the normwise bound over the tile,
//   |err| <= ||err||_2 <= ((2 eps_F + 4u) max_k |W_k| + eps64_F ||w||_1) ||x_tile||_2,
// eps_F = eta (log2 L + 1), eta = (1 + 4 sqrt 2) u (Higham, Accuracy and Stability, Thm 24.2,
// twiddles accurate to u; one stage more for the real-data transforms), L the tile's transform
// length (all axes together), W the spectrum of the correlation weights w on the tile's
// frequency grid, x_tile its input window (zeros beyond), eps64_F the same in float64 (the
// spectrum's own transform); plus the float64 reference's own error, (k + 1) u64 sum|f||x| <=
// (k + 1) u64 ||f||_1 ||x_tile||_2 (f: the filter as given, k its taps, which read values of the
// tile's window). Doubled, as the direct tolerance is (for the radix-3 and -5 stages).
template <class T>
double fft_tolerance(double log2_len, double spectrum_max, double weights_l1, double window_norm,
                     std::int64_t filter_taps, double filter_l1) {
  const auto eps_f = [&](double u) { return (1 + 4 * std::sqrt(2.0)) * u * (log2_len + 1); };
  const double u = std::numeric_limits<T>::epsilon() / 2;
  const double u64 = std::numeric_limits<double>::epsilon() / 2;
  // The spectrum: a float64 transform (eps_f), or a direct float64 sum over the taps (the GPU's
  // row transforms: (taps + 2) u64).
  const double spectrum = std::max(eps_f(u64), double(filter_taps + 2) * u64);
  const double fft = (2 * eps_f(u) + 4 * u) * spectrum_max + spectrum * weights_l1;
  const double reference = double(filter_taps + 1) * u64 * filter_l1;
  return 2 * (fft + reference) * window_norm + std::numeric_limits<double>::min();
}

// max_k |W_k| over the frequency grid of a transform of extents `len` (z, y, x) of the
// correlation weights of p (kz x ky x kx at the grid's origin): the operator 2-norm of the cyclic
// correlation, in float64 by one direct DFT per axis (half the x frequencies: |W(-k)| = |W(k)|).
inline double spectrum_max(const Problem& p, const std::array<std::int64_t, 3>& len) {
  const Dims3 kd = p.filter_dims3();
  const std::int64_t k[3] = {kd.z, kd.y, kd.x};
  const std::vector<double>& w = p.correlation_weights();
  using C = std::complex<double>;
  const double two_pi = 6.283185307179586476925286766559;
  const auto twiddles = [&](std::int64_t n) {
    std::vector<C> t(static_cast<std::size_t>(n));
    for (std::int64_t m = 0; m < n; ++m) t[m] = std::polar(1.0, -two_pi * double(m) / double(n));
    return t;
  };
  // Along x: a[z][y][fx], fx = 0 .. len.x / 2.
  const std::int64_t hx = len[2] / 2 + 1;
  const std::vector<C> tx = twiddles(len[2]), ty = twiddles(len[1]), tz = twiddles(len[0]);
  std::vector<C> a(static_cast<std::size_t>(k[0] * k[1] * hx));
  for (std::int64_t r = 0; r < k[0] * k[1]; ++r)
    for (std::int64_t f = 0; f < hx; ++f) {
      C s = 0;
      for (std::int64_t j = 0; j < k[2]; ++j) s += w[r * k[2] + j] * tx[(j * f) % len[2]];
      a[r * hx + f] = s;
    }
  // Along y: b[z][fy][fx].
  std::vector<C> b(static_cast<std::size_t>(k[0] * len[1] * hx));
  for (std::int64_t z = 0; z < k[0]; ++z)
    for (std::int64_t f = 0; f < len[1]; ++f)
      for (std::int64_t j = 0; j < k[1]; ++j) {
        const C t = ty[(j * f) % len[1]];
        for (std::int64_t x = 0; x < hx; ++x)
          b[(z * len[1] + f) * hx + x] += a[(z * k[1] + j) * hx + x] * t;
      }
  // Along z, keeping the largest magnitude.
  double best = 0;
  std::vector<C> c(static_cast<std::size_t>(len[1] * hx));
  for (std::int64_t f = 0; f < len[0]; ++f) {
    std::fill(c.begin(), c.end(), C(0));
    for (std::int64_t j = 0; j < k[0]; ++j) {
      const C t = tz[(j * f) % len[0]];
      for (std::int64_t i = 0; i < len[1] * hx; ++i) c[i] += b[j * len[1] * hx + i] * t;
    }
    for (const C& v : c) best = std::max(best, std::abs(v));
  }
  return best;
}

// The edge treatments the pass tests run each case under: zero ghosts, every mode (constant with
// a cval), and two per-axis mixes with nonzero cvals and origins at their limits.
inline std::vector<Edges> edge_sets() {
  const Boundary C = Boundary::constant, N = Boundary::nearest, F = Boundary::reflect,
                 M = Boundary::mirror, W = Boundary::wrap;
  std::vector<Edges> v{Edges{}};
  for (Boundary m : {C, N, F, M, W}) v.push_back(Edges::all(m, m == C ? 1.5 : 0.0));
  Edges mix;  // per-axis modes, a nonzero cval, origins at their limits
  mix.mode = {W, C, F};
  mix.cval = -0.75;
  mix.origin = {1, -1, 0};
  v.push_back(mix);
  Edges mix2;
  mix2.mode = {C, M, N};
  mix2.cval = 2.5;
  mix2.origin = {-1, 0, 1};
  v.push_back(mix2);
  return v;
}

// A problem's extents, filter extents, anchors and modes per canonical axis (z, y, x), as the
// strategies see them (an axis the rank lacks: extent 1, constant mode).
struct Canonical {
  std::int64_t n[3], k[3], a[3];
  Boundary mode[3];
};
inline Canonical canonical(const Problem& p) {
  const Dims3 nd = p.dims3(), kd = p.filter_dims3(), ad = p.anchor3();
  const int r = p.rank();
  return {{nd.z, nd.y, nd.x},
          {kd.z, kd.y, kd.x},
          {ad.z, ad.y, ad.x},
          {r == 3 ? p.mode(0) : Boundary::constant, r >= 2 ? p.mode(r - 2) : Boundary::constant,
           p.mode(r - 1)}};
}

// The tiling of an FFT strategy on p: cpu_fft's or the CUDA fft's.
inline detail::FftTiling fft_tiling_of(const std::string& strategy, const Problem& p) {
  if (strategy == "cpu_fft") return cpu::fft_tiling(p);
  if (strategy == "fft") return detail::cuda_fft_tiling(p);
  throw std::logic_error("no tiling known for the FFT strategy " + strategy);
}

// The tolerance of every output of an FFT strategy on p for the input `in`: its tiles (t), each
// tile's input window gathered as the strategy gathers it (the boundary mode's map, cval), its
// norm and the spectrum's maximum in fft_tolerance().
template <class T>
std::vector<double> fft_tolerances(const Problem& p, const std::vector<T>& in,
                                   const detail::FftTiling& t) {
  const Canonical c = canonical(p);
  const std::int64_t *n = c.n, *k = c.k, *a = c.a;
  const Boundary* mode = c.mode;
  const double cval = double(static_cast<T>(p.cval()));
  const double smax = spectrum_max(p, t.fft);
  double l1 = 0, wl1 = 0;
  for (double w : p.filter().weights()) l1 += std::fabs(w);
  for (double w : p.correlation_weights()) wl1 += std::fabs(w);
  const double log2_len = std::log2(double(t.fft[0]) * double(t.fft[1]) * double(t.fft[2]));
  std::vector<double> tol(in.size());
  if (t.shared && t.fft[0] == 1 && t.fft[1] == 1) {
    // The row transforms (src/cuda/fft/rows.cu): segments of T = N - K + 1 outputs along each
    // row, consecutive segments paired across the rows' ends; a pair's outputs are bounded
    // through the norm of its complex signal, (||x_a||^2 + ||x_b||^2)^(1/2), its two windows.
    const std::int64_t seg = t.fft[2] - k[2] + 1, segs = (n[2] + seg - 1) / seg;
    const std::int64_t total = p.batch() * n[0] * n[1] * segs;
    const auto window_sq = [&](std::int64_t s) {
      const std::int64_t row = s / segs, o = (s % segs) * seg, cnt = std::min(seg, n[2] - o);
      double sq = 0;
      for (std::int64_t j = 0; j < cnt + k[2] - 1; ++j) {
        const std::int64_t ix = detail::map_index(o - a[2] + j, n[2], mode[2]);
        const double v = ix < 0 ? cval : double(in[std::size_t(row * n[2] + ix)]);
        sq += v * v;
      }
      return sq;
    };
    for (std::int64_t sa = 0; sa < total; sa += 2) {
      const double norm = std::sqrt(window_sq(sa) + (sa + 1 < total ? window_sq(sa + 1) : 0.0));
      const double v = fft_tolerance<T>(log2_len, smax, wl1, norm, p.filter().taps(), l1);
      for (std::int64_t s = sa; s < std::min(sa + 2, total); ++s) {
        const std::int64_t row = s / segs, o = (s % segs) * seg, cnt = std::min(seg, n[2] - o);
        for (std::int64_t x = 0; x < cnt; ++x) tol[std::size_t(row * n[2] + o + x)] = v;
      }
    }
    return tol;
  }
  std::int64_t count[3];
  for (int i = 0; i < 3; ++i) count[i] = (n[i] + t.tile[i] - 1) / t.tile[i];
  std::vector<std::int64_t> map[3];
  for (std::int64_t b = 0; b < p.batch(); ++b)
    for (std::int64_t tz = 0; tz < count[0]; ++tz)
      for (std::int64_t ty = 0; ty < count[1]; ++ty)
        for (std::int64_t tx = 0; tx < count[2]; ++tx) {
          const std::int64_t idx[3] = {tz, ty, tx};
          std::int64_t o[3], cnt[3];
          for (int i = 0; i < 3; ++i) {
            o[i] = idx[i] * t.tile[i];
            cnt[i] = std::min(t.tile[i], n[i] - o[i]);
            map[i].resize(static_cast<std::size_t>(cnt[i] + k[i] - 1));
            for (std::size_t j = 0; j < map[i].size(); ++j)
              map[i][j] = detail::map_index(o[i] - a[i] + std::int64_t(j), n[i], mode[i]);
          }
          double sq = 0;
          for (std::int64_t iz : map[0])
            for (std::int64_t iy : map[1])
              for (std::int64_t ix : map[2]) {
                const double v = iz < 0 || iy < 0 || ix < 0
                                     ? cval
                                     : double(in[((b * n[0] + iz) * n[1] + iy) * n[2] + ix]);
                sq += v * v;
              }
          const double norm = std::sqrt(sq) * t.window_scale;
          for (std::int64_t z = 0; z < cnt[0]; ++z)
            for (std::int64_t y = 0; y < cnt[1]; ++y)
              for (std::int64_t x = 0; x < cnt[2]; ++x) {
                const std::size_t i = static_cast<std::size_t>(
                    ((b * n[0] + o[0] + z) * n[1] + o[1] + y) * n[2] + o[2] + x);
                tol[i] = fft_tolerance<T>(log2_len, smax, wl1, norm, p.filter().taps(), l1);
              }
        }
  return tol;
}

// For every output of p, sum over the taps j of the folded filter of K[j] |x| at the input the
// tap reads (through the boundary modes; |cval| for a ghost cell): Σ|w||x| for weights K >= 0
// in the frame of p's correlation weights (filter_dims3, anchor3).
template <class T>
std::vector<double> abs_correlate(const Problem& p, const std::vector<T>& in,
                                  const std::vector<double>& K) {
  const Canonical c = canonical(p);
  const std::int64_t *n = c.n, *k = c.k, *a = c.a;
  const Boundary* mode = c.mode;
  const double cval = std::fabs(double(static_cast<T>(p.cval())));
  std::vector<double> out(in.size(), 0.0);
  std::vector<std::int64_t> mz(static_cast<std::size_t>(k[0])), my(static_cast<std::size_t>(k[1])),
      mx(static_cast<std::size_t>(k[2]));
  for (std::int64_t b = 0; b < p.batch(); ++b)
    for (std::int64_t z = 0; z < n[0]; ++z) {
      for (std::int64_t j = 0; j < k[0]; ++j)
        mz[j] = detail::map_index(z - a[0] + j, n[0], mode[0]);
      for (std::int64_t y = 0; y < n[1]; ++y) {
        for (std::int64_t j = 0; j < k[1]; ++j)
          my[j] = detail::map_index(y - a[1] + j, n[1], mode[1]);
        for (std::int64_t x = 0; x < n[2]; ++x) {
          for (std::int64_t j = 0; j < k[2]; ++j)
            mx[j] = detail::map_index(x - a[2] + j, n[2], mode[2]);
          double sum = 0;
          for (std::int64_t jz = 0; jz < k[0]; ++jz)
            for (std::int64_t jy = 0; jy < k[1]; ++jy) {
              const double* w = K.data() + (jz * k[1] + jy) * k[2];
              const bool ghost = mz[jz] < 0 || my[jy] < 0;
              const T* row =
                  ghost ? nullptr : in.data() + ((b * n[0] + mz[jz]) * n[1] + my[jy]) * n[2];
              for (std::int64_t jx = 0; jx < k[2]; ++jx) {
                if (w[jx] == 0) continue;
                sum += w[jx] * (ghost || mx[jx] < 0 ? cval : std::fabs(double(row[mx[jx]])));
              }
            }
          out[std::size_t(((b * n[0] + z) * n[1] + y) * n[2] + x)] = sum;
        }
      }
    }
  return out;
}

// The tolerance of a sum of separable terms (Summation::low_rank, docs/ACCURACY.md "Sums of
// separable terms"): term t (k_t taps in p_t passes) carries the separable passes' bound over
// S_t = Σ|u_t (x) v_t||x|, and adding the T terms' results T - 1 roundings, so with
// S = Σ_t S_t: (max_t (k_t + 2 p_t - 1) + T - 1) u S, at the margin of tolerance(); plus what
// the terms leave out, Σ|E||x| (E = W - Σ terms, in float64: truncation and the analysis' own
// rounding), doubled; plus the float64 reference's own error, (taps + 1) u64 Σ|W||x|.
template <class T>
std::vector<double> low_rank_tolerances(const Problem& p, const std::vector<T>& in) {
  const auto lr = detail::low_rank_terms(p);
  if (!lr) throw std::logic_error("no low-rank terms for " + p.describe());
  const std::vector<double>& W = p.correlation_weights();
  std::vector<double> A(W.size(), 0.0), E = W;
  std::int64_t depth = 0;
  for (const detail::AxisWindows& t : lr->terms) {
    const std::vector<double> tw = detail::term_weights(p, t);
    for (std::size_t i = 0; i < W.size(); ++i) {
      A[i] += std::fabs(tw[i]);
      E[i] -= tw[i];
    }
    depth = std::max<std::int64_t>(depth, t.taps + 2 * t.long_axes - 1);
  }
  for (double& e : E) e = std::fabs(e);
  const std::int64_t T_terms = std::int64_t(lr->terms.size());
  const std::vector<double> S = abs_correlate(p, in, A), Ex = abs_correlate(p, in, E);
  const double u64 = std::numeric_limits<double>::epsilon() / 2;
  std::vector<double> tol(in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    tol[i] = tolerance<T>(depth + T_terms - 1, S[i]) + 2 * Ex[i] +
             double(p.taps() + 1) * u64 * (S[i] + Ex[i]);
  return tol;
}

// The tolerance of every output of `strategy` on p for the input `in`: tolerance() of the direct
// sum, winograd_tolerance() where the strategy says that it sums in Winograd form on p, or
// fft_tolerances() where it says that it multiplies transforms.
template <class T>
std::vector<double> tolerances(const std::string& strategy, const Problem& p,
                               const std::vector<T>& in) {
  const Strategy* s = find_strategy(strategy);
  const Summation form = s ? s->summation(p) : Summation::direct;
  // FFT: the normwise bound over each of the strategy's tiles (fft_tolerances).
  if (form == Summation::fft) return fft_tolerances(p, in, fft_tiling_of(strategy, p));
  if (form == Summation::low_rank) return low_rank_tolerances(p, in);
  std::vector<double> tol(in.size());
  cpu::reference_f64(p, in.data(), tol.data(), /*absolute=*/true);
  // Separable passes: the sum of the factors' taps, and one rounding per intermediate array and
  // per factor (docs/ACCURACY.md), in place of the dense filter's taps.
  std::int64_t taps = p.taps();
  if (form == Summation::separable) {
    const auto win = detail::separable_windows(p);
    if (win) taps = win->taps + win->long_axes;
  }
  // Running sums (docs/ACCURACY.md, Box filters): along an axis of box k restarted every B
  // outputs, an output carries the rounding of up to B - 1 add-subtract steps over windows up
  // to B before it, each bounded by the sums of |x| there: the direct bound's taps grow by 4 B
  // per such axis and |x| is taken at its largest within B + 1 along it. Every long axis is
  // counted as running (conservative).
  if (form == Summation::running) {
    const auto win = detail::separable_windows(p);
    if (win) {
      taps = win->taps + win->long_axes;
      std::vector<T> big(in.size());
      for (std::size_t i = 0; i < in.size(); ++i) big[i] = std::fabs(in[i]);
      for (int a = 0; a < 3; ++a) {
        if (win->radius[a] == 0) continue;
        const int B = detail::running_restart(2 * win->radius[a] + 1);
        taps += 4 * B;
        big = dilate_abs(p, big, a, B + 1);
      }
      cpu::reference_f64(p, big.data(), tol.data(), /*absolute=*/true);
    }
  }
  for (double& t : tol) t = tolerance<T>(taps, t);
  // Winograd form: its own bound; near the edges under a boundary mode a direct border pass
  // computes the output (its ghosts are not in the band), so the larger of the two holds.
  if (s && p.rank() == 2 && form == Summation::winograd_x) {
    const std::vector<double> band = winograd_band(p, in);
    for (std::size_t i = 0; i < in.size(); ++i)
      tol[i] = std::max(tol[i], winograd_tolerance<T>(p.taps(), band[i]));
  }
  return tol;
}

// A view of `v` as `batch` arrays of rank `rank` and extents `ext`.
template <class T>
ArrayView array_view(std::vector<T>& v, int rank, Extents ext, std::int64_t batch = 1) {
  ArrayView a;
  a.data = v.data();
  a.dtype = dtype_of<T>();
  a.rank = rank;
  a.extents = ext;
  a.batch = batch;
  return a;
}

struct Mismatch {
  std::int64_t index = -1;
  double got = 0, want = 0, tol = 0;
  std::int64_t count = 0;
};

// Runs `strategy` (through halo::apply) on fresh random input and compares with the reference.
// Returns a description of the first mismatch, or "" if every element is within tolerance.
// `tuning` reaches the strategy through Options::tuning (the `fast` strategy's variants).
template <class T>
std::string check_strategy(const std::string& strategy, int rank, Extents ext, std::int64_t batch,
                           const Filter& f, Op op, bool direct_sums = false,
                           const Edges& edges = {}, const FastTuning& tuning = {}) {
  Problem p(rank, ext, batch, f, dtype_of<T>(), op, edges);
  p.require_direct_sums(direct_sums);
  p.set_tuning(tuning);
  const std::int64_t n = p.elements();
  std::vector<T> in = random_vector<T>(n);
  std::vector<T> out(static_cast<std::size_t>(n));
  poison(out);
  std::vector<double> ref(static_cast<std::size_t>(n));
  cpu::reference_f64(p, in.data(), ref.data());
  const std::vector<double> tols = tolerances(strategy, p, in);

  Options opt;
  opt.op = op;
  opt.strategy = strategy;
  opt.direct_sums = direct_sums;
  opt.edges = edges;
  opt.tuning = tuning;
  const RunInfo info = apply(ConstArrayView(in.data(), p.dtype(), rank, ext, batch),
                             array_view(out, rank, ext, batch), f, opt);
  if (info.strategy != strategy) return "ran " + info.strategy + " instead of " + strategy;

  Mismatch m;
  for (std::int64_t i = 0; i < n; ++i) {
    const double tol = tols[static_cast<std::size_t>(i)];
    const double got = static_cast<double>(out[i]);
    if (!(std::fabs(got - ref[i]) <= tol)) {
      if (m.count++ == 0) m = {i, got, ref[i], tol, 1};
    }
  }
  if (m.count == 0) return "";
  std::ostringstream os;
  os.precision(9);
  os << p.describe() << (tuning.empty() ? "" : " tuned " + detail::tuning_string(tuning)) << ": "
     << m.count << " of " << n << " elements wrong; first at flat index " << m.index << ": got "
     << m.got << ", want " << m.want << " (tolerance " << m.tol << "); seed " << fresh_seed();
  return os.str();
}

// The `fast` strategy's tuning variants (FastTuning, in the KEY=VALUE form of `halo --tune`) that
// the GPU tests run besides the defaults, so that the kernels the defaults do not take are
// checked too: every feed, the TMA ring's shapes, the 1D layouts and outputs per lane, the 3D
// block ring's rows, runs and chunks, 2D columns per lane, passes, prefetch depths and the
// Winograd columns on and off. scripts/gpu-check runs some of them under compute-sanitizer by
// name (variant_test_name).
inline const std::vector<std::string>& fast_tuning_variants() {
  static const std::vector<std::string> v = {
      "feed=tma",
      "feed=tma,slots=2,box_rows=3",
      "feed=ring",
      "feed=prefetch",
      "feed=direct",
      "feed=prefetch,depth=2",
      "feed=prefetch,depth=3",
      "prefetch=1",
      "tx_1d=8",
      "tx_1d=32",
      "feed=block",
      "feed=block,slots=2",
      "feed=block,slots=2,tx_1d=16,rows_3d=1,hints=1",
      "rows_3d=4",
      "runs=0",
      "slots=2,runs=1,chunk=5",
      "pad_1d=0",
      "pad_1d=1",
      "slots=3,pad_1d=1",
      "slots=4,pad_1d=1",
      "tx=8",
      "tx=4",
      "pass_rows=8",
      "pass_rows=12",
      "winograd=1",
      "winograd=0",
      "l2_promotion=0",
  };
  return v;
}

// A variant's name as a test parameter: "feed=tma,slots=2" -> "feed_tma_slots_2". (The variants
// are written in the order of FastTuning's fields, as detail::tuning_string prints them.)
inline std::string variant_test_name(const std::string& variant) {
  std::string s = variant;
  for (char& c : s)
    if (c == '=' || c == ',') c = '_';
  return s;
}

// Compares `got` with the float64 reference of p on `in`; "" if every element is within the
// tolerance of support.hpp, else the first mismatch.
template <class T>
std::string compare(const std::string& strategy, const Problem& p, const std::vector<T>& in,
                    const std::vector<T>& got) {
  const std::size_t n = static_cast<std::size_t>(p.elements());
  std::vector<double> ref(n);
  cpu::reference_f64(p, in.data(), ref.data());
  const std::vector<double> tol = tolerances(strategy, p, in);
  std::int64_t bad = 0, first = -1;
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(double(got[i]) - ref[i]) <= tol[i]))
      if (bad++ == 0) first = std::int64_t(i);
  if (bad == 0) return "";
  std::ostringstream os;
  os << p.describe() << ": " << bad << " of " << n << " wrong; first at " << first << ": got "
     << got[first] << ", want " << ref[first] << "; seed " << fresh_seed();
  return os.str();
}

// The message of the halo::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A fresh temporary directory per test, named after the suite, the process and the test, and
// removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("halo-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid()) +
            "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

#ifdef HALO_CLI_PATH
// Runs the built `halo` binary with `args`; returns its exit code and stdout+stderr.
struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

inline Result run_cli(const std::string& args) {
  const std::string cmd = std::string(HALO_CLI_PATH) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The same with stdout and stderr apart. `shell_prefix` runs first in the same shell (e.g.
// "ulimit -v 2000000;"), so the binary inherits what it sets.
struct SplitResult {
  int code = -1;
  std::string out, err;
};
inline SplitResult run_cli_split(const std::string& args, const std::string& shell_prefix = "") {
  char err_path[] = "/tmp/halo-stderr-XXXXXX";
  const int fd = mkstemp(err_path);
  SplitResult r;
  if (fd < 0) return r;
  close(fd);
  const std::string cmd = shell_prefix + " exec " + HALO_CLI_PATH + " " + args + " 2>" + err_path;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  if (FILE* e = fopen(err_path, "rb")) {
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, e)) > 0) r.err.append(buf, n);
    fclose(e);
  }
  std::remove(err_path);
  return r;
}
#endif

}  // namespace halo::test
