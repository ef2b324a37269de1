"""The Transformer's building blocks in NumPy: the feed-forward sublayers, encoder and decoder
layers.

The positions (the sinusoidal encoding, and RoPE and ALiBi of chapter 11) live in
:mod:`helpers.positions`, layer normalisation and RMSNorm in :mod:`helpers.normalization`;
this module re-exports them, so ``from helpers.transformer import positional_encoding``
works as before.

This module imports only NumPy (never TensorFlow or Keras), like :mod:`helpers.attention`;
it builds on :class:`~helpers.attention.MultiHeadAttention`. Taught in chapter 8; the
Keras twins of the layers are in :mod:`helpers.keras_transformer`, and every class here has
a ``from_keras`` that copies their weights, so the two give the same numbers.

Axis names: ``batch``; ``n`` (sequence length; ``n_target`` and ``n_source`` for the
decoder's two sequences); ``d_model`` (the width of every token vector between sublayers);
``d_ff`` (the hidden width of the feed-forward network); ``num_heads``; ``key_dim =
d_model // num_heads`` (each head's query, key and value size).

Mask convention (as in :mod:`helpers.attention` and Keras): a boolean array, ``True`` where a
query position may attend to a key position.

Layer normalisation placement. ``norm_first=False`` is the original *post-LN* layer of
Vaswani et al. (2017), section 3.1: ``LayerNorm(x + Sublayer(x))``. ``norm_first=True`` is
the *pre-LN* layer studied by Xiong et al. (2020): ``x + Sublayer(LayerNorm(x))``. A pre-LN
stack leaves its output un-normalised, so a pre-LN model applies one more
:class:`LayerNormalization` after its last layer; the layers here do not include that final
norm (the model that stacks them adds it).
"""

from __future__ import annotations

import numpy as np

from . import _checks
from ._initializers import glorot_uniform
from .attention import MultiHeadAttention
from .normalization import LayerNormalization, RMSNorm, rms_norm
from .positions import (
    alibi_bias,
    alibi_slopes,
    positional_encoding,
    positional_shift_matrix,
    rope_frequencies,
    rotary_position_embedding,
)

__all__ = ["positional_encoding", "positional_shift_matrix", "rotary_position_embedding",
           "alibi_slopes", "alibi_bias", "LayerNormalization", "FeedForward", "EncoderLayer",
           "DecoderLayer", "RMSNorm", "rms_norm", "swiglu", "SwiGLU", "rope_frequencies"]


# --- checks shared by the classes ----------------------------------------------------------------

def _sequence(x, name: str, d_model: int) -> np.ndarray:
    """``x`` as a float array of shape (batch, n, d_model)."""
    arr = _checks.float_array(x, name, min_rank=3, axes="(batch, n, d_model)")
    if arr.ndim != 3 or arr.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape (batch, n, d_model={d_model}); "
                         f"got shape {arr.shape}")
    return arr


def _attention_mask(mask, name: str, scores_shape: tuple):
    """``None``, or a bool mask of 3 axes that broadcasts to (batch, n_q, n_k)."""
    if mask is None:
        return None
    mask = _checks.bool_array(mask, name, meaning="True = may attend")
    if mask.ndim != 3:
        raise ValueError(f"{name} must have 3 axes: (batch, 1, n_k) as padding_mask() returns, "
                         f"or (batch, n_q, n_k); got shape {mask.shape}")
    _checks.broadcast({name: mask.shape}, target=scores_shape,
                      what="attention scores' shape (batch, n_q, n_k)")
    return mask


def _keras_twin(layer, class_name: str) -> None:
    if type(layer).__name__ != class_name:
        raise TypeError(f"layer must be a helpers.keras_transformer.{class_name}; "
                        f"got {type(layer).__name__}")
    _checks.built(layer, class_name)


# --- the two position-wise sublayers -------------------------------------------------------------

def swiglu(x, w_gate, w_up, w_down) -> np.ndarray:
    """The SwiGLU feed-forward network: ``(silu(x W_gate) * (x W_up)) W_down``, no biases.

    Parameters
    ----------
    x : array_like of float, shape (..., d_model)
    w_gate, w_up : array_like of float, shape (d_model, d_ff)
        The gate and the value projections (Llama's ``gate_proj`` and ``up_proj``).
    w_down : array_like of float, shape (d_ff, d_model)
        The projection back (Llama's ``down_proj``).

    Returns
    -------
    numpy.ndarray, shape (..., d_model)

    Raises
    ------
    TypeError
        If an argument is not real numeric.
    ValueError
        If an argument is not finite or the shapes do not fit together.

    Notes
    -----
    Shazeer (2020), "GLU Variants Improve Transformer", equation (6) without biases, with
    ``silu(z) = z * sigmoid(z)`` (Swish with beta = 1). Three matrices instead of the two
    of :class:`FeedForward`, so Llama takes ``d_ff`` about 2/3 of ``4 * d_model`` to keep
    the parameter count. Taught in chapter 11.

    Examples
    --------
    >>> one = np.ones((1, 1))
    >>> swiglu(np.array([[2.0]]), one, one, one).round(3)  # silu(2) * 2
    array([[3.523]])
    """
    x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
    w_gate = _checks.float_array(w_gate, "w_gate", ndim=2, axes="(d_model, d_ff)")
    if w_gate.shape[0] != x.shape[-1]:
        raise ValueError(f"w_gate must have shape (d_model={x.shape[-1]}, d_ff); "
                         f"got shape {w_gate.shape}")
    w_up = _checks.weight(w_up, "w_up", w_gate.shape)
    w_down = _checks.weight(w_down, "w_down", w_gate.shape[::-1])
    gate = x @ w_gate
    return (gate / (1 + np.exp(-gate)) * (x @ w_up)) @ w_down


class SwiGLU:
    """The SwiGLU feed-forward network as a layer: :func:`swiglu` with its three matrices.

    Takes the place of :class:`FeedForward` in a Llama-style layer.

    Parameters
    ----------
    w_gate, w_up : array_like, shape (d_model, d_ff)
    w_down : array_like, shape (d_ff, d_model)
        As in :func:`swiglu`; checked once here, not at every call.

    Raises
    ------
    TypeError
        If a weight is not real numeric.
    ValueError
        If a weight is not finite or the shapes do not fit together.

    Notes
    -----
    Shazeer (2020), equation (6) without biases. Taught in chapter 11; chapter 15 runs a
    real model's 30 of them.

    Examples
    --------
    >>> one = np.ones((1, 1))
    >>> SwiGLU(one, one, one)(np.array([[2.0]])).round(3)
    array([[3.523]])
    """

    def __init__(self, w_gate, w_up, w_down):
        self.w_gate = _checks.float_array(w_gate, "w_gate", ndim=2, axes="(d_model, d_ff)")
        self.w_up = _checks.weight(w_up, "w_up", self.w_gate.shape)
        self.w_down = _checks.weight(w_down, "w_down", self.w_gate.shape[::-1])

    @property
    def d_model(self) -> int:
        return self.w_gate.shape[0]

    @property
    def d_ff(self) -> int:
        return self.w_gate.shape[1]

    def count_params(self) -> int:
        """``3 * d_model * d_ff``: three matrices, no biases."""
        return self.w_gate.size + self.w_up.size + self.w_down.size

    def __call__(self, x) -> np.ndarray:
        """Apply the network to every token vector of ``x``, shape (..., d_model).

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.features(x, "x", self.d_model)
        # swiglu's formula; the weights were checked once, in __init__, not at every call
        gate = x @ self.w_gate
        return (gate / (1 + np.exp(-gate)) * (x @ self.w_up)) @ self.w_down


class FeedForward:
    """The position-wise feed-forward network: ``FFN(x) = max(0, x W1 + b1) W2 + b2``.

    The same two-layer network is applied to every token vector separately.

    Parameters
    ----------
    w1 : array_like, shape (d_model, d_ff)
    b1 : array_like, shape (d_ff,)
    w2 : array_like, shape (d_ff, d_model)
    b2 : array_like, shape (d_model,)
        In the layout of ``keras.layers.Dense`` (``kernel``, ``bias``): ``x @ w1 + b1``.

    Raises
    ------
    TypeError
        If a weight is not real numeric.
    ValueError
        If a weight is not finite or the shapes do not fit together.

    Notes
    -----
    Vaswani et al. (2017), section 3.3, equation (2); there ``d_model = 512`` and
    ``d_ff = 2048``. Taught in chapter 8.
    """

    def __init__(self, w1, b1, w2, b2):
        self.w1 = _checks.float_array(w1, "w1")
        if self.w1.ndim != 2:
            raise ValueError(f"w1 must have shape (d_model, d_ff); got shape {self.w1.shape}")
        d_model, d_ff = self.w1.shape
        self.b1 = _checks.weight(b1, "b1", (d_ff,))
        self.w2 = _checks.weight(w2, "w2", (d_ff, d_model))
        self.b2 = _checks.weight(b2, "b2", (d_model,))

    @classmethod
    def random(cls, d_model: int, d_ff: int, *, rng: np.random.Generator) -> FeedForward:
        """Keras's initialisation of two ``Dense`` layers: Glorot-uniform kernels, zero biases."""
        d_model = _checks.positive_int(d_model, "d_model")
        d_ff = _checks.positive_int(d_ff, "d_ff")
        rng = _checks.generator(rng)
        return cls(glorot_uniform(rng, (d_model, d_ff), d_model), np.zeros(d_ff),
                   glorot_uniform(rng, (d_ff, d_model), d_ff), np.zeros(d_model))

    @classmethod
    def from_keras(cls, dense_1, dense_2) -> FeedForward:
        """Copy two built ``keras.layers.Dense``: ``Dense(d_ff, "relu")``, then ``Dense(d_model)``.

        Raises
        ------
        ValueError
            If a layer is not built, ``dense_1`` is not ReLU or ``dense_2`` not linear.
        """
        for layer, what, activation in ((dense_1, "dense_1", "relu"),
                                        (dense_2, "dense_2", "linear")):
            _checks.built(layer, f"Dense layer {what}")
            name = getattr(layer.activation, "__name__", repr(layer.activation))
            if name != activation:
                raise ValueError(f"{what} must have activation {activation!r}; got {name!r}")
        return cls(np.asarray(dense_1.kernel), np.asarray(dense_1.bias),
                   np.asarray(dense_2.kernel), np.asarray(dense_2.bias))

    @property
    def d_model(self) -> int:
        return self.w1.shape[0]

    @property
    def d_ff(self) -> int:
        return self.w1.shape[1]

    def count_params(self) -> int:
        """``2 * d_model * d_ff + d_ff + d_model``: two kernels and two biases."""
        return self.w1.size + self.b1.size + self.w2.size + self.b2.size

    def __call__(self, x) -> np.ndarray:
        """Apply the network to every token vector of ``x``, shape (..., d_model).

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.features(x, "x", self.d_model)
        return np.maximum(0, x @ self.w1 + self.b1) @ self.w2 + self.b2


# --- encoder and decoder layers ----------------------------------------------------------------

def _d_model_of(part) -> set:
    """The feature sizes a sublayer reads and writes (one value if it is consistent)."""
    if isinstance(part, MultiHeadAttention):
        return {part.query_kernel.shape[0], part.key_kernel.shape[0],
                part.value_kernel.shape[0], part.output_kernel.shape[2]}
    return {part.d_model}


class _TransformerLayer:
    """What encoder and decoder layers share: the checked sublayers and Add & Norm."""

    _PARTS: tuple = ()  # (argument name, expected class) of each sublayer, in __init__'s order

    def __init__(self, parts: dict, norm_first):
        for name, kind in self._PARTS:
            if not isinstance(parts[name], kind):
                names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple)
                                                         else (kind,)))
                raise TypeError(f"{name} must be a helpers {names}; got "
                                f"{type(parts[name]).__name__}")
        sizes = {name: _d_model_of(part) for name, part in parts.items()}
        if len(set().union(*sizes.values())) != 1:
            raise ValueError("every sublayer must read and write vectors of one width d_model; "
                             f"got {', '.join(f'{n} {sorted(s)}' for n, s in sizes.items())}")
        for name, part in parts.items():
            setattr(self, name, part)
        self.norm_first = _checks.boolean(norm_first, "norm_first")

    @property
    def d_model(self) -> int:
        return self.feed_forward.d_model

    @property
    def num_heads(self) -> int:
        return self.self_attention.num_heads

    def count_params(self) -> int:
        """The number of weights, as Keras's ``count_params()`` counts them."""
        return sum(getattr(self, name).count_params() for name, _ in self._PARTS)

    def _residual(self, x, norm, sublayer):
        """Sublayer with residual connection and layer norm; ``sublayer`` returns (y, extra).

        post-LN: ``norm(x + y)`` with ``y = sublayer(x)``; pre-LN: ``x + y`` with
        ``y = sublayer(norm(x))``. Returns the result and ``extra`` (attention weights).
        """
        y, extra = sublayer(norm(x) if self.norm_first else x)
        return (x + y if self.norm_first else norm(x + y)), extra

    def _feed_forward_block(self, x):
        return self._residual(x, self.feed_forward_norm, lambda h: (self.feed_forward(h), None))[0]


class EncoderLayer(_TransformerLayer):
    """One Transformer encoder layer: self-attention, then the feed-forward network.

    Each of the two sublayers has a residual connection and a layer norm, placed as
    ``norm_first`` says (see the module docstring)::

        post-LN:  x = LN1(x + SelfAttention(x));      x = LN2(x + FFN(x))
        pre-LN:   x = x + SelfAttention(LN1(x));      x = x + FFN(LN2(x))

    Parameters
    ----------
    self_attention : helpers.attention.MultiHeadAttention
        Reads and writes vectors of width d_model.
    feed_forward : FeedForward
    self_attention_norm, feed_forward_norm : LayerNormalization
        LN1 and LN2 above.
    norm_first : bool, default False
        ``False``: post-LN (Vaswani et al. 2017); ``True``: pre-LN (Xiong et al. 2020). A
        pre-LN stack needs a final :class:`LayerNormalization` after its last layer, which
        this class does not include.

    Raises
    ------
    TypeError
        If a sublayer is not of the class above or ``norm_first`` is not a bool.
    ValueError
        If the sublayers disagree on d_model.

    Notes
    -----
    Vaswani et al. (2017), section 3.1 and figure 1 (left); Xiong et al. (2020), "On Layer
    Normalization in the Transformer Architecture", figure 1. No dropout: this is the layer
    at inference time. Taught in chapter 8; the Keras twin is
    ``helpers.keras_transformer.TransformerEncoderLayer`` (see :meth:`from_keras`).

    Examples
    --------
    >>> layer = EncoderLayer.random(8, 2, 16, rng=np.random.default_rng(0))
    >>> layer(np.ones((3, 5, 8)), mask=np.ones((3, 1, 5), dtype=bool)).shape
    (3, 5, 8)
    >>> layer.count_params()  # 4 (8^2 + 8) + (2*8*16 + 16 + 8) + 2 (2*8)
    600
    """

    _PARTS = (("self_attention", MultiHeadAttention), ("feed_forward", FeedForward),
              ("self_attention_norm", LayerNormalization),
              ("feed_forward_norm", LayerNormalization))

    def __init__(self, self_attention, feed_forward, self_attention_norm, feed_forward_norm, *,
                 norm_first: bool = False):
        super().__init__({"self_attention": self_attention, "feed_forward": feed_forward,
                          "self_attention_norm": self_attention_norm,
                          "feed_forward_norm": feed_forward_norm}, norm_first)

    @classmethod
    def random(cls, d_model: int, num_heads: int, d_ff: int, *, rng: np.random.Generator,
               norm_first: bool = False) -> EncoderLayer:
        """Random weights as Keras initialises them (Glorot-uniform kernels, zero biases,
        ``gamma = 1``, ``beta = 0``), with ``key_dim = d_model // num_heads``.

        Raises
        ------
        TypeError
            If a size is not an integer or ``rng`` is not a ``numpy.random.Generator``.
        ValueError
            If a size is below 1 or ``num_heads`` does not divide ``d_model``.
        """
        key_dim, rng = _checks.key_dim(d_model, num_heads), _checks.generator(rng)
        return cls(MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   FeedForward.random(d_model, d_ff, rng=rng),
                   LayerNormalization.initial(d_model), LayerNormalization.initial(d_model),
                   norm_first=norm_first)

    @classmethod
    def from_keras(cls, layer) -> EncoderLayer:
        """Copy the weights (and ``norm_first``) of a built
        ``helpers.keras_transformer.TransformerEncoderLayer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``TransformerEncoderLayer``.
        ValueError
            If it is not built.
        """
        _keras_twin(layer, "TransformerEncoderLayer")
        return cls(MultiHeadAttention.from_keras(layer.self_attention),
                   FeedForward.from_keras(layer.ffn_1, layer.ffn_2),
                   LayerNormalization.from_keras(layer.self_attention_norm),
                   LayerNormalization.from_keras(layer.feed_forward_norm),
                   norm_first=layer.norm_first)

    def __call__(self, x, mask=None) -> np.ndarray:
        """Encode ``x``.

        Parameters
        ----------
        x : array_like, shape (batch, n, d_model), real
            Token vectors (embeddings plus positional encoding, or a previous layer's output).
        mask : array_like of bool, optional
            ``True`` where a position may attend to another: shape (batch, 1, n) from
            ``helpers.attention.padding_mask(lengths, n)``, or (batch, n, n). ``None``: every
            position attends to every position.

        Returns
        -------
        numpy.ndarray, shape (batch, n, d_model)
            float32 for float32 inputs and weights, else float64. Rows at padded positions
            are computed too but mean nothing.

        Raises
        ------
        TypeError
            If ``x`` is not real numeric or ``mask`` is not boolean.
        ValueError
            If ``x`` does not have shape (batch, n, d_model) or is not finite, or ``mask``
            does not have 3 axes or does not broadcast to (batch, n, n).
        """
        x = _sequence(x, "x", self.d_model)
        batch, n = x.shape[:2]
        mask = _attention_mask(mask, "mask", (batch, n, n))
        x, _ = self._residual(x, self.self_attention_norm, lambda h: self.self_attention(
            h, h, attention_mask=mask, return_attention_scores=True))
        return self._feed_forward_block(x)


class DecoderLayer(_TransformerLayer):
    """One Transformer decoder layer: causal self-attention, cross-attention, feed-forward.

    ::

        post-LN:  x = LN1(x + CausalSelfAttention(x))
                  x = LN2(x + CrossAttention(x, context))
                  x = LN3(x + FFN(x))
        pre-LN:   x = x + CausalSelfAttention(LN1(x))
                  x = x + CrossAttention(LN2(x), context)
                  x = x + FFN(LN3(x))

    The cross-attention's queries come from the decoder, its keys and values from
    ``context``, the encoder's output.

    Parameters
    ----------
    self_attention, cross_attention : helpers.attention.MultiHeadAttention
        Both read and write vectors of width d_model.
    feed_forward : FeedForward
    self_attention_norm, cross_attention_norm, feed_forward_norm : LayerNormalization
        LN1, LN2 and LN3 above.
    norm_first : bool, default False
        ``False``: post-LN; ``True``: pre-LN, without the final norm of a pre-LN stack (as in
        :class:`EncoderLayer`).

    Raises
    ------
    TypeError
        If a sublayer is not of the class above or ``norm_first`` is not a bool.
    ValueError
        If the sublayers disagree on d_model.

    Notes
    -----
    Vaswani et al. (2017), section 3.1, section 3.2.3 (masked self-attention,
    encoder-decoder attention) and figure 1 (right); Xiong et al. (2020) for pre-LN. No
    dropout. Taught in chapter 8; the Keras twin is
    ``helpers.keras_transformer.TransformerDecoderLayer``.

    Examples
    --------
    >>> layer = DecoderLayer.random(8, 2, 16, rng=np.random.default_rng(0))
    >>> out, weights = layer(np.ones((3, 4, 8)), np.ones((3, 6, 8)),
    ...                      return_attention_scores=True)
    >>> out.shape, weights.shape  # weights: (batch, num_heads, n_target, n_source)
    ((3, 4, 8), (3, 2, 4, 6))
    """

    _PARTS = (("self_attention", MultiHeadAttention), ("cross_attention", MultiHeadAttention),
              ("feed_forward", FeedForward), ("self_attention_norm", LayerNormalization),
              ("cross_attention_norm", LayerNormalization),
              ("feed_forward_norm", LayerNormalization))

    def __init__(self, self_attention, cross_attention, feed_forward, self_attention_norm,
                 cross_attention_norm, feed_forward_norm, *, norm_first: bool = False):
        super().__init__({"self_attention": self_attention, "cross_attention": cross_attention,
                          "feed_forward": feed_forward,
                          "self_attention_norm": self_attention_norm,
                          "cross_attention_norm": cross_attention_norm,
                          "feed_forward_norm": feed_forward_norm}, norm_first)

    @classmethod
    def random(cls, d_model: int, num_heads: int, d_ff: int, *, rng: np.random.Generator,
               norm_first: bool = False) -> DecoderLayer:
        """Random weights as Keras initialises them; see :meth:`EncoderLayer.random`."""
        key_dim, rng = _checks.key_dim(d_model, num_heads), _checks.generator(rng)
        return cls(MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   MultiHeadAttention.random(d_model, num_heads, key_dim, rng=rng),
                   FeedForward.random(d_model, d_ff, rng=rng),
                   *(LayerNormalization.initial(d_model) for _ in range(3)),
                   norm_first=norm_first)

    @classmethod
    def from_keras(cls, layer) -> DecoderLayer:
        """Copy the weights (and ``norm_first``) of a built
        ``helpers.keras_transformer.TransformerDecoderLayer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``TransformerDecoderLayer``.
        ValueError
            If it is not built.
        """
        _keras_twin(layer, "TransformerDecoderLayer")
        return cls(MultiHeadAttention.from_keras(layer.self_attention),
                   MultiHeadAttention.from_keras(layer.cross_attention),
                   FeedForward.from_keras(layer.ffn_1, layer.ffn_2),
                   LayerNormalization.from_keras(layer.self_attention_norm),
                   LayerNormalization.from_keras(layer.cross_attention_norm),
                   LayerNormalization.from_keras(layer.feed_forward_norm),
                   norm_first=layer.norm_first)

    def __call__(self, x, context, context_mask=None, mask=None,
                 return_attention_scores: bool = False):
        """Decode ``x`` while attending to ``context``.

        Parameters
        ----------
        x : array_like, shape (batch, n_target, d_model), real
            The target tokens so far (shifted right during training).
        context : array_like, shape (batch, n_source, d_model), real
            The encoder's output.
        context_mask : array_like of bool, optional
            Which source positions each target position may attend to: (batch, 1, n_source)
            from ``padding_mask(source_lengths, n_source)``, or (batch, n_target, n_source).
        mask : array_like of bool, optional
            A mask on the self-attention, (batch, 1, n_target) or (batch, n_target,
            n_target), combined by logical and with the causal mask, which always applies
            (position i attends to positions 0..i).
        return_attention_scores : bool, default False
            Also return the cross-attention weights.

        Returns
        -------
        output : numpy.ndarray, shape (batch, n_target, d_model)
        weights : numpy.ndarray, shape (batch, num_heads, n_target, n_source)
            Only with ``return_attention_scores=True``: the cross-attention weights (after
            softmax; Keras calls them scores), which source positions each head of this layer
            read for each target position.

        Raises
        ------
        TypeError
            If ``x`` or ``context`` is not real numeric, a mask is not boolean, or
            ``return_attention_scores`` is not a bool.
        ValueError
            If ``x`` or ``context`` does not have shape (batch, n, d_model) or is not finite,
            their batch sizes do not broadcast, or a mask does not have 3 axes or does not
            broadcast to the shape of its scores.
        """
        x = _sequence(x, "x", self.d_model)
        context = _sequence(context, "context", self.d_model)
        return_attention_scores = _checks.boolean(return_attention_scores,
                                                  "return_attention_scores")
        batch = _checks.broadcast({"x": x.shape[:1], "context": context.shape[:1]},
                                  what="batch axes")
        n_target, n_source = x.shape[1], context.shape[1]
        mask = _attention_mask(mask, "mask", (*batch, n_target, n_target))
        context_mask = _attention_mask(context_mask, "context_mask",
                                       (*batch, n_target, n_source))
        x, _ = self._residual(x, self.self_attention_norm, lambda h: self.self_attention(
            h, h, attention_mask=mask, use_causal_mask=True, return_attention_scores=True))
        x, weights = self._residual(x, self.cross_attention_norm, lambda h: self.cross_attention(
            h, context, attention_mask=context_mask, return_attention_scores=True))
        x = self._feed_forward_block(x)
        return (x, weights) if return_attention_scores else x

