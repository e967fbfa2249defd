"""
A minimum BDD beside a minimum decision tree
============================================

A binary decision diagram (BDD) is a decision tree whose nodes may share
subgraphs. On 3-bit parity the smallest tree needs 7 tests, while the
smallest BDD needs 5: the two "even so far" and "odd so far" branches are
shared. On binned iris we then fit a BDD with at most four tests and the
fewest training errors and draw it beside scikit-learn's CART tree with the
same number of tests.
"""

import os
from itertools import product

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier, plot_tree

from skalgos.tree import BDDClassifier, min_decision_tree, plot_bdd

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"

# %%
# Parity: sharing saves two tests
# -------------------------------
X = np.array(list(product([0, 1], repeat=3)), dtype=float)
y = X.sum(axis=1).astype(int) % 2
bdd = BDDClassifier().fit(X, y)
tree = min_decision_tree(X, y)
print(f"minimum BDD: {bdd.n_inner_nodes_} tests, minimum tree: {tree.n_inner_nodes_}")
print(bdd.export_text(feature_names=["a", "b", "c"], class_names=["even", "odd"]))

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, est, title in ((axes[0], bdd, "minimum BDD"), (axes[1], tree, "minimum tree")):
    plot_bdd(est, ax=ax, feature_names=["a", "b", "c"], class_names=["even", "odd"])
    ax.set_title(f"{title}: {est.n_inner_nodes_} tests")
fig.tight_layout()

# %%
# Binned iris: a four-test diagram against CART
# ---------------------------------------------
# ``max_domain=3`` cuts each feature into three equal-frequency bins, which
# keeps the exact search small; CART sees the raw features.
iris = load_iris()
size = 3 if QUICK else 4
bdd = BDDClassifier(objective="min_errors", max_size=size, max_domain=3).fit(
    iris.data, iris.target
)
cart = DecisionTreeClassifier(max_leaf_nodes=size + 1, random_state=0).fit(
    iris.data, iris.target
)
print(
    f"BDD: {bdd.n_inner_nodes_} tests, {bdd.training_errors_} training errors "
    f"(optimal: {bdd.is_optimal_}); CART: {cart.tree_.node_count // 2} tests, "
    f"{(cart.predict(iris.data) != iris.target).sum()} training errors"
)
names = ["sepal len", "sepal wid", "petal len", "petal wid"]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
plot_bdd(bdd, ax=axes[0], feature_names=names, class_names=list(iris.target_names))
axes[0].set_title("min-errors BDD (dashed: x > threshold)")
plot_tree(cart, ax=axes[1], feature_names=names, class_names=list(iris.target_names))
axes[1].set_title("CART, same number of tests")
fig.tight_layout()
plt.show()
