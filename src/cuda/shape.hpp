// The extents every CUDA kernel receives: a batch of arrays in canonical 3-D form (x contiguous;
// 2-D arrays have nz = 1, 1-D ones ny = nz = 1), plain data passed by value. The seed kernels'
// Geometry (tiles) and the fast kernels' Work (warps' strips and chunks) extend it.
#pragma once

#include <cstdint>

namespace halo::cuda {

struct ArrayShape {
  std::int64_t nx = 1, ny = 1, nz = 1;  // extents of one item
  std::int64_t batch = 1;               // items, one after the other
};

}  // namespace halo::cuda
