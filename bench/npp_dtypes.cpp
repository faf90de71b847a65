// Times NVIDIA NPP's general 2-D filter on 8- and 16-bit images: nppiFilterBorder32f_8u_C1R_Ctx
// and nppiFilterBorder32f_16u_C1R_Ctx (float32 weights, the sum rounded to the integer type), a
// random (2R+1)^2 kernel normalised to sum 1, NPP_BORDER_REPLICATE (SciPy's "nearest"), on an
// H x W image of random values: 3 warm-up runs, then the median and minimum of `reps` runs timed
// with CUDA events on NPP's stream. For bench/dtypes.py, beside halo and CuPy on the same sizes.
// Build (where NPP is installed): nvcc -O2 -o npp_dtypes bench/npp_dtypes.cpp -lnppif -lnppc
// Usage: npp_dtypes 8u|16u H W R [reps]
// Prints: npp DTYPE H W R median_ms min_ms
#include <cuda_runtime.h>
#include <nppi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK(x)                                                          \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));        \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

namespace {

int integer(const char* text, const char* what, long lo) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > (1L << 30)) {
    std::fprintf(stderr, "npp_dtypes: %s must be an integer >= %ld, got '%s'\n", what, lo, text);
    std::exit(2);
  }
  return int(v);
}

NppStatus filter(const Npp8u* s, int ss, NppiSize size, Npp8u* d, int ds, const Npp32f* k,
                 NppiSize ks, NppiPoint anchor, NppStreamContext ctx) {
  return nppiFilterBorder32f_8u_C1R_Ctx(s, ss, size, {0, 0}, d, ds, size, k, ks, anchor,
                                        NPP_BORDER_REPLICATE, ctx);
}
NppStatus filter(const Npp16u* s, int ss, NppiSize size, Npp16u* d, int ds, const Npp32f* k,
                 NppiSize ks, NppiPoint anchor, NppStreamContext ctx) {
  return nppiFilterBorder32f_16u_C1R_Ctx(s, ss, size, {0, 0}, d, ds, size, k, ks, anchor,
                                         NPP_BORDER_REPLICATE, ctx);
}

template <class T>
int run(int H, int W, int R, int reps, const char* name) {
  std::mt19937 g(std::random_device{}());
  std::uniform_int_distribution<int> d(0, sizeof(T) == 1 ? 255 : 65535);
  std::vector<T> img(std::size_t(H) * W);
  for (auto& v : img) v = T(d(g));
  const int K = 2 * R + 1;
  std::vector<float> ker(std::size_t(K) * K);
  std::uniform_real_distribution<float> u(0.1f, 1.0f);
  float sum = 0;
  for (auto& v : ker) sum += (v = u(g));
  for (auto& v : ker) v /= sum;
  T *src = nullptr, *dst = nullptr;
  float* k = nullptr;
  const std::size_t bytes = img.size() * sizeof(T);
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMalloc(&k, ker.size() * sizeof(float)));
  CHECK(cudaMemcpy(src, img.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(k, ker.data(), ker.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  NppStreamContext ctx{};  // filled by hand: NPP 13 has no nppGetStreamContext
  ctx.hStream = stream;
  ctx.nCudaDeviceId = dev;
  ctx.nMultiProcessorCount = prop.multiProcessorCount;
  ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
  ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
  ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  ctx.nStreamFlags = 0;
  const NppiSize size{W, H}, ks{K, K};
  const NppiPoint anchor{R, R};
  const int step = int(W * sizeof(T));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < reps + 3; ++i) {
    CHECK(cudaEventRecord(a, stream));
    const NppStatus st = filter(src, step, size, dst, step, k, ks, anchor, ctx);
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    if (st != NPP_SUCCESS) {
      std::fprintf(stderr, "npp_dtypes: NPP status %d\n", int(st));
      return 1;
    }
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    if (i >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("npp %s %d %d %d %.4f %.4f\n", name, H, W, R, ms[ms.size() / 2], ms[0]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    std::fprintf(stderr, "usage: npp_dtypes 8u|16u H W R [reps]\n");
    return 2;
  }
  const std::string t = argv[1];
  const int H = integer(argv[2], "H", 1), W = integer(argv[3], "W", 1);
  const int R = integer(argv[4], "R", 0), reps = argc > 5 ? integer(argv[5], "reps", 1) : 10;
  if (t == "8u") return run<Npp8u>(H, W, R, reps, "8u");
  if (t == "16u") return run<Npp16u>(H, W, R, reps, "16u");
  std::fprintf(stderr, "npp_dtypes: dtype must be 8u or 16u, got '%s'\n", t.c_str());
  return 2;
}
