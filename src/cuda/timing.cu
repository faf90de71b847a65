// Benchmark support for `halo bench`: the GPU's two roofline ceilings measured in the same run
// (device-to-device copy; an FMA-bound kernel) and per-run CUDA-event timings of a strategy.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "core/nonfinite.hpp"
#include "core/dtype.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "halo/strategy.hpp"

namespace halo::detail {
namespace {

// Fills n elements with uniform values in [-1, 1) from a hash of (seed, index): fresh, non-zero.
template <class T>
__global__ void fill_random(T* p, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint64_t x = (std::uint64_t(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    p[i] = T(double(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  }
}

// 8 independent FMA chains per thread (latency 4 cycles x 2 issue = 8 in flight per warp slot).
template <class T>
__global__ void fma_chains(T* out, int iters, T m, T a) {
  T c[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) c[j] = T(threadIdx.x + j);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) c[j] = fma(c[j], m, a);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += c[j];
  if (s == T(-12345)) out[0] = s;  // never true; keeps the chains alive
}

struct Events {
  cudaEvent_t start{}, stop{};
  Events() {
    HALO_CUDA_CHECK(cudaEventCreate(&start), "creating a timing event");
    HALO_CUDA_CHECK(cudaEventCreate(&stop), "creating a timing event");
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  float ms() const {
    float t = 0;
    HALO_CUDA_CHECK(cudaEventSynchronize(stop), "waiting for a timed run");
    HALO_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop), "reading a timing event");
    return t;
  }
};


template <class T>
void fill(void* p, std::int64_t n, std::uint64_t seed) {
  fill_random<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  HALO_CUDA_CHECK(cudaGetLastError(), "launching fill_random");
}

}  // namespace

Ceilings measure_cuda_ceilings(DType dtype) {
  Ceilings c;
  int dev = 0;
  cudaDeviceProp prop{};
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  HALO_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev), "querying device properties");
  c.device = prop.name;
  // Copy: 1 GiB each way (20x the H100's L2), median of 10 after 2 warm-ups.
  const std::size_t bytes = std::size_t(1) << 30;
  cuda::DeviceBuffer a(bytes, "the copy ceiling's source"), b(bytes, "its destination");
  fill<float>(a.p, bytes / 4, 1);
  Events ev;
  std::vector<double> gbs;
  for (int rep = 0; rep < 12; ++rep) {
    HALO_CUDA_CHECK(cudaEventRecord(ev.start), "recording an event");
    HALO_CUDA_CHECK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice),
                    "copying 1 GiB device to device");
    HALO_CUDA_CHECK(cudaEventRecord(ev.stop), "recording an event");
    const double ms = ev.ms();
    if (rep >= 2) gbs.push_back(2.0 * bytes / ms / 1e6);
  }
  c.copy_gbs = median(gbs);
  // FMA: 8 resident blocks of 256 threads per SM, 8 chains each.
  const int blocks = prop.multiProcessorCount * 8, threads = 256, iters = 1 << 14;
  std::vector<double> gf;
  for (int rep = 0; rep < 7; ++rep) {
    HALO_CUDA_CHECK(cudaEventRecord(ev.start), "recording an event");
    dispatch_dtype(dtype, [&](auto d) {
      using T = typename decltype(d)::storage;
      fma_chains<T><<<blocks, threads>>>(static_cast<T*>(b.p), iters, T(0.9999), T(1e-6));
    });
    HALO_CUDA_CHECK(cudaGetLastError(), "launching the FMA ceiling kernel");
    HALO_CUDA_CHECK(cudaEventRecord(ev.stop), "recording an event");
    const double ms = ev.ms();
    if (rep >= 2) gf.push_back(2.0 * 8.0 * iters * double(blocks) * threads / ms / 1e6);
  }
  c.fma_gflops = median(gf);
  return c;
}

std::vector<double> time_cuda_strategy(const Strategy& s, const Problem& p, int warmup,
                                       int reps) {
  int dev = 0;
  cudaDeviceProp prop{};
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  HALO_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev), "querying device properties");
  const std::size_t bytes = p.elements() * dtype_size(p.dtype());
  // Rotate through enough buffer pairs that one pass over them is 4x the L2 cache.
  const std::size_t l2 = std::size_t(prop.l2CacheSize);
  const int sets = int(std::min<std::size_t>(8, std::max<std::size_t>(1, 4 * l2 / (2 * bytes) + 1)));
  std::vector<std::unique_ptr<cuda::DeviceBuffer>> in, out;
  for (int i = 0; i < sets; ++i) {
    in.push_back(std::make_unique<cuda::DeviceBuffer>(bytes, "a benchmark input"));
    out.push_back(std::make_unique<cuda::DeviceBuffer>(bytes, "a benchmark output"));
    dispatch_dtype(p.dtype(), [&](auto d) {
      fill<typename decltype(d)::storage>(in.back()->p, p.elements(), 1234 + i);
    });
  }
  HALO_CUDA_CHECK(cudaDeviceSynchronize(), "filling benchmark inputs");
  // Planned once, as a held halo::Plan runs: each run times the strategy's run alone.
  const auto plan = plan_or_throw(s, p);
  Events ev;
  std::vector<double> ms;
  for (int r = 0; r < warmup + reps; ++r) {
    const Buffers b{in[r % sets]->p, out[r % sets]->p};
    HALO_CUDA_CHECK(cudaEventRecord(ev.start), "recording an event");
    run_cuda_strategy(*plan, b.input, b.output, nullptr);  // the repair's launch counted too
    HALO_CUDA_CHECK(cudaEventRecord(ev.stop), "recording an event");
    const double t = ev.ms();
    if (r >= warmup) ms.push_back(t);
  }
  return ms;
}

}  // namespace halo::detail
