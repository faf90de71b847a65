// The arrays of `halo apply` (array_file.hpp): read, de-interleaved into planes, interleaved back
// and written.
#include "array_file.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "core/convert.hpp"  // internal, on purpose: an alpha channel stored as the output's dtype
#include "core/dtype.hpp"
#include "core/parse.hpp"  // internal, on purpose: printable paths

namespace halo::tool {
namespace {

std::string name_of(const std::string& path) {
  return path == "-" ? "standard input" : detail::escape_controls(path);
}

std::string dims_text(const std::vector<std::int64_t>& s, std::size_t from, std::size_t to) {
  std::string r;
  for (std::size_t i = from; i < to; ++i) r += (i > from ? "x" : "") + std::to_string(s[i]);
  return r;
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// planes[(b * colours + k) * pixels + i] = interleaved[(b * pixels + i) * channels + k] for the
// first `colours` of `channels` channels (to_planes), or the other way round; T is a type of the
// sample's size, so that each copy is one load and one store.
template <class T>
void move_samples(void* interleaved, void* planes, std::int64_t items, std::int64_t pixels,
                  std::int64_t channels, std::int64_t colours, bool to_planes) {
  auto* il = static_cast<T*>(interleaved);
  auto* pl = static_cast<T*>(planes);
  for (std::int64_t b = 0; b < items; ++b)
    for (std::int64_t i = 0; i < pixels; ++i) {
      T* px = il + (b * pixels + i) * channels;
      T* pp = pl + b * colours * pixels + i;
      for (std::int64_t k = 0; k < colours; ++k) {
        if (to_planes)
          std::memcpy(pp + k * pixels, px + k, sizeof(T));
        else
          std::memcpy(px + k, pp + k * pixels, sizeof(T));
      }
    }
}

struct Bytes16 {
  unsigned char b[16];
};

void move_samples(std::size_t sample, void* interleaved, void* planes, std::int64_t items,
                  std::int64_t pixels, std::int64_t channels, std::int64_t colours,
                  bool to_planes) {
  switch (sample) {
    case 1: return move_samples<std::uint8_t>(interleaved, planes, items, pixels, channels, colours, to_planes);
    case 2: return move_samples<std::uint16_t>(interleaved, planes, items, pixels, channels, colours, to_planes);
    case 4: return move_samples<std::uint32_t>(interleaved, planes, items, pixels, channels, colours, to_planes);
    case 8: return move_samples<std::uint64_t>(interleaved, planes, items, pixels, channels, colours, to_planes);
    default: return move_samples<Bytes16>(interleaved, planes, items, pixels, channels, colours, to_planes);
  }
}

template <class T>
constexpr bool is_complex_storage_v = false;
template <class R>
constexpr bool is_complex_storage_v<std::complex<R>> = true;

// An alpha sample of one dtype as another (an output dtype other than the input's): as a double
// (complex: its real part), stored as the core stores a sum of that value (Rounding for an
// integer output; to nearest for a floating one; a complex one gets it as its real part).
double load_value(DType t, const unsigned char* p) {
  return dispatch_dtype<AllDTypes>(t, [&](auto d) {
    using T = typename decltype(d)::storage;
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (is_complex_storage_v<T>)
      return double(v.real());
    else
      return detail::to_double(v);
  });
}

void store_value(DType t, double v, Rounding rounding, unsigned char* p) {
  dispatch_dtype<AllDTypes>(t, [&](auto d) {
    using T = typename decltype(d)::storage;
    T out;
    if constexpr (std::is_integral_v<T>)
      out = rounding == Rounding::nearest ? detail::nearest_cast<T>(v) : detail::scipy_cast<T>(v);
    else if constexpr (is_complex_storage_v<T>)
      out = T(typename T::value_type(v), 0);
    else
      out = detail::from_accum_float<T>(v);
    std::memcpy(p, &out, sizeof out);
  });
}

}  // namespace

ApplyInput ApplyInput::read(const std::string& path, const std::string& out, bool channels,
                            bool batch, const std::function<void(const View&)>& plan,
                            std::optional<DType> out_dtype) {
  ApplyInput in;
  in.path_ = path;
  in.format_ = io::image_format(path);
  in.batch_ = batch;
  const io::ImageFormat out_format = io::image_format(out);
  const std::string name = name_of(path);

  // What the file holds, seen before its data is read: the planes, the output's format, the
  // memory; then the plan.
  const auto see = [&](DType dtype, const std::vector<std::int64_t>& shape,
                       const io::ImageLayout& layout) {
    in.dtype_ = dtype;
    in.shape_ = shape;
    in.layout_ = layout;
    const int ndim = int(shape.size());
    if (layout.channels && ndim < 2)
      throw Error(name + ": --channels needs at least 2 dimensions (the last one the channels), "
                         "got shape " + shape_text(shape));
    const int first = batch ? 1 : 0, last = ndim - (layout.channels ? 1 : 0);
    if (last - first < 1)
      throw Error(name + ": shape " + shape_text(shape) + " has no axis left to filter once " +
                  (batch ? "the first is a batch (--batch) and " : "") +
                  "the last is channels" + (in.format_ == io::ImageFormat::none ? " (--channels)" : ""));
    in.channels_ = layout.channels ? shape.back() : 1;
    in.colours_ = in.channels_ - (layout.alpha ? 1 : 0);
    in.items_ = batch ? shape[0] : 1;
    in.pixels_ = 1;
    for (int i = first; i < last; ++i) in.pixels_ *= shape[std::size_t(i)];
    in.copy_ = layout.channels && in.channels_ > 1;

    View v;
    v.planes.dtype = dtype;
    if (layout.channels) {
      v.batch = true;
      v.planes.shape = {in.items_ * in.colours_};
      for (int i = first; i < last; ++i) v.planes.shape.push_back(shape[std::size_t(i)]);
    } else {
      v.batch = batch;
      v.planes.shape = shape;
    }
    const double sample = double(dtype_size(dtype));
    double file_bytes = sample;
    for (const std::int64_t e : shape) file_bytes *= double(e);
    const double plane_bytes = file_bytes * double(in.colours_) / double(in.channels_);
    v.planes.data_bytes = std::uint64_t(plane_bytes);

    // The output: its format must hold the result, checked before anything is computed.
    const DType od = out_dtype.value_or(dtype);
    const io::ImageLayout out_layout{layout.channels,
                                     in.format_ != io::ImageFormat::none && layout.alpha};
    if (out_format != io::ImageFormat::none) {
      const std::string why = io::image_write_problem(out_format, od, shape, out_layout);
      if (!why.empty()) {
        std::string hint;
        if (in.format_ == io::ImageFormat::none && !layout.channels && ndim == 3 &&
            shape[2] <= 4 && out_format == io::ImageFormat::png)
          hint = "; if the last axis of " + name + " is colour channels, pass --channels";
        throw Error(detail::escape_controls(out) + ": cannot write " + name + "'s result as a " +
                    to_string(out_format) + ": " + why + hint);
      }
    }
    const double out_bytes = file_bytes / sample * double(dtype_size(od));
    if (in.copy_)
      v.extra.push_back({"the interleaved samples of " + name + " (channels last)", file_bytes});
    if (in.copy_ && od != dtype)
      v.extra.push_back({"the output's interleaved samples", out_bytes});
    if (out_format != io::ImageFormat::none) {
      const double encoded =
          double(io::encoded_size_bound(out_format, od, shape, out_layout));
      const double freed = in.copy_ ? plane_bytes : file_bytes;
      if (encoded > freed)
        v.extra.push_back({"the encoded " + std::string(to_string(out_format)) + " " +
                               detail::escape_controls(out) + " (held, then written)",
                           encoded - freed});
    }
    if (!layout.channels) return plan(v);
    try {
      plan(v);
    } catch (const Error& e) {
      const std::string planes = std::to_string(in.items_ * in.colours_) + " planes of " +
                                 dims_text(shape, std::size_t(first), std::size_t(last));
      const std::string what =
          in.format_ != io::ImageFormat::none
              ? name + " is a " + in.what_ + " of shape " + shape_text(shape) + ": its " +
                    std::to_string(in.colours_) + " colour channel" +
                    (in.colours_ == 1 ? " is" : "s are") + " filtered apart, as a batch of " +
                    planes + (layout.alpha ? ", and alpha is copied" : "")
              : name + " has shape " + shape_text(shape) + " and --channels: its " +
                    std::to_string(in.colours_) + " channels are filtered apart, as a batch of " +
                    planes;
      throw Error(std::string(e.what()) + " (" + what + ")");
    }
  };

  if (in.format_ == io::ImageFormat::none) {
    in.file_ = io::read_npy(path, [&](const io::NpyHeader& h) {
      see(h.dtype, h.shape, io::ImageLayout{channels, false});
    });
  } else {
    io::Image img = io::read_image(
        path,
        [&](const io::ImageHeader& h) {
          in.what_ = h.what;
          see(h.dtype, h.shape, h.layout);
        },
        in.format_);
    in.file_ = std::move(img.pixels);
  }
  if (in.copy_) {
    std::vector<std::int64_t> shape{in.items_ * in.colours_};
    const int first = batch ? 1 : 0, last = int(in.shape_.size()) - 1;
    for (int i = first; i < last; ++i) shape.push_back(in.shape_[std::size_t(i)]);
    in.planes_ = io::NpyArray(in.dtype_, shape);
    move_samples(dtype_size(in.dtype_), in.file_.data(), in.planes_.data(), in.items_,
                 in.pixels_, in.channels_, in.colours_, true);
  }
  return in;
}

std::string ApplyInput::channels_note(int rank, const Extents& extents) const {
  if (format_ != io::ImageFormat::none || layout_.channels || batch_ || rank != 3 ||
      shape_.size() != 3 || !(shape_[2] == 3 || shape_[2] == 4) || extents[2] <= 1)
    return "";
  return name_of(path_) + " has shape " + shape_text(shape_) +
         " and is filtered as a volume, across its last axis of " + std::to_string(shape_[2]) +
         "; if that axis is colour channels, pass --channels to filter each channel apart";
}

void ApplyInput::write(const std::string& out, io::NpyArray& filtered, Rounding rounding) {
  const io::ImageFormat out_format = io::image_format(out);
  const io::ImageLayout out_layout{layout_.channels,
                                   format_ != io::ImageFormat::none && layout_.alpha};
  const auto emit = [&](DType dtype, const void* data) {
    if (out_format == io::ImageFormat::none)
      io::write_npy(out, dtype, shape_, data);
    else
      io::write_image(out, dtype, shape_, data, out_layout);
  };
  if (!copy_) {
    file_ = io::NpyArray();  // the input: the output has the file's shape already
    return emit(filtered.dtype(), filtered.data());
  }
  planes_ = io::NpyArray();
  const std::size_t sample = dtype_size(filtered.dtype());
  if (filtered.dtype() == dtype_) {
    // The colour channels into the input's array, whose alpha stays as read.
    move_samples(sample, file_.data(), filtered.data(), items_, pixels_, channels_, colours_,
                 false);
    return emit(dtype_, file_.data());
  }
  io::NpyArray result(filtered.dtype(), shape_);
  move_samples(sample, result.data(), filtered.data(), items_, pixels_, channels_, colours_, false);
  const std::size_t in_sample = dtype_size(dtype_);
  auto* from = static_cast<const unsigned char*>(file_.data());
  auto* to = static_cast<unsigned char*>(result.data());
  for (std::int64_t p = 0; p < items_ * pixels_; ++p)
    for (std::int64_t k = colours_; k < channels_; ++k)
      store_value(filtered.dtype(), load_value(dtype_, from + (p * channels_ + k) * in_sample),
                  rounding, to + (p * channels_ + k) * sample);
  file_ = io::NpyArray();
  emit(result.dtype(), result.data());
}

}  // namespace halo::tool
