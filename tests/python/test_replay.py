"""Repeated calls on NumPy arrays replay the core call of an earlier call with equal arguments
(python/halo/_replay.py, _replayable): bit for bit the full path's result on new data, into a
new array or the output given, the same errors for arguments that differ only in type,
last_run() as the full path sets it, and weights changed in place are seen."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from support import assert_matches, random_array

# (function, args after the input, keywords); the weights are fixed per case.
W2 = np.array([[0.5, -1.0, 0.25], [1.5, 2.0, -0.75], [0.125, -0.5, 1.0]])
W1 = np.array([0.25, -1.0, 2.0, 0.5])
CASES = [
    ("gaussian_filter", (1.5,), {}),
    ("gaussian_filter", ((1.0, 2.0),), {"mode": "nearest"}),
    ("gaussian_filter1d", (2.0,), {"axis": 0, "mode": "mirror"}),
    ("uniform_filter", (3,), {}),
    ("uniform_filter1d", (5,), {"mode": "wrap"}),
    ("correlate", (W2,), {}),
    ("convolve", (W2,), {"mode": "constant", "cval": 0.5}),
    ("correlate1d", (W1,), {"axis": 0}),
    ("convolve1d", (W1,), {"origin": 1}),
    ("sobel", (), {"axis": 0}),
    ("prewitt", (), {}),
    ("laplace", (), {}),
]
# The calls that run as one core call reading the input: these must be replayed.
MUST_REPLAY = {"gaussian_filter", "gaussian_filter1d", "uniform_filter", "uniform_filter1d",
               "correlate", "convolve", "correlate1d", "convolve1d"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,args,kwargs", CASES)
def test_replay_matches_the_full_path(rng, dtype, name, args, kwargs):
    fn, want_fn = getattr(halo, name), getattr(ndi, name)
    halo._REPLAY.clear()
    shape = (23, 17)
    first = random_array(rng, shape, dtype)
    got = fn(first, *args, **kwargs)
    assert_matches(got, want_fn(first, *args, **kwargs), 20)
    stored = len(halo._REPLAY)
    if name in MUST_REPLAY:
        assert stored == 1, f"{name} kept no replay"
    for _ in range(2):  # new data through the replay (if kept), then through the full path
        x = random_array(rng, shape, dtype)
        replayed = fn(x, *args, **kwargs)
        run = halo.last_run()
        assert replayed.dtype == x.dtype and replayed.shape == x.shape
        assert_matches(replayed, want_fn(x, *args, **kwargs), 20)
        halo._REPLAY.clear()
        full = fn(x, *args, **kwargs)
        np.testing.assert_array_equal(replayed, full)
        assert halo.last_run() == run


def test_replay_keeps_argument_errors(rng):
    x = random_array(rng, (9, 8), np.float32)
    halo._REPLAY.clear()
    halo.gaussian_filter(x, 1.0, direct_sums=True)
    halo.gaussian_filter(x, 1.0, direct_sums=True)  # replayed
    with pytest.raises(TypeError):
        halo.gaussian_filter(x, 1.0, direct_sums=1)  # equal to True as a key, not as an argument
    with pytest.raises(RuntimeError):
        halo.gaussian_filter(x, 1.0, mode="no-such-mode")


def test_replay_sees_weights_changed_in_place(rng):
    x = random_array(rng, (12, 10), np.float64)
    w = rng.uniform(-1, 1, (3, 3))
    halo._REPLAY.clear()
    halo.correlate(x, w)
    w[1, 1] += 3.0
    np.testing.assert_allclose(halo.correlate(x, w), ndi.correlate(x, w), rtol=1e-12,
                               atol=1e-12)


def test_lists_are_keyed_by_their_values(rng):
    """A list argument keys a call by its values at the call: one changed in place between two
    calls is seen, as an equal new list replays."""
    x = random_array(rng, (10, 11), np.float32)
    halo._REPLAY.clear()
    out = np.full_like(x, np.nan)
    sigma = [1.0, 2.0]
    w = [[1.0, 2.0], [3.0, 4.0]]
    for _ in range(2):
        assert halo.gaussian_filter(x, 1.0, output=out) is out  # kept: an output of x's kind
        assert_matches(halo.gaussian_filter(x, sigma), ndi.gaussian_filter(x, sigma), 4)
        assert_matches(halo.correlate(x, w), ndi.correlate(x, w), 20)
    assert len(halo._REPLAY) == 3
    sigma[1] = 0.5
    w[0][1] = -2.0
    assert_matches(halo.gaussian_filter(x, sigma), ndi.gaussian_filter(x, sigma), 4)
    assert_matches(halo.correlate(x, w), ndi.correlate(x, w), 20)
    assert_matches(halo.gaussian_filter(x, [1.0, 2.0]), ndi.gaussian_filter(x, [1.0, 2.0]), 4)
    assert len(halo._REPLAY) == 5
    assert_matches(out, ndi.gaussian_filter(x, 1.0), 4)


class _Weights:
    """An array-like hashed by identity, whose values can change under the same object."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


def test_no_replay_for_weights_hashed_by_identity(rng):
    x = random_array(rng, (12, 10), np.float64)
    w = _Weights(rng.uniform(-1, 1, (3, 3)))
    halo._REPLAY.clear()
    halo.correlate(x, w)
    w.a = w.a + 3.0
    np.testing.assert_allclose(halo.correlate(x, w), ndi.correlate(x, w.a), rtol=1e-12,
                               atol=1e-12)
    assert len(halo._REPLAY) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_replay_into_an_output_given(rng, dtype):
    """A call with an output of the input's dtype and shape replays into it: the output itself
    is returned, bit for bit the full path's result; outputs that alias the input, differ in
    dtype or are not contiguous take the full path, with the right result."""
    halo._REPLAY.clear()
    shape = (21, 18)
    w = np.array([[0.5, -1.0, 0.25], [1.5, 2.0, -0.75], [0.125, -0.5, 1.0]])
    out = np.full(shape, np.nan, dtype)
    halo.correlate(random_array(rng, shape, dtype), w, out, mode="wrap")  # recorded
    assert len(halo._REPLAY) == 1
    x = random_array(rng, shape, dtype)
    r = halo.correlate(x, w, out, mode="wrap")
    assert r is out
    halo._REPLAY.clear()
    full = halo.correlate(x, w, mode="wrap")
    np.testing.assert_array_equal(out, full)
    assert_matches(out, ndi.correlate(x, w, mode="wrap"), 20)
    # The keyword form (keyed as plain arguments: recorded once, then replayed), then outputs
    # the replay must not write itself.
    recorded = len(halo._REPLAY)
    halo.gaussian_filter(x, 1.5, output=out)
    assert len(halo._REPLAY) == recorded + 1
    out[...] = np.nan
    assert halo.gaussian_filter(x, 1.5, output=out) is out
    assert len(halo._REPLAY) == recorded + 1
    assert_matches(out, ndi.gaussian_filter(x, 1.5), 4)
    buf = np.empty(2 * x.size, dtype)
    xs = buf[:x.size].reshape(shape)
    for shift in (1, x.size - 1):  # contiguous, overlapping the input in part
        for _ in range(2):
            xs[...] = x
            o = buf[shift:shift + x.size].reshape(shape)
            assert halo.gaussian_filter(xs, 1.5, output=o) is o
            assert_matches(o, ndi.gaussian_filter(x, 1.5), 4)
    y = x.copy()
    assert halo.gaussian_filter(y, 1.5, output=y) is y  # in place: the full path's copy
    assert_matches(y, ndi.gaussian_filter(x, 1.5), 4)
    other = np.full(shape, np.nan, np.float64 if dtype == np.float32 else np.float32)
    halo.gaussian_filter(x, 1.5, output=other)
    assert_matches(other, ndi.gaussian_filter(x, 1.5, output=other.dtype), 4)
    strided = np.full((shape[0], 2 * shape[1]), np.nan, dtype)[:, ::2]
    halo.gaussian_filter(x, 1.5, output=strided)
    assert_matches(strided, ndi.gaussian_filter(x, 1.5), 4)
    readonly = np.zeros(shape, dtype)
    readonly.flags.writeable = False
    with pytest.raises(ValueError):
        halo.gaussian_filter(x, 1.5, output=readonly)


def test_replays_from_several_threads(rng):
    """Threads replaying one prepared call at once (the core runs with the GIL released) each get
    their own input's result, bit for bit the full path's."""
    import threading

    xs = [random_array(rng, (48, 50), np.float32) for _ in range(4)]
    want = []
    for x in xs:  # the full path's results
        halo._REPLAY.clear()
        want.append(halo.gaussian_filter(x, 1.5, mode="nearest"))
    assert len(halo._REPLAY) == 1  # the last call's: the threads replay it
    bad = []

    def work(i):
        for _ in range(30):
            got = halo.gaussian_filter(xs[i], 1.5, mode="nearest")
            if not np.array_equal(got, want[i]):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    assert_matches(want[1], ndi.gaussian_filter(xs[1], 1.5, mode="nearest"), 4)


def _hits():
    return sum(halo._halo.replay_hits().values())


def test_keys_tell_types_and_bits_apart(rng):
    """Arguments equal in Python but not as arguments (1 and 1.0, a NumPy scalar and a float,
    -0.0 and 0.0) are different keys; equal ones replay."""
    x = random_array(rng, (14, 13), np.float64)
    halo._REPLAY.clear()
    calls = [
        lambda: halo.uniform_filter(x, 3, mode="constant", cval=0.0),
        lambda: halo.uniform_filter(x, 3, mode="constant", cval=-0.0),
        lambda: halo.uniform_filter(x, 3, mode="constant", cval=0),
        lambda: halo.gaussian_filter(x, 1.5),
        lambda: halo.gaussian_filter(x, np.float32(1.5)),
        lambda: halo.gaussian_filter(x, np.float64(1.5)),
        lambda: halo.gaussian_filter(x, (1.5, 1.5)),
        lambda: halo.gaussian_filter(x, np.array([1.5, 1.5])),
    ]
    firsts = [c() for c in calls]
    assert len(halo._REPLAY) == len(calls)
    hits = _hits()
    for c, first in zip(calls, firsts):
        np.testing.assert_array_equal(c(), first)
    assert _hits() == hits + len(calls) and len(halo._REPLAY) == len(calls)
    assert_matches(firsts[5], ndi.gaussian_filter(x, 1.5), 4)


def test_arguments_that_take_the_full_path(rng):
    """Objects compared by identity, weights beyond 4096 elements or not contiguous, object
    arrays and unknown keywords are not keyed: every call takes the full path, right."""
    x = random_array(rng, (30, 31), np.float64)
    big = rng.uniform(-1, 1, (65, 65)) / 4000
    strided = rng.uniform(-1, 1, (3, 6))[:, ::2]
    halo._REPLAY.clear()
    for _ in range(2):
        assert_matches(halo.correlate(x, big, mode="nearest"),
                       ndi.correlate(x, big, mode="nearest"), 200)
        assert_matches(halo.correlate(x, strided), ndi.correlate(x, strided), 20)
        assert_matches(halo.gaussian_filter(x, np.array([1.0, 2.0], dtype=object)),
                       ndi.gaussian_filter(x, [1.0, 2.0]), 4)
        with pytest.raises(TypeError):
            halo.gaussian_filter(x, 1.0, no_such_argument=1)
    assert len(halo._REPLAY) == 0


def test_inputs_that_take_the_full_path(rng):
    """Inputs the replay does not read (other byte order, not contiguous, integer, a subclass)
    take the full path every time; an output that aliases the input too."""
    x = random_array(rng, (16, 18), np.float32)
    halo._REPLAY.clear()
    for _ in range(2):
        swapped = x.astype(x.dtype.newbyteorder())
        assert_matches(halo.gaussian_filter(swapped, 1.0), ndi.gaussian_filter(x, 1.0), 4)
        assert_matches(halo.gaussian_filter(x[:, ::2], 1.0), ndi.gaussian_filter(x[:, ::2], 1.0),
                       4)
        m = x.view(np.matrix)
        assert_matches(np.asarray(halo.uniform_filter(m, 3)), ndi.uniform_filter(x, 3), 4)
    assert len(halo._REPLAY) == 0
    y = x.copy()
    halo.uniform_filter(x, 3)  # recorded
    for _ in range(2):
        y[...] = x
        assert halo.uniform_filter(y, 3, output=y) is y
        assert_matches(y, ndi.uniform_filter(x, 3), 4)


def test_replay_outputs_of_every_rank(rng):
    """Replays of 1-D to 4-D inputs (a leading axis of the filter of size 1) come back with the
    input's shape and dtype, new or into the output given."""
    halo._REPLAY.clear()
    for shape in [(50,), (9, 10), (4, 5, 6), (2, 3, 4, 5)]:
        w = np.ones((1,) * (len(shape) - 1) + (3,)) / 3
        for dtype in (np.float32, np.float64):
            for _ in range(2):
                x = random_array(rng, shape, dtype)
                got = halo.correlate(x, w, mode="wrap")
                assert got.shape == shape and got.dtype == dtype
                assert_matches(got, ndi.correlate(x, w, mode="wrap"), 4)
                o = np.full(shape, np.nan, dtype)
                assert halo.correlate(x, w, o, mode="wrap") is o
                np.testing.assert_array_equal(o, got)
    assert len(halo._REPLAY) == 16


def test_replays_while_another_thread_changes_the_table(rng):
    """Threads replaying while another empties the table and records other calls (the core runs
    without the GIL, so the table changes under a replay in flight) get their own results."""
    import threading

    xs = [random_array(rng, (64, 70), np.float32) for _ in range(3)]
    want = [ndi.gaussian_filter(x, 2.0, mode="mirror") for x in xs]
    stop = threading.Event()
    bad = []

    def churn():
        y = random_array(np.random.default_rng(1), (20, 21), np.float64)
        i = 0
        while not stop.is_set():
            halo._REPLAY.clear()
            halo.uniform_filter(y, 3 + i % 5)
            i += 1

    def work(i):
        for _ in range(60):
            got = halo.gaussian_filter(xs[i], 2.0, mode="mirror")
            try:
                assert_matches(got, want[i], 4)
            except AssertionError:
                bad.append(i)

    churner = threading.Thread(target=churn)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    churner.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    churner.join()
    assert not bad
