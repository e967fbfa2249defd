"""The tour CLI: listing, running one entry, plots, and the empty case."""

import pytest

from skalgos import _tour


def test_list_and_unknown_entry(capsys):
    assert _tour.main(["--list"]) == 0
    if _tour.entries():
        with pytest.raises(SystemExit):
            _tour.main(["--only", "no-such-entry"])


def test_empty_registry_exits_zero(monkeypatch, capsys):
    monkeypatch.setattr(_tour, "_REGISTRY", {})
    monkeypatch.setattr(_tour, "discover", lambda families=(): {})
    assert _tour.main([]) == 0
    assert "No tour entries" in capsys.readouterr().out


def test_registered_entry_runs_and_plots(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(_tour, "_REGISTRY", {})
    monkeypatch.setattr(_tour, "discover", lambda families=(): {})

    @_tour.register(name="Toy", task="t", data="d", baseline="b", metric="m")
    def _entry(quick, random_state):
        return _tour.TourResult(
            score=0.9,
            baseline_score=0.5,
            fit_time=0.1,
            plot=lambda ax: ax.plot([0, 1], [0, 1]),
        )

    assert _tour.main(["--only", "Toy", "--plots", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "better" in out.out and "[1/1] Toy" in out.err
    assert (tmp_path / "Toy.png").exists()


def test_failing_entry_is_reported(monkeypatch, capsys):
    monkeypatch.setattr(_tour, "_REGISTRY", {})
    monkeypatch.setattr(_tour, "discover", lambda families=(): {})

    @_tour.register(name="Broken", task="t", data="d", baseline="b", metric="m")
    def _entry(quick, random_state):
        raise RuntimeError("boom")

    assert _tour.main([]) == 1
    assert "failed" in capsys.readouterr().out


_tour.discover()
ENTRY_NAMES = [e.name for e in _tour.entries()]


@pytest.mark.parametrize("name", ENTRY_NAMES)
def test_each_registered_entry_runs_quick(name):
    rows, failures = _tour.run([name], quick=True)
    assert not failures, failures
    assert rows[0][-1] != "failed"
