// FastTuning: its fields' ranges (check_tuning), and the KEY=VALUE form that the command line and
// the tests use (parse_fast_tuning, tuning_string in parse.hpp). One table of fields serves all
// three, so a field's name and range read the same everywhere.
#include <climits>
#include <string>
#include <vector>

#include "core/parse.hpp"
#include "halo/halo.hpp"

namespace halo {
namespace {

const char* const kFeedNames[] = {"direct", "prefetch", "ring", "tma", "block"};
constexpr int kFeeds = 5;

// One field of FastTuning: an integer in [lo, hi] (or one of `allowed`), a flag (0 or 1), or the
// feed (by name).
struct Field {
  const char* name;
  std::optional<int> FastTuning::*integer = nullptr;
  std::optional<bool> FastTuning::*flag = nullptr;
  bool feed = false;
  int lo = 0, hi = 0;
  std::vector<int> allowed;  // when not empty, the only values
};

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"feed", nullptr, nullptr, true, 0, 0, {}},
      {"prefetch", nullptr, &FastTuning::prefetch, false, 0, 0, {}},
      {"depth", &FastTuning::depth, nullptr, false, 1, 4, {}},
      // The TMA ring of a warp holds 16 mbarriers.
      {"slots", &FastTuning::slots, nullptr, false, 2, 16, {}},
      {"box_rows", &FastTuning::box_rows, nullptr, false, 1, 16, {}},
      {"tx", &FastTuning::tx, nullptr, false, 0, 0, {4, 8}},
      {"tx_1d", &FastTuning::tx_1d, nullptr, false, 0, 0, {8, 16, 32}},
      {"pad_1d", nullptr, &FastTuning::pad_1d, false, 0, 0, {}},
      {"rows_3d", &FastTuning::rows_3d, nullptr, false, 0, 0, {1, 2, 4}},
      {"hints", &FastTuning::hints, nullptr, false, 0, 3, {}},
      {"runs", nullptr, &FastTuning::runs, false, 0, 0, {}},
      {"chunk", &FastTuning::chunk, nullptr, false, 1, 1 << 30, {}},
      {"pass_rows", &FastTuning::pass_rows, nullptr, false, 0, 0, {0, 8, 12, 16}},
      {"winograd", nullptr, &FastTuning::winograd, false, 0, 0, {}},
      {"l2_promotion", &FastTuning::l2_promotion, nullptr, false, 0, 0, {0, 64, 128, 256}},
      {"edge_cost", &FastTuning::edge_cost, nullptr, false, 0, 100, {}},
      {"fft_tile", &FastTuning::fft_tile, nullptr, false, 8, 26, {}},
      {"fft_batch", &FastTuning::fft_batch, nullptr, false, 1, 65536, {}},
      {"fft_shared", nullptr, &FastTuning::fft_shared, false, 0, 0, {}},
      {"sep_radius_2d", &FastTuning::sep_radius_2d, nullptr, false, 0, 64, {}},
      {"sep_radius_3d", &FastTuning::sep_radius_3d, nullptr, false, 0, 16, {}},
      {"box_rows_taps", &FastTuning::box_rows_taps, nullptr, false, 2, 1 << 20, {}},
      {"long_rows_taps", &FastTuning::long_rows_taps, nullptr, false, 1, 1025, {}},
      {"fft_cost", &FastTuning::fft_cost, nullptr, false, 1, 100000, {}},
      {"copy_gbs", &FastTuning::copy_gbs, nullptr, false, 1, 1000000, {}},
      {"fma_gflops", &FastTuning::fma_gflops, nullptr, false, 1, 10000000, {}},
      {"cpu_fft_cost", &FastTuning::cpu_fft_cost, nullptr, false, 1, 100000, {}},
  };
  return f;
}

std::string range_of(const Field& f) {
  if (f.feed) return "direct, prefetch, ring, tma or block";
  if (f.flag) return "0 or 1";
  if (f.allowed.empty()) return std::to_string(f.lo) + ".." + std::to_string(f.hi);
  std::string s;
  for (std::size_t i = 0; i < f.allowed.size(); ++i)
    s += (i == 0 ? "" : i + 1 == f.allowed.size() ? " or " : ", ") + std::to_string(f.allowed[i]);
  return s;
}

bool in_range(const Field& f, int v) {
  if (f.feed) return v >= 0 && v < kFeeds;
  if (f.flag) return v == 0 || v == 1;
  if (f.allowed.empty()) return v >= f.lo && v <= f.hi;
  for (int a : f.allowed)
    if (a == v) return true;
  return false;
}

// The field's value as an integer (the feed's index, a flag's 0 or 1), if set.
std::optional<int> value_of(const Field& f, const FastTuning& t) {
  if (f.feed) return t.feed ? std::optional<int>(int(*t.feed)) : std::nullopt;
  if (f.flag) return (t.*f.flag) ? std::optional<int>(int(*(t.*f.flag))) : std::nullopt;
  return t.*f.integer;
}

void set(const Field& f, FastTuning& t, int v) {
  if (f.feed)
    t.feed = FastFeed(v);
  else if (f.flag)
    t.*f.flag = v != 0;
  else
    t.*f.integer = v;
}

std::string shown(const Field& f, int v) {
  return f.feed && v >= 0 && v < kFeeds ? kFeedNames[v] : std::to_string(v);
}

}  // namespace

bool FastTuning::empty() const {
  for (const Field& f : fields())
    if (value_of(f, *this)) return false;
  return true;
}

void check_tuning(const FastTuning& t) {
  for (const Field& f : fields()) {
    const std::optional<int> v = value_of(f, t);
    if (v && !in_range(f, *v))
      throw Error("tuning." + std::string(f.name) + " = " + std::to_string(*v) +
                  " is out of range: expected " + range_of(f));
  }
}

namespace detail {

FastTuning parse_fast_tuning(const std::string& text, const std::string& what) {
  FastTuning t;
  std::vector<std::string> seen;
  for (const std::string& item : split_list(text, ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(what + " '" + printable(text) + "': expected KEY=VALUE[,KEY=VALUE...], got '" +
                  printable(item) + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const Field* field = nullptr;
    std::string keys;
    for (const Field& f : fields()) {
      if (key == f.name) field = &f;
      keys += (keys.empty() ? "" : ", ") + std::string(f.name);
    }
    if (!field)
      throw Error(what + ": unknown key '" + printable(key) + "' (expected " + keys + ")");
    for (const std::string& k : seen)
      if (k == key) throw Error(what + ": " + key + " given twice");
    seen.push_back(key);
    const std::string expected = what + " " + key + "=" + printable(value) + ": expected " +
                                 range_of(*field);
    int v = -1;
    if (field->feed) {
      for (int i = 0; i < kFeeds; ++i)
        if (value == kFeedNames[i]) v = i;
    } else {
      try {
        v = int(parse_integer(value, INT_MIN, INT_MAX, what + " " + key));
      } catch (const Error&) {
        throw Error(expected);
      }
    }
    if (!in_range(*field, v)) throw Error(expected);
    set(*field, t, v);
  }
  return t;
}

std::string tuning_string(const FastTuning& t) {
  std::string s;
  for (const Field& f : fields())
    if (const std::optional<int> v = value_of(f, t))
      s += (s.empty() ? "" : ",") + std::string(f.name) + "=" + shown(f, *v);
  return s.empty() ? "defaults" : s;
}

}  // namespace detail
}  // namespace halo
