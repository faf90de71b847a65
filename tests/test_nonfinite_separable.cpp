// NaN and infinities at the edges of the work units of the CUDA strategies `separable`, `lowrank`
// and `fft`, which note the non-finite outputs their kernels store (NonFinite::noted): only then
// does apply() repair the outputs, so a kernel that stores a non-finite output without noting it
// leaves the strategy's own answer, which these cases make differ from SciPy's. Each case forces
// one kernel family (Options::strategy, Options::tuning, a phrase of the plan checked) and puts
// NaN and infinities where its units of work meet: strips, chunks, steps and running-sum
// restarts of the fused passes, tiles and z-steps of the volume kernels, segments and runs of
// box and long rows, runs and chunks of box and long columns, the terms of `lowrank`, the tiles,
// pairs and segments of the transforms. The filters have zero weights (taps SciPy's N-D footprint
// skips and the kernels multiply), and box running sums leak NaN after an infinity, so the
// strategies' raw answers differ from the reference's. Also: finite data never sets the note (no
// repair is run), overflows that the kernels store are noted too, and box filters of constant
// regions give the constant exactly on `separable` (every path a box factor takes).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/fft_tiling.hpp"
#include "support.hpp"

#ifdef HALO_TEST_CUDA  // set by tests/CMakeLists.txt when the CUDA backend is built
#include <cuda_runtime.h>
#include "halo/strategy.hpp"
#endif

namespace halo::test {
namespace {

constexpr double kPoison = 1.25e37;  // finite: a NaN poison would be repaired, not caught

// The outer product of random factors, each with a zero weight where it has three or more taps
// (not at its ends, which would shorten it).
Filter rank1_with_zeros(const std::vector<std::int64_t>& k) {
  std::vector<std::vector<double>> f;
  for (std::int64_t e : k) {
    std::vector<double> v = random_vector<double>(e);
    for (double& x : v) x = 0.25 + 0.75 * std::fabs(x);  // positive: no cancellation
    if (e >= 3) v[std::size_t(e / 2 - 1)] = 0;
    f.push_back(v);
  }
  return outer_product(f);
}

// A dense filter with about a third of its weights zero.
Filter dense_with_zeros(const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  for (std::int64_t e : k) n *= e;
  std::vector<double> w = random_vector<double>(n);
  for (std::int64_t i = 0; i < n; ++i)
    if (i % 3 == 1) w[std::size_t(i)] = 0;
  return Filter(w, k);
}

// A box of these extents, every weight 1 / taps (the C++ API's box).
Filter box_of(const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  for (std::int64_t e : k) n *= e;
  return Filter(std::vector<double>(std::size_t(n), 1.0 / double(n)), k);
}

// The box as the Python binding fuses SciPy's uniform_filter: the product of the factors 1 / k_a
// in float64, axis by axis (not exactly 1 / taps).
Filter box_as_fused_factors(const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  for (std::int64_t e : k) n *= e;
  double w = 1.0;
  for (std::int64_t e : k) w = w * (1.0 / double(e));  // every weight the same product
  return Filter(std::vector<double>(std::size_t(n), w), k);
}

// 3 x 3 x 3 axis lines through the centre (a `lowrank` of three one-axis terms).
Filter axis_lines_3d() {
  std::vector<double> w(27, 0.0);
  const std::vector<double> r = random_vector<double>(7);
  const int at[7] = {13, 12, 14, 10, 16, 4, 22};  // centre, x-1, x+1, y-1, y+1, z-1, z+1
  for (int i = 0; i < 7; ++i) w[std::size_t(at[i])] = 0.5 + std::fabs(r[std::size_t(i)]);
  return Filter(w, {3, 3, 3});
}

// The difference of two outer products (an SVD of two terms).
Filter two_terms(const std::vector<std::int64_t>& k) {
  const Filter a = rank1_with_zeros(k), b = random_outer_product(k);
  std::vector<double> w(a.weights().size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = a.weights()[i] - 0.5 * b.weights()[i];
  return Filter(w, k);
}

struct EdgeCase {
  std::string strategy;
  int rank = 1;
  Extents ext{1, 1, 1};  // C order
  Filter f;
  std::string path;  // a phrase of the strategy's plan that names the kernels under test
  // C-order coordinates of the non-finite inputs (negative: from the axis's end), an item first
  // where there is one more than the rank.
  std::vector<std::vector<std::int64_t>> at;
  std::int64_t batch = 1;
  FastTuning tuning;
  Edges edges = Edges::all(Boundary::reflect);
};

std::int64_t flat_index(const EdgeCase& c, const std::vector<std::int64_t>& a) {
  const bool item = int(a.size()) == c.rank + 1;
  std::int64_t per = 1;
  for (int d = 0; d < c.rank; ++d) per *= c.ext[d];
  std::int64_t i = 0;
  for (int d = 0; d < c.rank; ++d) {
    std::int64_t v = a[std::size_t(d + (item ? 1 : 0))];
    if (v < 0) v += c.ext[d];
    i = i * c.ext[d] + std::clamp<std::int64_t>(v, 0, c.ext[d] - 1);
  }
  return (item ? std::clamp<std::int64_t>(a[0], 0, c.batch - 1) : 0) * per + i;
}

int category(double v) {
  if (std::isnan(v)) return 1;
  if (std::isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

Problem problem_of(const EdgeCase& c, DType t) {
  Problem p(c.rank, c.ext, c.batch, c.f, t, Op::correlate, c.edges);
  p.set_tuning(c.tuning);
  return p;
}

// Runs the case under three placements of +inf, -inf and NaN (and both footprints) against the
// reference: the non-finite outputs exactly the reference's, the finite ones within a bound.
template <class T>
void check_edges(const EdgeCase& c) {
  const Problem p = problem_of(c, dtype_of<T>());
  SCOPED_TRACE(c.strategy + " on " + p.describe());
  const Strategy* s = find_strategy(c.strategy);
  ASSERT_TRUE(s);
  const Status st = s->can_implement(p);
  ASSERT_TRUE(st) << st.reason;
  EXPECT_EQ(s->nonfinite(p), NonFinite::noted);
  const std::string plan = s->plan(p);
  EXPECT_NE(plan.find(c.path), std::string::npos) << plan;
  const std::int64_t n = p.elements();
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T values[4] = {inf, -inf, inf, nan};
  double w1 = 0;
  for (double w : c.f.weights()) w1 += std::fabs(w);
  const double tol = 64.0 * double(c.f.taps() + 8) * std::numeric_limits<T>::epsilon() * w1;
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<T> in = random_vector<T>(n);
    int k = 0;
    for (const auto& a : c.at) in[std::size_t(flat_index(c, a))] = values[(k++ + variant) % 4];
    std::vector<T> ref(in.size(), T(kPoison)), out(in.size(), T(kPoison));
    Options o;
    o.edges = c.edges;
    o.tuning = c.tuning;
    o.footprint = variant == 2 ? Footprint::every : Footprint::nonzero;
    if (o.footprint == Footprint::every) {
      // Axis lines leave the weights off the lines out, which a zero weight on an infinity
      // must not be under Footprint::every: lowrank then refuses 3-D crosses.
      Problem pe = p;
      pe.set_footprint(Footprint::every);
      if (!s->can_implement(pe)) continue;
    }
    o.strategy = "reference";
    const ConstArrayView iv(in.data(), dtype_of<T>(), c.rank, c.ext, c.batch);
    apply(iv, ArrayView{ref.data(), dtype_of<T>(), c.rank, c.ext, c.batch}, c.f, o);
    o.strategy = c.strategy;
    const RunInfo info =
        apply(iv, ArrayView{out.data(), dtype_of<T>(), c.rank, c.ext, c.batch}, c.f, o);
    EXPECT_EQ(info.strategy, c.strategy);
    std::int64_t wrong = 0, first = -1, nonfinite = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double r = double(ref[std::size_t(i)]), v = double(out[std::size_t(i)]);
      nonfinite += category(r) != 0;
      if (category(r) != category(v) || (category(r) == 0 && !(std::fabs(r - v) <= tol))) {
        if (wrong++ == 0) first = i;
      }
    }
    EXPECT_GT(nonfinite, 0);  // the placements reached the outputs
    if (wrong)
      ADD_FAILURE() << "variant " << variant << ": " << wrong << " outputs differ, first " << first
                    << ": " << double(out[std::size_t(first)]) << ", the reference's "
                    << double(ref[std::size_t(first)]) << " (seed " << fresh_seed() << ")";
  }
}

FastTuning chunk_of(int rows) {
  FastTuning t;
  t.chunk = rows;
  return t;
}
FastTuning prefetch_feed() {
  FastTuning t;
  t.feed = FastFeed::prefetch;
  return t;
}

// ---------------------------------------------------------------------------------------------
// separable
// ---------------------------------------------------------------------------------------------
std::vector<EdgeCase> separable_cases() {
  std::vector<EdgeCase> v;
  // Passes along x alone: steps of 8 rows of a strip (strip edges at 256), and 8 strips of a
  // row beyond 2048 columns.
  v.push_back({"separable",
               1,
               {1500, 1, 1},
               rank1_with_zeros({31}),
               "8 rows of a strip",
               {{0}, {255}, {256}, {511}, {-1}}});
  v.push_back({"separable",
               2,
               {5, 5000, 1},
               rank1_with_zeros({1, 31}),
               "8 strips of a row",
               {{0, 2047}, {1, 2048}, {2, 255}, {3, 256}, {4, -1}}});
  // Box running sums along x (each thread's 8 outputs, then a restart): an infinity leaves a
  // running sum as NaN until the restart.
  v.push_back({"separable",
               1,
               {1500, 1, 1},
               box_of({40}),
               "running sums (x)",
               {{7}, {8}, {100}, {255}, {256}, {263}, {-1}}});
  // Box rows: segments of 4096 outputs, runs of 16 per thread.
  v.push_back({"separable",
               1,
               {10007, 1, 1},
               box_of({63}),
               "segments of 4096",
               {{15}, {16}, {500}, {4095}, {4096}, {4096 + 48}, {8191}, {-1}}});
  v.push_back({"separable",
               2,
               {3, 9000, 1},
               box_of({1, 100}),
               "segments of 4096",
               {{0, 4095}, {1, 4096}, {2, 8191}, {2, 8192}},
               2});
  // Fused x and y: strips of 256 columns, chunks of 24 rows (steps of 8), through registers and
  // (radius 4 to 32, on devices with tensor maps) by the tensor memory accelerator.
  for (const FastTuning& t : {chunk_of(24), prefetch_feed()}) {
    EdgeCase c{"separable",
               2,
               {150, 600, 1},
               rank1_with_zeros({9, 9}),
               "x and y fused",
               {{0, 0}, {7, 255}, {8, 256}, {23, 300}, {24, 511}, {47, 512}, {48, 3}, {-1, -1}}};
    c.tuning = t;
    if (!t.feed) c.tuning.chunk = 24;
    v.push_back(c);
    c.f = rank1_with_zeros({33, 25});  // steps of 16 rows
    c.at = {{15, 255}, {16, 256}, {31, 0}, {32, 599}, {-1, 7}};
    v.push_back(c);
  }
  // Box running sums down y: restarted every step (8 rows below radius 12, then 16).
  v.push_back({"separable",
               2,
               {200, 300, 1},
               box_of({13, 13}),
               "running sums (y)",
               {{7, 10}, {8, 255}, {9, 256}, {15, 100}, {16, 101}, {-1, -1}}});
  v.push_back({"separable",
               2,
               {200, 300, 1},
               box_of({31, 9}),
               "running sums (y)",
               {{15, 10}, {16, 255}, {31, 256}, {32, 100}, {-1, 0}}});
  {
    EdgeCase c = v.back();
    c.tuning = prefetch_feed();
    v.push_back(c);
  }
  // y alone and z alone (a plane a row), then two passes through scratch.
  v.push_back({"separable",
               2,
               {300, 70, 1},
               rank1_with_zeros({31, 1}),
               "y alone",
               {{15, 0}, {16, 69}, {63, 5}, {64, 6}, {-1, 3}}});
  v.push_back({"separable",
               3,
               {40, 8, 9},
               rank1_with_zeros({17, 1, 1}),
               "z alone",
               {{0, 0, 0}, {15, 7, 8}, {16, 3, 3}, {-1, -1, -1}}});
  v.push_back({"separable",
               3,
               {40, 8, 9},
               box_of({17, 1, 1}),
               "z alone",
               {{7, 0, 0}, {8, 7, 8}, {16, 3, 3}, {-1, -1, -1}}});
  v.push_back({"separable",
               3,
               {33, 17, 20},
               rank1_with_zeros({25, 3, 3}),
               "two passes",
               {{0, 0, 0}, {15, 16, 19}, {16, 8, 0}, {-1, -1, -1}}});
  v.push_back({"separable",
               3,
               {33, 17, 20},
               box_of({25, 3, 3}),
               "two passes",
               {{7, 0, 0}, {8, 16, 19}, {16, 8, 0}, {-1, -1, -1}}});
  // Volumes in one pass: tiles of 64 x 16 (64 x 24 by tensor maps) outputs of a plane, z steps
  // of 4 planes, z-chunks.
  for (const FastTuning& t : {FastTuning{}, prefetch_feed()}) {
    EdgeCase c{"separable",
               3,
               {40, 50, 140},
               rank1_with_zeros({7, 7, 7}),
               "z fused in one pass",
               {{0, 0, 0}, {3, 15, 63}, {4, 16, 64}, {7, 23, 127}, {8, 24, 128}, {-1, -1, -1}}};
    c.tuning = t;
    v.push_back(c);
    c.f = box_of({9, 9, 9});
    v.push_back(c);
  }
  // Box columns (boxes of more than 129 taps down y or z): runs of 16 rows, chunks of 2304.
  v.push_back({"separable",
               2,
               {3000, 50, 1},
               box_of({255, 1}),
               "box columns",
               {{15, 0}, {16, 49}, {127, 3}, {2303, 4}, {2304, 5}, {-1, -1}}});
  v.push_back({"separable",
               3,
               {300, 20, 30},
               box_of({141, 1, 1}),
               "box columns",
               {{15, 0, 0}, {16, 19, 29}, {150, 3, 3}, {-1, -1, -1}}});
  // Long columns: warps of 16 rows, steps of 128, chunks of at least 1024 rows.
  v.push_back({"separable",
               2,
               {3500, 40, 1},
               rank1_with_zeros({131, 1}),
               "long columns",
               {{15, 0}, {16, 31}, {127, 32}, {128, 39}, {1023, 1}, {1024, 2}, {-1, -1}}});
  // Long rows: segments of 4096 outputs, 16 per thread; then y in the ring.
  v.push_back({"separable",
               1,
               {9000, 1, 1},
               rank1_with_zeros({301}),
               "long rows",
               {{15}, {16}, {4095}, {4096}, {8191}, {8192}, {-1}}});
  v.push_back({"separable",
               2,
               {9, 2100, 1},
               box_of({3, 131}),
               "long rows",
               {{0, 0}, {4, 2047}, {8, 2048}, {-1, -1}}});
  // Box rows then box columns (a box beyond the ring down y, one along x on rows of 2048 or
  // more; small enough for the reference's direct sums).
  v.push_back({"separable",
               2,
               {140, 2050, 1},
               box_of({131, 7}),
               "box columns",
               {{15, 15}, {16, 16}, {70, 1000}, {100, -1}, {-1, 2047}}});
  return v;
}

TEST(NonFiniteSeparable, EdgesOfEveryKernelFamilyF32) {
  SKIP_WITHOUT_GPU();
  for (const EdgeCase& c : separable_cases()) check_edges<float>(c);
}

TEST(NonFiniteSeparable, EdgesOfEveryKernelFamilyF64) {
  SKIP_WITHOUT_GPU();
  int ran = 0;
  for (const EdgeCase& c : separable_cases()) {
    // float64: the fused kernels (factors up to radius 16) and two passes; no box or long forms.
    if (!find_strategy("separable")->can_implement(problem_of(c, DType::f64))) continue;
    EdgeCase d = c;
    const std::string plan = find_strategy("separable")->plan(problem_of(c, DType::f64));
    if (plan.find(c.path) == std::string::npos) d.path = "";
    check_edges<double>(d);
    ++ran;
  }
  EXPECT_GT(ran, 8);
}

// ---------------------------------------------------------------------------------------------
// lowrank: every term after the first adds into the output (inf - inf between terms).
// ---------------------------------------------------------------------------------------------
std::vector<EdgeCase> lowrank_cases() {
  std::vector<EdgeCase> v;
  EdgeCase c{"lowrank",         2,
             {150, 300, 1},     two_terms({9, 9}),
             "separable terms", {{0, 0}, {7, 255}, {8, 256}, {23, 100}, {24, 101}, {-1, -1}}};
  c.tuning = chunk_of(24);
  v.push_back(c);
  c.tuning = prefetch_feed();
  v.push_back(c);
  // Axis lines in 3-D: an x term (a pass along x alone, adding at run time), a y term and a z
  // term (compiled to add).
  v.push_back({"lowrank",
               3,
               {20, 30, 300},
               axis_lines_3d(),
               "axis lines",
               {{0, 0, 0}, {5, 7, 255}, {6, 8, 256}, {19, 29, 299}, {10, 15, 150}}});
  v.push_back({"lowrank",
               2,
               {40, 3000, 1},
               two_terms({5, 7}),
               "separable terms",
               {{0, 2047}, {7, 2048}, {8, 0}, {-1, -1}}});
  return v;
}

TEST(NonFiniteLowRank, EdgesAndTermsF32) {
  SKIP_WITHOUT_GPU();
  for (const EdgeCase& c : lowrank_cases()) check_edges<float>(c);
}

TEST(NonFiniteLowRank, EdgesAndTermsF64) {
  SKIP_WITHOUT_GPU();
  for (const EdgeCase& c : lowrank_cases()) check_edges<double>(c);
}

// ---------------------------------------------------------------------------------------------
// fft: cuFFT tiles (the scatter and the direct sums of flagged tiles), the row transforms'
// segments and pairs (across rows' ends), the 2-D tile transforms' pairs.
// ---------------------------------------------------------------------------------------------
std::vector<EdgeCase> fft_cases(DType t) {
  std::vector<EdgeCase> v;
  FastTuning no_shared;
  no_shared.fft_shared = false;
  // cuFFT tiles: non-finite inputs at the tiles' edges (from the tiling, which depends on the
  // dtype).
  {
    EdgeCase c{"fft", 2, {300, 333, 1}, dense_with_zeros({17, 17}), "overlap-save tiles", {}};
    c.tuning = no_shared;
    c.tuning.fft_tile = 12;  // tiles of at most 64 x 64: several per axis
    const detail::FftTiling tl = detail::cuda_fft_tiling(problem_of(c, t));
    const std::int64_t ty = tl.tile[1], tx = tl.tile[2];
    c.at = {{0, 0}, {ty - 1, tx - 1}, {ty, tx}, {2 * ty - 1, 0}, {2 * ty, 2 * tx}, {-1, -1}};
    v.push_back(c);
  }
  {
    EdgeCase c{"fft", 1, {50000, 1, 1}, dense_with_zeros({301}), "overlap-save tiles", {}, 2};
    c.tuning = no_shared;
    const detail::FftTiling tl = detail::cuda_fft_tiling(problem_of(c, t));
    const std::int64_t tx = tl.tile[2];
    c.at = {{0, 0}, {0, tx - 1}, {0, tx}, {1, 3 * tx}, {1, -1}};
    v.push_back(c);
  }
  {
    EdgeCase c{"fft", 3, {20, 30, 40}, dense_with_zeros({5, 5, 5}), "overlap-save tiles", {}};
    c.tuning.fft_tile = 10;
    const detail::FftTiling tl = detail::cuda_fft_tiling(problem_of(c, t));
    c.at = {{0, 0, 0},
            {tl.tile[0] - 1, tl.tile[1] - 1, tl.tile[2] - 1},
            {tl.tile[0], tl.tile[1], tl.tile[2]},
            {-1, -1, -1}};
    v.push_back(c);
  }
  if (t != DType::f32) return v;
  // Row transforms: segments of T = N - k + 1 outputs in pairs; rows of three segments pair the
  // last with the next row's first.
  {
    EdgeCase c{"fft", 1, {20000, 1, 1}, dense_with_zeros({101}), "row transforms", {}};
    c.tuning.fft_tile = 10;  // N = 1024
    const std::int64_t T = 1024 - 101 + 1;
    c.at = {{0}, {T - 1}, {T}, {2 * T - 1}, {2 * T}, {5 * T}, {-1}};
    v.push_back(c);
    c.rank = 2;
    c.ext = {5, 3 * T - 10, 1};
    c.f = dense_with_zeros({1, 101});
    c.at = {{0, 2 * T}, {0, 3 * T - 11}, {1, 0}, {1, T}, {4, -1}};
    v.push_back(c);
  }
  // Tile transforms: tiles of 56 x 112 outputs (a 9 x 17 filter), pairs along x.
  {
    EdgeCase c{
        "fft",
        2,
        {200, 500, 1},
        dense_with_zeros({9, 17}),
        "tile transforms",
        {{0, 0}, {55, 111}, {56, 112}, {0, 223}, {0, 224}, {111, 335}, {112, 336}, {-1, -1}}};
    v.push_back(c);
    c.batch = 2;
    c.at = {{1, 0, 0}, {1, 56, 224}, {0, -1, -1}};
    v.push_back(c);
  }
  return v;
}

TEST(NonFiniteFft, EdgesOfTilesPairsAndSegmentsF32) {
  SKIP_WITHOUT_GPU();
  for (const EdgeCase& c : fft_cases(DType::f32)) check_edges<float>(c);
}

TEST(NonFiniteFft, EdgesOfTilesF64) {
  SKIP_WITHOUT_GPU();
  for (const EdgeCase& c : fft_cases(DType::f64)) check_edges<double>(c);
}

// ---------------------------------------------------------------------------------------------
// Finite inputs whose sums overflow: the kernels store infinities (or NaN from inf - inf in a
// transform or a running sum) from finite data; those are noted too and repaired to the
// reference's value (finite where its float64 sum fits, else the infinity).
// ---------------------------------------------------------------------------------------------
TEST(NonFiniteNoted, OverflowsAreNotedAndRepaired) {
  SKIP_WITHOUT_GPU();
  struct Overflow {
    std::string strategy;
    int rank;
    Extents ext;
    Filter f;
    std::string path;
    FastTuning tuning;
  };
  FastTuning no_shared;
  no_shared.fft_shared = false;
  const std::vector<Overflow> cases = {
      // Raw box sums of 3e38 overflow float32; the means are finite.
      {"separable", 1, {1500, 1, 1}, box_of({40}), "running sums (x)", {}},
      {"separable", 1, {10007, 1, 1}, box_of({63}), "segments of 4096", {}},
      {"separable", 2, {100, 300, 1}, box_of({13, 13}), "running sums (y)", {}},
      {"separable", 2, {100, 300, 1}, box_of({5, 5}), "x and y fused", {}},
      {"separable", 3, {40, 30, 72}, box_of({9, 9, 9}), "z fused in one pass", {}},
      {"separable", 3, {40, 30, 72}, box_of({9, 9, 9}), "z fused in one pass", prefetch_feed()},
      {"separable", 2, {3000, 20, 1}, box_of({255, 1}), "box columns", {}},
      {"separable", 2, {140, 2050, 1}, box_of({131, 7}), "box columns", {}},
      {"separable", 2, {9, 2100, 1}, box_of({3, 131}), "long rows", {}},
      // Transforms of 3e38: overflows inside; the outputs (sums of about 6e38) are infinite.
      {"fft",
       1,
       {20000, 1, 1},
       Filter(std::vector<double>(101, 0.02), {101}),
       "row transforms",
       {}},
      {"fft",
       2,
       {200, 500, 1},
       Filter(std::vector<double>(9 * 17, 2.0 / 153), {9, 17}),
       "tile transforms",
       {}},
      {"fft",
       2,
       {300, 333, 1},
       Filter(std::vector<double>(17 * 17, 2.0 / 289), {17, 17}),
       "overlap-save tiles",
       no_shared}};
  for (const Overflow& c : cases) {
    Problem p(c.rank, c.ext, 1, c.f, DType::f32, Op::correlate, Edges::all(Boundary::reflect));
    p.set_tuning(c.tuning);
    SCOPED_TRACE(c.strategy + " on " + p.describe());
    const Strategy* s = find_strategy(c.strategy);
    ASSERT_TRUE(s->can_implement(p));
    EXPECT_NE(s->plan(p).find(c.path), std::string::npos) << s->plan(p);
    std::vector<float> in = random_vector<float>(p.elements());
    for (float& x : in) x = 3e38f * (0.9f + 0.1f * std::fabs(x));
    std::vector<float> ref(in.size(), float(kPoison)), out(in.size(), float(kPoison));
    Options o;
    o.edges = Edges::all(Boundary::reflect);
    o.tuning = c.tuning;
    o.strategy = "reference";
    const ConstArrayView iv(in.data(), DType::f32, c.rank, c.ext);
    apply(iv, ArrayView{ref.data(), DType::f32, c.rank, c.ext}, c.f, o);
    o.strategy = c.strategy;
    apply(iv, ArrayView{out.data(), DType::f32, c.rank, c.ext}, c.f, o);
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const double r = ref[i], v = out[i];
      if (category(r) != category(v) || (category(r) == 0 && !(std::fabs(r - v) <= 1e-5 * r)))
        if (wrong++ == 0) ADD_FAILURE() << "output " << i << ": " << v << ", the reference's " << r;
    }
    EXPECT_EQ(wrong, 0);
  }
}

#ifdef HALO_TEST_CUDA
// The note itself, through Strategy::run on device buffers: never set on finite data (so apply()
// launches no repair that does work), set on data with a NaN or an infinity that reaches an
// output.
TEST(NonFiniteNoted, TheNoteIsSetExactlyWhenAnOutputIsNonFinite) {
  SKIP_WITHOUT_GPU();
  std::vector<EdgeCase> all = separable_cases();
  for (const EdgeCase& c : lowrank_cases()) all.push_back(c);
  for (const EdgeCase& c : fft_cases(DType::f32)) all.push_back(c);
  for (const EdgeCase& c : all) {
    const Problem p = problem_of(c, DType::f32);
    SCOPED_TRACE(c.strategy + " on " + p.describe());
    const Strategy* s = find_strategy(c.strategy);
    ASSERT_TRUE(s->can_implement(p));
    const std::size_t n = std::size_t(p.elements());
    float *din = nullptr, *dout = nullptr;
    unsigned int* word = nullptr;
    ASSERT_EQ(cudaMalloc(&din, n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dout, n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&word, sizeof(unsigned int)), cudaSuccess);
    for (int nonfinite = 0; nonfinite < 2; ++nonfinite) {
      std::vector<float> in = random_vector<float>(std::int64_t(n));
      if (nonfinite)
        in[std::size_t(flat_index(c, c.at[1]))] = std::numeric_limits<float>::infinity();
      ASSERT_EQ(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemset(word, 0, sizeof(unsigned int)), cudaSuccess);
      Buffers b{din, dout};
      b.nonfinite = word;
      b.nonfinite_mark = 7;
      s->run(p, b, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      unsigned int got = 0;
      ASSERT_EQ(cudaMemcpy(&got, word, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(got, nonfinite ? 7u : 0u) << (nonfinite ? "an infinity in" : "finite data");
    }
    cudaFree(din);
    cudaFree(dout);
    cudaFree(word);
  }
}
#endif

// ---------------------------------------------------------------------------------------------
// Box filters of a constant region give the constant exactly on `separable` (as SciPy, which sums
// the window and divides by its size once): each pass sums its boxes' raw values and divides
// once. Every path a box factor takes: along x by FMAs (fewer than 6 taps), running sums and box
// rows; fused x and y (FMAs along x, running sums down y) through registers and tensor maps; y
// and z alone; volumes in one pass (both kernels) and in two; box columns after box rows; long
// rows; float64's FMAs; the C++ box (1 / taps) and the Python binding's product of 1 / k_a.
// ---------------------------------------------------------------------------------------------
struct BoxCase {
  int rank;
  Extents ext;
  std::vector<std::int64_t> k;
  FastTuning tuning = {};
};

template <class T>
void check_box_constants(const BoxCase& c, const Filter& f, T value) {
  const Edges edge_sets[3] = {Edges::all(Boundary::reflect), Edges::all(Boundary::wrap),
                              Edges::all(Boundary::constant, double(value))};
  for (const Edges& e : edge_sets) {
    Problem p(c.rank, c.ext, 1, f, dtype_of<T>(), Op::correlate, e);
    p.set_tuning(c.tuning);
    if (!find_strategy("separable")->can_implement(p)) continue;
    SCOPED_TRACE(p.describe() + ", value " + std::to_string(double(value)) + ": " +
                 find_strategy("separable")->plan(p));
    const std::vector<T> in(std::size_t(p.elements()), value);
    std::vector<T> out(in.size(), T(kPoison));
    Options o;
    o.edges = e;
    o.tuning = c.tuning;
    o.strategy = "separable";
    apply(ConstArrayView(in.data(), dtype_of<T>(), c.rank, c.ext),
          ArrayView{out.data(), dtype_of<T>(), c.rank, c.ext}, f, o);
    const std::int64_t off = std::count_if(out.begin(), out.end(), [&](T v) { return v != value; });
    EXPECT_EQ(off, 0) << "e.g. " << double(*std::find_if(out.begin(), out.end(), [&](T v) {
      return v != value;
    }));
  }
}

TEST(SeparableCuda, BoxesOfConstantRegionsGiveTheConstantExactly) {
  SKIP_WITHOUT_GPU();
  const std::vector<BoxCase> cases = {{1, {1500, 1, 1}, {3}},
                                      {1, {1500, 1, 1}, {10}},
                                      {1, {1500, 1, 1}, {40}},
                                      {1, {10007, 1, 1}, {63}},
                                      {2, {120, 300, 1}, {5, 5}},
                                      {2, {120, 300, 1}, {3, 7}},
                                      {2, {120, 300, 1}, {13, 13}},
                                      {2, {120, 300, 1}, {13, 13}, prefetch_feed()},
                                      {2, {120, 300, 1}, {31, 31}},
                                      {2, {120, 300, 1}, {31, 31}, prefetch_feed()},
                                      {2, {300, 70, 1}, {31, 1}},
                                      {2, {300, 70, 1}, {25, 1}},
                                      {3, {24, 30, 72}, {9, 9, 9}},
                                      {3, {24, 30, 72}, {9, 9, 9}, prefetch_feed()},
                                      {3, {24, 30, 70}, {3, 5, 7}},
                                      {3, {40, 20, 36}, {17, 17, 17}},
                                      {3, {40, 20, 36}, {17, 17, 17}, prefetch_feed()},
                                      {3, {33, 17, 20}, {25, 3, 3}},
                                      {3, {40, 8, 9}, {17, 1, 1}},
                                      {2, {700, 50, 1}, {255, 1}},
                                      {3, {300, 20, 30}, {141, 1, 1}},
                                      {2, {300, 2100, 1}, {201, 201}},
                                      {2, {9, 2100, 1}, {3, 131}},
                                      {2, {20, 40, 1}, {11, 10}}};
  int ran = 0;
  for (const BoxCase& c : cases)
    for (int fused = 0; fused < 2; ++fused) {
      const Filter f = fused ? box_as_fused_factors(c.k) : box_of(c.k);
      for (float value : {0.75f, 7.0f, -2.5f}) check_box_constants<float>(c, f, value);
      for (double value : {0.75, 7.0, -2.5, 1.0}) check_box_constants<double>(c, f, value);
      ++ran;
    }
  EXPECT_EQ(ran, int(2 * cases.size()));
  // A 1-D box along one axis of a 2-D array (SciPy's uniform_filter1d, the per-axis passes).
  for (int axis = 0; axis < 2; ++axis) {
    const Filter f = box_of({9}).along_axis(2, axis);
    for (const Edges& e : {Edges::all(Boundary::nearest), Edges::all(Boundary::mirror)}) {
      Problem p(2, {100, 200, 1}, 1, f, DType::f64, Op::correlate, e);
      ASSERT_TRUE(find_strategy("separable")->can_implement(p));
      const std::vector<double> in(std::size_t(p.elements()), 7.0);
      std::vector<double> out(in.size(), kPoison);
      Options o;
      o.edges = e;
      o.strategy = "separable";
      apply(ConstArrayView(in.data(), DType::f64, 2, {100, 200, 1}),
            ArrayView{out.data(), DType::f64, 2, {100, 200, 1}}, f, o);
      EXPECT_EQ(std::count(out.begin(), out.end(), 7.0), std::int64_t(out.size())) << axis;
    }
  }
}

}  // namespace
}  // namespace halo::test
