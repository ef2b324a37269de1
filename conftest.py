"""Test configuration for the whole repository.

Under ``CI=true`` a skipped test is a failure: a test that cannot run on CI's machine means
something CI must install is missing (``.ci/run`` installs the system packages). Locally, a
skip prints its reason (the test command passes ``-rs``).

nbval compares every cell's saved outputs with a fresh run, except the formats it leaves out
by default (images among them). The interactive twin of a figure is left out the same way
(``helpers.plotting.INTERACTIVE_FORMATS``): it carries the figure's numbers to three decimals,
and for a trained model those depend on the CPU's vector instructions. What a figure shows is
asserted in the chapter's hidden cells instead (CONTRIBUTING.md, "nbval이 비교하는 것").
"""

import os

import pytest

from helpers.plotting import INTERACTIVE_FORMATS


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


def pytest_collectstart(collector):
    """nbval's notebook collector: compare figures' interactive twins as little as their PNG."""
    if type(collector).__name__ == "IPyNbFile":
        collector.skip_compare = tuple(collector.skip_compare) + INTERACTIVE_FORMATS
