// The choices of the `fast` strategy (src/cuda/fast/) as one pure host function:
//
//   fast_policy(problem, device facts, alignment) -> FastPolicy
//
// returns every decision its launchers need: the 1-D layout, how rows reach the FFMAs (and what
// runs where no tensor map can be made after all), ring slots and rows per copy, columns per
// lane, Winograd columns, filter passes, prefetch depth, rows per warp, cache hints, L2
// promotion and the inputs of the chunking. The strategy's run(), plan() and summation() all read
// it; the launchers take it instead of deciding again. Plain C++ (no CUDA types, no nvcc), so the
// tests check it on made-up devices in every build. Tuning arrives as a value in the problem
// (Problem::tuning(), FastTuning in halo/tuning.hpp), never through the environment. The measurements
// behind each default are in docs/notes/tuning.md; the kernels they choose sit in
// src/cuda/fast/kernels_1d.cu, fast/kernels_2d.cu and fast/kernels_3d.cu.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/host_device.hpp"
#include "cuda/primitives/device_facts.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda::fast {

// fast is written on the primitives (src/cuda/primitives/): their names, unqualified.
using namespace halo::cuda::prim;

// ---------------------------------------------------------------------------------------------
// Shapes shared by the kernels and the policy.
// ---------------------------------------------------------------------------------------------
// Elements per lane along x: 4 (one 16-byte float4, or two double2).
constexpr int kTx = 4;
constexpr int kWarpsPerBlock = 4;
constexpr int kThreads = 32 * kWarpsPerBlock;
HALO_HOST_DEVICE constexpr int round_up4(int r) { return (r + 3) / 4 * 4; }

// Most slots of a BlockRing (its mbarriers are static shared memory).
constexpr int kBlockRingSlots = 8;
// Slots per warp ring (RowRing): three rows in flight behind the one being read.
constexpr int kRingSlots = 4;

// How a kernel gets its rows: straight from global memory (kDirect), the loads of the next rows
// issued before this row's FFMAs (kPrefetch), through a RowRing (kRing: cp.async into a warp's
// shared-memory ring), through a TmaRing (kTma: the tensor memory accelerator into a warp's ring)
// or through a BlockRing (kBlock: 1D and 3D f32, a ring shared by the block). The order is
// FastFeed's.
enum class Feed { kDirect, kPrefetch, kRing, kTma, kBlock };

// The compiled radii of each rank and dtype (a filter is zero-padded into the window of the
// smallest compiled radius that covers its halo): the launchers instantiate their kernels from
// these lists, so the two cannot drift apart. 2D takes every r up to 8, then a few larger ones.
#define HALO_FAST1D_RADII_F32(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(12) X(16) X(24) X(32) X(48) X(64)
#define HALO_FAST1D_RADII_F64(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(16) X(32)
#define HALO_FAST2D_RADII_F32(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(10) X(12) X(15)
#define HALO_FAST2D_RADII_F64(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#define HALO_FAST3D_RADII_F32(X) X(0) X(1) X(2) X(3) X(4)
#define HALO_FAST3D_RADII_F64(X) X(0) X(1) X(2) X(3)

// The compiled radius that serves a halo of r (the smallest compiled radius >= r), or -1.
inline int compiled_radius(int rank, DType t, int r) {
  int best = -1;
#define HALO_CASE(R) \
  if (best < 0 && R >= r) best = R;
  // A dtype with no list here has no kernels: -1, and can_implement refuses it.
  const bool f32 = t == DType::f32, f64 = t == DType::f64;
  if (rank == 1 && f32) {
    HALO_FAST1D_RADII_F32(HALO_CASE)
  } else if (rank == 1 && f64) {
    HALO_FAST1D_RADII_F64(HALO_CASE)
  } else if (rank == 2 && f32) {
    HALO_FAST2D_RADII_F32(HALO_CASE)
  } else if (rank == 2 && f64) {
    HALO_FAST2D_RADII_F64(HALO_CASE)
  } else if (rank == 3 && f32) {
    HALO_FAST3D_RADII_F32(HALO_CASE)
  } else if (rank == 3 && f64) {
    HALO_FAST3D_RADII_F64(HALO_CASE)
  }
#undef HALO_CASE
  return best;
}

// ---------------------------------------------------------------------------------------------
// What is compiled beyond the default kernel of each radius (the launchers' `if constexpr`
// gates read these, so the policy never picks a kernel that does not exist).
// ---------------------------------------------------------------------------------------------
// 1D: up to this radius a warp owns 128 consecutive outputs, 4 per lane (strip1d); above, a lane
// owns kTxWide (held, wide1d) or 16 / 32 (streamed, stream1d, f32).
constexpr int kStripMaxR = 8;
constexpr int kTxWide = 8;  // 16 measured slower (registers)
// The held layout's next-item prefetch, and the streamed layout's 4 groups ahead, cost registers:
// compiled for f32 up to this radius.
constexpr int kWidePfLimit = 32;
constexpr int kStreamPf = 4;
// The 1D block ring (tile1d): f32 at these radii, 8 outputs per lane, 16 from r = 12.
constexpr bool tile_compiled_1d(int R) {
  return R == 4 || R == 8 || R == 12 || R == 16 || R == 24 || R == 32;
}
// The 1D padded block tile (padded1d): f32 at these radii, 16 outputs per lane, at most 4 slots.
constexpr bool pad_compiled_1d(int R) { return R == 32 || R == 48 || R == 64; }
constexpr int kPadTx = 16;
constexpr int kPadMaxSlots = 4;
// 2D: 8 columns per lane under the TMA ring (r = 4..6) and the cp.async ring (r = 5, 6), f32.
constexpr bool wide_tma_compiled(int R) { return R >= 4 && R <= 6; }
constexpr bool wide_ring_compiled(int R) { return R == 5 || R == 6; }
// 2D: register prefetch deeper than one row: f32, r = 1..4.
constexpr bool deep_prefetch_compiled_2d(DType t, int R) {
  return t == DType::f32 && R >= 1 && R <= kTx;
}
// 2D: passes of KY filter rows (8 for any radius, 12 or 16 for f32 r >= 10).
constexpr bool passes_compiled(DType t, int R, int KY) {
  return KY < 2 * R + 1 && (KY == 8 || ((KY == 12 || KY == 16) && R >= 10 && t == DType::f32));
}
// The default pass height, and the radius from which the filter is split into passes of it
// (docs/notes/tuning.md). The last pass of the default height is compiled for the rows left.
constexpr int kPassRows = 16;
constexpr int kSplitFromR = 12;

// Winograd columns (F(2,3) along x, fast/kernels_2d.cu): segments of 3 taps per filter row of a
// radius-R window; the first window tap of the segments (<= 0: the zero taps first where that
// keeps the lane's windows inside its 4 + 2 RA inputs), and whether the lane's windows fit those
// inputs at all (not at r = 0, 8).
constexpr int wino_segments(int R) { return (2 * R + 3) / 3; }
constexpr int wino_first_tap(int R) {
  return R - round_up4(R) > 2 * R + 1 - 3 * wino_segments(R) ? R - round_up4(R)
                                                               : 2 * R + 1 - 3 * wino_segments(R);
}
constexpr bool wino_fits(int R) {
  return wino_first_tap(R) <= 0 &&
         wino_first_tap(R) <= 1 + round_up4(R) + R - 3 * wino_segments(R);
}
// Where the Winograd columns are compiled (f32 under the TMA ring): one pass, radii 3..7.
constexpr bool wino_compiled(int R, int KY) {
  return R >= 3 && R <= 7 && KY == 2 * R + 1 && wino_fits(R);
}

// The TMA ring of a strip of W columns: one box per row group, or two (overlapping by the halo
// columns) where W exceeds the 256 columns a box may have.
constexpr int tma_parts(int W) { return W > 256 ? 2 : 1; }

// 3D: two output rows per warp compiled for f32 r >= 1 (f64 needs twice the registers), four
// for f32 r <= 2 under the block ring; register prefetch deeper than one row for f32 r = 1, 2
// (a depth that divides the 2R + rows input rows of a plane).
constexpr int kTileWarps3D = 8;  // warps of a 3D block-ring block, neighbouring y-rows of a tile

// ---------------------------------------------------------------------------------------------
// The inputs and the value (the device's facts, DeviceFacts: cuda/primitives/device_facts.hpp).
// ---------------------------------------------------------------------------------------------
// Whether the base addresses of the input and the output are 16-byte aligned (true for the
// library's own device copies; a caller's device pointer may be offset).
struct Alignment {
  bool input = true;
  bool output = true;
};

// The 1D kernel layouts (fast/kernels_1d.cu).
enum class Layout1D {
  strip,        // a warp owns 128 consecutive outputs, 4 per lane (r <= 8)
  held,         // a lane owns 8 outputs, all its inputs held in registers
  streamed,     // a lane owns 16 or 32 outputs, its inputs streamed 16 bytes at a time (f32)
  block_tile,   // tiles through a block-wide ring filled by bulk copies (f32, sm_90)
  padded_tile,  // tiles through a padded shared-memory tile filled by cp.async (f32)
};

// How the rows of a 2D or 3D kernel reach its FFMAs, with the shape that goes with the feed.
struct RowPath {
  Feed feed = Feed::kDirect;
  int columns = kTx;      // 2D: columns per lane (4 or 8)
  int depth = 1;          // rows in flight per warp under the register prefetch
  int rows_per_warp = 1;  // 3D: output y-rows per warp (1, 2 or 4)
};

struct FastPolicy {
  int rank = 1;
  DType dtype = DType::f32;
  int halo = 0;              // the problem's largest halo (Problem::max_radius)
  int radius = -1;           // the compiled radius serving it; -1: none (can_implement refuses)
  int multiprocessors = 1;   // of the device: the launchers size their grids with it
  bool vec = false;          // 16-byte row loads and stores: nx % 4 == 0, both arrays aligned
  bool tensor_map = false;   // a tensor map can be made for the input (2D and 3D TMA feeds)

  // 1D
  Layout1D layout = Layout1D::strip;
  int outputs_per_lane = kTx;
  bool prefetch = false;  // held / streamed: the next item's loads issued before this one's FFMAs

  // 2D and 3D
  RowPath path;      // what runs
  RowPath fallback;  // what runs if the input's tensor map cannot be encoded after all
  bool winograd = false;   // 2D: the columns in Winograd F(2,3) form
  int pass_rows = 1;       // 2D: filter rows per pass (2R + 1: one pass)
  int passes = 1;
  int last_pass_rows = 1;  // the rows of the last pass (compiled exactly for the default height)

  // The rings (1D tiles, 2D and 3D TMA rings, 3D block ring); 0 where none runs.
  int slots = 0;         // slots of the ring (per warp for the TMA rings, per block otherwise)
  int box_rows = 0;      // rows per copy into a slot (3D block ring: the tile's rows and halo)
  int box_copies = 1;    // 2D TMA ring: copies per slot (two half strips past 256 columns)
  int l2_promotion = 256;  // bytes the L2 fetches per read of a tensor map
  int hints = 0;         // block rings: bit 0 the reads' L2 hint, bit 1 streaming stores

  // Chunking of the streamed axis (2D rows, 3D planes).
  bool runs = false;     // 3D block ring: equal runs of tile-planes, one wave, not z-chunks
  int chunk = 0;         // rows or planes per chunk (tile-planes per run); 0: fitted to the GPU
  int shortest_run = 16;  // 3D runs: no run shorter than this many tile-planes unless the work is
  // 3D runs where the block ring applies boundary modes: a tile-plane of a tile at an edge (whose
  // ghost cells the block sets per plane) counts this many percent more, so that the runs of
  // those tiles are shorter and every block ends at about the same time.
  int edge_cost = 0;

  // How the kernels sum the taps (Strategy::summation).
  Summation summation() const { return winograd ? Summation::winograd_x : Summation::direct; }
};

// ---------------------------------------------------------------------------------------------
// The decisions, rank by rank. `Forced` holds the tuning as today's integers: -1 unset.
// ---------------------------------------------------------------------------------------------
// The taps K of a box filter: every correlation weight the same positive w with w K = 1 within
// a few units of rounding (1/K, or a product of 1/K_i as uniform filters fuse them), K the number
// of weights; 0 for any other filter. `fast` and the border pass sum such a filter with weights 1
// and divide each sum by K once, correctly rounded, so that the mean of a constant region is the
// constant (SciPy's uniform filter sums, then divides: Finish).
inline std::int64_t box_taps_of(const Problem& p) {
  const std::vector<double>& w = p.correlation_weights();
  if (w.empty() || !(w[0] > 0)) return 0;
  for (const double x : w)
    if (x != w[0]) return 0;
  const double n = double(w.size());
  return std::fabs(w[0] * n - 1.0) <= 8 * DBL_EPSILON ? std::int64_t(w.size()) : 0;
}

namespace policy_detail {

struct Forced {
  int feed, prefetch, depth, slots, box_rows, tx, tx_1d, pad_1d, rows_3d, hints, runs, chunk,
      pass_rows, winograd, l2, edge_cost;
  explicit Forced(const FastTuning& t)
      : feed(t.feed ? int(*t.feed) : -1), prefetch(flag(t.prefetch)), depth(num(t.depth)),
        slots(num(t.slots)), box_rows(num(t.box_rows)), tx(num(t.tx)), tx_1d(num(t.tx_1d)),
        pad_1d(flag(t.pad_1d)), rows_3d(num(t.rows_3d)), hints(num(t.hints)), runs(flag(t.runs)),
        chunk(num(t.chunk)), pass_rows(num(t.pass_rows)), winograd(flag(t.winograd)),
        l2(num(t.l2_promotion)), edge_cost(num(t.edge_cost)) {}
  static int num(const std::optional<int>& v) { return v ? *v : -1; }
  static int flag(const std::optional<bool>& v) { return v ? int(*v) : -1; }

  // Slots of a block ring: the tuning's where the ring holds them, else the rank's default.
  int block_slots(int fallback) const {
    return slots >= 2 && slots <= kBlockRingSlots ? slots : fallback;
  }
};

// ---- 1D ---------------------------------------------------------------------------------------
// The next item's loads issued first (held layout, f32 up to kWidePfLimit): ncu at r = 16 without
// it showed half the cycles per issued instruction waiting on the loads; at r = 24 it measured
// slower, so off there.
inline bool wide_prefetch(const Forced& f, DType t, int R) {
  if (t != DType::f32 || R > kWidePfLimit) return false;
  return f.prefetch >= 0 ? f.prefetch == 1 : R != 24;
}
// Outputs per lane of the wide layouts: held 8 below r = 24, where its one-item-ahead prefetch
// wins; streamed 16 from r = 24 (f32), where the held inputs' registers cost more than the
// streaming. 32 lost everywhere measured.
constexpr int kStreamFromR = 24;
inline int wide_tx(const Forced& f, DType t, int R) {
  if (t != DType::f32 || R <= kStripMaxR) return kTxWide;
  if (f.tx_1d == 8 || f.tx_1d == 16 || f.tx_1d == 32) return f.tx_1d;
  return R >= kStreamFromR ? 16 : kTxWide;
}
// The streamed layout's 4 groups ahead measured no better than none: off unless tuned on.
inline bool stream_prefetch(const Forced& f, int tx, int R) {
  return tx == 16 && R <= kWidePfLimit && f.prefetch == 1;
}
// The block ring runs from r = 8 up to 32 (the register layouts keep r <= 7 and r >= 48; at r = 4
// the two measured the same): bulk copies of whole tiles keep the DRAM stream independent of the
// warps' registers. A forced feed other than the block ring keeps the register layouts.
inline bool block_feed_1d(const Forced& f, DType t, int R) {
  if (t != DType::f32 || !tile_compiled_1d(R)) return false;
  if (f.feed >= 0) return f.feed == int(Feed::kBlock);
  return R >= 8 && f.prefetch < 0;
}
constexpr int kBlockSlots1D = 4;  // 6 slots measured no better
// 16 outputs per lane in the block ring measured slower (4-way bank conflicts on the slot
// reads): 8 unless tuned, where compiled (r >= 12).
inline int tile_tx_1d(const Forced& f, int R) { return R >= 12 && f.tx_1d == 16 ? 16 : kTxWide; }
// The padded tile by default from r = 48 (FFMA-bound, where the streamed layout ran L1-bound),
// unless the tuning picks another 1D layout; 2 slots (a tile's FFMAs outlast its copy, so more
// blocks per SM count more than slots).
constexpr int kPadFromR = 48;
constexpr int kPadSlots = 2;
inline bool padded_feed_1d(const Forced& f, DType t, int R) {
  if (t != DType::f32 || !pad_compiled_1d(R)) return false;
  if (f.pad_1d >= 0) return f.pad_1d == 1;
  return R >= kPadFromR && f.feed < 0 && f.prefetch < 0 && f.tx_1d < 0;
}
// Cache hints of the 1D tiles: streaming stores (bit 1); the reads' evict-first hint measured no
// better.
constexpr int kHints1D = 2;

inline void policy_1d(FastPolicy& p, const Forced& f, const DeviceFacts& dev) {
  const DType t = p.dtype;
  const int R = p.radius;
  p.hints = f.hints >= 0 ? f.hints : kHints1D;
  if (padded_feed_1d(f, t, R) && p.vec) {
    p.layout = Layout1D::padded_tile;
    p.outputs_per_lane = kPadTx;
    p.slots = std::min(f.block_slots(kPadSlots), kPadMaxSlots);
    return;
  }
  if (block_feed_1d(f, t, R) && p.vec && dev.tma()) {
    p.layout = Layout1D::block_tile;
    p.outputs_per_lane = tile_tx_1d(f, R);
    p.slots = f.block_slots(kBlockSlots1D);
    return;
  }
  p.hints = 0;
  if (R <= kStripMaxR) {
    p.layout = Layout1D::strip;
    p.outputs_per_lane = kTx;
    p.prefetch = true;  // the strip layout always issues the next segment's loads first
    return;
  }
  const int tx = wide_tx(f, t, R);
  p.outputs_per_lane = tx;
  if (tx == 16 || tx == 32) {
    p.layout = Layout1D::streamed;
    p.prefetch = stream_prefetch(f, tx, R);
  } else {
    p.layout = Layout1D::held;
    p.prefetch = wide_prefetch(f, t, R);
  }
}

// ---- 2D ---------------------------------------------------------------------------------------
// Without a TMA ring: the cp.async ring wherever FFMAs dominate (r >= 3: no register copy of a
// prefetched row, fewer registers, three rows in flight); the register prefetch where the kernel
// only streams (r <= 2) or in passes, and at r >= 4.
inline bool prefetch_rows_2d(const Forced& f, int R, int KY) {
  if (f.prefetch >= 0) return f.prefetch == 1;
  return KY < 2 * R + 1 || R <= 2 || R >= 4;
}
inline Feed classic_feed_2d(const Forced& f, int R, int KY) {
  if (f.feed >= 0 && f.feed < int(Feed::kTma)) return Feed(f.feed);
  if (f.prefetch < 0 && R >= 3) return Feed::kRing;
  return prefetch_rows_2d(f, R, KY) ? Feed::kPrefetch : Feed::kDirect;
}
// The TMA ring wins at every radius measured in f32 (one copy per 8 to 16 rows, no bounds tests
// per row, fewer registers); f64 keeps the other feeds (not measured there; its rows are twice
// the shared memory). 2D has no block ring: a forced block feed runs the TMA ring, its nearest.
inline Feed feed_2d(const Forced& f, DType t, int R, int KY) {
  if (f.feed >= 0) return f.feed >= int(Feed::kTma) ? Feed::kTma : Feed(f.feed);
  if (f.prefetch < 0 && t == DType::f32) return Feed::kTma;
  return classic_feed_2d(f, R, KY);
}
// Columns per lane under the TMA ring: 8 from r = 5 (a row's fixed cost spread over twice the
// FFMAs); at r = 4 and at the memory-bound radii 8 gained nothing beyond the noise, so 4 (fewer
// registers) stays (docs/notes/tuning.md, 2D: columns per lane).
inline int tma_columns(const Forced& f, int R) {
  if (!wide_tma_compiled(R)) return kTx;
  return f.tx == 4 || f.tx == 8 ? f.tx : R >= 5 ? 8 : kTx;
}
// Columns per lane under the cp.async ring: 8 where compiled (r = 5, 6, where it won).
inline int ring_columns(const Forced& f, int R) {
  if (!wide_ring_compiled(R)) return kTx;
  return f.tx == 4 || f.tx == 8 ? f.tx : 8;
}
// Rows in flight under the register prefetch: 4 at r = 1 (more bytes in flight per SM despite
// the registers), else 1; deeper only where compiled.
inline int depth_2d(const Forced& f, DType t, int R) {
  if (!deep_prefetch_compiled_2d(t, R)) return 1;
  if (f.depth >= 1) return f.depth;
  return R == 1 ? 4 : 1;
}
// Filter rows per pass: one pass up to r = 11; from kSplitFromR passes of kPassRows rows, whose
// weights and accumulators fit the immediate-constant cache and the registers. A tuned height
// runs where compiled, else one pass.
inline int pass_rows_2d(const Forced& f, DType t, int R) {
  const int K = 2 * R + 1;
  const int want = f.pass_rows >= 0 ? f.pass_rows : R >= kSplitFromR ? kPassRows : K;
  return passes_compiled(t, R, want) ? want : K;
}
// The TMA ring's shape: memory-bound radii (r <= 3, and r = 4 in Winograd form, back near the
// memory bound) want many rows in flight, 3 slots of 12 rows; FFMA-bound ones fewer slots, so
// more warps fit beside the shared memory: 2 of 8, 2 of 16 in passes.
inline bool deep_ring(int R, bool wg) { return R <= 3 || (R == 4 && wg); }
inline int tma_slots_2d(const Forced& f, int R, bool wg) {
  return f.slots >= 2 ? f.slots : deep_ring(R, wg) ? 3 : 2;
}
inline int tma_box_rows_2d(const Forced& f, int R, bool wg) {
  return f.box_rows >= 1 ? f.box_rows : deep_ring(R, wg) ? 12 : R >= kSplitFromR ? 16 : 8;
}
// The Winograd columns at r = 4, 5, 7, where they measured faster; at 3 and 6 the two tied
// within the noise, and the direct sums (tighter rounding bound) stay (docs/notes/tuning.md,
// Winograd).
inline bool wino_columns(const Forced& f, int R) {
  if (f.winograd >= 0) return f.winograd == 1;
  return R == 4 || R == 5 || R == 7;
}
inline void policy_2d(FastPolicy& p, const Forced& f, bool winograd_allowed) {
  const DType t = p.dtype;
  const int R = p.radius, K = 2 * R + 1;
  const bool f32 = t == DType::f32;
  p.pass_rows = pass_rows_2d(f, t, R);
  p.passes = (K + p.pass_rows - 1) / p.pass_rows;
  // run_passes compiles the last pass for the rows left at the default height only.
  p.last_pass_rows = p.passes == 1              ? K
                     : p.pass_rows == kPassRows ? K - (p.passes - 1) * p.pass_rows
                                                : p.pass_rows;
  p.chunk = f.chunk >= 1 ? f.chunk : 0;
  const Feed classic = classic_feed_2d(f, R, p.pass_rows);
  p.fallback.feed = classic;
  p.fallback.columns = classic == Feed::kRing && f32 ? ring_columns(f, R) : kTx;
  p.fallback.depth = classic == Feed::kPrefetch ? depth_2d(f, t, R) : 1;
  if (feed_2d(f, t, R, p.pass_rows) != Feed::kTma || !p.tensor_map) {
    p.path = p.fallback;
    return;
  }
  // The Winograd columns: where compiled, allowed (no direct sums required) and chosen.
  const bool wg = f32 && wino_compiled(R, p.pass_rows) && winograd_allowed && wino_columns(f, R);
  p.winograd = wg;
  p.path.feed = Feed::kTma;
  p.path.columns = f32 && !wg ? tma_columns(f, R) : kTx;
  p.slots = tma_slots_2d(f, R, wg);
  p.box_rows = tma_box_rows_2d(f, R, wg);
  p.box_copies = tma_parts(32 * p.path.columns + 2 * round_up4(R));
  p.l2_promotion = f.l2 >= 0 ? f.l2 : 256;
}

// ---- 3D ---------------------------------------------------------------------------------------
// Without a TMA ring: the cp.async ring wherever FFMAs dominate (r >= 2), else the register
// prefetch at r = 1, 2, 4.
inline bool prefetch_rows_3d(const Forced& f, int R) {
  if (f.prefetch >= 0) return f.prefetch == 1;
  return R == 1 || R == 2 || R == 4;
}
inline Feed classic_feed_3d(const Forced& f, int R) {
  if (f.feed >= 0 && f.feed < int(Feed::kTma)) return Feed(f.feed);
  if (f.prefetch < 0 && R >= 2) return Feed::kRing;
  return prefetch_rows_3d(f, R) ? Feed::kPrefetch : Feed::kDirect;
}
// The block ring (f32, r = 1..3): a tile's planes copied once for the block's 8 warps; at r = 4
// it lost to the per-warp TMA ring (f32, r >= 2: one copy per plane of a warp's 2R + rows rows).
inline Feed feed_3d(const Forced& f, DType t, int R) {
  if (f.feed >= 0) return Feed(f.feed);
  if (f.prefetch < 0 && t == DType::f32 && R >= 1 && R <= 3) return Feed::kBlock;
  if (f.prefetch < 0 && t == DType::f32 && R >= 2) return Feed::kTma;
  return classic_feed_3d(f, R);
}
// Output rows per warp: two up to r = 2 (f32), one above (registers); four only under the block
// ring at r <= 2, where compiled.
constexpr int kTwoRowsUpTo = 2;
inline int rows_per_warp_3d(const Forced& f, DType t, int R) {
  if (t != DType::f32 || R < 1) return 1;
  if (f.rows_3d == 1 || f.rows_3d == 2) return f.rows_3d;
  if (f.rows_3d == 4) return R <= 2 && feed_3d(f, t, R) == Feed::kBlock ? 4 : 2;
  return R <= kTwoRowsUpTo ? 2 : 1;
}
// Rows in flight under the register prefetch: 4 at r = 1; compiled for f32 r = 1, 2 where the
// depth divides the 2R + rows input rows of a plane.
inline int depth_3d(const Forced& f, DType t, int R, int rows) {
  const int want = f.depth >= 1 ? f.depth : R == 1 ? 4 : 1;
  return t == DType::f32 && R >= 1 && R <= 2 && (2 * R + rows) % want == 0 ? want : 1;
}
constexpr int kBlockSlots3D = 6;      // planes of the block ring: 4 and 3 slots measured slower
constexpr int kTmaSlots3D = 2;        // planes per warp of the TMA ring: they are large
constexpr int kBlockL2Promotion = 64;  // a box row starts 16 bytes before a 512-byte boundary
constexpr int kHints3D = 3;           // evict-last reads and streaming stores
// Equal runs of tile-planes (one wave) where FFMAs bound the block ring (r >= 2); z-chunks at
// r = 1, where neighbouring tiles in step share their halo rows in L2.
inline bool runs_of_planes(const Forced& f, int R) {
  return f.runs >= 0 ? f.runs == 1 : R >= 2;
}

// Percent more per tile-plane of an edge tile in equal runs (FastPolicy::edge_cost): at r = 2 the
// tiles at a y edge (the x ghosts are set in registers, at the same cost in every tile), at r = 3
// those at any edge (x from the table too).
inline int edge_cost_3d(int R) { return R == 2 ? 30 : R >= 3 ? 3 : 0; }

inline void policy_3d(FastPolicy& p, const Forced& f) {
  const DType t = p.dtype;
  const int R = p.radius;
  const int rows = rows_per_warp_3d(f, t, R);
  const Feed want = feed_3d(f, t, R);
  p.chunk = f.chunk >= 1 ? f.chunk : 0;
  // Where the block ring cannot run, its four rows per warp become two (the classic kernels
  // compile two at most).
  const int fallback_rows = rows == 4 ? 2 : rows;
  const Feed classic = classic_feed_3d(f, R);
  p.fallback.feed = classic;
  p.fallback.rows_per_warp = fallback_rows;
  p.fallback.depth = classic == Feed::kPrefetch ? depth_3d(f, t, R, fallback_rows) : 1;
  p.path = p.fallback;
  if (want == Feed::kBlock && t == DType::f32 && R >= 1 && p.tensor_map) {
    p.path = RowPath{Feed::kBlock, kTx, 1, rows};
    p.slots = f.block_slots(kBlockSlots3D);
    p.box_rows = kTileWarps3D * rows + 2 * R;
    p.l2_promotion = f.l2 >= 0 ? f.l2 : kBlockL2Promotion;
    p.hints = f.hints >= 0 ? f.hints : kHints3D;
    p.runs = runs_of_planes(f, R);
    p.shortest_run = std::max(16, 8 * R);
    p.edge_cost = f.edge_cost >= 0 ? f.edge_cost : edge_cost_3d(R);
  } else if (want == Feed::kTma && p.tensor_map) {
    p.path = RowPath{Feed::kTma, kTx, 1, rows};
    p.slots = f.slots >= 2 ? f.slots : kTmaSlots3D;
    p.box_rows = 2 * R + rows;
    p.l2_promotion = f.l2 >= 0 ? f.l2 : 256;
  }
}

}  // namespace policy_detail

// The block ring's layouts whose modes' kernels set the x ghost columns in registers, one kernel
// per x mode (kernels_3d.cu, set_x_ghosts()): the defaults up to r = 2, two y-rows per warp in
// z-chunks at r = 1 and in equal runs at r = 2. At r = 3 (80 registers a thread) the selects
// spilled and measured slower; the layouts that only tuning reaches set them from the table too,
// which spares the build their kernels.
constexpr bool x_ghosts_in_registers(int R, int rows, bool runs) {
  return R >= 1 && R <= policy_detail::kTwoRowsUpTo && rows == 2 && runs == (R >= 2);
}

// Every decision of the `fast` strategy for p on the device `dev`, for arrays of that alignment.
// Pure: the same inputs give the same policy. p.tuning() overrides the defaults where it says.
inline FastPolicy fast_policy(const Problem& p, const DeviceFacts& dev,
                              const Alignment& aligned = {}) {
  using namespace policy_detail;
  FastPolicy pol;
  pol.rank = p.rank();
  pol.dtype = p.dtype();
  pol.halo = int(std::min<std::int64_t>(p.max_radius(), 1 << 30));
  pol.radius = compiled_radius(pol.rank, pol.dtype, pol.halo);
  pol.multiprocessors = std::max(1, dev.multiprocessors);
  if (pol.radius < 0) return pol;
  const Dims3 d = p.dims3();
  const std::int64_t es = std::int64_t(dtype_size(p.dtype()));
  pol.vec = d.x % 4 == 0 && aligned.input && aligned.output;
  // As make_row_map() requires: a 16-byte row pitch and base, coordinates below 2^31.
  const std::int64_t limit = std::int64_t(1) << 31;
  pol.tensor_map = dev.tensor_maps() && (d.x * es) % 16 == 0 && aligned.input && d.x < limit &&
                   d.y < limit && d.z < limit && p.batch() < limit;
  const Forced f(p.tuning());
  if (pol.rank == 1)
    policy_1d(pol, f, dev);
  else if (pol.rank == 2)
    // The Winograd columns neither sum directly nor divide a box's sums (their stores skip the
    // division: a per-store branch cost the dense filters 7% at r = 4).
    policy_2d(pol, f, !p.direct_sums() && box_taps_of(p) == 0);
  else
    policy_3d(pol, f);
  return pol;
}

// ---------------------------------------------------------------------------------------------
// Chunking of the streamed axis (pure; the launchers give it the kernel's measured occupancy).
// ---------------------------------------------------------------------------------------------
struct Chunking {
  std::int64_t chunk = 1;   // rows or planes per chunk
  std::int64_t chunks = 1;
};

// Splits the streamed axis (rows in 2D, planes in 3D; stream_len of them) into chunks, given
// per_chunk warps (or blocks) of work per chunk and `resident` of them on the GPU at once: the
// split that wastes least, counting the idle slots of the last wave (every chunk's work is the
// same, so a wave 30% full costs as much as a full one) and the 2R halo rows each chunk re-reads;
// no chunk shorter than max(16, 8R) unless the axis is. `forced` (FastPolicy::chunk) >= 1 asks
// for chunks of that length instead.
inline Chunking fit_chunks(std::int64_t stream_len, std::int64_t per_chunk, int R,
                           std::int64_t resident, std::int64_t forced = 0) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  Chunking c;
  if (forced >= 1) {
    c.chunk = std::min<std::int64_t>(forced, std::max<std::int64_t>(stream_len, 1));
    c.chunks = ceil_div(stream_len, c.chunk);
    return c;
  }
  resident = std::max<std::int64_t>(resident, 1);
  const std::int64_t shortest =
      std::min<std::int64_t>(stream_len, std::max<std::int64_t>(16, 8 * R));
  const std::int64_t most = std::max<std::int64_t>(
      1, std::min(stream_len / std::max<std::int64_t>(shortest, 1), 8 * resident / per_chunk + 1));
  double best = -1;
  for (std::int64_t want = 1; want <= most; ++want) {
    const std::int64_t len = ceil_div(stream_len, want), chunks = ceil_div(stream_len, len);
    const std::int64_t items = chunks * per_chunk;
    const std::int64_t waves = ceil_div(items, resident);
    const double use = double(items) / double(waves * resident) * double(len) / double(len + 2 * R);
    if (use > best + 1e-9) {
      best = use;
      c.chunk = len;
      c.chunks = chunks;
    }
  }
  return c;
}

// The length of each run when `total` units of work (3D: tile-planes) are shared out in equal
// runs, one per resident block (`resident` blocks on the GPU at once), but no run shorter than
// `shortest` units unless the work is; `forced` >= 1 asks for runs of that many units instead.
// The blocks to launch: ceil(total / the length).
inline std::int64_t even_runs(std::int64_t total, std::int64_t shortest, std::int64_t resident,
                              std::int64_t forced = 0) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  total = std::max<std::int64_t>(total, 1);
  const std::int64_t runs =
      forced >= 1 ? ceil_div(total, forced)
                  : std::min(std::max<std::int64_t>(resident, 1),
                             ceil_div(total, std::max<std::int64_t>(shortest, 1)));
  return ceil_div(total, std::max<std::int64_t>(runs, 1));
}

// Equal runs where the block ring applies modes: the cost of the tiles laid end to end, a
// tile-plane of an edge tile (x: the first and last strip, where xmode is applied; y: the first
// and last y-tile, where ymode is) counting `edge` and any other `plain`, so that the runs over
// edge tiles are shorter by their extra work per plane (FastPolicy::edge_cost). A column's first
// and last plane count `ends` planes more: a run that starts or ends there marches the R ghost
// planes that a z mode maps (zero ghosts skip them). pos() maps a cost to the position
// (tile * nz + z) where it falls; block i takes [pos(i c), pos((i + 1) c)).
struct EdgeCosts {
  std::int64_t strips = 1, ytiles = 1, nz = 1, ends = 0;
  int plain = 1, edge = 1;
  bool xe = false, ye = false;
  HALO_HOST_DEVICE std::int64_t span() const { return nz + 2 * ends; }  // a column's cost, planes
  // A tile-plane's weight in strip s, y-tile y.
  HALO_HOST_DEVICE int weight(std::int64_t s, std::int64_t y) const {
    return (xe && (s == 0 || s == strips - 1)) || (ye && (y == 0 || y == ytiles - 1)) ? edge
                                                                                      : plain;
  }
  // Strip s's cost: its first and last y-tile, and the inner ones, all alike.
  HALO_HOST_DEVICE std::int64_t strip_cost(std::int64_t s) const {
    const std::int64_t inner = ytiles > 2 ? (ytiles - 2) * weight(s, 1) : 0;
    return (weight(s, 0) + (ytiles > 1 ? weight(s, ytiles - 1) : 0) + inner) * span();
  }
  // One array's cost: the first and last strip, and the inner ones, all alike.
  HALO_HOST_DEVICE std::int64_t array_cost() const {
    return strip_cost(0) + (strips > 1 ? strip_cost(strips - 1) : 0) +
           (strips > 2 ? (strips - 2) * strip_cost(1) : 0);
  }
  // The cost of the first t tiles of the batch (tile = (b * strips + s) * ytiles + y).
  HALO_HOST_DEVICE std::int64_t cost(std::int64_t t) const {
    const std::int64_t per = strips * ytiles, b = t / per, s = t % per / ytiles, y = t % ytiles;
    // the strips before s are the first and inner ones, the y-tiles before y the top and inner
    const std::int64_t before_s = s == 0 ? 0 : strip_cost(0) + (s - 1) * strip_cost(1);
    const std::int64_t before_y = y == 0 ? 0 : (weight(s, 0) + (y - 1) * weight(s, 1)) * span();
    return b * array_cost() + before_s + before_y;
  }
  // The first position whose cost before it is at least c (c <= cost(tiles)): the array, the
  // strip and the y-tile where c falls, each found in O(1) from the few distinct costs, then
  // the plane.
  HALO_HOST_DEVICE std::int64_t pos(std::int64_t c, std::int64_t tiles) const {
    const std::int64_t per = strips * ytiles, b = c / array_cost();
    if (b * per >= tiles) return tiles * nz;
    std::int64_t r = c - b * array_cost();  // into array b
    std::int64_t s = 0;  // the strip: the first, the inner ones, the last
    const std::int64_t first = strip_cost(0), inner = strip_cost(1);
    if (strips > 1 && r >= first) {
      r -= first;
      const std::int64_t k = strips > 2 ? r / inner : 0;
      s = 1 + (k < strips - 2 ? k : strips - 2);
      r -= (s - 1) * inner;
    }
    std::int64_t y = 0;  // the y-tile, the same way
    const std::int64_t top = weight(s, 0) * span(), mid = weight(s, 1) * span();
    if (ytiles > 1 && r >= top) {
      r -= top;
      const std::int64_t k = ytiles > 2 ? r / mid : 0;
      y = 1 + (k < ytiles - 2 ? k : ytiles - 2);
      r -= (y - 1) * mid;
    }
    // the plane: before plane z (0 < z < nz) lie z + ends planes of cost, before nz, nz + 2 ends
    const std::int64_t w = weight(s, y), k = (r + w - 1) / w - ends;
    const std::int64_t z = r == 0 ? 0 : k < 1 ? 1 : k < nz ? k : nz;
    return ((b * per) + s * ytiles + y) * nz + z;
  }
};

}  // namespace halo::cuda::fast
