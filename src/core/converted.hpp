// Problems of the dtypes a host strategy is not written for, run by that strategy: 8/16/32-bit
// integers, float16, bfloat16, complex, or an output dtype other than the input's. The input is
// converted slab by slab into the strategy's float32 or float64 (compute_dtype), the strategy runs
// each slab (its rows along axis 0 with the halo the filter reaches, or whole items), and each
// slab's sums are stored as the output's dtype: rounded as Rounding says, an integer output
// truncated from SciPy's own float64 sum wherever the strategy's sum lies within its rounding
// bound of an integer (core/scipy_sum.hpp), so that it is SciPy's bit for bit. Complex input runs
// its real and imaginary parts in turn. Memory: two slabs of a few tens of MB beside the
// strategy's own workspace.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/scipy_sum.hpp"
#include "halo/strategy.hpp"

namespace halo::detail {

// The dtype a problem's sums are carried in by a strategy written for float32 and float64: the
// input's accumulation type (core/dtype.hpp), float64 where the input or the output is float64,
// int32 or complex128, or the input a 16-bit integer.
DType compute_dtype(const Problem& p);

// What the host's and the device's plans of converted problems share: the slabs, the
// sub-problems the strategy runs on them and its plans, the bound of its sums. A slab is rows_
// indices along axis 0 of one item with the k0 - 1 rows the filter reaches around them (the
// sub-problem's axis-0 extent sub_rows_), or items_ whole items (the last slab's spare items
// zeros); complex input runs its parts in turn (the imaginary part's constant ghosts read 0).
class ConvertedBase : public StrategyPlan {
 public:
  using i64 = std::int64_t;
  ConvertedBase(const Strategy& s, const Problem& p, MemorySpace space)
      : StrategyPlan(s, p), space_(space), sum_(p) {}
  // Builds the slabs (buffers of at most about `slab_bytes` each) and the inner plans; an
  // empty string where it can, else why not.
  std::string init(double slab_bytes);

  Estimate estimate() const override {
    Estimate e = inner_[0]->estimate();
    if (!std::isfinite(e.ns)) return e;
    const double runs = double(slabs_ * parts_);
    // Each slab reads and writes its buffers once more, at about the host's copy rate; on the
    // device at the rate the fill and store kernels reach (16384^2 uint8 and uint16 on an H200:
    // about 600 bytes per ns, float16 more; docs/notes/integer-kernels.md).
    const double rate = space_ == MemorySpace::host ? 10.0 : 600.0;  // bytes per ns
    const double convert_ns = double(problem().bytes() + 2 * runs * slab_bytes_) / rate;
    e.ns = e.ns * runs + convert_ns;
    e.why = "in " + std::string(to_string(compute_)) + " by slabs: " + e.why;
    return e;
  }
  std::string describe() const override {
    std::string d = inner_[0]->describe();
    return std::string("in ") + to_string(compute_) + ", " + std::to_string(slabs_) +
           (slabs_ == 1 ? " slab" : " slabs") + (parts_ > 1 ? " per complex part" : "") +
           (d.empty() ? std::string() : "; " + d);
  }
  Summation summation() const override { return inner_[0]->summation(); }
  NonFinite nonfinite() const override { return NonFinite::exact; }
  std::vector<MemoryUse> workspace() const override {
    std::vector<MemoryUse> w = inner_[0]->workspace();
    w.push_back({"two slabs in " + std::string(to_string(compute_)), 2 * slab_bytes_, space_});
    return w;
  }

 protected:
  // Where slab s lies: its first item, its first axis-0 index (along_axis0_), the outputs it
  // owns (rows: axis-0 indices, or items * n0 for whole items), and the sub-problem's rows
  // before them.
  struct Slab {
    i64 item = 0, row0 = 0, rows = 0, skip = 0;
  };
  Slab slab(i64 s) const;
  // The bound of a sum relative to the slab's largest |x| (core/convert.hpp,
  // truncation_undecided): the strategy's (direct or separable, at most taps + 8 units of the
  // compute type) and SciPy's own (taps + 2 units of double), times sum |w|. *integral: the
  // sums are integers (integer input, integral weights and cval), exact while max|x| stays
  // below *exact_below.
  double bound_scale(bool* integral, double* exact_below) const;

  MemorySpace space_;
  bool along_axis0_ = false;
  i64 items_ = 1;       // whole items per slab
  i64 rows_ = 1;        // axis-0 indices per slab (along_axis0_)
  i64 row_elems_ = 1;   // elements per axis-0 index
  i64 sub_rows_ = 1;    // the sub-problem's axis-0 extent: rows_ + k0 - 1
  i64 slabs_ = 1;
  int parts_ = 1;       // 2 for complex input
  double slab_bytes_ = 0;
  DType compute_ = DType::f32;
  ScipySum sum_;
  std::vector<std::unique_ptr<Problem>> sub_;
  std::vector<std::shared_ptr<const StrategyPlan>> inner_;
};

// The device's plan of a converted problem (cuda/converted.cu; a refusal without CUDA).
Prepared prepare_converted_on_device(const Strategy& s, const Problem& p);

// Strategy s's plan for p through slabs in compute_dtype(p), or why it cannot (s refuses the
// slabs' problem, or p needs SciPy's truncation and s does not sum directly or by passes).
// Host strategies only.
Prepared prepare_converted(const Strategy& s, const Problem& p);
// The bytes of each of the two slab buffers of plans prepared from now on (4 MB on the host,
// 512 MB on the device; tests make it small to cut arrays everywhere); 0 restores the defaults.
void set_converted_slab_bytes(double bytes);
double converted_slab_bytes(MemorySpace space);
// Whether plan is one of prepare_converted's.
bool converts(const StrategyPlan& plan);

}  // namespace halo::detail
