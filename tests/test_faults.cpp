// Faults of the command line and the library under hostile conditions: address-space limits
// (every failure is halo's own message and exit status 1, never an abort), memory estimates that
// cover the filter's copies, signals while an output is written, `auto`'s CPU choice for long
// filters along one axis, and messages about paths and standard input and output.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "support.hpp"
#include "halo/strategy.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

bool has(const std::string& text, const std::string& phrase) {
  return text.find(phrase) != std::string::npos;
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The CLI under `ulimit -v kb`, with `env` (VAR=value ...) set.
SplitResult limited(long kb, const std::string& args, const std::string& env = "") {
  return run_cli_split(args, "ulimit -v " + std::to_string(kb) + "; " + env);
}

class Faults : public TempDirTest {
 protected:
  // No file of the directory is a temporary file.
  void expect_no_temporary_files() {
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_FALSE(has(e.path().filename().string(), ".tmp.")) << e.path();
  }
};

// ------------------------------------------------------------------------------------------------
// Address-space limits: the FFT's plans and buffers and the OpenMP threads' stacks are counted
// before the run starts; what still fails is halo's message with exit status 1 (FFTW's own
// failure was an assertion and an abort, 134; libgomp's "Thread creation failed").
// ------------------------------------------------------------------------------------------------

// The lowest limit (KiB, within 256) for which `pred` holds, from [lo, hi] where it holds at hi.
template <class Pred>
long lowest(long lo, long hi, Pred pred) {
  while (hi - lo > 256) {
    const long mid = (lo + hi) / 2;
    (pred(mid) ? hi : lo) = mid;
  }
  return hi;
}

// Every outcome under the limits just below the lowest limit that runs `args`: success, or
// halo's message and exit status 1. (Not below the least limit under which the process starts
// and reports an error at all: there the loader and the C++ runtime fail first.)
void sweep_limits(const std::string& args, const std::string& env = "") {
  ASSERT_EQ(limited(1024 * 1024, args, env).code, 0) << args;
  const long runs =
      lowest(8 * 1024, 1024 * 1024, [&](long kb) { return limited(kb, args, env).code == 0; });
  const long starts = lowest(1024, runs, [&](long kb) {
    return limited(kb, "apply no-such-file.npy out.npy --filter box:3", env).code == 1;
  });
  for (long kb = runs; kb > std::max(runs - 8 * 1024, starts + 1024); kb -= 256) {
    const SplitResult r = limited(kb, args, env);
    if (r.code == 0) continue;
    EXPECT_EQ(r.code, 1) << "ulimit -v " << kb << ": " << r.err;
    EXPECT_EQ(r.err.rfind("halo: error: ", 0), 0u) << "ulimit -v " << kb << ": " << r.err;
    EXPECT_TRUE(has(r.err, "memory") || has(r.err, "address space") ||
                has(r.err, "cannot allocate"))
        << "ulimit -v " << kb << ": " << r.err;
  }
}

TEST_F(Faults, TheFftUnderAnAddressLimitFailsWithHalosMessage) {
  const std::vector<float> img = random_vector<float>(512 * 512);
  io::write_npy(path("img.npy"), DType::f32, {512, 512}, img.data());
  const std::vector<float> w = random_vector<float>(31 * 31);
  io::write_npy(path("w31.npy"), DType::f32, {31, 31}, w.data());
  const std::string image = "apply " + path("img.npy") + " " + path("out.npy") + " --filter " +
                            path("w31.npy") + " --strategy cpu_fft";
  sweep_limits(image);
  // One thread: FFTW's own allocations are the first to fail (FFTW asserted and aborted).
  sweep_limits(image, "OMP_NUM_THREADS=1");
  // 1-D float64: long transforms, whose plans take megabytes.
  const std::vector<double> sig = random_vector<double>(1 << 18);
  io::write_npy(path("sig.npy"), DType::f64, {1 << 18}, sig.data());
  const std::vector<double> taps = random_vector<double>(20001);
  io::write_npy(path("w1d.npy"), DType::f64, {20001}, taps.data());
  sweep_limits("apply " + path("sig.npy") + " " + path("out.npy") + " --filter " + path("w1d.npy") +
               " --strategy cpu_fft");
}

// ------------------------------------------------------------------------------------------------
// The estimate covers the filter's copies, and a weights file is sized from its header.
// ------------------------------------------------------------------------------------------------

// Bytes of "123.4 MB" / "1.23 GB" / "640 B" at `at` in `text`.
double size_at(const std::string& text, std::size_t at) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str() + at, &end);
  const std::string unit(end, end + 3);
  return v * (unit == " GB" ? 1e9 : unit == " MB" ? 1e6 : unit == " kB" ? 1e3 : 1);
}

// Under a limit that refuses `args`, reads the run's estimate and what was available, then runs
// it with the estimate (and 2%) available: it must run.
// The limit is 64 MiB above the least one under which `small` (a run of the same backend on a
// tiny array) succeeds: the loader maps cuFFT and the CUDA runtime first in a CUDA build (about
// 400 MB of address space), and the CPU backend's OpenMP threads need their stacks (8 MiB each:
// 126 MB on 16 cores).
void expect_the_estimate_suffices(const std::string& small, const std::string& args) {
  const long starts =
      lowest(1024, 4 * 1024 * 1024, [&](long kb) { return limited(kb, small).code == 0; });
  const long kb = starts + 64 * 1024;
  const SplitResult refused = limited(kb, args);
  ASSERT_EQ(refused.code, 1) << args << "\n" << refused.err;
  const std::size_t needs = refused.err.find("this run needs ");
  const std::size_t avail = refused.err.rfind(") and ");
  ASSERT_NE(needs, std::string::npos) << refused.err;
  ASSERT_NE(avail, std::string::npos) << refused.err;
  const double estimate = size_at(refused.err, needs + 15);
  const double available = size_at(refused.err, avail + 6);
  ASSERT_GT(estimate, available) << refused.err;
  const long enough = kb + long((estimate * 1.02 - available) / 1024) + 256;
  const SplitResult r = limited(enough, args);
  EXPECT_EQ(r.code, 0) << args << " under ulimit -v " << enough << " (estimate " << estimate / 1e6
                       << " MB):\n"
                       << r.err;
}

TEST_F(Faults, TheEstimateCoversTheFiltersCopies) {
  const std::vector<float> a50 = random_vector<float>(50), a10 = random_vector<float>(100);
  io::write_npy(path("a50.npy"), DType::f32, {50}, a50.data());
  io::write_npy(path("a10.npy"), DType::f32, {10, 10}, a10.data());
  // A named filter far larger than the array (folded to 99 taps), and a weights file.
  const std::string small =
      "apply " + path("a10.npy") + " " + path("small.npy") + " --filter box:3 --backend cpu";
  expect_the_estimate_suffices(small, "apply " + path("a50.npy") + " " + path("out.npy") +
                               " --filter box:6000000 --backend cpu");
  const std::vector<float> w = random_vector<float>(2500 * 2500);
  io::write_npy(path("w.npy"), DType::f32, {2500, 2500}, w.data());
  expect_the_estimate_suffices(small, "apply " + path("a10.npy") + " " + path("out.npy") +
                                          " --filter " + path("w.npy") + " --backend cpu");
}

// The stacks the OpenMP threads will have come from OMP_STACKSIZE through the CLI (the library
// reads no environment): one thread to start, 1 GiB asked, counted as 1 GiB and a guard page.
TEST_F(Faults, TheCliCountsTheStacksOmpStacksizeAsksFor) {
  const std::vector<float> a10 = random_vector<float>(100);
  io::write_npy(path("a10.npy"), DType::f32, {10, 10}, a10.data());
  const std::string small =
      "apply " + path("a10.npy") + " " + path("small.npy") + " --filter box:3 --backend cpu";
  const long starts = lowest(1024, 4 * 1024 * 1024, [&](long kb) {
    return limited(kb, small, "OMP_NUM_THREADS=2").code == 0;
  });
  const SplitResult r = limited(starts + 64 * 1024, small, "OMP_NUM_THREADS=2 OMP_STACKSIZE=1G");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(has(r.err, "1 OpenMP thread: their stacks need 1.07 GB")) << r.err;
  // Malformed: libgomp's default stacks, so the run fits as before.
  EXPECT_EQ(limited(starts + 64 * 1024, small, "OMP_NUM_THREADS=2 OMP_STACKSIZE=lots").code, 0);
}

TEST_F(Faults, AWeightsFileIsSizedFromItsHeaderBeforeItsDataIsRead) {
  // A sparse 20000x20000 float32 weights file: 1.6 GB of data, 3.2 GB in float64.
  const std::vector<float> one(1, 1.f);
  io::write_npy(path("w.npy"), DType::f32, {1}, one.data());
  std::string bytes = file_bytes(path("w.npy"));
  const std::size_t at = bytes.find("(1,)");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "(20000, 20000)");
  bytes.erase(bytes.find('\n') - 10, 10);  // the header keeps its length
  bytes.resize(bytes.size() - 4);          // header only
  { std::ofstream(path("w.npy"), std::ios::binary | std::ios::trunc) << bytes; }
  ASSERT_EQ(::truncate(path("w.npy").c_str(), off_t(bytes.size()) + off_t(20000) * 20000 * 4), 0);
  const std::vector<float> img = random_vector<float>(64 * 64);
  io::write_npy(path("img.npy"), DType::f32, {64, 64}, img.data());
  const SplitResult r = limited(
      1500000, "apply " + path("img.npy") + " " + path("out.npy") + " --filter " + path("w.npy"));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err, "halo: error: not enough host memory: this run needs")) << r.err;
  EXPECT_TRUE(has(r.err, "the filter weights (float64 copies) ")) << r.err;
  EXPECT_FALSE(fs::exists(path("out.npy")));
}

// ------------------------------------------------------------------------------------------------
// Signals while an output is written: the temporary file goes, the old file stays, and the
// process ends as the signal ends it.
// ------------------------------------------------------------------------------------------------
int g_signal_to_raise = 0;
void raise_chosen_signal(int) { ::raise(g_signal_to_raise); }

TEST_F(Faults, ASignalDuringAWriteRemovesTheTemporaryFile) {
  const std::string out = path("out.npy");
  { std::ofstream(out, std::ios::binary) << "the old contents"; }
  const std::vector<float> data = random_vector<float>(1 << 18);  // 1 MiB
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The write passes the file-size limit at 64 KiB: SIGXFSZ, mid-write, raises `sig`.
      for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
      g_signal_to_raise = sig;
      ::signal(SIGXFSZ, raise_chosen_signal);
      const struct rlimit fsize { 64 * 1024, 64 * 1024 };
      ::setrlimit(RLIMIT_FSIZE, &fsize);
      try {
        io::write_npy(out, DType::f32, {1 << 18}, data.data());
      } catch (...) {
        ::_exit(3);
      }
      ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
        << strsignal(sig) << ": status " << status;
    expect_no_temporary_files();
    EXPECT_EQ(file_bytes(out), "the old contents") << strsignal(sig);
  }
  // Outside a write the signals' actions are the program's again.
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  EXPECT_TRUE(now.sa_handler == SIG_DFL);
}

// ------------------------------------------------------------------------------------------------
// auto on the CPU: a long filter along one axis of a 2-D or 3-D array goes to the transforms
// where the cost model says, as on a 1-D array (it took the direct sum's O(n K)).
// ------------------------------------------------------------------------------------------------
TEST(FaultsChoice, LongFiltersAlongOneAxisFollowTheCostModel) {
  Options cpu;
  cpu.backend = Backend::cpu;
  const auto chosen = [&](int rank, Extents n, std::int64_t k, int axis) {
    const Filter f = random_filter({k}).along_axis(rank, axis);
    const Problem p(rank, n, 1, f, DType::f32);
    return choose(p, cpu).strategy;
  };
  EXPECT_EQ(chosen(1, {262144, 1, 1}, 524287, 0), "cpu_fft");
  EXPECT_EQ(chosen(2, {8, 262144, 1}, 524287, 1), "cpu_fft");
  EXPECT_EQ(chosen(2, {512, 16384, 1}, 16385, 1), "cpu_fft");
  EXPECT_EQ(chosen(2, {16384, 512, 1}, 16385, 0), "cpu_fft");
  EXPECT_EQ(chosen(3,
                   {
                       4096,
                       16,
                       16,
                   },
                   4097, 0),
            "cpu_fft");
  EXPECT_EQ(chosen(3, {16, 16, 4096}, 4097, 2), "cpu_fft");
  // Short ones stay direct sums; a box along one axis stays running sums.
  EXPECT_EQ(chosen(2, {512, 16384, 1}, 9, 1), "cpu");
  const Problem box(2, {512, 16384, 1}, 1, make_named_filter("box:4097", 1).along_axis(2, 1),
                    DType::f32);
  EXPECT_EQ(choose(box, cpu).strategy, "cpu_separable");
}

// ------------------------------------------------------------------------------------------------
// Messages
// ------------------------------------------------------------------------------------------------
TEST_F(Faults, ABrokenPipeNamesStandardOutput) {
  const std::string err = path("err.txt");
  const std::string cmd = std::string(HALO_CLI_PATH) + " generate - --shape 512x512 2>" + err +
                          " | head -c 1 >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()) == -1, false);
  const std::string e = file_bytes(err);
  EXPECT_TRUE(has(e, "halo: error: standard output: cannot write")) << e;
  EXPECT_FALSE(has(e, "(empty path)")) << e;
}

TEST_F(Faults, PathsInMessagesAreOneLineWithoutTerminalCodes) {
  const std::string odd = path("a\nb\x1b[31mc.npy");
  const SplitResult r =
      run_cli_split("apply '" + odd + "' '" + path("out.npy") + "' --filter box:3");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err, "a\\nb\\x1b[31mc.npy: cannot open for reading")) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  EXPECT_FALSE(has(r.err, "\x1b")) << r.err;
  // The same for an output path and for a weights file's.
  const std::vector<float> img = random_vector<float>(8 * 8);
  io::write_npy(path("img.npy"), DType::f32, {8, 8}, img.data());
  const SplitResult o = run_cli_split("apply " + path("img.npy") + " '" + path("no\ndir") +
                                      "/out.npy' --filter box:3");
  EXPECT_EQ(o.code, 1);
  EXPECT_TRUE(has(o.err, "no\\ndir")) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
  const SplitResult w = run_cli_split("apply " + path("img.npy") + " " + path("out.npy") +
                                      " --filter '" + path("w\x1b]0;x\x07.npy") + "'");
  EXPECT_EQ(w.code, 1);
  EXPECT_TRUE(has(w.err, "w\\x1b]0;x\\x07.npy")) << w.err;
  EXPECT_FALSE(has(w.err, "\x1b")) << w.err;
}

TEST_F(Faults, StandardInputIsAnInput) {
  const std::vector<float> img = random_vector<float>(20 * 30);
  io::write_npy(path("img.npy"), DType::f32, {20, 30}, img.data());
  const SplitResult from_file =
      run_cli_split("apply " + path("img.npy") + " " + path("a.npy") + " --filter box:3");
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  const SplitResult piped =
      run_cli_split("apply - " + path("b.npy") + " --filter box:3 < " + path("img.npy"));
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(file_bytes(path("a.npy")), file_bytes(path("b.npy")));
  const SplitResult empty =
      run_cli_split("apply - " + path("c.npy") + " --filter box:3 < /dev/null");
  EXPECT_EQ(empty.code, 1);
  EXPECT_TRUE(has(empty.err, "standard input: empty file")) << empty.err;
}

TEST_F(Faults, ANamedFilterThatIsAlsoAFileIsAmbiguous) {
  const std::vector<float> img = random_vector<float>(8 * 8);
  io::write_npy(path("img.npy"), DType::f32, {8, 8}, img.data());
  // box:3's own weights (float64 1/9), so the three runs below are one filter on any backend.
  const std::vector<double> w(9, 1.0 / 9);
  io::write_npy(path("laplacian"), DType::f64, {3, 3}, w.data());
  io::write_npy(path("weights"), DType::f64, {3, 3}, w.data());
  const std::string in_dir = "cd '" + dir_.string() + "' &&";
  const SplitResult both = run_cli_split("apply img.npy out.npy --filter laplacian", in_dir);
  EXPECT_EQ(both.code, 1);
  EXPECT_TRUE(has(both.err, "'laplacian' is ambiguous")) << both.err;
  EXPECT_TRUE(has(both.err, "./laplacian")) << both.err;
  EXPECT_FALSE(fs::exists(path("out.npy")));
  // ./laplacian is the file (a box here); a bare name that only a file has is that file.
  EXPECT_EQ(run_cli_split("apply img.npy f.npy --filter ./laplacian", in_dir).code, 0);
  EXPECT_EQ(run_cli_split("apply img.npy g.npy --filter weights", in_dir).code, 0);
  EXPECT_EQ(run_cli_split("apply img.npy b.npy --filter box:3", in_dir).code, 0);
  EXPECT_EQ(file_bytes(path("f.npy")), file_bytes(path("b.npy")));
  EXPECT_EQ(file_bytes(path("g.npy")), file_bytes(path("b.npy")));
}

TEST_F(Faults, OutputNamesUpToTheLongestFileNameAreWritten) {
  const std::vector<float> img = random_vector<float>(8 * 8);
  io::write_npy(path("img.npy"), DType::f32, {8, 8}, img.data());
  for (const std::size_t len : {251u, 252u, 255u}) {
    const std::string name = std::string(len - 4, 'o') + ".npy";
    const SplitResult r =
        run_cli_split("apply " + path("img.npy") + " " + path(name) + " --filter box:3");
    EXPECT_EQ(r.code, 0) << len << ": " << r.err;
    EXPECT_TRUE(fs::exists(path(name))) << len;
    expect_no_temporary_files();
  }
}

}  // namespace
}  // namespace halo::test
