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
