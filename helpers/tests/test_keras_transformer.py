"""helpers.keras_transformer gives the numbers of helpers.transformer with copied weights.

Float32 inputs, ``atol=1e-5``, and Keras weights moved away from their initial values (biases,
gamma and beta included) so that every weight is exercised.
"""

import numpy as np
import pytest

from helpers import _tensorflow
from helpers._tensorflow import keras
from helpers.attention import padding_mask
from helpers.keras_transformer import (
    PositionalEncoding,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
    build_transformer_seq2seq,
    transformer_greedy_decode,
)
from helpers.transformer import (
    DecoderLayer,
    EncoderLayer,
    FeedForward,
    LayerNormalization,
    positional_encoding,
)

from .test_transformer import NORM_FIRST, decoder_params, encoder_params

ATOL = 1e-5


@pytest.fixture(scope="module", autouse=True)
def _seed_keras():
    keras.utils.set_random_seed(0)


def f32(rng, *shape):
    return rng.normal(size=shape).astype(np.float32)


def close(actual, desired, atol=ATOL):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), rtol=0, atol=atol)


def randomise(layer, rng, scale=0.4):
    """Move every weight of ``layer`` away from its initial value; gamma stays near 1."""
    layer.set_weights([(1.0 if w.path.endswith("gamma") else 0.0)
                       + rng.normal(scale=scale, size=w.shape).astype(np.float32)
                       for w in layer.weights])
    return layer


def encoder(rng, x, *, norm_first=False, d_ff=16, num_heads=2, **kwargs):
    layer = TransformerEncoderLayer(x.shape[-1], num_heads, d_ff, norm_first=norm_first,
                                    **kwargs)
    layer(x)
    return randomise(layer, rng)


def decoder(rng, x, context, *, norm_first=False, d_ff=16, num_heads=2):
    layer = TransformerDecoderLayer(x.shape[-1], num_heads, d_ff, norm_first=norm_first)
    layer(x, context)
    return randomise(layer, rng)


# --- sublayers -----------------------------------------------------------------------------------

def test_layer_norm_matches_keras():
    rng = np.random.default_rng(0)
    x = f32(rng, 2, 5, 6) * 3 + 1
    layer = keras.layers.LayerNormalization()
    layer(x)
    randomise(layer, rng)
    norm = LayerNormalization.from_keras(layer)
    assert norm.epsilon == layer.epsilon == 1e-3
    close(norm(x), layer(x))
    assert norm(x).dtype == np.float32 and norm.count_params() == layer.count_params()


def test_feed_forward_matches_two_keras_dense_layers():
    rng = np.random.default_rng(1)
    x = f32(rng, 2, 5, 6)
    dense_1, dense_2 = keras.layers.Dense(10, activation="relu"), keras.layers.Dense(6)
    dense_2(dense_1(x))
    randomise(dense_1, rng)
    randomise(dense_2, rng)
    ffn = FeedForward.from_keras(dense_1, dense_2)
    close(ffn(x), dense_2(dense_1(x)))
    assert ffn.count_params() == dense_1.count_params() + dense_2.count_params()
    with pytest.raises(ValueError, match="dense_2 must have activation 'linear'; got 'relu'"):
        FeedForward.from_keras(dense_1, dense_1)


# --- encoder and decoder layers ------------------------------------------------------------------

@NORM_FIRST
@pytest.mark.parametrize("mask_kind", ["none", "padding", "full"])
def test_encoder_layer_matches_keras(norm_first, mask_kind):
    rng = np.random.default_rng(2)
    x = f32(rng, 3, 6, 8)
    mask = {"none": None, "padding": padding_mask([6, 4, 1], 6),
            "full": (rng.random((3, 6, 6)) < 0.7) | np.eye(6, dtype=bool)}[mask_kind]
    layer = encoder(rng, x, norm_first=norm_first)
    mine = EncoderLayer.from_keras(layer)
    assert mine.norm_first is norm_first
    out = mine(x, mask=mask)
    assert out.dtype == np.float32 and out.shape == x.shape
    close(out, layer(x, mask=mask))


@NORM_FIRST
def test_decoder_layer_matches_keras(norm_first):
    rng = np.random.default_rng(3)
    x, context = f32(rng, 3, 5, 8), f32(rng, 3, 7, 8)
    mask, context_mask = padding_mask([5, 3, 2], 5), padding_mask([7, 4, 1], 7)
    layer = decoder(rng, x, context, norm_first=norm_first, num_heads=4)
    mine = DecoderLayer.from_keras(layer)
    out, weights = mine(x, context, context_mask=context_mask, mask=mask,
                        return_attention_scores=True)
    k_out, k_scores = layer(x, context, context_mask=context_mask, mask=mask,
                            return_attention_scores=True)
    assert weights.shape == tuple(k_scores.shape) == (3, 4, 5, 7)
    close(out, k_out)
    close(weights, k_scores)
    # Without scores Keras takes its fused attention path: the same numbers.
    close(out, layer(x, context, context_mask=context_mask, mask=mask))
    close(mine(x, context), layer(x, context))


@NORM_FIRST
def test_keras_decoder_is_causal_and_ignores_padded_source(norm_first):
    rng = np.random.default_rng(4)
    x, context = f32(rng, 2, 6, 8), f32(rng, 2, 5, 8)
    context_mask = padding_mask([5, 2], 5)
    layer = decoder(rng, x, context, norm_first=norm_first)
    out = layer(x, context, context_mask=context_mask)
    changed_x, changed_context = x.copy(), context.copy()
    changed_x[:, 3:] = f32(rng, 2, 3, 8) * 5
    changed_context[1, 2:] = f32(rng, 3, 8) * 10
    close(layer(changed_x, context, context_mask=context_mask)[:, :3], out[:, :3])
    close(layer(x, changed_context, context_mask=context_mask), out)


@pytest.mark.parametrize("d_model, num_heads, d_ff", [(8, 2, 16), (12, 3, 20)])
def test_parameter_counts_match_keras_and_the_formula(d_model, num_heads, d_ff):
    rng = np.random.default_rng(5)
    x = f32(rng, 1, 3, d_model)
    enc = encoder(rng, x, num_heads=num_heads, d_ff=d_ff)
    dec = decoder(rng, x, x, num_heads=num_heads, d_ff=d_ff, norm_first=True)
    assert (enc.count_params() == EncoderLayer.from_keras(enc).count_params()
            == EncoderLayer.random(d_model, num_heads, d_ff, rng=rng).count_params()
            == encoder_params(d_model, d_ff))
    assert (dec.count_params() == DecoderLayer.from_keras(dec).count_params()
            == decoder_params(d_model, d_ff))
    assert enc.self_attention.key_dim == d_model // num_heads


def test_dropout_is_active_only_in_training():
    rng = np.random.default_rng(6)
    x = f32(rng, 2, 4, 8)
    layer = encoder(rng, x, dropout=0.5)
    expected = EncoderLayer.from_keras(layer)(x)
    close(layer(x), expected)
    close(layer(x, training=False), expected)
    assert np.max(np.abs(np.asarray(layer(x, training=True)) - expected)) > 1e-2


# --- positional encoding, Keras masks, saving ----------------------------------------------------

def test_positional_encoding_layer_adds_the_table():
    rng = np.random.default_rng(7)
    x = f32(rng, 2, 5, 6)
    layer = PositionalEncoding(20)
    close(layer(x), x + positional_encoding(20, 6)[:5], atol=1e-6)
    close(layer(x[:, :3]), x[:, :3] + positional_encoding(3, 6), atol=1e-6)
    assert layer.count_params() == 0
    with pytest.raises(ValueError, match="d_model must be even"):
        PositionalEncoding(20)(f32(rng, 2, 5, 7))
    with pytest.raises(ValueError, match="length 5 are longer than max_length=4"):
        PositionalEncoding(4)(x)


def test_keras_per_token_masks_from_embedding_are_used():
    """Embedding(mask_zero=True) attaches a (batch, n) mask; the layers read and pass it on."""
    source = np.array([[3, 1, 4, 1, 5], [9, 2, 0, 0, 0]])
    target = np.array([[2, 7, 1, 8], [2, 8, 0, 0]])
    embedding = keras.layers.Embedding(10, 8, mask_zero=True)
    add_positions = PositionalEncoding(16)
    enc_1, enc_2 = TransformerEncoderLayer(8, 2, 16), TransformerEncoderLayer(8, 2, 16)
    dec = TransformerDecoderLayer(8, 2, 16)
    context = enc_2(enc_1(add_positions(embedding(source))))
    out, scores = dec(add_positions(embedding(target)), context, return_attention_scores=True)

    # The same numbers with the masks passed by hand, on tensors that carry no Keras mask.
    explicit = padding_mask([5, 2], 5)
    x = np.asarray(embedding(source)) + positional_encoding(5, 8)
    y = np.asarray(embedding(target)) + positional_encoding(4, 8)
    context_by_hand = enc_2(enc_1(x, mask=explicit), mask=explicit)
    close(np.asarray(context)[1, :2], np.asarray(context_by_hand)[1, :2])
    close(context[0], context_by_hand[0])
    out_by_hand, scores_by_hand = dec(y, context_by_hand, context_mask=explicit,
                                      return_attention_scores=True)
    close(np.asarray(out)[1, :2], np.asarray(out_by_hand)[1, :2])
    close(scores[:, :, :2], np.asarray(scores_by_hand)[:, :, :2])
    assert np.all(np.asarray(scores)[1, ..., 2:] == 0)


# Keras's own saving code calls np.array on TensorFlow variables, which NumPy 2 warns about.
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_config_and_saving_round_trip(tmp_path):
    rng = np.random.default_rng(9)
    source = keras.Input((None, 8), name="source")
    target = keras.Input((None, 8), name="target")
    context = TransformerEncoderLayer(8, 2, 16, dropout=0.1, norm_first=True)(
        PositionalEncoding(12)(source))
    context = keras.layers.LayerNormalization(name="final_norm")(context)  # pre-LN stack
    out = TransformerDecoderLayer(8, 2, 16, norm_first=True)(target, context)
    model = keras.Model([source, target], out)
    randomise(model, rng)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    x, y = f32(rng, 2, 5, 8), f32(rng, 2, 3, 8)
    close(loaded([x, y]), model([x, y]), atol=1e-6)
    layer = next(layer for layer in model.layers if isinstance(layer, TransformerEncoderLayer))
    assert {k: layer.get_config()[k] for k in ("d_model", "num_heads", "d_ff", "dropout",
                                               "norm_first")} == dict(
        d_model=8, num_heads=2, d_ff=16, dropout=0.1, norm_first=True)
    assert TransformerEncoderLayer.from_config(layer.get_config()).norm_first is True


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, match", [
    (lambda: TransformerEncoderLayer(8, 3, 16), ValueError,
     "d_model must be divisible by num_heads"),
    (lambda: TransformerDecoderLayer("8", 2, 16), TypeError, "d_model must be an integer"),
    (lambda: TransformerEncoderLayer(8, 2, 0), ValueError, "d_ff must be an integer in"),
    (lambda: TransformerEncoderLayer(8, 2, 16, dropout=1.5), ValueError,
     r"dropout must be a finite number in \[0, 1\]"),
    (lambda: TransformerEncoderLayer(8, 2, 16, norm_first=None), TypeError,
     "norm_first must be True or False"),
    (lambda: PositionalEncoding(0), ValueError, "max_length must be an integer in"),
])
def test_constructors_reject_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_calls_reject_bad_input():
    rng = np.random.default_rng(10)
    x = f32(rng, 2, 4, 8)
    with pytest.raises(ValueError, match=r"x must have shape \(batch, n, d_model=8\)"):
        TransformerEncoderLayer(8, 2, 16)(f32(rng, 2, 4, 6))
    with pytest.raises(ValueError, match=r"context must have shape \(batch, n, d_model=8\)"):
        TransformerDecoderLayer(8, 2, 16)(x, f32(rng, 2, 4, 6))
    layer = encoder(rng, x)
    with pytest.raises(TypeError, match="mask must be boolean"):
        layer(x, mask=np.ones((2, 1, 4), np.float32))
    with pytest.raises(ValueError, match=r"mask must have shape .*; got shape \(2, 1, 1, 4\)"):
        layer(x, mask=np.ones((2, 1, 1, 4), bool))


def test_copying_an_unbuilt_layer_is_refused():
    with pytest.raises(ValueError, match="not built"):
        EncoderLayer.from_keras(TransformerEncoderLayer(8, 2, 16))
    with pytest.raises(TypeError, match="TransformerDecoderLayer; got TransformerEncoderLayer"):
        DecoderLayer.from_keras(TransformerEncoderLayer(8, 2, 16))


# --- the encoder-decoder model and greedy decoding ---------------------------------------------

SOURCE_VOCAB, TARGET_VOCAB = 13, 19


@pytest.fixture(scope="module", params=[False, True], ids=["post-LN", "pre-LN"])
def seq2seq(request):
    keras.utils.set_random_seed(1)
    return build_transformer_seq2seq(SOURCE_VOCAB, TARGET_VOCAB, d_model=16, num_heads=2,
                                     d_ff=24, num_layers=2, norm_first=request.param,
                                     max_length=12)


def source_batch():
    return np.array([[4, 5, 6, 0], [7, 0, 0, 0], [8, 9, 10, 11]], np.int32)


def test_seq2seq_shapes_and_shared_weights(seq2seq):
    model, encoder, decoder = seq2seq
    source, target = source_batch(), np.ones((3, 5), np.int32)
    probs = np.asarray(model([source, target]))
    assert probs.shape == (3, 5, TARGET_VOCAB)
    np.testing.assert_allclose(probs.sum(-1), 1, rtol=1e-5)
    memory = np.asarray(encoder(source))
    direct, weights = decoder([target, memory, source])
    np.testing.assert_allclose(np.asarray(direct), probs, atol=1e-6)  # the same weights
    assert tuple(weights.shape) == (3, 2, 2, 5, 4)  # (batch, layers, heads, T, S)


def test_seq2seq_masks_source_padding(seq2seq):
    model, encoder, decoder = seq2seq
    source, target = source_batch(), np.ones((3, 4), np.int32)
    _, weights = decoder([target, np.asarray(encoder(source)), source])
    weights = np.asarray(weights)
    assert np.all(weights[1, ..., 1:] == 0) and np.all(weights[0, ..., 3] == 0)
    longer = np.pad(source, ((0, 0), (0, 3)))  # three more padded positions
    np.testing.assert_allclose(np.asarray(model([longer, target])),
                               np.asarray(model([source, target])), atol=1e-6)


def test_parameter_count_follows_the_layers(seq2seq):
    model, _, _ = seq2seq
    d, d_ff, n = 16, 24, 2
    encoder_layer = 4 * (d * d + d) + 2 * d * d_ff + d_ff + d + 2 * 2 * d
    decoder_layer = 8 * (d * d + d) + 2 * d * d_ff + d_ff + d + 3 * 2 * d
    embeddings = (SOURCE_VOCAB + TARGET_VOCAB) * d
    output = d * TARGET_VOCAB + TARGET_VOCAB
    final_norms = sum(layer.name.endswith("final_norm") for layer in model.layers)
    assert final_norms in (0, 2)  # pre-LN: one after each stack
    expected = embeddings + n * (encoder_layer + decoder_layer) + output + final_norms * 2 * d
    assert model.count_params() == expected


def test_greedy_decode_feeds_back_its_own_tokens(seq2seq):
    _, encoder, decoder = seq2seq
    source = source_batch()
    ids, weights = transformer_greedy_decode(encoder, decoder, source, start_id=1, max_length=6)
    assert ids.shape == (3, 6) and ids.dtype == np.int32
    assert weights.shape == (3, 2, 2, 6, 4)
    fed = np.concatenate([np.ones((3, 1), np.int32), ids[:, :-1]], axis=1)
    probs, direct = decoder([fed, np.asarray(encoder(source)), source])
    np.testing.assert_array_equal(np.argmax(np.asarray(probs), -1), ids)
    np.testing.assert_allclose(weights, np.asarray(direct), atol=1e-6)
    assert _tensorflow._GRAPHS[decoder].experimental_get_tracing_count() == 1
    transformer_greedy_decode(encoder, decoder, source[:2, :2], start_id=1, max_length=3)
    assert _tensorflow._GRAPHS[decoder].experimental_get_tracing_count() == 1


@pytest.mark.parametrize("source, max_length, error, match", [
    (np.zeros((2, 3), np.int32), 4, ValueError, "at least one non-padding id"),
    (np.ones(3, np.int32), 4, ValueError, r"source_ids must have 2 axes; got shape \(3,\)"),
    (np.ones((2, 3)), 4, TypeError, "source_ids must be an array of integers"),
    (np.ones((2, 3), np.int32), 0, ValueError, r"max_length must be an integer in \[1, inf\)"),
])
def test_greedy_decode_rejects_bad_input(seq2seq, source, max_length, error, match):
    _, encoder, decoder = seq2seq
    with pytest.raises(error, match=match):
        transformer_greedy_decode(encoder, decoder, source, start_id=1, max_length=max_length)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"source_vocab_size": 1}, ValueError, r"source_vocab_size must be an integer in \[2, inf\)"),
    ({"num_layers": 1.0}, TypeError, "num_layers must be an integer"),
    ({"d_model": 10, "num_heads": 4}, ValueError, "d_model must be divisible by num_heads"),
])
def test_build_rejects_bad_arguments(kwargs, error, match):
    arguments = {"source_vocab_size": 5, "target_vocab_size": 5, **kwargs}
    with pytest.raises(error, match=match):
        build_transformer_seq2seq(**arguments)


def test_rms_norm_matches_keras_rms_normalization():
    from helpers.transformer import rms_norm  # noqa: PLC0415 - next to its only use

    x = np.random.default_rng(3).normal(size=(2, 5, 8)).astype("float32") * 3 + 1
    layer = keras.layers.RMSNormalization()
    layer.build(x.shape)
    scale = np.linspace(0.5, 1.5, 8).astype("float32")
    layer.set_weights([scale])
    assert np.allclose(rms_norm(x, scale, epsilon=layer.epsilon), np.asarray(layer(x)),
                       atol=1e-5)
