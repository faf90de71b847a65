// End-to-end tests of the `halo` binary: results on disk, and for every kind of bad input a clear
// message naming the problem, a non-zero exit and no output file written.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/npy.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

class Cli : public TempDirTest {
 protected:
  // Expects failure with `phrase` in the message and no file at `out` afterwards.
  void expect_failure(const std::string& args, const std::string& phrase, const std::string& out) {
    const Result r = run_cli(args);
    EXPECT_NE(r.code, 0) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(phrase), std::string::npos)
        << "message for `" << args << "` lacks '" << phrase << "':\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << out << " was written although the command failed";
    // No temporary files left behind either.
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }
};

TEST_F(Cli, HelpShowsExamples) {
  const Result r = run_cli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("Examples:"), std::string::npos);
  EXPECT_NE(r.output.find("gaussian:sigma=S"), std::string::npos);
}

TEST_F(Cli, InfoListsStrategiesAndGpus) {
  const Result r = run_cli("info");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("reference"), std::string::npos);
  EXPECT_NE(r.output.find("GPU"), std::string::npos);
}

TEST_F(Cli, ApplyWritesTheFilteredArray) {
  const std::vector<std::int64_t> shape{37, 53};
  const std::vector<float> in = random_vector<float>(37 * 53);
  io::write_npy(path("in.npy"), DType::f32, shape, in.data());
  for (const std::string op : {"correlate", "convolve"}) {
    // (--direct-sums: the `cpu` strategy sums directly anyway; it must be accepted.)
    const Result r = run_cli("apply " + path("in.npy") + " " + path("out.npy") +
                             " --filter sobel-x --backend cpu -v --op " + op +
                             (op == std::string("convolve") ? " --direct-sums" : ""));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("strategy cpu"), std::string::npos) << r.output;
    const io::NpyArray out = io::read_npy(path("out.npy"));
    ASSERT_EQ(out.shape(), shape);
    ASSERT_EQ(out.dtype(), DType::f32);
    const Problem p(2, {37, 53, 1}, 1, make_named_filter("sobel-x", 2), DType::f32, parse_op(op));
    std::vector<double> ref(in.size()), scale(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    cpu::reference_f64(p, in.data(), scale.data(), true);
    for (std::size_t i = 0; i < in.size(); ++i)
      ASSERT_NEAR(out.as<float>()[i], ref[i], tolerance<float>(9, scale[i])) << op << " " << i;
  }
}

// --tune (halo::FastTuning for the `fast` strategy): accepted on any backend, parsed strictly,
// and an error leaves no output.
TEST_F(Cli, ApplyTakesATuningAndRefusesABadOne) {
  const std::vector<float> in = random_vector<float>(20 * 24);
  io::write_npy(path("in.npy"), DType::f32, {20, 24}, in.data());
  const Result ok = run_cli("apply " + path("in.npy") + " " + path("out.npy") +
                            " --filter box:3 --backend cpu --tune winograd=0,slots=2");
  EXPECT_EQ(ok.code, 0) << ok.output;
  for (const auto& [tune, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"tx=5", "--tune tx=5: expected 4 or 8"},
           {"feed=fast", "--tune feed=fast: expected direct, prefetch, ring, tma or block"},
           {"nope=1", "--tune: unknown key 'nope'"},
           {"depth=2,depth=3", "--tune: depth given twice"}}) {
    const Result r = run_cli("apply " + path("in.npy") + " " + path("bad.npy") +
                             " --filter box:3 --backend cpu --tune " + tune);
    EXPECT_EQ(r.code, 1) << tune;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(path("bad.npy"))) << tune;
  }
}

TEST_F(Cli, AxisAndBatchFollowTheirDefinitions) {
  const std::vector<double> in = random_vector<double>(4 * 10 * 12);
  io::write_npy(path("in.npy"), DType::f64, {4, 10, 12}, in.data());
  // A 1-D box along axis 1 of a 3-D array equals the 3-D filter of extents 1x5x1.
  ASSERT_EQ(run_cli("apply " + path("in.npy") + " " + path("a.npy") + " --filter box:5 --axis 1")
                .code, 0);
  // --batch: the 3-D file is 4 images of 10x12, each filtered by a 2-D 3x3 box.
  ASSERT_EQ(run_cli("apply " + path("in.npy") + " " + path("b.npy") + " --filter box:3 --batch")
                .code, 0);
  const io::NpyArray a = io::read_npy(path("a.npy")), b = io::read_npy(path("b.npy"));
  const Problem pa(3, {4, 10, 12}, 1, Filter(std::vector<double>(5, 0.2), {1, 5, 1}),
                   DType::f64);
  const Problem pb(2, {10, 12, 1}, 4, make_named_filter("box:3", 2), DType::f64);
  std::vector<double> ra(in.size()), rb(in.size());
  cpu::reference_f64(pa, in.data(), ra.data());
  cpu::reference_f64(pb, in.data(), rb.data());
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_NEAR(a.as<double>()[i], ra[i], 1e-13);
    ASSERT_NEAR(b.as<double>()[i], rb[i], 1e-13);
  }
}

TEST_F(Cli, FilterFromAFile) {
  const std::vector<float> in = random_vector<float>(200);
  io::write_npy(path("sig.npy"), DType::f32, {200}, in.data());
  const std::vector<double> w{0.25, 0.5, 0.25, 1.0};
  io::write_npy(path("w.npy"), DType::f64, {4}, w.data());
  const Result r = run_cli("apply " + path("sig.npy") + " " + path("o.npy") + " --filter " +
                           path("w.npy"));
  ASSERT_EQ(r.code, 0) << r.output;
  const Problem p(1, {200, 1, 1}, 1, Filter(w, {4}), DType::f32);
  std::vector<double> ref(200);
  cpu::reference_f64(p, in.data(), ref.data());
  const io::NpyArray o = io::read_npy(path("o.npy"));
  for (int i = 0; i < 200; ++i) EXPECT_NEAR(o.as<float>()[i], ref[i], 1e-5);
}

TEST_F(Cli, BadInputsFailClearlyAndWriteNothing) {
  const std::vector<float> img = random_vector<float>(64);
  io::write_npy(path("img.npy"), DType::f32, {8, 8}, img.data());
  io::write_npy(path("w1.npy"), DType::f32, {3}, img.data());
  io::write_npy(path("vol4.npy"), DType::f32, {2, 2, 2, 8}, img.data());
  { std::ofstream(path("junk.npy")) << "this is not an npy file"; }
  const std::string img_in = path("img.npy"), out = path("out.npy");

  expect_failure("apply " + path("missing.npy") + " " + out + " --filter box:3", "missing.npy",
                 out);
  expect_failure("apply " + path("junk.npy") + " " + out + " --filter box:3", "junk.npy", out);
  expect_failure("apply " + img_in + " " + out + " --filter blur:3", "unknown filter 'blur:3'",
                 out);
  expect_failure("apply " + img_in + " " + out + " --filter box:0", "box", out);
  expect_failure("apply " + img_in + " " + out + " --filter " + path("w1.npy"), "--axis", out);
  expect_failure("apply " + img_in + " " + out + " --filter " + path("nofilter.npy"),
                 "nofilter.npy", out);
  expect_failure("apply " + img_in + " " + out + " --filter box:3 --axis 2",
                 "--axis 2 is out of range", out);
  expect_failure("apply " + img_in + " " + out + " --filter box:3 --op blur",
                 "unknown operation 'blur'", out);
  expect_failure("apply " + img_in + " " + out + " --filter box:3 --backend gpu",
                 "unknown backend 'gpu'", out);
  expect_failure("apply " + img_in + " " + out + " --filter box:3 --strategy nope",
                 "unknown strategy 'nope'", out);
  expect_failure("apply " + path("vol4.npy") + " " + out + " --filter box:3", "--batch", out);
  expect_failure("apply " + img_in + " " + out, "--filter", out);
  expect_failure("apply " + img_in + " " + path("no/such/dir/out.npy") + " --filter box:3",
                 "no/such/dir/out.npy", path("no/such/dir/out.npy"));
  std::string why;
  if (!cuda_available(&why))
    expect_failure("apply " + img_in + " " + out + " --filter box:3 --backend cuda",
                   "no CUDA device", out);
}

TEST_F(Cli, AFailedRunLeavesAnExistingOutputAlone) {
  const std::vector<float> img = random_vector<float>(64);
  io::write_npy(path("img.npy"), DType::f32, {8, 8}, img.data());
  { std::ofstream(path("keep.npy")) << "previous contents"; }
  const Result r = run_cli("apply " + path("img.npy") + " " + path("keep.npy") +
                           " --filter box:3 --strategy nope");
  EXPECT_NE(r.code, 0);
  std::ifstream f(path("keep.npy"));
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "previous contents");
}

TEST_F(Cli, GenerateWritesFreshNoise) {
  ASSERT_EQ(run_cli("generate " + path("g.npy") + " --shape 16x24 --dtype f64").code, 0);
  const io::NpyArray g = io::read_npy(path("g.npy"));
  EXPECT_EQ(g.shape(), (std::vector<std::int64_t>{16, 24}));
  EXPECT_EQ(g.dtype(), DType::f64);
  double lo = 1, hi = 0;
  for (std::int64_t i = 0; i < g.size(); ++i) {
    lo = std::min(lo, g.as<double>()[i]);
    hi = std::max(hi, g.as<double>()[i]);
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, hi);
  expect_failure("generate " + path("h.npy") + " --shape 16xq", "--shape", path("h.npy"));
}

}  // namespace
}  // namespace halo::test
