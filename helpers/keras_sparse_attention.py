"""Sparse attention in Keras: a sliding window, DeepSeek's top-k (DSA) and NSA, one head each.

Three token mixers for :func:`helpers.keras_associative_recall.build_recall_model`, each
``(batch, n, d_model) → (batch, n, d_model)``, causal, with a query, keys and values of
``head_dim`` features and an output projection back to ``d_model``:

- :class:`WindowAttention`: softmax attention over the last ``window`` positions.
- :class:`TopKAttention`: DeepSeek Sparse Attention: a small "lightning indexer" scores every
  earlier key and each query attends only to its ``top_k`` best keys; the indexer learns from
  a KL loss towards the dense attention's distribution (``add_loss``), not from the task.
- :class:`NativeSparseAttention`: NSA's three branches (compressed blocks, selected blocks,
  a sliding window) mixed by sigmoid gates.

The sparsity is written as a mask on the full ``n x n`` score matrix, which shows which keys a
query reads but saves no work: the kernels that make sparse attention fast gather only the
chosen keys. The weights are plain matrices without biases (``kernels[name]``). Taught in
chapter 17. Imports TensorFlow/Keras (through ``helpers._tensorflow``).
"""

from __future__ import annotations

import math

from . import _checks
from ._tensorflow import keras, tf
from .keras_positions import _window_mask

__all__ = ["WindowAttention", "TopKAttention", "NativeSparseAttention", "masked_softmax"]

ops = keras.ops
_NEG = -1e9


def masked_softmax(scores, mask):
    """Softmax over the last axis where ``mask`` is true; 0 elsewhere (rows with none: all 0).

    Parameters
    ----------
    scores : tensor, shape (..., n_q, n_k), float
    mask : bool tensor, broadcastable to ``scores``

    Returns
    -------
    tensor, shape of ``scores``
        Each row sums to 1 over its true entries, or is all 0 if it has none.

    Examples
    --------
    >>> p = masked_softmax(keras.ops.zeros((2, 3)), keras.ops.array([[1, 1, 0], [0, 0, 0]]) > 0)
    >>> keras.ops.convert_to_numpy(p)
    array([[0.5, 0.5, 0. ],
           [0. , 0. , 0. ]], dtype=float32)
    """
    probs = ops.softmax(ops.where(mask, scores, _NEG), axis=-1)
    return ops.where(mask, probs, 0.0)


def _top_mask(scores, k, allowed):
    """(…, n_q, m) bool: the ``k`` highest ``scores`` per row among ``allowed`` (all of them
    if fewer are allowed). ``tf.math.top_k`` puts the lower index first among equal scores
    (ReLU makes many indexer scores exactly 0), so a row never gets more than ``k``."""
    scores = ops.where(allowed, scores, _NEG)
    index = tf.math.top_k(scores, k=ops.minimum(k, ops.shape(scores)[-1])).indices
    chosen = ops.sum(ops.one_hot(index, ops.shape(scores)[-1]), axis=-2) > 0
    return ops.logical_and(chosen, allowed)


class _SingleHead(keras.layers.Layer):
    """Shared parts: kernels as named matrices, ``project``, ``scores``."""

    def _kernel(self, name, shape, initializer="glorot_uniform"):
        self.kernels[name] = self.add_weight(shape=shape, name=name, initializer=initializer)

    def project(self, x, name):
        return ops.matmul(x, self.kernels[name])

    def scores(self, q, k):
        return ops.matmul(q, ops.swapaxes(k, -1, -2)) / math.sqrt(self.head_dim)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


@keras.saving.register_keras_serializable(package="helpers")
class WindowAttention(_SingleHead):
    """Causal softmax attention over a sliding window of ``window`` positions.

    Position ``t`` reads keys ``t - window + 1 .. t`` (the mask of
    :func:`helpers.attention.sliding_window_mask`).

    Parameters
    ----------
    head_dim : int
        Features of the query, keys and values.
    window : int
        Keys each query reads, counting itself; at least 1.
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float

    Returns
    -------
    tensor, shape (batch, n, d_model)

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer.

    Notes
    -----
    Beltagy, Peters and Cohan (2020), "Longformer", section 3.1. Taught in chapter 17.
    """

    def __init__(self, head_dim: int, window: int, **kwargs):
        super().__init__(**kwargs)
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.window = _checks.positive_int(window, "window")

    def build(self, input_shape):
        d, h = input_shape[-1], self.head_dim
        self.kernels = {}
        for name in ("query", "key", "value"):
            self._kernel(name, (d, h))
        self._kernel("output", (h, d))

    def call(self, x):
        q, k, v = (self.project(x, name) for name in ("query", "key", "value"))
        mask = _window_mask(ops.shape(x)[1], self.window)
        return self.project(ops.matmul(masked_softmax(self.scores(q, k), mask), v), "output")

    def get_config(self):
        return {**super().get_config(), "head_dim": self.head_dim, "window": self.window}


@keras.saving.register_keras_serializable(package="helpers")
class TopKAttention(_SingleHead):
    """DeepSeek Sparse Attention: each query reads the ``top_k`` keys a lightning indexer picks.

    The indexer has ``index_heads`` small heads of ``index_dim`` features:
    ``I[t, s] = sum_j w[t, j] ReLU(q_I[t, j] . k_I[s])`` with ``q_I``, ``k_I`` and the head
    weights ``w`` linear in ``x`` (report, equation 1). Its input is ``stop_gradient(x)``, and the
    top-k choice has no gradient, so the task's loss does not train it. It is trained by
    ``kl_weight * mean_t KL(p[t] || softmax(I[t]))`` (``add_loss``) where ``p[t]`` is the main
    attention's distribution over all keys ``s <= t`` (computed densely, held constant).

    Parameters
    ----------
    head_dim : int
        Features of the main query, keys and values.
    top_k : int
        Keys each query reads (all of them when ``top_k >= t + 1``).
    index_heads, index_dim : int, default 4 and 8
        The indexer's heads and their size.
    kl_weight : float, default 1.0
        Weight of the indexer's KL loss; >= 0 (0 leaves the indexer untrained).
    dense_steps : int, default 0
        Training steps of the dense warm-up: for the first ``dense_steps`` training calls
        every query reads all its keys (the indexer still learns from the KL loss); after
        them, the ``top_k`` the indexer picks. Counted in the non-trainable weight
        ``step``; calls with ``training=False`` neither count nor warm up.
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float

    Returns
    -------
    tensor, shape (batch, n, d_model)
        The output; :meth:`index_scores` and :meth:`selected` give the indexer's scores
        (batch, n, n) and the bool mask of chosen keys (batch, n, n).

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer or ``kl_weight`` is negative.

    Notes
    -----
    DeepSeek-AI (2025), "DeepSeek-V3.2-Exp: Boosting long-context efficiency with DeepSeek
    Sparse Attention", section 2.1 (indexer, equation 1; top-k selection, equation 2) and
    2.1.1 (training). Simplification: the report trains in two stages, a dense warm-up (the
    main model frozen, KL over all keys) and then a sparse stage with the KL restricted to the
    selected keys; here the whole model trains in both stages (``dense_steps`` dense calls,
    then sparse), with the warm-up's KL over all earlier keys throughout. Taught in
    chapter 17.
    """

    def __init__(self, head_dim: int, top_k: int, *, index_heads: int = 4,
                 index_dim: int = 8, kl_weight: float = 1.0, dense_steps: int = 0,
                 **kwargs):
        super().__init__(**kwargs)
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.top_k = _checks.positive_int(top_k, "top_k")
        self.index_heads = _checks.positive_int(index_heads, "index_heads")
        self.index_dim = _checks.positive_int(index_dim, "index_dim")
        self.kl_weight = _checks.real(kl_weight, "kl_weight", low=0.0)
        self.dense_steps = _checks.integer(dense_steps, "dense_steps", low=0)

    def build(self, input_shape):
        d, h = input_shape[-1], self.head_dim
        self.kernels = {}
        for name in ("query", "key", "value"):
            self._kernel(name, (d, h))
        self._kernel("output", (h, d))
        self._kernel("index_query", (d, self.index_heads * self.index_dim))
        self._kernel("index_key", (d, self.index_dim))
        self._kernel("index_weight", (d, self.index_heads))
        self.step = self.add_weight(shape=(), name="step", initializer="zeros",
                                    trainable=False)

    def index_scores(self, x):
        """``I``, shape (batch, n, n): the indexer's score of key ``s`` for query ``t``."""
        x = ops.stop_gradient(x)
        shape = ops.shape(x)
        q = ops.reshape(self.project(x, "index_query"),
                        (shape[0], shape[1], self.index_heads, self.index_dim))
        k, w = self.project(x, "index_key"), self.project(x, "index_weight")
        per_head = ops.relu(ops.einsum("bthd,bsd->bths", q, k))
        return ops.einsum("bth,bths->bts", w, per_head)

    def selected(self, x):
        """Bool (batch, n, n): the ``top_k`` keys ``s <= t`` of highest ``I[t, s]``."""
        causal = _window_mask(ops.shape(x)[1], ops.shape(x)[1])
        return _top_mask(self.index_scores(x), self.top_k, causal)

    def call(self, x, training=False):
        q, k, v = (self.project(x, name) for name in ("query", "key", "value"))
        scores = self.scores(q, k)
        index = self.index_scores(x)
        causal = _window_mask(ops.shape(x)[1], ops.shape(x)[1])
        chosen = _top_mask(index, self.top_k, causal)
        if training and self.dense_steps:                 # the dense warm-up
            chosen = ops.logical_or(chosen, ops.logical_and(
                causal, ops.less(self.step, float(self.dense_steps))))
            self.step.assign_add(1.0)
        target = ops.stop_gradient(masked_softmax(scores, causal))
        log_index = ops.log_softmax(ops.where(causal, index, _NEG), axis=-1)
        log_target = ops.log(ops.maximum(target, 1e-12))
        kl = ops.sum(ops.where(causal, target * (log_target - log_index), 0.0), axis=-1)
        self.add_loss(self.kl_weight * ops.mean(kl))
        return self.project(ops.matmul(masked_softmax(scores, chosen), v), "output")

    def get_config(self):
        return {**super().get_config(), "head_dim": self.head_dim, "top_k": self.top_k,
                "index_heads": self.index_heads, "index_dim": self.index_dim,
                "kl_weight": self.kl_weight, "dense_steps": self.dense_steps}


@keras.saving.register_keras_serializable(package="helpers")
class NativeSparseAttention(_SingleHead):
    """Native Sparse Attention: compressed, selected and sliding-window branches, gated.

    One query ``q_t`` reads three sets of keys and values, each with its own key and value
    projections, and the outputs are mixed by gates ``g = sigmoid(x W_gate)`` (3 per token):
    ``o_t = g_cmp o_cmp + g_slc o_slc + g_win o_win``.

    - compressed: blocks of ``block_size`` keys every ``stride`` positions; a block becomes one
      key (and one value) ``(flatten(k_block + P)) W`` with a learned intra-block position
      embedding ``P`` (block_size, head_dim) and a learned ``W`` (block_size * head_dim,
      head_dim). Query ``t`` reads the blocks that end at or before ``t``.
    - selected: the keys are cut into blocks of ``select_size``; a block's importance is the
      sum of the compressed attention probabilities of the compression blocks that overlap
      it; query ``t`` reads every key ``s <= t`` of ``num_selected`` blocks: the first block
      and its own block always, and the most important of the others.
    - window: the last ``window`` keys.

    Parameters
    ----------
    head_dim : int
    block_size, stride : int
        Compression blocks: length ``l`` and stride ``d``, ``d <= l``.
    select_size, num_selected : int
        Selection blocks: length ``l'`` and how many per query, counting the first and the
        query's own block (so at least 2).
    window : int
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float

    Returns
    -------
    tensor, shape (batch, n, d_model)

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer, ``stride > block_size`` or
        ``num_selected < 2``.

    Notes
    -----
    Yuan et al. (2025), "Native Sparse Attention: Hardware-Aligned and Natively Trainable
    Sparse Attention", section 3.3 (equations 7–11) and 3.3.3's gates. The paper scores a
    selection block by equation 9 (for ``d`` dividing ``l`` and ``l'``); here the overlap
    of blocks gives the same sum, for any sizes. The paper keeps 2 local blocks, here 1.
    One head (the paper shares the selection across the heads of a group). Taught in
    chapter 17.
    """

    BRANCHES = ("compressed", "selected", "window")

    def __init__(self, head_dim: int, *, block_size: int = 8, stride: int = 4,
                 select_size: int = 8, num_selected: int = 2, window: int = 8, **kwargs):
        super().__init__(**kwargs)
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.block_size = _checks.positive_int(block_size, "block_size")
        self.stride = _checks.integer(stride, "stride", low=1, high=self.block_size)
        self.select_size = _checks.positive_int(select_size, "select_size")
        self.num_selected = _checks.integer(num_selected, "num_selected", low=2)
        self.window = _checks.positive_int(window, "window")

    def build(self, input_shape):
        d, h, size = input_shape[-1], self.head_dim, self.block_size
        self.kernels = {}
        self._kernel("query", (d, h))
        for branch in self.BRANCHES:
            self._kernel(f"{branch}_key", (d, h))
            self._kernel(f"{branch}_value", (d, h))
        self._kernel("block_position", (size, h), "zeros")
        self._kernel("compress_key", (size * h, h))
        self._kernel("compress_value", (size * h, h))
        self._kernel("gate", (d, 3))
        self._kernel("gate_bias", (3,), "zeros")
        self._kernel("output", (h, d))

    def gates(self, x):
        """(batch, n, 3): the gates of the compressed, selected and window branches."""
        return ops.sigmoid(self.project(x, "gate") + self.kernels["gate_bias"])

    def _compress(self, x, name):
        blocks = tf.signal.frame(self.project(x, f"compressed_{name}"), self.block_size,
                                 self.stride, axis=1)          # (batch, blocks, l, h)
        blocks = blocks + self.kernels["block_position"]
        flat = ops.reshape(blocks, (ops.shape(x)[0], -1, self.block_size * self.head_dim))
        return self.project(flat, f"compress_{name}")

    def _block_masks(self, n):
        """Which compressed blocks each query sees, and compression-selection overlaps."""
        t = ops.arange(n)
        starts = ops.arange(ops.maximum(n - self.block_size, -1) // self.stride + 1)
        starts = starts * self.stride
        ends = starts + self.block_size                       # exclusive
        visible = ops.expand_dims(ends - 1, 0) <= ops.expand_dims(t, 1)     # (n, blocks)
        first = ops.arange((n + self.select_size - 1) // self.select_size) * self.select_size
        overlap = ops.logical_and(ops.expand_dims(starts, 1) < first + self.select_size,
                                  ops.expand_dims(ends, 1) > first)       # (blocks, sel)
        return visible, ops.cast(overlap, "float32")

    def selected(self, x, compressed_probs=None):
        """Bool (batch, n, n): the keys of the selected blocks, ``s <= t``."""
        n = ops.shape(x)[1]
        visible, overlap = self._block_masks(n)
        if compressed_probs is None:
            q = self.project(x, "query")
            compressed_probs = masked_softmax(self.scores(q, self._compress(x, "key")),
                                              visible)
        importance = ops.matmul(compressed_probs, overlap)     # (batch, n, sel)
        own = ops.arange(n) // self.select_size
        block = ops.arange(ops.shape(overlap)[1])
        forced = ops.logical_or(block == 0, block == ops.expand_dims(own, 1))
        past = block <= ops.expand_dims(own, 1)
        importance = ops.where(forced, 2.0 + importance, importance)   # probabilities <= 1
        chosen = _top_mask(importance, self.num_selected, past)        # (batch, n, sel)
        keys = ops.repeat(chosen, self.select_size, axis=-1)[..., :n]
        return ops.logical_and(keys, _window_mask(n, n))

    def branches(self, x):
        """The three branch outputs, each (batch, n, head_dim), before the gates."""
        n = ops.shape(x)[1]
        q = self.project(x, "query")
        visible, _ = self._block_masks(n)
        p_cmp = masked_softmax(self.scores(q, self._compress(x, "key")), visible)
        out = {"compressed": ops.matmul(p_cmp, self._compress(x, "value"))}
        masks = {"selected": self.selected(x, p_cmp), "window": _window_mask(n, self.window)}
        for branch, mask in masks.items():
            k, v = self.project(x, f"{branch}_key"), self.project(x, f"{branch}_value")
            out[branch] = ops.matmul(masked_softmax(self.scores(q, k), mask), v)
        return out

    def call(self, x):
        out, g = self.branches(x), self.gates(x)
        mixed = sum(g[..., i:i + 1] * out[b] for i, b in enumerate(self.BRANCHES))
        return self.project(mixed, "output")

    def get_config(self):
        return {**super().get_config(), "head_dim": self.head_dim,
                "block_size": self.block_size, "stride": self.stride,
                "select_size": self.select_size, "num_selected": self.num_selected,
                "window": self.window}
