"""halo: scipy.ndimage's convolution filters on halo's C++/CUDA core.

A drop-in for these functions of scipy.ndimage, with SciPy's signatures, defaults, output dtypes
and results (docs/PYTHON.md says where results can differ):

    correlate, convolve, correlate1d, convolve1d, gaussian_filter, gaussian_filter1d,
    uniform_filter, uniform_filter1d, sobel, prewitt, laplace, gaussian_laplace,
    gaussian_gradient_magnitude, generic_laplace, generic_gradient_magnitude

with SciPy's keyword-only axes (the axes to filter; the others are not) where recent SciPy has
it: correlate, convolve, gaussian_filter, uniform_filter, laplace and the last four. Each but
the generic_ ones (which call the caller's function) also takes the keyword-only arguments
backend ('auto', 'cpu', 'reference', 'cuda'), strategy (a name from halo.strategies(), or None to
let the core choose), direct_sums (every output a plain sum of its taps: no Winograd, FFT or
separable passes) and round ('truncate', SciPy's; or 'nearest': integer and bool outputs
rounded to nearest, ties to even, saturated, NaN to 0; each pass's store too). NumPy arrays run
on the CPU (or are copied to the GPU with backend='cuda'); CuPy arrays and PyTorch CUDA tensors
run on their GPU without copies, on the caller's current stream, and come back as the same
kind.

    from halo import gaussian_filter
    smooth = gaussian_filter(image, sigma=2)
"""

# The package by role: _filters (the public filters), _arguments (SciPy's argument checks),
# _dtypes (dtype rules), _weights (the named filters' weights), _calls (running passes on the
# core), _replay (repeated calls replayed), _arrays (array kinds), _info (build, choices, tuning).
import os as _os

from . import _halo

# The stacks libgomp gives its threads, which the core's memory checks count (it reads no
# environment): the first of OMP_STACKSIZE and GOMP_STACKSIZE that is set and well formed.
for _name in ("OMP_STACKSIZE", "GOMP_STACKSIZE"):
    if _os.environ.get(_name) and _halo.set_openmp_stack_size(_os.environ[_name]):
        break
from ._filters import (convolve, convolve1d, correlate, correlate1d, gaussian_filter,
                       gaussian_filter1d, gaussian_gradient_magnitude, gaussian_laplace,
                       generic_gradient_magnitude, generic_laplace, laplace, prewitt, sobel,
                       uniform_filter, uniform_filter1d)
from ._info import info, last_run, load_profile, set_tuning, strategies, tuning
from ._replay import _REPLAY  # noqa: F401 (the replay table: tests and bench/compare.py)

__all__ = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter",
           "gaussian_filter1d", "uniform_filter", "uniform_filter1d", "sobel", "prewitt",
           "laplace", "gaussian_laplace", "gaussian_gradient_magnitude", "generic_laplace",
           "generic_gradient_magnitude", "info", "strategies", "last_run", "set_tuning",
           "load_profile", "tuning", "Error"]

Error = _halo.Error  # what the core reports; a RuntimeError
__version__ = _halo.build_info()["version"]

# The public functions say they are halo's (help(), pickling by name), as when defined here.
for _name in __all__:
    if _name != "Error":
        globals()[_name].__module__ = __name__
del _name, _os
