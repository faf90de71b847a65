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

struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer(std::size_t bytes, const std::string& what) {
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
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
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace halo::cuda
