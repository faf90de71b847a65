// Hostile inputs: strict numbers, huge filters and arrays, memory estimates, progress, messages
// that name the file and survive odd bytes, one exit-code contract, nothing on stdout before an
// error.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/parse.hpp"
#include "io/npy.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

bool has(const std::string& text, const std::string& phrase) {
  return text.find(phrase) != std::string::npos;
}

// ------------------------------------------------------------------------------------------------
// Strict numbers
// ------------------------------------------------------------------------------------------------
TEST(StrictNumbers, IntegersAreDecimalCompleteAndInRange) {
  EXPECT_EQ(detail::parse_integer("42", 1, 100, "x"), 42);
  EXPECT_EQ(detail::parse_integer("-3", -5, 5, "x"), -3);
  EXPECT_EQ(detail::parse_integer("9223372036854775807", 0, std::numeric_limits<std::int64_t>::max(),
                                  "x"),
            std::numeric_limits<std::int64_t>::max());
  for (const char* bad : {"0x10", "010x", "1e3", "+5", " 5", "5 ", "", "-", "5.0", "abc",
                          "99999999999999999999", "1,2"}) {
    const std::string e = error_of([&] { detail::parse_integer(bad, -100, 100, "--thing"); });
    EXPECT_TRUE(has(e, "--thing must be a decimal integer") || has(e, "must be an integer"))
        << bad << ": " << e;
  }
  EXPECT_TRUE(has(error_of([] { detail::parse_integer("101", -100, 100, "--thing"); }),
                  "in -100..100, got '101'"));
  EXPECT_TRUE(has(error_of([] { detail::parse_integer("-5", 0, 100, "--thing"); }), "0..100"));
}

TEST(StrictNumbers, RealsAreDecimalFiniteAndInRange) {
  EXPECT_EQ(detail::parse_real("2", 0, 10, "s"), 2.0);
  EXPECT_EQ(detail::parse_real("0.5", 0, 10, "s"), 0.5);
  EXPECT_EQ(detail::parse_real(".5", 0, 10, "s"), 0.5);
  EXPECT_EQ(detail::parse_real("5.", 0, 10, "s"), 5.0);
  EXPECT_EQ(detail::parse_real("1e-3", 0, 10, "s"), 1e-3);
  EXPECT_EQ(detail::parse_real("2.5E+0", 0, 10, "s"), 2.5);
  for (const char* bad : {"0x1p1", "0x10", "inf", "nan", "1e", "e3", ".", "+2", " 2", "2 ", "",
                          "1e999", "2,3", "1.2.3"}) {
    const std::string e = error_of([&] { detail::parse_real(bad, 0, 1e300, "sigma"); });
    EXPECT_TRUE(has(e, "sigma must be a")) << bad << ": " << e;
  }
  EXPECT_TRUE(has(error_of([] { detail::parse_real("11", 0, 10, "sigma"); }), "sigma must be in"));
}

TEST(StrictNumbers, ListsNameTheOptionAndCount) {
  EXPECT_EQ(detail::parse_integer_list("16x24", 'x', 1, 100, 1, 4, "--shape"),
            (std::vector<std::int64_t>{16, 24}));
  EXPECT_TRUE(has(error_of([] { detail::parse_integer_list("16x0x10", 'x', 1, 100, 1, 4, "--shape"); }),
                  "--shape '16x0x10'"));
  EXPECT_TRUE(has(error_of([] { detail::parse_integer_list("1x1x1x1x1", 'x', 1, 9, 1, 4, "--shape"); }),
                  "1 to 4 values"));
  EXPECT_TRUE(has(error_of([] { detail::parse_integer_list("8,,16", ',', 1, 99, 1, 4, "--tile"); }),
                  "decimal integer"));
}

TEST(StrictNumbers, FilterSpecsAreStrictAndKeysUnique) {
  const auto spec_error = [](const std::string& spec) {
    return error_of([&] { make_named_filter(spec, 2); });
  };
  EXPECT_TRUE(has(spec_error("box:0x10"), "decimal integer")) << spec_error("box:0x10");
  EXPECT_TRUE(has(spec_error("box:1e1"), "decimal integer"));
  EXPECT_TRUE(has(spec_error("box: 5"), "decimal integer"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=0x1p1"), "sigma must be a decimal number"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=inf"), "sigma must be a decimal number"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=nan"), "sigma must be a decimal number"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=2,sigma=3"), "'sigma' is given twice"));
  EXPECT_TRUE(has(spec_error("gaussian:2,sigma=3"), "sigma is given twice"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=2,radius=3,radius=4"), "'radius' is given twice"));
  EXPECT_TRUE(has(spec_error("gaussian:sigma=2,radius=3e0"), "radius must be a decimal integer"));
  // 'x' separates per-axis values: "0x3" is radius 0 on axis 0 and 3 on axis 1, not hex.
  EXPECT_EQ(make_named_filter("gaussian:sigma=2,radius=0x3", 2).shape_string(), "1x7");
  EXPECT_TRUE(has(spec_error("sobel-x:"), "takes no parameters"));
  // Decimal forms that are fine.
  EXPECT_EQ(make_named_filter("gaussian:sigma=2.0,radius=3", 1).shape_string(), "7");
  EXPECT_EQ(make_named_filter("gaussian:1e0", 1).shape_string(), "9");
  EXPECT_EQ(make_named_filter("box:007", 1).shape_string(), "7");
}

// ------------------------------------------------------------------------------------------------
// Gaussian sigma at the extremes
// ------------------------------------------------------------------------------------------------
TEST(GaussianSigma, TinySigmaIsTheIdentityNotNaN) {
  for (const char* spec : {"gaussian:sigma=1e-300", "gaussian:sigma=4e-320",
                           "gaussian:sigma=1e-300,radius=2"}) {
    const Filter f = make_named_filter(spec, 2);
    const std::int64_t k = f.extents()[0];
    for (std::int64_t i = 0; i < f.taps(); ++i)
      EXPECT_EQ(f.weights()[i], i == f.taps() / 2 ? 1.0 : 0.0) << spec << " k=" << k;
  }
}

TEST(GaussianSigma, TooLargeSigmaIsRefusedNamingIt) {
  const std::string e = error_of([] { make_named_filter("gaussian:sigma=1e300", 1); });
  EXPECT_TRUE(has(e, "sigma 1e300")) << e;
  // sigma 0 leaves the axis unfiltered, as SciPy does: the one-tap identity.
  const Filter z = make_named_filter("gaussian:sigma=0", 1);
  EXPECT_EQ(z.weights(), std::vector<double>{1.0});
}

// ------------------------------------------------------------------------------------------------
// Filter size and memory limits
// ------------------------------------------------------------------------------------------------
TEST(Limits, HugeNamedFiltersAreRefusedBeforeAllocating) {
  for (const char* spec : {"box:20000", "box:1000000", "gaussian:sigma=20000", "delta:9000"}) {
    const std::string e = error_of([&] { make_named_filter(spec, 2); });
    EXPECT_TRUE(has(e, "weights")) << spec << ": " << e;
    EXPECT_TRUE(has(e, std::string("'") + spec + "'")) << e;
  }
  EXPECT_TRUE(has(error_of([] { make_named_filter("box:500", 3); }), "500x500x500"));
  // The same sizes along one axis are fine.
  EXPECT_EQ(make_named_filter("box:20000", 1).taps(), 20000);
}

// Taps that can only meet ghost cells are dropped: exact, and the cost stays bounded.
TEST(Limits, FiltersLargerThanTheArrayAreCroppedExactly) {
  struct C {
    int rank;
    Extents ext;
    std::vector<std::int64_t> filter;
  };
  const std::vector<C> cases = {
      {1, {5, 1, 1}, {101}},       {1, {1, 1, 1}, {64}},          {1, {7, 1, 1}, {14}},
      {2, {7, 3, 1}, {40, 9}},     {2, {2, 9, 1}, {6, 30}},       {2, {1, 1, 1}, {3, 8}},
      {3, {3, 4, 2}, {9, 2, 11}},  {3, {5, 1, 6}, {12, 5, 3}},
  };
  for (const C& c : cases)
    for (const Op op : {Op::correlate, Op::convolve})
      for (const DType t : {DType::f32, DType::f64}) {
        const Problem p(c.rank, c.ext, 2, random_filter(c.filter), t, op);
        ASSERT_TRUE(p.filter_folded()) << p.describe();
        for (int i = 0; i < c.rank; ++i) EXPECT_LE(p.filter_extents()[i], 2 * c.ext[i] - 1);
        EXPECT_TRUE(has(p.describe(), "folded to")) << p.describe();
        const std::int64_t n = p.elements();
        std::vector<double> ref(n), scale(n);
        const auto run = [&](auto zero) {
          using T = decltype(zero);
          const std::vector<T> in = random_vector<T>(n);
          cpu::reference_f64(p, in.data(), ref.data());
          cpu::reference_f64(p, in.data(), scale.data(), true);
          for (const Strategy* s : strategies()) {
            if (s->backend() == Backend::cuda && !cuda_available()) continue;
            if (!s->can_implement(p)) continue;
            std::vector<T> out(n);
            poison(out);
            Options opt;
            opt.op = op;
            opt.strategy = s->name();
            apply(ConstArrayView(in.data(), t, c.rank, c.ext, 2),
                  ArrayView{out.data(), t, c.rank, c.ext, 2}, p.filter(), opt);
            for (std::int64_t i = 0; i < n; ++i)
              ASSERT_NEAR(out[i], ref[i], tolerance<T>(p.filter().taps(), scale[i]))
                  << s->name() << " " << p.describe() << " at " << i;
          }
        };
        if (t == DType::f32)
          run(float{});
        else
          run(double{});
      }
}

TEST(Limits, MemoryIsEstimatedAndRefusedWithTheFigures) {
  const Problem p(2, {300, 200, 1}, 1, make_named_filter("box:5", 2), DType::f32);
  // The reference keeps a float64 copy of the result; the cpu strategy its threads' rows.
  const auto ref = memory_needed(p, RunInfo{"reference", Backend::reference, ""});
  ASSERT_FALSE(ref.empty());
  EXPECT_TRUE(has(ref[0].what, "float64 results"));
  EXPECT_EQ(ref[0].bytes, 300.0 * 200 * 8);
  const auto cpu = memory_needed(p, RunInfo{"cpu", Backend::cpu, ""}, MemorySpace::host, true);
  double rows = 0;
  for (const MemoryUse& u : cpu) {
    EXPECT_EQ(u.space, MemorySpace::host);
    if (has(u.what, "row buffers")) rows = u.bytes;
  }
  EXPECT_EQ(cpu[0].what, "the input array");
  EXPECT_EQ(cpu[0].bytes, 300.0 * 200 * 4);
  EXPECT_GT(rows, 0);

  const MemoryAvailable m = host_memory_available();
  EXPECT_GT(m.bytes, 0);
  EXPECT_FALSE(m.limited_by.empty());
  const std::string e = error_of([] {
    require_memory({{"the moon", 1e30, MemorySpace::host}, {"a crumb", 8, MemorySpace::host}});
  });
  EXPECT_TRUE(has(e, "not enough host memory")) << e;
  EXPECT_TRUE(has(e, "the moon")) << e;
  EXPECT_TRUE(has(e, "is available (")) << e;
  EXPECT_NO_THROW(require_memory({{"a crumb", 8, MemorySpace::host}}));
  if (!cuda_available()) {
    EXPECT_TRUE(has(error_of([] { require_memory({{"x", 8, MemorySpace::device}}); }),
                    "not enough GPU memory"));
  }
}

TEST(Progress, CpuStrategiesReportMonotoneFractionsEndingAtOne) {
  const Problem p(2, {257, 301, 1}, 1, make_named_filter("box:9", 2), DType::f32);
  const std::vector<float> in = random_vector<float>(p.elements());
  std::vector<float> out(in.size());
  for (const char* name : {"reference", "cpu"}) {
    std::vector<double> seen;
    Options opt;
    opt.strategy = name;
    opt.progress = [&](double f) { seen.push_back(f); };
    apply(view(in.data(), {257, 301}), view(out.data(), {257, 301}), p.filter(), opt);
    // The reference reports every row; the cpu strategy whenever the calling thread finishes a
    // unit of work (on a loaded machine the other threads may take them all), and at the end.
    ASSERT_GE(seen.size(), name == std::string("reference") ? 257u : 1u) << name;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      EXPECT_GE(seen[i], 0.0) << name;
      EXPECT_LE(seen[i], 1.0) << name;
      if (i) EXPECT_GE(seen[i], seen[i - 1]) << name;
    }
    EXPECT_EQ(seen.back(), 1.0) << name;
  }
}

// ------------------------------------------------------------------------------------------------
// The command line
// ------------------------------------------------------------------------------------------------
class Hostile : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const std::vector<float> img = random_vector<float>(64 * 64);
    io::write_npy(path("img.npy"), DType::f32, {64, 64}, img.data());
  }

  // Fails with exit code 1, `phrase` on stderr, nothing on stdout, and no output file.
  void expect_error(const std::string& args, const std::string& phrase,
                    const std::string& shell_prefix = "") {
    const SplitResult r = run_cli_split(args, shell_prefix);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_TRUE(has(r.err, phrase)) << "`" << args << "`: stderr lacks '" << phrase << "':\n"
                                    << r.err;
    EXPECT_EQ(r.out, "") << "`" << args << "` printed on stdout before its error";
    EXPECT_FALSE(fs::exists(path("out.npy"))) << args;
  }
};

TEST_F(Hostile, EveryErrorExitsWithOneAndPrintsNothingOnStdout) {
  const std::string img = path("img.npy"), out = path("out.npy");
  expect_error("apply " + img + " " + out + " --filter box:3 --axis abc", "--axis");
  expect_error("apply " + img + " --filter box:3", "output");  // the output is missing
  expect_error("apply " + img + " " + out + " --filter box:3 --no-such-flag", "--no-such-flag");
  expect_error("", "subcommand");
  expect_error("frobnicate", "frobnicate");
  expect_error("apply " + img + " " + out + " --filter box:3 --axis 0x1", "--axis");
  expect_error("apply " + img + " " + out + " --filter box:3 --axis 5", "out of range");
  expect_error("generate " + out + " --shape 16x16 --seed 0x10", "--seed");
  expect_error("generate " + out + " --shape 0x10", "--shape");
  expect_error("analyze --filter 9 --tile 4", "smaller than the filter width");
  expect_error("analyze --filter 9 --tile 16,4", "smaller than the filter width");
  expect_error("analyze --filter 0x9", "--filter");
  expect_error("analyze --rank 4", "--rank");
  expect_error("bench --reps 0x3 --backend cpu", "--reps");
  expect_error("bench --size 64x0x64 --backend cpu", "--size");
  expect_error("bench --radii 1,x --backend cpu", "--radii");
  expect_error("apply " + img + " " + out + " --filter gaussian:sigma=2,sigma=3", "twice");
  expect_error("apply " + img + " " + out + " --filter box:0x10", "decimal integer");
  // Help and version succeed, on stdout.
  for (const char* ok : {"--help", "apply --help", "--version"}) {
    const SplitResult r = run_cli_split(ok);
    EXPECT_EQ(r.code, 0) << ok;
    EXPECT_FALSE(r.out.empty()) << ok;
  }
  EXPECT_TRUE(has(run_cli_split("--help").out, "Exit status: 0 on success; 1 on any error"));
}

TEST_F(Hostile, ErrorsAboutAWeightsFileNameTheFile) {
  const std::vector<double> w{0.25, std::nan(""), 0.25};
  io::write_npy(path("w.npy"), DType::f64, {3}, w.data());
  const std::vector<float> wi{1.f, std::numeric_limits<float>::infinity()};
  io::write_npy(path("wi.npy"), DType::f32, {2}, wi.data());
  const std::string img = path("img.npy"), out = path("out.npy");
  expect_error("apply " + img + " " + out + " --axis 1 --filter " + path("w.npy"),
               path("w.npy") + ": filter weights must be finite: weight 1");
  expect_error("apply " + img + " " + out + " --axis 0 --filter " + path("wi.npy"),
               path("wi.npy") + ": filter weights must be finite: weight 1 (C order) is inf");
}

// A NUL (or any control byte) in a header's descr is shown escaped, and the message goes on.
TEST_F(Hostile, OddBytesInAHeaderDoNotCutTheMessage) {
  const std::string dict = std::string("{'descr': '<f4") + '\0' + "zz', 'fortran_order': False, " +
                           "'shape': (2,), }";
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header + std::string(8, '\0');
  { std::ofstream(path("nul.npy"), std::ios::binary) << file; }
  const std::string e = error_of([&] { io::read_npy(path("nul.npy")); });
  EXPECT_TRUE(has(e, "'<f4\\x00zz'")) << e;
  EXPECT_TRUE(has(e, "not supported")) << e;
  const std::string out = path("out.npy");
  expect_error("apply " + path("nul.npy") + " " + out + " --filter box:3", "\\x00zz'");
}

TEST_F(Hostile, HugeRequestsAreRefusedWithTheFigures) {
  const std::string img = path("img.npy"), out = path("out.npy");
  expect_error("apply " + img + " " + out + " --filter box:20000", "512 MiB");
  expect_error("apply " + img + " " + out + " --filter box:1000000", "1000000x1000000");
  expect_error("apply " + img + " " + out + " --filter gaussian:sigma=20000", "160001x160001");
  expect_error("generate " + out + " --shape 1000000x1000000",
               "not enough host memory: this run needs 4000.00 GB (the 1000000x1000000 f32 array");
  // An input whose data would not fit is refused from its header, before its data is read: a
  // sparse 20000x20000 float32 file (1.6 GB on paper) under a 1.5 GB address-space limit.
  {
    const std::vector<float> one(1, 1.f);
    io::write_npy(path("big.npy"), DType::f32, {1}, one.data());
    std::string bytes;
    {
      std::ifstream f(path("big.npy"), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    const std::size_t at = bytes.find("(1,)");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 4, "(20000, 20000)");
    bytes.erase(bytes.find('\n') - 10, 10);  // the header keeps its length
    bytes.resize(bytes.size() - 4);           // header only
    {
      std::ofstream f(path("big.npy"), std::ios::binary | std::ios::trunc);
      f << bytes;
    }
    ASSERT_EQ(::truncate(path("big.npy").c_str(), off_t(bytes.size()) + off_t(20000) * 20000 * 4),
              0);
    // (The total's last digit grows with the strategy's per-thread buffers: 3.21 GB on 16 cores.)
    expect_error("apply " + path("big.npy") + " " + out + " --filter box:3 --backend cpu",
                 "not enough host memory: this run needs 3.2", "ulimit -v 1500000;");
    expect_error("apply " + path("big.npy") + " " + out + " --filter box:3 --backend cpu",
                 " GB (the input array 1.60 GB, the output array 1.60 GB", "ulimit -v 1500000;");
  }
}

TEST_F(Hostile, AFilterMuchLargerThanTheArrayRunsInBoundedTime) {
  const std::string img = path("img.npy"), out = path("out.npy");
  const SplitResult r = run_cli_split("apply " + img + " " + out + " --filter box:3000 -v --backend cpu");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "folded to 127x127")) << r.out;
  // Against the definition: the 3000x3000 box over the 64x64 array.
  const io::NpyArray o = io::read_npy(out), in = io::read_npy(img);
  const Problem p(2, {64, 64, 1}, 1, make_named_filter("box:3000", 2), DType::f32);
  std::vector<double> ref(64 * 64), scale(64 * 64);
  cpu::reference_f64(p, in.data(), ref.data());
  cpu::reference_f64(p, in.data(), scale.data(), true);
  for (int i = 0; i < 64 * 64; ++i)
    ASSERT_NEAR(o.as<float>()[i], ref[i], tolerance<float>(127 * 127, scale[i])) << i;
}

}  // namespace
}  // namespace halo::test
