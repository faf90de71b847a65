/* strategy helper: border pass — the boundary modes for kernels that compute zero ghosts.
 *   A strategy whose kernels pad with zeros (the TMA fills out-of-bounds boxes with zeros) runs
 *   them as they are, then this pass recomputes the outputs within the filter's reach of an edge
 *   (the band: at most a and k - 1 - a per side and axis), split into disjoint boxes: each axis's
 *   two slabs, within the interior of the axes before it. One launch covers every box; all it
 *   needs travels as kernel parameters (the weights, and per axis the input index of each ghost
 *   coordinate, mapped on the host by core/boundary.hpp), so the pass adds no copy and no
 *   synchronisation to the stream.
 *
 *   In 2D and 3D a block stages a tile of the box's input, ghosts mapped, in shared memory, and
 *   each thread sums a pencil of P outputs along the tile's longest axis from it, the weights of
 *   the (2R+1)^d window centred on the output as FFMA operands (compile-time indices, as in the
 *   `fast` kernels): each staged value feeds up to P outputs. The band is a thin shell (16384^2 at
 *   r = 4: 0.1% of the outputs; 640^3 at r = 2: 1.9%), whose x-edge slabs would otherwise take a
 *   scattered read per tap. In 1D the band is a few outputs per row: one thread per output.
 *   Each thread probes the outputs it stores and notes a NaN or an infinity among them, f32 once
 *   at its end, f64 per output (fast::Finish, NonFinite::noted; border_note_once); a box
 *   filter's sums are formed with weights 1 and divided by its taps as they are stored
 *   (fast::box_taps_of).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "cuda/border/border.hpp"
#include "cuda/fast/policy.hpp"
#include "cuda/check.cuh"
#include "cuda/fast/epilogue.cuh"  // Finish
#include "cuda/primitives/rows.cuh"  // Taps
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

constexpr int kGhosts = 64;      // mapped ghost coordinates per side and axis (the widest halo)
constexpr int kMaxBoxes = 6;     // two slabs per axis
constexpr int kBorderThreads = 128;
// Outputs per thread along the tile's pencil axis: 8 where the reuse of a staged value pays;
// 4 for the smallest windows (more, smaller tiles: the grid hides more latency) and for the
// largest 3D one (whose fully unrolled sums would otherwise overflow the registers).
__host__ __device__ constexpr int pencil(int rank, int R) {
  return (rank == 3 && R >= 4) || R <= 2 ? 4 : 8;
}
constexpr int kSharedBytes = 48 * 1024;

// Where each coordinate of an axis reads: itself inside [0, n); ghost[d][kGhosts + g] for
// g in [-kGhosts, 0) and ghost[d][kGhosts + g - n] for g in [n, n + kGhosts); -1 is cval.
struct BorderMap {
  std::int64_t n[3];  // canonical z, y, x
  std::int64_t ghost[3][2 * kGhosts];
};

__device__ __forceinline__ std::int64_t map_coord(const BorderMap& m, int d, std::int64_t g) {
  if (g >= 0 && g < m.n[d]) return g;
  const std::int64_t i = g < 0 ? kGhosts + g : kGhosts + (g - m.n[d]);
  return i >= 0 && i < 2 * kGhosts ? m.ghost[d][i] : -2;  // -2: beyond any window, never summed
}

struct Box {
  std::int64_t lo[3], ext[3];  // outputs [lo, lo + ext) per canonical axis
  std::int64_t first;          // the box's first work item (thread or tile) over all boxes
  std::int64_t tiles[3];       // tiled kernel: tiles per pencil, u, v axis
  int axis[3];                 // tiled kernel: the canonical axes of pencil, u, v
  int threads[3];              // tiled kernel: threads along pencil, u, v
};

struct Boxes {
  Box box[kMaxBoxes];
  int count;
  std::int64_t items;  // over all boxes and batch items
};

__device__ __forceinline__ int find_box(const Boxes& b, std::int64_t t) {
  int i = 0;
  while (i + 1 < b.count && t >= b.box[i + 1].first) ++i;
  return i;
}

// 1D (and any filter the tiled kernel is not compiled for): one thread per output, summing the
// actual filter (k, anchor a) through the ghost map.
template <class T, int NW>
struct GenericArgs {
  BorderMap map;
  Boxes boxes;
  std::int64_t k[3], a[3];
  prim::Taps<T, NW> w;
  T cval;
  fast::Finish finish;
};

// f32 notes once per thread, held by its launch bound to the 5 blocks of 256 threads that its 48
// registers allowed while it noted per output (the probe held across its loop took it to 54);
// f64 notes per output still: bound there, it spilled (border_note_once).
template <class T>
constexpr bool border_note_once = sizeof(T) == 4;
template <class T, int NW>
__global__ void __launch_bounds__(256, border_note_once<T> ? 5 : 0)
    border_generic(const T* __restrict__ in, T* __restrict__ out,
                   const __grid_constant__ GenericArgs<T, NW> g) {
  const std::int64_t plane = g.map.n[1] * g.map.n[2], item = g.map.n[0] * plane;
  T probe = T(0);  // every output the thread stores, noted once at the end (fast::Finish)
  for (std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; t < g.boxes.items;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const Box& bx = g.boxes.box[find_box(g.boxes, t)];
    const std::int64_t per_item = bx.ext[0] * bx.ext[1] * bx.ext[2];
    const std::int64_t r = t - bx.first, b = r / per_item, e = r % per_item;
    const std::int64_t o[3] = {bx.lo[0] + e / (bx.ext[1] * bx.ext[2]),
                               bx.lo[1] + (e / bx.ext[2]) % bx.ext[1], bx.lo[2] + e % bx.ext[2]};
    const T* src = in + b * item;
    T acc = T(0);
    for (std::int64_t fz = 0; fz < g.k[0]; ++fz) {
      const std::int64_t iz = map_coord(g.map, 0, o[0] - g.a[0] + fz);
      for (std::int64_t fy = 0; fy < g.k[1]; ++fy) {
        const std::int64_t iy = map_coord(g.map, 1, o[1] - g.a[1] + fy);
        for (std::int64_t fx = 0; fx < g.k[2]; ++fx) {
          const std::int64_t ix = map_coord(g.map, 2, o[2] - g.a[2] + fx);
          const T v = iz < 0 || iy < 0 || ix < 0 ? g.cval : src[iz * plane + iy * g.map.n[2] + ix];
          acc = fma(g.w.w[(fz * g.k[1] + fy) * g.k[2] + fx], v, acc);
        }
      }
    }
    g.finish.apply(acc, probe);
    if constexpr (!border_note_once<T>) g.finish.note(probe), probe = T(0);
    out[b * item + (o[0] * g.map.n[1] + o[1]) * g.map.n[2] + o[2]] = acc;
  }
  g.finish.note(probe);
}

// 2D and 3D: the (2R+1)^RANK window centred on the output (2D: no halo along z).
template <class T, int RANK, int R>
struct TiledArgs {
  BorderMap map;
  Boxes boxes;
  prim::Taps<T, prim::ipow(2 * R + 1, RANK)> w;  // the window as [pencil][u][v] (2D: u is z)
  T cval;
  fast::Finish finish;
};

// The halo of canonical axis d in the tiled kernel's window of radius R: 2D has none along z.
__host__ __device__ constexpr int halo_of(int rank, int R, int d) {
  return rank == 2 && d == 0 ? 0 : R;
}

// Blocks per multiprocessor that border_tiled's registers must allow (its launch bound), f32: those
// its count allowed while it noted per output, where the probe held across its tiles took it past
// a multiple of 8 registers (a block fewer); 0: no bound. (f64 notes per output: see
// border_note_once.)
template <class T>
constexpr int border_min_blocks(int rank, int R) {
  return sizeof(T) == 4 && rank == 2 ? (R <= 8 ? 10 : R == 15 ? 7 : 0) : 0;
}

template <class T, int RANK, int R>
__global__ void __launch_bounds__(kBorderThreads, border_min_blocks<T>(RANK, R))
    border_tiled(const T* __restrict__ in, T* __restrict__ out,
                 const __grid_constant__ TiledArgs<T, RANK, R> g) {
  constexpr int kPencil = pencil(RANK, R);
  extern __shared__ __align__(16) unsigned char border_smem[];
  T* s = reinterpret_cast<T*>(border_smem);
  constexpr int K = 2 * R + 1;
  const std::int64_t plane = g.map.n[1] * g.map.n[2], item = g.map.n[0] * plane;
  // Every output the thread stores, over all its tiles, noted once at the end (fast::Finish).
  T probe = T(0);
  for (std::int64_t t = blockIdx.x; t < g.boxes.items; t += gridDim.x) {
    const Box& bx = g.boxes.box[find_box(g.boxes, t)];
    // The tile: pencil, u, v indices (v fastest), then the batch item.
    std::int64_t r = t - bx.first;
    const std::int64_t tv = r % bx.tiles[2];
    r /= bx.tiles[2];
    const std::int64_t tu = r % bx.tiles[1];
    r /= bx.tiles[1];
    const std::int64_t tp = r % bx.tiles[0], b = r / bx.tiles[0];
    // Outputs per tile and staged extents, by role (pencil, u, v) and by canonical axis.
    const int tl[3] = {bx.threads[0] * kPencil, bx.threads[1], bx.threads[2]};
    std::int64_t o[3];  // the tile's first output, canonical
    int sx[3];          // staged extent, canonical
    int stride[3];      // shared-memory stride of each canonical axis (v fastest, then u, pencil)
    {
      const std::int64_t ti[3] = {tp, tu, tv};
      for (int q = 0; q < 3; ++q) {
        const int d = bx.axis[q];
        o[d] = bx.lo[d] + ti[q] * tl[q];
        sx[d] = tl[q] + 2 * halo_of(RANK, R, d);
      }
      stride[bx.axis[2]] = 1;
      stride[bx.axis[1]] = sx[bx.axis[2]];
      stride[bx.axis[0]] = sx[bx.axis[2]] * sx[bx.axis[1]];
    }
    const int hz = halo_of(RANK, R, 0);
    // Stage the input of the tile's windows, x fastest (coalesced reads), ghosts mapped.
    const T* src = in + b * item;
    const int staged = sx[0] * sx[1] * sx[2];
    __syncthreads();  // the previous tile's reads of s are done
    // In batches of kStage elements per thread, every load of a batch issued before the first
    // store, so that a thread has several reads in flight (a tile is a few loads per thread, and
    // the grid too small to hide one read's latency at a time). The element's coordinates
    // advance by the block's stride with carries, not by divisions (the staging's index
    // arithmetic, not its reads, set the pass's pace).
    constexpr int kStage = 4;
    const int n = blockDim.x, sxy = sx[2] * sx[1];
    const int step_x = n % sx[2], step_y = (n / sx[2]) % sx[1], step_z = n / sxy;
    int cx = threadIdx.x % sx[2], cy = (threadIdx.x / sx[2]) % sx[1], cz = threadIdx.x / sxy;
    const std::int64_t gz = o[0] - hz, gy = o[1] - R, gx = o[2] - R;  // staged (0, 0, 0)
    for (int i0 = threadIdx.x; i0 < staged; i0 += kStage * n) {
      T v[kStage];
      int at[kStage];
#pragma unroll
      for (int q = 0; q < kStage; ++q) {
        const bool in_tile = i0 + q * n < staged;
        at[q] = in_tile ? cz * stride[0] + cy * stride[1] + cx * stride[2] : -1;
        const std::int64_t iz = map_coord(g.map, 0, gz + cz);
        const std::int64_t iy = map_coord(g.map, 1, gy + cy);
        const std::int64_t ix = map_coord(g.map, 2, gx + cx);
        v[q] = T(0);
        if (iz == -1 || iy == -1 || ix == -1)
          v[q] = g.cval;
        else if (in_tile && iz >= 0 && iy >= 0 && ix >= 0)
          v[q] = __ldg(src + iz * plane + iy * g.map.n[2] + ix);
        cx += step_x;
        cy += step_y;
        if (cx >= sx[2]) cx -= sx[2], ++cy;
        cz += step_z;
        if (cy >= sx[1]) cy -= sx[1], ++cz;
      }
#pragma unroll
      for (int q = 0; q < kStage; ++q)
        if (at[q] >= 0) s[at[q]] = v[q];
    }
    __syncthreads();
    // This thread's pencil: kPencil outputs along the pencil axis.
    const int lv = threadIdx.x % bx.threads[2], lu = (threadIdx.x / bx.threads[2]) % bx.threads[1];
    const int lp = threadIdx.x / (bx.threads[2] * bx.threads[1]);
    if (lp >= bx.threads[0]) continue;
    const int dp = bx.axis[0], du = bx.axis[1], dv = bx.axis[2];
    const int sp = stride[dp], su = stride[du];
    const T* base = s + lp * kPencil * sp + lu * su + lv;  // v's stride is 1
    T acc[kPencil];
#pragma unroll
    for (int q = 0; q < kPencil; ++q) acc[q] = T(0);
    constexpr int KU = RANK == 3 ? K : 1;  // 2D: u is z
#pragma unroll
    for (int fu = 0; fu < KU; ++fu) {
#pragma unroll
      for (int fv = 0; fv < K; ++fv) {
        const T* col = base + fu * su + fv;
#pragma unroll
        for (int j = 0; j < kPencil + K - 1; ++j) {
          const T x = col[j * sp];
#pragma unroll
          for (int q = 0; q < kPencil; ++q) {
            const int fp = j - q;  // the input j feeds output q through tap fp of the pencil axis
            if (fp >= 0 && fp < K) acc[q] = fma(g.w.w[(fp * KU + fu) * K + fv], x, acc[q]);
          }
        }
      }
    }
    // Write the pencil's outputs that lie in the box.
    std::int64_t oc[3] = {o[0], o[1], o[2]};
    oc[du] += lu;
    oc[dv] += lv;
    if (oc[du] >= bx.lo[du] + bx.ext[du] || oc[dv] >= bx.lo[dv] + bx.ext[dv]) continue;
    const std::int64_t first = o[dp] + lp * kPencil, end = bx.lo[dp] + bx.ext[dp];
#pragma unroll
    for (int q = 0; q < kPencil; ++q) {
      oc[dp] = first + q;
      if (oc[dp] < end) {
        g.finish.apply(acc[q], probe);
        if constexpr (!border_note_once<T>) g.finish.note(probe), probe = T(0);
        out[b * item + (oc[0] * g.map.n[1] + oc[1]) * g.map.n[2] + oc[2]] = acc[q];
      }
    }
  }
  g.finish.note(probe);
}


constexpr int kGenericWeights = 4096;  // bytes of weights the one-thread-per-output kernel takes

// The compiled radii of the tiled kernel, smallest first (those of `fast`'s 2D and 3D kernels).
#define HALO_BORDER_RADII_2D(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(10) X(12) X(15)
#define HALO_BORDER_RADII_3D(X) X(1) X(2) X(3) X(4)

int tiled_radius(int rank, std::int64_t r) {
  int best = -1;
#define HALO_CASE(R) \
  if (best < 0 && R >= r) best = R;
  if (rank == 2) {
    HALO_BORDER_RADII_2D(HALO_CASE)
  } else if (rank == 3) {
    HALO_BORDER_RADII_3D(HALO_CASE)
  }
#undef HALO_CASE
  return best;
}

// The roles of a slab of axis d: which canonical axes are the pencil, u and v. v, the lanes'
// axis (shared-memory stride 1), is a long axis of the slab; in 3D the pencil is the other long
// axis and u the slab's thin one; in 2D u is z, so the pencil is the thin axis.
void roles(int rank, int d, int axis[3]) {
  static const int two[3][3] = {{1, 0, 2}, {1, 0, 2}, {2, 0, 1}};
  static const int three[3][3] = {{1, 0, 2}, {0, 1, 2}, {0, 2, 1}};
  for (int q = 0; q < 3; ++q) axis[q] = rank == 3 ? three[d][q] : two[d][q];
}

template <class T, int RANK, int R>
void launch_tiled(const T* in, T* out, const BorderMap& map, const Boxes& boxes,
                  const std::vector<double>& role_window, double cval, const fast::Finish& finish,
                  int smem, cudaStream_t s) {
  TiledArgs<T, RANK, R> g{};
  g.map = map;
  g.boxes = boxes;
  for (std::size_t i = 0; i < role_window.size(); ++i) g.w.w[i] = T(role_window[i]);
  g.cval = T(cval);
  g.finish = finish;
  const std::int64_t blocks = std::min<std::int64_t>(boxes.items, std::int64_t(1) << 20);
  border_tiled<T, RANK, R><<<unsigned(blocks), kBorderThreads, smem, s>>>(in, out, g);
}

template <class T>
bool dispatch_tiled(int rank, int R, const T* in, T* out, const BorderMap& map,
                    const Boxes& boxes, const std::vector<double>& w, double cval,
                    const fast::Finish& f, int smem, cudaStream_t s) {
  bool ok = false;
#define HALO_CASE2(RR) \
  if (!ok && R == RR) ok = (launch_tiled<T, 2, RR>(in, out, map, boxes, w, cval, f, smem, s), true);
#define HALO_CASE3(RR) \
  if (!ok && R == RR) ok = (launch_tiled<T, 3, RR>(in, out, map, boxes, w, cval, f, smem, s), true);
  if (rank == 2) {
    HALO_BORDER_RADII_2D(HALO_CASE2)
  } else {
    HALO_BORDER_RADII_3D(HALO_CASE3)
  }
#undef HALO_CASE2
#undef HALO_CASE3
  return ok;
}

// The outputs [lo, hi) of an axis of n whose windows (k taps, anchor a) stay inside the array;
// empty (lo == hi) where every output's window reaches past an edge.
void interior(std::int64_t n, std::int64_t k, std::int64_t a, std::int64_t& lo, std::int64_t& hi) {
  lo = std::min(a, n);
  hi = std::max(lo, n - (k - 1 - a));
}

// whole: every output of p by the one-thread-per-output kernel, the array one box (whole_pass).
// The outputs are finished as `finish` says (a box filter's division, the non-finite note).
template <class T>
void border_typed(const Problem& p, const T* in, T* out, const fast::Finish& finish,
                  cudaStream_t s, unsigned applied, bool whole = false) {
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::int64_t nn[3] = {n.z, n.y, n.x}, kk[3] = {k.z, k.y, k.x}, aa[3] = {a.z, a.y, a.x};
  const std::int64_t reach = p.max_radius();
  if (reach > kGhosts)
    throw Error("border pass: a halo of " + std::to_string(reach) + " exceeds the " +
                std::to_string(kGhosts) + " it maps");
  BorderMap map{};
  std::int64_t ilo[3], ihi[3];  // per axis, the outputs whose windows stay inside
  bool pass[3];                 // per axis: its band is recomputed here
  for (int d = 0; d < 3; ++d) {
    const int axis = d - (kMaxRank - p.rank());
    const Boundary mode = axis < 0 ? Boundary::constant : p.mode(axis);
    // Not an axis of the array, zero ghosts (what the kernels assume), or applied by the kernel.
    pass[d] = axis >= 0 && !p.zero_ghosts(axis) && !(applied & (1u << d));
    map.n[d] = nn[d];
    for (int i = 0; i < 2 * kGhosts; ++i)
      map.ghost[d][i] =
          detail::map_index(i < kGhosts ? i - kGhosts : nn[d] + (i - kGhosts), nn[d], mode);
    interior(nn[d], kk[d], aa[d], ilo[d], ihi[d]);
  }
  // Axis d's slabs (side 0: low, 1: high), within the interior of the recomputed axes before
  // it: an output is wrong after the kernel exactly when its window meets a ghost of an axis
  // that is recomputed here, and these boxes hold each such output once.
  auto slab = [&](int d, int side, Box& b) {
    for (int e = 0; e < 3; ++e) {
      const bool inner = e < d && pass[e];
      b.lo[e] = inner ? ilo[e] : 0;
      b.ext[e] = inner ? ihi[e] - ilo[e] : nn[e];
    }
    b.lo[d] = side == 0 ? 0 : ihi[d];
    b.ext[d] = side == 0 ? ilo[d] : nn[d] - ihi[d];
    return b.ext[0] * b.ext[1] * b.ext[2] > 0;
  };
  const int R = tiled_radius(p.rank(), reach);
  if (R < 0 || whole) {
    // 1D, a radius the tiled kernel is not compiled for, or the whole array: one thread per
    // output.
    GenericArgs<T, kGenericWeights / sizeof(T)> g{};
    const std::vector<double>& w = p.correlation_weights();
    if (w.size() > kGenericWeights / sizeof(T))
      throw Error("border pass: " + std::to_string(w.size()) + " weights exceed the " +
                  std::to_string(kGenericWeights / sizeof(T)) + " it takes");
    g.map = map;
    for (int d = 0; d < 3; ++d) {
      g.k[d] = kk[d];
      g.a[d] = aa[d];
    }
    for (std::size_t i = 0; i < w.size(); ++i) g.w.w[i] = finish.box ? T(1) : T(w[i]);
    g.cval = T(p.cval());
    g.finish = finish;
    auto add = [&](Box b) {
      b.first = g.boxes.items;
      g.boxes.items += b.ext[0] * b.ext[1] * b.ext[2] * p.batch();
      g.boxes.box[g.boxes.count++] = b;
    };
    if (whole) {
      Box b{};
      for (int e = 0; e < 3; ++e) b.lo[e] = 0, b.ext[e] = nn[e];
      add(b);
    } else {
      for (int d = 0; d < 3; ++d)
        for (int side = 0; side < 2; ++side) {
          Box b{};
          if (pass[d] && slab(d, side, b)) add(b);
        }
    }
    if (g.boxes.count == 0) return;
    const int threads = 256;
    const std::int64_t blocks =
        std::min<std::int64_t>((g.boxes.items + threads - 1) / threads, std::int64_t(1) << 16);
    border_generic<T, kGenericWeights / sizeof(T)><<<unsigned(blocks), threads, 0, s>>>(in, out, g);
    HALO_CUDA_CHECK_LAUNCH("launching the border pass on " + p.describe());
    return;
  }
  // 2D and 3D: one launch per axis, its two slabs sharing the roles and so the weights' order.
  std::vector<double> win = detail::centred_window(p, R);  // canonical [z][y][x]
  if (finish.box)  // weights 1, the sums divided as they are stored
    for (double& w : win) w = w != 0 ? 1.0 : 0.0;
  const std::int64_t K = 2 * R + 1, KZ = p.rank() == 3 ? K : 1;
  for (int d = 3 - p.rank(); d < 3; ++d) {
    if (!pass[d]) continue;
    Boxes boxes{};
    int axis[3];
    roles(p.rank(), d, axis);
    int smem = 0;
    for (int side = 0; side < 2; ++side) {
      Box b{};
      if (!slab(d, side, b)) continue;
      for (int q = 0; q < 3; ++q) b.axis[q] = axis[q];
      const int kPencil = pencil(p.rank(), R);
      const std::int64_t ev = b.ext[axis[2]], eu = b.ext[axis[1]], ep = b.ext[axis[0]];
      int tv = int(std::min<std::int64_t>(ev, 32));
      int tu = int(std::min<std::int64_t>(eu, kBorderThreads / tv));
      int tp = int(std::max<std::int64_t>(
          1, std::min<std::int64_t>((ep + kPencil - 1) / kPencil, kBorderThreads / (tv * tu))));
      const int hu = halo_of(p.rank(), R, axis[1]);
      auto bytes = [&] {
        return (tp * kPencil + 2 * R) * (tu + 2 * hu) * (tv + 2 * R) * int(sizeof(T));
      };
      while (bytes() > kSharedBytes && (tp > 1 || tu > 1)) (tp > 1 ? tp : tu) /= 2;
      if (bytes() > kSharedBytes)
        throw Error("border pass: no tile fits in shared memory for " + p.describe());
      b.threads[0] = tp;
      b.threads[1] = tu;
      b.threads[2] = tv;
      b.tiles[0] = (ep + tp * kPencil - 1) / (tp * kPencil);
      b.tiles[1] = (eu + tu - 1) / tu;
      b.tiles[2] = (ev + tv - 1) / tv;
      b.first = boxes.items;
      boxes.items += b.tiles[0] * b.tiles[1] * b.tiles[2] * p.batch();
      boxes.box[boxes.count++] = b;
      smem = std::max(smem, bytes());
    }
    if (boxes.count == 0) continue;
    // The window in role order [pencil][u][v]; 2D windows have no z (KZ = 1).
    const std::int64_t ext[3] = {KZ, K, K};
    std::vector<double> role(win.size());
    for (std::int64_t fp = 0; fp < ext[axis[0]]; ++fp)
      for (std::int64_t fu = 0; fu < ext[axis[1]]; ++fu)
        for (std::int64_t fv = 0; fv < ext[axis[2]]; ++fv) {
          std::int64_t f[3];
          f[axis[0]] = fp;
          f[axis[1]] = fu;
          f[axis[2]] = fv;
          role[(fp * ext[axis[1]] + fu) * ext[axis[2]] + fv] = win[(f[0] * K + f[1]) * K + f[2]];
        }
    if (!dispatch_tiled(p.rank(), R, in, out, map, boxes, role, p.cval(), finish, smem, s))
      throw Error("border pass: no kernel compiled for radius " + std::to_string(R));
    HALO_CUDA_CHECK_LAUNCH("launching the border pass on " + p.describe());
  }
}

}  // namespace

bool border_covers_all(const Problem& p) {
  if (p.zero_ghosts() || p.max_radius() > kGhosts) return false;
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::int64_t nn[3] = {n.z, n.y, n.x}, kk[3] = {k.z, k.y, k.x}, aa[3] = {a.z, a.y, a.x};
  for (int d = 3 - p.rank(); d < 3; ++d) {
    if (p.zero_ghosts(d - (kMaxRank - p.rank()))) continue;
    std::int64_t lo, hi;
    interior(nn[d], kk[d], aa[d], lo, hi);
    if (lo == hi) return true;
  }
  return false;
}

bool whole_pass(const Problem& p, const Buffers& b, void* stream) {
  if (p.max_radius() > kGhosts ||
      p.correlation_weights().size() > kGenericWeights / dtype_size(p.dtype()))
    return false;
  const auto s = static_cast<cudaStream_t>(stream);
  const fast::Finish finish = fast::Finish::of(b, fast::box_taps_of(p));
  dispatch_buffers(p.dtype(), b.input, b.output,
                   [&](auto* i, auto* o) { border_typed(p, i, o, finish, s, 0, true); });
  return true;
}

void border_pass(const Problem& p, const Buffers& b, void* stream, unsigned applied) {
  const auto s = static_cast<cudaStream_t>(stream);
  const fast::Finish finish = fast::Finish::of(b, fast::box_taps_of(p));
  dispatch_buffers(p.dtype(), b.input, b.output,
                   [&](auto* i, auto* o) { border_typed(p, i, o, finish, s, applied); });
}


}  // namespace halo::cuda
