#!/usr/bin/env python3
"""Writes tests/data/scipy_modes.json: small inputs and filters with what scipy.ndimage.correlate
and convolve return for them, under every boundary mode, cval and origin, including filters wider
than the array and 1-element axes. SciPy takes one mode for all axes; the cases with one mode per
axis (a halo addition) pad each axis with numpy.pad as its mode says and correlate the padded
array, a route checked against SciPy itself on every single-mode case. The test ScipyModes.* checks halo's reference (and every
strategy that accepts a case) against these outputs.

Run with Debian's python3-scipy (SciPy 1.10): tests/data/make_scipy_modes.py
"""
import json
import os

import numpy as np
import scipy
import scipy.ndimage as nd

rng = np.random.default_rng(20261125)
MODES = ["constant", "nearest", "reflect", "mirror", "wrap"]
cases = []


NUMPY_PAD = {"nearest": "edge", "reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}


def per_axis(a, w, modes, cval, origin, op):
    """SciPy's correlate/convolve takes one mode; with one per axis, pad each axis as its mode
    says (numpy.pad; far enough for any tap) and run SciPy on the padded array, then cut."""
    f = nd.correlate if op == "correlate" else nd.convolve
    pad = [w.shape[i] + abs(origin[i]) + 1 for i in range(a.ndim)]
    p = a
    for i, m in enumerate(modes):
        widths = [(0, 0)] * a.ndim
        widths[i] = (pad[i], pad[i])
        if m == "constant":
            p = np.pad(p, widths, mode="constant", constant_values=cval)
        elif a.shape[i] == 1 and m == "mirror":
            p = np.pad(p, widths, mode="edge")  # numpy's reflect of one element
        else:
            p = np.pad(p, widths, mode=NUMPY_PAD[m])
    out = f(p, w, mode="constant", cval=cval, origin=origin)
    return out[tuple(slice(pad[i], pad[i] + a.shape[i]) for i in range(a.ndim))]


def add(shape, fshape, modes, cval, origin, op):
    a = rng.uniform(-1, 1, shape)
    w = rng.uniform(-1, 1, fshape)
    f = nd.correlate if op == "correlate" else nd.convolve
    out = per_axis(a, w, modes, cval, origin, op)
    nd_differs = False
    if len(set(modes)) == 1:
        nd_out = f(a, w, mode=modes[0], cval=cval, origin=origin)
        # The padding route agrees with SciPy's N-D correlate except for 'reflect' with taps more
        # than about one reflection beyond the edge, where the N-D path (NI_InitFilterOffsets)
        # departs from SciPy's own correlate1d and numpy.pad('symmetric'), which repeat the
        # reflection; halo repeats it (docs/MODES.md). Those cases are marked.
        if not np.allclose(out, nd_out, rtol=0, atol=1e-12):
            assert modes[0] == "reflect", (shape, fshape, modes, origin, op)
            if a.ndim == 1:
                c1 = nd.correlate1d if op == "correlate" else nd.convolve1d
                assert np.allclose(out, c1(a, w, mode="reflect", origin=origin[0]), atol=1e-12)
            nd_differs = True
    cases.append({"nd_differs": nd_differs, "shape": list(shape), "input": a.ravel().tolist(),
                  "filter_shape": list(fshape), "weights": w.ravel().tolist(),
                  "mode": modes, "cval": cval, "origin": list(origin), "op": op,
                  "expected": out.ravel().tolist()})


# 1-D: lengths 1, 2, 5; filters up to more than twice the array; origins at both limits.
for n in (1, 2, 5):
    for k in (1, 2, 3, 4, 7, 12):
        for mode in MODES:
            for op in ("correlate", "convolve"):
                for o in sorted({0, -(k // 2), (k - 1) // 2}):
                    for cval in ((0.0, 1.5) if mode == "constant" else (0.0,)):
                        add((n,), (k,), [mode], cval, [o], op)

# 2-D: per-axis modes, even and odd filters, filters wider than an axis, 1-element axes.
pairs = [[m, m] for m in MODES] + [["reflect", "wrap"], ["mirror", "nearest"],
                                   ["constant", "reflect"], ["wrap", "constant"]]
for shape in ((3, 4), (1, 5), (6, 2)):
    for fshape in ((3, 3), (2, 5), (7, 1), (4, 4)):
        for modes in pairs:
            for op in ("correlate", "convolve"):
                origin = (0, 0) if op == "correlate" else (-(fshape[0] // 2), (fshape[1] - 1) // 2)
                add(shape, fshape, modes, -0.75 if "constant" in modes else 0.0, origin, op)

# 3-D: a few, every mode once.
for mode in MODES:
    add((3, 2, 4), (3, 4, 2), [mode] * 3, 0.5 if mode == "constant" else 0.0, (1, 0, -1),
        "correlate")

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scipy_modes.json")
with open(path, "w") as f:
    json.dump({"scipy": scipy.__version__, "numpy": np.__version__, "cases": cases}, f)
differs = sum(c["nd_differs"] for c in cases)
print(f"wrote {path}: {len(cases)} cases ({differs} where SciPy's N-D reflect departs), "
      f"SciPy {scipy.__version__}")
