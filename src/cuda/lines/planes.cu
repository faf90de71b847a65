// strategy: planes — a dense filter over the last two axes (SciPy's correlate and convolve of an
// image, NPP's general filter) on the arrays' own 8- and 16-bit integer types, read and written at
// their own width. A block stages a tile of 64 x 32 outputs plus the filter's reach (mapped by the
// axes' modes) as float in shared memory; each thread sums kR = 8 outputs of one column in
// registers, loading each staged value once per filter column. The tile is read as 32-bit words
// where rows are 4-byte aligned. Square filters of odd sides up to 15 (the usual ones) are
// template parameters, so that their loops unroll; others loop. Sums in float32; an integer
// output is SciPy's truncation wherever the sum's bound decides it, and SciPy's own float64 sum
// in its order (scipy_sum_at, read from the input) where it does not. The weights travel as
// kernel parameters.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/boundary.hpp"
#include "core/convert.hpp"
#include "core/dtype.hpp"
#include "core/profile.hpp"
#include "core/scipy_sum.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/scipy_sum.cuh"
#include "cuda/strategies.hpp"

namespace halo::cuda {
namespace {

using i64 = std::int64_t;

constexpr int kMaxSide = 31;                   // filter height and width
constexpr int kR = 8;                          // outputs a thread sums (one column)
constexpr int kTileX = 32, kTileY = 8 * kR;    // a block's outputs: 32 x 64, 256 threads

struct PlaneTaps {
  float w[kMaxSide * kMaxSide];  // ky x kx, row-major
};

struct PlaneArgs {
  i64 planes, nz, ny, nx;  // planes: batch * nz, each ny x nx
  int ky, kx, ay, ax;      // filter extents and anchors
  Boundary my, mx;
  float cval;
  float bound;             // truncation_undecided's bound (float sums)
  double cval_d;
  Rounding rounding;
};

// SciPy's sum of output (y, x) of plane `plane`, in its order. Out of line: it runs rarely, and
// inlined at each of a thread's kR stores it would multiply the kernel's code.
template <class S>
__device__ __noinline__ double plane_scipy_sum(const S* in, i64 plane, i64 y, i64 x,
                                               const PlaneArgs& a,
                                               const detail::ScipySumView& sum) {
  const i64 b = plane / a.nz, z = plane % a.nz;
  return detail::scipy_sum_at(sum, in + b * a.nz * a.ny * a.nx, z, y, x, a.cval_d);
}

// Output (y, x) of plane `plane`, at dst, from its float sum: as SciPy stores it.
template <class S, class T>
__device__ inline void store_plane(T* dst, const S* in, i64 plane, i64 y, i64 x, float acc,
                                   const PlaneArgs& a, const detail::ScipySumView& sum) {
  if constexpr (std::is_integral_v<T>) {
    if (a.rounding == Rounding::nearest) {
      *dst = detail::nearest_cast<T>(double(acc));
    } else if (!detail::truncation_undecided(acc, a.bound)) {
      *dst = detail::scipy_cast_from<T>(acc);
    } else {
      *dst = detail::scipy_cast<T>(plane_scipy_sum(in, plane, y, x, a, sum));
    }
  } else {
    *dst = detail::from_accum_float<T>(acc);
  }
}

// A 32-bit word of E = 4 / sizeof(S) elements as floats at dst (16- or 8-byte aligned).
template <class S>
__device__ inline void store_word(float* dst, std::uint32_t w) {
  if constexpr (sizeof(S) == 1) {
    *reinterpret_cast<float4*>(dst) = make_float4(float(w & 0xffu), float((w >> 8) & 0xffu),
                                                  float((w >> 16) & 0xffu), float(w >> 24));
  } else if constexpr (std::is_signed_v<S>) {
    *reinterpret_cast<float2*>(dst) = make_float2(float(std::int16_t(w & 0xffffu)),
                                                  float(std::int16_t(w >> 16)));
  } else {
    *reinterpret_cast<float2*>(dst) = make_float2(float(w & 0xffffu), float(w >> 16));
  }
}

// Stages the tile whose first row and column are (fy, fx) of plane src: rows x tw values, tile
// column j (image column fx + j) at tile[r * tws + off + j]; kBatch loads in flight per thread
// (the loads' latency, not their bytes, is what a tile of 8-bit values waits on). Inside the
// plane, where its rows are 4-byte aligned (words), as 32-bit words (off: fx's offset in its
// word), the lanes of a warp covering as many rows as fit; elsewhere element by element through
// the modes.
constexpr int kBatch = 8;

template <class S>
__device__ inline void stage_plane(float* tile, int tws, int off, const S* src, i64 fy, i64 fx,
                                   int rows, int tw, const PlaneArgs& a, bool words) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool inside = fy >= 0 && fy + rows <= a.ny && fx >= 0 && fx + tw <= a.nx;
  if (inside && words) {
    constexpr int E = 4 / int(sizeof(S));
    const int nw = (off + tw + E - 1) / E;  // words a row, at most 32 (kx <= 31)
    const int rpw = 32 / nw;                // rows a warp stages at once
    const int wr = tx / nw, wi = tx % nw;   // this lane's row among them, and word
    if (wr >= rpw) return;
    const auto* base = reinterpret_cast<const std::uint32_t*>(src + fy * a.nx + fx - off) + wi;
    const i64 stride = a.nx / E;  // words a plane row
    for (int rb = ty * rpw + wr; rb < rows; rb += 8 * rpw * kBatch) {
      std::uint32_t v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (rb + 8 * rpw * u < rows) v[u] = __ldg(base + i64(rb + 8 * rpw * u) * stride);
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (rb + 8 * rpw * u < rows) store_word<S>(tile + (rb + 8 * rpw * u) * tws + wi * E, v[u]);
    }
    return;
  }
  for (int c = tx; c < tw; c += kTileX) {
    for (int rb = ty; rb < rows; rb += 8 * kBatch) {
      float v[kBatch];
      if (inside) {
        const S* col = src + (fy + rb) * a.nx + fx + c;
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
          if (rb + 8 * u < rows) v[u] = detail::to_accum<float>(col[i64(8 * u) * a.nx]);
      } else {
        const i64 xx = detail::map_index(fx + c, a.nx, a.mx);
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
          if (rb + 8 * u >= rows) break;
          const i64 yy = detail::map_index(fy + rb + 8 * u, a.ny, a.my);
          v[u] = yy < 0 || xx < 0 ? a.cval : detail::to_accum<float>(src[yy * a.nx + xx]);
        }
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (rb + 8 * u < rows) tile[(rb + 8 * u) * tws + off + c] = v[u];
    }
  }
}

// blockDim (32, 8); block (bx over nx / 32, by over the (plane, 64-row tile) pairs, strided).
// K: the filter's height and width for the usual square filters, whose loops then unroll (its
// column's values and the weights' offsets in registers), or 0 for any (a.ky x a.kx).
template <class S, class T, int K>
__global__ void __launch_bounds__(256) planes_kernel(const S* __restrict__ in, T* __restrict__ out,
                                                     const __grid_constant__ PlaneTaps taps,
                                                     const PlaneArgs a,
                                                     const detail::ScipySumView sum, bool words) {
  extern __shared__ float4 tile4[];  // (kTileY + ky - 1) x tws
  float* tile = reinterpret_cast<float*>(tile4);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int ky = K > 0 ? K : a.ky, kx = K > 0 ? K : a.kx;
  const int tw = kTileX + kx - 1, rows = kTileY + ky - 1;
  // A tile row: the words' reach past tw (off and the last word, up to 6 more), 16-byte aligned.
  const int tws = (tw + 9) / 4 * 4;
  constexpr int E = 4 / int(sizeof(S));
  const int off = int(((-i64(a.ax)) % E + E) % E);  // (x0 - ax) mod E, x0 a multiple of 32
  const i64 x0 = i64(blockIdx.x) * kTileX, x = x0 + tx;
  const i64 ytiles = (a.ny + kTileY - 1) / kTileY;
  const int r0 = ty * kR;
  for (i64 t = blockIdx.y; t < a.planes * ytiles; t += gridDim.y) {
    const i64 plane = t / ytiles, y0 = (t % ytiles) * kTileY;
    stage_plane(tile, tws, off, in + plane * a.ny * a.nx, y0 - a.ay, x0 - a.ax, rows, tw, a,
                words);
    __syncthreads();
    float acc[kR];
#pragma unroll
    for (int q = 0; q < kR; ++q) acc[q] = 0.0f;
    const float* tp = tile + r0 * tws + off + tx;
    if constexpr (K > 0) {
#pragma unroll
      for (int dx = 0; dx < K; ++dx) {
        float v[kR + K - 1];
#pragma unroll
        for (int i = 0; i < kR + K - 1; ++i) v[i] = tp[i * tws + dx];
#pragma unroll
        for (int dy = 0; dy < K; ++dy) {
          const float w = taps.w[dy * K + dx];
#pragma unroll
          for (int q = 0; q < kR; ++q) acc[q] = fmaf(w, v[dy + q], acc[q]);
        }
      }
    } else {
      for (int dx = 0; dx < kx; ++dx)
        for (int dy = 0; dy < ky; ++dy) {
          const float w = taps.w[dy * kx + dx];
#pragma unroll
          for (int q = 0; q < kR; ++q) acc[q] = fmaf(w, tp[(dy + q) * tws + dx], acc[q]);
        }
    }
    if (x < a.nx) {
      T* dst = out + (plane * a.ny + y0 + r0) * a.nx + x;
#pragma unroll
      for (int q = 0; q < kR; ++q)
        if (y0 + r0 + q < a.ny)
          store_plane(dst + q * a.nx, in, plane, y0 + r0 + q, x, acc[q], a, sum);
    }
    __syncthreads();
  }
}

using PlaneDTypes = DTypeList<DType::u8, DType::u16, DType::i16>;

bool plane_dtype(DType t) { return t == DType::u8 || t == DType::u16 || t == DType::i16; }

class PlanesPlan final : public StrategyPlan {
 public:
  PlanesPlan(const Strategy& s, const Problem& p) : StrategyPlan(s, p), sum_(p) {
    const Extents& e = p.extents();
    const int r = p.rank();
    a_.ny = e[r - 2];
    a_.nx = e[r - 1];
    a_.nz = r == 3 ? e[0] : 1;
    a_.planes = p.batch() * a_.nz;
    a_.ky = int(p.filter_extents()[r - 2]);
    a_.kx = int(p.filter_extents()[r - 1]);
    a_.ay = int(p.anchor()[r - 2]);
    a_.ax = int(p.anchor()[r - 1]);
    a_.my = p.mode(r - 2);
    a_.mx = p.mode(r - 1);
    a_.cval = float(p.cval());
    a_.cval_d = p.cval();
    a_.rounding = p.rounding();
    const std::vector<double>& cw = p.correlation_weights();  // (.., ky, kx), row-major
    double wsum = 0;
    bool integral = std::isfinite(p.cval()) && p.cval() == std::nearbyint(p.cval());
    const double eps = std::numeric_limits<double>::epsilon();
    for (int j = 0; j < a_.ky * a_.kx; ++j) {
      // The taps SciPy sums (NI_Correlate skips |w| <= DBL_EPSILON outside Footprint::every).
      const bool use = p.footprint() == Footprint::every || std::fabs(cw[j]) > eps;
      taps_.w[j] = use ? float(cw[j]) : 0.0f;
      wsum += std::fabs(cw[j]);
      integral = integral && cw[j] == std::nearbyint(cw[j]);
    }
    const DType t = p.dtype();
    const double xmax = t == DType::u8 ? 255.0 : t == DType::u16 ? 65535.0 : 32768.0;
    const double m = std::max(xmax, std::fabs(p.cval()));
    // A float sum of K taps in any order: (K + 8) units of float32 and SciPy's (K + 2) of
    // float64, as ConvertedBase::bound_scale; integral weights and cval sum exactly.
    const double k = double(a_.ky) * a_.kx;
    a_.bound = integral && wsum * m < 0x1p24
                   ? -1.0f
                   : float(((k + 8) * 0x1p-24 + (k + 2) * 0x1p-53) * wsum * m);
  }
  Estimate estimate() const override {
    // Measured on an H200 (docs/notes/integer-kernels.md), 16384^2 uint8: ps an output at 9, 25,
    // 81 and 225 taps, interpolated (beyond: the last slope); 16-bit inputs 3.6 times that (a
    // float32 sum of 16-bit values is undecided far more often: SciPy's sum recomputed).
    static const double taps_at[] = {9, 25, 81, 225}, ps_at[] = {7.2, 14.1, 25.5, 73.4};
    const double taps = double(a_.ky) * a_.kx;
    int i = 0;
    while (i < 2 && taps > taps_at[i + 1]) ++i;
    const double slope = (ps_at[i + 1] - ps_at[i]) / (taps_at[i + 1] - taps_at[i]);
    double ps = std::max(ps_at[0], ps_at[i] + slope * (taps - taps_at[i]));
    if (problem().dtype() != DType::u8) ps *= 3.6;
    return {double(problem().elements()) * ps * 1e-3 + 6e3,
            "per output, from H200 measurements at 9 to 225 taps (instruction-bound), and a "
            "launch"};
  }
  std::string describe() const override {
    return std::to_string(a_.ky) + "x" + std::to_string(a_.kx) + " taps over " +
           std::to_string(a_.planes) + (a_.planes == 1 ? " plane" : " planes");
  }
  NonFinite nonfinite() const override { return NonFinite::exact; }
  std::vector<MemoryUse> workspace() const override {
    return {{"SciPy's taps for undecided integer outputs", double(scipy_sum_bytes(sum_)),
             MemorySpace::device}};
  }
  void run(const Buffers& b, void* stream) const override;

 private:
  template <int K>
  void launch(const Buffers& b, cudaStream_t st, const detail::ScipySumView& v) const;

  PlaneArgs a_{};
  PlaneTaps taps_{};
  detail::ScipySum sum_;
};

template <int K>
void PlanesPlan::launch(const Buffers& b, cudaStream_t st, const detail::ScipySumView& v) const {
  const Problem& p = problem();
  dispatch_dtype<PlaneDTypes>(p.dtype(), [&](auto di) {
    using S = typename decltype(di)::storage;
    const S* in = static_cast<const S*>(b.input);
    // Rows as 32-bit words where every row starts on a 4-byte boundary.
    const bool words = reinterpret_cast<std::uintptr_t>(in) % 4 == 0 &&
                       (a_.nx * i64(sizeof(S))) % 4 == 0;
    const auto go = [&](auto* out) {
      using T = std::remove_pointer_t<decltype(out)>;
      // Enough blocks to fill the GPU a few times over; each loops over its share of tiles.
      const i64 bx = (a_.nx + kTileX - 1) / kTileX;
      const i64 tiles = a_.planes * ((a_.ny + kTileY - 1) / kTileY);
      const i64 by = std::min<i64>(tiles, std::max<i64>(1, 8192 / bx));
      const dim3 grid(unsigned(bx), unsigned(std::min<i64>(by, 65535)));
      const std::size_t tws = std::size_t(kTileX + a_.kx - 1 + 9) / 4 * 4;  // as the kernel's
      const std::size_t shm = std::size_t(kTileY + a_.ky - 1) * tws * 4;
      planes_kernel<S, T, K><<<grid, dim3(kTileX, 8), shm, st>>>(in, out, taps_, a_, v, words);
    };
    // The input's own type or float32 out (accepts_dtypes).
    if (p.out_dtype() == DType::f32)
      go(static_cast<float*>(b.output));
    else
      go(static_cast<S*>(b.output));
  });
}

void PlanesPlan::run(const Buffers& b, void* stream) const {
  const Problem& p = problem();
  const auto st = static_cast<cudaStream_t>(stream);
  const std::string what = p.describe() + " (strategy planes)";
  DeviceBuffer taps(scipy_sum_bytes(sum_) + 8, "SciPy's taps of " + what, st);
  const detail::ScipySumView v = upload_scipy_sum(sum_, taps.p, 0, st, what);
  switch (a_.ky == a_.kx ? a_.ky : 0) {
    case 3: launch<3>(b, st, v); break;
    case 5: launch<5>(b, st, v); break;
    case 7: launch<7>(b, st, v); break;
    case 9: launch<9>(b, st, v); break;
    case 11: launch<11>(b, st, v); break;
    case 13: launch<13>(b, st, v); break;
    case 15: launch<15>(b, st, v); break;
    default: launch<0>(b, st, v); break;
  }
  HALO_CUDA_CHECK_LAUNCH("launching planes on " + p.describe());
}

class PlanesStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "planes"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "a dense filter over the last two axes on uint8/uint16/int16 at their own width, "
           "integers exactly SciPy's";
  }
  Status accepts_dtypes(const Problem& p) const override {
    const DType o = p.out_dtype();
    if (plane_dtype(p.dtype()) && (o == p.dtype() || o == DType::f32)) return Status::success();
    return Status::failure("written for uint8, uint16 and int16 input (the same or float32 out)");
  }
  Prepared prepare(const Problem& p) const override {
    if (const Status dt = accepts_dtypes(p); !dt) return Prepared::cannot(dt.reason);
    const int r = p.rank();
    if (r < 2) return Prepared::cannot("two axes or three");
    const Extents& k = p.filter_extents();
    if (k[r - 2] < 2 || k[r - 1] < 2 || (r == 3 && k[0] != 1))
      return Prepared::cannot("a filter over exactly the last two axes");
    if (k[r - 2] > kMaxSide || k[r - 1] > kMaxSide)
      return Prepared::cannot("at most " + std::to_string(kMaxSide) + " taps along each axis");
    if (p.filter_folded()) return Prepared::cannot("a filter wider than its axis");
    // Staged ghosts multiply zero taps too: only a finite cval adds nothing there.
    if (!std::isfinite(p.cval())) return Prepared::cannot("a finite cval");
    return {std::make_shared<PlanesPlan>(*this, p), {}};
  }
};

}  // namespace

std::unique_ptr<Strategy> make_planes_strategy() { return std::make_unique<PlanesStrategy>(); }

}  // namespace halo::cuda
