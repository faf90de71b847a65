"""The arguments of the filters, checked and normalised as scipy.ndimage checks them: halo's
keyword-only options, per-axis sequences, boundary modes, origins, cval and the output (an array,
a dtype or a dtype's name), refused with SciPy's exceptions."""

import functools
import operator
import sys
import warnings
from collections.abc import Iterable

import numpy as np

from . import _halo
from ._arrays import kind_name

_SCALARS = frozenset((int, float, str, type(None)))


_ROUNDINGS = ("truncate", "nearest")


def _options(backend, strategy, direct_sums, rounding="truncate"):
    """The keyword-only options of a filter, checked: (backend, strategy ('' for None),
    direct_sums, rounding), the tuple the passes carry (opts). rounding is the `round` keyword:
    how a sum is stored into an integer output dtype ('truncate', SciPy's; or 'nearest')."""
    if not isinstance(backend, str):
        raise TypeError("backend must be 'auto', 'cpu', 'reference' or 'cuda', not "
                        f"{type(backend).__name__}")
    if strategy is None:
        strategy = ""
    elif not isinstance(strategy, str):
        raise TypeError(f"strategy must be a name or None, not {type(strategy).__name__}")
    if not isinstance(direct_sums, (bool, np.bool_)):
        raise TypeError(f"direct_sums must be a bool, not {type(direct_sums).__name__}")
    if not isinstance(rounding, str):
        raise TypeError(f"round must be 'truncate' or 'nearest', not {type(rounding).__name__}")
    if rounding not in _ROUNDINGS:
        raise ValueError(f"round must be 'truncate' or 'nearest', not {rounding!r}")
    return backend, strategy, bool(direct_sums), str(rounding)


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


_AxisError = getattr(np, "exceptions", np).AxisError  # numpy.exceptions from NumPy 1.25


def _check_axes(axes, ndim):
    """SciPy's _ni_support._check_axes: the axes a filter runs over, as non-negative ints in the
    order given (None: every axis). An element that is not an integer is a TypeError (through
    __index__), another kind of object a ValueError, and so are duplicates. An axis out of range
    is numpy's AxisError, a ValueError as SciPy's. A scalar is checked as a 1-tuple is: SciPy
    leaves a scalar unchecked and negative, and its functions then fail unevenly (an AxisError,
    an IndexError, or correlate's RuntimeError for -1); AxisError is an IndexError too."""
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (operator.index(axes),)
    elif isinstance(axes, Iterable):
        axes = tuple(operator.index(ax) for ax in axes)
    else:
        raise ValueError("axes must be an integer, iterable of integers, or None")
    for ax in axes:
        if ax < -ndim or ax > ndim - 1:
            raise _AxisError(f"specified axis: {ax} is out of range")
    axes = tuple(ax % ndim if ax < 0 else ax for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("axes must be unique")
    return axes


def _on_axes(values, axes, ndim, fill):
    """Per-axis values given for `axes` (one each, in their order) as a list over all ndim axes,
    fill on the others: how SciPy expands sigma, mode and origin to the input's rank."""
    full = [fill] * ndim
    for v, ax in zip(values, axes):
        full[ax] = v
    return full


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
