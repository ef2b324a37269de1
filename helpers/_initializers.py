"""Random initial weights for the NumPy layers (private), as Keras initialises its own."""

from __future__ import annotations

import numpy as np


def glorot_uniform(rng: np.random.Generator, shape: tuple, fan_in: int) -> np.ndarray:
    """Keras's default kernel initialiser: uniform on +-sqrt(6 / (fan_in + fan_out)).

    ``fan_out`` is the kernel's size divided by ``fan_in`` (so a multi-head kernel of shape
    (d_model, num_heads, key_dim) has fan_out = num_heads * key_dim). Glorot and Bengio,
    AISTATS 2010, eq. 16.
    """
    fan_out = int(np.prod(shape)) // fan_in
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape)
