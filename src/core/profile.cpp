// The machines' profiles (profile.hpp): the figures, each measured as the header says.
#include "core/profile.hpp"

#include "core/dtype.hpp"
#include "halo/strategy.hpp"
#include "halo/tuning.hpp"

namespace halo::profile {

const Gpu& gpu() {
  static const Gpu h100{
      "NVIDIA H100 80GB HBM3 (SXM)",
      /*copy_bytes_per_ns=*/2980,
      /*direct_flops_f32=*/48e3, /*direct_flops_f64=*/24e3,
      /*passes_flops_f32=*/60e3, /*passes_flops_f64=*/30e3,
      /*fft_stage_ns_f32=*/0.001, /*fft_element_ns_f32=*/0.008,
      /*fft_stage_ns_f64=*/0.002, /*fft_element_ns_f64=*/0.016,
      /*fft_setup_ns=*/1e5,
      /*fft_rows_setup_ns=*/2e4, /*fft_rows_point_ns=*/{0.0010, 0.0013, 0.0019},
      /*fft_tile_pair_ns=*/110,
      /*sep_radius_2d_maps=*/3, /*sep_radius_2d=*/4, /*sep_radius_3d=*/1,
      /*box_rows_taps=*/66, /*long_rows_taps=*/321,
      /*fft_cost_percent=*/100,
      /*ceiling_copy_gbs=*/2989, /*ceiling_fma_gflops=*/61000};
  return h100;
}

Gpu gpu(const FastTuning& t) {
  Gpu g = gpu();
  if (t.copy_gbs) {
    const double s = double(*t.copy_gbs) / g.ceiling_copy_gbs;
    g.copy_bytes_per_ns *= s;
    g.fft_stage_ns_f32 /= s, g.fft_element_ns_f32 /= s;
    g.fft_stage_ns_f64 /= s, g.fft_element_ns_f64 /= s;
  }
  if (t.fma_gflops) {
    const double s = double(*t.fma_gflops) / g.ceiling_fma_gflops;
    g.direct_flops_f32 *= s, g.direct_flops_f64 *= s;
    g.passes_flops_f32 *= s, g.passes_flops_f64 *= s;
    for (double& v : g.fft_rows_point_ns) v /= s;
    g.fft_tile_pair_ns /= s;
  }
  return g;
}

const Cpu& cpu() {
  static const Cpu vm{
      "the development VM (AMD EPYC, 2 cores)",
      /*fft f32 a, b, c=*/0.25, 3.2, 1000.0,
      /*fft f64 a, b, c=*/0.4, 4.0, 1000.0,
      /*output_ns_f32=*/{0.6, 2.0, 2.0}, /*tap_ns_f32=*/{0.038, 0.0225, 0.028},
      /*output_ns_f64=*/{2.0, 4.5, 4.5}, /*tap_ns_f64=*/{0.065, 0.044, 0.062},
      /*min_fft_direct_ns=*/2e5,
      /*xy_stage_taps=*/1, /*z_stage_taps=*/6,
      /*term_taps=*/1, /*z_add_stage_taps=*/20,
      /*lowrank f32 output, tap=*/1.6, 0.056,
      /*lowrank f64 output, tap=*/3.2, 0.112,
      /*lines f32 output, tap=*/0.27, 0.029, /*lines f64 output, tap=*/0.54, 0.046,
      /*lines i16 output, tap=*/0.18, 0.016,
      /*fft_cost_percent=*/100};
  return vm;
}

double cpu_direct_ns(const Problem& p) { return cpu_direct_ns(p, double(p.taps())); }

double cpu_direct_ns(const Problem& p, double taps) {
  const Cpu& c = cpu();
  const int r = p.rank() - 1;
  const char* what = "cpu's direct-sum model";
  const double out = per_dtype(p.dtype(), c.output_ns_f32[r], c.output_ns_f64[r], what);
  const double tap = per_dtype(p.dtype(), c.tap_ns_f32[r], c.tap_ns_f64[r], what);
  return double(p.elements()) * (taps * tap + out);
}

}  // namespace halo::profile
