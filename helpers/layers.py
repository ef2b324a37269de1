"""Keras layers and model builders used by the chapters.

This is the only module of ``helpers`` that imports TensorFlow/Keras. Import it after
``helpers.setup(tensorflow=True)`` so that TensorFlow's start-up logs stay off.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from .data import _positive_int  # noqa: E402

__all__ = ["fit", "BahdanauAttention", "build_lstm_classifier", "build_lstm_bahdanau_classifier",
           "build_lstm_mha_classifier", "attention_over_time"]


def fit(model, x, y, *, sample_weight=None, **kwargs):
    """``model.fit(x, y, ...)``, with the training step traced into a graph once, not twice.

    Keras creates the optimizer's variables and the loss and metric state the first time the
    training step runs. TensorFlow traces a step that creates variables twice (once to create
    them, once for the graph it keeps), and for the small models of this course that tracing
    takes longer than the training. This builds that state first, with Keras's public
    ``optimizer.build``, ``compute_loss`` and ``compute_metrics`` on two examples, then calls
    ``model.fit`` unchanged: the same training, about half the start-up time.

    Parameters
    ----------
    model : keras.Model
        A compiled model.
    x, y : array_like or list of array_like
        Inputs and targets as ``model.fit`` takes them; at least two examples.
    sample_weight : array_like, optional
        Passed to ``model.fit``.
    **kwargs
        Passed to ``model.fit`` (``epochs``, ``batch_size``, ``verbose``, ...).

    Returns
    -------
    keras.callbacks.History
        What ``model.fit`` returns.

    Raises
    ------
    ValueError
        If ``model`` is not compiled.
    """
    if getattr(model, "optimizer", None) is None or not model.compiled:
        raise ValueError(f"model {model.name!r} is not compiled; call model.compile() first")

    def first_two(a):
        if isinstance(a, (list, tuple)):
            return [first_two(part) for part in a]
        return None if a is None else np.asarray(a)[:2]

    x2, y2, weight2 = first_two(x), first_two(y), first_two(sample_weight)
    model.optimizer.build(model.trainable_variables)
    y_pred = model(x2, training=False)
    model.compute_loss(x=x2, y=y2, y_pred=y_pred, sample_weight=weight2)
    model.compute_metrics(x2, y2, y_pred, sample_weight=weight2)
    if not model.jit_compile:
        return model.fit(x, y, sample_weight=sample_weight, **kwargs)
    with _without_xla_notice():
        return model.fit(x, y, sample_weight=sample_weight, **kwargs)


# What TensorFlow 2.20 writes to the process's stderr when it first compiles with XLA, at
# INFO level and whatever TF_CPP_MIN_LOG_LEVEL says. A notebook would show it as output.
_XLA_NOTICE = re.compile(r"^(WARNING: All log messages before absl::InitializeLog\(\) is "
                         r"called are written to STDERR|I\d{4} .*Compiled cluster using XLA!.*)$")


@contextlib.contextmanager
def _without_xla_notice():
    """Pass everything written to file descriptor 2 through, except XLA's compile notice."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().decode(errors="replace").splitlines()
                    if not _XLA_NOTICE.match(line)]
            if kept:
                print("\n".join(kept), file=sys.stderr)

# ---------------------------------------------------------------------------------------------
# Chapter 5: LSTM + attention for time-series classification
# ---------------------------------------------------------------------------------------------


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
    ValueError
        If ``units`` is not a positive integer, or the inputs are not 2-D and 3-D.

    Notes
    -----
    Bahdanau, Cho and Bengio, "Neural machine translation by jointly learning to align and
    translate", ICLR 2015, appendix A.1.2: ``e_ij = v_a^T tanh(W_a s_(i-1) + U_a h_j)``.
    Taught in chapter 5; the NumPy version is ``helpers.attention.additive_attention``.
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = _positive_int(units, "units")
        self.w1 = keras.layers.Dense(self.units, use_bias=False, name="w1")
        self.w2 = keras.layers.Dense(self.units, use_bias=False, name="w2")
        self.v = keras.layers.Dense(1, use_bias=False, name="v")
        self.supports_masking = True  # consumes a mask over time; its outputs carry none

    def build(self, query_shape, values_shape):
        if len(query_shape) != 2 or len(values_shape) != 3:
            raise ValueError("BahdanauAttention expects query (batch, hidden_q) and values "
                             f"(batch, seq_len, hidden); got shapes {tuple(query_shape)} "
                             f"and {tuple(values_shape)}")
        self.w1.build(query_shape)
        self.w2.build(values_shape)
        self.v.build((*values_shape[:-1], self.units))

    def call(self, query, values, mask=None):
        hidden = keras.ops.tanh(keras.ops.expand_dims(self.w1(query), 1) + self.w2(values))
        scores = self.v(hidden)
        if mask is not None:
            allowed = keras.ops.expand_dims(keras.ops.cast(mask, "bool"), -1)
            scores = keras.ops.where(allowed, scores, keras.ops.full_like(scores, -1e9))
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
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss="binary_crossentropy", metrics=["accuracy"])
    return model


def _inputs(seq_len, n_features):
    shape = (_positive_int(seq_len, "seq_len"), _positive_int(n_features, "n_features"))
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
        Adam's learning rate; the model is compiled with binary cross-entropy and accuracy.

    Returns
    -------
    keras.Model
        Input (batch, seq_len, n_features) float32 → output (batch, 1), probability of class 1.

    Raises
    ------
    ValueError
        If a size is not a positive integer.

    Notes
    -----
    The baseline of chapter 5; no attention.
    """
    inputs = _inputs(seq_len, n_features)
    state = keras.layers.LSTM(_positive_int(lstm_units, "lstm_units"), name="lstm")(inputs)
    return _compiled(inputs, _classifier_head(state, dense_units, dropout), "lstm", learning_rate)


def build_lstm_bahdanau_classifier(seq_len: int, n_features: int, *, lstm_units: int = 64,
                                   attention_units: int = 64, dense_units: int = 32,
                                   dropout: float = 0.3, learning_rate: float = 1e-3):
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
    ValueError
        If a size is not a positive integer.

    Notes
    -----
    Bahdanau et al., ICLR 2015; chapter 5.
    """
    inputs = _inputs(seq_len, n_features)
    lstm = keras.layers.LSTM(_positive_int(lstm_units, "lstm_units"), return_sequences=True,
                             return_state=True, name="lstm")
    states, last_hidden, _ = lstm(inputs)
    context, _ = BahdanauAttention(attention_units, name="attention")(last_hidden, states)
    outputs = _classifier_head(context, dense_units, dropout)
    return _compiled(inputs, outputs, "lstm_bahdanau", learning_rate)


def build_lstm_mha_classifier(seq_len: int, n_features: int, *, lstm_units: int = 64,
                              num_heads: int = 4, key_dim: int = 32, dense_units: int = 32,
                              dropout: float = 0.3, learning_rate: float = 1e-3):
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
    ValueError
        If a size is not a positive integer.

    Notes
    -----
    Vaswani et al., "Attention is all you need", NeurIPS 2017, section 3.2.2; chapters 3–5.
    """
    inputs = _inputs(seq_len, n_features)
    states = keras.layers.LSTM(_positive_int(lstm_units, "lstm_units"), return_sequences=True,
                               name="lstm")(inputs)
    mha = keras.layers.MultiHeadAttention(_positive_int(num_heads, "num_heads"),
                                          _positive_int(key_dim, "key_dim"), name="attention")
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
    ValueError
        If the model has no layer named ``"attention"``, or ``x`` is not 3-D.

    Notes
    -----
    Chapter 5 compares these weights with the planted pattern's time steps.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, seq_len, n_features); got shape {x.shape}")
    try:
        layer = model.get_layer("attention")
    except ValueError:
        raise ValueError(f"model {model.name!r} has no layer named 'attention'") from None
    batch_size = _positive_int(batch_size, "batch_size")
    probe = keras.Model(model.inputs, layer.output[1])
    # Called eagerly batch by batch: predict() would trace a new graph for every probe model.
    weights = np.concatenate([np.asarray(probe([x[i:i + batch_size]], training=False))
                              for i in range(0, len(x), batch_size)])
    if weights.ndim == 4:  # multi-head: (batch, num_heads, seq_len_q, seq_len_k)
        return weights.mean(axis=(1, 2))
    return weights[..., 0]



# ---------------------------------------------------------------------------------------------
# Chapter 6: sequence-to-sequence with cross-attention
# ---------------------------------------------------------------------------------------------

import warnings  # noqa: E402
import weakref  # noqa: E402

__all__ += ["build_seq2seq", "greedy_decode"]


def build_seq2seq(source_vocab_size: int, target_vocab_size: int, *, embed_dim: int = 32,
                  units: int = 32) -> tuple[keras.Model, keras.Model, keras.Model]:
    """A character-level encoder-decoder with cross-attention, and its two halves.

    Encoder: ``Embedding(mask_zero=True)`` and a bidirectional GRU; its outputs, one vector of
    ``2 * units`` per input character, are the keys and values of the cross-attention. Decoder:
    ``Embedding`` and a GRU of ``2 * units`` started from the encoder's final states (forward
    and backward, concatenated); its output at each step is the query of a one-head
    ``MultiHeadAttention`` over the encoder outputs, with padded input positions masked.
    The context vector and the decoder state are concatenated and passed through
    ``Dense(2 * units, tanh)`` and a softmax over the target vocabulary (Luong et al. 2015,
    "global attention", eq. 5-6; without input feeding).

    Parameters
    ----------
    source_vocab_size, target_vocab_size : int
        Sizes of the input and output vocabularies, padding id 0 included.
    embed_dim : int, default 32
        Size of the character embeddings.
    units : int, default 32
        Units of each direction of the encoder GRU; the decoder has ``2 * units``.

    Returns
    -------
    model : keras.Model
        For training with teacher forcing. Inputs ``[source, target_in]``, int
        (batch, S) and (batch, T); output: probabilities, float32 (batch, T, target_vocab_size),
        where step t predicts the character after ``target_in[:, :t + 1]``.
    encoder : keras.Model
        ``source`` (batch, S) → ``[encoder_outputs (batch, S, 2 * units),
        state (batch, 2 * units)]``.
    decoder : keras.Model
        ``[target_in (batch, T), encoder_outputs, state, source]`` → ``[probabilities
        (batch, T, target_vocab_size), attention weights (batch, 1, T, S)]``. ``source`` is
        only used for its padding mask (id 0 = padding).

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If a vocabulary size is below 2 or ``embed_dim`` or ``units`` is below 1.

    Notes
    -----
    The three models share their layers, and so their weights: train ``model``, then decode
    with ``encoder`` and ``decoder`` (:func:`greedy_decode`). Chapter 6. Sutskever et al. 2014
    (encoder-decoder), Bahdanau et al. 2015 (attention over the encoder outputs), Luong et al.
    2015 (the attentional hidden state).
    """
    for name, value, low in (("source_vocab_size", source_vocab_size, 2),
                             ("target_vocab_size", target_vocab_size, 2),
                             ("embed_dim", embed_dim, 1), ("units", units, 1)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer; got {type(value).__name__} {value!r}")
        if value < low:
            raise ValueError(f"{name} must be >= {low}; got {value}")
    L = keras.layers
    source_embedding = L.Embedding(source_vocab_size, embed_dim, mask_zero=True,
                                   name="source_embedding")
    encoder_gru = L.Bidirectional(L.GRU(units, return_sequences=True, return_state=True),
                                  name="encoder_gru")
    join_states = L.Concatenate(name="encoder_state")
    target_embedding = L.Embedding(target_vocab_size, embed_dim, name="target_embedding")
    decoder_gru = L.GRU(2 * units, return_sequences=True, name="decoder_gru")
    cross_attention = L.MultiHeadAttention(num_heads=1, key_dim=2 * units,
                                           name="cross_attention")
    join_context = L.Concatenate(name="context_and_state")
    attentional = L.Dense(2 * units, activation="tanh", name="attentional")
    output = L.Dense(target_vocab_size, activation="softmax", name="output")

    def decode(target_in, encoder_outputs, state, source):
        keep = keras.ops.expand_dims(keras.ops.not_equal(source, 0), 1)  # (batch, 1, S)
        states = decoder_gru(target_embedding(target_in), initial_state=state)
        context, weights = cross_attention(states, encoder_outputs, attention_mask=keep,
                                           return_attention_scores=True)
        return output(attentional(join_context([context, states]))), weights

    source = keras.Input((None,), dtype="int32", name="source")
    target_in = keras.Input((None,), dtype="int32", name="target_in")
    encoder_outputs, forward, backward = encoder_gru(source_embedding(source))
    state = join_states([forward, backward])
    probs, _ = decode(target_in, encoder_outputs, state, source)
    model = keras.Model([source, target_in], probs, name="seq2seq")
    encoder = keras.Model(source, [encoder_outputs, state], name="encoder")

    outputs_in = keras.Input((None, 2 * units), name="encoder_outputs")
    state_in = keras.Input((2 * units,), name="state")
    source_in = keras.Input((None,), dtype="int32", name="source_ids")
    target_step = keras.Input((None,), dtype="int32", name="target_so_far")
    decoder = keras.Model([target_step, outputs_in, state_in, source_in],
                          list(decode(target_step, outputs_in, state_in, source_in)),
                          name="decoder")
    return model, encoder, decoder


def greedy_decode(encoder: keras.Model, decoder: keras.Model, source_ids, *, start_id: int,
                  max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Generate outputs one character at a time, always taking the most probable one.

    Runs the encoder once, then the decoder ``max_length`` times on the characters
    generated so far (a Python loop over output steps, the whole batch at once). Because
    the decoder is causal, the attention weights of the last call are those of every step.

    Parameters
    ----------
    encoder, decoder : keras.Model
        The second and third models returned by :func:`build_seq2seq`.
    source_ids : array_like, shape (batch, S), integer
        Encoded inputs, padded with 0.
    start_id : int
        The start token fed at the first step.
    max_length : int
        Number of characters to generate, >= 1 (the end token included; what follows it
        is whatever the model produces next and is meant to be cut off when decoding).

    Returns
    -------
    ids : numpy.ndarray, shape (batch, max_length), int32
        The generated ids, start token excluded.
    weights : numpy.ndarray, shape (batch, max_length, S), float32
        The cross-attention weights: row t is how much output step t attends to each input
        position. Rows sum to 1 over the unpadded positions; padded positions get 0.

    Raises
    ------
    ValueError
        If ``source_ids`` is not a 2-D integer array or has a row of padding only, or
        ``max_length`` < 1.
    """
    source = np.asarray(source_ids)
    if source.ndim != 2 or not np.issubdtype(source.dtype, np.integer):
        raise ValueError("source_ids must be a 2-D integer array (batch, S); got shape "
                         f"{source.shape}, dtype {source.dtype}")
    if not np.all((source != 0).any(axis=1)):
        raise ValueError("every row of source_ids needs at least one non-padding id")
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) \
            or max_length < 1:
        raise ValueError(f"max_length must be an integer >= 1; got {max_length!r}")
    source = source.astype(np.int32)
    encoder_outputs, state = (np.asarray(a) for a in encoder(source, training=False))
    step = _graph_decoder(decoder)
    ids = np.full((len(source), 1), start_id, dtype=np.int32)
    with warnings.catch_warnings():
        # With one input position (S = 1) Keras warns that a softmax over one key is always 1,
        # which is correct for attention over a single key.
        warnings.filterwarnings("ignore", message="You are using a softmax over axis")
        for _ in range(max_length):
            probs, weights = step(ids, encoder_outputs, state, source)
            next_id = np.argmax(np.asarray(probs)[:, -1], axis=-1).astype(np.int32)
            ids = np.concatenate([ids, next_id[:, None]], axis=1)
    return ids[:, 1:], np.asarray(weights)[:, 0]


_GRAPH_DECODERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _graph_decoder(decoder: keras.Model):
    """``decoder`` as one TensorFlow graph for every batch size and length, traced once.

    Called eagerly, the decoder's GRU runs its time loop op by op, which costs more than the
    arithmetic for a small model; a graph whose input shapes leave batch and length open is
    traced once per decoder and then reused for every call of :func:`greedy_decode`.
    """
    if decoder not in _GRAPH_DECODERS:
        import tensorflow as tf  # noqa: PLC0415 - the backend this module runs on

        width = decoder.inputs[1].shape[-1]
        specs = [tf.TensorSpec((None, None), tf.int32),
                 tf.TensorSpec((None, None, width), tf.float32),
                 tf.TensorSpec((None, width), tf.float32),
                 tf.TensorSpec((None, None), tf.int32)]
        _GRAPH_DECODERS[decoder] = tf.function(
            lambda *inputs: decoder(list(inputs), training=False), input_signature=specs)
    return _GRAPH_DECODERS[decoder]
