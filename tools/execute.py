"""Re-run notebooks top to bottom in a fresh kernel and save them with their outputs.

Usage: python tools/execute.py chapters/NN_name.ipynb [...]  (or tools/course.py execute ...)
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(nb, folder: Path) -> None:
    """Execute ``nb`` in place in a fresh ``python3`` kernel whose working folder is ``folder``."""
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()


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
