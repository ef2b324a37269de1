"""What nbval compares: every output but the figures' pictures and interactive twins.

The root conftest.py adds the interactive twin of a figure (its plotly spec and the HTML that
draws it in Colab) to the formats nbval leaves out, as it leaves out PNG images: for a trained
model, the numbers they carry change in the last digits from one CPU to another. Text outputs
are still compared.
"""

import json
import subprocess
import sys

import nbformat

from helpers.plotting import INTERACTIVE_FORMATS, PLOTLY_MIME
from tools.toc import ROOT, toc_notebooks


def figure_output(value: float, text: str) -> dict:
    spec = {"data": [{"type": "heatmap", "z": [[value]]}], "layout": {}}
    return {"output_type": "display_data", "metadata": {},
            "data": {PLOTLY_MIME: spec, "text/html": f"<div>{value}</div>",
                     "text/plain": text}}


def test_a_twin_that_differs_passes_and_text_that_differs_fails():
    """The saved twin holds 0.124 where the run makes 0.123; the saved text is "a", the
    printed "b": nbval must pass the first cell and fail the second."""
    shown = figure_output(0.123, "<Figure>")
    code = ("from IPython.display import display\n"
            f"display({json.dumps(shown['data'])}, raw=True)")
    first = nbformat.v4.new_code_cell(code, execution_count=1,
                                      outputs=[nbformat.from_dict(figure_output(0.124,
                                                                                "<Figure>"))])
    second = nbformat.v4.new_code_cell('print("b")', execution_count=2, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="a\n")])
    folder = ROOT / "_build" / "nbval-rules"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "twin.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[first, second]), path)
    result = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env",
                             "-p", "no:cacheprovider", "-q", str(path.relative_to(ROOT))],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-3000:]
    assert "Cell 1" in result.stdout and "Cell 0" not in result.stdout.split("FAILURES")[-1]


def test_only_figures_have_outputs_of_the_uncompared_formats():
    """A chapter output in text/html that is not a figure's twin would go unchecked."""
    assert set(INTERACTIVE_FORMATS) == {PLOTLY_MIME, "text/html"}
    for path in toc_notebooks():
        for index, cell in enumerate(nbformat.read(ROOT / path, as_version=4).cells):
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if set(INTERACTIVE_FORMATS) & set(data):
                    assert {PLOTLY_MIME, "text/html", "image/png"} <= set(data), \
                        f"{path}, cell {index}: text/html that is not an interactive figure"
