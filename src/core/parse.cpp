// Strict decimal parsing of user-typed numbers and lists (see parse.hpp).
#include "core/parse.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "halo/halo.hpp"

namespace halo::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the run of digits at text[i...].
std::size_t digits_at(const std::string& text, std::size_t i) {
  std::size_t n = 0;
  while (i + n < text.size() && is_digit(text[i + n])) ++n;
  return n;
}

std::string range_text(double lo, double hi) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17g..%.17g", lo, hi);
  return buf;
}

}  // namespace

std::int64_t parse_integer(const std::string& text, std::int64_t lo, std::int64_t hi,
                           const std::string& what) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  const auto bad = [&](const std::string& why) -> Error {
    return Error(what + " must be " + why + " in " + range + ", got '" + printable(text) + "'");
  };
  const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::size_t nd = digits_at(text, sign);
  if (nd == 0 || sign + nd != text.size()) throw bad("a decimal integer");
  // Range: compare as an unsigned magnitude, so 19 digits and more cannot overflow silently.
  std::uint64_t mag = 0;
  for (std::size_t i = sign; i < text.size(); ++i) {
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    if (mag > (std::numeric_limits<std::uint64_t>::max() - d) / 10) throw bad("an integer");
    mag = mag * 10 + d;
  }
  const std::uint64_t max_pos = std::uint64_t(std::numeric_limits<std::int64_t>::max());
  if (mag > max_pos + (sign ? 1 : 0)) throw bad("an integer");
  const std::int64_t v = sign ? (mag == max_pos + 1 ? std::numeric_limits<std::int64_t>::min()
                                                    : -static_cast<std::int64_t>(mag))
                              : static_cast<std::int64_t>(mag);
  if (v < lo || v > hi) throw bad("an integer");
  return v;
}

double parse_real(const std::string& text, double lo, double hi, const std::string& what) {
  const auto bad = [&](const std::string& why) -> Error {
    return Error(what + " must be " + why + ", got '" + printable(text) + "'");
  };
  // [-] digits [. digits] [e|E [-|+] digits], with at least one digit in the mantissa.
  std::size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::size_t int_digits = digits_at(text, i);
  i += int_digits;
  std::size_t frac_digits = 0;
  if (i < text.size() && text[i] == '.') {
    frac_digits = digits_at(text, i + 1);
    i += 1 + frac_digits;
  }
  bool ok = int_digits + frac_digits > 0;
  if (ok && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '-' || text[j] == '+')) ++j;
    const std::size_t exp_digits = digits_at(text, j);
    ok = exp_digits > 0;
    i = j + exp_digits;
  }
  if (!ok || i != text.size()) throw bad("a decimal number (e.g. 2, 0.5 or 1e-3)");
  errno = 0;
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v)) throw bad("a finite number");
  if (v < lo || v > hi) throw bad("in " + range_text(lo, hi));
  return v;
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::int64_t> parse_integer_list(const std::string& text, char sep, std::int64_t lo,
                                             std::int64_t hi, std::size_t min_count,
                                             std::size_t max_count, const std::string& what) {
  std::vector<std::int64_t> v;
  for (const std::string& part : split_list(text, sep))
    v.push_back(parse_integer(part, lo, hi, what + " '" + printable(text) + "': each value"));
  if (v.size() < min_count || v.size() > max_count) {
    const std::string count = min_count == max_count
                                  ? std::to_string(min_count)
                                  : std::to_string(min_count) + " to " + std::to_string(max_count);
    throw Error(what + " '" + printable(text) + "': expected " + count + " values separated by '" +
                std::string(1, sep) + "', got " + std::to_string(v.size()));
  }
  return v;
}

std::string printable(std::string_view text, std::size_t max_len) {
  std::string shown;
  for (unsigned char c : text.substr(0, max_len)) {
    if (c >= 0x20 && c < 0x7f) {
      shown += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      shown += buf;
    }
  }
  if (text.size() > max_len) shown += "...";
  return shown;
}

std::string escape_controls(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  const auto hex = [&shown](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    shown += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r' || c == '\t') {
      shown += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      shown += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, its continuation bytes 10xxxxxx, no
    // overlong two-byte forms; a C1 control (0xc2 0x80..0x9f) is escaped like a C0 one.
    const std::size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                            : c >= 0xe0 && c <= 0xef ? 3
                            : c >= 0xf0 && c <= 0xf4 ? 4
                                                     : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (std::size_t j = 1; ok && j < len; ++j)
      ok = (static_cast<unsigned char>(text[i + j]) & 0xc0) == 0x80;
    const bool c1 = ok && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
    if (!ok || c1) {
      for (std::size_t j = 0; j < (c1 ? 2 : 1); ++j) hex(static_cast<unsigned char>(text[i + j]));
      i += c1 ? 2 : 1;
      continue;
    }
    shown.append(text.substr(i, len));
    i += len;
  }
  return shown;
}

std::string size_text(double bytes) {
  char buf[32];
  if (bytes >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else if (bytes >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

}  // namespace halo::detail
