// The core call the Python package makes (halo._halo.Prepared): the filter, the options and the
// arrays' geometry converted once, run on pointers with the GIL released. Shared by the bindings
// (_halo.cpp) and the replay table (replay.cpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/parse.hpp"  // internal, on purpose: strict parsing, tuning strings
#include "halo/halo.hpp"
#include "halo/strategy.hpp"

namespace halo_python {

namespace py = pybind11;


// The core's row for a NumPy dtype name ("uint8", "float32", ...); a ValueError names others.
inline halo::DType dtype_named(const std::string& name) {
  for (const halo::DTypeInfo& d : halo::dtypes())
    if (name == d.numpy) return d.dtype;
  std::string names;
  for (const halo::DTypeInfo& d : halo::dtypes()) names += (names.empty() ? "" : ", ") + std::string(d.numpy);
  throw py::value_error("the core takes " + names + ", not " + name);
}

// An array's dtype as a row of the core's table, in native (little-endian) byte order (a
// ValueError otherwise).
inline halo::DType dtype_of(const py::array& a) {
  const py::dtype d = a.dtype();
  const std::string name = py::str(d.attr("name")).cast<std::string>();
  const char order = d.attr("byteorder").cast<std::string>()[0];
  if (order == '>') throw py::value_error("the core takes native byte order, not " + name);
  return dtype_named(name);
}

// The tuning every call of this process passes to the core (set_tuning): `auto`'s crossovers
// measured on a GPU, or `fast`'s kernel choices; empty, the defaults. Read and written under the
// GIL.
inline halo::FastTuning& process_tuning() {
  static halo::FastTuning t;
  return t;
}
// Counts set_tuning's calls, so that a prepared call takes up a tuning set after it was made.
inline std::uint64_t& tuning_generation() {
  static std::uint64_t g = 0;
  return g;
}

// What every call shares: the filter, the operation and the options, checked before the GIL is
// released. Mode names are parsed by the core (SciPy's names and aliases): an unknown one is a
// RuntimeError, as in SciPy; an unknown backend or strategy name is a ValueError.
struct Call {
  halo::Filter filter;
  halo::Options options;
};

inline Call make_call(const py::array_t<double, py::array::c_style | py::array::forcecast>& weights,
               int rank, bool convolve, const std::vector<std::string>& modes, double cval,
               const std::vector<std::int64_t>& origins, const std::string& backend,
               const std::string& strategy, bool direct_sums, bool every) {
  if (weights.ndim() != rank)
    throw py::value_error("weights have " + std::to_string(weights.ndim()) +
                          " dimensions, the array " + std::to_string(rank));
  if (static_cast<int>(modes.size()) != rank || static_cast<int>(origins.size()) != rank)
    throw py::value_error("one mode and one origin per axis are required");
  Call c;
  std::vector<std::int64_t> shape(weights.shape(), weights.shape() + rank);
  c.filter = halo::Filter(weights.data(), shape);
  c.options.op = convolve ? halo::Op::convolve : halo::Op::correlate;
  for (int a = 0; a < rank; ++a) {
    bool zero = false;
    c.options.edges.mode[a] = halo::parse_boundary(modes[a], &zero);  // halo.Error: RuntimeError
    if (zero && cval != 0) throw py::value_error("mode 'zero' reads 0: cval must be 0 with it");
    c.options.edges.origin[a] = origins[a];
  }
  c.options.edges.cval = cval;
  try {
    c.options.backend = halo::parse_backend(backend);
  } catch (const halo::Error& e) {
    throw py::value_error(e.what());
  }
  if (!strategy.empty() && !halo::find_strategy(strategy)) {
    std::string known;
    for (const halo::Strategy* s : halo::strategies())
      known += (known.empty() ? "" : ", ") + s->name();
    throw py::value_error("unknown strategy '" + strategy + "' (expected one of " + known + ")");
  }
  c.options.strategy = strategy;
  c.options.direct_sums = direct_sums;
  // SciPy's 1-D filters multiply every weight; its N-D ones skip |w| <= DBL_EPSILON.
  c.options.footprint = every ? halo::Footprint::every : halo::Footprint::nonzero;
  c.options.tuning = process_tuning();
  return c;
}

// Arrays arrive as (batch, n0[, n1[, n2]]): the first axis is the core's batch.
inline int rank_of(const std::vector<std::int64_t>& shape) {
  const int rank = static_cast<int>(shape.size()) - 1;
  if (rank < 1 || rank > halo::kMaxRank)
    throw py::value_error("arrays reach the core as (batch, n0[, n1[, n2]]), got " +
                          std::to_string(shape.size()) + " axes");
  return rank;
}

// What the core ran for this thread's last call (halo.last_run()); null before any.
inline std::shared_ptr<const halo::RunInfo>& last_run_info() {
  thread_local std::shared_ptr<const halo::RunInfo> info;
  return info;
}

// A core call: the filter, the options and the arrays' geometry converted once. A call of the
// package makes one and runs it; the replay table (replay.cpp) keeps it, so that a replay hands
// over only the arrays (and the stream). The info tuple is kept too and handed out again while
// the core's answer stays the same.
class Prepared {
 public:
  Prepared(const std::vector<std::int64_t>& shape, const std::string& dtype,
           const py::array_t<double, py::array::c_style | py::array::forcecast>& weights,
           bool convolve, const std::vector<std::string>& modes, double cval,
           const std::vector<std::int64_t>& origins, const std::string& backend,
           const std::string& strategy, bool direct_sums, bool every,
           const std::string& out_dtype = "", const std::string& rounding = "truncate")
      : rank_(rank_of(shape)),
        dtype_(dtype_named(dtype)),
        out_dtype_(out_dtype.empty() ? dtype_ : dtype_named(out_dtype)),
        batch_(shape[0]),
        call_(make_call(weights, rank_, convolve, modes, cval, origins, backend, strategy,
                        direct_sums, every)) {
    call_.options.rounding = halo::parse_rounding(rounding);
    elements_ = batch_;
    for (int a = 0; a < rank_; ++a) {
      ext_[a] = shape[a + 1];
      elements_ *= ext_[a];
    }
  }

  // NumPy arrays of the prepared dtype and element count, C-contiguous (the package has checked
  // their shapes).
  py::tuple host(const py::array& in, py::array& out) {
    for (const py::array* a : {&in, static_cast<const py::array*>(&out)})
      if (dtype_of(*a) != (a == &in ? dtype_ : out_dtype_) || a->size() != elements_ ||
          !(a->flags() & py::array::c_style))
        throw py::value_error("arrays of another dtype, size or layout than the prepared call's");
    if (!out.writeable()) throw py::value_error("output array is read-only");
    return run(in.data(), out.mutable_data(), halo::MemorySpace::host);
  }

  // Pointers to device memory on the current CUDA device, queued on `stream`.
  py::tuple device(std::uintptr_t in, std::uintptr_t out, std::uintptr_t stream) {
    return run(reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out),
               halo::MemorySpace::device, reinterpret_cast<void*>(stream));
  }

  // The members change only while this thread holds the GIL: threads replaying one prepared
  // call each run the same plan (a shared, immutable halo::Plan) on their own stream. The plan of
  // each memory space is made by its first run, with the GIL released (prepare() may factor the
  // filter or search an FFT tiling), and made again after set_tuning.
  py::tuple run(const void* in, void* out, halo::MemorySpace space, void* stream = nullptr) {
    if (generation_ != tuning_generation()) {
      call_.options.tuning = process_tuning();
      generation_ = tuning_generation();
      planned_[0] = planned_[1] = false;
    }
    const int k = space == halo::MemorySpace::device ? 1 : 0;
    const halo::ConstArrayView iv(in, dtype_, rank_, ext_, batch_, space);
    halo::ArrayView ov;
    ov.data = out;
    ov.dtype = out_dtype_;
    ov.rank = rank_;
    ov.extents = ext_;
    ov.batch = batch_;
    ov.space = space;
    halo::Plan plan = plans_[k];
    const bool planned = planned_[k];
    const halo::Options options = call_.options;  // call_ may change under the GIL meanwhile
    halo::RunInfo info;
    {
      py::gil_scoped_release unlocked;
      if (!planned) plan = halo::prepare(halo::ArrayDesc::of(iv, ov), call_.filter, options);
      info = plan.run(iv, ov, stream);
    }
    if (!planned && !planned_[k]) {
      plans_[k] = plan;
      planned_[k] = true;
    }
    if (!info_ || info.strategy != info_->strategy || info.backend != info_->backend ||
        info.note != info_->note) {
      last_ = py::make_tuple(info.strategy, halo::to_string(info.backend), info.note);
      info_ = std::make_shared<const halo::RunInfo>(std::move(info));
    }
    last_run_info() = info_;
    return last_;
  }

 private:

  int rank_;
  halo::DType dtype_, out_dtype_;
  std::int64_t batch_;
  halo::Extents ext_{1, 1, 1};
  std::int64_t elements_ = 1;
  Call call_;
  std::uint64_t generation_ = tuning_generation();  // of the tuning call_ holds
  halo::Plan plans_[2];              // host, device: prepared by the first run in that space
  bool planned_[2] = {false, false};
  std::shared_ptr<const halo::RunInfo> info_;  // null before the first run
  py::tuple last_;
};

}  // namespace halo_python
