// halo._halo: the pybind11 layer between the Python package (python/halo/__init__.py, which holds
// SciPy's argument rules) and the C++ core. It turns arrays into views, names into options, calls
// halo::apply with the GIL released, and maps errors to Python's types; it decides nothing else.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/memory.hpp"  // internal, on purpose: the OpenMP threads' stack size
#include "core/parse.hpp"  // internal, on purpose: strict parsing, tuning strings
#include "halo/halo.hpp"
#include "halo/info.hpp"
#include "halo/strategy.hpp"
#include "prepared.hpp"
#include "replay.hpp"

namespace py = pybind11;

namespace {

using namespace halo_python;

py::dict build() {
  const halo::BuildInfo b = halo::build_info();
  py::dict d;
  d["version"] = halo::version();
  d["cuda_compiled"] = b.cuda_compiled;
  d["cuda_archs"] = b.cuda_archs;
  d["compiler"] = b.compiler;
  d["build_type"] = b.build_type;
  d["openmp"] = b.openmp;
  d["simd_targets"] = b.simd_targets;
  d["cpu_best_target"] = b.cpu_best_target;
  return d;
}

py::tuple devices() {
  std::string why;
  py::list out;
  for (const halo::DeviceInfo& g : halo::cuda_devices(&why)) {
    py::dict d;
    d["index"] = g.index;
    d["name"] = g.name;
    d["compute_capability"] = py::make_tuple(g.sm_major, g.sm_minor);
    d["multiprocessors"] = g.multiprocessors;
    d["global_memory"] = g.global_memory;
    d["l2_bytes"] = g.l2_bytes;
    out.append(d);
  }
  return py::make_tuple(out, why);
}

py::list strategy_list() {
  py::list out;
  for (const halo::Strategy* s : halo::strategies()) {
    py::dict d;
    d["name"] = s->name();
    d["backend"] = halo::to_string(s->backend());
    d["description"] = s->description();
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_halo, m) {
  m.doc() = "halo's C++ core (use the halo package, not this module)";
  // Every error the core reports: a RuntimeError, as SciPy's own errors from its C code are.
  const py::exception<halo::Error>& error =
      py::register_exception<halo::Error>(m, "Error", PyExc_RuntimeError);
  py::class_<Prepared>(m, "Prepared")
      .def(py::init<const std::vector<std::int64_t>&, const std::string&,
                    const py::array_t<double, py::array::c_style | py::array::forcecast>&, bool,
                    const std::vector<std::string>&, double, const std::vector<std::int64_t>&,
                    const std::string&, const std::string&, bool, bool, const std::string&,
                    const std::string&>(),
           py::arg("shape"), py::arg("dtype"), py::arg("weights"), py::arg("convolve"),
           py::arg("modes"), py::arg("cval"), py::arg("origins"), py::arg("backend"),
           py::arg("strategy"), py::arg("direct_sums"), py::arg("every") = false,
           py::arg("out_dtype") = "", py::arg("rounding") = "truncate")
      .def("host", &Prepared::host, py::arg("input"), py::arg("output"))
      .def("device", &Prepared::device, py::arg("input"), py::arg("output"), py::arg("stream"));
  m.def("set_openmp_stack_size", &halo::detail::set_openmp_stack_size, py::arg("text"),
        "The OpenMP threads' stack size as OMP_STACKSIZE gives it, for the memory checks (the "
        "core reads no environment); False if malformed.");
  m.def(
      "parse_mode", [](const std::string& s) { return halo::to_string(halo::parse_boundary(s)); },
      "The core's canonical name of a boundary mode; halo.Error (a RuntimeError) if unknown.");
  m.def(
      "set_tuning",
      [](const std::string& text) {
        try {
          process_tuning() =
              text.empty() ? halo::FastTuning{} : halo::detail::parse_fast_tuning(text, "tuning");
          ++tuning_generation();
        } catch (const halo::Error& e) {
          throw py::value_error(e.what());
        }
      },
      "Sets the tuning of every later call (KEY=VALUE[,...]; '' for the defaults).");
  m.def("tuning", [] {
    return process_tuning().empty() ? std::string() : halo::detail::tuning_string(process_tuning());
  });
  m.def(
      "last_run",
      []() -> py::object {
        const std::shared_ptr<const halo::RunInfo>& r = last_run_info();
        if (!r) return py::none();
        return py::make_tuple(r->strategy, halo::to_string(r->backend), r->note);
      },
      "(strategy, backend, note) of this thread's last core call, or None.");
  m.def(
      "choose",
      [](const std::vector<std::int64_t>& shape, const std::string& dtype,
         const py::array_t<double, py::array::c_style | py::array::forcecast>& weights,
         bool convolve, const std::vector<std::string>& modes, double cval,
         const std::vector<std::int64_t>& origins, const std::string& backend,
         const std::string& strategy, bool direct_sums, bool device) {
        // The problem as a Prepared call of these arguments poses it to halo::apply.
        const int rank = rank_of(shape);
        if (weights.ndim() != rank || static_cast<int>(modes.size()) != rank ||
            static_cast<int>(origins.size()) != rank)
          throw py::value_error("weights, modes and origins of the array's rank are required");
        halo::Options opt;
        opt.op = convolve ? halo::Op::convolve : halo::Op::correlate;
        halo::Extents ext{1, 1, 1};
        for (int a = 0; a < rank; ++a) {
          opt.edges.mode[a] = halo::parse_boundary(modes[a]);
          opt.edges.origin[a] = origins[a];
          ext[a] = shape[a + 1];
        }
        opt.edges.cval = cval;
        opt.backend = halo::parse_backend(backend);
        opt.strategy = strategy;
        opt.direct_sums = direct_sums;
        opt.tuning = process_tuning();
        const halo::Filter filter(
            weights.data(), std::vector<std::int64_t>(weights.shape(), weights.shape() + rank));
        halo::Problem p(rank, ext, shape[0], filter, dtype_named(dtype), opt.op, opt.edges);
        p.require_direct_sums(direct_sums);
        p.set_tuning(opt.tuning);
        const halo::RunInfo r = halo::choose(
            p, opt, device ? halo::MemorySpace::device : halo::MemorySpace::host);
        return py::make_tuple(r.strategy, halo::to_string(r.backend), r.note);
      },
      "(strategy, backend, note) that a core call of these arguments (as Prepared's, on device "
      "or host arrays) would run; halo.Error (a RuntimeError) where no strategy can run it.");
  bind_replay(m, error);
  m.def("build_info", &build);
  m.def("cuda_devices", &devices);
  m.def("strategies", &strategy_list);
}
