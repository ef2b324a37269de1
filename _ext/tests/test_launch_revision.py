"""Tests of _ext/launch_revision.py: launch buttons name an immutable revision, never a branch."""

import subprocess

import yaml

from _ext.launch_revision import launch_revision
from tools.toc import ROOT


def write_config(folder, release="v1.2.3"):
    (folder / "_config.yml").write_text(yaml.safe_dump(
        {"repository": {"url": "https://github.com/a/b", "branch": "main", "release": release}}))


def test_in_a_checkout_the_built_commit(tmp_path):
    write_config(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "."], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, check=True,
                          capture_output=True, text=True).stdout.strip()
    assert launch_revision(tmp_path) == head and len(head) == 40


def test_outside_a_checkout_the_release_tag(tmp_path):
    write_config(tmp_path, release="v4.5.6")
    assert launch_revision(tmp_path) == "v4.5.6"


def test_this_course_is_built_from_its_commit():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    assert launch_revision(ROOT) == head
