// The `fast` strategy's policy (src/cuda/fast/policy.hpp) without a GPU. The measured defaults
// are not restated here (they move with every retune: docs/notes/tuning.md); what is tested is
// what any table of defaults must satisfy, so that a retune passes and a wrong one fails:
//  - every policy, for every rank, dtype, halo (0 to past the largest compiled), extents (1-element
//    axes, primes, past 2^31), filter (dense, box, even), modes, direct sums, tuning variant of the
//    GPU tests and made-up device, names a kernel the launchers compile for that radius and dtype,
//    within the device's limits (shared memory, block threads, tensor-map boxes, grid), its
//    chunking covering the streamed axis once (Invariants);
//  - the policy reads the extents only through the row alignment and the tensor map, the device
//    only through its features, and never the modes; direct sums and box filters take what the
//    tuning winograd=0 takes (Independence);
//  - each FastTuning field changes the decision it names, nothing else, and only where a kernel
//    for it is compiled (TuningFieldsChangeOnlyWhatTheyName); out-of-range tuning is an error
//    naming the field; the chunking helpers split the work as documented;
//  - a few labelled anchors pin today's measured defaults (MeasuredDefaultsAnchors).
// Each test says which fault it catches. Pure C++: runs in every build, with or without CUDA.
//
// Over 1,000 lines on purpose: the properties share one harness (the sweep, the launchers' shapes
// restated as `launch_of`, the fault list); split by property, each file would carry it again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/parse.hpp"
#include "cuda/fast/model.hpp"
#include "cuda/fast/policy.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"
#include "support.hpp"

namespace halo::cuda::fast {
namespace {

// ---------------------------------------------------------------------------------------------
// Made-up devices, with the shared memory a block may opt in to (not a DeviceFacts field: the
// launchers ask the runtime; here it bounds what the policy's rings may take).
// ---------------------------------------------------------------------------------------------
struct Device {
  const char* name;
  DeviceFacts facts;
  std::int64_t smem_optin;  // bytes of shared memory per block, opted in
};

const DeviceFacts kH100{};  // the DeviceFacts defaults: 132 SMs, sm_90, tensor maps
constexpr std::int64_t kH100Smem = 227 * 1024;
constexpr std::int64_t kA100Smem = 163 * 1024;

DeviceFacts ampere() {  // sm_80: cp.async, but no tensor memory accelerator
  DeviceFacts d;
  d.multiprocessors = 108;
  d.compute_major = 8;
  return d;
}
DeviceFacts no_encoder() {  // sm_90 whose driver lacks cuTensorMapEncodeTiled
  DeviceFacts d;
  d.tensor_map_encoder = false;
  return d;
}
DeviceFacts sms(int n) {
  DeviceFacts d;
  d.multiprocessors = n;
  return d;
}

const std::vector<Device>& devices() {
  static const std::vector<Device> v = {{"H100", kH100, kH100Smem},
                                        {"Ampere", ampere(), kA100Smem},
                                        {"sm_90 without an encoder", no_encoder(), kH100Smem},
                                        {"sm_90 reporting 0 SMs", sms(0), kH100Smem}};
  return v;
}

const Alignment kUnaligned{false, false};
const std::vector<Alignment> kAlignments = {Alignment{}, kUnaligned, Alignment{true, false},
                                            Alignment{false, true}};

// ---------------------------------------------------------------------------------------------
// Problems.
// ---------------------------------------------------------------------------------------------
Filter cube(int rank, std::int64_t k, double w) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(rank), k);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Filter(std::vector<double>(static_cast<std::size_t>(n), w), shape);
}
Filter ones(std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Filter(std::vector<double>(static_cast<std::size_t>(n), 1.0), shape);
}

FastTuning tuning(const std::string& t) {
  return t.empty() ? FastTuning{} : detail::parse_fast_tuning(t, "tune");
}

// The policy of a rank-`rank` problem of extents `ext` with a dense (2r+1)^rank filter.
struct Ask {
  int rank = 2;
  Extents ext{300, 300, 1};
  int r = 1;
  DType dtype = DType::f32;
  std::string tune;  // KEY=VALUE[,...] or empty
  DeviceFacts dev{};
  Alignment aligned{};
  bool direct = false;
};
FastPolicy policy(const Ask& a) {
  Problem p(a.rank, a.ext, 1, cube(a.rank, 2 * a.r + 1, 1.0), a.dtype);
  p.require_direct_sums(a.direct);
  p.set_tuning(tuning(a.tune));
  return fast_policy(p, a.dev, a.aligned);
}
Extents typical(int rank) {
  return rank == 1 ? Extents{5000, 1, 1} : rank == 2 ? Extents{300, 300, 1} : Extents{32, 32, 32};
}
FastPolicy pol(int rank, int r, const std::string& tune = {}, DType t = DType::f32,
               Alignment al = {}, DeviceFacts dev = {}) {
  Ask a;
  a.rank = rank;
  a.ext = typical(rank);
  a.r = r;
  a.dtype = t;
  a.tune = tune;
  a.aligned = al;
  a.dev = dev;
  return policy(a);
}

// The compiled radii of a rank and dtype, from the lists the launchers instantiate their kernels
// from (HALO_FAST*_RADII_*): what "compiled" means.
std::vector<int> compiled_radii(int rank, DType t) {
  std::vector<int> v;
#define HALO_ADD(R) v.push_back(R);
  const bool f32 = t == DType::f32, f64 = t == DType::f64;
  if (rank == 1 && f32) {
    HALO_FAST1D_RADII_F32(HALO_ADD)
  } else if (rank == 1 && f64) {
    HALO_FAST1D_RADII_F64(HALO_ADD)
  } else if (rank == 2 && f32) {
    HALO_FAST2D_RADII_F32(HALO_ADD)
  } else if (rank == 2 && f64) {
    HALO_FAST2D_RADII_F64(HALO_ADD)
  } else if (rank == 3 && f32) {
    HALO_FAST3D_RADII_F32(HALO_ADD)
  } else if (rank == 3 && f64) {
    HALO_FAST3D_RADII_F64(HALO_ADD)
  }
#undef HALO_ADD
  return v;
}

// Every field of a policy, named, as an integer: policies compared field by field.
std::vector<std::pair<std::string, std::int64_t>> fields(const FastPolicy& p) {
  auto path = [](const std::string& n, const RowPath& h) {
    return std::vector<std::pair<std::string, std::int64_t>>{{n + ".feed", int(h.feed)},
                                                             {n + ".columns", h.columns},
                                                             {n + ".depth", h.depth},
                                                             {n + ".rows_per_warp", h.rows_per_warp}};
  };
  std::vector<std::pair<std::string, std::int64_t>> v = {
      {"rank", p.rank}, {"dtype", int(p.dtype)}, {"halo", p.halo}, {"radius", p.radius},
      {"multiprocessors", p.multiprocessors}, {"vec", p.vec}, {"tensor_map", p.tensor_map},
      {"layout", int(p.layout)}, {"outputs_per_lane", p.outputs_per_lane},
      {"prefetch", p.prefetch}, {"winograd", p.winograd}, {"pass_rows", p.pass_rows},
      {"passes", p.passes}, {"last_pass_rows", p.last_pass_rows}, {"slots", p.slots},
      {"box_rows", p.box_rows}, {"box_copies", p.box_copies}, {"l2_promotion", p.l2_promotion},
      {"hints", p.hints}, {"runs", p.runs}, {"chunk", p.chunk}, {"shortest_run", p.shortest_run},
      {"edge_cost", p.edge_cost}};
  for (auto& f : path("path", p.path)) v.push_back(f);
  for (auto& f : path("fallback", p.fallback)) v.push_back(f);
  return v;
}
// The fields where a and b differ.
std::set<std::string> diff(const FastPolicy& a, const FastPolicy& b) {
  std::set<std::string> d;
  const auto fa = fields(a), fb = fields(b);
  for (std::size_t i = 0; i < fa.size(); ++i)
    if (fa[i].second != fb[i].second) d.insert(fa[i].first);
  return d;
}
std::string str(const std::set<std::string>& s) {
  std::string t;
  for (const auto& x : s) t += (t.empty() ? "" : ", ") + x;
  return "{" + t + "}";
}

bool same(const RowPath& a, const RowPath& b) {
  return a.feed == b.feed && a.columns == b.columns && a.depth == b.depth &&
         a.rows_per_warp == b.rows_per_warp;
}

// The first broken properties of a sweep (one EXPECT per case would print thousands of lines for
// one broken rule, and slow the sweep down): each with the case it broke on.
struct Faults {
  std::function<std::string()> where;
  std::vector<std::string> seen;
  std::int64_t count = 0, checked = 0;
  void check(bool ok, const char* what) {
    ++checked;
    if (ok) return;
    if (++count <= 12) seen.push_back(where() + ": " + what);
  }
  std::string report() const {
    std::string s = std::to_string(count) + " broken of " + std::to_string(checked) + ":";
    for (const auto& x : seen) s += "\n  " + x;
    return s;
  }
};
#define HOLDS(f, cond) (f).check((cond), #cond)

// ---------------------------------------------------------------------------------------------
// What the launchers (fast/kernels_1d.cu, kernels_2d.cu, kernels_3d.cu) launch for a policy: the
// threads per block, the dynamic shared memory of its ring, and the boxes of its tensor maps. The
// formulas are the launchers' (the slots' sizes are the rings' own, primitives/rings.cuh),
// written out here so that the policy's ring shapes can be held against the hardware's limits.
// ---------------------------------------------------------------------------------------------
constexpr std::int64_t slot_bytes(std::int64_t bytes) { return (bytes + 127) / 128 * 128; }
constexpr int kBlockWarps = 8;  // the 1D tiles' and the 3D block ring's blocks (kTileWarps*)
constexpr std::int64_t kStaticSmem = 4096;  // a generous bound on the kernels' static shared
                                            // memory (mbarriers, the 3D ring's patch table)

struct Launch {
  int threads = kThreads;
  std::int64_t smem = 0;           // dynamic shared memory, bytes
  std::int64_t box_w = 0, box_h = 0;  // one tensor-map box: columns, rows (0: no tensor map)
  std::int64_t box_bytes_w = 0;    // a box row's bytes
  bool parts_equal = true;         // the 2D ring's parts split its strip evenly
};

Launch launch_of(const FastPolicy& p, bool modes) {
  Launch l;
  const int R = p.radius, RA = round_up4(R);
  const std::int64_t es = std::int64_t(dtype_size(p.dtype));
  if (p.rank == 1) {
    if (p.layout == Layout1D::block_tile) {
      l.threads = 32 * kBlockWarps;
      l.smem = p.slots * slot_bytes((32 * kBlockWarps * p.outputs_per_lane + 2 * RA) * 4);
    } else if (p.layout == Layout1D::padded_tile) {
      l.threads = 32 * kBlockWarps;
      l.smem = p.slots * ((32 * kBlockWarps * kPadTx + 2 * RA) / 4 * 5 / 4 + 1) * 16;
    }
  } else if (p.rank == 2 && p.path.feed == Feed::kTma) {
    const int W = 32 * p.path.columns + 2 * RA, parts = tma_parts(W);
    const int overlap = parts > 1 ? 2 * RA : 0, step = (W - overlap) / parts;
    l.parts_equal = (W - overlap) % parts == 0 && parts == p.box_copies;
    l.box_w = step + overlap;
    l.box_h = p.box_rows;
    l.smem = std::int64_t(kWarpsPerBlock) * p.slots * parts * slot_bytes(l.box_h * l.box_w * es);
  } else if (p.rank == 3 && p.path.feed == Feed::kTma) {
    l.box_w = 32 * kTx + 2 * RA;
    l.box_h = 2 * R + (p.path.rows_per_warp >= 2 ? 2 : 1);  // the kernel's rows: 2R + YB
    l.smem = std::int64_t(kWarpsPerBlock) * p.slots * slot_bytes(l.box_h * l.box_w * es);
  } else if (p.rank == 3 && p.path.feed == Feed::kBlock) {
    l.threads = 32 * kTileWarps3D;
    l.box_w = 32 * kTx + 2 * RA;
    l.box_h = kTileWarps3D * p.path.rows_per_warp + 2 * R;  // the tile's rows and halo
    const std::int64_t box = slot_bytes(l.box_w * l.box_h * 4);
    l.smem = p.slots * (modes ? box + 2 * slot_bytes(4 * l.box_h * 4) : box);
  }
  l.box_bytes_w = l.box_w * es;
  return l;
}

// The launchers' division of the streamed axis (fit_chunks, even_runs) over an array, with the
// device's SMs at `occupancy` blocks each: covers every row (plane) exactly once, and the grid
// stays within gridDim.x.
void check_chunking(Faults& f, const FastPolicy& p, const Problem& pr) {
  const Dims3 d = pr.dims3();
  const std::int64_t R = p.radius, strips = (d.x + 32 * kTx - 1) / (32 * kTx);
  const std::int64_t grid_limit = (std::int64_t(1) << 31) - 1;
  for (const std::int64_t occupancy : {1, 16}) {
    const std::int64_t resident = occupancy * p.multiprocessors;
    std::int64_t len = 0, per = 0;
    if (p.rank == 2) {
      len = d.y;
      per = (d.x + 32 * p.path.columns - 1) / (32 * p.path.columns) * pr.batch();
    } else if (p.rank == 3 && p.path.feed == Feed::kBlock) {
      const std::int64_t ty = kTileWarps3D * p.path.rows_per_warp;
      const std::int64_t tiles = (d.y + ty - 1) / ty * strips * pr.batch();
      if (p.runs) {
        const std::int64_t total = tiles * d.z;
        const std::int64_t run = even_runs(total, p.shortest_run, resident, p.chunk);
        const std::int64_t blocks = (total + run - 1) / run;
        HOLDS(f, run >= 1 && blocks * run >= total && (blocks - 1) * run < total);
        HOLDS(f, blocks <= grid_limit);
        continue;
      }
      len = d.z;
      per = tiles;
    } else if (p.rank == 3) {
      len = d.z;
      per = (d.y + p.path.rows_per_warp - 1) / p.path.rows_per_warp * strips * pr.batch();
    } else {
      return;
    }
    // (fit_chunks searches up to 8 waves of chunk counts: its answers are kept, as the sweep asks
    // the same question of many policies)
    static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>,
                    Chunking>
        known;
    const auto key = std::make_tuple(len, per, R, resident, p.chunk);
    auto at = known.find(key);
    if (at == known.end())
      at = known.emplace(key, fit_chunks(len, per, int(R), resident * kWarpsPerBlock, p.chunk))
               .first;
    const Chunking c = at->second;
    HOLDS(f, c.chunk >= 1 && c.chunks * c.chunk >= len && (c.chunks - 1) * c.chunk < len);
    HOLDS(f, c.chunks * per / kWarpsPerBlock + 1 <= grid_limit);
  }
}

// ---------------------------------------------------------------------------------------------
// The properties of one policy, whatever the table of defaults says.
// ---------------------------------------------------------------------------------------------
void check_policy(Faults& f, const Problem& pr, const Device& dev, const Alignment& al,
                  const FastPolicy& p) {
  const int rank = pr.rank();
  const DType t = pr.dtype();
  const bool f32 = t == DType::f32;
  // The radius: the smallest compiled one that covers the halo, none past the largest.
  const std::vector<int> radii = compiled_radii(rank, t);
  const std::int64_t halo = pr.max_radius();
  const auto cover = std::lower_bound(radii.begin(), radii.end(), halo);
  HOLDS(f, p.rank == rank && p.dtype == t && p.halo == halo);
  HOLDS(f, p.radius == (cover == radii.end() ? -1 : *cover));
  HOLDS(f, p.multiprocessors == std::max(1, dev.facts.multiprocessors));
  if (p.radius < 0) return;  // can_implement refuses it; nothing runs
  const int R = p.radius, K = 2 * R + 1;
  const Dims3 d = pr.dims3();
  const std::int64_t es = std::int64_t(dtype_size(t)), limit = std::int64_t(1) << 31;

  // 16-byte rows: every row starts 16-byte aligned in both arrays.
  HOLDS(f, p.vec == (d.x % 4 == 0 && al.input && al.output));
  // A tensor map exactly where make_row_map() can encode one (else the TMA paths are given up
  // for nothing, or chosen and then fail).
  HOLDS(f, p.tensor_map == (dev.facts.tensor_maps() && (d.x * es) % 16 == 0 && al.input &&
                            d.x < limit && d.y < limit && d.z < limit && pr.batch() < limit));
  // The Winograd columns neither sum directly nor divide a box's sums.
  HOLDS(f, !p.winograd || (!pr.direct_sums() && box_taps_of(pr) == 0));
  HOLDS(f, p.summation() == (p.winograd ? Summation::winograd_x : Summation::direct));
  // Values the kernels and the tensor maps accept.
  HOLDS(f, p.l2_promotion == 0 || p.l2_promotion == 64 || p.l2_promotion == 128 ||
               p.l2_promotion == 256);
  HOLDS(f, p.hints >= 0 && p.hints <= 3);
  HOLDS(f, p.edge_cost >= 0 && p.edge_cost <= 100);
  HOLDS(f, p.chunk >= 0 && p.shortest_run >= 1);

  // Within the device: block threads, shared memory, tensor-map boxes (make_row_map: at most 256
  // x 256 elements, rows of whole 16-byte chunks).
  const Launch l = launch_of(p, !pr.zero_ghosts());
  HOLDS(f, l.threads % 32 == 0 && l.threads <= 1024);
  HOLDS(f, l.smem + kStaticSmem <= dev.smem_optin);
  HOLDS(f, l.box_w <= 256 && l.box_h <= 256 && l.box_bytes_w % 16 == 0 && l.parts_equal);
  check_chunking(f, p, pr);

  if (rank == 1) {
    const Layout1D lay = p.layout;
    const bool tile = lay == Layout1D::block_tile || lay == Layout1D::padded_tile;
    // The tiles: compiled at their radii (f32), 16-byte rows; the block ring's bulk copies on a
    // device with the TMA; no more slots than the mbarriers (static) hold.
    HOLDS(f, lay != Layout1D::block_tile || (f32 && tile_compiled_1d(R) && p.vec && dev.facts.tma()));
    HOLDS(f, lay != Layout1D::block_tile || (p.slots >= 2 && p.slots <= kBlockRingSlots));
    HOLDS(f, lay != Layout1D::block_tile || p.outputs_per_lane == kTxWide ||
                 (p.outputs_per_lane == 16 && R >= 12));
    HOLDS(f, lay != Layout1D::padded_tile || (f32 && pad_compiled_1d(R) && p.vec));
    HOLDS(f, lay != Layout1D::padded_tile ||
                 (p.slots >= 2 && p.slots <= kPadMaxSlots && p.outputs_per_lane == kPadTx));
    HOLDS(f, tile || (p.slots == 0 && p.hints == 0));
    // The register layouts: the strip kernel is the one compiled up to kStripMaxR (the launcher
    // runs it there whatever the layout says), the wide ones above; f64 has only held 8.
    HOLDS(f, tile || (lay == Layout1D::strip) == (R <= kStripMaxR));
    HOLDS(f, lay != Layout1D::strip || (p.outputs_per_lane == kTx && p.prefetch));
    HOLDS(f, lay != Layout1D::held || p.outputs_per_lane == kTxWide);
    HOLDS(f, lay != Layout1D::held || !p.prefetch || (f32 && R <= kWidePfLimit));
    HOLDS(f, lay != Layout1D::streamed ||
                 (f32 && (p.outputs_per_lane == 16 || p.outputs_per_lane == 32)));
    HOLDS(f, lay != Layout1D::streamed || !p.prefetch ||
                 (p.outputs_per_lane == 16 && R <= kWidePfLimit));
    // What 1D does not use stays unset.
    HOLDS(f, !p.winograd && p.passes == 1 && p.path.feed == Feed::kDirect && p.chunk == 0 &&
                 !p.runs && p.box_rows == 0);
    return;
  }

  for (const RowPath& h : {p.path, p.fallback}) {
    HOLDS(f, h.depth >= 1 && h.depth <= 4);
    if (rank == 2) {
      HOLDS(f, h.feed != Feed::kBlock && h.rows_per_warp == 1);
      // 8 columns per lane: compiled under the TMA ring and the cp.async ring, f32, at their radii.
      HOLDS(f, h.columns == kTx ||
                   (h.columns == 8 && f32 &&
                    ((h.feed == Feed::kTma && wide_tma_compiled(R)) ||
                     (h.feed == Feed::kRing && wide_ring_compiled(R)))));
      HOLDS(f, h.depth == 1 || (h.feed == Feed::kPrefetch && deep_prefetch_compiled_2d(t, R)));
    } else {
      HOLDS(f, h.columns == kTx);
      HOLDS(f, h.rows_per_warp == 1 || h.rows_per_warp == 2 || h.rows_per_warp == 4);
      HOLDS(f, h.rows_per_warp == 1 || (f32 && R >= 1));
      HOLDS(f, h.rows_per_warp != 4 || (h.feed == Feed::kBlock && R <= 2));
      HOLDS(f, h.depth == 1 || (h.feed == Feed::kPrefetch && f32 && R >= 1 && R <= 2 &&
                                (2 * R + h.rows_per_warp) % h.depth == 0));
    }
  }
  // The fallback runs where no tensor map can be made: never a TMA feed; and without a tensor
  // map it is what runs.
  HOLDS(f, p.fallback.feed != Feed::kTma && p.fallback.feed != Feed::kBlock);
  const bool ring = p.path.feed == Feed::kTma || p.path.feed == Feed::kBlock;
  HOLDS(f, !ring || p.tensor_map);
  HOLDS(f, ring || same(p.path, p.fallback));
  HOLDS(f, ring || (p.slots == 0 && p.box_rows == 0 && p.box_copies == 1 && p.hints == 0 &&
                    !p.runs && p.edge_cost == 0));
  HOLDS(f, !ring || (p.slots >= 2 && p.box_rows >= 1));

  if (rank == 2) {
    // The passes cover the filter's rows once, each height compiled (run(): one pass of K rows,
    // or passes of 8, 12, 16 where passes_compiled; the last pass exact at the default height).
    HOLDS(f, p.pass_rows >= 1 && p.pass_rows <= K && p.passes >= 1);
    HOLDS(f, (p.passes - 1) * p.pass_rows < K && p.passes * p.pass_rows >= K);
    HOLDS(f, (p.passes == 1) == (p.pass_rows == K));
    HOLDS(f, p.passes == 1 || passes_compiled(t, R, p.pass_rows));
    HOLDS(f, p.last_pass_rows == (p.passes == 1 ? K
                                  : p.pass_rows == kPassRows
                                      ? K - (p.passes - 1) * p.pass_rows
                                      : p.pass_rows));
    // The Winograd columns: f32 under the TMA ring, one pass, where compiled, 4 columns.
    HOLDS(f, !p.winograd || (f32 && p.path.feed == Feed::kTma && p.passes == 1 &&
                             wino_compiled(R, K) && p.path.columns == kTx));
    HOLDS(f, p.path.feed != Feed::kTma || p.box_copies == tma_parts(32 * p.path.columns + 2 * round_up4(R)));
    HOLDS(f, !p.runs && p.edge_cost == 0 && p.hints == 0);
  } else {
    HOLDS(f, !p.winograd && p.passes == 1);
    // The block ring: f32, r >= 1, at most the slots its static mbarriers hold, a slot the
    // tile's rows and halo (the kernel's TileSlot).
    HOLDS(f, p.path.feed != Feed::kBlock ||
                 (f32 && R >= 1 && p.slots <= kBlockRingSlots &&
                  p.box_rows == kTileWarps3D * p.path.rows_per_warp + 2 * R &&
                  p.shortest_run >= std::min<std::int64_t>(16, 8 * R)));
    // The per-warp TMA ring: a slot the 2R + rows input rows of a plane (the kernel's NR).
    HOLDS(f, p.path.feed != Feed::kTma ||
                 (p.path.rows_per_warp <= 2 && p.box_rows == 2 * R + p.path.rows_per_warp));
    HOLDS(f, p.path.feed == Feed::kBlock || (!p.runs && p.edge_cost == 0 && p.hints == 0));
  }
}

// The extents of the sweep: 1-element axes, small primes, the suites' sizes, rows whose pitch
// is not a multiple of 16 bytes, and extents at and past 2^31 (no tensor map).
std::vector<Extents> sweep_extents(int rank) {
  const std::int64_t big = std::int64_t(1) << 31;
  if (rank == 1) return {{1, 1, 1}, {7, 1, 1}, {4096, 1, 1}, {5001, 1, 1}, {4099, 1, 1},
                         {big - 4, 1, 1}, {big + 4, 1, 1}};
  if (rank == 2) return {{1, 1, 1}, {1, 300, 1}, {300, 1, 1}, {7, 13, 1}, {64, 256, 1},
                         {300, 301, 1}, {1, big - 4, 1}, {1, big, 1}, {big + 2, 1, 1}};
  return {{1, 1, 1}, {1, 32, 32}, {32, 32, 1}, {5, 7, 11}, {16, 16, 64}, {32, 32, 30},
          {1, 2, big - 4}, {1, 1, big}, {big, 1, 1}};
}

// Every policy of the sweep satisfies check_policy: every rank and dtype, every halo from 0 to
// one past the largest compiled, the extents above, a dense filter under zero ghosts and under
// reflect, a box filter, an even one, a batch; every tuning variant of the GPU tests and the
// defaults; every made-up device, alignment and direct-sums choice.
// Catches: a default or a tuning that names a kernel no launcher compiles (a radius off the
// lists, 8 columns or a deep prefetch where not instantiated, a block ring in f64, passes of an
// uncompiled height, Winograd outside wino_compiled), a TMA path without a tensor map or on a
// device without the TMA, a ring larger than the shared memory or the mbarriers, a box wider
// than a tensor map's, a 3D slot that is not the kernel's rows, a radius that does not cover the
// halo or is not the smallest that does, chunks that skip or repeat rows.
TEST(FastPolicy, Invariants) {
  std::vector<std::string> tunings = {""};
  for (const std::string& v : test::fast_tuning_variants()) tunings.push_back(v);
  std::vector<FastTuning> parsed;
  for (const std::string& v : tunings) parsed.push_back(tuning(v));
  Faults f;
  std::int64_t policies = 0;
  for (int rank = 1; rank <= 3; ++rank)
    for (const DType t : {DType::f32, DType::f64}) {
      const int top = compiled_radii(rank, t).back();
      for (int r = 0; r <= top + 1; ++r)
        for (const Extents& ext : sweep_extents(rank))
          for (int kind = 0; kind < 5; ++kind) {
            // 0 dense, 1 dense under reflect, 2 box, 3 even (2r + 2 wide), 4 dense, batch of 3
            const std::int64_t k = kind == 3 ? 2 * r + 2 : 2 * r + 1;
            const std::int64_t taps = [&] {
              std::int64_t n = 1;
              for (int a = 0; a < rank; ++a) n *= k;
              return n;
            }();
            const Filter filt = cube(rank, k, kind == 2 ? 1.0 / double(taps) : 1.0);
            const Edges edges = kind == 1 ? Edges::all(Boundary::reflect) : Edges{};
            const std::int64_t batch = kind == 4 ? 3 : 1;
            Problem pr(rank, ext, batch, filt, t, Op::correlate, edges);
            for (std::size_t ti = 0; ti < tunings.size(); ++ti) {
              pr.set_tuning(parsed[ti]);
              for (const bool direct : {false, true}) {
                pr.require_direct_sums(direct);
                for (const Device& dev : devices())
                  for (const Alignment& al : kAlignments) {
                    const FastPolicy p = fast_policy(pr, dev.facts, al);
                    f.where = [&] {
                      return std::to_string(rank) + "D " + to_string(t) + " r " +
                             std::to_string(r) + " " + pr.describe() + " kind " +
                             std::to_string(kind) + " batch " + std::to_string(batch) +
                             " tune '" + tunings[ti] + "'" + (direct ? " direct" : "") + " " +
                             dev.name + (al.input ? " in aligned" : " in unaligned") +
                             (al.output ? ", out aligned" : ", out unaligned");
                    };
                    check_policy(f, pr, dev, al, p);
                    ++policies;
                  }
              }
            }
          }
    }
  EXPECT_EQ(f.count, 0) << f.report();
  EXPECT_GT(policies, 100000);
}

// compiled_radius() is the smallest listed radius >= r, -1 past the largest, for every r; the
// lists start at 0 and rise (so every halo up to the largest is served), and fast's time model
// weighs the window it runs.
// Catches: a radius served by a smaller window than it needs (wrong outputs), a larger one than
// the smallest compiled (wasted FFMAs), a gap or an unsorted list.
TEST(FastPolicy, CompiledRadii) {
  for (int rank = 1; rank <= 3; ++rank)
    for (const DType t : {DType::f32, DType::f64}) {
      const std::vector<int> radii = compiled_radii(rank, t);
      ASSERT_FALSE(radii.empty());
      EXPECT_EQ(radii.front(), 0);
      EXPECT_TRUE(std::is_sorted(radii.begin(), radii.end()) &&
                  std::adjacent_find(radii.begin(), radii.end()) == radii.end());
      for (int r = 0; r <= radii.back() + 40; ++r) {
        const int c = compiled_radius(rank, t, r);
        const auto cover = std::lower_bound(radii.begin(), radii.end(), r);
        EXPECT_EQ(c, cover == radii.end() ? -1 : *cover) << rank << "D " << to_string(t) << " " << r;
      }
      // fast::modelled_ns: the window run is what costs (a smaller filter in the same compiled
      // window costs the same), and the time grows strictly with the compiled radius (which the
      // crossovers calibrated against it rely on).
      double last = 0;
      for (const int r : radii) {
        const Problem exact(rank, typical(rank), 1, cube(rank, 2 * r + 1, 1.0), t);
        const double ns = modelled_ns(exact);
        EXPECT_GT(ns, last) << rank << "D r " << r;
        last = ns;
        if (r > 0) {
          const Problem smaller(rank, typical(rank), 1, cube(rank, 2 * r, 1.0), t);
          EXPECT_DOUBLE_EQ(modelled_ns(smaller), ns) << rank << "D r " << r;
        }
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Independence: what the policy must not read.
// ---------------------------------------------------------------------------------------------
// The policy reads the extents only through vec and tensor_map (rows of 16 bytes and a tensor
// map), the device only through its features (the SM count only sizes the grids), never the
// boundary modes or cval (the border pass and the kernels apply them), and the same inputs give
// the same policy. Direct sums and box filters take exactly what the tuning winograd=0 takes
// (the direct kernel's ring shape included, not the Winograd one's).
// Catches: a decision keyed on an extent or an SM count by mistake (kernels that differ between
// two arrays of the same rows), modes that change the kernels, direct sums that keep the
// Winograd kernel's ring shape, a non-deterministic policy.
TEST(FastPolicy, Independence) {
  std::vector<std::string> tunings = {""};
  for (const std::string& v : test::fast_tuning_variants()) tunings.push_back(v);
  Faults f;
  for (int rank = 1; rank <= 3; ++rank)
    for (const DType t : {DType::f32, DType::f64})
      for (const int r : compiled_radii(rank, t))
        for (const std::string& tune : tunings)
          for (const Alignment& al : {Alignment{}, kUnaligned}) {
            f.where = [&] {
              return std::to_string(rank) + "D " + to_string(t) + " r " + std::to_string(r) +
                     " tune '" + tune + "'" + (al.input ? " aligned" : " unaligned");
            };
            const Filter filt = cube(rank, 2 * r + 1, 1.0);
            auto make = [&](const Extents& e, const Edges& edges = {}) {
              Problem p(rank, e, 1, filt, t, Op::correlate, edges);
              p.set_tuning(tuning(tune));
              return p;
            };
            const Problem base = make(typical(rank));
            const FastPolicy p = fast_policy(base, kH100, al);
            // Purity.
            HOLDS(f, diff(p, fast_policy(base, kH100, al)).empty());
            // Other extents with 16-byte rows of a 16-byte pitch and the same halo.
            const std::vector<Extents> same_rows =
                rank == 1 ? std::vector<Extents>{{68, 1, 1}, {1 << 20, 1, 1}, {4100, 1, 1}}
                : rank == 2
                    ? std::vector<Extents>{{2 * r + 1, 64, 1}, {4099, 4096, 1}, {97, 132, 1}}
                    : std::vector<Extents>{{2 * r + 1, 2 * r + 1, 64}, {3 + 2 * r, 101, 1024},
                                           {640, 2 * r + 1, 8}};
            for (const Extents& e : same_rows) {
              const Problem q = make(e);
              HOLDS(f, q.max_radius() == base.max_radius());
              HOLDS(f, diff(p, fast_policy(q, kH100, al)).empty());
            }
            // The SM count: only pol.multiprocessors.
            for (const int n : {1, 7, 1000})
              HOLDS(f, diff(p, fast_policy(base, sms(n), al)) ==
                           std::set<std::string>{"multiprocessors"});
            // The modes and cval.
            for (const Boundary m : {Boundary::nearest, Boundary::reflect, Boundary::mirror,
                                     Boundary::wrap, Boundary::constant})
              HOLDS(f, diff(p, fast_policy(make(typical(rank), Edges::all(m, 2.5)), kH100, al))
                           .empty());
            // Direct sums and box filters: what winograd=0 gives.
            if (tune.find("winograd") != std::string::npos) continue;
            const FastPolicy no_wino = fast_policy(
                [&] {
                  Problem q = make(typical(rank));
                  q.set_tuning(tuning(tune.empty() ? "winograd=0" : tune + ",winograd=0"));
                  return q;
                }(),
                kH100, al);
            Problem direct = make(typical(rank));
            direct.require_direct_sums(true);
            HOLDS(f, diff(no_wino, fast_policy(direct, kH100, al)).empty());
            std::int64_t taps = 1;
            for (int a = 0; a < rank; ++a) taps *= 2 * r + 1;
            Problem box(rank, typical(rank), 1, cube(rank, 2 * r + 1, 1.0 / double(taps)), t);
            box.set_tuning(tuning(tune));
            HOLDS(f, box_taps_of(box) == taps);
            HOLDS(f, diff(no_wino, fast_policy(box, kH100, al)).empty());
          }
  EXPECT_EQ(f.count, 0) << f.report();
}

// ---------------------------------------------------------------------------------------------
// Each field of FastTuning changes the decision it names, nothing else, and only where a kernel
// for it is compiled.
// ---------------------------------------------------------------------------------------------
// The fields a tuning key may change, rank by rank.
std::set<std::string> may_change(const std::string& key, int rank) {
  const std::set<std::string> layouts1d = {"layout", "outputs_per_lane", "prefetch", "slots",
                                           "hints"};
  const std::set<std::string> shape2d = {"winograd", "path.columns", "slots", "box_rows",
                                         "box_copies"};
  if (key == "slots" || key == "hints" || key == "edge_cost" || key == "runs" ||
      key == "box_rows" || key == "l2_promotion" || key == "chunk")
    return {key};
  if (key == "depth") return {"path.depth", "fallback.depth"};
  if (key == "tx") return {"path.columns", "fallback.columns", "box_copies"};
  if (key == "tx_1d" || key == "pad_1d") return rank == 1 ? layouts1d : std::set<std::string>{};
  if (key == "winograd") return rank == 2 ? shape2d : std::set<std::string>{};
  if (key == "pass_rows") {
    std::set<std::string> s = shape2d;
    s.insert({"pass_rows", "passes", "last_pass_rows"});
    return rank == 2 ? s : std::set<std::string>{};
  }
  if (key == "rows_3d")
    return rank == 3 ? std::set<std::string>{"path.rows_per_warp", "fallback.rows_per_warp",
                                             "path.depth", "fallback.depth", "box_rows"}
                     : std::set<std::string>{};
  // feed, prefetch: every decision of the feeds, none of the problem's or the device's.
  std::set<std::string> all;
  for (const auto& fld : fields(FastPolicy{})) all.insert(fld.first);
  for (const char* fixed :
       {"rank", "dtype", "halo", "radius", "multiprocessors", "vec", "tensor_map", "chunk"})
    all.erase(fixed);
  return all;
}

// Whether the tuned policy `u` (key=value) took the value where a kernel for it is compiled,
// and kept the default `d` elsewhere.
bool takes_effect(const std::string& key, int v, const FastPolicy& d, const FastPolicy& u,
                  const DeviceFacts& dev) {
  const int R = u.radius, K = 2 * R + 1, rank = u.rank;
  const bool f32 = u.dtype == DType::f32;
  const bool block = u.path.feed == Feed::kBlock, tma = u.path.feed == Feed::kTma;
  const bool tile1d = rank == 1 && u.layout == Layout1D::block_tile;
  const bool pad1d = rank == 1 && u.layout == Layout1D::padded_tile;
  if (key == "slots") {
    if (rank > 1 && tma) return u.slots == v;
    if ((rank == 3 && block) || tile1d) return u.slots == (v <= kBlockRingSlots ? v : d.slots);
    if (pad1d) return v <= kPadMaxSlots ? u.slots == v : u.slots >= 2 && u.slots <= kPadMaxSlots;
    return u.slots == 0;
  }
  if (key == "box_rows") return u.box_rows == (rank == 2 && tma ? v : d.box_rows);
  if (key == "l2_promotion") return u.l2_promotion == (rank > 1 && (tma || block) ? v : d.l2_promotion);
  if (key == "hints") return u.hints == ((rank == 3 && block) || tile1d || pad1d ? v : d.hints);
  if (key == "chunk") return u.chunk == (rank > 1 ? v : d.chunk);
  if (key == "edge_cost") return u.edge_cost == (rank == 3 && block ? v : d.edge_cost);
  if (key == "runs") return u.runs == (rank == 3 && block ? v == 1 : d.runs);
  if (key == "depth") {
    if (rank == 1) return true;  // (diff: nothing changed)
    for (const RowPath& h : {u.path, u.fallback}) {
      const bool deep = h.feed == Feed::kPrefetch &&
                        (rank == 2 ? deep_prefetch_compiled_2d(u.dtype, R)
                                   : f32 && R >= 1 && R <= 2 && (2 * R + h.rows_per_warp) % v == 0);
      if (h.depth != (deep ? v : 1)) return false;
    }
    return true;
  }
  if (key == "tx") {
    if (rank != 2) return true;
    const bool wide_path = f32 && ((tma && !u.winograd && wide_tma_compiled(R)) ||
                                   (u.path.feed == Feed::kRing && wide_ring_compiled(R)));
    const bool wide_fallback = f32 && u.fallback.feed == Feed::kRing && wide_ring_compiled(R);
    return u.path.columns == (wide_path ? v : kTx) && u.fallback.columns == (wide_fallback ? v : kTx);
  }
  if (key == "tx_1d") {
    if (rank != 1) return true;
    if (pad1d) return false;  // a forced 1-D layout keeps the padded tile off
    if (tile1d) return u.outputs_per_lane == (v == 16 && R >= 12 ? 16 : kTxWide);
    if (R <= kStripMaxR) return u.layout == Layout1D::strip;
    if (!f32) return u.layout == Layout1D::held && u.outputs_per_lane == kTxWide;
    return u.outputs_per_lane == v && (u.layout == Layout1D::streamed) == (v >= 16);
  }
  if (key == "winograd") {
    if (rank != 2) return true;
    return u.winograd == (v == 1 && f32 && tma && u.passes == 1 && wino_compiled(R, K));
  }
  if (key == "pass_rows") {
    if (rank != 2) return true;
    return u.pass_rows == (v > 0 && passes_compiled(u.dtype, R, v) ? v : K);
  }
  if (key == "rows_3d") {
    if (rank != 3) return true;
    const int want = !f32 || R < 1 ? 1 : v == 4 ? (block && R <= 2 ? 4 : 2) : v;
    return u.path.rows_per_warp == want && u.fallback.rows_per_warp == std::min(want, 2);
  }
  if (key == "feed") {
    const Feed F = Feed(v);
    if (rank == 1) {
      if (F == Feed::kBlock)
        return tile1d == (f32 && tile_compiled_1d(R) && u.vec && dev.tma()) && !pad1d;
      return !tile1d && !pad1d;  // another feed keeps the register layouts
    }
    if (F < Feed::kTma) return u.path.feed == F && u.fallback.feed == F;
    if (rank == 2) return u.path.feed == (u.tensor_map ? Feed::kTma : u.fallback.feed);
    if (F == Feed::kTma) return u.path.feed == (u.tensor_map ? Feed::kTma : u.fallback.feed);
    return u.path.feed == (f32 && R >= 1 && u.tensor_map ? Feed::kBlock : u.fallback.feed);
  }
  if (key == "prefetch") {
    if (rank > 1) {
      const Feed want = v == 1 ? Feed::kPrefetch : Feed::kDirect;
      return u.path.feed == want && u.fallback.feed == want;
    }
    if (tile1d || pad1d) return false;  // the older switch keeps the register layouts
    if (u.layout == Layout1D::held) return u.prefetch == (v == 1 && f32 && R <= kWidePfLimit);
    if (u.layout == Layout1D::streamed)
      return u.prefetch == (v == 1 && u.outputs_per_lane == 16 && R <= kWidePfLimit);
    return true;
  }
  if (key == "pad_1d") {
    if (rank != 1) return true;
    return pad1d == (v == 1 && f32 && pad_compiled_1d(R) && u.vec);
  }
  ADD_FAILURE() << "no rule for tuning key " << key;
  return false;
}

// Catches: a tuning field that does not reach its decision (a dead knob: the tuning runs measure
// the default), one that changes another decision too (a measurement that mixes two knobs), one
// that takes effect where its kernel is not compiled (an uncompiled launch, or the launcher
// silently running another kernel than the policy and the plan name).
TEST(FastPolicy, TuningFieldsChangeOnlyWhatTheyName) {
  const std::vector<std::pair<std::string, std::vector<int>>> values = {
      {"slots", {2, 3, 5, 8, 9, 16}},   {"box_rows", {1, 7, 16}},
      {"l2_promotion", {0, 64, 128, 256}}, {"hints", {0, 1, 2, 3}},
      {"chunk", {1, 5, 1 << 30}},       {"edge_cost", {0, 40, 100}},
      {"runs", {0, 1}},                 {"depth", {1, 2, 3, 4}},
      {"tx", {4, 8}},                   {"tx_1d", {8, 16, 32}},
      {"winograd", {0, 1}},             {"pass_rows", {0, 8, 12, 16}},
      {"rows_3d", {1, 2, 4}},           {"prefetch", {0, 1}},
      {"pad_1d", {0, 1}},
      {"feed", {int(Feed::kDirect), int(Feed::kPrefetch), int(Feed::kRing), int(Feed::kTma),
                int(Feed::kBlock)}}};
  const char* feeds[] = {"direct", "prefetch", "ring", "tma", "block"};
  Faults f;
  std::int64_t changed = 0;
  for (const auto& [key, vs] : values)
    for (const int v : vs)
      for (int rank = 1; rank <= 3; ++rank)
        for (const DType t : {DType::f32, DType::f64})
          for (const int r : compiled_radii(rank, t))
            for (const Alignment& al : {Alignment{}, kUnaligned})
              for (const DeviceFacts& dev : {kH100, ampere()}) {
                const std::string tune = key + "=" + (key == "feed" ? feeds[v] : std::to_string(v));
                f.where = [&] {
                  return std::to_string(rank) + "D " + to_string(t) + " r " + std::to_string(r) +
                         " " + tune + (al.input ? " aligned" : " unaligned") +
                         (dev.tma() ? " sm_90" : " sm_80");
                };
                const FastPolicy d = pol(rank, r, "", t, al, dev);
                const FastPolicy u = pol(rank, r, tune, t, al, dev);
                const std::set<std::string> changes = diff(d, u), allowed = may_change(key, rank);
                const bool within = std::includes(allowed.begin(), allowed.end(),
                                                  changes.begin(), changes.end());
                f.check(within, ("changed " + str(changes)).c_str());
                HOLDS(f, takes_effect(key, v, d, u, dev));
                changed += !changes.empty();
              }
  EXPECT_EQ(f.count, 0) << f.report();
  EXPECT_GT(changed, 1000);  // the sweep reaches the knobs
}

// Tuning values beyond what a ring holds are cut to what it holds, never past it: the block
// rings' mbarriers are static (kBlockRingSlots), the padded tile holds kPadMaxSlots.
// Catches: a tuned slot count that overruns the static mbarrier array.
TEST(FastPolicy, TunedSlotsNeverOverrunTheRings) {
  for (int s = 2; s <= 16; ++s) {
    const std::string tune = "slots=" + std::to_string(s);
    for (const int r : compiled_radii(1, DType::f32))
      for (const std::string& t : {tune, tune + ",pad_1d=1"}) {
        const FastPolicy p = pol(1, r, t);
        EXPECT_TRUE(p.layout != Layout1D::block_tile || p.slots <= kBlockRingSlots) << t << " " << r;
        EXPECT_TRUE(p.layout != Layout1D::padded_tile || p.slots <= kPadMaxSlots) << t << " " << r;
      }
    for (const int r : compiled_radii(3, DType::f32)) {
      const FastPolicy p = pol(3, r, tune + ",feed=block");
      EXPECT_TRUE(p.path.feed != Feed::kBlock || p.slots <= kBlockRingSlots) << tune << " " << r;
    }
  }
}

// A few examples of the tuning, as the GPU tests' variants and the docs use them (each also
// covered by the sweep above): the nearest feed where one is not compiled.
TEST(FastPolicy, TuningExamples) {
  EXPECT_EQ(pol(2, 2, "feed=block").path.feed, Feed::kTma);                 // 2D's nearest
  EXPECT_EQ(pol(2, 2, "feed=tma", DType::f64).path.feed, Feed::kTma);       // f64 too, forced
  EXPECT_EQ(pol(3, 1, "feed=block", DType::f64).path.feed, Feed::kPrefetch);  // no f64 block ring
  EXPECT_EQ(pol(1, 64, "feed=ring").layout, Layout1D::streamed);            // not the padded tile
  EXPECT_EQ(pol(3, 1, "rows_3d=4").fallback.rows_per_warp, 2);  // the classic kernels: two at most
  EXPECT_EQ(pol(2, 4, "winograd=1,feed=ring").winograd, false);
  EXPECT_EQ(pol(2, 5, "pass_rows=8").last_pass_rows, 8);  // a tuning height: the last pass padded
}

// ---------------------------------------------------------------------------------------------
// Anchors: today's measured defaults at a few points (docs/notes/tuning.md). A retune changes
// these on purpose; they are pinned so that a change of the defaults is a visible decision, and
// so that the properties above are seen to hold for the table actually shipped.
// ---------------------------------------------------------------------------------------------
TEST(FastPolicy, MeasuredDefaultsAnchors) {
  // 1D: the block ring at r = 16, the padded tile at r = 64, streamed 16 unaligned at r = 24.
  EXPECT_EQ(pol(1, 16).layout, Layout1D::block_tile);
  EXPECT_EQ(pol(1, 64).layout, Layout1D::padded_tile);
  EXPECT_EQ(pol(1, 24, "", DType::f32, kUnaligned).layout, Layout1D::streamed);
  // 2D: the TMA ring in f32; the Winograd columns at r = 4 with the deep ring; 8 columns at
  // r = 6; passes of 16 rows at r = 12.
  FastPolicy p = pol(2, 4);
  EXPECT_EQ(p.path.feed, Feed::kTma);
  EXPECT_TRUE(p.winograd);
  EXPECT_EQ(p.slots * 100 + p.box_rows, 3 * 100 + 12);
  EXPECT_EQ(pol(2, 6).path.columns, 8);
  EXPECT_EQ(pol(2, 12).pass_rows, 16);
  // 3D: the block ring with two rows per warp at r = 1, the per-warp TMA ring at r = 4.
  p = pol(3, 1);
  EXPECT_EQ(p.path.feed, Feed::kBlock);
  EXPECT_EQ(p.path.rows_per_warp, 2);
  EXPECT_EQ(pol(3, 4).path.feed, Feed::kTma);
  // Under the modes, the default block-ring layouts up to r = 2 set the x ghosts in registers
  // (their kernels are compiled); the layouts only tuning reaches, from the table.
  for (const int r : {1, 2}) {
    const FastPolicy d = pol(3, r);
    EXPECT_TRUE(x_ghosts_in_registers(r, d.path.rows_per_warp, d.runs)) << "r = " << r;
    const FastPolicy t = pol(3, r, "rows_3d=4");
    EXPECT_FALSE(x_ghosts_in_registers(r, t.path.rows_per_warp, t.runs)) << "r = " << r;
    const FastPolicy u = pol(3, r, r == 1 ? "runs=1" : "runs=0");
    EXPECT_FALSE(x_ghosts_in_registers(r, u.path.rows_per_warp, u.runs)) << "r = " << r;
  }
}


// ---------------------------------------------------------------------------------------------
TEST(FastTuning, OutOfRangeIsAnErrorNamingTheField) {
  Problem p(2, {10, 10, 1}, 1, ones({3, 3}), DType::f32);
  auto error = [&](const FastTuning& t) { return test::error_of([&] { p.set_tuning(t); }); };
  auto expect = [&](const FastTuning& t, const std::string& field, const std::string& range) {
    const std::string e = error(t);
    EXPECT_NE(e.find("tuning." + field + " = "), std::string::npos) << e;
    EXPECT_NE(e.find("expected " + range), std::string::npos) << e;
  };
  FastTuning t;
  t.depth = 0;
  expect(t, "depth", "1..4");
  t = {};
  t.depth = 5;
  expect(t, "depth", "1..4");
  t = {};
  t.slots = 1;
  expect(t, "slots", "2..16");
  t = {};
  t.slots = 17;
  expect(t, "slots", "2..16");
  t = {};
  t.box_rows = 0;
  expect(t, "box_rows", "1..16");
  t = {};
  t.tx = 6;
  expect(t, "tx", "4 or 8");
  t = {};
  t.tx_1d = 4;
  expect(t, "tx_1d", "8, 16 or 32");
  t = {};
  t.rows_3d = 3;
  expect(t, "rows_3d", "1, 2 or 4");
  t = {};
  t.hints = 4;
  expect(t, "hints", "0..3");
  t = {};
  t.chunk = 0;
  expect(t, "chunk", "1..1073741824");
  t = {};
  t.pass_rows = 10;
  expect(t, "pass_rows", "0, 8, 12 or 16");
  t = {};
  t.l2_promotion = 32;
  expect(t, "l2_promotion", "0, 64, 128 or 256");
  t = {};
  t.edge_cost = 101;
  expect(t, "edge_cost", "0..100");
  t = {};
  t.feed = FastFeed(7);
  expect(t, "feed", "direct, prefetch, ring, tma or block");
  // The tuning stays as it was after a refusal; a valid one is taken.
  EXPECT_TRUE(p.tuning().empty());
  t = {};
  t.slots = 16;
  t.winograd = false;
  p.set_tuning(t);
  EXPECT_EQ(p.tuning().slots, 16);
  EXPECT_FALSE(p.tuning().empty());
  // apply() checks Options::tuning whatever the strategy.
  std::vector<float> in(100, 1.0f), out(100);
  Options opt;
  opt.strategy = "reference";
  opt.tuning.hints = -1;
  const std::string e = test::error_of([&] {
    apply(view(static_cast<const float*>(in.data()), {10, 10}), view(out.data(), {10, 10}),
          ones({3, 3}), opt);
  });
  EXPECT_NE(e.find("tuning.hints = -1 is out of range: expected 0..3"), std::string::npos) << e;
}

TEST(FastTuning, ParsesKeyValueListsStrictly) {
  const FastTuning t = detail::parse_fast_tuning(
      "feed=tma,slots=2,box_rows=3,winograd=0,tx_1d=16,l2_promotion=64", "--tune");
  EXPECT_EQ(t.feed, FastFeed::tma);
  EXPECT_EQ(t.slots, 2);
  EXPECT_EQ(t.box_rows, 3);
  EXPECT_EQ(t.winograd, false);
  EXPECT_EQ(t.tx_1d, 16);
  EXPECT_EQ(t.l2_promotion, 64);
  EXPECT_FALSE(t.depth.has_value());
  EXPECT_EQ(detail::tuning_string(t),
            "feed=tma,slots=2,box_rows=3,tx_1d=16,winograd=0,l2_promotion=64");
  EXPECT_EQ(detail::tuning_string(FastTuning{}), "defaults");
  // Every variant of the GPU tests parses, and prints back as given.
  for (const std::string& v : test::fast_tuning_variants())
    EXPECT_EQ(detail::tuning_string(detail::parse_fast_tuning(v, "variant")), v);
  auto error = [](const std::string& text) {
    return test::error_of([&] { detail::parse_fast_tuning(text, "--tune"); });
  };
  EXPECT_NE(error("tx=5").find("--tune tx=5: expected 4 or 8"), std::string::npos) << error("tx=5");
  EXPECT_NE(error("feed=warp").find("--tune feed=warp: expected direct, prefetch, ring, tma or "
                                    "block"),
            std::string::npos);
  EXPECT_NE(error("winograd=2").find("--tune winograd=2: expected 0 or 1"), std::string::npos);
  EXPECT_NE(error("slots=0x4").find("--tune slots=0x4: expected 2..16"), std::string::npos);
  EXPECT_NE(error("slots=").find("--tune slots=: expected 2..16"), std::string::npos);
  EXPECT_NE(error("slot=2").find("--tune: unknown key 'slot' (expected feed, prefetch"),
            std::string::npos)
      << error("slot=2");
  EXPECT_NE(error("slots=2,slots=3").find("--tune: slots given twice"), std::string::npos);
  EXPECT_NE(error("slots").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error("").find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error("slots=2,").find("expected KEY=VALUE"), std::string::npos);
}


// ---------------------------------------------------------------------------------------------
// The chunking helpers, over many sizes.
// ---------------------------------------------------------------------------------------------
// fit_chunks: the chunks cover the axis once, none shorter than max(16, 8R) unless the axis is,
// at most the chunk counts it searches, and none of those wastes less (idle slots of the last
// wave, and the 2R halo rows each chunk re-reads: the documented measure); a forced length is
// taken, cut to the axis.
// Catches: rows skipped or computed twice, chunks too short for their halo, a split that leaves
// the last wave emptier than another would, a forced chunk ignored.
TEST(FastPolicy, ChunksCoverTheAxisOnceAndWasteLeast) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  // The share of the launched slots doing new rows, for chunks of `len` rows.
  auto use = [&](std::int64_t n, std::int64_t len, std::int64_t per, int R, std::int64_t res) {
    const std::int64_t items = ceil_div(n, len) * per, waves = ceil_div(items, res);
    return double(items) / double(waves * res) * double(len) / double(len + 2 * R);
  };
  for (const std::int64_t n : {1, 2, 7, 16, 40, 64, 300, 1023, 16384, 1 << 22})
    for (const int R : {0, 1, 3, 8, 15})
      for (const std::int64_t per : {1, 3, 7, 128, 4096, 1 << 20})
        for (const std::int64_t res : {1, 4, 64, 528, 4224}) {
          SCOPED_TRACE(std::to_string(n) + " rows, r " + std::to_string(R) + ", " +
                       std::to_string(per) + " per chunk, " + std::to_string(res) + " resident");
          const Chunking c = fit_chunks(n, per, R, res);
          ASSERT_GE(c.chunk, 1);
          EXPECT_EQ(c.chunks, ceil_div(n, c.chunk));
          EXPECT_GE(c.chunk, std::min<std::int64_t>(n, std::max(16, 8 * R)));
          EXPECT_LE(c.chunks, std::max<std::int64_t>(1, 8 * res / per + 1));
          const double got = use(n, c.chunk, per, R, res);
          const std::int64_t shortest = std::min<std::int64_t>(n, std::max(16, 8 * R));
          double best = 0;
          for (std::int64_t want = 1; want <= std::min(n / shortest, 8 * res / per + 1); ++want)
            best = std::max(best, use(n, ceil_div(n, want), per, R, res));
          EXPECT_GE(got + 1e-9, best);
          // Work that fills whole waves alone stays in one chunk (no halo re-read).
          EXPECT_TRUE(per % res != 0 || c.chunks == 1);
          for (const std::int64_t forced : {1, 5, 1 << 30}) {
            const Chunking d = fit_chunks(n, per, R, res, forced);
            EXPECT_EQ(d.chunk, std::min(forced, n));
            EXPECT_EQ(d.chunks, ceil_div(n, d.chunk));
          }
        }
  // A documented example: 64 rows, one warp per chunk, 4 resident: four chunks of 16.
  const Chunking c = fit_chunks(64, 1, 1, 4);
  EXPECT_EQ(c.chunk * 10 + c.chunks, 16 * 10 + 4);
}

// even_runs: one run per resident block at most, and no more runs than `shortest` units fit in
// the work (rounded up, so that runs of equal length may fall a little short of it), the runs
// covering the work once and equal to a unit; a forced length is taken (runs no longer than it,
// as many as it needs).
// Catches: more blocks than one wave, runs shorter than their halo's cost, units dropped.
TEST(FastPolicy, EvenRunsShareTheWorkInOneWave) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  for (const std::int64_t total : {0, 1, 5, 16, 100, 1000, 12345, 1 << 24})
    for (const std::int64_t shortest : {1, 16, 24, 40})
      for (const std::int64_t res : {0, 1, 10, 132, 1056}) {
        SCOPED_TRACE(std::to_string(total) + " units, shortest " + std::to_string(shortest) +
                     ", " + std::to_string(res) + " resident");
        const std::int64_t work = std::max<std::int64_t>(total, 1);
        const std::int64_t len = even_runs(total, shortest, res);
        ASSERT_GE(len, 1);
        const std::int64_t blocks = ceil_div(work, len);
        EXPECT_LE(blocks, std::max<std::int64_t>(res, 1));
        // No more runs than `shortest` units fit in the work (rounded up): each about as long.
        EXPECT_LE(blocks, ceil_div(work, shortest));
        EXPECT_LT((blocks - 1) * len, work);
        // Equal: the runs differ by at most one unit from the mean (the last may be shorter).
        EXPECT_LT(len * blocks - work, blocks);
        for (const std::int64_t forced : {1, 7, 1 << 20}) {
          const std::int64_t f = even_runs(total, shortest, res, forced);
          EXPECT_LE(f, forced);
          EXPECT_EQ(ceil_div(work, f), ceil_div(work, forced));
        }
      }
  // Worked examples: 10 runs of 100; 7 runs of 15 (not 6 of 16 and one of 4); less work than a
  // run: one run of all of it; forced runs of 7; no work: one unit.
  EXPECT_EQ(even_runs(1000, 16, 10), 100);
  EXPECT_EQ(even_runs(100, 16, 132), 15);
  EXPECT_EQ(even_runs(5, 16, 132), 5);
  EXPECT_EQ(even_runs(1000, 16, 10, 7), 7);
  EXPECT_EQ(even_runs(0, 16, 10), 1);
}

// Equal runs by cost (the block ring with modes): cost() against a count tile by tile, pos()
// against a scan of the positions, and the runs that pos() cuts cover every tile-plane once,
// each run's cost within a tile-plane of the others', on shapes with one or several strips and
// y-tiles, a batch, each axis's edges, and columns whose ends count more.
TEST(FastPolicy, EqualRunsByCostCoverEveryTilePlaneOnce) {
  for (const std::int64_t strips : {1, 2, 5})
    for (const std::int64_t ytiles : {1, 2, 3, 40})
      for (const std::int64_t batch : {1, 3})
        for (const int flags : {0, 1, 2, 3})
          for (const std::int64_t nz : {1, 7})
            for (const std::int64_t ends : {0, 2}) {
              EdgeCosts e;
              e.strips = strips;
              e.ytiles = ytiles;
              e.nz = nz;
              e.ends = ends;
              e.plain = 100;
              e.edge = 130;
              e.xe = flags & 1;
              e.ye = flags & 2;
              SCOPED_TRACE(std::to_string(strips) + "x" + std::to_string(ytiles) + " batch " +
                           std::to_string(batch) + " flags " + std::to_string(flags) + " nz " +
                           std::to_string(nz) + " ends " + std::to_string(ends));
              const std::int64_t tiles = strips * ytiles * batch;
              auto weight = [&](std::int64_t t) {
                const std::int64_t s = t % (strips * ytiles) / ytiles, y = t % ytiles;
                return (e.xe && (s == 0 || s == strips - 1)) ||
                               (e.ye && (y == 0 || y == ytiles - 1))
                           ? e.edge
                           : e.plain;
              };
              auto plane_cost = [&](std::int64_t p) {  // position p = tile * nz + z
                const std::int64_t z = p % nz;
                return weight(p / nz) * (1 + (z == 0 ? ends : 0) + (z == nz - 1 ? ends : 0));
              };
              std::int64_t sum = 0;
              for (std::int64_t t = 0; t <= tiles; ++t) {
                ASSERT_EQ(e.cost(t), sum * (nz + 2 * ends));
                if (t < tiles) sum += weight(t);
              }
              // pos(c): the first position whose cost before it is at least c.
              std::int64_t p = 0, before = 0;
              for (std::int64_t c = 0; c <= e.cost(tiles); c += 7) {
                while (before < c) before += plane_cost(p++);
                ASSERT_EQ(e.pos(c, tiles), p) << "cost " << c;
              }
              EXPECT_EQ(e.pos(e.cost(tiles), tiles), tiles * nz);
              for (const std::int64_t runs : {1, 3, 17, 132}) {
                const std::int64_t total = e.cost(tiles), per = (total + runs - 1) / runs;
                std::int64_t at = e.pos(0, tiles);
                EXPECT_EQ(at, 0);
                for (std::int64_t i = 0; i < runs; ++i) {
                  const std::int64_t end = e.pos(std::min(total, (i + 1) * per), tiles);
                  EXPECT_GE(end, at);
                  std::int64_t c = 0;  // the run's cost, within a plane's of `per`
                  for (std::int64_t q = at; q < end; ++q) c += plane_cost(q);
                  if (end < tiles * nz) EXPECT_LE(std::abs(c - per), e.edge * (1 + 2 * ends)) << i;
                  at = end;
                }
                EXPECT_EQ(at, tiles * nz) << "runs " << runs;
              }
            }
}

// A box filter (every weight 1/K) never takes the Winograd columns, whose stores skip the
// division of a box's sums, even where the tuning forces them; the same extents of other weights
// do where they are compiled.
// Catches: a box's sums stored undivided (box_taps_of not consulted, or one that misses a box).
TEST(FastPolicy, BoxFiltersNeverTakeTheWinogradColumns) {
  for (const int r : compiled_radii(2, DType::f32)) {
    const std::int64_t k = 2 * r + 1;
    const Filter box(std::vector<double>(std::size_t(k * k), 1.0 / double(k * k)), {k, k});
    for (const std::string tune : {"", "winograd=1"}) {
      Problem p(2, {300, 300, 1}, 1, box, DType::f32);
      if (!tune.empty()) p.set_tuning(detail::parse_fast_tuning(tune, "tune"));
      EXPECT_EQ(box_taps_of(p), k * k);
      EXPECT_FALSE(fast_policy(p, DeviceFacts{}, Alignment{}).winograd) << r << " " << tune;
    }
    EXPECT_EQ(pol(2, r, "winograd=1").winograd, wino_compiled(r, 2 * r + 1)) << r;
    if (r > 0)  // (a single weight of 1 is a box)
      EXPECT_EQ(box_taps_of(Problem(2, {300, 300, 1}, 1, ones({k, k}), DType::f32)), 0);
  }
}

}  // namespace
}  // namespace halo::cuda::fast
