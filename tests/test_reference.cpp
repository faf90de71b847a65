// Known answers for the reference (the oracle of every other test), the named filters, Problem
// validation and dispatch. Expected values are worked out by hand or were computed independently
// with scipy.ndimage.correlate / convolve (mode='constant'), as noted beside each.
#include <gtest/gtest.h>

#include <numeric>

#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

std::vector<double> run_reference(int rank, Extents ext, const Filter& f, Op op,
                                  const std::vector<double>& in) {
  const Problem p(rank, ext, 1, f, DType::f64, op);
  std::vector<double> out(in.size());
  cpu::reference_f64(p, in.data(), out.data());
  return out;
}

TEST(Reference, HandWorked1D) {
  const std::vector<double> n{1, 2, 3, 4, 5};
  const Filter f({1, 10, 100}, {3});
  // correlate: P[i] = N[i-1] + 10 N[i] + 100 N[i+1]
  EXPECT_EQ(run_reference(1, {5, 1, 1}, f, Op::correlate, n),
            (std::vector<double>{210, 321, 432, 543, 54}));
  // convolve: P[i] = N[i+1] + 10 N[i] + 100 N[i-1]
  EXPECT_EQ(run_reference(1, {5, 1, 1}, f, Op::convolve, n),
            (std::vector<double>{12, 123, 234, 345, 450}));
}

TEST(Reference, EvenFilter1DMatchesScipy) {
  const std::vector<double> n{1, 2, 3, 4, 5};
  const Filter f({1, 10}, {2});  // centre k/2 = 1: P[i] = N[i-1] + 10 N[i]
  EXPECT_EQ(run_reference(1, {5, 1, 1}, f, Op::correlate, n),
            (std::vector<double>{10, 21, 32, 43, 54}));
  EXPECT_EQ(run_reference(1, {5, 1, 1}, f, Op::convolve, n),
            (std::vector<double>{12, 23, 34, 45, 50}));
}

TEST(Reference, SobelOn3x3MatchesScipy) {
  std::vector<double> n(9);
  std::iota(n.begin(), n.end(), 1.0);
  const Filter f = make_named_filter("sobel-x", 2);
  EXPECT_EQ(run_reference(2, {3, 3, 1}, f, Op::correlate, n),
            (std::vector<double>{9, 6, -9, 20, 8, -20, 21, 6, -21}));
}

TEST(Reference, Even2x3FilterMatchesScipy) {
  std::vector<double> n(12), w(6);
  std::iota(n.begin(), n.end(), 1.0);
  std::iota(w.begin(), w.end(), 1.0);
  const Filter f(w, {2, 3});
  EXPECT_EQ(run_reference(2, {3, 4, 1}, f, Op::correlate, n),
            (std::vector<double>{17, 32, 47, 32, 69, 106, 127, 79, 133, 190, 211, 127}));
  EXPECT_EQ(run_reference(2, {3, 4, 1}, f, Op::convolve, n),
            (std::vector<double>{29, 62, 83, 75, 77, 146, 167, 139, 85, 148, 163, 126}));
}

TEST(Reference, DeltaReproducesTheInput) {
  for (int rank = 1; rank <= 3; ++rank)
    for (std::int64_t k : {1, 3, 4, 7}) {
      const Extents e = rank == 1 ? Extents{50, 1, 1} : rank == 2 ? Extents{9, 11, 1}
                                                                  : Extents{5, 6, 7};
      const Filter f = make_named_filter("delta:" + std::to_string(k), rank);
      const std::vector<double> n = random_vector<double>(to_dims3(e, rank).count());
      for (Op op : {Op::correlate, Op::convolve})
        EXPECT_EQ(run_reference(rank, e, f, op, n), n) << "rank " << rank << " k " << k;
    }
}

TEST(Reference, ShiftFilterMovesTheSignal) {
  const std::vector<double> n = random_vector<double>(20);
  const Filter f({0, 0, 1}, {3});
  const auto c = run_reference(1, {20, 1, 1}, f, Op::correlate, n);
  const auto v = run_reference(1, {20, 1, 1}, f, Op::convolve, n);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(c[i], i + 1 < 20 ? n[i + 1] : 0.0);
    EXPECT_EQ(v[i], i > 0 ? n[i - 1] : 0.0);
  }
}

TEST(Reference, BoxOnAConstantFieldAwayFromTheBorder) {
  const double value = 0.75;
  const Filter f = make_named_filter("box:5", 3);
  const std::vector<double> n(12 * 13 * 14, value);
  const auto out = run_reference(3, {12, 13, 14}, f, Op::correlate, n);
  for (int z = 2; z < 10; ++z)
    for (int y = 2; y < 11; ++y)
      for (int x = 2; x < 12; ++x)
        EXPECT_NEAR(out[(z * 13 + y) * 14 + x], value * f.weight_sum(), 1e-14);
  // At a corner only 3x3x3 of the 125 taps see the array.
  EXPECT_NEAR(out[0], value * 27.0 / 125.0, 1e-14);
}

TEST(Reference, AbsoluteModeBoundsTheValue) {
  const Filter f = random_filter({3, 4});
  const Problem p(2, {10, 9, 1}, 1, f, DType::f64);
  const std::vector<double> n = random_vector<double>(90);
  std::vector<double> v(90), a(90);
  cpu::reference_f64(p, n.data(), v.data());
  cpu::reference_f64(p, n.data(), a.data(), true);
  for (int i = 0; i < 90; ++i) EXPECT_LE(std::fabs(v[i]), a[i] + 1e-15);
}

TEST(NamedFilters, ShapesAndSums) {
  EXPECT_EQ(make_named_filter("box:3", 2).shape_string(), "3x3");
  EXPECT_NEAR(make_named_filter("box:4", 3).weight_sum(), 1.0, 1e-12);
  const Filter g = make_named_filter("gaussian:sigma=1.5", 1);
  EXPECT_EQ(g.extents()[0], 2 * 6 + 1);  // radius int(4 * 1.5 + 0.5) = 6, as SciPy
  EXPECT_NEAR(g.weight_sum(), 1.0, 1e-12);
  EXPECT_EQ(make_named_filter("gaussian:sigma=2,radius=3", 2).shape_string(), "7x7");
  EXPECT_EQ(make_named_filter("sobel-y", 3).shape_string(), "3x3x3");
  EXPECT_NEAR(make_named_filter("laplacian", 3).weight_sum(), 0.0, 1e-15);
  EXPECT_NEAR(make_named_filter("sharpen", 2).weight_sum(), 1.0, 1e-15);
  const Filter sy = make_named_filter("sobel-y", 2);  // derivative along rows
  EXPECT_EQ(sy.weights(), (std::vector<double>{-1, -2, -1, 0, 0, 0, 1, 2, 1}));
}

// SciPy's gaussian_filter parameters: sigma per axis, truncate, radius per axis, sigma 0.
TEST(NamedFilters, GaussianTakesSciPysParameters) {
  const Filter g2 = make_named_filter("gaussian:sigma=2", 1), g1 = make_named_filter("gaussian:1", 1);
  const Filter both = make_named_filter("gaussian:sigma=2x1", 2);
  ASSERT_EQ(both.shape_string(), "17x9");
  for (std::int64_t i = 0; i < 17; ++i)
    for (std::int64_t j = 0; j < 9; ++j)
      EXPECT_DOUBLE_EQ(both.weights()[std::size_t(i * 9 + j)],
                       g2.weights()[std::size_t(i)] * g1.weights()[std::size_t(j)]);
  // radius int(truncate * sigma + 0.5), SciPy's _gaussian_kernel1d.
  EXPECT_EQ(make_named_filter("gaussian:sigma=2,truncate=2", 1).shape_string(), "9");
  EXPECT_EQ(make_named_filter("gaussian:sigma=1.5,truncate=3.3", 1).shape_string(), "11");
  EXPECT_EQ(make_named_filter("gaussian:sigma=3x1x2,truncate=1", 3).shape_string(), "7x3x5");
  EXPECT_EQ(make_named_filter("gaussian:sigma=2,radius=3x1", 2).shape_string(), "7x3");
  // An axis of sigma 0 is not filtered.
  const Filter cols = make_named_filter("gaussian:sigma=0x2", 2);
  EXPECT_EQ(cols.shape_string(), "1x17");
  EXPECT_EQ(cols.weights(), g2.weights());
  EXPECT_EQ(make_named_filter("gaussian:sigma=0", 2).weights(), std::vector<double>{1.0});
}

void expect_error(const std::string& spec, int rank, const std::string& phrase) {
  try {
    make_named_filter(spec, rank);
    ADD_FAILURE() << spec << " should have been rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
}

TEST(NamedFilters, BadSpecsAreRejectedWithAReason) {
  expect_error("box:0", 2, "integer");
  expect_error("box:abc", 2, "decimal integer");
  expect_error("box", 2, "box:K");
  expect_error("gaussian", 2, "sigma");
  expect_error("gaussian:sigma=-1", 2, "sigma");
  expect_error("gaussian:sigma=1,foo=2", 2, "unknown parameter 'foo'");
  expect_error("gaussian:sigma=1x2x3", 2, "one value or one per axis (2 for a 2-D array), got 3");
  expect_error("gaussian:sigma=1,radius=1x2x3", 2, "radius takes one value or one per axis");
  expect_error("gaussian:sigma=2,truncate=3,radius=2", 2, "truncate=T or radius=R, not both");
  expect_error("gaussian:sigma=2,truncate=0", 2, "truncate");
  expect_error("gaussian:sigma=2,truncate=-1", 2, "truncate");
  expect_error("gaussian:sigma=2x-1", 2, "sigma");
  expect_error("sobel-z", 2, "3-D");
  expect_error("sobel-y", 1, "2-D or 3-D");
  expect_error("laplacian:3", 2, "takes no parameters");
  expect_error("blur", 2, "unknown filter 'blur'");
}

TEST(ProblemValidation, RejectsBadDescriptions) {
  const Filter f3 = make_named_filter("box:3", 1);
  EXPECT_THROW(Problem(0, {1, 1, 1}, 1, f3, DType::f32), Error);
  EXPECT_THROW(Problem(1, {0, 1, 1}, 1, f3, DType::f32), Error);
  EXPECT_THROW(Problem(1, {5, 1, 1}, 0, f3, DType::f32), Error);
  EXPECT_THROW(Problem(1, {std::int64_t(1) << 62, 1, 1}, 4, f3, DType::f32), Error);
  try {
    Problem(2, {5, 5, 1}, 1, f3, DType::f32);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1-D filter (3) does not fit a 2-D array (5x5)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Filter({1.0, 2.0}, {3}), Error);
  EXPECT_THROW(Filter({1.0, std::nan("")}, {2}), Error);
}

TEST(ProblemModel, FlopsBytesAnchor) {
  const Problem p(2, {100, 200, 1}, 2, make_named_filter("box:5", 2), DType::f32);
  EXPECT_EQ(p.elements(), 40000);
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 25 * 40000);
  EXPECT_DOUBLE_EQ(p.bytes(), 8.0 * 40000);
  EXPECT_EQ(p.max_radius(), 2);
  const Problem e(1, {10, 1, 1}, 1, Filter({1, 2, 3, 4}, {4}), DType::f64, Op::convolve);
  EXPECT_EQ(e.anchor()[0], 1);  // k - 1 - k/2
  EXPECT_EQ(e.correlation_weights(), (std::vector<double>{4, 3, 2, 1}));
}

TEST(Dispatch, ExplicitChoicesAreObeyedOrRefused) {
  const Problem p(2, {64, 64, 1}, 1, make_named_filter("box:3", 2), DType::f32);
  Options o;
  o.strategy = "no-such-strategy";
  try {
    choose(p, o);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("available: reference"), std::string::npos) << e.what();
  }
  o.strategy = "reference";
  EXPECT_EQ(choose(p, o).strategy, "reference");
  o.backend = Backend::cpu;
  EXPECT_THROW(choose(p, o), Error);  // reference is not a cpu-backend strategy
  o = Options{};
  o.backend = Backend::reference;
  EXPECT_EQ(choose(p, o).strategy, "reference");
  o.backend = Backend::cpu;
  EXPECT_EQ(choose(p, o).backend, Backend::cpu);
}

TEST(Dispatch, CudaWithoutADeviceIsAnErrorAndAutoFallsBack) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(why.empty());
  const Problem p(1, {64, 1, 1}, 1, make_named_filter("box:3", 1), DType::f32);
  Options o;
  o.backend = Backend::cuda;
  EXPECT_THROW(choose(p, o), Error);
  o.backend = Backend::automatic;
  const RunInfo r = choose(p, o);
  EXPECT_EQ(r.backend, Backend::cpu);
  EXPECT_NE(r.note.find("no CUDA device"), std::string::npos) << r.note;
}

TEST(Apply, RejectsMismatchedOrOverlappingViews) {
  std::vector<float> a(100), b(99);
  const Filter f = make_named_filter("box:3", 1);
  EXPECT_THROW(apply(view(a.data(), {100}), view(b.data(), {99}), f), Error);
  EXPECT_THROW(apply(view(a.data(), {100}), view(a.data(), {100}), f), Error);
  // Another output dtype is SciPy's output=: the sums stored as float64.
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 2.5f;
  std::vector<double> d(100, -1.0);
  std::vector<float> e(100);
  EXPECT_NO_THROW(apply(view(a.data(), {100}), view(d.data(), {100}), f));
  apply(view(a.data(), {100}), view(e.data(), {100}), f);
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], e[i], 1e-5) << i;
}

}  // namespace
}  // namespace halo::test
