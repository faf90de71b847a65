// Problem: validation up front, the correlation every strategy computes, the roofline numbers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <sstream>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/factor.hpp"
#include "core/nonfinite.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo {

namespace {

// Where each tap of one axis goes when the filter is folded (see the Problem constructor): the
// offset d = j - anchor of every tap reads the same elements as its representative r(d) for
// every output, so taps with one representative are summed. Offsets that reach the array keep
// their place; the others go to an equivalent offset: for constant and nearest, the first one
// beyond the array on their side (it reads cval, or the edge element, for every output), or
// nowhere for constant with cval 0 (they add 0); for the periodic modes, the offset one period
// away inside the kept range [-lo_keep, hi_keep], which is at least a period long.
struct AxisFold {
  std::vector<std::int64_t> to;  // new tap index of each old tap, -1: dropped
  std::int64_t extent = 1, anchor = 0;
};

AxisFold fold_axis(std::int64_t k, std::int64_t a, std::int64_t n, Boundary m, bool zero) {
  const std::int64_t period = detail::mode_period(n, m);
  const std::int64_t lo_keep = m == Boundary::reflect ? n : (period || zero) ? n - 1 : n;
  const std::int64_t hi_keep = (period || zero) ? n - 1 : n;
  std::vector<std::int64_t> r(static_cast<std::size_t>(k));
  std::int64_t rmin = 0, rmax = 0;
  for (std::int64_t j = 0; j < k; ++j) {
    std::int64_t d = j - a;
    if (d < -lo_keep || d > hi_keep) {
      if (zero) {
        r[j] = INT64_MIN;  // dropped
        continue;
      }
      if (period) {
        d = (d + lo_keep) % period;
        d = (d < 0 ? d + period : d) - lo_keep;
      } else {
        d = d < 0 ? -lo_keep : hi_keep;
      }
    }
    r[j] = d;
    rmin = std::min(rmin, d);
    rmax = std::max(rmax, d);
  }
  AxisFold f;
  f.extent = rmax - rmin + 1;
  f.anchor = -rmin;
  f.to.resize(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j) f.to[j] = r[j] == INT64_MIN ? -1 : r[j] - rmin;
  return f;
}

std::string modes_text(const Edges& e, int rank) {
  bool same = true;
  for (int i = 1; i < rank; ++i) same = same && e.mode[i] == e.mode[0];
  std::string s;
  for (int i = 0; i < (same ? 1 : rank); ++i) s += (i ? "," : "") + std::string(to_string(e.mode[i]));
  return s;
}

}  // namespace

Problem::Problem() : analysis_(std::make_shared<detail::FilterAnalysis>()) {}

Problem::Problem(int rank, const Extents& extents, std::int64_t batch, const Filter& filter,
                 DType dtype, Op op, const Edges& edges)
    : rank_(rank), extents_{1, 1, 1}, batch_(batch), filter_(filter), dtype_(dtype),
      out_dtype_(dtype), op_(op), edges_(edges), analysis_(std::make_shared<detail::FilterAnalysis>()) {
  if (rank < 1 || rank > kMaxRank)
    throw Error("problem rank must be 1, 2 or 3, got " + std::to_string(rank));
  for (int i = 0; i < rank; ++i) {
    if (extents[i] < 1)
      throw Error("array extent " + std::to_string(i) + " must be >= 1, got " +
                  std::to_string(extents[i]) + " (shape " +
                  detail::join_extents(extents, rank) + ")");
    extents_[i] = extents[i];
  }
  if (batch < 1) throw Error("batch must be >= 1, got " + std::to_string(batch));
  if (filter.rank() == 0) throw Error("the filter is empty");
  if (filter.rank() != rank)
    throw Error("a " + std::to_string(filter.rank()) + "-D filter (" + filter.shape_string() +
                ") does not fit a " + std::to_string(rank) + "-D array (" +
                detail::join_extents(extents_, rank) +
                "); place a 1-D filter along an axis with Filter::along_axis / --axis");
  // Element and byte counts must fit in 64 bits.
  const std::int64_t per = detail::checked_product(extents_.data(), rank, "array");
  if (per > std::numeric_limits<std::int64_t>::max() / batch / 8)
    throw Error("array of " + std::to_string(per) + " x batch " + std::to_string(batch) +
                " elements is too large");
  // Absent axes: constant, origin 0, so that comparisons of whole Edges mean what they say.
  for (int i = rank; i < kMaxRank; ++i) {
    edges_.mode[i] = Boundary::constant;
    edges_.origin[i] = 0;
  }
  // scipy.ndimage's origin: correlate reads N[i - (k/2 + origin) + j], and convolve negates the
  // origin (less one for an even extent), which makes its anchor k - 1 - k/2 - origin.
  Extents a{0, 0, 0};
  for (int i = 0; i < rank; ++i) {
    const std::int64_t k = filter.extents()[i], o = edges_.origin[i];
    if (o < -(k / 2) || o > (k - 1) / 2)
      throw Error("origin " + std::to_string(o) + " on axis " + std::to_string(i) +
                  " is out of range for a filter of extent " + std::to_string(k) + ": expected " +
                  std::to_string(-(k / 2)) + ".." + std::to_string((k - 1) / 2));
    a[i] = op == Op::correlate ? k / 2 + o : k - 1 - k / 2 - o;
  }
  std::vector<double> w;
  try {
    w = filter.weights();
  } catch (const std::bad_alloc&) {
    throw Error("cannot allocate " + std::to_string(filter.taps() * 8) +
                " bytes for a copy of the filter's weights");
  }
  // Flipping every axis of a C-order array reverses its flat order.
  if (op == Op::convolve) std::reverse(w.begin(), w.end());
  // Folding: output i reads map(i - anchor + j) (boundary.hpp), so along an axis of extent n the
  // taps beyond the array's reach, [anchor - (n-1), anchor + (n-1)], read what a tap inside or
  // just outside that range reads, for every output (constant: cval; nearest: the edge; the
  // periodic modes: the tap a period away), and are summed into it; with zero ghosts they are
  // dropped. A filter larger than the array (even a huge one) thus costs no more than about
  // 2n + 1 taps per axis, exactly. Filters within reach are left as they are.
  const bool zero = zero_ghosts();
  std::array<AxisFold, kMaxRank> folds;
  bool folded = false;
  for (int i = 0; i < rank; ++i) {
    const std::int64_t k = filter.extents()[i], n = extents_[i];
    folds[i] = fold_axis(k, a[i], n, edges_.mode[i], zero);
    bool identity = folds[i].extent == k;
    for (std::int64_t j = 0; identity && j < k; ++j) identity = folds[i].to[j] == j;
    folded = folded || !identity;
    kext_[i] = folds[i].extent;
    anchor_[i] = folds[i].anchor;
  }
  if (!folded) {
    cweights_ = std::move(w);
    return;
  }
  // Absent axes of the canonical 3-D form: one tap, kept.
  const Dims3 full = to_dims3(filter.extents(), rank), part = to_dims3(kext_, rank);
  const std::vector<std::int64_t> keep{0};
  const auto axis_map = [&](int canonical) -> const std::vector<std::int64_t>& {
    const int axis = canonical - (kMaxRank - rank);  // z, y, x -> the problem's axis
    return axis < 0 ? keep : folds[axis].to;
  };
  const auto& mz = axis_map(0);
  const auto& my = axis_map(1);
  const auto& mx = axis_map(2);
  cweights_.assign(static_cast<std::size_t>(part.count()), 0.0);
  for (std::int64_t z = 0; z < full.z; ++z) {
    if (mz[z] < 0) continue;
    for (std::int64_t y = 0; y < full.y; ++y) {
      if (my[y] < 0) continue;
      for (std::int64_t x = 0; x < full.x; ++x) {
        if (mx[x] < 0) continue;
        cweights_[(mz[z] * part.y + my[y]) * part.x + mx[x]] +=
            w[(z * full.y + y) * full.x + x];
      }
    }
  }
}

bool Problem::zero_ghosts(int axis) const {
  return edges_.mode[axis] == Boundary::constant && edges_.cval == 0;  // NaN: false
}

bool Problem::zero_ghosts() const {
  for (int i = 0; i < rank_; ++i)
    if (!zero_ghosts(i)) return false;
  return true;
}

std::int64_t Problem::taps() const {
  return detail::checked_product(kext_.data(), rank_, "filter");
}

bool Problem::filter_folded() const {
  for (int i = 0; i < rank_; ++i)
    if (kext_[i] != filter_.extents()[i]) return true;
  return false;
}

Dims3 Problem::anchor3() const {
  const Dims3 d = to_dims3(anchor_, rank_);
  // to_dims3 pads with 1; an absent axis has filter extent 1 and anchor 0.
  Dims3 a{0, 0, 0};
  if (rank_ == 1) a.x = d.x;
  if (rank_ == 2) { a.y = d.y; a.x = d.x; }
  if (rank_ == 3) a = d;
  return a;
}

std::int64_t Problem::elements_per_item() const {
  return detail::checked_product(extents_.data(), rank_, "array");
}
std::int64_t Problem::elements() const { return batch_ * elements_per_item(); }
double Problem::flops() const { return 2.0 * double(taps()) * double(elements()); }
double Problem::bytes() const {
  return double(elements()) * double(dtype_size(dtype_) + dtype_size(out_dtype_));
}

void Problem::set_output(DType out, Rounding r) {
  (void)dtype_info(out);  // a dtype of the table
  if (dtype_info(dtype_).kind == 'c' && dtype_info(out).kind != 'c')
    throw Error(std::string("a complex input (") + to_string(dtype_) +
                ") needs a complex output, not " + to_string(out));
  out_dtype_ = out;
  rounding_ = r;
}

bool Problem::float_in_float_out() const {
  return out_dtype_ == dtype_ && (dtype_ == DType::f32 || dtype_ == DType::f64);
}

bool Problem::odd_filter() const {
  for (int i = 0; i < rank_; ++i)
    if (kext_[i] % 2 == 0) return false;
  return true;
}

std::int64_t Problem::max_radius() const {
  std::int64_t r = 0;
  for (int i = 0; i < rank_; ++i) r = std::max({r, anchor_[i], kext_[i] - 1 - anchor_[i]});
  return r;
}

std::vector<double> detail::centred_window(const Problem& p, int R) {
  const std::int64_t K = 2 * std::int64_t(R) + 1;
  const int rank = p.rank();
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::vector<double>& w = p.correlation_weights();
  const std::int64_t kz = rank == 3 ? K : 1, ky = rank >= 2 ? K : 1;
  const std::int64_t rz = rank == 3 ? R : 0, ry = rank >= 2 ? R : 0;
  std::vector<double> win(static_cast<std::size_t>(kz * ky * K), 0.0);
  for (std::int64_t jz = 0; jz < k.z; ++jz)
    for (std::int64_t jy = 0; jy < k.y; ++jy)
      for (std::int64_t jx = 0; jx < k.x; ++jx)
        win[((jz - a.z + rz) * ky + jy - a.y + ry) * K + jx - a.x + R] =
            w[(jz * k.y + jy) * k.x + jx];
  return win;
}

std::string Problem::describe() const {
  std::ostringstream os;
  os << rank_ << "D " << detail::join_extents(extents_, rank_) << " " << to_string(dtype_);
  if (out_dtype_ != dtype_) os << " to " << to_string(out_dtype_);
  if (rounding_ == Rounding::nearest && dtype_info(out_dtype_).kind != 'f' &&
      dtype_info(out_dtype_).kind != 'c')
    os << " (rounded to nearest)";
  if (batch_ > 1) os << " batch " << batch_;
  os << ", filter " << filter_.shape_string();
  if (filter_folded())
    os << " (folded to " << detail::join_extents(kext_, rank_) << ", the taps that reach the array)";
  os << ", " << to_string(op_) << ", " << modes_text(edges_, rank_);
  bool constant = false;
  for (int i = 0; i < rank_; ++i) constant = constant || edges_.mode[i] == Boundary::constant;
  if (constant) os << " " << edges_.cval;
  bool shifted = false;
  for (int i = 0; i < rank_; ++i) shifted = shifted || edges_.origin[i] != 0;
  if (shifted) {
    os << ", origin ";
    for (int i = 0; i < rank_; ++i) os << (i ? "," : "") << edges_.origin[i];
  }
  return os.str();
}

detail::RepairTaps detail::repair_taps(const Problem& p) {
  const int rank = p.rank();
  const Filter& f = p.filter();
  std::vector<double> w = f.weights();
  if (p.op() == Op::convolve) std::reverse(w.begin(), w.end());
  // The same folding as the constructor's, so that the repair's taps reach what the
  // strategies' do; a weight outside the footprint is no member of its tap.
  std::array<AxisFold, kMaxRank> folds;
  const bool zero = p.zero_ghosts();
  for (int i = 0; i < rank; ++i) {
    const std::int64_t k = f.extents()[i], o = p.edges().origin[i];
    const std::int64_t a = p.op() == Op::correlate ? k / 2 + o : k - 1 - k / 2 - o;
    folds[i] = fold_axis(k, a, p.extents()[i], p.mode(i), zero);
  }
  const std::vector<std::int64_t> keep{0};
  const auto axis_fold = [&](int canonical) -> std::pair<const std::vector<std::int64_t>*,
                                                         std::int64_t> {
    const int axis = canonical - (kMaxRank - rank);
    if (axis < 0) return {&keep, 1};
    return {&folds[axis].to, folds[axis].extent};
  };
  const auto [mz, ez] = axis_fold(0);
  const auto [my, ey] = axis_fold(1);
  const auto [mx, ex] = axis_fold(2);
  RepairTaps r;
  r.k = {ez, ey, ex};
  const Extents anchor{rank >= 1 ? folds[0].anchor : 0, rank >= 2 ? folds[1].anchor : 0,
                       rank >= 3 ? folds[2].anchor : 0};
  const Dims3 a3 = to_dims3(anchor, rank);
  r.a = {rank == 3 ? a3.z : 0, rank >= 2 ? a3.y : 0, a3.x};
  r.w.assign(static_cast<std::size_t>(r.k.count()), 0.0);
  r.code.assign(r.w.size(), 0);
  const Dims3 full = to_dims3(f.extents(), rank);
  const bool every = p.footprint() == Footprint::every;
  // SciPy's footprint: |w| > DBL_EPSILON (ni_filters.c).
  const double eps = std::numeric_limits<double>::epsilon();
  for (std::int64_t z = 0; z < full.z; ++z) {
    if ((*mz)[z] < 0) continue;
    for (std::int64_t y = 0; y < full.y; ++y) {
      if ((*my)[y] < 0) continue;
      for (std::int64_t x = 0; x < full.x; ++x) {
        if ((*mx)[x] < 0) continue;
        const double v = w[(z * full.y + y) * full.x + x];
        if (!every && !(std::fabs(v) > eps)) continue;
        const std::size_t t = ((*mz)[z] * r.k.y + (*my)[y]) * r.k.x + (*mx)[x];
        r.w[t] += v;
        r.code[t] |= v > 0 ? kTapPositive : v < 0 ? kTapNegative : kTapZero;
      }
    }
  }
  return r;
}

detail::RepairGeometry detail::repair_geometry(const Problem& p) {
  RepairGeometry g;
  g.n = p.dims3();
  const int r = p.rank();
  const auto mode_of = [&](int canonical) {
    const int axis = canonical - (kMaxRank - r);
    return axis < 0 ? Boundary::constant : p.mode(axis);
  };
  g.mz = mode_of(0);
  g.my = mode_of(1);
  g.mx = mode_of(2);
  g.cval = p.cval();
  return g;
}

Traffic Strategy::model(const Problem& p) const { return {p.bytes(), p.flops()}; }
Estimate Strategy::estimate(const Problem&) const { return Estimate::none("no time model"); }

}  // namespace halo
