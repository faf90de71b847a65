// Strategies' plans (Strategy::prepare, StrategyPlan): the dispatch asks each strategy once per
// problem and takes the least estimate of the plans; a halo::Plan runs its strategy's plan with
// no analysis again; a strategy that cannot run a problem says why; the per-problem questions
// agree with the plan's answers; a problem's filter is factored once, whoever asks.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "core/factor.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"
#include "support.hpp"

namespace halo::test {
namespace {

// A CPU strategy for these tests alone (never registered): its plan runs `cpu`'s plan of the
// problem, with an estimate of its own; it counts the questions it is asked.
class CountingStrategy final : public PlannedStrategy {
 public:
  // Throwing: prepare() throws halo::Error (a figure its analysis lacks), or its plan's
  // estimate() does.
  enum class Throws { nothing, prepare, estimate };
  CountingStrategy(std::string name, double ns, std::string refuse = {},
                   Throws throws = Throws::nothing)
      : name_(std::move(name)), ns_(ns), refuse_(std::move(refuse)), throws_(throws) {}
  std::string name() const override { return name_; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override { return "counts its plans and runs"; }

  class CountingPlan final : public StrategyPlan {
   public:
    CountingPlan(const CountingStrategy& s, const Problem& p)
        : StrategyPlan(s, p), inner_(find_strategy("cpu")->prepare(p).plan), owner_(s) {}
    Estimate estimate() const override {
      if (owner_.throws_ == Throws::estimate) throw Error("count: no figure for this dtype");
      return {owner_.ns_, "counted"};
    }
    NonFinite nonfinite() const override { return inner_->nonfinite(); }
    std::vector<MemoryUse> workspace() const override { return inner_->workspace(); }
    void run(const Buffers& b, void* stream) const override {
      ++owner_.runs;
      inner_->run(b, stream);
    }

   private:
    std::shared_ptr<const StrategyPlan> inner_;
    const CountingStrategy& owner_;
  };

  Prepared prepare(const Problem& p) const override {
    ++prepares;
    if (throws_ == Throws::prepare) throw Error("count: not written for this dtype");
    if (!refuse_.empty()) return Prepared::cannot(refuse_);
    return {std::make_shared<CountingPlan>(*this, p), {}};
  }

  mutable std::atomic<int> prepares{0}, runs{0};

 private:
  std::string name_;
  double ns_;
  std::string refuse_;
  Throws throws_;
};

Problem small_problem(DType t = DType::f64) {
  return Problem(2, {16, 12, 1}, 1, make_named_filter("gaussian:sigma=1", 2), t);
}

Options on_cpu() {
  Options o;
  o.backend = Backend::cpu;
  return o;
}

TEST(StrategyPlan, DispatchAsksEachStrategyOnceAndTakesTheLeastEstimate) {
  const CountingStrategy a("count_a", 30), b("count_b", 10), c("count_c", 10),
      no("count_no", 1, "refused for the test");
  const std::vector<const Strategy*> among = {&a, &no, &b, &c};
  const Problem p = small_problem();
  std::string why;
  Estimate e;
  const auto plan = detail::plan_within(Backend::cpu, p, among, &why, &e);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->strategy().name(), "count_b");  // least estimate, the tie to the earlier
  EXPECT_EQ(e.ns, 10);
  EXPECT_EQ(&plan->problem(), &p);
  for (const CountingStrategy* s : {&a, &b, &c, &no}) EXPECT_EQ(s->prepares.load(), 1) << s->name();
  // RunInfo's note is formed from the chosen plan's estimate, not asked again.
  const detail::Choice choice = detail::choose_plan(p, on_cpu(), MemorySpace::host, among);
  EXPECT_EQ(choice.info.strategy, "count_b");
  EXPECT_NE(choice.info.note.find("counted"), std::string::npos) << choice.info.note;
  for (const CountingStrategy* s : {&a, &b, &c, &no}) EXPECT_EQ(s->prepares.load(), 2) << s->name();
}

TEST(StrategyPlan, ReasonsOfStrategiesThatCannot) {
  const CountingStrategy x("count_x", 1, "x cannot"), y("count_y", 1, "y cannot either");
  const std::vector<const Strategy*> among = {&x, &y};
  const Problem p = small_problem();
  std::string why;
  EXPECT_FALSE(detail::plan_within(Backend::cpu, p, among, &why, nullptr));
  EXPECT_EQ(why, "count_x: x cannot; count_y: y cannot either");
  try {
    detail::choose_plan(p, on_cpu(), MemorySpace::host, among);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("count_y: y cannot either"), std::string::npos)
        << err.what();
  }
  Options named = on_cpu();
  named.strategy = "count_x";
  try {
    detail::choose_plan(p, named, MemorySpace::host, among);
    ADD_FAILURE() << "no error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("strategy 'count_x' cannot run"), std::string::npos)
        << err.what();
  }
}

// A strategy whose analysis throws halo::Error cannot run the problem (its message the reason)
// and the others still answer; one whose estimate throws has none, and is taken only where no
// other strategy has one. (A new dtype: the strategies not written for it need not be edited.)
TEST(StrategyPlan, StrategiesThatThrowAreSkippedWithTheirReason) {
  using T = CountingStrategy::Throws;
  const CountingStrategy bad("count_bad", 1, {}, T::prepare),
      unmodelled("count_free", 1, {}, T::estimate), ok("count_ok", 50);
  const Problem p = small_problem();
  std::string why;
  Estimate e;
  auto plan = detail::plan_within(Backend::cpu, p, {&bad, &unmodelled, &ok}, &why, &e);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->strategy().name(), "count_ok");
  plan = detail::plan_within(Backend::cpu, p, {&bad, &unmodelled}, &why, &e);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->strategy().name(), "count_free");
  EXPECT_FALSE(std::isfinite(e.ns));
  EXPECT_NE(e.why.find("no figure for this dtype"), std::string::npos) << e.why;
  why.clear();
  EXPECT_FALSE(detail::plan_within(Backend::cpu, p, {&bad}, &why, nullptr));
  EXPECT_EQ(why, "count_bad: count: not written for this dtype");
  // Named, the strategy's own error reaches the caller.
  Options named = on_cpu();
  named.strategy = "count_bad";
  EXPECT_THROW(detail::choose_plan(p, named, MemorySpace::host, {&bad, &ok}), Error);
}

TEST(StrategyPlan, APlanRunsWithoutAnalysingAgain) {
  const CountingStrategy only("count_only", 5);
  const std::vector<const Strategy*> among = {&only};
  const ArrayDesc d{2, {16, 12, 1}, 3, DType::f64, MemorySpace::host};
  const Filter f = make_named_filter("gaussian:sigma=1", 2);
  const Plan plan = detail::prepare_among(among, d, f, on_cpu());
  EXPECT_EQ(only.prepares.load(), 1);
  EXPECT_EQ(plan.info().strategy, "count_only");
  const std::vector<double> in = random_vector<double>(3 * 16 * 12);
  std::vector<double> out(in.size()), want(in.size());
  Options o = on_cpu();
  o.strategy = "cpu";
  apply(ConstArrayView(in.data(), d.dtype, d.rank, d.extents, d.batch),
        ArrayView{want.data(), d.dtype, d.rank, d.extents, d.batch}, f, o);
  for (int i = 0; i < 5; ++i) {
    std::fill(out.begin(), out.end(), -1.0);
    plan.run(ConstArrayView(in.data(), d.dtype, d.rank, d.extents, d.batch),
             ArrayView{out.data(), d.dtype, d.rank, d.extents, d.batch});
    EXPECT_EQ(out, want);
  }
  EXPECT_EQ(only.prepares.load(), 1);  // five runs, no plan made again
  EXPECT_EQ(only.runs.load(), 5);
  EXPECT_NE(plan.describe().find("count_only"), std::string::npos) << plan.describe();
}

// Each registered strategy's per-problem questions give its plan's answers (they are the plan's,
// or the plan's are theirs).
TEST(StrategyPlan, PerProblemQuestionsAgreeWithThePlan) {
  const std::vector<Problem> problems = {
      small_problem(DType::f32),
      Problem(2, {20, 24, 1}, 1, make_named_filter("laplacian", 2), DType::f64),
      Problem(2, {20, 24, 1}, 1, random_filter({5, 5}), DType::f32),
      Problem(1, {200, 1, 1}, 1, make_named_filter("box:9", 1), DType::f32),
      Problem(3, {6, 7, 8}, 1, make_named_filter("gaussian:sigma=1", 3), DType::f64)};
  for (const Problem& p : problems)
    for (const Strategy* s : strategies()) {
      const Prepared pp = s->prepare(p);
      const Status st = s->can_implement(p);
      ASSERT_EQ(bool(pp), bool(st)) << s->name() << " on " << p.describe();
      if (!pp) {
        EXPECT_EQ(pp.why_not, st.reason) << s->name() << " on " << p.describe();
        EXPECT_FALSE(pp.why_not.empty()) << s->name() << " on " << p.describe();
        continue;
      }
      const std::string what = s->name() + " on " + p.describe();
      EXPECT_EQ(&pp.plan->strategy(), s) << what;
      EXPECT_EQ(pp.plan->estimate().ns, s->estimate(p).ns) << what;
      EXPECT_EQ(pp.plan->estimate().why, s->estimate(p).why) << what;
      EXPECT_EQ(pp.plan->summation(), s->summation(p)) << what;
      EXPECT_EQ(pp.plan->nonfinite(), s->nonfinite(p)) << what;
      EXPECT_EQ(pp.plan->describe(), s->plan(p)) << what;
      EXPECT_EQ(pp.plan->workspace().size(), s->workspace(p).size()) << what;
    }
}

TEST(StrategyPlan, StrategiesThatCannotSayWhy) {
  const Problem dense(2, {32, 32, 1}, 1, random_filter({3, 3}), DType::f32);
  const Prepared sep = find_strategy("cpu_separable")->prepare(dense);
  ASSERT_FALSE(sep);
  EXPECT_NE(sep.why_not.find("not an outer product"), std::string::npos) << sep.why_not;
  const Problem line(1, {64, 1, 1}, 1, random_filter({5}), DType::f32);
  const Prepared lr = find_strategy("cpu_lowrank")->prepare(line);
  ASSERT_FALSE(lr);
  EXPECT_NE(lr.why_not.find("fewer than two axes"), std::string::npos) << lr.why_not;
  // Running a strategy on a problem it cannot run is an error giving the reason.
  std::vector<float> in(64), out(64);
  try {
    find_strategy("cpu_lowrank")->run(line, Buffers{in.data(), out.data()}, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than two axes"), std::string::npos) << e.what();
  }
  if (const Strategy* gpu = find_strategy("separable")) {  // planned as on an H100 without one
    const Prepared g = gpu->prepare(dense);
    ASSERT_FALSE(g);
    EXPECT_NE(g.why_not.find("not an outer product"), std::string::npos) << g.why_not;
  }
}

// The rank-1 windows are factored once per problem, by the first strategy that asks, and shared
// with the problem's copies: every later question reads the same answer.
TEST(StrategyPlan, AProblemsFilterIsFactoredOnce) {
  const Problem p = small_problem();
  const auto& first = detail::separable_windows(p);
  ASSERT_TRUE(first);
  for (const Strategy* s : strategies()) (void)s->prepare(p);
  EXPECT_EQ(&detail::separable_windows(p), &first);
  const Problem copy = p;
  EXPECT_EQ(&detail::separable_windows(copy), &first);
  const Problem other = small_problem();  // equal weights, a problem of its own
  EXPECT_NE(&detail::separable_windows(other), &first);
}

}  // namespace
}  // namespace halo::test
