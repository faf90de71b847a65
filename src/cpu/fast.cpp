// PLACEHOLDER — being written.
#include "core/detail.hpp"
#include "cpu/reference.hpp"
namespace halo::cpu {
std::string simd_targets() { return ""; }
std::string simd_best_target() { return ""; }
std::unique_ptr<Strategy> make_fast_strategy();
}
namespace halo::cpu {
namespace {
class Fast final : public Strategy {
 public:
  std::string name() const override { return "cpu"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override { return "placeholder"; }
  Status can_implement(const Problem&) const override { return Status::failure("placeholder"); }
  void run(const Problem&, const Buffers&, void*) const override {}
};
}
std::unique_ptr<Strategy> make_fast_strategy() { return std::make_unique<Fast>(); }
}
