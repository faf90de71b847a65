// The passes of the separable plans for factors beyond the fused kernel's ring (float32): box
// rows, box columns, long columns and long rows, and their launches.
#include "cuda/separable/device.cuh"
#include "cuda/separable/plan.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda::sep {
namespace {

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
      prim::copy_async<4>(tile + box_skew(u), src + xs + u, true);
    prim::commit_async();
    prim::wait_async<0>();  // this thread's copies; the caller's barrier, everyone's
  } else {
    for (int u = t; u < len; u += THREADS)
      tile[box_skew(u)] = load_mapped(src, xs + u, nx, 1, mode, cval);
  }
}

// A thread's RUN sums from o into the tile, once every read of it is done, then the segment's
// n outputs from the tile to dst, coalesced: the sums scaled by `scale`, probed into `probe`.
template <int THREADS, int RUN>
__device__ __forceinline__ void store_row_tile(float* tile, const float (&acc)[RUN], int o, int n,
                                               float* dst, const SumScale& scale, float& probe) {
  __syncthreads();  // every read of the tile is done: the outputs go there
  if (o < n) {
#pragma unroll
    for (int q = 0; q < RUN; ++q) tile[box_skew(o + q)] = acc[q];
  }
  __syncthreads();
  // Two outputs per trip, probed as a pair (probe_pairs), then the last one alone.
  auto store = [&](auto value) {
    int u = threadIdx.x;
    for (; u + THREADS < n; u += 2 * THREADS) {
      const float ab[2] = {value(tile[box_skew(u)]), value(tile[box_skew(u + THREADS)])};
      dst[u] = ab[0];
      dst[u + THREADS] = ab[1];
      probe = probe_pairs(probe, ab);
    }
    if (u < n) {
      const float a = value(tile[box_skew(u)]);
      dst[u] = a;
      probe = probe_nonfinite(probe, a);
    }
  };
  if (scale.on)
    store([&](float v) { return scale(v); });
  else
    store([](float v) { return v; });
}

// 6 blocks per SM (40 registers): faster on the 1-D box 255 than 4 blocks (64 registers) or 8
// (32 registers, spilling): docs/notes/tuning.md, "Box rows".
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
      // The run's outputs, probed in pairs (probe_pairs), those past the chunk too: sums of rows
      // the mode maps, finite on finite data.
      float u[kColRun];
      u[0] = g.scale(s);
      o[0] = u[0];
#pragma unroll
      for (int q = 1; q < kColRun; ++q) {
        const int i = rest + q - 1;  // the row of E0 (of E1 from 16) entering the window
        const float v = i < kColRun ? ea[i * kColThreads] : eb[(i - kColRun) * kColThreads];
        s = (s + v) - lv[q - 1];
        u[q] = g.scale(s);
        if (q < n) o[q * g.row_stride] = u[q];
      }
      probe = probe_pairs(probe, u);
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

// 3 blocks per SM (80 registers): faster than 2 (108 registers) from 131 taps on
// (docs/notes/tuning.md, "Long columns").
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

// Launches a persistent kernel: as many blocks of `threads` as fit the device at once (at most
// `work`), which take the work items in turn.
template <class... KArgs, class... Args>
void launch_persistent(void (*kernel)(KArgs...), int threads, std::size_t shared_bytes, i64 work,
                       int sms, cudaStream_t stream, const char* name, int k, const Problem& p,
                       Args&&... args) {
  LaunchConfig L;
  L.block = {unsigned(threads), 1, 1};
  L.shared_bytes = shared_bytes;
  const i64 resident = prim::resident_blocks(kernel, threads, shared_bytes, sms);
  L.grid = {unsigned(std::min<i64>(work, resident)), 1, 1};
  launch_kernel(kernel, L, stream, name, k, p, std::forward<Args>(args)...);
}

}  // namespace

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

namespace {

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

}  // namespace

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

namespace {

// A long factor's weights as its kernels read them: 15 zeros first.
LongTaps long_taps(const std::vector<double>& w) {
  LongTaps taps{};
  for (std::size_t j = 0; j < w.size(); ++j) taps.w[j + kLongRun - 1] = float(w[j]);
  return taps;
}

}  // namespace

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

}  // namespace halo::cuda::sep
