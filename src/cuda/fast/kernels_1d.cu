/* strategy: fast, 1D — register-blocked segments: three layouts fed from global memory, and two
 * block-wide shared-memory tiles (the block ring, tile1d, and the padded tile, padded1d, below)
 * that run where the rows are 16-byte aligned.
 *
 * Small halos (r <= 8, memory-bound on an H100): a warp owns 128 consecutive outputs, 4 per lane,
 * like one row of the 2D kernel: each lane loads the 4 + 2*RA inputs its outputs need
 * (RA = r rounded up to 4) as 16-byte loads that are contiguous across the warp (the halo is the
 * neighbours' centre, an L1 hit), and stores one 16-byte group. Warps stride over the segments and
 * issue the next segment's loads before this one's FFMAs, so loads stay in flight.
 * Larger halos (r > 8), inputs held: a lane owns 8 consecutive outputs, so each input it loads
 * feeds up to 8 FFMAs from registers (8 * (2r+1) FFMAs per 8 + 2*RA loaded values); the lanes'
 * loads overlap and are served by L1. (The strip layout measured slower there, and 16 outputs per
 * lane too, all 16 + 2*RA inputs held.) Every load is issued before the first FFMA, and at r = 64
 * the 136 inputs take 158 registers.
 * Larger halos, inputs streamed (f32, r >= 24, where it measured faster): a lane owns 16 (or, for
 * tuning, 32) consecutive outputs and walks over its 16 + 2*RA inputs one 16-byte group at a
 * time, each group's FFMAs right after its load, so registers hold the accumulators and the
 * groups in flight (56 registers at r = 64) and each input feeds up to 16 FFMAs.
 * Which threads compute: all; in these three layouts no shared memory and no barriers (the
 * block tiles below say theirs); the weights are kernel parameters,
 * each tap one FFMA with its weight at a fixed constant-bank offset (nvcc 13 stages them through
 * uniform registers, ULDC.64). DRAM intensity: (2r+1) * 2 OP over 8 B.
 */
#include <type_traits>
#include <utility>

#include "cuda/check.cuh"
#include "cuda/fast/kernels.cuh"

namespace halo::cuda::fast {
namespace {

// kStripMaxR (above it the 8-outputs-per-lane layout) and kTxWide (its outputs per lane) are in
// fast/policy.hpp, with the other shapes the policy chooses from.

// Blocks per multiprocessor that strip1d's registers must allow (its launch bound): those its
// count allowed while it noted per item. The probe held across the item loop took some radii
// past a multiple of 8 registers (f32 r = 0, 2, 3, 4, 6; f64 r = 2, 3), a block fewer.
template <class T>
constexpr int strip_min_blocks(int R) {
  constexpr int f32[] = {16, 12, 12, 12, 10, 9, 9, 8, 8};
  constexpr int f64[] = {12, 10, 9, 8, 7, 6, 5, 5, 4};
  return R < 0 || R > kStripMaxR ? 1 : sizeof(T) == 4 ? f32[R] : f64[R];
}

template <class T, int R>
__global__ void __launch_bounds__(kThreads, strip_min_blocks<T>(R))
    strip1d(const T* __restrict__ in, T* __restrict__ out, Work g, Taps<T, 2 * R + 1> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTx + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  std::int64_t item = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  // item = b * strips + strip; lane's outputs x0 .. x0+3 of item b.
  auto fetch = [&](T(&v)[NV], std::int64_t it) {
    if (it < g.items) {
      const std::int64_t b = it / g.strips;
      const std::int64_t x0 = (it % g.strips) * (32 * kTx) + lane * kTx;
      load_row(v, in + b * g.nx, x0 - RA, g.nx, g.vec);
    }
  };
  T v[NV];
  fetch(v, item);
  T probe = T(0);  // every output the lane stores, noted once at the end (Finish)
  for (; item < g.items; item += warps) {
    T next[NV];
    fetch(next, item + warps);
    T acc[kTx];
#pragma unroll
    for (int j = 0; j < kTx; ++j) acc[j] = T(0);
#pragma unroll
    for (int fx = 0; fx < K; ++fx) {
      const T w = taps.w[fx];
#pragma unroll
      for (int j = 0; j < kTx; ++j) acc[j] = fma(w, v[j + fx + RA - R], acc[j]);
    }
    const std::int64_t b = item / g.strips;
    const std::int64_t x0 = (item % g.strips) * (32 * kTx) + lane * kTx;
    if (x0 < g.nx) {
      g.finish.apply(acc, probe);
      store4(out + b * g.nx, x0, g.nx, g.vec, acc);
    }
#pragma unroll
    for (int i = 0; i < NV; ++i) v[i] = next[i];
  }
  g.finish.note(probe);
}

// DEPTH items in flight per warp: 0 (loaded as needed) or 1. Deeper measured slower
// (docs/notes/tuning.md, 1D: the held and streamed layouts): each item in flight costs 8 + 2*RA
// registers, and the warps lost cost more than the depth gains.
template <class T, int R, int DEPTH>
__global__ void __launch_bounds__(kThreads)
    wide1d(const T* __restrict__ in, T* __restrict__ out, Work g, Taps<T, 2 * R + 1> taps) {
  constexpr int K = 2 * R + 1;
  constexpr int RA = round_up4(R);
  constexpr int NV = kTxWide + 2 * RA;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  // item = b * strips + strip; lane's outputs x0 .. x0+7 of item b. With DEPTH = 1, the inputs
  // of the warp's next item are in flight while this item's FFMAs run.
  auto fetch = [&](RowOf<T, NV>& w, std::int64_t it) {
    if (it < g.items) {
      const std::int64_t b = it / g.strips;
      const std::int64_t x0 = (it % g.strips) * (32 * kTxWide) + lane * kTxWide;
      load_row(w.v, in + b * g.nx, x0 - RA, g.nx, g.vec);
    }
  };
  T probe = T(0);  // every output the lane stores, noted once at the end (Finish)
  auto compute = [&](const T(&v)[NV], std::int64_t it) {
    const std::int64_t b = it / g.strips;
    const std::int64_t x0 = (it % g.strips) * (32 * kTxWide) + lane * kTxWide;
    T acc[kTxWide];
#pragma unroll
    for (int j = 0; j < kTxWide; ++j) acc[j] = T(0);
#pragma unroll
    for (int fx = 0; fx < K; ++fx) {
      const T w = taps.w[fx];
#pragma unroll
      for (int j = 0; j < kTxWide; ++j) acc[j] = fma(w, v[j + fx + RA - R], acc[j]);
    }
    if (x0 < g.nx) g.finish.apply(acc, probe);
#pragma unroll
    for (int q = 0; q < kTxWide / kTx; ++q) {
      const std::int64_t x = x0 + q * kTx;
      const T part[kTx] = {acc[q * kTx], acc[q * kTx + 1], acc[q * kTx + 2], acc[q * kTx + 3]};
      if (x < g.nx) store4(out + b * g.nx, x, g.nx, g.vec, part);
    }
  };
  const std::int64_t first = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  T v[NV];
  if constexpr (DEPTH == 0) {
    for (std::int64_t item = first; item < g.items; item += warps) {
      RowOf<T, NV> row;
      fetch(row, item);
#pragma unroll
      for (int i = 0; i < NV; ++i) v[i] = row.v[i];
      compute(v, item);
    }
  } else {
    RowOf<T, NV> pipe[DEPTH];  // pipe[k]: item first + (n * DEPTH + k) * warps, n the trip
#pragma unroll
    for (int k = 0; k < DEPTH; ++k) fetch(pipe[k], first + k * warps);
    for (std::int64_t item = first; item < g.items; item += DEPTH * warps) {
#pragma unroll
      for (int k = 0; k < DEPTH; ++k) {
        const std::int64_t it = item + k * warps;
        if (it >= g.items) break;
        const std::int64_t ahead = it + DEPTH * warps;
        take_row(pipe, k, ahead < g.items, v, [&](RowOf<T, NV>& w) { fetch(w, ahead); });
        compute(v, it);
      }
    }
  }
  g.finish.note(probe);
}

// The streaming wide layout (f32): a lane owns TXS consecutive outputs and walks over its
// TXS + 2*RA inputs one 16-byte group at a time, each group's FFMAs right after its load, so only
// the TXS accumulators and the groups in flight live in registers (the held layout above keeps
// all 8 + 2*RA inputs, 158 registers at r = 64, and issues every load before the first FFMA).
// Input i of the lane's window (x0 - RA + i) meets output j (x0 + j) at tap i - j + R - RA. The
// groups are unrolled by a template (for_each_index), the four inputs and the outputs of a group
// by #pragma unroll, so every tap outside [0, 2R] is dropped at compile time and every tap is one
// FFMA with its weight at a fixed offset of the kernel parameters. (#pragma unroll on the groups
// too gave up at 32 outputs and r >= 48, leaving runtime tap tests and weights loaded by index;
// unrolling the inputs and outputs by templates as well tripled the compile time.) The sums run
// in the same order as wide1d's (taps ascending), so the two layouts give the same bits.

// acc[j] += w[i + R - RA - j] * v[i - I] for the inputs i = I .. I+N-1 of the lane's window and
// every output j whose tap lies in [0, 2R]. I is a template argument, so once the loops are
// unrolled every tap index is a constant and the taps outside the window are dropped.
template <int R, int I, int N, int TXS>
__device__ __forceinline__ void feed(float (&acc)[TXS], const Taps<float, 2 * R + 1>& taps,
                                     const float (&v)[N]) {
#pragma unroll
  for (int e = 0; e < N; ++e)
#pragma unroll
    for (int j = 0; j < TXS; ++j) {
      const int f = I + e + R - round_up4(R) - j;
      if (f >= 0 && f <= 2 * R) acc[j] = fma(taps.w[f], v[e], acc[j]);
    }
}

// Stores a lane's TXS consecutive outputs, from x0 on, into the row dst: 16-byte stores where all
// lie inside an aligned row (st.global.cs, evict-first, with STREAM), else per group of four
// the element-wise store4 for the groups that start inside the row. A box filter's division
// before, the outputs added to the lane's probe after (Work::finish; the caller notes it).
template <int TXS>
__device__ __forceinline__ void store_outputs(float* __restrict__ dst, std::int64_t x0,
                                              const Work& g, float (&acc)[TXS], bool stream,
                                              float& probe) {
  g.finish.divide(acc);
  const bool inside = g.vec && x0 + TXS <= g.nx;
  if (inside && stream) {
#pragma unroll
    for (int q = 0; q < TXS / kTx; ++q)
      store16_cs(dst + x0 + q * kTx, acc[q * kTx], acc[q * kTx + 1], acc[q * kTx + 2],
                 acc[q * kTx + 3]);
  } else if (inside) {
#pragma unroll
    for (int q = 0; q < TXS / kTx; ++q)
      store16(dst + x0 + q * kTx, acc[q * kTx], acc[q * kTx + 1], acc[q * kTx + 2],
              acc[q * kTx + 3]);
  } else {
#pragma unroll
    for (int q = 0; q < TXS / kTx; ++q) {
      const std::int64_t xq = x0 + q * kTx;
      const float part[kTx] = {acc[q * kTx], acc[q * kTx + 1], acc[q * kTx + 2],
                               acc[q * kTx + 3]};
      if (xq < g.nx) store4(dst, xq, g.nx, g.vec, part);
    }
  }
  g.finish.probe_all(acc, probe);
}

// One branch per item, as in load_row: a window inside the row of an aligned row (`vec`) streams
// 16-byte loads; a window that crosses the row's edges, or any window of an unaligned row, streams
// four predicated scalar loads per group with zeros outside [0, nx). (A choice per group let the
// compiler if-convert both paths, so every group paid the scalar path's compares and loads.)
// Lanes whose outputs all lie past the row's end skip the item. With PF > 0, the first PF groups
// of the warp's next item are loaded before this item's FFMAs (where that window takes the
// 16-byte path), so an item does not start on a full memory latency; they cost 4 * PF registers.
template <int R, int TXS, int PF>
__global__ void __launch_bounds__(kThreads)
    stream1d(const float* __restrict__ in, float* __restrict__ out, Work g,
             Taps<float, 2 * R + 1> taps) {
  static_assert(TXS % kTx == 0, "a lane stores whole 16-byte groups");
  constexpr int RA = round_up4(R);
  constexpr int NV = TXS + 2 * RA;  // the lane's window
  constexpr int NG = NV / kTx;      // its 16-byte groups
  static_assert(PF >= 0 && PF <= NG, "prefetch at most the whole window");
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * kWarpsPerBlock;
  // item = b * strips + strip; lane's outputs x0 .. x0+TXS-1 of item b, its window x .. x+NV-1.
  struct Window {
    std::int64_t b, x0, x;
    bool fast;  // inside the row, and the row aligned: 16-byte loads
  };
  auto window = [&](std::int64_t it) {
    Window w;
    w.b = it / g.strips;
    w.x0 = (it % g.strips) * (32 * TXS) + lane * TXS;
    w.x = w.x0 - RA;
    w.fast = g.vec && w.x >= 0 && w.x + NV <= g.nx;
    return w;
  };
  float4 ahead[PF > 0 ? PF : 1] = {};  // the next item's first groups (if its window is fast)
  auto prefetch = [&](const Window& w) {
    if constexpr (PF > 0) {
      if (w.fast) {
        const float4* src = reinterpret_cast<const float4*>(in + w.b * g.nx + w.x);
#pragma unroll
        for (int c = 0; c < PF; ++c) ahead[c] = __ldg(src + c);
      }
    }
  };
  std::int64_t item = std::int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (item >= g.items) return;
  Window w = window(item);
  prefetch(w);
  float probe = 0.f;  // every output the lane stores, noted once at the end (Finish)
  for (;;) {
    float4 head[PF > 0 ? PF : 1];
#pragma unroll
    for (int c = 0; c < PF; ++c) head[c] = ahead[c];
    const std::int64_t next = item + warps;
    Window nw{};
    if constexpr (PF > 0) {
      if (next < g.items) {
        nw = window(next);
        prefetch(nw);
      }
    }
    if (w.x0 < g.nx) {
      const float* row = in + w.b * g.nx;
      float acc[TXS];
#pragma unroll
      for (int j = 0; j < TXS; ++j) acc[j] = 0.f;
      if (w.fast) {
        const float4* src = reinterpret_cast<const float4*>(row + w.x);
        for_each_index<NG>([&](auto c) {
          constexpr int k = decltype(c)::value;
          float4 q;
          if constexpr (k < PF)
            q = head[k];
          else
            q = __ldg(src + k);
          const float v[kTx] = {q.x, q.y, q.z, q.w};
          feed<R, kTx * k>(acc, taps, v);
        });
      } else {
        // Input i is inside the row iff lo <= i < hi (32-bit compares against constants).
        const std::int64_t x = w.x;
        const int lo = x < 0 ? int(-x < NV ? -x : NV) : 0;
        const int hi = g.nx - x < NV ? int(g.nx - x) : NV;
        for_each_index<NG>([&](auto c) {
          constexpr int k = decltype(c)::value;
          float v[kTx];
#pragma unroll
          for (int e = 0; e < kTx; ++e) {
            const int i = kTx * k + e;
            v[e] = i >= lo && i < hi ? __ldg(row + (x + i)) : 0.f;
          }
          feed<R, kTx * k>(acc, taps, v);
        });
      }
      store_outputs(out + w.b * g.nx, w.x0, g, acc, false, probe);
    }
    if (next >= g.items) break;
    item = next;
    w = PF > 0 ? nw : window(item);
  }
  g.finish.note(probe);
}

// The block ring layout (f32, rows of a 16-byte pitch on sm_90): a block of kTileWarps1 warps
// strides over tiles of 256 * TXS outputs; each tile's inputs (the tile and its 2*RA halo) come
// into a BlockRing slot in one bulk copy, so the slots - 1 tiles in flight cost no registers and
// the DRAM stream does not wait on the warps' register budget. A lane owns TXS consecutive
// outputs and streams its TXS + 2*RA inputs from the slot in 16-byte groups through feed(), as
// stream1d does from global memory (the same sums in the same order). The copy is clipped to the
// row; in a tile at either end of a row the inputs outside it are replaced by zeros as they are
// read (the slot's bytes there are stale).
constexpr int kTileWarps1 = 8;
// Blocks per multiprocessor that the registers of the 8-outputs layout must allow: the 6 that
// 4 slots of shared memory allow (40 registers). Without the bound, the non-finite note's code
// took it to 48 at r = 24, 32 (5 blocks); 0: no bound (16 outputs per lane).
constexpr int tile_min_blocks_1d(int txs) { return txs == 8 ? 6 : 0; }

template <int R, int TXS>
__global__ void __launch_bounds__(32 * kTileWarps1, tile_min_blocks_1d(TXS))
    tile1d(const float* __restrict__ in, float* __restrict__ out, Work g,
           Taps<float, 2 * R + 1> taps, int slots, int hints) {
  constexpr int RA = round_up4(R);
  constexpr int NV = TXS + 2 * RA;  // the lane's window
  constexpr int NG = NV / kTx;      // its 16-byte groups
  constexpr int TILE = 32 * kTileWarps1 * TXS;
  constexpr int W = TILE + 2 * RA;  // a slot: the tile's inputs
  const int lane = threadIdx.x & 31;
  const int at = (threadIdx.x >> 5) * 32 * TXS + lane * TXS;  // the lane's first output in a tile

  extern __shared__ __align__(128) unsigned char ring_mem[];
  __shared__ std::uint64_t ring_bar[2][kBlockRingSlots];
  const BlockRing ring{ring_mem, ring_bar[0], ring_bar[1], slot_size(W * int(sizeof(float))),
                       slots};
  if (threadIdx.x == 0) ring.template init<kTileWarps1>();
  __syncthreads();

  // item = b * strips + strip: tile `strip` of row b, inputs x - RA .. x + TILE + RA - 1.
  BlockRing::Cursor put, get;
  std::int64_t next = blockIdx.x;  // the producer's next item
  auto produce = [&] {             // thread 0: that item's inputs into the next slot
    ring.acquire(put);
    const std::int64_t b = next / g.strips, x = (next % g.strips) * TILE - RA;
    const std::int64_t lo = x > 0 ? x : 0, hi = x + W < g.nx ? x + W : g.nx;
    ring.issue_bytes(put, int(lo - x) * int(sizeof(float)), in + b * g.nx + lo,
                     int(hi - lo) * int(sizeof(float)), hints & 1);
    put.next(slots);
    next += gridDim.x;
  };
  if (threadIdx.x == 0)
    for (int k = 0; k + 1 < slots && next < g.items; ++k) produce();

  float probe = 0.f;  // every output the lane stores, noted once at the end (Finish)
  for (std::int64_t item = blockIdx.x; item < g.items; item += gridDim.x) {
    if (threadIdx.x == 0 && next < g.items) produce();  // slots - 1 tiles ahead
    const std::int64_t b = item / g.strips, x = (item % g.strips) * TILE;
    const std::int64_t x0 = x + at;
    float acc[TXS];
#pragma unroll
    for (int j = 0; j < TXS; ++j) acc[j] = 0.f;
    ring.wait(get);
    const float4* win = reinterpret_cast<const float4*>(ring.at<float>(get) + at);
    if (x >= RA && x + TILE + RA <= g.nx) {  // the whole tile's window inside the row
      for_each_index<NG>([&](auto c) {
        constexpr int k = decltype(c)::value;
        const float4 q = win[k];
        const float v[kTx] = {q.x, q.y, q.z, q.w};
        feed<R, kTx * k>(acc, taps, v);
      });
    } else {
      // Input i of the lane's window (x0 - RA + i) is inside the row iff lo <= i < hi.
      const std::int64_t wx = x0 - RA;
      const int lo = wx < 0 ? int(-wx < NV ? -wx : NV) : 0;
      const int hi = g.nx - wx < NV ? int(g.nx - wx > 0 ? g.nx - wx : 0) : NV;
      for_each_index<NG>([&](auto c) {
        constexpr int k = decltype(c)::value;
        const float4 q = win[k];
        const float e[kTx] = {q.x, q.y, q.z, q.w};
        float v[kTx];
#pragma unroll
        for (int j = 0; j < kTx; ++j) v[j] = kTx * k + j >= lo && kTx * k + j < hi ? e[j] : 0.f;
        feed<R, kTx * k>(acc, taps, v);
      });
    }
    ring.release(get, lane);
    get.next(slots);
    store_outputs(out + b * g.nx, x0, g, acc, hints & 2, probe);
  }
  g.finish.note(probe);
}

// The padded block tile (f32, FFMA-bound radii): stream1d's lanes, 16 consecutive outputs each,
// read their windows from shared memory instead of global memory. Reading from global memory, a
// warp's 16-byte load has lanes 64 bytes apart, so it touches 16 cache lines for 512 bytes: L1,
// not the FFMAs, set the pace (ncu at r = 64: docs/notes/tuning.md, 1D: the padded tile). Here a
// block of kPadWarps1 warps strides over tiles of 4096 outputs; every thread copies a few 16-byte
// chunks of the tile's inputs (the tile and its 2*RA halo) into a slot with cp.async, and the slot
// keeps chunk c at c + c/4, one 16-byte pad per 64 bytes. A lane's group k (chunk 4 * lane' + k of
// the tile, lane' its lane in the block) then sits at 5 * lane' + k + k/4: the offset is a constant
// for each k, and the 8 lanes of a quarter warp hit 8 different 16-byte bank groups (5 * lane
// mod 8 is a permutation), so a warp's read takes 4 shared-memory wavefronts, the minimum. The
// bulk copy of the block ring (tile1d) cannot pad, and read unpadded the same layout has 4-way
// bank conflicts. Chunks outside the row are zero-filled by the copies (the rows are 16-byte
// aligned and nx % 4 == 0: g.vec), so the reads need no edge tests. Slot t % slots holds tile t
// of the block's stride; each tile's copies are one cp.async group, and one block barrier per
// tile both publishes the copies and frees the slot read before, which is refilled next.
// A block's place in the tiles item = b * strips + s (row b, tile s of it) as it strides over
// them `step` at a time: advanced by additions, not a 64-bit division per tile.
struct TileWalk {
  std::int64_t item, b, s;
  std::int64_t db, ds, strips;
  __device__ __forceinline__ TileWalk(std::int64_t first, std::int64_t step, std::int64_t n)
      : item(first), b(first / n), s(first % n), db(step / n), ds(step % n), strips(n) {}
  __device__ __forceinline__ void next() {
    item += db * strips + ds;
    b += db;
    s += ds;
    if (s >= strips) s -= strips, ++b;
  }
};

constexpr int kPadWarps1 = 8;  // (kPadTx and kPadMaxSlots: fast/policy.hpp)
// 16-byte chunks in the padded slot of a tile of radius R.
__host__ __device__ constexpr int padded_chunks(int R) {
  return (32 * kPadWarps1 * kPadTx + 2 * round_up4(R)) / 4 * 5 / 4 + 1;
}

template <int R>
__global__ void __launch_bounds__(32 * kPadWarps1)
    padded1d(const float* __restrict__ in, float* __restrict__ out, Work g,
             Taps<float, 2 * R + 1> taps, int slots, int hints) {
  constexpr int RA = round_up4(R);
  constexpr int TXS = kPadTx;
  constexpr int NG = (TXS + 2 * RA) / kTx;  // a lane's 16-byte groups
  constexpr int THREADS = 32 * kPadWarps1;
  constexpr int TILE = THREADS * TXS;
  constexpr int CH = (TILE + 2 * RA) / 4;  // a tile's input chunks
  constexpr int PASSES = (CH + THREADS - 1) / THREADS;
  constexpr int SLOT = padded_chunks(R);
  static_assert(THREADS % 4 == 0, "chunk c + THREADS * i pads to c + c/4 + THREADS * i * 5/4");
  const int t = threadIdx.x;
  extern __shared__ __align__(16) float4 pad_mem[];
  // The thread's copies: chunks t + THREADS * i, padded to p + (THREADS * 5 / 4) * i.
  const int p = t + t / 4;
  __builtin_assume(t < THREADS);  // so the copies' tests against CH fold where they cannot fail
  auto fill = [&](int slot, const TileWalk& w) {
    if (w.item < g.items) {
      const std::int64_t x = w.s * TILE - RA;
      const float* row = in + w.b * g.nx;
      float* dst = reinterpret_cast<float*>(pad_mem + slot * SLOT + p);
      if (x >= 0 && x + 4 * CH <= g.nx) {  // every chunk inside the row
        const float* src = row + x + 4 * t;
#pragma unroll
        for (int i = 0; i < PASSES; ++i)
          if (CH % THREADS == 0 || t + THREADS * i < CH)
            copy_async<16>(dst + 4 * (THREADS * 5 / 4) * i, src + 4 * THREADS * i, true);
      } else {
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
          const std::int64_t cx = x + 4 * (t + THREADS * i);
          const bool inside = cx >= 0 && cx + 4 <= g.nx;
          if (CH % THREADS == 0 || t + THREADS * i < CH)
            copy_async<16>(dst + 4 * (THREADS * 5 / 4) * i, inside ? row + cx : row, inside);
        }
      }
    }
    commit_async();  // one group per tile, empty past the last
  };
  TileWalk ahead(blockIdx.x, gridDim.x, g.strips);  // the next tile to fill
  for (int k = 0; k + 1 < slots; ++k, ahead.next()) fill(k, ahead);
  int slot = 0, refill = slots - 1;
  // The lane's window: its outputs start at tile offset TXS * t, its inputs at chunk 4 * t.
  const int at = 5 * t;
  float probe = 0.f;  // every output the thread stores, noted once at the end (Finish)
  for (TileWalk tile(blockIdx.x, gridDim.x, g.strips); tile.item < g.items; tile.next()) {
    // This tile's group has landed once at most slots - 2 younger ones are in flight.
    if (slots == 2)
      wait_async<0>();
    else if (slots == 3)
      wait_async<1>();
    else
      wait_async<kPadMaxSlots - 2>();
    __syncthreads();  // every thread's copies of this tile landed; the last slot is free
    fill(refill, ahead);
    ahead.next();
    const std::int64_t x0 = tile.s * TILE + TXS * t;
    float acc[TXS];
#pragma unroll
    for (int j = 0; j < TXS; ++j) acc[j] = 0.f;
    const float4* win = pad_mem + slot * SLOT + at;
    for_each_index<NG>([&](auto c) {
      constexpr int k = decltype(c)::value;
      const float4 q = win[k + k / 4];
      const float v[kTx] = {q.x, q.y, q.z, q.w};
      feed<R, kTx * k>(acc, taps, v);
    });
    if (++slot == slots) slot = 0;
    if (++refill == slots) refill = 0;
    store_outputs(out + tile.b * g.nx, x0, g, acc, hints & 2, probe);
  }
  g.finish.note(probe);
}

// The layouts the policy may choose beyond the default kernel of a radius: the held layout's
// next-item prefetch (f32 up to kWidePfLimit: it costs NV more registers; f64 twice that), the
// streamed layout's first kStreamPf groups ahead, the block ring at tile_compiled_1d() radii
// (16 outputs per lane from r = 12) and the padded tile at pad_compiled_1d() radii.
template <class T, int R>
constexpr bool kWidePf = sizeof(T) == 4 && R <= kWidePfLimit;
template <int R>
constexpr bool kStreamPfCompiled = R <= kWidePfLimit;
template <int R>
constexpr bool kTileCompiled = tile_compiled_1d(R);
template <int R>
constexpr bool kTile16Compiled = kTileCompiled<R> && R >= 12;
template <int R>
constexpr bool kPadCompiled = pad_compiled_1d(R);

// Runs tile1d (the policy chose it: rows of a 16-byte pitch and alignment, sm_90).
template <int R>
void launch_tile(const float* in, float* out, Work g, const Taps<float, 2 * R + 1>& taps,
                 const FastPolicy& pol, cudaStream_t stream) {
  const int slots = pol.slots;
  auto go = [&](auto kernel, int txs) {
    const std::int64_t tile = 32 * kTileWarps1 * txs;
    g.strips = (g.nx + tile - 1) / tile;
    g.items = g.strips * g.batch;
    const std::size_t smem =
        std::size_t(slots) * slot_size(int(tile + 2 * round_up4(R)) * int(sizeof(float)));
    const std::int64_t fit = resident_blocks(kernel, 32 * kTileWarps1, smem, pol.multiprocessors);
    const std::int64_t blocks = g.items < fit ? g.items : fit;
    kernel<<<dim3(unsigned(blocks)), 32 * kTileWarps1, smem, stream>>>(in, out, g, taps, slots,
                                                                        pol.hints);
  };
  if constexpr (kTile16Compiled<R>) {
    if (pol.outputs_per_lane == 16) return go(tile1d<R, 16>, 16);
  }
  go(tile1d<R, kTxWide>, kTxWide);
}

// Runs padded1d (the policy chose it: rows of a 16-byte pitch and alignment).
template <int R>
void launch_padded(const float* in, float* out, Work g, const Taps<float, 2 * R + 1>& taps,
                   const FastPolicy& pol, cudaStream_t stream) {
  const int slots = pol.slots;
  const std::int64_t tile = 32 * kPadWarps1 * kPadTx;
  g.strips = (g.nx + tile - 1) / tile;
  g.items = g.strips * g.batch;
  const std::size_t smem = std::size_t(slots) * padded_chunks(R) * 16;
  const std::int64_t fit =
      resident_blocks(padded1d<R>, 32 * kPadWarps1, smem, pol.multiprocessors);
  const std::int64_t blocks = g.items < fit ? g.items : fit;
  padded1d<R><<<dim3(unsigned(blocks)), 32 * kPadWarps1, smem, stream>>>(in, out, g, taps, slots,
                                                                         pol.hints);
}

template <class T, int R>
void run(const T* in, T* out, Work g, const FastPolicy& pol, const double* window,
         cudaStream_t stream) {
  Taps<T, 2 * R + 1> taps;
  for (int i = 0; i < 2 * R + 1; ++i) taps.w[i] = T(window[i]);
  if constexpr (std::is_same_v<T, float> && kPadCompiled<R>) {
    if (pol.layout == Layout1D::padded_tile) {
      launch_padded<R>(in, out, g, taps, pol, stream);
      HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 1D (padded block tile, r=" +
                                              std::to_string(R) + ", n " + std::to_string(g.nx) +
                                              ", batch " + std::to_string(g.batch) + ")");
      return;
    }
  }
  if constexpr (std::is_same_v<T, float> && kTileCompiled<R>) {
    if (pol.layout == Layout1D::block_tile) {
      launch_tile<R>(in, out, g, taps, pol, stream);
      HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 1D (block ring, r=" +
                                              std::to_string(R) + ", n " + std::to_string(g.nx) +
                                              ", batch " + std::to_string(g.batch) + ")");
      return;
    }
  }
  constexpr bool strip = R <= kStripMaxR;
  const int tx = strip ? kTx : pol.outputs_per_lane;
  const std::int64_t width = 32 * tx;  // outputs per warp item
  g.strips = (g.nx + width - 1) / width;
  g.items = g.strips * g.batch;
  // One wave of resident warps (or fewer, for a short signal); the warps stride over the rest.
  auto go = [&](auto kernel) {
    const std::int64_t need = (g.items + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const std::int64_t fit = resident_warps(kernel, 0, pol.multiprocessors) / kWarpsPerBlock;
    const std::int64_t blocks = need < fit ? need : fit;
    kernel<<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(in, out, g, taps);
  };
  if constexpr (strip) {
    go(strip1d<T, R>);
  } else if constexpr (std::is_same_v<T, float>) {
    if (tx == 16 && kStreamPfCompiled<R> && pol.prefetch) {
      go(stream1d<R, 16, kStreamPfCompiled<R> ? kStreamPf : 0>);
    } else if (tx == 16) {
      go(stream1d<R, 16, 0>);
    } else if (tx == 32) {
      go(stream1d<R, 32, 0>);
    } else if (kWidePf<T, R> && pol.prefetch) {
      go(wide1d<T, R, kWidePf<T, R> ? 1 : 0>);
    } else {
      go(wide1d<T, R, 0>);
    }
  } else {
    go(wide1d<T, R, 0>);
  }
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fast 1D (r=" + std::to_string(R) + ", n " +
                                          std::to_string(g.nx) + ", batch " +
                                          std::to_string(g.batch) + ")");
}

}  // namespace

// The compiled radii: HALO_FAST1D_RADII_F32 / _F64 in fast/policy.hpp.
template <>
bool launch_1d<float>(const float* in, float* out, const Work& g, const FastPolicy& pol,
                      const double* w, cudaStream_t s) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<float, R>(in, out, g, pol, w, s), true;
  HALO_FAST1D_RADII_F32(HALO_CASE)
#undef HALO_CASE
  return false;
}

template <>
bool launch_1d<double>(const double* in, double* out, const Work& g, const FastPolicy& pol,
                       const double* w, cudaStream_t s) {
#define HALO_CASE(R) \
  if (pol.radius == R) return run<double, R>(in, out, g, pol, w, s), true;
  HALO_FAST1D_RADII_F64(HALO_CASE)
#undef HALO_CASE
  return false;
}

namespace {
// The plan of the layouts that take their inputs through registers.
std::string plan_1d_registers(const FastPolicy& pol) {
  const int R = pol.radius, tx = pol.outputs_per_lane;
  if (pol.layout == Layout1D::strip)
    return "a warp computes 128 consecutive outputs (4 per lane, 16-byte loads), striding over "
           "the signal with the next segment's loads issued first";
  if (pol.layout == Layout1D::streamed)
    return "a lane computes " + std::to_string(tx) + " consecutive outputs, streaming its " +
           std::to_string(tx + 2 * round_up4(R)) + " inputs through registers in 16-byte " +
           "groups; next-segment prefetch " +
           (pol.prefetch ? "of " + std::to_string(kStreamPf) + " groups on" : "off");
  return "a lane computes " + std::to_string(kTxWide) + " consecutive outputs from " +
         std::to_string(kTxWide + 2 * round_up4(R)) + " inputs held in registers; next-segment " +
         "prefetch " + (pol.prefetch ? "on" : "off");
}

// Where the arrays' alignment changes the layout: what runs on arrays that are not aligned.
std::string unaligned_note(const FastPolicy& pol, const FastPolicy& unaligned) {
  return unaligned.layout != pol.layout
             ? " (rows not 16-byte aligned: " + plan_1d_registers(unaligned) + ")"
             : "";
}
}  // namespace

std::string plan_1d(const FastPolicy& pol, const FastPolicy& unaligned) {
  const int R = pol.radius, tx = pol.outputs_per_lane;
  if (pol.layout == Layout1D::padded_tile) {
    return "a block of " + std::to_string(kPadWarps1) + " warps strides over tiles of " +
           std::to_string(32 * kPadWarps1 * kPadTx) + " outputs, a lane computing " +
           std::to_string(kPadTx) + " consecutive ones from its " +
           std::to_string(kPadTx + 2 * round_up4(R)) + " inputs read in 16-byte groups from a " +
           "padded shared-memory slot (16 bytes of pad per 64: no bank conflicts), " +
           std::to_string(pol.slots) + " slots filled by every thread with cp.async" +
           unaligned_note(pol, unaligned);
  }
  if (pol.layout == Layout1D::block_tile) {
    return "a block of " + std::to_string(kTileWarps1) + " warps strides over tiles of " +
           std::to_string(32 * kTileWarps1 * tx) + " outputs, a lane computing " +
           std::to_string(tx) + " consecutive ones from its " +
           std::to_string(tx + 2 * round_up4(R)) + " inputs read from the slot in 16-byte " +
           "groups; tiles through " + feed_name(Feed::kBlock, pol.slots) +
           unaligned_note(pol, unaligned);
  }
  return plan_1d_registers(pol);
}

}  // namespace halo::cuda::fast
