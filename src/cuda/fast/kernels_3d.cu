/* strategy: fast, 3D — register-blocked plane streaming along z.
 *
 * Who loads what: each warp owns a strip of 128 x-columns (4 per lane) of one y-row and a chunk of
 * z-planes, and marches along z. For every input plane it loads, row by row, the 2R+1 rows
 * y-R .. y+R that its outputs need (4 + 2*RA elements per lane and row, 16-byte loads from global
 * memory, prefetched up to 4 rows ahead at r = 1; from r = 2 through a warp-private ring in shared
 * memory, filled for f32 by the tensor memory accelerator with one copy per plane of all 2R+YB
 * rows, else by cp.async row by row). The four warps of a block take neighbouring y-rows, so most of
 * those rows hit in L1 or L2 and DRAM sees each element about once.
 * Which threads compute: all; no block-wide barriers. The accumulators of the 2R+1 output
 * planes that the current input plane feeds stay in registers; each loaded row adds
 * (2R+1)^2 * 4 FFMAs (weights are kernel-parameter operands); after the plane the oldest output
 * plane is complete, stored, and the accumulators shift.
 * DRAM intensity: (2R+1)^3 * 2 OP over 8 B: on an H100 memory-bound at r = 1, FFMA-bound from
 * r = 2.
 * For f32 up to r = 3 (rows of a 16-byte pitch, sm_90) the default is tile3d instead: the same
 * per-warp arithmetic, but the 8 warps of a block take neighbouring y-rows of one 128 x 16 tile
 * and read them from a block-wide ring of planes (one TMA copy of the tile and its halo per plane).
 * Where FFMAs bound it (r >= 2) its blocks take equal runs of the tiles' planes, one wave of them,
 * instead of z-chunks (runs_of_planes()).
 */
#include "core/boundary.hpp"
#include "cuda/check.cuh"
#include "cuda/fast/kernels.cuh"

#include <string>
#include <type_traits>

namespace halo::cuda::fast {
namespace {

// The accumulators of a warp marching along z: acc[yy][q][j] is output row y + yy, column
// x0 + j of the q-th of the 2R+1 output planes that the current input plane feeds (q = 0 the
// oldest).
template <class T, int R, int YB>
using Acc3 = T[YB][2 * R + 1][kTx];

// Adds input row t of the current plane's 2R+YB rows (the lane's 4 + 2*RA values in v) through
// every tap that reaches the warp's outputs (t is a constant once the caller's row loop is
// unrolled, so the taps that miss are dropped at compile time).
template <class T, int R, int YB>
__device__ __forceinline__ void add_row(Acc3<T, R, YB>& acc, const T (&v)[kTx + 2 * round_up4(R)],
                                        int t,
                                        const Taps<T, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)>& taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
#pragma unroll
  for (int yy = 0; yy < YB; ++yy) {
    const int fy = t - yy;  // output row y + yy takes this row through filter row fy
    if (fy < 0 || fy >= K) continue;
#pragma unroll
    for (int q = 0; q < K; ++q) {
      const int fz = 2 * R - q;
#pragma unroll
      for (int fx = 0; fx < K; ++fx) {
        const T w = taps.w[(fz * K + fy) * K + fx];
#pragma unroll
        for (int j = 0; j < kTx; ++j) acc[yy][q][j] = fma(w, v[j + fx + RA - R], acc[yy][q][j]);
      }
    }
  }
}

// Blocks per multiprocessor that stream3d's registers must allow (its launch bound), for the
// default kernels whose count the probe held across the march took past a multiple of 8 (a block
// fewer): f32 r = 0 (direct) 10; f64 r = 1 (register prefetch) 4. 0: none. (f32 r = 4, TMA ring:
// 79 registers allow 6 blocks where its shared memory allows 5; bound to 7 it spilled.)
template <class T>
constexpr int stream3d_min_blocks(int R, int YB, Feed F) {
  if (sizeof(T) == 4) return YB == 1 && R == 0 && F == Feed::kDirect ? 10 : 0;
  return R == 1 && F == Feed::kPrefetch ? 4 : 0;
}

// YB output rows (y .. y+YB-1) per warp: each input row loaded feeds every one of them that it
// reaches, so a plane costs K+YB-1 row loads for YB output rows instead of K for one.
template <class T, int R, int YB, Feed F, int DEPTH = 1>
__global__ void __launch_bounds__(kThreads, stream3d_min_blocks<T>(R, YB, F))
    stream3d(const T* __restrict__ in, T* __restrict__ out, Work g,
             Taps<T, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)> taps, std::int64_t ygroups,
             const __grid_constant__ CUtensorMap map, int slots) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx + 2 * RA;
  constexpr int NR = K + YB - 1;  // input rows per plane
  const int lane = threadIdx.x & 31;
  const std::int64_t item = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (item >= g.items) return;
  // item = ((b * chunks + chunk) * strips + strip) * ygroups + yg: neighbouring y in one block.
  const std::int64_t y = (item % ygroups) * YB;
  const std::int64_t strip = (item / ygroups) % g.strips;
  const std::int64_t chunk = (item / (ygroups * g.strips)) % g.chunks;
  const std::int64_t b = item / (ygroups * g.strips * g.chunks);
  const std::int64_t x0 = strip * (32 * kTx) + lane * kTx;
  const std::int64_t z0 = chunk * g.chunk;
  const std::int64_t z1 = z0 + g.chunk < g.nz ? z0 + g.chunk : g.nz;
  const std::int64_t plane = g.ny * g.nx;
  const T* src = in + b * g.nz * plane;
  T* dst = out + b * g.nz * plane;

  T acc[YB][K][kTx];
#pragma unroll
  for (int yy = 0; yy < YB; ++yy)
#pragma unroll
    for (int q = 0; q < K; ++q)
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[yy][q][j] = T(0);
  T probe = T(0);  // every output the lane stores, noted once at the end (Finish)

  // Rows are fetched one ahead (the next row of this plane, or the first of the next plane), so
  // each row's loads are in flight while the previous row's FFMAs run. Ghost rows and planes are
  // zero rows: they cost FFMAs only at the borders.
  auto fetch = [&](RowOf<T, NV>& w, std::int64_t s, int t) {
    const std::int64_t iy = y - R + t;
    if (s >= 0 && s < g.nz && iy >= 0 && iy < g.ny)
      load_row(w.v, src + s * plane + iy * g.nx, x0 - RA, g.nx, g.vec);
    else
      zero_row(w.v, NV);
  };
  // With the ring, the warp's rows (plane s, row t) in march order n = (s - z0 + R) * NR + t go
  // through slot n % kRingSlots; the slots start RA columns left of the strip.
  constexpr bool PF = F == Feed::kPrefetch, RING = F == Feed::kRing, TMA = F == Feed::kTma;
  constexpr int W = 32 * kTx + 2 * RA;
  __shared__ __align__(16) T ring_mem[kWarpsPerBlock][RING ? kRingSlots : 1][RING ? W : 4];
  const RowRing<T, RING ? W : 4, RING ? kRingSlots : 1> ring(
      ring_mem[threadIdx.x >> 5], x0 - lane * kTx - RA, g.nx, g.vec, lane);
  auto fill = [&](int k, std::int64_t s, int t) {  // row t of plane s into slot k
    if (s < z1 + R && s >= 0 && s < g.nz) {
      const std::int64_t iy = y - R + t;
      const bool live = iy >= 0 && iy < g.ny;
      ring.fill(k, live ? src + s * plane + iy * g.nx : src, live);
    }
    ring.commit();
  };
  unsigned n = 0;  // rows consumed so far (the ring's cursor)
  // The TMA ring: slot k holds the NR rows of one plane (one copy), plane z0 - R + m in slot
  // m % slots, so slots - 1 planes are in flight while one is read.
  extern __shared__ __align__(128) unsigned char tma_mem[];
  __shared__ std::uint64_t tma_bar[kWarpsPerBlock][TMA ? 16 : 1];
  const int stride = TmaRing<T, W>::slot_bytes(NR) / int(sizeof(T));
  const TmaRing<T, W> tr{reinterpret_cast<T*>(tma_mem) + (threadIdx.x >> 5) * slots * stride,
                         tma_bar[threadIdx.x >> 5], &map, stride, NR};
  const int xs = int(strip * (32 * kTx)) - RA, ys = int(y) - R, bz = int(b);
  const int planes = int(z1 - z0) + 2 * R;
  int slot = 0, refill = slots - 1;
  std::uint32_t phase = 0;
  if constexpr (TMA) {
    tr.init(slots, lane);
    for (int k = 0; k + 1 < slots && k < planes; ++k) tr.issue(lane, k, xs, ys, int(z0) - R + k, bz);
  }
  if constexpr (RING) {
#pragma unroll
    for (int k = 0; k + 1 < kRingSlots; ++k) fill(k, z0 - R + k / NR, k % NR);
  }
  T v[NV];
  // The register prefetch keeps DEPTH rows in flight: row n (march order) sits in
  // pipe[n % DEPTH], refilled with row n + DEPTH as soon as it is in v. DEPTH divides NR, so
  // n % DEPTH = t % DEPTH is a constant in the unrolled row loop.
  static_assert(NR % DEPTH == 0, "the prefetch depth divides the rows per plane");
  RowOf<T, NV> pipe[PF ? DEPTH : 1];
  if constexpr (PF) {
#pragma unroll
    for (int k = 0; k < DEPTH; ++k) fetch(pipe[k], z0 - R + k / NR, k % NR);
  }
  for (std::int64_t s = z0 - R; s < z1 + R; ++s) {
    const bool live = s >= 0 && s < g.nz;  // a ghost plane adds nothing
    if constexpr (TMA) {
      tr.wait(slot, phase);
      __syncwarp();  // every lane is done with the plane read last, whose slot is refilled now
      const int m = int(s - z0) + R + slots - 1;  // the plane whose copy goes out now
      if (m < planes) tr.issue(lane, refill, xs, ys, int(z0) - R + m, bz);
    }
#pragma unroll
    for (int t = 0; t < NR; ++t) {  // input row y - R + t
      if constexpr (RING) {
        ring.template wait<kRingSlots - 2>();
        __syncwarp();  // every lane's copies of this row landed; all done with the last slot
        constexpr int ahead = kRingSlots - 1;  // fill row n + ahead: plane s + (t+ahead)/NR
        fill(int((n + ahead) % kRingSlots), s + (t + ahead) / NR, (t + ahead) % NR);
        if (live) ring.read(int(n % kRingSlots), lane * kTx, v);
        ++n;
      } else if constexpr (TMA) {
        if (live) tr.read(slot, t, lane * kTx, v);
      } else if constexpr (PF) {
        const int ahead = t + DEPTH;  // row ahead % NR of plane s + ahead / NR
        take_row(pipe, t % DEPTH, s + ahead / NR < z1 + R, v,
                 [&](RowOf<T, NV>& w) { fetch(w, s + ahead / NR, ahead % NR); });
      } else {
        RowOf<T, NV> row;
        fetch(row, s, t);
#pragma unroll
        for (int i = 0; i < NV; ++i) v[i] = row.v[i];
      }
      if (live) add_row<T, R, YB>(acc, v, t, taps);
    }
    if constexpr (TMA) {
      if (++slot == slots) slot = 0, phase ^= 1u;
      if (++refill == slots) refill = 0;
    }
    // After the plane: output plane `done` (acc[.][0]) is complete; it is stored where it lies in
    // the warp's chunk and the array, and the accumulators shift by one plane. (Written out
    // here: through a helper shared with tile3d, nvcc gave this kernel more registers, so fewer
    // warps fit: docs/notes/tuning.md, 3D.)
    const std::int64_t done = s - R;
#pragma unroll
    for (int yy = 0; yy < YB; ++yy) {
      if (done >= z0 && x0 < g.nx && y + yy < g.ny) {
        g.finish.apply(acc[yy][0], probe);
        store4(dst + done * plane + (y + yy) * g.nx, x0, g.nx, g.vec, acc[yy][0]);
      }
#pragma unroll
      for (int q = 0; q + 1 < K; ++q)
#pragma unroll
        for (int j = 0; j < kTx; ++j) acc[yy][q][j] = acc[yy][q + 1][j];
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[yy][K - 1][j] = T(0);
    }
  }
  g.finish.note(probe);
}

// The block-wide plane ring (f32): a block of kTileWarps warps owns a tile of 128 columns x
// kTileWarps*YB rows and marches along z; each input plane's box (the tile and its halo,
// W x (kTileWarps*YB + 2R) elements) comes into a BlockRing slot in one TMA copy, zeros outside
// the array, and every warp reads its 2R+YB rows from it. Against the per-warp TMA ring, an input
// row of the tile is copied once for the block instead of once per warp that needs it
// ((2R+YB)/YB times), and the slots-1 planes in flight cost no registers.
// How the tiles' columns of output planes are shared out among the blocks (runs_of_planes()):
// - in z-chunks of equal length, a block per (chunk, tile), neighbouring tiles of a chunk in
//   neighbouring blocks: they march in step, so the halo rows one tile reads of its neighbour's
//   hit in L2 (what a memory-bound radius wants);
// - in equal runs, one per resident block, of the columns laid end to end (tile after tile, each
//   tile's planes in z order; a run that crosses from one column into the next is marched as two
//   segments): one wave with no partly filled tail, and the 2R halo planes (read, and their
//   FFMAs run) once or twice per block instead of once per chunk (what an FFMA-bound radius
//   wants: neighbouring tiles drift apart in z, so more halo rows come from DRAM).
constexpr int kTileWarps = kTileWarps3D;  // fast/policy.hpp counts a slot's rows with it

// A slot of the block ring: the tile's box (W x H elements) and, where the kernel applies the
// modes (EDGES), two side boxes of kSide columns x H rows after it: wrap's far columns, the
// row ends [nx - kSide, nx) beside a tile at the left edge and [0, kSide) at the right.
constexpr int kSide = 4;  // a 16-byte column group, the narrowest box
template <int R, int YB, bool EDGES>
struct TileSlot {
  static constexpr int W = 32 * kTx + 2 * round_up4(R), TY = kTileWarps * YB, H = TY + 2 * R;
  static constexpr int kBoxBytes = W * H * int(sizeof(float));
  static constexpr int kSideBytes = kSide * H * int(sizeof(float));
  static constexpr int kSideAt = slot_size(kBoxBytes);      // bytes: the left side box
  static constexpr int kSideStride = slot_size(kSideBytes);  // bytes: the right one after it
  static constexpr int kBytes = EDGES ? kSideAt + 2 * kSideStride : slot_size(kBoxBytes);
  // Most ghost cells a slot sets: 2R rows of the box and of the side boxes, and 2R columns.
  static constexpr int kPatches = EDGES ? 2 * R * (W + H + 2 * kSide) : 1;
  static_assert(kBytes / int(sizeof(float)) < 0xffff, "a patch's offsets fit in 16 bits");
  // Wrap along y (Work::yseam): the seam tile's slot holds the last kSeamRows rows of the array
  // above its first H - kSeamRows, two copies each of the box and of a side box; kSeamRows
  // rows of either are whole 128-byte units, so the second copy lands where a copy may.
  static constexpr int kSeamRows = 8;
  static_assert(kSeamRows * W * int(sizeof(float)) % 128 == 0 &&
                    kSeamRows * kSide * int(sizeof(float)) % 128 == 0 && kSeamRows < H &&
                    kSeamRows >= 2 * R,
                "the seam's copies split at a 128-byte boundary, below the tile's outputs");
};

// The tensor maps of the seam tile's split copies (Work::yseam): the box's top kSeamRows rows
// and the rest, and the same of the side boxes (or of the x-seam tile's box, in the kernel of x
// mode wrap).
struct SeamMaps {
  CUtensorMap top, rest, xtop, xrest;
};

// The kernel template's x mode (XM): the zero-ghost kernel (no modes); the modes with the x ghost
// cells set in the slot from the table of build_patches() (or none, where x is not applied); or
// the x mode as an int(Boundary) (constant: cval), the x ghosts then set in registers
// (set_x_ghosts(); the layouts of x_ghosts_in_registers()). Setting them in registers spares
// the tiles at a row end their cells and block barrier, but costs every row read a select per
// ghost column: at r = 2 the registers measured faster, at r = 3 the table (docs/notes/tuning.md,
// Border pass).
constexpr int kZeroGhosts = -2, kXTable = -1;

// The ghost cells of a segment's slots that the y mode, and with XTABLE the x mode, set (z's
// ghost planes come mapped by the copies), as a table of (cell | source << 16) offsets in floats
// from the slot, built once per segment so that a plane costs a shared load and store per cell.
// Source 0xffff is cval. The cells are the ghosts that a stored output's window reaches, [-R, 0)
// and [n, n + R) on an axis whose mode is applied; the sources are the cells a mode maps them to,
// within R + 1 of the edge, inside the tile's box, since the host applies a mode only where the
// axis has 2R + 1 elements or more; wrap's far columns lie in the side boxes. Without XTABLE the
// x ghosts are set in registers (and wrap along x takes the x-seam tile). In the seam tile
// (`seam`) the box's rows are all the array's, those above 0 from its end; in the x-seam tile
// (`xinside`) all its columns are. Returns the table's length, the same in every thread.
template <int R, int YB, bool XTABLE>
__device__ int build_patches(std::uint32_t* table, int* count, const Work& g, int xs, int ys,
                             bool seam, bool xinside) {
  using S = TileSlot<R, YB, true>;
  __syncthreads();  // every thread has read the previous segment's count
  if (threadIdx.x == 0) *count = 0;
  __syncthreads();
  const auto my = static_cast<Boundary>(g.ymode), mx = static_cast<Boundary>(g.xmode);
  const int ny = int(g.ny), nx = int(g.nx);
  const bool x_in_table = XTABLE && g.xmode >= 0;
  auto add = [&](int cell, int src) {
    table[atomicAdd(count, 1)] = std::uint32_t(cell) | std::uint32_t(src) << 16;
  };
  // The row a ghost row gy reads, relative to the box (only where ymode is applied).
  auto source_row = [&](int gy) { return detail::map_index_as<int>(gy, ny, my) - ys; };
  for (int i = threadIdx.x; i < S::W * S::H; i += blockDim.x) {
    const int h = i / S::W, c = i % S::W, gx = xs + c;
    const int gy = seam && ys + h < 0 ? ys + h + ny : ys + h;
    const bool iny = gy >= 0 && gy < ny, inx = xinside || (gx >= 0 && gx < nx);
    if ((iny && inx) || gy < -R || gy >= ny + R || (!xinside && (gx < -R || gx >= nx + R)))
      continue;
    if ((!iny && g.ymode < 0) || (!inx && !x_in_table)) continue;
    int src = 0xffff;
    if ((iny || my != Boundary::constant) && (inx || mx != Boundary::constant)) {
      const int hs = iny ? h : source_row(gy);
      if (inx)
        src = hs * S::W + c;
      else if (mx == Boundary::wrap)
        src = (S::kSideAt + (gx < 0 ? 0 : S::kSideStride)) / int(sizeof(float)) + hs * kSide +
              (gx < 0 ? gx + kSide : gx - nx);
      else
        src = hs * S::W + detail::map_index_as<int>(gx, nx, mx) - xs;
    }
    add(i, src);
  }
  __syncthreads();
  return *count;
}

// The x ghost columns of one row of a slot, set in the registers of the lane that reads them
// (XM >= 0 but wrap, which the x-seam tile serves), so that no cell of the slot is written for x
// and tiles at a row end need no block barrier. The lane whose 16-byte group is the row's first
// (lo) holds columns -RA .. -1 in v[0 .. RA), the one whose group is the row's last (hi, nx a
// multiple of 4 under the block ring) columns nx .. nx + RA - 1 in v[RA + kTx ..); their sources
// are the lane's own columns, found at compile time by the shared index map (on any axis of
// 2R + 1 elements or more they lie within R + 1 <= kTx of the edge, where any such extent maps
// alike), or cval.
template <int R, int XM>
__device__ __forceinline__ void set_x_ghosts(float (&v)[kTx + 2 * round_up4(R)], bool lo, bool hi,
                                             float cval) {
  constexpr int RA = round_up4(R);
  static_assert(XM < 0 || R < kTx, "the sources lie in the lane's group");
  if constexpr (XM >= 0 && XM != int(Boundary::wrap)) {
    constexpr int n = 4 * kTx;  // an extent of 2R + 1 or more
    constexpr auto m = static_cast<Boundary>(XM);
#pragma unroll
    for (int k = 1; k <= R; ++k) {
      const int l = detail::map_index_as<int>(-k, n, m);         // column -k reads l
      const int h = detail::map_index_as<int>(n - 1 + k, n, m);  // column nx - 1 + k reads h
      v[RA - k] = lo ? (l < 0 ? cval : v[RA + l]) : v[RA - k];
      v[RA + kTx - 1 + k] = hi ? (h < 0 ? cval : v[RA + h - (n - kTx)]) : v[RA + kTx - 1 + k];
    }
  }
}

// One segment of a tile3d block's run: the tile's output planes [z0, z1), marching up from input
// plane z0 - R to z1 + R - 1. The ring's cursors go on from the block's previous segment.
// After each input plane, the oldest output plane (acc[.][0]) is complete: it is stored (and
// added to the thread's probe, which tile3d notes once at its end), and the accumulators shift
// by one plane. (Rotating them instead, the march unrolled by 2R+1 planes so
// that nothing moves, measured slower at r = 2, where it makes five copies of a plane's FFMAs, and
// no faster at r = 1: docs/notes/tuning.md, 3D block ring.)
// XM (kZeroGhosts: none): the boundary modes Work::zmode, ymode and xmode are applied (separate
// instantiations, so that the zero-ghost kernels keep their registers): the ghost planes are
// copied from the planes zmode maps them to; after each plane lands, the blocks of the tiles at
// an edge set the slot's ghost cells from the table of build_patches() and wait at a block
// barrier; every warp then reads it as the zero-ghost kernel does. Where XM names the x mode,
// the table holds only ghost rows, and the lanes at a row end set their x ghost columns in
// registers as each row is read (set_x_ghosts()). Wrap along x: in the kernel with the table,
// a tile at a row end copies the far end's columns into side boxes (`xmap`); in the kernel of XM
// wrap, the strips start 64 columns (half a strip) left, and strip 0, the
// x-seam tile, takes the row's first 64 + RA columns and its last 64 + RA as one box of W
// columns (`xmap`: a tensor map of two halves, nx - 64 - RA columns apart); every lane then
// reads its window from the slot's row, the window of the row's first group (lane 0) and of its
// last (lane 31) wrapping within the row: no side box, no column read twice from memory. Wrap
// along y (Work::yseam = h): the y-tiles start h rows up, so that tile 0 spans the seam
// (`seam`: its rows above 0 are the array's last, copied from there), and the last tile ends h
// rows short; no tile then has a ghost row to set. (Warp 0
// setting the cells a plane ahead and marking the slot on an mbarrier, with no block barrier,
// measured slower: docs/notes/tuning.md, Border pass.)
template <int R, int YB, int XM>
__device__ __forceinline__ void march_segment(
    float* __restrict__ dst, const Work& g,
    const Taps<float, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)>& taps, const CUtensorMap* map,
    const CUtensorMap* xmap, const SeamMaps* seams, std::uint32_t* patch_table, int* patch_count,
    const BlockRing& ring, BlockRing::Cursor& put, BlockRing::Cursor& get, int slots, int hints,
    std::int64_t strip, std::int64_t yt, std::int64_t b, std::int64_t z0, std::int64_t z1,
    float& probe) {
  constexpr bool EDGES = XM != kZeroGhosts;
  using S = TileSlot<R, YB, EDGES>;
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx + 2 * RA;
  constexpr int NR = K + YB - 1;  // input rows per warp and plane
  constexpr int W = S::W, TY = S::TY;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int shift = EDGES ? g.yseam : 0;  // rows the y-tiles start higher (wrap along y)
  const bool seam = EDGES && shift > 0 && yt == 0;
  const std::int64_t ytop = yt * TY - shift;  // the tile's first output row (seam: negative)
  const std::int64_t y = ytop + warp * YB;
  // The x-seam tile (XSEAM): lanes 0-15 hold the row's first 64 columns, at box columns
  // [0, 64); lanes 16-31 its last 64, at [64 + 2 RA, W); the other strips start 64 left.
  constexpr bool XSEAM = XM == int(Boundary::wrap);
  constexpr int kHalf = 16 * kTx;
  const bool xseam = XSEAM && strip == 0;
  const std::int64_t x0 = xseam ? (lane < 16 ? lane * kTx : g.nx - 2 * kHalf + lane * kTx)
                                : strip * (32 * kTx) - (XSEAM ? kHalf : 0) + lane * kTx;
  const std::int64_t plane = g.ny * g.nx;
  // The lane's outputs: inside the rows (`cols`, and short of the x-seam tile's last columns),
  // as one whole 16-byte group (`full`); the warp's output rows that it stores: y .. y +
  // rows_in - 1 (inside the array; with the seam, those from ny - shift on are the seam tile's,
  // which stores its rows above 0 at the end).
  const std::int64_t xend = XSEAM && !xseam ? g.nx - kHalf : g.nx;
  const bool cols = x0 < xend, full = g.vec && x0 + kTx <= xend;
  // The lanes whose columns start or end a row (set_x_ghosts(); the x-seam tile's lanes 0, 31).
  const bool xlo = XM >= 0 && x0 == 0, xhi = XM >= 0 && x0 + kTx == g.nx;
  // Where the lane's window starts in a slot row, and where its first and last groups do from
  // there: in the x-seam tile, lane 0's first group is the row's last columns (box columns
  // W - RA ..), lane 31's last group the row's first (box columns 0 ..).
  static_assert(!XSEAM || (RA == kTx && NV == 3 * kTx), "the x-seam tile's window is 3 groups");
  const int lane_at = lane * kTx + (xseam ? (lane < 16 ? -RA : RA) : 0);
  const int lo_at = xseam && xlo ? W : 0, hi_at = xseam && xhi ? RA + kTx - W : RA + kTx;
  const std::int64_t rows_in = (seam ? g.ny : g.ny - shift) - y;
  // Output row y of plane 0; in the seam tile, rows above 0 lie at the array's end, and a warp
  // whose rows cross the seam goes back a plane's length after it.
  float* const out0 = dst + (EDGES && y < 0 ? y + g.ny : y) * g.nx;

  // Step m of the march is plane z0 - R + m (ghost planes come as zeros and add nothing).
  const int planes = int(z1 - z0) + 2 * R;
  const int xs = int(strip * (32 * kTx)) - (XSEAM ? kHalf : 0) - RA, ys = int(ytop) - R,
            zs = int(z0) - R;
  int issued = 0;
  // With zmode, a ghost plane's box is copied from the plane the mode maps it to; with wrap
  // along x in the kernel with the table, a tile at a row end also copies the far end's columns
  // into a side box.
  const bool zmapped = EDGES && g.zmode >= 0;
  const bool wrap_x = EDGES && !XSEAM && g.xmode == int(Boundary::wrap);
  const bool side_lo = wrap_x && xs < 0, side_hi = wrap_x && xs + W > g.nx;
  auto produce = [&] {  // thread 0: the next plane's box into the next slot
    ring.acquire(put);
    int z = zs + issued;
    if (zmapped && (z < 0 || z >= g.nz))
      z = detail::map_index_as<int>(z, int(g.nz), static_cast<Boundary>(g.zmode));
    if (side_lo || side_hi) {
      ring.expect_more(put, (int(side_lo) + int(side_hi)) * S::kSideBytes);
      // A side box at byte `at` of the slot, from column x; the seam tile's in two copies.
      auto side_box = [&](int at, int x) {
        if (seam) {
          ring.issue_box_at(put, at, &seams->xtop, x, int(g.ny) - S::kSeamRows, z, int(b));
          ring.issue_box_at(put, at + S::kSeamRows * kSide * int(sizeof(float)), &seams->xrest,
                            x, 0, z, int(b));
        } else {
          ring.issue_box_at(put, at, xmap, x, ys, z, int(b));
        }
      };
      if (side_lo) side_box(S::kSideAt, int(g.nx) - kSide);
      if (side_hi) side_box(S::kSideAt + S::kSideStride, 0);
    }
    // Coordinate k of the box from row r: (xs, r, z, b); the x-seam tile's maps index (column,
    // half, row, batch * nz + plane).
    auto at = [&](int r, int k) {
      const int tile[4] = {xs, r, z, int(b)}, xtile[4] = {0, 0, r, int(b * g.nz) + z};
      return xseam ? xtile[k] : tile[k];
    };
    if (seam) {  // the array's last kSeamRows rows above its first H - kSeamRows
      constexpr int kTop = S::kSeamRows * W * int(sizeof(float));
      const int top = int(g.ny) - S::kSeamRows;
      ring.expect_more(put, kTop);
      ring.issue_box_at(put, 0, xseam ? &seams->xtop : &seams->top, at(top, 0), at(top, 1),
                        at(top, 2), at(top, 3));
      ring.issue_box(put, xseam ? &seams->xrest : &seams->rest, at(0, 0), at(0, 1), at(0, 2),
                     at(0, 3), S::kBoxBytes - kTop, hints & 1, kTop);
    } else {
      ring.issue_box(put, xseam ? xmap : map, at(ys, 0), at(ys, 1), at(ys, 2), at(ys, 3),
                     S::kBoxBytes, hints & 1);
    }
    put.next(slots);
    ++issued;
  };
  if (threadIdx.x == 0)
    while (issued + 1 < slots && issued < planes) produce();
  int patches = 0;
  if constexpr (EDGES)
    patches = build_patches<R, YB, XM == kXTable>(patch_table, patch_count, g, xs, ys, seam, xseam);

  float acc[YB][K][kTx];
#pragma unroll
  for (int yy = 0; yy < YB; ++yy)
#pragma unroll
    for (int q = 0; q < K; ++q)
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[yy][q][j] = 0.f;

  for (int m = 0; m < planes; ++m) {
    if (threadIdx.x == 0 && issued < planes) produce();  // slots - 1 planes ahead
    const std::int64_t s = z0 - R + m;
    ring.wait(get);
    if (zmapped || (s >= 0 && s < g.nz)) {
      if constexpr (EDGES) {
        if (patches > 0) {  // the same in every thread of the block
          float* const cells = ring.at_mutable<float>(get);
          // A fixed, unrolled count of cells per thread (a loop to `patches` cost the march's
          // rows registers: 96 instead of 127 at r = 2, and 10% of its time).
          constexpr int kThreads = 32 * kTileWarps;
#pragma unroll
          for (int q = 0; q < (S::kPatches + kThreads - 1) / kThreads; ++q) {
            const int i = threadIdx.x + q * kThreads;
            if (i < patches) {
              const std::uint32_t e = patch_table[i];
              const std::uint32_t from = e >> 16;
              cells[e & 0xffffu] = from == 0xffffu ? g.cval : cells[from];
            }
          }
          fence_proxy_async_shared();  // before the slot's next copy overwrites these cells
          __syncthreads();
        }
      }
      const float* rows = ring.at<float>(get) + warp * YB * W + lane_at;
      // The x-seam tile's window groups that wrap within the row (XSEAM).
      const float* lo_group = rows + lo_at;
      const float* hi_group = rows + hi_at;
#pragma unroll
      for (int t = 0; t < NR; ++t) {  // input row y - R + t
        float v[NV];
        if constexpr (XSEAM) {
          auto group = [&](const float* p, int at) {  // v[at .. at + 4) = p[0 .. 4)
            const float4 f = *reinterpret_cast<const float4*>(p);
            v[at] = f.x, v[at + 1] = f.y, v[at + 2] = f.z, v[at + 3] = f.w;
          };
          group(lo_group + t * W, 0);
          group(rows + t * W + RA, RA);
          group(hi_group + t * W, RA + kTx);
        } else {
          read_groups(rows + t * W, v);
          set_x_ghosts<R, XM>(v, xlo, xhi, g.cval);
        }
        add_row<float, R, YB>(acc, v, t, taps);
      }
    }
    ring.release(get, lane);
    get.next(slots);
    const std::int64_t done = s - R;  // the output plane completed
    if (done >= z0 && cols) {
      float* const o = out0 + done * plane;
#pragma unroll
      for (int yy = 0; yy < YB; ++yy) {
        if (yy >= rows_in) break;
        float* const row = EDGES && y < 0 && y + yy >= 0 ? o + yy * g.nx - plane : o + yy * g.nx;
        float(&a)[kTx] = acc[yy][0];
        g.finish.apply(a, probe);
        if (full && (hints & 2))
          store16_cs(row + x0, a[0], a[1], a[2], a[3]);
        else if (full)
          store16(row + x0, a[0], a[1], a[2], a[3]);
        else
          store4(row, x0, g.nx, g.vec, a);
      }
    }
#pragma unroll
    for (int yy = 0; yy < YB; ++yy) {
#pragma unroll
      for (int q = 0; q + 1 < K; ++q)
#pragma unroll
        for (int j = 0; j < kTx; ++j) acc[yy][q][j] = acc[yy][q + 1][j];
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[yy][K - 1][j] = 0.f;
    }
  }
}

// Blocks of tile3d per multiprocessor that its registers must allow (its launch bound): one
// y-row 3; two y-rows 3 up to r = 2, 2 at r = 3 (unbounded, equal runs took 179 registers
// there), 1 beyond; four y-rows 1. The exception: two y-rows in equal runs up to r = 2 get 2, so
// nvcc may take 121 registers at r = 2 (the z-chunk kernel has 80), which measured faster than
// capped at 3 blocks (docs/notes/tuning.md, 3D: equal runs of tile-planes).
__host__ __device__ constexpr int tile_min_blocks(int R, int YB, bool runs) {
  return YB == 1 ? 3 : YB == 2 ? (R >= 4 ? 1 : R == 3 || runs ? 2 : 3) : 1;
}

// With RUNS, the blocks take equal runs (per_block planes each), else z-chunks (per_block 0).
// Unless XM is kZeroGhosts, the modes are applied (march_segment); `xmap` is then the side boxes'
// tensor map, or the x-seam tile's (wrap along x).
template <int R, int YB, bool RUNS, int XM>
__global__ void __launch_bounds__(32 * kTileWarps, tile_min_blocks(R, YB, RUNS))
    tile3d(float* __restrict__ out, Work g,
           Taps<float, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)> taps, std::int64_t ytiles,
           const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap xmap,
           const __grid_constant__ SeamMaps seams, int slots, std::int64_t per_block, int hints,
           EdgeCosts costs) {
  constexpr bool EDGES = XM != kZeroGhosts;
  using S = TileSlot<R, YB, EDGES>;
  extern __shared__ __align__(128) unsigned char ring_mem[];
  __shared__ std::uint64_t ring_bar[2][kBlockRingSlots];
  __shared__ std::uint32_t patch_table[S::kPatches];
  __shared__ int patch_count;
  const BlockRing ring{ring_mem, ring_bar[0], ring_bar[1], S::kBytes, slots};
  if (threadIdx.x == 0) ring.template init<kTileWarps>();
  __syncthreads();

  // Tile (b * strips + strip) * ytiles + yt. In equal runs, the block's run is positions
  // [blockIdx.x * per_block, + per_block) of the tiles' columns laid end to end (tile t at
  // positions t * nz .. t * nz + nz - 1); in z-chunks, blockIdx.x = (b * chunks + chunk) * strips
  // * ytiles + (strip * ytiles + yt), and the block marches the chunk's planes of that tile.
  const std::int64_t tiles = ytiles * g.strips;  // per array of the batch
  BlockRing::Cursor put, get;
  float probe = 0.f;  // every output the thread stores, in all its segments (Finish)
  auto march = [&](std::int64_t tile, std::int64_t z0, std::int64_t z1) {
    const std::int64_t yt = tile % ytiles, strip = (tile / ytiles) % g.strips;
    const std::int64_t b = tile / (ytiles * g.strips);
    const std::int64_t item = b * g.nz * g.ny * g.nx;
    march_segment<R, YB, XM>(out + item, g, taps, &map, &xmap, &seams, patch_table, &patch_count,
                             ring, put, get, slots, hints, strip, yt, b, z0, z1, probe);
  };
  if constexpr (RUNS) {
    const std::int64_t total = tiles * g.batch * g.nz;
    std::int64_t at = std::int64_t(blockIdx.x) * per_block;
    std::int64_t end = at + per_block < total ? at + per_block : total;
    if constexpr (EDGES) {  // per_block is a cost: the run's positions where it starts and ends
      const std::int64_t all = tiles * g.batch, c = costs.cost(all);
      end = costs.pos(at + per_block < c ? at + per_block : c, all);
      at = costs.pos(at, all);
    }
    while (at < end) {
      const std::int64_t tile = at / g.nz, z0 = at % g.nz;
      const std::int64_t z1 = z0 + (end - at) < g.nz ? z0 + (end - at) : g.nz;
      march(tile, z0, z1);
      at += z1 - z0;
    }
  } else {
    const std::int64_t item = blockIdx.x, chunk = (item / tiles) % g.chunks;
    const std::int64_t z0 = chunk * g.chunk;
    march(item / (tiles * g.chunks) * tiles + item % tiles, z0,
          z0 + g.chunk < g.nz ? z0 + g.chunk : g.nz);
  }
  g.finish.note(probe);
}

// Calls go(kernel, RUNS) with the tile3d kernel of the layout and the x mode (a function, not a
// generic lambda: nvcc then registers every kernel it names).
template <int R, int YB, bool RUNS, class Go>
void pick_tile3d(bool edges, int xmode, Go&& go) {
  if (!edges) return go(tile3d<R, YB, RUNS, kZeroGhosts>, RUNS);
  if constexpr (x_ghosts_in_registers(R, YB, RUNS)) {
    switch (xmode) {
      case int(Boundary::constant):
        return go(tile3d<R, YB, RUNS, int(Boundary::constant)>, RUNS);
      case int(Boundary::nearest):
        return go(tile3d<R, YB, RUNS, int(Boundary::nearest)>, RUNS);
      case int(Boundary::reflect):
        return go(tile3d<R, YB, RUNS, int(Boundary::reflect)>, RUNS);
      case int(Boundary::mirror):
        return go(tile3d<R, YB, RUNS, int(Boundary::mirror)>, RUNS);
      case int(Boundary::wrap):
        return go(tile3d<R, YB, RUNS, int(Boundary::wrap)>, RUNS);
      default:
        break;
    }
  }
  go(tile3d<R, YB, RUNS, kXTable>, RUNS);
}

// Runs tile3d (the policy chose the block ring). In equal runs: one block per resident slot on
// the GPU (fewer where a run would be shorter than pol.shortest_run tile-planes). False where the
// input's tensor map cannot be encoded after all; else `applied` gets the canonical axes whose
// modes the kernel applied.
template <int R, int YB>
bool launch_tile(const float* in, float* out, Work g,
                 const Taps<float, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)>& taps,
                 const FastPolicy& pol, cudaStream_t stream, unsigned* applied) {
  using S = TileSlot<R, YB, true>;
  constexpr int W = S::W, TY = S::TY, H = S::H;
  // Wrap along y: the seam tile, where the axis holds a whole tile (else the border pass's).
  if (g.ymode == int(Boundary::wrap)) {
    g.ymode = -1;
    if (g.ny >= TY) g.yseam = S::kSeamRows - R;
  }
  const bool edges = g.zmode >= 0 || g.ymode >= 0 || g.xmode >= 0 || g.yseam > 0;
  const bool wrap_x = g.xmode == int(Boundary::wrap);
  CUtensorMap map{}, xmap{};
  SeamMaps seams{};
  auto encode = [&](CUtensorMap* m, int w, int rows) {
    return make_row_map(m, in, int(sizeof(float)), g.nx, g.ny, g.nz, g.batch, w, rows,
                        pol.l2_promotion);
  };
  if (!encode(&map, W, H) || (g.yseam > 0 && (!encode(&seams.top, W, S::kSeamRows) ||
                                               !encode(&seams.rest, W, H - S::kSeamRows))))
    return false;
  // Wrap along x: the x-seam tile where the kernel sets x in registers and the row holds both
  // halves of it apart, else side boxes and the table.
  bool xseam = false;
  if (wrap_x && x_ghosts_in_registers(R, YB, pol.runs)) {
    constexpr int kHalfW = 16 * kTx + round_up4(R);
    auto seam_map = [&](CUtensorMap* m, int rows) {
      return make_seam_map(m, in, int(sizeof(float)), g.nx, g.ny, g.nz, g.batch, kHalfW, rows,
                           pol.l2_promotion);
    };
    xseam = seam_map(&xmap, H) && (g.yseam == 0 || (seam_map(&seams.xtop, S::kSeamRows) &&
                                                     seam_map(&seams.xrest, H - S::kSeamRows)));
  }
  // Whether the kernel sets x's ghost cells from its table (the layouts without registers for x,
  // and wrap where the x-seam tile cannot serve); that kernel is then kXTable.
  const bool x_in_table =
      g.xmode >= 0 && (!x_ghosts_in_registers(R, YB, pol.runs) || (wrap_x && !xseam));
  if (wrap_x && !xseam &&
      (!encode(&xmap, kSide, H) ||
       (g.yseam > 0 && (!encode(&seams.xtop, kSide, S::kSeamRows) ||
                        !encode(&seams.xrest, kSide, H - S::kSeamRows)))))
    return false;
  if (applied)
    *applied |= (g.zmode >= 0 ? kAxisZ : 0u) | (g.ymode >= 0 || g.yseam > 0 ? kAxisY : 0u) |
                (g.xmode >= 0 ? kAxisX : 0u);
  const int slots = pol.slots;
  const std::size_t smem =
      std::size_t(slots) * (edges ? S::kBytes : TileSlot<R, YB, false>::kBytes);
  const std::int64_t ytiles = (g.ny + TY - 1) / TY;
  const std::int64_t tiles = ytiles * g.strips * g.batch;
  const int sms = pol.multiprocessors;
  // With the modes, the runs are equal in cost (EdgeCosts), not in tile-planes.
  EdgeCosts costs;
  if (edges) {
    costs.strips = g.strips;
    costs.ytiles = ytiles;
    costs.nz = g.nz;
    costs.ends = g.zmode >= 0 ? R : 0;
    costs.plain = 100;
    costs.edge = 100 + pol.edge_cost;
    costs.xe = x_in_table;
    costs.ye = g.ymode >= 0;
  }
  auto go = [&](auto kernel, bool runs) {
    if (runs) {
      const std::int64_t total = tiles * g.nz;
      std::int64_t per_block =
          even_runs(total, pol.shortest_run, resident_blocks(kernel, 32 * kTileWarps, smem, sms),
                    pol.chunk);
      g.items = (total + per_block - 1) / per_block;
      if (edges) {  // the same number of runs, of equal cost
        const std::int64_t cost = costs.cost(tiles);
        per_block = (cost + g.items - 1) / g.items;
        g.items = (cost + per_block - 1) / per_block;
      }
      kernel<<<dim3(unsigned(g.items)), 32 * kTileWarps, smem, stream>>>(
          out, g, taps, ytiles, map, xmap, seams, slots, per_block, pol.hints, costs);
    } else {
      fit_chunks(g, g.nz, tiles, R, resident_blocks(kernel, 32 * kTileWarps, smem, sms),
                 pol.chunk);
      g.items = tiles * g.chunks;
      kernel<<<dim3(unsigned(g.items)), 32 * kTileWarps, smem, stream>>>(
          out, g, taps, ytiles, map, xmap, seams, slots, 0, pol.hints, costs);
    }
  };
  const int xkernel = x_in_table ? kXTable : g.xmode;  // the x mode of the kernel
  if (pol.runs)
    pick_tile3d<R, YB, true>(edges, xkernel, go);
  else
    pick_tile3d<R, YB, false>(edges, xkernel, go);
  return true;
}

// The per-warp kernels of YB y-rows per warp, fed as `how` says (the policy's path, or its
// fallback where the block ring's or the TMA ring's tensor map cannot be encoded after all).
template <class T, int R, int YB>
void launch(const T* in, T* out, Work g, Taps<T, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)> taps,
            const FastPolicy& pol, RowPath how, cudaStream_t stream) {
  const std::int64_t ygroups = (g.ny + YB - 1) / YB;
  CUtensorMap map{};
  int slots = 1;
  auto go = [&](auto kernel, std::size_t smem = 0) {  // smem: dynamic (the TMA ring)
    // (resident_warps also sets the kernel's shared-memory limit to smem)
    fit_chunks(g, g.nz, ygroups * g.strips * g.batch, R,
               resident_warps(kernel, smem, pol.multiprocessors), pol.chunk);
    g.items = ygroups * g.strips * g.chunks * g.batch;
    const std::int64_t blocks = (g.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
    kernel<<<dim3(unsigned(blocks)), kThreads, smem, stream>>>(in, out, g, taps, ygroups, map,
                                                                slots);
  };
  if (how.feed == Feed::kTma) {
    constexpr int W = 32 * kTx + 2 * round_up4(R), NR = 2 * R + YB;
    slots = pol.slots;
    if (make_row_map(&map, in, int(sizeof(T)), g.nx, g.ny, g.nz, g.batch, W, NR,
                     pol.l2_promotion)) {
      go(stream3d<T, R, YB, Feed::kTma>,
         std::size_t(kWarpsPerBlock) * slots * TmaRing<T, W>::slot_bytes(NR));
      return;
    }
    how = pol.fallback;  // the tensor map could not be encoded after all
  }
  switch (how.feed) {
    case Feed::kRing:
      go(stream3d<T, R, YB, Feed::kRing>);
      break;
    case Feed::kPrefetch:
      if constexpr (std::is_same<T, float>::value && R >= 1 && R <= 2) {
        constexpr int NR = 2 * R + YB;
        const int d = how.depth;
        if constexpr (NR % 4 == 0) {
          if (d == 4) {
            go(stream3d<T, R, YB, Feed::kPrefetch, 4>);
            break;
          }
        }
        if constexpr (NR % 3 == 0) {
          if (d == 3) {
            go(stream3d<T, R, YB, Feed::kPrefetch, 3>);
            break;
          }
        }
        if constexpr (NR % 2 == 0) {
          if (d == 2) {
            go(stream3d<T, R, YB, Feed::kPrefetch, 2>);
            break;
          }
        }
      }
      go(stream3d<T, R, YB, Feed::kPrefetch>);
      break;
    case Feed::kDirect:
    case Feed::kTma:  // handled above
    case Feed::kBlock:
      go(stream3d<T, R, YB, Feed::kDirect>);
      break;
  }
}

// The per-warp kernels for the path's rows per warp (1 or 2; two compiled for f32 r >= 1).
template <class T, int R>
void launch_rows(const T* in, T* out, const Work& g,
                 const Taps<T, (2 * R + 1) * (2 * R + 1) * (2 * R + 1)>& taps,
                 const FastPolicy& pol, const RowPath& how, cudaStream_t stream) {
  if constexpr (std::is_same<T, float>::value && R >= 1) {
    if (how.rows_per_warp >= 2) return launch<T, R, 2>(in, out, g, taps, pol, how, stream);
  }
  launch<T, R, 1>(in, out, g, taps, pol, how, stream);
}

template <class T, int R>
void run(const T* in, T* out, const Work& g, const FastPolicy& pol, const double* window,
         cudaStream_t stream, unsigned* applied) {
  constexpr int N = (2 * R + 1) * (2 * R + 1) * (2 * R + 1);
  Taps<T, N> taps;
  for (int i = 0; i < N; ++i) taps.w[i] = T(window[i]);
  bool launched = false;
  if constexpr (std::is_same<T, float>::value && R >= 1) {
    if (pol.path.feed == Feed::kBlock) {
      // The block ring applies the modes it was given (Work::zmode, ymode, xmode).
      if constexpr (R <= 2) {  // four rows per warp: block ring, r <= 2
        if (pol.path.rows_per_warp == 4)
          launched = launch_tile<R, 4>(in, out, g, taps, pol, stream, applied);
      }
      if (pol.path.rows_per_warp == 2)
        launched = launch_tile<R, 2>(in, out, g, taps, pol, stream, applied);
      if (pol.path.rows_per_warp == 1)
        launched = launch_tile<R, 1>(in, out, g, taps, pol, stream, applied);
      if (!launched) launch_rows<T, R>(in, out, g, taps, pol, pol.fallback, stream);
      launched = true;
    }
  }
  if (!launched) launch_rows<T, R>(in, out, g, taps, pol, pol.path, stream);
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 3D (r=" + std::to_string(R) + ", " +
                                          std::to_string(g.nz) + "x" + std::to_string(g.ny) +
                                          "x" + std::to_string(g.nx) + ")");
}

}  // namespace

// The compiled radii: HALO_FAST3D_RADII_F32 / _F64 in fast/policy.hpp.
template <>
bool launch_3d<float>(const float* in, float* out, const Work& g, const FastPolicy& pol,
                      const double* w, cudaStream_t s, unsigned* applied) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<float, R>(in, out, g, pol, w, s, applied), true;
  HALO_FAST3D_RADII_F32(HALO_CASE)
#undef HALO_CASE
  return false;
}

template <>
bool launch_3d<double>(const double* in, double* out, const Work& g, const FastPolicy& pol,
                       const double* w, cudaStream_t s, unsigned* applied) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<double, R>(in, out, g, pol, w, s, applied), true;
  HALO_FAST3D_RADII_F64(HALO_CASE)
#undef HALO_CASE
  return false;
}

namespace {
// A row path in words: the feed and its shape.
std::string named(const FastPolicy& pol, const RowPath& how) {
  return how.feed == Feed::kTma        ? feed_name(how.feed, pol.slots, pol.box_rows)
         : how.feed == Feed::kPrefetch ? feed_name(how.feed, how.depth)
                                       : feed_name(how.feed);
}
}  // namespace

std::string plan_3d(const FastPolicy& pol, const FastPolicy& unaligned) {
  const int R = pol.radius;
  const RowPath& how = pol.path;
  const int rows = how.rows_per_warp;
  // What runs where the input's rows cannot go through a tensor map.
  const std::string other =
      unaligned.path.feed != how.feed
          ? " (where the rows are not 16-byte aligned or their pitch is not a multiple of 16 "
            "bytes: " + named(unaligned, unaligned.path) + ")"
          : "";
  if (how.feed == Feed::kBlock) {
    const int ty = kTileWarps * rows;
    return "a block of " + std::to_string(kTileWarps) + " warps marches along z over a " +
           "128-column x " + std::to_string(ty) + "-row tile (" + std::to_string(rows) +
           " y-row(s) per warp, " + std::to_string(2 * R + 1) +
           " output planes of 4 columns per lane in registers; " +
           (pol.runs ? "one equal run of the tiles' planes per resident block"
                     : "z-chunks, neighbouring tiles in step") +
           "); planes through " + feed_name(how.feed, pol.slots, pol.box_rows) + other;
  }
  return "a warp marches along z over a 128-column strip of " + std::to_string(rows) +
         " y-row(s), " + std::to_string(2 * R + 1) +
         " output planes of 4 columns per lane in registers; " + named(pol, how) + other;
}

}  // namespace halo::cuda::fast
