// Internal memory helpers beside the public estimates of halo/strategy.hpp (memory.cpp).
#pragma once

namespace halo::detail {

// Starts the OpenMP team's threads now (libgomp keeps them for later parallel regions), where
// RLIMIT_AS (ulimit -v) is set: a stack libgomp cannot map in a later region ends the process
// with its own message ("Thread creation failed"), whereas here a limit that leaves no room for
// the stacks is a halo::Error naming the figures. Does nothing without such a limit.
void start_threads_within_address_limit();

}  // namespace halo::detail
