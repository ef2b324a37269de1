"""How attention knows where a token is, in NumPy: added encodings, rotations and biases.

Three ways: the sinusoidal encoding added to the token vectors (:func:`positional_encoding`,
Vaswani et al. 2017, chapter 8), rotating queries and keys by their positions
(:func:`rotary_position_embedding`, RoPE, chapter 11) and a bias on the attention scores
that grows with the distance (:func:`alibi_bias`, ALiBi, chapter 11). The attention layers
apply the last two; :mod:`helpers.transformer` re-exports all of them. For a context longer
than the trained one, :func:`rope_frequencies` stretches RoPE's frequencies and
:func:`yarn_attention_factor` gives YaRN's attention temperature; :data:`PUBLISHED_ROPE`
holds released models' RoPE settings with their sources (chapter 11).

Imports only NumPy. Axis names: ``n`` (positions), ``d_model``, ``head_dim``, ``num_heads``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _checks

__all__ = ["positional_encoding", "positional_shift_matrix", "rotary_position_embedding",
           "rope_frequencies", "yarn_attention_factor", "RopeConfig", "PUBLISHED_ROPE",
           "alibi_slopes", "alibi_bias"]


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
    angles = np.arange(length)[:, None] * _frequencies(d_model)  # (length, d_model/2)
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
                              pairing: str = "adjacent",
                              frequencies=None) -> np.ndarray:
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
    first, second = _pair_columns(head_dim,
                                  _checks.one_of(pairing, "pairing", _PAIRINGS))
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
    which leaves the fastest pair as it is and divides the slowest by ``factor``.
    ``"by_parts"`` (NTK-by-parts): a pair that turns ``r_i = original_length theta_i / 2 pi``
    times within the trained length keeps its frequency if ``r_i > beta``, is interpolated
    (``theta_i / factor``) if ``r_i < alpha``, and in between gets the blend
    ``g theta_i + (1 - g) theta_i / factor`` with ``g = (r_i - alpha) / (beta - alpha)``.

    YaRN is ``"by_parts"`` (``alpha=1, beta=32``) plus an attention temperature,
    :func:`yarn_attention_factor`; the frequencies alone are not YaRN. Llama 3.1's
    ``rope_type="llama3"`` is ``"by_parts"`` with ``alpha = low_freq_factor = 1`` and
    ``beta = high_freq_factor = 4`` and no temperature (tested against the rule as Meta's
    code states it, in wavelengths).

    Parameters
    ----------
    head_dim : int
        Even, at least 2.
    factor : float, default 1.0
        How many times longer the context is than the trained one; at least 1.
    method : {"none", "interpolation", "ntk", "by_parts"}, default "none"
    original_length : int, optional
        The trained context length; needed by ``"by_parts"``.
    base : float, default 10000.0
        Greater than 1 (Llama 3 uses 500,000, :data:`PUBLISHED_ROPE`).
    alpha, beta : float, default 1.0 and 32.0
        ``"by_parts"``: the numbers of turns within ``original_length`` below which a pair
        is interpolated and above which it is kept (YaRN's ``beta_slow`` and ``beta_fast``).

    Returns
    -------
    numpy.ndarray of float64, shape (head_dim/2,)

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``head_dim`` is odd, ``factor < 1``, ``method`` is unknown (``"yarn"`` among
        them: see above), ``"by_parts"`` has no ``original_length``, or ``alpha >= beta``.

    Notes
    -----
    Chen et al. (2023), "Extending Context Window of Large Language Models via Positional
    Interpolation", equation (4); Peng et al. (2024), "YaRN", section 3.1 (NTK-aware) and
    the NTK-by-parts ramp of section 3.2 (linear in the number of turns ``r``, as in the
    paper; the authors' code blends linearly over the pair index between rounded bounds,
    which changes the blended pairs somewhat, not the kept or the interpolated ones). Taught
    in chapter 11.

    Examples
    --------
    >>> rope_frequencies(4, base=100.0)
    array([1. , 0.1])
    >>> rope_frequencies(4, base=100.0, factor=4, method="interpolation")
    array([0.25 , 0.025])
    >>> rope_frequencies(4, base=100.0, factor=4, method="ntk")
    array([1.   , 0.025])
    >>> rope_frequencies(4, base=100.0, factor=4, method="by_parts",
    ...                  original_length=300).round(3)   # 47.7 turns: kept; 4.8: blended
    array([1.   , 0.034])
    """
    head_dim = _checks.positive_int(head_dim, "head_dim")
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (features turn in pairs); got {head_dim}")
    factor = _checks.real(factor, "factor", low=1)
    if method == "yarn":
        raise ValueError("method='yarn' is not a set of frequencies: YaRN is method='by_parts' "
                         "plus an attention temperature, yarn_attention_factor(factor)")
    method = _checks.one_of(method, "method", ("none", "interpolation", "ntk", "by_parts"))
    base = _checks.real(base, "base", low=1, low_open=True)
    theta = _frequencies(head_dim, base)
    if method == "interpolation":
        return theta / factor
    if method == "ntk":
        return _frequencies(head_dim, base * factor ** (head_dim / max(head_dim - 2, 1)))
    if method == "by_parts":
        if original_length is None:
            raise ValueError("method='by_parts' needs original_length, the trained context "
                             "length")
        original_length = _checks.positive_int(original_length, "original_length")
        alpha, beta = _checks.real(alpha, "alpha"), _checks.real(beta, "beta")
        if alpha >= beta:
            raise ValueError(f"alpha must be below beta; got alpha={alpha}, beta={beta}")
        turns = original_length * theta / (2 * np.pi)
        keep = np.clip((turns - alpha) / (beta - alpha), 0, 1)    # 1: kept, 0: interpolated
        return keep * theta + (1 - keep) * theta / factor
    return theta


def yarn_attention_factor(factor: float, *, mscale: float = 1.0) -> float:
    """YaRN's attention temperature, as the factor ``sqrt(1/t) = 0.1 mscale ln(factor) + 1``.

    YaRN divides the attention scores by a temperature ``t`` (the paper's symbol; chapter 11
    writes it τ, as the course writes every temperature),
    ``softmax(q . k / (t sqrt(d)))``, with ``t < 1`` for a stretched context: the scores are
    multiplied by ``1/t``, which sharpens the weights. Multiplying both the queries and the
    keys (or RoPE's cos and sin) by ``sqrt(1/t)`` does the same, and that is how released
    code applies it. Use it with :func:`rope_frequencies` (``method="by_parts"``); the two
    together are YaRN.

    Parameters
    ----------
    factor : float
        The context's stretch ``s`` (as in :func:`rope_frequencies`); at least 1.
    mscale : float, default 1.0
        A multiplier of the ``0.1`` (DeepSeek-V3's configuration keys ``mscale`` and
        ``mscale_all_dim``, both 1.0 there); greater than 0.

    Returns
    -------
    float
        ``sqrt(1/t)``, at least 1; 1.0 for ``factor = 1``. The scores' multiplier ``1/t`` is
        its square.

    Raises
    ------
    TypeError
        If ``factor`` or ``mscale`` is not a real number.
    ValueError
        If ``factor < 1`` or ``mscale <= 0``.

    Notes
    -----
    Peng et al. (2024), "YaRN: Efficient Context Window Extension of Large Language Models",
    the section that defines YaRN (the recommended ``sqrt(1/t) = 0.1 ln(s) + 1``); the
    authors' code (``get_mscale``) multiplies cos and sin by it. Taught in chapter 11.

    Examples
    --------
    >>> round(yarn_attention_factor(4), 4)         # s = 4: scores x 1.1386^2 = 1.2965
    1.1386
    >>> yarn_attention_factor(1)
    1.0
    """
    factor = _checks.real(factor, "factor", low=1)
    mscale = _checks.real(mscale, "mscale", low=0, low_open=True)
    return 0.1 * mscale * float(np.log(factor)) + 1.0


@dataclass(frozen=True)
class RopeConfig:
    """A released model's RoPE: its base and its ``rope_scaling``, as its configuration says.

    Parameters
    ----------
    name : str
    rope_theta : float
        The base of the frequencies ``theta_i = rope_theta^(-2i/rope_dim)``.
    rope_dim : int
        The features of a query or key head that RoPE turns (``rope_dim / 2`` pairs).
    context_length : int
        The context the model is documented to read, in tokens.
    rope_scaling : dict, optional
        The ``rope_scaling`` entry of the model's ``config.json`` with its keys and values as
        released (``None``: no scaling). ``"rope_type"`` (or the older ``"type"``) is
        ``"llama3"`` or ``"yarn"``.
    source : str
        Where the numbers come from.

    Notes
    -----
    Checked against the released configurations and code listed in ``source`` (chapter 11).

    Examples
    --------
    >>> llama = PUBLISHED_ROPE["Llama 3.1 8B"]
    >>> llama.kind, llama.factor, llama.original_length, llama.turn_bounds, llama.score_scale
    ('by_parts', 8.0, 8192, (1.0, 4.0), 1.0)
    """

    name: str
    rope_theta: float
    rope_dim: int
    context_length: int
    rope_scaling: dict | None = None
    source: str = ""

    @property
    def kind(self) -> str:
        """``"none"``, ``"by_parts"`` (Llama 3.1's ``"llama3"``) or ``"yarn"``."""
        if self.rope_scaling is None:
            return "none"
        kind = self.rope_scaling.get("rope_type", self.rope_scaling.get("type"))
        return {"llama3": "by_parts", "yarn": "yarn"}[kind]

    @property
    def factor(self) -> float:
        """The stretch ``s`` of the slow pairs (1.0 without scaling)."""
        return 1.0 if self.rope_scaling is None else float(self.rope_scaling["factor"])

    @property
    def original_length(self) -> int:
        """The context the RoPE was trained for before it was stretched."""
        if self.rope_scaling is None:
            return self.context_length
        return int(self.rope_scaling["original_max_position_embeddings"])

    @property
    def turn_bounds(self) -> tuple[float, float] | None:
        """``(alpha, beta)`` of :func:`rope_frequencies` ``"by_parts"``; ``None`` unscaled.

        Llama 3.1: ``(low_freq_factor, high_freq_factor)``. YaRN: ``(beta_slow,
        beta_fast)``, 1 and 32 when the configuration leaves them out (the defaults of the
        paper and of Hugging Face transformers).
        """
        scaling = self.rope_scaling
        if scaling is None:
            return None
        if self.kind == "by_parts":
            return float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
        return float(scaling.get("beta_slow", 1)), float(scaling.get("beta_fast", 32))

    @property
    def score_scale(self) -> float:
        """What the attention scores are multiplied by, ``1/t``: 1.0 unless YaRN.

        YaRN's ``yarn_attention_factor(factor, mscale=...)`` squared; DeepSeek-V3 applies it
        to every query-key dimension (``mscale_all_dim``), not only the rotated ones.
        """
        if self.kind != "yarn":
            return 1.0
        mscale = float(self.rope_scaling.get("mscale_all_dim", self.rope_scaling.get("mscale", 1)))
        return yarn_attention_factor(self.factor, mscale=mscale) ** 2

    def frequencies(self) -> np.ndarray:
        """The ``rope_dim / 2`` frequencies the model turns its pairs by, shape (rope_dim/2,).

        Unscaled: ``theta_i``. Scaled: :func:`rope_frequencies` ``"by_parts"`` with
        :attr:`turn_bounds`. Exact for Llama 3.1 (the same rule). For YaRN the released code
        blends linearly over the pair index (between bounds rounded outwards) rather than
        over the number of turns, so the blended pairs get somewhat different frequencies;
        the kept and the interpolated pairs are the same (tested for both YaRN models here).
        """
        if self.rope_scaling is None:
            return rope_frequencies(self.rope_dim, base=self.rope_theta)
        alpha, beta = self.turn_bounds
        return rope_frequencies(self.rope_dim, factor=self.factor, method="by_parts",
                                original_length=self.original_length, base=self.rope_theta,
                                alpha=alpha, beta=beta)


_LLAMA_MODELS = "meta-llama/llama-models (GitHub), "
PUBLISHED_ROPE = {
    "Llama 3 8B": RopeConfig(
        "Llama 3 8B", rope_theta=500_000.0, rope_dim=128, context_length=8192,
        source=_LLAMA_MODELS + "models/sku_list.py at 8c88b8c (llama3_8b: dim 4096, "
               "n_heads 32, rope_theta 500000.0, use_scaled_rope False) and "
               "models/llama3/model.py (old_context_len = 8192, 'original llama3 length')"),
    "Llama 3.1 8B": RopeConfig(
        "Llama 3.1 8B", rope_theta=500_000.0, rope_dim=128, context_length=131_072,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        source=_LLAMA_MODELS + "models/sku_list.py at 8c88b8c (llama3_1_8b: dim 4096, "
               "n_heads 32, rope_theta 500000.0, use_scaled_rope True), "
               "models/llama3/model.py apply_scaling (scale_factor 8, low_freq_factor 1, "
               "high_freq_factor 4, old_context_len 8192), models/llama3_1/api/sku_list.py "
               "(CONTEXT_LENGTH 131072); the same numbers in meta-llama/Llama-3.1-8B "
               "config.json"),
    "Qwen2.5 7B": RopeConfig(
        "Qwen2.5 7B", rope_theta=1_000_000.0, rope_dim=128, context_length=131_072,
        rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        source="QwenLM/Qwen2.5 (GitHub) at 486bf75, docs/source/deployment/vllm.md (the "
               "rope_scaling to add for long texts) and docs/source/getting_started/"
               "concepts.md (131,072 tokens with YaRN for 7B and larger); "
               "Qwen/Qwen2.5-7B-Instruct config.json (rope_theta 1000000.0, hidden_size "
               "3584, num_attention_heads 28)"),
    "DeepSeek-V3": RopeConfig(
        "DeepSeek-V3", rope_theta=10_000.0, rope_dim=64, context_length=131_072,
        rope_scaling={"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1,
                      "mscale": 1.0, "mscale_all_dim": 1.0,
                      "original_max_position_embeddings": 4096},
        source="deepseek-ai/DeepSeek-V3 config.json (rope_scaling, rope_theta 10000); "
               "deepseek-ai/DeepSeek-V3 (GitHub) inference/model.py (ModelArgs: "
               "original_seq_len 4096, rope_factor 40, beta_fast 32, beta_slow 1, "
               "mscale 1.0; MLA multiplies softmax_scale by mscale^2), "
               "inference/configs/config_671B.json (qk_rope_head_dim 64) and README "
               "(context 128K)"),
}
"""RoPE and its scaling in released models, each with its source (printed in chapter 11)."""


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
    power = 1 << (num_heads.bit_length() - 1)  # largest power of two <= num_heads
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
