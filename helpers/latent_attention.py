"""Multi-head latent attention (MLA) examined in NumPy: absorption, RoPE, cache and FLOPs.

The layer itself, :class:`~helpers.attention.MultiHeadLatentAttention`, and its
:class:`~helpers.attention.LatentCache` live with the other attention layers in
:mod:`helpers.attention` (re-exported here). DeepSeek-V2's attention (DeepSeek-AI
2024, section 2.1, equations 9-19): every token is compressed to a latent ``c_KV`` of
``latent_dim`` (d_c) numbers; the keys and values of all heads are up-projections of it. A
second, small key ``k^R`` of ``rope_dim`` (d_h^R) numbers, shared by all heads, carries the
rotary position embedding. A KV cache therefore holds ``d_c + d_h^R`` numbers per token and
layer, whatever the number of heads.

The same layer is computed in two ways that give the same numbers (tested to 1e-10 in
float64):

* naive: rebuild every head's keys and values from the cached latents (equations 10, 11,
  16-18), as the equations read;
* absorbed: fold ``W^UK`` into the query side and ``W^UV`` into the output side, and attend
  over the latents directly, as the released inference code does (``attn_impl="absorb"``).

Here: :func:`coupled_rope_scores` (why RoPE must be decoupled for absorption), the cache,
FLOPs and arithmetic-intensity accounting of published configurations
(:class:`AttentionConfig`, :data:`PUBLISHED`, :func:`cache_read_intensity`, measured against
an accelerator's ratio, :data:`H100_SXM`) and :func:`absorbed_decoder`, a trained
decoder-only model whose latent attention computes the absorbed form; grouped-query
attention rewritten exactly as MLA is
:meth:`MultiHeadLatentAttention.from_grouped_query_attention`. Taught in chapter 12; the
Keras twin is :mod:`helpers.keras_latent_attention`.

Weights are (d_in, d_out) arrays named after the paper: ``x @ w_dkv`` is the paper's
``W^DKV h_t``. Imports only NumPy. Axis names: ``batch``; ``n`` (positions computed in this
call; ``n_k`` the keys they see); ``d_model``; ``num_heads``; ``head_dim`` (d_h);
``value_dim`` (d_h as well in DeepSeek-V2); ``latent_dim`` (d_c); ``query_latent_dim``
(d_c'); ``rope_dim`` (d_h^R).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from . import _checks
from .attention import LatentCache, MultiHeadLatentAttention, split_heads
from .decoder_only import DecoderOnlyTransformer
from .positions import rotary_position_embedding

__all__ = ["MultiHeadLatentAttention", "LatentCache", "coupled_rope_scores", "AttentionConfig",
           "PUBLISHED", "cache_elements_per_token", "gqa_groups_of_same_cache",
           "attention_flops_per_token", "cache_read_intensity", "Accelerator", "H100_SXM",
           "absorbed_decoder"]

def coupled_rope_scores(layer: MultiHeadLatentAttention, x, *, rope: bool,
                        absorbed: bool) -> np.ndarray:
    """Scores of the design the paper rejects: RoPE on the up-projected keys ``k^C`` themselves.

    Only ``q^C`` and ``k^C`` are used (the decoupled part is left out). With ``rope=True``
    the query of position ``i`` and the key of position ``j`` are rotated, ``R_i q^C`` and
    ``R_j W^UK c_j``. The naive form rotates both. The absorbed form can only fold a fixed
    matrix: it turns the query with ``R_i``, multiplies by ``W^UK^T`` and meets the cached
    latent ``c_j`` -- the key's rotation ``R_j`` would have to sit between ``W^UK`` and
    ``c_j``, so it is lost. Without RoPE the two forms agree; with it they do not.

    Parameters
    ----------
    layer : MultiHeadLatentAttention
    x : array_like, shape (batch, n, d_model)
    rope : bool
        Rotate queries and keys by their positions 0 .. n-1.
    absorbed : bool
        Compute through the latents with ``W^UK`` absorbed into the query.

    Returns
    -------
    numpy.ndarray, shape (batch, num_heads, n, n)
        ``q_i . k_j`` before scaling and masking.

    Raises
    ------
    TypeError, ValueError
        If ``layer`` is not a ``MultiHeadLatentAttention`` or ``x`` is not a real
        (batch, n, d_model) array, or ``rope`` with an odd ``head_dim``.

    Notes
    -----
    DeepSeek-AI (2024), section 2.1.3: with RoPE on ``k^C``, a rotation that depends on
    the position sits between the query's projection and ``W^UK``, and matrix products do
    not commute, so ``W^UK`` cannot be absorbed. Taught in chapter 12.
    """
    if not isinstance(layer, MultiHeadLatentAttention):
        raise TypeError(f"layer must be a MultiHeadLatentAttention; got {type(layer).__name__}")
    x = _checks.float_array(x, "x", ndim=3, axes="(batch, n, d_model)")
    positions = np.arange(x.shape[1])
    q_c, _ = layer.queries(x, positions)
    latent, _ = layer.latents(x, positions)
    turn = rotary_position_embedding if _checks.boolean(rope, "rope") else (lambda a, p: a)
    q_c = turn(q_c, positions)
    if _checks.boolean(absorbed, "absorbed"):
        w_uk = layer.w_uk.reshape(layer.latent_dim, layer.num_heads, layer.head_dim)
        q_latent = np.einsum("bhnd,chd->bhnc", q_c, w_uk)
        return q_latent @ np.swapaxes(latent[:, None], -1, -2)
    k_c = turn(split_heads(latent @ layer.w_uk, layer.num_heads), positions)
    return q_c @ np.swapaxes(k_c, -1, -2)


# --- cache and compute of published configurations ----------------------------------------------

@dataclass(frozen=True)
class AttentionConfig:
    """The attention sizes of a model, enough to count its cache and FLOPs per token.

    Parameters
    ----------
    name : str
    num_layers, d_model, num_heads, head_dim : int
        ``head_dim`` is d_h (the query/key size per head without the RoPE part).
    num_kv_heads : int, optional
        Multi-head or grouped-query attention: the key/value heads. ``None`` for MLA.
    latent_dim, query_latent_dim, rope_dim : int, optional
        MLA: d_c, d_c' (``None``: queries are not compressed) and d_h^R.
    source : str
        Where the numbers come from.

    Notes
    -----
    The sizes of DeepSeek-AI (2024), Table 1 (n_h, d_h, d_c, d_h^R, l) and the released
    configuration files. Taught in chapter 12.

    Examples
    --------
    >>> AttentionConfig("toy", num_layers=2, d_model=8, num_heads=4, head_dim=2,
    ...                 num_kv_heads=2).kind
    'GQA'
    """

    name: str
    num_layers: int
    d_model: int
    num_heads: int
    head_dim: int
    num_kv_heads: int | None = None
    latent_dim: int | None = None
    query_latent_dim: int | None = None
    rope_dim: int = 0
    source: str = ""

    @property
    def kind(self) -> str:
        """``"MLA"``, ``"MHA"``, ``"MQA"`` or ``"GQA"``."""
        if self.latent_dim is not None:
            return "MLA"
        return {self.num_heads: "MHA", 1: "MQA"}.get(self.num_kv_heads, "GQA")


_V3_REPO = "DeepSeek-V3 repository, inference/configs/"
PUBLISHED = {
    "DeepSeek-V2": AttentionConfig(
        "DeepSeek-V2", num_layers=60, d_model=5120, num_heads=128, head_dim=128,
        latent_dim=512, query_latent_dim=1536, rope_dim=64,
        source=_V3_REPO + "config_236B.json; DeepSeek-V2 report"),
    "DeepSeek-V3": AttentionConfig(
        "DeepSeek-V3", num_layers=61, d_model=7168, num_heads=128, head_dim=128,
        latent_dim=512, query_latent_dim=1536, rope_dim=64,
        source=_V3_REPO + "config_671B.json; DeepSeek-V3 report"),
    "Llama 3 70B": AttentionConfig(
        "Llama 3 70B", num_layers=80, d_model=8192, num_heads=64, head_dim=128,
        num_kv_heads=8, source="meta-llama/llama-models, models/sku_list.py "
                               "(dim 8192, n_layers 80, n_heads 64, n_kv_heads 8)"),
    "Llama 2 7B": AttentionConfig(
        "Llama 2 7B", num_layers=32, d_model=4096, num_heads=32, head_dim=128,
        num_kv_heads=32, source="Llama 2 report (Touvron et al. 2023), Table 1: grouped-query "
                                "attention only from 34B on; 32 layers of 32 heads (chapter 10)"),
    "MHA (DeepSeek-V2 sizes)": AttentionConfig(
        "MHA (DeepSeek-V2 sizes)", num_layers=60, d_model=5120, num_heads=128, head_dim=128,
        num_kv_heads=128, source="DeepSeek-V2 report, Table 1 (MHA with V2's n_h, d_h, l)"),
}
"""Published attention configurations, each with its source (checked in chapter 12)."""


def cache_elements_per_token(config: AttentionConfig, *, per_layer: bool = False) -> int:
    """Numbers a KV cache holds per token: MLA ``(d_c + d_h^R) l``, MHA/GQA ``2 n_g d_h l``.

    Parameters
    ----------
    config : AttentionConfig
    per_layer : bool, default False
        Leave out the factor ``l`` (``num_layers``).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``config`` is not an ``AttentionConfig``.

    Notes
    -----
    DeepSeek-AI (2024), Table 1. Taught in chapter 12.

    Examples
    --------
    >>> cache_elements_per_token(PUBLISHED["DeepSeek-V2"], per_layer=True)
    576
    """
    config = _config(config)
    if config.kind == "MLA":
        per = config.latent_dim + config.rope_dim
    else:
        per = 2 * config.num_kv_heads * config.head_dim
    return per if _checks.boolean(per_layer, "per_layer") else per * config.num_layers


def gqa_groups_of_same_cache(config: AttentionConfig) -> float:
    """How many key/value groups a GQA layer of the same ``head_dim`` needs to cache as much
    as ``config`` per token: ``(d_c + d_h^R) / (2 d_h)`` for MLA.

    Parameters
    ----------
    config : AttentionConfig

    Returns
    -------
    float
        For MHA and GQA configurations, their own ``num_kv_heads``.

    Raises
    ------
    TypeError
        If ``config`` is not an ``AttentionConfig``.

    Notes
    -----
    DeepSeek-AI (2024), Table 1: MLA's cache equals GQA's with 2.25 groups. Chapter 12.

    Examples
    --------
    >>> gqa_groups_of_same_cache(PUBLISHED["DeepSeek-V2"])   # the paper's 2.25 groups
    2.25
    """
    config = _config(config)
    return cache_elements_per_token(config, per_layer=True) / (2 * config.head_dim)


def _config(config) -> AttentionConfig:
    if not isinstance(config, AttentionConfig):
        raise TypeError(f"config must be an AttentionConfig; got {type(config).__name__}")
    return config


def attention_flops_per_token(config: AttentionConfig, context: int, *, phase: str,
                              absorbed: bool = False) -> int:
    """Floating-point operations of one token's attention in every layer (2 per multiply-add).

    ``phase="decode"``: one new token whose query meets ``context`` keys (itself included),
    the others read from the cache. ``phase="prefill"``: ``context`` tokens at once, with
    the causal mask (token ``t`` meets ``t`` keys); the FLOPs divided by ``context``.

    Counted: the projections (``W^DQ``, ``W^UQ``, ``W^QR``, ``W^DKV``, ``W^KR``, ``W^O``,
    or ``W^Q``, ``W^K``, ``W^V``, ``W^O``), the scores, the weighted sums and, for MLA, the
    up-projections ``W^UK``/``W^UV``. Naive MLA rebuilds the keys and values of every key it
    meets from the latents (in decoding, all ``context`` of them at every step, since the
    cache holds only latents); absorbed MLA multiplies each query by ``W^UK`` and each
    output by ``W^UV`` once, but its scores and sums run over ``d_c`` numbers instead of
    ``d_h``. Softmax, RMSNorm and RoPE are left out (a few operations per number).

    Parameters
    ----------
    config : AttentionConfig
    context : int
        Keys met (decode) or tokens processed (prefill), at least 1.
    phase : {"decode", "prefill"}
    absorbed : bool, default False
        MLA only: the absorbed form.

    Returns
    -------
    float
        FLOPs per token (an integer for decode; a mean for prefill).

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not an ``AttentionConfig``, ``context`` not a positive integer,
        ``phase`` unknown, or ``absorbed=True`` for a model without MLA.

    Notes
    -----
    Taught in chapter 12, which compares the forms for DeepSeek-V2.

    Examples
    --------
    >>> v2 = PUBLISHED["DeepSeek-V2"]
    >>> naive = attention_flops_per_token(v2, 4096, phase="decode")
    >>> absorbed = attention_flops_per_token(v2, 4096, phase="decode", absorbed=True)
    >>> round(naive / absorbed, 1)
    95.9
    """
    c = _config(config)
    n = _checks.positive_int(context, "context")
    phase = _checks.one_of(phase, "phase", ("decode", "prefill"))
    absorbed = _checks.boolean(absorbed, "absorbed")
    if absorbed and c.kind != "MLA":
        raise ValueError(f"absorbed=True needs an MLA config; {c.name} is {c.kind}")
    h, d, d_h, d_r = c.num_heads, c.d_model, c.head_dim, c.rope_dim
    keys_met = n if phase == "decode" else (n + 1) / 2  # mean over the causal rows
    if c.kind != "MLA":
        projections = 2 * d * (h + 2 * c.num_kv_heads) * d_h + 2 * h * d_h * d
        return c.num_layers * (projections + keys_met * 2 * h * (d_h + d_h))
    d_c = c.latent_dim
    query = (2 * d * h * (d_h + d_r) if c.query_latent_dim is None
             else 2 * d * c.query_latent_dim
             + 2 * c.query_latent_dim * h * (d_h + d_r))
    projections = query + 2 * d * (d_c + d_r) + 2 * h * d_h * d
    if absorbed:
        per_token = 2 * h * d_h * d_c * 2               # W^UK on q, W^UV on o
    else:
        rebuilt = n if phase == "decode" else 1         # keys rebuilt per token
        per_token = rebuilt * _rebuild_flops(c)         # W^UK and W^UV
    return c.num_layers * (projections + per_token
                           + keys_met * _per_key_flops(c, absorbed))


def _per_key_flops(c: AttentionConfig, absorbed: bool) -> int:
    """One key's score and its share of the weighted sum, for every head of one layer."""
    h, d_h, d_r = c.num_heads, c.head_dim, c.rope_dim
    if c.kind != "MLA":
        return 2 * h * d_h + 2 * h * d_h
    if absorbed:                                        # over the cached numbers
        return 2 * h * (c.latent_dim + d_r) + 2 * h * c.latent_dim
    return 2 * h * (d_h + d_r) + 2 * h * d_h            # over rebuilt keys, values


def _rebuild_flops(c: AttentionConfig) -> int:
    """Naive MLA: one latent made into every head's key and value (W^UK and W^UV)."""
    return 2 * c.latent_dim * c.num_heads * (c.head_dim + c.head_dim)


def cache_read_intensity(config: AttentionConfig, *, absorbed: bool = False,
                         bytes_per_number: float = 2) -> float:
    """Arithmetic intensity of decoding's attention over the cache: FLOPs per byte read.

    One new token (one query per head) meets the cached keys. Every key costs its scores
    and its share of the weighted sums (and, for naive MLA, rebuilding its keys and values
    from the latent, since the cache holds only latents), and the cache hands over
    ``cache_elements_per_token(config, per_layer=True) * bytes_per_number`` bytes for it.
    Both grow with the context alike, so the ratio does not depend on it; nor on the batch,
    as every sequence reads its own cache. The projections, which read the weights rather
    than the cache, are left out.

    MHA and GQA: ``n_h / n_g`` (query heads per key/value head) at 2 bytes a number, as
    each cached number is read for one multiply-add per query head of its group. Absorbed
    MLA: ``n_h (2 d_c + d_h^R) / (d_c + d_h^R)``, as every head reads the whole cached entry
    for its scores and the latent part once more for its weighted sum.

    Parameters
    ----------
    config : AttentionConfig
    absorbed : bool, default False
        MLA only: the absorbed form (``False``: naive, keys and values rebuilt).
    bytes_per_number : float, default 2
        Bytes of one cached number (2 for BF16, 1 for FP8).

    Returns
    -------
    float
        FLOPs per byte of cache read (2 FLOPs per multiply-add).

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not an ``AttentionConfig``, ``bytes_per_number`` not a positive
        number, or ``absorbed=True`` for a model without MLA.

    Notes
    -----
    The ratio of Williams et al. (2009)'s roofline model, as Pope et al. (2022) use it for
    decoding; for MLA the analysis of FlashMLA's decoding kernel (Li and Liu 2025), whose
    ratio is ``h_q (d_k + d_v) / d_k`` with ``d_k = 576``, ``d_v = 512``. Chapter 12.

    Examples
    --------
    >>> round(cache_read_intensity(PUBLISHED["DeepSeek-V2"], absorbed=True), 1)
    241.8
    >>> cache_read_intensity(PUBLISHED["Llama 3 70B"])   # 64 query heads / 8 KV heads
    8.0
    """
    c = _config(config)
    absorbed = _checks.boolean(absorbed, "absorbed")
    if absorbed and c.kind != "MLA":
        raise ValueError(f"absorbed=True needs an MLA config; {c.name} is {c.kind}")
    size = _checks.real(bytes_per_number, "bytes_per_number", low=0, low_open=True)
    flops = _per_key_flops(c, absorbed)
    if c.kind == "MLA" and not absorbed:
        flops += _rebuild_flops(c)                              # rebuilt at every step
    return flops / (cache_elements_per_token(c, per_layer=True) * size)


@dataclass(frozen=True)
class Accelerator:
    """An accelerator's peak compute and memory bandwidth, as its vendor states them.

    Parameters
    ----------
    name : str
    flops_per_second : float
        Peak dense (no sparsity) matrix FLOPs per second in the number format named by
        ``source``.
    bytes_per_second : float
        Peak memory bandwidth.
    source : str

    Notes
    -----
    :attr:`flops_per_byte` is the ridge point of the roofline model (Williams et al. 2009):
    work of lower arithmetic intensity waits for memory, work of higher intensity for
    compute. Chapter 12.
    """

    name: str
    flops_per_second: float
    bytes_per_second: float
    source: str = ""

    @property
    def flops_per_byte(self) -> float:
        """Peak FLOPs per second / peak bytes per second."""
        return self.flops_per_second / self.bytes_per_second


H100_SXM = Accelerator(
    "NVIDIA H100 SXM", flops_per_second=1979e12 / 2, bytes_per_second=3.35e12,
    source="NVIDIA H100 Tensor Core GPU datasheet: BF16 Tensor Core 1,979 teraFLOPS shown "
           "with sparsity (one half without), GPU memory bandwidth 3.35 TB/s")
"""The H100 in its SXM form, dense BF16 (checked in chapter 12)."""


class _AbsorbedLatentAttention(MultiHeadLatentAttention):
    """A :class:`MultiHeadLatentAttention` whose calls take the absorbed form unless told."""

    def __call__(self, x, positions=None, *, cache=None, layer=0, absorbed=True):
        return super().__call__(x, positions, cache=cache, layer=layer, absorbed=absorbed)


def absorbed_decoder(model: DecoderOnlyTransformer) -> DecoderOnlyTransformer:
    """The same decoder-only model whose latent attention computes the absorbed form.

    The weights are shared, not copied: every layer's
    :class:`~helpers.attention.MultiHeadLatentAttention` is replaced by one that
    reads the same arrays and attends over the latents with ``W^UK`` and ``W^UV``
    absorbed (``absorbed=True``), as released inference code decodes. The model, its
    cache and :func:`helpers.decoder_only.greedy_generate` are used as before.

    Parameters
    ----------
    model : helpers.decoder_only.DecoderOnlyTransformer
        With multi-head latent attention in every layer.

    Returns
    -------
    helpers.decoder_only.DecoderOnlyTransformer

    Raises
    ------
    TypeError
        If ``model`` is not a ``DecoderOnlyTransformer``.
    ValueError
        If a layer uses grouped-query attention (nothing to absorb).

    Notes
    -----
    DeepSeek-AI (2024), section 2.1.2; chapter 12 generates with both forms of its trained
    model and compares the tokens.

    Examples
    --------
    >>> model = DecoderOnlyTransformer.random(
    ...     12, d_model=8, num_query_heads=2, num_kv_heads=2, d_ff=16, num_layers=2,
    ...     max_length=10, rng=np.random.default_rng(0), dtype=np.float64,
    ...     latent={"latent_dim": 6, "query_latent_dim": 4, "rope_dim": 2})
    >>> ids = np.array([[3, 4, 5, 6]])
    >>> bool(np.allclose(absorbed_decoder(model)(ids), model(ids), rtol=0, atol=1e-12))
    True
    """
    if not isinstance(model, DecoderOnlyTransformer):
        raise TypeError(f"model must be a DecoderOnlyTransformer; got {type(model).__name__}")
    if not all(isinstance(x.self_attention, MultiHeadLatentAttention) for x in model.layers):
        raise ValueError("model must use multi-head latent attention in every layer; got "
                         f"{[type(x.self_attention).__name__ for x in model.layers]}")
    absorbed = copy.copy(model)
    absorbed.layers = []
    for layer in model.layers:
        layer = copy.copy(layer)
        attention = object.__new__(_AbsorbedLatentAttention)
        attention.__dict__.update(vars(layer.self_attention))    # the same arrays
        layer.self_attention = attention
        absorbed.layers.append(layer)
    return absorbed
