// NaN and infinities: every strategy, through apply(), against the reference, which gives
// SciPy's answers (the reference itself is checked against SciPy in tests/python/
// test_nonfinite.py and against hand-worked cases below). Each output must be NaN, +inf or -inf
// exactly where the reference's is, and finite values within a bound. Random cases: ranks 1-3,
// sizes at tile edges and primes, 1-element axes, filters larger than the input, every mode per
// axis, origins, cval including NaN and infinities, both ops, both footprints, both dtypes;
// filters dense, with zero weights, rank-1 (zeros in the factors), boxes, low-rank and large
// dense ones; a few NaN and infinities placed at random in the input, edges included. Outputs are
// poisoned with a finite value far from any result (NaN would be repaired, not caught).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <tuple>

#include "core/nonfinite.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

constexpr double kPoison = 1.25e37;

enum class Kind { dense, zeros, rank1, box, lowrank, large };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::dense: return "dense";
    case Kind::zeros: return "zeros";
    case Kind::rank1: return "rank1";
    case Kind::box: return "box";
    case Kind::lowrank: return "lowrank";
    case Kind::large: return "large";
  }
  return "?";
}

std::int64_t pick(std::initializer_list<std::int64_t> v) {
  std::uniform_int_distribution<std::size_t> d(0, v.size() - 1);
  return *(v.begin() + d(rng()));
}

// A filter of `kind` with extents `k`.
Filter make_filter(Kind kind, const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  for (auto e : k) n *= e;
  switch (kind) {
    case Kind::dense:
    case Kind::large:
      return random_filter(k);
    case Kind::zeros: {
      std::vector<double> w = random_vector<double>(n);
      std::bernoulli_distribution z(0.4);
      for (auto& x : w)
        if (z(rng())) x = 0;
      w[std::size_t(n / 2)] = 1.5;  // never all zero
      return Filter(w, k);
    }
    case Kind::rank1: {
      std::vector<std::vector<double>> f;
      for (auto e : k) {
        std::vector<double> v = random_vector<double>(e);
        if (e > 2) v[std::size_t(std::uniform_int_distribution<std::int64_t>(0, e - 1)(rng()))] = 0;
        f.push_back(v);
      }
      return outer_product(f);
    }
    case Kind::box:
      return Filter(std::vector<double>(std::size_t(n), 1.0 / double(n)), k);
    case Kind::lowrank: {
      const Filter a = random_outer_product(k), b = random_outer_product(k);
      std::vector<double> w(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) w[std::size_t(i)] = a.weights()[i] - b.weights()[i];
      return Filter(w, k);
    }
  }
  return random_filter(k);
}

struct RandomCase {
  int rank = 1;
  Extents ext{1, 1, 1};
  std::int64_t batch = 1;
  std::vector<std::int64_t> k;
  Kind kind = Kind::dense;
  Options opt;
  std::string text;
};

RandomCase random_case() {
  RandomCase c;
  std::uniform_int_distribution<int> rank(1, 3);
  c.rank = rank(rng());
  c.kind = Kind(std::uniform_int_distribution<int>(0, 5)(rng()));
  for (int a = 0; a < c.rank; ++a) {
    if (c.rank == 1)
      c.ext[a] = pick({1, 2, 7, 31, 32, 33, 127, 257, 1021, 4099, 40000});
    else if (c.rank == 2)
      c.ext[a] = pick({1, 2, 5, 16, 17, 31, 33, 64, 129});
    else
      c.ext[a] = pick({1, 2, 3, 8, 9, 17, 33});
    std::int64_t k;
    if (c.kind == Kind::large)
      k = c.rank == 1 ? pick({65, 129, 257, 513}) : c.rank == 2 ? pick({15, 17, 25, 33}) : pick({7, 9});
    else
      k = c.rank == 3 ? pick({1, 2, 3, 4, 5}) : pick({1, 2, 3, 4, 5, 7, 9, 12});
    c.k.push_back(k);
  }
  c.batch = std::bernoulli_distribution(0.15)(rng()) ? 2 : 1;
  const Boundary modes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                            Boundary::mirror, Boundary::wrap};
  const double cvals[] = {0.0, 0.0, 0.0, 1.5, -2.25, std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
  const bool same = std::bernoulli_distribution(0.6)(rng());
  const Boundary m0 = modes[std::uniform_int_distribution<int>(0, 4)(rng())];
  for (int a = 0; a < c.rank; ++a) {
    c.opt.edges.mode[a] = same ? m0 : modes[std::uniform_int_distribution<int>(0, 4)(rng())];
    const std::int64_t k = c.k[std::size_t(a)];
    c.opt.edges.origin[a] =
        std::bernoulli_distribution(0.3)(rng())
            ? std::uniform_int_distribution<std::int64_t>(-(k / 2), (k - 1) / 2)(rng())
            : 0;
  }
  c.opt.edges.cval = cvals[std::uniform_int_distribution<int>(0, 7)(rng())];
  c.opt.op = std::bernoulli_distribution(0.5)(rng()) ? Op::convolve : Op::correlate;
  c.opt.footprint = std::bernoulli_distribution(0.5)(rng()) ? Footprint::every : Footprint::nonzero;
  std::ostringstream os;
  os << c.rank << "D ";
  for (int a = 0; a < c.rank; ++a) os << (a ? "x" : "") << c.ext[a];
  os << " batch " << c.batch << ", " << kind_name(c.kind) << " filter ";
  for (std::size_t a = 0; a < c.k.size(); ++a) os << (a ? "x" : "") << c.k[a];
  os << ", " << to_string(c.opt.op) << ", modes";
  for (int a = 0; a < c.rank; ++a) os << " " << to_string(c.opt.edges.mode[a]);
  os << ", cval " << c.opt.edges.cval << ", origin";
  for (int a = 0; a < c.rank; ++a) os << " " << c.opt.edges.origin[a];
  os << ", footprint " << to_string(c.opt.footprint);
  c.text = os.str();
  return c;
}

// A few NaN and infinities at random places, the first and last elements among the candidates.
template <class T>
void place_nonfinite(std::vector<T>& v) {
  const std::int64_t n = std::int64_t(v.size());
  const int count = int(std::uniform_int_distribution<int>(1, 4)(rng()));
  const T values[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity()};
  for (int i = 0; i < count; ++i) {
    std::int64_t at = std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng());
    const int edge = std::uniform_int_distribution<int>(0, 5)(rng());
    if (edge == 0) at = 0;
    if (edge == 1) at = n - 1;
    v[std::size_t(at)] = values[std::uniform_int_distribution<int>(0, 2)(rng())];
  }
}

int category(double v) {
  if (std::isnan(v)) return 1;
  if (std::isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

// Runs `strategy` on the case through apply() and compares with the reference; returns the
// number of outputs whose category differs (and adds a failure naming the first).
template <class T>
int check_case(const std::string& strategy, const RandomCase& c, const Filter& f,
               const std::vector<T>& in) {
  const ConstArrayView iv(in.data(), dtype_of<T>(), c.rank, c.ext, c.batch);
  std::vector<T> ref(in.size(), T(kPoison)), out(in.size(), T(kPoison));
  Options o = c.opt;
  o.strategy = "reference";
  apply(iv, ArrayView{ref.data(), dtype_of<T>(), c.rank, c.ext, c.batch}, f, o);
  o.strategy = strategy;
  apply(iv, ArrayView{out.data(), dtype_of<T>(), c.rank, c.ext, c.batch}, f, o);
  // A coarse bound on finite values (the strategies' own bounds are tested elsewhere): the taps
  // times eps times |w|_1 times the largest finite |input| or |cval|.
  double xmax = std::isfinite(c.opt.edges.cval) ? std::fabs(c.opt.edges.cval) : 0.0;
  for (T x : in)
    if (std::isfinite(double(x))) xmax = std::max(xmax, std::fabs(double(x)));
  double w1 = 0;
  for (double w : f.weights()) w1 += std::fabs(w);
  const double tol = 64.0 * double(f.taps() + 8) * std::numeric_limits<T>::epsilon() * w1 * xmax;
  int wrong = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double r = double(ref[i]), s = double(out[i]);
    const bool bad = category(r) != category(s) || (category(r) == 0 && !(std::fabs(r - s) <= tol));
    if (bad && wrong++ == 0)
      ADD_FAILURE() << strategy << " on " << c.text << " (" << (sizeof(T) == 4 ? "f32" : "f64")
                    << ", seed " << fresh_seed() << "): output " << i << " is " << s
                    << ", the reference's " << r << " (bound " << tol << ")";
  }
  return wrong;
}

std::vector<const Strategy*> testable_strategies() {
  std::vector<const Strategy*> v;
  for (const Strategy* s : strategies()) {
    if (s->name() == "reference") continue;
    if (s->backend() == Backend::cuda && !cuda_available()) continue;
    v.push_back(s);
  }
  return v;
}

// Every strategy, random cases; a strategy that cannot implement a case skips it.
template <class T>
void differential(int cases) {
  int runs = 0;
  for (int n = 0; n < cases; ++n) {
    const RandomCase c = random_case();
    const Filter f = make_filter(c.kind, c.k);
    std::int64_t count = c.batch;
    for (int a = 0; a < c.rank; ++a) count *= c.ext[a];
    std::vector<T> in = random_vector<T>(count);
    place_nonfinite(in);
    Problem p(c.rank, c.ext, c.batch, f, dtype_of<T>(), c.opt.op, c.opt.edges);
    p.set_footprint(c.opt.footprint);
    for (const Strategy* s : testable_strategies()) {
      if (!s->can_implement(p)) continue;
      ++runs;
      // HALO_TEST_TRACE set: each case on stderr before it runs (a crash then names it).
      if (std::getenv("HALO_TEST_TRACE"))
        std::fprintf(stderr, "%s on %s (seed %llu)\n", s->name().c_str(), c.text.c_str(),
                     static_cast<unsigned long long>(fresh_seed()));
      if (check_case(s->name(), c, f, in)) return;  // one failure tells the case
    }
  }
  EXPECT_GT(runs, cases);  // the strategies ran, several per case
}

TEST(NonFinite, EveryStrategyGivesTheReferencesNaNsAndInfinitiesF32) { differential<float>(300); }
TEST(NonFinite, EveryStrategyGivesTheReferencesNaNsAndInfinitiesF64) { differential<double>(300); }

// The reference by hand (SciPy's answers, from the reproducers).
template <class T>
std::vector<T> run_with(const std::string& strategy, std::vector<T> in, int rank, Extents ext,
                        const Filter& f, Options o) {
  std::vector<T> out(in.size(), T(kPoison));
  o.strategy = strategy;
  apply(ConstArrayView(in.data(), dtype_of<T>(), rank, ext),
        ArrayView{out.data(), dtype_of<T>(), rank, ext}, f, o);
  return out;
}

std::vector<std::string> cpu_and_cuda_strategies() {
  std::vector<std::string> v{"reference"};
  for (const Strategy* s : testable_strategies()) v.push_back(s->name());
  return v;
}

// A Laplacian of an infinity: the zero weights are not taps (SciPy's correlate gives
// [0 0 inf 0 0] on the row above the infinity; multiplying them gave NaN beside it).
TEST(NonFinite, ZeroWeightsAreNoTapsOfTheNDFunctions) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> a(25, 0.0);
  a[12] = inf;
  const Filter lap({0, 1, 0, 1, -4, 1, 0, 1, 0}, {3, 3});
  for (const std::string& s : cpu_and_cuda_strategies()) {
    SCOPED_TRACE(s);
    Options o;
    if (!find_strategy(s)->can_implement(Problem(2, {5, 5, 1}, 1, lap, DType::f64))) continue;
    const auto out = run_with(s, a, 2, {5, 5, 1}, lap, o);
    const std::vector<double> row1(out.begin() + 5, out.begin() + 10);
    EXPECT_EQ(row1, (std::vector<double>{0, 0, inf, 0, 0}));
    EXPECT_EQ(out[12], -inf);
    // Under SciPy's 1-D rule every weight is a tap: 0 * inf is NaN beside the infinity.
    o.footprint = Footprint::every;
    const auto every = run_with(s, a, 2, {5, 5, 1}, lap, o);
    EXPECT_TRUE(std::isnan(every[6]));
    EXPECT_EQ(every[7], inf);
  }
  // One NaN under a 3x3 filter with one non-zero weight: one NaN output (SciPy), not nine.
  std::vector<double> b(81, 0.0);
  b[40] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> w(9, 0.0);
  w[0] = 1;
  const Filter corner(w, {3, 3});
  for (const std::string& s : cpu_and_cuda_strategies()) {
    SCOPED_TRACE(s);
    if (!find_strategy(s)->can_implement(Problem(2, {9, 9, 1}, 1, corner, DType::f64))) continue;
    const auto out = run_with(s, b, 2, {9, 9, 1}, corner, {});
    EXPECT_EQ(std::count_if(out.begin(), out.end(), [](double v) { return std::isnan(v); }), 1);
    EXPECT_TRUE(std::isnan(out[50]));  // (5, 5) reads (4, 4)
  }
}

// An infinity in a running sum leaves as NaN unless repaired: SciPy's correlate1d with a box of
// 40 gives 0 beyond the infinity's reach (halo gave NaN at 31-59).
TEST(NonFinite, BoxRunningSumsDoNotLeakNaN) {
  std::vector<double> x(120, 0.0);
  x[10] = std::numeric_limits<double>::infinity();
  const Filter box(std::vector<double>(40, 1.0 / 40), {40});
  for (const std::string& s : cpu_and_cuda_strategies()) {
    SCOPED_TRACE(s);
    if (!find_strategy(s)->can_implement(Problem(1, {120, 1, 1}, 1, box, DType::f64))) continue;
    const auto out = run_with(s, x, 1, {120, 1, 1}, box, {});
    for (std::int64_t i = 0; i < 120; ++i) {
      // Output i reads x[i - 20 .. i + 19].
      const bool reached = i - 20 <= 10 && 10 <= i + 19;
      if (reached)
        EXPECT_EQ(out[std::size_t(i)], std::numeric_limits<double>::infinity()) << i;
      else
        EXPECT_EQ(out[std::size_t(i)], 0.0) << i;
    }
  }
  // One infinity in a 32x32 float32 image under box:9: no NaN at all (SciPy).
  std::vector<float> img(32 * 32, 0.5f);
  img[33 * 7] = std::numeric_limits<float>::infinity();
  const Filter box2(std::vector<double>(81, 1.0 / 81), {9, 9});
  for (const std::string& s : cpu_and_cuda_strategies()) {
    SCOPED_TRACE(s);
    if (!find_strategy(s)->can_implement(Problem(2, {32, 32, 1}, 1, box2, DType::f32))) continue;
    const auto out = run_with(s, img, 2, {32, 32, 1}, box2, {});
    EXPECT_EQ(std::count_if(out.begin(), out.end(), [](float v) { return std::isnan(v); }), 0);
    EXPECT_EQ(std::count_if(out.begin(), out.end(), [](float v) { return std::isinf(v); }), 81);
  }
}

// A 2-tap axis folded onto a 1-element axis and padded taps: an infinity stays an infinity
// (SciPy: 7 x inf for gaussian_filter(x, 0.7) on a 1x12 row; halo gave 7 NaN).
TEST(NonFinite, FoldedAndPaddedTapsKeepInfinities) {
  std::vector<double> x(12, 0.0);
  x[5] = std::numeric_limits<double>::infinity();
  // sigma 0.7: radius 3, 7 taps per axis; the 1-element axis 0 reads the row under every tap.
  std::vector<double> g(7);
  double s = 0;
  for (int i = 0; i < 7; ++i) s += g[std::size_t(i)] = std::exp(-0.5 * (i - 3) * (i - 3) / 0.49);
  for (auto& v : g) v /= s;
  std::vector<double> w(49);
  for (int i = 0; i < 49; ++i) w[std::size_t(i)] = g[std::size_t(i / 7)] * g[std::size_t(i % 7)];
  const Filter f(w, {7, 7});
  Options o;
  o.edges = Edges::all(Boundary::reflect);
  o.footprint = Footprint::every;
  for (const std::string& st : cpu_and_cuda_strategies()) {
    SCOPED_TRACE(st);
    if (!find_strategy(st)->can_implement(Problem(2, {1, 12, 1}, 1, f, DType::f64, Op::correlate,
                                                  o.edges)))
      continue;
    const auto out = run_with(st, x, 2, {1, 12, 1}, f, o);
    for (int i = 0; i < 12; ++i)
      EXPECT_EQ(out[std::size_t(i)], i >= 2 && i <= 8 ? std::numeric_limits<double>::infinity() : 0.0)
          << i;
  }
}

// cval = +inf on a 3x4x5 array with a 4x4x4 box of ones: every output reads a ghost, so every
// output is +inf (SciPy), under convolve and correlate.
TEST(NonFinite, InfiniteCval) {
  std::vector<double> v = random_vector<double>(60);
  const Filter ones(std::vector<double>(64, 1.0), {4, 4, 4});
  for (Op op : {Op::correlate, Op::convolve})
    for (const std::string& s : cpu_and_cuda_strategies()) {
      SCOPED_TRACE(s);
      Options o;
      o.op = op;
      o.edges = Edges::all(Boundary::constant, std::numeric_limits<double>::infinity());
      if (!find_strategy(s)->can_implement(Problem(3, {3, 4, 5}, 1, ones, DType::f64, op, o.edges)))
        continue;
      const auto out = run_with(s, v, 3, {3, 4, 5}, ones, o);
      for (double x : out) EXPECT_EQ(x, std::numeric_limits<double>::infinity());
    }
}

// The repair's tap rule by hand: a folded tap of members of both signs gives NaN for an
// infinity, one of one sign the signed infinity, a finite value the weighted value.
TEST(NonFinite, RepairTermByHand) {
  using detail::repair_term;
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(repair_term(2.0, detail::kTapPositive, 3.0), 6.0);
  EXPECT_EQ(repair_term(0.0, detail::kTapPositive | detail::kTapNegative, 3.0), 0.0);
  EXPECT_TRUE(std::isnan(repair_term(0.0, detail::kTapPositive | detail::kTapNegative, inf)));
  EXPECT_EQ(repair_term(-1.0, detail::kTapNegative, inf), -inf);
  EXPECT_EQ(repair_term(-1.0, detail::kTapNegative, -inf), inf);
  EXPECT_TRUE(std::isnan(repair_term(0.0, detail::kTapZero, inf)));
  EXPECT_TRUE(std::isnan(repair_term(1.0, detail::kTapPositive, std::nan(""))));
}

}  // namespace
}  // namespace halo::test

namespace halo::test {
namespace {
// The small arrays under modes that `fast` runs by its border pass alone or in one launch.
TEST(NonFinite, SmallArraysUnderModes) {
  const Boundary m[] = {Boundary::mirror, Boundary::wrap, Boundary::reflect, Boundary::nearest,
                        Boundary::constant};
  for (int rep = 0; rep < 40; ++rep)
    for (const auto& [rank, ext, k] : std::vector<std::tuple<int, Extents, std::vector<std::int64_t>>>{
             {2, {16, 5, 1}, {3, 2}}, {3, {2, 9, 1}, {2, 1, 2}}, {2, {64, 31, 1}, {2, 2}},
             {3, {17, 8, 33}, {3, 1, 2}}, {2, {16, 129, 1}, {2, 2}}}) {
      RandomCase c;
      c.rank = rank;
      c.ext = ext;
      c.k = k;
      c.kind = Kind::zeros;
      for (int a = 0; a < rank; ++a) c.opt.edges.mode[a] = m[(rep + a) % 5];
      c.opt.edges.cval = rep % 2 ? std::numeric_limits<double>::infinity() : 1.5;
      c.opt.op = rep % 3 ? Op::convolve : Op::correlate;
      c.opt.footprint = rep % 2 ? Footprint::every : Footprint::nonzero;
      c.text = "small case " + std::to_string(rep);
      const Filter f = make_filter(c.kind, c.k);
      std::int64_t count = 1;
      for (int a = 0; a < rank; ++a) count *= ext[a];
      std::vector<float> in = random_vector<float>(count);
      place_nonfinite(in);
      for (const Strategy* s : testable_strategies()) {
        Problem p(rank, ext, 1, f, DType::f32, c.opt.op, c.opt.edges);
        p.set_footprint(c.opt.footprint);
        if (!s->can_implement(p)) continue;
        check_case(s->name(), c, f, in);
      }
    }
}
}  // namespace
}  // namespace halo::test
