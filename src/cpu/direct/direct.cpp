/* strategy: cpu — threaded (OpenMP) + SIMD (Highway, dynamic dispatch: one binary, AVX-512 /
 * AVX2 / SSE4 / SSSE3 / scalar chosen at run time) direct correlation with register blocking.
 * Any problem: ranks 1-3 (canonical z, y, x), any filter extents and anchors (even, off-centre,
 * larger than the input), any batch, f32/f64 (accumulated in that dtype with FMA).
 *
 * Kernel: a block is R output rows x C = V*N columns (N SIMD lanes), R*V accumulators held in
 * registers (AVX-512 f32: R = 4, V = 3, 4 x 48 outputs). Per filter plane fz it walks the R+ky-1
 * input rows the block needs; input row t at shift fx is loaded once (V unaligned loads) and
 * multiplied into every output row r it feeds (filter row fy = t - r) with one broadcast weight
 * per row. Rows R-1..ky-1 feed all R outputs; the ramp rows t < R-1 and ky+t feed complementary
 * halves and are processed in pairs, so every load pair serves R*V FMAs: FMA-bound, ~97% of one
 * FMA/cycle per core on 15x15 in cache (Zen 4). R <= ky always (R = 1 for 1-row filters and 1-D).
 *
 * Edges: ghost rows (y or z outside) are skipped. Ghost columns come from zero-padded copies of
 * rows, per thread, in the cheaper of two modes (see Unit). With a boundary mode other than zero
 * ghosts, a ghost row is the row the mode maps it to (or a row of cval) and the padding holds
 * the mapped columns: the same kernel, modes at the cost of the edge copies only: wide rows read the input directly
 * and copy only the tiles of the blocks at the two ends of the rows; narrow rows and 3-D
 * volumes read every row through a ring of padded row copies (each input row copied once per
 * filter plane as the strip marches down). Extra memory per thread: at most ~512 KiB of row
 * copies and a row-pointer table; never a padded copy of the input.
 *
 * Work split: units = (item, z plane, strip of rows, chunk of columns), ~8 per thread, taken
 * dynamically in runs (neighbouring units share input rows/planes); 1-D signals are cut along x.
 * Chunks keep the kz*(R+ky-1) rows a block row touches within ~512 KiB, so the ky-1 rows shared
 * with the next block row stay in L2; the next block's columns are prefetched into L1 (18 row
 * streams at 15x15 are more than the hardware prefetcher follows). Outputs of 16 MiB and more
 * are written with non-temporal stores. Problems under ~2^18 multiply-adds run on one thread.
 *
 * Weights that are whole multiples of 1/d (boxes, means, folded or not) run as the whole numbers
 * and each output is divided by d once, so that a mean of a constant region is the constant
 * exactly (SciPy's uniform_filter). Each block notes a NaN or an infinity it stores
 * (NonFinite::noted), from the sum of its outputs: a few adds per block.
 */
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/boundary.hpp"
#include "core/nonfinite.hpp"
#include "core/profile.hpp"
#include "core/reciprocal.hpp"
#include "halo/strategy.hpp"

#ifndef HALO_CPU_FAST_COMMON
#define HALO_CPU_FAST_COMMON
namespace halo::cpu::fast {
// Everything the per-target code needs for one problem. Filled in two steps: the shape by the
// caller, the blocking (r, v, lanes, ...) by the per-target Plan().
template <class T>
struct Job {
  const T* in = nullptr;
  T* out = nullptr;
  const T* w = nullptr;  // kz*ky*kx correlation weights in T
  std::int64_t batch = 1, nz = 1, ny = 1, nx = 1;
  std::int64_t kz = 1, ky = 1, kx = 1;
  std::int64_t az = 0, ay = 0, ax = 0;
  int threads = 1;
  bool stream = false;  // non-temporal stores for the output (far larger than the caches)
  // Boundary modes other than zero ghosts: ghost rows and columns read what the mode maps them
  // to (core/boundary.hpp), a constant-mode ghost reads cval (whole ghost rows: cval_row, at
  // least nx wide). Without them, ghost rows are skipped and ghost columns are zeros.
  bool modes = false;
  Boundary mz = Boundary::constant, my = Boundary::constant, mx = Boundary::constant;
  T cval = T(0);
  const T* cval_row = nullptr;
  // Each output is divided by `divisor` at its store where that is not 1: weights that are whole
  // multiples of 1/divisor (a box) run as the whole numbers, so that a mean of a constant region
  // is the constant exactly (SciPy sums, then divides once).
  T divisor = T(1);
  // Where given, a block that stores a NaN or an infinity notes it there (NonFinite::noted).
  const Buffers* buffers = nullptr;
  // Blocking, set by Plan():
  int r = 1, v = 1;                 // rows and vectors per block
  std::int64_t cols = 1;            // columns per block: v * lanes
  std::int64_t shift = 0;           // block grid offset: blocks start at columns k*cols - shift
  std::int64_t strip_rows = 1;      // rows per unit (multiple of r)
  std::int64_t chunk_cols = 1;      // columns per unit (multiple of cols)
  std::int64_t nstrips = 1, nchunks = 1, units = 1;
  bool ring = false;                // ring mode (else direct reads + edge tiles), see Unit()
  std::int64_t ring_width = 0;      // elements per ring row: chunk + kx - 1, rounded up
  std::int64_t table_rows = 0;      // rows one block reads: kz * (r + ky - 1)
  std::int64_t buf_elems = 0;       // per thread: table_rows ring rows or edge-tile rows
};
}  // namespace halo::cpu::fast
#endif  // HALO_CPU_FAST_COMMON

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/direct/direct.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace halo::cpu::fast::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using std::int64_t;

// Register budget per target: AVX-512 has 32 vector registers, AVX2/SSE 16. A block keeps R*V
// accumulators, 2V input vectors (two input rows in the ramp pairs) and a broadcast weight live.
// R = 4 measured best on Zen 4 (docs/notes/tuning.md, CPU kernel); wider blocks only add edge
// padding.
#if HWY_TARGET <= HWY_AVX3
constexpr int kMaxRows = 4;
template <int R>
constexpr int VecsFor() {  // R=4: 12 + 6 + 1 of 32; R=1: 8 + 8 + 1 (one row at a time)
  return R >= 4 ? 3 : R == 3 ? 4 : R == 2 ? 5 : 8;
}
#elif HWY_TARGET <= HWY_SSSE3
constexpr int kMaxRows = 4;
template <int R>
constexpr int VecsFor() {  // R=4: 8 + 4 + 1 of 16; R=1: 4 + 4 + 1
  return R >= 3 ? 2 : R == 2 ? 3 : 4;
}
#else
constexpr int kMaxRows = 2;
template <int R>
constexpr int VecsFor() {
  return 2;
}
#endif

template <int R = kMaxRows>
int VecsOf(int r) {
  if constexpr (R > 1) {
    if (r < R) return VecsOf<R - 1>(r);
  }
  return VecsFor<R>();
}

template <class D>
using VecT = hn::Vec<D>;

// Every loop over the R x V accumulators is unrolled explicitly: GCC then sees only constant
// indices before scalar replacement and keeps all accumulators in registers for the whole block
// (without it they went to the stack between the ramp and steady loops, measurably slower).
#define HALO_UNROLL_ALL _Pragma("GCC unroll 16")

// One filter column fx of one input row into output rows RLO..RHI:
// acc[r] += wp[r][fx] * row[fx + v*N + lane] (`row` points at the block's first column minus the
// x anchor).
template <int RLO, int RHI, int R, int V, class D, class T>
HWY_INLINE void RowStep(D d, VecT<D> (&acc)[R][V], const T* HWY_RESTRICT row,
                        const T* const (&wp)[R], int64_t fx) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  VecT<D> x[V];
  HALO_UNROLL_ALL
  for (int v = 0; v < V; ++v) x[v] = hn::LoadU(d, row + fx + v * n);
  HALO_UNROLL_ALL
  for (int r = RLO; r <= RHI; ++r) {
    const VecT<D> wv = hn::Set(d, wp[r][fx]);
    HALO_UNROLL_ALL
    for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(wv, x[v], acc[r][v]);
  }
}

// Two input rows at once: `a` feeds output rows 0..S, `b` rows S+1..R-1, so every accumulator
// gets an FMA per pair of loads (a ramp row alone would feed only some rows per load).
template <int S, int R, int V, class D, class T>
HWY_INLINE void PairStep(D d, VecT<D> (&acc)[R][V], const T* HWY_RESTRICT a,
                         const T* HWY_RESTRICT b, const T* const (&wp)[R], int64_t fx) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  VecT<D> xa[V], xb[V];
  HALO_UNROLL_ALL
  for (int v = 0; v < V; ++v) xa[v] = hn::LoadU(d, a + fx + v * n);
  HALO_UNROLL_ALL
  for (int v = 0; v < V; ++v) xb[v] = hn::LoadU(d, b + fx + v * n);
  HALO_UNROLL_ALL
  for (int r = 0; r <= S; ++r) {
    const VecT<D> wv = hn::Set(d, wp[r][fx]);
    HALO_UNROLL_ALL
    for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(wv, xa[v], acc[r][v]);
  }
  HALO_UNROLL_ALL
  for (int r = S + 1; r < R; ++r) {
    const VecT<D> wv = hn::Set(d, wp[r][fx]);
    HALO_UNROLL_ALL
    for (int v = 0; v < V; ++v) acc[r][v] = hn::MulAdd(wv, xb[v], acc[r][v]);
  }
}

// Every filter column of one input row / row pair. The fx loop is unrolled by 4: its trip count
// is the filter width, small, so its branch would otherwise cost. (Compile-time widths with full
// unrolling were tried for kx = 3, 5 and measured slower.)
template <int RLO, int RHI, int R, int V, class D, class T>
HWY_INLINE void RowTaps(D d, VecT<D> (&acc)[R][V], const T* HWY_RESTRICT row,
                        const T* const (&wp)[R], int64_t kx) {
#pragma GCC unroll 4
  for (int64_t fx = 0; fx < kx; ++fx) RowStep<RLO, RHI>(d, acc, row, wp, fx);
}

template <int S, int R, int V, class D, class T>
HWY_INLINE void PairTaps(D d, VecT<D> (&acc)[R][V], const T* HWY_RESTRICT a,
                         const T* HWY_RESTRICT b, const T* const (&wp)[R], int64_t kx) {
#pragma GCC unroll 4
  for (int64_t fx = 0; fx < kx; ++fx) PairStep<S>(d, acc, a, b, wp, fx);
}

// The ramp of a block (needs ky >= R): input row S < R-1 feeds output rows 0..S, and input row
// ky+S feeds rows S+1..R-1 — together every row once, so they go through PairTaps. Ghost rows
// (nullptr) fall back to the half that exists.
template <int S, int R, int V, class D, class T>
HWY_INLINE void Ramp(D d, VecT<D> (&acc)[R][V], const T* const* prow, int64_t xoff, const T* wz,
                     int64_t ky, int64_t kx) {
  if constexpr (S < R - 1) {
    const T* wp[R];
    HALO_UNROLL_ALL
    for (int r = 0; r < R; ++r) wp[r] = wz + (r <= S ? S - r : ky + S - r) * kx;
    const T* a = prow[S];
    const T* b = prow[ky + S];
    if (a != nullptr && b != nullptr) {
      PairTaps<S>(d, acc, a + xoff, b + xoff, wp, kx);
    } else if (a != nullptr) {
      RowTaps<0, S>(d, acc, a + xoff, wp, kx);
    } else if (b != nullptr) {
      RowTaps<S + 1, R - 1>(d, acc, b + xoff, wp, kx);
    }
    Ramp<S + 1, R, V>(d, acc, prow, xoff, wz, ky, kx);
  }
}

// One block: R output rows x V vectors (R <= ky). rows[fz*(R+ky-1) + t] is input row
// (z-az+fz, y0-ay+t), nullptr for a ghost row; column xoff of it is the block's first column
// minus the x anchor. Output row r takes input row t with filter row fy = t - r. The block's
// columns are [x0, x0 + V*N); it stores columns [lo, hi) of them (all but at the row ends).
// `prefetch`: the rows continue at least one block further right. With Job::buffers, a block
// that stores a NaN or an infinity notes it: the sum of its stored rows' vectors is then not
// finite (adds, off the FMA pipes the sums saturate; a sum that overflows from finite outputs
// only notes in vain, which costs a look at the outputs, never a wrong answer).
template <int R, int V, bool kNote, bool kDivide, class D, class T>
HWY_INLINE void Block(D d, const Job<T>& j, const T* const* rows, int64_t xoff, T* const* outp,
                      int rows_valid, int64_t x0, int64_t lo, int64_t hi, bool prefetch) {
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  VecT<D> acc[R][V];
  HALO_UNROLL_ALL
  for (int r = 0; r < R; ++r) {
    HALO_UNROLL_ALL
    for (int v = 0; v < V; ++v) acc[r][v] = hn::Zero(d);
  }
  const int64_t ky = j.ky, kx = j.kx, tr = R + ky - 1;
  for (int64_t fz = 0; fz < j.kz; ++fz) {
    const T* const* prow = rows + fz * tr;
    const T* wz = j.w + fz * ky * kx;
    if (prefetch) {
      // The columns the next block to the right adds, into L1 while this block computes (at
      // 15x15, R + ky - 1 = 18 row streams are more than the hardware prefetcher follows).
      constexpr int64_t kLine = 64 / sizeof(T);
      for (int64_t t = 0; t < tr; ++t) {
        if (prow[t] == nullptr) continue;
        const T* p = prow[t] + xoff + V * n + kx - 1;
        for (int64_t i = 0; i < V * n; i += kLine) hwy::Prefetch(p + i);
      }
    }
    Ramp<0, R, V>(d, acc, prow, xoff, wz, ky, kx);
    // The steady state, input rows R-1..ky-1: each feeds all R output rows.
    const T* wp[R];
    HALO_UNROLL_ALL
    for (int r = 0; r < R; ++r) wp[r] = wz + (R - 1 - r) * kx;
    for (int64_t t = R - 1; t < ky; ++t) {
      if (prow[t] != nullptr) RowTaps<0, R - 1>(d, acc, prow[t] + xoff, wp, kx);
      HALO_UNROLL_ALL
      for (int r = 0; r < R; ++r) wp[r] += kx;
    }
  }
  if constexpr (kDivide) {
    // a / divisor as a hi + a lo in one FMA (core/reciprocal.hpp): the exact quotient wherever
    // there is one (a box's sum of a constant region), correctly rounded elsewhere; cheaper than a
    // division, whose unit takes 5-9 cycles per vector (docs/notes/nonfinite-cpu.md).
#if HWY_NATIVE_FMA
    const halo::detail::Reciprocal<T> y = halo::detail::Reciprocal<T>::of(j.divisor);
    const VecT<D> hi = hn::Set(d, y.hi), lo = hn::Set(d, y.lo);
#else
    const VecT<D> dv = hn::Set(d, j.divisor);
#endif
    HALO_UNROLL_ALL
    for (int r = 0; r < R; ++r) {
      HALO_UNROLL_ALL
      for (int v = 0; v < V; ++v) {
#if HWY_NATIVE_FMA
        acc[r][v] = hn::MulAdd(acc[r][v], hi, hn::Mul(acc[r][v], lo));
#else
        acc[r][v] = hn::Div(acc[r][v], dv);  // (the sum a hi + a lo must be fused)
#endif
      }
    }
  }
  HALO_UNROLL_ALL
  for (int r = 0; r < R; ++r) {
    if (r >= rows_valid) break;
    if (lo == x0 && hi == x0 + V * n) {
      T* o = outp[r] + x0;
      if (j.stream && reinterpret_cast<std::uintptr_t>(o) % (n * sizeof(T)) == 0) {
        HALO_UNROLL_ALL
        for (int v = 0; v < V; ++v) hn::Stream(acc[r][v], d, o + v * n);
      } else {
        HALO_UNROLL_ALL
        for (int v = 0; v < V; ++v) hn::StoreU(acc[r][v], d, o + v * n);
      }
    } else {
      HWY_ALIGN T tmp[V * HWY_LANES(T)];
      HALO_UNROLL_ALL
      for (int v = 0; v < V; ++v) hn::Store(acc[r][v], d, tmp + v * n);
      std::memcpy(outp[r] + lo, tmp + (lo - x0), static_cast<std::size_t>(hi - lo) * sizeof(T));
    }
  }
  if constexpr (kNote) {
    // Rows pairwise, then the vectors: a tree of R * V - 1 adds, log2 deep.
    VecT<D> row[R];
    HALO_UNROLL_ALL
    for (int r = 0; r < R; ++r) {
      row[r] = acc[r][0];
      HALO_UNROLL_ALL
      for (int v = 1; v < V; ++v) row[r] = hn::Add(row[r], acc[r][v]);
    }
    HALO_UNROLL_ALL
    for (int r = rows_valid; r < R; ++r) row[r] = hn::Zero(d);
    if constexpr (R >= 4) row[2] = hn::Add(row[2], row[3]);
    if constexpr (R >= 3) row[0] = hn::Add(row[0], row[2]);
    if constexpr (R >= 2) row[0] = hn::Add(row[0], row[1]);
    if (!hn::AllFalse(d, hn::IsNaN(hn::Sub(row[0], row[0]))))
      halo::detail::note_nonfinite(*j.buffers);
  }
}

// Per-thread workspace: the buffer for padded row copies, the block's row-pointer table (two
// halves: input rows and their padded copies) and, in ring mode, which row each ring slot holds.
template <class T>
struct Work {
  T* buf;
  const T** table;
  int64_t* held;
};

// One unit of work: item b, plane z, a strip of rows, a chunk of columns [xs, xe). Ghost rows
// (y or z outside the array) are nullptr in the table and their taps are skipped. Ghost columns
// come from zero-padded row copies, in one of two modes chosen by Plan() by copy volume:
//
//  direct (wide rows): blocks whose reads stay inside the rows read the input directly; the few
//    edge blocks at the left/right ends (and a partial last block) copy the R + ky - 1 row
//    segments they read into a padded tile first.
//  ring (narrow rows, 3-D): slot (fz, iy mod (R+ky-1)) holds a padded copy of input columns
//    [x - ax, x - ax + ring_width), x = xs - shift the chunk's first column, of row
//    (z - az + fz, iy). Marching down the strip, each block
//    of R rows copies just the R rows it adds; every block then reads padded rows.
template <int R, int V, bool kNote, bool kDivide, class T>
void Unit(const Job<T>& j, int64_t unit, const Work<T>& wk) {
  const hn::ScalableTag<T> d;
  const int64_t c = unit % j.nchunks;
  const int64_t s = (unit / j.nchunks) % j.nstrips;
  const int64_t plane = unit / (j.nchunks * j.nstrips);  // b * nz + z
  const int64_t z = plane % j.nz, b = plane / j.nz;
  const int64_t ys = s * j.strip_rows, ye = std::min(j.ny, ys + j.strip_rows);
  // Columns in shifted coordinates X = x + shift (blocks start at multiples of cols in X).
  const int64_t xs = c * j.chunk_cols, xe = std::min(j.nx + j.shift, xs + j.chunk_cols);
  const int64_t cols = j.cols, tr = R + j.ky - 1, nrows = j.kz * tr;
  const T* item_in = j.in + b * j.nz * j.ny * j.nx;
  T* item_out = j.out + b * j.nz * j.ny * j.nx;
  const T** rows = wk.table;           // input rows (direct) or ring rows
  const T** tile = wk.table + nrows;   // direct mode: an edge block's padded copies

  // Copies input columns [left, left + width) of `src` to `dst`; outside [0, nx) zeros, or with
  // a boundary mode what it maps each column to.
  const auto padded_copy = [&](T* dst, const T* src, int64_t left, int64_t width) {
    const int64_t lo = std::max<int64_t>(0, left), hi = std::min(j.nx, left + width);
    if (j.modes) {
      // Only columns [-ax, nx + kx - 1 - ax) are read by outputs that are stored; the rest of
      // the copy (a block's unused columns) is zeros, so the mapping costs at most kx - 1
      // elements per row.
      const int64_t reach_lo = -j.ax, reach_hi = j.nx + j.kx - 1 - j.ax;
      const auto ghost = [&](int64_t x) {
        const int64_t ix = halo::detail::map_index(x, j.nx, j.mx);
        return ix < 0 ? j.cval : src[ix];
      };
      const int64_t end = left + width;
      // [left, a) zeros, [a, b) mapped, [b, c) the inside, [c, d) mapped, [d, end) zeros.
      const int64_t b = std::min(std::max(lo, left), end), c = std::max(b, std::min(hi, end));
      const int64_t a = std::min(std::max(left, reach_lo), b);
      const int64_t e = std::max(c, std::min(end, reach_hi));
      std::fill(dst, dst + (a - left), T(0));
      for (int64_t x = a; x < b; ++x) dst[x - left] = ghost(x);
      if (c > b) std::memcpy(dst + (b - left), src + b, static_cast<std::size_t>(c - b) * sizeof(T));
      for (int64_t x = c; x < e; ++x) dst[x - left] = ghost(x);
      std::fill(dst + (e - left), dst + width, T(0));
      return;
    }
    if (hi <= lo) {
      std::fill(dst, dst + width, T(0));
      return;
    }
    std::fill(dst, dst + (lo - left), T(0));
    std::memcpy(dst + (lo - left), src + lo, static_cast<std::size_t>(hi - lo) * sizeof(T));
    std::fill(dst + (hi - left), dst + width, T(0));
  };

  if (j.ring)
    for (int64_t i = 0; i < nrows; ++i) wk.held[i] = INT64_MIN;  // none: ghost rows are < 0
  for (int64_t y0 = ys; y0 < ye; y0 += R) {
    const int rows_valid = static_cast<int>(std::min<int64_t>(R, ye - y0));
    T* outp[R];
    for (int r = 0; r < R; ++r)
      outp[r] = r < rows_valid ? item_out + ((z * j.ny) + y0 + r) * j.nx : nullptr;
    for (int64_t fz = 0; fz < j.kz; ++fz) {
      const int64_t iz = z - j.az + fz;
      for (int64_t t = 0; t < tr; ++t) {
        const int64_t iy = y0 - j.ay + t;
        const int64_t i = fz * tr + t;
        const T* src = nullptr;
        if (iz >= 0 && iz < j.nz && iy >= 0 && iy < j.ny) {
          src = item_in + (iz * j.ny + iy) * j.nx;
        } else if (j.modes) {  // a ghost row: the row the modes map it to, or cval
          const int64_t mz = halo::detail::map_index(iz, j.nz, j.mz);
          const int64_t my = halo::detail::map_index(iy, j.ny, j.my);
          src = mz < 0 || my < 0 ? j.cval_row : item_in + (mz * j.ny + my) * j.nx;
        } else {
          rows[i] = nullptr;
          continue;
        }
        if (!j.ring) {
          rows[i] = src;
          continue;
        }
        const int64_t slot = fz * tr + ((iy % tr) + tr) % tr;
        T* dst = wk.buf + slot * j.ring_width;
        if (wk.held[slot] != iy) {
          padded_copy(dst, src, xs - j.shift - j.ax, j.ring_width);
          wk.held[slot] = iy;
        }
        rows[i] = dst;
      }
    }
    for (int64_t bx = xs; bx < xe; bx += cols) {
      const int64_t x0 = bx - j.shift;  // may be negative: the head block of a shifted row
      const int64_t lo = std::max<int64_t>(0, x0), hi = std::min(j.nx, x0 + cols);
      if (j.ring) {
        Block<R, V, kNote, kDivide>(d, j, rows, bx - xs, outp, rows_valid, x0, lo, hi,
                                    bx + cols < xe);
        continue;
      }
      const int64_t left = x0 - j.ax, w = cols + j.kx - 1;  // the block reads [left, left + w)
      if (left >= 0 && left + w <= j.nx) {
        Block<R, V, kNote, kDivide>(d, j, rows, left, outp, rows_valid, x0, lo, hi,
                                    left + w + cols <= j.nx);
        continue;
      }
      for (int64_t i = 0; i < nrows; ++i) {
        if (rows[i] == nullptr) {
          tile[i] = nullptr;
          continue;
        }
        T* dst = wk.buf + i * w;
        padded_copy(dst, rows[i], left, w);
        tile[i] = dst;
      }
      Block<R, V, kNote, kDivide>(d, j, tile, 0, outp, rows_valid, x0, lo, hi, false);
    }
  }
  if (j.stream) hwy::FlushStream();
}

// Chooses the blocking and the work split for this target's vector length.
template <class T>
void PlanT(Job<T>& j) {
  const hn::ScalableTag<T> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // Rows share input rows only when ky > 1; R <= ky keeps every input row of a block feeding
  // all R accumulators (steady rows alone, ramp rows in pairs), R <= ny avoids idle rows.
  j.r = static_cast<int>(std::min<int64_t>({kMaxRows, j.ky, j.ny}));
  const int vmax = VecsOf(j.r);
  j.v = j.nx >= vmax * n ? vmax : 1;  // narrow arrays: one vector per block, less padding
  j.cols = j.v * n;
  // Output rows all equally misaligned (row bytes a multiple of the vector): shift the block grid
  // so full blocks store to aligned addresses (non-temporal stores need them:
  // docs/notes/tuning.md).
  const std::uintptr_t vbytes = static_cast<std::uintptr_t>(n) * sizeof(T);
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(j.out);
  j.shift = (j.nx * sizeof(T)) % vbytes == 0 && addr % sizeof(T) == 0
                ? static_cast<int64_t>((addr % vbytes) / sizeof(T))
                : 0;
  const int64_t ext = j.nx + j.shift;  // the columns in shifted coordinates
  const int64_t tr = j.r + j.ky - 1;
  // The ring (kz * (r + ky - 1) rows of a chunk) is sized to ~512 KiB, half a typical L2, so the
  // rows one block of rows shares with the next are still there.
  const int64_t budget = int64_t(512) << 10;
  const int64_t bytes_per_col = j.kz * tr * static_cast<int64_t>(sizeof(T));
  int64_t chunk =
      std::max<int64_t>(j.cols, (budget / bytes_per_col - (j.kx - 1)) / j.cols * j.cols);
  int64_t nchunks = cdiv(ext, chunk);
  chunk = cdiv(cdiv(ext, nchunks), j.cols) * j.cols;
  nchunks = cdiv(ext, chunk);
  // Units: about 8 per thread for dynamic balance; strips as tall as that allows (each strip
  // re-reads ky - 1 halo rows); 1-D signals and single rows are split along x instead.
  const int64_t planes = j.batch * j.nz;
  const int64_t want = 8 * static_cast<int64_t>(std::max(1, j.threads));
  const int64_t blocks = cdiv(j.ny, j.r);
  int64_t nstrips = std::min(blocks, std::max<int64_t>(1, cdiv(want, planes * nchunks)));
  const int64_t strip = cdiv(blocks, nstrips) * j.r;
  nstrips = cdiv(j.ny, strip);
  if (planes * nchunks * nstrips < want && ext > j.cols) {
    const int64_t more = std::min(cdiv(ext, j.cols), cdiv(want, planes * nstrips));
    if (more > nchunks) {
      chunk = cdiv(cdiv(ext, more), j.cols) * j.cols;
      nchunks = cdiv(ext, chunk);
    }
  }
  j.strip_rows = strip;
  j.chunk_cols = chunk;
  j.nstrips = nstrips;
  j.nchunks = nchunks;
  j.units = planes * nstrips * nchunks;
  j.table_rows = j.kz * tr;
  // Ring or direct (see Unit), by the copying per block of R rows, counting each row copied as
  // 64 elements more (call overhead). Ring: R new rows per filter plane. Direct: the padded tiles
  // of the blocks at the left and right ends of the rows. Each measured faster where it is
  // chosen: ring on small volumes, direct on large images (docs/notes/tuning.md, CPU kernel).
  const int64_t nblocks = cdiv(ext, j.cols), w = j.cols + j.kx - 1;
  const int64_t left_edge = cdiv(j.ax + j.shift, j.cols);
  const int64_t right_edge = nblocks - std::min(nblocks, cdiv(std::max<int64_t>(
                                                             0, ext + j.ax - w + 1), j.cols));
  const int64_t edge_blocks = std::min(nblocks, left_edge + right_edge);
  const double ring_copy = double(j.kz) * j.r * (j.nx + nchunks * (j.kx - 1) + 64);
  const double tile_copy = double(edge_blocks) * j.kz * tr * (w + 64);
  j.ring = ring_copy < tile_copy;
  // Ring rows: the chunk's whole blocks plus the filter's reach, rounded to 64 bytes.
  const int64_t line = 64 / static_cast<int64_t>(sizeof(T));
  j.ring_width = cdiv(chunk + j.kx - 1, line) * line;
  j.buf_elems = j.table_rows * (j.ring ? j.ring_width : w);
}

template <int R, class T>
void UnitR(const Job<T>& j, int64_t unit, const Work<T>& wk) {
  if constexpr (R <= kMaxRows) {
    if (j.r != R) return UnitR<R + 1>(j, unit, wk);
    // Noting and the divisor as compile-time forms: without them the kernel is as before.
    const auto form = [&](auto v) {
      constexpr int kV = decltype(v)::value;
      if (j.divisor != T(1)) {
        if (j.buffers) return Unit<R, kV, true, true>(j, unit, wk);
        return Unit<R, kV, false, true>(j, unit, wk);
      }
      if (j.buffers) return Unit<R, kV, true, false>(j, unit, wk);
      return Unit<R, kV, false, false>(j, unit, wk);
    };
    if (j.v == 1) return form(std::integral_constant<int, 1>());
    return form(std::integral_constant<int, VecsFor<R>()>());
  }
}

template <class T>
void UnitT(const Job<T>& j, int64_t unit, T* ring, const T** table, int64_t* held) {
  UnitR<1>(j, unit, Work<T>{ring, table, held});
}

void PlanF32(Job<float>& j) { PlanT(j); }
void PlanF64(Job<double>& j) { PlanT(j); }
void UnitF32(const Job<float>& j, int64_t u, float* ring, const float** table, int64_t* held) {
  UnitT(j, u, ring, table, held);
}
void UnitF64(const Job<double>& j, int64_t u, double* ring, const double** table, int64_t* held) {
  UnitT(j, u, ring, table, held);
}
int64_t CurrentTarget() { return HWY_TARGET; }

// dst[i] = src[i] for i < n; returns whether every value was finite (v - v is 0 for a finite v
// and NaN otherwise, or'ed in: free beside the loads and stores). cpu_fft's copy of a tile out.
template <class T>
bool CopyFiniteT(const T* HWY_RESTRICT src, T* HWY_RESTRICT dst, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto p = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, src + i);
    hn::StoreU(v, d, dst + i);
    p = hn::Or(p, hn::Sub(v, v));
  }
  bool finite = hn::AllFalse(d, hn::IsNaN(p));
  for (; i < n; ++i) {
    dst[i] = src[i];
    finite = finite && src[i] - src[i] == T(0);
  }
  return finite;
}
bool CopyFiniteF32(const float* src, float* dst, int64_t n) { return CopyFiniteT(src, dst, n); }
bool CopyFiniteF64(const double* src, double* dst, int64_t n) { return CopyFiniteT(src, dst, n); }

}  // namespace halo::cpu::fast::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>

#include <atomic>
#include <cmath>

#include "hwy/aligned_allocator.h"

#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"

namespace halo::cpu {
std::string simd_targets();
std::string simd_best_target();
std::unique_ptr<Strategy> make_fast_strategy();

namespace fast {
HWY_EXPORT(PlanF32);
HWY_EXPORT(PlanF64);
HWY_EXPORT(UnitF32);
HWY_EXPORT(UnitF64);
HWY_EXPORT(CurrentTarget);
HWY_EXPORT(CopyFiniteF32);
HWY_EXPORT(CopyFiniteF64);

void Plan(Job<float>& j) { HWY_DYNAMIC_DISPATCH(PlanF32)(j); }
void Plan(Job<double>& j) { HWY_DYNAMIC_DISPATCH(PlanF64)(j); }
void RunUnit(const Job<float>& j, std::int64_t u, float* ring, const float** table,
             std::int64_t* held) {
  HWY_DYNAMIC_DISPATCH(UnitF32)(j, u, ring, table, held);
}
void RunUnit(const Job<double>& j, std::int64_t u, double* ring, const double** table,
             std::int64_t* held) {
  HWY_DYNAMIC_DISPATCH(UnitF64)(j, u, ring, table, held);
}

// Every thread's workspace, allocated by the calling thread (an allocation failure is an
// exception there, not inside the parallel region): row copies, row-pointer table, ring slots.
template <class T>
struct Workspace {
  std::int64_t buf_stride, table_stride, held_stride;
  hwy::AlignedFreeUniquePtr<T[]> buf;
  std::vector<const T*> table;
  std::vector<std::int64_t> held;

  // Row-buffer elements per thread, padded to a cache line; row-pointer table entries.
  static std::int64_t buf_elems(const Job<T>& j) {
    const std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));  // aligned per thread
    return (std::max<std::int64_t>(1, j.buf_elems) + line - 1) / line * line;
  }
  static std::int64_t table_entries(const Job<T>& j) { return 2 * j.table_rows; }

  Workspace(const Job<T>& j, int threads) {
    buf_stride = buf_elems(j);
    table_stride = table_entries(j);
    held_stride = j.table_rows;
    const std::string what = std::to_string(threads) + " x " +
                             std::to_string(buf_stride * sizeof(T)) + " bytes of row buffers";
    buf = hwy::AllocateAligned<T>(static_cast<std::size_t>(buf_stride * threads));
    if (!buf) throw Error("cpu strategy: cannot allocate " + what);
    try {
      table.resize(static_cast<std::size_t>(table_stride * threads));
      held.resize(static_cast<std::size_t>(held_stride * threads));
    } catch (const std::bad_alloc&) {
      throw Error("cpu strategy: cannot allocate the row tables beside " + what);
    }
  }
  void run(const Job<T>& j, std::int64_t unit, int thread) {
    RunUnit(j, unit, buf.get() + thread * buf_stride, table.data() + thread * table_stride,
            held.data() + thread * held_stride);
  }
};

// Below this many multiply-adds (tens of microseconds on one core) a problem runs
// single-threaded.
constexpr double kSerialWork = double(1 << 18);

// Outputs of at least this many bytes are written with non-temporal stores. With the input of
// the same size the working set then exceeds a typical 16-32 MiB L3 (sysconf's cache sizes are not
// trusted: inside VMs they report the host's or nothing), so keeping the output in cache buys
// nothing while its read-for-ownership costs a third of the memory traffic.
constexpr double kStreamBytes = double(16 << 20);

// The job for p, planned (blocking, units, workspace sizes); the pointers are the caller's.
template <class T>
Job<T> make_job(const Problem& p, const void* in, void* out, const T* w) {
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  Job<T> j;
  j.in = static_cast<const T*>(in);
  j.out = static_cast<T*>(out);
  j.w = w;
  j.batch = p.batch();
  j.nz = n.z, j.ny = n.y, j.nx = n.x;
  j.kz = k.z, j.ky = k.y, j.kx = k.x;
  j.az = a.z, j.ay = a.y, j.ax = a.x;
  // Small problems (a few microseconds of work) run on the calling thread: waking a team costs
  // more than it saves, and far more when the other cores are busy.
  const double work = double(p.elements()) * double(p.taps());
  j.threads = work < kSerialWork ? 1 : omp_get_max_threads();
  // Large outputs: non-temporal stores (no read-for-ownership, no eviction of the input).
  j.stream = double(p.elements()) * sizeof(T) >= kStreamBytes;
  // Boundary modes per canonical axis (absent axes have extent 1 and no ghosts).
  const int rank = p.rank();
  j.modes = !p.zero_ghosts();
  j.mz = rank == 3 ? p.mode(0) : Boundary::constant;
  j.my = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  j.mx = p.mode(rank - 1);
  j.cval = static_cast<T>(p.cval());
  Plan(j);
  return j;
}

template <class T>
int team_size(const Job<T>& j) {
  return static_cast<int>(std::min<std::int64_t>(j.threads, j.units));
}

// What run_typed allocates: the weights in T, and every thread's workspace.
template <class T>
std::vector<MemoryUse> workspace_typed(const Problem& p) {
  const Job<T> j = make_job<T>(p, nullptr, nullptr, nullptr);
  const int threads = team_size(j);
  const double per_thread = double(Workspace<T>::buf_elems(j)) * sizeof(T) +
                            double(Workspace<T>::table_entries(j)) * sizeof(void*) +
                            double(j.table_rows) * sizeof(std::int64_t);
  return {{"the filter weights and a row of cval",
           double(p.taps() + (j.modes && (j.ky > 1 || j.kz > 1) ? j.nx : 0)) * sizeof(T),
           MemorySpace::host},
          {"row buffers of " + std::to_string(threads) + " threads", per_thread * threads,
           MemorySpace::host}};
}

template <class T>
void run_typed(const Problem& p, const Buffers& b) {
  const std::vector<double>& w64 = p.correlation_weights();
  // Weights that are whole multiples m of 1/d (a box, a mean, folded by the modes or not): the
  // whole numbers, each sum divided by d once (Job::divisor), or where d is a power of two the
  // weights m/d (exact), so that a mean of a constant region is the constant exactly.
  double least = 0, most = 0;
  for (double v : w64)
    if (v != 0) {
      least = least == 0 ? std::fabs(v) : std::min(least, std::fabs(v));
      most = std::max(most, std::fabs(v));
    }
  const auto mult = least > 0 ? detail::multiples(w64, detail::fold_slack(most / least))
                              : std::nullopt;
  const double tol = per_type<T>(detail::kWholeReciprocalTolF32, detail::kWholeReciprocalTol);
  const double divisor = mult ? detail::whole_reciprocal(mult->step, tol) : 0;
  const bool power = divisor > 0 && std::exp2(std::round(std::log2(divisor))) == divisor;
  std::vector<T> w;
  try {
    if (divisor > 0) {
      w.resize(w64.size());
      for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = static_cast<T>(power ? mult->m[i] / divisor : mult->m[i]);
    } else {
      w.assign(w64.begin(), w64.end());
    }
  } catch (const std::bad_alloc&) {
    throw Error("cpu strategy: cannot allocate " + std::to_string(w64.size() * sizeof(T)) +
                " bytes for the filter weights");
  }
  Job<T> j = make_job<T>(p, b.input, b.output, w.data());
  if (divisor > 0 && !power) j.divisor = static_cast<T>(divisor);
  if (b.nonfinite) j.buffers = &b;
  // A whole row of cval, for the ghost rows of constant mode.
  std::vector<T> cval_row;
  if (j.modes && (j.ky > 1 || j.kz > 1)) {  // 1 x 1 filter planes never read a ghost row
    cval_row.assign(static_cast<std::size_t>(j.nx), j.cval);
    j.cval_row = cval_row.data();
  }
  const int threads = team_size(j);
  Workspace<T> ws(j, threads);
  // Progress: the units done so far, reported from the calling thread (thread 0 of the team).
  const auto& progress = p.progress();
  if (threads <= 1) {
    for (std::int64_t u = 0; u < j.units; ++u) {
      ws.run(j, u, 0);
      if (progress) progress(double(u + 1) / double(j.units));
    }
    return;
  }
  std::atomic<std::int64_t> done{0};
  // Consecutive units share input rows (3-D: planes z-1, z, z+1 ... for plane z), so each grab is
  // a run of units; ~4 grabs per thread still balance a machine whose cores are not all ours.
  const std::int64_t grab = std::max<std::int64_t>(1, j.units / (4 * threads));
#pragma omp parallel for num_threads(threads) schedule(dynamic, grab)
  for (std::int64_t u = 0; u < j.units; ++u) {
    ws.run(j, u, omp_get_thread_num());
    const std::int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
    if (progress && omp_get_thread_num() == 0) progress(double(d) / double(j.units));
  }
  if (progress) progress(1.0);
}

class FastStrategy final : public Strategy {
 public:
  std::string name() const override { return "cpu"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "OpenMP threads + Highway SIMD (" + simd_best_target() +
           "), register-blocked direct correlation, zero-padded row copies per thread";
  }
  Status can_implement(const Problem&) const override { return Status::success(); }
  // The baseline every CPU estimate is weighed against (profile::cpu_direct_ns).
  Estimate estimate(const Problem& p) const override {
    return {profile::cpu_direct_ns(p), "direct sums: elements x (taps x tap + output) ns"};
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    dispatch_dtype(p.dtype(), [&](auto d) { run_typed<typename decltype(d)::storage>(p, b); });
  }
  // Every block notes the non-finite outputs it stores.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    return dispatch_dtype(p.dtype(), [&](auto d) {
      return workspace_typed<typename decltype(d)::storage>(p);
    });
  }
};
}  // namespace fast

std::string simd_targets() {
  // Best first (lower bits are better targets in Highway), as the dispatcher tries them.
  std::string s;
  const std::uint64_t targets = static_cast<std::uint64_t>(HWY_TARGETS);
  for (int i = 0; i < 63; ++i) {
    const std::uint64_t bit = std::uint64_t(1) << i;
    if ((targets & bit) == 0) continue;
    s += (s.empty() ? "" : " ") + std::string(hwy::TargetName(static_cast<std::int64_t>(bit)));
  }
  return s;
}

std::string simd_best_target() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(fast::CurrentTarget)());
}

std::unique_ptr<Strategy> make_fast_strategy() { return std::make_unique<fast::FastStrategy>(); }

bool copy_finite(const float* src, float* dst, std::int64_t n) {
  return HWY_DYNAMIC_DISPATCH(fast::CopyFiniteF32)(src, dst, n);
}
bool copy_finite(const double* src, double* dst, std::int64_t n) {
  return HWY_DYNAMIC_DISPATCH(fast::CopyFiniteF64)(src, dst, n);
}

}  // namespace halo::cpu
#endif  // HWY_ONCE
