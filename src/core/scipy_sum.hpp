// SciPy's float64 sum for one output, in SciPy's own order of the taps, so that an integer output
// truncated from it is SciPy's bit for bit (Rounding::truncate). Strategies compute in their own
// order and accumulation type; where their sum lies within its rounding bound of an integer (or
// is not finite), the output is decided by this sum instead (core/convert.hpp,
// truncation_undecided). Two orders, as scipy.ndimage's C code has them:
//  - N-D (correlate, convolve; Footprint::nonzero, or `every` over several axes): NI_Correlate's,
//    the taps of the footprint in C order of the correlation weights, tmp += x * w from 0;
//  - 1-D (Footprint::every on a filter that reaches one axis: correlate1d and the passes of
//    gaussian_filter, sobel, ...): NI_Correlate1D's, which sums a symmetric (antisymmetric)
//    odd filter as the centre tap and then pairs (x[-j] +- x[j]) * w[-j], outermost pair first,
//    and any other filter from its last tap, then the others from the first.
// Both read the input as doubles, ghosts by each axis's mode and constant mode's cval, and use the
// filter as the user gave it (not the Problem's folding of a filter wider than the array).
#pragma once

#include <cstdint>
#include <vector>

#include "core/boundary.hpp"
#include "core/convert.hpp"
#include "core/host_device.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

// What SciPy's sum of an output needs, as plain pointers (host or device memory): ScipySum
// holds it on the host; the device's copy points into one device buffer (cuda/converted.cu).
struct ScipySumView {
  Dims3 n;
  Boundary m[3] = {Boundary::constant, Boundary::constant, Boundary::constant};
  int line = 0;       // NI_Correlate1D's order along canonical axis `axis`
  int axis = 2;
  int symmetric = 0;  // the line's: 1 symmetric, -1 antisymmetric, 0 neither
  std::int64_t k = 0, anchor = 0;  // the line's taps and anchor
  const double* w = nullptr;       // the line's correlation weights
  std::int64_t taps = 0;           // N-D: the footprint's taps in C order ...
  const std::int64_t *dz = nullptr, *dy = nullptr, *dx = nullptr;  // ... their offsets
  const std::int64_t* off = nullptr;  // ... their offsets in the item, for inside outputs
  const double* tw = nullptr;         // ... and weights
  // The reach of the taps per canonical axis, so that an output whose taps all lie inside
  // reads the item without the modes' index map.
  std::int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};

// acc + x * w rounded twice, as SciPy's C code (built without FMA) computes it.
HALO_HOST_DEVICE inline double add_product(double acc, double x, double w) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(acc, __dmul_rn(x, w));
#else
  const double p = x * w;  // the host's TU is built with -ffp-contract=off
  return acc + p;
#endif
}
HALO_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
HALO_HOST_DEVICE inline double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// SciPy's sum for output (z, y, x) (canonical coordinates) of one item of real data `item`
// (T a real storage type of the dtype table). cval: the value of constant-mode ghosts.
template <class T>
HALO_HOST_DEVICE double scipy_sum_at(const ScipySumView& v, const T* item, std::int64_t z,
                                     std::int64_t y, std::int64_t x, double cval) {
  const Dims3 n = v.n;
  const auto read = [&](std::int64_t iz, std::int64_t iy, std::int64_t ix) {
    iz = map_index(iz, n.z, v.m[0]);
    iy = map_index(iy, n.y, v.m[1]);
    ix = map_index(ix, n.x, v.m[2]);
    return iz < 0 || iy < 0 || ix < 0 ? cval : to_double(item[(iz * n.y + iy) * n.x + ix]);
  };
  const bool inside = z + v.lo[0] >= 0 && z + v.hi[0] < n.z && y + v.lo[1] >= 0 &&
                      y + v.hi[1] < n.y && x + v.lo[2] >= 0 && x + v.hi[2] < n.x;
  if (!v.line) {
    double acc = 0.0;
    if (inside) {  // the same sum, without the index map
      const T* c = item + (z * n.y + y) * n.x + x;
      for (std::int64_t t = 0; t < v.taps; ++t) acc = add_product(acc, to_double(c[v.off[t]]), v.tw[t]);
      return acc;
    }
    for (std::int64_t t = 0; t < v.taps; ++t)
      acc = add_product(acc, read(z + v.dz[t], y + v.dy[t], x + v.dx[t]), v.tw[t]);
    return acc;
  }
  // NI_Correlate1D: iline[jj] is the element at offset jj from the centre tap s1.
  const std::int64_t s1 = v.k / 2, s2 = v.k - s1 - 1, shift = s1 - v.anchor;
  const std::int64_t cz = z + (v.axis == 0 ? shift : 0), cy = y + (v.axis == 1 ? shift : 0),
                     cx = x + (v.axis == 2 ? shift : 0);
  const std::int64_t stride = v.axis == 0 ? n.y * n.x : v.axis == 1 ? n.x : 1;
  const T* centre = inside ? item + (cz * n.y + cy) * n.x + cx : nullptr;
  const auto at = [&](std::int64_t jj) {
    if (centre) return to_double(centre[jj * stride]);
    return read(cz + (v.axis == 0 ? jj : 0), cy + (v.axis == 1 ? jj : 0),
                cx + (v.axis == 2 ? jj : 0));
  };
  const double* fw = v.w + s1;
  double acc;
  if (v.symmetric > 0) {
    acc = at(0) * fw[0];
    for (std::int64_t jj = -s1; jj < 0; ++jj) acc = add_product(acc, add_rn(at(jj), at(-jj)), fw[jj]);
  } else if (v.symmetric < 0) {
    acc = at(0) * fw[0];
    for (std::int64_t jj = -s1; jj < 0; ++jj) acc = add_product(acc, sub_rn(at(jj), at(-jj)), fw[jj]);
  } else {
    acc = at(s2) * fw[s2];
    for (std::int64_t jj = -s1; jj < s2; ++jj) acc = add_product(acc, at(jj), fw[jj]);
  }
  return acc;
}

// Whether every tap of output (z, y, x) lies inside the item and reads one value (a flat region:
// SciPy's sum is then flat_sum of it, the same for every such output); *value: that value.
template <class T>
HALO_HOST_DEVICE bool scipy_sum_flat(const ScipySumView& v, const T* item, std::int64_t z,
                                     std::int64_t y, std::int64_t x, T* value) {
  const Dims3 n = v.n;
  if (!(z + v.lo[0] >= 0 && z + v.hi[0] < n.z && y + v.lo[1] >= 0 && y + v.hi[1] < n.y &&
        x + v.lo[2] >= 0 && x + v.hi[2] < n.x))
    return false;
  const T* c = item + (z * n.y + y) * n.x + x;
  bool same = true;
  if (v.line) {
    const std::int64_t stride = v.axis == 0 ? n.y * n.x : v.axis == 1 ? n.x : 1;
    const T* first = c - v.anchor * stride;
    for (std::int64_t j = 1; j < v.k; ++j) same &= to_double(first[j * stride]) == to_double(first[0]);
    *value = first[0];
  } else {
    if (v.taps == 0) return false;
    for (std::int64_t t = 1; t < v.taps; ++t) same &= to_double(c[v.off[t]]) == to_double(c[v.off[0]]);
    *value = c[v.off[0]];
  }
  return same;
}

// SciPy's sum over taps that all read the value c, in its order.
HALO_HOST_DEVICE inline double scipy_flat_sum(const ScipySumView& v, double c) {
  if (!v.line) {
    double acc = 0.0;
    for (std::int64_t t = 0; t < v.taps; ++t) acc = add_product(acc, c, v.tw[t]);
    return acc;
  }
  const std::int64_t s1 = v.k / 2, s2 = v.k - s1 - 1;
  const double* fw = v.w + s1;
  double acc;
  if (v.symmetric > 0) {
    acc = c * fw[0];
    for (std::int64_t jj = -s1; jj < 0; ++jj) acc = add_product(acc, add_rn(c, c), fw[jj]);
  } else if (v.symmetric < 0) {
    acc = c * fw[0];
    for (std::int64_t jj = -s1; jj < 0; ++jj) acc = add_product(acc, sub_rn(c, c), fw[jj]);
  } else {
    acc = c * fw[s2];
    for (std::int64_t jj = -s1; jj < s2; ++jj) acc = add_product(acc, c, fw[jj]);
  }
  return acc;
}

// The host's SciPy sums of a problem: the taps and weights held, a view of them.
class ScipySum {
 public:
  explicit ScipySum(const Problem& p);
  // SciPy's sum for output (z, y, x) (canonical coordinates) of one item of real data `item`
  // (the problem's extents; T a real storage type of the dtype table, not complex). cval: the
  // value of constant-mode ghosts (the problem's, or 0 for the imaginary part of complex data).
  template <class T>
  double at(const T* item, std::int64_t z, std::int64_t y, std::int64_t x, double cval) const;
  double at(DType t, const void* item, std::int64_t z, std::int64_t y, std::int64_t x,
            double cval) const;
  // at() where the output reads a flat region, from a cache of the last flat value's sum (one
  // per caller: consecutive outputs of a flat region share it).
  struct FlatCache {
    double value = 0, sum = 0;
    bool valid = false;
  };
  template <class T>
  double at(const T* item, std::int64_t z, std::int64_t y, std::int64_t x, double cval,
            FlatCache& cache) const;
  bool line() const { return view_.line != 0; }
  // The view, pointing into this object (copied or moved, it is made again).
  const ScipySumView& view() const { return view_; }
  // The arrays the view points to, for a copy elsewhere (the device's).
  const std::vector<double>& line_weights() const { return w_; }
  const std::vector<double>& tap_weights() const { return tw_; }
  const std::vector<std::int64_t>& tap_offsets() const { return offsets_; }  // dz, dy, dx, off

  ScipySum(const ScipySum& o) : view_(o.view_), w_(o.w_), tw_(o.tw_), offsets_(o.offsets_) {
    point();
  }
  ScipySum& operator=(const ScipySum&) = delete;

 private:
  void point();
  ScipySumView view_;
  std::vector<double> w_;                // correlation weights, C order (the line's)
  std::vector<double> tw_;               // N-D: the footprint's weights
  std::vector<std::int64_t> offsets_;    // N-D: dz, dy, dx, off of every tap, one after another
};

}  // namespace halo::detail
