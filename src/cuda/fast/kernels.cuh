// The `fast` strategy's kernels: register-blocked streaming convolution (see strategy.cu for the
// design). The row primitives (rows.cuh) and rings (rings.cuh), the tensor maps, the division of
// the work, and the launch functions each rank's file instantiates.
#pragma once

#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/fast/policy.hpp"  // the shapes shared with the policy: kTx, Feed, round_up4 ...
#include "cuda/fast/rings.cuh"
#include "cuda/fast/rows.cuh"
#include "cuda/shape.hpp"
#include "halo/halo.hpp"

namespace halo::cuda::fast {

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

// The feed in words, for the plans (`depth`: rows in flight under the register prefetch; for
// kTma, `depth` slots of `box_rows` rows).
std::string feed_name(Feed f, int depth = 1, int box_rows = 1, int copies = 1);

// How the three ranks' kernels divide the array (ArrayShape: the extents) among warps.
struct Work : ArrayShape {
  std::int64_t strips = 1;  // warps across x (each covers 32 * kTx columns, or 32 * 8 in 1D)
  std::int64_t chunk = 1;   // rows (2D) or planes (3D) one warp streams through
  std::int64_t chunks = 1;
  std::int64_t items = 1;   // warps of work in all
  bool vec = false;
  // Boundary modes a kernel may apply itself (the 3-D block ring; the others ignore them), -1
  // for zeros: ghost planes copied from the planes zmode maps them to (every mode but constant),
  // and ghost rows and columns set under ymode and xmode (every mode; the caller gives them
  // only where the axis has 2R + 1 elements or more). launch_3d reports which it applied, and
  // the border pass leaves those axes alone. yseam: set by the block ring's launcher for wrap
  // along y (then ymode is -1), the rows its y-tiles start higher so that the first spans the
  // seam.
  int zmode = -1, ymode = -1, xmode = -1, yseam = 0;
  float cval = 0.f;
  // The final outputs' epilogue (rows.cuh): a box filter's division, the non-finite note. The
  // launchers clear it for the passes of a split filter before the last.
  Finish finish;
};

// Canonical axes (bit 0: z, 1: y, 2: x) whose boundary modes a launch applied itself.
constexpr unsigned kAxisZ = 1u, kAxisY = 2u, kAxisX = 4u;

// The current device's facts for the policy (multiprocessors, compute capability, whether the
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
// needs it. Both are remembered per kernel and device (occupancy(), strategy.cu): the runtime's
// calls cost microseconds of host time per launch.
int occupancy(const void* kernel, int threads, std::size_t dynamic_smem);
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, std::size_t dynamic_smem, int sms) {
  const int blocks = occupancy(reinterpret_cast<const void*>(kernel), threads, dynamic_smem);
  return std::int64_t(blocks > 0 ? blocks : 1) * sms;
}

// Warps of `kernel` (launched with kThreads threads and `dynamic_smem` bytes of dynamic shared
// memory) resident on the whole GPU (`sms` multiprocessors) at once.
template <class Kernel>
std::int64_t resident_warps(Kernel kernel, std::size_t dynamic_smem, int sms) {
  return resident_blocks(kernel, kThreads, dynamic_smem, sms) * kWarpsPerBlock;
}

// fit_chunks() of fast/policy.hpp into g.chunk and g.chunks (`forced`: FastPolicy::chunk).
inline void fit_chunks(Work& g, std::int64_t stream_len, std::int64_t per_chunk, int R,
                       std::int64_t resident, std::int64_t forced) {
  const Chunking c = fit_chunks(stream_len, per_chunk, R, resident, forced);
  g.chunk = c.chunk;
  g.chunks = c.chunks;
}

// Each rank's launcher: runs the kernels that the policy `pol` chooses (its compiled radius
// pol.radius) on `stream`, with `window` the (2R+1)^d padded weights of that radius. Returns false
// if no kernel is compiled for pol.radius (the strategy's can_implement keeps that from
// happening).
template <class T>
bool launch_1d(const T* in, T* out, const Work& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream);
template <class T>
bool launch_2d(const T* in, T* out, const Work& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream);
template <class T>
bool launch_3d(const T* in, T* out, const Work& g, const FastPolicy& pol,
               const double* window, cudaStream_t stream, unsigned* applied = nullptr);

// How each rank's launcher runs the problem, in words: `pol` the policy for 16-byte aligned
// arrays, `unaligned` the one for arrays that are not (what runs where no tensor map or 16-byte
// copy can serve the rows), described where it differs.
std::string plan_1d(const FastPolicy& pol, const FastPolicy& unaligned);
std::string plan_2d(const FastPolicy& pol, const FastPolicy& unaligned);
std::string plan_3d(const FastPolicy& pol, const FastPolicy& unaligned);

}  // namespace halo::cuda::fast
