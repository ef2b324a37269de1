"""Heatmaps of attention weights with Korean token labels, and figures that report their text size.

Importing this module registers the Nanum Gothic font that koreanize-matplotlib ships inside
its package, so Korean labels render without downloading anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import warnings
from collections.abc import Sequence

import matplotlib.colors
import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

with warnings.catch_warnings():
    # koreanize-matplotlib 0.1.1 compares versions with distutils, which warns on import.
    warnings.simplefilter("ignore", DeprecationWarning)
    import koreanize_matplotlib  # noqa: F401 - registers and selects the bundled font

__all__ = ["attention_heatmap", "slider_figure", "attach_interactive", "interactive_spec",
           "interactive_html", "smallest_text_px", "describe_figure_outputs"]

TEXT_SIZE_KEY = "smallest_text_px"
_PNG_ATTR = "_course_png"
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
        The figure, with one axes per matrix and a shared colour bar. It also carries its
        interactive twin (:func:`interactive_spec`): after :func:`helpers.setup`, the notebook
        output holds both, and the site and JupyterLab show the interactive one, where hovering
        over a cell shows the query, the key and the weight.

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
    spec = _heatmap_spec(mats, keys, queries, titles, annotate, fmt, cmap, vmax, xlabel, ylabel,
                         _height_px(fig))
    attach_interactive(fig, spec, f"어텐션 가중치 히트맵 {m}개: 쿼리 {n_q}개 × 키 {n_k}개")
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
    """Give IPython's PNG output of every figure a display width and its smallest text size,
    and a figure with an interactive twin its interactive outputs.

    After this call a figure's ``image/png`` output has the metadata
    ``{"width": w, "smallest_text_px": s}`` (``s`` is left out for a figure without text).
    ``w`` shows one inch of the figure as 96 CSS pixels, the browser's inch, so a 10-point
    label looks the same size in every figure (a figure wider than the page is still shrunk
    to fit). ``s`` is :func:`smallest_text_px`, so a test can check from the notebook and the
    rendered page that no figure text is too small to read. A figure that carries a plotly.js
    specification (:func:`attach_interactive`) also gets the outputs ``PLOTLY_MIME`` (drawn by
    JupyterLab's plotly extension and by the site) and ``text/html``
    (:func:`interactive_html`, for Colab); its PNG is drawn once. Calling it again changes
    nothing.

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

    def interactive_outputs(fig):
        spec = interactive_spec(fig)
        if spec is None:
            return None
        png = png_with_metadata(fig)
        if png is None:
            return None
        setattr(fig, _PNG_ATTR, png)  # the PNG formatter, called next, takes it from here
        alt = spec["layout"]["meta"].get("description", "")
        return dict(zip(INTERACTIVE_FORMATS, (spec, interactive_html(spec, png[0], alt))))

    def png_once(fig):
        cached = fig.__dict__.pop(_PNG_ATTR, None)
        return cached if cached is not None else png_with_metadata(fig)

    png_once.describes_figures = True
    formatter.for_type(Figure, png_once)
    shell.display_formatter.mimebundle_formatter.for_type(Figure, interactive_outputs)


# --- Figures a reader can play with -------------------------------------------------------
#
# A figure that carries an interactive twin keeps it as a plain plotly.js specification (a
# dict of JSON: data, layout, config) in the attribute below. helpers never imports plotly:
# the notebook output holds the specification, and whatever shows the notebook draws it with
# plotly.js (the site copies plotly.min.js from the pinned plotly package into _static,
# JupyterLab uses the jupyterlab-plotly extension in the same package). The matplotlib PNG
# stays in the output as the static picture: for the PDF, for readers without JavaScript, and
# for untrusted notebooks.

PLOTLY_MIME = "application/vnd.plotly.v1+json"
# The formats of the interactive twin beside the PNG: nbval compares neither (conftest.py),
# since for a trained model the numbers they carry change in the last digits between CPUs.
INTERACTIVE_FORMATS = (PLOTLY_MIME, "text/html")
INTERACTIVE_ATTR = "_course_interactive"
PLOTLY_JS_VERSION = "4.1.1"  # the plotly.js inside the pinned plotly wheel (requirements.txt)
FIGURE_MAX_PX = 672  # the width of the text column
PLOT_FONT = {"family": '"Noto Sans CJK KR", "Nanum Gothic", "Malgun Gothic", sans-serif',
             "size": 12}
# No toolbar (its labels are English), no zoom; "responsive" stays off: with it, JupyterLab's
# plotly renderer shrank a figure to nothing after a slider moved.
PLOT_CONFIG = {"displayModeBar": False, "responsive": False, "scrollZoom": False,
               "doubleClick": False, "showTips": False}
DIGITS = 3  # decimals kept in a specification: small, and identical bytes run after run


def _rounded(values) -> list:
    """``values`` as nested lists of Python floats rounded to DIGITS (``-0.0`` becomes 0.0)."""
    return (np.round(np.asarray(values, dtype=float), DIGITS) + 0.0).tolist()


def _height_px(fig: Figure) -> int:
    return int(round(fig.get_figheight() * CSS_PX_PER_INCH))


def _width_px(fig: Figure) -> int:
    return min(FIGURE_MAX_PX, int(round(fig.get_figwidth() * CSS_PX_PER_INCH)))


def _colorscale(cmap: str, stops: int = 9) -> list:
    """A matplotlib colour map as a plotly colour scale, so both pictures use the same colours."""
    colors = plt.get_cmap(cmap)(np.linspace(0.0, 1.0, stops))
    return [[round(float(x), 4), matplotlib.colors.to_hex(c)]
            for x, c in zip(np.linspace(0.0, 1.0, stops), colors)]


def _plotly_text(text: str) -> str:
    """``text`` as plotly.js shows it literally: it reads ``<``, ``>`` and ``&`` as HTML."""
    return html.escape(str(text), quote=False)


def _heatmap_spec(mats: np.ndarray, keys: list[str], queries: list[str], titles, annotate: bool,
                  fmt: str, cmap: str, vmax: float, xlabel: str, ylabel: str,
                  height: int) -> dict:
    m = len(mats)
    gap, right = 0.06, 0.86  # room between matrices; the colour bar takes the rest
    width = (right - gap * (m - 1)) / m
    # plotly reads its texts as HTML: a token such as <s> or <pad> must be escaped to show
    keys, queries, xlabel, ylabel = ([_plotly_text(t) for t in keys],
                                     [_plotly_text(t) for t in queries],
                                     _plotly_text(xlabel), _plotly_text(ylabel))
    titles = None if titles is None else [_plotly_text(t) for t in titles]
    hover = [[f"쿼리 ‘{q}’<br>키 ‘{k}’" for k in keys] for q in queries]
    rotate = -45 if len(keys) > 6 and _long(keys) else 0
    data, layout = [], {}
    annotations = []
    for idx, mat in enumerate(mats):
        suffix = "" if idx == 0 else str(idx + 1)
        title = f"{titles[idx]}<br>" if titles is not None else ""
        trace = {
            "type": "heatmap", "z": _rounded(mat), "x": list(range(len(keys))),
            "y": list(range(len(queries))), "text": hover, "coloraxis": "coloraxis",
            "xaxis": f"x{suffix}", "yaxis": f"y{suffix}", "xgap": 1, "ygap": 1,
            "hovertemplate": f"{title}%{{text}}<br>어텐션 가중치 %{{z:.3f}}<extra></extra>",
        }
        if annotate:
            trace["texttemplate"] = f"%{{z:{fmt}}}"
            trace["textfont"] = {"size": 10}
        data.append(trace)
        start = idx * (width + gap)
        layout[f"xaxis{suffix}"] = {
            "domain": [round(start, 4), round(start + width, 4)], "anchor": f"y{suffix}",
            "tickvals": list(range(len(keys))), "ticktext": keys, "tickangle": rotate,
            "title": {"text": xlabel}, "fixedrange": True, "showgrid": False,
            "zeroline": False, "automargin": True}
        layout[f"yaxis{suffix}"] = {
            "anchor": f"x{suffix}", "autorange": "reversed", "fixedrange": True,
            "tickvals": list(range(len(queries))), "ticktext": queries if idx == 0 else [],
            "showticklabels": idx == 0, "showgrid": False, "zeroline": False,
            "automargin": True, "title": {"text": ylabel if idx == 0 else ""}}
        if titles is not None:
            annotations.append({"text": titles[idx], "x": round(start + width / 2, 4),
                                "y": 1.0, "xref": "paper", "yref": "paper",
                                "xanchor": "center", "yanchor": "bottom",
                                "showarrow": False, "font": {"size": 13}})
    scale = _colorscale(cmap)
    layout.update({
        "coloraxis": {"colorscale": scale, "cmin": 0.0, "cmax": float(vmax),
                      "colorbar": {"title": {"text": "어텐션 가중치", "side": "right"},
                                   "thickness": 12, "len": 0.9}},
        "annotations": annotations, "font": PLOT_FONT, "height": height,
        "margin": {"l": 10, "r": 10, "t": 40 if titles is not None else 10, "b": 10},
        "hoverlabel": {"font": {"size": 13}}, "paper_bgcolor": "white",
        "plot_bgcolor": "white"})
    return {"data": data, "layout": layout, "config": PLOT_CONFIG}


def _check_spec(spec) -> dict:
    if not isinstance(spec, dict) or not isinstance(spec.get("data"), list) \
            or not isinstance(spec.get("layout"), dict):
        raise TypeError("spec must be a dict with a list 'data' and a dict 'layout' (a plotly.js "
                        f"figure); got {type(spec).__name__}")
    return spec


def attach_interactive(fig: Figure, spec: dict, description: str = "") -> Figure:
    """Give ``fig`` an interactive twin, drawn by plotly.js from ``spec``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The static picture.
    spec : dict
        A plotly.js figure as plain JSON: ``{"data": [...], "layout": {...}, "config": {...}}``.
    description : str, default ""
        A short Korean description, the alternative text of the static picture where the cell's
        own alt text is not at hand (JupyterLab, Colab).

    Returns
    -------
    matplotlib.figure.Figure
        ``fig`` itself.

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure or ``spec`` is not a plotly.js figure dict.

    Examples
    --------
    >>> fig = plt.figure()
    >>> spec = {"data": [{"type": "bar", "y": [1, 2]}], "layout": {}}
    >>> interactive_spec(attach_interactive(fig, spec, "막대 두 개"))["data"]
    [{'type': 'bar', 'y': [1, 2]}]
    >>> plt.close(fig)
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    _check_spec(spec)
    if not isinstance(description, str):
        raise TypeError(f"description must be a str; got {type(description).__name__}")
    setattr(fig, INTERACTIVE_ATTR, (spec, description))
    return fig


def interactive_spec(fig: Figure) -> dict | None:
    """The plotly.js figure ``fig`` carries (:func:`attach_interactive`), or None.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    dict or None
        ``{"data", "layout", "config"}`` with the figure's name (``layout.meta.id``, from a
        hash of its content), its width in CSS pixels (``layout.meta.width``) and its
        description (``layout.meta.description``).

    Raises
    ------
    TypeError
        If ``fig`` is not a matplotlib figure.

    Examples
    --------
    >>> fig = attention_heatmap([[0.9, 0.1], [0.5, 0.5]], ["나는", "간다"])
    >>> spec = interactive_spec(fig)
    >>> spec["data"][0]["text"][0][1]
    '쿼리 ‘나는’<br>키 ‘간다’'
    >>> spec["layout"]["meta"]["id"].startswith("course-fig-")
    True
    >>> plt.close(fig)
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    attached = getattr(fig, INTERACTIVE_ATTR, None)
    if attached is None:
        return None
    spec = json.loads(_json(attached[0]))  # a copy, and only JSON types
    body = _json(spec)
    meta = {"id": "course-fig-" + hashlib.sha256(body.encode()).hexdigest()[:12],
            "width": _width_px(fig), "description": attached[1]}
    spec["layout"]["meta"] = meta
    spec.setdefault("config", dict(PLOT_CONFIG))
    return spec


def _json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)


def _script_json(obj) -> str:
    """JSON that can sit inside a <script> element."""
    return _json(obj).replace("</", "<\\/")


# Draws the figure with the page's plotly.js. Colab shows each output in its own frame without
# plotly.js, so there (only) it is loaded from plotly's CDN; elsewhere, without plotly.js, the
# static picture stays.
_DRAW = """<script>
(function () {
  var el = document.getElementById("%(id)s");
  var spec = JSON.parse(document.getElementById("%(id)s-spec").textContent);
  function draw() {
    el.innerHTML = "";
    window.Plotly.newPlot(el, spec.data, spec.layout, spec.config);
  }
  if (window.Plotly) {
    draw();
  } else if (window.google && window.google.colab) {
    var script = document.createElement("script");
    script.src = "https://cdn.plot.ly/plotly-%(version)s.min.js";
    script.onload = draw;
    document.head.appendChild(script);
  }
})();
</script>"""


def interactive_html(spec: dict, png: str, alt: str = "") -> str:
    """The ``text/html`` output of an interactive figure, with its static picture inside.

    Parameters
    ----------
    spec : dict
        From :func:`interactive_spec` (it names the figure and its width).
    png : str
        The static picture, a base64-encoded PNG.
    alt : str, default ""
        Alternative text of the static picture.

    Returns
    -------
    str
        A ``<div>`` holding the static ``<img>``, the specification as JSON, and a script that
        replaces the picture with the interactive figure when plotly.js is there.
    """
    meta = _check_spec(spec)["layout"]["meta"]
    fid, width = meta["id"], meta["width"]
    alt = html.escape(alt, quote=True)
    return (f'<div class="course-interactive" id="{fid}" style="max-width:{width}px">'
            f'<img class="course-static" alt="{alt}" style="width:100%" '
            f'src="data:image/png;base64,{png}"></div>\n'
            f'<script type="application/json" id="{fid}-spec">{_script_json(spec)}</script>\n'
            + _DRAW % {"id": fid, "version": PLOTLY_JS_VERSION})


_KINDS = ("bar", "line", "markers")
_SLIDER_PX = 80  # the height a slider with its current value takes under the panels
_SLIDER_TOP_PX = 75  # from the lowest panel to the first slider: room for the x-axis title
_STATIC_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown")


def _check_slider_args(panels, series, sliders):
    if not panels or not isinstance(panels, (list, tuple)):
        raise ValueError("panels must be a non-empty list of dicts")
    if not sliders or not isinstance(sliders, (list, tuple)):
        raise ValueError("sliders must be a non-empty list of dicts")
    for s, slider in enumerate(sliders):
        n = len(slider["values"])
        if n < 2:
            raise ValueError(f"slider {s} needs at least 2 values; got {n}")
        for key in ("active", *slider.get("static", ())):
            index = slider.get("active", 0) if key == "active" else key
            if not 0 <= index < n:
                raise ValueError(f"slider {s}: index {index} is not in [0, {n})")
        if slider.get("notes") is not None and len(slider["notes"]) != n:
            raise ValueError(f"slider {s} has {n} values but {len(slider['notes'])} notes")
    checked = []
    for i, item in enumerate(series):
        if item.get("kind", "line") not in _KINDS:
            raise ValueError(f"series {i}: kind must be one of {_KINDS}; got {item.get('kind')!r}")
        if not 0 <= item["panel"] < len(panels):
            raise ValueError(f"series {i}: panel {item['panel']} does not exist")
        y = np.asarray(item["y"], dtype=float)
        n_x = len(panels[item["panel"]]["x"])
        slider = item.get("slider")
        if slider is None:
            if y.shape != (n_x,):
                raise ValueError(f"series {i} without a slider needs y of shape ({n_x},); "
                                 f"got {y.shape}")
        else:
            if not 0 <= slider < len(sliders):
                raise ValueError(f"series {i}: slider {slider} does not exist")
            expected = (len(sliders[slider]["values"]), n_x)
            if y.shape != expected:
                raise ValueError(f"series {i} moves with slider {slider}, so y must have shape "
                                 f"{expected} (one row per slider value); got {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError(f"series {i}: y contains NaN or infinity")
        checked.append({**item, "y": y})
    return checked


def _slider_spec(panels, series, sliders, height: int) -> dict:
    n_panels = len(panels)
    top, bottom_px = 60, _SLIDER_TOP_PX + 10 + _SLIDER_PX * len(sliders)
    area = height - top - bottom_px
    gap = 95 / area  # room for a panel's x-axis title and the next panel's title
    panel_h = (1 - gap * (n_panels - 1)) / n_panels
    data, layout, annotations = [], {}, []
    for p, panel in enumerate(panels):
        suffix = "" if p == 0 else str(p + 1)
        high = 1 - p * (panel_h + gap)
        xaxis = {"anchor": f"y{suffix}", "title": {"text": panel["xlabel"]},
                 "fixedrange": True, "automargin": True, "zeroline": False}
        if panel.get("xticklabels") is not None:
            xaxis.update(tickvals=_rounded(panel["x"]), ticktext=list(panel["xticklabels"]))
        yaxis = {"anchor": f"x{suffix}", "title": {"text": panel["ylabel"]},
                 "domain": [round(max(high - panel_h, 0.0), 4), round(high, 4)],
                 "fixedrange": True, "automargin": True, "zeroline": True}
        if panel.get("ylim") is not None:
            yaxis["range"] = _rounded(panel["ylim"])
        layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = xaxis, yaxis
        if panel.get("title"):
            annotations.append({"text": panel["title"], "x": 0.5, "y": round(high, 4),
                                "xref": "paper", "yref": "paper", "xanchor": "center",
                                "yanchor": "bottom", "showarrow": False,
                                "font": {"size": 13}})
    moving = {s: [] for s in range(len(sliders))}
    legend = set()  # one legend entry per name, for series of the same name in several panels
    for i, item in enumerate(series):
        panel = panels[item["panel"]]
        suffix = "" if item["panel"] == 0 else str(item["panel"] + 1)
        labels = panel.get("xticklabels")
        slider = item.get("slider")
        active = sliders[slider].get("active", 0) if slider is not None else None
        y = item["y"] if slider is None else item["y"][active]
        alone = sum(other["panel"] == item["panel"] for other in series) == 1
        trace = {"name": item["name"], "x": _rounded(panel["x"]), "y": _rounded(y),
                 "showlegend": not alone and item["name"] not in legend,
                 "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
                 "hovertemplate": (f"{item['name']}<br>{panel['xlabel']} "
                                   + ("%{text}" if labels is not None else "%{x}")
                                   + f"<br>{panel['ylabel']} %{{y:.3f}}<extra></extra>")}
        if labels is not None:
            trace["text"] = list(labels)
        if item.get("kind", "line") == "bar":
            trace.update(type="bar", textposition="none")
            if item.get("color"):
                trace["marker"] = {"color": matplotlib.colors.to_hex(item["color"])}
        else:
            mode = "lines+markers" if item.get("kind", "line") == "line" else "markers"
            trace.update(type="scatter", mode=mode)
            if item.get("color"):
                color = matplotlib.colors.to_hex(item["color"])
                trace["line"] = {"color": color}
                trace["marker"] = {"color": color}
        data.append(trace)
        legend.add(item["name"])
        if slider is not None:
            moving[slider].append(i)
    plot_sliders = []
    for s, slider in enumerate(sliders):
        y = round(-(_SLIDER_TOP_PX + _SLIDER_PX * s) / area, 4)
        note_index = None
        if slider.get("notes") is not None:  # on the slider's line, right of its value
            note_index = len(annotations)
            annotations.append({"text": slider["notes"][slider.get("active", 0)], "x": 1.0,
                                "y": y, "xref": "paper", "yref": "paper",
                                "xanchor": "right", "yanchor": "top", "showarrow": False,
                                "align": "right", "font": {"size": 13}})
        steps = []
        for v, label in enumerate(slider["values"]):
            restyle = {"y": [_rounded(series[i]["y"][v]) for i in moving[s]]}
            relayout = ({} if note_index is None
                        else {f"annotations[{note_index}].text": slider["notes"][v]})
            steps.append({"label": str(label), "method": "update",
                          "args": [restyle, relayout, moving[s]]})
        plot_sliders.append({
            "active": slider.get("active", 0), "steps": steps, "len": 1.0, "x": 0.0,
            "y": y, "yanchor": "top", "pad": {"t": 0, "b": 0}, "font": {"size": 11},
            "currentvalue": {"prefix": f"{slider['label']}: ", "font": {"size": 13}}})
    layout.update({
        "annotations": annotations, "sliders": plot_sliders, "font": PLOT_FONT,
        "height": height, "barmode": "group", "hoverlabel": {"font": {"size": 13}},
        "legend": {"orientation": "h", "x": 1.0, "xanchor": "right",
                   "y": round(1 + 26 / area, 4), "yanchor": "bottom"},
        "margin": {"l": 10, "r": 10, "t": top, "b": bottom_px},
        "paper_bgcolor": "white", "plot_bgcolor": "white"})
    return {"data": data, "layout": layout, "config": PLOT_CONFIG}


def _static_slider_picture(panels, series, sliders, width: float, panel_height: float):
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, panel_height * len(panels)),
                             squeeze=False, layout="constrained")
    axes = axes[:, 0]
    for p, (ax, panel) in enumerate(zip(axes, panels)):
        x = np.asarray(panel["x"], dtype=float)
        drawn = []
        for item in series:
            if item["panel"] != p:
                continue
            slider = item.get("slider")
            if slider is None:
                drawn.append((item, item["y"], item["name"]))
                continue
            shown = list(_slider_static(sliders[slider]))
            name, values = sliders[slider]["label"], sliders[slider]["values"]
            # a panel's only series is named by its title: the legend names the steps alone
            alone = panel.get("title") and sum(i["panel"] == p for i in series) == 1
            for k, v in enumerate(shown):  # the step's notes belong to the slider, not here
                step_name = f"{name} = {values[v]}"
                label = step_name if alone else f"{item['name']} ({step_name})"
                color = item.get("color") if k == 0 else _STATIC_COLORS[k % len(_STATIC_COLORS)]
                drawn.append(({**item, "color": color}, item["y"][v], label))
        n_bars = sum(d[0].get("kind", "line") == "bar" for d in drawn)
        step = float(np.min(np.diff(x))) if len(x) > 1 else 1.0
        k = 0
        for item, y, label in drawn:
            color = item.get("color")
            if item.get("kind", "line") == "bar":
                w = 0.8 * step / n_bars
                ax.bar(x + (k - (n_bars - 1) / 2) * w, y, width=w, label=label, color=color)
                k += 1
            else:
                style = "o-" if item.get("kind", "line") == "line" else "o"
                ax.plot(x, y, style, label=label, color=color, markersize=3)
        ax.set(xlabel=panel["xlabel"], ylabel=panel["ylabel"])
        if panel.get("ylim") is not None:
            ax.set_ylim(*panel["ylim"])
        if panel.get("xticklabels") is not None:
            ax.set_xticks(x, list(panel["xticklabels"]))
        if panel.get("title"):
            ax.set_title(panel["title"], fontsize=10)
        if panel.get("legend") is None:  # beside the panel: it covers none of the steps
            ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        else:
            ax.legend(fontsize=7.5, loc=panel["legend"])
    return fig


def _slider_static(slider: dict) -> list[int]:
    """The slider values the static picture shows: ``static``, else the active one."""
    return list(slider.get("static", [slider.get("active", 0)]))


def slider_figure(panels, series, sliders, *, description: str, width: float = 7.0,
                  panel_height: float = 2.6, height_px: int | None = None) -> Figure:
    """A figure whose values move with sliders: plotly.js sliders, and a static picture.

    Every value of every slider is computed beforehand, so the interactive figure needs no
    kernel: plotly.js's own sliders swap the precomputed values in (``layout.sliders``). The
    static picture, for the PDF and readers without JavaScript, overlays the values at the
    sliders' ``static`` positions, each named in the legend by its series and step.

    Parameters
    ----------
    panels : list of dict
        Stacked top to bottom. Keys: ``x`` (sequence of numbers), ``xlabel``, ``ylabel``
        (Korean), optional ``xticklabels`` (one per ``x``), ``ylim`` (lo, hi), ``title``,
        ``legend`` (a matplotlib ``loc`` inside the panel for the static picture's legend;
        without it the legend stands beside the panel, where it covers no data).
    series : list of dict
        Keys: ``panel`` (index), ``name`` (Korean, shown in the legend and on hover), ``kind``
        (``"bar"``, ``"line"`` or ``"markers"``), ``y``, optional ``color``, ``slider``. Without
        ``slider`` ``y`` has shape ``(len(x),)``; with ``slider=s`` it has one row per value of
        slider ``s``: shape ``(len(values), len(x))``.
    sliders : list of dict
        Keys: ``label`` (Korean, e.g. ``"온도 T"``), ``values`` (the labels of its steps),
        optional ``active`` (the starting index), ``static`` (the indices the static picture
        shows), ``notes`` (one Korean line per value, shown beside the slider as it moves; the
        static picture, which has no slider, names each step it shows in its legend instead).
    description : str
        A short Korean description (alternative text where the cell's own is not at hand).
    width, panel_height : float
        Size of the static picture in inches: ``width`` by ``panel_height`` per panel.
    height_px : int, optional
        Height of the interactive figure in CSS pixels; default: the panels and the sliders.

    Returns
    -------
    matplotlib.figure.Figure
        The static picture, carrying the interactive figure (:func:`attach_interactive`).

    Raises
    ------
    ValueError
        If a panel, slider or index does not exist, a slider has fewer than two values, or a
        series' ``y`` has the wrong shape or is not finite.

    Notes
    -----
    The explorables of chapters 1 (temperature of the softmax), 7 (online softmax) and 8
    (positional encoding).

    Examples
    --------
    >>> fig = slider_figure(
    ...     panels=[dict(x=[0, 1], xlabel="키", ylabel="가중치")],
    ...     series=[dict(panel=0, name="가중치", kind="bar", y=[[0.9, 0.1], [0.5, 0.5]],
    ...                  slider=0)],
    ...     sliders=[dict(label="온도", values=["1", "10"])], description="막대 두 개")
    >>> steps = interactive_spec(fig)["layout"]["sliders"][0]["steps"]
    >>> steps[1]["args"][0]
    {'y': [[0.5, 0.5]]}
    >>> plt.close(fig)
    """
    series = _check_slider_args(panels, series, sliders)
    if height_px is None:
        height_px = 160 + 220 * len(panels) + _SLIDER_PX * len(sliders)
    fig = _static_slider_picture(panels, series, sliders, width, panel_height)
    spec = _slider_spec(panels, series, sliders, int(height_px))
    return attach_interactive(fig, spec, description)
