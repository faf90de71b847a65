// The CPU backend's strategies. Adding one: its file, plus one line here.
#include "core/detail.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {
std::unique_ptr<Strategy> make_reference_strategy();
std::unique_ptr<Strategy> make_fast_strategy();
std::unique_ptr<Strategy> make_separable_strategy();
std::unique_ptr<Strategy> make_lowrank_strategy();
std::unique_ptr<Strategy> make_fft_strategy();
std::unique_ptr<Strategy> make_lines_strategy();
}  // namespace halo::cpu

namespace halo::detail {
void register_cpu_strategies(StrategyList& out) {
  out.push_back(cpu::make_reference_strategy());
  out.push_back(cpu::make_fast_strategy());
  out.push_back(cpu::make_separable_strategy());
  out.push_back(cpu::make_lowrank_strategy());
  out.push_back(cpu::make_fft_strategy());
  out.push_back(cpu::make_lines_strategy());
}
}  // namespace halo::detail
