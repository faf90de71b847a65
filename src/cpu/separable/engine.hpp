// The passes of cpu_separable and cpu_lowrank (strategies.cpp): a Job (the passes of each axis
// or the terms of a sum, and the blocking into units of work), the Worker that runs one unit
// (x and y fused through a ring of rows in L2, then z in place), and run_job over OpenMP
// threads. Templates of the element type, instantiated by strategies.cpp alone.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <omp.h>

#include <atomic>
#include <memory>

#include "core/boundary.hpp"
#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/factor.hpp"
#include "core/nonfinite.hpp"
#include "cpu/fft/fft.hpp"
#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"

#include "cpu/separable/kernels.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu::sep {

using std::int64_t;

// L2 budget of one thread's ring (and padded rows): the rows a unit keeps live.
constexpr int64_t kRingBytes = 256 << 10;
// Below this many multiply-adds a problem runs on the calling thread (as `cpu`).
constexpr double kSerialWork = double(1 << 18);
// Outputs of at least this many bytes are written with non-temporal stores (as `cpu`): with the
// input they exceed the caches, and the read-for-ownership would cost a third of the traffic.
constexpr double kStreamBytes = double(16 << 20);
// Box factors of at least this many taps take the box forms (doubling along x, running sums
// down y and z); shorter ones the paired direct sum, as fast there (docs/notes/tuning.md).
constexpr int kMinBoxTapsX = 12;
constexpr int kMinBoxTapsRows = 6;

// One axis's pass: its centred window (K = 2R + 1 taps, w[R] weighs the output's own
// coordinate), in T, whether it is symmetric, and whether it runs at all (a window {1} is none).
// A box factor (one run of equal weights c at window indices [blo, blo + bk)) may take the box
// forms instead.
template <class T>
struct Pass {
  std::vector<T> w;
  int R = 0;
  bool sym = false;
  bool on = false;
  bool box = false;
  int blo = 0, bk = 0;
  Scale<T> scale;   // at the store: a box form's weight, or the last pass's divisor (Job)
  int restart = 0;  // running sums: outputs between restarts (detail::running_restart)
  Boundary mode = Boundary::constant;
  int K() const { return 2 * R + 1; }
};

// Everything a unit needs: the shape, the three passes (z, y, x), cval as each stage sees it,
// and the blocking.
template <class T>
struct Job {
  const T* in = nullptr;
  T* out = nullptr;
  int64_t batch = 1, nz = 1, ny = 1, nx = 1;
  Pass<T> z, y, x;
  T cval = 0;           // the input's ghost value (constant mode)
  T cval_x = 0;         // a ghost row after the x pass: cval * sum(w_x)
  T cval_xy = 0;        // a ghost plane after the x and y passes: cval * sum(w_x) * sum(w_y)
  bool stream = false;  // non-temporal stores into the output
  // Where given, a stage that stores a NaN or an infinity into the final output notes it there
  // (NonFinite::noted).
  const Buffers* buffers = nullptr;
  // x-y stage: units (item, plane, strip of `strip` rows, chunk of `cw` columns).
  int64_t cw = 1, strip = 1, nchunks = 1, nstrips = 1, xy_units = 0;
  // z stage: units (item, chunk of `zcw` elements of a plane).
  int64_t zcw = 1, zchunks = 1, z_units = 0;
  int threads = 1;
  // A sum of separable terms (cpu_lowrank): the terms of the x-y stage, each its own y and x
  // pass and the value of a ghost row after its x pass (cval * sum(w_x)); with `zadd`, the z
  // stage then adds z's pass of the input (the terms along z alone) to the output. x and y
  // above are then off.
  struct Term {
    Pass<T> y, x;
    T cval_x = 0;
  };
  std::vector<Term> terms;
  bool zadd = false;
  bool xy() const { return x.on || y.on; }
  bool lr() const { return !terms.empty(); }
  int max_k() const {
    int k = std::max({x.K(), y.K(), z.K()});
    for (const Term& t : terms) k = std::max({k, t.x.K(), t.y.K()});
    return k;
  }
  int max_rx() const {
    int r = x.R;
    for (const Term& t : terms) r = std::max(r, t.x.R);
    return r;
  }
  // Rows a y or z pass keeps live: K + 1 for running sums (they subtract the row before the
  // window), else the K + kRowGroup - 1 rows of a group of outputs (CombineRows).
  static int slots(const Pass<T>& p) { return p.box ? p.K() + 1 : p.K() + kRowGroup - 1; }
  // Row pointers of one sum, and as many for the ring's rows by slot.
  int64_t row_ptrs() const { return int64_t(max_k()) + kRowGroup + 2; }
  // Ring rows of the x-y stage: y's slots per pass along x that y reads (K_y + 1 per term).
  int64_t ring_rows() const {
    if (!lr()) return y.on && x.on ? int64_t(slots(y)) : 0;
    int64_t rows = 0;
    for (const Term& t : terms) rows += t.x.on ? int64_t(t.y.K() + 1) : 0;
    return rows;
  }
  // Row pointers of the terms' rings (K_y + 1 each, x-filtered or input rows).
  int64_t term_slots() const {
    int64_t n = 0;
    for (const Term& t : terms) n += t.y.K() + 1;
    return n;
  }
  // Elements between ring rows of `width`: rounded up to a cache line, plus one, so that the
  // rows of a ring never share L1 sets (a power-of-two pitch, 4096 columns say, put every row
  // of the ring in the same sets: 2x slower measured).
  int64_t pitch(int64_t width) const {
    const int64_t line = 64 / int64_t(sizeof(T));
    return (width + line - 1) / line * line + line;
  }
};

// One thread's buffers, sized by the job: padded row ends, the ring (K + 1 rows: running sums
// subtract the row before the window), a row of cval, the running sums, the x box's levels, and
// row pointers.
template <class T>
struct Scratch {
  int64_t pad_elems = 0, ring_elems = 0, cval_elems = 0, acc_elems = 0, box_elems = 0, ptrs = 0;
  static Scratch sizes(const Job<T>& j) {
    Scratch s;
    s.pad_elems = 2 * (2 * int64_t(j.max_rx()) + 16) + 64;
    const int64_t xy_ring = j.ring_rows() * j.pitch(j.cw);
    // z: K_z + 1 ring rows and R_z rows for the planes past the end (in place after x-y).
    const int64_t z_ring =
        j.z.on && j.xy() ? int64_t(Job<T>::slots(j.z) + j.z.R) * j.pitch(j.zcw) : 0;
    s.ring_elems = std::max(xy_ring, z_ring);
    // Rows of cval: one, and one per term (its ghost rows' value).
    s.cval_row = std::max(j.cw, j.zcw);
    s.cval_elems = s.cval_row * int64_t(1 + j.terms.size());
    s.acc_elems = j.y.box || j.z.box ? std::max(j.cw, j.zcw) : 0;
    // A sum of terms: two rows of partial sums (one read, one written), or z's copy of the
    // output row it adds to.
    if (j.lr()) s.acc_elems = std::max({s.acc_elems, 2 * j.pitch(j.cw), j.zadd ? j.zcw : 0});
    s.box_elems = j.x.box ? 3 * (kBoxBlock + int64_t(j.x.bk)) : 0;
    s.ptrs = 2 * j.row_ptrs() + j.term_slots();
    return s;
  }
  int64_t cval_row = 0;
  int64_t elems() const { return pad_elems + ring_elems + cval_elems + acc_elems + box_elems; }
  int64_t bytes() const { return elems() * int64_t(sizeof(T)) + ptrs * int64_t(sizeof(void*)); }
};

template <class T>
class Worker {
 public:
  Worker(const Job<T>& j, T* mem, const T** ptrs) : j_(j), ptrs_(ptrs), slot_(ptrs + j.row_ptrs()) {
    const Scratch<T> s = Scratch<T>::sizes(j);
    pad_ = mem;
    ring_ = pad_ + s.pad_elems;
    cval_row_ = ring_ + s.ring_elems;
    acc_ = cval_row_ + s.cval_elems;
    box_ = acc_ + s.acc_elems;
    cval_elems_ = s.cval_row;
    // The terms' rings, row pointers and rows of cval, one after another.
    const T** slots = ptrs + 2 * j.row_ptrs();
    T* ring = ring_;
    for (std::size_t t = 0; t < j.terms.size(); ++t) {
      const typename Job<T>::Term& q = j.terms[t];
      T* cv = cval_row_ + int64_t(t + 1) * s.cval_row;
      std::fill(cv, cv + s.cval_row, q.x.on ? q.cval_x : j.cval);
      lr_.push_back({slots, ring, cv, 0});
      slots += q.y.K() + 1;
      if (q.x.on) ring += int64_t(q.y.K() + 1) * j.pitch(j.cw);
    }
  }

  // Output columns [x0, x0 + n) of one row along x (pass x): src is the input row, dst the output.
  // `final`: dst is the final output (its non-finite values are noted).
  void x_row(const Pass<T>& x, const T* src, int64_t x0, int64_t n, T* dst, bool stream,
             bool final = false) {
    const int R = x.R;
    const int64_t nx = j_.nx;
    const bool probe = final && j_.buffers;
    // Outputs whose K inputs are all inside: [lo, hi).
    const int64_t lo = std::clamp<int64_t>(R, x0, x0 + n);
    const int64_t hi = std::clamp<int64_t>(nx - R, lo, x0 + n);
    bool ok = true;
    if (hi > lo) ok = x_from(x, src + lo - R, hi - lo, dst + (lo - x0), stream, probe);
    ok &= edge_x(x, src, x0, lo, dst, probe);
    ok &= edge_x(x, src, hi, x0 + n, dst + (hi - x0), probe);
    if (stream) hwy::FlushStream();
    note(ok);
  }

  // x-y stage, one unit.
  void xy_unit(int64_t u) {
    const int64_t c = u % j_.nchunks, s = (u / j_.nchunks) % j_.nstrips;
    const int64_t plane = u / (j_.nchunks * j_.nstrips);  // item * nz + z
    const int64_t x0 = c * j_.cw, n = std::min(j_.cw, j_.nx - x0);
    const int64_t y0 = s * j_.strip, y1 = std::min(j_.ny, y0 + j_.strip);
    const int64_t P = j_.ny * j_.nx;
    const T* in = j_.in + plane * P;
    T* out = j_.out + plane * P;
    // Where a z stage reads this stage's output back, plain stores leave part of it in the
    // caches for it, faster than non-temporal ones (docs/notes/tuning.md, "Separable passes
    // (`cpu_separable`)": non-temporal stores).
    stream_ = j_.stream && !j_.z.on;
    if (!j_.y.on) {
      for (int64_t y = y0; y < y1; ++y)
        x_row(j_.x, in + y * j_.nx, x0, n, out + y * j_.nx + x0, stream_, !j_.z.on);
      return;
    }
    const int Ry = j_.y.R, slots = Job<T>::slots(j_.y);
    since_ = -1;
    int64_t next = y0;  // the next output row
    for (int64_t g = y0 - Ry; g < y1 + Ry; ++g) {
      const int64_t k = (g - (y0 - Ry)) % slots;
      const int64_t m = detail::map_index(g, j_.ny, j_.y.mode);
      if (!j_.x.on) {
        slot_[k] = m < 0 ? cval_row(j_.cval) : in + m * j_.nx + x0;
      } else if (m < 0) {
        slot_[k] = cval_row(j_.cval_x);
      } else {
        T* r = ring_ + k * j_.pitch(j_.cw);
        x_row(j_.x, in + m * j_.nx, x0, n, r, false);
        slot_[k] = r;
      }
      // Outputs [next, g - Ry] have all their rows; ring index of input row i: i - (y0 - Ry).
      next = rows_out(
          j_.y, next, std::min(g - Ry + 1, y1), g == y1 + Ry - 1, y0 - Ry, slots,
          [&](int64_t o) { return out + o * j_.nx + x0; }, n, !j_.z.on);
    }
  }

  // x-y stage of a sum of terms, one unit: each term keeps its own ring of K_y + 1 rows (the
  // input rows filtered along its x window, or the input rows themselves where it has none),
  // filled as its y window reaches them; each output row is the sum over the terms of their y
  // passes, the partial sums in two rows in L1/L2, the last term writing the output once.
  void lr_xy_unit(int64_t u) {
    const int64_t c = u % j_.nchunks, s = (u / j_.nchunks) % j_.nstrips;
    const int64_t plane = u / (j_.nchunks * j_.nstrips);
    const int64_t x0 = c * j_.cw, n = std::min(j_.cw, j_.nx - x0);
    const int64_t y0 = s * j_.strip, y1 = std::min(j_.ny, y0 + j_.strip);
    const int64_t P = j_.ny * j_.nx;
    const T* in = j_.in + plane * P;
    T* out = j_.out + plane * P;
    const std::size_t terms = j_.terms.size();
    const int64_t pitch = j_.pitch(j_.cw);
    for (std::size_t t = 0; t < terms; ++t) lr_[t].next = y0 - j_.terms[t].y.R;
    T* part[2] = {acc_, acc_ + pitch};
    for (int64_t o = y0; o < y1; ++o) {
      T* dst = out + o * j_.nx + x0;
      for (std::size_t t = 0; t < terms; ++t) {
        const typename Job<T>::Term& q = j_.terms[t];
        TermState& st = lr_[t];
        const int Ry = q.y.R, slots = q.y.K() + 1;
        for (; st.next <= o + Ry; ++st.next) {
          const int64_t g = st.next, k = (g - (y0 - Ry)) % slots;
          const int64_t m = detail::map_index(g, j_.ny, q.y.mode);
          if (m < 0) {
            st.slot[k] = st.cval;
          } else if (!q.x.on) {
            st.slot[k] = in + m * j_.nx + x0;
          } else {
            T* r = st.ring + k * pitch;
            x_row(q.x, in + m * j_.nx, x0, n, r, false);
            st.slot[k] = r;
          }
        }
        for (int i = 0; i < q.y.K(); ++i) ptrs_[i] = st.slot[(o - y0 + i) % slots];
        const bool last = t + 1 == terms;
        note(Combine(ptrs_, q.y.K(), q.y.w.data(), q.y.sym, last ? dst : part[t % 2], n,
                     last && j_.stream, t == 0 ? nullptr : part[(t + 1) % 2], q.y.scale,
                     last && !j_.zadd && j_.buffers));
      }
      if (j_.stream) hwy::FlushStream();
    }
  }

  // z stage, one unit: columns [c0, c0 + n) of every plane of one item. After the x-y stage it
  // runs in place on the output through copied rows; alone it reads the input.
  void z_unit(int64_t u) {
    const int64_t item = u / j_.zchunks, c0 = (u % j_.zchunks) * j_.zcw;
    const int64_t P = j_.ny * j_.nx, n = std::min(j_.zcw, P - c0);
    const int Rz = j_.z.R, slots = Job<T>::slots(j_.z);
    const bool in_place = j_.xy();
    const T* src = (in_place ? j_.out : j_.in) + item * j_.nz * P + c0;
    T* dst = j_.out + item * j_.nz * P + c0;
    const T cv = in_place ? j_.cval_xy : j_.cval;
    // The rows past the last plane, copied before any plane is overwritten.
    const int64_t zp = j_.pitch(j_.zcw);
    T* tail = ring_ + int64_t(slots) * zp;
    if (in_place) {
      for (int t = 0; t < Rz; ++t) {
        const int64_t m = detail::map_index(j_.nz + t, j_.nz, j_.z.mode);
        if (m >= 0) std::memcpy(tail + t * zp, src + m * P, size_t(n) * sizeof(T));
      }
    }
    stream_ = j_.stream;
    since_ = -1;
    int64_t next = 0;  // the next output plane
    for (int64_t g = -Rz; g < j_.nz + Rz; ++g) {
      const int64_t k = (g + Rz) % slots;
      const int64_t m = detail::map_index(g, j_.nz, j_.z.mode);
      if (m < 0) {
        slot_[k] = cval_row(cv);
      } else if (!in_place) {
        slot_[k] = src + m * P;
      } else if (g >= j_.nz) {
        slot_[k] = tail + (g - j_.nz) * zp;
      } else {
        T* r = ring_ + k * zp;
        std::memcpy(r, src + m * P, size_t(n) * sizeof(T));
        slot_[k] = r;
      }
      next = rows_out(
          j_.z, next, std::min(g - Rz + 1, j_.nz), g == j_.nz + Rz - 1, -Rz, slots,
          [&](int64_t o) { return dst + o * P; }, n, true, j_.zadd);
    }
  }

 private:
  // Writes the outputs [next, ready) of a y or z pass from the ring (input row i in slot
  // (i - base) % slots): in groups of kRowGroup, one by one at the `last` input row, else
  // leaving the rest for more rows; one by one at once for box factors (their running sums go
  // row by row) and where each output adds what the x-y stage wrote there (`adds`). Returns the
  // next output not written; dst(o) is output row o. `final`: the rows are the final output.
  template <class Dst>
  int64_t rows_out(const Pass<T>& q, int64_t next, int64_t ready, bool last, int64_t base,
                   int slots, Dst dst, int64_t n, bool final, bool adds = false) {
    const int K = q.K();
    const bool single = q.box || adds;
    const bool probe = final && j_.buffers;
    while (next < ready) {
      const int64_t first = next - q.R - base;  // slot index of the output's first row
      if (!single && ready - next >= kRowGroup) {
        for (int i = 0; i < K + kRowGroup - 1; ++i) ptrs_[i] = slot_[(first + i) % slots];
        T* rows[kRowGroup];
        for (int g = 0; g < kRowGroup; ++g) rows[g] = dst(next + g);
        note(CombineRows(ptrs_, K, q.w.data(), rows, n, stream_, q.scale, probe));
        if (stream_) hwy::FlushStream();
        next += kRowGroup;
      } else if (single || last) {
        for (int i = 0; i < K; ++i) ptrs_[i] = slot_[(first + i) % slots];
        T* const row = dst(next);
        if (adds) std::memcpy(acc_, row, size_t(n) * sizeof(T));  // what the x-y stage wrote
        note(column(q, row, n, adds ? acc_ : nullptr, probe));
        ++next;
      } else {
        break;
      }
    }
    return next;
  }
  // Notes a non-finite output where a probed kernel found one.
  void note(bool finite) const {
    if (!finite) detail::note_nonfinite(*j_.buffers);
  }
  // n outputs along x from src, whose first element is the first output's first input. Returns
  // whether they are finite where `probe`.
  bool x_from(const Pass<T>& x, const T* src, int64_t n, T* dst, bool stream, bool probe) {
    if (x.box) return BoxRow(src + x.blo, n, x.bk, x.scale, dst, box_, stream, x.restart, probe);
    for (int i = 0; i < x.K(); ++i) ptrs_[i] = src + i;
    const T* none = nullptr;
    return Combine(ptrs_, x.K(), x.w.data(), x.sym, dst, n, stream, none, x.scale, probe);
  }
  // Outputs [a, b) of a row along x through a padded copy of their inputs (the row's ends).
  bool edge_x(const Pass<T>& xp, const T* src, int64_t a, int64_t b, T* dst, bool probe) {
    const int R = xp.R;
    const int64_t chunk = 16;  // outputs per padded copy: the copy stays within pad_
    bool ok = true;
    for (int64_t x = a; x < b; x += chunk) {
      const int64_t n = std::min(chunk, b - x);
      for (int64_t t = 0; t < n + 2 * R; ++t) {
        const int64_t m = detail::map_index(x - R + t, j_.nx, xp.mode);
        pad_[t] = m < 0 ? j_.cval : src[m];
      }
      ok &= x_from(xp, pad_, n, dst + (x - a), false, probe);
    }
    return ok;
  }
  // One output row of a y or z pass from the K rows in ptrs_ (in order). Box factors: running
  // sums, restarted every `restart` outputs and at the start of a unit (since_ = -1).
  // `add` (not with box factors): a row added to the sum. Returns whether the outputs are finite
  // where `probe`.
  bool column(const Pass<T>& q, T* dst, int64_t n, const T* add, bool probe) {
    bool ok;
    if (!q.box) {
      ok = Combine(ptrs_, q.K(), q.w.data(), q.sym, dst, n, stream_, add, q.scale, probe);
    } else {
      const T* const* rows = ptrs_ + q.blo;
      const bool restart = since_ < 0 || since_ >= q.restart;
      ok = RunRows(rows, q.bk, rows[q.bk - 1], leaving_, restart, q.scale, acc_, dst, n, stream_,
                   probe);
      since_ = restart ? 1 : since_ + 1;
      leaving_ = rows[0];  // the next output's window no longer holds it
    }
    if (stream_) hwy::FlushStream();
    return ok;
  }
  // A row of cval_elems values v (refilled when v changes).
  const T* cval_row(T v) {
    if (!have_cval_row_ || !(v == cval_row_value_)) {
      std::fill(cval_row_, cval_row_ + cval_elems_, v);
      cval_row_value_ = v;
      have_cval_row_ = true;
    }
    return cval_row_;
  }

  const Job<T>& j_;
  const T** ptrs_;  // the K row pointers of one Combine
  const T** slot_;  // after them: the ring's rows, by input row modulo K + 1
  T* pad_;
  T* ring_;
  T* cval_row_;
  T* acc_;  // running sums of a box's rows
  T* box_;  // the x box's levels
  int64_t cval_elems_;
  T cval_row_value_ = 0;
  bool have_cval_row_ = false;
  bool stream_ = false;         // this stage's stores are non-temporal (j_.stream, last stage)
  int64_t since_ = -1;          // outputs since the running sums restarted (-1: restart next)
  const T* leaving_ = nullptr;  // the row the next running-sum step subtracts
  // A sum of terms: each term's ring slots, ring rows, row of ghost values, next row to fill.
  struct TermState {
    const T** slot;
    T* ring;
    const T* cval;
    int64_t next;
  };
  std::vector<TermState> lr_;
};

template <class T>
Pass<T> make_pass(const std::vector<double>& w, int R, Boundary mode, bool rows, bool direct,
                  bool no_box = false) {
  Pass<T> p;
  p.R = R;
  p.mode = mode;
  p.w.assign(w.begin(), w.end());
  p.on = !(R == 0 && w[0] == 1.0);
  p.sym = true;
  for (int i = 0; i < R; ++i) p.sym = p.sym && p.w[i] == p.w[2 * R - i];
  // Under direct sums only the x form by doubling (a tree sum of each output's taps) may run;
  // running sums are not a plain sum of the taps. Otherwise x takes running sums of vectors.
  const auto box = detail::box_run(w);
  if (p.on && box && box->k >= (rows ? kMinBoxTapsRows : kMinBoxTapsX) && !(rows && direct) &&
      !no_box) {
    p.box = true;
    p.blo = box->lo;
    p.bk = box->k;
    if (box->c != 1.0) p.scale = {Scale<T>::mul, T(box->c)};
    p.restart = rows || !direct ? detail::running_restart(box->k) : 0;
  }
  return p;
}

inline double sum(const std::vector<double>& w) {
  double s = 0;
  for (double v : w) s += v;
  return s;
}

template <class T>
void block(Job<T>& j, const Problem& p, double taps);

// A job's arrays and extents, which every job sets the same way.
template <class T>
Job<T> job_of(const Problem& p, const void* in, void* out) {
  Job<T> j;
  j.in = static_cast<const T*>(in);
  j.out = static_cast<T*>(out);
  const Dims3 n = p.dims3();
  j.batch = p.batch();
  j.nz = n.z, j.ny = n.y, j.nx = n.x;
  return j;
}

template <class T>
Job<T> make_job(const Problem& p, const detail::AxisWindows& win, const void* in, void* out) {
  Job<T> j = job_of<T>(p, in, out);
  const int rank = p.rank();
  const Boundary mz = rank == 3 ? p.mode(0) : Boundary::constant;
  const Boundary my = rank >= 2 ? p.mode(rank - 2) : Boundary::constant;
  const bool direct = p.direct_sums();
  // A box (every window whole multiples of a step, the steps' product 1/d): every pass sums with
  // the whole numbers, and the last one divides by d (or multiplies by 1/d, exact for d a power
  // of two), so that a mean of a constant region is the constant exactly, as SciPy's (it sums,
  // then divides once), boxes folded by the modes (their windows' ratios such as 1/3) too.
  std::array<std::vector<double>, 3> w = win.w;
  double spread = 1, step = 1;  // the windows' largest over smallest magnitudes, multiplied
  for (const auto& v : w) {
    double least = 0, most = 0;
    for (double x : v)
      if (x != 0) {
        least = least == 0 ? std::fabs(x) : std::min(least, std::fabs(x));
        most = std::max(most, std::fabs(x));
      }
    if (least > 0) spread *= most / least;
  }
  for (auto& v : w) {
    if (v.size() == 1 && v[0] == 1.0) continue;  // no pass
    const auto m = detail::multiples(v, detail::fold_slack(spread));
    if (!m) {
      step = 0;
      break;
    }
    v = m->m;
    step *= m->step;
  }
  const double divisor = detail::whole_reciprocal(
      step, per_type<T>(detail::kWholeReciprocalTolF32, detail::kWholeReciprocalTol));
  if (divisor == 0) w = win.w;
  j.z = make_pass<T>(w[0], win.radius[0], mz, true, direct);
  j.y = make_pass<T>(w[1], win.radius[1], my, true, direct);
  j.x = make_pass<T>(w[2], win.radius[2], p.mode(rank - 1), false, direct);
  if (p.footprint() == Footprint::every) {
    // SciPy's 1-D rule multiplies every weight, zeros too (0 times an infinity is NaN): a box
    // form sums only its run, so a zero weight of the filter beside the run takes the plain
    // sum instead (the window's zeros beyond the filter's extent are no weights of it).
    const Dims3 k = p.filter_dims3(), a = p.anchor3();
    const std::int64_t ext[3] = {k.z, k.y, k.x}, anc[3] = {a.z, a.y, a.x};
    Pass<T>* passes[3] = {&j.z, &j.y, &j.x};
    for (int i = 0; i < 3; ++i) {
      Pass<T>& q = *passes[i];
      const std::int64_t first = win.radius[std::size_t(i)] - anc[i];
      if (q.box && (q.blo > first || q.blo + q.bk < first + ext[i])) {
        q.box = false;
        q.scale = {};  // the weights w hold the box's weight
      }
    }
  }
  if (divisor > 0) {
    Pass<T>& last = j.z.on ? j.z : j.y.on ? j.y : j.x;
    if (last.scale.kind != Scale<T>::none) last.box = false;  // whole weights other than 1
    const bool power = std::exp2(std::round(std::log2(divisor))) == divisor;
    last.scale = {power ? Scale<T>::mul : Scale<T>::div, T(power ? 1 / divisor : divisor)};
    if (divisor == 1) last.scale = {};
  }
  j.cval = T(p.cval());
  j.cval_x = T(p.cval() * sum(w[2]));
  j.cval_xy = T(p.cval() * sum(w[2]) * sum(w[1]));
  block(j, p, double(win.taps));
  return j;
}

// The blocking of both stages and the team, for a job whose passes (or terms) are set; `taps`:
// the multiply-adds per output.
template <class T>
void block(Job<T>& j, const Problem& p, double taps) {
  j.stream = double(p.elements()) * sizeof(T) >= kStreamBytes;

  // x-y stage: chunks of columns whose ring of K_y rows fits kRingBytes (whole rows where they
  // fit), strips of rows long enough that the 2 R_y rows filtered twice at strip ends stay a
  // small part, short enough for ~8 units per thread.
  const double work = double(p.elements()) * taps;
  j.threads = work < kSerialWork ? 1 : omp_get_max_threads();
  const int64_t lanes = 64 / int64_t(sizeof(T));
  int Ry = j.y.R;  // the largest y radius
  for (const auto& t : j.terms) Ry = std::max(Ry, t.y.R);
  const bool y_on = j.lr() ? Ry > 0 : j.y.on;
  if (j.ring_rows() > 0) {
    const int64_t fit = kRingBytes / (j.ring_rows() * int64_t(sizeof(T)));
    j.cw = std::max<int64_t>(4 * lanes, fit / lanes * lanes);
  } else {
    j.cw = 16384;
  }
  j.cw = std::min(j.cw, j.nx);
  j.nchunks = (j.nx + j.cw - 1) / j.cw;
  // Chunks of equal width (a multiple of a cache line), not full ones and a sliver.
  if (j.nchunks > 1) {
    j.cw = std::min(j.cw, ((j.nx + j.nchunks - 1) / j.nchunks + lanes - 1) / lanes * lanes);
    j.nchunks = (j.nx + j.cw - 1) / j.cw;
  }
  const int64_t planes = j.batch * j.nz;
  int64_t strip = y_on ? std::max<int64_t>(64, 8 * int64_t(Ry)) : 16;
  const int64_t want = 8 * int64_t(j.threads);
  while (strip > std::max<int64_t>(16, 2 * int64_t(Ry)) &&
         planes * j.nchunks * ((j.ny + strip - 1) / strip) < want)
    strip /= 2;
  j.strip = std::min(strip, j.ny);
  j.nstrips = (j.ny + j.strip - 1) / j.strip;
  j.xy_units = j.xy() || j.lr() ? planes * j.nchunks * j.nstrips : 0;

  // z stage: chunks of a plane whose ring (K_z + 1 rows and R_z tail rows) fits kRingBytes.
  const int64_t P = j.ny * j.nx;
  if (j.z.on) {
    const int64_t fit = kRingBytes / (int64_t(Job<T>::slots(j.z) + j.z.R) * int64_t(sizeof(T)));
    j.zcw = std::max<int64_t>(4 * lanes, fit / lanes * lanes);
    j.zcw = std::min(j.zcw, P);
    while (j.zcw > 4 * lanes && j.batch * ((P + j.zcw - 1) / j.zcw) < want)
      j.zcw = std::max<int64_t>(4 * lanes, j.zcw / 2 / lanes * lanes);
    j.zcw = std::min(j.zcw, P);
    j.zchunks = (P + j.zcw - 1) / j.zcw;
    j.z_units = j.batch * j.zchunks;
  }
}

// Runs units [0, count) of one stage over the team; `f(unit, worker)`. Progress: `before` +
// `share` * the fraction done, from the calling thread.
template <class T, class F>
void run_stage(const Job<T>& j, int64_t count, T* mem, int64_t stride, const T** ptrs,
               int64_t ptr_stride, const std::function<void(double)>& progress, double before,
               double share, F f) {
  if (count == 0) return;
  const int threads = int(std::min<int64_t>(j.threads, count));
  if (threads <= 1) {
    Worker<T> w(j, mem, ptrs);
    for (int64_t u = 0; u < count; ++u) {
      f(w, u);
      if (progress) progress(before + share * double(u + 1) / double(count));
    }
    return;
  }
  std::atomic<int64_t> done{0};
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Worker<T> w(j, mem + t * stride, ptrs + t * ptr_stride);
#pragma omp for schedule(dynamic, 1)
    for (int64_t u = 0; u < count; ++u) {
      f(w, u);
      const int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (progress && t == 0) progress(before + share * double(d) / double(count));
    }
  }
}

// Runs job j of p: the x-y stage, then the z stage. `who` names the strategy in errors.
template <class T>
void run_job(const Job<T>& j, const Problem& p, const char* who) {
  const Scratch<T> s = Scratch<T>::sizes(j);
  const int64_t line = 64 / int64_t(sizeof(T));
  const int64_t stride = (s.elems() + line - 1) / line * line;
  const int threads = std::max(1, j.threads);
  auto mem = hwy::AllocateAligned<T>(size_t(stride * threads));
  if (!mem)
    throw Error(std::string(who) + ": cannot allocate " +
                std::to_string(stride * threads * sizeof(T)) + " bytes of row buffers");
  std::vector<const T*> ptrs(size_t(s.ptrs * threads));
  const auto& progress = p.progress();
  const double xy_share = j.z.on && j.xy_units > 0 ? 0.5 : 1.0;
  const bool lr = j.lr();
  run_stage(j, j.xy_units, mem.get(), stride, ptrs.data(), s.ptrs, progress, 0.0, xy_share,
            [lr](Worker<T>& w, int64_t u) {
              if (lr)
                w.lr_xy_unit(u);
              else
                w.xy_unit(u);
            });
  run_stage(j, j.z_units, mem.get(), stride, ptrs.data(), s.ptrs, progress, 1.0 - xy_share,
            xy_share < 1 ? 0.5 : 1.0, [](Worker<T>& w, int64_t u) { w.z_unit(u); });
  if (progress) progress(1.0);
}

}  // namespace halo::cpu::sep
