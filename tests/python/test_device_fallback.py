"""Integer outputs of GPU arrays where no CUDA strategy sums directly, without a GPU: the stand-in
for CuPy of test_device_path.py, refusing what the CUDA strategies refuse (direct sums in float64
beyond `fast`'s compiled radii under a boundary mode; the seed kernels compute zero ghost cells
only). halo then runs the pass in float64 without direct sums (on the GPU: `fft`), its sums
rounded to the nearest integer where they are integers: SciPy's integers exactly there, and
within one elsewhere (issue 47, item 6)."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import halo
from halo import _arrays
from test_device_path import FakeCuPy, on_fake

# `fast`'s compiled radii (src/cuda/fast/policy.hpp) per dtype and rank: the largest halo the
# stand-in sums directly under a boundary mode.
DIRECT_RADII = {"float32": {1: 64, 2: 15, 3: 4}, "float64": {1: 32, 2: 8, 3: 3}}
MODES = ["nearest", "reflect", "mirror", "wrap", "constant"]


class RefusingCuPy(FakeCuPy):
    """The stand-in, choosing as the CUDA backend chooses (roughly): direct sums under a boundary
    mode up to DIRECT_RADII, anything without direct sums; refuse_all: nothing."""

    def __init__(self, refuse_all=False):
        super().__init__()
        self.refuse_all = refuse_all
        self.ran = []  # (dtype name, direct sums) of each core call that ran

    def reason(self, dtype, call):
        shape, w, convolve, modes, cval, origins, backend, strategy, direct = call[:9]
        zero = all(m == "constant" for m in modes) and cval == 0
        halo_ = max(k // 2 + abs(o) for k, o in zip(w.shape, origins))
        limit = DIRECT_RADII[np.dtype(dtype).name][len(w.shape)]
        problem = (f"no cuda strategy can run {len(w.shape)}D {np.dtype(dtype).name}, filter "
                   f"{'x'.join(map(str, w.shape))}")
        if direct and not zero and halo_ > limit:
            return f"{problem}: fast: compiled for halos up to {limit}; fft: direct sums required"
        if self.refuse_all:
            return f"{problem}: fft: the filter is too long"
        return None

    def rint(self, x):
        np.rint(x, out=x)

    def choose(self, dtype, call):
        why = self.reason(dtype, call)
        if why:
            raise halo.Error(why)
        return ("fast" if call[8] else "fft", "cuda", "stand-in")

    def run(self, src, dst, *call):
        self.choose(self.dtype(src), call)
        self.ran.append((self.dtype(src).name, bool(call[8])))
        return super().run(src, dst, *call)


@pytest.fixture
def refusing(monkeypatch):
    k = RefusingCuPy()
    monkeypatch.setitem(_arrays._kinds, "cupy", k)
    return k


def image(rng, shape, dtype=np.uint8):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def assert_within_one(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max(initial=0) <= 1, f"{np.count_nonzero(diff > 1)} differ by more than one"


@pytest.mark.parametrize("mode", MODES)
def test_gaussians_beyond_direct_kernels(refusing, rng, mode):
    """The issue's reproducers: a uint8 Gaussian of sigma 4.6 (37 taps) under every mode, and
    sigma 7 along axis 0, run where float64 direct sums are refused: truncated from float64 sums
    in another order, so within one of SciPy's (exact where no sum lies near an integer)."""
    x = image(rng, (54, 343))
    cval = 0 if mode != "constant" else 7
    got = halo.gaussian_filter(on_fake(x), 4.6, mode=mode, cval=cval)
    assert_within_one(got, ndi.gaussian_filter(x, 4.6, mode=mode, cval=cval))
    got = halo.gaussian_filter1d(on_fake(x), 7, axis=0, mode=mode, cval=cval)
    assert_within_one(got, ndi.gaussian_filter1d(x, 7, axis=0, mode=mode, cval=cval))
    # The y pass (2-D, radius 18 and 28 in float64) was refused, then ran without direct sums.
    assert ("float64", False) in refusing.ran


@pytest.mark.parametrize("mode", MODES)
def test_integral_filters_stay_exact(refusing, rng, mode):
    """Integer inputs, integral weights and cval: the sums are integers, rounded to the nearest
    after the float64 pass without direct sums, so SciPy's exactly: in float64 (a 4x8x7 filter
    whose sums pass 2**24), and where a float32 pass was refused (a 3-D box of radius 5)."""
    cval = 0 if mode != "constant" else 3
    x = image(rng, (9, 12, 11))
    w = rng.integers(-1000, 1001, (4, 8, 7)).astype(np.float64)
    for fn in ("correlate", "convolve"):
        got = getattr(halo, fn)(on_fake(x), w, mode=mode, cval=cval, output=np.int32)
        want = getattr(ndi, fn)(x, w, mode=mode, cval=cval, output=np.int32)
        np.testing.assert_array_equal(np.asarray(got), want)
    assert refusing.ran == [("float64", False)] * 2  # the radius-4 3-D filter, refused first
    refusing.ran.clear()
    box = np.ones((11, 11, 11))
    got = halo.correlate(on_fake(x), box, mode=mode, cval=cval, output=np.int32)
    np.testing.assert_array_equal(np.asarray(got), ndi.correlate(x, box, mode=mode, cval=cval,
                                                                 output=np.int32))
    assert refusing.ran == [("float64", False)]
    # Non-integral weights: within one of SciPy's.
    wf = rng.uniform(-1, 1, (4, 8, 7))
    assert_within_one(halo.correlate(on_fake(x), wf, mode=mode, cval=cval),
                      ndi.correlate(x, wf, mode=mode, cval=cval))


def test_uniform_and_derivatives_of_integers(refusing, rng):
    """Passes with a divisor (uniform) and summed passes (laplace) beyond the direct radii."""
    x = image(rng, (40, 50), np.int16)
    for mode in MODES:
        got = halo.uniform_filter(on_fake(x), 41, mode=mode)
        np.testing.assert_array_equal(np.asarray(got), ndi.uniform_filter(x, 41, mode=mode))
        got = halo.uniform_filter1d(on_fake(x), 71, axis=0, mode=mode)
        np.testing.assert_array_equal(np.asarray(got),
                                      ndi.uniform_filter1d(x, 71, axis=0, mode=mode))
    w = np.arange(-20.0, 21.0)
    got = halo.correlate1d(on_fake(x), w, axis=0, mode="wrap", output=np.int64)
    np.testing.assert_array_equal(np.asarray(got),
                                  ndi.correlate1d(x, w, axis=0, mode="wrap", output=np.int64))


def test_no_fallback_where_the_caller_chose(refusing, rng):
    """direct_sums=True or an explicit strategy: the core's refusal, no other computation."""
    x = on_fake(image(rng, (30, 40)))
    with pytest.raises(halo.Error, match="no cuda strategy"):
        halo.gaussian_filter1d(x, 7, axis=0, mode="nearest", direct_sums=True)
    with pytest.raises(halo.Error, match="no cuda strategy"):
        halo.gaussian_filter1d(x, 7, axis=0, mode="nearest", strategy="fast")
    assert ("float64", False) not in refusing.ran


def test_refused_either_way_says_both(monkeypatch, rng):
    k = RefusingCuPy(refuse_all=True)
    monkeypatch.setitem(_arrays._kinds, "cupy", k)
    with pytest.raises(halo.Error, match="and in float64 without direct sums"):
        halo.gaussian_filter1d(on_fake(image(rng, (30, 40))), 7, axis=0, mode="nearest")


def test_other_errors_are_not_fallen_back_from(refusing, rng, monkeypatch):
    """An error of the run itself (memory, say), where a strategy was chosen, is the caller's."""
    def broken(prepared, src, dst):
        raise halo.Error("not enough device memory")

    monkeypatch.setattr(refusing, "call_prepared", broken)
    with pytest.raises(halo.Error, match="not enough device memory"):
        halo.gaussian_filter1d(on_fake(image(rng, (30, 40))), 2, axis=0, mode="nearest")
    assert refusing.ran == [("float64", True)]
