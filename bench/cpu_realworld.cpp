// cpu_realworld — the realworld suite on the CPU: halo (`auto` on the CPU backend) against what
// users would call instead, OpenCV (GaussianBlur, blur, filter2D) and SciPy (merged from
// bench/cpu_realworld_scipy.py), in one run.
//
// Problems (float32, values uniform in [-1, 1]): 2-D 4096^2 Gaussians sigma = 1, 2, 4, 8, a 31x31
// box, a random dense 31x31 and a Laplacian of Gaussian sigma = 4 (33x33); 1-D 2^24 Gaussian
// sigma = 16 and a 255-wide box; 3-D 256^3 Gaussians sigma = 1, 2 and a 9^3 box (OpenCV has no
// 3-D filters). Gaussians as SciPy builds them (radius int(4 sigma + 0.5)); OpenCV's GaussianBlur
// gets the same kernel size and sigma. OpenCV has no LoG of a given sigma: its side is what
// SciPy's gaussian_laplace computes, two sepFilter2D calls (the second derivative of the
// Gaussian along one axis, the Gaussian along the other) added.
// Each side: 2 warm-up runs, then the median of --reps timed runs (steady_clock) into a reused
// output, default thread counts (all cores; SciPy runs on one). halo's output is checked against
// OpenCV's (max |halo - cv| over max |cv|).
//
//   cpu_realworld [--mode zero|reflect] [--reps 5] [--scale 1] [--threads N] [--scipy FILE]
//                 [--only NAME[,NAME...]]
//   FILE: lines "name milliseconds" as printed by bench/cpu_realworld_scipy.py.
//   --scale S divides every extent by S (per axis) for a quick run; --threads N sets both
//   libraries' thread counts (default: theirs, all cores); --only runs the named problems
//   (2d-gauss-1 ... 3d-box-9, as in the first column).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double time_ms(const std::function<void()>& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(t);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "cpu_realworld: %s\nusage: cpu_realworld [--mode zero|reflect] [--reps 5] "
               "[--scale 1] [--threads N] [--scipy FILE] [--only NAME[,NAME...]]\n",
               why);
  std::exit(2);
}

struct Problem {
  std::string name;  // also the key of the SciPy column
  int rank;
  halo::Extents ext;   // halo's order: axis 0 first
  std::string filter;  // a named filter, or "dense:K"
  enum Kind { gaussian, box, dense, log } kind;
  double sigma = 0;
  int k = 0;  // box or dense width, Gaussian window
};

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "zero", scipy_file, only;
  int reps = 5;
  std::int64_t scale = 1;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--mode")
      mode = next();
    else if (a == "--reps")
      reps = std::stoi(next());
    else if (a == "--scale")
      scale = std::stoll(next());
    else if (a == "--threads")
      threads = std::stoi(next());
    else if (a == "--scipy")
      scipy_file = next();
    else if (a == "--only")
      only = "," + next() + ",";
    else
      usage(("unknown argument " + a).c_str());
  }
  if (reps < 1 || scale < 1 || threads < 0 || (mode != "zero" && mode != "reflect"))
    usage("bad arguments");
  if (threads > 0) {
    omp_set_num_threads(threads);
    cv::setNumThreads(threads);
  }
  const bool reflect = mode == "reflect";
  const int border = reflect ? cv::BORDER_REFLECT : cv::BORDER_CONSTANT;

  std::map<std::string, double> scipy_ms;
  if (!scipy_file.empty()) {
    std::ifstream f(scipy_file);
    if (!f) usage(("cannot read " + scipy_file).c_str());
    std::string name;
    double ms;
    while (f >> name >> ms) scipy_ms[name] = ms;
  }

  const std::int64_t n2 = 4096 / scale, n1 = (std::int64_t(1) << 24) / scale, n3 = 256 / scale;
  auto gauss_k = [](double s) { return 2 * int(4.0 * s + 0.5) + 1; };
  std::vector<Problem> probs;
  for (double s : {1.0, 2.0, 4.0, 8.0})
    probs.push_back({"2d-gauss-" + std::to_string(int(s)),
                     2,
                     {n2, n2, 1},
                     "gaussian:sigma=" + std::to_string(int(s)),
                     Problem::gaussian,
                     s,
                     gauss_k(s)});
  probs.push_back({"2d-box-31", 2, {n2, n2, 1}, "box:31", Problem::box, 0, 31});
  probs.push_back({"2d-dense-31", 2, {n2, n2, 1}, "dense:31", Problem::dense, 0, 31});
  probs.push_back({"2d-log-4", 2, {n2, n2, 1}, "log:sigma=4", Problem::log, 4, gauss_k(4)});
  probs.push_back(
      {"1d-gauss-16", 1, {n1, 1, 1}, "gaussian:sigma=16", Problem::gaussian, 16, gauss_k(16)});
  probs.push_back({"1d-box-255", 1, {n1, 1, 1}, "box:255", Problem::box, 0, 255});
  for (double s : {1.0, 2.0})
    probs.push_back({"3d-gauss-" + std::to_string(int(s)),
                     3,
                     {n3, n3, n3},
                     "gaussian:sigma=" + std::to_string(int(s)),
                     Problem::gaussian,
                     s,
                     gauss_k(s)});
  probs.push_back({"3d-box-9", 3, {n3, n3, n3}, "box:9", Problem::box, 0, 9});

  const halo::BuildInfo bi = halo::build_info();
  std::printf(
      "halo %s (%s, SIMD %s) auto on the CPU backend, OpenCV %s; threads: halo %d, "
      "OpenCV %d, SciPy 1; float32, mode %s; median of %d runs after 2 warm-ups\n",
      halo::version(), bi.compiler.c_str(), bi.cpu_best_target.c_str(), CV_VERSION,
      omp_get_max_threads(), cv::getNumThreads(), mode.c_str(), reps);
  std::printf(
      "\n| problem | shape | halo ms (strategy) | halo GB/s | OpenCV ms (call) | "
      "vs OpenCV | SciPy ms | vs SciPy | max abs diff / max abs |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");

  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  bool ok = true;
  for (const Problem& pr : probs) {
    if (!only.empty() && only.find("," + pr.name + ",") == std::string::npos) continue;
    std::int64_t n = 1;
    for (int a = 0; a < pr.rank; ++a) n *= pr.ext[a];
    std::vector<float> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    for (auto& x : in) x = dist(rng);
    std::fill(out.begin(), out.end(), 0.0f);
    std::vector<float> dense_w;
    halo::Filter filter;
    if (pr.kind == Problem::dense) {
      dense_w.resize(std::size_t(pr.k * pr.k));
      for (auto& x : dense_w) x = dist(rng);
      filter = halo::Filter(dense_w.data(), {pr.k, pr.k});
    } else {
      filter = halo::make_named_filter(pr.filter, pr.rank);
    }
    halo::Options opt;
    opt.backend = halo::Backend::cpu;
    opt.edges = halo::Edges::all(reflect ? halo::Boundary::reflect : halo::Boundary::constant);
    const halo::ConstArrayView iv(in.data(), halo::DType::f32, pr.rank, pr.ext);
    halo::ArrayView ov;
    ov.data = out.data();
    ov.dtype = halo::DType::f32;
    ov.rank = pr.rank;
    ov.extents = pr.ext;
    std::string strategy;
    const auto run_halo = [&] { strategy = halo::apply(iv, ov, filter, opt).strategy; };
    // Each library in its own block of runs, with a pause between so that the other's worker
    // threads (OpenMP / TBB spin-waiting) have gone to sleep (a 2-core machine notices).
    const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
    pause();
    const double t_halo = time_ms(run_halo, 2, reps);

    std::string cv_call = "–";
    double t_cv = 0, rel = 0;
    if (pr.rank <= 2) {
      const int rows = pr.rank == 2 ? int(pr.ext[0]) : 1;
      const int cols = int(pr.rank == 2 ? pr.ext[1] : pr.ext[0]);
      cv::Mat src(rows, cols, CV_32F, in.data()), dst(rows, cols, CV_32F);
      const int kh = pr.rank == 2 ? pr.k : 1;
      std::function<void()> run_cv;
      if (pr.kind == Problem::gaussian) {
        cv_call = "GaussianBlur";
        run_cv = [&] {
          cv::GaussianBlur(src, dst, cv::Size(pr.k, kh), pr.sigma, pr.rank == 2 ? pr.sigma : 0,
                           border);
        };
      } else if (pr.kind == Problem::log) {
        // SciPy's gaussian_laplace: (d2 along x, g along y) + (g along x, d2 along y).
        cv_call = "sepFilter2D x2 + add";
        const int r = pr.k / 2;
        std::vector<float> g(std::size_t(pr.k)), d2(std::size_t(pr.k));
        double sum = 0;
        for (int i = -r; i <= r; ++i) sum += std::exp(-0.5 * (i / pr.sigma) * (i / pr.sigma));
        for (int i = -r; i <= r; ++i) {
          const double gi = std::exp(-0.5 * (i / pr.sigma) * (i / pr.sigma)) / sum;
          const double t = i / pr.sigma;
          g[std::size_t(i + r)] = float(gi);
          d2[std::size_t(i + r)] = float((t * t - 1) / (pr.sigma * pr.sigma) * gi);
        }
        // Copies: g and d2 end with this block, the call runs later.
        const cv::Mat kg = cv::Mat(1, pr.k, CV_32F, g.data()).clone(),
                      kd = cv::Mat(1, pr.k, CV_32F, d2.data()).clone();
        cv::Mat tmp(rows, cols, CV_32F);
        run_cv = [&, kg, kd, tmp]() mutable {
          cv::sepFilter2D(src, dst, -1, kd, kg, cv::Point(-1, -1), 0.0, border);
          cv::sepFilter2D(src, tmp, -1, kg, kd, cv::Point(-1, -1), 0.0, border);
          cv::add(dst, tmp, dst);
        };
      } else if (pr.kind == Problem::box) {
        cv_call = "blur";
        run_cv = [&] { cv::blur(src, dst, cv::Size(pr.k, kh), cv::Point(-1, -1), border); };
      } else {
        cv_call = "filter2D";
        cv::Mat kernel(pr.k, pr.k, CV_32F, dense_w.data());
        run_cv = [&, kernel] {
          cv::filter2D(src, dst, -1, kernel, cv::Point(-1, -1), 0.0, border);
        };
      }
      pause();
      t_cv = time_ms(run_cv, 2, reps);
      double maxdiff = 0, maxref = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double c = dst.ptr<float>()[i], h = out[std::size_t(i)];
        maxdiff = std::max(maxdiff, std::fabs(h - c));
        if (!(std::fabs(h - c) <= 1e30)) maxdiff = INFINITY;  // NaN
        maxref = std::max(maxref, std::fabs(c));
      }
      rel = maxdiff / maxref;
      if (!(rel < 1e-3)) ok = false;
    }
    std::string shape;
    for (int a = 0; a < pr.rank; ++a) shape += (a ? "x" : "") + std::to_string(pr.ext[a]);
    const double gbs = 8.0 * double(n) / (t_halo * 1e-3) / 1e9;
    char cvs[96], sps[64], rels[32];
    if (t_cv > 0)
      std::snprintf(cvs, sizeof cvs, "%.1f (%s) | %.1fx", t_cv, cv_call.c_str(), t_cv / t_halo);
    else
      std::snprintf(cvs, sizeof cvs, "– | –");
    const auto it = scipy_ms.find(pr.name);
    if (it != scipy_ms.end())
      std::snprintf(sps, sizeof sps, "%.0f | %.1fx", it->second, it->second / t_halo);
    else
      std::snprintf(sps, sizeof sps, "– | –");
    if (t_cv > 0)
      std::snprintf(rels, sizeof rels, "%.1e", rel);
    else
      std::snprintf(rels, sizeof rels, "–");
    std::printf("| %s | %s | %.1f (%s) | %.1f | %s | %s | %s |\n", pr.name.c_str(), shape.c_str(),
                t_halo, strategy.c_str(), gbs, cvs, sps, rels);
    std::fflush(stdout);
  }
  if (!ok) {
    std::printf("\nERROR: halo and OpenCV disagree beyond 1e-3 of the output's magnitude\n");
    return 1;
  }
  return 0;
}
