import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # Tiny models: one intra-op thread is fastest and avoids oversubscribing
    # the shared CI cores (pytest -n 2 runs two of these processes).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def iris():
    """Standardised iris, shared by the estimator tests."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y
