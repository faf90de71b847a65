// The device's plans of converted problems (core/converted.hpp): a CUDA strategy written for
// float32 and float64 runs the other dtypes slab by slab on device buffers. A fill kernel
// converts a slab of the input (its halo rows along axis 0 mapped by the mode) into the compute
// type and finds its largest finite |x|; the strategy runs on the slab; a store kernel writes
// the slab's own outputs as the output dtype. An integer output truncated as SciPy's whose sum
// the bound leaves undecided takes SciPy's own float64 sum (scipy_sum_at, rounded as SciPy's
// multiply and add, never fused), read from the slab itself: it holds the input's values exactly
// and the rows the filter reaches.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/converted.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/nonfinite.hpp"
#include "core/scipy_sum.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/scipy_sum.cuh"

namespace halo::detail {
namespace {

using i64 = std::int64_t;

// Rows at least this long are walked as rows (grid_for).
constexpr i64 kLongRow = 128;

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<std::complex<R>> : std::true_type {};

// What a fill launch needs about its slab.
struct FillArgs {
  i64 rows, row_elems, item, batch, n0, base_item, row0, a0;
  bool along_axis0;
  Boundary m0;
  int part;
  double cval;
};

// f(t, e) for every element e of every row t of a slab: long rows along y with their elements
// along x (no 64-bit division per element), short rows as one flat loop (grid_for's grids).
template <class F>
__device__ void for_each_element(i64 rows, i64 row_elems, F&& f) {
  if (row_elems < kLongRow) {
    for (i64 w = i64(blockIdx.x) * blockDim.x + threadIdx.x; w < rows * row_elems;
         w += i64(gridDim.x) * blockDim.x) {
      const i64 t = w / row_elems;
      f(t, w - t * row_elems);
    }
    return;
  }
  for (i64 t = blockIdx.y; t < rows; t += gridDim.y)
    for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < row_elems;
         e += i64(gridDim.x) * blockDim.x)
      f(t, e);
}

// Slab rows (sub-problem rows, or items * n0 whole-item rows) of A from the input; the largest
// finite |value| as float bits in *maxbits (non-negative floats order as their bits).
template <class T, class A>
__global__ void fill_kernel(const T* __restrict__ in, A* __restrict__ buf, FillArgs a,
                            unsigned int* maxbits) {
  float m = 0.0f;
  for_each_element(a.rows, a.row_elems, [&](i64 t, i64 e) {
    const i64 idx = t * a.row_elems + e;
    i64 b = a.base_item, i = t;
    if (a.along_axis0) {
      i = map_index(a.row0 - a.a0 + t, a.n0, a.m0);
    } else {
      b = a.base_item + t / a.n0;
      i = t % a.n0;
    }
    A v;
    if (b >= a.batch) {
      v = A(0);
    } else if (i < 0) {
      v = A(a.cval);
    } else {
      const i64 at = b * a.item + i * a.row_elems + e;
      if constexpr (IsComplex<T>::value) {
        using R = typename T::value_type;
        v = A(reinterpret_cast<const R*>(in)[2 * at + a.part]);
      } else {
        v = to_accum<A>(in[at]);
      }
      const float f = fabsf(float(v));
      if (f <= 3.4028234663852886e38f) m = fmaxf(m, f);  // finite only (NaN fails)
    }
    buf[idx] = v;
  });
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0 && m > 0.0f) atomicMax(maxbits, __float_as_uint(m));
}

// What a store launch needs about its slab.
struct StoreArgs {
  i64 rows, row_elems, item, n0, base_item, row0, skip;
  bool along_axis0;
  int part, parts;
  Rounding rounding;
  double cval, rel, exact_below, cval_abs;  // cval_abs: |cval| where ghosts read it, else 0
  bool integral;
};

// buf: the strategy's sums of the slab; slab: the slab's input (for SciPy's own sums).
template <class T, class A>
__global__ void store_kernel(const A* __restrict__ buf, const A* __restrict__ slab,
                             T* __restrict__ out, StoreArgs a, const unsigned int* maxbits,
                             ScipySumView sum) {
  // The bound of this slab's sums (ConvertedBase::bound_scale): SciPy's truncation is decided
  // wherever a sum lies further than it from every integer.
  const double maxabs = fmax(double(__uint_as_float(*maxbits)), a.cval_abs);
  const A bound = a.integral && maxabs < a.exact_below ? A(-1) : A(a.rel * maxabs);
  const i64 sub_item = a.along_axis0 ? 0 : sum.n.z * sum.n.y * sum.n.x;
  for_each_element(a.rows, a.row_elems, [&](i64 t, i64 e) {
    const A acc = buf[(t + a.skip) * a.row_elems + e];
    const i64 bi = a.along_axis0 ? a.base_item : a.base_item + t / a.n0;
    const i64 i = a.along_axis0 ? a.row0 + t : t % a.n0;
    const i64 o = bi * a.item + i * a.row_elems + e;
    if constexpr (std::is_integral_v<T>) {
      if (a.rounding == Rounding::nearest) {
        out[o] = nearest_cast<T>(double(acc));
        return;
      }
      if (!truncation_undecided(acc, bound)) {
        out[o] = scipy_cast_from<T>(acc);
        return;
      }
      // SciPy's sum, from the slab: the sub-problem's coordinates of this output.
      const i64 f = (a.along_axis0 ? t + a.skip : t % a.n0) * a.row_elems + e;
      const A* item = slab + (a.along_axis0 ? 0 : (t / a.n0) * sub_item);
      out[o] = scipy_cast<T>(scipy_sum_at(sum, item, f / (sum.n.y * sum.n.x),
                                          (f / sum.n.x) % sum.n.y, f % sum.n.x, a.cval));
    } else if constexpr (IsComplex<T>::value) {
      using R = typename T::value_type;
      R* c = reinterpret_cast<R*>(out);
      c[2 * o + a.part] = R(acc);
      if (a.parts == 1) c[2 * o + 1] = R(0);
    } else {
      out[o] = from_accum_float<T>(acc);
    }
  });
}

// A grid over rows (y) of row_elems elements (x), 256 threads a block; for rows shorter than
// kLongRow, a flat grid over every element.
dim3 grid_for(i64 rows, i64 row_elems) {
  if (row_elems < kLongRow) {
    const i64 b = (rows * row_elems + 255) / 256;
    return dim3(unsigned(std::min<i64>(std::max<i64>(b, 1), 65536)));
  }
  const i64 x = (row_elems + 255) / 256, target = 4 * 132 * 8;  // blocks enough to fill a GPU
  const i64 gx = std::min<i64>(std::max<i64>(x, 1), 65535);
  const i64 gy = std::min<i64>(std::max<i64>(std::min<i64>(rows, target / gx + 1), 1), 65535);
  return dim3(unsigned(gx), unsigned(gy));
}

class DeviceConvertedPlan final : public ConvertedBase {
 public:
  DeviceConvertedPlan(const Strategy& s, const Problem& p)
      : ConvertedBase(s, p, MemorySpace::device) {}

  // The SciPy sums of the slabs' sub-problem (its extents; the modes of the other axes).
  std::string init_sums() {
    if (sub_.empty() || !sub_[0]) return "no sub-problem";
    Problem q = *sub_[0];
    q.set_footprint(problem().footprint());
    sub_sum_ = std::make_unique<ScipySum>(q);
    return {};
  }

  void run(const Buffers& b, void* stream) const override {
    const auto st = static_cast<cudaStream_t>(stream);
    const Problem& p = problem();
    const std::string what = p.describe() + " (strategy " + strategy().name() + ", in " +
                             to_string(compute_) + " by slabs)";
    const std::size_t asize = dtype_size(compute_);
    const std::size_t count = std::size_t(slab_bytes_) / asize;
    cuda::DeviceBuffer bin(count * asize, "the input slab of " + what, st);
    cuda::DeviceBuffer bout(count * asize, "the output slab of " + what, st);
    // The SciPy sums' taps, and a word per slab run for the largest |x|.
    const ScipySum& ss = *sub_sum_;
    const i64 words = slabs_ * parts_;
    cuda::DeviceBuffer taps(cuda::scipy_sum_bytes(ss) + std::size_t(words) * 4,
                            "the SciPy sums' taps of " + what, st);
    const ScipySumView v = cuda::upload_scipy_sum(ss, taps.p, std::size_t(words) * 4, st, what);
    auto* maxbits = reinterpret_cast<unsigned int*>(static_cast<char*>(taps.p) +
                                                    cuda::scipy_sum_bytes(ss));

    bool integral = false, ghosts = false;
    double exact_below = 0;
    const double rel = bound_scale(&integral, &exact_below);
    for (int ax = 0; ax < p.rank(); ++ax) ghosts = ghosts || p.mode(ax) == Boundary::constant;
    const i64 item = p.elements_per_item(), n0 = p.extents()[0];
    for (int part = 0; part < parts_; ++part) {
      const double cval = part == 0 ? p.cval() : 0.0;
      for (i64 s = 0; s < slabs_; ++s) {
        unsigned int* mb = maxbits + (part * slabs_ + s);
        const Slab sl = slab(s);
        FillArgs fa{along_axis0_ ? sub_rows_ : items_ * n0, row_elems_, item, p.batch(), n0,
                    sl.item, sl.row0, along_axis0_ ? p.anchor()[0] : 0, along_axis0_,
                    p.mode(0), part, cval};
        dispatch_dtype<AllDTypes>(p.dtype(), [&](auto d) {
          using T = typename decltype(d)::storage;
          dispatch_dtype<DTypeList<DType::f32, DType::f64>>(compute_, [&](auto c) {
            using A = typename decltype(c)::storage;
            fill_kernel<<<grid_for(fa.rows, fa.row_elems), 256, 0, st>>>(
                static_cast<const T*>(b.input), static_cast<A*>(bin.p), fa, mb);
          });
        });
        HALO_CUDA_CHECK_LAUNCH("converting a slab of " + what);
        run_cuda_strategy(*inner_[part], bin.p, bout.p, stream);
        StoreArgs sa{sl.rows, row_elems_, item, n0, sl.item, sl.row0, sl.skip, along_axis0_,
                     part, parts_, p.rounding(), cval, rel, exact_below,
                     ghosts && std::isfinite(cval) ? std::fabs(cval) : 0.0, integral};
        dispatch_dtype<AllDTypes>(p.out_dtype(), [&](auto d) {
          using T = typename decltype(d)::storage;
          dispatch_dtype<DTypeList<DType::f32, DType::f64>>(compute_, [&](auto c) {
            using A = typename decltype(c)::storage;
            store_kernel<<<grid_for(sa.rows, sa.row_elems), 256, 0, st>>>(
                static_cast<const A*>(bout.p), static_cast<const A*>(bin.p),
                static_cast<T*>(b.output), sa, mb, v);
          });
        });
        HALO_CUDA_CHECK_LAUNCH("storing a slab of " + what);
      }
    }
  }

 private:
  std::unique_ptr<ScipySum> sub_sum_;
};

}  // namespace

Prepared prepare_converted_on_device(const Strategy& s, const Problem& p) {
  auto plan = std::make_shared<DeviceConvertedPlan>(s, p);
  std::string why = plan->init(converted_slab_bytes(MemorySpace::device));
  if (why.empty()) why = plan->init_sums();
  if (!why.empty()) return Prepared::cannot(why);
  return {std::move(plan), {}};
}

}  // namespace halo::detail
