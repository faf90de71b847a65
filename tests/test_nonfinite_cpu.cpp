// The CPU strategies note every non-finite output they store (NonFinite::noted): one NaN or
// infinity per run, placed where a path of the strategy stores its outputs (row ends, the
// columns of SIMD blocks and units, the first and last rows and planes, tails past the last
// whole vector, tiles of cpu_fft, arrays of 16 MiB stored non-temporally), with a filter whose
// result the strategy gets wrong by itself (zero weights multiplied, running sums that turn an
// infinity into NaN, separable terms that subtract infinities): the repair runs only when the
// strategy noted, so an output store that does not note leaves a NaN or an infinity where
// SciPy's sum has another value, and the comparison fails. Each case is checked to need the
// repair (the strategy's run() alone gets it wrong).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/nonfinite.hpp"
#include "support.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

int category(double v) {
  if (std::isnan(v)) return 1;
  if (std::isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

struct Shape {
  int rank;
  Extents ext;
  std::vector<std::int64_t> k;
};

// Filters: dense with zero weights (a checkerboard of zeros), rank-1 with a zero in each factor,
// a box (running sums from 12 taps along x, 6 along y and z), the Laplacian's axis lines
// (cpu_lowrank: its y term holds a zero at the centre).
enum class Kind { zeros, rank1, box, laplacian };

Filter make(Kind kind, const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  for (auto e : k) n *= e;
  std::vector<double> w(static_cast<std::size_t>(n));
  switch (kind) {
    case Kind::zeros:
      for (std::int64_t i = 0; i < n; ++i)
        w[std::size_t(i)] = i % 2 ? 0.0 : 1.0 + 0.25 * double(i % 7);
      break;
    case Kind::rank1: {
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 1;
        std::int64_t rest = i;
        for (int a = int(k.size()) - 1; a >= 0; --a) {
          const std::int64_t j = rest % k[std::size_t(a)];
          rest /= k[std::size_t(a)];
          v *= j == 1 ? 0.0 : 1.0 + 0.5 * double(j);
        }
        w[std::size_t(i)] = v;
      }
      break;
    }
    case Kind::box:
      std::fill(w.begin(), w.end(), 1.0 / double(n));
      break;
    case Kind::laplacian:
      return make_named_filter("laplacian", int(k.size()));
  }
  return Filter(w, k);
}

// Positions along an axis of extent e: both ends and their neighbours, SIMD block edges, the
// middle (`few`: the ends and the middle).
std::vector<std::int64_t> positions(std::int64_t e, bool few) {
  std::vector<std::int64_t> v;
  const std::vector<std::int64_t> all = {0, 1, 16, 47, e / 2, e - 2, e - 1};
  for (std::int64_t p : few ? std::vector<std::int64_t>{0, e / 2, e - 1} : all)
    if (p >= 0 && p < e && std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
  return v;
}

// The first output of `out` that is non-finite where SciPy's sum is not of the same kind
// (detail::repair_sum: the reference's float64 sum in SciPy's order, checked against the
// reference in test_nonfinite.cpp), or -1. Finite outputs are not looked at (a strategy never
// writes a finite value where SciPy's is not; test_nonfinite.cpp checks that).
template <class T>
std::int64_t first_wrong(const Problem& p, const std::vector<T>& in, const std::vector<T>& out,
                         double* want) {
  const detail::RepairTaps t = detail::repair_taps(p);
  const detail::RepairGeometry g = detail::repair_geometry(p);
  const Dims3 n = p.dims3();
  for (std::int64_t i = 0; i < std::int64_t(out.size()); ++i) {
    const double got = double(out[std::size_t(i)]);
    if (category(got) == 0) continue;
    *want = detail::repair_sum(in.data(), g, t.k, t.a, t.w.data(), t.code.data(),
                               i / (n.y * n.x), i / n.x % n.y, i % n.x);
    if (category(*want) != category(got)) return i;
  }
  return -1;
}

// One value at `at` (flat), else finite. The strategy's run() alone must get some output wrong
// (else the case proves nothing: returns 0), and through apply() none (returns 1; -1 and a
// failure naming the output where one is wrong): apply() repairs only what run() noted.
template <class T>
int agrees(const std::string& strategy, const Problem& p, const Filter& f, const Options& base,
           std::vector<T>& in, std::int64_t at, T value) {
  const T keep = in[std::size_t(at)];
  in[std::size_t(at)] = value;
  std::vector<T> raw(in.size(), T(1.25e37)), out(in.size(), T(1.25e37));
  find_strategy(strategy)->run(p, Buffers{in.data(), raw.data()}, nullptr);
  double want = 0;
  int result = 0;
  if (first_wrong(p, in, raw, &want) >= 0) {
    Options o = base;
    o.strategy = strategy;
    apply(ConstArrayView(in.data(), dtype_of<T>(), p.rank(), p.extents()),
          ArrayView{out.data(), dtype_of<T>(), p.rank(), p.extents()}, f, o);
    const std::int64_t i = first_wrong(p, in, out, &want);
    result = 1;
    if (i >= 0) {
      ADD_FAILURE() << strategy << " on " << p.describe() << " with " << double(value) << " at "
                    << at << ": output " << i << " is " << double(out[std::size_t(i)])
                    << ", SciPy's " << want;
      result = -1;
    }
  }
  in[std::size_t(at)] = keep;
  return result;
}

template <class T>
void sweep(const std::string& strategy, Kind kind, const std::vector<Shape>& shapes,
           bool few = false) {
  const T values[] = {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN()};
  int runs = 0;  // the cases that prove something (agrees())
  for (const Shape& s : shapes) {
    const Filter f = make(kind, s.k);
    for (const Boundary m : {Boundary::constant, Boundary::reflect}) {
      Options o;
      o.edges.mode[0] = o.edges.mode[1] = o.edges.mode[2] = m;
      const Problem p(s.rank, s.ext, 1, f, dtype_of<T>(), o.op, o.edges);
      if (!find_strategy(strategy)->can_implement(p)) continue;
      ASSERT_EQ(find_strategy(strategy)->nonfinite(p), NonFinite::noted) << strategy;
      std::vector<T> in = random_vector<T>(p.elements());
      // Positions: the product of each axis's positions (3-D: fewer along z).
      const std::int64_t nz = s.rank == 3 ? s.ext[0] : 1;
      const std::int64_t ny = s.rank >= 2 ? s.ext[s.rank - 2] : 1, nx = s.ext[s.rank - 1];
      std::vector<std::int64_t> zs = s.rank == 3 ? std::vector<std::int64_t>{0, nz / 2, nz - 1}
                                                 : std::vector<std::int64_t>{0};
      const std::vector<std::int64_t> ys =
          s.rank >= 2 ? positions(ny, few || s.rank == 3) : std::vector<std::int64_t>{0};
      int v = 0;
      for (std::int64_t z : zs)
        for (std::int64_t y : ys)
          for (std::int64_t x : positions(nx, few)) {
            const int r = agrees<T>(strategy, p, f, o, in, (z * ny + y) * nx + x, values[v++ % 3]);
            if (r < 0) return;
            runs += r;
          }
    }
  }
  EXPECT_GT(runs, int(shapes.size())) << strategy;
}

const std::vector<Shape> kSmall = {
    {1, {100003, 1, 1}, {5}},    {1, {37, 1, 1}, {3}},         {2, {300, 701, 1}, {3, 3}},
    {2, {61, 33, 1}, {5, 4}},    {2, {5, 130, 1}, {3, 7}},     {3, {20, 30, 67}, {3, 3, 3}},
    {3, {9, 17, 8}, {2, 3, 4}},
};
const std::vector<Shape> kBoxes = {
    {1, {100003, 1, 1}, {13}}, {1, {37, 1, 1}, {12}},       {2, {300, 701, 1}, {7, 13}},
    {2, {61, 33, 1}, {13, 13}}, {3, {20, 30, 67}, {7, 7, 13}}, {3, {9, 17, 40}, {6, 7, 12}},
};
// Outputs of 16 MiB and more: non-temporal stores (float32: 4.2 M elements).
const std::vector<Shape> kLarge = {{2, {2048, 2100, 1}, {3, 3}}};

TEST(NonFiniteCpu, CpuNotesEveryStore) {
  sweep<float>("cpu", Kind::zeros, kSmall);
  sweep<double>("cpu", Kind::zeros, kSmall, true);
  sweep<float>("cpu", Kind::zeros, kLarge, true);
}

TEST(NonFiniteCpu, SeparableNotesEveryStore) {
  sweep<float>("cpu_separable", Kind::rank1, kSmall);
  sweep<double>("cpu_separable", Kind::rank1, kSmall, true);
  sweep<float>("cpu_separable", Kind::rank1, kLarge, true);
}

TEST(NonFiniteCpu, SeparableBoxesNoteEveryStore) {
  sweep<float>("cpu_separable", Kind::box, kBoxes);
  sweep<double>("cpu_separable", Kind::box, kBoxes, true);
  sweep<float>("cpu_separable", Kind::box, {{2, {2048, 2100, 1}, {13, 13}}}, true);
}

TEST(NonFiniteCpu, LowRankNotesEveryStore) {
  const std::vector<Shape> shapes = {{2, {300, 701, 1}, {3, 3}}, {2, {61, 33, 1}, {3, 3}},
                                     {3, {20, 30, 67}, {3, 3, 3}}, {3, {9, 17, 8}, {3, 3, 3}}};
  sweep<float>("cpu_lowrank", Kind::laplacian, shapes);
  sweep<double>("cpu_lowrank", Kind::laplacian, shapes, true);
  // An SVD's terms (a dense filter with zeros is not rank 1).
  sweep<float>("cpu_lowrank", Kind::zeros, {{2, {300, 701, 1}, {5, 4}}});
}

TEST(NonFiniteCpu, FftNotesEveryTile) {
  const std::vector<Shape> shapes = {{1, {20011, 1, 1}, {65}}, {2, {130, 150, 1}, {17, 17}},
                                     {3, {12, 20, 30}, {5, 5, 5}}};
  sweep<float>("cpu_fft", Kind::zeros, shapes);
  sweep<double>("cpu_fft", Kind::zeros, shapes, true);
}

// A finite input whose transforms overflow (float32 values near the largest, weights small
// enough that SciPy's sums stay finite): cpu_fft's own outputs are NaN and infinities, noted
// where the tiles are copied out.
TEST(NonFiniteCpu, FftNotesOverflow) {
  for (const Shape& s : {Shape{1, {20011, 1, 1}, {65}}, Shape{2, {130, 150, 1}, {17, 17}}}) {
    std::vector<double> w(static_cast<std::size_t>(s.k.size() == 1 ? s.k[0] : s.k[0] * s.k[1]));
    std::uniform_real_distribution<double> u(-1e-3, 1e-3);
    for (double& x : w) x = u(rng());
    const Filter f(w, s.k);
    const Problem p(s.rank, s.ext, 1, f, DType::f32, Op::correlate, Edges{});
    std::vector<float> in = random_vector<float>(p.elements());
    for (float& x : in) x = x < 0 ? -3e38f : 3e38f;
    std::vector<float> raw(in.size()), out(in.size());
    find_strategy("cpu_fft")->run(p, Buffers{in.data(), raw.data()}, nullptr);
    double want = 0;
    ASSERT_GE(first_wrong(p, in, raw, &want), 0) << "cpu_fft did not overflow on " << p.describe();
    Options o;
    o.strategy = "cpu_fft";
    apply(ConstArrayView(in.data(), DType::f32, s.rank, s.ext),
          ArrayView{out.data(), DType::f32, s.rank, s.ext}, f, o);
    const std::int64_t i = first_wrong(p, in, out, &want);
    EXPECT_LT(i, 0) << p.describe() << ": output " << i << " is "
                    << (i >= 0 ? double(out[std::size_t(i)]) : 0.0) << ", SciPy's " << want;
  }
}

// SciPy's 1-D rule (Footprint::every) multiplies every weight, zeros too: a box factor with a
// zero weight beside its run of equal weights must not take a box form (running sums, doubling),
// which sums only the run and would leave finite outputs where SciPy's are NaN (the repair sees
// only outputs that are not finite). Every output's kind against the reference.
TEST(NonFiniteCpu, SeparableBoxesKeepTheZeroWeightsOfTheOneDRule) {
  const auto factor = [](int ones, bool zero_first) {
    std::vector<double> f(std::size_t(ones), 1.0 / ones);
    f.insert(zero_first ? f.begin() : f.end(), 0.0);
    return f;
  };
  struct Case {
    int rank;
    Extents ext;
    std::vector<std::vector<double>> factors;
  };
  const std::vector<Case> cases = {
      {1, {300, 1, 1}, {factor(12, true)}},
      {1, {300, 1, 1}, {factor(12, false)}},
      {2, {40, 60, 1}, {factor(7, false), factor(12, true)}},
      {3, {20, 24, 40}, {factor(6, true), factor(7, false), factor(12, true)}},
  };
  for (const Case& c : cases) {
    std::vector<std::int64_t> shape;
    std::vector<double> w{1.0};
    for (const auto& f : c.factors) {
      shape.push_back(std::int64_t(f.size()));
      std::vector<double> next;
      for (double a : w)
        for (double b : f) next.push_back(a * b);
      w = next;
    }
    const Filter f(w, shape);
    Options o;
    o.footprint = Footprint::every;
    o.edges.mode[0] = o.edges.mode[1] = o.edges.mode[2] = Boundary::nearest;
    const Problem p(c.rank, c.ext, 1, f, DType::f64, o.op, o.edges);
    std::vector<double> in = random_vector<double>(p.elements());
    for (std::int64_t at : {std::int64_t(0), p.elements() / 2 + 3, p.elements() - 1}) {
      in[std::size_t(at)] = std::numeric_limits<double>::infinity();
      std::vector<double> ref(in.size()), out(in.size());
      const ConstArrayView iv(in.data(), DType::f64, c.rank, c.ext);
      o.strategy = "reference";
      apply(iv, ArrayView{ref.data(), DType::f64, c.rank, c.ext}, f, o);
      o.strategy = "cpu_separable";
      apply(iv, ArrayView{out.data(), DType::f64, c.rank, c.ext}, f, o);
      for (std::size_t i = 0; i < in.size(); ++i)
        if (category(out[i]) != category(ref[i])) {
          ADD_FAILURE() << p.describe() << ", inf at " << at << ": output " << i << " is "
                        << out[i] << ", the reference's " << ref[i];
          break;
        }
      in[std::size_t(at)] = 0.5;
    }
  }
}

}  // namespace
}  // namespace halo::test
