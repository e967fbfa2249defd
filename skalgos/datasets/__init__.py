"""Data generators for every family, deterministic under ``random_state``.

Each family adds its generators in ``_<family>.py`` and re-exports them in its
section below; ``__all__`` lists every generator re-exported here.
"""

# --- completion ------------------------------------------------------------
from ._completion import make_side_info_completion  # noqa: E402,F401

# --- kernel_ridge ----------------------------------------------------------


# --- transport -------------------------------------------------------------


# --- tree ------------------------------------------------------------------


# --- cluster ---------------------------------------------------------------


# --- neighbors -------------------------------------------------------------


# --- graph -----------------------------------------------------------------


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
