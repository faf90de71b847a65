"""gaussian_laplace, gaussian_gradient_magnitude, generic_laplace and generic_gradient_magnitude
against scipy.ndimage on random inputs (ranks 1-3, every mode, cval, output dtypes and arrays;
the generic functions' calls of the caller's function, argument by argument), and the axes
argument of correlate, convolve, gaussian_filter, uniform_filter, laplace and the four above.
Debian's SciPy (1.10) has no axes: each result with axes is compared with SciPy called the
equivalent way (size 1 or sigma 0 on the other axes, the 1-D passes in the order of axes, or a
loop over the axes not filtered), as SciPy's own tests of axes do."""
import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches, random_array
from test_filters import FLOATS, MODES, cases, pick_origin, scale_of

INTEGERS = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64]
GAUSSIAN_SUMS = ["gaussian_laplace", "gaussian_gradient_magnitude"]
AxisError = getattr(np, "exceptions", np).AxisError


def _sigmas(rng, rank):
    """A scalar sigma, one per axis, and one with an axis of sigma 0 (not filtered)."""
    per_axis = [float(s) for s in rng.uniform(0.5, 2.5, rank)]
    with_zero = list(per_axis)
    with_zero[int(rng.integers(rank))] = 0.0
    return [float(rng.uniform(0.5, 2.5)), per_axis, with_zero]


def _bound(x, cval=0.0, rank=3):
    """The magnitude the errors of a sum of Gaussian derivatives scale with: weights up to
    ~1/sigma^2 times the Gaussian's (sigma >= 0.5), one term per axis."""
    return (scale_of(x) + abs(cval)) * 50 * rank


# ---------------------------------------------------------------------------------------------
# gaussian_laplace, gaussian_gradient_magnitude
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank,shape", list(cases()))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums(rng, fn, rank, shape, mode, dtype):
    x = random_array(rng, shape, dtype)
    for sigma in _sigmas(rng, rank):
        cval = float(rng.uniform(-2, 2))
        got = getattr(halo, fn)(x, sigma, mode=mode, cval=cval)
        want = getattr(ndi, fn)(x, sigma, mode=mode, cval=cval)
        assert_matches(got, want, _bound(x, cval, rank))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_per_axis_modes_and_kwargs(rng, fn, dtype):
    """A mode per axis (SciPy uses axis i's mode on every axis of axis i's term), and truncate
    and radius, which go to gaussian_filter."""
    x = random_array(rng, (11, 8, 9), dtype)
    modes = [MODES[int(i)] for i in rng.integers(0, len(MODES), 3)]
    for kwargs in [{}, dict(truncate=2.0), dict(truncate=6.0), dict(radius=1),
                   dict(radius=[2, 0, 3]), dict(truncate=1.5, radius=None)]:
        got = getattr(halo, fn)(x, [1.2, 0.7, 2.0], mode=modes, cval=0.5, **kwargs)
        want = getattr(ndi, fn)(x, [1.2, 0.7, 2.0], mode=modes, cval=0.5, **kwargs)
        assert_matches(got, want, _bound(x, 0.5))
    # halo's own options reach gaussian_filter: the float64 oracle gives SciPy's result too.
    got = getattr(halo, fn)(x, 1.1, mode=modes, backend="reference")
    assert halo.last_run()["strategy"] == "reference"
    assert_matches(got, getattr(ndi, fn)(x, 1.1, mode=modes), _bound(x))


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest", "wrap"])
@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_integers_exact(rng, fn, dtype, mode):
    """Integer outputs: SciPy's per-axis terms truncated to the output dtype, then added (and
    squared, and rooted) in it, overflow wrapping included."""
    x = random_array(rng, (15, 12), dtype)
    for sigma in (1.0, [2.0, 0.6]):
        assert_matches(getattr(halo, fn)(x, sigma, mode=mode, cval=5),
                       getattr(ndi, fn)(x, sigma, mode=mode, cval=5), 0, exact=True)
    xf = random_array(rng, (15, 12), np.float64) * 50
    assert_matches(getattr(halo, fn)(xf, 1.3, output=dtype, mode=mode),
                   getattr(ndi, fn)(xf, 1.3, output=dtype, mode=mode), 0, exact=True)


@pytest.mark.parametrize("in_dtype,out_dtype", [
    (np.float32, np.float64), (np.float64, np.float32), (np.uint8, np.float32),
    (np.int16, np.float64), (np.float32, np.int16), (np.float64, np.uint8)])
@pytest.mark.parametrize("form", ["dtype", "type", "str", "array", "strided"])
@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_outputs(rng, fn, in_dtype, out_dtype, form):
    x = random_array(rng, (10, 12), in_dtype)
    if np.dtype(in_dtype).kind == "f":
        x = (x * 300).astype(in_dtype)
    want = getattr(ndi, fn)(x, 1.4, output=out_dtype)
    if form in ("array", "strided"):
        poison = 77 if np.dtype(out_dtype).kind in "iu" else np.nan
        big = np.full((20, 24), poison, out_dtype)
        out = np.full(x.shape, poison, out_dtype) if form == "array" else big[::2, ::2]
        assert getattr(halo, fn)(x, 1.4, output=out) is out
        got = out
        if form == "strided":  # the rest of the base untouched
            rest = np.ones(big.shape, bool)
            rest[::2, ::2] = False
            assert np.array_equal(big[rest], np.full(rest.sum(), poison, out_dtype),
                                  equal_nan=big.dtype.kind == "f")
    else:
        spec = {"dtype": np.dtype(out_dtype), "type": out_dtype,
                "str": np.dtype(out_dtype).name}[form]
        got = getattr(halo, fn)(x, 1.4, output=spec)
    assert_matches(got, want, _bound(x, rank=2))


@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_output_overlapping_input(rng, fn):
    """An output that is, or overlaps, the input gets the result computed apart, as every halo
    filter does (SciPy's later axes would read the first axis's result written over the input:
    docs/PYTHON.md, "What differs")."""
    x = random_array(rng, (13, 11), np.float64)
    want = getattr(ndi, fn)(x.copy(), 1.2)
    assert getattr(halo, fn)(x, 1.2, output=x) is x
    assert_matches(x, want, _bound(want, rank=2))
    base = random_array(rng, (14, 11), np.float64)
    inp, out = base[:-1], base[1:]
    want = getattr(ndi, fn)(inp.copy(), 1.2)
    getattr(halo, fn)(inp, 1.2, output=out)
    assert_matches(out, want, _bound(want, rank=2))


@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_other_inputs(rng, fn):
    """Complex inputs, lists, 0-d and empty arrays, and repeated calls (whose gaussian_filter
    passes replay) as SciPy."""
    z = random_array(rng, (9, 8), np.complex128)
    assert_matches(getattr(halo, fn)(z, 1.1, mode="constant", cval=0.5),
                   getattr(ndi, fn)(z, 1.1, mode="constant", cval=0.5), _bound(z, 0.5))
    lst = random_array(rng, (5, 6), np.float64).tolist()
    assert_matches(getattr(halo, fn)(lst, 0.9), getattr(ndi, fn)(lst, 0.9), _bound(np.ones(1)))
    x0 = np.array(2.5)
    assert_matches(getattr(halo, fn)(x0, 1.0), getattr(ndi, fn)(x0, 1.0), 3)
    assert getattr(halo, fn)(np.zeros((0, 5), np.float32), 1.0).shape == (0, 5)
    for _ in range(3):
        x = random_array(rng, (16, 17), np.float32)
        assert_matches(getattr(halo, fn)(x, 1.5), getattr(ndi, fn)(x, 1.5), _bound(x, rank=2))


@pytest.mark.parametrize("fn", GAUSSIAN_SUMS)
def test_gaussian_sums_errors_as_scipy(rng, fn):
    x = random_array(rng, (6, 7), np.float64)
    for args, kwargs in [((1.0,), dict(mode="bogus")), ((1.0,), dict(mode=["reflect"] * 3)),
                         (([1.0, 2.0, 3.0],), {}), ((1.0,), dict(order=1)),
                         ((1.0,), dict(bogus=1)), ((1.0,), dict(radius=-1)),
                         ((1.0,), dict(output=np.zeros((6, 6))))]:
        with pytest.raises(Exception) as want:
            getattr(ndi, fn)(x, *args, **kwargs)
        with pytest.raises(want.type):
            getattr(halo, fn)(x, *args, **kwargs)
    with pytest.raises(ValueError, match="unknown backend"):
        getattr(halo, fn)(x, 1.0, backend="gpu")


# ---------------------------------------------------------------------------------------------
# generic_laplace, generic_gradient_magnitude: the caller's function, called as SciPy calls it
# ---------------------------------------------------------------------------------------------
class Recorder:
    """A derivative that records each call's arguments (the input and output by identity: the
    caller's array or SciPy's new one, or a dtype) and returns a 1-D correlation of the
    module's own (SciPy's under SciPy, halo's under halo), scaled by the extra arguments."""

    def __init__(self, lib, weights):
        self.lib, self.weights, self.calls = lib, np.asarray(weights, np.float64), []

    def __call__(self, input, axis, output, mode, cval, *args, **kwargs):
        self.calls.append((input, axis, output, mode, cval, args, kwargs))
        w = self.weights * np.prod(args) * kwargs.get("scale", 1.0)
        return self.lib.correlate1d(input, w, axis, output, mode, cval)

    def signature(self, x, result):
        """The calls with the arrays named: the input given, the result returned, a dtype."""
        def name(a):
            if a is x:
                return "input"
            if a is result:
                return "result"
            return ("dtype", np.dtype(a)) if isinstance(a, (type, np.dtype)) else type(a)
        return [(name(i), axis, name(o), mode, cval, args, kwargs)
                for i, axis, o, mode, cval, args, kwargs in self.calls]


GENERIC = {"generic_laplace": [1.0, -2.0, 1.0], "generic_gradient_magnitude": [-0.5, 0.0, 0.5]}


@pytest.mark.parametrize("rank,shape", [(1, (17,)), (2, (9, 11)), (3, (5, 6, 7))])
@pytest.mark.parametrize("dtype", FLOATS + [np.int16])
@pytest.mark.parametrize("fn", list(GENERIC))
def test_generic_calls_as_scipy(rng, fn, rank, shape, dtype):
    """Every call of the derivative as SciPy makes it (the input itself, the output array
    first, then output.dtype; each axis's mode; cval; extra_arguments and extra_keywords), and
    SciPy's result, for the output given as None, a dtype or an array."""
    x = random_array(rng, shape, dtype)
    for mode, output, extra in itertools.product(
            ["wrap", [MODES[int(i)] for i in rng.integers(0, len(MODES), rank)]],
            [None, np.float64, "array"], [((), None), ((2.0, 0.5), dict(scale=-1.5))]):
        cval = float(rng.uniform(-2, 2))
        results, signatures = [], []
        for lib in (ndi, halo):
            rec = Recorder(lib, GENERIC[fn])
            out = np.full(shape, 99, np.float64) if output == "array" else output
            r = getattr(lib, fn)(x, rec, out, mode, cval, *extra)
            if output == "array":
                assert r is out
            results.append(r)
            signatures.append(rec.signature(x, r))
        assert signatures[1] == signatures[0]
        assert len(signatures[0]) == rank
        assert_matches(results[1], results[0], scale_of(x) * 20 * rank + abs(cval) * 20)


@pytest.mark.parametrize("fn", list(GENERIC))
def test_generic_keywords_and_defaults(rng, fn):
    """Arguments by keyword, extra_keywords None as {}, a list as input (converted once, the
    derivative gets the array), 0-d input (no call: a copy), and the callable's return value
    ignored for the first axis, as SciPy (a derivative that writes nothing leaves zeros)."""
    lst = random_array(rng, (6, 5), np.float64).tolist()
    name = "derivative2" if fn == "generic_laplace" else "derivative"
    for lib in (ndi, halo):
        rec = Recorder(lib, GENERIC[fn])
        r = getattr(lib, fn)(input=lst, mode="nearest", cval=1.0, extra_arguments=(3.0,),
                             extra_keywords=None, **{name: rec})
        ins = {id(c[0]) for c in rec.calls}
        assert len(ins) == 1 and type(rec.calls[0][0]) is np.ndarray
        assert [c[5:] for c in rec.calls] == [((3.0,), {})] * 2
        if lib is ndi:
            want = r
    assert_matches(r, want, 200)
    for lib in (ndi, halo):
        calls = []
        r0 = getattr(lib, fn)(np.array(1.5), lambda *a: calls.append(a))
        assert calls == [] and r0 == 1.5
    x = random_array(rng, (4, 5), np.float64)

    def lazy(input, axis, output, mode, cval):
        return np.ones(input.shape)  # returns, writes nothing into output

    want = getattr(ndi, fn)(x, lazy)
    assert_matches(getattr(halo, fn)(x, lazy), want, 1)
    assert np.any(want != 0)


@pytest.mark.parametrize("fn", list(GENERIC))
def test_generic_errors_as_scipy(rng, fn):
    """The callable's exceptions come through, from the axis where they arise, and a result
    numpy cannot add in place is SciPy's error."""
    x = random_array(rng, (5, 6), np.float64)

    class Bad(Exception):
        pass

    def raising_second(input, axis, output, mode, cval):
        if not isinstance(output, np.ndarray):
            raise Bad(axis)
        output[...] = input

    def wrong_kind(input, axis, output, mode, cval):
        return "not an array"

    def wrong_arity(input, axis, output, mode):
        return input

    for lib in (ndi, halo):
        with pytest.raises(Bad, match="^1$"):
            getattr(lib, fn)(x, raising_second)
    for bad, kwargs in [(wrong_kind, {}), (wrong_arity, {}),
                        (raising_second, dict(mode="bogus")),  # modes are the callable's
                        (wrong_arity, dict(mode=["reflect"] * 3)),
                        (wrong_arity, dict(output=np.zeros((5, 5))))]:
        with pytest.raises(Exception) as want:
            getattr(ndi, fn)(x, bad, **kwargs)
        with pytest.raises(want.type):
            getattr(halo, fn)(x, bad, **kwargs)


# ---------------------------------------------------------------------------------------------
# axes
# ---------------------------------------------------------------------------------------------
X4 = (5, 6, 7, 4)
AXES = [c for n in (1, 2, 3) for c in itertools.combinations(range(-4, 4), n)]


def _valid(axes):
    return len({a % 4 for a in axes}) == len(axes)


def _others(axes, ndim=4):
    """The axes not given."""
    return [a for a in range(ndim) if a not in {b % ndim for b in axes}]


def _over_slices(fn, x, axes):
    """fn on each slice of x through the axes given (the others fixed), as a stack."""
    others = _others(axes, x.ndim)
    out = None
    for idx in np.ndindex(*[x.shape[a] for a in others]):
        index = [slice(None)] * x.ndim
        for a, i in zip(others, idx):
            index[a] = i
        r = fn(x[tuple(index)])
        if out is None:
            out = np.empty(x.shape, r.dtype)
        out[tuple(index)] = r
    return out


def _sorted_by_axis(values, axes):
    """Per-axis values given in the order of axes, in the order of the axes themselves."""
    return [v for _, v in sorted(zip([a % 4 for a in axes], values))]


@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_axes_gaussian_and_uniform(rng, axes, dtype):
    x = random_array(rng, X4, dtype)
    n = len(axes)
    if not _valid(axes):
        for call in (lambda: halo.gaussian_filter(x, 1.0, axes=axes),
                     lambda: halo.uniform_filter(x, 3, axes=axes)):
            with pytest.raises(ValueError, match="axes must be unique"):
                call()
        return
    full = [a % 4 for a in axes]
    mode = [MODES[int(i)] for i in rng.integers(0, len(MODES), n)]
    cval = float(rng.uniform(-2, 2))
    # gaussian_filter: sigma, order, mode and radius per entry of axes. SciPy runs the 1-D
    # passes in the order of axes (which matters under a constant mode: a later pass reads
    # cval); with axes in increasing order, that is sigma 0 on the other axes.
    sigma = [float(s) for s in rng.uniform(0.4, 2.0, n)]
    order = [int(o) for o in rng.integers(0, 3, n)]
    radius = [int(r) for r in rng.integers(1, 5, n)]
    got = halo.gaussian_filter(x, sigma, order, mode=mode, cval=cval, radius=radius, axes=axes)
    want = x
    for a, s, o, m, r in zip(axes, sigma, order, mode, radius):
        want = ndi.gaussian_filter1d(want, s, a, o, mode=m, cval=cval, radius=r)
    assert_matches(got, want, (scale_of(x) + abs(cval)) * 50)
    if full == sorted(full):
        want = ndi.gaussian_filter(x, _expand(sigma, full, 0.0), _expand(order, full, 0),
                                   mode=_expand(mode, full, "reflect"), cval=cval,
                                   radius=_expand(radius, full, None))
        assert_matches(got, want, (scale_of(x) + abs(cval)) * 50)
    s = float(rng.uniform(0.4, 2.0))
    assert_matches(halo.gaussian_filter(x, s, axes=axes),
                   ndi.gaussian_filter(x, _expand([s] * n, full, 0.0)), scale_of(x) * 2)
    # uniform_filter: size, origin and mode per entry of axes, likewise.
    size = [int(k) for k in rng.integers(1, 6, n)]
    origin = [pick_origin(rng, k) for k in size]
    got = halo.uniform_filter(x, size, mode=mode, cval=cval, origin=origin, axes=axes)
    want = x
    for a, k, o, m in zip(axes, size, origin, mode):
        want = ndi.uniform_filter1d(want, k, a, mode=m, cval=cval, origin=o)
    assert_matches(got, want, (scale_of(x) + abs(cval)) * 4)
    if full == sorted(full):
        want = ndi.uniform_filter(x, _expand(size, full, 1), mode=_expand(mode, full, "reflect"),
                                  cval=cval, origin=_expand(origin, full, 0))
        assert_matches(got, want, (scale_of(x) + abs(cval)) * 4)


def _expand(values, axes, fill, ndim=4):
    full = [fill] * ndim
    for v, a in zip(values, axes):
        full[a] = v
    return full


@pytest.mark.parametrize("axes", [(0,), (3, 1), (-1, 0, 2), (2, -3)], ids=str)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32])
def test_axes_integer_passes_in_order(rng, axes, dtype):
    """Integer outputs are truncated after each pass, in the order of axes (SciPy's 1-D passes
    in that order), which an unsorted axes changes."""
    x = random_array(rng, X4, dtype)
    want = x
    for a, s in zip(axes, [1.3, 0.7, 2.2]):
        want = ndi.gaussian_filter1d(want, s, a, mode="nearest")
    got = halo.gaussian_filter(x, [1.3, 0.7, 2.2][:len(axes)], mode="nearest", axes=axes)
    assert_matches(got, want, 0, exact=True)
    want = x
    for a, k in zip(axes, [3, 4, 2]):
        want = ndi.uniform_filter1d(want, k, a, mode="wrap", origin=-1)
    got = halo.uniform_filter(x, [3, 4, 2][:len(axes)], mode="wrap", origin=-1, axes=axes)
    assert_matches(got, want, 0, exact=True)
    want = sum((ndi.correlate1d(x, [1, -2, 1], a, mode="reflect") for a in axes[1:]),
               ndi.correlate1d(x, [1, -2, 1], axes[0], mode="reflect"))
    assert_matches(halo.laplace(x, axes=axes), want.astype(dtype), 0, exact=True)


@pytest.mark.parametrize("axes", [c for c in AXES if len(c) > 1 or c[0] in (-4, 2)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ["correlate", "convolve"])
def test_axes_correlate_convolve(rng, fn, axes, dtype):
    """Weights of len(axes) dimensions, in the order of the axes themselves; origins one per
    entry of axes, in the order of axes (SciPy's _expand_footprint and _expand_origin)."""
    x = random_array(rng, X4, dtype)
    n = len(axes)
    w = rng.uniform(-1, 1, tuple(int(k) for k in rng.integers(1, 5, n)))
    if not _valid(axes):
        with pytest.raises(ValueError, match="axes must be unique"):
            getattr(halo, fn)(x, w, axes=axes)
        return
    full = [a % 4 for a in axes]
    # The weights' dimension j is along axis sorted(full)[j]; origin i along axis full[i].
    origin = [pick_origin(rng, w.shape[sorted(full).index(a)]) for a in full]
    cval = float(rng.uniform(-2, 2))
    got = getattr(halo, fn)(x, w, mode="mirror" if n < 3 else "constant", cval=cval,
                            origin=origin, axes=axes)
    w4 = np.expand_dims(w, tuple(_others(axes)))
    want = getattr(ndi, fn)(x, w4, mode="mirror" if n < 3 else "constant", cval=cval,
                            origin=_expand(origin, full, 0))
    assert_matches(got, want, scale_of(x, w) + abs(cval) * scale_of(np.ones(1), w))


@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_axes_laplace_and_gaussian_sums(rng, axes, dtype):
    """laplace, gaussian_laplace and gaussian_gradient_magnitude over the axes given equal
    SciPy's over each slice through them (the other axes not filtered): sigma and mode per entry
    of axes, in their order."""
    x = random_array(rng, X4, dtype)
    n = len(axes)
    if not _valid(axes):
        for fn, args in [("laplace", ()), ("gaussian_laplace", (1.0,)),
                         ("gaussian_gradient_magnitude", (1.0,))]:
            with pytest.raises(ValueError, match="axes must be unique"):
                getattr(halo, fn)(x, *args, axes=axes)
        return
    mode = [MODES[int(i)] for i in rng.integers(0, len(MODES), n)]
    sigma = [float(s) for s in rng.uniform(0.5, 2.0, n)]
    cval = float(rng.uniform(-2, 2))
    smode, ssigma = _sorted_by_axis(mode, axes), _sorted_by_axis(sigma, axes)
    got = halo.laplace(x, mode=mode, cval=cval, axes=axes)
    want = _over_slices(lambda s: ndi.laplace(s, mode=smode, cval=cval), x, axes)
    assert_matches(got, want, (scale_of(x) + abs(cval)) * 4 * n)
    for fn in GAUSSIAN_SUMS:
        got = getattr(halo, fn)(x, sigma, mode=mode, cval=cval, axes=axes)
        want = _over_slices(lambda s: getattr(ndi, fn)(s, ssigma, mode=smode, cval=cval), x,
                            axes)
        assert_matches(got, want, _bound(x, cval, n))
        # One sigma for every axis given: the others still not filtered.
        got = getattr(halo, fn)(x, 0.8, axes=axes)
        want = _over_slices(lambda s: getattr(ndi, fn)(s, 0.8), x, axes)
        assert_matches(got, want, _bound(x, 0, n))


@pytest.mark.parametrize("axes", [(1,), (3, 0), (-1, -3, 0), 2, -1], ids=str)
@pytest.mark.parametrize("fn", list(GENERIC))
def test_axes_generic(rng, fn, axes):
    """The derivative is called for the axes given, in their order (normalised to non-negative
    axes, a scalar as one axis), each with its own mode; the other axes not filtered."""
    x = random_array(rng, X4, np.float64)
    tup = (axes,) if isinstance(axes, int) else axes
    full = tuple(a % 4 for a in tup)
    mode = [MODES[int(i)] for i in rng.integers(0, len(MODES), len(tup))]
    rec = Recorder(halo, GENERIC[fn])
    got = getattr(halo, fn)(x, rec, mode=mode if len(tup) > 1 else mode[0], cval=0.5,
                            extra_keywords=dict(scale=2.0), axes=axes)
    assert rec.signature(x, got) == [
        ("input", a, "result" if i == 0 else ("dtype", np.dtype(np.float64)), m, 0.5, (),
         dict(scale=2.0)) for i, (a, m) in enumerate(zip(full, mode))]
    smode = _sorted_by_axis(mode, full)
    want = _over_slices(lambda s: getattr(ndi, fn)(s, Recorder(ndi, GENERIC[fn]), mode=smode,
                                                   cval=0.5, extra_keywords=dict(scale=2.0)),
                        x, full)
    assert_matches(got, want, scale_of(x) * 10 * len(tup) + 5)


def test_axes_sequences_as_scipy_pairs_them(rng):
    """Where axes name every axis, SciPy's gaussian_laplace keeps sigma (and correlate its
    origins) in the order of the axes themselves, not of axes; modes follow axes."""
    x = random_array(rng, (9, 10), np.float64)
    got = halo.gaussian_laplace(x, [0.8, 1.6], mode=["wrap", "constant"], axes=(1, 0))
    want = ndi.gaussian_laplace(x, [0.8, 1.6], mode=["constant", "wrap"])
    assert_matches(got, want, _bound(x, rank=2))
    got = halo.gaussian_gradient_magnitude(x, [0.8, 1.6], mode=["wrap", "nearest"], axes=(1, 0))
    want = ndi.gaussian_gradient_magnitude(x, [0.8, 1.6], mode=["nearest", "wrap"])
    assert_matches(got, want, _bound(x, rank=2))
    w = rng.uniform(-1, 1, (3, 4))
    got = halo.correlate(x, w, origin=[1, -2], axes=(1, 0))
    assert_matches(got, ndi.correlate(x, w, origin=[1, -2]), scale_of(x, w))


def test_axes_empty_and_scalar(rng):
    """axes=() filters nothing (a copy, in the output's dtype); a scalar is one axis, negative
    ones included (SciPy's correlate refuses a negative scalar: docs/PYTHON.md)."""
    x = random_array(rng, (6, 7, 5), np.float32)
    w = rng.uniform(-1, 1, 4)
    for call in (lambda **k: halo.gaussian_filter(x, 1.0, **k),
                 lambda **k: halo.uniform_filter(x, 3, **k), lambda **k: halo.laplace(x, **k),
                 lambda **k: halo.gaussian_laplace(x, 1.0, **k),
                 lambda **k: halo.gaussian_gradient_magnitude(x, 1.0, **k),
                 lambda **k: halo.generic_laplace(x, Recorder(halo, [1, -2, 1]), **k),
                 lambda **k: halo.generic_gradient_magnitude(x, Recorder(halo, [1, 0, -1]),
                                                             **k)):
        r = call(axes=(), output=np.float64)
        assert r.dtype == np.float64 and np.array_equal(r, x.astype(np.float64))
        assert_matches(call(axes=-1), call(axes=(2,)), 0, exact=True)
        assert not np.array_equal(call(axes=-1), call(axes=(1,)))
    # correlate over no axes: 0-d weights (SciPy's too: the weight applies).
    assert_matches(halo.correlate(x, np.array(2.0), axes=()), 2 * x, 0, exact=True)
    assert_matches(halo.correlate(x, w, axes=-1), ndi.correlate1d(x, w, -1), scale_of(x, w))
    assert_matches(halo.convolve(x, w, axes=0), ndi.convolve1d(x, w, 0), scale_of(x, w))


@pytest.mark.parametrize("fn,args", [
    ("correlate", (np.ones((3, 3)),)), ("convolve", (np.ones((3, 3)),)),
    ("gaussian_filter", (1.0,)), ("uniform_filter", (3,)), ("laplace", ()),
    ("gaussian_laplace", (1.0,)), ("gaussian_gradient_magnitude", (1.0,)),
    ("generic_laplace", (lambda *a: a[0],)), ("generic_gradient_magnitude", (lambda *a: a[0],))])
def test_axes_errors(fn, args):
    """SciPy's classes: an axis out of range a ValueError (numpy's AxisError), duplicates and
    other objects a ValueError, an element that is not an integer a TypeError; sequences of
    another length than axes a RuntimeError; the functions SciPy gives no axes refuse it."""
    x = np.ones((5, 6, 4))
    f = getattr(halo, fn)
    for axes in [(0, 3), (-4, 1), (3,), 3, -4]:
        with pytest.raises(ValueError, match="out of range") as e:
            f(x, *args, axes=axes)
        assert isinstance(e.value, AxisError)
    for axes in [(0, 0), (2, -1), [1, 1, 2]]:
        with pytest.raises(ValueError, match="unique"):
            f(x, *args, axes=axes)
    for axes in [(0, 1.0), 1.0, "0", (0, None)]:
        with pytest.raises(TypeError):
            f(x, *args, axes=axes)
    with pytest.raises(ValueError, match="integer, iterable of integers, or None"):
        f(x, *args, axes=object())
    if fn in ("correlate", "convolve"):
        with pytest.raises(RuntimeError, match="weights.ndim"):
            f(x, np.ones((3, 3)), axes=(0,))
        with pytest.raises(RuntimeError, match="length equal to input rank"):
            f(x, *args, origin=[0, 0, 0], axes=(0, 2))
    else:
        with pytest.raises(RuntimeError, match="length equal to input rank"):
            f(x, *args, mode=["reflect"] * 3, axes=(0, 2))
    if fn in ("gaussian_filter", "gaussian_laplace", "gaussian_gradient_magnitude"):
        with pytest.raises(RuntimeError, match="length equal to input rank"):
            f(x, [1.0, 1.0, 1.0], axes=(0, 2))
    if fn == "uniform_filter":
        with pytest.raises(RuntimeError, match="length equal to input rank"):
            f(x, [3, 3, 3], axes=(1, 2))


def test_no_axes_where_scipy_has_none():
    """The 1-D filters, sobel and prewitt take an axis, not axes, in SciPy too."""
    x = np.ones((5, 6))
    for fn, args in [("correlate1d", ([1.0, 2.0],)), ("convolve1d", ([1.0, 2.0],)),
                     ("gaussian_filter1d", (1.0,)), ("uniform_filter1d", (3,)), ("sobel", ()),
                     ("prewitt", ())]:
        getattr(halo, fn)(x, *args, axis=0)
        with pytest.raises(TypeError, match="axes"):
            getattr(halo, fn)(x, *args, axes=(0,))


def test_gpu_kinds_on_a_stand_in(monkeypatch, rng):
    """The new functions on a GPU kind (the stand-in of test_device_path.py: NumPy memory run as
    CuPy's): outputs of the input's kind, zeros, squares and roots by the kind's operations."""
    from halo import _arrays
    from test_device_path import FakeArray, FakeCuPy, on_fake
    kind = FakeCuPy()
    kind.root = np.sqrt
    monkeypatch.setitem(_arrays._kinds, "cupy", kind)
    for dtype in (np.float32, np.float64, np.int16):
        x = random_array(rng, (9, 8, 5), dtype)
        checks = [
            ("gaussian_laplace", (1.2,), lambda s: ndi.gaussian_laplace(s, 1.2)),
            ("gaussian_gradient_magnitude", (0.9,),
             lambda s: ndi.gaussian_gradient_magnitude(s, 0.9)),
            ("generic_laplace", (Recorder(halo, [1, -2, 1]),),
             lambda s: ndi.generic_laplace(s, Recorder(ndi, [1, -2, 1]))),
            ("generic_gradient_magnitude", (Recorder(halo, [1, 0, -1]),),
             lambda s: ndi.generic_gradient_magnitude(s, Recorder(ndi, [1, 0, -1]))),
            ("laplace", (), ndi.laplace),
        ]
        for fn, args, scipy_call in checks:
            for axes in (None, (2, 0)):
                got = getattr(halo, fn)(on_fake(x), *args, axes=axes)
                assert type(got) is FakeArray, fn
                want = scipy_call(x) if axes is None else _over_slices(scipy_call, x, axes)
                assert_matches(np.asarray(got), want, _bound(x))
    assert kind.calls
