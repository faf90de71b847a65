// Writes the seed corpus of the harnesses: a few tiny valid files of each kind the readers take,
// into DIR/png, DIR/tiff and DIR/npy (a few kB in all). Usage: fuzz_seeds DIR
#include <png.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "io/image.hpp"
#include "io/npy.hpp"

namespace {

using halo::DType;
using halo::io::ImageFormat;
using halo::io::ImageLayout;
using halo::io::NpyArray;

NpyArray ramp(DType t, std::vector<std::int64_t> shape) {
  NpyArray a(t, std::move(shape));
  auto* b = static_cast<unsigned char*>(a.data());
  for (std::size_t i = 0; i < a.nbytes(); ++i) b[i] = static_cast<unsigned char>(i * 37 + 11);
  return a;
}

void image(const std::string& path, DType t, std::vector<std::int64_t> shape, ImageLayout l,
           halo::io::ImageWriteOptions o = {}) {
  halo::io::write_image(path, ramp(t, std::move(shape)), l, o);
}

// A PNG of a form halo does not write, by libpng (plain data only in this frame: setjmp).
bool libpng(const char* path, int w, int h, int depth, int colour, const png_color* palette,
            int colours, const png_byte* alphas, int nalphas, const unsigned char* rows,
            std::size_t rowbytes) {
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
  if (nalphas) png_set_tRNS(png, info, alphas, nalphas, nullptr);
  png_write_info(png, info);
  for (int y = 0; y < h; ++y) png_write_row(png, const_cast<png_bytep>(rows + std::size_t(y) * rowbytes));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  for (const char* sub : {"", "/png", "/tiff", "/npy"}) ::mkdir((dir + sub).c_str(), 0755);
  try {
    const std::string p = dir + "/png/", t = dir + "/tiff/", n = dir + "/npy/";
    image(p + "grey8.png", DType::u8, {3, 5}, {});
    image(p + "ga16.png", DType::u16, {2, 3, 2}, {true, true});
    halo::io::ImageWriteOptions interlaced;
    interlaced.png.interlace = true;
    image(p + "rgb8-adam7.png", DType::u8, {9, 9, 3}, {true, false}, interlaced);
    image(p + "rgba16.png", DType::u16, {2, 2, 4}, {true, true});
    const png_color pal[2] = {{1, 2, 3}, {200, 100, 0}};
    const png_byte alphas[1] = {7};
    const unsigned char idx[2] = {0x40, 0x80};  // 2-bit indices 1, 0, 0, 0 / 2, 0, 0, 0
    if (!libpng((p + "palette2.png").c_str(), 4, 2, 2, PNG_COLOR_TYPE_PALETTE, pal, 2, alphas, 1,
                idx, 1) ||
        !libpng((p + "grey1.png").c_str(), 8, 2, 1, PNG_COLOR_TYPE_GRAY, nullptr, 0, nullptr, 0, idx,
                1))
      throw halo::Error("libpng could not write a seed");

    image(t + "u8.tif", DType::u8, {3, 4}, {});
    halo::io::ImageWriteOptions o;
    o.tiff.planar = true;
    image(t + "u16-rgb-planar.tif", DType::u16, {3, 2, 3}, {true, false}, o);
    o = {};
    o.tiff.tile = 16;
    o.tiff.compression = halo::io::TiffCompression::lzw;
    image(t + "f32-tiled-lzw.tif", DType::f32, {5, 17}, {}, o);
    o = {};
    o.tiff.compression = halo::io::TiffCompression::packbits;
    o.tiff.rows_per_strip = 1;
    image(t + "i16-pages-packbits.tif", DType::i16, {2, 2, 3}, {}, o);
    o = {};
    o.tiff.bigtiff = halo::io::BigTiff::always;
    o.tiff.compression = halo::io::TiffCompression::deflate;
    image(t + "f64-ga-bigtiff-deflate.tif", DType::f64, {2, 2, 2}, {true, true}, o);
    image(t + "i32-rgba.tif", DType::i32, {1, 3, 4}, {true, true});

    const NpyArray f = ramp(DType::f32, {4});
    halo::io::write_npy(n + "f32.npy", f);
    halo::io::write_npy(n + "f64.npy", ramp(DType::f64, {2, 2}));
    halo::io::write_npy(n + "u8.npy", ramp(DType::u8, {2, 3, 4}));
    halo::io::write_npy(n + "i16.npy", ramp(DType::i16, {1, 1, 2, 2}));
    // Version 2.0 and 3.0 headers (a 4-byte length), written by hand.
    for (const int major : {2, 3}) {
      std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
      while ((12 + dict.size() + 1) % 64) dict += ' ';
      dict += '\n';
      std::string file("\x93NUMPY", 6);
      file += char(major);
      file += '\0';
      for (int i = 0; i < 4; ++i) file += char((dict.size() >> (8 * i)) & 0xff);
      file += dict;
      file.append(8, '\0');
      FILE* out = std::fopen((n + "v" + std::to_string(major) + ".npy").c_str(), "wb");
      if (!out || std::fwrite(file.data(), 1, file.size(), out) != file.size() || std::fclose(out))
        throw halo::Error("cannot write a seed");
    }
  } catch (const halo::Error& e) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
