// Enums, views and small helpers of the public header.
#include <algorithm>
#include <limits>

#include "core/detail.hpp"
#include "core/parse.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo {

const std::vector<DTypeInfo>& dtypes() {
  static const std::vector<DTypeInfo> table = {
      {DType::f32, "f32", "float32", "<f4", 4, 'f'},
      {DType::f64, "f64", "float64", "<f8", 8, 'f'},
      {DType::u8, "u8", "uint8", "|u1", 1, 'u'},
      {DType::u16, "u16", "uint16", "<u2", 2, 'u'},
      {DType::i16, "i16", "int16", "<i2", 2, 'i'},
      {DType::i32, "i32", "int32", "<i4", 4, 'i'},
      {DType::f16, "f16", "float16", "<f2", 2, 'f'},
      // NumPy has no bfloat16 of its own; ml_dtypes' is a 2-byte void to .npy ("<V2").
      {DType::bf16, "bf16", "bfloat16", "<V2", 2, 'f'},
      {DType::c64, "c64", "complex64", "<c8", 8, 'c'},
      {DType::c128, "c128", "complex128", "<c16", 16, 'c'},
  };
  return table;
}

const DTypeInfo& dtype_info(DType t) {
  for (const DTypeInfo& d : dtypes())
    if (d.dtype == t) return d;
  throw Error("unknown dtype " + std::to_string(static_cast<int>(t)));
}

std::size_t dtype_size(DType t) { return dtype_info(t).size; }

const char* to_string(DType t) { return dtype_info(t).name; }
const char* to_string(Op op) { return op == Op::correlate ? "correlate" : "convolve"; }
const char* to_string(Boundary b) {
  switch (b) {
    case Boundary::constant: return "constant";
    case Boundary::nearest: return "nearest";
    case Boundary::reflect: return "reflect";
    case Boundary::mirror: return "mirror";
    case Boundary::wrap: return "wrap";
  }
  return "?";
}
const char* to_string(Backend b) {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::reference: return "reference";
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

DType parse_dtype(const std::string& s) {
  std::string names;
  for (const DTypeInfo& d : dtypes()) {
    if (s == d.name || s == d.numpy) return d.dtype;
    names += (names.empty() ? "" : ", ") + std::string(d.name);
  }
  // C's names of the two floating types, as earlier versions accepted.
  if (s == "float") return DType::f32;
  if (s == "double") return DType::f64;
  throw Error("unknown dtype '" + s + "' (expected one of " + names + ")");
}
Op parse_op(const std::string& s) {
  if (s == "correlate") return Op::correlate;
  if (s == "convolve") return Op::convolve;
  throw Error("unknown operation '" + s + "' (expected correlate or convolve)");
}
Boundary parse_boundary(const std::string& s, bool* zero) {
  struct Name {
    const char* name;
    Boundary mode;
  };
  // SciPy's names and its filter aliases first, then the documented additions.
  static const Name names[] = {
      {"constant", Boundary::constant}, {"nearest", Boundary::nearest},
      {"reflect", Boundary::reflect},   {"mirror", Boundary::mirror},
      {"wrap", Boundary::wrap},         {"grid-constant", Boundary::constant},
      {"grid-mirror", Boundary::reflect}, {"grid-wrap", Boundary::wrap},
      {"zero", Boundary::constant},     {"replicate", Boundary::nearest},
      {"reflect101", Boundary::mirror}, {"reflect_101", Boundary::mirror},
      {"symmetric", Boundary::reflect}, {"circular", Boundary::wrap},
      {"periodic", Boundary::wrap},
  };
  if (zero) *zero = s == "zero";
  for (const Name& n : names)
    if (s == n.name) return n.mode;
  std::string known;
  for (const Name& n : names) known += (known.empty() ? "" : ", ") + std::string(n.name);
  throw Error("unknown boundary mode '" + detail::printable(s) + "' (expected " + known + ")");
}
Backend parse_backend(const std::string& s) {
  if (s == "auto") return Backend::automatic;
  if (s == "reference") return Backend::reference;
  if (s == "cpu") return Backend::cpu;
  if (s == "cuda") return Backend::cuda;
  throw Error("unknown backend '" + s + "' (expected auto, cpu, reference or cuda)");
}

const char* to_string(Footprint f) { return f == Footprint::every ? "every" : "nonzero"; }
const char* to_string(Rounding r) { return r == Rounding::nearest ? "nearest" : "truncate"; }

Footprint parse_footprint(const std::string& s) {
  if (s == "nonzero") return Footprint::nonzero;
  if (s == "every") return Footprint::every;
  throw Error("unknown footprint '" + s + "' (expected nonzero or every)");
}

Rounding parse_rounding(const std::string& s) {
  if (s == "truncate") return Rounding::truncate;
  if (s == "nearest") return Rounding::nearest;
  throw Error("unknown rounding '" + s + "' (expected truncate or nearest)");
}

Dims3 to_dims3(const Extents& e, int rank) {
  Dims3 d;
  if (rank == 1) {
    d.x = e[0];
  } else if (rank == 2) {
    d.y = e[0];
    d.x = e[1];
  } else {
    d.z = e[0];
    d.y = e[1];
    d.x = e[2];
  }
  return d;
}

namespace detail {
std::int64_t checked_product(const std::int64_t* v, int n, const char* what) {
  std::int64_t p = 1;
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0) throw Error(std::string(what) + ": negative extent " + std::to_string(v[i]));
    if (v[i] != 0 && p > std::numeric_limits<std::int64_t>::max() / v[i])
      throw Error(std::string(what) + ": element count overflows 64 bits");
    p *= v[i];
  }
  return p;
}

std::string join_extents(const Extents& e, int rank, const char* sep) {
  std::string s;  // no ostringstream: describe() and the checks call this on every run
  for (int i = 0; i < rank; ++i) s += (i ? sep : "") + std::to_string(e[i]);
  return s;
}
}  // namespace detail

namespace {
template <class V>
std::int64_t per_item(const V& v) {
  return detail::checked_product(v.extents.data(), v.rank, "array view");
}
template <class P>
ArrayView make_view(P* data, DType t, const std::vector<std::int64_t>& shape, std::int64_t batch) {
  if (shape.empty() || shape.size() > kMaxRank)
    throw Error("array rank must be 1..3, got " + std::to_string(shape.size()));
  ArrayView v;
  v.data = const_cast<void*>(static_cast<const void*>(data));
  v.dtype = t;
  v.rank = static_cast<int>(shape.size());
  for (int i = 0; i < v.rank; ++i) v.extents[i] = shape[i];
  v.batch = batch;
  return v;
}
}  // namespace

std::int64_t ArrayView::elements_per_item() const { return per_item(*this); }
std::int64_t ArrayView::elements() const { return batch * elements_per_item(); }
std::size_t ArrayView::bytes() const { return elements() * dtype_size(dtype); }
std::int64_t ConstArrayView::elements_per_item() const { return per_item(*this); }
std::int64_t ConstArrayView::elements() const { return batch * elements_per_item(); }
std::size_t ConstArrayView::bytes() const { return elements() * dtype_size(dtype); }

ArrayView view(float* d, std::vector<std::int64_t> s, std::int64_t b) {
  return make_view(d, DType::f32, s, b);
}
ArrayView view(double* d, std::vector<std::int64_t> s, std::int64_t b) {
  return make_view(d, DType::f64, s, b);
}
ConstArrayView view(const float* d, std::vector<std::int64_t> s, std::int64_t b) {
  return ConstArrayView(make_view(d, DType::f32, s, b));
}
ConstArrayView view(const double* d, std::vector<std::int64_t> s, std::int64_t b) {
  return ConstArrayView(make_view(d, DType::f64, s, b));
}

namespace detail {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace detail

}  // namespace halo
