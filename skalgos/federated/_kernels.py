"""Client-batched array kernels of the federated simulator.

All clients' parameters live in one array of shape ``(n_clients, d + 1, k)``
(the last row is the intercept) and their local steps run in lock-step, with a
per-client mask for unequal step counts. The code is written against the array
API namespace ``xp`` (NumPy, array-api-strict, torch, CuPy), so the same kernel
runs on CPU and GPU. Random draws (mini-batches) are made with NumPy and moved
to the arrays' device.
"""

import numpy as np

from ..utils._backend import device as _device
from ..utils._backend import to_numpy


class ClientData:
    """Padded per-client data: ``X`` (c, m, d+1), ``Y`` (c, m, k), ``w`` (c, m).

    ``w`` holds the sample weights (0 on padding rows), ``n`` the client sizes
    in rows (NumPy int array), ``size`` the clients' total sample weight
    (NumPy floats; ``n`` for unit weights): losses and gradients are
    weighted means (``sum_j w_j l_j / size``) and the clients' shares
    ``p_i`` are ``size_i / sum(size)``, so an integer weight is a repeated
    row. ``task`` is ``"classification"`` or ``"regression"``,
    ``hidden`` is ``None`` (linear model) or the hidden width of the MLP, whose
    parameters are packed in one column (see :func:`unpack`).
    """

    def __init__(self, xp, X, Y, w, n, task, alpha, hidden=None, w_np=None):
        self.xp, self.X, self.Y, self.w, self.n = xp, X, Y, w, n
        # NumPy copy of the weights: the mini-batch draws are made with NumPy
        self.w_np = np.asarray(to_numpy(w) if w_np is None else w_np, dtype=float)
        self.size = self.w_np.sum(axis=1)
        self.task, self.alpha, self.hidden = task, alpha, hidden
        self.device = _device(X)
        d1, k = X.shape[-1], Y.shape[-1]
        if hidden is None:
            reg = np.ones((d1, 1))
            reg[-1] = 0.0  # the intercept is not penalised
        else:
            reg = np.ones((d1, hidden)), np.ones((hidden + 1, k))
            reg[0][-1] = 0.0
            reg[1][-1] = 0.0
            reg = np.concatenate([reg[0].ravel(), reg[1].ravel()])[:, None]
        self.reg = xp.asarray(reg, dtype=X.dtype, device=self.device)
        self.n_float = xp.asarray(self.size, dtype=X.dtype, device=self.device)

    def subset(self, idx):
        """The data of clients ``idx`` (a list of ints)."""
        xp = self.xp
        take = xp.asarray(np.asarray(idx), device=self.device)
        return ClientData(
            xp,
            xp.take(self.X, take, axis=0),
            xp.take(self.Y, take, axis=0),
            xp.take(self.w, take, axis=0),
            self.n[np.asarray(idx)],
            self.task,
            self.alpha,
            self.hidden,
            w_np=self.w_np[np.asarray(idx)],
        )


def _mT(xp, A):
    return xp.permute_dims(A, (0, 2, 1))


def n_params(d1, k, hidden):
    """Shape of one client's parameter array."""
    if hidden is None:
        return (d1, k)
    return (d1 * hidden + (hidden + 1) * k, 1)


def unpack(xp, W, d1, k, hidden):
    """MLP layers ``W1`` (c, d+1, h) and ``W2`` (c, h+1, k) from packed ``W``."""
    c = W.shape[0]
    W1 = xp.reshape(W[:, : d1 * hidden, 0], (c, d1, hidden))
    W2 = xp.reshape(W[:, d1 * hidden :, 0], (c, hidden + 1, k))
    return W1, W2


def forward(xp, X, W, k, hidden):
    """Scores (c, m, k) and the hidden activations (MLP) for inputs (c, m, d+1)."""
    if hidden is None:
        return xp.matmul(X, W), None
    W1, W2 = unpack(xp, W, X.shape[-1], k, hidden)
    H = xp.tanh(xp.matmul(X, W1))
    ones = xp.ones(H.shape[:2] + (1,), dtype=H.dtype, device=_device(H))
    H1 = xp.concat([H, ones], axis=2)
    return xp.matmul(H1, W2), H1


def _scores(data, W):
    return forward(data.xp, data.X, W, data.Y.shape[-1], data.hidden)


def residual(data, W, Z=None):
    """Prediction minus target, (c, m, k), for parameters ``W``."""
    xp = data.xp
    if Z is None:
        Z = _scores(data, W)[0]
    if data.task == "classification":
        Z = Z - xp.max(Z, axis=-1, keepdims=True)
        E = xp.exp(Z)
        Z = E / xp.sum(E, axis=-1, keepdims=True)
    return Z - data.Y


def gradients(data, W, weights, denom):
    """Per-client gradients of the (weighted) mean loss plus the L2 penalty.

    ``weights`` (c, m) weigh the rows of each client and ``denom`` (c,) is the
    normaliser (the client size for a full batch, the batch size otherwise).
    """
    xp = data.xp
    Z, H1 = _scores(data, W)
    R = residual(data, W, Z) * weights[:, :, None] / denom[:, None, None]
    if data.hidden is None:
        G = xp.matmul(_mT(xp, data.X), R)
    else:
        h, c = data.hidden, W.shape[0]
        _, W2 = unpack(xp, W, data.X.shape[-1], data.Y.shape[-1], h)
        G2 = xp.matmul(_mT(xp, H1), R)
        dH = xp.matmul(R, _mT(xp, W2[:, :h, :]))
        dA = dH * (1.0 - H1[:, :, :h] * H1[:, :, :h])
        G1 = xp.matmul(_mT(xp, data.X), dA)
        G = xp.concat([xp.reshape(G1, (c, -1, 1)), xp.reshape(G2, (c, -1, 1))], axis=1)
    if data.alpha:
        G = G + data.alpha * data.reg * W
    return G


def client_losses(data, W):
    """Per-client mean loss (cross-entropy or half squared error), (c,)."""
    xp = data.xp
    Z = _scores(data, W)[0]
    if data.task == "classification":
        Z = Z - xp.max(Z, axis=-1, keepdims=True)
        logp = Z - xp.log(xp.sum(xp.exp(Z), axis=-1, keepdims=True))
        per = -xp.sum(data.Y * logp, axis=-1)
    else:
        R = Z - data.Y
        per = 0.5 * xp.sum(R * R, axis=-1)
    return xp.sum(per * data.w, axis=1) / data.n_float


def client_accuracy(data, W):
    """Per-client (weighted) accuracy (classification) as a (c,) array."""
    xp = data.xp
    Z = _scores(data, W)[0]
    hit = xp.astype(xp.argmax(Z, axis=-1) == xp.argmax(data.Y, axis=-1), W.dtype)
    return xp.sum(hit * data.w, axis=1) / data.n_float


def _batch_weights(data, batch_size, rng):
    """Row weights and normaliser of one mini-batch step for every client.

    Rows are drawn with probability ``w_j / size`` (uniformly for equal
    weights), as drawing from the data with every row repeated ``w_j``
    times; each draw then counts once, so the step is an unbiased estimate
    of the weighted mean gradient.
    """
    xp = data.xp
    n = data.n
    if batch_size is None or np.all(batch_size >= n):
        return data.w, data.n_float
    c, m = data.w.shape
    b = np.minimum(batch_size, n)
    counts = np.zeros((c, m))
    for i in range(c):  # O(c * b) index draws; the heavy algebra stays batched
        wi = data.w_np[i, : n[i]]
        if np.all(wi == wi[0]):  # equal weights (a client's total is > 0)
            np.add.at(counts[i], rng.randint(0, n[i], size=b[i]), 1.0)
        else:
            draw = rng.choice(n[i], size=b[i], p=wi / wi.sum())
            np.add.at(counts[i], draw, 1.0)
    counts = xp.asarray(counts, dtype=data.X.dtype, device=data.device)
    denom = xp.asarray(b, dtype=data.X.dtype, device=data.device)
    return counts, denom


def local_sgd(
    data,
    W0,
    steps,
    learning_rate,
    rng,
    *,
    batch_size=None,
    anchor=None,
    prox_mu=0.0,
    correction=None,
    beta=1.0,
    momentum=None,
    normalize=False,
    eps=1e-12,
    grad_scale=1.0,
    ecado=None,
    trace=None,
):
    """Run every client's local algorithm in lock-step.

    Parameters
    ----------
    data : ClientData
        The clients to run (c of them).
    W0 : array of shape (c, d+1, k)
        Start points.
    steps : ndarray of int, shape (c,)
        Local step budgets (masks stop a client once its budget is used).
    learning_rate : float
        Local step size (ignored with ``ecado``).
    rng : numpy.random.RandomState
        Mini-batch draws.
    anchor : array (c, d+1, k), optional
        Proximal centre (FedProx) with weight ``prox_mu``.
    correction : array (c, d+1, k), optional
        Added to the gradient: the flow ``I_i / p_i`` (FedECADO) or the
        control-variate correction ``hbar - h_i`` (MasFL).
    beta, momentum :
        Direction ``beta * (g + correction) + (1 - beta) * momentum`` (MasFL).
    normalize : bool
        Normalised steps ``d / max(||d||, eps)`` (AdaMasFL).
    ecado : dict, optional
        FedECADO's adaptive step control: keys ``step_init``, ``step_max``,
        ``lte_tol``, ``window``.
    trace : list, optional
        If given, one dict per step is appended (NumPy arrays over the
        clients): ``active`` mask, ``step`` taken and, with ``ecado``, the
        direction change ``||v_j - v_{j-1}||_inf`` the controller saw
        (``None`` at the first step). For inspecting the step control.

    Returns
    -------
    dict with ``W`` (end points), ``mean_grad`` (mean raw gradient over the
    steps taken), ``tau`` (local time: sum of step sizes, NumPy-free xp
    array), ``last_dir`` (last direction) and ``n_steps`` (xp array).
    """
    xp = data.xp
    dt_type = W0.dtype
    W = xp.asarray(W0, copy=True)
    steps_x = xp.asarray(steps, dtype=dt_type, device=data.device)
    c = W.shape[0]
    gsum = xp.zeros_like(W)
    tau = xp.zeros((c,), dtype=dt_type, device=data.device)
    taken = xp.zeros((c,), dtype=dt_type, device=data.device)
    last = xp.zeros_like(W)
    if ecado is not None:
        dt = xp.full((c,), ecado["step_init"], dtype=dt_type, device=data.device)
        window = ecado["window"]
    for j in range(int(np.max(steps)) if len(steps) else 0):
        change = None
        active = xp.astype(steps_x > j, dt_type)
        if ecado is not None:
            # a client stops once its local time reaches the window
            active = active * xp.astype(tau < window * (1 - 1e-12), dt_type)
        weights, denom = _batch_weights(data, batch_size, rng)
        g = gradients(data, W, weights, denom)
        if grad_scale != 1.0:
            g = g * grad_scale
        gsum = gsum + active[:, None, None] * g
        d = g if correction is None else g + correction
        if momentum is not None:
            d = beta * d + (1.0 - beta) * momentum
        if prox_mu:
            d = d + prox_mu * (W - anchor)
        if normalize:
            nrm = xp.sqrt(xp.sum(d * d, axis=(1, 2)))
            d = d / xp.maximum(nrm, xp.full_like(nrm, eps))[:, None, None]
        if ecado is not None:
            if j > 0:
                change = xp.max(xp.abs(d - last), axis=(1, 2))
                safe = xp.where(change > 0, change, xp.ones_like(change))
                lte = xp.where(
                    change > 0,
                    2.0 * ecado["lte_tol"] / safe,
                    xp.full_like(change, ecado["step_max"]),
                )
                dt = xp.minimum(lte, xp.full_like(lte, ecado["step_max"]))
            # do not step past the window end
            dt_j = xp.minimum(dt, window - tau)
            step = active * dt_j
        else:
            step = active * learning_rate
        W = W - step[:, None, None] * d
        if trace is not None:
            trace.append(
                {
                    "active": to_numpy(active),
                    "step": to_numpy(step),
                    "change": None if change is None else to_numpy(change),
                }
            )
        tau = tau + step
        taken = taken + active
        last = xp.where(active[:, None, None] > 0, d, last)
    safe = xp.maximum(taken, xp.ones_like(taken))
    return {
        "W": W,
        "mean_grad": gsum / safe[:, None, None],
        "tau": tau,
        "last_dir": last,
        "n_steps": taken,
    }
