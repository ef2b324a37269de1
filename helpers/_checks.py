"""Input checks shared by every module of helpers (private).

One rule everywhere: a value of the wrong *type* raises ``TypeError``; a value of the right
type but the wrong *value or shape* raises ``ValueError``. Every message names the caller's
argument, says what was expected and what was given (with the shape for arrays).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def weight(value, name: str, shape: tuple) -> np.ndarray:
    """A finite float weight array of exactly ``shape``.

    >>> weight([[1, 2]], "beta", (2,))
    Traceback (most recent call last):
    ValueError: beta must have shape (2,); got shape (1, 2)
    """
    arr = float_array(value, name)
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}; got shape {arr.shape}")
    return arr


def built(layer, what: str):
    """``layer`` if it is a built Keras layer (its weights exist), else ``ValueError``."""
    if not getattr(layer, "built", False):
        raise ValueError(f"the Keras {what} is not built: call it once on data (or build it) "
                         "before copying its weights")
    return layer


def instance(value, name: str, cls: type, what: str):
    """``value`` if it is an instance of ``cls`` (described to the caller as ``what``).

    >>> instance("그림", "fig", int, "an integer")
    Traceback (most recent call last):
    TypeError: fig must be an integer; got str
    """
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be {what}; got {type(value).__name__}")
    return value


def integer(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python int, checked to lie in ``[low, high]`` (either bound optional).

    >>> integer(np.int64(3), "num_heads", low=1)
    3
    >>> integer(2.0, "num_heads")
    Traceback (most recent call last):
    TypeError: num_heads must be an integer; got 2.0 (float)
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer; got {value!r} ({type(value).__name__})")
    value = int(value)
    if low is not None and value < low or high is not None and value > high:
        raise ValueError(f"{name} must be an integer in {_interval(low, high)}; got {value}")
    return value


def positive_int(value, name: str) -> int:
    """``value`` as a Python int >= 1 (a size, a length, a count)."""
    return integer(value, name, low=1)


def key_dim(d_model, num_heads) -> int:
    """``d_model // num_heads``, each head's key_dim; ``num_heads`` must divide ``d_model``.

    >>> key_dim(64, 4)
    16
    >>> key_dim(10, 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: d_model must be divisible by num_heads ...; got d_model=10, num_heads=4
    """
    d_model, num_heads = positive_int(d_model, "d_model"), positive_int(num_heads, "num_heads")
    if d_model % num_heads:
        raise ValueError(f"d_model must be divisible by num_heads (each head gets key_dim = "
                         f"d_model // num_heads); got d_model={d_model}, num_heads={num_heads}")
    return d_model // num_heads


def real(value, name: str, *, low: float | None = None, high: float | None = None,
         low_open: bool = False) -> float:
    """``value`` as a finite Python float in ``[low, high]`` (``(low, high]`` if ``low_open``).

    >>> real(0.5, "dropout", low=0, high=1)
    0.5
    >>> real(0, "amplitude", low=0, low_open=True)
    Traceback (most recent call last):
    ValueError: amplitude must be a finite number in (0, inf); got 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number; got {value!r} ({type(value).__name__})")
    number = float(value)
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and number > high
    if not np.isfinite(number) or below or above:
        raise ValueError(f"{name} must be a finite number in "
                         f"{_interval(low, high, low_open=low_open)}; got {value!r}")
    return number


def boolean(value, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (NumPy's bool too).

    >>> boolean(1, "norm_first")
    Traceback (most recent call last):
    TypeError: norm_first must be True or False; got 1 (int)
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r} ({type(value).__name__})")
    return bool(value)


def generator(rng, name: str = "rng") -> np.random.Generator:
    """``rng`` if it is a NumPy ``Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator (np.random.default_rng(seed)); "
                        f"got {type(rng).__name__}")
    return rng


def one_of(value, name: str, choices: Iterable):
    """``value`` itself, if it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def sizes(value, name: str, keys: Iterable[str], *,
          may_be_zero: Iterable[str] = ()) -> dict[str, int]:
    """``value`` as a dict of exactly ``keys``, each a positive integer (or 0 for a key in
    ``may_be_zero``: a part that can be left out).

    >>> sizes({"latent_dim": 28, "rope_dim": 4}, "latent", ("latent_dim", "rope_dim"))
    {'latent_dim': 28, 'rope_dim': 4}
    >>> sizes({"latent_dim": 28}, "latent", ("latent_dim", "rope_dim"))
    Traceback (most recent call last):
    ValueError: latent must have the keys ['latent_dim', 'rope_dim']; got ['latent_dim']
    """
    keys = list(keys)
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict with the keys {keys}; got "
                        f"{type(value).__name__}")
    if sorted(value) != sorted(keys):
        raise ValueError(f"{name} must have the keys {keys}; got {sorted(value)}")
    zero_ok = set(may_be_zero)
    return {key: integer(value[key], f"{name}[{key!r}]", low=0 if key in zero_ok else 1)
            for key in keys}


def strings(value, name: str, *, low: int = 1, high: int | None = None) -> list[str]:
    """``value`` as a list of non-empty strings (tokens, labels), ``low`` to ``high`` of them.

    >>> strings(("2", "0"), "source")
    ['2', '0']
    >>> strings("2026", "source")
    Traceback (most recent call last):
    TypeError: source must be a sequence of strings, one per token; got the single str '2026'
    >>> strings(["2", ""], "source")
    Traceback (most recent call last):
    ValueError: source must hold non-empty strings; got '' at index 1
    """
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of strings, one per token; got the single "
                        f"str {value!r}")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of strings; got {value!r} "
                        f"({type(value).__name__})") from None
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name} must hold strings; got {item!r} ({type(item).__name__}) "
                            f"at index {index}")
        if not item:
            raise ValueError(f"{name} must hold non-empty strings; got '' at index {index}")
    if len(items) < low or high is not None and len(items) > high:
        count = f"at least {low}" if high is None else f"{low} to {high}"
        raise ValueError(f"{name} must hold {count} strings; got {len(items)}")
    return items


def float_array(x, name: str, *, min_rank: int = 0, ndim: int | None = None,
                axes: str | None = None, finite: bool = True) -> np.ndarray:
    """``x`` as a floating-point array: float32/float64 stay as they are, integers -> float64.

    Parameters
    ----------
    x : array_like
    name : str
        The caller's argument name, used in messages.
    min_rank : int, default 0
        The fewest axes ``x`` may have.
    ndim : int, optional
        The exact number of axes ``x`` must have.
    axes : str, optional
        The expected shape in words, for the message, e.g. ``"(..., n_q, d_k)"``.
    finite : bool, default True
        Refuse NaN and infinities.

    Raises
    ------
    TypeError
        If ``x`` is boolean, complex or not numeric.
    ValueError
        If ``x`` has fewer than ``min_rank`` axes, not ``ndim`` axes, or (with ``finite``)
        NaN or infinities.

    >>> float_array([[1, 2]], "query", min_rank=2).dtype
    dtype('float64')
    >>> float_array([1.0, 2.0], "query", min_rank=2, axes="(..., n_q, d_k)")
    Traceback (most recent call last):
    ValueError: query must have shape (..., n_q, d_k) (at least 2 axes); got shape (2,)
    """
    arr = np.asarray(x)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be an array of real numbers; got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if arr.ndim < min_rank:
        need = f"at least {_axes(min_rank)}"
        expected = f"shape {axes} ({need})" if axes else need
        raise ValueError(f"{name} must have {expected}; got shape {arr.shape}")
    if ndim is not None and arr.ndim != ndim:
        expected = f"shape {axes} ({_axes(ndim)})" if axes else _axes(ndim)
        raise ValueError(f"{name} must have {expected}; got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity (shape {arr.shape}); "
                         "expected finite numbers")
    return arr


def features(x, name: str, d_model: int, *, ndim: int | None = None) -> np.ndarray:
    """``x`` as a floating-point array of token vectors: its last axis has ``d_model`` entries.

    With ``ndim=3`` the shape must be (batch, n, d_model); otherwise (..., d_model). Raises
    as :func:`float_array`, and ValueError if the last axis is not ``d_model``.

    >>> features([[1.0, 2.0]], "x", 3)
    Traceback (most recent call last):
    ValueError: x must have shape (..., d_model=3); got shape (1, 2)
    """
    axes = "(batch, n, d_model)" if ndim == 3 else "(..., d_model)"
    arr = float_array(x, name, min_rank=1, ndim=ndim, axes=axes)
    if arr.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape {axes.replace('d_model', f'd_model={d_model}')}"
                         f"; got shape {arr.shape}")
    return arr


def int_array(x, name: str, *, ndim: int | None = None, low: int | None = None,
              high: int | None = None) -> np.ndarray:
    """``x`` as an integer array with ``ndim`` axes and entries in ``[low, high]``."""
    arr = np.asarray(x)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an array of integers; got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {_axes(ndim)}; got shape {arr.shape}")
    if arr.size and (low is not None and arr.min() < low or high is not None and arr.max() > high):
        raise ValueError(f"every entry of {name} must lie in {_interval(low, high)}; "
                         f"got entries from {arr.min()} to {arr.max()}")
    return arr


def token_ids(x, name: str) -> np.ndarray:
    """``x`` as int32 token ids of shape (batch, n), 0 = padding, every row with a real token."""
    arr = int_array(x, name, ndim=2, low=0)
    empty = int(np.sum(~(arr != 0).any(axis=1)))
    if empty:
        raise ValueError(f"every row of {name} needs at least one non-padding id; got "
                         f"{empty} rows of padding only")
    return arr.astype(np.int32)


def bool_array(x, name: str, *, meaning: str = "") -> np.ndarray:
    """``x`` as a boolean array (a mask); ``meaning`` explains True/False in the message."""
    arr = np.asarray(x)
    if arr.dtype != bool:
        hint = f" ({meaning})" if meaning else ""
        raise TypeError(f"{name} must be boolean{hint}; got dtype {arr.dtype}")
    return arr


def broadcast(shapes: dict[str, tuple], target: tuple | None = None,
              what: str = "leading (batch) axes") -> tuple:
    """The broadcast of the named ``shapes``; with ``target``, each must broadcast *to* it.

    >>> broadcast({"query": (2, 1), "key": (1, 3)})
    (2, 3)
    >>> broadcast({"mask": (3, 4, 4)}, target=(2, 4, 4), what="scores' shape")
    Traceback (most recent call last):
    ValueError: mask of shape (3, 4, 4) does not broadcast to the scores' shape (2, 4, 4)
    """
    if target is not None:
        for name, shape in shapes.items():
            try:
                full = np.broadcast_shapes(tuple(shape), tuple(target))
            except ValueError:
                full = None
            if full != tuple(target):
                raise ValueError(f"{name} of shape {tuple(shape)} does not broadcast to the "
                                 f"{what} {tuple(target)}")
        return tuple(target)
    try:
        return np.broadcast_shapes(*(tuple(s) for s in shapes.values()))
    except ValueError:
        given = ", ".join(f"{name} {tuple(shape)}" for name, shape in shapes.items())
        raise ValueError(f"the {what} do not broadcast: {given}") from None


def same_size(sizes: dict[str, int], what: str) -> int:
    """The common value of ``sizes`` (named), which must all be equal.

    >>> same_size({"query": 4, "key": 3}, "feature size d_k (last axis)")
    Traceback (most recent call last):
    ValueError: query and key must have the same feature size d_k (last axis); got query 4, key 3
    """
    values = set(sizes.values())
    if len(values) != 1:
        names = " and ".join(sizes)
        given = ", ".join(f"{name} {size}" for name, size in sizes.items())
        raise ValueError(f"{names} must have the same {what}; got {given}")
    return values.pop()


def _axes(n: int) -> str:
    return f"{n} axis" if n == 1 else f"{n} axes"


def _interval(low, high, *, low_open: bool = False) -> str:
    left = "(" if low_open or low is None else "["
    right = "]" if high is not None else ")"
    return (f"{left}{'-inf' if low is None else low}, "
            f"{'inf' if high is None else high}{right}")
