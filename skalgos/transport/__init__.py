"""skalgos.transport (not built yet)."""

__all__ = []
