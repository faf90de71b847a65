// Filter analysis (rank-1 factors) and rank-1 filters run as 1-D passes on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/factor.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

TEST(FilterAnalysis, OuterProductsAreRankOneAndTheirFactorsRebuildThem) {
  for (const auto& shape : {std::vector<std::int64_t>{5, 7}, {1, 6}, {4, 3, 5}, {9}}) {
    const Filter f = random_outer_product(shape);
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
  Filter f = random_outer_product({4, 6});
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
  const Filter filter = random_outer_product({3, 4, 5}, &f);
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
  EXPECT_FALSE(detail::separable_plan(random_outer_product({1, 9}), 2, e));
  EXPECT_FALSE(detail::separable_plan(random_outer_product({9}), 1, e));
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
      const Filter f = random_outer_product(c.filter);
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
  EXPECT_EQ(passes_match<float>(2, {20, 30, 1}, 1, random_outer_product({17, 17}), Op::correlate, e,
                                true, &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  // 11x11 and 5x5x5: the taps saved do not pay for the passes over the array.
  EXPECT_EQ(passes_match<float>(2, {20, 30, 1}, 1, random_outer_product({11, 11}), Op::correlate, e,
                                false, &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  EXPECT_EQ(passes_match<float>(3, {6, 8, 9}, 1, random_outer_product({5, 5, 5}), Op::correlate, e,
                                false, &note),
            "");
  EXPECT_EQ(note.find(kPasses), std::string::npos) << note;
  // An explicit strategy runs as asked.
  EXPECT_EQ(check_strategy<float>("cpu", 2, {20, 30, 1}, 1, random_outer_product({17, 17}),
                                  Op::correlate, false, e),
            "");
}

// ---------------------------------------------------------------------------------------------
// The `separable` CUDA strategy: rank-1 filters as fused 1-D passes on the GPU.
// ---------------------------------------------------------------------------------------------
TEST(FilterAnalysis, SeparableWindowsCentreEachFactorAndCarryTheScale) {
  std::vector<std::vector<double>> f;
  const Filter filter = random_outer_product({1, 3, 6}, &f);
  Edges e;
  e.origin = {0, 1, -2};
  const Problem p(3, {5, 6, 7}, 1, filter, DType::f32, Op::correlate, e);
  const auto w = detail::separable_windows(p);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->long_axes, 2);
  EXPECT_EQ(w->taps, 9);
  // y: 3 taps, anchor 1 + 1 = 2: radius 2, taps at offsets -2..0. x: 6 taps, anchor 3 - 2 = 1:
  // radius 4, taps at offsets -1..4. z: one tap, its weight carried by x.
  EXPECT_EQ(w->radius, (std::array<int, 3>{0, 2, 4}));
  ASSERT_EQ(w->w[0].size(), 1u);
  EXPECT_EQ(w->w[0][0], 1.0);
  // Products of the windows' weights equal the problem's correlation weights.
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  for (std::int64_t jy = 0; jy < k.y; ++jy)
    for (std::int64_t jx = 0; jx < k.x; ++jx) {
      const double want = p.correlation_weights()[std::size_t(jy * k.x + jx)];
      const double got = w->w[1][std::size_t(2 + jy - a.y)] * w->w[2][std::size_t(4 + jx - a.x)];
      EXPECT_NEAR(got, want, 1e-15) << jy << ", " << jx;
    }
  EXPECT_EQ(w->w[1][3], 0.0);  // beyond the y factor's last tap
  EXPECT_EQ(w->w[2][0], 0.0);  // before the x factor's first tap
  EXPECT_FALSE(
      detail::separable_windows(Problem(2, {9, 9, 1}, 1, random_filter({3, 3}), DType::f32)));
}

std::vector<Edges> gpu_edges() {
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

// Every pass kind: x alone (rows of one strip and, above 2048 columns, strips of one row), y
// alone, x and y fused, z alone, and two passes; strip and chunk edges, primes, 1-element axes,
// filters larger than the input (folded), even extents, every compiled radius class, batches.
TEST(SeparableCuda, MatchesTheReferenceOnEveryPassKindModeAndOp) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  struct C {
    int rank;
    Extents ext;
    std::int64_t batch;
    std::vector<std::int64_t> filter;
  };
  const std::vector<C> cases = {{1, {5000, 1, 1}, 1, {127}},    {1, {300, 1, 1}, 3, {31}},
                                {1, {2100, 1, 1}, 2, {33}},     {1, {7, 1, 1}, 1, {25}},
                                {2, {300, 2100, 1}, 1, {9, 9}}, {2, {100, 77, 1}, 1, {65, 65}},
                                {2, {70, 513, 1}, 1, {1, 25}},  {2, {3, 2500, 1}, 2, {1, 13}},
                                {2, {200, 40, 1}, 1, {31, 1}},  {2, {2, 1, 1}, 1, {3, 3}},
                                {2, {7, 5, 1}, 1, {21, 17}},    {2, {257, 255, 1}, 1, {18, 16}},
                                {2, {64, 256, 1}, 2, {5, 3}},   {2, {37, 1, 1}, 1, {5, 7}},
                                {2, {41, 300, 1}, 1, {49, 3}},  {3, {20, 30, 40}, 1, {9, 9, 9}},
                                {3, {40, 8, 9}, 1, {17, 1, 1}}, {3, {9, 10, 300}, 1, {1, 7, 5}},
                                {3, {12, 5, 7}, 2, {5, 1, 9}},  {3, {10, 13, 11}, 1, {3, 9, 1}},
                                {3, {1, 1, 2}, 1, {3, 3, 3}},   {3, {33, 17, 20}, 1, {25, 3, 3}},
                                // Radii 96 and 128 along x alone (a 1-D signal; 1 x 201 on rows
                                // of 3000: strips of a row).
                                {1, {5000, 1, 1}, 1, {255}},    {2, {3, 3000, 1}, 2, {1, 201}}};
  int ran = 0, i = 0;
  for (const C& c : cases)
    for (const Edges& edges : gpu_edges()) {
      const Filter f = random_outer_product(c.filter);
      const Op op = i++ % 2 ? Op::convolve : Op::correlate;
      Edges e = edges;  // origins within the filter's extents
      for (int a = 0; a < c.rank; ++a)
        e.origin[a] =
            std::clamp<std::int64_t>(e.origin[a], -(c.filter[a] / 2), (c.filter[a] - 1) / 2);
      const Problem p32(c.rank, c.ext, c.batch, f, DType::f32, op, e);
      const Status st = find_strategy("separable")->can_implement(p32);
      ASSERT_TRUE(st) << p32.describe() << ": " << st.reason;
      EXPECT_EQ(check_strategy<float>("separable", c.rank, c.ext, c.batch, f, op, false, e), "");
      const Problem p64(c.rank, c.ext, c.batch, f, DType::f64, op, e);
      if (find_strategy("separable")->can_implement(p64))
        EXPECT_EQ(check_strategy<double>("separable", c.rank, c.ext, c.batch, f, op, false, e), "");
      ++ran;
    }
  EXPECT_EQ(ran, int(cases.size() * gpu_edges().size()));
}

TEST(SeparableCuda, RefusesWhatItCannotRunAndSaysWhy) {
  const Strategy* s = find_strategy("separable");
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  ASSERT_NE(s, nullptr);
  const auto reason = [&](const Problem& p) { return s->can_implement(p).reason; };
  EXPECT_NE(reason(Problem(2, {50, 50, 1}, 1, random_filter({5, 5}), DType::f32)).find("rank 1"),
            std::string::npos);
  EXPECT_NE(reason(Problem(2, {300, 300, 1}, 1, random_outer_product({131, 3}), DType::f32))
                .find("radius up to 64"),
            std::string::npos);
  // Along x alone, up to 128.
  EXPECT_TRUE(
      s->can_implement(Problem(1, {3000, 1, 1}, 1, random_outer_product({257}), DType::f32)));
  EXPECT_NE(reason(Problem(1, {3000, 1, 1}, 1, random_outer_product({259}), DType::f32))
                .find("128 for a filter along x alone"),
            std::string::npos);
  EXPECT_NE(reason(Problem(2, {300, 300, 1}, 1, random_outer_product({35, 3}), DType::f64))
                .find("radius up to 16"),
            std::string::npos);
  // A filter folded to one tap (the array has one element) has nothing to separate.
  EXPECT_NE(
      reason(Problem(2, {1, 1, 1}, 1, random_outer_product({3, 3}), DType::f32)).find("one tap"),
      std::string::npos);
  Problem direct(2, {50, 50, 1}, 1, random_outer_product({5, 5}), DType::f32);
  direct.require_direct_sums();
  EXPECT_NE(reason(direct).find("direct sums"), std::string::npos);
  // One long axis is one pass: a direct sum, allowed under direct sums.
  Problem one(2, {50, 50, 1}, 1, random_outer_product({1, 5}), DType::f32);
  one.require_direct_sums();
  EXPECT_TRUE(s->can_implement(one));
  EXPECT_EQ(s->summation(one), Summation::direct);
  EXPECT_EQ(s->summation(Problem(2, {50, 50, 1}, 1, random_outer_product({3, 5}), DType::f32)),
            Summation::separable);
}

TEST(SeparableCuda, AutoRunsRankOneFiltersAsPassesOnTheGpu) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const Problem gauss(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=2", 2), DType::f32);
  EXPECT_EQ(choose(gauss, Options{}, MemorySpace::host).strategy, "separable");
  // 9x9 and 5x5x5 run dense at copy speed in `fast`; 7x7x7 as passes.
  const Problem small(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=1", 2), DType::f32);
  EXPECT_EQ(choose(small, Options{}, MemorySpace::host).strategy, "fast");
  const Problem vol(3, {64, 64, 64}, 1, make_named_filter("box:7", 3), DType::f32);
  EXPECT_EQ(choose(vol, Options{}, MemorySpace::host).strategy, "separable");
  const Problem dense(2, {512, 512, 1}, 1, random_filter({5, 5}), DType::f32);
  EXPECT_EQ(choose(dense, Options{}, MemorySpace::host).strategy, "fast");
  Problem direct = gauss;
  direct.require_direct_sums();
  EXPECT_NE(choose(direct, Options{}, MemorySpace::host).strategy, "separable");
  EXPECT_NE(find_strategy("separable")->plan(gauss).find("x and y fused"), std::string::npos);
}

}  // namespace
}  // namespace halo::test
