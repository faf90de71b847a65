// Box means are exact where SciPy's are: a box (uniform_filter, box:K, weights 1/K^d) of a
// constant region is the constant exactly, in float32 and float64, on every CPU strategy that
// can run a box and on `auto` (SciPy sums the window, then divides by its size once). Constant
// images of 1, 7, 0.5 and 3 and a binary mask, boxes of 2..33 per axis, ranks 1-3, every mode,
// both ops, arrays larger and smaller than the box (folded filters). The mask's outputs are the
// window's count divided once by the box's size, rounded once: its sums are whole numbers, which
// every path forms exactly. cpu_fft is not exact (its transforms mix every input of a tile into
// every output) and `auto` never takes it for a box: checked here.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>

#include "core/boundary.hpp"
#include "core/reciprocal.hpp"
#include "support.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

// The division every box path uses (core/reciprocal.hpp) rounds a / k correctly: q is the
// number of the dtype nearest a / k when its residual a - q k (exact by FMA, a multiple of q's
// ulp below 2^23 of them) is no larger than its neighbours'. Random significands and exponents,
// k up to 2^22 - 1; and c k divided by k gives c back for random c (a box's constant region).
// With q = a RN(1/k) alone, thousands of the 20000 cases per k fail.
template <class T, class U>
void check_division(std::uint64_t seed, int min_exp, int max_exp) {
  std::mt19937_64 g(seed);
  const std::int64_t ks[] = {1, 2, 3, 7, 9, 25, 31, 81, 255, 729, 961, 1023, 4913, 65025,
                             (1 << 20) + 1, (1 << 22) - 1};
  std::uniform_int_distribution<int> ex(min_exp, max_exp);
  for (std::int64_t k : ks) {
    const T kt = T(k);
    const detail::Reciprocal<T> y = detail::Reciprocal<T>::of(kt);
    int off = 0;
    for (int i = 0; i < 20000; ++i) {
      const T a = std::ldexp(T(1) + T(g() >> 11) * T(0x1p-53), ex(g)) * (i % 2 ? T(-1) : T(1));
      const T q = detail::divided(a, y);
      const T r = std::fabs(std::fma(-q, kt, a));
      const T up = std::nextafter(q, std::numeric_limits<T>::infinity());
      const T down = std::nextafter(q, -std::numeric_limits<T>::infinity());
      if (r > std::fabs(std::fma(-up, kt, a)) || r > std::fabs(std::fma(-down, kt, a))) ++off;
      // A constant region: c k, where that product is exact, divided must give c.
      const T c = std::ldexp(T(U(g() >> 52)), ex(g) - 12), s = c * kt;
      if (std::isfinite(s) && std::fma(c, kt, -s) == 0 && detail::divided(s, y) != c) ++off;
    }
    EXPECT_EQ(off, 0) << "k = " << k << ", " << sizeof(T) * 8 << "-bit";
  }
}

TEST(BoxExact, DivisionByTheTapsRoundsCorrectly) {
  check_division<float, std::uint32_t>(1, -70, 100);  // (quotients above 2^-100)
  check_division<double, std::uint64_t>(2, -900, 900);
}

const Boundary kModes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                           Boundary::mirror, Boundary::wrap};
const double kConstants[] = {1.0, 7.0, 0.5, 3.0};

// A box of extents k (one per axis of the array) whose weights are all one value, as the Python
// module builds it (the product of the factors 1/K_a, `product`) or as box:K does (1/taps).
Filter box(const std::vector<std::int64_t>& k, bool product) {
  double taps = 1, w = 1;
  for (std::int64_t e : k) {
    taps *= double(e);
    w *= 1.0 / double(e);
  }
  return Filter(std::vector<double>(std::size_t(taps), product ? w : 1.0 / taps), k);
}

// Canonical (z, y, x) extents of a rank-`rank` array.
std::array<std::int64_t, 3> canonical3(int rank, const Extents& e) {
  std::array<std::int64_t, 3> n{1, 1, 1};
  for (int a = 0; a < rank; ++a) n[std::size_t(3 - rank + a)] = e[a];
  return n;
}

// For each output of one item: the sum over its box (extents k, anchors a, canonical) of `ones`
// (0 or 1 per element), a tap outside the array counting `ghost` where the axis's mode maps it
// nowhere (constant mode). Exact: whole numbers, axis by axis.
std::vector<double> window_counts(const std::vector<double>& ones, std::array<std::int64_t, 3> n,
                                  std::array<std::int64_t, 3> k, std::array<std::int64_t, 3> a,
                                  std::array<Boundary, 3> mode, double ghost) {
  std::vector<double> cur = ones;
  for (int axis = 2; axis >= 0; --axis) {
    std::vector<double> next(cur.size(), 0.0);
    const std::int64_t stride = axis == 2 ? 1 : axis == 1 ? n[2] : n[1] * n[2];
    for (std::int64_t p = 0; p < std::int64_t(cur.size()); ++p) {
      const std::int64_t i = p / stride % n[std::size_t(axis)];
      double s = 0;
      for (std::int64_t j = 0; j < k[std::size_t(axis)]; ++j) {
        const std::int64_t m = detail::map_index(i - a[std::size_t(axis)] + j, n[std::size_t(axis)],
                                                 mode[std::size_t(axis)]);
        s += m < 0 ? ghost : cur[std::size_t(p + (m - i) * stride)];
      }
      next[std::size_t(p)] = s;
    }
    ghost *= double(k[std::size_t(axis)]);
    cur = std::move(next);
  }
  return cur;
}

struct BoxCase {
  int rank = 1;
  Extents ext{1, 1, 1};
  std::vector<std::int64_t> k;
  bool product = false;
  Options opt;
  std::string text;
};

// Runs the case on `strategy` ("" for auto on the CPU backend) over a batch of five items: the
// four constants, then a binary mask with uniform regions. Returns the failures' count (adding a
// failure naming the first).
template <class T>
int run_case(const BoxCase& c, const std::string& strategy, bool direct_sums) {
  const auto n = canonical3(c.rank, c.ext);
  const std::int64_t item = n[0] * n[1] * n[2];
  constexpr int kItems = 5;
  std::vector<T> in(std::size_t(item * kItems));
  for (int i = 0; i < 4; ++i)
    std::fill(in.begin() + i * item, in.begin() + (i + 1) * item, T(kConstants[i]));
  // The mask: ones in the lower half of x (a region wider than any box in some cases), then a
  // random band, zeros beyond.
  std::vector<double> mask(static_cast<std::size_t>(item));
  std::bernoulli_distribution coin(0.5);
  for (std::int64_t p = 0; p < item; ++p) {
    const std::int64_t x = p % n[2];
    mask[std::size_t(p)] = x < n[2] / 2 ? 1.0 : x < 3 * n[2] / 4 ? double(coin(rng())) : 0.0;
    in[std::size_t(4 * item + p)] = T(mask[std::size_t(p)]);
  }
  const Filter f = box(c.k, c.product);
  Options o = c.opt;
  o.strategy = strategy;
  o.backend = Backend::cpu;
  o.direct_sums = direct_sums;
  std::vector<T> out(in.size(), T(-12345));
  const RunInfo info = apply(ConstArrayView(in.data(), dtype_of<T>(), c.rank, c.ext, kItems),
                             ArrayView{out.data(), dtype_of<T>(), c.rank, c.ext, kItems}, f, o);
  const std::string who = (strategy.empty() ? "auto (" + info.strategy + ")" : strategy) +
                          (direct_sums ? " with direct sums" : "") + " on " + c.text + " " +
                          (sizeof(T) == 4 ? "f32" : "f64");
  if (strategy.empty() && info.strategy != "cpu" && info.strategy != "cpu_separable") {
    ADD_FAILURE() << who << ": auto took a strategy that is not exact for boxes";
    return 1;
  }
  // The box in canonical form: extents, anchors (scipy.ndimage's), modes.
  std::array<std::int64_t, 3> k{1, 1, 1}, a{0, 0, 0};
  std::array<Boundary, 3> mode{Boundary::constant, Boundary::constant, Boundary::constant};
  double taps = 1;
  for (int d = 0; d < c.rank; ++d) {
    const std::size_t i = std::size_t(3 - c.rank + d);
    const std::int64_t kd = c.k[std::size_t(d)], od = c.opt.edges.origin[d];
    k[i] = kd;
    a[i] = c.opt.op == Op::correlate ? kd / 2 + od : kd - 1 - kd / 2 - od;
    mode[i] = c.opt.edges.mode[d];
    taps *= double(kd);
  }
  const double cval = c.opt.edges.cval;
  int wrong = 0;
  const auto check = [&](std::int64_t at, T want, const char* what) {
    const T got = out[std::size_t(at)];
    if (got == want) return;
    if (wrong++ == 0)
      ADD_FAILURE() << who << ": " << what << ", output " << at % item << " of item " << at / item
                    << " is " << std::setprecision(17) << double(got) << ", not "
                    << double(want);
  };
  // The constants: exact wherever every tap reads the constant (everywhere but near the edges
  // of constant mode with another cval).
  const std::vector<double> all(static_cast<std::size_t>(item), 1.0);
  for (int i = 0; i < 4; ++i) {
    const T v = T(kConstants[i]);
    const std::vector<double> count =
        window_counts(all, n, k, a, mode, T(cval) == v ? 1.0 : 0.0);
    for (std::int64_t p = 0; p < item; ++p)
      if (count[std::size_t(p)] == taps) check(i * item + p, v, "a constant");
  }
  // The mask: the count divided by the size, rounded once (cval 0 or 1 counts as a value).
  const std::vector<double> count = window_counts(mask, n, k, a, mode, cval);
  for (std::int64_t p = 0; p < item; ++p)
    check(4 * item + p, T(count[std::size_t(p)]) / T(taps), "the mask");
  return wrong;
}

// Every size 2..33 of one rank: cubic boxes, and a few of unequal sides; arrays larger than the
// box (3-D: up to 10, beyond that folded) and smaller (folded), every mode, both ops, origins.
template <class T>
void sweep(int rank) {
  int failures = 0;
  for (std::int64_t K = 2; K <= 33 && failures == 0; ++K) {
    for (int shape = 0; shape < 2 && failures == 0; ++shape) {
      for (const Boundary m : kModes) {
        BoxCase c;
        c.rank = rank;
        std::int64_t ne = shape == 0 ? K + 3 : std::max<std::int64_t>(1, K / 2);
        if (rank == 3)
          ne = shape == 0 ? std::min<std::int64_t>(K + 1, 10) : std::max<std::int64_t>(1, K / 3);
        for (int d = 0; d < rank; ++d) {
          c.ext[d] = ne + d;  // unequal extents
          // Unequal sides for some sizes: one axis one shorter.
          c.k.push_back(K % 5 == 0 && d == 0 ? K - 1 : K);
        }
        c.product = K % 2 == 0;
        c.opt.op = (K / 2) % 2 ? Op::convolve : Op::correlate;
        c.opt.edges.mode[0] = c.opt.edges.mode[1] = c.opt.edges.mode[2] = m;
        c.opt.edges.cval = K % 3 == 0 ? 1.0 : 0.0;
        for (int d = 0; d < rank; ++d)
          c.opt.edges.origin[d] = K % 7 == 0 ? -(c.k[std::size_t(d)] / 2) : 0;
        std::ostringstream os;
        os << rank << "D ";
        for (int d = 0; d < rank; ++d) os << (d ? "x" : "") << c.ext[d];
        os << ", box ";
        for (int d = 0; d < rank; ++d) os << (d ? "x" : "") << c.k[std::size_t(d)];
        os << (c.product ? " (product of 1/K)" : " (1/taps)") << ", " << to_string(c.opt.op)
           << ", " << to_string(m) << " cval " << c.opt.edges.cval << ", origin "
           << c.opt.edges.origin[0];
        c.text = os.str();
        const Problem p(rank, c.ext, 1, box(c.k, c.product), dtype_of<T>(), c.opt.op,
                        c.opt.edges);
        for (const std::string s : {"cpu", "cpu_separable"})
          if (find_strategy(s)->can_implement(p)) failures += run_case<T>(c, s, false);
        failures += run_case<T>(c, "", false);
        failures += run_case<T>(c, "", true);
      }
    }
  }
}

TEST(BoxExact, Rank1F32) { sweep<float>(1); }
TEST(BoxExact, Rank1F64) { sweep<double>(1); }
TEST(BoxExact, Rank2F32) { sweep<float>(2); }
TEST(BoxExact, Rank2F64) { sweep<double>(2); }
TEST(BoxExact, Rank3F32) { sweep<float>(3); }
TEST(BoxExact, Rank3F64) { sweep<double>(3); }

// The issue's reproducers: uniform_filter(np.ones((8, 8)), 5)[4, 4] and
// uniform_filter(np.full((8, 8), 7.), 3), reflect mode, the factors' product as the module
// builds it.
TEST(BoxExact, IssueReproducers) {
  for (const auto& [value, K] : {std::pair<double, std::int64_t>{1.0, 5}, {7.0, 3}}) {
    std::vector<double> in(64, value), out(64, 0.0);
    Options o;
    o.edges.mode[0] = o.edges.mode[1] = Boundary::reflect;
    apply(ConstArrayView(in.data(), DType::f64, 2, Extents{8, 8, 1}),
          ArrayView{out.data(), DType::f64, 2, Extents{8, 8, 1}}, box({K, K}, true), o);
    for (double v : out) ASSERT_EQ(v, value) << K << "x" << K;
  }
}

// A box whose weights were read as float32 (1/9 rounded to 24 bits, a weights file) is the mean
// it stands for on float32 data, as SciPy's float64 sum of them rounds to the constant; on
// float64 data it is the filter it is (SciPy's sum is not the constant there either).
TEST(BoxExact, Float32WeightsOfAMeanOnFloat32Data) {
  for (const std::int64_t K : {3, 5, 7}) {
    const Filter f(std::vector<double>(std::size_t(K * K), double(1.0f / float(K * K))), {K, K});
    for (const std::string s : {"cpu", "cpu_separable", ""}) {
      std::vector<float> in(40 * 50, 7.0f), out(in.size(), 0.0f);
      Options o;
      o.strategy = s;
      o.backend = Backend::cpu;
      o.edges.mode[0] = o.edges.mode[1] = Boundary::reflect;
      const RunInfo info = apply(ConstArrayView(in.data(), DType::f32, 2, Extents{40, 50, 1}),
                                 ArrayView{out.data(), DType::f32, 2, Extents{40, 50, 1}}, f, o);
      for (float v : out) ASSERT_EQ(v, 7.0f) << info.strategy << " box " << K;
    }
  }
}

// Boxes of each path on arrays of 16 MiB and more: the running sums (x by vectors, y and z by
// rows), their restarts, non-temporal stores and several threads' units (`cpu` on the boxes of
// up to 255 taps).
TEST(BoxExact, LargeArraysEveryPath) {
  struct Big {
    int rank;
    Extents ext;
    std::vector<std::int64_t> k;
  };
  for (const Big& b : {Big{1, {1 << 22, 1, 1}, {255}}, Big{1, {1 << 22, 1, 1}, {5}},
                       Big{2, {2100, 2050, 1}, {31, 31}}, Big{2, {2100, 2050, 1}, {3, 3}},
                       Big{2, {2100, 2050, 1}, {2, 2}}, Big{3, {160, 160, 170}, {9, 9, 9}},
                       Big{3, {160, 160, 170}, {2, 2, 2}}}) {
    std::int64_t count = 1, taps = 1;
    for (int d = 0; d < b.rank; ++d) count *= b.ext[d];
    for (std::int64_t e : b.k) taps *= e;
    for (const std::string s : {"cpu", "cpu_separable", ""}) {
      if (s == "cpu" && taps > 255) continue;
      std::vector<float> in(std::size_t(count), 7.0f), out(in.size(), 0.0f);
      Options o;
      o.strategy = s;
      o.backend = Backend::cpu;
      o.edges.mode[0] = o.edges.mode[1] = o.edges.mode[2] = Boundary::nearest;
      const Problem p(b.rank, b.ext, 1, box(b.k, true), DType::f32, o.op, o.edges);
      if (!s.empty() && !find_strategy(s)->can_implement(p)) continue;
      const RunInfo info = apply(ConstArrayView(in.data(), DType::f32, b.rank, b.ext),
                                 ArrayView{out.data(), DType::f32, b.rank, b.ext},
                                 box(b.k, true), o);
      std::int64_t bad = 0, first = -1;
      for (std::size_t i = 0; i < out.size(); ++i)
        if (out[i] != 7.0f && bad++ == 0) first = std::int64_t(i);
      EXPECT_EQ(bad, 0) << info.strategy << " on " << p.describe() << ": first at " << first
                        << " is " << (first >= 0 ? out[std::size_t(first)] : 0.0f);
    }
  }
}

}  // namespace
}  // namespace halo::test
