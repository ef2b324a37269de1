"""The recurrent encoder-decoder with cross-attention of chapter 6, and greedy decoding.

Imports TensorFlow/Keras (through ``helpers._tensorflow``, with the course's log settings).
"""

from __future__ import annotations

import warnings

import numpy as np

from ._checks import integer, positive_int, token_ids
from ._tensorflow import as_graph, keras

__all__ = ["build_seq2seq", "greedy_decode"]




def build_seq2seq(source_vocab_size: int, target_vocab_size: int, *,
                  embed_dim: int = 32,
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
        integer(value, name, low=low)
    L = keras.layers
    source_embedding = L.Embedding(source_vocab_size, embed_dim, mask_zero=True,
                                   name="source_embedding")
    encoder_gru = L.Bidirectional(L.GRU(units, return_sequences=True,
                                        return_state=True),
                                  name="encoder_gru")
    join_states = L.Concatenate(name="encoder_state")
    target_embedding = L.Embedding(target_vocab_size, embed_dim,
                                   name="target_embedding")
    decoder_gru = L.GRU(2 * units, return_sequences=True, name="decoder_gru")
    cross_attention = L.MultiHeadAttention(num_heads=1, key_dim=2 * units,
                                           name="cross_attention")
    join_context = L.Concatenate(name="context_and_state")
    attentional = L.Dense(2 * units, activation="tanh", name="attentional")
    output = L.Dense(target_vocab_size, activation="softmax", name="output")

    def decode(target_in, encoder_outputs, state, source):
        # keep: (batch, 1, S)
        keep = keras.ops.expand_dims(keras.ops.not_equal(source, 0), 1)
        states = decoder_gru(target_embedding(target_in), initial_state=state)
        context, weights = cross_attention(states, encoder_outputs,
                                           attention_mask=keep,
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


def greedy_decode(encoder: keras.Model, decoder: keras.Model, source_ids, *,
                  start_id: int, max_length: int) -> tuple[np.ndarray, np.ndarray]:
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
    TypeError
        If ``source_ids`` is not an integer array or ``max_length`` not an integer.
    ValueError
        If ``source_ids`` is not 2-D, has negative ids or a row of padding only, or
        ``max_length`` < 1.
    """
    source = token_ids(source_ids, "source_ids")
    max_length = positive_int(max_length, "max_length")
    encoder_outputs, state = (np.asarray(a) for a in encoder(source, training=False))
    step = as_graph(decoder)
    ids = np.full((len(source), 1), start_id, dtype=np.int32)
    with warnings.catch_warnings():
        # 입력 위치가 하나(S = 1)이면 Keras는 키 하나에 대한 소프트맥스가 늘 1이라고
        # 경고한다. 키가 하나인 어텐션에서는 그것이 맞는 값이므로 경고를 끈다.
        warnings.filterwarnings("ignore", message="You are using a softmax over axis")
        for _ in range(max_length):
            probs, weights = step(ids, encoder_outputs, state, source)
            next_id = np.argmax(np.asarray(probs)[:, -1], axis=-1).astype(np.int32)
            ids = np.concatenate([ids, next_id[:, None]], axis=1)
    return ids[:, 1:], np.asarray(weights)[:, 0]
