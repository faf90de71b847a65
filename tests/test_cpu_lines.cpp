// cpu_lines, the host's filter along one axis of uint8, uint16 and int16 arrays at their own
// width, against the reference at its own edges: lines shorter than the filter's reach, lines
// side by side fewer than a vector or not a multiple of it, odd lengths and unaligned starts,
// segments and blocks cut by the team, every mode, cval, origin and op, symmetric,
// antisymmetric and other taps, the types' limits, flat inputs (every sum within rounding of an
// integer: SciPy's own sums decide), rounding to nearest, float32 outputs and non-finite cval.
// Integer outputs equal the reference's (SciPy's) bit for bit. (The generic dtype sweep,
// test_native_dtypes.cpp, runs it too, as every registered strategy.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/detail.hpp"
#include "core/nonfinite.hpp"
#include "core/scipy_sum.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

using i64 = std::int64_t;

const Strategy& lines() {
  const Strategy* s = find_strategy("cpu_lines");
  EXPECT_NE(s, nullptr);
  return *s;
}

// Values of dtype t: uniform over the range, the limits often, and runs of one value (about
// `flat` of the elements repeat the one before: flat windows, whose sums lie within rounding of
// an integer, so that SciPy's own sums decide).
std::vector<unsigned char> line_input(DType t, i64 n, double flat = 0.5) {
  std::vector<unsigned char> bytes(std::size_t(n) * dtype_size(t));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  dispatch_dtype<DTypeList<DType::u8, DType::u16, DType::i16>>(t, [&](auto d) {
    using T = typename decltype(d)::storage;
    T* v = reinterpret_cast<T*>(bytes.data());
    std::uniform_int_distribution<int> any(std::numeric_limits<T>::min(),
                                           std::numeric_limits<T>::max());
    for (i64 i = 0; i < n; ++i) {
      const double c = u(rng());
      v[i] = i > 0 && c < flat                ? v[i - 1]
             : c < flat + (1 - flat) * 0.05 ? std::numeric_limits<T>::max()
             : c < flat + (1 - flat) * 0.1  ? std::numeric_limits<T>::min()
                                              : T(any(rng()));
    }
  });
  return bytes;
}

double element(DType t, const std::vector<unsigned char>& a, i64 i) {
  return dispatch_dtype<DTypeList<DType::u8, DType::u16, DType::i16, DType::f32, DType::f64>>(
      t, [&](auto d) {
        using T = typename decltype(d)::storage;
        return detail::to_double(reinterpret_cast<const T*>(a.data())[i]);
      });
}

// Runs strategy s (cpu_lines unless told) and the reference on p; "" where every output agrees
// (integers bit for bit; float32 within the sum's bound and its own rounding), else the first
// difference. Rounded to nearest, the integers are SciPy's own sum (ScipySum, its order of the
// taps) rounded, ties to even: the reference rounds its float64 sum in C order, which can lie
// on the other side of a tie.
std::string compare(const Problem& p, const std::vector<unsigned char>& in,
                    const Strategy* s = nullptr) {
  if (!s) s = &lines();
  const i64 n = p.elements();
  const std::size_t bytes = std::size_t(n) * dtype_size(p.out_dtype());
  std::vector<unsigned char> want(bytes, 0xA5), got(bytes, 0x5A);  // poisoned
  detail::run_strategy(*detail::plan_or_throw(*find_strategy("reference"), p), in.data(),
                       want.data(), nullptr);
  detail::run_strategy(*detail::plan_or_throw(*s, p), in.data(), got.data(), nullptr);
  if (p.rounding() == Rounding::nearest && is_integer_dtype(p.out_dtype())) {
    const detail::ScipySum sum(p);
    const Dims3 e = p.dims3();
    const i64 item = e.count();
    dispatch_dtype<DTypeList<DType::u8, DType::u16, DType::i16>>(p.out_dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      T* o = reinterpret_cast<T*>(want.data());
      for (i64 i = 0; i < n; ++i) {
        const i64 f = i % item;
        const void* src = in.data() + std::size_t(i / item * item) * dtype_size(p.dtype());
        o[i] = detail::nearest_cast<T>(
            sum.at(p.dtype(), src, f / (e.y * e.x), (f / e.x) % e.y, f % e.x, p.cval()));
      }
    });
  }
  double wsum = 0;
  for (double w : p.filter().weights()) wsum += std::fabs(w);
  double xmax = std::isfinite(p.cval()) ? std::fabs(p.cval()) : 0.0;
  for (i64 i = 0; i < n; ++i) xmax = std::max(xmax, std::fabs(element(p.dtype(), in, i)));
  const double unit = p.dtype() == DType::u8 ? 0x1p-24 : 0x1p-53;
  const double scale = (double(p.filter().taps()) + 10) * unit * wsum * xmax;
  for (i64 i = 0; i < n; ++i) {
    const double g = element(p.out_dtype(), got, i), r = element(p.out_dtype(), want, i);
    const double tol = p.out_dtype() == DType::f32 ? scale + 0x1p-23 * std::fabs(r) : 0.0;
    const bool same = std::isnan(r) ? std::isnan(g) : (g == r || std::fabs(g - r) <= tol);
    if (!same)
      return p.describe() + ": element " + std::to_string(i) + " is " + std::to_string(g) +
             ", the reference's " + std::to_string(r);
  }
  return "";
}

// A problem of rank `rank` (extents ext) filtered along `axis` by weights w (k taps), with the
// axis's mode, cval, origin and op, input dtype in, output out.
Problem line_problem(int rank, const Extents& ext, i64 batch, int axis, std::vector<double> w,
                     Boundary mode, double cval, int origin, Op op, DType in, DType out,
                     Footprint fp = Footprint::every, Rounding r = Rounding::truncate) {
  std::vector<std::int64_t> shape(std::size_t(rank), 1);
  shape[std::size_t(axis)] = i64(w.size());
  Edges e = Edges::all(mode, cval);
  e.origin[axis] = origin;
  Problem p(rank, ext, batch, Filter(std::move(w), shape), in, op, e);
  p.set_output(out, r);
  p.set_footprint(fp);
  return p;
}

// Weights of k taps, by kind: 0 a normalised Gaussian (symmetric), 1 a derivative
// (antisymmetric), 2 random normalised (neither), 3 integers, 4 a box of 1/k each.
std::vector<double> weights(int kind, int k) {
  std::vector<double> w(static_cast<std::size_t>(k));
  std::uniform_real_distribution<double> u(0.1, 1.0);
  const double c = (k - 1) / 2.0, sigma = std::max(0.5, k / 5.0);
  for (int j = 0; j < k; ++j) {
    const double x = j - c;
    switch (kind) {
      case 0: w[j] = std::exp(-x * x / (2 * sigma * sigma)); break;
      case 1: w[j] = -x * std::exp(-x * x / (2 * sigma * sigma)); break;
      case 2: w[j] = u(rng()); break;
      case 3: w[j] = double(std::uniform_int_distribution<int>(-3, 3)(rng())); break;
      default: w[j] = 1.0 / k; break;
    }
  }
  if (kind == 0 || kind == 2) {
    double s = 0;
    for (double v : w) s += v;
    for (double& v : w) v /= s;
  }
  return w;
}

TEST(CpuLines, TakesWhatTheCudaLinesTakes) {
  const Strategy& s = lines();
  EXPECT_EQ(s.backend(), Backend::cpu);
  const auto make = [](DType in, DType out, std::vector<std::int64_t> k,
                        Extents ext = {40, 50, 1}) {
    std::int64_t taps = 1;
    for (auto v : k) taps *= v;
    Problem p(2, ext, 1, Filter(std::vector<double>(std::size_t(taps), 0.25), k), in);
    p.set_output(out);
    return p;
  };
  for (DType in : {DType::u8, DType::u16, DType::i16})
    for (DType out : {DType::u8, DType::u16, DType::i16, DType::f32}) {
      const Problem p = make(in, out, {1, 5});
      EXPECT_TRUE(s.prepare(p)) << p.describe();
    }
  const Problem f32 = make(DType::f32, DType::f32, {1, 5}),
                f64out = make(DType::u8, DType::f64, {1, 5}),
                two = make(DType::u8, DType::u8, {3, 3}), none = make(DType::u8, DType::u8, {1, 1}),
                wide = make(DType::u8, DType::u8, {1, 131}, {4, 400, 1}),
                folded = make(DType::u8, DType::u8, {1, 9}, {4, 3, 1});
  EXPECT_NE(s.prepare(f32).why_not.find("written for uint8"), std::string::npos);
  EXPECT_FALSE(s.prepare(f64out));
  EXPECT_NE(s.prepare(two).why_not.find("exactly one axis"), std::string::npos);
  EXPECT_FALSE(s.prepare(none));
  EXPECT_NE(s.prepare(wide).why_not.find("129 taps"), std::string::npos);
  EXPECT_NE(s.prepare(folded).why_not.find("wider than its axis"), std::string::npos);
  // A line of one element folds any filter longer than 1: refused, and `auto` still gives
  // SciPy's integers.
  const Problem one = make(DType::u8, DType::u8, {1, 3}, {40, 1, 1});
  EXPECT_FALSE(s.prepare(one));
  Options cpu;
  cpu.backend = Backend::cpu;
  EXPECT_NE(choose(one, cpu).strategy, "cpu_lines");
  const auto x = line_input(DType::u8, one.elements());
  EXPECT_EQ(compare(one, x, find_strategy(choose(one, cpu).strategy)), "");
  // Sums of the taps, each output a plain sum; SciPy's non-finite outputs itself.
  const Problem col = make(DType::u8, DType::u8, {5, 1});
  const Prepared pp = s.prepare(col);
  ASSERT_TRUE(pp);
  EXPECT_EQ(pp.plan->summation(), Summation::direct);
  EXPECT_EQ(pp.plan->nonfinite(), NonFinite::exact);
  EXPECT_GT(pp.plan->estimate().ns, 0);
}

// Every mode on every layout class: the contiguous axis (short lines, lines shorter than the
// reach, one vector, odd, several segments) and across the inner axis (fewer lines than a
// vector, not a multiple of it, several blocks and strips), each op, origins at both ends.
TEST(CpuLines, LayoutsModesOriginsAndOps) {
  struct Layout {
    int rank;
    Extents ext;
    i64 batch;
    int axis;
  };
  const Layout layouts[] = {
      {1, {5, 1, 1}, 3, 0},      {1, {7, 1, 1}, 2, 0},      {1, {16, 1, 1}, 1, 0},
      {1, {37, 1, 1}, 3, 0},     {1, {8200, 1, 1}, 1, 0},   {2, {5, 33, 1}, 1, 1},
      {2, {9, 3, 1}, 1, 0},      {2, {13, 17, 1}, 1, 0},    {2, {6, 64, 1}, 2, 0},
      {2, {70, 1100, 1}, 1, 0},  {3, {3, 11, 5}, 2, 1},     {3, {4, 6, 19}, 1, 2},
      {3, {5, 9, 40}, 1, 0},
  };
  const Boundary modes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                            Boundary::mirror, Boundary::wrap};
  const DType pairs[][2] = {{DType::u8, DType::u8},   {DType::u16, DType::u16},
                            {DType::i16, DType::i16}, {DType::u8, DType::f32},
                            {DType::i16, DType::u8},  {DType::u16, DType::f32}};
  int ran = 0;
  for (const Layout& L : layouts)
    for (Boundary m : modes) {
      const i64 n = L.ext[L.axis];
      // k up to 2n - 1 (no folding); an even k now and then.
      const int kmax = int(std::min<i64>(17, 2 * n - 1));
      const int k = std::uniform_int_distribution<int>(2, std::max(2, kmax))(rng());
      const int kind = std::uniform_int_distribution<int>(0, 4)(rng());
      const int origin = std::uniform_int_distribution<int>(-(k / 2), (k - 1) / 2)(rng());
      const Op op = rng()() & 1 ? Op::convolve : Op::correlate;
      const auto& dt = pairs[rng()() % 6];
      const double cval = m == Boundary::constant ? (rng()() & 1 ? 3.5 : 300.0) : 0.0;
      const Problem p = line_problem(L.rank, L.ext, L.batch, L.axis, weights(kind, k), m, cval,
                                     origin, op, dt[0], dt[1]);
      if (!lines().prepare(p)) continue;  // folded (a short line in constant mode)
      ++ran;
      EXPECT_EQ(compare(p, line_input(dt[0], p.elements())), "")
          << "kind " << kind << " k " << k << " origin " << origin;
      if (HasFailure()) return;
    }
  EXPECT_GT(ran, 50);
}

// Random problems: any layout, dtype pair, rounding, footprint, weights and cval.
TEST(CpuLines, RandomProblems) {
  const DType ins[] = {DType::u8, DType::u16, DType::i16};
  const DType outs[] = {DType::u8, DType::u16, DType::i16, DType::f32};
  std::uniform_int_distribution<int> ext(1, 40);
  int ran = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = 1 + int(rng()() % 3);
    Extents e{1, 1, 1};
    for (int a = 0; a < rank; ++a) e[a] = ext(rng());
    const int axis = int(rng()() % rank);
    const int kmax = int(std::min<i64>(21, 2 * e[axis] - 1));
    const int k = std::uniform_int_distribution<int>(1, kmax)(rng());
    if (k < 2) continue;
    const Boundary m = Boundary(rng()() % 5);
    const double cvals[] = {0.0, 7.0, -2.25, 0.1, 65535.5, 1e6};
    const double cval = cvals[rng()() % 6];
    const DType in = ins[rng()() % 3], out = outs[rng()() % 4];
    const Rounding r = rng()() % 4 == 0 ? Rounding::nearest : Rounding::truncate;
    const Footprint fp = rng()() & 1 ? Footprint::every : Footprint::nonzero;
    std::vector<double> w = weights(int(rng()() % 5), k);
    if (rng()() % 4 == 0) w[rng()() % k] = 0;  // a zero weight: no tap of SciPy's footprint
    const int origin = std::uniform_int_distribution<int>(-(k / 2), (k - 1) / 2)(rng());
    const Problem p = line_problem(rank, e, 1 + i64(rng()() % 2), axis, w, m, cval, origin,
                                   rng()() & 1 ? Op::convolve : Op::correlate, in, out, fp, r);
    if (!lines().prepare(p)) continue;
    ++ran;
    const double flat = std::uniform_real_distribution<double>(0.0, 0.95)(rng());
    EXPECT_EQ(compare(p, line_input(in, p.elements(), flat)), "") << "iteration " << iter;
    if (HasFailure()) return;
  }
  EXPECT_GT(ran, 200);
}

// Constant inputs under normalised weights: every float sum lies within its bound of the
// value, so every output is SciPy's flat sum (which truncates below the value for some weights
// and values: checked, so that the case decides something).
TEST(CpuLines, FlatInputsTakeSciPysFlatSums) {
  int below = 0;
  for (DType t : {DType::u8, DType::u16, DType::i16})
    for (int axis : {0, 1})
      for (int kind : {0, 2, 4}) {
        const int k = kind == 4 ? 3 : 17;
        const std::vector<double> w = weights(kind, k);
        const Problem p = line_problem(2, {40, 300, 1}, 1, axis, w, Boundary::reflect, 0.0, 0,
                                       Op::correlate, t, t);
        std::vector<unsigned char> in(std::size_t(p.elements()) * dtype_size(t));
        dispatch_dtype<DTypeList<DType::u8, DType::u16, DType::i16>>(t, [&](auto d) {
          using T = typename decltype(d)::storage;
          T* v = reinterpret_cast<T*>(in.data());
          // Bands of one value each, so that whole vectors are flat and some are not.
          for (i64 i = 0; i < p.elements(); ++i) {
            const i64 band = (axis == 1 ? i % 300 : i / 300) / 7;
            v[i] = T(std::numeric_limits<T>::max() - (band * 37) % 200);
          }
        });
        EXPECT_EQ(compare(p, in), "") << "kind " << kind;
        std::vector<unsigned char> want(std::size_t(p.elements()) * dtype_size(t));
        detail::run_strategy(*detail::plan_or_throw(*find_strategy("reference"), p), in.data(),
                             want.data(), nullptr);
        for (i64 i = 0; i < p.elements(); ++i)
          below += element(t, want, i) < element(t, in, i) ? 1 : 0;
      }
  EXPECT_GT(below, 1000) << "no flat sum truncated below its value: the case decides nothing";
}

// Rounding to nearest is SciPy's sum rounded, ties to even: sums that are exact ties in float64
// (weights of a few binary digits on integers: 0.25 x + 0.75 y lands on .5, .25, .75; -0.7, 1.9,
// 0.35 on .5 now and then) but not in float32, where the weights are rounded.
TEST(CpuLines, RoundingToNearestTakesSciPysTies) {
  for (DType t : {DType::u8, DType::u16, DType::i16})
    for (int axis : {0, 1})
      for (const std::vector<double>& w :
           {std::vector<double>{0.25, 0.75}, std::vector<double>{-0.7, 1.9, 0.35},
            std::vector<double>{0.5, 0.5, 0.5, 0.5, 0.5}}) {
        const Problem p = line_problem(2, {19, 43, 1}, 2, axis, w, Boundary::nearest, 0.0, 0,
                                       Op::convolve, t, DType::u8, Footprint::every,
                                       Rounding::nearest);
        EXPECT_EQ(compare(p, line_input(t, p.elements(), 0.1)), "");
        if (HasFailure()) return;
      }
}

// The types' limits with weights summing beyond 1 (sums outside the type: SciPy's cast keeps
// their low bits; rounding to nearest saturates), and weights of magnitudes far beyond the
// values (sums beyond int32: SciPy's cast gives INT_MIN's low bits).
TEST(CpuLines, TypeLimitsAndOutOfRangeSums) {
  for (DType t : {DType::u8, DType::u16, DType::i16})
    for (DType out : {DType::u8, DType::i16, DType::u16})
      for (Rounding r : {Rounding::truncate, Rounding::nearest})
        for (const std::vector<double>& w :
             {std::vector<double>{0.6, 1.3, 0.6}, std::vector<double>{-1.1, 0.3, 2.7, 0.0, -0.2},
              std::vector<double>{3e5, -1e6, 3e5}}) {
          const Problem p = line_problem(2, {31, 45, 1}, 1, int(rng()() % 2), w,
                                         Boundary::mirror, 0.0, 0, Op::correlate, t, out,
                                         Footprint::every, r);
          EXPECT_EQ(compare(p, line_input(t, p.elements(), 0.2)), "");
          if (HasFailure()) return;
        }
}

// Integral weights and cval: sums summed in int16 modulo 2^16, whose low bits are SciPy's cast
// of its exact sums, far beyond int16 (weights in the hundreds, a cval of a million), up to the
// edge of int32 where SciPy's cast gives INT_MIN (then the float sums decide).
TEST(CpuLines, ExactSumsKeepTheLowBitsOfSciPys) {
  for (DType t : {DType::u8, DType::u16, DType::i16})
    for (DType out : {DType::u8, DType::u16, DType::i16})
      for (int axis : {0, 1})
        for (const std::vector<double>& w :
             {std::vector<double>{7, -13, 300, 5}, std::vector<double>{-1, 0, 1},
              std::vector<double>{1, 2, 1}, std::vector<double>{30000, 1, 30000},
              std::vector<double>{16000, 16000, 16000}}) {
          const Problem p = line_problem(2, {23, 37, 1}, 1, axis, w, Boundary::constant, 1e6, 0,
                                         Op::correlate, t, out);
          EXPECT_EQ(compare(p, line_input(t, p.elements(), 0.2)), "");
          if (HasFailure()) return;
        }
}

// Constant mode's ghosts of non-finite cval: SciPy's NaN and infinities in float32 outputs,
// its casts of them in integer ones (INT_MIN's low bits), a zero weight outside SciPy's
// footprint never multiplying them.
TEST(CpuLines, NonFiniteCval) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double cval : {std::nan(""), inf, -inf})
    for (DType out : {DType::f32, DType::u8})
      for (Footprint fp : {Footprint::every, Footprint::nonzero})
        for (int axis : {0, 1}) {
          const Problem p = line_problem(2, {12, 21, 1}, 1, axis, {0.25, 0.0, 0.5, 0.25, 0.0},
                                         Boundary::constant, cval, 0, Op::correlate, DType::u8,
                                         out, fp);
          EXPECT_EQ(compare(p, line_input(DType::u8, p.elements())), "");
        }
}

// Rows whose length is not a multiple of the vector: the last vector overlaps the one before,
// whose lanes it stores again. Here the one before is flat throughout (stored at once from its
// flat sum) and the last is not (the last two elements differ): the outputs they share must stay
// the flat ones. Every value of the line's flat run, along and across the inner axis.
TEST(CpuLines, LastVectorOverlapsAFlatRun) {
  for (DType t : {DType::u8, DType::u16})
    for (int axis : {0, 1})
      for (i64 n = 3; n <= 40; ++n) {
        const Extents e = axis == 1 ? Extents{1, n, 1} : Extents{6, n, 1};
        const Problem p = line_problem(2, e, 256, axis, weights(2, 3), Boundary::nearest, 0.0, 0,
                                       Op::correlate, t, t);
        std::vector<unsigned char> in(std::size_t(p.elements()) * dtype_size(t));
        const i64 item = p.elements_per_item();
        dispatch_dtype<DTypeList<DType::u8, DType::u16>>(t, [&](auto d) {
          using T = typename decltype(d)::storage;
          T* v = reinterpret_cast<T*>(in.data());
          for (i64 b = 0; b < 256; ++b)
            for (i64 i = 0; i < item; ++i)
              v[b * item + i] = i % n < n - 2 ? T(b * (sizeof(T) == 1 ? 1 : 257)) : T(rng()());
        });
        EXPECT_EQ(compare(p, in), "") << "n " << n;
        if (HasFailure()) return;
      }
}

// Problems large enough for the team: several segments per line and several blocks of columns
// and strips of rows, a flat band across them.
TEST(CpuLines, TeamSegmentsAndBlocks) {
  for (DType t : {DType::u8, DType::u16})
    for (int axis : {0, 1}) {
      const Problem p = line_problem(2, {300, 9000, 1}, 1, axis, weights(0, 17),
                                     Boundary::nearest, 0.0, 0, Op::correlate, t, t);
      std::vector<unsigned char> in = line_input(t, p.elements(), 0.3);
      std::memset(in.data(), 0x7f, in.size() / 4);  // a flat band over the first rows
      EXPECT_EQ(compare(p, in), "");
    }
}

}  // namespace
}  // namespace halo::test
