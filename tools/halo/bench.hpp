// `halo bench`: times strategies on named suites of problems against the measured roofline.
#pragma once

#include <string>

namespace halo::tool {

struct BenchArgs {
  std::string suite = "seed";  // seed, radii, 1d, 3d, all
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
};

int run_bench(const BenchArgs& a);

}  // namespace halo::tool
