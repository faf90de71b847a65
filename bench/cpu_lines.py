"""cpu_lines' times by taps, axis and sum type: the figures behind its cost model
(profile::Cpu::lines_*, src/core/profile.cpp). Each configuration is a correlate1d of a random
4096x4096 image (no flat region) in its own process at the given OpenMP thread count, the least
of the medians of --runs processes; weights normalised Gaussians (float sums: float32 for uint8,
float64 for uint16) or integers (int16 sums). Prints ns per output and the least-squares fit of
output + taps x tap per sum type.

    OMP_NUM_THREADS=1 python3 bench/cpu_lines.py [--size 4096] [--reps 10] [--runs 2]"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

TAPS = [3, 9, 17, 33]


def weights(kind, k):
    x = np.arange(k) - (k - 1) / 2
    if kind == "float":
        w = np.exp(-x * x / 8)
        return w / w.sum()
    return (np.arange(k) % 3 - 1).astype(np.float64)  # integers: int16 sums


def child(size, dtype, kind, k, axis, reps):
    import halo
    rng = np.random.default_rng(7)
    dt = np.dtype(dtype)
    x = rng.integers(0, np.iinfo(dt).max, size=(size, size), endpoint=True, dtype=dt)
    w = weights(kind, k)
    out = np.empty_like(x)
    f = lambda: halo.correlate1d(x, w, axis=axis, output=out, mode="nearest")  # noqa: E731
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"ms": float(np.median(ts))}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        size, dtype, kind, k, axis, reps = args.child
        return child(int(size), dtype, kind, int(k), int(axis), int(reps))
    n = args.size * args.size
    print(f"{args.size}x{args.size}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"least of {args.runs} medians of {args.reps}")
    for dtype, kind, sums in [("uint8", "float", "float32"), ("uint16", "float", "float64"),
                              ("uint8", "int", "int16"), ("uint16", "int", "int16")]:
        ks, ns = [], []
        for k in TAPS:
            for axis in (0, 1):
                best = float("inf")
                for _ in range(args.runs):
                    out = subprocess.run([sys.executable, __file__, "--child", str(args.size),
                                          dtype, kind, str(k), str(axis), str(args.reps)],
                                         capture_output=True, text=True, check=True)
                    best = min(best, json.loads(out.stdout)["ms"])
                ks.append(k)
                ns.append(best * 1e6 / n)
                print(f"{dtype:7s} {sums:8s} k={k:2d} axis {axis}: {best:7.2f} ms "
                      f"{ns[-1]:.3f} ns an output")
        tap, output = np.polyfit(ks, ns, 1)
        print(f"{dtype:7s} {sums:8s} fit: output {output:.3f} ns + {tap:.4f} ns a tap")


if __name__ == "__main__":
    main()
