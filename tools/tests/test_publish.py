"""tools/publish.py: the deploy job stops on the placeholder address, on another repository's
address, on a missing release tag, and on helpers that changed since the release."""

import subprocess
import sys

import pytest

from tools import publish
from tools.colab_cell import repository

OWN = "https://github.com/our-team/attention-course"


def git(folder, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=folder, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path):
    """A repository with helpers, released as v1.0.0, and one later commit of a chapter."""
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "attention.py").write_text("A = 1\n")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "chapter.ipynb").write_text("{}\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "release")
    git(tmp_path, "tag", "v1.0.0")
    (tmp_path / "chapter.ipynb").write_text('{"cells": []}\n')
    git(tmp_path, "commit", "-q", "-am", "a chapter changes, helpers do not")
    return tmp_path


def test_own_address_with_its_release_may_be_published(checkout):
    assert publish.problems("our-team/attention-course", checkout, OWN, "v1.0.0") == []


def test_placeholder_stops_publishing(checkout):
    found = publish.problems("our-team/attention-course", checkout, publish.PLACEHOLDER,
                             "v1.0.0")
    assert len(found) == 1 and "placeholder" in found[0]
    assert "https://github.com/our-team/attention-course" in found[0]  # what to set it to


def test_another_repository_stops_publishing(checkout):
    found = publish.problems("fork-owner/attention-course", checkout, OWN, "v1.0.0")
    assert len(found) == 1 and "another repository" in found[0]


def test_missing_release_tag_stops_publishing(checkout):
    found = publish.problems("our-team/attention-course", checkout, OWN, "v1.1.0")
    assert len(found) == 1 and "v1.1.0" in found[0] and "does not exist" in found[0]


@pytest.mark.parametrize("changed", ["helpers/attention.py", "pyproject.toml"])
def test_helpers_changed_since_the_release_stop_publishing(checkout, changed):
    (checkout / changed).write_text("changed = True\n")
    git(checkout, "commit", "-q", "-am", "helpers change after the release")
    found = publish.problems("our-team/attention-course", checkout, OWN, "v1.0.0")
    assert len(found) == 1 and "helpers changed since the release v1.0.0" in found[0]
    assert changed in found[0]


def test_command_stops_with_the_message_and_a_failure_status():
    """The configured address is either the placeholder or not this repository's."""
    result = subprocess.run([sys.executable, publish.ROOT / "tools" / "publish.py",
                             "--repository", "someone-else/other-course"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    expected = ("is still the placeholder" if repository()[0] == publish.PLACEHOLDER
                else "would open another repository")
    assert "::error title=Not published::_config.yml: repository.url" in result.stdout
    assert expected in result.stdout
    assert "not published" in result.stderr
