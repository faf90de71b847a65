"""The dtype rules: which dtypes SciPy's C code takes, the dtype the core computes in, and how an
integer output's truncation (or rounding to nearest) is made SciPy's (the order of its additions,
its bool intermediates)."""

import numpy as np

from ._arguments import _mode

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# Input dtypes that float32 holds exactly: with a float32 or float16 output, the core runs float32.
_SMALL = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                         np.float16, np.float32))


# dtype kinds SciPy's C filters read and write; halo also takes float16 (SciPy refuses it), and a
# complex output of a real filter (docs/PYTHON.md, "What differs").
_C_KINDS = frozenset("biuf")


def _c_types(in_dt, out_dt):
    """SciPy's C code refuses arrays of other kinds (objects, datetimes, strings): RuntimeError."""
    for dt in (in_dt, out_dt):
        if dt.kind not in _C_KINDS and not (dt.kind == "c" and dt == out_dt):
            raise RuntimeError(f"array type {dt!r} not supported")


_ABSMAX = {}


def _absmax(dt):
    m = _ABSMAX.get(dt)
    if m is None:
        # A bool intermediate holds a byte (SciPy's), up to 255.
        m = _ABSMAX[dt] = 255 if dt.kind == "b" else max(abs(int(np.iinfo(dt).min)),
                                                         int(np.iinfo(dt).max))
    return m


def _compute_dtype(in_dt, out_dt, passes, cval):
    """The dtype the core computes in. SciPy computes in float64 and stores in the output dtype:
    float32 is enough for a float32 or float16 output from an input float32 holds exactly; an
    integer output takes float64 (its truncation then matches SciPy's) unless every sum is an
    integer below 2**24 (small integers, integral weights and cval), exact in float32."""
    if out_dt.kind == "f":
        return _F32 if out_dt.itemsize <= 4 and in_dt in _SMALL else _F64
    if in_dt.kind in "biu" and in_dt.itemsize <= 2 and out_dt.itemsize <= 2:
        reach = max(_absmax(in_dt), _absmax(out_dt))
        c = float(cval)
        if not (c.is_integer() and abs(c) <= reach):
            return _F64
        for p in passes:
            w = p[0]
            if not np.array_equal(w, np.rint(w)) or reach * float(np.abs(w).sum()) >= 2 ** 24:
                return _F64
        return _F32
    return _F64


def _scipy_order(xp, out_dt, w, opts, nd, integral=True):
    """How a pass makes its truncation to an integer output SciPy's where its sums are not exact
    (integral weights on integers, with an integral cval where one is read, sum exactly in any
    order; integral: whether the pass's input values and the cval it reads are integers): a sum
    that lands within rounding of an integer (a Gaussian over a constant region, weights such as
    1/9 or 0.1, a cval of 0.7, float inputs) truncates to one side or the other depending on the
    order of the additions (and under round='nearest', one within rounding of a half-integer
    rounds so). SciPy's correlate and convolve (nd: True) add the taps in C order,
    which the core's reference strategy does too ("reference", for NumPy arrays where no backend
    or strategy was asked for); its 1-D filters in their own order, which _ties_as_scipy_1d
    repeats for the sums near an integer ("1d", NumPy arrays). None: nothing to do (float
    outputs, exact sums, GPU arrays: docs/PYTHON.md)."""
    if (out_dt.kind not in "biu" or xp.name != "numpy"
            or (integral and np.array_equal(w, np.rint(w)))):
        return None
    if not nd:
        return "1d"
    return "reference" if opts[0] in ("auto", "cpu") and not opts[1] else None


_NUMPY_PAD = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
              "constant": "constant"}


def _extend_index(c, n, mode):
    """(index, inside) of positions c (an int array) along an axis of extent n under mode (the
    core's name), as SciPy's N-D filters extend an axis at any distance (NI_InitFilterOffsets):
    reflect repeats with period 2n, mirror with period 2n - 2 (one element: that element), wrap
    with period n, nearest clamps; under constant, positions outside read cval (inside False,
    index clamped)."""
    c = np.asarray(c, dtype=np.int64)
    inside = (c >= 0) & (c < n)
    if mode == "reflect":
        p = c % (2 * n)
        c = np.where(p < n, p, 2 * n - 1 - p)
    elif mode == "mirror":
        if n == 1:
            c = np.zeros_like(c)
        else:
            p = c % (2 * n - 2)
            c = np.where(p < n, p, 2 * n - 2 - p)
    elif mode == "wrap":
        c = c % n
    else:  # nearest; constant's outside positions are masked by the caller
        c = np.clip(c, 0, n - 1)
        if mode == "constant":
            return c, inside
    return c, np.ones(c.shape, bool)


def _reach(src, cval):
    """max |value| over the finite values of src and cval: the scale of a finite sum's rounding
    (a sum that reads a NaN or an infinity is not finite, and not recomputed)."""
    reach = abs(float(cval)) if np.isfinite(cval) else 0.0
    with np.errstate(invalid="ignore"):
        m = np.max(np.abs(src), initial=0.0, where=np.isfinite(src))
    return max(reach, float(m))


def _near(dst, tolerance, nearest):
    """Where dst lies within tolerance of where its rounding to an integer changes: an integer
    (truncation), or, nearest, a half-integer (round='nearest')."""
    with np.errstate(invalid="ignore"):
        d = dst - 0.5 if nearest else dst
        return np.abs(d - np.rint(d)) <= tolerance


def _ties_as_scipy_1d(src, dst, weights, convolve, modes, cval, origins, nearest=False):
    """dst (float64 sums of a 1-D pass over src, by the core) recomputed with SciPy's arithmetic
    (NI_Correlate1D: symmetric and antisymmetric weights as sums of pairs, outermost pair first;
    others from the last tap) where it lies within rounding of an integer (nearest: of a
    half-integer), so that truncation (rounding to nearest) gives the integer of SciPy's sum.
    The line is extended as SciPy extends it (numpy.pad's equivalent mode); only the elements
    near an integer (a half-integer) are recomputed."""
    long_axes = [a for a, k in enumerate(weights.shape) if k > 1]
    if not long_axes or dst.size == 0:
        return
    axis = long_axes[0]
    w = weights.reshape(-1)
    k = w.shape[0]
    origin = int(origins[axis])
    if convolve:  # SciPy's convolve1d: the weights reversed, the origin mirrored
        w = w[::-1]
        origin = -origin - (0 if k & 1 else 1)
    scale = float(np.abs(w).sum()) * _reach(src, cval)
    idx = np.nonzero(_near(dst, (k + 2) * 2.0 ** -40 * scale, nearest))
    if idx[0].size == 0:
        return
    size1 = k // 2
    size2 = k - size1 - 1
    pad = [(0, 0)] * src.ndim
    pad[axis] = (size1 + origin, size2 - origin)
    mode = _NUMPY_PAD[_mode(modes[axis])]
    ext = np.pad(src, pad, mode, **({"constant_values": cval} if mode == "constant" else {}))
    base = idx[axis] + size1

    def at(jj):  # SciPy's iline[jj] for each element near an integer
        j = list(idx)
        j[axis] = base + jj
        return ext[tuple(j)]

    eps = np.finfo(np.float64).eps
    symmetric = 0
    if k & 1:
        if all(abs(w[size1 + i] - w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            symmetric = 1
        elif all(abs(w[size1 + i] + w[size1 - i]) <= eps for i in range(1, size1 + 1)):
            symmetric = -1
    if symmetric:
        acc = at(0) * w[size1]
        for jj in range(-size1, 0):
            pair = at(jj) + at(-jj) if symmetric > 0 else at(jj) - at(-jj)
            acc = acc + pair * w[size1 + jj]
    else:
        acc = at(size2) * w[size1 + size2]
        for jj in range(-size1, size2):
            acc = acc + at(jj) * w[size1 + jj]
    dst[idx] = acc


def _stored(xp, x, dt, nearest=False):
    """x as SciPy's C code stores it in an intermediate array of dtype dt and reads it back: a
    bool element keeps the byte of the truncated value (255 for -1), not 0 or 1. nearest
    (round='nearest'): rounded to nearest and saturated to dt's range (a bool's: 0 and 1)."""
    if nearest:
        return xp.cast(x, dt, True)
    return xp.cast(x, np.dtype(np.uint8) if dt.kind == "b" else dt)


def _ties_as_scipy_nd(src, dst, weights, convolve, modes, cval, origins, nearest=False):
    """dst (float64 sums of an N-D correlation over src, which halo adds by parts: one 3-axis
    problem per index of the axes beyond the last three) recomputed with SciPy's arithmetic where
    it lies within rounding of an integer (nearest: of a half-integer), so that truncation
    (rounding to nearest) gives the integer of SciPy's sum: NI_Correlate
    adds the footprint's taps (|w| > DBL_EPSILON) one after another from 0.0, in C order of the
    weights (convolve: of the weights flipped on every axis, with SciPy's mirrored origins)."""
    if dst.size == 0:
        return
    ndim = src.ndim
    w = np.asarray(weights, dtype=np.float64)
    origins = [int(o) for o in origins]
    if convolve:
        w = w[(slice(None, None, -1),) * ndim]
        origins = [-o - (0 if k & 1 else 1) for o, k in zip(origins, w.shape)]
    taps = np.argwhere(np.abs(w) > np.finfo(np.float64).eps)
    scale = float(np.abs(w[tuple(taps.T)]).sum()) * _reach(src, cval)
    idx = np.nonzero(_near(dst, (len(taps) + 2) * 2.0 ** -40 * scale, nearest))
    if idx[0].size == 0:
        return
    modes = [_mode(m) for m in modes]
    acc = np.zeros(idx[0].size)
    for t in taps:
        inside = np.ones(idx[0].size, bool)
        at = []
        for a in range(ndim):
            k = w.shape[a]
            c, ok = _extend_index(idx[a] + (int(t[a]) - k // 2 - origins[a]), src.shape[a],
                                  modes[a])
            at.append(c)
            inside &= ok
        value = np.where(inside, src[tuple(at)], cval)
        acc = acc + w[tuple(t)] * value
    dst[idx] = acc
