// libFuzzer harness of the PNG reader (io/image.hpp, read_image_memory). Each input is read as it
// is, then again with every chunk's CRC made right, so that mutations get past libpng's checks
// into the chunks themselves. A file that reads is written back (encode_image) and read again:
// the same samples, or the harness aborts. Any exception other than halo::Error (what a bad file
// must give) is uncaught, so libFuzzer reports it, as it reports what the sanitizers find.
#include <cstdint>
#include <string>

#include "common.hpp"
#include "io/image.hpp"

namespace {

using halo::io::ImageFormat;

std::uint32_t crc32(const unsigned char* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

// The input with the CRC of every whole chunk recomputed (a PNG's chunks: length, type, data,
// CRC, after the 8-byte signature).
std::string with_crcs(const std::uint8_t* data, std::size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  auto* p = reinterpret_cast<unsigned char*>(s.data());
  std::size_t at = 8;
  while (at + 12 <= size) {
    const std::uint64_t len = std::uint64_t(p[at]) << 24 | p[at + 1] << 16 | p[at + 2] << 8 | p[at + 3];
    if (len > size - at - 12) break;
    const std::uint32_t c = crc32(p + at + 4, std::size_t(len) + 4);
    for (int i = 0; i < 4; ++i) p[at + 8 + len + std::size_t(i)] = (unsigned char)(c >> (24 - 8 * i));
    at += 12 + std::size_t(len);
  }
  return s;
}

void read_and_rewrite(const void* data, std::size_t size) {
  halo::io::Image img;
  try {
    img = halo::io::read_image_memory(data, size, "fuzz.png", ImageFormat::png,
                                      [](const halo::io::ImageHeader& h) {
                                        if (double(h.data_bytes) > halo::fuzz::kMaxDecodedBytes)
                                          throw halo::Error("larger than the harness takes");
                                      });
  } catch (const halo::Error&) {
    return;
  }
  if (img.pixels.nbytes() != img.header.data_bytes) halo::fuzz::die("data_bytes is not the array's size");
  const std::string again =
      halo::io::encode_image(ImageFormat::png, img.pixels, img.header.layout, "again.png");
  const halo::io::Image back = halo::io::read_image_memory(again.data(), again.size(), "again.png");
  if (back.pixels.shape() != img.pixels.shape() || back.pixels.dtype() != img.pixels.dtype() ||
      std::memcmp(back.pixels.data(), img.pixels.data(), img.pixels.nbytes()) != 0)
    halo::fuzz::die("a PNG read, written and read again changed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  read_and_rewrite(data, size);
  if (size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
    const std::string fixed = with_crcs(data, size);
    read_and_rewrite(fixed.data(), fixed.size());
  }
  return 0;
}
