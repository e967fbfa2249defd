"""The Flower extra stays optional: no flwr import from skalgos.federated, and a
clear error naming the fix when it is missing."""

import subprocess
import sys
import textwrap


def _run(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


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


def test_flower_extra_missing_gives_clear_import_error():
    res = _run(
        """
        import sys
        sys.modules['flwr'] = None  # simulate Flower not installed
        try:
            import skalgos.federated.flower
        except ImportError as exc:
            assert "pip install 'skalgos[flower]'" in str(exc), exc
            print('ok')
        """
    )
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout
