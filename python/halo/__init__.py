"""halo: scipy.ndimage's convolution filters on halo's C++/CUDA core.

A drop-in for these functions of scipy.ndimage, with SciPy's signatures, defaults, output dtypes
and results (docs/PYTHON.md says where results can differ):

    correlate, convolve, correlate1d, convolve1d, gaussian_filter, gaussian_filter1d,
    uniform_filter, uniform_filter1d, sobel, prewitt, laplace

Each also takes the keyword-only arguments backend ('auto', 'cpu', 'reference', 'cuda'),
strategy (a name from halo.strategies(), or None to let the core choose) and direct_sums (every
output a plain sum of its taps: no Winograd, FFT or separable passes). NumPy arrays run on the
CPU (or are copied to the GPU with backend='cuda'); CuPy arrays and PyTorch CUDA tensors run on
their GPU without copies, on the caller's current stream, and come back as the same kind.

    from halo import gaussian_filter
    smooth = gaussian_filter(image, sigma=2)
"""

import functools
import inspect
import itertools
import math
import numbers
import operator
import sys
import threading
import warnings
from collections.abc import Iterable

import numpy as np
try:  # NumPy 2
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # NumPy 1
    from numpy.core.multiarray import normalize_axis_index

from . import _halo
from ._arrays import _NUMPY, device_context, host_weights, kind_name, kind_of

__all__ = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter",
           "gaussian_filter1d", "uniform_filter", "uniform_filter1d", "sobel", "prewitt",
           "laplace", "info", "strategies", "last_run", "set_tuning", "tuning", "Error"]

Error = _halo.Error  # what the core reports; a RuntimeError
__version__ = _halo.build_info()["version"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# Input dtypes that float32 holds exactly: with a float32 or float16 output, the core runs float32.
_SMALL = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                         np.float16, np.float32))
# A separable filter goes to the core as one N-D filter (which the core runs as fused 1-D passes)
# up to this many weights; beyond, as one call per axis.
_MAX_FUSED_TAPS = 1 << 22

_local = threading.local()
_SCALARS = frozenset((int, float, str, type(None)))


# ---------------------------------------------------------------------------------------------
# Information
# ---------------------------------------------------------------------------------------------
def strategies():
    """Every strategy of the core: a list of dicts with name, backend and description."""
    return _halo.strategies()


def info():
    """The build (version, CUDA, compiler, SIMD targets), the CUDA devices found (or why none),
    and the strategies, as a dict."""
    devices, why = _halo.cuda_devices()
    d = dict(_halo.build_info())
    d["cuda_devices"] = devices
    d["cuda_unavailable_because"] = why
    d["strategies"] = [s["name"] for s in _halo.strategies()]
    return d


def set_tuning(tuning=""):
    """Overrides of the core's measured choices for every later call of this process: `auto`'s
    crossovers between the CUDA strategies as `halo bench --suite crossovers` prints them for a
    GPU (e.g. "sep_radius_2d=4,box_rows_taps=66,fft_cost=106"), or the `fast` strategy's kernel
    choices; the keys are halo::FastTuning's fields. "" restores the defaults (an H100's). A
    ValueError names a bad key or value."""
    if not isinstance(tuning, str):
        raise TypeError(f"tuning must be a str of KEY=VALUE pairs, not {type(tuning).__name__}")
    _halo.set_tuning(tuning)


def tuning():
    """The tuning set_tuning() gave, as KEY=VALUE text ("" for the defaults)."""
    return _halo.tuning()


def last_run():
    """What the core ran for this thread's last call: a dict with strategy, backend and note (why
    it was chosen), or None before any call. A filter SciPy applies axis by axis with rounding in
    between may take several core calls; this is the last one."""
    r = _halo.last_run()
    return None if r is None else {"strategy": r[0], "backend": r[1], "note": r[2]}


# ---------------------------------------------------------------------------------------------
# Arguments, as SciPy checks them
# ---------------------------------------------------------------------------------------------
def _options(backend, strategy, direct_sums):
    if not isinstance(backend, str):
        raise TypeError("backend must be 'auto', 'cpu', 'reference' or 'cuda', not "
                        f"{type(backend).__name__}")
    if strategy is None:
        strategy = ""
    elif not isinstance(strategy, str):
        raise TypeError(f"strategy must be a name or None, not {type(strategy).__name__}")
    if not isinstance(direct_sums, (bool, np.bool_)):
        raise TypeError(f"direct_sums must be a bool, not {type(direct_sums).__name__}")
    return backend, strategy, bool(direct_sums)


def _normalize_sequence(value, rank):
    """SciPy's: a scalar repeated rank times, or a sequence of exactly rank values."""
    if type(value) in _SCALARS:
        return [value] * rank
    if not isinstance(value, str) and isinstance(value, Iterable):
        value = list(value)
        if len(value) != rank:
            raise RuntimeError("sequence argument must have length equal to input rank")
        return value
    return [value] * rank


@functools.lru_cache(maxsize=64)
def _mode_name(mode):
    return _halo.parse_mode(mode)  # halo.Error (a RuntimeError, as SciPy's) if unknown


_SCIPY_MODES = ("nearest", "wrap", "reflect", "grid-mirror", "mirror", "constant", "grid-wrap",
                "grid-constant")


def _mode(mode):
    """The core's canonical name of a mode (SciPy's names and aliases); RuntimeError otherwise.
    Anything but a str is compared with SciPy's names as SciPy compares it (an array of one name
    is that name; the truth of an array of several is a ValueError there and here)."""
    if type(mode) is not str:
        for name in _SCIPY_MODES:
            if mode == name:
                return _mode_name(name)
        raise RuntimeError("boundary mode not supported")
    return _mode_name(mode)


def _invalid_origin(origin, k):
    """SciPy's test, with SciPy's arithmetic on the origin given (a str or None is a TypeError,
    an array of several origins a ValueError, as there)."""
    return (origin < -(k // 2)) or (origin > (k - 1) // 2)


def _ssize(value):
    """An int as SciPy's C code takes a Py_ssize_t argument ("n"): through __index__ (a float is
    a TypeError), an OverflowError beyond its range."""
    value = operator.index(value)
    if not -sys.maxsize - 1 <= value <= sys.maxsize:
        raise OverflowError("Python int too large to convert to C ssize_t")
    return value


def _origin_1d(origin, k, convolve):
    """The core's origin of a 1-D filter of k taps, checked as SciPy's correlate1d and convolve1d
    check it: convolve1d mirrors the origin as given (-origin, less 1 for even k) before
    correlate1d's range test and its C code's conversion to an integer."""
    if convolve:
        origin = -origin
        if not k & 1:
            origin -= 1
    if _invalid_origin(origin, k):
        raise ValueError("Invalid origin; origin must satisfy -(len(weights) // 2) <= origin <= "
                         "(len(weights)-1) // 2")
    origin = _ssize(origin)
    return -origin - (0 if k & 1 else 1) if convolve else origin


def _origins_nd(origins, wshape, convolve):
    """The core's origins of an N-D filter, checked as SciPy's correlate and convolve check them:
    mirrored for convolve, the range test, then NumPy's conversion of each to an integer, which
    refuses bools (TypeError) and floats."""
    if convolve:
        mirrored = []
        for o, k in zip(origins, wshape):
            o = -o
            if not k & 1:
                o -= 1
            mirrored.append(o)
        origins = mirrored
    for o, k in zip(origins, wshape):
        if _invalid_origin(o, k):
            raise ValueError("Invalid origin; origin must satisfy -(weights.shape[k] // 2) <= "
                             "origin[k] <= (weights.shape[k]-1) // 2")
    out = []
    for o, k in zip(origins, wshape):
        if isinstance(o, (bool, np.bool_)):
            raise TypeError("an integer is required")
        o = _ssize(o)
        out.append(-o - (0 if k & 1 else 1) if convolve else o)
    return out


# dtype kinds SciPy's C filters read and write; halo also takes float16 (SciPy refuses it), and a
# complex output of a real filter (docs/PYTHON.md, "What differs").
_C_KINDS = frozenset("biuf")


def _c_types(in_dt, out_dt):
    """SciPy's C code refuses arrays of other kinds (objects, datetimes, strings): RuntimeError."""
    for dt in (in_dt, out_dt):
        if dt.kind not in _C_KINDS and not (dt.kind == "c" and dt == out_dt):
            raise RuntimeError(f"array type {dt!r} not supported")


def _output(output, xp, input, complex_output=False):
    """SciPy's _ni_support._get_output, without allocating: (output array or None, dtype)."""
    in_dt = xp.dtype(input)
    if output is None:
        if complex_output:
            return None, np.promote_types(in_dt, np.complex64)
        if in_dt.kind in "USV":
            # SciPy makes its output of the input's dtype by name, which NumPy does not take for
            # strings, bytes and records ("data type 'str96' not understood"): a TypeError.
            np.dtype(in_dt.name)
        return None, (in_dt if in_dt.isnative else in_dt.newbyteorder("="))
    if isinstance(output, (type, np.dtype)):
        dt = np.dtype(output)
        if complex_output and dt.kind != "c":
            warnings.warn("promoting specified output dtype to complex")
            dt = np.promote_types(dt, np.complex64)
        return None, dt
    if isinstance(output, str):
        # SciPy looks the name up in numpy.sctypeDict: another name is a KeyError there.
        try:
            dt = np.dtype(np.sctypeDict[output])
        except KeyError:
            raise KeyError(f"{output!r} is not a NumPy type name (numpy.sctypeDict)") from None
        if complex_output and dt.kind != "c":
            raise RuntimeError("output must have complex dtype")
        return None, dt
    if xp.name == "torch" and not hasattr(output, "shape"):  # a torch.dtype
        return _output(xp.dtype_spec(output), xp, input, complex_output)
    if not hasattr(output, "shape"):
        # SciPy reads output.shape of anything else: an AttributeError there and here.
        raise AttributeError(f"'{type(output).__name__}' object has no attribute 'shape': output "
                             "must be None, a dtype, a dtype's name or an array")
    if kind_name(output) != xp.name:
        raise TypeError(f"output must be an array of the input's kind ({xp.name}), not "
                        f"{kind_name(output)}")
    if tuple(output.shape) != tuple(input.shape):
        raise RuntimeError("output shape not correct")
    if xp.device and xp.device_id(output) != xp.device_id(input):
        # The kernels run on the input's device: another device's memory is not theirs to write.
        raise ValueError(f"output is on GPU {xp.device_id(output)}, the input on GPU "
                         f"{xp.device_id(input)}: give an output on the input's device")
    dt = xp.dtype(output)
    if complex_output and dt.kind != "c":
        raise RuntimeError("output must have complex dtype")
    return output, dt


def _allocate(xp, out, out_dt, like):
    return xp.empty(like.shape, out_dt, like) if out is None else out


# ---------------------------------------------------------------------------------------------
# Running the core
# ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _layout(shape, wshape):
    """How the core sees an array of `shape` under a filter of `wshape`: (batch, axes), axes a
    tuple of (extent, axis of the array, or None for a run of unfiltered axes merged into one).
    Adjacent axes the filter does not reach (extent 1) merge, and a leading such run becomes the
    core's batch, so any rank runs where at most 3 filtered or merged axes remain."""
    axes = []
    run = 1
    for a, (n, k) in enumerate(zip(shape, wshape)):
        if k == 1:
            run *= n
            continue
        if run > 1:
            axes.append((run, None))
        run = 1
        axes.append((n, a))
    if run > 1 or not axes:
        axes.append((run, None))
    batch = 1
    if len(axes) > 1 and axes[0][1] is None:
        batch = axes.pop(0)[0]
    return batch, tuple(axes)


def _fits_core(shape, wshape):
    """Whether the core takes this filter in one call without moving axes."""
    return len(_layout(tuple(shape), tuple(wshape))[1]) <= 3


@functools.lru_cache(maxsize=1024)
def _core_plan(shape, wshape, modes, origins):
    """(core shape with the batch first, core filter shape, modes, origins) of _layout, or None
    where more than 3 axes remain."""
    batch, axes = _layout(shape, wshape)
    if len(axes) > 3:
        return None
    return ((batch,) + tuple(n for n, _ in axes),
            tuple(1 if a is None else wshape[a] for _, a in axes),
            ["constant" if a is None else modes[a] for _, a in axes],
            [0 if a is None else int(origins[a]) for _, a in axes])


def _core(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct, every=False):
    """One call of halo::apply: dst = src filtered by weights (both contiguous, float32 or
    float64, same dtype and shape; weights float64 of src's rank). every: every weight is a tap
    where NaN and infinities meet them, as in SciPy's 1-D filters (0 * inf is NaN); otherwise
    SciPy's N-D correlate's footprint (weights with |w| <= DBL_EPSILON are no taps)."""
    shape = tuple(src.shape)
    plan = _core_plan(shape, weights.shape, tuple(modes), tuple(origins))
    if plan is None:
        return _core_transposed(xp, src, dst, weights, convolve, modes, cval, origins, opts,
                                direct, every)
    core_shape, wshape, cmodes, corigins = plan
    if 0 in shape:
        return
    call = (core_shape, weights.reshape(wshape), convolve, cmodes, float(cval), corigins,
            opts[0], opts[1], direct, every)
    if len(opts) > 3:
        _run_relaxed(xp, src, dst, call, opts[3])
    else:
        xp.run(src, dst, *call)
    record = getattr(_local, "record", None)
    if record is not None:
        record.append((xp, src, dst, call))


def _run_relaxed(xp, src, dst, call, exact):
    """The core call of a pass with an integer output, whose direct sums (call[8]) are asked
    for only so that its truncation be SciPy's. Where no strategy can sum it directly (on the
    GPU: `fast` and `separable` have kernels for a few radii in float64, under the boundary modes
    nothing else sums directly), it runs in float64 on a strategy that may sum otherwise (`fft`,
    `lowrank`, `separable`'s fused passes); its sums are then rounded to the nearest integer where
    they are integers (exact: integer inputs, integral weights and cval), which makes them exact,
    and otherwise truncated from sums within rounding of SciPy's (docs/PYTHON.md, dtypes)."""
    try:
        xp.run(src, dst, *call)
        return
    except Error:
        try:
            xp.choose(xp.dtype(src), call)
        except Error as e:
            refused = e
        else:
            raise  # the run's own error, not the choice
    relaxed = call[:8] + (False,) + call[9:]
    try:
        xp.choose(_F64, relaxed)
    except Error as e:
        if str(e) == str(refused):  # not the strategies (no GPU usable, say)
            raise refused from None
        raise Error(f"{refused}; and in float64 without direct sums: {e}") from None
    s64 = xp.contiguous(src, _F64)
    d64 = dst if xp.dtype(dst) == _F64 else xp.empty(tuple(src.shape), _F64, src)
    xp.run(s64, d64, *relaxed)
    if exact:
        xp.rint(d64)
    if d64 is not dst:
        xp.write(dst, d64)  # exact: the integers of a float32 pass are below 2**24
    _spoil_record()


def _core_transposed(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct,
                     every):
    """_core where unfiltered axes lie between filtered ones so that more than 3 axes remain:
    the unfiltered axes are moved to the front (the batch) in a copy, and the result back."""
    ndim = len(src.shape)
    filtered = [a for a in range(ndim) if weights.shape[a] != 1]
    if len(filtered) > 3:
        raise ValueError(f"halo filters at most 3 axes: a filter of shape {weights.shape} "
                         f"reaches {len(filtered)} axes of an array of shape {tuple(src.shape)}")
    perm = [a for a in range(ndim) if weights.shape[a] == 1] + filtered
    inverse = [perm.index(a) for a in range(ndim)]
    src_t = xp.contiguous(xp.transpose(src, perm), xp.dtype(src))
    dst_t = xp.empty(src_t.shape, xp.dtype(src), src)
    _core(xp, src_t, dst_t, weights.transpose(perm), convolve, [modes[a] for a in perm], cval,
          [origins[a] for a in perm], opts, direct, every)
    xp.write(dst, xp.transpose(dst_t, inverse))


_ABSMAX = {}


def _absmax(dt):
    m = _ABSMAX.get(dt)
    if m is None:
        # A bool intermediate holds a byte (SciPy's), up to 255.
        m = _ABSMAX[dt] = 255 if dt.kind == "b" else max(abs(int(np.iinfo(dt).min)),
                                                         int(np.iinfo(dt).max))
    return m


def _compute_dtype(in_dt, out_dt, passes, cval):
    """The dtype the core computes in. SciPy computes in float64 and stores in the output dtype:
    float32 is enough for a float32 or float16 output from an input float32 holds exactly; an
    integer output takes float64 (its truncation then matches SciPy's) unless every sum is an
    integer below 2**24 (small integers, integral weights and cval), exact in float32."""
    if out_dt.kind == "f":
        return _F32 if out_dt.itemsize <= 4 and in_dt in _SMALL else _F64
    if in_dt.kind in "biu" and in_dt.itemsize <= 2 and out_dt.itemsize <= 2:
        reach = max(_absmax(in_dt), _absmax(out_dt))
        c = float(cval)
        if not (c.is_integer() and abs(c) <= reach):
            return _F64
        for p in passes:
            w = p[0]
            if not np.array_equal(w, np.rint(w)) or reach * float(np.abs(w).sum()) >= 2 ** 24:
                return _F64
        return _F32
    return _F64


def _execute(xp, input, out, out_dt, passes, cval, opts, summed=False):
    """Runs passes (weights, convolve, modes, origins, divisor[, "nd" for SciPy's N-D correlate
    rather than its 1-D filters]) on a real input and returns the
    output (out, or a new array of out_dt). As in SciPy, a pass reads the previous one's result
    rounded to the output dtype (summed=False), or, summed=True (laplace), every pass reads the
    input and their results, each rounded to the output dtype, are added in the output dtype. A
    divisor divides a pass's (exact, integer) sum in float64, as SciPy's uniform filter does."""
    in_dt = xp.dtype(input)
    if not (len(passes[0]) > 5 and 0 in tuple(input.shape)):
        # SciPy's C code checks the dtypes, except in its N-D correlate of an empty array.
        _c_types(in_dt, out_dt)
    cdt = _compute_dtype(in_dt, out_dt, passes, cval)
    # Integer outputs want SciPy's direct float64 sums (no FFT, no Winograd). Where the core
    # chooses the strategy and the caller did not ask for direct sums, a pass no strategy can sum
    # directly runs otherwise (_run_relaxed): opts gain whether its sums are integers.
    direct = opts[2] or out_dt.kind not in "fc"
    relax = direct and not opts[2] and not opts[1]
    integral_cval = float(cval).is_integer()

    def pass_opts(w, integral_input):
        if not relax:
            return opts
        return opts + (integral_input and integral_cval and np.array_equal(w, np.rint(w)),)

    src = xp.contiguous(input, cdt)
    shape = tuple(input.shape)
    target = None  # an array the last pass may write: the output itself where the core can
    if out is None:
        if out_dt == cdt and not summed:
            target = out = xp.empty(shape, cdt, input)
    elif (xp.dtype(out) == cdt and not summed and xp.is_contiguous(out) and xp.writeable(out)
          and not xp.overlap(out, input)):
        target = out
    last = len(passes) - 1
    if summed:
        result = None
        for w, convolve, modes, origins, _ in passes:
            r = xp.empty(shape, cdt, src)
            _core(xp, src, r, w, convolve, modes, cval, origins,
                  pass_opts(w, in_dt.kind in "biu"), direct, True)
            r = xp.cast(r, out_dt) if cdt != out_dt else r
            if result is None:
                result = r
            else:
                result += r
    else:
        cur = src
        for i, (w, convolve, modes, origins, divisor, *nd) in enumerate(passes):
            scipy_order = _scipy_order(xp, out_dt, w, opts, bool(nd))
            use_target = i == last and target is not None and divisor is None
            dst = target if use_target else xp.empty(shape, cdt, src)
            if scipy_order == "reference":
                _core(xp, cur, dst, w, convolve, modes, cval, origins,
                      ("reference", "", True), True, not nd)
            else:
                # A pass after the first reads the previous one's integers.
                _core(xp, cur, dst, w, convolve, modes, cval, origins,
                      pass_opts(w, i > 0 or in_dt.kind in "biu"), direct, not nd)
                if scipy_order == "1d":
                    _ties_as_scipy_1d(cur, dst, w, convolve, modes, cval, origins)
                    _spoil_record()
            if divisor is not None:
                dst = xp.contiguous(dst, _F64) / divisor
            if i < last:
                cur = dst if xp.dtype(dst) == out_dt else xp.contiguous(_stored(xp, dst, out_dt),
                                                                         cdt)
            else:
                result = dst
    if result is target:
        return out
    if xp.dtype(result) != out_dt:
        result = xp.cast(result, out_dt)
    if out is None:
        return result
    xp.write(out, result)
    return out


def _scipy_order(xp, out_dt, w, opts, nd):
    """How a pass makes its truncation to an integer output SciPy's where its weights are not
    integers (integral weights on integers sum exactly in any order): a sum that lands within
    rounding of an integer (a Gaussian over a constant region, weights such as 1/9 or 0.1)
    truncates to one side or the other depending on the order of the additions. SciPy's
    correlate and convolve (nd: True) add the taps in C order, which the core's reference
    strategy does too ("reference", for NumPy arrays where no backend or strategy was asked
    for); its 1-D filters in their own order, which _ties_as_scipy_1d repeats for the sums near
    an integer ("1d", NumPy arrays). None: nothing to do (float outputs, integral weights, GPU
    arrays: docs/PYTHON.md)."""
    if out_dt.kind not in "biu" or xp.name != "numpy" or np.array_equal(w, np.rint(w)):
        return None
    if not nd:
        return "1d"
    return "reference" if opts[0] in ("auto", "cpu") and not opts[1] else None


_NUMPY_PAD = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
              "constant": "constant"}


def _ties_as_scipy_1d(src, dst, weights, convolve, modes, cval, origins):
    """dst (float64 sums of a 1-D pass over src, by the core) recomputed with SciPy's arithmetic
    (NI_Correlate1D: symmetric and antisymmetric weights as sums of pairs, outermost pair first;
    others from the last tap) where it lies within rounding of an integer, so that truncation
    gives SciPy's integer. The line is extended as SciPy extends it (numpy.pad's equivalent
    mode); only the elements near an integer are recomputed."""
    long_axes = [a for a, k in enumerate(weights.shape) if k > 1]
    if not long_axes or dst.size == 0:
        return
    axis = long_axes[0]
    w = weights.reshape(-1)
    k = w.shape[0]
    origin = int(origins[axis])
    if convolve:  # SciPy's convolve1d: the weights reversed, the origin mirrored
        w = w[::-1]
        origin = -origin - (0 if k & 1 else 1)
    scale = float(np.abs(w).sum()) * max(float(np.abs(src).max()), abs(cval))
    near = np.abs(dst - np.rint(dst)) <= (k + 2) * 2.0 ** -40 * scale
    idx = np.nonzero(near)
    if idx[0].size == 0:
        return
    size1 = k // 2
    size2 = k - size1 - 1
    pad = [(0, 0)] * src.ndim
    pad[axis] = (size1 + origin, size2 - origin)
    mode = _NUMPY_PAD[_mode(modes[axis])]
    ext = np.pad(src, pad, mode, **({"constant_values": cval} if mode == "constant" else {}))
    base = idx[axis] + size1

    def at(jj):  # SciPy's iline[jj] for each element near an integer
        j = list(idx)
        j[axis] = base + jj
        return ext[tuple(j)]

    eps = np.finfo(np.float64).eps
    symmetric = 0
    if k & 1:
        if all(abs(w[size1 + i] - w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            symmetric = 1
        elif all(abs(w[size1 + i] + w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            symmetric = -1
    if symmetric:
        acc = at(0) * w[size1]
        for jj in range(-size1, 0):
            pair = at(jj) + at(-jj) if symmetric > 0 else at(jj) - at(-jj)
            acc = acc + pair * w[size1 + jj]
    else:
        acc = at(size2) * w[size1 + size2]
        for jj in range(-size1, size2):
            acc = acc + at(jj) * w[size1 + jj]
    dst[idx] = acc


def _stored(xp, x, dt):
    """x as SciPy's C code stores it in an intermediate array of dtype dt and reads it back: a
    bool element keeps the byte of the truncated value (255 for -1), not 0 or 1."""
    return xp.cast(x, np.dtype(np.uint8) if dt.kind == "b" else dt)


def _copy(xp, input, out, out_dt):
    """SciPy's `output[...] = input[...]` (no axis to filter)."""
    out = _allocate(xp, out, out_dt, input)
    xp.assign(out, input)
    return out


def _fusable(out_dt, modes, cval, shape, wshape):
    """Whether a separable filter can go to the core as one N-D filter and give SciPy's result
    (within rounding): a float output (an integer one is rounded between SciPy's 1-D passes), no
    constant mode with a cval other than 0 on a filtered axis (SciPy's later passes read cval
    where the one filter reads cval times the earlier factors' sums), not too many weights, and
    at most 3 axes to the core."""
    if out_dt.kind not in "fc":
        return False
    if cval != 0 and any(_mode(m) == "constant" for m in modes):
        return False
    if math.prod(wshape) > _MAX_FUSED_TAPS:
        return False
    return _fits_core(shape, wshape)


def _along(w, axis, ndim):
    """A 1-D filter as an ndim filter along axis (extent 1 on the others)."""
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return w.reshape(shape)


_FUSED = {}


def _fused(factors, ndim, key):
    """The outer product of the factors as one ndim filter; cached under key (not None)."""
    if key is not None:
        w = _FUSED.get((ndim, key))
        if w is not None:
            return w
    w = np.ones((), np.float64)
    for a, f in factors:
        w = w * _along(f, a, ndim)
    if key is not None:
        if len(_FUSED) >= 256:
            _FUSED.clear()
        w.flags.writeable = False
        _FUSED[(ndim, key)] = w
    return w


def _separable(xp, input, out, out_dt, factors, modes, cval, opts, origins=None, key=None):
    """A filter SciPy applies as 1-D passes, factors[i] = (axis, 1-D weights) in SciPy's order,
    modes[axis] per axis: one N-D filter to the core where that gives SciPy's result (_fusable),
    else one core call per pass with SciPy's rounding between passes. key: hashable, names the
    factors (the fused filter is cached under it), or None."""
    ndim = len(input.shape)
    if origins is None:
        origins = [0] * ndim
    # The modes of the axes filtered, by the core's names; SciPy reads no other.
    given = modes
    modes = ["constant"] * ndim
    for a, _ in factors:
        modes[a] = _mode(given[a])
    used = [modes[a] for a, _ in factors]
    wshape = [1] * ndim
    for a, w in factors:
        wshape[a] = w.shape[0]
    if len(factors) > 1 and _fusable(out_dt, used, cval, input.shape, wshape):
        passes = [(_fused(factors, ndim, key), False, list(modes), list(origins), None)]
    else:
        passes = []
        for a, w in factors:
            o = [0] * ndim
            o[a] = origins[a]
            passes.append((_along(w, a, ndim), False, list(modes), o, None))
    return _execute(xp, input, out, out_dt, passes, cval, opts)


def _split_complex(fn, xp, input, out, out_dt, cval):
    """A real filter fn(part, out_part, cval_part) on the real and imaginary parts of a complex
    input (SciPy's cval: its real part for the real part, its imaginary part for the other)."""
    out = _allocate(xp, out, out_dt, input)
    fn(xp.real(input), xp.real(out), np.real(cval))
    fn(xp.imag(input), xp.imag(out), np.imag(cval))
    return out


def _real_or_split(fn, xp, input, out, out_dt, cval):
    """fn(input, out, out_dt, cval) of a real filter; on complex data (a complex input needs a
    complex output, as in SciPy) fn on the real and imaginary parts (_split_complex)."""
    if xp.dtype(input).kind == "c" or out_dt.kind == "c":
        if out_dt.kind != "c":
            raise RuntimeError("output must have complex dtype")
        return _split_complex(lambda p, o, c: fn(p, o, xp.dtype(o), _real_cval(c)), xp, input,
                              out, out_dt, cval)
    return fn(input, out, out_dt, _real_cval(cval))


def _complex_via_real(call, xp, input, weights, out, cval):
    """SciPy's _complex_via_real_components: call(input, weights, output, cval) on real parts."""
    ci = xp.dtype(input).kind == "c"
    cw = weights.dtype.kind == "c"
    if ci and cw:
        re = xp.real(out)
        call(xp.real(input), weights.real, re, np.real(cval))
        re -= call(xp.imag(input), weights.imag, None, np.imag(cval))
        im = xp.imag(out)
        call(xp.real(input), weights.imag, im, np.real(cval))
        im += call(xp.imag(input), weights.real, None, np.imag(cval))
    elif ci:
        call(xp.real(input), weights, xp.real(out), np.real(cval))
        call(xp.imag(input), weights, xp.imag(out), np.imag(cval))
    else:
        if np.iscomplexobj(cval):
            raise ValueError("Cannot provide a complex-valued cval when the input is real.")
        call(input, weights.real, xp.real(out), cval)
        call(input, weights.imag, xp.imag(out), cval)
    return out


def _real_cval(cval):
    """cval as SciPy's C code reads it (a C double, PyFloat_AsDouble): a str, bytes or Python
    complex is a TypeError; NumPy's complex scalars give their real part (with NumPy's
    ComplexWarning); anything else as float() takes it."""
    if type(cval) is float:
        return cval
    if isinstance(cval, (str, bytes, bytearray, complex)) and not isinstance(cval,
                                                                            np.complexfloating):
        raise TypeError(f"cval must be a real number, not {type(cval).__name__}")
    return float(cval)


def _spoil_record():
    """The call being recorded (_replayable) changed the core's output after the core call."""
    record = getattr(_local, "record", None)
    if record is not None:
        record.append(None)


_REPLAY_DTYPES = (_F32, _F64)


def _replay_kind(x):
    """The kind of array a call's input is, where its calls may replay (NumPy arrays, CuPy
    arrays, PyTorch CUDA tensors; C-contiguous float32 or float64), else None."""
    t = type(x)
    if t is np.ndarray:
        return _NUMPY if x.dtype in _REPLAY_DTYPES and x.flags.c_contiguous else None
    module = t.__module__ or ""
    if not (module.startswith("cupy") or module.startswith("torch")):
        return None
    xp, same = kind_of(x)
    if same is not x or not xp.device:
        return None
    try:
        dt = xp.dtype(x)
    except TypeError:
        return None
    return xp if dt in _REPLAY_DTYPES and xp.is_contiguous(x) else None


def _replay_facts(x):
    """(kind, dtype, shape) of an input whose type the replay table does not read itself
    (python/replay.cpp), where its calls may replay; else None."""
    xp = _replay_kind(x)
    return None if xp is None else (xp, xp.dtype(x), tuple(x.shape))


def _replay_output(xp, out, input, dt, shape):
    """Whether a replay may write `out` itself: an array of the input's type, dtype and shape,
    C-contiguous, writeable and apart from the input (else the full path, which copies)."""
    try:
        return (type(out) is type(input) and xp.dtype(out) == dt and tuple(out.shape) == shape
                and xp.is_contiguous(out) and xp.writeable(out)
                and not xp.contiguous_overlap(out, input))
    except TypeError:  # a tensor of a dtype halo does not take: the full path says so
        return False


_halo.replay_setup(np.ndarray, np.generic, _F32, _F64, _replay_facts, _replay_output,
                   host_weights)


class _ReplayTable:
    """The core calls kept for replays (python/replay.cpp): how many, and clear()."""

    def __len__(self):
        return _halo.replay_size()

    def clear(self):
        _halo.replay_clear()


_REPLAY = _ReplayTable()
_REPLAY_IDS = itertools.count()


def _replayable(fn):
    """Repeated calls skip the argument processing, which on a tiny array costs more than the
    filtering, and on a GPU array is time the GPU waits for: a call that made exactly one core
    call, reading the input itself and writing the array it returned, keeps that core call under
    its arguments (with the input's type, shape and dtype), and a later call with equal arguments
    makes the same core call on a new output of the input's kind (on the input's device and the
    caller's current stream there, read at each call), or into the `output` given, where that is
    an array of the input's type, dtype and shape, C-contiguous, writeable and apart from the
    input. The keys and the replays are python/replay.cpp's; anything it cannot key (objects
    compared by identity, large weights) and calls of other forms (other outputs, integer
    outputs, several passes) take the full path every time."""
    params = list(inspect.signature(fn).parameters)[1:]
    out_at = params.index("output")
    fid = next(_REPLAY_IDS)
    replay = _halo.replay

    @functools.wraps(fn)
    def call(input, *args, **kwargs):
        key = replay(fid, out_at, input, args, kwargs)
        if key is None:
            return fn(input, *args, **kwargs)
        if type(key) is not bytes:
            return key  # a replay's output
        outer = getattr(_local, "record", None)  # a call inside another records on its own
        _local.record = []
        try:
            result = fn(input, *args, **kwargs)
            record = _local.record
        finally:
            _local.record = outer
        if len(record) == 1 and record[0] is not None:
            rxp, src, dst, core_call = record[0]
            xp = _replay_kind(input)
            out = args[out_at] if len(args) > out_at else kwargs.get("output")
            if (xp is not None and rxp is xp and src is input and dst is result
                    and type(result) is type(input) and xp.dtype(result) == xp.dtype(input)
                    and tuple(result.shape) == tuple(input.shape)
                    and (out is None or result is out)):
                _halo.replay_store(key, xp.prepare(xp.dtype(input), core_call))
        return result

    return call


def _on_input_device(fn):
    """Runs fn with the input's GPU as the current device (GPU arrays on another device than the
    current one); a NumPy input costs one type check."""

    @functools.wraps(fn)
    def run(input, *args, **kwargs):
        ctx = device_context(input)
        if ctx is None:
            return fn(input, *args, **kwargs)
        with ctx:
            return fn(input, *args, **kwargs)

    return run


# ---------------------------------------------------------------------------------------------
# correlate, convolve, correlate1d, convolve1d
# ---------------------------------------------------------------------------------------------
def _correlate1d(input, weights, axis, output, mode, cval, origin, convolve, opts):
    xp, input = kind_of(input)
    weights = host_weights(weights)
    if xp.dtype(input).kind == "c" or weights.dtype.kind == "c":
        if weights.dtype.kind == "c" and not convolve:
            weights = weights.conj()  # as numpy.correlate: the weights conjugated
        out, out_dt = _output(output, xp, input, complex_output=True)
        out = _allocate(xp, out, out_dt, input)

        def call(part, w, o, c):
            return _correlate1d(part, w, axis, o, mode, c, origin, convolve, opts)

        return _complex_via_real(call, xp, input, weights, out, cval)
    out, out_dt = _output(output, xp, input)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1 or weights.shape[0] < 1:
        raise RuntimeError("no filter weights given")
    ndim = len(input.shape)
    axis = normalize_axis_index(axis, ndim)
    origin = _origin_1d(origin, len(weights), convolve)
    modes = ["constant"] * ndim
    modes[axis] = _mode(mode)
    origins = [0] * ndim
    origins[axis] = origin
    passes = [(_along(weights, axis, ndim), convolve, modes, origins, None)]
    return _execute(xp, input, out, out_dt, passes, _real_cval(cval), opts)


def _correlate(input, weights, output, mode, cval, origin, convolve, opts):
    xp, input = kind_of(input)
    weights = host_weights(weights)
    if xp.dtype(input).kind == "c" or weights.dtype.kind == "c":
        if weights.dtype.kind == "c" and not convolve:
            weights = weights.conj()
        out, out_dt = _output(output, xp, input, complex_output=True)
        out = _allocate(xp, out, out_dt, input)

        def call(part, w, o, c):
            return _correlate(part, w, o, mode, c, origin, convolve, opts)

        return _complex_via_real(call, xp, input, weights, out, cval)
    ndim = len(input.shape)
    origins = _normalize_sequence(origin, ndim)
    weights = np.asarray(weights, dtype=np.float64)
    wshape = [k for k in weights.shape if k > 0]
    if len(wshape) != ndim:
        raise RuntimeError("filter weights array has incorrect shape.")
    origins = _origins_nd(origins, wshape, convolve)
    if weights.size == 0:
        raise RuntimeError("no filter weights given")
    out, out_dt = _output(output, xp, input)
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise RuntimeError("A sequence of modes is not supported")
    _mode(mode)
    passes = [(weights, convolve, [mode] * ndim, origins, None, "nd")]
    return _execute(xp, input, out, out_dt, passes, _real_cval(cval), opts)


@_replayable
@_on_input_device
def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.correlate1d: a 1-D correlation along the given axis."""
    return _correlate1d(input, weights, axis, output, mode, cval, origin, False,
                        _options(backend, strategy, direct_sums))


@_replayable
@_on_input_device
def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
               backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.convolve1d: a 1-D convolution along the given axis."""
    if kind_name(weights) not in ("cupy", "torch", "torch (CPU)"):
        # SciPy's convolve1d first reverses the weights as given: weights[::-1] of a number or
        # None is a TypeError there, of a 0-d array an IndexError.
        weights[::-1]
    return _correlate1d(input, weights, axis, output, mode, cval, origin, True,
                        _options(backend, strategy, direct_sums))


@_replayable
@_on_input_device
def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *,
              backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.correlate: a multidimensional correlation (weights of the input's rank)."""
    return _correlate(input, weights, output, mode, cval, origin, False,
                      _options(backend, strategy, direct_sums))


@_replayable
@_on_input_device
def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *,
             backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.convolve: a multidimensional convolution (weights of the input's rank)."""
    return _correlate(input, weights, output, mode, cval, origin, True,
                      _options(backend, strategy, direct_sums))


# ---------------------------------------------------------------------------------------------
# Gaussian filters
# ---------------------------------------------------------------------------------------------
def _typed(v):
    """v with its type, inside tuples too: a cache key under which 1, 1.0 and True differ (SciPy
    takes some of them as an order or a radius and refuses others)."""
    if type(v) is tuple:
        return tuple, tuple(_typed(e) for e in v)
    return type(v), v


def _cached(cache, fn, *args):
    """fn(*args), kept in cache under the arguments and their types; computed at each call for
    unhashable arguments (lists, arrays). Errors are not kept."""
    key = _typed(args)
    try:
        r = cache.get(key)
    except TypeError:  # unhashable
        return fn(*args)
    if r is None:
        r = fn(*args)
        if len(cache) >= 256:
            cache.clear()
        cache[key] = r
    return r


_KERNELS = {}
_WEIGHTS = {}
_FACTORS = {}


def _gaussian_kernel1d(sigma, order, radius):
    """SciPy's Gaussian (or its order-th derivative) of radius `radius`, reversed for correlation
    as SciPy's gaussian_filter1d reverses it, by SciPy's code: an order it refuses (1.0, True) is
    refused here the same way. Cached; read-only."""
    return _cached(_KERNELS, _gaussian_kernel1d_of, sigma, order, radius)


def _gaussian_kernel1d_of(sigma, order, radius):
    if order < 0:
        raise ValueError("order must be non-negative")
    exponent_range = np.arange(order + 1)
    sigma2 = sigma * sigma
    x = np.arange(-radius, radius + 1)
    phi_x = np.exp(-0.5 / sigma2 * x ** 2)
    phi_x = phi_x / phi_x.sum()
    if order == 0:
        w = phi_x
    else:
        # f(x) = q(x) * phi(x); q' + q p' applied `order` times to the coefficients of q.
        q = np.zeros(order + 1)
        q[0] = 1
        D = np.diag(exponent_range[1:], 1)
        P = np.diag(np.ones(order) / -sigma2, -1)
        Q_deriv = D + P
        for _ in range(order):
            q = Q_deriv.dot(q)
        q = (x[:, None] ** exponent_range).dot(q)
        w = q * phi_x
    w = np.ascontiguousarray(w[::-1], dtype=np.float64)
    w.flags.writeable = False
    return w


def _gaussian_weights(sigma, order, truncate, radius):
    """(SciPy's reversed kernel, a key naming it). Cached."""
    return _cached(_WEIGHTS, _gaussian_weights_of, sigma, order, truncate, radius)


def _gaussian_weights_of(sigma, order, truncate, radius):
    sd = float(sigma)
    lw = int(truncate * sd + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError("Radius must be a nonnegative integer.")
    # SciPy's kernel squares sigma as given: a str or bytes that float() reads is a TypeError.
    sigma * sigma
    w = _gaussian_kernel1d(sd, order, int(lw))
    return w, ("gauss", sd, int(order), int(lw))


@_replayable
@_on_input_device
def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None, backend="auto", strategy=None,
                      direct_sums=False):
    """scipy.ndimage.gaussian_filter1d: a 1-D Gaussian filter (or a derivative, order > 0)."""
    weights = _gaussian_weights(sigma, order, truncate, radius)[0]
    return _correlate1d(input, weights, axis, output, mode, cval, 0, False,
                        _options(backend, strategy, direct_sums))


def _gaussian_factors(ndim, sigma, order, truncate, radius):
    """gaussian_filter's (axis, reversed kernel) per axis of sigma > 1e-15, and a key naming
    them. Cached."""
    return _cached(_FACTORS, _gaussian_factors_of, ndim, sigma, order, truncate, radius)


def _gaussian_factors_of(ndim, sigma, order, truncate, radius):
    orders = _normalize_sequence(order, ndim)
    sigmas = _normalize_sequence(sigma, ndim)
    radii = _normalize_sequence(radius, ndim)
    kernels = [(a, _gaussian_weights(sigmas[a], orders[a], truncate, radii[a]))
               for a in range(ndim) if sigmas[a] > 1e-15]
    return [(a, w) for a, (w, _) in kernels], tuple((a, k) for a, (_, k) in kernels)


@_replayable
@_on_input_device
def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.gaussian_filter: a multidimensional Gaussian filter, per axis sigma, order,
    mode and radius."""
    opts = _options(backend, strategy, direct_sums)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input)
    ndim = len(input.shape)
    modes = _normalize_sequence(mode, ndim)
    factors, key = _gaussian_factors(ndim, sigma, order, truncate, radius)
    if not factors:
        return _copy(xp, input, out, out_dt)
    return _real_or_split(
        lambda i, o, dt, c: _separable(xp, i, o, dt, factors, modes, c, opts, key=key), xp,
        input, out, out_dt, cval)


# ---------------------------------------------------------------------------------------------
# Uniform filters
# ---------------------------------------------------------------------------------------------
def _uniform_passes(xp, input, out, out_dt, axes, cval, opts):
    """axes: (axis, size, origin, mode) in SciPy's order, already checked."""
    ndim = len(input.shape)
    modes = ["constant"] * ndim
    origins = [0] * ndim
    for a, size, origin, mode in axes:
        modes[a] = mode
        origins[a] = origin
    if out_dt.kind not in "fc":
        # SciPy sums the window exactly (a running sum of integers) and divides in float64: the
        # core sums with weights 1, the division follows, then the truncation of each pass.
        passes = []
        for a, size, origin, mode in axes:
            o = [0] * ndim
            o[a] = origin
            passes.append((_along(np.ones(size), a, ndim), False, modes, o, float(size)))
        return _execute(xp, input, out, out_dt, passes, cval, opts)
    key = tuple(("box", a, size) for a, size, _, _ in axes)
    return _separable(xp, input, out, out_dt, _box_factors(key), modes, cval, opts, origins, key)


@functools.lru_cache(maxsize=256)
def _box_factors(key):
    """The factors 1/size (read-only) of the uniform filter that key names."""
    factors = []
    for _, a, size in key:
        w = np.full(size, 1.0 / size)
        w.flags.writeable = False
        factors.append((a, w))
    return factors


def _uniform_axis(size, origin, mode):
    """(size, origin, mode) of one axis of a uniform filter: ints and the core's mode name,
    checked as SciPy's uniform_filter1d checks them: its range tests on the values given, then its
    C code's conversions to integers (a float size or origin is a TypeError there)."""
    if size < 1:
        raise RuntimeError("incorrect filter size")
    if (size // 2 + origin < 0) or (size // 2 + origin >= size):
        raise ValueError("invalid origin")
    mode = _mode(mode)
    return _ssize(size), _ssize(origin), mode


def _uniform(xp, input, out, out_dt, axes, cval, opts):
    return _real_or_split(lambda i, o, dt, c: _uniform_passes(xp, i, o, dt, axes, c, opts), xp,
                          input, out, out_dt, cval)


@_replayable
@_on_input_device
def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                     backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.uniform_filter1d: a 1-D uniform (box, mean) filter along the given axis."""
    opts = _options(backend, strategy, direct_sums)
    xp, input = kind_of(input)
    axis = normalize_axis_index(axis, len(input.shape))
    if size < 1:
        raise RuntimeError("incorrect filter size")
    out, out_dt = _output(output, xp, input, complex_output=xp.dtype(input).kind == "c")
    return _uniform(xp, input, out, out_dt, [(axis, *_uniform_axis(size, origin, mode))], cval,
                    opts)


@_replayable
@_on_input_device
def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *,
                   backend="auto", strategy=None, direct_sums=False):
    """scipy.ndimage.uniform_filter: a multidimensional uniform filter, per axis size, origin
    and mode."""
    opts = _options(backend, strategy, direct_sums)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input, complex_output=xp.dtype(input).kind == "c")
    ndim = len(input.shape)
    sizes = _normalize_sequence(size, ndim)
    origins = _normalize_sequence(origin, ndim)
    modes = _normalize_sequence(mode, ndim)
    axes = [(a, sizes[a], origins[a], modes[a]) for a in range(ndim) if sizes[a] > 1]
    if not axes:
        return _copy(xp, input, out, out_dt)
    # SciPy's uniform_filter passes int(size) to uniform_filter1d.
    axes = [(a, *_uniform_axis(int(s), o, m)) for a, s, o, m in axes]
    return _uniform(xp, input, out, out_dt, axes, cval, opts)


# ---------------------------------------------------------------------------------------------
# Derivatives: sobel, prewitt, laplace
# ---------------------------------------------------------------------------------------------
_DIFF = np.array([-1.0, 0.0, 1.0])
_SOBEL_SMOOTH = np.array([1.0, 2.0, 1.0])
_PREWITT_SMOOTH = np.array([1.0, 1.0, 1.0])
_SECOND = np.array([1.0, -2.0, 1.0])


def _gradient(input, axis, output, mode, cval, smooth, opts):
    xp, input = kind_of(input)
    ndim = len(input.shape)
    axis = normalize_axis_index(axis, ndim)
    out, out_dt = _output(output, xp, input)
    modes = _normalize_sequence(mode, ndim)
    factors = [(axis, _DIFF)] + [(a, smooth) for a in range(ndim) if a != axis]
    key = ("gradient", axis, float(smooth[1]))
    return _real_or_split(
        lambda i, o, dt, c: _separable(xp, i, o, dt, factors, modes, c, opts, key=key), xp,
        input, out, out_dt, cval)


@_replayable
@_on_input_device
def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0, *, backend="auto",
          strategy=None, direct_sums=False):
    """scipy.ndimage.sobel: the Sobel derivative along axis, smoothed [1, 2, 1] across."""
    return _gradient(input, axis, output, mode, cval, _SOBEL_SMOOTH,
                     _options(backend, strategy, direct_sums))


@_replayable
@_on_input_device
def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0, *, backend="auto",
            strategy=None, direct_sums=False):
    """scipy.ndimage.prewitt: the Prewitt derivative along axis, smoothed [1, 1, 1] across."""
    return _gradient(input, axis, output, mode, cval, _PREWITT_SMOOTH,
                     _options(backend, strategy, direct_sums))


@functools.lru_cache(maxsize=8)
def _laplace_weights(ndim):
    """The sum of [1, -2, 1] along every axis as one filter of extent 3 on each."""
    w = np.zeros((3,) * ndim)
    centre = (1,) * ndim
    for a in range(ndim):
        for d in (0, 2):
            i = list(centre)
            i[a] = d
            w[tuple(i)] = 1.0
    w[centre] = -2.0 * ndim
    w.flags.writeable = False
    return w


def _laplace_real(xp, input, out, out_dt, modes, cval, opts):
    ndim = len(input.shape)
    if out_dt.kind in "fc" and ndim <= 3:
        # One N-D filter, the cross; "nd": its zero weights are no taps, as SciPy's per-axis
        # passes never read off their axis (a NaN or infinity reaches only the cross).
        passes = [(_laplace_weights(ndim), False, list(modes), [0] * ndim, None, "nd")]
        return _execute(xp, input, out, out_dt, passes, cval, opts)
    # SciPy's sum of per-axis results, each rounded to the output dtype.
    passes = [(_along(_SECOND, a, ndim), False, list(modes), [0] * ndim, None)
              for a in range(ndim)]
    return _execute(xp, input, out, out_dt, passes, cval, opts, summed=True)


@_replayable
@_on_input_device
def laplace(input, output=None, mode="reflect", cval=0.0, *, backend="auto", strategy=None,
            direct_sums=False):
    """scipy.ndimage.laplace: the sum of the second differences [1, -2, 1] along every axis."""
    opts = _options(backend, strategy, direct_sums)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input)
    ndim = len(input.shape)
    if ndim == 0:
        return _copy(xp, input, out, out_dt)
    modes = [_mode(m) for m in _normalize_sequence(mode, ndim)]
    return _real_or_split(lambda i, o, dt, c: _laplace_real(xp, i, o, dt, modes, c, opts), xp,
                          input, out, out_dt, cval)
