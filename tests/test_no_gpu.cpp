// Without a usable GPU (no driver, no device, or a build without CUDA) halo says so in plain
// words, in cuda_available()'s reason and in `halo info`: not the CUDA runtime's "driver version
// is insufficient", which reads like a broken install on a machine that simply has no GPU.
#include <gtest/gtest.h>

#include <string>

#include "support.hpp"
#include "halo/info.hpp"

namespace halo::test {
namespace {

// The plain-words reason: says that there is no GPU and nothing of an "insufficient" driver (the
// CUDA error's name may follow in parentheses, e.g. "(cudaErrorInsufficientDriver)").
void expect_plain_no_gpu(const std::string& text) {
  EXPECT_EQ(text.find("insufficient"), std::string::npos) << text;
  EXPECT_NE(text.find("no "), std::string::npos) << text;
  EXPECT_NE(text.find("GPU"), std::string::npos) << text;
}

TEST(NoGpu, SaysPlainlyThatNoGpuIsUsable) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a CUDA device is usable";
  SCOPED_TRACE("cuda_available: " + why);
  expect_plain_no_gpu(why);
  const Result r = run_cli("info");
  ASSERT_EQ(r.code, 0) << r.output;
  expect_plain_no_gpu(r.output);
  EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
}

}  // namespace
}  // namespace halo::test
