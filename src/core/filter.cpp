// Filter: weights and extents; the named filters of the CLI.
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>

#include "core/parse.hpp"

#include "core/detail.hpp"
#include "halo/halo.hpp"

namespace halo {

namespace {
Extents check_shape(const std::vector<std::int64_t>& shape, std::size_t nweights, int* rank) {
  if (shape.empty() || shape.size() > kMaxRank)
    throw Error("filter rank must be 1..3, got " + std::to_string(shape.size()));
  Extents e{1, 1, 1};
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1)
      throw Error("filter extent " + std::to_string(i) + " must be >= 1, got " +
                  std::to_string(shape[i]));
    e[i] = shape[i];
  }
  *rank = static_cast<int>(shape.size());
  const std::int64_t n = detail::checked_product(e.data(), *rank, "filter");
  if (nweights != static_cast<std::size_t>(n))
    throw Error("filter has " + std::to_string(nweights) + " weights but its shape " +
                detail::join_extents(e, *rank) + " needs " + std::to_string(n));
  return e;
}
}  // namespace

Filter::Filter(std::vector<double> weights, std::vector<std::int64_t> shape)
    : weights_(std::move(weights)) {
  extents_ = check_shape(shape, weights_.size(), &rank_);
  for (std::size_t i = 0; i < weights_.size(); ++i)
    if (!std::isfinite(weights_[i])) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "filter weights must be finite: weight %zu (C order) is %g",
                    i, weights_[i]);
      throw Error(buf);
    }
}

template <class T>
static std::vector<double> widen(const T* w, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || shape.size() > kMaxRank)
    throw Error("filter rank must be 1..3, got " + std::to_string(shape.size()));
  const std::int64_t n = detail::checked_product(shape.data(), int(shape.size()), "filter");
  try {
    return std::vector<double>(w, w + n);
  } catch (const std::bad_alloc&) {
    throw Error("cannot allocate " + std::to_string(n * 8) + " bytes for the " +
                std::to_string(n) + " float64 weights of the filter");
  }
}

Filter::Filter(const float* w, std::vector<std::int64_t> shape) : Filter(widen(w, shape), shape) {}
Filter::Filter(const double* w, std::vector<std::int64_t> shape)
    : Filter(widen(w, shape), shape) {}

double Filter::weight_sum() const {
  double s = 0;
  for (double w : weights_) s += w;
  return s;
}

Filter Filter::along_axis(int new_rank, int axis) const {
  if (rank_ != 1) throw Error("only a 1-D filter can be placed along an axis");
  if (new_rank < 1 || new_rank > kMaxRank)
    throw Error("rank must be 1..3, got " + std::to_string(new_rank));
  if (axis < 0 || axis >= new_rank)
    throw Error("axis " + std::to_string(axis) + " is out of range for a " +
                std::to_string(new_rank) + "-D array");
  std::vector<std::int64_t> shape(new_rank, 1);
  shape[axis] = extents_[0];
  return Filter(weights_, shape);
}

std::string Filter::shape_string() const { return detail::join_extents(extents_, rank_); }

// ------------------------------------------------------------------------------------------------
// Named filters
// ------------------------------------------------------------------------------------------------
namespace {

// The most weights a named filter is built with: 2^26 float64 weights (512 MiB). A larger dense
// filter cannot run in any sensible time by direct summation, and would first need that memory
// (twice more in the Problem that runs it); the limit refuses it before anything is allocated.
constexpr std::int64_t kMaxNamedWeights = std::int64_t(1) << 26;

// Refuses a filter of these extents whose weights would exceed kMaxNamedWeights.
void check_named_size(const std::string& spec, const std::vector<std::int64_t>& extents) {
  const int rank = int(extents.size());
  double n = 1;
  std::string shape;
  for (int i = 0; i < rank; ++i) {
    n *= double(extents[std::size_t(i)]);
    shape += (i ? "x" : "") + std::to_string(extents[std::size_t(i)]);
  }
  if (n <= double(kMaxNamedWeights)) return;
  char what[96];
  std::snprintf(what, sizeof what, "%.4g weights, %.3g GB as float64", n, n * 8 / 1e9);
  throw Error("filter '" + detail::printable(spec) + "' at rank " + std::to_string(rank) +
              " would be " + shape + " (" + what + "): more than the " +
              std::to_string(kMaxNamedWeights) + " weights (512 MiB) a named filter may have");
}
// The same for `extent` on each of `rank` axes.
void check_named_size(const std::string& spec, int rank, std::int64_t extent) {
  check_named_size(spec, std::vector<std::int64_t>(std::size_t(rank), extent));
}

// Outer product of per-axis 1-D weight vectors (axis 0 first). One axis is the filter itself,
// taken without a copy (a 1-D filter may have 2^26 weights).
Filter outer(std::vector<std::vector<double>> axes) {
  if (axes.size() == 1) {
    const std::int64_t k = static_cast<std::int64_t>(axes[0].size());
    return Filter(std::move(axes[0]), {k});
  }
  std::vector<std::int64_t> shape;
  std::vector<double> w{1.0};
  for (const auto& a : axes) {
    shape.push_back(static_cast<std::int64_t>(a.size()));
    std::vector<double> next;
    next.reserve(w.size() * a.size());
    for (double u : w)
      for (double v : a) next.push_back(u * v);
    w.swap(next);
  }
  return Filter(std::move(w), shape);
}

// A 3^rank filter that is `centre` at the middle and `arm` at the 2*rank face neighbours.
Filter stencil(int rank, double centre, double arm) {
  std::vector<std::int64_t> shape(rank, 3);
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= 3;
  std::vector<double> w(n, 0.0);
  const std::int64_t mid = n / 2;
  w[mid] = centre;
  std::int64_t stride = 1;
  for (int a = 0; a < rank; ++a, stride *= 3) {
    w[mid - stride] = arm;
    w[mid + stride] = arm;
  }
  return Filter(std::move(w), shape);
}

// Sobel derivative along `axis` of a `rank`-D array: [-1,0,1] on that axis, [1,2,1] on the others.
Filter sobel(int rank, int axis) {
  std::vector<std::vector<double>> axes(rank, std::vector<double>{1, 2, 1});
  axes[axis] = {-1, 0, 1};
  return outer(axes);
}

}  // namespace

Filter make_named_filter(const std::string& spec, int rank) {
  if (rank < 1 || rank > kMaxRank)
    throw Error("filter '" + detail::printable(spec) + "': rank must be 1..3, got " +
                std::to_string(rank));
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::string r = std::to_string(rank) + "-D";
  const std::string quoted = "filter '" + detail::printable(spec) + "'";

  // key=value pairs (a bare value is stored under the key ""); a key given twice is an error.
  std::vector<std::pair<std::string, std::string>> kv;
  if (colon != std::string::npos) {
    for (const std::string& item : detail::split_list(args, ',')) {
      const auto eq = item.find('=');
      std::string key = eq == std::string::npos ? "" : item.substr(0, eq);
      const std::string val = eq == std::string::npos ? item : item.substr(eq + 1);
      for (const auto& [k, v] : kv)
        if (k == key)
          throw Error(quoted + ": " + (key.empty() ? "a bare value" : "'" + key + "'") +
                      " is given twice");
      kv.emplace_back(std::move(key), val);
    }
  }
  auto no_args = [&]() {
    if (colon != std::string::npos)
      throw Error(quoted + ": '" + name + "' takes no parameters");
  };
  auto size_arg = [&]() -> std::int64_t {
    if (kv.size() != 1 || !(kv[0].first.empty() || kv[0].first == "size"))
      throw Error(quoted + ": expected " + name + ":K with K the size, e.g. " + name + ":5");
    const std::int64_t k = detail::parse_integer(kv[0].second, 1, kMaxNamedWeights, quoted + ": K");
    check_named_size(spec, rank, k);
    return k;
  };

  if (name == "box") {
    const std::int64_t k = size_arg();
    const double w = 1.0 / static_cast<double>(k);
    std::vector<std::vector<double>> axes(static_cast<std::size_t>(rank));
    for (auto& a : axes) a.assign(static_cast<std::size_t>(k), w);
    return outer(std::move(axes));
  }
  if (name == "delta") {
    const std::int64_t k = size_arg();
    std::vector<std::vector<double>> axes(static_cast<std::size_t>(rank));
    for (auto& a : axes) {
      a.assign(static_cast<std::size_t>(k), 0.0);
      a[std::size_t(k / 2)] = 1.0;
    }
    return outer(std::move(axes));
  }
  if (name == "gaussian" || name == "log") {
    // SciPy's gaussian_filter: sigma per axis (one value for all, or one per axis, axis 0
    // first, separated by 'x'), truncate (radius int(truncate * sigma + 0.5) per axis, 4 by
    // default) or an explicit radius per axis; an axis of sigma 0 is not filtered.
    // log: SciPy's gaussian_laplace, the sum over the axes of the Gaussian with its second
    // derivative along that axis (gaussian_filter's order=2 factor, (x^2/s^4 - 1/s^2) g(x)).
    const bool log = name == "log";
    std::string sigma_text, radius_text;
    double truncate = 4.0;
    bool have_truncate = false;
    for (const auto& [key, val] : kv) {
      if (key == "sigma" || key.empty()) {
        if (!sigma_text.empty()) throw Error(quoted + ": sigma is given twice");
        sigma_text = val.empty() ? " " : val;
      } else if (key == "radius") {
        radius_text = val.empty() ? " " : val;
      } else if (key == "truncate") {
        truncate = detail::parse_real(val, std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::max(), quoted + ": truncate");
        have_truncate = true;
      } else {
        throw Error(quoted + ": unknown parameter '" + detail::printable(key) + "' (" + name +
                    " takes sigma=S[xS...][,truncate=T][,radius=R[xR...]])");
      }
    }
    if (sigma_text.empty())
      throw Error(quoted + ": " + name + " needs sigma=S with S > 0, e.g. " + name +
                  ":sigma=2");
    if (have_truncate && !radius_text.empty())
      throw Error(quoted + ": give truncate=T or radius=R, not both");
    // One value for every axis, or one per axis.
    auto per_axis = [&](const std::string& text, const char* what) {
      std::vector<std::string> v = detail::split_list(text, 'x');
      if (v.size() != 1 && int(v.size()) != rank)
        throw Error(quoted + ": " + what + " takes one value or one per axis (" +
                    std::to_string(rank) + " for a " + r + " array), got " +
                    std::to_string(v.size()));
      v.resize(std::size_t(rank), v[0]);
      return v;
    };
    const std::vector<std::string> sig = per_axis(sigma_text, "sigma");
    std::vector<std::string> rad;
    if (!radius_text.empty()) rad = per_axis(radius_text, "radius");
    std::vector<std::vector<double>> factors, second;  // order 0, and 2 (log)
    for (int a = 0; a < rank; ++a) {
      const double sigma = detail::parse_real(sig[std::size_t(a)], 0.0,
                                              std::numeric_limits<double>::max(),
                                              quoted + ": sigma");
      // SciPy leaves an axis whose sigma is at most 1e-15 unfiltered (and its derivative
      // with it: no Laplacian there, so log refuses it).
      if (!(sigma > 1e-15)) {
        if (log)
          throw Error(quoted + ": log needs sigma > 0 on every axis, got " + sig[std::size_t(a)]);
        factors.push_back({1.0});
        continue;
      }
      std::int64_t radius;
      if (!rad.empty()) {
        radius = detail::parse_integer(rad[std::size_t(a)], 0, kMaxNamedWeights, quoted + ": radius");
      } else {
        const double lw = truncate * sigma + 0.5;
        if (!(lw < double(kMaxNamedWeights)))
          throw Error(quoted + ": sigma " + sig[std::size_t(a)] + " gives a radius of " +
                      std::to_string(lw) + ", too large for any filter; give a smaller sigma, " +
                      "truncate=T or radius=R");
        radius = static_cast<std::int64_t>(lw);
      }
      if (2 * radius + 1 > kMaxNamedWeights)
        throw Error(quoted + ": radius " + std::to_string(radius) + " is too large (at most " +
                    std::to_string((kMaxNamedWeights - 1) / 2) + ")");
      // exp(-(i / sigma)^2 / 2): dividing first keeps a tiny sigma exact (its square would
      // underflow to 0, and 0/0 at the centre would be NaN); the centre weight is 1, so the sum
      // is >= 1 and the normalisation is safe for every sigma.
      std::vector<double> f(std::size_t(2 * radius + 1));
      double sum = 0;
      for (std::int64_t i = -radius; i <= radius; ++i) {
        const double t = double(i) / sigma;
        sum += f[std::size_t(i + radius)] = std::exp(-0.5 * t * t);
      }
      if (!(sum >= 1.0) || !std::isfinite(sum))
        throw Error(quoted + ": sigma " + sig[std::size_t(a)] + " gives no finite Gaussian weights");
      for (double& v : f) v /= sum;
      std::vector<double> d2(f.size());
      for (std::int64_t i = -radius; i <= radius; ++i) {
        const double t = double(i) / sigma;
        d2[std::size_t(i + radius)] = (t * t - 1) / (sigma * sigma) * f[std::size_t(i + radius)];
      }
      factors.push_back(std::move(f));
      second.push_back(std::move(d2));
    }
    // Every sigma 0: the identity, as SciPy returns the input unchanged.
    std::vector<std::int64_t> ext;
    for (const auto& f : factors) ext.push_back(std::int64_t(f.size()));
    check_named_size(spec, ext);
    if (!log) return outer(std::move(factors));
    std::vector<double> w;
    for (int a = 0; a < rank; ++a) {
      std::vector<std::vector<double>> term = factors;
      term[std::size_t(a)] = second[std::size_t(a)];
      const Filter t = outer(term);
      if (w.empty()) w.assign(t.weights().size(), 0.0);
      for (std::size_t i = 0; i < w.size(); ++i) w[i] += t.weights()[i];
    }
    return Filter(std::move(w), ext);
  }
  if (name == "sobel-x") {
    no_args();
    return sobel(rank, rank - 1);
  }
  if (name == "sobel-y") {
    no_args();
    if (rank < 2) throw Error("filter 'sobel-y' needs a 2-D or 3-D array, not " + r);
    return sobel(rank, rank - 2);
  }
  if (name == "sobel-z") {
    no_args();
    if (rank < 3) throw Error("filter 'sobel-z' needs a 3-D array, not " + r);
    return sobel(rank, 0);
  }
  if (name == "laplacian") {
    no_args();
    return stencil(rank, -2.0 * rank, 1.0);
  }
  if (name == "sharpen") {
    no_args();
    return stencil(rank, 2.0 * rank + 1.0, -1.0);
  }
  std::string known;
  for (const auto& [n, d] : named_filter_help()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown filter '" + detail::printable(spec) + "' (not a file either); named filters: " +
              known);
}

std::vector<std::pair<std::string, std::string>> named_filter_help() {
  return {
      {"box:K", "K^d box filter, weights 1/K^d (any rank)"},
      {"gaussian:sigma=S[,truncate=T][,radius=R]",
       "normalised Gaussian (SciPy's gaussian_filter): radius int(T*S+0.5), T = 4 unless given; "
       "S and R one value or one per axis (SxS...), an axis of sigma 0 unfiltered"},
      {"log:sigma=S[,truncate=T][,radius=R]",
       "Laplacian of Gaussian (SciPy's gaussian_laplace): the sum over the axes of the Gaussian "
       "with its second derivative along that axis; parameters as gaussian's, S > 0"},
      {"sobel-x", "Sobel derivative along the last axis ([-1,0,1], smoothed [1,2,1] on others)"},
      {"sobel-y", "Sobel derivative along the second-to-last axis (2-D, 3-D)"},
      {"sobel-z", "Sobel derivative along axis 0 (3-D)"},
      {"laplacian", "discrete Laplacian: 3, 5 or 7 point stencil"},
      {"sharpen", "identity plus negative Laplacian (centre 2d+1, neighbours -1)"},
      {"delta:K", "K^d identity filter: 1 at the centre k/2, 0 elsewhere"},
  };
}

}  // namespace halo
