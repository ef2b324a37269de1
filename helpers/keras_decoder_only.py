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
"""

from __future__ import annotations

import time

from . import _checks
from ._tensorflow import keras
from .keras_transformer import _embedding, _TransformerLayer
from .training import fit

__all__ = ["DecoderOnlyLayer", "build_decoder_only", "train_language_model"]


def _window_mask(n, window: int):
    """(n, n) bool tensor: ``0 <= i - j < window`` (``helpers.attention.sliding_window_mask``)."""
    positions = keras.ops.arange(n)
    offset = keras.ops.expand_dims(positions, 1) - keras.ops.expand_dims(positions, 0)
    return keras.ops.logical_and(offset >= 0, offset < window)


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
        If a size is below 1 or a head count does not divide; when built, if ``x`` does not
        have shape (batch, n, d_model).

    Notes
    -----
    Radford et al. (2019) (GPT-2's pre-LN layer); Ainslie et al. (2023) (grouped-query
    attention). Taught in chapters 9 and 10.
    """

    def __init__(self, d_model: int, num_query_heads: int, num_kv_heads: int, d_ff: int, *,
                 window: int | None = None, dropout: float = 0.0, **kwargs):
        kv = _checks.positive_int(num_kv_heads, "num_kv_heads")
        if _checks.positive_int(num_query_heads, "num_query_heads") % kv:
            raise ValueError(f"num_kv_heads={kv} must divide num_query_heads={num_query_heads}")
        self._num_kv_heads = kv
        super().__init__(d_model, num_query_heads, d_ff, dropout=dropout, norm_first=True,
                         **kwargs)
        self.num_kv_heads = kv
        self.window = None if window is None else _checks.positive_int(window, "window")

    def _attention(self, name):
        return keras.layers.GroupQueryAttention(
            head_dim=self.key_dim, num_query_heads=self.num_heads,
            num_key_value_heads=self._num_kv_heads, name=name)

    def build(self, x_shape):
        self._build_common(x_shape)

    def call(self, x, return_attention_scores=False, training=None):
        def attend(h):
            if self.window is None:
                return self.self_attention(h, h, use_causal_mask=True,
                                           return_attention_scores=True, training=training)
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
        return {**config, "num_kv_heads": self.num_kv_heads, "window": self.window}


def build_decoder_only(vocab_size: int, *, d_model: int = 32, num_query_heads: int = 4,
                       num_kv_heads: int = 4, d_ff: int = 64, num_layers: int = 2,
                       max_length: int = 32, window: int | None = None):
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
    Taught in chapters 9 and 10; the NumPy twin is
    :class:`helpers.decoder_only.DecoderOnlyTransformer` (``from_keras``).
    """
    _checks.integer(vocab_size, "vocab_size", low=2)
    _checks.positive_int(num_layers, "num_layers")
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = _embedding(vocab_size, d_model, max_length, "decoder")(ids)
    for i in range(num_layers):
        layer = DecoderOnlyLayer(d_model, num_query_heads, num_kv_heads, d_ff,
                                 window=window, name=f"decoder_layer_{i}")
        x = layer(x)
    x = keras.layers.LayerNormalization(name="final_norm")(x)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)
    return keras.Model(ids, logits, name="decoder_only")


def train_language_model(model, inputs, targets, weights, *, epochs: int = 1,
                         batch_size: int = 32, warmup_steps: int = 50,
                         learning_rate: float = 1e-2) -> float:
    """Train a next-token model with the loss on the weighted positions only; return seconds.

    Adam with the learning rate rising linearly from 0 to ``learning_rate`` over
    ``warmup_steps`` and then falling to 0 along a cosine (chapter 8's schedule);
    cross-entropy on the logits, weighted by ``weights`` (``sample_weight``). Runs
    :func:`helpers.training.fit` silently. The step is not compiled with XLA: for these small
    models and 500 steps, XLA's compilation costs more than it saves.

    Parameters
    ----------
    model : keras.Model
        From :func:`build_decoder_only` (not compiled yet; this compiles it).
    inputs, targets : numpy.ndarray, shape (batch, n), int
        Token ids and the next token at every position.
    weights : numpy.ndarray, shape (batch, n), float
        1 where the target counts in the loss, 0 where it does not.
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
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=schedule),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    started = time.perf_counter()
    fit(model, inputs, targets, sample_weight=weights, batch_size=batch_size,
        epochs=epochs, verbose=0)
    return time.perf_counter() - started
