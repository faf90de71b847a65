// What every seed strategy file shares: the Strategy base class (name, can_implement, model and
// run from launch.hpp's pure functions), the filter upload and the dispatch on the compile-time
// filter width. Only the kernels themselves differ per file. What the seeds share with the other
// strategies comes from outside this folder: the checked kernel launch and the device's limits
// (cuda/launch.cuh), their factories' declarations (cuda/strategies.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/seeds/launch.hpp"
#include "cuda/strategies.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {

// The problem's correlation weights (float64) in the dtype T the kernels compute in.
template <class T>
std::vector<T> weights_as(const Problem& p) {
  const std::vector<double>& w = p.correlation_weights();
  return std::vector<T>(w.begin(), w.end());
}

// Copies the filter into a file's __constant__ array, ordered on `stream` before the kernel that
// reads it. (The host copy may go away on return: pageable sources are staged before returning.)
// Constant memory is one per module: two host threads running the same strategy with different
// filters on different streams at the same time would race for it; run those on one stream.
template <class T>
void upload_constant_filter(const void* symbol, const Problem& p, cudaStream_t stream) {
  const std::vector<T> w = weights_as<T>(p);
  HALO_CUDA_CHECK(cudaMemcpyToSymbolAsync(symbol, w.data(), w.size() * sizeof(T), 0,
                                          cudaMemcpyHostToDevice, stream),
                  "copying the " + p.filter().shape_string() + " filter (" +
                      std::to_string(w.size() * sizeof(T)) + " B) to constant memory");
}

// Calls f(std::integral_constant<int, K>{}) with K = k if k is one of the list's widths, and with
// K = 0 (the run-time path) otherwise.
template <int... Ks, class F>
void dispatch_k(KList<Ks...>, int k, F&& f) {
  const bool done = ((k == Ks ? (f(std::integral_constant<int, Ks>{}), true) : false) || ...);
  if (!done) f(std::integral_constant<int, 0>{});
}

// The common part of every CUDA strategy; a file adds its description and `launch`.
// Priorities (auto picks the highest that can run a problem) follow the seed kernels' order in
// the H100 timings (docs/notes/tuning.md, seed strategies): tiled_output 30, tiled_input 25,
// constant 20, twostep 18 (1D), cached 12, basic 10.
class CudaStrategy : public Strategy {
 public:
  explicit CudaStrategy(Kernel k) : kernel_(k) {}
  std::string name() const override { return kernel_name(kernel_); }
  Backend backend() const override { return Backend::cuda; }
  Status can_implement(const Problem& p) const override {
    return check(kernel_, p, current_device_limits());
  }
  Traffic model(const Problem& p) const override { return cuda::model(kernel_, p); }
  // Device buffers in, device buffers out, asynchronously on `stream` (a cudaStream_t or null).
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    const Status st = can_implement(p);
    if (!st) throw Error("strategy '" + name() + "' cannot run " + p.describe() + ": " + st.reason);
    const Launch L = make_launch(kernel_, p, grid_limits_for_testing());
    launch(p, L, b.input, b.output, static_cast<cudaStream_t>(stream));
  }

 protected:
  virtual void launch(const Problem& p, const Launch& L, const void* in, void* out,
                      cudaStream_t stream) const = 0;

 private:
  Kernel kernel_;
};

}  // namespace halo::cuda
