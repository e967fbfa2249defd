import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skalgos.datasets import make_object_language  # noqa: E402
from skalgos.metrics import RepresentationalCompositionality  # noqa: E402
from skalgos.torch import TorchClassifier, prequential_mlp  # noqa: E402


def test_paper_architecture_defaults():
    est = prequential_mlp()
    assert isinstance(est, TorchClassifier)
    params = est.get_params()
    assert params["module__hidden_sizes"] == (64, 256, 256, 256)
    assert params["lr"] == 1e-3 and params["batch_size"] == 50
    with pytest.raises(ValueError, match="kind"):
        prequential_mlp("tree")


def test_torch_prequential_model_separates_languages():
    kw = dict(min_size=16, increment=32, max_epochs=15, patience=3, random_state=0)
    est = prequential_mlp(hidden_sizes=(32,), lr=1e-2, batch_size=16, random_state=0)
    comp = make_object_language(2, 4, 12, random_state=0)
    hol = make_object_language(2, 4, 12, kind="holistic", random_state=0)
    c_comp = RepresentationalCompositionality(est, **kw).fit(*comp)
    c_hol = RepresentationalCompositionality(est, **kw).fit(*hol)
    assert c_comp.curve_.naive_length >= c_comp.k_z_given_w_ >= c_comp.k_z_given_w_f_
    assert c_comp.compositionality_ / c_hol.compositionality_ >= 1.5
    assert np.isfinite(c_hol.compositionality_) and c_hol.compositionality_ >= 1
