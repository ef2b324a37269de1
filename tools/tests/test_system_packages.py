"""tools/system_packages.py installs what is missing with apt-get as root, and does nothing
(without failing) anywhere else."""

import subprocess

import pytest

from tools import system_packages


@pytest.fixture
def machine(monkeypatch):
    """A machine with nothing installed; the apt-get commands recorded, not run."""
    state = {"browser": None, "font": False, "node": None, "npm": None, "root": True,
             "apt": True}
    commands = []
    monkeypatch.setattr(system_packages, "chromium_path", lambda: state["browser"])
    monkeypatch.setattr(system_packages, "has_korean_font", lambda: state["font"])
    monkeypatch.setattr(system_packages.os, "geteuid", lambda: 0 if state["root"] else 1000,
                        raising=False)

    def which(name):
        if name == "apt-get":
            return "/usr/bin/apt-get" if state["apt"] else None
        return state[name] if name in ("node", "npm") else None

    def run(cmd, **kwargs):
        commands.append(cmd)
        if cmd[:2] == ["apt-get", "install"]:
            state.update(browser="/usr/bin/chromium", font=True, node="/usr/bin/node",
                         npm="/usr/bin/npm")
        return subprocess.CompletedProcess(cmd, state.get("status", 0))

    monkeypatch.setattr(system_packages.shutil, "which", which)
    monkeypatch.setattr(system_packages.subprocess, "run", run)
    state["commands"] = commands
    return state


def test_the_build_needs_a_browser_fonts_and_node_and_the_tests_npm_too(machine):
    assert system_packages.missing() == ["chromium", "fonts-noto-cjk", "nodejs"]
    assert system_packages.missing(tests=True) == ["chromium", "fonts-noto-cjk", "nodejs", "npm"]
    machine["node"] = "/usr/bin/node"  # Node.js from elsewhere, without npm
    assert system_packages.missing(tests=True) == ["chromium", "fonts-noto-cjk", "npm"]


def test_as_root_with_apt_get_what_is_missing_is_installed(machine):
    assert system_packages.install(tests=True) == []
    update, install = machine["commands"]
    assert update[:2] == ["apt-get", "update"]
    assert install[:2] == ["apt-get", "install"] and install[-4:] == [
        "chromium", "fonts-noto-cjk", "nodejs", "npm"]


def test_nothing_missing_nothing_run(machine):
    machine.update(browser="/usr/bin/chromium", font=True, node="/usr/bin/node")
    assert system_packages.install() == []
    assert machine["commands"] == []


@pytest.mark.parametrize("change", [{"root": False}, {"apt": False}])
def test_not_root_or_no_apt_get_installs_nothing_and_does_not_fail(machine, change):
    machine.update(change)
    assert system_packages.install() == ["chromium", "fonts-noto-cjk", "nodejs"]
    assert machine["commands"] == []


def test_apt_get_failing_is_reported(machine):
    machine["status"] = 100
    with pytest.raises(system_packages.InstallFailed, match="apt-get update"):
        system_packages.install()


def test_the_command_fails_only_when_apt_get_could_run_and_did_not_help(machine, monkeypatch,
                                                                         capsys):
    monkeypatch.setattr(system_packages.sys, "argv", ["system_packages.py"])
    monkeypatch.setattr(system_packages, "install", lambda tests: ["chromium"])
    with pytest.raises(SystemExit, match="still missing after apt-get install: chromium"):
        system_packages.main()
    machine["root"] = False
    system_packages.main()  # not root: a note, and success
    assert "needs root and apt-get" in capsys.readouterr().out
