// strategy: reference — one output at a time, every tap, float64 accumulation, ghost cells from the
// boundary mode. O(elements * taps); the oracle for every other strategy.
#include "cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
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
void reference_impl(const Problem& p, const T* in, double* out, bool absolute) {
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
  const bool zero = p.cval() == 0;
  const double cval = p.cval();
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
                                     : static_cast<double>(src[(iz * n.y + iy) * n.x + ix]);
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
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    return {{"the float64 results", double(p.elements()) * 8, MemorySpace::host},
            {"the filter weights", double(p.filter().taps()) * 8, MemorySpace::host}};
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    const std::int64_t n = p.elements();
    std::vector<double> tmp;
    try {
      tmp.resize(static_cast<std::size_t>(n));
    } catch (const std::bad_alloc&) {
      throw Error("reference: cannot allocate " + std::to_string(n * 8) +
                  " bytes for the float64 results");
    }
    reference_f64(p, b.input, tmp.data());
    dispatch_dtype(p.dtype(), [&](auto d) {
      using T = typename decltype(d)::storage;
      T* o = static_cast<T*>(b.output);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(tmp[i]);
    });
  }
};

}  // namespace

void reference_f64(const Problem& p, const void* in, double* out, bool absolute) {
  dispatch_dtype(p.dtype(), [&](auto d) {
    using T = typename decltype(d)::storage;
    reference_impl(p, static_cast<const T*>(in), out, absolute);
  });
}

std::unique_ptr<Strategy> make_reference_strategy() { return std::make_unique<ReferenceStrategy>(); }

}  // namespace halo::cpu
