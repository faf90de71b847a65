// Filters of low rank as sums of separable terms: the analysis (detail::low_rank_terms) and the
// `cpu_lowrank` strategy, held to Summation::low_rank's bound (tests/support.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/factor.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

// The sum of `rank` random outer products of the given 2-D extents.
Filter random_low_rank(std::vector<std::int64_t> shape, int rank) {
  std::vector<double> w;
  for (int r = 0; r < rank; ++r) {
    const Filter f = random_outer_product(shape);
    if (w.empty()) w.assign(f.weights().size(), 0.0);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] += f.weights()[i];
  }
  return Filter(w, shape);
}

// SciPy's gaussian_laplace weights sampled into a dense K x K filter (K = 2 int(4 sigma + 0.5)
// + 1): g (x) d2 + d2 (x) g, g the normalised Gaussian, d2 its second derivative as SciPy's
// _gaussian_kernel1d(order=2) computes it: (x^2 / sigma^4 - 1 / sigma^2) g.
Filter log_filter(double sigma) {
  const int r = int(4 * sigma + 0.5), K = 2 * r + 1;
  std::vector<double> g(static_cast<std::size_t>(K)), d2(static_cast<std::size_t>(K));
  double s = 0;
  for (int i = 0; i < K; ++i)
    s += g[std::size_t(i)] = std::exp(-0.5 * (i - r) * (i - r) / (sigma * sigma));
  for (int i = 0; i < K; ++i) {
    const double x = i - r;
    g[std::size_t(i)] /= s;
    d2[std::size_t(i)] = (x * x / std::pow(sigma, 4) - 1 / (sigma * sigma)) * g[std::size_t(i)];
  }
  std::vector<double> w(std::size_t(K * K));
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < K; ++j)
      w[std::size_t(i * K + j)] =
          g[std::size_t(i)] * d2[std::size_t(j)] + d2[std::size_t(i)] * g[std::size_t(j)];
  return Filter(w, {K, K});
}

// max |W - sum of the terms| over p's correlation weights.
double reconstruction_error(const Problem& p, const detail::LowRankTerms& lr) {
  std::vector<double> e = p.correlation_weights();
  for (const auto& t : lr.terms) {
    const std::vector<double> tw = detail::term_weights(p, t);
    for (std::size_t i = 0; i < e.size(); ++i) e[i] -= tw[i];
  }
  double worst = 0;
  for (double v : e) worst = std::max(worst, std::fabs(v));
  return worst;
}

double max_abs(const std::vector<double>& w) {
  double m = 0;
  for (double v : w) m = std::max(m, std::fabs(v));
  return m;
}

Problem centred(const Filter& f, DType t = DType::f32) {
  const int r = f.rank();
  return Problem(r, {40, 40, 40}, 1, f, t);
}

// ---------------------------------------------------------------------------------------------
// The analysis
// ---------------------------------------------------------------------------------------------

TEST(LowRankAnalysis, LaplacianAndSharpenAreExactAxisLines) {
  const auto lap = detail::low_rank_terms(centred(make_named_filter("laplacian", 2)));
  ASSERT_TRUE(lap);
  EXPECT_TRUE(lap->axis_lines);
  ASSERT_EQ(lap->terms.size(), 2u);
  EXPECT_EQ(lap->residual, 0.0);
  // The y line [1, 0, 1] (the centre given to x), the x line [1, -4, 1]; the other windows {1}.
  EXPECT_EQ(lap->terms[0].w[1], (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(lap->terms[0].w[2], (std::vector<double>{1}));
  EXPECT_EQ(lap->terms[1].w[1], (std::vector<double>{1}));
  EXPECT_EQ(lap->terms[1].w[2], (std::vector<double>{1, -4, 1}));
  EXPECT_EQ(lap->terms[0].long_axes, 1);
  EXPECT_EQ(lap->terms[0].taps + lap->terms[1].taps, 6);

  const auto sharp = detail::low_rank_terms(centred(make_named_filter("sharpen", 2)));
  ASSERT_TRUE(sharp);
  ASSERT_EQ(sharp->terms.size(), 2u);
  EXPECT_EQ(sharp->terms[1].w[2], (std::vector<double>{-1, 5, -1}));
  EXPECT_EQ(sharp->residual, 0.0);

  for (const char* name : {"laplacian", "sharpen"}) {
    const Problem p = centred(make_named_filter(name, 3));
    const auto lr = detail::low_rank_terms(p);
    ASSERT_TRUE(lr) << name;
    EXPECT_TRUE(lr->axis_lines);
    EXPECT_EQ(lr->terms.size(), 3u) << name;
    EXPECT_EQ(lr->residual, 0.0) << name;
    EXPECT_EQ(reconstruction_error(p, *lr), 0.0) << name;
  }
  EXPECT_EQ(detail::low_rank_terms(centred(make_named_filter("laplacian", 3)))->terms[2].w[2],
            (std::vector<double>{1, -6, 1}));
}

TEST(LowRankAnalysis, RandomLowRankFiltersGiveTheirRank) {
  for (int rank : {2, 3})
    for (const auto& shape : {std::vector<std::int64_t>{7, 9}, {5, 5}, {12, 4}, {17, 17}}) {
      const Filter f = random_low_rank(shape, rank);
      const Problem p = centred(f);
      const auto lr = detail::low_rank_terms(p);
      ASSERT_TRUE(lr);
      EXPECT_FALSE(lr->axis_lines);
      EXPECT_EQ(lr->terms.size(), std::size_t(rank)) << f.shape_string();
      EXPECT_LE(lr->dropped, 1e-12 * lr->largest);
      EXPECT_LE(reconstruction_error(p, *lr), 1e-13 * max_abs(f.weights())) << f.shape_string();
      EXPECT_LE(lr->residual, 1e-13 * max_abs(f.weights()));
      for (const auto& t : lr->terms) EXPECT_EQ(t.long_axes, 2);
    }
  // Rank 1 is one term (cpu_separable's), which cpu_lowrank refuses.
  const Problem one = centred(random_outer_product({6, 8}));
  EXPECT_EQ(detail::low_rank_terms(one)->terms.size(), 1u);
  const Status st = find_strategy("cpu_lowrank")->can_implement(one);
  EXPECT_FALSE(st);
  EXPECT_NE(st.reason.find("rank 1"), std::string::npos) << st.reason;
}

TEST(LowRankAnalysis, FullRankFiltersGainNothing) {
  const Problem p(2, {300, 300, 1}, 1, random_filter({7, 7}), DType::f32);
  const auto lr = detail::low_rank_terms(p);
  ASSERT_TRUE(lr);
  EXPECT_EQ(lr->terms.size(), 7u);
  EXPECT_LE(reconstruction_error(p, *lr), 1e-13 * max_abs(p.correlation_weights()));
  // 7 terms of 14 taps cost more than the 49 dense taps: never chosen.
  EXPECT_GT(estimate_ns(find_strategy("cpu_lowrank"), p), estimate_ns(find_strategy("cpu"), p));
  Options cpu;
  cpu.backend = Backend::cpu;
  EXPECT_EQ(choose(p, cpu).strategy, "cpu");
}

// A Laplacian of Gaussian is two terms, symmetric: the paired kernels run them.
TEST(LowRankAnalysis, LaplacianOfGaussianIsTwoSymmetricTerms) {
  for (double sigma : {1.0, 2.0, 3.0, 4.0}) {
    const Filter f = log_filter(sigma);
    const Problem p(2, {256, 256, 1}, 1, f, DType::f32);
    const auto lr = detail::low_rank_terms(p);
    ASSERT_TRUE(lr);
    EXPECT_EQ(lr->terms.size(), 2u) << sigma;
    EXPECT_LE(reconstruction_error(p, *lr), 1e-13 * max_abs(f.weights()));
    for (const auto& t : lr->terms)
      for (int a : {1, 2}) {
        const auto& w = t.w[std::size_t(a)];
        EXPECT_TRUE(std::equal(w.begin(), w.end(), w.rbegin())) << "sigma " << sigma;
      }
    const std::string plan = find_strategy("cpu_lowrank")->plan(p);
    EXPECT_NE(plan.find("2 separable terms (SVD"), std::string::npos) << plan;
    EXPECT_NE(plan.find("sym"), std::string::npos) << plan;
  }
}

// Weights rounded to float32 (a LoG built in float32, as NumPy and CuPy users pass it): the
// rounding spreads singular values of about 1e-8 s_0 over every rank, which float32's tolerance
// (2^-20 s_0 dropped) leaves out and float64's (1e-12) keeps.
TEST(LowRankAnalysis, WeightsRoundedToFloat32KeepTheirRankInFloat32) {
  for (double sigma : {1.0, 4.0, 8.0}) {
    const Filter exact = log_filter(sigma);
    std::vector<double> w = exact.weights();
    for (double& v : w) v = double(float(v));
    const Filter rounded(w, {exact.extents()[0], exact.extents()[1]});
    const Problem p32(2, {300, 300, 1}, 1, rounded, DType::f32);
    const Problem p64(2, {300, 300, 1}, 1, rounded, DType::f64);
    const auto lr32 = detail::low_rank_terms(p32), lr64 = detail::low_rank_terms(p64);
    ASSERT_TRUE(lr32 && lr64);
    EXPECT_EQ(lr32->terms.size(), 2u) << sigma;
    EXPECT_GT(lr64->terms.size(), 2u) << sigma;
    EXPECT_LE(lr32->dropped, 0x1p-20 * lr32->largest);
    EXPECT_GT(lr32->dropped, 0.0);
    // The float32 terms stay within the bound: the analysis' E is what the tests' tolerance
    // adds (low_rank_tolerances), and cpu_lowrank holds it.
    EXPECT_EQ(check_strategy<float>("cpu_lowrank", 2, {70, 90, 1}, 1, rounded, Op::correlate,
                                    false, Edges::all(Boundary::reflect)),
              "");
    EXPECT_EQ(find_strategy("cpu_lowrank")->summation(p32), Summation::low_rank);
  }
}

// Origins, even extents, convolve, a folded filter: the terms rebuild the problem's weights.
TEST(LowRankAnalysis, TermsRebuildShiftedFlippedAndFoldedWeights) {
  Edges e;
  e.origin = {1, -2, 0};
  for (Op op : {Op::correlate, Op::convolve}) {
    const Filter f = random_low_rank({6, 9}, 2);
    const Problem p(2, {30, 30, 1}, 1, f, DType::f64, op, e);
    const auto lr = detail::low_rank_terms(p);
    ASSERT_TRUE(lr);
    EXPECT_EQ(lr->terms.size(), 2u);
    EXPECT_LE(reconstruction_error(p, *lr), 1e-13 * max_abs(f.weights()));
    // Larger than the array: folded under reflect.
    const Problem q(2, {4, 3, 1}, 1, f, DType::f32, op, Edges::all(Boundary::reflect));
    const auto lq = detail::low_rank_terms(q);
    ASSERT_TRUE(lq);
    EXPECT_LE(reconstruction_error(q, *lq), 1e-13 * max_abs(q.correlation_weights()));
  }
  // A shifted Laplacian is still two lines, through the shifted centre.
  Edges shift;
  shift.origin = {1, -1, 0};
  const Problem p(2, {30, 30, 1}, 1, make_named_filter("laplacian", 2), DType::f32, Op::correlate,
                  shift);
  const auto lr = detail::low_rank_terms(p);
  ASSERT_TRUE(lr);
  EXPECT_TRUE(lr->axis_lines);
  EXPECT_EQ(lr->terms.size(), 2u);
  EXPECT_EQ(reconstruction_error(p, *lr), 0.0);
  // Not a sum the analysis finds: a 3-D filter of three long axes off the axis lines.
  EXPECT_FALSE(detail::low_rank_terms(centred(random_filter({3, 3, 3}))));
  EXPECT_FALSE(detail::low_rank_terms(centred(random_filter({1, 9}))));  // one long axis
}

// The named filter log:sigma=S is SciPy's gaussian_laplace as a dense filter: in 2-D the
// hand-built g (x) d2 + d2 (x) g above, in 3-D the sum of three such products (the centre weight
// sum_a d2(0) g(0)^2, d2(0) = -g(0) / sigma^2), per-axis sigma and truncate as gaussian's, and a
// rank-2 sum of terms in 2-D.
TEST(LowRankAnalysis, NamedLogIsScipysGaussianLaplace) {
  for (double sigma : {1.0, 2.5, 4.0}) {
    const Filter named = make_named_filter("log:sigma=" + std::to_string(sigma), 2);
    const Filter hand = log_filter(sigma);
    ASSERT_EQ(named.extents()[0], hand.extents()[0]);
    ASSERT_EQ(named.extents()[1], hand.extents()[1]);
    for (std::size_t i = 0; i < hand.weights().size(); ++i)
      EXPECT_NEAR(named.weights()[i], hand.weights()[i], 1e-15) << sigma << " at " << i;
    const auto lr = detail::low_rank_terms(centred(named));
    ASSERT_TRUE(lr);
    EXPECT_EQ(lr->terms.size(), 2u);
  }
  const Filter v = make_named_filter("log:sigma=1,truncate=2", 3);
  ASSERT_EQ(v.extents()[0], 5);
  const double g0 = 1 / (1 + 2 * std::exp(-0.5) + 2 * std::exp(-2.0));
  EXPECT_NEAR(v.weights()[62], -3 * g0 * g0 * g0, 1e-15);
  const Filter aniso = make_named_filter("log:sigma=1x2", 2);
  EXPECT_EQ(aniso.extents()[0], 9);
  EXPECT_EQ(aniso.extents()[1], 17);
  for (const char* bad : {"log", "log:sigma=0", "log:sigma=1x0", "log:sigma=1,order=2"})
    EXPECT_THROW(make_named_filter(bad, 2), Error) << bad;
  try {
    make_named_filter("log:sigma=2x0", 2);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sigma > 0 on every axis"), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The `cpu_lowrank` strategy
// ---------------------------------------------------------------------------------------------


struct LrCase {
  int rank;
  Extents ext;
  std::int64_t batch;
  std::function<Filter()> filter;
  std::string what;
};

std::vector<LrCase> lr_cases() {
  const auto lowrank = [](std::vector<std::int64_t> s, int r) {
    return [s, r] { return random_low_rank(s, r); };
  };
  const auto named = [](const char* n, int rank) {
    return [n, rank] { return make_named_filter(n, rank); };
  };
  // A 3-D filter of extent 1 along z (a 2-D low-rank filter per plane), along y (terms in z and
  // x: only axis lines), and a cross in z and x.
  const auto flat = [] {
    Filter f = random_low_rank({5, 7}, 2);
    return Filter(f.weights(), {1, 5, 7});
  };
  const auto cross_zx = [] {
    std::vector<double> w(15, 0.0);
    for (int i = 0; i < 3; ++i) w[std::size_t(i * 5 + 2)] = random_vector<double>(1)[0];
    for (int j = 0; j < 5; ++j) w[std::size_t(5 + j)] = random_vector<double>(1)[0];
    return Filter(w, {3, 1, 5});
  };
  return {
      {2, {61, 75, 1}, 1, lowrank({7, 9}, 2), "rank 2, 7x9"},
      {2, {40, 33, 1}, 2, lowrank({5, 5}, 3), "rank 3, 5x5, batch"},
      {2, {1, 1, 1}, 1, lowrank({3, 3}, 2), "1x1 array"},
      {2, {2, 17, 1}, 1, lowrank({5, 3}, 2), "2 rows"},
      {2, {15, 16, 1}, 1, lowrank({4, 6}, 2), "even extents"},
      {2, {17, 1, 1}, 1, lowrank({3, 5}, 2), "1 column"},
      {2, {7, 5, 1}, 1, lowrank({21, 17}, 3), "filter larger than the array"},
      {2, {131, 257, 1}, 1, lowrank({25, 25}, 2), "25x25, chunks of columns"},
      {2, {37, 1100, 1}, 1, lowrank({9, 9}, 4), "rank 4, rows cut into chunks"},
      {2, {41, 53, 1}, 1, [] { return log_filter(2.0); }, "LoG sigma 2"},
      {2, {29, 31, 1}, 1, named("laplacian", 2), "laplacian"},
      {2, {16, 23, 1}, 2, named("sharpen", 2), "sharpen"},
      {3, {12, 17, 19}, 1, named("laplacian", 3), "3-D laplacian"},
      {3, {1, 5, 2}, 2, named("sharpen", 3), "3-D sharpen, small"},
      {3, {9, 14, 23}, 1, flat, "3-D array, 2-D rank-2 filter"},
      {3, {11, 7, 13}, 1, cross_zx, "3-D cross in z and x"},
  };
}

// Runs check(case, filter, edges, op, problem, verdict of `strategy`) on every case under every
// edge set (origins clamped into the filter, the ops alternating), except filters that fold to
// one long axis (which the strategy refuses); returns how many it checked.
template <class Check>
int for_each_lr_case(const std::vector<LrCase>& cases, const std::string& strategy, Check check) {
  int ran = 0, i = 0;
  for (const LrCase& c : cases)
    for (const Edges& edges : edge_sets()) {
      const Filter f = c.filter();
      Edges e = edges;
      for (int a = 0; a < c.rank; ++a)
        e.origin[a] =
            std::clamp<std::int64_t>(e.origin[a], -(f.extents()[a] / 2), (f.extents()[a] - 1) / 2);
      const Op op = i++ % 2 ? Op::convolve : Op::correlate;
      const Problem p(c.rank, c.ext, c.batch, f, DType::f32, op, e);
      const Status st = find_strategy(strategy)->can_implement(p);
      const Dims3 k = p.filter_dims3();
      if (!st && (k.z > 1) + (k.y > 1) + (k.x > 1) < 2) continue;  // folded to one long axis
      check(c, f, e, op, p, st);
      ++ran;
    }
  return ran;
}

// Every case under every edge set (origins clamped into the filter), both ops, both dtypes.
TEST(LowRankCpu, MatchesTheReferenceOnEveryModeOriginOpAndDtype) {
  const int ran = for_each_lr_case(lr_cases(), "cpu_lowrank", [](const LrCase& c, const Filter& f,
                                                                 const Edges& e, Op op,
                                                                 const Problem& p,
                                                                 const Status& st) {
    // A 3-D cross whose centre an origin moves off the output: its z term would read a shifted
    // column, or its x-y terms a shifted plane, which the stages do not (refused, and said so).
    if (!st && c.rank == 3 && (e.origin[0] != 0 || e.origin[1] != 0 || e.origin[2] != 0)) {
      EXPECT_NE(st.reason.find("spans z"), std::string::npos) << st.reason;
      return;
    }
    ASSERT_TRUE(st) << c.what << ": " << p.describe() << ": " << st.reason;
    EXPECT_EQ(check_strategy<float>("cpu_lowrank", c.rank, c.ext, c.batch, f, op, false, e), "")
        << c.what;
    EXPECT_EQ(check_strategy<double>("cpu_lowrank", c.rank, c.ext, c.batch, f, op, false, e), "")
        << c.what;
  });
  EXPECT_GT(ran, 100);
}

// Runs cpu_lowrank on p for `in` (outputs poisoned first); the number of outputs beyond the
// tolerance of Summation::low_rank.
template <class T>
std::int64_t wrong_outputs(const Problem& p, const std::vector<T>& in,
                           const std::string& strategy = "cpu_lowrank") {
  std::vector<T> out(in.size());
  poison(out);
  std::vector<double> ref(in.size());
  cpu::reference_f64(p, in.data(), ref.data());
  const std::vector<double> tol = tolerances(strategy, p, in);
  Options o;
  o.strategy = strategy;
  o.op = p.op();
  o.edges = p.edges();
  apply(ConstArrayView(in.data(), p.dtype(), p.rank(), p.extents(), p.batch()),
        array_view(out, p.rank(), p.extents(), p.batch()), p.filter(), o);
  std::int64_t bad = 0;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (!(std::fabs(double(out[k]) - ref[k]) <= tol[k])) ++bad;
  return bad;
}

// Inputs of magnitudes 1e-6 .. 1e6 (log-uniform, random signs), and an array whose first rows
// are of size 1e6 and the rest 1e-6: the terms' partial sums cancel there, and the bound over
// sum_t |u_t (x) v_t| |x| must hold them.
void badly_scaled_within_the_bound(const std::string& strategy) {
  std::uniform_real_distribution<double> mag(-6.0, 6.0), val(0.5, 1.0);
  std::bernoulli_distribution sign(0.5);
  for (const auto& make :
       {std::function<Filter()>([] { return log_filter(3.0); }), std::function<Filter()>([] {
          return random_low_rank({9, 7}, 3);
        }),
        std::function<Filter()>([] { return make_named_filter("sharpen", 2); })})
    for (int layout = 0; layout < 2; ++layout) {
      const Filter f = make();
      const Extents ext{90, 110, 1};
      const Problem p32(2, ext, 1, f, DType::f32, Op::correlate, Edges::all(Boundary::reflect));
      const Problem p64(2, ext, 1, f, DType::f64, Op::convolve, Edges::all(Boundary::mirror));
      std::vector<double> v(std::size_t(p32.elements()));
      for (std::size_t k = 0; k < v.size(); ++k) {
        const double m = layout == 0 ? std::pow(10.0, mag(rng())) : (k / 110 < 20 ? 1e6 : 1e-6);
        v[k] = (sign(rng()) ? -1 : 1) * val(rng()) * m;
      }
      const std::vector<float> in32(v.begin(), v.end());
      EXPECT_EQ(wrong_outputs(p32, in32, strategy), 0)
          << strategy << ": " << p32.describe() << "; seed " << fresh_seed();
      EXPECT_EQ(wrong_outputs(p64, v, strategy), 0)
          << strategy << ": " << p64.describe() << "; seed " << fresh_seed();
    }
}

TEST(LowRankCpu, BadlyScaledInputStaysWithinTheBound) { badly_scaled_within_the_bound("cpu_lowrank"); }

// The tolerance is tight enough to catch a term dropped or of the wrong sign: the result of
// the filter less one term, or with one term negated, fails it at most outputs.
TEST(LowRankCpu, ToleranceCatchesADroppedOrMisSignedTerm) {
  for (const Filter& f :
       {log_filter(2.0), random_low_rank({7, 7}, 2), make_named_filter("laplacian", 2)}) {
    const Problem p(2, {60, 70, 1}, 1, f, DType::f32, Op::correlate, Edges::all(Boundary::wrap));
    const auto lr = detail::low_rank_terms(p);
    ASSERT_TRUE(lr);
    const std::vector<float> in = random_vector<float>(p.elements());
    const std::vector<double> tol = low_rank_tolerances(p, in);
    std::vector<double> ref(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    for (double scale : {-1.0, -2.0}) {  // dropped (W - t), mis-signed (W - 2t)
      std::vector<double> w = p.correlation_weights();
      const std::vector<double> tw = detail::term_weights(p, lr->terms.back());
      for (std::size_t i = 0; i < w.size(); ++i) w[i] += scale * tw[i];
      const Dims3 k = p.filter_dims3();
      const Problem q(2, {60, 70, 1}, 1, Filter(w, {k.y, k.x}), DType::f32, Op::correlate,
                      Edges::all(Boundary::wrap));
      std::vector<double> got(in.size());
      cpu::reference_f64(q, in.data(), got.data());
      std::int64_t bad = 0;
      for (std::size_t i = 0; i < in.size(); ++i) bad += !(std::fabs(got[i] - ref[i]) <= tol[i]);
      EXPECT_GT(bad, std::int64_t(in.size()) * 9 / 10) << f.shape_string() << " scale " << scale;
    }
  }
}

TEST(LowRankCpu, AutoTakesLargeSumsAndLeavesTheSmallLaplacian) {
  Options cpu;
  cpu.backend = Backend::cpu;
  const Problem log25(2, {2048, 2048, 1}, 1, log_filter(3.0), DType::f32);
  EXPECT_EQ(log25.filter().extents()[0], 25);
  EXPECT_EQ(choose(log25, cpu).strategy, "cpu_lowrank");
  const Problem lap(2, {2048, 2048, 1}, 1, make_named_filter("laplacian", 2), DType::f32);
  EXPECT_EQ(choose(lap, cpu).strategy, "cpu");
  const Problem lap3(3, {160, 160, 160}, 1, make_named_filter("laplacian", 3), DType::f32);
  EXPECT_EQ(choose(lap3, cpu).strategy, "cpu");
  // A rank-2 filter of 9x9 (36 taps in passes against 81 dense) and a 33x33 LoG, both past the
  // dense sum, the second past the FFT too (docs/notes/tuning.md).
  EXPECT_EQ(
      choose(Problem(2, {2048, 2048, 1}, 1, random_low_rank({9, 9}, 2), DType::f32), cpu).strategy,
      "cpu_lowrank");
  EXPECT_EQ(choose(Problem(2, {2048, 2048, 1}, 1, log_filter(4.0), DType::f32), cpu).strategy,
            "cpu_lowrank");
  // Rank 1 stays with cpu_separable.
  const Problem gauss(2, {2048, 2048, 1}, 1, make_named_filter("gaussian:sigma=3", 2), DType::f32);
  EXPECT_EQ(choose(gauss, cpu).strategy, "cpu_separable");
  // Under direct sums, never.
  Problem direct = log25;
  direct.require_direct_sums();
  Options d = cpu;
  d.direct_sums = true;
  EXPECT_NE(choose(direct, d).strategy, "cpu_lowrank");
}

TEST(LowRankCpu, DirectSumsRefuseTheStagedSumsAndKeepSinglePasses) {
  const Strategy* s = find_strategy("cpu_lowrank");
  ASSERT_NE(s, nullptr);
  for (const Filter& f : {log_filter(1.0), random_low_rank({5, 5}, 2)}) {
    Problem p(2, {50, 50, 1}, 1, f, DType::f32);
    EXPECT_EQ(s->summation(p), Summation::low_rank);
    EXPECT_TRUE(s->can_implement(p));
    p.require_direct_sums();
    const Status st = s->can_implement(p);
    EXPECT_FALSE(st);
    EXPECT_NE(st.reason.find("direct sums"), std::string::npos) << st.reason;
  }
  // Axis lines: each term a single pass, each output a plain sum of its taps.
  for (int rank : {2, 3}) {
    Problem p(rank, {20, 20, 20}, 1, make_named_filter("laplacian", rank), DType::f32);
    p.require_direct_sums();
    EXPECT_TRUE(s->can_implement(p));
    EXPECT_EQ(s->summation(p), Summation::direct);
    EXPECT_EQ(check_strategy<float>("cpu_lowrank", rank, {20, 20, 20}, 1,
                                    make_named_filter("laplacian", rank), Op::correlate, true),
              "");
  }
}

TEST(LowRankCpu, PlanNamesTheTerms) {
  const Strategy* s = find_strategy("cpu_lowrank");
  const Problem lap(2, {64, 64, 1}, 1, make_named_filter("laplacian", 2), DType::f32);
  const std::string plan = s->plan(lap);
  EXPECT_NE(plan.find("2 separable terms (axis lines, exact)"), std::string::npos) << plan;
  const Problem lap3(3, {16, 16, 16}, 1, make_named_filter("laplacian", 3), DType::f32);
  const std::string plan3 = s->plan(lap3);
  EXPECT_NE(plan3.find("3 separable terms"), std::string::npos) << plan3;
  EXPECT_NE(plan3.find("z's pass of the input added"), std::string::npos) << plan3;
  // Refusals say why.
  EXPECT_NE(s->can_implement(Problem(3, {9, 9, 9}, 1, random_filter({3, 3, 3}), DType::f32))
                .reason.find("three long axes"),
            std::string::npos);
  EXPECT_NE(s->can_implement(Problem(2, {9, 9, 1}, 1, random_filter({1, 5}), DType::f32))
                .reason.find("fewer than two"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The `lowrank` strategy (CUDA): each term a rank-1 filter's passes, every term after the first
// adding into the output.
// ---------------------------------------------------------------------------------------------

// Cases beyond lr_cases(): strip and chunk edges of the fused kernel, a term whose x factor
// takes long rows first (two passes through the scratch array, the second adding), rank 5.
std::vector<LrCase> lr_cuda_cases() {
  std::vector<LrCase> v = lr_cases();
  v.push_back({2, {70, 513, 1}, 1, [] { return random_low_rank({17, 33}, 2); }, "17x33, strips"});
  v.push_back({2, {21, 2100, 1}, 1, [] { return random_low_rank({3, 161}, 2); },
               "3x161 on rows of 2100: long rows, then y adding"});
  v.push_back({2, {130, 90, 1}, 2, [] { return random_low_rank({11, 13}, 5); }, "rank 5"});
  v.push_back({3, {7, 40, 50}, 2,
               [] {
                 const Filter f = log_filter(2.0);
                 return Filter(f.weights(), {1, 17, 17});
               },
               "LoG per plane, batch"});
  return v;
}

TEST(LowRankCuda, MatchesTheReferenceOnEveryModeOriginOpAndDtype) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  const int ran = for_each_lr_case(lr_cuda_cases(), "lowrank", [](const LrCase& c,
                                                                  const Filter& f, const Edges& e,
                                                                  Op op, const Problem& p,
                                                                  const Status& st) {
    ASSERT_TRUE(st) << c.what << ": " << p.describe() << ": " << st.reason;
    EXPECT_EQ(check_strategy<float>("lowrank", c.rank, c.ext, c.batch, f, op, false, e), "")
        << c.what;
    // float64's fused kernel stops at radius 16.
    const Problem p64(c.rank, c.ext, c.batch, f, DType::f64, op, e);
    if (find_strategy("lowrank")->can_implement(p64))
      EXPECT_EQ(check_strategy<double>("lowrank", c.rank, c.ext, c.batch, f, op, false, e), "")
          << c.what;
  });
  EXPECT_GT(ran, 150);
}

TEST(LowRankCuda, BadlyScaledInputStaysWithinTheBound) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  badly_scaled_within_the_bound("lowrank");
}

// Small cases for compute-sanitizer (memcheck's filter CudaSanitizer.*): the fused pass adding
// into the output at strip, chunk and array edges, and a term of two passes.
TEST(CudaSanitizer, LowRankTerms) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  for (const Edges& e : {Edges::all(Boundary::reflect), Edges::all(Boundary::constant, 2.5)}) {
    EXPECT_EQ(check_strategy<float>("lowrank", 2, {37, 260, 1}, 1, log_filter(2.0),
                                    Op::correlate, false, e),
              "");
    EXPECT_EQ(check_strategy<float>("lowrank", 2, {9, 2049, 1}, 1, random_low_rank({3, 131}, 2),
                                    Op::correlate, false, e),
              "");
    EXPECT_EQ(check_strategy<double>("lowrank", 3, {9, 11, 13}, 1,
                                     make_named_filter("laplacian", 3), Op::convolve, false, e),
              "");
  }
}

// Large Laplacians of Gaussians and other low-rank filters go to `lowrank`, past the FFT and the
// dense sum; the 3x3 Laplacian stays dense (at copy speed in `fast`), full-rank filters on
// `fast` or `fft`, rank 1 on `separable`. Asked of the priorities, so without a GPU too (the
// CUDA strategies plan from an H100's facts there).
TEST(LowRankCuda, AutoTakesLargeLowRankFiltersOnly) {
  const Strategy* lr = find_strategy("lowrank");
  const Strategy* fast = find_strategy("fast");
  const Strategy* fft = find_strategy("fft");
  if (!lr || !fast || !fft) GTEST_SKIP() << "halo was built without CUDA";
  const auto best = [&](const Problem& p) {
    return std::min(estimate_ns(fast, p), estimate_ns(fft, p));
  };
  for (double sigma : {2.0, 4.0, 8.0}) {
    const Problem p(2, {4096, 4096, 1}, 1, log_filter(sigma), DType::f32);
    EXPECT_LT(estimate_ns(lr, p), best(p)) << sigma << ": " << lr->plan(p);
  }
  const Problem r2(2, {4096, 4096, 1}, 1, random_low_rank({31, 31}, 2), DType::f32);
  EXPECT_LT(estimate_ns(lr, r2), best(r2));
  // A LoG whose weights were rounded to float32 (from NumPy or CuPy): still two terms.
  std::vector<double> w = log_filter(4.0).weights();
  for (double& v : w) v = double(float(v));
  const Problem rounded(2, {4096, 4096, 1}, 1, Filter(w, {33, 33}), DType::f32);
  EXPECT_LT(estimate_ns(lr, rounded), best(rounded)) << lr->plan(rounded);
  EXPECT_NE(lr->plan(rounded).find("2 separable terms"), std::string::npos) << lr->plan(rounded);
  // The FFT's cost scaled down a thousandfold: the FFT then.
  Problem cheap = r2;
  cheap.set_tuning(detail::parse_fast_tuning("fft_cost=1", "test"));
  EXPECT_GT(estimate_ns(lr, cheap), estimate_ns(fft, cheap));
  for (const Problem& p :
       {Problem(2, {4096, 4096, 1}, 1, make_named_filter("laplacian", 2), DType::f32),
        Problem(3, {256, 256, 256}, 1, make_named_filter("laplacian", 3), DType::f32),
        Problem(2, {4096, 4096, 1}, 1, random_filter({31, 31}), DType::f32),
        Problem(2, {4096, 4096, 1}, 1, random_low_rank({7, 7}, 3), DType::f32)})
    EXPECT_GT(estimate_ns(lr, p), best(p)) << p.describe() << ": " << lr->plan(p);
  // Rank 1: `separable`'s.
  const Status one = lr->can_implement(
      Problem(2, {512, 512, 1}, 1, make_named_filter("gaussian:sigma=3", 2), DType::f32));
  EXPECT_FALSE(one);
  EXPECT_NE(one.reason.find("rank 1"), std::string::npos) << one.reason;
}

TEST(LowRankCuda, RefusesWhatItCannotRunAndSaysWhy) {
  const Strategy* s = find_strategy("lowrank");
  if (!s) GTEST_SKIP() << "halo was built without CUDA";
  const auto reason = [&](const Problem& p) { return s->can_implement(p).reason; };
  EXPECT_NE(reason(Problem(2, {300, 300, 1}, 1, random_filter({40, 40}), DType::f32))
                .find("40 separable terms: more than 32"),
            std::string::npos);
  EXPECT_NE(reason(Problem(3, {9, 9, 9}, 1, random_filter({3, 3, 3}), DType::f32))
                .find("neither axis lines"),
            std::string::npos);
  EXPECT_NE(reason(Problem(2, {9, 9, 1}, 1, random_filter({1, 5}), DType::f32))
                .find("fewer than two"),
            std::string::npos);
  // A term of one tap (here the centre's 1.5, the SVD's second term beside the corner's): no
  // pass to run it (this crashed the planner once), under either footprint.
  for (Footprint fp : {Footprint::nonzero, Footprint::every}) {
    Problem one(2, {16, 5, 1}, 1, Filter({0, 0, 0, 1.5, -0.935575, 0}, {3, 2}), DType::f32);
    one.set_footprint(fp);
    const std::string why = reason(one);
    if (fp == Footprint::nonzero)
      EXPECT_NE(why.find("one tap has nothing to separate"), std::string::npos) << why;
  }
  // A y factor beyond the fused kernel's radius 64: its last pass cannot add.
  EXPECT_NE(reason(Problem(2, {300, 300, 1}, 1, random_low_rank({131, 3}, 2), DType::f32))
                .find("cannot add into the output"),
            std::string::npos);
  // Direct sums: SVD sums refused, axis lines kept (each output a plain sum of its taps).
  Problem log = Problem(2, {50, 50, 1}, 1, log_filter(1.0), DType::f32);
  EXPECT_EQ(s->summation(log), Summation::low_rank);
  log.require_direct_sums();
  EXPECT_NE(reason(log).find("direct sums"), std::string::npos) << reason(log);
  for (int rank : {2, 3}) {
    Problem p(rank, {20, 20, 20}, 1, make_named_filter("laplacian", rank), DType::f32);
    p.require_direct_sums();
    EXPECT_TRUE(s->can_implement(p)) << reason(p);
    EXPECT_EQ(s->summation(p), Summation::direct);
  }
}

TEST(LowRankCuda, PlanNamesTheTermsAndTheirPasses) {
  const Strategy* s = find_strategy("lowrank");
  if (!s) GTEST_SKIP() << "halo was built without CUDA";
  const std::string plan =
      s->plan(Problem(2, {512, 512, 1}, 1, log_filter(4.0), DType::f32));
  EXPECT_NE(plan.find("2 separable terms (SVD"), std::string::npos) << plan;
  EXPECT_NE(plan.find("term 2, factors of radius 16 (x), 16 (y): x and y fused"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("adds its last pass into the output"), std::string::npos) << plan;
  const Problem lap3(3, {16, 16, 16}, 1, make_named_filter("laplacian", 3), DType::f32);
  const std::string plan3 = s->plan(lap3);
  EXPECT_NE(plan3.find("3 separable terms (axis lines, exact)"), std::string::npos) << plan3;
  EXPECT_NE(plan3.find("z alone"), std::string::npos) << plan3;
  EXPECT_TRUE(s->workspace(lap3).empty());
  const Problem rows(2, {21, 2100, 1}, 1, random_low_rank({3, 161}, 2), DType::f32);
  EXPECT_NE(s->plan(rows).find("long rows"), std::string::npos) << s->plan(rows);
  EXPECT_EQ(s->workspace(rows).size(), 1u);
}

}  // namespace
}  // namespace halo::test
