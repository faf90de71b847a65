// The fused kernel of the separable passes, separable_kernel<T, RX, RY, BOX, ADD, TMA>: x and y
// fused, x alone, or y (z) alone, as geometry.cuh describes; and its launch over the compiled
// radii (run_pass_as, the one entry point).
#include "cuda/separable/device.cuh"
#include "cuda/separable/plan.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda::sep {
namespace {

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

template <class T>
__device__ __forceinline__ T sep_load(const T* __restrict__ row, i64 x, const SepGeom& g, T cval) {
  return load_mapped(row, x, g.nx, 1, g.xmode, cval);
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
        for (int k = 0; k < NST; ++k) prim::mbarrier_init<1>(prim::shared_address(bar + k));
        prim::mbarrier_init_fence();
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
          const std::uint32_t b = prim::shared_address(bar + k);
          prim::mbarrier_expect_bytes(b, std::uint32_t(2 * HALF * sizeof(float)));
          const int yy = int(y_first + i64(st) * ROWS), xx = int(x0 - PX);
          prim::copy_box(tile + k * 2 * HALF, &map, xx, yy, 0, int(item), b);
          prim::copy_box(tile + k * 2 * HALF + HALF, &map, xx + kSepCols / 2, yy, 0, int(item), b);
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
            prim::mbarrier_wait(prim::shared_address(bar + use), (par >> use) & 1u);
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
              prim::fence_proxy_async_shared();  // before a later copy into this stage
            }
          } else {
            // Loaded and stored at once: registers held across the step's passes would cost
            // the copied steps their registers (spills at radius 8).
            load_step(base, y_first + i64(st) * ROWS, x0);
            stash_halves(sb);
            prim::fence_proxy_async_shared();
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
  LaunchConfig L;
  L.block = {kSepThreads, 1, 1};
  // Persistent blocks, as many as fit the device at once, take the work items in turn.
  // TMA: at most kSepTmaBlocks blocks per SM, over which the chunks are balanced.
  const auto go = [&](auto kernel, std::size_t smem, const CUtensorMap& map, bool tma) {
    L.shared_bytes = smem;
    i64 blocks = prim::resident_blocks(kernel, kSepThreads, smem, sms);
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
        prim::make_row_map(&map, in, int(sizeof(float)), s.g.nx, s.g.rows, 1, s.g.items,
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

}  // namespace

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

#define HALO_CASE(T, BOX)                                                                     \
  template bool run_pass_as<T, BOX>(const T*, T*, const SepPass&, const detail::AxisWindows&, \
                                    const Problem&, cudaStream_t, int, NonFiniteNote);
HALO_CASE(float, false)
HALO_CASE(float, true)
HALO_CASE(double, false)
HALO_CASE(double, true)
#undef HALO_CASE

}  // namespace halo::cuda::sep
