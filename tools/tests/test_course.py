"""tools/course.py: the command lines the README shows reach the right tools."""

import sys

import pytest

from tools import course


@pytest.fixture
def calls(monkeypatch):
    """The commands course.py would run, recorded instead of run (no venv is touched)."""
    recorded = []
    monkeypatch.setattr(course, "ensure_venv", lambda: None)
    monkeypatch.setattr(course, "run", lambda *cmd, **kw: recorded.append([str(c) for c in cmd]))
    return recorded


def main(monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", ["course.py", *argv])
    course.main()


def test_test_passes_pytest_options_through(monkeypatch, calls):
    main(monkeypatch, "test", "-k", "colab_environment")
    lint, pytest_run = calls
    assert lint[1:3] == ["check", "helpers"]
    assert pytest_run[-2:] == ["-k", "colab_environment"]
    assert {"--nbval", "-rs", "chapters", "helpers", "tests"} <= set(pytest_run)


def test_build_makes_the_site_and_the_pdf_unless_told_not_to(monkeypatch, calls):
    main(monkeypatch, "build")
    assert [c[0].rsplit("/", 1)[-1] for c in calls] == ["jupyter-book", "python"]
    assert calls[1][-1].endswith("tools/pdf.py")
    calls.clear()
    main(monkeypatch, "build", "--no-pdf")
    assert len(calls) == 1 and calls[0][0].endswith("jupyter-book")


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
