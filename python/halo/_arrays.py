"""The kinds of arrays halo filters: NumPy arrays in host memory, and CuPy arrays and PyTorch CUDA
tensors in GPU memory. Each kind is a small set of operations (allocate, convert, cast, copy, where
the data is) so that the package holds SciPy's rules once for all of them. CuPy and PyTorch
are imported only when one of their arrays arrives."""

import os
import threading

import numpy as np

from . import _halo

_F64 = np.dtype(np.float64)
# The bytes of one block of a transposed copy on the host (NumPy.permute_into), and the size
# from which such a copy is shared among threads.
_BLOCK = 1 << 20
_THREADED = 1 << 23


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _int_range(dtype):
    """(lowest, highest) value of an integer or bool dtype (bool: 0 and 1)."""
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _saturate_top(out, r, dtype):
    """out (r converted to dtype) where r, rounded and clipped to the range in float64, reached
    float64's value of the highest integer: that integer. float64 holds every bound of the 8-,
    16- and 32-bit types exactly; the highest int64 and uint64 round up to 2**63 and 2**64, which
    no conversion to them takes."""
    if dtype.itemsize == 8:
        lo, hi = _int_range(dtype)
        out[r >= float(hi)] = hi
    return out


def _nearest_numpy(x, dtype):
    """x (floating) as an integer or bool dtype rounded to the nearest integer, ties to even,
    saturated to the dtype's range, NaN to 0 (OpenCV's and NPP's rounding; `round='nearest'`)."""
    lo, hi = _int_range(dtype)
    r = np.rint(np.asarray(x, _F64))  # a new array: x's dtype is floating
    r[np.isnan(r)] = 0
    np.clip(r, lo, hi, out=r)
    with np.errstate(invalid="ignore", over="ignore"):
        return _saturate_top(r.astype(dtype), r, dtype)


def _scipy_cast_numpy(x, dtype, nearest=False):
    """x (floating) as dtype, as SciPy's C code stores a double into an element of that type:
    truncation toward zero for integers (uint32 through int64, as C compilers convert a double to
    a 32-bit unsigned value), the byte of that truncation as a bool's truth. nearest (the
    `round='nearest'` option): integers and bools rounded to nearest instead (_nearest_numpy)."""
    if nearest and dtype.kind in "biu":
        return _nearest_numpy(x, dtype)
    if dtype.kind in "iu":
        with np.errstate(invalid="ignore", over="ignore"):
            if dtype == np.uint32:
                return x.astype(np.int64).astype(np.uint32)
            return x.astype(dtype)
    if dtype.kind == "b":
        with np.errstate(invalid="ignore", over="ignore"):
            return x.astype(np.uint8) != 0
    return x.astype(dtype)


class NumPy:
    """Host arrays: the core reads and writes them in place."""

    device = False
    name = "numpy"

    @staticmethod
    def dtype(x):
        return x.dtype

    @staticmethod
    def empty(shape, dtype, like=None):
        return np.empty(shape, dtype)

    @staticmethod
    def zeros(shape, dtype, like=None):
        return np.zeros(shape, dtype)

    @staticmethod
    def contiguous(x, dtype):
        """x as a C-contiguous array of dtype (x itself when it is one)."""
        return np.ascontiguousarray(x, dtype)

    @staticmethod
    def is_contiguous(x):
        return x.flags.c_contiguous

    @staticmethod
    def writeable(x):
        return x.flags.writeable

    @staticmethod
    def transpose(x, axes):
        return x.transpose(axes)

    @staticmethod
    def permute_into(dst, src, axis, shared=True):
        """dst[...] = src, dst C-contiguous and src a transposed view of dst's shape whose axis 0
        is dst's (a batch): in blocks along `axis` of about _BLOCK bytes (each block's source
        and destination stay in cache; one batch element at a time where one is larger), each
        copied with a long inner loop: NumPy's runs along dst's last axis, so where that is
        short (channels last) and not the source's innermost, each index of it is copied on
        its own. NumPy copies without the GIL: from _THREADED bytes on, the blocks are shared
        among threads, one per CPU this process may use (at most 8; shared=False: not)."""
        if dst.size == 0:
            return
        if dst.shape[0] > 1 and dst.nbytes // dst.shape[0] > _BLOCK and axis > 0:
            blocks = [((slice(i, i + 1),), axis) for i in range(dst.shape[0])]
        else:
            n = dst.shape[axis]
            step = max(1, _BLOCK // max(1, dst.nbytes // n))
            lead = (slice(None),) * axis
            blocks = [(lead + (slice(r, r + step),), None) for r in range(0, n, step)]

        def copy(part):
            for block, inner in part:
                d, s = dst[block], src[block]
                if inner is not None:
                    NumPy.permute_into(d, s, inner, False)
                elif d.ndim > 1 and d.shape[-1] <= 16 and s.strides[-1] != s.itemsize:
                    for c in range(d.shape[-1]):
                        d[..., c] = s[..., c]
                else:
                    d[...] = s

        threads = min(_cpus(), len(blocks), 8) if shared and dst.nbytes >= _THREADED else 1
        if threads <= 1:
            return copy(blocks)
        workers = [threading.Thread(target=copy, args=(blocks[i::threads],))
                   for i in range(1, threads)]
        for t in workers:
            t.start()
        try:
            copy(blocks[0::threads])
        finally:
            for t in workers:
                t.join()

    @staticmethod
    def take(x, index, axis):
        """x[..., index, ...] along axis (index a NumPy array of ints): a new C-contiguous
        array."""
        return np.take(x, index, axis)

    cast = staticmethod(_scipy_cast_numpy)

    @staticmethod
    def write(dst, src):
        np.copyto(dst, src, casting="unsafe")

    @staticmethod
    def assign(dst, src):
        """dst[...] = src with the library's own casting (SciPy's `output[...] = input`)."""
        dst[...] = src

    @staticmethod
    def overlap(a, b):
        return np.may_share_memory(a, b)

    @staticmethod
    def real(x):
        return x.real

    @staticmethod
    def imag(x):
        return x.imag

    @staticmethod
    def prepare(dtype, call, out_dtype=None):
        """The core call (shape, weights, convolve, modes, cval, origins, backend, strategy,
        direct_sums, every, rounding) on C-contiguous host arrays of dtype (the output's
        out_dtype, by default the same), seen as `shape` (batch first), prepared once
        (_replay._replayable keeps it). 'auto' means the CPU for NumPy arrays: the core's own
        'auto' would take host arrays to a GPU and back where one is usable."""
        if call[6] == "auto" and not call[7]:
            call = call[:6] + ("cpu",) + call[7:]
        return _prepared(dtype, call, out_dtype)

    @staticmethod
    def run(src, dst, *call):
        """One core call on src and dst (see prepare)."""
        return NumPy.prepare(src.dtype, call, dst.dtype).host(src, dst)

    @staticmethod
    def choose(dtype, call):
        """What the core would run for the call (as prepare's) on host arrays of dtype:
        (strategy, backend, note); halo.Error where no strategy can run it."""
        if call[6] == "auto" and not call[7]:
            call = call[:6] + ("cpu",) + call[7:]
        return _choose(dtype, call, False)

    @staticmethod
    def rint(x):
        """x rounded to the nearest integers, in place."""
        np.rint(x, out=x)

    @staticmethod
    def square(x):
        """x * x in place, in x's dtype (SciPy's gradient magnitude)."""
        np.multiply(x, x, x)

    @staticmethod
    def sqrt(x, nearest=False):
        """The square root in place, as SciPy's gradient magnitude takes it: an integer x
        holds the truncated root (numpy's unsafe casting); nearest: the root in float64, rounded
        to the nearest integer."""
        if nearest and x.dtype.kind in "biu":
            x[...] = _nearest_numpy(np.sqrt(x, dtype=_F64), x.dtype)
            return
        np.sqrt(x, x, casting="unsafe")


# Prepared calls by their arguments, the latest first: a call made again (each pass of a filter
# on images of one shape) reuses its plan, as the replay does for float32 and float64 calls.
_PREPARED = {}
_PREPARED_MAX = 64


def _prepared(dtype, call, out_dtype=None):
    (shape, weights, convolve, modes, cval, origins, backend, strategy, direct_sums, every,
     rounding) = call
    out = "" if out_dtype is None or out_dtype == dtype else (_NAMES.get(out_dtype) or
                                                              out_dtype.name)
    name = _NAMES.get(dtype) or dtype.name
    w = np.ascontiguousarray(weights, np.float64)
    key = (name, out, tuple(shape), w.shape, w.tobytes(), bool(convolve), tuple(modes),
           float(cval), tuple(int(o) for o in origins), backend, strategy, bool(direct_sums),
           bool(every), rounding)
    p = _PREPARED.pop(key, None)
    if p is None:
        p = _halo.Prepared(list(shape), name, weights, convolve, modes, cval, origins, backend,
                           strategy, direct_sums, every, out, rounding)
        if len(_PREPARED) >= _PREPARED_MAX:
            _PREPARED.pop(next(iter(_PREPARED)))
    _PREPARED[key] = p
    return p


def _choose(dtype, call, device):
    shape, weights, convolve, modes, cval, origins, backend, strategy, direct_sums = call[:9]
    return _halo.choose(list(shape), _NAMES.get(dtype) or dtype.name, weights, convolve, modes,
                        cval, origins, backend, strategy, direct_sums, device)


def _byte_span(ptr, shape, strides, itemsize):
    """[first, last) bytes an array of these strides touches."""
    lo = hi = ptr
    for n, s in zip(shape, strides):
        if n == 0:
            return ptr, ptr
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + itemsize


_I32, _I64, _U8 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8)
# The core's dtypes by name (a NumPy dtype's .name is computed in Python at each call).
_NAMES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}


class _Device:
    """What GPU kinds share: the core runs on the array's device, on the caller's current stream."""

    device = True

    def cast(self, x, dtype, nearest=False):
        """As _scipy_cast_numpy, on the GPU, whose conversions of floats to integers saturate:
        the C conversions SciPy's results follow go through int32 (up to 16 bits, bool) or int64
        (uint32, negative values to uint64) and wrap, which integer conversions do here too.
        nearest: to the nearest integer, ties to even, saturated, NaN to 0 (rounded())."""
        if nearest and dtype.kind in "biu":
            lo, hi = _int_range(dtype)
            r = self.rounded(x, lo, hi)
            return self.saturate_top(self.astype(r, dtype), r, dtype)
        if dtype.kind == "b":
            return self.astype(self.astype(x, _I32), _U8) != 0
        if dtype.kind in "iu":
            if dtype.itemsize <= 2:
                return self.astype(self.astype(x, _I32), dtype)
            if dtype == np.uint32:
                return self.astype(self.astype(x, _I64), dtype)
            if dtype == np.uint64:
                return self.where(x < 0, self.astype(self.astype(x, _I64), dtype),
                                  self.astype(x, dtype))
        return self.astype(x, dtype)

    saturate_top = staticmethod(_saturate_top)

    def real(self, x):
        return x.real

    def imag(self, x):
        return x.imag

    def permute_into(self, dst, src, axis, shared=True):
        """dst[...] = src (dst C-contiguous, src a transposed view of its shape)."""
        self.write(dst, src)

    def take(self, x, index, axis):
        """x[..., index, ...] along axis (index a NumPy array of ints), C-contiguous."""
        return self.contiguous(x[(slice(None),) * axis + (index,)], self.dtype(x))

    def zeros(self, shape, dtype, like):
        z = self.empty(shape, dtype, like)
        z[...] = 0
        return z

    def square(self, x):
        """x * x in place, in x's dtype (SciPy's gradient magnitude)."""
        x *= x

    def sqrt(self, x, nearest=False):
        """numpy.sqrt's in place: the root computed in the dtype numpy.sqrt gives for x's
        (float16 from 8-bit integers and bools, float32 from 16-bit, float64 from wider) and
        stored back as the kind stores it (truncated into integers). nearest: an integer x
        holds the root taken in float64, rounded to the nearest integer."""
        dt = self.dtype(x)
        if nearest and dt.kind in "biu":
            self.write(x, self.cast(self.root(self.astype(x, _F64)), dt, True))
            return
        root_dt = np.sqrt(np.ones(1, dt)).dtype
        self.write(x, self.root(x if root_dt == dt else self.astype(x, root_dt)))

    def overlap(self, a, b):
        a0, a1 = self.span(a)
        b0, b1 = self.span(b)
        return a0 < b1 and b0 < a1

    def contiguous_overlap(self, a, b):
        """overlap() of two C-contiguous arrays of one size (the replays' output and input)."""
        return abs(self.ptr(a) - self.ptr(b)) < a.nbytes

    def prepare(self, dtype, call, out_dtype=None):
        """The core call (as NumPy.prepare's) on device arrays of dtype (the output's out_dtype,
        by default the same), prepared once."""
        return _prepared(dtype, call, out_dtype)

    def replay(self, prepared, src, dst, shape, dtype):
        """(dst, run info): the prepared call on src into dst (a new array where None), on
        src's device (made the current one only where it is not) and the current stream there."""
        if self.current_device() == self.device_id(src):
            if dst is None:
                dst = self.empty_here(shape, dtype, src)
            return dst, self.call_prepared(prepared, src, dst)
        with self.on_device(src):
            if dst is None:
                dst = self.empty_here(shape, dtype, src)
            return dst, self.call_prepared(prepared, src, dst)

    def call_prepared(self, prepared, src, dst):
        return prepared.device(self.ptr(src), self.ptr(dst), self.stream(src))

    def run(self, src, dst, *call):
        """One core call on the device memory of src and dst (C-contiguous), on the array's
        device and the caller's current stream there."""
        with self.on_device(src):
            return self.call_prepared(self.prepare(self.dtype(src), call, self.dtype(dst)), src,
                                      dst)

    def choose(self, dtype, call):
        """What the core would run for the call on device arrays of dtype on the current
        device: (strategy, backend, note); halo.Error where no strategy can run it."""
        return _choose(dtype, call, True)


class CuPy(_Device):
    name = "cupy"

    def __init__(self):
        import cupy

        self.cp = cupy
        # Replays read CuPy arrays in C++ (python/replay.cpp): new outputs as empty_here's.
        _halo.replay_device_kind(
            "cupy", cupy.ndarray, np.dtype(np.float32), np.dtype(np.float64),
            cupy.cuda.runtime.getDevice, lambda device: cupy.cuda.get_current_stream().ptr,
            lambda shape, dtype, device: cupy.empty(shape, dtype), self)

    def dtype(self, x):
        return x.dtype

    def empty(self, shape, dtype, like):
        with like.device:
            return self.cp.empty(shape, dtype)

    def empty_here(self, shape, dtype, like):
        """empty() where like's device is the current one."""
        return self.cp.empty(shape, dtype)

    def current_device(self):
        return self.cp.cuda.runtime.getDevice()

    def device_id(self, x):
        return x.data.device_id

    def contiguous(self, x, dtype):
        return self.cp.ascontiguousarray(x, dtype)

    def is_contiguous(self, x):
        return x.flags.c_contiguous

    def writeable(self, x):
        return True

    def transpose(self, x, axes):
        return x.transpose(axes)

    def take(self, x, index, axis):
        with x.device:
            return self.cp.take(x, self.cp.asarray(index), axis)

    def astype(self, x, dtype):
        return x.astype(dtype)

    def where(self, c, a, b):
        return self.cp.where(c, a, b)

    def rint(self, x):
        self.cp.rint(x, out=x)

    def rounded(self, x, lo, hi):
        """x in float64 (a new array) rounded to the nearest integers, ties to even, NaN to 0,
        clipped to [lo, hi]."""
        r = self.cp.rint(x.astype(self.cp.float64))
        r[self.cp.isnan(r)] = 0
        return self.cp.clip(r, float(lo), float(hi), out=r)

    def root(self, x):
        return self.cp.sqrt(x)

    def write(self, dst, src):
        dst[...] = src

    assign = write

    def ptr(self, x):
        return x.data.ptr

    def span(self, x):
        return _byte_span(x.data.ptr, x.shape, x.strides, x.dtype.itemsize)

    def stream(self, x):
        return self.cp.cuda.get_current_stream().ptr

    def on_device(self, x):
        return x.device


class Torch(_Device):
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        self.to_torch = {}
        for name in ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
                     "float64", "complex64", "complex128", "uint16", "uint32", "uint64"):
            t = getattr(torch, name, None)
            if t is not None:
                self.to_torch[np.dtype(name)] = t
        self.to_numpy = {t: d for d, t in self.to_torch.items()}
        # Replays read CUDA tensors in C++ (python/replay.cpp), through torch's own functions
        # for the current device and stream where it has them (torch.cuda's call them).
        current = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
        stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda device: torch.cuda.current_stream(device).cuda_stream)
        _halo.replay_device_kind(
            "torch", torch.Tensor, torch.float32, torch.float64, current, stream,
            lambda shape, dtype, device: torch.empty(shape, dtype=dtype, device=device), self)

    def dtype(self, x):
        try:
            return self.to_numpy[x.dtype]
        except KeyError:
            raise TypeError(f"halo does not filter torch tensors of {x.dtype}") from None

    def dtype_spec(self, spec):
        """A torch dtype given as `output`, as a NumPy dtype."""
        if spec in self.to_numpy:
            return self.to_numpy[spec]
        return np.dtype(spec)

    def _t(self, dtype):
        try:
            return self.to_torch[np.dtype(dtype)]
        except KeyError:
            raise TypeError(f"torch has no dtype {np.dtype(dtype)}") from None

    def empty(self, shape, dtype, like):
        return self.torch.empty(tuple(shape), dtype=self._t(dtype), device=like.device)

    empty_here = empty

    def current_device(self):
        return self.torch.cuda.current_device()

    def device_id(self, x):
        return x.device.index

    def contiguous(self, x, dtype):
        return x.to(self._t(dtype)).contiguous()

    def is_contiguous(self, x):
        return x.is_contiguous()

    def writeable(self, x):
        return True

    def transpose(self, x, axes):
        return x.permute(*axes)

    def take(self, x, index, axis):
        return x.index_select(axis, self.torch.as_tensor(index, device=x.device))

    def astype(self, x, dtype):
        return x.to(self._t(dtype))

    def where(self, c, a, b):
        return self.torch.where(c, a, b)

    def rint(self, x):
        x.round_()  # to the nearest integer, halves to even, as numpy.rint

    def rounded(self, x, lo, hi):
        """x in float64 (a new tensor) rounded to the nearest integers, ties to even, NaN to 0,
        clipped to [lo, hi]."""
        r = self.torch.round(x.to(self.torch.float64))
        r.nan_to_num_(0.0)
        return r.clamp_(float(lo), float(hi))

    @staticmethod
    def saturate_top(out, r, dtype):
        """Nothing to do: CUDA's conversions of floats to integers saturate (2**63 gives the
        largest int64, 2**64 the largest uint64), and torch writes no value past int64's into
        a uint64 tensor (_saturate_top's assignment)."""
        return out

    def root(self, x):
        return self.torch.sqrt(x)

    def write(self, dst, src):
        dst.copy_(src)

    assign = write

    def ptr(self, x):
        return x.data_ptr()

    def span(self, x):
        size = x.element_size()
        return _byte_span(x.data_ptr(), x.shape, [s * size for s in x.stride()], size)

    def stream(self, x):
        return self.torch.cuda.current_stream(x.device).cuda_stream

    def on_device(self, x):
        return self.torch.cuda.device(x.device)


_NUMPY = NumPy()
_kinds = {}


def _kind(name, cls):
    k = _kinds.get(name)
    if k is None:
        k = _kinds[name] = cls()
    return k


def device_context(x):
    """A context manager making x's GPU the current device (CuPy, PyTorch), or None for arrays
    in host memory: conversions and allocations then happen on the array's own device."""
    if type(x) is np.ndarray:
        return None
    module = type(x).__module__ or ""
    if module.startswith("cupy"):
        return _kind("cupy", CuPy).on_device(x)
    if module.startswith("torch") and getattr(x, "is_cuda", False):
        return _kind("torch", Torch).on_device(x)
    return None


def kind_name(x):
    """'numpy', 'cupy' or 'torch': the kind an output array must match."""
    if type(x) is np.ndarray:
        return "numpy"
    module = type(x).__module__ or ""
    if module.startswith("cupy"):
        return "cupy"
    if module.startswith("torch"):
        return "torch" if getattr(x, "is_cuda", False) else "torch (CPU)"
    return "numpy" if isinstance(x, np.ndarray) else type(x).__name__


def host_weights(w):
    """Filter weights as a NumPy array: CuPy arrays and PyTorch tensors are copied to the host
    (weights are small; the core keeps them as float64 on the host and copies them to the GPU)."""
    if isinstance(w, np.ndarray):
        return w
    module = type(w).__module__ or ""
    if module.startswith("cupy"):
        return w.get()
    if module.startswith("torch"):
        return w.detach().cpu().numpy()
    return np.asarray(w)


def kind_of(x):
    """(kind, array): the kind of x and x as an array of it. NumPy arrays (and whatever
    numpy.asarray takes: lists, scalars, CPU tensors) are NumPy's; CuPy arrays CuPy's; PyTorch
    CUDA tensors PyTorch's; other objects exporting __cuda_array_interface__ become CuPy arrays
    without a copy when CuPy is installed."""
    if type(x) is np.ndarray:
        return _NUMPY, x
    module = type(x).__module__ or ""
    if module.startswith("cupy"):
        return _kind("cupy", CuPy), x
    if module.startswith("torch") and getattr(x, "is_cuda", False):
        return _kind("torch", Torch), x
    if hasattr(x, "__cuda_array_interface__"):
        try:
            k = _kind("cupy", CuPy)
        except ImportError:
            raise TypeError(f"halo reads GPU arrays of {type(x).__name__} through CuPy, which is "
                            "not installed") from None
        return k, k.cp.asarray(x)
    return _NUMPY, np.asarray(x)
