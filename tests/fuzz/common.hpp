// What the harnesses share: the memory a decoded file may take (as `halo apply` would refuse a
// file larger than the memory left, the harnesses refuse what is larger than this), and a check
// that fails loudly.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "halo/halo.hpp"

namespace halo::fuzz {

// A decoded image or array larger than this is refused before it is allocated, through the
// readers' before_alloc, as the command line refuses what does not fit in memory. The readers'
// own bounds (the file's size times the compression's largest ratio) come first and are what
// is fuzzed; this only keeps each run fast.
constexpr double kMaxDecodedBytes = 64.0 * (1 << 20);

[[noreturn]] inline void die(const char* what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what);
  std::abort();
}

}  // namespace halo::fuzz
