"""Keras layers that tell attention where tokens are: RoPE and ALiBi (chapter 11).

:class:`RotaryPositionEmbedding` rotates queries and keys (the twin of
:func:`helpers.positions.rotary_position_embedding`), :class:`AlibiBias` adds the ALiBi bias
to attention scores (the twin of :func:`helpers.positions.alibi_bias`). The decoder-only model
(:mod:`helpers.keras_decoder_only`) and multi-head latent attention
(:mod:`helpers.keras_latent_attention`) both use them. Imports TensorFlow/Keras (through
``helpers._tensorflow``).
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._tensorflow import keras
from .positions import _PAIRINGS, _frequencies, _pair_columns, alibi_slopes

__all__ = ["RotaryPositionEmbedding", "AlibiBias"]


def _window_mask(n, window: int):
    """(n, n) bool tensor: ``0 <= i - j < window`` (``helpers.attention.sliding_window_mask``)."""
    positions = keras.ops.arange(n)
    offset = keras.ops.expand_dims(positions, 1) - keras.ops.expand_dims(positions, 0)
    return keras.ops.logical_and(offset >= 0, offset < window)


@keras.saving.register_keras_serializable(package="helpers")
class RotaryPositionEmbedding(keras.layers.Layer):
    """Rotary position embedding in Keras: rotate each feature pair by position x angle.

    The Keras twin of :func:`helpers.transformer.rotary_position_embedding` (same
    frequencies ``base^(-2i / head_dim)``, same pairings); no weights.

    Parameters
    ----------
    base : float, default 10000.0
        Greater than 1.
    pairing : {"adjacent", "halves"}, default "adjacent"
        Features ``(2i, 2i+1)`` (the RoFormer paper) or ``(i, i + head_dim/2)`` (GPT-NeoX,
        Llama).
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (..., n, head_dim), float, head_dim even
    positions : int tensor, shape (n,), optional
        ``None``: 0 .. n-1.

    Returns
    -------
    tensor, the shape and dtype of ``x``

    Raises
    ------
    TypeError
        If ``base`` is not a number.
    ValueError
        If ``base <= 1`` or ``pairing`` is unknown; when built, if ``head_dim`` is odd.

    Notes
    -----
    Su et al. (2021), equation (34). Taught in chapter 11.

    Examples
    --------
    >>> from helpers.transformer import rotary_position_embedding
    >>> x = np.random.default_rng(0).normal(size=(2, 5, 4)).astype("float32")
    >>> out = RotaryPositionEmbedding()(x)
    >>> bool(np.allclose(out, rotary_position_embedding(x), atol=1e-6))
    True
    """

    def __init__(self, base: float = 10000.0, pairing: str = "adjacent", **kwargs):
        super().__init__(**kwargs)
        self.base = _checks.real(base, "base", low=1, low_open=True)
        self.pairing = _checks.one_of(pairing, "pairing", _PAIRINGS)

    def build(self, x_shape):
        head_dim = x_shape[-1]
        if head_dim is None or head_dim < 2 or head_dim % 2:
            raise ValueError("x's last axis head_dim must be even and at least 2; got shape "
                             f"{tuple(x_shape)}")
        first, second = _pair_columns(head_dim, self.pairing)
        self._first, self._second = first, second
        self._restore = np.argsort(np.concatenate([first, second]))   # back to x's order
        self._frequencies = _frequencies(head_dim, self.base).astype("float32")

    def call(self, x, positions=None):
        if positions is None:
            positions = keras.ops.arange(keras.ops.shape(x)[-2])
        angles = keras.ops.cast(positions, "float32")[:, None] * self._frequencies
        cos = keras.ops.cast(keras.ops.cos(angles), x.dtype)
        sin = keras.ops.cast(keras.ops.sin(angles), x.dtype)
        a = keras.ops.take(x, self._first, axis=-1)
        b = keras.ops.take(x, self._second, axis=-1)
        turned = keras.ops.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
        return keras.ops.take(turned, self._restore, axis=-1)

    def compute_output_shape(self, x_shape):
        return x_shape

    def get_config(self):
        return {**super().get_config(), "base": self.base, "pairing": self.pairing}


@keras.saving.register_keras_serializable(package="helpers")
class AlibiBias(keras.layers.Layer):
    """Adds the ALiBi bias ``-m_h (i - j)`` to attention scores; no weights.

    The Keras twin of :func:`helpers.transformer.alibi_bias`, slopes from
    :func:`helpers.transformer.alibi_slopes`. The ``n_q`` queries are taken to be the last
    ``n_q`` of the ``n_k`` positions (``i = n_k - n_q + row``), as in self-attention. Above
    the diagonal the same formula gives positive values; apply the causal mask after it.

    Parameters
    ----------
    num_heads : int
        At least 1; one slope per head.
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    scores : tensor, shape (batch, num_heads, n_q, n_k), float
        Scaled dot products, before the mask and the softmax.

    Returns
    -------
    tensor, the shape and dtype of ``scores``

    Notes
    -----
    Press, Smith and Lewis (2022), section 3. Taught in chapter 11.

    Examples
    --------
    >>> np.asarray(AlibiBias(1)(np.zeros((1, 1, 3, 3), "float32")))[0, 0] * 2 ** 8
    array([[ 0.,  1.,  2.],
           [-1.,  0.,  1.],
           [-2., -1.,  0.]], dtype=float32)
    """

    def __init__(self, num_heads: int, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = _checks.positive_int(num_heads, "num_heads")
        self._slopes = alibi_slopes(self.num_heads).astype("float32")[:, None, None]

    def call(self, scores):
        n_q, n_k = keras.ops.shape(scores)[-2], keras.ops.shape(scores)[-1]
        keys = keras.ops.arange(n_k)
        queries = keras.ops.arange(n_q) + (n_k - n_q)
        distance = keras.ops.cast(keys[None, :] - queries[:, None], "float32")   # j - i
        return scores + keras.ops.cast(self._slopes * distance, scores.dtype)

    def compute_output_shape(self, scores_shape):
        return scores_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads}
