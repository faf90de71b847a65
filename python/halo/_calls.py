"""Running filters on the core: an array's axes as the core takes them, one call of halo::apply
(recorded for the replay), a filter's passes with SciPy's rounding between them, separable filters
fused into one call where that gives SciPy's result, and complex data by its real parts."""

import functools
import math
import threading

import numpy as np

from ._arguments import _allocate, _mode, _real_cval
from ._dtypes import (_F64, _c_types, _compute_dtype, _extend_index, _scipy_order, _stored,
                      _ties_as_scipy_1d, _ties_as_scipy_nd)
from ._halo import Error
from ._replay import _local, _spoil_record

# A separable filter goes to the core as one N-D filter (which the core runs as fused 1-D passes)
# up to this many weights; beyond, as one call per axis.
_MAX_FUSED_TAPS = 1 << 22


# Channels last: a run of axes the filter does not reach that is innermost, after a filtered
# axis X, makes the core's innermost axis short, along which its kernels run. Where the run
# holds at most _CHANNELS_RUN elements and the array at least _CHANNELS_SIZE, host arrays merge
# X with the run into one axis filtered by X's weights spread the run's length apart, which the
# core sums without the zeros between them (_core_dilated; docs/notes/channels-last.md has the
# measurements)...
_CHANNELS_RUN = 16
_CHANNELS_SIZE = 1 << 15
# ... where the spread filter is at most this long along the merged axis (the core's passes
# along it cost about as many taps, zeros included), and, under the modes whose edges are
# computed again from strips, where the array holds at least _STRIPS_SIZE elements (the strips'
# calls cost about as much as a small array's whole filter); others are moved to the batch.
_DILATED_TAPS = 24
_STRIPS_SIZE = 1 << 20


@functools.lru_cache(maxsize=1024)
def _layout(shape, wshape):
    """How the core sees an array of `shape` under a filter of `wshape`: (batch, axes), axes a
    tuple of (extent, axis of the array, or None for a run of unfiltered axes merged into one).
    Adjacent axes the filter does not reach (extent 1) merge, and a leading such run becomes the
    core's batch, so any rank runs where at most 3 filtered or merged axes remain."""
    axes = []
    run = 1
    for a, (n, k) in enumerate(zip(shape, wshape)):
        if k == 1:
            run *= n
            continue
        if run > 1:
            axes.append((run, None))
        run = 1
        axes.append((n, a))
    if run > 1 or not axes:
        axes.append((run, None))
    batch = 1
    if len(axes) > 1 and axes[0][1] is None:
        batch = axes.pop(0)[0]
    return batch, tuple(axes)


def _fits_core(shape, wshape):
    """Whether the core takes this filter in one call (axes moved where needed: at most 3
    filtered axes)."""
    return sum(k != 1 for k in wshape) <= 3


def _channels_last(shape, axes):
    """Whether a layout ends in a run of unfiltered axes that _core_dilated takes."""
    return (len(axes) > 1 and axes[-1][1] is None and axes[-1][0] <= _CHANNELS_RUN
            and math.prod(shape) >= _CHANNELS_SIZE)


@functools.lru_cache(maxsize=1024)
def _core_plan(shape, wshape, modes, origins, host):
    """(core shape with the batch first, core filter shape, modes, origins) of _layout, or None
    where more than 3 axes remain or, host (a CPU run of host arrays: measured there only), the
    channels are last (_channels_last)."""
    batch, axes = _layout(shape, wshape)
    if len(axes) > 3 or (host and _channels_last(shape, axes)):
        return None
    return ((batch,) + tuple(n for n, _ in axes),
            tuple(1 if a is None else wshape[a] for _, a in axes),
            ["constant" if a is None else modes[a] for _, a in axes],
            [0 if a is None else int(origins[a]) for _, a in axes])


def _core(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct, every=False,
          record_as=None):
    """One call of halo::apply: dst = src filtered by weights (both contiguous, float32 or
    float64, same dtype and shape, or the core's own dtypes on the native path; weights float64
    of src's rank). opts: (backend, strategy, direct_sums, rounding), and a fifth entry where a
    pass may run relaxed (_run_relaxed: whether its sums are integers). every: every weight is
    a tap where NaN and infinities meet them, as in SciPy's 1-D filters (0 * inf is NaN);
    otherwise SciPy's N-D correlate's footprint (weights with |w| <= DBL_EPSILON are no taps). A
    filter over more than 3 axes runs as a sum of 3-axis problems (_core_slices); channels last
    are merged with the axis before them (_core_dilated); other unfiltered axes among the core's
    are moved to the batch first (_core_transposed). record_as: (src, dst) whose memory src and
    dst view, for the replay's record."""
    shape = tuple(src.shape)
    host = xp.name == "numpy" and opts[0] != "cuda"
    plan = _core_plan(shape, weights.shape, tuple(modes), tuple(origins), host)
    if plan is None:
        if sum(k != 1 for k in weights.shape) > 3:
            return _core_slices(xp, src, dst, weights, convolve, modes, cval, origins, opts,
                                direct, every)
        axes = _layout(shape, tuple(weights.shape))[1]
        # (Channels last after 3 filtered axes: 4 axes, 3 once the channels are merged.)
        if host and _channels_last(shape, axes) and len(axes) <= 4:
            return _core_dilated(xp, src, dst, weights, convolve, modes, cval, origins, opts,
                                 direct, every)
        return _core_transposed(xp, src, dst, weights, convolve, modes, cval, origins, opts,
                                direct, every)
    core_shape, wshape, cmodes, corigins = plan
    if 0 in shape:
        return
    call = (core_shape, weights.reshape(wshape), convolve, cmodes, float(cval), corigins,
            opts[0], opts[1], direct, every, opts[3])
    if len(opts) > 4:
        _run_relaxed(xp, src, dst, call, opts[4])
    else:
        xp.run(src, dst, *call)
    record = getattr(_local, "record", None)
    if record is not None:
        record.append((xp,) + (record_as or (src, dst)) + (call,))


def _run_relaxed(xp, src, dst, call, exact):
    """The core call of a pass with an integer output, whose direct sums (call[8]) are asked
    for only so that its truncation be SciPy's. Where no strategy can sum it directly (on the
    GPU: `fast` and `separable` have kernels for a few radii in float64, under the boundary modes
    nothing else sums directly), it runs in float64 on a strategy that may sum otherwise (`fft`,
    `lowrank`, `separable`'s fused passes); its sums are then rounded to the nearest integer where
    they are integers (exact: integer inputs, integral weights and cval), which makes them exact,
    and otherwise truncated from sums within rounding of SciPy's (docs/PYTHON.md, dtypes)."""
    try:
        xp.run(src, dst, *call)
        return
    except Error:
        try:
            xp.choose(xp.dtype(src), call)
        except Error as e:
            refused = e
        else:
            raise  # the run's own error, not the choice
    relaxed = call[:8] + (False,) + call[9:]
    try:
        xp.choose(_F64, relaxed)
    except Error as e:
        if str(e) == str(refused):  # not the strategies (no GPU usable, say)
            raise refused from None
        raise Error(f"{refused}; and in float64 without direct sums: {e}") from None
    s64 = xp.contiguous(src, _F64)
    d64 = dst if xp.dtype(dst) == _F64 else xp.empty(tuple(src.shape), _F64, src)
    xp.run(s64, d64, *relaxed)
    if exact:
        xp.rint(d64)
    if d64 is not dst:
        xp.write(dst, d64)  # exact: the integers of a float32 pass are below 2**24
    _spoil_record()


# The core's output of a call whose axes were moved is a scratch array, kept per thread for the
# next such call up to this many bytes: fresh memory from the system is zeroed page by page as
# it is first written, which costs about as much as a copy (docs/notes/channels-last.md).
_SCRATCH_MAX = 1 << 26
_scratch_local = threading.local()


def _scratch(xp, shape, dtype, like, name="buf"):
    """An array of shape and dtype that the next call of this thread may overwrite: host arrays
    up to _SCRATCH_MAX bytes reuse this thread's buffer of that name; others are new."""
    nbytes = math.prod(shape) * dtype.itemsize
    if xp.name != "numpy" or nbytes > _SCRATCH_MAX:
        return xp.empty(shape, dtype, like)
    buf = getattr(_scratch_local, name, None)
    if buf is None or buf.nbytes < nbytes:
        setattr(_scratch_local, name, None)  # (the old one goes before the new one comes)
        buf = np.empty(nbytes, np.uint8)
        setattr(_scratch_local, name, buf)
    return buf[:nbytes].view(dtype).reshape(shape)


def _core_transposed(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct,
                     every):
    """_core where unfiltered axes lie among the core's (more than 3 axes between filtered ones,
    or channels last that _core_dilated leaves): the runs of them (merged, as _layout merges
    them) are moved to the front, the batch, in a copy, and the result back. The copy in is
    made in dst's memory (the result goes there only at the end): one temporary, for the core's
    output (where src and dst have one dtype; else two)."""
    shape = tuple(src.shape)
    batch, axes = _layout(shape, tuple(weights.shape))
    if 0 in shape:
        return
    # The array as _layout sees it: the batch, then each filtered axis or merged run.
    merged = (batch,) + tuple(n for n, _ in axes)
    perm = [0] + [i + 1 for i, (_, a) in enumerate(axes) if a is None] + \
        [i + 1 for i, (_, a) in enumerate(axes) if a is not None]
    inverse = [perm.index(i) for i in range(len(perm))]
    moved = tuple(merged[i] for i in perm)
    filtered = [a for _, a in axes if a is not None]
    wmoved = [1] * (len(moved) - len(filtered)) + [weights.shape[a] for a in filtered]
    m = ["constant"] * (len(moved) - len(filtered)) + [modes[a] for a in filtered]
    o = [0] * (len(moved) - len(filtered)) + [int(origins[a]) for a in filtered]
    dt = xp.dtype(src)
    src_t = dst.reshape(moved) if xp.dtype(dst) == dt else xp.empty(moved, dt, src)
    # Blocks along the first filtered axis: rows of the source the copy in reads together, and
    # rows of the destination the copy back writes together.
    xp.permute_into(src_t, xp.transpose(src.reshape(merged), perm), len(moved) - len(filtered))
    dst_t = _scratch(xp, moved, xp.dtype(dst), src)
    _core(xp, src_t, dst_t, weights.reshape(wmoved), convolve, m, cval, o, opts, direct, every)
    first = 1 + next(i for i, (_, a) in enumerate(axes) if a is not None)
    xp.permute_into(dst.reshape(merged), xp.transpose(dst_t, inverse), first)


_EPS = float(np.finfo(np.float64).eps)


def _as_correlation(weights, origins):
    """SciPy's convolve as its correlate: the weights flipped on every axis, the origins mirrored
    (-o, less 1 for an even extent)."""
    w = weights[(slice(None, None, -1),) * weights.ndim]
    return w, [-int(o) - (0 if k & 1 else 1) for o, k in zip(origins, w.shape)]


def _core_dilated(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct, every):
    """_core for channels last (_channels_last): the last filtered axis X (extent n, k taps) and
    the run of C elements after it are one axis of n * C elements, filtered along it by X's
    weights C apart (zeros between them, which SciPy's footprint and the core leave out: no
    taps), in place, with no copy. Under constant and wrap that is X's filter exactly (an element
    past an edge of the merged axis is one past X's edge, in the same channel); under the other
    modes the outputs whose window passes an edge of X (the first k // 2 + origin and the last
    k - 1 - k // 2 - origin along X) read other channels there, and are computed again from a
    strip of the input extended along X by its mode. Filters whose every weight is a tap (SciPy's
    1-D filters) and that have zero weights, filters too long once spread (_DILATED_TAPS),
    arrays and axes too small for the strips to pay (_STRIPS_SIZE), and integer outputs (the
    core's native dtypes: their sums' order of the taps is SciPy's for the filter as given) are
    moved to the batch instead (_core_transposed)."""
    shape = tuple(src.shape)
    batch, axes = _layout(shape, tuple(weights.shape))
    (n, ax), (c, _) = axes[-2], axes[-1]
    if xp.dtype(dst).kind != "f" or (every and bool(np.any(np.abs(weights) <= _EPS))):
        return _core_transposed(xp, src, dst, weights, convolve, modes, cval, origins, opts,
                                direct, every)
    if convolve:
        weights, origins = _as_correlation(weights, origins)
    k = weights.shape[ax]
    o = int(origins[ax])
    mode = _mode(modes[ax])
    left, right = k // 2 + o, k - 1 - k // 2 - o  # how far X's window reaches each way
    edges = mode not in ("constant", "wrap")
    if (k - 1) * c + 1 > _DILATED_TAPS or (edges and (n < 4 * (left + right)
                                                      or math.prod(shape) < _STRIPS_SIZE)):
        return _core_transposed(xp, src, dst, weights, False, modes, cval, origins, opts,
                                direct, every)
    if 0 in shape:
        return
    # The merged view: the batch, each entry of the layout before X, then X with the channels.
    lead = (batch,) + tuple(m for m, _ in axes[:-2])
    wlead = (1,) + tuple(1 if a is None else weights.shape[a] for _, a in axes[:-2])
    w = weights.reshape(wlead + (k,))
    kd = (k - 1) * c + 1
    wd = np.zeros(wlead + (kd,))
    wd[..., ::c] = w
    m = ["constant"] + ["constant" if a is None else modes[a] for _, a in axes[:-2]]
    org = [0] + [0 if a is None else int(origins[a]) for _, a in axes[:-2]]
    # The dilated filter's origin puts its tap j at j * c - (k // 2 + o) * c, as X's tap j.
    org_d = org + [left * c - kd // 2]
    _core(xp, src.reshape(lead + (n * c,)), dst.reshape(lead + (n * c,)), wd, False,
          m + [modes[ax]], cval, org_d, opts, direct, False, record_as=(src, dst))
    if not edges:
        return
    view_in = src.reshape(lead + (n, c))
    view_out = dst.reshape(lead + (n, c))
    at = (slice(None),) * len(lead)
    for first, last in ((0, min(left, n)), (max(n - right, 0), n)):
        if first >= last:
            continue
        # The outputs first..last-1 of X read positions first - left .. last - 1 + right.
        index, _ = _extend_index(np.arange(first - left, last + right), n, mode)
        strip = xp.take(view_in, index, len(lead))
        width = index.shape[0]
        out = xp.empty(lead + (width * c,), xp.dtype(dst), src)
        _core(xp, strip.reshape(lead + (width * c,)), out, wd, False, m + ["constant"], cval,
              org_d, opts, direct, False)
        view_out[at + (slice(first, last),)] = \
            out.reshape(lead + (width, c))[at + (slice(left, left + last - first),)]
    _spoil_record()


def _shifted(xp, x, axis, shift, mode, cval):
    """x read at index + shift along axis, extended beyond its edges by mode (the core's name) as
    SciPy's N-D filters extend it (cval outside under constant): a new C-contiguous array, or x
    itself where nothing moves."""
    n = x.shape[axis]
    if shift == 0 or n == 0:
        return x
    index, _ = _extend_index(np.arange(n) + shift, n, mode)
    y = xp.take(x, index, axis)
    if mode == "constant":
        before = min(n, max(0, -shift))  # positions below 0
        after = min(n, max(0, shift))  # positions at n and beyond
        lead = (slice(None),) * axis
        if before:
            y[lead + (slice(0, before),)] = cval
        if after:
            y[lead + (slice(n - after, n),)] = cval
    return y


def _core_slices(xp, src, dst, weights, convolve, modes, cval, origins, opts, direct, every):
    """_core for a filter that reaches more than 3 axes, as a sum of 3-axis problems: for each
    index of the filtered axes before the last three (the leading ones), the input shifted along
    them (each extended by its mode, as SciPy extends it; cval planes under constant) filtered by
    that 3-axis slice of the weights, and the results added into dst in C order of the slices.
    A convolution is the correlation with the weights flipped on every axis and SciPy's mirrored
    origins. Slices with no taps (every weight |w| <= DBL_EPSILON, SciPy's footprint) are left
    out; each slice keeps its footprint in the core (every: SciPy's 1-D rule, every weight a tap,
    then no slice is left out). Memory: dst, one temporary, and one shifted copy per leading
    axis. Integer outputs' ties are recomputed in SciPy's order by the caller (_execute)."""
    ndim = len(src.shape)
    origins = [int(o) for o in origins]
    if convolve:
        weights, origins = _as_correlation(weights, origins)
    lead = [a for a in range(ndim) if weights.shape[a] != 1][:-3]
    taps = None if every else np.abs(weights) > _EPS
    inner_origins = list(origins)
    for a in lead:
        inner_origins[a] = 0
    index = [slice(None)] * ndim
    state = {"first": True, "tmp": None}

    def visit(level, x):
        if level == len(lead):
            w = np.ascontiguousarray(weights[tuple(index)])
            if state["first"]:
                _core(xp, x, dst, w, False, modes, cval, inner_origins, opts, direct, every)
                state["first"] = False
                return
            if state["tmp"] is None:
                state["tmp"] = xp.empty(tuple(src.shape), xp.dtype(dst), src)
            tmp = state["tmp"]
            _core(xp, x, tmp, w, False, modes, cval, inner_origins, opts, direct, every)
            dst[...] += tmp
            return
        a = lead[level]
        k = weights.shape[a]
        mode = _mode(modes[a])
        for t in range(k):
            index[a] = slice(t, t + 1)
            if taps is not None and not taps[tuple(index)].any():
                continue
            visit(level + 1, _shifted(xp, x, a, t - k // 2 - origins[a], mode, cval))
        index[a] = slice(None)

    visit(0, src)
    if state["first"]:  # no taps at all: SciPy's sums of nothing
        dst[...] = 0
    _spoil_record()


def _integral(integral_input, integral_cval, w, modes):
    """Whether a pass reads integers only: its input's values, and the cval where an axis it
    filters has the constant mode."""
    return integral_input and (integral_cval or all(_mode(modes[a]) != "constant"
                                                    for a, k in enumerate(w.shape) if k > 1))


def _execute(xp, input, out, out_dt, passes, cval, opts, summed=False):
    """Runs passes (weights, convolve, modes, origins, divisor[, "nd" for SciPy's N-D correlate
    rather than its 1-D filters]) on a real input and returns the
    output (out, or a new array of out_dt). As in SciPy, a pass reads the previous one's result
    rounded to the output dtype (summed=False), or, summed=True (laplace), every pass reads the
    input and their results, each rounded to the output dtype, are added in the output dtype. A
    divisor divides a pass's (exact, integer) sum in float64, as SciPy's uniform filter does.
    Rounding to an integer output dtype (each pass's, and the last) is opts[3]'s: SciPy's
    truncation, or 'nearest' (ties to even, saturated, NaN to 0)."""
    in_dt = xp.dtype(input)
    if not (len(passes[0]) > 5 and 0 in tuple(input.shape)):
        # SciPy's C code checks the dtypes, except in its N-D correlate of an empty array.
        _c_types(in_dt, out_dt)
    if _native(xp, in_dt, out_dt, passes, opts):
        return _execute_native(xp, input, out, out_dt, passes, cval, opts, summed)
    cdt = _compute_dtype(in_dt, out_dt, passes, cval)
    # Integer outputs want SciPy's direct float64 sums (no FFT, no Winograd). Where the core
    # chooses the strategy and the caller did not ask for direct sums, a pass no strategy can sum
    # directly runs otherwise (_run_relaxed): opts gain whether its sums are integers.
    direct = opts[2] or out_dt.kind not in "fc"
    relax = direct and not opts[2] and not opts[1]
    integral_cval = float(cval).is_integer()
    nearest = opts[3] == "nearest"

    def pass_opts(w, integral_input):
        if not relax:
            return opts
        return opts + (integral_input and integral_cval and np.array_equal(w, np.rint(w)),)

    src = xp.contiguous(input, cdt)
    shape = tuple(input.shape)
    target = None  # an array the last pass may write: the output itself where the core can
    if out is None:
        if out_dt == cdt and not summed:
            target = out = xp.empty(shape, cdt, input)
    elif (xp.dtype(out) == cdt and not summed and xp.is_contiguous(out) and xp.writeable(out)
          and not xp.overlap(out, input)):
        target = out
    last = len(passes) - 1
    if summed:
        result = None
        for w, convolve, modes, origins, _ in passes:
            r = xp.empty(shape, cdt, src)
            _core(xp, src, r, w, convolve, modes, cval, origins,
                  pass_opts(w, in_dt.kind in "biu"), direct, True)
            if _scipy_order(xp, out_dt, w, opts, False,
                            _integral(in_dt.kind in "biu", integral_cval, w, modes)) == "1d":
                _ties_as_scipy_1d(src, r, w, convolve, modes, cval, origins, nearest)
            r = xp.cast(r, out_dt, nearest) if cdt != out_dt else r
            if result is None:
                result = r
            else:
                result += r
    else:
        cur = src
        for i, (w, convolve, modes, origins, divisor, *nd) in enumerate(passes):
            # A pass after the first reads the previous one's integers. (SciPy's uniform filter,
            # a divisor, sums the window its own way: its sums are not recomputed.)
            integral = divisor is not None or _integral(i > 0 or in_dt.kind in "biu",
                                                        integral_cval, w, modes)
            scipy_order = _scipy_order(xp, out_dt, w, opts, bool(nd), integral)
            use_target = i == last and target is not None and divisor is None
            dst = target if use_target else xp.empty(shape, cdt, src)
            if scipy_order == "reference":
                _core(xp, cur, dst, w, convolve, modes, cval, origins,
                      ("reference", "", True, opts[3]), True, not nd)
                if sum(k != 1 for k in w.shape) > 3:  # added by parts (_core_slices)
                    _ties_as_scipy_nd(cur, dst, w, convolve, modes, cval, origins, nearest)
            else:
                # A pass after the first reads the previous one's integers.
                _core(xp, cur, dst, w, convolve, modes, cval, origins,
                      pass_opts(w, i > 0 or in_dt.kind in "biu"), direct, not nd)
                if scipy_order == "1d":
                    _ties_as_scipy_1d(cur, dst, w, convolve, modes, cval, origins, nearest)
                    _spoil_record()
            if divisor is not None:
                dst = xp.contiguous(dst, _F64) / divisor
            if i < last:
                cur = dst if xp.dtype(dst) == out_dt else xp.contiguous(
                    _stored(xp, dst, out_dt, nearest), cdt)
            else:
                result = dst
    if result is target:
        return out
    if xp.dtype(result) != out_dt:
        result = xp.cast(result, out_dt, nearest)
    if out is None:
        return result
    xp.write(out, result)
    return out


# dtypes the core reads and writes itself (NumPy's names), deciding SciPy's integer truncation in
# its kernels (docs/ACCURACY.md): the other kinds SciPy takes (bool, int8, uint32, int64, uint64)
# go through a float64 computation and SciPy's casts here.
_NATIVE = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.int32, np.float16,
                                          np.float32, np.float64))


def _native(xp, in_dt, out_dt, passes, opts):
    """Whether the core runs these passes on the arrays' own dtypes: dtypes of _NATIVE (the CUDA
    strategies through slabs of their float type, core/converted.hpp), no pass that divides its
    sum afterwards (SciPy's uniform filter: its exact sums are divided in float64 below), a dtype
    pair other than float32 or float64 in and out (which the general path runs as before), no
    strategy named (a named strategy runs the general path's float computation), and no filter
    over more than 3 axes (added by parts, _core_slices, which SciPy's truncation and a narrow
    float's rounding need in float64)."""
    if opts[1] or not getattr(xp, "native_dtypes", True):
        return False
    if in_dt not in _NATIVE or out_dt not in _NATIVE:
        return False
    if in_dt == out_dt and in_dt.kind == "f" and in_dt.itemsize >= 4:
        return False
    return all(p[4] is None and sum(k != 1 for k in p[0].shape) <= 3 for p in passes)


def _execute_native(xp, input, out, out_dt, passes, cval, opts, summed):
    """_execute on the core's own dtypes: each pass reads the previous one's result in the output
    dtype (SciPy's intermediate arrays) and the core stores SciPy's integers (its truncation of
    its own float64 sums, in its order of the taps: Footprint every for the 1-D passes) or
    floating values. summed (laplace): each pass reads the input, and the results are added in
    the output dtype, as SciPy's do."""
    shape = tuple(input.shape)
    src = xp.contiguous(input, xp.dtype(input))
    _spoil_record()  # the replay keeps float32 and float64 calls only
    if summed:
        result = None
        for w, convolve, modes, origins, _ in passes:
            r = xp.empty(shape, out_dt, src)
            _core(xp, src, r, w, convolve, modes, cval, origins, opts, opts[2], True)
            if result is None:
                result = r
            else:
                result += r
    else:
        cur = src
        last = len(passes) - 1
        for i, (w, convolve, modes, origins, _, *nd) in enumerate(passes):
            usable = (i == last and out is not None and xp.dtype(out) == out_dt
                      and xp.is_contiguous(out) and xp.writeable(out)
                      and not xp.overlap(out, input))
            if i < last:
                # The passes between read and write two scratch buffers of this thread in turn:
                # a new array of the image's size costs about as much as a short pass (its pages
                # come from the system zeroed, and the allocator returns them between calls).
                dst = _scratch(xp, shape, out_dt, src, "passes" + str(i % 2))
            else:
                dst = out if usable else xp.empty(shape, out_dt, src)
            _core(xp, cur, dst, w, convolve, modes, cval, origins, opts, opts[2], not nd)
            cur = dst
        result = cur
    if out is None or result is out:
        return result
    xp.write(out, result)
    return out


def _copy(xp, input, out, out_dt, opts=None):
    """SciPy's `output[...] = input[...]` (no axis to filter). With round='nearest' (opts), an
    integer or bool output that does not hold every value of the input's dtype gets the input's
    values as a filter's sums are stored: in float64, rounded to nearest and saturated."""
    out = _allocate(xp, out, out_dt, input)
    in_dt = xp.dtype(input)
    if (opts is not None and opts[3] == "nearest" and out_dt.kind in "biu"
            and not np.can_cast(in_dt, out_dt, "safe")):
        xp.write(out, xp.cast(xp.contiguous(input, _F64), out_dt, True))
        return out
    xp.assign(out, input)
    return out


def _fusable(out_dt, modes, cval, shape, wshape):
    """Whether a separable filter can go to the core as one N-D filter and give SciPy's result
    (within rounding): a float output (an integer one is rounded between SciPy's 1-D passes), no
    constant mode with a cval other than 0 on a filtered axis (SciPy's later passes read cval
    where the one filter reads cval times the earlier factors' sums), not too many weights, and
    at most 3 filtered axes."""
    if out_dt.kind not in "fc":
        return False
    if cval != 0 and any(_mode(m) == "constant" for m in modes):
        return False
    if math.prod(wshape) > _MAX_FUSED_TAPS:
        return False
    return _fits_core(shape, wshape)


def _along(w, axis, ndim):
    """A 1-D filter as an ndim filter along axis (extent 1 on the others)."""
    shape = [1] * ndim
    shape[axis] = w.shape[0]
    return w.reshape(shape)


_FUSED = {}


def _fused(factors, ndim, key):
    """The outer product of the factors as one ndim filter; cached under key (not None)."""
    if key is not None:
        w = _FUSED.get((ndim, key))
        if w is not None:
            return w
    w = np.ones((), np.float64)
    for a, f in factors:
        w = w * _along(f, a, ndim)
    if key is not None:
        if len(_FUSED) >= 256:
            _FUSED.clear()
        w.flags.writeable = False
        _FUSED[(ndim, key)] = w
    return w


def _separable(xp, input, out, out_dt, factors, modes, cval, opts, origins=None, key=None):
    """A filter SciPy applies as 1-D passes, factors[i] = (axis, 1-D weights) in SciPy's order,
    modes[axis] per axis: one N-D filter to the core where that gives SciPy's result (_fusable),
    else one core call per pass with SciPy's rounding between passes. key: hashable, names the
    factors (the fused filter is cached under it), or None."""
    ndim = len(input.shape)
    if origins is None:
        origins = [0] * ndim
    # The modes of the axes filtered, by the core's names; SciPy reads no other.
    given = modes
    modes = ["constant"] * ndim
    for a, _ in factors:
        modes[a] = _mode(given[a])
    used = [modes[a] for a, _ in factors]
    wshape = [1] * ndim
    for a, w in factors:
        wshape[a] = w.shape[0]
    if len(factors) > 1 and _fusable(out_dt, used, cval, input.shape, wshape):
        passes = [(_fused(factors, ndim, key), False, list(modes), list(origins), None)]
    else:
        passes = []
        for a, w in factors:
            o = [0] * ndim
            o[a] = origins[a]
            passes.append((_along(w, a, ndim), False, list(modes), o, None))
    return _execute(xp, input, out, out_dt, passes, cval, opts)


def _split_complex(fn, xp, input, out, out_dt, cval):
    """A real filter fn(part, out_part, cval_part) on the real and imaginary parts of a complex
    input (SciPy's cval: its real part for the real part, its imaginary part for the other)."""
    out = _allocate(xp, out, out_dt, input)
    fn(xp.real(input), xp.real(out), np.real(cval))
    fn(xp.imag(input), xp.imag(out), np.imag(cval))
    return out


def _real_or_split(fn, xp, input, out, out_dt, cval):
    """fn(input, out, out_dt, cval) of a real filter; on complex data (a complex input needs a
    complex output, as in SciPy) fn on the real and imaginary parts (_split_complex)."""
    if xp.dtype(input).kind == "c" or out_dt.kind == "c":
        if out_dt.kind != "c":
            raise RuntimeError("output must have complex dtype")
        return _split_complex(lambda p, o, c: fn(p, o, xp.dtype(o), _real_cval(c)), xp, input,
                              out, out_dt, cval)
    return fn(input, out, out_dt, _real_cval(cval))


def _complex_via_real(call, xp, input, weights, out, cval):
    """SciPy's _complex_via_real_components: call(input, weights, output, cval) on real parts."""
    ci = xp.dtype(input).kind == "c"
    cw = weights.dtype.kind == "c"
    if ci and cw:
        re = xp.real(out)
        call(xp.real(input), weights.real, re, np.real(cval))
        re -= call(xp.imag(input), weights.imag, None, np.imag(cval))
        im = xp.imag(out)
        call(xp.real(input), weights.imag, im, np.real(cval))
        im += call(xp.imag(input), weights.real, None, np.imag(cval))
    elif ci:
        call(xp.real(input), weights, xp.real(out), np.real(cval))
        call(xp.imag(input), weights, xp.imag(out), np.imag(cval))
    else:
        if np.iscomplexobj(cval):
            raise ValueError("Cannot provide a complex-valued cval when the input is real.")
        call(input, weights.real, xp.real(out), cval)
        call(input, weights.imag, xp.imag(out), cval)
    return out
