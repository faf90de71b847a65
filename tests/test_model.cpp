// The arithmetic-intensity model against the seed notes' numbers, through the library and through
// `halo analyze`.
#include <gtest/gtest.h>

#include "support.hpp"
#include "halo/model.hpp"

namespace halo::test {
namespace {

TEST(Model, SeedNotesTable) {
  EXPECT_DOUBLE_EQ(model::basic_intensity(), 0.25);
  EXPECT_DOUBLE_EQ(model::constant_intensity(), 0.5);
  // 5x5 filter, input tiles 8/16/32 -> output tiles 4/12/28: 3.13 / 7.03 / 9.57, bound 12.5.
  EXPECT_NEAR(model::tiled_intensity(2, 5, 4), 3.125, 1e-12);
  EXPECT_NEAR(model::tiled_intensity(2, 5, 12), 7.03125, 1e-12);
  EXPECT_NEAR(model::tiled_intensity(2, 5, 28), 9.5703125, 1e-12);
  EXPECT_DOUBLE_EQ(model::tiled_bound(2, 5), 12.5);
  // 9x9 filter, input tiles 16/32 -> output tiles 8/24: 10.13 / 22.78, bound 40.5.
  EXPECT_NEAR(model::tiled_intensity(2, 9, 8), 10.125, 1e-12);
  EXPECT_NEAR(model::tiled_intensity(2, 9, 24), 22.78125, 1e-12);
  EXPECT_DOUBLE_EQ(model::tiled_bound(2, 9), 40.5);
  // 1D slide question: output tile 250, mask 7 -> input tile 256, reduction 250*7/256.
  EXPECT_DOUBLE_EQ(model::memory_reduction(1, 7, 250), 250.0 * 7 / 256);
  // 1D and 3D forms: (2r+1)/2 and (2r+1)^3/2 bounds for float32.
  EXPECT_DOUBLE_EQ(model::tiled_bound(1, 7), 3.5);
  EXPECT_DOUBLE_EQ(model::tiled_bound(3, 3), 13.5);
  EXPECT_NEAR(model::tiled_intensity(3, 3, 6), 216.0 * 27 * 2 / (512 * 4), 1e-12);
}

TEST(Model, AnalyzePrintsTheNotesTable) {
  const Result a = run_cli("analyze --filter 5 --tile 8,16,32");
  ASSERT_EQ(a.code, 0) << a.output;
  for (const char* row : {"basic               -         -     0.25",
                          "constant            -         -      0.5",
                          "tiled               8         4     3.13",
                          "tiled              16        12     7.03",
                          "tiled              32        28     9.57",
                          "tiled bound       inf       inf     12.5"})
    EXPECT_NE(a.output.find(row), std::string::npos) << "missing '" << row << "' in\n" << a.output;
  const Result b = run_cli("analyze --filter 9 --tile 16,32");
  ASSERT_EQ(b.code, 0) << b.output;
  for (const char* row : {"tiled              16         8    10.13",
                          "tiled              32        24    22.78",
                          "tiled bound       inf       inf     40.5"})
    EXPECT_NE(b.output.find(row), std::string::npos) << "missing '" << row << "' in\n" << b.output;
  const Result c = run_cli("analyze --rank 1 --filter 7 --out-tile 250");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("tiled             256       250     3.42         6.84"),
            std::string::npos)
      << c.output;
}

TEST(Model, AnalyzeRejectsBadArguments) {
  const Result a = run_cli("analyze --filter 9 --tile 4");
  EXPECT_NE(a.code, 0);
  EXPECT_NE(a.output.find("smaller than the filter width"), std::string::npos) << a.output;
  const Result b = run_cli("analyze --rank 4");
  EXPECT_NE(b.code, 0);
  EXPECT_NE(b.output.find("--rank"), std::string::npos) << b.output;
}

}  // namespace
}  // namespace halo::test
