"""Fixtures of halo's Python tests: fresh random data (a new seed per test, printed so that a
failure can be replayed with HALO_TEST_SEED=<seed>), and a check that scipy.ndimage is SciPy's.
Helpers are in support.py."""
import os
import secrets

import numpy as np
import pytest

import halo

try:
    import scipy.ndimage
except ImportError:  # the GPU tests compare with halo's CPU path and need no SciPy
    scipy = None


@pytest.fixture
def rng():
    seed = int(os.environ.get("HALO_TEST_SEED", secrets.randbits(63)))
    print(f"seed {seed} (HALO_TEST_SEED={seed} replays it)")
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _scipy_is_scipy():
    # The comparisons below would compare halo with itself if SciPy's functions were halo's (as
    # they are, on purpose, in scipy_suite/).
    if scipy is None:
        return
    assert scipy.ndimage.correlate is not halo.correlate
    assert scipy.ndimage.gaussian_filter is not halo.gaussian_filter
