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


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_setup_rejects_bad_seed(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        helpers.setup(seed)


def test_import_helpers_is_cheap():
    import subprocess
    import sys
    code = ("import sys, helpers; "
            "print(any(m in sys.modules for m in ('tensorflow', 'matplotlib.pyplot')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
