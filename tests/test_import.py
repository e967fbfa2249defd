"""``import skalgos`` stays light, optional extras stay optional, and a CuPy
without a GPU is harmless."""

import subprocess
import sys
import textwrap

import pytest


def _run(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_skalgos_imports_no_heavy_module():
    res = _run(
        """
        import skalgos, sys
        heavy = {'torch', 'cupy', 'numba'} & set(sys.modules)
        assert not heavy, heavy
        print(skalgos.__version__)
        """
    )
    assert res.returncode == 0, res.stderr


def test_cupy_importable_without_gpu_is_reported_unusable(tmp_path):
    # A stand-in CuPy that imports but has no driver, as on CI machines.
    pkg = tmp_path / "cupy"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from . import cuda\n\n\nclass ndarray:\n    pass\n"
    )
    (pkg / "cuda" / "__init__.py").write_text(
        "class _Runtime:\n"
        "    @staticmethod\n"
        "    def getDeviceCount():\n"
        "        raise RuntimeError('cudaErrorNoDevice: no CUDA-capable device')\n"
        "runtime = _Runtime()\n"
    )
    res = _run(
        f"""
        import sys; sys.path.insert(0, {str(tmp_path)!r})
        import cupy  # importable
        import skalgos
        from skalgos.utils import cupy_available
        from skalgos.utils._backend import available_namespaces
        assert cupy_available() is False
        assert 'cupy' not in [n for n, _, _ in available_namespaces()]
        print('ok')
        """
    )
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout


def test_import_federated_does_not_import_flwr():
    res = _run(
        """
        import sys
        import skalgos.federated
        from skalgos.federated import FederatedClassifier, FedECADO
        assert 'flwr' not in sys.modules, 'flwr imported'
        print('ok')
        """
    )
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout


@pytest.mark.parametrize(
    "dependency, module, fix",
    [
        ("torch", "skalgos.torch", "skalgos[torch]"),
        ("flwr", "skalgos.federated.flower", "pip install 'skalgos[flower]'"),
    ],
)
def test_extra_missing_gives_clear_import_error(dependency, module, fix):
    res = _run(
        f"""
        import sys
        sys.modules[{dependency!r}] = None  # simulate the extra not installed
        try:
            import {module}
        except ImportError as exc:
            assert {fix!r} in str(exc), exc
            print('ok')
        """
    )
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout


def test_show_versions(capsys):
    import skalgos

    skalgos.show_versions()
    out = capsys.readouterr().out
    assert "scikit-learn" in out and "usable CuPy GPU" in out


def _readme_rows():
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "README.md").read_text()
    rows = re.findall(
        r"^\| `(\w+)` \|[^|]*\|([^|]*)\|([^|]*)\| [^|]* \|$", text, flags=re.M
    )
    assert len(rows) >= 10
    return [
        (family, re.findall(r"`([\w.]+)`", est), re.findall(r"`([\w.]+)`", also))
        for family, est, also in rows
    ]


def test_readme_estimator_table_names_resolve():
    # every public name the README's table advertises exists where it says
    import importlib

    for family, estimators, also in _readme_rows():
        if family == "torch":
            pytest.importorskip("torch")
        for name in estimators + also:
            obj = importlib.import_module(f"skalgos.{family}")
            for part in name.split("."):
                assert hasattr(obj, part), f"README names skalgos.{family}.{name}"
                obj = getattr(obj, part)


def test_readme_lists_every_estimator():
    # the table's estimators column is all_estimators(), no more and no less
    from skalgos.utils.discovery import all_estimators

    try:
        import torch  # noqa: F401

        has_torch = True
    except ImportError:
        has_torch = False
    listed = {
        name
        for family, estimators, _ in _readme_rows()
        if has_torch or family != "torch"
        for name in estimators
    }
    assert listed == {name for name, _ in all_estimators()}


def test_readme_pipeline_example_runs():
    # the README's Pipeline + GridSearchCV example uses a skalgos estimator and runs
    from pathlib import Path

    text = (Path(__file__).parents[1] / "README.md").read_text()
    block = text.split("## A Pipeline and a grid search", 1)[1]
    code = block.split("```python\n", 1)[1].split("```", 1)[0]
    assert "from skalgos." in code
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["search"].best_score_ > 0.8
