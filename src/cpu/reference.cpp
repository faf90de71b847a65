// strategy: reference — one output at a time, every tap, float64 accumulation, ghost cells from the
// boundary mode. O(elements * taps); the oracle for every other strategy.
#include "cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/convert.hpp"
#include "core/dtype.hpp"
#include "core/scipy_sum.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {
namespace {

// The taps [lo, hi) of an axis worth visiting for output coordinate i: with zero ghosts on that
// axis (constant mode, cval 0) only those that land inside the array (the others add 0), so a
// filter far larger than the array costs the oracle no more than the array allows.
struct TapRange {
  std::int64_t lo, hi;
};
inline TapRange taps_for(std::int64_t i, std::int64_t a, std::int64_t k, std::int64_t n,
                         bool zero) {
  if (!zero) return {0, k};
  return {std::max<std::int64_t>(0, a - i), std::min(k, a - i + n)};
}

// The definition, from the filter as the user gave it (not the Problem's folded correlation
// weights, so that the folding is checked too): correlate reads N[i - k/2 + j] with weight F[j];
// convolve is the same sum with F flipped on every axis, i.e. anchor k - 1 - k/2.
// SciPy's N-D filters leave out the weights with |w| <= DBL_EPSILON (Footprint::nonzero).
constexpr double kFootprintEps = std::numeric_limits<double>::epsilon();

template <class T>
void reference_impl(const Problem& p, const T* in, double* out, bool absolute, double cval) {
  const auto& progress = p.progress();
  const Dims3 n = p.dims3(), k = to_dims3(p.filter().extents(), p.rank());
  const bool flip = p.op() == Op::convolve;
  // SciPy's origin: correlate's anchor k/2 + origin, convolve's k - 1 - k/2 - origin.
  const Extents origin = p.edges().origin;
  const Dims3 o = to_dims3(origin, p.rank());
  const auto anchor = [flip](std::int64_t e, std::int64_t org) {
    return flip ? e - 1 - e / 2 - org : e / 2 + org;
  };
  // Padded axes: extent 1, origin 1 from to_dims3's padding, so their origin is taken as 0.
  const int r = p.rank();
  const Dims3 a{anchor(k.z, r == 3 ? o.z : 0), anchor(k.y, r >= 2 ? o.y : 0), anchor(k.x, o.x)};
  // Each axis's mode (canonical z, y, x; padded axes have extent 1 and never leave it).
  const auto mode_of = [&](int canonical) {
    const int axis = canonical - (kMaxRank - r);
    return axis < 0 ? Boundary::constant : p.mode(axis);
  };
  const Boundary mz = mode_of(0), my = mode_of(1), mx = mode_of(2);
  const bool zero = cval == 0;
  const bool every = p.footprint() == Footprint::every;
  const std::vector<double>& f = p.filter().weights();
  std::vector<double> w(f.begin(), f.end());
  if (flip) std::reverse(w.begin(), w.end());  // every axis flipped = the flat order reversed
  const std::int64_t item = n.count();
  const std::int64_t rows = p.batch() * n.z * n.y;
  for (std::int64_t b = 0; b < p.batch(); ++b) {
    const T* src = in + b * item;
    double* dst = out + b * item;
    for (std::int64_t z = 0; z < n.z; ++z)
      for (std::int64_t y = 0; y < n.y; ++y) {
        if (progress) progress(double((b * n.z + z) * n.y + y) / double(rows));
        for (std::int64_t x = 0; x < n.x; ++x) {
          double acc = 0.0;
          const TapRange tz = taps_for(z, a.z, k.z, n.z, zero && mz == Boundary::constant);
          const TapRange ty = taps_for(y, a.y, k.y, n.y, zero && my == Boundary::constant);
          const TapRange tx = taps_for(x, a.x, k.x, n.x, zero && mx == Boundary::constant);
          for (std::int64_t fz = tz.lo; fz < tz.hi; ++fz) {
            const std::int64_t iz = detail::map_index(z - a.z + fz, n.z, mz);
            for (std::int64_t fy = ty.lo; fy < ty.hi; ++fy) {
              const std::int64_t iy = detail::map_index(y - a.y + fy, n.y, my);
              for (std::int64_t fx = tx.lo; fx < tx.hi; ++fx) {
                const std::int64_t ix = detail::map_index(x - a.x + fx, n.x, mx);
                const double wv = w[(fz * k.y + fy) * k.x + fx];
                if (!every && !(std::fabs(wv) > kFootprintEps)) continue;  // SciPy's footprint
                // -1 on any axis: a constant-mode ghost, which reads cval.
                const double v = iz < 0 || iy < 0 || ix < 0
                                     ? cval
                                     : detail::to_double(src[(iz * n.y + iy) * n.x + ix]);
                acc += absolute ? std::fabs(wv) * std::fabs(v) : wv * v;
              }
            }
          }
          dst[(z * n.y + y) * n.x + x] = acc;
        }
      }
  }
  if (progress) progress(1.0);
}

class ReferenceStrategy final : public Strategy {
 public:
  std::string name() const override { return "reference"; }
  Backend backend() const override { return Backend::reference; }
  std::string description() const override {
    return "plain loops, float64 accumulation: the oracle (slow)";
  }
  Status can_implement(const Problem&) const override { return Status::success(); }
  // Every tap of the footprint, in SciPy's order, in float64: SciPy's NaN and infinities.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::exact; }
  // Every dtype of the table, in and out: sums in float64 (each part of complex data on its
  // own, as SciPy's), stored as the output's dtype; an integer output truncated from SciPy's
  // own sum in SciPy's order (ScipySum), rounded to nearest from the float64 sum.
  Status accepts_dtypes(const Problem&) const override { return Status::success(); }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    const double parts = is_complex_dtype(p.dtype()) ? 2 : 1;
    return {{"the float64 results", double(p.elements()) * 8 * parts, MemorySpace::host},
            {"the float64 parts of complex input", is_complex_dtype(p.dtype())
                                                       ? double(p.elements()) * 16 : 0.0,
             MemorySpace::host},
            {"the filter weights", double(p.filter().taps()) * 8, MemorySpace::host}};
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    const std::int64_t n = p.elements();
    const auto doubles = [&](std::vector<double>& v, const char* what) {
      try {
        v.resize(static_cast<std::size_t>(n));
      } catch (const std::bad_alloc&) {
        throw Error("reference: cannot allocate " + std::to_string(n * 8) + " bytes for " +
                    what);
      }
    };
    std::vector<double> re, im;
    doubles(re, "the float64 results");
    if (is_complex_dtype(p.dtype())) {
      // Each part filtered on its own, as SciPy does: the imaginary part's ghosts read 0.
      std::vector<double> part_in;
      doubles(part_in, "a part of the complex input");
      doubles(im, "the float64 imaginary results");
      Problem q(p.rank(), p.extents(), p.batch(), p.filter(), DType::f64, p.op(), p.edges());
      q.set_footprint(p.footprint());
      q.set_progress(p.progress());
      dispatch_dtype<DTypeList<DType::c64, DType::c128>>(p.dtype(), [&](auto d) {
        using T = typename decltype(d)::storage;
        const T* src = static_cast<const T*>(b.input);
        for (std::int64_t i = 0; i < n; ++i) part_in[i] = double(src[i].real());
        reference_impl(q, part_in.data(), re.data(), false, p.cval());
        for (std::int64_t i = 0; i < n; ++i) part_in[i] = double(src[i].imag());
        reference_impl(q, part_in.data(), im.data(), false, 0.0);
      });
    } else {
      reference_f64(p, b.input, re.data());
    }
    dispatch_dtype<AllDTypes>(p.out_dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      T* o = static_cast<T*>(b.output);
      if constexpr (detail::is_integer_storage_v<T>) {
        if (p.rounding() == Rounding::nearest) {
          for (std::int64_t i = 0; i < n; ++i) o[i] = detail::nearest_cast<T>(re[i]);
          return;
        }
        const detail::ScipySum sum(p);
        const Dims3 e = p.dims3();
        const std::int64_t item = e.count();
        const std::size_t item_bytes = std::size_t(item) * dtype_size(p.dtype());
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t f = i % item;
          const void* src = static_cast<const char*>(b.input) + std::size_t(i / item) * item_bytes;
          o[i] = detail::scipy_cast<T>(
              sum.at(p.dtype(), src, f / (e.y * e.x), (f / e.x) % e.y, f % e.x, p.cval()));
        }
      } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                           std::is_same_v<T, std::complex<double>>) {
        using R = typename T::value_type;
        for (std::int64_t i = 0; i < n; ++i) o[i] = T(R(re[i]), im.empty() ? R(0) : R(im[i]));
      } else {
        for (std::int64_t i = 0; i < n; ++i) o[i] = detail::from_accum_float<T>(re[i]);
      }
    });
  }
};

}  // namespace

void reference_f64(const Problem& p, const void* in, double* out, bool absolute) {
  dispatch_dtype<RealDTypes>(p.dtype(), [&](auto d) {
    using T = typename decltype(d)::storage;
    reference_impl(p, static_cast<const T*>(in), out, absolute, p.cval());
  });
}

std::unique_ptr<Strategy> make_reference_strategy() { return std::make_unique<ReferenceStrategy>(); }

}  // namespace halo::cpu
