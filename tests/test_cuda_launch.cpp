// Host-only tests of the CUDA launch math (src/cuda/seeds/launch.hpp): no GPU and no nvcc needed, so
// they run in CI. Every grid covers every output, the hardware limits hold (1024 threads per
// block, gridDim.x < 2^31, gridDim.y/z <= 65535) also for huge shapes, the shared memory is what
// the tile needs, and check() refuses what a strategy cannot do with a reason that has numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda/seeds/launch.hpp"
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda {
namespace {

Filter ones(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Filter(std::vector<double>(static_cast<std::size_t>(n), 1.0), shape);
}

Problem problem(int rank, Extents ext, std::vector<std::int64_t> k, DType t = DType::f32,
                std::int64_t batch = 1, Op op = Op::correlate) {
  return Problem(rank, ext, batch, ones(k), t, op);
}

// The properties every launch must have, whatever the strategy and the problem.
void expect_valid(Kernel kernel, const Problem& p, const GridLimits& lim = GridLimits{}) {
  SCOPED_TRACE(std::string(kernel_name(kernel)) + " on " + p.describe());
  const Launch L = make_launch(kernel, p, lim);
  const Geometry& g = L.g;
  // Limits.
  EXPECT_LE(L.threads_per_block(), 1024);
  EXPECT_GE(L.threads_per_block(), 32);
  for (int i = 0; i < 3; ++i) EXPECT_GE(L.grid[i], 1u);
  EXPECT_LE(std::int64_t(L.grid[0]), std::min<std::int64_t>(lim.x, 2147483647));
  EXPECT_LE(std::int64_t(L.grid[1]), std::min<std::int64_t>(lim.y, 65535));
  EXPECT_LE(std::int64_t(L.grid[2]), std::min<std::int64_t>(lim.z, 65535));
  // The grid never exceeds the work (no block without a tile) ...
  EXPECT_LE(std::int64_t(L.grid[0]), g.tiles_x);
  EXPECT_LE(std::int64_t(L.grid[1]), g.tiles_y);
  EXPECT_LE(std::int64_t(L.grid[2]), L.z_work());
  // ... and the tiles cover every output exactly once: tiles * out >= n, one tile fewer would not.
  const Dims3 n = p.dims3();
  EXPECT_EQ(g.nx, n.x);
  EXPECT_EQ(g.ny, n.y);
  EXPECT_EQ(g.nz, n.z);
  EXPECT_EQ(g.batch, p.batch());
  EXPECT_GE(g.tiles_x * g.out_x, n.x);
  EXPECT_LT((g.tiles_x - 1) * g.out_x, n.x);
  EXPECT_GE(g.tiles_y * g.out_y, n.y);
  EXPECT_LT((g.tiles_y - 1) * g.out_y, n.y);
  EXPECT_GE(g.tiles_z * g.out_z, n.z);
  EXPECT_LT((g.tiles_z - 1) * g.out_z, n.z);
  // Tiles relate to the block as each design says.
  const int bx = int(L.block[0]), by = int(L.block[1]), bz = int(L.block[2]);
  if (kernel == Kernel::tiled_input) {
    EXPECT_EQ(g.in_x, bx);
    EXPECT_EQ(g.in_y, by);
    EXPECT_EQ(g.in_z, bz);
    EXPECT_EQ(g.out_x, bx - (g.kx - 1));
    EXPECT_EQ(g.out_y, by - (g.ky - 1));
    EXPECT_EQ(g.out_z, bz - (g.kz - 1));
    EXPECT_EQ(L.static_shared_bytes, std::size_t(bx * by * bz) * dtype_size(p.dtype()));
    EXPECT_EQ(L.shared_bytes, 0u);
  } else {
    EXPECT_EQ(g.out_x, bx);
    EXPECT_EQ(g.out_y, by);
    EXPECT_EQ(g.out_z, bz);
  }
  // Filter and anchors as the problem says.
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  EXPECT_EQ(g.kx, k.x);
  EXPECT_EQ(g.ky, k.y);
  EXPECT_EQ(g.kz, k.z);
  EXPECT_EQ(g.ax, a.x);
  EXPECT_EQ(g.ay, a.y);
  EXPECT_EQ(g.az, a.z);
}

std::vector<Problem> problems() {
  std::vector<Problem> v;
  for (std::int64_t n : {1, 2, 15, 16, 17, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 4099})
    for (std::int64_t k : {1, 2, 3, 4, 5, 9, 17}) v.push_back(problem(1, {n, 1, 1}, {k}));
  for (auto [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {1, 17}, {17, 1}, {31, 33}, {32, 32}, {33, 31}, {127, 129}, {300, 1000}})
    for (auto k : std::vector<std::vector<std::int64_t>>{{1, 1}, {3, 3}, {2, 2}, {4, 3}, {9, 9},
                                                         {1, 7}, {7, 1}})
      v.push_back(problem(2, {h, w, 1}, k));
  for (Extents e : {Extents{1, 1, 1}, Extents{2, 3, 4}, Extents{15, 16, 17}, Extents{33, 9, 31}})
    for (auto k : std::vector<std::vector<std::int64_t>>{{3, 3, 3}, {2, 2, 2}, {5, 5, 5},
                                                         {4, 3, 2}, {1, 1, 3}})
      v.push_back(problem(3, e, k));
  v.push_back(problem(1, {1000, 1, 1}, {7}, DType::f64, 3));
  v.push_back(problem(3, {9, 10, 11}, {3, 3, 3}, DType::f64, 2, Op::convolve));
  return v;
}

TEST(CudaLaunch, EveryStrategyCoversEveryOutputWithinTheLimits) {
  for (const Problem& p : problems())
    for (Kernel k : kAllKernels) expect_valid(k, p);
}

TEST(CudaLaunch, HugeShapesFoldIntoTheGridLimits) {
  // 2D 50000 x 50000 (2.5e9 elements, more than 2^31).
  const Problem big2(2, {50000, 50000, 1}, 1, ones({5, 5}), DType::f32);
  // 3D 1 x 1 x 2^33: everything along x.
  const Problem long_x(3, {1, 1, std::int64_t(1) << 33}, 1, ones({3, 3, 3}), DType::f32);
  // 3D 2^33 x 1 x 1: everything along z, far beyond 65535 blocks.
  const Problem long_z(3, {std::int64_t(1) << 33, 1, 1}, 1, ones({3, 3, 3}), DType::f32);
  // 2D 2^32 x 2: everything along y.
  const Problem long_y(2, {std::int64_t(1) << 32, 2, 1}, 1, ones({3, 3}), DType::f32);
  // 1D, 10^6 items of 5 elements: the batch goes along grid.z.
  const Problem batch(1, {5, 1, 1}, 1000000, ones({3}), DType::f32);
  // 1D 2^40 elements: more tiles than gridDim.x can hold for basic (2^32 blocks of 256).
  const Problem long_1d(1, {std::int64_t(1) << 40, 1, 1}, 1, ones({3}), DType::f32);
  for (const Problem* p : {&big2, &long_x, &long_z, &long_y, &batch, &long_1d})
    for (Kernel k : kAllKernels) expect_valid(k, *p);

  const Launch z = make_launch(Kernel::basic, long_z);
  EXPECT_EQ(z.grid[2], 65535u);
  EXPECT_EQ(z.g.tiles_z, (std::int64_t(1) << 33) / 2);  // basic 3D block: 32x4x2
  const Launch y = make_launch(Kernel::tiled_input, long_y);
  EXPECT_EQ(y.grid[1], 65535u);
  EXPECT_GT(y.g.tiles_y, 65535);
  const Launch b = make_launch(Kernel::cached, batch);
  EXPECT_EQ(b.grid[2], 65535u);
  EXPECT_EQ(b.z_work(), 1000000);
  const Launch x = make_launch(Kernel::basic, long_1d);
  EXPECT_EQ(x.grid[0], 2147483647u);
  EXPECT_EQ(x.g.tiles_x, std::int64_t(1) << 32);
  const Launch x2 = make_launch(Kernel::tiled_output, big2);
  EXPECT_EQ(x2.g.tiles_x, (50000 + 31) / 32);
  EXPECT_EQ(x2.g.tiles_y, (50000 + 31) / 32);
}

TEST(CudaLaunch, LoweredGridLimitsForceTheTileLoops) {
  const GridLimits tiny{3, 2, 2};
  for (const Problem& p : problems())
    for (Kernel k : kAllKernels) expect_valid(k, p, tiny);
  const Launch L = make_launch(Kernel::tiled_input, problem(2, {300, 1000, 1}, {3, 3}), tiny);
  EXPECT_EQ(L.grid[0], 3u);
  EXPECT_EQ(L.grid[1], 2u);
  EXPECT_EQ(L.grid[2], 1u);
}

TEST(CudaLaunch, BlocksAndSharedMemoryAsDesigned) {
  // basic/constant: 256 threads, no shared memory.
  for (Kernel k : {Kernel::basic, Kernel::constant}) {
    const Launch l1 = make_launch(k, problem(1, {1000, 1, 1}, {5}));
    EXPECT_EQ(l1.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
    const Launch l2 = make_launch(k, problem(2, {100, 100, 1}, {5, 5}));
    EXPECT_EQ(l2.block, (std::array<std::uint32_t, 3>{32, 8, 1}));
    const Launch l3 = make_launch(k, problem(3, {10, 10, 10}, {3, 3, 3}));
    EXPECT_EQ(l3.block, (std::array<std::uint32_t, 3>{32, 4, 2}));
    EXPECT_EQ(l1.shared_bytes + l1.static_shared_bytes, 0u);
  }
  // tiled_input: block = 32x32 input tile; 5x5 leaves a 28x28 output tile (the seed's example).
  const Launch ti = make_launch(Kernel::tiled_input, problem(2, {100, 100, 1}, {5, 5}));
  EXPECT_EQ(ti.block, (std::array<std::uint32_t, 3>{32, 32, 1}));
  EXPECT_EQ(ti.g.out_x, 28);
  EXPECT_EQ(ti.g.out_y, 28);
  EXPECT_EQ(ti.static_shared_bytes, 32u * 32u * 4u);
  EXPECT_EQ(ti.g.tiles_x, 4);  // ceil(100 / 28)
  // Even filter (4x3): anchor 2 on x, 1 on y; the tile shrinks by k - 1 = 3 and 2.
  const Launch te = make_launch(Kernel::tiled_input, problem(2, {100, 100, 1}, {3, 4}));
  EXPECT_EQ(te.g.out_x, 29);
  EXPECT_EQ(te.g.out_y, 30);
  EXPECT_EQ(te.g.ax, 2);
  EXPECT_EQ(te.g.ay, 1);
  // Convolve flips the anchor of an even filter: k - 1 - k/2.
  const Launch tc = make_launch(Kernel::tiled_input,
                                problem(2, {100, 100, 1}, {3, 4}, DType::f32, 1, Op::convolve));
  EXPECT_EQ(tc.g.ax, 1);
  EXPECT_EQ(tc.g.ay, 1);
  // 3D tiled_input: 16x8x8 input tile.
  const Launch t3 = make_launch(Kernel::tiled_input, problem(3, {20, 20, 20}, {3, 3, 3}, DType::f64));
  EXPECT_EQ(t3.block, (std::array<std::uint32_t, 3>{16, 8, 8}));
  EXPECT_EQ(t3.static_shared_bytes, 16u * 8u * 8u * 8u);
  EXPECT_EQ(t3.g.out_x, 14);
  EXPECT_EQ(t3.g.out_z, 6);
  // tiled_output: block = output tile; dynamic shared memory = the input tile.
  const Launch to2 = make_launch(Kernel::tiled_output, problem(2, {100, 100, 1}, {5, 5}));
  EXPECT_EQ(to2.block, (std::array<std::uint32_t, 3>{32, 32, 1}));
  EXPECT_EQ(to2.shared_bytes, 36u * 36u * 4u);
  const Launch to1 = make_launch(Kernel::tiled_output, problem(1, {5000, 1, 1}, {9}, DType::f64));
  EXPECT_EQ(to1.block, (std::array<std::uint32_t, 3>{1024, 1, 1}));
  EXPECT_EQ(to1.shared_bytes, (1024u + 8u) * 8u);
  const Launch to3 = make_launch(Kernel::tiled_output, problem(3, {20, 20, 20}, {4, 3, 2}));
  EXPECT_EQ(to3.shared_bytes, std::size_t(16 + 1) * (8 + 2) * (8 + 3) * 4);
  const Launch tw = make_launch(Kernel::tiled_output_twostep, problem(1, {5000, 1, 1}, {8}));
  EXPECT_EQ(tw.shared_bytes, (1024u + 7u) * 4u);
  // cached: block = output tile = shared tile.
  const Launch c2 = make_launch(Kernel::cached, problem(2, {100, 100, 1}, {9, 9}));
  EXPECT_EQ(c2.block, (std::array<std::uint32_t, 3>{32, 32, 1}));
  EXPECT_EQ(c2.static_shared_bytes, 32u * 32u * 4u);
  EXPECT_EQ(c2.shared_bytes, 0u);
}

TEST(CudaLaunch, CompileTimeWidthsOnlyForTheListedOddSquareFilters) {
  EXPECT_EQ(make_launch(Kernel::basic, problem(1, {100, 1, 1}, {9})).specialised_k, 9);
  EXPECT_EQ(make_launch(Kernel::basic, problem(1, {100, 1, 1}, {11})).specialised_k, 0);
  EXPECT_EQ(make_launch(Kernel::basic, problem(1, {100, 1, 1}, {4})).specialised_k, 0);
  EXPECT_EQ(make_launch(Kernel::cached, problem(2, {100, 100, 1}, {5, 5})).specialised_k, 5);
  EXPECT_EQ(make_launch(Kernel::cached, problem(2, {100, 100, 1}, {5, 3})).specialised_k, 0);
  EXPECT_EQ(make_launch(Kernel::cached, problem(2, {100, 100, 1}, {4, 4})).specialised_k, 0);
  EXPECT_EQ(make_launch(Kernel::tiled_input, problem(3, {9, 9, 9}, {3, 3, 3})).specialised_k, 3);
  EXPECT_EQ(make_launch(Kernel::tiled_input, problem(3, {9, 9, 9}, {7, 7, 7})).specialised_k, 0);
}

TEST(CudaLaunch, CheckRefusesWhatDoesNotFitWithTheNumbers) {
  const DeviceLimits h100;
  auto refuses = [&](Kernel k, const Problem& p, const std::string& phrase,
                     const DeviceLimits& d = DeviceLimits{}) {
    const Status st = check(k, p, d);
    EXPECT_FALSE(st.ok) << kernel_name(k) << " accepted " << p.describe();
    EXPECT_NE(st.reason.find(phrase), std::string::npos)
        << kernel_name(k) << " on " << p.describe() << ": reason '" << st.reason << "' lacks '"
        << phrase << "'";
  };
  auto accepts = [&](Kernel k, const Problem& p) {
    const Status st = check(k, p, h100);
    EXPECT_TRUE(st.ok) << kernel_name(k) << " refused " << p.describe() << ": " << st.reason;
  };
  // Every sweep-like problem fits every strategy but twostep outside 1D.
  for (const Problem& p : problems())
    for (Kernel k : kAllKernels)
      if (!(k == Kernel::tiled_output_twostep && p.rank() != 1)) accepts(k, p);
  // Constant memory: 129x129 float32 = 16641 taps x 4 B = 66564 B > 65536 B; basic takes it.
  const Problem big_filter = problem(2, {200, 200, 1}, {129, 129});
  for (Kernel k : {Kernel::constant, Kernel::tiled_output, Kernel::cached})
    refuses(k, big_filter, "66564 B");
  accepts(Kernel::basic, big_filter);
  accepts(Kernel::cached, problem(2, {200, 200, 1}, {127, 127}));  // 16129 taps: fits
  refuses(Kernel::cached, problem(2, {200, 200, 1}, {91, 91}, DType::f64), "66248 B");
  // tiled_input: the filter must leave an output tile: 2D k <= 32, 1D k <= 1024, 3D 16/8/8.
  accepts(Kernel::tiled_input, problem(2, {100, 100, 1}, {32, 1}));
  refuses(Kernel::tiled_input, problem(2, {100, 100, 1}, {33, 1}), "33");
  accepts(Kernel::tiled_input, problem(1, {5000, 1, 1}, {1024}));
  refuses(Kernel::tiled_input, problem(1, {5000, 1, 1}, {1025}), "IN_TILE_DIM 1024");
  accepts(Kernel::tiled_input, problem(3, {20, 20, 20}, {8, 8, 16}));
  refuses(Kernel::tiled_input, problem(3, {20, 20, 20}, {9, 3, 3}), "axis z");
  refuses(Kernel::tiled_input, problem(3, {20, 20, 20}, {3, 3, 17}), "axis x");
  // tiled_output 1D (design 1): each side of the halo <= 1024.
  accepts(Kernel::tiled_output, problem(1, {5000, 1, 1}, {2049}));
  refuses(Kernel::tiled_output, problem(1, {5000, 1, 1}, {2051}), "1025 left");
  // twostep: k - 1 <= blockDim.x = 1024; 1D only.
  accepts(Kernel::tiled_output_twostep, problem(1, {5000, 1, 1}, {1025}));
  refuses(Kernel::tiled_output_twostep, problem(1, {5000, 1, 1}, {1026}), "k - 1 <= 1024");
  refuses(Kernel::tiled_output_twostep, problem(2, {50, 50, 1}, {3, 3}), "1D");
  // 3D tiled_output: the input tile (16+8)(8+29)(8+29) x 8 B = 262848 B of shared memory.
  refuses(Kernel::tiled_output, problem(3, {40, 40, 40}, {30, 30, 9}, DType::f64), "262848 B");
  accepts(Kernel::tiled_output, problem(3, {40, 40, 40}, {30, 30, 9}, DType::f32));
  // A smaller device: the limit comes from DeviceLimits.
  DeviceLimits small;
  small.shared_per_block_optin = 48 * 1024;
  refuses(Kernel::tiled_output, problem(3, {40, 40, 40}, {30, 30, 9}, DType::f32), "49152 B",
          small);
}

TEST(CudaLaunch, ModelReproducesTheSeedNotesIntensities) {
  auto ai = [](Kernel k, const Problem& p) {
    const Traffic t = model(k, p);
    return t.flops / t.bytes;
  };
  const Problem p5 = problem(2, {4096, 4096, 1}, {5, 5});
  const Problem p9 = problem(2, {4096, 4096, 1}, {9, 9});
  EXPECT_NEAR(ai(Kernel::basic, p5), 0.25, 1e-12);
  EXPECT_NEAR(ai(Kernel::constant, p5), 0.5, 1e-12);
  EXPECT_NEAR(ai(Kernel::tiled_input, p5), 9.57, 0.005);   // 32x32 input tile, 5x5
  EXPECT_NEAR(ai(Kernel::tiled_input, p9), 22.78, 0.005);  // 32x32 input tile, 9x9
  EXPECT_NEAR(ai(Kernel::cached, p5), 12.5, 1e-12);        // the bound
  EXPECT_NEAR(ai(Kernel::tiled_output, p5), 32.0 * 32 * 25 * 2 / (36.0 * 36 * 4), 1e-9);
  EXPECT_NEAR(model(Kernel::basic, p5).flops, p5.flops(), 0);
}

// `fast` says how it runs a problem (host-only: no GPU needed; the plan describes the current
// device, or an H100 where there is none, for 16-byte aligned arrays, and what runs on arrays that
// are not). By default: 2-D filters of r >= 12 in passes of 16 rows (the last one shorter),
// smaller ones in one pass; f32 rows through the TMA ring in 2-D (3 slots of 12 rows up to r = 4,
// 2 of 8 above, 2 of 16 with passes; 8 columns per lane at r = 6, else 4; at r = 4, 5, 7 the
// columns in Winograd form); 3-D f32 planes through the block ring up to r = 3 (6 slots of a
// tile's rows), two y-rows per warp up to r = 2; f64 keeps the register feeds and the cp.async
// ring; 1-D f32 through the block ring from r = 8 to 32 and through the padded block tile above
// (16 outputs per lane, streamed from global memory where the rows are not 16-byte aligned); 3-D
// r = 4 keeps the per-warp TMA ring. Tuning (Problem::set_tuning) changes what the plan says.
TEST(CudaLaunch, FastExplainsItsPlan) {
  // The plans come from the CUDA strategy itself, registered in every build with CUDA (no GPU
  // needed) and in none without; the launch math above is tested in every build.
  if (!build_info().cuda_compiled) GTEST_SKIP() << "built without CUDA: no 'fast' strategy";
  const Strategy* s = find_strategy("fast");
  ASSERT_NE(s, nullptr);
  std::string why;
  if (cuda_available(&why) && cuda_devices()[0].sm_major < 9)
    GTEST_SKIP() << "the expected plans are those of an sm_90 device (tensor memory accelerator)";
  const std::string big = s->plan(problem(2, {300, 300, 1}, {31, 31}));
  EXPECT_NE(big.find("compiled radius 15 (31x31 window"), std::string::npos) << big;
  EXPECT_NE(big.find("2 passes of 16 rows (the last 15)"), std::string::npos) << big;
  const std::string odd = s->plan(problem(2, {300, 300, 1}, {23, 20}));  // r 11 -> 12, 25 rows
  EXPECT_NE(odd.find("halo 11 -> compiled radius 12"), std::string::npos) << odd;
  EXPECT_NE(odd.find("2 passes of 16 rows (the last 9)"), std::string::npos) << odd;
  const std::string one = s->plan(problem(2, {300, 300, 1}, {9, 9}));
  EXPECT_EQ(one.find("passes"), std::string::npos) << one;
  // Small arrays under a mode: one launch, and the plan says which.
  const Edges reflect = Edges::all(Boundary::reflect);
  const auto moded = [&](Extents e, std::vector<std::int64_t> k) {
    return s->plan(Problem(2, e, 1, ones(k), DType::f32, Op::correlate, reflect));
  };
  EXPECT_NE(moded({8, 8, 1}, {9, 9}).find("the border pass alone"), std::string::npos);
  EXPECT_NE(moded({8, 8, 1}, {3, 3}).find("over the whole array"), std::string::npos);
  EXPECT_NE(moded({100, 100, 1}, {3, 3}).find("then a border pass"), std::string::npos);
  EXPECT_NE(moded({8, 8, 1}, {7, 7}).find("then a border pass"), std::string::npos);  // 49 taps
  EXPECT_NE(one.find("tensor memory accelerator (3 slots of 12 rows per warp"), std::string::npos)
      << one;
  EXPECT_NE(one.find("9 output rows"), std::string::npos) << one;
  EXPECT_NE(big.find("2 slots of 16 rows per warp"), std::string::npos) << big;
  const std::string mid = s->plan(problem(2, {300, 300, 1}, {11, 11}));  // r = 5
  EXPECT_NE(mid.find("128-column strip, 11 output rows of 4 columns per lane in registers "
                     "(Winograd F(2,3) along x: the lane's columns as 2 pairs, each filter row as "
                     "4 segments of 3 taps, so 32 FFMAs per filter row and input row instead of "
                     "44"),
            std::string::npos)
      << mid;
  EXPECT_NE(mid.find("tensor memory accelerator (2 slots of 8 rows per warp, one copy per slot)"),
            std::string::npos)
      << mid;
  const std::string six = s->plan(problem(2, {300, 300, 1}, {13, 13}));  // r = 6
  EXPECT_NE(six.find("256-column strip, 13 output rows of 8 columns"), std::string::npos) << six;
  EXPECT_NE(six.find("tensor memory accelerator (2 slots of 8 rows per warp, two copies of half a "
                     "strip per slot)"),
            std::string::npos)
      << six;
  EXPECT_EQ(six.find("Winograd"), std::string::npos) << six;
  EXPECT_NE(one.find("128-column strip, 9 output rows of 4 columns"), std::string::npos) << one;
  EXPECT_NE(one.find("(Winograd F(2,3) along x: the lane's columns as 2 pairs, each filter row as "
                     "3 segments of 3 taps, so 24 FFMAs per filter row and input row instead of "
                     "36"),
            std::string::npos)
      << one;
  EXPECT_NE(mid.find("not a multiple of 16 bytes: rows through a shared-memory ring (cp.async"),
            std::string::npos)
      << mid;
  EXPECT_NE(mid.find(", 8 columns per lane)"), std::string::npos) << mid;
  const std::string small = s->plan(problem(2, {300, 300, 1}, {3, 3}));
  EXPECT_NE(small.find("tensor memory accelerator (3 slots of 12 rows"), std::string::npos)
      << small;
  EXPECT_NE(small.find("not a multiple of 16 bytes: register prefetch, 4 rows in flight"),
            std::string::npos)
      << small;
  EXPECT_EQ(small.find("Winograd"), std::string::npos) << small;
  // Direct sums required: no Winograd form, and r = 4 keeps the direct kernel's ring shape.
  Problem exact = problem(2, {300, 300, 1}, {9, 9});
  EXPECT_EQ(s->summation(exact), Summation::winograd_x);
  exact.require_direct_sums();
  EXPECT_EQ(s->summation(exact), Summation::direct);
  const std::string direct = s->plan(exact);
  EXPECT_EQ(direct.find("Winograd"), std::string::npos) << direct;
  EXPECT_NE(direct.find("tensor memory accelerator (2 slots of 8 rows per warp"), std::string::npos)
      << direct;
  const std::string small64 = s->plan(problem(2, {300, 300, 1}, {3, 3}, DType::f64));
  EXPECT_NE(small64.find("next-row prefetch"), std::string::npos) << small64;
  EXPECT_EQ(small64.find("tensor memory"), std::string::npos) << small64;
  const std::string vol3 = s->plan(problem(3, {32, 32, 32}, {3, 3, 3}));
  EXPECT_NE(vol3.find("a block of 8 warps marches along z over a 128-column x 16-row tile"),
            std::string::npos)
      << vol3;
  EXPECT_NE(vol3.find("block-wide shared-memory ring filled by the tensor memory accelerator (6 "
                      "slots, one copy of 18 rows per slot"),
            std::string::npos)
      << vol3;
  EXPECT_NE(vol3.find("not a multiple of 16 bytes: register prefetch, 4 rows in flight"),
            std::string::npos)
      << vol3;
  EXPECT_NE(vol3.find("z-chunks, neighbouring tiles in step"), std::string::npos) << vol3;
  const std::string vol = s->plan(problem(3, {32, 32, 32}, {5, 5, 5}));
  EXPECT_NE(vol.find("2 y-row(s) per warp"), std::string::npos) << vol;
  EXPECT_NE(vol.find("one equal run of the tiles' planes per resident block"), std::string::npos)
      << vol;
  EXPECT_NE(vol.find("(6 slots, one copy of 20 rows per slot"), std::string::npos) << vol;
  const std::string vol7 = s->plan(problem(3, {32, 32, 32}, {7, 7, 7}));
  EXPECT_NE(vol7.find("128-column x 8-row tile (1 y-row(s) per warp"), std::string::npos) << vol7;
  const std::string vol64 = s->plan(problem(3, {32, 32, 32}, {5, 5, 5}, DType::f64));
  EXPECT_NE(vol64.find("1 y-row(s)"), std::string::npos) << vol64;
  EXPECT_NE(vol64.find("(cp.async"), std::string::npos) << vol64;
  const std::string sig = s->plan(problem(1, {5000, 1, 1}, {129}));
  EXPECT_NE(sig.find("a block of 8 warps strides over tiles of 4096 outputs, a lane computing 16 "
                     "consecutive ones from its 144 inputs read in 16-byte groups from a padded "
                     "shared-memory slot"),
            std::string::npos)
      << sig;
  EXPECT_NE(sig.find("2 slots filled by every thread with cp.async"), std::string::npos) << sig;
  EXPECT_NE(sig.find("not 16-byte aligned: a lane computes 16 consecutive outputs, streaming its "
                     "144 inputs"),
            std::string::npos)
      << sig;
  const std::string sig48 = s->plan(problem(1, {5000, 1, 1}, {90}));  // r 45 -> 48
  EXPECT_NE(sig48.find("its 112 inputs read in 16-byte groups from a padded"), std::string::npos)
      << sig48;
  const std::string sig16 = s->plan(problem(1, {5000, 1, 1}, {33}));
  EXPECT_NE(sig16.find("a block of 8 warps strides over tiles of 2048 outputs, a lane computing 8 "
                       "consecutive ones from its 40 inputs"),
            std::string::npos)
      << sig16;
  EXPECT_NE(sig16.find("(4 slots, one copy of a segment per slot"), std::string::npos) << sig16;
  EXPECT_NE(sig16.find("not 16-byte aligned: a lane computes 8 consecutive outputs from 40 inputs"),
            std::string::npos)
      << sig16;
  const std::string sig8 = s->plan(problem(1, {5000, 1, 1}, {17}));
  EXPECT_NE(sig8.find("tiles of 2048 outputs"), std::string::npos) << sig8;
  const std::string sig4 = s->plan(problem(1, {5000, 1, 1}, {9}));
  EXPECT_NE(sig4.find("a warp computes 128 consecutive outputs"), std::string::npos) << sig4;
  const std::string vol9 = s->plan(problem(3, {32, 32, 32}, {9, 9, 9}));
  EXPECT_NE(vol9.find("a warp marches along z"), std::string::npos) << vol9;
  EXPECT_NE(vol9.find("tensor memory accelerator (2 slots of 9 rows"), std::string::npos) << vol9;
  const std::string sig64 = s->plan(problem(1, {5000, 1, 1}, {65}, DType::f64));
  EXPECT_NE(sig64.find("8 consecutive outputs from 72 inputs"), std::string::npos) << sig64;
  // Rows whose pitch is not a multiple of 16 bytes take the feed without a tensor map, and the
  // plan says only that.
  const std::string odd_pitch = s->plan(problem(2, {300, 301, 1}, {11, 11}));
  EXPECT_NE(odd_pitch.find("; rows through a shared-memory ring (cp.async"), std::string::npos)
      << odd_pitch;
  EXPECT_EQ(odd_pitch.find("tensor memory"), std::string::npos) << odd_pitch;
  EXPECT_EQ(odd_pitch.find("Winograd"), std::string::npos) << odd_pitch;
  // Tuning changes the plan (and the summation) as it changes the kernels.
  Problem tuned = problem(2, {300, 300, 1}, {9, 9});
  FastTuning t;
  t.winograd = false;
  tuned.set_tuning(t);
  EXPECT_EQ(s->summation(tuned), Summation::direct);
  const std::string no_wino = s->plan(tuned);
  EXPECT_EQ(no_wino.find("Winograd"), std::string::npos) << no_wino;
  EXPECT_NE(no_wino.find("(2 slots of 8 rows per warp"), std::string::npos) << no_wino;
  t = FastTuning{};
  t.feed = FastFeed::ring;
  tuned.set_tuning(t);
  const std::string ring = s->plan(tuned);
  EXPECT_NE(ring.find("; rows through a shared-memory ring (cp.async"), std::string::npos) << ring;
  EXPECT_EQ(ring.find("tensor memory"), std::string::npos) << ring;
  t = FastTuning{};
  t.rows_3d = 4;
  t.runs = true;
  t.slots = 3;
  Problem vol_tuned = problem(3, {32, 32, 32}, {3, 3, 3});
  vol_tuned.set_tuning(t);
  const std::string vol4 = s->plan(vol_tuned);
  EXPECT_NE(vol4.find("128-column x 32-row tile (4 y-row(s) per warp"), std::string::npos) << vol4;
  EXPECT_NE(vol4.find("one equal run of the tiles' planes per resident block"), std::string::npos)
      << vol4;
  EXPECT_NE(vol4.find("(3 slots, one copy of 34 rows per slot"), std::string::npos) << vol4;
  // A halo beyond every compiled radius: the plan is the refusal's reason.
  const std::string huge = s->plan(problem(2, {300, 300, 1}, {41, 41}));
  EXPECT_NE(huge.find("compiled for halos up to 15"), std::string::npos) << huge;
}

}  // namespace
}  // namespace halo::cuda
