// Internal memory helpers beside the public estimates of halo/strategy.hpp (memory.cpp).
#pragma once

#include <string>

namespace halo::detail {

// The stack size libgomp gives its threads, as OMP_STACKSIZE (or GOMP_STACKSIZE) says it: a
// number and an optional unit B, K, M or G (K if none); empty: the threads' default. The library
// reads no environment: the CLI and the Python module pass the variable's text on, so that the
// memory checks count the stacks the threads will have. False (and nothing changed) if malformed.
bool set_openmp_stack_size(const std::string& text);

// Starts the OpenMP team's threads now (libgomp keeps them for later parallel regions), where
// RLIMIT_AS (ulimit -v) is set: a stack libgomp cannot map in a later region ends the process
// with its own message ("Thread creation failed"), whereas here a limit that leaves no room for
// the stacks is a halo::Error naming the figures. Does nothing without such a limit.
void start_threads_within_address_limit();

}  // namespace halo::detail
