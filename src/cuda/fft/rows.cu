/* fft's row transforms: overlap-save along x in one kernel, each block transforming in shared
 * memory, for filters along x alone in float32
 * (detail::cuda_fft_tiling sets FftTiling::shared, fft[1] = 1;
 * docs/ACCURACY.md, FFT; docs/notes/tuning.md, "Row transforms in shared memory").
 *
 * A row of n outputs is cut into segments of T = N - K + 1 outputs, and the segments of all rows,
 * one row after another, are taken in pairs (the last segment of a row with the first of the next
 * where a row has an odd count: a row shorter than T pairs with the next row): one complex
 * transform of N points carries the window of the pair's first segment (N inputs from its first
 * output minus the anchor, read through the mode's map at the row's ends, zeros beyond the
 * inputs its outputs read) as its real part and the second's as its imaginary part. The filter
 * is real, so the cyclic correlation of that complex signal has the two segments' correlations
 * as its real and imaginary parts: nothing to unpack. Per pair, a block of N / 16 threads
 *   1. loads both windows into registers, 16 complex values a thread (thread j holds elements
 *      j + s N / 16, s = 0..15: the layout every transform starts and ends in);
 *   2. transforms them forward: three Stockham passes (radix 16, 16 and N / 256), the values
 *      exchanged through shared memory between passes, the twiddles from a float table
 *      computed in float64;
 *   3. multiplies by the filter's spectrum conj(F w) / N (computed in float64, rounded once) in
 *      registers: the forward transform's last pass leaves each thread the values that the
 *      inverse's first pass reads;
 *   4. transforms back and stores the outputs that never wrap around (the first T of each
 *      segment), coalesced.
 * DRAM traffic: the input once (plus K - 1 elements of overlap a segment) and the output once.
 * A pair whose windows hold a NaN or an infinity is summed directly in float64 instead (a
 * transform would spread it to every output of the pair). Every output stored is probed and a
 * non-finite one noted (cuda/nonfinite.cuh).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "core/boundary.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/fft/block.cuh"
#include "cuda/fft/rows.cuh"
#include "cuda/primitives/rows.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

using namespace fftblock;

// The row problem: rows of n elements (every row of every item), a filter of k taps along x at
// anchor `anchor`, segments of `seg` outputs (`segs` a row), in pairs of consecutive segments.
struct RowsGeometry {
  i64 n, rows, segs, pairs, k, anchor;
  int seg;
  Boundary mode;
  // A segment index s / segs as (t + ((s - t) >> 1)) >> (shift - 1), t = umulhi(s, magic), where
  // every segment index is below 2^32 (shift 0: segs is 1); by 64-bit division elsewhere.
  unsigned magic;
  int shift;
  bool narrow;
};

// The N-point DFT of the block's values (forward: exp(-2 pi i jk / N); inverse: +, unscaled).
// v[s] holds element j + s N / 16 of thread j before and after. The twiddles, laid out so that a
// warp reads consecutive values: tw[16 r + m] = exp(-2 pi i m r / 256) for pass 2 (m < 16,
// r < 16), then tw[256 + 256 r + b] = exp(-2 pi i b r / N) for pass 3 (b < 256, r < N / 256).
template <int N, bool INV>
__device__ __forceinline__ void block_dft(float2 (&v)[16], float2* sm,
                                          const float2* __restrict__ tw) {
  constexpr int TH = N / 16, RL = N / 256;  // the last pass: radix RL
  const int j = threadIdx.x;
  // Pass 1 (radix 16, sub-transforms of 1): element j + r TH, out to 16 j + r.
  dft<16, INV, false, true>(v, v);
  if (INV) __syncthreads();  // the forward's last reads of sm are done
#pragma unroll
  for (int r = 0; r < 16; ++r) sm[pad(16 * j + r)] = v[r];
  __syncthreads();
  // Pass 2 (radix 16, sub-transforms of 16): element j + r TH twiddled by (j mod 16) r / 256 of
  // a turn, out to 256 (j / 16) + j mod 16 + 16 r.
#pragma unroll
  for (int r = 0; r < 16; ++r) v[r] = sm[pad(j + r * TH)];
  {
    float2 w[16];
#pragma unroll
    for (int r = 0; r < 16; ++r) w[r] = r == 0 ? make_float2(1, 0) : tw[16 * r + (j & 15)];
    dft<16, INV, true, true>(v, w);
  }
  __syncthreads();
  {
    const int o = (j >> 4) * 256 + (j & 15);
#pragma unroll
    for (int r = 0; r < 16; ++r) sm[pad(o + 16 * r)] = v[r];
  }
  __syncthreads();
  // Pass 3 (radix RL, sub-transforms of 256): butterfly bf = j + i TH (i < 16 / RL) takes
  // elements bf + 256 r, twiddled by bf r / N of a turn, and writes them back in place: element
  // j + s TH with s = i + (16 / RL) r, the layout we started from.
#pragma unroll
  for (int s = 0; s < 16; ++s) v[s] = sm[pad(j + s * TH)];
  butterflies<RL, INV>(v, [&](int i, int r) { return tw[256 * (r + 1) + j + i * TH]; });
}

// Pair pr: its two segments' rows, first outputs and output counts, and their windows' first
// inputs and lengths (the inputs they read; the rest of the N are zeros). Counts and lengths are
// at most N; positions along a row may pass 2^31. The second segment is the next one along its
// row, or the first of the next row; none (cb = 0) after the last.
struct Pair {
  i64 ra, rb, oa, ob, xa, xb;
  int ca, cb, wa, wb;
  // Both windows whole and inside their rows: plain loads, no map, no zeros.
  __device__ bool plain(int N, const RowsGeometry& g) const {
    return wa == N && wb == N && xa >= 0 && xa + N <= g.n && xb >= 0 && xb + N <= g.n;
  }
};
__device__ __forceinline__ Pair pair_at(const RowsGeometry& g, i64 pr) {
  Pair p;
  const i64 sa = 2 * pr;
  if (!g.narrow) {
    p.ra = sa / g.segs;
  } else if (g.shift == 0) {
    p.ra = sa;
  } else {
    const unsigned x = unsigned(sa), t = __umulhi(x, g.magic);
    p.ra = (t + ((x - t) >> 1)) >> (g.shift - 1);
  }
  const i64 qa = sa - p.ra * g.segs;
  const int T = g.seg;
  p.oa = i64(T) * qa;
  p.ca = int(min(i64(T), g.n - p.oa));
  const bool wraps = qa + 1 == g.segs;
  p.rb = wraps ? p.ra + 1 : p.ra;
  p.ob = wraps ? 0 : p.oa + T;
  p.cb = p.rb < g.rows ? int(min(i64(T), g.n - p.ob)) : 0;
  if (p.cb == 0) p.rb = p.ra;  // no second segment: a valid row to point at
  p.xa = p.oa - g.anchor;
  p.xb = p.ob - g.anchor;
  p.wa = p.ca + int(g.k) - 1;
  p.wb = p.cb > 0 ? p.cb + int(g.k) - 1 : 0;
  return p;
}

// Dynamic shared memory of the row kernel of N points: the exchange (N + N / 16), the staging
// area (2 N floats), the twiddles (N + 256) and the spectrum (N).
constexpr std::size_t rows_smem(int N) {
  return std::size_t(N + N / 16) * 8 + std::size_t(N) * 8 + std::size_t(2 * N + 256) * 8;
}

// A plain pair's windows into the thread's own slots of the staging area (elements j + s N / 16
// of both windows: those the thread reads back), one group of asynchronous copies.
template <int N>
__device__ __forceinline__ void stage_pair(float* stage, const float* __restrict__ in,
                                           const RowsGeometry& g, const Pair& p) {
  constexpr int TH = N / 16;
  const float* a = in + p.ra * g.n + p.xa;
  const float* b = in + p.rb * g.n + p.xb;
  const int j = threadIdx.x;
#pragma unroll
  for (int s = 0; s < 16; ++s) {
    prim::copy_async<4>(stage + j + s * TH, a + j + s * TH, true);
    prim::copy_async<4>(stage + N + j + s * TH, b + j + s * TH, true);
  }
  prim::commit_async();
}

template <int N>
__global__ void __launch_bounds__(N / 16, (N == 4096 ? 1 : 6144 / N))
    fft_rows_kernel(const float* __restrict__ in, float* __restrict__ out, RowsGeometry g,
                    const float2* __restrict__ tw, const float2* __restrict__ spectrum,
                    const double* __restrict__ w, float cval, NonFiniteNote note) {
  constexpr int TH = N / 16;
  // rows_smem's areas. The staging area holds the next plain pair's windows, copied while this
  // pair is transformed; each thread copies and reads back only its own elements, so the
  // staging needs no barrier.
  extern __shared__ float2 sm[];
  float* const stage = reinterpret_cast<float*>(sm + N + N / 16);
  float2* const tws = sm + N + N / 16 + N;  // the twiddles (N + 256)
  float2* const spec = tws + N + 256;       // the spectrum (N)
  const int j = threadIdx.x;
  for (int i = j; i < N + 256; i += TH) tws[i] = tw[i];
  for (int i = j; i < N; i += TH) spec[i] = spectrum[i];
  __syncthreads();
  const i64 pairs = g.pairs;
  float probe = 0.f;    // probe_nonfinite over the outputs this thread stores
  bool staged = false;  // the staging area holds pair pr's windows (uniform over the block)
  if (i64(blockIdx.x) < pairs) {
    const Pair first = pair_at(g, blockIdx.x);
    if (first.plain(N, g)) stage_pair<N>(stage, in, g, first), staged = true;
  }
  for (i64 pr = blockIdx.x; pr < pairs; pr += gridDim.x) {
    const Pair p = pair_at(g, pr);
    const float* src_a = in + p.ra * g.n;
    const float* src_b = in + p.rb * g.n;
    // Where the outputs go, kept through the transforms in place of the pair's geometry.
    float* const dst_a = out + p.ra * g.n + p.oa;
    float* const dst_b = out + p.rb * g.n + p.ob;
    const int ca = p.ca, cb = p.cb;
    float2 v[16];
    if (staged) {
      prim::wait_async<0>();
#pragma unroll
      for (int s = 0; s < 16; ++s) v[s] = make_float2(stage[j + s * TH], stage[N + j + s * TH]);
    } else {
#pragma unroll
      for (int s = 0; s < 16; ++s) {
        const int m = j + s * TH;
        v[s].x = m < p.wa ? fetch(src_a, p.xa + m, g.n, g.mode, cval) : 0.0f;
        v[s].y = m < p.wb ? fetch(src_b, p.xb + m, g.n, g.mode, cval) : 0.0f;
      }
    }
    // The next pair's copies, in flight during this pair's transforms.
    staged = false;
    if (pr + gridDim.x < pairs) {
      const Pair next = pair_at(g, pr + gridDim.x);
      if (next.plain(N, g)) stage_pair<N>(stage, in, g, next), staged = true;
    }
    // x * 0 is 0 for finite x and NaN for a NaN or an infinity: one FMA a value.
    float nonfinite = 0;
#pragma unroll
    for (int s = 0; s < 16; ++s) nonfinite = fmaf(v[s].y, 0.0f, fmaf(v[s].x, 0.0f, nonfinite));
    if (__syncthreads_or(nonfinite != 0.0f)) {
      // The pair's ca + cb outputs summed directly in float64.
      for (int o = j; o < p.ca + p.cb; o += TH) {
        const bool second = o >= p.ca;
        const int m = second ? o - p.ca : o;
        const float* src = second ? src_b : src_a;
        const i64 x = (second ? p.xb : p.xa) + m;
        double acc = 0;
        for (i64 t = 0; t < g.k; ++t) acc += w[t] * double(fetch(src, x + t, g.n, g.mode, cval));
        const float r = float(acc);
        out[(second ? p.rb : p.ra) * g.n + (second ? p.ob : p.oa) + m] = r;
        probe = probe_nonfinite(probe, r);
      }
      continue;
    }
    block_dft<N, false>(v, sm, tws);
#pragma unroll
    for (int s = 0; s < 16; ++s) v[s] = cmul<false>(v[s], spec[j + s * TH]);
    block_dft<N, true>(v, sm, tws);
#pragma unroll
    for (int s = 0; s < 16; ++s) {
      const int m = j + s * TH;
      if (m < ca) {
        dst_a[m] = v[s].x;
        probe = probe_nonfinite(probe, v[s].x);
      }
      if (m < cb) {
        dst_b[m] = v[s].y;
        probe = probe_nonfinite(probe, v[s].y);
      }
    }
  }
  prim::wait_async<0>();
  note(probe);
}

// The passes' twiddles in block_dft's layout (N + 256 values), and d[m] = exp(-2 pi i m / N) in
// float64 (m < N), all from float64.
__global__ void fft_rows_twiddles(float2* __restrict__ tw, double2* __restrict__ d, int N) {
  for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < N + 256; m += gridDim.x * blockDim.x) {
    // tw[m]: pass 2 below 256 (angle (m mod 16)(m / 16) / 256), pass 3 above (b r / N).
    const int i = m < 256 ? m : m - 256;
    const double turn =
        m < 256 ? double((i % 16) * (i / 16)) / 256.0 : double((i % 256) * (i / 256)) / double(N);
    double s, c;
    sincospi(-2.0 * turn, &s, &c);
    tw[m] = make_float2(float(c), float(s));
    if (m < N) {
      sincospi(-2.0 * double(m) / double(N), &s, &c);
      d[m] = make_double2(c, s);
    }
  }
}

// spectrum[m] = conj(W[m]) / N, W[m] = sum_t w[t] exp(-2 pi i t m / N): a block per m, its
// threads over the taps, in float64; rounded once.
__global__ void fft_rows_spectrum(float2* __restrict__ spectrum, const double2* __restrict__ d,
                                  const double* __restrict__ w, i64 k, int N) {
  __shared__ double part[2][32];
  for (int m = blockIdx.x; m < N; m += gridDim.x) {
    double re = 0, im = 0;
    for (i64 t = threadIdx.x; t < k; t += blockDim.x) {
      const double2 e = d[(t * m) % N];
      re += w[t] * e.x;
      im += w[t] * e.y;
    }
    for (int o = 16; o > 0; o /= 2) {
      re += __shfl_down_sync(0xffffffffu, re, o);
      im += __shfl_down_sync(0xffffffffu, im, o);
    }
    if (threadIdx.x % 32 == 0) part[0][threadIdx.x / 32] = re, part[1][threadIdx.x / 32] = im;
    __syncthreads();
    if (threadIdx.x == 0) {
      re = im = 0;
      for (int i = 0; i < int(blockDim.x / 32); ++i) re += part[0][i], im += part[1][i];
      spectrum[m] = make_float2(float(re / N), float(-im / N));
    }
    __syncthreads();
  }
}

template <int N>
void launch_rows(const RowsGeometry& g, const float* in, float* out, const float2* tw,
                 const float2* spectrum, const double* w, float cval, cudaStream_t stream,
                 const std::string& desc, NonFiniteNote note) {
  const auto kernel = fft_rows_kernel<N>;
  const unsigned blocks =
      pair_grid(reinterpret_cast<const void*>(kernel), N / 16, rows_smem(N), g.pairs);
  kernel<<<blocks, N / 16, rows_smem(N), stream>>>(in, out, g, tw, spectrum, w, cval, note);
  HALO_CUDA_CHECK_LAUNCH("launching fft_rows_kernel<" + std::to_string(N) + "> for " + desc);
}

}  // namespace

void run_fft_rows(const Problem& p, const detail::FftTiling& t, const float* in, float* out,
                  cudaStream_t stream, NonFiniteNote note) {
  const int N = int(t.fft[2]);
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  RowsGeometry g;
  g.n = n.x;
  g.rows = n.z * n.y * p.batch();
  g.k = k.x;
  g.anchor = a.x;
  g.seg = int(N - k.x + 1);
  g.segs = (n.x + g.seg - 1) / g.seg;
  g.pairs = (g.rows * g.segs + 1) / 2;
  g.mode = p.mode(p.rank() - 1);
  // The magic numbers of the division by segs (d), for segment indices below 2^32:
  // shift = ceil(log2 d), magic = floor(2^32 (2^shift - d) / d) + 1.
  g.narrow = g.rows * g.segs <= i64(0xffffffff);
  g.shift = 0;
  g.magic = 0;
  if (g.narrow && g.segs > 1) {
    const unsigned long long d = static_cast<unsigned long long>(g.segs);
    while ((1ull << g.shift) < d) ++g.shift;
    g.magic = unsigned((1ull << 32) * ((1ull << g.shift) - d) / d + 1);
  }
  const std::string desc = p.describe();
  const std::vector<double>& w = p.correlation_weights();
  // One allocation: the twiddles (float and float64), the spectrum, the weights.
  const std::size_t tw_at = 0, d_at = std::size_t(N + 256) * 8,
                    spec_at = d_at + std::size_t(N) * 16, w_at = spec_at + std::size_t(N) * 8,
                    bytes = w_at + w.size() * 8;
  DeviceBuffer mem(bytes, "the twiddles and the filter's spectrum for " + desc, stream);
  char* const base = static_cast<char*>(mem.p);
  float2* const tw = reinterpret_cast<float2*>(base + tw_at);
  double2* const d = reinterpret_cast<double2*>(base + d_at);
  float2* const spectrum = reinterpret_cast<float2*>(base + spec_at);
  double* const wd = reinterpret_cast<double*>(base + w_at);
  HALO_CUDA_CHECK(cudaMemcpyAsync(wd, w.data(), w.size() * 8, cudaMemcpyHostToDevice, stream),
                  "copying the filter's weights");
  fft_rows_twiddles<<<(N + 511) / 256, 256, 0, stream>>>(tw, d, N);
  HALO_CUDA_CHECK_LAUNCH("launching fft_rows_twiddles for " + desc);
  fft_rows_spectrum<<<std::min(N, 4096), 128, 0, stream>>>(spectrum, d, wd, g.k, N);
  HALO_CUDA_CHECK_LAUNCH("launching fft_rows_spectrum for " + desc);
  const float cval = float(p.cval());
  switch (N) {
    case 1024:
      launch_rows<1024>(g, in, out, tw, spectrum, wd, cval, stream, desc, note);
      break;
    case 2048:
      launch_rows<2048>(g, in, out, tw, spectrum, wd, cval, stream, desc, note);
      break;
    case 4096:
      launch_rows<4096>(g, in, out, tw, spectrum, wd, cval, stream, desc, note);
      break;
    default:
      throw Error("fft: no row transform of " + std::to_string(N) + " points for " + desc);
  }
}

}  // namespace halo::cuda
