#!/usr/bin/env python3
"""Channels last against channels first: halo's Python call on the same data laid out (H, W, C),
(C, H, W) and (H, C, W), filtered over H and W only (gaussian_filter sigma (2, 2, 0),
uniform_filter size (5, 5, 1), correlate with a 5x5x1 filter; the same filters permuted for the
other layouts), on NumPy arrays (the CPU backend).

Each figure is the median over --rounds rounds of one call's wall time (time.perf_counter), the
layouts and filters interleaved within a round (after one warm-up call of each), in ms; "last/
first" is the ratio of the channels-last median to the channels-first one. --sweep instead times
channels last as the core takes them, merged with the axis before them and moved to the batch
(halo._calls' rule overridden each way), against channels first, for several channel counts and
sizes (the rule's crossovers); each figure there is the lesser of two medians.

Usage: PYTHONPATH=build/python python3 bench/channels_last.py [--size 1411] [--channels 3]
       [--rounds 9] [--sweep [--sizes 32 64 ...] [--counts 2 3 ...]]
"""
import argparse
import statistics
import time

import numpy as np


def calls(halo, x, layout, weights):
    """(name, call) of the three filters on x, whose channel axis is at `layout`'s C."""
    c = layout.index("C")
    sigma = [2.0, 2.0, 2.0]
    sigma[c] = 0.0
    size = [5, 5, 5]
    size[c] = 1
    w = np.moveaxis(weights, 2, c)
    return [("gaussian_filter", lambda: halo.gaussian_filter(x, sigma)),
            ("uniform_filter", lambda: halo.uniform_filter(x, size)),
            ("correlate", lambda: halo.correlate(x, w))]


CLOCK = time.perf_counter


def medians(fns, rounds):
    for f in fns.values():
        f()
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = CLOCK()
            f()
            times[k].append(CLOCK() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def layouts(rng, dtype, h, w, c):
    last = rng.uniform(-1, 1, (h, w, c)).astype(dtype)
    return {"HWC": last, "CHW": np.ascontiguousarray(last.transpose(2, 0, 1)),
            "HCW": np.ascontiguousarray(last.transpose(0, 2, 1))}


def table(halo, args):
    rng = np.random.default_rng(1)
    weights = rng.uniform(-1, 1, (5, 5, 1))
    print(f"{'dtype':8} {'filter':16} {'HWC ms':>8} {'CHW ms':>8} {'HCW ms':>8} {'last/first':>10}")
    for dtype in args.dtypes.split(","):
        data = layouts(rng, dtype, args.size, args.size, args.channels)
        fns = {}
        for layout, x in data.items():
            for name, fn in calls(halo, x, layout, weights):
                fns[(name, layout)] = fn
        m = medians(fns, args.rounds)
        for name in ("gaussian_filter", "uniform_filter", "correlate"):
            hwc, chw, hcw = (m[(name, lay)] for lay in ("HWC", "CHW", "HCW"))
            print(f"{dtype:8} {name:16} {hwc:8.2f} {chw:8.2f} {hcw:8.2f} {hwc / chw:10.2f}")


def sweep(halo, args):
    """Channels last as the core takes them ("as is"), merged with the axis before them
    ("merged") and moved to the batch ("moved"), halo._calls' rule overridden each way, against
    channels first, for several sizes and channel counts; each figure the lesser of two
    medians."""
    from halo import _calls

    rng = np.random.default_rng(2)
    weights = rng.uniform(-1, 1, (5, 5, 1))
    print(f"{'dtype':8} {'filter':16} {'H=W':>5} {'C':>3} {'CHW ms':>8} {'as is':>6} "
          f"{'merged':>6} {'moved':>6}  (ratios to CHW)")
    names = ("_CHANNELS_RUN", "_CHANNELS_SIZE", "_DILATED_TAPS", "_STRIPS_SIZE")
    rule = [getattr(_calls, v) for v in names]
    ways = {"as is": (0, 0, 0, 0), "merged": (1 << 30, 0, 1 << 30, 0),
            "moved": (1 << 30, 0, 0, 0)}
    try:
        for dtype in args.dtypes.split(","):
            for n in args.sizes:
                for c in args.counts:
                    data = layouts(rng, dtype, n, n, c)
                    m = {}
                    for how in list(ways) * 2:
                        for v, value in zip(names, ways[how]):
                            setattr(_calls, v, value)
                        _calls._core_plan.cache_clear()
                        halo._REPLAY.clear()  # a replay would repeat the other way's core call
                        fns = {}
                        for layout in ("HWC", "CHW"):
                            for name, fn in calls(halo, data[layout], layout, weights):
                                fns[(name, layout, how)] = fn
                        for k, v in medians(fns, args.rounds).items():
                            m.setdefault(k, []).append(v)
                    for name in ("gaussian_filter", "uniform_filter", "correlate"):
                        first = min(v for (f, lay, _), vs in m.items() if f == name
                                    and lay == "CHW" for v in vs)
                        r = [min(m[(name, "HWC", how)]) / first for how in ways]
                        print(f"{dtype:8} {name:16} {n:5} {c:3} {first:8.3f} {r[0]:6.2f} "
                              f"{r[1]:6.2f} {r[2]:6.2f}")
    finally:
        for v, value in zip(names, rule):
            setattr(_calls, v, value)
        _calls._core_plan.cache_clear()
        halo._REPLAY.clear()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1411, help="H = W")
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128, 256, 512],
                    help="--sweep: H = W")
    ap.add_argument("--counts", type=int, nargs="+", default=[2, 3, 4, 8, 16, 32],
                    help="--sweep: C")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time.process_time (the process's CPU time, all its threads) instead "
                    "of time.perf_counter: with OMP_NUM_THREADS=1, the work of a call, steady "
                    "on a machine that other processes load")
    args = ap.parse_args()
    if args.cpu_time:
        global CLOCK
        CLOCK = time.process_time
    import halo

    (sweep if args.sweep else table)(halo, args)


if __name__ == "__main__":
    main()
