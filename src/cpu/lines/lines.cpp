/* strategy: cpu_lines — a filter that reaches exactly one axis (SciPy's 1-D passes: correlate1d,
 * each axis of gaussian_filter, sobel, prewitt ...) on uint8, uint16 and int16 arrays read and
 * written at their own width: the host's twin of the CUDA strategy `lines` (cuda/lines/lines.cu).
 *
 * The array is seen as (outer, L, inner) around the filtered axis of length L. A unit widens what
 * it reads into its thread's buffer, the filter's reach mapped by the axis's mode (cval in
 * constant mode), in the type the sums are carried in (Accum): the input's accumulation type
 * (core/dtype.hpp: float32 for uint8; float64 for the 16-bit types, whose float32 sums of values
 * up to 65535 would leave about a fifth of a Gaussian's outputs within the bound of an integer),
 * or int16 modulo 2^16 where the sums are integers SciPy's cast keeps the low bits of.
 *  - inner == 1 (the contiguous axis): a segment of one line with the reach either side, each
 *    vector of outputs summed from shifted loads of it;
 *  - inner > 1: a block of columns of the rows a strip of output rows reads, in a ring of k + 3
 *    rows; four output rows at a time, lines side by side in the vectors' lanes, each row's
 *    vector loaded once for the four sums it enters.
 * The sums (cpu/lines/kernels-inl.h, Highway) are stored as the output's dtype: SciPy's
 * truncation wherever the sum's bound decides it (core/convert.hpp), and where it does not,
 * SciPy's own float64 sum in its order (core/scipy_sum.hpp), or, where every tap reads one value,
 * the truncation of that value's flat sum (cached per thread: the outputs of a flat region share
 * it; a vector, or a whole row, of them at once). Built with -ffp-contract=off: SciPy's flat sums
 * are computed here, a multiply and an add each.
 */
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/boundary.hpp"
#include "core/convert.hpp"
#include "core/dtype.hpp"
#include "core/line_filter.hpp"
#include "core/profile.hpp"
#include "core/scipy_sum.hpp"
#include "cpu/lines/kernels.hpp"
#include "halo/strategy.hpp"
#include "hwy/aligned_allocator.h"

namespace halo::cpu {
std::unique_ptr<Strategy> make_lines_strategy();

namespace lines {
namespace {

using i64 = std::int64_t;

constexpr int kMaxTaps = 129;
// Outputs per unit along a contiguous line: the segment and its reach stay in L1.
constexpr i64 kSegment = 4096;
// Across the inner axis: a unit's columns (bytes of A per buffer row: long runs of each input
// row for the prefetchers, the ring of k + 3 rows still in L2) and output rows (the k - 1 rows
// a strip widens beyond its own a small part).
constexpr i64 kBlockBytes = 16384;
constexpr i64 kStrip = 256;
// Below this many multiply-adds a problem runs on the calling thread.
constexpr double kSerialWork = double(1 << 18);

using LineDTypes = DTypeList<DType::u8, DType::u16, DType::i16>;
using OutDTypes = DTypeList<DType::u8, DType::u16, DType::i16, DType::f32>;


// The type the sums are carried in: the input's accumulation type (core/dtype.hpp: float32 for
// uint8, float64 for the 16-bit types), or int16 where they are integers within int32 that an
// 8- or 16-bit integer output truncates (integral weights and cval: Sobel's and Prewitt's
// passes): summed modulo 2^16, their low bits are those SciPy's cast keeps, twice the lanes.
enum class Accum { f32, f64, i16 };
constexpr const char* kAccumName[] = {"float32", "float64", "int16 (exact)"};
constexpr int kAccumBytes[] = {4, 8, 2};

// The shape a run sees (outer, L, inner around the filtered axis), the filter's reach, the
// axis's mode, how sums are stored, and the blocking.
struct Geometry {
  int axis = 0;
  i64 outer = 1, L = 1, inner = 1;
  int k = 1, a = 0;
  Boundary mode = Boundary::constant;
  double cval = 0;
  Store store = Store::truncate;
  // inner == 1: segments of `seg` outputs (segs per line); inner > 1: blocks of columns
  // (`blocks`, the widest `cols`), strips of `strip` output rows (`strips`).
  i64 seg = 1, segs = 1, blocks = 1, cols = 1, strip = 1, strips = 1, units = 1;
  i64 pitch = 0;  // elements of A between buffer rows (inner > 1)
  int threads = 1;
};

// The scale of a problem's sums: sum|w|, the largest |value| a tap reads (the type's, or
// cval's), and whether every sum is an integer (integral weights on integers, an integral cval).
struct SumScale {
  double wsum = 0, m = 0;
  bool integral = false;
  explicit SumScale(const Problem& p) {
    const DType t = p.dtype();
    const double xmax = t == DType::u8 ? 255.0 : t == DType::u16 ? 65535.0 : 32768.0;
    m = std::max(xmax, std::isfinite(p.cval()) ? std::fabs(p.cval()) : 0.0);
    integral = std::isfinite(p.cval()) && p.cval() == std::nearbyint(p.cval());
    for (double v : p.correlation_weights()) {
      wsum += std::fabs(v);
      integral = integral && v == std::nearbyint(v);
    }
  }
};

// SciPy's truncation of sums within `bound` of their float64 sum: -1 where every sum is an
// exact integer (integral, below 2^digits), else the sum's and SciPy's rounding, (k + 8) units
// of A and (k + 2) of double, times sum|w| m (as the CUDA `lines` and
// ConvertedBase::bound_scale), rounded up.
template <class A>
A decision_bound(const SumScale& s, int k) {
  constexpr double unit = std::is_same_v<A, float> ? 0x1p-24 : 0x1p-53;
  if (s.integral && s.wsum * s.m < 1.0 / unit) return A(-1);
  const double b = ((k + 8) * unit + (k + 2) * 0x1p-53) * s.wsum * s.m;
  A r = A(b);
  if (double(r) < b) r = std::nextafter(r, std::numeric_limits<A>::infinity());
  return r;
}

// Whether the weights, rounded to A, pair as NI_Correlate1D pairs them: 1 symmetric, -1
// antisymmetric (exactly), 0 neither or k even. Only how the sums are formed: SciPy's order is
// ScipySum's.
template <class A>
int pairs_of(const std::vector<A>& w) {
  const int k = int(w.size());
  if (k < 3 || !(k & 1)) return 0;
  bool sym = true, anti = true;
  for (int j = 0; j < k / 2; ++j) {
    sym = sym && w[j] == w[k - 1 - j];
    anti = anti && w[j] == -w[k - 1 - j];
  }
  return sym ? 1 : anti ? -1 : 0;
}

class LinesPlan final : public StrategyPlan {
 public:
  LinesPlan(const Strategy& s, const Problem& p, int axis);
  Estimate estimate() const override;
  std::string describe() const override;
  NonFinite nonfinite() const override { return NonFinite::exact; }
  std::vector<MemoryUse> workspace() const override;
  void run(const Buffers& b, void* stream) const override;

  const Geometry& geometry() const { return g_; }
  Accum accum() const { return accum_; }
  template <class A>
  const std::vector<A>& weights() const {
    if constexpr (std::is_same_v<A, float>) return wf_;
    else if constexpr (std::is_same_v<A, double>) return wd_;
    else return wi_;
  }
  template <class A>
  A bound() const {
    if constexpr (std::is_same_v<A, float>) return bf_;
    else if constexpr (std::is_same_v<A, double>) return bd_;
    else return A(-1);  // exact
  }
  template <class A>
  int pairs() const {
    return std::is_same_v<A, float> ? pf_ : std::is_same_v<A, double> ? pd_ : pi_;
  }
  const detail::ScipySum& scipy() const { return sum_; }
  // Bytes of one thread's buffers.
  double thread_bytes() const;

 private:
  template <class S, class A, class T>
  void run_typed(const S* in, T* out) const;

  Geometry g_;
  Accum accum_ = Accum::f32;
  std::vector<float> wf_;
  std::vector<double> wd_;
  std::vector<std::int16_t> wi_;
  float bf_ = 0;
  double bd_ = 0;
  int pf_ = 0, pd_ = 0, pi_ = 0;
  detail::ScipySum sum_;
};

LinesPlan::LinesPlan(const Strategy& s, const Problem& p, int axis)
    : StrategyPlan(s, p), sum_(p) {
  Geometry& g = g_;
  const Extents& e = p.extents();
  g.axis = axis;
  g.outer = p.batch();
  for (int ax = 0; ax < axis; ++ax) g.outer *= e[ax];
  g.L = e[axis];
  for (int ax = axis + 1; ax < p.rank(); ++ax) g.inner *= e[ax];
  g.k = int(p.filter_extents()[axis]);
  g.a = int(p.anchor()[axis]);
  g.mode = p.mode(axis);
  g.cval = p.cval();
  g.store = !is_integer_dtype(p.out_dtype())       ? Store::floating
            : p.rounding() == Rounding::nearest ? Store::nearest
                                                : Store::truncate;
  const std::vector<double>& cw = p.correlation_weights();
  wd_ = cw;
  wf_.assign(cw.begin(), cw.end());
  const SumScale scale(p);
  bf_ = decision_bound<float>(scale, g.k);
  bd_ = decision_bound<double>(scale, g.k);
  pf_ = pairs_of(wf_);
  pd_ = pairs_of(wd_);
  accum_ = p.dtype() == DType::u8 ? Accum::f32 : Accum::f64;
  // Integers within int32 (SciPy's float64 sums exact, its cast their low bits): summed in int16
  // modulo 2^16, weights and cval too, with nothing to decide.
  if (g.store == Store::truncate && scale.integral && scale.wsum * scale.m < 0x1p31 - 1) {
    g.store = Store::exact;
    accum_ = Accum::i16;
    for (double v : cw) wi_.push_back(std::int16_t(std::uint16_t(std::int64_t(v) & 0xffff)));
    pi_ = pairs_of(wi_);
  }

  const i64 asize = kAccumBytes[int(accum_)];
  const double work = double(p.elements()) * g.k;
  const int team = work < kSerialWork ? 1 : omp_get_max_threads();
  const i64 want = 8 * i64(team);
  if (g.inner == 1) {
    g.segs = (g.L + kSegment - 1) / kSegment;
    g.seg = (g.L + g.segs - 1) / g.segs;
    g.units = g.outer * g.segs;
  } else {
    g.blocks = std::max<i64>(1, g.inner / (kBlockBytes / asize));
    g.cols = (g.inner + g.blocks - 1) / g.blocks;
    const i64 line = 64 / asize;
    g.pitch = (g.cols + line - 1) / line * line + line;  // rows never share L1 sets
    i64 strip = std::min<i64>(kStrip, g.L);
    while (strip > 16 && g.outer * g.blocks * ((g.L + strip - 1) / strip) < want) strip /= 2;
    g.strip = strip;
    g.strips = (g.L + strip - 1) / strip;
    g.units = g.outer * g.blocks * g.strips;
  }
  g.threads = int(std::min<i64>(team, g.units));
}

double LinesPlan::thread_bytes() const {
  const Geometry& g = g_;
  const double asize = kAccumBytes[int(accum_)];
  const double buf = g.inner == 1 ? double(g.seg + g.k - 1 + 64)
                                  : double((g.k + 3) * g.pitch + 64);
  const double pend = double(g.inner == 1 ? g.seg + kPendingSlack : 4 * (g.cols + kPendingSlack));
  return buf * asize + pend * 4 + double(g.k + 3) * 9 + 256;
}

std::vector<MemoryUse> LinesPlan::workspace() const {
  return {{"row buffers of " + std::to_string(g_.threads) + " threads",
           thread_bytes() * g_.threads, MemorySpace::host}};
}

std::string LinesPlan::describe() const {
  const Geometry& g = g_;
  const int pairs = accum_ == Accum::f32 ? pf_ : accum_ == Accum::f64 ? pd_ : pi_;
  std::string s = "axis " + std::to_string(g.axis) + ", " + std::to_string(g.k) + " taps" +
                  (pairs > 0 ? " (symmetric pairs)" : pairs < 0 ? " (antisymmetric pairs)" : "") +
                  ", " + std::to_string(g.outer * g.inner) + " lines of " + std::to_string(g.L) +
                  ", sums in " + kAccumName[int(accum_)] + "; ";
  if (g.inner == 1)
    s += "segments of " + std::to_string(g.seg) + " outputs along the contiguous axis";
  else
    s += std::to_string(g.cols) + " lines side by side, strips of " + std::to_string(g.strip) +
         " rows";
  return s + "; " + std::to_string(g.threads) + " threads";
}

// A unit's work on one thread: its buffers (allocated by the run, one slice per thread), and
// the outputs it stores.
template <class S, class A, class T>
class Worker {
 public:
  Worker(const LinesPlan& p, const S* in, T* out, A* buf, std::int32_t* pending, const A** ptrs,
         bool* flat)
      : p_(p),
        g_(p.geometry()),
        in_(in),
        out_(out),
        buf_(buf),
        pending_(pending),
        ptrs_(ptrs),
        flat_(flat) {
    sums_.rows = ptrs_;
    sums_.w = p.weights<A>().data();
    sums_.k = g_.k;
    sums_.pairs = p.pairs<A>();
    sums_.store = g_.store;
    sums_.bound = p.bound<A>();
    if constexpr (std::is_integral_v<T>) {
      if (g_.store == Store::truncate) {
        sums_.flat = &Worker::flat_of;
        sums_.ctx = this;
      }
    }
    if constexpr (std::is_integral_v<A>)  // exact sums modulo 2^16: an integral cval within int32
      cval_ = A(std::uint16_t(std::int64_t(g_.cval) & 0xffff));
    else
      cval_ = A(g_.cval);
    // A flat window may hold constant-mode ghosts where cval is exactly their value in A.
    ghosts_exact_ = g_.mode != Boundary::constant || double(cval_) == g_.cval;
  }

  void unit(i64 u) {
    const Geometry& g = g_;
    if (g.inner == 1) {
      const i64 o = u / g.segs, s = u % g.segs;
      segment(o, s * g.seg, std::min(g.L, (s + 1) * g.seg));
    } else {
      const i64 o = u / (g.blocks * g.strips), r = u % (g.blocks * g.strips);
      const i64 b = r / g.strips, s = r % g.strips;
      strip(o, b * g.inner / g.blocks, (b + 1) * g.inner / g.blocks, s * g.strip,
            std::min(g.L, (s + 1) * g.strip));
    }
  }

 private:
  // Position pos of a line whose elements lie `stride` apart, mapped by the mode.
  A value(const S* line, i64 stride, i64 pos) const {
    const i64 m = detail::map_index(pos, g_.L, g_.mode);
    return m < 0 ? cval_ : A(line[m * stride]);
  }

  // Outputs [l0, l1) of line o along the contiguous axis.
  void segment(i64 o, i64 l0, i64 l1) {
    const Geometry& g = g_;
    const S* line = in_ + o * g.L;
    const i64 n = l1 - l0, count = n + g.k - 1, first = l0 - g.a;
    const i64 lo = std::max<i64>(first, 0), hi = std::min(first + count, g.L);
    bool flat = Widen(line + lo, buf_ + (lo - first), hi - lo);
    const A v = buf_[lo - first];
    for (i64 t = 0; t < lo - first; ++t) flat &= (buf_[t] = value(line, 1, first + t)) == v;
    for (i64 t = hi - first; t < count; ++t) flat &= (buf_[t] = value(line, 1, first + t)) == v;
    T* out = out_ + o * g.L + l0;
    // Every tap of every output reads v: SciPy's flat sum of v, stored at once.
    if (flat && (ghosts_exact_ || (lo == first && hi == first + count)) && fill_flat(out, n, v))
      return;
    for (int j = 0; j < g.k; ++j) ptrs_[j] = buf_ + j;
    sums_.n = n;
    if (ghosts_exact_) {
      sums_.flat_lo = 0, sums_.flat_hi = n;
    } else {  // the outputs whose taps lie inside the line
      sums_.flat_lo = std::clamp<i64>(g.a - l0, 0, n);
      sums_.flat_hi = std::clamp<i64>(g.L - g.k + 1 + g.a - l0, sums_.flat_lo, n);
    }
    sums_.groups = 1;
    T* const outs[1] = {out};
    const i64 np = LineSums(sums_, outs, pending_);
    for (i64 q = 0; q < np; ++q) {
      const i64 i = pending_[q];
      out[i] = complete(ptrs_, i, o, l0 + i, 0);
    }
  }

  // Outputs [l0, l1) x columns [c0, c1) of item o across the inner axis, from a ring of the
  // k + 3 rows that four output rows read (row q of the strip, at l0 - a + q, in slot q % R).
  void strip(i64 o, i64 c0, i64 c1, i64 l0, i64 l1) {
    const Geometry& g = g_;
    const i64 width = c1 - c0, R = g.k + 3;
    const S* base = in_ + o * g.L * g.inner + c0;
    i64 loaded = 0;  // rows of the strip widened so far
    // Widens rows up to q (exclusive) into their slots, noting whether each is one value
    // (flat_; a ghost row only where cval is exactly its value in A).
    const auto load = [&](i64 q) {
      for (; loaded < q; ++loaded) {
        const i64 m = detail::map_index(l0 - g.a + loaded, g.L, g.mode);
        A* dst = slot(loaded);
        if (m < 0) {
          std::fill_n(dst, width, cval_);
          flat_[loaded % R] = ghosts_exact_;
        } else {
          flat_[loaded % R] = Widen(base + m * g.inner, dst, width);
        }
      }
    };
    sums_.n = width;
    for (i64 l = l0; l < l1;) {
      const i64 q = l - l0;
      // Four output rows at once where none is flat throughout, else one.
      int groups = l + 4 <= l1 ? 4 : 1;
      load(q + groups + g.k - 1);
      for (int r = 0; r < groups && groups == 4; ++r)
        if (flat_row(q + r)) groups = 1;
      if (groups == 1 && flat_row(q)) {
        fill_flat(out_ + (o * g.L + l) * g.inner + c0, width, slot(q)[0]);
        ++l;
        continue;
      }
      for (int j = 0; j < g.k + groups - 1; ++j) ptrs_[j] = slot(q + j);
      // Flat windows where a ghost reads cval exactly, or every row's taps lie inside.
      const bool inside = l - g.a >= 0 && l + groups - 1 - g.a + g.k - 1 < g.L;
      sums_.flat_lo = 0;
      sums_.flat_hi = ghosts_exact_ || inside ? width : 0;
      sums_.groups = groups;
      T* outs[4];
      for (int r = 0; r < groups; ++r) outs[r] = out_ + (o * g.L + l + r) * g.inner + c0;
      const i64 np = LineSums(sums_, outs, pending_);
      for (i64 e = 0; e < np; ++e) {
        const i64 r = pending_[e] / width, i = pending_[e] % width;
        outs[r][i] = complete(ptrs_ + r, i, o, l + r, c0 + i);
      }
      l += groups;
    }
  }

  // Row q of the strip's ring.
  A* slot(i64 q) const { return buf_ + (q % (g_.k + 3)) * g_.pitch; }

  // Whether every tap of output row q of the strip (rows q .. q + k - 1, loaded) reads one
  // value, so that the row is that value's flat sum throughout (truncate only).
  bool flat_row(i64 q) const {
    if (!sums_.flat) return false;
    const A v = slot(q)[0];
    for (int j = 0; j < g_.k; ++j)
      if (!flat_[(q + j) % (g_.k + 3)] || !(slot(q + j)[0] == v)) return false;
    return true;
  }

  // The output the kernel left at index i of a row whose taps are `rows`, at (o, l, c): a flat
  // window's cached truncation, or SciPy's own sum stored as T.
  T complete(const A* const* rows, i64 i, i64 o, i64 l, i64 c) {
    if constexpr (std::is_integral_v<T>) {
      if (g_.store == Store::truncate && i >= sums_.flat_lo && i < sums_.flat_hi) {
        const A v = rows[0][i];
        bool same = true;
        for (int j = 1; j < g_.k; ++j) same = same && rows[j][i] == v;
        if (same) return flat(v);
      }
      const double s = scipy_sum(o, l, c);
      return g_.store == Store::nearest ? detail::nearest_cast<T>(s) : detail::scipy_cast<T>(s);
    } else {
      return detail::from_accum_float<T>(scipy_sum(o, l, c));
    }
  }

  // SciPy's float64 sum of output (o, l, c), through the problem's canonical coordinates.
  double scipy_sum(i64 o, i64 l, i64 c) const {
    const Problem& p = p_.problem();
    const Dims3 n = p.dims3();
    const i64 E = p.elements_per_item();
    const i64 e = (o * g_.L + l) * g_.inner + c;
    const i64 item = e / E, r = e % E;
    return p_.scipy().at(in_ + item * E, r / (n.y * n.x), (r / n.x) % n.y, r % n.x, g_.cval);
  }

  // SciPy's truncation of a flat window of value v (finite: the window holds the output's own
  // element), from a small cache: a flat region repeats one value.
  T flat(A v) {
    static_assert(std::is_integral_v<T>, "flat windows decide integer outputs only");
    if (!std::isfinite(v)) return detail::scipy_cast<T>(flat_sum(v));
    Entry& e = cache_[std::uint64_t(std::int64_t(v)) % kCache];
    if (!e.valid || !(e.v == v)) {
      e.v = v;
      e.t = detail::scipy_cast<T>(flat_sum(v));
      e.valid = true;
    }
    return e.t;
  }
  double flat_sum(A v) const { return detail::scipy_flat_sum(p_.scipy().view(), double(v)); }
  static T flat_of(void* ctx, A v) { return static_cast<Worker*>(ctx)->flat(v); }
  // n outputs whose every tap reads v, stored at once where SciPy's truncation is asked for.
  bool fill_flat(T* out, i64 n, A v) {
    if constexpr (std::is_integral_v<T>) {
      if (g_.store != Store::truncate) return false;
      std::fill_n(out, n, flat(v));
      return true;
    } else {
      return false;
    }
  }

  static constexpr int kCache = 64;
  struct Entry {
    A v = 0;
    T t{};
    bool valid = false;
  };

  const LinesPlan& p_;
  const Geometry& g_;
  const S* in_;
  T* out_;
  A* buf_;
  std::int32_t* pending_;
  const A** ptrs_;
  bool* flat_;  // per buffer row (inner > 1): one value throughout
  RowSums<A, T> sums_;
  A cval_ = 0;
  bool ghosts_exact_ = true;
  Entry cache_[kCache];
};

template <class S, class A, class T>
void LinesPlan::run_typed(const S* in, T* out) const {
  const Geometry& g = g_;
  // One slice of each buffer per thread, allocated here (not in the team: an allocation that
  // fails is an Error to the caller).
  const i64 bufn = g.inner == 1 ? g.seg + g.k - 1 + 64 : (g.k + 3) * g.pitch + 64;
  const i64 pendn = g.inner == 1 ? g.seg + kPendingSlack : 4 * (g.cols + kPendingSlack);
  const int threads = std::max(1, g.threads);
  auto buf = hwy::AllocateAligned<A>(std::size_t(bufn * threads));
  auto pend = hwy::AllocateAligned<std::int32_t>(std::size_t(pendn * threads));
  if (!buf || !pend)
    throw Error("cpu_lines: cannot allocate " + std::to_string(i64(thread_bytes()) * threads) +
                " bytes of row buffers");
  std::vector<const A*> ptrs(std::size_t(g.k + 3) * threads);
  const i64 flatn = g.inner == 1 ? 1 : g.k + 3;
  std::unique_ptr<bool[]> flat(new bool[std::size_t(flatn * threads)]);
  const auto& progress = problem().progress();
  if (threads == 1) {
    Worker<S, A, T> w(*this, in, out, buf.get(), pend.get(), ptrs.data(), flat.get());
    for (i64 u = 0; u < g.units; ++u) {
      w.unit(u);
      if (progress) progress(double(u + 1) / double(g.units));
    }
    return;
  }
  std::atomic<i64> done{0};
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Worker<S, A, T> w(*this, in, out, buf.get() + t * bufn, pend.get() + t * pendn,
                      ptrs.data() + std::size_t(t) * (g.k + 3), flat.get() + t * flatn);
#pragma omp for schedule(dynamic, 1)
    for (i64 u = 0; u < g.units; ++u) {
      w.unit(u);
      const i64 d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (progress && t == 0) progress(double(d) / double(g.units));
    }
  }
}

void LinesPlan::run(const Buffers& b, void*) const {
  const Problem& p = problem();
  dispatch_dtype<LineDTypes>(p.dtype(), [&](auto di) {
    using S = typename decltype(di)::storage;
    dispatch_dtype<OutDTypes>(p.out_dtype(), [&](auto dout) {
      using T = typename decltype(dout)::storage;
      const S* in = static_cast<const S*>(b.input);
      T* out = static_cast<T*>(b.output);
      if constexpr (std::is_integral_v<T>) {
        if (accum_ == Accum::i16) return run_typed<S, std::int16_t>(in, out);
      }
      run_typed<S, accum_t<S>>(in, out);
    });
  });
}

// ns on one core: each output and each tap at the rates measured for the accumulation type
// (profile::Cpu, "cpu_lines").
Estimate LinesPlan::estimate() const {
  const Problem& p = problem();
  const profile::Cpu& c = profile::cpu();
  const double out_ns[] = {c.lines_output_ns_f32, c.lines_output_ns_f64, c.lines_output_ns_i16};
  const double tap_ns[] = {c.lines_tap_ns_f32, c.lines_tap_ns_f64, c.lines_tap_ns_i16};
  const int a = int(accum_);
  return {double(p.elements()) * (out_ns[a] + g_.k * tap_ns[a]),
          std::string("elements x (output + taps x tap) ns, sums in ") + kAccumName[a]};
}

class LinesStrategy final : public PlannedStrategy {
 public:
  std::string name() const override { return "cpu_lines"; }
  Backend backend() const override { return Backend::cpu; }
  std::string description() const override {
    return "a filter along one axis on uint8/uint16/int16 at their own width (SciPy's 1-D "
           "passes), integers exactly SciPy's; OpenMP threads + Highway SIMD";
  }
  Status accepts_dtypes(const Problem& p) const override {
    return detail::integer_line_dtypes(p);
  }
  Prepared prepare(const Problem& p) const override {
    std::string why;
    const int axis = detail::integer_line_axis(p, kMaxTaps, &why);
    if (axis < 0) return Prepared::cannot(why);
    return {std::make_shared<LinesPlan>(*this, p, axis), {}};
  }
};

}  // namespace
}  // namespace lines

std::unique_ptr<Strategy> make_lines_strategy() {
  return std::make_unique<lines::LinesStrategy>();
}

}  // namespace halo::cpu
