"""The public filters, scipy.ndimage's signatures: their arguments checked as SciPy checks them,
then run as passes of core calls (_calls), and replayed when repeated (_replay)."""

from collections.abc import Iterable

import numpy as np
try:  # NumPy 2
    from numpy.lib.array_utils import normalize_axis_index
except ImportError:  # NumPy 1
    from numpy.core.multiarray import normalize_axis_index

from ._arguments import (_allocate, _check_axes, _mode, _normalize_sequence, _on_axes, _options,
                         _origin_1d, _origins_nd, _output, _real_cval, _uniform_axis)
from ._arrays import host_weights, kind_name, kind_of
from ._calls import _along, _complex_via_real, _copy, _execute, _real_or_split, _separable
from ._replay import _on_input_device, _replayable
from ._weights import (_DIFF, _PREWITT_SMOOTH, _SECOND, _SOBEL_SMOOTH, _box_factors,
                       _gaussian_factors, _gaussian_weights, _laplace_weights)


# ---------------------------------------------------------------------------------------------
# correlate, convolve, correlate1d, convolve1d
# ---------------------------------------------------------------------------------------------
def _correlate1d(input, weights, axis, output, mode, cval, origin, convolve, opts):
    xp, input = kind_of(input)
    weights = host_weights(weights)
    if xp.dtype(input).kind == "c" or weights.dtype.kind == "c":
        if weights.dtype.kind == "c" and not convolve:
            weights = weights.conj()  # as numpy.correlate: the weights conjugated
        out, out_dt = _output(output, xp, input, complex_output=True)
        out = _allocate(xp, out, out_dt, input)

        def call(part, w, o, c):
            return _correlate1d(part, w, axis, o, mode, c, origin, convolve, opts)

        return _complex_via_real(call, xp, input, weights, out, cval)
    out, out_dt = _output(output, xp, input)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1 or weights.shape[0] < 1:
        raise RuntimeError("no filter weights given")
    ndim = len(input.shape)
    axis = normalize_axis_index(axis, ndim)
    origin = _origin_1d(origin, len(weights), convolve)
    modes = ["constant"] * ndim
    modes[axis] = _mode(mode)
    origins = [0] * ndim
    origins[axis] = origin
    passes = [(_along(weights, axis, ndim), convolve, modes, origins, None)]
    return _execute(xp, input, out, out_dt, passes, _real_cval(cval), opts)


def _correlate(input, weights, output, mode, cval, origin, convolve, opts, axes):
    xp, input = kind_of(input)
    weights = host_weights(weights)
    if xp.dtype(input).kind == "c" or weights.dtype.kind == "c":
        if weights.dtype.kind == "c" and not convolve:
            weights = weights.conj()
        out, out_dt = _output(output, xp, input, complex_output=True)
        out = _allocate(xp, out, out_dt, input)

        def call(part, w, o, c):
            return _correlate(part, w, o, mode, c, origin, convolve, opts, axes)

        return _complex_via_real(call, xp, input, weights, out, cval)
    ndim = len(input.shape)
    axes = _check_axes(axes, ndim)
    weights = np.asarray(weights, dtype=np.float64)
    origins = _normalize_sequence(origin, len(axes))
    if len(axes) < ndim:
        # SciPy's _expand_footprint and _expand_origin: the weights' axes stay in the input's
        # order (extent 1 inserted on the axes not filtered), while the origins, one per entry
        # of axes, go to those axes in the order given.
        if weights.ndim != len(axes):
            raise RuntimeError(f"weights.ndim ({weights.ndim}) must match len(axes) "
                               f"({len(axes)})")
        weights = np.expand_dims(weights, tuple(a for a in range(ndim) if a not in axes))
        origins = _on_axes(origins, axes, ndim, 0)
    wshape = [k for k in weights.shape if k > 0]
    if len(wshape) != ndim:
        raise RuntimeError("filter weights array has incorrect shape.")
    origins = _origins_nd(origins, wshape, convolve)
    if weights.size == 0:
        raise RuntimeError("no filter weights given")
    out, out_dt = _output(output, xp, input)
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise RuntimeError("A sequence of modes is not supported")
    _mode(mode)
    passes = [(weights, convolve, [mode] * ndim, origins, None, "nd")]
    return _execute(xp, input, out, out_dt, passes, _real_cval(cval), opts)


@_replayable
@_on_input_device
def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.correlate1d: a 1-D correlation along the given axis."""
    return _correlate1d(input, weights, axis, output, mode, cval, origin, False,
                        _options(backend, strategy, direct_sums, round))


@_replayable
@_on_input_device
def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
               backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.convolve1d: a 1-D convolution along the given axis."""
    if kind_name(weights) not in ("cupy", "torch", "torch (CPU)"):
        # SciPy's convolve1d first reverses the weights as given: weights[::-1] of a number or
        # None is a TypeError there, of a 0-d array an IndexError.
        weights[::-1]
    return _correlate1d(input, weights, axis, output, mode, cval, origin, True,
                        _options(backend, strategy, direct_sums, round))


@_replayable
@_on_input_device
def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
              backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.correlate: a multidimensional correlation (weights of the input's rank, or
    of len(axes) over the axes given)."""
    return _correlate(input, weights, output, mode, cval, origin, False,
                      _options(backend, strategy, direct_sums, round), axes)


@_replayable
@_on_input_device
def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
             backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.convolve: a multidimensional convolution (weights of the input's rank, or
    of len(axes) over the axes given)."""
    return _correlate(input, weights, output, mode, cval, origin, True,
                      _options(backend, strategy, direct_sums, round), axes)


# ---------------------------------------------------------------------------------------------
# Gaussian filters
# ---------------------------------------------------------------------------------------------


@_replayable
@_on_input_device
def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None, backend="auto", strategy=None,
                      direct_sums=False, round="truncate"):
    """scipy.ndimage.gaussian_filter1d: a 1-D Gaussian filter (or a derivative, order > 0)."""
    weights = _gaussian_weights(sigma, order, truncate, radius)[0]
    return _correlate1d(input, weights, axis, output, mode, cval, 0, False,
                        _options(backend, strategy, direct_sums, round))


@_replayable
@_on_input_device
def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None, backend="auto", strategy=None, direct_sums=False,
                    round="truncate"):
    """scipy.ndimage.gaussian_filter: a multidimensional Gaussian filter, per axis sigma, order,
    mode and radius (one per entry of axes where axes are given)."""
    opts = _options(backend, strategy, direct_sums, round)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input)
    ndim = len(input.shape)
    axes = _check_axes(axes, ndim)
    modes = _on_axes(_normalize_sequence(mode, len(axes)), axes, ndim, "constant")
    factors, key = _gaussian_factors(axes, sigma, order, truncate, radius)
    if not factors:
        return _copy(xp, input, out, out_dt, opts)
    return _real_or_split(
        lambda i, o, dt, c: _separable(xp, i, o, dt, factors, modes, c, opts, key=key), xp,
        input, out, out_dt, cval)


# ---------------------------------------------------------------------------------------------
# Uniform filters
# ---------------------------------------------------------------------------------------------
def _uniform_passes(xp, input, out, out_dt, axes, cval, opts):
    """axes: (axis, size, origin, mode) in SciPy's order, already checked."""
    ndim = len(input.shape)
    modes = ["constant"] * ndim
    origins = [0] * ndim
    for a, size, origin, mode in axes:
        modes[a] = mode
        origins[a] = origin
    if out_dt.kind not in "fc":
        # SciPy sums the window exactly (a running sum of integers) and divides in float64: the
        # core sums with weights 1, the division follows, then the truncation of each pass.
        passes = []
        for a, size, origin, mode in axes:
            o = [0] * ndim
            o[a] = origin
            passes.append((_along(np.ones(size), a, ndim), False, modes, o, float(size)))
        return _execute(xp, input, out, out_dt, passes, cval, opts)
    key = tuple(("box", a, size) for a, size, _, _ in axes)
    return _separable(xp, input, out, out_dt, _box_factors(key), modes, cval, opts, origins, key)


def _uniform(xp, input, out, out_dt, axes, cval, opts):
    return _real_or_split(lambda i, o, dt, c: _uniform_passes(xp, i, o, dt, axes, c, opts), xp,
                          input, out, out_dt, cval)


@_replayable
@_on_input_device
def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                     backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.uniform_filter1d: a 1-D uniform (box, mean) filter along the given axis."""
    opts = _options(backend, strategy, direct_sums, round)
    xp, input = kind_of(input)
    axis = normalize_axis_index(axis, len(input.shape))
    if size < 1:
        raise RuntimeError("incorrect filter size")
    out, out_dt = _output(output, xp, input, complex_output=xp.dtype(input).kind == "c")
    return _uniform(xp, input, out, out_dt, [(axis, *_uniform_axis(size, origin, mode))], cval,
                    opts)


@_replayable
@_on_input_device
def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
                   backend="auto", strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.uniform_filter: a multidimensional uniform filter, per axis size, origin
    and mode (one per entry of axes where axes are given)."""
    opts = _options(backend, strategy, direct_sums, round)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input, complex_output=xp.dtype(input).kind == "c")
    axes = _check_axes(axes, len(input.shape))
    n = len(axes)
    sizes = _normalize_sequence(size, n)
    origins = _normalize_sequence(origin, n)
    modes = _normalize_sequence(mode, n)
    axes = [(axes[i], sizes[i], origins[i], modes[i]) for i in range(n) if sizes[i] > 1]
    if not axes:
        return _copy(xp, input, out, out_dt, opts)
    # SciPy's uniform_filter passes int(size) to uniform_filter1d.
    axes = [(a, *_uniform_axis(int(s), o, m)) for a, s, o, m in axes]
    return _uniform(xp, input, out, out_dt, axes, cval, opts)


# ---------------------------------------------------------------------------------------------
# Derivatives: sobel, prewitt, laplace
# ---------------------------------------------------------------------------------------------


def _gradient(input, axis, output, mode, cval, smooth, opts):
    xp, input = kind_of(input)
    ndim = len(input.shape)
    axis = normalize_axis_index(axis, ndim)
    out, out_dt = _output(output, xp, input)
    modes = _normalize_sequence(mode, ndim)
    factors = [(axis, _DIFF)] + [(a, smooth) for a in range(ndim) if a != axis]
    key = ("gradient", axis, float(smooth[1]))
    return _real_or_split(
        lambda i, o, dt, c: _separable(xp, i, o, dt, factors, modes, c, opts, key=key), xp,
        input, out, out_dt, cval)


@_replayable
@_on_input_device
def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0, *, backend="auto",
          strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.sobel: the Sobel derivative along axis, smoothed [1, 2, 1] across."""
    return _gradient(input, axis, output, mode, cval, _SOBEL_SMOOTH,
                     _options(backend, strategy, direct_sums, round))


@_replayable
@_on_input_device
def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0, *, backend="auto",
            strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.prewitt: the Prewitt derivative along axis, smoothed [1, 1, 1] across."""
    return _gradient(input, axis, output, mode, cval, _PREWITT_SMOOTH,
                     _options(backend, strategy, direct_sums, round))


def _laplace_real(xp, input, out, out_dt, axes, modes, cval, opts):
    ndim = len(input.shape)
    if out_dt.kind in "fc" and len(axes) <= 3:
        # One N-D filter, the cross; "nd": its zero weights are no taps, as SciPy's per-axis
        # passes never read off their axis (a NaN or infinity reaches only the cross).
        passes = [(_laplace_weights(ndim, axes), False, list(modes), [0] * ndim, None, "nd")]
        return _execute(xp, input, out, out_dt, passes, cval, opts)
    # SciPy's sum of per-axis results in the order of axes, each rounded to the output dtype.
    passes = [(_along(_SECOND, a, ndim), False, list(modes), [0] * ndim, None) for a in axes]
    return _execute(xp, input, out, out_dt, passes, cval, opts, summed=True)


@_replayable
@_on_input_device
def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None, backend="auto",
            strategy=None, direct_sums=False, round="truncate"):
    """scipy.ndimage.laplace: the sum of the second differences [1, -2, 1] along every axis (or
    the axes given, a mode per entry)."""
    opts = _options(backend, strategy, direct_sums, round)
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input)
    ndim = len(input.shape)
    axes = _check_axes(axes, ndim)
    if not axes:
        return _copy(xp, input, out, out_dt, opts)
    modes = _on_axes([_mode(m) for m in _normalize_sequence(mode, len(axes))], axes, ndim,
                     "constant")
    return _real_or_split(lambda i, o, dt, c: _laplace_real(xp, i, o, dt, axes, modes, c, opts),
                          xp, input, out, out_dt, cval)


# ---------------------------------------------------------------------------------------------
# Sums of per-axis derivatives: generic_laplace, generic_gradient_magnitude, gaussian_laplace,
# gaussian_gradient_magnitude
# ---------------------------------------------------------------------------------------------
def _per_axis_sum(input, derivative, output, mode, cval, extra_arguments, extra_keywords, axes,
                  magnitude, apart=False, opts=None):
    """SciPy's generic_laplace (magnitude False: the sum of derivative's results over the axes)
    and generic_gradient_magnitude (True: the root of the sum of their squares), step by step:
    derivative(input, axis, output, mode, cval, *extra_arguments, **extra_keywords) writes the
    first axis's result into the output (zeros of its dtype where not given), each later axis's
    is asked for with output.dtype, squared in place (magnitude) and added in the output's dtype,
    and the root is taken in place (numpy.sqrt's unsafe casting). apart: an output that overlaps
    the input gets the result computed apart (as halo's filters do), where SciPy's later axes
    would read the first one's result. opts: halo's options of gaussian_laplace and
    gaussian_gradient_magnitude (their round: the copy where no axis is filtered, and the root
    of an integer magnitude rounded to nearest), or None (the generic functions: SciPy's)."""
    if extra_keywords is None:
        extra_keywords = {}
    xp, input = kind_of(input)
    out, out_dt = _output(output, xp, input)
    axes = _check_axes(axes, len(input.shape))
    if not axes:
        return _copy(xp, input, out, out_dt, opts)
    if apart and out is not None and xp.overlap(out, input):
        xp.write(out, _per_axis_sum(input, derivative, out_dt, mode, cval, extra_arguments,
                                    extra_keywords, axes, magnitude, opts=opts))
        return out
    output = xp.zeros(tuple(input.shape), out_dt, input) if out is None else out
    modes = _normalize_sequence(mode, len(axes))
    derivative(input, axes[0], output, modes[0], cval, *extra_arguments, **extra_keywords)
    if magnitude:
        xp.square(output)
    for axis, m in zip(axes[1:], modes[1:]):
        tmp = derivative(input, axis, output.dtype, m, cval, *extra_arguments, **extra_keywords)
        if magnitude:
            xp.square(tmp)
        output += tmp
    if magnitude:
        xp.sqrt(output, opts is not None and opts[3] == "nearest")
    return output


@_on_input_device
def generic_laplace(input, derivative2, output=None, mode="reflect", cval=0.0,
                    extra_arguments=(), extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_laplace: the sum over the axes (every axis, or those given, a mode
    per entry) of derivative2(input, axis, output, mode, cval, *extra_arguments,
    **extra_keywords), called as SciPy calls it."""
    return _per_axis_sum(input, derivative2, output, mode, cval, extra_arguments,
                         extra_keywords, axes, False)


@_on_input_device
def generic_gradient_magnitude(input, derivative, output=None, mode="reflect", cval=0.0,
                               extra_arguments=(), extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_gradient_magnitude: the root of the sum over the axes (every axis,
    or those given, a mode per entry) of the squares of derivative(input, axis, output, mode,
    cval, *extra_arguments, **extra_keywords), called as SciPy calls it."""
    return _per_axis_sum(input, derivative, output, mode, cval, extra_arguments,
                         extra_keywords, axes, True)


def _gaussian_per_axis(input, sigma, output, mode, cval, axes, options, kwargs, order,
                       expand_sigma):
    """gaussian_laplace (order 2) and gaussian_gradient_magnitude (order 1) as SciPy composes
    them: per axis of axes, halo's gaussian_filter of that order along it and order 0 along
    the others, sigma per axis (0 on the axes not given: not filtered), the axis's mode on every
    axis; kwargs (truncate, radius) and halo's options go to gaussian_filter."""
    opts = _options(*options)
    backend, strategy, direct_sums, rounding = options
    xp, input = kind_of(input)
    ndim = len(input.shape)
    axes = _check_axes(axes, ndim)
    if expand_sigma:
        sigma = _normalize_sequence(sigma, len(axes))
        if len(axes) < ndim:
            sigma = _on_axes(sigma, axes, ndim, 0)
    kwargs = dict(kwargs, backend=backend, strategy=strategy, direct_sums=direct_sums,
                  round=rounding)

    def derivative(input, axis, output, mode, cval, sigma, **kwargs):
        orders = [0] * ndim
        orders[axis] = order
        return gaussian_filter(input, sigma, orders, output, mode, cval, **kwargs)

    return _per_axis_sum(input, derivative, output, mode, cval, (sigma,), kwargs, axes,
                         order == 1, apart=True, opts=opts)


@_on_input_device
def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None,
                     backend="auto", strategy=None, direct_sums=False, round="truncate",
                     **kwargs):
    """scipy.ndimage.gaussian_laplace: the sum over the axes (every axis, or those given, a sigma
    and a mode per entry) of Gaussian second derivatives; kwargs (truncate, radius) go to
    gaussian_filter."""
    return _gaussian_per_axis(input, sigma, output, mode, cval, axes,
                              (backend, strategy, direct_sums, round), kwargs, 2, True)


@_on_input_device
def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *,
                                axes=None, backend="auto", strategy=None, direct_sums=False,
                                round="truncate", **kwargs):
    """scipy.ndimage.gaussian_gradient_magnitude: the root of the sum over the axes (every axis,
    or those given, a sigma and a mode per entry) of the squares of Gaussian first derivatives;
    kwargs (truncate, radius) go to gaussian_filter."""
    # SciPy passes sigma on as given, so that with axes its Gaussian smooths the axes not given
    # too (or refuses a sigma per entry of axes); halo leaves them unfiltered, as SciPy's
    # gaussian_laplace does and both document (docs/PYTHON.md, "What differs").
    return _gaussian_per_axis(input, sigma, output, mode, cval, axes,
                              (backend, strategy, direct_sums, round), kwargs, 1,
                              axes is not None)
