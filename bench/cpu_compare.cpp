// cpu_compare — halo's `cpu` strategy against OpenCV's cv::filter2D on one float32 image.
//
// For each radius r the filter is a (2r+1)x(2r+1) matrix of random weights (general, not
// separable: both libraries take their general 2-D path), zero ghost cells on both sides
// (BORDER_CONSTANT 0), default thread counts (all cores). Each side: 2 warm-up runs, then the
// median of --reps timed runs (std::chrono::steady_clock) into a reused output buffer (both
// outputs are cv::Mat, 64-byte aligned). halo's output is checked against OpenCV's (max |halo - cv| over max |cv|).
// Optionally merges a SciPy column (bench/run-cpu-compare).
//
//   cpu_compare [--size N] [--radii 1,2,4,7] [--reps 9] [--scipy FILE]
//   FILE: lines "radius milliseconds" as printed by bench/cpu_compare_scipy.py.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include "halo/halo.hpp"
#include "halo/info.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class F>
std::vector<double> time_ms(const F& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
  return t;
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoi(item));
  return v;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "cpu_compare: %s\nusage: cpu_compare [--size N] [--radii 1,2,4,7] [--reps 9] "
               "[--scipy FILE]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t size = 4096;
  std::vector<int> radii = {1, 2, 4, 7};
  int reps = 9;
  std::string scipy_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--size") size = std::stoll(next());
    else if (a == "--radii") radii = parse_list(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--scipy") scipy_file = next();
    else usage(("unknown argument " + a).c_str());
  }
  if (size < 1 || reps < 1 || radii.empty()) usage("bad arguments");

  std::map<int, double> scipy_ms;
  if (!scipy_file.empty()) {
    std::ifstream f(scipy_file);
    if (!f) usage(("cannot read " + scipy_file).c_str());
    int r;
    double ms;
    while (f >> r >> ms) scipy_ms[r] = ms;
  }

  const halo::BuildInfo bi = halo::build_info();
  std::printf("image %lldx%lld float32, halo %s (%s, SIMD %s), OpenCV %s, threads: halo %d, "
              "OpenCV %d; median of %d runs after 2 warm-ups\n",
              static_cast<long long>(size), static_cast<long long>(size), halo::version(),
              bi.compiler.c_str(), bi.cpu_best_target.c_str(), CV_VERSION, omp_get_max_threads(),
              cv::getNumThreads(), reps);

  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::int64_t n = size * size;
  cv::Mat src(static_cast<int>(size), static_cast<int>(size), CV_32F);
  for (std::int64_t i = 0; i < n; ++i) src.ptr<float>()[i] = dist(rng);
  cv::Mat dst_cv(src.size(), CV_32F), dst_halo_mat(src.size(), CV_32F);
  float* dst_halo = dst_halo_mat.ptr<float>();

  std::printf("\n| r | filter | halo cpu ms | OpenCV ms | speed-up | halo GB/s | halo GFLOP/s |%s "
              "max abs diff / max abs |\n",
              scipy_ms.empty() ? "" : " SciPy ms | vs SciPy |");
  std::printf("|---|---|---|---|---|---|---|%s---|\n", scipy_ms.empty() ? "" : "---|---|");
  bool ok = true;
  for (int r : radii) {
    const int k = 2 * r + 1;
    std::vector<float> w(static_cast<std::size_t>(k * k));
    for (auto& x : w) x = dist(rng);
    const halo::Filter filter(w.data(), {k, k});
    cv::Mat kernel(k, k, CV_32F, w.data());

    halo::Options opt;
    opt.strategy = "cpu";
    const halo::ConstArrayView in = halo::view(src.ptr<const float>(), {size, size});
    const halo::ArrayView out = halo::view(dst_halo, {size, size});
    const auto run_halo = [&] { halo::apply(in, out, filter, opt); };
    const auto run_cv = [&] {
      cv::filter2D(src, dst_cv, -1, kernel, cv::Point(-1, -1), 0.0, cv::BORDER_CONSTANT);
    };
    // Each library in its own block of runs (warm-up: page faults, thread pools), with a pause
    // between so that the other's worker threads (OpenMP / TBB spin-waiting) have gone to sleep:
    // alternating single runs made each pay for the other's spinning on a 2-core machine.
    const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
    pause();
    const double t_halo = median(time_ms(run_halo, 2, reps));
    pause();
    const double t_cv = median(time_ms(run_cv, 2, reps));

    double maxdiff = 0, maxref = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double c = dst_cv.ptr<float>()[i], h = dst_halo[i];
      maxdiff = std::max(maxdiff, std::fabs(h - c));
      if (!(std::fabs(h - c) <= 1e30)) maxdiff = INFINITY;  // NaN
      maxref = std::max(maxref, std::fabs(c));
    }
    const double rel = maxdiff / maxref;
    if (!(rel < 1e-4)) ok = false;
    const double gbs = 8.0 * double(n) / (t_halo * 1e-3) / 1e9;
    const double gflops = 2.0 * k * k * double(n) / (t_halo * 1e-3) / 1e9;
    std::string sc;
    if (!scipy_ms.empty()) {
      char buf[64];
      const auto it = scipy_ms.find(r);
      if (it == scipy_ms.end())
        std::snprintf(buf, sizeof buf, " – | – |");
      else
        std::snprintf(buf, sizeof buf, " %.0f | %.0fx |", it->second, it->second / t_halo);
      sc = buf;
    }
    std::printf("| %d | %dx%d | %.1f | %.1f | %.2fx | %.1f | %.1f |%s %.1e |\n", r, k, k, t_halo,
                t_cv, t_cv / t_halo, gbs, gflops, sc.c_str(), rel);
    std::fflush(stdout);
  }
  if (!ok) {
    std::printf("\nERROR: halo and OpenCV disagree beyond 1e-4 of the output's magnitude\n");
    return 1;
  }
  return 0;
}
