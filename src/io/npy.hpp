// NumPy .npy files: read and write float32/float64, little-endian, C order, 1-4 dims, format
// versions 1.0, 2.0 and 3.0. Every error names the file and the problem; writes go to a temporary
// name in the same folder and are renamed into place, so an output is never left half-written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
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

// Throws halo::Error "PATH: what is wrong" for a missing, malformed, truncated, big-endian,
// Fortran-order, object or otherwise unsupported file.
NpyArray read_npy(const std::string& path);

// Writes version 1.0 (2.0 if the header needs it). Throws halo::Error naming the path on failure;
// on failure the destination is untouched and no temporary file is left behind.
void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
               const void* data);
inline void write_npy(const std::string& path, const NpyArray& a) {
  write_npy(path, a.dtype(), a.shape(), a.data());
}

}  // namespace halo::io
