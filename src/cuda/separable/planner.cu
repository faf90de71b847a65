// The planner of the separable passes: make_plan (a problem's passes, their kernels and
// geometry), run_pass (a pass to its kernel family's launch), and the plan in words.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cuda/separable/plan.cuh"
#include "halo/strategy.hpp"

namespace halo::cuda::sep {
namespace {

// Whether tiles may come by the tensor memory accelerator: a device with tensor maps, and no
// tuning asking for the register prefetch (FastTuning::feed = prefetch keeps the register-fed
// kernels, for comparisons and their tests).
bool tma_tiles_wanted(const Problem& p) {
  if (p.tuning().feed.value_or(FastFeed::tma) == FastFeed::prefetch) return false;
  return prim::planning_facts().tensor_maps();
}

}  // namespace

// Whether a fused pass of radius r (float32) takes tiles by the tensor memory accelerator where
// its rows are 16-byte aligned.
bool sep_tma_wanted(int r, const Problem& p) {
  return r >= kSepTmaLow && r <= kSepTmaTop && tma_tiles_wanted(p);
}

// Whether a volume of radius r takes vol_tma_kernel where its rows are 16-byte aligned (else
// vol_kernel).
bool vol_tma_wanted(int r, const Problem& p) {
  return (r == kVolTop || r == kVolTmaTop) && tma_tiles_wanted(p);
}

namespace {

BoxUnits box_units(detail::AxisWindows& win) {
  BoxUnits u;
  double kb = 1, cb = 1;
  for (int a = 0; a < 3; ++a) {
    if (win.radius[a] == 0) continue;
    const auto b = detail::box_run(win.w[a]);
    if (!b) continue;
    u.k[a] = b->k;
    u.c[a] = b->c;
    kb *= double(b->k);
    cb *= b->c;
    for (int j = 0; j < b->k; ++j) win.w[a][std::size_t(b->lo + j)] = 1.0;
  }
  u.divide = kb > 1 && std::fabs(cb * kb - 1.0) <= 8 * std::numeric_limits<double>::epsilon();
  return u;
}

}  // namespace

// Chunks of `chunk` rows (rounded up to whole steps of `rows`, at most the pass's rows).
void set_chunk(SepGeom& g, i64 rows, i64 chunk) {
  g.chunk = std::min(ceil_div64(chunk, rows), ceil_div64(g.rows, rows)) * rows;
  g.chunks = ceil_div64(g.rows, g.chunk);
  g.work = g.strips * g.chunks * g.items;
}

namespace {

// Chunks of a march: work items of a strip by a chunk of rows, many more than the blocks that
// fit the device (persistent blocks take them in turn, so the last wave is short), each long
// enough that refilling the ring (2 PY rows filtered along x again) costs at most 1/8 of it.
void size_march(SepGeom& g, int ry, bool box = false) {
  set_chunk(g, step_rows(ry, box), std::max<i64>(64, 16 * pad_y(ry, box)));
}

// The chunks of a fused pass fed by tensor maps (SepPass::tma_chunk), balanced over its `blocks`
// blocks, which take the work items in turn: of the chunk counts up to 16 waves of items, the
// one whose busiest block has the least to march. An item costs its rows plus half its 2 PY
// halo rows (loaded and filtered along x, but no outputs) plus a step (its first copy's latency,
// measured as about that: one chunk of 4096 rows a block ran a 16384^2 Gaussian of sigma 2 4%
// faster than ten of 400, which the rows alone rate equal), and a twentieth more in the strips at
// an x face under other modes than zero ghosts (their face cells copied within each step's
// stage; under reflect on 16384^2, chunks of 2048 rows measured faster than 1024 or 4096 at
// radii 16 and 32, which a tenth more rated worse), which the face-first work order
// (SepGeom::face_first) hands to the blocks with an item fewer where there are any. With chunks
// of 16 PY rows, the last wave of items left blocks idle (sigma 4: 4096 chunks of 256 rows on
// 264 blocks, 15.5 waves run as 16) and every 256 rows re-read 32 rows of halo. The
// register-fed kernels keep chunks of 16 PY rows (longer chunks measured slower there:
// docs/notes/tuning.md).
void balance_march(SepGeom& g, int ry, bool box, i64 blocks) {
  const i64 rows = step_rows(ry, box), halo = pad_y(ry, box);
  const i64 steps = ceil_div64(g.rows, rows);
  const bool faces = !zero_ghosts(g.xmode, g.cval);
  std::vector<double> load;  // per block, its items, face items weighing 1.05
  double best = -1;
  i64 best_chunk = g.chunk;
  for (i64 c = 1; c <= steps; ++c) {
    const i64 chunk = ceil_div64(ceil_div64(g.rows, c), rows) * rows;
    const i64 chunks = ceil_div64(g.rows, chunk);
    const i64 work = g.strips * chunks * g.items, waves = ceil_div64(work, blocks);
    if (c > 1 && waves > 16) break;
    double most = double(waves);  // the busiest block's load
    if (faces) {
      // The face-first order (launch_pass): position w takes item (w - work mod G) mod work;
      // else strips fastest.
      const i64 grid = std::min(blocks, work), start = work % grid;
      load.assign(std::size_t(grid), 0.0);
      for (i64 b = 0; b < grid; ++b) load[std::size_t(b)] = double(ceil_div64(work - b, grid));
      const i64 nf = g.strips >= 2 ? 2 : 1, nface = chunks * g.items * nf;
      for (i64 q = 0; q < nface; ++q) {
        const i64 w = face_first_compiled(ry) ? (start + q) % work
                                              : q / nf * g.strips + (q % nf ? g.strips - 1 : 0);
        load[std::size_t(w % grid)] += 0.05;
      }
      most = *std::max_element(load.begin(), load.end());
    }
    const double cost = double(chunk + halo + rows) * most;
    if (best < 0 || cost < best) {
      best = cost;
      best_chunk = chunk;
    }
  }
  set_chunk(g, rows, best_chunk);
}

SepGeom plain_geom(i64 nx, i64 rows, i64 row_stride, i64 items, i64 item_stride) {
  SepGeom g{};
  g.nx = nx;
  g.rows = rows;
  g.row_stride = row_stride;
  g.items = items;
  g.item_stride = item_stride;
  g.strips = ceil_div64(nx, kSepCols);
  return g;
}

// Box factors of at least this many taps take running sums (detail::box_run).
constexpr int kSepBoxTaps = 6;
// Sets a pass's box fields from window w where it is a box of kSepBoxTaps or more; returns
// whether it is.
int box_fields(const std::vector<double>& w, int& lo, int& k) {
  const auto box = detail::box_run(w);
  if (!box || box->k < kSepBoxTaps) return 0;
  lo = box->lo;
  k = box->k;
  return 1;
}

// Whether a pass of the fused kernels runs their box instantiation: running sums (float32), or
// a box factor's scale (SepPass::box_scale).
bool box_kernel(const SepPass& s) { return s.g.xbox || s.g.ybox || s.box_scale; }

}  // namespace

// Whether fused x-y pass s takes tiles by tensor maps where its rows are 16-byte aligned
// (launch_pass's TMA feed).
bool sep_pass_tma(const SepPass& s, const Problem& p) {
  return p.dtype() == DType::f32 && s.rx > 0 && s.rx == s.ry && !s.vol &&
         sep_tma_wanted(s.rx, p);
}

namespace {

// Empty where every pass's kernel fits the current device's shared memory per block, else why.
std::string shared_memory_why_not(const SepPlan& plan, DType t) {
  const std::size_t limit = current_device_limits().shared_per_block_optin;
  for (const SepPass& s : plan.passes) {
    const std::size_t b = s.vol             ? vol_shared_bytes(s.rx)
                          : s.colk          ? col_shared_bytes(s.colk)
                          : s.lng           ? long_shared_bytes(long_taps_of(s, plan.win))
                          : s.lrow          ? long_row_shared_bytes(long_taps_of(s, plan.win))
                          : t == DType::f32 ? sep_shared_bytes<float>(s.rx, s.ry, box_kernel(s))
                                            : sep_shared_bytes<double>(s.rx, s.ry, box_kernel(s));
    if (b > limit)
      return "needs " + std::to_string(b) + " B of shared memory per block, the device has " +
             std::to_string(limit);
  }
  return "";
}

}  // namespace

// The passes that run the separable windows `win` over p's array. A `term` of a sum (the
// `lowrank` strategy) keeps every pass a plain sum of its taps (no box forms) and takes no
// one-pass volume kernel: its last pass adds into the output, which only separable_kernel does.
SepPlan make_plan(const Problem& p, const detail::AxisWindows& win_in, bool term) {
  SepPlan plan;
  if (p.dtype() != DType::f32 && p.dtype() != DType::f64) {
    plan.why_not = "compiled for f32 and f64 only";
    return plan;
  }
  plan.win = win_in;
  const detail::AxisWindows* win = &plan.win;
  // One tap: no axis to pass along (a low-rank term can be one scaled tap, its radii all 0).
  if (win->long_axes == 0 || win->radius == std::array<int, 3>{0, 0, 0}) {
    plan.why_not = "a filter of one tap has nothing to separate";
    return plan;
  }
  if (!term) plan.units = box_units(plan.win);
  if (p.direct_sums() && win->long_axes > 1) {
    plan.why_not = "direct sums required: passes sum the taps in another form";
    return plan;
  }
  const std::array<int, 3> R = win->radius;
  const bool x_alone = R[0] == 0 && R[1] == 0;
  // Factors along y or z longer than the ring holds (f32): boxes as box columns, others as
  // long columns.
  std::array<std::optional<detail::BoxRun>, 3> col;
  std::array<bool, 3> lng{};
  for (int a = 0; a < 2; ++a)
    if (p.dtype() == DType::f32 && sep_radius(p.dtype(), R[a]) < 0) {
      if (!p.direct_sums() && !term) col[a] = detail::box_run(win->w[a]);
      if (col[a] && (col[a]->k > kColMaxTaps || col[a]->k < kSepBoxTaps)) col[a].reset();
      lng[a] = !col[a] && 2 * R[a] + 1 <= kLongMaxTaps;
    }
  const auto beyond_ring = [&](int a) { return col[a] || lng[a]; };
  // A y factor in columns after a pass along x: x may take the row radii.
  const bool x_row = x_alone || (beyond_ring(1) && R[0] == 0);
  const Dims3 d = p.dims3();
  // x beyond the radii of the strip kernel (f32; 64, or 128 in a pass along x alone) on rows
  // of kLongRowMin or more: long rows, a pass of its own.
  const bool xl = p.dtype() == DType::f32 &&
                  (x_row ? sep_row_radius(p.dtype(), R[2]) : sep_radius(p.dtype(), R[2])) < 0 &&
                  2 * R[2] + 1 <= kLongMaxTaps && d.x >= kLongRowMin;
  for (int a = 0; a < 3; ++a)
    if (!beyond_ring(a) && !(a == 2 && xl) &&
        (a == 2 && x_row ? sep_row_radius(p.dtype(), R[a]) : sep_radius(p.dtype(), R[a])) < 0) {
      plan.why_not = "compiled for factors of radius up to " + std::to_string(sep_top(p.dtype())) +
                     " in " + to_string(p.dtype()) +
                     (p.dtype() == DType::f32 ? " (" + std::to_string(kLongMaxTaps / 2) +
                                                    " along y or z, and along x on rows of " +
                                                    std::to_string(kLongRowMin) +
                                                    " or more; 128 along x alone)"
                                              : "") +
                     "; this filter needs " + std::to_string(R[a]);
      return plan;
    }
  const i64 batch = p.batch(), plane = d.x * d.y, vol = plane * d.z;
  const int rank = p.rank();
  const auto mode_z = rank == 3 ? int(p.mode(0)) : 0;
  const auto mode_y = rank >= 2 ? int(p.mode(rank - 2)) : 0;
  const auto mode_x = int(p.mode(rank - 1));
  const auto box_cols = [&](SepPass& s, const detail::BoxRun& b, int a) {
    s.colk = b.k;
    s.cola = b.lo - R[a];
  };
  // x, y and z in one pass: float32 factors within vol_kernel's radii (padded to the largest),
  // or up to kVolTmaTop (padded to it) where the tensor-map tiles take them, on volumes at least
  // 4 halos deep (the two passes beyond: each chunk re-filters its halo planes along x and y).
  // Radii below 4 are padded to 4 there too: the tensor-map tiles are memory-bound at 4.
  int rv = sep_radius(DType::f32, std::max({R[0], R[1], R[2]}));
  const bool tma_rows = d.x % 4 == 0 && vol_tma_wanted(kVolTop, p);
  if (rv > kVolTop && rv <= kVolTmaTop)
    rv = tma_rows ? kVolTmaTop : -1;
  else if (rv > 0 && rv < kVolTop && tma_rows && d.z >= 4 * vol_pad_z(kVolTop))
    rv = kVolTop;
  if (!term && rank == 3 && p.dtype() == DType::f32 && R[0] > 0 && (R[1] > 0 || R[2] > 0) &&
      !xl && !beyond_ring(0) && !beyond_ring(1) && rv > 0 &&
      (rv <= kVolTop || rv == kVolTmaTop) && d.x < (i64(1) << 26) && d.z >= 4 * vol_pad_z(rv)) {
    SepPass s;
    s.vol = true;
    s.rx = s.ry = rv;
    VolGeom& g = s.vg;
    g.nx = d.x;
    g.ny = d.y;
    g.nz = d.z;
    g.items = batch;
    g.tiles_x = ceil_div64(d.x, kVolTx);
    g.tiles_y = ceil_div64(d.y, kVolTy);
    g.xmode = mode_x;
    g.ymode = mode_y;
    g.zmode = mode_z;
    g.cval = float(p.cval());
    g.scale = plan.units.scale({0, 1, 2});
    // Every factor a box of 2 rv + 1 taps (box_units made their taps 1) and the tensor-map
    // kernel wanted: running sums in vol_tma_kernel's BOX form (Summation::running; the
    // register-fed kernel, where the rows turn out unaligned, takes FMAs within that bound).
    g.box = vol_tma_wanted(rv, p) ? 1 : 0;
    for (int a = 0; a < 3; ++a) {
      const std::vector<double>& w = win->w[std::size_t(a)];
      if (w.size() != std::size_t(2 * rv + 1) || plan.units.k[std::size_t(a)] != 2 * rv + 1 ||
          std::any_of(w.begin(), w.end(), [](double t) { return t != 1.0; }))
        g.box = 0;
    }
    plan.passes.push_back(s);
    plan.why_not = shared_memory_why_not(plan, p.dtype());
    return plan;
  }
  // The x and y factors' sums: a ghost row or plane seen through them.
  const double sx = plan.units.sum(*win, 2), sy = plan.units.sum(*win, 1);
  // Pass 0: x in long rows.
  if (xl) {
    SepPass s;
    s.lrow = true;
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.xmode = mode_x;
    plan.passes.push_back(s);
  }
  // Pass 1: x and y on every plane (z = 0 in 2-D, 1-D rows); with y in columns, x alone then y;
  // with x in long rows, y alone.
  const int rx = xl ? 0 : x_row ? sep_row_radius(p.dtype(), R[2]) : sep_radius(p.dtype(), R[2]);
  const int ry = beyond_ring(1) ? 0 : sep_radius(p.dtype(), R[1]);
  if (rx > 0 || ry > 0) {
    SepPass s;
    if (!plan.passes.empty()) s.cval_scale = sx;
    if (rx > 0 && ry > 0)
      s.rx = s.ry = std::max(rx, ry);  // fused kernels take one radius
    else {
      s.rx = rx;
      s.ry = ry;
    }
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.xmode = mode_x;
    s.g.ymode = mode_y;
    if (s.ry == 0) {
      s.g.wide = d.x > kSepWide;
      s.g.work = s.g.wide ? batch * d.z * d.y * ceil_div64(s.g.strips, 8)
                          : ceil_div64(batch * d.z * d.y, kSepRows) * s.g.strips;
      s.g.items = batch * d.z;
    } else {
      size_march(s.g, s.ry);
    }
    plan.passes.push_back(s);
  }
  if (beyond_ring(1)) {
    SepPass s;
    s.g = plain_geom(d.x, d.y, d.x, batch * d.z, plane);
    s.g.ymode = mode_y;
    if (col[1])
      box_cols(s, *col[1], 1);
    else
      s.lng = true;
    if (!plan.passes.empty()) s.cval_scale = sx;
    plan.passes.push_back(s);
  }
  // Pass 2: z, a plane per "row".
  const int rz = beyond_ring(0) ? 0 : sep_radius(p.dtype(), R[0]);
  if (rz > 0 || beyond_ring(0)) {
    SepPass s;
    s.rx = 0;
    s.ry = rz;
    s.wy = 0;
    s.g = plain_geom(plane, d.z, plane, batch, vol);
    s.g.ymode = mode_z;
    s.g.xmode = int(Boundary::constant);  // no x pass: never read
    if (col[0])
      box_cols(s, *col[0], 0);
    else if (lng[0])
      s.lng = true;
    else
      size_march(s.g, rz);
    if (!plan.passes.empty()) s.cval_scale = sx * sy;
    plan.passes.push_back(s);
  }
  if (plan.passes.size() > 2) {
    plan.why_not = "factors of radius " + std::to_string(R[2]) + " (x), " + std::to_string(R[1]) +
                   " (y), " + std::to_string(R[0]) +
                   " (z): three passes over DRAM, not compiled";
    return plan;
  }
  for (SepPass& s : plan.passes) {
    s.g.cval = p.cval() * s.cval_scale;
    std::vector<int> axes;  // the axes whose factors the pass applies
    if (s.lrow) {
      axes = {2};
    } else if (s.colk || s.lng) {
      axes = {s.wy};
    } else {
      if (s.rx > 0) axes.push_back(2);
      if (s.ry > 0) axes.push_back(s.wy);
    }
    s.g.scale = plan.units.scale(axes);
  }
  // Box factors (f32): running sums in place of the FMAs (Summation::running), where they
  // measured faster on an H100 (docs/notes/tuning.md, "Box factors by running sums"): down y and
  // z always, along x in passes along x alone, not in the fused kernel (on the 2-D box 31 the x
  // form's scalar shared-memory reads cost more than the FMAs it saves).
  if (p.dtype() == DType::f32 && !p.direct_sums() && !term) {
    for (SepPass& s : plan.passes) {
      if (s.rx > 0 && s.ry == 0) s.g.xbox = box_fields(win->w[2], s.g.xlo, s.g.xk);
      if (s.ry > 0) s.g.ybox = box_fields(win->w[s.wy], s.g.ylo, s.g.yk);
    }
  }
  for (SepPass& s : plan.passes)
    if (!s.vol && (s.rx > 0 || s.ry > 0)) {
      s.box_scale = s.g.scale.on != 0;
      if (s.ry > 0 && box_kernel(s)) size_march(s.g, s.ry, true);  // the box kernel's steps
    }
  // Where the fused passes take tiles by tensor maps: chunks balanced over their blocks.
  for (SepPass& s : plan.passes)
    if (sep_pass_tma(s, p)) {
      SepGeom g = s.g;
      balance_march(g, s.ry, box_kernel(s),
                    i64(kSepTmaBlocks) * prim::planning_facts().multiprocessors);
      s.tma_chunk = g.chunk;
    }
  plan.why_not = shared_memory_why_not(plan, p.dtype());
  return plan;
}

SepPlan make_plan(const Problem& p) {
  const auto& win = detail::separable_windows(p);
  if (!win) {
    SepPlan plan;
    plan.why_not = "the filter is not an outer product of 1-D factors (rank 1)";
    return plan;
  }
  return make_plan(p, *win, false);
}

// Whether a pass runs as box rows (box_row_kernel): a box factor along x alone, rows long
// enough that segments of 4096 outputs are mostly full.
bool box_rows(const SepPass& s) {
  return s.rx > 0 && s.ry == 0 && s.g.xbox && s.g.nx >= kBoxRowMin;
}

// `note`: NonFiniteNote::of the run's buffers where the pass writes the final output (every
// kernel then notes a non-finite output it stores), a null one where it writes scratch.
template <class T>
void run_pass(const T* in, T* out, const SepPass& s, const detail::AxisWindows& win,
              const Problem& p, cudaStream_t stream, int sms, NonFiniteNote note) {
  // Box rows, box columns and running sums are float32's (float64 boxes take FMAs, scaled in
  // the fused kernels' box instantiation).
  bool ok;
  if constexpr (std::is_same_v<T, float>) {
    if (s.vol) return launch_vol(in, out, s, win, p, stream, sms, note);
    if (s.colk) return launch_box_cols(in, out, s, p, stream, sms, note);
    if (s.lng) return launch_long_cols(in, out, s, win, p, stream, sms, note);
    if (s.lrow) return launch_long_rows(in, out, s, win, p, stream, sms, note);
    if (box_rows(s)) return launch_box_rows(in, out, s, win, p, stream, sms, note);
  }
  ok = box_kernel(s) ? run_pass_as<T, true>(in, out, s, win, p, stream, sms, note)
                     : run_pass_as<T, false>(in, out, s, win, p, stream, sms, note);
  if (!ok)
    throw Error("separable: no kernel compiled for radii " + std::to_string(s.rx) + ", " +
                std::to_string(s.ry));
}

#define HALO_CASE(T)                                                                   \
  template void run_pass<T>(const T*, T*, const SepPass&, const detail::AxisWindows&, \
                            const Problem&, cudaStream_t, int, NonFiniteNote);
HALO_CASE(float)
HALO_CASE(double)
#undef HALO_CASE

// The taps a pass runs per output: its compiled windows' (zeros included), a box's, a long
// pass's.
double pass_taps(const SepPass& s, const detail::AxisWindows& win) {
  return (s.vol ? 2 * s.rx + 1 : 0) + (s.rx ? 2 * s.rx + 1 : 0) + (s.ry ? 2 * s.ry + 1 : 0) +
         s.colk + (s.lng || s.lrow ? long_taps_of(s, win) : 0);
}

namespace {

// How a fused pass cuts its rows into chunks (balance_march).
std::string march_text(const SepPass& q, const Problem& p) {
  if (const auto c = p.tuning().chunk) return "chunks of " + std::to_string(*c) + " rows";
  const std::string fixed = "chunks of " + std::to_string(q.g.chunk) + " rows";
  if (q.tma_chunk == 0) return fixed;
  return "chunks of " + std::to_string(q.tma_chunk) + " rows where the tiles come by tensor " +
         "maps (balanced over " + std::to_string(kSepTmaBlocks) + " blocks per SM), else " + fixed;
}

}  // namespace

// What a plan runs, in words (`halo apply -v`, `halo bench --explain`).
std::string describe_factors(const Problem& p, const detail::AxisWindows& win) {
  std::string s = "factors of radius " + std::to_string(win.radius[2]);
  if (p.rank() >= 2) s += " (x), " + std::to_string(win.radius[1]) + " (y)";
  if (p.rank() == 3) s += ", " + std::to_string(win.radius[0]) + " (z)";
  return s;
}
std::string describe_passes(const SepPlan& plan, const Problem& p) {
  std::string s;
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    const SepPass& q = plan.passes[i];
    if (i) s += ", then ";
    if (q.g.xbox || q.g.ybox)
      s += std::string("box factors by running sums (") + (q.g.xbox ? "x" : "") +
           (q.g.xbox && q.g.ybox ? ", " : "") + (q.g.ybox ? (q.rx ? "y" : "rows") : "") +
           ") ";
    if (q.vol) {
      const std::string prefetch =
          "tiles of " + std::to_string(kVolTx) + "x" + std::to_string(kVolTy) +
          " outputs marching along z in chunks, each plane's tile loaded through registers and "
          "filtered along x and y into a ring of " +
          std::to_string(vol_slots(q.rx)) + " planes, " + std::to_string(kVolSteps) +
          " output planes per step from it";
      s += "x, y and z fused in one pass (compiled radius " + std::to_string(q.rx) + ", ";
      if (vol_tma_wanted(q.rx, p))
        s += "where the rows are 16-byte aligned tiles of " + std::to_string(kVolTx) + "x" +
             std::to_string(vt_ty(q.rx)) +
             " outputs marching along z in chunks, each plane's tile copied by the tensor "
             "memory accelerator (" + std::to_string(kVtStages - 1) +
             " planes ahead), " +
             (q.vg.box ? std::string("box factors by running sums along x, y and z (the last ") +
                             std::to_string(2 * q.rx + 1) + " planes kept)"
                       : std::string("filtered along x and y, and added into a queue of ") +
                             std::to_string(2 * q.rx + 1) + " partial sums per output column "
                             "along z") +
             "; else " + prefetch + ")";
      else
        s += prefetch + ")";
    }
    else if (q.rx && q.ry)
      s += "x and y fused (compiled radius " + std::to_string(q.rx) +
           ", strips of 256 columns, " + march_text(q, p) + ", a ring of " +
           std::to_string(ring_rows(q.ry, box_kernel(q))) + " filtered rows; " +
           (sep_pass_tma(q, p)
                ? "where the rows are 16-byte aligned, each step's tile copied by the tensor "
                  "memory accelerator, the next in flight, else loaded through registers)"
                : std::string("each step's tile loaded through registers, the next in flight)"));
    else if (box_rows(q))
      s += "x alone (segments of " + std::to_string(kBoxSeg) + " outputs of a row, each " +
           "thread's first window from sums of " + std::to_string(kBoxRun) +
           " inputs, then slid over its " + std::to_string(kBoxRun) + " outputs)";
    else if (q.rx)
      s += "x alone (compiled radius " + std::to_string(q.rx) + ", steps of " +
           (q.g.wide ? "8 strips of a row)" : "8 rows of a strip)");
    else if (q.colk)
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (a box of " + std::to_string(q.colk) +
           " taps in box columns: a thread per column, runs of " + std::to_string(kColRun) +
           " outputs from sums of " + std::to_string(kColRun) + " rows)";
    else if (q.lrow)
      s += "x alone (radius " + std::to_string(plan.win.radius[2]) +
           " in long rows: segments of " + std::to_string(kLongRowSeg) +
           " outputs of a row, 16 per thread from a shared-memory tile)";
    else if (q.lng)
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (radius " +
           std::to_string(plan.win.radius[q.wy]) +
           " in long columns: warps of 16 outputs per column from a ring of " +
           std::to_string(long_batches(long_taps_of(q, plan.win)) * kLongStep) +
           " rows of strips of 32 columns)";
    else
      s += std::string(q.wy == 0 ? "z" : "y") + " alone (compiled radius " +
           std::to_string(q.ry) + ", " + march_text(q, p) + ")";
  }
  if (plan.passes.size() > 1) s += "; two passes over DRAM through a scratch array";
  return s;
}

}  // namespace halo::cuda::sep
