#!/usr/bin/python3
"""SciPy's side of bench/cpu_compare: scipy.ndimage.correlate on the same problems.

A size x size float32 image of uniform random values in [-1, 1]; for each radius r a
(2r+1) x (2r+1) matrix of random weights (general, not separable); zero ghost cells
(mode="constant", cval=0); output into a preallocated array. SciPy's ndimage runs on one thread.
Median of --reps runs (3 by default: SciPy is slow) after one warm-up run on a 256x256 crop.

Prints one line "radius milliseconds" per radius on stdout (the --scipy input of cpu_compare),
progress on stderr. Run with Debian's /usr/bin/python3 (python3-numpy, python3-scipy).
"""
import argparse
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.ndimage as ndi


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--radii", default="1,2,4,7")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    radii = [int(r) for r in a.radii.split(",")]

    rng = np.random.default_rng(12345)
    img = rng.uniform(-1.0, 1.0, (a.size, a.size)).astype(np.float32)
    out = np.empty_like(img)
    out.fill(0.0)  # touch the pages before timing
    print(f"SciPy {scipy.__version__}, NumPy {np.__version__}: ndimage.correlate, "
          f"{a.size}x{a.size} float32, median of {a.reps}", file=sys.stderr)
    for r in radii:
        k = 2 * r + 1
        w = rng.uniform(-1.0, 1.0, (k, k)).astype(np.float32)
        ndi.correlate(img[:256, :256], w, mode="constant", cval=0.0)  # warm-up
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            ndi.correlate(img, w, output=out, mode="constant", cval=0.0)
            times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        print(f"  r={r} ({k}x{k}): {ms:.0f} ms (runs: {', '.join(f'{t:.0f}' for t in times)})",
              file=sys.stderr)
        print(f"{r} {ms:.1f}", flush=True)


if __name__ == "__main__":
    main()
