// Host time of halo::apply on device arrays and of its parts, in microseconds per call, calls
// queued back to back (median of 7 rounds of N calls after one round of warm-up): the whole
// apply; the chosen strategy's run alone; building the Problem; the memory check; choosing
// afresh (the core otherwise remembers its choice); and a bare cudaMemsetAsync for the cost of a
// launch. Tiny arrays (8x8 float32, under zero ghosts and reflect) and one large run. Built by
// hand on the development machine against the library (not part of the CMake build):
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude -Isrc bench/apply_host_cost.cpp \
//        -o apply_host_cost build/src/libhalo.a /usr/lib/gcc/x86_64-linux-gnu/12/libgomp.so \
//        -L/usr/lib/x86_64-linux-gnu -l:libhwy.so.1.0.3 -lfftw3 -lfftw3f -lcufft -lpthread -ldl
//        -lrt
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <halo/halo.hpp>
#include <string>
#include <vector>
#include "halo/strategy.hpp"

// Median over 7 rounds (after one) of fn's wall time per call, n calls queued a round.
static double per(const std::function<void()>& fn, int n) {
  std::vector<double> r;
  for (int k = 0; k < 8; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) fn();
    cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    if (k) r.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

int main() {
  struct Case {
    std::int64_t ny, nx;
    const char* spec;
    int n;
    halo::Boundary m;
  };
  for (Case c : {Case{8, 8, "gaussian:sigma=1", 2000, halo::Boundary::constant},
                 Case{8, 8, "gaussian:sigma=1", 2000, halo::Boundary::reflect},
                 Case{8, 8, "box:3", 2000, halo::Boundary::reflect},
                 Case{16384, 16384, "gaussian:sigma=4", 20, halo::Boundary::reflect}}) {
    const std::int64_t n = c.ny * c.nx;
    float *in, *out;
    cudaMalloc(&in, n * 4);
    cudaMalloc(&out, n * 4);
    cudaMemset(in, 0, n * 4);
    halo::Options o;
    o.edges.mode[0] = o.edges.mode[1] = c.m;
    halo::Filter f = halo::make_named_filter(c.spec, 2);
    halo::ConstArrayView vi(in, halo::DType::f32, 2, {c.ny, c.nx}, 1, halo::MemorySpace::device);
    halo::ArrayView vo;
    vo.data = out;
    vo.dtype = halo::DType::f32;
    vo.rank = 2;
    vo.extents = {c.ny, c.nx};
    vo.space = halo::MemorySpace::device;
    halo::RunInfo info = halo::apply(vi, vo, f, o);
    const halo::Strategy* s = halo::find_strategy(info.strategy);
    halo::Problem p(2, {c.ny, c.nx}, 1, f, halo::DType::f32, o.op, o.edges);
    const halo::Buffers b{in, out};
    const double t_apply = per([&] { halo::apply(vi, vo, f, o); }, c.n);
    const double t_run = per([&] { s->run(p, b, nullptr); }, c.n);
    const double t_problem = per(
        [&] {
          halo::Problem q(2, {c.ny, c.nx}, 1, f, halo::DType::f32, o.op, o.edges);
        },
        c.n);
    const double t_mem =
        per([&] { halo::require_memory(halo::memory_needed(p, info, halo::MemorySpace::device)); },
            c.n);
    const double t_choose = per([&] { halo::choose(p, o, halo::MemorySpace::device); }, c.n);
    const double t_launch = per([&] { cudaMemsetAsync(out, 0, 4, nullptr); }, c.n);
    std::printf(
        "%lldx%lld %-18s %d %-10s apply %6.2f  run %6.2f  problem %5.2f  memory %5.2f  "
        "choose(unkept) %6.2f  memset launch %5.2f\n",
        (long long)c.ny, (long long)c.nx, c.spec, int(c.m), info.strategy.c_str(), t_apply, t_run,
        t_problem, t_mem, t_choose, t_launch);
    cudaFree(in);
    cudaFree(out);
  }
}
