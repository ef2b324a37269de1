"""Attention with a learned sink logit per head, as in gpt-oss (chapter 16).

Softmax gives every query a full unit of weight, so a head with nothing to read must park it
on some key (the attention sink, usually the first token). gpt-oss gives each head ``h`` one
more logit ``b_h`` that belongs to no key: it is appended to the scores as an extra column
before the softmax, and that column is dropped after it. A row's weights then sum to
``1 - exp(b_h) / (exp(b_h) + sum_j exp(s_j))``, less than 1, and the head may read
(almost) nothing. :func:`sink_logit_attention` is that function on arrays;
:class:`SinkLogitAttention` is grouped-query self-attention with it.

What gpt-oss's released code does, and this module follows (``github.com/openai/gpt-oss``,
commit ``7b58334``): ``gpt_oss/torch/model.py``, ``AttentionBlock.__init__`` (line 189)
makes ``self.sinks`` a parameter of shape ``(num_attention_heads,)``, one per *query* head;
``sdpa`` (lines 153-173) reshapes it to ``(n_kv_heads, q_mult, 1, 1)`` (query head
``h`` in group ``h // q_mult``, the grouping of :func:`~helpers.attention.grouped_query_attention`),
scales the scores by ``sm_scale = 1/sqrt(head_dim)`` and adds the mask *before* the sink
column is concatenated, so the sink logit itself is not scaled and no mask hides it;
``softmax`` runs over keys and sink together, ``W[..., :-1]`` drops the sink's column, and
the sink has no value vector (the output is ``W @ V`` over the keys only).

Imports only NumPy. Mask convention: ``True`` where a query may attend to a key.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .functions import (
    _scaled_scores,
    _shared_key_value_heads,
    _sink_start,
    _validated_qkv,
    softmax,
)
from .grouped_query import GroupedQueryAttention, _keras_variant_weights

__all__ = ["sink_logit_attention", "SinkLogitAttention"]


def sink_logit_attention(query, key, value, sink_logits, mask=None, *, bias=None,
                         scale=None):
    """Grouped-query attention whose softmax has one more logit per head, for no key.

    ``weights[h, i, j] = exp(s_ij) / (exp(b_h) + sum_j' exp(s_ij'))`` with ``s`` the scaled
    (and masked) scores: the softmax over ``[s_i0, ..., s_i(n_k-1), b_h]`` with the last
    column dropped. ``b_h = -inf`` is plain attention; ``b_h = 0`` is Miller's
    ``softmax_1`` ("off by one"), ``exp(s_j) / (1 + sum exp(s_j'))``.

    Parameters
    ----------
    query : array_like, shape (..., num_heads, n_q, head_dim), real
    key : array_like, shape (..., num_kv_heads, n_k, head_dim), real
    value : array_like, shape (..., num_kv_heads, n_k, value_dim), real
        ``num_kv_heads`` divides ``num_heads``; query head ``h`` reads key/value head
        ``h // (num_heads // num_kv_heads)``, as in
        :func:`~helpers.attention.grouped_query_attention` (equal: multi-head attention).
    sink_logits : array_like, shape (num_heads,), real
        ``b_h``, one per query head, not scaled. ``-inf`` is allowed (that head has no sink).
    mask : array_like of bool, broadcastable to (..., num_heads, n_q, n_k), optional
        ``True`` where a query may attend to a key; the sink is never masked.
    bias, scale : optional
        As in :func:`~helpers.attention.scaled_dot_product_attention` (the scale multiplies
        the scores only, never ``b_h``).

    Returns
    -------
    output : numpy.ndarray, shape (..., num_heads, n_q, value_dim)
        ``weights @ value``; the sink adds nothing (it has no value).
    weights : numpy.ndarray, shape (..., num_heads, n_q, n_k)
        Non-negative; each row sums to less than 1 (to ``1 - p_sink``). A row whose keys are
        all masked has weights 0 and output 0. The dtype is the inputs' common one.

    Raises
    ------
    TypeError
        If an input is not a real array or ``mask`` is not boolean.
    ValueError
        If ``sink_logits`` does not have shape (num_heads,) or contains NaN or ``+inf``; or
        as :func:`~helpers.attention.grouped_query_attention` (ranks below 3, heads that do
        not divide, sizes that disagree, masks or leading axes that do not broadcast).

    Notes
    -----
    OpenAI (2025), the gpt-oss model card (arXiv:2508.10925: a learned bias per head in the
    softmax's denominator), and its code (see the module docstring). Miller (2023),
    "Attention Is Off By One". Taught in chapter 16; chapter 7's online softmax started
    from the sink's term gives the same output (:func:`~helpers.attention.chunked_attention`
    with ``sink_logits``).

    Examples
    --------
    >>> scores_are_zero = np.zeros((1, 1, 2)), np.zeros((1, 3, 2)), np.eye(3)[None]
    >>> _, weights = sink_logit_attention(*scores_are_zero, sink_logits=[0.0])
    >>> weights                                   # e^0 / (e^0 + 3 e^0) each
    array([[[0.25, 0.25, 0.25]]])
    """
    query, key, value = _shared_key_value_heads(query, key, value)
    query, key, value, dtype = _validated_qkv(query, key, value)
    sinks = _sink_vector(sink_logits, query.shape[-3])
    scores = _scaled_scores(query, key, dtype, mask=mask, bias=bias, scale=scale)
    column = np.broadcast_to(sinks.astype(dtype)[:, None, None],
                             (*scores.shape[:-1], 1))
    weights = (softmax(np.concatenate([scores, column], axis=-1))[..., :-1]
               .astype(dtype))
    return np.matmul(weights, value).astype(dtype), weights


def _sink_vector(sink_logits, num_heads: int) -> np.ndarray:
    """``sink_logits`` checked to be one logit per query head, shape (num_heads,)."""
    sinks = _checks.float_array(sink_logits, "sink_logits", finite=False)
    if sinks.shape != (num_heads,):
        raise ValueError(f"sink_logits must have shape (num_heads,) = ({num_heads},), one "
                         f"logit per query head; got shape {sinks.shape}")
    return _sink_start(sinks, (num_heads,))


class SinkLogitAttention(GroupedQueryAttention):
    """Grouped-query self-attention with gpt-oss's learned sink logit in every head.

    :class:`~helpers.attention.GroupedQueryAttention` (same kernels, positions and
    :class:`~helpers.attention.KVCache`) whose softmax is that of
    :func:`sink_logit_attention`: one more parameter per query head.

    Parameters
    ----------
    query_kernel, key_kernel, value_kernel, output_kernel, query_bias, key_bias, value_bias,
    output_bias, position
        As in :class:`~helpers.attention.GroupedQueryAttention`.
    sink_logits : array_like, shape (num_query_heads,)
        ``b_h``, finite.

    Raises
    ------
    TypeError, ValueError
        As :class:`~helpers.attention.GroupedQueryAttention`; ValueError if
        ``sink_logits`` does not have shape (num_query_heads,) or is not finite.

    Notes
    -----
    OpenAI (2025), the gpt-oss model card. The Keras twin is
    ``helpers.keras_decoder_only.PositionalSelfAttention(variant="sink_logit")``;
    :meth:`from_keras` copies it. Taught in chapter 16.

    Examples
    --------
    >>> layer = SinkLogitAttention.random(8, 4, 2, rng=np.random.default_rng(0))
    >>> _, weights = layer(np.ones((1, 3, 8)))
    >>> bool(np.all(weights.sum(axis=-1) < 1))       # the sink keeps some of every row
    True
    >>> layer.count_params()                          # GQA's 216 + one logit per head
    220
    """

    def __init__(self, query_kernel, key_kernel, value_kernel, output_kernel,
                 query_bias=None, key_bias=None, value_bias=None, output_bias=None, *,
                 sink_logits, position: str = "none"):
        super().__init__(query_kernel, key_kernel, value_kernel, output_kernel, query_bias,
                         key_bias, value_bias, output_bias, position=position)
        self.sink_logits = _checks.weight(sink_logits, "sink_logits", (self.num_query_heads,))

    @classmethod
    def random(cls, d_model: int, num_query_heads: int, num_kv_heads: int, *,
               rng: np.random.Generator, position: str = "none") -> SinkLogitAttention:
        """:meth:`GroupedQueryAttention.random`'s weights and sink logits 0 (the Keras
        layer's initial value: every head starts as ``softmax_1``)."""
        plain = GroupedQueryAttention.random(d_model, num_query_heads, num_kv_heads, rng=rng,
                                             position=position)
        return cls(**plain.kernels_and_biases(), sink_logits=np.zeros(num_query_heads),
                   position=position)

    @classmethod
    def from_keras(cls, layer) -> SinkLogitAttention:
        """Copy a built ``PositionalSelfAttention(variant="sink_logit")``.

        Raises
        ------
        ValueError
            If the layer is not built or has another variant.
        """
        return cls(**_keras_variant_weights(layer, "sink_logit"), position=layer.position,
                   sink_logits=np.asarray(layer.sink_logits))

    def get_weights(self) -> list[np.ndarray]:
        """The kernels and biases, then ``sink_logits``."""
        return [*super().get_weights(), self.sink_logits]

    def _mix(self, query, keys, values, mask, bias):
        return sink_logit_attention(query, keys, values, self.sink_logits, mask, bias=bias)
