"""skalgos.cluster (not built yet)."""

__all__ = []
