"""Replace the generated part of a Markdown file, between ``<!-- NAME:start -->`` and
``<!-- NAME:end -->``, leaving the rest as written by hand."""

from __future__ import annotations

import re
from pathlib import Path


def replace_block(path: Path, block: str, text: str) -> None:
    """Put ``text`` between the ``block`` markers of ``path``.

    Raises
    ------
    SystemExit
        If ``path`` has no such pair of markers.
    """
    pattern = re.compile(rf"(<!-- {block}:start -->\n).*?(<!-- {block}:end -->)", re.S)
    content = path.read_text(encoding="utf-8")
    if not pattern.search(content):
        raise SystemExit(f"{path.name} has no <!-- {block}:start --> ... "
                         f"<!-- {block}:end --> block")
    path.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), content),
                    encoding="utf-8")


def block(path: Path, name: str) -> str:
    """The text between the ``name`` markers of ``path`` (without the final newline)."""
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->",
                      path.read_text(encoding="utf-8"), re.S)
    if not match:
        raise LookupError(f"{path.name} has no <!-- {name}:start --> ... <!-- {name}:end --> block")
    return match.group(1)
