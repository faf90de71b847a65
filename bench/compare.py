#!/usr/bin/env python3
"""Side-by-side comparison, in one run on one GPU, of halo against the libraries people use:
PyTorch F.conv1d/2d/3d (cuDNN, fp32 with TF32 off, cudnn.benchmark=True), CuPy
cupyx.scipy.ndimage.correlate, CuPy cupyx.scipy.signal.fftconvolve and NVIDIA NPP
nppiFilterBorder_32f_C1R_Ctx (2-D). halo's figures come from `halo bench --format json` in the
same run. Every time is the median of --reps runs after warm-up, timed with CUDA events, on
random data. Prints one table: problem x library, halo's best strategy and the ratio to the best
other library; --json writes every figure.

Usage: python3 bench/compare.py --halo build/tools/halo/halo [--npp build/npp_filter]
       [--suites radii,1d,3d] [--reps 10] [--json out.json]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys

SUITES = {
    "radii": [(2, (16384, 16384), r) for r in (1, 2, 3, 4, 5, 7, 15)],
    "1d": [(1, (1 << 28,), r) for r in (4, 16, 64)],
    "3d": [(3, (640, 640, 640), r) for r in (1, 2, 3)],
}


def label(rank, shape, r):
    return f"{rank}D {'x'.join(map(str, shape))} r={r}"


def time_cuda(fn, reps, warmup=3):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def bench_torch(rank, shape, r, reps):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    x = torch.rand((1, 1) + shape, device="cuda") * 2 - 1
    w = torch.rand((1, 1) + (2 * r + 1,) * rank, device="cuda") * 2 - 1
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    with torch.no_grad():
        t = time_cuda(lambda: conv(x, w, padding=r), reps)
    del x, w
    torch.cuda.empty_cache()
    return t


def bench_cupy(rank, shape, r, reps, fft):
    import cupy as cp
    import cupyx.scipy.ndimage as ndi
    import cupyx.scipy.signal as sig
    import torch
    x = cp.random.uniform(-1, 1, shape, dtype=cp.float32)
    w = cp.random.uniform(-1, 1, (2 * r + 1,) * rank, dtype=cp.float32)
    if fft:
        fn = lambda: sig.fftconvolve(x, w, mode="same")
    else:
        fn = lambda: ndi.correlate(x, w, mode="constant")
    # CuPy runs on the current stream; torch's events on the same default stream time it.
    t = time_cuda(fn, reps)
    del x, w
    cp.get_default_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()
    return t


def bench_npp(npp, shape, r, reps):
    out = subprocess.run([npp, str(shape[0]), str(shape[1]), str(r), str(reps)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[4])


def halo_rows(halo, suite, reps):
    out = subprocess.run([halo, "bench", "--suite", suite, "--backend", "cuda", "--format",
                          "json", "--reps", str(reps)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"halo bench failed:\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--halo", required=True)
    ap.add_argument("--npp", default="")
    ap.add_argument("--suites", default="radii,1d,3d")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default="")
    ap.add_argument("--halo-json", default="",
                    help="use this `halo bench --json` file (same run) instead of running halo")
    ap.add_argument("--no-fft-3d", action="store_true", help="skip CuPy FFT on 3-D problems")
    args = ap.parse_args()

    results = {"problems": [], "ceilings": None}
    pre = json.load(open(args.halo_json)) if args.halo_json else None
    for suite in args.suites.split(","):
        doc = pre if pre else halo_rows(args.halo, suite, args.reps)
        results["ceilings"] = doc["ceilings"]
        for rank, shape, r in SUITES[suite]:
            name = label(rank, shape, r)
            rows = [x for x in doc["rows"] if x["problem"] == name and "median_ms" in x
                    and x["backend"] == "cuda"]
            best = min(rows, key=lambda x: x["median_ms"]) if rows else None
            entry = {"suite": suite, "problem": name,
                     "halo": {x["strategy"]: x["median_ms"] for x in rows},
                     "halo_best": best["strategy"] if best else None,
                     "halo_best_ms": best["median_ms"] if best else None,
                     "floor_ms": best["floor_ms"] if best else None, "others": {}}
            o = entry["others"]
            o["cuDNN"] = bench_torch(rank, shape, r, args.reps)
            o["CuPy ndimage"] = bench_cupy(rank, shape, r, args.reps, fft=False)
            if rank < 3 or not args.no_fft_3d:
                o["CuPy FFT"] = bench_cupy(rank, shape, r, args.reps, fft=True)
            if rank == 2 and args.npp:
                o["NPP"] = bench_npp(args.npp, shape, r, args.reps)
            results["problems"].append(entry)
            print(f"  {name}: halo {entry['halo_best_ms']} ms; " +
                  ", ".join(f"{k} {v:.3f}" for k, v in o.items()), file=sys.stderr, flush=True)

    libs = ["NPP", "cuDNN", "CuPy ndimage", "CuPy FFT"]
    print(f"{'problem':<24} {'floor':>7} {'halo best':>26} " +
          " ".join(f"{l:>12}" for l in libs) + f" {'best other':>16} {'ratio':>6}")
    for e in results["problems"]:
        others = {k: v for k, v in e["others"].items()}
        bo = min(others, key=others.get)
        hb = e["halo_best_ms"]
        cells = " ".join(f"{others[l]:12.3f}" if l in others else f"{'-':>12}" for l in libs)
        halo_cell = f"{hb:.3f} ({e['halo_best']})" if hb else "-"
        ratio = f"{others[bo] / hb:6.2f}" if hb else "-"
        print(f"{e['problem']:<24} {e['floor_ms']:7.3f} {halo_cell:>26} {cells} "
              f"{bo + ' ' + format(others[bo], '.3f'):>16} {ratio}")
    print("times: median ms; ratio = best other library / halo best (> 1: halo is faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
