"""Sparse attention that the model chooses: DeepSeek Sparse Attention and Native Sparse
Attention in NumPy, with their cost per generated token (chapter 17).

Both keep softmax attention and let each query read only some of the keys; they differ in
how the keys are chosen.

DeepSeek Sparse Attention (DSA, DeepSeek-AI 2025, "DeepSeek-V3.2-Exp", section 1)
    A small *lightning indexer* scores every earlier token ``s`` for the query token ``t``,
    equation (1)::

        I[t, s] = sum_j w[t, j] * ReLU(q[t, j] . k[s])        j = 1 .. index_heads

    and the attention then reads only the ``top_k`` tokens of highest score, equation (2).
    In DeepSeek-V3.2-Exp the attention is MLA in its absorbed (multi-query) form: one latent
    per token serves every head, so the selection is one set of tokens per query.
    :func:`indexer_scores`, :func:`top_k_mask`, :func:`sparse_attention` (attention that
    *gathers* the selected keys), :class:`LightningIndexer`, :class:`IndexKeyCache` and
    :func:`dsa_latent_attention` (chapter 12's :class:`~helpers.attention.
    MultiHeadLatentAttention` over the selected latents of its :class:`~helpers.attention.
    LatentCache`).

Native Sparse Attention (NSA, Yuan et al. 2025, arXiv:2502.11089, section 3)
    Three branches, mixed by gates ``g_c`` in [0, 1], equation (5)::

        o[t] = g_cmp Attn(q, K_cmp, V_cmp) + g_slc Attn(q, K_slc, V_slc)
               + g_win Attn(q, K_win, V_win)

    compressed blocks of ``block_len`` tokens every ``stride`` tokens (equation 7), the
    ``num_selected`` blocks of ``select_len`` tokens that the compressed branch's attention
    weights rank highest (equations 8-12), and a sliding window of ``window`` tokens.
    :func:`compress_blocks`, :func:`nsa_compressed_mask`, :func:`nsa_compressed_attention`,
    :func:`nsa_block_scores`, :func:`nsa_selected_blocks`, :func:`nsa_selection_attention`,
    :func:`native_sparse_attention`.

Cost per generated token: :class:`DSAConfig`, :class:`NSAConfig`, :data:`SPARSE_PUBLISHED`
(sourced), :func:`cache_bytes_per_token`, :func:`decode_cost`.

What of the released DeepSeek-V3.2-Exp code we follow (GitHub ``deepseek-ai/DeepSeek-V3.2-Exp``
at commit 3b99a53, ``inference/model.py``, class ``Indexer``, lines 431-480, and
``MLA.forward``, lines 537-597; ``inference/kernel.py``, ``fp8_index``, lines 200-274)

* the indexer's queries are an up-projection of the *query latent* ``qr`` (the RMS-normed
  ``c_Q`` of MLA): ``wq_b``, ``q_lora_rank -> index_n_heads * index_head_dim``; its key is a
  projection of the token ``x`` (``wk``, ``dim -> index_head_dim``) followed by a LayerNorm
  (``k_norm``, with scale and bias); one key per token, shared by all indexer heads;
* RoPE on the first ``rope_dim`` (= ``qk_rope_head_dim``, 64) numbers of the indexer's query
  and key, the rest unrotated (``torch.split(q, [rope_head_dim, head_dim - rope_head_dim])``);
  here with the course's :func:`~helpers.positions.rotary_position_embedding` (adjacent
  pairs, as ``view_as_complex`` pairs them at that commit), without YaRN's scaling;
* the head weights ``weights_proj(x) * index_n_heads ** -0.5 * index_head_dim ** -0.5``
  (``softmax_scale``) and ``ReLU`` of each head's product before the weighted sum
  (``T.max(logits, 0)`` in ``fp8_index``);
* the keys of the new tokens enter the indexer's key cache before the scores are taken, so
  a token can select itself; ``topk(min(index_topk, end_pos))`` with the causal mask;
* the attention over the selected latents is MLA's absorbed form (``MLA.forward``, decode
  branch: ``scores += index_mask``), with the scale ``1/sqrt(d_h + d_h^R)`` of chapter 12.

What we leave out: the FP8 quantisation of the indexer's queries and keys (``act_quant``,
blocks of 128 with one scale each) and its scales in the score (``q_scale``, ``k_s``); the
Hadamard rotation ``rotate_activation`` applied to both (an orthonormal matrix, so it does
not change any ``q . k`` in exact arithmetic; it only spreads outliers before FP8
rounding); YaRN's ``mscale`` on the attention's scale; the tensor parallelism; the
training (section 2 of the report: a dense warm-up that fits ``softmax(I[t, :])`` to the
heads' summed attention by KL divergence, equation 3, then sparse training with top-2048,
equation 4). Ties of the top-k are broken here by the lower index (``torch.topk`` does not
promise an order).

What of NSA we follow (Yuan et al. 2025, section 3.3, equations 7-12; section 4.1 for the
sizes): compressed block ``i`` covers tokens ``i*stride .. i*stride + block_len - 1`` and is
visible to a query once its last token is; ``p_cmp`` are the compressed branch's attention
weights; the selection block scores follow equation (9) (summed over the heads of the GQA
group, equation 10); the first block and the two most recent blocks are always selected
(section 4.1: "including fixed activating the 1 initial block and 2 local blocks"). What we
leave out: ``phi`` is the mean of the block unless a callable is given (the paper learns an
MLP with intra-block position encoding; the fla-org/native-sparse-attention reference
``compression`` uses mean pooling too); the three branches share one key and value here
(the paper gives each branch its own, section 3.3.3); the gate MLP (pass the gates); the
kernels.

Imports only NumPy. Axis names: ``n`` (queries; in NSA also the keys, positions
``0 .. n-1``); ``n_k`` (keys; the queries are the last ``n`` of them); ``num_heads`` (query
heads sharing one key/value head: multi-query attention, or one GQA group); ``d_k``,
``d_v``; ``index_heads``, ``index_dim``; ``m`` (compressed blocks); ``num_blocks``
(selection blocks). Mask convention: ``True`` where a query may attend to a key. Taught in
chapter 17.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _checks
from .attention import LatentCache, MultiHeadLatentAttention, sliding_window_mask, softmax
from .latent_attention import AttentionConfig, cache_elements_per_token
from .normalization import rms_norm
from .positions import rotary_position_embedding

__all__ = ["indexer_scores", "top_k_mask", "sparse_attention", "LightningIndexer",
           "IndexKeyCache", "dsa_latent_attention", "compress_blocks", "nsa_compressed_mask",
           "nsa_compressed_attention", "nsa_block_scores", "nsa_selected_blocks",
           "nsa_selection_attention", "native_sparse_attention", "DSAConfig", "NSAConfig",
           "SPARSE_PUBLISHED", "cache_bytes_per_token", "decode_cost"]


# --- DeepSeek Sparse Attention: the indexer, top-k and attention over the selection ----------

def indexer_scores(q_index, k_index, weights, *, causal: bool = True) -> np.ndarray:
    """The lightning indexer's scores ``I[t, s] = sum_j w[t, j] ReLU(q[t, j] . k[s])``.

    Parameters
    ----------
    q_index : array_like, shape (n, index_heads, index_dim), real
        The indexer's queries, one per head.
    k_index : array_like, shape (n_k, index_dim), real
        The indexer's keys, one per token, shared by all heads.
    weights : array_like, shape (n, index_heads), real
        Each query's weight per head (any sign; the released code's weights are already
        scaled, see :class:`LightningIndexer`).
    causal : bool, default True
        The queries are the last ``n`` of the ``n_k`` positions (as in
        :func:`~helpers.attention.causal_mask` with a cache): keys after a query get
        ``-inf``.

    Returns
    -------
    numpy.ndarray, shape (n, n_k), float
        ``-inf`` where causal masking removes a key.

    Raises
    ------
    TypeError
        If an input is not a real array or ``causal`` not a bool.
    ValueError
        If the shapes disagree, ``n > n_k`` with ``causal``, or an input is not finite.

    Notes
    -----
    DeepSeek-AI (2025), "DeepSeek-V3.2-Exp", equation (1); ReLU "for throughput
    consideration". Taught in chapter 17.

    Examples
    --------
    >>> q = np.array([[[1.0, 0.0], [0.0, 1.0]]])      # one query, two heads
    >>> k = np.array([[2.0, -3.0]])                    # one key
    >>> indexer_scores(q, k, np.array([[0.5, 10.0]]))  # 0.5 * 2 + 10 * ReLU(-3)
    array([[1.]])
    """
    q = _checks.float_array(q_index, "q_index", ndim=3,
                            axes="(n, index_heads, index_dim)")
    k = _checks.float_array(k_index, "k_index", ndim=2, axes="(n_k, index_dim)")
    w = _checks.float_array(weights, "weights", ndim=2, axes="(n, index_heads)")
    _checks.same_size({"q_index": q.shape[2], "k_index": k.shape[1]},
                      "index_dim (last axis)")
    if w.shape != q.shape[:2]:
        raise ValueError("weights must have shape (n, index_heads) = "
                         f"{q.shape[:2]}; got shape {w.shape}")
    scores = np.einsum("th,ths->ts", w, np.maximum(np.einsum("thd,sd->ths", q, k), 0))
    if _checks.boolean(causal, "causal"):
        scores = np.where(_last_rows_causal(q.shape[0], k.shape[0]), scores, -np.inf)
    return scores


def _last_rows_causal(n: int, n_k: int) -> np.ndarray:
    """(n, n_k): the queries are positions n_k - n .. n_k - 1 and see keys up to their own."""
    if n > n_k:
        raise ValueError(f"with causal=True the n={n} queries are the last of the n_k={n_k} "
                         "keys, so n must not exceed n_k")
    return np.arange(n_k)[None, :] <= np.arange(n_k - n, n_k)[:, None]


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the ``k`` highest entries per row that are not ``-inf`` (``+inf``
    first); ties go to the lower index (a stable sort of the negated scores)."""
    order = np.argsort(-scores, axis=-1, kind="stable")
    visible = np.sum(scores > -np.inf, axis=-1, keepdims=True)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(scores.shape[-1])[None, :], axis=-1)
    return rank < np.minimum(k, visible)


def top_k_mask(scores, k: int) -> np.ndarray:
    """Each query's ``k`` keys of highest score: the selection of DSA's equation (2).

    Parameters
    ----------
    scores : array_like, shape (n, n_k), real
        ``-inf`` marks a key the query may not see (as :func:`indexer_scores` returns);
        NaN and ``+inf`` are refused.
    k : int
        At least 1. A query with fewer than ``k`` visible keys selects them all, so
        ``k >= n_k`` gives the causal mask and attention over it is dense causal attention.

    Returns
    -------
    numpy.ndarray of bool, shape (n, n_k)
        ``min(k, visible keys)`` entries ``True`` per row, never on a ``-inf`` score. Equal
        scores are taken in order of position (the lower index first).

    Raises
    ------
    TypeError
        If ``scores`` is not real or ``k`` not an integer.
    ValueError
        If ``scores`` is not 2-D or contains NaN or ``+inf``, or ``k < 1``.

    Notes
    -----
    DeepSeek-AI (2025), equation (2), and the released ``Indexer.forward`` (``topk(min(
    index_topk, end_pos))``). Taught in chapter 17.

    Examples
    --------
    >>> top_k_mask([[3.0, 1.0, 2.0, -np.inf]], 2).astype(int)
    array([[1, 0, 1, 0]])
    >>> top_k_mask([[1.0, 1.0, 1.0]], 2).astype(int)   # ties: lower index first
    array([[1, 1, 0]])
    """
    s = _checks.float_array(scores, "scores", ndim=2, axes="(n, n_k)", finite=False)
    if np.any(np.isnan(s)) or np.any(s == np.inf):
        raise ValueError(f"scores contain NaN or +inf (shape {s.shape}); only -inf is allowed"
                         " (a key the query may not see)")
    return _top_k(s, _checks.positive_int(k, "k"))


def _multi_head(query, name: str = "query") -> tuple[np.ndarray, bool]:
    """``query`` as (n, num_heads, d); True if it came without the heads axis."""
    q = _checks.float_array(query, name, min_rank=2, axes="(n, d_k) or (n, num_heads, d_k)")
    if q.ndim > 3:
        raise ValueError(f"{name} must have shape (n, d_k) or (n, num_heads, d_k); got shape "
                         f"{q.shape}")
    return (q[:, None, :], True) if q.ndim == 2 else (q, False)


def sparse_attention(query, key, value, selected, *, scale=None) -> np.ndarray:
    """Attention that reads only each query's selected keys, gathered one query at a time.

    For query ``t`` the rows ``key[selected[t]]`` and ``value[selected[t]]`` are gathered
    (padded to the longest selection, the padding masked), and softmax attention runs over
    them alone: no ``(n, n_k)`` score matrix is formed. With all heads sharing one key and
    value (multi-query attention, as absorbed MLA and DSA do, or one GQA group, as NSA does)
    the selection is shared by the heads.

    Parameters
    ----------
    query : array_like, shape (n, d_k) or (n, num_heads, d_k), real
    key : array_like, shape (n_k, d_k), real
    value : array_like, shape (n_k, d_v), real
    selected : array_like of bool, shape (n, n_k)
        ``True`` for the keys query ``t`` reads (from :func:`top_k_mask`, or a mask).
    scale : float, optional
        The factor of the scores; ``None``: ``1/sqrt(d_k)``.

    Returns
    -------
    numpy.ndarray, shape (n, d_v) or (n, num_heads, d_v), as ``query`` has heads
        A query that selects no key gets the zero vector (as in
        :func:`~helpers.attention.scaled_dot_product_attention`).

    Raises
    ------
    TypeError
        If an array is not real (``selected`` not boolean) or ``scale`` not a number.
    ValueError
        If the shapes disagree, an input is not finite, or ``scale`` is not positive.

    Notes
    -----
    Equal to :func:`~helpers.attention.scaled_dot_product_attention` with ``mask=selected``
    (tested to 1e-12 in float64), at the cost of reading only the selected keys. DeepSeek-AI
    (2025), equation (2). Taught in chapter 17.

    Examples
    --------
    >>> q = np.ones((2, 2))
    >>> key, value = np.zeros((3, 2)), np.array([[1.0], [2.0], [3.0]])   # equal scores
    >>> sparse_attention(q, key, value, np.array([[True, False, False], [False, True, True]]))
    array([[1. ],
           [2.5]])
    """
    q, squeeze = _multi_head(query)
    key = _checks.float_array(key, "key", ndim=2, axes="(n_k, d_k)")
    value = _checks.float_array(value, "value", ndim=2, axes="(n_k, d_v)")
    _checks.same_size({"query": q.shape[-1], "key": key.shape[1]}, "d_k (last axis)")
    _checks.same_size({"key": key.shape[0], "value": value.shape[0]}, "n_k (axis 0)")
    selected = _checks.bool_array(selected, "selected", meaning="True = read this key")
    if selected.shape != (q.shape[0], key.shape[0]):
        raise ValueError(f"selected must have shape (n, n_k) = {(q.shape[0], key.shape[0])}; "
                         f"got shape {selected.shape}")
    dtype = np.result_type(q.dtype, key.dtype, value.dtype)
    factor = (1 / np.sqrt(q.shape[-1]) if scale is None
              else _checks.real(scale, "scale", low=0, low_open=True))
    counts = selected.sum(axis=1)
    width = int(counts.max()) if counts.size else 0
    out = np.zeros((q.shape[0], q.shape[1], value.shape[1]), dtype)
    if width:
        index = np.argsort(~selected, axis=1, kind="stable")[:, :width]   # selected first
        valid = np.arange(width)[None, :] < counts[:, None]               # (n, width)
        k_sel, v_sel = key[index], value[index]              # (n, width, d_k), (n, width, d_v)
        scores = np.einsum("nhd,nwd->nhw", q, k_sel) * factor
        weights = softmax(np.where(valid[:, None, :], scores, -np.inf), axis=-1)
        out = np.einsum("nhw,nwv->nhv", weights, v_sel).astype(dtype)
    return out[:, 0] if squeeze else out


# --- the lightning indexer beside multi-head latent attention --------------------------------

class LightningIndexer:
    """DSA's lightning indexer, as in the released DeepSeek-V3.2-Exp code.

    For the token at position ``t`` with input ``x_t`` and MLA's query latent ``c_Q`` (the
    RMS-normed ``x_t W^DQ`` of :class:`~helpers.attention.MultiHeadLatentAttention`)::

        q[t, j] = RoPE_part(c_Q W_q)[j]            index_heads heads of index_dim
        k[t]    = RoPE_part(LayerNorm(x_t W_k))    one key of index_dim, all heads
        w[t, j] = (x_t W_w)[j] / sqrt(index_heads) / sqrt(index_dim)

    ``RoPE_part`` turns the first ``rope_dim`` numbers by the position and leaves the rest.

    Parameters
    ----------
    w_q : array_like, shape (query_latent_dim, index_heads * index_dim)
        ``wq_b`` of the released code.
    w_k : array_like, shape (d_model, index_dim)
        ``wk``.
    w_weights : array_like, shape (d_model, index_heads)
        ``weights_proj``.
    k_norm_scale, k_norm_bias : array_like, shape (index_dim,), optional
        The LayerNorm ``k_norm`` (``None``: scale 1, bias 0).
    index_heads : int
    rope_dim : int, default 0
        Rotated numbers at the start of each query and key (64 in DeepSeek-V3.2-Exp); even,
        at most ``index_dim``.
    epsilon : float, default 1e-6
        Of the LayerNorm (the released default).

    Raises
    ------
    TypeError, ValueError
        If a weight is not a real finite array of the right shape, ``index_heads`` does not
        divide ``w_q``'s width, or ``rope_dim`` is odd, negative or above ``index_dim``.

    Notes
    -----
    DeepSeek-AI (2025), equation (1); the released ``Indexer`` (``inference/model.py``).
    FP8 and the Hadamard rotation are left out (see the module's docstring). Taught in
    chapter 17.

    Examples
    --------
    >>> indexer = LightningIndexer.random(16, query_latent_dim=12, index_heads=4,
    ...                                   index_dim=8, rope_dim=4, rng=np.random.default_rng(0))
    >>> x = np.random.default_rng(1).normal(size=(1, 5, 16))
    >>> c_q = np.random.default_rng(2).normal(size=(1, 5, 12))
    >>> scores = indexer.scores(x, c_q)
    >>> scores.shape, bool(np.isinf(scores[0, 0, 1:]).all())
    ((1, 5, 5), True)
    """

    def __init__(self, w_q, w_k, w_weights, k_norm_scale=None, k_norm_bias=None, *,
                 index_heads: int, rope_dim: int = 0, epsilon: float = 1e-6):
        self.index_heads = h = _checks.positive_int(index_heads, "index_heads")
        self.w_q = _checks.float_array(w_q, "w_q", ndim=2,
                                       axes="(query_latent_dim, index_heads*index_dim)")
        self.w_k = _checks.float_array(w_k, "w_k", ndim=2, axes="(d_model, index_dim)")
        self.w_weights = _checks.float_array(w_weights, "w_weights", ndim=2,
                                             axes="(d_model, index_heads)")
        if self.w_q.shape[1] % h:
            raise ValueError(f"index_heads={h} must divide w_q's width {self.w_q.shape[1]}")
        self.index_dim = d = self.w_q.shape[1] // h
        expected = {"w_k": (self.w_k.shape[0], d), "w_weights": (self.w_k.shape[0], h)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} must have shape {shape}; got shape "
                                 f"{getattr(self, name).shape}")
        self.rope_dim = _checks.integer(rope_dim, "rope_dim", low=0, high=d)
        if self.rope_dim % 2:
            raise ValueError(f"rope_dim must be even (RoPE turns pairs); got {self.rope_dim}")
        self.k_norm_scale = (np.ones(d) if k_norm_scale is None
                             else _checks.weight(k_norm_scale, "k_norm_scale", (d,)))
        self.k_norm_bias = (np.zeros(d) if k_norm_bias is None
                            else _checks.weight(k_norm_bias, "k_norm_bias", (d,)))
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)

    @classmethod
    def random(cls, d_model: int, *, query_latent_dim: int, index_heads: int,
               index_dim: int, rope_dim: int = 0, rng: np.random.Generator
               ) -> LightningIndexer:
        """Normal weights of standard deviation ``1/sqrt(d_in)``; LayerNorm scale 1, bias 0.

        Raises
        ------
        TypeError, ValueError
            If a size is not a positive integer or ``rng`` not a ``numpy.random.Generator``.
        """
        rng = _checks.generator(rng)
        d = _checks.positive_int(d_model, "d_model")
        d_cq = _checks.positive_int(query_latent_dim, "query_latent_dim")
        h = _checks.positive_int(index_heads, "index_heads")
        d_i = _checks.positive_int(index_dim, "index_dim")
        return cls(rng.normal(size=(d_cq, h * d_i)) / np.sqrt(d_cq),
                   rng.normal(size=(d, d_i)) / np.sqrt(d),
                   rng.normal(size=(d, h)) / np.sqrt(d), index_heads=h, rope_dim=rope_dim)

    @property
    def d_model(self) -> int:
        return self.w_k.shape[0]

    @property
    def query_latent_dim(self) -> int:
        return self.w_q.shape[0]

    def _rope(self, x, positions):
        """Rotate the first ``rope_dim`` numbers of rows ``x`` (..., n, index_dim)."""
        if not self.rope_dim:
            return x
        turned = rotary_position_embedding(x[..., :self.rope_dim], positions)
        return np.concatenate([turned, x[..., self.rope_dim:]], axis=-1)

    def queries(self, c_q, positions) -> np.ndarray:
        """The indexer's queries of the query latents ``c_q`` (batch, n, query_latent_dim) at
        ``positions`` (n,): (batch, n, index_heads, index_dim)."""
        c_q = _checks.features(c_q, "c_q", self.query_latent_dim, ndim=3)
        q = (c_q @ self.w_q).reshape(*c_q.shape[:2], self.index_heads, self.index_dim)
        return np.swapaxes(self._rope(np.swapaxes(q, 1, 2), positions), 1, 2)

    def keys(self, x, positions) -> np.ndarray:
        """The indexer's keys of the tokens ``x`` (batch, n, d_model): (batch, n, index_dim),
        what :class:`IndexKeyCache` stores."""
        x = _checks.features(x, "x", self.d_model, ndim=3)
        k = x @ self.w_k
        mean = k.mean(axis=-1, keepdims=True)
        var = k.var(axis=-1, keepdims=True)
        k = (k - mean) / np.sqrt(var + self.epsilon) * self.k_norm_scale + self.k_norm_bias
        return self._rope(k, positions)

    def weights(self, x) -> np.ndarray:
        """The head weights ``w[t, j]`` of the tokens ``x`` (batch, n, d_model), scaled by
        ``index_heads ** -0.5 * index_dim ** -0.5`` as the released code does: (batch, n,
        index_heads)."""
        x = _checks.features(x, "x", self.d_model, ndim=3)
        return x @ self.w_weights / np.sqrt(self.index_heads) / np.sqrt(self.index_dim)

    def scores(self, x, c_q, positions=None) -> np.ndarray:
        """Causal scores :func:`indexer_scores` of the tokens ``x`` (batch, n, d_model) with
        their query latents ``c_q`` (batch, n, query_latent_dim), all at once (no cache):
        (batch, n, n). ``positions``: ``None`` for 0 .. n-1."""
        x = _checks.features(x, "x", self.d_model, ndim=3)
        positions = np.arange(x.shape[1]) if positions is None else positions
        q, k, w = self.queries(c_q, positions), self.keys(x, positions), self.weights(x)
        if q.shape[:2] != x.shape[:2]:
            raise ValueError(f"c_q must have the (batch, n) of x {x.shape[:2]}; got "
                             f"{q.shape[:2]}")
        return np.stack([indexer_scores(q[b], k[b], w[b]) for b in range(x.shape[0])])


class IndexKeyCache:
    """The indexer's key cache: ``index_dim`` numbers per token and layer, beside MLA's
    :class:`~helpers.attention.LatentCache`.

    Parameters
    ----------
    num_layers : int

    Raises
    ------
    TypeError, ValueError
        If ``num_layers`` is not a positive integer.

    Notes
    -----
    The released ``Indexer`` keeps ``k_cache`` (FP8, ``index_head_dim`` per token) and
    ``k_scale_cache`` (one float32 scale per 128 numbers); here float64. Chapter 17.

    Examples
    --------
    >>> cache = IndexKeyCache(num_layers=1)
    >>> cache.update(0, np.zeros((1, 3, 4))).shape
    (1, 3, 4)
    >>> cache.length, cache.nbytes     # 3 tokens x 4 numbers x 8 bytes
    (3, 96)
    """

    def __init__(self, num_layers: int):
        self.num_layers = _checks.positive_int(num_layers, "num_layers")
        self._keys: list = [None] * self.num_layers

    @property
    def length(self) -> int:
        last = self._keys[-1]
        return 0 if last is None else last.shape[1]

    @property
    def nbytes(self) -> int:
        return int(sum(k.nbytes for k in self._keys if k is not None))

    def keys(self, layer: int) -> np.ndarray:
        """Stored keys of ``layer``: (batch, stored, index_dim)."""
        layer = _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)
        if self._keys[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return self._keys[layer]

    def update(self, layer: int, keys) -> np.ndarray:
        """Append ``keys`` (batch, n, index_dim) to ``layer``; return all, oldest first.

        Raises
        ------
        ValueError
            If ``keys`` is not 3-D or disagrees with what the layer stored before.
        """
        layer = _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)
        keys = _checks.float_array(keys, "keys", ndim=3, axes="(batch, n, index_dim)")
        old = self._keys[layer]
        if old is not None:
            if (old.shape[0], old.shape[2]) != (keys.shape[0], keys.shape[2]):
                raise ValueError(f"layer {layer} stores keys {old.shape}; got {keys.shape}")
            keys = np.concatenate([old, keys], axis=1)
        self._keys[layer] = keys
        return keys


def dsa_latent_attention(layer, indexer, x, *, top_k: int, cache, index_cache,
                         layer_index: int = 0):
    """Chapter 12's MLA, absorbed, over only the ``top_k`` latents the indexer selects.

    The new tokens ``x`` add their latents and RoPE keys to ``cache`` and their indexer keys
    to ``index_cache``; then each new token's indexer scores every cached token up to itself
    (:func:`indexer_scores`), keeps the ``top_k`` best (:func:`top_k_mask`) and attends over
    those latents only (:func:`sparse_attention`, one key ``[c_KV; k^R]`` and one value
    ``c_KV`` for every head), with ``W^UK`` absorbed into the query and ``W^UV`` applied
    after. One decode step is ``x`` of one token; a prefill, several.

    Parameters
    ----------
    layer : MultiHeadLatentAttention
    indexer : LightningIndexer
        With the layer's ``d_model`` and ``query_latent_dim``.
    x : array_like, shape (batch, n, d_model)
        The new tokens, at the positions after the cached ones.
    top_k : int
        At least 1; ``top_k`` at least the number of keys gives the layer's own output.
    cache : LatentCache
    index_cache : IndexKeyCache
        Holding as many positions as ``cache``.
    layer_index : int, default 0
        Which layer of both caches.

    Returns
    -------
    output : numpy.ndarray, shape (batch, n, d_model)
    selected : numpy.ndarray of bool, shape (batch, n, n_k)
        The latents each new token read; ``n_k`` counts cached and new positions.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If the sizes of ``layer`` and ``indexer`` disagree, the caches hold different
        numbers of positions, or ``x`` has the wrong shape.

    Notes
    -----
    The decode branch of the released ``MLA.forward`` (``scores += index_mask``) with the
    ``Indexer`` beside it; equal to the layer with the top-k mask (tested to 1e-10 in
    float64). DeepSeek-AI (2025), section 1, "Instantiate DSA under MLA". Chapter 17.
    """
    _checks.instance(layer, "layer", MultiHeadLatentAttention, "a MultiHeadLatentAttention")
    _checks.instance(indexer, "indexer", LightningIndexer, "a LightningIndexer")
    _checks.instance(cache, "cache", LatentCache, "a LatentCache")
    _checks.instance(index_cache, "index_cache", IndexKeyCache, "an IndexKeyCache")
    if (indexer.d_model, indexer.query_latent_dim) != (layer.d_model, layer.query_latent_dim):
        raise ValueError("indexer must have the layer's d_model and query_latent_dim "
                         f"{(layer.d_model, layer.query_latent_dim)}; got "
                         f"{(indexer.d_model, indexer.query_latent_dim)}")
    if cache.length != index_cache.length:
        raise ValueError(f"cache holds {cache.length} positions and index_cache "
                         f"{index_cache.length}; they must hold the same")
    top_k = _checks.positive_int(top_k, "top_k")
    x = _checks.features(x, "x", layer.d_model, ndim=3)
    positions = cache.length + np.arange(x.shape[1])
    latent, rope_key = cache.update(layer_index, *layer.latents(x, positions))
    k_index = index_cache.update(layer_index, indexer.keys(x, positions))
    c_q = x @ layer.w_dq
    c_q = c_q if layer.q_norm is None else rms_norm(c_q, layer.q_norm, epsilon=layer.epsilon)
    q_index, w_index = indexer.queries(c_q, positions), indexer.weights(x)
    q_c, q_r = layer.queries(x, positions)              # (batch, heads, n, d_h), (.., d_h^R)
    h, d_c = layer.num_heads, layer.latent_dim
    q_latent = np.einsum("bhnd,chd->bhnc", q_c, layer.w_uk.reshape(d_c, h, layer.head_dim))
    query = np.concatenate([q_latent, q_r], axis=-1).transpose(0, 2, 1, 3)  # (b, n, h, .)
    key = np.concatenate([latent, rope_key], axis=-1)   # (batch, n_k, d_c + d_h^R)
    w_uv = layer.w_uv.reshape(d_c, h, layer.value_dim)
    outputs, selections = [], []
    for b in range(x.shape[0]):
        selected = top_k_mask(indexer_scores(q_index[b], k_index[b], w_index[b]), top_k)
        heads = sparse_attention(query[b], key[b], latent[b], selected,
                                 scale=1 / np.sqrt(layer.head_dim + layer.rope_dim))
        heads = np.einsum("nhc,chd->nhd", heads, w_uv)  # W^UV after the sum
        outputs.append(heads.reshape(x.shape[1], -1) @ layer.w_o)
        selections.append(selected)
    return np.stack(outputs), np.stack(selections)


# --- Native Sparse Attention -----------------------------------------------------------------

def _block_sizes(block_len, stride) -> tuple[int, int]:
    block_len = _checks.positive_int(block_len, "block_len")
    stride = _checks.positive_int(stride, "stride")
    if stride > block_len:
        raise ValueError(f"stride must be at most block_len (blocks may overlap, not leave "
                         f"gaps); got stride={stride}, block_len={block_len}")
    return block_len, stride


def _num_compressed(n: int, block_len: int, stride: int) -> int:
    """floor((n - l) / d) + 1 blocks fit in n tokens (0 if n < l)."""
    return (n - block_len) // stride + 1 if n >= block_len else 0


def compress_blocks(key, value, block_len: int, stride: int, phi=None):
    """NSA's compressed keys and values: one per block of ``block_len`` tokens, every
    ``stride`` tokens (equation 7).

    Block ``i`` covers tokens ``i*stride .. i*stride + block_len - 1``; the
    ``floor((n - block_len) / stride) + 1`` blocks that fit in ``n`` tokens are made.

    Parameters
    ----------
    key : array_like, shape (n, d_k), real
    value : array_like, shape (n, d_v), real
    block_len : int
        ``l``, at least 1.
    stride : int
        ``d``, from 1 to ``block_len``.
    phi : callable, optional
        Maps blocks (m, block_len, d) to (m, d); applied to the key blocks and to the value
        blocks. ``None``: the mean of each block. The paper learns an MLP with intra-block
        position encoding.

    Returns
    -------
    k_cmp : numpy.ndarray, shape (m, d_k)
    v_cmp : numpy.ndarray, shape (m, d_v)
        ``m = 0`` when ``n < block_len``.

    Raises
    ------
    TypeError
        If an array is not real, a size not an integer or ``phi`` not callable.
    ValueError
        If ``block_len`` or ``stride`` is below 1, ``stride > block_len``, ``key`` and
        ``value`` differ in ``n``, or ``phi`` returns the wrong shape.

    Notes
    -----
    Yuan et al. (2025), section 3.3.1, equation (7). Taught in chapter 17.

    Examples
    --------
    >>> k_cmp, v_cmp = compress_blocks(np.arange(5.0)[:, None], np.ones((5, 1)), 2, 1)
    >>> k_cmp[:, 0]
    array([0.5, 1.5, 2.5, 3.5])
    """
    key = _checks.float_array(key, "key", ndim=2, axes="(n, d_k)")
    value = _checks.float_array(value, "value", ndim=2, axes="(n, d_v)")
    n = _checks.same_size({"key": key.shape[0], "value": value.shape[0]}, "length n (axis 0)")
    block_len, stride = _block_sizes(block_len, stride)
    if phi is not None and not callable(phi):
        raise TypeError(f"phi must be None or a callable; got {type(phi).__name__}")
    m = _num_compressed(n, block_len, stride)
    index = stride * np.arange(m)[:, None] + np.arange(block_len)[None, :]   # (m, l)
    result = []
    for name, arr in (("key", key), ("value", value)):
        blocks = arr[index]                                                 # (m, l, d)
        out = blocks.mean(axis=1) if phi is None else np.asarray(phi(blocks))
        if out.shape != (m, arr.shape[1]):
            raise ValueError(f"phi must map {name} blocks {blocks.shape} to shape "
                             f"{(m, arr.shape[1])}; got shape {out.shape}")
        result.append(out)
    return result[0], result[1]


def nsa_compressed_mask(n: int, block_len: int, stride: int) -> np.ndarray:
    """Which compressed blocks each query sees: block ``i`` once its last token
    ``i*stride + block_len - 1`` is at or before the query's position.

    Returns
    -------
    numpy.ndarray of bool, shape (n, m)
        ``m = floor((n - block_len) / stride) + 1`` (0 if ``n < block_len``); query ``t``
        sees ``floor((t + 1 - block_len) / stride) + 1`` blocks, the paper's count for
        ``t + 1`` tokens.

    Raises
    ------
    TypeError, ValueError
        As :func:`compress_blocks` for the sizes; if ``n`` is not a positive integer.

    Examples
    --------
    >>> nsa_compressed_mask(5, 2, 1).astype(int)
    array([[0, 0, 0, 0],
           [1, 0, 0, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    n = _checks.positive_int(n, "n")
    block_len, stride = _block_sizes(block_len, stride)
    last = stride * np.arange(_num_compressed(n, block_len, stride)) + block_len - 1
    return last[None, :] <= np.arange(n)[:, None]


def nsa_compressed_attention(query, key, value, *, block_len: int, stride: int, phi=None):
    """NSA's compressed branch: attention over the compressed blocks a query sees.

    Parameters
    ----------
    query : array_like, shape (n, d_k) or (n, num_heads, d_k)
        The heads of one GQA group (they share ``key`` and ``value``).
    key : array_like, shape (n, d_k)
    value : array_like, shape (n, d_v)
    block_len, stride, phi
        As in :func:`compress_blocks`.

    Returns
    -------
    output : numpy.ndarray, shape (n, d_v) or (n, num_heads, d_v)
        Zero for a query that sees no complete block yet.
    p_cmp : numpy.ndarray, shape (n, num_heads, m)
        The attention weights over the compressed keys (equation 8, with the scale
        ``1/sqrt(d_k)`` of the attention), which rank the selection blocks.

    Raises
    ------
    TypeError, ValueError
        As :func:`compress_blocks` and :func:`sparse_attention`.

    Notes
    -----
    Yuan et al. (2025), equations (7) and (8). Equal to dense attention over the compressed
    keys with :func:`nsa_compressed_mask` (tested). Chapter 17.
    """
    q, squeeze = _multi_head(query)
    k_cmp, v_cmp = compress_blocks(key, value, block_len, stride, phi)
    if q.shape[0] != np.shape(key)[0]:
        raise ValueError(f"query and key must have the same length n (self-attention); got "
                         f"query {q.shape[0]}, key {np.shape(key)[0]}")
    mask = nsa_compressed_mask(q.shape[0], block_len, stride)
    output = sparse_attention(q, k_cmp, v_cmp, mask)
    scores = np.einsum("nhd,md->nhm", q, k_cmp) / np.sqrt(q.shape[-1])
    p_cmp = softmax(np.where(mask[:, None, :], scores, -np.inf), axis=-1)
    return (output[:, 0] if squeeze else output), p_cmp


def _selection_sizes(block_len, stride, select_len) -> tuple[int, int, int]:
    block_len, stride = _block_sizes(block_len, stride)
    select_len = _checks.positive_int(select_len, "select_len")
    if block_len % stride or select_len % stride or block_len > select_len:
        raise ValueError("equation (9) needs stride to divide block_len and select_len, and "
                         f"block_len <= select_len; got block_len={block_len}, "
                         f"stride={stride}, select_len={select_len}")
    return block_len, stride, select_len


def nsa_block_scores(p_cmp, num_keys: int, *, block_len: int, stride: int,
                     select_len: int) -> np.ndarray:
    """Importance of each selection block from the compressed attention weights: equation (9),
    summed over the heads of the group (equation 10).

    Selection block ``j`` covers tokens ``j*select_len .. (j+1)*select_len - 1``. Compressed
    block ``i`` adds ``p_cmp[i]`` times the number of ``stride``-steps it shares with block
    ``j`` (its overlap in tokens divided by ``stride``): with the paper's ``l = 32``,
    ``d = 16``, ``l' = 64`` the five overlapping blocks count 1, 2, 2, 2, 1 times, the
    weights of equation (9). (The equation as printed indexes them from ``(l'/d) j - 4`` to
    ``(l'/d) j``; by overlap they are ``(l'/d) j - 1`` to ``(l'/d) j + 3``.)

    Parameters
    ----------
    p_cmp : array_like, shape (n, m) or (n, num_heads, m)
        From :func:`nsa_compressed_attention`.
    num_keys : int
        The sequence length; ``ceil(num_keys / select_len)`` selection blocks.
    block_len, stride, select_len : int
        ``l``, ``d`` and ``l'``, with ``d`` dividing ``l`` and ``l'`` and ``l <= l'``.

    Returns
    -------
    numpy.ndarray, shape (n, num_blocks)

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer, ``stride > block_len``, the divisibility
        conditions fail, or ``p_cmp`` has the wrong number of blocks.

    Notes
    -----
    Yuan et al. (2025), section 3.3.2, equations (9) and (10). Chapter 17.

    Examples
    --------
    >>> p = np.zeros((1, 7)); p[0, 3] = 1.0       # block 3 covers tokens 48..79
    >>> nsa_block_scores(p, 128, block_len=32, stride=16, select_len=64)
    array([[1., 1.]])
    """
    block_len, stride, select_len = _selection_sizes(block_len, stride, select_len)
    num_keys = _checks.positive_int(num_keys, "num_keys")
    p = _checks.float_array(p_cmp, "p_cmp", min_rank=2, axes="(n, [num_heads,] m)")
    if p.ndim == 3:
        p = p.sum(axis=1)                                           # equation (10)
    m = _num_compressed(num_keys, block_len, stride)
    if p.ndim != 2 or p.shape[1] != m:
        raise ValueError(f"p_cmp must have shape (n, [num_heads,] m) with m = {m} compressed "
                         f"blocks of {num_keys} keys; got shape {np.shape(p_cmp)}")
    num_blocks = math.ceil(num_keys / select_len)
    start_c = stride * np.arange(m)[:, None]
    start_s = select_len * np.arange(num_blocks)[None, :]
    overlap = np.clip(np.minimum(start_c + block_len, start_s + select_len)
                      - np.maximum(start_c, start_s), 0, None)     # tokens shared, (m, blocks)
    return p @ (overlap // stride).astype(p.dtype)


def nsa_selected_blocks(block_scores, *, select_len: int, num_selected: int) -> np.ndarray:
    """The ``num_selected`` selection blocks of each query: the first block and the two most
    recent ones always, the others by highest score (equation 11).

    Query ``t`` (position ``t``) sees blocks ``0 .. t // select_len``; the local blocks are
    ``t // select_len`` (its own) and the one before. A query that sees at most
    ``num_selected`` blocks selects them all.

    Parameters
    ----------
    block_scores : array_like, shape (n, num_blocks)
        From :func:`nsa_block_scores`.
    select_len : int
        ``l'``.
    num_selected : int
        ``n`` of the paper, at least 3 (1 initial + 2 local blocks).

    Returns
    -------
    numpy.ndarray of bool, shape (n, num_blocks)

    Raises
    ------
    TypeError, ValueError
        If ``block_scores`` is not a finite 2-D array, a size not an integer, or
        ``num_selected < 3``, or there are fewer blocks than the queries need.

    Notes
    -----
    Yuan et al. (2025), equation (11) and section 4.1. Ties go to the lower index.

    Examples
    --------
    >>> scores = np.array([[0.0, 5.0, 1.0, 2.0, 0.0, 0.0]])
    >>> nsa_selected_blocks(scores, select_len=1, num_selected=4).astype(int)  # query at 0
    array([[1, 0, 0, 0, 0, 0]])
    """
    s = _checks.float_array(block_scores, "block_scores", ndim=2, axes="(n, num_blocks)")
    select_len = _checks.positive_int(select_len, "select_len")
    num_selected = _checks.integer(num_selected, "num_selected", low=3)
    n, num_blocks = s.shape
    current = np.arange(n) // select_len                       # the block of each query
    if num_blocks < current[-1] + 1:
        raise ValueError(f"block_scores must have at least {current[-1] + 1} blocks for "
                         f"{n} queries; got {num_blocks}")
    j = np.arange(num_blocks)[None, :]
    visible = j <= current[:, None]
    forced = visible & ((j == 0) | (j >= current[:, None] - 1))
    ranked = np.where(forced, np.inf, np.where(visible, s, -np.inf))
    return _top_k(ranked, num_selected)


def nsa_selection_attention(query, key, value, blocks, *, select_len: int) -> np.ndarray:
    """NSA's selection branch: attention over the tokens of the selected blocks, causal
    (equation 12).

    Parameters
    ----------
    query : array_like, shape (n, d_k) or (n, num_heads, d_k)
    key : array_like, shape (n, d_k)
    value : array_like, shape (n, d_v)
    blocks : array_like of bool, shape (n, num_blocks)
        From :func:`nsa_selected_blocks`.
    select_len : int

    Returns
    -------
    numpy.ndarray, shape (n, d_v) or (n, num_heads, d_v)

    Raises
    ------
    TypeError, ValueError
        If ``blocks`` is not boolean or does not cover the ``n`` tokens, or as
        :func:`sparse_attention`.

    Notes
    -----
    Equal to dense attention with the mask ``blocks[:, t // select_len] & causal`` (tested).
    Yuan et al. (2025), equation (12). Chapter 17.
    """
    return sparse_attention(query, key, value,
                            _selection_token_mask(blocks, np.shape(key)[0], select_len))


def _selection_token_mask(blocks, n: int, select_len) -> np.ndarray:
    blocks = _checks.bool_array(blocks, "blocks", meaning="True = block selected")
    select_len = _checks.positive_int(select_len, "select_len")
    need = math.ceil(n / select_len)
    if blocks.ndim != 2 or blocks.shape[0] != n or blocks.shape[1] < need:
        raise ValueError(f"blocks must have shape (n, num_blocks) with n = {n} and at least "
                         f"{need} blocks; got shape {blocks.shape}")
    tokens = blocks[:, np.arange(n) // select_len]
    return tokens & np.tri(n, dtype=bool)


def native_sparse_attention(query, key, value, gates, *, block_len: int, stride: int,
                            select_len: int, num_selected: int, window: int, phi=None):
    """Native Sparse Attention: compressed, selected and sliding-window branches mixed by
    gates (equation 5).

    Parameters
    ----------
    query : array_like, shape (n, d_k) or (n, num_heads, d_k)
        The heads of one GQA group; they share the selection (equation 10).
    key : array_like, shape (n, d_k)
    value : array_like, shape (n, d_v)
    gates : array_like, shape (n, 3) or (n, num_heads, 3), in [0, 1]
        ``g_cmp``, ``g_slc``, ``g_win`` per query (and head); the paper makes them with an
        MLP and a sigmoid.
    block_len, stride : int
        ``l`` and ``d`` of the compression.
    select_len, num_selected : int
        ``l'`` and ``n`` of the selection (``num_selected`` at least 3).
    window : int
        ``w``, tokens of the sliding window, the query's own included.
    phi : callable, optional
        As in :func:`compress_blocks`.

    Returns
    -------
    output : numpy.ndarray, shape (n, d_v) or (n, num_heads, d_v)
    branches : dict
        ``"compressed"``, ``"selected"``, ``"window"``: each branch's output (same shape)
        and ``"blocks"``: the selected blocks (n, num_blocks).

    Raises
    ------
    TypeError, ValueError
        If ``gates`` has the wrong shape or leaves [0, 1], a size is invalid (see
        :func:`compress_blocks`, :func:`nsa_block_scores`, :func:`nsa_selected_blocks`),
        or the arrays disagree.

    Notes
    -----
    Yuan et al. (2025), section 3, equations (5)-(12); the three branches share ``key`` and
    ``value`` here (the paper gives each its own). Taught in chapter 17.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(8, 2, 4)), rng.normal(size=(8, 4)), rng.normal(size=(8, 3))
    >>> out, branches = native_sparse_attention(
    ...     q, k, v, np.full((8, 3), 0.5), block_len=2, stride=1, select_len=2,
    ...     num_selected=3, window=2)
    >>> out.shape, branches["blocks"].sum(axis=1).tolist()
    ((8, 2, 3), [1, 1, 2, 2, 3, 3, 3, 3])
    """
    q, squeeze = _multi_head(query)
    n = q.shape[0]
    window = _checks.positive_int(window, "window")
    num_selected = _checks.integer(num_selected, "num_selected", low=3)
    _selection_sizes(block_len, stride, select_len)
    g = _checks.float_array(gates, "gates", min_rank=2, axes="(n, 3) or (n, num_heads, 3)")
    if g.shape not in ((n, 3), (n, q.shape[1], 3)) or (squeeze and g.ndim == 3):
        raise ValueError(f"gates must have shape (n, 3) = {(n, 3)}"
                         + ("" if squeeze else f" or (n, num_heads, 3) = {(n, q.shape[1], 3)}")
                         + f"; got shape {g.shape}")
    if np.any((g < 0) | (g > 1)):
        raise ValueError(f"gates must lie in [0, 1] (a sigmoid's output); got values from "
                         f"{g.min()} to {g.max()}")
    g = g[:, None, :] if g.ndim == 2 else g                            # (n, heads or 1, 3)
    o_cmp, p_cmp = nsa_compressed_attention(q, key, value, block_len=block_len, stride=stride,
                                            phi=phi)
    scores = nsa_block_scores(p_cmp, n, block_len=block_len, stride=stride,
                              select_len=select_len)
    blocks = nsa_selected_blocks(scores, select_len=select_len, num_selected=num_selected)
    o_slc = nsa_selection_attention(q, key, value, blocks, select_len=select_len)
    o_win = sparse_attention(q, key, value, sliding_window_mask(n, window))
    output = g[..., 0:1] * o_cmp + g[..., 1:2] * o_slc + g[..., 2:3] * o_win
    if squeeze:
        output, o_cmp, o_slc, o_win = (a[:, 0] for a in (output, o_cmp, o_slc, o_win))
    return output, {"compressed": o_cmp, "selected": o_slc, "window": o_win,
                    "blocks": blocks}


# --- cost per generated token ----------------------------------------------------------------

@dataclass(frozen=True)
class DSAConfig:
    """DeepSeek Sparse Attention on MLA: the sizes that set its cost per token.

    Parameters
    ----------
    name : str
    mla : AttentionConfig
        The MLA sizes (chapter 12's :class:`~helpers.latent_attention.AttentionConfig`).
    index_heads, index_dim, top_k : int
        ``index_n_heads``, ``index_head_dim``, ``index_topk`` of the released config.
    cache_bytes : float
        Bytes of one number of MLA's cache (``kv_cache``, ``pe_cache``).
    index_key_bytes : float
        Bytes of one number of the indexer's key cache.
    index_scale_bytes, index_scale_block : int
        One scale of ``index_scale_bytes`` bytes per ``index_scale_block`` numbers of an
        indexer key (``k_scale_cache``).
    source : str
    """

    name: str
    mla: AttentionConfig
    index_heads: int
    index_dim: int
    top_k: int
    cache_bytes: float = 2
    index_key_bytes: float = 1
    index_scale_bytes: int = 4
    index_scale_block: int = 128
    source: str = ""


@dataclass(frozen=True)
class NSAConfig:
    """Native Sparse Attention on grouped-query attention: the sizes that set its cost.

    Parameters
    ----------
    name : str
    num_layers, d_model, num_heads, num_kv_heads, head_dim, value_dim : int
        GQA: ``num_kv_heads`` groups; ``head_dim`` is ``d_k`` (= ``d_q``), ``value_dim``
        ``d_v``.
    block_len, stride, select_len, num_selected, window : int
        ``l``, ``d``, ``l'``, ``n`` (with the initial and 2 local blocks) and ``w``.
    bytes_per_number : float
        Bytes of one cached number (the paper does not say; 2, BF16, is assumed).
    source : str
    """

    name: str
    num_layers: int
    d_model: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    value_dim: int
    block_len: int
    stride: int
    select_len: int
    num_selected: int
    window: int
    bytes_per_number: float = 2
    source: str = ""


_V32 = "deepseek-ai/DeepSeek-V3.2-Exp, inference/config_671B_v3.2.json"
_NSA = "Yuan et al. (2025), arXiv:2502.11089, section 4.1 (Pretraining Setup)"
SPARSE_PUBLISHED = {
    "DeepSeek-V3.2-Exp": DSAConfig(
        "DeepSeek-V3.2-Exp",
        mla=AttentionConfig("DeepSeek-V3.2-Exp", num_layers=61, d_model=7168, num_heads=128,
                            head_dim=128, latent_dim=512, query_latent_dim=1536, rope_dim=64,
                            source=_V32 + " (n_layers 61, dim 7168, n_heads 128, "
                            "qk_nope_head_dim 128, kv_lora_rank 512, q_lora_rank 1536, "
                            "qk_rope_head_dim 64)"),
        index_heads=64, index_dim=128, top_k=2048,
        source=_V32 + " (index_n_heads 64, index_head_dim 128, index_topk 2048); cache "
        "dtypes from inference/model.py: kv_cache and pe_cache in the default dtype, "
        "bfloat16 (generate.py: torch.set_default_dtype(torch.bfloat16)); the indexer's "
        "k_cache float8_e4m3fn with k_scale_cache float32, one per block_size = 128"),
    "NSA 27B": NSAConfig(
        "NSA 27B", num_layers=30, d_model=2560, num_heads=64, num_kv_heads=4, head_dim=192,
        value_dim=128, block_len=32, stride=16, select_len=64, num_selected=16, window=512,
        source=_NSA + ": 30 layers, hidden 2560, GQA with 4 groups and 64 heads, "
        "d_q = d_k = 192, d_v = 128; l = 32, d = 16, l' = 64, n = 16 (1 initial and "
        "2 local blocks included), w = 512. Bytes per number: 2 (BF16) assumed"),
}
"""Published sparse-attention configurations, each with its source (chapter 17)."""


def _sparse_config(config):
    if not isinstance(config, (DSAConfig, NSAConfig)):
        raise TypeError(f"config must be a DSAConfig or an NSAConfig; got "
                        f"{type(config).__name__}")
    return config


def cache_bytes_per_token(config) -> dict:
    """Bytes one token adds to the caches of one layer.

    DSA: ``"attention"``: MLA's ``(d_c + d_h^R) * cache_bytes``; ``"indexer"``: the
    indexer key, ``index_dim * index_key_bytes`` plus its scales. NSA: ``"attention"``:
    keys and values of every group, ``num_kv_heads * (d_k + d_v) * bytes_per_number``;
    ``"compressed"``: the compressed keys and values, one per ``stride`` tokens.

    Raises
    ------
    TypeError
        If ``config`` is not a ``DSAConfig`` or ``NSAConfig``.

    Examples
    --------
    >>> cache_bytes_per_token(SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"])
    {'attention': 1152, 'indexer': 132}
    """
    c = _sparse_config(config)
    if isinstance(c, DSAConfig):
        scales = math.ceil(c.index_dim / c.index_scale_block) * c.index_scale_bytes
        attention = cache_elements_per_token(c.mla, per_layer=True) * c.cache_bytes
        return {"attention": _whole(attention),
                "indexer": _whole(c.index_dim * c.index_key_bytes + scales)}
    per = c.num_kv_heads * (c.head_dim + c.value_dim) * c.bytes_per_number
    return {"attention": _whole(per), "compressed": per / c.stride}


def _whole(x):
    return int(x) if float(x).is_integer() else x


def decode_cost(config, context: int, *, dense: bool = False) -> dict:
    """FLOPs and cache bytes read by one generated token in one layer, at ``context`` keys.

    Counted: the scores and weighted sums of the attention (2 FLOPs per multiply-add, as
    :func:`helpers.latent_attention.attention_flops_per_token`), and the indexer's scores
    and weighted head sum. Left out: the projections (the same at every context), softmax,
    ReLU, the top-k and the gates.

    DSA (``dense=False``), with ``k = min(top_k, context)``::

        indexer_flops   = context * (2 H_I d_I + 2 H_I)
        attention_flops = k * (2 n_h (d_c + d_h^R) + 2 n_h d_c)     absorbed MLA per key
        indexer_bytes   = context * cache_bytes_per_token(config)["indexer"]
        attention_bytes = k * cache_bytes_per_token(config)["attention"]

    ``dense=True``: absorbed MLA over all ``context`` keys, no indexer. NSA: each group's
    query heads meet ``attended_keys = c + s + w`` keys, with ``c = floor((context - l) / d)
    + 1`` compressed (0 below ``l``), ``s = min(n l', context)`` selected and ``w =
    min(window, context)`` window tokens, counted apart as the paper's section 5.2 does
    (``c`` is the length of ``p_cmp`` in equation 8; section 5.2 writes ``floor((s - l) /
    d)``, one fewer)::

        attention_flops = attended_keys * n_h * (2 d_k + 2 d_v)
        attention_bytes = attended_keys * num_kv_heads * (d_k + d_v) * bytes_per_number

    ``dense=True``: grouped-query attention over all ``context`` keys.

    Parameters
    ----------
    config : DSAConfig or NSAConfig
    context : int
        Keys the new token could attend to (itself included), at least 1.
    dense : bool, default False

    Returns
    -------
    dict
        ``"attended_keys"``, ``"attention_flops"``, ``"indexer_flops"``,
        ``"attention_bytes"``, ``"indexer_bytes"`` (the indexer entries 0 for NSA, whose
        block scores reuse the compressed branch's weights, and with ``dense=True``).

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not a ``DSAConfig``/``NSAConfig``, ``context`` not a positive
        integer or ``dense`` not a bool.

    Notes
    -----
    DSA: DeepSeek-AI (2025), section 3, "Inference Costs": the core attention goes from
    O(L^2) to O(Lk), the indexer stays O(L^2) but costs much less (Figure 3 shows measured
    costs per token on H800, not these counts). NSA:
    Yuan et al. (2025), section 5.2 and Table 4 (a decoding step loads at most ``floor((s -
    l)/d)`` compressed, ``n l'`` selected and ``w`` neighbour tokens).
    Taught in chapter 17.

    Examples
    --------
    >>> v32 = SPARSE_PUBLISHED["DeepSeek-V3.2-Exp"]
    >>> decode_cost(v32, 4096)["attention_flops"] == decode_cost(v32, 2048)["attention_flops"]
    True
    >>> decode_cost(v32, 131072)["indexer_bytes"]      # 131072 keys x 132 bytes
    17301504
    """
    c = _sparse_config(config)
    n = _checks.positive_int(context, "context")
    dense = _checks.boolean(dense, "dense")
    if isinstance(c, DSAConfig):
        m = c.mla
        keys = n if dense else min(c.top_k, n)
        per_key = (2 * m.num_heads * (m.latent_dim + m.rope_dim)
                   + 2 * m.num_heads * m.latent_dim)
        indexed = 0 if dense else n
        sizes = cache_bytes_per_token(c)
        return {"attended_keys": keys, "attention_flops": keys * per_key,
                "indexer_flops": indexed * (2 * c.index_heads * c.index_dim
                                            + 2 * c.index_heads),
                "attention_bytes": _whole(keys * sizes["attention"]),
                "indexer_bytes": _whole(indexed * sizes["indexer"])}
    if dense:
        keys = n
    else:
        keys = (_num_compressed(n, c.block_len, c.stride)
                + min(c.num_selected * c.select_len, n) + min(c.window, n))
    return {"attended_keys": keys,
            "attention_flops": (keys * c.num_heads
                                * (2 * c.head_dim + 2 * c.value_dim)),
            "indexer_flops": 0,
            "attention_bytes": _whole(keys * c.num_kv_heads
                                      * (c.head_dim + c.value_dim)
                                      * c.bytes_per_number),
            "indexer_bytes": 0}
