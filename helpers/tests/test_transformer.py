"""Unit tests of helpers.transformer (NumPy only, no Keras)."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers.transformer import positional_encoding, positional_shift_matrix

ROOT = Path(__file__).resolve().parents[2]


# --- positional encoding -----------------------------------------------------------------------

@pytest.mark.parametrize("pos, i", [(0, 0), (1, 0), (1, 1), (7, 1), (13, 2), (49, 2), (49, 0)])
def test_positional_encoding_equals_the_formula(pos, i):
    d_model = 6
    pe = positional_encoding(50, d_model)
    angle = pos / 10000 ** (2 * i / d_model)
    assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-14)
    assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-14)


def test_positional_encoding_known_values():
    pe = positional_encoding(3, 4)
    # position 1: sin 1, cos 1, sin(1/100), cos(1/100); position 2: the angles doubled
    np.testing.assert_allclose(pe[1], [0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004],
                               atol=1e-10)
    np.testing.assert_allclose(pe[2], [0.9092974268, -0.4161468365, 0.0199986667, 0.9998000067],
                               atol=1e-10)


def test_positional_encoding_shape_dtype_range_and_first_row():
    pe = positional_encoding(200, 16)
    assert pe.shape == (200, 16) and pe.dtype == np.float64
    assert np.all(np.abs(pe) <= 1.0)
    np.testing.assert_array_equal(pe[0], [0.0, 1.0] * 8)
    # each (sin, cos) pair lies on the unit circle
    np.testing.assert_allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0, atol=1e-12)
    assert positional_encoding(1, 2).shape == (1, 2)


@pytest.mark.parametrize("k", [-7, -1, 0, 1, 2, 5, 31])
def test_shift_matrix_moves_the_encoding_by_k_positions(k):
    d_model = 12
    pe = positional_encoding(100, d_model)
    shift = positional_shift_matrix(k, d_model)
    for pos in range(max(0, -k), 60, 3):
        np.testing.assert_allclose(pe[pos] @ shift, pe[pos + k], atol=1e-12)
    np.testing.assert_allclose(pe[10:40] @ shift, pe[10 + k:40 + k], atol=1e-12)


def test_shift_matrix_is_block_diagonal_rotation():
    d_model = 8
    shift = positional_shift_matrix(3, d_model)
    np.testing.assert_allclose(shift @ shift.T, np.eye(d_model), atol=1e-12)
    blocks = np.zeros_like(shift, dtype=bool)
    for i in range(0, d_model, 2):
        blocks[i:i + 2, i:i + 2] = True
    assert np.all(shift[~blocks] == 0)
    omega = 1 / 10000 ** (2 / d_model)  # second pair, columns 2 and 3
    np.testing.assert_allclose(shift[2:4, 2:4], [[math.cos(3 * omega), -math.sin(3 * omega)],
                                                 [math.sin(3 * omega), math.cos(3 * omega)]])
    np.testing.assert_allclose(positional_shift_matrix(0, d_model), np.eye(d_model), atol=0)
    np.testing.assert_allclose(positional_shift_matrix(2, d_model)
                               @ positional_shift_matrix(5, d_model),
                               positional_shift_matrix(7, d_model), atol=1e-12)


@pytest.mark.parametrize("length, d_model, error, match", [
    (3.0, 4, TypeError, "length must be an integer; got 3.0"),
    ("3", 4, TypeError, "length must be an integer"),
    (True, 4, TypeError, "length must be an integer"),
    (0, 4, ValueError, r"length must be an integer in \[1, inf\); got 0"),
    (3, 4.0, TypeError, "d_model must be an integer"),
    (3, 0, ValueError, "d_model must be an integer in"),
    (3, 5, ValueError, "d_model must be even .*; got 5"),
])
def test_positional_encoding_rejects_bad_arguments(length, d_model, error, match):
    with pytest.raises(error, match=match):
        positional_encoding(length, d_model)


@pytest.mark.parametrize("k, d_model, error, match", [
    (1.5, 4, TypeError, "k must be an integer"),
    (1, 7, ValueError, "d_model must be even"),
    (1, None, TypeError, "d_model must be an integer"),
])
def test_shift_matrix_rejects_bad_arguments(k, d_model, error, match):
    with pytest.raises(error, match=match):
        positional_shift_matrix(k, d_model)


def test_module_does_not_import_tensorflow_or_keras():
    code = ("import sys, helpers.transformer; "
            "print(sorted({'tensorflow', 'keras'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
