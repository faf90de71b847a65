// Filter: weights and extents; the named filters of the CLI.
#include <cmath>
#include <cstdlib>
#include <sstream>

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
  for (double w : weights_)
    if (!std::isfinite(w)) throw Error("filter weights must be finite (found " +
                                       std::to_string(w) + ")");
}

template <class T>
static std::vector<double> widen(const T* w, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || shape.size() > kMaxRank)
    throw Error("filter rank must be 1..3, got " + std::to_string(shape.size()));
  const std::int64_t n = detail::checked_product(shape.data(), int(shape.size()), "filter");
  return std::vector<double>(w, w + n);
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

double parse_number(const std::string& spec, const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw Error("filter '" + spec + "': " + key + " must be a number, got '" + text + "'");
  return v;
}

std::int64_t parse_int(const std::string& spec, const std::string& key, const std::string& text) {
  const double v = parse_number(spec, key, text);
  if (v != std::floor(v) || v < 1 || v > 1e6)
    throw Error("filter '" + spec + "': " + key + " must be an integer in 1..1000000, got '" +
                text + "'");
  return static_cast<std::int64_t>(v);
}

// Outer product of per-axis 1-D weight vectors (axis 0 first).
Filter outer(const std::vector<std::vector<double>>& axes) {
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
    throw Error("filter '" + spec + "': rank must be 1..3, got " + std::to_string(rank));
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::string r = std::to_string(rank) + "-D";

  // key=value pairs (a bare value is stored under the key "").
  std::vector<std::pair<std::string, std::string>> kv;
  if (!args.empty()) {
    std::stringstream ss(args);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto eq = item.find('=');
      if (eq == std::string::npos)
        kv.emplace_back("", item);
      else
        kv.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }
  auto no_args = [&]() {
    if (!args.empty()) throw Error("filter '" + spec + "': '" + name + "' takes no parameters");
  };
  auto size_arg = [&]() -> std::int64_t {
    if (kv.size() != 1 || !(kv[0].first.empty() || kv[0].first == "size"))
      throw Error("filter '" + spec + "': expected " + name + ":K with K the size, e.g. " + name +
                  ":5");
    return parse_int(spec, "size", kv[0].second);
  };

  if (name == "box") {
    const std::int64_t k = size_arg();
    const double w = 1.0 / static_cast<double>(k);
    return outer(std::vector<std::vector<double>>(rank, std::vector<double>(k, w)));
  }
  if (name == "delta") {
    const std::int64_t k = size_arg();
    std::vector<double> a(k, 0.0);
    a[k / 2] = 1.0;
    return outer(std::vector<std::vector<double>>(rank, a));
  }
  if (name == "gaussian") {
    double sigma = -1;
    std::int64_t radius = -1;
    for (const auto& [key, val] : kv) {
      if (key == "sigma" || key.empty())
        sigma = parse_number(spec, "sigma", val);
      else if (key == "radius")
        radius = parse_int(spec, "radius", val);
      else
        throw Error("filter '" + spec + "': unknown parameter '" + key +
                    "' (gaussian takes sigma=S[,radius=R])");
    }
    if (!(sigma > 0))
      throw Error("filter '" + spec + "': gaussian needs sigma=S with S > 0, e.g. gaussian:sigma=2");
    // SciPy's default truncation: radius = int(4 * sigma + 0.5).
    if (radius < 0) radius = static_cast<std::int64_t>(4.0 * sigma + 0.5);
    if (radius > 100000) throw Error("filter '" + spec + "': radius too large");
    std::vector<double> a(2 * radius + 1);
    double sum = 0;
    for (std::int64_t i = -radius; i <= radius; ++i)
      sum += a[i + radius] = std::exp(-0.5 * double(i * i) / (sigma * sigma));
    for (double& v : a) v /= sum;
    return outer(std::vector<std::vector<double>>(rank, a));
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
  throw Error("unknown filter '" + spec + "' (not a file either); named filters: " + known);
}

std::vector<std::pair<std::string, std::string>> named_filter_help() {
  return {
      {"box:K", "K^d box filter, weights 1/K^d (any rank)"},
      {"gaussian:sigma=S[,radius=R]", "normalised Gaussian, radius int(4S+0.5) unless given"},
      {"sobel-x", "Sobel derivative along the last axis ([-1,0,1], smoothed [1,2,1] on others)"},
      {"sobel-y", "Sobel derivative along the second-to-last axis (2-D, 3-D)"},
      {"sobel-z", "Sobel derivative along axis 0 (3-D)"},
      {"laplacian", "discrete Laplacian: 3, 5 or 7 point stencil"},
      {"sharpen", "identity plus negative Laplacian (centre 2d+1, neighbours -1)"},
      {"delta:K", "K^d identity filter: 1 at the centre k/2, 0 elsewhere"},
  };
}

}  // namespace halo
