"""Test configuration for the whole repository.

Under ``CI=true`` a skipped test is a failure: a test that cannot run on CI's machine means
something CI must install is missing (``.ci/run`` installs the system packages). Locally, a
skip prints its reason (the test command passes ``-rs``).
"""

import os

import pytest


def _fail_skip_in_ci(report) -> None:
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where every test must run: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skip_in_ci(outcome.get_result())
