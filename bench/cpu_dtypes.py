"""halo on the CPU on 8- and 16-bit images, beside SciPy and OpenCV on the same data, in one run:
medians of timed runs at a given OpenMP thread count (each configuration in its own process,
so that OMP_NUM_THREADS and cv2.setNumThreads hold), and the process's peak memory beside the
arrays' own bytes.

    python3 bench/cpu_dtypes.py [--size 4096] [--threads 1,2] [--reps 5]

Calls, each as its library spells it: a Gaussian sigma 2 (SciPy's gaussian_filter, its radius 8;
OpenCV's GaussianBlur with a 17x17 kernel), a 5x5 mean (uniform_filter / blur), a random dense
5x5 (correlate / filter2D), a Sobel along x (sobel / Sobel), mode "nearest" (BORDER_REPLICATE).
halo's integer outputs are checked against SciPy's (equal bit for bit); OpenCV's are its own
(fixed-point Gaussians, rounding to nearest), not compared. Needs python3-opencv for OpenCV's
column (left out without it)."""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

CALLS = ["gaussian", "uniform5", "dense5", "sobel"]


def one(size, dtype, call, reps, library):
    """Runs in a child process: the median ms of `call` by `library`, and the peak RSS."""
    import scipy.ndimage as ndi
    rng = np.random.default_rng(7)
    dt = np.dtype(dtype)
    x = rng.integers(0, np.iinfo(dt).max, size=(size, size), endpoint=True, dtype=dt)
    x[: size // 4] = x[0, 0]  # a flat band, as images have
    w = rng.uniform(0.1, 1.0, (5, 5))
    w /= w.sum()
    if library == "halo":
        import halo as m
    elif library == "scipy":
        m = ndi
    if library in ("halo", "scipy"):
        f = {"gaussian": lambda: m.gaussian_filter(x, 2, mode="nearest"),
             "uniform5": lambda: m.uniform_filter(x, 5, mode="nearest"),
             "dense5": lambda: m.correlate(x, w, mode="nearest"),
             "sobel": lambda: m.sobel(x, axis=1, mode="nearest")}[call]
    else:
        import cv2
        cv2.setNumThreads(int(os.environ.get("OMP_NUM_THREADS", "0")))
        b = cv2.BORDER_REPLICATE
        f = {"gaussian": lambda: cv2.GaussianBlur(x, (17, 17), 2, borderType=b),
             "uniform5": lambda: cv2.blur(x, (5, 5), borderType=b),
             "dense5": lambda: cv2.filter2D(x, -1, w.astype(np.float32), borderType=b),
             "sobel": lambda: cv2.Sobel(x, -1, 1, 0, borderType=b)}[call]
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append((time.perf_counter() - t) * 1e3)
    same = None
    if library == "halo":
        ref = {"gaussian": lambda: ndi.gaussian_filter(x, 2, mode="nearest"),
               "uniform5": lambda: ndi.uniform_filter(x, 5, mode="nearest"),
               "dense5": lambda: ndi.correlate(x, w, mode="nearest"),
               "sobel": lambda: ndi.sobel(x, axis=1, mode="nearest")}[call]
        crop = slice(0, min(size, 512))
        same = bool(np.array_equal(out[crop], ref()[crop]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"ms": float(np.median(ts)), "peak": peak, "array": x.nbytes, "same": same}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        size, dtype, call, reps, library = args.child
        return one(int(size), dtype, call, int(reps), library)
    try:
        import cv2  # noqa: F401
        libraries = ["halo", "scipy", "opencv"]
    except ImportError:
        libraries = ["halo", "scipy"]
    print(f"{args.size}x{args.size}, medians of {args.reps}; peak RSS over the input's bytes")
    print(f"{'dtype':7s} {'call':9s} {'thr':>3s} " +
          " ".join(f"{lib + ' ms':>10s}" for lib in libraries) +
          f" {'halo/SciPy':>10s} {'halo peak':>9s}  SciPy's integers")
    for dtype in ("uint8", "uint16"):
        for call in CALLS:
            for threads in [int(t) for t in args.threads.split(",")]:
                row = {}
                for lib in libraries:
                    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                    out = subprocess.run([sys.executable, __file__, "--child", str(args.size),
                                          dtype, call, str(args.reps), lib],
                                         capture_output=True, text=True, env=env)
                    row[lib] = json.loads(out.stdout) if out.returncode == 0 else None
                ms = [f"{row[lib]['ms']:10.1f}" if row[lib] else f"{'error':>10s}"
                      for lib in libraries]
                h, s = row.get("halo"), row.get("scipy")
                ratio = f"{s['ms'] / h['ms']:9.1f}x" if h and s else f"{'':>10s}"
                peak = f"{h['peak'] / h['array']:8.1f}x" if h else f"{'':>9s}"
                print(f"{dtype:7s} {call:9s} {threads:3d} " + " ".join(ms) +
                      f" {ratio} {peak}  {h['same'] if h else ''}")


if __name__ == "__main__":
    main()
