// The volume kernels of the separable passes: x, y and z of a float32 3-D filter in one pass
// (vol_kernel, and vol_tma_kernel with tiles by the tensor memory accelerator), and their
// launch (launch_vol).
#include "cuda/separable/device.cuh"
#include "cuda/separable/plan.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda::sep {
namespace {

// ---------------------------------------------------------------------------------------------
// Volumes in one pass: a float32 3-D filter whose three factors fit radius kVolTop, x, y and z
// fused, so that DRAM sees one read and one write of the array instead of the two passes'
// four transfers (measured: docs/notes/tuning.md, "Volumes in one pass"). A
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

// The BOX forms of x_run8 and y_column (every tap 1): running sums over a window of 2R + 1
// values u(0) .. u(N + 2R - 1), the first output the window's sum, each next one the last plus
// the value entering minus the one leaving (two adds an output in place of 2R + 1 FMAs;
// Summation::running, restarted every run of 8 and every column of N).
template <int N, int R, class U>
__device__ __forceinline__ void box_run(U u, float (&acc)[N]) {
  float sum = u(0);
#pragma unroll
  for (int j = 1; j <= 2 * R; ++j) sum += u(j);
  acc[0] = sum;
#pragma unroll
  for (int q = 1; q < N; ++q) {
    sum = (sum + u(q + 2 * R)) - u(q - 1);
    acc[q] = sum;
  }
}
template <int R, int PAD>
__device__ __forceinline__ void x_box8(const float* src, float (&acc)[8]) {
  float v[8 + 2 * PAD];
#pragma unroll
  for (int i0 = 0; i0 < 8 + 2 * PAD; i0 += 4) {
    const float4 f = *reinterpret_cast<const float4*>(src + i0);
    v[i0] = f.x, v[i0 + 1] = f.y, v[i0 + 2] = f.z, v[i0 + 3] = f.w;
  }
  box_run<8, R>([&](int i) { return v[PAD - R + i]; }, acc);
}
template <int N, int R>
__device__ __forceinline__ void y_box_column(const float* col, int pitch, float (&acc)[N]) {
  float u[N + 2 * R];
#pragma unroll
  for (int a = 0; a < N + 2 * R; ++a) u[a] = col[a * pitch];
  box_run<N, R>([&](int i) { return u[i]; }, acc);
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

// SCALED: the pass has a box factor whose sums are divided as they are stored (SumScale); the
// host picks the instantiation, so that other filters carry no branch for it. BOX: every factor
// a box of 2R + 1 taps of 1 (VolGeom::box): running sums along x (runs of 8), y (a thread's RY
// rows) and z (the last K planes' sums kept, the running sum restarted from them every K
// planes) in place of the FMAs.
template <int R, bool SCALED, bool BOX>
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
  float probe = 0.f;  // probe_pairs over the outputs this thread stores
  for (int e = t; e < TP; e += kVolThreads) crow[e] = g.cval;
  if (t == 0) {
    for (int k = 0; k < NST; ++k) prim::mbarrier_init<1>(prim::shared_address(bar + k));
    prim::mbarrier_init_fence();
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
      const std::uint32_t b = prim::shared_address(bar + fill);
      prim::mbarrier_expect_bytes(b, std::uint32_t(TR * TP * sizeof(float)));
      prim::copy_box(stages + fill * ST, &map, int(x0 - P), int(y0 - R), zcoord(j), int(item),
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

    // The z queue: q[p][o % K], output plane o of row yq + p. BOX: q[p][j % K] holds y-filtered
    // plane j of row yq + p (the last K planes), zs[p] their running sum.
    float q[RY][K], zs[RY];
#pragma unroll
    for (int p = 0; p < RY; ++p) {
      zs[p] = 0.f;
#pragma unroll
      for (int k = 0; k < K; ++k) q[p][k] = 0.f;
    }
    const i64 x = x0 + c;
    const int rows = int(min(i64(RY), max(i64(0), g.ny - (y0 + yq))));  // this thread's rows
    float* o = out + item * plane * g.nz + z0 * plane + (y0 + yq) * g.nx + x;
    int slot = 0;  // plane i - 1's slot in the queue: (i - 1) mod K
    for (int i = 0; i <= n_in; ++i) {
      if (i < n_in) {
        prim::mbarrier_wait(prim::shared_address(bar + use), phase);
        if (fix || !zero_ghosts) {
          put(stages + use * ST, i);
          prim::fence_proxy_async_shared();  // before the stage's next copy
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
          else if constexpr (BOX)
            x_box8<R, P>(row + c0, acc);
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
        const float* col = xs + ((i - 1) & 1) * TR * XP + yq * XP + c;
        if constexpr (BOX)
          y_box_column<RY, R>(col, XP, v);
        else
          y_column(col, XP, wy, v);
        const bool done = i - 1 >= 2 * R;
        vol_case<K>(slot, [&](auto sc) {
          constexpr int S = decltype(sc)::value, DONE = (S + 1) % K;
          float w[RY];  // output plane i - 1 - 2R (where done)
          if constexpr (BOX) {
            // Plane i - 1 enters the running sum and plane i - 1 - K (its slot's) leaves it;
            // every K planes the sum restarts from the K planes kept, added in slot order.
#pragma unroll
            for (int p = 0; p < RY; ++p) {
              zs[p] = (zs[p] + v[p]) - q[p][S];
              q[p][S] = v[p];
            }
            if constexpr (S == K - 1) {
#pragma unroll
              for (int p = 0; p < RY; ++p) {
                float t = q[p][0];
#pragma unroll
                for (int m = 1; m < K; ++m) t += q[p][m];
                zs[p] = t;
              }
            }
#pragma unroll
            for (int p = 0; p < RY; ++p) w[p] = zs[p];
          } else {
#pragma unroll
            for (int m = 0; m <= 2 * R; ++m)
#pragma unroll
              for (int p = 0; p < RY; ++p)
                q[p][(S - m + K) % K] = fmaf(wz.w[m], v[p], q[p][(S - m + K) % K]);
#pragma unroll
            for (int p = 0; p < RY; ++p) w[p] = q[p][DONE];
          }
          if (done && x < g.nx) {
            if constexpr (SCALED) {
#pragma unroll
              for (int p = 0; p < RY; ++p) w[p] = g.scale(w[p]);
            }
#pragma unroll
            for (int p = 0; p < RY; ++p)
              if (p < rows) o[p * g.nx] = w[p];
            // The rows past the volume too: sums of the tile's zeros or of the mode's cells, finite
            // on finite data.
            probe = probe_pairs(probe, w);
          }
          if constexpr (!BOX) {
#pragma unroll
            for (int p = 0; p < RY; ++p) q[p][DONE] = 0.f;
          }
        });
        if (done) o += plane;
        slot = slot + 1 == K ? 0 : slot + 1;
      }
    }
  }
  note(probe);
}

// A volume kernel over g's tiles, in the z-chunks that waste least of the last wave and of the
// `halo` planes each chunk re-filters; `extra` goes between g and the factors' taps.
template <int R, class Kernel, class... Extra>
void launch_vol_chunks(Kernel kernel, const char* name, std::size_t smem, int halo, VolGeom g,
                       const detail::AxisWindows& win, const Problem& p, cudaStream_t stream,
                       int sms, NonFiniteNote note, const float* in, float* out,
                       const Extra&... extra) {
  const i64 resident = prim::resident_blocks(kernel, kVolThreads, smem, sms);
  const fast::Chunking c =
      fast::fit_chunks(g.nz, g.tiles_x * g.tiles_y * g.items, halo, resident);
  g.chunk = c.chunk;
  g.chunks = c.chunks;
  g.work = g.tiles_x * g.tiles_y * g.items * g.chunks;
  LaunchConfig L;
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
      !prim::make_row_map(&map, in, int(sizeof(float)), g.nx, g.ny, g.nz, g.items,
                          vol_tile_pitch(R), vt_ty(R) + 2 * R, 256))
    return false;
  g.tiles_y = ceil_div64(g.ny, vt_ty(R));
  const auto launch = [&](auto kernel) {
    launch_vol_chunks<R>(kernel, "vol_tma_kernel", vol_tma_shared_bytes(R), R, g, win, p, stream,
                         sms, note, in, out, map);
  };
  if (g.box)
    g.scale.on ? launch(vol_tma_kernel<R, true, true>) : launch(vol_tma_kernel<R, false, true>);
  else
    g.scale.on ? launch(vol_tma_kernel<R, true, false>) : launch(vol_tma_kernel<R, false, false>);
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
}  // namespace

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

}  // namespace halo::cuda::sep
