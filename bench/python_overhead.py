#!/usr/bin/env python3
"""Call overhead of halo's Python module: the wall time of one call on a tiny array, where the
filtering itself costs next to nothing, beside scipy.ndimage (NumPy arrays) and
cupyx.scipy.ndimage (CuPy arrays, when CuPy and a GPU are there).

Each figure is the median, over --rounds rounds, of a round's wall time divided by its --calls
calls (after one warm-up round). GPU calls are queued back to back and the round ends with a
synchronisation, so a figure is the host's cost of a call as long as the GPU keeps up.

Usage: PYTHONPATH=build/python python3 bench/python_overhead.py [--calls 2000] [--rounds 7]
"""
import argparse
import statistics
import time

import numpy as np


def per_call_us(fn, calls, rounds, sync=None):
    def one_round():
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        return (time.perf_counter() - t0) / calls * 1e6

    one_round()
    return statistics.median(one_round() for _ in range(rounds))


def cases(xp_ndi, x, w):
    return [
        ("gaussian_filter(x, 1)", lambda: xp_ndi.gaussian_filter(x, 1.0)),
        ("uniform_filter(x, 3)", lambda: xp_ndi.uniform_filter(x, 3)),
        ("correlate(x, w3x3)", lambda: xp_ndi.correlate(x, w)),
        ("gaussian_filter1d(x, 1)", lambda: xp_ndi.gaussian_filter1d(x, 1.0)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--size", type=int, default=8, help="the array is size x size float32")
    args = ap.parse_args()
    import halo
    import scipy.ndimage as sndi

    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (args.size, args.size)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3))
    rows = []
    for (name, h), (_, s) in zip(cases(halo, x, w), cases(sndi, x, w)):
        rows.append(("NumPy", name, per_call_us(h, args.calls, args.rounds),
                     halo.last_run()["strategy"], "scipy.ndimage",
                     per_call_us(s, args.calls, args.rounds)))
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cndi
        cp.cuda.runtime.getDeviceCount()
        xg, wg = cp.asarray(x), cp.asarray(w)
        sync = cp.cuda.get_current_stream().synchronize
        for (name, h), (_, c) in zip(cases(halo, xg, wg), cases(cndi, xg, wg)):
            rows.append(("CuPy", name, per_call_us(h, args.calls, args.rounds, sync),
                         halo.last_run()["strategy"], "cupyx.scipy.ndimage",
                         per_call_us(c, args.calls, args.rounds, sync)))
        # NumPy weights on a CuPy array: halo reads weights on the host, so these need no copy
        # (cupyx takes CuPy weights only).
        rows.append(("CuPy", "correlate(x, NumPy w3x3)",
                     per_call_us(lambda: halo.correlate(xg, w), args.calls, args.rounds, sync),
                     halo.last_run()["strategy"], "-", float("nan")))
    except Exception as e:  # noqa: BLE001 - no CuPy or no GPU: the NumPy rows stand alone
        print(f"(no CuPy rows: {type(e).__name__}: {e})")
    print(f"{args.size}x{args.size} float32, median of {args.rounds} rounds of {args.calls} "
          f"calls; microseconds per call")
    print(f"{'arrays':<6} {'call':<24} {'halo us':>8} {'strategy':>12} {'other':>20} "
          f"{'other us':>9}")
    for arrays, name, hus, strategy, other, ous in rows:
        print(f"{arrays:<6} {name:<24} {hus:8.1f} {strategy:>12} {other:>20} {ous:9.1f}")


if __name__ == "__main__":
    main()
