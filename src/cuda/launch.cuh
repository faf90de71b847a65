// What every CUDA strategy's launcher may take, whatever its family: the 64-bit index type
// (i64), the current device's limits (current_device_limits(), defined in runtime.cu), and the
// checked kernel launch (launch_kernel). The plain values they use: cuda/limits.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/limits.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

using i64 = std::int64_t;

// The limits of the current device (defined in runtime.cu); H100 values where none can be asked.
DeviceLimits current_device_limits();

// Launches `kernel` with L's grid, block and dynamic shared memory on `stream`, and checks the
// launch. Blocks that need more than the default 48 KiB of dynamic shared memory opt in first.
template <class... KArgs, class... Args>
void launch_kernel(void (*kernel)(KArgs...), const LaunchConfig& L, cudaStream_t stream,
                   const char* kernel_name, int K, const Problem& p, Args&&... args) {
  auto what = [&] {
    return std::string("launching ") + kernel_name + "<" + to_string(p.dtype()) + ", K=" +
           std::to_string(K) + "> on grid " + std::to_string(L.grid[0]) + "x" +
           std::to_string(L.grid[1]) + "x" + std::to_string(L.grid[2]) + ", block " +
           std::to_string(L.block[0]) + "x" + std::to_string(L.block[1]) + "x" +
           std::to_string(L.block[2]) + ", " + std::to_string(L.shared_bytes) +
           " B dynamic shared memory, for " + p.describe();
  };
  if (L.shared_bytes > 48 * 1024)
    HALO_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(L.shared_bytes)),
                    "raising the shared-memory limit: " + what());
  const dim3 grid(L.grid[0], L.grid[1], L.grid[2]), block(L.block[0], L.block[1], L.block[2]);
  kernel<<<grid, block, L.shared_bytes, stream>>>(std::forward<Args>(args)...);
  HALO_CUDA_CHECK_LAUNCH(what());
}

}  // namespace halo::cuda
