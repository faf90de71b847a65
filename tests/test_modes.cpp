// Boundary modes, cval and origin: the index map worked by hand, the reference against SciPy's
// outputs (tests/data/scipy_modes.json, from tests/data/make_scipy_modes.py), the folding of
// wide filters, every strategy either refusing a mode or computing it, and the names.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/boundary.hpp"
#include "io/npy.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

// ------------------------------------------------------------------------------------------------
// The index map, by hand: a b c d at 0..3.
// ------------------------------------------------------------------------------------------------
TEST(Modes, IndexMapByHand) {
  using detail::map_index;
  const std::int64_t n = 4;
  // i = -8 .. -1 and 4 .. 11, written out from scipy.ndimage's pictures of each mode.
  const std::vector<std::int64_t> reflect_lo{0, 1, 2, 3, 3, 2, 1, 0}, reflect_hi{3, 2, 1, 0, 0, 1, 2, 3};
  const std::vector<std::int64_t> mirror_lo{2, 1, 0, 1, 2, 3, 2, 1}, mirror_hi{2, 1, 0, 1, 2, 3, 2, 1};
  const std::vector<std::int64_t> wrap_lo{0, 1, 2, 3, 0, 1, 2, 3}, wrap_hi{0, 1, 2, 3, 0, 1, 2, 3};
  for (int t = 0; t < 8; ++t) {
    const std::int64_t lo = -8 + t, hi = 4 + t;
    EXPECT_EQ(map_index(lo, n, Boundary::reflect), reflect_lo[t]) << lo;
    EXPECT_EQ(map_index(hi, n, Boundary::reflect), reflect_hi[t]) << hi;
    EXPECT_EQ(map_index(lo, n, Boundary::mirror), mirror_lo[t]) << lo;
    EXPECT_EQ(map_index(hi, n, Boundary::mirror), mirror_hi[t]) << hi;
    EXPECT_EQ(map_index(lo, n, Boundary::wrap), wrap_lo[t]) << lo;
    EXPECT_EQ(map_index(hi, n, Boundary::wrap), wrap_hi[t]) << hi;
    EXPECT_EQ(map_index(lo, n, Boundary::nearest), 0);
    EXPECT_EQ(map_index(hi, n, Boundary::nearest), 3);
    EXPECT_EQ(map_index(lo, n, Boundary::constant), -1);
    EXPECT_EQ(map_index(hi, n, Boundary::constant), -1);
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (Boundary m : {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror,
                       Boundary::wrap})
      EXPECT_EQ(map_index(i, n, m), i);
  // One element: every mode but constant reads it.
  for (std::int64_t i : {-7, -1, 1, 9})
    for (Boundary m : {Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap})
      EXPECT_EQ(map_index(i, 1, m), 0) << to_string(m) << " " << i;
}

// The reference by hand, 1-D and 2-D: a filter that picks one tap reads one mapped element.
TEST(Modes, ReferenceByHand) {
  const std::vector<double> a{1, 2, 3, 4};
  const auto run1 = [&](const Filter& f, const Edges& e, Op op = Op::correlate) {
    std::vector<double> out(4);
    Options opt;
    opt.strategy = "reference";
    opt.edges = e;
    opt.op = op;
    apply(view(a.data(), {4}), view(out.data(), {4}), f, opt);
    return out;
  };
  // [1, 0, 0]: output i reads i - 1.
  const Filter left(std::vector<double>{1, 0, 0}, {3});
  EXPECT_EQ(run1(left, Edges::all(Boundary::reflect)), (std::vector<double>{1, 1, 2, 3}));
  EXPECT_EQ(run1(left, Edges::all(Boundary::mirror)), (std::vector<double>{2, 1, 2, 3}));
  EXPECT_EQ(run1(left, Edges::all(Boundary::nearest)), (std::vector<double>{1, 1, 2, 3}));
  EXPECT_EQ(run1(left, Edges::all(Boundary::wrap)), (std::vector<double>{4, 1, 2, 3}));
  EXPECT_EQ(run1(left, Edges::all(Boundary::constant, 9)), (std::vector<double>{9, 1, 2, 3}));
  // convolve flips it: output i reads i + 1.
  EXPECT_EQ(run1(left, Edges::all(Boundary::wrap), Op::convolve), (std::vector<double>{2, 3, 4, 1}));
  // 11 taps, the first 1: output i reads i - 5, more than an array away.
  std::vector<double> w(11, 0.0);
  w[0] = 1;
  const Filter far(w, {11});
  EXPECT_EQ(run1(far, Edges::all(Boundary::reflect)), (std::vector<double>{4, 4, 3, 2}));
  EXPECT_EQ(run1(far, Edges::all(Boundary::mirror)), (std::vector<double>{2, 3, 4, 3}));
  EXPECT_EQ(run1(far, Edges::all(Boundary::wrap)), (std::vector<double>{4, 1, 2, 3}));
  EXPECT_EQ(run1(far, Edges::all(Boundary::nearest)), (std::vector<double>{1, 1, 1, 1}));
  // origin -1 moves the filter right: [1, 0, 0] with origin -1 reads i.
  Edges shifted = Edges::all(Boundary::reflect);
  shifted.origin[0] = -1;
  EXPECT_EQ(run1(left, shifted), (std::vector<double>{1, 2, 3, 4}));

  // 2-D, per-axis modes: rows wrap, columns reflect; the filter reads (y - 1, x - 1).
  const std::vector<double> b{1, 2, 3, 4, 5, 6};  // 2 x 3
  std::vector<double> out(6);
  Options opt;
  opt.strategy = "reference";
  opt.edges.mode = {Boundary::wrap, Boundary::reflect, Boundary::constant};
  const Filter corner(std::vector<double>{1, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 3});
  apply(view(b.data(), {2, 3}), view(out.data(), {2, 3}), corner, opt);
  // y - 1 wraps row 0 to row 1; x - 1 reflects column 0 to column 0.
  EXPECT_EQ(out, (std::vector<double>{4, 4, 5, 1, 1, 2}));
}

// ------------------------------------------------------------------------------------------------
// Against SciPy
// ------------------------------------------------------------------------------------------------
struct ScipyCase {
  Problem problem;
  std::vector<double> input, expected;
  bool nd_differs = false;
};

std::vector<ScipyCase> scipy_cases() {
  std::ifstream f(std::string(HALO_TEST_DATA_DIR) + "/scipy_modes.json");
  EXPECT_TRUE(f.good()) << "tests/data/scipy_modes.json is missing";
  const nlohmann::json doc = nlohmann::json::parse(f);
  std::vector<ScipyCase> out;
  for (const auto& c : doc["cases"]) {
    const auto shape = c["shape"].get<std::vector<std::int64_t>>();
    const int rank = static_cast<int>(shape.size());
    Extents ext{1, 1, 1};
    for (int i = 0; i < rank; ++i) ext[i] = shape[i];
    Edges e;
    const auto modes = c["mode"].get<std::vector<std::string>>();
    const auto origin = c["origin"].get<std::vector<std::int64_t>>();
    for (int i = 0; i < rank; ++i) {
      e.mode[i] = parse_boundary(modes[modes.size() == 1 ? 0 : i]);
      e.origin[i] = origin[i];
    }
    e.cval = c["cval"].get<double>();
    const Filter filt(c["weights"].get<std::vector<double>>(),
                      c["filter_shape"].get<std::vector<std::int64_t>>());
    out.push_back({Problem(rank, ext, 1, filt, DType::f64, parse_op(c["op"].get<std::string>()), e),
                   c["input"].get<std::vector<double>>(), c["expected"].get<std::vector<double>>(),
                   c["nd_differs"].get<bool>()});
  }
  return out;
}

TEST(ScipyModes, EveryStrategyThatAcceptsACaseMatchesScipy) {
  const std::vector<ScipyCase> cases = scipy_cases();
  ASSERT_GT(cases.size(), 700u);
  std::map<std::string, int> ran;
  for (const ScipyCase& c : cases) {
    const Problem& p = c.problem;
    std::vector<double> scale(c.input.size());
    cpu::reference_f64(p, c.input.data(), scale.data(), true);
    for (const Strategy* s : strategies()) {
      if (s->backend() == Backend::cuda && !cuda_available()) continue;
      if (!s->can_implement(p)) continue;
      std::vector<double> out(c.input.size());
      poison(out);
      Options opt;
      opt.strategy = s->name();
      opt.op = p.op();
      opt.edges = p.edges();
      apply(ConstArrayView(c.input.data(), DType::f64, p.rank(), p.extents()),
            ArrayView{out.data(), DType::f64, p.rank(), p.extents()}, p.filter(), opt);
      ++ran[s->name()];
      // FFT strategies are held to their normwise bound over a tile (ACCURACY.md, FFT), the
      // others to the direct sum's.
      const bool fft = s->summation(p) == Summation::fft;
      const std::vector<double> fft_tol =
          fft ? tolerances(s->name(), p, c.input) : std::vector<double>{};
      for (std::size_t i = 0; i < out.size(); ++i)
        ASSERT_NEAR(out[i], c.expected[i],
                    fft ? fft_tol[i]
                        : tolerance<double>(p.filter().taps(), scale[i] + std::fabs(p.cval())))
            << s->name() << ": " << p.describe() << " at " << i;
    }
  }
  EXPECT_EQ(ran["reference"], int(cases.size()));
  for (const auto& [name, n] : ran) std::printf("[ scipy    ] %s: %d cases\n", name.c_str(), n);
}

// The folded correlation weights (Problem) give the definition's result: a plain correlation
// over them with the mode's index map against the reference, which sums over the filter as
// given, for filters far wider than the array.
TEST(Modes, FoldedFiltersComputeTheDefinition) {
  for (Boundary m : {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror,
                     Boundary::wrap})
    for (const std::int64_t n : {1, 2, 3, 5})
      for (const std::int64_t k : {1, 4, 9, 23, 40})
        for (Op op : {Op::correlate, Op::convolve}) {
          Edges e = Edges::all(m, m == Boundary::constant ? 0.625 : 0.0);
          e.origin[1] = (k - 1) / 2;  // the limit, on the second axis
          const Problem p(2, {3, n, 1}, 1, random_filter({5, k}), DType::f64, op, e);
          EXPECT_LE(p.filter_extents()[1], 2 * n + 1) << p.describe();
          const std::vector<double> in = random_vector<double>(3 * n);
          std::vector<double> ref(in.size()), scale(in.size());
          cpu::reference_f64(p, in.data(), ref.data());
          cpu::reference_f64(p, in.data(), scale.data(), true);
          const std::vector<double>& w = p.correlation_weights();
          const Extents& kk = p.filter_extents();
          const Extents& a = p.anchor();
          for (std::int64_t y = 0; y < 3; ++y)
            for (std::int64_t x = 0; x < n; ++x) {
              double acc = 0;
              for (std::int64_t fy = 0; fy < kk[0]; ++fy)
                for (std::int64_t fx = 0; fx < kk[1]; ++fx) {
                  const std::int64_t iy = detail::map_index(y - a[0] + fy, 3, m);
                  const std::int64_t ix = detail::map_index(x - a[1] + fx, n, m);
                  const double v = iy < 0 || ix < 0 ? e.cval : in[iy * n + ix];
                  acc += w[fy * kk[1] + fx] * v;
                }
              ASSERT_NEAR(acc, ref[y * n + x],
                          tolerance<double>(p.filter().taps(), scale[y * n + x] + 1))
                  << p.describe() << " at " << y << "," << x;
            }
        }
}

// No strategy computes another mode than asked: each either refuses the problem, saying why, or
// matches the reference.
TEST(Modes, EveryStrategyRefusesOrComputesTheMode) {
  for (Boundary m : {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror,
                     Boundary::wrap})
    for (int rank = 1; rank <= 3; ++rank) {
      const Extents ext = rank == 1 ? Extents{70, 1, 1} : rank == 2 ? Extents{19, 33, 1}
                                                                   : Extents{6, 7, 9};
      const Problem p(rank, ext, 2, random_filter(std::vector<std::int64_t>(rank, 3)),
                      DType::f32, Op::correlate, Edges::all(m, 1.5));
      const std::vector<float> in = random_vector<float>(p.elements());
      for (const Strategy* s : strategies()) {
        const Status st = s->can_implement(p);
        if (!st) {
          EXPECT_FALSE(st.reason.empty()) << s->name();
          continue;
        }
        if (s->backend() == Backend::cuda && !cuda_available()) continue;
        std::vector<float> out(in.size());
        poison(out);
        s->backend() == Backend::cuda
            ? (void)apply(ConstArrayView(in.data(), DType::f32, rank, ext, 2),
                          ArrayView{out.data(), DType::f32, rank, ext, 2}, p.filter(),
                          Options{Op::correlate, p.edges(), Backend::automatic, s->name()})
            : s->run(p, Buffers{in.data(), out.data()}, nullptr);
        EXPECT_EQ(compare(s->name(), p, in, out), "") << to_string(m);
      }
    }
}

TEST(Modes, NamesAliasesAndLimits) {
  const std::vector<std::pair<std::string, Boundary>> names{
      {"constant", Boundary::constant}, {"nearest", Boundary::nearest},
      {"reflect", Boundary::reflect},   {"mirror", Boundary::mirror},
      {"wrap", Boundary::wrap},         {"grid-constant", Boundary::constant},
      {"grid-mirror", Boundary::reflect}, {"grid-wrap", Boundary::wrap},
      {"zero", Boundary::constant},     {"replicate", Boundary::nearest},
      {"reflect101", Boundary::mirror}, {"reflect_101", Boundary::mirror},
      {"symmetric", Boundary::reflect}, {"circular", Boundary::wrap},
      {"periodic", Boundary::wrap}};
  for (const auto& [name, mode] : names) {
    bool zero = true;
    EXPECT_EQ(parse_boundary(name, &zero), mode) << name;
    EXPECT_EQ(zero, name == "zero") << name;
  }
  EXPECT_NE(error_of([] { parse_boundary("reflective"); }).find("unknown boundary mode 'reflective'"),
            std::string::npos);
  // SciPy's origin limits: -(k/2) .. (k-1)/2, named with the axis.
  const auto origin_error = [](std::int64_t k, std::int64_t o, Op op) {
    Edges e;
    e.origin[1] = o;
    return error_of([&] { Problem(2, {8, 8, 1}, 1, random_filter({3, k}), DType::f32, op, e); });
  };
  for (Op op : {Op::correlate, Op::convolve}) {
    EXPECT_EQ(origin_error(4, -2, op), "(no error)");
    EXPECT_EQ(origin_error(4, 1, op), "(no error)");
    EXPECT_NE(origin_error(4, 2, op).find("origin 2 on axis 1 is out of range for a filter of "
                                          "extent 4: expected -2..1"),
              std::string::npos)
        << origin_error(4, 2, op);
    EXPECT_NE(origin_error(5, -3, op).find("expected -2..2"), std::string::npos);
  }
}

// The command line: every name and alias, per-axis lists, cval and origin, and each bad value an
// error that names the argument, exit 1, nothing on stdout, no output written.
TEST(ModesCli, NamesListsAndErrors) {
  const std::string dir = ::testing::TempDir() + "halo-modes-cli-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::vector<double> img = random_vector<double>(6 * 7);
  io::write_npy(dir + "/img.npy", DType::f64, {6, 7}, img.data());
  const std::string base = "apply " + dir + "/img.npy " + dir + "/out.npy --filter box:3 ";
  const auto expect_like_reference = [&](const std::string& args, const Edges& e) {
    const SplitResult r = run_cli_split(base + args);
    ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    const io::NpyArray out = io::read_npy(dir + "/out.npy");
    std::vector<double> ref(img.size());
    cpu::reference_f64(Problem(2, {6, 7, 1}, 1, make_named_filter("box:3", 2), DType::f64,
                               Op::correlate, e),
                       img.data(), ref.data());
    for (std::size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(out.as<double>()[i], ref[i], 1e-12) << args << " at " << i;
  };
  for (const char* name : {"constant", "nearest", "reflect", "mirror", "wrap", "grid-constant",
                           "grid-mirror", "grid-wrap", "zero", "replicate", "reflect101",
                           "reflect_101", "symmetric", "circular", "periodic"})
    expect_like_reference(std::string("--mode ") + name, Edges::all(parse_boundary(name)));
  Edges e;
  e.mode = {Boundary::wrap, Boundary::mirror, Boundary::constant};
  e.cval = 2.5;
  e.origin = {-1, 1, 0};
  expect_like_reference("--mode wrap,mirror --cval 2.5 --origin -1,1", e);
  const SplitResult nan = run_cli_split(base + "--mode constant --cval nan");
  EXPECT_EQ(nan.code, 0) << nan.err;
  EXPECT_TRUE(std::isnan(io::read_npy(dir + "/out.npy").as<double>()[0]));
  std::filesystem::remove(dir + "/out.npy");

  const auto expect_error = [&](const std::string& args, const std::string& phrase) {
    const SplitResult r = run_cli_split(base + args);
    EXPECT_EQ(r.code, 1) << args;
    EXPECT_NE(r.err.find(phrase), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.npy")) << args;
  };
  expect_error("--mode reflective", "unknown boundary mode 'reflective'");
  expect_error("--mode wrap,wrap,wrap", "--mode 'wrap,wrap,wrap': give one mode or 2");
  expect_error("--origin 2", "origin 2 on axis 0 is out of range for a filter of extent 3: "
                             "expected -1..1");
  expect_error("--origin 0,0,0", "--origin '0,0,0': give one origin or 2");
  expect_error("--origin 0x1", "--origin");
  expect_error("--cval abc", "--cval");
  expect_error("--mode zero --cval 1", "--mode zero means constant with cval 0");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace halo::test
