// The `cpu_fft` strategy's tiling, for its own use and for the tests' error bound (the tolerance
// of Summation::fft needs the input window each tile transforms), and the filter's spectrum.
#pragma once

#include <cstdint>
#include <vector>

#include "core/fft_tiling.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::cpu {

// How cpu_fft cuts a problem into overlap-save tiles (core/fft_tiling.hpp), with the model's time
// of a run on one core (fft_ns, set-up included) and of the direct `cpu` strategy's (direct_ns).
using FftTiling = detail::FftTiling;

// The tiling of p (independent of the thread count, so that results are too). Throws halo::Error
// when a transform would exceed FFTW's int extents.
FftTiling fft_tiling(const Problem& p);

// The spectrum of p's correlation weights zero-padded to a tile of transform extents t.fft,
// conjugated (so that the cyclic product is a correlation) and scaled by 1 / (the tile's
// elements): t.complex_elements() values, interleaved re, im, of the real-to-complex transform
// (x halved), computed in float64 with FFTW.
std::vector<double> filter_spectrum(const Problem& p, const FftTiling& t);

// dst[i] = src[i] for i < n, in SIMD (cpu/direct/direct.cpp's dynamic dispatch); returns whether
// every value was finite: how a tile's outputs are copied out and probed (NonFinite::noted).
bool copy_finite(const float* src, float* dst, std::int64_t n);
bool copy_finite(const double* src, double* dst, std::int64_t n);

}  // namespace halo::cpu
