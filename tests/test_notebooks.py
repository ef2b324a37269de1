"""The chapters: all in the toc, all run by nbval, committed from one clean run, complete.

nbval itself (``--nbval``, outputs compared) executes every notebook; these tests check what
nbval does not: that no notebook escapes it and that the committed files are well-formed.
"""

import re
import unicodedata
from pathlib import Path

import nbformat
import pytest

from tools.toc import ROOT, toc_files, toc_notebooks

CHAPTERS = sorted(p.relative_to(ROOT) for p in (ROOT / "chapters").glob("*.ipynb"))
REQUIRED_HEADINGS = ("## 학습 목표", "## 준비", "## 요약", "## 연습 문제")


def read(path: Path):
    return nbformat.read(ROOT / path, as_version=4)


def test_every_toc_file_exists():
    missing = [f for f in toc_files()
               if not any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb"))]
    assert not missing, f"_toc.yml names files that do not exist: {missing}"


def test_every_chapter_notebook_is_in_the_toc():
    assert CHAPTERS, "no notebooks in chapters/"
    assert sorted(toc_notebooks()) == CHAPTERS, \
        "chapters/ and _toc.yml disagree: every notebook in chapters/ must be in the toc"


def test_every_toc_notebook_is_run_by_nbval(request):
    if not request.config.getoption("nbval", default=False):
        pytest.fail("run the tests with --nbval (the README's test command does)")
    ran = {Path(item.fspath).resolve() for item in request.session.items
           if type(item).__name__ == "IPyNbCell"}
    missing = [str(nb) for nb in toc_notebooks() if (ROOT / nb).resolve() not in ran]
    assert not missing, f"notebooks in the toc that nbval did not collect: {missing}"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_committed_from_one_clean_run(path):
    counts = [c.execution_count for c in read(path).cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), \
        f"{path}: execution counts {counts} are not 1, 2, 3, ...: re-run top to bottom"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_no_run_dependent_metadata(path):
    """What tools/course.py execute saves: no timestamps, each stream's text in one piece."""
    for index, cell in enumerate(read(path).cells):
        assert "execution" not in cell.metadata, \
            f"{path}, cell {index}: execution timestamps; re-record with tools/course.py execute"
        streams = [o.get("name") if o.output_type == "stream" else None
                   for o in cell.get("outputs", [])]
        split = any(a is not None and a == b for a, b in zip(streams, streams[1:]))
        assert not split, f"{path}, cell {index}: one stream saved in pieces; re-record it"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_no_errors_warnings_or_stderr_in_outputs(path):
    for index, cell in enumerate(read(path).cells):
        for out in cell.get("outputs", []):
            where = f"{path}, cell {index}"
            assert out.output_type != "error", f"{where}: an error output"
            assert out.get("name") != "stderr", f"{where}: stderr output {out.get('text')!r}"
            text = out.get("text", "") + str(out.get("data", {}).get("text/plain", ""))
            assert "Warning" not in text, f"{where}: a warning in the output"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_glued_values_reach_the_page_as_glued(path):
    """myst-nb shows a glued value's plain text after ``ast.literal_eval``: a bare ``1.05, 1.17``
    would show as a tuple and ``1.00`` as ``1.0``. helpers.claims quotes such text, so every
    saved value reads back as a number or as its own string."""
    import ast  # noqa: PLC0415

    for index, cell in enumerate(read(path).cells):
        for out in cell.get("outputs", []):
            plain = out.get("data", {}).get("application/papermill.record/text/plain")
            if plain is None:
                continue
            try:
                value = ast.literal_eval(plain)
            except (SyntaxError, ValueError):
                continue  # shown as written
            name = out.metadata["scrapbook"]["name"]
            kept = isinstance(value, str) or (isinstance(value, (int, float))
                                              and not isinstance(value, bool)
                                              and str(value) == plain)
            assert kept, f"{path}, cell {index}: {name} = {plain!r} would show as {value!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_chapter_structure(path):
    cells = read(path).cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# "), \
        f"{path}: the first cell must be the chapter title"
    headings = [line for c in cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("## ")]
    positions = [headings.index(h) if h in headings else -1 for h in REQUIRED_HEADINGS]
    assert -1 not in positions, f"{path}: missing one of {REQUIRED_HEADINGS}: {headings}"
    assert positions == sorted(positions), f"{path}: sections out of order: {headings}"
    assert headings[-1] == "## 연습 문제", f"{path}: 연습 문제 must be the last section"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_one_setup_call_and_exercises_with_hidden_solutions(path):
    cells = read(path).cells
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert code.count("helpers.setup(") == 1, f"{path}: call helpers.setup() exactly once"
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    exercises, solutions = text.count("```{exercise}"), text.count("```{solution}")
    assert exercises >= 2 and solutions == exercises, \
        f"{path}: {exercises} exercises, {solutions} solutions"
    assert text.count(":class: dropdown") >= solutions, f"{path}: solutions must be hidden"


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_plots_end_with_show(path):
    for index, cell in enumerate(read(path).cells):
        has_plot = "plt." in cell.source or "attention_heatmap(" in cell.source
        if cell.cell_type == "code" and has_plot and "import" not in cell.source:
            last = cell.source.strip().splitlines()[-1]
            assert last.startswith("plt.show()"), \
                f"{path}, cell {index}: a plotting cell must end with plt.show()"


CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # every control character but the newline


@pytest.mark.parametrize("path", CHAPTERS + sorted(p.relative_to(ROOT) for p in ROOT.glob("*.md")),
                         ids=str)
def test_no_control_characters_in_prose(path):
    """A stray "\\t" or "\\b" in a Python string that writes LaTeX ends up as a control
    character, and the formula breaks (\\text, \\beta, \\tfrac)."""
    if path.suffix == ".ipynb":
        texts = [(i, c.source) for i, c in enumerate(read(path).cells) if c.cell_type == "markdown"]
    else:
        texts = [(0, (ROOT / path).read_text(encoding="utf-8"))]
    found = [(i, repr(text[max(0, m.start() - 15):m.end() + 15]))
             for i, text in texts for m in CONTROL.finditer(text)]
    assert not found, f"{path}: control characters in markdown (cell, context): {found}"


CODE_COLUMNS = 88
HANGUL = re.compile(r"[가-힣]")


def columns(line: str) -> int:
    """Width of ``line`` in a monospaced font: wide characters (Hangul, CJK) count twice."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def test_columns_counts_wide_characters_twice():
    assert columns("print(x)") == 8 and columns("어텐션 x") == 8


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_code_lines_fit_88_columns(path):
    """The site shows 88 columns without scrolling (tests/test_browser.py checks the page)."""
    long = [f"cell {i}: {line}" for i, cell in enumerate(read(path).cells)
            if cell.cell_type == "code"
            for line in cell.source.splitlines() if columns(line) > CODE_COLUMNS]
    assert not long, f"{path}: code lines wider than {CODE_COLUMNS} columns:\n" + "\n".join(long)


SHOWN_COLUMNS = 86  # a code block in a cell's output has a little less room than a cell


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_code_shown_from_helpers_fits_its_box(path):
    """helpers.show_source puts helpers' code on the page as a Markdown code block; a longer
    line wraps to the block's left edge on the site and in the PDF."""
    long = [f"cell {i}: {line}" for i, cell in enumerate(read(path).cells)
            if cell.cell_type == "code" for out in cell.get("outputs", [])
            if "```python" in str(out.get("data", {}).get("text/markdown", ""))
            for line in str(out["data"]["text/markdown"]).splitlines()
            if columns(line) > SHOWN_COLUMNS]
    assert not long, f"{path}: shown code wider than {SHOWN_COLUMNS} columns:\n" + "\n".join(long)


FIGURE_TYPES = ("image/png", "image/svg+xml")  # matplotlib's PNGs, helpers.diagrams' SVGs


def figure_cells(path):
    """(index, cell, figure outputs) of every code cell of ``path`` that shows a figure."""
    for i, cell in enumerate(read(path).cells):
        pngs = [o for o in cell.get("outputs", [])
                if set(FIGURE_TYPES) & set(o.get("data", {}))]
        if pngs:
            yield i, cell, pngs


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_every_figure_has_a_numbered_korean_caption_and_alt_text(path):
    number = int(path.name[:2])
    for i, cell, pngs in figure_cells(path):
        options = cell.metadata.get("mystnb", {})
        figure, image = options.get("figure", {}), options.get("image", {})
        where = f"{path} cell {i}"
        assert len(pngs) == 1, f"{where}: {len(pngs)} figures in one cell (one caption each)"
        assert re.fullmatch(rf"fig-ch{number}-[a-z0-9-]+", figure.get("name", "")), \
            f"{where}: figure.name must be fig-ch{number}-<words>; got {figure.get('name')!r}"
        assert HANGUL.search(figure.get("caption", "")), f"{where}: no Korean caption"
        alt = image.get("alt", "")
        assert HANGUL.search(alt) and len(alt) >= 30 and not alt.endswith(".png"), \
            f"{where}: alt text must say in Korean what the figure shows; got {alt!r}"


def test_figure_names_are_unique():
    names = [cell.metadata["mystnb"]["figure"]["name"] for path in CHAPTERS
             for _, cell, _ in figure_cells(path) if "mystnb" in cell.metadata]
    assert len(names) >= 20 and len(names) == len(set(names)), names


@pytest.mark.parametrize("path", CHAPTERS, ids=str)
def test_figures_carry_their_display_width_and_text_size(path):
    """helpers.setup() makes every figure output say how wide to show it and its smallest text."""
    for i, _, pngs in figure_cells(path):
        kind = next(t for t in FIGURE_TYPES if t in pngs[0]["data"])
        metadata = pngs[0].get("metadata", {}).get(kind, {})
        assert {"width", "smallest_text_px"} <= set(metadata), \
            f"{path} cell {i}: figure output without helpers' metadata: {metadata}"
