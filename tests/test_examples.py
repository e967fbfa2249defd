"""Every gallery example runs, in its fast mode (SKALGOS_EXAMPLES_QUICK=1)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").rglob("plot_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_runs(path, tmp_path):
    if path.parent.name == "torch":
        pytest.importorskip("torch")
    env = dict(os.environ, SKALGOS_EXAMPLES_QUICK="1", MPLBACKEND="Agg")
    res = subprocess.run(
        [sys.executable, str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
