"""skalgos.kernel_ridge (not built yet)."""

__all__ = []
