"""Gated attention, as in Qwen's paper and Qwen3-Next (chapter 16).

Each head's output, before the output projection W_O, is multiplied feature by feature by a
sigmoid gate computed from the token itself::

    o = W_O [ (softmax(Q K^T / sqrt(d)) V)  ⊙  sigmoid(X W_G) ]

The gate is head-specific (every head has its own columns of W_G) and elementwise (one gate
per feature of a head, not one per head): the best variant of Qiu et al. (2025), "G1" at the
SDPA output, whose authors report that it removes the attention sink. A head with nothing
to read can now close its gate instead of parking its weight on the first token.

What the released code does, and this module follows: Qwen3-Next in Hugging Face
transformers (``src/transformers/models/qwen3_next/modeling_qwen3_next.py``, commit
``01cdc60``, class ``Qwen3NextAttention``) widens ``q_proj`` to ``num_attention_heads *
head_dim * 2`` outputs, views them as ``(..., num_heads, 2 * head_dim)`` and splits each
head's ``2 * head_dim`` with ``torch.chunk(..., 2, dim=-1)``: the first ``head_dim`` are
the head's query, the next ``head_dim`` its gate logits (interleaved *per query head*).
After the attention, ``attn_output * torch.sigmoid(gate)`` and then ``o_proj``. In Keras's
layout a kernel of shape (d_model, num_heads, 2 * head_dim) is that same ``q_proj``
(``weight.T`` reshaped), and :func:`split_query_gate` takes it apart. Left out here:
Qwen3-Next's RMSNorm of queries and keys (``q_norm``, ``k_norm``), which the gate does not
touch. The authors' own code (``github.com/qiuzh20/gated_attention``,
``modeling_qwen3.py``, ``elementwise_attn_output_gate``) orders the widened projection
otherwise, per key/value group (all the group's queries, then all its gates); the
computation is the same up to a permutation of W_G's columns.

Imports only NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .._initializers import glorot_uniform
from .grouped_query import GroupedQueryAttention, _keras_variant_weights
from .multi_head import project_heads

__all__ = ["gate_heads", "split_query_gate", "GatedAttention"]


def gate_heads(heads_out, gate_logits) -> np.ndarray:
    """Every feature of every head's output times the sigmoid of its gate logit.

    Parameters
    ----------
    heads_out : array_like, shape (..., num_heads, n, head_dim), real
        The heads' attention outputs, before W_O.
    gate_logits : array_like, same shape, real
        ``X W_G`` for those heads and positions. ``+inf`` (gate 1: the output unchanged)
        and ``-inf`` (gate 0: the head says nothing) are allowed; NaN is not.

    Returns
    -------
    numpy.ndarray, the shape of ``heads_out``
        ``heads_out * sigmoid(gate_logits)``, each gate in [0, 1]; the inputs' common dtype.

    Raises
    ------
    TypeError
        If an input is not a real array.
    ValueError
        If the shapes differ, ``heads_out`` is not finite or ``gate_logits`` has NaN.

    Notes
    -----
    Qiu et al. (2025), "Gated Attention for Large Language Models": the gate
    ``Y' = Y ⊙ sigmoid(X W)`` at position G1 (the SDPA output). sigmoid(z) is computed as
    (1 + tanh(z/2)) / 2,
    which is finite for every z including the infinities. Taught in chapter 16.

    Examples
    --------
    >>> gate_heads(np.ones((1, 1, 3)), [[[0.0, np.inf, -np.inf]]])
    array([[[0.5, 1. , 0. ]]])
    """
    heads_out = _checks.float_array(heads_out, "heads_out", min_rank=3,
                                    axes="(..., num_heads, n, head_dim)")
    gate_logits = _checks.float_array(gate_logits, "gate_logits", finite=False)
    if gate_logits.shape != heads_out.shape:
        raise ValueError(f"gate_logits must have the shape of heads_out {heads_out.shape}; "
                         f"got shape {gate_logits.shape}")
    if np.any(np.isnan(gate_logits)):
        raise ValueError(f"gate_logits contains NaN (shape {gate_logits.shape})")
    dtype = np.result_type(heads_out.dtype, gate_logits.dtype)
    gate = (1 + np.tanh(gate_logits / 2)) / 2
    return (heads_out * gate).astype(dtype, copy=False)


def split_query_gate(kernel, bias=None) -> dict[str, np.ndarray | None]:
    """The query and gate parts of a widened query projection, in Qwen3-Next's layout.

    Parameters
    ----------
    kernel : array_like, shape (d_model, num_heads, 2 * head_dim)
        Head ``h``'s first ``head_dim`` columns are its query, the next ``head_dim`` its
        gate (Qwen3-Next's ``q_proj.weight.T`` reshaped so; the Keras layer's ``query``
        kernel with ``variant="gated"``).
    bias : array_like, shape (num_heads, 2 * head_dim), optional

    Returns
    -------
    dict
        ``query_kernel`` and ``gate_kernel`` (d_model, num_heads, head_dim), ``query_bias``
        and ``gate_bias`` (num_heads, head_dim) or ``None`` without ``bias``.

    Raises
    ------
    TypeError
        If an input is not a real array.
    ValueError
        If ``kernel`` does not have 3 axes with an even last one, or ``bias`` does not
        have shape (num_heads, 2 * head_dim), or either is not finite.

    Examples
    --------
    >>> parts = split_query_gate(np.arange(8.0).reshape(1, 2, 4))   # 2 heads of size 2
    >>> parts["query_kernel"][0], parts["gate_kernel"][0]
    (array([[0., 1.],
           [4., 5.]]), array([[2., 3.],
           [6., 7.]]))
    """
    kernel = _checks.float_array(kernel, "kernel", ndim=3,
                                 axes="(d_model, num_heads, 2 * head_dim)")
    if kernel.shape[2] % 2:
        raise ValueError("kernel's last axis must be 2 * head_dim (query and gate); got "
                         f"shape {kernel.shape}")
    head_dim = kernel.shape[2] // 2
    parts = {"query_kernel": kernel[..., :head_dim], "gate_kernel": kernel[..., head_dim:],
             "query_bias": None, "gate_bias": None}
    if bias is not None:
        bias = _checks.weight(bias, "bias", kernel.shape[1:])
        parts.update(query_bias=bias[..., :head_dim], gate_bias=bias[..., head_dim:])
    return parts


class GatedAttention(GroupedQueryAttention):
    """Grouped-query self-attention with a head-specific, elementwise sigmoid output gate.

    :class:`~helpers.attention.GroupedQueryAttention` (same kernels, positions and
    :class:`~helpers.attention.KVCache`) whose heads' outputs pass through
    :func:`gate_heads` with gate logits ``X W_G + b_G`` before the output projection; ``X``
    is the layer's input (after the layer norm, as the query's).

    Parameters
    ----------
    query_kernel, key_kernel, value_kernel, output_kernel, query_bias, key_bias, value_bias,
    output_bias, position
        As in :class:`~helpers.attention.GroupedQueryAttention`.
    gate_kernel : array_like, shape (d_model, num_query_heads, head_dim)
        W_G, in the layout of ``query_kernel``.
    gate_bias : array_like, shape (num_query_heads, head_dim), optional

    Raises
    ------
    TypeError, ValueError
        As :class:`~helpers.attention.GroupedQueryAttention`; ValueError if ``gate_kernel``
        or ``gate_bias`` has another shape or is not finite.

    Notes
    -----
    Qiu et al. (2025), the variant they recommend (position G1 after SDPA, elementwise,
    head-specific, sigmoid, multiplicative); the widened query projection of Qwen3-Next
    (module docstring). The Keras twin is
    ``helpers.keras_decoder_only.PositionalSelfAttention(variant="gated")``;
    :meth:`from_keras` copies it. Taught in chapter 16.

    Examples
    --------
    >>> layer = GatedAttention.random(8, 4, 2, rng=np.random.default_rng(0))
    >>> layer(np.ones((1, 3, 8)))[0].shape
    (1, 3, 8)
    >>> layer.count_params()                 # GQA's 216 + W_G 8 x 4 x 2 + its bias 4 x 2
    288
    """

    def __init__(self, query_kernel, key_kernel, value_kernel, output_kernel,
                 query_bias=None, key_bias=None, value_bias=None, output_bias=None, *,
                 gate_kernel, gate_bias=None, position: str = "none"):
        super().__init__(query_kernel, key_kernel, value_kernel, output_kernel, query_bias,
                         key_bias, value_bias, output_bias, position=position)
        self.gate_kernel = _checks.weight(gate_kernel, "gate_kernel", self.query_kernel.shape)
        self.gate_bias = (None if gate_bias is None
                          else _checks.weight(gate_bias, "gate_bias",
                                              self.query_kernel.shape[1:]))

    @classmethod
    def random(cls, d_model: int, num_query_heads: int, num_kv_heads: int, *,
               rng: np.random.Generator, position: str = "none") -> GatedAttention:
        """:meth:`GroupedQueryAttention.random`'s weights, a Glorot-uniform W_G and a zero
        gate bias."""
        plain = GroupedQueryAttention.random(d_model, num_query_heads, num_kv_heads, rng=rng,
                                             position=position)
        shape = plain.query_kernel.shape
        return cls(**plain.kernels_and_biases(), position=position,
                   gate_kernel=glorot_uniform(rng, shape, d_model),
                   gate_bias=np.zeros(shape[1:]))

    @classmethod
    def from_keras(cls, layer) -> GatedAttention:
        """Copy a built ``PositionalSelfAttention(variant="gated")``, splitting its widened
        ``query`` kernel with :func:`split_query_gate`.

        Raises
        ------
        ValueError
            If the layer is not built or has another variant.
        """
        weights = _keras_variant_weights(layer, "gated")
        weights.update(split_query_gate(weights["query_kernel"], weights.get("query_bias")))
        return cls(**weights, position=layer.position)

    def get_weights(self) -> list[np.ndarray]:
        """The kernels and biases, then ``gate_kernel`` and ``gate_bias`` (if any)."""
        gate = [self.gate_kernel] + ([] if self.gate_bias is None else [self.gate_bias])
        return [*super().get_weights(), *gate]

    def _project_out(self, heads_out, x):
        gate_logits = project_heads(x, self.gate_kernel, self.gate_bias)
        return self._output(gate_heads(heads_out, gate_logits))
