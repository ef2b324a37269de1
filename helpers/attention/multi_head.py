"""Multi-head attention in NumPy (chapter 3), and the steps every attention layer shares.

Every layer of :mod:`helpers.attention` projects each token to per-head queries, keys and
values (:func:`project_heads`, :func:`helpers.attention.split_heads`), compares and mixes them
with :func:`helpers.attention.grouped_query_attention`, and projects the heads' outputs back
(:func:`combine_heads`). :class:`MultiHeadAttention` is that computation with one key/value
head per query head (``num_kv_heads == num_heads``), for any query, key and value sequences
(cross-attention), called like ``keras.layers.MultiHeadAttention``; chapter 4 checks it
against Keras (:func:`keras_attention_weights`). Grouped-query attention
(:mod:`helpers.attention.grouped_query`) keeps the same steps with fewer key/value heads.

Imports only NumPy. Mask convention: ``True`` where a query may attend to a key.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .._initializers import glorot_uniform
from .functions import (
    _check_mask,
    causal_mask,
    grouped_query_attention,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)

__all__ = ["MultiHeadAttention", "project_heads", "combine_heads", "keras_attention_weights"]


# --- the steps every layer shares ----------------------------------------------------------------

def project_heads(x, kernel, bias=None) -> np.ndarray:
    """Project token vectors to per-head vectors: (..., n, d) -> (..., heads, n, size).

    One matrix product for all heads, then :func:`helpers.attention.split_heads`.

    Parameters
    ----------
    x : numpy.ndarray, shape (..., n, d), floating
    kernel : numpy.ndarray, shape (d, heads, size)
        Keras's layout: ``kernel[:, h, :]`` is head ``h``'s projection.
    bias : numpy.ndarray, shape (heads, size), optional

    Returns
    -------
    numpy.ndarray, shape (..., heads, n, size)

    Raises
    ------
    ValueError
        If ``x`` is not finite. The shapes are assumed checked by the calling layer.

    Notes
    -----
    The projections Q W_i^Q, K W_i^K, V W_i^V of Vaswani et al. (2017), section 3.2.2.
    Taught in chapter 3.

    Examples
    --------
    >>> kernel = np.arange(12.0).reshape(2, 3, 2)        # d=2, 3 heads of size 2
    >>> project_heads(np.array([[1.0, 0.0]]), kernel)[:, 0]   # each head: row 0 of kernel
    array([[0., 1.],
           [2., 3.],
           [4., 5.]])
    """
    d, heads, size = kernel.shape
    flat = x @ kernel.reshape(d, heads * size)               # (..., n, heads*size)
    if bias is not None:
        flat = flat + bias.reshape(heads * size)
    return split_heads(flat, heads)                          # (..., heads, n, size)


def combine_heads(heads_out, output_kernel, output_bias=None) -> np.ndarray:
    """(..., heads, n, size) -> (..., n, d_model): concatenate the heads, multiply by W^O.

    Parameters
    ----------
    heads_out : numpy.ndarray, shape (..., heads, n, size), floating
    output_kernel : numpy.ndarray, shape (heads, size, d_model)
        Keras's layout of W^O: ``output_kernel[h]`` maps head ``h``'s output.
    output_bias : numpy.ndarray, shape (d_model,), optional

    Returns
    -------
    numpy.ndarray, shape (..., n, d_model)

    Raises
    ------
    ValueError
        If ``heads_out`` is not finite. The shapes are assumed checked by the calling layer.

    Notes
    -----
    Concat(head_1, ..., head_h) W^O of Vaswani et al. (2017), section 3.2.2, computed with
    :func:`helpers.attention.merge_heads`; the same as summing ``head_h @ output_kernel[h]``.
    Taught in chapter 3.

    Examples
    --------
    >>> heads = np.ones((2, 1, 3))                       # 2 heads, 1 position, size 3
    >>> combine_heads(heads, np.ones((2, 3, 4)))         # 2 x 3 ones summed per output
    array([[6., 6., 6., 6.]])
    """
    heads, size, d_model = output_kernel.shape
    out = merge_heads(heads_out) @ output_kernel.reshape(heads * size, d_model)
    return out if output_bias is None else out + output_bias


def keras_attention_weights(layer) -> dict[str, np.ndarray]:
    """The kernels and biases of a built Keras attention layer, by the NumPy classes' names.

    Works for ``keras.layers.MultiHeadAttention`` and ``keras.layers.GroupQueryAttention``,
    whose weights are named ``query``, ``key``, ``value`` and ``attention_output``.

    Returns
    -------
    dict
        ``{"query_kernel": array, "query_bias": array, ...}`` (biases only if the layer has
        them), float32 arrays in Keras's shapes.

    Raises
    ------
    ValueError
        If the layer has no weights yet or they are not named as above.
    """
    keras_names = {"query": "query", "key": "key", "value": "value",
                   "attention_output": "output"}
    found = {}
    for variable in getattr(layer, "weights", []):
        parts = str(getattr(variable, "path", variable.name)).split("/")
        if len(parts) >= 2 and parts[-2] in keras_names and parts[-1] in ("kernel", "bias"):
            found[f"{keras_names[parts[-2]]}_{parts[-1]}"] = np.asarray(variable)
    missing = [f"{n}_kernel" for n in ("query", "key", "value", "output")
               if f"{n}_kernel" not in found]
    if missing:
        present = [getattr(v, "path", v.name) for v in getattr(layer, "weights", [])]
        raise ValueError(f"the layer has no weights {missing}: call it once on data (or "
                         f"build it) before copying; got {present}")
    return found


class _ProjectedAttention:
    """The steps :class:`MultiHeadAttention` and :class:`GroupedQueryAttention` share.

    Both keep four kernels in Keras's layout, ``query_kernel`` (d_query, num_heads, key_dim),
    ``key_kernel`` (d_key, num_kv_heads, key_dim), ``value_kernel`` (d_value, num_kv_heads,
    value_dim) and ``output_kernel`` (num_heads, value_dim, d_model), with optional biases;
    the two differ only in how many key/value heads they allow and in how they are called.
    """

    @property
    def num_kv_heads(self) -> int:
        """Key/value heads: ``num_heads`` for multi-head attention, fewer for grouped-query."""
        return self.key_kernel.shape[1]

    def _project(self, x, name: str) -> np.ndarray:
        """(..., n, d_in) -> (..., heads, n, size) with the kernel and bias called ``name``."""
        return project_heads(x, getattr(self, f"{name}_kernel"), getattr(self, f"{name}_bias"))

    def _output(self, heads_out) -> np.ndarray:
        """(..., num_heads, n, value_dim) -> (..., n, d_model): concatenate, multiply by W^O."""
        return combine_heads(heads_out, self.output_kernel, self.output_bias)

    def get_weights(self) -> list[np.ndarray]:
        """Kernels and biases in the order of Keras's ``layer.get_weights()``."""
        pairs = zip((self.query_kernel, self.key_kernel, self.value_kernel, self.output_kernel),
                    (self.query_bias, self.key_bias, self.value_bias, self.output_bias))
        return [w for kernel, bias in pairs for w in (kernel, bias) if w is not None]

    def count_params(self) -> int:
        """The number of weights, as Keras's ``count_params()`` counts them."""
        return int(sum(w.size for w in self.get_weights()))


# --- multi-head attention (chapter 3) -----------------------------------------------------------

class MultiHeadAttention(_ProjectedAttention):
    """Multi-head attention in NumPy, with its weights in the layout of Keras.

    Each of the ``num_heads`` heads projects the inputs to its own query, key and value,
    runs :func:`helpers.attention.scaled_dot_product_attention`, and the heads' outputs are
    projected back and summed (equivalently: concatenated and multiplied by W^O).

    It is :class:`GroupedQueryAttention`'s computation with as many key/value heads as query
    heads (``num_kv_heads == num_heads``): the same projection, the same
    :func:`helpers.attention.grouped_query_attention` and the same output projection. What
    it adds is Keras's call (different query, key and value sequences, as in
    cross-attention) and a looped form for teaching.

    Parameters
    ----------
    query_kernel : array_like, shape (d_query, num_heads, key_dim)
    key_kernel : array_like, shape (d_key, num_heads, key_dim)
    value_kernel : array_like, shape (d_value, num_heads, value_dim)
    output_kernel : array_like, shape (num_heads, value_dim, d_model)
        The same shapes as the kernels of ``keras.layers.MultiHeadAttention``.
    query_bias, key_bias : array_like, shape (num_heads, key_dim), optional
    value_bias : array_like, shape (num_heads, value_dim), optional
    output_bias : array_like, shape (d_model,), optional
        Biases; ``None`` means no bias (Keras's ``use_bias=False``).
    vectorized : bool, default True
        Compute all heads at once with reshape/transpose (``True``) or one head at a time in
        a Python loop (``False``). Both give the same numbers.

    Raises
    ------
    ValueError
        If a kernel has the wrong rank or the shapes disagree (num_heads, key_dim,
        value_dim), or a bias does not match its kernel.

    Notes
    -----
    Vaswani et al. (2017), section 3.2.2: MultiHead(Q, K, V) = Concat(head_1..head_h) W^O,
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V). Taught in chapter 3; chapter 4 shows it
    gives the numbers of ``keras.layers.MultiHeadAttention`` (see :meth:`from_keras`).

    Examples
    --------
    >>> mha = MultiHeadAttention.random(8, num_heads=4, key_dim=2, rng=np.random.default_rng(0))
    >>> out, weights = mha(np.ones((5, 8)), np.ones((7, 8)), return_attention_scores=True)
    >>> out.shape, weights.shape, mha.num_kv_heads == mha.num_heads
    ((5, 8), (4, 5, 7), True)
    """

    _NAMES = ("query", "key", "value", "output")

    def __init__(self, query_kernel, key_kernel, value_kernel, output_kernel,
                 query_bias=None, key_bias=None, value_bias=None, output_bias=None, *,
                 vectorized: bool = True):
        kernels = [_checks.float_array(k, f"{n}_kernel") for k, n in
                   zip((query_kernel, key_kernel, value_kernel, output_kernel), self._NAMES)]
        for kernel, name in zip(kernels, self._NAMES):
            if kernel.ndim != 3:
                raise ValueError(f"{name}_kernel must be 3-D; got shape {kernel.shape}")
        self.query_kernel, self.key_kernel, self.value_kernel, self.output_kernel = kernels
        num_heads, key_dim = self.query_kernel.shape[1:]
        value_dim = self.value_kernel.shape[2]
        expected = {"key_kernel": (self.key_kernel.shape[1:], (num_heads, key_dim)),
                    "value_kernel": (self.value_kernel.shape[1:2], (num_heads,)),
                    "output_kernel": (self.output_kernel.shape[:2], (num_heads, value_dim))}
        for name, (got, want) in expected.items():
            if tuple(got) != want:
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, which does not "
                                 f"fit num_heads={num_heads}, key_dim={key_dim}, "
                                 f"value_dim={value_dim} of query_kernel and value_kernel")
        shapes = ((num_heads, key_dim), (num_heads, key_dim), (num_heads, value_dim),
                  (self.output_kernel.shape[2],))
        biases = []
        for bias, name, shape in zip((query_bias, key_bias, value_bias, output_bias),
                                     self._NAMES, shapes):
            if bias is not None:
                bias = _checks.float_array(bias, f"{name}_bias")
                if bias.shape != shape:
                    raise ValueError(f"{name}_bias must have shape {shape}; got {bias.shape}")
            biases.append(bias)
        self.query_bias, self.key_bias, self.value_bias, self.output_bias = biases
        self.vectorized = vectorized

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def random(cls, d_model: int, num_heads: int, key_dim: int, value_dim: int | None = None,
               *, rng: np.random.Generator, use_bias: bool = True, vectorized: bool = True):
        """Random kernels (Glorot-uniform: variance 2 / (fan_in + fan_out)) and zero biases.

        Parameters
        ----------
        d_model : int
            Feature size of the inputs and of the output.
        num_heads, key_dim : int
            Number of heads and size of each head's query and key.
        value_dim : int, optional
            Size of each head's value; defaults to ``key_dim``.
        rng : numpy.random.Generator
            Source of the random numbers.
        use_bias : bool, default True
            Create zero biases (``False``: no biases).
        vectorized : bool, default True
            See the class.
        """
        d_model = _checks.positive_int(d_model, "d_model")
        num_heads = _checks.positive_int(num_heads, "num_heads")
        key_dim = _checks.positive_int(key_dim, "key_dim")
        value_dim = key_dim if value_dim is None else _checks.positive_int(value_dim, "value_dim")
        rng = _checks.generator(rng)
        kernels = [glorot_uniform(rng, (d_model, num_heads, key_dim), d_model),
                   glorot_uniform(rng, (d_model, num_heads, key_dim), d_model),
                   glorot_uniform(rng, (d_model, num_heads, value_dim), d_model),
                   glorot_uniform(rng, (num_heads, value_dim, d_model), num_heads * value_dim)]
        biases = [np.zeros(s) for s in ((num_heads, key_dim), (num_heads, key_dim),
                                        (num_heads, value_dim), (d_model,))]
        return cls(*kernels, *(biases if use_bias else [None] * 4), vectorized=vectorized)

    @classmethod
    def from_keras(cls, layer, *, vectorized: bool = True):
        """Copy the weights of a built ``keras.layers.MultiHeadAttention``.

        Parameters
        ----------
        layer : keras.layers.MultiHeadAttention
            A layer that has been called once (so its weights exist).

        Raises
        ------
        ValueError
            If the layer has no weights yet or they are not named query/key/value/output.
        """
        return cls(**keras_attention_weights(layer), vectorized=vectorized)

    # --- properties ---------------------------------------------------------------------------

    @property
    def num_heads(self) -> int:
        return self.query_kernel.shape[1]

    @property
    def key_dim(self) -> int:
        return self.query_kernel.shape[2]

    @property
    def value_dim(self) -> int:
        return self.value_kernel.shape[2]

    def without_head(self, head: int) -> MultiHeadAttention:
        """A copy in which head ``head`` contributes nothing (its output kernel is zero)."""
        head = _checks.integer(head, "head", low=0, high=self.num_heads - 1)
        output_kernel = self.output_kernel.copy()
        output_kernel[head] = 0.0
        return MultiHeadAttention(self.query_kernel, self.key_kernel, self.value_kernel,
                                  output_kernel, self.query_bias, self.key_bias,
                                  self.value_bias, self.output_bias, vectorized=self.vectorized)

    # --- computation --------------------------------------------------------------------------

    def _heads_vectorized(self, query, key, value, mask):
        q, k, v = self._project(query, "query"), self._project(key, "key"), self._project(
            value, "value")
        if mask is not None:  # insert the head axis in front of (n_q, n_k)
            mask = mask.reshape((1,) * max(0, 2 - mask.ndim) + mask.shape)[..., None, :, :]
        return grouped_query_attention(q, k, v, mask)   # as many key/value heads as queries

    def _heads_looped(self, query, key, value, mask):
        outputs, weights = [], []
        for h in range(self.num_heads):
            q, k, v = (x @ kernel[:, h, :] + (0.0 if bias is None else bias[h])
                       for x, kernel, bias in ((query, self.query_kernel, self.query_bias),
                                               (key, self.key_kernel, self.key_bias),
                                               (value, self.value_kernel, self.value_bias)))
            out_h, w_h = scaled_dot_product_attention(q, k, v, mask)
            outputs.append(out_h)
            weights.append(w_h)
        return np.stack(outputs, axis=-3), np.stack(weights, axis=-3)

    def _check_inputs(self, query, key, value):
        for name, arr, kernel in (("query", query, self.query_kernel),
                                  ("key", key, self.key_kernel),
                                  ("value", value, self.value_kernel)):
            if arr.shape[-1] != kernel.shape[0]:
                raise ValueError(f"{name} has {arr.shape[-1]} features but {name}_kernel "
                                 f"{kernel.shape} expects {kernel.shape[0]}")
        _checks.same_size({"key": key.shape[-2], "value": value.shape[-2]}, "length n_k (axis -2)")
        return _checks.broadcast({"query": query.shape[:-2], "key": key.shape[:-2],
                          "value": value.shape[:-2]})

    def __call__(self, query, value, key=None, attention_mask=None,
                 use_causal_mask: bool = False, return_attention_scores: bool = False):
        """Attend from ``query`` to ``value`` (and ``key``), as Keras's layer is called.

        Parameters
        ----------
        query : array_like, shape (..., n_q, d_query)
        value : array_like, shape (..., n_k, d_value)
        key : array_like, shape (..., n_k, d_key), optional
            Defaults to ``value`` (as in Keras).
        attention_mask : array_like of bool, broadcastable to (..., n_q, n_k), optional
            ``True`` where a query may attend to a key; the same mask for every head.
        use_causal_mask : bool, default False
            Also block keys after the query's position (query i sees keys 0..i), combined
            with ``attention_mask`` by logical and, as Keras does.
        return_attention_scores : bool, default False
            Also return the weights.

        Returns
        -------
        output : numpy.ndarray, shape (..., n_q, d_model)
        weights : numpy.ndarray, shape (..., num_heads, n_q, n_k)
            Only with ``return_attention_scores=True``. Keras calls them "scores"; they are
            the attention weights after softmax.

        Raises
        ------
        ValueError
            If the inputs' feature sizes do not fit the kernels, key and value lengths
            differ, an input is not finite, or the mask is not boolean or does not broadcast.
        """
        axes = "(..., length, features)"
        query = _checks.float_array(query, "query", min_rank=2, axes=axes)
        value = _checks.float_array(value, "value", min_rank=2, axes=axes)
        key = value if key is None else _checks.float_array(key, "key", min_rank=2, axes=axes)
        batch = self._check_inputs(query, key, value)
        n_q, n_k = query.shape[-2], key.shape[-2]
        mask = None
        if attention_mask is not None:
            mask = _check_mask(attention_mask, (*batch, n_q, n_k))
        if use_causal_mask:
            causal = causal_mask(n_q, n_k)
            mask = causal if mask is None else mask & causal
        compute = self._heads_vectorized if self.vectorized else self._heads_looped
        heads_out, weights = compute(query, key, value, mask)
        output = self._output(heads_out)
        return (output, weights) if return_attention_scores else output
