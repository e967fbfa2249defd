"""skalgos.graph (not built yet)."""

__all__ = []
