"""halo on GPU arrays: CuPy arrays and PyTorch CUDA tensors run on their device with no copies,
on the caller's current stream, and come back as the same kind on the same device; results
match halo's CPU path (which tests/python/test_filters.py checks against SciPy). Skipped
without CuPy / PyTorch, a GPU, or a halo built with CUDA (python/run-gpu-tests builds and runs
these on a GPU machine)."""
import numpy as np
import scipy.ndimage as ndi
import pytest

import halo
from support import assert_matches, random_array


def _halo_sees_a_gpu():
    if not halo.info()["cuda_devices"]:
        pytest.skip("halo was built without CUDA or sees no GPU: "
                    + halo.info()["cuda_unavailable_because"])


@pytest.fixture
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no GPU")
    except Exception as e:  # no driver
        pytest.skip(f"CuPy sees no GPU: {e}")
    _halo_sees_a_gpu()
    return cupy


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    if not t.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    _halo_sees_a_gpu()
    return t


def scale_of(x):
    return float(np.max(np.abs(x))) if x.size else 0.0


CALLS = [
    ("correlate", lambda lib, x: lib.correlate(x, np.arange(1.0, 1.0 + 3 ** x.ndim).reshape(
        (3,) * x.ndim) / 9, mode="mirror")),
    ("convolve", lambda lib, x: lib.convolve(x, np.ones((2,) * x.ndim) / 4, mode="constant",
                                             cval=0.5)),
    ("correlate1d", lambda lib, x: lib.correlate1d(x, [0.5, -1.0, 2.0], axis=0, origin=1)),
    ("convolve1d", lambda lib, x: lib.convolve1d(x, [0.25, 1.0], mode="wrap")),
    ("gaussian_filter", lambda lib, x: lib.gaussian_filter(x, 1.5, mode="reflect")),
    ("gaussian_filter_big", lambda lib, x: lib.gaussian_filter(x, 6.0, mode="nearest")),
    ("gaussian_filter1d", lambda lib, x: lib.gaussian_filter1d(x, 2.0, order=1)),
    ("uniform_filter", lambda lib, x: lib.uniform_filter(x, 5, mode="constant", cval=1.0)),
    ("uniform_filter1d", lambda lib, x: lib.uniform_filter1d(x, 4, axis=0)),
    ("sobel", lambda lib, x: lib.sobel(x, axis=0)),
    ("prewitt", lambda lib, x: lib.prewitt(x)),
    ("laplace", lambda lib, x: lib.laplace(x, mode="wrap")),
    ("gaussian_laplace", lambda lib, x: lib.gaussian_laplace(x, 1.5)),
    ("gaussian_gradient_magnitude", lambda lib, x: lib.gaussian_gradient_magnitude(
        x, 1.5, mode="nearest")),
    ("generic_laplace", lambda lib, x: lib.generic_laplace(
        x, lambda i, a, o, m, c: lib.correlate1d(i, [1.0, -2.0, 1.0], a, o, m, c))),
    ("gaussian_filter_axes", lambda lib, x: lib.gaussian_filter(x, 1.5, axes=(0,))),
    ("uniform_filter_axes", lambda lib, x: lib.uniform_filter(x, 3, axes=(-1,), mode="wrap")),
]
SHAPES = [(1000,), (67, 129), (9, 33, 40)]


# ---------------------------------------------------------------------------------------------
# CuPy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cupy_matches_cpu(cp, rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    xg = cp.asarray(x)
    for name, call in CALLS:
        got = call(halo, xg)
        assert isinstance(got, cp.ndarray), name
        assert got.device == xg.device
        assert halo.last_run()["backend"] == "cuda", (name, halo.last_run())
        assert_matches(cp.asnumpy(got), call(halo, x), scale_of(x) * 60)


def test_cupy_zero_copy(cp, rng):
    """Float arrays in the core's dtypes: the only CuPy allocation is the output, and an output
    given is written in place."""
    x = cp.asarray(random_array(rng, (256, 512), np.float32))
    pool = cp.get_default_memory_pool()
    cp.cuda.Device().synchronize()
    for name, call in CALLS:
        before = pool.used_bytes()
        r = call(halo, x)
        assert pool.used_bytes() - before == x.nbytes, name  # the output and nothing else
        del r
    out = cp.empty_like(x)
    r = halo.gaussian_filter(x, 2.0, output=out)
    assert r is out and r.data.ptr == out.data.ptr
    assert_matches(cp.asnumpy(out), halo.gaussian_filter(cp.asnumpy(x), 2.0), 3)


_SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
"""


def test_cupy_stream_order(cp, rng):
    """Work queued on the caller's (non-blocking) stream before the call is seen by halo, and
    halo's result is ready for later work on that stream: a kernel that spins ~50 ms holds the
    stream before the input's last update, so a halo reading on another stream would read it
    before that update."""
    x0 = random_array(rng, (2048, 2048), np.float32)
    want = halo.gaussian_filter(x0 * 2 ** 10, 3.0)
    spin = cp.RawKernel(_SPIN, "spin")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.asarray(x0)
        for _ in range(9):
            x = x * 2
        spin((1,), (1,), (np.int64(100_000_000),))
        x = x * 2  # x0 * 2^10, written after the spin
        r = halo.gaussian_filter(x, 3.0)
        r2 = r * 1  # queued behind halo's kernels
        got = cp.asnumpy(r2, stream=s)
    s.synchronize()
    assert_matches(got, want, scale_of(want) * 4)


def test_cupy_replay_stream_order(cp, rng):
    """A replayed call (python/halo/_replay.py, _replayable) runs on the stream current at that
    call, not the one of the call it replays: recorded on the default stream, replayed on a
    non-blocking stream held by a spinning kernel before the input's last update."""
    x0 = random_array(rng, (2048, 2048), np.float32)
    want = halo.gaussian_filter(x0 * 2, 2.5, mode="nearest")
    halo._REPLAY.clear()
    first = halo.gaussian_filter(cp.asarray(x0), 2.5, mode="nearest")  # recorded
    assert len(halo._REPLAY) == 1
    assert_matches(cp.asnumpy(first), halo.gaussian_filter(x0, 2.5, mode="nearest"), 4)
    spin = cp.RawKernel(_SPIN, "spin")
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.asarray(x0)
        spin((1,), (1,), (np.int64(100_000_000),))
        x *= 2  # written after the spin
        r = halo.gaussian_filter(x, 2.5, mode="nearest")  # replayed
        got = cp.asnumpy(r * 1, stream=s)
        o = cp.full_like(x, cp.nan)
        for _ in range(2):  # recorded, then replayed into the output given
            assert halo.gaussian_filter(x, 2.5, mode="nearest", output=o) is o
        got_o = cp.asnumpy(o, stream=s)
    s.synchronize()
    assert_matches(got_o, want, scale_of(want) * 4)
    assert isinstance(r, cp.ndarray) and r.device == x.device and r.dtype == cp.float32
    assert halo.last_run()["backend"] == "cuda"
    assert_matches(got, want, scale_of(want) * 4)


def test_cupy_replays_read_arrays_and_weights(cp, rng):
    """Replays of CuPy arrays run in python/replay.cpp (its CuPy path, counted), new or into
    the output given; CuPy weights key a call by their values (copied to the host as the full
    path copies them), so weights changed in place are seen."""
    x0 = random_array(rng, (96, 130), np.float32)
    w0 = rng.uniform(-1, 1, (5, 5))
    x, w = cp.asarray(x0), cp.asarray(w0)
    want = halo.correlate(x0, w0, mode="reflect")
    w0[2, 2] += 3.0
    changed = halo.correlate(x0, w0, mode="reflect")
    halo._REPLAY.clear()
    halo.correlate(x, w, mode="reflect")  # recorded
    hits = halo._halo.replay_hits()["cupy"]
    got = halo.correlate(x, w, mode="reflect")
    o = cp.full_like(x, cp.nan)
    halo.correlate(x, w, o, mode="reflect")  # recorded
    assert halo.correlate(x, w, o, mode="reflect") is o
    assert halo._halo.replay_hits()["cupy"] == hits + 2 and len(halo._REPLAY) == 2
    assert_matches(cp.asnumpy(got), want, 20)
    assert_matches(cp.asnumpy(o), want, 20)
    w[2, 2] += 3.0
    assert_matches(cp.asnumpy(halo.correlate(x, w, mode="reflect")), changed, 20)
    assert len(halo._REPLAY) == 3 and halo._halo.replay_hits()["cupy"] == hits + 2


def test_cupy_tuning_moves_auto(cp, rng):
    """halo.set_tuning's crossovers move auto's choice on the GPU, replayed calls included: a
    7x7 Gaussian runs on `fast` by default, as separable passes from sep_radius_2d=2."""
    x0 = random_array(rng, (512, 520), np.float32)
    x = cp.asarray(x0)
    want = halo.gaussian_filter(x0, 0.75)
    try:
        for tune, strategy in (("", "fast"), ("sep_radius_2d=2", "separable"), ("", "fast")):
            halo.set_tuning(tune)
            for _ in range(2):
                got = halo.gaussian_filter(x, 0.75)
                assert halo.last_run()["strategy"] == strategy, tune
                assert_matches(cp.asnumpy(got), want, 4)
    finally:
        halo.set_tuning("")


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint32, np.float16])
def test_cupy_other_dtypes(cp, rng, dtype):
    """Conversions on the GPU; integer outputs exactly as on the CPU (SciPy's), the wrap-around
    of uint8 gradients included, float16 rounded from float32."""
    x = random_array(rng, (40, 50), dtype)
    xg = cp.asarray(x)
    calls = [("sobel", {}), ("uniform_filter", {"size": 3}), ("gaussian_filter", {"sigma": 1.0}),
             ("laplace", {}), ("correlate1d", {"weights": [-1.5, 0.5, 2.0]})]
    for name, kw in calls:
        got = getattr(halo, name)(xg, **kw)
        assert got.dtype == x.dtype
        want = getattr(halo, name)(x, **kw)
        assert_matches(cp.asnumpy(got), want, scale_of(x) * 20)  # exact for integers


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32])
@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest", "mirror", "wrap"])
def test_cupy_native_integers_equal_scipy(cp, rng, dtype, mode):
    """The core's own integer outputs on the GPU (core/converted.hpp) equal SciPy's bit for bit,
    flat regions included: there the sums land within rounding of an integer, and the kernels
    decide them by SciPy's own sum in SciPy's order."""
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -3000), min(info.max, 3000), size=(67, 91)).astype(dtype)
    x[10:40, 5:70] = 77
    xg = cp.asarray(x)
    calls = [("gaussian_filter", (2.0,), {}), ("gaussian_filter1d", (1.5,), {"axis": 0}),
             ("correlate", (np.full((3, 3), 1 / 9),), {}), ("sobel", (), {}),
             ("convolve", (np.array([[0.1, 0.2, 0.4, 0.2, 0.1]]),), {"origin": (0, 1)})]
    for name, args, kw in calls:
        want = getattr(ndi, name)(x, *args, mode=mode, cval=3, **kw)
        got = cp.asnumpy(getattr(halo, name)(xg, *args, mode=mode, cval=3, **kw))
        assert_matches(got, want, 1, exact=True)


def test_cupy_layouts(cp, rng):
    x = random_array(rng, (60, 80), np.float32)
    xg = cp.asarray(x)
    # Strided input and output, in place, overlapping.
    v = xg[::2, 1::3]
    assert_matches(cp.asnumpy(halo.gaussian_filter(v, 1.0)),
                   halo.gaussian_filter(x[::2, 1::3], 1.0), 3)
    big = cp.full((120, 160), cp.nan, cp.float32)
    out = big[::2, ::2]
    halo.uniform_filter(xg, 3, output=out)
    assert_matches(cp.asnumpy(out), halo.uniform_filter(x, 3), 3)
    assert bool(cp.all(cp.isnan(big[1::2])))
    y = xg.copy()
    halo.sobel(y, output=y)
    assert_matches(cp.asnumpy(y), halo.sobel(x), 20)
    # Contiguous outputs that overlap a contiguous input in part, each call twice (recorded,
    # then where it may, replayed): the full path's copy, never a replay into the input.
    for shift in (1, 80 * 30, 80 * 60 - 1):
        buf = cp.empty(2 * 60 * 80, cp.float32)
        xs = buf[:60 * 80].reshape(60, 80)
        for _ in range(2):
            xs[...] = xg
            o = buf[shift:shift + 60 * 80].reshape(60, 80)
            assert halo.gaussian_filter(xs, 1.0, output=o) is o
            assert_matches(cp.asnumpy(o), halo.gaussian_filter(x, 1.0), 3)
    # Batches beyond rank 3.
    x5 = random_array(rng, (2, 3, 4, 5, 6), np.float32)
    assert_matches(cp.asnumpy(halo.gaussian_filter(cp.asarray(x5), [0, 0, 1, 1, 1])),
                   halo.gaussian_filter(x5, [0, 0, 1, 1, 1]), 3)


def test_cupy_errors_and_kinds(cp, rng):
    xg = cp.asarray(random_array(rng, (10, 10), np.float32))
    with pytest.raises(TypeError, match="kind"):
        halo.gaussian_filter(xg, 1.0, output=np.empty((10, 10), np.float32))
    with pytest.raises(halo.Error):
        halo.gaussian_filter(xg, 1.0, backend="cpu")  # device memory for a CPU strategy


def test_cuda_array_interface_objects(cp, rng):
    """Another library's GPU array (here a bare __cuda_array_interface__) comes back as CuPy's."""
    x = cp.asarray(random_array(rng, (30, 20), np.float64))

    class Foreign:
        __cuda_array_interface__ = x.__cuda_array_interface__

    got = halo.gaussian_filter(Foreign(), 1.0)
    assert isinstance(got, cp.ndarray)
    assert_matches(cp.asnumpy(got), halo.gaussian_filter(cp.asnumpy(x), 1.0), 3)


def test_numpy_on_the_gpu(cp, rng):
    """backend='cuda' takes NumPy arrays to the GPU and back (the core copies them)."""
    x = random_array(rng, (100, 90), np.float32)
    got = halo.gaussian_filter(x, 2.0, backend="cuda")
    assert isinstance(got, np.ndarray)
    assert halo.last_run()["backend"] == "cuda"
    want = halo.gaussian_filter(x, 2.0)
    # 'auto' keeps NumPy arrays on the CPU, though a GPU is there.
    assert halo.last_run()["backend"] == "cpu", halo.last_run()
    assert_matches(got, want, 3)


def test_cupy_other_device(cp, rng):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU")
    x = random_array(rng, (50, 60), np.float32)
    with cp.cuda.Device(1):
        xg = cp.asarray(x)
    want = halo.gaussian_filter(x, 1.5)
    halo._REPLAY.clear()
    with cp.cuda.Device(0):
        o = None
        for i in range(3):  # recorded, then replayed on device 1 with device 0 current
            got = halo.gaussian_filter(xg, 1.5)
            assert got.device.id == 1 and cp.cuda.runtime.getDevice() == 0
            assert_matches(cp.asnumpy(got), want, 3)
            if i == 1:
                hits = halo._halo.replay_hits()["cupy"]
                with cp.cuda.Device(1):
                    o = cp.full_like(xg, cp.nan)
            if o is not None:
                assert halo.gaussian_filter(xg, 1.5, output=o) is o
                assert cp.cuda.runtime.getDevice() == 0
                assert_matches(cp.asnumpy(o), want, 3)
        assert halo._halo.replay_hits()["cupy"] == hits + 2  # new and into o, the third round
        # An output on another device than the input's is refused (the replay leaves it to
        # the full path, which says so).
        other = cp.full_like(cp.asarray(x), cp.nan)
        with pytest.raises(ValueError, match="GPU 0"):
            halo.gaussian_filter(xg, 1.5, output=other)
        assert halo._halo.replay_hits()["cupy"] == hits + 2


def test_torch_other_device(torch, rng):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    x = random_array(rng, (40, 70), np.float64)
    t = torch.from_numpy(x).to("cuda:1")
    want = halo.uniform_filter(x, 5)
    halo._REPLAY.clear()
    with torch.cuda.device(0):
        for _ in range(3):  # recorded, then replayed on device 1 with device 0 current
            got = halo.uniform_filter(t, 5)
            assert got.device == t.device and torch.cuda.current_device() == 0
            assert_matches(got.cpu().numpy(), want, 3)
        with pytest.raises(ValueError, match="GPU 0"):
            halo.uniform_filter(t, 5, output=torch.empty(t.shape, dtype=t.dtype, device="cuda:0"))
    assert halo._halo.replay_hits()["torch"] >= 2


# ---------------------------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_torch_matches_cpu(torch, rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    xt = torch.from_numpy(x).cuda()
    for name, call in CALLS:
        got = call(halo, xt)
        assert isinstance(got, torch.Tensor) and got.device == xt.device, name
        assert halo.last_run()["backend"] == "cuda"
        assert_matches(got.cpu().numpy(), call(halo, x), scale_of(x) * 60)


def test_torch_zero_copy(torch, rng):
    x = torch.from_numpy(random_array(rng, (256, 512), np.float32)).cuda()
    torch.cuda.synchronize()
    for name, call in CALLS:
        before = torch.cuda.memory_allocated()
        r = call(halo, x)
        assert torch.cuda.memory_allocated() - before == x.numel() * 4, name
        del r
    out = torch.empty_like(x)
    r = halo.gaussian_filter(x, 2.0, output=out)
    assert r is out and r.data_ptr() == out.data_ptr()


def test_torch_stream_order(torch, rng):
    x0 = random_array(rng, (2048, 2048), np.float32)
    want = halo.gaussian_filter(x0 * 2 ** 10, 3.0)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.from_numpy(x0).to("cuda", non_blocking=False)
        for _ in range(9):
            x = x * 2
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(100_000_000)  # holds the stream ~50 ms (as test_stream_order)
        x = x * 2
        r = halo.gaussian_filter(x, 3.0)
        r2 = r * 1
    s.synchronize()
    assert_matches(r2.cpu().numpy(), want, scale_of(want) * 4)


def test_torch_replay(torch, rng):
    """Torch tensors replay too, as tensors on their device and the current stream; a replay
    recorded on a CuPy array of the same shape is not taken by a tensor."""
    x0 = random_array(rng, (300, 257), np.float64)
    want = halo.uniform_filter(x0, 7, mode="wrap")
    halo._REPLAY.clear()
    for _ in range(3):
        t = torch.from_numpy(x0).cuda()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            got = halo.uniform_filter(t, 7, mode="wrap")
            host = got.cpu()
        assert isinstance(got, torch.Tensor) and got.device == t.device
        assert got.dtype == torch.float64
        assert_matches(host.numpy(), want, 3)
    assert len(halo._REPLAY) == 1 and halo._halo.replay_hits()["torch"] >= 2
    # Tensor weights on the GPU key a call by their values, as CuPy's do.
    w = torch.from_numpy(rng.uniform(-1, 1, (3, 3))).cuda()
    t = torch.from_numpy(x0).cuda()
    want_w = halo.correlate(x0, w.cpu().numpy())
    hits = halo._halo.replay_hits()["torch"]
    for _ in range(2):
        assert_matches(halo.correlate(t, w).cpu().numpy(), want_w, 20)
    assert halo._halo.replay_hits()["torch"] == hits + 1
    w[0, 0] = 5.0
    want_w = halo.correlate(x0, w.cpu().numpy())
    assert_matches(halo.correlate(t, w).cpu().numpy(), want_w, 20)
    assert halo._halo.replay_hits()["torch"] == hits + 1
    kept = len(halo._REPLAY)
    try:
        import cupy
    except ImportError:
        return
    c = halo.uniform_filter(cupy.asarray(x0), 7, mode="wrap")
    assert isinstance(c, cupy.ndarray) and len(halo._REPLAY) == kept + 1


def test_torch_dtypes_and_layouts(torch, rng):
    x = random_array(rng, (40, 50), np.uint8)
    got = halo.sobel(torch.from_numpy(x).cuda())
    assert got.dtype == torch.uint8
    assert_matches(got.cpu().numpy(), halo.sobel(x), 0, exact=True)
    xf = random_array(rng, (40, 50), np.float32)
    t = torch.from_numpy(xf).cuda()
    assert_matches(halo.gaussian_filter(t.t(), 1.0).cpu().numpy(), halo.gaussian_filter(xf.T, 1.0),
                   3)
    got = halo.gaussian_filter(t, 1.0, output=torch.float64)
    assert got.dtype == torch.float64
    out = torch.full((40, 100), float("nan"), device="cuda")[:, ::2]
    halo.uniform_filter(t, 3, output=out)
    assert_matches(out.cpu().numpy(), halo.uniform_filter(xf, 3), 3)
    with pytest.raises(TypeError, match="kind"):
        halo.gaussian_filter(t, 1.0, output=np.empty((40, 50), np.float32))
