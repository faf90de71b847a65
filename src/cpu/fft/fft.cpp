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
 * (fft_tiling) minimises a cost model measured on the development machine (docs/notes/tuning.md,
 * cpu_fft), with at most 2^18 elements per tile (1 + 1 MiB per thread in f32) unless the filter
 * needs more.
 *
 * Threads: OpenMP over tiles, each with its own real and complex tile (64-byte aligned, so that
 * they share the plans' alignment) and index maps; the spectrum is shared, read-only. Plans are
 * made once per run with FFTW_ESTIMATE (no measuring: fast to start, the same plan every run)
 * under one lock, since FFTW's planner is not thread-safe; fftw_execute_dft_* on new arrays is.
 *
 * A tile whose window holds a NaN or an infinity would spread it to every output of the tile
 * through the transforms; such a tile is summed directly from its window instead (in float64),
 * so non-finite inputs give what the reference gives.
 */
#include "cpu/fft/fft.hpp"

#include <fftw3.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/nonfinite.hpp"
#include "core/profile.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {
namespace {

using std::int64_t;

// FFTW's planner (plan creation and destruction) is not thread-safe; every call of it here holds
// this lock. Executing a plan is thread-safe.
std::mutex& planner_lock() {
  static std::mutex m;
  return m;
}

// The arrays FFTW transforms (tiles, spectra) are halo's own, 64-byte aligned (as FFTW's SIMD
// codelets and new-array execution need), allocated with a failure that is an Error naming them;
// what FFTW allocates itself goes through fftw_kernel_malloc below.
constexpr std::align_val_t kArrayAlign{64};
void* alloc_array(std::size_t bytes) {
  return ::operator new(std::max<std::size_t>(bytes, 1), kArrayAlign, std::nothrow);
}
void free_array(void* p) { ::operator delete(p, kArrayAlign); }

// Address space held for FFTW while it plans: FFTW's allocations (plans, twiddle tables, the
// planner's tables) abort the process when they fail, so a run first maps what the model of
// them says they need (mmap without access: address space only, no memory), and an allocation
// of FFTW's that fails unmaps these reservations and tries again.
class FftwReserve {
 public:
  // Throws Error where `bytes` of address space cannot be mapped (the run would not fit).
  FftwReserve(double bytes, const char* what) {
    if (!(bytes > 0)) return;
    bytes_ = static_cast<std::size_t>(bytes);
    void* p =
        ::mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw Error(std::string("cpu_fft: not enough host memory for FFTW's ") + what + " (" +
                  std::to_string(bytes_) + " bytes)");
    std::lock_guard<std::mutex> lock(mutex());
    for (Slot& s : slots())
      if (!s.p) {
        s = {p, bytes_};
        p_ = p;
        return;
      }
    ::munmap(p, bytes_);  // every slot taken: this run goes without
  }
  ~FftwReserve() {
    std::lock_guard<std::mutex> lock(mutex());
    for (Slot& s : slots())
      if (s.p && s.p == p_) {
        ::munmap(s.p, s.bytes);
        s = {};
      }
  }
  FftwReserve(const FftwReserve&) = delete;
  FftwReserve& operator=(const FftwReserve&) = delete;

  // Unmaps every reservation; whether there was one.
  static bool release() {
    std::lock_guard<std::mutex> lock(mutex());
    bool any = false;
    for (Slot& s : slots())
      if (s.p) {
        ::munmap(s.p, s.bytes);
        s = {};
        any = true;
      }
    return any;
  }

 private:
  struct Slot {
    void* p = nullptr;
    std::size_t bytes = 0;
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  // Runs planning or running at once (the planner is one lock; runs may overlap).
  static std::array<Slot, 8>& slots() {
    static std::array<Slot, 8> s;
    return s;
  }
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace
}  // namespace halo::cpu

// FFTW's own allocations. FFTW calls fftw_kernel_malloc (fftwf_ for float) through its
// library's procedure linkage table, so this definition replaces FFTW's (memalign(32) there;
// FFTW frees with free()). FFTW asserts and aborts where it gets none; here a failure first
// gives back the address space reserved for FFTW (FftwReserve) and tries again, and where that
// is not enough ends the process with halo's message and exit status 1 rather than an abort.
namespace {
void* fftw_allocation(std::size_t n) {
  for (;;) {
    void* p = nullptr;
    if (::posix_memalign(&p, 64, n ? n : 1) == 0) return p;
    if (!halo::cpu::FftwReserve::release()) break;
  }
  char msg[200];
  std::snprintf(msg, sizeof msg,
                "halo: error: out of host memory: FFTW could not allocate %zu bytes for its "
                "plans or buffers\n",
                n);
  (void)!::write(STDERR_FILENO, msg, std::strlen(msg));
  std::_Exit(1);
}
}  // namespace
extern "C" void* fftw_kernel_malloc(std::size_t n) { return fftw_allocation(n); }
extern "C" void* fftwf_kernel_malloc(std::size_t n) { return fftw_allocation(n); }

namespace halo::cpu {
namespace {

// The one set of FFTW calls per precision.
template <class T>
struct Fftw;
template <>
struct Fftw<float> {
  using plan = fftwf_plan;
  using complex = fftwf_complex;
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

// An array of alloc_array, freed by free_array.
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
    if (p) free_array(p);
  }
};
template <class T>
FftwArray<T, T> alloc_real(int64_t n, const char* what) {
  FftwArray<T, T> a;
  a.p = static_cast<T*>(alloc_array(std::size_t(n) * sizeof(T)));
  if (!a.p)
    throw Error("cpu_fft: cannot allocate " + std::to_string(n * int64_t(sizeof(T))) +
                " bytes for " + what);
  return a;
}
template <class T>
FftwArray<T, typename Fftw<T>::complex> alloc_complex(int64_t n, const char* what) {
  FftwArray<T, typename Fftw<T>::complex> a;
  a.p = static_cast<typename Fftw<T>::complex*>(alloc_array(std::size_t(n) * 2 * sizeof(T)));
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
// The cost model (ns on one core, profile::Cpu): a tile of N elements costs N (a log2 N + b) + c
// for the two transforms, the gather, the product with the spectrum and the write (FFTW's larger
// transforms run more efficiently, which nearly makes up for their log); the direct `cpu`
// strategy costs per output and per output and tap of a 1-D, 2-D, 3-D filter.
// ---------------------------------------------------------------------------------------------
struct CostModel {
  double a, b, c;  // FFT tile
};
CostModel cost_model(DType t) {
  const profile::Cpu& c = profile::cpu();
  return per_dtype(t, CostModel{c.fft_a_f32, c.fft_b_f32, c.fft_c_f32},
                   CostModel{c.fft_a_f64, c.fft_b_f64, c.fft_c_f64}, "cpu_fft's transform model");
}

// Elements per tile at most (2^18: a 512 x 512 tile, 1 MiB real + 1 MiB complex in f32), unless
// the filter needs longer transforms.
constexpr int64_t kTileCap = int64_t(1) << 18;
// The shortest transform along x where the axis is longer: a tile's gathers then copy runs of
// at least 8 elements of each row (a filter along y or z took tiles one column wide, whose
// gathers read one element per cache line and ran well above the modelled time:
// docs/notes/tuning.md, "FFT on the CPU").
constexpr int64_t kMinX = 8;
// The tiling counts tiles as if split over this many threads (a run of fewer tiles takes as long
// as one of this many), so that small problems get enough tiles; fixed, not the machine's thread
// count, so that the tiling and hence the rounding are the same on every machine.
constexpr int64_t kNominalThreads = 8;

double tile_ns(const CostModel& m, double n) {
  return n * (m.a * std::log2(std::max(2.0, n)) + m.b) + m.c;
}

// What FFTW allocates itself for the forward and inverse plans of a tiling, bytes: its planner's
// tables and the plans' twiddle factors, which grow with the transforms' lengths (FFTW 3.3.10,
// FFTW_ESTIMATE: 0.1-0.7 MB for the 2-D and 3-D tiles, 8.2-8.8 bytes an element for 1-D float
// transforms of 2^18-2^22, 16.4 for double), with a margin: 1 MiB and 2.5 elements' bytes per
// point of each transformed axis. `real_bytes`: sizeof(float) or sizeof(double).
double fftw_plan_bytes(const FftTiling& t, double real_bytes, bool pair = true) {
  double points = 0;
  for (int a = 0; a < 3; ++a)
    if (t.fft[a] > 1 || a == 2) points += double(t.fft[a]);
  return 1048576.0 + (pair ? 2.5 : 1.25) * real_bytes * points;
}
// The buffers some of FFTW's multi-dimensional plans allocate as they run, per thread: up to
// about a complex tile at a time (8.2 bytes a complex element for float tiles of 288 x 288;
// none for 1-D transforms), taken as 2.5 elements' bytes, twice: the threads' buffers, freed
// and allocated again every transform, can leave gaps in a heap they share.
double fftw_run_bytes(const FftTiling& t, double real_bytes) {
  if (t.fft[0] == 1 && t.fft[1] == 1) return 0;
  return 65536.0 + 2 * 2.5 * real_bytes * double(t.complex_elements());
}

}  // namespace

FftTiling fft_tiling(const Problem& p) {
  const CostModel m = cost_model(p.dtype());
  FftTiling best = detail::fft_tiling(p, detail::FftCost{m.a, m.b, m.c, double(kTileCap),
                                                         kNominalThreads, "cpu_fft", false, kMinX});
  // Set-up: the spectrum (one transform in float64) and the plans.
  best.fft_ns += 2 * tile_ns(cost_model(DType::f64), double(best.elements())) + 5e4;
  best.direct_ns = profile::cpu_direct_ns(p);
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
  // Where given, a tile that writes a NaN or an infinity notes it there (NonFinite::noted).
  const Buffers* buffers = nullptr;
};

// One thread's tile: the window (real), its transform, and the per-axis index maps.
template <class T>
struct ThreadTile {
  FftwArray<T, T> real;
  FftwArray<T, typename Fftw<T>::complex> spec;
  std::vector<int64_t> map[3];
};

// The outputs of a tile whose window is not finite, summed directly from the window in float64
// (what the reference does, NaN and infinities where it has them). Returns whether every output
// is finite.
template <class T>
bool direct_tile(const Job<T>& j, const T* win, const int64_t cnt[3], T* const out_at,
                 const int64_t out_stride[2]) {
  bool finite = true;
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
        const T v = static_cast<T>(acc);
        finite = finite && v - v == T(0);
        out_at[z * out_stride[0] + y * out_stride[1] + x] = v;
      }
  return finite;
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
    if (!direct_tile(j, r, cnt, out_at, stride) && j.buffers)
      detail::note_nonfinite(*j.buffers);
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
  // The outputs, copied out and probed (a finite window can still overflow).
  bool stored_finite = true;
  for (int64_t z = 0; z < cnt[0]; ++z)
    for (int64_t y = 0; y < cnt[1]; ++y) {
      const T* row = r + (z * N[1] + y) * N[2];
      stored_finite &= copy_finite(row, out_at + z * stride[0] + y * stride[1], cnt[2]);
    }
  if (!stored_finite && j.buffers) detail::note_nonfinite(*j.buffers);
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

// filter_spectrum() rounded once to T, in an array of alloc_array (interleaved re, im).
template <class T>
FftwArray<T, T> make_spectrum(const Problem& p, const FftTiling& t) {
  const std::vector<double> w = filter_spectrum(p, t);
  auto s = alloc_real<T>(int64_t(w.size()), "the filter's spectrum");
  std::copy(w.begin(), w.end(), s.p);
  return s;
}

template <class T>
void run_typed(const Problem& p, const Buffers& b) {
  Job<T> j;
  j.in = static_cast<const T*>(b.input);
  j.out = static_cast<T*>(b.output);
  if (b.nonfinite) j.buffers = &b;
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
    // Held while FFTW plans (not while the threads start: their stacks need the room).
    const FftwReserve reserve(fftw_plan_bytes(j.t, sizeof(T)), "plans");
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
  const double len = double(t.elements()), clen = double(t.complex_elements());
  const int threads = team_size(p, t);
  const double real = sizeof(T);
  // While the tiles run: the spectrum in T, each thread's tile (real and complex) and index
  // maps, FFTW's plans and the buffers its plans allocate as they run.
  const double spectrum = clen * 2 * real;
  const double per_thread =
      len * real + clen * 2 * real + double(t.fft[0] + t.fft[1] + t.fft[2]) * sizeof(int64_t);
  const double fftw = fftw_plan_bytes(t, real) + threads * fftw_run_bytes(t, real);
  const double running = spectrum + per_thread * threads + fftw;
  // Before, while the spectrum is computed in float64 (filter_spectrum): the real and complex
  // tile, its plan, and the spectrum's copy; then that copy and its rounding to T.
  const double computing = std::max(len * 8 + clen * 16 + fftw_plan_bytes(t, 8, false) + clen * 16,
                                    clen * 16 + spectrum);
  std::vector<MemoryUse> needs{{"the filter's spectrum", spectrum, MemorySpace::host},
                               {"FFT tiles of " + std::to_string(threads) + " threads",
                                per_thread * threads, MemorySpace::host},
                               {"FFTW's plans and buffers", fftw, MemorySpace::host}};
  if (computing > running)
    needs.push_back({"the spectrum's float64 transform (before the tiles)", computing - running,
                     MemorySpace::host});
  return needs;
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
  // The tiling's transforms (fft_ns, scaled by FastTuning::cpu_fft_cost), on every shape: a
  // filter along one axis of a 2-D or 3-D array as on a 1-D array (docs/notes/tuning.md,
  // cpu_fft). No estimate for rank-1 filters over two or more axes, which 1-D passes run
  // (cpu_separable: a sigma = 8 Gaussian on 4096^2 in 62 ms by passes, 73 by transforms), nor
  // below profile::Cpu::min_fft_direct_ns of direct sums, where plans and the spectrum buy
  // nothing: outside what the model covers (`--strategy cpu_fft` still runs them).
  Estimate estimate(const Problem& p) const override {
    if (p.rank() > 1)
      if (const auto& win = detail::separable_windows(p); win && win->long_axes > 1)
        return Estimate::none("rank-1 filters over two or more axes run as 1-D passes");
    const FftTiling t = fft_tiling(p);
    if (t.direct_ns < profile::cpu().min_fft_direct_ns)
      return Estimate::none("too little work for the transforms' plans and spectrum");
    const double cost = p.tuning().cpu_fft_cost.value_or(profile::cpu().fft_cost_percent) / 100.0;
    return {t.fft_ns * cost, "overlap-save tiles: fft_ns x cpu_fft_cost"};
  }
  std::string plan(const Problem& p) const override {
    const FftTiling t = fft_tiling(p);
    const int rank = p.rank();
    std::string tile, fft;
    for (int a = 3 - rank; a < 3; ++a) {
      tile += (tile.empty() ? "" : "x") + std::to_string(t.tile[a]);
      fft += (fft.empty() ? "" : "x") + std::to_string(t.fft[a]);
    }
    const char* library = per_dtype(p.dtype(), "fftw3f", "fftw3", "cpu_fft's library");
    return "overlap-save tiles of " + tile + " outputs, transforms of " + fft + " (FFTW, " +
           library + ", estimate plans), " +
           std::to_string(t.tiles * p.batch()) + " tiles on " + std::to_string(team_size(p, t)) +
           " threads";
  }
  Summation summation(const Problem&) const override { return Summation::fft; }
  std::vector<MemoryUse> workspace(const Problem& p) const override {
    return dispatch_dtype(
        p.dtype(), [&](auto d) { return workspace_typed<typename decltype(d)::storage>(p); });
  }
  void run(const Problem& p, const Buffers& b, void*) const override {
    dispatch_dtype(p.dtype(), [&](auto d) { run_typed<typename decltype(d)::storage>(p, b); });
  }
  // Every tile's outputs are probed as they are copied out.
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }
};

}  // namespace

std::vector<double> filter_spectrum(const Problem& p, const FftTiling& t) {
  const int64_t len = t.elements(), clen = t.complex_elements();
  const std::vector<int> dims = fftw_dims(t);
  auto wr = alloc_real<double>(len, "the filter's spectrum");
  auto wc = alloc_complex<double>(clen, "the filter's spectrum");
  const FftwReserve reserve(fftw_plan_bytes(t, sizeof(double), false),
                            "plan of the filter's spectrum");
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
