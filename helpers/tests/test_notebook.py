"""Tests of helpers.setup(): the same seed gives the same random numbers."""

import random

import numpy as np
import pytest

import helpers


def draw():
    rng = helpers.setup(7)
    return random.random(), np.random.rand(), rng.normal()


def test_setup_is_reproducible():
    assert draw() == draw()


def test_setup_sets_print_options():
    helpers.setup()
    assert np.get_printoptions()["precision"] == 3
    assert np.get_printoptions()["suppress"] is True


@pytest.mark.parametrize("seed, error, message", [
    (-1, ValueError, r"seed must be an integer in \[0, inf\); got -1"),
    (1.5, TypeError, r"seed must be an integer; got 1.5 \(float\)"),
    ("0", TypeError, r"seed must be an integer; got '0' \(str\)"),
    (True, TypeError, r"seed must be an integer; got True \(bool\)"),
])
def test_setup_rejects_bad_seed(seed, error, message):
    with pytest.raises(error, match=message):
        helpers.setup(seed)


def test_import_helpers_is_cheap():
    import subprocess
    import sys
    code = ("import sys, helpers; "
            "print(any(m in sys.modules for m in ('tensorflow', 'matplotlib.pyplot')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_course_seed_overrides_the_training_seed_but_not_the_data(monkeypatch):
    monkeypatch.delenv("COURSE_SEED", raising=False)
    rng = helpers.setup(7)
    default = (random.random(), rng.normal())
    monkeypatch.setenv("COURSE_SEED", "3")
    rng = helpers.setup(7)
    overridden = (random.random(), rng.normal())
    assert overridden[1] == default[1]  # the chapter's data generator keeps seed 7
    assert overridden[0] != default[0]  # model initialisation, dropout, shuffling follow 3
    random.seed(3)
    assert overridden[0] == random.random()


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
def test_bad_course_seed_says_what_was_given(monkeypatch, value):
    monkeypatch.setenv("COURSE_SEED", value)
    message = f"COURSE_SEED must be a non-negative integer; got '{value}'"
    with pytest.raises(ValueError, match=message):
        helpers.setup()


def test_empty_course_seed_means_unset(monkeypatch):
    from helpers.notebook import training_seed
    monkeypatch.setenv("COURSE_SEED", "")
    assert training_seed(5) == 5


def example(a, b=1):
    """A docstring that show_source leaves out."""
    return a + b  # comments stay


class Example:
    """Class docstring."""

    def method(self):
        """Method docstring."""
        return 1


class Made:
    @classmethod
    def make(cls):
        """Classmethod docstring."""
        return cls()


def test_show_source_renders_a_python_block_without_docstrings():
    shown = helpers.show_source(example, Example).data
    assert shown.startswith("```python\ndef example(a, b=1):\n    return a + b  # comments stay")
    assert "class Example:\n    def method(self):\n        return 1\n```" in shown
    assert "docstring" not in shown


def test_show_source_shows_a_classmethod_with_its_decorator():
    shown = helpers.show_source(Made.make).data
    assert shown == "```python\n@classmethod\ndef make(cls):\n    return cls()\n```"


def test_show_source_can_keep_docstrings():
    assert '"""A docstring that show_source leaves out."""' in \
        helpers.show_source(example, docstring=True).data


@pytest.mark.parametrize("bad", [(), (1,), ("text",)])
def test_show_source_rejects_what_has_no_source(bad):
    with pytest.raises(TypeError, match="show_source expects"):
        helpers.show_source(*bad)
