"""Every chapter runs top to bottom in Colab's runtime, not only in the pinned course environment.

The environment is Python 3.13 with the packages of tests/environments/colab.txt (Colab's
published versions), made once in _build/colab-env and remade when that file changes. Each
chapter is copied alone into an empty folder, as Colab opens it, and executed there; its first
cell installs helpers from this working tree (COURSE_HELPERS_SOURCE), as it installs helpers
from the repository in Colab. Outputs are not compared digit for digit: the chapters' asserts
and claims (helpers.claims.check) carry the checks. Without Python 3.13 the tests are skipped
with a reason, except in CI (CI=true), where that is a failure.
"""

import glob
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from tools.toc import ROOT, toc_notebooks

PINS = ROOT / "tests" / "environments" / "colab.txt"
ENV = ROOT / "_build" / "colab-env"
STAMP = ENV / ".installed-from"
RUN = """
import json, sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
path, folder = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
try:
    NotebookClient(nb, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": folder}}).execute()
    print(json.dumps({"error": None}))
except CellExecutionError as error:
    print(json.dumps({"error": str(error)[-3000:]}))
"""


def python313():
    found = shutil.which("python3.13")
    candidates = [found] if found else []
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.13*/bin/python3.13")))
    for candidate in candidates:
        if subprocess.run([candidate, "-c", "import venv"], capture_output=True).returncode == 0:
            return candidate
    return None


def env_python():
    return ENV / "bin" / "python"


@pytest.fixture(scope="module")
def colab_env():
    """The Colab environment, with no helpers installed in it yet."""
    interpreter = python313()
    if interpreter is None:
        message = ("no Python 3.13 on this machine (pyenv install 3.13, or apt-get install "
                   "python3.13): Colab environment tests skipped")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    wanted = hashlib.sha256(PINS.read_bytes() + interpreter.encode()).hexdigest()
    if not (STAMP.exists() and STAMP.read_text() == wanted):
        shutil.rmtree(ENV, ignore_errors=True)
        subprocess.run([interpreter, "-m", "venv", str(ENV)], check=True)
        subprocess.run([str(env_python()), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", "-r", str(PINS)], check=True)
        STAMP.write_text(wanted)
    # Each test session starts without helpers, so the first chapter's Colab cell installs
    # the working tree as it is now.
    subprocess.run([str(env_python()), "-m", "pip", "uninstall", "-q", "-y",
                    "attention-course-helpers"], capture_output=True)
    return env_python()


def test_the_environment_has_colabs_versions(colab_env):
    pinned = dict(line.split("  #")[0].strip().split("==") for line in
                  PINS.read_text(encoding="utf-8").splitlines() if line.endswith("# Colab"))
    code = ("import importlib.metadata as m, json, sys; "
            f"print(json.dumps({{n: m.version(n) for n in {sorted(pinned)!r}}})); "
            "print(sys.version_info[:2])")
    out = subprocess.run([str(colab_env), "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert json.loads(out[0]) == pinned
    assert out[1] == "(3, 13)"


@pytest.mark.parametrize("nb_path", toc_notebooks(), ids=str)
def test_chapter_runs_in_colabs_runtime(colab_env, nb_path, tmp_path):
    shutil.copy(ROOT / nb_path, tmp_path / nb_path.name)
    env = {key: value for key, value in os.environ.items()
           if key not in {"COURSE_SEED", "COURSE_METRICS", "PYTHONPATH"}}
    env["COURSE_HELPERS_SOURCE"] = str(ROOT)
    result = subprocess.run([str(colab_env), "-c", RUN, str(tmp_path / nb_path.name),
                             str(tmp_path)], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    error = json.loads(result.stdout.strip().splitlines()[-1])["error"]
    assert error is None, f"{nb_path} fails in Colab's runtime:\n{error}"


def test_helpers_lower_bounds_are_the_versions_tested_here():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["keras"]
    bounds = dict(spec.split(">=") for spec in declared)
    pinned = dict(line.split("  #")[0].strip().split("==") for line in
                  PINS.read_text(encoding="utf-8").splitlines() if "==" in line)
    assert {name: pinned.get(name) for name in bounds} == bounds, \
        "pyproject.toml's lower bounds must be the versions tests/environments/colab.txt tests"
