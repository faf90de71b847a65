#!/usr/bin/python3
"""SciPy's side of bench/cpu_realworld: scipy.ndimage on the realworld problems.

The problems of cpu_realworld (float32, uniform random values in [-1, 1]): gaussian_filter
(truncate 4), uniform_filter, correlate for the dense 31x31 and gaussian_laplace for the LoG;
1-D gaussian_filter1d and uniform_filter1d. Output into a preallocated array. SciPy's ndimage runs on one thread. Median
of --reps runs (3 by default; the dense 31x31 once: it takes minutes) after a warm-up on a crop.

Prints one line "name milliseconds" per problem on stdout (the --scipy input of cpu_realworld),
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
    ap.add_argument("--mode", default="zero", choices=["zero", "reflect"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=int, default=1, help="divide every extent by this")
    ap.add_argument("--skip-dense", action="store_true", help="leave out the dense 31x31")
    ap.add_argument("--only", default="", help="comma-separated problem names: only these")
    a = ap.parse_args()
    mode = "constant" if a.mode == "zero" else "reflect"
    rng = np.random.default_rng(12345)
    n2, n1, n3 = 4096 // a.scale, (1 << 24) // a.scale, 256 // a.scale

    def arr(shape):
        return rng.uniform(-1.0, 1.0, shape).astype(np.float32)

    dense = rng.uniform(-1.0, 1.0, (31, 31)).astype(np.float32)
    problems = []
    for s in (1, 2, 4, 8):
        problems.append((f"2d-gauss-{s}", (n2, n2),
                         lambda x, o, s=s: ndi.gaussian_filter(x, s, output=o, mode=mode)))
    problems.append(("2d-box-31", (n2, n2),
                     lambda x, o: ndi.uniform_filter(x, 31, output=o, mode=mode)))
    if not a.skip_dense:
        problems.append(("2d-dense-31", (n2, n2),
                         lambda x, o: ndi.correlate(x, dense, output=o, mode=mode)))
    problems.append(("2d-log-4", (n2, n2),
                     lambda x, o: ndi.gaussian_laplace(x, 4, output=o, mode=mode)))
    problems.append(("1d-gauss-16", (n1,),
                     lambda x, o: ndi.gaussian_filter1d(x, 16, output=o, mode=mode)))
    problems.append(("1d-box-255", (n1,),
                     lambda x, o: ndi.uniform_filter1d(x, 255, output=o, mode=mode)))
    for s in (1, 2):
        problems.append((f"3d-gauss-{s}", (n3, n3, n3),
                         lambda x, o, s=s: ndi.gaussian_filter(x, s, output=o, mode=mode)))
    problems.append(("3d-box-9", (n3, n3, n3),
                     lambda x, o: ndi.uniform_filter(x, 9, output=o, mode=mode)))

    print(f"SciPy {scipy.__version__}, NumPy {np.__version__}: mode {mode}, median of {a.reps}",
          file=sys.stderr)
    for name, shape, f in problems:
        if a.only and name not in a.only.split(","):
            continue
        x = arr(shape)
        out = np.zeros_like(x)  # touch the pages before timing
        crop = tuple(slice(0, min(64, e)) for e in shape)
        f(x[crop].copy(), np.empty_like(x[crop]))  # warm-up
        reps = 1 if name == "2d-dense-31" else a.reps
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f(x, out)
            times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        print(f"  {name}: {ms:.0f} ms (runs: {', '.join(f'{t:.0f}' for t in times)})",
              file=sys.stderr)
        print(f"{name} {ms:.1f}", flush=True)


if __name__ == "__main__":
    main()
