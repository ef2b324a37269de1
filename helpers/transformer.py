"""The Transformer's building blocks in NumPy: positional encoding, layers, encoder, decoder.

Also the two ways of giving attention positions that today's language models use instead
of the sinusoidal encoding: rotating queries and keys (:func:`rotary_position_embedding`)
and a bias on the scores (:func:`alibi_bias`), taught in chapter 11.

This module imports only NumPy (never TensorFlow or Keras), like :mod:`helpers.attention`,
whose :class:`~helpers.attention.MultiHeadAttention` it builds on. Taught in chapter 8; the
Keras twins of the layers are in :mod:`helpers.keras_transformer`, and every class here has
a ``from_keras`` that copies their weights, so the two give the same numbers.

Axis names: ``batch``; ``n`` (sequence length; ``n_target`` and ``n_source`` for the
decoder's two sequences); ``d_model`` (the width of every token vector between sublayers);
``d_ff`` (the hidden width of the feed-forward network); ``num_heads``; ``key_dim =
d_model // num_heads`` (each head's query, key and value size).

Mask convention (as in :mod:`helpers.attention` and Keras): a boolean array, ``True`` where a
query position may attend to a key position.

Layer normalisation placement. ``norm_first=False`` is the original *post-LN* layer of
Vaswani et al. (2017), section 3.1: ``LayerNorm(x + Sublayer(x))``. ``norm_first=True`` is
the *pre-LN* layer studied by Xiong et al. (2020): ``x + Sublayer(LayerNorm(x))``. A pre-LN
stack leaves its output un-normalised, so a pre-LN model applies one more
:class:`LayerNormalization` after its last layer; the layers here do not include that final
norm (the model that stacks them adds it).
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._initializers import glorot_uniform
from .attention import MultiHeadAttention

__all__ = ["positional_encoding", "positional_shift_matrix", "rotary_position_embedding",
           "alibi_slopes", "alibi_bias", "LayerNormalization", "FeedForward", "EncoderLayer",
           "DecoderLayer", "rms_norm", "swiglu", "rope_frequencies"]


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
        frequencies = _weight(frequencies, "frequencies", (head_dim // 2,))
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


# --- checks shared by the classes ----------------------------------------------------------------

def _weight(value, name: str, shape: tuple) -> np.ndarray:
    """A finite float weight array of exactly ``shape``."""
    arr = _checks.float_array(value, name)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got shape {arr.shape}")
    return arr


def _sequence(x, name: str, d_model: int) -> np.ndarray:
    """``x`` as a float array of shape (batch, n, d_model)."""
    arr = _checks.float_array(x, name, min_rank=3, axes="(batch, n, d_model)")
    if arr.ndim != 3 or arr.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape (batch, n, d_model={d_model}); "
                         f"got shape {arr.shape}")
    return arr


def _attention_mask(mask, name: str, scores_shape: tuple):
    """``None``, or a bool mask of 3 axes that broadcasts to (batch, n_q, n_k)."""
    if mask is None:
        return None
    mask = _checks.bool_array(mask, name, meaning="True = may attend")
    if mask.ndim != 3:
        raise ValueError(f"{name} must have 3 axes: (batch, 1, n_k) as padding_mask() returns, "
                         f"or (batch, n_q, n_k); got shape {mask.shape}")
    _checks.broadcast({name: mask.shape}, target=scores_shape,
                      what="attention scores' shape (batch, n_q, n_k)")
    return mask


def _built(layer, what: str):
    if not getattr(layer, "built", False):
        raise ValueError(f"the Keras {what} is not built: call it once on data (or build it) "
                         "before copying its weights")
    return layer


def _keras_twin(layer, class_name: str) -> None:
    if type(layer).__name__ != class_name:
        raise TypeError(f"layer must be a helpers.keras_transformer.{class_name}; "
                        f"got {type(layer).__name__}")
    _built(layer, class_name)


# --- the two position-wise sublayers -------------------------------------------------------------

def rms_norm(x, scale=None, *, epsilon: float = 1e-6) -> np.ndarray:
    """Root-mean-square normalisation: ``x / sqrt(mean(x**2) + epsilon) * scale``.

    Layer normalisation without the mean and without the shift ``beta``: each token vector
    is only divided by its root mean square, then scaled feature by feature.

    Parameters
    ----------
    x : array_like of float, shape (..., d_model)
    scale : array_like of float, shape (d_model,), optional
        The learned gain (``None``: all ones, its initial value).
    epsilon : float, default 1e-6
        Added to the mean square; 1e-6 is the default of ``keras.layers.RMSNormalization``
        and of DeepSeek-V2/V3's released code (Llama 2's configuration uses 1e-5).

    Returns
    -------
    numpy.ndarray, shape (..., d_model)
        The dtype of ``x`` (float64 for integer input).

    Raises
    ------
    TypeError
        If ``x`` or ``scale`` is not real numeric, or ``epsilon`` is not a number.
    ValueError
        If ``x`` has no axis or is not finite, ``scale`` does not have shape (d_model,),
        or ``epsilon <= 0``.

    Notes
    -----
    Zhang and Sennrich (2019), "Root Mean Square Layer Normalization", equation (4). Used
    instead of :class:`LayerNormalization` by Llama and most of today's language models,
    and on the compressed query and the latent of multi-head latent attention (DeepSeek-V2's
    released code). Taught in chapters 11 and 12.

    Examples
    --------
    >>> rms_norm(np.array([[3.0, -4.0]]), epsilon=1e-12).round(3)  # RMS = sqrt(12.5)
    array([[ 0.849, -1.131]])
    """
    x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    scale = np.ones(x.shape[-1], x.dtype) if scale is None else _weight(
        scale, "scale", (x.shape[-1],))
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(mean_square + epsilon) * scale).astype(x.dtype)


def swiglu(x, w_gate, w_up, w_down) -> np.ndarray:
    """The SwiGLU feed-forward network: ``(silu(x W_gate) * (x W_up)) W_down``, no biases.

    Parameters
    ----------
    x : array_like of float, shape (..., d_model)
    w_gate, w_up : array_like of float, shape (d_model, d_ff)
        The gate and the value projections (Llama's ``gate_proj`` and ``up_proj``).
    w_down : array_like of float, shape (d_ff, d_model)
        The projection back (Llama's ``down_proj``).

    Returns
    -------
    numpy.ndarray, shape (..., d_model)

    Raises
    ------
    TypeError
        If an argument is not real numeric.
    ValueError
        If an argument is not finite or the shapes do not fit together.

    Notes
    -----
    Shazeer (2020), "GLU Variants Improve Transformer", equation (6) without biases, with
    ``silu(z) = z * sigmoid(z)`` (Swish with beta = 1). Three matrices instead of the two
    of :class:`FeedForward`, so Llama takes ``d_ff`` about 2/3 of ``4 * d_model`` to keep
    the parameter count. Taught in chapter 11.

    Examples
    --------
    >>> one = np.ones((1, 1))
    >>> swiglu(np.array([[2.0]]), one, one, one).round(3)  # silu(2) * 2
    array([[3.523]])
    """
    x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
    w_gate = _checks.float_array(w_gate, "w_gate", ndim=2, axes="(d_model, d_ff)")
    if w_gate.shape[0] != x.shape[-1]:
        raise ValueError(f"w_gate must have shape (d_model={x.shape[-1]}, d_ff); "
                         f"got shape {w_gate.shape}")
    w_up = _weight(w_up, "w_up", w_gate.shape)
    w_down = _weight(w_down, "w_down", w_gate.shape[::-1])
    gate = x @ w_gate
    return (gate / (1 + np.exp(-gate)) * (x @ w_up)) @ w_down


class LayerNormalization:
    """Layer normalisation over the last axis, with Keras's weights and default epsilon.

    ``LN(x) = gamma * (x - mean) / sqrt(var + epsilon) + beta``, where ``mean`` and ``var``
    (the population variance) are taken over the ``d_model`` features of each token.

    Parameters
    ----------
    gamma : array_like, shape (d_model,)
        Scale, learned; Keras calls it ``gamma`` and starts it at 1.
    beta : array_like, shape (d_model,)
        Shift, learned; Keras starts it at 0.
    epsilon : float, default 1e-3
        Added to the variance. 1e-3 is the default of ``keras.layers.LayerNormalization``
        (PyTorch's is 1e-5), so weights copied from Keras give Keras's numbers.

    Raises
    ------
    TypeError
        If ``gamma`` or ``beta`` is not real numeric, or ``epsilon`` is not a number.
    ValueError
        If ``gamma`` is not 1-D, ``beta`` does not have its shape, or ``epsilon <= 0``.

    Notes
    -----
    Ba, Kiros and Hinton (2016), "Layer Normalization", section 3. Used around every
    sublayer of the Transformer (Vaswani et al. 2017, section 3.1). Taught in chapter 8.

    Examples
    --------
    >>> norm = LayerNormalization.initial(4)
    >>> norm(np.array([[1.0, 2.0, 3.0, 4.0]])).round(3)
    array([[-1.341, -0.447,  0.447,  1.341]])
    """

    def __init__(self, gamma, beta, *, epsilon: float = 1e-3):
        self.gamma = _checks.float_array(gamma, "gamma")
        if self.gamma.ndim != 1:
            raise ValueError(f"gamma must have shape (d_model,); got shape {self.gamma.shape}")
        self.beta = _weight(beta, "beta", self.gamma.shape)
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)

    @classmethod
    def initial(cls, d_model: int, *, epsilon: float = 1e-3) -> LayerNormalization:
        """Keras's initial weights: ``gamma = 1``, ``beta = 0`` (float64)."""
        d_model = _checks.positive_int(d_model, "d_model")
        return cls(np.ones(d_model), np.zeros(d_model), epsilon=epsilon)

    @classmethod
    def from_keras(cls, layer) -> LayerNormalization:
        """Copy ``gamma``, ``beta`` and ``epsilon`` of a built ``keras.layers.LayerNormalization``.

        Raises
        ------
        ValueError
            If the layer is not built, or it has no ``gamma`` or ``beta`` (``scale=False`` or
            ``center=False``).
        """
        _built(layer, "LayerNormalization")
        if getattr(layer, "gamma", None) is None or getattr(layer, "beta", None) is None:
            raise ValueError("the Keras LayerNormalization must have gamma and beta "
                             "(scale=True, center=True)")
        return cls(np.asarray(layer.gamma), np.asarray(layer.beta), epsilon=layer.epsilon)

    @property
    def d_model(self) -> int:
        return self.gamma.shape[0]

    def count_params(self) -> int:
        """``2 * d_model``: gamma and beta."""
        return 2 * self.d_model

    def __call__(self, x) -> np.ndarray:
        """Normalise each token vector of ``x``, shape (..., d_model); same shape back.

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (..., d_model={self.d_model}); "
                             f"got shape {x.shape}")
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.epsilon) * self.gamma + self.beta


class FeedForward:
    """The position-wise feed-forward network: ``FFN(x) = max(0, x W1 + b1) W2 + b2``.

    The same two-layer network is applied to every token vector separately.

    Parameters
    ----------
    w1 : array_like, shape (d_model, d_ff)
    b1 : array_like, shape (d_ff,)
    w2 : array_like, shape (d_ff, d_model)
    b2 : array_like, shape (d_model,)
        In the layout of ``keras.layers.Dense`` (``kernel``, ``bias``): ``x @ w1 + b1``.

    Raises
    ------
    TypeError
        If a weight is not real numeric.
    ValueError
        If a weight is not finite or the shapes do not fit together.

    Notes
    -----
    Vaswani et al. (2017), section 3.3, equation (2); there ``d_model = 512`` and
    ``d_ff = 2048``. Taught in chapter 8.
    """

    def __init__(self, w1, b1, w2, b2):
        self.w1 = _checks.float_array(w1, "w1")
        if self.w1.ndim != 2:
            raise ValueError(f"w1 must have shape (d_model, d_ff); got shape {self.w1.shape}")
        d_model, d_ff = self.w1.shape
        self.b1 = _weight(b1, "b1", (d_ff,))
        self.w2 = _weight(w2, "w2", (d_ff, d_model))
        self.b2 = _weight(b2, "b2", (d_model,))

    @classmethod
    def random(cls, d_model: int, d_ff: int, *, rng: np.random.Generator) -> FeedForward:
        """Keras's initialisation of two ``Dense`` layers: Glorot-uniform kernels, zero biases."""
        d_model = _checks.positive_int(d_model, "d_model")
        d_ff = _checks.positive_int(d_ff, "d_ff")
        rng = _checks.generator(rng)
        return cls(glorot_uniform(rng, (d_model, d_ff), d_model), np.zeros(d_ff),
                   glorot_uniform(rng, (d_ff, d_model), d_ff), np.zeros(d_model))

    @classmethod
    def from_keras(cls, dense_1, dense_2) -> FeedForward:
        """Copy two built ``keras.layers.Dense``: ``Dense(d_ff, "relu")``, then ``Dense(d_model)``.

        Raises
        ------
        ValueError
            If a layer is not built, ``dense_1`` is not ReLU or ``dense_2`` not linear.
        """
        for layer, what, activation in ((dense_1, "dense_1", "relu"),
                                        (dense_2, "dense_2", "linear")):
            _built(layer, f"Dense layer {what}")
            name = getattr(layer.activation, "__name__", repr(layer.activation))
            if name != activation:
                raise ValueError(f"{what} must have activation {activation!r}; got {name!r}")
        return cls(np.asarray(dense_1.kernel), np.asarray(dense_1.bias),
                   np.asarray(dense_2.kernel), np.asarray(dense_2.bias))

    @property
    def d_model(self) -> int:
        return self.w1.shape[0]

    @property
    def d_ff(self) -> int:
        return self.w1.shape[1]

    def count_params(self) -> int:
        """``2 * d_model * d_ff + d_ff + d_model``: two kernels and two biases."""
        return self.w1.size + self.b1.size + self.w2.size + self.b2.size

    def __call__(self, x) -> np.ndarray:
        """Apply the network to every token vector of ``x``, shape (..., d_model).

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (..., d_model={self.d_model}); "
                             f"got shape {x.shape}")
        return np.maximum(0, x @ self.w1 + self.b1) @ self.w2 + self.b2


# --- encoder and decoder layers ----------------------------------------------------------------

def _d_model_of(part) -> set:
    """The feature sizes a sublayer reads and writes (one value if it is consistent)."""
    if isinstance(part, MultiHeadAttention):
        return {part.query_kernel.shape[0], part.key_kernel.shape[0],
                part.value_kernel.shape[0], part.output_kernel.shape[2]}
    return {part.d_model}


class _TransformerLayer:
    """What encoder and decoder layers share: the checked sublayers and Add & Norm."""

    _PARTS: tuple = ()  # (argument name, expected class) of each sublayer, in __init__'s order

    def __init__(self, parts: dict, norm_first):
        for name, kind in self._PARTS:
            if not isinstance(parts[name], kind):
                raise TypeError(f"{name} must be a helpers {kind.__name__}; got "
                                f"{type(parts[name]).__name__}")
        sizes = {name: _d_model_of(part) for name, part in parts.items()}
        if len(set().union(*sizes.values())) != 1:
            raise ValueError("every sublayer must read and write vectors of one width d_model; "
                             f"got {', '.join(f'{n} {sorted(s)}' for n, s in sizes.items())}")
        for name, part in parts.items():
            setattr(self, name, part)
        self.norm_first = _checks.boolean(norm_first, "norm_first")

    @property
    def d_model(self) -> int:
        return self.feed_forward.d_model

    @property
    def num_heads(self) -> int:
        return self.self_attention.num_heads

    def count_params(self) -> int:
        """The number of weights, as Keras's ``count_params()`` counts them."""
        return sum(getattr(self, name).count_params() for name, _ in self._PARTS)

    def _residual(self, x, norm, sublayer):
        """Sublayer with residual connection and layer norm; ``sublayer`` returns (y, extra).

        post-LN: ``norm(x + y)`` with ``y = sublayer(x)``; pre-LN: ``x + y`` with
        ``y = sublayer(norm(x))``. Returns the result and ``extra`` (attention weights).
        """
        y, extra = sublayer(norm(x) if self.norm_first else x)
        return (x + y if self.norm_first else norm(x + y)), extra

    def _feed_forward_block(self, x):
        return self._residual(x, self.feed_forward_norm, lambda h: (self.feed_forward(h), None))[0]


class EncoderLayer(_TransformerLayer):
    """One Transformer encoder layer: self-attention, then the feed-forward network.

    Each of the two sublayers has a residual connection and a layer norm, placed as
    ``norm_first`` says (see the module docstring)::

        post-LN:  x = LN1(x + SelfAttention(x));      x = LN2(x + FFN(x))
        pre-LN:   x = x + SelfAttention(LN1(x));      x = x + FFN(LN2(x))

    Parameters
    ----------
    self_attention : helpers.attention.MultiHeadAttention
        Reads and writes vectors of width d_model.
    feed_forward : FeedForward
    self_attention_norm, feed_forward_norm : LayerNormalization
        LN1 and LN2 above.
    norm_first : bool, default False
        ``False``: post-LN (Vaswani et al. 2017); ``True``: pre-LN (Xiong et al. 2020). A
        pre-LN stack needs a final :class:`LayerNormalization` after its last layer, which
        this class does not include.

    Raises
    ------
    TypeError
        If a sublayer is not of the class above or ``norm_first`` is not a bool.
    ValueError
        If the sublayers disagree on d_model.

    Notes
    -----
    Vaswani et al. (2017), section 3.1 and figure 1 (left); Xiong et al. (2020), "On Layer
    Normalization in the Transformer Architecture", figure 1. No dropout: this is the layer
    at inference time. Taught in chapter 8; the Keras twin is
    ``helpers.keras_transformer.TransformerEncoderLayer`` (see :meth:`from_keras`).

    Examples
    --------
    >>> layer = EncoderLayer.random(8, 2, 16, rng=np.random.default_rng(0))
    >>> layer(np.ones((3, 5, 8)), mask=np.ones((3, 1, 5), dtype=bool)).shape
    (3, 5, 8)
    >>> layer.count_params()  # 4 (8^2 + 8) + (2*8*16 + 16 + 8) + 2 (2*8)
    600
    """

    _PARTS = (("self_attention", MultiHeadAttention), ("feed_forward", FeedForward),
              ("self_attention_norm", LayerNormalization),
              ("feed_forward_norm", LayerNormalization))

    def __init__(self, self_attention, feed_forward, self_attention_norm, feed_forward_norm, *,
                 norm_first: bool = False):
        super().__init__({"self_attention": self_attention, "feed_forward": feed_forward,
                          "self_attention_norm": self_attention_norm,
                          "feed_forward_norm": feed_forward_norm}, norm_first)

    @classmethod
    def random(cls, d_model: int, num_heads: int, d_ff: int, *, rng: np.random.Generator,
               norm_first: bool = False) -> EncoderLayer:
        """Random weights as Keras initialises them (Glorot-uniform kernels, zero biases,
        ``gamma = 1``, ``beta = 0``), with ``key_dim = d_model // num_heads``.

        Raises
        ------
        TypeError
            If a size is not an integer or ``rng`` is not a ``numpy.random.Generator``.
        ValueError
            If a size is below 1 or ``num_heads`` does not divide ``d_model``.
        """
        key_dim, rng = _checks.key_dim(d_model, num_heads), _checks.generator(rng)
        return cls(MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   FeedForward.random(d_model, d_ff, rng=rng),
                   LayerNormalization.initial(d_model), LayerNormalization.initial(d_model),
                   norm_first=norm_first)

    @classmethod
    def from_keras(cls, layer) -> EncoderLayer:
        """Copy the weights (and ``norm_first``) of a built
        ``helpers.keras_transformer.TransformerEncoderLayer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``TransformerEncoderLayer``.
        ValueError
            If it is not built.
        """
        _keras_twin(layer, "TransformerEncoderLayer")
        return cls(MultiHeadAttention.from_keras(layer.self_attention),
                   FeedForward.from_keras(layer.ffn_1, layer.ffn_2),
                   LayerNormalization.from_keras(layer.self_attention_norm),
                   LayerNormalization.from_keras(layer.feed_forward_norm),
                   norm_first=layer.norm_first)

    def __call__(self, x, mask=None) -> np.ndarray:
        """Encode ``x``.

        Parameters
        ----------
        x : array_like, shape (batch, n, d_model), real
            Token vectors (embeddings plus positional encoding, or a previous layer's output).
        mask : array_like of bool, optional
            ``True`` where a position may attend to another: shape (batch, 1, n) from
            ``helpers.attention.padding_mask(lengths, n)``, or (batch, n, n). ``None``: every
            position attends to every position.

        Returns
        -------
        numpy.ndarray, shape (batch, n, d_model)
            float32 for float32 inputs and weights, else float64. Rows at padded positions
            are computed too but mean nothing.

        Raises
        ------
        TypeError
            If ``x`` is not real numeric or ``mask`` is not boolean.
        ValueError
            If ``x`` does not have shape (batch, n, d_model) or is not finite, or ``mask``
            does not have 3 axes or does not broadcast to (batch, n, n).
        """
        x = _sequence(x, "x", self.d_model)
        batch, n = x.shape[:2]
        mask = _attention_mask(mask, "mask", (batch, n, n))
        x, _ = self._residual(x, self.self_attention_norm, lambda h: self.self_attention(
            h, h, attention_mask=mask, return_attention_scores=True))
        return self._feed_forward_block(x)


class DecoderLayer(_TransformerLayer):
    """One Transformer decoder layer: causal self-attention, cross-attention, feed-forward.

    ::

        post-LN:  x = LN1(x + CausalSelfAttention(x))
                  x = LN2(x + CrossAttention(x, context))
                  x = LN3(x + FFN(x))
        pre-LN:   x = x + CausalSelfAttention(LN1(x))
                  x = x + CrossAttention(LN2(x), context)
                  x = x + FFN(LN3(x))

    The cross-attention's queries come from the decoder, its keys and values from
    ``context``, the encoder's output.

    Parameters
    ----------
    self_attention, cross_attention : helpers.attention.MultiHeadAttention
        Both read and write vectors of width d_model.
    feed_forward : FeedForward
    self_attention_norm, cross_attention_norm, feed_forward_norm : LayerNormalization
        LN1, LN2 and LN3 above.
    norm_first : bool, default False
        ``False``: post-LN; ``True``: pre-LN, without the final norm of a pre-LN stack (as in
        :class:`EncoderLayer`).

    Raises
    ------
    TypeError
        If a sublayer is not of the class above or ``norm_first`` is not a bool.
    ValueError
        If the sublayers disagree on d_model.

    Notes
    -----
    Vaswani et al. (2017), section 3.1, section 3.2.3 (masked self-attention,
    encoder-decoder attention) and figure 1 (right); Xiong et al. (2020) for pre-LN. No
    dropout. Taught in chapter 8; the Keras twin is
    ``helpers.keras_transformer.TransformerDecoderLayer``.

    Examples
    --------
    >>> layer = DecoderLayer.random(8, 2, 16, rng=np.random.default_rng(0))
    >>> out, weights = layer(np.ones((3, 4, 8)), np.ones((3, 6, 8)),
    ...                      return_attention_scores=True)
    >>> out.shape, weights.shape  # weights: (batch, num_heads, n_target, n_source)
    ((3, 4, 8), (3, 2, 4, 6))
    """

    _PARTS = (("self_attention", MultiHeadAttention), ("cross_attention", MultiHeadAttention),
              ("feed_forward", FeedForward), ("self_attention_norm", LayerNormalization),
              ("cross_attention_norm", LayerNormalization),
              ("feed_forward_norm", LayerNormalization))

    def __init__(self, self_attention, cross_attention, feed_forward, self_attention_norm,
                 cross_attention_norm, feed_forward_norm, *, norm_first: bool = False):
        super().__init__({"self_attention": self_attention, "cross_attention": cross_attention,
                          "feed_forward": feed_forward,
                          "self_attention_norm": self_attention_norm,
                          "cross_attention_norm": cross_attention_norm,
                          "feed_forward_norm": feed_forward_norm}, norm_first)

    @classmethod
    def random(cls, d_model: int, num_heads: int, d_ff: int, *, rng: np.random.Generator,
               norm_first: bool = False) -> DecoderLayer:
        """Random weights as Keras initialises them; see :meth:`EncoderLayer.random`."""
        key_dim, rng = _checks.key_dim(d_model, num_heads), _checks.generator(rng)
        return cls(MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   FeedForward.random(d_model, d_ff, rng=rng),
                   *(LayerNormalization.initial(d_model) for _ in range(3)),
                   norm_first=norm_first)

    @classmethod
    def from_keras(cls, layer) -> DecoderLayer:
        """Copy the weights (and ``norm_first``) of a built
        ``helpers.keras_transformer.TransformerDecoderLayer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``TransformerDecoderLayer``.
        ValueError
            If it is not built.
        """
        _keras_twin(layer, "TransformerDecoderLayer")
        return cls(MultiHeadAttention.from_keras(layer.self_attention),
                   MultiHeadAttention.from_keras(layer.cross_attention),
                   FeedForward.from_keras(layer.ffn_1, layer.ffn_2),
                   LayerNormalization.from_keras(layer.self_attention_norm),
                   LayerNormalization.from_keras(layer.cross_attention_norm),
                   LayerNormalization.from_keras(layer.feed_forward_norm),
                   norm_first=layer.norm_first)

    def __call__(self, x, context, context_mask=None, mask=None,
                 return_attention_scores: bool = False):
        """Decode ``x`` while attending to ``context``.

        Parameters
        ----------
        x : array_like, shape (batch, n_target, d_model), real
            The target tokens so far (shifted right during training).
        context : array_like, shape (batch, n_source, d_model), real
            The encoder's output.
        context_mask : array_like of bool, optional
            Which source positions each target position may attend to: (batch, 1, n_source)
            from ``padding_mask(source_lengths, n_source)``, or (batch, n_target, n_source).
        mask : array_like of bool, optional
            A mask on the self-attention, (batch, 1, n_target) or (batch, n_target,
            n_target), combined by logical and with the causal mask, which always applies
            (position i attends to positions 0..i).
        return_attention_scores : bool, default False
            Also return the cross-attention weights.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n_target, d_model)
        weights : numpy.ndarray, shape (batch, num_heads, n_target, n_source)
            Only with ``return_attention_scores=True``: the cross-attention weights (after
            softmax; Keras calls them scores), which source positions each head of this layer
            read for each target position.

        Raises
        ------
        TypeError
            If ``x`` or ``context`` is not real numeric, a mask is not boolean, or
            ``return_attention_scores`` is not a bool.
        ValueError
            If ``x`` or ``context`` does not have shape (batch, n, d_model) or is not finite,
            their batch sizes do not broadcast, or a mask does not have 3 axes or does not
            broadcast to the shape of its scores.
        """
        x = _sequence(x, "x", self.d_model)
        context = _sequence(context, "context", self.d_model)
        return_attention_scores = _checks.boolean(return_attention_scores,
                                                  "return_attention_scores")
        batch = _checks.broadcast({"x": x.shape[:1], "context": context.shape[:1]},
                                  what="batch axes")
        n_target, n_source = x.shape[1], context.shape[1]
        mask = _attention_mask(mask, "mask", (*batch, n_target, n_target))
        context_mask = _attention_mask(context_mask, "context_mask",
                                       (*batch, n_target, n_source))
        x, _ = self._residual(x, self.self_attention_norm, lambda h: self.self_attention(
            h, h, attention_mask=mask, use_causal_mask=True, return_attention_scores=True))
        x, weights = self._residual(x, self.cross_attention_norm, lambda h: self.cross_attention(
            h, context, attention_mask=context_mask, return_attention_scores=True))
        x = self._feed_forward_block(x)
        return (x, weights) if return_attention_scores else x

