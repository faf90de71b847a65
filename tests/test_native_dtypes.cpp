// The dtypes beyond float32 and float64: the half types' conversions, SciPy's casts to integers,
// the reference on every dtype, and every host strategy (through slabs of its float type,
// core/converted.hpp) against the reference: integer outputs equal bit for bit (SciPy's
// truncation of its own sums), floating outputs within the rounding bound, on fresh random
// inputs with flat regions (where sums land on integers), every mode, rank and op, slabs cut at
// every position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "core/convert.hpp"
#include "core/converted.hpp"
#include "core/detail.hpp"
#include "core/half.hpp"
#include "core/nonfinite.hpp"
#include "core/scipy_sum.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

TEST(HalfTypes, Float16RoundTripsAndRoundsToNearestEven) {
  long bad = 0;
  for (unsigned b = 0; b < 65536; ++b) {
    const float f = to_float(float16{std::uint16_t(b)});
    const float16 g = to_float16(f);
    if (std::isnan(f) ? !std::isnan(to_float(g)) : g.bits != b) ++bad;
  }
  EXPECT_EQ(bad, 0) << "values that do not survive float16 -> float -> float16";
  // Each midpoint of two neighbours rounds to the even one; a float either side to its side.
  for (unsigned b = 0; b < 0x7bff; ++b) {
    const double lo = to_float(float16{std::uint16_t(b)}), hi = to_float(float16{std::uint16_t(b + 1)});
    const float mid = float((lo + hi) / 2);
    ASSERT_EQ(double(mid), (lo + hi) / 2);
    ASSERT_EQ(to_float16(mid).bits, (b & 1) ? b + 1 : b) << b;
    ASSERT_EQ(to_float16(std::nextafter(mid, 1e9f)).bits, b + 1) << b;
    ASSERT_EQ(to_float16(std::nextafter(mid, -1e9f)).bits, b) << b;
  }
  EXPECT_EQ(to_float(to_float16(65519.f)), 65504.f);
  EXPECT_TRUE(std::isinf(to_float(to_float16(65520.f))));
  EXPECT_TRUE(std::isnan(to_float(to_float16(std::nanf("")))));
  EXPECT_EQ(to_float(to_float16(0x1p-24f)), 0x1p-24f);  // the least subnormal
  EXPECT_EQ(to_float16(0x1p-25f).bits, 0u);              // its half ties to even: zero
}

TEST(HalfTypes, BFloat16IsTheUpperHalfRoundedToNearestEven) {
  EXPECT_EQ(to_float(to_bfloat16(1.0f + 0x1p-8f)), 1.0f);                  // a tie, to even
  EXPECT_EQ(to_bfloat16(1.0f + 3 * 0x1p-8f).bits, 0x3f82u);                // a tie, to even
  EXPECT_EQ(to_float(to_bfloat16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);  // above the tie
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(to_float(to_bfloat16(INFINITY))));
}

// SciPy's casts on x86-64, worked by hand: through int32, low bits kept.
TEST(ScipyCasts, TruncateTowardZeroAndWrapAsX86) {
  using detail::nearest_cast;
  using detail::scipy_cast;
  EXPECT_EQ(scipy_cast<std::uint8_t>(200.99), 200);
  EXPECT_EQ(scipy_cast<std::uint8_t>(300.7), 44);     // 300 mod 256
  EXPECT_EQ(scipy_cast<std::uint8_t>(-1.5), 255);     // -1 mod 256
  EXPECT_EQ(scipy_cast<std::uint8_t>(-0.99), 0);
  EXPECT_EQ(scipy_cast<std::uint8_t>(std::nan("")), 0);   // INT_MIN's low byte
  EXPECT_EQ(scipy_cast<std::uint8_t>(1e10), 0);
  EXPECT_EQ(scipy_cast<std::int16_t>(40000.5), -25536);
  EXPECT_EQ(scipy_cast<std::uint16_t>(-2.0), 65534);
  EXPECT_EQ(scipy_cast<std::int32_t>(-2147483648.9), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(scipy_cast<std::int32_t>(2147483647.9), 2147483647);
  EXPECT_EQ(scipy_cast<std::int32_t>(2147483648.0), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(scipy_cast<std::int32_t>(-INFINITY), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(nearest_cast<std::uint8_t>(2.5), 2);
  EXPECT_EQ(nearest_cast<std::uint8_t>(3.5), 4);
  EXPECT_EQ(nearest_cast<std::uint8_t>(300.0), 255);
  EXPECT_EQ(nearest_cast<std::uint8_t>(-5.0), 0);
  EXPECT_EQ(nearest_cast<std::uint8_t>(std::nan("")), 0);
  EXPECT_EQ(nearest_cast<std::int16_t>(-1e9), -32768);
}

// SciPy's 1-D order worked by hand: gaussian-like weights on a constant line sum to a value
// below the constant in NI_Correlate1D's order of pairs, and C order gives another double.
TEST(ScipySum, LineOrderIsNICorrelate1DsPairs) {
  const std::vector<double> w{0.1, 0.2, 0.4, 0.2, 0.1};
  const Filter f(w, {5});
  Problem p(1, {9, 1, 1}, 1, f, DType::u8, Op::correlate, Edges::all(Boundary::nearest));
  p.set_footprint(Footprint::every);
  const detail::ScipySum line(p);
  ASSERT_TRUE(line.line());
  const std::vector<std::uint8_t> x(9, 7);
  // NI_Correlate1D: x0 w0 + (x-2 + x2) w-2 + (x-1 + x1) w-1, outermost pair first.
  const double want = (7.0 * 0.4 + (7.0 + 7.0) * 0.1) + (7.0 + 7.0) * 0.2;
  EXPECT_EQ(line.at(x.data(), 0, 0, 4, 0.0), want);
  p.set_footprint(Footprint::nonzero);
  const detail::ScipySum nd(p);
  ASSERT_FALSE(nd.line());
  double c = 0;
  for (double wj : w) c += 7.0 * wj;  // NI_Correlate: C order from 0
  EXPECT_EQ(nd.at(x.data(), 0, 0, 4, 0.0), c);
}

// ---------------------------------------------------------------------------------------------
// Every strategy on every dtype against the reference (CUDA's where a GPU is usable).
// ---------------------------------------------------------------------------------------------

// Fresh random values of dtype t: integers over the whole range (limits included), floating
// types in [-4, 4], with flat regions (runs of one value) where sums land on integers.
std::vector<unsigned char> random_array(DType t, std::int64_t n) {
  std::vector<unsigned char> bytes(std::size_t(n) * dtype_size(t));
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  std::uniform_int_distribution<int> coin(0, 9);
  dispatch_dtype<AllDTypes>(t, [&](auto d) {
    using T = typename decltype(d)::storage;
    T* v = reinterpret_cast<T*>(bytes.data());
    T held{};
    for (std::int64_t i = 0; i < n; ++i) {
      const bool flat = i > 0 && coin(rng()) < 6;  // runs of about 2.5 elements
      if (flat) {
        v[i] = held;
        continue;
      }
      if constexpr (std::is_integral_v<T>) {
        const int c = coin(rng());
        std::uniform_int_distribution<std::int64_t> di(std::numeric_limits<T>::min(),
                                                       std::numeric_limits<T>::max());
        v[i] = c == 0 ? std::numeric_limits<T>::max()
                      : c == 1 ? std::numeric_limits<T>::min() : static_cast<T>(di(rng()));
      } else if constexpr (std::is_same_v<T, float16>) {
        v[i] = to_float16(float(u(rng())));
      } else if constexpr (std::is_same_v<T, bfloat16>) {
        v[i] = to_bfloat16(float(u(rng())));
      } else if constexpr (std::is_floating_point_v<T>) {
        v[i] = static_cast<T>(u(rng()));
      } else {
        using R = typename T::value_type;
        const R re = R(u(rng()));
        v[i] = T(re, R(u(rng())));
      }
      held = v[i];
    }
  });
  return bytes;
}

// Element i of an array of dtype t as a complex double (real types: imaginary part 0).
std::complex<double> element(DType t, const std::vector<unsigned char>& a, std::int64_t i) {
  return dispatch_dtype<AllDTypes>(t, [&](auto d) -> std::complex<double> {
    using T = typename decltype(d)::storage;
    const T v = reinterpret_cast<const T*>(a.data())[i];
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return {double(v.real()), double(v.imag())};
    else
      return {detail::to_double(v), 0.0};
  });
}

double unit_of(DType t) {
  switch (t) {
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    case DType::f32: case DType::c64: return 0x1p-24;
    default: return 0x1p-53;
  }
}

struct DtypeCase {
  DType in, out;
  Rounding rounding = Rounding::truncate;
};

// Runs p with every strategy that takes it (the CUDA ones where a GPU is usable, on copies of
// the host arrays) and compares with the reference; returns how many strategies ran, -1 after a
// failure.
int check_all_strategies(const Problem& p, const std::vector<unsigned char>& in,
                              const std::string& what) {
  const std::int64_t n = p.elements();
  const std::size_t out_bytes = std::size_t(n) * dtype_size(p.out_dtype());
  std::vector<unsigned char> want(out_bytes, 0xA5), got(out_bytes);
  const Strategy* ref = find_strategy("reference");
  detail::run_strategy(*detail::plan_or_throw(*ref, p), in.data(), want.data(), nullptr);
  // The bound of a floating output: the compute type's rounding over sum |w| max|x| and the
  // output type's own rounding of the value.
  double wsum = 0, xmax = std::fabs(p.cval());
  for (double w : p.filter().weights()) wsum += std::fabs(w);
  for (std::int64_t i = 0; i < n; ++i) xmax = std::max(xmax, std::abs(element(p.dtype(), in, i)));
  // float32 where the strategies may sum in it: compute_dtype's, or a float32 output (the
  // integer strategies, lines and planes, sum 16-bit values in float32 for it).
  const double acc_unit =
      detail::compute_dtype(p) == DType::f32 || p.out_dtype() == DType::f32 ? 0x1p-24 : 0x1p-53;
  const double scale = (double(p.filter().taps()) + 10) * acc_unit * wsum * xmax;
  const bool integer = is_integer_dtype(p.out_dtype());
  // Rounding to nearest is the strategy's sum rounded (ACCURACY.md): where the float64 sum lies
  // within the bound of a half-integer, either neighbour is right.
  std::vector<double> sums;
  if (integer && p.rounding() == Rounding::nearest) {
    Problem q = p;
    q.set_output(DType::f64);
    sums.resize(std::size_t(n));
    detail::run_strategy(*detail::plan_or_throw(*ref, q), in.data(), sums.data(), nullptr);
  }
  int ran = 0;
  static const bool gpu = cuda_available();
  for (const Strategy* s : strategies()) {
    if ((s->backend() == Backend::cuda && !gpu) || s->name() == "reference") continue;
    const Prepared pp = detail::prepare_for_dispatch(*s, p);
    if (!pp) continue;
    ++ran;
    std::fill(got.begin(), got.end(), 0x5A);  // poisoned
    if (s->backend() == Backend::cuda)
      detail::run_cuda_on_host_buffers(*pp.plan, in.data(), got.data(), nullptr);
    else
      detail::run_strategy(*pp.plan, in.data(), got.data(), nullptr);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::complex<double> g = element(p.out_dtype(), got, i),
                                 r = element(p.out_dtype(), want, i);
      double tol = integer ? 0.0 : scale + 2 * unit_of(p.out_dtype()) * std::abs(r);
      if (!sums.empty() &&
          std::fabs(sums[i] - std::floor(sums[i]) - 0.5) <= scale + 0x1p-40 * std::fabs(sums[i]))
        tol = 1.0;
      if (!(std::abs(g - r) <= tol)) {
        ADD_FAILURE() << what << ": strategy " << s->name() << " (" << pp.plan->describe()
                      << ") element " << i << ": " << g << ", the reference " << r << " (bound "
                      << tol << ")";
        return -1;
      }
    }
  }
  return ran;
}

const DtypeCase kCases[] = {
    {DType::u8, DType::u8},     {DType::u16, DType::u16},   {DType::i16, DType::i16},
    {DType::i32, DType::i32},   {DType::f16, DType::f16},   {DType::bf16, DType::bf16},
    {DType::c64, DType::c64},   {DType::c128, DType::c128}, {DType::u8, DType::f32},
    {DType::u16, DType::f64},   {DType::f32, DType::u8},    {DType::f64, DType::i16},
    {DType::u8, DType::i16},    {DType::i16, DType::u8},    {DType::f32, DType::c64},
    {DType::f16, DType::f32},   {DType::u8, DType::u8, Rounding::nearest},
    {DType::f32, DType::u16, Rounding::nearest},
};

TEST(NativeDtypes, EveryStrategyMatchesTheReference) {
  const Boundary modes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                            Boundary::mirror, Boundary::wrap};
  struct Shape {
    int rank;
    Extents ext;
    std::vector<std::int64_t> k;
    std::int64_t batch;
  };
  const Shape shapes[] = {{1, {61, 1, 1}, {5}, 2},
                          {2, {13, 29, 1}, {3, 4}, 1},
                          {2, {9, 17, 1}, {5, 1}, 1},
                          {3, {5, 7, 9}, {3, 3, 2}, 1}};
  std::uniform_int_distribution<int> pick(0, 2);
  int runs = 0;
  for (const DtypeCase& c : kCases)
    for (const Shape& sh : shapes)
      for (Boundary m : modes) {
        // A normalised filter (sums of a flat region land on the region's value) or integral
        // weights (sums are integers).
        std::int64_t taps = 1;
        for (auto k : sh.k) taps *= k;
        std::vector<double> w(static_cast<std::size_t>(taps));
        const int kind = pick(rng());
        for (auto& v : w)
          v = kind == 0 ? std::uniform_real_distribution<double>(0.1, 1.0)(rng())
                        : kind == 1 ? double(std::uniform_int_distribution<int>(-2, 3)(rng()))
                                    : 1.0;
        if (kind != 1) {
          double s = 0;
          for (double v : w) s += v;
          for (auto& v : w) v /= s;
        }
        const Op op = pick(rng()) == 0 ? Op::convolve : Op::correlate;
        Edges e = Edges::all(m, m == Boundary::constant ? 3.0 : 0.0);
        Problem p(sh.rank, sh.ext, sh.batch, Filter(w, sh.k), c.in, op, e);
        p.set_output(c.out, c.rounding);
        if (sh.rank == 2 && sh.k[1] == 1) p.set_footprint(Footprint::every);  // a 1-D pass
        const std::vector<unsigned char> in = random_array(c.in, p.elements());
        const std::string what = p.describe() + " weights kind " + std::to_string(kind);
        const int ran = check_all_strategies(p, in, what);
        if (ran < 0) return;
        runs += ran;
      }
  EXPECT_GT(runs, 200) << "too few strategies took the cases";
}

// Slabs cut the array at every position relative to the filter's reach: 1 row, reach - 1,
// reach, reach + 1, odd counts; integer outputs stay SciPy's.
TEST(NativeDtypes, SlabsCutAnywhere) {
  for (double slab_rows : {1.0, 2.0, 3.0, 4.0, 5.0, 7.0}) {
    for (int rank = 1; rank <= 3; ++rank) {
      const Extents ext = rank == 1 ? Extents{53, 1, 1}
                                    : rank == 2 ? Extents{23, 11, 1} : Extents{11, 5, 6};
      const std::int64_t row = rank == 1 ? 1 : rank == 2 ? 11 : 30;
      detail::set_converted_slab_bytes(slab_rows * double(row) * 4);
      std::vector<std::int64_t> k(std::size_t(rank), 3);
      k[0] = 5;
      std::int64_t taps = 1;
      for (auto v : k) taps *= v;
      std::vector<double> w(std::size_t(taps), 1.0 / double(taps));
      for (Boundary m : {Boundary::reflect, Boundary::constant, Boundary::wrap}) {
        Edges e = Edges::all(m, 7.0);
        e.origin[0] = 1;
        Problem p(rank, ext, 2, Filter(w, k), DType::u16, Op::correlate, e);
        p.set_output(DType::u8);
        const std::vector<unsigned char> in = random_array(DType::u16, p.elements());
        const int ran = check_all_strategies(
            p, in, p.describe() + " slab rows " + std::to_string(int(slab_rows)));
        EXPECT_GT(ran, 0) << p.describe();
        if (ran < 0) {
          detail::set_converted_slab_bytes(0);
          return;
        }
      }
    }
  }
  detail::set_converted_slab_bytes(0);
}

// The integer strategies at their own width (CUDA's lines and planes, the CPU's cpu_lines where
// built) across their tiles: lines longer than a block, more lines than a block's 32, filters
// larger than the templated sides and not square, odd widths and rows staged as words, origins
// along both axes, batches; every mode, flat regions (random_array), normalised and integral
// weights, rounding to nearest. Where a GPU is usable, the CUDA strategy
// named must take the problem.
TEST(NativeDtypes, IntegerStrategiesAcrossTheirTiles) {
  struct Case {
    int rank;
    Extents ext;
    std::vector<std::int64_t> k;
    std::int64_t batch;
    const char* gpu;  // the CUDA strategy that must take it
  };
  const Case cases[] = {{1, {5000, 1, 1}, {17}, 1, "lines"},
                        {1, {7, 1, 1}, {5}, 3, "lines"},
                        {2, {130, 45, 1}, {17, 1}, 1, "lines"},
                        {2, {3, 4100, 1}, {1, 9}, 1, "lines"},
                        {3, {2, 67, 33}, {1, 9, 1}, 1, "lines"},
                        {2, {70, 45, 1}, {5, 7}, 1, "planes"},
                        {2, {129, 65, 1}, {15, 15}, 1, "planes"},
                        {2, {40, 33, 1}, {2, 3}, 1, "planes"},
                        {2, {66, 35, 1}, {17, 3}, 1, "planes"},
                        {3, {2, 37, 41}, {1, 3, 3}, 2, "planes"},
                        // Rows of a multiple of 4 bytes: staged as 32-bit words.
                        {2, {70, 96, 1}, {3, 3}, 1, "planes"},
                        {2, {67, 100, 1}, {5, 5}, 1, "planes"},
                        {2, {130, 72, 1}, {9, 9}, 1, "planes"},
                        {3, {3, 40, 64}, {1, 15, 15}, 1, "planes"}};
  const DtypeCase dtypes[] = {{DType::u8, DType::u8},
                              {DType::u16, DType::u16},
                              {DType::i16, DType::i16},
                              {DType::u8, DType::f32},
                              {DType::i16, DType::f32},
                              {DType::u8, DType::u8, Rounding::nearest}};
  const Boundary modes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                            Boundary::mirror, Boundary::wrap};
  const bool gpu = cuda_available();
  int n = 0;
  for (const Case& c : cases)
    for (const DtypeCase& d : dtypes)
      for (Boundary m : modes) {
        std::int64_t taps = 1;
        for (auto k : c.k) taps *= k;
        const bool integral = (n++ % 3) == 2;
        std::vector<double> w(static_cast<std::size_t>(taps));
        double sum = 0;
        for (auto& v : w) {
          v = integral ? double(std::uniform_int_distribution<int>(-2, 3)(rng()))
                       : std::uniform_real_distribution<double>(0.05, 1.0)(rng());
          sum += v;
        }
        if (!integral)
          for (auto& v : w) v /= sum;
        Edges e = Edges::all(m, m == Boundary::constant ? 5.0 : 0.0);
        e.origin[0] = c.k[0] > 2 ? 1 : 0;
        // Origins along the rows too: the tile's first column anywhere in its 32-bit word.
        if (c.rank > 1 && c.k[std::size_t(c.rank - 1)] > 2) e.origin[c.rank - 1] = n % 3 - 1;
        Problem p(c.rank, c.ext, c.batch, Filter(w, c.k), d.in, Op::correlate, e);
        p.set_output(d.out, d.rounding);
        if (std::string(c.gpu) == "lines" && n % 2) p.set_footprint(Footprint::every);
        if (gpu) {
          ASSERT_TRUE(detail::prepare_for_dispatch(*find_strategy(c.gpu), p))
              << c.gpu << " refused " << p.describe();
        }
        const std::vector<unsigned char> in = random_array(d.in, p.elements());
        if (check_all_strategies(p, in, p.describe()) < 0) return;
      }
}

TEST(NativeDtypes, ApplyTakesAnOutputDtypeAndRefusesComplexToReal) {
  std::vector<std::uint8_t> in(64);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::uint8_t(i * 37);
  std::vector<float> out(64, -1.0f);
  ConstArrayView iv(in.data(), DType::u8, 2, {8, 8, 1});
  ArrayView ov;
  ov.data = out.data();
  ov.dtype = DType::f32;
  ov.rank = 2;
  ov.extents = {8, 8, 1};
  Options opt;
  opt.backend = Backend::cpu;
  const RunInfo info = apply(iv, ov, make_named_filter("box:3", 2), opt);
  EXPECT_FALSE(info.strategy.empty());
  EXPECT_NEAR(out[9], (0 + 37 + 74 + 8 * 37 % 256 + 9 * 37 % 256 + 10 * 37 % 256 +
                       (16 * 37) % 256 + (17 * 37) % 256 + (18 * 37) % 256) / 9.0,
              1e-4);
  std::vector<std::complex<float>> cin(64, {1.0f, 2.0f});
  ConstArrayView cv(cin.data(), DType::c64, 2, {8, 8, 1});
  try {
    apply(cv, ov, make_named_filter("box:3", 2), opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("complex input (c64) needs a complex output"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace halo::test
