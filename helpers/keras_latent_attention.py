"""The Keras twin of :mod:`helpers.latent_attention`: multi-head latent attention from Keras ops.

:class:`MultiHeadLatentAttention` holds the same ten weights as the NumPy layer (the eight
(d_in, d_out) matrices named after DeepSeek-V2's equations and the two RMSNorm scales) and
computes causal self-attention in the naive or the absorbed form;
:meth:`helpers.attention.MultiHeadLatentAttention.from_keras` copies the weights,
and the two layers give the same numbers (tested to 1e-5 in float32). Taught in chapter 12.
Imports TensorFlow/Keras (through ``helpers._tensorflow``).
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._tensorflow import keras
from .keras_positions import RotaryPositionEmbedding, _window_mask

__all__ = ["MultiHeadLatentAttention"]


@keras.saving.register_keras_serializable(package="helpers")
class MultiHeadLatentAttention(keras.layers.Layer):
    """Multi-head latent attention (DeepSeek-V2) as a Keras layer, causal self-attention.

    The equations are those of :class:`helpers.attention.MultiHeadLatentAttention`:
    ``c_Q = RMSNorm(x W^DQ)``, ``q = [c_Q W^UQ; RoPE(c_Q W^QR)]``, ``c_KV = RMSNorm(x
    W^DKV)``, ``k = [c_KV W^UK; RoPE(x W^KR)]`` (the RoPE key shared by all heads),
    ``v = c_KV W^UV``, scores scaled by ``1/sqrt(head_dim + rope_dim)``, causal mask,
    ``W^O`` on the concatenated heads.

    Parameters
    ----------
    num_heads, head_dim, latent_dim, query_latent_dim : int
        n_h, d_h (also the value size), d_c and d_c'.
    rope_dim : int
        d_h^R, even; 0 leaves out the decoupled RoPE part (no ``W^QR``, ``W^KR``: the layer
        then gets no position of its own).
    absorbed : bool, default False
        Compute with ``W^UK`` folded into the query and ``W^UV`` applied after the weighted
        sum of latents (the same numbers).
    epsilon : float, default 1e-6
        Of both RMSNorms.
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float
    value : tensor, optional
        ``x`` itself or ``None``: the layer is called as :class:`helpers.keras_decoder_only.
        DecoderOnlyLayer` calls its self-attention, ``attention(h, h, ...)``.
    use_causal_mask : bool, default True
        Must be ``True``: the layer is causal self-attention only.
    return_attention_scores : bool, default False
        Also return the weights (batch, num_heads, n, n).

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer (``rope_dim``: not 0 or more), ``rope_dim`` is
        odd, or ``absorbed`` is not a bool; when called, if ``value`` is another tensor
        than ``x`` or ``use_causal_mask`` is ``False``.

    Notes
    -----
    DeepSeek-AI (2024), "DeepSeek-V2", section 2.1, equations (9)-(19), with the RMSNorms
    of the released code. Taught in chapter 12.

    Examples
    --------
    >>> from helpers import latent_attention
    >>> layer = MultiHeadLatentAttention(num_heads=2, head_dim=4, latent_dim=6,
    ...                                  query_latent_dim=8, rope_dim=2)
    >>> x = np.random.default_rng(0).normal(size=(1, 5, 16)).astype("float32")
    >>> out = np.asarray(layer(x))
    >>> twin = latent_attention.MultiHeadLatentAttention.from_keras(layer)
    >>> bool(np.allclose(out, twin(x)[0], atol=1e-5))
    True
    """

    def __init__(self, num_heads: int, head_dim: int, latent_dim: int, query_latent_dim: int,
                 rope_dim: int, *, absorbed: bool = False, epsilon: float = 1e-6, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = _checks.positive_int(num_heads, "num_heads")
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.latent_dim = _checks.positive_int(latent_dim, "latent_dim")
        self.query_latent_dim = _checks.positive_int(query_latent_dim, "query_latent_dim")
        self.rope_dim = _checks.integer(rope_dim, "rope_dim", low=0)
        if self.rope_dim % 2:
            raise ValueError(f"rope_dim must be even (RoPE turns pairs); got {self.rope_dim}")
        self.absorbed = _checks.boolean(absorbed, "absorbed")
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
        self.rotary = RotaryPositionEmbedding(name="rotary")

    def build(self, x_shape, value_shape=None):
        d, h = x_shape[-1], self.num_heads
        d_h, d_r, d_c, d_cq = self.head_dim, self.rope_dim, self.latent_dim, self.query_latent_dim
        shapes = {"w_dq": (d, d_cq), "w_uq": (d_cq, h * d_h), "w_qr": (d_cq, h * d_r),
                  "w_dkv": (d, d_c), "w_uk": (d_c, h * d_h), "w_uv": (d_c, h * d_h),
                  "w_kr": (d, d_r), "w_o": (h * d_h, d)}
        for name, shape in shapes.items():
            weight = None if 0 in shape else self.add_weight(
                shape=shape, initializer="glorot_uniform", name=name)  # rope_dim 0: no RoPE
            setattr(self, name, weight)
        self.q_norm = self.add_weight(shape=(d_cq,), initializer="ones", name="q_norm")
        self.kv_norm = self.add_weight(shape=(d_c,), initializer="ones", name="kv_norm")
        if d_r:
            self.rotary.build((None, None, None, d_r))

    def _rms_norm(self, x, scale):
        mean_square = keras.ops.mean(keras.ops.square(x), axis=-1, keepdims=True)
        return x * keras.ops.rsqrt(mean_square + self.epsilon) * scale

    def _rope_scores(self, x, c_q):
        """The decoupled RoPE part of the scores, (batch, heads, n, n); 0 without it."""
        if not self.rope_dim:
            return 0.0
        q_r = self.rotary(self._split(keras.ops.matmul(c_q, self.w_qr)))             # (14)
        k_r = self.rotary(keras.ops.matmul(x, self.w_kr)[:, None])                   # (15)
        return keras.ops.einsum("bhqr,bxkr->bhqk", q_r, k_r)

    def _split(self, x):
        """(batch, n, heads*size) -> (batch, heads, n, size)."""
        batch, n = keras.ops.shape(x)[0], keras.ops.shape(x)[1]
        x = keras.ops.reshape(x, (batch, n, self.num_heads, -1))
        return keras.ops.transpose(x, (0, 2, 1, 3))

    def call(self, x, value=None, use_causal_mask=True, return_attention_scores=False,
             training=None):
        if value is not None and value is not x:
            raise ValueError("value must be x itself or None: multi-head latent attention "
                             "here is self-attention")
        if not use_causal_mask:
            raise ValueError("use_causal_mask must be True: this layer is causal only")
        c_q = self._rms_norm(keras.ops.matmul(x, self.w_dq), self.q_norm)          # (12)
        q_c = self._split(keras.ops.matmul(c_q, self.w_uq))                          # (13)
        latent = self._rms_norm(keras.ops.matmul(x, self.w_dkv), self.kv_norm)      # (9)
        rope_scores = self._rope_scores(x, c_q)
        if self.absorbed:
            w_uk = keras.ops.reshape(self.w_uk, (self.latent_dim, self.num_heads, -1))
            q_latent = keras.ops.einsum("bhqd,chd->bhqc", q_c, w_uk)
            scores = keras.ops.einsum("bhqc,bkc->bhqk", q_latent, latent) + rope_scores
        else:
            k_c = self._split(keras.ops.matmul(latent, self.w_uk))                   # (10)
            scores = keras.ops.einsum("bhqd,bhkd->bhqk", q_c, k_c) + rope_scores
        scores = scores / float(np.sqrt(self.head_dim + self.rope_dim))
        n = keras.ops.shape(x)[1]
        scores = keras.ops.where(_window_mask(n, n)[None, None], scores, -1e9)
        weights = keras.ops.softmax(scores, axis=-1)                                  # (18)
        if self.absorbed:
            w_uv = keras.ops.reshape(self.w_uv, (self.latent_dim, self.num_heads, -1))
            heads_latent = keras.ops.einsum("bhqk,bkc->bhqc", weights, latent)
            heads = keras.ops.einsum("bhqc,chd->bqhd", heads_latent, w_uv)
        else:
            v_c = self._split(keras.ops.matmul(latent, self.w_uv))                   # (11)
            heads = keras.ops.einsum("bhqk,bhkd->bqhd", weights, v_c)
        batch = keras.ops.shape(x)[0]
        merged = keras.ops.reshape(heads, (batch, n, self.num_heads * self.head_dim))
        output = keras.ops.matmul(merged, self.w_o)                                   # (19)
        return (output, weights) if return_attention_scores else output

    def compute_output_shape(self, x_shape, value_shape=None):
        return x_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "head_dim": self.head_dim,
                "latent_dim": self.latent_dim, "query_latent_dim": self.query_latent_dim,
                "rope_dim": self.rope_dim, "absorbed": self.absorbed, "epsilon": self.epsilon}
