// `halo bench`: every selected strategy on a suite of problems; warm-up, then the median of
// `reps` runs (CUDA events on the GPU, the host's steady clock on the CPU), on fresh random data.
// Each row carries the bytes and FLOPs of the problem so GB/s, GFLOP/s and the fraction of the
// roofline floor max(bytes / copy bandwidth, flops / FMA peak) stand beside the time; both
// ceilings are measured by this run on the same device.
#include "bench.hpp"
#include "profile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/detail.hpp"  // internal, on purpose: per-backend choice, the models' ratios
#include "core/dtype.hpp"  // internal, on purpose: dispatch_dtype
#include "core/factor.hpp"  // internal, on purpose: filter analysis for work_flops
#include "core/nonfinite.hpp"  // internal, on purpose: strategy runs with the repair
#include "core/parse.hpp"  // internal, on purpose: strict parsing, --tune
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"
#include "io/npy.hpp"  // internal, on purpose: .npy inputs

namespace halo::tool {
namespace {

struct BenchProblem {
  std::string suite;
  int rank;
  Extents ext;
  std::int64_t radius;
  std::string filter;  // a named filter (make_named_filter), or empty: random weights of `radius`
  // The crossovers suite: the FastTuning field this problem measures, its x, and the two
  // strategies on either side (only those run).
  std::string tuning_key;
  int x = 0;
  std::string below, above;
};

std::vector<std::int64_t> parse_size(const std::string& text) {
  return detail::parse_integer_list(text, 'x', 1, std::numeric_limits<std::int64_t>::max(), 1, 3,
                                    "--size");
}

// The suites. Default sizes are several times the H100's 50 MB L2 on the GPU; a CPU-only run
// uses smaller arrays so a suite finishes in minutes on a few cores.
std::vector<BenchProblem> suite_problems(const std::string& suite, bool gpu, bool cpu,
                                         const std::string& size, const std::string& radii) {
  std::vector<BenchProblem> out;
  std::vector<std::int64_t> radii_override;
  if (!radii.empty()) radii_override = detail::parse_integer_list(radii, ',', 0, 1000, 1, 64, "--radii");
  auto add = [&](const std::string& name, int rank, Extents ext,
                 std::vector<std::int64_t> radii) {
    if (!size.empty()) {
      const auto s = parse_size(size);
      if (int(s.size()) == rank) {
        ext = {1, 1, 1};
        for (int i = 0; i < rank; ++i) ext[i] = s[i];
      }
    }
    if (!radii_override.empty()) radii = radii_override;
    for (auto r : radii) out.push_back({name, rank, ext, r});
  };
  const bool all = suite == "all";
  if (all || suite == "seed")
    add("seed", 2, gpu ? Extents{16384, 16384, 1} : Extents{4096, 4096, 1}, {4});
  if (all || suite == "radii")
    add("radii", 2, gpu ? Extents{16384, 16384, 1} : Extents{4096, 4096, 1},
        {1, 2, 3, 4, 5, 7, 15});
  if (all || suite == "1d")
    add("1d", 1, gpu ? Extents{std::int64_t(1) << 28, 1, 1} : Extents{std::int64_t(1) << 24, 1, 1},
        {4, 16, 64});
  if (all || suite == "3d")
    add("3d", 3, gpu ? Extents{640, 640, 640} : Extents{256, 256, 256}, {1, 2, 3});
  // The filters people run (not part of `all`): Gaussians, boxes, and a dense filter of full
  // rank for comparison, at the sizes of the other suites (3D 512^3 on the GPU).
  if (suite == "realworld") {
    const Extents e2 = gpu ? Extents{16384, 16384, 1} : Extents{4096, 4096, 1};
    const Extents e1 =
        gpu ? Extents{std::int64_t(1) << 28, 1, 1} : Extents{std::int64_t(1) << 24, 1, 1};
    const Extents e3 = gpu ? Extents{512, 512, 512} : Extents{256, 256, 256};
    for (const char* f :
         {"gaussian:sigma=1", "gaussian:sigma=2", "gaussian:sigma=4", "gaussian:sigma=8", "box:31"})
      out.push_back({suite, 2, e2, 0, f});
    out.push_back({suite, 2, e2, 15, ""});
    out.push_back({suite, 2, e2, 0, "log:sigma=4"});  // 33x33, rank 2
    for (const char* f : {"gaussian:sigma=16", "box:255"}) out.push_back({suite, 1, e1, 0, f});
    for (const char* f : {"gaussian:sigma=1", "gaussian:sigma=2", "box:9"})
      out.push_back({suite, 3, e3, 0, f});
  }
  // Each crossover of `auto` between the CUDA strategies, measured around the H100's value: the
  // two strategies on either side on the sizes of the realworld suite (FastTuning's fields);
  // where CPU strategies run, `cpu` against `cpu_fft` on 2048^2 (--size replaces the sizes).
  if (suite == "crossovers") {
    const Extents e2{16384, 16384, 1}, e1{std::int64_t(1) << 28, 1, 1}, e3{512, 512, 512};
    const auto add_x = [&](int rank, Extents e, std::int64_t radius, const std::string& f,
                           const char* key, int x, const char* below, const char* above) {
      if (!size.empty()) {
        const auto s = parse_size(size);
        if (int(s.size()) == rank) {
          e = {1, 1, 1};
          for (int i = 0; i < rank; ++i) e[i] = s[i];
        }
      }
      out.push_back({suite, rank, e, radius, f, key, x, below, above});
    };
    // Dense random filters either side of the CPU's FFT crossover (about 19x19 on 2048^2).
    if (cpu)
      for (int r : {5, 7, 9, 11, 13})
        add_x(2, {2048, 2048, 1}, r, "", "cpu_fft_cost", r, "cpu", "cpu_fft");
    if (!gpu) return out;
    // Gaussians of truncate 4 of radius 3..6 (2-D) and 1..3 (3-D): sigma = r / 4.
    for (int r : {3, 4, 5, 6})
      add_x(2, e2, 0, "gaussian:sigma=" + std::to_string(r / 4.0), "sep_radius_2d", r, "fast",
            "separable");
    for (int r : {1, 2, 3})
      add_x(3, e3, 0, "gaussian:sigma=" + std::to_string(r / 4.0), "sep_radius_3d", r, "fast",
            "separable");
    // Boxes on either side of `fast`'s compiled radii 32 and 48 (65 | 66 taps: radius 32 | 48).
    for (int k : {33, 49, 65, 66, 97, 129})
      add_x(1, e1, 0, "box:" + std::to_string(k), "box_rows_taps", k, "fast", "separable");
    // Gaussians of 273 to 513 taps: radius 4 sigma.
    for (int k : {273, 321, 385, 449, 513})
      add_x(1, e1, 0, "gaussian:sigma=" + std::to_string((k - 1) / 8.0), "long_rows_taps", k,
            "separable", "fft");
    for (int r : {5, 7, 10, 12, 15})
      add_x(2, e2, r, "", "fft_cost", r, "fast", "fft");
  }
  if (out.empty())
    throw Error("unknown suite '" + suite +
                "' (expected seed, radii, 1d, 3d, all, realworld or crossovers)");
  return out;
}

// The seed benchmark's strategies first (in the notes' order), then every other one.
std::vector<const Strategy*> selected(const BenchArgs& a) {
  std::vector<const Strategy*> v;
  if (!a.strategies.empty()) {
    std::stringstream ss(a.strategies);
    std::string name;
    while (std::getline(ss, name, ',')) {
      const Strategy* s = find_strategy(name);
      if (!s) throw Error("unknown strategy '" + name + "' in --strategy");
      v.push_back(s);
    }
    return v;
  }
  const char* order[] = {"basic", "constant", "tiled_input", "cached"};
  for (const char* n : order)
    if (const Strategy* s = find_strategy(n)) v.push_back(s);
  for (const Strategy* s : strategies())
    if (s->name() != "reference" && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  return v;
}

std::vector<double> time_cpu(const Strategy& s, const Problem& p, int warmup, int reps) {
  const std::size_t n = static_cast<std::size_t>(p.elements());
  const std::size_t eb = dtype_size(p.dtype());
  const double bytes = double(n) * double(eb);
  require_memory({{"the benchmark's input", bytes}, {"the benchmark's output", bytes}});
  std::vector<unsigned char> in(n * eb), out(n * eb);
  std::mt19937_64 g(std::random_device{}());
  std::uniform_real_distribution<double> d(-1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    dispatch_dtype(p.dtype(), [&](auto t) {
      using T = typename decltype(t)::storage;
      reinterpret_cast<T*>(in.data())[i] = T(d(g));
    });
  }
  // Planned once, as a held halo::Plan runs: each run times the strategy's run alone.
  const auto plan = detail::plan_or_throw(s, p);
  std::vector<double> ms;
  for (int r = 0; r < warmup + reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::run_strategy(*plan, in.data(), out.data(), nullptr);  // with the non-finite check
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return ms;
}

std::string problem_name(const Problem& p, const std::string& filter = "") {
  std::string s = std::to_string(p.rank()) + "D " + detail::join_extents(p.extents(), p.rank());
  s += filter.empty() ? " r=" + std::to_string(p.max_radius()) : " " + filter;
  if (p.zero_ghosts()) return s;
  // The mode, or where the axes differ, every axis's.
  std::string all = to_string(p.mode(0));
  bool same = true;
  for (int i = 1; i < p.rank(); ++i) {
    all += std::string(",") + to_string(p.mode(i));
    same = same && p.mode(i) == p.mode(0);
  }
  return s + " " + (same ? std::string(to_string(p.mode(0))) : all);
}

// The filter of a suite's problem: its named filter, or random weights in [-1, 1] of its radius.
Filter bench_filter(const BenchProblem& bp) {
  if (!bp.filter.empty()) return make_named_filter(bp.filter, bp.rank);
  std::vector<std::int64_t> fshape(bp.rank, 2 * bp.radius + 1);
  std::int64_t taps = 1;
  for (auto k : fshape) taps *= k;
  std::vector<double> w(taps);
  std::mt19937_64 g(std::random_device{}());
  std::uniform_real_distribution<double> d(-1, 1);
  for (auto& x : w) x = d(g);
  return Filter(w, fshape);
}

// 2 FLOPs per tap per output of the cheapest exact form of p's filter: the sum of its factors'
// taps for a rank-1 filter of two or more long axes, of its separable terms' taps for a sum of
// fewer taps (detail::low_rank_terms), else all of its taps.
double work_flops(const Problem& p) {
  const auto& win = detail::separable_windows(p);
  if (win && win->long_axes >= 2) return 2.0 * double(win->taps) * double(p.elements());
  // A sum of separable terms (a Laplacian of Gaussian: two), where their taps are fewer.
  if (p.rank() >= 2 && p.taps() <= detail::kMaxSvdTaps)
    if (const auto lr = detail::low_rank_terms(p)) {
      double taps = 0;
      for (const auto& t : lr->terms) taps += double(t.taps);
      if (taps < double(p.taps())) return 2.0 * taps * double(p.elements());
    }
  return p.flops();
}

// By halo's output rules (io/npy.hpp): a file is replaced atomically, a device, FIFO or '-'
// (standard output) is written in place, and a bad destination is an error naming it.
void write_file(const std::string& path, const std::string& text) {
  io::write_output(path, {text});
}

// What `auto` (under --backend) picks for p and why, the fastest strategy measured on p in this
// run (rows[first..]), whether they agree, and the pick's plan.
nlohmann::json explain_choice(const Problem& p, const std::string& name, const std::string& backend,
                              const nlohmann::json& rows, std::size_t first) {
  Options opt;
  opt.backend = backend == "cpu" ? Backend::cpu : backend == "cuda" ? Backend::cuda
                                                                     : Backend::automatic;
  nlohmann::json e;
  e["problem"] = name;
  std::string text = "explain " + name + ": auto -> ";
  std::string pick;
  try {
    const RunInfo ri = choose(p, opt);
    pick = ri.strategy;
    e["auto"] = pick;
    e["why"] = ri.note;
    text += pick + " (" + ri.note + ")";
  } catch (const Error& err) {
    e["auto"] = nullptr;
    e["why"] = err.what();
    text += std::string("none: ") + err.what();
  }
  // Each strategy's modelled time where it can run p (what `auto` compared), ms.
  nlohmann::json estimated = nlohmann::json::object();
  for (const Strategy* s : strategies()) {
    if (s->backend() == Backend::reference) continue;
    if (opt.backend != Backend::automatic && s->backend() != opt.backend) continue;
    const Prepared pp = detail::prepare_for_dispatch(*s, p);
    if (!pp) continue;
    const double ns = detail::estimate_for_dispatch(*pp.plan).ns;
    estimated[s->name()] = std::isfinite(ns) ? nlohmann::json(ns * 1e-6) : nlohmann::json();
  }
  e["estimated_ms"] = std::move(estimated);
  std::string best;
  double best_ms = 0, pick_ms = 0;
  for (std::size_t i = first; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.contains("skipped")) continue;
    const double ms = r["median_ms"].get<double>();
    if (best.empty() || ms < best_ms) best = r["strategy"].get<std::string>(), best_ms = ms;
    if (r["strategy"].get<std::string>() == pick) pick_ms = ms;
  }
  char buf[160];
  if (best.empty()) {
    text += "; nothing timed";
  } else {
    e["fastest"] = best;
    e["fastest_ms"] = best_ms;
    std::snprintf(buf, sizeof buf, "; fastest measured: %s %.3f ms", best.c_str(), best_ms);
    text += buf;
    if (pick == best) {
      text += " (auto's pick)";
    } else if (pick_ms > 0) {
      std::snprintf(buf, sizeof buf, " (auto's pick %.3f ms, %.0f%% slower)", pick_ms,
                    100.0 * (pick_ms / best_ms - 1));
      text += buf;
    } else if (!pick.empty()) {
      text += " (auto's pick not timed in this run)";
    }
    e["auto_is_fastest"] = pick == best;
  }
  if (const Strategy* s = pick.empty() ? nullptr : find_strategy(pick)) {
    const std::string plan = s->plan(p);
    if (!plan.empty()) {
      e["plan"] = plan;
      text += "\n  plan: " + plan;
    }
  }
  e["text"] = text;
  return e;
}

}  // namespace

// The FFT's cost (a percentage of its modelled time) under which the model picks as measured:
// the transforms run where cost * model < 100 (model: their modelled time over the direct
// sum's), so a point where they measured faster bounds the cost from above by 100 / model and
// one where they did not bounds it from below. The default, 100, where it agrees with every
// point; else the geometric middle of the bounds (one bound alone: 10% beyond it). Where no cost
// agrees with every point, the one that loses the least time over them (ties: nearest 100).
// (A median of the points' measured over modelled ratios had proposed 73 on an H100 where the
// model's two regimes disagree, moving a filter to the transforms that ran 14% slower there.)
std::optional<long long> fft_cost_from(const std::vector<CrossoverPoint>& v) {
  double lo = 0, hi = std::numeric_limits<double>::infinity();
  std::vector<double> bounds;
  for (const CrossoverPoint& q : v) {
    if (!(q.model > 0)) continue;
    const double b = 100.0 / q.model;
    bounds.push_back(b);
    if (q.above_ms < q.below_ms)
      hi = std::min(hi, b);
    else
      lo = std::max(lo, b);
  }
  if (bounds.empty()) return std::nullopt;
  double cost = 100;
  if (lo >= hi) {  // no cost agrees with every point
    // Candidates on either side of every bound, and the default.
    const auto lost = [&](double c) {
      double ms = 0;
      for (const CrossoverPoint& q : v)
        if (q.model > 0 && (c * q.model < 100) != (q.above_ms < q.below_ms))
          ms += std::abs(q.above_ms - q.below_ms);
      return ms;
    };
    double best = lost(100);
    for (double b : bounds)
      for (double c : {std::max(1.0, std::floor(b * 0.99)), std::ceil(b * 1.01)}) {
        const double l = lost(c);
        if (l < best ||
            (l == best && std::abs(std::log(c / 100)) < std::abs(std::log(cost / 100)))) {
          best = l;
          cost = c;
        }
      }
  } else if (!(lo <= 100 && 100 < hi)) {
    cost = lo == 0 ? hi / 1.1 : std::isinf(hi) ? lo * 1.1 : std::sqrt(lo * hi);
  }
  return std::clamp<long long>(std::llround(cost), 1, 100000);
}

std::string crossovers_from(const std::vector<CrossoverPoint>& points) {
  std::string out;
  const auto emit = [&](const char* key, long long v) {
    out += (out.empty() ? "" : ",") + std::string(key) + "=" + std::to_string(v);
  };
  const auto of = [&](const char* key) {
    std::vector<CrossoverPoint> v;
    for (const CrossoverPoint& q : points)
      if (q.tuning_key == key) v.push_back(q);
    std::sort(v.begin(), v.end(),
              [](const CrossoverPoint& a, const CrossoverPoint& b) { return a.x < b.x; });
    return v;
  };
  // The last x, going up, from which the strategy below is still no slower (x - 1 before the
  // first point where it already is slower).
  const auto last_below = [](const std::vector<CrossoverPoint>& v) {
    int top = v.front().x - 1;
    for (const CrossoverPoint& q : v) {
      if (q.below_ms > q.above_ms) break;
      top = q.x;
    }
    return top;
  };
  for (const char* key : {"sep_radius_2d", "sep_radius_3d"})
    if (const auto v = of(key); !v.empty())
      emit(key, std::clamp(last_below(v), 0, std::string(key) == "sep_radius_2d" ? 64 : 16));
  if (const auto v = of("box_rows_taps"); !v.empty()) {
    // The first x, going down from the last, from which box rows stay faster.
    int first = v.back().x + 1;
    for (auto q = v.rbegin(); q != v.rend() && q->above_ms < q->below_ms; ++q) first = q->x;
    emit("box_rows_taps", std::clamp(first, 2, 1 << 20));
  }
  if (const auto v = of("long_rows_taps"); !v.empty())
    emit("long_rows_taps", std::clamp(last_below(v), 1, 1025));
  for (const char* key : {"fft_cost", "cpu_fft_cost"})
    if (const auto c = fft_cost_from(of(key))) emit(key, *c);
  return out;
}

int run_bench(const BenchArgs& a) {
  const int warmup = static_cast<int>(detail::parse_integer(a.warmup, 0, 1000000, "--warmup"));
  const int reps = static_cast<int>(detail::parse_integer(a.reps, 1, 1000000, "--reps"));
  // The fast strategy's tuning (FastTuning): a profile's, under --tune's own keys; checked
  // before anything runs, as is where a profile is to be written.
  const std::string tune = tuning_with_profile(a.profile, a.tune);
  const FastTuning tuning = tune.empty() ? FastTuning{} : detail::parse_fast_tuning(tune, "--tune");
  if (!a.profile_out.empty()) {
    if (a.suite != "crossovers")
      throw Error("--profile-out writes what the crossovers suite measures: give --suite "
                  "crossovers (not '" + detail::printable(a.suite) + "')");
    io::check_output_path(a.profile_out);
  }
  // One mode for every axis, or one per axis of the suite's problems (all of that rank).
  std::vector<Boundary> modes;
  try {
    for (const std::string& m : detail::split_list(a.mode, ',')) modes.push_back(parse_boundary(m));
  } catch (const Error& e) {
    throw Error(std::string("--mode: ") + e.what());
  }
  if (a.format != "table" && a.format != "csv" && a.format != "json")
    throw Error("unknown --format '" + a.format + "' (expected table, csv or json)");
  if (a.backend != "all" && a.backend != "cpu" && a.backend != "cuda")
    throw Error("unknown --backend '" + a.backend + "' (expected all, cpu or cuda)");
  // Result files that cannot be written are refused before the benchmark runs.
  if (!a.output.empty()) io::check_output_path(a.output);
  if (!a.json.empty()) io::check_output_path(a.json);
  std::string why;
  const bool gpu = cuda_available(&why);
  if (a.backend == "cuda" && !gpu) throw Error("--backend cuda: no CUDA device (" + why + ")");

  std::vector<const Strategy*> strats;
  for (const Strategy* s : selected(a)) {
    const bool is_gpu = s->backend() == Backend::cuda;
    if (is_gpu && (!gpu || a.backend == "cpu")) continue;
    if (!is_gpu && a.backend == "cuda") continue;
    strats.push_back(s);
  }
  if (strats.empty())
    throw Error("no strategy to run" + (gpu ? std::string() : " (no CUDA device: " + why + ")"));
  const bool any_gpu = std::any_of(strats.begin(), strats.end(),
                                   [](const Strategy* s) { return s->backend() == Backend::cuda; });
  const bool any_cpu = std::any_of(strats.begin(), strats.end(),
                                   [](const Strategy* s) { return s->backend() != Backend::cuda; });
  const auto problems = suite_problems(a.suite, any_gpu, any_cpu, a.size, a.radii);
  for (const BenchProblem& bp : problems)
    if (modes.size() > 1 && int(modes.size()) != bp.rank)
      throw Error("--mode '" + detail::printable(a.mode) + "': " + std::to_string(modes.size()) +
                  " modes, but the suite has a problem of rank " + std::to_string(bp.rank) +
                  " (give one mode, or one per axis of a suite of one rank)");

  detail::Ceilings gpu_c, cpu_c;
  if (any_gpu) gpu_c = detail::measure_cuda_ceilings(DType::f32);
  if (any_cpu) cpu_c = detail::measure_cpu_ceilings(DType::f32);
  // The crossovers suite models with this GPU's rates (FastTuning::copy_gbs, fma_gflops: the
  // profile's rates scaled to the ceilings just measured, unless the tuning gives them), so that
  // the FFT's cost it calibrates is the residual after them; the profile it writes carries them.
  FastTuning run_tuning = tuning;
  std::string rates;
  if (a.suite == "crossovers" && any_gpu) {
    if (!run_tuning.copy_gbs) run_tuning.copy_gbs = int(std::lround(gpu_c.copy_gbs));
    if (!run_tuning.fma_gflops) run_tuning.fma_gflops = int(std::lround(gpu_c.fma_gflops));
    check_tuning(run_tuning);
    rates = "copy_gbs=" + std::to_string(*run_tuning.copy_gbs) +
            ",fma_gflops=" + std::to_string(*run_tuning.fma_gflops);
  }

  std::vector<CrossoverPoint> points;
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json explained = nlohmann::json::array();
  std::vector<std::string> explain_lines;
  for (const BenchProblem& bp : problems) {
    const std::size_t first_row = rows.size();
    Edges edges = Edges::all(modes[0]);
    for (std::size_t i = 1; i < modes.size(); ++i) edges.mode[i] = modes[i];
    Problem p(bp.rank, bp.ext, 1, bench_filter(bp), DType::f32, Op::correlate, edges);
    const std::string name = problem_name(p, bp.filter);
    // The FLOPs of the cheapest exact form: a rank-1 filter's factors, else every tap.
    const double flops = work_flops(p);
    p.set_tuning(run_tuning);
    CrossoverPoint point{bp.tuning_key, bp.x};
    for (const Strategy* s : strats) {
      if (!bp.tuning_key.empty() && s->name() != bp.below && s->name() != bp.above) continue;
      nlohmann::json row;
      row["suite"] = bp.suite;
      row["problem"] = name;
      row["strategy"] = s->name();
      row["backend"] = to_string(s->backend());
      row["bytes"] = p.bytes();
      row["flops"] = flops;
      const Status st = s->can_implement(p);
      if (!st) {
        row["skipped"] = st.reason;
        rows.push_back(row);
        continue;
      }
      const bool is_gpu = s->backend() == Backend::cuda;
      const detail::Ceilings& c = is_gpu ? gpu_c : cpu_c;
      std::vector<double> ms = is_gpu ? detail::time_cuda_strategy(*s, p, warmup, reps)
                                      : time_cpu(*s, p, warmup, reps);
      const double med = detail::median(ms);
      const Traffic t = s->model(p);
      const double floor_ms =
          std::max(p.bytes() / (c.copy_gbs * 1e6), flops / (c.fma_gflops * 1e6));
      row["device"] = c.device;
      row["median_ms"] = med;
      row["min_ms"] = *std::min_element(ms.begin(), ms.end());
      row["max_ms"] = *std::max_element(ms.begin(), ms.end());
      row["runs"] = ms.size();
      row["gbs"] = p.bytes() / (med * 1e6);
      row["gflops"] = flops / (med * 1e6);
      row["model_bytes"] = t.bytes;
      row["model_intensity"] = t.flops / t.bytes;
      row["floor_ms"] = floor_ms;
      row["roofline_fraction"] = floor_ms / med;
      row["copy_gbs"] = c.copy_gbs;
      row["fma_gflops"] = c.fma_gflops;
      rows.push_back(row);
      if (a.format == "table")
        std::fprintf(stderr, "  %-20s %-22s %10.3f ms\n", name.c_str(), s->name().c_str(), med);
      (s->name() == bp.below ? point.below_ms : point.above_ms) = med;
    }
    if (!bp.tuning_key.empty() && point.below_ms > 0 && point.above_ms > 0) {
      if (bp.tuning_key == "fft_cost") point.model = detail::cuda_fft_model_ratio(p);
      if (bp.tuning_key == "cpu_fft_cost") point.model = detail::cpu_fft_model_ratio(p);
      points.push_back(point);
    }
    if (a.explain) {
      nlohmann::json e = explain_choice(p, name, a.backend, rows, first_row);
      explain_lines.push_back(e["text"].get<std::string>());
      explained.push_back(std::move(e));
    }
  }

  nlohmann::json doc;
  doc["ceilings"] = nlohmann::json::object();
  if (any_gpu)
    doc["ceilings"]["cuda"] = {{"device", gpu_c.device}, {"copy_gbs", gpu_c.copy_gbs},
                               {"fma_gflops", gpu_c.fma_gflops}};
  if (any_cpu)
    doc["ceilings"]["cpu"] = {{"device", cpu_c.device}, {"copy_gbs", cpu_c.copy_gbs},
                              {"fma_gflops", cpu_c.fma_gflops}};
  if (!tuning.empty()) doc["tuning"] = detail::tuning_string(tuning);
  doc["warmup"] = warmup;
  doc["reps"] = reps;
  doc["rows"] = rows;
  if (a.explain) doc["explain"] = explained;
  // The crossovers suite's result: the tuning that makes `auto` choose as this device measured.
  std::string crossovers;
  if (!points.empty()) {
    crossovers = crossovers_from(points);
    if (!rates.empty()) crossovers = rates + (crossovers.empty() ? "" : "," + crossovers);
    nlohmann::json pts = nlohmann::json::array();
    for (const CrossoverPoint& q : points)
      pts.push_back({{"tuning_key", q.tuning_key}, {"x", q.x}, {"below_ms", q.below_ms},
                     {"above_ms", q.above_ms}, {"model", q.model}});
    doc["crossovers"] = {{"tune", crossovers}, {"points", pts}};
    if (!a.profile_out.empty()) {
      const detail::Ceilings& c = any_gpu ? gpu_c : cpu_c;
      const std::string machine =
          any_gpu && any_cpu ? gpu_c.device + " and " + cpu_c.device : c.device;
      write_file(a.profile_out,
                 profile_document(machine, crossovers, c.copy_gbs, c.fma_gflops, pts).dump(2) +
                     "\n");
    }
  }
  std::ostringstream os;
  if (a.format == "json") {
    os << doc.dump(2) << "\n";
  } else if (a.format == "csv") {
    os << "suite,problem,strategy,backend,median_ms,min_ms,gbs,gflops,model_intensity,floor_ms,"
          "roofline_fraction,skipped\n";
    for (const auto& r : rows) {
      // A problem under modes per axis names them with commas: quoted, as CSV wants.
      const std::string problem = r["problem"].get<std::string>();
      os << r["suite"].get<std::string>() << ','
         << (problem.find(',') == std::string::npos ? problem : '"' + problem + '"') << ','
         << r["strategy"].get<std::string>() << ',' << r["backend"].get<std::string>() << ',';
      if (r.contains("skipped")) {
        os << ",,,,,,,\"" << r["skipped"].get<std::string>() << "\"\n";
        continue;
      }
      os << r["median_ms"].get<double>() << ',' << r["min_ms"].get<double>() << ','
         << r["gbs"].get<double>() << ',' << r["gflops"].get<double>() << ','
         << r["model_intensity"].get<double>() << ',' << r["floor_ms"].get<double>() << ','
         << r["roofline_fraction"].get<double>() << ",\n";
    }
  } else {
    char line[512];
    if (any_gpu)
      os << "ceilings (" << gpu_c.device << ", measured now): copy " << std::lround(gpu_c.copy_gbs)
         << " GB/s, FMA " << std::lround(gpu_c.fma_gflops) << " GFLOP/s\n";
    if (any_cpu)
      os << "ceilings (" << cpu_c.device << ", measured now): copy " << std::lround(cpu_c.copy_gbs)
         << " GB/s, FMA " << std::lround(cpu_c.fma_gflops) << " GFLOP/s\n";
    if (!tuning.empty()) os << "fast tuned: " << detail::tuning_string(tuning) << "\n";
    std::snprintf(line, sizeof line, "%-6s %-20s %-21s %10s %10s %8s %9s %8s %9s %7s\n", "suite",
                  "problem", "strategy", "median ms", "min ms", "GB/s", "GFLOP/s", "AI model",
                  "floor ms", "of roof");
    os << line;
    for (const auto& r : rows) {
      if (r.contains("skipped")) {
        std::snprintf(line, sizeof line, "%-6s %-20s %-21s  cannot run: %s\n",
                      r["suite"].get<std::string>().c_str(), r["problem"].get<std::string>().c_str(),
                      r["strategy"].get<std::string>().c_str(),
                      r["skipped"].get<std::string>().c_str());
      } else {
        std::snprintf(line, sizeof line,
                      "%-6s %-20s %-21s %10.3f %10.3f %8.0f %9.0f %8.2f %9.3f %6.1f%%\n",
                      r["suite"].get<std::string>().c_str(),
                      r["problem"].get<std::string>().c_str(),
                      r["strategy"].get<std::string>().c_str(), r["median_ms"].get<double>(),
                      r["min_ms"].get<double>(), r["gbs"].get<double>(),
                      r["gflops"].get<double>(), r["model_intensity"].get<double>(),
                      r["floor_ms"].get<double>(), 100.0 * r["roofline_fraction"].get<double>());
      }
      os << line;
    }
    os << "GB/s counts one read of the input and one write of the output (8 B per float32 "
          "element); floor = max(bytes / copy, FLOPs / FMA peak); of roof = floor / median.\n";
    for (const auto& l : explain_lines) os << l << "\n";
    if (!crossovers.empty())
      os << "crossovers of " << (any_gpu ? gpu_c.device : "") << (any_gpu && any_cpu ? " and " : "")
         << (any_cpu ? cpu_c.device : "") << ": " << crossovers
         << "\n(`auto` chooses as measured here with --tune " << crossovers
         << "; the defaults are an H100's and the development VM's)\n";
  }
  std::cout << os.str();
  if (!a.output.empty()) write_file(a.output, os.str());
  if (!a.json.empty()) write_file(a.json, doc.dump(2) + "\n");
  return 0;
}

}  // namespace halo::tool
