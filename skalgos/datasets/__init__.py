"""Data generators for every family, deterministic under ``random_state``.

Each family adds its generators in ``_<family>.py`` and re-exports them in its
section below; ``__all__`` lists every generator re-exported here.
"""

# --- completion ------------------------------------------------------------
from ._completion import make_noisy_side_info_completion, make_side_info_completion

# --- kernel_ridge ----------------------------------------------------------
from ._kernel_ridge import (
    make_invariant_sphere_regression,
    make_sign_invariant_torus_regression,
)

# --- transport -------------------------------------------------------------
from ._transport import make_shape_clouds

# --- tree ------------------------------------------------------------------

# --- cluster ---------------------------------------------------------------
from ._cluster import make_drifting_blobs, make_planted_partition_graph  # noqa: F401, I001

# --- neighbors -------------------------------------------------------------
from ._neighbors import make_colored_manifold  # noqa: F401, I001

# --- graph -----------------------------------------------------------------
from ._graph import *  # noqa: F403

# --- online ----------------------------------------------------------------


# --- federated -------------------------------------------------------------
from ._federated import make_federated  # noqa: F401, I001

# --- metrics ---------------------------------------------------------------
from ._compositionality import (
    make_grammar_language,
    make_lookup_table_language,
    make_object_language,
)

# --- torch -----------------------------------------------------------------

__all__ = sorted(
    name
    for name, obj in list(globals().items())
    if not name.startswith("_")
    and getattr(obj, "__module__", "").startswith("skalgos.datasets")
)
