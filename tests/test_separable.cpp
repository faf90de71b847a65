// Filter analysis (rank-1 factors) and rank-1 filters run as 1-D passes on the CPU.
#include <gtest/gtest.h>

#include <cmath>

#include "core/factor.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

// The outer product of random 1-D factors of the given extents.
Filter outer_product(const std::vector<std::int64_t>& shape,
                     std::vector<std::vector<double>>* factors = nullptr) {
  std::vector<std::vector<double>> f;
  for (std::int64_t k : shape) f.push_back(random_vector<double>(k));
  std::int64_t n = 1;
  for (std::int64_t k : shape) n *= k;
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
  if (factors) *factors = f;
  return Filter(w, shape);
}

TEST(FilterAnalysis, OuterProductsAreRankOneAndTheirFactorsRebuildThem) {
  for (const auto& shape : {std::vector<std::int64_t>{5, 7}, {1, 6}, {4, 3, 5}, {9}}) {
    const Filter f = outer_product(shape);
    const auto r = detail::rank_one_factors(f);
    ASSERT_TRUE(r) << f.shape_string();
    EXPECT_LE(r->residual, 1e-14) << f.shape_string();
    ASSERT_EQ(r->f.size(), shape.size());
    // The product of the factors is the filter.
    const Extents& e = f.extents();
    for (std::int64_t i = 0; i < f.taps(); ++i) {
      double prod = 1;
      std::int64_t rest = i;
      for (int a = f.rank() - 1; a >= 0; --a) {
        prod *= r->f[a][rest % e[a]];
        rest /= e[a];
      }
      EXPECT_NEAR(prod, f.weights()[i], 1e-14 * 4) << f.shape_string() << " weight " << i;
    }
  }
}

TEST(FilterAnalysis, FiltersOfHigherRankAreNotRankOne) {
  EXPECT_FALSE(detail::rank_one_factors(random_filter({5, 5})));
  EXPECT_FALSE(detail::rank_one_factors(random_filter({3, 4, 2})));
  EXPECT_FALSE(detail::rank_one_factors(make_named_filter("laplacian", 2)));
  // A rank-1 filter with one weight changed by 1e-9 of the largest is not rank 1 any more.
  Filter f = outer_product({4, 6});
  std::vector<double> w = f.weights();
  double top = 0;
  for (double x : w) top = std::fmax(top, std::fabs(x));
  w[7] += 1e-9 * top;
  EXPECT_FALSE(detail::rank_one_factors(Filter(w, {4, 6})));
}

TEST(FilterAnalysis, NamedSeparableFiltersAreRankOne) {
  for (const std::string& name : {"gaussian:sigma=2", "box:5", "sobel-x", "sobel-y"}) {
    const auto r = detail::rank_one_factors(make_named_filter(name, 2));
    ASSERT_TRUE(r) << name;
    EXPECT_LE(r->residual, 1e-15) << name;
  }
  const auto zero = detail::rank_one_factors(Filter(std::vector<double>(6, 0.0), {2, 3}));
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->f[0], std::vector<double>(2, 0.0));
  EXPECT_EQ(zero->f[1], std::vector<double>(3, 0.0));
}

TEST(FilterAnalysis, PlanRunsTheContiguousAxisFirstAndScalesCvalForLaterPasses) {
  std::vector<std::vector<double>> f;
  const Filter filter = outer_product({3, 4, 5}, &f);
  Edges e = Edges::all(Boundary::constant, 2.0);
  e.origin = {1, -1, 2};
  const auto plan = detail::separable_plan(filter, 3, e);
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->passes.size(), 3u);
  EXPECT_EQ(plan->direct_taps, 60);
  EXPECT_EQ(plan->pass_taps, 12);
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  // The factors are scaled against those of the test (the largest weight's fibres), but their
  // products are the same: compare the sums that reach the cvals through the products.
  const auto r = detail::rank_one_factors(filter);
  const double sx = sum(r->f[2]), sy = sum(r->f[1]);
  EXPECT_EQ(plan->passes[0].axis, 2);
  EXPECT_EQ(plan->passes[1].axis, 1);
  EXPECT_EQ(plan->passes[2].axis, 0);
  EXPECT_EQ(plan->passes[0].edges.cval, 2.0);
  EXPECT_DOUBLE_EQ(plan->passes[1].edges.cval, 2.0 * sx);
  EXPECT_DOUBLE_EQ(plan->passes[2].edges.cval, 2.0 * sx * sy);
  EXPECT_EQ(plan->passes[0].edges.origin, (std::array<std::int64_t, 3>{0, 0, 2}));
  EXPECT_EQ(plan->passes[1].edges.origin, (std::array<std::int64_t, 3>{0, -1, 0}));
  EXPECT_EQ(plan->passes[2].edges.origin, (std::array<std::int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(plan->passes[0].filter.extents(), (Extents{1, 1, 5}));
  EXPECT_EQ(plan->passes[2].filter.extents(), (Extents{3, 1, 1}));
  // One axis longer than 1, or a filter of rank 1: nothing to split.
  EXPECT_FALSE(detail::separable_plan(outer_product({1, 9}), 2, e));
  EXPECT_FALSE(detail::separable_plan(outer_product({9}), 1, e));
  EXPECT_FALSE(detail::separable_plan(random_filter({4, 4}), 2, e));
}

// apply() on the CPU under `auto`; the result against the float64 reference of the dense filter,
// held to the passes' bound where it ran as passes (docs/ACCURACY.md: the sum of the passes'
// taps, and one rounding of each intermediate array), else the direct sum's. Returns the
// mismatch, or ""; the run's note in *note and its passes in *passes_run.
template <class T>
std::string passes_match(int rank, Extents ext, std::int64_t batch, const Filter& f, Op op,
                         const Edges& edges, bool direct_sums, std::string* note,
                         int* passes_run = nullptr) {
  Problem p(rank, ext, batch, f, dtype_of<T>(), op, edges);
  const std::int64_t n = p.elements();
  const std::vector<T> in = random_vector<T>(n);
  std::vector<T> out(static_cast<std::size_t>(n));
  poison(out);
  std::vector<double> ref(static_cast<std::size_t>(n)), scale(static_cast<std::size_t>(n));
  cpu::reference_f64(p, in.data(), ref.data());
  cpu::reference_f64(p, in.data(), scale.data(), /*absolute=*/true);
  std::int64_t pass_taps = 0, passes = 0;
  for (int a = 0; a < rank; ++a)
    if (f.extents()[a] > 1) pass_taps += f.extents()[a], ++passes;
  Options opt;
  opt.backend = Backend::cpu;
  opt.op = op;
  opt.edges = edges;
  opt.direct_sums = direct_sums;
  const RunInfo info = apply(ConstArrayView(in.data(), p.dtype(), rank, ext, batch),
                             array_view(out, rank, ext, batch), f, opt);
  *note = info.note;
  if (passes_run) *passes_run = info.passes;
  for (std::int64_t i = 0; i < n; ++i) {
    const double tol = info.passes > 0 ? tolerance<T>(pass_taps + passes, scale[i])
                                       : tolerance<T>(p.taps(), scale[i]);
    if (!(std::fabs(double(out[i]) - ref[i]) <= tol)) {
      std::ostringstream os;
      os.precision(9);
      os << p.describe() << ": at " << i << " got " << out[i] << ", want " << ref[i]
         << " (tolerance " << tol << "); seed " << fresh_seed();
      return os.str();
    }
  }
  return "";
}

const char* kPasses = "1-D passes";

TEST(Separable, RankOneFiltersRunAsPassesUnderEveryModeOriginAndOp) {
  const Boundary C = Boundary::constant, N = Boundary::nearest, F = Boundary::reflect,
                 M = Boundary::mirror, W = Boundary::wrap;
  std::vector<Edges> edges;
  for (Boundary m : {C, N, F, M, W}) edges.push_back(Edges::all(m, 1.5));
  Edges mix;
  mix.mode = {W, C, F};
  mix.cval = -0.75;
  mix.origin = {1, -1, 0};
  edges.push_back(mix);
  Edges shifted = Edges::all(C, 2.5);
  shifted.origin = {-2, 1, 1};
  edges.push_back(shifted);
  struct Case {
    int rank;
    Extents ext;
    std::int64_t batch;
    std::vector<std::int64_t> filter;
  };
  // Tile-edge and prime sizes, a 1-element axis, filters larger than the input, even extents,
  // a batch.
  const std::vector<Case> cases = {{2, {37, 53, 1}, 1, {17, 19}},  {2, {16, 17, 1}, 2, {18, 16}},
                                   {2, {1, 40, 1}, 1, {17, 17}},   {2, {5, 3, 1}, 1, {21, 17}},
                                   {3, {9, 11, 13}, 1, {9, 9, 9}}, {3, {1, 7, 20}, 2, {8, 10, 7}},
                                   {3, {6, 2, 5}, 1, {11, 7, 9}}};
  int i = 0;
  for (const Case& c : cases)
    for (const Edges& e : edges) {
      const Filter f = outer_product(c.filter);
      const Op op = i++ % 2 ? Op::convolve : Op::correlate;
      std::string note;
      int passes = 0;
      EXPECT_EQ(passes_match<float>(c.rank, c.ext, c.batch, f, op, e, false, &note, &passes), "");
      EXPECT_NE(note.find(kPasses), std::string::npos) << note;
      EXPECT_EQ(passes, c.rank);
      EXPECT_EQ(passes_match<double>(c.rank, c.ext, c.batch, f, op, e, false, &note), "");
      EXPECT_NE(note.find(kPasses), std::string::npos) << note;
    }
}

TEST(Separable, DenseFiltersDirectSumsAndSmallFiltersRunDirect) {
  std::string note;
  const Edges e = Edges::all(Boundary::reflect);
  EXPECT_EQ(passes_match<float>(2, {20, 30, 1}, 1, random_filter({17, 17}), Op::correlate, e, false,
                                &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  EXPECT_EQ(passes_match<float>(2, {20, 30, 1}, 1, outer_product({17, 17}), Op::correlate, e, true,
                                &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  // 11x11 and 5x5x5: the taps saved do not pay for the passes over the array.
  EXPECT_EQ(passes_match<float>(2, {20, 30, 1}, 1, outer_product({11, 11}), Op::correlate, e, false,
                                &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  EXPECT_EQ(passes_match<float>(3, {6, 8, 9}, 1, outer_product({5, 5, 5}), Op::correlate, e, false,
                                &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  // An explicit strategy runs as asked.
  EXPECT_EQ(check_strategy<float>("cpu", 2, {20, 30, 1}, 1, outer_product({17, 17}), Op::correlate,
                                  false, e),
            "");
}

}  // namespace
}  // namespace halo::test
