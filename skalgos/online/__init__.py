"""skalgos.online (not built yet)."""

__all__ = []
