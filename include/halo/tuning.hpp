// halo — FastTuning: overrides of the strategies' measured choices (a part of Options).
#pragma once

#include <optional>

namespace halo {

// ---------------------------------------------------------------------------------------------
// FastTuning: overrides of the choices of the `fast` CUDA strategy (and of `fft`'s tiles and
// `auto`'s crossovers), for tuning runs, for other devices and for the tests that reach the
// kernels the defaults do not take. Every field left unset keeps the measured
// default (docs/notes/tuning.md); a value applies where a kernel for it is compiled and is ignored
// elsewhere (e.g. `tx` outside the 2-D radii that compile 8 columns per lane). Results are the
// same under every tuning, within the rounding bound that Strategy::summation() states.
// check_tuning() (called by Problem::set_tuning) refuses a value outside its field's range.
// ---------------------------------------------------------------------------------------------
// How rows reach the FFMAs: loaded as needed, prefetched into registers, copied by cp.async into
// a warp's shared-memory ring, copied by the tensor memory accelerator into a warp's ring (tma)
// or into a ring shared by the block (block: 1-D and 3-D; 2-D takes tma).
enum class FastFeed { direct, prefetch, ring, tma, block };

struct FastTuning {
  std::optional<FastFeed> feed;    // the feed of every rank, where compiled
  std::optional<bool> prefetch;    // the register prefetch off or on (an older switch of feed)
  std::optional<int> depth;        // 1..4: rows in flight under the register prefetch
  std::optional<int> slots;        // 2..16: ring slots (block rings use at most 8, 1-D padded 4)
  std::optional<int> box_rows;     // 1..16: rows per slot of the 2-D TMA ring
  std::optional<int> tx;           // 4 or 8: 2-D columns per lane (r = 4..6 TMA, r = 5, 6 ring)
  std::optional<int> tx_1d;        // 8, 16 or 32: 1-D outputs per lane above r = 8
  std::optional<bool> pad_1d;      // the 1-D padded block tile (f32, r = 32, 48, 64) off or on
  std::optional<int> rows_3d;      // 1, 2 or 4: 3-D output rows per warp (4: block ring, r <= 2)
  std::optional<int> hints;        // 0..3: block rings' cache hints, bit 0 reads, bit 1 stores
  std::optional<bool> runs;        // 3-D block ring: equal runs of tile-planes, or z-chunks
  std::optional<int> chunk;        // 1..2^30: rows (2-D) or planes (3-D) per chunk, per run;
                                   // `separable`'s fused passes: rows per chunk
  std::optional<int> pass_rows;    // 0 (one pass), 8, 12 or 16: 2-D filter rows per pass
  std::optional<bool> winograd;    // 2-D f32 Winograd columns (TMA ring, r = 3..7) off or on
  std::optional<int> l2_promotion; // 0, 64, 128 or 256: bytes the L2 fetches per tensor-map read
  std::optional<int> edge_cost;    // 0..100: 3-D equal runs with modes, % more per edge tile-plane
  std::optional<int> fft_tile;     // 8..26: the CUDA `fft` strategy's tiles, at most 2^fft_tile
                                   // elements unless the filter needs more
  std::optional<int> fft_batch;    // 1..65536: MiB of tiles per batch of cuFFT transforms
  std::optional<bool> fft_shared;  // `fft`'s transforms in shared memory, one kernel (float32:
                                   // filters along x as row transforms, 2-D filters up to 33 x 65
                                   // as tile transforms) off or on (on)
  // Where `auto` switches between the CUDA strategies, as `halo bench --suite crossovers`
  // measures them on a device (unset: the H100's, in brackets; docs/notes/tuning.md, "Crossovers"):
  std::optional<int> sep_radius_2d;   // 0..64: 2-D rank-1 filters up to this radius stay on
                                      // `fast`'s window, `separable` beyond (4)
  std::optional<int> sep_radius_3d;   // 0..16: the same in 3-D (1)
  std::optional<int> box_rows_taps;   // 2..1048576: 1-D boxes of this many taps or more run as
                                      // `separable`'s box rows rather than on `fast` (66)
  std::optional<int> long_rows_taps;  // 1..1025: 1-D filters beyond `fast` run as long rows up
                                      // to this many taps, on `fft` beyond (321); float32 runs
                                      // `fft`'s row transforms wherever they beat the direct sum
  std::optional<int> fft_cost;        // 1..100000: % applied to the FFT's modelled time where
                                      // `auto` weighs it against the direct sum's (100)
  // The device's rates as `halo bench` measures its ceilings (a device-to-device copy, GB/s read
  // plus written; an FMA-bound kernel, float32 GFLOP/s): the GPU profile's rates, measured on the
  // H100, are scaled to them in every cost model (unset: the H100's, 2989 and 61000).
  std::optional<int> copy_gbs;        // 1..1000000
  std::optional<int> fma_gflops;      // 1..10000000
  // On the CPU (unset: the development VM's; `halo bench --suite crossovers --backend cpu`):
  std::optional<int> cpu_fft_cost;    // 1..100000: the same for `cpu_fft` against `cpu` (100)

  bool empty() const;  // no field set: the defaults everywhere
};

// Throws halo::Error naming the first field of t outside its range, and the range.
void check_tuning(const FastTuning& t);

}  // namespace halo
