// NumPy .npy files (numpy.lib.format), float32/float64 only.
//
// Layout of a file:
//   bytes 0-5   magic "\x93NUMPY"
//   byte  6, 7  format version, major and minor: 1.0, 2.0 or 3.0
//   then        header length H: little-endian uint16 (1.0) or uint32 (2.0, 3.0)
//   then        H bytes of header: a Python dict literal, latin-1 (3.0: UTF-8), padded with spaces
//               and ending in '\n', e.g.
//                 {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//               NumPy pads it so that the data starts at a multiple of 64 bytes.
//   then        the elements, prod(shape) * itemsize bytes in C order, and nothing after them.
//
// The header is parsed as the small subset of Python literals it uses (strings, True/False,
// tuples of integers), never evaluated.
#include "io/npy.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>

namespace halo::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;  // data offset of the files we write, as NumPy
constexpr int kMaxDims = 4;
// The header of a float32/float64 array of 1-4 dims is ~100 bytes; a larger length field is
// corruption, and is refused before allocating that much.
constexpr std::uint64_t kMaxHeaderLen = 1 << 20;
constexpr std::align_val_t kDataAlign{64};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr bool kHostLittleEndian = false;
#else
constexpr bool kHostLittleEndian = true;
#endif

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error((path.empty() ? std::string("(empty path)") : path) + ": " + what);
}

const char* type_name(DType t) { return t == DType::f32 ? "float32" : "float64"; }

// Python's repr of a shape tuple: "()", "(5,)", "(3, 4)".
std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// What is wrong with `shape` for halo (1-4 dims, every extent >= 1, size fits in memory), or ""
// if nothing is; the element count goes to *count.
std::string shape_problem(const std::vector<std::int64_t>& shape, std::size_t itemsize,
                          std::int64_t* count) {
  const int ndim = static_cast<int>(shape.size());
  if (ndim == 0) return "0-d (scalar) arrays are not supported: halo needs 1 to 4 dimensions";
  if (ndim > kMaxDims)
    return "shape " + shape_string(shape) + " has " + std::to_string(ndim) +
           " dimensions: halo supports 1 to 4 dimensions";
  const std::int64_t max_elements =
      std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(itemsize);
  std::int64_t n = 1;
  for (int i = 0; i < ndim; ++i) {
    const std::int64_t e = shape[i];
    if (e < 0)
      return "negative extent " + std::to_string(e) + " on axis " + std::to_string(i) +
             " of shape " + shape_string(shape);
    if (e == 0)
      return "extent 0 on axis " + std::to_string(i) + " of shape " + shape_string(shape) +
             ": halo needs at least one element per axis";
    if (n > max_elements / e)
      return "shape " + shape_string(shape) + " has too many elements (its size overflows)";
    n *= e;
  }
  *count = n;
  return "";
}

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, CloseFile>;

std::uint64_t little_endian(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// ---------------------------------------------------------------------------------------------
// Header dict parsing
// ---------------------------------------------------------------------------------------------
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  Header parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{', "the header to start with '{'");
    skip_space();
    while (!consume('}')) {
      const std::size_t key_at = pos_;
      const std::string key = parse_string("a quoted key");
      skip_space();
      expect(':', "':' after key '" + key + "'");
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &seen_descr;
        if (peek() == '[')
          fail(path_,
               "structured dtypes (a list as 'descr') are not supported; halo reads "
               "float32 ('<f4') and float64 ('<f8')");
        h.descr = parse_string("a quoted dtype string as 'descr'");
      } else if (key == "fortran_order") {
        seen = &seen_order;
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        seen = &seen_shape;
        h.shape = parse_shape();
      } else {
        pos_ = key_at;
        malformed("unexpected key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
      }
      if (*seen) {
        pos_ = key_at;
        malformed("duplicate key '" + key + "'");
      }
      *seen = true;
      skip_space();
      if (consume('}')) break;
      expect(',', "',' or '}' after the value of '" + key + "'");
      skip_space();
    }
    skip_space();
    if (pos_ != text_.size()) malformed("unexpected text after the closing '}'");
    if (!seen_descr) malformed("missing key 'descr'");
    if (!seen_order) malformed("missing key 'fortran_order'");
    if (!seen_shape) malformed("missing key 'shape'");
    return h;
  }

 private:
  // "PATH: malformed .npy header (WHAT, at offset N): HEADER" with the header made printable.
  [[noreturn]] void malformed(const std::string& what) const {
    std::string shown;
    for (unsigned char c : text_.substr(0, 160)) {
      if (c >= 0x20 && c < 0x7f) {
        shown += static_cast<char>(c);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        shown += buf;
      }
    }
    if (text_.size() > 160) shown += "...";
    fail(path_,
         "malformed .npy header (" + what + ", at offset " + std::to_string(pos_) + "): " + shown);
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string& what) {
    if (!consume(c)) malformed("expected " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           std::string_view(" \t\n\r\f\v").find(text_[pos_]) != std::string_view::npos)
      ++pos_;
  }

  // A Python string literal in single or double quotes, without escapes.
  std::string parse_string(const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') malformed("expected " + what);
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) malformed("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    if (s.find('\\') != std::string::npos)
      malformed("escape sequences in strings are not supported");
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    for (const bool value : {true, false}) {
      const char* word = value ? "True" : "False";
      const std::size_t len = std::strlen(word);
      if (text_.compare(pos_, len, word) == 0 &&
          !(std::isalnum(static_cast<unsigned char>(peek_at(pos_ + len))) ||
            peek_at(pos_ + len) == '_')) {
        pos_ += len;
        return value;
      }
    }
    malformed("expected True or False as 'fortran_order'");
  }
  char peek_at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  // A tuple of integers: "()", "(5,)", "(3, 4)", "(3, 4,)". Python 2's long suffix ("3L") is
  // accepted, as NumPy does for old files.
  std::vector<std::int64_t> parse_shape() {
    std::vector<std::int64_t> shape;
    expect('(', "a tuple such as (3, 4) as 'shape'");
    skip_space();
    bool trailing_comma = false;
    while (!consume(')')) {
      shape.push_back(parse_int(static_cast<int>(shape.size())));
      skip_space();
      trailing_comma = consume(',');
      skip_space();
      if (!trailing_comma && peek() != ')') malformed("expected ',' or ')' in 'shape'");
    }
    if (shape.size() == 1 && !trailing_comma)
      malformed("'shape' is not a tuple: a 1-d shape is written (" + std::to_string(shape[0]) +
                ",)");
    return shape;
  }

  std::int64_t parse_int(int axis) {
    const std::size_t start = pos_;
    const bool negative = consume('-');
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      malformed("expected an integer extent in 'shape'");
    std::uint64_t v = 0;
    bool overflow = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const unsigned d = static_cast<unsigned>(text_[pos_++] - '0');
      overflow = overflow || v > (std::numeric_limits<std::uint64_t>::max() - d) / 10;
      if (!overflow) v = v * 10 + d;
    }
    const std::uint64_t limit = std::uint64_t(std::numeric_limits<std::int64_t>::max());
    if (overflow || v > limit)
      fail(path_, "extent " + text_.substr(start, pos_ - start) + " on axis " +
                      std::to_string(axis) + " of the shape is too large");
    if (peek() == 'L' || peek() == 'l') ++pos_;
    return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  }

  const std::string& path_;
  const std::string& text_;
  std::size_t pos_ = 0;
};

// A readable name for a NumPy type code such as "i4" or "c8" ("int32", "complex64"), or "".
std::string numpy_type_name(const std::string& code) {
  if (code.empty()) return "";
  const std::string size = code.substr(1);
  const bool sized = !size.empty() && size.size() <= 2 &&
                     size.find_first_not_of("0123456789") == std::string::npos;
  const std::string bits = sized ? std::to_string(std::stoi(size) * 8) : "";
  switch (code[0]) {
    case 'f':
      return "float" + bits;
    case 'i':
      return "int" + bits;
    case 'u':
      return "uint" + bits;
    case 'c':
      return "complex" + bits;
    case 'b':
    case '?':
      return "bool";
    case 'U':
      return "unicode string";
    case 'S':
    case 'a':
      return "byte string";
    case 'V':
      return "raw bytes (void)";
    case 'M':
      return "datetime64";
    case 'm':
      return "timedelta64";
    default:
      return "";
  }
}

// The DType of a descr such as '<f4', or an error naming what the descr is.
DType parse_descr(const std::string& path, const std::string& descr) {
  const bool has_order =
      !descr.empty() && std::string_view("<>=|").find(descr[0]) != std::string_view::npos;
  const char order = has_order ? descr[0] : '=';
  const std::string code = has_order ? descr.substr(1) : descr;
  const std::string quoted = "'" + descr + "'";
  const std::string supported = "halo reads float32 ('<f4') and float64 ('<f8')";

  if (code == "f4" || code == "f8") {
    const DType t = code == "f4" ? DType::f32 : DType::f64;
    const bool little = order == '<' || (order != '>' && kHostLittleEndian);
    if (!little)
      fail(path, "dtype " + quoted + " is big-endian " + type_name(t) +
                     ", which halo does not read; convert it first, e.g. a.astype('<" + code +
                     "')");
    if (!kHostLittleEndian)
      fail(path, "dtype " + quoted + " is little-endian, and this machine is big-endian");
    return t;
  }
  if (code == "O" || code == "O8") {
    const std::string what = " is an object array (pickled Python objects), not supported; ";
    fail(path, "dtype " + quoted + what + supported);
  }
  const std::string name = numpy_type_name(code);
  fail(path, "dtype " + quoted + (name.empty() ? "" : " (" + name + ")") + " is not supported; " +
                 supported);
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

// Magic, version, header length and the header, padded as NumPy does: spaces and a final '\n' so
// that the data starts at a multiple of 64 bytes.
std::string make_preamble(DType dtype, const std::vector<std::int64_t>& shape) {
  std::string dict = std::string("{'descr': '") + (dtype == DType::f32 ? "<f4" : "<f8") +
                     "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  // Like NumPy >= 1.23: room for the first extent to grow to 21 digits, so that a header can be
  // rewritten in place when data is appended along axis 0.
  const std::size_t first_digits = std::to_string(shape[0]).size();
  if (first_digits < 21) dict.append(21 - first_digits, ' ');

  for (int major : {1, 2}) {
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    const std::size_t unpadded = kMagicLen + 2 + length_bytes + dict.size() + 1;
    const std::size_t header_len = dict.size() + (kAlign - unpadded % kAlign) + 1;
    if (major == 1 && header_len > 0xffff) continue;  // needs the 4-byte length of version 2.0
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < length_bytes; ++i)
      out += static_cast<char>((header_len >> (8 * i)) & 0xff);
    out += dict;
    out.append(header_len - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  throw Error("npy header too long");  // unreachable for 1-4 dims
}

// A temporary file next to the destination, removed unless committed.
class TempFile {
 public:
  explicit TempFile(const std::string& dest) {
    static std::atomic<unsigned long> counter{0};
    name_ = dest + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  }
  ~TempFile() {
    if (file_) std::fclose(file_);
    if (created_ && !committed_) std::remove(name_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& name() const { return name_; }
  std::FILE* file() const { return file_; }
  // "wbx": create, never open an existing file. Returns false (errno set) on failure.
  bool open() {
    file_ = std::fopen(name_.c_str(), "wbx");
    created_ = file_ != nullptr;
    return created_;
  }
  // fclose, whose failure (a deferred write error) is reported; the stream is gone either way.
  bool close() {
    std::FILE* f = file_;
    file_ = nullptr;
    return std::fclose(f) == 0;
  }
  void commit() { committed_ = true; }

 private:
  std::string name_;
  std::FILE* file_ = nullptr;
  bool created_ = false, committed_ = false;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// NpyArray
// ---------------------------------------------------------------------------------------------
void NpyArray::Free::operator()(void* p) const { ::operator delete(p, kDataAlign); }

NpyArray::NpyArray(DType dtype, std::vector<std::int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  const std::string why = shape_problem(shape_, dtype_size(dtype_), &size_);
  if (!why.empty()) throw Error("npy array: " + why);
  data_.reset(::operator new(nbytes(), kDataAlign));
}

// ---------------------------------------------------------------------------------------------
// read_npy
// ---------------------------------------------------------------------------------------------
NpyArray read_npy(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
  std::FILE* f = file.get();
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0)
    fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not an .npy file");
  const bool regular = S_ISREG(st.st_mode);
  const auto read_error = [&](const std::string& what) {
    fail(path, "read error in " + what + ": " + std::strerror(errno));
  };

  // Magic and version.
  unsigned char pre[12];
  std::size_t got = std::fread(pre, 1, 8, f);
  if (got < 8 && std::ferror(f)) read_error("the header");
  if (got == 0) fail(path, "empty file, not an .npy file");
  if (std::memcmp(pre, kMagic, std::min(got, kMagicLen)) != 0)
    fail(path, "not an .npy file: it does not start with the magic bytes \\x93NUMPY");
  if (got < 8) fail(path, "truncated header: the file has only " + std::to_string(got) + " bytes");
  const int major = pre[6], minor = pre[7];
  if (!(major >= 1 && major <= 3 && minor == 0))
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (halo reads versions 1.0, 2.0 and 3.0)");

  // Header length and header.
  const int length_bytes = major == 1 ? 2 : 4;
  got = std::fread(pre + 8, 1, length_bytes, f);
  if (got < std::size_t(length_bytes)) {
    if (std::ferror(f)) read_error("the header");
    fail(path, "truncated header: the file ends inside the header length field");
  }
  const std::uint64_t header_len = little_endian(pre + 8, length_bytes);
  const std::uint64_t data_offset = 8 + length_bytes + header_len;
  if (header_len == 0) fail(path, "malformed .npy header: its length is 0");
  if (header_len > kMaxHeaderLen)
    fail(path, "header length " + std::to_string(header_len) +
                   " is implausibly large for a float32/float64 array; the file is corrupt");
  if (regular && std::uint64_t(st.st_size) < data_offset)
    fail(path, "truncated header: expected " + std::to_string(header_len) +
                   " header bytes, found " + std::to_string(st.st_size - 8 - length_bytes));
  std::string text(header_len, '\0');
  got = std::fread(text.data(), 1, header_len, f);
  if (got < header_len) {
    if (std::ferror(f)) read_error("the header");
    fail(path, "truncated header: expected " + std::to_string(header_len) +
                   " header bytes, found " + std::to_string(got));
  }
  if (text.back() != '\n') fail(path, "malformed .npy header: it does not end with a newline");

  const Header h = HeaderParser(path, text).parse();
  const DType dtype = parse_descr(path, h.descr);
  if (h.fortran_order)
    fail(path,
         "Fortran-order (column-major) arrays are not supported; save a C-order array, "
         "e.g. numpy.ascontiguousarray(a)");
  std::int64_t count = 0;
  const std::string why = shape_problem(h.shape, dtype_size(dtype), &count);
  if (!why.empty()) fail(path, why);

  // Data: exactly count * itemsize bytes, read with one fread into the aligned buffer.
  const std::uint64_t nbytes = std::uint64_t(count) * dtype_size(dtype);
  const std::string expected = "expected " + std::to_string(nbytes) + " bytes of " +
                               type_name(dtype) + " data for shape " + shape_string(h.shape);
  if (regular) {
    const std::uint64_t found = std::uint64_t(st.st_size) - data_offset;
    if (found < nbytes)
      fail(path, "truncated data: " + expected + ", found " + std::to_string(found));
    if (found > nbytes)
      fail(path, std::to_string(found - nbytes) + " extra bytes after the data: " + expected +
                     ", found " + std::to_string(found));
  }
  if (nbytes > std::numeric_limits<std::size_t>::max())
    fail(path, "shape " + shape_string(h.shape) + " is too large for this machine");
  NpyArray a;
  try {
    a = NpyArray(dtype, h.shape);
  } catch (const std::bad_alloc&) {
    fail(path,
         "cannot allocate " + std::to_string(nbytes) + " bytes for shape " + shape_string(h.shape));
  }
  got = std::fread(a.data(), 1, nbytes, f);
  if (got < nbytes) {
    if (std::ferror(f)) read_error("the data");
    fail(path, "truncated data: " + expected + ", found " + std::to_string(got));
  }
  if (std::fgetc(f) != EOF) fail(path, "extra bytes after the data: " + expected);
  return a;
}

// ---------------------------------------------------------------------------------------------
// write_npy
// ---------------------------------------------------------------------------------------------
void write_npy(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
               const void* data) {
  if (path.empty()) fail(path, "cannot write an .npy file to an empty path");
  std::int64_t count = 0;
  const std::string why = shape_problem(shape, dtype_size(dtype), &count);
  if (!why.empty()) fail(path, "cannot write: " + why);
  if (!data) fail(path, "cannot write: no data (null pointer)");
  if (!kHostLittleEndian) fail(path, "cannot write: big-endian machines are not supported");
  const std::string preamble = make_preamble(dtype, shape);
  const std::size_t nbytes = static_cast<std::size_t>(count) * dtype_size(dtype);

  TempFile tmp(path);
  if (!tmp.open())
    fail(path, "cannot create the temporary file " + tmp.name() + ": " + std::strerror(errno));
  const auto write_failed = [&] {
    fail(path, "cannot write " + tmp.name() + ": " + std::strerror(errno));
  };
  if (std::fwrite(preamble.data(), 1, preamble.size(), tmp.file()) != preamble.size())
    write_failed();
  if (std::fwrite(data, 1, nbytes, tmp.file()) != nbytes) write_failed();
  if (std::fflush(tmp.file()) != 0) write_failed();
  if (!tmp.close()) write_failed();
  if (std::rename(tmp.name().c_str(), path.c_str()) != 0)
    fail(path, "cannot rename " + tmp.name() + " to it: " + std::strerror(errno));
  tmp.commit();
}

}  // namespace halo::io
