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

#include "core/parse.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <utility>

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

using file_detail::fail;
using file_detail::kHostLittleEndian;

const char* type_name(DType t) { return dtype_info(t).numpy; }

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
      expect(':', "':' after key '" + detail::printable(key) + "'");
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
        malformed("unexpected key '" + detail::printable(key) +
                  "' (expected 'descr', 'fortran_order', 'shape')");
      }
      if (*seen) {
        pos_ = key_at;
        malformed("duplicate key '" + detail::printable(key) + "'");
      }
      *seen = true;
      skip_space();
      if (consume('}')) break;
      expect(',', "',' or '}' after the value of '" + detail::printable(key) + "'");
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
    fail(path_, "malformed .npy header (" + what + ", at offset " + std::to_string(pos_) +
                    "): " + detail::printable(text_));
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
  const std::string quoted = "'" + detail::printable(descr) + "'";
  std::string supported = "halo reads";
  for (std::size_t i = 0; i < dtypes().size(); ++i)
    supported += std::string(i == 0 ? " " : i + 1 == dtypes().size() ? " and " : ", ") +
                 dtypes()[i].numpy + " ('" + dtypes()[i].descr + "')";

  const DTypeInfo* known = nullptr;
  for (const DTypeInfo& d : dtypes())
    if (code == d.descr + 1) known = &d;  // the descr without its byte order
  if (known) {
    const DType t = known->dtype;
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
  std::string dict = std::string("{'descr': '") + dtype_info(dtype).descr +
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

// ---------------------------------------------------------------------------------------------
// Outputs: the rules of npy.hpp
// ---------------------------------------------------------------------------------------------

std::string errno_text() { return std::strerror(errno); }

// How an output is written, once its path is resolved.
struct Destination {
  enum Kind { standard_output, in_place, replace } kind = replace;
  std::string name;    // for messages: the path as given, and where its symlinks led
  std::string target;  // the file written: the path with every symlink followed
  std::string dir;     // target's directory, where a replacement's temporary file goes
  int keep_mode = -1;  // an existing file's permission bits, given to its replacement
  uid_t keep_uid = 0;  // and its owner, given to it when root replaces another user's file
  gid_t keep_gid = 0;
};

// Symlinks followed before giving up, as Linux's own limit.
constexpr int kMaxSymlinks = 40;

// The directory part of a path: "." for a bare name, "/" for "/name".
std::string parent_dir(const std::string& p) {
  const std::size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// Whether the effective user (whose rights open() and rename() check) may `how` (W_OK, X_OK) p;
// errno says why not.
bool may(const std::string& p, int how) {
  return ::faccessat(AT_FDCWD, p.c_str(), how, AT_EACCESS) == 0;
}

std::string octal_mode(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// Where the symlink `link` points, a relative target taken against the link's directory.
std::string follow_link(const std::string& path, const std::string& link) {
  std::string to(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(link.c_str(), to.data(), to.size());
    if (n < 0) fail(path, "cannot read the symbolic link " + link + ": " + errno_text());
    if (static_cast<std::size_t>(n) < to.size()) {
      to.resize(static_cast<std::size_t>(n));
      break;
    }
    to.resize(to.size() * 2);  // possibly truncated: read again with more room
  }
  if (to.empty()) fail(path, "the symbolic link " + link + " is empty");
  const std::string dir = parent_dir(link);
  return to[0] == '/' || dir == "." ? to : dir + "/" + to;
}

// Applies the rules of npy.hpp to `path`: follows its symlinks, refuses what cannot or must not be
// written, and says how the rest is written. Creates, opens and changes nothing.
Destination resolve_output(const std::string& path) {
  Destination d;
  if (path.empty()) fail(path, "cannot write to an empty path");
  if (path == "-") {
    d.name = "standard output";
    const int flags = ::fcntl(STDOUT_FILENO, F_GETFL);
    if (flags < 0) fail(d.name, "cannot write to it: it is closed");
    if ((flags & O_ACCMODE) == O_RDONLY)
      fail(d.name, "cannot write to it: it is open for reading only");
    d.kind = Destination::standard_output;
    return d;
  }

  // One link at a time rather than realpath(), which fails on a dangling link whose target is
  // the file to create. A missing path (or one under a file) is left to the directory checks.
  const auto named = [&](const std::string& target) {
    return target == path ? path : path + " (a symbolic link to " + target + ")";
  };
  std::string p = path;
  struct stat st {};
  bool exists = true;
  for (int links = 0;; ++links) {
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) fail(named(p), "cannot reach it: " + errno_text());
      exists = false;
      break;
    }
    if (!S_ISLNK(st.st_mode)) break;
    if (links == kMaxSymlinks) fail(path, "too many levels of symbolic links");
    p = follow_link(path, p);
  }
  d.name = named(p);
  d.target = p;
  d.dir = parent_dir(p);

  if (exists) {
    if (S_ISDIR(st.st_mode)) fail(d.name, "is a directory");
    if (S_ISSOCK(st.st_mode))
      fail(d.name, "is a socket; halo writes to files, devices, FIFOs and '-' (standard output)");
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode)) {
      if (!may(p, W_OK)) fail(d.name, "cannot write to it: " + errno_text());
      d.kind = Destination::in_place;
      return d;
    }
    if (!S_ISREG(st.st_mode))
      fail(d.name, "is not a regular file, a device or a FIFO; halo does not write to it");
    const std::string keep = "; halo does not replace it: make it writable or remove it first";
    // Root passes access() for every file, so a file without any write bit is taken as a
    // request to keep it, for root too.
    if ((st.st_mode & 0222) == 0)
      fail(d.name, "the existing file is read-only (mode " + octal_mode(st.st_mode) + ")" + keep);
    if (!may(p, W_OK)) {
      if (errno == EROFS) fail(d.name, "is on a read-only file system");
      if (errno == EACCES)
        fail(d.name, "the existing file is not writable by this user (mode " +
                         octal_mode(st.st_mode) + ", owner uid " + std::to_string(st.st_uid) + ")" +
                         keep);
      fail(d.name, "cannot write to it: " + errno_text());
    }
    d.keep_mode = static_cast<int>(st.st_mode & 0777);
    d.keep_uid = st.st_uid;
    d.keep_gid = st.st_gid;
  }

  // The temporary file is created in the target's directory and renamed there.
  struct stat ds {};
  if (::stat(d.dir.c_str(), &ds) != 0) {
    if (errno == ENOENT)
      fail(d.name, "the directory " + d.dir + " does not exist (" + errno_text() + ")");
    fail(d.name, "cannot reach the directory " + d.dir + ": " + errno_text());
  }
  if (!S_ISDIR(ds.st_mode)) fail(d.name, d.dir + " is not a directory");
  if (!may(d.dir, W_OK | X_OK)) {
    if (errno == EROFS) fail(d.name, "the directory " + d.dir + " is on a read-only file system");
    fail(d.name, "the directory " + d.dir + " is not writable: " + errno_text());
  }
  d.kind = Destination::replace;
  return d;
}

// Blocks SIGPIPE in this thread while alive, so that writing to a FIFO or pipe whose reader has
// gone fails with EPIPE (an error naming the path) instead of killing the process; a SIGPIPE
// raised meanwhile is discarded.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

// write() of all n bytes through short writes and EINTR, at most 1 GiB per call (one write()
// moves less than 2 GiB on Linux). False, errno set, on failure.
bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::size_t>(n, std::size_t(1) << 30));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Temporary files being written, removed when SIGINT, SIGTERM or SIGHUP ends the process (the
// destructors that remove them otherwise do not run then; SIGKILL cannot be caught). The handler
// is async-signal-safe: it reads paths kept in static buffers, unlink()s them, then restores the
// default action and raises the signal again, so that the process ends as the signal would have
// ended it (the shell's 128 + N). It is installed while a temporary file exists, and only for
// the signals whose action is the default: a program that ignores or handles one keeps that.
class TempFileGuard {
 public:
  explicit TempFileGuard(const std::string& path) {
    if (path.size() >= kPathBytes) return;  // longer than any path open() takes
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < kSlots; ++i) {
      if (state_[i].load(std::memory_order_relaxed) != kFree) continue;
      std::memcpy(paths_[i], path.c_str(), path.size() + 1);
      state_[i].store(kSet, std::memory_order_release);
      slot_ = i;
      if (users_++ == 0) install();
      return;
    }
  }
  ~TempFileGuard() {
    if (slot_ < 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    state_[slot_].store(kFree, std::memory_order_release);
    if (--users_ == 0) uninstall();
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  static constexpr int kSlots = 16;  // outputs written at once by the threads of a process
  static constexpr std::size_t kPathBytes = 4096;
  static constexpr int kFree = 0, kSet = 1;
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

  static void on_signal(int sig) {
    const int saved = errno;
    for (int i = 0; i < kSlots; ++i)
      if (state_[i].load(std::memory_order_acquire) == kSet) ::unlink(paths_[i]);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);  // pending until the handler returns (sig is blocked in it), then fatal
    errno = saved;
  }
  static void install() {
    for (int i = 0; i < 3; ++i) {
      installed_[i] = false;
      struct sigaction old {};
      if (::sigaction(kSignals[i], nullptr, &old) != 0) continue;
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction act {};
      act.sa_handler = on_signal;
      sigemptyset(&act.sa_mask);
      for (const int other : kSignals) sigaddset(&act.sa_mask, other);
      act.sa_flags = SA_RESTART;
      installed_[i] = ::sigaction(kSignals[i], &act, nullptr) == 0;
    }
  }
  static void uninstall() {
    for (int i = 0; i < 3; ++i) {
      if (!installed_[i]) continue;
      struct sigaction now {};
      // Restored only where the handler is still this one (the program may have set its own).
      if (::sigaction(kSignals[i], nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
          now.sa_handler == on_signal) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(kSignals[i], &dfl, nullptr);
      }
      installed_[i] = false;
    }
  }

  static inline std::mutex mutex_;
  static inline int users_ = 0;
  static inline bool installed_[3] = {};
  static inline std::atomic<int> state_[kSlots] = {};
  static inline char paths_[kSlots][kPathBytes] = {};
  int slot_ = -1;
};

// The temporary file beside `target`: "NAME.tmp.PID.N", with NAME cut where the whole would be
// longer than the directory's longest file name (NAME_MAX, 255 bytes on most file systems).
std::string temp_path(const std::string& target, const std::string& dir) {
  static std::atomic<unsigned long> counter{0};
  const std::string suffix = ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const std::size_t slash = target.find_last_of('/');
  const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = 255;
  std::string name = target.substr(start);
  if (name.size() + suffix.size() > std::size_t(name_max))
    name.resize(std::size_t(name_max) > suffix.size() ? std::size_t(name_max) - suffix.size() : 0);
  return target.substr(0, start) + name + suffix;
}

// One output being written to its Destination: a temporary file renamed over the target by
// commit() (replace), the target itself (in place), or standard output. The temporary file is
// removed unless committed.
class OutputFile {
 public:
  explicit OutputFile(Destination d) : d_(std::move(d)) {}
  ~OutputFile() {
    if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
    if (created_ && !committed_) ::unlink(temp_.c_str());
    guard_.reset();  // after the file is gone or renamed
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void open() {
    if (d_.kind == Destination::standard_output) {
      std::fflush(stdout);  // what the program printed before comes first
      fd_ = STDOUT_FILENO;
    } else if (d_.kind == Destination::in_place) {
      // No O_CREAT, no O_TRUNC: a device or FIFO is written as it is (a FIFO waits for a reader).
      fd_ = ::open(d_.target.c_str(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
      if (fd_ < 0) fail(d_.name, "cannot open for writing: " + errno_text());
      struct stat st {};
      if (::fstat(fd_, &st) != 0 ||
          !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode)))
        fail(d_.name, "changed while it was being opened; try again");
    } else {
      temp_ = temp_path(d_.target, d_.dir);
      guard_ = std::make_unique<TempFileGuard>(temp_);  // before the file exists
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0) fail(d_.name, "cannot create the temporary file " + temp_ + ": " + errno_text());
      created_ = true;
      if (d_.keep_mode >= 0 && ::fchmod(fd_, static_cast<mode_t>(d_.keep_mode)) != 0)
        fail(d_.name, "cannot set the mode of the temporary file " + temp_ + ": " + errno_text());
      // Only root can give a file away; a user replaces only files it may write, and keeps
      // them as the rename leaves them.
      if (d_.keep_mode >= 0 && ::geteuid() == 0 &&
          ::fchown(fd_, d_.keep_uid, d_.keep_gid) != 0)
        fail(d_.name, "cannot give the temporary file " + temp_ + " the owner of the file it " +
                          "replaces: " + errno_text());
    }
  }

  void write(std::string_view bytes) {
    if (!write_all(fd_, bytes.data(), bytes.size())) write_failed();
  }

  // Closes (reporting a deferred write error) and, for a replacement, renames into place.
  void commit() {
    if (d_.kind == Destination::standard_output) return;
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0 && errno != EINTR) write_failed();
    if (d_.kind == Destination::replace) {
      if (::rename(temp_.c_str(), d_.target.c_str()) != 0)
        fail(d_.name, "cannot rename the temporary file " + temp_ + " to it: " + errno_text());
      committed_ = true;
    }
  }

 private:
  [[noreturn]] void write_failed() const {
    const std::string why = errno_text();
    fail(d_.name,
         "cannot write" + (temp_.empty() ? "" : " the temporary file " + temp_) + ": " + why);
  }

  Destination d_;
  std::string temp_;
  std::unique_ptr<TempFileGuard> guard_;
  int fd_ = -1;
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
  try {
    data_.reset(::operator new(nbytes(), kDataAlign));
  } catch (const std::bad_alloc&) {
    throw Error("cannot allocate " + std::to_string(nbytes()) + " bytes of host memory for a " +
                type_name(dtype_) + " array of shape " + shape_string(shape_));
  }
}

// ---------------------------------------------------------------------------------------------
// read_npy
// ---------------------------------------------------------------------------------------------
NpyArray read_npy(const std::string& source,
                  const std::function<void(const NpyHeader&)>& before_alloc) {
  // "-" is standard input (a pipe or a redirected file; a terminal is refused), read through a
  // duplicate of its descriptor so that closing this file leaves file descriptor 0 open.
  const bool from_stdin = source == "-";
  const std::string path = from_stdin ? "standard input" : source;
  FilePtr file;
  if (from_stdin) {
    if (::isatty(STDIN_FILENO))
      fail(path,
           "is a terminal; redirect an .npy file into it (halo apply - out.npy < in.npy) "
           "or pipe one");
    const int fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) fail(path, std::string("cannot read it: ") + std::strerror(errno));
    file.reset(::fdopen(fd, "rb"));
    if (!file) {
      ::close(fd);
      fail(path, std::string("cannot read it: ") + std::strerror(errno));
    }
  } else {
    file.reset(std::fopen(path.c_str(), "rb"));
    if (!file) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
  }
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
  if (before_alloc) before_alloc(NpyHeader{dtype, h.shape, nbytes});
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
  std::int64_t count = 0;
  const std::string why = shape_problem(shape, dtype_size(dtype), &count);
  if (!why.empty()) fail(path, "cannot write: " + why);
  if (!data) fail(path, "cannot write: no data (null pointer)");
  if (!kHostLittleEndian) fail(path, "cannot write: big-endian machines are not supported");
  const std::string preamble = make_preamble(dtype, shape);
  const std::size_t nbytes = static_cast<std::size_t>(count) * dtype_size(dtype);

  write_output(path, {preamble, std::string_view(static_cast<const char*>(data), nbytes)});
}

// ---------------------------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------------------------
void check_output_path(const std::string& path) { resolve_output(path); }

void write_output(const std::string& path, std::initializer_list<std::string_view> parts) {
  OutputFile out(resolve_output(path));
  const NoSigpipe quiet;
  out.open();
  for (const std::string_view part : parts) out.write(part);
  out.commit();
}

[[noreturn]] void file_detail::fail(const std::string& path, const std::string& what) {
  throw Error(
      detail::escape_controls((path.empty() ? std::string("(empty path)") : path) + ": " + what));
}

}  // namespace halo::io
