// Filter analysis: rank-1 factors and the 1-D passes that run a rank-1 filter.
#include "core/factor.hpp"

#include <algorithm>
#include <cmath>

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
  // Every weight against the product of its factors.
  double worst = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    double prod = 1;
    for (int a = 0; a < d; ++a) prod *= r.f[a][std::int64_t(i) / stride[a] % e[a]];
    worst = std::fmax(worst, std::fabs(w[i] - prod));
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
std::optional<AxisWindows> compute_windows(const Problem& p);
}

std::optional<AxisWindows> separable_windows(const Problem& p) {
  // A run asks several times (can_implement, priority, workspace, plan, run): the last answer
  // of this thread is kept, keyed by what it depends on, so that small runs (a Python call on
  // an 8x8 image) do not factor the filter again each time (small filters: large ones cost
  // more to copy than to factor against their run).
  struct Last {
    bool valid = false;
    std::int64_t key[6] = {};
    std::vector<double> w;
    std::optional<AxisWindows> windows;
  };
  thread_local Last last;
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::int64_t key[6] = {k.z, k.y, k.x, a.z, a.y, a.x};
  if (last.valid && std::equal(key, key + 6, last.key) && last.w == p.correlation_weights())
    return last.windows;
  last.valid = false;
  if (p.correlation_weights().size() > 4096) return compute_windows(p);  // not worth a copy
  last.windows = compute_windows(p);
  std::copy(key, key + 6, last.key);
  last.w = p.correlation_weights();
  last.valid = true;
  return last.windows;
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

}  // namespace halo::detail
