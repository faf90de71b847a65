// What the `fft` strategy's cuFFT callbacks (src/cuda/lto/fft_callbacks.cu, linked into cuFFT's
// kernels at plan time) share with src/cuda/fft.cu: the parameters of a run, which sit in device
// memory just before the run's tile buffer (kFftParamBytes before the pointer every transform
// of the run is given), so that a plan shared by runs on several streams carries no per-run
// state; the tiles' geometry; and division by a run-time constant without a divide instruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/host_device.hpp"

namespace halo::cuda {

// q = n / d for n < 2^31 and d >= 1 by a multiply and a shift (round-up method: l = ceil(log2
// d), m = floor(2^32 (2^l - d) / d) + 1, q = (hi32(m n) + n) >> l, where n < 2^31 keeps the sum
// in 32 bits).
struct FastDiv {
  std::uint32_t d = 1, m = 1, l = 0;
  FastDiv() = default;
  explicit FastDiv(std::uint32_t divisor) : d(divisor) {
    while ((std::uint64_t(1) << l) < divisor) ++l;
    m = std::uint32_t((std::uint64_t(1) << 32) * ((std::uint64_t(1) << l) - divisor) / divisor + 1);
  }
  HALO_HOST_DEVICE std::uint32_t div(std::uint32_t n) const {
#ifdef __CUDA_ARCH__
    const std::uint32_t hi = __umulhi(m, n);
#else
    const std::uint32_t hi = std::uint32_t((std::uint64_t(m) * n) >> 32);
#endif
    return (hi + n) >> l;
  }
};

// Tile u of a run (counted over the run's items), for the callbacks: the input coordinates of its
// window's first element per axis (z, y, x: the first output minus the anchor), the window's
// extent per axis (the outputs plus the filter, less one; zeros beyond it up to the transform),
// the element offset of its item in the input, and of its first output in the output, and its
// outputs per axis.
struct FftTile {
  std::int64_t start[3];
  std::int64_t item;  // element offset of the tile's item (batch entry)
  std::int64_t out;   // element offset of the tile's first output
  std::int32_t win[3], cnt[3];
};

struct FftCallbackParams {
  const void* in;        // the input (T)
  void* out;             // the output (T)
  const void* spectrum;  // the filter's spectrum (complex T), one tile's transform
  int* flags;            // per tile of the batch: its window holds a NaN or an infinity
  const FftTile* tiles;  // every tile of the run
  std::int64_t first;    // the batch's first tile (set before each batch)
  std::int64_t n[3];     // extents (z, y, x)
  int mode[3];           // Boundary per axis
  double cval;
  FastDiv real_dist, pitch, fy, complex_dist;  // reals per tile, per row; rows per plane; values
};

// The parameters' slot before the tile buffer (a multiple of cuFFT's 256-byte alignment).
constexpr std::size_t kFftParamBytes = 256;
static_assert(sizeof(FftCallbackParams) <= kFftParamBytes, "the parameters fit their slot");

// Why cuFFT cannot link the callbacks into its kernels on the current device (it tries once, on
// a small plan), or "" where it can. Where it cannot, `fft` runs its own kernels instead.
std::string fft_callbacks_unavailable();

}  // namespace halo::cuda
