"""skalgos.federated (not built yet)."""

__all__ = []
