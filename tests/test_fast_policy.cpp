// The `fast` strategy's policy (src/cuda/fast/policy.hpp) without a GPU: fast_policy() on
// representative problems and made-up devices gives the measured defaults, each FastTuning field
// changes the decision it names (and only where a kernel for it is compiled), out-of-range tuning
// is an error naming the field, and the chunking helpers split the work as documented. Pure C++:
// runs in every build, with or without CUDA.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/parse.hpp"
#include "cuda/fast/policy.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"
#include "support.hpp"

namespace halo::cuda::fast {
namespace {

const DeviceFacts kH100{};  // 132 SMs, sm_90, tensor maps

DeviceFacts ampere() {
  DeviceFacts d;
  d.multiprocessors = 108;
  d.compute_major = 8;
  return d;
}

Filter ones(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Filter(std::vector<double>(static_cast<std::size_t>(n), 1.0), shape);
}

// The policy of a rank-`rank` problem of extents `ext` with an odd cube of width 2r+1.
struct Ask {
  int rank = 2;
  Extents ext{300, 300, 1};
  int r = 1;
  DType dtype = DType::f32;
  std::string tune;  // KEY=VALUE[,...] or empty
  DeviceFacts dev{};
  Alignment aligned{};
  bool direct = false;
  std::int64_t batch = 1;
};

FastPolicy policy(const Ask& a) {
  std::vector<std::int64_t> k(static_cast<std::size_t>(a.rank), 2 * a.r + 1);
  Problem p(a.rank, a.ext, a.batch, ones(k), a.dtype);
  p.require_direct_sums(a.direct);
  if (!a.tune.empty()) p.set_tuning(detail::parse_fast_tuning(a.tune, "tune"));
  return fast_policy(p, a.dev, a.aligned);
}

// The policy of a rank-`rank` problem of extents `ext` and halo r (the problem every case below
// asks about, with its tuning, dtype, alignment, device and direct-sums choice).
FastPolicy ask(int rank, Extents ext, int r, const std::string& tune, DType t, Alignment al,
               DeviceFacts dev, bool direct = false) {
  Ask a;
  a.rank = rank;
  a.ext = ext;
  a.r = r;
  a.dtype = t;
  a.tune = tune;
  a.aligned = al;
  a.dev = dev;
  a.direct = direct;
  return policy(a);
}
FastPolicy p1(int r, const std::string& tune = {}, DType t = DType::f32,
              std::int64_t n = 5000, Alignment al = {}, DeviceFacts dev = {}) {
  return ask(1, {n, 1, 1}, r, tune, t, al, dev);
}
FastPolicy p2(int r, const std::string& tune = {}, DType t = DType::f32,
              std::int64_t nx = 300, Alignment al = {}, DeviceFacts dev = {}, bool direct = false) {
  return ask(2, {300, nx, 1}, r, tune, t, al, dev, direct);
}
FastPolicy p3(int r, const std::string& tune = {}, DType t = DType::f32,
              std::int64_t nx = 32, Alignment al = {}, DeviceFacts dev = {}) {
  return ask(3, {32, 32, nx}, r, tune, t, al, dev);
}

const Alignment kUnaligned{false, false};

// ---------------------------------------------------------------------------------------------
TEST(FastPolicy, CompiledRadii) {
  EXPECT_EQ(compiled_radius(1, DType::f32, 9), 12);
  EXPECT_EQ(compiled_radius(1, DType::f32, 45), 48);
  EXPECT_EQ(compiled_radius(1, DType::f32, 65), -1);
  EXPECT_EQ(compiled_radius(1, DType::f64, 9), 16);
  EXPECT_EQ(compiled_radius(1, DType::f64, 33), -1);
  EXPECT_EQ(compiled_radius(2, DType::f32, 9), 10);
  EXPECT_EQ(compiled_radius(2, DType::f32, 13), 15);
  EXPECT_EQ(compiled_radius(2, DType::f64, 9), -1);
  EXPECT_EQ(compiled_radius(3, DType::f32, 4), 4);
  EXPECT_EQ(compiled_radius(3, DType::f64, 4), -1);
  const FastPolicy none = p2(16);
  EXPECT_EQ(none.halo, 16);
  EXPECT_EQ(none.radius, -1);
  const FastPolicy even = policy(Ask{2, {50, 60, 1}, 0});  // 1x1 filter: r = 0
  EXPECT_EQ(even.radius, 0);
}

TEST(FastPolicy, OneDimensionalDefaults) {
  // r <= 8 below the block ring: the strip layout, 4 outputs per lane.
  FastPolicy p = p1(4);
  EXPECT_EQ(p.layout, Layout1D::strip);
  EXPECT_EQ(p.outputs_per_lane, 4);
  EXPECT_TRUE(p.vec);
  // r = 8 .. 32 (f32, aligned, sm_90): the block ring, 8 outputs per lane, 4 slots, stores
  // streamed.
  for (int r : {8, 9, 16, 24, 32}) {
    p = p1(r);
    EXPECT_EQ(p.layout, Layout1D::block_tile) << r;
    EXPECT_EQ(p.outputs_per_lane, 8) << r;
    EXPECT_EQ(p.slots, 4) << r;
    EXPECT_EQ(p.hints, 2) << r;
  }
  EXPECT_EQ(p1(9).radius, 12);
  // r >= 48: the padded tile, 16 outputs per lane, 2 slots.
  for (int r : {45, 48, 64}) {
    p = p1(r);
    EXPECT_EQ(p.layout, Layout1D::padded_tile) << r;
    EXPECT_EQ(p.outputs_per_lane, 16) << r;
    EXPECT_EQ(p.slots, 2) << r;
  }
  // Unaligned arrays or rows: the register layouts; held 8 (next item prefetched, but not at
  // r = 24) below r = 24, streamed 16 from there (no prefetch).
  p = p1(16, {}, DType::f32, 5000, kUnaligned);
  EXPECT_EQ(p.layout, Layout1D::held);
  EXPECT_EQ(p.outputs_per_lane, 8);
  EXPECT_TRUE(p.prefetch);
  EXPECT_FALSE(p.vec);
  p = p1(16, {}, DType::f32, 5001);  // nx % 4 != 0
  EXPECT_EQ(p.layout, Layout1D::held);
  EXPECT_FALSE(p.vec);
  p = p1(16, {}, DType::f32, 5000, Alignment{true, false});  // the output is offset
  EXPECT_EQ(p.layout, Layout1D::held);
  for (int r : {24, 32, 64}) {
    p = p1(r, {}, DType::f32, 5000, kUnaligned);
    EXPECT_EQ(p.layout, Layout1D::streamed) << r;
    EXPECT_EQ(p.outputs_per_lane, 16) << r;
    EXPECT_FALSE(p.prefetch) << r;
  }
  p = p1(12, {}, DType::f32, 5000, kUnaligned);
  EXPECT_EQ(p.layout, Layout1D::held);
  EXPECT_TRUE(p.prefetch);
  // Without the tensor memory accelerator the block ring cannot run; the padded tile (cp.async)
  // still does.
  EXPECT_EQ(p1(16, {}, DType::f32, 5000, {}, ampere()).layout, Layout1D::held);
  EXPECT_EQ(p1(64, {}, DType::f32, 5000, {}, ampere()).layout, Layout1D::padded_tile);
  // f64: the strip, then held 8 without prefetch.
  EXPECT_EQ(p1(4, {}, DType::f64).layout, Layout1D::strip);
  p = p1(16, {}, DType::f64);
  EXPECT_EQ(p.layout, Layout1D::held);
  EXPECT_EQ(p.outputs_per_lane, 8);
  EXPECT_FALSE(p.prefetch);
  EXPECT_EQ(p1(32, {}, DType::f64).layout, Layout1D::held);
  // 1-D sums directly.
  EXPECT_EQ(p1(16).summation(), Summation::direct);
}

TEST(FastPolicy, TwoDimensionalDefaults) {
  // f32, aligned rows of a 16-byte pitch on sm_90: the TMA ring everywhere.
  FastPolicy p = p2(1);
  EXPECT_TRUE(p.tensor_map);
  EXPECT_EQ(p.path.feed, Feed::kTma);
  EXPECT_EQ(p.path.columns, 4);
  EXPECT_EQ(p.slots, 3);
  EXPECT_EQ(p.box_rows, 12);
  EXPECT_EQ(p.box_copies, 1);
  EXPECT_EQ(p.l2_promotion, 256);
  EXPECT_FALSE(p.winograd);
  EXPECT_EQ(p.passes, 1);
  EXPECT_EQ(p.pass_rows, 3);
  // What runs without a tensor map: the register prefetch 4 rows deep at r = 1.
  EXPECT_EQ(p.fallback.feed, Feed::kPrefetch);
  EXPECT_EQ(p.fallback.depth, 4);
  p = p2(2);
  EXPECT_EQ(p.slots, 3);
  EXPECT_EQ(p.fallback.feed, Feed::kPrefetch);
  EXPECT_EQ(p.fallback.depth, 1);
  p = p2(3);
  EXPECT_FALSE(p.winograd);
  EXPECT_EQ(p.slots, 3);
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  EXPECT_EQ(p.fallback.columns, 4);
  // r = 4, 5, 7: the Winograd columns; r = 4 then keeps the deep ring (3 x 12).
  p = p2(4);
  EXPECT_TRUE(p.winograd);
  EXPECT_EQ(p.summation(), Summation::winograd_x);
  EXPECT_EQ(p.path.columns, 4);
  EXPECT_EQ(p.slots, 3);
  EXPECT_EQ(p.box_rows, 12);
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  p = p2(5);
  EXPECT_TRUE(p.winograd);
  EXPECT_EQ(p.path.columns, 4);
  EXPECT_EQ(p.slots, 2);
  EXPECT_EQ(p.box_rows, 8);
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  EXPECT_EQ(p.fallback.columns, 8);
  // r = 6: 8 columns per lane, two boxes per slot; no Winograd.
  p = p2(6);
  EXPECT_FALSE(p.winograd);
  EXPECT_EQ(p.path.columns, 8);
  EXPECT_EQ(p.box_copies, 2);
  EXPECT_EQ(p.fallback.columns, 8);
  EXPECT_TRUE(p2(7).winograd);
  EXPECT_FALSE(p2(8).winograd);
  EXPECT_EQ(p2(8).path.columns, 4);
  // Direct sums required: no Winograd; r = 4 takes the direct kernel's ring (2 x 8), r = 5 its 8
  // columns.
  p = p2(4, {}, DType::f32, 300, {}, {}, true);
  EXPECT_FALSE(p.winograd);
  EXPECT_EQ(p.summation(), Summation::direct);
  EXPECT_EQ(p.slots, 2);
  EXPECT_EQ(p.box_rows, 8);
  EXPECT_EQ(p.path.columns, 4);
  p = p2(5, {}, DType::f32, 300, {}, {}, true);
  EXPECT_EQ(p.path.columns, 8);
  EXPECT_EQ(p.box_copies, 2);
  // Passes of 16 rows from r = 12 (the last one the rows left), 2 slots of 16 rows.
  p = p2(11);  // -> 12
  EXPECT_EQ(p.radius, 12);
  EXPECT_EQ(p.pass_rows, 16);
  EXPECT_EQ(p.passes, 2);
  EXPECT_EQ(p.last_pass_rows, 9);
  EXPECT_EQ(p.box_rows, 16);
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  p = p2(15);
  EXPECT_EQ(p.passes, 2);
  EXPECT_EQ(p.last_pass_rows, 15);
  p = p2(9);  // -> 10: one pass
  EXPECT_EQ(p.radius, 10);
  EXPECT_EQ(p.passes, 1);
  EXPECT_EQ(p.pass_rows, 21);
  // f64: no TMA ring; prefetch up to r = 2, the ring from r = 3 (4 columns).
  p = p2(1, {}, DType::f64);
  EXPECT_EQ(p.path.feed, Feed::kPrefetch);
  EXPECT_EQ(p.path.depth, 1);
  EXPECT_EQ(p2(3, {}, DType::f64).path.feed, Feed::kRing);
  EXPECT_EQ(p2(5, {}, DType::f64).path.columns, 4);
  EXPECT_FALSE(p2(4, {}, DType::f64).winograd);
  // No tensor map (unaligned base, a pitch not a multiple of 16 bytes, no TMA, no encoder,
  // coordinates past 2^31): the feed without one, and direct sums.
  DeviceFacts no_encoder;
  no_encoder.tensor_map_encoder = false;
  for (const FastPolicy& q : {p2(4, {}, DType::f32, 300, Alignment{false, true}),
                              p2(4, {}, DType::f32, 301), p2(4, {}, DType::f32, 300, {}, ampere()),
                              p2(4, {}, DType::f32, 300, {}, no_encoder)}) {
    EXPECT_FALSE(q.tensor_map);
    EXPECT_EQ(q.path.feed, Feed::kRing);
    EXPECT_FALSE(q.winograd);
    EXPECT_EQ(q.summation(), Summation::direct);
    EXPECT_EQ(q.slots, 0);
  }
  // Only the input's base matters to the tensor map (the output is stored by the lanes).
  EXPECT_TRUE(p2(4, {}, DType::f32, 300, Alignment{true, false}).tensor_map);
  Ask huge;
  huge.ext = {1, std::int64_t(1) << 31, 1};
  EXPECT_FALSE(policy(huge).tensor_map);
  huge.ext = {1, (std::int64_t(1) << 31) - 4, 1};
  EXPECT_TRUE(policy(huge).tensor_map);
}

TEST(FastPolicy, ThreeDimensionalDefaults) {
  // f32 r = 1..3: the block ring, 6 slots of the tile's rows and halo, 64-byte L2 promotion,
  // both cache hints; two rows per warp up to r = 2; z-chunks at r = 1, equal runs above.
  FastPolicy p = p3(1);
  EXPECT_EQ(p.path.feed, Feed::kBlock);
  EXPECT_EQ(p.path.rows_per_warp, 2);
  EXPECT_EQ(p.slots, 6);
  EXPECT_EQ(p.box_rows, 8 * 2 + 2);
  EXPECT_EQ(p.l2_promotion, 64);
  EXPECT_EQ(p.hints, 3);
  EXPECT_FALSE(p.runs);
  EXPECT_EQ(p.fallback.feed, Feed::kPrefetch);
  EXPECT_EQ(p.fallback.depth, 4);
  EXPECT_EQ(p.fallback.rows_per_warp, 2);
  p = p3(2);
  EXPECT_EQ(p.path.rows_per_warp, 2);
  EXPECT_EQ(p.box_rows, 20);
  EXPECT_TRUE(p.runs);
  EXPECT_EQ(p.shortest_run, 16);
  EXPECT_EQ(p.edge_cost, 30);  // a tile-plane at a y edge, with modes: 30% more in the runs
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  p = p3(3);
  EXPECT_EQ(p.path.feed, Feed::kBlock);
  EXPECT_EQ(p.path.rows_per_warp, 1);
  EXPECT_EQ(p.box_rows, 14);
  EXPECT_EQ(p.shortest_run, 24);
  EXPECT_EQ(p.edge_cost, 3);
  // Under the modes, the default layouts up to r = 2 set the x ghosts in registers (their
  // kernels are compiled); r = 3, and the layouts only tuning reaches, from the table.
  for (const int r : {1, 2}) {
    const FastPolicy d = p3(r);
    EXPECT_TRUE(x_ghosts_in_registers(r, d.path.rows_per_warp, d.runs)) << "r = " << r;
    const FastPolicy t = p3(r, "rows_3d=4");
    EXPECT_FALSE(x_ghosts_in_registers(r, t.path.rows_per_warp, t.runs)) << "r = " << r;
    const FastPolicy u = p3(r, r == 1 ? "runs=1" : "runs=0");
    EXPECT_FALSE(x_ghosts_in_registers(r, u.path.rows_per_warp, u.runs)) << "r = " << r;
  }
  EXPECT_FALSE(x_ghosts_in_registers(3, p.path.rows_per_warp, p.runs));
  // r = 4: the per-warp TMA ring, 2 slots of 2R + 1 rows, 256-byte promotion.
  p = p3(4);
  EXPECT_EQ(p.path.feed, Feed::kTma);
  EXPECT_EQ(p.slots, 2);
  EXPECT_EQ(p.box_rows, 9);
  EXPECT_EQ(p.l2_promotion, 256);
  EXPECT_EQ(p.fallback.feed, Feed::kRing);
  // r = 0: loaded as needed.
  EXPECT_EQ(p3(0).path.feed, Feed::kDirect);
  // f64: prefetch at r = 1 (one row), the ring from r = 2, one row per warp.
  p = p3(1, {}, DType::f64);
  EXPECT_EQ(p.path.feed, Feed::kPrefetch);
  EXPECT_EQ(p.path.depth, 1);
  EXPECT_EQ(p.path.rows_per_warp, 1);
  EXPECT_EQ(p3(2, {}, DType::f64).path.feed, Feed::kRing);
  // Without a tensor map: the fallback.
  p = p3(2, {}, DType::f32, 30);  // pitch 120 bytes
  EXPECT_EQ(p.path.feed, Feed::kRing);
  EXPECT_EQ(p.path.rows_per_warp, 2);
  EXPECT_EQ(p.slots, 0);
  EXPECT_EQ(p3(1, {}, DType::f32, 32, kUnaligned).path.feed, Feed::kPrefetch);
  EXPECT_EQ(p3(4, {}, DType::f32, 32, {}, ampere()).path.feed, Feed::kRing);
  EXPECT_EQ(p3(3).summation(), Summation::direct);
}

// ---------------------------------------------------------------------------------------------
// Each field of FastTuning changes the decision it names.
TEST(FastPolicy, TuningFeed) {
  EXPECT_EQ(p2(2, "feed=ring").path.feed, Feed::kRing);
  EXPECT_EQ(p2(2, "feed=direct").path.feed, Feed::kDirect);
  EXPECT_EQ(p2(2, "feed=prefetch").path.feed, Feed::kPrefetch);
  EXPECT_EQ(p2(2, "feed=tma", DType::f64).path.feed, Feed::kTma);  // f64 too, where forced
  EXPECT_EQ(p2(2, "feed=block").path.feed, Feed::kTma);  // 2D's nearest
  EXPECT_EQ(p3(1, "feed=tma").path.feed, Feed::kTma);
  EXPECT_EQ(p3(1, "feed=tma").box_rows, 2 + 2);
  EXPECT_EQ(p3(4, "feed=block").path.feed, Feed::kBlock);
  EXPECT_EQ(p3(4, "feed=ring").path.feed, Feed::kRing);
  EXPECT_EQ(p3(1, "feed=block", DType::f64).path.feed, Feed::kPrefetch);  // no f64 block ring
  EXPECT_EQ(p1(4, "feed=block").layout, Layout1D::block_tile);
  EXPECT_EQ(p1(16, "feed=ring").layout, Layout1D::held);
  EXPECT_EQ(p1(64, "feed=ring").layout, Layout1D::streamed);  // not the padded tile either
  // The fallback keeps a forced classic feed.
  EXPECT_EQ(p2(2, "feed=direct").fallback.feed, Feed::kDirect);
}

TEST(FastPolicy, TuningPrefetchAndDepth) {
  EXPECT_EQ(p2(2, "prefetch=0").path.feed, Feed::kDirect);
  EXPECT_EQ(p2(3, "prefetch=1").path.feed, Feed::kPrefetch);
  EXPECT_EQ(p3(2, "prefetch=1").path.feed, Feed::kPrefetch);
  FastPolicy p = p1(24, "prefetch=1", DType::f32, 5000, kUnaligned);
  EXPECT_EQ(p.layout, Layout1D::streamed);
  EXPECT_TRUE(p.prefetch);
  EXPECT_EQ(p1(24, "prefetch=1").layout, Layout1D::streamed);  // not the block ring
  EXPECT_FALSE(p1(12, "prefetch=0", DType::f32, 5000, kUnaligned).prefetch);
  EXPECT_EQ(p2(2, "feed=prefetch,depth=3").path.depth, 3);
  EXPECT_EQ(p2(4, "feed=prefetch,depth=2").path.depth, 2);
  EXPECT_EQ(p2(5, "feed=prefetch,depth=2").path.depth, 1);  // compiled up to r = 4
  EXPECT_EQ(p2(2, "feed=prefetch,depth=3", DType::f64).path.depth, 1);
  EXPECT_EQ(p2(1, "depth=2").fallback.depth, 2);
  EXPECT_EQ(p3(1, "feed=prefetch,depth=2").path.depth, 2);   // 4 rows a plane
  EXPECT_EQ(p3(1, "feed=prefetch,depth=3").path.depth, 1);   // does not divide them
  EXPECT_EQ(p3(1, "feed=prefetch,depth=3,rows_3d=1").path.depth, 3);
  EXPECT_EQ(p3(3, "feed=prefetch,depth=2").path.depth, 1);
}

TEST(FastPolicy, TuningRingShapes) {
  FastPolicy p = p2(2, "slots=5,box_rows=7");
  EXPECT_EQ(p.slots, 5);
  EXPECT_EQ(p.box_rows, 7);
  EXPECT_EQ(p2(7, "slots=16").slots, 16);
  EXPECT_EQ(p3(4, "slots=10").slots, 10);  // the per-warp TMA ring
  EXPECT_EQ(p3(1, "slots=3").slots, 3);    // the block ring
  EXPECT_EQ(p3(1, "slots=10").slots, 6);   // it holds 8: the default
  EXPECT_EQ(p1(16, "slots=6").slots, 6);
  EXPECT_EQ(p1(16, "slots=12").slots, 4);
  EXPECT_EQ(p1(48, "slots=3").slots, 3);   // the padded tile
  EXPECT_EQ(p1(48, "slots=6").slots, 4);   // it holds 4
  EXPECT_EQ(p2(2, "l2_promotion=64").l2_promotion, 64);
  EXPECT_EQ(p3(1, "l2_promotion=256").l2_promotion, 256);
  EXPECT_EQ(p1(16, "hints=1").hints, 1);
  EXPECT_EQ(p3(1, "hints=0").hints, 0);
}

TEST(FastPolicy, TuningColumnsAndLayouts) {
  FastPolicy p = p2(4, "winograd=0,tx=8");
  EXPECT_EQ(p.path.columns, 8);
  EXPECT_EQ(p.box_copies, 2);
  EXPECT_EQ(p2(4, "tx=8").path.columns, 4);  // the Winograd columns take 4
  EXPECT_EQ(p2(6, "tx=4").path.columns, 4);
  EXPECT_EQ(p2(2, "tx=8").path.columns, 4);  // not compiled at r = 2
  EXPECT_EQ(p2(5, "feed=ring,tx=4").path.columns, 4);
  EXPECT_EQ(p2(6, "feed=ring").path.columns, 8);
  EXPECT_EQ(p2(4, "feed=ring,tx=8").path.columns, 4);  // the ring's 8: r = 5, 6
  EXPECT_EQ(p1(16, "tx_1d=16").outputs_per_lane, 16);  // block ring, from r = 12
  EXPECT_EQ(p1(8, "tx_1d=16").outputs_per_lane, 8);
  p = p1(16, "tx_1d=32", DType::f32, 5000, kUnaligned);
  EXPECT_EQ(p.layout, Layout1D::streamed);
  EXPECT_EQ(p.outputs_per_lane, 32);
  p = p1(32, "tx_1d=8", DType::f32, 5000, kUnaligned);
  EXPECT_EQ(p.layout, Layout1D::held);
  EXPECT_TRUE(p.prefetch);
  EXPECT_EQ(p1(48, "tx_1d=16").layout, Layout1D::streamed);  // another layout: no padded tile
  EXPECT_EQ(p1(32, "pad_1d=1").layout, Layout1D::padded_tile);
  EXPECT_EQ(p1(16, "pad_1d=1").layout, Layout1D::block_tile);  // not compiled at 16
  EXPECT_EQ(p1(48, "pad_1d=0").layout, Layout1D::streamed);
  EXPECT_EQ(p1(48, "pad_1d=1", DType::f32, 5000, kUnaligned).layout, Layout1D::streamed);
  EXPECT_EQ(p1(16, "tx_1d=16", DType::f64).outputs_per_lane, 8);
}

TEST(FastPolicy, TuningRowsRunsAndChunks) {
  FastPolicy p = p3(1, "rows_3d=4");
  EXPECT_EQ(p.path.rows_per_warp, 4);
  EXPECT_EQ(p.box_rows, 8 * 4 + 2);
  EXPECT_EQ(p.fallback.rows_per_warp, 2);  // the classic kernels: two at most
  EXPECT_EQ(p3(1, "rows_3d=4", DType::f32, 32, kUnaligned).path.rows_per_warp, 2);
  EXPECT_EQ(p3(3, "rows_3d=4").path.rows_per_warp, 2);
  EXPECT_EQ(p3(4, "rows_3d=4").path.rows_per_warp, 2);
  EXPECT_EQ(p3(1, "rows_3d=1").path.rows_per_warp, 1);
  EXPECT_EQ(p3(3, "rows_3d=2").path.rows_per_warp, 2);
  EXPECT_EQ(p3(1, "rows_3d=2", DType::f64).path.rows_per_warp, 1);
  EXPECT_TRUE(p3(1, "runs=1").runs);
  EXPECT_FALSE(p3(2, "runs=0").runs);
  EXPECT_EQ(p3(2, "edge_cost=0").edge_cost, 0);
  EXPECT_EQ(p3(3, "edge_cost=40").edge_cost, 40);
  EXPECT_EQ(p3(2, "chunk=5").chunk, 5);
  EXPECT_EQ(p2(2, "chunk=7").chunk, 7);
  EXPECT_EQ(p2(2).chunk, 0);
}

TEST(FastPolicy, TuningPassesAndWinograd) {
  FastPolicy p = p2(5, "pass_rows=8");
  EXPECT_EQ(p.pass_rows, 8);
  EXPECT_EQ(p.passes, 2);
  EXPECT_EQ(p.last_pass_rows, 8);  // a tuning height: the last pass zero-padded
  EXPECT_FALSE(p.winograd);        // one pass only
  p = p2(10, "pass_rows=12");
  EXPECT_EQ(p.passes, 2);
  EXPECT_EQ(p2(8, "pass_rows=12").passes, 1);   // 12 and 16: compiled from r = 10
  EXPECT_EQ(p2(8, "pass_rows=12", DType::f64).passes, 1);
  EXPECT_EQ(p2(15, "pass_rows=0").passes, 1);
  EXPECT_EQ(p2(15, "pass_rows=8").passes, 4);
  EXPECT_EQ(p2(3, "pass_rows=8").passes, 1);    // 7 rows: nothing to split
  EXPECT_FALSE(p2(4, "winograd=0").winograd);
  EXPECT_EQ(p2(4, "winograd=0").slots, 2);      // r = 4 direct: 2 x 8
  EXPECT_TRUE(p2(3, "winograd=1").winograd);
  p = p2(6, "winograd=1");
  EXPECT_TRUE(p.winograd);
  EXPECT_EQ(p.path.columns, 4);
  EXPECT_FALSE(p2(8, "winograd=1").winograd);   // not compiled at 8
  EXPECT_FALSE(p2(4, "winograd=1", DType::f32, 300, {}, {}, true).winograd);  // direct sums
  EXPECT_FALSE(p2(4, "winograd=1,feed=ring").winograd);
}

// Whatever the tuning, the policy picks only compiled kernels and consistent shapes: checked
// for every variant the GPU tests run, every compiled radius, both dtypes, aligned or not.
TEST(FastPolicy, EveryVariantPicksCompiledKernels) {
  for (const std::string& v : test::fast_tuning_variants())
    for (int rank = 1; rank <= 3; ++rank)
      for (DType t : {DType::f32, DType::f64})
        for (int r = 0; r <= 64; ++r) {
          if (compiled_radius(rank, t, r) != r) continue;
          for (const Alignment al : {Alignment{}, kUnaligned}) {
            Ask a;
            a.rank = rank;
            a.ext = rank == 1 ? Extents{4096, 1, 1} : rank == 2 ? Extents{64, 256, 1}
                                                                : Extents{16, 16, 64};
            a.r = r;
            a.dtype = t;
            a.tune = v;
            a.aligned = al;
            const FastPolicy p = policy(a);
            SCOPED_TRACE(v + " rank " + std::to_string(rank) + " " + to_string(t) + " r " +
                         std::to_string(r) + (al.input ? " aligned" : " unaligned"));
            ASSERT_EQ(p.radius, r);
            const bool f32 = t == DType::f32;
            if (rank == 1) {
              if (p.layout == Layout1D::block_tile) {
                EXPECT_TRUE(f32 && tile_compiled_1d(r) && p.vec);
                EXPECT_TRUE(p.outputs_per_lane == 8 || (p.outputs_per_lane == 16 && r >= 12));
                EXPECT_TRUE(p.slots >= 2 && p.slots <= kBlockRingSlots);
              } else if (p.layout == Layout1D::padded_tile) {
                EXPECT_TRUE(f32 && pad_compiled_1d(r) && p.vec);
                EXPECT_TRUE(p.slots >= 2 && p.slots <= kPadMaxSlots);
              } else if (p.layout == Layout1D::strip) {
                EXPECT_LE(r, kStripMaxR);
              } else if (p.layout == Layout1D::streamed) {
                EXPECT_TRUE(f32 && r > kStripMaxR);
                EXPECT_TRUE(p.outputs_per_lane == 16 || p.outputs_per_lane == 32);
                if (p.prefetch) EXPECT_TRUE(p.outputs_per_lane == 16 && r <= kWidePfLimit);
              } else {
                EXPECT_GT(r, kStripMaxR);
                EXPECT_EQ(p.outputs_per_lane, kTxWide);
                if (p.prefetch) EXPECT_TRUE(f32 && r <= kWidePfLimit);
              }
              if (!al.input) EXPECT_TRUE(p.layout != Layout1D::block_tile &&
                                         p.layout != Layout1D::padded_tile);
              continue;
            }
            for (const RowPath& h : {p.path, p.fallback}) {
              if (h.feed == Feed::kBlock) EXPECT_TRUE(rank == 3 && f32 && r >= 1);
              if (h.columns == 8)
                EXPECT_TRUE(f32 && rank == 2 &&
                            ((h.feed == Feed::kTma && wide_tma_compiled(r)) ||
                             (h.feed == Feed::kRing && wide_ring_compiled(r))));
              else
                EXPECT_EQ(h.columns, kTx);
              if (h.depth > 1)
                EXPECT_TRUE(f32 && h.feed == Feed::kPrefetch &&
                            (rank == 2 ? r >= 1 && r <= 4
                                       : r >= 1 && r <= 2 && (2 * r + h.rows_per_warp) %
                                                                     h.depth == 0));
              if (h.rows_per_warp == 4)
                EXPECT_TRUE(rank == 3 && f32 && h.feed == Feed::kBlock && r >= 1 && r <= 2);
              if (h.rows_per_warp == 2) EXPECT_TRUE(rank == 3 && f32 && r >= 1);
            }
            EXPECT_NE(p.fallback.feed, Feed::kTma);
            EXPECT_NE(p.fallback.feed, Feed::kBlock);
            if (!p.tensor_map) EXPECT_EQ(p.path.feed, p.fallback.feed);
            if (p.path.feed == Feed::kTma || p.path.feed == Feed::kBlock) {
              EXPECT_TRUE(p.tensor_map);
              EXPECT_GE(p.slots, 2);
              EXPECT_GE(p.box_rows, 1);
            }
            if (p.winograd)
              EXPECT_TRUE(f32 && rank == 2 && p.path.feed == Feed::kTma && p.passes == 1 &&
                          wino_compiled(r, 2 * r + 1) && p.path.columns == kTx);
            if (rank == 2 && p.passes > 1)
              EXPECT_TRUE(passes_compiled(t, r, p.pass_rows));
          }
        }
}

// ---------------------------------------------------------------------------------------------
TEST(FastTuning, OutOfRangeIsAnErrorNamingTheField) {
  Problem p(2, {10, 10, 1}, 1, ones({3, 3}), DType::f32);
  auto error = [&](const FastTuning& t) { return test::error_of([&] { p.set_tuning(t); }); };
  auto expect = [&](const FastTuning& t, const std::string& field, const std::string& range) {
    const std::string e = error(t);
    EXPECT_NE(e.find("tuning." + field + " = "), std::string::npos) << e;
    EXPECT_NE(e.find("expected " + range), std::string::npos) << e;
  };
  FastTuning t;
  t.depth = 0;
  expect(t, "depth", "1..4");
  t = {};
  t.depth = 5;
  expect(t, "depth", "1..4");
  t = {};
  t.slots = 1;
  expect(t, "slots", "2..16");
  t = {};
  t.slots = 17;
  expect(t, "slots", "2..16");
  t = {};
  t.box_rows = 0;
  expect(t, "box_rows", "1..16");
  t = {};
  t.tx = 6;
  expect(t, "tx", "4 or 8");
  t = {};
  t.tx_1d = 4;
  expect(t, "tx_1d", "8, 16 or 32");
  t = {};
  t.rows_3d = 3;
  expect(t, "rows_3d", "1, 2 or 4");
  t = {};
  t.hints = 4;
  expect(t, "hints", "0..3");
  t = {};
  t.chunk = 0;
  expect(t, "chunk", "1..1073741824");
  t = {};
  t.pass_rows = 10;
  expect(t, "pass_rows", "0, 8, 12 or 16");
  t = {};
  t.l2_promotion = 32;
  expect(t, "l2_promotion", "0, 64, 128 or 256");
  t = {};
  t.edge_cost = 101;
  expect(t, "edge_cost", "0..100");
  t = {};
  t.feed = FastFeed(7);
  expect(t, "feed", "direct, prefetch, ring, tma or block");
  // The tuning stays as it was after a refusal; a valid one is taken.
  EXPECT_TRUE(p.tuning().empty());
  t = {};
  t.slots = 16;
  t.winograd = false;
  p.set_tuning(t);
  EXPECT_EQ(p.tuning().slots, 16);
  EXPECT_FALSE(p.tuning().empty());
  // apply() checks Options::tuning whatever the strategy.
  std::vector<float> in(100, 1.0f), out(100);
  Options opt;
  opt.strategy = "reference";
  opt.tuning.hints = -1;
  const std::string e = test::error_of([&] {
    apply(view(static_cast<const float*>(in.data()), {10, 10}), view(out.data(), {10, 10}),
          ones({3, 3}), opt);
  });
  EXPECT_NE(e.find("tuning.hints = -1 is out of range: expected 0..3"), std::string::npos) << e;
}

TEST(FastTuning, ParsesKeyValueListsStrictly) {
  const FastTuning t = detail::parse_fast_tuning(
      "feed=tma,slots=2,box_rows=3,winograd=0,tx_1d=16,l2_promotion=64", "--tune");
  EXPECT_EQ(t.feed, FastFeed::tma);
  EXPECT_EQ(t.slots, 2);
  EXPECT_EQ(t.box_rows, 3);
  EXPECT_EQ(t.winograd, false);
  EXPECT_EQ(t.tx_1d, 16);
  EXPECT_EQ(t.l2_promotion, 64);
  EXPECT_FALSE(t.depth.has_value());
  EXPECT_EQ(detail::tuning_string(t),
            "feed=tma,slots=2,box_rows=3,tx_1d=16,winograd=0,l2_promotion=64");
  EXPECT_EQ(detail::tuning_string(FastTuning{}), "defaults");
  // Every variant of the GPU tests parses, and prints back as given.
  for (const std::string& v : test::fast_tuning_variants())
    EXPECT_EQ(detail::tuning_string(detail::parse_fast_tuning(v, "variant")), v);
  auto error = [](const std::string& text) {
    return test::error_of([&] { detail::parse_fast_tuning(text, "--tune"); });
  };
  EXPECT_NE(error("tx=5").find("--tune tx=5: expected 4 or 8"), std::string::npos) << error("tx=5");
  EXPECT_NE(error("feed=warp").find("--tune feed=warp: expected direct, prefetch, ring, tma or "
                                    "block"),
            std::string::npos);
  EXPECT_NE(error("winograd=2").find("--tune winograd=2: expected 0 or 1"), std::string::npos);
  EXPECT_NE(error("slots=0x4").find("--tune slots=0x4: expected 2..16"), std::string::npos);
  EXPECT_NE(error("slots=").find("--tune slots=: expected 2..16"), std::string::npos);
  EXPECT_NE(error("slot=2").find("--tune: unknown key 'slot' (expected feed, prefetch"),
            std::string::npos)
      << error("slot=2");
  EXPECT_NE(error("slots=2,slots=3").find("--tune: slots given twice"), std::string::npos);
  EXPECT_NE(error("slots").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error("").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error("slots=2,").find("expected KEY=VALUE"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
TEST(FastPolicy, ChunksAndRuns) {
  // 64 rows, one warp per chunk, 4 resident: four chunks of 16 fill the wave.
  Chunking c = fit_chunks(64, 1, 1, 4);
  EXPECT_EQ(c.chunk, 16);
  EXPECT_EQ(c.chunks, 4);
  // Plenty of work per chunk: one chunk.
  c = fit_chunks(1000, 100000, 2, 500);
  EXPECT_EQ(c.chunks, 1);
  EXPECT_EQ(c.chunk, 1000);
  // No chunk shorter than max(16, 8R) unless the axis is.
  for (std::int64_t len : {1, 7, 40, 300, 16384})
    for (int R : {0, 1, 3, 15})
      for (std::int64_t per : {1, 7, 128})
        for (std::int64_t res : {1, 64, 4224}) {
          c = fit_chunks(len, per, R, res);
          EXPECT_GE(c.chunk * c.chunks, len);
          EXPECT_LT((c.chunks - 1) * c.chunk, len);
          EXPECT_GE(c.chunk, std::min<std::int64_t>(len, std::max(16, 8 * R)));
        }
  // A forced chunk (FastTuning::chunk), cut to the axis.
  c = fit_chunks(100, 10, 1, 1000, 5);
  EXPECT_EQ(c.chunk, 5);
  EXPECT_EQ(c.chunks, 20);
  c = fit_chunks(3, 10, 1, 1000, 5);
  EXPECT_EQ(c.chunk, 3);
  EXPECT_EQ(c.chunks, 1);
  // Equal runs: one per resident block, none shorter than `shortest` unless the work is.
  EXPECT_EQ(even_runs(1000, 16, 10), 100);
  EXPECT_EQ(even_runs(100, 16, 132), 15);
  EXPECT_EQ(even_runs(5, 16, 132), 5);
  EXPECT_EQ(even_runs(1000, 16, 10, 7), 7);
  EXPECT_EQ(even_runs(0, 16, 10), 1);
}

// Equal runs by cost (the block ring with modes): cost() against a count tile by tile, pos()
// against a scan of the positions, and the runs that pos() cuts cover every tile-plane once,
// each run's cost within a tile-plane of the others', on shapes with one or several strips and
// y-tiles, a batch, each axis's edges, and columns whose ends count more.
TEST(FastPolicy, EqualRunsByCostCoverEveryTilePlaneOnce) {
  for (const std::int64_t strips : {1, 2, 5})
    for (const std::int64_t ytiles : {1, 2, 3, 40})
      for (const std::int64_t batch : {1, 3})
        for (const int flags : {0, 1, 2, 3})
          for (const std::int64_t nz : {1, 7})
            for (const std::int64_t ends : {0, 2}) {
              EdgeCosts e;
              e.strips = strips;
              e.ytiles = ytiles;
              e.nz = nz;
              e.ends = ends;
              e.plain = 100;
              e.edge = 130;
              e.xe = flags & 1;
              e.ye = flags & 2;
              SCOPED_TRACE(std::to_string(strips) + "x" + std::to_string(ytiles) + " batch " +
                           std::to_string(batch) + " flags " + std::to_string(flags) + " nz " +
                           std::to_string(nz) + " ends " + std::to_string(ends));
              const std::int64_t tiles = strips * ytiles * batch;
              auto weight = [&](std::int64_t t) {
                const std::int64_t s = t % (strips * ytiles) / ytiles, y = t % ytiles;
                return (e.xe && (s == 0 || s == strips - 1)) ||
                               (e.ye && (y == 0 || y == ytiles - 1))
                           ? e.edge
                           : e.plain;
              };
              auto plane_cost = [&](std::int64_t p) {  // position p = tile * nz + z
                const std::int64_t z = p % nz;
                return weight(p / nz) * (1 + (z == 0 ? ends : 0) + (z == nz - 1 ? ends : 0));
              };
              std::int64_t sum = 0;
              for (std::int64_t t = 0; t <= tiles; ++t) {
                ASSERT_EQ(e.cost(t), sum * (nz + 2 * ends));
                if (t < tiles) sum += weight(t);
              }
              // pos(c): the first position whose cost before it is at least c.
              std::int64_t p = 0, before = 0;
              for (std::int64_t c = 0; c <= e.cost(tiles); c += 7) {
                while (before < c) before += plane_cost(p++);
                ASSERT_EQ(e.pos(c, tiles), p) << "cost " << c;
              }
              EXPECT_EQ(e.pos(e.cost(tiles), tiles), tiles * nz);
              for (const std::int64_t runs : {1, 3, 17, 132}) {
                const std::int64_t total = e.cost(tiles), per = (total + runs - 1) / runs;
                std::int64_t at = e.pos(0, tiles);
                EXPECT_EQ(at, 0);
                for (std::int64_t i = 0; i < runs; ++i) {
                  const std::int64_t end = e.pos(std::min(total, (i + 1) * per), tiles);
                  EXPECT_GE(end, at);
                  std::int64_t c = 0;  // the run's cost, within a plane's of `per`
                  for (std::int64_t q = at; q < end; ++q) c += plane_cost(q);
                  if (end < tiles * nz) EXPECT_LE(std::abs(c - per), e.edge * (1 + 2 * ends)) << i;
                  at = end;
                }
                EXPECT_EQ(at, tiles * nz) << "runs " << runs;
              }
            }
}

// A box filter (every weight 1/K) never takes the Winograd columns, whose stores skip the
// division of a box's sums, even where the tuning forces them; the same extents of other weights
// do.
TEST(FastPolicy, BoxFiltersNeverTakeTheWinogradColumns) {
  for (int r : {3, 4, 5, 7}) {
    const std::int64_t k = 2 * r + 1;
    const Filter box(std::vector<double>(std::size_t(k * k), 1.0 / double(k * k)), {k, k});
    for (const std::string tune : {"", "winograd=1"}) {
      Problem p(2, {300, 300, 1}, 1, box, DType::f32);
      if (!tune.empty()) p.set_tuning(detail::parse_fast_tuning(tune, "tune"));
      EXPECT_EQ(box_taps_of(p), k * k);
      EXPECT_FALSE(fast_policy(p, DeviceFacts{}, Alignment{}).winograd) << r << " " << tune;
    }
    EXPECT_TRUE(p2(r, "winograd=1").winograd) << r;
    EXPECT_EQ(box_taps_of(Problem(2, {300, 300, 1}, 1, ones({k, k}), DType::f32)), 0);
  }
}

}  // namespace
}  // namespace halo::cuda::fast
