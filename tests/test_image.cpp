// (Over 1,000 lines: readers, writers and the CLI share the image makers at the top; the CLI's
// tests belong in their own file next.)
// Images (src/io/image.hpp) and the command line on them: bit-exact round trips of every layout
// and depth the readers and writers take (values at the types' limits), PNGs libpng writes in
// the forms halo never writes (palette, 1/2/4-bit grey, colour keys), TIFFs libtiff writes in
// the forms halo never writes (int8, uint32, big-endian) and hand-made ones, every kind of
// malformed file ("PATH: what is wrong", nothing written), and `halo apply` on images: channels
// filtered apart, alpha copied bit for bit, pages as a volume or a batch, the output rules.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/stat.h>
#include <tiffio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "io/image.hpp"
#include "io/npy.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace halo::test {
namespace {

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
void write_bytes(const std::string& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// An array of `dtype` and `shape` of random bits, its first elements the type's extreme values
// (and for floats infinities, NaN, -0 and the smallest subnormal).
io::NpyArray limits_array(DType dtype, const std::vector<std::int64_t>& shape) {
  io::NpyArray a(dtype, shape);
  auto* b = static_cast<unsigned char*>(a.data());
  for (std::size_t i = 0; i < a.nbytes(); ++i) b[i] = static_cast<unsigned char>(rng()());
  const auto put = [&](auto... values) {
    std::int64_t i = 0;
    ((i < a.size() ? (void)std::memcpy(b + i * sizeof(values), &values, sizeof(values)) : (void)0,
      ++i),
     ...);
  };
  switch (dtype) {
    case DType::u8: put(std::uint8_t(0), std::uint8_t(255), std::uint8_t(1), std::uint8_t(254)); break;
    case DType::u16: put(std::uint16_t(0), std::uint16_t(65535), std::uint16_t(1), std::uint16_t(256)); break;
    case DType::i16: put(std::int16_t(-32768), std::int16_t(32767), std::int16_t(0), std::int16_t(-1)); break;
    case DType::i32:
      put(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(),
          std::int32_t(0), std::int32_t(-1));
      break;
    case DType::f16:  // largest, inf, -inf, NaN, smallest subnormal, -0
      put(float16{0x7bff}, float16{0x7c00}, float16{0xfc00}, float16{0x7e00}, float16{0x0001},
          float16{0x8000});
      break;
    case DType::f32:
      put(std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(), -0.0f);
      break;
    case DType::f64:
      put(std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min(), -0.0);
      break;
    default: break;
  }
  return a;
}

::testing::AssertionResult same_bits(const io::NpyArray& a, const io::NpyArray& b) {
  if (a.dtype() != b.dtype())
    return ::testing::AssertionFailure() << "dtype " << to_string(a.dtype()) << " vs "
                                         << to_string(b.dtype());
  if (a.shape() != b.shape()) return ::testing::AssertionFailure() << "shapes differ";
  const auto* x = static_cast<const unsigned char*>(a.data());
  const auto* y = static_cast<const unsigned char*>(b.data());
  for (std::size_t i = 0; i < a.nbytes(); ++i)
    if (x[i] != y[i])
      return ::testing::AssertionFailure() << "byte " << i << " (element "
                                           << i / dtype_size(a.dtype()) << ") differs";
  return ::testing::AssertionSuccess();
}

// Expects `f` to throw halo::Error whose message starts with "path: " and holds every phrase.
template <class F>
void expect_error(F&& f, const std::string& path, const std::vector<std::string>& phrases) {
  try {
    f();
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << "message does not start with the path: " << msg;
    for (const std::string& p : phrases)
      EXPECT_NE(msg.find(p), std::string::npos) << "message lacks '" << p << "': " << msg;
  }
}

// ---------------------------------------------------------------------------------------------
// PNG and TIFF files made by hand
// ---------------------------------------------------------------------------------------------

std::uint32_t crc32(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}
std::uint32_t be32(const std::string& s, std::size_t at) {
  return std::uint32_t(std::uint8_t(s[at])) << 24 | std::uint32_t(std::uint8_t(s[at + 1])) << 16 |
         std::uint32_t(std::uint8_t(s[at + 2])) << 8 | std::uint8_t(s[at + 3]);
}
void put_be32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + std::size_t(i)] = char((v >> (24 - 8 * i)) & 0xff);
}
// The offset of the first chunk of `type` in a PNG (its length field), or npos.
std::size_t png_chunk(const std::string& png, const char* type) {
  for (std::size_t at = 8; at + 12 <= png.size(); at += 12 + be32(png, at))
    if (png.compare(at + 4, 4, type) == 0) return at;
  return std::string::npos;
}
void fix_crc(std::string& png, std::size_t chunk) {
  const std::uint32_t len = be32(png, chunk);
  put_be32(png, chunk + 8 + len,
           crc32(reinterpret_cast<const unsigned char*>(png.data()) + chunk + 4, len + 4));
}

// A PNG written by libpng itself, in forms halo does not write: `rows` packed as the colour type
// and depth say; a palette, a tRNS chunk (palette alphas, or a grey/RGB colour key). In a
// function of plain data only, for its setjmp.
bool libpng_write(const char* path, int w, int h, int depth, int colour, const png_color* palette,
                  int colours, const png_byte* alphas, int nalphas, const png_color_16* key,
                  const unsigned char* rows, std::size_t rowbytes) {
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, png_uint_32(w), png_uint_32(h), depth, colour, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (palette) png_set_PLTE(png, info, palette, colours);
  if (nalphas || key)
    png_set_tRNS(png, info, alphas, nalphas, const_cast<png_color_16*>(key));
  png_write_info(png, info);
  for (int y = 0; y < h; ++y) png_write_row(png, const_cast<png_bytep>(rows + std::size_t(y) * rowbytes));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::fclose(f) == 0;
}

// A classic little-endian TIFF made by hand: `pixels` at offset 8, then one directory of
// `tags` (tag -> type, values; SHORT = 3, LONG = 4; values of more than 4 bytes after it).
using Tags = std::map<std::uint16_t, std::pair<std::uint16_t, std::vector<std::uint32_t>>>;
std::string mini_tiff(const Tags& tags, const std::string& pixels) {
  std::string s("II*\0", 4);
  const auto u16 = [](std::string& o, std::uint32_t v) {
    o += char(v & 0xff);
    o += char((v >> 8) & 0xff);
  };
  const auto u32 = [&](std::string& o, std::uint32_t v) {
    u16(o, v & 0xffff);
    u16(o, v >> 16);
  };
  const std::uint32_t ifd = std::uint32_t(8 + pixels.size() + (pixels.size() & 1));
  u32(s, ifd);
  s += pixels;
  if (pixels.size() & 1) s += '\0';
  std::string out_of_line;
  const std::uint32_t after = ifd + 2 + 12 * std::uint32_t(tags.size()) + 4;
  std::string dir;
  u16(dir, std::uint32_t(tags.size()));
  for (const auto& [tag, tv] : tags) {
    const auto& [type, values] = tv;
    u16(dir, tag);
    u16(dir, type);
    u32(dir, std::uint32_t(values.size()));
    std::string v;
    for (std::uint32_t x : values) type == 3 ? u16(v, x) : u32(v, x);
    if (v.size() <= 4) {
      v.resize(4, '\0');
      dir += v;
    } else {
      u32(dir, after + std::uint32_t(out_of_line.size()));
      out_of_line += v;
    }
  }
  u32(dir, 0);
  return s + dir + out_of_line;
}
// The tags of a w x h uint8 grey image whose samples are at offset 8.
Tags grey_tags(std::uint32_t w, std::uint32_t h) {
  return {{256, {4, {w}}}, {257, {4, {h}}}, {258, {3, {8}}}, {259, {3, {1}}}, {262, {3, {1}}},
          {273, {4, {8}}}, {277, {3, {1}}}, {278, {4, {h}}}, {279, {4, {w * h}}}};
}

class Image : public TempDirTest {};

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

TEST_F(Image, FormatFollowsTheExtension) {
  EXPECT_EQ(io::image_format("a.png"), io::ImageFormat::png);
  EXPECT_EQ(io::image_format("dir.x/A.PNG"), io::ImageFormat::png);
  EXPECT_EQ(io::image_format("b.tif"), io::ImageFormat::tiff);
  EXPECT_EQ(io::image_format("b.TiFf"), io::ImageFormat::tiff);
  EXPECT_EQ(io::image_format("b.npy"), io::ImageFormat::none);
  EXPECT_EQ(io::image_format("png"), io::ImageFormat::none);
  EXPECT_EQ(io::image_format("dir.png/file"), io::ImageFormat::none);
  EXPECT_EQ(io::image_format("-"), io::ImageFormat::none);
}

TEST_F(Image, PngRoundTripsEveryLayoutAndDepth) {
  for (const DType dtype : {DType::u8, DType::u16})
    for (int c = 1; c <= 4; ++c)
      for (const bool interlace : {false, true}) {
        SCOPED_TRACE(std::string(to_string(dtype)) + " channels " + std::to_string(c) +
                     (interlace ? " interlaced" : ""));
        std::vector<std::int64_t> shape{23, 37};
        if (c > 1) shape.push_back(c);
        const io::NpyArray a = limits_array(dtype, shape);
        io::ImageWriteOptions o;
        o.png.interlace = interlace;
        const std::string p = path("img.png");
        io::write_image(p, a, {c > 1, c == 2 || c == 4}, o);
        const io::Image img = io::read_image(p);
        EXPECT_TRUE(same_bits(img.pixels, a));
        EXPECT_EQ(img.header.format, io::ImageFormat::png);
        EXPECT_EQ(img.header.layout.channels, c > 1);
        EXPECT_EQ(img.header.layout.alpha, c == 2 || c == 4);
        EXPECT_EQ(img.header.data_bytes, a.nbytes());
        const char* names[] = {"grey", "grey+alpha", "RGB", "RGBA"};
        EXPECT_EQ(img.header.what, std::to_string(dtype_size(dtype) * 8) + "-bit " + names[c - 1] + " PNG");
        // From memory too, and by its contents whatever the name.
        const std::string bytes = read_bytes(p);
        EXPECT_TRUE(same_bits(io::read_image_memory(bytes.data(), bytes.size(), "mem").pixels, a));
      }
}

TEST_F(Image, PngPaletteLowBitGreyAndColourKeysExpand) {
  // An 8-bit palette of 3 colours, the second half transparent: RGBA.
  const png_color pal[3] = {{255, 0, 0}, {0, 255, 0}, {1, 2, 3}};
  const png_byte alphas[2] = {255, 128};
  const unsigned char idx[2 * 3] = {0, 1, 2, 2, 1, 0};
  ASSERT_TRUE(libpng_write(path("pal.png").c_str(), 3, 2, 8, PNG_COLOR_TYPE_PALETTE, pal, 3,
                           alphas, 2, nullptr, idx, 3));
  io::Image img = io::read_image(path("pal.png"));
  ASSERT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(img.pixels.dtype(), DType::u8);
  EXPECT_TRUE(img.header.layout.alpha);
  const std::uint8_t want[] = {255, 0, 0, 255, 0, 255, 0, 128, 1, 2, 3, 255,
                               1,   2, 3, 255, 0, 255, 0, 128, 255, 0, 0, 255};
  EXPECT_EQ(std::memcmp(img.pixels.data(), want, sizeof want), 0);
  EXPECT_NE(img.header.what.find("palette"), std::string::npos) << img.header.what;

  // A 4-bit palette without transparency: RGB.
  const unsigned char packed4[2] = {0x12, 0x00};  // indices 1, 2, 0 (and padding)
  ASSERT_TRUE(libpng_write(path("pal4.png").c_str(), 3, 1, 4, PNG_COLOR_TYPE_PALETTE, pal, 3,
                           nullptr, 0, nullptr, packed4, 2));
  img = io::read_image(path("pal4.png"));
  ASSERT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{1, 3, 3}));
  const std::uint8_t want4[] = {0, 255, 0, 1, 2, 3, 255, 0, 0};
  EXPECT_EQ(std::memcmp(img.pixels.data(), want4, sizeof want4), 0);
  EXPECT_FALSE(img.header.layout.alpha);

  // 1-, 2- and 4-bit grey: expanded to 8 bits over the whole range (the largest value is 255).
  for (const int depth : {1, 2, 4}) {
    SCOPED_TRACE("grey depth " + std::to_string(depth));
    const int top = (1 << depth) - 1;
    const int w = 8 / depth * 2;  // two bytes of samples: 0, 1, ..., top, 0, 1, ...
    std::vector<unsigned char> row(2, 0);
    for (int x = 0; x < w; ++x)
      row[std::size_t(x * depth / 8)] |=
          static_cast<unsigned char>((x % (top + 1)) << (8 - depth - (x * depth) % 8));
    ASSERT_TRUE(libpng_write(path("g.png").c_str(), w, 1, depth, PNG_COLOR_TYPE_GRAY, nullptr, 0,
                             nullptr, 0, nullptr, row.data(), 2));
    img = io::read_image(path("g.png"));
    ASSERT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{1, w}));
    for (int x = 0; x < w; ++x)
      EXPECT_EQ(img.pixels.as<std::uint8_t>()[x], (x % (top + 1)) * 255 / top) << x;
  }

  // A grey colour key (tRNS): an alpha channel, 0 where the key is.
  const png_color_16 key{0, 0, 0, 0, 7};
  const unsigned char grey[3] = {7, 8, 7};
  ASSERT_TRUE(libpng_write(path("key.png").c_str(), 3, 1, 8, PNG_COLOR_TYPE_GRAY, nullptr, 0,
                           nullptr, 0, &key, grey, 3));
  img = io::read_image(path("key.png"));
  ASSERT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{1, 3, 2}));
  const std::uint8_t want_key[] = {7, 0, 8, 255, 7, 0};
  EXPECT_EQ(std::memcmp(img.pixels.data(), want_key, sizeof want_key), 0);
}

TEST_F(Image, TiffRoundTripsEveryTypeLayoutAndCompression) {
  struct Form {
    const char* name;
    bool planar;
    std::int64_t tile, rows;
    io::TiffCompression compression;
  };
  const Form forms[] = {
      {"chunky strips", false, 0, 0, io::TiffCompression::none},
      {"chunky strips of 5 rows, LZW", false, 0, 5, io::TiffCompression::lzw},
      {"planar strips of 4 rows, Deflate", true, 0, 4, io::TiffCompression::deflate},
      {"chunky tiles of 16, PackBits", false, 16, 0, io::TiffCompression::packbits},
      {"planar tiles of 32, LZW", true, 32, 0, io::TiffCompression::lzw},
      {"planar strips", true, 0, 0, io::TiffCompression::none},
  };
  for (const DType dtype :
       {DType::u8, DType::u16, DType::i16, DType::i32, DType::f16, DType::f32, DType::f64})
    for (const int c : {1, 2, 3, 4, 5})
      for (const Form& f : forms) {
        SCOPED_TRACE(std::string(to_string(dtype)) + ", " + std::to_string(c) + " channels, " +
                     f.name);
        std::vector<std::int64_t> shape{19, 45};  // not multiples of the tiles
        if (c > 1) shape.push_back(c);
        const io::NpyArray a = limits_array(dtype, shape);
        io::ImageWriteOptions o;
        o.tiff.planar = f.planar;
        o.tiff.tile = f.tile;
        o.tiff.rows_per_strip = f.rows;
        o.tiff.compression = f.compression;
        const bool alpha = c == 2 || c == 4;
        const std::string p = path("img.tif");
        io::write_image(p, a, {c > 1, alpha}, o);
        const io::Image img = io::read_image(p);
        EXPECT_TRUE(same_bits(img.pixels, a));
        EXPECT_EQ(img.header.layout.channels, c > 1);
        EXPECT_EQ(img.header.layout.alpha, alpha);
        EXPECT_EQ(img.header.pages, 1);
      }
}

TEST_F(Image, TiffPagesAreAStack) {
  for (const int c : {1, 3}) {
    std::vector<std::int64_t> shape{4, 17, 21};
    if (c > 1) shape.push_back(c);
    const io::NpyArray a = limits_array(DType::u16, shape);
    const std::string p = path("stack.tiff");
    io::write_image(p, a, {c > 1, false});
    const io::Image img = io::read_image(p);
    EXPECT_TRUE(same_bits(img.pixels, a));
    EXPECT_EQ(img.header.pages, 4);
    EXPECT_EQ(img.header.what.rfind("4-page uint16", 0), 0u) << img.header.what;
    // Each page a directory that libtiff itself reads as a page.
    TIFF* t = TIFFOpen(p.c_str(), "r");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(TIFFNumberOfDirectories(t), 4u);
    TIFFClose(t);
  }
  // Pages of different sizes: an error naming the page.
  TIFF* t = TIFFOpen(path("mixed.tif").c_str(), "w");
  ASSERT_NE(t, nullptr);
  for (const std::uint32_t w : {8u, 8u, 9u}) {
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 4u);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 4u);
    std::vector<unsigned char> px(w * 4, 9);
    TIFFWriteEncodedStrip(t, 0, px.data(), tmsize_t(px.size()));
    TIFFWriteDirectory(t);
  }
  TIFFClose(t);
  expect_error([&] { io::read_image(path("mixed.tif")); }, path("mixed.tif"),
               {"page 3", "9x4", "page 1 is 8x4", "same size and type"});
}

TEST_F(Image, BigTiffIsWrittenWhenAskedAndRead) {
  const io::NpyArray a = limits_array(DType::f32, {3, 20, 30, 2});
  io::ImageWriteOptions o;
  o.tiff.bigtiff = io::BigTiff::always;
  io::write_image(path("big.tif"), a, {true, true}, o);
  const std::string bytes = read_bytes(path("big.tif"));
  ASSERT_GE(bytes.size(), 16u);
  EXPECT_EQ(bytes[2], 43) << "not a BigTIFF header";
  const io::Image img = io::read_image(path("big.tif"));
  EXPECT_TRUE(same_bits(img.pixels, a));
  EXPECT_TRUE(img.header.layout.alpha);
  // Classic TIFF by default for what fits in 4 GiB; BigTIFF when the bound reaches it.
  io::write_image(path("small.tif"), a, {true, true});
  EXPECT_EQ(read_bytes(path("small.tif"))[2], 42);
  EXPECT_GT(io::encoded_size_bound(io::ImageFormat::tiff, DType::f32, {40000, 40000}, {}),
            std::uint64_t(6.4e9));
}

// TIFFs in forms halo does not write, made with libtiff: int8 (widened to int16), uint32 (int32
// where it fits), big-endian, alpha marked associated, min-is-white (refused).
template <class T>
void libtiff_write(const std::string& p, const char* mode, int bits, int format, int spp,
                   const std::vector<T>& v, std::uint32_t w, std::uint32_t h,
                   int extra = -1, int photometric = PHOTOMETRIC_MINISBLACK) {
  TIFF* t = TIFFOpen(p.c_str(), mode);
  ASSERT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, format);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, h);
  if (extra >= 0) {
    const std::uint16_t e = std::uint16_t(extra);
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &e);
  }
  std::vector<T> copy = v;
  ASSERT_GE(TIFFWriteEncodedStrip(t, 0, copy.data(), tmsize_t(copy.size() * sizeof(T))), 0);
  TIFFClose(t);
}

TEST_F(Image, TiffFormsHaloDoesNotWrite) {
  const std::vector<std::int8_t> s8{-128, 127, 0, -1, 5, -7};
  libtiff_write(path("i8.tif"), "w", 8, SAMPLEFORMAT_INT, 1, s8, 3, 2);
  io::Image img = io::read_image(path("i8.tif"));
  ASSERT_EQ(img.pixels.dtype(), DType::i16);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(img.pixels.as<std::int16_t>()[i], s8[std::size_t(i)]);
  EXPECT_NE(img.header.what.find("int8 (read as int16)"), std::string::npos);

  std::vector<std::uint32_t> u32{0, 1, 2147483647u, 7, 8, 9};
  libtiff_write(path("u32.tif"), "w", 32, SAMPLEFORMAT_UINT, 1, u32, 3, 2);
  img = io::read_image(path("u32.tif"));
  ASSERT_EQ(img.pixels.dtype(), DType::i32);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(std::uint32_t(img.pixels.as<std::int32_t>()[i]), u32[std::size_t(i)]);
  u32[4] = 4294967295u;
  libtiff_write(path("u32big.tif"), "w", 32, SAMPLEFORMAT_UINT, 1, u32, 3, 2);
  expect_error([&] { io::read_image(path("u32big.tif")); }, path("u32big.tif"),
               {"uint32 samples up to 4294967295", "int32"});

  // Big-endian 16-bit RGB with an associated alpha.
  std::vector<std::uint16_t> be(2 * 2 * 4);
  for (std::size_t i = 0; i < be.size(); ++i) be[i] = std::uint16_t(1000 * i + 1);
  libtiff_write(path("be.tif"), "wb", 16, SAMPLEFORMAT_UINT, 4, be, 2, 2, EXTRASAMPLE_ASSOCALPHA,
                PHOTOMETRIC_RGB);
  img = io::read_image(path("be.tif"));
  ASSERT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{2, 2, 4}));
  EXPECT_TRUE(img.header.layout.alpha);
  for (std::size_t i = 0; i < be.size(); ++i) EXPECT_EQ(img.pixels.as<std::uint16_t>()[i], be[i]);
  // An unspecified extra sample is not alpha.
  libtiff_write(path("extra.tif"), "w", 16, SAMPLEFORMAT_UINT, 4, be, 2, 2,
                EXTRASAMPLE_UNSPECIFIED, PHOTOMETRIC_RGB);
  EXPECT_FALSE(io::read_image(path("extra.tif")).header.layout.alpha);

  libtiff_write(path("white.tif"), "w", 8, SAMPLEFORMAT_UINT, 1, s8, 3, 2, -1,
                PHOTOMETRIC_MINISWHITE);
  expect_error([&] { io::read_image(path("white.tif")); }, path("white.tif"),
               {"min-is-white", "not supported"});
}

// ---------------------------------------------------------------------------------------------
// Malformed files
// ---------------------------------------------------------------------------------------------

TEST_F(Image, MalformedPngsAreRefusedClearly) {
  const io::NpyArray a = limits_array(DType::u8, {40, 60, 3});
  io::write_image(path("ok.png"), a, {true, false});
  const std::string good = read_bytes(path("ok.png"));
  const std::size_t ihdr = png_chunk(good, "IHDR"), idat = png_chunk(good, "IDAT");
  ASSERT_NE(ihdr, std::string::npos);
  ASSERT_NE(idat, std::string::npos);
  const std::uint32_t idat_len = be32(good, idat);

  const auto check = [&](const std::string& name, const std::string& bytes,
                         const std::vector<std::string>& phrases) {
    SCOPED_TRACE(name);
    const std::string p = path(name);
    write_bytes(p, bytes);
    expect_error([&] { io::read_image(p, {}, io::ImageFormat::png); }, p, phrases);
    expect_error([&] { io::read_image_memory(bytes.data(), bytes.size(), "mem", io::ImageFormat::png); },
                 "mem", phrases);
  };
  check("empty.png", "", {"empty file, not a PNG file"});
  check("jpeg.png", std::string("\xff\xd8\xff\xe0\0\x10JFIF\0", 11) + std::string(100, 'x'),
        {"not a PNG file: it is a JPEG file"});
  check("tiff.png", std::string("II*\0\x08\0\0\0", 8), {"not a PNG file: it is a TIFF file"});
  check("text.png", "hello, world", {"not a PNG file", "PNG signature"});
  check("short.png", good.substr(0, 5), {"truncated PNG file: it has only 5 bytes"});
  check("cut-header.png", good.substr(0, 20), {"truncated PNG file", "in the header"});
  check("cut-idat.png", good.substr(0, idat + 8 + idat_len / 2),
        {"truncated PNG file", "in the image data"});
  check("no-iend.png", good.substr(0, good.size() - 12), {"truncated PNG file"});
  std::string bad_crc = good;
  bad_crc[ihdr + 8 + 13] ^= 1;
  check("ihdr-crc.png", bad_crc, {"malformed PNG file", "CRC"});
  bad_crc = good;
  bad_crc[idat + 8 + idat_len] ^= 1;
  check("idat-crc.png", bad_crc, {"malformed PNG file", "CRC error"});
  std::string bad_zlib = good;
  for (std::uint32_t i = 2; i < std::min<std::uint32_t>(idat_len, 40); ++i)
    bad_zlib[idat + 8 + i] = char(0xff);
  fix_crc(bad_zlib, idat);
  check("zlib.png", bad_zlib, {"malformed PNG file", "in the image data"});
  std::string huge = good;
  put_be32(huge, ihdr + 8, 1000000);
  put_be32(huge, ihdr + 12, 1000000);
  fix_crc(huge, ihdr);
  check("huge.png", huge, {"1000000x1000000", "more than a PNG file of", "can hold"});
  std::string zero = good;
  put_be32(zero, ihdr + 8, 0);
  fix_crc(zero, ihdr);
  check("zero.png", zero, {"malformed PNG file"});
  std::string depth = good;
  depth[ihdr + 8 + 8] = 3;  // bit depth 3
  fix_crc(depth, ihdr);
  check("depth.png", depth, {"malformed PNG file"});

  expect_error([&] { io::read_image(path("missing.png")); }, path("missing.png"),
               {"cannot open for reading"});
  fs::create_directory(path("dir.png"));
  expect_error([&] { io::read_image(path("dir.png")); }, path("dir.png"), {"is a directory"});
}

TEST_F(Image, MalformedTiffsAreRefusedClearly) {
  const auto check = [&](const std::string& name, const std::string& bytes,
                         const std::vector<std::string>& phrases) {
    SCOPED_TRACE(name);
    const std::string p = path(name);
    write_bytes(p, bytes);
    expect_error([&] { io::read_image(p, {}, io::ImageFormat::tiff); }, p, phrases);
    expect_error(
        [&] { io::read_image_memory(bytes.data(), bytes.size(), "mem", io::ImageFormat::tiff); },
        "mem", phrases);
  };
  const std::string px(12, '\x07');
  // The hand-made file itself is good.
  {
    const std::string ok = mini_tiff(grey_tags(4, 3), px);
    const io::Image img = io::read_image_memory(ok.data(), ok.size(), "ok.tif");
    EXPECT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{3, 4}));
    EXPECT_EQ(img.pixels.as<std::uint8_t>()[11], 7);
  }
  check("empty.tif", "", {"empty file, not a TIFF file"});
  check("png.tif", std::string("\x89PNG\r\n\x1a\n", 8) + std::string(50, '\0'),
        {"not a TIFF file: it is a PNG file"});
  check("text.tif", "hello, world", {"not a TIFF file", "TIFF signature"});
  check("header.tif", std::string("II*\0\x40\0\0\0", 8), {"cannot read the TIFF"});
  const auto with = [&](std::uint16_t tag, std::uint16_t type, std::vector<std::uint32_t> v) {
    Tags t = grey_tags(4, 3);
    t[tag] = {type, std::move(v)};
    return mini_tiff(t, px);
  };
  check("huge.tif", with(256, 4, {0x7fffffff}), {"more than a file of", "can hold", "corrupt"});
  check("jpeg.tif", with(259, 3, {7}), {"compression JPEG is not supported"});
  check("zstd.tif", with(259, 3, {50000}), {"compression ZSTD is not supported"});
  check("palette.tif",
        [&] {
          Tags t = grey_tags(4, 3);
          t[262] = {3, {3}};
          t[320] = {3, std::vector<std::uint32_t>(3 * 256, 1000)};  // the colour map
          return mini_tiff(t, px);
        }(),
        {"palette", "not supported"});
  check("cmyk.tif", with(262, 3, {5}), {"CMYK"});
  check("1bit.tif", with(258, 3, {1}), {"1-bit samples are not supported"});
  check("int64.tif",
        [&] {
          Tags t = grey_tags(1, 1);
          t[258] = {3, {64}};
          t[339] = {3, {2}};
          t[279] = {4, {8}};
          return mini_tiff(t, std::string(8, '\0'));
        }(),
        {"64-bit signed integer samples are not supported"});
  check("complex.tif", with(339, 3, {6}), {"complex samples are not supported"});
  check("strip-beyond.tif", with(273, 4, {100000}), {"strip 0"});
  check("lzw-garbage.tif", with(259, 3, {5}), {"strip 0"});
  check("rgb1.tif", with(262, 3, {2}), {"RGB", "1 sample"});
  check("tile0.tif",
        [&] {
          Tags t = grey_tags(4, 3);
          t.erase(273);
          t.erase(278);
          t.erase(279);
          t[322] = {4, {0}};
          t[323] = {4, {16}};
          t[324] = {4, {8}};
          t[325] = {4, {12}};
          return mini_tiff(t, px);
        }(),
        {});
  check("bigtile.tif",
        [&] {
          Tags t = grey_tags(4, 3);
          t.erase(273);
          t.erase(278);
          t.erase(279);
          t[322] = {4, {1u << 20}};
          t[323] = {4, {1u << 20}};
          t[324] = {4, {8}};
          t[325] = {4, {12}};
          return mini_tiff(t, px);
        }(),
        {"tile", "can hold"});
  // A file cut short: the directory libtiff writes last is gone, or a strip is.
  const io::NpyArray a = limits_array(DType::u16, {30, 40});
  io::write_image(path("ok.tif"), a, {});
  const std::string good = read_bytes(path("ok.tif"));
  check("cut.tif", good.substr(0, good.size() / 2), {"cannot read the TIFF"});
  check("cut6.tif", good.substr(0, 6), {"cannot read the TIFF"});
  // A directory chain that loops back to the first: one page, or an error, never a hang.
  std::string loop = mini_tiff(grey_tags(4, 3), px);
  {
    const std::size_t next = loop.size() - 4;  // no out-of-line values: the last 4 bytes
    const std::uint32_t ifd = std::uint8_t(loop[4]) | std::uint8_t(loop[5]) << 8;
    for (int i = 0; i < 4; ++i) loop[next + std::size_t(i)] = char((ifd >> (8 * i)) & 0xff);
    try {
      const io::Image img = io::read_image_memory(loop.data(), loop.size(), "loop.tif");
      EXPECT_EQ(img.pixels.shape(), (std::vector<std::int64_t>{3, 4}));
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("loop.tif: ", 0), 0u) << e.what();
    }
  }
}

TEST_F(Image, WritersRefuseWhatTheFormatCannotHold) {
  const io::NpyArray f = limits_array(DType::f32, {4, 5});
  expect_error([&] { io::write_image(path("f.png"), f, {}); }, path("f.png"),
               {"cannot write", "PNG holds 8- and 16-bit unsigned samples", "float32"});
  const io::NpyArray v = limits_array(DType::u8, {2, 4, 5});
  expect_error([&] { io::write_image(path("v.png"), v, {}); }, path("v.png"),
               {"a PNG is one 2-D image", "(2, 4, 5)"});
  const io::NpyArray five = limits_array(DType::u8, {4, 5, 5});
  expect_error([&] { io::write_image(path("five.png"), five, {true, false}); }, path("five.png"),
               {"1 to 4 channels"});
  const io::NpyArray c = limits_array(DType::c64, {4, 5});
  expect_error([&] { io::write_image(path("c.tif"), c, {}); }, path("c.tif"),
               {"a TIFF holds", "complex64"});
  const io::NpyArray s = limits_array(DType::f32, {7});
  expect_error([&] { io::write_image(path("s.tif"), s, {}); }, path("s.tif"), {"2-D pages"});
  expect_error([&] { io::write_image(path("x.npy"), f, {}); }, path("x.npy"),
               {"does not end in .png, .tif or .tiff"});
  for (const char* n : {"f.png", "v.png", "five.png", "c.tif", "s.tif", "x.npy"})
    EXPECT_FALSE(fs::exists(path(n))) << n;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

// Whether the core filters dtype `t` (a 3x3 box over a 4x4 array on the CPU); *why: its refusal.
bool core_filters(DType t, std::string* why) {
  std::vector<unsigned char> in(16 * dtype_size(t), 0), out(in.size());
  try {
    const ConstArrayView iv(in.data(), t, 2, {4, 4, 1}, 1);
    ArrayView ov;
    ov.data = out.data();
    ov.dtype = t;
    ov.rank = 2;
    ov.extents = {4, 4, 1};
    Options o;
    o.backend = Backend::cpu;
    apply(iv, ov, make_named_filter("box:3", 2), o);
    return true;
  } catch (const Error& e) {
    *why = e.what();
    return false;
  }
}

class ImageCli : public TempDirTest {
 protected:
  // Expects failure with every phrase in the one line on stderr, nothing on stdout, and no file
  // at `out` afterwards (nor a temporary file).
  void expect_failure(const std::string& args, const std::vector<std::string>& phrases,
                      const std::string& out) {
    const SplitResult r = run_cli_split(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.rfind("halo: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line: " << r.err;
    for (const std::string& p : phrases)
      EXPECT_NE(r.err.find(p), std::string::npos) << "`" << args << "` lacks '" << p << "':\n"
                                                  << r.err;
    EXPECT_FALSE(fs::exists(out)) << out << " was written although the command failed";
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  }

  // Runs `args`; where the core does not filter `dtype` yet, the run must fail with the core's
  // refusal, and the test is skipped; otherwise it must succeed. Returns whether it ran.
  bool run_or_skip_for(DType dtype, const std::string& args) {
    const Result r = run_cli(args);
    std::string why;
    if (core_filters(dtype, &why)) {
      EXPECT_EQ(r.code, 0) << args << "\n" << r.output;
      return r.code == 0;
    }
    EXPECT_NE(r.code, 0) << "the core refuses " << to_string(dtype) << " but `" << args
                         << "` succeeded";
    EXPECT_NE(r.output.find(why), std::string::npos)
        << "the run failed, but not with the core's refusal (" << why << "):\n" << r.output;
    return false;
  }
};

// An h x w image of `dtype` whose colour channels are the constants `colours` and whose alpha
// (where `alpha`) is random.
io::NpyArray constant_channels(DType dtype, std::int64_t h, std::int64_t w,
                               const std::vector<double>& colours, bool alpha) {
  const std::int64_t c = std::int64_t(colours.size()) + (alpha ? 1 : 0);
  io::NpyArray a = limits_array(dtype, {h, w, c});
  for (std::int64_t p = 0; p < h * w; ++p)
    for (std::size_t k = 0; k < colours.size(); ++k) {
      const std::int64_t i = p * c + std::int64_t(k);
      switch (dtype) {
        case DType::u8: a.as<std::uint8_t>()[i] = std::uint8_t(colours[k]); break;
        case DType::u16: a.as<std::uint16_t>()[i] = std::uint16_t(colours[k]); break;
        case DType::f32: a.as<float>()[i] = float(colours[k]); break;
        default: break;
      }
    }
  return a;
}

// The alpha channel (the last) of two (h, w, c) arrays is the same bit for bit; the colour
// channels are the constants within `tol`.
void expect_constants_and_alpha(const io::NpyArray& out, const io::NpyArray& in,
                                const std::vector<double>& colours, double tol) {
  ASSERT_EQ(out.shape(), in.shape());
  ASSERT_EQ(out.dtype(), in.dtype());
  const std::int64_t c = in.shape().back(), n = in.size() / c;
  const std::size_t sb = dtype_size(in.dtype());
  const auto* o = static_cast<const unsigned char*>(out.data());
  const auto* i = static_cast<const unsigned char*>(in.data());
  for (std::int64_t p = 0; p < n; ++p) {
    if (std::int64_t(colours.size()) < c)
      ASSERT_EQ(std::memcmp(o + ((p + 1) * c - 1) * sb, i + ((p + 1) * c - 1) * sb, sb), 0)
          << "alpha of pixel " << p << " changed";
    for (std::size_t k = 0; k < colours.size(); ++k) {
      const std::int64_t e = p * c + std::int64_t(k);
      const double v = in.dtype() == DType::u8    ? out.as<std::uint8_t>()[e]
                       : in.dtype() == DType::u16 ? out.as<std::uint16_t>()[e]
                                                  : out.as<float>()[e];
      ASSERT_NEAR(v, colours[k], tol) << "channel " << k << " of pixel " << p;
    }
  }
}

TEST_F(ImageCli, ChannelsStayApartAndAlphaIsKeptInAFloatTiff) {
  const std::vector<double> colours{10, 100, 250};
  const io::NpyArray in = constant_channels(DType::f32, 33, 47, colours, true);
  io::write_image(path("in.tif"), in, {true, true});
  const Result r = run_cli("apply " + path("in.tif") + " " + path("out.tif") +
                           " --filter gaussian:sigma=2 --mode nearest -v");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("batch 3"), std::string::npos) << "3 colour planes: " << r.output;
  const io::Image out = io::read_image(path("out.tif"));
  EXPECT_TRUE(out.header.layout.alpha);
  EXPECT_EQ(out.header.what, "float32 RGBA TIFF");
  expect_constants_and_alpha(out.pixels, in, colours, 250 * 4e-6);
}

TEST_F(ImageCli, EachChannelIsFilteredAsItsOwnImage) {
  // Random RGB: each output channel is the 2-D filter of that channel alone.
  const std::int64_t h = 21, w = 26;
  io::NpyArray in = limits_array(DType::f32, {h, w, 3});
  const std::vector<float> v = random_vector<float>(h * w * 3);
  std::memcpy(in.data(), v.data(), in.nbytes());
  io::write_image(path("in.tiff"), in, {true, false});
  ASSERT_EQ(run_cli("apply " + path("in.tiff") + " " + path("out.TIF") +
                    " --filter sobel-x --mode reflect")
                .code,
            0);
  const io::Image out = io::read_image(path("out.TIF"));
  ASSERT_EQ(out.pixels.shape(), in.shape());
  for (int k = 0; k < 3; ++k) {
    std::vector<float> plane(std::size_t(h * w));
    for (std::int64_t p = 0; p < h * w; ++p) plane[std::size_t(p)] = v[std::size_t(p * 3 + k)];
    Edges e;
    e.mode = {Boundary::reflect, Boundary::reflect, Boundary::reflect};
    const Problem pr(2, {h, w, 1}, 1, make_named_filter("sobel-x", 2), DType::f32,
                     Op::correlate, e);
    std::vector<double> ref(plane.size()), scale(plane.size());
    cpu::reference_f64(pr, plane.data(), ref.data());
    cpu::reference_f64(pr, plane.data(), scale.data(), true);
    for (std::int64_t p = 0; p < h * w; ++p)
      ASSERT_NEAR(out.pixels.as<float>()[p * 3 + k], ref[std::size_t(p)],
                  tolerance<float>(9, scale[std::size_t(p)]))
          << "channel " << k << " pixel " << p;
  }
}

TEST_F(ImageCli, PagesAreAVolumeOrWithBatchAStack) {
  const std::int64_t d = 4, h = 12, w = 15;
  io::NpyArray in(DType::f32, {d, h, w});
  const std::vector<float> v = random_vector<float>(d * h * w);
  std::memcpy(in.data(), v.data(), in.nbytes());
  io::write_image(path("stack.tif"), in, {});
  ASSERT_EQ(run_cli("apply " + path("stack.tif") + " " + path("vol.tif") +
                    " --filter gaussian:sigma=1")
                .code,
            0);
  ASSERT_EQ(run_cli("apply " + path("stack.tif") + " " + path("pages.tif") +
                    " --filter gaussian:sigma=1 --batch")
                .code,
            0);
  const io::Image vol = io::read_image(path("vol.tif")), pages = io::read_image(path("pages.tif"));
  EXPECT_EQ(vol.header.pages, d);
  EXPECT_EQ(pages.header.pages, d);
  const Problem p3(3, {d, h, w}, 1, make_named_filter("gaussian:sigma=1", 3), DType::f32);
  const Problem p2(2, {h, w, 1}, d, make_named_filter("gaussian:sigma=1", 2), DType::f32);
  std::vector<double> r3(v.size()), r2(v.size());
  cpu::reference_f64(p3, v.data(), r3.data());
  cpu::reference_f64(p2, v.data(), r2.data());
  double differ = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    ASSERT_NEAR(vol.pixels.as<float>()[i], r3[i], 1e-5) << i;
    ASSERT_NEAR(pages.pixels.as<float>()[i], r2[i], 1e-5) << i;
    differ = std::max(differ, std::abs(r3[i] - r2[i]));
  }
  EXPECT_GT(differ, 1e-3) << "the volume and the stack should differ";
}

TEST_F(ImageCli, NpyAndImagesConvertBothWays) {
  const std::vector<double> colours{10, 100, 250};
  const io::NpyArray in = constant_channels(DType::f32, 16, 20, colours, true);
  io::write_npy(path("in.npy"), in);
  // An .npy with --channels: each channel apart (alpha is not known in an .npy: filtered too).
  const SplitResult a = run_cli_split("apply " + path("in.npy") + " " + path("out.tif") +
                                      " --filter box:5 --mode nearest --channels");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.err, "");
  const io::Image t = io::read_image(path("out.tif"));
  EXPECT_EQ(t.pixels.shape(), in.shape());
  EXPECT_FALSE(t.header.layout.alpha) << "an .npy's last channel is not marked alpha";
  for (std::int64_t p = 0; p < 16 * 20; ++p)
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(t.pixels.as<float>()[p * 4 + k], colours[std::size_t(k)], 1e-3);
  // An image to an .npy: its array as read, alpha copied.
  io::write_image(path("in.tif"), in, {true, true});
  ASSERT_EQ(run_cli("apply " + path("in.tif") + " " + path("out.npy") +
                    " --filter box:5 --mode nearest")
                .code,
            0);
  expect_constants_and_alpha(io::read_npy(path("out.npy")), in, colours, 1e-3);
  // Without --channels, a 3-D .npy whose last axis is 3 or 4 is a volume, and a note says so.
  const SplitResult v =
      run_cli_split("apply " + path("in.npy") + " " + path("vol.npy") + " --filter box:3");
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.err.find("halo: note: "), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("--channels"), std::string::npos) << v.err;
  // ... and is no PNG without --channels.
  expect_failure("apply " + path("in.npy") + " " + path("vol.png") + " --filter box:3",
                 {"vol.png: cannot write", "PNG", "pass --channels"}, path("vol.png"));
}

TEST_F(ImageCli, OutputsFollowTheRules) {
  io::NpyArray f = limits_array(DType::f32, {8, 9});
  const std::vector<float> v = random_vector<float>(72);
  std::memcpy(f.data(), v.data(), f.nbytes());
  io::write_image(path("f.tif"), f, {});
  // A float image cannot be a PNG: refused before any work, nothing written.
  expect_failure("apply " + path("f.tif") + " " + path("f.png") + " --filter box:3",
                 {"f.png: cannot write", "PNG holds 8- and 16-bit", "float32"}, path("f.png"));
  // A stack cannot be a PNG.
  io::write_image(path("s.tif"), limits_array(DType::u8, {3, 4, 5}), {});
  expect_failure("apply " + path("s.tif") + " " + path("s.png") + " --filter box:3",
                 {"s.png: cannot write", "a PNG is one 2-D image"}, path("s.png"));
  // A read-only output is refused and left alone; a missing directory is refused.
  write_bytes(path("ro.tif"), "keep");
  ::chmod(path("ro.tif").c_str(), 0444);
  const Result ro = run_cli("apply " + path("f.tif") + " " + path("ro.tif") + " --filter box:3");
  EXPECT_EQ(ro.code, 1);
  EXPECT_EQ(read_bytes(path("ro.tif")), "keep");
  ::chmod(path("ro.tif").c_str(), 0644);
  expect_failure("apply " + path("f.tif") + " " + path("no/dir/o.tif") + " --filter box:3",
                 {"no/dir/o.tif"}, path("no/dir/o.tif"));
  // A failed run leaves an existing image as it was.
  write_bytes(path("old.tif"), "previous");
  EXPECT_EQ(run_cli("apply " + path("f.tif") + " " + path("old.tif") + " --filter box:3 "
                    "--strategy nope")
                .code,
            1);
  EXPECT_EQ(read_bytes(path("old.tif")), "previous");
  // A symlink named .tif is followed, and its target replaced.
  fs::create_symlink(path("target.bin"), path("link.tif"));
  ASSERT_EQ(run_cli("apply " + path("f.tif") + " " + path("link.tif") + " --filter box:3").code, 0);
  EXPECT_TRUE(fs::is_symlink(path("link.tif")));
  EXPECT_EQ(io::read_image(path("target.bin")).pixels.shape(), f.shape());
  // An image to standard output is an .npy (no extension): '-' stays the .npy rules.
  const SplitResult so = run_cli_split("apply " + path("f.tif") + " - --filter box:3");
  ASSERT_EQ(so.code, 0) << so.err;
  EXPECT_EQ(so.out.rfind("\x93NUMPY", 0), 0u);
  // Upper-case extensions are images too.
  ASSERT_EQ(run_cli("apply " + path("f.tif") + " " + path("UP.TIFF") + " --filter box:3").code, 0);
  EXPECT_EQ(read_bytes(path("UP.TIFF")).substr(0, 2), "II");
}

TEST_F(ImageCli, MalformedImagesFailClearlyAndWriteNothing) {
  write_bytes(path("jpeg.png"), std::string("\xff\xd8\xff\xe0\0\x10JFIF\0", 11) + "rest");
  write_bytes(path("empty.tif"), "");
  write_bytes(path("text.tiff"), "not an image at all");
  io::write_image(path("good.png"), limits_array(DType::u8, {20, 30}), {});
  const std::string good = read_bytes(path("good.png"));
  Tags f32 = grey_tags(4, 3);  // float32 samples whose strip runs past the end of the file
  f32[258] = {3, {32}};
  f32[339] = {3, {3}};
  f32[279] = {4, {48}};
  f32[273] = {4, {100000}};
  write_bytes(path("cut.tif"), mini_tiff(f32, std::string(48, '\0')));
  write_bytes(path("tif.png"), mini_tiff(grey_tags(4, 3), std::string(12, '\1')));
  const std::string out = path("out.tif");
  expect_failure("apply " + path("jpeg.png") + " " + out + " --filter box:3",
                 {path("jpeg.png") + ": not a PNG file: it is a JPEG file"}, out);
  expect_failure("apply " + path("empty.tif") + " " + out + " --filter box:3",
                 {path("empty.tif") + ": empty file"}, out);
  expect_failure("apply " + path("text.tiff") + " " + out + " --filter box:3",
                 {path("text.tiff") + ": not a TIFF file"}, out);
  expect_failure("apply " + path("cut.tif") + " " + out + " --filter box:3",
                 {path("cut.tif") + ": cannot decode strip 0"}, out);
  expect_failure("apply " + path("tif.png") + " " + out + " --filter box:3",
                 {path("tif.png") + ": not a PNG file: it is a TIFF file"}, out);
  expect_failure("apply " + path("missing.png") + " " + out + " --filter box:3",
                 {path("missing.png") + ": cannot open"}, out);
}

TEST_F(ImageCli, ChannelOptionsAndErrorsSayTheLayout) {
  const std::vector<float> v = random_vector<float>(40);
  io::write_npy(path("sig.npy"), DType::f32, {40}, v.data());
  expect_failure("apply " + path("sig.npy") + " " + path("o.npy") + " --filter box:3 --channels",
                 {"--channels needs at least 2 dimensions"}, path("o.npy"));
  io::write_npy(path("two.npy"), DType::f32, {10, 4}, v.data());
  expect_failure("apply " + path("two.npy") + " " + path("o.npy") +
                     " --filter box:3 --channels --batch",
                 {"no axis left to filter"}, path("o.npy"));
  // An error about the planes says how the image became planes.
  io::write_image(path("rgb.tif"), limits_array(DType::f32, {6, 7, 3}), {true, false});
  expect_failure("apply " + path("rgb.tif") + " " + path("o.tif") + " --filter box:3 --axis 2",
                 {"--axis 2 is out of range", "float32 RGB TIFF", "3 colour channels",
                  "3 planes of 6x7"},
                 path("o.tif"));
}

// uint8 and uint16 images end to end: they run once the core filters those dtypes; until then
// the run must fail with the core's own refusal, and the test is skipped saying so.
TEST_F(ImageCli, Uint8PngRgbaEndToEnd) {
  const std::vector<double> colours{10, 100, 250};
  const io::NpyArray in = constant_channels(DType::u8, 30, 41, colours, true);
  io::write_image(path("in.png"), in, {true, true});
  if (!run_or_skip_for(DType::u8, "apply " + path("in.png") + " " + path("out.png") +
                                      " --filter gaussian:sigma=2 --mode nearest --round nearest")) {
    std::string why;
    if (!core_filters(DType::u8, &why)) GTEST_SKIP() << "the core does not filter uint8 yet: " << why;
    return;
  }
  const io::Image out = io::read_image(path("out.png"));
  EXPECT_EQ(out.header.what, "8-bit RGBA PNG");
  expect_constants_and_alpha(out.pixels, in, colours, 0.0);
  // Truncated (SciPy's rule, the default), a sum a rounding below the constant loses 1.
  ASSERT_EQ(run_cli("apply " + path("in.png") + " " + path("trunc.png") +
                    " --filter gaussian:sigma=2 --mode nearest")
                .code,
            0);
  expect_constants_and_alpha(io::read_image(path("trunc.png")).pixels, in, colours, 1.0);
}

TEST_F(ImageCli, Uint16PngGreyAlphaEndToEnd) {
  const std::vector<double> colours{40000};
  const io::NpyArray in = constant_channels(DType::u16, 25, 18, colours, true);
  io::write_image(path("in.png"), in, {true, true});
  if (!run_or_skip_for(DType::u16, "apply " + path("in.png") + " " + path("out.tif") +
                                       " --filter box:5 --mode nearest")) {
    std::string why;
    if (!core_filters(DType::u16, &why)) GTEST_SKIP() << "the core does not filter uint16 yet: " << why;
    return;
  }
  const io::Image out = io::read_image(path("out.tif"));
  EXPECT_EQ(out.header.what, "uint16 grey+alpha TIFF");
  expect_constants_and_alpha(out.pixels, in, colours, 1.0);
}

TEST_F(ImageCli, Uint8TiffStackEndToEnd) {
  io::NpyArray in(DType::u8, {3, 10, 12});
  for (std::int64_t i = 0; i < in.size(); ++i) in.as<std::uint8_t>()[i] = std::uint8_t(i % 3 == 0 ? 200 : 50);
  io::write_image(path("in.tif"), in, {});
  if (!run_or_skip_for(DType::u8, "apply " + path("in.tif") + " " + path("out.tif") +
                                      " --filter box:3 --batch")) {
    std::string why;
    if (!core_filters(DType::u8, &why)) GTEST_SKIP() << "the core does not filter uint8 yet: " << why;
    return;
  }
  const io::Image out = io::read_image(path("out.tif"));
  EXPECT_EQ(out.pixels.dtype(), DType::u8);
  EXPECT_EQ(out.pixels.shape(), in.shape());
  EXPECT_EQ(out.header.pages, 3);
}

TEST_F(ImageCli, Uint8NpyToRgbPngEndToEnd) {
  io::NpyArray in(DType::u8, {14, 9, 3});
  for (std::int64_t i = 0; i < in.size(); ++i)
    in.as<std::uint8_t>()[i] = std::uint8_t(i % 3 == 0 ? 10 : i % 3 == 1 ? 100 : 250);
  io::write_npy(path("in.npy"), in);
  if (!run_or_skip_for(DType::u8, "apply " + path("in.npy") + " " + path("out.png") +
                                      " --filter gaussian:sigma=2 --mode nearest --channels "
                                      "--round nearest")) {
    std::string why;
    if (!core_filters(DType::u8, &why)) GTEST_SKIP() << "the core does not filter uint8 yet: " << why;
    return;
  }
  const io::Image out = io::read_image(path("out.png"));
  EXPECT_EQ(out.header.what, "8-bit RGB PNG");
  // Rounded to nearest, the constants come back exactly.
  expect_constants_and_alpha(out.pixels, in, {10, 100, 250}, 0.0);
}

// --output-dtype: the output's format must hold the output dtype (checked before any work), and
// an alpha channel is converted as the core stores a sum of its value.
TEST_F(ImageCli, OutputDtypeMeetsTheFormatAndConvertsAlpha) {
  std::string why;
  if (!core_filters(DType::u8, &why)) GTEST_SKIP() << "the core does not filter uint8 yet: " << why;
  const std::vector<double> colours{10, 100, 250};
  const io::NpyArray in = constant_channels(DType::u8, 12, 13, colours, true);
  io::write_image(path("in.png"), in, {true, true});
  const Result r = run_cli("apply " + path("in.png") + " " + path("out.tif") +
                           " --filter box:3 --mode nearest --output-dtype f32");
  ASSERT_EQ(r.code, 0) << r.output;
  const io::Image out = io::read_image(path("out.tif"));
  ASSERT_EQ(out.pixels.dtype(), DType::f32);
  ASSERT_EQ(out.pixels.shape(), in.shape());
  EXPECT_TRUE(out.header.layout.alpha);
  for (std::int64_t p = 0; p < 12 * 13; ++p) {
    EXPECT_EQ(out.pixels.as<float>()[p * 4 + 3], float(in.as<std::uint8_t>()[p * 4 + 3])) << p;
    for (int k = 0; k < 3; ++k)
      ASSERT_NEAR(out.pixels.as<float>()[p * 4 + k], colours[std::size_t(k)], 1e-3);
  }
  // A float image becomes a PNG only with an output dtype a PNG holds.
  io::write_image(path("f.tif"), constant_channels(DType::f32, 6, 5, {7, 8}, false), {true, false});
  expect_failure("apply " + path("f.tif") + " " + path("f.png") + " --filter box:3",
                 {"f.png: cannot write", "float32"}, path("f.png"));
  const Result ok = run_cli("apply " + path("f.tif") + " " + path("f.png") +
                            " --filter box:3 --mode nearest --output-dtype u16 --round nearest");
  ASSERT_EQ(ok.code, 0) << ok.output;
  const io::Image png = io::read_image(path("f.png"));
  EXPECT_EQ(png.header.what, "16-bit grey+alpha PNG");
  expect_constants_and_alpha(png.pixels, png.pixels, {7, 8}, 0.0);
}

}  // namespace
}  // namespace halo::test
