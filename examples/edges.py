#!/usr/bin/env python3
"""Blurs and edge-detects an image with halo and writes a figure comparing the input and the
outputs (matplotlib, Agg backend).

    PYTHONPATH=build/python /usr/bin/python3 examples/edges.py [--image IMAGE.npy] [-o edges.png]
        [--sigma 2] [--backend auto|cpu|cuda]

The image is a 2-D .npy file, else SciPy's `ascent` sample where SciPy has it, else a synthetic
one (shapes and noise). With --backend cuda and CuPy installed, the image goes to the GPU as a
CuPy array and the filters run there without copies.
"""
import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import halo  # noqa: E402


def synthetic(n=512, seed=0):
    """Disks, a square and a ramp on a dark field, with noise."""
    y, x = np.mgrid[0:n, 0:n] / n
    img = 0.2 + 0.3 * x
    img[(x - 0.3) ** 2 + (y - 0.3) ** 2 < 0.02] = 0.9
    img[(x - 0.7) ** 2 + (y - 0.65) ** 2 < 0.04] = 0.6
    img[(abs(x - 0.3) < 0.12) & (abs(y - 0.75) < 0.12)] = 0.8
    return (img + np.random.default_rng(seed).normal(0, 0.08, img.shape)).astype(np.float32)


def load(path):
    if path:
        return np.load(path).astype(np.float32)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from scipy import misc

            return misc.ascent().astype(np.float32) / 255
    except Exception:  # no SciPy, or a SciPy without the bundled sample
        return synthetic()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", help="a 2-D .npy image (default: a sample)")
    ap.add_argument("-o", "--output", default="edges.png", help="the figure (default edges.png)")
    ap.add_argument("--sigma", type=float, default=2.0, help="the blur's sigma (default 2)")
    ap.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    args = ap.parse_args()

    image = load(args.image)
    data = image
    if args.backend == "cuda":
        try:
            import cupy

            data = cupy.asarray(image)  # filtered on the GPU, no copies
        except ImportError:
            pass  # NumPy arrays with backend='cuda' are copied to the GPU by the core
    t0 = time.perf_counter()
    blurred = halo.gaussian_filter(data, args.sigma, backend=args.backend)
    gx = halo.sobel(blurred, axis=1, backend=args.backend)
    gy = halo.sobel(blurred, axis=0, backend=args.backend)
    log = halo.laplace(blurred, backend=args.backend)
    run = halo.last_run()
    elapsed = time.perf_counter() - t0
    to_host = (lambda a: a.get()) if hasattr(blurred, "get") and not isinstance(
        blurred, np.ndarray) else np.asarray
    blurred, gx, gy, log = (to_host(a) for a in (blurred, gx, gy, log))
    magnitude = np.hypot(gx, gy)

    fig, axes = plt.subplots(1, 4, figsize=(16, 4.6))
    panels = [(image, "input"), (blurred, f"gaussian_filter, sigma={args.sigma:g}"),
              (magnitude, "|sobel| of the blur"), (log, "laplace of the blur")]
    for ax, (a, title) in zip(axes, panels):
        if title.startswith("laplace"):  # signed: centred on 0
            v = float(np.abs(a).max()) or 1.0
            ax.imshow(a, cmap="RdBu_r", vmin=-v, vmax=v)
        else:
            ax.imshow(a, cmap="gray")
        ax.set_title(title)
        ax.axis("off")
    fig.suptitle(f"halo {halo.__version__}: {image.shape[0]}x{image.shape[1]} float32, "
                 f"4 filters in {elapsed * 1e3:.1f} ms ({run['backend']}, last: {run['strategy']})")
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    print(f"wrote {args.output}: {run['backend']} backend, {elapsed * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
