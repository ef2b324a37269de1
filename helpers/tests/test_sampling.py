"""Unit tests of helpers.sampling."""

import numpy as np
import pytest

from helpers.attention import softmax
from helpers.sampling import sample_tokens, sampling_distribution

LOGITS = np.log(np.array([0.4, 0.3, 0.2, 0.06, 0.04]))


def test_plain_distribution_is_the_softmax():
    rows = np.random.default_rng(0).normal(size=(3, 7))
    assert np.allclose(sampling_distribution(rows), softmax(rows))


def test_temperature_divides_the_logits():
    p = sampling_distribution(LOGITS, temperature=0.5)
    assert np.allclose(p, softmax(LOGITS / 0.5))
    assert p[0] > 0.4 and sampling_distribution(LOGITS, temperature=2.0)[0] < 0.4


def test_top_k_keeps_the_k_most_likely_renormalised():
    p = sampling_distribution(LOGITS, top_k=3)
    assert np.count_nonzero(p) == 3 and np.isclose(p.sum(), 1)
    assert np.allclose(p[:3], np.array([0.4, 0.3, 0.2]) / 0.9)
    assert np.allclose(sampling_distribution(LOGITS, top_k=99), softmax(LOGITS))


def test_top_p_keeps_the_smallest_set_reaching_p():
    assert np.count_nonzero(sampling_distribution(LOGITS, top_p=0.7)) == 2  # 0.4 + 0.3
    assert np.count_nonzero(sampling_distribution(LOGITS, top_p=0.71)) == 3
    assert np.count_nonzero(sampling_distribution(LOGITS, top_p=0.1)) == 1  # always one
    assert np.allclose(sampling_distribution(LOGITS, top_p=1.0), softmax(LOGITS))


def test_rows_are_filtered_separately():
    rows = np.log(np.array([[0.9, 0.05, 0.05], [0.34, 0.33, 0.33]]))
    p = sampling_distribution(rows, top_p=0.8)
    assert np.count_nonzero(p, axis=-1).tolist() == [1, 3]


def test_sampled_frequencies_follow_the_distribution():
    rng = np.random.default_rng(1)
    logits = np.tile(LOGITS, (20_000, 1))
    ids = sample_tokens(logits, rng, top_k=3)
    counts = np.bincount(ids, minlength=5) / len(ids)
    assert np.allclose(counts, sampling_distribution(LOGITS, top_k=3), atol=0.015)
    assert counts[3] == counts[4] == 0


def test_seeded_generator_repeats():
    draw = [sample_tokens(np.tile(LOGITS, (50, 1)), np.random.default_rng(7)) for _ in "ab"]
    assert np.array_equal(*draw)


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    (dict(temperature=0.0), ValueError, "temperature"),
    (dict(top_k=0), ValueError, "top_k"),
    (dict(top_k=2.0), TypeError, "top_k"),
    (dict(top_p=0.0), ValueError, "top_p"),
    (dict(top_p=1.5), ValueError, "top_p"),
])
def test_bad_knobs_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        sampling_distribution(LOGITS, **kwargs)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="rng"):
        sample_tokens(LOGITS[None], 0)
    with pytest.raises(ValueError, match="logits must have shape"):
        sample_tokens(LOGITS, np.random.default_rng(0))
    with pytest.raises(ValueError, match="NaN"):
        sampling_distribution([np.nan, 1.0])
