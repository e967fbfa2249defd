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

Options: ``--only NAME`` (repeatable; a family such as ``tree`` or an entry such
as ``BDDClassifier``), ``--list`` (read from the ``_tour.py`` sources, so no
family is imported), ``--plots DIR`` (one PNG per entry: the entry's own figure,
else its scores and times as bars), ``--quick`` (smaller data, used by the test
suite), ``--random-state N``.

The ``register(...)`` arguments must be string literals: ``--list`` reads them
without importing anything.
"""

import argparse
import ast
import importlib
import sys
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

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

# a module an entry may miss -> the extra that installs it
_EXTRAS = {"torch": "torch", "flwr": "flower", "ray": "flower", "matplotlib": "plot"}

WIDTH = 120  # the printed table and its notes fit this many columns


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


def static_entries(families=FAMILIES):
    """The entries declared in each family's ``_tour.py``, without importing it.

    Reads the ``@register(...)`` decorators' keyword arguments from the source
    with :mod:`ast`, so ``--list`` and the checks of ``--only`` cost
    milliseconds and need no optional extra.

    Returns
    -------
    entries : list of TourEntry
        With ``run=None``, sorted by family then name.
    """
    root = Path(__file__).parent
    found = []
    for fam in families:
        path = root / fam / "_tour.py"
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if not (
                    isinstance(dec, ast.Call)
                    and getattr(dec.func, "id", getattr(dec.func, "attr", None))
                    == "register"
                ):
                    continue
                kw = {k.arg: ast.literal_eval(k.value) for k in dec.keywords}
                found.append(TourEntry(run=None, family=fam, **kw))
    return sorted(found, key=lambda e: (e.family, e.name))


def _missing_module(exc):
    """The top-level module whose absence caused ``exc``, or None."""
    while exc is not None:
        name = getattr(exc, "name", None)
        if isinstance(exc, ModuleNotFoundError) and name:
            return name.split(".")[0]
        exc = exc.__cause__ or exc.__context__
    return None


def discover(families=FAMILIES):
    """Import each family's ``_tour`` module; return ``{family: reason}`` skipped.

    The reason of a family whose optional extra is missing says what to
    install, e.g. ``torch is not installed; pip install "skalgos[torch]"``.
    """
    skipped = {}
    for fam in families:
        try:
            importlib.import_module(f"skalgos.{fam}._tour")
        except ImportError as exc:
            if getattr(exc, "name", None) == f"skalgos.{fam}._tour":
                continue  # the family registers no entry (yet)
            missing = _missing_module(exc)
            if missing is None or missing == "skalgos":
                raise
            extra = _EXTRAS.get(missing)
            fix = (
                f'pip install "skalgos[{extra}]"' if extra else f"pip install {missing}"
            )
            skipped[fam] = f"{missing} is not installed; {fix}"
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


HEADER = ["#", "estimator", "score", "baseline", "fit s", "base s", "verdict"]


def _row(k, entry, res):
    if res is None:
        return [str(k), entry.name, "error", "-", "-", "-", "failed"]
    return [
        str(k),
        entry.name,
        _fmt(res.score),
        _fmt(res.baseline_score),
        _fmt(res.fit_time),
        _fmt(res.baseline_fit_time),
        _verdict(res),
    ]


def format_table(results, width=WIDTH):
    """The result table and its numbered notes, ``width`` columns at most.

    Parameters
    ----------
    results : list of (TourEntry, TourResult or None)
        ``None`` marks an entry that failed.

    Returns
    -------
    text : str
        Short columns (scores, times, verdict), then one note per entry with
        the task, data, metric and baseline that the columns refer to.
    """
    table = [HEADER] + [_row(k, e, r) for k, (e, r) in enumerate(results, 1)]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    lines = []
    for k, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    for k, (e, r) in enumerate(results, 1):
        text = (
            f"{e.name} ({e.family}): {e.task}, on {e.data}. Score: {e.metric}; "
            f"baseline: {e.baseline}."
        )
        if r is not None and r.notes:
            text += f" {r.notes}"
        lines.extend(
            textwrap.wrap(
                text, width, initial_indent=f"{k}. ", subsequent_indent=" " * 4
            )
        )
    return "\n".join(lines)


def resolve(only, known=None):
    """The entry names selected by ``only`` (family or entry names).

    Raises
    ------
    ValueError
        Naming the unknown names and listing the valid ones.
    """
    known = static_entries() if known is None else known
    if not only:
        return [e.name for e in known]
    families = {e.family for e in known}
    names = {e.name for e in known}
    unknown = [x for x in only if x not in families and x not in names]
    if unknown:
        raise ValueError(
            f"Unknown tour entries {unknown}. Valid families: "
            f"{', '.join(sorted(families))}. Valid entries: "
            f"{', '.join(sorted(names))}."
        )
    return [e.name for e in known if e.name in only or e.family in only]


def run(only=None, quick=False, random_state=0, plots=None):
    """Run the selected registered entries; progress goes to stderr.

    Returns
    -------
    results : list of (TourEntry, TourResult or None)
    failures : list of str
        The names of the entries that raised.
    """
    err = sys.stderr
    registered = entries()
    if only:
        selected = set(resolve(only, known=registered))
        registered = [e for e in registered if e.name in selected]
    results, failures = [], []
    for i, entry in enumerate(registered, 1):
        print(
            f"[{i}/{len(registered)}] {entry.name}: {entry.task} ...",
            file=err,
            flush=True,
        )
        t0 = time.perf_counter()
        try:
            res = entry.run(quick=quick, random_state=random_state)
        except Exception:
            failures.append(entry.name)
            traceback.print_exc(file=err)
            results.append((entry, None))
            continue
        print(f"      done in {time.perf_counter() - t0:.1f} s", file=err, flush=True)
        results.append((entry, res))
        if plots:
            _save_plot(entry, res, plots, err)
    return results, failures


def _default_plot(entry, res):
    """Scores and fit times side by side, for an entry without its own figure."""

    def draw(ax):
        labels = [entry.name, entry.baseline[:30]]
        scores = [res.score, res.baseline_score]
        bars = ax.bar([0, 1], scores, color=["tab:blue", "tab:gray"])
        ax.set_xticks([0, 1], labels, fontsize=8)
        ax.set_ylabel(entry.metric[:50])
        times = [res.fit_time, res.baseline_fit_time]
        for bar, t in zip(bars, times):
            if t == t:
                ax.annotate(
                    f"{t:.3g} s",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=8,
                )

    return draw


def _save_plot(entry, res, directory, err):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('      --plots needs matplotlib: pip install "skalgos[plot]"', file=err)
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    (res.plot or _default_plot(entry, res))(ax)
    ax.set_title(f"{entry.name}: {entry.task}"[:70], fontsize=10)
    fig.tight_layout()
    path = Path(directory) / f"{entry.name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _list(known):
    lines = []
    for e in known:
        text = f"{e.name} [{e.family}]: {e.task}, on {e.data}; vs {e.baseline}"
        lines.extend(textwrap.wrap(text, WIDTH, subsequent_indent=" " * 4))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m skalgos",
        description="Run each skalgos estimator against its usual counterpart.",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help="run only this family (e.g. tree) or entry (e.g. BDDClassifier); "
        "repeatable",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the entries (imports nothing)"
    )
    parser.add_argument(
        "--plots", metavar="DIR", help="write one PNG per entry into DIR"
    )
    parser.add_argument("--quick", action="store_true", help="smaller data")
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)

    known = static_entries()
    if args.list:
        print(_list(known) if known else "No tour entries are registered yet.")
        return 0
    try:
        selected = resolve(args.only, known)
    except ValueError as exc:
        parser.error(str(exc))
    families = [f for f in FAMILIES if any(e.family == f for e in known)]
    if args.only:
        families = [
            f
            for f in families
            if any(e.family == f and e.name in selected for e in known)
        ]
    skipped = discover(families)
    for fam, why in skipped.items():
        names = [e.name for e in known if e.family == fam and e.name in selected]
        print(
            f"skipping {len(names)} {fam} entries ({', '.join(names)}): {why}",
            file=sys.stderr,
        )
    runnable = [e.name for e in entries() if e.name in selected]
    if not runnable:
        print("No tour entries are registered yet." if not known else "Nothing to run.")
        return 0
    results, failures = run(runnable, args.quick, args.random_state, args.plots)
    print(format_table(results))
    if args.plots:
        n = sum(1 for _, r in results if r is not None)
        print(f"\n{n} plots written to {Path(args.plots).resolve()}", file=sys.stderr)
    if failures:
        print(
            f"\n{len(failures)} entries failed: {', '.join(failures)}", file=sys.stderr
        )
        return 1
    return 0
