// halo — build and machine information.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace halo {

// ---------------------------------------------------------------------------------------------
// Build and machine information
// ---------------------------------------------------------------------------------------------
const char* version();
struct BuildInfo {
  bool cuda_compiled = false;
  std::string cuda_archs;     // e.g. "90"
  std::string compiler;       // e.g. "GNU 12.2.0"
  std::string build_type;     // e.g. "Release"
  bool openmp = false;
  std::string simd_targets;   // the SIMD targets the CPU backend can dispatch to
  std::string cpu_best_target;  // the one it uses on this machine
};
BuildInfo build_info();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0, sm_minor = 0;
  int multiprocessors = 0;
  std::size_t global_memory = 0;
  std::size_t l2_bytes = 0;
  std::size_t shared_per_block_optin = 0;
};
// The CUDA devices found; if none, `why_none` says why (not compiled with CUDA, no driver, ...).
std::vector<DeviceInfo> cuda_devices(std::string* why_none = nullptr);
bool cuda_available(std::string* why_not = nullptr);

}  // namespace halo
