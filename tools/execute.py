"""Re-run notebooks top to bottom in a fresh kernel and save them with their outputs.

Usage: python tools/execute.py chapters/NN_name.ipynb [...]  (or tools/course.py execute ...)

No run-dependent metadata is saved (no execution timestamps), and text a cell printed in
several flushes is saved as one output, so re-recording a chapter whose outputs did not change
leaves ``git diff`` empty.
"""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(nb, folder: Path, *, allow_errors: bool = False, env: dict | None = None) -> None:
    """Execute ``nb`` in place in a fresh ``python3`` kernel whose working folder is ``folder``.

    ``env``: variables added to this process's environment for the kernel (for example
    ``COURSE_SEED``, or the CPU path of tools/cpu_paths.py).
    """
    NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                   allow_errors=allow_errors,
                   resources={"metadata": {"path": str(folder)}}).execute(
                       env={**os.environ, **(env or {})})
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _joined_streams(cell.outputs)


def errors(nb) -> list[str]:
    """One line for each error output of the executed ``nb``: cell, exception, message."""
    return [f"cell {i}: {out.get('ename')}: {out.get('evalue', '')[:200]}"
            for i, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
            if out.get("output_type") == "error"]


def _joined_streams(outputs: list) -> list:
    """Outputs with consecutive pieces of the same stream (stdout, stderr) joined into one."""
    joined = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (output.output_type == "stream" and previous is not None
                and previous.output_type == "stream" and previous.name == output.name):
            previous.text += output.text
        else:
            joined.append(output)
    return joined


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    run(nb, path.parent)
    nbformat.write(nb, path)
    print(f"executed {path}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[1:]:
        execute(Path(name).resolve())
