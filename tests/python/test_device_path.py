"""The GPU arrays' Python path without a GPU: a stand-in for CuPy whose arrays are NumPy arrays
in host memory (a subclass from a module named cupy_...), run by the core's host entry. It
checks what halo/_calls.py and _arrays._Device do for GPU kinds (allocation with the input's
library, casts that follow SciPy's C conversions, spans for aliasing, axes moved, outputs of the
same kind) everywhere but the device call itself, which tests/python/test_gpu.py covers."""
import contextlib

import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from halo import _arrays
from support import assert_matches, random_array


class FakeArray(np.ndarray):
    pass


FakeArray.__module__ = "cupy_stand_in"


class FakeCuPy(_arrays._Device):
    """CuPy's operations, on FakeArray, recording the core calls. It checks the general path's
    casts and fallbacks, so the core's own dtypes (test_gpu.py, on a GPU) are not asked of it."""

    name = "cupy"
    native_dtypes = False

    def __init__(self):
        self.calls = []

    def dtype(self, x):
        return x.dtype

    def empty(self, shape, dtype, like):
        return np.empty(shape, dtype).view(FakeArray)

    def contiguous(self, x, dtype):
        if type(x) is FakeArray and x.dtype == dtype and x.flags.c_contiguous:
            return x  # as cupy.ascontiguousarray
        return np.ascontiguousarray(x, dtype).view(FakeArray)

    def is_contiguous(self, x):
        return x.flags.c_contiguous

    def writeable(self, x):
        return True

    def transpose(self, x, axes):
        return x.transpose(axes)

    def astype(self, x, dtype):
        with np.errstate(invalid="ignore"):  # where() computes both branches
            return np.asarray(x).astype(dtype).view(FakeArray)

    def where(self, c, a, b):
        return np.where(c, a, b).view(FakeArray)

    def rounded(self, x, lo, hi):
        return np.clip(np.nan_to_num(np.rint(np.asarray(x, np.float64)), nan=0.0), float(lo),
                       float(hi)).view(FakeArray)

    def root(self, x):
        return np.sqrt(np.asarray(x)).view(FakeArray)

    def write(self, dst, src):
        dst[...] = src

    assign = write

    def ptr(self, x):
        return x.__array_interface__["data"][0]

    def span(self, x):
        return _arrays._byte_span(self.ptr(x), x.shape, x.strides, x.dtype.itemsize)

    def stream(self, x):
        return 0

    def on_device(self, x):
        return contextlib.nullcontext()

    def current_device(self):
        return 0

    def device_id(self, x):
        return 0

    def empty_here(self, shape, dtype, like):
        return self.empty(shape, dtype, like)

    def call_prepared(self, prepared, src, dst):
        """A core call, prepared (the backend as given: the core's `auto` takes host arrays to a
        GPU where one is usable), on the arrays' host memory."""
        assert type(src) is FakeArray and type(dst) is FakeArray
        assert src.flags.c_contiguous and dst.flags.c_contiguous
        assert not np.may_share_memory(src, dst)
        self.calls.append((src.dtype, tuple(src.shape)))
        return prepared.host(np.asarray(src), np.asarray(dst))


@pytest.fixture
def fake(monkeypatch):
    k = FakeCuPy()
    monkeypatch.setitem(_arrays._kinds, "cupy", k)
    return k


def on_fake(x):
    return np.array(x).view(FakeArray)


def spy_on_runs(fake):
    """A list that receives (src, dst) of every core call the stand-in makes from now on."""
    seen = []
    call_prepared = fake.call_prepared

    def spy(prepared, src, dst):
        seen.append((src, dst))
        return call_prepared(prepared, src, dst)

    fake.call_prepared = spy
    return seen


CALLS = {
    "correlate": lambda lib, x, **kw: lib.correlate(x, np.arange(1.0, 7.0).reshape(2, 3), **kw),
    "convolve1d": lambda lib, x, **kw: lib.convolve1d(x, [1.0, -2.0, 0.5], axis=0, **kw),
    "gaussian_filter": lambda lib, x, **kw: lib.gaussian_filter(x, [1.0, 2.0], **kw),
    "gaussian_cval": lambda lib, x, **kw: lib.gaussian_filter(x, 1.0, mode="constant", cval=2,
                                                              **kw),
    "uniform_filter": lambda lib, x, **kw: lib.uniform_filter(x, [3, 2], **kw),
    "sobel": lambda lib, x, **kw: lib.sobel(x, **kw),
    "prewitt": lambda lib, x, **kw: lib.prewitt(x, 0, mode="constant", cval=1, **kw),
    "laplace": lambda lib, x, **kw: lib.laplace(x, **kw),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int16, np.uint32,
                                   np.int64, np.uint64, np.bool_])
def test_stand_in_matches_scipy(fake, rng, dtype):
    x = random_array(rng, (11, 13), dtype)
    for name, call in CALLS.items():
        got = call(halo, on_fake(x))
        assert type(got) is FakeArray, name
        assert_matches(np.asarray(got), call(ndi, x), np.abs(x.astype(float)).max() * 100)
    assert fake.calls and all(dt in (np.float32, np.float64) for dt, _ in fake.calls)


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int8, np.uint32, np.int64,
                                   np.uint64, np.bool_])
def test_stand_in_round_nearest(fake, rng, dtype):
    """round='nearest' through the GPU kinds' casts (_Device.cast): the host path's integers
    (the core's own stores for its dtypes, NumPy's casts for the others), saturated at both
    ends (float64 values past the range, infinities) and NaN to 0."""
    info = np.iinfo(dtype) if np.dtype(dtype).kind != "b" else np.iinfo(np.uint8)
    span = float(info.max) - float(info.min)
    if span < 2.0 ** 40:
        x = rng.uniform(float(info.min) - span, float(info.max) + span, (11, 13))
        x.flat[[3, 40, 77]] = [np.nan, np.inf, -np.inf]
    else:  # sums past 2**53 depend on the order of the additions: the ends below
        x = rng.uniform(-1e6, 1e6, (11, 13))
        x.flat[3] = np.nan
    calls = dict(CALLS, magnitude=lambda lib, x, **kw: lib.gaussian_gradient_magnitude(x, 1.0,
                                                                                       **kw))
    for name, call in calls.items():
        got = call(halo, on_fake(x), output=dtype, round="nearest")
        assert type(got) is FakeArray, name
        want = call(halo, x, output=dtype, round="nearest")
        np.testing.assert_array_equal(np.asarray(got), want, name)
    x.flat[[40, 77]] = [np.inf, -np.inf]
    flat = np.asarray(halo.correlate1d(on_fake(x), [1.0], output=dtype, round="nearest")).ravel()
    if np.dtype(dtype).kind != "b":
        assert (flat[3], flat[40], flat[77]) == (0, info.max, info.min)


def test_stand_in_zero_copy(fake, rng):
    """float32 in, float32 out: the core reads the input itself and writes the output."""
    x = on_fake(random_array(rng, (16, 24), np.float32))
    out = on_fake(np.empty((16, 24), np.float32))
    seen = spy_on_runs(fake)
    r = halo.gaussian_filter(x, 1.0, output=out)
    assert r is out
    (src, dst), = seen
    assert fake.ptr(src) == fake.ptr(x) and fake.ptr(dst) == fake.ptr(out)


def test_stand_in_layouts(fake, rng):
    x = random_array(rng, (20, 30), np.float64)
    xf = on_fake(x)
    assert_matches(np.asarray(halo.gaussian_filter(xf[::2, ::-3], 1.0)),
                   ndi.gaussian_filter(x[::2, ::-3], 1.0), 3)
    y = on_fake(x.copy())
    halo.sobel(y, output=y)
    assert_matches(np.asarray(y), ndi.sobel(x), 30)
    base = on_fake(random_array(rng, (21, 30), np.float64))
    want = ndi.uniform_filter(np.asarray(base[:-1]).copy(), 3)
    halo.uniform_filter(base[:-1], 3, output=base[1:])
    assert_matches(np.asarray(base[1:]), want, 3)
    x5 = random_array(rng, (2, 3, 4, 5, 6), np.float32)
    w = rng.uniform(-1, 1, (1, 3, 1, 2, 1))
    assert_matches(np.asarray(halo.correlate(on_fake(x5), w)), ndi.correlate(x5, w), 20)
    with pytest.raises(TypeError, match="kind"):
        halo.gaussian_filter(xf, 1.0, output=np.empty(x.shape))


def test_stand_in_replays(fake, rng):
    """Repeated calls on a GPU kind replay the core call: one full call keeps it, the next makes
    the same core call on a new output of the input's kind, equal to the full path's result."""
    halo._REPLAY.clear()
    shape = (17, 19)
    first = on_fake(random_array(rng, shape, np.float32))
    halo.gaussian_filter(first, 1.5, mode="nearest")
    assert len(halo._REPLAY) == 1
    seen = spy_on_runs(fake)
    x = on_fake(random_array(rng, shape, np.float32))
    hits = halo._halo.replay_hits()["python"]  # kinds the package replays itself
    replayed = halo.gaussian_filter(x, 1.5, mode="nearest")
    assert halo._halo.replay_hits()["python"] == hits + 1
    (src, dst), = seen
    assert src is x and dst is replayed and type(replayed) is FakeArray
    halo._REPLAY.clear()
    full = halo.gaussian_filter(x, 1.5, mode="nearest")
    np.testing.assert_array_equal(np.asarray(replayed), np.asarray(full))
    assert_matches(np.asarray(replayed), ndi.gaussian_filter(np.asarray(x), 1.5, mode="nearest"),
                   4)
    # Into an output of the input's kind: recorded, then replayed into it.
    o = on_fake(np.full(shape, np.nan, np.float32))
    for _ in range(2):
        seen.clear()
        assert halo.gaussian_filter(x, 1.5, mode="nearest", output=o) is o
        (src, dst), = seen
        assert src is x and dst is o
    np.testing.assert_array_equal(np.asarray(o), np.asarray(full))
    # A NumPy array of the same shape and arguments does not take the GPU kind's replay.
    halo._REPLAY.clear()
    halo.gaussian_filter(x, 1.5, mode="nearest")
    seen.clear()
    h = halo.gaussian_filter(np.asarray(x).copy(), 1.5, mode="nearest")
    assert type(h) is np.ndarray and not seen


def test_stand_in_no_replay_for_other_layouts(fake, rng):
    """Non-contiguous and integer GPU inputs take the full path every time."""
    halo._REPLAY.clear()
    x = on_fake(random_array(rng, (12, 20), np.float32))
    for _ in range(2):
        halo.uniform_filter(x[:, ::2], 3)
        halo.uniform_filter(on_fake(random_array(rng, (12, 10), np.uint8)), 3)
    assert len(halo._REPLAY) == 0
