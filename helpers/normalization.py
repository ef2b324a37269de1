"""Normalising every token vector, in NumPy: layer normalisation and RMSNorm.

:class:`LayerNormalization` (Ba et al. 2016) with Keras's weights, taught in chapter 8, and
:func:`rms_norm` (Zhang and Sennrich 2019), which today's language models and multi-head
latent attention use instead (chapters 11 and 12). :mod:`helpers.transformer` re-exports both.

Imports only NumPy. Axis names: ``d_model`` (the normalised last axis).
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["LayerNormalization", "RMSNorm", "rms_norm"]


def rms_norm(x, scale=None, *, epsilon: float = 1e-6) -> np.ndarray:
    """Root-mean-square normalisation: ``x / sqrt(mean(x**2) + epsilon) * scale``.

    Layer normalisation without the mean and without the shift ``beta``: each token vector
    is only divided by its root mean square, then scaled feature by feature.

    Parameters
    ----------
    x : array_like of float, shape (..., d_model)
    scale : array_like of float, shape (d_model,), optional
        The learned gain (``None``: all ones, its initial value).
    epsilon : float, default 1e-6
        Added to the mean square; 1e-6 is the default of ``keras.layers.RMSNormalization``
        and of DeepSeek-V2/V3's released code (Llama 2's configuration uses 1e-5).

    Returns
    -------
    numpy.ndarray, shape (..., d_model)
        The dtype of ``x`` (float64 for integer input).

    Raises
    ------
    TypeError
        If ``x`` or ``scale`` is not real numeric, or ``epsilon`` is not a number.
    ValueError
        If ``x`` has no axis or is not finite, ``scale`` does not have shape (d_model,),
        or ``epsilon <= 0``.

    Notes
    -----
    Zhang and Sennrich (2019), "Root Mean Square Layer Normalization", equation (4). Used
    instead of :class:`LayerNormalization` by Llama and most of today's language models,
    and on the compressed query and the latent of multi-head latent attention (DeepSeek-V2's
    released code). Taught in chapters 11 and 12.

    Examples
    --------
    >>> rms_norm(np.array([[3.0, -4.0]]), epsilon=1e-12).round(3)  # RMS = sqrt(12.5)
    array([[ 0.849, -1.131]])
    """
    x = _checks.float_array(x, "x", min_rank=1, axes="(..., d_model)")
    epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)
    scale = np.ones(x.shape[-1], x.dtype) if scale is None else _checks.weight(
        scale, "scale", (x.shape[-1],))
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(mean_square + epsilon) * scale).astype(x.dtype)


class RMSNorm:
    """RMSNorm as a layer: :func:`rms_norm` with its learned ``scale`` and ``epsilon`` kept.

    The normalisation of every sublayer's input in Llama-style models, in the place
    :class:`LayerNormalization` has in chapter 8's layers.

    Parameters
    ----------
    scale : array_like, shape (d_model,)
        The learned gain (Llama's ``weight``, the GGUF file's ``attn_norm``/``ffn_norm``).
    epsilon : float, default 1e-6
        Added to the mean square (Llama 2's and SmolLM2's configuration: 1e-5).

    Raises
    ------
    TypeError
        If ``scale`` is not real numeric, or ``epsilon`` is not a number.
    ValueError
        If ``scale`` is not 1-D or not finite, or ``epsilon <= 0``.

    Notes
    -----
    Zhang and Sennrich (2019), equation (4). Taught in chapter 11; chapter 15 runs a real
    model's 61 of them.

    Examples
    --------
    >>> norm = RMSNorm(np.array([1.0, 2.0]), epsilon=1e-12)
    >>> norm(np.array([[3.0, -4.0]])).round(3)
    array([[ 0.849, -2.263]])
    >>> norm.count_params()
    2
    """

    def __init__(self, scale, *, epsilon: float = 1e-6):
        self.scale = _checks.float_array(scale, "scale", ndim=1, axes="(d_model,)")
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)

    @property
    def d_model(self) -> int:
        return self.scale.shape[0]

    def count_params(self) -> int:
        """``d_model``: the scale (there is no shift)."""
        return self.d_model

    def __call__(self, x) -> np.ndarray:
        """Normalise each token vector of ``x``, shape (..., d_model); same shape and dtype.

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.features(x, "x", self.d_model)
        return rms_norm(x, self.scale.astype(x.dtype, copy=False), epsilon=self.epsilon)


class LayerNormalization:
    """Layer normalisation over the last axis, with Keras's weights and default epsilon.

    ``LN(x) = gamma * (x - mean) / sqrt(var + epsilon) + beta``, where ``mean`` and ``var``
    (the population variance) are taken over the ``d_model`` features of each token.

    Parameters
    ----------
    gamma : array_like, shape (d_model,)
        Scale, learned; Keras calls it ``gamma`` and starts it at 1.
    beta : array_like, shape (d_model,)
        Shift, learned; Keras starts it at 0.
    epsilon : float, default 1e-3
        Added to the variance. 1e-3 is the default of ``keras.layers.LayerNormalization``
        (PyTorch's is 1e-5), so weights copied from Keras give Keras's numbers.

    Raises
    ------
    TypeError
        If ``gamma`` or ``beta`` is not real numeric, or ``epsilon`` is not a number.
    ValueError
        If ``gamma`` is not 1-D, ``beta`` does not have its shape, or ``epsilon <= 0``.

    Notes
    -----
    Ba, Kiros and Hinton (2016), "Layer Normalization", section 3. Used around every
    sublayer of the Transformer (Vaswani et al. 2017, section 3.1). Taught in chapter 8.

    Examples
    --------
    >>> norm = LayerNormalization.initial(4)
    >>> norm(np.array([[1.0, 2.0, 3.0, 4.0]])).round(3)
    array([[-1.341, -0.447,  0.447,  1.341]])
    """

    def __init__(self, gamma, beta, *, epsilon: float = 1e-3):
        self.gamma = _checks.float_array(gamma, "gamma")
        if self.gamma.ndim != 1:
            raise ValueError(f"gamma must have shape (d_model,); got shape {self.gamma.shape}")
        self.beta = _checks.weight(beta, "beta", self.gamma.shape)
        self.epsilon = _checks.real(epsilon, "epsilon", low=0, low_open=True)

    @classmethod
    def initial(cls, d_model: int, *, epsilon: float = 1e-3) -> LayerNormalization:
        """Keras's initial weights: ``gamma = 1``, ``beta = 0`` (float64)."""
        d_model = _checks.positive_int(d_model, "d_model")
        return cls(np.ones(d_model), np.zeros(d_model), epsilon=epsilon)

    @classmethod
    def from_keras(cls, layer) -> LayerNormalization:
        """Copy ``gamma``, ``beta`` and ``epsilon`` of a built ``keras.layers.LayerNormalization``.

        Raises
        ------
        ValueError
            If the layer is not built, or it has no ``gamma`` or ``beta`` (``scale=False`` or
            ``center=False``).
        """
        _checks.built(layer, "LayerNormalization")
        if getattr(layer, "gamma", None) is None or getattr(layer, "beta", None) is None:
            raise ValueError("the Keras LayerNormalization must have gamma and beta "
                             "(scale=True, center=True)")
        return cls(np.asarray(layer.gamma), np.asarray(layer.beta), epsilon=layer.epsilon)

    @property
    def d_model(self) -> int:
        return self.gamma.shape[0]

    def count_params(self) -> int:
        """``2 * d_model``: gamma and beta."""
        return 2 * self.d_model

    def __call__(self, x) -> np.ndarray:
        """Normalise each token vector of ``x``, shape (..., d_model); same shape back.

        Raises
        ------
        TypeError
            If ``x`` is not real numeric.
        ValueError
            If ``x`` is not finite or its last axis is not ``d_model``.
        """
        x = _checks.features(x, "x", self.d_model)
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.epsilon) * self.gamma + self.beta
