/* strategy: separable — a rank-1 filter (the outer product of 1-D factors: Gaussians, boxes,
 * Sobel and Prewitt) as 1-D passes, the 2-D ones fused in one kernel.
 *
 * The problem's correlation weights are factored on the host in float64 (separable_windows() in
 * src/core/factor.cpp); each factor becomes a centred window of a compiled radius (zeros where the
 * filter has no tap), passed as kernel parameters so that the FFMAs read the weights from the
 * constant bank.
 *
 * One kernel, separable_kernel<T, RX, RY>, serves every pass. Persistent blocks take work items
 * of a strip of 256 columns by a chunk of rows, and march down the chunk, S rows per step (S = 8,
 * or 16 from a y radius of 8, 12 in the box kernels, so that each ring row read feeds 16 FFMAs):
 *   1. load S input rows of the strip and PX >= RX columns each side into shared memory (`tile`),
 *      16 bytes per load inside the array and through the boundary modes' maps at its edges
 *      (ghost rows and columns read the cells the mode maps them to, or cval); the next step's
 *      rows are already in flight in registers. From radius 8 to 16 (float32, rows 16-byte
 *      aligned, sm_90) the tensor memory accelerator copies each step's tile instead, into a
 *      ring of two stages (the TMA feed, in the march: fused.cu);
 *   2. filter them along x into a ring of 2 PY + S rows (each thread 8 outputs of one row, a
 *      sliding window of 16-byte reads: the 8 threads of a shared-memory phase read 8 different
 *      rows, whose pitch is an odd multiple of 16 bytes, so no bank conflicts);
 *   3. filter the ring along y: each thread one column, S outputs from S + 2 RY ring rows, and
 *      store them, coalesced.
 * The rows a step filters along x are those the next 2 PY / S steps' outputs need, so every
 * input row is read and filtered along x once per chunk (the first 2 PY rows of a chunk also by
 * the chunk above). DRAM traffic is one read and one write of the array: a 2-D filter costs a
 * copy plus its (2 RX + 1) + (2 RY + 1) FMAs per output.
 *   RY = 0 (a pass along x alone: 1-D signals, `--axis` filters): step 3 stores the ring's 8 rows;
 *     the 8 rows of a step are 8 rows of one strip, or, on rows longer than 2048 elements, 8
 *     strips of one row.
 *   RX = 0 (a pass along y alone, and z in 3-D, where a "row" is a whole plane): step 1 loads
 *     straight into the ring.
 * 3-D filters whose factors fit radius 4 (float32) run x, y and z in one pass (vol_kernel, or
 * vol_tma_kernel where the rows are 16-byte aligned on an sm_90 device; that one takes radii 5
 * to 8 too, padded to 8, where the rows are a multiple of 16 bytes); others as two passes over
 * DRAM: x and y fused on every plane into a scratch array, then z from
 * it (under constant mode its ghost planes read cval times the sums of the x and y factors, a
 * ghost plane of the input seen through them).
 *
 * Factors beyond the ring's radii take passes of their own (float32), each described where it is
 * defined: box rows and box columns (running sums, any width up to 257 along x and 1025 down y
 * or z), long rows and long columns (FMAs from shared-memory tiles, up to 1025 taps), so that
 * no radius falls to the FFT's or the seed kernels' speed. A plan has at most two passes.
 *
 * Box factors (uniform filters) run as taps of 1, their windows' raw sums, and each pass scales
 * its outputs once (SumScale: divided by its boxes' taps for a uniform filter, so that a constant
 * region gives the constant exactly). Every kernel that writes the final output probes the
 * outputs it stores and notes a non-finite one (cuda/nonfinite.cuh): NonFinite::noted.
 *
 * strategy: lowrank (strategies.cu) — a filter of low rank as a sum of separable
 * terms, each term these passes, every term after the first adding into the output.
 *
 * The files of this folder, by role:
 *   geometry.cuh     every kernel family's constants, geometry and shared memory;
 *   device.cuh       the device helpers the families share (the modes' maps, 16-byte loads and
 *                    stores, the x runs);
 *   fused.cu         separable_kernel (x and y fused; x alone; y or z alone) and its launch;
 *   volume.cu        vol_kernel and vol_tma_kernel (x, y and z in one pass) and their launch;
 *   box_and_long.cu  box rows, box columns, long columns and long rows, and their launch;
 *   plan.cuh         the plan (SepPass, SepPlan) and what the files call across each other;
 *   planner.cu       make_plan, a pass's dispatch to its kernel, the plan in words;
 *   strategies.cu    the strategies `separable` and `lowrank`.
 */
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/fft_tiling.hpp"
#include "cuda/device_buffer.cuh"
#include "cuda/fast/policy.hpp"  // fit_chunks, compiled_radius
#include "cuda/launch.cuh"
#include "cuda/nonfinite.cuh"
#include "cuda/primitives/device.cuh"
#include "cuda/primitives/rings.cuh"
#include "cuda/primitives/rows.cuh"

namespace halo::cuda::sep {

constexpr int kSepThreads = 256;  // threads per block
constexpr int kSepCols = 256;     // columns per strip: one per thread in step 3
constexpr int kSepRows = 8;       // rows per step, 16 where the y radius is 8 or more
constexpr int kSepWide = 2048;    // RY = 0: rows longer than this take 8 strips of one row per step

// The compiled radii of the factors' windows (a factor is zero-padded to the smallest that
// covers it): every Gaussian of truncate 4 with sigma 1, 2, 4, 8 and 16 has one of these exactly.
#define HALO_SEP_RADII_F32(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(24) X(32) X(48) X(64)
#define HALO_SEP_RADII_F64(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16)

inline int sep_radius(DType t, int r) {
  int best = -1;
#define HALO_CASE(R) \
  if (best < 0 && R >= r) best = R;
  if (t == DType::f32) {
    HALO_SEP_RADII_F32(HALO_CASE)
  } else if (t == DType::f64) {
    HALO_SEP_RADII_F64(HALO_CASE)
  }
#undef HALO_CASE
  return r == 0 ? 0 : best;
}
inline int sep_top(DType t) { return per_dtype(t, 64, 16, "separable's compiled radii"); }
// A pass along x alone (1-D signals, 1-D filters along x) also has radii 96 and 128 in f32: its
// kernel has no ring of y rows, so long factors cost no more shared memory than a wider tile.
#define HALO_SEP_ROW_RADII_F32(X) HALO_SEP_RADII_F32(X) X(96) X(128)
inline int sep_row_radius(DType t, int r) {
  const int c = sep_radius(t, r);
  if (c >= 0 || t != DType::f32) return c;
  return r <= 96 ? 96 : r <= 128 ? 128 : -1;
}

HALO_HOST_DEVICE constexpr int pad4(int r) { return (r + 3) / 4 * 4; }

// Shared memory of separable_kernel<T, RX, RY>: the x tile (RX > 0) and the ring. Pitches are
// an odd multiple of 16 bytes (see the header).
template <class T>
HALO_HOST_DEVICE constexpr int tile_pitch(int rx) {
  return kSepCols + 2 * pad4(rx) + 16 / int(sizeof(T));
}
template <class T>
HALO_HOST_DEVICE constexpr int ring_pitch() {
  return kSepCols + 16 / int(sizeof(T));
}
// Rows per step: 16 outputs per thread along y from radius 8, so that each ring row read feeds
// 16 FFMAs (the large radii issue-bound otherwise) and a step has twice the loads in flight
// (radius 8 latency-bound with 8), else 8. Box kernels (running sums down y) keep 8 up to
// radius 11: at radius 8, 16 rows measured 18% slower for them (docs/notes/tuning.md).
HALO_HOST_DEVICE constexpr int step_rows(int ry, bool box = false) {
  return ry >= 12 || (ry >= 8 && !box) ? 16 : kSepRows;
}
// The rows of y halo a step fills the ring with: RY rounded up to half a step.
HALO_HOST_DEVICE constexpr int pad_y(int ry, bool box = false) {
  const int half = step_rows(ry, box) / 2;
  return (ry + half - 1) / half * half;
}
// Rows of the ring: the 2 PY + S rows the outputs of a step read (S under RY = 0). Below
// radius 8 every row is kept twice, at i and i + rows, so that a step reads its rows in one
// run with no wrap (immediate offsets, no index arithmetic); larger radii wrap (one select per
// group of a step's rows), where shared memory matters more.
HALO_HOST_DEVICE constexpr int ring_rows(int ry, bool box = false) {
  return ry > 0 ? 2 * pad_y(ry, box) + step_rows(ry, box) : step_rows(ry, box);
}
HALO_HOST_DEVICE constexpr bool ring_doubled(int ry, bool box = false) {
  return ry > 0 && ry <= 8 && step_rows(ry, box) == kSepRows;
}
template <class T>
std::size_t sep_shared_bytes(int rx, int ry, bool box) {
  return sizeof(T) *
         (std::size_t(rx > 0 ? step_rows(ry, box) * tile_pitch<T>(rx) : 0) +
          std::size_t(ring_rows(ry, box) * (ring_doubled(ry, box) ? 2 : 1)) * ring_pitch<T>());
}

// Tiles by the tensor memory accelerator (float32, radii kSepTmaLow..kSepTmaTop with a y pass):
// a step's tile is two copies of ROWS rows, each the inputs of half the strip's 256 outputs
// (128 + 2 PX columns, and 4 more so that the row pitch, the copy's width, is an odd multiple of
// 16 bytes: the x runs' reads stay free of bank conflicts), into a ring of tma_stages(R)
// stages; see separable_kernel's TMA feed.
constexpr int kSepTmaLow = 4, kSepTmaTop = 32;
// Stages: two up to radius 16, one copy in flight while a step is filtered (three measured the
// same at radii 8 and 16). Beyond, one, so that two blocks fit an SM beside the ring of 2 PY +
// 16 rows (radius 32: 25 KB of stage and 83 KB of ring): the next step's copy is issued once
// the x pass has read the stage and lands during the y pass.
HALO_HOST_DEVICE constexpr int tma_stages(int r) { return r > 16 ? 1 : r < 8 ? 3 : 2; }
// Blocks per SM of the TMA-fed kernels: two measured 12% faster than three at radius 8 (a
// 16384^2 Gaussian of sigma 2, one chunk a block in both; docs/notes/tuning.md).
constexpr int kSepTmaBlocks = 2;
HALO_HOST_DEVICE constexpr int tma_pitch(int rx) { return kSepCols / 2 + 2 * pad4(rx) + 4; }
HALO_HOST_DEVICE constexpr int tma_half(int rx, bool box) {
  return step_rows(rx, box) * tma_pitch(rx);
}
inline std::size_t sep_tma_shared_bytes(int r, bool box) {
  return sizeof(float) * (std::size_t(tma_stages(r)) * 2 * tma_half(r, box) +
                          std::size_t(ring_rows(r, box) * (ring_doubled(r, box) ? 2 : 1)) *
                              ring_pitch<float>()) +
         tma_stages(r) * sizeof(std::uint64_t);
}

template <class T, int R>
struct Taps {
  T w[2 * R + 1];
};

// How a pass scales its sums. Box factors run with taps of 1 (their windows' raw sums, as the
// running sums form them); the pass then divides by its boxes' taps k where their weights are
// 1 / k, correctly rounded, so that a constant region gives the constant exactly (SciPy sums the
// window and divides by its size once), else multiplies by their weights' product c; a pass
// without a box factor leaves its sums (make_plan sets it: BoxUnits::scale).
// The division is div_by's (primitives/rows.cuh): s hi + s lo with hi + lo = 1 / k, two
// instructions, correctly rounded, so that a box's mean of a constant region is the constant.
// Multiplying by the weights' product c: {c, 0}.
struct SumScale {
  prim::Reciprocal<double> y;
  prim::Reciprocal<float> yf;
  int on = 0;  // the pass has a box factor
  template <class T>
  __device__ __forceinline__ T operator()(T s) const {
    if constexpr (sizeof(T) == 4)
      return prim::div_by(s, yf);
    else
      return prim::div_by(s, y);
  }
  // v[i] scaled, where the pass has a box factor (one uniform branch).
  template <class T, int N>
  __device__ __forceinline__ void apply(T (&v)[N]) const {
    if (on) {
#pragma unroll
      for (int i = 0; i < N; ++i) v[i] = (*this)(v[i]);
    }
  }
};

// One pass: `rows` rows of `nx` columns per item, rows `row_stride` apart, items `item_stride`
// apart. Under RY = 0, items * rows rows of nx columns, nx apart.
struct SepGeom {
  i64 nx, rows, row_stride, items, item_stride;
  i64 strips;         // ceil(nx / 256)
  i64 chunk, chunks;  // RY > 0: output rows per work item and chunks per item
  i64 work;           // work items: RY > 0 strips x chunks x items; RY = 0 steps
  int wide;           // RY = 0: 8 strips of one row per step (else 8 rows of one strip)
  int vec;            // every row starts 16-byte aligned: interior loads are 16-byte vectors
  int xmode, ymode;   // Boundary
  double cval;
  // Box factors (BOX kernels): the taps [lo, lo + k) of the compiled window, all weighing 1,
  // summed as running sums over a thread's 8 outputs along x or its step's outputs down y.
  int xbox, xlo, xk, ybox, ylo, yk;
  SumScale scale;  // of the pass's outputs (RY = 0: at the x pass, else at the y pass)
  int add;  // add the pass's sums to the output (a term of a sum: `lowrank`) instead of storing
  // TMA-fed kernels under modes with x faces: work position w takes item (w - ff_start) mod
  // work of the face-first order (face_order), so that the strips at an x face fall to the
  // blocks with one item fewer; else w is the item, strips fastest.
  int face_first;
  i64 ff_start;
};

// Whether an axis of `mode` reads zeros beyond its faces (constant mode, cval 0): the tensor-map
// copies fill those cells themselves.
HALO_HOST_DEVICE inline bool zero_ghosts(int mode, double cval) {
  return mode == int(Boundary::constant) && cval == 0.0;
}

// Whether the TMA-fed kernel of radius r takes the face-first order: not at radius 8 and below,
// whose 80 registers (three blocks per SM) it made spill, at a large cost (docs/notes/tuning.md,
// "Separable passes": face strips first).
HALO_HOST_DEVICE constexpr bool face_first_compiled(int r) { return r > 8; }

// ---------------------------------------------------------------------------------------------
// Volumes in one pass (vol_kernel, volume.cu).
// ---------------------------------------------------------------------------------------------
constexpr int kVolTx = 64, kVolTy = 16;  // outputs of a tile's plane
constexpr int kVolThreads = 256;
constexpr int kVolSteps = 4;  // output planes per z step
// The largest radius run through registers everywhere: beyond, the two passes measured faster
// on an H100 (docs/notes/tuning.md, "Volumes in one pass"). Radii 5 to kVolTmaTop run in one
// pass (as radius kVolTmaTop) where vol_tma_kernel takes them: rows a multiple of 16 bytes on a
// device with tensor maps, where the one pass beats the two at radius 8 ("Volumes by tensor-map
// tiles"); vol_kernel<kVolTmaTop> is only the fallback for a base address that is not 16-byte
// aligned.
constexpr int kVolTop = 4, kVolTmaTop = 8;
// z halo planes a chunk loads on each side: R rounded up to half a step (the ring's slots then
// fall in whole steps).
HALO_HOST_DEVICE constexpr int vol_pad_z(int r) {
  return (r + kVolSteps / 2 - 1) / (kVolSteps / 2) * (kVolSteps / 2);
}
HALO_HOST_DEVICE constexpr int vol_slots(int r) { return 2 * vol_pad_z(r) + kVolSteps; }
// Pitches an odd multiple of 16 bytes (as separable_kernel's).
HALO_HOST_DEVICE constexpr int vol_tile_pitch(int r) { return kVolTx + 2 * pad4(r) + 4; }
HALO_HOST_DEVICE constexpr int vol_x_pitch() { return kVolTx + 4; }
inline std::size_t vol_shared_bytes(int r) {
  return sizeof(float) * (std::size_t(kVolTy + 2 * r) * (vol_tile_pitch(r) + vol_x_pitch()) +
                          std::size_t(vol_slots(r)) * kVolTx * kVolTy);
}

struct VolGeom {
  i64 nx, ny, nz, items;    // items: volumes of the batch, nx * ny * nz apart
  i64 tiles_x, tiles_y;     // tiles of a plane along x and y
  i64 chunk, chunks, work;  // z-chunks of `chunk` output planes; work items
  int xmode, ymode, zmode;  // Boundary
  int vec;                  // every row starts 16-byte aligned
  int near_x;               // rows longer than the x halo (near_map applies)
  float cval;
  SumScale scale;  // of the outputs (box factors: BoxUnits::scale)
  int box = 0;     // vol_tma_kernel: every factor a box of 2R + 1 taps of 1 (running sums)
};

// Volumes by tensor-map tiles (vol_tma_kernel, volume.cu).
// Output rows of a tile: at R = 4, 24 (32 tile rows, 64 x 24 outputs); at R = 8, 16.
HALO_HOST_DEVICE constexpr int vt_ty(int r) { return r <= 4 ? 24 : 16; }
constexpr int kVtStages = 3;  // tile copies in flight: two ahead of the one read
// Cells outside the volume per thread that a tile may need rewritten: R rows above and below
// (64 + 2P cells each), P columns on the left and R on the right of every tile row.
HALO_HOST_DEVICE constexpr int vt_fix(int r) {
  return (2 * r * (kVolTx + 2 * pad4(r)) + (pad4(r) + r) * (vt_ty(r) + 2 * r) + kVolThreads - 1) /
         kVolThreads;
}
HALO_HOST_DEVICE constexpr int vt_stage_floats(int r) {
  return prim::slot_size((vt_ty(r) + 2 * r) * vol_tile_pitch(r) * int(sizeof(float))) /
         int(sizeof(float));
}
inline std::size_t vol_tma_shared_bytes(int r) {
  return sizeof(float) * (std::size_t(kVtStages) * vt_stage_floats(r) +
                          2 * std::size_t(vt_ty(r) + 2 * r) * vol_x_pitch()) +
         (sizeof(i64) + sizeof(int)) * vt_fix(r) * kVolThreads +
         sizeof(int) * (kVolTx + 2 * pad4(r)) + sizeof(float) * vol_tile_pitch(r) +
         kVtStages * sizeof(std::uint64_t);
}

// ---------------------------------------------------------------------------------------------
// Box rows (box_row_kernel, box_and_long.cu).
// ---------------------------------------------------------------------------------------------
constexpr int kBoxThreads = 256;
constexpr int kBoxRun = 16;                          // outputs per thread, and the chunk length
constexpr int kBoxSeg = kBoxThreads * kBoxRun;       // outputs per segment
constexpr int kBoxMaxTaps = 2 * 128 + 1;             // the longest row factor (sep_row_radius)
constexpr int kBoxTile = kBoxSeg + kBoxMaxTaps - 1;  // inputs of a segment, at most
constexpr int kBoxChunks = kBoxSeg / kBoxRun + kBoxMaxTaps / kBoxRun;
constexpr int kBoxRowMin = kSepWide;  // shorter rows take separable_kernel's strips

struct BoxRowGeom {
  i64 nx, segs, work;  // rows of nx elements, nx apart; segments per row; rows * segs
  int a, k;            // output x sums inputs x + a .. x + a + k - 1, then `scale`
  int mode;            // Boundary along x
  float cval;
  SumScale scale;
};

// ---------------------------------------------------------------------------------------------
// Box columns (box_col_kernel, box_and_long.cu).
// ---------------------------------------------------------------------------------------------
constexpr int kColThreads = 128;
constexpr int kColRun = 16;          // outputs per run, and rows per block
constexpr int kColMaxTaps = 1025;    // radius 512

// The geometry of a column pass (box and long columns).
struct ColGeom {
  i64 nx, rows, row_stride, items, item_stride;  // as SepGeom
  i64 strips, chunk, chunks, work;               // strips of columns x chunks x items
};
struct BoxColGeom : ColGeom {  // strips of 128 columns
  // Output y: the sum of input rows y + a .. y + a + k - 1, scaled.
  int a, k;
  int mode;   // Boundary along the rows
  float cval;
  SumScale scale;
};
// Shared memory of a block: the ring of chunk sums (k / 16 + 1 slots) and two blocks of rows.
inline std::size_t col_shared_bytes(int k) {
  return sizeof(float) * kColThreads * std::size_t(k / kColRun + 1 + 2 * kColRun);
}

// ---------------------------------------------------------------------------------------------
// Long columns (long_col_kernel, box_and_long.cu).
// ---------------------------------------------------------------------------------------------
constexpr int kLongWarps = 8;
constexpr int kLongThreads = 32 * kLongWarps;
constexpr int kLongRun = 16;                       // outputs per thread; ring rows per group
constexpr int kLongStep = kLongWarps * kLongRun;   // output rows per step, rows per batch
constexpr int kLongMaxTaps = 1025;                 // radius 512
// Weights as read: kLongRun - 1 zeros, the k taps, zeros up to the last group's reads.
constexpr int kLongWeights = (kLongMaxTaps + 3 * kLongRun + 3) / 4 * 4;

struct LongTaps {
  float w[kLongWeights];
};

struct LongColGeom : ColGeom {  // strips of 32 columns
  int a;        // output y reads input rows y + a .. y + a + k - 1 (a = -radius)
  int groups;   // groups of 16 rows a warp reads per step: ceil((k + 15) / 16)
  int batches;  // batches of kLongStep rows in the ring
  int mode;     // Boundary along the rows
  float cval;
  SumScale scale;
};
inline int long_groups(int k) { return (k + kLongRun - 1 + kLongRun - 1) / kLongRun; }
// Batches the ring holds: every row the step's last warp reads.
inline int long_batches(int k) {
  return (kLongStep - kLongRun + long_groups(k) * kLongRun + kLongStep - 1) / kLongStep;
}
inline std::size_t long_shared_bytes(int k) {
  return sizeof(float) * (std::size_t(long_batches(k)) * kLongStep * 32 + kLongWeights);
}

// ---------------------------------------------------------------------------------------------
// Long rows (long_row_kernel, box_and_long.cu).
// ---------------------------------------------------------------------------------------------
constexpr int kLongRowSeg = kLongThreads * kLongRun;  // outputs per segment
constexpr int kLongRowMin = kSepWide;                 // shorter rows take the strip kernel

struct LongRowGeom {
  i64 nx, segs, work;  // rows of nx elements, nx apart; segments per row; rows * segs
  int a;               // output x reads inputs x + a .. x + a + k - 1 (a = -radius)
  int groups;          // groups of 16 inputs a thread reads: ceil((k + 15) / 16)
  int mode;            // Boundary along x
  float cval;
  SumScale scale;
};
// Tile elements a segment reads: its outputs' runs and the groups of the last one.
inline int long_row_tile(int k) { return kLongRowSeg - kLongRun + long_groups(k) * kLongRun; }
inline std::size_t long_row_shared_bytes(int k) {
  const int tile = long_row_tile(k);
  return sizeof(float) * (std::size_t(kLongWeights) + tile + tile / 32 + 1);
}

}  // namespace halo::cuda::sep
