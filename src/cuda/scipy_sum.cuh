// SciPy's own sums (core/scipy_sum.hpp) on the device: a ScipySum's taps, weights and offsets
// copied into device memory, and a view of them that kernels pass to scipy_sum_at.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/scipy_sum.hpp"
#include "cuda/check.cuh"

namespace halo::cuda {

// The device bytes upload_scipy_sum needs for ss.
inline std::size_t scipy_sum_bytes(const detail::ScipySum& ss) {
  return (ss.line_weights().size() + ss.tap_weights().size() + ss.tap_offsets().size()) * 8;
}

// Copies ss's arrays to `device` (scipy_sum_bytes(ss) bytes, then `extra` bytes set to zero for
// the caller) on stream st and waits for the copy (from pageable memory that goes on return);
// returns the view of them. `what` names the run in an error.
inline detail::ScipySumView upload_scipy_sum(const detail::ScipySum& ss, void* device,
                                             std::size_t extra, cudaStream_t st,
                                             const std::string& what) {
  const std::size_t nw = ss.line_weights().size(), nt = ss.tap_weights().size(),
                    no = ss.tap_offsets().size(), bytes = scipy_sum_bytes(ss) + extra;
  std::vector<char> host(bytes, 0);
  std::memcpy(host.data(), ss.line_weights().data(), nw * 8);
  std::memcpy(host.data() + nw * 8, ss.tap_weights().data(), nt * 8);
  std::memcpy(host.data() + (nw + nt) * 8, ss.tap_offsets().data(), no * 8);
  char* base = static_cast<char*>(device);
  HALO_CUDA_CHECK(cudaMemcpyAsync(base, host.data(), bytes, cudaMemcpyHostToDevice, st),
                  "copying the SciPy sums' taps of " + what);
  HALO_CUDA_CHECK(cudaStreamSynchronize(st), "copying the SciPy sums' taps of " + what);
  detail::ScipySumView v = ss.view();
  v.w = reinterpret_cast<const double*>(base);
  v.tw = reinterpret_cast<const double*>(base + nw * 8);
  const auto* offs = reinterpret_cast<const std::int64_t*>(base + (nw + nt) * 8);
  v.dz = offs;
  v.dy = offs + v.taps;
  v.dx = offs + 2 * v.taps;
  v.off = offs + 3 * v.taps;
  return v;
}

}  // namespace halo::cuda
