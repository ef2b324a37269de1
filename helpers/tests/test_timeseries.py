"""helpers.timeseries, chapter 5: the planted-pattern generator and the shipped GunPoint data."""

import shutil

import numpy as np
import pytest

from helpers import timeseries
from helpers.timeseries import DatasetError, load_gunpoint, planted_pattern_dataset


def test_shapes_dtypes_and_balance():
    x, y, informative = planted_pattern_dataset(400, seq_len=32, n_features=3, seed=5)
    assert x.shape == (400, 32, 3) and x.dtype == np.float32
    assert y.shape == (400,) and set(np.unique(y)) == {0, 1}
    assert 150 < y.sum() < 250
    assert informative.shape == (400, 32) and informative.dtype == bool


def test_informative_steps_are_one_contiguous_run_of_pattern_length():
    _, _, informative = planted_pattern_dataset(300, seq_len=40, pattern_length=6, seed=2)
    assert np.all(informative.sum(axis=1) == 6)
    starts = informative.argmax(axis=1)
    rows = np.arange(300)[:, None]
    assert np.all(informative[rows, starts[:, None] + np.arange(6)])
    assert len(np.unique(starts)) > 20  # positions really vary


def test_the_pattern_is_where_informative_steps_say():
    clean, y, informative = planted_pattern_dataset(200, seq_len=24, n_features=2,
                                                    pattern_length=8, noise=0.0, seed=3)
    assert np.all(clean[~informative] == 0) and np.all(clean[..., 1] == 0)
    pattern = clean[informative.nonzero()[0], informative.nonzero()[1], 0].reshape(200, 8)
    rising_first = pattern[:, 0] > 0
    np.testing.assert_array_equal(rising_first, y == 1)
    np.testing.assert_allclose(pattern[y == 1][0], -pattern[y == 0][0], atol=1e-6)


def test_noise_is_added_on_top_of_the_same_pattern():
    clean, y, informative = planted_pattern_dataset(50, noise=0.0, seed=4)
    noisy, y2, informative2 = planted_pattern_dataset(50, noise=1.0, seed=4)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(informative, informative2)
    assert 0.8 < (noisy - clean)[..., 1].std() < 1.2


def test_same_seed_same_data_other_seed_other_data():
    a = planted_pattern_dataset(20, seed=7)
    b = planted_pattern_dataset(20, seed=7)
    c = planted_pattern_dataset(20, seed=8)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0}, r"n must be an integer in \[1, inf\); got 0"),
    ({"n": 5, "seq_len": 4, "pattern_length": 8},
     r"pattern_length \(8\) must not exceed seq_len \(4\)"),
    ({"n": 5, "noise": -1.0}, r"noise \(a standard deviation\) must be a finite number in "
                              r"\[0, inf\); got -1.0"),
])
def test_generator_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        planted_pattern_dataset(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 5, "n_features": 1.5}, r"n_features must be an integer; got 1.5 \(float\)"),
    ({"n": 5, "amplitude": "2"}, r"amplitude must be a real number; got '2' \(str\)"),
])
def test_generator_rejects_arguments_of_the_wrong_type(kwargs, message):
    with pytest.raises(TypeError, match=message):
        planted_pattern_dataset(**kwargs)


def test_gunpoint_loads_both_splits():
    x_train, y_train = load_gunpoint("train")
    x_test, y_test = load_gunpoint("test")
    assert x_train.shape == (50, 150, 1) and x_test.shape == (150, 150, 1)
    assert np.bincount(y_train).tolist() == [24, 26]
    assert np.bincount(y_test).tolist() == [76, 74]
    # The archive z-normalises every series.
    np.testing.assert_allclose(x_train[..., 0].mean(axis=1), 0.0, atol=1e-3)
    np.testing.assert_allclose(x_train[..., 0].std(axis=1), 1.0, atol=0.02)


def test_gunpoint_data_is_small_enough_to_ship():
    sizes = sum(p.stat().st_size for p in timeseries.DATASETS.glob("GunPoint_*.ts"))
    assert sizes <= 1_000_000


@pytest.fixture
def copy_of_gunpoint(tmp_path):
    for path in timeseries.DATASETS.glob("GunPoint_*.ts"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_gunpoint_missing_file(copy_of_gunpoint):
    (copy_of_gunpoint / "GunPoint_TEST.ts").unlink()
    assert load_gunpoint("train", directory=copy_of_gunpoint)[0].shape == (50, 150, 1)
    with pytest.raises(FileNotFoundError, match="GunPoint test file not found"):
        load_gunpoint("test", directory=copy_of_gunpoint)


def test_gunpoint_damaged_file(copy_of_gunpoint):
    path = copy_of_gunpoint / "GunPoint_TRAIN.ts"
    text = path.read_text()
    path.write_text(text.replace("-0.6478854", "-0.6478855", 1))
    with pytest.raises(DatasetError, match="GunPoint_TRAIN.ts is damaged: SHA-256"):
        load_gunpoint("train", directory=copy_of_gunpoint)
    path.write_bytes(b"")
    with pytest.raises(DatasetError, match="damaged"):
        load_gunpoint("train", directory=copy_of_gunpoint)


def test_gunpoint_bad_split():
    with pytest.raises(ValueError, match="split must be one of 'train', 'test'; got 'valid'"):
        load_gunpoint("valid")


def test_data_module_does_not_import_tensorflow():
    import subprocess
    import sys

    code = "import sys, helpers.timeseries; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
