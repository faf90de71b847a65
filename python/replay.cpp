// The replay table. halo._replayable (python/halo/_replay.py) calls replay() first on every call
// of a filter: it keys the call by the function, the input's type, dtype and shape, and the other
// arguments' values with their types, and on a hit runs the core call that an earlier call with
// an equal key made (a Prepared), on this input, into a new array of the input's kind or the
// output given. A miss returns the key (bytes), under which the package stores the call it
// records; an argument that cannot be keyed (objects compared by identity, large arrays), an
// input of a kind or layout that does not replay, or an output the replay may not write itself
// returns None: the full path, every time.
//
// The hit path is here rather than in Python because a call on a GPU array spends its host time
// while the GPU waits: NumPy arrays are read from their struct, CuPy arrays and PyTorch tensors
// from their attributes, and the key is built as bytes, so that a hit creates no Python object
// but the output. Everything here runs with the GIL held (the core call releases it).
#include "replay.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "prepared.hpp"

namespace halo_python {
namespace {

constexpr int kMaxDims = 8;                   // inputs of more axes take the full path
constexpr Py_ssize_t kMaxKeyElements = 4096;  // NumPy arrays keyed by their bytes, at most
constexpr Py_ssize_t kMaxKeyItems = 64;       // tuples and lists keyed element by element
constexpr int kMaxKeyDepth = 4;
constexpr std::size_t kMaxEntries = 256;  // the table is emptied when it would hold more

enum class Kind { numpy, cupy, torch, python };

// A GPU library's array type (CuPy's ndarray, PyTorch's Tensor): how a replay reads its arrays
// and makes new ones, as the package's kind object (python/halo/_arrays.py) does.
struct DeviceKind {
  Kind kind;
  PyTypeObject* type;
  py::object f32, f64;        // the library's dtype objects
  py::object current_device;  // () -> int
  py::object stream;          // (device) -> int: the current stream there
  py::object empty;           // (shape, dtype, device) -> a new array
  py::object owner;           // the package's kind object (on_device)
};

struct Entry {
  py::object keep;  // the Prepared
  Prepared* call;
};

struct State {
  PyTypeObject* ndarray = nullptr;
  PyTypeObject* generic = nullptr;  // numpy.generic: NumPy scalars
  py::object np_f32, np_f64;        // numpy.dtype('float32'), numpy.dtype('float64')
  py::object facts;         // (x) -> (kind, dtype, shape) or None: arrays of other types
  py::object output_ok;     // (kind, out, x, dtype, shape) -> bool: those arrays' outputs
  py::object host_weights;  // (x) -> NumPy array: a GPU array's values on the host
  // Shared: a replay keeps the kind it read while Python code it calls may register another.
  std::vector<std::shared_ptr<const DeviceKind>> devices;
  std::unordered_map<std::string, Entry> table;
  std::uint64_t hits[4] = {};  // replays by Kind (tests check which path ran)
  PyObject* error = nullptr;   // halo.Error
};

// Never destroyed: the Python objects it holds would otherwise be released after the
// interpreter's teardown.
State& state() {
  static State* s = new State;
  return *s;
}

struct Names {
  PyObject *dtype, *shape, *data, *ptr, *device_id, *c_contiguous_, *flags, *c_contiguous,
      *is_cuda, *is_contiguous, *data_ptr, *get_device, *size, *numel, *output, *replay,
      *on_device, *enter, *exit;
};

const Names& names() {
  static const Names n = [] {
    auto s = [](const char* c) { return PyUnicode_InternFromString(c); };
    return Names{s("dtype"),     s("shape"),         s("data"),       s("ptr"),
                 s("device_id"), s("_c_contiguous"), s("flags"),      s("c_contiguous"),
                 s("is_cuda"),   s("is_contiguous"), s("data_ptr"),   s("get_device"),
                 s("size"),      s("numel"),         s("output"),     s("replay"),
                 s("on_device"), s("__enter__"),     s("__exit__")};
  }();
  return n;
}

// Attribute reads and calls whose failure means "not replayable" (the full path then reports
// whatever is wrong): an empty object, the error cleared.
py::object soft(PyObject* r) {
  if (!r) PyErr_Clear();
  return py::reinterpret_steal<py::object>(r);
}
py::object soft_attr(PyObject* o, PyObject* name) { return soft(PyObject_GetAttr(o, name)); }
py::object soft_method(PyObject* o, PyObject* name) {
  return soft(PyObject_CallMethodObjArgs(o, name, nullptr));
}
bool soft_int(const py::object& o, long long& v) {
  if (!o) return false;
  v = PyLong_AsLongLong(o.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}
bool soft_true(const py::object& o) {
  if (!o) return false;
  const int t = PyObject_IsTrue(o.ptr());
  if (t < 0) PyErr_Clear();
  return t == 1;
}

// What a replay needs of an array.
struct Facts {
  Kind kind = Kind::python;
  std::shared_ptr<const DeviceKind> dev;
  int dtype = -1;  // 0: float32, 1: float64
  int ndim = 0;
  std::int64_t shape[kMaxDims] = {};
  std::uintptr_t ptr = 0;
  long long device = -1;
  bool writeable = true;
  py::object shape_obj, dtype_obj;  // the library's own (GPU and other kinds)
  py::object owner;                 // other kinds: the package's kind object

  std::int64_t bytes() const {
    std::int64_t n = dtype == 0 ? 4 : 8;
    for (int a = 0; a < ndim; ++a) n *= shape[a];
    return n;
  }
  bool same_layout(const Facts& o) const {
    return dtype == o.dtype && ndim == o.ndim &&
           std::memcmp(shape, o.shape, sizeof(std::int64_t) * ndim) == 0;
  }
};

bool read_shape(const py::object& t, Facts& f) {
  if (!t || !PyTuple_Check(t.ptr())) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(t.ptr());
  if (n > kMaxDims) return false;
  f.ndim = static_cast<int>(n);
  for (Py_ssize_t a = 0; a < n; ++a) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t.ptr(), a));
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    f.shape[a] = v;
  }
  return true;
}

int dtype_code(const py::object& dt, const py::object& f32, const py::object& f64) {
  if (!dt) return -1;
  if (dt.ptr() == f32.ptr()) return 0;
  if (dt.ptr() == f64.ptr()) return 1;
  for (int code = 0; code < 2; ++code) {  // an equal dtype object that is not the singleton
    const int eq = PyObject_RichCompareBool(dt.ptr(), (code == 0 ? f32 : f64).ptr(), Py_EQ);
    if (eq < 0) PyErr_Clear();
    if (eq == 1) return code;
  }
  return -1;
}

// A C-contiguous float32 or float64 NumPy array in native byte order.
bool numpy_facts(PyObject* x, Facts& f) {
  const auto* a = py::detail::array_proxy(x);
  const auto* d = py::detail::array_descriptor_proxy(a->descr);
  using api = py::detail::npy_api;
  if (d->byteorder == '>' || a->nd > kMaxDims || !(a->flags & api::NPY_ARRAY_C_CONTIGUOUS_))
    return false;
  f.dtype = d->type_num == api::NPY_FLOAT_ ? 0 : d->type_num == api::NPY_DOUBLE_ ? 1 : -1;
  if (f.dtype < 0) return false;
  f.kind = Kind::numpy;
  f.ndim = a->nd;
  for (int i = 0; i < a->nd; ++i) f.shape[i] = a->dimensions[i];
  f.ptr = reinterpret_cast<std::uintptr_t>(a->data);
  f.writeable = (a->flags & api::NPY_ARRAY_WRITEABLE_) != 0;
  return true;
}

// The device pointer and device of a GPU library's array (false where they cannot be read).
bool device_place(Kind kind, PyObject* a, long long& ptr, long long& device) {
  const Names& n = names();
  if (kind == Kind::cupy) {
    const py::object data = soft_attr(a, n.data);
    return data && soft_int(soft_attr(data.ptr(), n.ptr), ptr) &&
           soft_int(soft_attr(data.ptr(), n.device_id), device);
  }
  return soft_int(soft_method(a, n.data_ptr), ptr) &&
         soft_int(soft_method(a, n.get_device), device);
}

// A C-contiguous float32 or float64 array of a GPU library.
bool device_facts(PyObject* x, const std::shared_ptr<const DeviceKind>& kind, Facts& f) {
  const Names& n = names();
  const DeviceKind& k = *kind;
  f.kind = k.kind;
  f.dev = kind;
  if (k.kind == Kind::torch && !soft_true(soft_attr(x, n.is_cuda))) return false;
  f.dtype_obj = soft_attr(x, n.dtype);
  f.dtype = dtype_code(f.dtype_obj, k.f32, k.f64);
  if (f.dtype < 0) return false;
  py::object c;
  if (k.kind == Kind::cupy) {
    c = soft_attr(x, n.c_contiguous_);
    if (!c) {
      py::object flags = soft_attr(x, n.flags);
      if (flags) c = soft_attr(flags.ptr(), n.c_contiguous);
    }
  } else {
    c = soft_method(x, n.is_contiguous);
  }
  long long ptr = 0;
  if (!soft_true(c) || !device_place(k.kind, x, ptr, f.device)) return false;
  f.ptr = static_cast<std::uintptr_t>(ptr);
  f.shape_obj = soft_attr(x, n.shape);
  return read_shape(f.shape_obj, f);
}

// Arrays of other types: the package says (halo._replay_facts) whether and how they replay.
bool python_facts(PyObject* x, Facts& f) {
  State& st = state();
  if (!st.facts) return false;
  py::object r = soft(PyObject_CallOneArg(st.facts.ptr(), x));
  if (!r || !PyTuple_Check(r.ptr()) || PyTuple_GET_SIZE(r.ptr()) != 3) return false;
  f.kind = Kind::python;
  f.owner = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(r.ptr(), 0));
  f.dtype_obj = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(r.ptr(), 1));
  f.shape_obj = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(r.ptr(), 2));
  f.dtype = dtype_code(f.dtype_obj, st.np_f32, st.np_f64);
  return f.dtype >= 0 && read_shape(f.shape_obj, f);
}

bool facts(PyObject* x, Facts& f) {
  State& st = state();
  PyTypeObject* t = Py_TYPE(x);
  if (t == st.ndarray) return numpy_facts(x, f);
  for (const std::shared_ptr<const DeviceKind>& k : st.devices)
    if (t == k->type) return device_facts(x, k, f);
  return python_facts(x, f);
}

// Whether a replay may write `out` itself: an array of the input's type, dtype, shape and
// device, C-contiguous, writeable and apart from the input.
bool output_ok(PyObject* out, PyObject* x, const Facts& in, Facts& of) {
  if (Py_TYPE(out) != Py_TYPE(x)) return false;
  if (in.kind == Kind::python) {
    State& st = state();
    return soft_true(soft(PyObject_CallFunctionObjArgs(st.output_ok.ptr(), in.owner.ptr(), out, x,
                                                       in.dtype_obj.ptr(), in.shape_obj.ptr(),
                                                       nullptr)));
  }
  if (!facts(out, of) || !in.same_layout(of) || !of.writeable || of.device != in.device)
    return false;
  const std::uintptr_t gap = in.ptr > of.ptr ? in.ptr - of.ptr : of.ptr - in.ptr;
  return gap >= static_cast<std::uintptr_t>(in.bytes());
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------
struct Key {
  std::string s;
  void raw(const void* p, std::size_t n) { s.append(static_cast<const char*>(p), n); }
  template <class T>
  void put(const T& v) {
    raw(&v, sizeof v);
  }
};

// A NumPy array or scalar by its dtype, shape and bytes (numeric dtypes, C-contiguous, up to
// kMaxKeyElements elements).
bool key_buffer(Key& k, PyObject* v) {
  Py_buffer b;
  if (PyObject_GetBuffer(v, &b, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    return false;
  }
  const char* fmt = b.format ? b.format : "B";
  bool ok = b.itemsize > 0 && b.len / b.itemsize <= kMaxKeyElements &&
            std::strspn(fmt, "@=<>!?bBhHiIlLqQnNefdgZ") == std::strlen(fmt);
  if (ok) {
    k.put(std::strlen(fmt));
    k.raw(fmt, std::strlen(fmt));
    k.put(b.ndim);
    for (int a = 0; a < b.ndim; ++a) k.put(b.shape[a]);
    k.put(b.len);
    k.raw(b.buf, static_cast<std::size_t>(b.len));
  }
  PyBuffer_Release(&b);
  return ok;
}

// v with its type: plain scalars, strings, tuples and lists of them, NumPy arrays and scalars
// by their bytes, and small arrays of the GPU libraries by their values on the host (as the full
// path reads weights). False for anything else.
bool key_value(Key& k, PyObject* v, int depth = 0) {
  State& st = state();
  PyTypeObject* t = Py_TYPE(v);
  k.put(t);
  if (v == Py_None) return true;
  if (PyFloat_Check(v)) {
    k.put(PyFloat_AS_DOUBLE(v));  // bits: -0.0 and 0.0 are different keys
    return true;
  }
  if (PyLong_Check(v)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (i == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    k.put(i);
    return true;
  }
  if (PyUnicode_Check(v)) {
    Py_ssize_t n = 0;
    const char* c = PyUnicode_AsUTF8AndSize(v, &n);
    if (!c) {
      PyErr_Clear();
      return false;
    }
    k.put(n);
    k.raw(c, static_cast<std::size_t>(n));
    return true;
  }
  if (PyComplex_Check(v)) {
    const Py_complex c = PyComplex_AsCComplex(v);
    k.put(c.real);
    k.put(c.imag);
    return true;
  }
  if (PyTuple_Check(v) || PyList_Check(v)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (depth >= kMaxKeyDepth || n > kMaxKeyItems) return false;
    k.put(n);
    PyObject** items = PySequence_Fast_ITEMS(v);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!key_value(k, items[i], depth + 1)) return false;
    return true;
  }
  if (t == st.ndarray || (st.generic && PyObject_TypeCheck(v, st.generic)))
    return key_buffer(k, v);
  for (const std::shared_ptr<const DeviceKind>& d : st.devices)
    if (t == d->type) {
      long long n = 0;
      const py::object size = d->kind == Kind::cupy ? soft_attr(v, names().size)
                                                    : soft_method(v, names().numel);
      if (!soft_int(size, n) || n > kMaxKeyElements) return false;
      // An exception here (a failed copy) is the one the full path would raise.
      const py::object host = st.host_weights(py::handle(v));
      return Py_TYPE(host.ptr()) == st.ndarray && key_buffer(k, host.ptr());
    }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Replays
// ---------------------------------------------------------------------------------------------
py::object run_device(const Entry& e, const Facts& in, PyObject* out, const Facts& of) {
  const DeviceKind& k = *in.dev;
  py::object o;
  std::uintptr_t optr = of.ptr;
  if (out) {
    o = py::reinterpret_borrow<py::object>(out);
  } else {
    o = k.empty(in.shape_obj, in.dtype_obj, in.device);
    long long p = 0, device = -1;
    if (!device_place(k.kind, o.ptr(), p, device))
      throw py::type_error("halo: the new output array's device pointer could not be read");
    optr = static_cast<std::uintptr_t>(p);
  }
  const auto stream = k.stream(in.device).cast<std::uintptr_t>();
  e.call->run(reinterpret_cast<const void*>(in.ptr), reinterpret_cast<void*>(optr),
              halo::MemorySpace::device, reinterpret_cast<void*>(stream));
  return o;
}

// e is the caller's copy of the table's entry: the Python calls made here (allocations, the
// stream) and the core's run without the GIL let other threads change the table meanwhile.
py::object run(const Entry& e, PyObject* x, const Facts& in, PyObject* out, const Facts& of) {
  State& st = state();
  switch (in.kind) {
    case Kind::numpy: {
      py::object o;
      void* optr = reinterpret_cast<void*>(of.ptr);
      if (out) {
        o = py::reinterpret_borrow<py::object>(out);
      } else {
        auto& api = py::detail::npy_api::get();
        PyObject* d = (in.dtype == 0 ? st.np_f32 : st.np_f64).ptr();
        Py_INCREF(d);  // PyArray_NewFromDescr takes a reference
        Py_ssize_t dims[kMaxDims];
        for (int a = 0; a < in.ndim; ++a) dims[a] = static_cast<Py_ssize_t>(in.shape[a]);
        o = py::reinterpret_steal<py::object>(api.PyArray_NewFromDescr_(
            api.PyArray_Type_, d, in.ndim, dims, nullptr, nullptr, 0, nullptr));
        if (!o) throw py::error_already_set();
        optr = py::detail::array_proxy(o.ptr())->data;
      }
      e.call->run(reinterpret_cast<const void*>(in.ptr), optr, halo::MemorySpace::host);
      return o;
    }
    case Kind::cupy:
    case Kind::torch: {
      long long current = -1;
      if (!soft_int(in.dev->current_device(), current))
        throw py::type_error("halo: the current CUDA device could not be read");
      if (current == in.device) return run_device(e, in, out, of);
      // The input's device made the current one for the call, as the full path does.
      const Names& n = names();
      py::object ctx = in.dev->owner.attr(py::handle(n.on_device))(py::handle(x));
      ctx.attr(py::handle(n.enter))();
      py::object o;
      try {
        o = run_device(e, in, out, of);
      } catch (...) {
        ctx.attr(py::handle(n.exit))(py::none(), py::none(), py::none());
        throw;
      }
      ctx.attr(py::handle(n.exit))(py::none(), py::none(), py::none());
      return o;
    }
    case Kind::python:
      break;
  }
  // Other kinds replay through the package's kind object (_arrays._Device.replay).
  py::object r = in.owner.attr(py::handle(names().replay))(
      e.keep, py::handle(x), out ? py::handle(out) : py::handle(Py_None), in.shape_obj,
      in.dtype_obj);
  return py::reinterpret_borrow<py::object>(PyTuple_GetItem(r.ptr(), 0));
}

py::object replay(long long fid, Py_ssize_t out_at, PyObject* x, PyObject* args,
                  PyObject* kwargs) {
  State& st = state();
  Facts in;
  if (!facts(x, in)) return py::none();
  const Py_ssize_t na = PyTuple_GET_SIZE(args);
  PyObject* out = nullptr;  // borrowed
  if (na > out_at) {
    out = PyTuple_GET_ITEM(args, out_at);
  } else if (PyDict_GET_SIZE(kwargs) > 0) {
    out = PyDict_GetItemWithError(kwargs, names().output);
    if (!out && PyErr_Occurred()) throw py::error_already_set();
  }
  if (out == Py_None) out = nullptr;
  Facts of;
  if (out && !output_ok(out, x, in, of)) return py::none();

  Key k;
  k.s.reserve(192);
  k.put(fid);
  k.put(Py_TYPE(x));
  k.put(in.dtype);
  k.put(in.ndim);
  k.raw(in.shape, sizeof(std::int64_t) * in.ndim);
  for (Py_ssize_t i = 0; i < na; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (i == out_at && a != Py_None)
      k.put('O');  // the output array: a slot
    else if (!key_value(k, a))
      return py::none();
  }
  Py_ssize_t pos = 0;
  PyObject *name, *v;
  while (PyDict_Next(kwargs, &pos, &name, &v)) {
    if (!key_value(k, name)) return py::none();
    const bool is_out = name == names().output || PyUnicode_CompareWithASCIIString(name, "output") == 0;
    if (is_out && v != Py_None)
      k.put('O');
    else if (!key_value(k, v))
      return py::none();
  }
  const auto it = st.table.find(k.s);
  if (it == st.table.end()) return py::bytes(k.s);
  ++st.hits[static_cast<int>(in.kind)];
  const Entry e = it->second;
  return run(e, x, in, out, of);
}

// replay(fid, out_at, input, args, kwargs), called with the arguments as a C array (no tuple
// built for them): the output on a hit, the key (bytes) on a miss, None where the call does not
// replay.
PyObject* replay_fast(PyObject*, PyObject* const* a, Py_ssize_t n) {
  if (n != 5 || !PyTuple_Check(a[3]) || !PyDict_Check(a[4])) {
    PyErr_SetString(PyExc_TypeError, "replay(fid, out_at, input, args: tuple, kwargs: dict)");
    return nullptr;
  }
  try {
    const long long fid = PyLong_AsLongLong(a[0]);
    const Py_ssize_t out_at = PyLong_AsSsize_t(a[1]);
    if (PyErr_Occurred()) return nullptr;
    return replay(fid, out_at, a[2], a[3], a[4]).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const halo::Error& e) {
    PyErr_SetString(state().error, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyMethodDef replay_def = {
    "replay", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&replay_fast)),
    METH_FASTCALL,
    "replay(fid, out_at, input, args, kwargs): the output of a replayed call, its key (bytes) "
    "where no call is stored under it, or None where the call does not replay."};

}  // namespace

void bind_replay(py::module_& m, py::handle error) {
  state().error = error.ptr();
  m.add_object("replay", py::reinterpret_steal<py::object>(
                             PyCFunction_NewEx(&replay_def, nullptr, m.attr("__name__").ptr())));
  m.def(
      "replay_setup",
      [](py::handle ndarray, py::handle generic, py::object f32, py::object f64, py::object facts,
         py::object output_ok, py::object host_weights) {
        State& st = state();
        st.ndarray = reinterpret_cast<PyTypeObject*>(ndarray.ptr());
        st.generic = reinterpret_cast<PyTypeObject*>(generic.ptr());
        st.np_f32 = std::move(f32);
        st.np_f64 = std::move(f64);
        st.facts = std::move(facts);
        st.output_ok = std::move(output_ok);
        st.host_weights = std::move(host_weights);
      },
      "Sets NumPy's types and the package's functions for arrays of other kinds.");
  m.def(
      "replay_device_kind",
      [](const std::string& name, py::handle type, py::object f32, py::object f64,
         py::object current_device, py::object stream, py::object empty, py::object owner) {
        if (name != "cupy" && name != "torch")
          throw py::value_error("replay_device_kind: 'cupy' or 'torch', not '" + name + "'");
        if (!PyType_Check(type.ptr())) throw py::type_error("replay_device_kind: not a type");
        auto k = std::make_shared<const DeviceKind>(DeviceKind{
            name == "cupy" ? Kind::cupy : Kind::torch, reinterpret_cast<PyTypeObject*>(type.ptr()),
            std::move(f32), std::move(f64), std::move(current_device), std::move(stream),
            std::move(empty), std::move(owner)});
        Py_INCREF(type.ptr());  // the type stays alive as long as the table may name it
        for (std::shared_ptr<const DeviceKind>& d : state().devices)
          if (d->type == k->type) {
            d = std::move(k);
            return;
          }
        state().devices.push_back(std::move(k));
      },
      "Registers a GPU library's array type (CuPy's ndarray, PyTorch's Tensor) for replays.");
  m.def(
      "replay_store",
      [](py::bytes key, py::object prepared) {
        State& st = state();
        Prepared* p = prepared.cast<Prepared*>();
        if (st.table.size() >= kMaxEntries) st.table.clear();
        st.table[std::string(key)] = Entry{std::move(prepared), p};
      },
      "Keeps a prepared core call under a key replay() returned.");
  m.def("replay_size", [] { return state().table.size(); });
  m.def(
      "replay_calls",
      [] {
        py::list l;
        for (const auto& e : state().table) l.append(e.second.keep);
        return l;
      },
      "The prepared core calls kept (the C++ API's call for a benchmark beside a replay).");
  m.def("replay_clear", [] { state().table.clear(); });
  m.def(
      "replay_hits",
      [] {
        const std::uint64_t* h = state().hits;
        py::dict d;
        d["numpy"] = h[0];
        d["cupy"] = h[1];
        d["torch"] = h[2];
        d["python"] = h[3];
        return d;
      },
      "Replays so far by the input's kind ('python': kinds the package replays itself).");
}

}  // namespace halo_python
