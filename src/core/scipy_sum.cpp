// SciPy's float64 sums (scipy_sum.hpp). Built with -ffp-contract=off: a fused multiply-add would
// round differently from SciPy's separate multiply and add.
#include "core/scipy_sum.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dtype.hpp"

namespace halo::detail {

ScipySum::ScipySum(const Problem& p) {
  const int r = p.rank();
  ScipySumView& v = view_;
  v.n = p.dims3();
  const Dims3 k = to_dims3(p.filter().extents(), r);
  const bool flip = p.op() == Op::convolve;
  const Dims3 o = to_dims3(p.edges().origin, r);
  // SciPy's anchor: correlate's k/2 + origin, convolve's k - 1 - k/2 - origin (to_dims3 pads
  // absent axes' origin with 1: taken as 0).
  const auto anchor = [flip](std::int64_t e, std::int64_t org) {
    return flip ? e - 1 - e / 2 - org : e / 2 + org;
  };
  const Dims3 a{anchor(k.z, r == 3 ? o.z : 0), anchor(k.y, r >= 2 ? o.y : 0), anchor(k.x, o.x)};
  for (int c = 0; c < 3; ++c) {
    const int axis = c - (kMaxRank - r);
    v.m[c] = axis < 0 ? Boundary::constant : p.mode(axis);
  }
  w_ = p.filter().weights();
  if (flip) std::reverse(w_.begin(), w_.end());
  const bool every = p.footprint() == Footprint::every;
  const int reached = (k.z > 1) + (k.y > 1) + (k.x > 1);
  const double eps = std::numeric_limits<double>::epsilon();
  if (every && reached == 1) {
    v.line = 1;
    v.axis = k.z > 1 ? 0 : k.y > 1 ? 1 : 2;
    v.k = std::int64_t(w_.size());
    v.anchor = v.axis == 0 ? a.z : v.axis == 1 ? a.y : a.x;
    const std::int64_t s1 = v.k / 2;
    if (v.k & 1) {
      bool sym = true, anti = true;
      for (std::int64_t i = 1; i <= s1; ++i) {
        sym = sym && !(std::fabs(w_[s1 + i] - w_[s1 - i]) > eps);
        anti = anti && !(std::fabs(w_[s1 + i] + w_[s1 - i]) > eps);
      }
      v.symmetric = sym ? 1 : anti ? -1 : 0;
    }
    v.lo[v.axis] = -v.anchor;
    v.hi[v.axis] = v.k - 1 - v.anchor;
  } else {
    std::vector<std::int64_t> dz, dy, dx, off;
    std::int64_t t = 0;
    for (std::int64_t jz = 0; jz < k.z; ++jz)
      for (std::int64_t jy = 0; jy < k.y; ++jy)
        for (std::int64_t jx = 0; jx < k.x; ++jx, ++t) {
          if (!every && !(std::fabs(w_[t]) > eps)) continue;  // SciPy's footprint
          const std::int64_t d[3] = {jz - a.z, jy - a.y, jx - a.x};
          dz.push_back(d[0]);
          dy.push_back(d[1]);
          dx.push_back(d[2]);
          off.push_back((d[0] * v.n.y + d[1]) * v.n.x + d[2]);
          tw_.push_back(w_[t]);
          for (int c = 0; c < 3; ++c) {
            v.lo[c] = std::min(v.lo[c], d[c]);
            v.hi[c] = std::max(v.hi[c], d[c]);
          }
        }
    v.taps = std::int64_t(tw_.size());
    for (const auto* part : {&dz, &dy, &dx, &off})
      offsets_.insert(offsets_.end(), part->begin(), part->end());
  }
  point();
}

void ScipySum::point() {
  view_.w = w_.data();
  view_.tw = tw_.data();
  const std::int64_t t = view_.taps;
  const std::int64_t* o = offsets_.data();
  view_.dz = o;
  view_.dy = o ? o + t : nullptr;
  view_.dx = o ? o + 2 * t : nullptr;
  view_.off = o ? o + 3 * t : nullptr;
}

template <class T>
double ScipySum::at(const T* item, std::int64_t z, std::int64_t y, std::int64_t x,
                    double cval) const {
  return scipy_sum_at(view_, item, z, y, x, cval);
}

template <class T>
double ScipySum::at(const T* item, std::int64_t z, std::int64_t y, std::int64_t x, double cval,
                    FlatCache& cache) const {
  T c;
  if (!scipy_sum_flat(view_, item, z, y, x, &c)) return scipy_sum_at(view_, item, z, y, x, cval);
  const double v = to_double(c);
  if (!cache.valid || !(cache.value == v)) {
    cache.value = v;
    cache.sum = scipy_flat_sum(view_, v);
    cache.valid = true;
  }
  return cache.sum;
}

double ScipySum::at(DType t, const void* item, std::int64_t z, std::int64_t y, std::int64_t x,
                    double cval) const {
  return dispatch_dtype<RealDTypes>(t, [&](auto d) {
    using T = typename decltype(d)::storage;
    return at(static_cast<const T*>(item), z, y, x, cval);
  });
}

#define HALO_SCIPY_SUM_AT(T)                                                                  \
  template double ScipySum::at<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double) \
      const;                                                                                  \
  template double ScipySum::at<T>(const T*, std::int64_t, std::int64_t, std::int64_t, double, \
                                  FlatCache&) const;
HALO_SCIPY_SUM_AT(float)
HALO_SCIPY_SUM_AT(double)
HALO_SCIPY_SUM_AT(std::uint8_t)
HALO_SCIPY_SUM_AT(std::uint16_t)
HALO_SCIPY_SUM_AT(std::int16_t)
HALO_SCIPY_SUM_AT(std::int32_t)
HALO_SCIPY_SUM_AT(float16)
HALO_SCIPY_SUM_AT(bfloat16)
#undef HALO_SCIPY_SUM_AT

}  // namespace halo::detail
