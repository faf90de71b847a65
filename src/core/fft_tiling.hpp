// How the FFT strategies (cpu_fft with FFTW, fft with cuFFT) cut a problem into overlap-save
// tiles: a pure host search over transform lengths under a cost model, one per backend, for
// their own use and for the tests' error bound (the tolerance of Summation::fft needs the input
// window each tile transforms).
#pragma once

#include <array>
#include <cstdint>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

// Per canonical axis (z, y, x; Problem::dims3): a tile computes up to tile[a] outputs along axis
// a from an input window of tile[a] + k[a] - 1 elements (k: Problem::filter_dims3), zero-padded
// to the transform length fft[a]. The tile starting at output o reads the window at o - anchor
// (anchor: Problem::anchor3), t = min(tile, n - o) outputs long, so t + k - 1 elements; the rest
// of fft[a] is zeros. Axes whose filter extent is 1 (other than x) are not transformed:
// tile = fft = 1.
struct FftTiling {
  std::array<std::int64_t, 3> tile{1, 1, 1};
  std::array<std::int64_t, 3> fft{1, 1, 1};
  std::int64_t tiles = 1;  // per item of the batch
  // The cost model's time of the tiles (fft_ns, set-up excluded) and of the direct sum the
  // strategy competes with (direct_ns, set by the backend's wrapper), in ns.
  double fft_ns = 0, direct_ns = 0;
  // The CUDA `fft`'s transforms in shared memory (float32): row transforms for filters along x
  // (fft[1] == 1) and 2-D tile transforms (fft = {1, 64, 128}). Each tile is a pair of tiles
  // of tile[2] / 2 outputs along x (the second may be narrower or empty) that one complex
  // transform carries, the first one's window as its real part and the second's as its
  // imaginary part. The transform's input norm is then at most sqrt(2) times the norm of the
  // pair's whole window: window_scale, which the error bound multiplies by.
  bool shared = false;
  double window_scale = 1;

  std::int64_t elements() const { return fft[0] * fft[1] * fft[2]; }
  // Complex elements of a tile's real-to-complex transform (x halved).
  std::int64_t complex_elements() const { return fft[0] * fft[1] * (fft[2] / 2 + 1); }
};

// A backend's cost of one tile of L elements, L (a log2 L + b) + c ns; tiles of at most `cap`
// elements unless the filter needs longer transforms; the tile count rounded up to a multiple
// of `split` (the threads that share the tiles: a run of fewer tiles takes as long as one of
// that many). `who` names the strategy in errors.
struct FftCost {
  double a = 0, b = 0, c = 0;
  double cap = 0;
  std::int64_t split = 1;
  const char* who = "fft";
  bool pow2 = false;  // transform lengths of powers of 2 only
  // The shortest transform along x where the axis is longer (the GPU: a warp's 32 consecutive
  // elements, so that the tiles' gathers and scatters stay coalesced).
  std::int64_t min_x = 1;
};

// The tiling of p that minimises the cost (independent of the machine's thread count, so that
// results are too). Throws halo::Error when a transform would exceed 2^30 elements along an
// axis or INT_MAX / 2 in all (the transform libraries' int extents).
FftTiling fft_tiling(const Problem& p, const FftCost& cost);

// The transform lengths, ascending: 1, the powers of 2, and from 128 up 2^a m with m in
// {3, 5, 9, 15, 25}, up to 2^30 (docs/notes/tuning.md, cpu_fft).
std::int64_t fft_length_at_least(std::int64_t n);

// The tiling of the CUDA `fft` strategy (cuFFT; docs/notes/tuning.md, FFT on the GPU): its cost
// model (measured on the H100), tiles of at most 2^FastTuning::fft_tile elements (default 2^18: 512
// x 512 in 2-D; 2^16 in 1-D), and in direct_ns the direct sum of the filter's taps at `fast`'s
// measured FMA rate.
FftTiling cuda_fft_tiling(const Problem& p);
// t.fft_ns as `auto` weighs it against the direct sums: scaled by FastTuning::fft_cost percent
// (the GPU profile's where unset), the one factor a device's measured crossovers set.
double cuda_fft_weighed_ns(const Problem& p, const FftTiling& t);
// Tiles per batch of cuFFT transforms: those of a buffer of FastTuning::fft_batch MiB (default
// 128), at least one, at most the problem's.
std::int64_t cuda_fft_batch(const Problem& p, const FftTiling& t);

}  // namespace halo::detail
