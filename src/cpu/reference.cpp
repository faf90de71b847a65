// strategy: reference — one output at a time, every tap, float64 accumulation, ghost cells from the
// boundary mode. O(elements * taps); the oracle for every other strategy.
#include "cpu/reference.hpp"

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

template <class T>
void reference_impl(const Problem& p, const T* in, double* out, bool absolute) {
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::vector<double>& w = p.correlation_weights();
  const std::int64_t item = n.count();
  for (std::int64_t b = 0; b < p.batch(); ++b) {
    const T* src = in + b * item;
    double* dst = out + b * item;
    for (std::int64_t z = 0; z < n.z; ++z)
      for (std::int64_t y = 0; y < n.y; ++y)
        for (std::int64_t x = 0; x < n.x; ++x) {
          double acc = 0.0;
          for (std::int64_t fz = 0; fz < k.z; ++fz) {
            const std::int64_t iz = resolve(z - a.z + fz, n.z, p.boundary());
            if (iz < 0) continue;
            for (std::int64_t fy = 0; fy < k.y; ++fy) {
              const std::int64_t iy = resolve(y - a.y + fy, n.y, p.boundary());
              if (iy < 0) continue;
              for (std::int64_t fx = 0; fx < k.x; ++fx) {
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

class ReferenceStrategy final : public Strategy {
 public:
  std::string name() const override { return "reference"; }
  Backend backend() const override { return Backend::reference; }
  std::string description() const override {
    return "plain loops, float64 accumulation: the oracle (slow)";
  }
  Status can_implement(const Problem&) const override { return Status::success(); }
  int priority(const Problem&) const override { return -100; }
  void run(const Problem& p, const Buffers& b, void*) const override {
    const std::int64_t n = p.elements();
    std::vector<double> tmp(static_cast<std::size_t>(n));
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
