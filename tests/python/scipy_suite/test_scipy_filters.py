"""SciPy's test_filters.py, collected here so that conftest.py runs it against halo."""
from scipy.ndimage.tests.test_filters import *  # noqa: F401,F403
