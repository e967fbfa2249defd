"""Data generators for every family, deterministic under ``random_state``.

Each family adds its generators in ``_<family>.py`` and re-exports them in its
section below; ``__all__`` lists every generator re-exported here.
"""

# --- completion ------------------------------------------------------------


# --- kernel_ridge ----------------------------------------------------------


# --- transport -------------------------------------------------------------


# --- tree ------------------------------------------------------------------


# --- cluster ---------------------------------------------------------------


# --- neighbors -------------------------------------------------------------

# --- graph -----------------------------------------------------------------
from ._graph import *  # noqa: F403

# --- online ----------------------------------------------------------------


# --- federated -------------------------------------------------------------


# --- metrics ---------------------------------------------------------------


# --- torch -----------------------------------------------------------------

__all__ = sorted(
    name
    for name, obj in list(globals().items())
    if not name.startswith("_")
    and getattr(obj, "__module__", "").startswith("skalgos.datasets")
)
