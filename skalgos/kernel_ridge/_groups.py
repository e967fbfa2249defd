"""Finite groups acting isometrically on the input manifold, given by generators.

An element is an affine map ``g(x) = A x + b``: ``A`` an orthogonal matrix (a
coordinate permutation, sign flips, a rotation, ...) and ``b`` a translation
(only meaningful on a torus, where it is taken modulo the period). Spec-Avg only
needs the generators; :meth:`elements` enumerates the group for tests, the
group-averaging baseline and :func:`invariance_discrepancy`.
"""

import math

import numpy as np

from ._bases import _ORTH_TOL, _check_int, _Params

__all__ = ["CyclicGroup", "FiniteGroup", "PermutationGroup", "SignFlipGroup"]


class _GroupBase(_Params):
    period = None  # translations are read modulo this period (torus groups)

    def resolve(self, n_features):
        """A copy bound to ``n_features`` (``dim=None`` is inferred here)."""
        raise NotImplementedError  # pragma: no cover

    def generating_set(self):
        """The generators as ``(A, b)`` pairs (``A`` is (dim, dim), ``b`` (dim,))."""
        raise NotImplementedError  # pragma: no cover

    def _modulus(self):
        return self.period

    def _key(self, A, b):
        p = self._modulus()
        if p is not None:
            b = np.mod(b, float(p))
            b = np.where(np.abs(b - float(p)) < 1e-9, 0.0, b)
        return (np.round(A, 8) + 0.0).tobytes() + (np.round(b, 8) + 0.0).tobytes()

    def elements(self, max_elements=100_000):
        """Every element ``(A, b)``, found by closing the generators (BFS).

        Raises ``ValueError`` when the group has more than ``max_elements``
        elements (enumeration is what Spec-Avg avoids; it is for tests and
        baselines on small groups).
        """
        gens = self.generating_set()
        dim = gens[0][0].shape[0] if gens else self.dim
        e = (np.eye(dim), np.zeros(dim))
        seen = {self._key(*e): e}
        frontier = [e]
        while frontier:
            nxt = []
            for A, b in frontier:
                for G, c in gens:
                    # (G, c) o (A, b): x -> G (A x + b) + c
                    new = (G @ A, G @ b + c)
                    if self._modulus() is not None:
                        new = (new[0], np.mod(new[1], float(self._modulus())))
                    k = self._key(*new)
                    if k not in seen:
                        seen[k] = new
                        nxt.append(new)
                        if len(seen) > max_elements:
                            raise ValueError(
                                f"{type(self).__name__} has more than {max_elements} "
                                "elements; enumeration is refused (raise max_elements "
                                "if you really mean it)."
                            )
            frontier = nxt
        return list(seen.values())

    def n_elements(self, max_elements=100_000):
        """Number of elements ``|G|`` (by enumeration)."""
        return len(self.elements(max_elements))

    def apply(self, X, element):
        """``g(X)`` for the rows of ``X``."""
        A, b = element
        return np.asarray(X, dtype=np.float64) @ A.T + b


def _perm_matrix(perm):
    perm = np.asarray(perm)
    P = np.zeros((perm.size, perm.size))
    P[perm, np.arange(perm.size)] = 1.0  # e_i -> e_{perm[i]}
    return P


class PermutationGroup(_GroupBase):
    """The symmetric group permuting ``dim // block`` blocks of coordinates.

    With ``block=1`` it permutes coordinates (``S_dim``); with ``block=3`` on
    ``(S^2)^k`` it permutes the ``k`` points. Two generators: the swap of the
    first two blocks and the cycle of all blocks (the paper's Example 5.2).

    Parameters
    ----------
    dim : int or None, default=None
        Number of coordinates; ``None`` takes it from the data.
    block : int, default=1
        Size of the blocks that are permuted; must divide ``dim``.

    Examples
    --------
    >>> from skalgos.kernel_ridge import PermutationGroup
    >>> PermutationGroup(4).n_elements()
    24
    """

    _param_names = ("dim", "block")

    def __init__(self, dim=None, block=1):
        self.dim = dim
        self.block = block

    def resolve(self, n_features):
        dim = n_features if self.dim is None else self.dim
        _check_int(dim, "PermutationGroup dim", 1)
        _check_int(self.block, "PermutationGroup block", 1)
        if dim % self.block:
            raise ValueError(
                f"PermutationGroup block={self.block} must divide dim={dim}."
            )
        return PermutationGroup(dim, self.block)

    def generating_set(self):
        g = self.resolve(self.dim)
        k, s = g.dim // g.block, g.block
        if k < 2:
            return []
        idx = np.arange(g.dim).reshape(k, s)
        swap = idx.copy()
        swap[[0, 1]] = swap[[1, 0]]
        cycle = np.roll(idx, 1, axis=0)
        out = [(_perm_matrix(swap.ravel()), np.zeros(g.dim))]
        if k > 2:
            out.append((_perm_matrix(cycle.ravel()), np.zeros(g.dim)))
        return out


class SignFlipGroup(_GroupBase):
    """Independent sign flips of the coordinates, ``{+1, -1}^dim``.

    ``dim`` generators (one flip each) for ``2^dim`` elements, the
    ``log2 |G|`` generators of the paper's Proposition B.1. This is the group
    of the paper's experiment on the torus.

    Parameters
    ----------
    dim : int or None, default=None
        Number of coordinates; ``None`` takes it from the data.

    Examples
    --------
    >>> from skalgos.kernel_ridge import SignFlipGroup
    >>> SignFlipGroup(3).n_elements()
    8
    """

    _param_names = ("dim",)

    def __init__(self, dim=None):
        self.dim = dim

    def resolve(self, n_features):
        dim = n_features if self.dim is None else self.dim
        _check_int(dim, "SignFlipGroup dim", 1)
        return SignFlipGroup(dim)

    def generating_set(self):
        dim = self.resolve(self.dim).dim
        out = []
        for i in range(dim):
            A = np.eye(dim)
            A[i, i] = -1.0
            out.append((A, np.zeros(dim)))
        return out


class CyclicGroup(_GroupBase):
    """A cyclic group of order ``order``: a plane rotation or a torus shift.

    ``kind="rotation"`` rotates the plane of coordinates ``axes`` by
    ``2 pi / order`` (the paper's Example 5.3 on the circle ``S^1``; on a
    sphere it is an isometry for any ``dim``). ``kind="translation"`` shifts
    the coordinates ``axes`` by ``period / order``, the same rotation of the
    circle seen on the flat torus.

    Parameters
    ----------
    order : int
        Number of elements.
    dim : int or None, default=None
        Number of coordinates; ``None`` takes it from the data.
    kind : {"rotation", "translation"}, default="rotation"
        How the generator acts.
    axes : tuple of int, default=(0, 1)
        The rotation plane, or the shifted coordinates.
    period : float, default=2.0
        Torus period (``kind="translation"`` only).

    Examples
    --------
    >>> from skalgos.kernel_ridge import CyclicGroup
    >>> CyclicGroup(6, dim=2).n_elements()
    6
    """

    _param_names = ("order", "dim", "kind", "axes", "period")

    def __init__(self, order, dim=None, kind="rotation", axes=(0, 1), period=2.0):
        self.order = order
        self.dim = dim
        self.kind = kind
        self.axes = axes
        self.period = period

    def resolve(self, n_features):
        dim = n_features if self.dim is None else self.dim
        _check_int(self.order, "CyclicGroup order", 1)
        _check_int(dim, "CyclicGroup dim", 1)
        if self.kind not in ("rotation", "translation"):
            raise ValueError(
                f"CyclicGroup kind must be 'rotation' or 'translation'; got {self.kind!r}."
            )
        axes = tuple(int(a) for a in self.axes)
        if any(a < 0 or a >= dim for a in axes) or len(set(axes)) != len(axes):
            raise ValueError(f"CyclicGroup axes={self.axes} do not fit dim={dim}.")
        if self.kind == "rotation" and len(axes) != 2:
            raise ValueError("CyclicGroup(kind='rotation') needs two axes (a plane).")
        return CyclicGroup(self.order, dim, self.kind, axes, self.period)

    def generating_set(self):
        g = self.resolve(self.dim)
        A, b = np.eye(g.dim), np.zeros(g.dim)
        if g.kind == "rotation":
            i, j = g.axes
            t = 2 * math.pi / g.order
            A[i, i] = A[j, j] = math.cos(t)
            A[j, i], A[i, j] = math.sin(t), -math.sin(t)
        else:
            b[list(g.axes)] = float(g.period) / g.order
        return [(A, b)]

    def _modulus(self):
        return float(self.period) if self.kind == "translation" else None


class FiniteGroup(_GroupBase):
    """A finite group given by its generators.

    Parameters
    ----------
    generators : list
        Each either a permutation of ``range(dim)`` (1-d integer array: the
        coordinate ``i`` is sent to position ``perm[i]``) or an orthogonal
        ``(dim, dim)`` matrix ``A`` acting as ``x -> A x``.
    translations : list of arrays or None, default=None
        A translation ``b`` per generator (``x -> A x + b``), for torus
        groups; read modulo ``period``.
    period : float, default=2.0
        Torus period for the translations.

    Notes
    -----
    Matrices must be orthogonal (to ``1e-8``), since Spec-Avg needs an
    isometric action; a non-orthogonal matrix is refused with a ``ValueError``.

    Examples
    --------
    >>> from skalgos.kernel_ridge import FiniteGroup
    >>> FiniteGroup([[1, 2, 0]]).n_elements()  # the 3-cycle
    3
    """

    _param_names = ("generators", "translations", "period")

    def __init__(self, generators, translations=None, period=2.0):
        self.generators = generators
        self.translations = translations
        self.period = period

    def _parsed(self):
        gens = self.generators
        if not isinstance(gens, (list, tuple)) or len(gens) == 0:
            raise ValueError("FiniteGroup generators must be a non-empty list.")
        mats = []
        for k, g in enumerate(gens):
            g = np.asarray(g)
            if g.ndim == 1:
                if g.dtype.kind not in "iu" or sorted(g.tolist()) != list(
                    range(g.size)
                ):
                    raise ValueError(
                        f"FiniteGroup generator {k} is 1-d but not a permutation of "
                        f"range({g.size}): {g.tolist()}."
                    )
                mats.append(_perm_matrix(g))
            elif g.ndim == 2 and g.shape[0] == g.shape[1]:
                A = g.astype(np.float64)
                err = np.abs(A.T @ A - np.eye(A.shape[0])).max()
                if err > _ORTH_TOL:
                    raise ValueError(
                        f"FiniteGroup generator {k} is not an orthogonal matrix "
                        f"(|A^T A - I| = {err:.3g}); Spec-Avg needs isometries."
                    )
                mats.append(A)
            else:
                raise ValueError(
                    f"FiniteGroup generator {k} must be a permutation or a square "
                    f"matrix; got shape {g.shape}."
                )
        dims = {A.shape[0] for A in mats}
        if len(dims) != 1:
            raise ValueError(f"FiniteGroup generators act on different dims {dims}.")
        dim = dims.pop()
        tr = self.translations
        if tr is None:
            tr = [np.zeros(dim)] * len(mats)
        elif len(tr) != len(mats):
            raise ValueError("FiniteGroup needs one translation per generator.")
        tr = [np.asarray(b, dtype=np.float64).reshape(dim) for b in tr]
        return list(zip(mats, tr))

    @property
    def dim(self):
        """Dimension the generators act on."""
        return self._parsed()[0][0].shape[0]

    def resolve(self, n_features):
        self._parsed()
        return self

    def generating_set(self):
        return self._parsed()
