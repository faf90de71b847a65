"""What the build and the core say (the build, the devices, the strategies, the last call's
choice), and the tuning of the core's choices for the process."""

from . import _halo


def strategies():
    """Every strategy of the core: a list of dicts with name, backend and description."""
    return _halo.strategies()


def info():
    """The build (version, CUDA, compiler, SIMD targets), the CUDA devices found (or why none),
    and the strategies, as a dict."""
    devices, why = _halo.cuda_devices()
    d = dict(_halo.build_info())
    d["cuda_devices"] = devices
    d["cuda_unavailable_because"] = why
    d["strategies"] = [s["name"] for s in _halo.strategies()]
    return d


def set_tuning(tuning=""):
    """Overrides of the core's measured choices for every later call of this process: `auto`'s
    crossovers between the CUDA strategies as `halo bench --suite crossovers` prints them for a
    GPU (e.g. "sep_radius_2d=4,box_rows_taps=66,fft_cost=106"), or the `fast` strategy's kernel
    choices; the keys are halo::FastTuning's fields. "" restores the defaults (an H100's). A
    ValueError names a bad key or value."""
    if not isinstance(tuning, str):
        raise TypeError(f"tuning must be a str of KEY=VALUE pairs, not {type(tuning).__name__}")
    _halo.set_tuning(tuning)


def load_profile(path):
    """Sets the tuning of the machine profile at `path` (what `halo bench --suite crossovers
    --profile-out FILE` measured on a machine) for every later call of this process, as
    set_tuning() does with its text; returns that text. An OSError if the file cannot be read, a
    ValueError naming the file if it is not a halo profile or its tuning is refused."""
    import json
    import os
    with open(os.fspath(path), encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except ValueError:
            raise ValueError(f"{path}: not a halo profile (not JSON; `halo bench --suite "
                             "crossovers --profile-out FILE` writes one)") from None
    if not isinstance(doc, dict) or "halo_profile" not in doc or not isinstance(doc.get("tune"), str):
        raise ValueError(f"{path}: not a halo profile (no \"halo_profile\" and \"tune\" fields)")
    if doc["halo_profile"] != 1:
        raise ValueError(f"{path}: a profile of format {doc['halo_profile']!r}; this halo reads "
                         "format 1")
    try:
        set_tuning(doc["tune"])
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return doc["tune"]


def tuning():
    """The tuning set_tuning() gave, as KEY=VALUE text ("" for the defaults)."""
    return _halo.tuning()


def last_run():
    """What the core ran for this thread's last call: a dict with strategy, backend and note (why
    it was chosen), or None before any call. A filter SciPy applies axis by axis with rounding in
    between may take several core calls; this is the last one."""
    r = _halo.last_run()
    return None if r is None else {"strategy": r[0], "backend": r[1], "note": r[2]}
