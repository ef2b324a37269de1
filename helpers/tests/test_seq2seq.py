"""Chapter 6: the character vocabularies and the encoder-decoder with cross-attention."""

import warnings

import numpy as np
import pytest

from helpers import _tensorflow
from helpers._tensorflow import keras
from helpers.korean_numbers import KOREAN_NUMBER_SYLLABLES, CharVocabulary
from helpers.seq2seq import build_seq2seq, greedy_decode

DIGITS = CharVocabulary("0123456789")
SYLLABLES = CharVocabulary(KOREAN_NUMBER_SYLLABLES)


# --- CharVocabulary --------------------------------------------------------------------------

def test_vocabulary_layout():
    assert len(DIGITS) == 13 and DIGITS.tokens[:3] == ["<pad>", "<s>", "</s>"]
    assert (DIGITS.pad_id, DIGITS.start_id, DIGITS.end_id) == (0, 1, 2)
    assert DIGITS.tokens[3:] == list("0123456789")
    assert len(SYLLABLES) == 3 + 16
    assert repr(DIGITS) == "CharVocabulary('0123456789')"


def test_encode_pads_and_adds_start_and_end():
    ids = SYLLABLES.encode(["이천", "만"], start=True, end=True, length=6)
    assert ids.dtype == np.int32 and ids.shape == (2, 6)
    cheon, i_, man = (SYLLABLES.tokens.index(c) for c in "천이만")
    np.testing.assert_array_equal(ids, [[1, i_, cheon, 2, 0, 0], [1, man, 2, 0, 0, 0]])
    assert DIGITS.encode("42").shape == (1, 2)  # one string is a batch of one
    assert DIGITS.encode([]).shape == (0, 0)


def test_round_trip():
    texts = ["0", "2026", "9999999999999999", "10203"]
    assert DIGITS.decode(DIGITS.encode(texts, start=True, end=True)) == texts
    readings = ["영", "이천이십육", "일억만", "구천구백구십구조"]
    assert SYLLABLES.decode(SYLLABLES.encode(readings, end=True, length=12)) == readings


def test_decode_stops_at_end_or_padding():
    ids = DIGITS.encode("123")[0]
    assert DIGITS.decode(np.r_[ids, 2, ids]) == ["123"]
    assert DIGITS.decode(np.r_[1, ids, 0, ids]) == ["123"]
    assert DIGITS.decode(ids) == ["123"]  # 1-D: a batch of one


@pytest.mark.parametrize("call, error, message", [
    (lambda: DIGITS.encode(["12a"]), ValueError, "outside the vocabulary"),
    (lambda: DIGITS.encode(["12345"], length=3), ValueError, "needs 5 positions"),
    (lambda: DIGITS.encode([12]), TypeError, "must be strings"),
    (lambda: DIGITS.decode([[3, 13]]), ValueError,
     r"every entry of ids must lie in \[0, 12\]; got entries from 3 to 13"),
    (lambda: DIGITS.decode([[0.5]]), TypeError,
     "ids must be an array of integers; got dtype float64"),
    (lambda: DIGITS.decode(np.ones((1, 2, 3), int)), ValueError, r"got shape \(1, 2, 3\)"),
    (lambda: CharVocabulary("aa"), ValueError, "duplicates"),
    (lambda: CharVocabulary(""), ValueError, "non-empty"),
    (lambda: CharVocabulary(["ab"]), ValueError, "one character"),
    (lambda: CharVocabulary([1]), TypeError, "strings"),
])
def test_vocabulary_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- build_seq2seq and greedy_decode ---------------------------------------------------------

@pytest.fixture(scope="module")
def seq2seq():
    keras.utils.set_random_seed(0)
    return build_seq2seq(len(DIGITS), len(SYLLABLES), embed_dim=8, units=6)


@pytest.fixture(scope="module")
def batch():
    source = DIGITS.encode(["2026", "10203", "7"], length=6)
    target = SYLLABLES.encode(["이천이십육", "만이백삼", "칠"], start=True, end=True)
    return source, target[:, :-1], target[:, 1:]


def test_shapes(seq2seq, batch):
    model, encoder, decoder = seq2seq
    source, target_in, _ = batch
    probs = np.asarray(model([source, target_in]))
    assert probs.shape == (3, target_in.shape[1], len(SYLLABLES))
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)
    outputs, state = (np.asarray(a) for a in encoder(source))
    assert outputs.shape == (3, 6, 12) and state.shape == (3, 12)
    probs_dec, weights = decoder([target_in, outputs, state, source])
    assert weights.shape == (3, 1, target_in.shape[1], 6)
    np.testing.assert_allclose(probs_dec, probs, atol=1e-6)  # the models share their weights


def test_layers_are_shared(seq2seq):
    model, encoder, decoder = seq2seq
    names = {w.path for w in model.weights}
    assert {w.path for w in encoder.weights} <= names
    assert {w.path for w in decoder.weights} <= names
    assert {w.path for w in encoder.weights} | {w.path for w in decoder.weights} == names


def test_attention_weights_sum_to_one_over_the_input(seq2seq, batch):
    _, encoder, decoder = seq2seq
    source, target_in, _ = batch
    outputs, state = (np.asarray(a) for a in encoder(source))
    weights = np.asarray(decoder([target_in, outputs, state, source])[1])[:, 0]
    real = source != 0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-5)
    assert np.all(weights[~np.broadcast_to(real[:, None, :], weights.shape)] == 0)


def test_padding_does_not_change_the_output(seq2seq, batch):
    model, _, _ = seq2seq
    source, target_in, _ = batch
    longer = np.pad(source, ((0, 0), (0, 3)))
    np.testing.assert_allclose(model([source, target_in]), model([longer, target_in]),
                               atol=1e-5)


def test_decoder_is_causal(seq2seq, batch):
    model, _, _ = seq2seq
    source, target_in, _ = batch
    changed = target_in.copy()
    changed[:, 3:] = 5
    before = np.asarray(model([source, target_in]))
    after = np.asarray(model([source, changed]))
    np.testing.assert_allclose(before[:, :3], after[:, :3], atol=1e-6)
    assert not np.allclose(before[:, 3:], after[:, 3:])


def test_greedy_decode(seq2seq, batch):
    model, encoder, decoder = seq2seq
    source = batch[0]
    ids, weights = greedy_decode(encoder, decoder, source, start_id=1, max_length=7)
    assert ids.shape == (3, 7) and ids.dtype == np.int32
    assert weights.shape == (3, 7, 6)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-5)
    assert np.all(weights[:, :, 4:][np.broadcast_to(source[:, None, 4:] == 0, (3, 7, 2))] == 0)
    # Each generated id is the most probable one given the ids before it.
    fed = np.concatenate([np.ones((3, 1), np.int32), ids[:, :-1]], axis=1)
    np.testing.assert_array_equal(np.argmax(model([source, fed]), axis=-1), ids)


def test_greedy_decode_learns_a_copy_task():
    keras.utils.set_random_seed(1)
    model, encoder, decoder = build_seq2seq(len(DIGITS), len(DIGITS), embed_dim=16, units=16)
    rng = np.random.default_rng(0)
    texts = ["".join(map(str, rng.integers(0, 10, size=rng.integers(1, 5)))) for _ in range(3000)]
    source = DIGITS.encode(texts, length=4)
    target = DIGITS.encode(texts, start=True, end=True, length=6)
    model.compile(keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit([source, target[:, :-1]], target[:, 1:], sample_weight=target[:, 1:] != 0,
              batch_size=100, epochs=4, verbose=0)
    ids, weights = greedy_decode(encoder, decoder, source[:200], start_id=1, max_length=5)
    copied = np.mean(np.array(DIGITS.decode(ids)) == np.array(texts[:200]))
    assert copied > 0.9
    # Copying aligns output step t with input position t.
    decoded = DIGITS.decode(ids)
    four = [i for i, t in enumerate(texts[:200]) if len(t) == 4 and decoded[i] == t]
    assert np.mean(weights[four, :4].argmax(-1) == np.arange(4)) > 0.8


@pytest.mark.parametrize("kwargs, error", [
    (dict(source_vocab_size=1, target_vocab_size=5), ValueError),
    (dict(source_vocab_size=5, target_vocab_size=5, units=0), ValueError),
    (dict(source_vocab_size=5.0, target_vocab_size=5), TypeError),
    (dict(source_vocab_size=5, target_vocab_size=True), TypeError),
])
def test_build_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        build_seq2seq(**kwargs)


@pytest.mark.parametrize("source, max_length, error, message", [
    (np.zeros((2, 3), np.int32), 4, ValueError, "at least one non-padding id; got 2 rows"),
    (np.ones(3, np.int32), 4, ValueError, r"source_ids must have 2 axes; got shape \(3,\)"),
    (np.ones((2, 3)), 4, TypeError, "source_ids must be an array of integers; got dtype float64"),
    (np.ones((2, 3), np.int32), 0, ValueError, r"max_length must be an integer in \[1, inf\)"),
])
def test_greedy_decode_rejects_bad_input(seq2seq, source, max_length, error, message):
    _, encoder, decoder = seq2seq
    with pytest.raises(error, match=message):
        greedy_decode(encoder, decoder, source, start_id=1, max_length=max_length)


def test_greedy_decode_with_one_input_position_does_not_warn(seq2seq):
    _, encoder, decoder = seq2seq
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ids, weights = greedy_decode(encoder, decoder, DIGITS.encode(["7"]), start_id=1,
                                     max_length=3)
    assert ids.shape == (1, 3) and weights.shape == (1, 3, 1)
    np.testing.assert_allclose(weights, 1.0)


def test_greedy_decode_runs_the_decoder_as_one_graph_for_every_shape(seq2seq, batch):
    model, encoder, decoder = seq2seq
    source = batch[0]
    ids, weights = greedy_decode(encoder, decoder, source, start_id=1, max_length=7)
    greedy_decode(encoder, decoder, source[:1, :3], start_id=1, max_length=2)
    assert _tensorflow._GRAPHS[decoder].experimental_get_tracing_count() == 1
    # The graph gives what the Keras decoder gives when called directly.
    encoder_outputs, state = (np.asarray(a) for a in encoder(source))
    fed = np.concatenate([np.ones((3, 1), np.int32), ids[:, :-1]], axis=1)
    _, direct = decoder([fed, encoder_outputs, state, source])
    np.testing.assert_allclose(weights, np.asarray(direct)[:, 0], atol=1e-6)
