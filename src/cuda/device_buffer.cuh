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

// The memory pool of halo's workspaces on the current device, or nullptr where the device has
// none. It keeps up to min(1 GiB, an eighth of the device) of freed memory between runs instead
// of giving it back at every synchronisation: a 3-D separable run's 512 MiB scratch otherwise
// costs a third of its time mapping fresh memory on each call. Other memory stays the caller's.
cudaMemPool_t workspace_pool();

// Stream-ordered where a stream is given (cudaMallocFromPoolAsync / cudaFreeAsync, from
// workspace_pool()): the free neither waits for the device nor blocks the caller, so a run with
// a workspace stays asynchronous, and the pool hands the memory to the next run. Devices without
// memory pools fall back to cudaMalloc / cudaFree.
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
    cudaMemPool_t pool = ordered_ ? workspace_pool() : nullptr;
    if (pool) {
      e = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
      if (e == cudaErrorMemoryAllocation) {  // what the pool keeps may be what is missing
        (void)cudaGetLastError();
        cudaMemPoolTrimTo(pool, 0);
        e = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
      }
    }
    if (!pool) {  // no memory pools here (or none asked for)
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
