"""Synthetic languages whose compositionality is known or ordered by design.

Used by ``skalgos.metrics.RepresentationalCompositionality``: sentences
``W`` (integer tokens) paired with representations ``Z``.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..utils._skellam import discrete_gaussian_nll, sample_discrete_gaussian

__all__ = [
    "make_grammar_language",
    "make_lookup_table_language",
    "make_object_language",
]


def _terms(k_language, logp_w, k_semantics, nll_noise, per_sample):
    agg = np.mean if per_sample else np.sum
    terms = {
        "k_language": float(k_language),
        "k_w_given_language": float(agg(-logp_w)),
        "k_semantics": float(k_semantics),
        "k_z_given_w_semantics": float(agg(nll_noise)),
    }
    num = sum(terms.values())
    terms["k_z"] = num
    terms["k_z_given_w"] = terms["k_semantics"] + terms["k_z_given_w_semantics"]
    terms["compositionality"] = num / terms["k_z_given_w"]
    return terms


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "sentence_length": [Interval(Integral, 1, None, closed="left")],
        "vocab_size": [Interval(Integral, 1, None, closed="left")],
        "z_dim": [Interval(Integral, 1, None, closed="left")],
        "disentanglement": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="neither")],
        "precision": [Interval(Real, 0, None, closed="neither")],
        "per_sample": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_lookup_table_language(
    n_samples=1000,
    sentence_length=16,
    vocab_size=10,
    z_dim=64,
    disentanglement=1,
    noise=0.01,
    precision=0.01,
    per_sample=False,
    random_state=None,
):
    """Sentences decoded by a lookup table, with the exact complexity terms.

    Each sentence has ``sentence_length`` (M) tokens drawn uniformly from
    ``vocab_size`` (K) words. The sentence is cut into ``M / q`` blocks of
    ``q = disentanglement`` consecutive words; each block indexes one of ``K**q``
    rows of a lookup table of discretized ``N(0, 1)`` entries of width
    ``z_dim / (M / q)``, and ``Z`` is the concatenation of the rows plus
    discretized Gaussian noise of standard deviation ``noise``.

    Parameters
    ----------
    n_samples : int, default=1000
    sentence_length : int, default=16
        Must be a multiple of ``disentanglement``.
    vocab_size : int, default=10
    z_dim : int, default=64
        Must be a multiple of ``sentence_length / disentanglement``.
    disentanglement : int, default=1
        Words per table lookup; 1 is fully disentangled (one word, one part of
        ``Z``), ``sentence_length`` is a holistic table over whole sentences.
    noise : float, default=0.01
        Standard deviation of the noise on ``Z``.
    precision : float, default=0.01
        Grid step of the discrete Gaussian code.
    per_sample : bool, default=False
        If True, the data terms ``k_w_given_language`` and
        ``k_z_given_w_semantics`` are means over samples instead of sums (the
        form the paper's synthetic figures use).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    W : ndarray of shape (n_samples, sentence_length), dtype int64
    Z : ndarray of shape (n_samples, z_dim), dtype float64
    terms : dict
        The exact description lengths in nats: ``k_language`` = K(p_w) =
        ln K + ln M, ``k_w_given_language`` = K(W|p_w) = N M ln K,
        ``k_semantics`` = K(f) (code of the table), ``k_z_given_w_semantics``
        = K(Z|W,f) (code of the noise), their sums ``k_z`` and ``k_z_given_w``,
        and ``compositionality`` = ``k_z / k_z_given_w``.

    References
    ----------
    .. [1] Elmoznino, Jiralerspong, Bengio, Lajoie. "Towards a Formal Theory of
       Representational Compositionality", ICML 2025.

    Examples
    --------
    >>> from skalgos.datasets import make_lookup_table_language
    >>> W, Z, terms = make_lookup_table_language(100, 4, 5, 8, random_state=0)
    >>> W.shape, Z.shape, terms["compositionality"] > 1
    ((100, 4), (100, 8), True)
    """
    M, K, q = sentence_length, vocab_size, disentanglement
    if M % q:
        raise ValueError(
            f"sentence_length ({M}) must be a multiple of disentanglement ({q})."
        )
    n_pos = M // q
    if z_dim % n_pos:
        raise ValueError(
            f"z_dim ({z_dim}) must be a multiple of sentence_length / "
            f"disentanglement ({n_pos})."
        )
    width = z_dim // n_pos
    if K**q * width > 5e7:
        raise ValueError(
            f"The lookup table would have vocab_size**disentanglement * width = "
            f"{K**q * width:.3g} entries; lower vocab_size or disentanglement "
            f"(the paper's disentanglement sweep uses vocab_size=2)."
        )
    rng = check_random_state(random_state)
    table = sample_discrete_gaussian(rng, (K**q, width), 0.0, 1.0, precision)
    W = rng.randint(0, K, size=(n_samples, M)).astype(np.int64)
    blocks = W.reshape(n_samples, n_pos, q)
    entry = (blocks * (K ** np.arange(q))).sum(axis=2)
    mean = table[entry].reshape(n_samples, z_dim)
    eps = sample_discrete_gaussian(rng, mean.shape, 0.0, noise, precision)
    Z = mean + eps
    terms = _terms(
        np.log(K) + np.log(M),
        np.full(n_samples, -M * np.log(K)),
        discrete_gaussian_nll(table, 0.0, 1.0, precision).sum(),
        discrete_gaussian_nll(eps, 0.0, noise, precision).sum(axis=1),
        per_sample,
    )
    return W, Z, terms


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "sentence_length": [Interval(Integral, 2, None, closed="left")],
        "vocab_size": [Interval(Integral, 1, None, closed="left")],
        "z_dim": [Interval(Integral, 1, None, closed="left")],
        "n_terminal_pos": [Interval(Integral, 1, None, closed="left")],
        "width": [Interval(Integral, 1, None, closed="left")],
        "depth": [Interval(Integral, 1, None, closed="left")],
        "composition": [StrOptions({"linear", "tensorproduct"})],
        "noise": [Interval(Real, 0, None, closed="neither")],
        "precision": [Interval(Real, 0, None, closed="neither")],
        "per_sample": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_grammar_language(
    n_samples=1000,
    sentence_length=16,
    vocab_size=100,
    z_dim=10,
    n_terminal_pos=5,
    width=3,
    depth=2,
    composition="linear",
    noise=0.01,
    precision=0.01,
    per_sample=False,
    random_state=None,
):
    """Sentences composed by a binary grammar, with the exact complexity terms.

    Words are assigned to ``n_terminal_pos`` (T) parts of speech. A sentence
    is parsed by pairing adjacent constituents level by level (a balanced
    binary parse; an odd last constituent moves up unchanged). At level 1 the
    category of a pair of parts of speech is given by a random table into
    ``width`` non-terminals; levels 2 .. ``depth`` have tables of their own,
    and deeper levels reuse the last one (recursion). Each rule, i.e. each
    (level table, left category, right category), has its own semantics: a
    ``2 z_dim x z_dim`` matrix (``"linear"``) or two role vectors
    (``"tensorproduct"``: ``x * r_x + x + y * r_y + y``, as in the official
    code). Word embeddings and rule parameters are discretized ``N(0, 1)``.

    Parameters
    ----------
    n_samples : int, default=1000
    sentence_length : int, default=16
    vocab_size : int, default=100
    z_dim : int, default=10
    n_terminal_pos : int, default=5
    width : int, default=3
        Non-terminal categories per level: more width means more rules.
    depth : int, default=2
        Levels with rule tables of their own.
    composition : {"linear", "tensorproduct"}, default="linear"
    noise, precision, per_sample, random_state
        As in :func:`make_lookup_table_language`.

    Returns
    -------
    W : ndarray of shape (n_samples, sentence_length), dtype int64
    Z : ndarray of shape (n_samples, z_dim)
    terms : dict
        As in :func:`make_lookup_table_language`, with K(p_w) = K ln T +
        (T + 1) T ln 2 (the part of speech of every word and the allowed
        transitions, as the official code counts it) and K(f) the code of the
        word embeddings and of the parameters of every rule.

    Notes
    -----
    The paper's grammars are parsed with an Earley parser over hand-written
    rule sets. This generator is ours: the balanced parse and the level
    tables make "width" and "depth" two knobs that add rules, which is what
    the paper's grammar sweeps vary, and they need no parser.

    Examples
    --------
    >>> from skalgos.datasets import make_grammar_language
    >>> W, Z, terms = make_grammar_language(50, 8, 20, 4, random_state=0)
    >>> W.shape, Z.shape
    ((50, 8), (50, 4))
    """
    rng = check_random_state(random_state)
    T, D, K = n_terminal_pos, z_dim, vocab_size
    pos = rng.randint(0, T, size=K)
    emb = sample_discrete_gaussian(rng, (K, D), 0.0, 1.0, precision)
    W = rng.randint(0, K, size=(n_samples, sentence_length)).astype(np.int64)

    # Category tables: level 1 maps (T, T) -> width; later levels (width, width).
    tables = [rng.randint(0, width, size=(T, T))]
    tables += [rng.randint(0, width, size=(width, width)) for _ in range(depth - 1)]
    params = {}  # (level table index, left cat, right cat) -> rule parameters
    used_params = []

    def rule(level, a, b):
        key = (min(level, depth - 1), int(a), int(b))
        if key not in params:
            if composition == "linear":
                p = sample_discrete_gaussian(rng, (2 * D, D), 0.0, 1.0, precision)
                used_params.append(p)
            else:
                p = (
                    sample_discrete_gaussian(rng, (D,), 0.0, 1.0, precision),
                    sample_discrete_gaussian(rng, (D,), 0.0, 1.0, precision),
                )
                used_params.extend(p)
            params[key] = p
        return key

    # Draw every rule's parameters up front, in a fixed order, so that Z does
    # not depend on which rules the sample happens to use.
    cats = [np.arange(T)] + [np.arange(width)] * (depth - 1)
    for level, c in enumerate(cats):
        for a in c:
            for b in c:
                rule(level, a, b)

    def compose(key, x, y):
        p = params[key]
        if composition == "linear":
            return np.concatenate([x, y], axis=1) @ p
        return x * p[0] + x + y * p[1] + y

    values = emb[W]  # (n, M, D)
    categories = pos[W]  # (n, M)
    level = 0
    while values.shape[1] > 1:
        m = values.shape[1]
        pairs = m // 2
        new_vals, new_cats = [], []
        for j in range(pairs):
            a, b = categories[:, 2 * j], categories[:, 2 * j + 1]
            tab = tables[min(level, depth - 1)]
            out_cat = tab[a, b]
            out = np.empty((values.shape[0], D))
            for key_a in np.unique(a):
                for key_b in np.unique(b):
                    sel = (a == key_a) & (b == key_b)
                    if sel.any():
                        key = rule(level, key_a, key_b)
                        out[sel] = compose(
                            key, values[sel, 2 * j], values[sel, 2 * j + 1]
                        )
            new_vals.append(out)
            new_cats.append(out_cat)
        if m % 2:
            new_vals.append(values[:, -1])
            new_cats.append(categories[:, -1] % width)
        values = np.stack(new_vals, axis=1)
        categories = np.stack(new_cats, axis=1)
        level += 1
    mean = values[:, 0]
    eps = sample_discrete_gaussian(rng, mean.shape, 0.0, noise, precision)
    Z = mean + eps
    k_sem = discrete_gaussian_nll(emb, 0.0, 1.0, precision).sum() + sum(
        discrete_gaussian_nll(p, 0.0, 1.0, precision).sum() for p in used_params
    )
    terms = _terms(
        K * np.log(T) + (T + 1) * T * np.log(2),
        np.full(n_samples, -sentence_length * np.log(K)),
        k_sem,
        discrete_gaussian_nll(eps, 0.0, noise, precision).sum(axis=1),
        per_sample,
    )
    return W, Z, terms


@validate_params(
    {
        "n_attributes": [Interval(Integral, 1, None, closed="left")],
        "n_values": [Interval(Integral, 2, None, closed="left")],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "kind": [StrOptions({"compositional", "holistic"})],
        "noise": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_object_language(
    n_attributes=2,
    n_values=8,
    n_repeats=50,
    kind="compositional",
    noise=0.0,
    random_state=None,
):
    """Objects named by a compositional or a holistic language.

    The objects are all ``n_values ** n_attributes`` attribute combinations;
    messages have one token per attribute over a vocabulary of ``n_values``.
    ``"compositional"``: token ``a`` names attribute ``a`` through a fixed
    random permutation of symbols per attribute. ``"holistic"``: a random
    bijection from objects to messages. With ``noise = eps``, each sample's
    message is replaced by a uniformly random one with probability ``eps``.
    Each object appears ``n_repeats`` times.

    This is the no-reinforcement-learning stand-in for the paper's emergent
    languages (with and without iterated learning).

    Parameters
    ----------
    n_attributes : int, default=2
    n_values : int, default=8
    n_repeats : int, default=50
    kind : {"compositional", "holistic"}, default="compositional"
    noise : float in [0, 1], default=0.0
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    W : ndarray of shape (n_objects * n_repeats, n_attributes), dtype int64
        The messages.
    Z : ndarray of shape (n_objects * n_repeats, n_attributes), dtype int64
        The objects, one categorical value per attribute.

    Examples
    --------
    >>> from skalgos.datasets import make_object_language
    >>> W, Z = make_object_language(2, 3, 2, random_state=0)
    >>> W.shape, Z.shape
    ((18, 2), (18, 2))
    """
    rng = check_random_state(random_state)
    A, V = n_attributes, n_values
    grids = np.meshgrid(*[np.arange(V)] * A, indexing="ij")
    objects = np.stack([g.ravel() for g in grids], axis=1)
    if kind == "compositional":
        perms = np.stack([rng.permutation(V) for _ in range(A)])
        messages = perms[np.arange(A), objects]
    else:
        messages = objects[rng.permutation(objects.shape[0])]
    Z = np.repeat(objects, n_repeats, axis=0).astype(np.int64)
    W = np.repeat(messages, n_repeats, axis=0).astype(np.int64)
    if noise > 0:
        flip = rng.rand(W.shape[0]) < noise
        W[flip] = rng.randint(0, V, size=(int(flip.sum()), A))
    return W, Z
