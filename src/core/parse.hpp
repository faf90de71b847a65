// Strict parsing of the numbers and lists that users type (filter specs, command-line options).
// Numbers are decimal and complete: no hex (0x10), octal, binary, exponent-only or C99 hex-float
// (0x1p1) forms, no surrounding spaces, no '+' sign, no inf/nan. Every error names what was being
// parsed, the text and the allowed range, and is a halo::Error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "halo/halo.hpp"

namespace halo::detail {

// A decimal integer in [lo, hi]: digits, with a leading '-' only when lo < 0.
// `what` names the value in messages, e.g. "--axis" or "filter 'box:K': size".
std::int64_t parse_integer(const std::string& text, std::int64_t lo, std::int64_t hi,
                           const std::string& what);

// A finite decimal real: [-]digits[.digits][e[-]digits] (also ".5" and "5."), in [lo, hi].
double parse_real(const std::string& text, double lo, double hi, const std::string& what);

// The parts of `text` between the separators `sep`, empty ones included ("a,,b" is three parts, ""
// one): every list on the command line and in filter and tuning specs is cut by this.
std::vector<std::string> split_list(const std::string& text, char sep);

// Integers in [lo, hi] separated by `sep` ("4096x4096", "8,16,32"), between min_count and
// max_count of them.
std::vector<std::int64_t> parse_integer_list(const std::string& text, char sep, std::int64_t lo,
                                             std::int64_t hi, std::size_t min_count,
                                             std::size_t max_count, const std::string& what);

// FastTuning from "KEY=VALUE[,KEY=VALUE...]", the keys its fields' names (feed=tma,slots=2,
// winograd=0): feed by name (direct, prefetch, ring, tma, block), flags 0 or 1, integers in their
// field's range. An unknown key, a key given twice or a value out of range is an error naming
// `what` (e.g. "--tune"), the key and the range.
FastTuning parse_fast_tuning(const std::string& text, const std::string& what);
// The fields set in t in that form ("defaults" when none), in the order of FastTuning's fields.
std::string tuning_string(const FastTuning& t);

// `text` with every byte outside printable ASCII shown as \xNN (a NUL or an escape sequence from
// a file must not cut or garble a message), cut to `max_len` bytes with "..." after.
std::string printable(std::string_view text, std::size_t max_len = 160);

// `text` (a path, a message naming paths) with its control characters escaped, so that it stays
// one line and a terminal shows it as it is: \n, \r, \t, and \xNN for the other C0 bytes, DEL,
// the C1 controls (UTF-8 U+0080-U+009F) and bytes that are not UTF-8. Other UTF-8 text, spaces
// and backslashes are kept; nothing is cut.
std::string escape_controls(std::string_view text);

// "1.50 GB", "12.0 MB", "640 B": decimal units, as the benchmarks print GB/s; every size in the
// messages of the library, the CLI and the file readers.
std::string size_text(double bytes);

}  // namespace halo::detail
