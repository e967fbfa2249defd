"""Pieces the transport estimators share: preprocessing and PW on NumPy clouds."""

import numpy as np

from ._pw import INITS, _check_init, _pw_core, check_ot_solver


def preprocess(clouds, weights, *, center, normalize):
    """Centre (weighted mean) and optionally scale each cloud to unit radius."""
    out = []
    for c, w in zip(clouds, weights):
        c = c - w @ c if center else c.copy()
        if normalize == "max_radius":
            r = np.sqrt((c**2).sum(axis=1)).max()
            if r > 0:
                c = c / r
        out.append(c)
    return out


def pw_sq(
    X, Y, a, b, init, *, allow_reflection, max_iter, tol, ot_solver, reg, extra_inits=()
):
    """``(PW^2, P, G)`` between NumPy clouds already preprocessed."""
    obj, P, G, _, _ = _pw_core(
        X,
        Y,
        a,
        b,
        init,
        max_iter=max_iter,
        tol=tol,
        allow_reflection=allow_reflection,
        ot_solver=ot_solver,
        reg=reg,
        extra_inits=extra_inits,
    )
    return max(float(obj), 0.0), np.asarray(P), np.asarray(G)


def w_sq(X, Y, a, b, *, ot_solver="emd", reg=1e-2):
    """``(W^2, I, G)``: the same triple as :func:`pw_sq`, rotations disabled."""
    import ot

    check_ot_solver(ot_solver)
    M = ot.dist(X, Y)
    G = ot.emd(a, b, M)
    return max(float((G * M).sum()), 0.0), np.eye(X.shape[1]), np.asarray(G)


def check_pw_init(init, d, allow_reflection):
    """Validate a per-pair PW ``init`` (string or orthogonal matrix)."""
    if isinstance(init, str) and init not in INITS:
        raise ValueError(
            f"init must be one of {INITS} or a (d, d) orthogonal array; got {init!r}."
        )
    return _check_init(init, d, allow_reflection)
