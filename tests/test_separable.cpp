// Filter analysis (rank-1 factors) and rank-1 filters run as 1-D passes on the CPU and the GPU.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>

#include "core/factor.hpp"
#include "core/parse.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

// Whether the first device copies tiles by tensor maps (sm_90 or later).
// Whether plans take tiles by tensor maps: on an sm_90 device, and without a GPU (plans are then
// made as on an H100).
bool tma_device() {
  const std::vector<DeviceInfo> devices = cuda_devices();
  return devices.empty() || devices[0].sm_major >= 9;
}

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


// ---------------------------------------------------------------------------------------------
// The `cpu_separable` strategy: rank-1 filters as 1-D passes on the CPU.
// ---------------------------------------------------------------------------------------------

// One case of the pass tests: an array and the extents of its filter.
struct PassCase {
  int rank;
  Extents ext;
  std::int64_t batch;
  std::vector<std::int64_t> filter;
};

// A box of these extents (every weight 1 / taps).
inline Filter box_filter(const std::vector<std::int64_t>& extents) {
  std::int64_t taps = 1;
  for (auto k : extents) taps *= k;
  return Filter(std::vector<double>(std::size_t(taps), 1.0 / double(taps)), extents);
}

// Runs f(problem in f32, filter, op, edges) for every case under every edge set of
// edge_sets() (origins clamped into the filter), the filter make(extents), the ops alternating.
// Returns the runs.
template <class Make, class F>
int for_each_case(const std::vector<PassCase>& cases, Make make, F f) {
  int i = 0;
  for (const PassCase& c : cases)
    for (const Edges& edges : edge_sets()) {
      Edges e = edges;
      for (int a = 0; a < c.rank; ++a)
        e.origin[a] =
            std::clamp<std::int64_t>(e.origin[a], -(c.filter[a] / 2), (c.filter[a] - 1) / 2);
      const Filter filter = make(c.filter);
      const Op op = i++ % 2 ? Op::convolve : Op::correlate;
      f(Problem(c.rank, c.ext, c.batch, filter, DType::f32, op, e), filter, op, e);
    }
  return i;
}

// Every stage kind: x alone (rows, and a long signal cut into chunks), y alone, x and y fused
// (one chunk of whole rows, and several chunks of a ring of 65 rows), z alone, x-y then z in place
// (planes past the end mapped back by wrap and reflect, fewer planes than the z radius); strip
// edges, primes, 1-element axes, filters larger than the input (folded), even extents, batches.
TEST(SeparableCpu, MatchesTheReferenceOnEveryStageKindModeAndOp) {
  const std::vector<PassCase> cases = {
      {1, {40000, 1, 1}, 1, {127}},     {1, {300, 1, 1}, 3, {31}},
      {1, {7, 1, 1}, 1, {25}},          {2, {40, 2100, 1}, 1, {9, 9}},
      {2, {70, 1100, 1}, 1, {65, 3}},   {2, {70, 513, 1}, 1, {1, 25}},
      {2, {200, 40, 1}, 1, {31, 1}},    {2, {2, 1, 1}, 1, {3, 3}},
      {2, {7, 5, 1}, 1, {21, 17}},      {2, {257, 255, 1}, 2, {18, 16}},
      {2, {37, 1, 1}, 1, {5, 7}},       {2, {41, 300, 1}, 1, {49, 3}},
      {3, {12, 20, 30}, 1, {9, 9, 9}},  {3, {40, 8, 9}, 1, {17, 1, 1}},
      {3, {9, 10, 300}, 1, {1, 7, 5}},  {3, {12, 5, 7}, 2, {5, 1, 9}},
      {3, {10, 13, 11}, 1, {3, 9, 1}},  {3, {1, 1, 2}, 1, {3, 3, 3}},
      {3, {33, 17, 20}, 1, {25, 3, 3}}, {3, {3, 40, 50}, 2, {13, 5, 5}}};
  const int ran = for_each_case(
      cases, [](const std::vector<std::int64_t>& k) { return random_outer_product(k); },
      [](const Problem& p, const Filter& f, Op op, const Edges& e) {
        const Status st = find_strategy("cpu_separable")->can_implement(p);
        ASSERT_TRUE(st) << p.describe() << ": " << st.reason;
        EXPECT_EQ(check_strategy<float>("cpu_separable", p.rank(), p.extents(), p.batch(), f, op,
                                        false, e),
                  "");
        EXPECT_EQ(check_strategy<double>("cpu_separable", p.rank(), p.extents(), p.batch(), f, op,
                                         false, e),
                  "");
      });
  EXPECT_EQ(ran, int(cases.size() * edge_sets().size()));
}

// Symmetric windows (Gaussians, boxes) take the paired form; the named filters run through it.
TEST(SeparableCpu, NamedSymmetricFiltersMatchTheReference) {
  for (const std::string& name : {"gaussian:sigma=3", "box:7", "sobel-x"})
    for (const Edges& e : edge_sets()) {
      const Filter f = make_named_filter(name, 2);
      EXPECT_EQ(
          check_strategy<float>("cpu_separable", 2, {61, 75, 1}, 1, f, Op::correlate, false, e), "")
          << name;
      const Filter g = make_named_filter(name, 3);
      EXPECT_EQ(
          check_strategy<double>("cpu_separable", 3, {9, 14, 23}, 1, g, Op::convolve, false, e), "")
          << name;
    }
  const Problem p(2, {64, 64, 1}, 1, make_named_filter("gaussian:sigma=2", 2), DType::f32);
  EXPECT_NE(find_strategy("cpu_separable")->plan(p).find("symmetric"), std::string::npos)
      << find_strategy("cpu_separable")->plan(p);
}

// Every SIMD target compiled in and supported here (AVX-512, AVX2, SSE4, ..., scalar), not only
// the one dynamic dispatch picks: the y and z passes take kRowGroup output rows at once, with
// as many sums in registers as the target has room for, and the rows left over one at a time.
// Extents 1 to 9 along y and z (every remainder of the groups, strips and planes shorter than
// the window), rows across the vector steps' edges, windows of 3 to 33 taps, both dtypes.
TEST(SeparableCpu, EverySupportedTargetAndRowGroupEdge) {
  std::vector<PassCase> cases;
  for (std::int64_t y : {1, 2, 3, 4, 5, 6, 7, 9, 70})
    cases.push_back({2, {y, 67, 1}, 1, {y % 2 ? 3 : 9, 5}});
  cases.push_back({2, {13, 129, 1}, 2, {33, 17}});
  cases.push_back({2, {11, 16, 1}, 1, {17, 1}});
  for (std::int64_t z : {1, 3, 4, 6, 9}) cases.push_back({3, {z, 5, 33}, 1, {5, 3, 3}});
  cases.push_back({3, {10, 3, 20}, 1, {9, 1, 1}});
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    SCOPED_TRACE(hwy::TargetName(t));
    int i = 0;
    for (const PassCase& c : cases)
      for (const Edges& e : {Edges{}, edge_sets()[3], edge_sets()[6]}) {
        const Filter f = ++i % 3 ? random_outer_product(c.filter)
                                 : make_named_filter("gaussian:sigma=1", c.rank);
        const Op op = i % 2 ? Op::convolve : Op::correlate;
        EXPECT_EQ(check_strategy<float>("cpu_separable", c.rank, c.ext, c.batch, f, op, false, e),
                  "");
        EXPECT_EQ(check_strategy<double>("cpu_separable", c.rank, c.ext, c.batch, f, op, false, e),
                  "");
      }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Box factors: along x by doubling (a tree sum per output), down y and z by running sums
// restarted every detail::running_restart(k) outputs; held to Summation::running's bound.
TEST(SeparableCpu, BoxFiltersTakeTheBoxFormsWithinTheirBound) {
  // Units restart the sums: strips of rows, chunks of columns, planes; a box wider than the
  // restart length (40 > 32), one just at the thresholds, 1-D, boxes along one axis.
  const std::vector<PassCase> cases = {
      {2, {110, 90, 1}, 1, {31, 31}},  {2, {40, 1300, 1}, 1, {41, 13}},
      {2, {300, 20, 1}, 2, {6, 12}},   {1, {20000, 1, 1}, 1, {255}},
      {2, {200, 50, 1}, 1, {9, 1}},    {2, {5, 400, 1}, 1, {1, 33}},
      {3, {30, 16, 24}, 1, {9, 9, 9}}, {3, {70, 6, 7}, 1, {41, 1, 1}},
      {3, {20, 9, 40}, 2, {7, 13, 15}}};
  for_each_case(cases, box_filter, [](const Problem& p, const Filter& f, Op op, const Edges& e) {
    const std::string plan = find_strategy("cpu_separable")->plan(p);
    EXPECT_NE(plan.find("box"), std::string::npos) << plan;
    EXPECT_EQ(
        check_strategy<float>("cpu_separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
        "");
    EXPECT_EQ(
        check_strategy<double>("cpu_separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
        "");
  });
  const Problem box2(2, {300, 300, 1}, 1, make_named_filter("box:31", 2), DType::f32);
  EXPECT_EQ(find_strategy("cpu_separable")->summation(box2), Summation::running);
  const std::string plan = find_strategy("cpu_separable")->plan(box2);
  EXPECT_NE(plan.find("x (box of 31 taps: running sums of vectors restarted every 32)"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("y (box of 31 taps: running sums restarted every 32)"), std::string::npos)
      << plan;
  // Under direct sums a box along x alone sums each output by doubling (a tree of its taps).
  Problem direct(1, {5000, 1, 1}, 1, make_named_filter("box:31", 1), DType::f32);
  direct.require_direct_sums();
  EXPECT_EQ(find_strategy("cpu_separable")->summation(direct), Summation::direct);
  const std::string dplan = find_strategy("cpu_separable")->plan(direct);
  EXPECT_NE(dplan.find("sums by doubling"), std::string::npos) << dplan;
  EXPECT_EQ(check_strategy<float>("cpu_separable", 1, {5000, 1, 1}, 1,
                                  make_named_filter("box:31", 1), Op::correlate, true),
            "");
}

// Badly scaled input: values of size 1e6 in the first rows (2-D) or planes (3-D), then 1e-3
// for the rest, and within both random magnitudes over two decades. Running sums carry the
// rounding of the large values down the small ones until they restart; the bound takes |x| at
// its largest within a restart length, so past it the small outputs must be accurate to the
// small values' own scale (without the restarts they are not).
TEST(SeparableCpu, RunningSumsStayWithinTheirBoundOnBadlyScaledInput) {
  std::uniform_real_distribution<double> mag(-1.0, 1.0), val(-1.0, 1.0);
  std::vector<std::string> names{"cpu_separable"};
  if (cuda_available()) names.push_back("separable");  // (SeparableCuda's box kernels)
  for (const std::string& strategy : names)
    for (const char* name : {"box:31", "box:9", "box:201x5"})
      for (int rank : {1, 2, 3}) {
        const bool cols = std::string(name) == "box:201x5";  // 2-D: box columns along y
        if (cols && rank != 2) continue;
        const Extents ext = rank == 1   ? Extents{20000, 1, 1}
                            : cols      ? Extents{600, 180, 1}
                            : rank == 2 ? Extents{200, 180, 1}
                                        : Extents{90, 12, 20};
        const Problem p(rank, ext, 1, cols ? box_filter({201, 5}) : make_named_filter(name, rank),
                        DType::f32, Op::correlate, Edges::all(Boundary::reflect));
        const std::int64_t plane = rank == 1 ? 200 : rank == 2 ? ext[1] : ext[1] * ext[2];
        std::vector<float> in(std::size_t(p.elements())), out(in.size());
        for (std::size_t k = 0; k < in.size(); ++k) {
          const double scale = std::int64_t(k) / plane < 25 ? 1e6 : 1e-3;
          in[k] = float(val(rng()) * scale * std::pow(10.0, mag(rng())));
        }
        poison(out);
        std::vector<double> ref(in.size());
        cpu::reference_f64(p, in.data(), ref.data());
        const std::vector<double> tol = tolerances(strategy, p, in);
        Options o;
        o.strategy = strategy;
        o.edges = p.edges();
        apply(ConstArrayView(in.data(), DType::f32, rank, ext), array_view(out, rank, ext),
              p.filter(), o);
        std::int64_t bad = 0;
        for (std::size_t k = 0; k < in.size(); ++k)
          if (!(std::fabs(double(out[k]) - ref[k]) <= tol[k])) ++bad;
        EXPECT_EQ(bad, 0) << strategy << ": " << p.describe() << "; seed " << fresh_seed();
      }
}

TEST(SeparableCpu, AutoRunsRankOneFiltersAsPassesWhereTheyPay) {
  Options cpu;
  cpu.backend = Backend::cpu;
  auto chosen = [&](const Filter& f, int rank, Extents ext, bool direct = false) {
    Problem p(rank, ext, 1, f, DType::f32);
    p.require_direct_sums(direct);
    Options o = cpu;
    o.direct_sums = direct;
    return choose(p, o).strategy;
  };
  EXPECT_EQ(chosen(random_outer_product({17, 17}), 2, {300, 300, 1}), "cpu_separable");
  EXPECT_EQ(chosen(make_named_filter("gaussian:sigma=1", 3), 3, {40, 40, 40}), "cpu_separable");
  EXPECT_EQ(chosen(random_filter({17, 17}), 2, {300, 300, 1}), "cpu");       // not rank 1
  EXPECT_EQ(chosen(random_outer_product({3, 3}), 2, {300, 300, 1}), "cpu_separable");
  EXPECT_EQ(chosen(random_outer_product({2, 2, 2}), 3, {30, 30, 30}), "cpu");  // 6 taps, 2 stages
  // A box along one axis takes its box form (not the dense sum, nor the FFT).
  EXPECT_EQ(chosen(make_named_filter("box:255", 1), 1, {1 << 20, 1, 1}), "cpu_separable");
  EXPECT_EQ(chosen(make_named_filter("box:31", 1).along_axis(2, 0), 2, {300, 300, 1}),
            "cpu_separable");
  EXPECT_EQ(chosen(random_outer_product({3, 3, 3}), 3, {30, 30, 30}), "cpu_separable");
  EXPECT_EQ(chosen(random_outer_product({17, 17}), 2, {300, 300, 1}, true), "cpu");
  // What it refuses, and why.
  const Strategy* s = find_strategy("cpu_separable");
  const Status dense =
      s->can_implement(Problem(2, {9, 9, 1}, 1, random_filter({3, 3}), DType::f32));
  EXPECT_FALSE(dense);
  EXPECT_NE(dense.reason.find("outer product"), std::string::npos) << dense.reason;
  Problem direct(2, {9, 9, 1}, 1, random_outer_product({3, 3}), DType::f32);
  direct.require_direct_sums();
  const Status d = s->can_implement(direct);
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("direct sums"), std::string::npos) << d.reason;
  // One long axis is a direct sum: allowed under direct sums.
  Problem one(2, {9, 9, 1}, 1, random_outer_product({1, 5}), DType::f32);
  one.require_direct_sums();
  EXPECT_TRUE(s->can_implement(one));
  EXPECT_EQ(s->summation(one), Summation::direct);
}

// ---------------------------------------------------------------------------------------------
// The `separable` CUDA strategy: rank-1 filters as fused 1-D passes on the GPU.
// ---------------------------------------------------------------------------------------------
TEST(FilterAnalysis, BoxRunsAreOneRunOfEqualNonzeroWeights) {
  const auto b = detail::box_run({0, 0, 0.25, 0.25, 0.25, 0.25, 0});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->lo, 2);
  EXPECT_EQ(b->k, 4);
  EXPECT_EQ(b->c, 0.25);
  EXPECT_FALSE(detail::box_run({0.25, 0.5, 0.25}));  // a Gaussian-like factor
  EXPECT_FALSE(detail::box_run({0.5, 0, 0.5}));      // two runs
  EXPECT_FALSE(detail::box_run({0.0, 0.0, 0.0}));    // no nonzero weight
  EXPECT_EQ(detail::box_run({-1.0})->k, 1);
}

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

// Every pass kind: x alone (rows of one strip and, above 2048 columns, strips of one row), y
// alone, x and y fused, z alone, and two passes; strip and chunk edges, primes, 1-element axes,
// filters larger than the input (folded), even extents, every compiled radius class, batches.
TEST(SeparableCuda, MatchesTheReferenceOnEveryPassKindModeAndOp) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const std::vector<PassCase> cases = {{1, {5000, 1, 1}, 1, {127}},
                                       {1, {300, 1, 1}, 3, {31}},
                                       {1, {2100, 1, 1}, 2, {33}},
                                       {1, {7, 1, 1}, 1, {25}},
                                       {2, {300, 2100, 1}, 1, {9, 9}},
                                       {2, {100, 77, 1}, 1, {65, 65}},
                                       {2, {70, 513, 1}, 1, {1, 25}},
                                       {2, {3, 2500, 1}, 2, {1, 13}},
                                       {2, {200, 40, 1}, 1, {31, 1}},
                                       {2, {2, 1, 1}, 1, {3, 3}},
                                       {2, {7, 5, 1}, 1, {21, 17}},
                                       {2, {257, 255, 1}, 1, {18, 16}},
                                       {2, {64, 256, 1}, 2, {5, 3}},
                                       {2, {37, 1, 1}, 1, {5, 7}},
                                       {2, {41, 300, 1}, 1, {49, 3}},
                                       {3, {20, 30, 40}, 1, {9, 9, 9}},
                                       {3, {40, 8, 9}, 1, {17, 1, 1}},
                                       {3, {9, 10, 300}, 1, {1, 7, 5}},
                                       {3, {12, 5, 7}, 2, {5, 1, 9}},
                                       {3, {10, 13, 11}, 1, {3, 9, 1}},
                                       {3, {1, 1, 2}, 1, {3, 3, 3}},
                                       {3, {33, 17, 20}, 1, {25, 3, 3}},
                                       // Radii 96 and 128 along x alone on rows shorter than
                                       // long rows take (a 1-D signal; 1 x 201).
                                       {1, {1500, 1, 1}, 1, {255}},
                                       {2, {3, 1900, 1}, 2, {1, 201}},
                                       // Long rows (beyond the strip kernel's radii: 128 along
                                       // x alone, 64 with y; rows of 2048 or more): segment
                                       // ends, a prime length, batches, the longest k, then y
                                       // in the ring, then z.
                                       {1, {5000, 1, 1}, 1, {301}},
                                       {1, {4099, 1, 1}, 2, {259}},
                                       {1, {9000, 1, 1}, 1, {1023}},
                                       {2, {3, 3000, 1}, 2, {1, 401}},
                                       {2, {9, 2100, 1}, 1, {3, 131}},
                                       {3, {5, 2, 2100}, 1, {3, 1, 141}},
                                       // Long columns (radius above 64 along y or z): several
                                       // chunks, after a pass along x (rows of radius 96),
                                       // batches, even k, the longest k, z alone, after x-y
                                       // fused, y in 3-D alone and before z, longer than the axis.
                                       {2, {3500, 20, 1}, 1, {131, 1}},
                                       {2, {140, 60, 1}, 1, {135, 131}},
                                       {2, {200, 70, 1}, 2, {150, 5}},
                                       {2, {1100, 3, 1}, 1, {1023, 1}},
                                       {3, {300, 20, 33}, 1, {141, 1, 1}},
                                       {3, {140, 6, 20}, 1, {133, 3, 5}},
                                       {3, {10, 300, 20}, 1, {1, 257, 1}},
                                       {3, {9, 300, 10}, 1, {5, 135, 1}},
                                       {2, {150, 20, 1}, 1, {201, 1}}};
  const int ran = for_each_case(
      cases, [](const std::vector<std::int64_t>& k) { return random_outer_product(k); },
      [](const Problem& p, const Filter& f, Op op, const Edges& e) {
        const Status st = find_strategy("separable")->can_implement(p);
        ASSERT_TRUE(st) << p.describe() << ": " << st.reason;
        EXPECT_EQ(
            check_strategy<float>("separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
            "");
        const Problem p64(p.rank(), p.extents(), p.batch(), f, DType::f64, op, e);
        if (find_strategy("separable")->can_implement(p64))
          EXPECT_EQ(check_strategy<double>("separable", p.rank(), p.extents(), p.batch(), f, op,
                                           false, e),
                    "");
      });
  EXPECT_EQ(ran, int(cases.size() * edge_sets().size()));
}

// 3-D boxes of 2R + 1 taps along every axis (R = 4 and 8, rows 16-byte aligned on an sm_90
// device) in the one-pass volume kernel's BOX form: running sums along x (runs of 8), y (a
// thread's rows) and z (the last 2R + 1 planes kept, the sum restarted from them every 2R + 1
// planes). Held to Summation::running's bound under every mode and origin, a constant volume
// keeps its value exactly, and filters that are not boxes on every axis keep the FMAs.
TEST(SeparableCuda, VolumeBoxesRunAsRunningSums) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const Strategy& sep = *find_strategy("separable");
  // Past one tile along each axis, not a multiple of it; box:17 (4913 reference taps) only once.
  for (const Extents& e : {Extents{40, 30, 68}, Extents{75, 29, 132}})
    for (const char* spec : {"box:9", "box:17"}) {
      if (e[0] == 75 && std::string(spec) == "box:17") continue;
      const Filter f = make_named_filter(spec, 3);
      const Problem p(3, e, 1, f, DType::f32);
      const std::string plan = sep.plan(p);
      if (plan.find("tensor memory accelerator") == std::string::npos)
        GTEST_SKIP() << "the volume kernel's tensor-map tiles need an sm_90 device: " << plan;
      EXPECT_NE(plan.find("box factors by running sums along x, y and z"), std::string::npos)
          << plan;
      EXPECT_EQ(sep.summation(p), Summation::running) << p.describe();
      for (const Edges& edges : edge_sets())
        EXPECT_EQ(check_strategy<float>("separable", 3, e, 1, f, Op::correlate, false, edges), "")
            << spec << " " << p.describe();
      // A constant volume keeps its value exactly under a mode (every window full).
      const std::vector<float> in(std::size_t(e[0] * e[1] * e[2]), 7.0f);
      std::vector<float> out(in.size());
      Options o;
      o.strategy = "separable";
      o.edges = Edges::all(Boundary::reflect);
      apply(ConstArrayView(in.data(), DType::f32, 3, e), ArrayView{out.data(), DType::f32, 3, e},
            f, o);
      for (std::size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out[i], 7.0f) << spec << " output " << i;
    }
  for (const char* spec : {"gaussian:sigma=1", "box:7", "gaussian:sigma=2"}) {
    const Problem p(3, {40, 30, 68}, 1, make_named_filter(spec, 3), DType::f32);
    EXPECT_EQ(sep.plan(p).find("running sums along x, y and z"), std::string::npos)
        << spec << ": " << sep.plan(p);
  }
}

// Box factors in float32 run as running sums over each thread's outputs (8 along x, a step's
// 8 or 16 down y and z), held to Summation::running's bound; float64 boxes take the FMAs.
TEST(SeparableCuda, BoxFactorsRunAsRunningSums) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const std::vector<PassCase> cases = {
      {2, {130, 300, 1}, 1, {31, 31}},  {2, {90, 600, 1}, 1, {41, 13}},
      {2, {300, 20, 1}, 2, {6, 12}},    {1, {20000, 1, 1}, 1, {255}},
      {2, {200, 50, 1}, 1, {9, 1}},     {2, {5, 3000, 1}, 1, {1, 33}},
      {3, {12, 30, 50}, 1, {9, 9, 9}},  {3, {70, 6, 7}, 1, {41, 1, 1}},
      {3, {20, 9, 40}, 2, {7, 13, 15}}, {2, {40, 30, 1}, 1, {9, 5}},
      // Box rows (rows of 2048 or more): segment edges, a prime length, k a multiple of the
      // runs of 16 and below them, batches of rows.
      {1, {3 * 4096 + 1, 1, 1}, 1, {240}}, {1, {2048, 1, 1}, 1, {7}},
      {1, {10007, 1, 1}, 1, {63}},         {1, {8192, 1, 1}, 2, {17}},
      {2, {3, 9000, 1}, 2, {1, 100}},      {2, {2, 4095, 1}, 1, {1, 6}},
      // Box columns (boxes along y or z of more than 129 taps): one chunk and several, after
      // a pass along x (box rows, and the strip kernel), batches, even k, z alone, after x-y
      // fused, y in 3-D alone and before a z pass, longer than the axis.
      {2, {700, 50, 1}, 1, {255, 1}},      {2, {3000, 40, 1}, 1, {131, 1}},
      {2, {140, 300, 1}, 1, {133, 9}},     {2, {160, 100, 1}, 2, {150, 7}},
      {3, {300, 20, 30}, 1, {141, 1, 1}},  {3, {140, 6, 20}, 1, {133, 3, 5}},
      {3, {10, 300, 20}, 1, {1, 257, 1}},  {3, {9, 300, 10}, 1, {5, 135, 1}},
      {2, {150, 20, 1}, 1, {201, 1}}};
  for_each_case(cases, box_filter, [](const Problem& p, const Filter& f, Op op, const Edges& e) {
    EXPECT_EQ(find_strategy("separable")->summation(p), Summation::running) << p.describe();
    EXPECT_EQ(check_strategy<float>("separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
              "");
    const Problem p64(p.rank(), p.extents(), p.batch(), f, DType::f64, op, e);
    if (find_strategy("separable")->can_implement(p64))  // f64 factors up to radius 16
      EXPECT_EQ(
          check_strategy<double>("separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
          "");
  });
  const Problem box(2, {300, 300, 1}, 1, make_named_filter("box:31", 2), DType::f32);
  const std::string plan = find_strategy("separable")->plan(box);
  EXPECT_NE(plan.find("running sums (y)"), std::string::npos) << plan;  // fused: y only
  const Problem row(1, {5000, 1, 1}, 1, make_named_filter("box:255", 1), DType::f32);
  const std::string plan1 = find_strategy("separable")->plan(row);
  EXPECT_NE(plan1.find("running sums (x)"), std::string::npos) << plan1;
  EXPECT_NE(plan1.find("segments of 4096"), std::string::npos) << plan1;
  const Problem short_rows(2, {300, 1000, 1}, 1, make_named_filter("box:255", 1).along_axis(2, 1),
                           DType::f32);
  const std::string plan2 = find_strategy("separable")->plan(short_rows);
  EXPECT_EQ(plan2.find("segments of"), std::string::npos) << plan2;
  EXPECT_NE(plan2.find("running sums (x)"), std::string::npos) << plan2;
  // Direct sums: the FMAs (and one long axis only).
  Problem direct(2, {300, 300, 1}, 1, make_named_filter("box:31", 1).along_axis(2, 1), DType::f32);
  direct.require_direct_sums();
  EXPECT_EQ(find_strategy("separable")->summation(direct), Summation::direct);
}

// Box rows where each block takes several segments in turn (more segments than the device
// holds blocks, 6 per SM).
TEST(SeparableCuda, BoxRowsTakeSeveralSegmentsPerBlock) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const std::int64_t rows = 2 * cuda_devices().at(0).multiprocessors + 7;  // 3 segments each
  const Filter f = box_filter({1, 240});
  Edges mixed = edge_sets()[6];
  mixed.origin[0] = 0;  // the filter has one tap along y
  for (const Edges& e : {Edges::all(Boundary::reflect), mixed}) {
    const Problem p(2, {rows, 8195, 1}, 1, f, DType::f32, Op::correlate, e);
    EXPECT_NE(find_strategy("separable")->plan(p).find("segments"), std::string::npos);
    EXPECT_EQ(check_strategy<float>("separable", 2, p.extents(), 1, f, Op::correlate, false, e),
              "");
  }
}

// Volumes whose factors all fit radius 4 (float32, at least 4 halos deep) run x, y and z in one
// pass: tile edges (64 x 16 outputs of a plane), primes, unaligned rows, 1-element axes, a
// factor of one tap, filters wider than an axis, several z-chunks, batches, every compiled
// radius; boxes among them take FMAs (running sums need the tensor-map kernel's radii 4 and 8:
// VolumeBoxesRunAsRunningSums). The edge sets' origins widen a window by one, so factors of 9
// taps run under the sets without origins. Wider factors, shallower volumes and float64 keep
// two passes.
const std::vector<PassCase>& volume_cases() {
  static const std::vector<PassCase> cases = {
      {3, {40, 17, 65}, 1, {7, 7, 7}},   {3, {37, 31, 130}, 2, {7, 3, 5}},
      {3, {50, 3, 2}, 1, {5, 3, 3}},     {3, {33, 70, 3}, 1, {7, 7, 7}},
      {3, {300, 9, 10}, 1, {3, 5, 7}},   {3, {16, 20, 24}, 1, {3, 3, 3}},
      {3, {29, 23, 67}, 1, {7, 1, 7}},   {3, {24, 40, 36}, 1, {7, 7, 1}},
      {3, {20, 30, 40}, 1, {3, 5, 3}}};
  return cases;
}

TEST(SeparableCuda, VolumesRunInOnePass) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const auto check = [](const Problem& p, const Filter& f, Op op, const Edges& e) {
    const Strategy* s = find_strategy("separable");
    const std::string plan = s->plan(p);
    EXPECT_NE(plan.find("z fused in one pass"), std::string::npos) << p.describe() << ": " << plan;
    EXPECT_TRUE(s->workspace(p).empty()) << p.describe();
    EXPECT_EQ(s->summation(p), Summation::separable) << p.describe();
    EXPECT_EQ(check_strategy<float>("separable", p.rank(), p.extents(), p.batch(), f, op, false, e),
              "");
  };
  const auto outer = [](const std::vector<std::int64_t>& k) { return random_outer_product(k); };
  const int ran = for_each_case(volume_cases(), outer, check);
  EXPECT_EQ(ran, int(volume_cases().size() * edge_sets().size()));
  for_each_case({{3, {40, 30, 50}, 2, {7, 7, 7}}, {3, {35, 20, 70}, 1, {7, 5, 3}}}, box_filter,
                check);
  // Radius 4 (9 taps: Gaussians of sigma 1, boxes of 9) and 8 (17 taps: sigma 2; 13 and 15
  // padded to it) at tile and chunk edges, every mode,
  // and under per-axis modes (the edge sets' mixes without their origins), by both kernels:
  // tiles copied by the tensor memory accelerator (rows 16-byte aligned, an sm_90 device: every
  // case here but those of 65, 70 and 41 columns) and through registers (feed=prefetch, and
  // unaligned rows). Tiles of 64 x 24 and 64 x 16: partial last tiles along x and y, one tile
  // beyond both faces of x and y (3 rows of 4 columns), batches.
  const bool tma = tma_device();
  std::vector<Edges> edges;
  for (Edges e : edge_sets()) {
    e.origin = {0, 0, 0};
    edges.push_back(e);
  }
  int i = 0;
  for (const PassCase& c : {PassCase{3, {40, 17, 65}, 1, {9, 9, 9}},
                            PassCase{3, {100, 33, 70}, 1, {9, 5, 9}},
                            PassCase{3, {65, 17, 40}, 1, {9, 9, 9}},
                            PassCase{3, {70, 33, 100}, 1, {9, 5, 9}},
                            PassCase{3, {20, 49, 68}, 2, {3, 9, 9}},
                            PassCase{3, {37, 3, 4}, 1, {9, 9, 9}},
                            PassCase{3, {18, 26, 41}, 1, {9, 9, 3}},
                            PassCase{3, {40, 20, 68}, 1, {17, 17, 17}},
                            PassCase{3, {33, 35, 100}, 2, {13, 17, 5}},
                            PassCase{3, {34, 7, 8}, 1, {17, 11, 15}}})
    for (const Edges& e : edges)
      for (const char* tune : {"", "feed=prefetch"}) {
        const Filter f = i % 3 == 2 ? box_filter(c.filter) : random_outer_product(c.filter);
        const Op op = i++ % 2 ? Op::convolve : Op::correlate;
        Problem p(c.rank, c.ext, c.batch, f, DType::f32, op, e);
        const FastTuning tuning = *tune ? detail::parse_fast_tuning(tune, "t") : FastTuning{};
        p.set_tuning(tuning);
        const std::string plan = find_strategy("separable")->plan(p);
        const bool copied = plan.find("tensor memory accelerator") != std::string::npos;
        EXPECT_EQ(copied, tma && !*tune) << p.describe() << ": " << plan;
        // Radii 5 to 8 take one pass only through the tensor-map tiles.
        const bool one = plan.find("z fused in one pass") != std::string::npos;
        EXPECT_EQ(one, c.filter[0] <= 9 || (tma && !*tune)) << p.describe() << ": " << plan;
        EXPECT_EQ(check_strategy<float>("separable", c.rank, c.ext, c.batch, f, op, false, e,
                                        tuning),
                  "")
            << tune;
      }
  EXPECT_EQ(i, 10 * 8 * 2);
  // Two passes for wider factors, shallower volumes, rows not a multiple of 16 bytes at radius
  // 8, and float64.
  const Strategy* s = find_strategy("separable");
  for (const Problem& p :
       {Problem(3, {64, 30, 50}, 1, make_named_filter("gaussian:sigma=3", 3), DType::f32),
        Problem(3, {64, 30, 50}, 1, make_named_filter("gaussian:sigma=2", 3), DType::f32),
        Problem(3, {28, 30, 52}, 1, make_named_filter("gaussian:sigma=2", 3), DType::f32),
        Problem(3, {12, 30, 50}, 1, make_named_filter("gaussian:sigma=1", 3), DType::f32),
        Problem(3, {40, 30, 50}, 1, make_named_filter("gaussian:sigma=1", 3), DType::f64)})
    EXPECT_NE(s->plan(p).find("two passes"), std::string::npos) << s->plan(p);
}

// The fused x-y kernel's tiles copied by the tensor memory accelerator (float32, radii 4 to 32,
// rows 16-byte aligned, an sm_90 device): strips inside the array and at both ends (loaded by
// the threads where a mode other than zero ghosts applies), steps at the chunks' and the
// array's top and bottom (rows copied one by one from the rows they map to, rows of cval), the
// cells beyond an x face copied within the tile (or loaded by the threads under wrap), batches
// (one map over the items), a box kernel of 8 rows a step and one of 16, the x-y pass of a
// volume before its z pass, fewer rows than a step, one strip with both faces, the radii 24 and
// 32 of one stage a block (a box among them), radii 4 and 6 of three; every edge set,
// and the same through registers (feed=prefetch). Rows of 777 columns (not 16-byte aligned)
// take the registers.
TEST(SeparableCuda, FusedTilesByTensorMapsMatchTheReference) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const bool tma = tma_device();
  const std::vector<PassCase> cases = {{2, {300, 1000, 1}, 1, {17, 17}},
                                       {2, {150, 780, 1}, 2, {31, 29}},
                                       {2, {200, 600, 1}, 1, {25, 19}},
                                       {2, {130, 800, 1}, 1, {31, 31}},  // box, 16 rows a step
                                       {2, {100, 700, 1}, 1, {17, 13}},  // box, 8 rows a step
                                       {3, {4, 60, 560}, 1, {3, 29, 31}},
                                       {2, {5, 600, 1}, 1, {17, 17}},    // rows < a step's
                                       {2, {300, 40, 1}, 2, {25, 25}},   // one strip, both faces
                                       {2, {100, 777, 1}, 1, {17, 17}},
                                       {2, {112, 560, 1}, 1, {61, 57}},  // one stage a block
                                       {2, {80, 560, 1}, 2, {45, 41}},
                                       {2, {112, 560, 1}, 1, {63, 63}},  // box, one stage
                                       {2, {120, 100, 1}, 1, {61, 63}},  // one strip, both faces
                                       {2, {150, 700, 1}, 1, {11, 11}},  // three stages
                                       {2, {150, 700, 1}, 2, {9, 9}}};   // radius 4, no origins
  int i = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci)
    for (const Edges& e : edge_sets())
      for (const char* tune : {"", "feed=prefetch"}) {
        const PassCase& c = cases[ci];
        const bool box = ci == 3 || ci == 4 || ci == 11;
        Edges edges = e;
        for (int a = 0; a < c.rank; ++a)  // origins within the filter, as for_each_case
          edges.origin[a] = std::clamp<std::int64_t>(edges.origin[a], -(c.filter[a] / 2),
                                                     (c.filter[a] - 1) / 2);
        // Radius 4 with an origin is compiled radius 6 along that axis only: no tensor maps.
        if (ci + 1 == cases.size()) edges.origin = {0, 0, 0};
        const Filter f = box ? box_filter(c.filter) : random_outer_product(c.filter);
        const Op op = i++ % 2 ? Op::convolve : Op::correlate;
        Problem p(c.rank, c.ext, c.batch, f, DType::f32, op, edges);
        const FastTuning tuning = *tune ? detail::parse_fast_tuning(tune, "t") : FastTuning{};
        p.set_tuning(tuning);
        const std::string plan = find_strategy("separable")->plan(p);
        EXPECT_NE(plan.find("x and y fused"), std::string::npos) << p.describe() << ": " << plan;
        const bool copied = plan.find("tensor memory accelerator") != std::string::npos;
        EXPECT_EQ(copied, tma && !*tune) << p.describe() << ": " << plan;
        EXPECT_EQ(check_strategy<float>("separable", c.rank, c.ext, c.batch, f, op, false, edges,
                                        tuning),
                  "")
            << tune;
      }
  EXPECT_EQ(i, int(cases.size() * edge_sets().size()) * 2);
}

// Chunks of the fused kernel: where the tiles come by tensor maps, balanced over the blocks (the
// plan says how many rows, whole steps of 16); the length asked for (FastTuning::chunk, rounded
// up to whole steps) on either feed. Every chunk length matches the reference, at chunk ends
// and at the array's faces (wrap: the strips' steps loaded by the threads).
TEST(SeparableCuda, ChunksBalancedOrAskedForMatchTheReference) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const bool tma = tma_device();
  const Extents ext{1300, 700, 1};
  for (const Edges& e : {Edges{}, Edges::all(Boundary::reflect), Edges::all(Boundary::wrap)})
    for (const char* tune : {"", "chunk=16", "chunk=100", "chunk=5000", "feed=prefetch"})
      for (const std::int64_t k : {17, 33}) {
        if (k == 33 && *tune) continue;
        const Filter f = random_outer_product({k, k});
        Problem p(2, ext, 1, f, DType::f32, Op::correlate, e);
        const FastTuning tuning = *tune ? detail::parse_fast_tuning(tune, "t") : FastTuning{};
        p.set_tuning(tuning);
        const std::string plan = find_strategy("separable")->plan(p);
        const std::string asked = std::string(tune).rfind("chunk=", 0) == 0 ? tune + 6 : "";
        if (!asked.empty()) {
          EXPECT_NE(plan.find("chunks of " + asked + " rows"), std::string::npos) << plan;
        } else if (tma && !*tune) {
          const std::string key = "rows where the tiles come by tensor maps (balanced";
          const std::size_t at = plan.find(key);
          ASSERT_NE(at, std::string::npos) << plan;
          const std::size_t from = plan.rfind("chunks of ", at) + 10;
          const int rows = std::stoi(plan.substr(from, at - from));
          EXPECT_EQ(rows % 16, 0) << plan;
          EXPECT_GE(rows, 16) << plan;
          EXPECT_LE(rows, 1312) << plan;
        } else {
          EXPECT_EQ(plan.find("balanced"), std::string::npos) << plan;
        }
        EXPECT_EQ(check_strategy<float>("separable", 2, ext, 1, f, Op::correlate, false, e,
                                        tuning),
                  "")
            << tune << "; " << plan;
      }
}

// Small cases for compute-sanitizer (memcheck's filter CudaSanitizer.*) under reflect and one
// more edge set: each runs the pass whose plan names `what(case)`, against the reference.
template <class Make, class What>
void sanitizer_cases(const std::vector<PassCase>& cases, Make make, What what) {
  const std::vector<Edges> edges = {Edges::all(Boundary::reflect), edge_sets()[6]};
  for (const PassCase& c : cases)
    for (Edges e : edges) {
      for (int a = 0; a < c.rank; ++a)  // origins within the filter, as for_each_case
        e.origin[a] =
            std::clamp<std::int64_t>(e.origin[a], -(c.filter[a] / 2), (c.filter[a] - 1) / 2);
      const Filter f = make(c.filter);
      const Problem p(c.rank, c.ext, c.batch, f, DType::f32, Op::correlate, e);
      EXPECT_NE(find_strategy("separable")->plan(p).find(what(c)), std::string::npos)
          << p.describe();
      EXPECT_EQ(check_strategy<float>("separable", c.rank, c.ext, c.batch, f, Op::correlate,
                                      false, e),
                "");
    }
}

// Box rows and box columns: segment and chunk ends, edges through the modes' maps.
TEST(CudaSanitizer, SeparableBoxRowsAndColumns) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  sanitizer_cases({{1, {4097, 1, 1}, 1, {255}},
                   {1, {2049, 1, 1}, 2, {7}},
                   {2, {150, 40, 1}, 1, {131, 1}},
                   {2, {140, 40, 1}, 1, {133, 5}},
                   {3, {140, 3, 40}, 1, {135, 1, 1}}},
                  box_filter,
                  [](const PassCase& c) { return c.rank == 1 ? "segments" : "box columns"; });
}

// Volumes in one pass: tile, chunk and face edges through the modes' maps.
// The fused x-y kernel's tensor-map tiles: interior strips copied, edge strips and edge steps
// loaded by the threads into the stages, a batch.
TEST(CudaSanitizer, SeparableFusedTensorMapTiles) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  sanitizer_cases({{2, {70, 800, 1}, 2, {33, 33}},
                   {2, {40, 600, 1}, 1, {17, 17}},
                   {2, {100, 560, 1}, 1, {63, 63}}},
                  [](const std::vector<std::int64_t>& k) { return random_outer_product(k); },
                  [](const PassCase&) { return "x and y fused"; });
}

TEST(CudaSanitizer, SeparableVolumes) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  sanitizer_cases({{3, {26, 17, 65}, 1, {7, 7, 7}}, {3, {37, 5, 7}, 1, {7, 3, 5}}},
                  [](const std::vector<std::int64_t>& k) { return random_outer_product(k); },
                  [](const PassCase&) { return "one pass"; });
  // Radius 4, the tiles copied by the tensor memory accelerator: cells beyond every face
  // rewritten under reflect and a per-axis mix (without its origins, which widen the window).
  Edges mix = edge_sets()[6];
  mix.origin = {0, 0, 0};
  for (const Edges& e : {Edges::all(Boundary::reflect), mix})
    for (const PassCase& c :
         {PassCase{3, {20, 27, 68}, 1, {9, 9, 9}}, PassCase{3, {17, 3, 4}, 1, {9, 7, 9}}})
      EXPECT_EQ(check_strategy<float>("separable", c.rank, c.ext, c.batch,
                                      random_outer_product(c.filter), Op::correlate, false, e),
                "");
}

// Long columns and long rows: chunk, strip and segment ends, edges through the modes' maps, y
// after rows, z alone, x long rows then y long columns.
TEST(CudaSanitizer, SeparableLongRowsAndColumns) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  sanitizer_cases(
      {{2, {150, 40, 1}, 1, {131, 1}},
       {2, {140, 40, 1}, 1, {133, 5}},
       {3, {140, 3, 40}, 1, {135, 1, 1}},
       {1, {4097, 1, 1}, 1, {301}},
       {2, {133, 2048, 1}, 1, {131, 133}}},
      [](const std::vector<std::int64_t>& k) { return random_outer_product(k); },
      [](const PassCase& c) { return c.rank == 1 ? "long rows" : "long columns"; });
}

TEST(SeparableCuda, RefusesWhatItCannotRunAndSaysWhy) {
  const Strategy* s = find_strategy("separable");
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  ASSERT_NE(s, nullptr);
  const auto reason = [&](const Problem& p) { return s->can_implement(p).reason; };
  EXPECT_NE(reason(Problem(2, {50, 50, 1}, 1, random_filter({5, 5}), DType::f32)).find("rank 1"),
            std::string::npos);
  // Factors along y or z, boxes or not: up to 1025 taps, and not between factors along x
  // and z.
  EXPECT_TRUE(s->can_implement(Problem(2, {1200, 300, 1}, 1, box_filter({1025, 3}), DType::f32)));
  EXPECT_TRUE(s->can_implement(
      Problem(2, {1200, 300, 1}, 1, random_outer_product({1025, 3}), DType::f32)));
  EXPECT_NE(reason(Problem(2, {1200, 300, 1}, 1, box_filter({1027, 3}), DType::f32))
                .find("512 along y or z"),
            std::string::npos);
  EXPECT_NE(reason(Problem(2, {1200, 300, 1}, 1, random_outer_product({1027, 3}), DType::f32))
                .find("512 along y or z"),
            std::string::npos);
  EXPECT_NE(reason(Problem(3, {30, 300, 30}, 1, random_outer_product({3, 201, 3}), DType::f32))
                .find("three passes"),
            std::string::npos);
  EXPECT_NE(reason(Problem(3, {30, 300, 30}, 1, box_filter({3, 201, 3}), DType::f32))
                .find("three passes"),
            std::string::npos);
  // Along x: up to 1025 taps on rows of 2048 or more, 257 on shorter rows along x alone.
  EXPECT_TRUE(
      s->can_implement(Problem(1, {2000, 1, 1}, 1, random_outer_product({257}), DType::f32)));
  EXPECT_NE(reason(Problem(1, {2000, 1, 1}, 1, random_outer_product({259}), DType::f32))
                .find("128 along x alone"),
            std::string::npos);
  EXPECT_TRUE(
      s->can_implement(Problem(1, {3000, 1, 1}, 1, random_outer_product({1025}), DType::f32)));
  EXPECT_NE(reason(Problem(1, {3000, 1, 1}, 1, random_outer_product({1027}), DType::f32))
                .find("along x on rows of 2048 or more"),
            std::string::npos);
  EXPECT_NE(reason(Problem(3, {5, 4, 2100}, 1, random_outer_product({3, 3, 141}), DType::f32))
                .find("three passes"),
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
  // 9x9 runs dense at copy speed in `fast`, or as the fused pass where its tiles come by tensor
  // maps (an sm_90 device); 3x3x3 dense in `fast`; 5x5x5 and 7x7x7 as passes.
  const bool tma = tma_device();
  const Problem small(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=1", 2), DType::f32);
  EXPECT_EQ(choose(small, Options{}, MemorySpace::host).strategy, tma ? "separable" : "fast");
  const Problem small64(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=1", 2),
                        DType::f64);
  EXPECT_EQ(choose(small64, Options{}, MemorySpace::host).strategy, "fast");
  const Problem vol3(3, {64, 64, 64}, 1, make_named_filter("box:3", 3), DType::f32);
  EXPECT_EQ(choose(vol3, Options{}, MemorySpace::host).strategy, "fast");
  for (const char* name : {"box:5", "box:7"}) {
    const Problem vol(3, {64, 64, 64}, 1, make_named_filter(name, 3), DType::f32);
    EXPECT_EQ(choose(vol, Options{}, MemorySpace::host).strategy, "separable") << name;
  }
  // Boxes along y beyond the ring: box columns (not the FFT).
  const Problem col(2, {512, 512, 1}, 1, make_named_filter("box:255", 1).along_axis(2, 0),
                    DType::f32);
  EXPECT_EQ(choose(col, Options{}, MemorySpace::host).strategy, "separable");
  EXPECT_NE(find_strategy("separable")->plan(col).find("box columns"), std::string::npos);
  // Gaussians along y and z beyond the ring: long columns (not the FFT); in 2-D after rows.
  for (int rank : {2, 3}) {
    const Problem g(rank, {256, 256, rank == 3 ? 256 : 1}, 1,
                    make_named_filter("gaussian:sigma=20", 1).along_axis(rank, 0), DType::f32);
    EXPECT_EQ(choose(g, Options{}, MemorySpace::host).strategy, "separable") << rank;
    EXPECT_NE(find_strategy("separable")->plan(g).find("long columns"), std::string::npos)
        << find_strategy("separable")->plan(g);
  }
  const Problem g2(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=20", 2), DType::f32);
  EXPECT_EQ(choose(g2, Options{}, MemorySpace::host).strategy, "separable");
  // Along x beyond the strip kernel on long rows: long rows (1-D up to 321 taps, the FFT
  // beyond; 2-D), not the FFT.
  const Problem g1(1, {1 << 20, 1, 1}, 1, make_named_filter("gaussian:sigma=40", 1), DType::f32);
  EXPECT_EQ(choose(g1, Options{}, MemorySpace::host).strategy, "separable");
  EXPECT_NE(find_strategy("separable")->plan(g1).find("long rows"), std::string::npos);
  const Problem g4(1, {1 << 20, 1, 1}, 1, make_named_filter("gaussian:sigma=41", 1), DType::f32);
  EXPECT_EQ(choose(g4, Options{}, MemorySpace::host).strategy, "fft");
  const Problem g3(2, {64, 4096, 1}, 1, random_outer_product({9, 161}), DType::f32);
  EXPECT_EQ(choose(g3, Options{}, MemorySpace::host).strategy, "separable");
  EXPECT_NE(find_strategy("separable")->plan(g3).find("long rows"), std::string::npos);
  // 1-D: long boxes as box rows, short ones and Gaussians in `fast`.
  const Problem box1(1, {1 << 20, 1, 1}, 1, make_named_filter("box:101", 1), DType::f32);
  EXPECT_EQ(choose(box1, Options{}, MemorySpace::host).strategy, "separable");
  const Problem box9(1, {1 << 20, 1, 1}, 1, make_named_filter("box:9", 1), DType::f32);
  EXPECT_EQ(choose(box9, Options{}, MemorySpace::host).strategy, "fast");
  const Problem dense(2, {512, 512, 1}, 1, random_filter({5, 5}), DType::f32);
  EXPECT_EQ(choose(dense, Options{}, MemorySpace::host).strategy, "fast");
  Problem direct = gauss;
  direct.require_direct_sums();
  EXPECT_NE(choose(direct, Options{}, MemorySpace::host).strategy, "separable");
  EXPECT_NE(find_strategy("separable")->plan(gauss).find("x and y fused"), std::string::npos);
}

// The crossovers that `halo bench --suite crossovers` measures on a device move auto's choices
// (FastTuning's sep_radius_2d ... fft_cost): the strategies' priorities, asked without a GPU
// (the CUDA strategies plan from an H100's facts there).
TEST(SeparableCuda, AutoFollowsTheTunedCrossovers) {
  const Strategy* sep = find_strategy("separable");
  const Strategy* fast = find_strategy("fast");
  const Strategy* fft = find_strategy("fft");
  if (!sep || !fast || !fft) GTEST_SKIP() << "halo was built without CUDA";
  const auto tuned = [](Problem p, const std::string& tune) {
    p.set_tuning(detail::parse_fast_tuning(tune, "test"));
    return p;
  };
  // 2-D radius 3 (7x7): `fast` by default, `separable` from sep_radius_2d = 2.
  const Problem r3(2, {4096, 4096, 1}, 1, make_named_filter("gaussian:sigma=0.75", 2), DType::f32);
  EXPECT_GT(estimate_ns(sep, r3), estimate_ns(fast, r3));
  EXPECT_LT(estimate_ns(sep, tuned(r3, "sep_radius_2d=2")), estimate_ns(fast, r3));
  // 2-D radius 4 (9x9), float32 on rows of a multiple of 4: `separable` where its tiles come by
  // tensor maps (an sm_90 device), else `fast`; either way as sep_radius_2d says where given.
  const Problem r4(2, {4096, 4096, 1}, 1, make_named_filter("gaussian:sigma=1", 2), DType::f32);
  const bool tma = tma_device();
  EXPECT_EQ(estimate_ns(sep, r4) < estimate_ns(fast, r4), tma);
  EXPECT_GT(estimate_ns(sep, tuned(r4, "sep_radius_2d=4")), estimate_ns(fast, r4));
  EXPECT_LT(estimate_ns(sep, tuned(r4, "sep_radius_2d=3")), estimate_ns(fast, r4));
  const Problem r4d(2, {4096, 4096, 1}, 1, make_named_filter("gaussian:sigma=1", 2), DType::f64);
  EXPECT_GT(estimate_ns(sep, r4d), estimate_ns(fast, r4d));
  const Problem r4u(2, {4096, 4097, 1}, 1, make_named_filter("gaussian:sigma=1", 2), DType::f32);
  EXPECT_GT(estimate_ns(sep, r4u), estimate_ns(fast, r4u));
  // 2-D radius 6: `separable` by default, `fast` where it is measured faster up to 6.
  const Problem r6(2, {4096, 4096, 1}, 1, make_named_filter("gaussian:sigma=1.5", 2), DType::f32);
  EXPECT_LT(estimate_ns(sep, r6), estimate_ns(fast, r6));
  EXPECT_GT(estimate_ns(sep, tuned(r6, "sep_radius_2d=6")), estimate_ns(fast, r6));
  // 3-D radius 1 (3x3x3): `fast` by default, `separable` from sep_radius_3d = 0; radius 2:
  // `separable` by default, `fast` where it is measured faster up to 2.
  const Problem v1(3, {256, 256, 256}, 1, make_named_filter("box:3", 3), DType::f32);
  EXPECT_GT(estimate_ns(sep, v1), estimate_ns(fast, v1));
  EXPECT_LT(estimate_ns(sep, tuned(v1, "sep_radius_3d=0")), estimate_ns(fast, v1));
  const Problem v2(3, {256, 256, 256}, 1, make_named_filter("box:5", 3), DType::f32);
  EXPECT_LT(estimate_ns(sep, v2), estimate_ns(fast, v2));
  EXPECT_GT(estimate_ns(sep, tuned(v2, "sep_radius_3d=2")), estimate_ns(fast, v2));
  // 1-D boxes: box rows from 66 taps by default.
  const Problem b33(1, {1 << 20, 1, 1}, 1, make_named_filter("box:33", 1), DType::f32);
  EXPECT_GT(estimate_ns(sep, b33), estimate_ns(fast, b33));
  EXPECT_LT(estimate_ns(sep, tuned(b33, "box_rows_taps=33")), estimate_ns(fast, b33));
  // 1-D long rows: up to 321 taps by default, then `fft`.
  const Problem g385(1, {1 << 20, 1, 1}, 1, make_named_filter("gaussian:sigma=48", 1),
                     DType::f32);
  EXPECT_GT(estimate_ns(sep, g385), estimate_ns(fft, g385));
  EXPECT_LT(estimate_ns(sep, tuned(g385, "long_rows_taps=385")), estimate_ns(fft, g385));
  // Dense 2-D: the FFT's modelled time scaled by fft_cost.
  const Problem d15(2, {4096, 4096, 1}, 1, random_filter({31, 31}), DType::f32);
  EXPECT_LT(estimate_ns(fft, d15), estimate_ns(fast, d15));
  EXPECT_GT(estimate_ns(fft, tuned(d15, "fft_cost=100000")), estimate_ns(fast, d15));
  const Problem d5(2, {4096, 4096, 1}, 1, random_filter({11, 11}), DType::f32);
  EXPECT_GT(estimate_ns(fft, d5), estimate_ns(fast, d5));
  EXPECT_LT(estimate_ns(fft, tuned(d5, "fft_cost=1")), estimate_ns(fast, d5));
  // Along x alone beyond fast's radii, on the rows of a 2-D or 3-D array: the row transforms
  // where their model (scaled by fft_cost) beats separable's x pass; box rows stay there, and
  // so do factors within fast's radii.
  for (int rank : {2, 3}) {
    const Extents e = rank == 2 ? Extents{4096, 4096, 1} : Extents{64, 512, 512};
    const auto along_x = [&](const char* name) {
      return Problem(rank, e, 1, make_named_filter(name, 1).along_axis(rank, rank - 1),
                     DType::f32);
    };
    const Problem gx = along_x("gaussian:sigma=16");
    EXPECT_GT(estimate_ns(sep, gx), estimate_ns(fft, gx)) << rank;
    EXPECT_LT(estimate_ns(sep, gx), estimate_ns(fast, gx)) << rank;
    const Problem gx_tuned = tuned(gx, "fft_cost=1000");
    EXPECT_LT(estimate_ns(sep, gx_tuned), estimate_ns(fft, gx_tuned)) << rank;
    const Problem bx = along_x("box:129");
    EXPECT_LT(estimate_ns(sep, bx), estimate_ns(fft, bx)) << rank;
    const Problem short_x = along_x("gaussian:sigma=2");
    EXPECT_LT(estimate_ns(sep, short_x), estimate_ns(fft, short_x)) << rank;
  }
}

}  // namespace
}  // namespace halo::test
