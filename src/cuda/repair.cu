// The device half of SciPy's non-finite answers (core/nonfinite.hpp): every CUDA run is one
// strategy run and one repair launch on the same stream. A strategy that notes non-finite outputs
// (NonFinite::noted) sets its run's word in a ring of words per device to the run's mark; the
// repair kernel's blocks read that word and leave at once unless it holds the mark, so a run on
// finite data pays one small launch. Marks count up, so a word is never cleared: a word set by
// an earlier run holds another mark.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>

#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/nonfinite.hpp"
#include "cuda/check.cuh"
#include "cuda/device_buffer.cuh"
#include "halo/strategy.hpp"

namespace halo::detail {
namespace {

using i64 = std::int64_t;

// Words per device: runs in flight on different streams at once use different words unless
// more than this many are queued.
constexpr unsigned kWords = 4096;

// The current device's ring of words, allocated and cleared on its first use.
unsigned int* device_words() {
  static std::mutex m;
  static std::map<int, unsigned int*> words;
  int dev = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  std::lock_guard<std::mutex> lock(m);
  unsigned int*& w = words[dev];
  if (!w) {
    unsigned int* p = nullptr;
    HALO_CUDA_CHECK(cudaMalloc(&p, kWords * sizeof(unsigned int)),
                    "allocating the words that note non-finite outputs");
    HALO_CUDA_CHECK(cudaMemset(p, 0, kWords * sizeof(unsigned int)),
                    "clearing the words that note non-finite outputs");
    HALO_CUDA_CHECK(cudaDeviceSynchronize(), "clearing the words that note non-finite outputs");
    w = p;
  }
  return w;
}

std::atomic<unsigned int> next_mark{1};

// Taps passed by value up to this many (a 22x22 filter); beyond, through device memory.
constexpr int kInlineTaps = 512;
struct InlineTaps {
  double w[kInlineTaps];
  std::uint8_t code[kInlineTaps];
};

struct RepairArgs {
  i64 total = 0;  // outputs, the batch's items together
  i64 item = 0;   // outputs of one item
  RepairGeometry g;
  Dims3 k, a;
  const unsigned int* flag = nullptr;  // null: look at every output
  unsigned int mark = 0;
};

template <class T>
__device__ void repair_outputs(const T* in, T* out, const RepairArgs& r, const double* w,
                               const std::uint8_t* code) {
  if (r.flag && *r.flag != r.mark) return;
  const i64 plane = r.g.n.y * r.g.n.x;
  for (i64 i = i64(blockIdx.x) * blockDim.x + threadIdx.x; i < r.total;
       i += i64(gridDim.x) * blockDim.x) {
    const T v = out[i];
    if (v - v == T(0)) continue;
    const i64 b = i / r.item, e = i % r.item;
    const i64 z = e / plane, y = e % plane / r.g.n.x, x = e % r.g.n.x;
    out[i] = static_cast<T>(repair_sum(in + b * r.item, r.g, r.k, r.a, w, code, z, y, x));
  }
}

template <class T>
__global__ void repair_inline(const T* in, T* out, RepairArgs r,
                              const __grid_constant__ InlineTaps taps) {
  repair_outputs(in, out, r, taps.w, taps.code);
}

template <class T>
__global__ void repair_global(const T* in, T* out, RepairArgs r, const double* w,
                              const std::uint8_t* code) {
  repair_outputs(in, out, r, w, code);
}

// Launches the repair of p's outputs on `stream`: where `flag` is set, only if it holds `mark`.
void launch_repair(const Problem& p, const void* in, void* out, const unsigned int* flag,
                   unsigned int mark, cudaStream_t stream) {
  const RepairTaps t = repair_taps(p);
  RepairArgs r;
  r.total = p.elements();
  r.item = p.elements_per_item();
  r.g = repair_geometry(p);
  r.k = t.k;
  r.a = t.a;
  r.flag = flag;
  r.mark = mark;
  int dev = 0, sms = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  HALO_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                  "querying the device's multiprocessors");
  constexpr int kThreads = 256;
  const i64 want = (r.total + kThreads - 1) / kThreads;
  const unsigned blocks = unsigned(std::max<i64>(1, std::min<i64>(want, i64(sms) * 4)));
  const std::size_t n = t.w.size();
  dispatch_buffers(p.dtype(), in, out, [&](const auto* i, auto* o) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(i)>>;
    if (n <= std::size_t(kInlineTaps)) {
      InlineTaps taps{};
      std::copy(t.w.begin(), t.w.end(), taps.w);
      std::copy(t.code.begin(), t.code.end(), taps.code);
      repair_inline<T><<<blocks, kThreads, 0, stream>>>(i, o, r, taps);
      HALO_CUDA_CHECK(cudaGetLastError(), "launching the non-finite repair of " + p.describe());
      return;
    }
    cuda::DeviceBuffer dw(n * sizeof(double), "the non-finite repair's weights", stream);
    cuda::DeviceBuffer dc(n, "the non-finite repair's tap codes", stream);
    HALO_CUDA_CHECK(cudaMemcpyAsync(dw.p, t.w.data(), n * sizeof(double),
                                    cudaMemcpyHostToDevice, stream),
                    "copying the non-finite repair's weights");
    HALO_CUDA_CHECK(cudaMemcpyAsync(dc.p, t.code.data(), n, cudaMemcpyHostToDevice, stream),
                    "copying the non-finite repair's tap codes");
    repair_global<T><<<blocks, kThreads, 0, stream>>>(i, o, r, static_cast<const double*>(dw.p),
                                                      static_cast<const std::uint8_t*>(dc.p));
    HALO_CUDA_CHECK(cudaGetLastError(), "launching the non-finite repair of " + p.describe());
  });
}

}  // namespace

void run_cuda_strategy(const StrategyPlan& plan, const void* in, void* out, void* stream) {
  const Problem& p = plan.problem();
  const NonFinite how = plan.nonfinite();
  Buffers b{in, out};
  if (how == NonFinite::noted) {
    b.nonfinite_mark = next_mark.fetch_add(1, std::memory_order_relaxed);
    if (b.nonfinite_mark == 0) b.nonfinite_mark = next_mark.fetch_add(1);  // 0: the words' start
    b.nonfinite = device_words() + b.nonfinite_mark % kWords;
  }
  plan.run(b, stream);
  if (how != NonFinite::exact)
    launch_repair(p, in, out, b.nonfinite, b.nonfinite_mark, static_cast<cudaStream_t>(stream));
}

}  // namespace halo::detail
