// CPU-specific edge cases of the fast `cpu` strategy, beyond the generic sweep: every block shape
// the kernel can take (rows per block, vectors per block, direct and edge-tile columns, partial
// last blocks), row counts around the row blocking, x extents around the vector widths, anchors off
// centre, filters larger than the input on one or every axis, 1-D signals split across threads,
// 3-D volumes, batches. Fresh random data and poisoned outputs (support.hpp); both dtypes and both
// operations; compared with the float64 reference within (taps + 2) * eps * sum|w||x|.
#include <gtest/gtest.h>

#include <hwy/targets.h>
#include <omp.h>

#include "support.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

template <class T>
void run_cases(const std::vector<Case>& cases) {
  int failed = 0;
  for (const Case& c : cases) {
    const Filter f = random_filter(c.filter);
    for (Op op : {Op::correlate, Op::convolve}) {
      const std::string err = check_strategy<T>("cpu", c.rank, c.ext, c.batch, f, op);
      if (!err.empty()) {
        ADD_FAILURE() << err;
        if (++failed >= 10) return;
      }
    }
  }
}

std::vector<Case> cases_1d() {
  std::vector<Case> c;
  const std::int64_t n[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 48, 49,
                            63, 64, 65, 127, 128, 129, 131, 191, 193, 255, 257, 1009};
  const std::int64_t k[] = {1, 2, 3, 4, 6, 9, 16, 17, 40};
  for (auto x : n)
    for (auto kk : k) c.push_back({1, {x, 1, 1}, {kk}});
  c.push_back({1, {3, 1, 1}, {300}});      // filter much larger than the signal
  c.push_back({1, {100003, 1, 1}, {33}});  // split along x across threads
  c.push_back({1, {20011, 1, 1}, {255}});
  c.push_back({1, {129, 1, 1}, {8}, 5});   // batch
  return c;
}

std::vector<Case> cases_2d() {
  std::vector<Case> c;
  // Rows around the row blocking (1..9), columns around 8/16/24/32/48-wide blocks.
  const std::int64_t h[] = {1, 2, 3, 4, 5, 7, 8, 9, 13};
  const std::int64_t w[] = {1, 2, 7, 15, 16, 17, 31, 33, 47, 48, 49, 97, 131};
  const std::vector<std::int64_t> k[] = {{1, 1}, {3, 3}, {2, 2}, {2, 5}, {5, 2}, {4, 4},
                                         {1, 9}, {9, 1}, {6, 7}};
  for (auto y : h)
    for (auto x : w)
      for (const auto& kk : k) c.push_back({2, {y, x, 1}, kk});
  c.push_back({2, {3, 3, 1}, {8, 8}});     // filter larger than the input on both axes
  c.push_back({2, {4, 50, 1}, {9, 3}});    // larger on y only
  c.push_back({2, {40, 5, 1}, {3, 12}});   // larger on x only
  c.push_back({2, {1, 1, 1}, {10, 10}});
  c.push_back({2, {257, 263, 1}, {15, 15}});  // several strips and column blocks
  c.push_back({2, {101, 1031, 1}, {4, 11}});
  c.push_back({2, {31, 29, 1}, {3, 3}, 3});   // batch
  c.push_back({2, {600, 37, 1}, {5, 5}});     // tall and narrow
  return c;
}

std::vector<Case> cases_3d() {
  std::vector<Case> c;
  const Extents n[] = {{1, 1, 1}, {1, 5, 17}, {3, 1, 33}, {2, 9, 16}, {5, 7, 49}, {9, 4, 3},
                       {6, 13, 31}};
  const std::vector<std::int64_t> k[] = {{3, 3, 3}, {2, 3, 4}, {1, 5, 1}, {4, 1, 1},
                                         {1, 1, 6}, {5, 2, 3}};
  for (const auto& e : n)
    for (const auto& kk : k) c.push_back({3, e, kk});
  c.push_back({3, {3, 4, 5}, {7, 9, 11}});  // larger than the input on every axis
  c.push_back({3, {7, 8, 9}, {3, 3, 3}, 2});
  c.push_back({3, {20, 20, 40}, {5, 5, 5}});
  return c;
}

TEST(CpuFast, Registered) {
  const Strategy* s = find_strategy("cpu");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->backend(), Backend::cpu);
  // Its estimate is the direct-sum model every CPU estimate is weighed against: finite, positive.
  const Estimate e = s->estimate(Problem(1, {5, 1, 1}, 1, Filter({1.0}, {1}), DType::f32));
  EXPECT_GT(e.ns, 0);
  EXPECT_TRUE(std::isfinite(e.ns)) << e.why;
  const BuildInfo b = build_info();
  EXPECT_FALSE(b.simd_targets.empty());
  EXPECT_FALSE(b.cpu_best_target.empty());
  EXPECT_NE(b.simd_targets.find(b.cpu_best_target), std::string::npos) << b.simd_targets;
}

TEST(CpuFast, Rank1F32) { run_cases<float>(cases_1d()); }
TEST(CpuFast, Rank1F64) { run_cases<double>(cases_1d()); }
TEST(CpuFast, Rank2F32) { run_cases<float>(cases_2d()); }
TEST(CpuFast, Rank2F64) { run_cases<double>(cases_2d()); }
TEST(CpuFast, Rank3F32) { run_cases<float>(cases_3d()); }
TEST(CpuFast, Rank3F64) { run_cases<double>(cases_3d()); }

// Every SIMD target compiled in and supported by this CPU (AVX-512, AVX2, SSE4, ..., scalar), not
// only the one dynamic dispatch picks here: each has its own vector width and register blocking.
TEST(CpuFast, EverySupportedTarget) {
  std::vector<Case> cases;
  for (std::int64_t x : {1, 3, 8, 17, 33, 49, 131})
    for (std::int64_t y : {1, 2, 5, 9}) {
      cases.push_back({2, {y, x, 1}, {3, 4}});
      cases.push_back({2, {y, x, 1}, {6, 1}});
    }
  cases.push_back({1, {1000, 1, 1}, {13}});
  cases.push_back({1, {4, 1, 1}, {9}});
  cases.push_back({3, {5, 6, 19}, {3, 2, 5}, 2});
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    SCOPED_TRACE(hwy::TargetName(t));
    EXPECT_EQ(build_info().cpu_best_target, hwy::TargetName(t));
    run_cases<float>(cases);
    run_cases<double>(cases);
  }
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_EQ(build_info().cpu_best_target, hwy::TargetName(targets.front()));
}

// Random shapes: rank, extents (1..80 per axis, 3-D smaller), filter extents (1..13, sometimes
// larger than the input), batch (1..3), dtype and op all drawn from the per-process seed.
TEST(CpuFast, RandomShapes) {
  std::uniform_int_distribution<int> rank_d(1, 3), batch_d(1, 3), coin(0, 1);
  int failed = 0;
  for (int i = 0; i < 2000 && failed < 10; ++i) {
    const int rank = rank_d(rng());
    const std::int64_t max_n = rank == 1 ? 3000 : rank == 2 ? 80 : 24;
    Extents ext{1, 1, 1};
    std::vector<std::int64_t> fshape;
    for (int a = 0; a < rank; ++a) {
      ext[a] = std::uniform_int_distribution<std::int64_t>(1, max_n)(rng());
      fshape.push_back(std::uniform_int_distribution<std::int64_t>(1, rank == 3 ? 6 : 13)(rng()));
    }
    const std::int64_t batch = batch_d(rng());
    const Filter f = random_filter(fshape);
    const Op op = coin(rng()) ? Op::correlate : Op::convolve;
    const std::string err = coin(rng()) ? check_strategy<float>("cpu", rank, ext, batch, f, op)
                                        : check_strategy<double>("cpu", rank, ext, batch, f, op);
    if (!err.empty()) {
      ADD_FAILURE() << err;
      ++failed;
    }
  }
}

// Outputs of 16 MiB and more take the non-temporal store path; row lengths that are not a multiple
// of the vector width leave some rows unaligned (those use ordinary stores).
TEST(CpuFast, LargeOutputs) {
  EXPECT_EQ("", check_strategy<float>("cpu", 2, {2048, 2051, 1}, 1, random_filter({3, 3}),
                                      Op::correlate));
  EXPECT_EQ("", check_strategy<float>("cpu", 2, {1024, 4096, 1}, 1, random_filter({2, 5}),
                                      Op::convolve));
  EXPECT_EQ("", check_strategy<double>("cpu", 2, {1030, 2048, 1}, 1, random_filter({3, 4}),
                                       Op::correlate));
  EXPECT_EQ("", check_strategy<float>("cpu", 1, {std::int64_t(1) << 22, 1, 1}, 1,
                                      random_filter({7}), Op::correlate));
}

// The block grid follows the output's alignment (rows whose byte length is a multiple of the
// vector start equally misaligned, and blocks are shifted to aligned addresses): outputs and
// inputs at every element offset within a 64-byte line, small and streamed (>= 16 MiB) sizes.
template <class T>
std::string check_at_offsets(int rank, Extents ext, const Filter& f, std::int64_t in_off,
                             std::int64_t out_off) {
  const Problem p(rank, ext, 1, f, dtype_of<T>());
  const std::int64_t n = p.elements();
  std::vector<T> in_buf = random_vector<T>(n + 16), out_buf(static_cast<std::size_t>(n + 16));
  poison(out_buf);
  const T* in = in_buf.data() + in_off;
  T* out = out_buf.data() + out_off;
  find_strategy("cpu")->run(p, Buffers{in, out}, nullptr);
  std::vector<double> ref(static_cast<std::size_t>(n)), scale(static_cast<std::size_t>(n));
  cpu::reference_f64(p, in, ref.data());
  cpu::reference_f64(p, in, scale.data(), /*absolute=*/true);
  for (std::int64_t i = 0; i < n; ++i)
    if (!(std::fabs(double(out[i]) - ref[i]) <= tolerance<T>(p.taps(), scale[i])))
      return p.describe() + " offsets in " + std::to_string(in_off) + " out " +
             std::to_string(out_off) + ": wrong at " + std::to_string(i) + ", got " +
             std::to_string(double(out[i])) + " want " + std::to_string(ref[i]);
  // Nothing written outside the output.
  std::vector<T> untouched(1);
  poison(untouched);
  for (std::int64_t i = 0; i < out_off; ++i)
    if (out_buf[static_cast<std::size_t>(i)] != untouched[0]) return "wrote before the output";
  for (std::int64_t i = out_off + n; i < n + 16; ++i)
    if (out_buf[static_cast<std::size_t>(i)] != untouched[0]) return "wrote after the output";
  return "";
}

TEST(CpuFast, MisalignedBuffers) {
  for (std::int64_t off = 0; off < 16; ++off) {
    EXPECT_EQ("", check_at_offsets<float>(2, {37, 64, 1}, random_filter({3, 5}), 0, off));
    EXPECT_EQ("", check_at_offsets<float>(2, {9, 160, 1}, random_filter({4, 2}), off, off));
    EXPECT_EQ("", check_at_offsets<double>(2, {21, 48, 1}, random_filter({3, 3}), 3, off));
    EXPECT_EQ("", check_at_offsets<float>(3, {5, 6, 32}, random_filter({3, 2, 3}), off, off));
    EXPECT_EQ("", check_at_offsets<float>(1, {4096, 1, 1}, random_filter({9}), 1, off));
  }
  for (std::int64_t off : {0, 3, 4, 12}) {
    EXPECT_EQ("", check_at_offsets<float>(2, {1025, 4096, 1}, random_filter({3, 3}), 0, off));
    EXPECT_EQ("", check_at_offsets<double>(2, {520, 4096, 1}, random_filter({2, 4}), 5, off));
  }
}

// Anchors off centre: a filter whose weights are all zero but one picks out a single shifted
// input element, so every output must equal exactly that element (or 0 for a ghost cell).
TEST(CpuFast, SingleTapShiftIsExact) {
  for (std::int64_t kx : {1, 2, 5, 8})
    for (std::int64_t ky : {1, 3, 4}) {
      for (std::int64_t tap = 0; tap < kx * ky; ++tap) {
        std::vector<double> w(static_cast<std::size_t>(kx * ky), 0.0);
        w[static_cast<std::size_t>(tap)] = 1.0;
        const Filter f(w, {ky, kx});
        const std::int64_t h = 11, wd = 37;
        const Problem p(2, {h, wd, 1}, 1, f, DType::f32);
        std::vector<float> in = random_vector<float>(h * wd), out(in.size());
        poison(out);
        Options opt;
        opt.strategy = "cpu";
        apply(view(in.data(), {h, wd}), view(out.data(), {h, wd}), f, opt);
        const std::int64_t dy = tap / kx - p.anchor()[0], dx = tap % kx - p.anchor()[1];
        for (std::int64_t y = 0; y < h; ++y)
          for (std::int64_t x = 0; x < wd; ++x) {
            const std::int64_t iy = y + dy, ix = x + dx;
            const float want = (iy < 0 || iy >= h || ix < 0 || ix >= wd) ? 0.0f : in[iy * wd + ix];
            ASSERT_EQ(out[y * wd + x], want) << "k " << ky << "x" << kx << " tap " << tap
                                             << " at (" << y << "," << x << ")";
          }
      }
    }
}

// The result must not depend on the number of threads (each output is computed by one thread in
// a fixed order), and one thread must work.
TEST(CpuFast, ThreadCountDoesNotChangeResult) {
  const Filter f = random_filter({7, 7});
  const std::int64_t h = 203, w = 517;
  const std::vector<float> in = random_vector<float>(h * w);
  std::vector<float> a(in.size()), b(in.size());
  poison(a);
  poison(b);
  Options opt;
  opt.strategy = "cpu";
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  apply(view(in.data(), {h, w}), view(a.data(), {h, w}), f, opt);
  omp_set_num_threads(std::max(2, saved));
  apply(view(in.data(), {h, w}), view(b.data(), {h, w}), f, opt);
  omp_set_num_threads(saved);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "at " << i;
  EXPECT_EQ("", check_strategy<float>("cpu", 2, {h, w, 1}, 1, f, Op::correlate));
}

}  // namespace
}  // namespace halo::test
