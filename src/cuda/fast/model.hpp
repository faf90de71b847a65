// `fast`'s time model (profile::Gpu), which its estimate gives `auto` and which the crossovers of
// the other CUDA strategies are measured against: the larger of moving the arrays (a copy's time,
// plus the halo columns and rows its tiles read again) and the FMAs of the window it runs (the
// filter zero-padded to the compiled radius, at the direct sum's measured rate). Plain C++:
// planning needs no GPU.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/dtype.hpp"
#include "core/profile.hpp"
#include "cuda/fast/policy.hpp"
#include "halo/strategy.hpp"

namespace halo::cuda::fast {

// Moving p's arrays through tiles with halos rx along x and ry along y, ns (move_ns), and the
// modelled time of a window of `taps` taps and radius `r` (modelled_ns), the larger of moving
// them with halos r and the window's FMAs. The reads grow with the halo: rows are streamed (along y in 2-D, z in 3-D), so a tile reads its 2r halo
// columns again (tiles 128 outputs wide), and in 3-D its 2r halo rows (8 rows high); half of
// the bytes moved are reads. Strictly increasing in r and taps, so that two models calibrated to
// meet at a measured crossover (separable's) leave every radius on one side of it.
inline double move_ns(const Problem& p, double rx, double ry) {
  double reads = (128.0 + 2 * rx) / 128.0;
  if (p.rank() == 3) reads *= (8.0 + 2 * ry) / 8.0;
  return p.bytes() / profile::gpu(p.tuning()).copy_bytes_per_ns * (1 + 0.5 * (reads - 1));
}

// The same with the filter's own halos along x and y (not a cube of its largest radius): what
// any tiled strategy must read at least.
inline double filter_move_ns(const Problem& p) {
  const Dims3 k = p.filter_dims3(), a = p.anchor3();
  const auto halo = [](std::int64_t k, std::int64_t a) {
    return double(std::max<std::int64_t>(a, k - 1 - a));
  };
  return move_ns(p, halo(k.x, a.x), halo(k.y, a.y));
}

inline double modelled_ns(const Problem& p, double r, double taps) {
  const profile::Gpu g = profile::gpu(p.tuning());
  const double move = move_ns(p, r, r);
  const double flops =
      per_dtype(p.dtype(), g.direct_flops_f32, g.direct_flops_f64, "fast's FMA rate");
  return std::max(move, 2.0 * double(p.elements()) * taps / flops);
}

// The same for p as `fast` runs it (its compiled radius); p must be within fast's radii.
inline double modelled_ns(const Problem& p) {
  const int rc =
      compiled_radius(p.rank(), p.dtype(), int(std::min<std::int64_t>(p.max_radius(), 1 << 20)));
  double window = 1;
  for (int a = 0; a < p.rank(); ++a) window *= 2.0 * rc + 1;
  return modelled_ns(p, rc, window);
}

// fast's time at a radius `r` + 1/2 between two compiled ones, on p's arrays: where a family whose
// time is flat in the radius (separable's fused passes, its box rows) was measured to meet
// `fast` when the crossover radius is r.
inline double crossover_ns(const Problem& p, int r) {
  const double half = r + 0.5;
  double window = 1;
  for (int a = 0; a < p.rank(); ++a) window *= 2 * half + 1;
  return modelled_ns(p, half, window);
}

}  // namespace halo::cuda::fast
