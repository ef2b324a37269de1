"""tools/browser.py finds Chrome or Chromium where readers have it: on PATH (Debian, Ubuntu),
in the standard places of macOS and Windows, or where COURSE_BROWSER says."""

import os
from pathlib import Path

import pytest

from tools import browser
from tools.browser import chromium_path


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def empty(tmp_path, monkeypatch):
    """An empty PATH folder, and no snap place: nothing to find unless a test puts it there."""
    monkeypatch.setattr(browser, "LINUX_PLACES", ())
    folder = tmp_path / "bin"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("name", ["chromium", "chromium-browser", "google-chrome"])
def test_on_path_as_debian_ubuntu_and_google_name_it(empty, name):
    found = executable(empty / name)
    assert chromium_path({"PATH": str(empty)}, "Linux") == str(found)


def test_nothing_on_an_empty_path_is_none(empty):
    assert chromium_path({"PATH": str(empty)}, "Linux") is None


@pytest.mark.parametrize("app", browser.MACOS_APPS)
def test_in_the_applications_folder_on_macos(empty, tmp_path, app):
    home = tmp_path / "home"
    found = executable(home / "Applications" / app)
    assert chromium_path({"PATH": str(empty), "HOME": str(home)}, "Darwin") == str(found)
    assert Path("/Applications", app) in browser.standard_places("Darwin", {})


@pytest.mark.parametrize("variable", ["PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA"])
@pytest.mark.parametrize("app", browser.WINDOWS_APPS)
def test_in_program_files_or_the_user_folder_on_windows(empty, tmp_path, variable, app):
    found = executable(Path(tmp_path / "root", *app))
    environ = {"PATH": str(empty), variable: str(tmp_path / "root")}
    assert chromium_path(environ, "Windows") == str(found)


def test_course_browser_names_one_or_none(empty, tmp_path):
    on_path = executable(empty / "chromium")
    chosen = executable(tmp_path / "my chrome")
    assert chromium_path({"PATH": str(empty), "COURSE_BROWSER": str(chosen)}, "Linux") == str(
        chosen)
    assert chromium_path({"PATH": str(empty), "COURSE_BROWSER": "none"}, "Linux") is None
    assert chromium_path({"PATH": str(empty), "COURSE_BROWSER": ""}, "Linux") == str(on_path)


def test_a_file_that_cannot_run_is_not_a_browser(empty):
    (empty / "chromium").write_text("")
    os.chmod(empty / "chromium", 0o644)
    assert chromium_path({"PATH": str(empty), "COURSE_BROWSER": str(empty / "chromium")},
                         "Linux") is None


@pytest.mark.parametrize("system, words", [("Linux", "apt-get install chromium"),
                                           ("Darwin", "Google Chrome"),
                                           ("Windows", "Google Chrome")])
def test_the_install_hint_fits_the_system(system, words):
    hint = browser.install_hint(system)
    assert words in hint and browser.BROWSER_VARIABLE in hint
