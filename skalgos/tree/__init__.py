"""Minimum-size binary decision diagrams (WitBDD, ICML 2025)."""

from ._bdd import BDDClassifier, min_decision_tree, plot_bdd

__all__ = ["BDDClassifier", "min_decision_tree", "plot_bdd"]
