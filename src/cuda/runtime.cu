// The CUDA backend's hooks (src/core/detail.hpp): its strategies, running a CUDA strategy on host
// buffers, the device list, and the architectures compiled in. Compiled instead of
// src/core/no_cuda.cpp when HALO_ENABLE_CUDA is on.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "core/detail.hpp"
#include "core/nonfinite.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/launch.cuh"
#include "cuda/strategies.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo {
namespace cuda {

namespace {
// What make(dev) answers for the current device, asked once per device and kept (the device's
// limits and pool do not change); `none` where no device is current.
template <class T, class Make>
T per_device(T none, Make make) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return none;
  }
  static std::mutex m;
  static std::map<int, T> known;
  const std::lock_guard<std::mutex> lock(m);
  const auto found = known.find(dev);
  if (found != known.end()) return found->second;
  const T v = make(dev);
  (void)cudaGetLastError();
  known[dev] = v;
  return v;
}
}  // namespace

// Asked by every seed strategy's check on every call.
DeviceLimits current_device_limits() {
  // H100 values: used where no device answers (e.g. `halo info` without a GPU)
  return per_device(DeviceLimits{}, [](int dev) {
    DeviceLimits lim;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess)
      lim.shared_per_block_optin = std::size_t(v);
    if (cudaDeviceGetAttribute(&v, cudaDevAttrTotalConstantMemory, dev) == cudaSuccess)
      lim.constant_bytes = std::size_t(v);
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, dev) == cudaSuccess)
      lim.max_threads_per_block = v;
    return lim;
  });
}

cudaMemPool_t workspace_pool() {
  return per_device(cudaMemPool_t(nullptr), [](int dev) {
    cudaMemPool_t pool = nullptr;
    int supported = 0;
    std::size_t free_b = 0, total_b = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess ||
        !supported || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
      return pool;
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) return cudaMemPool_t(nullptr);
    std::uint64_t keep = std::min<std::uint64_t>(std::uint64_t(1) << 30, total_b / 8);
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
      cudaMemPoolDestroy(pool);
      pool = nullptr;
    }
    return pool;
  });
}

}  // namespace cuda

namespace detail {

int current_cuda_device() {
  int dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess) return dev;
  (void)cudaGetLastError();
  return -1;
}

void register_cuda_strategies(StrategyList& out) {
  out.push_back(cuda::make_basic_strategy());
  out.push_back(cuda::make_constant_strategy());
  out.push_back(cuda::make_tiled_input_strategy());
  out.push_back(cuda::make_tiled_output_strategy());
  out.push_back(cuda::make_tiled_output_twostep_strategy());
  out.push_back(cuda::make_cached_strategy());
  out.push_back(cuda::fast::make_strategy());
  out.push_back(cuda::make_separable_strategy());
  out.push_back(cuda::make_lowrank_strategy());
  out.push_back(cuda::make_fft_strategy());
  out.push_back(cuda::make_lines_strategy());
  out.push_back(cuda::make_planes_strategy());
}

void run_cuda_on_host_buffers(const Strategy& s, const Problem& p, const void* in, void* out,
                              void* stream) {
  run_cuda_on_host_buffers(*plan_or_throw(s, p), in, out, stream);
}

void run_cuda_on_host_buffers(const StrategyPlan& plan, const void* in, void* out, void* stream) {
  const Strategy& s = plan.strategy();
  const Problem& p = plan.problem();
  const std::size_t bytes = std::size_t(p.elements()) * dtype_size(p.dtype());
  const std::size_t out_bytes = std::size_t(p.elements()) * dtype_size(p.out_dtype());
  const auto st = static_cast<cudaStream_t>(stream);
  const std::string what = p.describe() + " (strategy " + s.name() + ")";
  cuda::DeviceBuffer din(bytes, "the input of " + what, st);
  cuda::DeviceBuffer dout(out_bytes, "the output of " + what, st);
  HALO_CUDA_CHECK(cudaMemcpyAsync(din.p, in, bytes, cudaMemcpyHostToDevice, st),
                  "copying the input (" + std::to_string(bytes) + " bytes) of " + what +
                      " to the device");
  run_cuda_strategy(plan, din.p, dout.p, stream);
  HALO_CUDA_CHECK(cudaMemcpyAsync(out, dout.p, out_bytes, cudaMemcpyDeviceToHost, st),
                  "copying the output (" + std::to_string(out_bytes) + " bytes) of " + what +
                      " to the host");
  HALO_CUDA_CHECK(cudaStreamSynchronize(st), "running " + what);
}

namespace {
// CUDA's version number 12040 as "12.4".
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Why no GPU is usable, given what cudaGetDeviceCount returned (e) and found, in plain words:
// the runtime's own text for a missing driver ("CUDA driver version is insufficient for CUDA
// runtime version") reads like a broken install on a machine that simply has no GPU. The driver's
// version (0: no driver installed) tells the cases apart; the CUDA error's name comes last.
std::string no_gpu_reason(cudaError_t e) {
  int driver = 0, runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
  (void)cudaGetLastError();
  std::string what;
  if (driver == 0)
    what = "no NVIDIA GPU driver found: no GPU usable";
  else if (e == cudaErrorInsufficientDriver)
    what = "the NVIDIA driver (CUDA " + cuda_version(driver) + ") is older than this build's " +
           "CUDA runtime (" + cuda_version(runtime) + "): update the driver";
  else if (e == cudaErrorNoDevice || e == cudaSuccess)
    what = "no CUDA-capable GPU found (NVIDIA driver for CUDA " + cuda_version(driver) +
           " installed)";
  else
    what = std::string("no GPU usable: ") + cudaGetErrorString(e);
  return e == cudaSuccess ? what : what + " (" + cudaGetErrorName(e) + ")";
}
}  // namespace

std::vector<DeviceInfo> query_cuda_devices(std::string* why_none) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    if (why_none) *why_none = no_gpu_reason(e);
    return {};
  }
  std::vector<DeviceInfo> devs;
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    const cudaError_t pe = cudaGetDeviceProperties(&prop, i);
    if (pe != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.sm_major = prop.major;
    d.sm_minor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.global_memory = prop.totalGlobalMem;
    d.l2_bytes = std::size_t(prop.l2CacheSize);
    d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
    devs.push_back(d);
  }
  if (devs.empty() && why_none) *why_none = "cudaGetDeviceProperties failed on every device";
  return devs;
}

double device_memory_free(std::string* what, double enough) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  // What halo's workspace pool keeps but no run uses serves the next run's device memory too;
  // where that alone is enough (a repeated run's workspace), the device is not asked.
  std::uint64_t reserved = 0, used = 0, idle = 0;
  const cudaMemPool_t pool = e == cudaSuccess ? cuda::workspace_pool() : nullptr;
  if (pool &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
      reserved > used)
    idle = reserved - used;
  (void)cudaGetLastError();
  if (e == cudaSuccess && double(idle) >= enough) {
    if (what) *what = "kept unused by halo's pool on GPU " + std::to_string(dev);
    return double(idle);
  }
  std::size_t free_b = 0, total_b = 0;
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (what) *what = std::string("the GPU's free memory is unknown: ") + cudaGetErrorString(e);
    return 0;
  }
  free_b += std::size_t(idle);
  if (what)
    *what = "free on GPU " + std::to_string(dev) + " (with what halo's pool keeps), of " +
            cuda::gib(total_b);
  return double(free_b);
}

std::string cuda_archs() {
#ifdef HALO_CUDA_ARCHS
  return HALO_CUDA_ARCHS;
#else
  return "";
#endif
}

}  // namespace detail
}  // namespace halo
