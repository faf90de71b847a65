/* strategy: fast — halo's own kernels, beyond the seed notes: register blocking and streaming.
 *
 * 1D: a warp owns 128 consecutive outputs, or a lane 8 or 16 for large halos (fast_1d.cu). 2D: a
 * warp owns a 128-column strip and streams down a chunk of rows, keeping the 2R+1 output rows in
 * flight in registers (fast_2d.cu). 3D: the same along z, a warp per (y-row(s), 128-column strip)
 * (fast_3d.cu). How the rows reach the FFMAs is chosen per rank and radius from measurements
 * (fast_kernels.cuh, Feed): loaded as needed, prefetched into registers up to 4 rows ahead,
 * copied by cp.async into a warp-private shared-memory ring, or (f32, rows of a 16-byte pitch, on
 * sm_90) copied by the tensor memory accelerator, many rows per copy: into a warp-private ring
 * (2D), or into a block-wide ring that the block's 8 warps read together (BlockRing: 1D segments
 * of 2048 outputs, 3D planes of a 128 x 16 tile), the zero ghost cells given by the tensor map's
 * bounds or by the reads at a row's ends. No block-wide barriers (the block ring's slots are
 * handed over by mbarriers); the weights are kernel parameters, so every tap is one FFMA with a
 * constant-bank operand (staged by nvcc through uniform registers), except in the 2D kernels
 * whose columns run in Winograd F(2,3) form (fast_2d.cu: 2/3 of the FFMAs). A filter is zero-padded into the (2R+1)^d window of the smallest
 * compiled radius R that covers its halo on every axis (even and off-centre filters included);
 * radii beyond the compiled ones are left to the tiled strategies (can_implement says so). The
 * grid is sized from the kernel's measured occupancy, the streamed axis split so that the last
 * wave is full (3D FFMA-bound radii: one wave of equal runs of tile-planes, even_runs()).
 */
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "cuda/border.hpp"
#include "cuda/check.cuh"
#include "cuda/fast_kernels.cuh"

#include <cudaTypedefs.h>

namespace halo::cuda::fast {
namespace {

int compiled_radius(int rank, DType t, int r) {
  return rank == 1 ? compiled_radius_1d(t, r)
                   : rank == 2 ? compiled_radius_2d(t, r) : compiled_radius_3d(t, r);
}

// The filter's correlation weights placed in the (2R+1)^rank window centred on the output.
std::vector<double> padded_window(const Problem& p, int R) {
  const int K = 2 * R + 1;
  const int rank = p.rank();
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::vector<double>& w = p.correlation_weights();
  const std::int64_t kz = rank == 3 ? K : 1, ky = rank >= 2 ? K : 1;
  std::vector<double> win(static_cast<std::size_t>(kz * ky * K), 0.0);
  for (std::int64_t jz = 0; jz < k.z; ++jz)
    for (std::int64_t jy = 0; jy < k.y; ++jy)
      for (std::int64_t jx = 0; jx < k.x; ++jx) {
        const std::int64_t wz = rank == 3 ? jz - a.z + R : 0;
        const std::int64_t wy = rank >= 2 ? jy - a.y + R : 0;
        const std::int64_t wx = jx - a.x + R;
        win[(wz * ky + wy) * K + wx] = w[(jz * k.y + jy) * k.x + jx];
      }
  return win;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

int multiprocessors() {
  int dev = 0, sms = 0;
  HALO_CUDA_CHECK(cudaGetDevice(&dev), "querying the current device");
  HALO_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                  "querying the multiprocessor count");
  return sms;
}

void fit_chunks(Geometry& g, std::int64_t stream_len, std::int64_t per_chunk, int R,
                std::int64_t resident) {
  static const int forced = tuning_knob("HALO_FAST_CHUNK");  // rows or planes per chunk
  if (forced >= 1) {
    g.chunk = std::min<std::int64_t>(forced, std::max<std::int64_t>(stream_len, 1));
    g.chunks = ceil_div(stream_len, g.chunk);
    return;
  }
  resident = std::max<std::int64_t>(resident, 1);
  const std::int64_t shortest =
      std::min<std::int64_t>(stream_len, std::max<std::int64_t>(16, 8 * R));
  const std::int64_t most = std::max<std::int64_t>(
      1, std::min(stream_len / std::max<std::int64_t>(shortest, 1), 8 * resident / per_chunk + 1));
  double best = -1;
  for (std::int64_t want = 1; want <= most; ++want) {
    const std::int64_t len = ceil_div(stream_len, want), chunks = ceil_div(stream_len, len);
    const std::int64_t items = chunks * per_chunk;
    const std::int64_t waves = ceil_div(items, resident);
    const double use = double(items) / double(waves * resident) * double(len) / double(len + 2 * R);
    if (use > best + 1e-9) {
      best = use;
      g.chunk = len;
      g.chunks = chunks;
    }
  }
}

std::int64_t even_runs(std::int64_t total, std::int64_t shortest, std::int64_t resident) {
  static const int forced = tuning_knob("HALO_FAST_CHUNK");  // units per run
  total = std::max<std::int64_t>(total, 1);
  const std::int64_t runs =
      forced >= 1 ? ceil_div(total, forced)
                  : std::min(std::max<std::int64_t>(resident, 1),
                             ceil_div(total, std::max<std::int64_t>(shortest, 1)));
  return ceil_div(total, std::max<std::int64_t>(runs, 1));
}

namespace {

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
    const int r = static_cast<int>(p.max_radius());
    if (compiled_radius(p.rank(), p.dtype(), r) < 0) {
      int top = 0;
      for (int x = 0; x <= 128; ++x)
        if (compiled_radius(p.rank(), p.dtype(), x) == x) top = x;
      return Status::failure("compiled for halos up to " + std::to_string(top) + " in " +
                             std::to_string(p.rank()) + "D " + to_string(p.dtype()) +
                             "; this filter needs " + std::to_string(r));
    }
    return Status::success();
  }
  int priority(const Problem&) const override { return 100; }
  std::string plan(const Problem& p) const override {
    const int r = static_cast<int>(p.max_radius());
    const int R = compiled_radius(p.rank(), p.dtype(), r);
    if (R < 0) return can_implement(p).reason;
    const int K = 2 * R + 1;
    std::string window = std::to_string(K);
    for (int i = 1; i < p.rank(); ++i) window += "x" + std::to_string(K);
    const std::string how = p.rank() == 1   ? plan_1d(p.dtype(), R)
                            : p.rank() == 2 ? plan_2d(p.dtype(), R, !p.direct_sums())
                                            : plan_3d(p.dtype(), R);
    return "halo " + std::to_string(r) + " -> compiled radius " + std::to_string(R) + " (" +
           window + " window of weights as FFMA operands); " + how +
           (p.zero_ghosts() ? "" : "; then a border pass recomputes the outputs within reach of "
                                   "an edge under the boundary modes");
  }
  Summation summation(const Problem& p) const override {
    const int R = compiled_radius(p.rank(), p.dtype(), static_cast<int>(p.max_radius()));
    return p.rank() == 2 && R >= 0 && winograd_2d(p.dtype(), R, !p.direct_sums())
               ? Summation::winograd_x
               : Summation::direct;
  }
  Traffic model(const Problem& p) const override {
    // Each element read from DRAM about once and written once; the FLOPs of the padded window.
    const int R = compiled_radius(p.rank(), p.dtype(), static_cast<int>(p.max_radius()));
    double taps = 1;
    for (int i = 0; i < p.rank(); ++i) taps *= 2 * R + 1;
    return {p.bytes(), 2.0 * taps * double(p.elements())};
  }
  void run(const Problem& p, const Buffers& b, void* stream) const override {
    if (p.dtype() == DType::f32)
      run_typed(p, static_cast<const float*>(b.input), static_cast<float*>(b.output), stream);
    else
      run_typed(p, static_cast<const double*>(b.input), static_cast<double*>(b.output), stream);
  }

 private:
  template <class T>
  void run_typed(const Problem& p, const T* in, T* out, void* stream) const {
    const int R = compiled_radius(p.rank(), p.dtype(), static_cast<int>(p.max_radius()));
    if (R < 0) throw Error("fast: " + can_implement(p).reason);
    const std::vector<double> win = padded_window(p, R);
    const Dims3 d = p.dims3();
    Geometry g;
    g.batch = p.batch();
    g.nz = d.z;
    g.ny = d.y;
    g.nx = d.x;
    g.vec = d.x % 4 == 0 && aligned16(in) && aligned16(out);
    auto s = static_cast<cudaStream_t>(stream);
    bool ok = false;
    if (p.rank() == 1) {
      ok = launch_1d(in, out, g, R, win.data(), s);  // it sets strips and items
    } else if (p.rank() == 2) {
      g.strips = ceil_div(d.x, 32 * kTx);  // the launcher splits the rows into chunks
      ok = launch_2d(in, out, g, R, win.data(), s, !p.direct_sums());
    } else {
      g.strips = ceil_div(d.x, 32 * kTx);  // the launcher splits the planes into chunks
      ok = launch_3d(in, out, g, R, win.data(), s);
    }
    if (!ok) throw Error("fast: no kernel compiled for radius " + std::to_string(R));
    // Other modes than zero ghosts: the kernels padded with zeros; the band near the edges is
    // recomputed under the modes.
    if (!p.zero_ghosts()) border_pass(p, in, out, stream);
  }
};

}  // namespace

int tuning_knob(const char* name) {
  const char* e = std::getenv(name);
  if (!e || !*e) return -1;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  return *end || v < 0 || v > 1000 ? -1 : static_cast<int>(v);
}

namespace {
// A tuning knob's value when it lies in [lo, hi]; -1 otherwise (unset, not a number, out of range).
int knob_in(const char* name, int lo, int hi) {
  const int k = tuning_knob(name);
  return k >= lo && k <= hi ? k : -1;
}
}  // namespace

int prefetch_override() {
  static const int v = knob_in("HALO_FAST_PREFETCH", 0, 1);
  return v;
}

int feed_override() {
  static const int v = knob_in("HALO_FAST_FEED", 0, 4);
  return v;
}

int slots_override() {
  static const int v = knob_in("HALO_FAST_SLOTS", 2, 16);  // the kernels hold 16 mbarriers
  return v;
}

int box_rows_override() {
  static const int v = knob_in("HALO_FAST_BOX_ROWS", 1, 16);
  return v;
}

int block_slots(int fallback) {
  const int forced = slots_override();
  return forced >= 2 && forced <= kBlockRingSlots ? forced : fallback;
}

namespace {

// cuTensorMapEncodeTiled, through the runtime (no link against the driver library), or null.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // a missing entry point is not an error of the next launch
      return PFN_cuTensorMapEncodeTiled_v12000(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// The L2 promotion of a tensor map's reads: 0 (none), 64, 128 or 256 bytes (HALO_FAST_L2_PROMO
// overrides the caller's choice, for tuning).
CUtensorMapL2promotion promotion(int bytes) {
  static const int forced = tuning_knob("HALO_FAST_L2_PROMO");
  switch (forced >= 0 ? forced : bytes) {
    case 0:
      return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case 64:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    default:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
}

}  // namespace

bool tma_capable() {
  static const bool v = [] {
    int dev = 0, major = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ==
               cudaSuccess &&
           major >= 9;
  }();
  return v;
}

bool make_row_map(CUtensorMap* map, const void* base, int elem_bytes, std::int64_t nx,
                  std::int64_t ny, std::int64_t nz, std::int64_t batch, int box_w, int box_rows,
                  int l2_promotion) {
  const std::int64_t limit = std::int64_t(1) << 31;  // coordinates are 32-bit signed
  if (!tma_capable() || (nx * elem_bytes) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(base) % 16 != 0 || nx >= limit || ny >= limit ||
      nz >= limit || batch >= limit || box_w > 256 || box_rows > 256 ||
      (box_w * elem_bytes) % 16 != 0)
    return false;
  const auto encode = tensor_map_encoder();
  if (!encode) return false;
  const cuuint64_t dims[4] = {cuuint64_t(nx), cuuint64_t(ny), cuuint64_t(nz), cuuint64_t(batch)};
  const cuuint64_t row = cuuint64_t(nx) * elem_bytes;
  const cuuint64_t strides[3] = {row, row * cuuint64_t(ny), row * cuuint64_t(ny) * cuuint64_t(nz)};
  const cuuint32_t box[4] = {cuuint32_t(box_w), cuuint32_t(box_rows), 1, 1};
  const cuuint32_t unit[4] = {1, 1, 1, 1};
  return encode(map, elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                4, const_cast<void*>(base), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion(l2_promotion),
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

int depth_override() {
  static const int v = knob_in("HALO_FAST_DEPTH", 1, 4);
  return v;
}

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
