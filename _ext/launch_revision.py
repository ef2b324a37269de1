"""Launch buttons (Binder, Colab) open the notebook at the commit the site was built from.

Jupyter Book builds the launch links from ``repository.branch``, a branch that moves: a page
built last month would open today's notebook. Here the theme's ``repository_branch`` becomes
the full commit hash of the checkout being built (``git rev-parse HEAD``), which never changes.
Outside a git checkout (a source archive) it is the release tag ``repository.release`` of
_config.yml, the revision the Colab set-up cell installs helpers from (tools/colab_cell.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml


def built_revision(folder: Path) -> str | None:
    """The full hash of the commit checked out in ``folder``, or None if it is no checkout."""
    try:
        result = subprocess.run(["git", "rev-parse", "--verify", "HEAD^{commit}"], cwd=folder,
                                capture_output=True, text=True, check=False)
    except OSError:  # no git on this machine
        return None
    revision = result.stdout.strip()
    return revision if result.returncode == 0 and len(revision) == 40 else None


def release_tag(folder: Path) -> str:
    config = yaml.safe_load((folder / "_config.yml").read_text(encoding="utf-8"))
    return str(config["repository"]["release"])


def launch_revision(folder: Path) -> str:
    """The revision the launch buttons of a site built from ``folder`` name."""
    return built_revision(folder) or release_tag(folder)


def pin_launch_revision(app, config) -> None:
    options = dict(config.html_theme_options or {})
    options["repository_branch"] = launch_revision(Path(app.srcdir))
    config.html_theme_options = options


def setup(app):
    app.connect("config-inited", pin_launch_revision)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
