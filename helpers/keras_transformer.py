"""Keras twins of :mod:`helpers.transformer`: encoder and decoder layers, positional encoding.

Made of Keras layers only (``MultiHeadAttention``, ``LayerNormalization``, ``Dense``,
``Dropout``); the NumPy classes of :mod:`helpers.transformer` copy their weights with
``from_keras`` and give the same numbers. Taught in chapter 8. Imports TensorFlow/Keras
(through ``helpers._tensorflow``, with the course's log settings).

Masks are boolean, ``True`` where a query may attend to a key, as in the NumPy module:
(batch, 1, n_k) from ``helpers.attention.padding_mask`` or (batch, n_q, n_k). The layers also
take the per-token mask Keras attaches to the output of ``Embedding(mask_zero=True)``, shape
(batch, n_k), ``True`` at real tokens, and pass it on to the next layer.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._tensorflow import as_graph, keras
from .transformer import positional_encoding

__all__ = ["PositionalEncoding", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "build_transformer_seq2seq", "transformer_greedy_decode"]


def _attention_mask(mask, name: str):
    """``None`` or a bool tensor (batch, 1 or n_q, n_k); a (batch, n_k) token mask gains the
    query axis."""
    if mask is None:
        return None
    mask = keras.ops.convert_to_tensor(mask)
    if keras.backend.standardize_dtype(mask.dtype) != "bool":
        raise TypeError(f"{name} must be boolean (True = may attend); got dtype "
                        f"{keras.backend.standardize_dtype(mask.dtype)}")
    if len(mask.shape) == 2:
        return keras.ops.expand_dims(mask, 1)
    if len(mask.shape) != 3:
        raise ValueError(f"{name} must have shape (batch, n_k), (batch, 1, n_k) or "
                         f"(batch, n_q, n_k); got shape {tuple(mask.shape)}")
    return mask


@keras.saving.register_keras_serializable(package="helpers")
class PositionalEncoding(keras.layers.Layer):
    """Adds the fixed sinusoidal positional encoding to a sequence of token vectors.

    ``output[:, pos, :] = x[:, pos, :] + PE[pos]``, with ``PE`` from
    :func:`helpers.transformer.positional_encoding`. No trainable weights. A Keras mask on
    the input (from ``Embedding(mask_zero=True)``) is passed on unchanged.

    Parameters
    ----------
    max_length : int
        The longest sequence the layer accepts; the table has this many rows.
    **kwargs
        Passed to ``keras.layers.Layer`` (``name``, ...).

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float, with n <= max_length and d_model even

    Returns
    -------
    tensor, shape (batch, n, d_model), the dtype of the layer's computation (float32)

    Raises
    ------
    TypeError
        If ``max_length`` is not an integer.
    ValueError
        If ``max_length`` is below 1, or (when the layer is built) ``d_model`` is odd or a
        known ``n`` exceeds ``max_length``.

    Notes
    -----
    Vaswani et al. (2017), section 3.5. The paper also multiplies the embeddings by
    sqrt(d_model) (section 3.4) and applies dropout to the sum (section 5.4); this layer does
    neither. Taught in chapter 8.
    """

    def __init__(self, max_length: int, **kwargs):
        super().__init__(**kwargs)
        self.max_length = _checks.positive_int(max_length, "max_length")
        self.supports_masking = True

    def build(self, x_shape):
        if len(x_shape) != 3:
            raise ValueError(f"x must have shape (batch, n, d_model); got {tuple(x_shape)}")
        if x_shape[1] is not None and x_shape[1] > self.max_length:
            raise ValueError(f"sequences of length {x_shape[1]} are longer than max_length="
                             f"{self.max_length}")
        table = positional_encoding(self.max_length, x_shape[-1])
        self.table = keras.ops.convert_to_tensor(table, dtype=self.compute_dtype)

    def call(self, x):
        return x + self.table[:keras.ops.shape(x)[1]]

    def compute_output_shape(self, x_shape):
        return x_shape

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length}


class _TransformerLayer(keras.layers.Layer):
    """What encoder and decoder layers share: the sublayers, Add & Norm, config, masking."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, dropout: float = 0.0,
                 norm_first: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.key_dim = _checks.key_dim(d_model, num_heads)
        self.d_model, self.num_heads = int(d_model), int(num_heads)
        self.d_ff = _checks.positive_int(d_ff, "d_ff")
        self.dropout = _checks.real(dropout, "dropout", low=0, high=1)
        self.norm_first = _checks.boolean(norm_first, "norm_first")
        self.self_attention = self._attention("self_attention")
        self.self_attention_norm = keras.layers.LayerNormalization(name="self_attention_norm")
        self.ffn_1 = keras.layers.Dense(self.d_ff, activation="relu", name="ffn_1")
        self.ffn_2 = keras.layers.Dense(self.d_model, name="ffn_2")
        self.feed_forward_norm = keras.layers.LayerNormalization(name="feed_forward_norm")
        self.residual_dropout = keras.layers.Dropout(self.dropout, name="residual_dropout")
        self.supports_masking = True

    def _attention(self, name):
        return keras.layers.MultiHeadAttention(self.num_heads, self.key_dim, name=name)

    def _check_width(self, shape, name):
        if len(shape) != 3 or shape[-1] != self.d_model:
            raise ValueError(f"{name} must have shape (batch, n, d_model={self.d_model}); "
                             f"got {tuple(shape)}")

    def _build_common(self, x_shape):
        self._check_width(x_shape, "x")
        self.self_attention.build(x_shape, x_shape)
        self.self_attention_norm.build(x_shape)
        self.ffn_1.build(x_shape)
        self.ffn_2.build((*x_shape[:-1], self.d_ff))
        self.feed_forward_norm.build(x_shape)

    def _residual(self, x, norm, sublayer, training):
        """post-LN: ``norm(x + dropout(y))``, ``y = sublayer(x)``; pre-LN:
        ``x + dropout(y)``, ``y = sublayer(norm(x))``. ``sublayer`` returns (y, extra)."""
        y, extra = sublayer(norm(x) if self.norm_first else x)
        x = x + self.residual_dropout(y, training=training)
        return (x if self.norm_first else norm(x)), extra

    def _feed_forward_block(self, x, training):
        return self._residual(x, self.feed_forward_norm,
                              lambda h: (self.ffn_2(self.ffn_1(h)), None), training)[0]

    def compute_mask(self, x, previous_mask=None):
        """Pass a per-token mask (batch, n) on; an attention mask (3 axes) stops here."""
        if previous_mask is not None and len(previous_mask.shape) == 2:
            return previous_mask
        return None

    def get_config(self):
        return {**super().get_config(), "d_model": self.d_model, "num_heads": self.num_heads,
                "d_ff": self.d_ff, "dropout": self.dropout, "norm_first": self.norm_first}


_LAYER_DOC = """
    Parameters
    ----------
    d_model : int
        Width of the token vectors in and out.
    num_heads : int
        Number of attention heads; must divide ``d_model``, each head has
        ``key_dim = d_model // num_heads``.
    d_ff : int
        Hidden width of the feed-forward network ``Dense(d_ff, relu) -> Dense(d_model)``.
    dropout : float, default 0.0
        Rate of the dropout applied to each sublayer's output before the residual addition
        (Vaswani et al. 2017, section 5.4), during training only.
    norm_first : bool, default False
        ``False``: post-LN, ``LayerNorm(x + Sublayer(x))`` (Vaswani et al. 2017);
        ``True``: pre-LN, ``x + Sublayer(LayerNorm(x))`` (Xiong et al. 2020). A pre-LN stack
        needs one more ``keras.layers.LayerNormalization`` after its last layer; the model
        adds it, the layer does not.
    **kwargs
        Passed to ``keras.layers.Layer`` (``name``, ...).

    Raises
    ------
    TypeError
        If a size is not an integer, ``dropout`` is not a number or ``norm_first`` not a bool;
        when called, if a mask is not boolean.
    ValueError
        If a size is below 1, ``num_heads`` does not divide ``d_model`` or ``dropout`` is
        outside [0, 1]; when built, if an input does not have shape (batch, n, d_model); when
        called, if a mask does not have 2 or 3 axes.
"""


@keras.saving.register_keras_serializable(package="helpers")
class TransformerEncoderLayer(_TransformerLayer):
    __doc__ = """One Transformer encoder layer: self-attention, then the feed-forward network.

    The Keras twin of :class:`helpers.transformer.EncoderLayer` (copy its weights with
    ``EncoderLayer.from_keras(layer)``). Sublayers: ``self_attention``
    (``keras.layers.MultiHeadAttention``), ``self_attention_norm``, ``ffn_1``, ``ffn_2``,
    ``feed_forward_norm``.
    """ + _LAYER_DOC + """
    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model), float
    mask : bool tensor, optional
        (batch, 1, n) or (batch, n, n), ``True`` where a position may attend to another; or
        the per-token Keras mask (batch, n), which Keras fills in from ``x`` when it carries
        one.
    training : bool, optional
        Dropout is active only when ``True``.

    Returns
    -------
    tensor, shape (batch, n, d_model), float32

    Notes
    -----
    Vaswani et al. (2017), section 3.1; Xiong et al. (2020). Taught in chapter 8.
    """

    def build(self, x_shape):
        self._build_common(x_shape)

    def call(self, x, mask=None, training=None):
        attention_mask = _attention_mask(mask, "mask")
        x, _ = self._residual(x, self.self_attention_norm, lambda h: (self.self_attention(
            h, h, attention_mask=attention_mask, training=training), None), training)
        return self._feed_forward_block(x, training)

    def compute_output_shape(self, x_shape):
        return x_shape


@keras.saving.register_keras_serializable(package="helpers")
class TransformerDecoderLayer(_TransformerLayer):
    __doc__ = """One Transformer decoder layer: causal self-attention, cross-attention, FFN.

    The Keras twin of :class:`helpers.transformer.DecoderLayer` (copy its weights with
    ``DecoderLayer.from_keras(layer)``). Sublayers: ``self_attention``,
    ``self_attention_norm``, ``cross_attention``, ``cross_attention_norm``, ``ffn_1``,
    ``ffn_2``, ``feed_forward_norm``.
    """ + _LAYER_DOC + """
    Call arguments
    --------------
    x : tensor, shape (batch, n_target, d_model), float
        The target tokens so far.
    context : tensor, shape (batch, n_source, d_model), float
        The encoder's output: the keys and values of the cross-attention.
    context_mask : bool tensor, optional
        (batch, 1, n_source) or (batch, n_target, n_source); or the per-token Keras mask
        (batch, n_source), which Keras fills in from ``context`` when it carries one.
    mask : bool tensor, optional
        A mask on the self-attention, (batch, 1, n_target) or (batch, n_target, n_target),
        combined with the causal mask, which always applies.
    return_attention_scores : bool, default False
        Also return the cross-attention weights.
    training : bool, optional
        Dropout is active only when ``True``.

    Returns
    -------
    output : tensor, shape (batch, n_target, d_model), float32
    scores : tensor, shape (batch, num_heads, n_target, n_source), float32
        Only with ``return_attention_scores=True``: the cross-attention weights (after
        softmax), for one heatmap per head.

    Notes
    -----
    Vaswani et al. (2017), sections 3.1 and 3.2.3; Xiong et al. (2020). Taught in chapter 8.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, dropout: float = 0.0,
                 norm_first: bool = False, **kwargs):
        super().__init__(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first,
                         **kwargs)
        self.cross_attention = self._attention("cross_attention")
        self.cross_attention_norm = keras.layers.LayerNormalization(name="cross_attention_norm")

    def build(self, x_shape, context_shape):
        self._check_width(context_shape, "context")
        self._build_common(x_shape)
        self.cross_attention.build(x_shape, context_shape)
        self.cross_attention_norm.build(x_shape)

    def call(self, x, context, context_mask=None, mask=None, return_attention_scores=False,
             training=None):
        self_mask = _attention_mask(mask, "mask")
        cross_mask = _attention_mask(context_mask, "context_mask")
        x, _ = self._residual(x, self.self_attention_norm, lambda h: (self.self_attention(
            h, h, attention_mask=self_mask, use_causal_mask=True, training=training), None),
            training)

        def cross_attention(h):
            result = self.cross_attention(h, context, attention_mask=cross_mask,
                                          return_attention_scores=return_attention_scores,
                                          training=training)
            return result if return_attention_scores else (result, None)

        x, scores = self._residual(x, self.cross_attention_norm, cross_attention, training)
        x = self._feed_forward_block(x, training)
        return (x, scores) if return_attention_scores else x


# --- a whole encoder-decoder model, and greedy decoding -----------------------------------------

def build_transformer_seq2seq(source_vocab_size: int, target_vocab_size: int, *,
                              d_model: int = 32, num_heads: int = 4, d_ff: int = 64,
                              num_layers: int = 1, norm_first: bool = False,
                              max_length: int = 32):
    """A Transformer encoder-decoder for character sequences, and its two halves.

    Encoder: token embedding times sqrt(d_model), plus the sinusoidal positional encoding,
    then ``num_layers`` :class:`TransformerEncoderLayer`. Decoder: the same embedding for the
    target tokens, ``num_layers`` :class:`TransformerDecoderLayer` that attend to the encoder
    output, and a softmax over the target vocabulary. Id 0 is padding: source positions with
    id 0 are masked in every self- and cross-attention. With ``norm_first=True`` (pre-LN)
    each stack ends with one more layer norm.

    Parameters
    ----------
    source_vocab_size, target_vocab_size : int
        Sizes of the two vocabularies (ids 0 .. size - 1), at least 2.
    d_model, num_heads, d_ff, num_layers : int
        Width of the token vectors, heads per attention (must divide ``d_model``), hidden
        width of the feed-forward networks, layers on each side.
    norm_first : bool, default False
        post-LN (``False``) or pre-LN (``True``) layers.
    max_length : int, default 32
        The longest source or target sequence.

    Returns
    -------
    model : keras.Model
        ``[source (batch, S), target_in (batch, T)]`` → probabilities (batch, T,
        target_vocab_size). Train it with teacher forcing.
    encoder : keras.Model
        ``source`` → ``memory`` (batch, S, d_model).
    decoder : keras.Model
        ``[target_in, memory, source]`` → ``[probabilities, weights]``, where ``weights``
        (batch, num_layers, num_heads, T, S) are the cross-attention weights of every layer
        and head. ``source`` is only used for its padding mask.

    Raises
    ------
    TypeError
        If a size is not an integer or ``norm_first`` not a bool.
    ValueError
        If a size is out of range or ``num_heads`` does not divide ``d_model``.

    Notes
    -----
    Vaswani et al. (2017), section 3 (the embedding scale: section 3.4). The three models
    share their layers, and so their weights, as :func:`helpers.seq2seq.build_seq2seq`'s do.
    Taught in chapter 8.
    """
    for name, value, low in (("source_vocab_size", source_vocab_size, 2),
                             ("target_vocab_size", target_vocab_size, 2),
                             ("num_layers", num_layers, 1),
                             ("max_length", max_length, 1)):
        _checks.integer(value, name, low=low)
    _checks.key_dim(d_model, num_heads)
    options = dict(d_model=d_model, num_heads=num_heads, d_ff=d_ff,
                   norm_first=norm_first)
    encoder_layers = [TransformerEncoderLayer(**options, name=f"encoder_layer_{i}")
                      for i in range(num_layers)]
    decoder_layers = [TransformerDecoderLayer(**options, name=f"decoder_layer_{i}")
                      for i in range(num_layers)]
    embed = {side: _embedding(size, d_model, max_length, side) for side, size in
             (("source", source_vocab_size), ("target", target_vocab_size))}
    final_norm = {side: keras.layers.LayerNormalization(name=f"{side}_final_norm")
                  for side in ("encoder", "decoder")} if norm_first else None
    output = keras.layers.Dense(target_vocab_size, activation="softmax",
                                name="output")

    def encode(source):
        # keep: (batch, 1, S)
        keep = keras.ops.expand_dims(keras.ops.not_equal(source, 0), 1)
        x = embed["source"](source)
        for layer in encoder_layers:
            x = layer(x, mask=keep)
        return final_norm["encoder"](x) if norm_first else x

    def decode(target_in, memory, source):
        keep = keras.ops.expand_dims(keras.ops.not_equal(source, 0), 1)
        y, weights = embed["target"](target_in), []
        for layer in decoder_layers:
            y, w = layer(y, memory, context_mask=keep, return_attention_scores=True)
            weights.append(w)
        y = final_norm["decoder"](y) if norm_first else y
        return output(y), keras.ops.stack(weights, axis=1)

    source = keras.Input((None,), dtype="int32", name="source")
    target_in = keras.Input((None,), dtype="int32", name="target_in")
    memory = keras.Input((None, d_model), name="memory")
    model = keras.Model([source, target_in],
                        decode(target_in, encode(source), source)[0],
                        name="transformer")
    encoder = keras.Model(source, encode(source), name="transformer_encoder")
    decoder = keras.Model([target_in, memory, source],
                          list(decode(target_in, memory, source)),
                          name="transformer_decoder")
    return model, encoder, decoder


def _embedding(vocab_size: int, d_model: int, max_length: int, side: str):
    """ids (batch, n) → token vectors times sqrt(d_model) plus positional encoding."""
    return keras.Sequential([
        keras.layers.Embedding(vocab_size, d_model, name=f"{side}_tokens"),
        keras.layers.Rescaling(float(np.sqrt(d_model)), name=f"{side}_scale"),
        PositionalEncoding(max_length, name=f"{side}_positions"),
    ], name=f"{side}_embedding")


def transformer_greedy_decode(encoder, decoder, source_ids, *, start_id: int,
                              max_length: int):
    """Greedy decoding with a Transformer decoder: one token per step, for a whole batch.

    Runs the encoder once, then the decoder ``max_length`` times on the whole prefix
    generated so far (a Transformer decoder has no state to carry; the causal mask makes
    each position see only earlier ones). The decoder runs as one TensorFlow graph whose
    batch and length are open, traced once per decoder.

    Parameters
    ----------
    encoder, decoder : keras.Model
        The second and third models returned by :func:`build_transformer_seq2seq`.
    source_ids : array_like, shape (batch, S), integer
        Encoded inputs, padded with 0.
    start_id : int
        The start token fed at the first step.
    max_length : int
        Number of tokens to generate, >= 1.

    Returns
    -------
    ids : numpy.ndarray, shape (batch, max_length), int32
        The generated ids, start token excluded.
    weights : numpy.ndarray, shape (batch, num_layers, num_heads, max_length, S), float32
        The cross-attention weights of the last step, which (by the causal mask) are those
        every output position had when it was generated.

    Raises
    ------
    TypeError
        If ``source_ids`` is not an integer array or ``max_length`` not an integer.
    ValueError
        If ``source_ids`` is not 2-D, has negative ids or a row of padding only, or
        ``max_length`` < 1.

    Notes
    -----
    Taught in chapter 8 (chapter 6 decodes its recurrent model the same way).
    """
    source = _checks.token_ids(source_ids, "source_ids")
    max_length = _checks.positive_int(max_length, "max_length")
    memory = encoder(source, training=False)
    step = as_graph(decoder)
    ids = np.full((len(source), 1), _checks.integer(start_id, "start_id", low=0), np.int32)
    for _ in range(max_length):
        probs, weights = step(ids, memory, source)
        next_ids = np.argmax(np.asarray(probs)[:, -1], axis=-1).astype(np.int32)
        ids = np.concatenate([ids, next_ids[:, None]], axis=1)
    return ids[:, 1:], np.asarray(weights)
