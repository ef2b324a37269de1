"""The one set-up call at the top of every chapter, and showing helpers' code on the page."""

from __future__ import annotations

import ast
import inspect
import os
import random
import sys
import textwrap

import numpy as np

from . import _tensorflow
from ._checks import integer

__all__ = ["setup", "training_seed", "show_source"]

DEFAULT_SEED = 42
SEED_VARIABLE = "COURSE_SEED"


def _seed_tensorflow(seed: int, xla: bool) -> None:
    from ._tensorflow import keras, tf  # noqa: PLC0415 - only when a chapter uses TensorFlow

    keras.utils.set_random_seed(seed)
    if not xla:
        tf.config.experimental.enable_op_determinism()


def _configure_matplotlib() -> None:
    import matplotlib  # noqa: PLC0415

    from . import plotting  # noqa: PLC0415 - registers the Korean font

    matplotlib.rcParams.update({"figure.dpi": 150, "savefig.dpi": 150,
                                "figure.max_open_warning": 0})
    shell = _ipython()
    if shell is not None and _inline_backend(matplotlib):
        import matplotlib_inline.backend_inline  # noqa: F401, PLC0415 - sets up PNG output

        plotting.describe_figure_outputs(shell)


def _inline_backend(matplotlib) -> bool:
    """True if figures are shown as PNG outputs by matplotlib's inline backend (Jupyter's)."""
    backend = matplotlib.rcParams._get("backend")  # without resolving an automatic backend
    return backend in ("inline", "module://matplotlib_inline.backend_inline")


def _ipython():
    """The running IPython shell, or None outside IPython."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _check_seed(seed, name: str) -> int:
    return integer(seed, name, low=0)


def training_seed(default: int = DEFAULT_SEED) -> int:
    """The seed for model initialisation, dropout and shuffling.

    Parameters
    ----------
    default : int, default 42
        Used when the environment variable ``COURSE_SEED`` is not set.

    Returns
    -------
    int
        ``int(os.environ["COURSE_SEED"])`` if that variable is set, else ``default``.

    Raises
    ------
    TypeError
        If ``default`` is not an integer.
    ValueError
        If ``COURSE_SEED`` is set but is not a non-negative integer (for example ``"abc"``
        or ``"-1"``), or ``default`` is negative.
    """
    value = os.environ.get(SEED_VARIABLE)
    if value is None or value == "":
        return _check_seed(default, "seed")
    if not value.strip().isdigit():
        raise ValueError(f"{SEED_VARIABLE} must be a non-negative integer; got {value!r}")
    return int(value)


def setup(seed: int = DEFAULT_SEED, *, tensorflow: bool = False,
          xla: bool = False) -> np.random.Generator:
    """Make a chapter reproducible and its output readable.

    Seeds Python's ``random`` and NumPy's global generator, sets NumPy to print 3 decimals
    without scientific notation, and configures matplotlib for Korean labels (PNG figures,
    the Nanum Gothic font bundled by koreanize-matplotlib). In Jupyter, each figure's PNG
    output then carries a display width (one figure inch = 96 CSS pixels) and its smallest
    text size (:func:`helpers.plotting.describe_figure_outputs`). With ``tensorflow=True`` it also
    imports TensorFlow with the course's log settings (``helpers._tensorflow``), seeds Keras
    and TensorFlow and turns on deterministic operations (unless ``xla=True``).

    Two seeds are in play. The generator this function returns, which a chapter uses for the
    data that defines its lesson, is always seeded with ``seed``. Everything else (Python's
    ``random``, NumPy's global generator, Keras and TensorFlow: model initialisation,
    dropout and the shuffling of training batches) is seeded with :func:`training_seed`,
    which the environment variable ``COURSE_SEED`` overrides. So
    ``COURSE_SEED=3 python3.11 tools/course.py execute chapters/05_...ipynb`` trains the same
    models on the same data from another starting point; ``tools/course.py robustness`` does
    that for seeds 0-4.

    Parameters
    ----------
    seed : int, default 42
        The seed of the returned data generator, and of training unless ``COURSE_SEED`` is set.
    tensorflow : bool, default False
        Also set up TensorFlow and Keras (imports them; takes a few seconds).
    xla : bool, default False
        The chapter compiles its training step with XLA (``model.compile(...,
        jit_compile=True)``). TensorFlow's op-determinism switch is then left off, because
        Keras refuses XLA while it is on; XLA's compiled CPU code gives the same results run
        after run on one machine by itself.

    Returns
    -------
    numpy.random.Generator
        A fresh generator seeded with ``seed``, for the chapter's random data.

    Raises
    ------
    TypeError
        If ``seed`` is not an integer.
    ValueError
        If ``seed`` is negative or ``COURSE_SEED`` is not a non-negative integer.
    """
    data_seed = _check_seed(seed, "seed")
    model_seed = training_seed(data_seed)
    random.seed(model_seed)
    np.random.seed(model_seed)
    np.set_printoptions(precision=3, suppress=True)
    _configure_matplotlib()
    if tensorflow or "tensorflow" in sys.modules:
        _seed_tensorflow(model_seed, xla)
    return np.random.default_rng(data_seed)


def _without_docstrings(source: str) -> str:
    """``source`` with the docstring of every function and class in it removed."""
    tree = ast.parse(source)
    drop = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            drop.update(range(body[0].lineno - 1, body[0].end_lineno))
    kept = [line for i, line in enumerate(source.splitlines()) if i not in drop]
    # No blank line between a def/class line and the first statement left below it.
    return "\n".join(line for i, line in enumerate(kept)
                     if line.strip() or i == 0 or not kept[i - 1].rstrip().endswith(":"))


def show_source(*objects, docstring: bool = False):
    """Show the source code of functions or classes of ``helpers`` as one highlighted block.

    The chapters teach some code that lives in ``helpers`` (so that several chapters and the
    tests share one copy). This puts that one copy on the page: in Jupyter and on the site it
    renders as a Python code block.

    Parameters
    ----------
    *objects : function, class or method (a classmethod too)
        What to show, in order; each source must be available to ``inspect.getsource``.
    docstring : bool, default False
        Keep the docstrings. By default they are left out, since the chapter's prose explains
        the code; ``help(obj)`` prints them.

    Returns
    -------
    IPython.display.Markdown
        A fenced ``python`` code block, displayed when it is the cell's last expression.

    Raises
    ------
    TypeError
        If nothing is given, or an object is not a function or class.
    """
    from IPython.display import Markdown  # noqa: PLC0415 - only in notebooks

    if not objects:
        raise TypeError("show_source expects at least one function or class; got none")
    sources = []
    for obj in objects:
        if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)):
            raise TypeError("show_source expects functions or classes; got "
                            f"{type(obj).__name__} {obj!r:.60}")
        source = textwrap.dedent(inspect.getsource(obj))
        sources.append(source if docstring else _without_docstrings(source))
    body = "\n\n\n".join(source.rstrip() for source in sources)
    return Markdown(f"```python\n{body}\n```")


_tensorflow.apply_settings()  # before any chapter imports TensorFlow
