#!/usr/bin/env python3
"""Side-by-side comparison, in one run on one GPU, of halo against the libraries people use.
halo's figures come from `halo bench --format json` (or --halo-json, a `halo bench --json` file
of the same run and --mode). Every time is the median of --reps runs after warm-up, timed with
CUDA events, on random float32 data; GPU memory is freed between libraries.

Suites radii, 1d, 3d (dense random filters of radius r): PyTorch F.conv1d/2d/3d (cuDNN, fp32 with
TF32 off, cudnn.benchmark=True), CuPy cupyx.scipy.ndimage.correlate, CuPy
cupyx.scipy.signal.fftconvolve and NVIDIA NPP nppiFilterBorder_32f_C1R_Ctx (2-D). Prints one
table: problem x library, halo's best strategy and the ratio to the best other library.

Suite realworld (`halo bench --suite realworld`, not part of the default): the filters people
run. 2-D 16384^2: Gaussian sigma 1, 2, 4, 8, box 31, a dense random 31x31 (r=15), a Laplacian
of Gaussian sigma 4 (33x33, rank 2); 1-D 2^28: Gaussian sigma 16, box 255; 3-D 512^3: Gaussian
sigma 1, 2, box 9. A Gaussian is SciPy's (truncate=4.0: radius int(4 sigma + 0.5), normalised),
box:K the K^d mean (uniform_filter size=K), log:sigma=S SciPy's gaussian_laplace.
  CuPy      cupyx.scipy.ndimage.gaussian_filter(truncate=4.0) / uniform_filter (1-D:
            gaussian_filter1d / uniform_filter1d) / gaussian_laplace; r=15:
            cupyx.scipy.ndimage.correlate
  PyTorch   one convolution per axis (conv1d; conv2d with (1,K) then (K,1) kernels; conv3d with
            three 1-D kernels) of the normalised Gaussian or box factor, zero padding K//2, TF32
            off, cudnn.benchmark on; the LoG as two such pairs (second derivative along x then
            the Gaussian along y, and the other way round) added; r=15: one conv2d
  NPP       2-D only (bench/npp_filter.cpp): Gaussians nppiFilterRowBorder_32f_C1R_Ctx then
            nppiFilterColumnBorder_32f_C1R_Ctx through a temporary (timed together), boxes
            nppiFilterBoxBorder_32f_C1R_Ctx, r=15 nppiFilterBorder_32f_C1R_Ctx; no LoG (NPP's
            Laplacian and LoG filters are fixed 3x3 to 5x5 masks)
  CuPy FFT  cupyx.scipy.signal.fftconvolve(mode="same"), r=15 only
Prints problem, halo's floor (floor_ms of its best row), halo best (ms, strategy), frac (halo's
floor / halo best), each library, the best other and ratio = best other / halo best.

--python also times halo's Python module (`import halo`, built with CUDA, on PYTHONPATH) on CuPy
arrays: gaussian_filter / uniform_filter (the 1-D forms for rank 1) for the realworld suite,
correlate for the dense problems (weights as a NumPy array), called as a user would (output
allocated by the call, the same mode). A table sets its time beside the C++ API's (`halo bench`) for the strategy it ran.

--mode (default constant, i.e. zero ghost cells; or reflect, nearest, mirror, wrap, SciPy's names
and halo's) is passed to `halo bench --mode` and to CuPy's ndimage functions; halo names a
problem with " MODE" appended unless the mode is constant. Caveats: NPP always uses
NPP_BORDER_REPLICATE (SciPy's "nearest"; zero ghosts are not offered by every one of these
functions); PyTorch always pads with zeros (its "reflect" padding is SciPy's "mirror", and SciPy's
"reflect" is torch's missing "symmetric"), and CuPy FFT is zero-padded too: under another mode
those columns do the same arithmetic and traffic with different values at the edges, and the
table says so. --json writes every figure.

Usage: python3 bench/compare.py --halo build/tools/halo/halo [--npp build/npp_filter]
       [--suites radii,1d,3d|realworld] [--mode constant|reflect|...] [--reps 10]
       [--halo-json bench.json] [--json out.json] [--python] [--radii 1,3,15]
"""
import argparse
import json
import math
import statistics
import subprocess
import sys

SUITES = {
    "radii": [(2, (16384, 16384), r) for r in (1, 2, 3, 4, 5, 7, 15)],
    "1d": [(1, (1 << 28,), r) for r in (4, 16, 64)],
    "3d": [(3, (640, 640, 640), r) for r in (1, 2, 3)],
}

# The realworld suite, in halo's order: (rank, shape, filter), where filter is halo's named filter
# spec, or None for the dense random filter of radius DENSE_R.
DENSE_R = 15
REALWORLD = (
    [(2, (16384, 16384), f"gaussian:sigma={s}") for s in (1, 2, 4, 8)]
    + [(2, (16384, 16384), "box:31"), (2, (16384, 16384), None)]
    + [(2, (16384, 16384), "log:sigma=4")]
    + [(1, (1 << 28,), "gaussian:sigma=16"), (1, (1 << 28,), "box:255")]
    + [(3, (512, 512, 512), f"gaussian:sigma={s}") for s in (1, 2)]
    + [(3, (512, 512, 512), "box:9")]
)
MODES = ("constant", "reflect", "nearest", "mirror", "wrap")


def mode_suffix(mode):
    # halo names problems with zero ghosts (constant, cval 0) without a mode.
    return "" if mode == "constant" else f" {mode}"


def label(rank, shape, r, mode="constant"):
    return f"{rank}D {'x'.join(map(str, shape))} r={r}{mode_suffix(mode)}"


def realworld_label(rank, shape, spec, mode="constant"):
    f = spec if spec else f"r={DENSE_R}"
    return f"{rank}D {'x'.join(map(str, shape))} {f}{mode_suffix(mode)}"


def parse_filter(spec):
    """(kind, sigma or None, K) of a realworld filter: gaussian, box, or dense (spec None)."""
    if spec is None:
        return "dense", None, 2 * DENSE_R + 1
    name, _, arg = spec.partition(":")
    if name in ("gaussian", "log"):
        key, _, val = arg.partition("=")
        assert key == "sigma", spec
        sigma = float(val)
        return name, sigma, 2 * int(4.0 * sigma + 0.5) + 1  # SciPy's truncate=4.0
    if name == "box":
        return "box", None, int(arg)
    raise ValueError(f"unknown filter {spec!r}")


def weights_1d(kind, sigma, k):
    """The normalised 1-D factor as a list of k floats, as SciPy builds it (in double)."""
    if kind == "box":
        return [1.0 / k] * k
    r = k // 2
    w = [math.exp(-0.5 * (i / sigma) ** 2) for i in range(-r, r + 1)]
    total = math.fsum(w)
    return [v / total for v in w]


def second_derivative_1d(sigma, k):
    """SciPy's order=2 Gaussian factor: (x^2 / sigma^4 - 1 / sigma^2) times the normalised one."""
    g, r = weights_1d("gaussian", sigma, k), k // 2
    return [((i / sigma) ** 2 - 1) / sigma ** 2 * g[i + r] for i in range(-r, r + 1)]


def log_weights_2d(sigma, k):
    """The dense K x K Laplacian of Gaussian (what halo's log:sigma=S builds), float32 NumPy."""
    import numpy as np
    g = np.array(weights_1d("gaussian", sigma, k))
    d2 = np.array(second_derivative_1d(sigma, k))
    return (np.outer(g, d2) + np.outer(d2, g)).astype(np.float32)


def time_cuda(fn, reps, warmup=3, batch=1):
    """Median ms of fn between two events; batch > 1: of `batch` calls queued back to back, per
    call (the host's cost of a call is then hidden behind the GPU's work)."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    return statistics.median(between_events(fn, batch) for _ in range(reps))


def between_events(fn, batch=1):
    """ms per call of `batch` calls of fn queued between two CUDA events."""
    import torch
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(batch):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / batch


def time_cuda_turns(fns, reps, warmup=3):
    """[median ms of each of fns], one call between two events each, the calls taking turns (each
    round starting one further along) so that drifts of the GPU's or the host's speed reach all
    alike."""
    import torch
    for _ in range(warmup):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for i in range(reps):
        for j in range(len(fns)):
            k = (i + j) % len(fns)
            times[k].append(between_events(fns[k]))
    return [statistics.median(t) for t in times]


def free_gpu():
    """Give back what the last library held: CuPy's pools and FFT plans, torch's cache."""
    import gc
    gc.collect()
    try:
        import cupy as cp
        cp.fft.config.get_plan_cache().clear()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    except ImportError:
        pass
    import torch
    torch.cuda.empty_cache()


def attempt(what, fn):
    """fn()'s time, or None (and a note on stderr) if it failed; GPU memory is freed either way."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - one library failing must not lose the rest of the run
        msg = str(e).strip().splitlines()
        print(f"  {what} failed: {type(e).__name__}: {msg[-1] if msg else ''}", file=sys.stderr,
              flush=True)
        return None
    finally:
        free_gpu()


def torch_setup():
    import torch
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def bench_torch(rank, shape, r, reps):
    import torch
    import torch.nn.functional as F
    torch_setup()
    x = torch.rand((1, 1) + shape, device="cuda") * 2 - 1
    w = torch.rand((1, 1) + (2 * r + 1,) * rank, device="cuda") * 2 - 1
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    with torch.no_grad():
        t = time_cuda(lambda: conv(x, w, padding=r), reps)
    del x, w
    torch.cuda.empty_cache()
    return t


def bench_torch_separable(rank, shape, w1d, reps):
    """One zero-padded convolution per axis with the 1-D factor w1d, last (contiguous) axis
    first: conv1d; conv2d (1,K) then (K,1); conv3d (1,1,K), (1,K,1), (K,1,1)."""
    import torch
    import torch.nn.functional as F
    torch_setup()
    k = len(w1d)
    x = torch.rand((1, 1) + tuple(shape), device="cuda") * 2 - 1
    w = torch.tensor(w1d, dtype=torch.float32, device="cuda")
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    passes = []
    for axis in reversed(range(rank)):
        kshape = [1] * rank
        kshape[axis] = k
        pad = [0] * rank
        pad[axis] = k // 2
        passes.append((w.reshape((1, 1) + tuple(kshape)).contiguous(), tuple(pad)))

    def fn():
        y = x
        for wk, pad in passes:
            y = conv(y, wk, padding=pad)
        return y

    with torch.no_grad():
        return time_cuda(fn, reps)


def bench_torch_log(shape, sigma, k, reps):
    """A 2-D Laplacian of Gaussian as PyTorch users write it: the second derivative along x
    then the Gaussian along y, plus the Gaussian along x then the second derivative along y
    (conv2d with (1,K) and (K,1) kernels, zero padding), added."""
    import torch
    import torch.nn.functional as F
    torch_setup()
    x = torch.rand((1, 1) + tuple(shape), device="cuda") * 2 - 1
    g = torch.tensor(weights_1d("gaussian", sigma, k), dtype=torch.float32, device="cuda")
    d2 = torch.tensor(second_derivative_1d(sigma, k), dtype=torch.float32, device="cuda")
    row = lambda w: w.reshape(1, 1, 1, k).contiguous()
    col = lambda w: w.reshape(1, 1, k, 1).contiguous()
    h = k // 2

    def fn():
        a = F.conv2d(F.conv2d(x, row(d2), padding=(0, h)), col(g), padding=(h, 0))
        b = F.conv2d(F.conv2d(x, row(g), padding=(0, h)), col(d2), padding=(h, 0))
        return a + b

    with torch.no_grad():
        return time_cuda(fn, reps)


def bench_cupy(rank, shape, r, reps, fft, mode="constant"):
    import cupy as cp
    import cupyx.scipy.ndimage as ndi
    import cupyx.scipy.signal as sig
    import torch
    x = cp.random.uniform(-1, 1, shape, dtype=cp.float32)
    w = cp.random.uniform(-1, 1, (2 * r + 1,) * rank, dtype=cp.float32)
    if fft:
        fn = lambda: sig.fftconvolve(x, w, mode="same")
    else:
        fn = lambda: ndi.correlate(x, w, mode=mode)
    # CuPy runs on the current stream; torch's events on the same default stream time it.
    t = time_cuda(fn, reps)
    del x, w
    cp.get_default_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()
    return t


def bench_cupy_named(rank, shape, kind, sigma, k, mode, reps):
    """cupyx.scipy.ndimage's own Gaussian / uniform filter (the 1-D forms for rank 1)."""
    import cupy as cp
    import cupyx.scipy.ndimage as ndi
    x = cp.random.uniform(-1, 1, shape, dtype=cp.float32)
    if kind == "log":
        fn = lambda: ndi.gaussian_laplace(x, sigma, mode=mode, truncate=4.0)
    elif kind == "gaussian":
        if rank == 1:
            fn = lambda: ndi.gaussian_filter1d(x, sigma, mode=mode, truncate=4.0)
        else:
            fn = lambda: ndi.gaussian_filter(x, sigma, mode=mode, truncate=4.0)
    else:
        if rank == 1:
            fn = lambda: ndi.uniform_filter1d(x, size=k, mode=mode)
        else:
            fn = lambda: ndi.uniform_filter(x, size=k, mode=mode)
    return time_cuda(fn, reps)


def bench_halo_python(rank, shape, kind, sigma, k, mode, reps):
    """halo's Python functions on a CuPy array: one call's median ms (`ms`; `into_ms` with an
    output given), 10 queued calls' per call (`queued_ms`), the strategy the core ran, and one call
    of the C++ API's for the same work (`core_new_ms` into a new output, `core_ms` into one
    allocated beforehand)."""
    import cupy as cp
    import halo
    x = cp.random.uniform(-1, 1, shape, dtype=cp.float32)
    # fn: the call a user writes (the output allocated by the call); fn_into: the same into an
    # output given.
    if kind == "gaussian":
        f = halo.gaussian_filter1d if rank == 1 else halo.gaussian_filter
        fn = lambda: f(x, sigma, mode=mode, truncate=4.0)
        fn_into = lambda o: f(x, sigma, mode=mode, truncate=4.0, output=o)
    elif kind == "box":
        f = halo.uniform_filter1d if rank == 1 else halo.uniform_filter
        fn = lambda: f(x, size=k, mode=mode)
        fn_into = lambda o: f(x, size=k, mode=mode, output=o)
    else:
        if kind == "log":
            w = log_weights_2d(sigma, k)  # the dense weights through correlate, as the CLI runs
        else:
            # NumPy weights: halo analyses a filter on the host, and weights given as a GPU
            # array are copied there first, which waits for the stream (docs/PYTHON.md, Speed).
            w = cp.random.uniform(-1, 1, (k,) * rank, dtype=cp.float32).get()
        fn = lambda: halo.correlate(x, w, mode=mode)
        fn_into = lambda o: halo.correlate(x, w, mode=mode, output=o)
    halo._REPLAY.clear()
    fn()
    strategy = halo.last_run()["strategy"]
    queued = time_cuda(fn, max(3, reps // 2), batch=10)
    # The C++ API's one call for the same work: the core call the Python calls replay
    # (halo::apply with its arguments converted once), both into an output allocated beforehand
    # (the Python call given it as `output`) and into a new output each call (as the Python call
    # returns one, from CuPy's pool), the four timed in turn (at least 21 of each).
    if len(halo._REPLAY) != 1:
        return {"ms": time_cuda(fn, reps), "queued_ms": queued, "strategy": strategy}
    prepared = halo._halo.replay_calls()[0]
    o = cp.empty_like(x)
    stream = cp.cuda.get_current_stream().ptr
    held = [None]  # the last new output, alive until the next call makes one (as `y = f(x)`)

    def core_new():
        held[0] = None
        held[0] = cp.empty_like(x)
        prepared.device(x.data.ptr, held[0].data.ptr, stream)

    def python_new():
        held[0] = None
        held[0] = fn()

    one, core_new_ms, into, core = time_cuda_turns(
        [python_new, core_new, lambda: fn_into(o), lambda: prepared.device(
            x.data.ptr, o.data.ptr, stream)], max(21, reps))
    return {"ms": one, "queued_ms": queued, "strategy": strategy, "core_new_ms": core_new_ms,
            "into_ms": into, "core_ms": core}


def python_entry(args, entry, rank, shape, kind, sigma, k):
    """entry["python"]: the Python module's time and strategy, and the C++ API's for it."""
    if not args.python:
        return
    got = attempt(f"{entry['problem']} halo Python", lambda: bench_halo_python(
        rank, shape, kind, sigma, k, args.mode, args.reps))
    if got:
        entry["python"] = dict(got, cpp_ms=entry["halo"].get(got["strategy"]))


def run_npp(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    # The median is the second-to-last field of every form of npp_filter's output line.
    return float(out.stdout.split()[-2])


def bench_npp(npp, shape, r, reps):
    return run_npp([npp, str(shape[0]), str(shape[1]), str(r), str(reps)])


def bench_npp_named(npp, shape, kind, sigma, k, reps):
    h, w = str(shape[0]), str(shape[1])
    if kind == "gaussian":
        cmd = [npp, "sep", h, w, str(k), f"gauss:{sigma!r}", str(reps)]
    elif kind == "box":
        cmd = [npp, "box", h, w, str(k), str(reps)]
    else:
        cmd = [npp, "dense", h, w, str(k // 2), str(reps)]
    return run_npp(cmd)


def halo_rows(halo, suite, reps, mode):
    out = subprocess.run([halo, "bench", "--suite", suite, "--backend", "cuda", "--format",
                          "json", "--reps", str(reps), "--mode", mode],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"halo bench failed:\n{out.stderr}")
    return json.loads(out.stdout)


def halo_entry(doc, suite, name):
    # The radii and realworld suites share "2D 16384x16384 r=15": match the suite too.
    rows = [x for x in doc["rows"] if x["problem"] == name and "median_ms" in x
            and x["backend"] == "cuda" and x.get("suite", suite) == suite]
    if not rows:
        print(f"  {name}: no halo rows with that problem name (wrong --mode or --halo-json?)",
              file=sys.stderr, flush=True)
    best = min(rows, key=lambda x: x["median_ms"]) if rows else None
    return {"suite": suite, "problem": name,
            "halo": {x["strategy"]: x["median_ms"] for x in rows},
            "halo_best": best["strategy"] if best else None,
            "halo_best_ms": best["median_ms"] if best else None,
            "floor_ms": best["floor_ms"] if best else None, "others": {}}


def run_classic(args, suite, doc, results):
    for rank, shape, r in SUITES[suite]:
        if args.radii and r not in args.radii:
            continue
        name = label(rank, shape, r, args.mode)
        entry = halo_entry(doc, suite, name)
        o = entry["others"]
        o["cuDNN"] = attempt(f"{name} cuDNN", lambda: bench_torch(rank, shape, r, args.reps))
        o["CuPy ndimage"] = attempt(f"{name} CuPy ndimage", lambda: bench_cupy(
            rank, shape, r, args.reps, fft=False, mode=args.mode))
        if rank < 3 or not args.no_fft_3d:
            o["CuPy FFT"] = attempt(f"{name} CuPy FFT",
                                    lambda: bench_cupy(rank, shape, r, args.reps, fft=True))
        if rank == 2 and args.npp:
            o["NPP"] = attempt(f"{name} NPP", lambda: bench_npp(args.npp, shape, r, args.reps))
        python_entry(args, entry, rank, shape, "dense", None, 2 * r + 1)
        results["problems"].append(entry)
        print(f"  {name}: halo {fmt(entry['halo_best_ms'])} ms; " +
              ", ".join(f"{k} {fmt(v)}" for k, v in o.items()), file=sys.stderr, flush=True)


def run_realworld(args, doc, results):
    for rank, shape, spec in REALWORLD:
        name = realworld_label(rank, shape, spec, args.mode)
        kind, sigma, k = parse_filter(spec)
        entry = halo_entry(doc, "realworld", name)
        entry.update({"rank": rank, "shape": list(shape), "filter": spec or f"r={DENSE_R}",
                      "kind": kind, "taps_per_axis": k, "mode": args.mode})
        o = entry["others"]
        impl = entry["implementations"] = {}
        if kind == "dense":
            impl["CuPy"] = f"cupyx.scipy.ndimage.correlate(mode={args.mode!r})"
            o["CuPy"] = attempt(f"{name} CuPy", lambda: bench_cupy(
                rank, shape, DENSE_R, args.reps, fft=False, mode=args.mode))
            impl["PyTorch"] = "F.conv2d, one dense kernel, zero padding"
            o["PyTorch"] = attempt(f"{name} PyTorch",
                                   lambda: bench_torch(rank, shape, DENSE_R, args.reps))
        elif kind == "log":
            impl["CuPy"] = f"cupyx.scipy.ndimage.gaussian_laplace(mode={args.mode!r})"
            o["CuPy"] = attempt(f"{name} CuPy", lambda: bench_cupy_named(
                rank, shape, kind, sigma, k, args.mode, args.reps))
            impl["PyTorch"] = f"F.conv2d, two pairs of {k}-tap 1-D passes added, zero padding"
            o["PyTorch"] = attempt(f"{name} PyTorch",
                                   lambda: bench_torch_log(shape, sigma, k, args.reps))
        else:
            fn = {("gaussian", 1): "gaussian_filter1d", ("gaussian", 2): "gaussian_filter",
                  ("gaussian", 3): "gaussian_filter", ("box", 1): "uniform_filter1d",
                  ("box", 2): "uniform_filter", ("box", 3): "uniform_filter"}[(kind, rank)]
            impl["CuPy"] = f"cupyx.scipy.ndimage.{fn}(mode={args.mode!r})"
            o["CuPy"] = attempt(f"{name} CuPy", lambda: bench_cupy_named(
                rank, shape, kind, sigma, k, args.mode, args.reps))
            w1d = weights_1d(kind, sigma, k)
            impl["PyTorch"] = f"F.conv{rank}d, {rank} pass(es) of a {k}-tap 1-D kernel, zero padding"
            o["PyTorch"] = attempt(f"{name} PyTorch",
                                   lambda: bench_torch_separable(rank, shape, w1d, args.reps))
        if rank == 2 and args.npp and kind != "log":
            impl["NPP"] = {"gaussian": "nppiFilterRowBorder + nppiFilterColumnBorder (row+column)",
                           "box": "nppiFilterBoxBorder",
                           "dense": "nppiFilterBorder"}[kind] + ", NPP_BORDER_REPLICATE"
            o["NPP"] = attempt(f"{name} NPP", lambda: bench_npp_named(
                args.npp, shape, kind, sigma, k, args.reps))
        if kind == "dense":
            impl["CuPy FFT"] = "cupyx.scipy.signal.fftconvolve(mode='same'), zero padding"
            o["CuPy FFT"] = attempt(f"{name} CuPy FFT", lambda: bench_cupy(
                rank, shape, DENSE_R, args.reps, fft=True))
        python_entry(args, entry, rank, shape, kind, sigma, k)
        hb, fl = entry["halo_best_ms"], entry["floor_ms"]
        entry["halo_fraction"] = fl / hb if hb and fl is not None else None
        results["problems"].append(entry)
        print(f"  {name}: halo {fmt(hb)} ms; " +
              ", ".join(f"{k2} {fmt(v)}" for k2, v in o.items()), file=sys.stderr, flush=True)


def fmt(v, spec=".3f"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def best_other(others):
    ok = {k: v for k, v in others.items() if v is not None}
    if not ok:
        return None, None
    b = min(ok, key=ok.get)
    return b, ok[b]


def print_classic(entries, mode):
    libs = ["NPP", "cuDNN", "CuPy ndimage", "CuPy FFT"]
    w = max([24] + [len(e["problem"]) for e in entries])
    print(f"{'problem':<{w}} {'floor':>7} {'halo best':>26} " +
          " ".join(f"{l:>12}" for l in libs) + f" {'best other':>16} {'ratio':>6}")
    for e in entries:
        others = e["others"]
        bo, bv = best_other(others)
        hb = e["halo_best_ms"]
        cells = " ".join(f"{fmt(others.get(l)):>12}" for l in libs)
        halo_cell = f"{hb:.3f} ({e['halo_best']})" if hb else "-"
        ratio = f"{bv / hb:6.2f}" if hb and bv else f"{'-':>6}"
        other_cell = f"{bo} {bv:.3f}" if bo else "-"
        print(f"{e['problem']:<{w}} {fmt(e['floor_ms']):>7} {halo_cell:>26} {cells} "
              f"{other_cell:>16} {ratio}")
    print("times: median ms; ratio = best other library / halo best (> 1: halo is faster)")
    if mode != "constant":
        print(f"mode {mode}: halo and CuPy ndimage use it; cuDNN and CuPy FFT pad with zeros, "
              f"NPP replicates (same arithmetic and traffic, other values at the edges)")


def print_realworld(entries, mode, npp):
    libs = ["CuPy", "PyTorch", "NPP", "CuPy FFT"]
    w = max([36] + [len(e["problem"]) for e in entries])
    print(f"{'problem':<{w}} {'floor':>7} {'halo best':>28} {'frac':>5} " +
          " ".join(f"{l:>9}" for l in libs) + f" {'best other':>18} {'ratio':>6}")
    for e in entries:
        others = e["others"]
        bo, bv = best_other(others)
        hb = e["halo_best_ms"]
        cells = " ".join(f"{fmt(others.get(l)):>9}" for l in libs)
        halo_cell = f"{hb:.3f} ({e['halo_best']})" if hb else "-"
        ratio = f"{bv / hb:6.2f}" if hb and bv else f"{'-':>6}"
        other_cell = f"{bo} {bv:.3f}" if bo else "-"
        print(f"{e['problem']:<{w}} {fmt(e['floor_ms']):>7} {halo_cell:>28} "
              f"{fmt(e.get('halo_fraction'), '.2f'):>5} {cells} {other_cell:>18} {ratio}")
    print("times: median ms; floor: halo's roofline floor (its best row's floor_ms); "
          "frac = floor / halo best;\nratio = best other library / halo best (> 1: halo is faster)")
    print("CuPy: cupyx.scipy.ndimage gaussian_filter(truncate=4.0) / uniform_filter "
          "(1-D: gaussian_filter1d / uniform_filter1d) / gaussian_laplace, correlate for r=15; "
          "PyTorch: one conv per axis (cuDNN, TF32 off; the LoG two pairs added), one conv2d "
          "for r=15")
    if npp:
        print("NPP (2-D only): row+column (nppiFilterRowBorder + nppiFilterColumnBorder, timed "
              "together) for Gaussians, nppiFilterBoxBorder for boxes, nppiFilterBorder for r=15; "
              "border NPP_BORDER_REPLICATE")
    else:
        print("NPP: not run (no --npp)")
    print("CuPy FFT: cupyx.scipy.signal.fftconvolve(mode='same'), r=15 only")
    if mode != "constant":
        print(f"mode {mode}: halo and CuPy ndimage use it; PyTorch and CuPy FFT pad with zeros "
              f"and NPP replicates (same arithmetic and traffic, other values at the edges)")


def print_python(entries):
    rows = [e for e in entries if "python" in e]
    if not rows:
        return
    w = max([36] + [len(e["problem"]) for e in rows])

    def ratio(a, b):
        return f"{a / b:6.3f}" if a and b else f"{'-':>6}"

    print(f"{'problem':<{w}} {'strategy':>10} {'C++ ms':>8} {'API new':>8} {'Python':>8} "
          f"{'ratio':>6} {'API into':>8} {'Py into':>8} {'ratio':>6} {'queued':>8} {'ratio':>6}")
    for e in rows:
        p, c = e["python"], e["python"]["cpp_ms"]
        new, core, into = p.get("core_new_ms"), p.get("core_ms"), p.get("into_ms")
        print(f"{e['problem']:<{w}} {p['strategy']:>10} {fmt(c):>8} {fmt(new):>8} "
              f"{p['ms']:8.3f} {ratio(p['ms'], new)} {fmt(core):>8} {fmt(into):>8} "
              f"{ratio(into, core)} {p['queued_ms']:8.3f} {ratio(p['queued_ms'], c)}")
    print("halo's Python module on CuPy arrays (gaussian_filter / uniform_filter / correlate).\n"
          "C++: `halo bench`, the strategy it ran, between events. One call between two events "
          "each, the four in turn\n(median of 21 or more each): API new: halo::apply (the core "
          "call the Python calls replay, arguments\nconverted once) into a new CuPy array; Python: "
          "the call returning a new array, ratio to API new;\nAPI into: halo::apply into an array "
          "allocated beforehand; Py into: the call given it as `output`,\nratio to API into. "
          "queued: 10 Python calls back to back, per call, ratio to C++")



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--halo", default="", help="the halo binary (not needed with --halo-json)")
    ap.add_argument("--npp", default="", help="bench/npp_filter built (2-D problems only)")
    ap.add_argument("--suites", default="radii,1d,3d",
                    help="comma-separated: radii, 1d, 3d, realworld")
    ap.add_argument("--mode", default="constant", choices=MODES,
                    help="boundary mode for halo (--mode) and CuPy ndimage; constant: zeros")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default="")
    ap.add_argument("--halo-json", default="",
                    help="use this `halo bench --json` file (same run, same --mode) instead of "
                         "running halo")
    ap.add_argument("--radii", default="",
                    help="comma-separated radii: only these problems of the radii, 1d, 3d suites")
    ap.add_argument("--python", action="store_true",
                    help="also time halo's Python module on CuPy arrays (import halo)")
    ap.add_argument("--no-fft-3d", action="store_true", help="skip CuPy FFT on 3-D problems")
    args = ap.parse_args()
    args.radii = [int(r) for r in args.radii.split(",") if r]
    suites = [s for s in args.suites.split(",") if s]
    for s in suites:
        if s not in SUITES and s != "realworld":
            ap.error(f"unknown suite {s!r} (expected {', '.join(list(SUITES) + ['realworld'])})")
    if not args.halo and not args.halo_json:
        ap.error("give --halo or --halo-json")

    results = {"mode": args.mode, "reps": args.reps, "problems": [], "ceilings": None}
    pre = json.load(open(args.halo_json)) if args.halo_json else None
    for suite in suites:
        doc = pre if pre else halo_rows(args.halo, suite, args.reps, args.mode)
        results["ceilings"] = doc.get("ceilings")
        if suite == "realworld":
            run_realworld(args, doc, results)
        else:
            run_classic(args, suite, doc, results)

    classic = [e for e in results["problems"] if e["suite"] != "realworld"]
    real = [e for e in results["problems"] if e["suite"] == "realworld"]
    if classic:
        print_classic(classic, args.mode)
    if real:
        if classic:
            print()
        print_realworld(real, args.mode, args.npp)
    if args.python:
        print()
        print_python(results["problems"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
