// halo — fast 1D/2D/3D convolution on GPUs and CPUs.
//
// What an application needs: dtypes, array views, filters, boundary modes, options, apply() and
// its errors. Backend-neutral: no CUDA types appear here (a CUDA stream is passed as an opaque
// `void*`, a cudaStream_t cast to void*). Beside it: halo/tuning.hpp (FastTuning, which Options
// carries), halo/strategy.hpp (Problem, Strategy, the registry, choose() and the memory checks),
// halo/model.hpp (the seed notes' arithmetic-intensity model), halo/info.hpp (build and device
// facts).
//
// The computation, for rank d in {1,2,3}, input N with extents n, filter F with extents k:
//
//   correlate: P[i] = sum_j F[j] * N[i - c + j]          c = k / 2 per axis (as SciPy)
//   convolve:  P[i] = sum_j F[j] * N[i + c - j]          (F flipped on every axis; equals
//                                                          scipy.ndimage.convolve, even k too)
//
// Output P has the extents of N ("same" size). Input elements outside N (ghost cells) take the
// value given by the boundary mode (Boundary, Edges; constant 0: the seed notes' ghost cells). An optional leading batch
// dimension applies one filter to many arrays.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "halo/tuning.hpp"

namespace halo {

inline constexpr int kMaxRank = 3;

// ---------------------------------------------------------------------------------------------
// Basic enums
// ---------------------------------------------------------------------------------------------
// Element types (src/core/dtype.hpp gives each its accumulation type): float32, float64, the
// 8/16/32-bit integers of images and volumes, IEEE half (float16) and bfloat16, complex64 and
// complex128. f32 and f64 keep their numbers.
enum class DType { f32, f64, u8, u16, i16, i32, f16, bf16, c64, c128 };
enum class Op { correlate, convolve };
// Boundary modes: what an index outside the array reads (scipy.ndimage's `mode`, same meaning):
//   constant  cval                       (k k k | a b c d | k k k)
//   nearest   the edge element           (a a a | a b c d | d d d)
//   reflect   about the edge, edge kept  (c b a | a b c d | d c b)   period 2n
//   mirror    about the edge element     (d c b | a b c d | c b a)   period 2n - 2 (n = 1: a)
//   wrap      periodic                   (b c d | a b c d | a b c)   period n
// Reflections and wraps repeat for filters wider than the array. The seed notes' ghost cells are
// constant with cval 0.
enum class Boundary { constant, nearest, reflect, mirror, wrap };
enum class Backend { automatic, reference, cpu, cuda };
enum class MemorySpace { host, device };
// Which weights are taps of an output's sum, which decides where NaN and infinities in the input
// go (docs/ACCURACY.md, "Non-finite values"); on finite data both give the same results within
// the rounding bound:
//   nonzero  the weights with |w| > DBL_EPSILON, as scipy.ndimage's N-D correlate and convolve
//            (their footprint): a zero weight never turns an infinity into NaN (the default);
//   every    every weight, as SciPy's 1-D filters (correlate1d, and the passes of
//            gaussian_filter, sobel, laplace ...): a zero weight on an infinity gives NaN.
enum class Footprint { nonzero, every };
// How a sum becomes an integer output (float outputs round to nearest whatever this says):
//   truncate  scipy.ndimage's: SciPy's float64 sum (its order of the taps, core/scipy_sum.hpp)
//             truncated toward zero, a value outside the type wrapped as SciPy's C casts do on
//             x86-64 (through int32 for 8/16-bit outputs; NaN and the out-of-range give INT_MIN's
//             low bits): bit for bit SciPy's integers (the default);
//   nearest   OpenCV's and NPP's: the sum rounded to the nearest integer (ties to even) and
//             saturated to the type's range, NaN to 0 (a documented addition).
enum class Rounding { truncate, nearest };

// The table of dtypes: one row each (a new dtype is a row here, in types.cpp, and in
// src/core/dtype.hpp's HALO_DTYPES).
struct DTypeInfo {
  DType dtype;
  const char* name;    // to_string's, e.g. "f32"
  const char* numpy;   // NumPy's name, e.g. "float32"
  const char* descr;   // the .npy descr halo reads and writes, e.g. "<f4"
  std::size_t size;    // bytes per element
  char kind;           // NumPy's kind: 'f' floating, 'u' unsigned, 'i' signed, 'c' complex
};
const DTypeInfo& dtype_info(DType t);
const std::vector<DTypeInfo>& dtypes();  // every row, in the order of enum class DType

std::size_t dtype_size(DType t);
const char* to_string(DType t);
const char* to_string(Op op);
const char* to_string(Boundary b);
const char* to_string(Backend b);
const char* to_string(Footprint f);
const char* to_string(Rounding r);
// Parse the names printed by to_string(); throw halo::Error naming the bad value otherwise.
DType parse_dtype(const std::string& s);
Op parse_op(const std::string& s);
// SciPy's names and filter aliases (grid-constant, grid-mirror = reflect, grid-wrap), and, as
// documented additions, OpenCV's and PyTorch's words: zero (constant; cval must then be 0),
// replicate (nearest), reflect101 and reflect_101 (mirror), symmetric (reflect), circular and
// periodic (wrap). *zero, if given, is set when the name was "zero".
Boundary parse_boundary(const std::string& s, bool* zero = nullptr);
Backend parse_backend(const std::string& s);  // "auto", "reference", "cpu", "cuda"
Footprint parse_footprint(const std::string& s);  // "nonzero", "every"
Rounding parse_rounding(const std::string& s);    // "truncate", "nearest"

// Every failure halo reports is a halo::Error whose message says what was being done and why.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A yes/no answer with a human-readable reason (used by Strategy::can_implement).
struct Status {
  bool ok = true;
  std::string reason;
  static Status success() { return {}; }
  static Status failure(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

// Extents of an array or filter, in C order (the last axis is contiguous). Only the first `rank`
// entries are meaningful.
using Extents = std::array<std::int64_t, kMaxRank>;

// The same extents padded on the left with 1s to three axes: {z, y, x}. Rank 1 -> {1, 1, n0},
// rank 2 -> {1, n0, n1}. Every backend may reason in this canonical 3D form.
struct Dims3 {
  std::int64_t z = 1, y = 1, x = 1;
  std::int64_t count() const { return z * y * x; }
};
Dims3 to_dims3(const Extents& e, int rank);

// ---------------------------------------------------------------------------------------------
// Array views (non-owning): pointer, element type, rank, extents, optional leading batch.
// Contiguous C order: element (b, i0, i1, i2) sits at ((b*n0 + i0)*n1 + i1)*n2 + i2.
// ---------------------------------------------------------------------------------------------
struct ArrayView {
  void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 1;
  Extents extents{1, 1, 1};
  std::int64_t batch = 1;
  MemorySpace space = MemorySpace::host;

  std::int64_t elements_per_item() const;  // product of extents
  std::int64_t elements() const;           // batch * elements_per_item
  std::size_t bytes() const;
};

struct ConstArrayView {
  const void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 1;
  Extents extents{1, 1, 1};
  std::int64_t batch = 1;
  MemorySpace space = MemorySpace::host;

  ConstArrayView() = default;
  ConstArrayView(const void* d, DType t, int r, Extents e, std::int64_t b = 1,
                 MemorySpace s = MemorySpace::host)
      : data(d), dtype(t), rank(r), extents(e), batch(b), space(s) {}
  ConstArrayView(const ArrayView& v)  // NOLINT: implicit, a mutable view is also a const one
      : data(v.data), dtype(v.dtype), rank(v.rank), extents(v.extents), batch(v.batch),
        space(v.space) {}

  std::int64_t elements_per_item() const;
  std::int64_t elements() const;
  std::size_t bytes() const;
};

// Convenience constructors for host arrays.
ArrayView view(float* data, std::vector<std::int64_t> shape, std::int64_t batch = 1);
ArrayView view(double* data, std::vector<std::int64_t> shape, std::int64_t batch = 1);
ConstArrayView view(const float* data, std::vector<std::int64_t> shape, std::int64_t batch = 1);
ConstArrayView view(const double* data, std::vector<std::int64_t> shape, std::int64_t batch = 1);

// ---------------------------------------------------------------------------------------------
// Filter: weights (held as float64, whatever they were given in) and extents, any size per axis.
// ---------------------------------------------------------------------------------------------
class Filter {
 public:
  Filter() = default;
  Filter(std::vector<double> weights, std::vector<std::int64_t> shape);
  Filter(const float* weights, std::vector<std::int64_t> shape);
  Filter(const double* weights, std::vector<std::int64_t> shape);

  int rank() const { return rank_; }
  const Extents& extents() const { return extents_; }
  const std::vector<double>& weights() const { return weights_; }
  std::int64_t taps() const { return static_cast<std::int64_t>(weights_.size()); }
  double weight_sum() const;
  // This filter embedded in rank `new_rank` along `axis` (extents 1 on every other axis).
  // Only for rank-1 filters.
  Filter along_axis(int new_rank, int axis) const;
  std::string shape_string() const;  // "5x5"

 private:
  std::vector<double> weights_;
  int rank_ = 0;
  Extents extents_{1, 1, 1};
};

// Named filters: box:K, gaussian:sigma=S[,radius=R], sobel-x, sobel-y, sobel-z, laplacian,
// sharpen, delta:K. Built at `rank` (1..3) where the name makes sense; errors say why otherwise.
Filter make_named_filter(const std::string& spec, int rank);
// The names above with a one-line description each (for --help and `halo info`).
std::vector<std::pair<std::string, std::string>> named_filter_help();

// ---------------------------------------------------------------------------------------------
// Edges: how a problem treats the array's edges, per axis (axis 0 first; entries beyond the
// rank are ignored): the boundary mode, the value of constant mode, and scipy.ndimage's `origin`
// (shifts the filter: correlate reads N[i - k/2 - origin + j]; must satisfy
// -(k/2) <= origin <= (k-1)/2; convolve negates it as SciPy does, even extents included).
// ---------------------------------------------------------------------------------------------
struct Edges {
  std::array<Boundary, kMaxRank> mode{Boundary::constant, Boundary::constant, Boundary::constant};
  double cval = 0;  // any value, NaN and infinities included
  std::array<std::int64_t, kMaxRank> origin{0, 0, 0};

  // One mode on every axis.
  static Edges all(Boundary m, double cval = 0) {
    Edges e;
    e.mode = {m, m, m};
    e.cval = cval;
    return e;
  }
};

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------
struct Options {
  Op op = Op::correlate;
  Edges edges;  // boundary mode per axis, cval, origin (scipy.ndimage's)
  Backend backend = Backend::automatic;
  std::string strategy;    // empty: choose; otherwise that strategy or an error
  bool direct_sums = false;  // every output a plain sum of taps: no Winograd, FFT (ACCURACY.md)
  // Which weights are taps where the input holds NaN or infinities: SciPy's N-D functions'
  // (nonzero, the default) or its 1-D functions' (every).
  Footprint footprint = Footprint::nonzero;
  // How sums become integer outputs (Rounding): SciPy's truncation by default.
  Rounding rounding = Rounding::truncate;
  void* stream = nullptr;  // cudaStream_t for the CUDA backend
  // Optional: receives the fraction of the work done (0..1) from the calling thread while a CPU
  // strategy runs (Problem::progress); must not throw. CUDA strategies do not report.
  std::function<void(double)> progress;
  // Overrides of the `fast` strategy's kernel choices (FastTuning, checked by apply()); empty:
  // the measured defaults.
  FastTuning tuning;
};

struct RunInfo {
  std::string strategy;  // the strategy that ran
  Backend backend = Backend::reference;
  std::string note;  // why it was chosen (e.g. "no CUDA device: ...; fell back to cpu")
};

// out = input (*) filter. `in` and `out` must have the same rank, extents and batch, and live in
// the same memory space; the output's dtype may differ from the input's (SciPy's `output=`): the
// sums are carried in the input's accumulation type (core/dtype.hpp) and stored as the output's
// by Options::rounding. Complex input needs a complex output. Host arrays given to a CUDA strategy are copied to the device
// and back; device arrays given to a CPU strategy are an error.
RunInfo apply(ConstArrayView in, ArrayView out, const Filter& filter, const Options& opt = {});
RunInfo correlate(ConstArrayView in, ArrayView out, const Filter& filter, Options opt = {});
RunInfo convolve(ConstArrayView in, ArrayView out, const Filter& filter, Options opt = {});

// ---------------------------------------------------------------------------------------------
// Plans: analyse once, run many times (as cuFFT's plans; CUTLASS's can_implement -> workspace ->
// run). prepare() validates the description and the options, computes the correlation weights,
// chooses the strategy (RunInfo) and checks that its workspace fits, with the errors apply()
// gives; Plan::run then filters any arrays of that description without doing any of it again.
// ---------------------------------------------------------------------------------------------
// What a plan runs on: the arrays' rank, extents (axis 0 first), batch, dtype and memory space.
struct ArrayDesc {
  int rank = 1;
  Extents extents{1, 1, 1};
  std::int64_t batch = 1;
  DType dtype = DType::f32;
  MemorySpace space = MemorySpace::host;
  std::optional<DType> out_dtype;  // the output's dtype where it is not the input's

  DType output_dtype() const { return out_dtype.value_or(dtype); }
  static ArrayDesc of(const ConstArrayView& v) {
    return {v.rank, v.extents, v.batch, v.dtype, v.space, std::nullopt};
  }
  static ArrayDesc of(const ConstArrayView& in, const ArrayView& out) {
    ArrayDesc d = of(in);
    if (out.dtype != in.dtype) d.out_dtype = out.dtype;
    return d;
  }
};

namespace detail {
struct PlanAccess;  // src/core/registry.cpp
}

class Plan {
 public:
  Plan() = default;  // empty: run() throws
  // out = in (*) the plan's filter. `in` and `out` must match the description; throws
  // halo::Error naming the difference, or an overlap. `stream` (a cudaStream_t for a CUDA
  // strategy; null: the options' stream) may differ between runs.
  RunInfo run(ConstArrayView in, ArrayView out, void* stream = nullptr) const;
  const RunInfo& info() const;  // the strategy the plan runs, and why
  const ArrayDesc& desc() const;
  std::string describe() const;  // the problem and the strategy's plan, one line

  // The problem, the chosen strategy's plan for it (StrategyPlan, halo/strategy.hpp), the memory
  // it needs (src/core/registry.cpp).
  struct State;

 private:
  std::shared_ptr<const State> state_;
  friend struct detail::PlanAccess;
};

// A plan for arrays of `desc`: throws halo::Error where apply() would (bad description, filter
// or options; no strategy; not enough memory).
Plan prepare(const ArrayDesc& desc, const Filter& filter, const Options& opt = {});

}  // namespace halo
