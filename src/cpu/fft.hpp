// The `cpu_fft` strategy's tiling, for its own use and for the tests' error bound (the tolerance
// of Summation::fft needs the input window each tile transforms).
#pragma once

#include <array>
#include <cstdint>

#include "halo/halo.hpp"

namespace halo::cpu {

// How cpu_fft cuts a problem into overlap-save tiles, per canonical axis (z, y, x; Problem::dims3):
// a tile computes up to tile[a] outputs along axis a from an input window of tile[a] + k[a] - 1
// elements (k: Problem::filter_dims3), zero-padded to the transform length fft[a]. The tile
// starting at output o reads the window at o - anchor (anchor: Problem::anchor3), t = min(tile,
// n - o) outputs long, so t + k - 1 elements; the rest of fft[a] is zeros. Axes whose filter
// extent is 1 (other than x) are not transformed: tile = fft = 1.
struct FftTiling {
  std::array<std::int64_t, 3> tile{1, 1, 1};
  std::array<std::int64_t, 3> fft{1, 1, 1};
  std::int64_t tiles = 1;  // per item of the batch
  // The model's time of a run on one core and of the direct `cpu` strategy's, in ns (priority).
  double fft_ns = 0, direct_ns = 0;
};

// The tiling of p (independent of the thread count, so that results are too). Throws halo::Error
// when a transform would exceed FFTW's int extents.
FftTiling fft_tiling(const Problem& p);

}  // namespace halo::cpu
