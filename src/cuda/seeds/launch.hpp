// Launch math of the seed CUDA strategies: pure host C++, header-only, no CUDA types, so that the
// tests check it on machines without a GPU or nvcc (the CPU-only build compiles no .cu file).
//
// For every strategy (a `Kernel` below):
//   make_launch(kernel, problem) -> Launch: the grid, the block, the shared memory and the tile
//       geometry (`Geometry`) that the kernel receives as an argument;
//   check(kernel, problem, device limits) -> Status: whether the problem fits the strategy's
//       resources, and if not, why, with the numbers (Strategy::can_implement returns it);
//   model(kernel, problem) -> Traffic: the seed notes' bytes and FLOPs (Strategy::model).
//
// Conventions shared by every kernel (the canonical 3D form of Problem::dims3()):
//   - an item is nz x ny x nx elements, x contiguous; `batch` items follow each other;
//   - a block computes one output tile of out_x x out_y x out_z elements; tiles_* tiles per axis
//     cover an item (the last tile of an axis may stick out of the array);
//   - grid.x walks the tiles along x, grid.y those along y, grid.z the (batch item, z tile) pairs.
//     The grid is clipped to the hardware limits (x < 2^31, y and z <= 65535) and every kernel
//     loops over its tiles with a grid stride, so any array fits; indices are 64-bit.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "cuda/limits.hpp"
#include "cuda/shape.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

// ---------------------------------------------------------------------------------------------
// The strategies of the seed notes (one .cu file each under src/cuda/seeds/).
// ---------------------------------------------------------------------------------------------
enum class Kernel { basic, constant, tiled_input, tiled_output, tiled_output_twostep, cached };

inline constexpr Kernel kAllKernels[] = {Kernel::basic,        Kernel::constant,
                                         Kernel::tiled_input,  Kernel::tiled_output,
                                         Kernel::tiled_output_twostep, Kernel::cached};

inline const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::basic: return "basic";
    case Kernel::constant: return "constant";
    case Kernel::tiled_input: return "tiled_input";
    case Kernel::tiled_output: return "tiled_output";
    case Kernel::tiled_output_twostep: return "tiled_output_twostep";
    case Kernel::cached: return "cached";
  }
  return "?";
}

// Whether the kernel reads the filter from __constant__ memory (all but `basic`).
inline bool uses_constant_filter(Kernel k) { return k != Kernel::basic; }

// ---------------------------------------------------------------------------------------------
// Tile sizes, each with its reason.
// ---------------------------------------------------------------------------------------------
struct TileDims {
  int x = 1, y = 1, z = 1;
  constexpr int count() const { return x * y * z; }
};

// One thread per output (basic, constant): 256 threads = 8 warps, enough to hide latency with up
// to 8 resident blocks per SM; x is a warp wide so each row of loads is one coalesced segment.
inline constexpr TileDims kBlock1D{256, 1, 1};
inline constexpr TileDims kBlock2D{32, 8, 1};
inline constexpr TileDims kBlock3D{32, 4, 2};

// Shared-memory tiles: 1024 threads, the most a block may have, since a larger tile wastes less
// of its loads on the halo (seed notes: "32x32 is the upper limit on current GPUs"). It is the
// input tile of tiled_input (block = input tile) and the output tile of tiled_output,
// tiled_output_twostep and cached (block = output tile), so the strategies compare at equal
// block size. 3D: 16x8x8, x widest for coalesced rows (8^3 would be 512 threads; 16^3 too many).
inline constexpr TileDims kTile1D{1024, 1, 1};
inline constexpr TileDims kTile2D{32, 32, 1};
inline constexpr TileDims kTile3D{16, 8, 8};

inline constexpr TileDims block_dims_of_rank(int rank) {
  return rank == 1 ? kBlock1D : rank == 2 ? kBlock2D : kBlock3D;
}
inline constexpr TileDims tile_dims_of_rank(int rank) {
  return rank == 1 ? kTile1D : rank == 2 ? kTile2D : kTile3D;
}

// Filter widths with a compile-time kernel (the seeds' FILTER_RADIUS = K/2; only odd widths, whose
// halo K/2 is the same on both sides for correlate and convolve). Used when every axis of the
// filter has that width; anything else takes the kernel's run-time path (K = 0). The lists are
// the types the .cu files dispatch on, so the two cannot drift apart. Why these: r = 1..4 covers
// the common small stencils (3x3 .. 9x9) where unrolled loops pay most; 3D stops at r = 2 to keep
// the build short (a 5x5x5 kernel already unrolls 125 taps).
template <int... Ks>
struct KList {
  static constexpr bool contains(int k) { return ((k == Ks) || ...); }
};
using SpecialisedK1D = KList<3, 5, 7, 9>;
using SpecialisedK2D = KList<3, 5, 7, 9>;
using SpecialisedK3D = KList<3, 5>;

// ---------------------------------------------------------------------------------------------
// What a kernel receives (plain data, passed by value as a kernel argument).
// ---------------------------------------------------------------------------------------------
struct Geometry : ArrayShape {
  std::int32_t kx = 1, ky = 1, kz = 1;  // filter extents
  std::int32_t ax = 0, ay = 0, az = 0;  // anchors: a halo of `a` before an output, k-1-a after it
  std::int32_t out_x = 1, out_y = 1, out_z = 1;  // output tile (outputs per block, per axis)
  std::int32_t in_x = 0, in_y = 0, in_z = 0;     // input tile in shared memory (0: none)
  std::int64_t tiles_x = 1, tiles_y = 1, tiles_z = 1;  // output tiles per axis of one item
};

// A seed kernel's launch: the grid, block and dynamic shared memory (LaunchConfig, what
// launch_kernel takes: cuda/limits.hpp), and the seeds' own facts.
struct Launch : LaunchConfig {
  std::size_t static_shared_bytes = 0;  // the kernel's own __shared__ array (for reports/tests)
  int specialised_k = 0;                // compile-time filter width used (0: run-time path)
  Geometry g;

  std::int64_t threads_per_block() const {
    return std::int64_t(block[0]) * block[1] * block[2];
  }
  // Work along grid.z: one (batch item, z tile) pair each.
  std::int64_t z_work() const { return g.tiles_z * g.batch; }
};

namespace launch_detail {
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::uint32_t clip(std::int64_t v, std::int64_t limit) {
  return static_cast<std::uint32_t>(std::max<std::int64_t>(1, std::min(v, limit)));
}
}  // namespace launch_detail

// The compile-time filter width that fits p, or 0 for the run-time path.
inline int specialised_width(const Problem& p) {
  const Dims3 k = p.filter_dims3();
  const int r = p.rank();
  std::int64_t w = k.x;
  if (r >= 2 && k.y != w) return 0;
  if (r >= 3 && k.z != w) return 0;
  if (w > 64) return 0;
  const int wi = static_cast<int>(w);
  const bool in_list = r == 1   ? SpecialisedK1D::contains(wi)
                       : r == 2 ? SpecialisedK2D::contains(wi)
                                : SpecialisedK3D::contains(wi);
  return in_list ? wi : 0;
}

// ---------------------------------------------------------------------------------------------
// make_launch: a pure function of the problem (and of the grid limits).
// ---------------------------------------------------------------------------------------------
inline Launch make_launch(Kernel kernel, const Problem& p,
                          const GridLimits& limits = GridLimits{}) {
  using launch_detail::ceil_div;
  Launch L;
  Geometry& g = L.g;
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::size_t es = dtype_size(p.dtype());
  g.nx = n.x;
  g.ny = n.y;
  g.nz = n.z;
  g.batch = p.batch();
  // Filter extents beyond int32 are refused by check(); clamp so the arithmetic stays defined.
  auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(std::min<std::int64_t>(v, 1 << 30)); };
  g.kx = i32(k.x);
  g.ky = i32(k.y);
  g.kz = i32(k.z);
  g.ax = i32(a.x);
  g.ay = i32(a.y);
  g.az = i32(a.z);

  const int rank = p.rank();
  TileDims block{};
  switch (kernel) {
    case Kernel::basic:
    case Kernel::constant:
      // One thread per output: the block is the output tile; no shared memory.
      block = block_dims_of_rank(rank);
      g.out_x = block.x;
      g.out_y = block.y;
      g.out_z = block.z;
      break;
    case Kernel::tiled_input: {
      // Block = input tile (IN_TILE_DIM); OUT_TILE_DIM = IN_TILE_DIM - (k - 1) per axis; the
      // outer ring of threads only loads. check() refuses filters wider than the tile.
      block = tile_dims_of_rank(rank);
      g.in_x = block.x;
      g.in_y = block.y;
      g.in_z = block.z;
      g.out_x = std::max(1, block.x - (g.kx - 1));
      g.out_y = std::max(1, block.y - (g.ky - 1));
      g.out_z = std::max(1, block.z - (g.kz - 1));
      L.static_shared_bytes = std::size_t(block.count()) * es;
      break;
    }
    case Kernel::tiled_output:
    case Kernel::tiled_output_twostep: {
      // Block = output tile; the input tile (OUT + k - 1 per axis) is loaded in several steps
      // into dynamic shared memory.
      block = tile_dims_of_rank(rank);
      g.out_x = block.x;
      g.out_y = block.y;
      g.out_z = block.z;
      g.in_x = block.x + g.kx - 1;
      g.in_y = block.y + g.ky - 1;
      g.in_z = block.z + g.kz - 1;
      L.shared_bytes = std::size_t(g.in_x) * std::size_t(g.in_y) * std::size_t(g.in_z) * es;
      break;
    }
    case Kernel::cached:
      // Block = output tile = the tile in shared memory (interior only; halo through L2).
      block = tile_dims_of_rank(rank);
      g.out_x = block.x;
      g.out_y = block.y;
      g.out_z = block.z;
      g.in_x = block.x;
      g.in_y = block.y;
      g.in_z = block.z;
      L.static_shared_bytes = std::size_t(block.count()) * es;
      break;
  }
  L.block = {std::uint32_t(block.x), std::uint32_t(block.y), std::uint32_t(block.z)};
  g.tiles_x = ceil_div(g.nx, g.out_x);
  g.tiles_y = ceil_div(g.ny, g.out_y);
  g.tiles_z = ceil_div(g.nz, g.out_z);
  L.grid = {launch_detail::clip(g.tiles_x, limits.x), launch_detail::clip(g.tiles_y, limits.y),
            launch_detail::clip(L.z_work(), limits.z)};
  L.specialised_k = specialised_width(p);
  return L;
}

// ---------------------------------------------------------------------------------------------
// check: the strategy's resource limits, with the numbers.
// ---------------------------------------------------------------------------------------------
inline Status check(Kernel kernel, const Problem& p, const DeviceLimits& dev = DeviceLimits{}) {
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::size_t es = dtype_size(p.dtype());
  const auto filt = [&p] { return p.filter().shape_string(); };  // for messages only
  const char* name = kernel_name(kernel);
  const char* axis_name[3] = {"x", "y", "z"};
  const std::int64_t kk[3] = {k.x, k.y, k.z}, aa[3] = {a.x, a.y, a.z};

  if (!p.zero_ghosts())
    return Status::failure(std::string(name) +
                           " computes zero ghost cells only (the seed notes' kernels): mode "
                           "constant with cval 0");
  // The seed kernels place the filter as the notes do, centred: anchor k/2 (correlate) or
  // k - 1 - k/2 (convolve) on every axis; an origin (or a fold) that moves it is refused.
  for (int i = 0; i < 3; ++i)
    if (aa[i] != kk[i] / 2 && aa[i] != kk[i] - 1 - kk[i] / 2)
      return Status::failure(std::string(name) + " centres the filter (origin 0); this problem "
                             "anchors it at " + std::to_string(aa[i]) + " of " +
                             std::to_string(kk[i]) + " taps on axis " + axis_name[i]);
  for (int i = 0; i < 3; ++i)
    if (kk[i] > (1 << 30))
      return Status::failure("filter extent " + std::to_string(kk[i]) + " exceeds 2^30");
  if (kernel == Kernel::tiled_output_twostep && p.rank() != 1)
    return Status::failure("tiled_output_twostep is the 1D two-step load of the seed notes; " +
                           std::to_string(p.rank()) + "D problems use tiled_output");

  if (uses_constant_filter(kernel)) {
    const std::size_t bytes = std::size_t(p.taps()) * es;
    if (bytes > dev.constant_bytes)
      return Status::failure("the filter " + filt() + " (" + std::to_string(p.taps()) + " taps x " +
                             std::to_string(es) + " B = " + std::to_string(bytes) +
                             " B) does not fit the " + std::to_string(dev.constant_bytes) +
                             " B of constant memory; use basic");
  }

  const Launch L = make_launch(kernel, p);
  const TileDims t = tile_dims_of_rank(p.rank());
  const int td[3] = {t.x, t.y, t.z};
  switch (kernel) {
    case Kernel::tiled_input:
      // OUT_TILE_DIM = IN_TILE_DIM - (k - 1) must be at least 1 on every axis.
      for (int i = 0; i < 3; ++i)
        if (kk[i] > td[i])
          return Status::failure(
              "filter " + filt() + ": extent " + std::to_string(kk[i]) + " on axis " +
              axis_name[i] + " exceeds the input tile (IN_TILE_DIM " + std::to_string(td[i]) +
              " = block size), leaving no output tile; use tiled_output or cached");
      break;
    case Kernel::tiled_output:
      // 1D design 1: the last `a` threads of the block load the left halo, the first k-1-a the
      // right halo, so each side must fit in the block.
      if (p.rank() == 1 && (aa[0] > td[0] || kk[0] - 1 - aa[0] > td[0]))
        return Status::failure("filter width " + std::to_string(kk[0]) + ": halo of " +
                               std::to_string(aa[0]) + " left and " +
                               std::to_string(kk[0] - 1 - aa[0]) +
                               " right; design 1 loads each side with one step of the " +
                               std::to_string(td[0]) + "-thread block (at most " +
                               std::to_string(td[0]) + " per side)");
      break;
    case Kernel::tiled_output_twostep:
      // The second step loads k-1 elements with the first k-1 threads: k - 1 <= blockDim.x.
      if (kk[0] - 1 > td[0])
        return Status::failure("filter width " + std::to_string(kk[0]) +
                               ": the second load step covers only blockDim.x = " +
                               std::to_string(td[0]) + " elements, so k - 1 <= " +
                               std::to_string(td[0]) + " (tiled_output takes up to " +
                               std::to_string(td[0]) + " per side)");
      break;
    default: break;
  }
  const std::size_t smem = L.shared_bytes + L.static_shared_bytes;
  if (smem > dev.shared_per_block_optin)
    return Status::failure("the input tile " + std::to_string(L.g.in_x) + "x" +
                           std::to_string(L.g.in_y) + "x" + std::to_string(L.g.in_z) + " x " +
                           std::to_string(es) + " B = " + std::to_string(smem) +
                           " B of shared memory exceeds the " +
                           std::to_string(dev.shared_per_block_optin) +
                           " B a block may have; use cached or basic");
  if (L.threads_per_block() > dev.max_threads_per_block)
    return Status::failure(std::to_string(L.threads_per_block()) + " threads per block exceed " +
                           std::to_string(dev.max_threads_per_block));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// model: the seed notes' arithmetic intensity, as bytes loaded from global memory (reads only,
// as the notes count them) and FLOPs (2 per tap per output).
//   basic     2 loads per tap (N and F):          taps * 2 * es per output      (0.25 OP/B f32)
//   constant  1 load per tap (F in constant):     taps * es per output          (0.5 OP/B f32)
//   tiled_*   one load per input-tile element:    IN^d / OUT^d * es per output  (interior tiles)
//   cached    the interior once, halo from L2:    es per output                 (the tiled bound)
// ---------------------------------------------------------------------------------------------
inline Traffic model(Kernel kernel, const Problem& p) {
  const double es = double(dtype_size(p.dtype()));
  const double outputs = double(p.elements());
  const double taps = double(p.taps());
  Traffic t;
  t.flops = p.flops();
  switch (kernel) {
    case Kernel::basic: t.bytes = outputs * taps * 2 * es; break;
    case Kernel::constant: t.bytes = outputs * taps * es; break;
    case Kernel::tiled_input:
    case Kernel::tiled_output:
    case Kernel::tiled_output_twostep: {
      const Launch L = make_launch(kernel, p);
      const Geometry& g = L.g;
      // Only the axes the rank uses.
      const int r = p.rank();
      double in = double(g.in_x), out = double(g.out_x);
      if (r >= 2) { in *= g.in_y; out *= g.out_y; }
      if (r >= 3) { in *= g.in_z; out *= g.out_z; }
      t.bytes = outputs * in / out * es;
      break;
    }
    case Kernel::cached: t.bytes = outputs * es; break;
  }
  return t;
}

}  // namespace halo::cuda
