// Machine profiles as files (profile.hpp).
#include "profile.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "core/parse.hpp"  // internal, on purpose: the tuning text's parser, printable paths
#include "halo/halo.hpp"

namespace halo::tool {

namespace {

// KEY=VALUE[,...] as ordered pairs (the tuning's parser checks each key and value).
std::vector<std::pair<std::string, std::string>> pairs_of(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  if (text.empty()) return out;
  for (const std::string& item : detail::split_list(text, ',')) {
    const auto eq = item.find('=');
    out.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return out;
}

}  // namespace

nlohmann::json profile_document(const std::string& machine, const std::string& tune,
                                double copy_gbs, double fma_gflops, const nlohmann::json& points) {
  return {{"halo_profile", 1},      {"machine", machine},         {"tune", tune},
          {"copy_gbs", copy_gbs},   {"fma_gflops", fma_gflops},   {"points", points}};
}

std::string tuning_with_profile(const std::string& path, const std::string& tune) {
  if (path.empty()) return tune;
  const std::string name = detail::printable(path);
  std::ifstream f(path);
  if (!f) throw Error(name + ": cannot read the profile: " + std::strerror(errno));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(f);
  } catch (const std::exception&) {
    throw Error(name + ": not a halo profile (not JSON; `halo bench --suite crossovers "
                "--profile-out FILE` writes one)");
  }
  if (!doc.is_object() || !doc.contains("halo_profile") || !doc.contains("tune") ||
      !doc["tune"].is_string())
    throw Error(name + ": not a halo profile (no \"halo_profile\" and \"tune\" fields)");
  if (doc["halo_profile"] != 1)
    throw Error(name + ": a profile of format " + doc["halo_profile"].dump() +
                "; this halo reads format 1");
  const std::string own = doc["tune"].get<std::string>();
  detail::parse_fast_tuning(own, name);  // refused here, naming the file
  if (own.empty()) return tune;
  // The profile's keys, then --tune's: one value per key, --tune's where both give one.
  std::map<std::string, std::string> given;
  for (const auto& [k, v] : pairs_of(tune)) given[k] = v;
  std::string out;
  for (const auto& [k, v] : pairs_of(own))
    if (!given.count(k)) out += (out.empty() ? "" : ",") + k + "=" + v;
  if (!tune.empty()) out += (out.empty() ? "" : ",") + tune;
  return out;
}

}  // namespace halo::tool
