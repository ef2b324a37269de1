"""Heatmaps of attention weights with Korean token labels.

Importing this module registers the Nanum Gothic font that koreanize-matplotlib ships inside
its package, so Korean labels render without downloading anything.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

with warnings.catch_warnings():
    # koreanize-matplotlib 0.1.1 compares versions with distutils, which warns on import.
    warnings.simplefilter("ignore", DeprecationWarning)
    import koreanize_matplotlib  # noqa: F401 - registers and selects the bundled font

__all__ = ["attention_heatmap"]


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
        ax.set_xticks(range(n_k), keys, rotation=45 if n_k > 6 else 0)
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
