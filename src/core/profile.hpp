// The measured constants behind `auto`'s cost models: one profile per machine, each figure in one
// unit with a line saying how it was measured (the runs are in docs/notes/tuning.md under the
// heading named). FastTuning's crossover fields, where given (`--tune`, `halo bench --suite
// crossovers` on another machine), replace the profile's crossovers.
#pragma once

#include <cstdint>

namespace halo {
class Problem;
struct FastTuning;
}

namespace halo::profile {

// A GPU's figures. The H100 SXM's are the only ones measured so far (gpu()).
struct Gpu {
  const char* machine;
  // Moving data: DRAM bytes per ns of a device-to-device copy, read and write counted (a 16384^2
  // float32 copy in 0.72 ms: "Separable passes").
  double copy_bytes_per_ns;
  // FLOP per ns of `fast`'s direct sum (a 31x31 filter on 16384^2 float32 in 10.65 ms: "FFT on
  // the GPU"), float32 and float64 (half, as the FMA units are).
  double direct_flops_f32, direct_flops_f64;
  // FLOP per ns of `separable`'s fused passes (2-D Gaussians of sigma 2, 4, 8 on 16384^2 in
  // 0.93, 1.06, 1.75 ms: "Separable passes"), float32 and float64.
  double passes_flops_f32, passes_flops_f64;
  // The tiled FFT (cuFFT): ns per tile element of a transform of L points as a + b log2 L (26 ps
  // an element of 512x512 float32 tiles: 7.9 ms for a 31x31 filter on 16384^2), float32 and
  // float64; the set-up before the first tile (batches, launches, the filter's spectrum).
  double fft_stage_ns_f32, fft_element_ns_f32, fft_stage_ns_f64, fft_element_ns_f64;
  double fft_setup_ns;
  // The transforms in shared memory: the row transforms' set-up and ns per point of a pair's
  // transform of N = 1024, 2048, 4096 points (fewer blocks per SM for the longer ones; "Row
  // transforms in shared memory": 2^28 float32, 17-1025 taps in 0.88-1.40 ms), the 2-D tiles'
  // time per pair of 64x128 transforms ("Tile transforms in shared memory": 65-90 ns measured,
  // 110 keeps `fast` at 15x15).
  double fft_rows_setup_ns, fft_rows_point_ns[3], fft_tile_pair_ns;
  // Crossovers measured by `halo bench --suite crossovers` (FastTuning's fields of that name):
  // the largest radius of a rank-1 2-D filter that `fast` keeps, where separable's tiles come by
  // tensor maps and where not, and in 3-D ("Separable passes", "Volumes by tensor-map tiles");
  // the 1-D box taps from which box rows beat `fast` ("Box rows"); the 1-D taps up to which long
  // rows beat `fft` ("Long rows"); `fft`'s modelled time scale, percent.
  int sep_radius_2d_maps, sep_radius_2d, sep_radius_3d;
  int box_rows_taps, long_rows_taps;
  int fft_cost_percent;
  // The ceilings `halo bench` measured on this GPU the same way it measures another's (a
  // device-to-device copy of 1 GiB, GB/s read plus written; an FMA-bound float32 kernel, GFLOP/s:
  // docs/BENCHMARKS.md, 2026-11-25): FastTuning::copy_gbs and fma_gflops scale the rates above by
  // the ratio of another device's to these.
  double ceiling_copy_gbs, ceiling_fma_gflops;
};

// A CPU's figures: ns on one core (docs/notes/tuning.md, "cpu_fft", "Separable passes (CPU)",
// "Sums of separable terms"). The development VM's (2 cores) are the only ones measured so far.
struct Cpu {
  const char* machine;
  // FFTW tiles of N elements: N (a log2 N + b) + c ns (about 7 ns an element in float32 from
  // 64^2 to 640^2), float32 and float64.
  double fft_a_f32, fft_b_f32, fft_c_f32, fft_a_f64, fft_b_f64, fft_c_f64;
  // `cpu`'s direct sum: ns per output and per output and tap, of a 1-D, 2-D, 3-D filter (fitted
  // near the FFT crossover; 1-D runs one row per block), float32 and float64.
  double output_ns_f32[3], tap_ns_f32[3], output_ns_f64[3], tap_ns_f64[3];
  // Below this direct time (ns) `auto` keeps the direct sum: an FFT's plans and spectrum buy
  // nothing on a sub-millisecond problem.
  double min_fft_direct_ns;
  // `cpu_separable`'s stages beside their taps, in taps of the same problem: the fused x-y stage
  // (3x3 on 2048^2 ran 2.2x faster than the dense sum) and the z stage after it (2x2x2 on 160^3:
  // 17.0 ms against 10.8 dense; 3x3x3: 12.4 against 15.0).
  double xy_stage_taps, z_stage_taps;
  // `cpu_lowrank`: a term beside its taps, and the z stage of a sum (the 7-point Laplacian on
  // 160^3 ran 43-60 ms against 30-44 for 27 dense taps), in taps; its ns per output and per
  // modelled tap (LoG 9x9 .. 33x33 on 2048^2 float32), float32 and float64 (twice).
  double term_taps, z_add_stage_taps;
  double lowrank_output_ns_f32, lowrank_tap_ns_f32, lowrank_output_ns_f64, lowrank_tap_ns_f64;
  // `cpu_lines`: ns per output and per tap of a filter along one axis, its sums in float32
  // (uint8), float64 (uint16, int16) and int16 (integral weights: exact), fitted to 3 to 33
  // taps along either axis of 4096^2 by bench/cpu_lines.py (docs/notes/cpu-lines.md).
  double lines_output_ns_f32, lines_tap_ns_f32, lines_output_ns_f64, lines_tap_ns_f64;
  double lines_output_ns_i16, lines_tap_ns_i16;
  // `cpu_fft`'s modelled time scale, percent (FastTuning::cpu_fft_cost).
  int fft_cost_percent;
};

// The profiles `auto` models with: the H100's and the development VM's.
const Gpu& gpu();
const Cpu& cpu();
// The GPU profile as a problem's models use it: gpu() with its moving rates scaled by
// t.copy_gbs / ceiling_copy_gbs (copy_bytes_per_ns; the cuFFT tiles' ns divided by it) and its
// computing rates by t.fma_gflops / ceiling_fma_gflops (the FMA rates; the shared-memory
// transforms' ns divided by it), where t gives them; set-up and launch figures as measured.
Gpu gpu(const FastTuning& t);

// The modelled time of `cpu`'s direct sum of p on one core, ns: elements x (taps x tap_ns +
// output_ns) of p's rank and dtype, with p's taps or the given count (the CPU strategies' passes
// and running sums are counted in these taps).
double cpu_direct_ns(const Problem& p);
double cpu_direct_ns(const Problem& p, double taps);

}  // namespace halo::profile
