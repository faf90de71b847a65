// halo — fast 1D/2D/3D convolution on GPUs and CPUs.
//
// The one public header. Backend-neutral: no CUDA types appear here (a CUDA stream is passed as
// an opaque `void*`, a cudaStream_t cast to void*).
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

namespace halo {

inline constexpr int kMaxRank = 3;

// ---------------------------------------------------------------------------------------------
// Basic enums
// ---------------------------------------------------------------------------------------------
enum class DType { f32, f64 };
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

// The table of dtypes: one row each (a new dtype is a row here, in types.cpp, and in
// src/core/dtype.hpp's HALO_DTYPES).
struct DTypeInfo {
  DType dtype;
  const char* name;    // to_string's, e.g. "f32"
  const char* numpy;   // NumPy's name, e.g. "float32"
  const char* descr;   // the .npy descr halo reads and writes, e.g. "<f4"
  std::size_t size;    // bytes per element
};
const DTypeInfo& dtype_info(DType t);
const std::vector<DTypeInfo>& dtypes();  // every row, in the order of enum class DType

std::size_t dtype_size(DType t);
const char* to_string(DType t);
const char* to_string(Op op);
const char* to_string(Boundary b);
const char* to_string(Backend b);
const char* to_string(Footprint f);
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
// FastTuning: overrides of the choices of the `fast` CUDA strategy (and of `fft`'s tiles and
// `auto`'s crossovers), for tuning runs, for other devices and for the tests that reach the
// kernels the defaults do not take. Every field left unset keeps the measured
// default (docs/notes/tuning.md); a value applies where a kernel for it is compiled and is ignored
// elsewhere (e.g. `tx` outside the 2-D radii that compile 8 columns per lane). Results are the
// same under every tuning, within the rounding bound that Strategy::summation() states.
// check_tuning() (called by Problem::set_tuning) refuses a value outside its field's range.
// ---------------------------------------------------------------------------------------------
// How rows reach the FFMAs: loaded as needed, prefetched into registers, copied by cp.async into
// a warp's shared-memory ring, copied by the tensor memory accelerator into a warp's ring (tma)
// or into a ring shared by the block (block: 1-D and 3-D; 2-D takes tma).
enum class FastFeed { direct, prefetch, ring, tma, block };

struct FastTuning {
  std::optional<FastFeed> feed;    // the feed of every rank, where compiled
  std::optional<bool> prefetch;    // the register prefetch off or on (an older switch of feed)
  std::optional<int> depth;        // 1..4: rows in flight under the register prefetch
  std::optional<int> slots;        // 2..16: ring slots (block rings use at most 8, 1-D padded 4)
  std::optional<int> box_rows;     // 1..16: rows per slot of the 2-D TMA ring
  std::optional<int> tx;           // 4 or 8: 2-D columns per lane (r = 4..6 TMA, r = 5, 6 ring)
  std::optional<int> tx_1d;        // 8, 16 or 32: 1-D outputs per lane above r = 8
  std::optional<bool> pad_1d;      // the 1-D padded block tile (f32, r = 32, 48, 64) off or on
  std::optional<int> rows_3d;      // 1, 2 or 4: 3-D output rows per warp (4: block ring, r <= 2)
  std::optional<int> hints;        // 0..3: block rings' cache hints, bit 0 reads, bit 1 stores
  std::optional<bool> runs;        // 3-D block ring: equal runs of tile-planes, or z-chunks
  std::optional<int> chunk;        // 1..2^30: rows (2-D) or planes (3-D) per chunk, per run;
                                   // `separable`'s fused passes: rows per chunk
  std::optional<int> pass_rows;    // 0 (one pass), 8, 12 or 16: 2-D filter rows per pass
  std::optional<bool> winograd;    // 2-D f32 Winograd columns (TMA ring, r = 3..7) off or on
  std::optional<int> l2_promotion; // 0, 64, 128 or 256: bytes the L2 fetches per tensor-map read
  std::optional<int> edge_cost;    // 0..100: 3-D equal runs with modes, % more per edge tile-plane
  std::optional<int> fft_tile;     // 8..26: the CUDA `fft` strategy's tiles, at most 2^fft_tile
                                   // elements unless the filter needs more
  std::optional<int> fft_batch;    // 1..65536: MiB of tiles per batch of cuFFT transforms
  std::optional<bool> fft_shared;  // `fft`'s transforms in shared memory, one kernel (float32:
                                   // filters along x as row transforms, 2-D filters up to 33 x 65
                                   // as tile transforms) off or on (on)
  // Where `auto` switches between the CUDA strategies, as `halo bench --suite crossovers`
  // measures them on a device (unset: the H100's, in brackets; docs/notes/tuning.md, "Crossovers"):
  std::optional<int> sep_radius_2d;   // 0..64: 2-D rank-1 filters up to this radius stay on
                                      // `fast`'s window, `separable` beyond (4)
  std::optional<int> sep_radius_3d;   // 0..16: the same in 3-D (1)
  std::optional<int> box_rows_taps;   // 2..1048576: 1-D boxes of this many taps or more run as
                                      // `separable`'s box rows rather than on `fast` (66)
  std::optional<int> long_rows_taps;  // 1..1025: 1-D filters beyond `fast` run as long rows up
                                      // to this many taps, on `fft` beyond (321); float32 runs
                                      // `fft`'s row transforms wherever they beat the direct sum
  std::optional<int> fft_cost;        // 1..100000: % applied to the FFT's modelled time where
                                      // `auto` weighs it against the direct sum's (100)
  // On the CPU (unset: the development VM's; `halo bench --suite crossovers --backend cpu`):
  std::optional<int> cpu_fft_cost;    // 1..100000: the same for `cpu_fft` against `cpu` (100)

  bool empty() const;  // no field set: the defaults everywhere
};

// Throws halo::Error naming the first field of t outside its range, and the range.
void check_tuning(const FastTuning& t);

// ---------------------------------------------------------------------------------------------
// Problem: everything a strategy needs to know, validated up front.
// ---------------------------------------------------------------------------------------------
class Problem {
 public:
  Problem() = default;
  // Throws halo::Error naming the problem if the description is invalid (rank mismatch,
  // non-positive extents, element count overflow, empty filter ...).
  Problem(int rank, const Extents& extents, std::int64_t batch, const Filter& filter, DType dtype,
          Op op = Op::correlate, const Edges& edges = {});

  int rank() const { return rank_; }
  const Extents& extents() const { return extents_; }
  std::int64_t batch() const { return batch_; }
  DType dtype() const { return dtype_; }
  Op op() const { return op_; }
  const Edges& edges() const { return edges_; }
  Boundary mode(int axis) const { return edges_.mode[axis]; }  // axis 0 .. rank-1
  double cval() const { return edges_.cval; }
  // True when every ghost cell reads 0 (constant mode, cval 0, on every axis): the seed notes'
  // problem, the only one the zero-padding kernels compute.
  bool zero_ghosts() const;
  bool zero_ghosts(int axis) const;  // the same on one axis (0 .. rank-1)
  const Filter& filter() const { return filter_; }  // as the user gave it

  // The correlation that every strategy computes: P[i] = sum_j w[j] * N[map(i - anchor + j)]
  // with w = correlation_weights() (the filter flipped on every axis for convolve), anchor =
  // k/2 + origin for correlate, k - 1 - k/2 - origin for convolve, and map the boundary mode's
  // index map (src/core/boundary.hpp). Strategies never need to look at op() or origin.
  // Taps beyond the array's reach (2n - 1 per axis of extent n) read what a tap at the reach's
  // edge reads, for every output, and are folded into it (dropped when ghosts are zero), so a
  // filter larger than the array costs no more than about 2n + 1 taps per axis:
  // correlation_weights(), filter_extents(), anchor(), taps() describe that folded filter,
  // filter() the one the user gave (filter_folded() says whether their extents differ).
  const std::vector<double>& correlation_weights() const { return cweights_; }
  const Extents& filter_extents() const { return kext_; }
  const Extents& anchor() const { return anchor_; }
  bool filter_folded() const;

  Dims3 dims3() const { return to_dims3(extents_, rank_); }
  Dims3 filter_dims3() const { return to_dims3(kext_, rank_); }
  Dims3 anchor3() const;

  std::int64_t elements_per_item() const;
  std::int64_t elements() const;  // batch * elements_per_item
  std::int64_t taps() const;  // of the correlation weights (the folded filter)
  // The two numbers of the roofline: 2 FLOPs (multiply + add) per tap per output, and the bytes
  // of one read of the input and one write of the output.
  double flops() const;
  double bytes() const;
  double arithmetic_intensity() const { return flops() / bytes(); }
  // True if every filter extent is odd (a symmetric halo of radius (k-1)/2 on each axis).
  bool odd_filter() const;
  // Largest per-axis halo on either side: max(anchor, k - 1 - anchor).
  std::int64_t max_radius() const;

  std::string describe() const;  // "2D 4096x4096 f32, filter 9x9, correlate, zero"

  // With direct sums required, every output is a plain sum of its taps (no strategy may use the
  // Winograd form or the FFT: Summation::direct, docs/ACCURACY.md). Options::direct_sums sets it
  // in apply().
  bool direct_sums() const { return direct_sums_; }
  void require_direct_sums(bool on = true) { direct_sums_ = on; }

  // Which weights are taps where the input holds NaN or infinities (Footprint; nonzero by
  // default). Strategies compute as if every weight were a tap; apply() recomputes the outputs
  // that this changes (Strategy::nonfinite). Options::footprint sets it in apply().
  Footprint footprint() const { return footprint_; }
  void set_footprint(Footprint f) { footprint_ = f; }

  // Overrides of the `fast` strategy's choices (FastTuning; none by default), checked here:
  // a value out of its field's range throws halo::Error. Options::tuning sets it in apply().
  const FastTuning& tuning() const { return tuning_; }
  void set_tuning(const FastTuning& t) {
    check_tuning(t);
    tuning_ = t;
  }

  // Called by the strategies that can (the CPU ones) with the fraction of the work done, from
  // the calling thread, every row or block of rows; not part of what is computed.
  // Options::progress sets it in apply().
  const std::function<void(double)>& progress() const { return progress_; }
  void set_progress(std::function<void(double)> f) { progress_ = std::move(f); }

 private:
  int rank_ = 1;
  Extents extents_{1, 1, 1};
  std::int64_t batch_ = 1;
  Filter filter_;
  DType dtype_ = DType::f32;
  Op op_ = Op::correlate;
  Edges edges_;
  std::vector<double> cweights_;
  bool direct_sums_ = false;
  Footprint footprint_ = Footprint::nonzero;
  FastTuning tuning_;
  Extents anchor_{0, 0, 0};
  Extents kext_{1, 1, 1};
  std::function<void(double)> progress_;
};

// ---------------------------------------------------------------------------------------------
// Strategies and their registry (after CUTLASS's device operators and operation registry).
// ---------------------------------------------------------------------------------------------
// A part of the memory a run allocates: what it is for, its size, and where.
struct MemoryUse {
  std::string what;
  double bytes = 0;
  MemorySpace space = MemorySpace::host;
};

struct Traffic {
  double bytes = 0;  // modelled DRAM bytes
  double flops = 0;
};

// Buffers as a strategy receives them: already in the strategy's memory space (host for CPU
// strategies, device for CUDA strategies), with the problem's dtype.
// `nonfinite`, where not null, is the word a strategy whose nonfinite() is `noted` sets to
// `nonfinite_mark` (never to anything else, never clearing it) when it writes a NaN or an
// infinity into the output: a host word for CPU strategies, a device word for CUDA strategies.
struct Buffers {
  const void* input = nullptr;
  void* output = nullptr;
  unsigned int* nonfinite = nullptr;
  unsigned int nonfinite_mark = 1;
};

// How a strategy's run() treats NaN and infinities, which apply() completes so that every
// strategy gives the outputs that are NaN, +inf and -inf where SciPy's do, under the problem's
// Footprint (docs/ACCURACY.md, "Non-finite values"). A strategy computes its own way (zero
// weights of padded or folded filters multiplied, running sums, transforms, separable terms),
// which can make an output non-finite that SciPy computes as a finite number, or NaN where SciPy
// has an infinity, but never finite where SciPy's is not: apply() recomputes every non-finite
// output by the direct sum over the footprint, in float64, in SciPy's order.
//   exact    run() already gives SciPy's non-finite outputs (the reference);
//   noted    run() notes in Buffers::nonfinite that it wrote a non-finite output; only then
//            does apply() look at the outputs (the production kernels: at no cost on finite data);
//   unnoted  apply() looks at every output after run() (the seed kernels, as the notes write them).
enum class NonFinite { exact, noted, unnoted };

// How a strategy sums the taps of an output, which is what bounds its rounding error (u = unit
// roundoff of the dtype, sum over the output's taps):
//   direct: a plain sum of products in some order, |error| <= (taps + 1) u sum |w||x| (to first
//     order, the weights' own rounding included);
//   winograd_x: 2-D, the columns in Winograd F(2,3) form (pairs of outputs, segments of 3 taps
//     along x; see docs/ACCURACY.md): the products are those of transformed weights and inputs,
//     so the bound is (taps + 4) * 2u * band, where band = sum over filter rows of
//     sum_{|i - j| <= 2} |w[i]| |x[j]| (i, j: taps of that row).
//   separable: a rank-1 filter as 1-D passes, each a direct sum of its factor's k_p taps over
//     the previous pass's result rounded to the dtype: |error| <= (sum_p k_p + 2 passes - 1) u
//     sum |w||x| (docs/ACCURACY.md, Separable passes).
//   low_rank: a filter as a sum of T separable terms u_t (x) v_t (cpu_lowrank), each run as
//     separable passes, their results added: |error| <= (max_t (k_t + 2 p_t - 1) + T - 1) u
//     sum_t sum |u_t (x) v_t| |x| + sum |E| |x| (k_t, p_t: term t's taps and passes; E: what the
//     terms leave out of the filter, of nuclear norm at most 1e-12 of its largest singular
//     value); the sum over the terms' absolute weights exceeds sum |w| where terms cancel
//     (docs/ACCURACY.md). Terms that are one line along one axis each (a Laplacian) are a
//     plain sum of the taps: direct.
//   running: box (uniform) factors of a rank-1 filter by running sums restarted every block of
//     outputs, so each output's error also carries the rounding of the sums since the restart:
//     bounded by the block's length times u times the input it read (docs/ACCURACY.md).
//   fft: the correlation as a product of discrete Fourier transforms of overlapping tiles; the
//     error is bounded in norm over a tile, not per output (docs/ACCURACY.md, FFT).
enum class Summation { direct, winograd_x, separable, low_rank, running, fft };

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual Backend backend() const = 0;
  virtual std::string description() const = 0;
  virtual Status can_implement(const Problem& p) const = 0;
  // Modelled DRAM traffic of this strategy on p (defaults to the problem's minimum).
  virtual Traffic model(const Problem& p) const;
  // Computes the output. `stream` is a cudaStream_t for CUDA strategies (may be null).
  virtual void run(const Problem& p, const Buffers& b, void* stream) const = 0;
  // Higher wins when `auto` chooses among strategies that can implement a problem.
  virtual int priority(const Problem& p) const { (void)p; return 0; }
  // How this strategy would run p (kernel, blocking, passes), for `halo bench --explain` and
  // `halo apply -v`; empty when there is nothing beyond the description to say.
  virtual std::string plan(const Problem& p) const { (void)p; return {}; }
  // How run() sums the taps on p (the bound of its rounding error); direct unless it says more.
  virtual Summation summation(const Problem& p) const { (void)p; return Summation::direct; }
  // What run() allocates beyond the caller's input and output (weights copies, workspace,
  // per-thread tiles), each part named; apply() checks it fits before running. The default is
  // one copy of the correlation weights in the problem's dtype, in the strategy's memory.
  virtual std::vector<MemoryUse> workspace(const Problem& p) const;
  // How run() treats NaN and infinities (NonFinite); unnoted unless it says more.
  virtual NonFinite nonfinite(const Problem& p) const { (void)p; return NonFinite::unnoted; }
};

// Every registered strategy, in registration order (reference first).
const std::vector<const Strategy*>& strategies();
// The strategy of that name, or nullptr.
const Strategy* find_strategy(const std::string& name);

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

// The strategy that `apply` would run on p under these options, and why; throws halo::Error if
// an explicit choice cannot run p (never a silent fallback for an explicit choice).
RunInfo choose(const Problem& p, const Options& opt, MemorySpace space = MemorySpace::host);

// Memory, estimated before anything is allocated. memory_needed lists what a run of p by the
// strategy `choice` names allocates: with `count_arrays`, the input and output themselves (for a
// caller that has not allocated them yet) in `arrays`' space; the device copies of host arrays
// given to a CUDA strategy; the strategy's workspace(). require_memory throws halo::Error when
// the host part exceeds host_memory_available() (measured only for a host part of 64 MiB or
// more: below, measuring costs more than the run) or the device part the current device's free
// memory (likewise measured from 64 MiB where a GPU is usable), naming the total, each part and
// the limit. apply() calls both before running.
std::vector<MemoryUse> memory_needed(const Problem& p, const RunInfo& choice,
                                     MemorySpace arrays = MemorySpace::host,
                                     bool count_arrays = false);
void require_memory(const std::vector<MemoryUse>& needs);
// Host memory this process can still allocate without swapping: the least of MemAvailable
// (/proc/meminfo), the cgroup's memory limit less its usage, and RLIMIT_AS less the address space
// in use and the stacks of the OpenMP threads not yet started; `limited_by` says which one.
struct MemoryAvailable {
  double bytes = 0;
  std::string limited_by;
};
MemoryAvailable host_memory_available();

// out = input (*) filter. `in` and `out` must have the same dtype, rank, extents and batch, and
// live in the same memory space. Host arrays given to a CUDA strategy are copied to the device
// and back; device arrays given to a CPU strategy are an error.
RunInfo apply(ConstArrayView in, ArrayView out, const Filter& filter, const Options& opt = {});
RunInfo correlate(ConstArrayView in, ArrayView out, const Filter& filter, Options opt = {});
RunInfo convolve(ConstArrayView in, ArrayView out, const Filter& filter, Options opt = {});

// ---------------------------------------------------------------------------------------------
// The arithmetic-intensity model of the seed notes (OP/B: FLOPs per byte of DRAM traffic).
// A filter of width k (= 2r+1 when odd) on every axis of a rank-d problem; `element_bytes` is 4 for
// float32. A tile of the "block = input tile" design has IN_TILE_DIM^d input elements and
// OUT_TILE_DIM = IN_TILE_DIM - (k-1) outputs per axis.
// ---------------------------------------------------------------------------------------------
namespace model {
// One tap = one multiply-add = 2 OP; basic reads the input and the filter element (2 loads).
double basic_intensity(std::size_t element_bytes = 4);
// The filter lives in constant memory (cached): one load per tap.
double constant_intensity(std::size_t element_bytes = 4);
// Tiled: OUT^d * k^d * 2 OP over IN^d loads, IN = OUT + k - 1.
double tiled_intensity(int rank, std::int64_t k, std::int64_t out_tile,
                       std::size_t element_bytes = 4);
// Its limit for tiles much larger than the filter: k^d * 2 / element_bytes.
double tiled_bound(int rank, std::int64_t k, std::size_t element_bytes = 4);
// Global-memory reduction of tiling: loads without tiles (OUT^d * k^d) over loads with (IN^d).
double memory_reduction(int rank, std::int64_t k, std::int64_t out_tile);
}  // namespace model

// ---------------------------------------------------------------------------------------------
// Build and machine information
// ---------------------------------------------------------------------------------------------
const char* version();
struct BuildInfo {
  bool cuda_compiled = false;
  std::string cuda_archs;     // e.g. "90"
  std::string compiler;       // e.g. "GNU 12.2.0"
  std::string build_type;     // e.g. "Release"
  bool openmp = false;
  std::string simd_targets;   // the SIMD targets the CPU backend can dispatch to
  std::string cpu_best_target;  // the one it uses on this machine
};
BuildInfo build_info();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0, sm_minor = 0;
  int multiprocessors = 0;
  std::size_t global_memory = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_per_block_optin = 0;
};
// The CUDA devices found; if none, `why_none` says why (not compiled with CUDA, no driver, ...).
std::vector<DeviceInfo> cuda_devices(std::string* why_none = nullptr);
bool cuda_available(std::string* why_not = nullptr);

}  // namespace halo
