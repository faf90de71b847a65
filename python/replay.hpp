// The replay table of halo._halo (replay.cpp): repeated calls of the package's filters with
// equal arguments make the core call an earlier call made, without the package's argument
// processing.
#pragma once

#include <pybind11/pybind11.h>

namespace halo_python {

// Adds replay, replay_store, replay_setup, replay_device_kind, replay_size and replay_clear to
// the module; `error` is the exception type the core's errors are raised as.
void bind_replay(pybind11::module_& m, pybind11::handle error);

}  // namespace halo_python
