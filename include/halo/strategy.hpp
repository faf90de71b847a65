// halo — problems, strategies and their registry, the choice `auto` makes, the memory checks.
// For code that adds or inspects strategies (the CLI's bench, the tests); an application needs
// halo/halo.hpp only.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "halo/halo.hpp"

namespace halo {

// ---------------------------------------------------------------------------------------------
// Problem: everything a strategy needs to know, validated up front.
// ---------------------------------------------------------------------------------------------
namespace detail {
struct FilterAnalysis;  // src/core/factor.hpp
}

class Problem {
 public:
  Problem();
  // Throws halo::Error naming the problem if the description is invalid (rank mismatch,
  // non-positive extents, element count overflow, empty filter ...).
  Problem(int rank, const Extents& extents, std::int64_t batch, const Filter& filter, DType dtype,
          Op op = Op::correlate, const Edges& edges = {});

  int rank() const { return rank_; }
  const Extents& extents() const { return extents_; }
  std::int64_t batch() const { return batch_; }
  DType dtype() const { return dtype_; }  // the input's
  // The output's dtype (the input's unless set_output says otherwise) and how sums become
  // integer outputs (Rounding). set_output throws halo::Error for a complex input with a real
  // output (SciPy refuses it too).
  DType out_dtype() const { return out_dtype_; }
  Rounding rounding() const { return rounding_; }
  void set_output(DType out, Rounding r = Rounding::truncate);
  // Input and output both float32 or both float64: what every strategy runs (the others take
  // only this unless Strategy::accepts_dtypes says more).
  bool float_in_float_out() const;
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

  // The analyses of the folded filter that several strategies read (its rank-1 windows:
  // detail::separable_windows), made by the first that asks and kept with the problem, shared
  // by its copies (the weights never change after construction). Safe to ask from any thread.
  detail::FilterAnalysis& analysis() const { return *analysis_; }

 private:
  int rank_ = 1;
  Extents extents_{1, 1, 1};
  std::int64_t batch_ = 1;
  Filter filter_;
  DType dtype_ = DType::f32;
  DType out_dtype_ = DType::f32;
  Rounding rounding_ = Rounding::truncate;
  Op op_ = Op::correlate;
  Edges edges_;
  std::vector<double> cweights_;
  bool direct_sums_ = false;
  Footprint footprint_ = Footprint::nonzero;
  FastTuning tuning_;
  Extents anchor_{0, 0, 0};
  Extents kext_{1, 1, 1};
  std::function<void(double)> progress_;
  std::shared_ptr<detail::FilterAnalysis> analysis_;
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

// A strategy's modelled time for a problem: `ns`, and how the model formed it (`halo bench
// --explain`, `halo apply -v`). ns = infinity: no estimate (outside what the model covers, for
// example a transform's set-up on a problem of microseconds), and `why` says why.
struct Estimate {
  double ns = std::numeric_limits<double>::infinity();
  std::string why;
  static Estimate none(std::string why) {
    return {std::numeric_limits<double>::infinity(), std::move(why)};
  }
};
class Strategy;

// A strategy's plan for one problem (after CUTLASS's initialize and cuFFT's plans): what the
// strategy derived from the problem (factors, passes, tiles), which answers every question
// about the run from it and runs it, any number of times, without analysing the problem again.
// A plan refers to its strategy and to the problem it was made for, which must outlive it
// (halo::Plan holds both; Strategy::prepare refuses a temporary problem).
class StrategyPlan {
 public:
  StrategyPlan(const Strategy& strategy, const Problem& problem)
      : strategy_(&strategy), problem_(&problem) {}
  virtual ~StrategyPlan() = default;
  StrategyPlan(const StrategyPlan&) = delete;
  StrategyPlan& operator=(const StrategyPlan&) = delete;

  const Strategy& strategy() const { return *strategy_; }
  const Problem& problem() const { return *problem_; }

  // The modelled time of the run on this machine's profile (src/core/profile.hpp), which `auto`
  // compares. The default: no estimate.
  virtual Estimate estimate() const;
  // How the run goes (kernel, blocking, passes), for `halo bench --explain` and `halo apply -v`;
  // empty when there is nothing beyond the strategy's description to say.
  virtual std::string describe() const { return {}; }
  // How run() sums the taps (the bound of its rounding error); direct unless it says more.
  virtual Summation summation() const { return Summation::direct; }
  // What run() allocates beyond the caller's input and output (weights copies, workspace,
  // per-thread tiles), each part named; checked before running. The default is one copy of the
  // correlation weights in the problem's dtype, in the strategy's memory.
  virtual std::vector<MemoryUse> workspace() const;
  // How run() treats NaN and infinities (NonFinite); unnoted unless it says more.
  virtual NonFinite nonfinite() const { return NonFinite::unnoted; }
  // Modelled DRAM traffic of the run (defaults to the problem's minimum).
  virtual Traffic model() const;
  // Computes the output. `stream` is a cudaStream_t for CUDA strategies (may be null).
  virtual void run(const Buffers& b, void* stream) const = 0;

 private:
  const Strategy* strategy_;
  const Problem* problem_;
};

// A strategy's answer for a problem: its plan, or why it cannot run the problem.
struct Prepared {
  std::shared_ptr<const StrategyPlan> plan;  // null: cannot
  std::string why_not;                       // where plan is null: why
  static Prepared cannot(std::string why) { return {nullptr, std::move(why)}; }
  explicit operator bool() const { return plan != nullptr; }
  Status status() const { return plan ? Status::success() : Status::failure(why_not); }
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual Backend backend() const = 0;
  virtual std::string description() const = 0;

  // The one question per problem: why this strategy cannot run p, or its plan for p (which the
  // dispatch compares by estimate() and halo::Plan keeps and runs). The default wraps the
  // per-problem questions below: can_implement(p) now, the others when the plan is asked them,
  // so a strategy whose analysis of a problem costs little needs nothing more. A strategy whose
  // analysis is costly (factoring the filter, planning passes) derives from PlannedStrategy.
  virtual Prepared prepare(const Problem& p) const;
  Prepared prepare(Problem&&) const = delete;  // a plan refers to its problem: no temporaries

  // The per-problem questions, each the plan's of the same name (StrategyPlan).
  virtual Status can_implement(const Problem& p) const = 0;
  virtual Traffic model(const Problem& p) const;
  virtual void run(const Problem& p, const Buffers& b, void* stream) const = 0;
  // Asked only where can_implement(p) holds. The default: no estimate.
  virtual Estimate estimate(const Problem& p) const;
  virtual std::string plan(const Problem& p) const { (void)p; return {}; }
  virtual Summation summation(const Problem& p) const { (void)p; return Summation::direct; }
  virtual std::vector<MemoryUse> workspace(const Problem& p) const;
  virtual NonFinite nonfinite(const Problem& p) const { (void)p; return NonFinite::unnoted; }

  // Whether the strategy is written for p's input and output dtypes, asked before anything else
  // by the dispatch and by every run (detail::run_strategy), so that a strategy never sees
  // dtypes it was not written for. The default: float32 or float64 in and the same out
  // (Problem::float_in_float_out).
  virtual Status accepts_dtypes(const Problem& p) const;
};

// The base of a strategy whose analysis of a problem is costly: it implements prepare() and its
// plan, and the per-problem questions are answered by a plan made for each (so each derives the
// analysis again: for tools and tests that ask one question; the dispatch and halo::Plan ask the
// plan). Where the strategy cannot run p: can_implement's reason, no estimate, plan() the
// reason, direct summation, no workspace, and run() throws halo::Error.
class PlannedStrategy : public Strategy {
 public:
  Prepared prepare(const Problem& p) const override = 0;
  using Strategy::prepare;
  Status can_implement(const Problem& p) const final;
  Traffic model(const Problem& p) const final;
  void run(const Problem& p, const Buffers& b, void* stream) const final;
  Estimate estimate(const Problem& p) const final;
  std::string plan(const Problem& p) const final;
  Summation summation(const Problem& p) const final;
  std::vector<MemoryUse> workspace(const Problem& p) const final;
  NonFinite nonfinite(const Problem& p) const final;
};

// Every registered strategy, in registration order (reference first).
const std::vector<const Strategy*>& strategies();
// The strategy of that name, or nullptr.
const Strategy* find_strategy(const std::string& name);

// The strategy that `apply` would run on p under these options, and why; throws halo::Error if
// an explicit choice cannot run p (never a silent fallback for an explicit choice). `auto` takes,
// among the strategies of a backend that can implement p, the least estimate(); the seed kernels
// and the reference are never taken while another strategy runs p, a strategy whose summation is
// not direct never where direct sums are required, and ties go to the earlier registered.
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
// The same for a strategy's plan (of its problem), from the plan's workspace(): the one above
// asks the strategy's workspace(p), which makes a plan for the question.
std::vector<MemoryUse> memory_needed(const StrategyPlan& plan,
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

}  // namespace halo
