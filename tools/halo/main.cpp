// halo — the command-line tool: apply a filter to an .npy array or an image (PNG, TIFF), generate
// test inputs, and say what this build and machine can do.
#include <CLI/CLI.hpp>
#include <malloc.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "array_file.hpp"
#include "bench.hpp"
#include "profile.hpp"
#include "core/convert.hpp"  // internal, on purpose: generate's half-precision values
#include "core/detail.hpp"  // internal, on purpose: the plan the dispatch makes, for -v
#include "core/dtype.hpp"  // internal, on purpose: dispatch_dtype over a file's dtype
#include "core/memory.hpp"  // internal, on purpose: OpenMP threads and their stacks
#include "core/parse.hpp"  // internal, on purpose: strict numbers, lists, --tune, printable paths
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/model.hpp"
#include "halo/strategy.hpp"
#include "io/npy.hpp"  // internal, on purpose: the .npy files the CLI reads and writes

namespace {

using halo::Error;

const char* kExamples = R"(
Examples:
  halo generate image.npy --shape 4096x4096              # random float32 test image
  halo apply image.npy blurred.npy --filter gaussian:sigma=2
  halo apply image.npy edges.npy --filter sobel-x --backend cpu
  halo apply image.npy out.npy --filter weights.npy --op convolve
  halo apply signal.npy smooth.npy --filter box:31                 # 1-D signal
  halo apply volume.npy out.npy --filter gaussian:sigma=1          # 3-D volume, 3-D Gaussian
  halo apply image.npy rows.npy --filter box:9 --axis 1            # 1-D filter along axis 1
  halo apply stack.npy out.npy --filter laplacian --batch          # 3-D file = batch of 2-D
  halo apply photo.png soft.png --filter gaussian:sigma=2 --mode nearest   # each channel apart
  halo apply stack.tif out.tif --filter gaussian:sigma=1           # multi-page TIFF = 3-D volume
  halo apply stack.tif out.tif --filter gaussian:sigma=1 --batch   # ... or pages filtered apart
  halo apply rgb.npy out.png --filter box:5 --channels             # (h, w, 3) .npy -> RGB PNG
  halo apply image.npy out.npy --filter box:9 --backend cuda --strategy tiled_input
  halo analyze --filter 5 --tile 8,16,32                 # the notes' OP/B table
  halo bench --suite radii --backend cuda --explain       # what auto picks, and the fastest
  halo analyze --rank 1 --filter 7 --out-tile 250          # 1-D: input tile 256, reduction
  halo info

Images: a path ending in .png, .tif or .tiff (any case) is an image, any other an .npy file.
PNG: 8/16-bit grey, grey+alpha, RGB, RGBA (palette and 1/2/4-bit grey read as 8-bit); TIFF:
8/16/32-bit integers, 16/32/64-bit floats, chunky or planar, strips or tiles, BigTIFF, multi-page
(pages, h, w[, c]) when the pages agree. The array is (h, w) for grey, (h, w, c) otherwise; the
filter reaches the spatial axes only: each colour channel is filtered apart, alpha is copied,
the bit depth is kept (--round nearest keeps a constant region exact). An .npy's last axis is
channels with --channels. An image written from an .npy is grey (h, w), channels with
--channels (h, w, c), pages (TIFF) for a 3-D array without.

Inputs: '-' is standard input (an .npy). Outputs: a new or regular file is written to a
temporary file beside it and renamed into place (a symlink: its target); a device or FIFO is
written directly; '-' is standard output. An existing read-only output is an error, never
replaced.

Exit status: 0 on success; 1 on any error, bad arguments included. Errors go to stderr, and
nothing is printed on stdout before one. Numbers are decimal (no 0x10, no 1e3 for integers).

Filters (--filter): a .npy file of weights (float32/float64, 1-3 dims), or one of the named
filters below. An argument with a '/' or ending in .npy is a file; a bare name is a named
filter where it names one, else a file; a bare name that is both is an error (./NAME: the file).
)";

std::string filter_help() {
  std::string s;
  for (const auto& [name, what] : halo::named_filter_help()) s += "  " + name + ": " + what + "\n";
  return s;
}

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Whether something other than a directory is at p (a file a name could mean).
bool exists_not_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// Whether `spec`'s name (before any ':') is a named filter's: box, gaussian, laplacian ...
bool names_a_filter(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  for (const auto& [usage, what] : halo::named_filter_help())
    if (usage.substr(0, usage.find(':')) == name) return true;
  return false;
}

// An input's path as messages show it: control characters escaped (one line, no terminal
// codes); "-" is standard input.
std::string input_name(const std::string& path) {
  return path == "-" ? "standard input" : halo::detail::escape_controls(path);
}

using halo::detail::size_text;  // core/parse.hpp

std::string shape_string(const std::vector<std::int64_t>& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

std::vector<std::int64_t> parse_shape(const std::string& text) {
  return halo::detail::parse_integer_list(text, 'x', 1, std::numeric_limits<std::int64_t>::max(),
                                          1, 4, "--shape");
}

struct ApplyArgs {
  std::string in, out, filter, op = "correlate", backend = "auto", strategy, axis;
  std::string mode = "constant", cval = "0", origin = "0";
  std::string tune;  // KEY=VALUE[,...]: halo::FastTuning
  std::string profile;  // a profile file (profile.hpp) whose tuning --tune's keys complete
  std::string footprint = "nonzero";
  std::string output_dtype;  // empty: the input's
  std::string round = "truncate";
  bool batch = false, verbose = false, direct_sums = false;
  bool channels = false;  // the last axis of an .npy is channels (images: found in the file)
};

// --mode, --cval, --origin: one value for every axis or one per axis (with --axis, one: the
// filter's axis). cval is a decimal number, or nan, inf, -inf.
halo::Edges parse_edges(const ApplyArgs& a, int rank, int axis) {
  const bool axis_given = !a.axis.empty();
  const int per_axis = axis_given ? 1 : rank;
  halo::Edges e;
  bool zero = false;
  const std::vector<std::string> modes = halo::detail::split_list(a.mode, ',');
  if (modes.size() != 1 && int(modes.size()) != per_axis)
    throw Error("--mode '" + halo::detail::printable(a.mode) + "': give one mode or " +
                std::to_string(per_axis) + " (one per axis" + (axis_given ? " of the filter" : "") +
                "), got " + std::to_string(modes.size()));
  for (int i = 0; i < rank; ++i) {
    bool z = false;
    const std::size_t which = modes.size() == 1 ? 0 : std::size_t(axis_given ? 0 : i);
    try {
      e.mode[i] = halo::parse_boundary(modes[which], &z);
    } catch (const halo::Error& err) {
      throw Error(std::string("--mode: ") + err.what());
    }
    zero = zero || z;
  }
  if (a.cval == "nan" || a.cval == "NaN")
    e.cval = std::numeric_limits<double>::quiet_NaN();
  else if (a.cval == "inf" || a.cval == "-inf")
    e.cval = (a.cval[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
  else
    e.cval = halo::detail::parse_real(a.cval, -std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::max(),
                                      "--cval (a decimal number, nan, inf or -inf)");
  if (zero && !(e.cval == 0))
    throw Error("--mode zero means constant with cval 0, but --cval is " + a.cval +
                "; use --mode constant");
  const auto origins = halo::detail::parse_integer_list(a.origin, ',', -(std::int64_t(1) << 40),
                                                        std::int64_t(1) << 40, 1, 3, "--origin");
  if (origins.size() != 1 && int(origins.size()) != per_axis)
    throw Error("--origin '" + a.origin + "': give one origin or " + std::to_string(per_axis) +
                " (one per axis" + (axis_given ? " of the filter" : "") + "), got " +
                std::to_string(origins.size()));
  for (int i = 0; i < rank; ++i)
    e.origin[i] = axis_given ? (i == axis ? origins[0] : 0)
                             : origins[origins.size() == 1 ? 0 : std::size_t(i)];
  return e;
}

// Everything decided about a run before its arrays are allocated. The problem as planned is not
// kept (its weights would be one more copy while the run holds its own): -v's figures are.
struct Planned {
  int rank = 0;
  halo::Extents ext{1, 1, 1};
  std::int64_t batch = 1;
  halo::Filter filter;
  halo::Options opt;
  halo::RunInfo choice;
  halo::DType out_dtype = halo::DType::f32;
  std::string describe, plan;  // for -v: the problem, and the strategy's plan of it
  double bytes = 0, flops = 0;
};

// The memory a run's filter weights take (bytes, float64), while the problem is built and while
// it runs, for a filter of extents `k` as given that the problem folds to `folded_taps`
// correlation weights (`folded`: a new array rather than the weights as given), whose rank-1
// analysis keeps a window of `window` weights. Held through the run: the filter given to
// halo::apply and the problem's copy of it; the correlation weights; the separable window the
// problem's analysis keeps. While the problem is built: one more copy of the weights as given,
// and per axis two maps of each tap's place once folded.
struct WeightBytes {
  double building = 0, running = 0;
};
WeightBytes weight_bytes(const halo::Extents& k, int rank, double folded_taps, bool folded,
                         double window) {
  double taps = 1, axis_sum = 0, axis_max = 0;
  for (int i = 0; i < rank; ++i) {
    taps *= double(k[i]);
    axis_sum += double(k[i]);
    axis_max = std::max(axis_max, double(k[i]));
  }
  const double analyses = window;
  WeightBytes b;
  b.building =
      8 * (3 * taps + axis_sum + std::max(axis_max, folded ? folded_taps : 0.0) + analyses);
  b.running = 8 * (2 * taps + folded_taps + analyses + folded_taps);
  return b;
}

// The window the rank-1 analysis (detail::separable_windows) keeps of a problem's correlation
// weights: its extents centred on the anchor, where the analysis is made (at most 2^26 weights,
// radii at most 2^20).
double separable_window(const halo::Problem& p) {
  const halo::Dims3 k = p.filter_dims3(), a = p.anchor3();
  const std::int64_t ext[3] = {k.z, k.y, k.x}, anc[3] = {a.z, a.y, a.x};
  if (double(p.taps()) > double(std::int64_t(1) << 26)) return 0;
  double w = 0;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t r = std::max(anc[i], ext[i] - 1 - anc[i]);
    if (r > (1 << 20)) return 0;
    if (ext[i] > 1) w += double(2 * r + 1);
  }
  return w;
}

// The most taps a filter of these extents keeps once folded: at most 2n + 1 per axis of n
// elements (halo::Problem).
double folded_taps_at_most(const halo::Extents& k, int rank, const halo::Extents& n) {
  double c = 1;
  for (int i = 0; i < rank; ++i) c *= double(std::min<std::int64_t>(k[i], 2 * n[i] + 1));
  return c;
}

// The filter of `a` for an array of `shape`: a weights file, or a named filter built at the
// array's rank (1-D with --axis). Errors about a weights file's contents name the file.
// `before_reading(extents, data_bytes)` sees a weights file's size from its header (the filter's
// extents at the array's rank) before its data is read, and may throw to refuse it.
halo::Filter make_filter(const ApplyArgs& a, const std::vector<std::int64_t>& shape, int rank,
                         int axis,
                         const std::function<void(const halo::Extents&, double)>& before_reading) {
  const bool axis_given = !a.axis.empty();
  const int filter_rank = axis_given ? 1 : rank;
  halo::Filter filter;
  if (a.filter == "-")
    throw Error(
        "--filter -: a filter is not read from standard input; give the weights file's "
        "path or a named filter");
  // A weights file or a named filter: an argument with a '/' or ending in .npy is a file; a bare
  // name is a named filter where its name is one (box:5, laplacian), else a file; a bare name
  // that is both a named filter and a file here is refused, naming both.
  const bool file_form = a.filter.find('/') != std::string::npos ||
                         (a.filter.size() > 4 && a.filter.substr(a.filter.size() - 4) == ".npy");
  const bool named = !file_form && names_a_filter(a.filter);
  if (named && exists_not_dir(a.filter)) {
    const std::string f = input_name(a.filter);
    throw Error("--filter '" + f + "' is ambiguous: it is a named filter and also the file ./" + f +
                " here; write ./" + f + " for the file, or rename the file (or run elsewhere) " +
                "for the named filter");
  }
  if (file_form || (!named && is_file(a.filter))) {
    const auto wrong_rank = [&](int got, const std::string& shape_text) {
      if (axis_given)
        return Error(input_name(a.filter) + ": --axis needs a 1-D filter, got shape " + shape_text);
      return Error(input_name(a.filter) + ": a " + std::to_string(got) + "-D filter (" +
                   shape_text + ") does not fit the " + std::to_string(rank) + "-D array " +
                   input_name(a.in) + " (shape " + shape_string(shape) + ")" +
                   (got == 1 ? "; name the axis with --axis" : "") +
                   (got == rank - 1 ? "; or treat the first axis as a batch with --batch" : ""));
    };
    const halo::io::NpyArray w = halo::io::read_npy(a.filter, [&](const halo::io::NpyHeader& h) {
      const int ndim = static_cast<int>(h.shape.size());
      if (ndim > halo::kMaxRank)
        throw Error(input_name(a.filter) + ": a filter has 1 to 3 dimensions, got shape " +
                    shape_string(h.shape));
      if (ndim != filter_rank) throw wrong_rank(ndim, shape_string(h.shape));
      halo::Extents k{1, 1, 1};
      for (int i = 0; i < ndim; ++i) k[i] = h.shape[i];
      if (axis_given) {
        k = {1, 1, 1};
        k[axis] = h.shape[0];
      }
      before_reading(k, double(h.data_bytes));
    });
    try {
      filter = halo::dispatch_dtype(w.dtype(), [&](auto d) {
        return halo::Filter(w.as<typename decltype(d)::storage>(), w.shape());
      });
    } catch (const halo::Error& e) {
      throw Error(input_name(a.filter) + ": " + e.what());
    }
  } else {
    filter = halo::make_named_filter(a.filter, filter_rank);
  }
  if (axis_given) return filter.along_axis(rank, axis);
  return filter;
}

// Checks the input's shape against the arguments, builds the filter and the problem, chooses the
// strategy, and refuses a run whose memory (input, output, filter, workspace) cannot fit: all
// before the input's data is read, and a weights file's size before its data is read.
// `extra`: host memory the run needs beyond its input and output arrays (an image's planes).
Planned plan_apply(const ApplyArgs& a, const halo::io::NpyHeader& h, bool verbose,
                   const std::vector<halo::MemoryUse>& extra = {}) {
  Planned r;
  const int ndim = static_cast<int>(h.shape.size());
  r.rank = a.batch ? ndim - 1 : ndim;
  if (a.batch && ndim < 2)
    throw Error(input_name(a.in) +
                ": --batch needs at least 2 dimensions (batch + 1-D), got shape " +
                shape_string(h.shape));
  if (r.rank > halo::kMaxRank)
    throw Error(input_name(a.in) + ": shape " + shape_string(h.shape) +
                " has 4 dimensions; pass --batch to treat the first as a batch of 3-D arrays");
  int axis = 0;
  if (!a.axis.empty()) {
    const std::int64_t v = halo::detail::parse_integer(a.axis, -1000, 1000, "--axis");
    if (v < -r.rank || v >= r.rank)
      throw Error("--axis " + a.axis + " is out of range for a " + std::to_string(r.rank) +
                  "-D array (shape " + shape_string(h.shape) +
                  (a.batch ? ", first axis = batch" : "") + "): expected " +
                  std::to_string(-r.rank) + ".." + std::to_string(r.rank - 1));
    axis = static_cast<int>(v < 0 ? v + r.rank : v);
  }
  r.opt.op = halo::parse_op(a.op);
  r.opt.backend = halo::parse_backend(a.backend);
  r.opt.strategy = a.strategy;
  r.opt.direct_sums = a.direct_sums;
  r.opt.footprint = halo::parse_footprint(a.footprint);
  r.opt.rounding = halo::parse_rounding(a.round);
  try {
    r.out_dtype = a.output_dtype.empty() ? h.dtype : halo::parse_dtype(a.output_dtype);
  } catch (const halo::Error& e) {
    throw Error(std::string("--output-dtype: ") + e.what());
  }
  if (const std::string tune = halo::tool::tuning_with_profile(a.profile, a.tune); !tune.empty())
    r.opt.tuning = halo::detail::parse_fast_tuning(tune, "--tune");
  r.opt.edges = parse_edges(a, r.rank, axis);
  for (int i = 0; i < r.rank; ++i) r.ext[i] = h.shape[i + (a.batch ? 1 : 0)];
  r.batch = a.batch ? h.shape[0] : 1;

  // The arrays, and the filter's copies: from a weights file's header before its data is read,
  // then (a named filter: once built) before the problem copies it. Once the filter is held, its
  // own float64 weights are in use already (and out of what is available): the copies beyond it.
  const double array = double(h.data_bytes);
  // The output at its own dtype's size (--output-dtype may make it larger than the input).
  const double out_array =
      array / double(halo::dtype_size(h.dtype)) * double(halo::dtype_size(r.out_dtype));
  const std::string beyond = " (float64 copies besides the filter's own, held: ";
  const auto require = [&](const halo::Extents& k, double file_bytes, bool held) {
    double taps = 1, window = 0;
    for (int i = 0; i < r.rank; ++i) taps *= double(k[i]);
    const double folded = folded_taps_at_most(k, r.rank, r.ext);
    for (int i = 0; i < r.rank; ++i)
      if (k[i] > 1) window += double(std::min<std::int64_t>(k[i], 2 * r.ext[i] + 1));
    const double copies = weight_bytes(k, r.rank, folded, folded < taps, window).building;
    std::vector<halo::MemoryUse> uses{
        {"the input array", array},
        {"the output array", out_array},
        held ? halo::MemoryUse{"the filter weights" + beyond + size_text(8 * taps) + ")",
                               copies - 8 * taps}
             : halo::MemoryUse{"the filter weights (float64 copies)",
                               std::max(file_bytes + 8 * taps, copies)}};
    uses.insert(uses.end(), extra.begin(), extra.end());
    halo::require_memory(uses);
  };
  r.filter = make_filter(a, h.shape, r.rank, axis,
                         [&](const halo::Extents& k, double bytes) { require(k, bytes, false); });
  require(r.filter.extents(), 0, true);

  // The whole run: the arrays, the strategy's workspace and the weights' copies while it runs,
  // or more while the problem is built (before the workspace); checked once this plan's problem
  // (a copy of the weights) is gone.
  std::vector<halo::MemoryUse> needs;
  {
    halo::Problem p(r.rank, r.ext, r.batch, r.filter, h.dtype, r.opt.op, r.opt.edges);
    try {
      p.set_output(r.out_dtype, r.opt.rounding);
    } catch (const halo::Error& e) {
      throw Error(input_name(a.in) + ": " + e.what());
    }
    p.require_direct_sums(r.opt.direct_sums);
    p.set_footprint(r.opt.footprint);
    p.set_tuning(r.opt.tuning);
    r.choice = halo::choose(p, r.opt);
    // The chosen strategy's plan, for its workspace and (-v) its description.
    const halo::Prepared chosen =
        halo::detail::prepare_for_dispatch(*halo::find_strategy(r.choice.strategy), p);
    if (!chosen) throw halo::Error(chosen.why_not);  // choose() has asked: never
    needs = halo::memory_needed(*chosen.plan, halo::MemorySpace::host, true);
    double workspace = 0;
    for (std::size_t i = 2; i < needs.size(); ++i) workspace += std::max(0.0, needs[i].bytes);
    const WeightBytes w = weight_bytes(r.filter.extents(), r.rank, double(p.taps()),
                                       p.filter_folded(), separable_window(p));
    const double held = 8.0 * double(r.filter.taps());
    needs.push_back({"the filter weights" + beyond + size_text(held) + ")", w.running - held});
    if (w.building > w.running + workspace)
      needs.push_back({"the filter weights' copies while the problem is built",
                       w.building - w.running - workspace});
    r.describe = p.describe();
    r.bytes = p.bytes();
    r.flops = p.flops();
    if (verbose) r.plan = chosen.plan->describe();
  }
  needs.insert(needs.end(), extra.begin(), extra.end());
  halo::require_memory(needs);
  return r;
}

// On a terminal, a line on stderr every second once a run has taken 2 s: elapsed time, and the
// fraction done where the strategy reports it (the CPU ones do). Quiet elsewhere and for short
// runs; the line is cleared when the run ends.
class ProgressLine {
 public:
  explicit ProgressLine(std::string what) : what_(std::move(what)) {
    if (!::isatty(2)) return;
    try {
      thread_ = std::thread([this] { loop(); });
    } catch (const std::system_error&) {
      // No thread (no room for its stack, say): the run goes on without the line.
    }
  }
  ~ProgressLine() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (printed_) std::fprintf(stderr, "\r\033[K");
  }
  // The callback for halo::Options::progress.
  std::function<void(double)> callback() {
    return [this](double f) { fraction_.store(f, std::memory_order_relaxed); };
  }

 private:
  void loop() {
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(m_);
    while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s < 2) continue;
      const double f = fraction_.load(std::memory_order_relaxed);
      if (f > 0)
        std::fprintf(stderr, "\rhalo: %s: %.0f%% done, %.0f s elapsed, about %.0f s left\033[K",
                     what_.c_str(), 100 * f, s, s * (1 - f) / f);
      else
        std::fprintf(stderr, "\rhalo: %s: %.0f s elapsed\033[K", what_.c_str(), s);
      std::fflush(stderr);
      printed_ = true;
    }
  }
  std::string what_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, printed_ = false;
  std::atomic<double> fraction_{0};
};

int run_apply(const ApplyArgs& a) {
  // A destination that cannot be written is refused before any work.
  halo::io::check_output_path(a.out);
  Planned r;
  // An .npy or an image (array_file.hpp): the core filters its planes (an image's channels
  // apart, as a batch), planned before the data is read; the output's format is checked for the
  // output's dtype first.
  std::optional<halo::DType> out_dtype;
  try {
    if (!a.output_dtype.empty()) out_dtype = halo::parse_dtype(a.output_dtype);
  } catch (const halo::Error& e) {
    throw Error(std::string("--output-dtype: ") + e.what());
  }
  halo::tool::ApplyInput file = halo::tool::ApplyInput::read(
      a.in, a.out, a.channels, a.batch,
      [&](const halo::tool::ApplyInput::View& v) {
        ApplyArgs planes = a;
        planes.batch = v.batch;
        r = plan_apply(planes, v.planes, a.verbose, v.extra);
      },
      out_dtype);
  if (const std::string note = file.channels_note(r.rank, r.filter.extents()); !note.empty())
    std::fprintf(stderr, "halo: note: %s\n", note.c_str());
  const halo::io::NpyArray& input = file.planes();
  halo::io::NpyArray output(r.out_dtype, input.shape());
  halo::ConstArrayView iv(input.data(), input.dtype(), r.rank, r.ext, r.batch);
  halo::ArrayView ov;
  ov.data = output.data();
  ov.dtype = r.out_dtype;
  ov.rank = r.rank;
  ov.extents = r.ext;
  ov.batch = r.batch;

  // Under auto, apply() chooses as the plan did (the same problem and options).
  halo::Options opt = r.opt;
  const auto t0 = std::chrono::steady_clock::now();
  halo::RunInfo info;
  {
    ProgressLine line("running " + r.choice.strategy);
    opt.progress = line.callback();
    info = halo::apply(iv, ov, r.filter, opt);
  }
  const auto t1 = std::chrono::steady_clock::now();
  file.write(a.out, output, r.opt.rounding);
  if (a.verbose) {
    // With the array on standard output, the report goes to standard error.
    std::FILE* report = a.out == "-" ? stderr : stdout;
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::fprintf(report,
                 "%s\nstrategy %s (backend %s; %s)\n%.3f ms (including any host-device copies), "
                 "%.2f GB/s, %.2f GFLOP/s\nwrote %s\n",
                 r.describe.c_str(), info.strategy.c_str(), halo::to_string(info.backend),
                 info.note.c_str(), ms, r.bytes / ms / 1e6, r.flops / ms / 1e6,
                 halo::detail::escape_controls(a.out).c_str());
    if (!r.plan.empty()) std::fprintf(report, "plan: %s\n", r.plan.c_str());
  }
  return 0;
}

int run_generate(const std::string& path, const std::string& shape_text, const std::string& dtype,
                 const std::string& seed_text) {
  const auto shape = parse_shape(shape_text);
  const halo::DType t = halo::parse_dtype(dtype);
  std::uint64_t seed = seed_text.empty()
                           ? std::uint64_t(std::random_device{}())
                           : std::uint64_t(halo::detail::parse_integer(
                                 seed_text, 0, std::numeric_limits<std::int64_t>::max(), "--seed"));
  halo::io::check_output_path(path);
  double bytes = double(halo::dtype_size(t));
  for (auto e : shape) bytes *= double(e);
  halo::require_memory({{"the " + shape_string(shape) + " " + halo::to_string(t) + " array", bytes}});
  halo::io::NpyArray a(t, shape);
  // Uniform noise: in [0, 1) for floating and complex types (each part), over the whole range
  // of an integer type (its limits included): a fresh, non-zero test input. Blocks of 2^16
  // elements, each from its own generator seeded by the seed and the block's index, fill on
  // every core and give the same array whatever the number of threads.
  const std::int64_t n = a.size(), block = std::int64_t(1) << 16;
  halo::dispatch_dtype<halo::AllDTypes>(t, [&](auto dt) {
    using T = typename decltype(dt)::storage;
    T* out = a.as<T>();
#pragma omp parallel for schedule(static)
    for (std::int64_t b = 0; b < (n + block - 1) / block; ++b) {
      std::mt19937_64 g(seed + 7919 * std::uint64_t(b));
      std::uniform_real_distribution<double> d(0.0, 1.0);
      for (std::int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) {
        if constexpr (std::is_integral_v<T>) {
          std::uniform_int_distribution<std::int64_t> di(std::numeric_limits<T>::min(),
                                                         std::numeric_limits<T>::max());
          out[i] = static_cast<T>(di(g));
        } else if constexpr (std::is_same_v<T, halo::float16>) {
          out[i] = halo::to_float16(float(d(g)));
        } else if constexpr (std::is_same_v<T, halo::bfloat16>) {
          out[i] = halo::to_bfloat16(float(d(g)));
        } else if constexpr (std::is_floating_point_v<T>) {
          out[i] = static_cast<T>(d(g));
        } else {
          using R = typename T::value_type;
          const R re = R(d(g));
          out[i] = T(re, R(d(g)));
        }
      }
    }
  });
  halo::io::write_npy(path, a);
  // With the array on standard output, the report goes to standard error.
  std::fprintf(path == "-" ? stderr : stdout, "wrote %s: %s %s, uniform %s, seed %llu\n",
               halo::detail::escape_controls(path).c_str(), shape_string(shape).c_str(),
               halo::to_string(t),
               halo::is_integer_dtype(t) ? "over the type's range" : "[0,1)",
               (unsigned long long)seed);
  return 0;
}

// Up to two decimals, trailing zeros dropped: 12.5, 3.13, 0.25 (as the notes print them).
std::string num(double v) {
  char buf[64];
  // Round half up, as the notes do (3.125 -> 3.13), not printf's round-half-even.
  std::snprintf(buf, sizeof buf, "%.2f", std::floor(v * 100.0 + 0.5) / 100.0);
  std::string s(buf);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

struct AnalyzeArgs {
  std::string rank = "2", k = "5", tiles, out_tiles, dtype = "f32";
};

// Every argument is checked and every row computed before anything is printed.
int run_analyze(const AnalyzeArgs& args) {
  const int rank = static_cast<int>(halo::detail::parse_integer(args.rank, 1, 3, "--rank"));
  const std::int64_t k = halo::detail::parse_integer(args.k, 1, 1000000, "--filter (the width)");
  const std::size_t eb = halo::dtype_size(halo::parse_dtype(args.dtype));
  // Rows from input-tile widths (--tile, the notes' IN_TILE_DIM) and output-tile widths.
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (in, out)
  const std::int64_t kMaxTile = 1 << 20;
  if (!args.tiles.empty())
    for (std::int64_t in :
         halo::detail::parse_integer_list(args.tiles, ',', 1, kMaxTile, 1, 64, "--tile")) {
      if (in < k)
        throw Error("--tile " + std::to_string(in) + " is smaller than the filter width " +
                    std::to_string(k) + ": no output fits in the tile");
      rows.emplace_back(in, in - (k - 1));
    }
  if (!args.out_tiles.empty())
    for (std::int64_t out :
         halo::detail::parse_integer_list(args.out_tiles, ',', 1, kMaxTile, 1, 64, "--out-tile"))
      rows.emplace_back(out + k - 1, out);

  std::string text;
  char line[256];
  const auto add = [&](const char* fmt, auto... v) {
    std::snprintf(line, sizeof line, fmt, v...);
    text += line;
  };
  const std::string d = std::to_string(rank);
  std::string fs = std::to_string(k);
  for (int i = 1; i < rank; ++i) fs += "x" + std::to_string(k);
  if (rank == 1) fs += "-tap";
  const std::string r = k % 2 ? "r = " + std::to_string(k / 2) : "even width";
  add("Arithmetic intensity (OP/B), %sD, %s filter (%s), %s: %zu B per element\n", d.c_str(),
      fs.c_str(), r.c_str(), args.dtype.c_str(), eb);
  add("%-12s %8s %9s %8s %12s\n", "strategy", "IN_TILE", "OUT_TILE", "OP/B", "loads saved");
  add("%-12s %8s %9s %8s %12s\n", "basic", "-", "-",
      num(halo::model::basic_intensity(eb)).c_str(), "1");
  add("%-12s %8s %9s %8s %12s\n", "constant", "-", "-",
      num(halo::model::constant_intensity(eb)).c_str(), "1");
  for (auto [in, out] : rows)
    add("%-12s %8lld %9lld %8s %12s\n", "tiled", (long long)in, (long long)out,
        num(halo::model::tiled_intensity(rank, k, out, eb)).c_str(),
        num(halo::model::memory_reduction(rank, k, out)).c_str());
  add("%-12s %8s %9s %8s\n", "tiled bound", "inf", "inf",
      num(halo::model::tiled_bound(rank, k, eb)).c_str());
  const std::string p = rank == 1 ? "" : "^" + d;
  add("\nbasic: 2 OP per tap over 2 loads (input, filter); constant: 2 OP over 1 load\n"
      "tiled: OUT%s * %lld%s * 2 OP over IN%s loads of %zu B, IN = OUT + %lld; "
      "bound %lld%s * 2 / %zu\n",
      p.c_str(), (long long)k, p.c_str(), p.c_str(), eb, (long long)(k - 1), (long long)k,
      p.c_str(), eb);
  add("loads saved: OUT%s * %lld%s / IN%s (global-memory reduction of the tile)\n", p.c_str(),
      (long long)k, p.c_str(), p.c_str());
  std::fputs(text.c_str(), stdout);
  return 0;
}

int run_info() {
  const halo::BuildInfo b = halo::build_info();
  std::printf("halo %s\n", halo::version());
  std::printf("build: %s, %s, OpenMP %s (%d threads)\n", b.build_type.c_str(),
              b.compiler.c_str(), b.openmp ? "on" : "off", omp_get_max_threads());
  std::printf("CPU SIMD: compiled %s; using %s\n", b.simd_targets.c_str(),
              b.cpu_best_target.c_str());
  std::printf("CUDA: %s\n", b.cuda_compiled ? ("compiled for sm " + b.cuda_archs).c_str()
                                            : "not compiled in");
  std::string why;
  const auto devs = halo::cuda_devices(&why);
  if (devs.empty()) {
    std::printf("GPUs: none (%s); backend auto uses the CPU\n", why.c_str());
  } else {
    for (const auto& d : devs)
      std::printf("GPU %d: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, smem/block %zu KiB\n",
                  d.index, d.name.c_str(), d.sm_major, d.sm_minor, d.multiprocessors,
                  d.global_memory / 1073741824.0, d.l2_bytes / 1048576.0,
                  d.shared_per_block_optin / 1024);
  }
  std::printf("strategies:\n");
  for (const halo::Strategy* s : halo::strategies())
    std::printf("  %-22s %-9s %s\n", s->name().c_str(), halo::to_string(s->backend()),
                s->description().c_str());
  return 0;
}

// Under an address-space limit (ulimit -v), what the memory estimates count must be what the
// process maps: each thread's own malloc arena would reserve 64 MiB (128 MiB while it is made),
// so every thread takes the one arena; blocks from 128 KiB are mapped and unmapped as they come
// and go (the allocator's moving threshold would otherwise serve them from the heap, which the
// threads' short-lived buffers leave with gaps that only grow it); and the OpenMP threads start
// now, while the space is free (or the limit is refused, with the figures).
void prepare_for_address_limit() {
  // The stacks libgomp will give its threads, which the memory estimates count (the library
  // reads no environment): the first of the two variables that is set and well formed.
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"})
    if (const char* v = std::getenv(name); v && *v && halo::detail::set_openmp_stack_size(v))
      break;
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return;
  ::mallopt(M_ARENA_MAX, 1);
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  halo::detail::start_threads_within_address_limit();
}

// The command line's work; main() adds the one failure nothing else can catch.
int cli_main(int argc, char** argv) {
  CLI::App app{"halo: fast 1D, 2D and 3D convolution of large arrays on GPUs and CPUs"};
  app.footer(std::string(kExamples) + filter_help());
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("halo ") + halo::version());

  ApplyArgs aa;
  auto* apply = app.add_subcommand(
      "apply", "filter an .npy array or an image (PNG, TIFF), write the same-size result");
  apply->add_option("input", aa.in,
                    "input .npy (uint8, uint16, int16, int32, float16, bfloat16, float32, "
                    "float64, complex64, complex128; C order, 1-4 dims), or a .png, .tif, .tiff "
                    "image")
      ->required();
  apply->add_option("output", aa.out,
                    "output .npy or image (.png, .tif, .tiff): the input's shape; its dtype "
                    "unless --output-dtype")
      ->required();
  apply->add_option("--output-dtype", aa.output_dtype,
                    "the output's dtype (SciPy's output=): u8, u16, i16, i32, f16, bf16, f32, "
                    "f64, c64, c128 or NumPy's names; default the input's");
  apply->add_option("--round", aa.round,
                    "how sums become integer outputs: truncate (SciPy's: toward zero, "
                    "out-of-range values wrapped as its casts do, bit for bit) or nearest "
                    "(OpenCV's and NPP's: to nearest, saturated)")
      ->check(CLI::IsMember({"truncate", "nearest"}))
      ->capture_default_str();
  apply->add_option("-f,--filter", aa.filter, "weights .npy file or a named filter")->required();
  apply->add_option("--op", aa.op, "correlate (the seed notes' P[i] = sum F[j] N[i-r+j]) or "
                                   "convolve (filter flipped)")
      ->capture_default_str();
  apply->add_option("--backend", aa.backend, "auto, cpu, reference or cuda")->capture_default_str();
  apply->add_option("--strategy", aa.strategy, "run exactly this strategy (see `halo info`)");
  apply->add_option("--axis", aa.axis,
                    "apply a 1-D filter along this axis (negative: from the end)");
  apply->add_option("--mode", aa.mode,
                    "boundary mode, one or one per axis: constant, nearest, reflect, mirror, "
                    "wrap (SciPy's; also grid-constant, grid-mirror, grid-wrap, and zero, "
                    "replicate, reflect101, symmetric, circular, periodic)")
      ->capture_default_str();
  apply->add_option("--cval", aa.cval, "the value outside the array in constant mode (nan, inf "
                                       "allowed)")
      ->capture_default_str();
  apply->add_option("--origin", aa.origin,
                    "SciPy's origin, one or one per axis: shifts the filter; -(k/2)..(k-1)/2")
      ->capture_default_str();
  apply->add_flag("--batch", aa.batch, "the first axis is a batch: filter each item");
  apply->add_flag("--channels", aa.channels,
                  "the last axis of an .npy is channels: filter each apart, never across them "
                  "(an image's channels are found in the file)");
  apply->add_flag("--direct-sums", aa.direct_sums,
                  "every output a plain sum of its taps: no Winograd form (the GPU's 2-D float32 "
                  "radius 4, 5, 7 kernels are then slower), no FFT (cpu_fft), no running sums, "
                  "no 1-D passes over two or more axes, no sums of separable terms other than "
                  "lines along one axis each (cpu_lowrank); see docs/ACCURACY.md");
  apply->add_option("--footprint", aa.footprint,
                    "which weights meet NaN and infinities: nonzero (scipy.ndimage.correlate's: "
                    "weights with |w| <= 2.2e-16 are not taps) or every (SciPy's 1-D filters': "
                    "0 * inf is NaN); see docs/ACCURACY.md")
      ->check(CLI::IsMember({"nonzero", "every"}))
      ->capture_default_str();
  apply->add_option("--tune", aa.tune,
                    "override the fast strategy's kernel choices and auto's crossovers, "
                    "KEY=VALUE[,...] (e.g. winograd=0,slots=2, or what `halo bench --suite "
                    "crossovers` printed for this GPU; keys: the fields of halo::FastTuning)");
  apply->add_option("--profile", aa.profile,
                    "a machine profile (what `halo bench --suite crossovers --profile-out FILE` "
                    "measured): `auto` chooses by its crossovers; --tune's keys replace its own");
  apply->add_flag("-v,--verbose", aa.verbose, "print the strategy chosen, time and throughput");

  std::string gen_path, gen_shape = "4096x4096", gen_dtype = "f32", gen_seed;
  auto* gen = app.add_subcommand("generate", "write a random test array (uniform [0,1); integers over their range)");
  gen->add_option("output", gen_path, "output .npy")->required();
  gen->add_option("--shape", gen_shape, "extents joined by x, e.g. 4096x4096 or 256x256x256")
      ->capture_default_str();
  gen->add_option("--dtype", gen_dtype, "u8, u16, i16, i32, f16, bf16, f32, f64, c64 or c128")->capture_default_str();
  gen->add_option("--seed", gen_seed, "random seed, a decimal integer (default: fresh)");

  AnalyzeArgs an;
  auto* analyze = app.add_subcommand(
      "analyze", "the notes' arithmetic-intensity model: OP/B of each strategy for a filter and tiles");
  analyze->add_option("--filter", an.k, "filter width k on every axis (2r+1)")->capture_default_str();
  analyze->add_option("--tile", an.tiles, "input-tile widths (IN_TILE_DIM), e.g. 8,16,32");
  analyze->add_option("--out-tile", an.out_tiles, "output-tile widths (OUT_TILE_DIM), e.g. 250");
  analyze->add_option("--rank", an.rank, "1, 2 or 3")->capture_default_str();
  analyze->add_option("--dtype", an.dtype, "f32 or f64")->capture_default_str();

  halo::tool::BenchArgs ba;
  auto* bench = app.add_subcommand(
      "bench", "time strategies on a suite of problems against the measured roofline");
  bench
      ->add_option(
          "--suite", ba.suite,
          "seed (2-D, 9x9), radii (2-D, r = 1-5, 7, 15), 1d (r = 4, 16, 64), "
          "3d (r = 1-3) or all; realworld (not in all): Gaussians of sigma 1-8, box 31, "
          "a dense 31x31 and a LoG of sigma 4 in 2-D, Gaussian sigma 16 and box 255 in 1-D, "
          "Gaussians of sigma 1, 2 and box 9 in 3-D (512^3); crossovers: the problems on "
          "either side of each of auto's crossovers (GPU: between fast, separable and fft; "
          "CPU: cpu and cpu_fft, dense filters on 2048^2), and the --tune that makes auto "
          "choose as measured on this machine. Sizes: runs with a GPU "
          "strategy 16384^2 (seed, radii), 2^28 (1d), 640^3 (3d); CPU-only runs 4096^2, "
          "2^24, 256^3")
      ->capture_default_str();
  bench->add_option("--strategy", ba.strategies, "comma-separated strategies (default: all but "
                                                 "reference)");
  bench->add_option("--backend", ba.backend, "all, cpu or cuda")->capture_default_str();
  bench->add_option("--size", ba.size, "override the suites' array shape of this rank, e.g. "
                                       "4096x4096");
  bench->add_option("--radii", ba.radii, "override the suite's radii, e.g. 1,2,3");
  bench
      ->add_option("--mode", ba.mode,
                   "boundary mode of every problem (cval 0), as for apply: one, or one per axis "
                   "for a suite of one rank")
      ->capture_default_str();
  bench->add_option("--format", ba.format, "table, csv or json")->capture_default_str();
  bench->add_option("-o,--output", ba.output, "also write the results (in --format) to this file");
  bench->add_option("--json", ba.json, "also write every figure as JSON to this file");
  bench->add_option("--warmup", ba.warmup, "untimed runs first")->capture_default_str();
  bench->add_option("--reps", ba.reps, "timed runs (the median is reported)")->capture_default_str();
  bench->add_option("--tune", ba.tune,
                    "override the fast strategy's kernel choices and auto's crossovers, "
                    "KEY=VALUE[,...] (e.g. feed=tma,slots=6 or what --suite crossovers "
                    "printed; keys: the fields of halo::FastTuning)");
  bench->add_option("--profile", ba.profile,
                    "a machine profile file, as for apply (--tune's keys replace its own)");
  bench->add_option("--profile-out", ba.profile_out,
                    "with --suite crossovers: write what it measured on this machine as a "
                    "profile file, for --profile (apply, bench) and halo.load_profile (Python)");
  bench->add_flag("--explain", ba.explain,
                  "per problem: what auto picks and why, the fastest measured, the pick's plan");

  app.add_subcommand("info", "version, build options, CPU features, GPUs, strategies");

  // The exit-code contract (README, --help): 0 on success, 1 on any error, usage errors
  // included; errors go to stderr and nothing reaches stdout before one.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "halo: error: unknown command '%s' (expected %s)\n",
                   halo::detail::printable(argv[1]).c_str(), names.c_str());
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "halo: error: %s\nRun `halo --help` or `halo COMMAND --help` for usage.\n",
                 halo::detail::escape_controls(e.what()).c_str());
    return 1;
  }
  try {
    if (apply->parsed() || gen->parsed() || bench->parsed()) prepare_for_address_limit();
    if (apply->parsed()) return run_apply(aa);
    if (gen->parsed()) return run_generate(gen_path, gen_shape, gen_dtype, gen_seed);
    if (analyze->parsed()) return run_analyze(an);
    if (bench->parsed()) return halo::tool::run_bench(ba);
    return run_info();
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "halo: error: out of host memory (an allocation failed)\n");
    return 1;
  } catch (const std::exception& e) {
    // One line whatever the message holds (paths with newlines or terminal codes: escaped).
    std::fprintf(stderr, "halo: error: %s\n", halo::detail::escape_controls(e.what()).c_str());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // An allocation that fails outside the commands' own handling (building the option parser,
  // parsing) is halo's message and exit status 1 as well, not a termination.
  try {
    return cli_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("halo: error: out of host memory (an allocation failed)\n", stderr);
    return 1;
  }
}
