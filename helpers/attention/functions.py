"""NumPy reference implementations of attention: functions on arrays.

Softmax, the masks, scaled dot-product attention and its grouped-query form, the head split
and merge, additive and chunked attention. The attention layers built from them (multi-head,
grouped-query and multi-head latent attention) are the other modules of
:mod:`helpers.attention`; they import this one, and this one imports none of them.

This module imports only NumPy (never TensorFlow), so it loads instantly and runs anywhere.
Every function here is taught in a chapter of the course; the docstrings say which.

Mask convention (the same as Keras): a boolean array, ``True`` where a query position may
attend to a key position, ``False`` where it may not.
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    bool_array,
    broadcast,
    float_array,
    int_array,
    integer,
    positive_int,
    real,
    same_size,
)

__all__ = ["softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask",
           "sliding_window_mask", "visible_keys", "grouped_query_attention", "split_heads",
           "merge_heads", "additive_attention", "chunked_attention"]


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along one axis.

    Subtracts the maximum of each slice before exponentiating, so large inputs do not
    overflow. Entries equal to ``-inf`` get probability 0; a slice that is ``-inf``
    everywhere gets all zeros (not NaN).

    Parameters
    ----------
    x : array_like, shape (...), real
        Scores (logits). ``-inf`` is allowed and means "excluded"; NaN and ``+inf`` are not.
    axis : int, default -1
        The axis whose entries become a probability distribution.

    Returns
    -------
    numpy.ndarray, same shape as ``x``, floating (float32 stays float32, integers become
    float64)
        Non-negative values that sum to 1 along ``axis`` (or to 0 for an all ``-inf`` slice).

    Raises
    ------
    TypeError
        If ``x`` is not an array of real numbers or ``axis`` not an integer.
    ValueError
        If ``x`` has rank 0, contains NaN or ``+inf``, or ``axis`` is out of range.

    Notes
    -----
    softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x). Taught in chapter 2
    (numerically stable softmax).

    Examples
    --------
    >>> softmax([1000.0, 1000.0])
    array([0.5, 0.5])
    """
    arr = float_array(x, "x", min_rank=1, finite=False)
    integer(axis, "axis", low=-arr.ndim, high=arr.ndim - 1)
    if np.any(np.isnan(arr)) or np.any(arr == np.inf):
        raise ValueError(f"x contains NaN or +inf (shape {arr.shape}); only -inf is allowed")
    peak = np.max(arr, axis=axis, keepdims=True)
    peak = np.where(np.isneginf(peak), 0.0, peak)  # all -inf slice: avoid inf - inf
    exps = np.exp(arr - peak)
    total = np.sum(exps, axis=axis, keepdims=True)
    return exps / np.where(total == 0, 1.0, total)


_QKV_AXES = {"query": "(..., n_q, d_k)", "key": "(..., n_k, d_k)", "value": "(..., n_k, d_v)"}


def _validated_qkv(query, key, value):
    """Float arrays of compatible shapes, all finite, and the dtype the result should have."""
    query, key, value = (float_array(a, name, min_rank=2, axes=_QKV_AXES[name])
                         for a, name in ((query, "query"), (key, "key"), (value, "value")))
    same_size({"query": query.shape[-1], "key": key.shape[-1]}, "feature size d_k (last axis)")
    same_size({"key": key.shape[-2], "value": value.shape[-2]}, "length n_k (axis -2)")
    broadcast({"query": query.shape[:-2], "key": key.shape[:-2], "value": value.shape[:-2]})
    return query, key, value, np.result_type(query.dtype, key.dtype, value.dtype)


def _check_mask(mask, scores_shape: tuple) -> np.ndarray:
    mask = bool_array(mask, "mask", meaning="True = may attend, False = blocked")
    broadcast({"mask": mask.shape}, target=tuple(scores_shape),
              what="scores' shape (..., n_q, n_k) =")
    return mask


def scaled_dot_product_attention(query, key, value, mask=None, *, bias=None, scale=None):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d_k)) V.

    Parameters
    ----------
    query : array_like, shape (..., n_q, d_k), real
        One query vector per output position.
    key : array_like, shape (..., n_k, d_k), real
        One key vector per input position; compared with every query.
    value : array_like, shape (..., n_k, d_v), real
        One value vector per input position; what the output mixes.
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key, ``False`` where it may not (the Keras
        convention). Build one with :func:`causal_mask` or :func:`padding_mask`, and combine
        masks with ``&``. ``None`` (default) lets every query attend to every key.
    bias : array_like, broadcastable to (..., n_q, n_k), real, optional
        Added to the scaled scores before the mask (ALiBi's distance penalty, chapter 11).
    scale : float, optional
        The factor of the scores; ``None`` (default): ``1 / sqrt(d_k)``. Multi-head latent
        attention, whose absorbed form compares vectors longer than its heads, passes its
        own (chapter 12).

    The leading axes ``...`` (batch, heads) broadcast against each other.

    Returns
    -------
    output : numpy.ndarray, shape (..., n_q, d_v)
        Each row is a weighted average of the rows of ``value``.
    weights : numpy.ndarray, shape (..., n_q, n_k)
        The attention weights; each row is non-negative and sums to 1 over the keys it may
        attend to. A row whose keys are all masked has weights 0 everywhere and its output
        row is the zero vector: finite, never NaN.

    The dtype is the common floating type of the inputs (float32 inputs give float32;
    integer inputs give float64).

    Raises
    ------
    ValueError
        If an input has rank below 2; if ``query`` and ``key`` differ in ``d_k``; if ``key``
        and ``value`` differ in ``n_k``; if the leading axes do not broadcast; if ``mask`` is
        not boolean or does not broadcast to ``(..., n_q, n_k)``; if ``bias`` does not
        broadcast there; if ``scale`` is not positive; if any input contains NaN or
        infinity. The message names the shapes involved.

    Notes
    -----
    Vaswani et al. (2017), "Attention Is All You Need", equation (1). Taught in chapter 1
    (the formula and a worked example) and chapter 2 (implementation and masks).

    Examples
    --------
    >>> q = [[1.0, 0.0], [0.0, 1.0]]
    >>> k = [[1.0, 1.0], [0.0, 1.0]]
    >>> v = [[1.0, 2.0], [9.0, 8.0]]
    >>> output, weights = scaled_dot_product_attention(q, k, v)
    >>> weights.round(3)
    array([[0.67, 0.33],
           [0.5 , 0.5 ]])
    """
    query, key, value, dtype = _validated_qkv(query, key, value)
    scores = _scaled_scores(query, key, dtype, mask=mask, bias=bias, scale=scale)
    weights = softmax(scores, axis=-1).astype(dtype)
    output = np.matmul(weights, value).astype(dtype)
    return output, weights


def _scaled_scores(query, key, dtype, *, mask, bias, scale) -> np.ndarray:
    """Q K^T times the scale, plus ``bias``, ``-inf`` where ``mask`` is False: (..., n_q, n_k).

    The step before the softmax that every variant of :func:`scaled_dot_product_attention`
    shares (the sink logit of :func:`helpers.attention.sink_logit_attention` too).
    """
    scores = np.matmul(query, np.swapaxes(key, -1, -2)).astype(dtype)
    if scale is None:
        scores = scores / dtype.type(np.sqrt(query.shape[-1]))
    else:
        scores = scores * dtype.type(real(scale, "scale", low=0, low_open=True))
    if bias is not None:
        bias = float_array(bias, "bias", axes="(..., n_q, n_k)")
        broadcast({"bias": bias.shape}, target=scores.shape,
                  what="scores' shape (..., n_q, n_k) =")
        scores = scores + bias.astype(dtype)
    if mask is not None:
        mask = _check_mask(mask, scores.shape)
        scores = np.where(mask, scores, -np.inf)
    return scores


def causal_mask(n: int, n_k: int | None = None) -> np.ndarray:
    """Causal (look-ahead) mask: query position i may attend to key positions 0..i only.

    Parameters
    ----------
    n : int
        Number of queries n_q, at least 1.
    n_k : int, optional
        Number of keys, at least 1; defaults to ``n`` (self-attention). With ``n_k != n`` the
        rule is the same as Keras's ``use_causal_mask``: query i sees keys j <= i.

    Returns
    -------
    numpy.ndarray of bool, shape (n, n_k)
        Lower-triangular: ``mask[i, j]`` is ``True`` when ``j <= i``. Broadcasts against
        scores of shape ``(..., n, n_k)``.

    Raises
    ------
    ValueError
        If ``n`` or ``n_k`` is not an integer or is less than 1.

    Notes
    -----
    The decoder's masked self-attention of Vaswani et al. (2017), section 3.2.3. Taught in
    chapter 2.

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0]])
    """
    n = positive_int(n, "n")
    n_k = n if n_k is None else positive_int(n_k, "n_k")
    return np.tri(n, n_k, dtype=bool)


def padding_mask(lengths, n_k: int) -> np.ndarray:
    """Padding mask: each sequence of a batch may attend only to its real (unpadded) keys.

    Parameters
    ----------
    lengths : array_like of int, shape (batch,)
        The number of real tokens of each sequence, each between 0 and ``n_k``. Padding is
        assumed to sit at the end of the sequence.
    n_k : int
        The padded length of the key sequence, at least 1.

    Returns
    -------
    numpy.ndarray of bool, shape (batch, 1, n_k)
        ``mask[b, 0, j]`` is ``True`` when ``j < lengths[b]``. The middle axis of length 1
        broadcasts over the queries, so the mask fits scores of shape ``(batch, n_q, n_k)``.

    Raises
    ------
    ValueError
        If ``lengths`` is not a 1-D array of integers in ``[0, n_k]`` or ``n_k`` is not a
        positive integer.

    Notes
    -----
    Taught in chapter 2 (padding masks). A sequence of length 0 masks every key; attention
    then returns zero weights for it (see :func:`scaled_dot_product_attention`).

    Examples
    --------
    >>> padding_mask([3, 1], 4).astype(int)
    array([[[1, 1, 1, 0]],
    <BLANKLINE>
           [[1, 0, 0, 0]]])
    """
    n_k = positive_int(n_k, "n_k")
    lengths = int_array(lengths, "lengths", ndim=1, low=0, high=n_k)
    positions = np.arange(n_k)
    return (positions[None, :] < lengths[:, None])[:, None, :]


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """Causal sliding-window mask: query i may attend to keys i - window + 1 .. i only.

    Parameters
    ----------
    n : int
        Sequence length (queries and keys), at least 1.
    window : int
        How many positions each query sees, itself included; at least 1. ``window >= n``
        gives :func:`causal_mask`.

    Returns
    -------
    numpy.ndarray of bool, shape (n, n)
        ``mask[i, j]`` is ``True`` when ``0 <= i - j < window``: a band of width ``window``
        on and below the diagonal.

    Raises
    ------
    TypeError
        If ``n`` or ``window`` is not an integer.
    ValueError
        If ``n`` or ``window`` is below 1.

    Notes
    -----
    The local attention of Beltagy et al. (2020), "Longformer", section 3.1, made causal as
    in Mistral 7B (Jiang et al. 2023, section 2). It is the mask of
    ``keras.layers.GroupQueryAttention(sliding_window=window)`` called with
    ``use_causal_mask=True`` (Keras 3.15). Taught in chapter 10.

    Examples
    --------
    >>> sliding_window_mask(4, 2).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    n, window = positive_int(n, "n"), positive_int(window, "window")
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]   # i - j
    return (offset >= 0) & (offset < window)


def visible_keys(query_positions, key_positions, window: int | None = None, *,
                 sinks: int = 0) -> np.ndarray:
    """Which keys each query may attend to, from their positions in the sequence.

    Query at position ``i`` sees the key at position ``j`` when ``j <= i`` (causal) and, with
    a window, ``i - j < window`` or ``j < sinks`` (the first tokens kept as attention sinks,
    StreamingLLM). With positions ``0 .. n-1`` on both sides this is
    :func:`causal_mask` (or :func:`sliding_window_mask`); with a cache, the
    queries are the new positions and the keys the cached ones plus the new ones.

    Parameters
    ----------
    query_positions : array_like of int, shape (n,)
    key_positions : array_like of int, shape (n_k,)
    window : int, optional
        How many positions a query sees, itself included; ``None``: all earlier ones.
    sinks : int, default 0
        With a window: how many first positions every query sees as well, however far.

    Returns
    -------
    numpy.ndarray of bool, shape (n, n_k)

    Raises
    ------
    TypeError
        If the positions are not integers or ``window`` or ``sinks`` is not an integer.
    ValueError
        If the positions are not 1-D or negative, ``window`` is below 1, ``sinks`` is
        negative, or ``sinks`` is given without a window.

    Notes
    -----
    Sliding windows: Beltagy et al. (2020), Jiang et al. (2023); taught in chapter 10. The
    window with sinks: Xiao et al. (2024), "Efficient Streaming Language Models with
    Attention Sinks", section 3.2; measured on a real model in chapter 15.

    Examples
    --------
    >>> visible_keys([3], [0, 1, 2, 3], window=2).astype(int)
    array([[0, 0, 1, 1]])
    >>> visible_keys([4], range(5), window=2, sinks=1).astype(int)
    array([[1, 0, 0, 1, 1]])
    """
    i = int_array(query_positions, "query_positions", ndim=1, low=0)[:, None]
    j = int_array(key_positions, "key_positions", ndim=1, low=0)[None, :]
    sinks = integer(sinks, "sinks", low=0)
    if sinks and window is None:
        raise ValueError(f"sinks={sinks} needs a window: without one every key is seen")
    mask = j <= i
    if window is not None:
        mask &= (i - j < positive_int(window, "window")) | (j < sinks)
    return mask


_GQA_AXES = {"query": "(..., num_query_heads, n_q, head_dim)",
             "key": "(..., num_kv_heads, n_k, head_dim)",
             "value": "(..., num_kv_heads, n_k, value_dim)"}


def grouped_query_attention(query, key, value, mask=None, *, bias=None, scale=None):
    """Scaled dot-product attention in which groups of query heads share a key/value head.

    With ``group = num_query_heads // num_kv_heads``, query head ``h`` reads key and value
    head ``h // group``: heads 0 .. group-1 share the first, and so on (the grouping of
    Keras's ``GroupQueryAttention`` and of PyTorch's ``enable_gqa``).
    ``num_kv_heads == num_query_heads`` is multi-head attention; ``num_kv_heads == 1`` is
    multi-query attention.

    Parameters
    ----------
    query : array_like, shape (..., num_query_heads, n_q, head_dim), real
    key : array_like, shape (..., num_kv_heads, n_k, head_dim), real
    value : array_like, shape (..., num_kv_heads, n_k, value_dim), real
        The leading axes ``...`` (batch) broadcast against each other.
    mask : array_like of bool, broadcastable to (..., num_query_heads, n_q, n_k), optional
        ``True`` where a query may attend to a key (the Keras convention), e.g.
        :func:`causal_mask` or :func:`sliding_window_mask`. ``None``: no mask.
    bias, scale : optional
        As in :func:`scaled_dot_product_attention`; ``bias`` broadcasts to
        (..., num_query_heads, n_q, n_k).

    Returns
    -------
    output : numpy.ndarray, shape (..., num_query_heads, n_q, value_dim)
    weights : numpy.ndarray, shape (..., num_query_heads, n_q, n_k)
        Floating, the inputs' common dtype, as :func:`scaled_dot_product_attention`.

    Raises
    ------
    TypeError
        If an input is not a real array or ``mask`` is not boolean.
    ValueError
        If an input has fewer than 3 axes or is not finite; if ``num_kv_heads`` does not
        divide ``num_query_heads``; if ``key`` and ``value`` differ in ``num_kv_heads`` or
        ``n_k``; if ``query`` and ``key`` differ in ``head_dim``; if the leading axes or the
        mask do not broadcast.

    Notes
    -----
    Multi-query attention: Shazeer (2019), "Fast Transformer Decoding: One Write-Head is All
    You Need", section 3. Grouped-query attention: Ainslie et al. (2023), "GQA", section 2.2.
    Taught in chapter 10.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q = rng.normal(size=(4, 3, 8))                  # 4 query heads
    >>> k, v = rng.normal(size=(2, 2, 3, 8))            # 2 key/value heads
    >>> out, w = grouped_query_attention(q, k, v, mask=causal_mask(3))
    >>> out.shape, w.shape
    ((4, 3, 8), (4, 3, 3))
    >>> same = scaled_dot_product_attention(q[1], k[0], v[0], causal_mask(3))[0]
    >>> bool(np.allclose(out[1], same))                 # head 1 reads key/value head 0
    True
    """
    query, key, value = _shared_key_value_heads(query, key, value)
    return scaled_dot_product_attention(query, key, value, mask, bias=bias,
                                        scale=scale)


def _shared_key_value_heads(query, key, value):
    """Checked query, key and value, each key/value head repeated for the query heads that
    share it (head ``h`` reads ``h // group``): then every head is an ordinary attention."""
    query, key, value = (float_array(x, name, min_rank=3, axes=_GQA_AXES[name])
                         for x, name in zip((query, key, value), _GQA_AXES))
    num_kv_heads = same_size({"key": key.shape[-3], "value": value.shape[-3]},
                             "num_kv_heads (axis -3)")
    num_query_heads = query.shape[-3]
    if num_query_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads={num_kv_heads} (key's axis -3) must divide "
                         f"num_query_heads={num_query_heads} (query's axis -3); "
                         f"got query {query.shape}, key {key.shape}")
    same_size({"query": query.shape[-1], "key": key.shape[-1]},
              "head_dim (last axis)")
    group = num_query_heads // num_kv_heads
    if group > 1:  # multi-head attention (group 1) needs no copies
        key, value = np.repeat(key, group, axis=-3), np.repeat(value, group, axis=-3)
    return query, key, value


def split_heads(x, num_heads: int) -> np.ndarray:
    """Split the features of every position into heads: (..., n, heads*size) -> (..., heads,
    n, size).

    The features of head ``h`` are the columns ``h*size .. (h+1)*size - 1``: a reshape of the
    last axis, then the head axis is moved in front of the positions, so that
    :func:`scaled_dot_product_attention` runs on every head at once.

    Parameters
    ----------
    x : array_like, shape (..., n, num_heads * size), real
    num_heads : int
        At least 1; must divide the last axis.

    Returns
    -------
    numpy.ndarray, shape (..., num_heads, n, size)
        The dtype of ``x`` (float64 for integers).

    Raises
    ------
    TypeError
        If ``x`` is not a real array or ``num_heads`` not an integer.
    ValueError
        If ``x`` has fewer than 2 axes or is not finite, or ``num_heads`` is below 1 or does
        not divide the last axis.

    Notes
    -----
    Vaswani et al. (2017), section 3.2.2. Taught in chapter 3 (reshape and transpose);
    every attention layer of :mod:`helpers.attention` uses it.

    Examples
    --------
    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]    # head 1: the last two columns
    array([[2., 3.],
           [6., 7.]])
    """
    x = float_array(x, "x", min_rank=2, axes="(..., n, num_heads*size)")
    num_heads = positive_int(num_heads, "num_heads")
    if x.shape[-1] % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide x's last axis; got shape {x.shape}")
    return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, -1), -2, -3)


def merge_heads(x) -> np.ndarray:
    """Put the heads side by side again: (..., heads, n, size) -> (..., n, heads*size).

    The inverse of :func:`split_heads`: ``merge_heads(split_heads(x, h))`` is ``x``.

    Parameters
    ----------
    x : array_like, shape (..., num_heads, n, size), real

    Returns
    -------
    numpy.ndarray, shape (..., n, num_heads * size)

    Raises
    ------
    TypeError
        If ``x`` is not a real array.
    ValueError
        If ``x`` has fewer than 3 axes or is not finite.

    Notes
    -----
    The Concat of Vaswani et al. (2017), section 3.2.2. Taught in chapter 3.

    Examples
    --------
    >>> x = np.arange(12.0).reshape(3, 4)
    >>> bool(np.array_equal(merge_heads(split_heads(x, 2)), x))
    True
    """
    x = np.swapaxes(float_array(x, "x", min_rank=3, axes="(..., num_heads, n, size)"), -2, -3)
    return x.reshape(*x.shape[:-2], -1)


def additive_attention(query, key, value, w_query, w_key, w_score, mask=None):
    """Additive (Bahdanau) attention: score(q, k) = w_score^T tanh(W_q q + W_k k).

    Parameters
    ----------
    query : array_like, shape (..., n_q, d_q), real
        Queries, for example a decoder's hidden states.
    key : array_like, shape (..., n_k, d_key), real
        Keys, for example an encoder's hidden states.
    value : array_like, shape (..., n_k, d_v), real
        Values mixed by the weights (often the same array as ``key``).
    w_query : array_like, shape (d_q, units)
        Projection of the queries (W_a in the paper, applied as ``query @ w_query``).
    w_key : array_like, shape (d_key, units)
        Projection of the keys (U_a in the paper).
    w_score : array_like, shape (units,)
        The vector that turns each ``tanh`` feature vector into one score (v_a in the paper).
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key (as in
        :func:`scaled_dot_product_attention`).

    Returns
    -------
    output : numpy.ndarray, shape (..., n_q, d_v)
        The context vectors.
    weights : numpy.ndarray, shape (..., n_q, n_k)
        Attention weights; rows sum to 1, a fully masked row is all zeros.

    Raises
    ------
    ValueError
        If an input has rank below 2, the projections do not fit the inputs
        (``w_query.shape[0] != d_q``, ``w_key.shape[0] != d_key``, different ``units``),
        ``key`` and ``value`` differ in ``n_k``, the mask is not boolean or does not
        broadcast, or any input contains NaN or infinity.

    Notes
    -----
    Bahdanau, Cho and Bengio (2015), "Neural Machine Translation by Jointly Learning to Align
    and Translate", section 3.1 and appendix A.1.2:
    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j). Keras's ``AdditiveAttention`` is the special
    case ``w_query = w_key = I`` with ``w_score`` its learned ``scale`` vector (chapter 4).
    """
    query, key, value = (float_array(a, name, min_rank=2) for a, name in
                         ((query, "query"), (key, "key"), (value, "value")))
    w_query, w_key, w_score = _check_additive_weights(query, key, w_query, w_key, w_score)
    same_size({"key": key.shape[-2], "value": value.shape[-2]}, "length n_k (axis -2)")
    broadcast({"query": query.shape[:-2], "key": key.shape[:-2], "value": value.shape[:-2]})
    dtype = np.result_type(query, key, value, w_query, w_key, w_score)
    features = np.tanh((query @ w_query)[..., :, None, :] + (key @ w_key)[..., None, :, :])
    scores = features @ w_score  # (..., n_q, n_k)
    if mask is not None:
        scores = np.where(_check_mask(mask, scores.shape), scores, -np.inf)
    weights = softmax(scores, axis=-1).astype(dtype, copy=False)
    return (weights @ value).astype(dtype, copy=False), weights


def _check_additive_weights(query, key, w_query, w_key, w_score):
    w_query = float_array(w_query, "w_query", ndim=2, axes="(d_q, units)")
    w_key = float_array(w_key, "w_key", ndim=2, axes="(d_key, units)")
    w_score = float_array(w_score, "w_score", ndim=1, axes="(units,)")
    same_size({"query": query.shape[-1], "w_query": w_query.shape[0]}, "feature size d_q")
    same_size({"key": key.shape[-1], "w_key": w_key.shape[0]}, "feature size d_key")
    same_size({"w_query": w_query.shape[1], "w_key": w_key.shape[1],
               "w_score": w_score.shape[0]}, "number of units")
    return w_query, w_key, w_score


def chunked_attention(query, key, value, chunk_size, mask=None, *, sink_logits=None):
    """Scaled dot-product attention over chunks of the keys, with an online softmax.

    Gives the output of :func:`scaled_dot_product_attention` without ever building the
    ``(n_q, n_k)`` matrix of scores or weights. The keys and values are read
    ``chunk_size`` at a time; for each chunk only a ``(..., n_q, chunk_size)`` block of scores
    exists. A running maximum ``m`` and a running sum ``l`` of the exponentials, one per
    query, let the softmax be normalised at the end (the online softmax): when a chunk
    raises the maximum from ``m`` to ``m'``, the sum and the weighted sum of values computed
    so far are rescaled by ``exp(m - m')``.

    Parameters
    ----------
    query : array_like, shape (..., n_q, d_k), real
        One query vector per output position.
    key : array_like, shape (..., n_k, d_k), real
        One key vector per input position.
    value : array_like, shape (..., n_k, d_v), real
        One value vector per input position.
    chunk_size : int
        How many keys (and values) to process at once, at least 1. It need not divide
        ``n_k`` (the last chunk is shorter) and may exceed it (then there is one chunk).
    mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
        ``True`` where a query may attend to a key, ``False`` where it may not (the Keras
        convention, as in :func:`scaled_dot_product_attention`). The mask is sliced along
        its last axis chunk by chunk, so a mask of shape ``(n_q, n_k)`` or ``(batch, 1, n_k)``
        is never broadcast to the full ``(..., n_q, n_k)``. ``None`` (default) lets every
        query attend to every key.
    sink_logits : array_like, broadcastable to the leading axes ``...``, real, optional
        A sink logit ``b`` per slice, e.g. shape (num_heads,) for a query of shape (batch,
        num_heads, n_q, d_k): the online softmax starts from the sink's own term, running
        maximum ``m = b`` and running sum ``l = exp(b - b) = 1``, with nothing added to the
        weighted sum (the sink has no value). The output is then that of
        :func:`helpers.attention.sink_logit_attention`. ``-inf`` is allowed (no sink); NaN
        and ``+inf`` are not. ``None`` (default): ``m = -inf``, ``l = 0``, plain attention.

    The leading axes ``...`` (batch, heads) broadcast against each other.

    Returns
    -------
    output : numpy.ndarray, shape (..., n_q, d_v)
        The same values as the ``output`` of :func:`scaled_dot_product_attention` (or, with
        ``sink_logits``, of :func:`helpers.attention.sink_logit_attention`) up to
        floating-point rounding (the tests check 1e-12 in float64). A row whose keys are
        all masked is the zero vector, as there. Only the output is returned: the attention
        weights are never materialised. Its dtype is the common floating type of the inputs
        (float32 inputs give float32; integer inputs give float64).

    Raises
    ------
    ValueError
        If ``chunk_size`` is not a positive integer; if an input has rank below 2; if
        ``query`` and ``key`` differ in ``d_k``; if ``key`` and ``value`` differ in ``n_k``; if
        the leading axes do not broadcast; if ``mask`` is not boolean or does not broadcast to
        ``(..., n_q, n_k)``; if any input contains NaN or infinity; if ``n_k`` is 0; if
        ``sink_logits`` contains NaN or ``+inf`` or does not broadcast to the leading axes.

    Notes
    -----
    Extra memory is O(n_q * chunk_size) per batch element instead of O(n_q * n_k); time is
    still O(n_q * n_k * d). The running normaliser is the online softmax of Milakov and
    Gimelshein (2018), "Online normalizer calculation for softmax"; chunking keys and
    values this way is the memory-efficient attention of Rabe and Staats (2021),
    "Self-attention Does Not Need O(n^2) Memory", and the idea inside FlashAttention (Dao et
    al., 2022). Taught and measured in chapter 7. Starting from the sink's term is what
    gpt-oss's Metal kernel does (``gpt_oss/metal/source/sdpa.metal``: ``m`` set to the sink,
    ``l`` to 1); its Triton kernel starts ``m`` at the sink and adds ``exp(sink - m)`` to
    ``l`` at the end, the same sum (OpenAI 2025; chapter 16).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 5, 4))
    >>> out = chunked_attention(q, k, v, chunk_size=2, mask=causal_mask(5))
    >>> full, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    >>> bool(np.allclose(out, full, rtol=0, atol=1e-12))
    True
    """
    chunk_size = positive_int(chunk_size, "chunk_size")
    query, key, value, dtype = _validated_qkv(query, key, value)
    (n_q, d_k), n_k, d_v = query.shape[-2:], key.shape[-2], value.shape[-1]
    if n_k == 0:
        raise ValueError(f"key and value need at least one position (n_k >= 1); got key "
                         f"{key.shape} and value {value.shape}")
    batch = broadcast({"query": query.shape[:-2], "key": key.shape[:-2], "value": value.shape[:-2]})
    sliced_mask = False
    if mask is not None:
        mask = _check_mask(mask, (*batch, n_q, n_k))  # checks shapes, builds nothing
        sliced_mask = mask.ndim > 0 and mask.shape[-1] == n_k
    scale = dtype.type(np.sqrt(d_k))
    key_t = np.swapaxes(key, -1, -2)                                    # (..., d_k, n_k)
    running_max = np.full((*batch, n_q, 1), -np.inf, dtype=dtype)      # m
    running_sum = np.zeros((*batch, n_q, 1), dtype=dtype)              # l
    if sink_logits is not None:                                         # the sink's term
        sinks = _sink_start(sink_logits, batch).astype(dtype)[..., None, None]
        running_max = np.maximum(running_max, sinks)                    # m = b
        running_sum = running_sum + np.where(np.isneginf(sinks), 0, 1).astype(dtype)  # l = 1
    accumulated = np.zeros((*batch, n_q, d_v), dtype=dtype)            # sum of exp * value
    for start in range(0, n_k, chunk_size):
        stop = min(start + chunk_size, n_k)
        scores = np.matmul(query, key_t[..., start:stop]).astype(dtype, copy=False) / scale
        if mask is not None:
            scores = np.where(mask[..., start:stop] if sliced_mask else mask, scores, -np.inf)
        new_max = np.maximum(running_max, scores.max(axis=-1, keepdims=True))
        shift = np.where(np.isneginf(new_max), dtype.type(0), new_max)  # all masked so far
        exps = np.exp(scores - shift)                                   # (..., n_q, chunk)
        rescale = np.exp(running_max - shift)                           # exp(m - m')
        running_sum = running_sum * rescale + exps.sum(axis=-1, keepdims=True)
        accumulated = accumulated * rescale + np.matmul(exps, value[..., start:stop, :])
        running_max = new_max
    return (accumulated / np.where(running_sum == 0, 1, running_sum)).astype(dtype, copy=False)


def _sink_start(sink_logits, batch: tuple) -> np.ndarray:
    """``sink_logits`` broadcast to the leading axes ``batch``; ``-inf`` allowed, NaN and
    ``+inf`` refused."""
    sinks = float_array(sink_logits, "sink_logits", finite=False)
    if np.any(np.isnan(sinks)) or np.any(sinks == np.inf):
        raise ValueError(f"sink_logits contains NaN or +inf (shape {sinks.shape}); only -inf "
                         "(no sink) is allowed")
    broadcast({"sink_logits": sinks.shape}, target=batch,
              what="leading axes (...) of query, key and value")
    return np.broadcast_to(sinks, batch)
