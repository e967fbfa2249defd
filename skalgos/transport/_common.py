"""Pieces the transport estimators share: preprocessing and PW on NumPy clouds."""

import math

import numpy as np

from ._pw import INITS, _check_init, _pw_core, check_ot_solver

# Coordinates above this make squared distances (inertia_, score) overflow
# float64 (its largest value is 1.8e308; sqrt of that is 1.3e154).
MAX_COORDINATE = 1e150


def preprocess(clouds, weights, *, center, normalize):
    """Centre (weighted mean) and optionally scale each cloud to unit radius."""
    out = []
    for c, w in zip(clouds, weights):
        c = c - w @ c if center else c.copy()
        if normalize == "max_radius" and c.size:
            # the radius of c / m times m: no overflow of the squares
            m = float(np.max(np.abs(c)))
            if m > 0:
                r = m * float(np.sqrt(((c / m) ** 2).sum(axis=1)).max())
                c = c / r
        out.append(c)
    return out


def unit_scale(clouds, name="X"):
    """Power of two ``s`` bringing the clouds' largest coordinate into [0.5, 1).

    PW and W are homogeneous (``PW(sX, sY) = s PW(X, Y)``, the same plans and
    rotations), so the solvers run on ``clouds / s`` and the results are
    scaled back; ``s`` a power of two makes the division exact. Tiny clouds
    (coordinates near 1e-300) then do not underflow in the squared costs.
    Refuses (``ValueError`` naming ``name``) clouds whose coordinates exceed
    :data:`MAX_COORDINATE`: their squared distances overflow float64.
    """
    m = max((float(np.max(np.abs(c))) for c in clouds if c.size), default=0.0)
    if m > MAX_COORDINATE:
        raise ValueError(
            f"{name} has coordinates up to {m:.3g} (after centring): the squared "
            f"PW/W distances (inertia_, score) overflow float64 beyond "
            f"{MAX_COORDINATE:.0e}. Divide {name} by a constant (e.g. its "
            "largest absolute value) or pass normalize='max_radius'."
        )
    if m == 0.0:
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1])


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
