// version() and build_info().
#include "core/detail.hpp"
#include "halo/halo.hpp"
#include "halo/info.hpp"

namespace halo {
namespace cpu {
std::string simd_targets();     // defined by the fast CPU backend
std::string simd_best_target();
}  // namespace cpu

const char* version() { return HALO_VERSION; }

BuildInfo build_info() {
  BuildInfo b;
#ifdef HALO_WITH_CUDA
  b.cuda_compiled = true;
#endif
  b.cuda_archs = detail::cuda_archs();
  b.compiler = HALO_COMPILER;
  b.build_type = HALO_BUILD_TYPE;
#ifdef _OPENMP
  b.openmp = true;
#endif
  b.simd_targets = cpu::simd_targets();
  b.cpu_best_target = cpu::simd_best_target();
  return b;
}

}  // namespace halo
