// The overlap-save tiling of the FFT strategies: a search over transform lengths per axis under
// a backend's cost model (fft_tiling.hpp).
#include "core/fft_tiling.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/detail.hpp"
#include "core/dtype.hpp"
#include "core/profile.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {
namespace {

using std::int64_t;

// The transform lengths, ascending: 1, the powers of 2, and from 128 up 2^a m with m in
// {3, 5, 9, 15, 25}, up to 2^30. Under FFTW_ESTIMATE the other 5-smooth lengths (27, 45, 81 ...
// times a power of 2), and below 128 all but the powers of 2, measured up to twice as slow per
// element (docs/notes/tuning.md, cpu_fft); cuFFT runs all of these with its radix-2, 3 and 5
// kernels.
const std::vector<int64_t>& lengths() {
  static const std::vector<int64_t> v = [] {
    std::vector<int64_t> out{1};
    for (int64_t m : {1, 3, 5, 9, 15, 25})
      for (int64_t len = 2 * m; len <= (int64_t(1) << 30); len *= 2)
        if (m == 1 || len >= 128) out.push_back(len);
    std::sort(out.begin(), out.end());
    return out;
  }();
  return v;
}

double tile_ns(const FftCost& m, double n) {
  return n * (m.a * std::log2(std::max(2.0, n)) + m.b) + m.c;
}

// The candidates of one axis: (transform length, outputs per tile, tiles along the axis).
struct AxisChoice {
  int64_t fft, tile, tiles;
};
std::vector<AxisChoice> axis_choices(int64_t n, int64_t k, bool transformed, const char* who,
                                     bool pow2, int64_t min_len) {
  if (!transformed) return {{1, 1, n}};
  std::vector<AxisChoice> c;
  const int64_t need = n + k - 1;  // one tile covers the axis from here on
  const int64_t top = lengths().back();
  if (k > top)
    throw Error(std::string(who) + ": a filter of " + std::to_string(k) +
                " taps along an axis needs a transform beyond 2^30");
  const int64_t last = need > top ? top : fft_length_at_least(need);
  for (int64_t len : lengths()) {
    if (len < k || (len < min_len && len != last) || (pow2 && (len & (len - 1)) && len != last))
      continue;
    if (len > last) break;
    const int64_t t = std::min(len - k + 1, n);
    c.push_back({len, t, (n + t - 1) / t});
  }
  return c;
}

}  // namespace

int64_t fft_length_at_least(int64_t n) {
  const auto& v = lengths();
  const auto it = std::lower_bound(v.begin(), v.end(), n);
  if (it == v.end()) throw Error("fft: a transform of " + std::to_string(n) + " is too long");
  return *it;
}

FftTiling fft_tiling(const Problem& p, const FftCost& m) {
  const Dims3 nd = p.dims3(), kd = p.filter_dims3();
  const int64_t n[3] = {nd.z, nd.y, nd.x}, k[3] = {kd.z, kd.y, kd.x};
  std::vector<AxisChoice> c[3];
  // The tile cap, raised where even the shortest tiles (about K outputs per axis, or the whole
  // axis) do not fit in it.
  double least = 1;
  for (int a = 0; a < 3; ++a) {
    c[a] = axis_choices(n[a], k[a], k[a] > 1 || a == 2, m.who, m.pow2, a == 2 ? m.min_x : 1);
    least *= double(fft_length_at_least(std::min(2 * k[a] - 1, n[a] + k[a] - 1)));
  }
  const double cap = std::max(m.cap, least);
  if (cap > double(INT_MAX) / 2)
    throw Error(std::string(m.who) + ": the filter (" + join_extents(p.filter_extents(), p.rank()) +
                " taps after folding) needs transforms beyond the libraries' int extents");
  FftTiling best;
  double best_cost = -1;
  for (const AxisChoice& z : c[0])
    for (const AxisChoice& y : c[1]) {
      if (double(z.fft) * double(y.fft) > cap) break;
      for (const AxisChoice& x : c[2]) {
        const double len = double(z.fft) * double(y.fft) * double(x.fft);
        if (len > cap) break;
        const double tiles =
            double(p.batch()) * double(z.tiles) * double(y.tiles) * double(x.tiles);
        const double split = std::ceil(tiles / double(m.split)) * double(m.split);
        const double cost = tile_ns(m, len) * split;
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best.tile = {z.tile, y.tile, x.tile};
          best.fft = {z.fft, y.fft, x.fft};
          best.tiles = z.tiles * y.tiles * x.tiles;
          best.fft_ns = tile_ns(m, len) * tiles;
        }
      }
    }
  if (best_cost < 0)
    throw Error(std::string(m.who) + ": no transform lengths fit the filter (" +
                join_extents(p.filter_extents(), p.rank()) + ") within the tile cap");
  return best;
}

// ---------------------------------------------------------------------------------------------
// The CUDA strategy's model (H100, docs/notes/tuning.md, FFT on the GPU).
// ---------------------------------------------------------------------------------------------
namespace {

// A tile element costs its gather, the transforms' passes over the tile buffer, the product and
// the write: a ps figure plus one per stage (log2 L), per element (profile::Gpu). Per tile:
// nothing (the transforms run batched). Powers of 2 only: cuFFT's mixed-radix lengths measured up
// to 1.45x slower per element (384 x 576 and 400 x 576 against 512 x 512: docs/notes/tuning.md,
// FFT on the GPU). Transforms along x of 32 or more: the model counts no cost for narrow tiles,
// whose gathers read 4 bytes per 32-byte sector (a filter along y alone took tiles of 1 column).
FftCost cuda_cost(DType t, const profile::Gpu& g) {
  const double a = per_dtype(t, g.fft_stage_ns_f32, g.fft_stage_ns_f64, "fft's cost model");
  const double b = per_dtype(t, g.fft_element_ns_f32, g.fft_element_ns_f64, "fft's cost model");
  return {a, b, 0.0, 0, 1, "fft", true, 32};
}
// The row transforms (float32): each element read or written at the copy's rate (the windows'
// N / T inputs per output read), then each pair's transform per point (profile::Gpu).
double rows_move_ns(double elements, const profile::Gpu& g) {
  return elements * double(sizeof(float)) / g.copy_bytes_per_ns;
}

}  // namespace

// The row transforms (src/cuda/fft/rows.cu): a pair of segments per transform of N complex
// points, N of 1024, 2048 or 4096: the N of least modelled time, or where FastTuning::fft_tile is
// set the least N of at least 2^fft_tile points that fits the filter; none (tiles = 0) where the
// problem is not a float32 filter along x alone, the tuning turns them off, or no N fits.
FftTiling cuda_fft_rows(const Problem& p) {
  FftTiling best;
  best.tiles = 0;
  const FastTuning& tune = p.tuning();
  const Dims3 n = p.dims3(), k = p.filter_dims3();
  if (p.dtype() != DType::f32 || k.z != 1 || k.y != 1 || !tune.fft_shared.value_or(true))
    return best;
  const int64_t least = tune.fft_tile ? int64_t(1) << *tune.fft_tile : 0;
  const double elements = double(p.elements());
  const profile::Gpu g = profile::gpu(tune);
  double best_ns = -1;
  for (int64_t N : {1024, 2048, 4096}) {
    if (N < k.x || N < least || (least && best_ns >= 0)) continue;
    // Segments of seg outputs, those of consecutive rows paired (src/cuda/fft/rows.cu).
    const int64_t seg = N - k.x + 1, segs = (n.x + seg - 1) / seg;
    const double pairs = std::ceil(double(segs) * double(n.y * n.z * p.batch()) / 2);
    const double per_point = g.fft_rows_point_ns[N == 1024 ? 0 : N == 2048 ? 1 : 2];
    // The DRAM traffic (each segment reads N inputs for its T outputs) and the transforms.
    const double ns =
        rows_move_ns(elements * (1 + double(N) / double(seg)), g) + pairs * double(N) * per_point;
    if (best_ns >= 0 && ns >= best_ns) continue;
    best_ns = ns;
    best.shared = true;
    best.fft = {1, 1, N};
    best.tile = {1, 1, std::min(2 * seg, n.x)};
    best.tiles = (segs * n.y * n.z + 1) / 2;
    best.window_scale = segs * n.y * n.z * p.batch() > 1 ? std::sqrt(2.0) : 1.0;
    best.fft_ns = ns + g.fft_rows_setup_ns;
  }
  return best;
}

// The 2-D tile transforms (src/cuda/fft/tiles.cu): a pair of tiles of (64 - ky + 1) x
// (128 - kx + 1) outputs per complex transform of 64 x 128 points, for float32 filters of
// 2..33 rows and 2..65 columns (kz = 1: each plane of a volume on its own); none (tiles = 0)
// elsewhere, where the tuning turns them off or asks for transforms beyond 2^13 points.
FftTiling cuda_fft_tiles(const Problem& p) {
  FftTiling best;
  best.tiles = 0;
  const FastTuning& tune = p.tuning();
  const Dims3 n = p.dims3(), k = p.filter_dims3();
  if (p.dtype() != DType::f32 || k.z != 1 || k.y < 2 || k.y > 33 || k.x < 2 || k.x > 65 ||
      !tune.fft_shared.value_or(true) || (tune.fft_tile && *tune.fft_tile > 13))
    return best;
  const int64_t ty = 64 - k.y + 1, tx = 128 - k.x + 1;
  const int64_t rows = (n.y + ty - 1) / ty, pairs = (n.x + 2 * tx - 1) / (2 * tx);
  best.shared = true;
  best.fft = {1, 64, 128};
  best.tile = {1, std::min(ty, n.y), std::min(2 * tx, n.x)};
  best.tiles = rows * pairs * n.z;
  best.window_scale = n.x > tx ? std::sqrt(2.0) : 1.0;
  const profile::Gpu g = profile::gpu(tune);
  best.fft_ns = double(best.tiles) * double(p.batch()) * g.fft_tile_pair_ns + g.fft_rows_setup_ns;
  return best;
}

FftTiling cuda_fft_tiling(const Problem& p) {
  const FastTuning& t = p.tuning();
  const profile::Gpu g = profile::gpu(t);
  FftCost m = cuda_cost(p.dtype(), g);
  FftTiling shared = cuda_fft_rows(p);
  if (shared.tiles == 0) shared = cuda_fft_tiles(p);
  if (shared.tiles > 0) {
    shared.direct_ns =
        2.0 * double(p.elements()) * double(p.taps()) / g.direct_flops_f32;
    // The rows of a 2-D or 3-D array go to `separable`'s x pass, which measured the copy plus
    // the taps at that rate, not overlapped (docs/notes/tuning.md, "Row transforms in shared
    // memory").
    if (p.rank() > 1 && shared.fft[1] == 1)
      shared.direct_ns += rows_move_ns(2.0 * double(p.elements()), g);
    return shared;
  }
  m.cap = double(int64_t(1) << (t.fft_tile ? *t.fft_tile : p.rank() == 1 ? 16 : 18));
  FftTiling best = fft_tiling(p, m);
  best.fft_ns += g.fft_setup_ns;
  best.direct_ns = 2.0 * double(p.elements()) * double(p.taps()) /
                   per_dtype(p.dtype(), g.direct_flops_f32, g.direct_flops_f64,
                             "fft's direct-sum rate");
  return best;
}

double cuda_fft_weighed_ns(const Problem& p, const FftTiling& t) {
  return t.fft_ns * p.tuning().fft_cost.value_or(profile::gpu().fft_cost_percent) / 100.0;
}

int64_t cuda_fft_batch(const Problem& p, const FftTiling& t) {
  const FastTuning& tune = p.tuning();
  const double bytes = double(tune.fft_batch ? *tune.fft_batch : 128) * 1048576.0;
  const double per_tile =
      double(t.fft[0] * t.fft[1] * 2 * (t.fft[2] / 2 + 1)) * double(dtype_size(p.dtype()));
  const int64_t total = t.tiles * p.batch();
  return std::clamp<int64_t>(int64_t(bytes / per_tile), 1, total);
}

}  // namespace halo::detail
