// A device allocation that frees itself; an allocation failure names what it was for, its size
// and the device's free memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "halo/halo.hpp"

namespace halo::cuda {

inline std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / 1073741824.0);
  return buf;
}

// Stream-ordered where a stream is given (cudaMallocAsync / cudaFreeAsync from the device's
// current memory pool): the free neither waits for the device nor blocks the caller, so a run
// with a workspace stays asynchronous, and the pool can hand the memory to the next run. Devices
// without memory pools fall back to cudaMalloc / cudaFree.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer(std::size_t bytes, const std::string& what)
      : DeviceBuffer(bytes, what, nullptr, false) {}
  DeviceBuffer(std::size_t bytes, const std::string& what, cudaStream_t stream)
      : DeviceBuffer(bytes, what, stream, true) {}
  ~DeviceBuffer() {
    if (!p) return;
    if (ordered_)
      cudaFreeAsync(p, stream_);
    else
      cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

 private:
  DeviceBuffer(std::size_t bytes, const std::string& what, cudaStream_t stream, bool ordered)
      : stream_(stream), ordered_(ordered) {
    cudaError_t e = cudaErrorNotSupported;
    if (ordered_) e = cudaMallocAsync(&p, bytes, stream);
    if (e == cudaErrorNotSupported) {  // no memory pools here (or none asked for)
      (void)cudaGetLastError();
      ordered_ = false;
      e = cudaMalloc(&p, bytes);
    }
    if (e != cudaSuccess) {
      p = nullptr;
      (void)cudaGetLastError();
      std::size_t free_b = 0, total_b = 0;
      std::string mem;
      if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        mem = "; the device has " + gib(free_b) + " free of " + gib(total_b);
      (void)cudaGetLastError();
      throw Error("CUDA error while allocating " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                  ") of device memory for " + what + ": " + cudaGetErrorString(e) + " (" +
                  cudaGetErrorName(e) + ")" + mem);
    }
  }
  cudaStream_t stream_ = nullptr;
  bool ordered_ = false;
};

}  // namespace halo::cuda
