"""The Keras twin of :mod:`helpers.decoder_only`: a decoder-only Transformer made of Keras layers.

Its attention is ``keras.layers.GroupQueryAttention`` (``num_key_value_heads`` key/value
heads shared by ``num_query_heads`` query heads); the rest is chapter 8's pieces
(``LayerNormalization``, ``Dense``, the embedding with the sinusoidal positional encoding).
:meth:`helpers.decoder_only.DecoderOnlyTransformer.from_keras` copies the weights, and the
NumPy model gives the same logits. Taught in chapters 9 and 10. Imports TensorFlow/Keras
(through ``helpers._tensorflow``).

The sliding window is passed to the attention as an explicit boolean mask, not as
``GroupQueryAttention(sliding_window=...)``: that argument exists from Keras 3.15 on, and
the course also runs on older Keras 3 releases (Colab's). The two masks are the same
(tested).

Positions other than the sinusoidal encoding (chapter 11): :class:`RotaryPositionEmbedding`
rotates queries and keys, :class:`AlibiBias` adds the ALiBi bias to the scores (both from
:mod:`helpers.keras_positions`, and importable from here), and
:class:`PositionalSelfAttention` (grouped-query self-attention written with ``keras.ops``,
since ``GroupQueryAttention`` computes its scores internally) uses one of them;
:func:`build_decoder_only_with_position` builds the model with either, or with no position.

The attention variants of chapter 16 (``variant``): ``"sink_logit"`` gives every head of
:class:`PositionalSelfAttention` gpt-oss's learned sink logit, ``"gated"`` Qwen3-Next's
sigmoid gate on every head's output, taken from a query projection twice as wide; both go
with every position, and the builders pass ``variant`` down to every layer.
"""

from __future__ import annotations

import time

import numpy as np

from . import _checks
from ._tensorflow import keras
from .decoder_only import _IN_ATTENTION, LATENT_SIZES, POSITIONS, VARIANTS
from .keras_latent_attention import MultiHeadLatentAttention
from .keras_positions import AlibiBias, RotaryPositionEmbedding, _window_mask
from .keras_transformer import _embedding, _TransformerLayer
from .training import FusedAdam, fit

__all__ = ["RotaryPositionEmbedding", "AlibiBias", "PositionalSelfAttention",
           "DecoderOnlyLayer", "build_decoder_only", "build_decoder_only_with_position",
           "train_language_model", "train_together"]


@keras.saving.register_keras_serializable(package="helpers")
class PositionalSelfAttention(keras.layers.Layer):
    """Grouped-query self-attention with RoPE or ALiBi, written with ``keras.ops``.

    The weights of ``keras.layers.GroupQueryAttention`` (``EinsumDense`` layers named
    ``query``, ``key``, ``value``, ``attention_output``, same shapes and initialisers), so
    :meth:`helpers.attention.GroupedQueryAttention.from_keras` copies them; it is called
    the same way as that layer, so :class:`DecoderOnlyLayer` uses either. ``position="rope"``
    rotates queries and keys (:class:`RotaryPositionEmbedding`) before the scores;
    ``"alibi"`` adds :class:`AlibiBias` to the scaled scores before the mask.

    Parameters
    ----------
    head_dim, num_query_heads, num_key_value_heads : int
        As in ``keras.layers.GroupQueryAttention``; ``num_key_value_heads`` divides
        ``num_query_heads``.
    position : {"rope", "alibi", "none"}, default "rope"
        ``"none"``: plain grouped-query attention.
    variant : {"softmax", "sink_logit", "gated"}, default "softmax"
        ``"sink_logit"``: one more weight ``sink_logits`` (num_query_heads,), initially 0,
        whose logit joins every row of the scores before the softmax and leaves after it
        (gpt-oss; NumPy twin :class:`helpers.attention.SinkLogitAttention`). ``"gated"``:
        the ``query`` kernel is (d_model, num_query_heads, 2 * head_dim); each head's first
        ``head_dim`` outputs are its query, the next ``head_dim`` its gate logits, and the
        heads' outputs are multiplied by their sigmoid before ``attention_output``
        (Qwen3-Next; NumPy twin :class:`helpers.attention.GatedAttention`).
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    query : tensor, shape (batch, n, d_model)
    value : tensor, shape (batch, n, d_model)
        The same tensor (self-attention: positions 0 .. n-1 on both sides).
    attention_mask : bool tensor, shape (batch or 1, n, n), optional
        ``True`` where a query may attend to a key.
    use_causal_mask : bool, default False
        Combined with ``attention_mask`` by logical and.
    return_attention_scores : bool, default False
        Also return the weights (after softmax), (batch, num_query_heads, n, n).

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is below 1, the head counts do not divide or ``position`` is unknown.

    Notes
    -----
    Su et al. (2021); Press, Smith and Lewis (2022); Ainslie et al. (2023). Taught in
    chapter 11. The variants: OpenAI (2025), gpt-oss; Qiu et al. (2025), gated attention;
    chapter 16.
    """

    def __init__(self, head_dim: int, num_query_heads: int, num_key_value_heads: int, *,
                 position: str = "rope", variant: str = "softmax", **kwargs):
        super().__init__(**kwargs)
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.num_query_heads = _checks.positive_int(num_query_heads, "num_query_heads")
        self.num_key_value_heads = _checks.positive_int(num_key_value_heads,
                                                        "num_key_value_heads")
        if self.num_query_heads % self.num_key_value_heads:
            raise ValueError(f"num_key_value_heads={self.num_key_value_heads} must divide "
                             f"num_query_heads={self.num_query_heads}")
        self.position = _checks.one_of(position, "position", ("rope", "alibi", "none"))
        self.variant = _checks.one_of(variant, "variant", VARIANTS)
        self.rotary = RotaryPositionEmbedding(name="rotary")
        self.alibi = AlibiBias(self.num_query_heads, name="alibi")

    def build(self, query_shape, value_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        heads = {"query": self.num_query_heads, "key": self.num_key_value_heads,
                 "value": self.num_key_value_heads}
        gated = self.variant == "gated"   # the query projection also makes the gate logits
        for name, count in heads.items():
            width = self.head_dim * (2 if gated and name == "query" else 1)
            dense = keras.layers.EinsumDense(
                "bqm,muh->bquh", output_shape=(None, count, width), bias_axes="uh",
                name=name)
            dense.build(query_shape if name == "query" else value_shape)
            setattr(self, f"{name}_dense", dense)
        self.output_dense = keras.layers.EinsumDense(
            "bquh,uhm->bqm", output_shape=(None, query_shape[-1]), bias_axes="m",
            name="attention_output")
        self.output_dense.build((None, None, self.num_query_heads, self.head_dim))
        self.rotary.build((None, None, None, self.head_dim))
        if self.variant == "sink_logit":
            self.sink_logits = self.add_weight(shape=(self.num_query_heads,),
                                               initializer="zeros", name="sink_logits")

    def _heads(self, dense, x):
        """(batch, n, d_model) → (batch, heads, n, head_dim)."""
        return keras.ops.transpose(dense(x), (0, 2, 1, 3))

    def call(self, query, value, attention_mask=None, use_causal_mask=False,
             return_attention_scores=False, training=None):
        q = self._heads(self.query_dense, query)
        if self.variant == "gated":     # Qwen3-Next: each head's query, then its gate
            q, gate = q[..., :self.head_dim], q[..., self.head_dim:]
        k, v = self._heads(self.key_dense, value), self._heads(self.value_dense, value)
        if self.position == "rope":
            q, k = self.rotary(q), self.rotary(k)
        group = self.num_query_heads // self.num_key_value_heads
        k, v = keras.ops.repeat(k, group, axis=1), keras.ops.repeat(v, group, axis=1)
        scores = keras.ops.einsum("buqh,bukh->buqk", q, k) / float(np.sqrt(self.head_dim))
        if self.position == "alibi":
            scores = self.alibi(scores)
        mask = _combined_mask(scores, attention_mask, use_causal_mask)
        if mask is not None:
            scores = keras.ops.where(mask, scores, -1e9)
        weights = self._softmax(scores)
        heads = keras.ops.einsum("buqk,bukh->bquh", weights, v)
        if self.variant == "gated":
            heads = heads * keras.ops.sigmoid(keras.ops.transpose(gate, (0, 2, 1, 3)))
        output = self.output_dense(heads)
        return (output, weights) if return_attention_scores else output

    def _softmax(self, scores):
        """The weights; with the sink logit, softmax over the keys and the sink, whose
        column is then dropped (rows sum to less than 1)."""
        if self.variant != "sink_logit":
            return keras.ops.softmax(scores, axis=-1)
        sinks = keras.ops.reshape(keras.ops.cast(self.sink_logits, scores.dtype), (1, -1, 1, 1))
        column = keras.ops.zeros_like(scores[..., :1]) + sinks     # (batch, heads, n_q, 1)
        return keras.ops.softmax(keras.ops.concatenate([scores, column], axis=-1),
                                 axis=-1)[..., :-1]

    def compute_output_shape(self, query_shape, value_shape=None):
        return query_shape

    def get_config(self):
        return {**super().get_config(), "head_dim": self.head_dim,
                "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "position": self.position,
                "variant": self.variant}


def _combined_mask(scores, attention_mask, use_causal_mask):
    """``None`` or a bool tensor (batch or 1, 1, n_q, n_k) for the scores' head axis."""
    mask = None
    if attention_mask is not None:
        mask = keras.ops.expand_dims(keras.ops.cast(attention_mask, "bool"), 1)
    if use_causal_mask:
        n = keras.ops.shape(scores)[-1]
        causal = _window_mask(n, n)[None, None]
        mask = causal if mask is None else keras.ops.logical_and(mask, causal)
    return mask


@keras.saving.register_keras_serializable(package="helpers")
class DecoderOnlyLayer(_TransformerLayer):
    """One pre-LN decoder-only layer: causal grouped-query self-attention, feed-forward.

    ``x = x + SelfAttention(LN1(x)); x = x + FFN(LN2(x))``. The Keras twin of
    :class:`helpers.decoder_only.DecoderOnlyLayer`.

    Parameters
    ----------
    d_model : int
        Width of the token vectors in and out.
    num_query_heads : int
        Query heads; must divide ``d_model``; ``head_dim = d_model // num_query_heads``.
    num_kv_heads : int
        Key/value heads; must divide ``num_query_heads``. Equal to it: multi-head attention;
        1: multi-query attention.
    d_ff : int
        Hidden width of the feed-forward network.
    window : int, optional
        Sliding-window attention: each position sees itself and the ``window - 1`` before
        it. ``None``: every earlier position.
    dropout : float, default 0.0
        Dropout on each sublayer's output before the residual addition (training only).
    position : {"none", "rope", "alibi"}, default "none"
        ``"none"``: ``keras.layers.GroupQueryAttention`` (positions, if any, come with
        ``x``); ``"rope"`` or ``"alibi"``: :class:`PositionalSelfAttention`.
    latent : dict, optional
        Multi-head latent attention instead:
        ``{"latent_dim": d_c, "query_latent_dim": d_c', "rope_dim": d_h^R}`` of a
        :class:`helpers.keras_latent_attention.MultiHeadLatentAttention` with
        ``num_query_heads`` heads of ``head_dim`` (its own decoupled RoPE included;
        ``rope_dim`` 0 leaves it out, as in chapter 12's matched comparison). Then
        ``num_kv_heads`` equals ``num_query_heads`` (MLA rebuilds a key and a value per
        head), there is no window and ``position`` is ``"none"``.
    variant : {"softmax", "sink_logit", "gated"}, default "softmax"
        The attention's softmax and output (:class:`PositionalSelfAttention`, chapter 16);
        not with ``latent``.
    **kwargs
        Passed to ``keras.layers.Layer`` (``name``, ...).

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float
    return_attention_scores : bool, default False
        Also return the weights, (batch, num_query_heads, n, n).

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is below 1 or a head count does not divide, or ``latent`` comes with
        another ``num_kv_heads``, a window, a position or a variant; when built, if ``x``
        does not have shape (batch, n, d_model).

    Notes
    -----
    Radford et al. (2019) (GPT-2's pre-LN layer); Ainslie et al. (2023) (grouped-query
    attention); DeepSeek-AI (2024) (multi-head latent attention). Taught in chapters 9 and
    10; with ``latent``, in chapter 12.
    """

    def __init__(self, d_model: int, num_query_heads: int, num_kv_heads: int, d_ff: int, *,
                 window: int | None = None, dropout: float = 0.0, position: str = "none",
                 latent: dict | None = None, variant: str = "softmax", **kwargs):
        kv = _checks.positive_int(num_kv_heads, "num_kv_heads")
        if _checks.positive_int(num_query_heads, "num_query_heads") % kv:
            raise ValueError(f"num_kv_heads={kv} must divide num_query_heads={num_query_heads}")
        self._num_kv_heads = kv
        self.position = _checks.one_of(position, "position", ("none", "rope", "alibi"))
        self.variant = _checks.one_of(variant, "variant", VARIANTS)
        self._latent = None if latent is None else _checks.sizes(
            latent, "latent", LATENT_SIZES, may_be_zero=("rope_dim",))
        if self._latent and (kv != num_query_heads or window is not None
                             or self.position != "none" or self.variant != "softmax"):
            raise ValueError("latent (multi-head latent attention) needs num_kv_heads == "
                             "num_query_heads, window=None, position='none' and "
                             f"variant='softmax'; got num_kv_heads={kv}, window={window}, "
                             f"position={position!r}, variant={variant!r}")
        super().__init__(d_model, num_query_heads, d_ff, dropout=dropout, norm_first=True,
                         **kwargs)
        self.num_kv_heads = kv
        self.window = None if window is None else _checks.positive_int(window, "window")

    def _attention(self, name):
        if self._latent:
            return MultiHeadLatentAttention(self.num_heads, self.key_dim, name=name,
                                            **self._latent)
        if self.position != "none" or self.variant != "softmax":
            return PositionalSelfAttention(self.key_dim, self.num_heads,
                                           self._num_kv_heads, position=self.position,
                                           variant=self.variant, name=name)
        return keras.layers.GroupQueryAttention(
            head_dim=self.key_dim, num_query_heads=self.num_heads,
            num_key_value_heads=self._num_kv_heads, name=name)

    def build(self, x_shape):
        self._build_common(x_shape)

    def call(self, x, return_attention_scores=False, training=None):
        def attend(h):
            if self.window is None:
                return self.self_attention(h, h, use_causal_mask=True,
                                           return_attention_scores=True,
                                           training=training)
            mask = _window_mask(keras.ops.shape(h)[1], self.window)[None]
            return self.self_attention(h, h, attention_mask=mask,
                                       return_attention_scores=True, training=training)

        x, scores = self._residual(x, self.self_attention_norm, attend, training)
        x = self._feed_forward_block(x, training)
        return (x, scores) if return_attention_scores else x

    def compute_output_shape(self, x_shape):
        return x_shape

    def get_config(self):
        config = super().get_config()
        config.pop("norm_first")
        config["num_query_heads"] = config.pop("num_heads")
        return {**config, "num_kv_heads": self.num_kv_heads, "window": self.window,
                "position": self.position, "latent": self.latent, "variant": self.variant}

    @property
    def latent(self) -> dict | None:
        """The sizes of multi-head latent attention, or ``None`` (grouped-query)."""
        return None if self._latent is None else dict(self._latent)


def build_decoder_only(vocab_size: int, *, d_model: int = 32,
                       num_query_heads: int = 4, num_kv_heads: int = 4,
                       d_ff: int = 64, num_layers: int = 2,
                       max_length: int = 32, window: int | None = None,
                       latent: dict | None = None, variant: str = "softmax"):
    """A decoder-only Transformer language model: token ids → next-token logits.

    ids → ``decoder_embedding`` (embedding × sqrt(d_model) + sinusoidal PE) →
    ``decoder_layer_0`` … (pre-LN :class:`DecoderOnlyLayer`) → ``final_norm`` → ``logits``
    (``Dense(vocab_size)``, no softmax: train with ``from_logits=True``).

    Parameters
    ----------
    vocab_size : int
        Token ids 0 .. vocab_size - 1, at least 2.
    d_model, num_query_heads, num_kv_heads, d_ff, num_layers : int
        Sizes; ``num_query_heads`` divides ``d_model`` and ``num_kv_heads`` divides
        ``num_query_heads``.
    max_length : int, default 32
        Longest sequence.
    window : int, optional
        Sliding-window attention in every layer.
    latent : dict, optional
        Multi-head latent attention in every layer, with these sizes (see
        :class:`DecoderOnlyLayer`); ``num_kv_heads`` must then equal ``num_query_heads``.
    variant : {"softmax", "sink_logit", "gated"}, default "softmax"
        The attention of every layer (:class:`PositionalSelfAttention`, chapter 16).

    Returns
    -------
    keras.Model
        ``ids`` (batch, n) int32 → logits (batch, n, vocab_size) float32.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is out of range or a head count does not divide.

    Notes
    -----
    Taught in chapters 9 and 10 (with ``latent``, chapter 12); the NumPy twin is
    :class:`helpers.decoder_only.DecoderOnlyTransformer` (``from_keras``).

    Examples
    --------
    >>> mla = build_decoder_only(29, latent={"latent_dim": 28, "query_latent_dim": 16,
    ...                                      "rope_dim": 4})
    >>> type(mla.get_layer("decoder_layer_0").self_attention).__name__
    'MultiHeadLatentAttention'
    """
    _checks.integer(vocab_size, "vocab_size", low=2)
    _checks.positive_int(num_layers, "num_layers")
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = _embedding(vocab_size, d_model, max_length, "decoder")(ids)
    for i in range(num_layers):
        layer = DecoderOnlyLayer(d_model, num_query_heads, num_kv_heads, d_ff,
                                 window=window, latent=latent, variant=variant,
                                 name=f"decoder_layer_{i}")
        x = layer(x)
    x = keras.layers.LayerNormalization(name="final_norm")(x)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)
    return keras.Model(ids, logits, name="decoder_only")


def build_decoder_only_with_position(vocab_size: int, *, position: str = "rope",
                                     d_model: int = 32, num_query_heads: int = 4,
                                     num_kv_heads: int = 4, d_ff: int = 64, num_layers: int = 2,
                                     max_length: int = 32, window: int | None = None,
                                     variant: str = "softmax"):
    """:func:`build_decoder_only` with a choice of how the model knows positions.

    ``"sinusoidal"``: :func:`build_decoder_only` itself. ``"rope"`` and ``"alibi"``: no
    encoding is added to the embeddings (``decoder_embedding`` is token embedding ×
    sqrt(d_model) only) and every layer's attention is a :class:`PositionalSelfAttention`.
    ``"none"``: no position at all (``GroupQueryAttention`` on the embeddings alone).

    Parameters
    ----------
    vocab_size, d_model, num_query_heads, num_kv_heads, d_ff, num_layers, window, variant
        As in :func:`build_decoder_only`.
    position : {"sinusoidal", "rope", "alibi", "none"}, default "rope"
    max_length : int, default 32
        Rows of the sinusoidal table; the other positions accept any length.

    Returns
    -------
    keras.Model
        ``ids`` (batch, n) int32 → logits (batch, n, vocab_size) float32, with the layer
        names of :func:`build_decoder_only`, so that
        :meth:`helpers.decoder_only.DecoderOnlyTransformer.from_keras` copies it.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is out of range, a head count does not divide or ``position`` is unknown.

    Notes
    -----
    Su et al. (2021) (RoPE); Press, Smith and Lewis (2022) (ALiBi); Haviv et al. (2022),
    "Transformer Language Models without Positional Encodings Still Learn Positional
    Information" (``"none"``). Taught in chapter 11.
    """
    sizes = dict(d_model=d_model, num_query_heads=num_query_heads, num_kv_heads=num_kv_heads,
                 d_ff=d_ff, num_layers=num_layers, window=window, variant=variant)
    if _checks.one_of(position, "position", POSITIONS) == "sinusoidal":
        return build_decoder_only(vocab_size, max_length=max_length, **sizes)
    _checks.integer(vocab_size, "vocab_size", low=2)
    _checks.positive_int(num_layers, "num_layers")
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.Sequential([
        keras.layers.Embedding(vocab_size, d_model, name="decoder_tokens"),
        keras.layers.Rescaling(float(np.sqrt(d_model)), name="decoder_scale"),
    ], name="decoder_embedding")(ids)
    for i in range(num_layers):
        x = DecoderOnlyLayer(d_model, num_query_heads, num_kv_heads, d_ff, window=window,
                             position=_IN_ATTENTION[position], variant=variant,
                             name=f"decoder_layer_{i}")(x)
    x = keras.layers.LayerNormalization(name="final_norm")(x)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)
    return keras.Model(ids, logits, name="decoder_only")


def train_language_model(model, inputs, targets, weights, *, epochs: int = 1,
                         batch_size: int = 32, warmup_steps: int = 50,
                         learning_rate: float = 1e-2) -> float:
    """Train a next-token model with the loss on the weighted positions only; return seconds.

    Adam (:class:`helpers.training.FusedAdam`) with the learning rate rising linearly
    from 0 to ``learning_rate`` over ``warmup_steps`` and then falling to 0 along a cosine
    (chapter 8's schedule);
    cross-entropy on the logits, weighted by ``weights`` (``sample_weight``). Runs
    :func:`helpers.training.fit` silently. The step is not compiled with XLA: for these small
    models and 500 steps, XLA's compilation costs more than it saves.

    Parameters
    ----------
    model : keras.Model
        From :func:`build_decoder_only` (not compiled yet; this compiles it).
    inputs, targets : numpy.ndarray, shape (batch, n), int
        Token ids and the next token at every position (for a model with several outputs,
        a list of targets, one per output: see :func:`train_together`).
    weights : numpy.ndarray, shape (batch, n), float
        1 where the target counts in the loss, 0 where it does not (a list, like targets).
    epochs, batch_size, warmup_steps : int
        ``warmup_steps`` must be below the number of steps.
    learning_rate : float
        The peak learning rate.

    Returns
    -------
    float
        Training time in seconds (wall clock).

    Raises
    ------
    ValueError
        If ``warmup_steps`` is not below the number of training steps.

    Notes
    -----
    Warmup: Vaswani et al. (2017), section 5.3; cosine decay: Loshchilov and Hutter (2017).
    Taught in chapter 9; chapter 10 trains its models the same way.
    """
    epochs = _checks.positive_int(epochs, "epochs")
    steps = epochs * len(inputs) // _checks.positive_int(batch_size, "batch_size")
    if not 0 <= _checks.integer(warmup_steps, "warmup_steps") < steps:
        raise ValueError(f"warmup_steps must be in [0, {steps}) "
                         f"({steps} training steps); got {warmup_steps}")
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=steps - warmup_steps, warmup_target=float(learning_rate),
        warmup_steps=warmup_steps)
    model.compile(optimizer=FusedAdam(learning_rate=schedule),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    started = time.perf_counter()
    fit(model, inputs, targets, sample_weight=weights, batch_size=batch_size,
        epochs=epochs, verbose=0)
    return time.perf_counter() - started


class _Together(keras.Model):
    """Several models side by side: the same input, one output per model, no shared weights."""

    def __init__(self, members, **kwargs):
        super().__init__(**kwargs)
        self.members = list(members)

    def call(self, inputs, training=False):
        return [member(inputs, training=training) for member in self.members]


def train_together(models, inputs, targets, weights, **options) -> float:
    """Train several next-token models on the same data at once; return seconds.

    The models are wrapped in one Keras model with an output per model and trained with
    :func:`train_language_model` (the same batches, schedule and loss for each). Keras adds
    the models' losses, and since no weight is shared, each model's gradient comes from its
    own loss only (chapter 5 shows this): every model is trained as it would be alone. One
    training step is traced instead of one per model, and TensorFlow may run the models'
    independent operations at the same time on the CPU's cores, so that training them
    together takes less time than one after the other.

    Parameters
    ----------
    models : sequence of keras.Model
        At least one, each from :func:`build_decoder_only` or
        :func:`build_decoder_only_with_position`, not compiled yet (nor after this: the
        wrapper is compiled, not them), no model twice.
    inputs, targets : numpy.ndarray, shape (batch, n), int
        Token ids and the next token at every position (the same for every model).
    weights : numpy.ndarray, shape (batch, n), float
        1 where the target counts in the loss, 0 where it does not.
    **options
        ``epochs``, ``batch_size``, ``warmup_steps`` and ``learning_rate`` of
        :func:`train_language_model`.

    Returns
    -------
    float
        Training time of all the models together, in seconds (wall clock).

    Raises
    ------
    TypeError
        If ``models`` is not a sequence of Keras models.
    ValueError
        If ``models`` is empty or holds a model twice, or as :func:`train_language_model`.

    Notes
    -----
    Used by chapters 10 and 11, which compare models trained the same way.
    """
    if isinstance(models, keras.Model) or not isinstance(models, (list, tuple)):
        raise TypeError("models must be a list or tuple of keras.Model; "
                        f"got {type(models).__name__}")
    if not models:
        raise ValueError("models must hold at least one model; got an empty sequence")
    for model in models:
        if not isinstance(model, keras.Model):
            raise TypeError(f"models must hold keras.Model objects; got {type(model).__name__}")
    if len({id(model) for model in models}) < len(models):
        raise ValueError("models must not hold the same model twice")
    together = _Together(models, name="together")
    return train_language_model(together, inputs, [targets] * len(models),
                                [weights] * len(models), **options)
