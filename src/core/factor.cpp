// Filter analysis: rank-1 factors, the 1-D passes that run a rank-1 filter, and the sums of
// separable terms that run a filter of low rank.
#include "core/factor.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/dtype.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

std::optional<RankOneFactors> rank_one_factors(const Filter& filter, double rel_tol) {
  const int d = filter.rank();
  const Extents& e = filter.extents();
  const std::vector<double>& w = filter.weights();
  if (d < 1 || w.empty()) return std::nullopt;
  // Strides of the C-order weights, and the weight of largest magnitude.
  std::int64_t stride[kMaxRank] = {1, 1, 1};
  for (int a = d - 2; a >= 0; --a) stride[a] = stride[a + 1] * e[a + 1];
  std::size_t peak = 0;
  for (std::size_t i = 1; i < w.size(); ++i)
    if (std::fabs(w[i]) > std::fabs(w[peak])) peak = i;
  const double top = w[peak];
  RankOneFactors r;
  r.f.resize(d);
  if (top == 0) {  // the zero filter: zero factors
    for (int a = 0; a < d; ++a) r.f[a].assign(e[a], 0.0);
    return r;
  }
  std::int64_t p[kMaxRank] = {0, 0, 0};
  for (int a = 0; a < d; ++a) p[a] = std::int64_t(peak) / stride[a] % e[a];
  for (int a = 0; a < d; ++a) {
    r.f[a].resize(e[a]);
    const std::int64_t base = std::int64_t(peak) - p[a] * stride[a];
    for (std::int64_t i = 0; i < e[a]; ++i)
      r.f[a][i] = w[base + i * stride[a]] / (a == 0 ? 1.0 : top);
  }
  // Every weight against the product of its factors, in C order: the index of each axis
  // carried like an odometer (no division per weight, so that a large filter's check stays cheap).
  double worst = 0;
  std::int64_t idx[kMaxRank] = {0, 0, 0};
  for (std::size_t i = 0; i < w.size(); ++i) {
    double prod = 1;
    for (int a = 0; a < d; ++a) prod *= r.f[a][idx[a]];
    worst = std::fmax(worst, std::fabs(w[i] - prod));
    for (int a = d - 1; a >= 0 && ++idx[a] == e[a]; --a) idx[a] = 0;
  }
  r.residual = worst / std::fabs(top);
  if (!(r.residual <= rel_tol)) return std::nullopt;
  return r;
}

std::optional<BoxRun> box_run(const std::vector<double>& w) {
  int lo = 0, hi = int(w.size()) - 1;
  while (lo <= hi && w[std::size_t(lo)] == 0) ++lo;
  while (hi >= lo && w[std::size_t(hi)] == 0) --hi;
  if (lo > hi) return std::nullopt;
  for (int i = lo; i <= hi; ++i)
    if (w[std::size_t(i)] != w[std::size_t(lo)]) return std::nullopt;
  return BoxRun{lo, hi - lo + 1, w[std::size_t(lo)]};
}

namespace {

// Whether x is a whole number to 64 ulps, and to `slack` of its magnitude (Multiples).
bool whole(double x, double slack) {
  const double m = std::fabs(x);
  return std::fabs(x - std::nearbyint(x)) <= 0x1p-46 * (m + 8) + slack * m;
}

// The least q <= 2^20 with r q whole, from r's continued fraction (whose convergents are its
// best rational approximations); 0 if there is none.
std::int64_t denominator(double r, double slack) {
  double p0 = 1, q0 = 0, p1 = std::floor(r), q1 = 1, x = r - std::floor(r);
  for (int i = 0; i < 64 && q1 <= double(1 << 20); ++i) {
    if (whole(r * q1, slack) && std::nearbyint(r * q1) == p1) return std::int64_t(q1);
    if (!(x > 0)) return 0;
    x = 1 / x;
    const double a = std::floor(x);
    x -= a;
    const double p2 = a * p1 + p0, q2 = a * q1 + q0;
    p0 = p1, q0 = q1, p1 = p2, q1 = q2;
  }
  return 0;
}

}  // namespace

std::optional<Multiples> multiples(const std::vector<double>& w, double slack) {
  slack = std::min(std::max(slack, 0.0), 0x1p-40);
  double least = 0;
  for (double v : w)
    if (v != 0 && (least == 0 || std::fabs(v) < least)) least = std::fabs(v);
  if (!(least > 0) || !std::isfinite(least)) return std::nullopt;
  // The step: the least magnitude over the least q that makes every |w| / least times q whole
  // (a box folded by a mode holds sums of 2 and 3 of its weights: q = 2).
  std::int64_t q = 1;
  for (double v : w) {
    if (v == 0 || whole(std::fabs(v) / least * double(q), slack)) continue;
    const std::int64_t d = denominator(std::fabs(v) / least, slack);
    if (d == 0) return std::nullopt;
    q = q / std::gcd(q, d) * d;
    if (q > (1 << 20)) return std::nullopt;
  }
  Multiples r;
  r.step = least / double(q);
  r.m.resize(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double m = w[i] / r.step;
    if (!(std::fabs(m) <= double(1 << 20)) || !whole(m, slack)) return std::nullopt;
    r.m[i] = std::nearbyint(m);
  }
  return r;
}

double fold_slack(double spread) {
  return std::min(0x1p-40, std::max(1.0, spread) * 0x1p-53);
}

double whole_reciprocal(double s, double tol) {
  if (!(s > 0)) return 0;
  const double q = 1.0 / s, d = std::nearbyint(q);
  return d >= 1 && d <= double(1 << 24) && std::fabs(q - d) <= tol * d ? d : 0;
}

namespace {
std::optional<AxisWindows> compute_windows(const Problem& p);
}

const std::optional<AxisWindows>& separable_windows(const Problem& p) {
  FilterAnalysis& a = p.analysis();
  std::call_once(a.windows_once, [&] { a.windows = compute_windows(p); });
  return a.windows;
}

namespace {
std::optional<AxisWindows> compute_windows(const Problem& p) {
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::int64_t ext[3] = {k.z, k.y, k.x}, anc[3] = {a.z, a.y, a.x};
  if (k.z * k.y * k.x > std::int64_t(1) << 26)
    return std::nullopt;  // analysis of the folded filter is cheap below this
  const auto f = rank_one_factors(Filter(p.correlation_weights(), {k.z, k.y, k.x}));
  if (!f) return std::nullopt;
  AxisWindows out;
  double scale = 1;  // the factors of the axes of extent 1
  int last_long = 2;
  for (int i = 0; i < 3; ++i) {
    if (ext[i] > 1) {
      ++out.long_axes;
      out.taps += ext[i];
      last_long = i;
    } else {
      scale *= f->f[i][0];
    }
  }
  for (int i = 0; i < 3; ++i) {
    const std::int64_t r = std::max(anc[i], ext[i] - 1 - anc[i]);
    if (r > 1 << 20) return std::nullopt;
    out.radius[i] = int(r);
    out.w[i].assign(std::size_t(2 * r + 1), 0.0);
    if (ext[i] == 1) {
      out.w[i][0] = i == last_long ? scale : 1.0;
      continue;
    }
    const double s = i == last_long ? scale : 1.0;
    for (std::int64_t j = 0; j < ext[i]; ++j)
      out.w[i][std::size_t(r + j - anc[i])] = s * f->f[i][j];
  }
  return out;
}
}  // namespace

namespace {

// The problem's folded filter in canonical form: extents, anchors and window radii per axis
// (z, y, x), and C-order strides.
struct Frame {
  std::int64_t k[3], anc[3], R[3], stride[3];
  explicit Frame(const Problem& p) {
    const Dims3 kd = p.filter_dims3(), a = p.anchor3();
    k[0] = kd.z, k[1] = kd.y, k[2] = kd.x;
    anc[0] = a.z, anc[1] = a.y, anc[2] = a.x;
    for (int i = 0; i < 3; ++i) R[i] = std::max(anc[i], k[i] - 1 - anc[i]);
    stride[2] = 1, stride[1] = k[2], stride[0] = k[1] * k[2];
  }
  // A centred window of radius R[i] holding v (k[i] weights by filter index) at offset j - anc.
  std::vector<double> window(int i, const std::vector<double>& v) const {
    std::vector<double> w(std::size_t(2 * R[i] + 1), 0.0);
    for (std::int64_t j = 0; j < k[i]; ++j) w[std::size_t(R[i] + j - anc[i])] = v[std::size_t(j)];
    return w;
  }
  // A window of radius R[i] with a single 1 at the offset of filter index j.
  std::vector<double> unit(int i, std::int64_t j) const {
    std::vector<double> v(std::size_t(k[i]), 0.0);
    v[std::size_t(j)] = 1;
    return window(i, v);
  }
};

// Cuts window w (radius len / 2) to the smallest radius that holds its nonzero weights.
void trim(std::vector<double>& w, int& radius) {
  const int R = int(w.size()) / 2;
  int r = 0;
  for (int i = 0; i < int(w.size()); ++i)
    if (w[std::size_t(i)] != 0) r = std::max(r, std::abs(i - R));
  w = std::vector<double>(w.begin() + (R - r), w.begin() + (R + r + 1));
  radius = r;
}

// A term from its three windows (radius R each): trimmed (unless `keep`: every weight of the
// filter is then a tap, zeros too, Footprint::every), the value of one-weight windows moved into
// the last longer one (x where there is none), its long axes and taps counted.
AxisWindows make_term(std::array<std::vector<double>, 3> w, bool keep = false) {
  AxisWindows t;
  for (int i = 0; i < 3; ++i) {
    t.w[std::size_t(i)] = std::move(w[std::size_t(i)]);
    if (keep)
      t.radius[std::size_t(i)] = int(t.w[std::size_t(i)].size()) / 2;
    else
      trim(t.w[std::size_t(i)], t.radius[std::size_t(i)]);
  }
  int last = 2;
  for (int i = 0; i < 3; ++i)
    if (t.radius[std::size_t(i)] > 0) last = i;
  double scale = 1;
  for (int i = 0; i < 3; ++i)
    if (t.radius[std::size_t(i)] == 0 && i != last) {
      scale *= t.w[std::size_t(i)][0];
      t.w[std::size_t(i)][0] = 1;
    }
  for (double& v : t.w[std::size_t(last)]) v *= scale;
  for (int i = 0; i < 3; ++i) {
    const auto& v = t.w[std::size_t(i)];
    if (v.size() == 1 && v[0] == 1.0) continue;
    ++t.long_axes;
    t.taps += std::int64_t(v.size());
  }
  return t;
}

// Makes w exactly symmetric about its centre where it is so to 1e-14 of its largest weight.
void symmetrise(std::vector<double>& w, double rel_tol) {
  double top = 0, asym = 0;
  const std::size_t n = w.size();
  for (std::size_t i = 0; i < n; ++i) {
    top = std::max(top, std::fabs(w[i]));
    asym = std::max(asym, std::fabs(w[i] - w[n - 1 - i]));
  }
  if (asym == 0 || asym > rel_tol * top) return;
  for (std::size_t i = 0; i < n / 2; ++i) w[i] = w[n - 1 - i] = 0.5 * (w[i] + w[n - 1 - i]);
}

// The axis-line form, or nullopt where some nonzero weight lies off the lines.
std::optional<LowRankTerms> axis_lines(const Frame& f, const std::vector<double>& W) {
  std::int64_t c[3] = {0, 0, 0};  // the common point p
  for (int i = 0; i < 3; ++i) {
    if (f.k[i] == 1) continue;
    // The coordinate along i that most nonzero weights share (the anchor's on a tie).
    std::vector<std::int64_t> count(std::size_t(f.k[i]), 0);
    for (std::size_t n = 0; n < W.size(); ++n)
      if (W[n] != 0) ++count[std::size_t(std::int64_t(n) / f.stride[i] % f.k[i])];
    c[i] = std::clamp<std::int64_t>(f.anc[i], 0, f.k[i] - 1);
    for (std::int64_t j = 0; j < f.k[i]; ++j)
      if (count[std::size_t(j)] > count[std::size_t(c[i])]) c[i] = j;
  }
  for (std::size_t n = 0; n < W.size(); ++n) {
    if (W[n] == 0) continue;
    int off = 0;
    for (int i = 0; i < 3; ++i) off += std::int64_t(n) / f.stride[i] % f.k[i] != c[i];
    if (off > 1) return std::nullopt;
  }
  const std::int64_t centre = c[0] * f.stride[0] + c[1] * f.stride[1] + c[2] * f.stride[2];
  std::vector<double> line[3];
  int owner = -1;  // the axis whose line takes the weight at p
  for (int i = 0; i < 3; ++i) {
    line[i].assign(std::size_t(f.k[i]), 0.0);
    if (f.k[i] == 1) continue;
    bool any = false;
    for (std::int64_t j = 0; j < f.k[i]; ++j) {
      if (j == c[i]) continue;
      line[i][std::size_t(j)] = W[std::size_t(centre + (j - c[i]) * f.stride[i])];
      any = any || line[i][std::size_t(j)] != 0;
    }
    if (any || owner < 0) owner = i;
  }
  if (owner < 0) return std::nullopt;
  line[owner][std::size_t(c[owner])] = W[std::size_t(centre)];
  LowRankTerms r;
  r.axis_lines = true;
  for (int i = 0; i < 3; ++i) {
    bool any = false;
    for (double v : line[i]) any = any || v != 0;
    if (!any && i != owner) continue;
    std::array<std::vector<double>, 3> w;
    for (int b = 0; b < 3; ++b) w[std::size_t(b)] = b == i ? f.window(b, line[i]) : f.unit(b, c[b]);
    r.terms.push_back(make_term(std::move(w)));
  }
  return r;
}

}  // namespace

std::vector<double> term_weights(const Problem& p, const AxisWindows& t) {
  const Frame f(p);
  std::vector<double> w(std::size_t(f.k[0] * f.k[1] * f.k[2]));
  for (std::size_t n = 0; n < w.size(); ++n) {
    double prod = 1;
    for (int i = 0; i < 3; ++i) {
      const std::int64_t d = std::int64_t(n) / f.stride[i] % f.k[i] - f.anc[i];
      const int r = t.radius[std::size_t(i)];
      prod *= std::abs(d) > r ? 0.0 : t.w[std::size_t(i)][std::size_t(r + d)];
    }
    w[n] = prod;
  }
  return w;
}

std::optional<LowRankTerms> low_rank_terms(const Problem& p, double rel_tol) {
  if (rel_tol < 0)
    rel_tol = per_dtype(p.dtype(), kLowRankTolF32, kLowRankTolF64, "the low-rank tolerance");
  const Frame f(p);
  const std::int64_t taps = f.k[0] * f.k[1] * f.k[2];
  int long_axes = 0, a = -1, b = -1;
  for (int i = 0; i < 3; ++i)
    if (f.k[i] > 1) {
      ++long_axes;
      (a < 0 ? a : b) = i;
    }
  if (long_axes < 2 || taps > std::int64_t(1) << 26) return std::nullopt;
  for (int i = 0; i < 3; ++i)
    if (f.R[i] > 1 << 20) return std::nullopt;
  const std::vector<double>& W = p.correlation_weights();
  double top = 0;
  for (double v : W) top = std::max(top, std::fabs(v));
  if (top == 0) return std::nullopt;
  // Under Footprint::every a zero weight meets an infinity (NaN), so no term may leave one out:
  // no axis lines (they skip the weights off the lines), no trimmed windows.
  const bool every = p.footprint() == Footprint::every;
  std::optional<LowRankTerms> r;
  if (!every) r = axis_lines(f, W);
  if (!r) {
    if (long_axes != 2 || taps > kMaxSvdTaps) return std::nullopt;
    // W as a K_a x K_b matrix (the third axis has extent 1, so C order is row-major).
    const Eigen::Index ka = Eigen::Index(f.k[a]), kb = Eigen::Index(f.k[b]);
    const Eigen::MatrixXd M =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            W.data(), ka, kb);
    const Eigen::BDCSVD<Eigen::MatrixXd> svd(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Eigen::VectorXd& s = svd.singularValues();
    r.emplace();
    r->largest = s(0);
    // The fewest leading terms whose dropped singular values sum to at most rel_tol * s_0.
    Eigen::Index keep = s.size();
    double tail = 0;
    while (keep > 1 && tail + s(keep - 1) <= rel_tol * s(0)) tail += s(--keep);
    r->dropped = tail;
    std::vector<bool> zero_row(static_cast<std::size_t>(ka)),
        zero_col(static_cast<std::size_t>(kb));
    for (Eigen::Index i = 0; i < ka; ++i)
      zero_row[std::size_t(i)] = M.row(i).cwiseAbs().maxCoeff() == 0;
    for (Eigen::Index j = 0; j < kb; ++j)
      zero_col[std::size_t(j)] = M.col(j).cwiseAbs().maxCoeff() == 0;
    for (Eigen::Index t = 0; t < keep; ++t) {
      std::vector<double> u(static_cast<std::size_t>(ka)), v(static_cast<std::size_t>(kb));
      // The sign that makes v's largest weight positive (a deterministic choice).
      Eigen::Index big = 0;
      svd.matrixV().col(t).cwiseAbs().maxCoeff(&big);
      const double sign = svd.matrixV()(big, t) < 0 ? -1.0 : 1.0;
      for (Eigen::Index i = 0; i < ka; ++i)
        u[std::size_t(i)] = zero_row[std::size_t(i)] ? 0.0 : sign * s(t) * svd.matrixU()(i, t);
      for (Eigen::Index j = 0; j < kb; ++j)
        v[std::size_t(j)] = zero_col[std::size_t(j)] ? 0.0 : sign * svd.matrixV()(j, t);
      std::array<std::vector<double>, 3> w;
      for (int i = 0; i < 3; ++i) w[std::size_t(i)] = {1.0};
      w[std::size_t(a)] = f.window(a, u);
      w[std::size_t(b)] = f.window(b, v);
      // Symmetric to 1e-14 of the largest weight (float64), or to float32's rounding there.
      const double sym = per_dtype(p.dtype(), 0x1p-24, 1e-14, "the low-rank symmetry tolerance");
      symmetrise(w[std::size_t(a)], sym);
      symmetrise(w[std::size_t(b)], sym);
      r->terms.push_back(make_term(std::move(w), every));
    }
  }
  // What the terms leave out.
  std::vector<double> sum(W.size(), 0.0);
  for (const AxisWindows& t : r->terms) {
    const std::vector<double> tw = term_weights(p, t);
    for (std::size_t n = 0; n < W.size(); ++n) sum[n] += tw[n];
  }
  for (std::size_t n = 0; n < W.size(); ++n)
    r->residual = std::max(r->residual, std::fabs(W[n] - sum[n]));
  return r;
}

}  // namespace halo::detail
