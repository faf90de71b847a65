// The strategy registry, the dispatch (`choose`), `apply` and plans (`prepare`).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "core/converted.hpp"
#include "core/detail.hpp"
#include "core/nonfinite.hpp"
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo {

namespace {
const detail::StrategyList& registry() {
  static const detail::StrategyList list = [] {
    detail::StrategyList l;
    detail::register_cpu_strategies(l);
    detail::register_cuda_strategies(l);
    return l;
  }();
  return list;
}

std::string known_names(const std::vector<const Strategy*>& among) {
  std::string s;
  for (const Strategy* st : among) s += (s.empty() ? "" : ", ") + st->name();
  return s;
}

const Strategy* find_in(const std::vector<const Strategy*>& among, const std::string& name) {
  for (const Strategy* s : among)
    if (s->name() == name) return s;
  return nullptr;
}

// The kernels of the course notes, kept as the notes write them: a problem they refuse is
// seldom news (zero ghost cells only, compiled radii), so their reasons are told only where no
// other strategy of the backend has one.
bool seed_kernel(const std::string& name) {
  static const char* const seeds[] = {"basic",        "constant", "tiled_input",
                                      "tiled_output", "tiled_output_twostep", "cached"};
  for (const char* s : seeds)
    if (name == s) return true;
  return false;
}

// Whether opt holds a run on host arrays to the CPU (the CPU backend, the reference, or a CPU
// strategy by name): such a run never asks for CUDA, since asking starts the CUDA runtime, whose
// context maps hundreds of MB of address space and takes a GPU's memory.
bool held_to_cpu(const Options& opt, MemorySpace space,
                 const std::vector<const Strategy*>& among) {
  if (space == MemorySpace::device) return false;
  if (!opt.strategy.empty()) {
    const Strategy* s = find_in(among, opt.strategy);
    return s && s->backend() != Backend::cuda;
  }
  return opt.backend == Backend::cpu || opt.backend == Backend::reference;
}

// " (0.72 ms: how)": the estimate the choice was made on, for RunInfo's note.
std::string modelled(const Estimate& e) {
  if (!std::isfinite(e.ns)) return " (" + e.why + ")";
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3g ms", e.ns * 1e-6);
  return std::string(" (") + ms + ": " + e.why + ")";
}

}  // namespace

Prepared detail::prepare_for_dispatch(const Strategy& s, const Problem& p) {
  try {
    // A strategy not written for p's dtypes runs them through slabs of its own float type (on
    // the host, or on the device for a CUDA strategy).
    const Status dt = s.accepts_dtypes(p);
    if (!dt) return prepare_converted(s, p);
    return s.prepare(p);
  } catch (const Error& e) {
    return Prepared::cannot(e.what());
  }
}

Estimate detail::estimate_for_dispatch(const StrategyPlan& plan) {
  try {
    return plan.estimate();
  } catch (const Error& e) {
    return Estimate::none(e.what());
  }
}

// The dispatch: the plan of backend `be`'s strategy that `auto` runs p with, read top to bottom.
// Each strategy is asked once, for its plan or why it cannot run p (Strategy::prepare); then:
//  1. Only strategies that can implement p (their reasons kept for the error).
//  2. The rules that are not about speed: the seed kernels of the course notes are never taken
//     (they are there to be read and run by name); where direct sums are required, only a
//     strategy whose summation of p is direct (each also refuses such a p itself).
//  3. The least modelled time (StrategyPlan::estimate, from the machine's profile); a strategy
//     without an estimate only where none has one; ties to the earlier registered.
// A strategy whose prepare() throws halo::Error is one that cannot (the message its reason); one
// whose estimate() throws has no estimate.
// Null and the reasons if none: those of the strategies beyond the seed kernels where there
// are any, else the seed kernels'.
std::shared_ptr<const StrategyPlan> detail::plan_within(Backend be, const Problem& p,
                                                        const std::vector<const Strategy*>& among,
                                                        std::string* reasons, Estimate* estimate) {
  std::shared_ptr<const StrategyPlan> best;
  Estimate best_e;
  std::string own, seeds;
  bool seed_runs = false;
  for (const Strategy* s : among) {
    if (s->backend() != be) continue;
    const bool seed = seed_kernel(s->name());
    Prepared pp = prepare_for_dispatch(*s, p);
    if (!pp) {
      std::string& r = seed ? seeds : own;
      r += (r.empty() ? "" : "; ") + s->name() + ": " + pp.why_not;
      continue;
    }
    if (seed) {
      seed_runs = true;
      continue;
    }
    if (p.direct_sums() && pp.plan->summation() != Summation::direct) continue;
    Estimate e = estimate_for_dispatch(*pp.plan);
    if (!best || e.ns < best_e.ns) {
      best = std::move(pp.plan);
      best_e = std::move(e);
    }
  }
  if (!best && reasons) {
    std::string r = own.empty() ? seeds : own;
    if (seed_runs)
      r += std::string(r.empty() ? "" : "; ") +
           "the seed kernels run it, but only by name (--strategy)";
    *reasons += (reasons->empty() ? "" : "; ") + r;
  }
  if (best && estimate) *estimate = std::move(best_e);
  return best;
}

const Strategy* detail::choose_within(Backend be, const Problem& p, std::string* reasons) {
  const auto plan = plan_within(be, p, strategies(), reasons, nullptr);
  return plan ? &plan->strategy() : nullptr;
}

const std::vector<const Strategy*>& strategies() {
  static const std::vector<const Strategy*> v = [] {
    std::vector<const Strategy*> out;
    for (const auto& s : registry()) out.push_back(s.get());
    return out;
  }();
  return v;
}

const Strategy* find_strategy(const std::string& name) {
  for (const Strategy* s : strategies())
    if (s->name() == name) return s;
  return nullptr;
}

detail::Choice detail::choose_plan(const Problem& p, const Options& opt, MemorySpace space,
                                   const std::vector<const Strategy*>& among) {
  Choice c;
  RunInfo& info = c.info;
  // An explicit strategy: that one or an error, never a silent fallback.
  if (!opt.strategy.empty()) {
    const Strategy* s = find_in(among, opt.strategy);
    if (!s)
      throw Error("unknown strategy '" + opt.strategy + "' (available: " + known_names(among) +
                  ")");
    if (opt.backend != Backend::automatic && opt.backend != s->backend())
      throw Error("strategy '" + s->name() + "' belongs to backend " + to_string(s->backend()) +
                  ", not " + to_string(opt.backend));
    if (s->backend() == Backend::cuda) {
      std::string why;
      if (!cuda_available(&why))
        throw Error("strategy '" + s->name() + "' needs a CUDA device: " + why);
    } else if (space == MemorySpace::device) {
      throw Error("strategy '" + s->name() + "' runs on the CPU and cannot read device memory");
    }
    c.plan = plan_or_throw(*s, p);
    info.strategy = s->name();
    info.backend = s->backend();
    info.note = "chosen explicitly";
    return c;
  }

  Backend be = opt.backend;
  std::string why_no_cuda;
  const bool have_cuda = !held_to_cpu(opt, space, among) && cuda_available(&why_no_cuda);
  if (space == MemorySpace::device) {
    if (be != Backend::automatic && be != Backend::cuda)
      throw Error(std::string("backend ") + to_string(be) + " cannot read device memory");
    if (!have_cuda) throw Error("device arrays given but no CUDA device: " + why_no_cuda);
    be = Backend::cuda;
  }
  if (be == Backend::cuda && !have_cuda)
    throw Error("backend cuda requested but no CUDA device is usable: " + why_no_cuda);

  Estimate e;
  if (be == Backend::automatic) {
    if (have_cuda) {
      std::string reasons;
      if ((c.plan = plan_within(Backend::cuda, p, among, &reasons, &e))) {
        info = {c.plan->strategy().name(), Backend::cuda,
                "auto: least modelled time of the CUDA strategies" + modelled(e)};
        return c;
      }
      info.note = "auto: no CUDA strategy fits (" + reasons + "); ";
    } else {
      info.note = "auto: no CUDA device (" + why_no_cuda + "); ";
    }
    be = Backend::cpu;
  }
  std::string reasons;
  c.plan = plan_within(be, p, among, &reasons, &e);
  if (!c.plan && be == Backend::cpu && opt.backend == Backend::automatic)
    c.plan = plan_within(Backend::reference, p, among, &reasons, &e);
  if (!c.plan)
    throw Error(std::string("no ") + to_string(be) + " strategy can run " + p.describe() +
                (reasons.empty() ? std::string() : ": " + reasons));
  const Strategy& s = c.plan->strategy();
  info.strategy = s.name();
  info.backend = s.backend();
  info.note += std::string("least modelled time of the ") + to_string(s.backend()) +
               " strategies" + modelled(e);
  return c;
}

RunInfo choose(const Problem& p, const Options& opt, MemorySpace space) {
  return detail::choose_plan(p, opt, space, strategies()).info;
}

namespace {
bool same_layout(const ConstArrayView& a, const ArrayView& b) {
  if (a.rank != b.rank || a.batch != b.batch) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.extents[i] != b.extents[i]) return false;
  return true;
}
std::string shape_of(int rank, const Extents& e, std::int64_t batch, DType t) {
  std::string s = (batch > 1 ? std::to_string(batch) + "x" : "") + detail::join_extents(e, rank);
  return s + " " + to_string(t);
}
}  // namespace

namespace {
// The problem apply() and prepare() build from a description and the options.
Problem problem_of(const ArrayDesc& d, const Filter& filter, const Options& opt) {
  Problem p(d.rank, d.extents, d.batch, filter, d.dtype, opt.op, opt.edges);
  p.set_output(d.output_dtype(), opt.rounding);
  p.require_direct_sums(opt.direct_sums);
  p.set_footprint(opt.footprint);
  p.set_tuning(opt.tuning);
  p.set_progress(opt.progress);
  return p;
}

// The checks of a run's arrays that apply() and Plan::run share: pointers, one layout, one
// memory space, no overlap.
void check_arrays(const char* who, const ConstArrayView& in, const ArrayView& out) {
  const std::string w = who;
  if (!in.data) throw Error(w + ": input pointer is null");
  if (!out.data) throw Error(w + ": output pointer is null");
  if (!same_layout(in, out))
    throw Error(w + ": output " + shape_of(out.rank, out.extents, out.batch, out.dtype) +
                " does not match input " + shape_of(in.rank, in.extents, in.batch, in.dtype));
  if (in.space != out.space)
    throw Error(w + ": input and output must both be host or both be device arrays");
  const auto* ib = static_cast<const char*>(in.data);
  const auto* ob = static_cast<const char*>(out.data);
  if (ib < ob + out.bytes() && ob < ib + in.bytes())
    throw Error(w + ": output overlaps input (in-place filtering is not supported)");
}

// Runs a plan on its problem's arrays (host arrays through the device for a CUDA strategy).
void run_on(const StrategyPlan& plan, const ConstArrayView& in, const ArrayView& out,
            void* stream) {
  if (plan.strategy().backend() == Backend::cuda && in.space == MemorySpace::host)
    detail::run_cuda_on_host_buffers(plan, in.data, out.data, stream);
  else
    detail::run_strategy(plan, in.data, out.data, stream);
}
}  // namespace

// Every call analyses the problem and chooses again: a caller that runs one description many
// times prepares it once (prepare(), Plan::run; the Python package does).
RunInfo apply(ConstArrayView in, ArrayView out, const Filter& filter, const Options& opt) {
  check_arrays("apply", in, out);
  const Problem p = problem_of(ArrayDesc::of(in, out), filter, opt);
  detail::Choice c = detail::choose_plan(p, opt, in.space, strategies());
  // Refused before anything is allocated if the workspace cannot fit (the caller's arrays exist).
  require_memory(memory_needed(*c.plan, in.space));
  run_on(*c.plan, in, out, opt.stream);
  return std::move(c.info);
}

// The problem and the plan chosen for it, held together: the plan refers to the problem.
struct Plan::State {
  ArrayDesc desc;
  Problem problem;
  std::shared_ptr<const StrategyPlan> plan;
  RunInfo info;
  std::vector<MemoryUse> needs;  // the workspace beside the caller's arrays
  void* stream = nullptr;
};

struct detail::PlanAccess {
  static Plan make(std::shared_ptr<const Plan::State> st) {
    Plan plan;
    plan.state_ = std::move(st);
    return plan;
  }
};

Plan detail::prepare_among(const std::vector<const Strategy*>& among, const ArrayDesc& desc,
                           const Filter& filter, const Options& opt) {
  auto st = std::make_shared<Plan::State>();
  st->desc = desc;
  st->problem = problem_of(desc, filter, opt);
  Choice c = choose_plan(st->problem, opt, desc.space, among);
  st->plan = std::move(c.plan);
  st->info = std::move(c.info);
  st->needs = memory_needed(*st->plan, desc.space);
  require_memory(st->needs);
  st->stream = opt.stream;
  return PlanAccess::make(std::move(st));
}

Plan prepare(const ArrayDesc& desc, const Filter& filter, const Options& opt) {
  return detail::prepare_among(strategies(), desc, filter, opt);
}

RunInfo Plan::run(ConstArrayView in, ArrayView out, void* stream) const {
  if (!state_) throw Error("Plan::run: an empty plan (plans come from halo::prepare)");
  const State& s = *state_;
  check_arrays("Plan::run", in, out);
  const ArrayDesc& d = s.desc;
  const ArrayDesc a = ArrayDesc::of(in, out);  // one layout (check_arrays)
  bool same = a.rank == d.rank && a.batch == d.batch && a.dtype == d.dtype &&
              a.output_dtype() == d.output_dtype() && a.space == d.space;
  for (int i = 0; i < d.rank && same; ++i) same = a.extents[i] == d.extents[i];
  if (!same)
    throw Error("Plan::run: arrays " + shape_of(in.rank, in.extents, in.batch, in.dtype) +
                (out.dtype != in.dtype ? std::string(" to ") + to_string(out.dtype) : "") +
                (in.space == MemorySpace::device ? " on the device" : " on the host") +
                " given to a plan for " + shape_of(d.rank, d.extents, d.batch, d.dtype) +
                (d.output_dtype() != d.dtype ? std::string(" to ") + to_string(d.output_dtype())
                                             : "") +
                (d.space == MemorySpace::device ? " on the device" : " on the host"));
  // What is free may have changed since prepare(): the same check, on the same figures.
  require_memory(s.needs);
  run_on(*s.plan, in, out, stream ? stream : s.stream);
  return s.info;
}

const RunInfo& Plan::info() const {
  if (!state_) throw Error("Plan::info: an empty plan (plans come from halo::prepare)");
  return state_->info;
}

const ArrayDesc& Plan::desc() const {
  if (!state_) throw Error("Plan::desc: an empty plan (plans come from halo::prepare)");
  return state_->desc;
}

std::string Plan::describe() const {
  if (!state_) return "an empty plan";
  const std::string plan = state_->plan->describe();
  return state_->problem.describe() + ": " + state_->info.strategy +
         (plan.empty() ? std::string() : " (" + plan + ")");
}

RunInfo correlate(ConstArrayView in, ArrayView out, const Filter& f, Options opt) {
  opt.op = Op::correlate;
  return apply(in, out, f, opt);
}
RunInfo convolve(ConstArrayView in, ArrayView out, const Filter& f, Options opt) {
  opt.op = Op::convolve;
  return apply(in, out, f, opt);
}

std::vector<DeviceInfo> cuda_devices(std::string* why_none) {
  return detail::query_cuda_devices(why_none);
}
bool cuda_available(std::string* why_not) {
  static std::string why;
  static const bool ok = !detail::query_cuda_devices(&why).empty();
  if (!ok && why_not) *why_not = why;
  return ok;
}

}  // namespace halo
