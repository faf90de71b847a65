// The host half of SciPy's non-finite answers (nonfinite.hpp): the repair of a CPU strategy's
// outputs, and the one way every caller runs a strategy.
#include "core/nonfinite.hpp"

#include <omp.h>

#include <atomic>
#include <cstring>
#include <type_traits>

#include "core/converted.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

namespace {

// Whether a row holds no NaN and no infinity: its exponent bits, tested without a branch per
// element (which the compiler vectorises).
template <class T>
bool finite_row(const T* row, std::int64_t n) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "finite_row tests the exponent bits of IEEE single and double only");
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr U exp = sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  bool bad = false;
  for (std::int64_t x = 0; x < n; ++x) {
    U u;
    std::memcpy(&u, row + x, sizeof u);
    bad |= (u & exp) == exp;
  }
  return !bad;
}

// Outputs from which the look and the repair use the OpenMP team.
constexpr std::int64_t kTeamElements = std::int64_t(1) << 18;

template <class T>
std::int64_t repair_impl(const Problem& p, const T* in, T* out) {
  const Dims3 n = p.dims3();
  const std::int64_t rows = p.batch() * n.z * n.y;
  // First only look: most calls find nothing, and the taps are built only where needed.
  std::atomic<bool> any{false};
  // Small outputs are looked at on the calling thread: waking a team costs more than the look,
  // and far more when the other cores are busy.
  const bool team = p.elements() >= kTeamElements;
#pragma omp parallel for schedule(static) if (team)
  for (std::int64_t r = 0; r < rows; ++r)
    if (!finite_row(out + r * n.x, n.x)) any.store(true, std::memory_order_relaxed);
  if (!any.load()) return 0;
  const RepairTaps t = repair_taps(p);
  const RepairGeometry g = repair_geometry(p);
  const std::int64_t item = n.count();
  std::int64_t fixed = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : fixed) if (team)
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = out + r * n.x;
    if (finite_row(row, n.x)) continue;
    const std::int64_t b = r / (n.z * n.y), zy = r % (n.z * n.y);
    const std::int64_t z = zy / n.y, y = zy % n.y;
    for (std::int64_t x = 0; x < n.x; ++x) {
      const T v = row[x];
      if (v - v == T(0)) continue;
      row[x] = static_cast<T>(
          repair_sum(in + b * item, g, t.k, t.a, t.w.data(), t.code.data(), z, y, x));
      ++fixed;
    }
  }
  return fixed;
}

}  // namespace

std::int64_t repair_host(const Problem& p, const void* in, void* out) {
  return dispatch_buffers(p.dtype(), in, out,
                          [&](const auto* i, auto* o) { return repair_impl(p, i, o); });
}

void run_strategy(const StrategyPlan& plan, const void* in, void* out, void* stream) {
  // Never a strategy on dtypes it was not written for (a plan made without the dispatch).
  if (!plan.problem().float_in_float_out() && !converts(plan)) {
    const Status dt = plan.strategy().accepts_dtypes(plan.problem());
    if (!dt)
      throw Error("strategy '" + plan.strategy().name() + "' cannot run " +
                  plan.problem().describe() + ": " + dt.reason);
  }
  if (plan.strategy().backend() == Backend::cuda) {
    run_cuda_strategy(plan, in, out, stream);
    return;
  }
  const NonFinite how = plan.nonfinite();
  unsigned int noted = 0;
  plan.run(Buffers{in, out, how == NonFinite::noted ? &noted : nullptr, 1}, stream);
  if (how == NonFinite::unnoted || (how == NonFinite::noted && noted))
    repair_host(plan.problem(), in, out);
}

std::shared_ptr<const StrategyPlan> plan_or_throw(const Strategy& s, const Problem& p) {
  Prepared pp = prepare_for_dispatch(s, p);
  if (!pp) throw Error("strategy '" + s.name() + "' cannot run " + p.describe() + ": " + pp.why_not);
  return std::move(pp.plan);
}

}  // namespace halo::detail
