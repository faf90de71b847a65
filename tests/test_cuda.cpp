// GPU tests of the CUDA backend. Each starts with SKIP_WITHOUT_GPU(), so without a device (CI)
// they report as skipped with the reason. What they cover beyond the generic sweep
// (test_sweep.cpp, which runs every registered strategy, these included, against the reference):
//   - device pointers (cudaMalloc'd, no copies) and a caller's stream through Options.stream;
//   - Backend::cuda and auto on host and device arrays;
//   - out of memory -> halo::Error naming the sizes, and the next run still works;
//   - grids beyond the hardware limits (gridDim.y/z <= 65535, folded by grid-stride loops);
//   - CudaSanitizer.*: every strategy x rank x dtype on small odd/even/edge sizes, once with the
//     normal grid and once with the grid limited to 3x2x2 so every block loops over many tiles;
//     scripts/gpu-check runs these under compute-sanitizer (memcheck, racecheck, synccheck);
//   - Tuned/FastVariant.*: `fast` under each tuning variant of support.hpp (Options::tuning): the
//     sanitizer's cases in both grids, direct sums (gpu-check runs some variants' SanitizerCases
//     under compute-sanitizer by name); CudaFast.RingsWrapAroundOnLongStreams runs them all too;
//   - a 2D 50000 x 50000 float32 array (2.5e9 elements, more than 2^31) with a random 5x5 filter
//     (and a 9x9 one for `fast`'s Winograd columns, a rank-1 17x17 one for `separable`).
//
// Compiled as C++ and linked with the CUDA runtime when halo is built with CUDA; without the CUDA
// headers (a CPU-only build) it compiles to one skipped test.
#include <gtest/gtest.h>

#ifdef HALO_TEST_CUDA  // set by tests/CMakeLists.txt when the CUDA backend is built
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/detail.hpp"
#include "cuda/border/border.hpp"
#include "cuda/seeds/launch.hpp"
#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

std::vector<const Strategy*> cuda_strategies() {
  std::vector<const Strategy*> v;
  for (const Strategy* s : strategies())
    if (s->backend() == Backend::cuda) v.push_back(s);
  return v;
}

// Device pointers and a caller's non-blocking stream: the input is copied on that stream, the
// strategy runs on it, the result is copied back on it; only the stream is synchronised. A
// strategy that used another stream would race with the copies. `offset`: the input starts that
// many elements into its allocation (a base address not 16-byte aligned).
template <class T>
std::string run_on_device(const std::string& strategy, int rank, Extents ext, std::int64_t batch,
                          const Filter& f, Op op, std::int64_t offset = 0) {
  const Problem p(rank, ext, batch, f, dtype_of<T>(), op);
  const std::size_t n = static_cast<std::size_t>(p.elements()), bytes = n * sizeof(T);
  const std::vector<T> in = random_vector<T>(std::int64_t(n));
  std::vector<T> out(n);
  poison(out);
  void *base = nullptr, *dout = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaMalloc(&base, bytes + std::size_t(offset) * sizeof(T)) != cudaSuccess ||
      cudaMalloc(&dout, bytes) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
    return "setting up device buffers failed";
  void* din = static_cast<T*>(base) + offset;
  std::string err;
  cudaMemcpyAsync(din, in.data(), bytes, cudaMemcpyHostToDevice, stream);
  cudaMemsetAsync(dout, kPoisonByte, bytes, stream);  // finite poison (support.hpp)
  try {
    Options opt;
    opt.op = op;
    opt.strategy = strategy;
    opt.stream = stream;
    ConstArrayView iv(din, p.dtype(), rank, ext, batch, MemorySpace::device);
    ArrayView ov;
    ov.data = dout;
    ov.dtype = p.dtype();
    ov.rank = rank;
    ov.extents = ext;
    ov.batch = batch;
    ov.space = MemorySpace::device;
    const RunInfo info = apply(iv, ov, f, opt);
    if (info.strategy != strategy) err = "ran " + info.strategy;
  } catch (const std::exception& e) {
    err = std::string("threw: ") + e.what();
  }
  cudaMemcpyAsync(out.data(), dout, bytes, cudaMemcpyDeviceToHost, stream);
  const cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess && err.empty()) err = std::string("stream: ") + cudaGetErrorString(e);
  cudaStreamDestroy(stream);
  cudaFree(base);
  cudaFree(dout);
  if (!err.empty()) return p.describe() + ": " + err;
  return compare(strategy, p, in, out);
}

TEST(Cuda, DevicesAreListed) {
  SKIP_WITHOUT_GPU();
  std::string why;
  const auto devs = cuda_devices(&why);
  ASSERT_FALSE(devs.empty()) << why;
  EXPECT_FALSE(devs[0].name.empty());
  EXPECT_GE(devs[0].sm_major, 7);
  EXPECT_GT(devs[0].multiprocessors, 0);
  EXPECT_GT(devs[0].global_memory, 0u);
  EXPECT_GT(devs[0].shared_per_block_optin, 48u * 1024u);
  EXPECT_FALSE(build_info().cuda_archs.empty());
  std::vector<std::string> names;
  for (const Strategy* s : cuda_strategies()) names.push_back(s->name());
  for (const char* seed : {"basic", "constant", "tiled_input", "tiled_output",
                           "tiled_output_twostep", "cached", "fast"})
    EXPECT_NE(std::find(names.begin(), names.end(), seed), names.end()) << seed << " not registered";
}

TEST(Cuda, EveryStrategyTakesDevicePointersAndAStream) {
  SKIP_WITHOUT_GPU();
  for (const Strategy* s : cuda_strategies()) {
    SCOPED_TRACE(s->name());
    // 8/16-bit integers only: test_native_dtypes.cpp.
    if (s->name() == "lines" || s->name() == "planes") continue;
    if (s->name() == "lowrank") {
      // Sums of separable terms: 2-D filters (an SVD of random weights), a 3-D Laplacian.
      EXPECT_EQ(run_on_device<float>("lowrank", 2, {37, 45, 1}, 1, random_filter({3, 3}),
                                     Op::correlate),
                "");
      EXPECT_EQ(run_on_device<double>("lowrank", 2, {64, 33, 1}, 2, random_filter({4, 5}),
                                      Op::convolve),
                "");
      EXPECT_EQ(run_on_device<float>("lowrank", 3, {9, 10, 11}, 1,
                                     make_named_filter("laplacian", 3), Op::convolve),
                "");
      continue;
    }
    // `separable` runs rank-1 filters only: outer products of random factors for it.
    const auto filter = [&](const std::vector<std::int64_t>& shape) {
      return s->name() == "separable" ? random_outer_product(shape) : random_filter(shape);
    };
    EXPECT_EQ(run_on_device<float>(s->name(), 1, {1000, 1, 1}, 2, filter({7}), Op::correlate), "");
    EXPECT_EQ(run_on_device<double>(s->name(), 1, {333, 1, 1}, 1, filter({4}), Op::convolve), "");
    if (s->name() == "tiled_output_twostep") continue;  // 1D only
    EXPECT_EQ(run_on_device<float>(s->name(), 2, {37, 45, 1}, 1, filter({3, 3}), Op::correlate), "");
    EXPECT_EQ(run_on_device<double>(s->name(), 2, {64, 33, 1}, 2, filter({4, 5}), Op::convolve), "");
    EXPECT_EQ(run_on_device<float>(s->name(), 3, {9, 10, 11}, 1, filter({3, 2, 3}), Op::convolve), "");
    EXPECT_EQ(run_on_device<double>(s->name(), 3, {17, 9, 20}, 1, filter({3, 3, 3}), Op::correlate), "");
  }
}

// `separable`'s one-pass volumes where the input's base address is not 16-byte aligned: no
// tensor map can be made, so the register-prefetch kernel runs the radii that the plan gave to
// the tensor-map tiles (4, and 5 to 8 padded to 8), with the results of the aligned input.
TEST(Cuda, SeparableVolumesOnAnOffsetInput) {
  SKIP_WITHOUT_GPU();
  for (const std::vector<std::int64_t>& k :
       {std::vector<std::int64_t>{9, 9, 9}, {17, 13, 17}, {11, 3, 5}})
    for (std::int64_t offset : {0, 1, 3}) {
      const Filter f = random_outer_product(k);
      EXPECT_EQ(find_strategy("separable")
                    ->plan(Problem(3, {40, 30, 68}, 1, f, DType::f32))
                    .find("z fused in one pass") == std::string::npos,
                false);
      EXPECT_EQ(run_on_device<float>("separable", 3, {40, 30, 68}, 1, f, Op::correlate, offset),
                "")
          << "offset " << offset;
    }
}

TEST(Cuda, AutoOnDeviceArraysPicksACudaStrategy) {
  SKIP_WITHOUT_GPU();
  const Problem p(2, {100, 100, 1}, 1, random_filter({5, 5}), DType::f32);
  const RunInfo r = choose(p, Options{}, MemorySpace::device);
  EXPECT_EQ(r.backend, Backend::cuda);
  EXPECT_EQ(run_on_device<float>(r.strategy, 2, {100, 100, 1}, 1, random_filter({5, 5}),
                                 Op::correlate),
            "");
  // The CPU strategies cannot read device memory: an error, not a crash.
  Options cpu;
  cpu.strategy = "cpu";
  EXPECT_THROW(choose(p, cpu, MemorySpace::device), Error);
}

// apply() remembers its last choices per thread (and `separable` its plans) under everything
// they depend on: a repeated run takes the same strategy, and a run that differs in the options,
// the filter's weights or the modes is chosen and planned again, with the right result.
TEST(Cuda, RepeatedRunsChooseAgainOnlyWhatDiffers) {
  SKIP_WITHOUT_GPU();
  const Extents ext{61, 67, 1};
  const std::int64_t n = 61 * 67;
  const std::vector<float> in = random_vector<float>(n);
  std::vector<float> out(std::size_t(n), 0.f);
  void *din = nullptr, *dout = nullptr;
  CUDA_OK(cudaMalloc(&din, n * sizeof(float)));
  CUDA_OK(cudaMalloc(&dout, n * sizeof(float)));
  CUDA_OK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const ConstArrayView iv(din, DType::f32, 2, ext, 1, MemorySpace::device);
  ArrayView ov;
  ov.data = dout;
  ov.rank = 2;
  ov.extents = ext;
  ov.space = MemorySpace::device;
  // Runs f under opt and checks the result, and the strategy where `want` names one.
  const auto run = [&](const Filter& f, Options opt, const std::string& want) {
    CUDA_OK(cudaMemset(dout, kPoisonByte, n * sizeof(float)));
    const RunInfo info = apply(iv, ov, f, opt);
    CUDA_OK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (!want.empty()) EXPECT_EQ(info.strategy, want);
    if (opt.direct_sums) EXPECT_NE(info.strategy, "separable");
    const Problem p(2, ext, 1, f, DType::f32, opt.op, opt.edges);
    EXPECT_EQ(compare(info.strategy, p, in, out), "");
  };
  const Filter g = make_named_filter("gaussian:sigma=2", 2);
  Options reflect;
  reflect.edges = Edges::all(Boundary::reflect);
  for (int i = 0; i < 3; ++i) run(g, reflect, "separable");
  Options forced = reflect;
  forced.strategy = "fast";
  run(g, forced, "fast");
  run(g, reflect, "separable");
  // The same shape, other weights: a dense filter is not separable.
  const Filter dense = random_filter({17, 17});
  run(dense, reflect, "");
  run(dense, reflect, "");
  // The Gaussian scaled: separable again, the new weights used.
  std::vector<double> w2 = g.weights();
  for (double& v : w2) v *= -3.0;
  const Filter g2(w2.data(), {g.extents()[0], g.extents()[1]});
  run(g2, reflect, "separable");
  // Other modes and a cval, and direct sums: planned again.
  Options wrap = reflect;
  wrap.edges = Edges::all(Boundary::constant, 2.5);
  run(g, wrap, "separable");
  Options direct = reflect;
  direct.direct_sums = true;
  run(g, direct, "");
  run(dense, direct, "");
  CUDA_OK(cudaFree(din));
  CUDA_OK(cudaFree(dout));
}

TEST(Cuda, BackendCudaOnHostArrays) {
  SKIP_WITHOUT_GPU();
  const Filter f = random_filter({5, 5});
  const Problem p(2, {70, 90, 1}, 1, f, DType::f32);
  std::vector<float> in = random_vector<float>(p.elements()), out(in.size());
  poison(out);
  Options opt;
  opt.backend = Backend::cuda;
  const RunInfo r = apply(view(static_cast<const float*>(in.data()), {70, 90}),
                          view(out.data(), {70, 90}), f, opt);
  EXPECT_EQ(r.backend, Backend::cuda);
  EXPECT_EQ(compare(r.strategy, p, in, out), "");
  // auto on host arrays takes the GPU too.
  poison(out);
  const RunInfo a = apply(view(static_cast<const float*>(in.data()), {70, 90}),
                          view(out.data(), {70, 90}), f);
  EXPECT_EQ(a.backend, Backend::cuda) << a.note;
  EXPECT_EQ(compare(a.strategy, p, in, out), "");
}

TEST(Cuda, OutOfMemoryIsAHaloErrorNamingTheSizes) {
  SKIP_WITHOUT_GPU();
  std::size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  // A 1D float32 array twice the size of the device: the first cudaMalloc fails (the host
  // pointers are never touched).
  const std::int64_t n = std::int64_t(total_b / 4) * 2;
  const Problem p(1, {n, 1, 1}, 1, random_filter({3}), DType::f32);
  float dummy_in = 0, dummy_out = 0;
  try {
    detail::run_cuda_on_host_buffers(*find_strategy("basic"), p, &dummy_in, &dummy_out, nullptr);
    ADD_FAILURE() << "no error for " << p.describe();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(n * 4) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find(p.describe()), std::string::npos) << msg;
  }
  // The failure is not left behind for the next launch's check.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(check_strategy<float>("basic", 1, {100, 1, 1}, 1, random_filter({3}), Op::correlate),
            "");
}

TEST(Cuda, GridsBeyondTheHardwareLimitsFold) {
  SKIP_WITHOUT_GPU();
  // Each needs more than 65535 blocks along grid.y or grid.z for every strategy.
  const Case cases[] = {
      {1, {3, 1, 1}, {3}, 70000},           // batch items along grid.z
      {2, {2100000, 1, 1}, {3, 1}, 1},      // rows along grid.y (tiled_input: 70000 tiles)
      {3, {600000, 1, 1}, {3, 1, 1}, 1},    // planes along grid.z (tiled: 75000-100000 tiles)
  };
  for (const Strategy* s : cuda_strategies())
    for (const Case& c : cases) {
      const Filter f = random_filter(c.filter);
      const Problem p(c.rank, c.ext, c.batch, f, DType::f32);
      if (!s->can_implement(p)) continue;
      for (cuda::Kernel k : cuda::kAllKernels)
        if (s->name() == cuda::kernel_name(k)) {
          const cuda::Launch L = cuda::make_launch(k, p);
          EXPECT_TRUE(L.g.tiles_y > 65535 || L.z_work() > 65535) << s->name() << " " << p.describe();
        }
      EXPECT_EQ(check_strategy<float>(s->name(), c.rank, c.ext, c.batch, f, Op::correlate), "")
          << s->name();
    }
}

// Lowers the grid limits for the lifetime of the guard (test support in launch.hpp).
struct GridLimitGuard {
  cuda::GridLimits saved = cuda::grid_limits_for_testing();
  explicit GridLimitGuard(cuda::GridLimits l) { cuda::grid_limits_for_testing() = l; }
  ~GridLimitGuard() { cuda::grid_limits_for_testing() = saved; }
};

// Small odd/even/edge cases: tile edges, a filter larger than the input, even filters, batches.
const std::vector<Case>& small_cases() {
  static const std::vector<Case> c = {
      {1, {1, 1, 1}, {3}, 1},        {1, {17, 1, 1}, {4}, 1},     {1, {1030, 1, 1}, {9}, 1},
      {1, {2100, 1, 1}, {10}, 1},    {1, {5, 1, 1}, {33}, 1},     {1, {100, 1, 1}, {5}, 3},
      {2, {1, 1, 1}, {3, 3}, 1},     {2, {17, 33, 1}, {4, 3}, 1}, {2, {40, 70, 1}, {5, 5}, 1},
      {2, {33, 31, 1}, {2, 2}, 1},   {2, {7, 7, 1}, {9, 9}, 1},   {2, {20, 20, 1}, {3, 3}, 2},
      {3, {5, 9, 17}, {3, 3, 3}, 1}, {3, {9, 10, 20}, {2, 2, 2}, 1}, {3, {4, 5, 6}, {4, 3, 2}, 1},
      {3, {3, 3, 3}, {5, 5, 5}, 1},  {3, {6, 7, 8}, {3, 3, 3}, 2}, {3, {10, 17, 33}, {1, 1, 3}, 1},
      // fast: a filter split into passes of rows (2-D, r >= 12), two output rows per warp (3-D,
      // odd ny so the second row of the last pair is outside).
      {2, {37, 140, 1}, {25, 25}, 1}, {2, {9, 20, 1}, {31, 30}, 2}, {3, {7, 9, 21}, {5, 5, 5}, 1},
      // fast: 1-D r >= 48 through the padded block tile (4096 outputs per tile, a partial last).
      {1, {4100, 1, 1}, {129}, 1}, {1, {6000, 1, 1}, {97}, 2},
      // fast: 2-D r = 4..6 on rows wider than a strip of 8 columns per lane (two boxes a copy).
      {2, {13, 300, 1}, {9, 9}, 1}, {2, {11, 264, 1}, {13, 11}, 2},
  };
  return c;
}

// Every small case on `s`, zero ghosts and a mode; the cases it refuses give a reason. A strategy
// that refuses every case fails: the pass would otherwise check nothing.
template <class T>
void sanitizer_pass(const Strategy& s, const FastTuning& tuning = {}) {
  int i = 0, runs = 0;
  for (const Case& c : small_cases()) {
    // `separable` runs rank-1 filters only: outer products of random factors for it.
    const Filter f =
        s.name() == "separable" ? random_outer_product(c.filter) : random_filter(c.filter);
    const Op op = (i % 2) ? Op::convolve : Op::correlate;
    // Zero ghosts, then a boundary mode (cycling through them), which `fast` computes with its
    // border pass and the seed strategies refuse.
    const Boundary modes[] = {Boundary::reflect, Boundary::wrap, Boundary::constant,
                              Boundary::mirror, Boundary::nearest};
    for (const Edges& e : {Edges{}, Edges::all(modes[i % 5], 0.75)}) {
      const Problem p(c.rank, c.ext, c.batch, f, dtype_of<T>(), op, e);
      const Status st = s.can_implement(p);
      if (!st) {
        EXPECT_FALSE(st.reason.empty());
        continue;
      }
      EXPECT_EQ(check_strategy<T>(s.name(), c.rank, c.ext, c.batch, f, op, false, e, tuning), "")
          << s.name() << " " << p.describe();
      ++runs;
    }
    ++i;
  }
  EXPECT_GT(runs, 0) << s.name() << " ran none of the " << small_cases().size() << " cases";
}

TEST(CudaSanitizer, EveryStrategyRankAndDtypeOnCases) {
  SKIP_WITHOUT_GPU();
  for (const Strategy* s : cuda_strategies()) {
    SCOPED_TRACE(s->name());
    sanitizer_pass<float>(*s);
    sanitizer_pass<double>(*s);
  }
}

TEST(CudaSanitizer, EveryStrategyLoopingOverTilesInATinyGrid) {
  SKIP_WITHOUT_GPU();
  const GridLimitGuard guard(cuda::GridLimits{3, 2, 2});
  for (const Strategy* s : cuda_strategies()) {
    SCOPED_TRACE(s->name() + " with the grid limited to 3x2x2");
    sanitizer_pass<float>(*s);
    sanitizer_pass<double>(*s);
  }
}

// `fast` streams long arrays through rings of shared-memory slots that a block refills as it goes
// (each slot's barriers flip phase on every pass): long enough signals and volumes that every
// block wraps around its ring several times, against the reference, under the defaults and under
// every tuning variant (support.hpp; the input and its reference made once per case, since the
// reference of these sizes takes longer than all the runs).
TEST(CudaFast, RingsWrapAroundOnLongStreams) {
  SKIP_WITHOUT_GPU();
  const struct {
    int rank;
    Extents ext;
    std::vector<std::int64_t> k;
  } cases[] = {
      {1, {(std::int64_t(1) << 24) + 4, 1, 1}, {33}},  // 8192+ tiles of 2048
      {1, {(std::int64_t(1) << 23) + 8, 1, 1}, {9}},
      {1, {(std::int64_t(3) << 21) + 12, 1, 1}, {97}},  // 1537 tiles of 4096, 3 padded slots
      {3, {300, 36, 136}, {3, 3, 3}},
      {3, {160, 20, 132}, {5, 5, 5}},
  };
  std::vector<std::string> variants = {""};  // the defaults first
  for (const std::string& v : fast_tuning_variants()) variants.push_back(v);
  for (const auto& c : cases) {
    const Filter f = random_filter(c.k);
    const Problem p(c.rank, c.ext, 1, f, DType::f32);
    const std::vector<float> in = random_vector<float>(p.elements());
    std::vector<double> ref(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    const std::vector<double> tol = tolerances("fast", p, in);  // direct sums (1-D, 3-D)
    std::vector<float> out(in.size());
    for (const std::string& v : variants) {
      SCOPED_TRACE(p.describe() + (v.empty() ? std::string(" defaults") : " tuned " + v));
      Options opt;
      opt.strategy = "fast";
      opt.tuning = v.empty() ? FastTuning{} : detail::parse_fast_tuning(v, "variant");
      Problem q = p;
      q.set_tuning(opt.tuning);
      ASSERT_EQ(find_strategy("fast")->summation(q), Summation::direct);
      poison(out);
      ArrayView ov{out.data(), DType::f32, c.rank, c.ext, 1, MemorySpace::host};
      apply(ConstArrayView(in.data(), DType::f32, c.rank, c.ext), ov, f, opt);
      std::int64_t bad = 0, first = -1;
      for (std::size_t i = 0; i < in.size(); ++i)
        if (!(std::fabs(double(out[i]) - ref[i]) <= tol[i]))
          if (bad++ == 0) first = std::int64_t(i);
      EXPECT_EQ(bad, 0) << "first at " << first << ": got " << out[std::size_t(first)]
                        << ", want " << ref[std::size_t(first)] << "; seed " << fresh_seed();
    }
  }
}

// The 3-D block ring (f32, r = 1..3, rows of a 16-byte pitch) applies the modes itself: ghost
// planes copied from the mapped planes, ghost rows set in each slot from the tile, ghost columns
// in the registers of the lanes at a row end up to r = 2 (one kernel per x mode) and in the slot
// at r = 3 (wrap's far columns from side copies; wrap along y by the seam tile), the border pass
// left with what it cannot. Every mode, per-axis mixes, cval, both operations, radii 1..3, on
// the given volumes under the given tunings.
struct Volume {
  Extents ext;
  std::int64_t batch;
};
void block_ring_modes(const std::vector<Volume>& volumes, const std::vector<std::string>& tunings) {
  const Boundary C = Boundary::constant, N = Boundary::nearest, F = Boundary::reflect,
                 M = Boundary::mirror, W = Boundary::wrap;
  std::vector<Edges> edges;
  for (Boundary m : {C, N, F, M, W}) edges.push_back(Edges::all(m, 0.75));
  for (const auto& mix :
       {std::array<Boundary, 3>{W, F, W}, {F, W, M}, {N, C, W}, {M, N, C}, {C, F, N}}) {
    Edges e;
    e.mode = mix;
    e.cval = -2.5;
    edges.push_back(e);
  }
  Edges zero_x;  // x's ghosts zeros, the other axes' modes applied
  zero_x.mode = {F, M, C};
  edges.push_back(zero_x);
  int i = 0;
  for (const std::string& t : tunings)
    for (const std::int64_t k : {3, 5, 7})
      for (const Volume& v : volumes)
        for (const Edges& e : edges) {
          const Filter f = random_filter({k, k, k});
          const Op op = i++ % 2 ? Op::convolve : Op::correlate;
          const FastTuning tuning = t.empty() ? FastTuning{} : detail::parse_fast_tuning(t, "t");
          EXPECT_EQ(check_strategy<float>("fast", 3, v.ext, v.batch, f, op, false, e, tuning), "")
              << Problem(3, v.ext, v.batch, f, DType::f32, op, e).describe() << " tuning " << t;
        }
}

// Volumes with partial last strips and y-tiles, one strip holding both row ends (and one lane
// both, at 4 columns: its x ghosts on both sides set in its registers), a first y-tile
// that also meets the last row, y axes of one tile and a row more (wrap's seam tile, whose warps
// may straddle the seam, and the last tile of one row), axes too short for the kernel to apply
// their mode (2R + 1 elements) or for the seam tile, rows of 136 and 264 columns (wrap's x-seam
// tile: the narrowest row it serves, and a partial last strip) and of 128 (too narrow for it),
// a batch; under the defaults (equal runs from r = 2, so a block marches several tiles) and the
// tunings that force z-chunks, short runs, four and one y-rows per warp, and the per-warp
// kernels. An origin that moves the window off centre.
TEST(CudaFast, BlockRingAppliesTheModesAtEveryEdge) {
  SKIP_WITHOUT_GPU();
  block_ring_modes({{{12, 40, 264}, 1},
                    {{7, 21, 136}, 2},
                    {{9, 17, 128}, 1},
                    {{4, 16, 20}, 1},
                    {{5, 7, 12}, 2},
                    {{6, 5, 8}, 1},
                    {{5, 9, 4}, 1}},
                   {"", "runs=0", "slots=2,runs=1,chunk=5", "runs=1,edge_cost=100", "rows_3d=4",
                    "rows_3d=1", "feed=tma"});
  Edges shifted = Edges::all(Boundary::reflect);
  shifted.origin = {1, -1, 0};
  EXPECT_EQ(check_strategy<float>("fast", 3, {12, 40, 264}, 1, random_filter({5, 5, 5}),
                                  Op::correlate, false, shifted),
            "");
}

// The same on two small volumes under the defaults, small enough for the sanitizers.
TEST(CudaSanitizer, BlockRingModesOnSmallVolumes) {
  SKIP_WITHOUT_GPU();
  block_ring_modes({{{5, 17, 128}, 1}, {{5, 13, 136}, 2}, {{5, 7, 12}, 2}}, {""});
}

// ---------------------------------------------------------------------------------------------
// Options::direct_sums: `fast` then runs the direct kernels where it would take the Winograd
// columns (2-D f32, r = 4, 5, 7), and is held to the direct sum's tolerance; both operations, a
// partial strip and a batch.
void direct_sums(const FastTuning& tuning) {
  for (const auto& k : {std::vector<std::int64_t>{9, 9}, {11, 11}, {15, 15}, {1, 9}})
    for (Op op : {Op::correlate, Op::convolve}) {
      const Filter f = random_filter(k);
      EXPECT_EQ(check_strategy<float>("fast", 2, {70, 300, 1}, 2, f, op, true, {}, tuning), "");
    }
  // On the adversary of support.hpp, where the Winograd form's rounding exceeds the direct
  // sum's bound (SweepSelfCheck shows it on a float32 emulation): with direct sums required the
  // result meets the direct bound; without, the Winograd bound.
  for (const std::int64_t k : {9, 11, 15}) {
    const Filter f = winograd_adversary_filter(k, k);
    const std::int64_t h = 61, w = 256;
    const std::vector<float> in = winograd_adversary_input<float>(h, w);
    for (const bool direct : {true, false}) {
      Problem p(2, {h, w, 1}, 1, f, DType::f32);
      p.require_direct_sums(direct);
      p.set_tuning(tuning);
      std::vector<float> out(in.size());
      poison(out);
      Options opt;
      opt.strategy = "fast";
      opt.direct_sums = direct;
      opt.tuning = tuning;
      apply(view(in.data(), {h, w}), view(out.data(), {h, w}), f, opt);
      EXPECT_EQ(compare("fast", p, in, out), "") << k << "x" << k << (direct ? " direct" : "");
      // Without direct sums, only a run that took the Winograd columns (not one whose tuning
      // turned them off) differs from the direct bound.
      if (direct || find_strategy("fast")->summation(p) != Summation::winograd_x) continue;
      // The Winograd run does exceed the direct bound somewhere: the adversary tells them apart.
      Problem d = p;
      d.require_direct_sums();
      EXPECT_NE(compare("fast", d, in, out), "") << k << "x" << k;
    }
  }
}

TEST(CudaFast, DirectSumsWhenRequired) {
  SKIP_WITHOUT_GPU();
  direct_sums({});
}

// Small arrays under the modes: `fast` runs the border pass alone where it recomputes every
// output (1-D and 2-D, an axis no longer than the filter less one: border_covers_all), and
// arrays of up to 4096 outputs and 32 taps in one launch of the border pass's kernel
// (whole_pass); arrays one element longer, and longer filters or larger arrays, keep the
// interior kernel. Every mode, cval, an origin, both ops and dtypes, against the reference.
TEST(CudaFast, SmallArraysUnderModesTakeFewerLaunches) {
  SKIP_WITHOUT_GPU();
  const Boundary C = Boundary::constant, N = Boundary::nearest, R = Boundary::reflect,
                 M = Boundary::mirror, W = Boundary::wrap;
  int failed = 0;
  for (const auto& [rank, ext, k, batch] :
       std::vector<std::tuple<int, Extents, std::vector<std::int64_t>, std::int64_t>>{
           {2, {8, 8, 1}, {9, 9}, 2},     {2, {9, 9, 1}, {9, 9}, 1},
           {2, {8, 40, 1}, {9, 9}, 1},    {2, {40, 3, 1}, {5, 5}, 3},
           {2, {1, 1, 1}, {3, 3}, 1},     {2, {6, 6, 1}, {7, 7}, 1},
           {2, {8, 1000, 1}, {9, 9}, 1},  {2, {1500, 4, 1}, {5, 5}, 1},
           {2, {9, 1000, 1}, {9, 9}, 1},  {2, {70, 70, 1}, {3, 3}, 1},
           {2, {20, 20, 1}, {5, 5}, 1},   {2, {50, 60, 1}, {3, 3}, 1},
           {1, {8, 1, 1}, {9}, 2},        {1, {9, 1, 1}, {9}, 1},
           {1, {1, 1, 1}, {3}, 1},        {1, {8, 1, 1}, {9}, 600},
           {1, {9, 1, 1}, {9}, 600}}) {
    const Filter f = random_filter(k);
    for (Boundary m : {C, N, R, M, W}) {
      Edges e = Edges::all(m, m == C ? 1.5 : 0.0);
      e.origin[0] = k[0] / 2 > 1 ? -1 : 0;
      Problem p(rank, ext, batch, f, DType::f32, Op::correlate, e);
      // An axis no longer than its (folded: 1-element axes under mirror or wrap) filter less
      // one.
      const Dims3 n = p.dims3(), kf = p.filter_dims3();
      const bool covered = n.x <= kf.x - 1 || (rank == 2 && n.y <= kf.y - 1);
      EXPECT_EQ(cuda::border_covers_all(p), covered) << p.describe();
      for (const Op op : {Op::correlate, Op::convolve})
        for (const std::string& err :
             {check_strategy<float>("fast", rank, ext, batch, f, op, false, e),
              check_strategy<double>("fast", rank, ext, batch, f, op, false, e)}) {
          if (err.empty()) continue;
          ADD_FAILURE() << err;
          if (++failed >= 10) return;
        }
    }
  }
  // Zero ghosts leave the interior kernel alone.
  EXPECT_FALSE(cuda::border_covers_all(Problem(2, {8, 8, 1}, 1, random_filter({9, 9}),
                                               DType::f32)));
}

// ---------------------------------------------------------------------------------------------
// `fast` under each tuning variant (support.hpp), through Options::tuning: the kernels its
// defaults do not take, on the sanitizer's small cases (in the normal and the tiny grid) and with
// direct sums required and not (the long streams above run every variant too).
class FastVariant : public ::testing::TestWithParam<std::string> {
 protected:
  FastTuning tuning() const { return detail::parse_fast_tuning(GetParam(), "variant"); }
};

TEST_P(FastVariant, SanitizerCases) {
  SKIP_WITHOUT_GPU();
  const Strategy* s = find_strategy("fast");
  ASSERT_NE(s, nullptr);
  sanitizer_pass<float>(*s, tuning());
  sanitizer_pass<double>(*s, tuning());
  const GridLimitGuard guard(cuda::GridLimits{3, 2, 2});
  sanitizer_pass<float>(*s, tuning());
  sanitizer_pass<double>(*s, tuning());
}

TEST_P(FastVariant, DirectSumsWhenRequired) {
  SKIP_WITHOUT_GPU();
  direct_sums(tuning());
}

INSTANTIATE_TEST_SUITE_P(Tuned, FastVariant, ::testing::ValuesIn(fast_tuning_variants()),
                         [](const auto& info) { return variant_test_name(info.param); });

// ---------------------------------------------------------------------------------------------
// More than 2^31 elements: 2D 50000 x 50000 float32 (10 GB in, 10 GB out on the device).
// ---------------------------------------------------------------------------------------------
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// n fresh random floats in [-1, 1) (seeded; filled by all cores) on the host and copied to the
// device, and an output buffer of n on the device; make() says why not where the host or the
// device lacks the memory (the caller skips then).
struct LargeArrays {
  std::vector<float> in;
  void *din = nullptr, *dout = nullptr;
  std::uint64_t seed = 0;
  bool make(std::int64_t n, std::string* why) {
    const std::size_t bytes = std::size_t(n) * sizeof(float);
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b < 2 * bytes + (1ull << 30)) {
      *why = "needs " + std::to_string(2 * bytes) + " B of device memory, " +
             std::to_string(free_b) + " B free";
      return false;
    }
    try {
      in.resize(std::size_t(n));
    } catch (const std::bad_alloc&) {
      *why = "cannot allocate " + std::to_string(bytes) + " B of host memory";
      return false;
    }
    seed = fresh_seed();
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nt; ++t)
      pool.emplace_back([&, t] {
        const std::int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        for (std::int64_t i = lo; i < hi; ++i)
          in[std::size_t(i)] =
              float(double(splitmix64(seed ^ std::uint64_t(i)) >> 11) * 0x1.0p-52 - 1.0);
      });
    for (auto& th : pool) th.join();
    if (cudaMalloc(&din, bytes) != cudaSuccess || cudaMalloc(&dout, bytes) != cudaSuccess ||
        cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      *why = "cannot allocate or fill " + std::to_string(2 * bytes) + " B of device memory";
      return false;
    }
    return true;
  }
  ~LargeArrays() {
    cudaFree(din);
    cudaFree(dout);
  }
};

TEST(CudaLarge, TwoDimensional50000x50000MoreThan2To31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t H = 50000, W = 50000, n = H * W;
  ASSERT_GT(n, std::int64_t(1) << 31);
  LargeArrays arrays;
  std::string why;
  if (!arrays.make(n, &why)) GTEST_SKIP() << why;
  const std::vector<float>& in = arrays.in;
  const std::uint64_t seed = arrays.seed;
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  void *const din = arrays.din, *const dout = arrays.dout;

  // The seed strategies with a 5x5 filter, and `fast` with it (direct sums through the TMA ring)
  // and with a 9x9 one (its Winograd columns);
  // `separable` with a rank-1 17x17 filter (x and y fused, 64-bit row offsets); `lowrank` with
  // a 17x17 Laplacian of Gaussian (two terms, the second adding into the output).
  const Filter f5 = random_filter({5, 5}), f9 = random_filter({9, 9}),
               g17 = random_outer_product({17, 17}), log17 = make_named_filter("log:sigma=2", 2);
  const std::pair<const char*, const Filter*> runs[] = {
      {"basic", &f5}, {"tiled_input", &f5}, {"fast", &f5},
      {"fast", &f9},  {"separable", &g17},  {"lowrank", &log17}};

  for (const auto& [name, fp] : runs) {
    const Filter& f = *fp;
    const std::int64_t r = f.extents()[0] / 2, k = 2 * r + 1;
    SCOPED_TRACE(std::string(name) + " " + std::to_string(k) + "x" + std::to_string(k));
    // Sampled rows: the first and last 3, and some random ones. The reference of row i comes
    // from the sub-problem of input rows i-r .. i+r clipped to the array: output row i of the
    // whole problem reads exactly those rows, and where the clip cuts at the real border the
    // sub-problem's ghost rows are the real ghost rows (zeros). Only row i of the sub-problem is
    // used: its other rows would miss rows outside the cut.
    std::vector<std::int64_t> rows = {0, 1, 2, H - 3, H - 2, H - 1};
    for (int j = 0; j < 6; ++j)
      rows.push_back(std::int64_t(splitmix64(seed + j) % std::uint64_t(H)));
    CUDA_OK(cudaMemset(dout, kPoisonByte, bytes));  // finite poison
    Options opt;
    opt.strategy = name;
    const RunInfo info =
        apply(ConstArrayView(din, DType::f32, 2, {H, W, 1}, 1, MemorySpace::device),
              ArrayView{dout, DType::f32, 2, {H, W, 1}, 1, MemorySpace::device}, f, opt);
    EXPECT_EQ(info.strategy, name);
    CUDA_OK(cudaDeviceSynchronize());

    std::vector<float> got_row(static_cast<std::size_t>(W));
    for (const std::int64_t i : rows) {
      CUDA_OK(cudaMemcpy(got_row.data(), static_cast<float*>(dout) + i * W, W * sizeof(float),
                         cudaMemcpyDeviceToHost));
      const std::int64_t r0 = std::max<std::int64_t>(0, i - r), r1 = std::min(H - 1, i + r);
      const Problem sub(2, {r1 - r0 + 1, W, 1}, 1, f, DType::f32);
      const std::vector<float> sub_in(in.begin() + r0 * W, in.begin() + (r1 + 1) * W);
      std::vector<double> ref(sub_in.size());
      cpu::reference_f64(sub, sub_in.data(), ref.data());
      const std::vector<double> tol = tolerances(name, sub, sub_in);
      std::int64_t bad = 0;
      for (std::int64_t x = 0; x < W; ++x) {
        const std::size_t at = std::size_t((i - r0) * W + x);
        if (!(std::fabs(double(got_row[std::size_t(x)]) - ref[at]) <= tol[at]))
          if (bad++ < 3)
            ADD_FAILURE() << "row " << i << " col " << x << ": got " << got_row[std::size_t(x)]
                          << ", want " << ref[at] << " (seed " << seed << ")";
      }
      EXPECT_EQ(bad, 0) << "row " << i;
    }

    // The first and last r+1 columns of every row: sub-problems of input columns 0..2r and
    // W-k..W-1 (all rows), whose output columns 0..r and r..2r are exact for the same reason.
    for (const std::int64_t c0 : {std::int64_t(0), W - k}) {
      const std::int64_t out_c = c0 == 0 ? 0 : W - 1 - r;  // first output column compared
      const std::int64_t sub_c = c0 == 0 ? 0 : r;           // its column in the sub-problem
      std::vector<float> strip(std::size_t(H * k));
      for (std::int64_t y = 0; y < H; ++y)
        std::memcpy(&strip[std::size_t(y * k)], &in[std::size_t(y * W + c0)], k * sizeof(float));
      const Problem sub(2, {H, k, 1}, 1, f, DType::f32);
      std::vector<double> ref(strip.size());
      cpu::reference_f64(sub, strip.data(), ref.data());
      const std::vector<double> tol = tolerances(name, sub, strip);
      std::vector<float> got(std::size_t(H * (r + 1)));
      CUDA_OK(cudaMemcpy2D(got.data(), (r + 1) * sizeof(float), static_cast<float*>(dout) + out_c,
                           W * sizeof(float), (r + 1) * sizeof(float), H, cudaMemcpyDeviceToHost));
      std::int64_t bad = 0;
      for (std::int64_t y = 0; y < H; ++y)
        for (std::int64_t x = 0; x <= r; ++x) {
          const std::size_t at = std::size_t(y * k + sub_c + x);
          const float g = got[std::size_t(y * (r + 1) + x)];
          if (!(std::fabs(double(g) - ref[at]) <= tol[at]))
            if (bad++ < 3)
              ADD_FAILURE() << "row " << y << " col " << out_c + x << ": got " << g << ", want "
                            << ref[at] << " (seed " << seed << ")";
        }
      EXPECT_EQ(bad, 0) << "columns " << out_c << ".." << out_c + r;
    }
  }
}

// The row transforms of `fft` on a signal of more than 2^31 elements (64-bit row offsets and
// pair indices): 2^31 + 4099 float32 under reflect, a random filter of 129 taps; sampled pairs
// (the first two, the last two and random ones) against sums in float64 within the FFT bound of
// their pair (docs/ACCURACY.md, FFT).
TEST(CudaLarge, RowTransformsOfASignalOfMoreThan2To31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t(1) << 31) + 4099;
  LargeArrays arrays;
  std::string why;
  if (!arrays.make(n, &why)) GTEST_SKIP() << why;
  const std::vector<float>& in = arrays.in;
  const std::uint64_t seed = arrays.seed;
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  void *const din = arrays.din, *const dout = arrays.dout;
  CUDA_OK(cudaMemset(dout, kPoisonByte, bytes));  // finite poison
  const Filter f = random_filter({129});
  Options opt;
  opt.strategy = "fft";
  opt.edges = Edges::all(Boundary::reflect);
  const RunInfo info = apply(ConstArrayView(din, DType::f32, 1, {n, 1, 1}, 1, MemorySpace::device),
                             ArrayView{dout, DType::f32, 1, {n, 1, 1}, 1, MemorySpace::device}, f,
                             opt);
  EXPECT_EQ(info.strategy, "fft");
  CUDA_OK(cudaDeviceSynchronize());

  const Problem p(1, {n, 1, 1}, 1, f, DType::f32, Op::correlate, opt.edges);
  const detail::FftTiling t = detail::cuda_fft_tiling(p);
  ASSERT_TRUE(t.shared);
  const std::vector<double>& w = p.correlation_weights();
  const std::int64_t k = std::int64_t(w.size()), a = p.anchor3().x, pair = t.tile[2];
  double l1 = 0, wl1 = 0;
  for (double x : f.weights()) l1 += std::fabs(x);
  for (double x : w) wl1 += std::fabs(x);
  const double smax = spectrum_max(p, t.fft);
  const auto at = [&](std::int64_t i) {
    return double(in[std::size_t(detail::map_index(i, n, Boundary::reflect))]);
  };
  std::vector<std::int64_t> pairs = {0, 1, t.tiles - 2, t.tiles - 1};
  for (int j = 0; j < 6; ++j)
    pairs.push_back(std::int64_t(splitmix64(seed + 7 + j) % std::uint64_t(t.tiles)));
  for (const std::int64_t q : pairs) {
    const std::int64_t o = q * pair, cnt = std::min(pair, n - o);
    double sq = 0;
    for (std::int64_t i = o - a; i < o - a + cnt + k - 1; ++i) sq += at(i) * at(i);
    const double tol = fft_tolerance<float>(std::log2(double(t.fft[2])), smax, wl1,
                                            std::sqrt(sq) * t.window_scale, k, l1);
    std::vector<float> got(static_cast<std::size_t>(cnt));
    CUDA_OK(cudaMemcpy(got.data(), static_cast<float*>(dout) + o, cnt * sizeof(float),
                       cudaMemcpyDeviceToHost));
    std::int64_t bad = 0;
    for (std::int64_t x = 0; x < cnt; ++x) {
      double want = 0;
      for (std::int64_t j = 0; j < k; ++j) want += w[std::size_t(j)] * at(o + x - a + j);
      if (!(std::fabs(double(got[std::size_t(x)]) - want) <= tol))
        if (bad++ < 3)
          ADD_FAILURE() << "output " << o + x << ": got " << got[std::size_t(x)] << ", want "
                        << want << " (seed " << seed << ")";
    }
    EXPECT_EQ(bad, 0) << "pair " << q;
  }
}

// The non-finite repair beyond 2^31 elements (64-bit output indices): a signal of 2^31 + 37
// float32 with NaN and infinities near both ends, a 7-tap filter with zero weights, under nearest;
// `fast` (notes its non-finite outputs) and `basic` (every output looked at). The outputs within
// reach of them must be the reference's, NaN and infinities exactly.
TEST(CudaLarge, NonFiniteRepairBeyond2To31Elements) {
  SKIP_WITHOUT_GPU();
  const std::int64_t n = (std::int64_t(1) << 31) + 37;
  LargeArrays arrays;
  std::string why;
  if (!arrays.make(n, &why)) GTEST_SKIP() << why;
  std::vector<float>& in = arrays.in;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::int64_t places[] = {3, 40, n - 30, n - 2};
  const float values[] = {inf, nan, -inf, inf};
  for (int i = 0; i < 4; ++i) in[std::size_t(places[i])] = values[i];
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  CUDA_OK(cudaMemcpy(arrays.din, in.data(), bytes, cudaMemcpyHostToDevice));
  const Filter f({0.5, 0.0, -1.0, 2.0, 0.0, 0.25, 1.0}, {7});
  Options opt;
  opt.edges = Edges::all(Boundary::nearest);
  for (const char* name : {"fast", "basic"}) {
    SCOPED_TRACE(name);
    opt.strategy = name;
    if (std::string(name) == "basic") opt.edges = Edges::all(Boundary::constant);
    CUDA_OK(cudaMemset(arrays.dout, kPoisonByte, bytes));
    apply(ConstArrayView(arrays.din, DType::f32, 1, {n, 1, 1}, 1, MemorySpace::device),
          ArrayView{arrays.dout, DType::f32, 1, {n, 1, 1}, 1, MemorySpace::device}, f, opt);
    CUDA_OK(cudaDeviceSynchronize());
    for (const std::int64_t lo : {std::int64_t(0), std::int64_t(30), n - 48}) {
      const std::int64_t len = 48;
      std::vector<float> got(static_cast<std::size_t>(len));
      CUDA_OK(cudaMemcpy(got.data(), static_cast<float*>(arrays.dout) + lo, len * sizeof(float),
                         cudaMemcpyDeviceToHost));
      for (std::int64_t i = lo; i < lo + len; ++i) {
        double want = 0;  // SciPy's sum over the non-zero weights, in order
        for (std::int64_t j = 0; j < 7; ++j) {
          const double w = f.weights()[std::size_t(j)];
          if (w == 0) continue;
          const std::int64_t at = i - 3 + j;
          const double x = at < 0 || at >= n
                               ? (opt.edges.mode[0] == Boundary::nearest
                                      ? double(in[std::size_t(at < 0 ? 0 : n - 1)])
                                      : 0.0)
                               : double(in[std::size_t(at)]);
          want += w * x;
        }
        const float g = got[std::size_t(i - lo)];
        if (std::isfinite(want))
          EXPECT_NEAR(double(g), want, 1e-5 * 4.0) << "output " << i;
        else if (std::isnan(want))
          EXPECT_TRUE(std::isnan(g)) << "output " << i << ": " << g;
        else
          EXPECT_EQ(double(g), want) << "output " << i;
      }
    }
  }
}

}  // namespace
}  // namespace halo::test

#else  // no CUDA headers: a CPU-only build

TEST(Cuda, NotBuiltWithCuda) { GTEST_SKIP() << "halo's tests were built without the CUDA runtime"; }

#endif
