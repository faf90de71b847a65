#!/usr/bin/env python3
"""Roofline plot of `halo bench --format json` output: each strategy's point (modelled arithmetic
intensity, achieved GFLOP/s) against the two measured ceilings (copy bandwidth, FMA peak).
Usage: python3 bench/roofline.py bench.json roofline.png [--backend cuda]"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("png")
    ap.add_argument("--backend", default="cuda")
    a = ap.parse_args()
    doc = json.load(open(a.json))
    c = doc["ceilings"][a.backend]
    rows = [r for r in doc["rows"] if "median_ms" in r and r["backend"] == a.backend]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = [0.05, 2000]
    ridge = c["fma_gflops"] / c["copy_gbs"]
    ax.plot([xs[0], ridge, xs[1]], [c["copy_gbs"] * xs[0], c["fma_gflops"], c["fma_gflops"]],
            "k-", lw=1.5, label=f"roofline: copy {c['copy_gbs']:.0f} GB/s, FMA "
                                 f"{c['fma_gflops'] / 1000:.1f} TFLOP/s (measured)")
    markers = "osD^v<>phX*"
    strategies = sorted({r["strategy"] for r in rows})
    for i, s in enumerate(strategies):
        pts = [r for r in rows if r["strategy"] == s]
        ax.scatter([r["model_intensity"] for r in pts], [r["gflops"] for r in pts],
                   marker=markers[i % len(markers)], s=45, label=s)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (OP/B, strategy's model)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(f"halo on {c['device']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
