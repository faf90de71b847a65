// Images: PNG (libpng) and TIFF (libtiff) files read into, and written from, NpyArray. Every error
// is a halo::Error "PATH: what is wrong", as the .npy reader's; libpng and libtiff never print
// and never end the process. Writes go through write_output (npy.hpp): never a half-written
// file, never a replaced device.
//
// Arrays: the dtype of halo's table (core/dtype.hpp) that holds the file's samples, and the shape
//   (h, w)              one grey channel
//   (h, w, c)           c channels, last (interleaved): grey + alpha, RGB, RGBA, or any count in
//                       a TIFF
//   (pages, h, w[, c])  a multi-page TIFF whose pages all have one size and type (a 3-D stack)
//
// PNG, read: 8- and 16-bit grey, grey + alpha, RGB and RGBA (uint8, uint16); palette images are
//   expanded to 8-bit RGB (RGBA where the palette has transparency), 1-, 2- and 4-bit grey to
//   8-bit, and a tRNS colour key to an alpha channel; interlaced (Adam7) files too. Written: the
//   same four colour types at 8 or 16 bits (uint8, uint16: 1 to 4 channels), not interlaced.
//   Ancillary chunks (gamma, colour profiles, text) are not read and not written.
// TIFF, read: samples of 8, 16, 32 bits (unsigned and signed integers) and 16, 32, 64-bit IEEE
//   floats, grey (min-is-black, with any extra samples) or RGB (with any extra samples), chunky
//   or planar, strips or tiles, uncompressed, LZW, Deflate or PackBits, classic TIFF or BigTIFF,
//   either byte order. uint8 -> u8, uint16 -> u16, int16 -> i16, int32 -> i32, float16 -> f16,
//   float32 -> f32, float64 -> f64; int8 -> i16 (halo has no int8: widened, so it is written back
//   as int16); uint32 -> i32 when every value is at most 2147483647, else an error naming the
//   file and the largest value (halo has no uint32). An extra sample marked alpha (associated or
//   not) that is the last sample makes the last channel alpha. Refused, with the reason: 1-, 2-
//   and 4-bit samples, 64-bit integers, complex samples, palette, min-is-white, CMYK, YCbCr and
//   other photometric interpretations, and other compressions (JPEG, ZSTD, ...).
//   Written: chunky strips of about 64 KiB, uncompressed, native byte order; RGB where 3 or 4
//   channels are not alpha, grey (min-is-black) otherwise, the channels beyond those extra
//   samples, the last marked unassociated alpha where the layout says alpha. BigTIFF when the
//   file could reach 4 GiB (TiffWriteOptions::bigtiff: always or never instead), classic TIFF
//   otherwise. A 3-D stack is written as one page per first index.
//
// Before allocating, a reader refuses an image larger than its file can hold: the decoded
// samples of a compressed stream cannot exceed the compression's largest ratio times the file's
// size (Deflate about 1032:1, LZW at most 4096 bytes per 9-bit code, PackBits 128:2), and an
// uncompressed one must be in the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "halo/halo.hpp"
#include "io/npy.hpp"

namespace halo::io {

enum class ImageFormat { none, png, tiff };
const char* to_string(ImageFormat f);  // "PNG", "TIFF", ".npy"

// The format a path names by its extension, case-insensitive: .png is PNG; .tif and .tiff are
// TIFF; anything else is none (an .npy file, or standard input/output for "-").
ImageFormat image_format(const std::string& path);

// How an array's axes are an image's: the last axis is channels (else there is one grey channel),
// and whether the last channel is alpha.
struct ImageLayout {
  bool channels = false;
  bool alpha = false;
};

// What a reader found, before the pixels are read.
struct ImageHeader {
  ImageFormat format = ImageFormat::none;
  DType dtype = DType::u8;
  std::vector<std::int64_t> shape;  // as above
  ImageLayout layout;
  std::int64_t pages = 1;  // > 1: a stack, shape[0]
  std::uint64_t data_bytes = 0;
  std::uint64_t file_bytes = 0;  // the file's size (a PNG's bytes are held while it is decoded)
  std::string what;              // e.g. "16-bit RGBA PNG", "3-page float32 grey TIFF"
};

struct Image {
  NpyArray pixels;
  ImageHeader header;
};

// Reads the PNG or TIFF at `path` (by its contents; `format` none: either, by the signature).
// `before_alloc`, if given, sees the header before the pixels are allocated, and may throw to
// refuse the file. Throws halo::Error "PATH: what is wrong" for a missing, malformed, truncated
// or unsupported file, or one of another format (a JPEG named .png: "it is a JPEG file").
Image read_image(const std::string& path,
                 const std::function<void(const ImageHeader&)>& before_alloc = {},
                 ImageFormat format = ImageFormat::none);
// The same from bytes in memory; messages name the file `name`.
Image read_image_memory(const void* data, std::size_t size, const std::string& name,
                        ImageFormat format = ImageFormat::none,
                        const std::function<void(const ImageHeader&)>& before_alloc = {});

enum class TiffCompression { none, lzw, deflate, packbits };
enum class BigTiff { automatic, always, never };
struct TiffWriteOptions {
  TiffCompression compression = TiffCompression::none;
  bool planar = false;              // planar (one plane per sample) rather than chunky
  std::int64_t tile = 0;            // > 0: square tiles of this side (a multiple of 16), not strips
  std::int64_t rows_per_strip = 0;  // 0: about 64 KiB per strip
  BigTiff bigtiff = BigTiff::automatic;
};
struct PngWriteOptions {
  int compression_level = 6;  // zlib's 0..9
  bool interlace = false;     // Adam7
};
struct ImageWriteOptions {
  PngWriteOptions png;
  TiffWriteOptions tiff;
};

// What keeps an array of `dtype` and `shape` in `layout` from being written as `format`, or ""
// if nothing does.
std::string image_write_problem(ImageFormat format, DType dtype,
                                const std::vector<std::int64_t>& shape, const ImageLayout& layout);
// The most bytes the encoded file can take (write_image holds them in memory before writing).
std::uint64_t encoded_size_bound(ImageFormat format, DType dtype,
                                 const std::vector<std::int64_t>& shape,
                                 const ImageLayout& layout, const ImageWriteOptions& options = {});

// The file's bytes for the array of `dtype` and `shape` at `data` (C order). Throws halo::Error
// "NAME: cannot write: why" (image_write_problem's reason, or libpng's or libtiff's).
std::string encode_image(ImageFormat format, DType dtype, const std::vector<std::int64_t>& shape,
                         const void* data, const ImageLayout& layout, const std::string& name,
                         const ImageWriteOptions& options = {});
inline std::string encode_image(ImageFormat format, const NpyArray& a, const ImageLayout& layout,
                                const std::string& name, const ImageWriteOptions& options = {}) {
  return encode_image(format, a.dtype(), a.shape(), a.data(), layout, name, options);
}

// Writes the array as the image format of `path`'s extension (image_format: PNG or TIFF, else
// an error), by the output rules of npy.hpp (write_output).
void write_image(const std::string& path, DType dtype, const std::vector<std::int64_t>& shape,
                 const void* data, const ImageLayout& layout, const ImageWriteOptions& options = {});
inline void write_image(const std::string& path, const NpyArray& a, const ImageLayout& layout,
                        const ImageWriteOptions& options = {}) {
  write_image(path, a.dtype(), a.shape(), a.data(), layout, options);
}

}  // namespace halo::io
