#!/usr/bin/env python3
"""The table of an A/B run (bench/run-ab, bench/run-ab-cpu): for each problem and strategy, the
least of the base build's medians and of the new build's (ms) from DIR/<suite-mode>-<base|new>-<round>.json,
and new / base."""
import collections
import glob
import json
import os
import sys

out = sys.argv[1]
rows = collections.OrderedDict()
for f in sorted(glob.glob(os.path.join(out, "*-*-*-[0-9]*.json"))):
    suite_mode, which, _ = os.path.basename(f)[:-5].rsplit("-", 2)
    try:
        data = json.load(open(f))
    except Exception:
        continue
    for r in data.get("rows", []):
        if r.get("median_ms") is None:
            continue
        key = (suite_mode, r.get("problem", "?"), r.get("strategy", "?"))
        rows.setdefault(key, {"base": [], "new": []})[which].append(r["median_ms"])
print(f"{'suite-mode':20} {'problem':40} {'strategy':14} {'base':>8} {'new':>8} {'ratio':>6}")
for (sm, prob, st), v in rows.items():
    if v["base"] and v["new"]:
        b, n = min(v["base"]), min(v["new"])
        print(f"{sm:20} {prob[:40]:40} {st[:14]:14} {b:8.3f} {n:8.3f} {n / b:6.3f}")
