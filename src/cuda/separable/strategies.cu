// strategy: separable, and strategy: lowrank (a sum of separable terms), on the passes of this
// folder (the overview: geometry.cuh).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/profile.hpp"
#include "cuda/fast/model.hpp"
#include "cuda/separable/plan.cuh"
#include "cuda/strategies.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace sep {
namespace {

// The taps a pass computes per output: its compiled windows', where a box factor by running
// sums (float32) costs its window once per thread's 8 outputs along x and two more per output
// (k + 14) / 8, and two per output down y.
double modelled_taps(const SepPass& s, const detail::AxisWindows& win) {
  double taps = pass_taps(s, win);
  if (s.g.xbox) taps -= (2 * s.rx + 1) - (2.0 * s.rx + 1 + 14) / 8;
  if (s.g.ybox) taps -= (2 * s.ry + 1) - 2;
  return taps;
}

// The passes' modelled time (profile::Gpu): each pass moves its arrays at copy speed (three of
// them where it adds into the output: `lowrank`'s terms after the first) and runs its taps
// (modelled_taps) at the fused kernel's FMA rate.
double passes_ns(const Problem& p, const SepPlan& plan, bool adds = false) {
  const double n = double(p.elements()), size = double(dtype_size(p.dtype()));
  const profile::Gpu g = profile::gpu(p.tuning());
  const double flops =
      per_dtype(p.dtype(), g.passes_flops_f32, g.passes_flops_f64, "separable's FMA rate");
  double ns = 0;
  for (std::size_t j = 0; j < plan.passes.size(); ++j) {
    const bool add = adds && j + 1 == plan.passes.size();
    ns += n * size * (add ? 3 : 2) / g.copy_bytes_per_ns +
          2 * n * modelled_taps(plan.passes[j], plan.win) / flops;
  }
  return ns;
}

// The plans below are made for the device current at prepare(): a run on another device plans
// its passes again for that run (the passes follow the device's multiprocessors and features).
// separable's plan: the passes of the problem's windows (Problem::analysis).
class SeparableStrategyPlan final : public StrategyPlan {
 public:
  SeparableStrategyPlan(const Strategy& s, const Problem& p, SepPlan plan)
      : StrategyPlan(s, p), plan_(std::move(plan)), device_(detail::current_cuda_device()) {}

  // Whether p runs as one fused x-y pass whose tiles come by tensor maps (rows 16-byte aligned
  // in length; the base address is the caller's).
  bool fused_by_maps() const {
    return plan_.passes.size() == 1 && sep_pass_tma(plan_.passes[0], problem()) &&
           plan_.passes[0].g.nx % 4 == 0;
  }
  // The passes' modelled time, calibrated by the crossovers measured against `fast` and `fft`
  // (profile::Gpu; FastTuning's fields of the same names replace them):
  //  - within fast's radii, a 2-D or 3-D filter: flat in the radius (the fused passes cost about
  //    the same from radius 4 to 16, less by tensor-map tiles than through registers: "Separable
  //    passes", "Volumes by tensor-map tiles"), at fast's model of the radius half-way past the
  //    crossover (sep_radius_2d, sep_radius_2d_maps, sep_radius_3d): `fast` below it, these
  //    passes above;
  //  - box rows (a box along x alone) on 1-D arrays, or beyond fast's radii: flat in the taps,
  //    likewise at fast's model half a tap below the crossover box_rows_taps ("Box rows");
  //  - 1-D rows beyond fast's radii: the transforms' time (as `fft` models it) scaled by the taps
  //    over long_rows_taps + 1/2, the crossover where the long rows' direct sums meet them ("Long
  //    rows"), and never below the direct sum's time where the rows' transforms run in shared
  //    memory; a filter along x alone of a 2-D or 3-D array beyond fast's radii, where the row
  //    transforms run: the x pass as the transforms are weighed against it ("Row transforms in
  //    shared memory");
  //  - otherwise each pass moves its arrays at copy speed and runs its taps at the passes' rate.
  Estimate estimate() const override {
    const Problem& p = problem();
    const SepPlan& plan = plan_;
    const FastTuning& tune = p.tuning();
    const profile::Gpu g = profile::gpu(tune);
    const int r = int(std::min<std::int64_t>(p.max_radius(), 1 << 20));
    const bool fast_runs = fast::compiled_radius(p.rank(), p.dtype(), r) >= 0;
    if (plan.passes.size() == 1 && box_rows(plan.passes[0]) && (p.rank() == 1 || !fast_runs)) {
      const int from = tune.box_rows_taps.value_or(g.box_rows_taps);
      const double half = (from - 1.5) / 2;  // the radius of from - 1/2 taps
      return {fast::modelled_ns(p, half, from - 0.5),
              "box rows: flat, at fast's model of " + std::to_string(from) + " - 1/2 taps"};
    }
    if (p.rank() > 1 && fast_runs) {
      const int top = p.rank() == 2 ? tune.sep_radius_2d.value_or(fused_by_maps()
                                                                     ? g.sep_radius_2d_maps
                                                                     : g.sep_radius_2d)
                                    : tune.sep_radius_3d.value_or(g.sep_radius_3d);
      return {fast::crossover_ns(p, top),
              "fused passes: flat, at fast's model of radius " + std::to_string(top) + " + 1/2"};
    }
    const double passes = passes_ns(p, plan);
    if (fast_runs) return {passes, "the passes: arrays at copy speed, taps at the passes' rate"};
    detail::FftTiling t;
    try {
      t = detail::cuda_fft_tiling(p);
    } catch (const Error&) {
      return {passes, "the passes (no transform fits)"};
    }
    if (p.rank() == 1) {
      const int top = tune.long_rows_taps.value_or(g.long_rows_taps);
      const double taps = double(plan.passes[0].lrow ? long_taps_of(plan.passes[0], plan.win)
                                                     : p.taps());
      const double ns = detail::cuda_fft_weighed_ns(p, t) * taps / (top + 0.5);
      return {t.shared ? std::max(ns, t.direct_ns) : ns,
              "rows: the transforms' time x taps / (" + std::to_string(top) + " + 1/2)"};
    }
    if (plan.passes.size() == 1 && plan.win.radius[0] == 0 && plan.win.radius[1] == 0 &&
        !plan.passes[0].g.xbox && t.shared && !p.direct_sums())
      return {t.direct_ns, "the x pass as the row transforms are weighed against it"};
    return {passes, "the passes: arrays at copy speed, taps at the passes' rate"};
  }
  Summation summation() const override {
    for (const SepPass& s : plan_.passes)
      if (s.g.xbox || s.g.ybox || s.colk || (s.vol && s.vg.box)) return Summation::running;
    return plan_.win.long_axes > 1 ? Summation::separable : Summation::direct;
  }
  Traffic model() const override {
    double taps = 0;
    for (const SepPass& s : plan_.passes) taps += pass_taps(s, plan_.win);
    return {problem().bytes() * double(std::max<std::size_t>(plan_.passes.size(), 1)),
            2.0 * taps * double(problem().elements())};
  }
  std::vector<MemoryUse> workspace() const override {
    const Problem& p = problem();
    if (plan_.passes.size() < 2) return {};
    return {{"scratch array between the x-y and z passes",
             double(p.elements()) * double(dtype_size(p.dtype())), MemorySpace::device}};
  }
  std::string describe() const override {
    return "rank-1 filter: " + describe_factors(problem(), plan_.win) + "; " +
           describe_passes(plan_, problem());
  }
  void run(const Buffers& b, void* stream) const override {
    const Problem& p = problem();
    SepPlan other;  // planned for this run where the device is not the plan's
    const SepPlan* planned = &plan_;
    if (detail::current_cuda_device() != device_) {
      other = make_plan(p);
      if (!other.why_not.empty())
        throw Error("strategy 'separable' cannot run " + p.describe() + ": " + other.why_not);
      planned = &other;
    }
    const SepPlan& plan = *planned;
    const auto st = static_cast<cudaStream_t>(stream);
    const int sms = prim::current_device_facts().multiprocessors;
    const NonFiniteNote note = NonFiniteNote::of(b);  // the last pass's kernels note
    dispatch_buffers(p.dtype(), b.input, b.output, [&](auto* in, auto* out) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
      if (plan.passes.size() == 1) {
        run_pass<T>(in, out, plan.passes[0], plan.win, p, st, sms, note);
        return;
      }
      // Freed in stream order, after the passes that read it, without waiting for them.
      DeviceBuffer scratch(std::size_t(p.elements()) * sizeof(T),
                           "the scratch array of the separable passes of " + p.describe(), st);
      run_pass<T>(in, static_cast<T*>(scratch.p), plan.passes[0], plan.win, p, st, sms, {});
      run_pass<T>(static_cast<const T*>(scratch.p), out, plan.passes[1], plan.win, p, st, sms,
                  note);
    });
  }
  // Every kernel that writes the output notes a non-finite one it stores.
  NonFinite nonfinite() const override { return NonFinite::noted; }

 private:
  SepPlan plan_;
  int device_;  // the CUDA device the passes were planned for
};

class SeparableStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "separable"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "rank-1 filters as 1-D passes: x and y fused in one kernel (rows filtered into a "
           "shared-memory ring, columns from it), in 3-D z too (a ring of filtered planes), or z "
           "as a second pass; every boundary mode";
  }
  Prepared prepare(const Problem& p) const override {
    SepPlan plan = make_plan(p);
    if (!plan.why_not.empty()) return Prepared::cannot(plan.why_not);
    return {std::make_shared<SeparableStrategyPlan>(*this, p, std::move(plan)), {}};
  }
};

// ---------------------------------------------------------------------------------------------
// strategy: lowrank — a filter of low rank as a sum of T separable terms (detail::low_rank_terms:
// the axis lines of a Laplacian or cross, else an SVD in float64: a Laplacian of Gaussian, a
// difference of Gaussians), each term run as a rank-1 filter's passes above. Every term after
// the first adds its last pass's sums into the output (SepGeom::add), so DRAM sees T reads of
// the input, T writes and T - 1 reads of the output, against the FFT's transforms or the dense
// sum's K^2 taps per output.
// ---------------------------------------------------------------------------------------------
struct LowRankPlan {
  std::vector<SepPlan> terms;  // in the analysis' order (the largest singular value first)
  bool axis_lines = false;
  double dropped = 0;         // SVD: the dropped singular values' sum over the largest
  bool single_passes = true;  // every term one 1-D pass: each output a plain sum of its taps
  std::string why_not;        // non-empty: cannot run
};

// The most terms run: each is a pass over DRAM, so beyond a few the FFT wins anyway.
constexpr std::size_t kMaxGpuTerms = 32;

LowRankPlan make_lowrank_plan(const Problem& p) {
  LowRankPlan lp;
  const Dims3 k = p.filter_dims3();
  if ((k.z > 1) + (k.y > 1) + (k.x > 1) < 2) {
    lp.why_not = "the filter has fewer than two axes longer than 1 (one pass: separable or fast)";
    return lp;
  }
  const char* const rank_one = "the filter is rank 1 (an outer product of 1-D factors: separable)";
  // A filter the rank-1 analysis factors (Problem::analysis, which separable reads too) is one
  // term: no SVD to say so.
  if (const auto& win = detail::separable_windows(p); win && win->long_axes >= 2) {
    lp.why_not = rank_one;
    return lp;
  }
  const auto lr = detail::low_rank_terms(p);
  if (!lr) {
    lp.why_not = "the filter is neither axis lines through one point nor, with two long axes, "
                 "an SVD of at most " +
                 std::to_string(detail::kMaxSvdTaps) + " taps";
    return lp;
  }
  if (lr->terms.size() < 2) {
    lp.why_not = rank_one;
    return lp;
  }
  if (lr->terms.size() > kMaxGpuTerms) {
    lp.why_not = std::to_string(lr->terms.size()) + " separable terms: more than " +
                 std::to_string(kMaxGpuTerms);
    return lp;
  }
  for (const detail::AxisWindows& t : lr->terms) lp.single_passes &= t.long_axes <= 1;
  if (p.direct_sums() && !lp.single_passes) {
    lp.why_not = "direct sums required: a sum of separable terms sums each output in stages";
    return lp;
  }
  lp.axis_lines = lr->axis_lines;
  lp.dropped = lr->largest > 0 ? lr->dropped / lr->largest : 0;
  for (std::size_t i = 0; i < lr->terms.size(); ++i) {
    SepPlan sp = make_plan(p, lr->terms[i], true);
    const std::string term = "term " + std::to_string(i + 1) + " of " +
                             std::to_string(lr->terms.size()) + ": ";
    if (!sp.why_not.empty()) {
      lp.why_not = term + sp.why_not;
      return lp;
    }
    const SepPass& last = sp.passes.back();
    if (last.colk || last.lng || last.lrow || last.vol) {
      lp.why_not = term + "a factor longer than the fused kernel's radii (" +
                   std::to_string(sep_top(p.dtype())) +
                   ") in the last pass, which cannot add into the output";
      return lp;
    }
    lp.terms.push_back(std::move(sp));
  }
  return lp;
}

// The terms' modelled time: their passes (passes_ns), every term after the first adding into the
// output.
double lowrank_ns(const Problem& p, const LowRankPlan& lp) {
  double ns = 0;
  for (std::size_t i = 0; i < lp.terms.size(); ++i) ns += passes_ns(p, lp.terms[i], i > 0);
  return ns;
}

// lowrank's plan: the terms of the problem's filter (an SVD of up to kMaxSvdTaps weights, made
// once per plan) and each term's passes.
class LowRankStrategyPlan final : public StrategyPlan {
 public:
  LowRankStrategyPlan(const Strategy& s, const Problem& p, LowRankPlan plan)
      : StrategyPlan(s, p), lp_(std::move(plan)), device_(detail::current_cuda_device()) {}

  Estimate estimate() const override {
    return {lowrank_ns(problem(), lp_), "the terms' passes (separable's model)"};
  }
  Summation summation() const override {
    return lp_.single_passes ? Summation::direct : Summation::low_rank;
  }
  Traffic model() const override {
    const Problem& p = problem();
    double bytes = 0, taps = 0;
    for (std::size_t i = 0; i < lp_.terms.size(); ++i)
      for (const SepPass& s : lp_.terms[i].passes) {
        const bool adds = i > 0 && &s == &lp_.terms[i].passes.back();
        bytes += p.bytes() * (adds ? 1.5 : 1.0);
        taps += pass_taps(s, lp_.terms[i].win);
      }
    return {bytes, 2.0 * taps * double(p.elements())};
  }
  std::vector<MemoryUse> workspace() const override {
    const Problem& p = problem();
    for (const SepPlan& sp : lp_.terms)
      if (sp.passes.size() > 1)
        return {{"scratch array between a term's passes",
                 double(p.elements()) * double(dtype_size(p.dtype())), MemorySpace::device}};
    return {};
  }
  std::string describe() const override {
    const Problem& p = problem();
    char form[96];
    if (lp_.axis_lines)
      std::snprintf(form, sizeof form, "axis lines, exact");
    else
      std::snprintf(form, sizeof form, "SVD, dropped singular values %.1e of the largest",
                    lp_.dropped);
    std::string s = std::to_string(lp_.terms.size()) + " separable terms (" + form + ")";
    for (std::size_t i = 0; i < lp_.terms.size(); ++i)
      s += "; term " + std::to_string(i + 1) + ", " + describe_factors(p, lp_.terms[i].win) +
           ": " + describe_passes(lp_.terms[i], p);
    char model[64];
    std::snprintf(model, sizeof model, "; modelled %.3g ms", lowrank_ns(p, lp_) * 1e-6);
    return s + "; each term after the first adds its last pass into the output" + model;
  }
  void run(const Buffers& b, void* stream) const override {
    const Problem& p = problem();
    LowRankPlan other;  // planned for this run where the device is not the plan's
    const LowRankPlan* planned = &lp_;
    if (detail::current_cuda_device() != device_) {
      other = make_lowrank_plan(p);
      if (!other.why_not.empty())
        throw Error("strategy 'lowrank' cannot run " + p.describe() + ": " + other.why_not);
      planned = &other;
    }
    const LowRankPlan& lp = *planned;
    const auto st = static_cast<cudaStream_t>(stream);
    const int sms = prim::current_device_facts().multiprocessors;
    // Every term's last pass notes the outputs it stores: the last term's are the outputs, and
    // a non-finite sum stays non-finite when later terms add to it.
    const NonFiniteNote note = NonFiniteNote::of(b);
    dispatch_buffers(p.dtype(), b.input, b.output, [&](auto* in, auto* out) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
      std::optional<DeviceBuffer> scratch;  // between a term's two passes, where one has two
      for (std::size_t i = 0; i < lp.terms.size(); ++i) {
        const SepPlan& sp = lp.terms[i];
        SepPass last = sp.passes.back();
        last.g.add = i > 0;
        if (sp.passes.size() == 1) {
          run_pass<T>(in, out, last, sp.win, p, st, sms, note);
          continue;
        }
        if (!scratch)
          scratch.emplace(std::size_t(p.elements()) * sizeof(T),
                          "the scratch array of the low-rank terms of " + p.describe(), st);
        T* mid = static_cast<T*>(scratch->p);
        run_pass<T>(in, mid, sp.passes[0], sp.win, p, st, sms, {});
        run_pass<T>(mid, out, last, sp.win, p, st, sms, note);
      }
    });
  }
  // Every term's last pass notes a non-finite output it stores (run()).
  NonFinite nonfinite() const override { return NonFinite::noted; }

 private:
  LowRankPlan lp_;
  int device_;  // the CUDA device the terms' passes were planned for
};

class LowRankStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "lowrank"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "filters of low rank as sums of separable terms (axis lines, or an SVD in float64), "
           "each term's x and y fused in one pass as `separable`'s, every term after the first "
           "adding into the output";
  }
  Prepared prepare(const Problem& p) const override {
    LowRankPlan lp = make_lowrank_plan(p);
    if (!lp.why_not.empty()) return Prepared::cannot(lp.why_not);
    return {std::make_shared<LowRankStrategyPlan>(*this, p, std::move(lp)), {}};
  }
};

}  // namespace

}  // namespace sep

std::unique_ptr<Strategy> make_separable_strategy() {
  return std::make_unique<sep::SeparableStrategy>();
}
std::unique_ptr<Strategy> make_lowrank_strategy() {
  return std::make_unique<sep::LowRankStrategy>();
}

}  // namespace halo::cuda
