"""The Keras twin of :class:`helpers.associative_recall.RecallModel`: a one-layer recall model.

ids → ``embedding`` → ``token_shift`` (:class:`TokenShift`) → ``mixer`` → ``logits``. The
mixer is ``keras.layers.MultiHeadAttention`` with a causal mask (softmax attention),
:class:`helpers.keras_linear_attention.TokenMixer` (linear attention, DeltaNet, Gated
DeltaNet) or a sparse attention of :mod:`helpers.keras_sparse_attention` (a sliding window,
DeepSeek's top-k, NSA). For the first two kinds,
:meth:`helpers.associative_recall.RecallModel.from_keras` copies the weights and gives the
same logits (tested). Taught in chapters 14 and 17. Imports TensorFlow/Keras (through
``helpers._tensorflow``).
"""

from __future__ import annotations

from . import _checks
from ._tensorflow import keras
from .associative_recall import MIXERS
from .keras_linear_attention import TokenMixer
from .keras_sparse_attention import NativeSparseAttention, TopKAttention, WindowAttention

__all__ = ["TokenShift", "build_recall_model", "SPARSE_MIXERS"]

SPARSE_MIXERS = {"window": WindowAttention, "topk": TopKAttention,
                 "nsa": NativeSparseAttention}


@keras.saving.register_keras_serializable(package="helpers")
class TokenShift(keras.layers.Layer):
    """``[x_t, x_{t-1}]`` for each position (zeros before the first); no weights.

    The Keras twin of :func:`helpers.associative_recall.shift_tokens`.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d)

    Returns
    -------
    tensor, shape (batch, n, 2 d)

    Notes
    -----
    Taught in chapter 14.

    Examples
    --------
    >>> y = TokenShift()(keras.ops.reshape(keras.ops.arange(3.0), (1, 3, 1)))
    >>> keras.ops.convert_to_numpy(y)[0]
    array([[0., 0.],
           [1., 0.],
           [2., 1.]], dtype=float32)
    """

    def call(self, x):
        previous = keras.ops.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))
        return keras.ops.concatenate([x, previous], axis=-1)

    def compute_output_shape(self, x_shape):
        last = None if x_shape[-1] is None else 2 * x_shape[-1]
        return (*x_shape[:-1], last)


def build_recall_model(vocab_size: int, *, mixer: str, d_embed: int = 16, num_heads: int = 2,
                       head_dim: int = 8, chunk_size: int = 16, **sparse):
    """A one-layer model for associative recall: token ids → logits.

    Parameters
    ----------
    vocab_size : int
        Token ids 0 .. vocab_size - 1, at least 2.
    mixer : {"softmax", "linear", "delta", "gated_delta", "window", "topk", "nsa"}
        Causal softmax attention (``keras.layers.MultiHeadAttention``), the rule of a
        :class:`helpers.keras_linear_attention.TokenMixer`, or a one-head sparse attention
        of :mod:`helpers.keras_sparse_attention` (``SPARSE_MIXERS[mixer]``: window,
        top-k, NSA; ``num_heads`` must then be 1).
    d_embed : int, default 16
        Embedding size; the mixer sees ``2 * d_embed`` features (after the token shift).
    num_heads, head_dim : int, default 2 and 8
        The mixer's heads. For the rules the state is ``num_heads`` matrices of
        ``head_dim x head_dim``, whatever the length.
    chunk_size : int, default 16
        The rules' chunk size.
    **sparse
        The sparse layer's own arguments after ``head_dim`` (e.g. ``window=16`` or
        ``top_k=8, kl_weight=0.1``); only for the sparse kinds.

    Returns
    -------
    keras.Model
        ``ids`` (batch, n) int32 → logits (batch, n, vocab_size) float32, no softmax.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is out of range, ``mixer`` is unknown, or ``sparse`` arguments are given
        to a dense kind.

    Notes
    -----
    Taught in chapter 14 (chapter 17 for the sparse kinds); the NumPy twin is
    :class:`helpers.associative_recall.RecallModel`.

    Examples
    --------
    >>> model = build_recall_model(10, mixer="gated_delta")
    >>> tuple(model(keras.ops.ones((2, 6), dtype="int32")).shape)
    (2, 6, 10)
    """
    vocab_size = _checks.integer(vocab_size, "vocab_size", low=2)
    kind = _checks.one_of(mixer, "mixer", (*MIXERS, *SPARSE_MIXERS))
    d = _checks.positive_int(d_embed, "d_embed")
    if kind in SPARSE_MIXERS and num_heads != 1:
        raise ValueError(f"the sparse mixers have one head: num_heads must be 1 for "
                         f"mixer={kind!r}; got {num_heads}")
    if sparse and kind not in SPARSE_MIXERS:
        raise ValueError(f"arguments {sorted(sparse)} are for the sparse mixers "
                         f"{tuple(SPARSE_MIXERS)}; got mixer={kind!r}")
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(vocab_size, d, name="embedding")(ids)
    x = TokenShift(name="token_shift")(x)
    if kind == "softmax":
        layer = keras.layers.MultiHeadAttention(num_heads, head_dim, name="mixer")
        x = layer(x, x, use_causal_mask=True)
    elif kind in SPARSE_MIXERS:
        x = SPARSE_MIXERS[kind](head_dim, name="mixer", **sparse)(x)
    else:
        x = TokenMixer(num_heads, head_dim, rule=kind, chunk_size=chunk_size, name="mixer")(x)
    logits = keras.layers.Dense(vocab_size, name="logits")(x)
    return keras.Model(ids, logits, name=f"recall_{kind}")
