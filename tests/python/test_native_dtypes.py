"""The core's own dtypes from Python (NumPy arrays on the CPU): integer outputs equal SciPy's bit
for bit on fresh random data with flat regions (where sums land within rounding of an integer),
every mode, cval and origin, output dtypes other than the input's, values at the type's limits."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]


def flat_random(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        x.flat[0], x.flat[-1] = info.min, info.max
    else:
        x = (rng.standard_normal(shape) * 100).astype(dtype)
    x[tuple(slice(s // 4, s // 2 + 1) for s in shape)] = x.flat[len(x.flat) // 3]  # a flat region
    return x


CALLS = [
    ("gaussian_filter", (1.7,), {}),
    ("gaussian_filter1d", (2.0,), {"axis": 0}),
    ("correlate", (np.full((3, 3), 1 / 9),), {}),
    ("convolve", (np.array([[0.1, 0.25, 0.3], [0.05, 0.2, 0.1]]),), {"origin": (0, 1)}),
    ("correlate1d", (np.array([0.25, 0.5, 0.25]),), {"axis": 1, "origin": -1}),
    ("sobel", (), {"axis": 0}),
    ("prewitt", (), {}),
    ("laplace", (), {}),
]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32])
@pytest.mark.parametrize("mode", MODES)
def test_integers_equal_scipy(rng, dtype, mode):
    x = flat_random(rng, (37, 29), dtype)
    for name, args, kw in CALLS:
        want = getattr(ndi, name)(x, *args, mode=mode, cval=5, **kw)
        got = getattr(halo, name)(x, *args, mode=mode, cval=5, **kw)
        assert_matches(got, want, 1, exact=True)


@pytest.mark.parametrize("pair", [(np.uint8, np.float32), (np.float32, np.uint8),
                                  (np.uint16, np.uint8), (np.int16, np.float64),
                                  (np.float64, np.int16), (np.int32, np.uint16)])
@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_output_dtypes_as_scipy(rng, pair, mode):
    src, out = pair
    x = flat_random(rng, (31, 23), src)
    for name, args, kw in CALLS[:5]:
        want = getattr(ndi, name)(x, *args, output=out, mode=mode, cval=-2, **kw)
        got = getattr(halo, name)(x, *args, output=out, mode=mode, cval=-2, **kw)
        scale = np.abs(x).max() * np.abs(np.asarray(args[0] if args else 1)).sum() + 1
        assert_matches(got, want, scale)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
def test_three_d_and_one_d(rng, dtype):
    for shape in [(301,), (9, 11, 13)]:
        x = flat_random(rng, shape, dtype)
        for mode in MODES:
            want = ndi.gaussian_filter(x, 1.3, mode=mode, cval=7)
            got = halo.gaussian_filter(x, 1.3, mode=mode, cval=7)
            assert_matches(got, want, 1, exact=True)
            w = np.full((3,) * len(shape), 1 / 3 ** len(shape))
            assert_matches(halo.correlate(x, w, mode=mode), ndi.correlate(x, w, mode=mode), 1,
                           exact=True)


def test_float16_is_rounded_from_float32(rng):
    x = rng.standard_normal((40, 50)).astype(np.float16)
    got = halo.gaussian_filter(x, 1.5)
    assert got.dtype == np.float16
    want = ndi.gaussian_filter(x.astype(np.float64), 1.5)
    assert np.all(np.abs(got.astype(np.float64) - want) <= 2 ** -10 * np.abs(want) + 1e-4)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16])
def test_passes_in_scratch_leave_results_alone(rng, dtype):
    # The passes before the last write this thread's scratch buffers in turn (two, for three or
    # more passes): each result is the call's own, and stays as it was through later calls.
    for shape, sigma in [((300, 410), 2.0), ((7, 9, 11), 1.0), ((5, 6, 7, 8), 0.8)]:
        x = flat_random(rng, shape, dtype)
        y = flat_random(rng, shape, dtype)
        first = halo.gaussian_filter(x, sigma, mode="nearest")
        kept = first.copy()
        second = halo.sobel(y, axis=0, mode="mirror")
        assert_matches(first, kept, 1, exact=True)
        assert_matches(first, ndi.gaussian_filter(x, sigma, mode="nearest"), 1, exact=True)
        assert_matches(second, ndi.sobel(y, axis=0, mode="mirror"), 1, exact=True)
        out = np.empty_like(x)
        assert halo.gaussian_filter(x, sigma, output=out, mode="wrap") is out
        assert_matches(out, ndi.gaussian_filter(x, sigma, mode="wrap"), 1, exact=True)
