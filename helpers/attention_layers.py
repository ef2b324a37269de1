"""Every attention layer of the course in one module, in NumPy, with the caches they fill.

All of them project each token to per-head queries, keys and values
(:func:`project_heads`, :func:`helpers.attention.split_heads`), compare and mix them with
:func:`helpers.attention.grouped_query_attention`, and project the heads' outputs back
(:func:`combine_heads`). What differs is what stands behind a query head's key and value,
and so what a KV cache keeps per token and layer:

* :class:`MultiHeadAttention` (chapter 3): one key/value head per query head, the
  grouped-query computation with ``num_kv_heads == num_heads``; any query, key and value
  sequences (cross-attention), called like ``keras.layers.MultiHeadAttention``.
* :class:`GroupedQueryAttention` (chapters 9-11): ``num_kv_heads`` key/value heads, each
  shared by a group of query heads (1: multi-query attention), causal self-attention with
  RoPE or ALiBi; :class:`KVCache` keeps ``2 x num_kv_heads x head_dim`` numbers per token.
* :class:`MultiHeadLatentAttention` (chapter 12): keys and values rebuilt per head from one
  small latent (naive form: as many key/value heads as query heads), or the latents
  attended directly (absorbed form: one key/value head for all); :class:`LatentCache` keeps
  ``latent_dim + rope_dim`` numbers per token, whatever the number of heads.

The functions on arrays (softmax, masks, scaled dot-product and grouped-query attention)
are in :mod:`helpers.attention`; the positions applied here in :mod:`helpers.positions`.
Imports only NumPy. Mask convention: ``True`` where a query may attend to a key.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._initializers import glorot_uniform
from .attention import (
    _check_mask,
    causal_mask,
    grouped_query_attention,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
    visible_keys,
)
from .normalization import rms_norm
from .positions import _alibi, alibi_slopes, rotary_position_embedding

__all__ = ["MultiHeadAttention", "GroupedQueryAttention", "KVCache", "MultiHeadLatentAttention",
           "LatentCache", "project_heads", "combine_heads", "keras_attention_weights"]


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


# --- grouped-query attention and its KV cache (chapters 9-11) ----------------------------------

class GroupedQueryAttention(_ProjectedAttention):
    """Grouped-query self-attention in NumPy, with the weights of Keras's layer.

    ``num_query_heads`` query heads, ``num_kv_heads`` key/value heads; query head ``h`` reads
    key/value head ``h // (num_query_heads // num_kv_heads)``. With ``num_kv_heads ==
    num_query_heads`` it computes what :class:`MultiHeadAttention` does with the same
    kernels (the same steps of one base class); with fewer, its :class:`KVCache` is smaller
    by the factor ``num_query_heads / num_kv_heads``.

    Parameters
    ----------
    query_kernel : array_like, shape (d_model, num_query_heads, head_dim)
    key_kernel, value_kernel : array_like, shape (d_model, num_kv_heads, head_dim)
    output_kernel : array_like, shape (num_query_heads, head_dim, d_model)
        The shapes of ``keras.layers.GroupQueryAttention``'s kernels.
    query_bias : array_like, shape (num_query_heads, head_dim), optional
    key_bias, value_bias : array_like, shape (num_kv_heads, head_dim), optional
    output_bias : array_like, shape (d_model,), optional
        ``None``: no bias.
    position : {"none", "rope", "alibi"}, default "none"
        What the attention itself does with positions (see :meth:`attend`): nothing (the
        positions, if any, are in ``x``), rotate queries and keys (RoPE), or add the ALiBi
        bias to the scores, with one slope per query head.

    Raises
    ------
    TypeError
        If a weight is not a real array.
    ValueError
        If a weight has the wrong shape or is not finite, ``num_kv_heads`` does not
        divide ``num_query_heads``, or ``position`` is not one of the three.

    Notes
    -----
    Ainslie et al. (2023), section 2.2; Shazeer (2019) for one key/value head. Taught in
    chapter 10; chapter 9 uses it with ``num_kv_heads == num_query_heads``; chapter 11
    with RoPE (Su et al. 2021) and ALiBi (Press et al. 2022).

    Examples
    --------
    >>> attention = GroupedQueryAttention.random(8, 4, 2, rng=np.random.default_rng(0))
    >>> out, weights = attention(np.ones((3, 5, 8)))
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 4, 5, 5))
    >>> attention.count_params()  # query 72 + key 36 + value 36 + output 72
    216
    """

    def __init__(self, query_kernel, key_kernel, value_kernel, output_kernel,
                 query_bias=None, key_bias=None, value_bias=None, output_bias=None, *,
                 position: str = "none"):
        query_kernel = _checks.float_array(query_kernel, "query_kernel", ndim=3,
                                           axes="(d_model, num_query_heads, head_dim)")
        d_model, num_query_heads, head_dim = query_kernel.shape
        num_kv_heads = _checks.float_array(key_kernel, "key_kernel", ndim=3,
                                           axes="(d_model, num_kv_heads, head_dim)").shape[1]
        if num_query_heads % num_kv_heads:
            raise ValueError(f"num_kv_heads={num_kv_heads} (key_kernel's axis 1) must divide "
                             f"num_query_heads={num_query_heads} (query_kernel's axis 1)")
        kv_shape, kv_bias = (d_model, num_kv_heads, head_dim), (num_kv_heads, head_dim)
        self.query_kernel = query_kernel
        self.key_kernel = _checks.weight(key_kernel, "key_kernel", kv_shape)
        self.value_kernel = _checks.weight(value_kernel, "value_kernel", kv_shape)
        self.output_kernel = _checks.weight(output_kernel, "output_kernel",
                                     (num_query_heads, head_dim, d_model))
        biases = {"query_bias": (query_bias, (num_query_heads, head_dim)),
                  "key_bias": (key_bias, kv_bias), "value_bias": (value_bias, kv_bias),
                  "output_bias": (output_bias, (d_model,))}
        for name, (bias, shape) in biases.items():
            setattr(self, name, None if bias is None else _checks.weight(bias, name, shape))
        self.position = _checks.one_of(position, "position", ("none", "rope", "alibi"))
        self.rope_frequencies = None  # None: base 10000 (see with_rope_frequencies)
        self.rope_pairing = "adjacent"  # the features RoPE turns together (chapters 11, 15)

    @classmethod
    def random(cls, d_model: int, num_query_heads: int, num_kv_heads: int, *,
               rng: np.random.Generator, position: str = "none") -> GroupedQueryAttention:
        """Glorot-uniform kernels and zero biases, as Keras initialises them, with
        ``head_dim = d_model // num_query_heads``.

        Raises
        ------
        TypeError
            If a size is not an integer or ``rng`` is not a ``numpy.random.Generator``.
        ValueError
            If a size is below 1, ``num_query_heads`` does not divide ``d_model`` or
            ``num_kv_heads`` does not divide ``num_query_heads``.
        """
        head_dim, rng = _checks.key_dim(d_model, num_query_heads), _checks.generator(rng)
        kv = _checks.positive_int(num_kv_heads, "num_kv_heads")
        kernels = [glorot_uniform(rng, (d_model, num_query_heads, head_dim), d_model),
                   glorot_uniform(rng, (d_model, kv, head_dim), d_model),
                   glorot_uniform(rng, (d_model, kv, head_dim), d_model),
                   glorot_uniform(rng, (num_query_heads, head_dim, d_model), d_model)]
        biases = [np.zeros((num_query_heads, head_dim)), np.zeros((kv, head_dim)),
                  np.zeros((kv, head_dim)), np.zeros(d_model)]
        return cls(*kernels, *biases, position=position)

    @classmethod
    def from_keras(cls, layer) -> GroupedQueryAttention:
        """Copy the weights of a built ``keras.layers.GroupQueryAttention``, or of a
        ``helpers.keras_decoder_only.PositionalSelfAttention`` (with its ``position``).

        Raises
        ------
        ValueError
            If the layer has no weights yet or they are not named query/key/value/output.
        """
        return cls(**keras_attention_weights(layer), position=getattr(layer, "position", "none"))

    @property
    def d_model(self) -> int:
        return self.query_kernel.shape[0]

    @property
    def num_query_heads(self) -> int:
        return self.query_kernel.shape[1]

    @property
    def head_dim(self) -> int:
        return self.query_kernel.shape[2]

    def keys_values(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The keys and values of ``x`` (batch, n, d_model): two (batch, num_kv_heads, n,
        head_dim) arrays, what a :class:`KVCache` stores."""
        return self._project(x, "key"), self._project(x, "value")

    def __call__(self, x, mask=None, *, cache: KVCache | None = None, layer: int = 0):
        """Self-attention of ``x``, attending also to the cached keys and values.

        Parameters
        ----------
        x : numpy.ndarray, shape (batch, n, d_model)
            The new positions (all positions when there is no cache).
        mask : numpy.ndarray of bool, shape (n, n_k), optional
            Which keys each new position sees (:func:`helpers.attention.visible_keys`);
            ``n_k`` counts the cached positions and the new ones. ``None``: all of them.
        cache : KVCache, optional
            Stores this call's keys and values and hands back the earlier ones.
        layer : int, default 0
            Which layer's entries of ``cache`` to use.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n, d_model)
        weights : numpy.ndarray, shape (batch, num_query_heads, n, n_k)
        """
        keys, values = self.keys_values(x)
        if cache is not None:
            keys, values = cache.update(layer, keys, values)
        query = self._project(x, "query")
        heads_out, weights = grouped_query_attention(query, keys, values, mask)
        return self._output(heads_out), weights

    def attend(self, x, positions, mask=None, *, cache: KVCache | None = None, layer: int = 0):
        """:meth:`__call__` for rows of ``x`` at ``positions``, with RoPE or ALiBi.

        ``position="rope"``: queries and keys are rotated by their positions before the
        keys are cached, so the cache holds rotated keys; the attributes
        ``rope_frequencies`` (``None``: base 10000) and ``rope_pairing`` (``"adjacent"`` or
        ``"halves"``, as in :func:`helpers.positions.rotary_position_embedding`) say how.
        ``"alibi"``: the bias ``-m_h (i - j)`` of query position ``i`` and key position
        ``j`` (the cache's
        :meth:`KVCache.positions`) is added to the scaled scores before the mask.
        ``"none"``: exactly :meth:`__call__`.

        Parameters
        ----------
        x : numpy.ndarray, shape (batch, n, d_model)
        positions : array_like of int, shape (n,)
            The positions of the rows of ``x`` (after the cached ones, with a cache).
        mask, cache, layer
            As in :meth:`__call__`.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n, d_model)
        weights : numpy.ndarray, shape (batch, num_query_heads, n, n_k)
        """
        if self.position == "none":
            return self(x, mask, cache=cache, layer=layer)
        positions = _checks.int_array(positions, "positions", ndim=1, low=0)
        key_positions = positions if cache is None else cache.positions(new=len(positions))
        query = self._project(x, "query")
        keys, values = self.keys_values(x)
        if self.position == "rope":
            rope = {"frequencies": self.rope_frequencies, "pairing": self.rope_pairing}
            query = rotary_position_embedding(query, positions, **rope)
            keys = rotary_position_embedding(keys, positions, **rope)
        if cache is not None:
            keys, values = cache.update(layer, keys, values)
        bias = None
        if self.position == "alibi":
            bias = _alibi(alibi_slopes(self.num_query_heads), positions, key_positions)
        heads_out, weights = grouped_query_attention(query, keys, values, mask, bias=bias)
        return self._output(heads_out), weights


class KVCache:
    """The keys and values of the positions generated so far, for every layer.

    A new position's query must be compared with the keys of all earlier positions and mix
    their values; those do not change once computed (causal attention), so they are kept
    here instead of recomputed. Layer ``l`` holds ``keys(l)`` and ``values(l)``, each of
    shape (batch, num_kv_heads, stored, head_dim).

    Parameters
    ----------
    num_layers : int
        Number of layers of the model, at least 1.
    max_entries : int, optional
        ``None`` (default): keep every position (``stored`` = positions seen). An integer
        ``w``: a ring buffer of ``w`` slots per layer; position ``p`` is written to slot
        ``p % w``, overwriting position ``p - w``. Enough for a model whose attention window
        is at most ``w``.

    Attributes
    ----------
    length : int
        Positions seen so far (0 for a new cache).

    Raises
    ------
    TypeError
        If ``num_layers`` or ``max_entries`` is not an integer.
    ValueError
        If either is below 1.

    Notes
    -----
    Caching keys and values in incremental decoding: Pope et al. (2022), "Efficiently
    Scaling Transformer Inference", section 2. The ring buffer of a sliding-window model:
    Jiang et al. (2023), "Mistral 7B", section 2 ("rolling buffer cache"). Taught in
    chapters 9 and 10.

    Examples
    --------
    >>> cache = KVCache(num_layers=1, max_entries=3)
    >>> for p in range(5):
    ...     entry = np.full((1, 1, 1, 2), float(p))   # (batch, num_kv_heads, n, head_dim)
    ...     _ = cache.update(0, entry, entry)
    >>> cache.keys(0)[0, 0, :, 0], cache.positions()  # the last three, oldest first
    (array([2., 3., 4.]), array([2, 3, 4]))
    """

    def __init__(self, num_layers: int, *, max_entries: int | None = None):
        self.num_layers = _checks.positive_int(num_layers, "num_layers")
        self.max_entries = (None if max_entries is None
                            else _checks.positive_int(max_entries, "max_entries"))
        self._keys: list = [None] * self.num_layers
        self._values: list = [None] * self.num_layers
        self._seen = [0] * self.num_layers

    @property
    def length(self) -> int:
        return self._seen[-1]

    def _layer(self, layer) -> int:
        return _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)

    def _stored(self, layer: int) -> int:
        return min(self._seen[layer], self.max_entries or self._seen[layer])

    def _order(self, layer: int) -> np.ndarray:
        """Slots of the stored positions, oldest first."""
        stored, seen = self._stored(layer), self._seen[layer]
        if self.max_entries is None:
            return np.arange(stored)
        return np.arange(seen - stored, seen) % self.max_entries

    def keys(self, layer: int) -> np.ndarray:
        """Stored keys of ``layer``, oldest first: (batch, num_kv_heads, stored, head_dim)."""
        layer = self._layer(layer)
        if self._keys[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return self._keys[layer][..., self._order(layer), :]

    def values(self, layer: int) -> np.ndarray:
        """Stored values of ``layer``, oldest first: (batch, num_kv_heads, stored,
        value_dim)."""
        layer = self._layer(layer)
        if self._values[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return self._values[layer][..., self._order(layer), :]

    def positions(self, new: int = 0) -> np.ndarray:
        """Positions of the stored entries (oldest first), followed by ``new`` positions
        still to come: the key positions a call with ``new`` tokens attends to."""
        seen = self.length
        stored = min(seen, self.max_entries or seen)
        return np.arange(seen - stored, seen + _checks.integer(new, "new", low=0))

    @property
    def nbytes(self) -> int:
        """Bytes held by all layers' key and value arrays."""
        return int(sum(a.nbytes for a in (*self._keys, *self._values) if a is not None))

    def update(self, layer: int, keys, values) -> tuple[np.ndarray, np.ndarray]:
        """Add the new positions' keys and values to ``layer``; return all that they see.

        Parameters
        ----------
        layer : int
        keys : numpy.ndarray, shape (batch, num_kv_heads, n, head_dim)
        values : numpy.ndarray, shape (batch, num_kv_heads, n, value_dim)
            The entries of the ``n`` new positions.

        Returns
        -------
        keys, values : numpy.ndarray, shapes (batch, num_kv_heads, stored + n, ...)
            The entries stored before this call (oldest first) followed by the new ones:
            the keys and values the new positions attend to, at :meth:`positions`.

        Raises
        ------
        ValueError
            If the arrays do not have 4 axes, disagree with each other or with what the
            layer stored before.
        """
        layer = self._layer(layer)
        keys = _checks.float_array(keys, "keys", ndim=4,
                                   axes="(batch, num_kv_heads, n, head_dim)")
        values = _checks.float_array(values, "values", ndim=4,
                                     axes="(batch, num_kv_heads, n, value_dim)")
        if keys.shape[:3] != values.shape[:3]:
            raise ValueError(f"keys {keys.shape} and values {values.shape} must agree on "
                             "(batch, num_kv_heads, n)")
        if self._keys[layer] is not None:
            keys = np.concatenate([self.keys(layer), keys], axis=-2)
            values = np.concatenate([self.values(layer), values], axis=-2)
        self._store(layer, keys, values)
        return keys, values

    def _store(self, layer: int, keys: np.ndarray, values: np.ndarray) -> None:
        """Keep ``keys``/``values`` (every stored position plus the new ones) for ``layer``."""
        new = keys.shape[-2] - self._stored(layer)
        self._seen[layer] += new
        if self.max_entries is None:
            self._keys[layer], self._values[layer] = keys, values
            return
        slots = np.arange(self._seen[layer] - keys.shape[-2], self._seen[layer])
        keep = slots >= self._seen[layer] - self.max_entries    # 마지막 max_entries개만
        for store, arr in ((self._keys, keys), (self._values, values)):
            if store[layer] is None:
                store[layer] = np.zeros((*arr.shape[:2], self.max_entries, arr.shape[3]),
                                        arr.dtype)
            store[layer][..., slots[keep] % self.max_entries, :] = arr[..., keep, :]


# --- multi-head latent attention and its cache of latents (chapter 12) -------------------------

# name: (d_in axis, d_out axis) of each weight, in the paper's order
_WEIGHTS = {"w_dq": ("d_model", "query_latent_dim"),
            "w_uq": ("query_latent_dim", "num_heads*head_dim"),
            "w_qr": ("query_latent_dim", "num_heads*rope_dim"),
            "w_dkv": ("d_model", "latent_dim"),
            "w_uk": ("latent_dim", "num_heads*head_dim"),
            "w_uv": ("latent_dim", "num_heads*value_dim"),
            "w_kr": ("d_model", "rope_dim"),
            "w_o": ("num_heads*value_dim", "d_model")}


class MultiHeadLatentAttention:
    """Multi-head latent attention (DeepSeek-V2) with causal self-attention, in NumPy.

    For the token at position ``t`` with input ``h_t`` (a row of ``x``)::

        c_Q  = RMSNorm(h_t W^DQ)                 (12)   query latent, d_c'
        q^C  = c_Q W^UQ,  q^R = RoPE(c_Q W^QR)   (13, 14) per head: d_h and d_h^R
        c_KV = RMSNorm(h_t W^DKV)                (9)    the cached latent, d_c
        k^R  = RoPE(h_t W^KR)                    (15)   cached RoPE key, d_h^R, all heads
        k^C  = c_KV W^UK,  v^C = c_KV W^UV       (10, 11) per head: d_h each
        q = [q^C; q^R],  k = [k^C; k^R]          (16, 17)
        o = softmax(q k^T / sqrt(d_h + d_h^R)) v^C   (18)  causal
        u = [o_1; ...; o_nh] W^O                 (19)

    The RMSNorms on ``c_Q`` and ``c_KV`` are not in the paper's equations; they are in the
    released code (``q_norm``, ``kv_norm``), with learned scales.

    Next to :class:`GroupedQueryAttention`: the heads are split and merged and (18) computed
    by the same functions. The naive form (:meth:`_naive`) is multi-head attention over keys
    and values rebuilt from the latents; the absorbed form (:meth:`_absorbed`) is
    multi-query attention, one key ``[c_KV; k^R]`` and one value ``c_KV`` for every head.

    Parameters
    ----------
    w_dq : array_like, shape (d_model, query_latent_dim)
    q_norm : array_like, shape (query_latent_dim,), or None
        RMSNorm scale of the query latent; ``None``: no normalisation.
    w_uq : array_like, shape (query_latent_dim, num_heads * head_dim)
    w_qr : array_like, shape (query_latent_dim, num_heads * rope_dim), or None
    w_dkv : array_like, shape (d_model, latent_dim)
    kv_norm : array_like, shape (latent_dim,), or None
        RMSNorm scale of the latent; ``None``: no normalisation.
    w_uk : array_like, shape (latent_dim, num_heads * head_dim)
    w_uv : array_like, shape (latent_dim, num_heads * value_dim)
    w_kr : array_like, shape (d_model, rope_dim), or None
        ``w_qr`` and ``w_kr`` both ``None``: no decoupled RoPE part (``rope_dim = 0``), the
        layer then knows no positions.
    w_o : array_like, shape (num_heads * value_dim, d_model)
    num_heads : int
    epsilon : float, default 1e-6
        Of both RMSNorms (the released code's default).

    Raises
    ------
    TypeError
        If a weight is not a real array or ``num_heads`` not an integer.
    ValueError
        If a weight has the wrong shape or is not finite, ``num_heads`` does not divide an
        up-projection's width, only one of ``w_qr``/``w_kr`` is given, or ``rope_dim`` is
        odd.

    Notes
    -----
    DeepSeek-AI (2024), "DeepSeek-V2", section 2.1, equations (9)-(19); the RMSNorms and the
    absorbed computation follow the released ``MLA`` module (DeepSeek-V3 repository,
    ``inference/model.py``). Taught in chapter 12.

    Examples
    --------
    >>> mla = MultiHeadLatentAttention.random(16, num_heads=4, head_dim=4, latent_dim=8,
    ...                                       query_latent_dim=12, rope_dim=2,
    ...                                       rng=np.random.default_rng(0))
    >>> x = np.random.default_rng(1).normal(size=(2, 5, 16))
    >>> out, weights = mla(x)
    >>> out.shape, weights.shape
    ((2, 5, 16), (2, 4, 5, 5))
    >>> bool(np.allclose(mla(x, absorbed=True)[0], out, rtol=0, atol=1e-12))
    True
    >>> mla.cache_elements_per_token()   # latent 8 + RoPE key 2, for 4 heads
    10
    """

    def __init__(self, w_dq, q_norm, w_uq, w_qr, w_dkv, kv_norm, w_uk, w_uv, w_kr, w_o, *,
                 num_heads: int, epsilon: float = 1e-6):
        self.num_heads = h = _checks.positive_int(num_heads, "num_heads")
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
        if (w_qr is None) != (w_kr is None):
            raise ValueError("w_qr and w_kr must both be arrays (decoupled RoPE) or both None "
                             f"(no RoPE); got w_qr {_kind(w_qr)} and w_kr {_kind(w_kr)}")
        given = {"w_dq": w_dq, "w_uq": w_uq, "w_qr": w_qr, "w_dkv": w_dkv, "w_uk": w_uk,
                 "w_uv": w_uv, "w_kr": w_kr, "w_o": w_o}
        for name, value in given.items():
            axes = "({}, {})".format(*_WEIGHTS[name])
            setattr(self, name, None if value is None
                    else _checks.float_array(value, name, ndim=2, axes=axes))
        d_model, d_cq, d_c = self.w_dq.shape[0], self.w_dq.shape[1], self.w_dkv.shape[1]
        self.head_dim = self._per_head("w_uq", h)
        self.value_dim = self._per_head("w_uv", h)
        self.rope_dim = 0 if w_qr is None else self._per_head("w_qr", h)
        if self.rope_dim % 2:
            raise ValueError(f"rope_dim must be even (RoPE turns pairs); got {self.rope_dim}")
        expected = {"w_uq": (d_cq, h * self.head_dim), "w_dkv": (d_model, d_c),
                    "w_uk": (d_c, h * self.head_dim), "w_uv": (d_c, h * self.value_dim),
                    "w_o": (h * self.value_dim, d_model)}
        if self.rope_dim:
            expected |= {"w_qr": (d_cq, h * self.rope_dim), "w_kr": (d_model, self.rope_dim)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} must have shape {shape} ({', '.join(_WEIGHTS[name])});"
                                 f" got shape {getattr(self, name).shape}")
        self.q_norm = _scale(q_norm, "q_norm", d_cq)
        self.kv_norm = _scale(kv_norm, "kv_norm", d_c)

    def _per_head(self, name: str, num_heads: int) -> int:
        width = getattr(self, name).shape[1]
        if width % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide {name}'s width {width}")
        return width // num_heads

    @classmethod
    def random(cls, d_model: int, *, num_heads: int, head_dim: int, latent_dim: int,
               query_latent_dim: int, rope_dim: int, rng: np.random.Generator,
               value_dim: int | None = None) -> MultiHeadLatentAttention:
        """Glorot-uniform weights (as Keras initialises a kernel) and RMSNorm scales of 1;
        ``rope_dim=0``: no decoupled RoPE. ``value_dim`` defaults to ``head_dim``.

        Raises
        ------
        TypeError, ValueError
            If a size is not an integer, a size is below 1 (``rope_dim`` below 0) or ``rng``
            is not a ``numpy.random.Generator``.
        """
        rng = _checks.generator(rng)
        d, h = _checks.positive_int(d_model, "d_model"), _checks.positive_int(num_heads,
                                                                              "num_heads")
        d_h = _checks.positive_int(head_dim, "head_dim")
        d_v = d_h if value_dim is None else _checks.positive_int(value_dim, "value_dim")
        d_c = _checks.positive_int(latent_dim, "latent_dim")
        d_cq = _checks.positive_int(query_latent_dim, "query_latent_dim")
        d_r = _checks.integer(rope_dim, "rope_dim", low=0)
        shapes = {"w_dq": (d, d_cq), "w_uq": (d_cq, h * d_h), "w_qr": (d_cq, h * d_r),
                  "w_dkv": (d, d_c), "w_uk": (d_c, h * d_h), "w_uv": (d_c, h * d_v),
                  "w_kr": (d, d_r), "w_o": (h * d_v, d)}
        weights = {name: glorot_uniform(rng, shape, shape[0]) for name, shape in shapes.items()}
        if d_r == 0:
            weights["w_qr"] = weights["w_kr"] = None
        return cls(**weights, q_norm=np.ones(d_cq), kv_norm=np.ones(d_c), num_heads=h)

    @classmethod
    def from_grouped_query_attention(cls, layer) -> MultiHeadLatentAttention:
        """The MLA layer that computes exactly what grouped-query attention ``layer`` does.

        The latent is GQA's whole cache entry: ``W^DKV = [W^K | W^V]``, so ``latent_dim =
        2 x num_kv_heads x head_dim``. ``W^UK`` and ``W^UV`` are 0/1 matrices that hand
        each query head the key and value of its group; ``W^DQ`` is the identity and
        ``W^UQ = W^Q``. No RMSNorm, no decoupled RoPE.

        Parameters
        ----------
        layer : GroupedQueryAttention
            With ``position="none"`` and no biases (or zero biases).

        Raises
        ------
        TypeError
            If ``layer`` is not a ``GroupedQueryAttention``.
        ValueError
            If it rotates or biases positions, or has a non-zero bias.

        Notes
        -----
        The view of GQA as a special case of MLA: Meng et al. (2025), "TransMLA".
        """
        if not isinstance(layer, GroupedQueryAttention):
            raise TypeError("layer must be a GroupedQueryAttention; got "
                            f"{type(layer).__name__}")
        if layer.position != "none":
            raise ValueError(f"layer must have position='none'; got {layer.position!r}")
        for name in ("query_bias", "key_bias", "value_bias", "output_bias"):
            bias = getattr(layer, name)
            if bias is not None and np.any(bias != 0):
                raise ValueError(f"layer's {name} must be None or zero (MLA has no biases)")
        d, h, g, d_h = layer.d_model, layer.num_query_heads, layer.num_kv_heads, layer.head_dim
        w_dkv = np.concatenate([layer.key_kernel.reshape(d, g * d_h),
                                layer.value_kernel.reshape(d, g * d_h)], axis=1)
        group_of_head = np.arange(h) // (h // g)
        pick = np.zeros((g * d_h, h * d_h), layer.key_kernel.dtype)   # head i <- its group
        for head, group in enumerate(group_of_head):
            pick[group * d_h:(group + 1) * d_h, head * d_h:(head + 1) * d_h] = np.eye(d_h)
        zeros = np.zeros_like(pick)
        return cls(np.eye(d, dtype=w_dkv.dtype), None, layer.query_kernel.reshape(d, h * d_h),
                   None, w_dkv, None, np.concatenate([pick, zeros]),
                   np.concatenate([zeros, pick]), None,
                   layer.output_kernel.reshape(h * d_h, d), num_heads=h)

    @classmethod
    def from_keras(cls, layer) -> MultiHeadLatentAttention:
        """Copy the weights of a built ``helpers.keras_latent_attention.
        MultiHeadLatentAttention``.

        Raises
        ------
        ValueError
            If the layer is not built.
        """
        if not getattr(layer, "built", False) or not hasattr(layer, "w_dkv"):
            raise ValueError("layer must be a built helpers.keras_latent_attention."
                             "MultiHeadLatentAttention (call it once first)")
        weights = {name: None if getattr(layer, name, None) is None
                   else np.asarray(getattr(layer, name)) for name in _WEIGHTS}
        return cls(**weights, q_norm=np.asarray(layer.q_norm), kv_norm=np.asarray(layer.kv_norm),
                   num_heads=layer.num_heads, epsilon=layer.epsilon)

    @property
    def d_model(self) -> int:
        return self.w_dq.shape[0]

    @property
    def latent_dim(self) -> int:
        return self.w_dkv.shape[1]

    @property
    def query_latent_dim(self) -> int:
        return self.w_dq.shape[1]

    def count_params(self) -> int:
        """The number of weights (the eight matrices and the two RMSNorm scales)."""
        parts = [getattr(self, name) for name in _WEIGHTS] + [self.q_norm, self.kv_norm]
        return int(sum(p.size for p in parts if p is not None))

    def cache_elements_per_token(self) -> int:
        """Numbers one token adds to the cache of this layer: ``latent_dim + rope_dim``."""
        return self.latent_dim + self.rope_dim

    def _norm(self, x, scale):
        return x if scale is None else rms_norm(x, scale, epsilon=self.epsilon)

    def latents(self, x, positions) -> tuple[np.ndarray, np.ndarray]:
        """What the cache stores for the rows of ``x`` (batch, n, d_model) at ``positions``:
        the latents ``c_KV`` (batch, n, latent_dim), equation (9), and the rotated RoPE keys
        ``k^R`` (batch, n, rope_dim), equation (15)."""
        latent = self._norm(x @ self.w_dkv, self.kv_norm)
        if not self.rope_dim:
            return latent, np.zeros((*x.shape[:-1], 0), x.dtype)
        return latent, rotary_position_embedding(x @ self.w_kr, positions)

    def queries(self, x, positions) -> tuple[np.ndarray, np.ndarray]:
        """``q^C`` (batch, num_heads, n, head_dim) and ``q^R`` (batch, num_heads, n,
        rope_dim) of the rows of ``x`` at ``positions``: equations (12)-(14)."""
        c_q = self._norm(x @ self.w_dq, self.q_norm)
        q_c = split_heads(c_q @ self.w_uq, self.num_heads)
        if not self.rope_dim:
            return q_c, np.zeros((*q_c.shape[:-1], 0), q_c.dtype)
        q_r = split_heads(c_q @ self.w_qr, self.num_heads)
        return q_c, rotary_position_embedding(q_r, positions)

    def __call__(self, x, positions=None, *, cache: LatentCache | None = None, layer: int = 0,
                 absorbed: bool = False):
        """Causal self-attention of the new rows ``x``, attending also to the cached ones.

        Parameters
        ----------
        x : array_like, shape (batch, n, d_model)
            The new positions (all of them when there is no cache).
        positions : array_like of int, shape (n,), optional
            The positions of the rows of ``x``; ``None``: those after the cached ones.
        cache : LatentCache, optional
            Stores this call's latents and RoPE keys and hands back the earlier ones.
        layer : int, default 0
            Which layer's entries of ``cache`` to use.
        absorbed : bool, default False
            ``False``: rebuild every head's keys and values from the latents (naive).
            ``True``: attend over the latents with ``W^UK`` and ``W^UV`` absorbed.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n, d_model)
        weights : numpy.ndarray, shape (batch, num_heads, n, n_k)
            The attention weights; ``n_k`` counts the cached positions and the new ones.

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not a real (batch, n, d_model) array, the positions are not
            non-negative integers of shape (n,), or ``cache`` is not a ``LatentCache``.
        """
        x = _checks.features(x, "x", self.d_model, ndim=3)
        if cache is not None and not isinstance(cache, LatentCache):
            raise TypeError(f"cache must be a LatentCache; got {type(cache).__name__}")
        start = 0 if cache is None else cache.length
        if positions is None:
            positions = start + np.arange(x.shape[1])
        positions = _checks.int_array(positions, "positions", ndim=1, low=0)
        latent, rope_key = self.latents(x, positions)
        key_positions = positions
        if cache is not None:
            key_positions = cache.positions(new=len(positions))
            latent, rope_key = cache.update(layer, latent, rope_key)
        mask = visible_keys(positions, key_positions)
        q_c, q_r = self.queries(x, positions)
        attend = self._absorbed if _checks.boolean(absorbed, "absorbed") else self._naive
        heads, weights = attend(q_c, q_r, latent, rope_key, mask)
        return merge_heads(heads) @ self.w_o, weights

    def attend(self, x, positions, mask=None, *, cache: LatentCache | None = None,
               layer: int = 0):
        """:meth:`__call__` (naive form) called as a decoder-only layer calls its attention.

        The signature of :meth:`GroupedQueryAttention.attend`, so that
        :class:`helpers.decoder_only.DecoderOnlyLayer` holds either layer. This layer makes
        its causal mask itself; ``mask`` is only checked to be that mask.

        Parameters
        ----------
        x : numpy.ndarray, shape (batch, n, d_model)
        positions : array_like of int, shape (n,)
            The positions of the rows of ``x`` (after the cached ones, with a cache).
        mask : array_like of bool, shape (n, n_k), optional
            ``None`` or :func:`helpers.attention.visible_keys` of ``positions`` and the keys
            they see, without a window.
        cache, layer
            As in :meth:`__call__`.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n, d_model)
        weights : numpy.ndarray, shape (batch, num_heads, n, n_k)

        Raises
        ------
        ValueError
            If ``mask`` is another mask (a sliding window, padding): not supported here.
        """
        positions = _checks.int_array(positions, "positions", ndim=1, low=0)
        if mask is not None:
            keys = positions if cache is None else cache.positions(new=len(positions))
            causal = visible_keys(positions, keys)
            mask = _checks.bool_array(mask, "mask", meaning="True = may attend")
            if mask.shape != causal.shape or not np.array_equal(mask, causal):
                raise ValueError("mask must be the causal mask of the positions (this layer "
                                 f"knows no window or padding); got a mask of shape "
                                 f"{mask.shape} that differs from it")
        return self(x, positions, cache=cache, layer=layer)

    def _naive(self, q_c, q_r, latent, rope_key, mask):
        """Equations (10), (11), (16)-(18) as they read: per-head keys and values first,
        then attention with as many key/value heads as query heads (multi-head)."""
        k_c = split_heads(latent @ self.w_uk, self.num_heads)   # (batch, heads, n_k, d_h)
        v_c = split_heads(latent @ self.w_uv, self.num_heads)   # (batch, heads, n_k, d_v)
        k_r = np.broadcast_to(rope_key[:, None], (*k_c.shape[:-1], self.rope_dim))
        q = np.concatenate([q_c, q_r], axis=-1)                 # (16)
        k = np.concatenate([k_c, k_r], axis=-1)                 # (17)
        return grouped_query_attention(q, k, v_c, mask)         # (18), / sqrt(d_h + d_h^R)

    def _absorbed(self, q_c, q_r, latent, rope_key, mask):
        """The same numbers without per-head keys and values: ``q^C . (W^UK c) = (q^C W^UK^T)
        . c`` and ``sum_j a_j (W^UV c_j) = W^UV (sum_j a_j c_j)``. What is left is
        multi-query attention: one key ``[c; k^R]`` and one value ``c`` for all heads."""
        w_uk = self.w_uk.reshape(self.latent_dim, self.num_heads, self.head_dim)
        w_uv = self.w_uv.reshape(self.latent_dim, self.num_heads, self.value_dim)
        q_latent = np.einsum("bhnd,chd->bhnc", q_c, w_uk)   # W^UK into the query
        query = np.concatenate([q_latent, q_r], axis=-1)    # (batch, heads, n, d_c + d_h^R)
        key = np.concatenate([latent, rope_key], axis=-1)   # (batch, n_k, d_c + d_h^R)
        heads_latent, weights = grouped_query_attention(    # one key/value head
            query, key[:, None], latent[:, None], mask,
            scale=1 / np.sqrt(self.head_dim + self.rope_dim))   # the scale of (18)
        return np.einsum("bhnc,chd->bhnd", heads_latent, w_uv), weights   # W^UV after


def _kind(value) -> str:
    return "None" if value is None else "an array"


def _scale(value, name: str, size: int):
    if value is None:
        return None
    value = _checks.float_array(value, name, ndim=1, axes=f"({size},)")
    if value.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},); got shape {value.shape}")
    return value


class LatentCache:
    """The KV cache of multi-head latent attention: per token and layer only ``c_KV`` and
    ``k^R``.

    Layer ``l`` holds ``latents(l)`` (batch, stored, latent_dim) and ``rope_keys(l)``
    (batch, stored, rope_dim); nothing per head.

    Parameters
    ----------
    num_layers : int
        At least 1.

    Attributes
    ----------
    length : int
        Positions seen so far.

    Raises
    ------
    TypeError, ValueError
        If ``num_layers`` is not a positive integer.

    Notes
    -----
    DeepSeek-AI (2024), section 2.1.2 ("during inference, MLA only needs to cache c_KV")
    and 2.1.3 (the RoPE key k^R is cached too). Taught in chapter 12.

    Examples
    --------
    >>> cache = LatentCache(num_layers=1)
    >>> _ = cache.update(0, np.zeros((1, 3, 8)), np.zeros((1, 3, 2)))
    >>> cache.length, cache.nbytes     # 3 tokens x (8 + 2) numbers x 8 bytes
    (3, 240)
    """

    def __init__(self, num_layers: int):
        self.num_layers = _checks.positive_int(num_layers, "num_layers")
        self._latents: list = [None] * self.num_layers
        self._rope_keys: list = [None] * self.num_layers

    @property
    def length(self) -> int:
        last = self._latents[-1]
        return 0 if last is None else last.shape[1]

    def positions(self, new: int = 0) -> np.ndarray:
        """The stored positions followed by ``new`` positions still to come."""
        return np.arange(self.length + _checks.integer(new, "new", low=0))

    def latents(self, layer: int) -> np.ndarray:
        """Stored latents of ``layer``: (batch, stored, latent_dim)."""
        return self._get(self._latents, layer)

    def rope_keys(self, layer: int) -> np.ndarray:
        """Stored RoPE keys of ``layer``: (batch, stored, rope_dim)."""
        return self._get(self._rope_keys, layer)

    def _get(self, store, layer):
        layer = _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)
        if store[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return store[layer]

    @property
    def nbytes(self) -> int:
        """Bytes held by all layers' arrays."""
        return int(sum(a.nbytes for a in (*self._latents, *self._rope_keys) if a is not None))

    def update(self, layer: int, latent, rope_key) -> tuple[np.ndarray, np.ndarray]:
        """Append the new positions' ``latent`` (batch, n, latent_dim) and ``rope_key``
        (batch, n, rope_dim) to ``layer``; return everything stored, oldest first.

        Raises
        ------
        ValueError
            If the arrays are not 3-D, disagree on (batch, n), or disagree with what the
            layer stored before.
        """
        layer = _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)
        latent = _checks.float_array(latent, "latent", ndim=3, axes="(batch, n, latent_dim)")
        rope_key = _checks.float_array(rope_key, "rope_key", ndim=3,
                                       axes="(batch, n, rope_dim)")
        if latent.shape[:2] != rope_key.shape[:2]:
            raise ValueError(f"latent {latent.shape} and rope_key {rope_key.shape} must agree "
                             "on (batch, n)")
        if self._latents[layer] is not None:
            old_latent, old_key = self._latents[layer], self._rope_keys[layer]
            if (old_latent.shape[0], old_latent.shape[2], old_key.shape[2]) != (
                    latent.shape[0], latent.shape[2], rope_key.shape[2]):
                raise ValueError(f"layer {layer} stores latents {old_latent.shape} and RoPE "
                                 f"keys {old_key.shape}; got {latent.shape}, {rope_key.shape}")
            latent = np.concatenate([old_latent, latent], axis=1)
            rope_key = np.concatenate([old_key, rope_key], axis=1)
        self._latents[layer], self._rope_keys[layer] = latent, rope_key
        return latent, rope_key
