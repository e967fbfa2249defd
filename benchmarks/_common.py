"""Shared plumbing for the benchmark scripts: CLI, timing, the result table.

Every ``benchmarks/<family>.py`` is one script, one run: parameters at the top,
``--quick`` for CI, a table printed and written (Markdown) to the file it names,
``benchmarks/results/<family>.md`` by default or ``--output PATH``.
"""

import argparse
import os
import platform
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def parse_args(name, description):
    """``--quick`` and ``--output``; returns the parsed namespace."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="small sizes, for CI")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"where to write the table (default results/{name}.md)",
    )
    args = parser.parse_args()
    if args.output is None:
        suffix = "_quick" if args.quick else ""
        args.output = RESULTS / f"{name}{suffix}.md"
    return args


@contextmanager
def timer():
    """``with timer() as t: ...`` then ``t()`` is the elapsed seconds."""
    start = time.perf_counter()
    end = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


def _fmt(x):
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def cpu_model():
    """The CPU's model name (``lscpu``'s "Model name"), for every results file."""
    try:
        out = subprocess.run(
            ["lscpu"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return platform.processor() or "unknown CPU"


def report(args, title, sections, command=None, notes=()):
    """Print and write the benchmark report.

    The header names the command, the date, the CPU model and the core count.

    Parameters
    ----------
    sections : list of (heading, header, rows)
        One table per claim; put the baseline and the ratio in each.
    notes : sequence of str
        Paragraphs printed under the header.
    """
    if command is None:
        # name the script from the repository root, wherever it was run from
        root = Path(__file__).resolve().parents[1]
        script = Path(sys.argv[0]).resolve()
        try:
            script = script.relative_to(root)
        except ValueError:
            pass
        command = " ".join(["python", script.as_posix(), *sys.argv[1:]])
    parts = [
        f"# {title}",
        "",
        f"Command: `{command}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}; "
        f"machine: {platform.machine()}, {platform.python_version()}; "
        f"CPU: {cpu_model()}, {os.cpu_count()} cores; quick={args.quick}",
        "",
    ]
    for note in notes:
        parts += [note, ""]
    for heading, header, rows in sections:
        parts += [f"## {heading}", "", markdown_table(header, rows), ""]
    text = "\n".join(parts)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"\nwritten to {args.output}", file=sys.stderr)
    return text
