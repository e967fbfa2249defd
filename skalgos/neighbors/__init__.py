"""skalgos.neighbors (not built yet)."""

__all__ = []
