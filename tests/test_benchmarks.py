"""Every benchmark runs in its --quick mode and writes the table it names."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted(
    p
    for p in (Path(__file__).parent.parent / "benchmarks").glob("*.py")
    if not p.name.startswith("_")
)

# benchmarks whose baselines are optional extras (the bench extra); without
# them the benchmark has nothing to compare with, so it is skipped
REQUIRES = {"diverse_knn": ("hnswlib", "faiss")}


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_quick(path, tmp_path):
    if "torch" in path.stem:
        pytest.importorskip("torch")
    for module in REQUIRES.get(path.stem, ()):
        pytest.importorskip(module, reason=f"pip install 'skalgos[bench]' ({module})")
    out = tmp_path / f"{path.stem}.md"
    res = subprocess.run(
        [sys.executable, str(path), "--quick", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert out.exists() and "ratio" in out.read_text().lower()
