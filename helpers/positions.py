"""How attention knows where a token is, in NumPy: added encodings, rotations and biases.

Three ways: the sinusoidal encoding added to the token vectors (:func:`positional_encoding`,
Vaswani et al. 2017, chapter 8), rotating queries and keys by their positions
(:func:`rotary_position_embedding`, RoPE, chapter 11) and a bias on the attention scores
that grows with the distance (:func:`alibi_bias`, ALiBi, chapter 11). The attention layers
apply the last two; :mod:`helpers.transformer` re-exports all of them.

Imports only NumPy. Axis names: ``n`` (positions), ``d_model``, ``head_dim``, ``num_heads``.
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["positional_encoding", "positional_shift_matrix", "rotary_position_embedding",
           "rope_frequencies", "alibi_slopes", "alibi_bias"]


# --- positional encoding -------------------------------------------------------------------------

def _even_d_model(d_model) -> int:
    d_model = _checks.positive_int(d_model, "d_model")
    if d_model % 2:
        raise ValueError("d_model must be even (every frequency fills one sin column and one "
                         f"cos column); got {d_model}")
    return d_model


def _frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """omega_i = 1 / base^(2i / d_model) for i = 0 .. d_model/2 - 1, shape (d_model/2,)."""
    return 1.0 / base ** (np.arange(0, d_model, 2) / d_model)


def positional_encoding(length: int, d_model: int) -> np.ndarray:
    """The sinusoidal positional encoding: one fixed vector per position.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))``: column pair ``(2i, 2i+1)`` is a
    sine and a cosine of the same frequency, from one turn per 2 pi positions (i = 0) down to
    one turn per 10000 * 2 pi positions.

    Parameters
    ----------
    length : int
        Number of positions ``0 .. length - 1``, at least 1.
    d_model : int
        Width of each vector; must be even (sin and cos come in pairs).

    Returns
    -------
    numpy.ndarray, shape (length, d_model), float64
        Row ``pos`` is the encoding of position ``pos``; every entry lies in [-1, 1]. Added to
        the token embeddings (batch, length, d_model), it broadcasts over ``batch``.

    Raises
    ------
    TypeError
        If ``length`` or ``d_model`` is not an integer.
    ValueError
        If ``length`` or ``d_model`` is below 1, or ``d_model`` is odd.

    Notes
    -----
    Vaswani et al. (2017), "Attention Is All You Need", section 3.5. Taught in chapter 8,
    with :func:`positional_shift_matrix` (why a fixed linear map moves it by k positions).

    Examples
    --------
    >>> positional_encoding(2, 4).round(3)
    array([[0.   , 1.   , 0.   , 1.   ],
           [0.841, 0.54 , 0.01 , 1.   ]])
    """
    length = _checks.positive_int(length, "length")
    d_model = _even_d_model(d_model)
    angles = np.arange(length)[:, None] * _frequencies(d_model)   # (length, d_model/2)
    table = np.empty((length, d_model))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def positional_shift_matrix(k: int, d_model: int) -> np.ndarray:
    """The matrix M_k with ``PE[pos + k] = PE[pos] @ M_k`` for every position ``pos``.

    M_k is block-diagonal: for each frequency omega_i, the 2x2 block on columns
    ``(2i, 2i+1)`` is the rotation ``[[cos k omega_i, -sin k omega_i], [sin k omega_i,
    cos k omega_i]]``, because sin(a + b) = sin a cos b + cos a sin b and
    cos(a + b) = cos a cos b - sin a sin b. It depends on ``k`` but not on ``pos``.

    Parameters
    ----------
    k : int
        The shift, any integer (negative moves back).
    d_model : int
        Width of the encoding; even, as in :func:`positional_encoding`.

    Returns
    -------
    numpy.ndarray, shape (d_model, d_model), float64
        An orthogonal matrix; ``M_j @ M_k == M_(j+k)`` and ``M_0`` is the identity.

    Raises
    ------
    TypeError
        If ``k`` or ``d_model`` is not an integer.
    ValueError
        If ``d_model`` is below 1 or odd.

    Notes
    -----
    The property Vaswani et al. (2017), section 3.5, give for choosing sinusoids: "for any
    fixed offset k, PE_(pos+k) can be represented as a linear function of PE_pos". Taught in
    chapter 8.

    Examples
    --------
    >>> pe = positional_encoding(10, 8)
    >>> bool(np.allclose(pe[3] @ positional_shift_matrix(4, 8), pe[7]))
    True
    """
    k = _checks.integer(k, "k")
    d_model = _even_d_model(d_model)
    angles = k * _frequencies(d_model)
    sin_cols, cos_cols = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    matrix = np.zeros((d_model, d_model))
    matrix[sin_cols, sin_cols] = matrix[cos_cols, cos_cols] = np.cos(angles)
    matrix[sin_cols, cos_cols] = -np.sin(angles)
    matrix[cos_cols, sin_cols] = np.sin(angles)
    return matrix


# --- positions as rotations (RoPE) and as biases (ALiBi) ---------------------------------------

_PAIRINGS = ("adjacent", "halves")


def _head_dim(x: np.ndarray) -> int:
    head_dim = x.shape[-1]
    if head_dim < 2 or head_dim % 2:
        raise ValueError("x's last axis head_dim must be even and at least 2 (features are "
                         f"rotated in pairs); got shape {x.shape}")
    return head_dim


def _positions(positions, n: int) -> np.ndarray:
    """``positions`` as a checked (n,) integer array >= 0; ``None``: 0 .. n-1."""
    if positions is None:
        return np.arange(n)
    positions = _checks.int_array(positions, "positions", ndim=1, low=0)
    if positions.shape != (n,):
        raise ValueError(f"positions must have shape (n,) = ({n},), one per row of x; got "
                         f"shape {positions.shape}")
    return positions


def _pair_columns(head_dim: int, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    """The columns ``(first, second)`` of the pairs rotated together, pair i at index i."""
    if pairing == "adjacent":
        return np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)
    return np.arange(head_dim // 2), np.arange(head_dim // 2, head_dim)


def rotary_position_embedding(x, positions=None, *, base: float = 10000.0,
                              pairing: str = "adjacent", frequencies=None) -> np.ndarray:
    """Rotary position embedding (RoPE): rotate each pair of features by position x angle.

    Pair ``i`` of the row at position ``m`` is turned by the angle ``m * theta_i``, with
    ``theta_i = base^(-2i / head_dim)`` for i = 0 .. head_dim/2 - 1 (the frequencies of
    :func:`positional_encoding`)::

        out[first]  = x[first] cos(m theta_i) - x[second] sin(m theta_i)
        out[second] = x[first] sin(m theta_i) + x[second] cos(m theta_i)

    Applied to queries and keys, it makes their dot product depend on the positions only
    through the offset: ``R(m) q . R(n) k = q . R(n - m) k``.

    Parameters
    ----------
    x : array_like, shape (..., n, head_dim), real
        Queries or keys, one row per position (e.g. (batch, num_heads, n, head_dim));
        ``head_dim`` even.
    positions : array_like of int, shape (n,), optional
        The position of each row, at least 0; ``None``: 0 .. n-1. With a KV cache, the new
        rows' positions (they continue after the cached ones).
    base : float, default 10000.0
        Sets the slowest frequency; greater than 1.
    pairing : {"adjacent", "halves"}, default "adjacent"
        Which features form a pair. ``"adjacent"``: features ``(2i, 2i+1)``, as in the RoFormer
        paper and the column pairs of :func:`positional_encoding`. ``"halves"``: features
        ``(i, i + head_dim/2)``, as in GPT-NeoX's and Llama's code ("rotate_half"). The two
        are the same rotation up to a fixed permutation of the feature axis (tested).
    frequencies : array_like of float, shape (head_dim/2,), optional
        The angle per position of each pair, instead of ``base``'s: for a stretched context
        (:func:`rope_frequencies`).

    Returns
    -------
    numpy.ndarray, shape (..., n, head_dim)
        The dtype of ``x`` (float32 stays float32; integers become float64). Every row keeps
        its norm; position 0 is left unchanged.

    Raises
    ------
    TypeError
        If ``x`` is not real numeric, ``positions`` not integer, or ``base`` not a number.
    ValueError
        If ``x`` has fewer than 2 axes, is not finite or has an odd ``head_dim``;
        ``positions`` is not of shape (n,) or has a negative entry; ``base <= 1``;
        ``pairing`` is neither ``"adjacent"`` nor ``"halves"``.

    Notes
    -----
    Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    section 3.4.2, equation (34). Taught in chapter 11.

    Examples
    --------
    >>> x = np.array([[1.0, 0.0, 1.0, 0.0]] * 3)          # (n=3, head_dim=4)
    >>> rotary_position_embedding(x, base=100.0).round(3)  # theta = 1, 0.1
    array([[ 1.   ,  0.   ,  1.   ,  0.   ],
           [ 0.54 ,  0.841,  0.995,  0.1  ],
           [-0.416,  0.909,  0.98 ,  0.199]])
    """
    x = _checks.float_array(x, "x", min_rank=2, axes="(..., n, head_dim)")
    head_dim = _head_dim(x)
    positions = _positions(positions, x.shape[-2])
    base = _checks.real(base, "base", low=1, low_open=True)
    first, second = _pair_columns(head_dim, _checks.one_of(pairing, "pairing", _PAIRINGS))
    if frequencies is None:
        frequencies = _frequencies(head_dim, base)
    else:
        frequencies = _checks.weight(frequencies, "frequencies", (head_dim // 2,))
    angles = positions[:, None] * frequencies                     # (n, head_dim/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    out = np.empty_like(x)
    out[..., first] = x[..., first] * cos - x[..., second] * sin
    out[..., second] = x[..., first] * sin + x[..., second] * cos
    return out


def rope_frequencies(head_dim: int, *, factor: float = 1.0, method: str = "none",
                     original_length: int | None = None, base: float = 10000.0,
                     alpha: float = 1.0, beta: float = 32.0) -> np.ndarray:
    """RoPE's angle per position of each pair, for a context ``factor`` times the trained one.

    ``"none"``: ``theta_i = base^(-2i/head_dim)``. ``"interpolation"`` (position
    interpolation): every ``theta_i / factor``, the same as positions divided by ``factor``.
    ``"ntk"`` (NTK-aware): the base raised to ``base * factor^(head_dim / (head_dim - 2))``,
    which leaves the fastest pair as it is and divides the slowest by ``factor``. ``"yarn"``
    (YaRN's NTK-by-parts): a pair that turns more than ``beta`` times within
    ``original_length`` positions keeps its frequency, one that turns less than ``alpha``
    times is interpolated, and those between are blended linearly.

    Parameters
    ----------
    head_dim : int
        Even, at least 2.
    factor : float, default 1.0
        How many times longer the context is than the trained one; at least 1.
    method : {"none", "interpolation", "ntk", "yarn"}, default "none"
    original_length : int, optional
        The trained context length; needed by ``"yarn"``.
    base : float, default 10000.0
    alpha, beta : float, default 1.0 and 32.0
        YaRN's bounds on the number of turns within ``original_length``.

    Returns
    -------
    numpy.ndarray of float64, shape (head_dim/2,)

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``head_dim`` is odd, ``factor < 1``, ``method`` is unknown, ``"yarn"`` has no
        ``original_length``, or ``alpha >= beta``.

    Notes
    -----
    Chen et al. (2023), "Extending Context Window of Large Language Models via Positional
    Interpolation", equation (4); Peng et al. (2024), "YaRN", sections 3.1 (NTK-aware,
    equation 16) and 3.2 (NTK-by-parts, equations 17-18; YaRN adds an attention temperature,
    left out here). Taught in chapter 11.

    Examples
    --------
    >>> rope_frequencies(4, base=100.0)
    array([1. , 0.1])
    >>> rope_frequencies(4, base=100.0, factor=4, method="interpolation")
    array([0.25 , 0.025])
    >>> rope_frequencies(4, base=100.0, factor=4, method="ntk")
    array([1.   , 0.025])
    """
    head_dim = _checks.positive_int(head_dim, "head_dim")
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (features turn in pairs); got {head_dim}")
    factor = _checks.real(factor, "factor", low=1)
    method = _checks.one_of(method, "method", ("none", "interpolation", "ntk", "yarn"))
    base = _checks.real(base, "base", low=1, low_open=True)
    theta = _frequencies(head_dim, base)
    if method == "interpolation":
        return theta / factor
    if method == "ntk":
        return _frequencies(head_dim, base * factor ** (head_dim / max(head_dim - 2, 1)))
    if method == "yarn":
        if original_length is None:
            raise ValueError("method='yarn' needs original_length, the trained context length")
        original_length = _checks.positive_int(original_length, "original_length")
        alpha, beta = _checks.real(alpha, "alpha"), _checks.real(beta, "beta")
        if alpha >= beta:
            raise ValueError(f"alpha must be below beta; got alpha={alpha}, beta={beta}")
        turns = original_length * theta / (2 * np.pi)
        keep = np.clip((turns - alpha) / (beta - alpha), 0, 1)    # 1: 그대로, 0: 보간
        return keep * theta + (1 - keep) * theta / factor
    return theta


def alibi_slopes(num_heads: int) -> np.ndarray:
    """The ALiBi slope ``m_h`` of each head: how fast its scores fall with distance.

    For ``H`` heads, ``H`` a power of two: ``m_h = 2^(-8 (h+1) / H)``, a geometric sequence
    from ``2^(-8/H)`` down to ``2^-8``. Otherwise, with ``P`` the largest power of two below
    ``H``: the ``P`` slopes of ``P`` heads, then every other slope of ``2P`` heads (the 1st,
    3rd, ...), ``H - P`` of them.

    Parameters
    ----------
    num_heads : int
        At least 1.

    Returns
    -------
    numpy.ndarray, shape (num_heads,), float64
        All in (0, 1).

    Raises
    ------
    TypeError
        If ``num_heads`` is not an integer.
    ValueError
        If ``num_heads`` is below 1.

    Notes
    -----
    Press, Smith and Lewis (2022), "Train Short, Test Long: Attention with Linear Biases
    Enables Input Length Extrapolation", section 3; the rule for other head counts is that
    of the authors' code (``get_slopes``). Taught in chapter 11.

    Examples
    --------
    >>> 1 / alibi_slopes(8)
    array([  2.,   4.,   8.,  16.,  32.,  64., 128., 256.])
    >>> np.log2(alibi_slopes(6))      # the 4 of 4 heads, then 2^-1 and 2^-3 of 8 heads
    array([-2., -4., -6., -8., -1., -3.])
    """
    num_heads = _checks.positive_int(num_heads, "num_heads")
    power = 1 << (num_heads.bit_length() - 1)              # largest power of two <= num_heads
    slopes = 2.0 ** (-8.0 * np.arange(1, power + 1) / power)
    between = 2.0 ** (-8.0 * np.arange(1, 2 * power, 2) / (2 * power))
    return np.concatenate([slopes, between[:num_heads - power]])


def _alibi(slopes: np.ndarray, query_positions: np.ndarray,
           key_positions: np.ndarray) -> np.ndarray:
    """(heads, n_q, n_k): ``-m_h (i - j)`` for the query at ``i`` and the key at ``j``."""
    return slopes[:, None, None] * (key_positions[None, :] - query_positions[:, None])


def alibi_bias(num_heads: int, n: int) -> np.ndarray:
    """The ALiBi bias added to each head's attention scores: ``-m_h (i - j)``.

    Query ``i`` and key ``j`` get ``bias[h, i, j] = -m_h (i - j)``, with the slopes of
    :func:`alibi_slopes`: 0 on the diagonal, more negative the further back the key. No
    position is added to the token vectors; the scores themselves prefer near keys.

    Parameters
    ----------
    num_heads : int
        Number of heads, at least 1.
    n : int
        Sequence length, at least 1.

    Returns
    -------
    numpy.ndarray, shape (num_heads, n, n), float64
        Finite everywhere. Above the diagonal (``j > i``, keys after the query) the same
        formula gives positive values: the bias is only a function of the distance, and the
        causal mask is a separate boolean mask (as everywhere in the course), applied after
        adding the bias. Add it to scores without a causal mask and later keys win.

    Raises
    ------
    TypeError
        If ``num_heads`` or ``n`` is not an integer.
    ValueError
        If ``num_heads`` or ``n`` is below 1.

    Notes
    -----
    Press, Smith and Lewis (2022), section 3 and figure 3: ``softmax(q_i K^T + m [-(i-1),
    ..., -2, -1, 0])``, the causal row of this matrix. Taught in chapter 11.

    Examples
    --------
    >>> (alibi_bias(2, 3)[0] * 16).tolist()   # head 0's slope is 1/16
    [[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0], [-2.0, -1.0, 0.0]]
    """
    positions = np.arange(_checks.positive_int(n, "n"))
    return _alibi(alibi_slopes(num_heads), positions, positions)
