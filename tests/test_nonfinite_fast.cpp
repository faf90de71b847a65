// The `fast` strategy's non-finite notes (NonFinite::noted) and its exact box means.
//   - NonFiniteFast.*Word*: `fast` run directly (Strategy::run) with a word of the test's own:
//     every rank, compiled radius, dtype and tuning variant (support.hpp, so every feed and
//     layout), aligned and offset arrays, one infinity at a time at the edges of tiles, strips,
//     chunks, row groups and batch items, each boundary mode, a NaN or infinite cval, and the
//     small-array paths (the border pass alone, the whole-array pass): the word holds the mark
//     after every run that wrote a NaN or an infinity, and stays clear on finite data (a note
//     there would cost every run the repair's look at the outputs).
//   - NonFiniteFast.EdgesGiveTheReferencesPattern: through apply(), the outputs that are NaN,
//     +inf and -inf are the reference's (SciPy's). The filters have zero weights, which `fast`
//     multiplies and SciPy's N-D correlate skips, so an output `fast` left unrepaired (a missed
//     note) is NaN where the reference's is finite.
//   - NonFiniteFast.Box*: box filters (every weight 1/K, or products of 1/K_i as uniform filters
//     fuse them) of a constant region give the constant exactly in float32 and float64, on every
//     path (Winograd columns, split filters, the block rings, the border pass), and box sums that
//     overflow float32 are repaired to SciPy's finite means.
//   - NonFiniteFast.LargeFiniteValuesKeepTheirOutputs: finite data large enough to raise the
//     probes' note (probe_pairs) keeps the outputs computed (`fast` and `separable`).
// GPU tests skip without a device; cuda::box_taps runs without one.
#include <gtest/gtest.h>

#ifdef HALO_TEST_CUDA  // set by tests/CMakeLists.txt when the CUDA backend is built
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/parse.hpp"
#include "cuda/border/border.hpp"
#include "cuda/fast/policy.hpp"
#include "support.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPoison = 1.25e37;  // finite: a NaN poison would be repaired, not caught

const Strategy& fast() { return *find_strategy("fast"); }

// The compiled radii of `fast` for a rank and dtype.
std::vector<int> radii(int rank, DType t) {
  std::vector<int> v;
  for (int r = 0; r <= 128; ++r)
    if (cuda::fast::compiled_radius(rank, t, r) == r) v.push_back(r);
  return v;
}

// A random (2r+1)^rank filter with every third weight zero (the centre never): taps that `fast`
// multiplies and SciPy's N-D correlate skips, so 0 * inf is NaN in `fast`'s own sums only.
Filter laced_filter(int rank, int r) {
  const std::int64_t k = 2 * r + 1;
  std::vector<std::int64_t> shape(std::size_t(rank), k);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<double> w = random_vector<double>(n);
  for (std::int64_t i = 0; i < n; i += 3) w[std::size_t(i)] = 0;
  w[std::size_t(n / 2)] = 1.5;
  return Filter(w, shape);
}

// The arrays of each rank: several tiles, strips and row groups, partial last ones, a batch.
struct Shape {
  int rank;
  Extents ext;
  std::int64_t batch;
};
Shape shape_of(int rank) {
  if (rank == 1) return {1, {8196, 1, 1}, 2};
  if (rank == 2) return {2, {40, 520, 1}, 1};
  return {3, {12, 20, 136}, 1};
}
std::int64_t elements(const Shape& s) {
  std::int64_t n = s.batch;
  for (int a = 0; a < s.rank; ++a) n *= s.ext[a];
  return n;
}

// Flat indices at the edges of the work's pieces: 1-D segments of 128 (strip), 256 (held),
// 512 and 1024 (streamed), tiles of 2048 and 4096, the rows' and the batch items' ends; 2-D
// strips of 128 and 256 columns, chunks of 7 rows (tuned), row groups of 8, 12 and 16 (the TMA
// ring's boxes); 3-D strips, y-tiles of 8 and 16 rows (block ring), z-chunks of 5 (tuned).
std::vector<std::int64_t> edge_positions(const Shape& s) {
  std::vector<std::int64_t> v;
  if (s.rank == 1) {
    const std::int64_t n = s.ext[0];
    for (std::int64_t x : {std::int64_t(0), std::int64_t(1), std::int64_t(127), std::int64_t(128),
                           std::int64_t(255), std::int64_t(256), std::int64_t(1023),
                           std::int64_t(2047), std::int64_t(2048), std::int64_t(4095),
                           std::int64_t(4096), std::int64_t(8191), n - 1, n, 2 * n - 1})
      v.push_back(x);
  } else if (s.rank == 2) {
    const std::int64_t ny = s.ext[0], nx = s.ext[1];
    const std::int64_t yx[][2] = {{0, 0},   {0, nx - 1}, {ny - 1, 0},   {ny - 1, nx - 1},
                                  {6, 127}, {7, 128},    {8, 255},      {13, 256},
                                  {16, 383}, {20, 512},  {23, 3},       {35, 511}};
    for (const auto& p : yx) v.push_back(p[0] * nx + p[1]);
  } else {
    const std::int64_t ny = s.ext[1], nx = s.ext[2];
    const std::int64_t zyx[][3] = {{0, 0, 0},  {11, 19, 135}, {4, 15, 127}, {5, 16, 128},
                                   {9, 7, 64}, {10, 4, 131},  {2, 19, 0},   {6, 0, 135},
                                   {3, 8, 3}};
    for (const auto& p : zyx) v.push_back((p[0] * ny + p[1]) * nx + p[2]);
  }
  return v;
}

// Device buffers for runs of `fast` called directly, with a word of the test's own; `offset`
// elements into their allocations (1: bases not 16-byte aligned, the unaligned paths).
template <class T>
class DeviceRun {
 public:
  explicit DeviceRun(std::int64_t n) : n_(std::size_t(n)) {
    ok_ = cudaMalloc(&in_, (n_ + 4) * sizeof(T)) == cudaSuccess &&
          cudaMalloc(&out_, (n_ + 4) * sizeof(T)) == cudaSuccess &&
          cudaMalloc(&word_, sizeof(unsigned)) == cudaSuccess &&
          cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess;
  }
  ~DeviceRun() {
    cudaFree(in_);
    cudaFree(out_);
    cudaFree(word_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  bool ok() const { return ok_; }
  // Runs `fast` on p (in: its p.elements() inputs); returns the word after the run: kMark
  // where it noted a non-finite output, 0 where not.
  static constexpr unsigned kMark = 0x5eed;
  unsigned run(const Problem& p, const std::vector<T>& in, int offset) {
    T* din = static_cast<T*>(in_) + offset;
    T* dout = static_cast<T*>(out_) + offset;
    cudaMemcpyAsync(din, in.data(), in.size() * sizeof(T), cudaMemcpyHostToDevice, stream_);
    cudaMemsetAsync(word_, 0, sizeof(unsigned), stream_);
    Buffers b{din, dout, static_cast<unsigned*>(word_), kMark};
    fast().run(p, b, stream_);
    unsigned w = 0;
    cudaMemcpyAsync(&w, word_, sizeof(unsigned), cudaMemcpyDeviceToHost, stream_);
    const cudaError_t e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) ADD_FAILURE() << p.describe() << ": " << cudaGetErrorString(e);
    return w;
  }

 private:
  std::size_t n_;
  void *in_ = nullptr, *out_ = nullptr, *word_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool ok_ = false;
};

std::vector<std::string> variants() {
  std::vector<std::string> v = {"", "chunk=7", "feed=tma,chunk=7", "rows_3d=1,chunk=5"};
  for (const std::string& t : fast_tuning_variants()) v.push_back(t);
  return v;
}

std::vector<Edges> mode_edges(double cval) {
  std::vector<Edges> v;
  for (Boundary m : {Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap,
                     Boundary::constant})
    v.push_back(Edges::all(m, cval));
  Edges mixed;  // per-axis modes, x's ghosts zeros
  mixed.mode = {Boundary::wrap, Boundary::reflect, Boundary::constant};
  v.push_back(mixed);
  return v;
}

// Every run of one shape, filter radius and dtype under every tuning variant: the word clear on
// finite data (zero ghosts and every mode), set by one infinity at each edge position (under
// zero ghosts, where the interior kernels alone write the outputs, and under a mode, which the
// border pass, the small-array paths or the 3-D block ring apply), and set by an infinite or NaN
// cval on finite data (only the border pass, or the block ring applying the mode itself, sees
// it).
template <class T>
void word_runs(const Shape& s, int r, DeviceRun<T>& dev, const std::vector<std::string>& tunings,
               const std::vector<std::int64_t>& positions) {
  const Filter f = laced_filter(s.rank, r);
  const std::vector<T> finite = random_vector<T>(elements(s));
  for (const std::string& t : tunings) {
    const FastTuning tuning = t.empty() ? FastTuning{} : detail::parse_fast_tuning(t, "variant");
    for (int offset : {0, 1}) {
      auto problem = [&](const Edges& e) {
        Problem p(s.rank, s.ext, s.batch, f, dtype_of<T>(), Op::correlate, e);
        p.set_tuning(tuning);
        return p;
      };
      const Problem zero = problem(Edges{});
      const std::string what = zero.describe() + (t.empty() ? "" : " tuned " + t) +
                               (offset ? ", offset arrays" : "");
      EXPECT_EQ(dev.run(zero, finite, offset), 0u) << "a note on finite data: " << what;
      const std::vector<Edges> modes = mode_edges(0.75);
      std::vector<T> in = finite;
      int i = 0;
      for (std::int64_t at : positions) {
        if (at >= std::int64_t(in.size())) continue;
        in[std::size_t(at)] = T(i % 2 ? -kInf : kInf);
        EXPECT_EQ(dev.run(zero, in, offset), DeviceRun<T>::kMark)
            << "no note of an infinity at " << at << ": " << what;
        const Problem moded = problem(modes[std::size_t(i) % modes.size()]);
        EXPECT_EQ(dev.run(moded, in, offset), DeviceRun<T>::kMark)
            << "no note of an infinity at " << at << ": " << moded.describe()
            << (t.empty() ? "" : " tuned " + t) << (offset ? ", offset arrays" : "");
        in[std::size_t(at)] = finite[std::size_t(at)];
        ++i;
      }
      for (const Edges& e : modes)
        EXPECT_EQ(dev.run(problem(e), finite, offset), 0u)
            << "a note on finite data: " << problem(e).describe() << (t.empty() ? "" : " tuned " + t);
      for (double cval : {kInf, -kInf, std::numeric_limits<double>::quiet_NaN()}) {
        const Problem p = problem(Edges::all(Boundary::constant, cval));
        if (p.max_radius() == 0) continue;  // one tap at the output: no ghost cell is read
        EXPECT_EQ(dev.run(p, finite, offset), DeviceRun<T>::kMark)
            << "no note of cval " << cval << ": " << p.describe() << (t.empty() ? "" : " tuned " + t);
      }
    }
  }
}

template <class T>
void word_rank(int rank) {
  const Shape s = shape_of(rank);
  DeviceRun<T> dev(elements(s));
  ASSERT_TRUE(dev.ok());
  const std::vector<std::string> tunings = variants();
  const std::vector<std::int64_t> positions = edge_positions(s);
  for (int r : radii(rank, dtype_of<T>())) {
    SCOPED_TRACE("radius " + std::to_string(r));
    word_runs<T>(s, r, dev, tunings, positions);
  }
}

TEST(NonFiniteFast, WordOneDimensional) {
  SKIP_WITHOUT_GPU();
  word_rank<float>(1);
  word_rank<double>(1);
}
TEST(NonFiniteFast, WordTwoDimensional) {
  SKIP_WITHOUT_GPU();
  word_rank<float>(2);
  word_rank<double>(2);
}
TEST(NonFiniteFast, WordThreeDimensional) {
  SKIP_WITHOUT_GPU();
  word_rank<float>(3);
  word_rank<double>(3);
}

// The small-array paths under a mode: the border pass alone (1-D and 2-D arrays no longer than
// the filter's reach along an axis) and the whole-array pass (tiny arrays, short filters).
TEST(NonFiniteFast, WordSmallArrayPaths) {
  SKIP_WITHOUT_GPU();
  const struct {
    Shape s;
    int r;
  } cases[] = {{{1, {5, 1, 1}, 2}, 3},    // the border pass alone
               {{2, {6, 300, 1}, 1}, 3},  // the same
               {{2, {9, 7, 1}, 1}, 2},    // the whole-array pass
               {{3, {4, 5, 6}, 1}, 1},    // the same
               {{3, {3, 3, 40}, 2}, 1}};  // the same
  for (const auto& c : cases) {
    const Filter f = laced_filter(c.s.rank, c.r);
    const Problem p(c.s.rank, c.s.ext, c.s.batch, f, DType::f32, Op::correlate,
                    Edges::all(Boundary::reflect));
    EXPECT_NE(fast().plan(p).find(c.s.rank <= 2 && c.r == 3 ? "border pass alone" : "tiny array"),
              std::string::npos)
        << fast().plan(p);
    DeviceRun<float> dev(elements(c.s));
    ASSERT_TRUE(dev.ok());
    std::vector<std::int64_t> positions;
    for (std::int64_t i = 0; i < elements(c.s); i += 7) positions.push_back(i);
    positions.push_back(elements(c.s) - 1);
    word_runs<float>(c.s, c.r, dev, {""}, positions);
  }
}

// ---------------------------------------------------------------------------------------------
// The reference's non-finite pattern through apply().
// ---------------------------------------------------------------------------------------------
int category(double v) {
  if (std::isnan(v)) return 1;
  if (std::isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

// `fast` and the reference on one input; "" where every output has the reference's category
// and the finite ones agree within a coarse bound.
template <class T>
std::string same_pattern(const Shape& s, const Filter& f, const Options& opt,
                         const std::vector<T>& in) {
  const ConstArrayView iv(in.data(), dtype_of<T>(), s.rank, s.ext, s.batch);
  std::vector<T> ref(in.size(), T(kPoison)), out(in.size(), T(kPoison));
  Options o = opt;
  o.strategy = "reference";
  apply(iv, ArrayView{ref.data(), dtype_of<T>(), s.rank, s.ext, s.batch}, f, o);
  o.strategy = "fast";
  apply(iv, ArrayView{out.data(), dtype_of<T>(), s.rank, s.ext, s.batch}, f, o);
  double w1 = 0;
  for (double w : f.weights()) w1 += std::fabs(w);
  const double tol = 64.0 * double(f.taps() + 8) * std::numeric_limits<T>::epsilon() * w1 * 2;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double r = double(ref[i]), g = double(out[i]);
    if (category(r) != category(g) || (category(r) == 0 && !(std::fabs(r - g) <= tol))) {
      std::ostringstream os;
      os << "output " << i << " is " << g << ", the reference's " << r;
      return os.str();
    }
  }
  return "";
}

template <class T>
void pattern_rank(int rank, const std::vector<std::string>& tunings) {
  const Shape s = shape_of(rank);
  const std::vector<std::int64_t> positions = edge_positions(s);
  const std::vector<Edges> modes = [] {
    std::vector<Edges> v = {Edges{}, Edges::all(Boundary::constant, kInf)};
    for (const Edges& e : mode_edges(-0.5)) v.push_back(e);
    return v;
  }();
  for (int r : radii(rank, dtype_of<T>())) {
    const Filter f = laced_filter(rank, r);
    const std::vector<T> finite = random_vector<T>(elements(s));
    int i = 0;
    for (const std::string& t : tunings)
      for (std::size_t n = 0; n < positions.size(); n += 3) {  // a third of them per tuning
        const std::int64_t at = positions[(n + std::size_t(i)) % positions.size()];
        if (at >= std::int64_t(finite.size())) continue;
        Options o;
        o.tuning = t.empty() ? FastTuning{} : detail::parse_fast_tuning(t, "variant");
        o.edges = modes[std::size_t(i) % modes.size()];
        o.op = i % 3 == 2 ? Op::convolve : Op::correlate;
        std::vector<T> in = finite;
        in[std::size_t(at)] = T(i % 2 ? -kInf : kInf);
        if (i % 5 == 4) in[std::size_t(at)] = std::numeric_limits<T>::quiet_NaN();
        ++i;
        const std::string bad = same_pattern(s, f, o, in);
        EXPECT_EQ(bad, "") << Problem(s.rank, s.ext, s.batch, f, dtype_of<T>(), o.op, o.edges)
                                  .describe()
                           << (t.empty() ? "" : " tuned " + t) << ", non-finite input at " << at
                           << "; seed " << fresh_seed();
      }
  }
}

TEST(NonFiniteFast, EdgesGiveTheReferencesPattern) {
  SKIP_WITHOUT_GPU();
  pattern_rank<float>(1, {"", "pad_1d=0", "tx_1d=32", "feed=direct"});
  pattern_rank<double>(1, {"", "prefetch=1"});
  pattern_rank<float>(2, {"", "chunk=7", "feed=ring", "pass_rows=8", "winograd=1"});
  pattern_rank<double>(2, {"", "chunk=7", "feed=direct"});
  pattern_rank<float>(3, {"", "runs=0,chunk=5", "rows_3d=4", "feed=tma"});
  pattern_rank<double>(3, {"", "chunk=5", "feed=ring"});
}

// ---------------------------------------------------------------------------------------------
// Exact box means.
// ---------------------------------------------------------------------------------------------
// A box of the given extents as uniform filters fuse it: the product of 1/k_a over the axes.
Filter box_filter(const std::vector<std::int64_t>& k) {
  std::int64_t n = 1;
  double w = 1;
  for (auto e : k) n *= e, w *= 1.0 / double(e);
  return Filter(std::vector<double>(std::size_t(n), w), k);
}

TEST(NonFiniteFast, BoxTapsFindsBoxFilters) {
  const auto taps = [](const Filter& f, int rank, Extents ext = {50, 50, 50}) {
    return cuda::fast::box_taps_of(Problem(rank, ext, 1, f, DType::f32));
  };
  EXPECT_EQ(taps(make_named_filter("box:5", 1), 1), 5);
  EXPECT_EQ(taps(make_named_filter("box:5", 2), 2), 25);
  EXPECT_EQ(taps(make_named_filter("box:7", 3), 3), 343);
  EXPECT_EQ(taps(box_filter({3, 5}), 2), 15);
  EXPECT_EQ(taps(box_filter({4, 6, 3}), 3), 72);
  EXPECT_EQ(taps(Filter(std::vector<double>(9, 1.0 / 9), {9}), 1), 9);
  EXPECT_EQ(taps(Filter(std::vector<double>(9, 1.0), {9}), 1), 0);  // ones: no division
  EXPECT_EQ(taps(Filter(std::vector<double>(9, -1.0 / 9), {9}), 1), 0);
  EXPECT_EQ(taps(Filter(std::vector<double>(9, 1.0 / 8), {9}), 1), 0);
  EXPECT_EQ(taps(random_filter({3, 3}), 2), 0);
  std::vector<double> w(9, 1.0 / 9);
  w[4] = 0;
  EXPECT_EQ(taps(Filter(w, {9}), 1), 0);
}

// Every output of `fast` on a constant array under a box filter is the constant, exactly; with
// `inside`, every output whose window stays inside the array (zero ghosts: the interior kernels
// alone).
template <class T>
std::string box_constant(int rank, Extents ext, std::int64_t batch,
                         const std::vector<std::int64_t>& k, double c, const Edges& e,
                         const std::string& tuning, bool inside = false) {
  const Filter f = box_filter(k);
  std::int64_t n = batch;
  for (int a = 0; a < rank; ++a) n *= ext[a];
  const std::vector<T> in(static_cast<std::size_t>(n), static_cast<T>(c));
  std::vector<T> out(in.size(), static_cast<T>(kPoison));
  Options o;
  o.strategy = "fast";
  o.edges = e;
  o.tuning = tuning.empty() ? FastTuning{} : detail::parse_fast_tuning(tuning, "variant");
  apply(ConstArrayView(in.data(), dtype_of<T>(), rank, ext, batch),
        ArrayView{out.data(), dtype_of<T>(), rank, ext, batch}, f, o);
  const Dims3 d = to_dims3(ext, rank);
  std::vector<std::int64_t> k3(std::size_t(3 - rank), 1);
  k3.insert(k3.end(), k.begin(), k.end());
  auto within = [&](std::int64_t i, std::int64_t n, std::int64_t kk) {
    return i - kk / 2 >= 0 && i - kk / 2 + kk - 1 < n;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t e3 = std::int64_t(i) % d.count();
    if (inside && !(within(e3 / (d.y * d.x), d.z, k3[0]) && within(e3 / d.x % d.y, d.y, k3[1]) &&
                    within(e3 % d.x, d.x, k3[2])))
      continue;
    if (out[i] != T(c)) {
      std::ostringstream os;
      os.precision(17);
      os << Problem(rank, ext, batch, f, dtype_of<T>(), Op::correlate, e).describe()
         << (tuning.empty() ? "" : " tuned " + tuning) << ": output " << i << " is "
         << double(out[i]) << ", not " << c;
      return os.str();
    }
  }
  return "";
}

// Every compiled radius of each rank and dtype (boxes of 2r+1 and of 2r taps, so padded and
// off-centre windows too), constants of few significant bits (whose sums of up to K terms are
// exact in float32 too, as SciPy's float64 sums are), every mode with cval the constant.
template <class T>
void box_rank(int rank, const std::vector<std::string>& tunings) {
  const Shape s = shape_of(rank);
  const double constants[] = {1.0, 7.0, -3.25, 255.0, 0.5};
  int i = 0;
  for (int r : radii(rank, dtype_of<T>()))
    for (const std::int64_t k : {std::int64_t(2 * r + 1), std::int64_t(std::max(1, 2 * r))})
      for (const std::string& t : tunings) {
        const double c = constants[std::size_t(i) % 5];
        const Boundary m[] = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                              Boundary::mirror, Boundary::wrap};
        const Edges e = Edges::all(m[std::size_t(i) % 5], c);
        ++i;
        std::vector<std::int64_t> shape(std::size_t(rank), k);
        if (rank >= 2) shape[0] = std::max<std::int64_t>(1, k - 2);  // not a cube
        EXPECT_EQ(box_constant<T>(rank, s.ext, s.batch, shape, c, e, t), "");
        // Zero ghosts: the interior kernels alone (the 3-D block ring's zero-ghost kernel).
        EXPECT_EQ(box_constant<T>(rank, s.ext, s.batch, shape, c, Edges{}, t, true), "");
      }
}

TEST(NonFiniteFast, BoxMeansOfConstantsAreExact) {
  SKIP_WITHOUT_GPU();
  box_rank<float>(1, {"", "pad_1d=0", "tx_1d=32", "feed=direct"});
  box_rank<double>(1, {""});
  box_rank<float>(2, {"", "winograd=1", "winograd=0", "pass_rows=8", "feed=ring", "tx=8"});
  box_rank<double>(2, {"", "feed=direct"});
  box_rank<float>(3, {"", "rows_3d=4", "feed=tma", "feed=ring"});
  box_rank<double>(3, {""});
}

// The reproducers: uniform_filter(ones(8, 8), 5) and uniform_filter(full((8, 8), 7), 3)
// in float64 (reflect, SciPy's default), and a binary mask whose 5x5 means are 1 exactly inside
// its regions of ones (a larger array, the interior kernels), float32 and float64.
TEST(NonFiniteFast, BoxReproducers) {
  SKIP_WITHOUT_GPU();
  const Edges reflect = Edges::all(Boundary::reflect);
  EXPECT_EQ(box_constant<double>(2, {8, 8, 1}, 1, {5, 5}, 1.0, reflect, ""), "");
  EXPECT_EQ(box_constant<double>(2, {8, 8, 1}, 1, {3, 3}, 7.0, reflect, ""), "");
  for (const std::string& t : {std::string(""), std::string("winograd=0")}) {
    const Extents ext{300, 260, 1};
    std::vector<float> mask(std::size_t(300 * 260), 0.f);
    for (std::int64_t y = 0; y < 300; ++y)
      for (std::int64_t x = 0; x < 260; ++x)
        mask[std::size_t(y * 260 + x)] = ((y / 37) + (x / 29)) % 2 ? 1.f : 0.f;
    std::vector<float> out(mask.size());
    Options o;
    o.strategy = "fast";
    o.edges = reflect;
    o.tuning = t.empty() ? FastTuning{} : detail::parse_fast_tuning(t, "variant");
    apply(ConstArrayView(mask.data(), DType::f32, 2, ext), ArrayView{out.data(), DType::f32, 2, ext},
          box_filter({5, 5}), o);
    std::int64_t ones = 0, inside = 0;
    for (std::int64_t y = 2; y < 298; ++y)
      for (std::int64_t x = 2; x < 258; ++x) {
        bool all = true;
        for (std::int64_t dy = -2; dy <= 2; ++dy)
          for (std::int64_t dx = -2; dx <= 2; ++dx)
            all = all && mask[std::size_t((y + dy) * 260 + x + dx)] == 1.f;
        inside += all;
        ones += all && out[std::size_t(y * 260 + x)] == 1.f;
      }
    EXPECT_GT(inside, 10000);
    EXPECT_EQ(ones, inside) << t;
  }
}

// Float32 box sums of values near the largest float overflow where SciPy's float64 sums do not:
// the infinity is noted and repaired to SciPy's finite mean.
TEST(NonFiniteFast, BoxSumsThatOverflowAreRepaired) {
  SKIP_WITHOUT_GPU();
  for (const auto& [rank, ext] : {std::pair<int, Extents>{1, {1000, 1, 1}},
                                  {2, {40, 300, 1}}, {3, {10, 20, 136}}}) {
    std::vector<std::int64_t> k(std::size_t(rank), 5);
    std::int64_t n = 1;
    for (int a = 0; a < rank; ++a) n *= ext[a];
    const float big = 3.0e38f;
    const std::vector<float> in(std::size_t(n), big);
    std::vector<float> out(in.size());
    Options o;
    o.strategy = "fast";
    o.edges = Edges::all(Boundary::nearest);
    apply(ConstArrayView(in.data(), DType::f32, rank, ext), ArrayView{out.data(), DType::f32, rank, ext},
          box_filter(k), o);
    for (std::size_t i = 0; i < out.size(); ++i)
      ASSERT_TRUE(std::isfinite(out[i]) && std::fabs(double(out[i]) - double(big)) <= 1e-6 * big)
          << rank << "D output " << i << " is " << out[i];
  }
}

// Finite outputs of about 1e19 and more make the probes' sums of products overflow (probe_pairs):
// the note is raised without a NaN or an infinity among the outputs, and the repair's look at
// every output finds nothing to recompute: the outputs are the ones computed, as the
// reference's within float32's rounding, on each CUDA strategy that probes in pairs.
TEST(NonFiniteFast, LargeFiniteValuesKeepTheirOutputs) {
  SKIP_WITHOUT_GPU();
  for (const auto& [rank, ext] : {std::pair<int, Extents>{1, {5000, 1, 1}},
                                  {2, {70, 300, 1}}, {3, {24, 40, 136}}}) {
    std::int64_t n = 1;
    for (int a = 0; a < rank; ++a) n *= ext[a];
    std::vector<float> in = random_vector<float>(n);
    for (float& v : in) v = v * 3.0e19f + (v < 0 ? -1.0e19f : 1.0e19f);
    for (const std::string spec : {"gaussian:sigma=1", "box:9"}) {
      const Filter f = make_named_filter(spec, rank);
      std::vector<float> want(in.size()), out(in.size());
      Options o;
      o.strategy = "reference";
      apply(ConstArrayView(in.data(), DType::f32, rank, ext),
            ArrayView{want.data(), DType::f32, rank, ext}, f, o);
      for (const char* s : {"fast", "separable"}) {
        std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
        o.strategy = s;
        apply(ConstArrayView(in.data(), DType::f32, rank, ext),
              ArrayView{out.data(), DType::f32, rank, ext}, f, o);
        for (std::size_t i = 0; i < out.size(); ++i)
          ASSERT_TRUE(std::isfinite(out[i]) &&
                      std::fabs(double(out[i]) - double(want[i])) <= 1e-5 * 4.0e19)
              << s << " " << spec << " " << rank << "D output " << i << ": " << out[i]
              << ", the reference's " << want[i];
      }
    }
  }
}

}  // namespace
}  // namespace halo::test

#else
TEST(NonFiniteFast, NotBuiltWithCuda) {
  GTEST_SKIP() << "halo's tests were built without the CUDA runtime";
}
#endif
