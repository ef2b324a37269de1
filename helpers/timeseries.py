"""Time series of chapter 5: series with a planted pattern, generated in code, and the
GunPoint data set, shipped with the package (nothing is downloaded).

Imports only NumPy and the standard library.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ._checks import one_of, positive_int, real

__all__ = ["planted_pattern_dataset", "load_gunpoint", "GUNPOINT_CLASSES", "DatasetError"]


def _pattern(kind: int, length: int, amplitude: float) -> np.ndarray:
    """One period of a sine (kind 1: up, then down) or its mirror image (kind 0)."""
    wave = amplitude * np.sin(2 * np.pi * (np.arange(length) + 0.5) / length)
    return wave if kind == 1 else -wave


def planted_pattern_dataset(n: int, seq_len: int = 64, n_features: int = 2, *,
                            pattern_length: int = 8, amplitude: float = 2.0, noise: float = 1.0,
                            seed: int = 0):
    """Noisy series whose label is decided by a short pattern planted at a random position.

    Every series is Gaussian noise in all features. Into feature 0 of each series a pattern of
    ``pattern_length`` steps is added at a uniformly random position: one sine period of peak
    ``amplitude`` that goes up first (label 1) or down first (label 0). Only those steps
    carry information about the label, so a model's attention can be checked against them.

    Parameters
    ----------
    n : int
        Number of series.
    seq_len : int, default 64
        Time steps per series; at least ``pattern_length``.
    n_features : int, default 2
        Features per time step; the pattern goes into feature 0, the others are pure noise.
    pattern_length : int, default 8
        Length of the planted pattern, in time steps.
    amplitude : float, default 2.0
        Peak height of the pattern, in units of the data (positive).
    noise : float, default 1.0
        Standard deviation of the background noise (non-negative).
    seed : int, default 0
        Seed of the generator; the same seed gives the same data.

    Returns
    -------
    x : numpy.ndarray, shape (n, seq_len, n_features), float32
        The series.
    y : numpy.ndarray, shape (n,), int64
        The labels, 0 or 1 (about half each).
    informative_steps : numpy.ndarray, shape (n, seq_len), bool
        True at the ``pattern_length`` time steps of each series that hold the pattern.

    Raises
    ------
    TypeError
        If a size is not an integer, or ``amplitude`` or ``noise`` not a real number.
    ValueError
        If a size is below 1, ``pattern_length > seq_len``, ``amplitude <= 0`` or
        ``noise < 0``.

    Notes
    -----
    Taught in chapter 5 (LSTM + 어텐션), which measures how much attention weight falls on
    ``informative_steps``.

    Examples
    --------
    >>> x, y, informative = planted_pattern_dataset(4, seq_len=16, pattern_length=4, seed=1)
    >>> x.shape, y.shape, informative.shape
    ((4, 16, 2), (4,), (4, 16))
    >>> informative.sum(axis=1).tolist()
    [4, 4, 4, 4]
    """
    n, seq_len = positive_int(n, "n"), positive_int(seq_len, "seq_len")
    n_features = positive_int(n_features, "n_features")
    pattern_length = positive_int(pattern_length, "pattern_length")
    if pattern_length > seq_len:
        raise ValueError(f"pattern_length ({pattern_length}) must not exceed seq_len ({seq_len})")
    amplitude = real(amplitude, "amplitude", low=0, low_open=True)
    noise = real(noise, "noise (a standard deviation)", low=0)
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, noise, size=(n, seq_len, n_features))
    y = rng.integers(0, 2, size=n)
    starts = rng.integers(0, seq_len - pattern_length + 1, size=n)
    steps = starts[:, None] + np.arange(pattern_length)
    informative_steps = np.zeros((n, seq_len), dtype=bool)
    np.put_along_axis(informative_steps, steps, True, axis=1)
    patterns = np.stack([_pattern(k, pattern_length, amplitude) for k in (0, 1)])
    x[np.arange(n)[:, None], steps, 0] += patterns[y]
    return x.astype(np.float32), y.astype(np.int64), informative_steps


DATASETS = Path(__file__).resolve().parent / "datasets"
GUNPOINT_SHA256 = {
    "train": "f842401779fd9800d247d8b33121a1a4643710a19b24917dbdd9a060ca8630d5",
    "test": "79332750788a6227b325b96bd0d70130c8eb707b9731f8d7dec62b7a7d36017e",
}
GUNPOINT_SIZES = {"train": 50, "test": 150}
GUNPOINT_CLASSES = ("총 뽑기", "손가락으로 가리키기")


class DatasetError(ValueError):
    """A shipped data file is damaged: its checksum or its contents are not what they should be."""


def _parse_ts(text: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Parse the body of a univariate, equal-length ``.ts`` file into (series, labels)."""
    lines = [line.strip() for line in text.splitlines()]
    try:
        body = lines[lines.index("@data") + 1:]
    except ValueError:
        raise DatasetError(f"{path.name}: no '@data' line; not a .ts file") from None
    rows = [line.rsplit(":", 1) for line in body if line]
    series = np.array([[float(v) for v in values.split(",")] for values, _ in rows])
    labels = np.array([int(label) for _, label in rows])
    return series, labels


def load_gunpoint(split: str = "train", *, directory=None):
    """Load the GunPoint data set of the UCR archive, shipped with this package.

    The x coordinate of an actor's right hand while drawing a replica gun from a holster
    (class 0, 총 뽑기) or pointing a finger (class 1, 손가락으로 가리키기); 150 time steps.
    Before parsing, the file's SHA-256 is compared with the one recorded here, so a damaged
    or edited copy is never used silently. Nothing is downloaded.

    Parameters
    ----------
    split : {"train", "test"}, default "train"
        The archive's own split: 50 training and 150 test series.
    directory : str or pathlib.Path, optional
        Folder holding ``GunPoint_TRAIN.ts`` and ``GunPoint_TEST.ts``; by default the copy in
        ``helpers/datasets``.

    Returns
    -------
    x : numpy.ndarray, shape (n, 150, 1), float32
        The series (already z-normalised in the archive), ``n`` = 50 or 150.
    y : numpy.ndarray, shape (n,), int64
        0 = 총 뽑기 (Gun-Draw, archive class 1), 1 = 손가락으로 가리키기 (Point, class 2).

    Raises
    ------
    ValueError
        If ``split`` is not "train" or "test".
    FileNotFoundError
        If the file is missing.
    DatasetError
        If the file's checksum, number of series, length or labels are wrong.

    Notes
    -----
    Dau et al., "The UCR time series archive", IEEE/CAA J. Autom. Sinica 6(6), 2019;
    Ratanamahatana and Keogh, SIAM SDM 2005. Used in chapter 5. Licence and citation:
    ``helpers/datasets/README.md``.

    Examples
    --------
    >>> x, y = load_gunpoint("train")
    >>> x.shape, x.dtype, np.bincount(y).tolist()
    ((50, 150, 1), dtype('float32'), [24, 26])
    """
    one_of(split, "split", GUNPOINT_SHA256)
    path = Path(DATASETS if directory is None else directory) / f"GunPoint_{split.upper()}.ts"
    if not path.is_file():
        raise FileNotFoundError(f"GunPoint {split} file not found at {path}; it ships with "
                                "helpers (helpers/datasets). Reinstall the package or restore it "
                                "from git.")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != GUNPOINT_SHA256[split]:
        raise DatasetError(f"{path.name} is damaged: SHA-256 {digest}, expected "
                           f"{GUNPOINT_SHA256[split]}. Restore it from git.")
    series, labels = _parse_ts(data.decode("utf-8"), path)
    if series.shape != (GUNPOINT_SIZES[split], 150) or set(labels.tolist()) != {1, 2}:
        raise DatasetError(f"{path.name}: expected {GUNPOINT_SIZES[split]} series of length 150 "
                           f"with labels 1 and 2; got shape {series.shape}")
    return series[..., None].astype(np.float32), (labels - 1).astype(np.int64)
