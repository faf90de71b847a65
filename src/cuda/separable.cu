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
 *      ring of two stages (the TMA feed, in the march below);
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
 * strategy: lowrank (at the end of this file) — a filter of low rank as a sum of separable
 * terms, each term these passes, every term after the first adding into the output.
 */
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
#include "cuda/fast/kernels.cuh"
#include "cuda/fast/policy.hpp"
#include "cuda/nonfinite.cuh"
#include "cuda/seeds/common.cuh"

namespace halo::cuda {
namespace {

constexpr int kSepThreads = 256;  // threads per block
constexpr int kSepCols = 256;     // columns per strip: one per thread in step 3
constexpr int kSepRows = 8;       // rows per step, 16 where the y radius is 8 or more
constexpr int kSepWide = 2048;    // RY = 0: rows longer than this take 8 strips of one row per step

// The compiled radii of the factors' windows (a factor is zero-padded to the smallest that
// covers it): every Gaussian of truncate 4 with sigma 1, 2, 4, 8 and 16 has one of these exactly.
#define HALO_SEP_RADII_F32(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(24) X(32) X(48) X(64)
#define HALO_SEP_RADII_F64(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16)

int sep_radius(DType t, int r) {
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
int sep_top(DType t) { return t == DType::f64 ? 16 : 64; }
// A pass along x alone (1-D signals, 1-D filters along x) also has radii 96 and 128 in f32: its
// kernel has no ring of y rows, so long factors cost no more shared memory than a wider tile.
#define HALO_SEP_ROW_RADII_F32(X) HALO_SEP_RADII_F32(X) X(96) X(128)
int sep_row_radius(DType t, int r) {
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
std::size_t sep_tma_shared_bytes(int r, bool box) {
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
// The division is q = s y, then q + (s - q k) y with y = RN(1 / k): the remainder exact by one
// FMA and added back by another (Markstein's correction), which rounds s / k correctly for
// normal s; checked against the exact quotient for every float32 significand of two binades and
// k of 3 to 16641 (boxes of 2^n - 1 taps among them), and on 10^7 float64 cases. __fdiv_rn's
// slow path (a call) cost the unrolled kernels registers and spills. Multiplying: y = c, k = 0,
// and no remainder added (c2 = 0).
struct SumScale {
  double c1 = 1, k = 0, c2 = 0;
  float c1f = 1, kf = 0, c2f = 0;
  int on = 0;  // the pass has a box factor
  template <class T>
  __device__ __forceinline__ T operator()(T s) const {
    if constexpr (sizeof(T) == 4) {
      const float q = s * c1f;
      return fmaf(fmaf(-q, kf, s), c2f, q);
    } else {
      const double q = s * c1;
      return fma(fma(-q, k, s), c2, q);
    }
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
// whose 80 registers (three blocks per SM) it made spill (2-D sigma 2 0.77 -> 1.03 ms).
HALO_HOST_DEVICE constexpr bool face_first_compiled(int r) { return r > 8; }

// Work item p of the face-first order: the strips at an x face of every (item, chunk) first
// (strip 0, then the last), then the others, strips fastest; as (row = item * chunks + chunk,
// strip). 32-bit: work items number far fewer than 2^31 (launch_pass keeps the plain order
// otherwise), and 64-bit divisions here cost the kernels registers they need.
__device__ __forceinline__ void face_order(unsigned p, unsigned strips, unsigned rows,
                                           unsigned& row, unsigned& bx) {
  const unsigned nf = strips >= 2 ? 2 : 1, faces = rows * nf;
  if (p < faces) {
    row = nf == 2 ? p >> 1 : p;
    bx = row * nf == p ? 0 : strips - 1;
  } else {
    const unsigned j = p - faces, inner = strips - nf;
    row = j / inner;
    bx = 1 + (j - row * inner);
  }
}

// Index i of an axis of n through `mode`, where i lies outside [0, n) by at most n - 1 and
// n > 1 (a halo no longer than the axis): a few instructions; -1: cval.
__device__ __forceinline__ i64 near_map(i64 i, i64 n, int mode) {
  const bool low = i < 0;
  switch (Boundary(mode)) {
    case Boundary::nearest:
      return low ? 0 : n - 1;
    case Boundary::wrap:
      return low ? i + n : i - n;
    case Boundary::reflect:
      return low ? -1 - i : 2 * n - 1 - i;
    case Boundary::mirror:
      return low ? -i : 2 * n - 2 - i;
    default:
      return -1;
  }
}

// The index a coordinate outside [0, n) reads (-1: cval), map_index's: a few instructions for
// a coordinate at most n - 1 outside (every halo of an axis as long as the filter), the general
// map beyond. Out of line: only the blocks at an edge call it, and inlining it at every load
// costs registers that the FFMA loops need.
__device__ __noinline__ i64 sep_map(i64 i, i64 n, int mode) {
  if (n > 1 && i >= 1 - n && i < 2 * n - 1) return near_map(i, n, mode);
  return detail::map_index(i, n, Boundary(mode));
}

// Element i of a line of n elements `stride` apart, through the mode's map outside [0, n)
// (cval where the mode maps it to none).
template <class T>
__device__ __forceinline__ T load_mapped(const T* __restrict__ p, i64 i, i64 n, i64 stride,
                                         int mode, T cval) {
  if (i >= 0 && i < n) return p[i * stride];
  const i64 m = sep_map(i, n, mode);
  return m < 0 ? cval : p[m * stride];
}
// Elements y .. y + N - 1 of a column of n, `stride` apart, into v: plain loads inside the
// column, the mode's map where the run reaches past an end.
template <int N>
__device__ __forceinline__ void load_column_run(const float* __restrict__ p, i64 y, i64 n,
                                                i64 stride, int mode, float cval, float (&v)[N]) {
  if (y >= 0 && y + N <= n) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = __ldg(p + (y + i) * stride);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = load_mapped(p, y + i, n, stride, mode, cval);
  }
}
template <class T>
__device__ __forceinline__ T sep_load(const T* __restrict__ row, i64 x, const SepGeom& g, T cval) {
  return load_mapped(row, x, g.nx, 1, g.xmode, cval);
}

// 4 elements through one 16-byte access (two for double).
template <class T>
struct Vec4 {
  T v[4];
};
template <class T>
__device__ __forceinline__ void load4(const T* __restrict__ p, Vec4<T>& o) {
  if constexpr (sizeof(T) == 4) {
    const float4 f = __ldg(reinterpret_cast<const float4*>(p));
    o.v[0] = f.x, o.v[1] = f.y, o.v[2] = f.z, o.v[3] = f.w;
  } else {
    const double2 a = __ldg(reinterpret_cast<const double2*>(p));
    const double2 b = __ldg(reinterpret_cast<const double2*>(p) + 1);
    o.v[0] = a.x, o.v[1] = a.y, o.v[2] = b.x, o.v[3] = b.y;
  }
}
template <class T>
__device__ __forceinline__ void store4(T* p, const T* v) {
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    reinterpret_cast<double2*>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(p)[1] = make_double2(v[2], v[3]);
  }
}

// Adds to acc[q] the x factor's taps over outputs q = 0 .. 7 of a tile row: src holds the run's
// 8 + 2 PAD inputs (PAD >= R: the run's first output reads src[PAD - R] on), read 16 bytes at a
// time; the 8 threads of a shared-memory phase reading 8 rows an odd multiple of 16 bytes apart
// see no bank conflicts.
// Adds inputs i0 .. i0 + V - 1 of a run (v) into the run's 8 outputs: input i feeds output q
// through tap i - (PAD - R) - q.
template <class T, int R, int PAD, int V>
__device__ __forceinline__ void x_taps8(int i0, const T (&v)[V], const Taps<T, R>& w,
                                        T (&acc)[8]) {
#pragma unroll
  for (int e = 0; e < V; ++e)
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int j = i0 + e - (PAD - R) - q;  // the tap of output q reading this value
      if (j >= 0 && j <= 2 * R) acc[q] = fma(w.w[j], v[e], acc[q]);
    }
}
template <class T, int R, int PAD>
__device__ __forceinline__ void x_run8(const T* src, const Taps<T, R>& w, T (&acc)[8]) {
  constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte shared-memory access
#pragma unroll
  for (int i0 = 0; i0 < 8 + 2 * PAD; i0 += V) {
    T v[V];
    if constexpr (V == 4) {
      const float4 f = *reinterpret_cast<const float4*>(src + i0);
      v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else {
      const double2 d = *reinterpret_cast<const double2*>(src + i0);
      v[0] = d.x, v[1] = d.y;
    }
    x_taps8<T, R, PAD>(i0, v, w, acc);
  }
}

// The sum of v(0) .. v(k - 1) in four interleaved partial sums, added pairwise at the end: four
// independent chains of loads and adds instead of one (a box's first window, k up to 257).
template <class T, class V>
__device__ __forceinline__ T box_sum(int k, V v) {
  T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
  int i = 0;
#pragma unroll 2
  for (; i + 4 <= k; i += 4) {
    s0 += v(i);
    s1 += v(i + 1);
    s2 += v(i + 2);
    s3 += v(i + 3);
  }
  for (; i < k; ++i) s0 += v(i);
  return (s0 + s1) + (s2 + s3);
}

// The sum of b[0] .. b[k - 1] along a row of the x tile, b = (16-byte aligned) + off: 16-byte
// reads for the aligned middle (the 8 threads of a shared-memory phase read 8 rows, so without
// bank conflicts, where scalar reads of 8 columns apart conflict 4 ways), scalar ones at the ends.
template <class T>
__device__ __forceinline__ T box_sum_row(const T* b, int off, int k) {
  if constexpr (sizeof(T) != 4) {
    return box_sum<T>(k, [&](int i) { return b[i]; });
  } else {
    const int head = min(k, (4 - (off & 3)) & 3);
    T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
    for (int i = 0; i < head; ++i) s0 += b[i];
    int i = head;
#pragma unroll 2
    for (; i + 4 <= k; i += 4) {
      const float4 f = *reinterpret_cast<const float4*>(b + i);
      s0 += f.x;
      s1 += f.y;
      s2 += f.z;
      s3 += f.w;
    }
    for (; i < k; ++i) s1 += b[i];
    return (s0 + s1) + (s2 + s3);
  }
}

// Blocks per SM that the registers must allow: three up to radius 8 (85 registers; their shared
// memory allows it, and latency hiding needs the warps), and in float32 along x alone up to 64
// (they fit 80; under a bound of two, probing and scaling their outputs took them to 128), two
// up to 32, one beyond (whose 16 accumulators and windows spill under 128 registers).
HALO_HOST_DEVICE constexpr int min_blocks(int rx, int ry, bool f32 = false) {
  return (rx <= 8 && ry <= 8) || (f32 && ry == 0 && rx <= 64) ? 3 : rx <= 32 && ry <= 32 ? 2 : 1;
}
// TMA: the tiles come from the tensor map `map` (dims nx, rows, 1, items; boxes of a half tile;
// see the TMA feed in the march below), float32 with RX = RY in [kSepTmaLow, kSepTmaTop]; else
// `map` is not read. `note`: where the pass writes the final output, the outputs stored are
// probed and a non-finite one noted (NonFiniteNote); a null one for passes into scratch.
template <class T, int RX, int RY, bool BOX, bool ADD = false, bool TMA = false>
__global__ void __launch_bounds__(kSepThreads, min_blocks(RX, RY, std::is_same_v<T, float>))
    separable_kernel(const T* __restrict__ in, T* __restrict__ out, SepGeom g, Taps<T, RX> wx,
                     Taps<T, RY> wy, const __grid_constant__ CUtensorMap map, NonFiniteNote note) {
  constexpr int ROWS = step_rows(RY, BOX), PX = pad4(RX), PY = pad_y(RY, BOX);
  constexpr int FILL = 2 * PY / ROWS;          // steps that only fill the ring
  constexpr int W4 = (kSepCols + 2 * PX) / 4;  // groups of 4 columns of a loaded row
  constexpr int NL = (ROWS * W4 + kSepThreads - 1) / kSepThreads;  // groups per thread
  constexpr int TP = tile_pitch<T>(RX), RP = ring_pitch<T>(), RS = ring_rows(RY, BOX);
  constexpr bool DOUBLED = ring_doubled(RY, BOX);
  // Under TMA: stages of two halves of [ROWS][BP] (HALF elements each) in place of the tile.
  constexpr int BP = tma_pitch(RX), HALF = tma_half(RX, BOX), NST = tma_stages(RX);
  static_assert(!TMA || 2 * HALF < (1 << 15), "TMA: a stage's offsets fit 15 bits (fix)");
  static_assert(!TMA || (std::is_same_v<T, float> && RX == RY && RX >= kSepTmaLow &&
                         RX <= kSepTmaTop),
                "TMA tiles: float32, RX = RY in the compiled range");
  extern __shared__ __align__(128) unsigned char sep_smem[];
  T* tile = reinterpret_cast<T*>(sep_smem);  // [ROWS][TP], RX > 0; TMA: [NST][2][ROWS][BP]
  T* ring = tile + (TMA ? NST * 2 * HALF : RX > 0 ? ROWS * TP : 0);  // [RS (x2 doubled)][RP]
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(ring + RS * (DOUBLED ? 2 : 1) * RP);
  const int t = threadIdx.x;
  const T cval = T(g.cval);
  // Whether the sums are added into the output (SepGeom::add): compiled in for the kernels
  // with a y pass, whose schedule a check at run time disturbed (a rank-1 Gaussian of sigma 8
  // ran 7% slower in 2-D, of sigma 2 3% in 3-D), a parameter for passes along x alone.
  const bool add = RY > 0 ? ADD : g.add != 0;
  // Whether the sums are scaled (SumScale): in the box instantiation alone (box_kernel), so that
  // the others keep their registers.
  constexpr bool SCALED = BOX;
  // probe_nonfinite over the outputs this thread stores, noted once at the end (with a y pass;
  // a pass along x alone notes per step, which took fewer registers there and more here).
  T probe = T(0);

  // Row r of the step that starts at (first row `y`, strip column `x0`): where its elements
  // start (`off`), the column its loads start at, whether it is a ghost row (constant mode:
  // every element cval) and whether it exists (`ok`: else neither loaded nor stored).
  // RY > 0: rows y + r of the item at `base`, mapped by the y mode. RY = 0: flat row y + r of a
  // strip, or under `wide` strip x0 / 256 + r of flat row y.
  auto row_of = [&](i64 base, i64 y, i64 x0, int r, i64& off, i64& xr, bool& ghost, bool& ok) {
    ghost = false;
    ok = true;
    if constexpr (RY > 0) {
      const i64 yr = y + r;
      xr = x0;
      i64 m = yr;
      if (yr < 0 || yr >= g.rows) m = sep_map(yr, g.rows, g.ymode);
      ghost = m < 0;
      off = base + (ghost ? 0 : m * g.row_stride);
    } else {
      const i64 flat = g.wide ? y : y + r;
      xr = x0 + (g.wide ? r * i64(kSepCols) : 0);
      ok = flat < g.items * g.rows && xr < g.nx;
      off = flat * g.nx;
    }
  };

  // The step's rows, 4 columns at a time: 16-byte loads inside the array, the modes at its edges.
  Vec4<T> regs[NL];
  // This thread's groups of a step, fixed for the kernel: group k is row gr[k] (of the step),
  // columns gc[k] .. gc[k] + 3 (of the loaded columns), at element goff[k] from the step's first
  // loaded element where the step lies inside the array, and at sto[k] in shared memory.
  const i64 gstep = RY == 0 && g.wide ? i64(kSepCols) : RY > 0 ? g.row_stride : g.nx;
  i64 goff[NL];
  int sto[NL];
#pragma unroll
  for (int k = 0; k < NL; ++k) {
    const int e = t + k * kSepThreads;
    const int r = e / W4, c = 4 * (e - r * W4);
    goff[k] = r * gstep + c;
    sto[k] = RX > 0 ? r * TP + c : r * RP + c;
  }
  // Under TMA only the steps at the array's edges are loaded by the threads: the offsets are
  // computed when needed rather than held in registers for the kernel.
  auto goff_at = [&](int k) -> i64 {
    if constexpr (TMA) {
      const int e = t + k * kSepThreads, r = e / W4;
      return r * gstep + 4 * (e - r * W4);
    } else {
      return goff[k];
    }
  };
  auto load_step = [&](i64 base, i64 y, i64 x0) {
    // Every row of the step inside the array, and rows 16-byte aligned: each group of 4 columns
    // one 16-byte load at a fixed offset from the step's first row (groups past a row's ends
    // map each column); else every row and column through the modes' maps.
    i64 row_step;
    bool inside;
    if constexpr (RY > 0) {
      row_step = g.row_stride;
      inside = y >= 0 && y + ROWS <= g.rows;
    } else {
      row_step = g.nx;
      inside = g.wide ? y < g.items * g.rows && x0 + ROWS * i64(kSepCols) <= g.nx
                      : y + ROWS <= g.items * g.rows;
    }
    const i64 span = RY == 0 && g.wide ? ROWS * i64(kSepCols) : i64(kSepCols);
    if (g.vec && inside && x0 - PX >= 0 && x0 + span + PX <= g.nx) {
      const T* p = in + (RY > 0 ? base + y * g.row_stride : y * g.nx) + x0 - PX;
#pragma unroll
      for (int k = 0; k < NL; ++k)
        if (t + k * kSepThreads < ROWS * W4) load4(p + goff_at(k), regs[k]);
      return;
    }
    if (g.vec && inside) {
      // Groups of columns outside the array (the strips at a row's ends) map each column.
      const T* p = in + (RY > 0 ? base + y * g.row_stride : y * g.nx);
#pragma unroll
      for (int k = 0; k < NL; ++k) {
        const int e = t + k * kSepThreads;
        const int r = e / W4, c = 4 * (e - r * W4);
        if (e < ROWS * W4) {
          // Under `wide` the rows of a step are strips of one row: the same row, 256 columns on.
          const bool strips = RY == 0 && g.wide;
          const T* row = strips ? p : p + r * row_step;
          const i64 x = x0 - PX + c + (strips ? r * i64(kSepCols) : 0);
          if (x >= 0 && x + 4 <= g.nx) {
            load4(row + x, regs[k]);
          } else {
#pragma unroll
            for (int m = 0; m < 4; ++m) regs[k].v[m] = sep_load(row, x + m, g, cval);
          }
        }
      }
      return;
    }
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const int e = t + k * kSepThreads;
      const int r = e / W4, c = 4 * (e - r * W4);
      Vec4<T>& o = regs[k];
      o.v[0] = o.v[1] = o.v[2] = o.v[3] = T(0);
      if (e < ROWS * W4) {
        i64 off, xr;
        bool ghost, ok;
        row_of(base, y, x0, r, off, xr, ghost, ok);
        const i64 x = xr - PX + c;
        if (!ok) {
        } else if (ghost) {
          o.v[0] = o.v[1] = o.v[2] = o.v[3] = cval;
        } else if (g.vec && x >= 0 && x + 4 <= g.nx) {
          load4(in + off + x, o);
        } else {
#pragma unroll
          for (int m = 0; m < 4; ++m) o.v[m] = sep_load(in + off, x + m, g, cval);
        }
      }
    }
  };
  // Into the x tile, or the ring rows from `slot` on where there is no x pass.
  auto stash_step = [&](int slot) {
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      if (t + k * kSepThreads < ROWS * W4) {
        if constexpr (RX > 0) {
          store4(tile + sto[k], regs[k].v);
        } else {
          store4(ring + slot * RP + sto[k], regs[k].v);
          if constexpr (DOUBLED) store4(ring + (slot + RS) * RP + sto[k], regs[k].v);
        }
      }
    }
  };
  // Under TMA, a step the threads loaded into stage sb: both halves, the middle columns twice.
  auto stash_halves = [&](T* sb) {
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const int e = t + k * kSepThreads;
      if (e < ROWS * W4) {
        const int r = e / W4, c = 4 * (e - r * W4);
        if (c < kSepCols / 2 + 2 * PX) store4(sb + r * BP + c, regs[k].v);
        if (c >= kSepCols / 2) store4(sb + HALF + r * BP + c - kSepCols / 2, regs[k].v);
      }
    }
  };
  // Step 2: thread t filters 8 columns of tile rows t % 8 (+ 8) along x into ring rows from
  // `slot` on.
  // Under TMA the tile is the stage `tl`: runs 0 .. 15 of a row read its first half, 16 .. 31
  // its second.
  auto x_pass = [&](int slot, const T* tl) {
    if constexpr (RX > 0) {
      constexpr int XU = TMA && RX > 16 ? 1 : ROWS / 8;
#pragma unroll XU
      for (int h = 0; h < ROWS / 8; ++h) {
        const int r = t % 8 + 8 * h, c0 = (t / 8) * 8;
        const T* src = TMA ? tl + (t / 128) * HALF + r * BP + (c0 % 128) : tl + r * TP + c0;
        T acc[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) acc[q] = T(0);
        bool boxed = false;
        if constexpr (BOX) {
          // A box: the first output's k taps summed, then each next output adds the input that
          // enters its window and subtracts the one that leaves ((s + a) - b).
          if (g.xbox) {
            const int off = g.xlo + (PX - RX);
            const T* b = src + off;
            T sum = box_sum_row(b, off, g.xk);
            acc[0] = sum;
#pragma unroll
            for (int q = 1; q < 8; ++q) {
              sum = (sum + b[q + g.xk - 1]) - b[q - 1];
              acc[q] = sum;
            }
            boxed = true;
          }
        }
        if (!boxed) x_run8<T, RX, PX>(src, wx, acc);
        // A pass along x alone scales its sums here; with a y pass, the y pass does.
        if constexpr (RY == 0 && SCALED) g.scale.apply(acc);
        T* dst = ring + (slot + r) * RP + c0;
        store4(dst, acc);
        store4(dst + 4, acc + 4);
        if constexpr (DOUBLED) {
          store4(dst + RS * RP, acc);
          store4(dst + RS * RP + 4, acc + 4);
        }
      }
    }
  };

  if constexpr (RY > 0) {
    // Step 3 of step st of a work item (strip x0, chunk rows y0 .. y_end - 1, item at `base`),
    // whose rows went into the ring from `slot` on: the outputs of step st - FILL.
    auto y_pass = [&](i64 st, int slot, i64 y0, i64 y_end, i64 base, i64 x0) {
      // Step 3: outputs yo + q read ring rows from the slot of step st - FILL on.
      const i64 yo = y0 + (st - FILL) * ROWS;
      int first = slot + ROWS - RS + (PY - RY);  // ring row of input row yo - RY
      if (first < 0) first += RS;
      T acc[ROWS];
#pragma unroll
      for (int q = 0; q < ROWS; ++q) acc[q] = T(0);
      // Rows first + i up to the ring's end, then from its start: one select per row, the
      // row's offset an immediate.
      const T* col = ring + first * RP + t;
      const T* wrapped = col - RS * RP;
      const int wrap = RS - first;
      bool boxed = false;
      if constexpr (BOX) {
        // A box: running sums down the column over the step's outputs (restarted every
        // step), as along x.
        if (g.ybox) {
          // The first window's rows in two runs, those before the wrap and those after (no
          // select per row); the rows each slide adds and drops through pointers that step
          // back by the ring's size once they pass its end.
          const int lo = g.ylo, k = g.yk;
          const int n1 = DOUBLED ? k : min(k, max(0, wrap - lo));
          const T* a = col + lo * RP;
          const T* b = wrapped + (lo + n1) * RP;
          T sum = box_sum<T>(n1, [&](int i) { return a[i * RP]; });
          if (!DOUBLED) sum += box_sum<T>(k - n1, [&](int i) { return b[i * RP]; });
          acc[0] = sum;
          const T* end = ring + RS * RP + t;
          auto at = [&](int i) { return (DOUBLED || i < wrap ? col : wrapped) + i * RP; };
          const T* in = at(lo + k);
          const T* gone = at(lo);
#pragma unroll
          for (int q = 1; q < ROWS; ++q) {
            sum = (sum + *in) - *gone;
            acc[q] = sum;
            in += RP;
            gone += RP;
            if (!DOUBLED && in >= end) in -= RS * RP;
            if (!DOUBLED && gone >= end) gone -= RS * RP;
          }
          boxed = true;
        }
      }
      if (!boxed) {
        // The wrap is W0 plus a multiple of ROWS (a step's first slot is a multiple of
        // ROWS), so the rows in groups of ROWS from W0 on lie on one side of it together:
        // one select per group, and every row of it an immediate offset from that base.
        constexpr int W0 = (ROWS - (PY - RY) % ROWS) % ROWS;
        constexpr int NGR = 1 + (ROWS + 2 * RY - W0 + ROWS - 1) / ROWS;
        const T* gb[NGR];
#pragma unroll
        for (int k = 0; k < NGR; ++k)
          gb[k] = DOUBLED || (k == 0 ? 0 : W0 + (k - 1) * ROWS) < wrap ? col : wrapped;
#pragma unroll
        for (int i = 0; i < ROWS + 2 * RY; ++i) {
          const T v = gb[i < W0 ? 0 : (i - W0) / ROWS + 1][i * RP];
#pragma unroll
          for (int q = 0; q < ROWS; ++q) {
            const int j = i - q;
            if (j >= 0 && j <= 2 * RY) acc[q] = fma(wy.w[j], v, acc[q]);
          }
        }
      }
      const i64 x = x0 + t;
      if (x < g.nx) {
        T* o = out + base + yo * g.row_stride + x;
        const int n = int(min(i64(ROWS), y_end - yo));  // rows of this step in the chunk
        if constexpr (SCALED && !ADD) g.scale.apply(acc);  // (terms of a sum have no scale)
        if (add) {
          // A term of a sum: the outputs so far, every load in flight before the first add
          // (a load after each store would wait out DRAM's latency once per row).
          T prev[ROWS];
#pragma unroll
          for (int q = 0; q < ROWS; ++q) prev[q] = q < n ? o[q * g.row_stride] : T(0);
#pragma unroll
          for (int q = 0; q < ROWS; ++q) acc[q] += prev[q];
        }
#pragma unroll
        for (int q = 0; q < ROWS; ++q) {
          if (q < n) {
            *o = acc[q];
            probe = probe_nonfinite(probe, acc[q]);
          }
          o += g.row_stride;
        }
      }
    };
    // Work items (strip, chunk, item), strips fastest; a block marches down its chunk.
    const i64 per_item = g.strips * g.chunks;
    if constexpr (TMA) {
      // The TMA feed: each step's tile is two copies of the tensor memory accelerator (one
      // thread issuing them) into stage `use` of a ring of NST, NST - 1 steps ahead, their
      // landing counted on the stage's mbarrier; the threads hold no loads in registers. The
      // copies fill zeros beyond the array, which is all the zero-ghost modes need; otherwise:
      //   - in a strip at an x face, each landed row's cells beyond the face are copied within
      //     the stage from their source columns (the item's list `xfix`: cell, source; -1 for
      //     cval), where every source lies in the tile (reflect, mirror, nearest and constant,
      //     on rows long enough);
      //   - the steps with rows beyond a y face, and every step of a strip whose x sources do
      //     not all lie in the tile (wrap), are loaded by the threads through the modes' maps
      //     when they come.
      constexpr int HW = kSepCols / 2 + 2 * PX;  // columns of a half the x runs read
      __shared__ int2 xfix[2 * HW];
      __shared__ int nfix_s;
      const bool zx = zero_ghosts(g.xmode, g.cval), zy = zero_ghosts(g.ymode, g.cval);
      if (t == 0) {
        for (int k = 0; k < NST; ++k) fast::mbarrier_init<1>(fast::shared_address(bar + k));
        fast::mbarrier_init_fence();
      }
      __syncthreads();        // the barriers initialised before any thread waits on them
      int use = 0;            // the stage of the next step
      std::uint32_t par = 0;  // bit k: the parity of stage k's next phase
      for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
        i64 item, cy, bx;
        if (face_first_compiled(RY) && g.face_first) {
          const unsigned n = unsigned(g.work), c = unsigned(g.chunks);
          unsigned p = unsigned(w) + n - unsigned(g.ff_start), row, x;
          if (p >= n) p -= n;
          face_order(p, unsigned(g.strips), c * unsigned(g.items), row, x);
          item = row / c;
          cy = row - unsigned(item) * c;
          bx = x;
        } else {
          item = w / per_item;
          const i64 rest = w - item * per_item;
          cy = rest / g.strips;
          bx = rest - cy * g.strips;
        }
        const i64 x0 = bx * kSepCols, y0 = cy * g.chunk, base = item * g.item_stride;
        const i64 y_end = min(g.rows, y0 + g.chunk);
        const i64 y_first = y0 - PY;
        const int steps = int((y_end + PY - y_first + ROWS - 1) / ROWS);
        // A strip at an x face: its cells beyond the face that outputs read (x in [-PX, 0) and
        // [nx, nx + PX), in either half), listed once.
        // Face cells a thread keeps packed in registers: a step's cells number ROWS PX per face,
        // one per thread up to radius 16, two beyond.
        constexpr int NF = ROWS * PX > kSepThreads ? 2 : 1;
        int nfix = 0, fix[NF];
#pragma unroll
        for (int k = 0; k < NF; ++k) fix[k] = -1;
        bool threads_load = false;
        if (!zx && (x0 - PX < 0 || x0 + kSepCols + PX > g.nx)) {
          if (t == 0) nfix_s = 0;
          __syncthreads();  // (also the previous item's reads of the list are done)
          bool far = false;
          for (int e = t; e < 2 * HW; e += kSepThreads) {
            const int h = e / HW, c = e - h * HW;
            const i64 x = x0 - PX + h * (kSepCols / 2) + c;
            if ((x < 0 || x >= g.nx) && x < g.nx + PX) {
              const i64 sx = sep_map(x, g.nx, g.xmode);
              const i64 sa = sx - (x0 - PX), sh = sa - kSepCols / 2;
              int src = -1;
              if (sx >= 0 && sa >= 0 && sa < HW)
                src = int(sa);
              else if (sx >= 0 && sh >= 0 && sh < HW)
                src = HALF + int(sh);
              else if (sx >= 0)
                far = true;
              xfix[atomicAdd(&nfix_s, 1)] = make_int2(h * HALF + c, src);
            }
          }
          threads_load = __syncthreads_or(far);
          nfix = nfix_s;
          // This thread's first NF cells of a step, found once per item (most steps need no
          // other): offset in the stage << 15 | the source's + 1 (0: cval).
#pragma unroll
          for (int k = 0; k < NF; ++k) {
            const int e = t + k * kSepThreads;
            if (e < ROWS * nfix) {
              const int r = e / nfix;
              const int2 f = xfix[e - r * nfix];
              fix[k] = (r * BP + f.x) << 15 | (f.y < 0 ? 0 : r * BP + f.y + 1);
            }
          }
        }
        auto copied = [&](int st) {
          const i64 y = y_first + i64(st) * ROWS;
          return !threads_load && (zy || (y >= 0 && y + ROWS <= g.rows));
        };
        auto issue = [&](int st, int k) {  // thread 0
          const std::uint32_t b = fast::shared_address(bar + k);
          fast::mbarrier_expect_bytes(b, std::uint32_t(2 * HALF * sizeof(float)));
          const int yy = int(y_first + i64(st) * ROWS), xx = int(x0 - PX);
          fast::copy_box(tile + k * 2 * HALF, &map, xx, yy, 0, int(item), b);
          fast::copy_box(tile + k * 2 * HALF + HALF, &map, xx + kSepCols / 2, yy, 0, int(item), b);
        };
        // Steps issued ahead: NST - 1, or under one stage the first (each next one after the x
        // pass).
        constexpr int AHEAD = NST > 1 ? NST - 1 : 1;
        if (t == 0)
          for (int j = 0; j < AHEAD && j < steps; ++j)
            if (copied(j)) issue(j, (use + j) % NST);
        int slot = 0;  // ring row of the step's first row
        for (int st = 0; st < steps; ++st) {
          T* sb = tile + use * 2 * HALF;
          if (copied(st)) {
            fast::mbarrier_wait(fast::shared_address(bar + use), (par >> use) & 1u);
            par ^= 1u << use;
            if (nfix > 0) {
              // The cells beyond an x face from their sources in the same row.
#pragma unroll
              for (int k = 0; k < NF; ++k)
                if (fix[k] >= 0) {
                  const int src = fix[k] & 0x7fff;
                  sb[fix[k] >> 15] = src == 0 ? cval : sb[src - 1];
                }
              for (int e = t + NF * kSepThreads; e < ROWS * nfix; e += kSepThreads) {
                const int r = e / nfix;
                const int2 f = xfix[e - r * nfix];
                T* row = sb + r * BP;
                row[f.x] = f.y < 0 ? cval : row[f.y];
              }
              fast::fence_proxy_async_shared();  // before a later copy into this stage
            }
          } else {
            // Loaded and stored at once: registers held across the step's passes would cost
            // the copied steps their registers (spills at radius 8).
            load_step(base, y_first + i64(st) * ROWS, x0);
            stash_halves(sb);
            fast::fence_proxy_async_shared();
          }
          // The stage is complete, and the previous step's reads of the stage the next copy
          // fills and of this step's ring rows are done.
          __syncthreads();
          if (NST > 1 && t == 0 && st + NST - 1 < steps && copied(st + NST - 1))
            issue(st + NST - 1, (use + NST - 1) % NST);
          x_pass(slot, sb);
          if (NST == 1 || st >= FILL) __syncthreads();
          // One stage: the x pass's reads of it are done; the next step's copy lands during
          // the y pass.
          if (NST == 1 && t == 0 && st + 1 < steps && copied(st + 1)) issue(st + 1, 0);
          if (st >= FILL) y_pass(st, slot, y0, y_end, base, x0);
          use = use + 1 == NST ? 0 : use + 1;
          slot += ROWS;
          if (slot == RS) slot = 0;
        }
        __syncthreads();  // the next work item's copies and x pass overwrite the stages and ring
      }
    } else {
      for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
        const i64 item = w / per_item, rest = w - item * per_item;
        const i64 cy = rest / g.strips, bx = rest - cy * g.strips;
        const i64 x0 = bx * kSepCols, y0 = cy * g.chunk, base = item * g.item_stride;
        const i64 y_end = min(g.rows, y0 + g.chunk);
        i64 y = y0 - PY;  // first row of the step in flight
        load_step(base, y, x0);
        int slot = 0;  // ring row of the step's first row
        for (i64 st = 0; y < y_end + PY; ++st) {
          __syncthreads();  // the previous step's reads of the tile and of this slot are done
          stash_step(slot);
          __syncthreads();
          y += ROWS;
          if (y < y_end + PY) load_step(base, y, x0);  // the next step's rows, in flight meanwhile
          x_pass(slot, tile);
          if (st >= FILL) {
            if constexpr (RX > 0) __syncthreads();
            y_pass(st, slot, y0, y_end, base, x0);
          }
          slot += ROWS;
          if (slot == RS) slot = 0;
        }
        __syncthreads();  // the next work item's stash overwrites the ring
      }
    }
  } else {
    // A pass along x alone: steps of 8 rows of a strip, or 8 strips of a row.
    const i64 per_row = g.wide ? (g.strips + 7) / 8 : g.strips;
    auto step_at = [&](i64 i, i64& y, i64& x0) {
      const i64 a = i / per_row, b = i - a * per_row;
      y = g.wide ? a : a * kSepRows;
      x0 = b * (g.wide ? 8 * kSepCols : kSepCols);
    };
    i64 y, x0;
    i64 i = blockIdx.x;
    if (i < g.work) {
      step_at(i, y, x0);
      load_step(0, y, x0);
    }
    for (; i < g.work; i += gridDim.x) {
      step_at(i, y, x0);
      __syncthreads();
      stash_step(0);
      __syncthreads();
      if (i + gridDim.x < g.work) {
        i64 yn, xn;
        step_at(i + gridDim.x, yn, xn);
        load_step(0, yn, xn);
      }
      x_pass(0, tile);
      __syncthreads();
      if (add) {
        // A term of a sum: the step's outputs so far loaded first, as in the march above.
        T v[kSepRows];
        T* o[kSepRows];
#pragma unroll
        for (int r = 0; r < kSepRows; ++r) {
          i64 off, xr;
          bool ghost, ok;
          row_of(0, y, x0, r, off, xr, ghost, ok);
          o[r] = ok && xr + t < g.nx ? out + off + xr + t : nullptr;
          v[r] = o[r] ? *o[r] : T(0);
        }
        T step_probe = T(0);
#pragma unroll
        for (int r = 0; r < kSepRows; ++r)
          if (o[r]) {
            const T s = v[r] + ring[r * RP + t];
            *o[r] = s;
            step_probe = probe_nonfinite(step_probe, s);
          }
        note(step_probe);
        continue;
      }
      T step_probe = T(0);
#pragma unroll
      for (int r = 0; r < kSepRows; ++r) {
        i64 off, xr;
        bool ghost, ok;
        row_of(0, y, x0, r, off, xr, ghost, ok);
        if (ok && xr + t < g.nx) {
          const T s = ring[r * RP + t];
          out[off + xr + t] = s;
          step_probe = probe_nonfinite(step_probe, s);
        }
      }
      note(step_probe);
    }
  }
  if constexpr (RY > 0) note(probe);
}

// ---------------------------------------------------------------------------------------------
// Volumes in one pass: a float32 3-D filter whose three factors fit radius kVolTop, x, y and z
// fused, so that DRAM sees one read and one write of the array instead of the two passes'
// four transfers (Gaussians of sigma 1 and boxes of 9 on 512^3: 1.2 -> 0.78 ms on an H100). A
// block owns a tile of 64 x 16 outputs of each plane and marches along z over a chunk of
// planes, one input plane at a time:
//   1. the plane's tile and its halo (16 + 2R rows of 64 + 2P columns) into shared memory
//      (`tile`), 16-byte loads at fixed offsets inside the volume, the modes' maps at its
//      faces; the next plane's loads are in flight in registers meanwhile;
//   2. along x into `xs` (each thread a run of 8 outputs of a row, as separable_kernel's step 2);
//   3. along y: thread t takes column t % 64, rows 4 (t / 64) .. + 3, and writes its 4 sums into
//      the current slot of a ring of 2 PZ + 4 x-y-filtered planes; only this thread reads them;
//   4. after every 4th plane, along z: the thread's 4 columns' 4 outputs, from 4 + 2R ring
//      slots (each read feeding 4 FFMAs per output column), stored coalesced.
// Ghost planes (constant mode along z) load cval everywhere, so they reach the z pass as the
// two-pass form's cval times the x and y factors' sums. The factors are centred in windows of
// one compiled radius R (zeros where a factor is shorter). Neighbouring tiles are neighbouring
// work items, so a plane's halo rows are read from L2 by the tiles beside it.
// ---------------------------------------------------------------------------------------------
constexpr int kVolTx = 64, kVolTy = 16;  // outputs of a tile's plane
constexpr int kVolThreads = 256;
constexpr int kVolSteps = 4;  // output planes per z step
// The largest radius run through registers everywhere: beyond, the two passes measured faster
// on an H100 (512^3, radius 6: 1.82 ms against 1.23; radius 8: 1.92 against 1.20;
// docs/notes/tuning.md, "Volumes in one pass"). Radii 5 to kVolTmaTop run in one pass (as radius
// kVolTmaTop) where vol_tma_kernel takes them: rows a multiple of 16 bytes on a device with
// tensor maps (0.70 ms against 1.0 for the two passes at radius 8); vol_kernel<kVolTmaTop> is
// only the fallback for a base address that is not 16-byte aligned.
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
std::size_t vol_shared_bytes(int r) {
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
};

// f(integral_constant<K>) for the K = k of [0, N): a run-time index as a compile-time one.
template <int N, int K = 0, class F>
__device__ __forceinline__ void vol_case(int k, F&& f) {
  if constexpr (K < N) {
    if (k == K)
      f(std::integral_constant<int, K>{});
    else
      vol_case<N, K + 1>(k, f);
  }
}

// acc[q] = the y factor's taps over column elements q .. q + 2R of col (elements `pitch` apart),
// q = 0 .. N - 1: N outputs of a column of x-filtered rows.
template <int N, int R>
__device__ __forceinline__ void y_column(const float* col, int pitch, const Taps<float, R>& w,
                                         float (&acc)[N]) {
#pragma unroll
  for (int q = 0; q < N; ++q) acc[q] = 0.f;
#pragma unroll
  for (int a = 0; a < N + 2 * R; ++a) {
    const float u = col[a * pitch];
#pragma unroll
    for (int q = 0; q < N; ++q) {
      const int j = a - q;
      if (j >= 0 && j <= 2 * R) acc[q] = fmaf(w.w[j], u, acc[q]);
    }
  }
}

template <int R>
__global__ void __launch_bounds__(kVolThreads, 3)
    vol_kernel(const float* __restrict__ in, float* __restrict__ out, VolGeom g, Taps<float, R> wx,
               Taps<float, R> wy, Taps<float, R> wz, NonFiniteNote note) {
  constexpr int P = pad4(R), PZ = vol_pad_z(R), S = kVolSteps, NS = vol_slots(R);
  constexpr int FILL = 2 * PZ / S;        // steps that only fill the ring
  constexpr int TR = kVolTy + 2 * R;      // tile rows
  constexpr int W4 = (kVolTx + 2 * P) / 4;  // groups of 4 columns of a tile row
  constexpr int NG = TR * W4;
  constexpr int NL = (NG + kVolThreads - 1) / kVolThreads;  // groups per thread
  constexpr int TP = vol_tile_pitch(R), XP = vol_x_pitch(), PL = kVolTx * kVolTy;
  constexpr int NRUN = TR * (kVolTx / 8);  // x runs of 8 outputs
  extern __shared__ __align__(16) unsigned char vol_smem[];
  float* tile = reinterpret_cast<float*>(vol_smem);  // [TR][TP]
  float* xs = tile + TR * TP;                        // [TR][XP]
  float* ring = xs + TR * XP;                        // [NS][kVolTy][kVolTx]
  const int t = threadIdx.x;
  const int c = t % kVolTx, yq = (t / kVolTx) * 4;  // steps 3 and 4: column c, rows yq .. + 3
  const i64 plane = g.nx * g.ny;

  Vec4<float> regs[NL];
  // Group e of a plane's tile: the 16 groups of the tile's own columns of every row first, then
  // the P / 4 groups of halo columns on each side, so that the groups at an x edge of the volume
  // (mapped column by column) fall in a few warps rather than in every one.
  constexpr int HG = P / 4, IG = kVolTx / 4;
  auto group = [&](int e, int& r, int& cc) {
    if (e < TR * IG) {
      r = e / IG;
      cc = 4 * (HG + e % IG);
    } else {
      const int h = e - TR * IG, side = h % (2 * HG);
      r = h / (2 * HG);
      cc = 4 * (side < HG ? side : IG + side);
    }
  };
  int goff[NL];  // group k: from the tile's first element, inside the volume (rows < 2^26)
  int sto[NL];   // and in `tile`
#pragma unroll
  for (int k = 0; k < NL; ++k) {
    int r, cc;
    group(t + k * kVolThreads, r, cc);
    goff[k] = r * int(g.nx) + cc;
    sto[k] = r * TP + cc;
  }
  // Input plane z of the volume at `src` (through the z mode), tile at (x0, y0), into regs.
  auto load_plane = [&](const float* src, i64 z, i64 x0, i64 y0) {
    const i64 m = z >= 0 && z < g.nz ? z : sep_map(z, g.nz, g.zmode);
    if (m < 0) {
#pragma unroll
      for (int k = 0; k < NL; ++k) regs[k].v[0] = regs[k].v[1] = regs[k].v[2] = regs[k].v[3] = g.cval;
      return;
    }
    const float* p = src + m * plane;
    if (g.vec && x0 - P >= 0 && x0 + kVolTx + P <= g.nx && y0 - R >= 0 &&
        y0 + kVolTy + R <= g.ny) {
      const float* q = p + (y0 - R) * g.nx + x0 - P;
#pragma unroll
      for (int k = 0; k < NL; ++k)
        if (t + k * kVolThreads < NG) load4(q + goff[k], regs[k]);
      return;
    }
#pragma unroll
    for (int k = 0; k < NL; ++k) {
      const int e = t + k * kVolThreads;
      if (e < NG) {
        int r, cc;
        group(e, r, cc);
        Vec4<float>& o = regs[k];
        const i64 y = y0 - R + r;
        const i64 my = y >= 0 && y < g.ny ? y : sep_map(y, g.ny, g.ymode);
        const i64 x = x0 - P + cc;
        if (my < 0) {
          o.v[0] = o.v[1] = o.v[2] = o.v[3] = g.cval;
        } else if (g.vec && x >= 0 && x + 4 <= g.nx) {
          load4(p + my * g.nx + x, o);
        } else {
          // A group at a row's end: each column through the x mode's map, inline where the
          // halo is shorter than the row (no call per element of a divergent warp).
          const float* row = p + my * g.nx;
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const i64 xu = x + u;
            i64 mx = xu;
            if (xu < 0 || xu >= g.nx) mx = g.near_x ? near_map(xu, g.nx, g.xmode)
                                                    : sep_map(xu, g.nx, g.xmode);
            o.v[u] = mx < 0 ? g.cval : __ldg(row + mx);
          }
        }
      }
    }
  };

  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 per_chunk = g.tiles_x * g.tiles_y, per_item = per_chunk * g.chunks;
    const i64 item = w / per_item, rest = w - item * per_item;
    const i64 ch = rest / per_chunk, tl = rest - ch * per_chunk;
    const i64 ty = tl / g.tiles_x, x0 = (tl - ty * g.tiles_x) * kVolTx, y0 = ty * kVolTy;
    const i64 z0 = ch * g.chunk, z_end = min(g.nz, z0 + g.chunk);
    const float* src = in + item * plane * g.nz;
    float* dst = out + item * plane * g.nz;
    i64 z = z0 - PZ;  // the input plane in flight
    load_plane(src, z, x0, y0);
    int slot = 0;  // ring slot of the current step's first plane
    for (i64 st = 0; z < z_end + PZ; ++st) {
#pragma unroll 1
      for (int s = 0; s < S; ++s) {
        // Step 1: the plane in flight into the tile; the next one's loads issued.
#pragma unroll
        for (int k = 0; k < NL; ++k)
          if (t + k * kVolThreads < NG) store4(tile + sto[k], regs[k].v);
        __syncthreads();
        ++z;
        if (z < z_end + PZ) load_plane(src, z, x0, y0);
        // Step 2: along x, runs of 8 outputs; the 8 threads of a shared-memory phase take 8
        // rows (x_run8).
        for (int run = t; run < NRUN; run += kVolThreads) {
          const int r = run % TR, c0 = (run / TR) * 8;
          const float* b = tile + r * TP + c0;
          float acc[8];
#pragma unroll
          for (int q = 0; q < 8; ++q) acc[q] = 0.f;
          x_run8<float, R, P>(b, wx, acc);
          store4(xs + r * XP + c0, acc);
          store4(xs + r * XP + c0 + 4, acc + 4);
        }
        __syncthreads();
        // Step 3: along y into this plane's ring slot (read by this thread alone).
        float acc[4];
        y_column(xs + yq * XP + c, XP, wy, acc);
        float* rs = ring + (slot + s) * PL + yq * kVolTx + c;
#pragma unroll
        for (int q = 0; q < 4; ++q) rs[q * kVolTx] = acc[q];
      }
      if (st >= FILL) {
        // Step 4: output planes zo .. zo + S - 1 from the S + 2R ring slots from input plane
        // zo - R on. That slot is k S + PZ - R for k = (slot / S + 1) mod (NS / S): one of
        // NS / S cases, each compiled with its slots' offsets as immediates (no wrap to test).
        const i64 zo = z0 + (st - FILL) * S;
        const int k = slot / S + 1 == NS / S ? 0 : slot / S + 1;
        const float* col = ring + yq * kVolTx + c;
        const i64 x = x0 + c;
        float* o = dst + zo * plane + (y0 + yq) * g.nx + x;
        const int nzo = int(min(i64(S), z_end - zo));  // output planes of the step in the chunk
        vol_case<NS / S>(k, [&](auto kc) {
          constexpr int FIRST = decltype(kc)::value * S + PZ - R;
          float acc[4][S];
#pragma unroll
          for (int p = 0; p < 4; ++p)
#pragma unroll
            for (int q = 0; q < S; ++q) acc[p][q] = 0.f;
#pragma unroll
          for (int i = 0; i < S + 2 * R; ++i) {
            const float* b = col + ((FIRST + i) % NS) * PL;
#pragma unroll
            for (int p = 0; p < 4; ++p) {
              const float v = b[p * kVolTx];
#pragma unroll
              for (int q = 0; q < S; ++q) {
                const int j = i - q;
                if (j >= 0 && j <= 2 * R) acc[p][q] = fmaf(wz.w[j], v, acc[p][q]);
              }
            }
          }
          if (x < g.nx) {
            float probe = 0.f;  // noted per step: a register held across the march spilled
#pragma unroll
            for (int p = 0; p < 4; ++p)
              if (y0 + yq + p < g.ny) {
#pragma unroll
                for (int q = 0; q < S; ++q)
                  if (q < nzo) {
                    const float v = g.scale(acc[p][q]);  // (unconditional: fewer registers)
                    o[p * g.nx + q * plane] = v;
                    probe = probe_nonfinite(probe, v);
                  }
              }
            note(probe);
          }
        });
      }
      slot += S;
      if (slot == NS) slot = 0;
    }
    __syncthreads();  // the next item's first stash overwrites the tile
  }
}

// ---------------------------------------------------------------------------------------------
// Volumes in one pass, tiles by the tensor memory accelerator (vol_tma_kernel): vol_kernel's
// work where the rows are 16-byte aligned on an sm_90 device, with three changes that take the
// loads, the ring of planes and one barrier per plane off the threads:
//   - each input plane's tile (vt_ty(R) + 2R rows of vol_tile_pitch(R) columns) is one tensor
//     copy into a stage of a ring of kVtStages, issued kVtStages - 1 planes ahead by one thread,
//     its landing counted on the stage's mbarrier (zeros beyond the volume; a ghost plane of
//     the other modes is the copy of the plane it maps to);
//   - along z each thread keeps its outputs (one column, vt_ty(R) / 4 rows) in registers, a
//     queue of 2R + 1 partial sums per output that each x-y-filtered plane adds into (the sum
//     leaving the queue is complete), instead of a ring of planes in shared memory;
//   - plane i's x pass and plane i - 1's y and z passes share one barrier interval (the
//     x-filtered rows kept twice), so each plane costs one __syncthreads.
// At the faces, where a mode other than zero ghosts applies, the x pass reads each tile row
// beyond a y face from its source row in the tile (or a row of cval), and the runs that reach an
// x face read their columns through a map of the tile's columns; where a source lies outside the
// tile (wrap, axes shorter than the halo), the threads rewrite those cells after each copy
// lands instead. Tiles of 64 x 24 outputs at R = 4 (64 x 16 at R = 8): the x pass's 32 rows of 8
// runs give each of the 256 threads one run (docs/notes/tuning.md, "Volumes by tensor-map tiles").
// ---------------------------------------------------------------------------------------------

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
  return fast::slot_size((vt_ty(r) + 2 * r) * vol_tile_pitch(r) * int(sizeof(float))) /
         int(sizeof(float));
}
std::size_t vol_tma_shared_bytes(int r) {
  return sizeof(float) * (std::size_t(kVtStages) * vt_stage_floats(r) +
                          2 * std::size_t(vt_ty(r) + 2 * r) * vol_x_pitch()) +
         (sizeof(i64) + sizeof(int)) * vt_fix(r) * kVolThreads +
         sizeof(int) * (kVolTx + 2 * pad4(r)) + sizeof(float) * vol_tile_pitch(r) +
         kVtStages * sizeof(std::uint64_t);
}

// Whether tiles may come by the tensor memory accelerator: a device with tensor maps, and no
// tuning asking for the register prefetch (FastTuning::feed = prefetch keeps the register-fed
// kernels, for comparisons and their tests).
bool tma_tiles_wanted(const Problem& p) {
  if (p.tuning().feed.value_or(FastFeed::tma) == FastFeed::prefetch) return false;
  try {
    return fast::current_device_facts().tensor_maps();
  } catch (const Error&) {  // no device (a plan described on a machine without one)
    return false;
  }
}

// Whether a fused pass of radius r (float32) takes tiles by the tensor memory accelerator where
// its rows are 16-byte aligned.
bool sep_tma_wanted(int r, const Problem& p) {
  return r >= kSepTmaLow && r <= kSepTmaTop && tma_tiles_wanted(p);
}

// Whether a volume of radius r takes vol_tma_kernel where its rows are 16-byte aligned (else
// vol_kernel).
bool vol_tma_wanted(int r, const Problem& p) {
  return (r == kVolTop || r == kVolTmaTop) && tma_tiles_wanted(p);
}

// x_run8 on a row read through a map of its columns (`map`: the run's 8 + 2 PAD source columns,
// 16-byte aligned; -1: cval): the runs that reach a face.
template <int R, int PAD>
__device__ __forceinline__ void x_run8_mapped(const float* row, const int* map, float cval,
                                              const Taps<float, R>& w, float (&acc)[8]) {
#pragma unroll
  for (int i0 = 0; i0 < 8 + 2 * PAD; i0 += 4) {
    const int4 m = *reinterpret_cast<const int4*>(map + i0);
    const float v[4] = {m.x < 0 ? cval : row[m.x], m.y < 0 ? cval : row[m.y],
                        m.z < 0 ? cval : row[m.z], m.w < 0 ? cval : row[m.w]};
    x_taps8<float, R, PAD>(i0, v, w, acc);
  }
}

template <int R>
__global__ void __launch_bounds__(kVolThreads, 2)
    vol_tma_kernel(const float* __restrict__ in, float* __restrict__ out, VolGeom g,
                   const __grid_constant__ CUtensorMap map, Taps<float, R> wx, Taps<float, R> wy,
                   Taps<float, R> wz, NonFiniteNote note) {
  constexpr int P = pad4(R), TY = vt_ty(R), TR = TY + 2 * R, TP = vol_tile_pitch(R);
  constexpr int XP = vol_x_pitch(), FIX = vt_fix(R);
  constexpr int W = kVolTx + 2 * P;  // tile columns the x pass reads
  constexpr int NST = kVtStages, K = 2 * R + 1, RY = TY / 4, ST = vt_stage_floats(R);
  static_assert(TR * (kVolTx / 8) <= kVolThreads, "one x run per thread");
  extern __shared__ __align__(128) unsigned char vt_smem[];
  float* stages = reinterpret_cast<float*>(vt_smem);  // [NST][TR][TP]
  float* xs = stages + NST * ST;                      // [2][TR][XP]
  i64* foff = reinterpret_cast<i64*>(xs + 2 * TR * XP);     // [FIX][threads]
  int* fat = reinterpret_cast<int*>(foff + FIX * kVolThreads);  // [FIX][threads]
  int* xmap = fat + FIX * kVolThreads;                          // [W]
  float* crow = reinterpret_cast<float*>(xmap + W);             // [TP]: a row of cval
  std::uint64_t* bar = reinterpret_cast<std::uint64_t*>(crow + TP);
  const int t = threadIdx.x;
  const int c = t % kVolTx, yq = (t / kVolTx) * RY;  // y and z: column c, rows yq .. + RY - 1
  const i64 plane = g.nx * g.ny;
  const bool zero_ghosts = g.cval == 0.f;
  float probe = 0.f;  // probe_nonfinite over the outputs this thread stores
  for (int e = t; e < TP; e += kVolThreads) crow[e] = g.cval;
  if (t == 0) {
    for (int k = 0; k < NST; ++k) fast::mbarrier_init<1>(fast::shared_address(bar + k));
    fast::mbarrier_init_fence();
  }
  __syncthreads();
  int fill = 0, use = 0;   // the stages the next copy fills and the next plane reads
  std::uint32_t phase = 0; // the parity of the next read's phase (of stage `use`)

  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 per_chunk = g.tiles_x * g.tiles_y, per_item = per_chunk * g.chunks;
    const i64 item = w / per_item, rest = w - item * per_item;
    const i64 ch = rest / per_chunk, tl = rest - ch * per_chunk;
    // Tile columns skewed by the tile row: a block's items lie gridDim.x apart, a multiple of
    // tiles_x at every size of the grid, so unskewed a block would take the same column of
    // tiles each time (those at an x face every time, where the modes cost more).
    const i64 ty = tl / g.tiles_x, txs = tl - ty * g.tiles_x + ty % g.tiles_x;
    const i64 x0 = (txs < g.tiles_x ? txs : txs - g.tiles_x) * kVolTx, y0 = ty * TY;
    const i64 z0 = ch * g.chunk, z_end = min(g.nz, z0 + g.chunk);
    const int n_in = int(z_end - z0) + 2 * R;  // input planes z0 - R .. z_end + R - 1
    const float* src = in + item * plane * g.nz;
    // Input plane j's z in the tensor map: the plane it maps to, or -1 (beyond the volume:
    // zeros) for a cval plane.
    auto zcoord = [&](int j) -> int {
      const i64 z = z0 - R + j;
      if (z >= 0 && z < g.nz) return int(z);
      const i64 m = sep_map(z, g.nz, g.zmode);
      return m < 0 ? -1 : int(m);
    };
    auto issue = [&](int j) {
      const std::uint32_t b = fast::shared_address(bar + fill);
      fast::mbarrier_expect_bytes(b, std::uint32_t(TR * TP * sizeof(float)));
      fast::copy_box(stages + fill * ST, &map, int(x0 - P), int(y0 - R), zcoord(j), int(item),
                     b);
      fill = fill + 1 == NST ? 0 : fill + 1;
    };
    if (t == 0)
      for (int j = 0; j < NST - 1 && j < n_in; ++j) issue(j);

    // The tile's cells outside the volume that its outputs read (rows [0, rt) and [rb, re),
    // columns [0, cl) and [cr, ce)), which the copy fills with zeros: where the axis's mode is not
    // zero ghosts, each thread rewrites up to FIX of them, listed once per item (`fat`: the
    // cell, `foff`: the element of the plane it reads, -1: cval, -2 - e: element e of the stage,
    // a cell inside the volume). Loads from the plane for plane i + 1 are issued in iteration i;
    // copies within the stage (reflect, mirror and nearest beside a face) need no load at all.
    const int rt = int(min(i64(TR), max(i64(0), R - y0)));
    const int rb = int(max(i64(rt), min(i64(TR), g.ny - (y0 - R)))), re = min(TR, rb + R);
    const int cl = int(min(i64(W), max(i64(0), P - x0)));
    const int cr = int(max(i64(cl), min(i64(W), g.nx - (x0 - P)))), ce = min(W, cr + R);
    const bool fixy = (rt > 0 || rb < re) && !(g.ymode == int(Boundary::constant) && zero_ghosts);
    const bool fixx = (cl > 0 || cr < ce) && !(g.xmode == int(Boundary::constant) && zero_ghosts);
    const int ny_cells = fixy ? (rt + re - rb) * W : 0, nc = cl + ce - cr;
    const int n_fix = ny_cells + (fixx ? (rb - rt) * nc : 0);
    // Where every such cell maps into the tile or to cval (reflect, mirror, nearest and
    // constant beside a face the halo does not cross), nothing is rewritten: the x pass reads
    // each tile row from its source row (`sr`, -1: crow) and, in the runs that reach the cells
    // outside along x, each column through `xmap` (-1: cval). Otherwise (wrap, short axes) the
    // cells are rewritten in every plane, and the maps stay the identity.
    const int xr = t % TR, c0 = (t / TR) * 8;  // this thread's x run: row xr, columns c0 ..
    int sr = xr;
    bool far = false;
    // idx = the tile index of the source of coordinate v (outside an axis of n through `mode`)
    // among the tile's `cells` from `first`, -1 for cval; far where it lies outside the tile.
    auto source = [&](i64 v, i64 n, int mode, i64 first, int cells, int& idx) {
      const i64 m = sep_map(v, n, mode), s = m - first;
      if (m < 0)
        idx = -1;
      else if (s >= 0 && s < cells)
        idx = int(s);
      else
        far = true;
    };
    if (fixy && (xr < rt || (xr >= rb && xr < re)))
      source(y0 - R + xr, g.ny, g.ymode, y0 - R, TR, sr);
    if (t < W) {
      int sc = t;
      if (fixx && (t < cl || (t >= cr && t < ce))) source(x0 - P + t, g.nx, g.xmode, x0 - P, W, sc);
      xmap[t] = sc;
    }
    const bool fix = __syncthreads_or(far);
    if (fix) sr = xr;
    const bool mapped_run = !fix && fixx && (c0 < cl || c0 + 8 + 2 * P > cr);
    if (fix) {
#pragma unroll
      for (int k = 0; k < FIX; ++k) {
        const int e = t + k * kVolThreads;
        if (e < n_fix) {
          int r, cc;
          if (e < ny_cells) {
            const int ri = e / W;
            cc = e - ri * W;
            r = ri < rt ? ri : rb + ri - rt;
          } else {
            const int ri = (e - ny_cells) / nc, kk = e - ny_cells - ri * nc;
            r = rt + ri;
            cc = kk < cl ? kk : cr + kk - cl;
          }
          const i64 y = y0 - R + r, xx = x0 - P + cc;
          const i64 my = y >= 0 && y < g.ny ? y : sep_map(y, g.ny, g.ymode);
          const i64 mx = xx >= 0 && xx < g.nx ? xx : sep_map(xx, g.nx, g.xmode);
          // A source inside the tile (reflect, mirror and nearest beside a face long enough):
          // a copy within the stage, -2 - its index.
          const i64 tr = my - (y0 - R), tc = mx - (x0 - P);
          fat[k * kVolThreads + t] = r * TP + cc;
          foff[k * kVolThreads + t] = my < 0 || mx < 0 ? -1
                                      : tr >= 0 && tr < TR && tc >= 0 && tc < W
                                          ? -2 - (tr * TP + tc)
                                          : my * g.nx + mx;
        }
      }
    }
    float fv[FIX];  // plane i + 1's values of this thread's cells
    auto fetch = [&](int j) {
      const int zc = j < n_in ? zcoord(j) : -1;
      if (!fix || zc < 0) return;
      const float* pl = src + zc * plane;
#pragma unroll
      for (int k = 0; k < FIX; ++k)
        if (t + k * kVolThreads < n_fix) {
          const i64 f = foff[k * kVolThreads + t];
          if (f >= -1) fv[k] = f < 0 ? g.cval : __ldg(pl + f);
        }
    };
    // Plane j's cells into stage st, once its copy has landed: fv, or cval everywhere for a
    // cval plane (zeros from the copy where cval is 0).
    auto put = [&](float* st, int j) {
      const int zc = zcoord(j);
      if (zc < 0) {
        if (!zero_ghosts)
          for (int e = t; e < TR * W; e += kVolThreads) st[(e / W) * TP + e % W] = g.cval;
      } else if (fix) {
#pragma unroll
        for (int k = 0; k < FIX; ++k)
          if (t + k * kVolThreads < n_fix) {
            const i64 f = foff[k * kVolThreads + t];
            st[fat[k * kVolThreads + t]] = f >= -1 ? fv[k] : st[-2 - f];
          }
      }
    };
    fetch(0);

    float q[RY][K];  // the z queue: q[p][o % K], output plane o of row yq + p
#pragma unroll
    for (int p = 0; p < RY; ++p)
#pragma unroll
      for (int k = 0; k < K; ++k) q[p][k] = 0.f;
    const i64 x = x0 + c;
    const int rows = int(min(i64(RY), max(i64(0), g.ny - (y0 + yq))));  // this thread's rows
    float* o = out + item * plane * g.nz + z0 * plane + (y0 + yq) * g.nx + x;
    int slot = 0;  // plane i - 1's slot in the queue: (i - 1) mod K
    for (int i = 0; i <= n_in; ++i) {
      if (i < n_in) {
        fast::mbarrier_wait(fast::shared_address(bar + use), phase);
        if (fix || !zero_ghosts) {
          put(stages + use * ST, i);
          fast::fence_proxy_async_shared();  // before the stage's next copy
        }
      }
      __syncthreads();
      if (t == 0 && i + NST - 1 < n_in) issue(i + NST - 1);
      fetch(i + 1);
      if (i < n_in) {
        // Plane i along x: thread t takes run t, row t % TR (the 8 threads of a shared-memory
        // phase read 8 rows, x_run8), columns 8 (t / TR) .. + 7.
        if (t < TR * (kVolTx / 8)) {
          const float* row = sr >= 0 ? stages + use * ST + sr * TP : crow;
          float acc[8];
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[e] = 0.f;
          if (mapped_run)
            x_run8_mapped<R, P>(row, xmap + c0, g.cval, wx, acc);
          else
            x_run8<float, R, P>(row + c0, wx, acc);
          float* d = xs + (i & 1) * TR * XP + xr * XP + c0;
          store4(d, acc);
          store4(d + 4, acc + 4);
        }
        use = use + 1 == NST ? 0 : use + 1;
        if (use == 0) phase ^= 1u;
      }
      if (i >= 1) {
        // Plane i - 1 along y, then into the z queue: it completes output plane i - 1 - 2R.
        float v[RY];
        y_column(xs + ((i - 1) & 1) * TR * XP + yq * XP + c, XP, wy, v);
        const bool done = i - 1 >= 2 * R;
        vol_case<K>(slot, [&](auto sc) {
          constexpr int S = decltype(sc)::value, DONE = (S + 1) % K;
#pragma unroll
          for (int m = 0; m <= 2 * R; ++m)
#pragma unroll
            for (int p = 0; p < RY; ++p)
              q[p][(S - m + K) % K] = fmaf(wz.w[m], v[p], q[p][(S - m + K) % K]);
          if (done && x < g.nx) {
            float v[RY];
#pragma unroll
            for (int p = 0; p < RY; ++p) v[p] = q[p][DONE];
            g.scale.apply(v);
#pragma unroll
            for (int p = 0; p < RY; ++p)
              if (p < rows) {
                o[p * g.nx] = v[p];
                probe = probe_nonfinite(probe, v[p]);
              }
          }
#pragma unroll
          for (int p = 0; p < RY; ++p) q[p][DONE] = 0.f;
        });
        if (done) o += plane;
        slot = slot + 1 == K ? 0 : slot + 1;
      }
    }
  }
  note(probe);
}

// ---------------------------------------------------------------------------------------------
// Box rows: a float32 box factor along x alone (1-D signals, boxes along x) on rows of at least
// kBoxRowMin elements. A block takes segments of 4096 outputs of a row in turn: it copies the
// segment's inputs and the k - 1 more its windows reach into shared memory (cp.async, all of a
// thread's copies in flight at once) and sums them in
// chunks of 16; thread t sums the window of its first output (16 t) from k / 16 chunk sums and
// k % 16 inputs, then slides it over its other 15 outputs ((s + a) - b, restarted for each
// thread: B = 16 in docs/ACCURACY.md). About 6 shared-memory reads and 4 adds per output
// whatever k, where separable_kernel's strips read k / 8 + 2 and sum k / 8 + 2 (and load twice
// the 256 columns they write at k = 255).
// ---------------------------------------------------------------------------------------------
constexpr int kBoxThreads = 256;
constexpr int kBoxRun = 16;                          // outputs per thread, and the chunk length
constexpr int kBoxSeg = kBoxThreads * kBoxRun;       // outputs per segment
constexpr int kBoxMaxTaps = 2 * 128 + 1;             // the longest row factor (sep_row_radius)
constexpr int kBoxTile = kBoxSeg + kBoxMaxTaps - 1;  // inputs of a segment, at most
constexpr int kBoxChunks = kBoxSeg / kBoxRun + kBoxMaxTaps / kBoxRun;
constexpr int kBoxRowMin = kSepWide;  // shorter rows take separable_kernel's strips
// 1-D boxes of this many taps or more run as box rows rather than in `fast` (H100, 2^28 floats:
// docs/notes/tuning.md, "Box rows"); FastTuning::box_rows_taps measured on another device.
constexpr int kBoxRowsOverFast = 66;

// Shared-memory index of tile element u: a padding word every 32, so that a warp's reads of
// elements 16 apart (the same element of each thread's run) fall in different banks.
__device__ __forceinline__ int box_skew(int u) { return u + (u >> 5); }

// Tile elements 0 .. len - 1 of a row segment: input xs + u of the row of nx, through the
// mode's map outside it, skewed; thread t of THREADS loads u = t, t + THREADS ... Inside the row
// by cp.async, every copy of the thread in flight at once and none holding a register (loads
// through registers kept too few in flight within box rows' 40: docs/notes/tuning.md, "Box rows").
template <int THREADS, int UNROLL>
__device__ __forceinline__ void load_row_tile(float* tile, const float* __restrict__ src, i64 xs,
                                              int len, i64 nx, int mode, float cval) {
  const int t = threadIdx.x;
  if (xs >= 0 && xs + len <= nx) {
#pragma unroll UNROLL
    for (int u = t; u < len; u += THREADS)
      fast::copy_async<4>(tile + box_skew(u), src + xs + u, true);
    fast::commit_async();
    fast::wait_async<0>();  // this thread's copies; the caller's barrier, everyone's
  } else {
    for (int u = t; u < len; u += THREADS)
      tile[box_skew(u)] = load_mapped(src, xs + u, nx, 1, mode, cval);
  }
}

// A thread's RUN sums from o into the tile, once every read of it is done, then the segment's
// n outputs from the tile to dst, coalesced: the sums scaled by `scale`, each probed into `probe`.
template <int THREADS, int RUN>
__device__ __forceinline__ void store_row_tile(float* tile, const float (&acc)[RUN], int o, int n,
                                               float* dst, const SumScale& scale, float& probe) {
  __syncthreads();  // every read of the tile is done: the outputs go there
  if (o < n) {
#pragma unroll
    for (int q = 0; q < RUN; ++q) tile[box_skew(o + q)] = acc[q];
  }
  __syncthreads();
  if (scale.on) {
    for (int u = threadIdx.x; u < n; u += THREADS) {
      const float v = scale(tile[box_skew(u)]);
      dst[u] = v;
      probe = probe_nonfinite(probe, v);
    }
  } else {
    for (int u = threadIdx.x; u < n; u += THREADS) {
      const float v = tile[box_skew(u)];
      dst[u] = v;
      probe = probe_nonfinite(probe, v);
    }
  }
}

struct BoxRowGeom {
  i64 nx, segs, work;  // rows of nx elements, nx apart; segments per row; rows * segs
  int a, k;            // output x sums inputs x + a .. x + a + k - 1, then `scale`
  int mode;            // Boundary along x
  float cval;
  SumScale scale;
};

// 6 blocks per SM (40 registers): 0.90 ms for the 1-D box 255, against 0.99 at 64 registers
// (4 blocks) and 0.98 at 32 (8 blocks, spilling): docs/notes/tuning.md, "Box rows".
__global__ void __launch_bounds__(kBoxThreads, 6)
    box_row_kernel(const float* __restrict__ in, float* __restrict__ out, BoxRowGeom g,
                   NonFiniteNote note) {
  __shared__ float tile[kBoxTile + kBoxTile / 32 + 1];
  __shared__ float chunk[kBoxChunks];
  const int t = threadIdx.x, o = t * kBoxRun;  // o: the thread's first output in the segment
  const int full = g.k / kBoxRun, rest = g.k - full * kBoxRun;
  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 row = w / g.segs, x0 = (w - row * g.segs) * kBoxSeg;
    const int n = int(min(i64(kBoxSeg), g.nx - x0));  // outputs of the segment
    const int n16 = (n + kBoxRun - 1) / kBoxRun * kBoxRun;
    const int len = n16 + g.k - 1;  // the tile elements the runs read
    const float* src = in + row * g.nx;
    const i64 xs = x0 + g.a;  // the input of tile element 0
    __syncthreads();          // the previous segment's outputs are stored
    load_row_tile<kBoxThreads, 6>(tile, src, xs, len, g.nx, g.mode, g.cval);
    __syncthreads();
    // Chunk j: tile elements 16 j .. 16 j + 15, for the chunks the first windows cover.
    const int chunks = full > 0 ? n16 / kBoxRun + full - 1 : 0;
    for (int j = t; j < chunks; j += kBoxThreads) {
      float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int i = 0; i < kBoxRun; ++i) s[i % 4] += tile[box_skew(j * kBoxRun + i)];
      chunk[j] = (s[0] + s[1]) + (s[2] + s[3]);
    }
    __syncthreads();
    float acc[kBoxRun];
    if (o < n) {
      // The first window, tile elements o .. o + k - 1: chunks t .. t + full - 1, then `rest`.
      float s0 = 0.f, s1 = 0.f;
      int j = 0;
      for (; j + 2 <= full; j += 2) {
        s0 += chunk[t + j];
        s1 += chunk[t + j + 1];
      }
      if (j < full) s0 += chunk[t + j];
      for (int i = 0; i < rest; ++i) s1 += tile[box_skew(o + full * kBoxRun + i)];
      float s = s0 + s1;
      acc[0] = s;
#pragma unroll
      for (int q = 1; q < kBoxRun; ++q) {
        s = (s + tile[box_skew(o + q - 1 + g.k)]) - tile[box_skew(o + q - 1)];
        acc[q] = s;
      }
    }
    float probe = 0.f;  // noted per segment (held across them it spilled)
    store_row_tile<kBoxThreads>(tile, acc, o, n, out + row * g.nx + x0, g.scale, probe);
    note(probe);
  }
}

// ---------------------------------------------------------------------------------------------
// Box columns: a float32 box factor down y (or z, a plane per row) longer than the ring holds
// (radius above 64), up to kColMaxTaps. Each thread owns a column; a block takes a strip of 128
// columns by a chunk of output rows and walks down it in runs of 16 outputs. Input rows come in
// blocks of 16 as the walk reaches them; each block's column sum goes into a ring of chunk sums
// (shared memory, one slot column per thread). Run r's first window is k / 16 chunk sums plus
// k % 16 rows of the next block; its other 15 outputs slide it ((s + a) - b), the rows leaving
// read again from memory. No thread reads another's column: no barriers. The input is read
// about twice and the output written once, whatever k; every output is within a run of 16 of
// its window's direct sum (B = 16 in docs/ACCURACY.md).
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
std::size_t col_shared_bytes(int k) {
  return sizeof(float) * kColThreads * std::size_t(k / kColRun + 1 + 2 * kColRun);
}

__global__ void __launch_bounds__(kColThreads)
    box_col_kernel(const float* __restrict__ in, float* __restrict__ out, BoxColGeom g,
                   NonFiniteNote note) {
  extern __shared__ __align__(16) unsigned char col_smem[];
  const int t = threadIdx.x;
  const int full = g.k / kColRun, rest = g.k - full * kColRun, slots = full + 1;
  float* ring = reinterpret_cast<float*>(col_smem) + t;  // slot j at ring[j * kColThreads]
  float* raw = ring + slots * kColThreads;               // rows of two blocks, E0 then E1
  const i64 per_item = g.strips * g.chunks;
  float probe = 0.f;
  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 item = w / per_item, rem = w - item * per_item;
    const i64 cy = rem / g.strips, x = (rem - cy * g.strips) * kColThreads + t;
    if (x >= g.nx) continue;
    const i64 y0 = cy * g.chunk, y1 = min(g.rows, y0 + g.chunk);
    const float* src = in + item * g.item_stride + x;
    float* dst = out + item * g.item_stride + x;
    const i64 f = y0 + g.a;  // input row of block 0's first row
    // Input rows y .. y + 15 of this column into v.
    auto load_rows = [&](i64 y, float (&v)[kColRun]) {
      load_column_run(src, y, g.rows, g.row_stride, g.mode, g.cval, v);
    };
    // Block b's rows into raw half h; returns their sum.
    auto load_block = [&](i64 b, int h) {
      float v[kColRun];
      load_rows(f + b * kColRun, v);
      float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int i = 0; i < kColRun; ++i) {
        raw[(h * kColRun + i) * kColThreads] = v[i];
        s[i % 4] += v[i];
      }
      return (s[0] + s[1]) + (s[2] + s[3]);
    };
    // Blocks 0 .. full - 1 as chunk sums (block b in slot b % slots); E0 = block full,
    // E1 = block full + 1, with their sums.
    for (int b = 0; b < full; ++b) ring[b * kColThreads] = load_block(b, 0);
    float e0 = load_block(full, 0), e1 = load_block(full + 1, 1);
    int h0 = 0;  // the raw half holding E0
    int rs = 0;  // r % slots
    const i64 runs = (y1 - y0 + kColRun - 1) / kColRun;
    for (i64 r = 0; r < runs; ++r) {
      // The rows leaving the window over this run (block r), loaded first: in flight meanwhile.
      float lv[kColRun];
      load_rows(f + r * kColRun, lv);
      // First window: the chunk sums of blocks r .. r + full - 1, then `rest` rows of E0.
      float s0 = 0.f, s1 = 0.f;
      for (int j = 0, sl = rs; j < full; ++j) {
        (j & 1 ? s1 : s0) += ring[sl * kColThreads];
        if (++sl == slots) sl = 0;
      }
      const float* ea = raw + h0 * kColRun * kColThreads;        // E0
      const float* eb = raw + (1 - h0) * kColRun * kColThreads;  // E1
      for (int i = 0; i < rest; ++i) s1 += ea[i * kColThreads];
      float s = s0 + s1;
      const i64 yo = y0 + r * kColRun;
      float* o = dst + yo * g.row_stride;
      const int n = int(min(i64(kColRun), y1 - yo));
      const float first = g.scale(s);
      o[0] = first;
      probe = probe_nonfinite(probe, first);
#pragma unroll
      for (int q = 1; q < kColRun; ++q) {
        const int i = rest + q - 1;  // the row of E0 (of E1 from 16) entering the window
        const float v = i < kColRun ? ea[i * kColThreads] : eb[(i - kColRun) * kColThreads];
        s = (s + v) - lv[q - 1];
        if (q < n) {
          const float u = g.scale(s);
          o[q * g.row_stride] = u;
          probe = probe_nonfinite(probe, u);
        }
      }
      // Block r + full's sum takes the slot of block r - 1 (read by no run from r on); E1
      // becomes E0, and block r + full + 2 comes into the half E0 held.
      int sw = rs + full;
      if (sw >= slots) sw -= slots;
      ring[sw * kColThreads] = e0;
      e0 = e1;
      if (r + 1 < runs) e1 = load_block(r + full + 2, h0);
      h0 = 1 - h0;
      if (++rs == slots) rs = 0;
    }
  }
  note(probe);
}

// ---------------------------------------------------------------------------------------------
// Long columns: a float32 factor down y (or z, a plane per row) longer than the ring holds
// (radius above 64) and not a box, up to kLongMaxTaps. A block of 8 warps takes a strip of 32
// columns by a chunk of rows and marches down it in steps of 128 output rows: warp w computes
// rows 16 w .. 16 w + 15 of the step, one column per lane, all 16 from the same input rows. The
// strip's input rows stream through a ring of `batches` batches of 128 rows (shared memory, a
// lane's column in its bank); the step's next batch is loaded into registers while the step
// computes. A group of 16 ring rows feeds 16 x 16 FFMAs from 16 reads of the ring and 8 16-byte
// broadcast reads of the weights: FMA-bound, (k + 15) rounded up to 16 FFMAs per output. The
// input is read once and the output written once, whatever k. Each output is a plain sum of its
// taps in order (with the zero taps of the padding), as the ring kernel's.
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
int long_groups(int k) { return (k + kLongRun - 1 + kLongRun - 1) / kLongRun; }
// Batches the ring holds: every row the step's last warp reads.
int long_batches(int k) {
  return (kLongStep - kLongRun + long_groups(k) * kLongRun + kLongStep - 1) / kLongStep;
}
std::size_t long_shared_bytes(int k) {
  return sizeof(float) * (std::size_t(long_batches(k)) * kLongStep * 32 + kLongWeights);
}

// One group of a long factor's sums: acc[q] += w[16 gi + u - q] v[u] for u, q < 16, where
// ws = the weights as read + 16 gi (16-byte aligned; they start with 15 zeros).
__device__ __forceinline__ void long_group(float (&acc)[kLongRun], const float (&v)[kLongRun],
                                           const float* ws) {
  float wv[2 * kLongRun];
  const float4* w4 = reinterpret_cast<const float4*>(ws);
#pragma unroll
  for (int m = 0; m < kLongRun / 2; ++m) {
    const float4 c = w4[m];
    wv[4 * m] = c.x, wv[4 * m + 1] = c.y, wv[4 * m + 2] = c.z, wv[4 * m + 3] = c.w;
  }
#pragma unroll
  for (int u = 0; u < kLongRun; ++u)
#pragma unroll
    for (int q = 0; q < kLongRun; ++q) acc[q] = fmaf(wv[u - q + kLongRun - 1], v[u], acc[q]);
}

// 3 blocks per SM (80 registers): 2.36 ms at 161 taps against 2.48 at 2 (108 registers).
__global__ void __launch_bounds__(kLongThreads, 3)
    long_col_kernel(const float* __restrict__ in, float* __restrict__ out, LongColGeom g,
                    const __grid_constant__ LongTaps taps, NonFiniteNote note) {
  extern __shared__ __align__(16) unsigned char long_smem[];
  float* ring = reinterpret_cast<float*>(long_smem);  // [batches * 128 rows][32 columns]
  const int ring_rows = g.batches * kLongStep;
  float* ws = ring + ring_rows * 32;  // the weights as read, 16-byte aligned
  for (int j = threadIdx.x; j < kLongWeights; j += kLongThreads) ws[j] = taps.w[j];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const i64 per_item = g.strips * g.chunks;
  float probe = 0.f;
  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 item = w / per_item, rem = w - item * per_item;
    const i64 cy = rem / g.strips, x = (rem - cy * g.strips) * 32 + lane;
    const bool live = x < g.nx;
    const i64 y0 = cy * g.chunk, y1 = min(g.rows, y0 + g.chunk);
    const float* src = in + item * g.item_stride + (live ? x : 0);
    const i64 f = y0 + g.a;  // input row of batch 0's first row
    // Warp w's 16 rows of batch b, of this lane's column.
    auto load_batch = [&](i64 b, float (&v)[kLongRun]) {
      const i64 y = f + b * kLongStep + warp * kLongRun;
      if (!live) {
#pragma unroll
        for (int i = 0; i < kLongRun; ++i) v[i] = 0.f;
      } else {
        load_column_run(src, y, g.rows, g.row_stride, g.mode, g.cval, v);
      }
    };
    auto store_batch = [&](i64 b, const float (&v)[kLongRun]) {
      float* r = ring + (int(b % g.batches) * kLongStep + warp * kLongRun) * 32 + lane;
#pragma unroll
      for (int i = 0; i < kLongRun; ++i) r[i * 32] = v[i];
    };
    __syncthreads();  // the previous work item's reads of the ring are done
    for (int b = 0; b < g.batches; ++b) {
      float v[kLongRun];
      load_batch(b, v);
      store_batch(b, v);
    }
    __syncthreads();
    const i64 steps = (y1 - y0 + kLongStep - 1) / kLongStep;
    for (i64 s = 0; s < steps; ++s) {
      // Batch s + batches takes batch s's slot once every warp has read it.
      float next[kLongRun];
      const bool more = s + 1 < steps;
      if (more) load_batch(s + g.batches, next);
      float acc[kLongRun];
#pragma unroll
      for (int q = 0; q < kLongRun; ++q) acc[q] = 0.f;
      int row = int(s % g.batches) * kLongStep + warp * kLongRun;  // ring row of group 0
      for (int gi = 0; gi < g.groups; ++gi) {
        if (row >= ring_rows) row -= ring_rows;
        float v[kLongRun];
#pragma unroll
        for (int u = 0; u < kLongRun; ++u) v[u] = ring[(row + u) * 32 + lane];
        long_group(acc, v, ws + gi * kLongRun);  // rows 16 gi + u of the warp's window
        row += kLongRun;
      }
      const i64 yo = y0 + s * kLongStep + warp * kLongRun;
      if (live) {
        float* o = out + item * g.item_stride + x + yo * g.row_stride;
        const int n = int(min(i64(kLongRun), y1 - yo));
        g.scale.apply(acc);
#pragma unroll
        for (int q = 0; q < kLongRun; ++q)
          if (q < n) {
            o[q * g.row_stride] = acc[q];
            probe = probe_nonfinite(probe, acc[q]);
          }
      }
      __syncthreads();  // every warp is done with batch s
      if (more) {
        store_batch(s + g.batches, next);
        __syncthreads();
      }
    }
  }
  note(probe);
}

// ---------------------------------------------------------------------------------------------
// Long rows: a float32 factor along x beyond the strip kernel's radii (128 in a pass along x
// alone, 64 fused with y; up to kLongMaxTaps), on rows of kLongRowMin or more. A block takes
// segments of 4096 outputs of a row in turn: it loads the segment's inputs and the k - 1 more
// its windows reach into shared memory (skewed as box rows' tile), and thread t computes
// outputs 16 t .. 16 t + 15 from groups of 16 inputs, as a warp of long columns does down a
// column; the outputs go back through the tile, so that the stores are coalesced.
// ---------------------------------------------------------------------------------------------
constexpr int kLongRowSeg = kLongThreads * kLongRun;  // outputs per segment
constexpr int kLongRowMin = kSepWide;                 // shorter rows take the strip kernel
// 1-D arrays: long rows up to this many taps, `fft` beyond (H100, 2^28 float32: 257 taps
// 3.83 ms against 4.72, 513 taps 7.00 against 4.69; docs/notes/tuning.md, "Long rows");
// FastTuning::long_rows_taps measured on another device.
constexpr int kLongRowsOverFft = 321;

struct LongRowGeom {
  i64 nx, segs, work;  // rows of nx elements, nx apart; segments per row; rows * segs
  int a;               // output x reads inputs x + a .. x + a + k - 1 (a = -radius)
  int groups;          // groups of 16 inputs a thread reads: ceil((k + 15) / 16)
  int mode;            // Boundary along x
  float cval;
  SumScale scale;
};
// Tile elements a segment reads: its outputs' runs and the groups of the last one.
int long_row_tile(int k) { return kLongRowSeg - kLongRun + long_groups(k) * kLongRun; }
std::size_t long_row_shared_bytes(int k) {
  const int tile = long_row_tile(k);
  return sizeof(float) * (std::size_t(kLongWeights) + tile + tile / 32 + 1);
}

__global__ void __launch_bounds__(kLongThreads)
    long_row_kernel(const float* __restrict__ in, float* __restrict__ out, LongRowGeom g,
                    const __grid_constant__ LongTaps taps, NonFiniteNote note) {
  extern __shared__ __align__(16) unsigned char long_smem[];
  float* ws = reinterpret_cast<float*>(long_smem);  // the weights as read
  float* tile = ws + kLongWeights;
  for (int j = threadIdx.x; j < kLongWeights; j += kLongThreads) ws[j] = taps.w[j];
  const int t = threadIdx.x, o = t * kLongRun;  // o: the thread's first output in the segment
  float probe = 0.f;
  for (i64 w = blockIdx.x; w < g.work; w += gridDim.x) {
    const i64 row = w / g.segs, x0 = (w - row * g.segs) * kLongRowSeg;
    const int n = int(min(i64(kLongRowSeg), g.nx - x0));  // outputs of the segment
    const int len = (n + kLongRun - 1) / kLongRun * kLongRun - kLongRun + g.groups * kLongRun;
    const float* src = in + row * g.nx;
    const i64 xs = x0 + g.a;  // the input of tile element 0
    __syncthreads();          // the previous segment's outputs are stored
    load_row_tile<kLongThreads, 4>(tile, src, xs, len, g.nx, g.mode, g.cval);
    __syncthreads();
    float acc[kLongRun];
#pragma unroll
    for (int q = 0; q < kLongRun; ++q) acc[q] = 0.f;
    if (o < n) {
      for (int gi = 0; gi < g.groups; ++gi) {
        float v[kLongRun];
#pragma unroll
        for (int u = 0; u < kLongRun; ++u) v[u] = tile[box_skew(o + gi * kLongRun + u)];
        long_group(acc, v, ws + gi * kLongRun);
      }
    }
    store_row_tile<kLongThreads>(tile, acc, o, n, out + row * g.nx + x0, g.scale, probe);
  }
  note(probe);
}

// ---------------------------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------------------------
// How a problem runs: its windows, and per pass the kernel's radii and geometry.
struct SepPass {
  int rx = 0, ry = 0;  // compiled radii
  int wy = 1;  // the window (index into AxisWindows::w) read along y: y, or z in the z pass
  SepGeom g{};
  double cval_scale = 1;  // constant mode: cval times this (the factors applied before)
  // Box columns (box_col_kernel; rx = ry = 0): a box of colk taps down the rows, output y
  // summing rows y + cola .. y + cola + colk - 1, then g.scale. 0: not.
  int colk = 0, cola = 0;
  bool lng = false;   // long columns (long_col_kernel; rx = ry = 0) of window wy
  bool lrow = false;  // long rows (long_row_kernel; rx = ry = 0) of the x window
  i64 tma_chunk = 0;  // fused x-y passes: rows per chunk where the tiles come by tensor maps
  bool vol = false;   // x, y and z in one pass (vol_kernel; rx = ry = its radius), shape in vg
  VolGeom vg{};
  // A pass of the fused kernels with a box factor (g.scale.on), whether its running sums or its
  // FMAs (fewer than kSepBoxTaps taps, float64, direct sums) sum it: it runs the box
  // instantiation, the one that scales (the others carry no code for it).
  bool box_scale = false;
};
// Taps of a long pass's window (long rows: x; long columns: wy).
int long_taps_of(const SepPass& s, const detail::AxisWindows& win) {
  return 2 * win.radius[s.lrow ? 2 : s.wy] + 1;
}
// Box factors as taps of 1 and a scale per pass (SumScale), in every plan but a term of a sum:
// each box window (detail::box_run) becomes its run of ones. Where the boxes' weights multiply
// to 1 over the product of their taps (a uniform filter, whose 1 / K the factoring carries in
// one factor or spreads over them; to 8 ulps), each pass divides by its own boxes' taps, so
// that every pass over a constant region gives the constant exactly; else each pass multiplies
// by its boxes' weights.
struct BoxUnits {
  std::array<int, 3> k{0, 0, 0};     // axis a's box taps (z, y, x); 0: not a box
  std::array<double, 3> c{1, 1, 1};  // its weight
  bool divide = false;
  // The sum of axis a's weights as the passes apply them (a ghost of cval seen through them).
  double sum(const detail::AxisWindows& win, int a) const {
    if (k[a] > 0) return divide ? 1.0 : double(k[a]) * c[a];
    double s = 0;
    for (double w : win.w[a]) s += w;
    return s;
  }
  // The scale of a pass over `axes`.
  SumScale scale(const std::vector<int>& axes) const {
    double kp = 1, cp = 1;
    bool any = false;
    for (int a : axes)
      if (k[a] > 0) {
        any = true;
        kp *= double(k[a]);
        cp *= c[a];
      }
    SumScale s;
    if (!any || (!divide && cp == 1.0)) return s;  // (boxes of weight 1: their sums)
    s.on = 1;
    if (divide && kp < double(1 << 24)) {  // (the product of taps exact in float32)
      s.k = kp;
      s.kf = float(kp);
      s.c1 = s.c2 = 1.0 / kp;
      s.c1f = s.c2f = 1.0f / s.kf;  // RN(1 / k) in float32
    } else {
      s.c1 = divide ? 1.0 / kp : cp;
      s.c1f = float(s.c1);
    }
    return s;
  }
};
BoxUnits box_units(detail::AxisWindows& win) {
  BoxUnits u;
  double kb = 1, cb = 1;
  for (int a = 0; a < 3; ++a) {
    if (win.radius[a] == 0) continue;
    const auto b = detail::box_run(win.w[a]);
    if (!b) continue;
    u.k[a] = b->k;
    u.c[a] = b->c;
    kb *= double(b->k);
    cb *= b->c;
    for (int j = 0; j < b->k; ++j) win.w[a][std::size_t(b->lo + j)] = 1.0;
  }
  u.divide = kb > 1 && std::fabs(cb * kb - 1.0) <= 8 * std::numeric_limits<double>::epsilon();
  return u;
}

struct SepPlan {
  detail::AxisWindows win;  // box factors as runs of ones (BoxUnits)
  BoxUnits units;
  std::vector<SepPass> passes;
  std::string why_not;  // non-empty: cannot run
};

i64 ceil_div64(i64 a, i64 b) { return (a + b - 1) / b; }

// Chunks of `chunk` rows (rounded up to whole steps of `rows`, at most the pass's rows).
void set_chunk(SepGeom& g, i64 rows, i64 chunk) {
  g.chunk = std::min(ceil_div64(chunk, rows), ceil_div64(g.rows, rows)) * rows;
  g.chunks = ceil_div64(g.rows, g.chunk);
  g.work = g.strips * g.chunks * g.items;
}

// Chunks of a march: work items of a strip by a chunk of rows, many more than the blocks that
// fit the device (persistent blocks take them in turn, so the last wave is short), each long
// enough that refilling the ring (2 PY rows filtered along x again) costs at most 1/8 of it.
void size_march(SepGeom& g, int ry, bool box = false) {
  set_chunk(g, step_rows(ry, box), std::max<i64>(64, 16 * pad_y(ry, box)));
}

// The chunks of a fused pass fed by tensor maps (SepPass::tma_chunk), balanced over its `blocks`
// blocks, which take the work items in turn: of the chunk counts up to 16 waves of items, the
// one whose busiest block has the least to march. An item costs its rows plus half its 2 PY
// halo rows (loaded and filtered along x, but no outputs) plus a step (its first copy's latency,
// measured as about that: one chunk of 4096 rows a block ran a 16384^2 Gaussian of sigma 2 4%
// faster than ten of 400, which the rows alone rate equal), and a twentieth more in the strips at
// an x face under other modes than zero ghosts (their face cells copied within each step's
// stage; under reflect on 16384^2, chunks of 2048 rows measured faster than 1024 or 4096 at
// radii 16 and 32, which a tenth more rated worse), which the face-first work order
// (SepGeom::face_first) hands to the blocks with an item fewer where there are any. With chunks
// of 16 PY rows, the last wave of items left blocks idle (sigma 4: 4096 chunks of 256 rows on
// 264 blocks, 15.5 waves run as 16) and every 256 rows re-read 32 rows of halo. The
// register-fed kernels keep chunks of 16 PY rows (longer chunks measured slower there:
// docs/notes/tuning.md).
void balance_march(SepGeom& g, int ry, bool box, i64 blocks) {
  const i64 rows = step_rows(ry, box), halo = pad_y(ry, box);
  const i64 steps = ceil_div64(g.rows, rows);
  const bool faces = !zero_ghosts(g.xmode, g.cval);
  std::vector<double> load;  // per block, its items, face items weighing 1.05
  double best = -1;
  i64 best_chunk = g.chunk;
  for (i64 c = 1; c <= steps; ++c) {
    const i64 chunk = ceil_div64(ceil_div64(g.rows, c), rows) * rows;
    const i64 chunks = ceil_div64(g.rows, chunk);
    const i64 work = g.strips * chunks * g.items, waves = ceil_div64(work, blocks);
    if (c > 1 && waves > 16) break;
    double most = double(waves);  // the busiest block's load
    if (faces) {
      // The face-first order (launch_pass): position w takes item (w - work mod G) mod work;
      // else strips fastest.
      const i64 grid = std::min(blocks, work), start = work % grid;
      load.assign(std::size_t(grid), 0.0);
      for (i64 b = 0; b < grid; ++b) load[std::size_t(b)] = double(ceil_div64(work - b, grid));
      const i64 nf = g.strips >= 2 ? 2 : 1, nface = chunks * g.items * nf;
      for (i64 q = 0; q < nface; ++q) {
        const i64 w = face_first_compiled(ry) ? (start + q) % work
                                              : q / nf * g.strips + (q % nf ? g.strips - 1 : 0);
        load[std::size_t(w % grid)] += 0.05;
      }
      most = *std::max_element(load.begin(), load.end());
    }
    const double cost = double(chunk + halo + rows) * most;
    if (best < 0 || cost < best) {
      best = cost;
      best_chunk = chunk;
    }
  }
  set_chunk(g, rows, best_chunk);
}

SepGeom plain_geom(i64 nx, i64 rows, i64 row_stride, i64 items, i64 item_stride) {
  SepGeom g{};
  g.nx = nx;
  g.rows = rows;
  g.row_stride = row_stride;
  g.items = items;
  g.item_stride = item_stride;
  g.strips = ceil_div64(nx, kSepCols);
  return g;
}

// Box factors of at least this many taps take running sums (detail::box_run).
constexpr int kSepBoxTaps = 6;
// Sets a pass's box fields from window w where it is a box of kSepBoxTaps or more; returns
// whether it is.
int box_fields(const std::vector<double>& w, int& lo, int& k) {
  const auto box = detail::box_run(w);
  if (!box || box->k < kSepBoxTaps) return 0;
  lo = box->lo;
  k = box->k;
  return 1;
}

// Whether a pass of the fused kernels runs their box instantiation: running sums (float32), or
// a box factor's scale (SepPass::box_scale).
bool box_kernel(const SepPass& s) { return s.g.xbox || s.g.ybox || s.box_scale; }

// Whether fused x-y pass s takes tiles by tensor maps where its rows are 16-byte aligned
// (launch_pass's TMA feed).
bool sep_pass_tma(const SepPass& s, const Problem& p) {
  return p.dtype() == DType::f32 && s.rx > 0 && s.rx == s.ry && !s.vol &&
         sep_tma_wanted(s.rx, p);
}

// Empty where every pass's kernel fits the current device's shared memory per block, else why.
std::string shared_memory_why_not(const SepPlan& plan, DType t) {
  const std::size_t limit = current_device_limits().shared_per_block_optin;
  for (const SepPass& s : plan.passes) {
    const std::size_t b = s.vol             ? vol_shared_bytes(s.rx)
                          : s.colk          ? col_shared_bytes(s.colk)
                          : s.lng           ? long_shared_bytes(long_taps_of(s, plan.win))
                          : s.lrow          ? long_row_shared_bytes(long_taps_of(s, plan.win))
                          : t == DType::f32 ? sep_shared_bytes<float>(s.rx, s.ry, box_kernel(s))
                                            : sep_shared_bytes<double>(s.rx, s.ry, box_kernel(s));
    if (b > limit)
      return "needs " + std::to_string(b) + " B of shared memory per block, the device has " +
             std::to_string(limit);
  }
  return "";
}

// The passes that run the separable windows `win` over p's array. A `term` of a sum (the
// `lowrank` strategy) keeps every pass a plain sum of its taps (no box forms) and takes no
// one-pass volume kernel: its last pass adds into the output, which only separable_kernel does.
SepPlan make_plan(const Problem& p, const detail::AxisWindows& win_in, bool term) {
  SepPlan plan;
  if (p.dtype() != DType::f32 && p.dtype() != DType::f64) {
    plan.why_not = "compiled for f32 and f64 only";
    return plan;
  }
  plan.win = win_in;
  const detail::AxisWindows* win = &plan.win;
  if (win->long_axes == 0) {
    plan.why_not = "a filter of one tap has nothing to separate";
    return plan;
  }
  if (!term) plan.units = box_units(plan.win);
  if (p.direct_sums() && win->long_axes > 1) {
    plan.why_not = "direct sums required: passes sum the taps in another form";
    return plan;
  }
  const std::array<int, 3> R = win->radius;
  const bool x_alone = R[0] == 0 && R[1] == 0;
  // Factors along y or z longer than the ring holds (f32): boxes as box columns, others as
  // long columns.
  std::array<std::optional<detail::BoxRun>, 3> col;
  std::array<bool, 3> lng{};
  for (int a = 0; a < 2; ++a)
    if (p.dtype() == DType::f32 && sep_radius(p.dtype(), R[a]) < 0) {
      if (!p.direct_sums() && !term) col[a] = detail::box_run(win->w[a]);
      if (col[a] && (col[a]->k > kColMaxTaps || col[a]->k < kSepBoxTaps)) col[a].reset();
      lng[a] = !col[a] && 2 * R[a] + 1 <= kLongMaxTaps;
    }
  const auto beyond_ring = [&](int a) { return col[a] || lng[a]; };
  // A y factor in columns after a pass along x: x may take the row radii.
  const bool x_row = x_alone || (beyond_ring(1) && R[0] == 0);
  const Dims3 d = p.dims3();
  // x beyond the radii of the strip kernel (f32; 64, or 128 in a pass along x alone) on rows
  // of kLongRowMin or more: long rows, a pass of its own.
  const bool xl = p.dtype() == DType::f32 &&
                  (x_row ? sep_row_radius(p.dtype(), R[2]) : sep_radius(p.dtype(), R[2])) < 0 &&
                  2 * R[2] + 1 <= kLongMaxTaps && d.x >= kLongRowMin;
  for (int a = 0; a < 3; ++a)
    if (!beyond_ring(a) && !(a == 2 && xl) &&
        (a == 2 && x_row ? sep_row_radius(p.dtype(), R[a]) : sep_radius(p.dtype(), R[a])) < 0) {
      plan.why_not = "compiled for factors of radius up to " + std::to_string(sep_top(p.dtype())) +
                     " in " + to_string(p.dtype()) +
                     (p.dtype() == DType::f32 ? " (" + std::to_string(kLongMaxTaps / 2) +
                                                    " along y or z, and along x on rows of " +
                                                    std::to_string(kLongRowMin) +
                                                    " or more; 128 along x alone)"
                                              : "") +
                     "; this filter needs " + std::to_string(R[a]);
      return plan;
    }
  const i64 batch = p.batch(), plane = d.x * d.y, vol = plane * d.z;
  const int rank = p.rank();
  const auto mode_z = rank == 3 ? int(p.mode(0)) : 0;
  const auto mode_y = rank >= 2 ? int(p.mode(rank - 2)) : 0;
  const auto mode_x = int(p.mode(rank - 1));
  const auto box_cols = [&](SepPass& s, const detail::BoxRun& b, int a) {
    s.colk = b.k;
    s.cola = b.lo - R[a];
  };
  // x, y and z in one pass: float32 factors within vol_kernel's radii (padded to the largest),
  // or up to kVolTmaTop (padded to it) where the tensor-map tiles take them, on volumes at least
  // 4 halos deep (the two passes beyond: each chunk re-filters its halo planes along x and y).
  // Radii below 4 are padded to 4 there too: the tensor-map tiles are memory-bound at 4.
  int rv = sep_radius(DType::f32, std::max({R[0], R[1], R[2]}));
  const bool tma_rows = d.x % 4 == 0 && vol_tma_wanted(kVolTop, p);
  if (rv > kVolTop && rv <= kVolTmaTop)
    rv = tma_rows ? kVolTmaTop : -1;
  else if (rv > 0 && rv < kVolTop && tma_rows && d.z >= 4 * vol_pad_z(kVolTop))
    rv = kVolTop;
  if (!term && rank == 3 && p.dtype() == DType::f32 && R[0] > 0 && (R[1] > 0 || R[2] > 0) &&
      !xl && !beyond_ring(0) && !beyond_ring(1) && rv > 0 &&
      (rv <= kVolTop || rv == kVolTmaTop) && d.x < (i64(1) << 26) && d.z >= 4 * vol_pad_z(rv)) {
    SepPass s;
    s.vol = true;
    s.rx = s.ry = rv;
    VolGeom& g = s.vg;
    g.nx = d.x;
    g.ny = d.y;
    g.nz = d.z;
    g.items = batch;
    g.tiles_x = ceil_div64(d.x, kVolTx);
    g.tiles_y = ceil_div64(d.y, kVolTy);
    g.xmode = mode_x;
    g.ymode = mode_y;
    g.zmode = mode_z;
    g.cval = float(p.cval());
    g.scale = plan.units.scale({0, 1, 2});
    plan.passes.push_back(s);
    plan.why_not = shared_memory_why_not(plan, p.dtype());
    return plan;
  }
  // The x and y factors' sums: a ghost row or plane seen through them.
  const double sx = plan.units.sum(*win, 2), sy = plan.units.sum(*win, 1);
  // Pass 0: x in long rows.
  if (xl) {
    SepPass s;
    s.lrow = true;
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.xmode = mode_x;
    plan.passes.push_back(s);
  }
  // Pass 1: x and y on every plane (z = 0 in 2-D, 1-D rows); with y in columns, x alone then y;
  // with x in long rows, y alone.
  const int rx = xl ? 0 : x_row ? sep_row_radius(p.dtype(), R[2]) : sep_radius(p.dtype(), R[2]);
  const int ry = beyond_ring(1) ? 0 : sep_radius(p.dtype(), R[1]);
  if (rx > 0 || ry > 0) {
    SepPass s;
    if (!plan.passes.empty()) s.cval_scale = sx;
    if (rx > 0 && ry > 0)
      s.rx = s.ry = std::max(rx, ry);  // fused kernels take one radius
    else {
      s.rx = rx;
      s.ry = ry;
    }
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.xmode = mode_x;
    s.g.ymode = mode_y;
    if (s.ry == 0) {
      s.g.wide = d.x > kSepWide;
      s.g.work = s.g.wide ? batch * d.z * d.y * ceil_div64(s.g.strips, 8)
                          : ceil_div64(batch * d.z * d.y, kSepRows) * s.g.strips;
      s.g.items = batch * d.z;
    } else {
      size_march(s.g, s.ry);
    }
    plan.passes.push_back(s);
  }
  if (beyond_ring(1)) {
    SepPass s;
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.ymode = mode_y;
    if (col[1])
      box_cols(s, *col[1], 1);
    else
      s.lng = true;
    if (!plan.passes.empty()) s.cval_scale = sx;
    plan.passes.push_back(s);
  }
  // Pass 2: z, a plane per "row".
  const int rz = beyond_ring(0) ? 0 : sep_radius(p.dtype(), R[0]);
  if (rz > 0 || beyond_ring(0)) {
    SepPass s;
    s.rx = 0;
    s.ry = rz;
    s.wy = 0;
    s.g = plain_geom(plane, d.z, plane, batch, vol);
    s.g.ymode = mode_z;
    s.g.xmode = int(Boundary::constant);  // no x pass: never read
    if (col[0])
      box_cols(s, *col[0], 0);
    else if (lng[0])
      s.lng = true;
    else
      size_march(s.g, rz);
    if (!plan.passes.empty()) s.cval_scale = sx * sy;
    plan.passes.push_back(s);
  }
  if (plan.passes.size() > 2) {
    plan.why_not = "factors of radius " + std::to_string(R[2]) + " (x), " + std::to_string(R[1]) +
                   " (y), " + std::to_string(R[0]) +
                   " (z): three passes over DRAM, not compiled";
    return plan;
  }
  for (SepPass& s : plan.passes) {
    s.g.cval = p.cval() * s.cval_scale;
    std::vector<int> axes;  // the axes whose factors the pass applies
    if (s.lrow) {
      axes = {2};
    } else if (s.colk || s.lng) {
      axes = {s.wy};
    } else {
      if (s.rx > 0) axes.push_back(2);
      if (s.ry > 0) axes.push_back(s.wy);
    }
    s.g.scale = plan.units.scale(axes);
  }
  // Box factors (f32): running sums in place of the FMAs (Summation::running), where they
  // measured faster on an H100 (docs/notes/tuning.md): down y and z always, along x in passes along
  // x alone (1-D box 255: 3.50 -> 3.00 ms), not in the fused kernel (2-D box 31: y alone 1.12 ms,
  // x and y 1.20, neither 1.16: the x form's scalar shared-memory reads cost more than its FMAs).
  if (p.dtype() == DType::f32 && !p.direct_sums() && !term) {
    for (SepPass& s : plan.passes) {
      if (s.rx > 0 && s.ry == 0) s.g.xbox = box_fields(win->w[2], s.g.xlo, s.g.xk);
      if (s.ry > 0) s.g.ybox = box_fields(win->w[s.wy], s.g.ylo, s.g.yk);
    }
  }
  for (SepPass& s : plan.passes)
    if (!s.vol && (s.rx > 0 || s.ry > 0)) {
      s.box_scale = s.g.scale.on != 0;
      if (s.ry > 0 && box_kernel(s)) size_march(s.g, s.ry, true);  // the box kernel's steps
    }
  // Where the fused passes take tiles by tensor maps: chunks balanced over their blocks.
  for (SepPass& s : plan.passes)
    if (sep_pass_tma(s, p)) {
      SepGeom g = s.g;
      balance_march(g, s.ry, box_kernel(s),
                    i64(kSepTmaBlocks) * fast::current_device_facts().multiprocessors);
      s.tma_chunk = g.chunk;
    }
  plan.why_not = shared_memory_why_not(plan, p.dtype());
  return plan;
}

SepPlan make_plan(const Problem& p) {
  const auto win = detail::separable_windows(p);
  if (!win) {
    SepPlan plan;
    plan.why_not = "the filter is not an outer product of 1-D factors (rank 1)";
    return plan;
  }
  return make_plan(p, *win, false);
}

// The window of radius `have` centred in one of radius R (zeros outside), in T.
template <class T, int R>
Taps<T, R> taps_of(const std::vector<double>& w) {
  Taps<T, R> t{};
  const int have = int(w.size() / 2);
  for (int j = 0; j <= 2 * have; ++j) t.w[R - have + j] = T(w[std::size_t(j)]);
  return t;
}

template <class T, int RX, int RY, bool BOX, bool ADD = false>
void launch_pass(const T* in, T* out, SepPass s, const detail::AxisWindows& win, const Problem& p,
                 cudaStream_t stream, int sms, NonFiniteNote note) {
  // 16-byte loads where every row starts on a 16-byte boundary.
  const auto aligned = [](i64 n) { return n % (16 / i64(sizeof(T))) == 0; };
  s.g.vec = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && aligned(s.g.row_stride) &&
            aligned(s.g.item_stride) && aligned(s.g.nx);
  const Taps<T, RX> tx = taps_of<T, RX>(win.w[2]);
  const Taps<T, RY> ty = taps_of<T, RY>(win.w[s.wy]);
  // Box runs in the compiled windows' coordinates (taps_of centres the window in them).
  s.g.xlo += RX - win.radius[2];
  s.g.ylo += RY - win.radius[s.wy];
  s.g.xbox = s.g.xbox && RX > 0;
  s.g.ybox = s.g.ybox && RY > 0;
  Launch L;
  L.block = {kSepThreads, 1, 1};
  // Persistent blocks, as many as fit the device at once, take the work items in turn.
  // TMA: at most kSepTmaBlocks blocks per SM, over which the chunks are balanced.
  const auto go = [&](auto kernel, std::size_t smem, const CUtensorMap& map, bool tma) {
    L.shared_bytes = smem;
    i64 blocks = fast::resident_blocks(kernel, kSepThreads, smem, sms);
    if (tma) blocks = std::min<i64>(blocks, i64(kSepTmaBlocks) * sms);
    // A chunk length asked for (FastTuning::chunk, rows) is taken as is.
    if (const auto c = p.tuning().chunk; RY > 0 && c)
      set_chunk(s.g, step_rows(RY, BOX), *c);
    else if (tma && s.tma_chunk > 0)
      set_chunk(s.g, step_rows(RY, BOX), s.tma_chunk);
    L.grid = {unsigned(std::min<i64>(s.g.work, blocks)), 1, 1};
    // Under modes with x faces the strips at a face go first to the blocks with an item fewer.
    s.g.face_first = tma && face_first_compiled(RY) && !zero_ghosts(s.g.xmode, s.g.cval) &&
                     s.g.work < (i64(1) << 31);
    s.g.ff_start = L.grid[0] > 0 ? s.g.work % i64(L.grid[0]) : 0;
    launch_kernel(kernel, L, stream, "separable_kernel", 2 * std::max(RX, RY) + 1, p, in, out, s.g,
                  tx, ty, map, note);
  };
  CUtensorMap map{};
  if constexpr (std::is_same_v<T, float> && RX == RY && RX >= kSepTmaLow && RX <= kSepTmaTop) {
    // Rows packed (a 2-D array, or the planes of a volume), 16-byte aligned.
    if (s.g.vec && s.g.row_stride == s.g.nx && s.g.item_stride == s.g.rows * s.g.nx &&
        sep_tma_wanted(RX, p) &&
        fast::make_row_map(&map, in, int(sizeof(float)), s.g.nx, s.g.rows, 1, s.g.items,
                           tma_pitch(RX), step_rows(RY, BOX), 256)) {
      go(separable_kernel<T, RX, RY, BOX, ADD, true>, sep_tma_shared_bytes(RX, BOX), map, true);
      return;
    }
  }
  go(separable_kernel<T, RX, RY, BOX, ADD>, sep_shared_bytes<T>(RX, RY, BOX), map, false);
}

// Calls f(integral_constant<R>) for the compiled radius r of dtype T (ROWS: of a pass along x
// alone, whose list is longer; only those kernels are compiled for its radii).
template <class T, bool ROWS = false, class F>
bool with_radius(int r, F&& f) {
  bool done = false;
#define HALO_CASE(R)                     \
  if (!done && r == R) {                 \
    f(std::integral_constant<int, R>{}); \
    done = true;                         \
  }
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (ROWS) {
      HALO_SEP_ROW_RADII_F32(HALO_CASE)
    } else {
      HALO_SEP_RADII_F32(HALO_CASE)
    }
  } else {
    HALO_SEP_RADII_F64(HALO_CASE)
  }
#undef HALO_CASE
  return done;
}

template <class T, bool BOX>
bool run_pass_as(const T* in, T* out, const SepPass& s, const detail::AxisWindows& win,
                 const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  // Kernels with a y pass add into the output as compiled (ADD), and terms of a sum take no
  // box forms (make_plan's `term`).
  const auto with_y = [&](auto RX, auto RY) {
    if constexpr (!BOX)
      if (s.g.add)
        return launch_pass<T, RX(), RY(), false, true>(in, out, s, win, p, stream, sms, note);
    if (s.g.add) throw Error("separable: box forms do not add into the output");
    launch_pass<T, RX(), RY(), BOX>(in, out, s, win, p, stream, sms, note);
  };
  if (s.rx > 0 && s.ry > 0) return with_radius<T>(s.rx, [&](auto R) { with_y(R, R); });
  if (s.rx > 0)
    return with_radius<T, true>(
        s.rx, [&](auto R) { launch_pass<T, R(), 0, BOX>(in, out, s, win, p, stream, sms, note); });
  return with_radius<T>(s.ry, [&](auto R) { with_y(std::integral_constant<int, 0>{}, R); });
}

// Whether a pass runs as box rows (box_row_kernel): a box factor along x alone, rows long
// enough that segments of 4096 outputs are mostly full.
bool box_rows(const SepPass& s) {
  return s.rx > 0 && s.ry == 0 && s.g.xbox && s.g.nx >= kBoxRowMin;
}

// Launches a persistent kernel: as many blocks of `threads` as fit the device at once (at most
// `work`), which take the work items in turn.
template <class... KArgs, class... Args>
void launch_persistent(void (*kernel)(KArgs...), int threads, std::size_t shared_bytes, i64 work,
                       int sms, cudaStream_t stream, const char* name, int k, const Problem& p,
                       Args&&... args) {
  Launch L;
  L.block = {unsigned(threads), 1, 1};
  L.shared_bytes = shared_bytes;
  const i64 resident = fast::resident_blocks(kernel, threads, shared_bytes, sms);
  L.grid = {unsigned(std::min<i64>(work, resident)), 1, 1};
  launch_kernel(kernel, L, stream, name, k, p, std::forward<Args>(args)...);
}

void launch_box_rows(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                     const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  BoxRowGeom g{};
  g.nx = s.g.nx;
  g.segs = ceil_div64(g.nx, kBoxSeg);
  g.work = s.g.items * s.g.rows * g.segs;
  g.a = s.g.xlo - win.radius[2];  // xlo counts from the window's first tap, at -radius
  g.k = s.g.xk;
  g.mode = s.g.xmode;
  g.scale = s.g.scale;
  g.cval = float(s.g.cval);
  launch_persistent(box_row_kernel, kBoxThreads, 0, g.work, sms, stream, "box_row_kernel", g.k, p,
                    in, out, g, note);
}

// A column pass's shape from s, strips of `width` columns, and chunks of rows: at least
// `least` (up to the rows), a multiple of `unit`.
void col_geom(ColGeom& g, const SepGeom& s, int width, i64 least, int unit) {
  g.nx = s.nx;
  g.rows = s.rows;
  g.row_stride = s.row_stride;
  g.items = s.items;
  g.item_stride = s.item_stride;
  g.strips = ceil_div64(g.nx, width);
  g.chunk = std::min(ceil_div64(least, unit), ceil_div64(g.rows, unit)) * unit;
  g.chunks = ceil_div64(g.rows, g.chunk);
  g.work = g.items * g.strips * g.chunks;
}

void launch_box_cols(const float* in, float* out, const SepPass& s, const Problem& p,
                     cudaStream_t stream, int sms, NonFiniteNote note) {
  BoxColGeom g{};
  // Chunks long enough that the k + 32 rows read before a chunk's first output cost at most
  // an eighth of it.
  col_geom(g, s.g, kColThreads, std::max<i64>(1024, 8 * i64(s.colk + 2 * kColRun)), kColRun);
  g.a = s.cola;
  g.k = s.colk;
  g.mode = s.g.ymode;
  g.scale = s.g.scale;
  g.cval = float(s.g.cval);
  launch_persistent(box_col_kernel, kColThreads, col_shared_bytes(g.k), g.work, sms, stream,
                    "box_col_kernel", g.k, p, in, out, g, note);
}

// A long factor's weights as its kernels read them: 15 zeros first.
LongTaps long_taps(const std::vector<double>& w) {
  LongTaps taps{};
  for (std::size_t j = 0; j < w.size(); ++j) taps.w[j + kLongRun - 1] = float(w[j]);
  return taps;
}

void launch_long_cols(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                      const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  const std::vector<double>& w = win.w[s.wy];
  const int k = int(w.size());
  LongColGeom g{};
  g.a = -win.radius[s.wy];
  g.groups = long_groups(k);
  g.batches = long_batches(k);
  // Chunks long enough that the ring's first fill (rows read before a chunk's first output)
  // costs at most an eighth of it.
  col_geom(g, s.g, 32, std::max<i64>(1024, 8 * i64(g.batches) * kLongStep), kLongStep);
  g.mode = s.g.ymode;
  g.cval = float(s.g.cval);
  g.scale = s.g.scale;
  launch_persistent(long_col_kernel, kLongThreads, long_shared_bytes(k), g.work, sms, stream,
                    "long_col_kernel", k, p, in, out, g, long_taps(w), note);
}

void launch_long_rows(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                      const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  const std::vector<double>& w = win.w[2];
  const int k = int(w.size());
  LongRowGeom g{};
  g.nx = s.g.nx;
  g.segs = ceil_div64(g.nx, kLongRowSeg);
  g.work = s.g.items * s.g.rows * g.segs;
  g.a = -win.radius[2];
  g.groups = long_groups(k);
  g.mode = s.g.xmode;
  g.cval = float(s.g.cval);
  g.scale = s.g.scale;
  launch_persistent(long_row_kernel, kLongThreads, long_row_shared_bytes(k), g.work, sms, stream,
                    "long_row_kernel", k, p, in, out, g, long_taps(w), note);
}

// A volume kernel over g's tiles, in the z-chunks that waste least of the last wave and of the
// `halo` planes each chunk re-filters; `extra` goes between g and the factors' taps.
template <int R, class Kernel, class... Extra>
void launch_vol_chunks(Kernel kernel, const char* name, std::size_t smem, int halo, VolGeom g,
                       const detail::AxisWindows& win, const Problem& p, cudaStream_t stream,
                       int sms, NonFiniteNote note, const float* in, float* out,
                       const Extra&... extra) {
  const i64 resident = fast::resident_blocks(kernel, kVolThreads, smem, sms);
  const fast::Chunking c =
      fast::fit_chunks(g.nz, g.tiles_x * g.tiles_y * g.items, halo, resident);
  g.chunk = c.chunk;
  g.chunks = c.chunks;
  g.work = g.tiles_x * g.tiles_y * g.items * g.chunks;
  Launch L;
  L.block = {kVolThreads, 1, 1};
  L.shared_bytes = smem;
  L.grid = {unsigned(std::min<i64>(g.work, resident)), 1, 1};
  launch_kernel(kernel, L, stream, name, 2 * R + 1, p, in, out, g, extra...,
                taps_of<float, R>(win.w[2]), taps_of<float, R>(win.w[1]),
                taps_of<float, R>(win.w[0]), note);
}

// vol_tma_kernel<R> where vol_tma_wanted() and its tensor map can be made (rows 16-byte aligned,
// extents below 2^31); false otherwise.
template <int R>
bool launch_vol_tma(const float* in, float* out, VolGeom g, const detail::AxisWindows& win,
                    const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  CUtensorMap map;
  if (!g.vec || !vol_tma_wanted(R, p) ||
      !fast::make_row_map(&map, in, int(sizeof(float)), g.nx, g.ny, g.nz, g.items,
                          vol_tile_pitch(R), vt_ty(R) + 2 * R, 256))
    return false;
  g.tiles_y = ceil_div64(g.ny, vt_ty(R));
  launch_vol_chunks<R>(vol_tma_kernel<R>, "vol_tma_kernel", vol_tma_shared_bytes(R), R, g, win, p,
                       stream, sms, note, in, out, map);
  return true;
}

template <int R>
void launch_vol_as(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                   const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  VolGeom g = s.vg;
  g.vec = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && g.nx % 4 == 0;
  g.near_x = g.nx > pad4(R);  // (so the row has 2 elements or more)
  if constexpr (R == kVolTop || R == kVolTmaTop)
    if (launch_vol_tma<R>(in, out, g, win, p, stream, sms, note)) return;
  launch_vol_chunks<R>(vol_kernel<R>, "vol_kernel", vol_shared_bytes(R), vol_pad_z(R), g, win, p,
                       stream, sms, note, in, out);
}
void launch_vol(const float* in, float* out, const SepPass& s, const detail::AxisWindows& win,
                const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  switch (s.rx) {
#define HALO_CASE(R) \
  case R:            \
    return launch_vol_as<R>(in, out, s, win, p, stream, sms, note);
    HALO_CASE(1) HALO_CASE(2) HALO_CASE(3) HALO_CASE(4) HALO_CASE(8)
#undef HALO_CASE
  }
  throw Error("separable: no volume kernel compiled for radius " + std::to_string(s.rx));
}

// `note`: NonFiniteNote::of the run's buffers where the pass writes the final output (every
// kernel then notes a non-finite output it stores), a null one where it writes scratch.
template <class T>
void run_pass(const T* in, T* out, const SepPass& s, const detail::AxisWindows& win,
              const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  // Box rows, box columns and running sums are float32's (float64 boxes take FMAs, scaled in
  // the fused kernels' box instantiation).
  bool ok;
  if constexpr (std::is_same_v<T, float>) {
    if (s.vol) return launch_vol(in, out, s, win, p, stream, sms, note);
    if (s.colk) return launch_box_cols(in, out, s, p, stream, sms, note);
    if (s.lng) return launch_long_cols(in, out, s, win, p, stream, sms, note);
    if (s.lrow) return launch_long_rows(in, out, s, win, p, stream, sms, note);
    if (box_rows(s)) return launch_box_rows(in, out, s, win, p, stream, sms, note);
  }
  ok = box_kernel(s) ? run_pass_as<T, true>(in, out, s, win, p, stream, sms, note)
                     : run_pass_as<T, false>(in, out, s, win, p, stream, sms, note);
  if (!ok)
    throw Error("separable: no kernel compiled for radii " + std::to_string(s.rx) + ", " +
                std::to_string(s.ry));
}

// make_plan(p), kept for the last few problems of this thread and their device: a run asks for
// the plan several times (can_implement, priority, workspace, run), and a repeated run of the
// same problem again. The reference is valid until the next call.
const SepPlan& plan_of(const Problem& p) {
  thread_local detail::ProblemMemo<SepPlan> memo;
  const int device = detail::current_cuda_device();
  if (const SepPlan* plan = memo.find(p, device)) return *plan;
  return memo.put(p, device, make_plan(p));
}

// The taps a pass runs per output: its compiled windows' (zeros included), a box's, a long
// pass's.
double pass_taps(const SepPass& s, const detail::AxisWindows& win) {
  return (s.vol ? 2 * s.rx + 1 : 0) + (s.rx ? 2 * s.rx + 1 : 0) + (s.ry ? 2 * s.ry + 1 : 0) +
         s.colk + (s.lng || s.lrow ? long_taps_of(s, win) : 0);
}

// How a fused pass cuts its rows into chunks (balance_march).
std::string march_text(const SepPass& q, const Problem& p) {
  if (const auto c = p.tuning().chunk) return "chunks of " + std::to_string(*c) + " rows";
  const std::string fixed = "chunks of " + std::to_string(q.g.chunk) + " rows";
  if (q.tma_chunk == 0) return fixed;
  return "chunks of " + std::to_string(q.tma_chunk) + " rows where the tiles come by tensor " +
         "maps (balanced over " + std::to_string(kSepTmaBlocks) + " blocks per SM), else " + fixed;
}

// What a plan runs, in words (`halo apply -v`, `halo bench --explain`).
std::string describe_factors(const Problem& p, const detail::AxisWindows& win) {
  std::string s = "factors of radius " + std::to_string(win.radius[2]);
  if (p.rank() >= 2) s += " (x), " + std::to_string(win.radius[1]) + " (y)";
  if (p.rank() == 3) s += ", " + std::to_string(win.radius[0]) + " (z)";
  return s;
}
std::string describe_passes(const SepPlan& plan, const Problem& p) {
  std::string s;
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const SepPass& q = plan.passes[i];
    if (i) s += ", then ";
    if (q.g.xbox || q.g.ybox)
      s += std::string("box factors by running sums (") + (q.g.xbox ? "x" : "") +
           (q.g.xbox && q.g.ybox ? ", " : "") + (q.g.ybox ? (q.rx ? "y" : "rows") : "") +
           ") ";
    if (q.vol) {
      const std::string prefetch =
          "tiles of " + std::to_string(kVolTx) + "x" + std::to_string(kVolTy) +
          " outputs marching along z in chunks, each plane's tile loaded through registers and "
          "filtered along x and y into a ring of " +
          std::to_string(vol_slots(q.rx)) + " planes, " + std::to_string(kVolSteps) +
          " output planes per step from it";
      s += "x, y and z fused in one pass (compiled radius " + std::to_string(q.rx) + ", ";
      if (vol_tma_wanted(q.rx, p))
        s += "where the rows are 16-byte aligned tiles of " + std::to_string(kVolTx) + "x" +
             std::to_string(vt_ty(q.rx)) +
             " outputs marching along z in chunks, each plane's tile copied by the tensor "
             "memory accelerator (" + std::to_string(kVtStages - 1) +
             " planes ahead), filtered along x and y, and added into a queue of " +
             std::to_string(2 * q.rx + 1) + " partial sums per output column along z; else " +
             prefetch + ")";
      else
        s += prefetch + ")";
    }
    else if (q.rx && q.ry)
      s += "x and y fused (compiled radius " + std::to_string(q.rx) +
           ", strips of 256 columns, " + march_text(q, p) + ", a ring of " +
           std::to_string(ring_rows(q.ry, box_kernel(q))) + " filtered rows; " +
           (sep_pass_tma(q, p)
                ? "where the rows are 16-byte aligned, each step's tile copied by the tensor "
                  "memory accelerator, the next in flight, else loaded through registers)"
                : std::string("each step's tile loaded through registers, the next in flight)"));
    else if (box_rows(q))
      s += "x alone (segments of " + std::to_string(kBoxSeg) + " outputs of a row, each " +
           "thread's first window from sums of " + std::to_string(kBoxRun) +
           " inputs, then slid over its " + std::to_string(kBoxRun) + " outputs)";
    else if (q.rx)
      s += "x alone (compiled radius " + std::to_string(q.rx) + ", steps of " +
           (q.g.wide ? "8 strips of a row)" : "8 rows of a strip)");
    else if (q.colk)
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (a box of " + std::to_string(q.colk) +
           " taps in box columns: a thread per column, runs of " + std::to_string(kColRun) +
           " outputs from sums of " + std::to_string(kColRun) + " rows)";
    else if (q.lrow)
      s += "x alone (radius " + std::to_string(plan.win.radius[2]) +
           " in long rows: segments of " + std::to_string(kLongRowSeg) +
           " outputs of a row, 16 per thread from a shared-memory tile)";
    else if (q.lng)
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (radius " +
           std::to_string(plan.win.radius[q.wy]) +
           " in long columns: warps of 16 outputs per column from a ring of " +
           std::to_string(long_batches(long_taps_of(q, plan.win)) * kLongStep) +
           " rows of strips of 32 columns)";
    else
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (compiled radius " +
           std::to_string(q.ry) + ", " + march_text(q, p) + ")";
  }
  if (plan.passes.size() > 1) s += "; two passes over DRAM through a scratch array";
  return s;
}

class SeparableStrategy final : public Strategy {
 public:
  std::string name() const override { return "separable"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "rank-1 filters as 1-D passes: x and y fused in one kernel (rows filtered into a "
           "shared-memory ring, columns from it), in 3-D z too (a ring of filtered planes), or z "
           "as a second pass; every boundary mode";
  }
  Status can_implement(const Problem& p) const override {
    const SepPlan& plan = plan_of(p);
    return plan.why_not.empty() ? Status::success() : Status::failure(plan.why_not);
  }
  // Whether p runs as one fused x-y pass whose tiles come by tensor maps (rows 16-byte aligned
  // in length; the base address is the caller's).
  bool fused_by_maps(const Problem& p) const {
    const SepPlan& plan = plan_of(p);
    return plan.why_not.empty() && plan.passes.size() == 1 && sep_pass_tma(plan.passes[0], p) &&
           plan.passes[0].g.nx % 4 == 0;
  }
  // Above `fast` where its dense window is larger than it runs at copy speed: beyond 9x9 in 2-D
  // (fast 0.80 ms at r = 4, 1.09 at r = 5; these passes 0.78-0.84 at radii 4 to 16 by tensor
  // maps, about 0.9-1.0 through registers), from 9x9 where the tiles come by tensor maps, and
  // 3x3x3 in 3-D (on 512^3, fast 0.45 ms at r = 1, 0.76 at r = 2, 1.94 at r = 3; one pass by
  // the tensor-map tiles 0.45 at each), or where `fast` has no kernel (H100, docs/notes/tuning.md,
  // Separable passes and Volumes by tensor-map tiles). Below it on 1-D arrays, whose kernels
  // `fast` tunes further, except box factors of kBoxRowsOverFast taps or more on long rows.
  // The tuning's crossovers (FastTuning::sep_radius_2d ...) replace the H100's.
  int priority(const Problem& p) const override {
    constexpr int kBelowFft = 104;
    const FastTuning& tune = p.tuning();
    if (p.rank() == 1) {
      // Box rows cost the same at every k; fast's FMAs grow with it. Long rows grow with k
      // too: beyond kLongRowsOverFft taps, below `fft` (40).
      const SepPlan& plan = plan_of(p);
      if (plan.why_not.empty() && plan.passes[0].lrow &&
          long_taps_of(plan.passes[0], plan.win) > tune.long_rows_taps.value_or(kLongRowsOverFft))
        return 35;
      const bool long_box = plan.why_not.empty() && plan.passes.size() == 1 &&
                            box_rows(plan.passes[0]) &&
                            plan.passes[0].g.xk >= tune.box_rows_taps.value_or(kBoxRowsOverFast);
      return long_box ? 110 : 50;
    }
    const int r = int(std::min<std::int64_t>(p.max_radius(), 1 << 20));
    const int rc = fast::compiled_radius(p.rank(), p.dtype(), r);
    // A filter along x alone beyond fast's radii (not a box): below `fft` (105) where its row
    // transforms beat this x pass by the model (detail::cuda_fft_tiling; 16384^2, 129 taps: 1.08
    // ms against 1.92).
    const SepPlan& plan = plan_of(p);
    if (rc < 0 && plan.why_not.empty() && plan.passes.size() == 1 && plan.win.radius[0] == 0 &&
        plan.win.radius[1] == 0 && !plan.passes[0].g.xbox) {
      const Strategy* fft = find_strategy("fft");
      if (fft && fft->priority(p) > kBelowFft) return kBelowFft;
    }
    // fast's radius of copy speed; in 2-D 3 where the fused pass takes tiles by tensor maps
    // (radius 4 on 16384^2: 0.80 ms as fast's under zero ghosts, 0.80 against 0.84 under reflect)
    const int dense_top = p.rank() == 2 ? tune.sep_radius_2d.value_or(fused_by_maps(p) ? 3 : 4)
                                        : tune.sep_radius_3d.value_or(1);
    return rc < 0 || rc > dense_top ? 110 : 90;
  }
  Summation summation(const Problem& p) const override {
    const SepPlan& plan = plan_of(p);
    if (!plan.why_not.empty()) return Summation::direct;
    for (const SepPass& s : plan.passes)
      if (s.g.xbox || s.g.ybox || s.colk) return Summation::running;
    return plan.win.long_axes > 1 ? Summation::separable : Summation::direct;
  }
  Traffic model(const Problem& p) const override {
    const SepPlan& plan = plan_of(p);
    double taps = 0;
    for (const SepPass& s : plan.passes) taps += pass_taps(s, plan.win);
    return {p.bytes() * double(std::max<std::size_t>(plan.passes.size(), 1)),
            2.0 * taps * double(p.elements())};
  }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const SepPlan& plan = plan_of(p);
    if (plan.passes.size() < 2) return {};
    return {{"scratch array between the x-y and z passes",
             double(p.elements()) * double(dtype_size(p.dtype())), MemorySpace::device}};
  }
  std::string plan(const Problem& p) const override {
    const SepPlan& plan = plan_of(p);
    if (!plan.why_not.empty()) return plan.why_not;
    return "rank-1 filter: " + describe_factors(p, plan.win) + "; " + describe_passes(plan, p);
  }
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    const SepPlan& plan = plan_of(p);
    if (!plan.why_not.empty())
      throw Error("strategy 'separable' cannot run " + p.describe() + ": " + plan.why_not);
    const auto st = static_cast<cudaStream_t>(stream);
    const int sms = fast::current_device_facts().multiprocessors;
    const NonFiniteNote note = NonFiniteNote::of(b);  // the last pass's kernels note
    dispatch_buffers(p.dtype(), b.input, b.output, [&](auto* in, auto* out) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
      if (plan.passes.size() == 1) {
        run_pass<T>(in, out, plan.passes[0], plan.win, p, st, sms, note);
        return;
      }
      // Freed in stream order, after the passes that read it, without waiting for them.
      DeviceBuffer scratch(std::size_t(p.elements()) * sizeof(T),
                           "the scratch array of the separable passes of " + p.describe(), st);
      run_pass<T>(in, static_cast<T*>(scratch.p), plan.passes[0], plan.win, p, st, sms, {});
      run_pass<T>(static_cast<const T*>(scratch.p), out, plan.passes[1], plan.win, p, st, sms,
                  note);
    });
  }
  // Every kernel that writes the output notes a non-finite one it stores.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

// ---------------------------------------------------------------------------------------------
// strategy: lowrank — a filter of low rank as a sum of T separable terms (detail::low_rank_terms:
// the axis lines of a Laplacian or cross, else an SVD in float64: a Laplacian of Gaussian, a
// difference of Gaussians), each term run as a rank-1 filter's passes above. Every term after
// the first adds its last pass's sums into the output (SepGeom::add), so DRAM sees T reads of
// the input, T writes and T - 1 reads of the output, against the FFT's transforms or the dense
// sum's K^2 taps per output.
// ---------------------------------------------------------------------------------------------
struct LowRankPlan {
  std::vector<SepPlan> terms;  // in the analysis' order (the largest singular value first)
  bool axis_lines = false;
  double dropped = 0;         // SVD: the dropped singular values' sum over the largest
  bool single_passes = true;  // every term one 1-D pass: each output a plain sum of its taps
  std::string why_not;        // non-empty: cannot run
};

// The most terms run: each is a pass over DRAM, so beyond a few the FFT wins anyway.
constexpr std::size_t kMaxGpuTerms = 32;

LowRankPlan make_lowrank_plan(const Problem& p) {
  LowRankPlan lp;
  const Dims3 k = p.filter_dims3();
  if ((k.z > 1) + (k.y > 1) + (k.x > 1) < 2) {
    lp.why_not = "the filter has fewer than two axes longer than 1 (one pass: separable or fast)";
    return lp;
  }
  const auto lr = detail::low_rank_terms(p);
  if (!lr) {
    lp.why_not = "the filter is neither axis lines through one point nor, with two long axes, "
                 "an SVD of at most " +
                 std::to_string(detail::kMaxSvdTaps) + " taps";
    return lp;
  }
  if (lr->terms.size() < 2) {
    lp.why_not = "the filter is rank 1 (an outer product of 1-D factors: separable)";
    return lp;
  }
  if (lr->terms.size() > kMaxGpuTerms) {
    lp.why_not = std::to_string(lr->terms.size()) + " separable terms: more than " +
                 std::to_string(kMaxGpuTerms);
    return lp;
  }
  for (const detail::AxisWindows& t : lr->terms) lp.single_passes &= t.long_axes <= 1;
  if (p.direct_sums() && !lp.single_passes) {
    lp.why_not = "direct sums required: a sum of separable terms sums each output in stages";
    return lp;
  }
  lp.axis_lines = lr->axis_lines;
  lp.dropped = lr->largest > 0 ? lr->dropped / lr->largest : 0;
  for (std::size_t i = 0; i < lr->terms.size(); ++i) {
    SepPlan sp = make_plan(p, lr->terms[i], true);
    const std::string term = "term " + std::to_string(i + 1) + " of " +
                             std::to_string(lr->terms.size()) + ": ";
    if (!sp.why_not.empty()) {
      lp.why_not = term + sp.why_not;
      return lp;
    }
    const SepPass& last = sp.passes.back();
    if (last.colk || last.lng || last.lrow || last.vol) {
      lp.why_not = term + "a factor longer than the fused kernel's radii (" +
                   std::to_string(sep_top(p.dtype())) +
                   ") in the last pass, which cannot add into the output";
      return lp;
    }
    lp.terms.push_back(std::move(sp));
  }
  return lp;
}

// make_lowrank_plan(p) for the last few problems of this thread and their device (the SVD of up
// to kMaxSvdTaps weights is not repeated per question).
const LowRankPlan& lowrank_plan_of(const Problem& p) {
  thread_local detail::ProblemMemo<LowRankPlan> memo;
  const int device = detail::current_cuda_device();
  if (const LowRankPlan* plan = memo.find(p, device)) return *plan;
  return memo.put(p, device, make_lowrank_plan(p));
}

// The time model `auto` weighs the terms by (H100): each pass moves its arrays at copy speed
// (2980 B/ns: a 16384^2 float32 copy in 0.72 ms) and runs its compiled taps at the fused
// kernel's FMA rate (60 TFLOP/s in float32: 2-D Gaussians of sigma 2, 4 and 8 in 0.93, 1.06 and
// 1.75 ms, docs/BENCHMARKS.md; half in float64). One copy's time stands in for `fast` where its
// model says less: it runs at copy speed at best.
constexpr double kSepBytesPerNs = 2980, kSepFlopsPerNs[2] = {60e3, 30e3};  // f32, f64

double lowrank_ns(const Problem& p, const LowRankPlan& lp) {
  const double n = double(p.elements()), size = double(dtype_size(p.dtype()));
  const double flops = kSepFlopsPerNs[p.dtype() == DType::f64 ? 1 : 0];
  double ns = 0;
  for (std::size_t i = 0; i < lp.terms.size(); ++i) {
    const SepPlan& sp = lp.terms[i];
    for (std::size_t j = 0; j < sp.passes.size(); ++j) {
      const bool adds = i > 0 && j + 1 == sp.passes.size();
      ns += n * size * (adds ? 3 : 2) / kSepBytesPerNs +
            2 * n * pass_taps(sp.passes[j], sp.win) / flops;
    }
  }
  return ns;
}

class LowRankStrategy final : public Strategy {
 public:
  std::string name() const override { return "lowrank"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "filters of low rank as sums of separable terms (axis lines, or an SVD in float64), "
           "each term's x and y fused in one pass as `separable`'s, every term after the first "
           "adding into the output";
  }
  Status can_implement(const Problem& p) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    return lp.why_not.empty() ? Status::success() : Status::failure(lp.why_not);
  }
  // Above `fft` (105) and `fast` (100) where the model's time of the terms beats both theirs
  // (the FFT's scaled by FastTuning::fft_cost), else below them.
  int priority(const Problem& p) const override {
    constexpr int kBelow = 5, kAbove = 107;
    const LowRankPlan& lp = lowrank_plan_of(p);
    if (!lp.why_not.empty()) return kBelow;
    const double ns = lowrank_ns(p, lp);
    const double copy = p.bytes() / kSepBytesPerNs;
    const Strategy* fast = find_strategy("fast");
    const bool fast_runs = fast && fast->can_implement(p).ok;
    double best = std::numeric_limits<double>::infinity();
    try {
      const detail::FftTiling t = detail::cuda_fft_tiling(p);
      best = t.fft_ns * p.tuning().fft_cost.value_or(100) / 100.0;
      if (fast_runs) best = std::min(best, std::max(copy, fast::window_ns(p, t.direct_ns)));
    } catch (const Error&) {
      if (fast_runs) return kBelow;  // no transform fits: leave it to the direct sum
    }
    return ns < best ? kAbove : kBelow;
  }
  Summation summation(const Problem& p) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    return lp.why_not.empty() && !lp.single_passes ? Summation::low_rank : Summation::direct;
  }
  Traffic model(const Problem& p) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    double bytes = 0, taps = 0;
    for (std::size_t i = 0; i < lp.terms.size(); ++i)
      for (const SepPass& s : lp.terms[i].passes) {
        const bool adds = i > 0 && &s == &lp.terms[i].passes.back();
        bytes += p.bytes() * (adds ? 1.5 : 1.0);
        taps += pass_taps(s, lp.terms[i].win);
      }
    return {bytes, 2.0 * taps * double(p.elements())};
  }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    for (const SepPlan& sp : lp.terms)
      if (sp.passes.size() > 1)
        return {{"scratch array between a term's passes",
                 double(p.elements()) * double(dtype_size(p.dtype())), MemorySpace::device}};
    return {};
  }
  std::string plan(const Problem& p) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    if (!lp.why_not.empty()) return lp.why_not;
    char form[96];
    if (lp.axis_lines)
      std::snprintf(form, sizeof form, "axis lines, exact");
    else
      std::snprintf(form, sizeof form, "SVD, dropped singular values %.1e of the largest",
                    lp.dropped);
    std::string s = std::to_string(lp.terms.size()) + " separable terms (" + form + ")";
    for (std::size_t i = 0; i < lp.terms.size(); ++i)
      s += "; term " + std::to_string(i + 1) + ", " + describe_factors(p, lp.terms[i].win) +
           ": " + describe_passes(lp.terms[i], p);
    char model[64];
    std::snprintf(model, sizeof model, "; modelled %.3g ms", lowrank_ns(p, lp) * 1e-6);
    return s + "; each term after the first adds its last pass into the output" + model;
  }
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    const LowRankPlan& lp = lowrank_plan_of(p);
    if (!lp.why_not.empty())
      throw Error("strategy 'lowrank' cannot run " + p.describe() + ": " + lp.why_not);
    const auto st = static_cast<cudaStream_t>(stream);
    const int sms = fast::current_device_facts().multiprocessors;
    // Every term's last pass notes the outputs it stores: the last term's are the outputs, and
    // a non-finite sum stays non-finite when later terms add to it.
    const NonFiniteNote note = NonFiniteNote::of(b);
    dispatch_buffers(p.dtype(), b.input, b.output, [&](auto* in, auto* out) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
      std::optional<DeviceBuffer> scratch;  // between a term's two passes, where one has two
      for (std::size_t i = 0; i < lp.terms.size(); ++i) {
        const SepPlan& sp = lp.terms[i];
        SepPass last = sp.passes.back();
        last.g.add = i > 0;
        if (sp.passes.size() == 1) {
          run_pass<T>(in, out, last, sp.win, p, st, sms, note);
          continue;
        }
        if (!scratch)
          scratch.emplace(std::size_t(p.elements()) * sizeof(T),
                          "the scratch array of the low-rank terms of " + p.describe(), st);
        T* mid = static_cast<T*>(scratch->p);
        run_pass<T>(in, mid, sp.passes[0], sp.win, p, st, sms, {});
        run_pass<T>(mid, out, last, sp.win, p, st, sms, note);
      }
    });
  }
  // Every term's last pass notes a non-finite output it stores (run()).
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

}  // namespace

std::unique_ptr<Strategy> make_separable_strategy() {
  return std::make_unique<SeparableStrategy>();
}
std::unique_ptr<Strategy> make_lowrank_strategy() { return std::make_unique<LowRankStrategy>(); }

}  // namespace halo::cuda
