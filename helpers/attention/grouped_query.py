"""Grouped-query attention in NumPy and its KV cache (chapters 9-11).

:class:`GroupedQueryAttention` has ``num_kv_heads`` key/value heads, each shared by a group of
query heads (1: multi-query attention; as many as query heads: multi-head attention), and does
causal self-attention with RoPE or ALiBi (:mod:`helpers.positions`). Its steps are those of
:class:`helpers.attention.MultiHeadAttention`. :class:`KVCache` keeps the keys and values of
earlier positions, ``2 x num_kv_heads x head_dim`` numbers per token and layer, in full or
in a ring buffer of a sliding window's length (chapter 10).

Imports only NumPy. Mask convention: ``True`` where a query may attend to a key.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .._initializers import glorot_uniform
from ..positions import _alibi, alibi_slopes, rotary_position_embedding
from .functions import grouped_query_attention
from .multi_head import _ProjectedAttention, keras_attention_weights

__all__ = ["GroupedQueryAttention", "KVCache"]


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
        heads_out, weights = self._mix(query, keys, values, mask, None)
        return self._project_out(heads_out, x), weights

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
        heads_out, weights = self._mix(query, keys, values, mask, bias)
        return self._project_out(heads_out, x), weights

    def kernels_and_biases(self) -> dict[str, np.ndarray | None]:
        """The constructor's weight arguments by name (``query_kernel``, ..., ``output_bias``),
        the arrays themselves (not copies); a bias the layer lacks is ``None``."""
        return {f"{name}_{kind}": getattr(self, f"{name}_{kind}") for kind in ("kernel", "bias")
                for name in ("query", "key", "value", "output")}

    # The two steps the variants of chapter 16 change (helpers.attention.sink_logit, .gated).
    def _mix(self, query, keys, values, mask, bias):
        """(heads_out, weights) of the projected heads: grouped-query attention."""
        return grouped_query_attention(query, keys, values, mask, bias=bias)

    def _project_out(self, heads_out, x):
        """(batch, num_query_heads, n, head_dim) -> (batch, n, d_model); ``x`` is the layer's
        input (a gate may read it)."""
        return self._output(heads_out)


def _keras_variant_weights(layer, variant: str) -> dict[str, np.ndarray]:
    """:func:`keras_attention_weights` of a built ``PositionalSelfAttention`` of ``variant``
    (chapter 16), else ValueError."""
    _checks.built(layer, "PositionalSelfAttention")
    if getattr(layer, "variant", None) != variant:
        raise ValueError(f"layer must be a PositionalSelfAttention with variant={variant!r}; "
                         f"got {getattr(layer, 'variant', None)!r}")
    return keras_attention_weights(layer)


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
    sinks : int, default 0
        With ``max_entries``: positions ``0 .. sinks-1`` get slots of their own that are
        never overwritten, and the ring of ``w`` slots after them holds the most recent
        positions from ``sinks`` on (position ``p >= sinks`` in slot
        ``sinks + (p - sinks) % w``). Enough for a model whose queries see a window of at
        most ``w`` positions and the first ``sinks`` (the mask
        ``helpers.attention.visible_keys(..., window=w, sinks=sinks)``).

    Attributes
    ----------
    length : int
        Positions seen so far (0 for a new cache).

    Raises
    ------
    TypeError
        If ``num_layers``, ``max_entries`` or ``sinks`` is not an integer.
    ValueError
        If ``num_layers`` or ``max_entries`` is below 1, ``sinks`` is negative, or
        ``sinks`` comes without ``max_entries``.

    Notes
    -----
    Caching keys and values in incremental decoding: Pope et al. (2022), "Efficiently
    Scaling Transformer Inference", section 2. The ring buffer of a sliding-window model:
    Jiang et al. (2023), "Mistral 7B", section 2 ("rolling buffer cache"). Taught in
    chapters 9 and 10.

    The pinned sinks: Xiao et al. (2024), "Efficient Streaming Language Models with
    Attention Sinks" (StreamingLLM), section 3.2 ("rolling KV cache with attention
    sinks"); taught in chapter 16. The entries keep their *original* positions
    (:meth:`positions`): a RoPE layer rotates each key by its position in the text before
    caching it, so decoding through this cache equals attention over the whole text with
    the mask ``visible_keys(..., window=w, sinks=s)`` exactly (chapter 15's model,
    ``DecoderOnlyTransformer.with_window(w, sinks=s)``). StreamingLLM instead stores the
    keys unrotated and, at every step, rotates them by their index *in the cache*
    (``streaming_llm/pos_shift/modify_llama.py``: ``key_position_ids =
    torch.arange(kv_seq_len)``), so that the distances a query sees never exceed the
    cache's size; that changes the numbers and equals no mask over the text. Its
    ``StartRecentKVCache(start_size, recent_size)`` is ``sinks=start_size`` and
    ``max_entries=recent_size + 1`` here (this ring also holds the position being added).

    Examples
    --------
    >>> cache = KVCache(num_layers=1, max_entries=3)
    >>> for p in range(5):
    ...     entry = np.full((1, 1, 1, 2), float(p))   # (batch, num_kv_heads, n, head_dim)
    ...     _ = cache.update(0, entry, entry)
    >>> cache.keys(0)[0, 0, :, 0], cache.positions()  # the last three, oldest first
    (array([2., 3., 4.]), array([2, 3, 4]))
    >>> pinned = KVCache(num_layers=1, max_entries=3, sinks=1)
    >>> for p in range(6):
    ...     _ = pinned.update(0, np.full((1, 1, 1, 2), float(p)), np.ones((1, 1, 1, 2)))
    >>> pinned.positions()                            # position 0, then the last three
    array([0, 3, 4, 5])
    """

    def __init__(self, num_layers: int, *, max_entries: int | None = None, sinks: int = 0):
        self.num_layers = _checks.positive_int(num_layers, "num_layers")
        self.max_entries = (None if max_entries is None
                            else _checks.positive_int(max_entries, "max_entries"))
        self.sinks = _checks.integer(sinks, "sinks", low=0)
        if self.sinks and self.max_entries is None:
            raise ValueError(f"sinks={self.sinks} needs max_entries (a ring buffer): a cache "
                             "without one keeps every position anyway")
        self._keys: list = [None] * self.num_layers
        self._values: list = [None] * self.num_layers
        self._seen = [0] * self.num_layers

    @property
    def length(self) -> int:
        return self._seen[-1]

    def _layer(self, layer) -> int:
        return _checks.integer(layer, "layer", low=0, high=self.num_layers - 1)

    def _kept(self, seen: int) -> np.ndarray:
        """The positions held once ``seen`` positions have come, oldest first."""
        if self.max_entries is None:
            return np.arange(seen)
        sinks = min(self.sinks, seen)
        return np.concatenate([np.arange(sinks),
                               np.arange(max(sinks, seen - self.max_entries), seen)])

    def _slots(self, positions: np.ndarray) -> np.ndarray:
        """Where each position is written: sinks first, then the ring."""
        if self.max_entries is None:
            return positions
        ring = self.sinks + (positions - self.sinks) % self.max_entries
        return np.where(positions < self.sinks, positions, ring)

    def keys(self, layer: int) -> np.ndarray:
        """Stored keys of ``layer``, oldest first: (batch, num_kv_heads, stored, head_dim)."""
        layer = self._layer(layer)
        if self._keys[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return self._keys[layer][..., self._slots(self._kept(self._seen[layer])), :]

    def values(self, layer: int) -> np.ndarray:
        """Stored values of ``layer``, oldest first: (batch, num_kv_heads, stored,
        value_dim)."""
        layer = self._layer(layer)
        if self._values[layer] is None:
            raise ValueError(f"layer {layer} of the cache is empty")
        return self._values[layer][..., self._slots(self._kept(self._seen[layer])), :]

    def positions(self, new: int = 0) -> np.ndarray:
        """Positions of the stored entries (oldest first), followed by ``new`` positions
        still to come: the key positions a call with ``new`` tokens attends to."""
        seen = self.length
        return np.concatenate([self._kept(seen),
                               np.arange(seen, seen + _checks.integer(new, "new", low=0))])

    @property
    def nbytes(self) -> int:
        """Bytes held by all layers' key and value arrays (with ``max_entries``, ``sinks +
        max_entries`` slots per layer from the first update on: constant)."""
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
        new_keys, new_values = keys, values
        if self._keys[layer] is not None:
            keys = np.concatenate([self.keys(layer), keys], axis=-2)
            values = np.concatenate([self.values(layer), values], axis=-2)
        self._store(layer, keys, values, new_keys, new_values)
        return keys, values

    def _store(self, layer: int, keys, values, new_keys, new_values) -> None:
        """Keep the new positions' entries for ``layer``: all of ``keys``/``values`` (every
        stored position plus the new ones) without a ring, else the new ones in their slots."""
        first = self._seen[layer]
        self._seen[layer] += new_keys.shape[-2]
        if self.max_entries is None:
            self._keys[layer], self._values[layer] = keys, values
            return
        positions = np.arange(first, self._seen[layer])
        # only positions that stay
        keep = np.isin(positions, self._kept(self._seen[layer]))
        slots = self._slots(positions[keep])
        for store, arr in ((self._keys, new_keys), (self._values, new_values)):
            if store[layer] is None:
                size = self.sinks + self.max_entries
                store[layer] = np.zeros((*arr.shape[:2], size, arr.shape[3]), arr.dtype)
            store[layer][..., slots, :] = arr[..., keep, :]
