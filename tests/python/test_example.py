"""examples/edges.py runs and writes its figure (skipped without matplotlib)."""
import os
import subprocess
import sys

import numpy as np
import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "edges.py")


def test_edges_example(tmp_path):
    pytest.importorskip("matplotlib")
    image = tmp_path / "image.npy"
    np.save(image, np.random.default_rng().uniform(0, 1, (64, 80)).astype(np.float32))
    out = tmp_path / "edges.png"
    r = subprocess.run([sys.executable, EXAMPLE, "--image", str(image), "-o", str(out)],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
