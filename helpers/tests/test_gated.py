"""helpers.attention.gated: o = W_O[(softmax(QK^T/sqrt(d)) V) ⊙ sigmoid(X W_G)], per head and
feature, with the gate taken from a query projection widened as in Qwen3-Next. Float64."""

import numpy as np
import pytest

from helpers.attention import (
    GatedAttention,
    GroupedQueryAttention,
    causal_mask,
    gate_heads,
    grouped_query_attention,
    project_heads,
    split_query_gate,
)
from helpers.positions import rotary_position_embedding

ATOL = 1e-12


def layers(position="none", gate_bias=None, seed=0):
    rng = np.random.default_rng(seed)
    plain = GroupedQueryAttention.random(8, 4, 2, rng=rng, position=position)
    gate_kernel = rng.normal(size=(8, 4, 2))
    bias = rng.normal(size=(4, 2)) if gate_bias is None else gate_bias
    return plain, GatedAttention(**plain.kernels_and_biases(), gate_kernel=gate_kernel,
                                 gate_bias=bias, position=position)


def test_the_gate_multiplies_each_feature_by_its_sigmoid_and_allows_infinities():
    heads = np.random.default_rng(0).normal(size=(2, 3, 4))
    logits = np.random.default_rng(1).normal(size=(2, 3, 4))
    np.testing.assert_allclose(gate_heads(heads, logits), heads / (1 + np.exp(-logits)),
                               rtol=0, atol=ATOL)
    assert np.array_equal(gate_heads(heads, np.full_like(heads, np.inf)), heads)
    assert not np.any(gate_heads(heads, np.full_like(heads, -np.inf)))
    assert gate_heads(heads.astype(np.float32), logits.astype(np.float32)).dtype == np.float32


def test_the_gate_refuses_other_shapes_and_nan():
    with pytest.raises(ValueError, match=r"gate_logits must have the shape of heads_out "
                                         r"\(2, 3, 4\); got shape \(2, 3, 1\)"):
        gate_heads(np.ones((2, 3, 4)), np.ones((2, 3, 1)))
    with pytest.raises(ValueError, match="gate_logits contains NaN"):
        gate_heads(np.ones((1, 1, 2)), [[[0.0, np.nan]]])
    with pytest.raises(ValueError, match="at least 3 axes"):
        gate_heads(np.ones((3, 4)), np.ones((3, 4)))


def test_the_split_is_qwen3_next_view_per_head_then_chunk():
    rng = np.random.default_rng(0)
    d_model, heads, head_dim = 6, 3, 2
    q_proj_weight = rng.normal(size=(heads * head_dim * 2, d_model))   # torch's (out, in)
    x = rng.normal(size=(5, d_model))
    widened = (x @ q_proj_weight.T).reshape(5, heads, head_dim * 2)     # .view(..., -1, 2hd)
    query_states, gate = widened[..., :head_dim], widened[..., head_dim:]  # torch.chunk(2)
    parts = split_query_gate(q_proj_weight.T.reshape(d_model, heads, 2 * head_dim))
    np.testing.assert_allclose(project_heads(x, parts["query_kernel"]),
                               query_states.transpose(1, 0, 2), rtol=0, atol=ATOL)
    np.testing.assert_allclose(project_heads(x, parts["gate_kernel"]),
                               gate.transpose(1, 0, 2), rtol=0, atol=ATOL)
    assert parts["query_bias"] is None and parts["gate_bias"] is None
    bias = split_query_gate(np.zeros((6, 3, 4)), np.arange(12.0).reshape(3, 4))
    assert bias["gate_bias"].tolist() == [[2, 3], [6, 7], [10, 11]]


def test_the_split_refuses_an_odd_width_and_a_wrong_bias():
    with pytest.raises(ValueError, match=r"2 \* head_dim .* got shape \(4, 2, 3\)"):
        split_query_gate(np.zeros((4, 2, 3)))
    with pytest.raises(ValueError, match=r"bias must have shape \(2, 4\)"):
        split_query_gate(np.zeros((4, 2, 4)), np.zeros(8))
    with pytest.raises(ValueError, match="3 axes"):
        split_query_gate(np.zeros((4, 8)))


@pytest.mark.parametrize("position", ["none", "rope", "alibi"])
def test_the_layer_is_the_formula(position):
    plain, gated = layers(position)
    x = np.random.default_rng(3).normal(size=(2, 5, 8))
    out, weights = gated.attend(x, np.arange(5), causal_mask(5))
    _, plain_weights = plain.attend(x, np.arange(5), causal_mask(5))
    np.testing.assert_allclose(weights, plain_weights, rtol=0, atol=ATOL)  # gate after SDPA
    query, (keys, values) = plain._project(x, "query"), plain.keys_values(x)
    if position == "rope":
        query = rotary_position_embedding(query, np.arange(5))
        keys = rotary_position_embedding(keys, np.arange(5))
    if position != "alibi":
        heads, _ = grouped_query_attention(query, keys, values, causal_mask(5))
        gate = 1 / (1 + np.exp(-(project_heads(x, gated.gate_kernel) + gated.gate_bias[:, None])))
        np.testing.assert_allclose(out, plain._output(heads * gate), rtol=0, atol=ATOL)


@pytest.mark.parametrize("position", ["none", "rope"])
def test_a_gate_of_plus_infinity_recovers_ungated_attention(position):
    plain, gated = layers(position, gate_bias=np.full((4, 2), 1e3))   # sigmoid = 1 exactly
    gated.gate_kernel = np.zeros_like(gated.gate_kernel)
    x = np.random.default_rng(4).normal(size=(2, 5, 8))
    assert np.array_equal(gated.attend(x, np.arange(5), causal_mask(5))[0],
                          plain.attend(x, np.arange(5), causal_mask(5))[0])
    _, closed = layers(position, gate_bias=np.full((4, 2), -1e3))
    closed.gate_kernel = np.zeros_like(closed.gate_kernel)
    assert np.allclose(closed(x)[0], plain.output_bias, rtol=0, atol=ATOL)  # heads all shut


def test_the_layer_counts_its_gate_and_refuses_bad_gate_weights():
    plain, gated = layers()
    assert gated.count_params() == plain.count_params() + 8 * 4 * 2 + 4 * 2
    random = GatedAttention.random(8, 4, 2, rng=np.random.default_rng(0))
    assert random.gate_kernel.shape == (8, 4, 2) and not np.any(random.gate_bias)
    weights = plain.kernels_and_biases()
    with pytest.raises(ValueError, match=r"gate_kernel must have shape \(8, 4, 2\)"):
        GatedAttention(**weights, gate_kernel=np.zeros((8, 2, 4)))
    with pytest.raises(ValueError, match=r"gate_bias must have shape \(4, 2\)"):
        GatedAttention(**weights, gate_kernel=np.zeros((8, 4, 2)), gate_bias=np.zeros(8))
    with pytest.raises(ValueError, match="gate_kernel contains NaN or infinity"):
        GatedAttention(**weights, gate_kernel=np.full((8, 4, 2), np.inf))
    with pytest.raises(ValueError, match="variant='gated'"):
        GatedAttention.from_keras(type("Built", (), {"built": True, "variant": "sink_logit"})())
