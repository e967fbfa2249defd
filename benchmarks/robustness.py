"""Robustness (issue 39): memory per streaming call and the bad-input suite.

1. Bytes of traced memory (tracemalloc) per ``partial_fit`` call, 2-row
   batches after a warm-up, for every estimator with ``partial_fit`` and the
   River adapters of ``skalgos.online`` (one River call = ``predict_one`` +
   ``learn_one``); the attribute whose pickled size grew most is named.
   ``DynamicCorrelationClustering`` adds a node per row: bytes per node.
   The ratio is the growth over the test's bound (tests/test_long_streams.py:
   32 KiB over the whole stream); <= 1 is flat.
2. The property-based cases of tests/test_robustness.py (the same
   generators, derandomized hypothesis, more examples per kind): the outcome
   of each estimator x case kind, ``ok`` (finite output of the right shape
   on every case), ``clear`` (some case raised a ValueError/TypeError from
   our code, the rest ok) or ``FAIL`` (with the first exception), and every
   failing case.
"""

import sys
import time
from collections import Counter
from pathlib import Path

from _common import parse_args, report

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

import test_long_streams as ls  # noqa: E402
import test_robustness as rb  # noqa: E402

args = parse_args("robustness", __doc__)

# --- parameters ----------------------------------------------------------------
# calls measured (warm-up: a tenth, at least 20); the online learners cost
# 1-5 ms per traced call on 2 shared cores, federated/torch 10-40 ms
STREAM_CALLS = (
    {"online": 300, "slow": 60} if args.quick else {"online": 5000, "slow": 500}
)
RIVER_CALLS = 600 if args.quick else 10000
N_PER_KIND = 1 if args.quick else 6
SLOW = ("Federated", "Torch", "DynamicCorrelationClustering")


def stream_rows():
    rows = []
    for name in ls.streaming_names():
        if name.startswith("river:"):
            n = RIVER_CALLS
        elif name.startswith(SLOW):
            n = STREAM_CALLS["slow"]
        else:
            n = STREAM_CALLS["online"]
        warm = max(20, n // 10)
        try:
            t0 = time.perf_counter()
            res = ls.measure(name, n_calls=n, n_warm=warm)
            sec = (time.perf_counter() - t0) / (n + warm)
        except Exception as exc:  # noqa: BLE001 - a skipped extra or an error
            rows.append([name, "", "", "", "", f"{type(exc).__name__}: {exc}"[:80]])
            continue
        per_node = name == "DynamicCorrelationClustering"
        attrs = ", ".join(f"{k} +{d} B" for k, d in res["attrs"][:2]) or "-"
        rows.append(
            [
                name,
                res["calls"],
                round(res["per_node"] if per_node else res["per_call"], 1),
                "per node" if per_node else "per call",
                round(res["growth"] / ls.BOUND, 2),
                f"{attrs}; {sec * 1e3:.2f} ms/call traced",
            ]
        )
        print(rows[-1], flush=True)
    return rows


def suite_sections():
    t0 = time.perf_counter()
    res = rb.run_all(rb._names(), N_PER_KIND)
    elapsed = time.perf_counter() - t0
    table, fails, counts = [], [], Counter()
    for name, by_kind in res.items():
        row = [name]
        for kind in rb.KINDS:
            cases = by_kind[kind]
            for outcome, msg, case in cases:
                counts[outcome] += 1
                if outcome == "FAIL":
                    shown = {
                        k: v for k, v in case.items() if k not in ("ref_shape", "rule")
                    }
                    fails.append([name, kind, msg.replace("|", "/"), str(shown)])
            s = rb.summarize(cases)
            if s == "FAIL":
                first = next(m for o, m, _ in cases if o == "FAIL")
                s = f"FAIL ({first.split(':')[0]})"
            row.append(s)
        table.append(row)
    total = sum(counts.values())
    cells = Counter(
        rb.summarize(by_kind[k]) for by_kind in res.values() for k in rb.KINDS
    )
    summary = [
        ["cases", total, ""],
        ["ok (finite, right shape)", counts["ok"], counts["ok"] / total],
        ["clear error from our code", counts["clear"], counts["clear"] / total],
        ["FAIL", counts["FAIL"], counts["FAIL"] / total],
        [
            "estimator x kind cells ok / clear / FAIL / n/a",
            f"{cells['ok']} / {cells['clear']} / {cells['FAIL']} / {cells['n/a']}",
            "",
        ],
        ["suite wall time (s), 2 workers", round(elapsed, 1), ""],
    ]
    return [
        (
            f"Robustness suite: {len(res)} estimators x {len(rb.KINDS)} case kinds, "
            f"up to {N_PER_KIND} hypothesis examples per kind (derandomized)",
            ["", "count", "ratio of cases"],
            summary,
        ),
        (
            "Outcome per estimator and case kind",
            ["estimator", *rb.KINDS],
            table,
        ),
        (
            "Every failing case",
            ["estimator", "kind", "outcome", "case"],
            fails or [["none", "", "", ""]],
        ),
    ]


sections = [
    (
        "Traced memory per streaming call (2-row batches, after a warm-up)",
        ["estimator", "calls", "bytes", "unit", "ratio growth / 32 KiB bound", "grows"],
        stream_rows(),
    ),
    *suite_sections(),
]
report(
    args,
    "Robustness: memory on long streams and the bad-input suite (issue 39)",
    sections,
    notes=[
        "tracemalloc sees Python objects and NumPy buffers, not torch's tensor "
        "storage. A case's outcome: ok = finite output of the right shape; "
        "clear = ValueError/TypeError raised by a `raise` in skalgos/ or by "
        "sklearn's input validation; FAIL = anything else (see "
        "tests/test_robustness.py for the exact rule)."
    ],
)
