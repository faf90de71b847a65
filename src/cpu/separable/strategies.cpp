/* strategy: cpu_separable — a rank-1 filter (an outer product of 1-D factors) as 1-D passes on
 * the CPU: OpenMP threads, Highway SIMD (dynamic dispatch, as `cpu`).
 *
 * The factors come from detail::separable_windows(): one centred window per canonical axis
 * (z, y, x), every mode, origin and op folded in. A pass of window w (K = 2R + 1 taps) is one
 * kernel, Combine: dst[j] = sum_i w[i] * rows[i][j], where rows[i] is the i-th input row of an
 * output row (the y and z passes) or the input row shifted by i (the x pass). Symmetric windows
 * (Gaussians, boxes, most derivatives) add the two inputs of a weight first: half the FMAs.
 *
 * x and y are fused: a unit (item, plane, strip of rows, chunk of columns) filters each input row
 * it needs along x into a ring of K_y rows held in L2, and each output row along y from the
 * ring, so the array is read once and written once. Rows outside the array are the rows the
 * y mode maps them to, or rows of cval * sum(w_x) in constant mode; columns outside come from a
 * short padded copy at the two ends of the row. The z pass runs after, in place on the output:
 * a unit is a chunk of columns of every plane of an item, marching along z with a ring of K_z
 * copied rows (the planes past the end that the mode maps to are copied before anything is
 * written). Filters along one axis are that pass alone, reading the input.
 *
 * A box (every window whole multiples of a step, the steps' product 1/d: uniform_filter, box:K,
 * folded or not) sums with the whole numbers in every pass, box factors by running sums of the
 * raw inputs, and the last pass divides by d once, so that a mean of a constant region is the
 * constant exactly (SciPy sums, then divides once). The last pass's kernels probe the outputs
 * they store and note a NaN or an infinity (NonFinite::noted).
 *
 * strategy: cpu_lowrank — a filter of low rank as a sum of T separable terms
 * (detail::low_rank_terms: the axis lines of a Laplacian or sharpen, else an SVD in float64), on
 * the same kernels and units. It is a sibling strategy in this file rather than a mode of
 * cpu_separable because it shares the Worker, the passes and the blocking (only the x-y unit
 * differs), while a name of its own keeps `auto`'s choice, --strategy, the tests' sweep and the
 * accuracy form (Summation::low_rank) apart from the rank-1 passes, whose behaviour is unchanged.
 * Fused: a unit reads each input row once per term that needs it, filters it along x into that
 * term's ring (terms without an x window read the input rows directly), and each output row is
 * the sum of the terms' y passes (two partial-sum rows in cache), written once: no DRAM pass per
 * term. In 3-D the axis lines' z term runs after, as z's pass of the input added to the output.
 */
#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/profile.hpp"
#include "cpu/separable/engine.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {
std::unique_ptr<Strategy> make_separable_strategy();
std::unique_ptr<Strategy> make_lowrank_strategy();

namespace sep {

// ---------------------------------------------------------------------------------------------
// cpu_lowrank: a sum of separable terms (detail::low_rank_terms).
// ---------------------------------------------------------------------------------------------

// A problem's terms by stage: those of the x-y stage (z window {1}), and those along z alone,
// added into one z window (radius rz). why_not: what this strategy cannot run.
struct LowRankSplit {
  std::optional<detail::LowRankTerms> terms;
  std::vector<detail::AxisWindows> xy;
  std::vector<double> z;  // empty: no term along z
  int rz = 0;
  std::int64_t taps = 0;  // of every pass, per output
  std::string why_not;
  // Every term a single pass (a 1-D filter along one axis): each output is then a plain sum of
  // its taps, in some order (Summation::direct).
  bool single_passes = true;
  std::size_t count() const { return xy.size() + (z.empty() ? 0 : 1); }
};

// The most terms run (each keeps a ring of rows per thread).
constexpr std::size_t kMaxTerms = 32;

bool is_one(const std::vector<double>& w) { return w.size() == 1 && w[0] == 1.0; }

constexpr const char* kRankOne =
    "the filter is rank 1 (an outer product of 1-D factors: cpu_separable)";

LowRankSplit compute_split(const Problem& p) {
  LowRankSplit s;
  const Dims3 k = p.filter_dims3();
  const int long_axes = (k.z > 1) + (k.y > 1) + (k.x > 1);
  if (long_axes < 2) {
    s.why_not = "the filter has fewer than two axes longer than 1 (one pass: cpu or cpu_separable)";
    return s;
  }
  // A filter the rank-1 analysis factors (Problem::analysis, which cpu_separable reads too) is one
  // term: no SVD to say so.
  if (const auto& win = detail::separable_windows(p); win && win->long_axes >= 2) {
    s.why_not = kRankOne;
    return s;
  }
  s.terms = detail::low_rank_terms(p);
  if (!s.terms) {
    s.why_not = long_axes == 3
                    ? "a filter of three long axes runs as a sum of terms only where its "
                      "weights lie on the lines through one point (a Laplacian)"
                    : "the filter has more than " + std::to_string(detail::kMaxSvdTaps) +
                          " taps (no SVD) or no nonzero weight";
    return s;
  }
  for (const detail::AxisWindows& t : s.terms->terms) {
    s.taps += t.taps;
    s.single_passes = s.single_passes && t.long_axes <= 1;
    for (int a = 0; a < 3; ++a)
      if (t.radius[std::size_t(a)] > (1 << 16)) s.why_not = "a term's radius exceeds 65536";
    if (is_one(t.w[0])) {
      s.xy.push_back(t);
    } else if (is_one(t.w[1]) && is_one(t.w[2])) {
      // Along z alone: added into one window.
      const int r = std::max(s.rz, t.radius[0]);
      std::vector<double> z(std::size_t(2 * r + 1), 0.0);
      for (std::size_t i = 0; i < s.z.size(); ++i) z[std::size_t(r - s.rz) + i] += s.z[i];
      for (std::size_t i = 0; i < t.w[0].size(); ++i)
        z[std::size_t(r - t.radius[0]) + i] += t.w[0][i];
      s.z = std::move(z);
      s.rz = r;
    } else {
      s.why_not =
          "a term spans z and another axis (or an origin moves a 3-D cross off the "
          "output): 3-D sums of such terms are not implemented";
    }
  }
  if (s.why_not.empty() && s.count() < 2) s.why_not = kRankOne;
  if (s.why_not.empty() && s.count() > kMaxTerms)
    s.why_not =
        std::to_string(s.count()) + " separable terms: more than " + std::to_string(kMaxTerms);
  return s;
}

template <class T>
Job<T> make_lowrank_job(const Problem& p, const LowRankSplit& s, const void* in, void* out) {
  Job<T> j = job_of<T>(p, in, out);
  const int rank = p.rank();
  const Boundary mz = rank == 3 ? p.mode(0) : Boundary::constant;
  const Boundary my = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  const Boundary mx = p.mode(rank - 1);
  const bool direct = p.direct_sums();
  // No box forms: each term's passes are plain sums of their taps (Summation::low_rank).
  j.x = make_pass<T>({1.0}, 0, mx, false, direct, true);
  j.y = make_pass<T>({1.0}, 0, my, true, direct, true);
  j.z = s.z.empty() ? make_pass<T>({1.0}, 0, mz, true, direct, true)
                    : make_pass<T>(s.z, s.rz, mz, true, direct, true);
  j.zadd = j.z.on;
  j.cval = T(p.cval());
  for (const detail::AxisWindows& t : s.xy) {
    typename Job<T>::Term q;
    q.y = make_pass<T>(t.w[1], t.radius[1], my, true, direct, true);
    q.x = make_pass<T>(t.w[2], t.radius[2], mx, false, direct, true);
    q.cval_x = T(p.cval() * sum(t.w[2]));
    j.terms.push_back(std::move(q));
  }
  block(j, p, double(s.taps));
  return j;
}

// How a pass runs, in words (the plans' describe()).
template <class T>
std::string pass_text(const char* a, const Pass<T>& q) {
  if (q.box)
    return std::string(a) + " (box of " + std::to_string(q.bk) + " taps: " +
           (q.restart == 0 ? std::string("sums by doubling")
            : a[0] == 'x'  ? "running sums of vectors restarted every " + std::to_string(q.restart)
                           : "running sums restarted every " + std::to_string(q.restart)) +
           ")";
  return std::string(a) + " (" + std::to_string(q.K()) + " taps" + (q.sym ? ", symmetric" : "") +
         ")";
}

// A job's row buffers over its team, `what` they are for.
template <class T>
std::vector<MemoryUse> job_workspace(const Job<T>& j, const std::string& what) {
  const double per = double(Scratch<T>::sizes(j).bytes()) + 64;
  return {{what + " of " + std::to_string(j.threads) + " threads", per * j.threads,
           MemorySpace::host}};
}

// ---------------------------------------------------------------------------------------------
// cpu_separable's plan: the problem's windows (Problem::analysis) and the job of its passes.
// ---------------------------------------------------------------------------------------------
template <class T>
class SeparablePlan final : public StrategyPlan {
 public:
  SeparablePlan(const Strategy& s, const Problem& p, const detail::AxisWindows& win)
      : StrategyPlan(s, p), win_(win), job_(make_job<T>(p, win, nullptr, nullptr)) {}

  // The passes as `cpu`'s direct sum of their taps and per-stage cost (profile::Cpu: the fused
  // x-y stage, the z stage after it); a box along one axis by running sums, two taps an output
  // (docs/notes/tuning.md, "Separable passes (`cpu_separable`)"). No estimate for any other
  // filter along one axis: one pass of `cpu`'s direct sums either way.
  Estimate estimate() const override {
    const Problem& p = problem();
    const bool box = job_.x.box || job_.y.box || job_.z.box;
    if (win_.long_axes == 1 && box)
      return {profile::cpu_direct_ns(p, 2), "a box along one axis: running sums, 2 taps"};
    if (win_.long_axes < 2) return Estimate::none("a filter along one axis: cpu's single pass");
    const bool xy = win_.radius[1] > 0 || win_.radius[2] > 0, z = win_.radius[0] > 0;
    const profile::Cpu& c = profile::cpu();
    const double taps =
        double(win_.taps) + (xy ? c.xy_stage_taps : 0) + (xy && z ? c.z_stage_taps : 0);
    return {profile::cpu_direct_ns(p, taps), "the passes' taps and stages at cpu's tap cost"};
  }
  Summation summation() const override {
    const Job<T>& j = job_;
    const bool running = j.y.box || j.z.box || (j.x.box && j.x.restart > 0);
    return running              ? Summation::running
           : win_.long_axes > 1 ? Summation::separable
                                : Summation::direct;
  }
  std::string describe() const override {
    const Job<T>& j = job_;
    std::string s;
    if (j.xy()) {
      s += j.x.on && j.y.on ? pass_text("x", j.x) + " and " + pass_text("y", j.y) + " fused" +
                                  " through a ring of rows, " + std::to_string(j.cw) +
                                  " columns x " + std::to_string(j.strip) + " rows per unit"
           : j.x.on ? pass_text("x", j.x) + " alone"
                    : pass_text("y", j.y) + " alone";
    }
    if (j.z.on)
      s += std::string(j.xy() ? ", then " : "") + pass_text("z", j.z) +
           (j.xy() ? " in place on the output" : " alone") + ", " + std::to_string(j.zcw) +
           " columns per unit";
    return s + "; " + std::to_string(j.threads) + " threads";
  }
  std::vector<MemoryUse> workspace() const override {
    return job_workspace(job_, "ring and row buffers");
  }
  void run(const Buffers& b, void*) const override {
    Job<T> j = job_;
    j.in = static_cast<const T*>(b.input);
    j.out = static_cast<T*>(b.output);
    if (b.nonfinite) j.buffers = &b;
    run_job(j, problem(), "cpu_separable");
  }
  // The last pass's stores note non-finite outputs.
  NonFinite nonfinite() const override { return NonFinite::noted; }

 private:
  const detail::AxisWindows& win_;  // the problem's (Problem::analysis), which outlives the plan
  Job<T> job_;                      // without arrays: each run's copy is given them
};

class SeparableStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "cpu_separable"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "rank-1 filters as 1-D passes (x and y fused through a ring of rows, then z in "
           "place), OpenMP threads + Highway SIMD";
  }
  Prepared prepare(const Problem& p) const override {
    const auto& win = detail::separable_windows(p);
    if (!win) return Prepared::cannot("the filter is not an outer product of 1-D factors");
    if (win->long_axes == 0) return Prepared::cannot("the filter has no axis longer than 1");
    if (p.direct_sums() && win->long_axes > 1)
      return Prepared::cannot("direct sums required: the passes sum each output in stages");
    for (int a = 0; a < 3; ++a)
      if (win->radius[a] > (1 << 16)) return Prepared::cannot("a factor's radius exceeds 65536");
    return {dispatch_dtype(p.dtype(),
                           [&](auto d) -> std::shared_ptr<const StrategyPlan> {
                             using T = typename decltype(d)::storage;
                             return std::make_shared<SeparablePlan<T>>(*this, p, *win);
                           }),
            {}};
  }
};

// ---------------------------------------------------------------------------------------------
// cpu_lowrank's plan: the split of the problem's terms (an SVD of up to kMaxSvdTaps weights, made
// once per plan) and the job of their passes.
// ---------------------------------------------------------------------------------------------
// The passes' taps and per-term and per-stage costs, in taps (profile::Cpu).
double lowrank_cost(const LowRankSplit& s) {
  const profile::Cpu& c = profile::cpu();
  return double(s.taps) + c.term_taps * double(s.count()) + c.xy_stage_taps +
         (s.z.empty() ? 0 : c.z_add_stage_taps);
}

template <class T>
class LowRankPlan final : public StrategyPlan {
 public:
  LowRankPlan(const Strategy& s, const Problem& p, LowRankSplit split)
      : StrategyPlan(s, p),
        split_(std::move(split)),
        job_(make_lowrank_job<T>(p, split_, nullptr, nullptr)) {}

  // The terms' passes: ns per output and per modelled tap (profile::Cpu, LoG 9x9 .. 33x33 on
  // 2048^2), the taps counted with each term's and the stages' cost (lowrank_cost).
  Estimate estimate() const override {
    const Problem& p = problem();
    const double taps = lowrank_cost(split_);
    const char* what = "cpu_lowrank's cost model";
    const profile::Cpu& c = profile::cpu();
    const double output_ns =
        per_dtype(p.dtype(), c.lowrank_output_ns_f32, c.lowrank_output_ns_f64, what);
    const double tap_ns = per_dtype(p.dtype(), c.lowrank_tap_ns_f32, c.lowrank_tap_ns_f64, what);
    // Fitted on large filters; the passes are direct sums of those taps, so never less than
    // `cpu`'s model of as many (the 3x3 Laplacian stays dense).
    return {std::max(double(p.elements()) * (output_ns + taps * tap_ns),
                     profile::cpu_direct_ns(p, taps)),
            "the terms' passes: elements x (output + modelled taps x tap) ns"};
  }
  Summation summation() const override {
    return split_.single_passes ? Summation::direct : Summation::low_rank;
  }
  std::string describe() const override {
    const LowRankSplit& s = split_;
    const Job<T>& j = job_;
    auto pass = [](const Pass<T>& q) {
      if (!q.on) return std::string("-");
      return std::to_string(q.K()) + (q.sym ? " sym" : "");
    };
    std::string t;
    for (const auto& q : j.terms)
      t += (t.empty() ? "" : " + ") + ("[x " + pass(q.x) + ", y " + pass(q.y) + "]");
    char buf[96];
    if (s.terms->axis_lines)
      std::snprintf(buf, sizeof buf, "axis lines, exact");
    else
      std::snprintf(buf, sizeof buf, "SVD, dropped singular values %.1e of the largest",
                    s.terms->dropped / s.terms->largest);
    std::string out = std::to_string(s.count()) + " separable terms (" + buf + "): " + t;
    if (j.z.on) out += " + [z " + pass(j.z) + "]";
    out += " taps; x and y fused per unit of " + std::to_string(j.cw) + " columns x " +
           std::to_string(j.strip) + " rows, each output row written once";
    if (j.z.on)
      out += ", then z's pass of the input added to the output, " + std::to_string(j.zcw) +
             " columns per unit";
    return out + "; " + std::to_string(j.threads) + " threads";
  }
  std::vector<MemoryUse> workspace() const override {
    return job_workspace(job_, "rings and row buffers (" + std::to_string(split_.count()) +
                                   " terms)");
  }
  void run(const Buffers& b, void*) const override {
    Job<T> j = job_;
    j.in = static_cast<const T*>(b.input);
    j.out = static_cast<T*>(b.output);
    if (b.nonfinite) j.buffers = &b;
    run_job(j, problem(), "cpu_lowrank");
  }
  // The last term's stores (or the z stage's) note non-finite outputs.
  NonFinite nonfinite() const override { return NonFinite::noted; }

 private:
  LowRankSplit split_;
  Job<T> job_;  // without arrays: each run's copy is given them
};

class LowRankStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "cpu_lowrank"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "filters of low rank as sums of separable terms (axis lines, or an SVD in float64): "
           "per unit each input row filtered along x into each term's ring, each output row the "
           "sum of the terms' y passes, written once; OpenMP threads + Highway SIMD";
  }
  Prepared prepare(const Problem& p) const override {
    LowRankSplit s = compute_split(p);
    if (!s.why_not.empty()) return Prepared::cannot(s.why_not);
    if (p.direct_sums() && !s.single_passes)
      return Prepared::cannot(
          "direct sums required: a sum of separable terms sums each output in stages");
    return {dispatch_dtype(p.dtype(),
                           [&](auto d) -> std::shared_ptr<const StrategyPlan> {
                             using T = typename decltype(d)::storage;
                             return std::make_shared<LowRankPlan<T>>(*this, p, std::move(s));
                           }),
            {}};
  }
};

}  // namespace sep

std::unique_ptr<Strategy> make_separable_strategy() {
  return std::make_unique<sep::SeparableStrategy>();
}
std::unique_ptr<Strategy> make_lowrank_strategy() {
  return std::make_unique<sep::LowRankStrategy>();
}

}  // namespace halo::cpu
