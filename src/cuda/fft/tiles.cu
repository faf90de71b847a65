/* fft's 2-D tile transforms: overlap-save in one kernel, each block transforming a 64 x 128 tile
 * in shared memory, for float32 2-D filters (detail::cuda_fft_tiling sets FftTiling::shared with
 * fft = {1, 64, 128}; docs/ACCURACY.md, FFT; docs/notes/tuning.md, "Tile transforms in shared
 * memory").
 *
 * The outputs are cut into tiles of TY = 64 - KY + 1 rows and TX = 128 - KX + 1 columns, taken
 * in pairs along x: one complex 2-D transform carries the window of the pair's first tile as its
 * real part and the second's as its imaginary part (the filter is real, so the two correlations
 * come back as the real and imaginary parts). Per pair, a block of 512 threads, 16 values each:
 *   1. loads both windows (through the modes' maps at the edges; zeros beyond the inputs the
 *      outputs read), thread (y, c) holding row y's points c + 8 s (the x layout); where both
 *      windows lie inside the plane, from a staging area that cp.async filled during the
 *      previous pair's transforms;
 *   2. transforms the rows: radix 16, then radix 8 (twiddles from float64), through shared memory;
 *   3. writes the rows back where it read them and reads columns, thread (x, c) holding column
 *      x's points c + 4 s (the y layout); transforms the columns: radix 16, then radix 4;
 *   4. multiplies by the spectrum conj(F w) / (64 * 128) in registers, transforms the columns
 *      back, returns to the x layout, transforms the rows back, and stores the outputs that
 *      never wrap around.
 * A pair whose windows hold a NaN or an infinity is summed directly in float64 instead. Every
 * output stored is probed and a non-finite one noted (cuda/nonfinite.cuh).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/boundary.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/fft/block.cuh"
#include "cuda/fft/tiles.cuh"
#include "cuda/primitives/rows.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

using namespace fftblock;

constexpr int NY = 64, NX = 128, THREADS = NY * NX / 16;
constexpr int P = NX + NX / 16;  // a row's pitch in shared memory (float2), padded as pad() does

struct TilesGeometry {
  i64 ny, nx, items;
  i64 count_y, pairs_x;  // tile rows per item, pairs of tiles per tile row
  int ky, kx, ay, ax;    // filter extents and anchors
  int ty, tx;            // outputs per tile
  Boundary mode_y, mode_x;
};

// Element (iy, gx) of a plane, row iy already mapped through its mode (-1: a row of cval), gx
// through the x mode.
__device__ __forceinline__ float fetch2(const float* __restrict__ plane, i64 iy, i64 gx,
                                        const TilesGeometry& g, float cval) {
  return iy < 0 ? cval : fetch(plane + iy * g.nx, gx, g.nx, g.mode_x, cval);
}

// The transforms of the tile's lines of 16 G points, G threads a line (rows: G = 8, 128 points;
// columns: G = 4, 64 points), forward or inverse: thread c of a line holds its points c + G s
// before and after; `at(i)` is point i's place in shared memory. Radix 16 (sub-transforms of 1),
// then radix G (of 16) with the twiddles tw[16 r + b] = exp(-2 pi i b r / (16 G)). The caller
// has made sm free to write.
template <bool INV, int G, class At>
__device__ __forceinline__ void lines_dft(float2 (&v)[16], float2* sm, const float2* tw, int c,
                                          At at) {
  dft<16, INV, false, true>(v, v);
#pragma unroll
  for (int r = 0; r < 16; ++r) sm[at(16 * c + r)] = v[r];
  __syncthreads();
#pragma unroll
  for (int s = 0; s < 16; ++s) v[s] = sm[at(c + G * s)];
  butterflies<G, INV>(v, [&](int i, int r) { return tw[16 * r + c + G * i]; });
}

// The row transforms (the x layout: thread (y, c) holds row y's points c + 8 s) and the column
// transforms (the y layout: thread (x, c) holds column x's points c + 4 s).
template <bool INV>
__device__ __forceinline__ void rows_dft(float2 (&v)[16], float2* sm, const float2* twx, int y,
                                         int c) {
  lines_dft<INV, 8>(v, sm, twx, c, [y](int i) { return y * P + pad(i); });
}
template <bool INV>
__device__ __forceinline__ void cols_dft(float2 (&v)[16], float2* sm, const float2* twy, int x,
                                         int c) {
  lines_dft<INV, 4>(v, sm, twy, c, [x](int i) { return i * P + pad(x); });
}

// Pair pr: its item, first output row and column, output counts, windows' rows and columns
// (the inputs they read; the rest are zeros) and first input row and columns.
struct TilePair {
  i64 b, oy, ox, y0, xa, xb;
  int cnt_y, ca, cb, wy, wa, wb;
  // Both windows whole and inside the plane: plain loads, no map, no zeros.
  __device__ bool plain(const TilesGeometry& g) const {
    return wy == NY && wa == NX && wb == NX && y0 >= 0 && y0 + NY <= g.ny && xa >= 0 &&
           xb + NX <= g.nx;
  }
};
__device__ __forceinline__ TilePair tile_pair(const TilesGeometry& g, i64 pr) {
  TilePair p;
  const i64 per_item = g.count_y * g.pairs_x;
  p.b = pr / per_item;
  const i64 rest = pr - p.b * per_item;
  const i64 tyi = rest / g.pairs_x, q = rest - tyi * g.pairs_x;
  p.oy = tyi * g.ty, p.ox = 2 * q * g.tx;
  p.cnt_y = int(min(i64(g.ty), g.ny - p.oy));
  p.ca = int(min(i64(g.tx), g.nx - p.ox));
  p.cb = int(max(i64(0), min(i64(g.tx), g.nx - p.ox - g.tx)));
  p.wy = p.cnt_y + g.ky - 1, p.wa = p.ca + g.kx - 1, p.wb = p.cb > 0 ? p.cb + g.kx - 1 : 0;
  p.y0 = p.oy - g.ay, p.xa = p.ox - g.ax, p.xb = p.ox + g.tx - g.ax;
  return p;
}

// The staging area's row pitch (floats): rows 8 banks apart, so that a warp's four rows of
// eight consecutive points read 32 banks.
constexpr int SP = NX + 8;

// A plain pair's windows into the staging area (the first, then the second, NY rows of SP):
// thread (y, c) copies row y's points c + 8 s of both, asynchronously (cp.async), the points it
// reads back, so that the staging needs no barrier.
__device__ __forceinline__ void stage_tiles(float* stage, const float* __restrict__ in,
                                            const TilesGeometry& g, const TilePair& p, int y,
                                            int c) {
  const float* row = in + (p.b * g.ny + p.y0 + y) * g.nx;
#pragma unroll
  for (int s = 0; s < 16; ++s) {
    const int x = c + 8 * s;
    prim::copy_async<4>(stage + y * SP + x, row + p.xa + x, true);
    prim::copy_async<4>(stage + (NY + y) * SP + x, row + p.xb + x, true);
  }
  prim::commit_async();
}

__global__ void __launch_bounds__(THREADS, 1)
    fft_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, TilesGeometry g,
                     const float2* __restrict__ tw, const float2* __restrict__ spectrum,
                     const double* __restrict__ w, float cval, NonFiniteNote note) {
  // NY rows of P, the twiddles (128 + 64), then the staging area: the next plain pair's windows,
  // copied while this pair is transformed.
  extern __shared__ float2 sm[];
  float2* const twx = sm + NY * P;
  float2* const twy = twx + 128;
  float* const stage = reinterpret_cast<float*>(twy + 64);
  const int t = threadIdx.x;
  for (int i = t; i < 192; i += THREADS) twx[i] = tw[i];
  // The x layout: row y, points c + 8 s; the y layout: column x, points c + 4 s.
  const int y = t >> 3, c = t & 7, xc = t & (NX - 1), cy = t >> 7;
  const i64 pairs = g.count_y * g.pairs_x * g.items;
  float probe = 0.f;    // probe_nonfinite over the outputs this thread stores
  bool staged = false;  // the staging area holds pair pr's windows (uniform over the block)
  if (i64(blockIdx.x) < pairs) {
    const TilePair first = tile_pair(g, blockIdx.x);
    if (first.plain(g)) stage_tiles(stage, in, g, first, y, c), staged = true;
  }
  for (i64 pr = blockIdx.x; pr < pairs; pr += gridDim.x) {
    const TilePair tp = tile_pair(g, pr);
    const i64 b = tp.b, oy = tp.oy, ox = tp.ox, y0 = tp.y0, xa = tp.xa, xb = tp.xb;
    const int cnt_y = tp.cnt_y, ca = tp.ca, cb = tp.cb, wy = tp.wy, wa = tp.wa, wb = tp.wb;
    const float* plane = in + b * g.ny * g.nx;
    float2 v[16];
    if (staged) {
      prim::wait_async<0>();
#pragma unroll
      for (int s = 0; s < 16; ++s)
        v[s] = make_float2(stage[y * SP + c + 8 * s], stage[(NY + y) * SP + c + 8 * s]);
    } else {
      const i64 iy = y < wy ? detail::map_index(y0 + y, g.ny, g.mode_y) : -2;
#pragma unroll
      for (int s = 0; s < 16; ++s) {
        const int x = c + 8 * s;
        v[s].x = iy != -2 && x < wa ? fetch2(plane, iy, xa + x, g, cval) : 0.0f;
        v[s].y = iy != -2 && x < wb ? fetch2(plane, iy, xb + x, g, cval) : 0.0f;
      }
    }
    // The next pair's copies, in flight during this pair's transforms.
    staged = false;
    if (pr + gridDim.x < pairs) {
      const TilePair next = tile_pair(g, pr + gridDim.x);
      if (next.plain(g)) stage_tiles(stage, in, g, next, y, c), staged = true;
    }
    float nonfinite = 0;  // x * 0: NaN for a NaN or an infinity
#pragma unroll
    for (int s = 0; s < 16; ++s) nonfinite = fmaf(v[s].y, 0.0f, fmaf(v[s].x, 0.0f, nonfinite));
    if (__syncthreads_or(nonfinite != 0.0f)) {
      // The pair's outputs summed directly in float64.
      for (int o = t; o < cnt_y * (ca + cb); o += THREADS) {
        const int oyy = o / (ca + cb), oxx = o - oyy * (ca + cb);
        double acc = 0;
        for (int a = 0; a < g.ky; ++a) {
          const i64 iy = detail::map_index(y0 + oyy + a, g.ny, g.mode_y);
          for (int bb = 0; bb < g.kx; ++bb)
            acc += w[a * g.kx + bb] * double(fetch2(plane, iy, xa + oxx + bb, g, cval));
        }
        const float r = float(acc);
        out[(b * g.ny + oy + oyy) * g.nx + ox + oxx] = r;
        probe = probe_nonfinite(probe, r);
      }
      continue;
    }
    rows_dft<false>(v, sm, twx, y, c);
    // Back where they were read (each thread its own points), then the columns.
#pragma unroll
    for (int s = 0; s < 16; ++s) sm[y * P + pad(c + 8 * s)] = v[s];
    __syncthreads();
#pragma unroll
    for (int s = 0; s < 16; ++s) v[s] = sm[(cy + 4 * s) * P + pad(xc)];
    __syncthreads();
    cols_dft<false>(v, sm, twy, xc, cy);
#pragma unroll
    for (int s = 0; s < 16; ++s) v[s] = cmul<false>(v[s], spectrum[(cy + 4 * s) * NX + xc]);
    __syncthreads();
    cols_dft<true>(v, sm, twy, xc, cy);
#pragma unroll
    for (int s = 0; s < 16; ++s) sm[(cy + 4 * s) * P + pad(xc)] = v[s];
    __syncthreads();
#pragma unroll
    for (int s = 0; s < 16; ++s) v[s] = sm[y * P + pad(c + 8 * s)];
    __syncthreads();
    rows_dft<true>(v, sm, twx, y, c);
    if (y < cnt_y) {
      float* dst = out + (b * g.ny + oy + y) * g.nx + ox;
#pragma unroll
      for (int s = 0; s < 16; ++s) {
        const int x = c + 8 * s;
        if (x < ca) {
          dst[x] = v[s].x;
          probe = probe_nonfinite(probe, v[s].x);
        }
        if (x < cb) {
          dst[g.tx + x] = v[s].y;
          probe = probe_nonfinite(probe, v[s].y);
        }
      }
    }
  }
  prim::wait_async<0>();
  note(probe);
}

// The twiddles of the passes (twx: 128, twy: 64, as rows_dft and cols_dft read them) and
// exp(-2 pi i m / 128) and exp(-2 pi i m / 64) in float64 (ex, ey), from float64.
__global__ void fft_tiles_twiddles(float2* __restrict__ tw, double2* __restrict__ ex,
                                   double2* __restrict__ ey) {
  const int m = threadIdx.x;  // 192 threads
  double s, c;
  const double turn = m < 128 ? double((m % 16) * (m / 16)) / 128.0
                              : double(((m - 128) % 16) * ((m - 128) / 16)) / 64.0;
  sincospi(-2.0 * turn, &s, &c);
  tw[m] = make_float2(float(c), float(s));
  if (m < 128) {
    sincospi(-2.0 * double(m) / 128.0, &s, &c);
    ex[m] = make_double2(c, s);
  } else {
    sincospi(-2.0 * double(m - 128) / 64.0, &s, &c);
    ey[m - 128] = make_double2(c, s);
  }
}

// spectrum[fy * 128 + fx] = conj(W) / (64 * 128), W = sum over the taps of w[a][b]
// exp(-2 pi i (a fy / 64 + b fx / 128)), in float64 (a thread per frequency), rounded once.
__global__ void fft_tiles_spectrum(float2* __restrict__ spectrum, const double2* __restrict__ ex,
                                   const double2* __restrict__ ey, const double* __restrict__ w,
                                   int ky, int kx) {
  const int f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f >= NY * NX) return;
  const int fy = f / NX, fx = f % NX;
  double re = 0, im = 0;
  for (int a = 0; a < ky; ++a) {
    double rr = 0, ri = 0;  // the row's transform at fx
    for (int b = 0; b < kx; ++b) {
      const double2 e = ex[(b * fx) % NX];
      rr += w[a * kx + b] * e.x;
      ri += w[a * kx + b] * e.y;
    }
    const double2 e = ey[(a * fy) % NY];
    re += rr * e.x - ri * e.y;
    im += rr * e.y + ri * e.x;
  }
  const double scale = 1.0 / double(NY * NX);
  spectrum[f] = make_float2(float(re * scale), float(-im * scale));
}

}  // namespace

void run_fft_tiles(const Problem& p, const detail::FftTiling& t, const float* in, float* out,
                   cudaStream_t stream, NonFiniteNote note) {
  if (t.fft[1] != NY || t.fft[2] != NX)
    throw Error("fft: no tile transform of " + std::to_string(t.fft[1]) + "x" +
                std::to_string(t.fft[2]) + " points for " + p.describe());
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  TilesGeometry g;
  g.ny = n.y;
  g.nx = n.x;
  g.items = n.z * p.batch();
  g.ky = int(k.y);
  g.kx = int(k.x);
  g.ay = int(a.y);
  g.ax = int(a.x);
  g.ty = int(NY - k.y + 1);
  g.tx = int(NX - k.x + 1);
  g.count_y = (n.y + g.ty - 1) / g.ty;
  g.pairs_x = (n.x + 2 * i64(g.tx) - 1) / (2 * i64(g.tx));
  const int r = p.rank();
  g.mode_y = p.mode(r - 2);
  g.mode_x = p.mode(r - 1);
  const std::string desc = p.describe();
  const std::vector<double>& w = p.correlation_weights();
  // One allocation: the twiddles, the float64 tables, the spectrum, the weights.
  const std::size_t tw_at = 0, ex_at = 192 * 8, ey_at = ex_at + 128 * 16, spec_at = ey_at + 64 * 16,
                    w_at = spec_at + std::size_t(NY * NX) * 8, bytes = w_at + w.size() * 8;
  DeviceBuffer mem(bytes, "the twiddles and the filter's spectrum for " + desc, stream);
  char* const base = static_cast<char*>(mem.p);
  float2* const tw = reinterpret_cast<float2*>(base + tw_at);
  double2* const ex = reinterpret_cast<double2*>(base + ex_at);
  double2* const ey = reinterpret_cast<double2*>(base + ey_at);
  float2* const spectrum = reinterpret_cast<float2*>(base + spec_at);
  double* const wd = reinterpret_cast<double*>(base + w_at);
  HALO_CUDA_CHECK(cudaMemcpyAsync(wd, w.data(), w.size() * 8, cudaMemcpyHostToDevice, stream),
                  "copying the filter's weights");
  fft_tiles_twiddles<<<1, 192, 0, stream>>>(tw, ex, ey);
  HALO_CUDA_CHECK_LAUNCH("launching fft_tiles_twiddles for " + desc);
  fft_tiles_spectrum<<<NY * NX / 128, 128, 0, stream>>>(spectrum, ex, ey, wd, g.ky, g.kx);
  HALO_CUDA_CHECK_LAUNCH("launching fft_tiles_spectrum for " + desc);
  const std::size_t smem = std::size_t(NY * P + 192) * 8 + std::size_t(2 * NY * SP) * 4;
  const unsigned blocks = pair_grid(reinterpret_cast<const void*>(fft_tiles_kernel), THREADS, smem,
                                    g.count_y * g.pairs_x * g.items);
  fft_tiles_kernel<<<blocks, THREADS, smem, stream>>>(in, out, g, tw, spectrum, wd, float(p.cval()),
                                                      note);
  HALO_CUDA_CHECK_LAUNCH("launching fft_tiles_kernel for " + desc);
}

}  // namespace halo::cuda
