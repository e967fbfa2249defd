"""
Regret under growing feedback delays
====================================

Each learner of :mod:`skalgos.online` plays the same stream (a strongly convex
squared loss on a ball) while the labels arrive later and later: constant
delays of 0, 5 and 25 rounds, and a single spike (one label half a horizon
late). We plot the cumulative regret from
:func:`skalgos.online.delayed_progressive_score`: each learner's loss at the
point it played (before the label was seen) minus that of the best fixed
weights in hindsight for the same loss on the same ball. Delayed FTRL's loss
includes its ridge term ``strong_convexity / 2 ||w||^2`` (the strongly convex
losses its bound is for); the others use the plain square loss.

Delay convention: ``0`` means the label is seen before the next prediction.
"""

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from skalgos.online import (
    BOLD,
    ClippedVAWRegressor,
    DelayedFTRLRegressor,
    DelayedOGDRegressor,
    DelayedOnlineNewtonStepRegressor,
    delayed_progressive_score,
)
from skalgos.online.delays import Constant, Spike

QUICK = os.environ.get("SKALGOS_EXAMPLES_QUICK") == "1"
T = 300 if QUICK else 2000

rng = np.random.default_rng(0)
X = rng.normal(size=(T, 4)) / 2.0
w_true = np.array([0.4, -0.3, 0.2, 0.1])
y = X @ w_true + 0.1 * rng.normal(size=T)

# %%
# The learners, with the same feasible ball (radius 1) where they have one.
learners = {
    "delayed FTRL": DelayedFTRLRegressor(strong_convexity=0.2, fit_intercept=False),
    "delayed ONS": DelayedOnlineNewtonStepRegressor(fit_intercept=False),
    "clipped VAW": ClippedVAWRegressor(),
    "delayed OGD": DelayedOGDRegressor(fit_intercept=False),
    "BOLD (FTRL copies)": BOLD(
        DelayedFTRLRegressor(strong_convexity=0.2, fit_intercept=False)
    ),
}
settings = {
    "no delay": Constant(0),
    "delay 5": Constant(5),
    "delay 25": Constant(25),
    "one spike": Spike(at=0, size=0.5),
}


fig, axes = plt.subplots(1, len(settings), figsize=(4 * len(settings), 3.5))
for ax, (title, model) in zip(axes, settings.items()):
    delays = model.sample(T, random_state=0)
    for name, est in learners.items():
        ax.plot(delayed_progressive_score(est, X, y, delays).regret_curve, label=name)
    ax.set_title(title)
    ax.set_xlabel("round")
axes[0].set_ylabel("cumulative regret")
axes[-1].legend(fontsize=8)
fig.tight_layout()

# %%
# BOLD needs ``d_max + 1`` copies, so one late label makes it restart from
# scratch many times; delayed FTRL only pays for the number of labels missing
# at once (here one), as the paper's ``sigma_max ln T`` bound says. Delayed
# ONS runs with its defaults: its step shrinks as labels pile up (a ridge
# growing like ``sqrt(sum sigma)``), so long constant delays do not make it
# overshoot.
#
# The step that shrinks
# ---------------------
# The same label (round 40's) arriving after more and more rounds whose labels
# are still missing: the ONS step it causes, relative to the undelayed one.
outstanding = [0, 2, 5, 10, 20, 40, 80]
steps = []
for m in outstanding:
    d = np.zeros(41 + m, dtype=int)
    d[40] = m
    d[41:] = 10**6  # these labels never come back during the experiment
    est = DelayedOnlineNewtonStepRegressor(fit_intercept=False).fit(X[:40], y[:40])
    before = est.coef_.copy()
    est.partial_fit(X[40 : 41 + m], y[40 : 41 + m], delays=d[40:])
    steps.append(np.linalg.norm(est.coef_ - before))
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(outstanding, np.array(steps) / steps[0], marker="o")
ax.set_xlabel("labels outstanding when it arrives")
ax.set_ylabel("ONS step / undelayed step")
fig.tight_layout()
