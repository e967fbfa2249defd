"""The tour CLI: listing without imports, --only by family, the table, plots."""

import subprocess
import sys
from dataclasses import astuple

import pytest

from skalgos import _tour


@pytest.fixture
def toy_tour(monkeypatch):
    """An empty registry whose only declared entries are the ones a test adds."""
    monkeypatch.setattr(_tour, "_REGISTRY", {})
    monkeypatch.setattr(_tour, "discover", lambda families=(): {})
    monkeypatch.setattr(_tour, "FAMILIES", ("toys",))

    def declared(families=()):
        return [
            _tour.TourEntry(e.name, e.task, e.data, e.baseline, e.metric, None, "toys")
            for e in _tour.entries()
        ]

    monkeypatch.setattr(_tour, "static_entries", declared)


def test_static_entries_match_the_registry():
    # --list reads the sources; what it reads must be what the modules register
    skipped = _tour.discover()
    declared = [e for e in _tour.static_entries() if e.family not in skipped]
    registered = _tour.entries()
    assert [astuple(e)[:5] + (e.family,) for e in declared] == [
        astuple(e)[:5] + (e.family,) for e in registered
    ]
    assert len(declared) >= 10


def test_list_imports_no_family():
    code = (
        "import sys; from skalgos._tour import main; main(['--list']); "
        "loaded = [m for m in sys.modules if m.count('.') >= 1 and "
        "m.startswith('skalgos.') and m != 'skalgos._tour']; "
        "assert not loaded, loaded; assert 'numba' not in sys.modules"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert "BDDClassifier [tree]" in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= _tour.WIDTH


def test_only_accepts_families_and_names():
    assert _tour.resolve(["tree"]) == ["BDDClassifier"]
    assert _tour.resolve(["BDDClassifier"]) == ["BDDClassifier"]
    with pytest.raises(ValueError, match="Valid families: .*tree.*Valid entries"):
        _tour.resolve(["trees"])


def test_wrong_name_exits_with_the_valid_ones(capsys):
    with pytest.raises(SystemExit):
        _tour.main(["--only", "no-such-entry"])
    assert "Valid families" in capsys.readouterr().err


def test_empty_registry_exits_zero(toy_tour, capsys):
    assert _tour.main([]) == 0
    assert "No tour entries" in capsys.readouterr().out


def test_table_fits_the_width_with_long_texts():
    entry = _tour.TourEntry(
        "DelayedOnlineNewtonStepClassifier",
        "a task described at great length " * 3,
        "data " * 20,
        "a baseline with a long name " * 3,
        "a metric (lower is better)",
        None,
        "online",
    )
    res = _tour.TourResult(1.234567, 7.654321, 12.5, 0.001)
    text = _tour.format_table([(entry, res), (entry, None)])
    assert max(len(line) for line in text.splitlines()) <= _tour.WIDTH
    assert "1. DelayedOnlineNewtonStepClassifier (online)" in text
    assert "failed" in text


def test_registered_entry_runs_and_plots(toy_tour, tmp_path, capsys):
    @_tour.register(name="Toy", task="t", data="d", baseline="b", metric="m")
    def _entry(quick, random_state):
        return _tour.TourResult(
            score=0.9,
            baseline_score=0.5,
            fit_time=0.1,
            plot=lambda ax: ax.plot([0, 1], [0, 1]),
        )

    @_tour.register(name="NoPlot", task="t", data="d", baseline="b", metric="m")
    def _entry2(quick, random_state):
        return _tour.TourResult(score=0.4, baseline_score=0.5, fit_time=0.1)

    assert _tour.main(["--only", "toys", "--plots", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "better" in out.out and "worse" in out.out and "[1/2] NoPlot" in out.err
    # one PNG per entry, the default figure for the entry that draws none
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NoPlot.png", "Toy.png"]
    assert str(tmp_path) in out.err


def test_failing_entry_is_reported(toy_tour, capsys):
    @_tour.register(name="Broken", task="t", data="d", baseline="b", metric="m")
    def _entry(quick, random_state):
        raise RuntimeError("boom")

    assert _tour.main([]) == 1
    assert "failed" in capsys.readouterr().out


def test_missing_extra_names_entries_and_the_install(monkeypatch, capsys):
    def fail(families=()):
        return {"torch": 'torch is not installed; pip install "skalgos[torch]"'}

    monkeypatch.setattr(_tour, "discover", fail)
    monkeypatch.setattr(_tour, "run", lambda *a, **k: ([], []))
    _tour.main(["--only", "torch"])
    err = capsys.readouterr().err
    assert "TorchClassifier" in err and 'pip install "skalgos[torch]"' in err
    assert len([line for line in err.splitlines() if "skipping" in line]) == 1


_tour.discover()
ENTRY_NAMES = [e.name for e in _tour.entries()]


@pytest.mark.parametrize("name", ENTRY_NAMES)
def test_each_registered_entry_runs_quick(name):
    results, failures = _tour.run([name], quick=True)
    assert not failures, failures
    assert results[0][1] is not None
