"""Tour entry: FedECADO on digits split across non-IID clients vs FedAvg."""

import time

import numpy as np

from skalgos._tour import TourResult, register


@register(
    name="FederatedClassifier",
    task="federated softmax regression, 20 non-IID clients",
    data="digits, Dirichlet(0.1) label split, local budgets U{1..20}",
    baseline="FedAvg at equal rounds (centralised LogisticRegression in notes)",
    metric="test accuracy",
)
def _entry(quick, random_state):
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from skalgos.datasets import make_federated
    from skalgos.federated import FedAvg, FedECADO, FederatedClassifier

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, test_size=0.2, random_state=random_state
    )
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    _, _, cid = make_federated(
        Xtr, ytr, 20, alpha=0.1, min_size=2, random_state=random_state
    )
    n_rounds = 10 if quick else 60
    curves, times, scores = {}, {}, {}
    for name, strat in (("FedECADO", FedECADO()), ("FedAvg", FedAvg())):
        est = FederatedClassifier(
            strat,
            partition="given",
            local_steps="uniform",
            learning_rate=0.05,
            random_state=random_state,
        )
        acc = []
        t0 = time.perf_counter()
        for _ in range(n_rounds):
            est.partial_fit(Xtr, ytr, client_id=cid, classes=np.arange(10))
            acc.append(est.score(Xte, yte))
        times[name] = time.perf_counter() - t0
        curves[name], scores[name] = acc, acc[-1]
    t0 = time.perf_counter()
    central = LogisticRegression(max_iter=1000).fit(Xtr, ytr).score(Xte, yte)
    t_central = time.perf_counter() - t0

    def draw(ax):
        r = np.arange(1, n_rounds + 1)
        for name, acc in curves.items():
            ax.plot(r, acc, label=name)
        ax.axhline(central, color="k", ls="--", label="centralised LogisticRegression")
        ax.set_xlabel("round")
        ax.set_ylabel("test accuracy")
        ax.legend()

    return TourResult(
        score=scores["FedECADO"],
        baseline_score=scores["FedAvg"],
        fit_time=times["FedECADO"],
        baseline_fit_time=times["FedAvg"],
        plot=draw,
        notes=f"centralised LogisticRegression: {central:.3f} in {t_central:.2f} s",
    )
