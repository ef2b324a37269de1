"""Sampling the next token: temperature, top-k and top-p (nucleus) sampling, in NumPy.

Greedy decoding (:func:`helpers.decoder_only.greedy_generate`) always takes the most likely
token. Sampling draws the next token from a distribution made from the logits instead; the
three knobs here reshape that distribution before the draw. Taught in chapter 9.

Axis names: ``batch``; ``vocab`` (one logit per token of the vocabulary).
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["sampling_distribution", "sample_tokens"]


def sampling_distribution(logits, *, temperature: float = 1.0,
                          top_k: int | None = None,
                          top_p: float | None = None) -> np.ndarray:
    """The distribution the next token is drawn from: temperature, then top-k, then top-p.

    Parameters
    ----------
    logits : array_like of float, shape (..., vocab)
        Scores of the next token (before the softmax).
    temperature : float, default 1.0
        The logits are divided by it: below 1 sharpens the distribution, above 1 flattens
        it. Must be > 0 (greedy decoding is the limit ``temperature -> 0``).
    top_k : int, optional
        Keep only the ``top_k`` most likely tokens (ties at the boundary are kept).
    top_p : float, optional
        Keep the smallest set of most likely tokens whose probabilities add up to at least
        ``top_p`` (in ``(0, 1]``); the most likely token is always kept.

    Returns
    -------
    numpy.ndarray of float64, shape (..., vocab)
        Probabilities, zero outside the kept tokens, each row summing to 1.

    Raises
    ------
    TypeError
        If ``logits`` is not real numeric or a knob has the wrong type.
    ValueError
        If ``logits`` has no axis or is not finite, ``temperature <= 0``, ``top_k < 1`` or
        ``top_p`` is outside ``(0, 1]``.

    Notes
    -----
    Temperature: Ackley, Hinton and Sejnowski (1985), the Boltzmann distribution
    ``softmax(z / T)``. Top-k: Fan, Lewis and Dauphin (2018), section 5.4. Top-p (nucleus):
    Holtzman et al. (2020), equation 3. The order temperature → top-k → top-p is the one of
    Hugging Face ``transformers``' logits warpers. Taught in chapter 9.

    Examples
    --------
    >>> logits = np.log([0.5, 0.3, 0.15, 0.05])
    >>> sampling_distribution(logits).round(2)
    array([0.5 , 0.3 , 0.15, 0.05])
    >>> sampling_distribution(logits, top_k=2).round(3)
    array([0.625, 0.375, 0.   , 0.   ])
    >>> sampling_distribution(logits, top_p=0.9).round(3)
    array([0.526, 0.316, 0.158, 0.   ])
    """
    z = _checks.float_array(logits, "logits", min_rank=1, axes="(..., vocab)")
    z = z.astype(np.float64) / _checks.real(temperature, "temperature", low=0,
                                            low_open=True)
    if top_k is not None:
        top_k = _checks.positive_int(top_k, "top_k")
        kth = -np.sort(-z, axis=-1)[..., min(top_k, z.shape[-1]) - 1:][..., :1]
        z = np.where(z >= kth, z, -np.inf)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    if top_p is not None:
        top_p = _checks.real(top_p, "top_p", low=0, high=1, low_open=True)
        order = np.argsort(-p, axis=-1, kind="stable")
        sorted_p = np.take_along_axis(p, order, axis=-1)
        # 더 그럴듯한 토큰들의 확률 합
        before = np.cumsum(sorted_p, axis=-1) - sorted_p
        keep = np.zeros(p.shape, bool)
        np.put_along_axis(keep, order, before < top_p, axis=-1)
        p = np.where(keep, p, 0.0)
        p /= p.sum(axis=-1, keepdims=True)
    return p


def sample_tokens(logits, rng, *, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> np.ndarray:
    """Draw one token per row of ``logits`` from :func:`sampling_distribution`.

    Parameters
    ----------
    logits : array_like of float, shape (batch, vocab)
    rng : numpy.random.Generator
        The only source of randomness, so a seeded generator gives the same tokens.
    temperature, top_k, top_p
        As in :func:`sampling_distribution`.

    Returns
    -------
    numpy.ndarray of int64, shape (batch,)

    Raises
    ------
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``, or as in
        :func:`sampling_distribution`.
    ValueError
        If ``logits`` is not 2-D, or as in :func:`sampling_distribution`.

    Notes
    -----
    Inverse-CDF sampling: one uniform number per row, compared with the running sum of the
    probabilities. Taught in chapter 9.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> logits = np.log([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    >>> sample_tokens(logits, rng, top_k=1)
    array([0, 2])
    """
    rng = _checks.generator(rng, "rng")
    _checks.float_array(logits, "logits", ndim=2, axes="(batch, vocab)")
    p = sampling_distribution(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    u = rng.random((p.shape[0], 1))
    cdf = np.cumsum(p, axis=-1)
    ids = (cdf < u * cdf[:, -1:]).sum(axis=-1)
    return np.minimum(ids, p.shape[-1] - 1).astype(np.int64)
