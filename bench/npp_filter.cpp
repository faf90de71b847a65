// Times NVIDIA NPP's general 2-D filter, nppiFilterBorder_32f_C1R_Ctx, on an H x W float32 image
// with a (2r+1)^2 random kernel: warm-up, then the median of `reps` runs timed with CUDA events.
// Build (where NPP is installed): nvcc -O2 -o npp_filter bench/npp_filter.cpp -lnppif -lnppc
// Usage: npp_filter H W R [reps]      prints: npp H W R median_ms min_ms
// NPP's border modes do not include zero ghost cells for this function on every version, so the
// replicate border is used: the same arithmetic and traffic, different values at the edge.
#include <cuda_runtime.h>
#include <nppi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                 \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: npp_filter H W R [reps]\n");
    return 2;
  }
  const int H = std::atoi(argv[1]), W = std::atoi(argv[2]), R = std::atoi(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 10;
  const int K = 2 * R + 1;
  std::mt19937 g(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> img(std::size_t(H) * W), ker(std::size_t(K) * K);
  for (auto& v : img) v = d(g);
  for (auto& v : ker) v = d(g);
  float *src, *dst, *k;
  const std::size_t bytes = img.size() * sizeof(float);
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMalloc(&k, ker.size() * sizeof(float)));
  CHECK(cudaMemcpy(src, img.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(k, ker.data(), ker.size() * sizeof(float), cudaMemcpyHostToDevice));

  cudaDeviceProp prop{};
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaGetDeviceProperties(&prop, dev));
  NppStreamContext ctx{};
  ctx.hStream = 0;
  ctx.nCudaDeviceId = dev;
  ctx.nMultiProcessorCount = prop.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  ctx.nStreamFlags = 0;

  const int step = W * int(sizeof(float));
  const NppiSize size{W, H}, ksize{K, K};
  const NppiPoint offset{0, 0}, anchor{R, R};
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < reps + 3; ++i) {
    CHECK(cudaEventRecord(a));
    const NppStatus st = nppiFilterBorder_32f_C1R_Ctx(src, step, size, offset, dst, step, size, k,
                                                      ksize, anchor, NPP_BORDER_REPLICATE, ctx);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    if (st != NPP_SUCCESS) {
      std::fprintf(stderr, "nppiFilterBorder_32f_C1R_Ctx failed: status %d\n", int(st));
      return 1;
    }
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    if (i >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("npp %d %d %d %.4f %.4f\n", H, W, R, ms[ms.size() / 2], ms[0]);
  return 0;
}
