"""NaN and infinities against scipy.ndimage: every function, every CPU strategy (and, where CuPy
and a GPU are present, the CUDA backend), every mode, per-axis modes, origins, cval including NaN
and infinities, float32 and float64, filters with zero weights, rank-1, low-rank, boxes and large
dense ones. The outputs that are NaN, +inf and -inf must be exactly SciPy's; finite outputs within
the usual bound. The reproducers of the issue that made this promise are named tests below."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_same_nonfinite, category, finite_scale, with_nonfinite

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
CVALS = [0.0, 1.5, np.nan, np.inf, -np.inf]
CPU_STRATEGIES = [None, "reference", "cpu", "cpu_separable", "cpu_lowrank", "cpu_fft"]


def _cupy():
    """CuPy, where it is installed, a GPU is usable and halo was built with CUDA; else None."""
    if not halo.info()["cuda_devices"]:
        return None
    try:
        import cupy
        return cupy
    except ImportError:
        return None


CUPY = _cupy()
CUDA_STRATEGIES = [None] + ([s["name"] for s in halo.strategies() if s["backend"] == "cuda"
                             and s["name"] in ("fast", "separable", "lowrank", "fft")]
                            if CUPY is not None else [])


def random_weights(rng, kind, kshape):
    if kind == "dense":
        return rng.uniform(-1, 1, kshape)
    if kind == "zeros":
        w = rng.uniform(-1, 1, kshape)
        w[rng.uniform(0, 1, kshape) < 0.4] = 0
        w.flat[w.size // 2] = 1.5
        return w
    if kind == "rank1":
        w = np.ones(())
        for k in kshape:
            f = rng.uniform(-1, 1, k)
            if k > 2:
                f[int(rng.integers(0, k))] = 0
            w = np.multiply.outer(w, f)
        return w
    if kind == "box":
        return np.full(kshape, 1.0 / np.prod(kshape))
    if kind == "lowrank":
        a = np.ones(())
        b = np.ones(())
        for k in kshape:
            a = np.multiply.outer(a, rng.uniform(-1, 1, k))
            b = np.multiply.outer(b, rng.uniform(-1, 1, k))
        return a - b
    raise ValueError(kind)


def run(fn, x, *args, strategy=None, gpu=False, **kw):
    if gpu:
        out = getattr(halo, fn)(CUPY.asarray(x), *args, strategy=strategy, **kw)
        return CUPY.asnumpy(out)
    return getattr(halo, fn)(x, *args, backend="cpu" if strategy is None else "auto",
                             strategy=strategy, **kw)


def strategies(gpu):
    return CUDA_STRATEGIES if gpu else CPU_STRATEGIES


BACKENDS = [False] + ([True] if CUPY is not None else [])


@pytest.mark.parametrize("gpu", BACKENDS, ids=lambda g: "cuda" if g else "cpu")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["dense", "zeros", "rank1", "box", "lowrank"])
def test_correlate_convolve(rng, gpu, dtype, kind):
    """SciPy's N-D functions: the footprint rule (zero weights are no taps)."""
    for _ in range(12):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(rng.choice([1, 2, 5, 8, 17, 33] if rank < 3 else [1, 2, 5, 9]))
                      for _ in range(rank))
        kshape = tuple(int(rng.choice([1, 2, 3, 4, 5, 7])) for _ in range(rank))
        w = random_weights(rng, kind, kshape)
        x = with_nonfinite(rng, shape, dtype)
        mode = str(rng.choice(MODES))  # SciPy's N-D functions take one mode
        cval = float(rng.choice(CVALS))
        origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in kshape]
        for fn in ("correlate", "convolve"):
            want = getattr(ndi, fn)(x, w, mode=mode, cval=cval, origin=origin)
            for st in strategies(gpu):
                try:
                    got = run(fn, x, w, strategy=st, gpu=gpu, mode=mode, cval=cval, origin=origin)
                except halo.Error as e:
                    if st is not None and "cannot run" in str(e):
                        continue
                    raise
                assert_same_nonfinite(got, want, finite_scale(x, w, cval),
                                      f"{fn} {shape} {kind} {kshape} {mode} cval {cval} origin "
                                      f"{origin} strategy {st}")


@pytest.mark.parametrize("gpu", BACKENDS, ids=lambda g: "cuda" if g else "cpu")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_dimensional_functions(rng, gpu, dtype):
    """SciPy's 1-D filters and the functions built on them: every weight is a tap."""
    for _ in range(10):
        rank = int(rng.integers(1, 4))
        shape = tuple(int(rng.choice([1, 3, 8, 17] if rank < 3 else [1, 3, 6]))
                      for _ in range(rank))
        x = with_nonfinite(rng, shape, dtype)
        mode = str(rng.choice(MODES))
        cval = float(rng.choice(CVALS))
        axis = int(rng.integers(0, rank))
        k = int(rng.choice([1, 2, 3, 4, 5, 9]))
        w = rng.uniform(-1, 1, k)
        if k > 2:
            w[int(rng.integers(0, k))] = 0
        calls = [("correlate1d", (w,), dict(axis=axis)), ("convolve1d", (w,), dict(axis=axis)),
                 ("gaussian_filter1d", (float(rng.uniform(0.3, 2)),), dict(axis=axis)),
                 ("gaussian_filter", (float(rng.uniform(0.3, 2)),), {}),
                 ("sobel", (), dict(axis=axis)), ("prewitt", (), dict(axis=axis)),
                 ("laplace", (), {})]
        for fn, args, kw in calls:
            want = getattr(ndi, fn)(x, *args, mode=mode, cval=cval, **kw)
            scale = finite_scale(x, np.ones(1), cval) * 16
            for st in (None,):  # the functions choose their strategies
                got = run(fn, x, *args, strategy=st, gpu=gpu, mode=mode, cval=cval, **kw)
                assert_same_nonfinite(got, want, scale,
                                      f"{fn} {shape} {mode} cval {cval} {kw} {args}")


# ---------------------------------------------------------------------------------------------
# The reproducers
# ---------------------------------------------------------------------------------------------
def test_laplace_of_an_infinity():
    a = np.zeros((5, 5))
    a[2, 2] = np.inf
    np.testing.assert_array_equal(halo.laplace(a)[1], ndi.laplace(a)[1])
    np.testing.assert_array_equal(halo.laplace(a)[1], [0, 0, np.inf, 0, 0])
    k = np.zeros((3, 3))
    k[0, 0] = 1
    b = np.zeros((9, 9))
    b[4, 4] = np.nan
    assert np.isnan(halo.correlate(b, k)).sum() == np.isnan(ndi.correlate(b, k)).sum() == 1


def test_box_running_sums_do_not_leak_nan():
    x = np.zeros(120)
    x[10] = np.inf
    got = halo.correlate1d(x, np.ones(40) / 40, mode="constant")
    want = ndi.correlate1d(x, np.ones(40) / 40, mode="constant")
    np.testing.assert_array_equal(category(got), category(want))
    img = np.zeros((32, 32), np.float32)
    img[7, 7] = np.inf
    box = np.full((9, 9), 1 / 81)
    assert np.isnan(halo.correlate(img, box, mode="constant")).sum() == 0


def test_folded_axis_keeps_infinities():
    x = np.zeros((1, 12))
    x[0, 5] = np.inf
    got, want = halo.gaussian_filter(x, 0.7), ndi.gaussian_filter(x, 0.7)
    np.testing.assert_array_equal(category(got), category(want))
    assert np.isinf(got).sum() == 7


@pytest.mark.parametrize("fn", ["correlate", "convolve"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_infinite_cval(rng, fn, dtype):
    v = rng.uniform(-1, 1, (3, 4, 5)).astype(dtype)
    for cval in (np.inf, -np.inf, np.nan):
        for k in ((4, 4, 4), (2, 3, 2), (1, 1, 3)):
            w = np.ones(k)
            got = getattr(halo, fn)(v, w, mode="constant", cval=cval)
            want = getattr(ndi, fn)(v, w, mode="constant", cval=cval)
            assert_same_nonfinite(got, want, finite_scale(v, w, 0), f"{fn} {k} cval {cval}")


def test_uniform_filter_float32_cval_beyond_float32():
    """SciPy keeps cval in float64 (1e39 is beyond float32): the outputs it computes as finite
    stay finite."""
    x = np.ones(3, np.float32)
    got = halo.uniform_filter(x, 3, mode="constant", cval=1e39)
    want = ndi.uniform_filter(x, 3, mode="constant", cval=1e39)
    np.testing.assert_array_equal(category(got), category(want))


def test_uniform_filter_of_constants_is_exact():
    assert halo.uniform_filter(np.ones((8, 8)), 5)[4, 4] == 1.0
    assert np.all(halo.uniform_filter(np.full((8, 8), 7.0), 3) == 7.0)
    rng = np.random.default_rng(0)
    mask = (rng.uniform(0, 1, (256, 256)) < 0.97).astype(np.float64)
    # Exact where SciPy is exact: every mean SciPy gives as exactly 1 is exactly 1 here too (its
    # running sums drift after windows of inexact values, so it finds fewer).
    ours, scipys = halo.uniform_filter(mask, 5) == 1, ndi.uniform_filter(mask, 5) == 1
    assert scipys.sum() > 0 and np.all(ours[scipys])
