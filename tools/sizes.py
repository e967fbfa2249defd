"""Print the longest modules, classes and functions of ``skalgos/``.

Usage: ``python tools/sizes.py [--top N]``. Lines are counted from a
definition's first to its last line (docstrings and comments included).
Numba kernel modules (``_kernels.py``) are listed apart: a long loop there
can be the fast one. The limits the project keeps (issue 37) are printed
beside each list: modules ~1,000 lines, classes ~450, functions ~120.
"""

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "skalgos"
LIMITS = {"module": 1000, "class": 450, "function": 120}


def _sizes():
    modules, classes, functions = [], [], []
    for path in sorted(ROOT.rglob("*.py")):
        if "tests" in path.parts:
            continue
        rel = path.relative_to(ROOT.parent).as_posix()
        text = path.read_text()
        modules.append((text.count("\n") + 1, rel))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                classes.append(
                    (node.end_lineno - node.lineno + 1, f"{rel}:{node.name}")
                )
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kernel = path.name == "_kernels.py"
                functions.append(
                    (node.end_lineno - node.lineno + 1, f"{rel}:{node.name}", kernel)
                )
    return modules, classes, functions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    modules, classes, functions = _sizes()
    rows = [
        ("module", sorted(modules, reverse=True)),
        ("class", sorted(classes, reverse=True)),
        ("function", sorted((n, w) for n, w, k in functions if not k)[::-1]),
    ]
    for kind, items in rows:
        over = sum(n > LIMITS[kind] for n, _ in items)
        plural = "classes" if kind == "class" else kind + "s"
        print(f"\nlongest {plural} (limit ~{LIMITS[kind]} lines; {over} over)")
        for n, where in items[: args.top]:
            print(f"  {n:6d}  {where}")
    kernels = sorted(((n, w) for n, w, k in functions if k), reverse=True)
    print("\nlongest Numba kernel functions (no limit)")
    for n, where in kernels[:5]:
        print(f"  {n:6d}  {where}")


if __name__ == "__main__":
    main()
