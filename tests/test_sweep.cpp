// The generic sweep: every registered strategy against the float64 reference, on fresh random
// data with poisoned outputs, over tile-edge sizes, primes, 1-element arrays, filters larger than
// the input, odd and even filters, both operations, batches, ranks 1-3 and both dtypes.
// A strategy that says it cannot implement a problem is skipped for that problem (its reason is
// checked to be non-empty); CUDA strategies skip entirely when no device is present.
// FastVariantSweep runs `fast` again under each tuning variant of support.hpp (Options::tuning),
// on every case of the sweep with zero ghost cells (the kernels' own result; the border pass of
// the other modes does not depend on the tuning), once centred and once at an origin limit.
#include <gtest/gtest.h>

#include <algorithm>

#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

std::vector<Case> sweep_cases() {
  std::vector<Case> c;
  // 1D: tile edges, primes, tiny arrays, filters larger than the input, odd and even filters.
  const std::int64_t n1[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256, 257,
                             1021, 1024, 4099};
  const std::int64_t k1[] = {1, 2, 3, 4, 5, 9, 17};
  for (auto n : n1)
    for (auto k : k1) c.push_back({1, {n, 1, 1}, {k}});
  c.push_back({1, {5, 1, 1}, {33}});
  c.push_back({1, {1, 1, 1}, {8}});
  c.push_back({1, {40000, 1, 1}, {129}});
  c.push_back({1, {1000, 1, 1}, {7}, 3});
  // Wide 1-D filters (r >= 24: `fast` streams 16 outputs per lane), at the edges of its 512-output
  // items, unaligned lengths, tiny signals and a batch.
  for (auto n : {1, 2, 31, 509, 512, 513, 1021, 4099})
    for (auto k : {49, 65, 97, 129}) c.push_back({1, {n, 1, 1}, {k}});
  c.push_back({1, {2052, 1, 1}, {129}, 3});
  // Signals of a multiple of 4 elements (16-byte pitch: `fast` can stream them through a
  // block-wide ring of 2048- or 4096-output tiles): several tiles, a partial last one, a batch.
  c.push_back({1, {8196, 1, 1}, {33}});
  c.push_back({1, {6000, 1, 1}, {25}, 3});
  c.push_back({1, {4100, 1, 1}, {9}});
  c.push_back({1, {16388, 1, 1}, {65}});
  c.push_back({1, {2044, 1, 1}, {48}, 2});
  // The same for r >= 48 (`fast`'s padded tile of 4096 outputs, zero-filled chunks at the edges):
  // a signal shorter than the filter, one tile exactly, one and a bit, an unfinished third.
  for (auto n : {4, 8, 508, 4096, 4100, 12284})
    for (auto k : {97, 129}) c.push_back({1, {n, 1, 1}, {k}});
  c.push_back({1, {8196, 1, 1}, {128}, 3});
  // 2D.
  const std::pair<std::int64_t, std::int64_t> n2[] = {
      {1, 1},   {1, 17},  {17, 1},  {2, 3},   {15, 16},  {16, 16}, {17, 17},
      {31, 33}, {32, 32}, {33, 31}, {64, 257}, {127, 129}, {128, 128}, {129, 127}};
  const std::vector<std::int64_t> k2[] = {{1, 1}, {3, 3}, {2, 2}, {4, 3}, {5, 5},
                                          {9, 9}, {1, 7}, {7, 1}};
  for (auto [h, w] : n2)
    for (const auto& k : k2) c.push_back({2, {h, w, 1}, k});
  c.push_back({2, {7, 7, 1}, {9, 9}});    // filter larger than the input
  c.push_back({2, {3, 40, 1}, {11, 4}});  // larger on one axis only
  c.push_back({2, {300, 1000, 1}, {15, 15}});
  c.push_back({2, {37, 45, 1}, {5, 5}, 3});
  // Large 2-D filters: `fast` runs them in passes of a few filter rows each (odd, even,
  // anisotropic, larger than the input, at the chunk and strip edges).
  c.push_back({2, {131, 257, 1}, {25, 25}});
  c.push_back({2, {40, 129, 1}, {31, 31}});
  c.push_back({2, {17, 33, 1}, {31, 30}});
  c.push_back({2, {70, 300, 1}, {24, 9}, 2});
  // Rows of a multiple of 4 elements and r = 4..6, wider than one strip of 8 columns per lane
  // (256: `fast`'s TMA ring then copies each row group in two boxes), a partial last strip.
  c.push_back({2, {45, 520, 1}, {9, 9}});
  c.push_back({2, {33, 300, 1}, {11, 11}, 2});
  c.push_back({2, {20, 772, 1}, {13, 13}});
  c.push_back({2, {19, 516, 1}, {13, 7}});
  // 3D.
  const Extents n3[] = {{1, 1, 1}, {2, 3, 4}, {8, 8, 8}, {15, 16, 17}, {17, 17, 17}, {33, 9, 31},
                        {4, 64, 65}};
  const std::vector<std::int64_t> k3[] = {{3, 3, 3}, {2, 2, 2}, {5, 5, 5},
                                          {1, 1, 3}, {3, 1, 1}, {4, 3, 2}};
  for (const auto& e : n3)
    for (const auto& k : k3) c.push_back({3, e, k});
  c.push_back({3, {5, 5, 5}, {7, 7, 7}});
  c.push_back({3, {11, 13, 130}, {9, 9, 9}});
  c.push_back({3, {6, 7, 9}, {9, 8, 7}});
  c.push_back({3, {9, 10, 11}, {3, 3, 3}, 2});
  // Rows of a multiple of 4 elements (16-byte pitch: `fast` reads them through the TMA ring), with
  // r = 2..4, an even filter, a batch, and more planes than one chunk.
  c.push_back({3, {12, 20, 36}, {5, 5, 5}, 2});
  c.push_back({3, {9, 11, 132}, {7, 7, 7}});
  c.push_back({3, {40, 5, 8}, {9, 9, 9}});
  c.push_back({3, {70, 9, 12}, {6, 5, 4}});
  // Several block tiles of `fast`'s plane ring (128 columns x 8-16 rows), partial ones at the
  // far edges.
  c.push_back({3, {18, 35, 132}, {3, 3, 3}});
  c.push_back({3, {25, 17, 260}, {5, 5, 5}});
  c.push_back({3, {10, 33, 136}, {7, 7, 7}, 2});
  return c;
}

class StrategySweep : public ::testing::TestWithParam<std::string> {};

// The boundary treatments of the sweep: zero ghosts (the seed notes'), then every mode, constant
// with a cval that is not 0, and the origin at either limit on the last axis (case by case, so
// that the sweep stays a few seconds long).
std::vector<Edges> sweep_edges(const Case& c, std::size_t index) {
  std::vector<Edges> v{Edges{}};
  Edges shifted;  // zero ghosts, the filter shifted by an origin at a limit
  shifted.origin[0] = index % 2 ? -(c.filter[0] / 2) : (c.filter[0] - 1) / 2;
  v.push_back(shifted);
  const Boundary modes[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                            Boundary::mirror, Boundary::wrap};
  for (Boundary m : modes) {
    Edges e = Edges::all(m, m == Boundary::constant ? 1.5 : 0.0);
    const std::int64_t k = c.filter.back();
    e.origin[c.rank - 1] = index % 2 ? (k - 1) / 2 : -(k / 2);
    v.push_back(e);
  }
  // Per-axis modes where there are several axes.
  if (c.rank > 1) {
    Edges e;
    e.mode = {Boundary::reflect, Boundary::wrap, Boundary::nearest};
    if (c.rank == 3) e.mode = {Boundary::wrap, Boundary::constant, Boundary::mirror};
    e.cval = -2;
    v.push_back(e);
  }
  return v;
}

// Whether s is written for float32 or float64 problems at all (not cpu_lines and lines, written
// for 8- and 16-bit integers: test_native_dtypes.cpp sweeps those); why not in *why.
template <class T>
bool written_for(const Strategy& s, std::string* why) {
  const Problem p(1, {8, 1, 1}, 1, Filter({1.0}, {1}), dtype_of<T>());
  const Status st = s.accepts_dtypes(p);
  if (!st) *why = s.name() + " is not written for " + dtype_name(dtype_of<T>()) + ": " + st.reason;
  return bool(st);
}

template <class T>
void sweep(const Strategy& s) {
  int ran = 0, refused = 0, failed = 0;
  const std::vector<Case> cases = sweep_cases();
  for (std::size_t ci = 0; ci < cases.size(); ++ci)
  for (const Edges& edges : sweep_edges(cases[ci], ci)) {
    const Case& c = cases[ci];
    // A dense filter under both ops, and a rank-1 one (what `separable` runs) under one.
    const Filter dense = random_filter(c.filter), rank1 = random_outer_product(c.filter);
    const Op other = ci % 2 ? Op::convolve : Op::correlate;
    for (const auto& [f, op] : {std::pair{dense, Op::correlate}, std::pair{dense, Op::convolve},
                                std::pair{rank1, other}}) {
      const Problem p(c.rank, c.ext, c.batch, f, dtype_of<T>(), op, edges);
      const Status st = s.can_implement(p);
      if (!st) {
        EXPECT_FALSE(st.reason.empty()) << s.name() << " refused " << p.describe()
                                        << " without a reason";
        ++refused;
        continue;
      }
      const std::string err =
          check_strategy<T>(s.name(), c.rank, c.ext, c.batch, f, op, false, edges);
      ++ran;
      if (!err.empty()) {
        ADD_FAILURE() << s.name() << ": " << err;
        if (++failed >= 10) return;
      }
    }
  }
  EXPECT_GT(ran, 0) << s.name() << " ran no case of the sweep";
  std::printf("[ sweep    ] %s %s: %d cases ran, %d refused\n", s.name().c_str(),
              sizeof(T) == 4 ? "f32" : "f64", ran, refused);
}

TEST_P(StrategySweep, Float32MatchesReference) {
  const Strategy* s = find_strategy(GetParam());
  ASSERT_NE(s, nullptr);
  std::string why;
  if (s->backend() == Backend::cuda && !cuda_available(&why)) GTEST_SKIP() << why;
  if (!written_for<float>(*s, &why)) GTEST_SKIP() << why;
  sweep<float>(*s);
}

TEST_P(StrategySweep, Float64MatchesReference) {
  const Strategy* s = find_strategy(GetParam());
  ASSERT_NE(s, nullptr);
  std::string why;
  if (s->backend() == Backend::cuda && !cuda_available(&why)) GTEST_SKIP() << why;
  if (!written_for<double>(*s, &why)) GTEST_SKIP() << why;
  sweep<double>(*s);
}

// `fast` under one tuning variant: every case, zero ghosts centred (correlate) and with the filter
// shifted to an origin limit (convolve).
template <class T>
void variant_sweep(const FastTuning& tuning) {
  const Strategy* s = find_strategy("fast");
  ASSERT_NE(s, nullptr);
  int ran = 0, refused = 0, failed = 0;
  const std::vector<Case> cases = sweep_cases();
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const std::vector<Edges> edges = sweep_edges(c, ci);  // [0]: centred, [1]: shifted
    const Filter f = random_filter(c.filter);
    for (int e = 0; e < 2; ++e) {
      const Op op = e == 0 ? Op::correlate : Op::convolve;
      Problem p(c.rank, c.ext, c.batch, f, dtype_of<T>(), op, edges[std::size_t(e)]);
      p.set_tuning(tuning);
      if (!s->can_implement(p)) {
        ++refused;
        continue;
      }
      const std::string err = check_strategy<T>("fast", c.rank, c.ext, c.batch, f, op, false,
                                                edges[std::size_t(e)], tuning);
      ++ran;
      if (!err.empty()) {
        ADD_FAILURE() << err;
        if (++failed >= 10) return;
      }
    }
  }
  EXPECT_GT(ran, 0);
  std::printf("[ sweep    ] fast (%s) %s: %d cases ran, %d refused\n",
              detail::tuning_string(tuning).c_str(), sizeof(T) == 4 ? "f32" : "f64", ran, refused);
}

class FastVariantSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(FastVariantSweep, Float32MatchesReference) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  variant_sweep<float>(detail::parse_fast_tuning(GetParam(), "variant"));
}

TEST_P(FastVariantSweep, Float64MatchesReference) {
  std::string why;
  if (!cuda_available(&why)) GTEST_SKIP() << why;
  variant_sweep<double>(detail::parse_fast_tuning(GetParam(), "variant"));
}

INSTANTIATE_TEST_SUITE_P(Tuned, FastVariantSweep, ::testing::ValuesIn(fast_tuning_variants()),
                         [](const auto& info) { return variant_test_name(info.param); });

std::vector<std::string> strategy_names() {
  std::vector<std::string> v;
  for (const Strategy* s : strategies())
    if (s->name() != "reference") v.push_back(s->name());
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, StrategySweep, ::testing::ValuesIn(strategy_names()),
                         [](const auto& info) { return info.param; });

// The sweep's own check must be able to fail: a deliberately wrong "strategy" (the reference run
// on a shifted filter) is caught.
TEST(SweepSelfCheck, DetectsAWrongResult) {
  const Filter f = random_filter({5});
  const Problem p(1, {64, 1, 1}, 1, f, DType::f32);
  std::vector<float> in = random_vector<float>(64);
  std::vector<double> ref(64), scale(64), wrong(64);
  cpu::reference_f64(p, in.data(), ref.data());
  cpu::reference_f64(p, in.data(), scale.data(), true);
  const Problem shifted(1, {64, 1, 1}, 1, f, DType::f32, Op::convolve);  // flipped filter
  cpu::reference_f64(shifted, in.data(), wrong.data());
  int bad = 0;
  for (int i = 0; i < 64; ++i)
    if (!(std::fabs(wrong[i] - ref[i]) <= tolerance<float>(5, scale[i]))) ++bad;
  EXPECT_GT(bad, 32);
}

// F(2,3) along x, emulated on the host in float as the Winograd columns of `fast` compute it (one
// FMA per term, pairs of outputs, segments of 3 taps zero-padded at the end), for an odd kx x ky
// filter: the output that winograd_tolerance() must bound.
std::vector<float> winograd_columns_f32(const Problem& p, const std::vector<float>& in) {
  const Dims3 d = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const std::vector<double>& w = p.correlation_weights();
  const std::int64_t segs = (k.x + 2) / 3;
  auto at = [&](std::int64_t y, std::int64_t x) {
    return y >= 0 && y < d.y && x >= 0 && x < d.x ? in[std::size_t(y * d.x + x)] : 0.0f;
  };
  std::vector<float> out(in.size());
  for (std::int64_t y = 0; y < d.y; ++y)
    for (std::int64_t x = 0; x < d.x; x += 2) {
      float m[4] = {0, 0, 0, 0};
      for (std::int64_t fy = 0; fy < k.y; ++fy)
        for (std::int64_t sg = 0; sg < segs; ++sg) {
          double g[3];
          for (int i = 0; i < 3; ++i) {
            const std::int64_t fx = 3 * sg + i;
            g[i] = fx < k.x ? w[std::size_t(fy * k.x + fx)] : 0.0;
          }
          const float gt[4] = {float(g[0]), float((g[0] + g[1] + g[2]) / 2),
                               float((g[0] - g[1] + g[2]) / 2), float(g[2])};
          float v[4];
          for (int t = 0; t < 4; ++t) v[t] = at(y - a.y + fy, x - a.x + 3 * sg + t);
          const float td[4] = {v[0] - v[2], v[1] + v[2], v[2] - v[1], v[1] - v[3]};
          for (int t = 0; t < 4; ++t) m[t] = std::fmaf(gt[t], td[t], m[t]);
        }
      out[std::size_t(y * d.x + x)] = m[0] + m[1] + m[2];
      if (x + 1 < d.x) out[std::size_t(y * d.x + x + 1)] = m[1] - m[2] - m[3];
    }
  return out;
}

// The Winograd tolerance bounds the scheme's rounding on random and on badly scaled inputs
// (values of 1 among ones of 1e-4 and zeros, where the transformed terms are large against the
// direct sum of some outputs), and still catches a missed tap.
TEST(SweepSelfCheck, WinogradToleranceBoundsTheSchemeAndCatchesAMissedTap) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{9, 9}, {1, 9}, {5, 7}, {3, 3}}) {
    // The centre weight made the largest, so that the missed tap below (the largest) reads
    // inside the array at every output: an off-centre one reads zero ghosts near an edge, where
    // missing it changes nothing, and a corner tap of a 9x9 on 23x41 left 25% of the outputs so.
    std::vector<double> fw = random_filter(shape).weights();
    double top = 0;
    for (double x : fw) top = std::max(top, std::fabs(x));
    fw[(shape[0] / 2) * shape[1] + shape[1] / 2] = 1.5 * top;
    const Filter f(fw, shape);
    const Problem p(2, {23, 41, 1}, 1, f, DType::f32);
    for (int kind = 0; kind < 2; ++kind) {
      std::vector<float> in = random_vector<float>(p.elements());
      if (kind == 1) {
        std::uniform_int_distribution<int> pick(0, 2);
        for (float& x : in) x = pick(rng()) == 0 ? (x < 0 ? -1.0f : 1.0f) : pick(rng()) ? 1e-4f * x : 0.0f;
      }
      std::vector<double> ref(in.size());
      cpu::reference_f64(p, in.data(), ref.data());
      const std::vector<double> band = winograd_band(p, in);
      const std::vector<float> got = winograd_columns_f32(p, in);
      for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_LE(std::fabs(double(got[i]) - ref[i]), winograd_tolerance<float>(p.taps(), band[i]))
            << p.describe() << " input kind " << kind << " at " << i << "; seed " << fresh_seed();
      if (kind == 1) continue;
      // A missed tap (the filter's largest weight, its centre, zeroed) is caught almost
      // everywhere.
      std::vector<double> w = p.correlation_weights();
      *std::max_element(w.begin(), w.end(), [](double a, double b) {
        return std::fabs(a) < std::fabs(b);
      }) = 0;
      const Problem missed(2, {23, 41, 1}, 1, Filter(w, shape), DType::f32);
      std::vector<double> wrong(in.size());
      cpu::reference_f64(missed, in.data(), wrong.data());
      std::size_t caught = 0;
      for (std::size_t i = 0; i < in.size(); ++i)
        caught += !(std::fabs(wrong[i] - ref[i]) <= winograd_tolerance<float>(p.taps(), band[i]));
      EXPECT_GT(caught, in.size() * 3 / 4) << p.describe();
    }
  }
  // On the adversary of support.hpp the scheme's rounding exceeds the direct sum's tolerance
  // (so a test of direct sums on it can tell them apart) and stays within its own.
  const Filter f = winograd_adversary_filter(9, 9);
  const Problem p(2, {23, 40, 1}, 1, f, DType::f32);
  const std::vector<float> in = winograd_adversary_input<float>(23, 40);
  std::vector<double> ref(in.size()), scale(in.size());
  cpu::reference_f64(p, in.data(), ref.data());
  cpu::reference_f64(p, in.data(), scale.data(), true);
  const std::vector<double> band = winograd_band(p, in);
  const std::vector<float> got = winograd_columns_f32(p, in);
  std::size_t beyond_direct = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]);
    ASSERT_LE(err, winograd_tolerance<float>(p.taps(), band[i])) << "adversary at " << i;
    beyond_direct += !(err <= tolerance<float>(p.taps(), scale[i]));
  }
  EXPECT_GT(beyond_direct, 0u) << "the adversary does not tell the Winograd form from direct sums";
}

}  // namespace
}  // namespace halo::test
