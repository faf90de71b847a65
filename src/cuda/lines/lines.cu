// strategy: lines — a filter that reaches one axis (SciPy's 1-D passes: correlate1d, each axis
// of gaussian_filter, sobel, prewitt, uniform ...) on the arrays' own 8- and 16-bit integer
// types, read and written at their own width. The array is seen as (outer, L, inner) around the
// filtered axis of length L; a block stages a tile of TL outputs' lines plus the filter's reach
// (mapped by the axis's mode) as float in shared memory, 32 lines of the inner axis side by side
// (coalesced) or, for the contiguous axis, TL consecutive elements of one line. Sums in float32;
// an integer output is SciPy's truncation wherever the sum's bound decides it, and SciPy's own
// float64 sum in its order (scipy_line_sum, read from the input) where it does not. The weights
// travel as kernel parameters.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "core/convert.hpp"
#include "core/dtype.hpp"
#include "core/line_filter.hpp"
#include "core/profile.hpp"
#include "core/scipy_sum.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/strategies.hpp"

namespace halo::cuda {
namespace {

using i64 = std::int64_t;

constexpr int kMaxTaps = 129;
constexpr int kInnerLines = 32;   // lines per block across the inner axis
constexpr int kTileOut = 64;      // outputs per line per block (inner > 1)
constexpr int kRowOut = 1024;     // outputs per block along the contiguous axis (inner == 1)

// The weights as kernel parameters: float for the sums, double for SciPy's own, and which taps
// SciPy's N-D order sums (|w| > DBL_EPSILON).
struct LineTaps {
  float w[kMaxTaps];
  double wd[kMaxTaps];
  signed char use[kMaxTaps];
};

struct LineArgs {
  i64 outer, L, inner;
  int k, a;            // taps and anchor along the line
  // SciPy's order of the taps: 0 NI_Correlate's C order over the used taps; 1 / -1 / 2
  // NI_Correlate1D's symmetric / antisymmetric / other (core/scipy_sum.hpp).
  int order;
  Boundary mode;
  float cval;
  float bound;         // truncation_undecided's bound (float sums)
  double cval_d;
  Rounding rounding;
};

// SciPy's float64 sum of output l of a line (its elements `stride` apart), in SciPy's order.
template <class S>
__device__ double scipy_line_sum(const S* line, i64 stride, i64 l, const LineArgs& a,
                                 const LineTaps& t) {
  const auto X = [&](i64 pos) {
    const i64 m = detail::map_index(pos, a.L, a.mode);
    return m < 0 ? a.cval_d : detail::to_double(line[m * stride]);
  };
  const i64 first = l - a.a;
  if (a.order == 0) {
    double acc = 0.0;
    for (int j = 0; j < a.k; ++j)
      if (t.use[j]) acc = detail::add_product(acc, X(first + j), t.wd[j]);
    return acc;
  }
  const int s1 = a.k / 2, s2 = a.k - s1 - 1;
  const i64 c = first + s1;
  const double* fw = t.wd + s1;
  double acc;
  if (a.order == 1) {
    acc = X(c) * fw[0];
    for (int jj = -s1; jj < 0; ++jj) acc = detail::add_product(acc, detail::add_rn(X(c + jj), X(c - jj)), fw[jj]);
  } else if (a.order == -1) {
    acc = X(c) * fw[0];
    for (int jj = -s1; jj < 0; ++jj) acc = detail::add_product(acc, detail::sub_rn(X(c + jj), X(c - jj)), fw[jj]);
  } else {
    acc = X(c + s2) * fw[s2];
    for (int jj = -s1; jj < s2; ++jj) acc = detail::add_product(acc, X(c + jj), fw[jj]);
  }
  return acc;
}

template <class S, class T>
__device__ inline void store_one(T* out, i64 o, float acc, const LineArgs& a, const S* line,
                                 i64 stride, i64 l, const LineTaps& t) {
  if constexpr (std::is_integral_v<T>) {
    if (a.rounding == Rounding::nearest) {
      out[o] = detail::nearest_cast<T>(double(acc));
    } else if (!detail::truncation_undecided(acc, a.bound)) {
      out[o] = detail::scipy_cast_from<T>(acc);
    } else {
      out[o] = detail::scipy_cast<T>(scipy_line_sum(line, stride, l, a, t));
    }
  } else {
    out[o] = detail::from_accum_float<T>(acc);
  }
}

// inner > 1: blockDim (32, 8); block (bx over inner / 32, by over L / TL, bz over outer).
template <class S, class T>
__global__ void __launch_bounds__(256) lines_inner(const S* __restrict__ in, T* __restrict__ out,
                                                   const __grid_constant__ LineTaps taps,
                                                   const LineArgs a) {
  extern __shared__ float tile[];  // (kTileOut + k - 1) x kInnerLines
  __shared__ float ws[kMaxTaps];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 i = i64(blockIdx.x) * kInnerLines + tx;
  const i64 l0 = i64(blockIdx.y) * kTileOut;
  for (i64 o = blockIdx.z; o < a.outer; o += gridDim.z) {
    for (int t = ty * kInnerLines + tx; t < a.k; t += blockDim.x * blockDim.y) ws[t] = taps.w[t];
    const int rows = kTileOut + a.k - 1;
    for (int r = ty; r < rows; r += blockDim.y) {
      const i64 l = detail::map_index(l0 - a.a + r, a.L, a.mode);
      float v = a.cval;
      if (l >= 0 && i < a.inner) v = detail::to_accum<float>(in[(o * a.L + l) * a.inner + i]);
      tile[r * kInnerLines + tx] = v;
    }
    __syncthreads();
    if (i < a.inner) {
      for (int r = ty; r < kTileOut && l0 + r < a.L; r += blockDim.y) {
        float acc = 0.0f;
        for (int j = 0; j < a.k; ++j) acc = fmaf(ws[j], tile[(r + j) * kInnerLines + tx], acc);
        store_one(out, (o * a.L + l0 + r) * a.inner + i, acc, a, in + o * a.L * a.inner + i,
                  a.inner, l0 + r, taps);
      }
    }
    __syncthreads();
  }
}

// inner == 1: blockDim 256; block (bx over L / kRowOut, by over outer).
template <class S, class T>
__global__ void __launch_bounds__(256) lines_row(const S* __restrict__ in, T* __restrict__ out,
                                                 const __grid_constant__ LineTaps taps,
                                                 const LineArgs a) {
  extern __shared__ float tile[];  // kRowOut + k - 1
  __shared__ float ws[kMaxTaps];
  const i64 l0 = i64(blockIdx.x) * kRowOut;
  for (i64 o = blockIdx.y; o < a.outer; o += gridDim.y) {
    for (int t = threadIdx.x; t < a.k; t += blockDim.x) ws[t] = taps.w[t];
    const int n = kRowOut + a.k - 1;
    const S* line = in + o * a.L;
    for (int r = threadIdx.x; r < n; r += blockDim.x) {
      const i64 l = detail::map_index(l0 - a.a + r, a.L, a.mode);
      tile[r] = l >= 0 ? detail::to_accum<float>(line[l]) : a.cval;
    }
    __syncthreads();
    for (int r = threadIdx.x; r < kRowOut && l0 + r < a.L; r += blockDim.x) {
      float acc = 0.0f;
      for (int j = 0; j < a.k; ++j) acc = fmaf(ws[j], tile[r + j], acc);
      store_one(out, o * a.L + l0 + r, acc, a, line, i64(1), l0 + r, taps);
    }
    __syncthreads();
  }
}

using LineDTypes = DTypeList<DType::u8, DType::u16, DType::i16>;
using OutDTypes = DTypeList<DType::u8, DType::u16, DType::i16, DType::f32>;


class LinesPlan final : public StrategyPlan {
 public:
  LinesPlan(const Strategy& s, const Problem& p, int axis) : StrategyPlan(s, p), axis_(axis) {
    const Extents& e = p.extents();
    a_.outer = p.batch();
    for (int ax = 0; ax < axis; ++ax) a_.outer *= e[ax];
    a_.L = e[axis];
    a_.inner = 1;
    for (int ax = axis + 1; ax < p.rank(); ++ax) a_.inner *= e[ax];
    const std::vector<double>& cw = p.correlation_weights();
    a_.k = int(p.filter_extents()[axis]);
    a_.a = int(p.anchor()[axis]);
    a_.mode = p.mode(axis);
    a_.cval = float(p.cval());
    a_.cval_d = p.cval();
    a_.rounding = p.rounding();
    const double eps = std::numeric_limits<double>::epsilon();
    double wsum = 0;
    for (int j = 0; j < a_.k; ++j) {
      taps_.use[j] = p.footprint() == Footprint::every || std::fabs(cw[j]) > eps;
      taps_.w[j] = taps_.use[j] ? float(cw[j]) : 0.0f;  // the taps SciPy sums, no others
      taps_.wd[j] = cw[j];
      wsum += std::fabs(cw[j]);
    }
    // SciPy's order (core/scipy_sum.hpp): NI_Correlate1D's for the 1-D functions (Footprint
    // every), with its symmetry test; NI_Correlate's C order for correlate and convolve.
    a_.order = 0;
    if (p.footprint() == Footprint::every) {
      a_.order = 2;
      const int s1 = a_.k / 2;
      if (a_.k & 1) {
        bool sym = true, anti = true;
        for (int i = 1; i <= s1; ++i) {
          sym = sym && !(std::fabs(cw[s1 + i] - cw[s1 - i]) > eps);
          anti = anti && !(std::fabs(cw[s1 + i] + cw[s1 - i]) > eps);
        }
        a_.order = sym ? 1 : anti ? -1 : 2;
      }
    }
    const DType t = p.dtype();
    const double xmax = t == DType::u8 ? 255.0 : t == DType::u16 ? 65535.0 : 32768.0;
    const double m = std::max(xmax, std::isfinite(p.cval()) ? std::fabs(p.cval()) : 0.0);
    // A float sum of k taps: (k + 8) units of float32 and SciPy's (k + 2) of float64, as
    // ConvertedBase::bound_scale; integral weights and cval on integers sum exactly.
    bool integral = std::isfinite(p.cval()) && p.cval() == std::nearbyint(p.cval());
    for (double v : cw) integral = integral && v == std::nearbyint(v);
    a_.bound = integral && wsum * m < 0x1p24
                   ? -1.0f
                   : float(((a_.k + 8) * 0x1p-24 + (a_.k + 2) * 0x1p-53) * wsum * m);
  }
  Estimate estimate() const override {
    // Measured on an H200 (docs/notes/integer-kernels.md): 16384^2 uint8, 3 taps 1.39 ms and
    // 17 taps 2.05 ms a pass; the kernel is instruction-bound, so time goes with the outputs and
    // the taps, not with the bytes. 16-bit inputs about 3.3 times that (a float32 sum of 16-bit
    // values is undecided far more often: SciPy's sum recomputed).
    const double n = double(problem().elements());
    const double scale = problem().dtype() == DType::u8 ? 1.0 : 3.3;
    return {n * (4.66e-3 + 0.176e-3 * a_.k) * scale + 6e3,
            "per output 4.66 ps and 0.176 ps a tap (measured; instruction-bound; 16-bit 3.3 "
            "times), and a launch"};
  }
  std::string describe() const override {
    return "axis " + std::to_string(axis_) + ", " + std::to_string(a_.k) + " taps, " +
           std::to_string(a_.outer * a_.inner) + " lines of " + std::to_string(a_.L);
  }
  NonFinite nonfinite() const override { return NonFinite::exact; }
  std::vector<MemoryUse> workspace() const override { return {}; }  // weights as parameters
  void run(const Buffers& b, void* stream) const override;

 private:
  int axis_;
  LineArgs a_{};
  LineTaps taps_{};
};

void LinesPlan::run(const Buffers& b, void* stream) const {
  const Problem& p = problem();
  const auto st = static_cast<cudaStream_t>(stream);
  dispatch_dtype<LineDTypes>(p.dtype(), [&](auto di) {
    using S = typename decltype(di)::storage;
    dispatch_dtype<OutDTypes>(p.out_dtype(), [&](auto dout) {
      using T = typename decltype(dout)::storage;
      const S* in = static_cast<const S*>(b.input);
      T* out = static_cast<T*>(b.output);
      if (a_.inner > 1) {
        const dim3 grid(unsigned((a_.inner + kInnerLines - 1) / kInnerLines),
                        unsigned((a_.L + kTileOut - 1) / kTileOut),
                        unsigned(std::min<i64>(a_.outer, 65535)));
        const std::size_t shm = std::size_t(kTileOut + a_.k - 1) * kInnerLines * 4;
        lines_inner<S, T><<<grid, dim3(kInnerLines, 8), shm, st>>>(in, out, taps_, a_);
      } else {
        const dim3 grid(unsigned((a_.L + kRowOut - 1) / kRowOut),
                        unsigned(std::min<i64>(a_.outer, 65535)));
        const std::size_t shm = std::size_t(kRowOut + a_.k - 1) * 4;
        lines_row<S, T><<<grid, 256, shm, st>>>(in, out, taps_, a_);
      }
    });
  });
  HALO_CUDA_CHECK_LAUNCH("launching lines on " + p.describe());
}

class LinesStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "lines"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "a filter along one axis on uint8/uint16/int16 at their own width (SciPy's 1-D "
           "passes), integers exactly SciPy's";
  }
  Status accepts_dtypes(const Problem& p) const override {
    return detail::integer_line_dtypes(p);
  }
  Prepared prepare(const Problem& p) const override {
    std::string why;
    const int axis = detail::integer_line_axis(p, kMaxTaps, &why);
    if (axis < 0) return Prepared::cannot(why);
    // Every staged value meets every tap, zero ones too: only a finite cval adds nothing there.
    if (!std::isfinite(p.cval())) return Prepared::cannot("a finite cval");
    return {std::make_shared<LinesPlan>(*this, p, axis), {}};
  }
};

}  // namespace

std::unique_ptr<Strategy> make_lines_strategy() { return std::make_unique<LinesStrategy>(); }

}  // namespace halo::cuda
