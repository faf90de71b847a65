// NumPy .npy files: read and write float32/float64, little-endian, C order, 1-4 dims, format
// versions 1.0, 2.0 and 3.0. Every error names the file and the problem. Writes follow the output
// rules below (write_output), so a file is never left half-written and a device is never replaced.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "halo/halo.hpp"

namespace halo::io {

class NpyArray {
 public:
  NpyArray() = default;
  // Allocates shape's element count of `dtype`, uninitialised, 64-byte aligned.
  NpyArray(DType dtype, std::vector<std::int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t size() const { return size_; }  // element count
  std::size_t nbytes() const { return static_cast<std::size_t>(size_) * dtype_size(dtype_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <class T>
  T* as() { return static_cast<T*>(data()); }
  template <class T>
  const T* as() const { return static_cast<const T*>(data()); }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  DType dtype_ = DType::f32;
  std::vector<std::int64_t> shape_;
  std::int64_t size_ = 0;
  std::unique_ptr<void, Free> data_;
};

// `path` "-" reads standard input (not a terminal); messages call it "standard input".
// Throws halo::Error "PATH: what is wrong" for a missing, malformed, truncated, big-endian,
// Fortran-order, object or otherwise unsupported file.
// `before_alloc`, if given, sees the header (dtype, shape, data bytes) before the data is
// allocated, and may throw to refuse the file (e.g. an array that cannot fit the memory left).
struct NpyHeader {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::uint64_t data_bytes = 0;
};
NpyArray read_npy(const std::string& path,
                  const std::function<void(const NpyHeader&)>& before_alloc = {});

// Writes version 1.0 (2.0 if the header needs it) by the output rules below (write_output).
// Throws halo::Error naming the path on failure; on failure a file is untouched and no temporary
// file is left behind.
void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
               const void* data);
inline void write_npy(const std::string& path, const NpyArray& a) {
  write_npy(path, a.dtype(), a.shape(), a.data());
}

// ---------------------------------------------------------------------------------------------
// Outputs: where every file halo writes goes (write_npy, the command line's other outputs).
// - "-" is standard output (file descriptor 1), written directly.
// - A regular file, or a path that does not exist yet, is written to a temporary file in the same
//   directory and renamed into place, so it is never left half-written; a replaced file keeps its
//   permission bits (read/write/execute for user, group and others).
// - A symbolic link is followed to its final target (which may not exist yet); the target is
//   written by these rules and the link stays a link.
// - A character or block device or a FIFO is opened and written in place (no truncation), never
//   replaced.
// - Errors, each "PATH: what is wrong": a directory, a socket, an existing file the effective user
//   may not write or that has no write permission bit at all (mode 0444 is refused for root too),
//   a missing or unwritable directory.
// ---------------------------------------------------------------------------------------------

// Applies those rules' checks to `path` without creating, opening or changing anything, so that a
// caller can refuse a bad destination before a long computation. Throws halo::Error with the
// message the write would give.
void check_output_path(const std::string& path);

// Writes the concatenation of `parts` to `path` by those rules, checking again (the destination
// may have changed since check_output_path). Throws halo::Error naming the path on failure; a file
// is then untouched and no temporary file is left behind. A FIFO blocks until it has a reader; a
// reader that goes away is an error (EPIPE), not a SIGPIPE.
void write_output(const std::string& path, std::initializer_list<std::string_view> parts);

// What the file readers (npy.cpp, image.cpp) share: the host's byte order, and their errors,
// "PATH: what" on one line with the control characters of both parts escaped.
namespace file_detail {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline constexpr bool kHostLittleEndian = false;
#else
inline constexpr bool kHostLittleEndian = true;
#endif
[[noreturn]] void fail(const std::string& path, const std::string& what);
}  // namespace file_detail

}  // namespace halo::io
