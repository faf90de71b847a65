// Problems of the dtypes a host strategy is not written for (8/16/32-bit integers, half types,
// complex, an output dtype other than the input's), run by that strategy in its own float32 or
// float64 over slabs (converted.hpp).
#include "core/converted.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "core/boundary.hpp"
#include "core/convert.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/nonfinite.hpp"
#include "core/scipy_sum.hpp"

namespace halo::detail {

DType compute_dtype(const Problem& p) {
  const auto wide = [](DType t) { return t == DType::f64 || t == DType::i32 || t == DType::c128; };
  // 16-bit integers too: float32's rounding of sums up to 65535 leaves a fifth of a Gaussian's
  // outputs within the bound of an integer (each then SciPy's sum again); float64's, none.
  const bool sixteen = p.dtype() == DType::u16 || p.dtype() == DType::i16;
  return sixteen || wide(p.dtype()) || wide(p.out_dtype()) ? DType::f64 : DType::f32;
}

namespace {

using i64 = std::int64_t;

// Bytes of the compute dtype per slab buffer (one for the input, one for the output): a few MB
// keeps both in the last-level cache while the strategy runs, and the memory bounded. Tests make
// it small (set_converted_slab_bytes) so that slabs cut arrays at every position.
// On the device, large slabs keep the strategies at their speed, the bound a converted run of a
// large array within a fixed workspace. 0: the defaults.
std::atomic<double> slab_bytes{0};

// A component of the storage type T: its real part (part 0) or imaginary part (part 1) for
// complex T, the value itself otherwise.
template <class T>
struct Component {
  using type = T;
  static constexpr int parts = 1;
};
template <class R>
struct Component<std::complex<R>> {
  using type = R;
  static constexpr int parts = 2;
};

// Two slabs' worth of memory for the calling thread, at least `bytes`, kept for its next runs
// (the largest it needed so far; the default slabs are 4 MB each).
void* thread_slabs(std::size_t bytes, double slab_bytes, DType compute) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> held;
  thread_local std::size_t size = 0;
  if (size < bytes) {
    held.reset();
    size = 0;
    held.reset(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (!held)
      throw Error("cannot allocate two slabs of " + std::to_string(i64(slab_bytes)) +
                  " bytes in " + to_string(compute));
    size = bytes;
  }
  return held.get();
}

class ConvertedPlan final : public ConvertedBase {
 public:
  ConvertedPlan(const Strategy& s, const Problem& p) : ConvertedBase(s, p, MemorySpace::host) {}
  void run(const Buffers& b, void* stream) const override;

 private:
  template <class T, class A>
  void fill(const T* in, A* buf, i64 s, int part, double* maxabs) const;
  template <class T, class A>
  void store(const A* buf, const void* in, T* out, i64 s, int part, double bound) const;
};

}  // namespace

std::string ConvertedBase::init(double kSlab) {
  const Problem& p = problem();
  compute_ = compute_dtype(p);
  const i64 asize = i64(dtype_size(compute_));
  parts_ = is_complex_dtype(p.dtype()) ? 2 : 1;
  const i64 item = p.elements_per_item();
  Extents ext = p.extents();
  i64 batch = p.batch();
  row_elems_ = item / ext[0];
  const i64 k0 = p.filter().extents()[0];
  // Whole items where one fits a slab (or the filter is folded: its folding is the whole
  // array's); else slabs along axis 0 with the k0 - 1 rows of their halo.
  if (double(item * asize) * 2 <= kSlab || p.filter_folded() || ext[0] == 1) {
    items_ = std::max<i64>(1, std::min<i64>(p.batch(), i64(kSlab / double(item * asize))));
    slabs_ = (p.batch() + items_ - 1) / items_;
    items_ = (p.batch() + slabs_ - 1) / slabs_;  // balanced; the last slab's spare items are zeros
    batch = items_;
    slab_bytes_ = double(items_ * item * asize);
  } else {
    along_axis0_ = true;
    rows_ = std::max<i64>(i64(kSlab / double(row_elems_ * asize)), 1);
    rows_ = std::min(rows_, ext[0]);
    const i64 per_item = (ext[0] + rows_ - 1) / rows_;
    rows_ = (ext[0] + per_item - 1) / per_item;
    slabs_ = per_item * p.batch();
    sub_rows_ = rows_ + k0 - 1;
    ext[0] = sub_rows_;
    batch = 1;
    slab_bytes_ = double(sub_rows_ * row_elems_ * asize);
  }
  for (int part = 0; part < parts_; ++part) {
    Edges e = p.edges();
    if (part == 1) e.cval = 0;  // SciPy's imaginary part of a real cval
    if (part == 1 && e.cval == p.cval()) {
      inner_.push_back(inner_[0]);
      sub_.push_back(nullptr);
      continue;
    }
    auto sub = std::make_unique<Problem>(p.rank(), ext, batch, p.filter(), compute_, p.op(), e);
    sub->require_direct_sums(p.direct_sums());
    sub->set_footprint(p.footprint());
    sub->set_tuning(p.tuning());
    sub->set_progress(p.progress());
    const Status dt = strategy().accepts_dtypes(*sub);
    if (!dt) return dt.reason;
    Prepared pp = strategy().prepare(*sub);
    if (!pp) return pp.why_not;
    // An integer output truncated as SciPy's needs a per-output bound on the sum's rounding:
    // direct or separable sums, asked for where the strategy would sum otherwise (Winograd
    // columns, running sums, transforms).
    const auto bounded = [](const Prepared& q) {
      const Summation s = q.plan->summation();
      return s == Summation::direct || s == Summation::separable;
    };
    if (is_integer_dtype(p.out_dtype()) && p.rounding() == Rounding::truncate && !bounded(pp)) {
      sub->require_direct_sums(true);
      pp = strategy().prepare(*sub);
      if (!pp) return pp.why_not;
      if (!bounded(pp))
        return "an integer output needs direct or separable sums (a per-output rounding bound)";
    }
    inner_.push_back(std::move(pp.plan));
    sub_.push_back(std::move(sub));
  }
  return {};
}

namespace {

// Slab s's input in the compute type A: part `part` of the input's elements, the rows beyond the
// array along axis 0 as its mode maps them (cval for constant), and zeros past the last item
// or row. maxabs: the largest finite |value| written.
template <class T, class A>
void ConvertedPlan::fill(const T* in, A* buf, i64 s, int part, double* maxabs) const {
  using C = typename Component<T>::type;
  const Problem& p = problem();
  const i64 item = p.elements_per_item(), n0 = p.extents()[0];
  const double cval = part == 0 ? p.cval() : 0.0;
  const i64 rows = along_axis0_ ? sub_rows_ : items_ * n0;
  const i64 base_item = along_axis0_ ? s / ((n0 + rows_ - 1) / rows_) : s * items_;
  const i64 row0 = along_axis0_ ? (s % ((n0 + rows_ - 1) / rows_)) * rows_ : 0;
  const i64 a0 = along_axis0_ ? p.anchor()[0] : 0;
  const Boundary m0 = p.mode(0);
  double mx = 0;
#pragma omp parallel for schedule(static) reduction(max : mx) if (rows * row_elems_ > (1 << 16))
  for (i64 t = 0; t < rows; ++t) {
    A* dst = buf + t * row_elems_;
    i64 b = base_item, i = t;
    if (along_axis0_) {
      i = map_index(row0 - a0 + t, n0, m0);
    } else {
      b = base_item + t / n0;
      i = t % n0;
    }
    if (b >= p.batch()) {  // a spare item of the last slab
      std::fill(dst, dst + row_elems_, A(0));
      continue;
    }
    if (i < 0) {  // a constant-mode ghost row
      std::fill(dst, dst + row_elems_, A(cval));
      continue;
    }
    const T* src = in + b * item + i * row_elems_;
    if constexpr (Component<T>::parts == 2) {
      for (i64 e = 0; e < row_elems_; ++e) {
        const A v = A(part == 0 ? src[e].real() : src[e].imag());
        dst[e] = v;
        if (std::fabs(double(v)) > mx && std::isfinite(double(v))) mx = std::fabs(double(v));
      }
    } else if constexpr (std::is_integral_v<T>) {  // finite: a plain maximum, vectorised
      A m = 0;
      const T* __restrict sv = src;  // restrict: a byte input may alias anything
      A* __restrict dv = dst;
      for (i64 e = 0; e < row_elems_; ++e) {
        const A v = A(sv[e]);
        dv[e] = v;
        m = std::max(m, std::fabs(v));
      }
      mx = std::max(mx, double(m));
    } else {
      for (i64 e = 0; e < row_elems_; ++e) {
        const A v = to_accum<A>(static_cast<C>(src[e]));
        dst[e] = v;
        if (std::fabs(double(v)) > mx && std::isfinite(double(v))) mx = std::fabs(double(v));
      }
    }
  }
  *maxabs = mx;
}

// Slab s's outputs from the inner run's sums `buf`: the rows that are the slab's own, stored as
// the output type T by the problem's rounding; an integer output truncated as SciPy's takes
// SciPy's own sum (ScipySum) where `bound` leaves the truncation undecided.
template <class T, class A>
void ConvertedPlan::store(const A* buf, const void* in, T* out, i64 s, int part,
                          double bound) const {
  const Problem& p = problem();
  const i64 item = p.elements_per_item(), n0 = p.extents()[0];
  const Slab sl = slab(s);
  const i64 base_item = sl.item, row0 = sl.row0, rows = sl.rows, skip = sl.skip;
  const Dims3 n = p.dims3();
  const double cval = part == 0 ? p.cval() : 0.0;
  const A b = A(bound);
  const std::size_t in_item_bytes = std::size_t(item) * dtype_size(p.dtype());
#pragma omp parallel for schedule(dynamic, 8) if (rows * row_elems_ > (1 << 16))
  for (i64 t = 0; t < rows; ++t) {
    const A* src = buf + (t + skip) * row_elems_;
    const i64 bi = along_axis0_ ? base_item : base_item + t / n0;
    const i64 i = along_axis0_ ? row0 + t : t % n0;
    const i64 first = bi * item + i * row_elems_;  // the row's first output
    if constexpr (is_integer_storage_v<T>) {
      if (p.rounding() == Rounding::nearest) {
        for (i64 e = 0; e < row_elems_; ++e) out[first + e] = nearest_cast<T>(double(src[e]));
        continue;
      }
      const void* item_in = static_cast<const char*>(in) + std::size_t(bi) * in_item_bytes;
      // Two plain loops the compiler vectorises: which outputs the bound leaves undecided (and
      // whether every sum lies in int32's range), then the conversion; restrict: a byte output
      // may alias anything.
      const A* __restrict sv = src;
      T* __restrict ov = out + first;
      int undecided = 0, inside = 1;
      for (i64 e = 0; e < row_elems_; ++e) {
        undecided |= int(truncation_undecided(sv[e], b));
        inside &= int(std::fabs(sv[e]) < A(2147483520.0f));
      }
      if (inside) {
        for (i64 e = 0; e < row_elems_; ++e)
          ov[e] = static_cast<T>(static_cast<std::uint32_t>(static_cast<std::int32_t>(sv[e])));
      } else {
        for (i64 e = 0; e < row_elems_; ++e) ov[e] = scipy_cast_from<T>(sv[e]);
      }
      if (!undecided) continue;
      // SciPy's own sums for the few outputs the bound leaves undecided; the coordinates of
      // the row's outputs walked from its first (no division per output).
      dispatch_dtype<RealDTypes>(p.dtype(), [&](auto d) {
        using S = typename decltype(d)::storage;
        const S* x = static_cast<const S*>(item_in);
        ScipySum::FlatCache flat;
        const i64 f0 = i * row_elems_;
        i64 cz = f0 / (n.y * n.x), cy = (f0 / n.x) % n.y, cx = f0 % n.x;
        for (i64 e = 0; e < row_elems_; ++e) {
          if (truncation_undecided(src[e], b))
            out[first + e] = scipy_cast<T>(sum_.at(x, cz, cy, cx, cval, flat));
          if (++cx == n.x) {
            cx = 0;
            if (++cy == n.y) {
              cy = 0;
              ++cz;
            }
          }
        }
      });
    } else if constexpr (Component<T>::parts == 2) {
      using R = typename Component<T>::type;
      R* o = reinterpret_cast<R*>(out + first);
      for (i64 e = 0; e < row_elems_; ++e) {
        o[2 * e + part] = R(src[e]);
        if (parts_ == 1) o[2 * e + 1] = R(0);  // a real input's imaginary part
      }
    } else {
      for (i64 e = 0; e < row_elems_; ++e) out[first + e] = from_accum_float<T>(src[e]);
    }
  }
}

void ConvertedPlan::run(const Buffers& b, void* stream) const {
  const Problem& p = problem();
  dispatch_dtype<DTypeList<DType::f32, DType::f64>>(compute_, [&](auto cd) {
    using A = typename decltype(cd)::storage;
    // The calling thread's slabs, kept between runs (fresh memory costs a page fault per 4 KB
    // on every run); uninitialised: fill() writes every element the strategy reads.
    const std::size_t count = std::size_t(slab_bytes_ / sizeof(A));
    A* bin = static_cast<A*>(thread_slabs(2 * count * sizeof(A), slab_bytes_, compute_));
    A* bout = bin + count;
    bool integral = false, ghosts = false;
    double exact_below = 0;
    const double rel = bound_scale(&integral, &exact_below);
    for (int a = 0; a < p.rank(); ++a) ghosts = ghosts || p.mode(a) == Boundary::constant;
    for (int part = 0; part < parts_; ++part) {
      const double cval = part == 0 ? p.cval() : 0.0;
      for (i64 s = 0; s < slabs_; ++s) {
        double maxabs = 0;
        dispatch_dtype<AllDTypes>(p.dtype(), [&](auto d) {
          using T = typename decltype(d)::storage;
          fill(static_cast<const T*>(b.input), bin, s, part, &maxabs);
        });
        run_strategy(*inner_[part], bin, bout, stream);
        if (ghosts && std::isfinite(cval)) maxabs = std::max(maxabs, std::fabs(cval));
        const double bound = integral && maxabs < exact_below ? -1.0 : rel * maxabs;
        dispatch_dtype<AllDTypes>(p.out_dtype(), [&](auto d) {
          using T = typename decltype(d)::storage;
          store(bout, b.input, static_cast<T*>(b.output), s, part, bound);
        });
      }
    }
  });
}

}  // namespace

Prepared prepare_converted(const Strategy& s, const Problem& p) {
  // A strategy not written for the slabs' dtype either (one written for other integer types:
  // cpu_lines, lines) is refused before anything of the problem is copied (SciPy's sums hold
  // 40 bytes a tap).
  const Problem probe(1, {1, 1, 1}, 1, Filter({1.0}, {1}), compute_dtype(p));
  if (const Status dt = s.accepts_dtypes(probe); !dt) return Prepared::cannot(dt.reason);
  if (s.backend() == Backend::cuda) return prepare_converted_on_device(s, p);
  auto plan = std::make_shared<ConvertedPlan>(s, p);
  const std::string why = plan->init(converted_slab_bytes(MemorySpace::host));
  if (!why.empty()) return Prepared::cannot(why);
  return {std::move(plan), {}};
}

void set_converted_slab_bytes(double bytes) { slab_bytes.store(bytes > 0 ? bytes : 0.0); }

double converted_slab_bytes(MemorySpace space) {
  const double b = slab_bytes.load();
  if (b > 0) return b;
  return space == MemorySpace::host ? double(4 << 20) : double(512 << 20);
}

bool converts(const StrategyPlan& plan) {
  return dynamic_cast<const ConvertedBase*>(&plan) != nullptr;
}

double ConvertedBase::bound_scale(bool* integral, double* exact_below) const {
  const Problem& p = problem();
  double wsum = 0;
  for (double w : p.filter().weights()) wsum += std::fabs(w);
  const double taps = double(p.filter().taps());
  const double unit = compute_ == DType::f32 ? 0x1p-24 : 0x1p-53;
  bool in = is_integer_dtype(p.dtype()) && std::isfinite(p.cval()) &&
            p.cval() == std::nearbyint(p.cval());
  for (double w : p.filter().weights()) in = in && w == std::nearbyint(w);
  *integral = in;
  *exact_below = (compute_ == DType::f32 ? 0x1p24 : 0x1p53) / std::max(wsum, 1e-300);
  return ((taps + 8) * unit + (taps + 2) * 0x1p-53) * wsum;
}

ConvertedBase::Slab ConvertedBase::slab(i64 s) const {
  const Problem& p = problem();
  const i64 n0 = p.extents()[0];
  Slab r;
  if (along_axis0_) {
    const i64 per_item = (n0 + rows_ - 1) / rows_;
    r.item = s / per_item;
    r.row0 = (s % per_item) * rows_;
    r.rows = std::min(rows_, n0 - r.row0);
    r.skip = p.anchor()[0];
  } else {
    r.item = s * items_;
    r.rows = std::min(items_, p.batch() - r.item) * n0;
  }
  return r;
}

}  // namespace halo::detail
