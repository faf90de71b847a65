"""The weights of the named filters, as SciPy computes them: Gaussian kernels and their
derivatives, box factors, the derivative stencils and the Laplacian; read-only and cached."""

import functools
import numbers

import numpy as np

from ._arguments import _normalize_sequence


def _typed(v):
    """v with its type, inside tuples too: a cache key under which 1, 1.0 and True differ (SciPy
    takes some of them as an order or a radius and refuses others)."""
    if type(v) is tuple:
        return tuple, tuple(_typed(e) for e in v)
    return type(v), v


def _cached(cache, fn, *args):
    """fn(*args), kept in cache under the arguments and their types; computed at each call for
    unhashable arguments (lists, arrays). Errors are not kept."""
    key = _typed(args)
    try:
        r = cache.get(key)
    except TypeError:  # unhashable
        return fn(*args)
    if r is None:
        r = fn(*args)
        if len(cache) >= 256:
            cache.clear()
        cache[key] = r
    return r


_KERNELS = {}
_WEIGHTS = {}
_FACTORS = {}


def _gaussian_kernel1d(sigma, order, radius):
    """SciPy's Gaussian (or its order-th derivative) of radius `radius`, reversed for correlation
    as SciPy's gaussian_filter1d reverses it, by SciPy's code: an order it refuses (1.0, True) is
    refused here the same way. Cached; read-only."""
    return _cached(_KERNELS, _gaussian_kernel1d_of, sigma, order, radius)


def _gaussian_kernel1d_of(sigma, order, radius):
    if order < 0:
        raise ValueError("order must be non-negative")
    exponent_range = np.arange(order + 1)
    sigma2 = sigma * sigma
    x = np.arange(-radius, radius + 1)
    phi_x = np.exp(-0.5 / sigma2 * x ** 2)
    phi_x = phi_x / phi_x.sum()
    if order == 0:
        w = phi_x
    else:
        # f(x) = q(x) * phi(x); q' + q p' applied `order` times to the coefficients of q.
        q = np.zeros(order + 1)
        q[0] = 1
        D = np.diag(exponent_range[1:], 1)
        P = np.diag(np.ones(order) / -sigma2, -1)
        Q_deriv = D + P
        for _ in range(order):
            q = Q_deriv.dot(q)
        q = (x[:, None] ** exponent_range).dot(q)
        w = q * phi_x
    w = np.ascontiguousarray(w[::-1], dtype=np.float64)
    w.flags.writeable = False
    return w


def _gaussian_weights(sigma, order, truncate, radius):
    """(SciPy's reversed kernel, a key naming it). Cached."""
    return _cached(_WEIGHTS, _gaussian_weights_of, sigma, order, truncate, radius)


def _gaussian_weights_of(sigma, order, truncate, radius):
    sd = float(sigma)
    lw = int(truncate * sd + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError("Radius must be a nonnegative integer.")
    # SciPy's kernel squares sigma as given: a str or bytes that float() reads is a TypeError.
    sigma * sigma
    w = _gaussian_kernel1d(sd, order, int(lw))
    return w, ("gauss", sd, int(order), int(lw))


def _gaussian_factors(axes, sigma, order, truncate, radius):
    """gaussian_filter's (axis, reversed kernel) per axis of `axes` (a tuple, checked) whose
    sigma is > 1e-15, in the order of `axes` (SciPy's order of the passes), and a key naming
    them; sigma, order and radius: one value, or one per axis of `axes`. Cached."""
    return _cached(_FACTORS, _gaussian_factors_of, axes, sigma, order, truncate, radius)


def _gaussian_factors_of(axes, sigma, order, truncate, radius):
    n = len(axes)
    orders = _normalize_sequence(order, n)
    sigmas = _normalize_sequence(sigma, n)
    radii = _normalize_sequence(radius, n)
    kernels = [(axes[i], _gaussian_weights(sigmas[i], orders[i], truncate, radii[i]))
               for i in range(n) if sigmas[i] > 1e-15]
    return [(a, w) for a, (w, _) in kernels], tuple((a, k) for a, (_, k) in kernels)


@functools.lru_cache(maxsize=256)
def _box_factors(key):
    """The factors 1/size (read-only) of the uniform filter that key names."""
    factors = []
    for _, a, size in key:
        w = np.full(size, 1.0 / size)
        w.flags.writeable = False
        factors.append((a, w))
    return factors


_DIFF = np.array([-1.0, 0.0, 1.0])
_SOBEL_SMOOTH = np.array([1.0, 2.0, 1.0])
_PREWITT_SMOOTH = np.array([1.0, 1.0, 1.0])
_SECOND = np.array([1.0, -2.0, 1.0])


@functools.lru_cache(maxsize=64)
def _laplace_weights(ndim, axes):
    """The sum of [1, -2, 1] along each of `axes` as one ndim filter of extent 3 on those axes
    (1 on the others)."""
    w = np.zeros(tuple(3 if a in axes else 1 for a in range(ndim)))
    centre = tuple(1 if a in axes else 0 for a in range(ndim))
    for a in axes:
        for d in (0, 2):
            i = list(centre)
            i[a] = d
            w[tuple(i)] = 1.0
    w[centre] = -2.0 * len(axes)
    w.flags.writeable = False
    return w
