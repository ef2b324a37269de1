"""Read the book's table of contents (_toc.yml): which notebooks are chapters."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _files(entries) -> list[str]:
    found = []
    for entry in entries or []:
        if "file" in entry:
            found.append(entry["file"])
        found += _files(entry.get("sections"))
    return found


def toc_files() -> list[str]:
    """Every file the toc names (without suffix), root first, in reading order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += _files(part.get("chapters"))
    return files


def toc_notebooks() -> list[Path]:
    """The toc's notebooks, as paths relative to the repository root."""
    return [Path(f + ".ipynb") for f in toc_files() if (ROOT / (f + ".ipynb")).exists()]
