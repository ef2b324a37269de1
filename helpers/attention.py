"""NumPy reference implementations of attention.

This module imports only NumPy (never TensorFlow), so it loads instantly and runs anywhere.
Every function here is taught in a chapter of the course; the docstrings say which.

Mask convention (the same as Keras): a boolean array, ``True`` where a query position may
attend to a key position, ``False`` where it may not.
"""

from __future__ import annotations

import numpy as np

__all__ = ["softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask"]


def _as_float_array(x, name: str) -> np.ndarray:
    """Convert ``x`` to a floating-point array, rejecting what attention cannot use."""
    arr = np.asarray(x)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a real numeric array; got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, not complex; got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    return arr


def _require_finite(arr: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity (shape {arr.shape}); "
                         "attention needs finite inputs")


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
    ValueError
        If ``x`` is not real and numeric, has rank 0, contains NaN or ``+inf``, or ``axis``
        is out of range.

    Notes
    -----
    softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x). Taught in chapter 2
    (numerically stable softmax).

    Examples
    --------
    >>> softmax([1000.0, 1000.0])
    array([0.5, 0.5])
    """
    arr = _as_float_array(x, "x")
    if arr.ndim == 0:
        raise ValueError("x must have at least one axis; got a scalar (shape ())")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis {axis} is out of range for x with shape {arr.shape}")
    if np.any(np.isnan(arr)) or np.any(arr == np.inf):
        raise ValueError(f"x contains NaN or +inf (shape {arr.shape}); only -inf is allowed")
    peak = np.max(arr, axis=axis, keepdims=True)
    peak = np.where(np.isneginf(peak), 0.0, peak)  # all -inf slice: avoid inf - inf
    exps = np.exp(arr - peak)
    total = np.sum(exps, axis=axis, keepdims=True)
    return exps / np.where(total == 0, 1.0, total)


def _check_attention_shapes(query, key, value) -> None:
    for name, arr, axes in (("query", query, "n_q, d_k"), ("key", key, "n_k, d_k"),
                            ("value", value, "n_k, d_v")):
        if arr.ndim < 2:
            raise ValueError(f"{name} must have rank >= 2, shape (..., {axes}); "
                             f"got shape {arr.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError("query and key must have the same last axis d_k; got query "
                         f"{query.shape} and key {key.shape}")
    if key.shape[-2] != value.shape[-2]:
        raise ValueError("key and value must have the same length n_k (axis -2); got key "
                         f"{key.shape} and value {value.shape}")
    try:
        np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError("the leading (batch) axes of query, key and value do not broadcast: "
                         f"query {query.shape}, key {key.shape}, value {value.shape}") from None


def _check_mask(mask, scores_shape: tuple) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError("mask must be boolean (True = may attend, False = blocked); "
                         f"got dtype {mask.dtype}")
    try:
        full = np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        full = None
    if full != tuple(scores_shape):
        raise ValueError(f"mask of shape {mask.shape} does not broadcast to the scores' "
                         f"shape (..., n_q, n_k) = {tuple(scores_shape)}")
    return mask


def scaled_dot_product_attention(query, key, value, mask=None):
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
        not boolean or does not broadcast to ``(..., n_q, n_k)``; if any input contains NaN
        or infinity. The message names the shapes involved.

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
    query, key, value = (_as_float_array(a, n) for a, n in
                         ((query, "query"), (key, "key"), (value, "value")))
    _check_attention_shapes(query, key, value)
    for name, arr in (("query", query), ("key", key), ("value", value)):
        _require_finite(arr, name)
    dtype = np.result_type(query.dtype, key.dtype, value.dtype)
    d_k = query.shape[-1]
    scores = np.matmul(query, np.swapaxes(key, -1, -2)).astype(dtype) / dtype.type(np.sqrt(d_k))
    if mask is not None:
        mask = _check_mask(mask, scores.shape)
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1).astype(dtype)
    output = np.matmul(weights, value).astype(dtype)
    return output, weights


def causal_mask(n: int) -> np.ndarray:
    """Causal (look-ahead) mask: position i may attend to positions 0..i only.

    Parameters
    ----------
    n : int
        Sequence length (n_q = n_k = n), at least 1.

    Returns
    -------
    numpy.ndarray of bool, shape (n, n)
        Lower-triangular: ``mask[i, j]`` is ``True`` when ``j <= i``. Broadcasts against
        scores of shape ``(..., n, n)``.

    Raises
    ------
    ValueError
        If ``n`` is not an integer or is less than 1.

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
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"n must be an integer sequence length; got {n!r} ({type(n).__name__})")
    if n < 1:
        raise ValueError(f"n must be at least 1; got {n}")
    return np.tril(np.ones((n, n), dtype=bool))


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
    if isinstance(n_k, bool) or not isinstance(n_k, (int, np.integer)) or n_k < 1:
        raise ValueError(f"n_k must be a positive integer; got {n_k!r}")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError("lengths must be a 1-D array of integers, shape (batch,); got "
                         f"shape {lengths.shape} and dtype {lengths.dtype}")
    if np.any(lengths < 0) or np.any(lengths > n_k):
        raise ValueError(f"every length must lie in [0, n_k={n_k}]; got {lengths.tolist()}")
    positions = np.arange(n_k)
    return (positions[None, :] < lengths[:, None])[:, None, :]
