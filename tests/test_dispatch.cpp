// What `auto` takes on the CPU backend, problem by problem: the table the dispatch must keep (or
// change on purpose, with the measurement that says the new choice is faster). Runs without a
// GPU. Each row says why its strategy is the choice, from the cost models' crossovers
// (docs/notes/tuning.md: cpu_fft from about 19x19 on 2048^2 float32, 9x9x9 in 3-D and 161 taps
// in 1-D; cpu_separable where its passes' taps and stages cost less than the dense taps, boxes
// along one axis always; cpu_lowrank where its terms beat the dense taps and the transforms).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support.hpp"
#include "halo/strategy.hpp"

namespace halo::test {
namespace {

enum class Kind { named, random };

struct Row {
  const char* why;
  int rank;
  Extents ext;
  Kind kind;
  std::string spec;              // named: the filter spec
  std::vector<std::int64_t> k;   // random: the filter's extents
  DType dtype;
  bool direct;
  const char* want;
};

// The problem as apply() builds it from the options.
std::string chosen(const Row& r) {
  const Filter f = r.kind == Kind::named ? make_named_filter(r.spec, r.rank) : random_filter(r.k);
  Options o;
  o.backend = Backend::cpu;
  o.direct_sums = r.direct;
  o.edges = Edges::all(Boundary::reflect, 0.0);
  Problem p(r.rank, r.ext, 1, f, r.dtype, o.op, o.edges);
  p.require_direct_sums(o.direct_sums);
  return choose(p, o).strategy;
}

const Extents k2D4096{4096, 4096, 1}, k2D2048{2048, 2048, 1}, k1D{1 << 24, 1, 1},
    k3D{256, 256, 256};
constexpr DType f32 = DType::f32, f64 = DType::f64, u8 = DType::u8, u16 = DType::u16,
                i16 = DType::i16;

const std::vector<Row> kRows = {
    // Rank-1 filters over two or more axes: 1-D passes.
    {"a Gaussian as two passes", 2, k2D4096, Kind::named, "gaussian:sigma=1", {}, f32, false,
     "cpu_separable"},
    {"a wide Gaussian as two passes", 2, k2D4096, Kind::named, "gaussian:sigma=8", {}, f32, false,
     "cpu_separable"},
    {"float64 the same", 2, k2D4096, Kind::named, "gaussian:sigma=2", {}, f64, false,
     "cpu_separable"},
    {"a box by running sums", 2, k2D4096, Kind::named, "box:31", {}, f32, false, "cpu_separable"},
    {"Sobel's 3x3 as passes", 2, k2D4096, Kind::named, "sobel-x", {}, f32, false,
     "cpu_separable"},
    {"a 3-D Gaussian as three passes", 3, k3D, Kind::named, "gaussian:sigma=1", {}, f32, false,
     "cpu_separable"},
    {"a 3-D box", 3, k3D, Kind::named, "box:9", {}, f32, false, "cpu_separable"},
    {"a tiny array keeps the passes", 2, {8, 8, 1}, Kind::named, "gaussian:sigma=1", {}, f32,
     false, "cpu_separable"},
    {"direct sums required: two passes sum each output in stages, the dense sum runs", 2,
     k2D4096, Kind::named, "gaussian:sigma=2", {}, f32, true, "cpu"},
    // A 2x2 box: four taps, fewer than two passes' stages cost.
    {"a 2x2 box is cheaper dense", 2, k2D4096, Kind::named, "box:2", {}, f32, false, "cpu"},
    // Along one axis: one pass either way; a box's running sums beat both.
    {"a 1-D Gaussian of 97 taps: direct", 1, k1D, Kind::named, "gaussian:sigma=16", {}, f32,
     false, "cpu"},
    {"a 1-D box by running sums", 1, k1D, Kind::named, "box:255", {}, f32, false,
     "cpu_separable"},
    {"a short 1-D box: direct", 1, k1D, Kind::named, "box:11", {}, f32, false, "cpu"},
    {"a filter along one axis of an image: direct", 2, k2D4096, Kind::random, "", {1, 9}, f32,
     false, "cpu"},
    // Dense filters: direct below the FFT's crossover, transforms above.
    {"5x5 dense: direct", 2, k2D2048, Kind::random, "", {5, 5}, f32, false, "cpu"},
    {"17x17 dense: below the crossover", 2, k2D2048, Kind::random, "", {17, 17}, f32, false,
     "cpu"},
    {"19x19 dense: above it", 2, k2D2048, Kind::random, "", {19, 19}, f32, false, "cpu_fft"},
    {"31x31 dense", 2, k2D4096, Kind::random, "", {31, 31}, f32, false, "cpu_fft"},
    {"31x31 dense, float64", 2, k2D2048, Kind::random, "", {31, 31}, f64, false, "cpu_fft"},
    {"31x31 under direct sums: no transforms", 2, k2D4096, Kind::random, "", {31, 31}, f32, true,
     "cpu"},
    {"31x31 on a small image: too little work for the transforms", 2, {64, 64, 1}, Kind::random,
     "", {31, 31}, f32, false, "cpu"},
    {"129 taps in 1-D: direct", 1, k1D, Kind::random, "", {129}, f32, false, "cpu"},
    {"161 taps in 1-D: transforms", 1, k1D, Kind::random, "", {161}, f32, false, "cpu_fft"},
    {"4097 taps along the rows of 8 long rows: transforms", 2, {8, 262144, 1}, Kind::random, "",
     {1, 4097}, f32, false, "cpu_fft"},
    {"3x3x3 dense: direct", 3, k3D, Kind::random, "", {3, 3, 3}, f32, false, "cpu"},
    {"7x7x7 dense: direct", 3, k3D, Kind::random, "", {7, 7, 7}, f32, false, "cpu"},
    {"9x9x9 dense: transforms", 3, k3D, Kind::random, "", {9, 9, 9}, f32, false, "cpu_fft"},
    // 8- and 16-bit integers along one axis: at their own width, not through float slabs.
    {"a Gaussian pass along the rows of a uint8 image", 2, k2D4096, Kind::random, "", {1, 17},
     u8, false, "cpu_lines"},
    {"and down its columns", 2, k2D4096, Kind::random, "", {17, 1}, u8, false, "cpu_lines"},
    {"direct sums required: each output is one", 2, k2D4096, Kind::random, "", {17, 1}, u8,
     true, "cpu_lines"},
    {"a uint16 image's rows", 2, k2D4096, Kind::random, "", {1, 9}, u16, false, "cpu_lines"},
    {"a 1-D int16 signal", 1, k1D, Kind::random, "", {31}, i16, false, "cpu_lines"},
    {"a 2-D filter on uint8 is not a line: slabs of float32", 2, k2D2048, Kind::random, "",
     {5, 5}, u8, false, "cpu"},
    // Low rank: sums of separable terms where they beat the taps and the transforms.
    {"a LoG as separable terms", 2, k2D4096, Kind::named, "log:sigma=4", {}, f32, false,
     "cpu_lowrank"},
    {"the 3x3 Laplacian: five taps, dense", 2, k2D4096, Kind::named, "laplacian", {}, f32, false,
     "cpu"},
    {"the 3-D Laplacian: seven taps, dense", 3, {160, 160, 160}, Kind::named, "laplacian", {},
     f32, false, "cpu"},
};

TEST(Dispatch, CpuTakesTheTablesChoices) {
  for (const Row& r : kRows) EXPECT_EQ(chosen(r), r.want) << r.why;
}

// Every strategy the table names exists, and the table covers every CPU strategy `auto` may take.
// Every registered CPU strategy (a new one too) is what `auto` takes in some row.
TEST(Dispatch, CpuTableCoversEveryStrategy) {
  int cpu = 0;
  for (const Strategy* s : strategies()) {
    if (s->backend() != Backend::cpu) continue;
    ++cpu;
    bool seen = false;
    for (const Row& r : kRows) seen = seen || std::string(r.want) == s->name();
    EXPECT_TRUE(seen) << s->name() << " is in no row of the table";
  }
  EXPECT_GE(cpu, 5);  // cpu, cpu_separable, cpu_lowrank, cpu_fft, cpu_lines
}

}  // namespace
}  // namespace halo::test
