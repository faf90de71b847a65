"""Runs SciPy's own filter tests (scipy/ndimage/tests/test_filters.py of the installed SciPy)
against halo: while each test of this folder runs, scipy.ndimage's and scipy.ndimage._filters'
functions that halo provides are halo's (SciPy's code that calls them by those names then calls
halo's too). Tests listed in tests/python/scipy_suite_exclusions.txt are expected to fail
(strict: one that passes is reported), each for the reason given there."""
import fnmatch
import os

import pytest
import scipy.ndimage
import scipy.ndimage._filters

import halo

PROVIDED = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter",
            "gaussian_filter1d", "uniform_filter", "uniform_filter1d", "sobel", "prewitt",
            "laplace", "gaussian_laplace", "gaussian_gradient_magnitude", "generic_laplace",
            "generic_gradient_magnitude"]
EXCLUSIONS = os.path.join(os.path.dirname(__file__), os.pardir, "scipy_suite_exclusions.txt")


def _exclusions():
    """(pattern, reason) per line 'pattern  # reason'; patterns are fnmatch patterns of node
    ids below the test module, e.g. TestNdimageFilters::test_gauss03 or test_gaussian_filter."""
    out = []
    with open(EXCLUSIONS) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reason = line.partition("#")
            out.append((pattern.strip(), reason.strip()))
    return out


def pytest_collection_modifyitems(config, items):
    rules = _exclusions()
    used = set()
    for item in items:
        name = item.nodeid.split("::", 1)[1]
        for pattern, reason in rules:
            if fnmatch.fnmatchcase(name, pattern):
                item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
                used.add(pattern)
    unused = [p for p, _ in rules if p not in used]
    if unused:
        raise pytest.UsageError(f"exclusions that match no test: {unused}")


@pytest.fixture(autouse=True)
def _halo_as_scipy(monkeypatch):
    for name in PROVIDED:
        monkeypatch.setattr(scipy.ndimage, name, getattr(halo, name))
        monkeypatch.setattr(scipy.ndimage._filters, name, getattr(halo, name))
    yield
