"""Multi-head latent attention (DeepSeek-V2) in NumPy and its cache of latents (chapter 12).

:class:`MultiHeadLatentAttention` rebuilds every head's keys and values from one small latent
(naive form: as many key/value heads as query heads) or attends to the latents directly
(absorbed form: one key/value head for all), with the functions of
:mod:`helpers.attention.functions`. :class:`LatentCache` keeps ``latent_dim + rope_dim``
numbers per token and layer, whatever the number of heads. Grouped-query attention without
RoPE is a special case (:meth:`MultiHeadLatentAttention.from_grouped_query_attention`). What
chapter 12 examines with it (published configurations, FLOPs, coupled RoPE) is in
:mod:`helpers.latent_attention`.

Imports only NumPy. Mask convention: ``True`` where a query may attend to a key.
"""

from __future__ import annotations

import numpy as np

from .. import _checks
from .._initializers import glorot_uniform
from ..normalization import rms_norm
from ..positions import rotary_position_embedding
from .functions import grouped_query_attention, merge_heads, split_heads, visible_keys
from .grouped_query import GroupedQueryAttention

__all__ = ["MultiHeadLatentAttention", "LatentCache"]


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
                raise ValueError(f"layer's {name} must be None or zero "
                                 "(MLA has no biases)")
        d, h, g, d_h = (layer.d_model, layer.num_query_heads, layer.num_kv_heads,
                        layer.head_dim)
        w_dkv = np.concatenate([layer.key_kernel.reshape(d, g * d_h),
                                layer.value_kernel.reshape(d, g * d_h)], axis=1)
        group_of_head = np.arange(h) // (h // g)
        pick = np.zeros((g * d_h, h * d_h), layer.key_kernel.dtype)  # head i <- its group
        for head, group in enumerate(group_of_head):
            pick[group * d_h:(group + 1) * d_h, head * d_h:(head + 1) * d_h] = np.eye(d_h)
        zeros = np.zeros_like(pick)
        return cls(np.eye(d, dtype=w_dkv.dtype), None,
                   layer.query_kernel.reshape(d, h * d_h),
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
        return grouped_query_attention(q, k, v_c, mask)         # (18), /sqrt(d_h + d_h^R)

    def _absorbed(self, q_c, q_r, latent, rope_key, mask):
        """The same numbers without per-head keys and values: ``q^C . (W^UK c) = (q^C W^UK^T)
        . c`` and ``sum_j a_j (W^UV c_j) = W^UV (sum_j a_j c_j)``. What is left is
        multi-query attention: one key ``[c; k^R]`` and one value ``c`` for all heads."""
        w_uk = self.w_uk.reshape(self.latent_dim, self.num_heads, self.head_dim)
        w_uv = self.w_uv.reshape(self.latent_dim, self.num_heads, self.value_dim)
        q_latent = np.einsum("bhnd,chd->bhnc", q_c, w_uk)   # W^UK into the query
        query = np.concatenate([q_latent, q_r], axis=-1)    # (batch, heads, n, d_c+d_h^R)
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
