"""skalgos.tree (not built yet)."""

__all__ = []
