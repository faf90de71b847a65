"""Every function of halo against scipy.ndimage on random inputs: ranks 1-3 (and batches beyond),
every mode and alias, origins, cval, sizes from 1 element to filters larger than the array, float
and integer dtypes (integer outputs exactly as SciPy's)."""
import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches, random_array

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-constant", "grid-mirror",
         "grid-wrap"]
# Shapes per rank: 1-element axes, primes, short axes that filters overreach.
SHAPES = {1: [(1,), (2,), (7,), (33,)],
          2: [(1, 1), (1, 9), (9, 1), (5, 7), (16, 13)],
          3: [(1, 1, 1), (2, 3, 4), (5, 1, 6), (7, 6, 5)]}
FLOATS = [np.float32, np.float64]


def cases(rank_shapes=SHAPES):
    for rank, shapes in rank_shapes.items():
        for shape in shapes:
            yield rank, shape


def scale_of(x, *weights):
    """max|x| times the product of sum|w| of each factor: the magnitude the errors scale with."""
    s = float(np.max(np.abs(x.astype(np.complex128)))) if x.size else 0.0
    for w in weights:
        s *= float(np.sum(np.abs(np.asarray(w, dtype=np.float64))))
    return s


def pick_origin(rng, k):
    return int(rng.integers(-(k // 2), (k - 1) // 2 + 1))


# ---------------------------------------------------------------------------------------------
# correlate, convolve
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank,shape", list(cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_correlate_convolve(rng, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    # Odd and even extents, some beyond the array's reach.
    for kshape in [(3,) * rank, tuple(int(k) for k in rng.integers(1, 6, rank)),
                   tuple(2 * n + 3 for n in shape)]:
        if np.prod(kshape) > 400:
            continue
        w = rng.uniform(-1, 1, kshape)
        origin = [pick_origin(rng, k) for k in kshape]
        cval = float(rng.uniform(-2, 2))
        for fn in ("correlate", "convolve"):
            got = getattr(halo, fn)(x, w, mode=mode, cval=cval, origin=origin)
            want = getattr(ndi, fn)(x, w, mode=mode, cval=cval, origin=origin)
            assert_matches(got, want, scale_of(x, w) + abs(cval) * scale_of(np.ones(1), w))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64, np.bool_])
@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_correlate_integers_exact(rng, dtype, mode):
    """Integer weights on integer arrays: SciPy's results exactly, overflow wrapping included."""
    x = random_array(rng, (9, 11), dtype)
    w = rng.integers(-3, 4, (3, 4)).astype(float)
    w[0, 0] = 2
    for fn in ("correlate", "convolve"):
        got = getattr(halo, fn)(x, w, mode=mode, cval=3)
        want = getattr(ndi, fn)(x, w, mode=mode, cval=3)
        assert_matches(got, want, 0, exact=True)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_correlate_integers_real_weights(rng, dtype):
    """Non-integral weights on integers: SciPy's truncation of its float64 sums."""
    x = random_array(rng, (12, 10), dtype)
    w = rng.uniform(-1, 1, (3, 3))
    assert_matches(halo.correlate(x, w), ndi.correlate(x, w), 0, exact=True)
    assert_matches(halo.correlate(x, w, output=np.float32), ndi.correlate(x, w, output=np.float32),
                   scale_of(x, w))


@pytest.mark.parametrize("rank,shape", [(1, (40,)), (2, (17, 19)), (3, (6, 7, 8))])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_correlate1d_convolve1d(rng, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    for axis in range(-rank, rank):
        for k in (1, 2, 3, 4, 7, 2 * shape[axis] + 2):
            w = rng.uniform(-1, 1, k)
            origin = pick_origin(rng, k)
            cval = float(rng.uniform(-2, 2))
            for fn in ("correlate1d", "convolve1d"):
                got = getattr(halo, fn)(x, w, axis=axis, mode=mode, cval=cval, origin=origin)
                want = getattr(ndi, fn)(x, w, axis=axis, mode=mode, cval=cval, origin=origin)
                assert_matches(got, want, scale_of(x, w) + abs(cval) * scale_of(np.ones(1), w))


# ---------------------------------------------------------------------------------------------
# Gaussian filters
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank,shape", list(cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_gaussian_filter(rng, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    for sigma, order in [(1.0, 0), (rng.uniform(0.3, 3, rank).tolist(), 0),
                         ([0.0] + [1.5] * (rank - 1), 0), (0.8, list(rng.integers(0, 3, rank)))]:
        cval = float(rng.uniform(-2, 2))
        got = halo.gaussian_filter(x, sigma, order=order, mode=mode, cval=cval)
        want = ndi.gaussian_filter(x, sigma, order=order, mode=mode, cval=cval)
        # Derivative kernels have weights up to ~1/sigma^order times the Gaussian's; outputs
        # near a face mix inputs and cval (which may be far larger than a tiny array's values).
        assert_matches(got, want, (scale_of(x) + abs(cval)) * 50)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gaussian_filter_per_axis_modes_truncate_radius(rng, dtype):
    x = random_array(rng, (11, 8, 9), dtype)
    modes = ["reflect", "constant", "wrap"]
    for kwargs in [dict(truncate=2.0), dict(truncate=6.0), dict(radius=1), dict(radius=[2, 0, 3]),
                   dict(order=[1, 0, 2])]:
        got = halo.gaussian_filter(x, [1.2, 0.7, 2.0], mode=modes, cval=0.5, **kwargs)
        want = ndi.gaussian_filter(x, [1.2, 0.7, 2.0], mode=modes, cval=0.5, **kwargs)
        assert_matches(got, want, scale_of(x) * 20)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", MODES)
def test_gaussian_filter1d(rng, dtype, mode):
    x = random_array(rng, (13, 21), dtype)
    for axis, sigma, order, kwargs in [(0, 1.0, 0, {}), (1, 2.5, 1, {}), (-1, 0.5, 2, {}),
                                       (0, 3.0, 0, dict(truncate=1.5)), (1, 1.0, 0,
                                                                         dict(radius=5))]:
        got = halo.gaussian_filter1d(x, sigma, axis=axis, order=order, mode=mode, cval=-1.25,
                                     **kwargs)
        want = ndi.gaussian_filter1d(x, sigma, axis=axis, order=order, mode=mode, cval=-1.25,
                                     **kwargs)
        assert_matches(got, want, scale_of(x) * 10)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64,
                                   np.uint64])
@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest"])
def test_gaussian_filter_integers_exact(rng, dtype, mode):
    """Integer outputs: SciPy's per-axis passes, each truncated to the output dtype."""
    x = random_array(rng, (15, 12), dtype)
    for sigma in (1.0, [2.0, 0.6]):
        got = halo.gaussian_filter(x, sigma, mode=mode, cval=5)
        want = ndi.gaussian_filter(x, sigma, mode=mode, cval=5)
        assert_matches(got, want, 0, exact=True)
    # A float input into an integer output, and an integer input into a float output.
    xf = random_array(rng, (15, 12), np.float64) * 50
    if np.dtype(dtype).kind == "u":
        # Negative values wrap to ~2^64, beyond float64's integers: then sums in another order
        # differ in the last bits, SciPy's own per-axis passes included.
        xf = np.abs(xf)
    assert_matches(halo.gaussian_filter(xf, 1.3, output=dtype, mode=mode),
                   ndi.gaussian_filter(xf, 1.3, output=dtype, mode=mode), 0, exact=True)
    assert_matches(halo.gaussian_filter(x, 1.3, output=np.float32, mode=mode),
                   ndi.gaussian_filter(x, 1.3, output=np.float32, mode=mode), scale_of(x))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint64])
@pytest.mark.parametrize("mode", MODES)
def test_integer_ties_as_scipy(rng, dtype, mode):
    """Sums that land on an integer up to rounding (constant regions under a Gaussian, weights
    such as 1/9 or 0.1) truncate as SciPy's, whose order of additions halo follows there."""
    x = np.zeros((40, 37), dtype)
    x[5:30, 8:33] = 200 if dtype != np.int16 else -120
    x[:, 30:] = 37
    x[12:20, 2:6] = random_array(rng, (8, 4), dtype)
    for sigma in (0.5, 1.0, 1.5, 2.0, [3.0, 0.7]):
        assert_matches(halo.gaussian_filter(x, sigma, mode=mode, cval=3),
                       ndi.gaussian_filter(x, sigma, mode=mode, cval=3), 0, exact=True)
    assert_matches(halo.gaussian_filter1d(x, 1.3, axis=0, order=1, mode=mode),
                   ndi.gaussian_filter1d(x, 1.3, axis=0, order=1, mode=mode), 0, exact=True)
    y = random_array(rng, (23, 19), dtype)
    for w in (np.ones((3, 3)) / 9, np.full((2, 3), 0.1), np.array([[0.1, 0.2], [0.3, 0.4]])):
        for fn in ("correlate", "convolve"):
            origin = [pick_origin(rng, k) for k in w.shape]
            assert_matches(getattr(halo, fn)(y, w, mode=mode, cval=2, origin=origin),
                           getattr(ndi, fn)(y, w, mode=mode, cval=2, origin=origin), 0,
                           exact=True)
    for w in (np.full(3, 1 / 3), np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.3, 0.1, 0.3]),
              np.array([-0.3, 0.0, 0.3]), np.full(5, 0.2)):
        for origin in range(-(len(w) // 2), (len(w) - 1) // 2 + 1):
            for fn, axis in (("correlate1d", -1), ("convolve1d", 0)):
                assert_matches(
                    getattr(halo, fn)(y, w, axis=axis, mode=mode, cval=2, origin=origin),
                    getattr(ndi, fn)(y, w, axis=axis, mode=mode, cval=2, origin=origin), 0,
                    exact=True)


# ---------------------------------------------------------------------------------------------
# Uniform filters
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank,shape", list(cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_filter(rng, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    for size in (3, 2, [int(s) for s in rng.integers(1, 6, rank)], 2 * max(shape) + 1):
        sizes = size if isinstance(size, list) else [size] * rank
        origin = [pick_origin(rng, s) for s in sizes]
        cval = float(rng.uniform(-2, 2))
        got = halo.uniform_filter(x, size, mode=mode, cval=cval, origin=origin)
        want = ndi.uniform_filter(x, size, mode=mode, cval=cval, origin=origin)
        assert_matches(got, want, (scale_of(x) + abs(cval)) * 4)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_filter1d(rng, mode, dtype):
    x = random_array(rng, (14, 9, 5), dtype)
    for axis in (0, 1, 2, -1):
        for size in (1, 2, 3, 6, 31):
            origin = pick_origin(rng, size)
            got = halo.uniform_filter1d(x, size, axis=axis, mode=mode, cval=0.75, origin=origin)
            want = ndi.uniform_filter1d(x, size, axis=axis, mode=mode, cval=0.75, origin=origin)
            assert_matches(got, want, scale_of(x) * 4)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64])
@pytest.mark.parametrize("mode", ["reflect", "constant", "mirror", "wrap"])
def test_uniform_integers_exact(rng, dtype, mode):
    """SciPy sums the window exactly and divides in float64: equal results, ties included."""
    x = random_array(rng, (13, 17), dtype)
    for size in (3, 4, [5, 2], 9):
        assert_matches(halo.uniform_filter(x, size, mode=mode, cval=2),
                       ndi.uniform_filter(x, size, mode=mode, cval=2), 0, exact=True)
    for size in (2, 3, 7):
        assert_matches(halo.uniform_filter1d(x, size, axis=0, mode=mode),
                       ndi.uniform_filter1d(x, size, axis=0, mode=mode), 0, exact=True)
    # Constant input: every mean is exact (gh-6930's case, where running sums rounded down).
    c = np.full((9, 9), 3, dtype)
    assert np.all(halo.uniform_filter(c, 5, mode=mode, cval=3) == 3)


# ---------------------------------------------------------------------------------------------
# sobel, prewitt, laplace
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank,shape", list(cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_sobel_prewitt_laplace(rng, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    cval = float(rng.uniform(-2, 2))
    for axis in range(-1, rank):
        for fn in ("sobel", "prewitt"):
            got = getattr(halo, fn)(x, axis=axis, mode=mode, cval=cval)
            want = getattr(ndi, fn)(x, axis=axis, mode=mode, cval=cval)
            assert_matches(got, want, (scale_of(x) + abs(cval)) * 4 ** rank)
    got = halo.laplace(x, mode=mode, cval=cval)
    want = ndi.laplace(x, mode=mode, cval=cval)
    assert_matches(got, want, (scale_of(x) + abs(cval)) * 4 * rank)


def test_derivatives_per_axis_modes(rng):
    x = random_array(rng, (9, 10, 11), np.float64)
    modes = ["nearest", "constant", "mirror"]
    for fn in ("sobel", "prewitt"):
        for axis in range(3):
            assert_matches(getattr(halo, fn)(x, axis, mode=modes, cval=1.5),
                           getattr(ndi, fn)(x, axis, mode=modes, cval=1.5), scale_of(x) * 200)
    assert_matches(halo.laplace(x, mode=modes, cval=1.5), ndi.laplace(x, mode=modes, cval=1.5),
                   scale_of(x) * 20)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.uint64])
@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_derivatives_integers_exact(rng, dtype, mode):
    """Exact, with SciPy's wrap-around of each pass in the output dtype (uint8 gradients)."""
    for shape in [(20,), (11, 13), (5, 6, 7)]:
        x = random_array(rng, shape, dtype)
        for axis in range(len(shape)):
            for fn in ("sobel", "prewitt"):
                assert_matches(getattr(halo, fn)(x, axis, mode=mode, cval=4),
                               getattr(ndi, fn)(x, axis, mode=mode, cval=4), 0, exact=True)
        assert_matches(halo.laplace(x, mode=mode, cval=4), ndi.laplace(x, mode=mode, cval=4), 0,
                       exact=True)


# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------
ALL_REAL = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
            np.uint64, np.float32, np.float64]


_W2 = np.array([[1.0, -2.5, 0.5], [2.0, 1.0, -1.0]])
_W1 = np.array([0.25, -1.0, 2.0, 0.5])
CALLS = {
    "correlate": lambda lib, x, **kw: lib.correlate(x, _W2, **kw),
    "convolve": lambda lib, x, **kw: lib.convolve(x, _W2, mode="constant", cval=1, **kw),
    "correlate1d": lambda lib, x, **kw: lib.correlate1d(x, _W1, axis=0, **kw),
    "convolve1d": lambda lib, x, **kw: lib.convolve1d(x, _W1, mode="wrap", **kw),
    "gaussian_filter": lambda lib, x, **kw: lib.gaussian_filter(x, [1.5, 0.8], **kw),
    "gaussian_filter1d": lambda lib, x, **kw: lib.gaussian_filter1d(x, 1.2, axis=0, order=1,
                                                                    **kw),
    "uniform_filter": lambda lib, x, **kw: lib.uniform_filter(x, [3, 4], **kw),
    "uniform_filter1d": lambda lib, x, **kw: lib.uniform_filter1d(x, 5, mode="nearest", **kw),
    "sobel": lambda lib, x, **kw: lib.sobel(x, 0, **kw),
    "prewitt": lambda lib, x, **kw: lib.prewitt(x, mode="mirror", **kw),
    "laplace": lambda lib, x, **kw: lib.laplace(x, **kw),
}


def _all_functions(x, lib, output=None):
    """Every function once on x (2-D), with SciPy's signature (output: a dtype, or None)."""
    kw = {} if output is None else {"output": output}
    return {name: call(lib, x, **kw) for name, call in CALLS.items()}


@pytest.mark.parametrize("dtype", ALL_REAL)
def test_every_dtype_as_scipy(rng, dtype):
    """Output dtype follows the input; integers and bools exactly as SciPy's."""
    x = random_array(rng, (10, 12), dtype)
    got, want = _all_functions(x, halo), _all_functions(x, ndi)
    for name in got:
        exact = np.dtype(dtype).kind in "biu"
        try:
            assert_matches(got[name], want[name], scale_of(x) * 100, exact=exact)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("in_dtype,out_dtype", [
    (np.uint8, np.float32), (np.int16, np.float64), (np.float64, np.float32),
    (np.float32, np.float64), (np.float64, np.int16), (np.float32, np.uint8),
    (np.int32, np.int8), (np.uint16, np.int64), (np.int64, np.float32), (np.float64, np.uint32)])
@pytest.mark.parametrize("form", ["dtype", "type", "str", "array"])
def test_output_dtypes(rng, in_dtype, out_dtype, form):
    x = random_array(rng, (10, 12), in_dtype)
    if np.dtype(in_dtype).kind == "f":
        x = (x * 300).astype(in_dtype)
    spec = {"dtype": np.dtype(out_dtype), "type": out_dtype, "str": np.dtype(out_dtype).name,
            "array": None}[form]
    for name in ("correlate", "gaussian_filter", "uniform_filter", "sobel", "laplace",
                 "correlate1d"):
        if form == "array":
            out = np.full(x.shape, 77, out_dtype)
            got = CALLS[name](halo, x, output=out)
            assert got is out
        else:
            got = CALLS[name](halo, x, output=spec)
        want = CALLS[name](ndi, x, output=out_dtype)
        try:
            assert_matches(got, want, scale_of(x) * 100)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


def test_float16(rng):
    """SciPy refuses float16; halo computes it in float32 and rounds to float16."""
    x = random_array(rng, (9, 10), np.float16)
    ref = _all_functions(x.astype(np.float32), ndi)
    got = _all_functions(x, halo)
    for name, g in got.items():
        assert g.dtype == np.float16
        assert_matches(g.astype(np.float32), ref[name], scale_of(x) * 200 * 50)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex(rng, dtype):
    """Complex inputs and weights as SciPy: real and imaginary parts filtered apart."""
    x = random_array(rng, (9, 11), dtype)
    xr = random_array(rng, (9, 11), np.float64)
    w = random_array(rng, (3, 2), np.complex128)
    w1 = random_array(rng, (4,), np.complex128)
    cval = 0.5 - 0.25j
    checks = [
        ("correlate", (x, w), dict(mode="constant", cval=cval)),
        ("convolve", (x, w), dict(mode="constant", cval=cval)),
        ("correlate", (x, w.real), dict(mode="wrap")),
        ("correlate", (xr, w), {}),
        ("convolve", (xr, w), dict(output=np.complex64)),
        ("correlate1d", (x, w1), dict(mode="constant", cval=cval)),
        ("convolve1d", (x, w1, 0), dict(mode="mirror")),
        ("correlate1d", (xr, w1), {}),
        ("gaussian_filter", (x, 1.3), dict(mode="constant", cval=cval)),
        ("gaussian_filter1d", (x, 0.7), dict(order=1)),
        ("uniform_filter", (x, 3), dict(mode="constant", cval=cval)),
        ("uniform_filter1d", (x, 4, 0), {}),
        ("sobel", (x,), dict(mode="constant", cval=cval)),
        ("prewitt", (x, 0), {}),
        ("laplace", (x,), dict(mode="constant", cval=cval)),
    ]
    for name, args, kwargs in checks:
        got = getattr(halo, name)(*args, **kwargs)
        want = getattr(ndi, name)(*args, **kwargs)
        try:
            assert_matches(got, want, (scale_of(args[0]) + abs(cval)) * 50)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None
    with pytest.warns(UserWarning, match="promoting specified output dtype to complex"):
        halo.correlate(x, w, output=np.float64)
    with pytest.raises(RuntimeError):
        halo.correlate(x, w, output=np.zeros(x.shape))
    with pytest.raises(ValueError):
        halo.correlate(xr, w, mode="constant", cval=1j)


# ---------------------------------------------------------------------------------------------
# Layouts: batches and ranks beyond 3, strides, outputs, aliasing
# ---------------------------------------------------------------------------------------------
def test_higher_ranks_as_batches(rng):
    x = random_array(rng, (2, 3, 4, 5, 6), np.float32)
    checks = [
        ("correlate1d", (x, [1.0, -2.0, 0.5]), dict(axis=2)),
        ("gaussian_filter", (x, [0, 0, 1.0, 1.5, 0.7]), {}),
        ("gaussian_filter", (x, 1.0), {}),  # five filtered axes: one core call per axis
        ("uniform_filter", (x, [1, 3, 1, 3, 1]), {}),
        ("uniform_filter", (x, 3), dict(mode="wrap")),
        ("sobel", (x, 3), {}),
        ("laplace", (x,), {}),
        ("correlate", (x, rng.uniform(-1, 1, (1, 3, 1, 2, 1))), {}),
        ("correlate", (x, rng.uniform(-1, 1, (1, 1, 3, 2, 3))), dict(mode="nearest")),
    ]
    for name, args, kwargs in checks:
        got = getattr(halo, name)(*args, **kwargs)
        want = getattr(ndi, name)(*args, **kwargs)
        assert_matches(got, want, scale_of(x) * 4 ** 5)


def test_four_dense_axes_as_scipy(rng):
    """A dense filter over 4 axes runs as a sum of 3-axis problems (test_many_axes.py has
    the rest)."""
    x = random_array(rng, (3, 4, 5, 6), np.float32)
    w = rng.uniform(-1, 1, (2, 2, 2, 2))
    assert_matches(halo.correlate(x, w), ndi.correlate(x, w), scale_of(x, w))


def test_zero_dim_and_empty(rng):
    x = np.array(2.5)
    for fn, args in [("gaussian_filter", (1.0,)), ("uniform_filter", (3,)), ("laplace", ())]:
        assert_matches(getattr(halo, fn)(x, *args), getattr(ndi, fn)(x, *args), 3)
    e = np.zeros((0, 5), np.float32)
    for fn, args in [("gaussian_filter", (1.0,)), ("uniform_filter", (3,)), ("sobel", ()),
                     ("correlate", (np.ones((3, 3)),))]:
        assert getattr(halo, fn)(e, *args).shape == (0, 5)


def _strided_views(rng, dtype):
    base = random_array(rng, (14, 22), dtype)
    return {"step": base[::2, 1::3], "transposed": base.T, "negative": base[::-1, ::-2],
            "fortran": np.asfortranarray(base), "column": base[:, 3]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_strided_inputs(rng, dtype):
    for name, v in _strided_views(rng, dtype).items():
        c = np.ascontiguousarray(v)
        for fn, args in [("gaussian_filter", (1.1,)), ("correlate1d", ([1.0, 2.0, -1.0],)),
                         ("uniform_filter", (3,)), ("sobel", ()), ("laplace", ())]:
            got = getattr(halo, fn)(v, *args)
            assert_matches(got, getattr(ndi, fn)(c, *args), scale_of(c) * 20)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8])
def test_output_arrays_poisoned_and_strided(rng, dtype):
    x = random_array(rng, (12, 10), dtype)
    want = ndi.gaussian_filter(x, 1.4, mode="wrap")
    poison = 123 if np.dtype(dtype).kind in "iu" else np.nan
    # Contiguous, strided, transposed and Fortran-ordered outputs: every element written.
    big = np.full((24, 30), poison, dtype)
    for out in [np.full(x.shape, poison, dtype), big[::2, ::3], np.full(x.shape[::-1], poison,
                                                                       dtype).T,
                np.asfortranarray(np.full(x.shape, poison, dtype))]:
        r = halo.gaussian_filter(x, 1.4, output=out, mode="wrap")
        assert r is out
        assert_matches(out, want, scale_of(x))
    # The rest of a strided output's base is untouched.
    untouched = np.ones(big.shape, bool)
    untouched[::2, ::3] = False
    if np.dtype(dtype).kind == "f":
        assert np.all(np.isnan(big[untouched]))
    else:
        assert np.all(big[untouched] == poison)


def test_output_aliasing_input(rng):
    for fn, args in [("gaussian_filter", (1.3,)), ("correlate", (rng.uniform(-1, 1, (3, 3)),)),
                     ("convolve1d", ([1.0, 2.0, 3.0],)), ("uniform_filter", (4,)),
                     ("sobel", ()), ("prewitt", (0,)), ("laplace", ()),
                     ("uniform_filter1d", (3, 0)), ("gaussian_filter1d", (2.0,))]:
        x = random_array(rng, (13, 11), np.float64)
        want = getattr(ndi, fn)(x.copy(), *args)
        r = getattr(halo, fn)(x, *args, output=x)  # in place
        assert r is x
        assert_matches(x, want, scale_of(want) * 10 + 1)
        # Overlapping views: the output one row below the input.
        base = random_array(rng, (14, 11), np.float64)
        inp, out = base[:-1], base[1:]
        want = getattr(ndi, fn)(inp.copy(), *args)
        getattr(halo, fn)(inp, *args, output=out)
        assert_matches(out, want, scale_of(want) * 10 + 1)


def test_inputs_other_than_arrays():
    lst = [[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]
    assert_matches(halo.gaussian_filter(lst, 1), ndi.gaussian_filter(lst, 1), 10)
    assert_matches(halo.correlate1d([2, 8, 0, 4, 1, 9, 9, 0], [1, 3]),
                   ndi.correlate1d([2, 8, 0, 4, 1, 9, 9, 0], [1, 3]), 0, exact=True)


def test_big_endian_input(rng):
    x = random_array(rng, (8, 9), np.float64).astype(">f8")
    assert_matches(halo.gaussian_filter(x, 1.0), ndi.gaussian_filter(x, 1.0), 3)


def test_large_sigma_falls_back_to_passes(rng):
    """A separable filter too large to send as one N-D filter runs as one call per axis."""
    x = random_array(rng, (40, 30, 20), np.float32)
    got = halo.gaussian_filter(x, 20.0, mode="wrap")  # 161^3 weights: beyond the fused limit
    assert_matches(got, ndi.gaussian_filter(x, 20.0, mode="wrap"), scale_of(x) * 3)


# ---------------------------------------------------------------------------------------------
# Strategies and backends
# ---------------------------------------------------------------------------------------------
def test_info_and_strategies():
    info = halo.info()
    names = [s["name"] for s in halo.strategies()]
    assert info["strategies"] == names
    assert {"reference", "cpu", "cpu_separable", "cpu_fft"} <= set(names)
    assert isinstance(info["version"], str) and info["version"]
    if not info["cuda_compiled"]:
        assert info["cuda_devices"] == [] and info["cuda_unavailable_because"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_cpu_strategy(rng, dtype):
    x = random_array(rng, (37, 41), dtype)
    w = rng.uniform(-1, 1, (5, 5))
    g = np.outer(np.hanning(7) + 0.01, np.hanning(9) + 0.02)
    want = ndi.correlate(x, w, mode="mirror")
    want_g = ndi.correlate(x, g, mode="nearest")
    for strategy in ("reference", "cpu", "cpu_fft"):
        got = halo.correlate(x, w, mode="mirror", backend="cpu" if strategy != "reference"
                             else "reference", strategy=strategy)
        assert halo.last_run()["strategy"] == strategy
        # FFT errors are bounded in norm over a tile (docs/ACCURACY.md): a looser bound.
        assert_matches(got, want, scale_of(x, w) * (50 if strategy == "cpu_fft" else 1))
    got = halo.correlate(x, g, mode="nearest", strategy="cpu_separable")
    assert halo.last_run()["strategy"] == "cpu_separable"
    assert_matches(got, want_g, scale_of(x, g))
    halo.correlate(x, g, mode="nearest", direct_sums=True)
    assert halo.last_run()["strategy"] != "cpu_separable"


def test_no_gpu_library_is_imported_for_numpy(rng):
    import sys
    before = {m for m in ("cupy", "torch") if m in sys.modules}
    halo.gaussian_filter(random_array(rng, (5, 5), np.float32), 1.0)
    assert {m for m in ("cupy", "torch") if m in sys.modules} == before


def test_threads_share_nothing(rng):
    """The GIL is released while the core runs: threads give the results of serial calls."""
    from concurrent.futures import ThreadPoolExecutor
    xs = [random_array(rng, (64, 80), np.float32) for _ in range(8)]
    serial = [halo.gaussian_filter(x, 2.0) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda x: halo.gaussian_filter(x, 2.0), xs))
    for s, t in zip(serial, threaded):
        assert np.array_equal(s, t)


# ---------------------------------------------------------------------------------------------
# Errors: SciPy's types, halo's messages
# ---------------------------------------------------------------------------------------------
def test_errors():
    x = np.ones((5, 6), np.float32)
    w = np.ones((3, 3))
    with pytest.raises(RuntimeError, match="boundary mode"):
        halo.correlate(x, w, mode="bogus")
    with pytest.raises(RuntimeError):
        halo.gaussian_filter(x, 1.0, mode=["reflect", "bogus"])
    with pytest.raises(RuntimeError, match="sequence of modes"):
        halo.correlate(x, w, mode=["reflect", "wrap"])
    with pytest.raises(ValueError, match="origin"):
        halo.correlate(x, w, origin=2)
    with pytest.raises(ValueError, match="origin"):
        halo.convolve1d(x, [1.0, 2.0], origin=1)
    with pytest.raises(ValueError, match="invalid origin"):
        halo.uniform_filter(x, 3, origin=[0, 2])
    with pytest.raises(RuntimeError, match="incorrect shape"):
        halo.correlate(x, np.ones(3))
    with pytest.raises(RuntimeError, match="no filter weights"):
        halo.correlate1d(x, [])
    with pytest.raises(RuntimeError, match="output shape"):
        halo.gaussian_filter(x, 1.0, output=np.zeros((5, 5), np.float32))
    with pytest.raises(RuntimeError, match="length equal to input rank"):
        halo.gaussian_filter(x, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="incorrect filter size"):
        halo.uniform_filter1d(x, 0)
    with pytest.raises(ValueError, match="Radius"):
        halo.gaussian_filter1d(x, 1.0, radius=-1)
    with pytest.raises(ValueError, match="order"):
        halo.gaussian_filter(x, 1.0, order=-1)
    with pytest.raises(getattr(np, "exceptions", np).AxisError):
        halo.sobel(x, axis=2)
    with pytest.raises(ValueError, match="unknown backend"):
        halo.gaussian_filter(x, 1.0, backend="gpu")
    with pytest.raises(ValueError, match="unknown strategy 'warp'"):
        halo.gaussian_filter(x, 1.0, strategy="warp")
    with pytest.raises(TypeError):
        halo.gaussian_filter(x, 1.0, backend=1)
    with pytest.raises(TypeError):
        halo.gaussian_filter(x, 1.0, direct_sums="yes")
    with pytest.raises(TypeError):
        halo.gaussian_filter(x, 1.0, 0, None, "reflect", 0.0, 4.0, None)  # radius keyword-only
    with pytest.raises(TypeError):
        halo.correlate(x, w, mode="constant", cval=1j)
    # The core's refusals: halo.Error, a RuntimeError, with its reason.
    with pytest.raises(halo.Error, match="direct sums"):
        halo.correlate(x, np.ones((3, 5)), strategy="cpu_separable", direct_sums=True)
    with pytest.raises(halo.Error, match="finite"):
        halo.correlate(x, np.full((3, 3), np.nan))
    if not halo.info()["cuda_devices"]:
        with pytest.raises(halo.Error, match="CUDA|GPU|cuda"):
            halo.gaussian_filter(x, 1.0, backend="cuda")
    assert issubclass(halo.Error, RuntimeError)


def test_scipy_examples():
    """The examples of SciPy's docstrings."""
    assert np.array_equal(halo.correlate1d([2, 8, 0, 4, 1, 9, 9, 0], weights=[1, 3]),
                          [8, 26, 8, 12, 7, 28, 36, 9])
    assert np.array_equal(halo.convolve1d([2, 8, 0, 4, 1, 9, 9, 0], weights=[1, 3]),
                          [14, 24, 4, 13, 12, 36, 27, 0])
    a = np.arange(50, step=2).reshape((5, 5))
    assert np.array_equal(halo.gaussian_filter(a, sigma=1),
                          [[4, 6, 8, 9, 11], [10, 12, 14, 15, 17], [20, 22, 24, 25, 27],
                           [29, 31, 33, 34, 36], [35, 37, 39, 40, 42]])
    np.testing.assert_allclose(halo.gaussian_filter1d([1.0, 2.0, 3.0, 4.0, 5.0], 1),
                               [1.42704095, 2.06782203, 3.0, 3.93217797, 4.57295905], rtol=1e-8)


def test_mode_aliases_match(rng):
    x = random_array(rng, (9, 8), np.float64)
    for a, b in [("grid-constant", "constant"), ("grid-mirror", "reflect"), ("grid-wrap", "wrap")]:
        assert np.array_equal(halo.gaussian_filter(x, 1.0, mode=a, cval=0.5),
                              halo.gaussian_filter(x, 1.0, mode=b, cval=0.5))


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_every_valid_origin(rng, fn):
    x = random_array(rng, (9, 10), np.float64)
    for k0, k1 in itertools.product([1, 2, 3, 4], [2, 5]):
        w = rng.uniform(-1, 1, (k0, k1))
        for o0 in range(-(k0 // 2), (k0 - 1) // 2 + 1):
            for o1 in range(-(k1 // 2), (k1 - 1) // 2 + 1):
                got = getattr(halo, fn)(x, w, origin=[o0, o1], mode="constant", cval=0.3)
                want = getattr(ndi, fn)(x, w, origin=[o0, o1], mode="constant", cval=0.3)
                assert_matches(got, want, scale_of(x, w) + 1)
