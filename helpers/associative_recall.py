"""Multi-query associative recall (MQAR): the task, and a small recall model in NumPy.

A sequence lists key-value pairs, ``k_1 v_1 k_2 v_2 ... k_P v_P``, and then asks for keys
again, ``k_a k_b ...``: at each query the model must predict the value that followed that key.
A model that keeps every past token (softmax attention with its cache) can look the key up; a
model with a fixed-size state must have stored the pair in it. Arora et al. (2023) found that
this task separates the two kinds of model where language-model perplexity hardly does.

:func:`multi_query_recall` generates the task; :class:`RecallModel` is the NumPy twin of
:func:`helpers.keras_associative_recall.build_recall_model` (``from_keras`` copies the weights
and gives the same logits); :func:`recall_accuracy` scores predictions at the query positions.
Taught in chapter 14. Imports only NumPy.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .attention import MultiHeadAttention
from .linear_attention import RULES, TokenMixer

__all__ = ["multi_query_recall", "recall_accuracy", "shift_tokens", "RecallModel", "MIXERS",
           "ZOOLOGY_MQAR"]

MIXERS = ("softmax", *RULES)

#: The training budget of Zoology's MQAR comparison (Arora et al. 2023, figure 2), which
#: chapter 14 sets beside its own: vocabulary, training sequences, epochs and the learning
#: rates swept for every model (the best run is reported).
ZOOLOGY_MQAR = {
    "vocab_size": 8_192,
    "num_examples": 100_000,
    "max_epochs": 64,
    "learning_rates": tuple(float(lr) for lr in np.logspace(-4, -2, 4)),
    "source": ("HazyResearch/zoology, zoology/experiments/paper_configs/"
               "iclr24_zoology_figure2/configs.py (commit 4261f62): VOCAB_SIZE, "
               "MQARConfig(num_examples=100_000), max_epochs=64, lr in np.logspace(-4, -2, 4)"),
}


def multi_query_recall(num_examples: int, num_pairs: int, *, num_keys: int,
                       num_values: int, length: int | None = None, rng):
    """Sequences of key-value pairs followed by queries for every key, in random order.

    Token ids: 0 is padding, keys are ``1 .. num_keys`` and values
    ``num_keys + 1 .. num_keys + num_values`` (two separate vocabularies, as in the paper).
    Each example draws ``num_pairs`` different keys and a value for each (values may repeat),
    writes ``k_1 v_1 ... k_P v_P``, then the ``P`` keys again in a random order. The target at
    a query position is that key's value (the next token a language model would predict);
    every other position has target 0 and weight 0. Padding fills the row to ``length``
    (at the end, so that a causal model reads the same sequence).

    Parameters
    ----------
    num_examples : int
        Rows, at least 1.
    num_pairs : int
        Pairs per example, from 1 to ``num_keys``.
    num_keys, num_values : int
        Sizes of the key and value vocabularies, at least 1 and 2.
    length : int, optional
        Row length, at least ``3 * num_pairs`` (the default).
    rng : numpy.random.Generator

    Returns
    -------
    inputs : numpy.ndarray, shape (num_examples, length), int32
        Token ids.
    targets : numpy.ndarray, shape (num_examples, length), int32
        The value at each query position, else 0.
    weights : numpy.ndarray, shape (num_examples, length), float32
        1 at the query positions, else 0.

    Raises
    ------
    TypeError
        If a size is not an integer or ``rng`` is not a ``numpy.random.Generator``.
    ValueError
        If a size is out of range or ``length`` is shorter than ``3 * num_pairs``.

    Notes
    -----
    Arora et al. (2023), "Zoology: Measuring and Improving Recall in Efficient Language
    Models", arXiv:2312.04927 (the task, MQAR). Their released generator puts the queries at
    positions drawn from a power law among filler tokens; here they follow the pairs directly,
    so the length is ``3 * num_pairs``. Taught in chapter 14.

    Examples
    --------
    >>> x, y, w = multi_query_recall(1, 2, num_keys=4, num_values=3, length=7,
    ...                              rng=np.random.default_rng(0))
    >>> x, y
    (array([[4, 5, 3, 7, 3, 4, 0]], dtype=int32), array([[0, 0, 0, 0, 7, 5, 0]], dtype=int32))
    >>> w
    array([[0., 0., 0., 0., 1., 1., 0.]], dtype=float32)
    """
    rows = _checks.positive_int(num_examples, "num_examples")
    num_keys = _checks.positive_int(num_keys, "num_keys")
    num_values = _checks.integer(num_values, "num_values", low=2)
    pairs = _checks.integer(num_pairs, "num_pairs", low=1, high=num_keys)
    length = (3 * pairs if length is None
              else _checks.integer(length, "length", low=3 * pairs))
    rng = _checks.generator(rng)
    keys = np.argsort(rng.random((rows, num_keys)), axis=1)[:, :pairs] + 1
    values = rng.integers(num_keys + 1, num_keys + num_values + 1, size=(rows, pairs))
    order = np.argsort(rng.random((rows, pairs)), axis=1)
    inputs = np.zeros((rows, length), dtype=np.int32)
    targets = np.zeros((rows, length), dtype=np.int32)
    inputs[:, 0:2 * pairs:2], inputs[:, 1:2 * pairs:2] = keys, values
    inputs[:, 2 * pairs:3 * pairs] = np.take_along_axis(keys, order, axis=1)
    targets[:, 2 * pairs:3 * pairs] = np.take_along_axis(values, order, axis=1)
    weights = np.zeros((rows, length), dtype=np.float32)
    weights[:, 2 * pairs:3 * pairs] = 1.0
    return inputs, targets, weights


def recall_accuracy(logits, targets, weights) -> float:
    """Share of the weighted (query) positions whose highest logit is the target.

    Parameters
    ----------
    logits : array_like, shape (batch, n, vocab), float
    targets : array_like, shape (batch, n), int
    weights : array_like, shape (batch, n)
        Nonzero at the positions that count.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        If the shapes do not fit or no position counts.

    Examples
    --------
    >>> logits = np.eye(3)[[[0, 2, 1]]]               # predicts 0, 2, 1
    >>> recall_accuracy(logits, [[0, 2, 2]], [[0, 1, 1]])
    0.5
    """
    logits = _checks.float_array(logits, "logits", ndim=3, axes="(batch, n, vocab)")
    targets = _checks.int_array(targets, "targets", ndim=2, low=0)
    weights = _checks.float_array(weights, "weights", ndim=2, axes="(batch, n)")
    if targets.shape != logits.shape[:2] or weights.shape != logits.shape[:2]:
        raise ValueError(f"targets and weights must have shape {logits.shape[:2]} (logits' "
                         f"batch, n); got {targets.shape} and {weights.shape}")
    counted = weights != 0
    if not counted.any():
        raise ValueError("weights must be nonzero at one position at least; got all zeros")
    return float(np.mean(logits.argmax(-1)[counted] == targets[counted]))


def shift_tokens(x) -> np.ndarray:
    """Each position's vector beside the previous position's (zeros before the first).

    Parameters
    ----------
    x : array_like, shape (batch, n, d), float

    Returns
    -------
    numpy.ndarray, shape (batch, n, 2 d)
        ``[x_t, x_{t-1}]``.

    Notes
    -----
    The smallest causal convolution (two taps, no weights); the released Gated DeltaNet layer
    has a short convolution of four taps in its place (Yang, Kautz and Hatamizadeh 2025,
    section 3.4). It lets a single mixing layer write the pair ``(k, v)`` at the value's
    position. Taught in chapter 14.

    Examples
    --------
    >>> shift_tokens(np.arange(3.0).reshape(1, 3, 1))[0]
    array([[0., 0.],
           [1., 0.],
           [2., 1.]])
    """
    x = _checks.float_array(x, "x", ndim=3, axes="(batch, n, d)")
    previous = np.concatenate([np.zeros_like(x[:, :1]), x[:, :-1]], axis=1)
    return np.concatenate([x, previous], axis=-1)


class RecallModel:
    """Embedding → token shift → one token-mixing layer → logits, in NumPy.

    ``logits = mix(shift_tokens(E[ids])) W + b``; the mixing layer is causal softmax attention
    (:class:`helpers.attention.MultiHeadAttention`) or a
    :class:`helpers.linear_attention.TokenMixer` with the rule ``"linear"``, ``"delta"`` or
    ``"gated_delta"``. No position encoding: the token shift tells the layer which key a
    value belongs to, and the task needs no other order.

    Parameters
    ----------
    embedding : array_like, shape (vocab, d)
    mixer : MultiHeadAttention or TokenMixer
        Maps (batch, n, 2 d) to (batch, n, 2 d).
    head_kernel : array_like, shape (2 d, vocab)
    head_bias : array_like, shape (vocab,)

    Raises
    ------
    TypeError, ValueError
        If an array is not a finite float array or the shapes disagree.

    Notes
    -----
    Taught in chapter 14; the Keras twin is
    :func:`helpers.keras_associative_recall.build_recall_model` (:meth:`from_keras`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mixer = TokenMixer.random(4, num_heads=1, rule="delta", rng=rng)
    >>> model = RecallModel(rng.normal(size=(5, 2)), mixer, rng.normal(size=(4, 5)), np.zeros(5))
    >>> model(np.array([[1, 2, 3]])).shape
    (1, 3, 5)
    """

    def __init__(self, embedding, mixer, head_kernel, head_bias):
        self.embedding = _checks.float_array(embedding, "embedding", ndim=2,
                                             axes="(vocab, d)")
        vocab, d = self.embedding.shape
        self.head_kernel = _checks.weight(head_kernel, "head_kernel", (2 * d, vocab))
        self.head_bias = _checks.weight(head_bias, "head_bias", (vocab,))
        if not isinstance(mixer, (MultiHeadAttention, TokenMixer)):
            raise TypeError("mixer must be a MultiHeadAttention or TokenMixer; got "
                            f"{type(mixer).__name__}")
        self.mixer = mixer

    @property
    def kind(self) -> str:
        """``"softmax"`` or the mixer's rule."""
        return "softmax" if isinstance(self.mixer, MultiHeadAttention) else self.mixer.rule

    @classmethod
    def from_keras(cls, model) -> RecallModel:
        """Copy a built model of :func:`helpers.keras_associative_recall.build_recall_model`."""
        mixer_layer = model.get_layer("mixer")
        if mixer_layer.__class__.__name__ == "MultiHeadAttention":
            mixer = MultiHeadAttention.from_keras(mixer_layer)
        else:
            mixer = TokenMixer.from_keras(mixer_layer)
        head = model.get_layer("logits")
        return cls(np.asarray(model.get_layer("embedding").embeddings), mixer,
                   np.asarray(head.kernel), np.asarray(head.bias))

    def __call__(self, ids) -> np.ndarray:
        """Logits (batch, n, vocab), float64, for token ids (batch, n)."""
        ids = _checks.int_array(ids, "ids", ndim=2, low=0, high=len(self.embedding) - 1)
        x = shift_tokens(self.embedding[ids])
        if self.kind == "softmax":
            mixed = self.mixer(x, x, use_causal_mask=True)
        else:
            mixed = self.mixer(x)
        return mixed @ self.head_kernel + self.head_bias
