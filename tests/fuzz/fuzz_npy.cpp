// libFuzzer harness of the .npy reader (io/npy.hpp, read_npy), which reads paths only: each input
// is the contents of an in-memory file (memfd) read through /proc/self/fd/N, a regular file to the
// reader. Any exception other than halo::Error is uncaught, so libFuzzer reports it, as it reports
// what the sanitizers find.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "io/npy.hpp"

namespace {

int memory_file() {
  static const int fd = [] {
    const int f = ::memfd_create("halo-fuzz-npy", MFD_CLOEXEC);
    if (f < 0) halo::fuzz::die("memfd_create failed");
    return f;
  }();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memory_file();
  if (::ftruncate(fd, 0) != 0) halo::fuzz::die("ftruncate failed");
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, off_t(done));
    if (n <= 0) halo::fuzz::die("pwrite failed");
    done += std::size_t(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const halo::io::NpyArray a = halo::io::read_npy(path, [](const halo::io::NpyHeader& h) {
      if (double(h.data_bytes) > halo::fuzz::kMaxDecodedBytes)
        throw halo::Error("larger than the harness takes");
    });
    if (a.nbytes() + 0 > size) halo::fuzz::die("an array larger than its file");
  } catch (const halo::Error&) {
  }
  return 0;
}
