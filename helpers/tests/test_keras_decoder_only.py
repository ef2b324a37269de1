"""helpers.keras_decoder_only gives the numbers of helpers.decoder_only with copied weights.

Float32, ``atol=1e-5``, every Keras weight moved away from its initial value.
"""

import numpy as np
import pytest

from helpers._tensorflow import keras
from helpers.attention import sliding_window_mask
from helpers.decoder_only import DecoderOnlyTransformer, greedy_generate
from helpers.keras_decoder_only import (
    AlibiBias,
    DecoderOnlyLayer,
    PositionalSelfAttention,
    RotaryPositionEmbedding,
    build_decoder_only,
    build_decoder_only_with_position,
    train_language_model,
    train_together,
)
from helpers.transformer import alibi_bias, rotary_position_embedding

ATOL = 1e-5


@pytest.fixture(scope="module", autouse=True)
def _seed_keras():
    keras.utils.set_random_seed(0)


def trained_looking(num_kv_heads, window, seed=0):
    model = build_decoder_only(13, d_model=16, num_query_heads=4, num_kv_heads=num_kv_heads,
                               d_ff=24, num_layers=2, max_length=20, window=window)
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(variable + rng.normal(scale=0.2, size=variable.shape).astype("float32"))
    return model


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1], ids=["MHA", "GQA", "MQA"])
@pytest.mark.parametrize("window", [None, 3], ids=["causal", "window3"])
def test_numpy_model_gives_the_keras_logits(num_kv_heads, window):
    model = trained_looking(num_kv_heads, window)
    ids = np.random.default_rng(1).integers(0, 13, size=(3, 9)).astype("int32")
    twin = DecoderOnlyTransformer.from_keras(model)
    assert twin.count_params() == model.count_params()
    assert twin.window == window and twin.layers[0].self_attention.num_kv_heads == num_kv_heads
    assert np.abs(twin(ids) - np.asarray(model(ids))).max() < ATOL


@pytest.mark.parametrize("num_kv_heads", [4, 1])
def test_keras_attention_weights_match_numpy_weights(num_kv_heads):
    model = trained_looking(num_kv_heads, window=4)
    ids = np.random.default_rng(2).integers(0, 13, size=(2, 8)).astype("int32")
    layer = model.get_layer("decoder_layer_0")
    x = model.get_layer("decoder_embedding")(ids)
    _, keras_weights = layer(x, return_attention_scores=True)
    _, numpy_weights = DecoderOnlyTransformer.from_keras(model)(ids, return_attention_scores=True)
    assert np.abs(np.asarray(keras_weights) - numpy_weights[0]).max() < ATOL
    assert np.all(numpy_weights[0][..., ~sliding_window_mask(8, 4)] == 0)


def test_the_window_mask_is_that_of_keras_sliding_window():
    if "sliding_window" not in keras.layers.GroupQueryAttention.__init__.__code__.co_varnames:
        pytest.fail("the pinned Keras must have GroupQueryAttention(sliding_window=...)")
    attention = keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=2,
                                                 num_key_value_heads=1, sliding_window=3)
    x = np.random.default_rng(3).normal(size=(1, 7, 4)).astype("float32")
    _, scores = attention(x, x, use_causal_mask=True, return_attention_scores=True)
    assert np.array_equal(np.asarray(scores)[0, 0] > 0, sliding_window_mask(7, 3))


def test_cached_numpy_generation_agrees_with_keras_recomputation():
    model = trained_looking(2, None, seed=4)
    twin = DecoderOnlyTransformer.from_keras(model)
    ids = np.random.default_rng(5).integers(0, 13, size=(4, 5)).astype("int32")
    generated, logits = greedy_generate(twin, ids, 6, cache=twin.new_cache())
    sequence = np.concatenate([ids, generated], axis=1).astype("int32")
    keras_logits = np.asarray(model(sequence[:, :-1]))[:, 4:]
    assert np.abs(keras_logits - logits).max() < ATOL


def test_layer_rejects_head_counts_that_do_not_divide_and_keeps_its_config():
    with pytest.raises(ValueError, match="num_kv_heads=3 must divide num_query_heads=4"):
        DecoderOnlyLayer(16, 4, 3, 32)
    layer = DecoderOnlyLayer(16, 4, 2, 32, window=5)
    clone = DecoderOnlyLayer.from_config(layer.get_config())
    assert (clone.num_kv_heads, clone.window, clone.num_heads) == (2, 5, 4)


def test_from_keras_rejects_another_model():
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="build_decoder_only"):
        DecoderOnlyTransformer.from_keras(other)


def test_training_lowers_the_weighted_loss_and_ignores_unweighted_positions():
    rng = np.random.default_rng(6)
    inputs = rng.integers(3, 13, size=(256, 6)).astype("int32")
    targets = np.roll(inputs, 1, axis=1)            # copy the previous token
    weights = np.ones(inputs.shape, "float32")
    weights[:, 0] = 0                                # position 0 has nothing to copy
    model = build_decoder_only(13, d_model=16, num_query_heads=2, num_kv_heads=1, d_ff=32,
                               num_layers=1, max_length=6)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    before = float(loss(targets[:, 1:], model(inputs)[:, 1:]))
    seconds = train_language_model(model, inputs, targets, weights, epochs=12, batch_size=32,
                                   warmup_steps=5)
    after = float(loss(targets[:, 1:], model(inputs)[:, 1:]))
    assert seconds > 0 and after < 0.5 * before, (before, after)


def test_training_rejects_a_warmup_longer_than_training():
    model = build_decoder_only(13, d_model=8, num_query_heads=2, num_kv_heads=1, d_ff=8,
                               num_layers=1, max_length=4)
    ids = np.zeros((64, 4), "int32")
    with pytest.raises(ValueError, match=r"warmup_steps must be in \[0, 2\)"):
        train_language_model(model, ids, ids, np.ones((64, 4)), batch_size=32,
                             warmup_steps=2)



def copy_task(seed=6):
    rng = np.random.default_rng(seed)
    inputs = rng.integers(3, 13, size=(128, 6)).astype("int32")
    weights = np.ones(inputs.shape, "float32")
    weights[:, 0] = 0
    return inputs, np.roll(inputs, 1, axis=1), weights


def small_model(num_kv_heads, seed):
    keras.utils.set_random_seed(seed)
    return build_decoder_only(13, d_model=16, num_query_heads=2, num_kv_heads=num_kv_heads,
                              d_ff=32, num_layers=1, max_length=6)


def test_training_together_gives_each_model_the_weights_it_gets_alone():
    inputs, targets, weights = copy_task()
    options = dict(epochs=3, batch_size=32, warmup_steps=2)
    alone = []
    for kv, seed in ((2, 1), (1, 2)):
        model = small_model(kv, seed)
        keras.utils.set_random_seed(10)           # the same batch order in both runs
        train_language_model(model, inputs, targets, weights, **options)
        alone.append(model)
    together = [small_model(2, 1), small_model(1, 2)]
    keras.utils.set_random_seed(10)
    seconds = train_together(together, inputs, targets, weights, **options)
    assert seconds > 0
    for one, other in zip(alone, together):
        for a, b in zip(one.get_weights(), other.get_weights(), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # and training did move them: the two trained models differ from fresh ones
    assert not np.allclose(together[0].get_weights()[0], small_model(2, 1).get_weights()[0])


@pytest.mark.parametrize("models, error, match", [
    ([], ValueError, "at least one"),
    ("model", TypeError, "list or tuple"),
    ([object()], TypeError, "keras.Model"),
])
def test_training_together_rejects_what_is_not_a_list_of_models(models, error, match):
    inputs, targets, weights = copy_task()
    with pytest.raises(error, match=match):
        train_together(models, inputs, targets, weights)


def test_training_together_rejects_a_model_given_twice():
    inputs, targets, weights = copy_task()
    model = small_model(1, 0)
    with pytest.raises(ValueError, match="twice"):
        train_together([model, model], inputs, targets, weights)

# --- positions: sinusoidal, RoPE, ALiBi, none ------------------------------------------------

POSITION = pytest.mark.parametrize("position", ["sinusoidal", "rope", "alibi", "none"])


def positioned(position, num_kv_heads=2, window=None, seed=0):
    model = build_decoder_only_with_position(
        13, position=position, d_model=16, num_query_heads=4, num_kv_heads=num_kv_heads,
        d_ff=24, num_layers=2, max_length=20, window=window)
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(variable + rng.normal(scale=0.2, size=variable.shape).astype("float32"))
    return model


@POSITION
@pytest.mark.parametrize("num_kv_heads", [4, 2], ids=["MHA", "GQA"])
def test_numpy_model_gives_the_keras_logits_for_every_position(position, num_kv_heads):
    model = positioned(position, num_kv_heads)
    ids = np.random.default_rng(1).integers(0, 13, size=(3, 9)).astype("int32")
    twin = DecoderOnlyTransformer.from_keras(model)
    assert twin.position == position and twin.count_params() == model.count_params()
    assert twin.max_length == (20 if position == "sinusoidal" else None)
    assert np.abs(twin(ids) - np.asarray(model(ids))).max() < ATOL


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_numpy_and_keras_agree_with_a_window_and_on_the_weights(position):
    model = positioned(position, 1, window=3)
    ids = np.random.default_rng(2).integers(0, 13, size=(2, 8)).astype("int32")
    twin = DecoderOnlyTransformer.from_keras(model)
    assert twin.window == 3 and np.abs(twin(ids) - np.asarray(model(ids))).max() < ATOL
    x = model.get_layer("decoder_embedding")(ids)
    _, keras_weights = model.get_layer("decoder_layer_0")(x, return_attention_scores=True)
    _, numpy_weights = twin(ids, return_attention_scores=True)
    assert np.abs(np.asarray(keras_weights) - numpy_weights[0]).max() < ATOL
    assert np.all(numpy_weights[0][..., ~sliding_window_mask(8, 3)] == 0)


@POSITION
def test_cached_numpy_generation_agrees_with_keras_recomputation_for_every_position(position):
    model = positioned(position, 2, seed=4)
    twin = DecoderOnlyTransformer.from_keras(model)
    ids = np.random.default_rng(5).integers(0, 13, size=(4, 5)).astype("int32")
    generated, logits = greedy_generate(twin, ids, 6, cache=twin.new_cache())
    uncached, _ = greedy_generate(twin, ids, 6)
    sequence = np.concatenate([ids, generated], axis=1).astype("int32")
    keras_logits = np.asarray(model(sequence[:, :-1]))[:, 4:]
    assert np.array_equal(generated, uncached)
    assert np.abs(keras_logits - logits).max() < ATOL


def test_sinusoidal_is_build_decoder_only_itself():
    a = build_decoder_only_with_position(13, position="sinusoidal", d_model=8,
                                         num_query_heads=2, num_kv_heads=1, d_ff=8)
    b = build_decoder_only(13, d_model=8, num_query_heads=2, num_kv_heads=1, d_ff=8)
    assert [x.name for x in a.layers] == [x.name for x in b.layers]
    assert a.count_params() == b.count_params()
    assert isinstance(a.get_layer("decoder_layer_0").self_attention,
                      keras.layers.GroupQueryAttention)


@pytest.mark.parametrize("pairing", ["adjacent", "halves"])
def test_keras_rotary_layer_is_the_numpy_function(pairing):
    x = np.random.default_rng(6).normal(size=(2, 3, 7, 8)).astype("float32")
    positions = np.array([0, 3, 4, 9, 1, 19, 2], "int32")
    layer = RotaryPositionEmbedding(pairing=pairing, base=500.0)
    expected = rotary_position_embedding(x, positions, pairing=pairing, base=500.0)
    assert np.abs(np.asarray(layer(x, positions)) - expected).max() < ATOL
    assert np.abs(np.asarray(layer(x)) - rotary_position_embedding(x, pairing=pairing,
                                                                   base=500.0)).max() < ATOL
    clone = RotaryPositionEmbedding.from_config(layer.get_config())
    assert (clone.pairing, clone.base) == (pairing, 500.0)


def test_keras_alibi_layer_adds_the_numpy_bias():
    scores = np.random.default_rng(7).normal(size=(2, 6, 5, 5)).astype("float32")
    out = np.asarray(AlibiBias(6)(scores))
    assert np.allclose(out, scores + alibi_bias(6, 5), atol=1e-6)
    last_two = np.asarray(AlibiBias(6)(scores[:, :, 3:]))        # queries at 3 and 4
    assert np.allclose(last_two, scores[:, :, 3:] + alibi_bias(6, 5)[:, 3:], atol=1e-6)


def test_positional_attention_without_position_is_keras_group_query_attention():
    x = np.random.default_rng(8).normal(size=(2, 6, 8)).astype("float32")
    ours = PositionalSelfAttention(4, 2, 1, position="none")
    keras_gqa = keras.layers.GroupQueryAttention(head_dim=4, num_query_heads=2,
                                                 num_key_value_heads=1)
    ours(x, x)
    keras_gqa(x, x)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in keras_gqa.weights]
    rng = np.random.default_rng(9)
    for a, b in zip(ours.weights, keras_gqa.weights):
        value = rng.normal(scale=0.5, size=a.shape).astype("float32")
        a.assign(value)
        b.assign(value)
    out, weights = ours(x, x, use_causal_mask=True, return_attention_scores=True)
    expected, expected_weights = keras_gqa(x, x, use_causal_mask=True,
                                           return_attention_scores=True)
    assert np.abs(np.asarray(out) - np.asarray(expected)).max() < ATOL
    assert np.abs(np.asarray(weights) - np.asarray(expected_weights)).max() < ATOL


def test_positional_layers_keep_their_config_and_reject_bad_options():
    layer = DecoderOnlyLayer(16, 4, 2, 32, window=5, position="alibi")
    clone = DecoderOnlyLayer.from_config(layer.get_config())
    assert (clone.position, clone.window) == ("alibi", 5)
    assert isinstance(clone.self_attention, PositionalSelfAttention)
    attention = PositionalSelfAttention.from_config(PositionalSelfAttention(
        4, 4, 2, position="rope").get_config())
    assert (attention.position, attention.num_key_value_heads) == ("rope", 2)
    with pytest.raises(ValueError, match="position must be one of 'none', 'rope', 'alibi'"):
        DecoderOnlyLayer(16, 4, 2, 32, position="sinusoidal")
    with pytest.raises(ValueError, match="position must be one of 'sinusoidal'"):
        build_decoder_only_with_position(13, position="learned")
    with pytest.raises(ValueError, match="num_key_value_heads=3 must divide"):
        PositionalSelfAttention(4, 4, 3)
    with pytest.raises(ValueError, match="head_dim must be even"):
        RotaryPositionEmbedding()(np.ones((2, 5), "float32"))


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_rope_and_alibi_models_learn_to_copy_the_previous_token(position):
    rng = np.random.default_rng(10)
    inputs = rng.integers(3, 13, size=(256, 6)).astype("int32")
    targets = np.roll(inputs, 1, axis=1)
    weights = np.ones(inputs.shape, "float32")
    weights[:, 0] = 0
    model = build_decoder_only_with_position(13, position=position, d_model=16,
                                             num_query_heads=2, num_kv_heads=1, d_ff=32,
                                             num_layers=1)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    before = float(loss(targets[:, 1:], model(inputs)[:, 1:]))
    train_language_model(model, inputs, targets, weights, epochs=12, batch_size=32,
                         warmup_steps=5)
    after = float(loss(targets[:, 1:], model(inputs)[:, 1:]))
    assert after < 0.5 * before, (before, after)


LATENT = {"latent_dim": 10, "query_latent_dim": 8, "rope_dim": 2}


def trained_looking_latent(seed=0, latent=LATENT):
    model = build_decoder_only(13, d_model=16, num_query_heads=4, num_kv_heads=4, d_ff=24,
                               num_layers=2, max_length=20, latent=latent)
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(variable + rng.normal(scale=0.2, size=variable.shape).astype("float32"))
    return model


def test_numpy_latent_model_gives_the_keras_logits_and_weights():
    model = trained_looking_latent()
    ids = np.random.default_rng(1).integers(0, 13, size=(3, 9)).astype("int32")
    twin = DecoderOnlyTransformer.from_keras(model)
    assert twin.uses_latent_attention and twin.count_params() == model.count_params()
    assert np.abs(twin(ids) - np.asarray(model(ids))).max() < ATOL
    layer = model.get_layer("decoder_layer_0")
    _, keras_weights = layer(model.get_layer("decoder_embedding")(ids),
                             return_attention_scores=True)
    _, numpy_weights = twin(ids, return_attention_scores=True)
    assert np.abs(np.asarray(keras_weights) - numpy_weights[0]).max() < ATOL


@pytest.mark.parametrize("rope_dim", [2, 0])
def test_cached_latent_generation_agrees_with_keras_recomputation(rope_dim):
    latent = LATENT | {"rope_dim": rope_dim, "latent_dim": 12 - rope_dim}
    model = trained_looking_latent(seed=4, latent=latent)
    twin = DecoderOnlyTransformer.from_keras(model)
    ids = np.random.default_rng(5).integers(0, 13, size=(4, 5)).astype("int32")
    cache = twin.new_cache()
    generated, logits = greedy_generate(twin, ids, 6, cache=cache)
    uncached, _ = greedy_generate(twin, ids, 6)
    sequence = np.concatenate([ids, generated], axis=1).astype("int32")
    keras_logits = np.asarray(model(sequence[:, :-1]))[:, 4:]
    assert np.abs(keras_logits - logits).max() < ATOL
    assert np.array_equal(generated, uncached)
    assert cache.nbytes == 4 * 10 * twin.kv_cache_bytes_per_token() == 4 * 10 * 2 * 12 * 4


def test_latent_layer_keeps_its_config_and_rejects_what_it_does_not_do():
    layer = DecoderOnlyLayer(16, 4, 4, 32, latent=LATENT)
    clone = DecoderOnlyLayer.from_config(layer.get_config())
    assert clone.latent == LATENT and type(clone.self_attention).__name__ == (
        "MultiHeadLatentAttention")
    for options in (dict(num_kv_heads=2), dict(window=3), dict(position="rope")):
        arguments = {"num_kv_heads": 4, **options}
        with pytest.raises(ValueError, match="latent .multi-head latent attention. needs"):
            DecoderOnlyLayer(16, 4, arguments.pop("num_kv_heads"), 32, latent=LATENT,
                             **arguments)
    with pytest.raises(TypeError, match="latent must be a dict"):
        DecoderOnlyLayer(16, 4, 4, 32, latent=[10, 8, 2])


def test_latent_model_trains_together_with_a_grouped_query_model():
    rng = np.random.default_rng(7)
    inputs = rng.integers(3, 13, size=(128, 6)).astype("int32")
    targets = np.roll(inputs, 1, axis=1)
    weights = np.ones(inputs.shape, "float32")
    models = [build_decoder_only(13, d_model=16, num_query_heads=4, num_kv_heads=2, d_ff=24,
                                 num_layers=1, max_length=8),
              build_decoder_only(13, d_model=16, num_query_heads=4, num_kv_heads=4, d_ff=24,
                                 num_layers=1, max_length=8, latent=LATENT)]
    before = [np.asarray(m.get_layer("decoder_layer_0").self_attention.w_dkv)
              for m in models[1:]]
    train_together(models, inputs, targets, weights, batch_size=32, warmup_steps=1)
    after = np.asarray(models[1].get_layer("decoder_layer_0").self_attention.w_dkv)
    assert not np.allclose(before[0], after)


# --- the attention variants of chapter 16: sink logit (gpt-oss), output gate (Qwen3-Next) ----

VARIANT = pytest.mark.parametrize("variant", ["sink_logit", "gated"])


def variant_model(variant, position, window=None, seed=0):
    model = build_decoder_only_with_position(
        13, position=position, d_model=16, num_query_heads=4, num_kv_heads=2, d_ff=24,
        num_layers=2, max_length=20, window=window, variant=variant)
    rng = np.random.default_rng(seed)
    for variable in model.weights:                   # the sink logits and the gate too
        variable.assign(variable + rng.normal(scale=0.2, size=variable.shape).astype("float32"))
    return model


@VARIANT
@POSITION
def test_numpy_twin_of_each_variant_gives_the_keras_logits_and_weights(variant, position):
    model = variant_model(variant, position, window=4 if position == "rope" else None)
    ids = np.random.default_rng(1).integers(0, 13, size=(3, 9)).astype("int32")
    twin = DecoderOnlyTransformer.from_keras(model)
    attention = twin.layers[0].self_attention
    assert type(attention).__name__ == {"sink_logit": "SinkLogitAttention",
                                        "gated": "GatedAttention"}[variant]
    assert twin.count_params() == model.count_params()
    assert np.abs(twin(ids) - np.asarray(model(ids))).max() < ATOL
    x = model.get_layer("decoder_embedding")(ids)
    _, keras_weights = model.get_layer("decoder_layer_0")(x, return_attention_scores=True)
    _, numpy_weights = twin(ids, return_attention_scores=True)
    assert np.abs(np.asarray(keras_weights) - numpy_weights[0]).max() < ATOL
    totals = numpy_weights[0].sum(axis=-1)
    if variant == "sink_logit":                      # the sink keeps a share of the rows
        assert totals.max() < 1 + 1e-6 and totals.mean() < 0.9
    else:
        assert np.abs(totals - 1).max() < 1e-5       # the gate comes after the softmax


@VARIANT
def test_cached_numpy_generation_of_each_variant_agrees_with_keras(variant):
    model = variant_model(variant, "rope", seed=4)
    twin = DecoderOnlyTransformer.from_keras(model)
    ids = np.random.default_rng(5).integers(0, 13, size=(4, 5)).astype("int32")
    generated, logits = greedy_generate(twin, ids, 6, cache=twin.new_cache())
    sequence = np.concatenate([ids, generated], axis=1).astype("int32")
    assert np.abs(np.asarray(model(sequence[:, :-1]))[:, 4:] - logits).max() < ATOL


def test_the_gated_layer_widens_its_query_kernel_and_the_sink_layer_adds_one_logit_per_head():
    x = np.random.default_rng(6).normal(size=(2, 5, 8)).astype("float32")
    plain, sink, gated = (PositionalSelfAttention(4, 2, 1, position="none", variant=v)
                          for v in ("softmax", "sink_logit", "gated"))
    for layer in (plain, sink, gated):
        layer(x, x)
    assert sink.count_params() == plain.count_params() + 2
    assert tuple(gated.query_dense.kernel.shape) == (8, 2, 8)
    assert gated.count_params() == plain.count_params() + 8 * 2 * 4 + 2 * 4
    assert not np.any(np.asarray(sink.sink_logits))  # starts as softmax_1
    for a, b in zip(plain.weights, [w for w in sink.weights if "sink_logits" not in w.path]):
        b.assign(a)                                   # the same kernels; only the sink differs
    _, weights = sink(x, x, use_causal_mask=True, return_attention_scores=True)
    _, plain_weights = plain(x, x, use_causal_mask=True, return_attention_scores=True)
    weights, plain_weights = np.asarray(weights), np.asarray(plain_weights)
    totals = weights.sum(axis=-1, keepdims=True)     # sum e^s / (1 + sum e^s) per row
    assert np.all(totals < 1) and np.abs(weights - plain_weights * totals).max() < ATOL


def test_variants_keep_their_config_and_reject_what_they_do_not_do():
    layer = DecoderOnlyLayer(16, 4, 2, 32, variant="gated")
    clone = DecoderOnlyLayer.from_config(layer.get_config())
    assert clone.variant == "gated" and clone.self_attention.variant == "gated"
    attention = PositionalSelfAttention.from_config(PositionalSelfAttention(
        4, 4, 2, variant="sink_logit").get_config())
    assert attention.variant == "sink_logit"
    with pytest.raises(ValueError, match="variant must be one of 'softmax', 'sink_logit'"):
        PositionalSelfAttention(4, 4, 2, variant="softmax_1")
    with pytest.raises(ValueError, match="variant='softmax'"):
        DecoderOnlyLayer(16, 4, 4, 32, latent=LATENT, variant="gated")
    assert isinstance(build_decoder_only(13, d_model=8, num_query_heads=2, num_kv_heads=1,
                                         d_ff=8, variant="sink_logit")
                      .get_layer("decoder_layer_0").self_attention, PositionalSelfAttention)


@VARIANT
def test_a_small_model_of_each_variant_trains_and_moves_its_new_weights(variant):
    rng = np.random.default_rng(11)
    inputs = rng.integers(3, 13, size=(128, 6)).astype("int32")
    targets = np.roll(inputs, 1, axis=1)
    weights = np.ones(inputs.shape, "float32")
    model = build_decoder_only(13, d_model=16, num_query_heads=2, num_kv_heads=1, d_ff=24,
                               num_layers=1, max_length=6, variant=variant)
    attention = model.get_layer("decoder_layer_0").self_attention
    new = (lambda: attention.sink_logits) if variant == "sink_logit" else (
        lambda: attention.query_dense.kernel[..., 8:])
    before = np.asarray(new()).copy()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    start = float(loss(targets, model(inputs)))
    train_language_model(model, inputs, targets, weights, epochs=4, batch_size=32,
                         warmup_steps=2)
    assert float(loss(targets, model(inputs))) < start
    assert not np.allclose(np.asarray(new()), before)
