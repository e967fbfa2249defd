"""Point-cloud shapes for the Procrustes-Wasserstein family."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_shape_clouds"]

SHAPES_2D = ("F", "spiral", "star", "heart", "crescent")
SHAPES_3D = ("helix", "s_curve", "swiss_roll", "trefoil")
SHAPES = SHAPES_2D + SHAPES_3D + ("digits",)


def _polyline(vertices, n, rng):
    """``n`` points uniformly along a closed polygon."""
    V = np.asarray(vertices, float)
    seg = np.roll(V, -1, axis=0) - V
    lengths = np.sqrt((seg**2).sum(axis=1))
    t = np.sort(rng.uniform(0, lengths.sum(), n))
    cum = np.concatenate([[0.0], np.cumsum(lengths)])
    k = np.clip(np.searchsorted(cum, t, side="right") - 1, 0, len(V) - 1)
    return V[k] + seg[k] * ((t - cum[k]) / lengths[k])[:, None]


def _reference(shape, n, rng):
    if shape == "F":  # filled letter F: chiral, no symmetry
        rects = np.array([[0, 0, 1, 5], [1, 4, 3.5, 5], [1, 2, 2.7, 3]], float)
        areas = (rects[:, 2] - rects[:, 0]) * (rects[:, 3] - rects[:, 1])
        r = rng.choice(len(rects), n, p=areas / areas.sum())
        u = rng.uniform(size=(n, 2))
        lo, hi = rects[r, :2], rects[r, 2:]
        return lo + u * (hi - lo)
    if shape == "spiral":
        t = np.sort(rng.uniform(0.5, 3 * np.pi, n))
        return np.c_[t * np.cos(t), t * np.sin(t)]
    if shape == "star":
        ang = np.pi / 2 + np.arange(10) * np.pi / 5
        rad = np.where(np.arange(10) % 2 == 0, 1.0, 0.4)
        return _polyline(np.c_[rad * np.cos(ang), rad * np.sin(ang)], n, rng)
    if shape == "heart":
        t = rng.uniform(0, 2 * np.pi, n)
        x = 16 * np.sin(t) ** 3
        y = 13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t)
        return np.c_[x, y]
    if shape == "crescent":
        pts = []
        while len(pts) < n:
            p = rng.uniform(-1, 1, size=(4 * n, 2))
            inside = (p**2).sum(axis=1) <= 1
            outside = ((p - [0.45, 0.1]) ** 2).sum(axis=1) >= 0.6
            pts.extend(p[inside & outside])
        return np.array(pts[:n])
    if shape == "helix":  # chiral in 3-D
        t = np.sort(rng.uniform(0, 4 * np.pi, n))
        return np.c_[np.cos(t), np.sin(t), 0.15 * t]
    if shape == "trefoil":
        t = rng.uniform(0, 2 * np.pi, n)
        return np.c_[
            np.sin(t) + 2 * np.sin(2 * t),
            np.cos(t) - 2 * np.cos(2 * t),
            -np.sin(3 * t),
        ]
    from sklearn.datasets import make_s_curve, make_swiss_roll

    seed = int(rng.randint(2**31 - 1))
    if shape == "s_curve":
        return make_s_curve(n, random_state=seed)[0]
    return make_swiss_roll(n, random_state=seed)[0]


def _normalize(X):
    X = X - X.mean(axis=0)
    r = np.sqrt((X**2).sum(axis=1)).max()
    return X / r if r > 0 else X


def _random_orthogonal(d, rng, reflect):
    """Haar-random element of O(d) (``reflect``) or SO(d)."""
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    Q = Q * np.sign(np.diag(R))
    if not reflect and np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def _digit_clouds(n_clouds, classes, threshold, rng):
    from sklearn.datasets import load_digits

    data = load_digits()
    images, target = data.images, data.target
    per_class = n_clouds // len(classes)
    extra = n_clouds - per_class * len(classes)
    clouds, labels = [], []
    for k, c in enumerate(classes):
        idx = np.flatnonzero(target == c)
        m = per_class + (1 if k < extra else 0)
        if m > idx.size:
            raise ValueError(
                f"n_clouds asks for {m} images of digit {c}; only {idx.size} exist."
            )
        for i in rng.choice(idx, m, replace=False):
            rows, cols = np.nonzero(images[i] > threshold)
            clouds.append(np.c_[cols, -rows].astype(float))
            labels.append(c)
    return clouds, np.array(labels)


def make_shape_clouds(
    n_clouds=20,
    shape="F",
    *,
    n_points=200,
    noise=0.01,
    resample=True,
    rotate=True,
    reflect=True,
    permute=True,
    normalize=True,
    digits=(0, 1, 2, 3, 4),
    threshold=4.0,
    return_references=False,
    random_state=None,
):
    """Noisy, randomly rotated / reflected / permuted copies of reference shapes.

    The copies follow the noise model of the Procrustes-Wasserstein paper's
    initialization study: each point of the reference is kept once, twice or
    three times (probabilities 0.90 / 0.07 / 0.03), Gaussian noise is added,
    the points are shuffled and a Haar-random orthogonal map is applied.
    ``shape="digits"`` instead turns scikit-learn's 8x8 digit images into
    clouds of active pixel coordinates (the paper uses MNIST the same way).

    Parameters
    ----------
    n_clouds : int, default=20
        Number of clouds. With several shapes they are spread evenly.
    shape : str or list of str, default="F"
        2-D: ``"F"`` (a filled letter F, chiral), ``"spiral"``, ``"star"``,
        ``"heart"``, ``"crescent"``; 3-D: ``"helix"``, ``"s_curve"``,
        ``"swiss_roll"``, ``"trefoil"``; or ``"digits"``. A list of shapes of
        the same dimension gives a labelled mixture.
    n_points : int, default=200
        Points of each reference shape (ignored for digits).
    noise : float, default=0.01
        Standard deviation of the Gaussian noise, relative to the unit radius
        of the normalized reference (the paper: 0.01).
    resample : bool, default=True
        Apply the keep / duplicate / triplicate step, so that copies have
        different sizes.
    rotate : bool, default=True
        Apply a random orthogonal map to every copy.
    reflect : bool, default=True
        Allow reflections (O(d)); False draws rotations only (SO(d)).
    permute : bool, default=True
        Shuffle the points of every copy.
    normalize : bool, default=True
        Centre each reference (and digit cloud) and scale it to unit maximum
        radius before the noise.
    digits : sequence of int, default=(0, 1, 2, 3, 4)
        Digit classes used by ``shape="digits"``.
    threshold : float, default=4.0
        A pixel (intensity 0-16) is active when above this value.
    return_references : bool, default=False
        Also return the reference clouds (one per shape, or the noiseless
        unrotated digit clouds).
    random_state : int, RandomState instance or None, default=None
        Seeds everything, including the reference shapes.

    Returns
    -------
    clouds : list of ndarray of shape (n_i, d)
    y : ndarray of shape (n_clouds,)
        Index of the shape of each cloud in ``shape`` (the digit for digits).
    references : list of ndarray
        Only with ``return_references=True``.

    Examples
    --------
    >>> from skalgos.datasets import make_shape_clouds
    >>> clouds, y = make_shape_clouds(4, shape=["F", "spiral"], random_state=0)
    >>> len(clouds), clouds[0].shape[1], y.tolist()
    (4, 2, [0, 0, 1, 1])
    >>> clouds, y = make_shape_clouds(10, shape="digits", random_state=0)
    >>> sorted(set(y.tolist()))
    [0, 1, 2, 3, 4]
    """
    if not isinstance(n_clouds, numbers.Integral) or n_clouds < 1:
        raise ValueError(f"n_clouds must be a positive integer; got {n_clouds!r}.")
    if not isinstance(n_points, numbers.Integral) or n_points < 1:
        raise ValueError(f"n_points must be a positive integer; got {n_points!r}.")
    if not isinstance(noise, numbers.Real) or noise < 0:
        raise ValueError(f"noise must be a non-negative number; got {noise!r}.")
    shapes = [shape] if isinstance(shape, str) else list(shape)
    if not shapes:
        raise ValueError("shape must name at least one shape.")
    for s in shapes:
        if s not in SHAPES:
            raise ValueError(f"Unknown shape {s!r}; choose from {SHAPES}.")
    if "digits" in shapes and len(shapes) > 1:
        raise ValueError("shape='digits' cannot be mixed with other shapes.")
    dims = {2 if s in SHAPES_2D + ("digits",) else 3 for s in shapes}
    if len(dims) > 1:
        raise ValueError("All shapes must have the same dimension (2-D or 3-D).")
    rng = check_random_state(random_state)

    if shapes == ["digits"]:
        refs, y = _digit_clouds(n_clouds, list(digits), threshold, rng)
        if normalize:
            refs = [_normalize(r) for r in refs]
        bases = refs
    else:
        refs = [_reference(s, n_points, rng) for s in shapes]
        if normalize:
            refs = [_normalize(r) for r in refs]
        y = np.repeat(np.arange(len(shapes)), -(-n_clouds // len(shapes)))[:n_clouds]
        y = np.sort(y)
        bases = [refs[k] for k in y]

    d = bases[0].shape[1]
    clouds = []
    for base in bases:
        X = base
        if resample:
            reps = rng.choice(3, size=X.shape[0], p=[0.90, 0.07, 0.03]) + 1
            X = np.repeat(X, reps, axis=0)
        if noise > 0:
            X = X + rng.normal(scale=noise, size=X.shape)
        if permute:
            X = X[rng.permutation(X.shape[0])]
        if rotate:
            X = X @ _random_orthogonal(d, rng, reflect)
        clouds.append(np.ascontiguousarray(X))
    if return_references:
        return clouds, y, [r.copy() for r in refs]
    return clouds, y
