// strategy: reference — one output at a time, every tap, float64 accumulation, ghost cells from the
// boundary mode. O(elements * taps); the oracle for every other strategy.
#include "cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/detail.hpp"

namespace halo::cpu {
namespace {

// Index of coordinate i on an axis of extent n under the boundary mode, or -1 for a zero ghost.
inline std::int64_t resolve(std::int64_t i, std::int64_t n, Boundary b) {
  switch (b) {
    case Boundary::zero: return (i < 0 || i >= n) ? -1 : i;
  }
  return -1;
}

// The taps [lo, hi) of an axis worth visiting for output coordinate i: with zero ghost cells
// only those that land inside the array (the others add 0), so a filter far larger than the
// array costs the oracle no more than the array allows.
struct TapRange {
  std::int64_t lo, hi;
};
inline TapRange taps_for(std::int64_t i, std::int64_t a, std::int64_t k, std::int64_t n,
                         Boundary b) {
  switch (b) {
    case Boundary::zero: return {std::max<std::int64_t>(0, a - i), std::min(k, a - i + n)};
  }
  return {0, k};
}

// The definition, from the filter as the user gave it (not the Problem's cropped correlation
// weights, so that the cropping is checked too): correlate reads N[i - k/2 + j] with weight F[j];
// convolve is the same sum with F flipped on every axis, i.e. anchor k - 1 - k/2.
template <class T>
void reference_impl(const Problem& p, const T* in, double* out, bool absolute) {
  const auto& progress = p.progress();
  const Dims3 n = p.dims3(), k = to_dims3(p.filter().extents(), p.rank());
  const bool flip = p.op() == Op::convolve;
  const auto anchor = [flip](std::int64_t e) { return flip ? e - 1 - e / 2 : e / 2; };
  const Dims3 a{anchor(k.z), anchor(k.y), anchor(k.x)};  // padded axes: extent 1, anchor 0
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
          const TapRange tz = taps_for(z, a.z, k.z, n.z, p.boundary());
          const TapRange ty = taps_for(y, a.y, k.y, n.y, p.boundary());
          const TapRange tx = taps_for(x, a.x, k.x, n.x, p.boundary());
          for (std::int64_t fz = tz.lo; fz < tz.hi; ++fz) {
            const std::int64_t iz = resolve(z - a.z + fz, n.z, p.boundary());
            if (iz < 0) continue;
            for (std::int64_t fy = ty.lo; fy < ty.hi; ++fy) {
              const std::int64_t iy = resolve(y - a.y + fy, n.y, p.boundary());
              if (iy < 0) continue;
              for (std::int64_t fx = tx.lo; fx < tx.hi; ++fx) {
                const std::int64_t ix = resolve(x - a.x + fx, n.x, p.boundary());
                if (ix < 0) continue;
                const double wv = w[(fz * k.y + fy) * k.x + fx];
                const double v = static_cast<double>(src[(iz * n.y + iy) * n.x + ix]);
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
  int priority(const Problem&) const override { return -100; }
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
    if (p.dtype() == DType::f32) {
      float* o = static_cast<float*>(b.output);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(tmp[i]);
    } else {
      double* o = static_cast<double*>(b.output);
      for (std::int64_t i = 0; i < n; ++i) o[i] = tmp[i];
    }
  }
};

}  // namespace

void reference_f64(const Problem& p, const void* in, double* out, bool absolute) {
  if (p.dtype() == DType::f32)
    reference_impl(p, static_cast<const float*>(in), out, absolute);
  else
    reference_impl(p, static_cast<const double*>(in), out, absolute);
}

std::unique_ptr<Strategy> make_reference_strategy() { return std::make_unique<ReferenceStrategy>(); }

}  // namespace halo::cpu
