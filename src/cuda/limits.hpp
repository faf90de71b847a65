// The limits a CUDA launch lives within, and the shape of a launch, as plain values shared by
// every CUDA strategy: the grid's hardware limits (GridLimits; tests may lower the strategies'
// own), what the device offers a block (DeviceLimits; the current device's: current_device_limits()
// in cuda/launch.cuh), and the grid, block and dynamic shared memory a kernel is launched with
// (LaunchConfig, what launch_kernel takes). Pure host C++, no CUDA types, so that the launch math
// (seeds/launch.hpp) and its tests build without nvcc.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace halo::cuda {

struct GridLimits {
  std::int64_t x = 2147483647;  // gridDim.x <= 2^31 - 1
  std::int64_t y = 65535;       // gridDim.y, gridDim.z <= 65535
  std::int64_t z = 65535;
};


// Grid limits used by the strategies. Tests may lower them (e.g. to {3, 2, 2}) so that the
// grid-stride loops over tiles run many times on small problems; never changed otherwise.
inline GridLimits& grid_limits_for_testing() {
  static GridLimits limits;
  return limits;
}

// What the device offers a block (queried by the CUDA runtime; H100 values by default).
struct DeviceLimits {
  std::size_t constant_bytes = 65536;            // __constant__ memory of one module
  std::size_t shared_per_block_optin = 232448;   // 227 KiB, after cudaFuncSetAttribute
  int max_threads_per_block = 1024;
};

// The grid, block and dynamic shared memory of a kernel's launch (launch_kernel).
struct LaunchConfig {
  std::array<std::uint32_t, 3> grid{1, 1, 1};   // {x, y, z}
  std::array<std::uint32_t, 3> block{1, 1, 1};  // {x, y, z}
  std::size_t shared_bytes = 0;         // dynamic shared memory per block (launch argument)
};

}  // namespace halo::cuda
