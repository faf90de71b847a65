// Where outputs go: regular files and new paths are replaced atomically (keeping an existing
// file's permission bits), symlinks are followed, devices and FIFOs are written in place and never
// replaced, `-` is standard output, and a read-only file, a directory, a socket or a missing
// directory is an error that names the problem and leaves everything as it was. Library level
// (write_npy, check_output_path) and through the `halo` binary (apply, bench).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "io/npy.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

// The whole content of a file ("" if it cannot be read).
std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// lstat's st_mode of path, 0 if it does not exist.
mode_t lmode(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

// The message of the halo::Error that f throws, or "" (a test failure) if it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no halo::Error thrown";
  return "";
}

// The read end of a FIFO, drained by a thread until the writer closes it. The FIFO is opened
// non-blocking here, so a writer that opens it never waits and a writer that never opens it (one
// that replaces the FIFO instead) cannot hang the test: finish() then ends the thread.
class FifoReader {
 public:
  explicit FifoReader(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_NONBLOCK)) {
    EXPECT_GE(fd_, 0) << path << ": " << std::strerror(errno);
    thread_ = std::thread([this] { drain(); });
  }
  ~FifoReader() {
    if (thread_.joinable()) finish();
  }
  // Every byte written, once the writer has closed (or never came).
  std::string finish() {
    stop_ = true;
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return bytes_;
  }

 private:
  void drain() {
    if (fd_ < 0) return;
    char buf[65536];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, 50);
      if (r == 0) {
        if (stop_) return;  // the writer is done and never opened the FIFO
        continue;
      }
      if (r < 0) {
        if (errno == EINTR) continue;
        return;
      }
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0)
        bytes_.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EAGAIN)
        return;  // EOF: the writer closed its end
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::string bytes_;
  std::thread thread_;
};

class Output : public TempDirTest {
 protected:
  void TearDown() override {
    expect_no_temporaries();
    TempDirTest::TearDown();
  }

  // Makes nodes of the null (1, 3) and the full (1, 7) devices inside the temporary directory;
  // returns why they cannot be made or opened here, or "".
  std::string make_device_nodes(std::string* null_dev, std::string* full_dev) {
    *null_dev = path("null");
    *full_dev = path("full");
    if (::mknod(null_dev->c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
        ::mknod(full_dev->c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
      return std::string("mknod: ") + std::strerror(errno);
    const int probe = ::open(null_dev->c_str(), O_WRONLY);
    if (probe < 0)
      return std::string("device nodes cannot be opened here: ") + std::strerror(errno);
    ::close(probe);
    return "";
  }

  // A fresh random float32 array; big enough (by default) to overflow a pipe's buffer.
  static io::NpyArray array(std::int64_t h = 300, std::int64_t w = 301) {
    io::NpyArray a(DType::f32, {h, w});
    const std::vector<float> v = random_vector<float>(h * w);
    std::memcpy(a.data(), v.data(), a.nbytes());
    return a;
  }
  static bool same(const io::NpyArray& a, const io::NpyArray& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
  }
  // The array that `bytes` hold as an .npy file (read through a file, as read_npy reads).
  io::NpyArray parse(const std::string& bytes) {
    const std::string p = path("parsed.npy");
    std::ofstream(p, std::ios::binary) << bytes;
    io::NpyArray a = io::read_npy(p);
    fs::remove(p);
    return a;
  }
  // The sorted names in the temporary directory (to show that nothing was created).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  void expect_no_temporaries() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos)
          << "temporary left behind: " << e.path();
  }
  // write_npy and check_output_path both fail on `out` with the same message, containing every
  // phrase; check_output_path creates and changes nothing.
  void expect_refused(const std::string& out, const std::vector<std::string>& phrases) {
    const std::vector<std::string> before = listing();
    const std::string checked = error_of([&] { io::check_output_path(out); });
    EXPECT_EQ(listing(), before) << "check_output_path changed the directory";
    const io::NpyArray a = array(4, 5);
    const std::string written = error_of([&] { io::write_npy(out, a); });
    EXPECT_EQ(checked, written) << "check_output_path and write_npy disagree on " << out;
    for (const std::string& phrase : phrases)
      EXPECT_NE(written.find(phrase), std::string::npos)
          << "message for " << out << " lacks '" << phrase << "': " << written;
    EXPECT_EQ(listing(), before) << "a failed write_npy changed the directory";
  }
};

// ---------------------------------------------------------------------------------------------
// Library level
// ---------------------------------------------------------------------------------------------

TEST_F(Output, NewAndExistingFilesAreReplacedAtomicallyKeepingTheMode) {
  const std::string out = path("out.npy");
  EXPECT_NO_THROW(io::check_output_path(out));
  EXPECT_FALSE(fs::exists(out)) << "check_output_path created the output";
  const io::NpyArray a = array(), b = array(7, 9);
  io::write_npy(out, a);
  EXPECT_TRUE(same(io::read_npy(out), a));

  ASSERT_EQ(::chmod(out.c_str(), 0640), 0);
  struct stat before {};
  ASSERT_EQ(::stat(out.c_str(), &before), 0);
  EXPECT_NO_THROW(io::check_output_path(out));
  io::write_npy(out, b);
  struct stat after {};
  ASSERT_EQ(::stat(out.c_str(), &after), 0);
  EXPECT_TRUE(same(io::read_npy(out), b));
  EXPECT_EQ(after.st_mode & 07777, 0640u) << "the replaced file lost its permission bits";
  EXPECT_NE(after.st_ino, before.st_ino) << "an existing file is replaced (renamed over), not "
                                            "rewritten in place";
  // Root replacing another user's file gives the new file that user's ownership.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(out.c_str(), 4321, 4322), 0);
    io::write_npy(out, a);
    struct stat owned {};
    ASSERT_EQ(::stat(out.c_str(), &owned), 0);
    EXPECT_EQ(owned.st_uid, 4321u);
    EXPECT_EQ(owned.st_gid, 4322u);
    EXPECT_EQ(owned.st_mode & 07777, 0640u);
  }
}

// A write that fails half-way (the file size limit here) leaves the old file as it was.
TEST_F(Output, AFailedWriteLeavesTheDestinationUntouched) {
  const std::string out = path("out.npy");
  const io::NpyArray old = array(3, 4), big = array(512, 512);
  io::write_npy(out, old);
  const std::string before = read_bytes(out);

  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string msg = error_of([&] { io::write_npy(out, big); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_NE(msg.find(out), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(EFBIG)), std::string::npos) << msg;
  EXPECT_EQ(read_bytes(out), before);
}

TEST_F(Output, SymlinkIsFollowedAndStaysALink) {
  const std::string target = path("target.npy"), link = path("link.npy"), link2 = path("l2");
  io::write_npy(target, array(2, 3));
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  fs::create_symlink("target.npy", link);  // relative, resolved against the link's directory
  fs::create_symlink(link, link2);         // a chain of two links
  for (const std::string& out : {link, link2}) {
    EXPECT_NO_THROW(io::check_output_path(out));
    const io::NpyArray a = array();
    io::write_npy(out, a);
    EXPECT_TRUE(S_ISLNK(lmode(out))) << out << " is no longer a symlink";
    EXPECT_TRUE(S_ISLNK(lmode(link)));
    EXPECT_EQ(fs::read_symlink(link), fs::path("target.npy"));
    EXPECT_TRUE(S_ISREG(lmode(target)));
    EXPECT_EQ(lmode(target) & 07777, 0640u);
    EXPECT_TRUE(same(io::read_npy(target), a));
  }
}

TEST_F(Output, DanglingSymlinkTargetIsCreated) {
  fs::create_directories(path("sub"));
  const std::string link = path("link.npy");
  fs::create_symlink("sub/new.npy", link);
  EXPECT_NO_THROW(io::check_output_path(link));
  EXPECT_FALSE(fs::exists(path("sub/new.npy"))) << "check_output_path created the target";
  const io::NpyArray a = array(5, 6);
  io::write_npy(link, a);
  EXPECT_TRUE(S_ISLNK(lmode(link)));
  EXPECT_TRUE(S_ISREG(lmode(path("sub/new.npy"))));
  EXPECT_TRUE(same(io::read_npy(path("sub/new.npy")), a));

  // A dangling link into a missing directory names that directory.
  fs::create_symlink("nowhere/new.npy", path("bad.npy"));
  expect_refused(path("bad.npy"), {path("bad.npy"), path("nowhere"), "does not exist"});
}

TEST_F(Output, FifoIsWrittenNotReplaced) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_NO_THROW(io::check_output_path(fifo));  // (returns at once: it does not open the FIFO)
  const io::NpyArray a = array();
  FifoReader reader(fifo);
  EXPECT_NO_THROW(io::write_npy(fifo, a));
  const std::string bytes = reader.finish();
  EXPECT_TRUE(S_ISFIFO(lmode(fifo))) << "the FIFO was replaced";
  ASSERT_FALSE(bytes.empty()) << "nothing was written to the FIFO";
  EXPECT_TRUE(same(parse(bytes), a));
}

// A reader that goes away mid-write is an error naming the FIFO (EPIPE), not a SIGPIPE that kills
// the process, and no SIGPIPE is left pending.
TEST_F(Output, FifoWhoseReaderLeavesIsAnError) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  // Closes the read end once the writer has filled the pipe and waits in write() (the queued
  // bytes stop growing), or after 10 s in any case (a writer that replaced the FIFO never comes).
  std::thread reader([fd] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int queued = 0, before = -1;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::ioctl(fd, FIONREAD, &queued) == 0 && queued > 0 && queued == before) break;
      before = queued;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::close(fd);
  });
  const io::NpyArray a = array(1024, 1024);  // 4 MiB, far more than the pipe holds
  const std::string msg = error_of([&] { io::write_npy(fifo, a); });
  reader.join();
  EXPECT_NE(msg.find(fifo), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(EPIPE)), std::string::npos) << msg;
  EXPECT_TRUE(S_ISFIFO(lmode(fifo))) << "the FIFO was replaced";
  sigset_t pending;
  sigpending(&pending);
  EXPECT_NE(sigismember(&pending, SIGPIPE), 1) << "a SIGPIPE was left pending";
}

TEST_F(Output, CharacterDeviceIsWrittenNotReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "creating device nodes needs root";
  std::string null_dev, full_dev;
  if (const std::string why = make_device_nodes(&null_dev, &full_dev); !why.empty())
    GTEST_SKIP() << why;

  EXPECT_NO_THROW(io::check_output_path(null_dev));
  EXPECT_NO_THROW(io::write_npy(null_dev, array()));
  EXPECT_TRUE(S_ISCHR(lmode(null_dev))) << "the device node was replaced";

  // The full device refuses every write: an error naming it and the reason, and still a device.
  const io::NpyArray a = array(4, 4);
  const std::string msg = error_of([&] { io::write_npy(full_dev, a); });
  EXPECT_NE(msg.find(full_dev), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(ENOSPC)), std::string::npos) << msg;
  EXPECT_TRUE(S_ISCHR(lmode(full_dev))) << "the device node was replaced";
}

// For root too: a file without any write permission bit is not replaced.
TEST_F(Output, ReadOnlyFileIsRefusedAndUnchanged) {
  const std::string out = path("ro.npy");
  io::write_npy(out, array(3, 3));
  ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
  const std::string before = read_bytes(out);
  expect_refused(out, {out, "read-only", "0444"});
  EXPECT_EQ(read_bytes(out), before);
  EXPECT_EQ(lmode(out) & 07777, 0444u);

  // The same through a symlink: the target is what is refused.
  fs::create_symlink("ro.npy", path("link.npy"));
  expect_refused(path("link.npy"), {path("link.npy"), "read-only"});
  EXPECT_EQ(read_bytes(out), before);
}

TEST_F(Output, MissingDirectoryIsNamed) {
  const std::string out = path("missing/sub/out.npy");
  expect_refused(out, {out, "the directory " + path("missing/sub") + " does not exist"});
  EXPECT_FALSE(fs::exists(path("missing")));
}

TEST_F(Output, DirectorySocketAndEmptyPathAreRefused) {
  fs::create_directories(path("adir"));
  expect_refused(path("adir"), {path("adir"), "is a directory"});
  EXPECT_TRUE(fs::is_directory(path("adir")));
  EXPECT_TRUE(fs::is_empty(path("adir")));

  const std::string sock = path("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  expect_refused(sock, {sock, "socket"});
  EXPECT_TRUE(S_ISSOCK(lmode(sock)));
  ::close(fd);

  expect_refused("", {"empty"});
}

// `-` is standard output: the .npy bytes go to file descriptor 1 (redirected to a file here).
TEST_F(Output, DashWritesToStandardOutput) {
  EXPECT_NO_THROW(io::check_output_path("-"));
  const io::NpyArray a = array();
  const std::string captured = path("stdout.bin");
  std::fflush(stdout);
  const int saved = ::dup(1);
  const int fd = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(saved, 0);
  ASSERT_GE(fd, 0);
  ::dup2(fd, 1);
  ::close(fd);
  std::string msg;
  try {
    io::write_npy("-", a);
  } catch (const Error& e) {
    msg = e.what();
  }
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  EXPECT_EQ(msg, "");
  EXPECT_FALSE(fs::exists(path("-")));
  EXPECT_TRUE(same(parse(read_bytes(captured)), a));
}

// ---------------------------------------------------------------------------------------------
// Through the command line
// ---------------------------------------------------------------------------------------------

TEST_F(Output, CliWritesToAFifo) {
  const io::NpyArray in = array();
  io::write_npy(path("in.npy"), in);
  ASSERT_EQ(
      run_cli("apply " + path("in.npy") + " " + path("file.npy") + " --filter box:3 --backend cpu")
          .code,
      0);
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  FifoReader reader(fifo);
  const Result r =
      run_cli("apply " + path("in.npy") + " " + fifo + " --filter box:3 --backend cpu");
  const std::string bytes = reader.finish();
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(S_ISFIFO(lmode(fifo))) << "the FIFO was replaced";
  EXPECT_EQ(bytes, read_bytes(path("file.npy"))) << "the FIFO did not get the same .npy";
  EXPECT_TRUE(same(parse(bytes), io::read_npy(path("file.npy"))));
}

TEST_F(Output, CliWritesToACharacterDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "creating device nodes needs root";
  std::string null_dev, full_dev;
  if (const std::string why = make_device_nodes(&null_dev, &full_dev); !why.empty())
    GTEST_SKIP() << why;
  io::write_npy(path("in.npy"), array(16, 16));

  const Result ok =
      run_cli("apply " + path("in.npy") + " " + null_dev + " --filter box:3 --backend cpu");
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_TRUE(S_ISCHR(lmode(null_dev))) << "the device node was replaced";

  // The fault as found with /dev/full: exit 1 with the reason, and the device still a device.
  const Result full =
      run_cli("apply " + path("in.npy") + " " + full_dev + " --filter box:3 --backend cpu");
  EXPECT_EQ(full.code, 1) << full.output;
  EXPECT_NE(full.output.find(full_dev), std::string::npos) << full.output;
  EXPECT_NE(full.output.find(std::strerror(ENOSPC)), std::string::npos) << full.output;
  EXPECT_TRUE(S_ISCHR(lmode(full_dev))) << "the device node was replaced";
}

// Writing to /dev/null is harmless, and works for any user (no temporary in /dev).
TEST_F(Output, CliWritesToDevNull) {
  ASSERT_TRUE(S_ISCHR(lmode("/dev/null")));
  io::write_npy(path("in.npy"), array(16, 16));
  const Result r = run_cli("apply " + path("in.npy") + " /dev/null --filter box:3 --backend cpu");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(S_ISCHR(lmode("/dev/null"))) << "/dev/null is no longer a character device";
}

TEST_F(Output, CliRefusesAReadOnlyOutput) {
  io::write_npy(path("in.npy"), array(16, 16));
  const std::string out = path("ro.npy");
  io::write_npy(out, array(2, 2));
  ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
  const std::string before = read_bytes(out);
  const Result r = run_cli("apply " + path("in.npy") + " " + out + " --filter box:3 --backend cpu");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(out), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("read-only"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(out), before);
  EXPECT_EQ(lmode(out) & 07777, 0444u);
}

TEST_F(Output, CliWritesTheArrayToStandardOutputForDash) {
  io::write_npy(path("in.npy"), array(40, 50));
  ASSERT_EQ(
      run_cli("apply " + path("in.npy") + " " + path("file.npy") + " --filter box:3 --backend cpu")
          .code,
      0);
  const SplitResult r = run_cli_split("apply " + path("in.npy") + " - --filter box:3 --backend cpu",
                                      "cd '" + dir_.string() + "' &&");
  const std::string& bytes = r.out;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(path("-"))) << "a file named '-' was written";
  EXPECT_EQ(bytes, read_bytes(path("file.npy")));
  EXPECT_TRUE(same(parse(bytes), io::read_npy(path("file.npy"))));
}

TEST_F(Output, BenchWritesToDevNullAndStandardOutput) {
  const std::string bench =
      "bench --backend cpu --suite seed --size 64x64 --reps 1 --warmup 0 --format csv";
  const Result r = run_cli(bench + " -o /dev/null");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(S_ISCHR(lmode("/dev/null"))) << "/dev/null is no longer a character device";

  // --json -: the table, then the JSON document, both on standard output and in that order.
  const SplitResult j = run_cli_split(bench + " --json -", "cd '" + dir_.string() + "' &&");
  const std::string& out = j.out;
  EXPECT_EQ(j.code, 0) << j.err;
  EXPECT_FALSE(fs::exists(path("-"))) << "a file named '-' was written";
  const std::size_t json_at = out.find("\n{");
  ASSERT_NE(json_at, std::string::npos) << out;
  EXPECT_NE(out.find("\"rows\"", json_at), std::string::npos) << out;
  EXPECT_NE(out.find("suite,"), std::string::npos) << out;
  EXPECT_LT(out.find("suite,"), json_at) << out;
}

TEST_F(Output, BenchNamesAMissingDirectory) {
  const std::string out = path("missing/results.csv");
  const Result r = run_cli(
      "bench --backend cpu --suite seed --size 64x64 --reps 1 --warmup 0 --format csv -o " + out);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("the directory " + path("missing") + " does not exist"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("missing")));
}

}  // namespace
}  // namespace halo::test
