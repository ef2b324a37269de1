"""Unit tests of the chapter 6 data helpers: Korean readings of numbers, pairs, vocabularies."""

import numpy as np
import pytest

from helpers.korean_numbers import (
    KOREAN_NUMBER_SYLLABLES,
    MAX_KOREAN_NUMBER,
    CharVocabulary,
    encode_reading_sequences,
    number_reading_pairs,
    read_korean_number,
    reading_alignment,
)

# The standard forms of the course (helpers.korean_numbers.read_korean_number's docstring).
READINGS = {
    0: "영",
    1: "일",
    7: "칠",
    10: "십",
    11: "십일",
    20: "이십",
    100: "백",
    101: "백일",
    110: "백십",
    1000: "천",
    1001: "천일",
    2026: "이천이십육",
    10000: "만",
    10001: "만일",
    10010: "만십",
    10203: "만이백삼",
    20000: "이만",
    100000: "십만",
    110000: "십일만",
    1000000: "백만",
    1010101: "백일만백일",
    10000000: "천만",
    11000000: "천백만",
    100000000: "일억",
    100010000: "일억만",
    110000000: "일억천만",
    123456789: "일억이천삼백사십오만육천칠백팔십구",
    1000000000000: "일조",
    1000000010000: "일조만",
    9999999999999999: "구천구백구십구조구천구백구십구억구천구백구십구만구천구백구십구",
}


@pytest.mark.parametrize("n, reading", READINGS.items())
def test_known_readings(n, reading):
    assert read_korean_number(n) == reading


def test_numpy_integers_are_accepted():
    assert read_korean_number(np.int64(2026)) == "이천이십육"
    assert read_korean_number(np.uint8(20)) == "이십"


def test_spaces_between_groups_when_asked():
    assert read_korean_number(123456789, sep=" ") == "일억 이천삼백사십오만 육천칠백팔십구"
    assert read_korean_number(100010000, sep=" ") == "일억 만"
    assert read_korean_number(100000000, sep=" ") == "일억"
    assert read_korean_number(10001, sep=" ") == "만 일"
    assert read_korean_number(2026, sep=" ") == "이천이십육"


def test_largest_number():
    assert MAX_KOREAN_NUMBER == 9_999_999_999_999_999
    assert read_korean_number(MAX_KOREAN_NUMBER) == READINGS[9999999999999999]


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 3.0, "12", None, 2.5, [1]])
def test_non_integers_raise_type_error(bad):
    with pytest.raises(TypeError, match="n must be an integer"):
        read_korean_number(bad)


@pytest.mark.parametrize("bad", [-1, -2026, MAX_KOREAN_NUMBER + 1, 10**20, np.int64(-5)])
def test_out_of_range_raises_value_error(bad):
    with pytest.raises(ValueError, match=r"n must be an integer in \[0, 9999999999999999\]"):
        read_korean_number(bad)


def test_error_messages_show_what_was_given():
    with pytest.raises(ValueError, match="got -1"):
        read_korean_number(-1)
    with pytest.raises(TypeError, match=r"got True \(bool\)"):
        read_korean_number(True)
    with pytest.raises(TypeError, match="sep must be a string"):
        read_korean_number(5, sep=None)


def test_readings_use_only_the_syllables():
    rng = np.random.default_rng(0)
    for n in rng.integers(0, MAX_KOREAN_NUMBER, size=500):
        assert set(read_korean_number(n)) <= set(KOREAN_NUMBER_SYLLABLES)
    assert len(KOREAN_NUMBER_SYLLABLES) == len(set(KOREAN_NUMBER_SYLLABLES)) == 16


def parse_reading(reading: str) -> int:
    """Read a Korean numeral back into an integer: an independent check of the reader."""
    digits = {c: i for i, c in enumerate("영일이삼사오육칠팔구")}
    places = {"십": 10, "백": 100, "천": 1000}
    groups = {"만": 10**4, "억": 10**8, "조": 10**12}
    total = group = 0
    digit = None
    for c in reading:
        if c in digits:
            digit = digits[c]
        elif c in places:
            group += (1 if digit is None else digit) * places[c]
            digit = None
        else:
            group += digit or 0
            total += (group or 1) * groups[c]
            group, digit = 0, None
    return total + group + (digit or 0)


def test_readings_parse_back_to_the_number():
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, 17, size=2000)
    numbers = [int(rng.integers(10 ** (k - 1) if k > 1 else 0, 10**k)) for k in lengths]
    numbers += list(READINGS)
    for n in numbers:
        assert parse_reading(read_korean_number(n)) == n, n


# --- reading_alignment -----------------------------------------------------------------------

def test_alignment_known_cases():
    assert reading_alignment(2026) == [("이", 0), ("천", 0), ("이", 2), ("십", 2), ("육", 3)]
    assert reading_alignment(10203) == [("만", 0), ("이", 2), ("백", 2), ("삼", 4)]
    assert reading_alignment(0) == [("영", 0)]
    assert reading_alignment(110000) == [("십", 0), ("일", 1), ("만", 1)]
    assert reading_alignment(100000000) == [("일", 0), ("억", 0)]


def test_alignment_matches_the_reading_and_the_digits():
    rng = np.random.default_rng(2)
    for n in list(READINGS) + [int(k) for k in rng.integers(0, 10**12, size=300)]:
        pairs = reading_alignment(n)
        digits = str(n)
        assert "".join(s for s, _ in pairs) == read_korean_number(n)
        assert all(0 <= j < len(digits) for _, j in pairs)
        for syllable, j in pairs:
            if syllable in "일이삼사오육칠팔구":
                assert digits[j] == str("영일이삼사오육칠팔구".index(syllable))
        positions = [j for _, j in pairs]
        assert positions == sorted(positions)  # read from left to right


def test_alignment_rejects_bad_input():
    with pytest.raises(TypeError):
        reading_alignment(1.0)
    with pytest.raises(ValueError):
        reading_alignment(-3)


# --- number_reading_pairs --------------------------------------------------------------------

def test_pairs_are_disjoint_and_correct():
    train, test = number_reading_pairs(3000, 500, max_digits=6, seed=0)
    assert len(train) == 3000 and len(test) == 500
    train_numbers = {d for d, _ in train}
    test_numbers = {d for d, _ in test}
    assert len(train_numbers) == 3000 and len(test_numbers) == 500
    assert train_numbers.isdisjoint(test_numbers)
    for digits, reading in train + test:
        assert digits == str(int(digits)) and 1 <= len(digits) <= 6
        assert reading == read_korean_number(int(digits))


def test_pairs_are_deterministic_given_the_seed():
    assert number_reading_pairs(200, 50, seed=3) == number_reading_pairs(200, 50, seed=3)
    assert number_reading_pairs(200, 50, seed=3) != number_reading_pairs(200, 50, seed=4)


def test_pairs_cover_every_length():
    train, test = number_reading_pairs(4000, 0, max_digits=8, seed=0)
    assert test == []
    counts = np.bincount([len(d) for d, _ in train], minlength=9)[1:]
    assert counts[0] == 10 and 80 <= counts[1] <= 90  # there are few short numbers
    assert np.all(counts[3:] > 400)  # the lengths are drawn uniformly


def test_pairs_can_use_every_number():
    train, test = number_reading_pairs(90, 10, max_digits=2, seed=0)
    assert sorted(int(d) for d, _ in train + test) == list(range(100))


@pytest.mark.parametrize("kwargs, error", [
    (dict(n_train=-1, n_test=1), ValueError),
    (dict(n_train=1, n_test=1, max_digits=0), ValueError),
    (dict(n_train=1, n_test=1, max_digits=17), ValueError),
    (dict(n_train=90, n_test=20, max_digits=2), ValueError),
    (dict(n_train=1.5, n_test=1), TypeError),
    (dict(n_train=True, n_test=1), TypeError),
    (dict(n_train=1, n_test=1, seed=-1), ValueError),
])
def test_pairs_reject_bad_arguments(kwargs, error):
    with pytest.raises(error):
        number_reading_pairs(**kwargs)


def test_reading_sequences_put_prompts_at_one_length_and_the_loss_on_the_reading():
    vocab = CharVocabulary("0123456789" + KOREAN_NUMBER_SYLLABLES)
    pairs = [("7", "칠"), ("2026", "이천이십육"), ("77777777", read_korean_number(77777777))]
    inputs, targets, weights = encode_reading_sequences(pairs, vocab)
    assert inputs.shape == targets.shape == weights.shape == (3, 24)
    assert np.array_equal(inputs[:, 1:], targets[:, :-1])
    assert np.all(inputs[:, 8] == vocab.start_id)                  # every prompt: 9 tokens
    assert np.all(inputs[:, 7] != vocab.pad_id)                    # digits end at 7
    assert [vocab.decode(row[row != 0][None])[0] for row in inputs[:, :8]] == \
        ["7", "2026", "77777777"]
    for (_, reading), target, weight in zip(pairs, targets, weights):
        counted = target[weight == 1]
        assert vocab.decode(counted[None]) == [reading] and counted[-1] == vocab.end_id
        assert weight.sum() == len(reading) + 1


def test_reading_sequences_reject_a_number_longer_than_max_digits():
    vocab = CharVocabulary("0123456789" + KOREAN_NUMBER_SYLLABLES)
    with pytest.raises(ValueError, match="length"):
        encode_reading_sequences([("123", "백이십삼")], vocab, max_digits=2)
