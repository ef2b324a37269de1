"""Unit tests of helpers.linear_attention: the parallel, recurrent and chunked forms are equal
(linear attention with and without decay, DeltaNet, Gated DeltaNet, KDA), the states carry over,
the known mistakes and the other order are caught, retrieval, costs, the published hybrid
models, and bad input."""

import subprocess
import sys

import numpy as np
import pytest

from helpers import linear_attention as la

CHUNK_SIZES = [1, 2, 3, 5, 8, 16, 40]  # 40 > n; most do not divide n
LENGTHS = [1, 7, 13, 29]
TOL = 1e-10


def inputs(n=13, d_k=5, d_v=4, seed=0, batch=2, heads=3):
    rng = np.random.default_rng(seed)
    q = la.l2_normalize(rng.normal(size=(batch, heads, n, d_k)))
    k = la.l2_normalize(rng.normal(size=(batch, heads, n, d_k)))
    v = rng.normal(size=(batch, heads, n, d_v))
    beta = rng.uniform(0, 2, size=(batch, heads, n))
    g = -rng.uniform(0, 1.5, size=(batch, heads, n))
    s0 = rng.normal(size=(batch, heads, d_v, d_k))
    return q, k, v, beta, g, s0


def assert_equal(a, b):
    (out_a, state_a), (out_b, state_b) = a, b
    assert out_a.shape == out_b.shape and state_a.shape == state_b.shape
    np.testing.assert_allclose(out_a, out_b, rtol=0, atol=TOL)
    np.testing.assert_allclose(state_a, state_b, rtol=0, atol=TOL)


# --- linear attention: three forms ---------------------------------------------------------

@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("decay", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_linear_attention_forms_agree(n, decay, with_state):
    q, k, v, _, g, s0 = inputs(n=n)
    q, k = la.feature_map(q), la.feature_map(k)
    kwargs = dict(log_decay=g if decay else None, initial_state=s0 if with_state else None)
    parallel = la.linear_attention_parallel(q, k, v, **kwargs)
    assert_equal(parallel, la.linear_attention_recurrent(q, k, v, **kwargs))
    for chunk_size in CHUNK_SIZES:
        assert_equal(parallel, la.linear_attention_chunked(q, k, v, chunk_size=chunk_size,
                                                           **kwargs))


def test_linear_attention_is_a_masked_matrix_product():
    q, k, v, *_ = inputs(n=6)
    mask = np.tril(np.ones((6, 6)))
    expected = (q @ np.swapaxes(k, -1, -2) * mask) @ v
    np.testing.assert_allclose(la.linear_attention_parallel(q, k, v)[0], expected, atol=TOL)


def test_linear_attention_state_is_sum_of_outer_products():
    _, k, v, *_ = inputs(n=9)
    state = la.linear_attention_recurrent(k, k, v)[1]
    np.testing.assert_allclose(state, np.swapaxes(v, -1, -2) @ k, atol=TOL)


def test_linear_attention_normaliser_is_one_more_value_column():
    """Appending a value of 1 gives the normaliser z_t . q_t; dividing gives weights that sum
    to 1 (Katharopoulos et al.'s form)."""
    q, k, v, *_ = inputs(n=8)
    q, k = la.feature_map(q), la.feature_map(k)
    augmented = np.concatenate([v, np.ones(v.shape[:-1] + (1,))], axis=-1)
    out = la.linear_attention_chunked(q, k, augmented, chunk_size=3)[0]
    normalised = out[..., :-1] / out[..., -1:]
    scores = q @ np.swapaxes(k, -1, -2) * np.tril(np.ones((8, 8)))
    weights = scores / scores.sum(-1, keepdims=True)
    np.testing.assert_allclose(normalised, weights @ v, atol=TOL)


def test_state_carries_over_between_pieces():
    q, k, v, beta, g, _ = inputs(n=17)
    whole = la.delta_rule_recurrent(q, k, v, beta, log_decay=g)
    first = la.delta_rule_chunked(q[:, :, :10], k[:, :, :10], v[:, :, :10], beta[:, :, :10],
                                  log_decay=g[:, :, :10], chunk_size=4)
    second = la.delta_rule_chunked(q[:, :, 10:], k[:, :, 10:], v[:, :, 10:], beta[:, :, 10:],
                                   log_decay=g[:, :, 10:], initial_state=first[1], chunk_size=3)
    assert_equal(whole, (np.concatenate([first[0], second[0]], axis=2), second[1]))
    lin = la.linear_attention_recurrent(q, k, v, log_decay=g)
    part = la.linear_attention_parallel(q[:, :, :6], k[:, :, :6], v[:, :, :6],
                                        log_decay=g[:, :, :6])
    rest = la.linear_attention_parallel(q[:, :, 6:], k[:, :, 6:], v[:, :, 6:],
                                        log_decay=g[:, :, 6:], initial_state=part[1])
    assert_equal(lin, (np.concatenate([part[0], rest[0]], axis=2), rest[1]))


# --- the delta rule and Gated DeltaNet -----------------------------------------------------

@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_delta_rule_forms_agree(n, gated, with_state):
    q, k, v, beta, g, s0 = inputs(n=n, seed=n)
    kwargs = dict(log_decay=g if gated else None, initial_state=s0 if with_state else None)
    recurrent = la.delta_rule_recurrent(q, k, v, beta, **kwargs)
    assert_equal(recurrent, la.delta_rule_parallel(q, k, v, beta, **kwargs))
    for chunk_size in CHUNK_SIZES:
        assert_equal(recurrent, la.delta_rule_chunked(q, k, v, beta, chunk_size=chunk_size,
                                                      **kwargs))


def test_gated_delta_rule_matches_its_definition_step_by_step():
    """S_t = alpha_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T, written with matrices."""
    q, k, v, beta, g, s0 = inputs(n=5, batch=1, heads=1)
    state, outputs = s0[0, 0], []
    for t in range(5):
        kt, vt = k[0, 0, t], v[0, 0, t]
        projector = np.eye(5) - beta[0, 0, t] * np.outer(kt, kt)
        state = np.exp(g[0, 0, t]) * state @ projector + beta[0, 0, t] * np.outer(vt, kt)
        outputs.append(state @ q[0, 0, t])
    out, final = la.delta_rule_recurrent(q, k, v, beta, log_decay=g, initial_state=s0)
    np.testing.assert_allclose(out[0, 0], np.array(outputs), atol=TOL)
    np.testing.assert_allclose(final[0, 0], state, atol=TOL)


def test_delta_rule_is_one_gradient_step_on_the_regression_loss():
    """S - beta * d/dS (1/2 |S k - v|^2) = S - beta (S k - v) k^T."""
    rng = np.random.default_rng(3)
    state, k, v, beta = rng.normal(size=(4, 5)), la.l2_normalize(rng.normal(size=5)), \
        rng.normal(size=4), 0.7
    gradient = np.outer(state @ k - v, k)
    new = la.delta_rule_recurrent(k[None, None, None], k[None, None, None],
                                  v[None, None, None], np.full((1, 1, 1), beta),
                                  initial_state=state[None, None])[1][0, 0]
    np.testing.assert_allclose(new, state - beta * gradient, atol=TOL)


def test_beta_zero_leaves_state_and_beta_one_stores_exactly():
    q, k, v, _, _, s0 = inputs(n=4)
    out, state = la.delta_rule_recurrent(q, k, v, np.zeros(k.shape[:3]), initial_state=s0)
    np.testing.assert_allclose(state, s0, atol=TOL)
    k = la.l2_normalize(k, eps=0.0)
    state = la.delta_rule_recurrent(k, k, v, np.ones(k.shape[:3]))[1]
    read = state @ k[:, :, -1, :, None]  # the last key returns the last value exactly
    np.testing.assert_allclose(read[..., 0], v[:, :, -1], atol=TOL)


def test_other_order_is_a_different_rule():
    q, k, v, beta, g, s0 = inputs(n=9)
    ours = la.delta_rule_recurrent(q, k, v, beta, log_decay=g, initial_state=s0)
    other = la.delta_rule_recurrent(q, k, v, beta, log_decay=g, initial_state=s0,
                                    order="correct_first")
    assert np.max(np.abs(ours[0] - other[0])) > 0.1
    # ...but without a decay the two orders coincide
    same = [la.delta_rule_recurrent(q, k, v, beta, order=o) for o in ("decay_first",
                                                                       "correct_first")]
    assert_equal(*same)


MISTAKEN_DELTA_CHUNKS = [la._delta_chunk_plain_mask, la._delta_chunk_undecayed_keys]


@pytest.mark.parametrize("step", MISTAKEN_DELTA_CHUNKS)
def test_known_mistakes_break_the_equality(step):
    q, k, v, beta, g, s0 = inputs(n=13)
    recurrent = la.delta_rule_recurrent(q, k, v, beta, log_decay=g, initial_state=s0)
    wrong = la._by_chunks(step, (q, k, v, beta, g), s0, 4)
    assert np.max(np.abs(recurrent[0] - wrong[0])) > 0.1
    # without a decay there is nothing to get wrong: the mistake is invisible
    plain = la.delta_rule_recurrent(q, k, v, beta, initial_state=s0)
    assert_equal(plain, la._by_chunks(step, (q, k, v, beta, np.zeros_like(g)), s0, 4))


def test_causal_mask_mistake_breaks_linear_attention_with_decay():
    q, k, v, _, g, s0 = inputs(n=10)
    good = la.linear_attention_parallel(q, k, v, log_decay=g)[0]
    bad = la._by_chunks(la._linear_chunk_plain_mask, (q, k, v, g), np.zeros_like(s0), 4)[0]
    assert np.max(np.abs(good - bad)) > 0.1
    hidden = la._by_chunks(la._linear_chunk_plain_mask, (q, k, v, np.zeros_like(g)),
                           np.zeros_like(s0), 4)[0]
    np.testing.assert_allclose(hidden, la.linear_attention_parallel(q, k, v)[0], atol=TOL)


def test_the_public_chunked_forms_take_no_mistake_flag():
    q, k, v, beta, *_ = inputs(n=4)
    with pytest.raises(TypeError, match="mistake"):
        la.linear_attention_chunked(q, k, v, mistake="causal_mask")
    with pytest.raises(TypeError, match="mistake"):
        la.delta_rule_chunked(q, k, v, beta, mistake="decay_on_keys")


def test_ut_transform_inverts_the_unit_lower_triangular_system():
    rng = np.random.default_rng(4)
    a = np.tril(rng.normal(size=(2, 3, 6, 6)), -1)
    t = la._ut_transform(a)
    np.testing.assert_allclose((np.eye(6) + a) @ t, np.broadcast_to(np.eye(6), a.shape),
                               atol=1e-12)
    np.testing.assert_allclose(t, np.linalg.inv(np.eye(6) + a), atol=1e-10)
    assert np.all(np.triu(t, 1) == 0) and np.all(np.diagonal(t, axis1=-2, axis2=-1) == 1)


def test_wy_representation_of_a_chunk():
    """The product of (I - beta_j k_j k_j^T) over a chunk is I - W^T K (WY representation)."""
    _, k, _, beta, *_ = inputs(n=6, batch=1, heads=1)
    k, b = k[0, 0], beta[0, 0]
    product = np.eye(5)
    for j in range(6):
        product = product @ (np.eye(5) - b[j] * np.outer(k[j], k[j]))
    t = la._ut_transform(b[:, None] * np.tril(k @ k.T, -1))
    w = t @ (b[:, None] * k)
    np.testing.assert_allclose(product, np.eye(5) - w.T @ k, atol=TOL)


# --- Kimi Delta Attention ------------------------------------------------------------------

def channel_gates(n=13, d_k=5, seed=0, batch=2, heads=3):
    return -np.random.default_rng(seed + 100).uniform(0, 1.5, size=(batch, heads, n, d_k))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("with_state", [False, True])
def test_kda_forms_agree(n, with_state):
    q, k, v, beta, _, s0 = inputs(n=n, seed=n)
    g = channel_gates(n=n, seed=n)
    state = s0 if with_state else None
    recurrent = la.kda_recurrent(q, k, v, beta, g, initial_state=state)
    for chunk_size in CHUNK_SIZES:
        assert_equal(recurrent, la.kda_chunked(q, k, v, beta, g, initial_state=state,
                                               chunk_size=chunk_size))


def test_kda_matches_its_definition_step_by_step():
    """S_t = S_{t-1} Diag(alpha_t) (I - beta_t k_t k_t^T) + beta_t v_t k_t^T."""
    q, k, v, beta, _, s0 = inputs(n=5, batch=1, heads=1)
    g = channel_gates(n=5, batch=1, heads=1)
    state, outputs = s0[0, 0], []
    for t in range(5):
        kt = k[0, 0, t]
        projector = np.eye(5) - beta[0, 0, t] * np.outer(kt, kt)
        state = state @ np.diag(np.exp(g[0, 0, t])) @ projector \
            + beta[0, 0, t] * np.outer(v[0, 0, t], kt)
        outputs.append(state @ q[0, 0, t])
    out, final = la.kda_recurrent(q, k, v, beta, g, initial_state=s0)
    np.testing.assert_allclose(out[0, 0], np.array(outputs), atol=TOL)
    np.testing.assert_allclose(final[0, 0], state, atol=TOL)


def test_kda_with_one_gate_for_every_channel_is_gated_deltanet():
    q, k, v, beta, g, s0 = inputs(n=11)
    same = np.repeat(g[..., None], k.shape[-1], axis=-1)
    gated = la.delta_rule_recurrent(q, k, v, beta, log_decay=g, initial_state=s0)
    assert_equal(gated, la.kda_recurrent(q, k, v, beta, same, initial_state=s0))
    assert_equal(gated, la.kda_chunked(q, k, v, beta, same, initial_state=s0, chunk_size=4))
    different = la.kda_recurrent(q, k, v, beta, channel_gates(n=11), initial_state=s0)
    assert np.max(np.abs(gated[0] - different[0])) > 0.1


def test_kda_decays_each_column_of_the_state_by_its_own_gate():
    _, k, v, _, _, s0 = inputs(n=1)
    g = channel_gates(n=1)
    state = la.kda_recurrent(k, k, v, np.zeros(k.shape[:3]), g, initial_state=s0)[1]
    np.testing.assert_allclose(state, s0 * np.exp(g[:, :, 0, None, :]), atol=TOL)


def test_kda_state_carries_over_and_strong_gates_stay_finite():
    q, k, v, beta, _, _ = inputs(n=17)
    g = channel_gates(n=17)
    whole = la.kda_recurrent(q, k, v, beta, g)
    first = la.kda_chunked(q[:, :, :9], k[:, :, :9], v[:, :, :9], beta[:, :, :9],
                           g[:, :, :9], chunk_size=4)
    second = la.kda_chunked(q[:, :, 9:], k[:, :, 9:], v[:, :, 9:], beta[:, :, 9:],
                            g[:, :, 9:], initial_state=first[1], chunk_size=3)
    assert_equal(whole, (np.concatenate([first[0], second[0]], axis=2), second[1]))
    strong = np.full(g.shape, -40.0)
    assert all(np.all(np.isfinite(x)) for x in la.kda_chunked(q, k, v, beta, strong,
                                                              chunk_size=17))


def test_kda_checks_its_gate():
    q, k, v, beta, g, _ = inputs(n=4)
    with pytest.raises(ValueError, match=r"log_decay must have the keys' shape"):
        la.kda_recurrent(q, k, v, beta, g[..., None])
    with pytest.raises(ValueError, match=r"log_decay must have shape \(batch, heads, n, d_k\)"):
        la.kda_chunked(q, k, v, beta, g)
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.kda_recurrent(q, k, v, beta, -channel_gates(n=4))
    with pytest.raises(ValueError, match=r"beta must lie in \[0, 2\]"):
        la.kda_chunked(q, k, v, beta + 2.5, channel_gates(n=4))


def test_float32_inputs_give_float64_results_and_no_nan_with_strong_decay():
    q, k, v, beta, _, _ = inputs(n=30)
    g = np.full(beta.shape, -40.0)  # alpha ~ 4e-18: exp(G_i - G_j) underflows, must be 0
    out = la.linear_attention_parallel(q.astype(np.float32), k, v, log_decay=g)[0]
    assert out.dtype == np.float64 and np.all(np.isfinite(out))
    for chunk_size in (7, 30):
        chunked = la.delta_rule_chunked(q, k, v, beta, log_decay=g, chunk_size=chunk_size)
        lin = la.linear_attention_chunked(q, k, v, log_decay=g, chunk_size=chunk_size)
        assert all(np.all(np.isfinite(x)) for x in (*chunked, *lin))


# --- bad input -----------------------------------------------------------------------------

def test_bad_shapes_raise_value_error():
    q, k, v, beta, g, s0 = inputs(n=6)
    with pytest.raises(ValueError, match=r"query must have shape \(batch, heads, n, d_k\)"):
        la.linear_attention_parallel(q[0], k, v)
    with pytest.raises(ValueError, match="query and key must have the same shape"):
        la.linear_attention_recurrent(q[..., :3], k, v)
    with pytest.raises(ValueError, match=r"axes \(batch, heads, n\)"):
        la.linear_attention_chunked(q, k, v[:, :, :5])
    with pytest.raises(ValueError, match=r"beta must have shape \(batch, heads, n\)"):
        la.delta_rule_recurrent(q, k, v, beta[:, :, :5])
    with pytest.raises(ValueError, match="log_decay must have shape"):
        la.delta_rule_chunked(q, k, v, beta, log_decay=g[..., None])
    with pytest.raises(ValueError, match=r"initial_state must have shape .*\(2, 3, 4, 5\)"):
        la.delta_rule_parallel(q, k, v, beta, initial_state=s0[..., :4])


@pytest.mark.parametrize("bad", [-0.01, 2.01])
def test_beta_outside_zero_two_raises(bad):
    q, k, v, beta, *_ = inputs(n=4)
    beta = beta.copy()
    beta[0, 0, 1] = bad
    for rule in (la.delta_rule_recurrent, la.delta_rule_chunked, la.delta_rule_parallel):
        with pytest.raises(ValueError, match=r"beta must lie in \[0, 2\]"):
            rule(q, k, v, beta)


def test_beta_at_the_bounds_is_accepted():
    q, k, v, beta, *_ = inputs(n=4)
    for edge in (0.0, 2.0):
        assert_equal(la.delta_rule_recurrent(q, k, v, np.full(beta.shape, edge)),
                     la.delta_rule_chunked(q, k, v, np.full(beta.shape, edge), chunk_size=3))


def test_positive_log_decay_and_bad_options_raise():
    q, k, v, beta, g, _ = inputs(n=4)
    with pytest.raises(ValueError, match="log_decay must be <= 0"):
        la.linear_attention_parallel(q, k, v, log_decay=-g)
    with pytest.raises(ValueError, match="chunk_size must be an integer in"):
        la.delta_rule_chunked(q, k, v, beta, chunk_size=0)
    with pytest.raises(ValueError, match="order must be one of"):
        la.delta_rule_recurrent(q, k, v, beta, order="decay_last")
    with pytest.raises(ValueError, match="contains NaN"):
        la.delta_rule_recurrent(q, k, v, np.full(beta.shape, np.nan))


# --- retrieval -----------------------------------------------------------------------------

def test_rewritten_key_returns_a_blend_under_linear_attention_and_the_last_value_under_delta():
    rng = np.random.default_rng(0)
    assert la.retrieval_error(5, rule="delta", num_keys=1, rng=rng) < 1e-20
    assert la.retrieval_error(5, rule="linear", num_keys=1, rng=rng) > 1.0


def test_retrieval_error_grows_with_pairs_and_delta_stays_below_linear():
    errors = {rule: [la.retrieval_error(n, rule=rule, num_keys=16,
                                        rng=np.random.default_rng(1)) for n in (8, 32, 128)]
              for rule in ("linear", "delta")}
    assert errors["linear"][0] < errors["linear"][1] < errors["linear"][2]
    assert all(d < lin for d, lin in zip(errors["delta"], errors["linear"], strict=True))
    assert errors["linear"][-1] > 10 * errors["delta"][-1]


def test_a_single_unit_key_is_stored_exactly_by_both_rules():
    for rule in ("linear", "delta"):
        assert la.retrieval_error(1, rule=rule, dim=4, rng=np.random.default_rng(0)) < 1e-20


def test_retrieval_error_checks_its_arguments():
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        la.retrieval_error(3, rule="delta", rng=0)
    with pytest.raises(ValueError, match="rule must be one of"):
        la.retrieval_error(3, rule="hebb", rng=np.random.default_rng(0))


# --- cost ------------------------------------------------------------------------------------

def test_decode_flops_grow_with_the_cache_only_for_softmax():
    flops = [la.decode_flops(m, kind="softmax", d_k=64, d_v=64) for m in (1, 100, 1000)]
    assert flops == [256, 25_600, 256_000]
    state = {la.decode_flops(m, kind="gated_delta", d_k=64, d_v=64) for m in (1, 10**6)}
    assert state == {7 * 64 * 64}
    assert la.decode_flops(5, kind="linear", d_k=8, d_v=4) == 128


def test_decode_bytes_count_the_same_m_and_take_the_same_kinds():
    assert la.decode_bytes(10, kind="softmax", d_k=4, d_v=4, bytes_per_number=4) == 320
    for kind in ("linear", "gated_delta"):
        assert la.decode_bytes(10**6, kind=kind, d_k=4, d_v=8) == 64
    # both functions count m keys: FLOPs and bytes of softmax are 2 and 1 per number cached
    m, head = 77, dict(d_k=16, d_v=8)
    assert la.decode_flops(m, kind="softmax", **head) == \
        2 * la.decode_bytes(m, kind="softmax", bytes_per_number=1, **head)


def test_decode_costs_check_their_arguments():
    with pytest.raises(ValueError, match="cached_tokens must be an integer in"):
        la.decode_bytes(0, kind="gated_delta", d_k=4, d_v=4)
    with pytest.raises(ValueError, match="kind must be one of"):
        la.decode_flops(1, kind="mamba", d_k=4, d_v=4)
    with pytest.raises(ValueError, match="kind must be one of"):
        la.decode_bytes(1, kind="state", d_k=4, d_v=4)
    with pytest.raises(ValueError, match="bytes_per_number must be an integer in"):
        la.decode_bytes(1, kind="softmax", d_k=4, d_v=4, bytes_per_number=0)


# --- published hybrid models ---------------------------------------------------------------

def test_published_hybrids_have_their_released_layouts():
    qwen, kimi = la.PUBLISHED["Qwen3-Next-80B-A3B"], la.PUBLISHED["Kimi-Linear-48B-A3B"]
    assert (qwen.kind, len(qwen.global_layers), qwen.linear_layers) == ("GQA", 12, 36)
    assert qwen.global_layers == tuple(i for i in range(1, 49) if i % 4 == 0)
    assert (kimi.kind, len(kimi.global_layers), kimi.linear_layers) == ("MLA", 7, 20)
    assert qwen.cache_numbers_per_token == 1024 and kimi.cache_numbers_per_token == 576
    assert all("config.json" in c.source for c in la.PUBLISHED.values())


def test_hybrid_memory_counts_caches_and_states():
    qwen, kimi = la.PUBLISHED["Qwen3-Next-80B-A3B"], la.PUBLISHED["Kimi-Linear-48B-A3B"]
    assert la.hybrid_memory(qwen, 2**20) == (24 * 2**30, 36 * 2**20)
    assert la.hybrid_memory(qwen, 2**20, all_global=True) == (96 * 2**30, 0)
    assert la.hybrid_memory(kimi, 1) == (7 * 576 * 2, 20 * 32 * 128 * 128 * 2)
    assert la.hybrid_memory(kimi, 0, bytes_per_number=4)[1] == 40 * 2**20


def test_hybrid_config_rejects_bad_layouts():
    with pytest.raises(ValueError, match=r"global_layers must be an integer in \[1, 4\]"):
        la.HybridConfig("x", 4, (5,), 1, 2, 2, num_kv_heads=1, head_dim=2)
    with pytest.raises(ValueError, match="must not repeat"):
        la.HybridConfig("x", 4, (2, 2), 1, 2, 2, num_kv_heads=1, head_dim=2)
    with pytest.raises(ValueError, match="grouped-query .* or latent"):
        la.HybridConfig("x", 4, (4,), 1, 2, 2, num_kv_heads=1, head_dim=2, latent_dim=8)
    with pytest.raises(TypeError, match="config must be a HybridConfig"):
        la.hybrid_memory({"num_layers": 4}, 10)


def test_module_does_not_import_tensorflow():
    code = "import sys, helpers.linear_attention; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"


# --- token mixer -----------------------------------------------------------------------------

def test_token_mixer_is_causal_and_its_inputs_are_in_range():
    rng = np.random.default_rng(8)
    mixer = la.TokenMixer.random(8, num_heads=2, rule="gated_delta", rng=rng, chunk_size=3)
    x = rng.normal(size=(2, 10, 8))
    q, k, v, beta, g = mixer.inputs(x)
    assert q.shape == (2, 2, 10, 4) and beta.shape == g.shape == (2, 2, 10)
    np.testing.assert_allclose(np.linalg.norm(k, axis=-1), 1.0, atol=1e-4)
    assert np.all((beta > 0) & (beta < 1)) and np.all(g < 0)
    changed = x.copy()
    changed[:, 6:] += 1.0
    first, second = mixer(x), mixer(changed)
    np.testing.assert_allclose(first[:, :6], second[:, :6], atol=1e-12)
    assert np.abs(first[:, 6:] - second[:, 6:]).max() > 1e-3


def test_token_mixer_rejects_bad_weights():
    weights = dict.fromkeys(la.MIXER_WEIGHTS["delta"], np.ones((6, 6)))
    with pytest.raises(ValueError, match="num_heads=4 must divide the query width 6"):
        la.TokenMixer(weights, num_heads=4, rule="delta")
    with pytest.raises(ValueError, match="missing decay, a_log, dt_bias"):
        la.TokenMixer(weights, num_heads=2, rule="gated_delta")
    with pytest.raises(ValueError, match="rule must be one of"):
        la.TokenMixer(weights, num_heads=2, rule="softmax")


def test_gate_starts_close_to_one():
    rng = np.random.default_rng(10)
    mixer = la.TokenMixer.random(8, num_heads=2, rule="gated_delta", rng=rng)
    alpha = np.exp(mixer.inputs(np.zeros((1, 3, 8)))[4])
    np.testing.assert_allclose(alpha, np.exp(-0.01), rtol=1e-12)
    plain = la.TokenMixer.random(8, num_heads=2, rule="linear", rng=rng)
    assert set(plain.weights) == {"query", "key", "value", "output"}
    assert plain.inputs(np.ones((1, 3, 8)))[3:] == (None, None)
