"""A decoder-only Transformer in NumPy: grouped-query self-attention, the KV cache, generation.

The model of today's language models, built from the pieces of chapter 8: token embedding
times sqrt(d_model) plus the sinusoidal positional encoding, ``num_layers`` pre-LN layers of
causal self-attention and feed-forward network, a final layer norm and a linear map to one
logit per vocabulary entry. Its attention is grouped-query attention
(:class:`~helpers.attention.GroupedQueryAttention`, whose :class:`KVCache` lives with
it in :mod:`helpers.attention.grouped_query`; both are re-exported here): ``num_kv_heads`` equal to
``num_query_heads`` is multi-head attention, 1 is multi-query attention. With ``window`` set,
every layer uses sliding-window attention. Multi-head latent attention
(:class:`~helpers.attention.MultiHeadLatentAttention`, chapter 12) can take its
place in every layer; the model then caches only latents (a :class:`LatentCache`).

``position`` says how the model knows where each token is: ``"sinusoidal"`` (the default,
added to the embeddings), ``"rope"`` (queries and keys rotated in every layer,
:func:`helpers.transformer.rotary_position_embedding`), ``"alibi"`` (a bias on every
layer's scores, :func:`helpers.transformer.alibi_bias`) or ``"none"`` (no position at all;
the causal mask is the only order). Taught in chapter 11. ``variant`` (chapter 16) gives
every layer gpt-oss's sink logit (:class:`~helpers.attention.SinkLogitAttention`) or
Qwen3-Next's output gate (:class:`~helpers.attention.GatedAttention`); a model with a window
and sinks streams through ``new_cache(ring=True)``, StreamingLLM's cache.

Generation is greedy and autoregressive: :func:`greedy_generate` either recomputes the whole
sequence at every step or keeps the keys and values of earlier positions in a
:class:`KVCache` and computes only the new position. Taught in chapters 9 (generation, the
KV cache) and 10 (grouped-query attention, sliding windows). The Keras twin is
:mod:`helpers.keras_decoder_only`; :meth:`DecoderOnlyTransformer.from_keras` copies its
weights, and the two give the same numbers.

Imports only NumPy. Axis names: ``batch``; ``n`` (positions computed in this call; ``n_k``
the keys they see); ``d_model``; ``num_query_heads``, ``num_kv_heads``, ``head_dim``
(``= d_model // num_query_heads``); ``vocab``.
"""

from __future__ import annotations

import copy

import numpy as np

from . import _checks
from ._initializers import glorot_uniform
from .attention import (
    GatedAttention,
    GroupedQueryAttention,
    KVCache,
    LatentCache,
    MultiHeadLatentAttention,
    SinkLogitAttention,
    visible_keys,
)
from .normalization import LayerNormalization, RMSNorm
from .positions import positional_encoding
from .transformer import FeedForward, SwiGLU, _TransformerLayer

__all__ = ["GroupedQueryAttention", "KVCache", "LatentCache", "MultiHeadLatentAttention",
           "DecoderOnlyLayer", "DecoderOnlyTransformer",
           "visible_keys", "greedy_generate"]

POSITIONS = ("sinusoidal", "rope", "alibi", "none")  # a model's ways of knowing positions
LATENT_SIZES = ("latent_dim", "query_latent_dim", "rope_dim")  # a latent layer's sizes
_IN_ATTENTION = {"sinusoidal": "none", "rope": "rope", "alibi": "alibi", "none": "none"}
# The attention of every layer (chapter 16): plain softmax, gpt-oss's sink logit, Qwen's gate.
_VARIANTS = {"softmax": GroupedQueryAttention, "sink_logit": SinkLogitAttention,
             "gated": GatedAttention}
VARIANTS = tuple(_VARIANTS)


class DecoderOnlyLayer(_TransformerLayer):
    """One pre-LN decoder-only layer: causal self-attention, then the feed-forward network.

    ::

        x = x + SelfAttention(LN1(x))
        x = x + FFN(LN2(x))

    There is no cross-attention: the sequence attends only to itself. Pre-LN, as in GPT-2
    and today's language models; the model adds the final layer norm.

    Parameters
    ----------
    self_attention : GroupedQueryAttention or MultiHeadLatentAttention
    feed_forward : helpers.transformer.FeedForward or helpers.transformer.SwiGLU
    self_attention_norm, feed_forward_norm : LayerNormalization or RMSNorm
        Llama's layer is this one with RMSNorm and SwiGLU (chapters 11 and 15).

    Raises
    ------
    TypeError
        If a sublayer is not of the class above.
    ValueError
        If the sublayers disagree on d_model.

    Notes
    -----
    Radford et al. (2019), section 2.3 (GPT-2's layer); Xiong et al. (2020) for pre-LN.
    Taught in chapter 9; the Keras twin is ``helpers.keras_decoder_only.DecoderOnlyLayer``.
    """

    _PARTS = (("self_attention", (GroupedQueryAttention, MultiHeadLatentAttention)),
              ("feed_forward", (FeedForward, SwiGLU)),
              ("self_attention_norm", (LayerNormalization, RMSNorm)),
              ("feed_forward_norm", (LayerNormalization, RMSNorm)))

    def __init__(self, self_attention, feed_forward, self_attention_norm, feed_forward_norm):
        super().__init__({"self_attention": self_attention, "feed_forward": feed_forward,
                          "self_attention_norm": self_attention_norm,
                          "feed_forward_norm": feed_forward_norm}, norm_first=True)

    @classmethod
    def from_keras(cls, layer) -> DecoderOnlyLayer:
        """Copy a built ``helpers.keras_decoder_only.DecoderOnlyLayer``."""
        _checks.built(layer, "DecoderOnlyLayer")
        attention = (MultiHeadLatentAttention if getattr(layer, "latent", None)
                     else _VARIANTS[getattr(layer, "variant", "softmax")])
        return cls(attention.from_keras(layer.self_attention),
                   FeedForward.from_keras(layer.ffn_1, layer.ffn_2),
                   LayerNormalization.from_keras(layer.self_attention_norm),
                   LayerNormalization.from_keras(layer.feed_forward_norm))

    def __call__(self, x, mask=None, *, cache: KVCache | LatentCache | None = None,
                 layer: int = 0, positions=None):
        """``(output, weights)`` of the new positions ``x`` (batch, n, d_model); ``mask``,
        ``cache`` and ``layer`` as in :meth:`GroupedQueryAttention.__call__`, ``positions``
        as in :meth:`GroupedQueryAttention.attend` (``None``: those after the cached ones)."""
        if positions is None:
            positions = np.arange(x.shape[-2]) + (0 if cache is None else cache.length)
        x, weights = self._residual(x, self.self_attention_norm,
                                    lambda h: self.self_attention.attend(
                                        h, positions, mask, cache=cache, layer=layer))
        return self._feed_forward_block(x), weights


class DecoderOnlyTransformer:
    """A decoder-only Transformer language model over token ids (NumPy, inference only).

    ids → embedding × sqrt(d_model) + PE → ``num_layers`` × :class:`DecoderOnlyLayer` →
    final layer norm → logits. Without the sinusoidal PE (``position`` other than
    ``"sinusoidal"``), the layers' attention places the tokens (RoPE, ALiBi) or nothing
    does. Llama's model (chapter 15) is this one with RMSNorm, SwiGLU and RoPE, no
    embedding scale, no output bias and the embedding as output kernel.

    Parameters
    ----------
    embedding : array_like, shape (vocab, d_model)
        One vector per token id.
    layers : sequence of DecoderOnlyLayer
        At least one, all of width d_model.
    final_norm : LayerNormalization or RMSNorm
    output_kernel : array_like, shape (d_model, vocab)
        May be ``embedding.T`` (tied embeddings; a view, no copy).
    output_bias : array_like, shape (vocab,), or None
    max_length : int or None
        Longest sequence (rows of the positional-encoding table). ``None`` (no limit) is
        allowed when ``position`` is not ``"sinusoidal"``: RoPE and ALiBi compute what they
        need for any position.
    window : int, optional
        Sliding-window attention in every layer: a position sees itself and the
        ``window - 1`` before it. ``None``: every earlier position.
    sinks : int, default 0
        With a window: the first ``sinks`` positions stay visible to every query
        (StreamingLLM's attention sinks, chapter 15).
    scale_embedding : bool, default True
        Multiply the embeddings by sqrt(d_model) (Vaswani et al. 2017); Llama does not.
    position : {"sinusoidal", "rope", "alibi", "none"}, default "sinusoidal"
        How the model knows positions (see the module docstring). The layers' grouped-query
        attention must agree: ``position="rope"`` for ``"rope"``, ``"alibi"`` for
        ``"alibi"``, ``"none"`` otherwise. Multi-head latent attention brings its own
        decoupled RoPE and goes with any of them, but not with a window.

    Raises
    ------
    TypeError, ValueError
        If a part has the wrong type or shape, the sizes disagree, or the layers'
        attention does not fit ``position``.

    Notes
    -----
    The GPT design (Radford et al. 2019) with the sinusoidal encoding and the embedding
    scale of Vaswani et al. (2017), sections 3.4-3.5, and grouped-query attention (Ainslie
    et al. 2023). Taught in chapters 9 and 10; the other positions (Su et al. 2021, Press
    et al. 2022) in chapter 11.

    Examples
    --------
    >>> model = DecoderOnlyTransformer.random(12, d_model=8, num_query_heads=2,
    ...                                       num_kv_heads=1, d_ff=16, num_layers=2,
    ...                                       max_length=10, rng=np.random.default_rng(0))
    >>> model(np.array([[3, 4, 5]])).shape      # logits (batch, n, vocab)
    (1, 3, 12)
    >>> model.kv_cache_bytes_per_token()         # 2 x 2 layers x 1 head x 4 x 4 bytes
    64
    >>> mla = DecoderOnlyTransformer.random(
    ...     12, d_model=8, num_query_heads=2, num_kv_heads=2, d_ff=16, num_layers=2,
    ...     max_length=10, rng=np.random.default_rng(0),
    ...     latent={"latent_dim": 6, "query_latent_dim": 4, "rope_dim": 2})
    >>> mla.kv_cache_bytes_per_token()           # 2 layers x (6 + 2) x 4 bytes
    64
    >>> type(mla.new_cache()).__name__
    'LatentCache'
    """

    def __init__(self, embedding, layers, final_norm, output_kernel, output_bias, *,
                 max_length: int | None, window: int | None = None,
                 position: str = "sinusoidal", sinks: int = 0,
                 scale_embedding: bool = True):
        self.embedding = _checks.float_array(embedding, "embedding", ndim=2,
                                             axes="(vocab, d_model)")
        vocab, d_model = self.embedding.shape
        self.layers = list(layers)
        if not self.layers or not all(isinstance(x, DecoderOnlyLayer) for x in self.layers):
            raise TypeError("layers must be a non-empty sequence of DecoderOnlyLayer; got "
                            f"{[type(x).__name__ for x in self.layers]}")
        if not isinstance(final_norm, (LayerNormalization, RMSNorm)):
            raise TypeError(f"final_norm must be a LayerNormalization or RMSNorm; got "
                            f"{type(final_norm).__name__}")
        widths = {layer.d_model for layer in self.layers} | {final_norm.d_model}
        if widths != {d_model}:
            raise ValueError(f"every part must have d_model={d_model} (embedding's axis 1); "
                             f"got {sorted(widths)}")
        self.final_norm = final_norm
        self.output_kernel = _checks.weight(output_kernel, "output_kernel", (d_model, vocab))
        self.output_bias = (None if output_bias is None
                            else _checks.weight(output_bias, "output_bias", (vocab,)))
        self.scale_embedding = _checks.boolean(scale_embedding, "scale_embedding")
        self.position = _checks.one_of(position, "position", POSITIONS)
        self._check_attention_positions()
        if max_length is None and self.position == "sinusoidal":
            raise ValueError("max_length must be an integer for position='sinusoidal' (rows "
                             "of the positional-encoding table); got None")
        self.max_length = (None if max_length is None
                           else _checks.positive_int(max_length, "max_length"))
        self.window = None if window is None else _checks.positive_int(window, "window")
        self.sinks = _checks.integer(sinks, "sinks", low=0)
        if self.sinks and self.window is None:
            raise ValueError(f"sinks={self.sinks} needs a window: without one every earlier "
                             "position is seen")
        if self.window is not None and self.uses_latent_attention:
            raise ValueError(f"window={self.window} needs grouped-query attention; multi-head "
                             "latent attention here sees every earlier position")
        self._table = None
        if self.position == "sinusoidal":
            self._table = positional_encoding(self.max_length, d_model).astype(
                self.embedding.dtype)

    def _check_attention_positions(self) -> None:
        expected = _IN_ATTENTION[self.position]
        got = [layer.self_attention.position for layer in self.layers
               if isinstance(layer.self_attention, GroupedQueryAttention)]
        if got and set(got) != {expected}:
            raise ValueError(f"position={self.position!r} needs every layer's attention with "
                             f"position={expected!r}; got {got}")

    @classmethod
    def random(cls, vocab_size: int, *, d_model: int, num_query_heads: int, num_kv_heads: int,
               d_ff: int, num_layers: int, max_length: int | None, rng: np.random.Generator,
               window: int | None = None, dtype=np.float32,
               position: str = "sinusoidal", latent: dict | None = None,
               variant: str = "softmax") -> DecoderOnlyTransformer:
        """Random weights as Keras initialises them (uniform embedding in [-0.05, 0.05],
        Glorot-uniform kernels, zero biases, gamma 1, beta 0), cast to ``dtype``; the
        layers' attention set for ``position``. ``latent``: multi-head latent attention of
        these sizes (``latent_dim``, ``query_latent_dim``, ``rope_dim``, which may be 0) in
        every layer, with ``num_query_heads`` heads of ``d_model // num_query_heads``.
        ``variant``:
        ``"sink_logit"`` (:class:`~helpers.attention.SinkLogitAttention`, sink logits 0) or
        ``"gated"`` (:class:`~helpers.attention.GatedAttention`) in every layer (chapter 16).

        Raises
        ------
        TypeError, ValueError
            If a size is not a positive integer or the head counts do not divide.
        """
        rng = _checks.generator(rng)
        vocab = _checks.integer(vocab_size, "vocab_size", low=2)
        in_attention = _IN_ATTENTION[_checks.one_of(position, "position", POSITIONS)]
        grouped = _VARIANTS[_checks.one_of(variant, "variant", VARIANTS)]
        if latent is not None and variant != "softmax":
            raise ValueError(f"variant={variant!r} needs grouped-query attention; got latent")

        def attention():
            if latent is None:
                return grouped.random(d_model, num_query_heads, num_kv_heads, rng=rng,
                                      position=in_attention)
            return MultiHeadLatentAttention.random(
                d_model, num_heads=num_query_heads, rng=rng,
                head_dim=_checks.key_dim(d_model, num_query_heads),
                **_checks.sizes(latent, "latent", LATENT_SIZES,
                                may_be_zero=("rope_dim",)))

        layers = [DecoderOnlyLayer(
            attention(), FeedForward.random(d_model, d_ff, rng=rng),
            LayerNormalization.initial(d_model), LayerNormalization.initial(d_model))
            for _ in range(_checks.positive_int(num_layers, "num_layers"))]
        model = cls(rng.uniform(-0.05, 0.05, (vocab, d_model)), layers,
                    LayerNormalization.initial(d_model),
                    glorot_uniform(rng, (d_model, vocab), d_model), np.zeros(vocab),
                    max_length=max_length, window=window, position=position)
        return model.astype(dtype)

    @classmethod
    def from_keras(cls, model) -> DecoderOnlyTransformer:
        """Copy a model made by ``helpers.keras_decoder_only.build_decoder_only`` (or
        ``build_decoder_only_with_position``; a model without ``decoder_positions`` gets
        ``max_length=None`` and the position of its layers' attention).

        Raises
        ------
        ValueError
            If the model lacks the named layers of that function (``decoder_tokens``,
            ``decoder_positions``, ``decoder_layer_0``…, ``final_norm``, ``logits``).
        """
        names = {layer.name for layer in getattr(model, "layers", [])}
        missing = {"decoder_embedding", "final_norm", "logits"} - names
        if missing:
            raise ValueError("model must come from helpers.keras_decoder_only."
                             f"build_decoder_only; it lacks the layers {sorted(missing)}")
        embed = model.get_layer("decoder_embedding")
        keras_layers = sorted((x for x in model.layers if x.name.startswith("decoder_layer_")),
                              key=lambda x: int(x.name.rsplit("_", 1)[1]))
        logits = model.get_layer("logits")
        layers = [DecoderOnlyLayer.from_keras(x) for x in keras_layers]
        table = [x for x in embed.layers if x.name == "decoder_positions"]
        position = "sinusoidal" if table else layers[0].self_attention.position
        return cls(np.asarray(embed.get_layer("decoder_tokens").embeddings), layers,
                   LayerNormalization.from_keras(model.get_layer("final_norm")),
                   np.asarray(logits.kernel), np.asarray(logits.bias),
                   max_length=table[0].max_length if table else None,
                   window=keras_layers[0].window, position=position)

    def astype(self, dtype) -> DecoderOnlyTransformer:
        """A copy with every weight cast to ``dtype`` (float32 halves the cache's bytes)."""
        def cast(part):
            copy = object.__new__(type(part))
            for name, value in vars(part).items():
                if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                    value = value.astype(dtype)
                elif hasattr(value, "__dict__") and not isinstance(value, type):
                    value = cast(value)
                elif isinstance(value, list):
                    value = [cast(v) for v in value]
                setattr(copy, name, value)
            return copy
        return cast(self)

    def with_rope_frequencies(self, frequencies) -> DecoderOnlyTransformer:
        """A copy whose rotary layers turn pair ``i`` by ``frequencies[i]`` per position.

        For trying a longer context on a trained RoPE model without training it again
        (:func:`helpers.transformer.rope_frequencies`, chapter 11); ``None`` gives back the
        trained frequencies (base 10000).

        Raises
        ------
        ValueError
            If the model does not use ``position="rope"``, or ``frequencies`` does not have
            one entry per pair, shape (head_dim/2,).
        """
        if self.position != "rope":
            raise ValueError(f"with_rope_frequencies needs a model with position='rope'; got "
                             f"position={self.position!r}")
        if frequencies is not None:
            half = self.layers[0].self_attention.head_dim // 2
            frequencies = _checks.float_array(frequencies, "frequencies", ndim=1)
            if frequencies.shape != (half,):
                raise ValueError(f"frequencies must have shape (head_dim/2,) = ({half},); got "
                                 f"shape {frequencies.shape}")
        return self._with_attention(rope_frequencies=frequencies)

    def with_rope_pairing(self, pairing: str) -> DecoderOnlyTransformer:
        """A copy whose rotary layers turn the features ``pairing`` together (``"adjacent"``
        or ``"halves"``, :func:`helpers.positions.rotary_position_embedding`); the weights
        are shared, not copied. Chapter 15 finds which one a model's weights expect.

        Raises
        ------
        ValueError
            If the model does not use ``position="rope"`` or ``pairing`` is unknown.
        """
        if self.position != "rope":
            raise ValueError(f"with_rope_pairing needs a model with position='rope'; got "
                             f"position={self.position!r}")
        return self._with_attention(
            rope_pairing=_checks.one_of(pairing, "pairing", ("adjacent", "halves")))

    def with_window(self, window: int | None, *, sinks: int = 0) -> DecoderOnlyTransformer:
        """The same model (weights shared, not copied) with sliding-window attention of
        ``window`` positions in every layer, and the first ``sinks`` positions always seen.

        Raises
        ------
        TypeError, ValueError
            As the constructor, for ``window`` and ``sinks``.
        """
        window = None if window is None else _checks.positive_int(window, "window")
        sinks = _checks.integer(sinks, "sinks", low=0)
        if sinks and window is None:
            raise ValueError(f"sinks={sinks} needs a window: without one every earlier "
                             "position is seen")
        model = copy.copy(self)
        model.window, model.sinks = window, sinks
        return model

    def _with_attention(self, **attributes) -> DecoderOnlyTransformer:
        """A shallow copy whose layers' attention objects have ``attributes`` set."""
        model = copy.copy(self)
        model.layers = []
        for layer in self.layers:
            layer = copy.copy(layer)
            layer.self_attention = copy.copy(layer.self_attention)
            for name, value in attributes.items():
                setattr(layer.self_attention, name, value)
            model.layers.append(layer)
        return model

    @property
    def d_model(self) -> int:
        return self.embedding.shape[1]

    @property
    def vocab_size(self) -> int:
        return self.embedding.shape[0]

    def count_params(self) -> int:
        """The number of weights, as Keras's ``count_params()`` counts them (a tied output
        kernel, a view of the embedding, is counted once)."""
        tied = np.shares_memory(self.output_kernel, self.embedding)
        return int(self.embedding.size + sum(x.count_params() for x in self.layers)
                   + self.final_norm.count_params()
                   + (0 if tied else self.output_kernel.size)
                   + (0 if self.output_bias is None else self.output_bias.size))

    @property
    def uses_latent_attention(self) -> bool:
        """Whether the layers use multi-head latent attention (and cache latents). Not
        ``latent``: that name is the dict of sizes that :meth:`random` and
        ``helpers.keras_decoder_only.DecoderOnlyLayer`` take."""
        return isinstance(self.layers[0].self_attention, MultiHeadLatentAttention)

    def kv_cache_bytes_per_token(self) -> int:
        """What one more position adds to a full cache: ``2 (keys and values) x num_layers
        x num_kv_heads x head_dim x bytes per number`` for a :class:`KVCache`, ``num_layers
        x (latent_dim + rope_dim) x bytes per number`` for a :class:`LatentCache`."""
        per_layer = [layer.self_attention.cache_elements_per_token()
                     if self.uses_latent_attention
                     else 2 * layer.self_attention.num_kv_heads * layer.self_attention.head_dim
                     for layer in self.layers]
        return sum(per_layer) * self.embedding.dtype.itemsize

    def new_cache(self, *, ring: bool = False) -> KVCache | LatentCache:
        """An empty cache for this model: a :class:`KVCache`, or a :class:`LatentCache`
        with multi-head latent attention; ``ring=True`` keeps only ``window`` entries per
        layer (the model must have a window), plus the first ``sinks`` positions pinned
        (StreamingLLM's cache, chapter 16): its bytes stop growing, and decoding through it
        gives what the model computes over the whole text with its mask."""
        if ring and self.window is None:
            raise ValueError("ring=True needs a model with a sliding window; window is None")
        if self.uses_latent_attention:
            return LatentCache(len(self.layers))
        if not ring:
            return KVCache(len(self.layers))
        return KVCache(len(self.layers), max_entries=self.window, sinks=self.sinks)

    def __call__(self, ids, *, cache: KVCache | None = None,
                 return_attention_scores: bool = False,
                 return_hidden_states: bool = False):
        """Logits for every new position.

        Parameters
        ----------
        ids : array_like of int, shape (batch, n)
            Token ids in ``0 .. vocab - 1``: the whole sequence, or (with ``cache``) only
            the positions after the cached ones.
        cache : KVCache, optional
            Holds the keys and values of earlier positions; this call adds its own.
        return_attention_scores : bool, default False
            Also return each layer's attention weights.
        return_hidden_states : bool, default False
            Also return the residual stream: the embeddings and each layer's output, before
            the final norm (where chapter 16 looks for very large activations).

        Returns
        -------
        logits : numpy.ndarray, shape (batch, n, vocab)
            The dtype of the weights. Row ``t`` scores the token after position ``t``.
        weights : list of numpy.ndarray, shape (batch, num_query_heads, n, n_k)
            Only with ``return_attention_scores=True``; one per layer.
        hidden_states : list of numpy.ndarray, shape (batch, n, d_model)
            Only with ``return_hidden_states=True``; ``num_layers + 1`` of them, the
            embeddings first. After ``weights`` when both are asked for.

        Raises
        ------
        TypeError
            If ``ids`` is not an integer array.
        ValueError
            If ``ids`` is not 2-D, an id is outside the vocabulary, or the sequence grows
            past ``max_length`` (when there is one).
        """
        ids = _checks.int_array(ids, "ids", ndim=2, low=0, high=self.vocab_size - 1)
        start = 0 if cache is None else cache.length
        positions = start + np.arange(ids.shape[1])
        if self.max_length is not None and positions[-1] >= self.max_length:
            raise ValueError(f"position {positions[-1]} is past "
                             f"max_length={self.max_length}")
        key_positions = (positions if cache is None
                         else cache.positions(new=len(positions)))
        mask = visible_keys(positions, key_positions, self.window, sinks=self.sinks)
        x = self.embedding[ids]
        if self.scale_embedding:
            x = x * self.embedding.dtype.type(np.sqrt(self.d_model))
        if self._table is not None:
            x = x + self._table[positions]
        all_weights, hidden = [], [x]
        for index, layer in enumerate(self.layers):
            x, weights = layer(x, mask, cache=cache, layer=index, positions=positions)
            all_weights.append(weights)
            hidden.append(x)
        logits = self.final_norm(x) @ self.output_kernel
        if self.output_bias is not None:
            logits = logits + self.output_bias
        extra = ([all_weights] if return_attention_scores else []) + (
            [hidden] if return_hidden_states else [])
        return (logits, *extra) if extra else logits


def greedy_generate(model: DecoderOnlyTransformer, prompt_ids, steps: int, *,
                    cache: KVCache | None = None):
    """Greedy autoregressive generation: append the most likely token ``steps`` times.

    Without ``cache`` every step runs the model on the whole sequence so far and keeps only
    the last position's logits. With a (new, empty) ``cache`` the first step runs the prompt
    once and fills the cache (the "prefill"); every later step runs only the one new token.

    Parameters
    ----------
    model : DecoderOnlyTransformer
    prompt_ids : array_like of int, shape (batch, n_prompt)
        Every row the same length (pad on the left if needed).
    steps : int
        Tokens to generate, at least 1.
    cache : KVCache or LatentCache, optional
        An empty cache from ``model.new_cache()``; ``None``: no cache.

    Returns
    -------
    ids : numpy.ndarray, shape (batch, steps), int64
        The generated tokens (the prompt not included).
    logits : numpy.ndarray, shape (batch, steps, vocab)
        The logits each token was chosen from.

    Raises
    ------
    TypeError
        If ``model`` or ``cache`` has the wrong type.
    ValueError
        If ``cache`` is not empty, ``steps`` < 1, or the sequence would pass
        ``max_length``.

    Notes
    -----
    Taught in chapter 9, which checks that both ways give the same logits and tokens.
    """
    if not isinstance(model, DecoderOnlyTransformer):
        raise TypeError("model must be a DecoderOnlyTransformer; got "
                        f"{type(model).__name__}")
    if cache is not None and (not isinstance(cache, (KVCache, LatentCache))
                              or cache.length):
        raise ValueError("cache must be an empty KVCache or LatentCache "
                         f"(model.new_cache()); got {type(cache).__name__} "
                         f"with length {getattr(cache, 'length', '?')}")
    ids = _checks.int_array(prompt_ids, "prompt_ids", ndim=2, low=0)
    steps = _checks.positive_int(steps, "steps")
    new, chosen, step_logits = ids, [], []
    for _ in range(steps):
        if cache is None:
            logits = model(ids)[:, -1]
        else:
            logits = model(new, cache=cache)[:, -1]
        new = logits.argmax(axis=-1)[:, None]
        ids = np.concatenate([ids, new], axis=1)
        chosen.append(new[:, 0])
        step_logits.append(logits)
    return np.stack(chosen, axis=1).astype(np.int64), np.stack(step_logits, axis=1)
