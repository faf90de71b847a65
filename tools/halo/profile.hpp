// Machine profiles as files: `halo bench --suite crossovers --profile-out FILE` writes what it
// measured on this machine (the crossovers of `auto`, as the FastTuning text that makes `auto`
// choose as measured, beside the copy and FMA rates); `--profile FILE` (apply, bench) gives that
// tuning back to `auto` on every run, under --tune's own keys.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace halo::tool {

// The profile document: format 1, the machine's name, the tuning text, the measured rates and
// the points the crossovers were read from.
nlohmann::json profile_document(const std::string& machine, const std::string& tune,
                                double copy_gbs, double fma_gflops, const nlohmann::json& points);

// The tuning text of the profile at `path` with the keys of `tune` (KEY=VALUE[,...]) replacing
// its own; `tune` alone where `path` is empty. Throws halo::Error naming the file and what is
// wrong with it (unreadable, not a profile, a tuning the core refuses).
std::string tuning_with_profile(const std::string& path, const std::string& tune);

}  // namespace halo::tool
