"""helpers.keras_transformer gives the numbers of helpers.transformer with copied weights.

Float32 inputs, ``atol=1e-5``, and Keras weights moved away from their initial values (biases,
gamma and beta included) so that every weight is exercised.
"""

import numpy as np
import pytest

from helpers._tensorflow import keras
from helpers.attention import padding_mask

# helpers.keras_transformer first: it quietens TensorFlow's start-up logs before importing it.
from helpers.keras_transformer import (
    PositionalEncoding,
    TransformerDecoderLayer,
    TransformerEncoderLayer,
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
