// The arrays `halo apply` reads and writes: an .npy file, or an image (PNG, TIFF) by its path's
// extension (.png, .tif, .tiff, any case), and the planes the core filters.
//
// The core filters the spatial axes only. Where the last axis is channels (an image's colour
// channels, found in the file; an .npy's with --channels), the channels are de-interleaved into
// planes that the core filters as a batch (after the --batch axis: item-major), and interleaved
// again into the output; an image's alpha channel is not filtered but copied. Without channels
// the file's array is the core's input as it is.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "halo/halo.hpp"
#include "halo/strategy.hpp"
#include "io/image.hpp"
#include "io/npy.hpp"

namespace halo::tool {

class ApplyInput {
 public:
  // What the core is given, seen before the data is allocated.
  struct View {
    io::NpyHeader planes;          // dtype, shape (the batch first where `batch`), data bytes
    bool batch = false;            // the first axis of planes.shape is a batch
    std::vector<MemoryUse> extra;  // host memory beyond the input and output planes
  };

  // Reads `path`: an image by its extension, else an .npy (read_npy: "-" is standard input).
  // `channels` (--channels): the last axis of an .npy is channels (an image's are found in the
  // file); `batch` (--batch): the first axis is a batch. `out` is the output's path: whether its
  // format can hold the result (`out_dtype`: the output's dtype, the input's by default) is
  // checked, and the memory its encoding takes counted, before the data is read. `plan(view)`
  // sees the view before the data is allocated and may throw to refuse; its errors are given the
  // input's layout where its channels are planes.
  static ApplyInput read(const std::string& path, const std::string& out, bool channels,
                         bool batch, const std::function<void(const View&)>& plan,
                         std::optional<DType> out_dtype = std::nullopt);

  // The core's input: the planes (the file's array where it has no channels to separate).
  const io::NpyArray& planes() const { return copy_ ? planes_ : file_; }

  // A note for standard error, or "": a 3-D .npy whose last axis has 3 or 4 elements, filtered
  // along that axis by the `rank`-D filter of `extents` without --channels.
  std::string channels_note(int rank, const Extents& extents) const;

  // Writes `filtered` (the core's output, of planes()'s shape; any dtype the output can hold) to
  // `out` in the input's layout: .npy, or an image by the extension. Frees the input first. An
  // alpha channel is copied, or converted to an output dtype other than the input's as the core
  // stores a sum of its value (`rounding` for an integer output).
  void write(const std::string& out, io::NpyArray& filtered,
             Rounding rounding = Rounding::truncate);

 private:
  std::string path_;
  io::ImageFormat format_ = io::ImageFormat::none;
  std::string what_;  // an image's kind, for messages
  io::NpyArray file_, planes_;
  std::vector<std::int64_t> shape_;  // the file's array's
  DType dtype_ = DType::f32;
  io::ImageLayout layout_;  // channels, alpha (of an image)
  bool copy_ = false;       // planes_ holds the de-interleaved channels
  bool batch_ = false;      // --batch
  std::int64_t items_ = 1, colours_ = 1, channels_ = 1, pixels_ = 1;
};

}  // namespace halo::tool
