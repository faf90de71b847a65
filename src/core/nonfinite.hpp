// SciPy's answers where the input holds NaN or infinities, for every strategy: the outputs a
// strategy writes as non-finite are recomputed as the direct sum over the problem's footprint
// (Footprint), in float64 and in SciPy's order of the taps (C order of the correlation weights),
// on the host here and on the device in cuda/repair.cu. A strategy never writes a finite value
// where SciPy's is not (it multiplies every weight, and no arithmetic turns NaN or an infinity
// back into a finite number), so these outputs are the only ones that can differ
// (docs/ACCURACY.md, "Non-finite values").
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/boundary.hpp"
#include "core/host_device.hpp"
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

// A tap's code: the signs of the footprint weights it holds (several where Problem folds a filter
// larger than the array: they read the same element for every output), 0 for no tap at all.
enum : std::uint8_t { kTapPositive = 1, kTapNegative = 2, kTapZero = 4 };

// The taps of the repair: the correlation weights (the filter as the user gave it, flipped for
// convolve) with the Problem's folding, the weights outside the footprint left out. Canonical
// z, y, x extents and anchor; w and code in C order.
struct RepairTaps {
  Dims3 k, a;
  std::vector<double> w;
  std::vector<std::uint8_t> code;
};
RepairTaps repair_taps(const Problem& p);  // in problem.cpp, beside the folding

// What a tap adds to SciPy's sum for the input value v: w v where v is finite; where it is not,
// what the sum of the tap's members w_i v gives: NaN for NaN, and for an infinity met by members
// of both signs or by a zero weight (Footprint::every); otherwise the infinity, signed.
HALO_HOST_DEVICE inline double repair_term(double w, std::uint8_t code, double v) {
  if (v - v == 0.0) return w * v;  // finite
  if (v != v || (code & kTapZero) || (code & (kTapPositive | kTapNegative)) ==
                                          (kTapPositive | kTapNegative))
    return v - v;  // NaN
  return code & kTapPositive ? v : -v;
}

// A CPU strategy's note that it wrote a non-finite output (any thread, any number of times).
inline void note_nonfinite(const Buffers& b) {
  if (b.nonfinite) __atomic_store_n(b.nonfinite, b.nonfinite_mark, __ATOMIC_RELAXED);
}

// Where the repair reads: the array's canonical extents, each axis's mode, and cval.
struct RepairGeometry {
  Dims3 n;
  Boundary mz = Boundary::constant, my = Boundary::constant, mx = Boundary::constant;
  double cval = 0;
};
RepairGeometry repair_geometry(const Problem& p);

// SciPy's sum for output (z, y, x) of one item: the taps in C order, from 0.
template <class T>
HALO_HOST_DEVICE double repair_sum(const T* item, const RepairGeometry& g, const Dims3& k,
                                   const Dims3& a, const double* w, const std::uint8_t* code,
                                   std::int64_t z, std::int64_t y, std::int64_t x) {
  double acc = 0.0;
  std::int64_t t = 0;
  for (std::int64_t jz = 0; jz < k.z; ++jz) {
    const std::int64_t iz = map_index(z - a.z + jz, g.n.z, g.mz);
    for (std::int64_t jy = 0; jy < k.y; ++jy) {
      const std::int64_t iy = map_index(y - a.y + jy, g.n.y, g.my);
      for (std::int64_t jx = 0; jx < k.x; ++jx, ++t) {
        if (!code[t]) continue;
        const std::int64_t ix = map_index(x - a.x + jx, g.n.x, g.mx);
        const double v = iz < 0 || iy < 0 || ix < 0
                             ? g.cval
                             : static_cast<double>(item[(iz * g.n.y + iy) * g.n.x + ix]);
        acc += repair_term(w[t], code[t], v);
      }
    }
  }
  return acc;
}

// Recomputes every non-finite output of `out` (p's layout, host memory) from `in`; returns how
// many it recomputed. Where none is non-finite it only reads the output.
std::int64_t repair_host(const Problem& p, const void* in, void* out);

// Runs a strategy's plan on its problem with SciPy's non-finite answers
// (StrategyPlan::nonfinite): the one way the library, the benchmarks and the bindings run a
// strategy. Host buffers for CPU strategies, device buffers for CUDA ones
// (run_cuda_on_host_buffers copies host arrays).
void run_strategy(const StrategyPlan& plan, const void* in, void* out, void* stream);
// The CUDA half of run_strategy (cuda/repair.cu; throws without CUDA).
void run_cuda_strategy(const StrategyPlan& plan, const void* in, void* out, void* stream);

}  // namespace halo::detail
