// The FFT strategies, `cpu_fft` (src/cpu/fft/fft.cpp, FFTW) and the CUDA `fft`
// (src/cuda/fft/strategy.cu, cuFFT; skipped without a device), beyond the generic sweep: sizes at
// their tile edges, primes, 1-element axes, filters larger than the input, even and off-centre
// filters, every mode and per-axis mixes with cval and origins at their limits, both ops, both
// dtypes, batches, badly scaled and non-finite data; each against the float64 reference within
// the FFT bound of support.hpp (fft_tolerances, docs/ACCURACY.md "FFT"). And when `auto` takes
// them.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

const char* kFft = "cpu_fft";

// The tuning of a strategy's runs here: the CUDA fft's cuFFT tiles capped at 2^10 elements, so
// that these small problems have several tiles along each axis, as cpu_fft's do by its own model
// (its default tiles: the sweep and CudaFft below). Its transforms in shared memory have tests
// of their own below (CudaFft.RowTransforms*, CudaFft.TileTransforms*), and the tests here that
// take no tuning run them too.
FastTuning tuning_for(const std::string& strategy) {
  FastTuning t;
  if (strategy == "fft") t.fft_tile = 10, t.fft_shared = false;
  return t;
}

// The tests every FFT strategy passes, run for each (GetParam(): its name).
class Fft : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (GetParam() == "fft" && !cuda_available(&why)) GTEST_SKIP() << why;
  }
  FastTuning tune() const { return tuning_for(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Strategies, Fft, ::testing::Values("cpu_fft", "fft"),
                         [](const auto& info) { return info.param; });

// The boundary treatments of a case: zero ghosts, every mode with the origin at one limit of the
// last axis, constant with a cval, a per-axis mix with the origin at the other limits.
std::vector<Edges> edges_for(const std::vector<std::int64_t>& filter, int rank, std::size_t i) {
  const Boundary C = Boundary::constant, N = Boundary::nearest, R = Boundary::reflect,
                 M = Boundary::mirror, W = Boundary::wrap;
  std::vector<Edges> v{Edges{}};
  for (Boundary m : {C, N, R, M, W}) {
    Edges e = Edges::all(m, m == C ? -1.25 : 0.0);
    const std::int64_t k = filter.back();
    e.origin[rank - 1] = (i + int(m)) % 2 ? (k - 1) / 2 : -(k / 2);
    v.push_back(e);
  }
  if (rank > 1) {
    Edges e;
    e.mode = {W, C, M};
    if (rank == 2) e.mode = {C, R, N};
    e.cval = 2.5;
    for (int a = 0; a < rank; ++a) {
      const std::int64_t k = filter[a];
      e.origin[a] = (i + a) % 2 ? -(k / 2) : (k - 1) / 2;
    }
    v.push_back(e);
  }
  return v;
}

// Every case under every treatment of edges_for, a dense random filter, both ops (alternating
// over the treatments), both dtypes, under the strategy's tuning here (tuning_for: the tiles
// that tile_edge_extents chose the extents for).
void run_cases(const std::string& strategy, const std::vector<Case>& cases) {
  const FastTuning tune = tuning_for(strategy);
  int failed = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const Filter f = random_filter(c.filter);
    std::size_t ei = 0;
    for (const Edges& e : edges_for(c.filter, c.rank, ci)) {
      const Op op = (ci + ei++) % 2 ? Op::convolve : Op::correlate;
      for (const std::string& err :
           {check_strategy<float>(strategy, c.rank, c.ext, c.batch, f, op, false, e, tune),
            check_strategy<double>(strategy, c.rank, c.ext, c.batch, f, op, false, e, tune)}) {
        if (err.empty()) continue;
        ADD_FAILURE() << err;
        if (++failed >= 10) return;
      }
    }
  }
}

// Extents at the edges of the tiles that the strategy's tiling chooses for them: along each axis
// in turn,
// among the extents base/2 .. 2 base whose own tiling has several tiles along that axis, one
// whose last tile is full, the one whose last tile is the shortest, and the one whose last
// tile is the longest short of full.
std::vector<Extents> tile_edge_extents(const std::string& strategy, int rank, const Extents& base,
                                       const std::vector<std::int64_t>& filter) {
  const Filter f = random_filter(filter);
  std::vector<Extents> out;
  for (int a = 0; a < rank; ++a) {
    if (filter[a] == 1) continue;  // tiles of 1, or no overlap between tiles
    Extents full{0, 0, 0}, shortest{0, 0, 0}, longest{0, 0, 0};
    std::int64_t least = -1, most = -1;
    for (std::int64_t n = base[a] / 2; n < 2 * base[a]; ++n) {
      Extents e = base;
      e[a] = n;
      Problem p(rank, e, 1, f, DType::f32);
      p.set_tuning(tuning_for(strategy));
      const std::int64_t tile = fft_tiling_of(strategy, p).tile[3 - rank + a];
      if (n <= tile) continue;
      const std::int64_t rem = n % tile;
      if (rem == 0) full = e;
      if (rem > 0 && (least < 0 || rem < least)) least = rem, shortest = e;
      if (rem > 0 && (most < 0 || tile - rem < most)) most = tile - rem, longest = e;
    }
    EXPECT_TRUE(full[0] > 0 && least > 0)
        << "axis " << a << " of a " << filter[0] << "x" << filter.back() << " filter";
    for (const Extents& e : {full, shortest, longest})
      if (e[0] > 0) out.push_back(e);
  }
  return out;
}

TEST_P(Fft, OneDimensionalAtTileEdgesPrimesAndTinySignals) {
  std::vector<Case> c;
  for (std::int64_t k : {1, 2, 9, 16, 33}) {
    for (const Extents& e : tile_edge_extents(GetParam(), 1, {3000, 1, 1}, {k}))
      c.push_back({1, e, {k}});
    for (std::int64_t n : {1, 2, 3, 7, 31, 127, 1009}) c.push_back({1, {n, 1, 1}, {k}});
  }
  c.push_back({1, {5, 1, 1}, {40}});  // filter larger than the signal
  c.push_back({1, {1, 1, 1}, {7}});
  c.push_back({1, {257, 1, 1}, {12}, 3});  // batch
  run_cases(GetParam(), c);
}

TEST_P(Fft, TwoDimensionalAtTileEdgesPrimesAndOneElementAxes) {
  std::vector<Case> c;
  for (const std::vector<std::int64_t>& k : {std::vector<std::int64_t>{7, 7}, {6, 9}, {2, 2}})
    for (const Extents& e : tile_edge_extents(GetParam(), 2, {150, 170, 1}, k))
      c.push_back({2, e, k});
  // One axis of filter extent 1: whole rows (or columns) of several tiles.
  for (const Extents& e : tile_edge_extents(GetParam(), 2, {3, 3000, 1}, {1, 5}))
    c.push_back({2, e, {1, 5}});
  for (const Extents& e : tile_edge_extents(GetParam(), 2, {3000, 3, 1}, {5, 1}))
    c.push_back({2, e, {5, 1}});
  for (auto [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {1, 37}, {41, 1}, {2, 3}, {13, 17}, {53, 29}})
    for (const std::vector<std::int64_t>& k : {std::vector<std::int64_t>{3, 3}, {4, 5}, {11, 11}})
      c.push_back({2, {h, w, 1}, k});
  c.push_back({2, {6, 9, 1}, {15, 20}});     // larger than the input on both axes
  c.push_back({2, {3, 40, 1}, {9, 4}});      // on one
  c.push_back({2, {31, 37, 1}, {8, 6}, 3});  // batch
  run_cases(GetParam(), c);
}

TEST_P(Fft, ThreeDimensional) {
  std::vector<Case> c;
  // (x about 70: the GPU's transforms along x are 32 or longer, so several tiles need that.)
  for (const Extents& e : tile_edge_extents(GetParam(), 3, {20, 24, 70}, {3, 3, 3}))
    c.push_back({3, e, {3, 3, 3}});
  for (const Extents& e : {Extents{1, 1, 1}, Extents{1, 7, 9}, Extents{5, 1, 11}, Extents{7, 6, 1},
                           Extents{11, 13, 17}})
    for (const std::vector<std::int64_t>& k :
         {std::vector<std::int64_t>{3, 3, 3}, {2, 4, 3}, {5, 1, 3}, {1, 1, 4}})
      c.push_back({3, e, k});
  c.push_back({3, {4, 5, 6}, {9, 11, 7}});    // larger than the input on every axis
  c.push_back({3, {6, 7, 8}, {3, 2, 5}, 2});  // batch
  run_cases(GetParam(), c);
}

// Badly scaled inputs, held to the bound: magnitudes 10^-6 .. 10^6 (log-uniform, random signs)
// everywhere, and an array whose first half along x is of size 10^6 and the rest 10^-6. The
// bound is normwise over a tile, so the small outputs of a tile that also reads the large half
// carry the large values' rounding: there the error exceeds the direct sum's tolerance (which a
// test of direct sums would flag), and stays within the FFT's.
TEST_P(Fft, BadlyScaledDataWithinTheBound) {
  std::uniform_real_distribution<double> e(-6, 6);
  std::bernoulli_distribution sign(0.5);
  const struct {
    int rank;
    Extents ext;
    std::vector<std::int64_t> filter;
  } cases[] = {{1, {3001, 1, 1}, {41}}, {2, {67, 71, 1}, {9, 8}}, {3, {13, 14, 15}, {3, 4, 5}}};
  std::size_t beyond_direct = 0;
  for (const auto& c : cases)
    for (const Edges& e2 :
         {Edges{}, Edges::all(Boundary::reflect), Edges::all(Boundary::constant, 1e5)})
      for (const bool halves : {false, true})
        for (const bool shared : {false, true}) {  // fft: also its transforms in shared memory
          if (shared && GetParam() != "fft") continue;
          const FastTuning tn = shared ? FastTuning{} : tune();
          const Filter f = random_filter(c.filter);
          const auto run = [&](auto zero) {
            using T = decltype(zero);
            Problem p(c.rank, c.ext, 1, f, dtype_of<T>(), Op::correlate, e2);
            p.set_tuning(tn);
            const std::int64_t nx = p.dims3().x;
            std::vector<T> in(static_cast<std::size_t>(p.elements()));
            for (std::size_t i = 0; i < in.size(); ++i) {
              const double mag =
                  halves ? (std::int64_t(i) % nx < nx / 2 ? 1e6 : 1e-6) : std::pow(10.0, e(rng()));
              in[i] = T((sign(rng()) ? -1 : 1) * mag);
            }
            std::vector<T> out(in.size());
            poison(out);
            Options opt;
            opt.strategy = GetParam();
            opt.edges = e2;
            opt.tuning = tn;
            apply(ConstArrayView(in.data(), p.dtype(), c.rank, c.ext),
                  array_view(out, c.rank, c.ext), f, opt);
            EXPECT_EQ(compare(GetParam(), p, in, out), "");
            if (!halves || sizeof(T) != 4) return;
            std::vector<double> ref(in.size()), scale(in.size());
            cpu::reference_f64(p, in.data(), ref.data());
            cpu::reference_f64(p, in.data(), scale.data(), true);
            for (std::size_t i = 0; i < in.size(); ++i)
              beyond_direct +=
                  !(std::fabs(double(out[i]) - ref[i]) <= tolerance<T>(p.taps(), scale[i]));
          };
          run(float{});
          run(double{});
        }
  EXPECT_GT(beyond_direct, 0u) << "the halves do not tell the FFT's bound from the direct sum's";
}

// NaN and infinities in the input, and a NaN cval: the tiles that read them are summed directly,
// so the outputs are NaN (or infinite) exactly where the reference's are, and the others within
// the bound (taken with the non-finite values read as 0: a direct sum's error is below it).
// Under zero ghosts, wrap and a NaN cval; for a filter along x alone also on the GPU's row
// transforms (a signal, and rows of a 2-D array).
void check_non_finite(const std::string& strategy, int rank, const Extents& ext, const Filter& f,
                      const FastTuning& tune) {
  for (const Edges& e :
       {Edges{}, Edges::all(Boundary::wrap), Edges::all(Boundary::constant, std::nan(""))}) {
    Problem p(rank, ext, 1, f, DType::f32, Op::correlate, e);
    p.set_tuning(tune);
    std::vector<float> in = random_vector<float>(p.elements());
    in[1234] = std::numeric_limits<float>::quiet_NaN();
    in[40000] = std::numeric_limits<float>::infinity();
    std::vector<float> out(in.size());
    poison(out);
    Options opt;
    opt.strategy = strategy;
    opt.edges = e;
    opt.tuning = tune;
    apply(ConstArrayView(in.data(), p.dtype(), rank, ext), array_view(out, rank, ext), f, opt);
    std::vector<double> ref(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    std::vector<float> finite = in;
    for (float& x : finite)
      if (!std::isfinite(x)) x = 0;
    Edges ez = e;
    if (std::isnan(ez.cval)) ez.cval = 0;
    Problem q(rank, ext, 1, f, DType::f32, Op::correlate, ez);
    q.set_tuning(tune);
    const std::vector<double> tol = tolerances(strategy, q, finite);
    std::size_t nan = 0, bad = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (std::isnan(ref[i])) {
        ++nan;
        bad += !std::isnan(out[i]);
      } else if (std::isinf(ref[i])) {
        bad += !(double(out[i]) == ref[i]);
      } else {
        bad += !(std::fabs(double(out[i]) - ref[i]) <= tol[i]);
      }
    }
    EXPECT_GT(nan, 0u);
    EXPECT_EQ(bad, 0u) << p.describe() << "; seed " << fresh_seed();
  }
}

TEST_P(Fft, NonFiniteInputsAndCvalGiveTheReferencesNaNs) {
  check_non_finite(GetParam(), 2, {300, 280, 1}, random_filter({9, 9}), tune());
  // The GPU's tile transforms in shared memory (the default tuning).
  check_non_finite(GetParam(), 2, {300, 280, 1}, random_filter({9, 9}), {});
  // A filter along x alone (the GPU's row transforms) on a signal and on rows; on rows shorter
  // than a segment, each transform carries two rows.
  check_non_finite(GetParam(), 1, {84000, 1, 1}, random_filter({129}), {});
  check_non_finite(GetParam(), 2, {12, 7000, 1}, random_filter({1, 33}), {});
  check_non_finite(GetParam(), 2, {61, 700, 1}, random_filter({1, 129}), {});
}

// The tiling does not depend on the thread count, and neither do the results (bit for bit).
TEST(CpuFft, ResultsDoNotDependOnTheThreadCount) {
  const Filter f = random_filter({15, 15});
  const Extents ext{700, 500, 1};
  std::vector<float> in = random_vector<float>(700 * 500), a(in.size()), b(in.size());
  Options opt;
  opt.strategy = kFft;
  opt.edges = Edges::all(Boundary::mirror);
  apply(ConstArrayView(in.data(), DType::f32, 2, ext), array_view(a, 2, ext), f, opt);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  apply(ConstArrayView(in.data(), DType::f32, 2, ext), array_view(b, 2, ext), f, opt);
  omp_set_num_threads(threads);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

// The bound must still catch a wrong answer: the reference of the filter shifted by one tap is
// outside it almost everywhere.
TEST_P(Fft, ToleranceCatchesAShiftedFilter) {
  for (const std::vector<std::int64_t>& k : {std::vector<std::int64_t>{31, 31}, {7, 7}}) {
    const Filter f = random_filter(k);
    const Problem p(2, {200, 190, 1}, 1, f, DType::f32);
    Edges shifted;
    shifted.origin = {1, 0, 0};
    const Problem q(2, {200, 190, 1}, 1, f, DType::f32, Op::correlate, shifted);
    const std::vector<float> in = random_vector<float>(p.elements());
    std::vector<double> ref(in.size()), wrong(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    cpu::reference_f64(q, in.data(), wrong.data());
    const std::vector<double> tol = tolerances(GetParam(), p, in);
    std::size_t caught = 0;
    for (std::size_t i = 0; i < in.size(); ++i) caught += !(std::fabs(wrong[i] - ref[i]) <= tol[i]);
    EXPECT_GT(caught, in.size() * 9 / 10) << p.describe();
  }
}

TEST_P(Fft, RefusesWhereDirectSumsAreRequired) {
  const Strategy* s = find_strategy(GetParam());
  ASSERT_NE(s, nullptr);
  Problem p(2, {100, 100, 1}, 1, random_filter({31, 31}), DType::f32);
  EXPECT_TRUE(s->can_implement(p));
  EXPECT_EQ(s->summation(p), Summation::fft);
  p.require_direct_sums();
  const Status st = s->can_implement(p);
  EXPECT_FALSE(st);
  EXPECT_NE(st.reason.find("direct sums required"), std::string::npos) << st.reason;
  std::vector<float> in = random_vector<float>(100 * 100), out(in.size());
  Options opt;
  opt.strategy = GetParam();
  opt.direct_sums = true;
  EXPECT_NE(error_of([&] {
              apply(ConstArrayView(in.data(), DType::f32, 2, {100, 100, 1}),
                    array_view(out, 2, {100, 100, 1}), random_filter({31, 31}), opt);
            }).find("direct sums required"),
            std::string::npos);
  // `auto` with direct sums never takes it: the direct sum of its backend instead.
  const bool gpu = GetParam() == "fft";
  opt.strategy.clear();
  opt.backend = gpu ? Backend::cuda : Backend::cpu;
  Problem big(2, {gpu ? 8192 : 1024, gpu ? 8192 : 1024, 1}, 1, random_filter({31, 31}), DType::f32);
  EXPECT_EQ(choose(big, opt).strategy, GetParam());
  big.require_direct_sums();
  EXPECT_EQ(choose(big, opt).strategy, gpu ? "fast" : "cpu");
}

// `auto` on the CPU: the transforms for a large dense filter; the direct sum for a small one and
// for a small problem; 1-D passes or the direct sum for a rank-1 filter.
TEST(CpuFft, AutoTakesItForLargeDenseFiltersOnly) {
  Options opt;
  opt.backend = Backend::cpu;
  const auto pick = [&](int rank, Extents ext, const Filter& f, DType t = DType::f32) {
    return choose(Problem(rank, ext, 1, f, t), opt).strategy;
  };
  EXPECT_EQ(pick(2, {1024, 1024, 1}, random_filter({31, 31})), kFft);
  EXPECT_EQ(pick(2, {1024, 1024, 1}, random_filter({31, 31}), DType::f64), kFft);
  EXPECT_EQ(pick(2, {1024, 1024, 1}, random_filter({5, 5})), "cpu");
  // Rank-1 filters: 1-D passes (cpu_separable), or the direct sum.
  EXPECT_EQ(pick(2, {1024, 1024, 1}, random_outer_product({31, 31})), "cpu_separable");
  EXPECT_NE(pick(2, {1024, 1024, 1}, random_filter({1, 63})), kFft);
  EXPECT_NE(pick(3, {128, 128, 128}, random_outer_product({9, 9, 9})), kFft);
  EXPECT_EQ(pick(2, {20, 30, 1}, random_filter({17, 17})), "cpu");
  EXPECT_EQ(pick(3, {128, 128, 128}, random_filter({9, 9, 9})), kFft);
  EXPECT_EQ(pick(1, {1 << 20, 1, 1}, random_filter({1001})), kFft);
  // And apply() runs it (its accuracy: the tests above).
  const Filter f = random_filter({31, 31});
  const Extents ext{1024, 1024, 1};
  std::vector<float> in = random_vector<float>(1024 * 1024), out(in.size());
  poison(out);
  const RunInfo info =
      apply(ConstArrayView(in.data(), DType::f32, 2, ext), array_view(out, 2, ext), f, opt);
  EXPECT_EQ(info.strategy, kFft);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }));
  // The tuning's cpu_fft_cost scales the FFT's modelled time (`halo bench --suite crossovers
  // --backend cpu` measures it): a thousandfold cost leaves the 31x31 to `cpu`, a hundredth
  // takes a 9x9 to the FFT.
  const auto tuned = [&](const Filter& w, const char* tune) {
    Problem p(2, {1024, 1024, 1}, 1, w, DType::f32);
    p.set_tuning(detail::parse_fast_tuning(tune, "test"));
    return choose(p, opt).strategy;
  };
  EXPECT_EQ(tuned(random_filter({31, 31}), "cpu_fft_cost=100000"), "cpu");
  EXPECT_EQ(tuned(random_filter({9, 9}), "cpu_fft_cost=1"), kFft);
}

TEST(CpuFft, PlanAndWorkspaceNameTheTiles) {
  const Strategy* s = find_strategy(kFft);
  ASSERT_NE(s, nullptr);
  const Problem p(2, {1024, 1024, 1}, 1, random_filter({31, 31}), DType::f32);
  const cpu::FftTiling t = cpu::fft_tiling(p);
  const std::string plan = s->plan(p);
  EXPECT_NE(plan.find(std::to_string(t.tile[1]) + "x" + std::to_string(t.tile[2]) + " outputs"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find(std::to_string(t.fft[1]) + "x" + std::to_string(t.fft[2])), std::string::npos)
      << plan;
  const std::vector<MemoryUse> ws = s->workspace(p);
  ASSERT_GE(ws.size(), 3u);
  EXPECT_NE(ws[0].what.find("spectrum"), std::string::npos);
  EXPECT_NE(ws[1].what.find("FFT tiles"), std::string::npos);
  EXPECT_NE(ws[2].what.find("FFTW's plans"), std::string::npos);
  // A tile and its transform per thread: within a few MiB each.
  EXPECT_LT(ws[1].bytes, 8.0 * omp_get_max_threads() * (1 << 20));
  for (int a = 1; a < 3; ++a) {
    EXPECT_GE(t.fft[a], t.tile[a] + 31 - 1);
    EXPECT_GE(t.tile[a], 31);
  }
}

// The CUDA strategy's tiling and batches (pure host functions; no device needed): transforms
// long enough for their tiles, tiles within the cap unless the filter needs more, the cap and
// the batch as FastTuning sets them.
TEST(CudaFftTiling, TilesFitTheirTransformsAndTheCap) {
  const auto tiling = [](int rank, Extents e, std::vector<std::int64_t> k, const char* tune = "") {
    Problem p(rank, e, 1, random_filter(k), DType::f32);
    if (*tune) p.set_tuning(detail::parse_fast_tuning(tune, "test"));
    return std::make_pair(p, detail::cuda_fft_tiling(p));
  };
  for (const auto& [p, t] :
       {tiling(2, {16384, 16384, 1}, {31, 31}), tiling(2, {1000, 3000, 1}, {9, 40}),
        tiling(1, {1 << 28, 1, 1}, {1001}), tiling(3, {512, 512, 512}, {9, 9, 9}),
        tiling(2, {50, 60, 1}, {3, 3})}) {
    const Dims3 n = p.dims3(), k = p.filter_dims3();
    const std::int64_t nn[3] = {n.z, n.y, n.x}, kk[3] = {k.z, k.y, k.x};
    std::int64_t tiles = 1;
    for (int a = 0; a < 3; ++a) {
      EXPECT_LE(t.tile[a], nn[a]) << p.describe();
      // (Row transforms: a tile is a pair of segments, each its own transform's window.)
      const std::int64_t seg = t.shared && a == 2 ? (t.tile[a] + 1) / 2 : t.tile[a];
      EXPECT_GE(t.fft[a], kk[a] == 1 && a < 2 ? 1 : seg + kk[a] - 1) << p.describe();
      tiles *= (nn[a] + t.tile[a] - 1) / t.tile[a];
    }
    EXPECT_EQ(t.tiles, tiles);
    EXPECT_LE(t.elements(), std::int64_t(1) << 18) << p.describe();
    EXPECT_GT(t.direct_ns, 0);
    const std::int64_t b = detail::cuda_fft_batch(p, t);
    EXPECT_GE(b, 1);
    EXPECT_LE(b, t.tiles);
    const double tile_bytes = double(t.fft[0] * t.fft[1] * 2 * (t.fft[2] / 2 + 1)) * 4;
    EXPECT_TRUE(b == 1 || double(b) * tile_bytes <= 128.0 * 1048576) << b << " tiles per batch";
  }
  // The 2-D benchmark filter on cuFFT's tiles: about 480 outputs, the direct sum modelled slower.
  const auto [p, t] = tiling(2, {16384, 16384, 1}, {31, 31}, "fft_shared=0");
  EXPECT_GE(t.tile[2], 400);
  EXPECT_LT(t.fft_ns, t.direct_ns);
  // A 3x3 filter: the direct sum modelled faster.
  EXPECT_GT(tiling(2, {16384, 16384, 1}, {3, 3}).second.fft_ns,
            tiling(2, {16384, 16384, 1}, {3, 3}).second.direct_ns);
  // The tuning: a smaller cap gives smaller tiles; a batch of 1 MiB fewer tiles per batch.
  const auto small = tiling(2, {16384, 16384, 1}, {31, 31}, "fft_tile=14").second;
  EXPECT_LE(small.elements(), 1 << 14);
  const auto [q, u] = tiling(2, {16384, 16384, 1}, {31, 31}, "fft_batch=1");
  EXPECT_LT(detail::cuda_fft_batch(q, u), detail::cuda_fft_batch(p, t));
  // Filters along y or z alone: tiles of 32 columns or more (coalesced gathers), or the whole
  // row where it is shorter.
  for (const auto& [rank, e, k] : std::vector<std::tuple<int, Extents, std::vector<std::int64_t>>>{
           {2, {16384, 16384, 1}, {255, 1}},
           {3, {64, 64, 64}, {9, 1, 1}},
           {3, {200, 100, 300}, {1, 41, 1}}}) {
    const detail::FftTiling c = tiling(rank, e, k).second;
    EXPECT_GE(c.fft[2], 32) << rank << "-D, " << k[0];
    EXPECT_GE(c.tile[2], 32) << rank << "-D, " << k[0];
  }
  const detail::FftTiling narrow = tiling(2, {100, 20, 1}, {9, 1}).second;
  EXPECT_EQ(narrow.tile[2], 20);
  EXPECT_GE(narrow.fft[2], 20);
  // A filter longer than the cap allows still gets a tiling (the cap rises to fit it).
  EXPECT_GE(tiling(1, {100000, 1, 1}, {70001}, "fft_tile=10").second.fft[2], 70001);
}

// The CUDA fft's tiling of a random filter of extents k on an array e (tune: KEY=VALUE,...).
detail::FftTiling cuda_tiling(int rank, Extents e, std::vector<std::int64_t> k,
                              DType type = DType::f32, const char* tune = "") {
  Problem p(rank, e, 1, random_filter(k), type);
  if (*tune) p.set_tuning(detail::parse_fast_tuning(tune, "test"));
  return detail::cuda_fft_tiling(p);
}

// The row transforms' tiling: float32 filters along x alone, transforms of 1024 to 4096 points
// (at most the tuning's cap), a pair of segments per tile; cuFFT's tiles for float64, for other
// filters, beyond 4096 taps and where the tuning turns them off.
TEST(CudaFftTiling, RowTransformsForFiltersAlongX) {
  const std::int64_t n = std::int64_t(1) << 28;
  const detail::FftTiling t = cuda_tiling(1, {n, 1, 1}, {129});
  EXPECT_TRUE(t.shared);
  EXPECT_TRUE(t.fft[2] == 1024 || t.fft[2] == 2048 || t.fft[2] == 4096) << t.fft[2];
  EXPECT_EQ(t.tile[2], 2 * (t.fft[2] - 128));
  EXPECT_EQ(t.tiles, (n + t.tile[2] - 1) / t.tile[2]);
  EXPECT_DOUBLE_EQ(t.window_scale, std::sqrt(2.0));
  EXPECT_LT(t.fft_ns, t.direct_ns);
  // Few taps: the direct sum modelled faster.
  const detail::FftTiling few = cuda_tiling(1, {n, 1, 1}, {17});
  EXPECT_TRUE(few.shared);
  EXPECT_GT(few.fft_ns, few.direct_ns);
  EXPECT_FALSE(cuda_tiling(1, {n, 1, 1}, {129}, DType::f64).shared);
  EXPECT_FALSE(cuda_tiling(1, {n, 1, 1}, {129}, DType::f32, "fft_shared=0").shared);
  EXPECT_FALSE(cuda_tiling(1, {100000, 1, 1}, {4097}).shared);
  // 1025 taps: 4096 points (segments of 3072) cost less than 2048 (segments of 1024).
  EXPECT_EQ(cuda_tiling(1, {n, 1, 1}, {1025}).fft[2], 4096);
  const detail::FftTiling capped = cuda_tiling(1, {100000, 1, 1}, {33}, DType::f32, "fft_tile=10");
  EXPECT_TRUE(capped.shared);
  EXPECT_EQ(capped.fft[2], 1024);
  EXPECT_EQ(capped.tile[2], 2 * 992);
  // The tuning asks for at least 2^fft_tile points: the least length that also fits the filter.
  EXPECT_EQ(cuda_tiling(1, {100000, 1, 1}, {33}, DType::f32, "fft_tile=8").fft[2], 1024);
  EXPECT_EQ(cuda_tiling(1, {100000, 1, 1}, {1025}, DType::f32, "fft_tile=10").fft[2], 2048);
  EXPECT_FALSE(cuda_tiling(1, {100000, 1, 1}, {33}, DType::f32, "fft_tile=13").shared);
  // Rows of a 2-D array: the segments of all rows paired in turn, across a row's end where a
  // row has an odd count of them.
  const detail::FftTiling rows = cuda_tiling(2, {300, 5000, 1}, {1, 65});
  EXPECT_TRUE(rows.shared);
  const std::int64_t seg = rows.fft[2] - 64;
  EXPECT_EQ(rows.tiles, (300 * ((5000 + seg - 1) / seg) + 1) / 2);
  // Rows shorter than a segment: two rows a transform.
  const detail::FftTiling short_rows = cuda_tiling(3, {64, 63, 500}, {1, 1, 65});
  EXPECT_TRUE(short_rows.shared);
  EXPECT_EQ(short_rows.tiles, (64 * 63 + 1) / 2);
  EXPECT_DOUBLE_EQ(short_rows.window_scale, std::sqrt(2.0));
  EXPECT_EQ(cuda_tiling(2, {300, 5000, 1}, {3, 65}).fft[1], 64);  // 2-D: the tile transforms
  EXPECT_FALSE(cuda_tiling(2, {300, 5000, 1}, {65, 1}).shared);
  // A row shorter than a segment: one segment, nothing in the imaginary part.
  const detail::FftTiling one = cuda_tiling(1, {1000, 1, 1}, {9});
  EXPECT_TRUE(one.shared);
  EXPECT_EQ(one.tile[2], 1000);
  EXPECT_EQ(one.tiles, 1);
  EXPECT_DOUBLE_EQ(one.window_scale, 1.0);
}

// A case on `fft` under every treatment of edges_for (the ops alternating), each against the
// float64 reference within the FFT bound: counts the runs, reports the failures, and returns
// false once ten have failed.
bool fft_under_every_edge(int rank, const Extents& ext, std::int64_t batch, const Filter& f,
                          const std::vector<std::int64_t>& k, std::size_t ci,
                          const FastTuning& tune, int& runs, int& failed) {
  std::size_t ei = 0;
  for (const Edges& e : edges_for(k, rank, ci)) {
    const Op op = (ci + ei++) % 2 ? Op::convolve : Op::correlate;
    const std::string err = check_strategy<float>("fft", rank, ext, batch, f, op, false, e, tune);
    ++runs;
    if (err.empty()) continue;
    ADD_FAILURE() << err;
    if (++failed >= 10) return false;
  }
  return true;
}

// The row transforms on the device, each transform length: rows at the segments' and pairs'
// edges (T - 1 .. 2T + 1, 3T, 5T + 7 outputs for segments of T), filters of 1 tap up to N taps
// (one output a segment), every mode with the origin at either limit, cval, both ops; rows of
// 2-D arrays and batches. Each against the float64 reference within the FFT bound.
TEST(CudaFft, RowTransformsAtSegmentEdgesAndEveryMode) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  int failed = 0, runs = 0;
  for (int lg : {10, 11, 12}) {
    const std::int64_t N = std::int64_t(1) << lg;
    FastTuning tune;
    tune.fft_tile = lg;
    for (std::int64_t k :
         {std::int64_t(1), std::int64_t(2), std::int64_t(17), std::int64_t(129), N / 2 + 1, N}) {
      const std::int64_t T = N - k + 1;
      const Filter f = random_filter({k});
      std::size_t ci = 0;
      for (std::int64_t n : {T - 1, T, T + 1, 2 * T - 1, 2 * T, 2 * T + 1, 3 * T, 5 * T + 7}) {
        if (n < 1) continue;
        Problem p(1, {n, 1, 1}, 1, f, DType::f32);
        p.set_tuning(tune);
        const detail::FftTiling t = detail::cuda_fft_tiling(p);
        EXPECT_TRUE(t.shared && t.fft[2] == N) << p.describe();
        if (!fft_under_every_edge(1, {n, 1, 1}, 1, f, {k}, ci++, tune, runs, failed)) return;
      }
    }
  }
  EXPECT_GT(runs, 300);
  for (const auto& [rank, ext, k, batch] :
       std::vector<std::tuple<int, Extents, std::vector<std::int64_t>, std::int64_t>>{
           {2, {7, 9000, 1}, {1, 101}, 2},
           {3, {3, 4, 5000}, {1, 1, 300}, 1},
           {1, {30001, 1, 1}, {64}, 3},
           // Pairs across the rows' ends: rows of one segment (an odd count of rows, the last
           // pair half empty), of three segments, and of two and a sliver.
           {2, {5, 700, 1}, {1, 129}, 1},
           {2, {3, 2000, 1}, {1, 65}, 2},
           {3, {3, 5, 2100}, {1, 1, 33}, 1}}) {
    if (!fft_under_every_edge(rank, ext, batch, random_filter(k), k, 1, {}, runs, failed)) return;
  }
}

// The 2-D tile transforms' tiling: float32 filters of 2..33 rows and 2..65 columns, pairs of
// tiles of (65 - ky) x (129 - kx) outputs per 64 x 128 transform; cuFFT's tiles beyond, for
// float64, and where the tuning turns them off or asks for longer transforms.
TEST(CudaFftTiling, TileTransformsFor2DFilters) {
  const detail::FftTiling t = cuda_tiling(2, {16384, 16384, 1}, {31, 31});
  EXPECT_TRUE(t.shared);
  EXPECT_EQ(t.fft, (std::array<std::int64_t, 3>{1, 64, 128}));
  EXPECT_EQ(t.tile, (std::array<std::int64_t, 3>{1, 34, 196}));
  EXPECT_EQ(t.tiles, ((16384 + 33) / 34) * ((16384 + 195) / 196));
  EXPECT_DOUBLE_EQ(t.window_scale, std::sqrt(2.0));
  EXPECT_LT(t.fft_ns, t.direct_ns);
  EXPECT_TRUE(cuda_tiling(2, {300, 5000, 1}, {33, 65}).shared);
  EXPECT_TRUE(cuda_tiling(3, {4, 300, 500}, {1, 5, 5}).shared);  // each plane on its own
  EXPECT_FALSE(cuda_tiling(2, {300, 5000, 1}, {34, 5}).shared);
  EXPECT_FALSE(cuda_tiling(2, {300, 5000, 1}, {5, 66}).shared);
  EXPECT_FALSE(cuda_tiling(3, {40, 300, 500}, {3, 5, 5}).shared);
  EXPECT_FALSE(cuda_tiling(2, {16384, 16384, 1}, {31, 31}, DType::f64).shared);
  EXPECT_FALSE(cuda_tiling(2, {16384, 16384, 1}, {31, 31}, DType::f32, "fft_shared=0").shared);
  EXPECT_FALSE(cuda_tiling(2, {16384, 16384, 1}, {31, 31}, DType::f32, "fft_tile=14").shared);
  EXPECT_TRUE(cuda_tiling(2, {16384, 16384, 1}, {31, 31}, DType::f32, "fft_tile=13").shared);
  // A narrow array: one tile of the pair, nothing in the imaginary part.
  const detail::FftTiling one = cuda_tiling(2, {100, 90, 1}, {9, 9});
  EXPECT_EQ(one.tile[2], 90);
  EXPECT_DOUBLE_EQ(one.window_scale, 1.0);
}

// The 2-D tile transforms on the device: arrays at the tiles' and pairs' edges along both axes
// (one row or column, TY - 1 .. 2 TY + 1 rows, TX - 1 .. 3 TX + 1 columns), filters from 2 x 2 to
// 33 x 65, every mode with the origin at either limit and per-axis mixes with cval, both ops;
// batches and the planes of a volume. Each against the float64 reference within the FFT bound.
TEST(CudaFft, TileTransformsAtTileEdgesAndEveryMode) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  int failed = 0, runs = 0;
  for (const std::vector<std::int64_t>& k :
       {std::vector<std::int64_t>{31, 31}, {2, 2}, {33, 65}, {7, 40}, {3, 2}}) {
    const std::int64_t ty = 65 - k[0], tx = 129 - k[1];
    const Filter f = random_filter(k);
    std::size_t ci = 0;
    for (const auto& [h, w] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1},
                                                            {1, 2 * tx + 1},
                                                            {ty, 1},
                                                            {ty - 1, tx - 1},
                                                            {ty, tx},
                                                            {ty + 1, tx + 1},
                                                            {2 * ty - 1, 2 * tx - 1},
                                                            {2 * ty, 2 * tx},
                                                            {2 * ty + 1, 3 * tx + 1}}) {
      // (An axis of 1 folds the filter to a line: the row transforms or cuFFT's tiles.)
      Problem p(2, {h, w, 1}, 1, f, DType::f32);
      const detail::FftTiling t = detail::cuda_fft_tiling(p);
      if (h > 1 && w > 1) EXPECT_TRUE(t.shared && t.fft[1] == 64) << p.describe();
      if (!fft_under_every_edge(2, {h, w, 1}, 1, f, k, ci++, {}, runs, failed)) return;
    }
  }
  EXPECT_GT(runs, 250);
  for (const auto& [rank, ext, k, batch] :
       std::vector<std::tuple<int, Extents, std::vector<std::int64_t>, std::int64_t>>{
           {2, {70, 300, 1}, {5, 5}, 3}, {3, {3, 70, 130}, {1, 9, 4}, 2}}) {
    if (!fft_under_every_edge(rank, ext, batch, random_filter(k), k, 1, {}, runs, failed)) return;
  }
}

// Several batches with a short last one (the tuning's smallest batch), and batches of items, on
// the device.
TEST(CudaFft, ManyBatchesAndAShortLastOne) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  FastTuning tune;
  tune.fft_batch = 1;
  tune.fft_tile = 12;
  for (const auto& [rank, ext, k, batch] :
       std::vector<std::tuple<int, Extents, std::vector<std::int64_t>, std::int64_t>>{
           {2, {700, 650, 1}, {21, 17}, 1},
           {1, {300001, 1, 1}, {257}, 3},
           {3, {40, 50, 60}, {7, 5, 9}, 2}}) {
    const Filter f = random_filter(k);
    for (const Edges& e : {Edges{}, Edges::all(Boundary::reflect)}) {
      EXPECT_EQ(check_strategy<float>("fft", rank, ext, batch, f, Op::correlate, false, e, tune),
                "");
      EXPECT_EQ(check_strategy<double>("fft", rank, ext, batch, f, Op::convolve, false, e, tune),
                "");
    }
  }
}

// `auto` on the GPU: the transforms for a large dense filter; `fast` for a small one; the 1-D
// passes for a rank-1 filter; and the FFT, not a seed kernel, beyond `fast`'s radii.
TEST(CudaFft, AutoTakesItForLargeDenseFilters) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  Options opt;
  opt.backend = Backend::cuda;
  const auto pick = [&](int rank, Extents ext, const Filter& f, DType t = DType::f32) {
    return choose(Problem(rank, ext, 1, f, t), opt).strategy;
  };
  EXPECT_EQ(pick(2, {16384, 16384, 1}, random_filter({31, 31})), "fft");
  EXPECT_EQ(pick(2, {16384, 16384, 1}, random_filter({5, 5})), "fast");
  EXPECT_EQ(pick(2, {16384, 16384, 1}, random_outer_product({31, 31})), "separable");
  EXPECT_EQ(pick(2, {4096, 4096, 1}, random_filter({151, 151})), "fft");
  EXPECT_EQ(pick(1, {1 << 24, 1, 1}, random_filter({4001})), "fft");
  // 1-D: the row transforms beyond about 100 taps, `fast` below, box rows for boxes.
  EXPECT_EQ(pick(1, {1 << 28, 1, 1}, random_filter({129})), "fft");
  EXPECT_EQ(pick(1, {1 << 28, 1, 1}, random_filter({1025})), "fft");
  EXPECT_EQ(pick(1, {1 << 28, 1, 1}, random_filter({17})), "fast");
  EXPECT_EQ(pick(1, {1 << 28, 1, 1}, make_named_filter("box:255", 1)), "separable");
}

}  // namespace
}  // namespace halo::test
