// The device as launchers see it, on the host: the current device's facts (DeviceFacts,
// device_facts.hpp), a kernel's occupancy and the blocks it keeps resident, and the tensor maps
// of the TMA rings (rings.cuh). Defined in device.cu; used by `fast`, separable and fft.
#pragma once

#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/primitives/device_facts.hpp"

namespace halo::cuda::prim {

// The tensor map of a batch of 3-D arrays (2-D arrays: nz = 1) for TmaRing and BlockRing: dims
// (nx, ny, nz, batch), boxes of box_w x box_rows x 1 x 1 elements, zeros outside. False (and the
// map unset) where it cannot serve the array: a row pitch that is not a multiple of 16 bytes, a
// base not 16-byte aligned, an extent past 2^31 elements, or the driver's encoder missing (the
// policy, FastPolicy::tensor_map, chose the feed knowing these; the caller falls back to
// FastPolicy::fallback if the encoding fails after all).
// l2_promotion: the bytes the L2 fetches per read (0 none, 64, 128, 256: FastPolicy::l2_promotion).
bool make_row_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                  std::int64_t ny, std::int64_t nz, std::int64_t batch, int box_w, int box_rows,
                  int l2_promotion);
// The same array seen as two halves of each row, its first half_w columns and its last (a
// dimension of extent 2 between them): a box of half_w x 2 x box_rows elements lands as rows of
// 2 half_w elements, each the row's first half_w columns, then its last (the x-seam tile of the
// 3-D block ring). Coordinates (0, 0, y, b * nz + z). False where make_row_map() would be, or
// where the halves would overlap (nx < 2 half_w).
bool make_seam_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                   std::int64_t ny, std::int64_t nz, std::int64_t batch, int half_w,
                   int box_rows, int l2_promotion);

// The current device's facts for the policies (multiprocessors, compute capability, whether the
// driver's tensor-map encoder was found); throws halo::Error if no device answers.
DeviceFacts current_device_facts();
// The facts that plans, choices and their descriptions are made from: the current device's, or
// an H100's (the DeviceFacts defaults, the first target) where no device answers, so that a
// machine without a GPU plans, chooses and explains as on an H100.
DeviceFacts planning_facts();

// Blocks of `kernel` (launched with `threads` threads and `dynamic_smem` bytes of dynamic shared
// memory) resident on the whole GPU (`sms` multiprocessors) at once. Sets the kernel's dynamic
// shared-memory limit to dynamic_smem first, so the launch that follows may use it: the default
// limit is 48 KB for static and dynamic together, so 48 KB of ring beside a few mbarriers already
// needs it. Both are remembered per kernel and device (occupancy(), device.cu): the runtime's
// calls cost microseconds of host time per launch.
int occupancy(const void* kernel, int threads, std::size_t dynamic_smem);
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, std::size_t dynamic_smem, int sms) {
  const int blocks = occupancy(reinterpret_cast<const void*>(kernel), threads, dynamic_smem);
  return std::int64_t(blocks > 0 ? blocks : 1) * sms;
}

}  // namespace halo::cuda::prim
