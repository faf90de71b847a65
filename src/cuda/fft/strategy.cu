/* strategy: fft — the correlation as products of discrete Fourier transforms (cuFFT), tiled
 * overlap-save, for large dense filters; the GPU counterpart of cpu_fft (docs/ACCURACY.md, FFT).
 * Any problem the Problem describes: ranks 1-3 (canonical z, y, x), every mode per axis, cval,
 * origins, even and off-centre filters, filters larger than the input, batches, f32 and f64.
 *
 * Tiles (detail::cuda_fft_tiling): up to T outputs per axis from an input window of T + K - 1
 * elements zero-padded to the transform length N per axis; the spectrum of the correlation
 * weights on that grid is computed on the device in float64 (cuFFT D2Z), conjugated, scaled by
 * 1 / L and rounded once to the dtype. The tiles run in batches of B (detail::cuda_fft_batch:
 * the tiles of a buffer of 128 MiB), each batch in one buffer, in place:
 *   1. gather: a warp per segment of a tile row copies the window's row from the input, through
 *      the mode's map at the array's edges (cval where it says so), zeros beyond the window;
 *      rows are padded to 2 (N_x / 2 + 1) reals for the in-place real-to-complex transform. A
 *      tile whose window holds a NaN or an infinity is flagged.
 *   2. cuFFT R2C over the batch (a plan per transform shape and batch size, cached);
 *   3. the product with the spectrum (each thread keeps one spectrum value and walks a group of
 *      the batch's tiles);
 *   4. cuFFT C2R;
 *   5. scatter: a warp per segment of an output row copies the first T outputs per axis of each
 *      tile (those never wrap around) to the output, coalesced; flagged tiles are skipped and
 *   6. summed directly from the input in float64 instead (a block per flagged tile), since the
 *      transforms would spread a NaN to every output of its tile.
 * Every kernel that writes the output probes the values it stores and notes a non-finite one
 * (cuda/nonfinite.cuh; NonFinite::noted): the direct sums of flagged tiles, and overflows.
 * Float32 filters along x alone and 2-D filters up to 33 x 65 take another path
 * (FftTiling::shared): one kernel that transforms pairs of row segments (rows.cu) or pairs of
 * 64 x 128 tiles (tiles.cu) in shared memory.
 * DRAM traffic per tile element: the gather's write, the transforms' passes over the buffer
 * (cuFFT's multi-kernel plans read and write it about twice each way), the product, the
 * scatter's read; the input is read about (N / T)^d times and the output written once.
 */
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/fft_tiling.hpp"
#include "cuda/device_buffer.cuh"
#include "cuda/fast/model.hpp"
#include "cuda/fft/rows.cuh"
#include "cuda/fft/tiles.cuh"
#include "cuda/launch.cuh"
#include "cuda/nonfinite.cuh"
#include "cuda/primitives/device.cuh"
#include "cuda/strategies.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

const char* cufft_error(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED (out of memory)";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    default:
      return "a cuFFT error";
  }
}

#define HALO_CUFFT_CHECK(call, what)                                                           \
  do {                                                                                         \
    const cufftResult halo_cufft_err_ = (call);                                                \
    if (halo_cufft_err_ != CUFFT_SUCCESS)                                                      \
      throw Error(std::string("cuFFT error while ") + std::string(what) + ": " +               \
                  cufft_error(halo_cufft_err_) + " (" + std::to_string(int(halo_cufft_err_)) + \
                  ") [" #call "]");                                                            \
  } while (0)

// Everything the kernels need of the problem and its tiling, by value.
struct FftGeometry {
  i64 n[3], k[3], anchor[3];  // extents, filter extents, anchors (z, y, x)
  i64 tile[3], count[3];      // outputs per tile and tiles per axis
  i64 fft[3];                 // transform lengths
  i64 pitch;                  // reals per buffer row: 2 (fft[2] / 2 + 1)
  i64 per_item;               // tiles per item of the batch
  Boundary mode[3];
};

// Where tile u (counted over the whole batch) starts: its item b and first output o per axis,
// and its outputs per axis (cnt).
struct TileAt {
  i64 b, o[3], cnt[3];
};
__device__ TileAt tile_at(const FftGeometry& g, i64 u) {
  TileAt t;
  t.b = u / g.per_item;
  i64 rest = u - t.b * g.per_item;
  for (int a = 2; a >= 0; --a) {
    const i64 idx = rest % g.count[a];
    rest /= g.count[a];
    t.o[a] = idx * g.tile[a];
    t.cnt[a] = min(g.tile[a], g.n[a] - t.o[a]);
  }
  return t;
}

// The gather and the scatter move rows in units of a warp: a segment of up to kSeg elements of
// one row of one tile, 16 per lane in steps of 32 (coalesced). The unit's tile and row are found
// once per unit, so the index arithmetic (64-bit divisions) is amortised over its elements.
constexpr int kSeg = 512;
constexpr int kWarpsPerBlock = 8;

// Step 1: the windows of tiles first .. first + tiles - 1 into the buffer, row by row.
template <class T>
__global__ void fft_gather(const T* __restrict__ in, T* __restrict__ buf, FftGeometry g, i64 first,
                           i64 tiles, T cval, int* __restrict__ flags) {
  const int lane = threadIdx.x % 32;
  const i64 segs = (g.fft[2] + kSeg - 1) / kSeg, rows = g.fft[0] * g.fft[1];
  const i64 units = tiles * rows * segs;
  for (i64 u = i64(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; u < units;
       u += i64(gridDim.x) * kWarpsPerBlock) {
    const i64 seg = u % segs, row = u / segs;  // row: over the batch's tiles
    const i64 local = row / rows;
    const i64 rz = (row / g.fft[1]) % g.fft[0], ry = row % g.fft[1];
    const TileAt t = tile_at(g, first + local);
    T* dst = buf + row * g.pitch;
    const bool inside = rz < t.cnt[0] + g.k[0] - 1 && ry < t.cnt[1] + g.k[1] - 1;
    const i64 iz = inside ? detail::map_index(t.o[0] - g.anchor[0] + rz, g.n[0], g.mode[0]) : -1;
    const i64 iy = inside ? detail::map_index(t.o[1] - g.anchor[1] + ry, g.n[1], g.mode[1]) : -1;
    const bool ghost_row = iz < 0 || iy < 0;
    const T* src = ghost_row ? in : in + ((t.b * g.n[0] + iz) * g.n[1] + iy) * g.n[2];
    const i64 win = inside ? t.cnt[2] + g.k[2] - 1 : 0, x0 = t.o[2] - g.anchor[2];
    const i64 begin = seg * kSeg, end = min(g.fft[2], (seg + 1) * kSeg);
    bool finite = true;
    if (!ghost_row && end <= win && x0 + begin >= 0 && x0 + end <= g.n[2]) {
      // The whole segment inside the window and the row: a plain copy, loads batched.
      const T* from = src + x0;
#pragma unroll 4
      for (i64 x = begin + lane; x < end; x += 32) {
        const T v = from[x];
        finite = finite && v - v == T(0);
        dst[x] = v;
      }
      if (!finite) flags[local] = 1;
      continue;
    }
    for (i64 x = begin + lane; x < end; x += 32) {
      T v = T(0);
      if (x < win) {
        const i64 gx = x0 + x;
        if (ghost_row) {
          v = cval;
        } else if (gx >= 0 && gx < g.n[2]) {
          v = src[gx];
        } else {
          const i64 ix = detail::map_index(gx, g.n[2], g.mode[2]);
          v = ix < 0 ? cval : src[ix];
        }
      }
      finite = finite && v - v == T(0);
      dst[x] = v;
    }
    if (!finite) flags[local] = 1;
  }
}

// Step 3: buf (tiles transforms of clen values) times the spectrum, elementwise. Threads over
// the values along x and over groups of tiles along y (short transforms have few values per
// tile: a 1-D tile of 8192 has 4097); each thread keeps its spectrum value and walks its tiles.
template <class C>
__global__ void fft_multiply(C* __restrict__ buf, const C* __restrict__ spectrum, i64 clen,
                             i64 tiles) {
  for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < clen;
       i += i64(gridDim.x) * blockDim.x) {
    const C s = spectrum[i];
    const i64 step = gridDim.y;
    C* c = buf + blockIdx.y * clen + i;
    i64 t = blockIdx.y;
    // Four tiles at a time, loads first, so that four are in flight per thread.
    for (; t + 3 * step < tiles; t += 4 * step, c += 4 * step * clen) {
      C v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = c[j * step * clen];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        C r;
        r.x = v[j].x * s.x - v[j].y * s.y;
        r.y = v[j].x * s.y + v[j].y * s.x;
        c[j * step * clen] = r;
      }
    }
    for (; t < tiles; t += step, c += step * clen) {
      const C v = *c;
      C r;
      r.x = v.x * s.x - v.y * s.y;
      r.y = v.x * s.y + v.y * s.x;
      *c = r;
    }
  }
}

// Step 5: the outputs of every unflagged tile of the batch, row by row; a non-finite one (an
// overflow) noted.
template <class T>
__global__ void fft_scatter(const T* __restrict__ buf, T* __restrict__ out, FftGeometry g,
                            i64 first, i64 tiles, const int* __restrict__ flags,
                            NonFiniteNote note) {
  const int lane = threadIdx.x % 32;
  T probe = T(0);
  const i64 segs = (g.tile[2] + kSeg - 1) / kSeg, rows = g.tile[0] * g.tile[1];
  const i64 units = tiles * rows * segs;
  for (i64 u = i64(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; u < units;
       u += i64(gridDim.x) * kWarpsPerBlock) {
    const i64 seg = u % segs, row = u / segs;
    const i64 local = row / rows;
    const i64 z = (row / g.tile[1]) % g.tile[0], y = row % g.tile[1];
    if (flags[local]) continue;
    const TileAt t = tile_at(g, first + local);
    if (z >= t.cnt[0] || y >= t.cnt[1]) continue;
    const T* src = buf + ((local * g.fft[0] + z) * g.fft[1] + y) * g.pitch;
    T* dst = out + ((t.b * g.n[0] + t.o[0] + z) * g.n[1] + t.o[1] + y) * g.n[2] + t.o[2];
    const i64 end = min(t.cnt[2], (seg + 1) * kSeg);
#pragma unroll 4
    for (i64 x = seg * kSeg + lane; x < end; x += 32) {
      const T v = src[x];
      dst[x] = v;
      probe = probe_nonfinite(probe, v);
    }
  }
  note(probe);
}

// Step 6: the outputs of each flagged tile summed directly in float64 from the input (every
// weight a tap, NaN and infinities included), a block per tile; the non-finite ones noted.
template <class T>
__global__ void fft_direct_tiles(const T* __restrict__ in, T* __restrict__ out, FftGeometry g,
                                 i64 first, i64 tiles, const int* __restrict__ flags,
                                 const double* __restrict__ w, double cval, NonFiniteNote note) {
  T probe = T(0);
  for (i64 local = blockIdx.x; local < tiles; local += gridDim.x) {
    if (!flags[local]) continue;
    const TileAt t = tile_at(g, first + local);
    const i64 outputs = t.cnt[0] * t.cnt[1] * t.cnt[2];
    for (i64 i = threadIdx.x; i < outputs; i += blockDim.x) {
      const i64 x = i % t.cnt[2], y = (i / t.cnt[2]) % t.cnt[1], z = i / (t.cnt[2] * t.cnt[1]);
      double acc = 0;
      for (i64 fz = 0; fz < g.k[0]; ++fz) {
        const i64 iz = detail::map_index(t.o[0] + z - g.anchor[0] + fz, g.n[0], g.mode[0]);
        for (i64 fy = 0; fy < g.k[1]; ++fy) {
          const i64 iy = detail::map_index(t.o[1] + y - g.anchor[1] + fy, g.n[1], g.mode[1]);
          const double* wr = w + (fz * g.k[1] + fy) * g.k[2];
          const bool ghost = iz < 0 || iy < 0;
          const T* row = ghost ? in : in + ((t.b * g.n[0] + iz) * g.n[1] + iy) * g.n[2];
          for (i64 fx = 0; fx < g.k[2]; ++fx) {
            const i64 ix = detail::map_index(t.o[2] + x - g.anchor[2] + fx, g.n[2], g.mode[2]);
            acc += wr[fx] * (ghost || ix < 0 ? cval : double(row[ix]));
          }
        }
      }
      const T v = T(acc);
      out[((t.b * g.n[0] + t.o[0] + z) * g.n[1] + t.o[1] + y) * g.n[2] + t.o[2] + x] = v;
      probe = probe_nonfinite(probe, v);
    }
  }
  note(probe);
}

// The correlation weights (kz x ky x kx) into a zeroed float64 tile of the in-place layout.
__global__ void fft_place_weights(double* __restrict__ tile, const double* __restrict__ w,
                                  FftGeometry g) {
  const i64 taps = g.k[0] * g.k[1] * g.k[2];
  for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < taps;
       i += i64(gridDim.x) * blockDim.x) {
    const i64 x = i % g.k[2], y = (i / g.k[2]) % g.k[1], z = i / (g.k[2] * g.k[1]);
    tile[(z * g.fft[1] + y) * g.pitch + x] = w[i];
  }
}

// The spectrum the tiles are multiplied by: conj(W) / L, rounded once to the dtype.
template <class C>
__global__ void fft_finish_spectrum(const cufftDoubleComplex* __restrict__ W, C* __restrict__ s,
                                    i64 clen, double scale) {
  for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < clen;
       i += i64(gridDim.x) * blockDim.x) {
    s[i].x = W[i].x * scale;
    s[i].y = -W[i].y * scale;
  }
}

// ---------------------------------------------------------------------------------------------
// cuFFT plans: made once per transform shape, batch and device, kept for the process (making a
// plan takes longer than running most of them). Made without their own work area: each run
// allocates one and sets it, so that apply() counts it and a cached plan holds no more than its
// twiddles. Every use of a plan (setting the stream and work area, enqueuing) holds the lock;
// the plan is fixed at enqueue time, so runs on different streams may overlap.
// ---------------------------------------------------------------------------------------------
struct PlanPair {
  cufftHandle forward = 0, inverse = 0;
  std::size_t work = 0;  // bytes of work area either needs
};
using PlanKey = std::tuple<int, bool, i64, i64, i64, i64>;  // device, f64, fft z/y/x, batch

std::mutex& plan_lock() {
  static std::mutex m;
  return m;
}
std::map<PlanKey, PlanPair>& plan_cache() {
  static std::map<PlanKey, PlanPair> c;
  return c;
}
// More distinct shapes than this free the cache first (after the device has finished with them).
constexpr std::size_t kMaxPlans = 32;

// The transformed axes' lengths and the in-place layout's embeddings (real and complex rows).
struct Layout {
  int rank = 0;
  long long n[3], real[3], complex[3];
  long long real_dist = 0, complex_dist = 0;
};
Layout layout_of(const detail::FftTiling& t) {
  Layout l;
  const i64 pitch = 2 * (t.fft[2] / 2 + 1);
  for (int a = 0; a < 3; ++a) {
    if (t.fft[a] == 1 && a != 2) continue;
    l.n[l.rank] = t.fft[a];
    l.real[l.rank] = a == 2 ? pitch : t.fft[a];
    l.complex[l.rank] = a == 2 ? pitch / 2 : t.fft[a];
    ++l.rank;
  }
  l.real_dist = t.fft[0] * t.fft[1] * pitch;
  l.complex_dist = l.real_dist / 2;
  return l;
}

// The forward and inverse plans of batches of `batch` tiles. Call with plan_lock() held.
PlanPair& plans_for(const detail::FftTiling& t, bool f64, i64 batch) {
  int dev = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "asking for the current device");
  const PlanKey key{dev, f64, t.fft[0], t.fft[1], t.fft[2], batch};
  auto& cache = plan_cache();
  const auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxPlans) {
    HALO_CUDA_CHECK(cudaDeviceSynchronize(), "waiting for the device before freeing FFT plans");
    for (auto& kv : cache) {
      cufftDestroy(kv.second.forward);
      cufftDestroy(kv.second.inverse);
    }
    cache.clear();
  }
  Layout l = layout_of(t);
  PlanPair pp;
  const auto what = [&] {
    std::string s = "planning " + std::to_string(batch) + " transforms of ";
    for (int i = 0; i < l.rank; ++i) s += (i ? "x" : "") + std::to_string(l.n[i]);
    return s + (f64 ? " (double)" : " (float)");
  };
  const auto make = [&](cufftHandle& h, bool inverse) {
    HALO_CUFFT_CHECK(cufftCreate(&h), what());
    HALO_CUFFT_CHECK(cufftSetAutoAllocation(h, 0), what());
    std::size_t work = 0;
    const cufftType type =
        f64 ? (inverse ? CUFFT_Z2D : CUFFT_D2Z) : (inverse ? CUFFT_C2R : CUFFT_R2C);
    long long* in_embed = inverse ? l.complex : l.real;
    long long* out_embed = inverse ? l.real : l.complex;
    const long long in_dist = inverse ? l.complex_dist : l.real_dist;
    const long long out_dist = inverse ? l.real_dist : l.complex_dist;
    const cufftResult r = cufftMakePlanMany64(h, l.rank, l.n, in_embed, 1, in_dist, out_embed, 1,
                                              out_dist, type, batch, &work);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(h);
      h = 0;
      HALO_CUFFT_CHECK(r, what());
    }
    pp.work = std::max(pp.work, work);
  };
  make(pp.forward, false);
  try {
    make(pp.inverse, true);
  } catch (...) {
    cufftDestroy(pp.forward);
    throw;
  }
  return cache.emplace(key, pp).first->second;
}

// One batch of transforms in place on `stream` with the run's work area: forward (R2C / D2Z) or
// inverse (C2R / Z2D) of `batch` tiles of tiling t in T's precision. The plan is set and
// enqueued under the plan lock (plans are shared between threads).
template <class T>
void transform(const detail::FftTiling& t, i64 batch, bool inverse, T* buf, void* work,
               cudaStream_t stream, const std::string& what) {
  using C = std::conditional_t<std::is_same_v<T, float>, cufftComplex, cufftDoubleComplex>;
  constexpr bool f64 = std::is_same_v<T, double>;
  std::lock_guard<std::mutex> lock(plan_lock());
  const PlanPair& pp = plans_for(t, f64, batch);
  const cufftHandle h = inverse ? pp.inverse : pp.forward;
  HALO_CUFFT_CHECK(cufftSetStream(h, stream), "setting the stream for " + what);
  HALO_CUFFT_CHECK(cufftSetWorkArea(h, work), "setting the work area for " + what);
  C* const c = reinterpret_cast<C*>(buf);
  if constexpr (f64)
    HALO_CUFFT_CHECK(inverse ? cufftExecZ2D(h, c, buf) : cufftExecD2Z(h, buf, c), what);
  else
    HALO_CUFFT_CHECK(inverse ? cufftExecC2R(h, c, buf) : cufftExecR2C(h, buf, c), what);
}

// The geometry of p under tiling t.
FftGeometry geometry_of(const Problem& p, const detail::FftTiling& t) {
  FftGeometry g;
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const int rank = p.rank();
  const i64 nn[3] = {n.z, n.y, n.x}, kk[3] = {k.z, k.y, k.x}, aa[3] = {a.z, a.y, a.x};
  g.per_item = 1;
  for (int i = 0; i < 3; ++i) {
    g.n[i] = nn[i], g.k[i] = kk[i], g.anchor[i] = aa[i];
    g.tile[i] = t.tile[i], g.fft[i] = t.fft[i];
    g.count[i] = (nn[i] + t.tile[i] - 1) / t.tile[i];
    g.per_item *= g.count[i];
  }
  g.pitch = 2 * (t.fft[2] / 2 + 1);
  g.mode[0] = rank == 3 ? p.mode(0) : Boundary::constant;
  g.mode[1] = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  g.mode[2] = p.mode(rank - 1);
  return g;
}

constexpr int kThreads = 32 * kWarpsPerBlock;

template <class T>
void run_typed(const Problem& p, const T* in, T* out, cudaStream_t stream, NonFiniteNote note) {
  using C = std::conditional_t<std::is_same_v<T, float>, cufftComplex, cufftDoubleComplex>;
  constexpr bool f64 = std::is_same_v<T, double>;
  const detail::FftTiling t = detail::cuda_fft_tiling(p);
  if constexpr (!f64) {
    if (t.shared) {
      if (t.fft[1] == 1) return run_fft_rows(p, t, in, out, stream, note);
      return run_fft_tiles(p, t, in, out, stream, note);
    }
  }
  const i64 batch = detail::cuda_fft_batch(p, t);
  const i64 total = t.tiles * p.batch();
  const FftGeometry g = geometry_of(p, t);
  const i64 clen = t.complex_elements();
  const std::string desc = p.describe();

  // One allocation: the tiles (also the float64 tile of the weights' transform first), cuFFT's
  // work area, the spectrum in T, the tiles' flags, the weights (float64, for flagged tiles).
  const i64 last = total % batch ? total % batch : batch;
  std::size_t work_bytes = 0;
  {
    std::lock_guard<std::mutex> lock(plan_lock());
    work_bytes = std::max(
        {plans_for(t, f64, batch).work, plans_for(t, f64, last).work, plans_for(t, true, 1).work});
  }
  const std::vector<double>& w = p.correlation_weights();
  const i64 tile_reals = g.fft[0] * g.fft[1] * g.pitch;
  const auto up = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t tiles_bytes = up(std::size_t(
                        std::max<i64>(batch * tile_reals * i64(sizeof(T)), tile_reals * 8))),
                    work_at = tiles_bytes, spectrum_at = work_at + up(work_bytes),
                    flags_at = spectrum_at + up(std::size_t(clen) * sizeof(C)),
                    weights_at = flags_at + up(std::size_t(batch) * sizeof(int)),
                    bytes = weights_at + w.size() * sizeof(double);
  DeviceBuffer mem(bytes, "the FFT tiles, cuFFT's work area and the filter's spectrum for " + desc,
                   stream);  // freed in stream order: the run stays asynchronous
  char* const base = static_cast<char*>(mem.p);
  T* const buf = reinterpret_cast<T*>(base);
  void* const work = base + work_at;
  C* const spectrum = reinterpret_cast<C*>(base + spectrum_at);
  int* const flag = reinterpret_cast<int*>(base + flags_at);
  double* const weights = reinterpret_cast<double*>(base + weights_at);
  HALO_CUDA_CHECK(
      cudaMemcpyAsync(weights, w.data(), w.size() * sizeof(double), cudaMemcpyHostToDevice, stream),
      "copying the filter's weights");
  // The spectrum: the weights zero-padded to a tile, transformed in float64 (D2Z), conjugated,
  // scaled by 1 / L and rounded once to T.
  double* const wt = reinterpret_cast<double*>(base);
  HALO_CUDA_CHECK(cudaMemsetAsync(wt, 0, std::size_t(tile_reals) * 8, stream),
                  "clearing the filter's tile");
  const int sms = prim::current_device_facts().multiprocessors;
  const auto grid = [&](i64 blocks) { return unsigned(std::clamp<i64>(blocks, 1, i64(sms) * 16)); };
  fft_place_weights<<<grid((i64(w.size()) + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      wt, weights, g);
  HALO_CUDA_CHECK_LAUNCH("launching fft_place_weights for " + desc);
  transform<double>(t, 1, false, wt, work, stream, "transforming the filter of " + desc);
  fft_finish_spectrum<C><<<grid((clen + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      reinterpret_cast<const cufftDoubleComplex*>(wt), spectrum, clen, 1.0 / double(t.elements()));
  HALO_CUDA_CHECK_LAUNCH("launching fft_finish_spectrum for " + desc);

  for (i64 first = 0; first < total; first += batch) {
    const i64 nt = std::min(batch, total - first);
    HALO_CUDA_CHECK(cudaMemsetAsync(flag, 0, std::size_t(nt) * sizeof(int), stream),
                    "clearing the FFT tiles' flags");
    const auto units = [&](i64 rows, i64 len) {
      return (rows * ((len + kSeg - 1) / kSeg) + kWarpsPerBlock - 1) / kWarpsPerBlock;
    };
    fft_gather<T><<<grid(units(nt * g.fft[0] * g.fft[1], g.fft[2])), kThreads, 0, stream>>>(
        in, buf, g, first, nt, T(p.cval()), flag);
    HALO_CUDA_CHECK_LAUNCH("launching fft_gather for " + desc);
    transform<T>(t, nt, false, buf, work, stream, "transforming the tiles of " + desc);
    {
      // About 16 blocks per SM in all, at most one tile group per tile.
      const unsigned gx = grid((clen + kThreads - 1) / kThreads);
      const unsigned gy =
          unsigned(std::clamp<i64>(i64(sms) * 16 / gx, 1, std::min<i64>(nt, 65535)));
      fft_multiply<C>
          <<<dim3(gx, gy), kThreads, 0, stream>>>(reinterpret_cast<C*>(buf), spectrum, clen, nt);
    }
    HALO_CUDA_CHECK_LAUNCH("launching fft_multiply for " + desc);
    transform<T>(t, nt, true, buf, work, stream, "transforming the tiles of " + desc + " back");
    fft_scatter<T><<<grid(units(nt * g.tile[0] * g.tile[1], g.tile[2])), kThreads, 0, stream>>>(
        buf, out, g, first, nt, flag, note);
    HALO_CUDA_CHECK_LAUNCH("launching fft_scatter for " + desc);
    fft_direct_tiles<T><<<grid(nt), kThreads, 0, stream>>>(in, out, g, first, nt, flag, weights,
                                                           double(T(p.cval())), note);
    HALO_CUDA_CHECK_LAUNCH("launching fft_direct_tiles for " + desc);
  }
  // cudaFree (the buffers' destructors) waits for the device, so the buffers outlive the work.
}

// The direct sum's modelled time the transforms are weighed against: `fast`'s model where it
// runs p, else the tiling's (detail::cuda_fft_tiling: the taps at `fast`'s rate; for the rows of
// a 2-D or 3-D array, separable's x pass).
double direct_ns(const Problem& p, const detail::FftTiling& t) {
  const int r = int(std::min<std::int64_t>(p.max_radius(), 1 << 20));
  return fast::compiled_radius(p.rank(), p.dtype(), r) >= 0 ? fast::modelled_ns(p) : t.direct_ns;
}

class FftStrategy final : public Strategy {
 public:
  std::string name() const override { return "fft"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "tiled overlap-save: batches of tile windows transformed by cuFFT, multiplied by the "
           "filter's spectrum, transformed back (large dense filters); in float32, filters along "
           "x and 2-D filters up to 33x65 by transforms in shared memory, one kernel";
  }
  Status can_implement(const Problem& p) const override {
    if (p.direct_sums())
      return Status::failure(
          "direct sums required: the FFT mixes every input of a tile into every output "
          "(docs/ACCURACY.md, FFT)");
    try {
      detail::cuda_fft_tiling(p);
    } catch (const Error& e) {
      return Status::failure(e.what());
    }
    return Status::success();
  }
  // The transforms' modelled time (detail::cuda_fft_tiling, scaled by FastTuning::fft_cost:
  // docs/notes/tuning.md, "FFT on the GPU"). No estimate for a rank-1 filter of a 2-D or 3-D
  // array within `fast`'s radii: 1-D passes run it (`separable`), in about a copy's time.
  Estimate estimate(const Problem& p) const override {
    const int r = int(std::min<std::int64_t>(p.max_radius(), 1 << 20));
    if (p.rank() > 1 && fast::compiled_radius(p.rank(), p.dtype(), r) >= 0 &&
        detail::separable_windows(p))
      return Estimate::none("a rank-1 filter within fast's radii runs as 1-D passes");
    // The transforms' model counts their work, not the arrays' bytes: no run moves less than
    // tiles with the filter's halos (fast::filter_move_ns), the floor (ties go to `fast`).
    const detail::FftTiling t = detail::cuda_fft_tiling(p);
    return {std::max(detail::cuda_fft_weighed_ns(p, t), fast::filter_move_ns(p)),
            "the tiles' transforms x fft_cost, at least fast's moving of the arrays"};
  }
  std::string plan(const Problem& p) const override {
    const detail::FftTiling t = detail::cuda_fft_tiling(p);
    char model[96];
    std::snprintf(model, sizeof model, "; modelled %.3g ms against %.3g ms for the direct sum",
                  t.fft_ns * 1e-6, direct_ns(p, t) * 1e-6);
    if (t.shared && t.fft[1] == 1)
      return "row transforms in shared memory: segments of " +
             std::to_string(t.fft[2] - p.filter_dims3().x + 1) + " outputs in pairs, a complex " +
             "transform of " + std::to_string(t.fft[2]) + " points per pair, " +
             std::to_string(t.tiles * p.batch()) + " pairs" + model;
    if (t.shared)
      return "tile transforms in shared memory: tiles of " +
             std::to_string(64 - p.filter_dims3().y + 1) + "x" +
             std::to_string(128 - p.filter_dims3().x + 1) +
             " outputs in pairs along x, a complex 64x128 transform per pair, " +
             std::to_string(t.tiles * p.batch()) + " pairs" + model;
    const int rank = p.rank();
    std::string tile, fft;
    for (int a = 3 - rank; a < 3; ++a) {
      tile += (tile.empty() ? "" : "x") + std::to_string(t.tile[a]);
      fft += (fft.empty() ? "" : "x") + std::to_string(t.fft[a]);
    }
    const char* kind = per_dtype(p.dtype(), "R2C/C2R", "D2Z/Z2D", "fft's transform kind");
    return "overlap-save tiles of " + tile + " outputs, transforms of " + fft + " (cuFFT, " +
           kind + ", in place), " +
           std::to_string(t.tiles * p.batch()) + " tiles in batches of " +
           std::to_string(detail::cuda_fft_batch(p, t)) + model;
  }
  Summation summation(const Problem&) const override { return Summation::fft; }
  Traffic model(const Problem& p) const override {
    // The transforms' FLOPs (5 L log2 L per complex transform, half of that for real data, two
    // of them) and the products (6 per complex value), per tile.
    const detail::FftTiling t = detail::cuda_fft_tiling(p);
    const double L = double(t.elements()), tiles = double(t.tiles * p.batch());
    if (t.shared)  // two complex transforms of L points and L complex products per pair
      return {p.bytes(), tiles * (10.0 * L * std::log2(L) + 6.0 * L)};
    return {p.bytes(),
            tiles * (5.0 * L * std::log2(std::max(2.0, L)) + 6.0 * double(t.complex_elements()))};
  }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const detail::FftTiling t = detail::cuda_fft_tiling(p);
    if (t.shared)  // as run_fft_rows and run_fft_tiles allocate them
      return {
          {"the twiddles (float32 and float64), the filter's spectrum and weights",
           (t.fft[1] == 1 ? 32.0 * double(t.fft[2]) + 2048 : 8.0 * double(t.elements()) + 4608) +
               double(p.filter().taps()) * 8,
           MemorySpace::device}};
    const i64 batch = detail::cuda_fft_batch(p, t);
    const double e = double(dtype_size(p.dtype()));
    const double tile = double(t.fft[0] * t.fft[1] * 2 * (t.fft[2] / 2 + 1));
    const double buffer = std::max(double(batch) * tile * e, tile * 8);
    return {{"the filter's spectrum and weights",
             2.0 * double(t.complex_elements()) * e + double(p.filter().taps()) * 8,
             MemorySpace::device},
            {"FFT tiles, " + std::to_string(batch) + " per batch", buffer, MemorySpace::device},
            {"cuFFT's work area (at most the tiles' size)", buffer, MemorySpace::device}};
  }
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    const auto st = static_cast<cudaStream_t>(stream);
    dispatch_buffers(p.dtype(), b.input, b.output, [&](auto* in, auto* out) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
      run_typed<T>(p, in, out, st, NonFiniteNote::of(b));
    });
  }
  // Every kernel that writes the output (the scatter, the direct sums of flagged tiles and
  // pairs, the shared-memory transforms' stores) notes a non-finite output it stores.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

}  // namespace

std::unique_ptr<Strategy> make_fft_strategy() { return std::make_unique<FftStrategy>(); }

}  // namespace halo::cuda

namespace halo::detail {

double cuda_fft_model_ratio(const Problem& p) {
  const FftTiling t = cuda_fft_tiling(p);
  return t.fft_ns / cuda::direct_ns(p, t);
}

}  // namespace halo::detail
