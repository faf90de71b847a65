// The `fast` strategy's kernels: register-blocked streaming convolution (see strategy.cu for the
// design). The division of the work and the launch functions each rank's file instantiates; the
// kernels build on the primitives (cuda/primitives/: rows, rings, tensor maps, occupancy) and on
// fast's epilogue (epilogue.cuh).
#pragma once

#include <cuda.h>  // CUtensorMap, a type only: the encoder is reached through the runtime
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/fast/epilogue.cuh"
#include "cuda/fast/policy.hpp"  // the shapes shared with the policy: kTx, Feed, round_up4 ...
#include "cuda/primitives/device.cuh"
#include "cuda/primitives/rings.cuh"
#include "cuda/primitives/rows.cuh"
#include "cuda/shape.hpp"
#include "halo/halo.hpp"

namespace halo::cuda::fast {

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
  // The final outputs' epilogue (epilogue.cuh): a box filter's division, the non-finite note. The
  // launchers clear it for the passes of a split filter before the last.
  Finish finish;
};

// Canonical axes (bit 0: z, 1: y, 2: x) whose boundary modes a launch applied itself.
constexpr unsigned kAxisZ = 1u, kAxisY = 2u, kAxisX = 4u;

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
