"""skalgos.completion (not built yet)."""

__all__ = []
