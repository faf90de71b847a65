/* strategy: fast, 2D — register-blocked row streaming.
 *
 * Who loads what: each warp owns a strip of 128 columns (4 per lane) and a chunk of rows, and
 * streams down the rows. For every input row it needs, per lane, the 4 + 2*RA elements its four
 * outputs need (RA = R rounded up to 4): as 16-byte loads straight from global memory (the halo
 * columns are the neighbouring lanes' centres, so they hit in L1, and DRAM sees each row about
 * once), issued up to 4 rows ahead into registers (kPrefetch), copied by cp.async into a
 * warp-private ring of row slots in shared memory (kRing) that the lanes read back, or copied
 * into such a ring by the tensor memory accelerator, 8 to 16 rows per copy (kTma: f32 wherever
 * the rows' pitch allows a tensor map). The policy (fast/policy.hpp) says which, per dtype and
 * radius, from measurements.
 * Which threads compute: every lane, all the time; no block-wide barriers (the ring needs only
 * __syncwarp).
 * The accumulators of the 2R+1 output rows the current input row contributes to live in registers
 * (acc[q][j], q = 0 the oldest): the row adds (2R+1)^2 * 4 FFMAs, whose weights are kernel
 * parameters (constant bank operands, no loads), then the oldest row is complete: it is stored and
 * the accumulators shift by one.
 * Winograd columns (f32 under the TMA ring, r = 4, 5, 7 by default; WinoCols below): the lane's 4
 * outputs are taken as 2 pairs and each filter row as segments of 3 taps, F(2,3) along x, so an
 * input row costs (2R+1) * 8 * ceil((2R+1)/3) FFMAs instead of (2R+1)^2 * 4 (r = 4: 216 against
 * 324), the input transform shared by the 2R+1 filter rows. Its rounding is bounded by the
 * transformed terms, not by sum |w||x| alone (Summation::winograd_x, docs/ACCURACY.md).
 * Arithmetic intensity: each input element comes from DRAM about once (plus 2R rows per chunk)
 * and feeds (2R+1)^2 taps, so the DRAM intensity is the problem's own, (2R+1)^2 * 2 OP over 8 B
 * (read + write): the notes' tiled bound with the output write counted. On an H100 the kernel is
 * memory-bound up to r ~ 4 and FFMA-bound above.
 */
#include "cuda/check.cuh"
#include "cuda/fast/kernels.cuh"

#include <string>
#include <type_traits>

namespace halo::cuda::fast {
namespace {

// The TMA ring of a strip of W columns: one box per row group, or two (overlapping by the 2 * RA
// halo columns) where W exceeds the 256 columns a box may have (8 columns per lane; tma_parts()
// in fast/policy.hpp).
template <class T, int W, int RA>
using TmaRingOf = TmaRing<T, W, tma_parts(W), (tma_parts(W) > 1 ? 2 * RA : 0)>;

// Whether the kernel stores its outputs with the streaming hint (st.global.cs, evict-first): f32
// under the TMA ring at r = 4, 5, where it measured faster; the memory-bound r <= 3, r = 6 (8
// columns), r = 7 and the passes of r = 15 gained nothing or lost (docs/notes/tuning.md, 2D:
// streaming stores). The check stays here: folded into store4 as a template flag (the same
// semantics), nvcc scheduled the kernel differently and it measured slower.
template <class T, int R, Feed F>
constexpr bool kStreamStores = F == Feed::kTma && sizeof(T) == 4 && R >= 4 && R <= 5;

// Winograd columns (F(2,3) along x). The lane's 4 outputs are 2 pairs and the filter row is cut
// into S segments of 3 taps (zero-padded); for a pair and a segment, the 4 inputs d0..d3 under
// it are transformed once per input row (B'd = d0 - d2, d1 + d2, d2 - d1, d1 - d3) and every
// filter row then multiplies them element-wise by its segment's transformed weights (Gg = g0,
// (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2, made on the host in double), adding into 4
// transformed accumulators per pair; the output transform (y0 = m0 + m1 + m2, y1 = m1 - m2 - m3)
// runs once, on the finished row. The transforms of a row are shared by all 2R+1 filter rows,
// so an input row costs (2R+1) * 8 * S FFMAs instead of (2R+1)^2 * 4 (r = 4: 216 against 324),
// plus about 22 adds for the input transform and 8 for the output. Its points are 0, 1, -1 and
// infinity; the rounding is bounded by the transformed terms (docs/ACCURACY.md), which the tests
// hold these kernels to (Summation::winograd_x). The segments and where the form is compiled
// (wino_segments, wino_first_tap, wino_fits, wino_compiled) are in fast/policy.hpp.
template <int R>
struct WinoCols {
  static constexpr int S = wino_segments(R);
  // The segments cover window taps F0 .. F0 + 3S - 1, the lane's first window at v[F0 + RA - R].
  static constexpr int F0 = wino_first_tap(R);
  static constexpr bool kFits = wino_fits(R);
  static constexpr int kRowTaps = 4 * S;  // transformed weights per filter row
};
template <class T, int R, int KY>
constexpr bool kWinoCompiled = std::is_same<T, float>::value && wino_compiled(R, KY);

// Filter rows [fy0, fy0 + KY) of a (2R+1)-wide window; the caller passes fy0 through D = R - fy0
// (input row s feeds output rows s + D - i, i < KY) and `taps` holds just those KY rows. With
// `accumulate` the pass adds to what `out` holds (the passes after the first of a split filter).
// With WG, the columns in Winograd form (WinoCols): `taps` then holds KY rows of transformed
// weights.
template <class T, int R, int KY, Feed F, bool SPLIT, int DEPTH = 1, int TX = kTx, bool WG = false>
__global__ void __launch_bounds__(kThreads)
    stream2d(const T* __restrict__ in, T* __restrict__ out, Work g,
             Taps<T, KY*(WG ? WinoCols<R>::kRowTaps : 2 * R + 1)> taps, int pass_d,
             bool pass_accumulate,
             const __grid_constant__ CUtensorMap map, int slots, int box_rows) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = TX + 2 * RA;
  static_assert(TX % kTx == 0, "columns per lane come in 16-byte groups");
  static_assert(!WG || (TX == kTx && WinoCols<R>::kFits), "Winograd columns: 4 per lane");
  constexpr int AW = WG ? 2 * TX : TX;  // accumulators per output row (4 per pair in WG)
  // One pass (SPLIT false): D = R at compile time and nothing to add to (the kernel as it was
  // before passes existed; a run-time D and the add path measured slower: docs/notes/tuning.md, 2D:
  // filter passes).
  const int D = SPLIT ? pass_d : R;
  const bool accumulate = SPLIT && pass_accumulate;
  const int lane = threadIdx.x & 31;
  const std::int64_t item =
      std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (item >= g.items) return;
  // item = (b * chunks + chunk) * strips + strip: strips fastest, so neighbours share halos.
  const std::int64_t strip = item % g.strips;
  const std::int64_t chunk = (item / g.strips) % g.chunks;
  const std::int64_t b = item / (g.strips * g.chunks);
  const std::int64_t x0 = strip * (32 * TX) + lane * TX;
  const std::int64_t y0 = chunk * g.chunk;
  const std::int64_t y1 = y0 + g.chunk < g.ny ? y0 + g.chunk : g.ny;
  const T* src = in + b * g.ny * g.nx;
  T* dst = out + b * g.ny * g.nx;

  T acc[KY][AW];
#pragma unroll
  for (int q = 0; q < KY; ++q)
#pragma unroll
    for (int j = 0; j < AW; ++j) acc[q][j] = T(0);
  // The lane's probe of every output it stores, noted once at the end (Finish).
  T probe = T(0);

  // At input row s, acc[q] belongs to output row s + D - (KY-1) + q, which takes row s through
  // filter row KY-1-q of the pass; acc[0] is complete after it. The next row's loads are issued
  // before this row's FFMAs (software pipelining), so their latency hides behind them.
  auto fetch = [&](RowOf<T, NV>& w, std::int64_t s) {
    if (s >= 0 && s < g.ny)
      load_row(w.v, src + s * g.nx, x0 - RA, g.nx, g.vec);
    else
      zero_row(w.v, NV);
  };
  const std::int64_t s0 = y0 - D, s1 = y1 - D + KY - 1;
  // With the ring, row s sits in slot (s - s0) % kRingSlots; the warp's slots start RA columns
  // left of its strip, so the lane's inputs start at lane * TX.
  constexpr bool PF = F == Feed::kPrefetch, RING = F == Feed::kRing, TMA = F == Feed::kTma;
  constexpr int W = 32 * TX + 2 * RA;
  __shared__ __align__(16) T ring_mem[kWarpsPerBlock][RING ? kRingSlots : 1][RING ? W : 4];
  const RowRing<T, RING ? W : 4, RING ? kRingSlots : 1> ring(
      ring_mem[threadIdx.x >> 5], x0 - lane * TX - RA, g.nx, g.vec, lane);
  auto fill = [&](std::int64_t s) {
    if (s < s1) {
      const bool live = s >= 0 && s < g.ny;
      ring.fill(int((s - s0) % kRingSlots), live ? src + s * g.nx : src, live);
    }
    ring.commit();
  };
  T v[NV];
  auto shift = [&] {
#pragma unroll
    for (int q = 0; q + 1 < KY; ++q)
#pragma unroll
      for (int j = 0; j < AW; ++j) acc[q][j] = acc[q + 1][j];
#pragma unroll
    for (int j = 0; j < AW; ++j) acc[KY - 1][j] = T(0);
  };
  // WG: the row in v, transformed, into the transformed accumulators (WinoCols).
  auto wg_fmas = [&] {
    using C = WinoCols<R>;
    T td[2][C::S][4];  // the row's transformed inputs, per pair and segment
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int sg = 0; sg < C::S; ++sg) {
        const int i = 2 * p + 3 * sg + C::F0 + RA - R;
        td[p][sg][0] = v[i] - v[i + 2];
        td[p][sg][1] = v[i + 1] + v[i + 2];
        td[p][sg][2] = v[i + 2] - v[i + 1];
        td[p][sg][3] = v[i + 1] - v[i + 3];
      }
#pragma unroll
    for (int q = 0; q < KY; ++q) {
      const int fy = KY - 1 - q;
#pragma unroll
      for (int sg = 0; sg < C::S; ++sg)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const T w = taps.w[fy * C::kRowTaps + 4 * sg + k];
#pragma unroll
          for (int p = 0; p < 2; ++p) acc[q][4 * p + k] = fma(w, td[p][sg][k], acc[q][4 * p + k]);
        }
    }
  };
  // WG: the output transform of the finished row (acc[0]) stored at row (the lane's first
  // column): a 16-byte store where `full`, element by element up to nx where `edge`.
  auto wg_store = [&](T* row, bool full, bool edge) {
    if constexpr (WG) {  // (T = float)
      T o[kTx];
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        const T* m = &acc[0][4 * p];
        o[2 * p] = m[0] + m[1] + m[2];
        o[2 * p + 1] = m[1] - m[2] - m[3];
      }
      // Never a box (fast_policy). Unconditional: a lane past nx transforms the map's zeros.
      g.finish.probe_all(o, probe);
      if (full) {
        if constexpr (kStreamStores<T, R, F>)
          store16_cs(row, o[0], o[1], o[2], o[3]);
        else
          store16(row, o[0], o[1], o[2], o[3]);
      } else if (edge) {
#pragma unroll
        for (int e = 0; e < kTx; ++e)
          if (x0 + e < g.nx) row[e] = o[e];
      }
    }
  };
  // Row s is in v: its FFMAs, then the output row it completes is stored and the accumulators
  // shift. (The Winograd columns have their own row loop, under the TMA ring below.)
  auto step = [&](std::int64_t s) {
    if constexpr (!WG) {
#pragma unroll
      for (int q = 0; q < KY; ++q) {
        const int fy = KY - 1 - q;
#pragma unroll
        for (int fx = 0; fx < K; ++fx) {
          const T w = taps.w[fy * K + fx];
#pragma unroll
          for (int j = 0; j < TX; ++j) acc[q][j] = fma(w, v[j + fx + RA - R], acc[q][j]);
        }
      }
      const std::int64_t done = s + D - (KY - 1);
      if (done >= y0) {
#pragma unroll
        for (int c = 0; c < TX; c += kTx) {
          T(&part)[kTx] = *reinterpret_cast<T(*)[kTx]>(&acc[0][c]);
          if (x0 + c < g.nx) {
            if (accumulate) add4<T>(dst + done * g.nx, x0 + c, g.nx, g.vec, part);
            g.finish.apply(part, probe);
            if constexpr (kStreamStores<T, R, F>) {
              if (g.vec && x0 + c + kTx <= g.nx) {
                store16_cs(dst + done * g.nx + x0 + c, part[0], part[1], part[2], part[3]);
                continue;
              }
            }
            store4(dst + done * g.nx, x0 + c, g.nx, g.vec, part);
          }
        }
      }
    }
    shift();
  };
  if constexpr (PF) {
    // DEPTH rows in flight: row s sits in pipe[(s - s0) % DEPTH], refilled with row s + DEPTH
    // as soon as it is in v. The loop runs DEPTH rows per trip, so every index is a constant
    // and no row is copied between registers.
    RowOf<T, NV> pipe[DEPTH];
#pragma unroll
    for (int k = 0; k < DEPTH; ++k)
      if (s0 + k < s1) fetch(pipe[k], s0 + k);
    for (std::int64_t s = s0; s < s1; s += DEPTH) {
#pragma unroll
      for (int k = 0; k < DEPTH; ++k) {
        if (s + k >= s1) break;
        const std::int64_t ahead = s + k + DEPTH;
        take_row(pipe, k, ahead < s1, v, [&](RowOf<T, NV>& w) { fetch(w, ahead); });
        step(s + k);
      }
    }
  } else if constexpr (TMA) {
    // Groups of box_rows rows, one copy each, through `slots` slots: group n (rows s0 + n *
    // box_rows ..) in slot n % slots, so slots - 1 copies are in flight while a group is read.
    // Rows past the chunk's last (s1) in the last group are copied and not read.
    extern __shared__ __align__(128) unsigned char tma_mem[];
    __shared__ std::uint64_t tma_bar[kWarpsPerBlock][16];
    const int warp = threadIdx.x >> 5;
    const int stride = TmaRingOf<T, W, RA>::slot_bytes(box_rows) / int(sizeof(T));
    const TmaRingOf<T, W, RA> tr{reinterpret_cast<T*>(tma_mem) + warp * slots * stride, tma_bar[warp],
                           &map, stride, box_rows};
    tr.init(slots, lane);
    const int xs = int(strip * (32 * TX)) - RA, bz = int(b), ys = int(s0);
    const int n_rows = int(s1 - s0), groups = (n_rows + box_rows - 1) / box_rows;
    for (int k = 0; k + 1 < slots && k < groups; ++k) tr.issue(lane, k, xs, ys + k * box_rows, 0, bz);
    int slot = 0, refill = slots - 1;
    std::uint32_t phase = 0;
    // WG: the lane's output row and how it stores there (its columns are the same for every row).
    T* orow = dst + y0 * g.nx + x0;
    const bool full = g.vec && x0 + kTx <= g.nx, edge = !full && x0 < g.nx;
    for (int n = 0; n < groups; ++n) {
      tr.wait(slot, phase);
      __syncwarp();  // every lane is done with the slot read last, which is refilled now
      if (n + slots - 1 < groups)
        tr.issue(lane, refill, xs, ys + (n + slots - 1) * box_rows, 0, bz);
      const int here = n_rows - n * box_rows < box_rows ? n_rows - n * box_rows : box_rows;
      if constexpr (WG) {
        // The first KY - 1 rows of the chunk only feed accumulators; every later one completes
        // the output row at `orow`. No per-row test of the row or the columns.
        static_assert(!SPLIT, "the Winograd columns run in one pass");
        int i = 0;
        for (; i < here && n * box_rows + i < KY - 1; ++i) {
          tr.read(slot, i, lane * TX, v);
          wg_fmas();
          shift();
        }
        for (; i < here; ++i) {
          tr.read(slot, i, lane * TX, v);
          wg_fmas();
          wg_store(orow, full, edge);
          orow += g.nx;
          shift();
        }
      } else {
        for (int i = 0; i < here; ++i) {
          tr.read(slot, i, lane * TX, v);
          step(s0 + n * box_rows + i);
        }
      }
      if (++slot == slots) slot = 0, phase ^= 1u;
      if (++refill == slots) refill = 0;
    }
  } else {
    if constexpr (RING) {
#pragma unroll
      for (int k = 0; k + 1 < kRingSlots; ++k) fill(s0 + k);
    }
    for (std::int64_t s = s0; s < s1; ++s) {
      if constexpr (RING) {
        ring.template wait<kRingSlots - 2>();
        __syncwarp();  // every lane's copies of row s landed; every lane done with slot s - 1
        fill(s + kRingSlots - 1);
        ring.read(int((s - s0) % kRingSlots), lane * TX, v);
      } else {
        RowOf<T, NV> row;
        fetch(row, s);
#pragma unroll
        for (int i = 0; i < NV; ++i) v[i] = row.v[i];
      }
      step(s);
    }
  }
  g.finish.note(probe);
}

// Where 8 columns per lane are compiled: under the TMA ring (r = 4..6) and the cp.async ring
// (r = 5, 6), f32 (wide_tma_compiled, wide_ring_compiled in fast/policy.hpp).
template <int R>
constexpr bool kWideTma = wide_tma_compiled(R);
template <int R>
constexpr bool kWideRing = wide_ring_compiled(R);

// The transformed weights of filter rows fy0 .. fy0 + KY - 1 (WinoCols), from the (2R+1)^2
// window in double, rounded once.
template <class T, int R, int KY>
Taps<T, KY * WinoCols<R>::kRowTaps> wino_taps(const double* window, int fy0) {
  using C = WinoCols<R>;
  constexpr int K = 2 * R + 1;
  Taps<T, KY * C::kRowTaps> t;
  for (int fy = 0; fy < KY; ++fy)
    for (int sg = 0; sg < C::S; ++sg) {
      double g[3];
      for (int i = 0; i < 3; ++i) {
        const int fx = C::F0 + 3 * sg + i, row = fy0 + fy;
        g[i] = fx >= 0 && fx < K && row < K ? window[row * K + fx] : 0.0;
      }
      T* w = &t.w[fy * C::kRowTaps + 4 * sg];
      w[0] = T(g[0]);
      w[1] = T((g[0] + g[1] + g[2]) / 2);
      w[2] = T((g[0] - g[1] + g[2]) / 2);
      w[3] = T(g[2]);
    }
  return t;
}

template <int R, int KY>
void check_launch(const Work& g, int fy0) {
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 2D (r=" + std::to_string(R) + ", rows " +
                                          std::to_string(fy0) + ".." +
                                          std::to_string(fy0 + KY - 1) + ", " +
                                          std::to_string(g.ny) + "x" + std::to_string(g.nx) +
                                          ", batch " + std::to_string(g.batch) + ")");
}

// One pass of KY filter rows from fy0, as the policy says: its feed, columns, depth and ring; the
// Winograd columns where it chose them (one pass only: `pass_wg` false for the passes of a split
// filter).
template <class T, int R, int KY>
void launch_pass(const T* in, T* out, const Work& g, const FastPolicy& pol,
                 const double* window, int fy0, bool accumulate, cudaStream_t stream,
                 bool pass_wg) {
  constexpr int K = 2 * R + 1;
  Taps<T, KY * K> taps;
  for (int i = 0; i < KY * K; ++i) {
    const int fy = fy0 + i / K;  // rows past the filter's end are zero (the last pass)
    taps.w[i] = fy < K ? T(window[fy * K + i % K]) : T(0);
  }
  const int D = R - fy0;
  constexpr bool kSplit = KY < 2 * R + 1;
  Work h = g;
  CUtensorMap map{};
  int slots = 1, box_rows = 1;
  // tp: the kernel's weights; tx: its columns per lane; smem: its dynamic shared memory (the TMA
  // ring).
  auto launch = [&](auto kernel, const auto& tp, int tx, std::size_t smem) {
    h.strips = (g.nx + 32 * tx - 1) / (32 * tx);
    // (resident_warps also sets the kernel's shared-memory limit to smem)
    fit_chunks(h, g.ny, h.strips * g.batch, R, resident_warps(kernel, smem, pol.multiprocessors),
               pol.chunk);
    h.items = h.strips * h.chunks * h.batch;
    const std::int64_t blocks = (h.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
    kernel<<<dim3(unsigned(blocks)), kThreads, smem, stream>>>(in, out, h, tp, D, accumulate,
                                                                map, slots, box_rows);
  };
  auto go = [&](auto kernel, int tx = kTx, std::size_t smem = 0) { launch(kernel, taps, tx, smem); };
  RowPath how = pol.path;
  const bool wg = kWinoCompiled<T, R, KY> && pass_wg && pol.winograd;
  if (how.feed == Feed::kTma) {
    slots = pol.slots;
    box_rows = pol.box_rows;
    // The kernel of TX columns per lane, where its tensor map can be made.
    auto tma = [&](auto tx) {
      constexpr int TX = decltype(tx)::value;
      using Ring = TmaRingOf<T, 32 * TX + 2 * round_up4(R), round_up4(R)>;
      if (!make_row_map(&map, in, int(sizeof(T)), g.nx, g.ny, 1, g.batch, Ring::kBoxW, box_rows,
                        pol.l2_promotion))
        return false;
      const std::size_t smem = std::size_t(kWarpsPerBlock) * slots * Ring::slot_bytes(box_rows);
      if constexpr (TX == kTx && kWinoCompiled<T, R, KY>) {
        if (wg) {
          launch(stream2d<T, R, KY, Feed::kTma, kSplit, 1, TX, true>,
                 wino_taps<T, R, KY>(window, fy0), TX, smem);
          return true;
        }
      }
      go(stream2d<T, R, KY, Feed::kTma, kSplit, 1, TX>, TX, smem);
      return true;
    };
    bool launched = false;
    if constexpr (std::is_same<T, float>::value && kWideTma<R>) {
      if (how.columns == 8) launched = tma(std::integral_constant<int, 8>{});
    }
    if (launched || tma(std::integral_constant<int, kTx>{})) return check_launch<R, KY>(g, fy0);
    how = pol.fallback;  // the tensor map could not be encoded after all
  }
  switch (how.feed) {
    case Feed::kRing:
      if constexpr (std::is_same<T, float>::value && kWideRing<R>) {
        if (how.columns == 8) {
          go(stream2d<T, R, KY, Feed::kRing, kSplit, 1, 8>, 8);
          break;
        }
      }
      go(stream2d<T, R, KY, Feed::kRing, kSplit>);
      break;
    case Feed::kPrefetch:
      if constexpr (std::is_same<T, float>::value && R >= 1 && R <= kTx) {
        if (how.depth == 4) {
          go(stream2d<T, R, KY, Feed::kPrefetch, kSplit, 4>);
          break;
        }
        if (how.depth == 3) {
          go(stream2d<T, R, KY, Feed::kPrefetch, kSplit, 3>);
          break;
        }
        if (how.depth == 2) {
          go(stream2d<T, R, KY, Feed::kPrefetch, kSplit, 2>);
          break;
        }
      }
      go(stream2d<T, R, KY, Feed::kPrefetch, kSplit>);
      break;
    case Feed::kDirect:
    case Feed::kTma:  // handled above
    case Feed::kBlock:
      go(stream2d<T, R, KY, Feed::kDirect, kSplit>);
      break;
  }
  check_launch<R, KY>(g, fy0);
}

// The filter in passes of KY rows. With EXACT, the last pass is compiled for the rows left
// (K - (passes - 1) * KY), not KY rows of which the last are zero: at r = 15 the 16 + 16 rows
// issued 32 * 31 FFMAs per input element for 31 * 31 taps (3% of the FFMAs on zero weights; at
// r = 12 with 16 + 16 rows for 25, 22%). Compiled for the default pass height only (every other
// height would double its kernels); the tuning heights keep a zero-padded last pass.
template <class T, int R, int KY, bool EXACT>
void run_passes(const T* in, T* out, const Work& g, const FastPolicy& pol,
                const double* window, cudaStream_t stream) {
  constexpr int K = 2 * R + 1;
  constexpr int KL = EXACT ? K - (K - 1) / KY * KY : KY;  // the last pass's rows
  // Only the last pass finishes the outputs (a box filter's division, the non-finite note):
  // the others' sums, NaN and infinities included, flow into its outputs.
  Work first = g;
  first.finish = Finish{};
  int fy0 = 0;
  for (; fy0 + KY < K; fy0 += KY)
    launch_pass<T, R, KY>(in, out, first, pol, window, fy0, fy0 > 0, stream, false);
  launch_pass<T, R, KL>(in, out, g, pol, window, fy0, fy0 > 0, stream, false);
}

template <class T, int R>
void run(const T* in, T* out, const Work& g, const FastPolicy& pol, const double* window,
         cudaStream_t stream) {
  constexpr int K = 2 * R + 1;
  const int rows = pol.pass_rows;
  if constexpr (K > 8) {
    if (rows == 8) return run_passes<T, R, 8, false>(in, out, g, pol, window, stream);
  }
  if constexpr (R >= 10 && std::is_same<T, float>::value) {  // as passes_compiled() says
    if (rows == 12) return run_passes<T, R, 12, false>(in, out, g, pol, window, stream);
    if (rows == 16)
      return run_passes<T, R, 16, 16 == kPassRows>(in, out, g, pol, window, stream);
  }
  launch_pass<T, R, K>(in, out, g, pol, window, 0, false, stream, true);
}

}  // namespace

// The compiled radii: HALO_FAST2D_RADII_F32 / _F64 in fast/policy.hpp.
template <>
bool launch_2d<float>(const float* in, float* out, const Work& g, const FastPolicy& pol,
                      const double* w, cudaStream_t s) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<float, R>(in, out, g, pol, w, s), true;
  HALO_FAST2D_RADII_F32(HALO_CASE)
#undef HALO_CASE
  return false;
}

template <>
bool launch_2d<double>(const double* in, double* out, const Work& g, const FastPolicy& pol,
                       const double* w, cudaStream_t s) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<double, R>(in, out, g, pol, w, s), true;
  HALO_FAST2D_RADII_F64(HALO_CASE)
#undef HALO_CASE
  return false;
}

namespace {
// A row path in words: the feed and its shape.
std::string named(const FastPolicy& pol, const RowPath& how) {
  return how.feed == Feed::kTma ? feed_name(how.feed, pol.slots, pol.box_rows, pol.box_copies)
         : how.feed == Feed::kPrefetch ? feed_name(how.feed, how.depth)
                                       : feed_name(how.feed);
}
}  // namespace

std::string plan_2d(const FastPolicy& pol, const FastPolicy& unaligned) {
  const int R = pol.radius, K = 2 * R + 1;
  const int rows = pol.pass_rows, passes = pol.passes, tx = pol.path.columns;
  std::string s = "a warp streams down a " + std::to_string(32 * tx) + "-column strip, " +
                  std::to_string(rows) + " output rows of " + std::to_string(tx) +
                  " columns per lane in registers";
  if (pol.winograd) {
    const int segs = wino_segments(R);
    s += " (Winograd F(2,3) along x: the lane's columns as 2 pairs, each filter row as " +
         std::to_string(segs) + " segments of 3 taps, so " + std::to_string(8 * segs) +
         " FFMAs per filter row and input row instead of " + std::to_string(4 * K) +
         "; the input transform shared by the " + std::to_string(K) + " filter rows)";
  }
  if (passes > 1) {
    const int last = pol.last_pass_rows;
    s += "; the filter in " + std::to_string(passes) + " passes of " + std::to_string(rows) +
         " rows" + (last != rows ? " (the last " + std::to_string(last) + ")" : "") +
         ", each after the first adding to the output";
  }
  s += "; " + named(pol, pol.path);
  const RowPath& u = unaligned.path;
  if (u.feed != pol.path.feed)
    s += " (where the rows are not 16-byte aligned or their pitch is not a multiple of 16 "
         "bytes: " + named(unaligned, u) +
         (u.columns != kTx ? ", " + std::to_string(u.columns) + " columns per lane" : "") + ")";
  return s;
}

}  // namespace halo::cuda::fast
