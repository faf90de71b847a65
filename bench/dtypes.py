"""halo on the GPU on 8/16-bit and half-precision images, beside what users would call instead
(CuPy's cupyx.scipy.ndimage, NVIDIA NPP's general filter on 8u/16u) and a copy of the same
bytes, in one run: CUDA events, warm-up, medians; GB/s counted in the arrays' own bytes (one
read and one write) and the fraction of the copy's rate.

    python3 bench/dtypes.py [--size 16384] [--reps 20] [--npp PATH_TO_npp_dtypes]

Each row: a dtype, a call, the median ms of halo, CuPy and NPP (where it has the call), the copy
of the same bytes, halo's GB/s and its fraction of the copy's, and the strategy halo ran. The
integer outputs of halo are checked against SciPy's on a crop (equal bit for bit)."""

import argparse
import subprocess

import numpy as np
import cupy as cp
import cupyx.scipy.ndimage as cnd
import scipy.ndimage as ndi

import halo


def timed(f, reps):
    f()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        start.record()
        f()
        end.record()
        end.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--npp", default="")
    args = ap.parse_args()
    n = args.size
    rng = np.random.default_rng()
    dense = {r: (lambda w: w / w.sum())(rng.uniform(0.1, 1.0, (2 * r + 1, 2 * r + 1)))
             for r in (1, 2, 4, 7)}
    print(f"{n}x{n}; {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'dtype':8s} {'call':22s} {'halo ms':>8s} {'CuPy ms':>8s} {'NPP ms':>8s} "
          f"{'copy ms':>8s} {'GB/s':>7s} {'of copy':>7s}  strategy")
    for dt in (np.uint8, np.uint16, np.float16, np.float32):
        dt = np.dtype(dt)
        if dt.kind == "u":
            x = cp.asarray(rng.integers(0, np.iinfo(dt).max, size=(n, n), endpoint=True, dtype=dt))
        else:
            x = cp.asarray(rng.uniform(-1, 1, size=(n, n)).astype(dt))
        y = cp.empty_like(x)
        copy = timed(lambda: y.__setitem__(Ellipsis, x), args.reps)
        calls = [("gaussian sigma=2", lambda m: m.gaussian_filter(x, 2, output=y), None),
                 ("uniform 5", lambda m: m.uniform_filter(x, 5, output=y), None),
                 ("sobel", lambda m: m.sobel(x, output=y), None)]
        for r, w in dense.items():
            wg = cp.asarray(w)
            calls.append((f"correlate {2 * r + 1}x{2 * r + 1}",
                          lambda m, w=w, wg=wg: m.correlate(x, w if m is halo else wg, output=y,
                                                            mode="nearest"), r))
        for name, f, npp_r in calls:
            try:
                th = timed(lambda: f(halo), args.reps)
                strategy = halo.last_run()["strategy"]
            except Exception as e:  # noqa: BLE001 - a row says why it has no figure
                th, strategy = float("nan"), f"error: {str(e)[:50]}"
            tc = float("nan") if dt == np.float16 else timed(lambda: f(cnd), max(3, args.reps // 4))
            tn = float("nan")
            if args.npp and npp_r is not None and dt.kind == "u":
                out = subprocess.run([args.npp, "8u" if dt.itemsize == 1 else "16u", str(n), str(n),
                                      str(npp_r), str(args.reps)], capture_output=True, text=True)
                if out.returncode == 0:
                    tn = float(out.stdout.split()[-2])
            gbs = 2 * x.nbytes / th / 1e6
            print(f"{dt.name:8s} {name:22s} {th:8.3f} {tc:8.3f} {tn:8.3f} {copy:8.3f} {gbs:7.0f} "
                  f"{copy / th:7.0%}  {strategy}")
        if dt.kind == "u":  # integer results against SciPy on a crop
            c = cp.asnumpy(x[:300, :400])
            for name, f in (("gaussian", lambda m, a: m.gaussian_filter(a, 2)),
                            ("correlate", lambda m, a: m.correlate(a, dense[2], mode="nearest"))):
                got = cp.asnumpy(f(halo, cp.asarray(c)))
                assert np.array_equal(got, f(ndi, c)), f"{dt} {name} differs from SciPy"


if __name__ == "__main__":
    main()
