"""The tour: each family's estimator against the tool people use today.

``python -m skalgos`` imports every family's ``_tour`` module, runs the entries
they register on bundled or generated data, and prints one table. A family
registers its entry next to its code, in ``skalgos/<family>/_tour.py``::

    from skalgos._tour import TourResult, register

    @register(name="DiverseNearestNeighbors", task="diverse 10-NN",
              data="digits, color = digit", baseline="NearestNeighbors + filter",
              metric="diverse recall@10")
    def _entry(quick, random_state):
        ...
        return TourResult(score=..., baseline_score=..., fit_time=...,
                          baseline_fit_time=..., plot=draw)   # draw(ax) optional

Options: ``--only NAME`` (repeatable), ``--list``, ``--plots DIR`` (one PNG per
entry that returns a ``plot`` callable), ``--quick`` (smaller data, used by the
test suite), ``--random-state N``.
"""

import argparse
import importlib
import sys
import time
import traceback
from dataclasses import dataclass, field

FAMILIES = (
    "completion",
    "kernel_ridge",
    "transport",
    "tree",
    "cluster",
    "neighbors",
    "graph",
    "online",
    "federated",
    "metrics",
    "torch",
)


@dataclass
class TourResult:
    """What an entry reports. ``higher_is_better`` says how to read the scores."""

    score: float
    baseline_score: float
    fit_time: float
    baseline_fit_time: float = float("nan")
    higher_is_better: bool = True
    verdict: str | None = None
    plot: object = None
    notes: str = ""


@dataclass
class TourEntry:
    name: str
    task: str
    data: str
    baseline: str
    metric: str
    run: object = field(repr=False)
    family: str = ""


_REGISTRY = {}


def register(*, name, task, data, baseline, metric):
    """Decorator that registers a tour entry function ``f(quick, random_state)``."""

    def decorate(func):
        family = func.__module__.split(".")[1] if "." in func.__module__ else ""
        if name in _REGISTRY and _REGISTRY[name].run is not func:
            raise ValueError(f"A tour entry named {name!r} is already registered.")
        _REGISTRY[name] = TourEntry(name, task, data, baseline, metric, func, family)
        return func

    return decorate


def discover(families=FAMILIES):
    """Import each family's ``_tour`` module; return ``{family: reason}`` skipped."""
    skipped = {}
    for fam in families:
        try:
            importlib.import_module(f"skalgos.{fam}._tour")
        except ModuleNotFoundError as exc:
            if exc.name == f"skalgos.{fam}._tour":
                continue  # the family registers no entry (yet)
            skipped[fam] = f"needs {exc.name} (optional extra)"
        except ImportError as exc:
            skipped[fam] = str(exc).split(".")[0]
    return skipped


def entries():
    """The registered entries, sorted by family then name."""
    return sorted(_REGISTRY.values(), key=lambda e: (e.family, e.name))


def _verdict(res):
    if res.verdict:
        return res.verdict
    s, b = res.score, res.baseline_score
    if s != s or b != b:  # NaN
        return "n/a"
    tol = 0.01 * max(abs(s), abs(b), 1e-12)
    if abs(s - b) <= tol:
        return "on par"
    better = s > b if res.higher_is_better else s < b
    return "better" if better else "worse"


def _fmt(x):
    if isinstance(x, str):
        return x
    if x != x:
        return "-"
    return f"{x:.4g}"


def format_table(rows):
    """Plain-text table of ``rows`` (a list of equal-length lists of str)."""
    header = [
        "estimator",
        "task",
        "data",
        "metric",
        "score",
        "baseline",
        "baseline score",
        "fit s",
        "baseline s",
        "verdict",
    ]
    table = [header] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for k, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(only=None, quick=False, random_state=0, plots=None):
    """Run the entries; progress goes to stderr. Return ``(rows, failures)``."""
    err = sys.stderr
    todo = [e for e in entries() if not only or e.name in only]
    unknown = set(only or ()) - {e.name for e in entries()}
    if unknown:
        raise ValueError(
            f"Unknown tour entries {sorted(unknown)}; see `python -m skalgos --list`."
        )
    rows, failures = [], []
    for i, entry in enumerate(todo, 1):
        print(
            f"[{i}/{len(todo)}] {entry.name}: {entry.task} on {entry.data} ...",
            file=err,
            flush=True,
        )
        t0 = time.perf_counter()
        try:
            res = entry.run(quick=quick, random_state=random_state)
        except Exception:
            failures.append(entry.name)
            traceback.print_exc(file=err)
            rows.append(
                [
                    entry.name,
                    entry.task,
                    entry.data,
                    entry.metric,
                    "error",
                    entry.baseline,
                    "-",
                    "-",
                    "-",
                    "failed",
                ]
            )
            continue
        print(f"      done in {time.perf_counter() - t0:.1f} s", file=err, flush=True)
        rows.append(
            [
                entry.name,
                entry.task,
                entry.data,
                entry.metric,
                _fmt(res.score),
                entry.baseline,
                _fmt(res.baseline_score),
                _fmt(res.fit_time),
                _fmt(res.baseline_fit_time),
                _verdict(res),
            ]
        )
        if plots and res.plot is not None:
            _save_plot(entry, res, plots, err)
    return rows, failures


def _save_plot(entry, res, directory, err):
    from pathlib import Path

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("      --plots needs matplotlib: pip install matplotlib", file=err)
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    res.plot(ax)
    ax.set_title(f"{entry.name}: {entry.task}")
    fig.tight_layout()
    path = Path(directory) / f"{entry.name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"      plot saved to {path}", file=err, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m skalgos",
        description="Run each skalgos estimator against its usual counterpart.",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this entry (repeatable)",
    )
    parser.add_argument("--list", action="store_true", help="list the entries")
    parser.add_argument("--plots", metavar="DIR", help="save a figure per entry")
    parser.add_argument("--quick", action="store_true", help="smaller data")
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)

    skipped = discover()
    for fam, why in skipped.items():
        print(f"skipping skalgos.{fam}: {why}", file=sys.stderr)
    if not entries():
        print("No tour entries are registered yet.")
        return 0
    if args.list:
        for e in entries():
            print(f"{e.name:32s} {e.family:13s} {e.task} ({e.data}) vs {e.baseline}")
        return 0
    try:
        rows, failures = run(args.only, args.quick, args.random_state, args.plots)
    except ValueError as exc:
        parser.error(str(exc))
    print(format_table(rows))
    if failures:
        print(
            f"\n{len(failures)} entries failed: {', '.join(failures)}", file=sys.stderr
        )
        return 1
    return 0
