// Times NVIDIA NPP's 2-D filters on an H x W float32 image of random values in [-1, 1]: 3 warm-up
// runs, then the median of `reps` runs timed with CUDA events on the stream NPP runs on.
// Build (where NPP is installed): nvcc -O2 -o npp_filter bench/npp_filter.cpp -lnppif -lnppc
// Usage:
//   npp_filter H W R [reps]           as `dense` (the original command line)
//   npp_filter dense H W R [reps]     nppiFilterBorder_32f_C1R_Ctx, a random (2R+1)^2 kernel
//   npp_filter sep H W K KIND [reps]  nppiFilterRowBorder_32f_C1R_Ctx into a temporary, then
//                                     nppiFilterColumnBorder_32f_C1R_Ctx from it, with the K-tap
//                                     1-D kernel KIND on both axes: gauss:SIGMA (exp(-x^2/(2
//                                     SIGMA^2)) for x in -K/2..K/2, normalised to sum 1) or box
//                                     (1/K); both passes are timed together as one measurement
//   npp_filter box H W K [reps]       nppiFilterBoxBorder_32f_C1R_Ctx, the mean over a K x K mask
// Prints one line; its second-to-last field is always the median ms and the last the minimum:
//   npp H W R median_ms min_ms              (the original command line)
//   npp MODE H W K median_ms min_ms         (dense: K = 2R+1)
// Border: NPP_BORDER_REPLICATE throughout (SciPy's "nearest"). NPP's border modes do not include
// zero ghost cells for these functions on every version (the row/column filters document
// replicate as the only one), so replicate is used whatever the caller's mode: the same
// arithmetic and traffic, different values at the edge.
// Kernel order: NPP's filters convolve, their kernels "are expected to be stored in reverse
// order". The weights are stored reversed here so the result is the correlation SciPy and halo
// compute; the Gaussian and the box are symmetric, so this only matters in principle.
#include <cuda_runtime.h>
#include <nppi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                 \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: npp_filter H W R [reps]\n"
               "       npp_filter dense H W R [reps]\n"
               "       npp_filter sep H W K gauss:SIGMA|box [reps]\n"
               "       npp_filter box H W K [reps]\n");
  std::exit(2);
}

int integer(const char* text, const char* what, long lo = 1) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > (1L << 30)) {
    std::fprintf(stderr, "npp_filter: %s must be an integer >= %ld, got '%s'\n", what, lo, text);
    std::exit(2);
  }
  return int(v);
}

// The K weights of a 1-D kernel, in correlation order (weight of offset -K/2 first).
std::vector<float> kernel_1d(int K, const std::string& kind) {
  std::vector<double> w(K);
  if (kind == "box") {
    std::fill(w.begin(), w.end(), 1.0 / K);
  } else if (kind.rfind("gauss:", 0) == 0) {
    char* end = nullptr;
    const char* s = kind.c_str() + 6;
    const double sigma = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(sigma > 0)) {
      std::fprintf(stderr, "npp_filter: bad sigma in '%s'\n", kind.c_str());
      std::exit(2);
    }
    // As SciPy's _gaussian_kernel1d: exp(-0.5 x^2 / sigma^2), normalised to sum 1.
    const int r = K / 2;
    double sum = 0;
    for (int i = 0; i < K; ++i) {
      const double x = double(i - r) / sigma;
      w[i] = std::exp(-0.5 * x * x);
      sum += w[i];
    }
    for (auto& v : w) v /= sum;
  } else {
    std::fprintf(stderr, "npp_filter: unknown kernel kind '%s' (gauss:SIGMA or box)\n",
                 kind.c_str());
    std::exit(2);
  }
  return std::vector<float>(w.begin(), w.end());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage();
  // The mode, and where its arguments start; a leading number is the original `H W R [reps]`.
  std::string mode = argv[1];
  const bool legacy = mode != "dense" && mode != "sep" && mode != "box";
  if (legacy) mode = "dense";
  const int a0 = legacy ? 1 : 2;
  const int needed = mode == "sep" ? 4 : 3;  // H W R | H W K KIND | H W K
  if (argc < a0 + needed || argc > a0 + needed + 1) usage();
  const int H = integer(argv[a0], "H"), W = integer(argv[a0 + 1], "W");
  const int n = mode == "dense" ? integer(argv[a0 + 2], "R", 0) : integer(argv[a0 + 2], "K");
  const std::string kind = mode == "sep" ? argv[a0 + 3] : "";
  const int reps = argc > a0 + needed ? integer(argv[a0 + needed], "reps") : 10;
  if (mode == "dense" && n > 4096) {
    std::fprintf(stderr, "npp_filter: R too large\n");
    return 2;
  }
  const int R = mode == "dense" ? n : n / 2;  // the anchor: the centre tap
  const int K = mode == "dense" ? 2 * n + 1 : n;

  std::mt19937 g(std::random_device{}());
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> img(std::size_t(H) * W);
  for (auto& v : img) v = d(g);
  // The kernel in NPP's (reversed, convolution) order.
  std::vector<float> ker;
  if (mode == "dense") {
    ker.resize(std::size_t(K) * K);
    for (auto& v : ker) v = d(g);  // random: its order does not matter
  } else if (mode == "sep") {
    ker = kernel_1d(K, kind);
    std::reverse(ker.begin(), ker.end());
  }

  float *src = nullptr, *dst = nullptr, *tmp = nullptr, *k = nullptr;
  const std::size_t bytes = img.size() * sizeof(float);
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  if (mode == "sep") CHECK(cudaMalloc(&tmp, bytes));
  CHECK(cudaMemcpy(src, img.data(), bytes, cudaMemcpyHostToDevice));
  if (!ker.empty()) {
    // NPP reads the kernel from device memory.
    CHECK(cudaMalloc(&k, ker.size() * sizeof(float)));
    CHECK(cudaMemcpy(k, ker.data(), ker.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  std::vector<float>().swap(img);

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
  // One timed run: the function(s) of the mode; on failure, which function and its status.
  const char* failed = nullptr;
  auto run = [&]() -> NppStatus {
    NppStatus st = NPP_SUCCESS;
    if (mode == "dense") {
      st = nppiFilterBorder_32f_C1R_Ctx(src, step, size, offset, dst, step, size, k, ksize, anchor,
                                        NPP_BORDER_REPLICATE, ctx);
      failed = "nppiFilterBorder_32f_C1R_Ctx";
    } else if (mode == "sep") {
      st = nppiFilterRowBorder_32f_C1R_Ctx(src, step, size, offset, tmp, step, size, k, K, R,
                                           NPP_BORDER_REPLICATE, ctx);
      failed = "nppiFilterRowBorder_32f_C1R_Ctx";
      if (st < 0) return st;
      const NppStatus st2 = nppiFilterColumnBorder_32f_C1R_Ctx(
          tmp, step, size, offset, dst, step, size, k, K, R, NPP_BORDER_REPLICATE, ctx);
      if (st2 != NPP_SUCCESS) {
        st = st2;
        failed = "nppiFilterColumnBorder_32f_C1R_Ctx";
      }
    } else {
      st = nppiFilterBoxBorder_32f_C1R_Ctx(src, step, size, offset, dst, step, size, ksize, anchor,
                                           NPP_BORDER_REPLICATE, ctx);
      failed = "nppiFilterBoxBorder_32f_C1R_Ctx";
    }
    return st;
  };

  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  bool warned = false;
  for (int i = 0; i < reps + 3; ++i) {
    CHECK(cudaEventRecord(a, ctx.hStream));
    const NppStatus st = run();
    CHECK(cudaEventRecord(b, ctx.hStream));
    CHECK(cudaEventSynchronize(b));
    // Negative statuses are errors, positive ones warnings (the result is still computed).
    if (st < 0) {
      std::fprintf(stderr, "%s failed: status %d\n", failed, int(st));
      return 1;
    }
    if (st > 0 && !warned) {
      std::fprintf(stderr, "%s: warning status %d\n", failed, int(st));
      warned = true;
    }
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    if (i >= 3) ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  if (legacy)
    std::printf("npp %d %d %d %.4f %.4f\n", H, W, R, ms[ms.size() / 2], ms[0]);
  else
    std::printf("npp %s %d %d %d %.4f %.4f\n", mode.c_str(), H, W, K, ms[ms.size() / 2], ms[0]);
  cudaFree(src);
  cudaFree(dst);
  if (tmp) cudaFree(tmp);
  if (k) cudaFree(k);
  return 0;
}
