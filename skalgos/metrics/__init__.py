"""Scores shared by several families: diversity, clustering cost, certification,
compositionality.

Each family adds its metrics in ``_<topic>.py`` and re-exports them in its
section below; ``__all__`` lists every metric re-exported here.
"""

# --- completion ------------------------------------------------------------


# --- kernel_ridge ----------------------------------------------------------


# --- transport -------------------------------------------------------------


# --- tree ------------------------------------------------------------------

# --- cluster ---------------------------------------------------------------
from ._correlation_clustering import correlation_clustering_cost  # noqa: F401, I001

# --- neighbors -------------------------------------------------------------
from ._neighbors import diverse_recall  # noqa: F401, I001


# --- graph -----------------------------------------------------------------


# --- online ----------------------------------------------------------------


# --- federated -------------------------------------------------------------
from ._certification import (  # noqa: F401, I001
    AdversarialRisks,
    client_adversarial_risk,
    dkw_band,
    robust_cdf_bound,
    robust_mean_bound,
)

# --- metrics ---------------------------------------------------------------
from ._compositionality import (
    PrequentialResult,
    RepresentationalCompositionality,
    compositionality_from_terms,
    prequential_code_length,
    topographic_similarity,
)

# --- torch -----------------------------------------------------------------

__all__ = sorted(
    name
    for name, obj in list(globals().items())
    if not name.startswith("_")
    and getattr(obj, "__module__", "").startswith("skalgos.metrics")
)
