/* strategy: cpu_fft — the correlation as products of discrete Fourier transforms (FFTW), tiled
 * overlap-save, for large dense filters. Any problem the Problem describes: ranks 1-3 (canonical
 * z, y, x), every mode per axis, cval, origins, even and off-centre filters, filters larger than
 * the input (folded by Problem), batches, f32 (fftw3f) and f64 (fftw3).
 *
 * Tiles: up to T outputs per axis from an input window of T + K - 1 elements gathered through
 * detail::map_index (so every mode, at any distance, and cval), zero-padded to the transform
 * length N >= T + K - 1: a power of 2, or from 128 up 2^a m, m in {3, 5, 9, 15, 25}. One R2C
 * transform, a product with the precomputed spectrum of the correlation weights (conjugated, so
 * that the cyclic product is a correlation, and scaled by 1/N), one C2R transform; the first T
 * outputs per axis never wrap and are written out. Axes whose filter extent is 1 are not
 * transformed (T = N = 1), except x, which keeps the gathers contiguous. The tiling
 * (fft_tiling) minimises a cost model measured on the development machine (docs/TUNING.md,
 * cpu_fft), with at most 2^18 elements per tile (1 + 1 MiB per thread in f32) unless the filter
 * needs more.
 *
 * Threads: OpenMP over tiles, each with its own real and complex tile (fftw_malloc'd, so that
 * they share the plans' alignment) and index maps; the spectrum is shared, read-only. Plans are
 * made once per run with FFTW_ESTIMATE (no measuring: fast to start, the same plan every run)
 * under one lock, since FFTW's planner is not thread-safe; fftw_execute_dft_* on new arrays is.
 *
 * A tile whose window holds a NaN or an infinity would spread it to every output of the tile
 * through the transforms; such a tile is summed directly from its window instead (in float64),
 * so non-finite inputs give what the reference gives.
 */
#include "cpu/fft.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"

namespace halo::cpu {
namespace {

using std::int64_t;

// FFTW's planner (plan creation and destruction) is not thread-safe; every call of it here holds
// this lock. Executing a plan is thread-safe.
std::mutex& planner_lock() {
  static std::mutex m;
  return m;
}

// The one set of FFTW calls per precision.
template <class T>
struct Fftw;
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
  static float* alloc_real(std::size_t n) { return fftwf_alloc_real(n); }
  static complex* alloc_complex(std::size_t n) { return fftwf_alloc_complex(n); }
  static void free(void* p) { fftwf_free(p); }
  static plan r2c(int rank, const int* n, float* in, complex* out) {
    return fftwf_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, complex* in, float* out) {
    return fftwf_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
  static void run(plan p, float* in, complex* out) { fftwf_execute_dft_r2c(p, in, out); }
  static void run(plan p, complex* in, float* out) { fftwf_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftwf_destroy_plan(p); }
};
template <>
struct Fftw<double> {
  using plan = fftw_plan;
  using complex = fftw_complex;
  static double* alloc_real(std::size_t n) { return fftw_alloc_real(n); }
  static complex* alloc_complex(std::size_t n) { return fftw_alloc_complex(n); }
  static void free(void* p) { fftw_free(p); }
  static plan r2c(int rank, const int* n, double* in, complex* out) {
    return fftw_plan_dft_r2c(rank, n, in, out, FFTW_ESTIMATE);
  }
  static plan c2r(int rank, const int* n, complex* in, double* out) {
    return fftw_plan_dft_c2r(rank, n, in, out, FFTW_ESTIMATE);
  }
  static void run(plan p, double* in, complex* out) { fftw_execute_dft_r2c(p, in, out); }
  static void run(plan p, complex* in, double* out) { fftw_execute_dft_c2r(p, in, out); }
  static void destroy(plan p) { fftw_destroy_plan(p); }
};

// An fftw_malloc'd array, freed by fftw_free.
template <class T, class E>
struct FftwArray {
  E* p = nullptr;
  FftwArray() = default;
  FftwArray(const FftwArray&) = delete;
  FftwArray& operator=(const FftwArray&) = delete;
  FftwArray(FftwArray&& o) noexcept : p(o.p) { o.p = nullptr; }
  FftwArray& operator=(FftwArray&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~FftwArray() {
    if (p) Fftw<T>::free(p);
  }
};
template <class T>
FftwArray<T, T> alloc_real(int64_t n, const char* what) {
  FftwArray<T, T> a;
  a.p = Fftw<T>::alloc_real(static_cast<std::size_t>(n));
  if (!a.p)
    throw Error("cpu_fft: cannot allocate " + std::to_string(n * int64_t(sizeof(T))) +
                " bytes for " + what);
  return a;
}
template <class T>
FftwArray<T, typename Fftw<T>::complex> alloc_complex(int64_t n, const char* what) {
  FftwArray<T, typename Fftw<T>::complex> a;
  a.p = Fftw<T>::alloc_complex(static_cast<std::size_t>(n));
  if (!a.p)
    throw Error("cpu_fft: cannot allocate " + std::to_string(n * 2 * int64_t(sizeof(T))) +
                " bytes for " + what);
  return a;
}

// A plan, made and destroyed under the planner lock.
template <class T>
struct Plan {
  typename Fftw<T>::plan p = nullptr;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (!p) return;
    std::lock_guard<std::mutex> lock(planner_lock());
    Fftw<T>::destroy(p);
  }
};

// ---------------------------------------------------------------------------------------------
// The cost model (ns on one core of the development machine: docs/TUNING.md, cpu_fft).
// ---------------------------------------------------------------------------------------------
// A tile of N elements: N (a log2 N + b) for the two transforms, the gather, the product with the
// spectrum and the write (about 7 ns an element in f32 from 64^2 to 640^2: FFTW's larger
// transforms run more efficiently, which nearly makes up for their log), and c per tile. The
// direct `cpu` strategy: per output, and per output and tap, of a 1-D, 2-D, 3-D filter (fitted
// near the crossover; 1-D runs one row per block: more loads per multiply-add).
struct CostModel {
  double a, b, c;            // FFT tile
  double output[3], tap[3];  // direct sum
};
template <class T>
constexpr CostModel kCost = {0.25, 3.2, 1000.0, {0.6, 2.0, 2.0}, {0.038, 0.0225, 0.028}};
template <>
constexpr CostModel kCost<double> = {0.4, 4.0, 1000.0, {2.0, 4.5, 4.5}, {0.065, 0.044, 0.062}};

// Elements per tile at most (2^18: a 512 x 512 tile, 1 MiB real + 1 MiB complex in f32), unless
// the filter needs longer transforms.
constexpr int64_t kTileCap = int64_t(1) << 18;
// Below this direct time (ns, one core) `auto` keeps the direct sum: the FFT's set-up (plans, the
// spectrum) and its looser bound buy nothing on a sub-millisecond problem.
constexpr double kMinDirectNs = 2e5;
// The shortest transform along x where the axis is longer: a tile's gathers then copy runs of
// at least 8 elements of each row (a filter along y or z took tiles one column wide, whose
// gathers read one element per cache line: 2x the modelled time; 2048^2, 255-1023 taps along
// y, 270-310 ms against 146-194 with 8 columns).
constexpr int64_t kMinX = 8;
// The tiling counts tiles as if split over this many threads (a run of fewer tiles takes as long
// as one of this many), so that small problems get enough tiles; fixed, not the machine's thread
// count, so that the tiling and hence the rounding are the same on every machine.
constexpr int64_t kNominalThreads = 8;

double tile_ns(const CostModel& m, double n) {
  return n * (m.a * std::log2(std::max(2.0, n)) + m.b) + m.c;
}

}  // namespace

FftTiling fft_tiling(const Problem& p) {
  const CostModel m = p.dtype() == DType::f64 ? kCost<double> : kCost<float>;
  FftTiling best = detail::fft_tiling(p, detail::FftCost{m.a, m.b, m.c, double(kTileCap),
                                                         kNominalThreads, "cpu_fft", false, kMinX});
  // Set-up: the spectrum (one transform in float64) and the plans.
  best.fft_ns += 2 * tile_ns(kCost<double>, double(best.elements())) + 5e4;
  const int r = p.rank() - 1;
  best.direct_ns = double(p.elements()) * (double(p.taps()) * m.tap[r] + m.output[r]);
  return best;
}

namespace {

// What one run needs: the problem in canonical form, the tiling, the spectrum, the plans.
template <class T>
struct Job {
  using complex = typename Fftw<T>::complex;
  const T* in = nullptr;
  T* out = nullptr;
  int64_t n[3], k[3], anchor[3];
  Boundary mode[3];
  T cval = 0;
  FftTiling t;
  int64_t len = 1, clen = 1;               // real and complex elements of a tile
  int64_t count[3] = {1, 1, 1};            // tiles per axis
  const T* spectrum = nullptr;             // clen complex values, interleaved
  const std::vector<double>* w = nullptr;  // the correlation weights, kz x ky x kx
  typename Fftw<T>::plan forward = nullptr, inverse = nullptr;
};

// One thread's tile: the window (real), its transform, and the per-axis index maps.
template <class T>
struct ThreadTile {
  FftwArray<T, T> real;
  FftwArray<T, typename Fftw<T>::complex> spec;
  std::vector<int64_t> map[3];
};

// The outputs of a tile whose window is not finite, summed directly from the window in float64
// (what the reference does, NaN and infinities where it has them).
template <class T>
void direct_tile(const Job<T>& j, const T* win, const int64_t cnt[3], T* const out_at,
                 const int64_t out_stride[2]) {
  const int64_t ny = j.t.fft[1], nx = j.t.fft[2];
  const std::vector<double>& w = *j.w;
  for (int64_t z = 0; z < cnt[0]; ++z)
    for (int64_t y = 0; y < cnt[1]; ++y)
      for (int64_t x = 0; x < cnt[2]; ++x) {
        double acc = 0;
        for (int64_t fz = 0; fz < j.k[0]; ++fz)
          for (int64_t fy = 0; fy < j.k[1]; ++fy) {
            const T* row = win + ((z + fz) * ny + y + fy) * nx + x;
            const double* wr = w.data() + (fz * j.k[1] + fy) * j.k[2];
            for (int64_t fx = 0; fx < j.k[2]; ++fx) acc += wr[fx] * double(row[fx]);
          }
        out_at[z * out_stride[0] + y * out_stride[1] + x] = static_cast<T>(acc);
      }
}

template <class T>
void run_tile(const Job<T>& j, int64_t u, ThreadTile<T>& tt) {
  using complex = typename Fftw<T>::complex;
  const int64_t N[3] = {j.t.fft[0], j.t.fft[1], j.t.fft[2]};
  int64_t idx[3];
  int64_t rest = u;
  for (int a = 2; a >= 0; --a) {
    idx[a] = rest % j.count[a];
    rest /= j.count[a];
  }
  const int64_t b = rest;
  int64_t o[3], cnt[3], win[3];
  for (int a = 0; a < 3; ++a) {
    o[a] = idx[a] * j.t.tile[a];
    cnt[a] = std::min(j.t.tile[a], j.n[a] - o[a]);
    win[a] = cnt[a] + j.k[a] - 1;
    int64_t* m = tt.map[a].data();
    for (int64_t i = 0; i < win[a]; ++i)
      m[i] = detail::map_index(o[a] - j.anchor[a] + i, j.n[a], j.mode[a]);
  }
  // Gather the window, zeros beyond it. Along x the part inside the array is one run of the row.
  const int64_t x_lo = std::clamp<int64_t>(j.anchor[2] - o[2], 0, win[2]);
  const int64_t x_hi = std::clamp<int64_t>(j.n[2] + j.anchor[2] - o[2], x_lo, win[2]);
  const int64_t* mx = tt.map[2].data();
  const T* item = j.in + b * j.n[0] * j.n[1] * j.n[2];
  T* r = tt.real.p;
  bool finite = true;
  for (int64_t z = 0; z < N[0]; ++z)
    for (int64_t y = 0; y < N[1]; ++y) {
      T* row = r + (z * N[1] + y) * N[2];
      if (z >= win[0] || y >= win[1]) {
        std::fill(row, row + N[2], T(0));
        continue;
      }
      const int64_t iz = tt.map[0][z], iy = tt.map[1][y];
      if (iz < 0 || iy < 0) {
        std::fill(row, row + win[2], j.cval);
      } else {
        const T* src = item + (iz * j.n[1] + iy) * j.n[2];
        for (int64_t x = 0; x < x_lo; ++x) row[x] = mx[x] < 0 ? j.cval : src[mx[x]];
        std::copy(src + (o[2] - j.anchor[2] + x_lo), src + (o[2] - j.anchor[2] + x_hi), row + x_lo);
        for (int64_t x = x_hi; x < win[2]; ++x) row[x] = mx[x] < 0 ? j.cval : src[mx[x]];
      }
      // v - v is 0 for finite v and NaN otherwise; the and-reduction vectorises.
      bool ok = true;
      for (int64_t x = 0; x < win[2]; ++x) ok &= (row[x] - row[x] == T(0));
      finite = finite && ok;
      std::fill(row + win[2], row + N[2], T(0));
    }
  T* out_at = j.out + ((b * j.n[0] + o[0]) * j.n[1] + o[1]) * j.n[2] + o[2];
  const int64_t stride[2] = {j.n[1] * j.n[2], j.n[2]};
  if (!finite) {
    direct_tile(j, r, cnt, out_at, stride);
    return;
  }
  complex* c = tt.spec.p;
  Fftw<T>::run(j.forward, r, c);
  const T* s = j.spectrum;
  for (int64_t i = 0; i < j.clen; ++i) {
    const T re = c[i][0], im = c[i][1], sr = s[2 * i], si = s[2 * i + 1];
    c[i][0] = re * sr - im * si;
    c[i][1] = re * si + im * sr;
  }
  Fftw<T>::run(j.inverse, c, r);
  for (int64_t z = 0; z < cnt[0]; ++z)
    for (int64_t y = 0; y < cnt[1]; ++y) {
      const T* row = r + (z * N[1] + y) * N[2];
      std::copy(row, row + cnt[2], out_at + z * stride[0] + y * stride[1]);
    }
}

// The transform's extents as FFTW takes them: the transformed axes (x always).
std::vector<int> fftw_dims(const FftTiling& t) {
  std::vector<int> d;
  for (int a = 0; a < 3; ++a)
    if (t.fft[a] > 1 || a == 2) d.push_back(static_cast<int>(t.fft[a]));
  return d;
}

// Threads for a run: one for problems of a few hundred microseconds, else the team, at most one
// per tile.
int team_size(const Problem& p, const FftTiling& t) {
  const int64_t tiles = t.tiles * p.batch();
  if (t.fft_ns < 2e5) return 1;
  return static_cast<int>(std::min<int64_t>(omp_get_max_threads(), tiles));
}

// filter_spectrum() rounded once to T, in an fftw_malloc'd array (interleaved re, im).
template <class T>
FftwArray<T, T> make_spectrum(const Problem& p, const FftTiling& t) {
  const std::vector<double> w = filter_spectrum(p, t);
  auto s = alloc_real<T>(int64_t(w.size()), "the filter's spectrum");
  std::copy(w.begin(), w.end(), s.p);
  return s;
}

template <class T>
void run_typed(const Problem& p, const void* in, void* out) {
  Job<T> j;
  j.in = static_cast<const T*>(in);
  j.out = static_cast<T*>(out);
  const Dims3 n = p.dims3(), k = p.filter_dims3(), a = p.anchor3();
  const int rank = p.rank();
  j.n[0] = n.z, j.n[1] = n.y, j.n[2] = n.x;
  j.k[0] = k.z, j.k[1] = k.y, j.k[2] = k.x;
  j.anchor[0] = a.z, j.anchor[1] = a.y, j.anchor[2] = a.x;
  j.mode[0] = rank == 3 ? p.mode(0) : Boundary::constant;
  j.mode[1] = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  j.mode[2] = p.mode(rank - 1);
  j.cval = static_cast<T>(p.cval());
  j.w = &p.correlation_weights();
  j.t = fft_tiling(p);
  for (int i = 0; i < 3; ++i) j.count[i] = (j.n[i] + j.t.tile[i] - 1) / j.t.tile[i];
  j.len = j.t.fft[0] * j.t.fft[1] * j.t.fft[2];
  j.clen = j.t.fft[0] * j.t.fft[1] * (j.t.fft[2] / 2 + 1);
  const FftwArray<T, T> spectrum = make_spectrum<T>(p, j.t);
  j.spectrum = spectrum.p;

  const int threads = team_size(p, j.t);
  std::vector<ThreadTile<T>> tiles(static_cast<std::size_t>(threads));
  for (ThreadTile<T>& tt : tiles) {
    tt.real = alloc_real<T>(j.len, "the FFT tiles");
    tt.spec = alloc_complex<T>(j.clen, "the FFT tiles");
    for (int i = 0; i < 3; ++i) tt.map[i].resize(static_cast<std::size_t>(j.t.fft[i]));
  }
  const std::vector<int> dims = fftw_dims(j.t);
  Plan<T> forward, inverse;
  {
    std::lock_guard<std::mutex> lock(planner_lock());
    forward.p = Fftw<T>::r2c(int(dims.size()), dims.data(), tiles[0].real.p, tiles[0].spec.p);
    inverse.p = Fftw<T>::c2r(int(dims.size()), dims.data(), tiles[0].spec.p, tiles[0].real.p);
  }
  if (!forward.p || !inverse.p) throw Error("cpu_fft: FFTW made no plan for the tiles");
  j.forward = forward.p;
  j.inverse = inverse.p;

  const int64_t total = j.t.tiles * p.batch();
  const auto& progress = p.progress();
  if (threads <= 1) {
    for (int64_t u = 0; u < total; ++u) {
      run_tile(j, u, tiles[0]);
      if (progress) progress(double(u + 1) / double(total));
    }
    return;
  }
  std::atomic<int64_t> done{0};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t u = 0; u < total; ++u) {
    run_tile(j, u, tiles[static_cast<std::size_t>(omp_get_thread_num())]);
    const int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
    if (progress && omp_get_thread_num() == 0) progress(double(d) / double(total));
  }
  if (progress) progress(1.0);
}

template <class T>
std::vector<MemoryUse> workspace_typed(const Problem& p) {
  const FftTiling t = fft_tiling(p);
  const double len = double(t.fft[0]) * double(t.fft[1]) * double(t.fft[2]);
  const double clen = double(t.fft[0]) * double(t.fft[1]) * double(t.fft[2] / 2 + 1);
  const int threads = team_size(p, t);
  const double per_thread = len * sizeof(T) + clen * 2 * sizeof(T) +
                            double(t.fft[0] + t.fft[1] + t.fft[2]) * sizeof(int64_t);
  return {{"the filter's spectrum (float64 while it is computed)",
           clen * 2 * sizeof(T) + len * 8 + clen * 16, MemorySpace::host},
          {"FFT tiles of " + std::to_string(threads) + " threads", per_thread * threads,
           MemorySpace::host}};
}

class FftStrategy final : public Strategy {
 public:
  std::string name() const override { return "cpu_fft"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "FFTW, tiled overlap-save: each tile's window transformed, multiplied by the "
           "filter's spectrum, transformed back (large dense filters)";
  }
  Status can_implement(const Problem& p) const override {
    if (p.direct_sums())
      return Status::failure(
          "direct sums required: the FFT mixes every input of a tile into "
          "every output (docs/ACCURACY.md, FFT)");
    try {
      fft_tiling(p);
    } catch (const Error& e) {
      return Status::failure(e.what());
    }
    return Status::success();
  }
  // Above the `cpu` strategy's 10 where the cost model says the transforms are cheaper than the
  // direct sum (docs/TUNING.md, cpu_fft), below it otherwise: on every shape, a filter along one
  // axis of a 2-D or 3-D array as on a 1-D array (one pass of direct sums either way; a box
  // along one axis is cpu_separable's running sums, above this). Rank-1 filters over two or
  // more axes stay below: they run as 1-D passes (cpu_separable).
  int priority(const Problem& p) const override {
    constexpr int kBelow = 5, kAbove = 20;
    if (p.rank() > 1)
      if (const auto win = detail::separable_windows(p); win && win->long_axes > 1) return kBelow;
    const FftTiling t = fft_tiling(p);
    if (t.direct_ns < kMinDirectNs) return kBelow;
    const double cost = p.tuning().cpu_fft_cost.value_or(100) / 100.0;  // a machine's scale
    return t.fft_ns * cost < t.direct_ns ? kAbove : kBelow;
  }
  std::string plan(const Problem& p) const override {
    const FftTiling t = fft_tiling(p);
    const int rank = p.rank();
    std::string tile, fft;
    for (int a = 3 - rank; a < 3; ++a) {
      tile += (tile.empty() ? "" : "x") + std::to_string(t.tile[a]);
      fft += (fft.empty() ? "" : "x") + std::to_string(t.fft[a]);
    }
    return "overlap-save tiles of " + tile + " outputs, transforms of " + fft + " (FFTW, " +
           (p.dtype() == DType::f64 ? "fftw3" : "fftw3f") + ", estimate plans), " +
           std::to_string(t.tiles * p.batch()) + " tiles on " + std::to_string(team_size(p, t)) +
           " threads";
  }
  Summation summation(const Problem&) const override { return Summation::fft; }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    return dispatch_dtype(
        p.dtype(), [&](auto d) { return workspace_typed<typename decltype(d)::storage>(p); });
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    dispatch_dtype(p.dtype(),
                   [&](auto d) { run_typed<typename decltype(d)::storage>(p, b.input, b.output); });
  }
};

}  // namespace

std::vector<double> filter_spectrum(const Problem& p, const FftTiling& t) {
  const int64_t len = t.elements(), clen = t.complex_elements();
  const std::vector<int> dims = fftw_dims(t);
  auto wr = alloc_real<double>(len, "the filter's spectrum");
  auto wc = alloc_complex<double>(clen, "the filter's spectrum");
  Plan<double> plan;
  {
    std::lock_guard<std::mutex> lock(planner_lock());
    plan.p = Fftw<double>::r2c(int(dims.size()), dims.data(), wr.p, wc.p);
  }
  if (!plan.p) throw Error("fft: FFTW made no plan for the filter's spectrum");
  const Dims3 kd = p.filter_dims3();
  const std::vector<double>& w = p.correlation_weights();
  std::fill(wr.p, wr.p + len, 0.0);
  for (int64_t z = 0; z < kd.z; ++z)
    for (int64_t y = 0; y < kd.y; ++y)
      std::copy(w.begin() + (z * kd.y + y) * kd.x, w.begin() + (z * kd.y + y + 1) * kd.x,
                wr.p + (z * t.fft[1] + y) * t.fft[2]);
  fftw_execute(plan.p);
  std::vector<double> s(static_cast<std::size_t>(2 * clen));
  const double scale = 1.0 / double(len);
  for (int64_t i = 0; i < clen; ++i) {
    s[2 * i] = wc.p[i][0] * scale;
    s[2 * i + 1] = -wc.p[i][1] * scale;
  }
  return s;
}

std::unique_ptr<Strategy> make_fft_strategy() { return std::make_unique<FftStrategy>(); }

}  // namespace halo::cpu

namespace halo::detail {

double cpu_fft_model_ratio(const Problem& p) {
  const FftTiling t = cpu::fft_tiling(p);
  return t.fft_ns / t.direct_ns;
}

}  // namespace halo::detail
