// The `cpu_fft` strategy (src/cpu/fft.cpp) beyond the generic sweep: sizes at its tile edges,
// primes, 1-element axes, filters larger than the input, even and off-centre filters, every mode
// and per-axis mixes with cval and origins at their limits, both ops, both dtypes, batches, badly
// scaled and non-finite data; each against the float64 reference within the FFT bound of
// support.hpp (fft_tolerances, docs/ACCURACY.md "FFT"). And when `auto` takes it.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "support.hpp"

namespace halo::test {
namespace {

const char* kFft = "cpu_fft";

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
// over the treatments), both dtypes.
void run_cases(const std::vector<Case>& cases) {
  int failed = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const Filter f = random_filter(c.filter);
    std::size_t ei = 0;
    for (const Edges& e : edges_for(c.filter, c.rank, ci)) {
      const Op op = (ci + ei++) % 2 ? Op::convolve : Op::correlate;
      for (const std::string& err :
           {check_strategy<float>(kFft, c.rank, c.ext, c.batch, f, op, false, e),
            check_strategy<double>(kFft, c.rank, c.ext, c.batch, f, op, false, e)}) {
        if (err.empty()) continue;
        ADD_FAILURE() << err;
        if (++failed >= 10) return;
      }
    }
  }
}

// Extents at the edges of the tiles that fft_tiling chooses for them: along each axis in turn,
// among the extents base/2 .. 2 base whose own tiling has several tiles along that axis, one
// whose last tile is full, the one whose last tile is the shortest, and the one whose last
// tile is the longest short of full.
std::vector<Extents> tile_edge_extents(int rank, const Extents& base,
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
      const std::int64_t tile =
          cpu::fft_tiling(Problem(rank, e, 1, f, DType::f32)).tile[3 - rank + a];
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

TEST(CpuFft, OneDimensionalAtTileEdgesPrimesAndTinySignals) {
  std::vector<Case> c;
  for (std::int64_t k : {1, 2, 9, 16, 33}) {
    for (const Extents& e : tile_edge_extents(1, {3000, 1, 1}, {k})) c.push_back({1, e, {k}});
    for (std::int64_t n : {1, 2, 3, 7, 31, 127, 1009}) c.push_back({1, {n, 1, 1}, {k}});
  }
  c.push_back({1, {5, 1, 1}, {40}});  // filter larger than the signal
  c.push_back({1, {1, 1, 1}, {7}});
  c.push_back({1, {257, 1, 1}, {12}, 3});  // batch
  run_cases(c);
}

TEST(CpuFft, TwoDimensionalAtTileEdgesPrimesAndOneElementAxes) {
  std::vector<Case> c;
  for (const std::vector<std::int64_t>& k : {std::vector<std::int64_t>{7, 7}, {6, 9}, {2, 2}})
    for (const Extents& e : tile_edge_extents(2, {150, 170, 1}, k)) c.push_back({2, e, k});
  // One axis of filter extent 1: whole rows (or columns) of several tiles.
  for (const Extents& e : tile_edge_extents(2, {3, 3000, 1}, {1, 5})) c.push_back({2, e, {1, 5}});
  for (const Extents& e : tile_edge_extents(2, {3000, 3, 1}, {5, 1})) c.push_back({2, e, {5, 1}});
  for (auto [h, w] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {1, 37}, {41, 1}, {2, 3}, {13, 17}, {53, 29}})
    for (const std::vector<std::int64_t>& k : {std::vector<std::int64_t>{3, 3}, {4, 5}, {11, 11}})
      c.push_back({2, {h, w, 1}, k});
  c.push_back({2, {6, 9, 1}, {15, 20}});     // larger than the input on both axes
  c.push_back({2, {3, 40, 1}, {9, 4}});      // on one
  c.push_back({2, {31, 37, 1}, {8, 6}, 3});  // batch
  run_cases(c);
}

TEST(CpuFft, ThreeDimensional) {
  std::vector<Case> c;
  for (const Extents& e : tile_edge_extents(3, {20, 24, 30}, {3, 3, 3}))
    c.push_back({3, e, {3, 3, 3}});
  for (const Extents& e : {Extents{1, 1, 1}, Extents{1, 7, 9}, Extents{5, 1, 11}, Extents{7, 6, 1},
                           Extents{11, 13, 17}})
    for (const std::vector<std::int64_t>& k :
         {std::vector<std::int64_t>{3, 3, 3}, {2, 4, 3}, {5, 1, 3}, {1, 1, 4}})
      c.push_back({3, e, k});
  c.push_back({3, {4, 5, 6}, {9, 11, 7}});    // larger than the input on every axis
  c.push_back({3, {6, 7, 8}, {3, 2, 5}, 2});  // batch
  run_cases(c);
}

// Badly scaled inputs, held to the bound: magnitudes 10^-6 .. 10^6 (log-uniform, random signs)
// everywhere, and an array whose first half along x is of size 10^6 and the rest 10^-6. The
// bound is normwise over a tile, so the small outputs of a tile that also reads the large half
// carry the large values' rounding: there the error exceeds the direct sum's tolerance (which a
// test of direct sums would flag), and stays within the FFT's.
TEST(CpuFft, BadlyScaledDataWithinTheBound) {
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
      for (const bool halves : {false, true}) {
        const Filter f = random_filter(c.filter);
        const auto run = [&](auto zero) {
          using T = decltype(zero);
          const Problem p(c.rank, c.ext, 1, f, dtype_of<T>(), Op::correlate, e2);
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
          opt.strategy = kFft;
          opt.edges = e2;
          apply(ConstArrayView(in.data(), p.dtype(), c.rank, c.ext), array_view(out, c.rank, c.ext),
                f, opt);
          EXPECT_EQ(compare(kFft, p, in, out), "");
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
TEST(CpuFft, NonFiniteInputsAndCvalGiveTheReferencesNaNs) {
  for (const Edges& e :
       {Edges{}, Edges::all(Boundary::wrap), Edges::all(Boundary::constant, std::nan(""))}) {
    const Filter f = random_filter({9, 9});
    const Problem p(2, {300, 280, 1}, 1, f, DType::f32, Op::correlate, e);
    std::vector<float> in = random_vector<float>(p.elements());
    in[1234] = std::numeric_limits<float>::quiet_NaN();
    in[40000] = std::numeric_limits<float>::infinity();
    std::vector<float> out(in.size());
    poison(out);
    Options opt;
    opt.strategy = kFft;
    opt.edges = e;
    apply(ConstArrayView(in.data(), p.dtype(), 2, {300, 280, 1}), array_view(out, 2, {300, 280, 1}),
          f, opt);
    std::vector<double> ref(in.size());
    cpu::reference_f64(p, in.data(), ref.data());
    std::vector<float> finite = in;
    for (float& x : finite)
      if (!std::isfinite(x)) x = 0;
    Edges ez = e;
    if (std::isnan(ez.cval)) ez.cval = 0;
    const Problem q(2, {300, 280, 1}, 1, f, DType::f32, Op::correlate, ez);
    const std::vector<double> tol = tolerances(kFft, q, finite);
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
TEST(CpuFft, ToleranceCatchesAShiftedFilter) {
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
    const std::vector<double> tol = tolerances(kFft, p, in);
    std::size_t caught = 0;
    for (std::size_t i = 0; i < in.size(); ++i) caught += !(std::fabs(wrong[i] - ref[i]) <= tol[i]);
    EXPECT_GT(caught, in.size() * 9 / 10) << p.describe();
  }
}

TEST(CpuFft, RefusesWhereDirectSumsAreRequired) {
  const Strategy* s = find_strategy(kFft);
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
  opt.strategy = kFft;
  opt.direct_sums = true;
  EXPECT_NE(error_of([&] {
              apply(ConstArrayView(in.data(), DType::f32, 2, {100, 100, 1}),
                    array_view(out, 2, {100, 100, 1}), random_filter({31, 31}), opt);
            }).find("direct sums required"),
            std::string::npos);
  // `auto` with direct sums never takes it.
  opt.strategy.clear();
  opt.backend = Backend::cpu;
  const Problem big(2, {1024, 1024, 1}, 1, random_filter({31, 31}), DType::f32);
  Problem big_direct = big;
  big_direct.require_direct_sums();
  EXPECT_EQ(choose(big_direct, opt).strategy, "cpu");
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
  ASSERT_EQ(ws.size(), 2u);
  EXPECT_NE(ws[0].what.find("spectrum"), std::string::npos);
  EXPECT_NE(ws[1].what.find("FFT tiles"), std::string::npos);
  // A tile and its transform per thread: within a few MiB each.
  EXPECT_LT(ws[1].bytes, 8.0 * omp_get_max_threads() * (1 << 20));
  for (int a = 1; a < 3; ++a) {
    EXPECT_GE(t.fft[a], t.tile[a] + 31 - 1);
    EXPECT_GE(t.tile[a], 31);
  }
}

}  // namespace
}  // namespace halo::test
