// PNG (libpng) and TIFF (libtiff) files: what image.hpp promises, in four parts: the shared
// pieces (sources, signatures, messages), the PNG reader and writer, the TIFF reader and writer,
// and the public functions. (Over 1,000 lines: the two formats share the file's sources,
// messages and limits; the split into image_png.cpp and image_tiff.cpp is the next step.)
//
// libpng reports errors by longjmp. Every libpng call that can fail runs inside one of the small
// functions below that call setjmp first (png_read_header, png_start_rows, png_read_rows,
// png_encode); they hold no C++ object with a destructor, so a longjmp out of libpng skips no
// destructor. The C++ objects (the array, the row pointers, the structs' guard) live in their
// callers, outside the setjmp frames. The callbacks libpng calls (read, write, error) never
// throw: they record what went wrong in a plain struct and longjmp through png_error.
//
// libtiff reports errors through handlers: each TIFF gets its own (TIFFOpenOptions, libtiff
// 4.5), which keep the first message in the TIFF's I/O struct; the process-wide handlers, which
// print to stderr by default, are silenced once (tiff_quiet) for what libtiff reports without a
// TIFF. Its I/O callbacks never throw either.
#include "io/image.hpp"

#include <fcntl.h>
#include <png.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/parse.hpp"

namespace halo::io {
namespace {

using file_detail::fail;
using file_detail::kHostLittleEndian;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The largest ratio of decoded to encoded bytes of each compression (see image.hpp): zlib's
// Deflate expands at most 1032:1 (258 bytes from a code of 2 bits); LZW's codes have at least
// 9 bits and stand for at most 4096 bytes; PackBits makes at most 128 bytes of 2.
constexpr double kDeflateRatio = 1032;
constexpr double kLzwRatio = 4096.0 * 8 / 9;
constexpr double kPackBitsRatio = 64;
// What a header, the chunk or strip framing and a stream's own header may add beyond that.
constexpr double kSlackBytes = 65536;

// The bytes of a file or of standard input, for the PNG reader (and a TIFF that is not a
// regular file). Errors name the path.
std::string read_all(const std::string& path, int fd, const struct stat& st) {
  std::string bytes;
  if (S_ISREG(st.st_mode)) {
    if (std::uint64_t(st.st_size) > std::uint64_t(std::numeric_limits<std::size_t>::max() / 2))
      fail(path, "the file is too large for this machine");
    try {
      bytes.resize(std::size_t(st.st_size));
    } catch (const std::bad_alloc&) {
      fail(path, "cannot allocate " + detail::size_text(double(st.st_size)) + " to read the file");
    }
    std::size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, &bytes[got], bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path, std::string("read error: ") + std::strerror(errno));
      if (n == 0) break;  // shrank while being read
      got += std::size_t(n);
    }
    bytes.resize(got);
    return bytes;
  }
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::string("read error: ") + std::strerror(errno));
    if (n == 0) break;
    try {
      bytes.append(buf, std::size_t(n));
    } catch (const std::bad_alloc&) {
      fail(path, "out of memory while reading the file");
    }
  }
  return bytes;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens `path` for reading: a missing file, a directory, an unreadable one are errors naming it.
int open_input(const std::string& path, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(path, std::string("cannot open for reading: ") + std::strerror(errno));
  if (::fstat(fd, st) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(e));
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    fail(path, "is a directory, not an image file");
  }
  return fd;
}

// What the first bytes of a file say it is: "PNG", "TIFF", "BigTIFF", another format's name, or
// "" (unknown). `n` bytes at `p`.
std::string sniff(const unsigned char* p, std::size_t n) {
  const auto starts = [&](const char* magic, std::size_t len) {
    return n >= len && std::memcmp(p, magic, len) == 0;
  };
  if (starts("\x89PNG\r\n\x1a\n", 8)) return "PNG";
  if (starts("II*\0", 4) || starts("MM\0*", 4)) return "TIFF";
  if (starts("II+\0", 4) || starts("MM\0+", 4)) return "BigTIFF";
  if (starts("\xff\xd8\xff", 3)) return "JPEG";
  if (starts("GIF87a", 6) || starts("GIF89a", 6)) return "GIF";
  if (starts("\x93NUMPY", 6)) return ".npy";
  if (starts("BM", 2) && n >= 14) return "BMP";
  if (n >= 12 && starts("RIFF", 4) && std::memcmp(p + 8, "WEBP", 4) == 0) return "WebP";
  if (starts("\0\0\0\x0cjP  ", 8) || starts("\xff\x4f\xff\x51", 4)) return "JPEG 2000";
  if (starts("%PDF", 4)) return "PDF";
  if (starts("\x1f\x8b", 2)) return "gzip";
  if (starts("PK\x03\x04", 4)) return "zip";
  if (starts("\x89HDF\r\n\x1a\n", 8)) return "HDF5";
  return "";
}

// The error for a file that is not of `format` ("PNG", "TIFF"): empty, too short, another
// format, or no known signature (`signature` describes the expected one).
[[noreturn]] void not_format(const std::string& path, const unsigned char* p, std::size_t n,
                             const char* format, const char* signature) {
  if (n == 0) fail(path, std::string("empty file, not a ") + format + " file");
  const std::string expected = std::string(format) == "PNG" ? std::string("\x89PNG\r\n\x1a\n", 8)
                                                           : std::string();
  if (!expected.empty() && n < expected.size() && std::memcmp(p, expected.data(), n) == 0)
    fail(path, std::string("truncated ") + format + " file: it has only " + std::to_string(n) +
                   " bytes");
  const std::string is = sniff(p, n);
  if (!is.empty() && is != format && !(is == "BigTIFF" && std::string(format) == "TIFF"))
    fail(path, std::string("not a ") + format + " file: it is a" +
                   (std::string("AEIOU").find(is[0]) != std::string::npos ? "n " : " ") + is +
                   " file");
  fail(path, std::string("not a ") + format + " file: it does not start with the " + format +
                 " signature " + signature + (n < 8 ? " (the file has only " + std::to_string(n) +
                                                        " bytes)"
                                                  : ""));
}

// The element counts and the array of a header; a shape halo cannot hold is an error naming
// the file (NpyArray's message).
NpyArray allocate(const std::string& path, const ImageHeader& h) {
  try {
    return NpyArray(h.dtype, h.shape);
  } catch (const Error& e) {
    fail(path, e.what());
  } catch (const std::bad_alloc&) {
    fail(path, "cannot allocate " + detail::size_text(double(h.data_bytes)) + " for the image");
  }
}

const char* colour_name(int channels, bool alpha, bool rgb) {
  if (channels == 1) return "grey";
  if (channels == 2 && alpha) return "grey+alpha";
  if (channels == 3 && rgb) return "RGB";
  if (channels == 4 && rgb && alpha) return "RGBA";
  return nullptr;
}

std::string colour_text(int channels, bool alpha, bool rgb) {
  if (const char* n = colour_name(channels, alpha, rgb)) return n;
  return std::to_string(channels) + "-channel" + (alpha ? " (last alpha)" : "");
}

// =============================================================================================
// PNG
// =============================================================================================

// Shared with libpng's callbacks: plain data only (see the top of the file).
struct PngRead {
  const unsigned char* data;
  std::size_t size, pos;
  int truncated;
  char message[512];  // libpng's first error
  // IHDR, and the layout after the transformations.
  png_uint_32 width, height;
  int bit_depth, color_type, interlace, has_trns;
  int out_channels, out_depth;
  std::size_t rowbytes;
};

void png_on_error(png_structp png, png_const_charp msg) {
  auto* s = static_cast<PngRead*>(png_get_error_ptr(png));
  if (s && s->message[0] == '\0') std::snprintf(s->message, sizeof s->message, "%s", msg);
  png_longjmp(png, 1);
}
void png_on_warning(png_structp, png_const_charp) {}

void png_on_read(png_structp png, png_bytep out, std::size_t n) {
  auto* s = static_cast<PngRead*>(png_get_io_ptr(png));
  if (n > s->size - s->pos) {
    s->truncated = 1;
    png_error(png, "the file ends early");
  }
  std::memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

// The steps of reading, each behind its own setjmp; 0 on success, 1 after a libpng error.
int png_read_header(png_structp png, png_infop info, PngRead* s) {
  if (setjmp(png_jmpbuf(png))) return 1;
  png_set_read_fn(png, s, png_on_read);
  // Any size PNG allows; the size is checked against the file before any row is allocated.
  png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
  // Chunks beside IHDR, PLTE, tRNS, IDAT and IEND are skipped, not interpreted.
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
  png_read_info(png, info);
  s->width = png_get_image_width(png, info);
  s->height = png_get_image_height(png, info);
  s->bit_depth = png_get_bit_depth(png, info);
  s->color_type = png_get_color_type(png, info);
  s->interlace = png_get_interlace_type(png, info);
  s->has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  return 0;
}

int png_start_rows(png_structp png, png_infop info, PngRead* s) {
  if (setjmp(png_jmpbuf(png))) return 1;
  if (s->color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (s->color_type == PNG_COLOR_TYPE_GRAY && s->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (s->has_trns) png_set_tRNS_to_alpha(png);
  if (s->bit_depth == 16 && kHostLittleEndian) png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  s->out_channels = png_get_channels(png, info);
  s->out_depth = png_get_bit_depth(png, info);
  s->rowbytes = png_get_rowbytes(png, info);
  return 0;
}

int png_read_rows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return 1;
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  return 0;
}

struct PngReadGuard {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReadGuard() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
  }
};

[[noreturn]] void png_failed(const std::string& path, const PngRead& s, const char* where) {
  if (s.truncated)
    fail(path, "truncated PNG file: it ends after " + std::to_string(s.size) + " bytes, in " +
                   where);
  fail(path, std::string("malformed PNG file (in ") + where + "): " +
                 (s.message[0] ? detail::printable(s.message) : std::string("unknown error")));
}

Image read_png(const std::string& path, const unsigned char* data, std::size_t size,
               const std::function<void(const ImageHeader&)>& before_alloc) {
  if (size < 8 || png_sig_cmp(data, 0, 8) != 0)
    not_format(path, data, size, "PNG", "\\x89PNG\\r\\n\\x1a\\n");
  PngRead s{};
  s.data = data;
  s.size = size;
  PngReadGuard g;
  g.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, png_on_error, png_on_warning);
  if (!g.png) fail(path, "cannot start libpng (out of memory?)");
  g.info = png_create_info_struct(g.png);
  if (!g.info) fail(path, "cannot start libpng (out of memory?)");
  if (png_read_header(g.png, g.info, &s) != 0) png_failed(path, s, "the header");

  // Before libpng allocates its rows: the decoded stream (a filter byte and the packed samples
  // of each row, all passes of an interlaced image taken as one) must fit the file's bytes
  // expanded at Deflate's largest ratio.
  const int in_channels = s.color_type == PNG_COLOR_TYPE_GRAY         ? 1
                          : s.color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                          : s.color_type == PNG_COLOR_TYPE_RGB        ? 3
                          : s.color_type == PNG_COLOR_TYPE_RGB_ALPHA  ? 4
                                                                      : 1;  // palette
  const double row_in = std::ceil(double(s.width) * in_channels * s.bit_depth / 8.0) + 1;
  const double stream = double(s.height) * row_in;
  if (stream > double(size) * kDeflateRatio + kSlackBytes)
    fail(path, "the header says " + std::to_string(s.width) + "x" + std::to_string(s.height) +
                   " pixels (" + detail::size_text(stream) + " once decompressed), more than a PNG " +
                   "file of " + std::to_string(size) + " bytes can hold (Deflate expands at " +
                   "most 1032 times); the file is corrupt");
  if (png_start_rows(g.png, g.info, &s) != 0) png_failed(path, s, "the header");
  if (!(s.out_depth == 8 || s.out_depth == 16) || s.out_channels < 1 || s.out_channels > 4)
    fail(path, "unsupported PNG layout: " + std::to_string(s.out_depth) + "-bit samples, " +
                   std::to_string(s.out_channels) + " channels after expansion");

  ImageHeader h;
  h.format = ImageFormat::png;
  h.dtype = s.out_depth == 16 ? DType::u16 : DType::u8;
  h.shape = {std::int64_t(s.height), std::int64_t(s.width)};
  if (s.out_channels > 1) h.shape.push_back(s.out_channels);
  h.layout.channels = s.out_channels > 1;
  h.layout.alpha = s.out_channels == 2 || s.out_channels == 4;
  h.file_bytes = size;
  const std::uint64_t row_bytes =
      std::uint64_t(s.width) * std::uint64_t(s.out_channels) * std::uint64_t(s.out_depth / 8);
  h.data_bytes = row_bytes * s.height;
  if (s.rowbytes != row_bytes) fail(path, "libpng's row size does not match the image's");
  h.what = std::to_string(s.out_depth) + "-bit " +
           colour_text(s.out_channels, h.layout.alpha, s.out_channels >= 3) + " PNG";
  if (s.color_type == PNG_COLOR_TYPE_PALETTE)
    h.what += " (from a palette)";
  else if (s.bit_depth < 8)
    h.what += " (from " + std::to_string(s.bit_depth) + "-bit grey)";
  if (before_alloc) before_alloc(h);

  Image img{allocate(path, h), h};
  std::vector<png_bytep> rows;
  try {
    rows.resize(s.height);
  } catch (const std::bad_alloc&) {
    fail(path, "cannot allocate the PNG's row pointers");
  }
  auto* base = static_cast<png_bytep>(img.pixels.data());
  for (png_uint_32 y = 0; y < s.height; ++y) rows[y] = base + std::size_t(y) * row_bytes;
  if (png_read_rows(g.png, rows.data()) != 0) png_failed(path, s, "the image data");
  return img;
}

// --- writing ---

struct PngWrite {
  std::string* out;
  int out_of_memory;
  char message[512];
  png_uint_32 width, height;
  int depth, color_type, level, interlace;
  png_bytepp rows;
};

void png_write_error(png_structp png, png_const_charp msg) {
  auto* s = static_cast<PngWrite*>(png_get_error_ptr(png));
  if (s && s->message[0] == '\0') std::snprintf(s->message, sizeof s->message, "%s", msg);
  png_longjmp(png, 1);
}

void png_on_write(png_structp png, png_bytep data, std::size_t n) {
  auto* s = static_cast<PngWrite*>(png_get_io_ptr(png));
  bool ok = true;
  try {
    s->out->append(reinterpret_cast<const char*>(data), n);
  } catch (...) {
    ok = false;
  }
  if (!ok) {
    s->out_of_memory = 1;
    png_error(png, "out of memory for the encoded file");
  }
}
void png_on_flush(png_structp) {}

int png_encode(png_structp png, png_infop info, PngWrite* s) {
  if (setjmp(png_jmpbuf(png))) return 1;
  png_set_write_fn(png, s, png_on_write, png_on_flush);
  png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
  png_set_IHDR(png, info, s->width, s->height, s->depth, s->color_type,
               s->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, s->level);
  png_write_info(png, info);
  if (s->depth == 16 && kHostLittleEndian) png_set_swap(png);
  if (s->interlace) png_set_interlace_handling(png);
  png_write_image(png, s->rows);
  png_write_end(png, nullptr);
  return 0;
}

struct PngWriteGuard {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngWriteGuard() {
    if (png) png_destroy_write_struct(&png, info ? &info : nullptr);
  }
};

// =============================================================================================
// TIFF
// =============================================================================================

void tiff_quiet() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
  });
}

// One TIFF's I/O: a source in memory or a file descriptor (read with pread), or a sink in
// memory; and the first error libtiff reported about it.
struct TiffIo {
  const unsigned char* mem = nullptr;
  int fd = -1;
  std::uint64_t size = 0;
  std::string* out = nullptr;
  std::uint64_t pos = 0;
  int read_errno = 0;
  char message[512] = {};
};

tmsize_t tiff_read(thandle_t h, void* buf, tmsize_t n) {
  auto* io = static_cast<TiffIo*>(h);
  if (n < 0) return -1;
  const std::uint64_t end = io->out ? io->out->size() : io->size;
  const std::uint64_t k = io->pos >= end ? 0 : std::min<std::uint64_t>(std::uint64_t(n), end - io->pos);
  if (k == 0) return 0;
  if (io->out) {
    std::memcpy(buf, io->out->data() + io->pos, k);
  } else if (io->mem) {
    std::memcpy(buf, io->mem + io->pos, k);
  } else {
    std::uint64_t got = 0;
    while (got < k) {
      const ssize_t r = ::pread(io->fd, static_cast<char*>(buf) + got, k - got, off_t(io->pos + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        io->read_errno = errno;
        return -1;
      }
      if (r == 0) break;
      got += std::uint64_t(r);
    }
    io->pos += got;
    return tmsize_t(got);
  }
  io->pos += k;
  return tmsize_t(k);
}

tmsize_t tiff_write(thandle_t h, void* buf, tmsize_t n) {
  auto* io = static_cast<TiffIo*>(h);
  if (!io->out || n < 0) return -1;
  try {
    const std::uint64_t end = io->pos + std::uint64_t(n);
    if (end > io->out->size()) io->out->resize(end);
    std::memcpy(&(*io->out)[io->pos], buf, std::size_t(n));
  } catch (...) {
    return -1;
  }
  io->pos += std::uint64_t(n);
  return n;
}

toff_t tiff_seek(thandle_t h, toff_t off, int whence) {
  auto* io = static_cast<TiffIo*>(h);
  const std::uint64_t end = io->out ? io->out->size() : io->size;
  std::uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? io->pos : end;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return toff_t(-1);
  const std::uint64_t to = base + off;  // off is unsigned: SEEK_CUR/END by a negative wraps
  if (to > (std::uint64_t(1) << 62)) return toff_t(-1);
  io->pos = to;
  return to;
}

int tiff_close(thandle_t) { return 0; }
toff_t tiff_size(thandle_t h) {
  auto* io = static_cast<TiffIo*>(h);
  return io->out ? io->out->size() : io->size;
}
int tiff_map(thandle_t, void**, toff_t*) { return 0; }
void tiff_unmap(thandle_t, void*, toff_t) {}

int tiff_on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* io = static_cast<TiffIo*>(user);
  if (io && io->message[0] == '\0') {
    char text[448];
    std::vsnprintf(text, sizeof text, fmt, ap);
    if (module && *module)
      std::snprintf(io->message, sizeof io->message, "%s: %s", module, text);
    else
      std::snprintf(io->message, sizeof io->message, "%s", text);
  }
  return 1;  // handled: nothing printed
}
int tiff_on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffGuard {
  TIFF* tif = nullptr;
  ~TiffGuard() {
    if (tif) TIFFClose(tif);
  }
};

// Opens a TIFF on `io` (mode "r", "w" or "w8"); libtiff allocates at most `max_alloc` bytes at
// once. Null on failure, with the reason in io.message.
TIFF* tiff_open(TiffIo& io, const std::string& name, const char* mode, tmsize_t max_alloc) {
  tiff_quiet();
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  if (!opts) return nullptr;
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts, max_alloc);
  TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_on_error, &io);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_on_warning, &io);
  TIFF* t = TIFFClientOpenExt(name.c_str(), mode, &io, tiff_read, tiff_write, tiff_seek,
                              tiff_close, tiff_size, tiff_map, tiff_unmap, opts);
  TIFFOpenOptionsFree(opts);
  return t;
}

std::string tiff_message(const TiffIo& io) {
  if (io.read_errno) return std::string("read error: ") + std::strerror(io.read_errno);
  return io.message[0] ? detail::printable(io.message) : std::string("libtiff gave no reason");
}

const char* compression_name(unsigned c) {
  switch (c) {
    case COMPRESSION_NONE: return "none";
    case COMPRESSION_CCITTRLE: return "CCITT RLE";
    case COMPRESSION_CCITTFAX3: return "CCITT Group 3 fax";
    case COMPRESSION_CCITTFAX4: return "CCITT Group 4 fax";
    case COMPRESSION_LZW: return "LZW";
    case COMPRESSION_OJPEG: return "old-style JPEG";
    case COMPRESSION_JPEG: return "JPEG";
    case COMPRESSION_PACKBITS: return "PackBits";
    case COMPRESSION_DEFLATE:
    case COMPRESSION_ADOBE_DEFLATE: return "Deflate";
    case COMPRESSION_JBIG: return "JBIG";
    case COMPRESSION_SGILOG:
    case COMPRESSION_SGILOG24: return "SGI LogLuv";
    case COMPRESSION_PIXARLOG: return "PixarLog";
    case COMPRESSION_JP2000: return "JPEG 2000";
    case COMPRESSION_LERC: return "LERC";
    case COMPRESSION_LZMA: return "LZMA";
    case COMPRESSION_ZSTD: return "ZSTD";
    case COMPRESSION_WEBP: return "WebP";
    case COMPRESSION_JXL: return "JPEG XL";
    default: return nullptr;
  }
}

// The decoded-to-encoded ratio a compression cannot exceed, or 0 for one halo does not read.
double compression_ratio(unsigned c) {
  switch (c) {
    case COMPRESSION_NONE: return 1;
    case COMPRESSION_LZW: return kLzwRatio;
    case COMPRESSION_DEFLATE:
    case COMPRESSION_ADOBE_DEFLATE: return kDeflateRatio;
    case COMPRESSION_PACKBITS: return kPackBitsRatio;
    default: return 0;
  }
}

const char* photometric_name(unsigned p) {
  switch (p) {
    case PHOTOMETRIC_MINISWHITE: return "min-is-white grey";
    case PHOTOMETRIC_PALETTE: return "palette (colour-mapped)";
    case PHOTOMETRIC_MASK: return "transparency mask";
    case PHOTOMETRIC_SEPARATED: return "separated (CMYK)";
    case PHOTOMETRIC_YCBCR: return "YCbCr";
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
    case PHOTOMETRIC_ITULAB: return "L*a*b*";
    case PHOTOMETRIC_CFA: return "colour filter array (raw)";
    case PHOTOMETRIC_LOGL:
    case PHOTOMETRIC_LOGLUV: return "LogLuv";
    default: return nullptr;
  }
}

// One page (directory) of a TIFF as halo reads it.
struct TiffPage {
  std::uint32_t width = 0, height = 0;
  std::uint16_t spp = 1, bps = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
  std::uint16_t photometric = PHOTOMETRIC_MINISBLACK, compression = COMPRESSION_NONE;
  bool tiled = false, alpha = false, rgb = false;
  std::uint32_t tile_w = 0, tile_h = 0, rows_per_strip = 0;
  DType dtype = DType::u8;
  int sample_bytes = 1;       // in the file
  bool widen_int8 = false;    // int8 samples, read as int16
  bool check_uint32 = false;  // uint32 samples, read as int32 where they fit

  std::string type_text() const {
    const char* kind = format == SAMPLEFORMAT_IEEEFP ? "float" : format == SAMPLEFORMAT_INT ? "int" : "uint";
    return std::string(kind) + std::to_string(bps);
  }
  bool same_type(const TiffPage& o) const {
    return width == o.width && height == o.height && spp == o.spp && bps == o.bps &&
           format == o.format && alpha == o.alpha && rgb == o.rgb;
  }
  std::string describe() const {
    return std::to_string(width) + "x" + std::to_string(height) + " " + type_text() + " " +
           colour_text(spp, alpha, rgb);
  }
};

// The facts of the current directory, or the reason halo cannot read it ("" and *page set).
std::string tiff_page(TIFF* t, TiffPage* page) {
  TiffPage& p = *page;
  std::uint32_t u32 = 0;
  std::uint16_t u16 = 0;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &u32) || u32 == 0) return "no image width (or 0)";
  p.width = u32;
  if (!TIFFGetField(t, TIFFTAG_IMAGELENGTH, &u32) || u32 == 0) return "no image length (or 0)";
  p.height = u32;
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &p.spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &p.bps);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &p.format);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &p.planar);
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &p.compression);
  if (TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &u16)) p.photometric = u16;
  if (p.spp == 0) return "0 samples per pixel";

  if (compression_ratio(p.compression) == 0) {
    const char* n = compression_name(p.compression);
    return std::string("compression ") + (n ? n : "number " + std::to_string(p.compression)) +
           " is not supported; halo reads uncompressed, LZW, Deflate and PackBits TIFFs";
  }
  if (p.photometric == PHOTOMETRIC_RGB) {
    if (p.spp < 3)
      return "an RGB image with " + std::to_string(p.spp) + " sample" + (p.spp == 1 ? "" : "s") +
             " per pixel (RGB needs 3 or more)";
    p.rgb = true;
  } else if (p.photometric != PHOTOMETRIC_MINISBLACK) {
    const char* n = photometric_name(p.photometric);
    return std::string("photometric interpretation ") +
           (n ? n : "number " + std::to_string(p.photometric)) +
           " is not supported; halo reads grey (min-is-black) and RGB images";
  }
  if (p.planar != PLANARCONFIG_CONTIG && p.planar != PLANARCONFIG_SEPARATE)
    return "planar configuration " + std::to_string(p.planar) + " is not 1 (chunky) or 2 (planar)";

  switch (p.format) {
    case SAMPLEFORMAT_UINT:
      if (p.bps == 64)
        return "64-bit unsigned integer samples are not supported (halo has no uint64)";
      p.dtype = p.bps == 8 ? DType::u8 : p.bps == 16 ? DType::u16 : DType::i32;
      p.check_uint32 = p.bps == 32;
      break;
    case SAMPLEFORMAT_INT:
      if (p.bps == 64)
        return "64-bit signed integer samples are not supported (halo has no int64)";
      p.dtype = p.bps == 8 ? DType::i16 : p.bps == 16 ? DType::i16 : DType::i32;
      p.widen_int8 = p.bps == 8;
      break;
    case SAMPLEFORMAT_IEEEFP:
      if (!(p.bps == 16 || p.bps == 32 || p.bps == 64))
        return std::to_string(p.bps) + "-bit floating-point samples are not supported; halo " +
               "reads 16-, 32- and 64-bit floats";
      p.dtype = p.bps == 16 ? DType::f16 : p.bps == 32 ? DType::f32 : DType::f64;
      break;
    case SAMPLEFORMAT_COMPLEXINT:
    case SAMPLEFORMAT_COMPLEXIEEEFP:
      return "complex samples are not supported";
    case SAMPLEFORMAT_VOID:
      return "untyped (void) samples are not supported";
    default:
      return "sample format " + std::to_string(p.format) + " is not supported";
  }
  if (!(p.bps == 8 || p.bps == 16 || p.bps == 32))
    if (!(p.format == SAMPLEFORMAT_IEEEFP && p.bps == 64))
      return std::to_string(p.bps) + "-bit samples are not supported; halo reads 8-, 16- and " +
             "32-bit integer samples and 16-, 32- and 64-bit floats";
  p.sample_bytes = p.bps / 8;

  std::uint16_t extra = 0;
  std::uint16_t* types = nullptr;
  if (TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &extra, &types) && extra > 0 && types &&
      extra <= p.spp)
    p.alpha = types[extra - 1] == EXTRASAMPLE_ASSOCALPHA ||
              types[extra - 1] == EXTRASAMPLE_UNASSALPHA;
  if (p.alpha && p.spp < 2) p.alpha = false;

  p.tiled = TIFFIsTiled(t) != 0;
  if (p.tiled) {
    if (!TIFFGetField(t, TIFFTAG_TILEWIDTH, &p.tile_w) || p.tile_w == 0 ||
        !TIFFGetField(t, TIFFTAG_TILELENGTH, &p.tile_h) || p.tile_h == 0)
      return "a tiled image without a tile width or length (or 0)";
  } else {
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &p.rows_per_strip);
    if (p.rows_per_strip == 0) return "0 rows per strip";
    p.rows_per_strip = std::min(p.rows_per_strip, p.height);
  }
  return "";
}

// One sample of `bytes` bytes from s to d.
inline void copy_sample(unsigned char* d, const unsigned char* s, int bytes) {
  switch (bytes) {
    case 1: *d = *s; break;
    case 2: std::memcpy(d, s, 2); break;
    case 4: std::memcpy(d, s, 4); break;
    default: std::memcpy(d, s, 8); break;
  }
}

// Decodes the current directory into `dst`: height x width x spp samples of sample_bytes each,
// chunky. `scratch` is a buffer for a strip of one plane or a tile. Returns "" or the reason.
std::string tiff_decode(TIFF* t, const TiffPage& p, unsigned char* dst,
                        std::vector<unsigned char>& scratch) {
  const std::uint64_t sb = std::uint64_t(p.sample_bytes), spp = p.spp, w = p.width, h = p.height;
  const std::uint64_t pixel = sb * spp, row = w * pixel;
  const bool separate = p.planar == PLANARCONFIG_SEPARATE && spp > 1;
  const std::uint64_t planes = separate ? spp : 1;
  if (!p.tiled) {
    const std::uint64_t rps = p.rows_per_strip;
    const std::uint64_t strips = (h + rps - 1) / rps;
    if (std::uint64_t(TIFFNumberOfStrips(t)) < strips * planes)
      return "it has " + std::to_string(TIFFNumberOfStrips(t)) + " strips, " +
             std::to_string(strips * planes) + " are needed";
    if (separate) scratch.resize(rps * w * sb);
    for (std::uint64_t c = 0; c < planes; ++c)
      for (std::uint64_t s = 0; s < strips; ++s) {
        const std::uint64_t rows = std::min(rps, h - s * rps);
        const std::uint64_t bytes = rows * (separate ? w * sb : row);
        unsigned char* into = separate ? scratch.data() : dst + s * rps * row;
        const tmsize_t got =
            TIFFReadEncodedStrip(t, std::uint32_t(c * strips + s), into, tmsize_t(bytes));
        if (got < 0 || std::uint64_t(got) < bytes)
          return "cannot decode strip " + std::to_string(c * strips + s) +
                 (got >= 0 ? " (it holds " + std::to_string(got) + " of " +
                                 std::to_string(bytes) + " bytes)"
                           : "");
        if (separate)
          for (std::uint64_t y = 0; y < rows; ++y) {
            unsigned char* out = dst + (s * rps + y) * row + c * sb;
            const unsigned char* in = scratch.data() + y * w * sb;
            for (std::uint64_t x = 0; x < w; ++x) copy_sample(out + x * pixel, in + x * sb, int(sb));
          }
      }
    return "";
  }
  const std::uint64_t tw = p.tile_w, th = p.tile_h;
  const std::uint64_t tile_pixel = separate ? sb : pixel;
  const std::uint64_t tile_bytes = tw * th * tile_pixel;
  scratch.resize(tile_bytes);
  for (std::uint64_t c = 0; c < planes; ++c)
    for (std::uint64_t ty = 0; ty < h; ty += th)
      for (std::uint64_t tx = 0; tx < w; tx += tw) {
        const std::uint32_t tile = TIFFComputeTile(t, std::uint32_t(tx), std::uint32_t(ty), 0,
                                                   std::uint16_t(c));
        const tmsize_t got = TIFFReadEncodedTile(t, tile, scratch.data(), tmsize_t(tile_bytes));
        if (got < 0 || std::uint64_t(got) < tile_bytes)
          return "cannot decode tile " + std::to_string(tile) +
                 (got >= 0 ? " (it holds " + std::to_string(got) + " of " +
                                 std::to_string(tile_bytes) + " bytes)"
                           : "");
        const std::uint64_t rows = std::min(th, h - ty), cols = std::min(tw, w - tx);
        for (std::uint64_t y = 0; y < rows; ++y) {
          const unsigned char* in = scratch.data() + y * tw * tile_pixel;
          unsigned char* out = dst + (ty + y) * row + tx * pixel;
          if (!separate) {
            std::memcpy(out, in, cols * pixel);
          } else {
            out += c * sb;
            for (std::uint64_t x = 0; x < cols; ++x) copy_sample(out + x * pixel, in + x * sb, int(sb));
          }
        }
      }
  return "";
}

Image read_tiff(const std::string& path, TiffIo& io,
                const std::function<void(const ImageHeader&)>& before_alloc) {
  unsigned char sig[8] = {};
  std::size_t have = 0;
  {
    TiffIo probe = io;
    const tmsize_t n = tiff_read(&probe, sig, sizeof sig);
    if (n < 0) fail(path, std::string("read error: ") + std::strerror(probe.read_errno));
    have = std::size_t(n);
  }
  const std::string is = sniff(sig, have);
  if (is != "TIFF" && is != "BigTIFF")
    not_format(path, sig, have, "TIFF", "II*\\0 or MM\\0* (BigTIFF: II+\\0 or MM\\0+)");
  const std::uint64_t file = io.size;
  // libtiff's largest single allocation: its tables and a strip's or tile's encoded bytes are
  // in the file; 256 MiB at least.
  const double max_alloc = std::max(double(file) + (1 << 20), double(256 << 20));
  TiffGuard g;
  g.tif = tiff_open(io, path, "rm", tmsize_t(std::min(max_alloc, 9.0e18)));
  if (!g.tif) fail(path, "cannot read the TIFF: " + tiff_message(io));
  TIFF* t = g.tif;

  // Every page's facts first: one stack of one size and type, or an error naming the page.
  std::vector<TiffPage> pages;
  for (std::uint64_t i = 0;; ++i) {
    if (i > 0) {
      io.message[0] = '\0';
      const int more = TIFFReadDirectory(t);
      if (!more) {
        if (io.message[0] && !TIFFLastDirectory(t))
          fail(path, "cannot read page " + std::to_string(i + 1) + ": " + tiff_message(io));
        break;
      }
    }
    TiffPage p;
    const std::string why = tiff_page(t, &p);
    const std::string which = "page " + std::to_string(i + 1);
    const bool one_page = i == 0 && TIFFLastDirectory(t);
    if (!why.empty()) fail(path, (one_page ? std::string() : which + ": ") + why);
    if (!pages.empty() && !p.same_type(pages[0]))
      fail(path, which + " is " + p.describe() + ", page 1 is " + pages[0].describe() +
                     ": a multi-page TIFF is read as a stack only when every page has the same " +
                     "size and type");
    try {
      pages.push_back(p);
    } catch (const std::bad_alloc&) {
      fail(path, "out of memory listing the TIFF's pages");
    }
    if (TIFFLastDirectory(t)) break;
  }
  const TiffPage& p0 = pages[0];

  // Sizes, and what the file can hold: each page's samples at its compression's largest ratio.
  const double samples = double(p0.width) * p0.height * p0.spp;
  double need_file = 0;
  for (const TiffPage& p : pages) {
    need_file += samples * p.sample_bytes / compression_ratio(p.compression);
    if (p.tiled) {
      const double tile = double(p.tile_w) * p.tile_h *
                          (p.planar == PLANARCONFIG_SEPARATE ? 1 : p.spp) * p.sample_bytes;
      if (tile > double(file) * compression_ratio(p.compression) + kSlackBytes)
        fail(path, "a tile of " + std::to_string(p.tile_w) + "x" + std::to_string(p.tile_h) +
                       " pixels (" + detail::size_text(tile) + ") is more than a file of " +
                       std::to_string(file) + " bytes can hold; the file is corrupt");
    }
  }
  const std::string pages_text =
      pages.size() > 1 ? std::to_string(pages.size()) + " pages of " : "";
  if (need_file > double(file) + kSlackBytes)
    fail(path, "the header says " + pages_text + std::to_string(p0.width) + "x" +
                   std::to_string(p0.height) + " pixels of " + std::to_string(p0.spp) + " " +
                   p0.type_text() + " sample" + (p0.spp == 1 ? "" : "s") + " (" +
                   detail::size_text(samples * p0.sample_bytes * double(pages.size())) +
                   "), more than a file of " + std::to_string(file) + " bytes can hold (" +
                   (p0.compression == COMPRESSION_NONE
                        ? std::string("uncompressed")
                        : std::string(compression_name(p0.compression)) + ", at its largest ratio") +
                   "); the file is corrupt");

  ImageHeader h;
  h.format = ImageFormat::tiff;
  h.dtype = p0.dtype;
  h.pages = std::int64_t(pages.size());
  if (pages.size() > 1) h.shape.push_back(std::int64_t(pages.size()));
  h.shape.push_back(p0.height);
  h.shape.push_back(p0.width);
  if (p0.spp > 1) h.shape.push_back(p0.spp);
  h.layout.channels = p0.spp > 1;
  h.layout.alpha = p0.alpha;
  h.file_bytes = file;
  h.data_bytes = std::uint64_t(samples * double(pages.size())) * dtype_size(h.dtype);
  h.what = (pages.size() > 1 ? std::to_string(pages.size()) + "-page " : std::string()) +
           p0.type_text() + (p0.widen_int8 ? " (read as int16)" : "") +
           (p0.check_uint32 ? " (read as int32)" : "") + " " +
           colour_text(p0.spp, p0.alpha, p0.rgb) + " TIFF";
  if (before_alloc) before_alloc(h);
  Image img{allocate(path, h), h};

  // The pages, in order, into the array: samples as in the file (int8 in the array's first
  // half, widened below).
  if (!TIFFSetDirectory(t, 0)) fail(path, "cannot read page 1 again: " + tiff_message(io));
  const std::uint64_t page_bytes =
      std::uint64_t(p0.width) * p0.height * p0.spp * std::uint64_t(p0.sample_bytes);
  auto* base = static_cast<unsigned char*>(img.pixels.data());
  std::vector<unsigned char> scratch;
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (i > 0 && !TIFFReadDirectory(t))
      fail(path, "cannot read page " + std::to_string(i + 1) + " again: " + tiff_message(io));
    io.message[0] = '\0';
    std::string why;
    try {
      why = tiff_decode(t, pages[i], base + i * page_bytes, scratch);
    } catch (const std::bad_alloc&) {
      why = "out of memory for a strip or tile";
    }
    if (!why.empty())
      fail(path, (pages.size() > 1 ? "page " + std::to_string(i + 1) + ": " : std::string()) +
                     why + (io.message[0] || io.read_errno ? ": " + tiff_message(io) : ""));
  }
  const std::int64_t n = img.pixels.size();
  if (p0.widen_int8) {
    auto* out = img.pixels.as<std::int16_t>();
    for (std::int64_t i = n - 1; i >= 0; --i) {
      std::int8_t v;
      std::memcpy(&v, base + i, 1);
      out[i] = v;
    }
  }
  if (p0.check_uint32) {
    std::uint32_t most = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t v;
      std::memcpy(&v, base + 4 * i, 4);
      most = std::max(most, v);
    }
    if (most > std::uint32_t(std::numeric_limits<std::int32_t>::max()))
      fail(path, "uint32 samples up to " + std::to_string(most) + " do not fit int32 (at most " +
                     "2147483647): halo has no uint32 and reads a uint32 TIFF as int32 only " +
                     "where every value fits");
  }
  return img;
}

// --- writing ---

struct TiffSample {
  std::uint16_t bits = 0, format = 0;
};
TiffSample tiff_sample(DType t) {
  switch (t) {
    case DType::u8: return {8, SAMPLEFORMAT_UINT};
    case DType::u16: return {16, SAMPLEFORMAT_UINT};
    case DType::i16: return {16, SAMPLEFORMAT_INT};
    case DType::i32: return {32, SAMPLEFORMAT_INT};
    case DType::f16: return {16, SAMPLEFORMAT_IEEEFP};
    case DType::f32: return {32, SAMPLEFORMAT_IEEEFP};
    case DType::f64: return {64, SAMPLEFORMAT_IEEEFP};
    default: return {};
  }
}

// An array's image dimensions under a layout: pages (1 when 2-D), height, width, channels.
struct Dims {
  std::int64_t pages = 1, h = 0, w = 0, c = 1;
};
// The dimensions, or false where the shape is not an image of `format` under `layout`.
bool image_dims(ImageFormat format, const std::vector<std::int64_t>& shape,
                const ImageLayout& layout, Dims* d) {
  const int n = int(shape.size()) - (layout.channels ? 1 : 0);
  if (n != 2 && !(format == ImageFormat::tiff && n == 3)) return false;
  if (n == 3) d->pages = shape[0];
  d->h = shape[std::size_t(n - 2)];
  d->w = shape[std::size_t(n - 1)];
  d->c = layout.channels ? shape.back() : 1;
  return true;
}

std::uint64_t tiff_rows_per_strip(const TiffWriteOptions& o, std::uint64_t row_bytes,
                                  std::uint64_t h) {
  if (o.rows_per_strip > 0) return std::min<std::uint64_t>(std::uint64_t(o.rows_per_strip), h);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(h, 65536 / std::max<std::uint64_t>(row_bytes, 1)));
}

std::uint64_t tiff_bound(DType dtype, const Dims& d, const TiffWriteOptions& o) {
  const std::uint64_t sb = dtype_size(dtype);
  const std::uint64_t data = std::uint64_t(d.pages * d.h * d.w * d.c) * sb;
  std::uint64_t chunks;  // strips or tiles
  if (o.tile > 0) {
    const std::uint64_t t = std::uint64_t(o.tile);
    chunks = std::uint64_t(d.pages) * ((d.h + t - 1) / t) * ((d.w + t - 1) / t) *
             (o.planar ? std::uint64_t(d.c) : 1);
    // Edge tiles are whole: up to one tile more per row and column of tiles.
    const std::uint64_t tile_bytes = t * t * (o.planar ? 1 : std::uint64_t(d.c)) * sb;
    return std::uint64_t(double(chunks) * double(tile_bytes) * 1.5) + chunks * 16 +
           std::uint64_t(d.pages) * 4096 + 65536;
  }
  const std::uint64_t row = std::uint64_t(d.w) * (o.planar ? 1 : std::uint64_t(d.c)) * sb;
  const std::uint64_t rps = tiff_rows_per_strip(o, row, std::uint64_t(d.h));
  chunks = std::uint64_t(d.pages) * ((std::uint64_t(d.h) + rps - 1) / rps) *
           (o.planar ? std::uint64_t(d.c) : 1);
  const double factor = o.compression == TiffCompression::none      ? 1.0
                        : o.compression == TiffCompression::lzw     ? 1.5
                                                                    : 1.02;
  return std::uint64_t(double(data) * factor) + chunks * (16 + 64) + std::uint64_t(d.pages) * 4096 +
         65536;
}

std::string encode_tiff(DType dtype, const void* data, const ImageLayout& layout, const Dims& d,
                        const std::string& name, const TiffWriteOptions& o) {
  const TiffSample ts = tiff_sample(dtype);
  const std::uint64_t sb = dtype_size(dtype), c = std::uint64_t(d.c);
  const std::uint64_t w = std::uint64_t(d.w), h = std::uint64_t(d.h);
  const std::uint64_t bound = tiff_bound(dtype, d, o);
  const bool big = o.bigtiff == BigTiff::always ||
                   (o.bigtiff == BigTiff::automatic && bound >= (std::uint64_t(1) << 32) - (1 << 24));
  std::string out;
  try {
    out.reserve(std::size_t(std::min<std::uint64_t>(bound, std::uint64_t(1) << 40)));
  } catch (const std::bad_alloc&) {
    fail(name, "cannot write: out of memory for the encoded TIFF (" + detail::size_text(double(bound)) + ")");
  }
  TiffIo io;
  io.out = &out;
  TiffGuard g;
  g.tif = tiff_open(io, name, big ? "w8" : "w", tmsize_t(1) << 40);
  if (!g.tif) fail(name, "cannot write the TIFF: " + tiff_message(io));
  TIFF* t = g.tif;
  // RGB where 3 or 4 channels are not alpha (RGB, RGBA, RGB and one more), else min-is-black;
  // the channels beyond those are extra samples, the last marked alpha where the layout says.
  const std::uint64_t colours = c - (layout.alpha && c > 1 ? 1 : 0);
  const bool rgb = colours == 3 || colours == 4;
  const std::uint64_t colour = rgb ? 3 : 1;
  std::vector<std::uint16_t> extra(c - colour, EXTRASAMPLE_UNSPECIFIED);
  if (layout.alpha && !extra.empty()) extra.back() = EXTRASAMPLE_UNASSALPHA;
  const std::uint16_t compression = o.compression == TiffCompression::lzw       ? COMPRESSION_LZW
                                    : o.compression == TiffCompression::deflate ? COMPRESSION_ADOBE_DEFLATE
                                    : o.compression == TiffCompression::packbits ? COMPRESSION_PACKBITS
                                                                                 : COMPRESSION_NONE;
  const bool separate = o.planar && c > 1;
  const std::uint64_t pixel = c * sb, row = w * pixel;
  const std::uint64_t page_bytes = h * row;
  const auto* base = static_cast<const unsigned char*>(data);
  std::vector<unsigned char> scratch;
  const auto failed = [&](const std::string& what) {
    fail(name, "cannot write the TIFF (" + what + "): " + tiff_message(io));
  };
  for (std::int64_t pg = 0; pg < d.pages; ++pg) {
    const unsigned char* page = base + std::uint64_t(pg) * page_bytes;
    bool ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, std::uint32_t(w)) &&
              TIFFSetField(t, TIFFTAG_IMAGELENGTH, std::uint32_t(h)) &&
              TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, ts.bits) &&
              TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(c)) &&
              TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, ts.format) &&
              TIFFSetField(t, TIFFTAG_PHOTOMETRIC, rgb ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
              TIFFSetField(t, TIFFTAG_PLANARCONFIG,
                           separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG) &&
              TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
    if (ok && !extra.empty())
      ok = TIFFSetField(t, TIFFTAG_EXTRASAMPLES, std::uint16_t(extra.size()), extra.data());
    if (ok && d.pages > 1) {
      ok = TIFFSetField(t, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
      if (ok && d.pages <= 65535)
        ok = TIFFSetField(t, TIFFTAG_PAGENUMBER, std::uint16_t(pg), std::uint16_t(d.pages));
    }
    if (!ok) failed("its tags");
    const std::uint64_t planes = separate ? c : 1, unit = separate ? sb : pixel;
    try {
      if (o.tile > 0) {
        const std::uint64_t tw = std::uint64_t(o.tile), th = tw;
        if (!TIFFSetField(t, TIFFTAG_TILEWIDTH, std::uint32_t(tw)) ||
            !TIFFSetField(t, TIFFTAG_TILELENGTH, std::uint32_t(th)))
          failed("its tile size");
        const std::uint64_t tile_bytes = tw * th * unit;
        for (std::uint64_t s = 0; s < planes; ++s)
          for (std::uint64_t ty = 0; ty < h; ty += th)
            for (std::uint64_t tx = 0; tx < w; tx += tw) {
              scratch.assign(tile_bytes, 0);
              const std::uint64_t rows = std::min(th, h - ty), cols = std::min(tw, w - tx);
              for (std::uint64_t y = 0; y < rows; ++y) {
                const unsigned char* in = page + (ty + y) * row + tx * pixel;
                unsigned char* into = scratch.data() + y * tw * unit;
                if (!separate)
                  std::memcpy(into, in, cols * pixel);
                else
                  for (std::uint64_t x = 0; x < cols; ++x)
                    copy_sample(into + x * sb, in + x * pixel + s * sb, int(sb));
              }
              const std::uint32_t tile = TIFFComputeTile(t, std::uint32_t(tx), std::uint32_t(ty),
                                                         0, std::uint16_t(s));
              if (TIFFWriteEncodedTile(t, tile, scratch.data(), tmsize_t(tile_bytes)) < 0)
                failed("tile " + std::to_string(tile));
            }
      } else {
        const std::uint64_t rps = tiff_rows_per_strip(o, w * unit, h);
        if (!TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, std::uint32_t(rps))) failed("its strips");
        const std::uint64_t strips = (h + rps - 1) / rps;
        for (std::uint64_t s = 0; s < planes; ++s)
          for (std::uint64_t k = 0; k < strips; ++k) {
            const std::uint64_t rows = std::min(rps, h - k * rps);
            const std::uint64_t bytes = rows * w * unit;
            scratch.resize(bytes);
            if (!separate) {
              std::memcpy(scratch.data(), page + k * rps * row, bytes);
            } else {
              for (std::uint64_t y = 0; y < rows; ++y) {
                const unsigned char* in = page + (k * rps + y) * row + s * sb;
                unsigned char* into = scratch.data() + y * w * sb;
                for (std::uint64_t x = 0; x < w; ++x) copy_sample(into + x * sb, in + x * pixel, int(sb));
              }
            }
            if (TIFFWriteEncodedStrip(t, std::uint32_t(s * strips + k), scratch.data(),
                                      tmsize_t(bytes)) < 0)
              failed("strip " + std::to_string(s * strips + k));
          }
      }
    } catch (const std::bad_alloc&) {
      fail(name, "cannot write the TIFF: out of memory for a strip or tile");
    }
    if (!TIFFWriteDirectory(t)) failed("page " + std::to_string(pg + 1) + "'s directory");
  }
  TIFF* done = g.tif;
  g.tif = nullptr;
  TIFFClose(done);  // flushes
  if (io.message[0]) fail(name, "cannot write the TIFF: " + tiff_message(io));
  return out;
}

std::string encode_png(DType dtype, const void* data, const Dims& d, const std::string& name,
                       const PngWriteOptions& o) {
  const std::uint64_t sb = dtype_size(dtype);
  const std::uint64_t row = std::uint64_t(d.w) * std::uint64_t(d.c) * sb;
  std::string out;
  std::vector<png_bytep> rows;
  try {
    out.reserve(std::size_t(std::uint64_t(d.h) * (row + 1) / 4 + 4096));
    rows.resize(std::size_t(d.h));
  } catch (const std::bad_alloc&) {
    fail(name, "cannot write: out of memory for the PNG's rows");
  }
  auto* base = static_cast<png_bytep>(const_cast<void*>(data));
  for (std::int64_t y = 0; y < d.h; ++y) rows[std::size_t(y)] = base + std::uint64_t(y) * row;
  PngWrite s{};
  s.out = &out;
  s.width = png_uint_32(d.w);
  s.height = png_uint_32(d.h);
  s.depth = int(sb * 8);
  s.color_type = d.c == 1   ? PNG_COLOR_TYPE_GRAY
                 : d.c == 2 ? PNG_COLOR_TYPE_GRAY_ALPHA
                 : d.c == 3 ? PNG_COLOR_TYPE_RGB
                            : PNG_COLOR_TYPE_RGB_ALPHA;
  s.level = std::clamp(o.compression_level, 0, 9);
  s.interlace = o.interlace ? 1 : 0;
  s.rows = rows.data();
  PngWriteGuard g;
  g.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s, png_write_error, png_on_warning);
  if (!g.png) fail(name, "cannot write: cannot start libpng (out of memory?)");
  g.info = png_create_info_struct(g.png);
  if (!g.info) fail(name, "cannot write: cannot start libpng (out of memory?)");
  if (png_encode(g.png, g.info, &s) != 0)
    fail(name, std::string("cannot write the PNG: ") +
                   (s.out_of_memory ? "out of memory for the encoded file"
                                    : detail::printable(s.message)));
  return out;
}

// The format of a file by its first bytes (at most 8 at `p`), or an error naming it.
ImageFormat detect(const std::string& path, const unsigned char* p, std::size_t n) {
  const std::string is = sniff(p, n);
  if (is == "PNG") return ImageFormat::png;
  if (is == "TIFF" || is == "BigTIFF") return ImageFormat::tiff;
  if (n == 0) fail(path, "empty file, not an image file");
  fail(path, "not a PNG or TIFF file" + (is.empty() ? std::string() : ": it is a " + is + " file"));
}

}  // namespace

// =============================================================================================
// Public functions
// =============================================================================================

const char* to_string(ImageFormat f) {
  switch (f) {
    case ImageFormat::png: return "PNG";
    case ImageFormat::tiff: return "TIFF";
    default: return ".npy";
  }
}

ImageFormat image_format(const std::string& path) {
  const std::size_t dot = path.find_last_of('.');
  const std::size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return ImageFormat::none;
  std::string ext = path.substr(dot + 1);
  for (char& ch : ext) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == "png") return ImageFormat::png;
  if (ext == "tif" || ext == "tiff") return ImageFormat::tiff;
  return ImageFormat::none;
}

Image read_image_memory(const void* data, std::size_t size, const std::string& name,
                        ImageFormat format,
                        const std::function<void(const ImageHeader&)>& before_alloc) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (format == ImageFormat::none) format = detect(name, p, size);
  if (format == ImageFormat::png) return read_png(name, p, size, before_alloc);
  TiffIo io;
  io.mem = p;
  io.size = size;
  return read_tiff(name, io, before_alloc);
}

Image read_image(const std::string& path,
                 const std::function<void(const ImageHeader&)>& before_alloc,
                 ImageFormat format) {
  struct stat st {};
  const Fd fd(open_input(path, &st));
  if (format == ImageFormat::none && S_ISREG(st.st_mode)) {
    unsigned char sig[8];
    const ssize_t n = ::pread(fd.get(), sig, sizeof sig, 0);
    if (n < 0) fail(path, std::string("read error: ") + std::strerror(errno));
    format = detect(path, sig, std::size_t(n));
  }
  if (format == ImageFormat::tiff && S_ISREG(st.st_mode)) {
    TiffIo io;
    io.fd = fd.get();
    io.size = std::uint64_t(st.st_size);
    return read_tiff(path, io, before_alloc);
  }
  const std::string bytes = read_all(path, fd.get(), st);
  if (format == ImageFormat::none)
    format = detect(path, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  if (format == ImageFormat::png)
    return read_png(path, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    before_alloc);
  TiffIo io;
  io.mem = reinterpret_cast<const unsigned char*>(bytes.data());
  io.size = bytes.size();
  return read_tiff(path, io, before_alloc);
}

std::string image_write_problem(ImageFormat format, DType dtype,
                                const std::vector<std::int64_t>& shape, const ImageLayout& layout) {
  if (format == ImageFormat::none) return "not an image format (.png, .tif, .tiff)";
  const std::string dn = dtype_info(dtype).numpy;
  Dims d;
  const bool fits = image_dims(format, shape, layout, &d);
  if (format == ImageFormat::png) {
    if (dtype != DType::u8 && dtype != DType::u16)
      return "a PNG holds 8- and 16-bit unsigned samples (uint8, uint16), not " + dn +
             "; write a .tif or .npy file";
    if (!fits || d.c < 1 || d.c > 4)
      return std::string("a PNG is one 2-D image of 1 to 4 channels, shape (h, w) or (h, w, c), ") +
             "not shape " + shape_text(shape) +
             (layout.channels ? " with the last axis as channels" : "");
    if (d.h > 0x7fffffff || d.w > 0x7fffffff)
      return "a PNG is at most 2147483647 pixels wide and high, not " + std::to_string(d.w) + "x" +
             std::to_string(d.h);
    return "";
  }
  if (tiff_sample(dtype).bits == 0)
    return "a TIFF holds uint8, uint16, int16, int32, float16, float32 and float64 samples, not " +
           dn + "; write an .npy file";
  if (!fits)
    return std::string("a TIFF holds 2-D pages, shape (h, w) or (pages, h, w), with channels ") +
           "(h, w, c) or (pages, h, w, c), not shape " + shape_text(shape) +
           (layout.channels ? " with the last axis as channels" : "");
  if (d.h > 0xffffffffLL || d.w > 0xffffffffLL)
    return "a TIFF is at most 4294967295 pixels wide and high, not " + std::to_string(d.w) + "x" +
           std::to_string(d.h);
  if (d.c > 65535) return "a TIFF has at most 65535 channels, not " + std::to_string(d.c);
  return "";
}

std::uint64_t encoded_size_bound(ImageFormat format, DType dtype,
                                 const std::vector<std::int64_t>& shape,
                                 const ImageLayout& layout, const ImageWriteOptions& options) {
  Dims d;
  if (!image_dims(format, shape, layout, &d)) return 0;
  if (format == ImageFormat::tiff) return tiff_bound(dtype, d, options.tiff);
  const std::uint64_t raw =
      std::uint64_t(d.h) * (std::uint64_t(d.w) * std::uint64_t(d.c) * dtype_size(dtype) + 1);
  // Deflate's stored blocks and libpng's IDAT chunks add well under 1/256.
  return raw + raw / 256 + 65536;
}

std::string encode_image(ImageFormat format, DType dtype, const std::vector<std::int64_t>& shape,
                         const void* data, const ImageLayout& layout, const std::string& name,
                         const ImageWriteOptions& options) {
  const std::string why = image_write_problem(format, dtype, shape, layout);
  if (!why.empty()) fail(name, "cannot write: " + why);
  if (!data) fail(name, "cannot write: no data");
  for (const std::int64_t e : shape)
    if (e < 1) fail(name, "cannot write: shape " + shape_text(shape) + " has an empty axis");
  Dims d;
  image_dims(format, shape, layout, &d);
  if (format == ImageFormat::png) return encode_png(dtype, data, d, name, options.png);
  const TiffWriteOptions& o = options.tiff;
  if (o.tile > 0 && (o.tile % 16 != 0 || o.tile > (1 << 20)))
    fail(name, "cannot write: a TIFF tile's side is a multiple of 16 (up to 2^20), not " +
                   std::to_string(o.tile));
  return encode_tiff(dtype, data, layout, d, name, o);
}

void write_image(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                 const void* data, const ImageLayout& layout, const ImageWriteOptions& options) {
  const ImageFormat f = image_format(path);
  if (f == ImageFormat::none)
    fail(path, "cannot write an image: the name does not end in .png, .tif or .tiff");
  const std::string bytes = encode_image(f, dtype, shape, data, layout, path, options);
  write_output(path, {bytes});
}

}  // namespace halo::io
