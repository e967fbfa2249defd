"""First run on a fresh machine: the tour cold (empty Numba cache) and warm.

Full mode follows a new user: a fresh clone of this repository, a fresh virtual
environment, the README's install command (``pip install -e .``, no extras),
then ``python -m skalgos --list``, the default tour with an empty Numba cache
(every kernel compiles), and the same tour again (every kernel loads from the
cache). ``--quick`` (for CI) times the quick tour of two families in the
current environment, cold then warm, with the Numba cache sent to an empty
temporary directory.

Goals (issue 20, 2 cores): cold tour <= 150 s, warm <= 60 s, ``--list`` <= 5 s.
"""

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import parse_args, report  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUICK_FAMILIES = ["tree", "graph"]


def timed(cmd, env, cwd):
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if res.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stderr[-3000:]}")
    return elapsed, res


def entry_times(stderr):
    """``{entry: seconds}`` from the tour's progress lines."""
    names = re.findall(r"^\[\d+/\d+\] (\w+):", stderr, flags=re.M)
    times = [float(t) for t in re.findall(r"done in ([\d.]+) s", stderr)]
    return dict(zip(names, times))


def compile_lines(stderr):
    return [line for line in stderr.splitlines() if "compiling the" in line]


def fresh_install(workdir):
    """Clone, make a venv, run the README's install; return (python, clone)."""
    clone = workdir / "skalgos"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "-e", "."], cwd=clone, check=True
    )
    return python, clone, time.perf_counter() - start


def main():
    args = parse_args("first_run", __doc__.splitlines()[0])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        if args.quick:
            python, cwd, install = sys.executable, ROOT, float("nan")
            env["NUMBA_CACHE_DIR"] = str(tmp / "numba-cache")
            tour = [python, "-m", "skalgos", "--quick"]
            for fam in QUICK_FAMILIES:
                tour += ["--only", fam]
        else:
            python, cwd, install = fresh_install(tmp)
            tour = [python, "-m", "skalgos"]
        t_list, _ = timed([python, "-m", "skalgos", "--list"], env, cwd)
        t_cold, cold = timed(tour, env, cwd)
        t_warm, warm = timed(tour, env, cwd)
    cold_entries, warm_entries = entry_times(cold.stderr), entry_times(warm.stderr)
    rows = [
        [name, cold_entries[name], warm_entries.get(name, float("nan"))]
        for name in cold_entries
    ]
    summary = [
        ["pip install -e . (fresh venv)", install, "-", "-"],
        ["python -m skalgos --list", t_list, 5.0, t_list / 5.0],
        ["tour, empty Numba cache (cold)", t_cold, 150.0, t_cold / 150.0],
        ["tour again (warm)", t_warm, 60.0, t_warm / 60.0],
        ["cold / warm", t_cold / t_warm, "-", "-"],
    ]
    notes = [
        "Compile announcements in the cold run (one per family, none warm): "
        f"{len(compile_lines(cold.stderr))} cold, {len(compile_lines(warm.stderr))} "
        "warm.",
    ]
    report(
        args,
        "First run: the tour with a cold and a warm Numba cache",
        [
            (
                "Wall time (s) against the goal (ratio = time / goal; <= 1 meets it)",
                ["step", "seconds", "goal s", "ratio"],
                summary,
            ),
            (
                "Per entry (s), from the tour's progress lines",
                ["entry", "cold", "warm"],
                rows,
            ),
        ],
        notes=notes,
    )
    if len(compile_lines(warm.stderr)):
        sys.exit("the warm run compiled again: the Numba cache did not hit")


if __name__ == "__main__":
    main()
