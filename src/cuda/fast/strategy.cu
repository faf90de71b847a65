/* strategy: fast — halo's own kernels, beyond the seed notes: register blocking and streaming.
 *
 * 1D: a warp owns 128 consecutive outputs, or a lane 8 or 16 for large halos (fast/kernels_1d.cu). 2D: a
 * warp owns a 128-column strip and streams down a chunk of rows, keeping the 2R+1 output rows in
 * flight in registers (fast/kernels_2d.cu). 3D: the same along z, a warp per (y-row(s), 128-column strip)
 * (fast/kernels_3d.cu). How the rows reach the FFMAs is chosen per rank and radius from measurements
 * (fast/kernels.cuh, Feed): loaded as needed, prefetched into registers up to 4 rows ahead,
 * copied by cp.async into a warp-private shared-memory ring, or (f32, rows of a 16-byte pitch, on
 * sm_90) copied by the tensor memory accelerator, many rows per copy: into a warp-private ring
 * (2D), or into a block-wide ring that the block's 8 warps read together (BlockRing: 1D segments
 * of 2048 outputs, 3D planes of a 128 x 16 tile), the zero ghost cells given by the tensor map's
 * bounds or by the reads at a row's ends. No block-wide barriers (the block ring's slots are
 * handed over by mbarriers); the weights are kernel parameters, so every tap is one FFMA with a
 * constant-bank operand (staged by nvcc through uniform registers), except in the 2D kernels
 * whose columns run in Winograd F(2,3) form (fast/kernels_2d.cu: 2/3 of the FFMAs). A filter is zero-padded into the (2R+1)^d window of the smallest
 * compiled radius R that covers its halo on every axis (even and off-centre filters included);
 * radii beyond the compiled ones are left to the tiled strategies (can_implement says so). The
 * grid is sized from the kernel's measured occupancy, the streamed axis split so that the last
 * wave is full (3D FFMA-bound radii: one wave of equal runs of tile-planes, even_runs()).
 * Every choice above comes from one pure host function, fast_policy() (cuda/fast/policy.hpp), of
 * the problem (its FastTuning included), the device's facts and the arrays' alignment; run(),
 * plan() and summation() read it, and the launchers take it.
 * Every kernel that writes final outputs finishes them as it stores them (Finish, fast/epilogue.cuh):
 * a box filter, run with weights 1, divides each sum once by its taps (exact means of constant
 * regions), and one FMA per output probes for NaN and infinities, noted once per thread
 * (NonFinite::noted: the repair then looks at the outputs only after a run that wrote one).
 */
#include <algorithm>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "cuda/border/border.hpp"
#include "cuda/check.cuh"
#include "cuda/fast/kernels.cuh"
#include "cuda/fast/model.hpp"
#include "cuda/strategies.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda::fast {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Arrays of at most this many outputs (the batch's items together) under a mode, filtered by at
// most this many taps, run in one launch of the border pass's one-thread-per-output kernel
// (whole_pass): each of its threads sums its taps in turn, so at many more taps its GPU time
// exceeds the host time it saves (docs/notes/tuning.md, "Border pass": small arrays).
constexpr std::int64_t kWholeOutputs = 4096;
constexpr std::size_t kWholeTaps = 32;

// How `fast` runs a small array under a mode, where the interior kernel and a border launch per
// axis cost more host time than the work: 1-D and 2-D arrays whose every output the border pass
// recomputes anyway, that pass alone (border); tiny arrays and short filters, one launch of the
// border pass's kernel over the whole array (whole); otherwise the interior kernel (none).
enum class SmallPath { none, border, whole };
SmallPath small_path(const Problem& p) {
  if (p.zero_ghosts()) return SmallPath::none;
  if (p.rank() <= 2 && border_covers_all(p)) return SmallPath::border;
  if (p.elements() <= kWholeOutputs && p.correlation_weights().size() <= kWholeTaps)
    return SmallPath::whole;
  return SmallPath::none;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

class FastStrategy final : public Strategy {
 public:
  std::string name() const override { return "fast"; }
  Backend backend() const override { return Backend::cuda; }
  std::string description() const override {
    return "register-blocked streaming kernels (1D segments, 2D rows, 3D planes), inputs "
           "prefetched into registers or copied into per-warp or block-wide shared-memory rings, "
           "weights as FFMA operands";
  }
  Status can_implement(const Problem& p) const override {
    const int r = int(std::min<std::int64_t>(p.max_radius(), 1 << 30));
    if (compiled_radius(p.rank(), p.dtype(), r) < 0) {
      int top = 0;
      for (int x = 0; x <= 128; ++x)
        if (compiled_radius(p.rank(), p.dtype(), x) == x) top = x;
      return Status::failure("compiled for halos up to " + std::to_string(top) + " in " +
                             std::to_string(p.rank()) + "D " + to_string(p.dtype()) +
                             "; this filter needs " + std::to_string(p.max_radius()));
    }
    return Status::success();
  }
  Estimate estimate(const Problem& p) const override {
    return {modelled_ns(p), "max(moving the arrays and the halo, the window's FMAs)"};
  }
  // What runs on 16-byte aligned arrays (the library's own device copies are), and where it
  // differs, what runs on arrays that are not; a box filter's division.
  std::string plan(const Problem& p) const override {
    const std::int64_t box = can_implement(p).ok ? box_taps_of(p) : 0;
    return box > 0 ? plan_kernels(p) + "; a box filter: weights 1, each sum divided once by its " +
                         std::to_string(box) + " taps as it is stored"
                   : plan_kernels(p);
  }
  // plan() but for the box filter's clause.
  std::string plan_kernels(const Problem& p) const {
    if (can_implement(p).ok) {
      const SmallPath small = small_path(p);
      if (small == SmallPath::border)
        return "the border pass alone under the boundary modes (every output lies within the "
               "filter's reach of an edge along an axis): one launch";
      if (small == SmallPath::whole)
        return "a tiny array under the boundary modes: one launch of the border pass's "
               "one-thread-per-output kernel over the whole array";
    }
    const DeviceFacts dev = planning_facts();
    const FastPolicy pol = fast_policy(p, dev);
    if (pol.radius < 0) return can_implement(p).reason;
    const FastPolicy unaligned = fast_policy(p, dev, Alignment{false, false});
    const int R = pol.radius, K = 2 * R + 1;
    std::string window = std::to_string(K);
    for (int i = 1; i < p.rank(); ++i) window += "x" + std::to_string(K);
    const std::string how = p.rank() == 1   ? plan_1d(pol, unaligned)
                            : p.rank() == 2 ? plan_2d(pol, unaligned)
                                            : plan_3d(pol, unaligned);
    return "halo " + std::to_string(pol.halo) + " -> compiled radius " + std::to_string(R) +
           " (" + window + " window of weights as FFMA operands); " + how +
           (p.zero_ghosts() ? ""
            : p.rank() == 3 && pol.path.feed == Feed::kBlock
                ? "; the block ring applies the boundary modes itself (ghost planes copied from "
                  "the planes they map to, ghost rows set in each slot from the tile, ghost "
                  "columns in the registers of the lanes at a row end (at r = 3 in the slot), "
                  "wrap's far columns copied beside the tile, and under wrap along y the first "
                  "y-tile spanning the seam, its rows copied from both ends), and a border pass "
                  "recomputes the outputs within reach of the edges it leaves (z under a nonzero "
                  "cval, axes shorter than 2r + 1, y under wrap where it is shorter than a tile)"
                : "; then a border pass recomputes the outputs within reach of an edge under the "
                  "boundary modes");
  }
  // On aligned arrays, as plan(): arrays that are not take the direct sums of the feeds without
  // a tensor map, whose rounding the Winograd bound covers too.
  Summation summation(const Problem& p) const override {
    return fast_policy(p, planning_facts()).summation();
  }
  Traffic model(const Problem& p) const override {
    // Each element read from DRAM about once and written once; the FLOPs of the padded window.
    const int R = compiled_radius(p.rank(), p.dtype(),
                                  int(std::min<std::int64_t>(p.max_radius(), 1 << 30)));
    double taps = 1;
    for (int i = 0; i < p.rank(); ++i) taps *= 2 * R + 1;
    return {p.bytes(), 2.0 * taps * double(p.elements())};
  }
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    dispatch_buffers(p.dtype(), b.input, b.output,
                     [&](auto* in, auto* out) { run_typed(p, b, in, out, stream); });
  }
  // Every kernel that writes final outputs (the interior kernels of every rank and feed, the
  // last pass of a split filter, the border pass and its whole-array and small-array uses)
  // probes what it stores and notes a NaN or an infinity (Finish, fast/epilogue.cuh).
  NonFinite nonfinite(const Problem&) const override { return NonFinite::noted; }

 private:
  template <class T>
  void run_typed(const Problem& p, const Buffers& b, const T* in, T* out, void* stream) const {
    const Status st = can_implement(p);
    if (!st.ok) throw Error("fast: " + st.reason);
    // Small arrays under a mode (small_path), before the kernels' policy is worked out.
    const SmallPath small = small_path(p);
    if (small == SmallPath::border) {
      border_pass(p, b, stream);
      return;
    }
    if (small == SmallPath::whole && whole_pass(p, b, stream)) return;
    const FastPolicy pol =
        fast_policy(p, current_device_facts(), Alignment{aligned16(in), aligned16(out)});
    if (pol.radius < 0) throw Error("fast: " + can_implement(p).reason);
    std::vector<double> win = detail::centred_window(p, pol.radius);
    // A box filter runs with weights 1, its sums divided by its taps as they are stored.
    const std::int64_t box = box_taps_of(p);
    if (box > 0)
      for (double& w : win) w = w != 0 ? 1.0 : 0.0;
    const Dims3 d = p.dims3();
    Work g;
    g.finish = Finish::of(b, box);
    g.batch = p.batch();
    g.nz = d.z;
    g.ny = d.y;
    g.nx = d.x;
    g.vec = pol.vec;
    auto s = static_cast<cudaStream_t>(stream);
    bool ok = false;
    unsigned applied = 0;  // the canonical axes whose modes the kernel applied
    if (p.rank() == 1) {
      ok = launch_1d(in, out, g, pol, win.data(), s);  // it sets strips and items
    } else if (p.rank() == 2) {
      g.strips = ceil_div(d.x, 32 * kTx);  // the launcher splits the rows into chunks
      ok = launch_2d(in, out, g, pol, win.data(), s);
    } else {
      g.strips = ceil_div(d.x, 32 * kTx);  // the launcher splits the planes into chunks
      // The 3D block ring copies ghost planes from the planes the mode maps them to (every
      // mode but constant) and sets ghost rows and columns from the tile it holds: every mode
      // where the axis has 2R + 1 elements (the cells a ghost maps to then lie in the tile;
      // wrap's far columns and rows come in copies of their own).
      const Boundary mz = p.mode(0), my = p.mode(1), mx = p.mode(2);
      if (!p.zero_ghosts()) {
        const std::int64_t room = 2 * std::int64_t(pol.radius) + 1;
        g.zmode = mz == Boundary::constant ? -1 : int(mz);
        g.ymode = p.zero_ghosts(1) || d.y < room ? -1 : int(my);
        g.xmode = p.zero_ghosts(2) || d.x < room ? -1 : int(mx);
        g.cval = float(p.cval());
      }
      ok = launch_3d(in, out, g, pol, win.data(), s, &applied);
    }
    if (!ok) throw Error("fast: no kernel compiled for radius " + std::to_string(pol.radius));
    // Other modes than zero ghosts: the kernels padded with zeros (but for the axes `applied`
    // names); the band near the other edges is recomputed under the modes.
    if (!p.zero_ghosts()) border_pass(p, b, stream, applied);
  }
};

}  // namespace

std::string feed_name(Feed f, int depth, int box_rows, int copies) {
  switch (f) {
    case Feed::kBlock:
      return "a block-wide shared-memory ring filled by the tensor memory accelerator (" +
             std::to_string(depth) + " slots, one copy of " +
             (box_rows > 1 ? std::to_string(box_rows) + " rows" : std::string("a segment")) +
             " per slot, read by every warp of the block)";
    case Feed::kTma:
      return "rows through a shared-memory ring filled by the tensor memory accelerator (" +
             std::to_string(depth) + " slots of " + std::to_string(box_rows) + " row" +
             (box_rows > 1 ? "s" : "") + " per warp, " +
             (copies == 1   ? std::string("one copy")
              : copies == 2 ? std::string("two copies of half a strip")
                            : std::to_string(copies) + " copies of a part of the strip") +
             " per slot)";
    case Feed::kRing:
      return "rows through a shared-memory ring (cp.async, " + std::to_string(kRingSlots - 1) +
             " rows in flight per warp)";
    case Feed::kPrefetch:
      return depth > 1 ? "register prefetch, " + std::to_string(depth) + " rows in flight per warp"
                       : "next-row prefetch into registers";
    case Feed::kDirect:
      break;
  }
  return "rows loaded as needed";
}

std::unique_ptr<Strategy> make_strategy() { return std::make_unique<FastStrategy>(); }

}  // namespace halo::cuda::fast
