"""tools/execute.py: re-recording a notebook whose outputs did not change changes no byte."""

import nbformat

from tools.execute import execute


def test_re_recording_an_unchanged_notebook_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 제목"),
        nbformat.v4.new_code_cell("x = 6 * 7\nprint(x)"),
        nbformat.v4.new_code_cell("x")]), path)
    execute(path)
    first = path.read_bytes()
    execute(path)
    assert path.read_bytes() == first
    cells = nbformat.read(path, as_version=4).cells
    assert cells[1].outputs[0].text == "42\n" and cells[2].execution_count == 2
    assert not any("execution" in cell.metadata for cell in cells)


def test_text_printed_in_several_flushes_is_saved_as_one_output(tmp_path):
    path = tmp_path / "nb.ipynb"
    code = ('import time\nprint("(16000, 8)", end="", flush=True)\ntime.sleep(0.5)\n'
            'print(" (16000, 16)")')
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), path)
    execute(path)
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert [(o.output_type, o.name, o.text) for o in outputs] == [
        ("stream", "stdout", "(16000, 8) (16000, 16)\n")]
