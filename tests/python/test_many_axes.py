"""Every function of halo on 4-D and 5-D arrays against scipy.ndimage: dense filters over more
than three axes (a sum of 3-axis problems), separable ones (1-D passes), every mode and alias,
cval, origins, even extents, filters larger than the array, 1-element axes, integer outputs
exactly (sums that land near an integer included), NaN and infinities in SciPy's places, a GPU
kind's path on a stand-in, and channels-last layouts equal to channels-first ones."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import (assert_matches, assert_same_nonfinite, finite_scale, random_array,
                     with_nonfinite)
from test_filters import FLOATS, MODES, pick_origin, scale_of

# 1-element axes, axes shorter than the filters, an axis of 1 between filtered ones.
SHAPES = [(3, 4, 5, 6), (1, 5, 2, 7), (4, 1, 3, 1), (2, 6, 1, 5),
          (2, 3, 4, 3, 5), (3, 1, 2, 4, 2), (1, 2, 3, 1, 4)]
INTEGERS = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
            np.bool_]
BASE_MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]


def ids(shape):
    return "x".join(map(str, shape))


def kernel_shapes(rng, shape):
    """Odd, random (even included) and larger-than-the-array extents, at most 3000 weights."""
    ndim = len(shape)
    out = [(3,) * ndim, tuple(int(k) for k in rng.integers(1, 6, ndim)),
           tuple(n + 2 if n < 4 else int(rng.integers(1, 4)) for n in shape),
           tuple(2 * n + 1 if i < 2 else 2 for i, n in enumerate(shape))]
    return [k for k in out if np.prod(k) <= 3000]


def weights_for(rng, kshape, kind):
    w = rng.uniform(-1, 1, kshape)
    if kind == "zeros":  # zero weights, and whole zero slices along the leading axes
        w[rng.uniform(0, 1, kshape) < 0.3] = 0
        if kshape[0] > 1:
            w[int(rng.integers(0, kshape[0]))] = 0
        w.flat[int(rng.integers(0, w.size))] = 0.75
    return w


def bound(x, w, cval):
    return scale_of(x, w) + abs(cval) * scale_of(np.ones(1), w)


# ---------------------------------------------------------------------------------------------
# correlate, convolve: dense filters over 4 and 5 axes
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_correlate_convolve(rng, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    for kshape in kernel_shapes(rng, shape):
        for kind in ("dense", "zeros"):
            w = weights_for(rng, kshape, kind)
            origin = [pick_origin(rng, k) for k in kshape]
            cval = float(rng.uniform(0.5, 2)) * (1 if rng.integers(2) else -1)
            for fn in ("correlate", "convolve"):
                got = getattr(halo, fn)(x, w, mode=mode, cval=cval, origin=origin)
                want = getattr(ndi, fn)(x, w, mode=mode, cval=cval, origin=origin)
                assert_matches(got, want, bound(x, w, cval))


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_every_origin_and_even_extent(rng, fn):
    """Every valid origin on each axis of a 4-D filter of even and odd extents."""
    x = random_array(rng, (4, 5, 3, 6), np.float64)
    w = rng.uniform(-1, 1, (2, 3, 4, 2))
    for axis in range(4):
        k = w.shape[axis]
        for o in range(-(k // 2), (k - 1) // 2 + 1):
            origin = [0] * 4
            origin[axis] = o
            for mode in BASE_MODES:
                got = getattr(halo, fn)(x, w, mode=mode, cval=-1.5, origin=origin)
                want = getattr(ndi, fn)(x, w, mode=mode, cval=-1.5, origin=origin)
                assert_matches(got, want, bound(x, w, 1.5))


def test_footprint_edges(rng):
    """Weights at or below DBL_EPSILON are no taps (SciPy's footprint): slices of them are left
    out, and a filter of none gives zeros, as SciPy's sums of nothing."""
    x = random_array(rng, (3, 4, 5, 2), np.float64)
    eps = np.finfo(np.float64).eps
    w = rng.uniform(-1, 1, (3, 2, 3, 2))
    w[0] = eps
    w[2, 1] = -eps / 2
    x[1, 2, 3, 1] = np.inf
    for fn in ("correlate", "convolve"):
        assert_same_nonfinite(getattr(halo, fn)(x, w), getattr(ndi, fn)(x, w),
                              finite_scale(x, w, 0), fn)
        tiny = np.full((2, 3, 2, 2), eps)
        got = getattr(halo, fn)(x, tiny, mode="constant", cval=np.nan)
        np.testing.assert_array_equal(got, getattr(ndi, fn)(x, tiny, mode="constant",
                                                            cval=np.nan))
        np.testing.assert_array_equal(got, np.zeros_like(x))


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("mode", BASE_MODES)
def test_correlate_convolve_integers_exact(rng, dtype, mode):
    """Integer outputs equal SciPy's: integral filters with integral and other cvals, and
    weights such as 0.1 or 1/n over few distinct values, whose sums land near integers and
    truncate as SciPy's order of additions (C order of the taps) makes them."""
    for shape in [(3, 4, 2, 5), (2, 3, 2, 3, 4)]:
        x = random_array(rng, shape, dtype)
        few = rng.integers(1, 4, shape).astype(dtype)
        kshape = tuple(int(k) for k in rng.integers(1, 4, len(shape)))
        kshape = (2,) + kshape[1:]
        for src, w, cval in [
                (x, rng.integers(-3, 4, kshape).astype(float), 3.0),
                (x, rng.integers(-3, 4, kshape).astype(float), 0.7),
                (few, np.full(kshape, 0.1), 2.0),
                (few, np.full(kshape, 1 / np.prod(kshape)), 1.0),
                (x, rng.uniform(-1, 1, kshape), -2.0)]:
            origin = [pick_origin(rng, k) for k in kshape]
            for fn in ("correlate", "convolve"):
                got = getattr(halo, fn)(src, w, mode=mode, cval=cval, origin=origin)
                want = getattr(ndi, fn)(src, w, mode=mode, cval=cval, origin=origin)
                assert_matches(got, want, 0, exact=True)
    # A float input into an integer output: the same truncation of SciPy's sums.
    xf = np.abs(random_array(rng, (3, 3, 4, 4), np.float64)) * 40
    w = np.full((2, 2, 3, 2), 0.1)
    assert_matches(halo.correlate(xf, w, output=dtype, mode=mode),
                   ndi.correlate(xf, w, output=dtype, mode=mode), 0, exact=True)


def test_axes_over_four_of_five(rng):
    """axes naming 4 of 5 axes: the weights over those, an axis not filtered between them."""
    x = random_array(rng, (3, 4, 2, 5, 3), np.float64)
    w = rng.uniform(-1, 1, (2, 3, 3, 2))
    for axes, at in [((0, 1, 3, 4), 2), ((1, 2, 3, 4), 0), ((0, 2, 3, 4), 1)]:
        w5 = np.expand_dims(w, at)
        for fn in ("correlate", "convolve"):
            got = getattr(halo, fn)(x, w, mode="wrap", origin=[0, 1, -1, 0], axes=axes)
            origin = [0] * 5
            for a, o in zip(axes, [0, 1, -1, 0]):
                origin[a] = o
            want = getattr(ndi, fn)(x, w5, mode="wrap", origin=origin)
            assert_matches(got, want, bound(x, w, 0))


# ---------------------------------------------------------------------------------------------
# 1-D filters along each axis of 4-D and 5-D arrays
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
@pytest.mark.parametrize("mode", MODES)
def test_one_dimensional(rng, shape, mode):
    x = random_array(rng, shape, np.float64)
    cval = -1.75
    for axis in range(-len(shape), len(shape)):
        n = shape[axis]
        for k in (2, 3, 4, 2 * n + 3):
            w = rng.uniform(-1, 1, k)
            o = pick_origin(rng, k)
            for fn in ("correlate1d", "convolve1d"):
                assert_matches(
                    getattr(halo, fn)(x, w, axis=axis, mode=mode, cval=cval, origin=o),
                    getattr(ndi, fn)(x, w, axis=axis, mode=mode, cval=cval, origin=o),
                    bound(x, w, cval))
            assert_matches(halo.uniform_filter1d(x, k, axis, mode=mode, cval=cval, origin=o),
                           ndi.uniform_filter1d(x, k, axis, mode=mode, cval=cval, origin=o),
                           scale_of(x) + abs(cval))
        for sigma, order in [(0.8, 0), (1.5, 1), (2.0, 2)]:
            assert_matches(
                halo.gaussian_filter1d(x, sigma, axis, order, mode=mode, cval=cval),
                ndi.gaussian_filter1d(x, sigma, axis, order, mode=mode, cval=cval),
                (scale_of(x) + abs(cval)) * 10)


# ---------------------------------------------------------------------------------------------
# Separable filters and derivatives over every axis
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_separable_and_derivatives(rng, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    ndim = len(shape)
    cval = 1.25
    big = (scale_of(x) + abs(cval)) * 50 * ndim
    checks = [
        ("gaussian_filter", (1.0,), {}),
        ("gaussian_filter", ([float(s) for s in rng.uniform(0.4, 2.0, ndim)],),
         dict(order=[int(o) for o in rng.integers(0, 3, ndim)])),
        ("gaussian_filter", ([0.0] + [1.2] * (ndim - 1),), dict(radius=2)),
        ("uniform_filter", (3,), {}),
        ("uniform_filter", ([int(k) for k in rng.integers(1, 6, ndim)],),
         dict(origin=-1 if ndim % 2 else 0)),
        ("uniform_filter", ([2 * n + 1 for n in shape],), {}),
        ("laplace", (), {}),
        ("gaussian_laplace", (0.9,), {}),
        ("gaussian_gradient_magnitude", ([float(s) for s in rng.uniform(0.5, 1.5, ndim)],),
         {}),
    ] + [(fn, (), dict(axis=a)) for fn in ("sobel", "prewitt") for a in (0, ndim - 1, -2)]
    for name, args, kwargs in checks:
        got = getattr(halo, name)(x, *args, mode=mode, cval=cval, **kwargs)
        want = getattr(ndi, name)(x, *args, mode=mode, cval=cval, **kwargs)
        assert_matches(got, want, big)


@pytest.mark.parametrize("shape", [(3, 4, 5, 6), (2, 3, 4, 3, 5)], ids=ids)
def test_per_axis_modes(rng, shape):
    x = random_array(rng, shape, np.float64)
    ndim = len(shape)
    modes = [MODES[int(i)] for i in rng.integers(0, len(MODES), ndim)]
    for name, args, kwargs in [("gaussian_filter", (1.1,), {}), ("uniform_filter", (3,), {}),
                               ("sobel", (), dict(axis=1)), ("prewitt", (), dict(axis=-1)),
                               ("laplace", (), {}), ("gaussian_laplace", (1.0,), {}),
                               ("gaussian_gradient_magnitude", (0.8,), {})]:
        got = getattr(halo, name)(x, *args, mode=modes, cval=0.5, **kwargs)
        want = getattr(ndi, name)(x, *args, mode=modes, cval=0.5, **kwargs)
        assert_matches(got, want, (scale_of(x) + 0.5) * 50 * ndim)


@pytest.mark.parametrize("shape", [(3, 4, 5, 6), (2, 3, 1, 3, 5)], ids=ids)
@pytest.mark.parametrize("fn", ["generic_laplace", "generic_gradient_magnitude"])
def test_generic(rng, shape, fn):
    x = random_array(rng, shape, np.float64)

    def d2(input, axis, output, mode, cval, scale):
        return ndi.correlate1d(input, [scale, -2 * scale, scale], axis, output, mode, cval)

    def d1(input, axis, output, mode, cval, scale):
        return ndi.correlate1d(input, [-scale, 0, scale], axis, output, mode, cval)

    derivative = d2 if fn == "generic_laplace" else d1
    for mode in BASE_MODES:
        got = getattr(halo, fn)(x, derivative, mode=mode, cval=0.5, extra_arguments=(1.5,))
        want = getattr(ndi, fn)(x, derivative, mode=mode, cval=0.5, extra_arguments=(1.5,))
        assert_matches(got, want, (scale_of(x) + 0.5) * 10 * len(shape))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64,
                                   np.bool_])
@pytest.mark.parametrize("mode", BASE_MODES)
def test_integer_outputs_exact(rng, dtype, mode):
    """Every function's integer output on 4-D and 5-D arrays: SciPy's truncations exactly."""
    for shape in [(3, 5, 4, 6), (2, 3, 4, 1, 5)]:
        x = random_array(rng, shape, dtype)
        ndim = len(shape)
        checks = [
            ("gaussian_filter", (1.0,), {}), ("gaussian_filter", ([0.7] * (ndim - 1) + [0],), {}),
            ("uniform_filter", (3,), {}), ("uniform_filter", ([2] * ndim,), dict(origin=-1)),
            ("sobel", (), dict(axis=0)), ("prewitt", (), dict(axis=-1)), ("laplace", (), {}),
            ("gaussian_laplace", (1.0,), {}), ("gaussian_gradient_magnitude", (1.0,), {}),
            ("correlate1d", ([0.1, 0.2, 0.3],), dict(axis=1)),
            ("convolve1d", ([1, -2, 3, 1],), dict(axis=-1, origin=1)),
            ("gaussian_filter1d", (1.3,), dict(axis=2, order=1)),
            ("uniform_filter1d", (4,), dict(axis=0)),
        ]
        for name, args, kwargs in checks:
            # SciPy's uniform filter keeps a running sum along each line, which a cval such as
            # 0.7 makes inexact; halo's exact sums are SciPy's for integral values only.
            for cval in (3,) if name.startswith("uniform") else (3, 0.7):
                got = getattr(halo, name)(x, *args, mode=mode, cval=cval, **kwargs)
                want = getattr(ndi, name)(x, *args, mode=mode, cval=cval, **kwargs)
                assert_matches(got, want, 0, exact=True)


# ---------------------------------------------------------------------------------------------
# NaN and infinities
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", BASE_MODES)
def test_nonfinite(rng, dtype, mode):
    """NaN, +inf and -inf reach exactly the outputs they reach in SciPy (N-D functions: zero
    weights are no taps; 1-D filters and those built on them: every weight is one)."""
    for shape in [(3, 4, 5, 6), (2, 3, 1, 4, 3), (1, 5, 2, 7)]:
        ndim = len(shape)
        x = with_nonfinite(rng, shape, dtype, count=int(rng.integers(1, 4)))
        for cval in (1.5, float(rng.choice([np.nan, np.inf, -np.inf]))):
            for kind in ("dense", "zeros"):
                kshape = tuple(int(k) for k in rng.integers(1, 4, ndim))
                w = weights_for(rng, kshape, kind)
                for fn in ("correlate", "convolve"):
                    assert_same_nonfinite(getattr(halo, fn)(x, w, mode=mode, cval=cval),
                                          getattr(ndi, fn)(x, w, mode=mode, cval=cval),
                                          finite_scale(x, w, cval),
                                          f"{fn} {shape} {kshape} {kind} cval {cval}")
            scale = finite_scale(x, np.ones(1), cval) * 50 * ndim
            for name, args, kwargs in [
                    ("correlate1d", ([0.5, 0.0, -1.0],), dict(axis=1)),
                    ("convolve1d", ([0.25, 1.0],), dict(axis=-1)),
                    ("gaussian_filter1d", (1.0,), dict(axis=0, order=1)),
                    ("gaussian_filter", (0.8,), {}), ("sobel", (), dict(axis=2)),
                    ("prewitt", (), dict(axis=0)), ("laplace", (), {}),
                    ("gaussian_laplace", (0.7,), {}), ("gaussian_gradient_magnitude", (0.7,), {})]:
                assert_same_nonfinite(
                    getattr(halo, name)(x, *args, mode=mode, cval=cval, **kwargs),
                    getattr(ndi, name)(x, *args, mode=mode, cval=cval, **kwargs), scale,
                    f"{name} {shape} cval {cval}")
            # SciPy's running sums spread a NaN along the whole line: halo answers as the
            # windows do, SciPy's correlate1d with 1/k weights (docs/PYTHON.md, "What differs").
            want = x
            for a in range(ndim):
                want = ndi.correlate1d(want, np.full(3, 1 / 3), a, mode=mode, cval=cval)
            assert_same_nonfinite(halo.uniform_filter(x, 3, mode=mode, cval=cval), want, scale,
                                  f"uniform_filter {shape} cval {cval}")


# ---------------------------------------------------------------------------------------------
# A GPU kind's path (test_device_path.py's stand-in: NumPy arrays run by the core's host entry)
# ---------------------------------------------------------------------------------------------
def test_stand_in_many_axes(monkeypatch, rng):
    from test_device_path import FakeCuPy, on_fake
    from halo import _arrays
    fake = FakeCuPy()
    monkeypatch.setitem(_arrays._kinds, "cupy", fake)
    x = random_array(rng, (3, 4, 5, 6), np.float32)
    w = rng.uniform(-1, 1, (3, 2, 3, 2))
    for mode in BASE_MODES:
        for fn in ("correlate", "convolve"):
            got = getattr(halo, fn)(on_fake(x), w, mode=mode, cval=2.0, origin=[1, 0, -1, 0])
            assert type(got) is type(on_fake(x))
            want = getattr(ndi, fn)(x, w, mode=mode, cval=2.0, origin=[1, 0, -1, 0])
            assert_matches(np.asarray(got), want, bound(x, w, 2.0))
    assert len(fake.calls) > 2 * len(BASE_MODES)  # several core calls each
