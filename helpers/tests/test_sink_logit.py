"""helpers.attention.sink_logit: gpt-oss's sink logit is e^{b_h} in the softmax's denominator.

Float64, 1e-12: the extra column equals the closed form, chapter 7's online softmax started
from the sink's term, plain softmax for b = -inf and Miller's softmax_1 for b = 0.
"""

import numpy as np
import pytest

from helpers.attention import (
    GroupedQueryAttention,
    SinkLogitAttention,
    causal_mask,
    chunked_attention,
    grouped_query_attention,
    sink_logit_attention,
)
from helpers.positions import rotary_position_embedding

ATOL = 1e-12


def arrays(num_heads=4, num_kv_heads=2, n=6, seed=0):
    rng = np.random.default_rng(seed)
    query = rng.normal(size=(3, num_heads, n, 5))
    key, value = rng.normal(size=(2, 3, num_kv_heads, n, 5))
    return query, key, value, rng.normal(scale=2.0, size=num_heads)


def closed_form(query, key, value, sinks, mask):
    """exp(s_ij) / (exp(b_h) + sum_j exp(s_ij)), with every key/value head repeated."""
    group = query.shape[1] // key.shape[1]
    key, value = np.repeat(key, group, axis=1), np.repeat(value, group, axis=1)
    scores = np.where(mask, query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1]),
                      -np.inf)
    exps = np.exp(scores)
    weights = exps / (exps.sum(axis=-1, keepdims=True) + np.exp(sinks)[:, None, None])
    return weights @ value, weights


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1], ids=["MHA", "GQA", "MQA"])
def test_the_extra_column_is_e_to_the_sink_in_the_denominator(num_kv_heads):
    query, key, value, sinks = arrays(num_kv_heads=num_kv_heads)
    output, weights = sink_logit_attention(query, key, value, sinks, causal_mask(6))
    expected_output, expected_weights = closed_form(query, key, value, sinks, causal_mask(6))
    np.testing.assert_allclose(weights, expected_weights, rtol=0, atol=ATOL)
    np.testing.assert_allclose(output, expected_output, rtol=0, atol=ATOL)


def test_rows_sum_to_less_than_one_by_exactly_the_sinks_share():
    query, key, value, sinks = arrays()
    _, weights = sink_logit_attention(query, key, value, sinks, causal_mask(6))
    totals = weights.sum(axis=-1)
    assert np.all(totals < 1) and np.all(totals > 0)
    scores = query @ np.swapaxes(np.repeat(key, 2, axis=1), -1, -2) / np.sqrt(5)
    denominators = (np.exp(np.where(causal_mask(6), scores, -np.inf)).sum(axis=-1)
                    + np.exp(sinks)[:, None])
    np.testing.assert_allclose(1 - totals, np.exp(sinks)[:, None] / denominators, atol=ATOL)


@pytest.mark.parametrize("chunk_size", [1, 4, 6])
def test_chapter_7_online_softmax_started_from_the_sinks_term_gives_the_same_output(
        chunk_size):
    query, key, value, sinks = arrays(num_kv_heads=4)
    output, _ = sink_logit_attention(query, key, value, sinks, causal_mask(6))
    online = chunked_attention(query, key, value, chunk_size, causal_mask(6), sink_logits=sinks)
    np.testing.assert_allclose(online, output, rtol=0, atol=ATOL)
    plain = chunked_attention(query, key, value, chunk_size, causal_mask(6))
    assert np.abs(online - plain).max() > 0.01          # the start term does something


def test_online_softmax_without_the_start_term_is_unchanged():
    query, key, value, _ = arrays(num_kv_heads=4)
    plain = chunked_attention(query, key, value, 4, causal_mask(6))
    no_sink = chunked_attention(query, key, value, 4, causal_mask(6),
                                sink_logits=np.full(4, -np.inf))
    assert np.array_equal(no_sink, plain)


def test_a_sink_of_minus_infinity_is_plain_softmax_attention():
    query, key, value, _ = arrays()
    output, weights = sink_logit_attention(query, key, value, np.full(4, -np.inf),
                                           causal_mask(6))
    plain_output, plain_weights = grouped_query_attention(query, key, value, causal_mask(6))
    np.testing.assert_allclose(weights, plain_weights, rtol=0, atol=ATOL)
    np.testing.assert_allclose(output, plain_output, rtol=0, atol=ATOL)


def test_a_sink_of_zero_is_softmax_one_off_by_one():
    query, key, value, _ = arrays(num_kv_heads=4)
    _, weights = sink_logit_attention(query, key, value, np.zeros(4))
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(5)
    softmax_1 = np.exp(scores) / (1 + np.exp(scores).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(weights, softmax_1, rtol=0, atol=ATOL)


def test_a_head_can_read_almost_nothing_and_a_fully_masked_row_reads_nothing():
    query, key, value, _ = arrays(num_kv_heads=4)
    sinks = np.array([30.0, 0.0, 0.0, 0.0])
    output, weights = sink_logit_attention(query, key, value, sinks)
    assert weights[:, 0].sum(axis=-1).max() < 1e-9 and np.abs(output[:, 0]).max() < 1e-8
    blocked = np.zeros((6, 6), bool)
    output, weights = sink_logit_attention(query, key, value, sinks, blocked)
    assert not np.any(weights) and not np.any(output)


def test_the_sink_is_neither_scaled_nor_masked_and_has_no_value():
    query, key, value, sinks = arrays(num_kv_heads=4)
    _, weights = sink_logit_attention(query, key, value, sinks, scale=0.5)
    scores = 0.5 * query @ np.swapaxes(key, -1, -2)
    expected = np.exp(scores) / (np.exp(scores).sum(-1, keepdims=True)
                                 + np.exp(sinks)[:, None, None])
    np.testing.assert_allclose(weights, expected, rtol=0, atol=ATOL)
    output, _ = sink_logit_attention(query, key, np.zeros_like(value), sinks)
    assert not np.any(output)


@pytest.mark.parametrize("sinks, match", [
    (np.zeros(3), r"sink_logits must have shape \(num_heads,\) = \(4,\).*got shape \(3,\)"),
    (np.zeros((1, 4)), r"shape \(num_heads,\) = \(4,\).*got shape \(1, 4\)"),
    (0.0, r"got shape \(\)"),
    (np.array([0, 0, np.nan, 0]), "NaN or \\+inf"),
    (np.array([0, np.inf, 0, 0]), "NaN or \\+inf"),
])
def test_a_sink_vector_of_the_wrong_shape_or_value_is_refused(sinks, match):
    query, key, value, _ = arrays()
    with pytest.raises(ValueError, match=match):
        sink_logit_attention(query, key, value, sinks)


def test_other_bad_shapes_are_refused_with_their_names():
    query, key, value, sinks = arrays()
    with pytest.raises(ValueError, match="num_kv_heads=3 .* must divide num_query_heads=4"):
        sink_logit_attention(query, key[:, :1].repeat(3, axis=1),
                             value[:, :1].repeat(3, axis=1), sinks)
    with pytest.raises(ValueError, match="at least 3 axes"):
        sink_logit_attention(query[0, 0], key[0, 0], value[0, 0], sinks)
    with pytest.raises(ValueError, match="mask of shape"):
        sink_logit_attention(query, key, value, sinks, causal_mask(5))
    with pytest.raises(TypeError, match="sink_logits must be an array of real numbers"):
        sink_logit_attention(query, key, value, ["a"] * 4)
    with pytest.raises(ValueError, match="sink_logits of shape"):
        chunked_attention(query, np.repeat(key, 2, 1), np.repeat(value, 2, 1), 2,
                          sink_logits=np.zeros(3))


def layer(position="none", seed=1):
    rng = np.random.default_rng(seed)
    plain = GroupedQueryAttention.random(8, 4, 2, rng=rng, position=position)
    return plain, SinkLogitAttention(**plain.kernels_and_biases(),
                                     sink_logits=rng.normal(size=4), position=position)


@pytest.mark.parametrize("position", ["none", "rope", "alibi"])
def test_the_layer_is_grouped_query_attention_with_the_sink_in_its_softmax(position):
    plain, sink = layer(position)
    x = np.random.default_rng(2).normal(size=(2, 5, 8))
    out, weights = sink.attend(x, np.arange(5), causal_mask(5))
    _, plain_weights = plain.attend(x, np.arange(5), causal_mask(5))
    share = 1 - weights.sum(axis=-1, keepdims=True)               # what the sink took
    np.testing.assert_allclose(weights, plain_weights * (1 - share), rtol=0, atol=ATOL)
    query = plain._project(x, "query")
    keys, values = plain.keys_values(x)
    if position == "rope":
        query = rotary_position_embedding(query, np.arange(5))
        keys = rotary_position_embedding(keys, np.arange(5))
    if position != "alibi":
        heads, _ = sink_logit_attention(query, keys, values, sink.sink_logits, causal_mask(5))
        np.testing.assert_allclose(out, sink._output(heads), rtol=0, atol=ATOL)


def test_the_layer_counts_its_sinks_and_refuses_a_wrong_sink_vector():
    plain, sink = layer()
    assert sink.count_params() == plain.count_params() + 4
    assert len(sink.get_weights()) == len(plain.get_weights()) + 1
    random = SinkLogitAttention.random(8, 4, 2, rng=np.random.default_rng(0))
    assert not np.any(random.sink_logits) and random.sink_logits.shape == (4,)
    with pytest.raises(ValueError, match=r"sink_logits must have shape \(4,\)"):
        SinkLogitAttention(**plain.kernels_and_biases(), sink_logits=np.zeros(2))
    with pytest.raises(ValueError, match="variant='sink_logit'"):
        SinkLogitAttention.from_keras(type("Built", (), {"built": True, "variant": "gated"})())
