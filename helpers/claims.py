"""Numbers a chapter's prose quotes about a trained model: checked, measured across seeds, glued.

A trained model's accuracy depends on the seed and on the CPU's floating-point kernels, so the
prose never states such a number by hand. A hidden cell calls :func:`check` instead. It

1. asserts the bound the prose relies on (``at_least`` / ``at_most``),
2. glues the value (``{glue:text}`name:.3f```) and the range measured over seeds 0-4 and
   both TensorFlow CPU kernel paths (``{glue:text}`name_range```) into the page,
3. when the environment variable ``COURSE_METRICS`` names a file, appends the value and its
   bound to it, one JSON object per line. ``tools/course.py robustness`` runs the chapters
   that way and writes the table this module reads, ``helpers/robustness.json``.

Imports only the standard library; myst-nb's ``glue`` is used where it is installed (the
course's own environment) and skipped where it is not (Colab), since only the site renders it.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import os
from pathlib import Path

GLUE_PREFIX = "application/papermill.record/"  # myst_nb.ext.glue.GLUE_PREFIX

__all__ = ["check", "report", "glue", "measured", "runs", "seed_range", "ClaimError"]

METRICS_VARIABLE = "COURSE_METRICS"
TABLE = Path(__file__).resolve().parent / "robustness.json"
SWEEP = Path(__file__).resolve().parent / "robustness_sweep.json"  # seeds beyond the table


class ClaimError(AssertionError):
    """A measured number is outside the bound the chapter's prose states."""


class _Text(str):
    """A string that ``{glue:text}`` and the ``{glue}`` directive show exactly as written.

    The directive shows a glued value's plain text as it is; ``{glue:text}`` first reads it
    back with ``ast.literal_eval`` (to drop a string's quotes), so a bare ``1.05, 1.17`` would
    show as a tuple and ``1.00`` as ``1.0``. The plain text is the string itself, unless
    reading it back would change it: then it is the string's literal, which reads back as the
    string. (Such text is a value in a sentence, never a block for the directive.)
    """

    def __repr__(self) -> str:
        text = str(self)
        try:
            read = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return text
        return text if str(read) == text else repr(text)


def glue(name: str, value) -> None:
    """Glue ``value`` under ``name`` for the page's ``{glue:text}`` roles, showing nothing.

    Parameters
    ----------
    name : str
        The glue key; unique in the chapter.
    value : float, int or str
        What the prose shows; numbers can be formatted in the role (``name:.1%``).

    Raises
    ------
    TypeError
        If ``name`` is not a non-empty string.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string; got {name!r}")
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        value = value.item()  # a NumPy scalar shows as np.float64(...), which no format reads
    if importlib.util.find_spec("myst_nb") is None:  # Colab: no site to glue into
        return
    _display_for_glue(name, _Text(value) if isinstance(value, str) else value)


def _display_for_glue(name: str, value) -> None:
    """What ``myst_nb.glue(name, value, display=False)`` displays, without importing myst_nb.

    myst-nb's glue writes the value's display data under the ``application/papermill.record/``
    prefix with ``scrapbook`` metadata, and the site build reads it from there. Importing
    ``myst_nb.ext.glue`` loads Sphinx into the kernel, which costs about 1.5 s per chapter;
    the format is checked by the site build (every ``{glue:text}`` role must resolve).
    """
    from IPython.core.formatters import format_display_data  # noqa: PLC0415 - notebooks only
    from IPython.display import display  # noqa: PLC0415

    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + mime: data for mime, data in bundle.items()}, raw=True,
            metadata=metadata)


def _table() -> dict:
    if not TABLE.exists():
        return {}
    return json.loads(TABLE.read_text(encoding="utf-8"))


def measured(name: str) -> dict:
    """What the robustness runs measured for metric ``name``.

    Parameters
    ----------
    name : str
        A metric that a chapter passes to :func:`check` or :func:`report`.

    Returns
    -------
    dict
        ``min``, ``median`` and ``max`` over seeds 0-4 and both kernel paths, every value in
        ``values``, and the bound (``at_least``, ``at_most``; None where there is none).

    Raises
    ------
    LookupError
        If ``helpers/robustness.json`` has no such metric: run
        ``python3.11 tools/course.py robustness``.
    """
    for chapter in _table().get("chapters", {}).values():
        if name in chapter.get("metrics", {}):
            return dict(chapter["metrics"][name])
    raise LookupError(f"helpers/robustness.json has no metric {name!r}; "
                      "run python3.11 tools/course.py robustness")


def runs(name: str) -> list[dict]:
    """Every robustness run that measured metric ``name``, with its seed and kernel path.

    The table's runs (seeds 0-4 on both kernel paths, ``helpers/robustness.json``) come first,
    then those of the chapter's sweep beyond the table (``python3.11 tools/course.py
    robustness --seeds 5-19``, ``helpers/robustness_sweep.json``), each in the order they ran;
    a seed and kernel path the table has already is counted once. A sweep on the AVX2-capped
    path, or one made before the metric existed, adds none. A prose that says how often
    something happened across seeds counts these runs.

    Parameters
    ----------
    name : str
        A metric that a chapter passes to :func:`check` or :func:`report`.

    Returns
    -------
    list of dict
        One ``{"seed": int, "onednn": int, "value": float}`` per run (``onednn`` is the
        run's ``TF_ENABLE_ONEDNN_OPTS``: 0 for TensorFlow's Eigen kernels, 1 for oneDNN's).

    Raises
    ------
    TypeError
        If ``name`` is not a non-empty string.
    LookupError
        If the table has no such metric (see :func:`measured`).
    ValueError
        If a file's runs and values do not pair up (a run that stopped before the metric).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string; got {name!r}")
    measured(name)  # raises LookupError, naming what to run, for an unmeasured metric
    found = []
    sweep = json.loads(SWEEP.read_text(encoding="utf-8")) if SWEEP.exists() else {}
    for source, data in ((TABLE, _table()), (SWEEP, sweep)):
        for chapter in data.get("chapters", {}).values():
            metric = chapter.get("metrics", {}).get(name)
            if metric is None or chapter.get("cpu", "native") != "native":
                continue
            ran = chapter.get("runs", [])
            if len(ran) != len(metric["values"]):
                raise ValueError(f"{source.name}: {len(ran)} runs but {len(metric['values'])} "
                                 f"values of {name!r}; a run stopped before measuring it")
            seen = {(r["seed"], r["onednn"]) for r in found}
            found += [{"seed": r["seed"], "onednn": r["onednn"], "value": v}
                      for r, v in zip(ran, metric["values"])
                      if (r["seed"], r["onednn"]) not in seen]
    return found


def seed_range(name: str, fmt: str | None = None) -> str:
    """The range of metric ``name`` over the robustness runs, as text such as ``0.93–0.97``.

    Parameters
    ----------
    name : str
        A metric that a chapter passes to :func:`check` or :func:`report`.
    fmt : str, optional
        Format of the two ends (``format(value, fmt)``), e.g. ``".1%"``; by default the one
        the chapter gave :func:`check` or :func:`report`, as the table records it.

    Returns
    -------
    str
        ``"min–max"`` over seeds 0-4 and both kernel paths, from ``helpers/robustness.json``;
        one number when min and max print the same.

    Raises
    ------
    LookupError
        If the table has no such metric (see :func:`measured`).
    """
    entry = measured(name)
    fmt = fmt or entry.get("fmt", ".3f")
    low, high = format(entry["min"], fmt), format(entry["max"], fmt)
    return low if low == high else f"{low}–{high}"


def _glue_with_range(name: str, value: float, fmt: str) -> None:
    glue(name, value)
    try:
        glue(f"{name}_range", seed_range(name, fmt))
    except LookupError:
        if not os.environ.get(METRICS_VARIABLE):
            raise
        # A robustness or benchmark run: the table this run helps to make may not exist yet.


def _record(name: str, value: float, at_least, at_most, fmt: str) -> None:
    path = os.environ.get(METRICS_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"name": name, "value": value, "at_least": at_least,
                                  "at_most": at_most, "fmt": fmt}) + "\n")


def _as_real(name: str, value) -> float:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string; got {name!r}")
    if isinstance(value, bool) or not hasattr(value, "__float__"):
        raise TypeError(f"{name}: value must be a real number; got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name}: value is NaN")
    return value


def report(name: str, value, *, fmt: str = ".3f") -> None:
    """Glue a measured number that may vary (a time, a throughput) and its measured range.

    Like :func:`check` without a bound: records the value when ``COURSE_METRICS`` is set and
    glues ``name`` and ``name + "_range"``.

    Parameters
    ----------
    name : str
        The metric's name, unique across the course (e.g. ``"ch6_train_seconds"``).
    value : float
        The number.
    fmt : str, default ".3f"
        Format of the range's ends (see :func:`seed_range`).

    Raises
    ------
    TypeError
        If ``name`` is not a string or ``value`` is not a real number.
    ValueError
        If ``value`` is NaN.
    LookupError
        If the robustness table has no range for ``name`` yet (not raised while
        ``COURSE_METRICS`` is set, as in the robustness runs that make the table).
    """
    value = _as_real(name, value)
    _record(name, value, None, None, fmt)
    _glue_with_range(name, value, fmt)


def check(name: str, value, *, at_least: float | None = None, at_most: float | None = None,
          fmt: str = ".3f") -> None:
    """Assert that a measured number keeps the bound the prose states, and glue it.

    Parameters
    ----------
    name : str
        The metric's name, unique across the course (e.g. ``"ch5_accuracy_lstm"``). The value
        is glued under ``name``, its measured range under ``name + "_range"``.
    value : float
        The number, e.g. a test accuracy in [0, 1].
    at_least, at_most : float, optional
        The bound. At least one is required.
    fmt : str, default ".3f"
        Format of the range's ends (see :func:`seed_range`).

    Raises
    ------
    TypeError
        If ``name`` is not a string or ``value`` is not a real number.
    ValueError
        If no bound is given, or ``value`` is NaN.
    ClaimError
        If ``value`` is outside the bound (an ``AssertionError``). The value is recorded
        first, so a robustness run still shows it.
    LookupError
        If the robustness table has no range for ``name`` yet (not raised while
        ``COURSE_METRICS`` is set, as in the robustness runs that make the table).
    """
    value = _as_real(name, value)
    if at_least is None and at_most is None:
        raise ValueError(f"{name}: give at_least, at_most or both")
    _record(name, value, at_least, at_most, fmt)
    if at_least is not None and value < at_least:
        raise ClaimError(f"{name} = {value:.4g}, below the bound the prose states (>= {at_least})")
    if at_most is not None and value > at_most:
        raise ClaimError(f"{name} = {value:.4g}, above the bound the prose states (<= {at_most})")
    _glue_with_range(name, value, fmt)
