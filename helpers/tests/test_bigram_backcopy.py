import numpy as np
import pytest

from helpers.bigram_backcopy import BOS, bigram_backcopy, bigram_table


def task(count=400, length=20, seed=0):
    table = bigram_table(12, rng=np.random.default_rng(seed))
    return table, bigram_backcopy(count, length, table, triggers=[1, 2],
                                  rng=np.random.default_rng(seed + 1))


def test_table_rows_are_distributions_that_never_return_to_bos():
    table, _ = task()
    assert table.shape == (12, 12) and np.allclose(table.sum(axis=1), 1)
    assert not table[:, BOS].any()


def test_after_a_trigger_the_next_token_is_the_one_before_it():
    _, (inputs, targets, is_trigger) = task()
    assert (inputs[:, 0] == BOS).all() and not (inputs[:, 1:] == BOS).any()
    assert np.array_equal(inputs[:, 1:], targets[:, :-1])
    rows, cols = np.nonzero(is_trigger)
    assert len(rows) > 100 and (cols >= 1).all()
    assert np.array_equal(targets[rows, cols], inputs[rows, cols - 1])
    assert np.array_equal(is_trigger, np.isin(inputs, [1, 2]))


def test_other_tokens_follow_the_bigram_table():
    table, (inputs, targets, is_trigger) = task(count=3000)
    ordinary = ~is_trigger
    ordinary[:, 0] = False
    current, following = inputs[ordinary], targets[ordinary]
    for token in (5, 7):
        seen = following[current == token]
        counts = np.bincount(seen, minlength=12) / len(seen)
        assert len(seen) > 500 and np.abs(counts - table[token]).max() < 0.06


def test_the_same_generator_state_gives_the_same_sequences():
    _, first = task(seed=3)
    _, second = task(seed=3)
    _, other = task(seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert not np.array_equal(first[0], other[0])


@pytest.mark.parametrize("kwargs, message", [
    ({"triggers": [0]}, "triggers"),
    ({"triggers": list(range(1, 12))}, "ordinary"),
    ({"length": 2}, "length"),
])
def test_bad_input_says_what_was_expected(kwargs, message):
    table = bigram_table(12, rng=np.random.default_rng(0))
    options = {"triggers": [1], "length": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        bigram_backcopy(5, options.pop("length"), table, rng=np.random.default_rng(0),
                        **options)


def test_a_table_whose_rows_are_not_distributions_is_refused():
    with pytest.raises(ValueError, match="rows sum to 1"):
        bigram_backcopy(5, 8, np.ones((4, 4)), triggers=[1], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="vocab_size"):
        bigram_table(2, rng=np.random.default_rng(0))
