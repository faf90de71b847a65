// Strategies' plans: the defaults of StrategyPlan, the plan that wraps a strategy's per-problem
// questions (Strategy::prepare's default), and PlannedStrategy's per-problem questions, each
// answered by a plan made for it.
#include "core/dtype.hpp"
#include "halo/strategy.hpp"

namespace halo {

Status Strategy::accepts_dtypes(const Problem& p) const {
  if (p.float_in_float_out()) return Status::success();
  return Status::failure(std::string("written for float32 and float64 in and out, not ") +
                         to_string(p.dtype()) +
                         (p.out_dtype() == p.dtype() ? "" : std::string(" to ") +
                                                                to_string(p.out_dtype())));
}

Estimate StrategyPlan::estimate() const { return Estimate::none("no time model"); }

Traffic StrategyPlan::model() const { return {problem().bytes(), problem().flops()}; }

std::vector<MemoryUse> StrategyPlan::workspace() const {
  const bool gpu = strategy().backend() == Backend::cuda;
  return {{"the filter weights", double(problem().taps()) * double(dtype_size(problem().dtype())),
           gpu ? MemorySpace::device : MemorySpace::host}};
}

namespace {

// The plan of a strategy that answers per problem (Strategy::prepare's default): each question
// is the strategy's, asked when the plan is asked it.
class PerProblemPlan final : public StrategyPlan {
 public:
  using StrategyPlan::StrategyPlan;
  Estimate estimate() const override { return strategy().estimate(problem()); }
  std::string describe() const override { return strategy().plan(problem()); }
  Summation summation() const override { return strategy().summation(problem()); }
  std::vector<MemoryUse> workspace() const override { return strategy().workspace(problem()); }
  NonFinite nonfinite() const override { return strategy().nonfinite(problem()); }
  Traffic model() const override { return strategy().model(problem()); }
  void run(const Buffers& b, void* stream) const override {
    strategy().run(problem(), b, stream);
  }
};

}  // namespace

Prepared Strategy::prepare(const Problem& p) const {
  const Status st = can_implement(p);
  if (!st) return Prepared::cannot(st.reason);
  return {std::make_shared<PerProblemPlan>(*this, p), {}};
}

Status PlannedStrategy::can_implement(const Problem& p) const { return prepare(p).status(); }

Traffic PlannedStrategy::model(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->model() : Traffic{p.bytes(), p.flops()};
}

void PlannedStrategy::run(const Problem& p, const Buffers& b, void* stream) const {
  const Prepared pp = prepare(p);
  if (!pp) throw Error("strategy '" + name() + "' cannot run " + p.describe() + ": " + pp.why_not);
  pp.plan->run(b, stream);
}

Estimate PlannedStrategy::estimate(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->estimate() : Estimate::none(pp.why_not);
}

std::string PlannedStrategy::plan(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->describe() : pp.why_not;
}

Summation PlannedStrategy::summation(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->summation() : Summation::direct;
}

std::vector<MemoryUse> PlannedStrategy::workspace(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->workspace() : std::vector<MemoryUse>{};
}

NonFinite PlannedStrategy::nonfinite(const Problem& p) const {
  const Prepared pp = prepare(p);
  return pp ? pp.plan->nonfinite() : NonFinite::unnoted;
}

}  // namespace halo
