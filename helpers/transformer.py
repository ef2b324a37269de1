"""The Transformer's building blocks in NumPy, starting with the positional encoding.

This module imports only NumPy (never TensorFlow or Keras), like :mod:`helpers.attention`.
Taught in chapter 8.
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["positional_encoding", "positional_shift_matrix"]


# --- positional encoding -------------------------------------------------------------------------

def _even_d_model(d_model) -> int:
    d_model = _checks.positive_int(d_model, "d_model")
    if d_model % 2:
        raise ValueError("d_model must be even (every frequency fills one sin column and one "
                         f"cos column); got {d_model}")
    return d_model


def _frequencies(d_model: int) -> np.ndarray:
    """omega_i = 1 / 10000^(2i / d_model) for i = 0 .. d_model/2 - 1, shape (d_model/2,)."""
    return 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)


def positional_encoding(length: int, d_model: int) -> np.ndarray:
    """The sinusoidal positional encoding: one fixed vector per position.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))``: column pair ``(2i, 2i+1)`` is a
    sine and a cosine of the same frequency, from one turn per 2 pi positions (i = 0) down to
    one turn per 10000 * 2 pi positions.

    Parameters
    ----------
    length : int
        Number of positions ``0 .. length - 1``, at least 1.
    d_model : int
        Width of each vector; must be even (sin and cos come in pairs).

    Returns
    -------
    numpy.ndarray, shape (length, d_model), float64
        Row ``pos`` is the encoding of position ``pos``; every entry lies in [-1, 1]. Added to
        the token embeddings (batch, length, d_model), it broadcasts over ``batch``.

    Raises
    ------
    TypeError
        If ``length`` or ``d_model`` is not an integer.
    ValueError
        If ``length`` or ``d_model`` is below 1, or ``d_model`` is odd.

    Notes
    -----
    Vaswani et al. (2017), "Attention Is All You Need", section 3.5. Taught in chapter 8,
    with :func:`positional_shift_matrix` (why a fixed linear map moves it by k positions).

    Examples
    --------
    >>> positional_encoding(2, 4).round(3)
    array([[0.   , 1.   , 0.   , 1.   ],
           [0.841, 0.54 , 0.01 , 1.   ]])
    """
    length = _checks.positive_int(length, "length")
    d_model = _even_d_model(d_model)
    angles = np.arange(length)[:, None] * _frequencies(d_model)   # (length, d_model/2)
    table = np.empty((length, d_model))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def positional_shift_matrix(k: int, d_model: int) -> np.ndarray:
    """The matrix M_k with ``PE[pos + k] = PE[pos] @ M_k`` for every position ``pos``.

    M_k is block-diagonal: for each frequency omega_i, the 2x2 block on columns
    ``(2i, 2i+1)`` is the rotation ``[[cos k omega_i, -sin k omega_i], [sin k omega_i,
    cos k omega_i]]``, because sin(a + b) = sin a cos b + cos a sin b and
    cos(a + b) = cos a cos b - sin a sin b. It depends on ``k`` but not on ``pos``.

    Parameters
    ----------
    k : int
        The shift, any integer (negative moves back).
    d_model : int
        Width of the encoding; even, as in :func:`positional_encoding`.

    Returns
    -------
    numpy.ndarray, shape (d_model, d_model), float64
        An orthogonal matrix; ``M_j @ M_k == M_(j+k)`` and ``M_0`` is the identity.

    Raises
    ------
    TypeError
        If ``k`` or ``d_model`` is not an integer.
    ValueError
        If ``d_model`` is below 1 or odd.

    Notes
    -----
    The property Vaswani et al. (2017), section 3.5, give for choosing sinusoids: "for any
    fixed offset k, PE_(pos+k) can be represented as a linear function of PE_pos". Taught in
    chapter 8.

    Examples
    --------
    >>> pe = positional_encoding(10, 8)
    >>> bool(np.allclose(pe[3] @ positional_shift_matrix(4, 8), pe[7]))
    True
    """
    k = _checks.integer(k, "k")
    d_model = _even_d_model(d_model)
    angles = k * _frequencies(d_model)
    sin_cols, cos_cols = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    matrix = np.zeros((d_model, d_model))
    matrix[sin_cols, sin_cols] = matrix[cos_cols, cos_cols] = np.cos(angles)
    matrix[sin_cols, cos_cols] = -np.sin(angles)
    matrix[cos_cols, sin_cols] = np.sin(angles)
    return matrix
