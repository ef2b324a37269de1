"""Heatmaps of attention weights with Korean token labels, and figures that report their text size.

Importing this module registers the Nanum Gothic font that koreanize-matplotlib ships inside
its package, so Korean labels render without downloading anything.
"""

from __future__ import annotations

import base64
import io
import warnings
from collections.abc import Sequence

import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

with warnings.catch_warnings():
    # koreanize-matplotlib 0.1.1 compares versions with distutils, which warns on import.
    warnings.simplefilter("ignore", DeprecationWarning)
    import koreanize_matplotlib  # noqa: F401 - registers and selects the bundled font

__all__ = ["attention_heatmap", "smallest_text_px", "describe_figure_outputs"]

TEXT_SIZE_KEY = "smallest_text_px"
CSS_PX_PER_INCH = 96


def _as_matrices(weights) -> np.ndarray:
    if isinstance(weights, (list, tuple)) and weights and np.ndim(weights[0]) == 2:
        shapes = {np.shape(w) for w in weights}
        if len(shapes) != 1:
            raise ValueError(f"all matrices must have the same shape; got {sorted(shapes)}")
    arr = np.asarray(weights, dtype=float)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise ValueError("weights must be one matrix (n_q, n_k) or several (m, n_q, n_k); "
                         f"got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("weights contain NaN or infinity")
    return arr


def _check_labels(labels, length: int, name: str, axis: str) -> list[str]:
    labels = [str(t) for t in labels]
    if len(labels) != length:
        raise ValueError(f"{name} has {len(labels)} labels but the matrices have {length} "
                         f"{axis}")
    return labels


def _long(labels: list[str]) -> bool:
    """True if some label is longer than one character (then many of them need rotating)."""
    return max(len(label) for label in labels) > 1


def _annotate(ax, matrix: np.ndarray, fmt: str, vmax: float) -> None:
    for (i, j), w in np.ndenumerate(matrix):
        color = "white" if w > 0.6 * vmax else "black"
        ax.text(j, i, format(w, fmt), ha="center", va="center", fontsize=9, color=color)


def attention_heatmap(weights, key_labels: Sequence[str], query_labels=None, *,
                      titles: Sequence[str] | None = None, annotate: bool = False,
                      fmt: str = ".2f", cmap: str = "Blues", vmax: float = 1.0,
                      xlabel: str = "키 (Key)", ylabel: str = "쿼리 (Query)",
                      cell_size: float = 0.55) -> Figure:
    """Draw one or several attention-weight matrices as heatmaps, side by side.

    Parameters
    ----------
    weights : array_like, shape (n_q, n_k) or (m, n_q, n_k), or a list of m such matrices
        Attention weights: row i is how much query i attends to each key. Values are
        usually in [0, 1].
    key_labels : sequence of str, length n_k
        Token labels on the x axis (the keys). Korean text renders.
    query_labels : sequence of str, length n_q, optional
        Token labels on the y axis (the queries). Defaults to ``key_labels`` (self-attention).
    titles : sequence of str, length m, optional
        One title per matrix.
    annotate : bool, default False
        Write each weight in its cell, formatted with ``fmt``.
    fmt : str, default ".2f"
        Format of the annotations.
    cmap : str, default "Blues"
        Matplotlib colour map.
    vmax : float, default 1.0
        The weight drawn with the darkest colour (the colour scale runs from 0 to ``vmax``).
    xlabel, ylabel : str
        Axis labels.
    cell_size : float, default 0.55
        Size of one cell in inches; the figure grows with the number of tokens.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, with one axes per matrix and a shared colour bar.

    Raises
    ------
    ValueError
        If ``weights`` is not one or several 2-D matrices of the same shape, contains NaN or
        infinity, or the labels' lengths do not match the matrices' axes, or ``titles`` does
        not have one entry per matrix.

    Notes
    -----
    Used from chapter 2 on (heatmaps of attention weights).
    """
    mats = _as_matrices(weights)
    m, n_q, n_k = mats.shape
    keys = _check_labels(key_labels, n_k, "key_labels", "keys (columns)")
    queries = _check_labels(keys if query_labels is None else query_labels, n_q,
                            "query_labels", "queries (rows)")
    if titles is not None and len(titles) != m:
        raise ValueError(f"titles has {len(titles)} entries for {m} matrices")
    width = m * max(2.5, cell_size * n_k + 1.2) + 0.8
    fig, axes = plt.subplots(1, m, figsize=(width, max(2.2, cell_size * n_q + 1.2)),
                             squeeze=False, layout="constrained")
    for idx, ax in enumerate(axes[0]):
        image = ax.imshow(mats[idx], cmap=cmap, vmin=0.0, vmax=vmax)
        ax.set_xticks(range(n_k), keys, rotation=45 if n_k > 6 and _long(keys) else 0)
        ax.set_yticks(range(n_q), queries)
        ax.set_xlabel(xlabel)
        if idx == 0:
            ax.set_ylabel(ylabel)
        if titles is not None:
            ax.set_title(titles[idx])
        if annotate:
            _annotate(ax, mats[idx], fmt, vmax)
    fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="어텐션 가중치")
    return fig


def smallest_text_px(fig: Figure) -> float:
    """Font size of the smallest visible text in ``fig``, in pixels of its PNG image.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure drawn at ``fig.dpi`` dots per inch (the notebook's PNG output).

    Returns
    -------
    float
        ``min(font size in points) * fig.dpi / 72`` over every visible, non-empty text
        (titles, axis labels, tick labels, legends, annotations); pixels of the PNG.

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure.
    ValueError
        If the figure has no visible text.

    Notes
    -----
    A page that shows the PNG ``natural`` pixels wide in ``shown`` CSS pixels shows this text
    ``smallest_text_px(fig) * shown / natural`` CSS pixels high; the site's test asks for at
    least 9 (see ``tests/test_browser.py``).
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    sizes = [text.get_fontsize() for text in fig.findobj(Text)
             if text.get_visible() and text.get_text().strip()]
    if not sizes:
        raise ValueError("the figure has no visible text")
    return min(sizes) * fig.dpi / 72


def _png_width(data: str) -> int:
    """Width in pixels of a base64-encoded PNG image."""
    return matplotlib.image.imread(io.BytesIO(base64.b64decode(data)), format="png").shape[1]


def _text_size_or_none(fig: Figure) -> float | None:
    try:
        return round(smallest_text_px(fig), 2)
    except ValueError:  # a figure without text: nothing to measure
        return None


def describe_figure_outputs(shell) -> None:
    """Give IPython's PNG output of every figure a display width and its smallest text size.

    After this call a figure's ``image/png`` output has the metadata
    ``{"width": w, "smallest_text_px": s}`` (``s`` is left out for a figure without text).
    ``w`` shows one inch of the figure as 96 CSS pixels, the browser's inch, so a 10-point
    label looks the same size in every figure (a figure wider than the page is still shrunk
    to fit). ``s`` is :func:`smallest_text_px`, so a test can check from the notebook and the
    rendered page that no figure text is too small to read. Calling it again changes nothing.

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell
        The running shell (``get_ipython()``); its PNG formatter for figures is wrapped.

    Raises
    ------
    KeyError
        If the shell has no PNG formatter for figures (matplotlib's inline backend is not on).
    """
    formatter = shell.display_formatter.formatters["image/png"]
    draw_png = formatter.lookup_by_type(Figure)
    if getattr(draw_png, "describes_figures", False):
        return

    def png_with_metadata(fig):
        data = draw_png(fig)
        if data is None:
            return None
        metadata = {"width": round(_png_width(data) * CSS_PX_PER_INCH / fig.dpi)}
        if (size := _text_size_or_none(fig)) is not None:
            metadata[TEXT_SIZE_KEY] = size
        return data, metadata

    png_with_metadata.describes_figures = True
    formatter.for_type(Figure, png_with_metadata)
