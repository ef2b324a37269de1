"""Keras classifiers of time series (chapter 5): an LSTM alone, with Bahdanau attention, and
with multi-head self-attention; the Bahdanau attention layer; and reading the attention
weights a trained model puts on each time step.

Imports TensorFlow/Keras (through ``helpers._tensorflow``, with the course's log settings).
"""

from __future__ import annotations

import numpy as np

from ._checks import float_array, positive_int
from ._tensorflow import keras
from .training import FusedAdam

__all__ = ["BahdanauAttention", "build_lstm_classifier", "build_lstm_bahdanau_classifier",
           "build_lstm_mha_classifier", "attention_over_time"]


@keras.saving.register_keras_serializable(package="helpers")
class BahdanauAttention(keras.layers.Layer):
    """Additive (Bahdanau) attention of one query vector over a sequence of values.

    ``score_t = v^T tanh(W1 query + W2 values_t)``, ``weights = softmax(score)`` over time and
    ``context = sum_t weights_t values_t``. The values also serve as the keys.

    Parameters
    ----------
    units : int
        Size of the hidden layer of the score, the common width of ``W1 query`` and
        ``W2 values_t``. Trainable weights: ``W1`` (hidden_q, units), ``W2`` (hidden, units) and
        ``v`` (units, 1), no biases.
    **kwargs
        Passed to ``keras.layers.Layer`` (``name``, ``dtype``, ...).

    Call arguments
    --------------
    query : tensor, shape (batch, hidden_q)
        One query per example, e.g. the last hidden state of an LSTM.
    values : tensor, shape (batch, seq_len, hidden)
        The sequence to attend over, e.g. all hidden states of the LSTM.
    mask : bool tensor, shape (batch, seq_len), optional
        True where a time step may be attended to. Masked steps get weight exactly 0;
        a row with no True gets all-zero weights and a zero context.

    Returns
    -------
    context : tensor, shape (batch, hidden), float32
        The weighted average of ``values``.
    weights : tensor, shape (batch, seq_len, 1), float32
        The attention weights; they sum to 1 over ``seq_len``.

    Raises
    ------
    TypeError
        If ``units`` is not an integer.
    ValueError
        If ``units`` is below 1, or the inputs are not 2-D and 3-D.

    Notes
    -----
    Bahdanau, Cho and Bengio, "Neural machine translation by jointly learning to align and
    translate", ICLR 2015, appendix A.1.2: ``e_ij = v_a^T tanh(W_a s_(i-1) + U_a h_j)``.
    Taught in chapter 5; the NumPy version is ``helpers.attention.additive_attention``.
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = positive_int(units, "units")
        self.w1 = keras.layers.Dense(self.units, use_bias=False, name="w1")
        self.w2 = keras.layers.Dense(self.units, use_bias=False, name="w2")
        self.v = keras.layers.Dense(1, use_bias=False, name="v")
        # 시간 축의 마스크를 받고, 출력에는 마스크가 없다
        self.supports_masking = True

    def build(self, query_shape, values_shape):
        if len(query_shape) != 2 or len(values_shape) != 3:
            raise ValueError("BahdanauAttention expects query (batch, hidden_q) and "
                             "values (batch, seq_len, hidden); got shapes "
                             f"{tuple(query_shape)} and {tuple(values_shape)}")
        self.w1.build(query_shape)
        self.w2.build(values_shape)
        self.v.build((*values_shape[:-1], self.units))

    def call(self, query, values, mask=None):
        hidden = keras.ops.tanh(keras.ops.expand_dims(self.w1(query), 1)
                                + self.w2(values))
        scores = self.v(hidden)
        if mask is not None:
            allowed = keras.ops.expand_dims(keras.ops.cast(mask, "bool"), -1)
            scores = keras.ops.where(allowed, scores,
                                     keras.ops.full_like(scores, -1e9))
        weights = keras.ops.softmax(scores, axis=1)
        if mask is not None:
            weights = weights * keras.ops.cast(allowed, weights.dtype)
        context = keras.ops.sum(weights * values, axis=1)
        return context, weights

    def compute_mask(self, *args, **kwargs):
        return None

    def compute_output_shape(self, query_shape, values_shape):
        return (values_shape[0], values_shape[2]), (*values_shape[:2], 1)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def _classifier_head(x, dense_units: int, dropout: float):
    x = keras.layers.Dropout(dropout, name="dropout")(x)
    x = keras.layers.Dense(dense_units, activation="relu", name="dense")(x)
    return keras.layers.Dense(1, activation="sigmoid", name="output")(x)


def _compiled(inputs, outputs, name: str, learning_rate: float):
    model = keras.Model(inputs, outputs, name=name)
    model.compile(optimizer=FusedAdam(learning_rate=learning_rate),
                  loss="binary_crossentropy", metrics=["accuracy"])
    return model


def _inputs(seq_len, n_features):
    shape = (positive_int(seq_len, "seq_len"), positive_int(n_features, "n_features"))
    return keras.Input(shape=shape, name="series")


def build_lstm_classifier(seq_len: int, n_features: int, *, lstm_units: int = 64,
                          dense_units: int = 32, dropout: float = 0.3,
                          learning_rate: float = 1e-3):
    """Binary classifier: LSTM (last hidden state) → Dropout → Dense(ReLU) → Dense(sigmoid).

    Parameters
    ----------
    seq_len, n_features : int
        Input shape per example: (seq_len, n_features).
    lstm_units : int, default 64
        Width of the LSTM's hidden state.
    dense_units : int, default 32
        Width of the ReLU layer before the output.
    dropout : float, default 0.3
        Dropout rate applied to the pooled vector during training.
    learning_rate : float, default 1e-3
        Adam's learning rate (:class:`helpers.training.FusedAdam`); the model is compiled
        with binary cross-entropy and accuracy.

    Returns
    -------
    keras.Model
        Input (batch, seq_len, n_features) float32 → output (batch, 1), probability of class 1.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is below 1.

    Notes
    -----
    The baseline of chapter 5; no attention.
    """
    inputs = _inputs(seq_len, n_features)
    state = keras.layers.LSTM(positive_int(lstm_units, "lstm_units"),
                              name="lstm")(inputs)
    return _compiled(inputs, _classifier_head(state, dense_units, dropout), "lstm",
                     learning_rate)


def build_lstm_bahdanau_classifier(seq_len: int, n_features: int, *,
                                   lstm_units: int = 64, attention_units: int = 64,
                                   dense_units: int = 32, dropout: float = 0.3,
                                   learning_rate: float = 1e-3):
    """Binary classifier: LSTM → BahdanauAttention (query = last hidden state) → head.

    The LSTM returns all hidden states (the values) and its last hidden state (the query);
    the context vector replaces the last hidden state as input of the head. The attention
    layer is named ``"attention"``; read its weights with :func:`attention_over_time`.

    Parameters
    ----------
    seq_len, n_features, lstm_units, dense_units, dropout, learning_rate
        As in :func:`build_lstm_classifier`.
    attention_units : int, default 64
        ``units`` of :class:`BahdanauAttention`.

    Returns
    -------
    keras.Model
        Input (batch, seq_len, n_features) float32 → output (batch, 1).

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is below 1.

    Notes
    -----
    Bahdanau et al., ICLR 2015; chapter 5.
    """
    inputs = _inputs(seq_len, n_features)
    lstm = keras.layers.LSTM(positive_int(lstm_units, "lstm_units"),
                             return_sequences=True, return_state=True, name="lstm")
    states, last_hidden, _ = lstm(inputs)
    context, _ = BahdanauAttention(attention_units,
                                   name="attention")(last_hidden, states)
    outputs = _classifier_head(context, dense_units, dropout)
    return _compiled(inputs, outputs, "lstm_bahdanau", learning_rate)


def build_lstm_mha_classifier(seq_len: int, n_features: int, *, lstm_units: int = 64,
                              num_heads: int = 4, key_dim: int = 32,
                              dense_units: int = 32, dropout: float = 0.3,
                              learning_rate: float = 1e-3):
    """Binary classifier: LSTM → multi-head self-attention → GlobalAveragePooling1D → head.

    Every time step's hidden state queries all others (query = key = value = the LSTM's
    output sequence); the attention output, (batch, seq_len, lstm_units), is averaged over
    time. The ``keras.layers.MultiHeadAttention`` layer is named ``"attention"``.

    Parameters
    ----------
    seq_len, n_features, lstm_units, dense_units, dropout, learning_rate
        As in :func:`build_lstm_classifier`.
    num_heads : int, default 4
        Number of attention heads.
    key_dim : int, default 32
        Size of each head's query and key (and value) projections.

    Returns
    -------
    keras.Model
        Input (batch, seq_len, n_features) float32 → output (batch, 1).

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is below 1.

    Notes
    -----
    Vaswani et al., "Attention is all you need", NeurIPS 2017, section 3.2.2; chapters 3–5.
    """
    inputs = _inputs(seq_len, n_features)
    states = keras.layers.LSTM(positive_int(lstm_units, "lstm_units"),
                               return_sequences=True, name="lstm")(inputs)
    mha = keras.layers.MultiHeadAttention(positive_int(num_heads, "num_heads"),
                                          positive_int(key_dim, "key_dim"),
                                          name="attention")
    attended, _ = mha(states, states, return_attention_scores=True)
    pooled = keras.layers.GlobalAveragePooling1D(name="pooling")(attended)
    outputs = _classifier_head(pooled, dense_units, dropout)
    return _compiled(inputs, outputs, "lstm_mha", learning_rate)


def attention_over_time(model, x, *, batch_size: int = 256) -> np.ndarray:
    """How much attention each input time step receives, for a batch of series.

    Parameters
    ----------
    model : keras.Model
        A model from :func:`build_lstm_bahdanau_classifier` or
        :func:`build_lstm_mha_classifier` (any model with a layer named ``"attention"`` whose
        second output is its attention weights).
    x : array_like, shape (batch, seq_len, n_features)
        Input series.
    batch_size : int, default 256
        Batch size for the forward pass.

    Returns
    -------
    numpy.ndarray, shape (batch, seq_len), float32
        For Bahdanau attention, the weights of the single query. For multi-head
        self-attention, the weights averaged over heads and over query positions: the share
        of attention each time step receives as a key. Every row sums to 1.

    Raises
    ------
    TypeError
        If ``x`` is not an array of real numbers or ``batch_size`` not an integer.
    ValueError
        If the model has no layer named ``"attention"``, ``x`` is not 3-D or not finite.

    Notes
    -----
    Chapter 5 compares these weights with the planted pattern's time steps.
    """
    x = float_array(x, "x", min_rank=3, axes="(batch, seq_len, n_features)").astype(np.float32)
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, seq_len, n_features); got shape {x.shape}")
    try:
        layer = model.get_layer("attention")
    except ValueError:
        raise ValueError(f"model {model.name!r} has no layer named 'attention'") from None
    batch_size = positive_int(batch_size, "batch_size")
    probe = keras.Model(model.inputs, layer.output[1])
    # Called eagerly batch by batch: predict() would trace a new graph for every probe model.
    weights = np.concatenate([np.asarray(probe([x[i:i + batch_size]], training=False))
                              for i in range(0, len(x), batch_size)])
    if weights.ndim == 4:  # multi-head: (batch, num_heads, seq_len_q, seq_len_k)
        return weights.mean(axis=(1, 2))
    return weights[..., 0]
