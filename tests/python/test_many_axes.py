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


# ---------------------------------------------------------------------------------------------
# Channels last: runs of axes the filter does not reach, innermost, go to the batch in a copy
# ---------------------------------------------------------------------------------------------
def channel_calls(rng, ndim, channels):
    """(name, args, kwargs) of calls filtering every axis of an ndim array but those in channels;
    per-axis arguments as lists over the axes, so that they can be permuted with the array."""
    def per_axis(on, off):
        return [off if a in channels else on for a in range(ndim)]

    w = rng.uniform(-1, 1, tuple(1 if a in channels else k
                                 for a, k in enumerate([5, 4, 3, 5][:ndim])))
    filtered = tuple(a for a in range(ndim) if a not in channels)
    return [
        ("gaussian_filter", (per_axis(2.0, 0.0),), {}),
        ("gaussian_filter", (per_axis(1.2, 0.0),), dict(order=per_axis(1, 0), mode="wrap")),
        ("uniform_filter", (per_axis(5, 1),), {}),
        ("uniform_filter", (per_axis(4, 1),), dict(mode="constant", cval=0.5,
                                                   origin=per_axis(-1, 0))),
        ("correlate", (w,), {}),
        ("convolve", (w,), dict(mode="mirror", origin=per_axis(1, 0))),
        ("correlate1d", (np.array([0.5, -1.0, 2.0, 0.25]),), dict(axis=filtered[0], origin=-1)),
        ("gaussian_filter1d", (1.5,), dict(axis=filtered[-1], order=2)),
        ("uniform_filter1d", (3,), dict(axis=filtered[0], mode="nearest")),
        ("laplace", (), dict(axes=filtered)),
        ("gaussian_laplace", ([1.0] * len(filtered),), dict(axes=filtered)),
    ]


def permuted_call(args, kwargs, perm):
    """The arguments of a call on x, for x.transpose(perm): per-axis lists and arrays of x's
    rank permuted, axis and axes renumbered."""
    def move(v):
        return [v[a] for a in perm] if isinstance(v, list) and len(v) == len(perm) else v

    inverse = [perm.index(a) for a in range(len(perm))]
    args = tuple(a.transpose(perm) if isinstance(a, np.ndarray) and a.ndim == len(perm)
                 else move(a) for a in args)
    kw = {}
    for k, v in kwargs.items():
        if k == "axis":
            v = inverse[v]
        elif k == "axes":
            v = tuple(inverse[a] for a in v)
        kw[k] = move(v)
    return args, kw


@pytest.mark.parametrize("shape", [(64, 64, 8), (181, 181, 3), (2, 96, 96, 4), (96, 100, 2, 2),
                                   (120, 130, 1, 3), (40, 50, 3)], ids=ids)
@pytest.mark.parametrize("dtype", FLOATS)
def test_channels_last_equals_channels_first(rng, shape, dtype):
    """An array whose innermost axes the filter does not reach (channels last: merged with the
    axis before them, the filter spread along both, and the edges computed again, from 2^15
    elements on; the last shape is smaller) gives the result of the same data laid out channels
    first, and SciPy's, within rounding."""
    x = random_array(rng, shape, dtype)
    ndim = len(shape)
    channels = [ndim - 2, ndim - 1] if shape[-2] <= 2 else [ndim - 1]
    perm = channels + [a for a in range(ndim) if a not in channels]
    first = np.ascontiguousarray(x.transpose(perm))
    inverse = [perm.index(a) for a in range(ndim)]
    for name, args, kwargs in channel_calls(rng, ndim, channels):
        got = getattr(halo, name)(x, *args, **kwargs)
        pargs, pkw = permuted_call(args, kwargs, perm)
        ref = getattr(halo, name)(first, *pargs, **pkw).transpose(inverse)
        assert_matches(got, ref, scale_of(x) * 20)
        if "axes" not in kwargs:  # (Debian's SciPy has no axes: test_laplace_axes.py)
            assert_matches(got, getattr(ndi, name)(x, *args, **kwargs), scale_of(x) * 20)


@pytest.mark.parametrize("forced", [False, True], ids=["rule", "merged"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_channels_last_as_scipy(rng, monkeypatch, mode, dtype, forced):
    """Channels last against SciPy under every mode: random filters of odd and even extents,
    every origin's range, filters as wide as the axis (moved to the batch instead), 3 filtered
    axes before the channels, and the 1-D filters along each filtered axis; by halo's rule, and
    merged wherever it can be (the edges' strips on these small arrays, long filters spread)."""
    from halo import _calls
    if forced:
        monkeypatch.setattr(_calls, "_STRIPS_SIZE", 0)
        monkeypatch.setattr(_calls, "_DILATED_TAPS", 1 << 30)
        _calls._core_plan.cache_clear()
        halo._REPLAY.clear()
    seen = []
    dilated = _calls._core_dilated

    def spy(*args):
        seen.append(tuple(args[1].shape))
        return dilated(*args)

    monkeypatch.setattr(_calls, "_core_dilated", spy)
    for shape in [(70, 80, 6), (181, 181, 1, 3), (20, 40, 25, 2), (9, 400, 12), (2, 50, 70, 5)]:
        x = random_array(rng, shape, dtype)
        ndim = len(shape)
        c = ndim - 1
        filtered = [a for a in range(ndim) if shape[a] > 1 and a < (c - 1 if shape[c - 1] == 1
                                                                   else c)]
        cval = float(rng.uniform(0.5, 2))
        for _ in range(2):
            kshape = [1] * ndim
            for a in filtered:
                kshape[a] = int(rng.integers(1, 8))
            kshape[filtered[-1]] = int(rng.integers(2, 8))
            w = rng.uniform(-1, 1, kshape)
            origin = [pick_origin(rng, k) for k in kshape]
            for fn in ("correlate", "convolve"):
                got = getattr(halo, fn)(x, w, mode=mode, cval=cval, origin=origin)
                want = getattr(ndi, fn)(x, w, mode=mode, cval=cval, origin=origin)
                assert_matches(got, want, bound(x, w, cval))
        wide = [1] * ndim
        wide[filtered[-1]] = shape[filtered[-1]] + 1
        w = rng.uniform(-1, 1, wide)
        assert_matches(halo.correlate(x, w, mode=mode, cval=cval),
                       ndi.correlate(x, w, mode=mode, cval=cval), bound(x, w, cval))
        sigma = [float(rng.uniform(0.5, 2)) if a in filtered else 0.0 for a in range(ndim)]
        size = [int(rng.integers(2, 6)) if a in filtered else 1 for a in range(ndim)]
        for name, args, kw in [("gaussian_filter", (sigma,), {}),
                               ("gaussian_filter", (sigma,), dict(order=1)),
                               ("uniform_filter", (size,), dict(origin=-1)),
                               ("uniform_filter", (size,), {})]:
            assert_matches(getattr(halo, name)(x, *args, mode=mode, cval=cval, **kw),
                           getattr(ndi, name)(x, *args, mode=mode, cval=cval, **kw),
                           (scale_of(x) + cval) * 10)
        for a in filtered:
            k = int(rng.integers(2, 7))
            w1 = rng.uniform(-1, 1, k)
            o = pick_origin(rng, k)
            for fn in ("correlate1d", "convolve1d"):
                assert_matches(getattr(halo, fn)(x, w1, a, mode=mode, cval=cval, origin=o),
                               getattr(ndi, fn)(x, w1, a, mode=mode, cval=cval, origin=o),
                               bound(x, w1, cval))
    assert len(seen) > 30


@pytest.mark.parametrize("mode", ["constant", "reflect", "nearest"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32])
def test_channels_last_outputs(rng, monkeypatch, dtype, mode):
    """Channels last with integer outputs (SciPy's exactly, sums near integers included), output
    arrays (strided, of another dtype, the input itself), and NaN and infinities in SciPy's
    places (by the rule, and merged with the edges' strips)."""
    shape = (100, 120, 3)
    x = random_array(rng, shape, dtype)
    few = rng.integers(1, 4, shape).astype(dtype)
    for name, src, args in [("gaussian_filter", x, ([1.5, 1.0, 0.0],)),
                            ("gaussian_filter", few, ([0.8, 1.2, 0.0],)),
                            ("uniform_filter", x, ([3, 5, 1],)),
                            ("correlate", few, (np.full((3, 2, 1), 0.1),)),
                            ("convolve", x, (np.arange(1.0, 7.0).reshape(2, 3, 1) / 7,)),
                            ("correlate1d", few, (np.full(4, 0.1), 1)),
                            ("laplace", x, ())]:
        kw = dict(axes=(0, 1)) if name == "laplace" else {}
        want = getattr(ndi, name)(src, *args, mode=mode, cval=2, **kw) if not kw else \
            ndi.correlate1d(src, [1, -2, 1], 0, mode=mode, cval=2) + \
            ndi.correlate1d(src, [1, -2, 1], 1, mode=mode, cval=2)
        got = getattr(halo, name)(src, *args, mode=mode, cval=2, **kw)
        assert_matches(got, want.astype(got.dtype), scale_of(src) * 20)
        out = np.full((100, 120, 6), -7.0)[:, :, ::2]
        assert getattr(halo, name)(src, *args, output=out, mode=mode, cval=2, **kw) is out
        assert_matches(out, getattr(halo, name)(src, *args, output=np.float64, mode=mode,
                                                cval=2, **kw), scale_of(src) * 20)
        y = src.copy()
        getattr(halo, name)(y, *args, output=y, mode=mode, cval=2, **kw)
        np.testing.assert_array_equal(y, got)
    if np.dtype(dtype).kind != "f":
        return
    from halo import _calls
    v = with_nonfinite(rng, shape, dtype, count=6)
    for forced in (False, True):
        if forced:
            monkeypatch.setattr(_calls, "_STRIPS_SIZE", 0)
            halo._REPLAY.clear()
        for cval in (1.0, np.nan):
            for name, args, kw in [("gaussian_filter", ([2.0, 2.0, 0.0],), {}),
                                   ("gaussian_filter", ([0.7, 0.6, 0.0],), {}),  # merged
                                   ("gaussian_filter", ([1.0, 2.0, 0.0],), dict(order=1)),
                                   ("correlate", (weights_for(rng, (5, 4, 1), "zeros"),), {}),
                                   ("uniform_filter1d", (5,), dict(axis=1))]:
                want = getattr(ndi, name)(v, *args, mode=mode, cval=cval, **kw)
                if name == "uniform_filter1d":  # SciPy's running sums: the windows' answer
                    want = ndi.correlate1d(v, np.full(5, 0.2), 1, mode=mode, cval=cval)
                assert_same_nonfinite(getattr(halo, name)(v, *args, mode=mode, cval=cval, **kw),
                                      want, finite_scale(v, np.ones(25), cval),
                                      f"{name} {mode} {kw}")


@pytest.mark.parametrize("shape,dtype", [((1100, 1000, 3), np.float32),
                                         ((3, 600, 700, 3), np.float64),
                                         ((700, 900, 2, 2), np.float32)], ids=str)
def test_channels_last_moved_equals_channels_first(rng, shape, dtype):
    """Filters too long to spread over the channels move them to the batch (copies shared among
    threads from 8 MiB on, one batch element at a time where one is large): the core call is
    the channels-first one, and so is the result, bit for bit."""
    x = random_array(rng, shape, dtype)
    ndim = len(shape)
    channels = [a for a in range(ndim) if a >= ndim - (2 if shape[-2] == 2 else 1)]
    sigma = [0.0 if a in channels else 2.0 for a in range(ndim)]
    if shape[0] == 3:
        sigma[0] = 0.0  # a batch before the filtered axes
    perm = channels + [a for a in range(ndim) if a not in channels]
    first = np.ascontiguousarray(x.transpose(perm))
    got = halo.gaussian_filter(x, sigma, mode="mirror")
    want = halo.gaussian_filter(first, [sigma[a] for a in perm], mode="mirror")
    np.testing.assert_array_equal(got, want.transpose([perm.index(a) for a in range(ndim)]))


def test_channels_last_on_a_gpu_kind(monkeypatch, rng):
    """GPU arrays are not moved (the rule was measured on the CPU): the core takes them as they
    are, with SciPy's results."""
    from test_device_path import FakeCuPy, on_fake
    from halo import _arrays
    fake = FakeCuPy()
    monkeypatch.setitem(_arrays._kinds, "cupy", fake)
    x = random_array(rng, (128, 128, 3), np.float32)
    got = halo.gaussian_filter(on_fake(x), [2.0, 2.0, 0.0])
    assert fake.calls == [(np.float32, (128, 128, 3))]
    assert_matches(np.asarray(got), ndi.gaussian_filter(x, [2.0, 2.0, 0.0]), scale_of(x))


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest"])
def test_channels_last_strips_by_the_rule(rng, mode):
    """An array large enough for the rule to merge under the edge modes (2^20 elements)."""
    x = random_array(rng, (600, 700, 3), np.float32)
    w = rng.uniform(-1, 1, (5, 4, 1))
    for fn, args, kw in [("correlate", (w,), dict(origin=[1, -1, 0])), ("convolve", (w,), {}),
                         ("uniform_filter", ([5, 3, 1],), {})]:
        assert_matches(getattr(halo, fn)(x, *args, mode=mode, **kw),
                       getattr(ndi, fn)(x, *args, mode=mode, **kw), scale_of(x, w) * 2)


def test_channels_last_replayed(rng):
    """A merged call under constant or wrap is one core call on the arrays as given, which
    repeated calls replay, with the full path's result."""
    halo._REPLAY.clear()
    w = rng.uniform(-1, 1, (3, 4, 1))
    for mode in ("constant", "wrap"):
        x = random_array(rng, (200, 180, 3), np.float32)
        first = halo.correlate(x, w, mode=mode, cval=0.5)
        hits = halo._halo.replay_hits()["numpy"]
        again = halo.correlate(x, w, mode=mode, cval=0.5)
        assert halo._halo.replay_hits()["numpy"] == hits + 1
        np.testing.assert_array_equal(again, first)
        assert_matches(again, ndi.correlate(x, w, mode=mode, cval=0.5), scale_of(x, w) * 2)


def test_channels_last_threads(rng):
    """Calls in several threads at once, each moving its own channels-last array (the scratch
    array of a moved call is the thread's own): each result is the one a lone call gives."""
    import threading
    xs = [random_array(rng, (90 + i, 80, 3 + i % 2), np.float32) for i in range(4)]
    alone = [halo.gaussian_filter(x, [1.5, 2.0, 0.0]) for x in xs]
    got = [None] * len(xs)

    def work(i):
        for _ in range(5):
            got[i] = halo.gaussian_filter(xs[i], [1.5, 2.0, 0.0])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, a in zip(got, alone):
        np.testing.assert_array_equal(g, a)
