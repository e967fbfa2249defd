"""Iterated local search for (weighted) independent sets: the Python driver.

The kernels are in :mod:`._kernels` (``ils_init``, ``ils_iterate``); this module
allocates their state, runs them in chunks so that a wall-clock budget can be
checked between chunks, and records the best value over time.
"""

import time

import numpy as np

from . import _kernels as K

# chunks start small (a first timing) and then aim at this many seconds each
_CHUNK_SECONDS = 0.05


def _seed_state(random_state):
    """A non-zero 64-bit xorshift state drawn from a RandomState."""
    hi = int(random_state.randint(1, 2**31))
    lo = int(random_state.randint(0, 2**31))
    return np.array([np.uint64((hi << 32) | lo)], dtype=np.uint64)


def run_local_search(
    A,
    mask,
    weights,
    *,
    max_iter,
    deadline=None,
    random_state,
    start=None,
    history=None,
):
    """Polish the independent ``mask`` of the CSR graph ``A`` with ARW's ILS.

    Parameters
    ----------
    A : scipy.sparse.csr_array
        0/1 symmetric adjacency with sorted int64 indices.
    mask : ndarray of shape (n,)
        An independent set (0/1).
    weights : ndarray of shape (n,) or None
        Non-negative node weights; ``None`` for the unweighted problem.
    max_iter : int
        Number of ILS iterations (perturbation + local search); 0 runs only the
        local search (to a maximal, (1,2)-swap-free solution).
    deadline : float or None
        ``time.perf_counter()`` value after which no new chunk starts. The
        first local search always completes.
    random_state : numpy.random.RandomState
    start : float or None
        Reference time of the history entries (default: now).
    history : list or None
        ``(iteration, best value, seconds, "local_search")`` tuples are
        appended after the first descent and after every chunk.

    Returns
    -------
    best : ndarray of shape (n,), dtype uint8
        The best solution met (never worse than ``mask`` made maximal).
    n_iter : int
        ILS iterations run.
    """
    n = A.shape[0]
    indptr = np.ascontiguousarray(A.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(A.indices, dtype=np.int64)
    weighted = weights is not None
    if weighted:
        w = np.ascontiguousarray(weights, dtype=np.float64)
        positive = w[w > 0]
        unit = float(positive.mean()) if positive.size else 1.0
    else:
        w = np.ones(n)
        unit = 1.0
    start = time.perf_counter() if start is None else start
    st = np.empty((K.N_STATE_ROWS, max(n, 1)), dtype=np.int64)
    sc = np.zeros(K.N_INT_SCALARS, dtype=np.int64)
    # scalars, then (with weights) each node's solution-neighbour weight
    fs = np.zeros(K.N_FLOAT_SCALARS + n, dtype=np.float64)
    fs[K._EPS] = 1e-9 * unit
    fs[K._WUNIT] = unit
    log = np.empty(8 * n + 64, dtype=np.int64)
    best = np.zeros(n, dtype=np.uint8)
    rng = _seed_state(random_state)
    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    if n == 0:
        return best, 0
    K.ils_init(indptr, indices, w, weighted, mask, st, sc, fs, log, best, rng)
    if history is not None:
        history.append(
            (0, _value(best, w, weighted), time.perf_counter() - start, "local_search")
        )
    done = 0
    chunk = 64
    while done < max_iter:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        t0 = time.perf_counter()
        step = min(chunk, max_iter - done)
        ran = K.ils_iterate(
            indptr, indices, w, weighted, st, sc, fs, log, best, rng, step
        )
        done += ran
        elapsed = time.perf_counter() - t0
        if history is not None:
            history.append(
                (
                    done,
                    _value(best, w, weighted),
                    time.perf_counter() - start,
                    "local_search",
                )
            )
        if ran < step:
            break  # nothing left to perturb (every node is in the solution)
        # aim each chunk at _CHUNK_SECONDS, growing at most 4x at a time
        rate = ran / max(elapsed, 1e-6)
        chunk = int(min(max(rate * _CHUNK_SECONDS, 16), 4 * chunk))
    return best, done


def _value(mask, w, weighted):
    if not weighted:
        return int(np.count_nonzero(mask))
    return float(np.dot(mask.astype(np.float64), w))
