// HALO_CUDA_CHECK(call, what): runs a CUDA runtime call and turns a failure into a halo::Error
// that says what was being done (`what`: a C string or std::string, built only on failure, so it
// may name sizes freely), the CUDA error's name and text, and the call with its file and line.
//
//   HALO_CUDA_CHECK(cudaMalloc(&p, bytes), "allocating " + std::to_string(bytes) + " bytes");
//   kernel<<<grid, block, shared, stream>>>(...);
//   HALO_CUDA_CHECK_LAUNCH("launching basic_2d on " + p.describe());   // every launch
//
// Non-sticky errors (out of memory, invalid configuration, ...) are cleared from the runtime's
// last-error slot before throwing, so the next cudaGetLastError() after a launch does not report
// an old failure as its own.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "halo/halo.hpp"

namespace halo::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const std::string& what, const char* call,
                                          const char* file, int line) {
  (void)cudaGetLastError();  // clear the non-sticky error state (a sticky one stays regardless)
  std::string msg = "CUDA error while " + what + ": " + cudaGetErrorString(e) + " (" +
                    cudaGetErrorName(e) + ")";
  msg += std::string(" [") + call + " at " + file + ":" + std::to_string(line) + "]";
  throw Error(msg);
}

}  // namespace halo::cuda

#define HALO_CUDA_CHECK(call, what)                                                    \
  do {                                                                                 \
    const cudaError_t halo_cuda_err_ = (call);                                         \
    if (halo_cuda_err_ != cudaSuccess)                                                 \
      ::halo::cuda::throw_cuda_error(halo_cuda_err_, std::string(what), #call, __FILE__, \
                                     __LINE__);                                        \
  } while (0)

// After every kernel launch: reports a bad configuration or a missing kernel image at once
// (errors inside the kernel surface at the next synchronising call, also checked).
#define HALO_CUDA_CHECK_LAUNCH(what) HALO_CUDA_CHECK(cudaGetLastError(), what)
