// Memory estimates made before allocating: what a run needs, what the host and device have, and
// the refusal that names both.
#include <omp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "core/detail.hpp"
#include "core/memory.hpp"
#include "core/parse.hpp"
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"

namespace halo {

using detail::size_text;  // core/parse.hpp

namespace {


// The first number after `key` in a "key: value kB" file such as /proc/meminfo, in bytes; < 0 if
// absent.
double meminfo_bytes(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() ||
        line[key.size()] != ':')
      continue;
    std::istringstream is(line.substr(key.size() + 1));
    double kb = -1;
    is >> kb;
    return kb < 0 ? -1 : kb * 1024;
  }
  return -1;
}

// A whole file holding one number (cgroup files); < 0 if absent or "max".
double file_number(const std::string& path) {
  std::ifstream f(path);
  std::string text;
  if (!(f >> text) || text == "max") return -1;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end && *end == '\0' ? v : -1;
}

// This process's cgroup v2 directory ("0::/path" in /proc/self/cgroup), or "".
std::string cgroup_v2_dir() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, 3, "0::") == 0) return "/sys/fs/cgroup" + line.substr(3);
  return "";
}

// Bytes of address space this process uses (/proc/self/statm's first field, in pages).
double address_space_in_use() {
  std::ifstream f("/proc/self/statm");
  double pages = 0;
  if (!(f >> pages)) return 0;
  return pages * double(::sysconf(_SC_PAGESIZE));
}

// The threads of this process (/proc/self/status), at least 1.
int threads_running() {
  const double n = [] {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
      if (line.compare(0, 8, "Threads:") == 0) return std::atof(line.c_str() + 8);
    return 1.0;
  }();
  return std::max(1, int(n));
}

// A size as OMP_STACKSIZE gives it: a number and an optional unit B, K, M or G (K if none);
// 0 if malformed.
double stack_size_text(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (!end || end == text || !(v > 0)) return 0;
  while (*end == ' ' || *end == '\t') ++end;
  double unit = 1024;
  switch (*end) {
    case '\0':
      break;
    case 'b':
    case 'B':
      unit = 1;
      ++end;
      break;
    case 'k':
    case 'K':
      unit = 1024;
      ++end;
      break;
    case 'm':
    case 'M':
      unit = 1048576;
      ++end;
      break;
    case 'g':
    case 'G':
      unit = 1073741824;
      ++end;
      break;
    default:
      return 0;
  }
  while (*end == ' ' || *end == '\t') ++end;
  return *end == '\0' ? v * unit : 0;
}

// "1 OpenMP thread", "3 OpenMP threads".
std::string threads_text(int n) {
  return std::to_string(n) + (n == 1 ? " OpenMP thread" : " OpenMP threads");
}

// The OpenMP threads' stack size the caller gave (set_openmp_stack_size), bytes; 0: unset.
std::atomic<double>& openmp_stack_bytes() {
  static std::atomic<double> bytes{0};
  return bytes;
}

// The address space the OpenMP team's threads not started yet will reserve for their stacks:
// libgomp starts omp_get_max_threads() - 1 threads at the first parallel region and keeps them,
// each with the stack size its caller set (OMP_STACKSIZE, which the CLI and the Python module
// pass on: set_openmp_stack_size), or else the threads' default (ulimit -s), and a guard page.
// A stack it cannot map ends the process ("Thread creation failed"), so a limit on the address
// space must leave room for them.
double openmp_stacks_to_come(int* count) {
  *count = std::max(0, omp_get_max_threads() - threads_running());
  if (*count == 0) return 0;
  double stack = openmp_stack_bytes().load(std::memory_order_relaxed);
  std::size_t guard = 4096;
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) == 0) {
    std::size_t size = 0;
    if (stack == 0 && pthread_attr_getstacksize(&attr, &size) == 0) stack = double(size);
    pthread_attr_getguardsize(&attr, &guard);
    pthread_attr_destroy(&attr);
  }
  if (stack == 0) stack = 8.0 * 1048576;
  return double(*count) * (stack + double(guard));
}

}  // namespace

MemoryAvailable host_memory_available() {
  MemoryAvailable m{std::numeric_limits<double>::infinity(), "nothing measured"};
  const auto consider = [&m](double bytes, const std::string& what) {
    if (bytes >= 0 && bytes < m.bytes) m = {bytes, what};
  };
  consider(meminfo_bytes("MemAvailable"), "MemAvailable in /proc/meminfo");
  const std::string cg = cgroup_v2_dir();
  if (!cg.empty()) {
    const double limit = file_number(cg + "/memory.max");
    if (limit >= 0)
      consider(limit - std::max(0.0, file_number(cg + "/memory.current")),
               "the cgroup's memory.max less its usage");
  }
  const double v1 = file_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  if (v1 >= 0 && v1 < 1e18)  // v1 reports "no limit" as a huge number
    consider(v1 - std::max(0.0, file_number("/sys/fs/cgroup/memory/memory.usage_in_bytes")),
             "the cgroup's memory limit less its usage");
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    int threads = 0;
    const double stacks = openmp_stacks_to_come(&threads);
    consider(std::max(0.0, double(rl.rlim_cur) - address_space_in_use() - stacks),
             "this process's address-space limit (RLIMIT_AS, ulimit -v) less what it uses" +
                 (threads ? " and the stacks of the " + threads_text(threads) + " to start (" +
                                size_text(stacks) + ")"
                          : std::string()));
  }
  return m;
}

namespace {
// memory_needed's parts: the arrays and their device copies for strategy s, then its workspace.
std::vector<MemoryUse> needs_of(const Strategy& s, const Problem& p, MemorySpace arrays,
                                bool count_arrays, std::vector<MemoryUse> workspace) {
  const double array = double(p.elements()) * double(dtype_size(p.dtype()));
  const double out = double(p.elements()) * double(dtype_size(p.out_dtype()));
  std::vector<MemoryUse> needs;
  if (count_arrays) {
    needs.push_back({"the input array", array, arrays});
    needs.push_back({"the output array", out, arrays});
  }
  if (s.backend() == Backend::cuda && arrays == MemorySpace::host) {
    needs.push_back({"the input's copy on the GPU", array, MemorySpace::device});
    needs.push_back({"the output's copy on the GPU", out, MemorySpace::device});
  }
  for (MemoryUse& u : workspace) {
    u.what += " (strategy " + s.name() + ")";
    needs.push_back(std::move(u));
  }
  return needs;
}
}  // namespace

std::vector<MemoryUse> memory_needed(const Problem& p, const RunInfo& choice, MemorySpace arrays,
                                     bool count_arrays) {
  const Strategy* s = find_strategy(choice.strategy);
  if (!s) throw Error("memory_needed: unknown strategy '" + choice.strategy + "'");
  return needs_of(*s, p, arrays, count_arrays, s->workspace(p));
}

std::vector<MemoryUse> memory_needed(const StrategyPlan& plan, MemorySpace arrays,
                                     bool count_arrays) {
  return needs_of(plan.strategy(), plan.problem(), arrays, count_arrays, plan.workspace());
}

void require_memory(const std::vector<MemoryUse>& needs) {
  for (const MemorySpace space : {MemorySpace::host, MemorySpace::device}) {
    double total = 0;
    for (const MemoryUse& u : needs)
      if (u.space == space && u.bytes > 0) total += u.bytes;
    if (total == 0) continue;
    double have = 0;
    std::string limit;
    if (space == MemorySpace::host) {
      // Below this, measuring (reading /proc and the cgroup's files, tens of microseconds) would
      // cost more than the run; an allocation this small that fails is std::bad_alloc.
      constexpr double kUnmeasuredHostBytes = 64.0 * 1024 * 1024;
      if (total < kUnmeasuredHostBytes) continue;
      const MemoryAvailable m = host_memory_available();
      have = m.bytes;
      limit = m.limited_by;
    } else {
      // Likewise on a usable GPU: a cudaMemGetInfo call is a large share of a small run's host
      // time (docs/notes/tuning.md, "Figures moved from source comments"); a device allocation
      // this small that fails names what it was for (DeviceBuffer).
      constexpr double kUnmeasuredDeviceBytes = 64.0 * 1024 * 1024;
      if (total < kUnmeasuredDeviceBytes && cuda_available()) continue;
      have = detail::device_memory_free(&limit, total);
    }
    if (total <= have) continue;
    std::string parts;
    for (const MemoryUse& u : needs)
      if (u.space == space && u.bytes > 0)
        parts += (parts.empty() ? "" : ", ") + u.what + " " + size_text(u.bytes);
    throw Error(std::string("not enough ") + (space == MemorySpace::host ? "host" : "GPU") +
                " memory: this run needs " + size_text(total) + " (" + parts + ") and " +
                size_text(have) + " is available (" + limit + ")");
  }
}

bool detail::set_openmp_stack_size(const std::string& text) {
  const double bytes = text.empty() ? 0 : stack_size_text(text.c_str());
  if (!text.empty() && bytes == 0) return false;
  openmp_stack_bytes().store(bytes, std::memory_order_relaxed);
  return true;
}

void detail::start_threads_within_address_limit() {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  int threads = 0;
  const double stacks = openmp_stacks_to_come(&threads);
  if (threads == 0) return;
  const double have = double(rl.rlim_cur) - address_space_in_use();
  if (have < stacks + 1048576)
    throw Error("not enough address space to start " + threads_text(threads) +
                ": their stacks need " + size_text(stacks) + " and " +
                size_text(std::max(0.0, have)) +
                " is left of this process's address-space limit (RLIMIT_AS, ulimit -v); raise "
                "it, or lower OMP_NUM_THREADS or OMP_STACKSIZE");
  // The team's threads start and stay (a region with nothing in it would be compiled away).
  std::atomic<int> started{0};
#pragma omp parallel
  started.fetch_add(1, std::memory_order_relaxed);
}

std::vector<MemoryUse> Strategy::workspace(const Problem& p) const {
  const bool gpu = backend() == Backend::cuda;
  return {{"the filter weights", double(p.taps()) * double(dtype_size(p.dtype())),
           gpu ? MemorySpace::device : MemorySpace::host}};
}

}  // namespace halo

