// halo — the command-line tool: apply a filter to an .npy array, generate test inputs, and say
// what this build and machine can do.
#include <CLI/CLI.hpp>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>

#include "bench.hpp"
#include "halo/halo.hpp"
#include "io/npy.hpp"

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
  halo apply image.npy out.npy --filter box:9 --backend cuda --strategy tiled_input
  halo analyze --filter 5 --tile 8,16,32                 # the notes' OP/B table
  halo bench --suite radii --backend cuda --explain       # what auto picks, and the fastest
  halo analyze --rank 1 --filter 7 --out-tile 250          # 1-D: input tile 256, reduction
  halo info

Filters (--filter): a .npy file of weights (float32/float64, 1-3 dims), or one of
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

std::string shape_string(const std::vector<std::int64_t>& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> shape;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1)
      throw Error("--shape '" + text + "': extents must be positive integers joined by 'x'");
    shape.push_back(v);
  }
  if (shape.empty() || shape.size() > 4)
    throw Error("--shape '" + text + "': 1 to 4 extents expected, e.g. 4096x4096");
  return shape;
}

struct ApplyArgs {
  std::string in, out, filter, op = "correlate", backend = "auto", strategy;
  int axis = 0;
  bool axis_given = false, batch = false, verbose = false, direct_sums = false;
};

int run_apply(const ApplyArgs& a) {
  const halo::io::NpyArray input = halo::io::read_npy(a.in);
  const int ndim = input.ndim();
  const int rank = a.batch ? ndim - 1 : ndim;
  if (a.batch && ndim < 2)
    throw Error(a.in + ": --batch needs at least 2 dimensions (batch + 1-D), got shape " +
                shape_string(input.shape()));
  if (rank > halo::kMaxRank)
    throw Error(a.in + ": shape " + shape_string(input.shape()) +
                " has 4 dimensions; pass --batch to treat the first as a batch of 3-D arrays");
  int axis = a.axis;
  if (a.axis_given) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      throw Error("--axis " + std::to_string(a.axis) + " is out of range for a " +
                  std::to_string(rank) + "-D array (shape " + shape_string(input.shape()) +
                  (a.batch ? ", first axis = batch" : "") + ")");
  }

  // The filter: a weights file, or a named filter built at the array's rank (1-D with --axis).
  halo::Filter filter;
  const int filter_rank = a.axis_given ? 1 : rank;
  if (is_file(a.filter) ||
      (a.filter.size() > 4 && a.filter.substr(a.filter.size() - 4) == ".npy")) {
    const halo::io::NpyArray w = halo::io::read_npy(a.filter);
    if (w.ndim() > halo::kMaxRank)
      throw Error(a.filter + ": a filter has 1 to 3 dimensions, got shape " +
                  shape_string(w.shape()));
    filter = w.dtype() == halo::DType::f32 ? halo::Filter(w.as<float>(), w.shape())
                                           : halo::Filter(w.as<double>(), w.shape());
    if (filter.rank() != filter_rank) {
      if (a.axis_given)
        throw Error(a.filter + ": --axis needs a 1-D filter, got shape " + filter.shape_string());
      throw Error(a.filter + ": a " + std::to_string(filter.rank()) + "-D filter (" +
                  filter.shape_string() + ") does not fit the " + std::to_string(rank) +
                  "-D array " + a.in + " (shape " + shape_string(input.shape()) + ")" +
                  (filter.rank() == 1 ? "; name the axis with --axis" : "") +
                  (filter.rank() == rank - 1 ? "; or treat the first axis as a batch with --batch"
                                             : ""));
    }
  } else {
    filter = halo::make_named_filter(a.filter, filter_rank);
  }
  if (a.axis_given) filter = filter.along_axis(rank, axis);

  halo::Options opt;
  opt.op = halo::parse_op(a.op);
  opt.backend = halo::parse_backend(a.backend);
  opt.strategy = a.strategy;
  opt.direct_sums = a.direct_sums;

  halo::Extents ext{1, 1, 1};
  for (int i = 0; i < rank; ++i) ext[i] = input.shape()[i + (a.batch ? 1 : 0)];
  const std::int64_t batch = a.batch ? input.shape()[0] : 1;
  halo::io::NpyArray output(input.dtype(), input.shape());
  halo::ConstArrayView iv(input.data(), input.dtype(), rank, ext, batch);
  halo::ArrayView ov;
  ov.data = output.data();
  ov.dtype = input.dtype();
  ov.rank = rank;
  ov.extents = ext;
  ov.batch = batch;

  const auto t0 = std::chrono::steady_clock::now();
  const halo::RunInfo info = halo::apply(iv, ov, filter, opt);
  const auto t1 = std::chrono::steady_clock::now();
  halo::io::write_npy(a.out, output);
  if (a.verbose) {
    halo::Problem p(rank, ext, batch, filter, input.dtype(), opt.op);
    p.require_direct_sums(opt.direct_sums);
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::printf("%s\nstrategy %s (backend %s; %s)\n%.3f ms (including any host-device copies), "
                "%.2f GB/s, %.2f GFLOP/s\nwrote %s\n",
                p.describe().c_str(), info.strategy.c_str(), halo::to_string(info.backend),
                info.note.c_str(), ms, p.bytes() / ms / 1e6, p.flops() / ms / 1e6, a.out.c_str());
    if (const halo::Strategy* s = halo::find_strategy(info.strategy)) {
      const std::string plan = s->plan(p);
      if (!plan.empty()) std::printf("plan: %s\n", plan.c_str());
    }
  }
  return 0;
}

int run_generate(const std::string& path, const std::string& shape_text, const std::string& dtype,
                 std::uint64_t seed, bool seed_given) {
  const auto shape = parse_shape(shape_text);
  const halo::DType t = halo::parse_dtype(dtype);
  halo::io::NpyArray a(t, shape);
  if (!seed_given) seed = std::random_device{}();
  // Uniform noise in [0, 1): a fresh, non-zero test input.
  std::int64_t n = a.size();
#pragma omp parallel
  {
    std::mt19937_64 g(seed + 7919 * omp_get_thread_num());
    std::uniform_real_distribution<double> d(0.0, 1.0);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      if (t == halo::DType::f32)
        a.as<float>()[i] = static_cast<float>(d(g));
      else
        a.as<double>()[i] = d(g);
    }
  }
  halo::io::write_npy(path, a);
  std::printf("wrote %s: %s %s, uniform [0,1), seed %llu\n", path.c_str(),
              shape_string(shape).c_str(), halo::to_string(t), (unsigned long long)seed);
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

std::vector<std::int64_t> parse_list(const std::string& opt, const std::string& text) {
  std::vector<std::int64_t> v;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || x < 1)
      throw Error(opt + " '" + text + "': expected positive integers separated by commas");
    v.push_back(x);
  }
  return v;
}

struct AnalyzeArgs {
  int rank = 2;
  std::int64_t k = 5;
  std::string tiles, out_tiles, dtype = "f32";
};

int run_analyze(const AnalyzeArgs& a) {
  if (a.rank < 1 || a.rank > 3) throw Error("--rank must be 1, 2 or 3, got " + std::to_string(a.rank));
  if (a.k < 1) throw Error("--filter must be a width >= 1, got " + std::to_string(a.k));
  const std::size_t eb = halo::dtype_size(halo::parse_dtype(a.dtype));
  const std::string d = std::to_string(a.rank);
  std::string fs = std::to_string(a.k);
  for (int i = 1; i < a.rank; ++i) fs += "x" + std::to_string(a.k);
  if (a.rank == 1) fs += "-tap";
  const std::string r = a.k % 2 ? "r = " + std::to_string(a.k / 2) : "even width";
  std::printf("Arithmetic intensity (OP/B), %sD, %s filter (%s), %s: %zu B per element\n",
              d.c_str(), fs.c_str(), r.c_str(), a.dtype.c_str(), eb);
  std::printf("%-12s %8s %9s %8s %12s\n", "strategy", "IN_TILE", "OUT_TILE", "OP/B",
              "loads saved");
  std::printf("%-12s %8s %9s %8s %12s\n", "basic", "-", "-",
              num(halo::model::basic_intensity(eb)).c_str(), "1");
  std::printf("%-12s %8s %9s %8s %12s\n", "constant", "-", "-",
              num(halo::model::constant_intensity(eb)).c_str(), "1");
  // Rows from input-tile widths (--tile, the notes' IN_TILE_DIM) and output-tile widths.
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (in, out)
  if (!a.tiles.empty())
    for (std::int64_t in : parse_list("--tile", a.tiles)) {
      if (in < a.k)
        throw Error("--tile " + std::to_string(in) + " is smaller than the filter width " +
                    std::to_string(a.k) + ": no output fits in the tile");
      rows.emplace_back(in, in - (a.k - 1));
    }
  if (!a.out_tiles.empty())
    for (std::int64_t out : parse_list("--out-tile", a.out_tiles))
      rows.emplace_back(out + a.k - 1, out);
  for (auto [in, out] : rows)
    std::printf("%-12s %8lld %9lld %8s %12s\n", "tiled", (long long)in, (long long)out,
                num(halo::model::tiled_intensity(a.rank, a.k, out, eb)).c_str(),
                num(halo::model::memory_reduction(a.rank, a.k, out)).c_str());
  std::printf("%-12s %8s %9s %8s\n", "tiled bound", "inf", "inf",
              num(halo::model::tiled_bound(a.rank, a.k, eb)).c_str());
  const std::string p = a.rank == 1 ? "" : "^" + d;
  std::printf("\nbasic: 2 OP per tap over 2 loads (input, filter); constant: 2 OP over 1 load\n"
              "tiled: OUT%s * %lld%s * 2 OP over IN%s loads of %zu B, IN = OUT + %lld; "
              "bound %lld%s * 2 / %zu\n"
              "loads saved: OUT%s * %lld%s / IN%s (global-memory reduction of the tile)\n",
              p.c_str(), (long long)a.k, p.c_str(), p.c_str(), eb, (long long)(a.k - 1),
              (long long)a.k, p.c_str(), eb, p.c_str(), (long long)a.k, p.c_str(), p.c_str());
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"halo: fast 1D, 2D and 3D convolution of large arrays on GPUs and CPUs"};
  app.footer(std::string(kExamples) + filter_help());
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("halo ") + halo::version());

  ApplyArgs aa;
  auto* apply = app.add_subcommand("apply", "filter an .npy array, write the same-size result");
  apply->add_option("input", aa.in, "input .npy (float32/float64, C order, 1-4 dims)")->required();
  apply->add_option("output", aa.out, "output .npy (same shape and dtype as the input)")
      ->required();
  apply->add_option("-f,--filter", aa.filter, "weights .npy file or a named filter")->required();
  apply->add_option("--op", aa.op, "correlate (the seed notes' P[i] = sum F[j] N[i-r+j]) or "
                                   "convolve (filter flipped)")
      ->capture_default_str();
  apply->add_option("--backend", aa.backend, "auto, cpu, reference or cuda")->capture_default_str();
  apply->add_option("--strategy", aa.strategy, "run exactly this strategy (see `halo info`)");
  auto* axis_opt =
      apply->add_option("--axis", aa.axis, "apply a 1-D filter along this axis (negative: from the end)");
  apply->add_flag("--batch", aa.batch, "the first axis is a batch: filter each item");
  apply->add_flag("--direct-sums", aa.direct_sums,
                  "every output a plain sum of its taps: no Winograd form (the GPU's 2-D float32 "
                  "radius 4, 5, 7 kernels are then slower; see docs/ACCURACY.md)");
  apply->add_flag("-v,--verbose", aa.verbose, "print the strategy chosen, time and throughput");

  std::string gen_path, gen_shape = "4096x4096", gen_dtype = "f32";
  std::uint64_t gen_seed = 0;
  auto* gen = app.add_subcommand("generate", "write a random test array (uniform [0,1))");
  gen->add_option("output", gen_path, "output .npy")->required();
  gen->add_option("--shape", gen_shape, "extents joined by x, e.g. 4096x4096 or 256x256x256")
      ->capture_default_str();
  gen->add_option("--dtype", gen_dtype, "f32 or f64")->capture_default_str();
  auto* seed_opt = gen->add_option("--seed", gen_seed, "random seed (default: fresh)");

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
  bench->add_option("--suite", ba.suite, "seed (16384^2, 9x9), radii, 1d, 3d or all")
      ->capture_default_str();
  bench->add_option("--strategy", ba.strategies, "comma-separated strategies (default: all but "
                                                 "reference)");
  bench->add_option("--backend", ba.backend, "all, cpu or cuda")->capture_default_str();
  bench->add_option("--size", ba.size, "override the array shape, e.g. 4096x4096");
  bench->add_option("--radii", ba.radii, "override the suite's radii, e.g. 1,2,3");
  bench->add_option("--format", ba.format, "table, csv or json")->capture_default_str();
  bench->add_option("-o,--output", ba.output, "also write the results (in --format) to this file");
  bench->add_option("--json", ba.json, "also write every figure as JSON to this file");
  bench->add_option("--warmup", ba.warmup, "untimed runs first")->capture_default_str();
  bench->add_option("--reps", ba.reps, "timed runs (the median is reported)")->capture_default_str();
  bench->add_flag("--explain", ba.explain,
                  "per problem: what auto picks and why, the fastest measured, the pick's plan");

  app.add_subcommand("info", "version, build options, CPU features, GPUs, strategies");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (apply->parsed()) {
      aa.axis_given = axis_opt->count() > 0;
      return run_apply(aa);
    }
    if (gen->parsed()) return run_generate(gen_path, gen_shape, gen_dtype, gen_seed,
                                           seed_opt->count() > 0);
    if (analyze->parsed()) return run_analyze(an);
    if (bench->parsed()) return halo::tool::run_bench(ba);
    return run_info();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "halo: error: %s\n", e.what());
    return 1;
  }
}
