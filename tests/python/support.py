"""Helpers of halo's Python tests: random data and the comparison with SciPy's results."""
import numpy as np


def random_array(rng, shape, dtype):
    """Random values of dtype, never all zeros: uniform in [-1, 1] for floats, the dtype's range
    (or [-100, 100]) for integers, both parts for complex."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
        a[0] = True
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -100), min(int(info.max), 100)
        a = rng.integers(lo, hi + 1, n).astype(dtype)
        a[0] = 7
    elif dtype.kind == "c":
        a = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(dtype)
    else:
        a = rng.uniform(-1, 1, n).astype(dtype)
    return a.reshape(shape)


def tolerance(dtype):
    """Relative error allowed against SciPy (which sums in float64), relative to the magnitude
    bound max|x| * sum|w| of the filter: float32 sums of up to a few hundred taps, with float32
    intermediates where SciPy rounds to float32 too."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    return {2: 4e-3, 4: 2e-5}.get(size, 1e-12)


def assert_matches(got, want, scale, exact=False):
    """got (halo) against want (SciPy): same shape and dtype; equal for integer and bool outputs
    (exact=True or an integer dtype), else within tolerance(dtype) * scale."""
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if exact or got.dtype.kind in "biu":
        mismatch = np.flatnonzero(got != want)
        assert mismatch.size == 0, (
            f"{mismatch.size} of {got.size} differ, first at {mismatch[:5]}: "
            f"{got.ravel()[mismatch[:5]]} vs {want.ravel()[mismatch[:5]]}")
        return
    err = np.abs(got.astype(np.complex128) - want.astype(np.complex128))
    bound = tolerance(got.dtype) * max(float(scale), 1e-300)
    assert np.all(err <= bound), f"max error {err.max():.3g} > {bound:.3g} (scale {scale:.3g})"


def with_nonfinite(rng, shape, dtype, count=None):
    """Random floats in [-1, 1] with a few NaN, +inf and -inf, the array's first and last
    elements among the places they may land."""
    x = rng.uniform(-1, 1, shape).astype(dtype)
    flat = x.reshape(-1)
    count = count or int(rng.integers(1, 5))
    for _ in range(count):
        at = int(rng.integers(0, flat.size))
        at = [at, 0, flat.size - 1][int(rng.integers(0, 3))]  # edges among the places
        flat[at] = [np.nan, np.inf, -np.inf][int(rng.integers(0, 3))]
    return x


def category(a):
    """0 finite, 1 NaN, 2 +inf, 3 -inf, elementwise."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.isnan(a), 1, np.where(np.isposinf(a), 2, np.where(np.isneginf(a), 3, 0)))


def assert_same_nonfinite(got, want, scale, what):
    """NaN, +inf and -inf in exactly SciPy's places; the finite outputs within the bound."""
    got = np.asarray(got)
    cg, cw = category(got), category(want)
    diff = np.flatnonzero(cg != cw)
    assert diff.size == 0, (f"{what}: {diff.size} of {got.size} outputs differ in NaN/inf, first "
                            f"at {diff[:5]}: {got.ravel()[diff[:5]]} vs {want.ravel()[diff[:5]]}")
    fin = cw == 0
    err = np.abs(got[fin].astype(np.float64) - want[fin].astype(np.float64))
    bound = 8 * tolerance(got.dtype) * max(scale, 1e-300)
    assert err.size == 0 or err.max() <= bound, f"{what}: max error {err.max():.3g} > {bound:.3g}"


def finite_scale(x, w, cval):
    """max|x| over the finite values (and cval where finite) times sum|w|."""
    xs = np.abs(x[np.isfinite(x)]).max(initial=0.0)
    if np.isfinite(cval):
        xs = max(xs, abs(cval))
    return float(xs) * float(np.abs(w).sum())
