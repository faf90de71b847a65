// `halo bench`: times strategies on named suites of problems against the measured roofline.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace halo::tool {

struct BenchArgs {
  std::string suite = "seed";  // seed, radii, 1d, 3d, all, realworld, crossovers
  std::string strategies;      // comma-separated names; empty: every strategy but reference
  std::string backend = "all";  // all, cpu, cuda
  std::string size;            // overrides the suite's array shape, e.g. 4096x4096
  std::string radii;           // overrides the suite's radii, e.g. 1,2,3
  std::string mode = "constant";  // boundary mode of every problem (cval 0), e.g. reflect
  std::string format = "table";  // table, csv, json
  std::string output;          // also write the rows (in --format) to this file
  std::string json;            // also write the full JSON document to this file
  bool explain = false;         // say what `auto` picks per problem, why, and if it was fastest
  std::string warmup = "3";    // untimed runs first (decimal integers, checked by run_bench)
  std::string reps = "10";     // timed runs, the median reported
  std::string tune;            // the fast strategy's tuning, KEY=VALUE[,...] (halo::FastTuning)
  std::string profile;         // a profile file whose tuning --tune's keys complete (profile.hpp)
  std::string profile_out;     // the crossovers suite: write this machine's profile here
};

int run_bench(const BenchArgs& a);

// One measured point of a crossover of `auto` (the crossovers suite): at x (a radius or a tap
// count) the strategy below the crossover took `below_ms`, the one above it `above_ms`; `model`
// is the FFT's modelled time over the direct sum's (the fft_cost points only).
struct CrossoverPoint {
  std::string tuning_key;  // sep_radius_2d, sep_radius_3d, box_rows_taps, long_rows_taps, fft_cost
  int x = 0;
  double below_ms = 0, above_ms = 0, model = 0;
};
// The crossovers these points measure, as FastTuning's KEY=VALUE text (fields without points are
// left out): the largest radius where `fast` is no slower than `separable` (sep_radius_*), the
// fewest taps where box rows beat `fast`, the most taps where long rows are no slower than
// `fft`, and the FFT cost under which the model chooses as measured at every point
// (fft_cost_from).
std::string crossovers_from(const std::vector<CrossoverPoint>& points);
// The FFT cost (fft_cost, cpu_fft_cost) for one key's points: 100 where the default chooses as
// measured, else the middle of the costs that do, else the one that loses the least time; none
// without a point that has a model.
std::optional<long long> fft_cost_from(const std::vector<CrossoverPoint>& points);

}  // namespace halo::tool
