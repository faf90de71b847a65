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
