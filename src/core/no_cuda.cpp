// The CUDA hooks of a build without CUDA: no strategies, no devices, and a clear reason why.
#include "core/converted.hpp"
#include "core/detail.hpp"
#include "core/nonfinite.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

void register_cuda_strategies(StrategyList&) {}

void run_cuda_on_host_buffers(const Strategy& s, const Problem&, const void*, void*, void*) {
  throw Error("strategy '" + s.name() + "' needs CUDA, but halo was built without CUDA");
}

void run_cuda_on_host_buffers(const StrategyPlan& plan, const void*, void*, void*) {
  throw Error("strategy '" + plan.strategy().name() +
              "' needs CUDA, but halo was built without CUDA");
}

Prepared prepare_converted_on_device(const Strategy& s, const Problem&) {
  return Prepared::cannot("strategy '" + s.name() + "' needs CUDA, but halo was built without CUDA");
}

void run_cuda_strategy(const StrategyPlan& plan, const void*, void*, void*) {
  throw Error("strategy '" + plan.strategy().name() +
              "' needs CUDA, but halo was built without CUDA");
}

std::vector<DeviceInfo> query_cuda_devices(std::string* why_none) {
  if (why_none)
    *why_none = "halo was built without CUDA (HALO_ENABLE_CUDA=OFF or no nvcc): no GPU usable";
  return {};
}

std::string cuda_archs() { return ""; }

int current_cuda_device() { return -1; }

double cuda_fft_model_ratio(const Problem&) { throw Error("halo was built without CUDA"); }

double device_memory_free(std::string* what, double) {
  if (what) *what = "halo was built without CUDA";
  return 0;
}

Ceilings measure_cuda_ceilings(DType) { throw Error("halo was built without CUDA"); }

std::vector<double> time_cuda_strategy(const Strategy& s, const Problem&, int, int) {
  throw Error("strategy '" + s.name() + "' needs CUDA, but halo was built without CUDA");
}

}  // namespace halo::detail
