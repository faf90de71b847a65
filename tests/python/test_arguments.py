"""Every public function against scipy.ndimage on arguments good and bad, one argument changed
from a valid call at a time: where SciPy raises, halo raises the same exception class (halo's
may be a subclass, as halo.Error of RuntimeError); where SciPy returns, halo returns SciPy's
result. SciPy's outcome is computed here, so the table follows the SciPy installed. What halo
does on purpose otherwise (docs/PYTHON.md, "What differs") is in KNOWN_DIFFERENCES below."""
import datetime
import fractions
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches

X = (np.arange(42.0).reshape(6, 7) * 0.37) % 5.0 - 1.5  # float64, no symmetry to hide an axis
XI = (np.arange(42).reshape(6, 7) * 7) % 23  # int64
W1 = np.array([0.5, 1.0, -0.25])
W2 = np.array([[0.5, 1.0, -0.25], [0.0, 2.0, 1.0]])

# Each function's arguments after the input, as keywords with valid values.
FUNCTIONS = {
    "correlate": dict(weights=W2, output=None, mode="reflect", cval=0.0, origin=0),
    "convolve": dict(weights=W2, output=None, mode="reflect", cval=0.0, origin=0),
    "correlate1d": dict(weights=W1, axis=-1, output=None, mode="reflect", cval=0.0, origin=0),
    "convolve1d": dict(weights=W1, axis=-1, output=None, mode="reflect", cval=0.0, origin=0),
    "gaussian_filter": dict(sigma=1.0, order=0, output=None, mode="reflect", cval=0.0,
                            truncate=4.0, radius=None),
    "gaussian_filter1d": dict(sigma=1.0, axis=-1, order=0, output=None, mode="reflect",
                              cval=0.0, truncate=4.0, radius=None),
    "uniform_filter": dict(size=3, output=None, mode="reflect", cval=0.0, origin=0),
    "uniform_filter1d": dict(size=3, axis=-1, output=None, mode="reflect", cval=0.0, origin=0),
    "sobel": dict(axis=-1, output=None, mode="reflect", cval=0.0),
    "prewitt": dict(axis=-1, output=None, mode="reflect", cval=0.0),
    "laplace": dict(output=None, mode="reflect", cval=0.0),
    "gaussian_laplace": dict(sigma=1.0, output=None, mode="reflect", cval=0.0),
    "gaussian_gradient_magnitude": dict(sigma=1.0, output=None, mode="reflect", cval=0.0),
}


def _dt(s):
    return np.array(["2001-01-01", "2001-01-02", "2001-01-04"], "M8[D]")


# Inputs, each with the function's valid arguments (weights and sizes follow the rank).
INPUTS = {
    "str": lambda: "abc",
    "bytes": lambda: b"abc",
    "None": lambda: None,
    "float": lambda: 2.5,
    "int": lambda: 3,
    "list": lambda: [1.0, 4.0, 2.0, 8.0, 5.0],
    "list_int": lambda: [2, 8, 0, 4, 1, 9, 9, 0],
    "nested_list": lambda: X.tolist(),
    "ragged_list": lambda: [[1.0, 2.0], [3.0]],
    "list_str": lambda: ["a", "b", "c"],
    "list_mixed": lambda: [1.0, "b", 3.0],
    "object_float": lambda: X.astype(object),
    "object_int": lambda: XI.astype(object),
    "object_none": lambda: np.array([None, None, None]),
    "datetime64": lambda: _dt("D"),
    "datetime64_2d": lambda: np.zeros((4, 5), "M8[s]"),
    "timedelta64": lambda: np.arange(5).astype("m8[s]"),
    "str_array": lambda: np.array(["ab", "cd", "ef"]),
    "bytes_array": lambda: np.array([b"ab", b"cd", b"ef"]),
    "void_array": lambda: np.zeros(4, "V8"),
    "structured": lambda: np.zeros(4, [("a", "f8"), ("b", "i4")]),
    "zero_d_float": lambda: np.array(2.5),
    "zero_d_int": lambda: np.array(7),
    "zero_d_object": lambda: np.array(2.5, dtype=object),
    "empty_1d": lambda: np.zeros(0),
    "empty_2d": lambda: np.zeros((0, 5)),
    "empty_2d_int": lambda: np.zeros((3, 0), np.int16),
    "bool": lambda: XI % 3 == 0,
    "int8": lambda: XI.astype(np.int8),
    "uint8": lambda: XI.astype(np.uint8),
    "uint16": lambda: XI.astype(np.uint16),
    "int32": lambda: XI.astype(np.int32),
    "uint64": lambda: XI.astype(np.uint64),
    "float32": lambda: X.astype(np.float32),
    "big_endian": lambda: X.astype(">f8"),
    "complex64": lambda: (X + 1j * X[::-1]).astype(np.complex64),
    "complex128": lambda: X + 0.5j * X[::-1],
    "fortran": lambda: np.asfortranarray(X),
    "matrix": lambda: np.matrix(X),
    "masked": lambda: np.ma.masked_array(X, X > 1),
    "3d": lambda: np.arange(60.0).reshape(3, 4, 5) % 7,
    "empty_object": lambda: np.zeros((0, 4), object),
    "empty_datetime64": lambda: np.zeros((2, 0), "M8[s]"),
    "empty_str": lambda: np.zeros((0, 3), "U2"),
    "float16": lambda: X.astype(np.float16),
}

# Values of one argument, the others as in FUNCTIONS.
ORIGINS = {
    "0": 0, "1": 1, "-1": -1, "0.9": 0.9, "1.0": 1.0, "-0.5": -0.5, "True": True,
    "False": False, "np.int64": np.int64(1), "np.int32": np.int32(-1), "np.uint8": np.uint8(1),
    "np.bool_": np.bool_(True), "np.float64": np.float64(1.0), "5": 5, "-5": -5, "2**70": 2 ** 70,
    "str": "1", "None": None, "pair": [0, 1], "pair_float": [0, 0.5], "pair_bool": [True, 0],
    "triple": [0, 0, 0], "single": [0], "array0d": np.array(1), "array": np.array([0, -1]),
    "complex": 1j, "fraction": fractions.Fraction(1, 1),
}
CVALS = {
    "0": 0, "1.5": 1.5, "str": "x", "str_number": "1.5", "bytes": b"1", "None": None,
    "complex": 1j, "complex_real": 1 + 0j, "np.complex128": np.complex128(2), "list": [1.0],
    "list2": [1.0, 2.0], "array0d": np.array(2.0), "array1": np.array([2.0]),
    "array2": np.array([1.0, 2.0]), "np.float32": np.float32(2), "np.int64": np.int64(2),
    "True": True, "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "huge_int": 10 ** 400,
    "fraction": fractions.Fraction(1, 3), "object": object(), "date": datetime.date(2001, 1, 1),
    "datetime64": np.datetime64("2001-01-01"), "timedelta64": np.timedelta64(3, "s"),
    "np.str_": np.str_("1.5"), "np.bytes_": np.bytes_(b"1"), "np.complex64": np.complex64(1 + 2j),
}
MODES = {
    "reflect": "reflect", "constant": "constant", "nearest": "nearest", "mirror": "mirror",
    "wrap": "wrap", "grid-constant": "grid-constant", "grid-mirror": "grid-mirror",
    "grid-wrap": "grid-wrap", "bogus": "bogus", "upper": "REFLECT", "None": None, "int": 2,
    "bytes": b"reflect", "pair": ["reflect", "wrap"], "tuple": ("constant", "nearest"),
    "pair_bad": ["reflect", "bogus"], "single": ["reflect"], "triple": ["reflect"] * 3,
    "np.str_": np.str_("wrap"), "array": np.array(["reflect", "wrap"]),
    "array1": np.array(["wrap"]), "core_name": "zero",
    "pair_arrays": [np.array(["wrap"]), np.str_("nearest")], "pair_none": [None, "wrap"],
}
AXES = {
    "0": 0, "1": 1, "-1": -1, "-2": -2, "2": 2, "-3": -3, "1.0": 1.0, "True": True,
    "np.int64": np.int64(0), "np.uint8": np.uint8(1), "str": "0", "None": None, "list": [0],
    "array0d": np.array(0), "2**70": 2 ** 70,
}
OUTPUTS = {
    "None": None, "float32": np.float32, "float64_name": "float64", "f4": "f4", "d": "d",
    "dtype_int16": np.dtype(np.int16), "i2": "i2", "int8": np.int8, "uint8_name": "uint8",
    "bool": bool, "bool_name": "bool", "float": float, "int": int, "int64_name": "int64",
    "float16": np.float16, "bad_name": "x", "U5": "U5", "object": object,
    "object_dtype": np.dtype(object), "object_name": "object", "datetime": np.dtype("M8[s]"),
    "str_type": str, "complex_name": "complex128", "complex": np.complex64,
    "array": "array:float64", "array_f32": "array:float32", "array_int": "array:int32",
    "array_bool": "array:bool", "array_c": "array:complex128", "array_obj": "array:object",
    "array_dt": "array:M8[s]", "array_str": "array:U3", "array_shape": "array:bad_shape",
    "array_strided": "array:strided", "array_readonly": "array:readonly", "list": "list",
    "array_big_endian": "array:>f8", "number": 3,
}
WEIGHTS_1D = {
    "list": [1.0, 2.0], "ints": [1, 3], "object": np.array([1, 2, 1], dtype=object),
    "object_str": np.array(["a", "b"], dtype=object), "str": "abc", "str_array": np.array(["1"]),
    "complex": np.array([1.0, 2j, -1]), "bool": np.array([True, False, True]),
    "float32": np.float32([0.25, 0.5]), "float16": np.float16([1, 2, 1]), "empty": [],
    "scalar": 2.0, "2d": np.ones((2, 2)), "None": None, "datetime": np.zeros(3, "M8[s]"),
    "long": np.linspace(-1, 1, 15), "ragged": [[1.0], [2.0, 3.0]], "array0d": np.array(2.0),
    "even": [1.0, -1.0, 2.0, 0.5], "nan": [1.0, np.nan],
}
WEIGHTS_2D = {
    "nested_list": [[1.0, 2.0], [3.0, 4.0]], "ints": np.array([[1, 0, -1], [2, 0, -2]]),
    "object": W2.astype(object), "object_str": np.array([["a", "b"]], dtype=object),
    "str": "abc", "complex": W2 + 1j * W2[::-1], "complex_only_imag": 1j * W2,
    "bool": W2 > 0.6, "float32": W2.astype(np.float32), "empty": np.zeros((0, 3)),
    "zero_extent": np.zeros((1, 0)), "scalar": 2.0, "1d": W1, "3d": np.ones((2, 2, 2)),
    "None": None, "datetime": np.zeros((2, 2), "M8[s]"), "strided": np.ones((5, 6))[::2, ::3],
    "big": np.ones((9, 11)), "singleton_axes": np.ones((1, 1)), "array0d": np.array(2.0),
    "nan": np.full((2, 2), np.nan),
}
SIZES = {
    "0": 0, "-1": -1, "1": 1, "2": 2, "2.5": 2.5, "3.0": 3.0, "0.5": 0.5, "str": "3",
    "None": None, "pair": [3, 2], "pair_zero": [0, 3], "triple": [3, 2, 1], "np.int64": np.int64(3),
    "True": True, "huge": 10 ** 20, "complex": 3j, "nan": float("nan"), "array": np.array([3, 1]),
    "array0d": np.array(3), "np.bool_": np.bool_(True),
}
SIGMAS = {
    "-1": -1, "0": 0, "0.5": 0.5, "2": 2, "tiny": 1e-16, "str": "1", "None": None,
    "pair": [1, 2], "pair_zero": [0, 1.5], "triple": [1, 2, 3], "np.float32": np.float32(1),
    "True": True, "complex": 1j, "inf": np.inf, "nan": np.nan, "array": np.array([1.0, 0.7]),
    "fraction": fractions.Fraction(3, 2), "array0d": np.array(1.5), "bytes": b"1",
}
ORDERS = {
    "1": 1, "2": 2, "3": 3, "-1": -1, "1.5": 1.5, "1.0": 1.0, "str": "1", "None": None,
    "pair": [0, 1], "triple": [0, 1, 0], "True": True, "np.int64": np.int64(1), "0.0": 0.0,
    "False": False, "array0d": np.array(1), "pair_float": [0, 1.0], "huge": 10 ** 6,
}
TRUNCATES = {
    "0": 0, "-1": -1, "1.6": 1.6, "str": "4", "None": None, "inf": np.inf, "nan": np.nan,
    "np.float32": np.float32(2.5), "complex": 2j, "list": [4.0],
}
RADII = {
    "0": 0, "2": 2, "-1": -1, "1.5": 1.5, "2.0": 2.0, "str": "2", "pair": [1, 2],
    "pair_none": [None, 2], "triple": [1, 1, 1], "True": True, "np.int64": np.int64(2),
    "array0d": np.array(2), "pair_float": [1, 2.0],
}
VALUES = {"origin": ORIGINS, "cval": CVALS, "mode": MODES, "axis": AXES, "output": OUTPUTS,
          "size": SIZES, "sigma": SIGMAS, "order": ORDERS, "truncate": TRUNCATES,
          "radius": RADII}

# Where halo differs from SciPy on purpose (docs/PYTHON.md, "What differs from SciPy 1.10"):
# SciPy raises, halo returns a result (None) or raises the class given.
KNOWN_DIFFERENCES = {
    # A complex output for a real input holds the real result (SciPy: RuntimeError).
    "output=complex_name": None, "output=complex": None, "output=array_c": None,
    # float16 inputs and outputs are filtered, in float32 (SciPy: RuntimeError).
    "input=float16": None, "output=float16": None,
    # The core's additional mode names are accepted (SciPy: RuntimeError).
    "mode=core_name": None,
    # Non-finite weights are refused (SciPy filters with them).
    "weights=nan": halo.Error,
}


# cvals whose results are the NaN and inf work's (issue 47, items 1-4): here only their classes.
NONFINITE = {"nan", "inf", "-inf"}


def _weights_for(fn, rank):
    if fn in ("correlate", "convolve"):
        return np.ones((3,) * rank) / 3 ** rank if rank != 2 else W2
    return W1


def _input_kwargs(fn, x):
    kw = dict(FUNCTIONS[fn])
    if "weights" in kw:
        try:
            rank = np.ndim(x)
        except ValueError:  # a ragged list
            rank = 1
        kw["weights"] = _weights_for(fn, rank)
    return kw


def _cases():
    for fn in FUNCTIONS:
        for name, make in INPUTS.items():
            yield pytest.param(fn, "input", name, id=f"{fn}-input={name}")
        for arg in FUNCTIONS[fn]:
            table = (WEIGHTS_2D if fn in ("correlate", "convolve") else WEIGHTS_1D
                     ) if arg == "weights" else VALUES[arg]
            for name in table:
                yield pytest.param(fn, arg, name, id=f"{fn}-{arg}={name}")
        for name in CVALS:
            yield pytest.param(fn, "cval_complex_input", name,
                               id=f"{fn}-cval_complex_input={name}")


def _output_value(spec, x):
    if not isinstance(spec, str):
        return spec
    if spec == "list":
        return np.zeros(np.shape(x)).tolist()
    if not spec.startswith("array:"):
        return spec
    kind = spec[6:]
    shape = np.shape(x)
    if kind == "bad_shape":
        return np.zeros(shape + (1,))
    if kind == "strided":
        return np.zeros(tuple(2 * n for n in shape))[(slice(None, None, 2),) * len(shape)]
    if kind == "readonly":
        a = np.zeros(shape)
        a.flags.writeable = False
        return a
    return np.zeros(shape, kind)


def _call(module, fn, x, kw):
    kw = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    if "output" in kw:
        kw["output"] = _output_value(kw["output"], x)
    x = x.copy() if isinstance(x, np.ndarray) else x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(module, fn)(x, **kw), None
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return None, e


def _arguments(fn, arg, name):
    if arg == "input":
        x = INPUTS[name]()
        return x, _input_kwargs(fn, x)
    if arg == "cval_complex_input":
        x = INPUTS["complex128"]()
        kw = _input_kwargs(fn, x)
        kw["mode"] = "constant"
        kw["cval"] = CVALS[name]
        return x, kw
    x = X
    kw = _input_kwargs(fn, x)
    if arg == "weights":
        kw["weights"] = (WEIGHTS_2D if fn in ("correlate", "convolve") else WEIGHTS_1D)[name]
    else:
        kw[arg] = VALUES[arg][name]
        if arg == "cval":
            kw["mode"] = "constant"
    if fn == "uniform_filter1d" and arg == "origin":
        kw["size"] = 4
    return x, kw


def _same_result(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if not isinstance(want, np.ndarray):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind not in "biufc":  # objects, datetimes: SciPy copies them (no axis)
        assert got.tolist() == want.tolist()
        return
    # The same outputs non-finite, the others within the rounding of the sums.
    g = got.astype(np.complex128).ravel()
    w = want.astype(np.complex128).ravel()
    for part in (np.real, np.imag):
        gp, wp = part(g), part(w)
        assert np.array_equal(np.isnan(gp), np.isnan(wp)), "NaN elsewhere than SciPy's"
        inf = np.isinf(wp)
        assert np.array_equal(gp[inf], wp[inf]) and not np.isinf(gp[~inf]).any(), \
            "inf elsewhere than SciPy's"
    finite = np.isfinite(w)
    scale = float(np.max(np.abs(w[finite]))) if finite.any() else 0.0
    assert_matches(got.ravel()[finite], want.ravel()[finite], 8 * scale + 1e-300)


@pytest.mark.parametrize("fn,arg,name", list(_cases()))
def test_as_scipy(fn, arg, name):
    x, kw = _arguments(fn, arg, name)
    want, want_error = _call(ndi, fn, x, kw)
    got, got_error = _call(halo, fn, x, kw)
    if f"{arg}={name}" in KNOWN_DIFFERENCES:
        expected = KNOWN_DIFFERENCES[f"{arg}={name}"]
        if expected is None:
            assert got_error is None, f"{type(got_error).__name__}: {got_error}"
        else:
            assert isinstance(got_error, expected), f"{type(got_error).__name__}: {got_error}"
        return
    if want_error is not None:
        assert got_error is not None, (
            f"SciPy raises {type(want_error).__name__}: {want_error}; halo returns {got!r:.200}")
        assert isinstance(got_error, type(want_error)), (
            f"SciPy raises {type(want_error).__name__}: {want_error}; halo "
            f"{type(got_error).__name__}: {got_error}")
        return
    assert got_error is None, (
        f"SciPy returns {want!r:.200}; halo raises {type(got_error).__name__}: {got_error}")
    if arg.startswith("cval") and name in NONFINITE:
        try:
            _same_result(got, want)
        except AssertionError as e:
            pytest.xfail(f"a non-finite cval: issue 47's NaN and inf work ({e})")
        return
    _same_result(got, want)


def test_issue_47_reproducers():
    """The arguments of issue 47 that halo took or refused otherwise than SciPy."""
    x = np.arange(20.0).reshape(4, 5)
    with pytest.raises(TypeError):
        halo.correlate1d(x, [1.0, 2.0, 1.0], origin=0.9)
    with pytest.raises(TypeError):
        halo.uniform_filter(x, 3, origin=0.9)
    with pytest.raises(RuntimeError):
        halo.gaussian_filter(x.astype(object), 1)
    with pytest.raises(RuntimeError):
        halo.gaussian_filter(np.arange(5).astype("M8[s]"), 1)
    with pytest.raises(RuntimeError):
        halo.uniform_filter1d(np.arange(5).astype("m8[s]"), 3)
    with pytest.raises(TypeError):
        halo.gaussian_filter("abc", 1)
    with pytest.raises(TypeError):
        halo.correlate(x, np.ones((3, 3)), cval="x")
    with pytest.raises(TypeError):
        halo.sobel(np.array(["ab", "cd"]))
    # Caches keyed by value took an order or radius of 1.0 as 1 once 1 had been seen.
    halo.gaussian_filter1d(x, 1.0, order=1, radius=2)
    with pytest.raises(TypeError):
        halo.gaussian_filter1d(x, 1.0, order=1.0)
    with pytest.raises(ValueError):
        halo.gaussian_filter1d(x, 1.0, radius=2.0)
