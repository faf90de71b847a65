// libFuzzer harness of the TIFF reader (io/image.hpp, read_image_memory). A file that reads is
// written back (encode_image: chunky strips, classic TIFF; BigTIFF for every other input) and
// read again: the same samples, or the harness aborts. Any exception other than halo::Error is
// uncaught, so libFuzzer reports it, as it reports what the sanitizers find.
#include <cstdint>
#include <string>

#include "common.hpp"
#include "io/image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using halo::io::ImageFormat;
  halo::io::Image img;
  try {
    img = halo::io::read_image_memory(data, size, "fuzz.tif", ImageFormat::tiff,
                                      [](const halo::io::ImageHeader& h) {
                                        if (double(h.data_bytes) > halo::fuzz::kMaxDecodedBytes)
                                          throw halo::Error("larger than the harness takes");
                                      });
  } catch (const halo::Error&) {
    return 0;
  }
  if (img.pixels.nbytes() != img.header.data_bytes) halo::fuzz::die("data_bytes is not the array's size");
  halo::io::ImageWriteOptions o;
  if (size % 2) o.tiff.bigtiff = halo::io::BigTiff::always;
  const std::string again =
      halo::io::encode_image(ImageFormat::tiff, img.pixels, img.header.layout, "again.tif", o);
  const halo::io::Image back = halo::io::read_image_memory(again.data(), again.size(), "again.tif");
  if (back.pixels.shape() != img.pixels.shape() || back.pixels.dtype() != img.pixels.dtype() ||
      back.header.layout.alpha != img.header.layout.alpha ||
      std::memcmp(back.pixels.data(), img.pixels.data(), img.pixels.nbytes()) != 0)
    halo::fuzz::die("a TIFF read, written and read again changed");
  return 0;
}
