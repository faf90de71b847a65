"""round='nearest' (halo's addition to SciPy's signatures): a sum stored into an integer or bool
output is rounded to the nearest integer, ties to even, saturated to the dtype's range, NaN to 0,
on every path (the core's own dtypes, the NumPy casts of the others, uniform filters' divided
sums, filters over more than 3 axes), and each store between the passes of a multi-pass filter
is rounded so too. The expectation is built here from SciPy's float64 results, pass by pass as
each function's SciPy definition runs them: numpy.rint, clipped to the range. round='truncate'
(the default) stays SciPy's bit for bit.

Where the core sums in float32 (8- and 16-bit outputs from uint8 or float32 inputs), a sum
within its rounding bound of a half-integer can round to either neighbour (docs/ACCURACY.md,
"Dtypes"): such outputs (not exact ties, which must go to even), and those a later pass computes
from them, are left out of the exact comparison, and must be few."""
import inspect

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from halo import _arrays

F64 = np.dtype(np.float64)
INTEGER_OUTPUTS = [np.uint8, np.uint16, np.int16, np.int32, np.int8, np.uint32, np.int64,
                   np.uint64, np.bool_]
MODES = [("reflect", 0.0), ("constant", 2.5), ("nearest", 0.0), ("mirror", 0.0), ("wrap", 0.0)]
SHAPE = (10, 12)
W1 = np.array([-0.7, 1.9, 0.35])  # weights that push sums past both ends of a range
W2 = np.array([[0.5, -1.25, 0.3], [1.7, 0.2, -0.45]])


def int_range(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return 0, 1
    return int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)


def nearest(f, dtype):
    """np.clip(np.rint(f), min, max) as dtype, NaN to 0 (the 64-bit maxima, which float64
    rounds up past the range, by hand)."""
    dtype = np.dtype(dtype)
    lo, hi = int_range(dtype)
    r = np.clip(np.nan_to_num(np.rint(np.asarray(f, F64)), nan=0.0), lo, hi)
    top = r >= float(hi)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.where(top, 0, r).astype(dtype)
    out[top] = hi
    return out


def gaussian_weights(sigma, order, truncate=4.0):
    """SciPy's correlation weights of gaussian_filter1d, read from its impulse response."""
    r = int(truncate * float(sigma) + 0.5)
    impulse = np.zeros(2 * r + 1)
    impulse[r] = 1.0
    return ndi.gaussian_filter1d(impulse, sigma, order=order, mode="constant",
                                 truncate=truncate)[::-1].copy()


class Expect:
    """SciPy's passes in float64, each stored as round='nearest' stores it into dtype; loose:
    the outputs that may round either way (near a half-integer, within the core's bound, or
    computed from such outputs), with unit the unit roundoff the core sums in."""

    def __init__(self, dtype, unit):
        self.dtype = np.dtype(dtype)
        self.unit = unit
        self.saturated = set()  # "low", "high": a store (not left out) met that end

    def store(self, f, local, taps, loose):
        lo, hi = int_range(self.dtype)
        tol = (taps + 8) * self.unit * local
        with np.errstate(invalid="ignore"):
            half = f - 0.5
            d = np.abs(half - np.rint(half))
            ambiguous = np.isfinite(f) & (((d <= tol) & (d != 0)) | (tol >= 0.25))
            low, high = f + tol < lo - 0.5, f - tol > hi + 0.5
            ambiguous &= ~(low | high)  # saturated either way
            loose = loose | ambiguous
            if np.any(low & ~loose):
                self.saturated.add("low")
            if np.any(high & ~loose):
                self.saturated.add("high")
        return nearest(f, self.dtype), loose

    @staticmethod
    def spread(loose, k, axis):
        if not loose.any():
            return loose
        m = loose.astype(np.uint8)
        reach = 2 * (k // 2) + 3  # a window of k taps, its origin within one of the centre
        return (ndi.maximum_filter1d(m, reach, axis, mode="wrap")
                | ndi.maximum_filter1d(m, reach, axis, mode="reflect")).astype(bool)

    def pass1d(self, x, loose, w, axis, mode, cval, origin=0, convolve=False, divisor=None):
        fn = ndi.convolve1d if convolve else ndi.correlate1d
        src = np.asarray(x, F64)
        f = fn(src, w, axis, output=F64, mode=mode, cval=cval, origin=origin)
        local = fn(np.nan_to_num(np.abs(src), nan=0.0, posinf=0.0), np.abs(w), axis, output=F64,
                   mode=mode, cval=abs(cval), origin=origin)
        if divisor is not None:
            f /= divisor
            local /= divisor
        return self.store(f, local, len(w), self.spread(loose, len(w), axis))

    def pass_nd(self, x, w, mode, cval, convolve=False):
        fn = ndi.convolve if convolve else ndi.correlate
        src = np.asarray(x, F64)
        f = fn(src, w, output=F64, mode=mode, cval=cval)
        local = fn(np.nan_to_num(np.abs(src), nan=0.0, posinf=0.0), np.abs(w), output=F64,
                   mode=mode, cval=abs(cval))
        return self.store(f, local, w.size, np.zeros(src.shape, bool))

    def passes(self, x, per_axis, mode, cval):
        """per_axis: [(axis, weights, divisor)] in SciPy's order, each store rounded."""
        cur, loose = x, np.zeros(x.shape, bool)
        for axis, w, divisor in per_axis:
            cur, loose = self.pass1d(cur, loose, w, axis, mode, cval, divisor=divisor)
        return cur, loose

    def gaussian(self, x, sigmas, orders, mode, cval):
        return self.passes(x, [(a, gaussian_weights(s, o), None)
                               for a, (s, o) in enumerate(zip(sigmas, orders)) if s > 1e-15],
                           mode, cval)

    def per_axis_sum(self, x, derivative, magnitude=False):
        """SciPy's generic_laplace and generic_gradient_magnitude: the per-axis results (each
        stored) added in the output dtype (squared first, then the root rounded, magnitude)."""
        total, loose = None, np.zeros(x.shape, bool)
        for a in range(x.ndim):
            r, la = derivative(a)
            if magnitude:
                np.multiply(r, r, r)
            total = r if total is None else total + r
            loose |= la
        if magnitude:  # a sum of squares that wrapped negative: NaN, then 0
            with np.errstate(invalid="ignore"):
                total = nearest(np.sqrt(total, dtype=F64), self.dtype)
        return total, loose


def expect(name, x, dtype, mode, cval, unit, e=None):
    """(expected, loose) of FUNCS[name] on x into dtype with round='nearest'."""
    e = e or Expect(dtype, unit)
    nd = x.ndim
    if name == "correlate1d":
        return e.pass1d(x, np.zeros(x.shape, bool), W1, 0, mode, cval, origin=1)
    if name == "convolve1d":
        return e.pass1d(x, np.zeros(x.shape, bool), W1, -1, mode, cval, convolve=True)
    if name == "correlate":
        return e.pass_nd(x, W2, mode, cval)
    if name == "convolve":
        return e.pass_nd(x, W2, mode, cval, convolve=True)
    if name == "gaussian_filter1d":
        return e.pass1d(x, np.zeros(x.shape, bool), gaussian_weights(0.7, 1), 0, mode, cval)
    if name == "gaussian_filter":
        return e.gaussian(x, [1.0, 1.5], [0, 2], mode, cval)
    if name == "uniform_filter1d":
        return e.pass1d(x, np.zeros(x.shape, bool), np.ones(4), 1, mode, cval, origin=-1,
                        divisor=4.0)
    if name == "uniform_filter":
        return e.passes(x, [(0, np.ones(3), 3.0), (1, np.ones(4), 4.0)], mode, cval)
    if name in ("sobel", "prewitt"):
        smooth = np.array([1.0, 2.0, 1.0] if name == "sobel" else [1.0, 1.0, 1.0])
        axis = 0
        return e.passes(x, [(axis, np.array([-1.0, 0.0, 1.0]), None)]
                        + [(a, smooth, None) for a in range(nd) if a != axis], mode, cval)
    if name == "laplace":
        second = np.array([1.0, -2.0, 1.0])
        return e.per_axis_sum(x, lambda a: e.pass1d(x, np.zeros(x.shape, bool), second, a, mode,
                                                    cval))
    if name in ("gaussian_laplace", "gaussian_gradient_magnitude"):
        order = 2 if name == "gaussian_laplace" else 1

        def derivative(a):
            orders = [0] * nd
            orders[a] = order
            return e.gaussian(x, [1.2] * nd, orders, mode, cval)

        return e.per_axis_sum(x, derivative, magnitude=order == 1)
    raise ValueError(name)


FUNCS = {
    "correlate1d": lambda lib, x, **kw: lib.correlate1d(x, W1, 0, origin=1, **kw),
    "convolve1d": lambda lib, x, **kw: lib.convolve1d(x, W1, -1, **kw),
    "correlate": lambda lib, x, **kw: lib.correlate(x, W2, **kw),
    "convolve": lambda lib, x, **kw: lib.convolve(x, W2, **kw),
    "gaussian_filter1d": lambda lib, x, **kw: lib.gaussian_filter1d(x, 0.7, 0, 1, **kw),
    "gaussian_filter": lambda lib, x, **kw: lib.gaussian_filter(x, [1.0, 1.5], [0, 2], **kw),
    "uniform_filter1d": lambda lib, x, **kw: lib.uniform_filter1d(x, 4, 1, origin=-1, **kw),
    "uniform_filter": lambda lib, x, **kw: lib.uniform_filter(x, [3, 4], **kw),
    "sobel": lambda lib, x, **kw: lib.sobel(x, 0, **kw),
    "prewitt": lambda lib, x, **kw: lib.prewitt(x, 0, **kw),
    "laplace": lambda lib, x, **kw: lib.laplace(x, **kw),
    "gaussian_laplace": lambda lib, x, **kw: lib.gaussian_laplace(x, 1.2, **kw),
    "gaussian_gradient_magnitude":
        lambda lib, x, **kw: lib.gaussian_gradient_magnitude(x, 1.2, **kw),
}
# Every public function that takes halo's options (generic_laplace and
# generic_gradient_magnitude call the caller's function instead).
OPTIONED = sorted(FUNCS)


def test_every_optioned_function_is_covered():
    names = {n for n in dir(halo) if inspect.isfunction(getattr(halo, n))
             and "backend" in inspect.signature(getattr(halo, n)).parameters}
    assert names == set(FUNCS)
    for n in names:
        p = inspect.signature(getattr(halo, n)).parameters["round"]
        assert p.kind is p.KEYWORD_ONLY and p.default == "truncate"


def add_nonfinite(rng, x, values):
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, len(values), replace=False)] = values
    return x


def make_input(rng, flavour, dtype):
    """wide: float64 values past both ends of dtype's range (twice its span past each end; for
    the 32- and 64-bit types, a tenth of the values ten times the largest among values of a few
    hundred), NaN and infinities; narrow:
    float64 in [-300, 300] with NaN; uint8: the whole uint8 range."""
    if flavour == "uint8":
        return rng.integers(0, 256, SHAPE).astype(np.uint8)
    if flavour == "narrow":
        return add_nonfinite(rng, rng.uniform(-300.0, 300.0, SHAPE), [np.nan, np.nan])
    lo, hi = int_range(dtype)
    if hi - lo <= 1 << 16:
        span = hi - lo
        x = rng.uniform(lo - 2 * span - 2, hi + 2 * span + 2, SHAPE)
    else:
        x = rng.uniform(-300.0, 300.0, SHAPE)
        big = rng.random(SHAPE) < 0.1
        x[big] = rng.choice([-10.0, 10.0], int(big.sum())) * max(hi, -lo)
    return add_nonfinite(rng, x, [np.nan, np.nan, np.inf, -np.inf])


def unit_of(in_dt, out_dt):
    """The unit roundoff of the core's sums: float32 for 8- and 16-bit outputs of the core's
    own dtypes from inputs float32 holds (docs/ACCURACY.md, "Dtypes"), else float64."""
    small_in = np.dtype(in_dt) in (np.dtype(np.uint8), np.dtype(np.float32), np.dtype(np.float16))
    small_out = np.dtype(out_dt) in (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int16))
    return 2.0 ** -24 if small_in and small_out else 2.0 ** -52


def assert_nearest(got, want, loose, what, strict=False):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    check = ~loose if not strict else np.ones(got.shape, bool)
    bad = np.flatnonzero((got != want) & check)
    assert bad.size == 0, (f"{what}: {bad.size} of {got.size} differ, first at {bad[:5]}: "
                           f"{got.ravel()[bad[:5]]} vs {want.ravel()[bad[:5]]}")


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")  # as SciPy's
@pytest.mark.parametrize("mode,cval", MODES)
@pytest.mark.parametrize("flavour", ["wide", "narrow", "uint8"])
@pytest.mark.parametrize("dtype", INTEGER_OUTPUTS)
@pytest.mark.parametrize("name", OPTIONED)
def test_nearest_is_rint_of_scipy_passes(rng, name, dtype, flavour, mode, cval):
    x = make_input(rng, flavour, dtype)
    got = FUNCS[name](halo, x, output=dtype, mode=mode, cval=cval, round="nearest")
    e = Expect(dtype, unit_of(x.dtype, dtype))
    want, loose = expect(name, x, dtype, mode, cval, None, e)
    assert_nearest(got, want, loose, f"{name} {flavour} -> {np.dtype(dtype)}")
    if flavour != "wide":
        assert loose.mean() < 0.5, f"{loose.mean():.2f} of the outputs left out"
    else:
        # Saturation at both ends is met, in some store (whose result later passes read).
        assert e.saturated == {"low", "high"}


@pytest.mark.parametrize("mode,cval", MODES[:2])
@pytest.mark.parametrize("flavour", ["wide", "narrow", "uint8"])
@pytest.mark.parametrize("dtype", INTEGER_OUTPUTS)
@pytest.mark.parametrize("name", OPTIONED)
def test_truncate_is_scipy(rng, name, dtype, flavour, mode, cval):
    """round='truncate', and the default, give SciPy's integers bit for bit (uniform filters of
    float inputs aside: SciPy's running sums round their own way; and sums past 2**53 into the
    64-bit types, which depend on the order of the additions: docs/PYTHON.md, so no values past
    their range, nor NaN, which SciPy stores as INT64_MIN for a later pass to read)."""
    if flavour == "wide" and np.dtype(dtype).itemsize == 8:
        flavour = "narrow"
    x = make_input(rng, flavour, dtype)
    if np.dtype(dtype).itemsize == 8:
        x = np.nan_to_num(x)
    kw = dict(output=dtype, mode=mode, cval=cval)
    default = FUNCS[name](halo, x, **kw)
    truncate = FUNCS[name](halo, x, round="truncate", **kw)
    np.testing.assert_array_equal(truncate, default)
    assert truncate.dtype == default.dtype == np.dtype(dtype)
    if name.startswith("uniform") and x.dtype.kind == "f":
        return
    with np.errstate(invalid="ignore", over="ignore"):
        want = FUNCS[name](ndi, x, **kw)
    np.testing.assert_array_equal(truncate, want)


@pytest.mark.parametrize("dtype", INTEGER_OUTPUTS)
def test_ties_to_even(dtype):
    """Sums exactly halfway between two integers go to the even one, in every pass: weights
    [0.5, 0.5] on neighbours, a uniform window of 2, a 2x2 mean, x.5 values and cval."""
    lo, hi = int_range(dtype)
    line = np.arange(-6, 7, dtype=np.float64)  # halves of odd sums: -5.5 .. 5.5
    if lo == 0:
        line = line - line.min()
    x = np.tile(line, (4, 1))
    for in_dt in (np.float64, np.float32, np.uint8, np.int16, np.int32):
        if np.dtype(in_dt).kind == "u" and x.min() < 0:
            continue
        xi = x.astype(in_dt)
        got = halo.correlate1d(xi, [0.5, 0.5], output=dtype, round="nearest")
        want = nearest(ndi.correlate1d(x, [0.5, 0.5], output=F64), dtype)
        assert_nearest(got, want, None, f"correlate1d {np.dtype(in_dt)}", strict=True)
        assert np.any(ndi.correlate1d(x, [0.5, 0.5], output=F64) % 1 == 0.5)
        got = halo.uniform_filter(xi, 2, output=dtype, round="nearest")
        want, _ = Expect(dtype, 0.0).passes(x, [(0, np.ones(2), 2.0), (1, np.ones(2), 2.0)],
                                            "reflect", 0.0)
        assert_nearest(got, want, None, f"uniform_filter {np.dtype(in_dt)}", strict=True)
        got = halo.correlate(xi, np.full((2, 2), 0.25), output=dtype, round="nearest")
        want = nearest(ndi.correlate(x, np.full((2, 2), 0.25), output=F64), dtype)
        assert_nearest(got, want, None, f"correlate {np.dtype(in_dt)}", strict=True)
        got = halo.gaussian_filter(xi, [0.0, 0.0], output=dtype, round="nearest")  # a copy
        assert_nearest(got, nearest(x, dtype), None, "copy", strict=True)
    halves = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5]])
    got = halo.correlate1d(halves, [1.0], output=dtype, round="nearest")
    assert_nearest(got, nearest(halves, dtype), None, "x.5 values", strict=True)
    if np.dtype(dtype).kind != "b":
        assert list(got[0, :4]) == [max(lo, v) for v in (-2, -2, 0, 0)]
    got = halo.correlate1d(np.zeros((1, 4)), [1.0, 0.0, 0.0], mode="constant", cval=2.5,
                           output=dtype, round="nearest")
    assert got[0, 0] == min(2, hi) and np.all(got[0, 1:] == 0)


@pytest.mark.parametrize("dtype", INTEGER_OUTPUTS)
def test_saturation_and_nan(dtype):
    """Values past either end give the end; NaN gives 0; infinities the ends."""
    lo, hi = int_range(dtype)
    x = np.array([[-1e30, -np.inf, float(lo) - 0.6, float(lo), np.nan, 0.4, float(hi),
                   float(hi) + 0.6, np.inf, 1e30]])
    got = halo.correlate1d(x, [1.0], output=dtype, round="nearest")
    want = np.array([[lo, lo, lo, lo, 0, 0, hi, hi, hi, hi]], dtype=dtype)
    np.testing.assert_array_equal(got, want)
    # Weights past 1 and negative ones push integer inputs past both ends.
    u = np.array([[0, 200, 255, 3, 255, 0]], np.uint8)
    got = halo.correlate1d(u, [-3.0, 2.5, 1.25], output=dtype, round="nearest")
    want = nearest(ndi.correlate1d(u, [-3.0, 2.5, 1.25], output=F64), dtype)
    np.testing.assert_array_equal(got, want)
    if np.dtype(dtype).itemsize == 1:
        assert lo in got and hi in got
    # Nothing to filter (SciPy copies the input into the output): stored as a sum would be.
    y = np.concatenate([x, x * 0.37 + 0.5])
    copies = [halo.gaussian_filter(y, 0, output=dtype, round="nearest"),
              halo.uniform_filter(y, 1, output=dtype, round="nearest"),
              halo.laplace(y, output=dtype, round="nearest", axes=()),
              halo.gaussian_laplace(y, 1.0, output=dtype, round="nearest", axes=()),
              halo.gaussian_gradient_magnitude(y, 1.0, output=dtype, round="nearest", axes=())]
    for got in copies:
        np.testing.assert_array_equal(got, nearest(y, dtype))
    # An input the output holds is copied as it is.
    np.testing.assert_array_equal(halo.gaussian_filter(u, 0, output=np.int16, round="nearest"),
                                  u.astype(np.int16))


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64, np.bool_])
def test_near_half_sums_in_scipy_order(rng, dtype):
    """The dtypes halo stores through NumPy (not the core's own): a sum within rounding of a
    half-integer is recomputed in SciPy's order, as truncation's sums near an integer are
    (weights of one decimal on small integers land there often), so the result is numpy.rint
    of SciPy's own float64 sum, for SciPy's 1-D filters, its N-D correlate (the core's
    reference strategy) and over 4 axes (added by 3-axis parts)."""
    for _ in range(20):
        k = int(rng.integers(3, 8))
        w = np.round(rng.uniform(-1, 1, k), 1)
        x = rng.integers(-9, 10, (4, 40)).astype(np.float64)
        for axis in (0, 1):
            got = halo.correlate1d(x, w, axis, output=dtype, round="nearest")
            want = nearest(ndi.correlate1d(x, w, axis, output=F64), dtype)
            assert_nearest(got, want, None, f"correlate1d {w}", strict=True)
        w2 = np.round(rng.uniform(-1, 1, (2, 3)), 1)
        got = halo.correlate(x, w2, output=dtype, round="nearest")
        want = nearest(ndi.correlate(x, w2, output=F64), dtype)
        assert_nearest(got, want, None, f"correlate {w2}", strict=True)
    x4 = rng.integers(-9, 10, (3, 4, 3, 5)).astype(np.float64)
    for _ in range(5):
        w4 = np.round(rng.uniform(-1, 1, (2, 2, 3, 2)), 1)
        got = halo.correlate(x4, w4, output=dtype, round="nearest")
        want = nearest(ndi.correlate(x4, w4, output=F64), dtype)
        assert_nearest(got, want, None, "correlate 4-D", strict=True)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int8, np.int64, np.bool_])
def test_more_than_three_axes(rng, dtype):
    """Filters over 4 axes: correlate added by 3-axis parts, Gaussian passes per axis."""
    x = rng.uniform(-300.0, 300.0, (4, 5, 3, 6))
    x.flat[7] = np.nan
    w = rng.uniform(-1, 1, (3, 2, 3, 2))
    w[1, 0, 1, 0] = 0.5
    got = halo.correlate(x, w, output=dtype, round="nearest")
    e = Expect(dtype, 2.0 ** -52)
    want, loose = e.pass_nd(x, w, "reflect", 0.0)
    assert_nearest(got, want, loose, "correlate 4-D")
    got = halo.gaussian_filter(x, 0.8, output=dtype, round="nearest", mode="wrap")
    want, loose = e.gaussian(x, [0.8] * 4, [0] * 4, "wrap", 0.0)
    assert_nearest(got, want, loose, "gaussian_filter 4-D")
    x8 = rng.integers(0, 256, (4, 5, 3, 6)).astype(np.uint8)
    got = halo.uniform_filter(x8, 2, output=dtype, round="nearest")
    want, _ = e.passes(x8, [(a, np.ones(2), 2.0) for a in range(4)], "reflect", 0.0)
    assert_nearest(got, want, None, "uniform_filter 4-D", strict=True)


def test_gradient_magnitude_root_is_rounded():
    """gaussian_gradient_magnitude's root of an integer sum of squares is rounded to nearest:
    sqrt(8) -> 3 where truncation gives 2."""
    for dtype in (np.uint8, np.int16, np.int32, np.int64):
        e = Expect(dtype, 2.0 ** -52)
        y = np.arange(30.0).reshape(5, 6) ** 1.5
        got = halo.gaussian_gradient_magnitude(y, 0.9, output=dtype, round="nearest")

        def derivative(a):
            orders = [0, 0]
            orders[a] = 1
            return e.gaussian(y, [0.9, 0.9], orders, "reflect", 0.0)

        want, loose = e.per_axis_sum(y, derivative, magnitude=True)
        assert_nearest(got, want, loose, "magnitude")
        trunc = halo.gaussian_gradient_magnitude(y, 0.9, output=dtype)
        assert np.any(got != trunc)  # some roots round up


def test_prepared_calls_keyed_by_rounding():
    """A core call prepared for one rounding is not reused for the other (_arrays._PREPARED)."""
    x = np.tile(np.arange(9.0), (3, 1))
    w = [0.5, 0.5]
    for _ in range(2):
        t = halo.correlate1d(x, w, output=np.uint8)
        n = halo.correlate1d(x, w, output=np.uint8, round="nearest")
        np.testing.assert_array_equal(t, ndi.correlate1d(x, w, output=np.uint8))
        np.testing.assert_array_equal(n, nearest(ndi.correlate1d(x, w, output=F64), np.uint8))
        assert np.any(t != n)
    assert any(k[-1] == "nearest" for k in _arrays._PREPARED)


def test_float_outputs_unchanged(rng):
    x = rng.uniform(-3, 3, SHAPE)
    for dtype in (np.float32, np.float64, np.complex128):
        for name in OPTIONED:
            if np.dtype(dtype).kind == "c" and name not in ("correlate1d", "uniform_filter"):
                continue
            a = FUNCS[name](halo, x, output=dtype)
            b = FUNCS[name](halo, x, output=dtype, round="nearest")
            np.testing.assert_array_equal(a, b)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(halo.gaussian_filter(xf, 1.0, round="nearest"),
                                  halo.gaussian_filter(xf, 1.0))


@pytest.mark.parametrize("name", OPTIONED)
def test_bad_round_refused(name):
    x = np.arange(12.0).reshape(3, 4)
    for bad in ("Nearest", "round", "", "truncate ", "floor"):
        with pytest.raises(ValueError, match=repr(bad).replace("[", r"\[")):
            FUNCS[name](halo, x, round=bad)
    for bad in (None, 1, True, b"nearest", ["nearest"]):
        with pytest.raises(TypeError, match="round"):
            FUNCS[name](halo, x, round=bad)
    np.testing.assert_array_equal(FUNCS[name](halo, x, round=np.str_("nearest")),
                                  FUNCS[name](halo, x, round="nearest"))
