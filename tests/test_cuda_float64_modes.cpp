// The Python package computes integer outputs in float64 (python/halo/__init__.py,
// _compute_dtype), asking for direct sums so that their truncation is SciPy's. On the GPU, under
// a boundary mode, only `fast` and `separable` sum directly, for a few radii in float64; the
// seed kernels compute zero ghost cells only. Where neither has the radius, the package runs the
// pass in float64 without direct sums (_run_relaxed). These are issue 47's problems (item 6):
// asked without a GPU (the CUDA strategies plan from an H100's facts there), some CUDA strategy
// other than the seed kernels can run each in float64 under every mode, so that a call SciPy
// accepts never ends at the seed kernels' refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace {

using namespace halo;

// The seed notes' kernels (src/cuda/seeds/): zero ghost cells and origin 0 only.
bool is_seed(const std::string& name) {
  for (const char* s :
       {"basic", "constant", "tiled_input", "tiled_output", "tiled_output_twostep", "cached"})
    if (name == s) return true;
  return false;
}

// The non-seed CUDA strategies that can run p, by name ("" if none), and every reason.
std::string runners(const Problem& p, std::string* reasons) {
  std::string names;
  for (const Strategy* s : strategies()) {
    if (s->backend() != Backend::cuda || is_seed(s->name())) continue;
    const Status st = s->can_implement(p);
    if (st.ok)
      names += (names.empty() ? "" : ",") + s->name();
    else if (reasons)
      *reasons += "; " + s->name() + ": " + st.reason;
  }
  return names;
}

// SciPy's Gaussian of sigma, radius int(4 sigma + 0.5), as gaussian_filter1d sends it (reversed:
// the same, being symmetric), along `axis` of a rank-`rank` filter.
Filter gaussian(double sigma, int rank, int axis) {
  const int r = int(4.0 * sigma + 0.5);
  std::vector<double> w;
  double sum = 0;
  for (int x = -r; x <= r; ++x) {
    w.push_back(std::exp(-0.5 * x * x / (sigma * sigma)));
    sum += w.back();
  }
  for (double& v : w) v /= sum;
  return Filter(w, {std::int64_t(w.size())}).along_axis(rank, axis);
}

Filter random_weights(std::vector<std::int64_t> shape) {
  std::mt19937_64 g(47);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::int64_t n = 1;
  for (auto k : shape) n *= k;
  std::vector<double> w(static_cast<std::size_t>(n));
  for (double& v : w) v = d(g);
  return Filter(w, shape);
}

struct Case {
  std::string what;
  int rank;
  Extents ext;
  std::int64_t batch;
  Filter filter;
};

// The core calls of the issue's examples as the package makes them: a uint8 54x343 image under
// gaussian_filter(x, 4.6) (its y pass; its x pass reaches the core as 54 rows of 343),
// gaussian_filter1d(x, 7, axis=0) and a sigma giving the message's 59x1, and correlate with a
// 4x8x7 filter on a volume.
std::vector<Case> issue_cases() {
  return {
      {"gaussian_filter sigma 4.6, y pass", 2, {54, 343, 1}, 1, gaussian(4.6, 2, 0)},
      {"gaussian_filter sigma 4.6, x pass (rows)", 1, {343, 1, 1}, 54, gaussian(4.6, 1, 0)},
      {"gaussian_filter1d sigma 7, axis 0", 2, {54, 343, 1}, 1, gaussian(7.0, 2, 0)},
      {"a 59x1 Gaussian, axis 0", 2, {54, 343, 1}, 1, gaussian(7.25, 2, 0)},
      {"correlate, a 4x8x7 filter", 3, {20, 30, 40}, 1, random_weights({4, 8, 7})},
  };
}

// Every mode, and zero ghosts with an origin (which the seed kernels refuse too): -1 on each
// axis the filter reaches.
std::vector<Edges> every_mode(const Filter& f) {
  std::vector<Edges> e = {Edges::all(Boundary::constant, 2.5), Edges::all(Boundary::nearest),
                          Edges::all(Boundary::reflect), Edges::all(Boundary::mirror),
                          Edges::all(Boundary::wrap)};
  Edges shifted = Edges::all(Boundary::constant);
  for (int a = 0; a < f.rank(); ++a) shifted.origin[a] = f.extents()[a] > 1 ? -1 : 0;
  e.push_back(shifted);
  return e;
}

TEST(CudaFloat64Modes, SomeStrategyBeyondTheSeedsRunsEveryIssueProblem) {
  if (!find_strategy("fast") || !find_strategy("fft"))
    GTEST_SKIP() << "halo was built without CUDA";
  for (const Case& c : issue_cases())
    for (const Edges& edges : every_mode(c.filter))
      for (Op op : {Op::correlate, Op::convolve}) {
        Problem p(c.rank, c.ext, c.batch, c.filter, DType::f64, op, edges);
        std::string reasons;
        // Without direct sums (the package's fallback): always some strategy.
        EXPECT_NE(runners(p, &reasons), "") << c.what << ": " << p.describe() << reasons;
        // With direct sums (what the package asks first) where `fast` has the radius: the rows
        // of the x pass (1-D float64 up to 32).
        p.require_direct_sums();
        reasons.clear();
        const std::string direct = runners(p, &reasons);
        if (c.rank == 1)
          EXPECT_NE(direct.find("fast"), std::string::npos) << p.describe() << reasons;
      }
}

// Where the direct kernels end in float64 under a mode (docs/PYTHON.md, "Integer outputs on the
// GPU", says so; update it with these): a y factor of radius 16 by `separable`, not 17; a dense
// 3-D filter of radius 3 by `fast`, not 4.
TEST(CudaFloat64Modes, WhereTheDirectKernelsEnd) {
  if (!find_strategy("fast") || !find_strategy("separable"))
    GTEST_SKIP() << "halo was built without CUDA";
  const auto direct = [](int rank, Extents ext, const Filter& f) {
    Problem p(rank, ext, 1, f, DType::f64, Op::correlate, Edges::all(Boundary::nearest));
    p.require_direct_sums();
    return runners(p, nullptr);
  };
  EXPECT_EQ(direct(2, {54, 343, 1}, gaussian(4.0, 2, 0)), "separable");  // radius 16
  EXPECT_EQ(direct(2, {54, 343, 1}, gaussian(4.2, 2, 0)), "");           // radius 17
  EXPECT_EQ(direct(3, {20, 30, 40}, random_weights({7, 7, 7})), "fast");
  EXPECT_EQ(direct(3, {20, 30, 40}, random_weights({9, 9, 9})), "");
}

// float32 and float16 inputs with a float output run without direct sums: the same problems in
// float32 have a strategy beyond the seeds under every mode too.
TEST(CudaFloat64Modes, TheSameProblemsInFloat32) {
  if (!find_strategy("fast") || !find_strategy("fft"))
    GTEST_SKIP() << "halo was built without CUDA";
  for (const Case& c : issue_cases())
    for (const Edges& edges : every_mode(c.filter)) {
      const Problem p(c.rank, c.ext, c.batch, c.filter, DType::f32, Op::correlate, edges);
      std::string reasons;
      EXPECT_NE(runners(p, &reasons), "") << c.what << ": " << p.describe() << reasons;
    }
}

}  // namespace
