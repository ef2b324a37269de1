"""The one set-up call at the top of every chapter."""

from __future__ import annotations

import os
import random
import sys

import numpy as np

__all__ = ["setup"]

DEFAULT_SEED = 42


def _quiet_tensorflow() -> None:
    """Keep TensorFlow's C++ and Python start-up logs out of the chapters' output."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


def _seed_tensorflow(seed: int) -> None:
    import keras  # noqa: PLC0415 - only when a chapter uses TensorFlow
    import tensorflow as tf  # noqa: PLC0415

    tf.get_logger().setLevel("ERROR")
    keras.utils.set_random_seed(seed)
    tf.config.experimental.enable_op_determinism()


def _configure_matplotlib() -> None:
    import matplotlib  # noqa: PLC0415

    from . import plotting  # noqa: F401, PLC0415 - registers the Korean font

    matplotlib.rcParams.update({"figure.dpi": 150, "savefig.dpi": 150,
                                "figure.max_open_warning": 0})


def setup(seed: int = DEFAULT_SEED, *, tensorflow: bool = False) -> np.random.Generator:
    """Make a chapter reproducible and its output readable.

    Seeds Python's ``random`` and NumPy's global generator, sets NumPy to print 3 decimals
    without scientific notation, and configures matplotlib for Korean labels (PNG figures,
    the Nanum Gothic font bundled by koreanize-matplotlib). With ``tensorflow=True`` it also
    silences TensorFlow's start-up logs, seeds Keras and TensorFlow and turns on
    deterministic operations.

    Parameters
    ----------
    seed : int, default 42
        The seed for every generator.
    tensorflow : bool, default False
        Also set up TensorFlow and Keras (imports them; takes a few seconds).

    Returns
    -------
    numpy.random.Generator
        A fresh generator seeded with ``seed``, for the chapter's random data.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative integer.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    np.set_printoptions(precision=3, suppress=True)
    _configure_matplotlib()
    if tensorflow or "tensorflow" in sys.modules:
        _quiet_tensorflow()
        _seed_tensorflow(seed)
    return np.random.default_rng(seed)


_quiet_tensorflow()  # before any chapter imports TensorFlow
