"""Linear attention, the delta rule, Gated DeltaNet and KDA in NumPy, each in equal forms.

Causal linear attention keeps one matrix, the state ``S`` of shape (d_v, d_k) per head,
instead of the keys and values of every past token:

* parallel form: ``O = (Q K^T * D) V``, a masked matrix product (``D`` the causal mask,
  carrying the decay ratios when there is a decay);
* recurrent form: ``S_t = alpha_t S_{t-1} + v_t k_t^T``, ``o_t = S_t q_t``;
* chunked form: the parallel form inside each chunk of ``chunk_size`` tokens, the recurrent
  form from chunk to chunk.

The delta rule (DeltaNet) and Gated DeltaNet change the write: the state first reads what it
holds for ``k_t`` and replaces it,
``S_t = alpha_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T``. Its chunked form solves
a small unit lower-triangular system per chunk by forward substitution (the UT transform, which
gives the WY representation of the products of ``I - beta k k^T``). Kimi Delta Attention (KDA)
gives the gate one value per key channel, ``S_t = S_{t-1} Diag(alpha_t) (I - beta_t k_t k_t^T)
+ beta_t v_t k_t^T``, in the same two forms.

Shapes follow the rest of the course: ``(batch, heads, n, d)`` for queries, keys and values;
``(batch, heads, n)`` for the per-token scalars ``beta`` and ``log_decay`` (``g_t = log
alpha_t <= 0``, as the released Gated DeltaNet code passes it; KDA's ``log_decay`` is
``(batch, heads, n, d_k)``); ``(batch, heads, d_v, d_k)`` for the state. Every function
returns the output and the final state, and takes an optional initial state, so a long
sequence can be processed in pieces.

The rules do not normalise queries and keys and do not scale by ``1/sqrt(d_k)``; the model
around them does (Gated DeltaNet L2-normalises ``q`` and ``k``). Also here: what one generated
token costs (:func:`decode_flops`, :func:`decode_bytes`) and the memory of two published hybrid
models (:class:`HybridConfig`, :data:`PUBLISHED`, :func:`hybrid_memory`). Taught in chapter 13.
Imports only NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import float_array, generator, integer, one_of, positive_int, same_size

__all__ = ["feature_map", "l2_normalize", "linear_attention_parallel",
           "linear_attention_recurrent", "linear_attention_chunked",
           "delta_rule_recurrent", "delta_rule_chunked", "delta_rule_parallel",
           "kda_recurrent", "kda_chunked", "TokenMixer", "retrieval_error", "decode_flops",
           "decode_bytes", "HybridConfig", "PUBLISHED", "hybrid_memory"]

RULES = ("linear", "delta", "gated_delta")
MIXER_WEIGHTS = {"linear": ("query", "key", "value", "output"),
                 "delta": ("query", "key", "value", "beta", "output"),
                 "gated_delta": ("query", "key", "value", "beta", "decay", "a_log", "dt_bias",
                                 "output")}
DT_BIAS = float(np.log(np.expm1(0.01)))  # softplus(DT_BIAS) = 0.01: the gate starts near 1


# --- input checks ----------------------------------------------------------------------------

def _inputs(query, key, value, *, log_decay=None, beta=None, initial_state=None):
    """Checked float64-compatible arrays: q, k, v, g (zeros if None), beta, state."""
    q = float_array(query, "query", ndim=4, axes="(batch, heads, n, d_k)")
    k = float_array(key, "key", ndim=4, axes="(batch, heads, n, d_k)")
    v = float_array(value, "value", ndim=4, axes="(batch, heads, n, d_v)")
    if q.shape != k.shape:
        raise ValueError(f"query and key must have the same shape (batch, heads, n, d_k); "
                         f"got query {q.shape}, key {k.shape}")
    same_size({"key": k.shape[:3], "value": v.shape[:3]}, "axes (batch, heads, n)")
    g = np.zeros(k.shape[:3]) if log_decay is None else _per_token(log_decay, "log_decay", k)
    if np.any(g > 0):
        raise ValueError(f"log_decay must be <= 0 everywhere (alpha = exp(log_decay) in (0, 1]); "
                         f"got a maximum of {float(g.max())!r}")
    b = None if beta is None else _per_token(beta, "beta", k)
    if b is not None and (np.any(b < 0) or np.any(b > 2)):
        raise ValueError(f"beta must lie in [0, 2] (the step size of the delta rule); got "
                         f"entries from {float(b.min())!r} to {float(b.max())!r}")
    batch, heads, _, d_k = k.shape
    shape = (batch, heads, v.shape[-1], d_k)
    s = np.zeros(shape) if initial_state is None else float_array(
        initial_state, "initial_state", ndim=4, axes="(batch, heads, d_v, d_k)")
    if s.shape != shape:
        raise ValueError(f"initial_state must have shape (batch, heads, d_v, d_k) = {shape}; "
                         f"got {s.shape}")
    return q, k, v, g, b, s


def _per_token(x, name: str, key: np.ndarray) -> np.ndarray:
    arr = float_array(x, name, ndim=3, axes="(batch, heads, n)")
    if arr.shape != key.shape[:3]:
        raise ValueError(f"{name} must have shape (batch, heads, n) = {key.shape[:3]}; "
                         f"got {arr.shape}")
    return arr


# --- the model's side: feature map and normalisation --------------------------------------

def feature_map(x) -> np.ndarray:
    """The feature map of Katharopoulos et al. (2020): ``elu(x) + 1``, positive everywhere.

    Parameters
    ----------
    x : array_like, shape (...), real

    Returns
    -------
    numpy.ndarray, same shape, floating
        ``x + 1`` where ``x > 0``, ``exp(x)`` elsewhere; every entry is > 0, so dot products
        of mapped queries and keys are positive, as softmax's ``exp`` scores are.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not an array of finite real numbers.

    Notes
    -----
    Katharopoulos et al. (2020), "Transformers are RNNs", section 3.2.1. Taught in chapter 13.

    Examples
    --------
    >>> feature_map([-1.0, 0.0, 2.0]).round(3)
    array([0.368, 1.   , 3.   ])
    """
    x = float_array(x, "x")
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def l2_normalize(x, eps: float = 1e-6) -> np.ndarray:
    """``x / sqrt(sum(x**2) + eps)`` along the last axis, as Gated DeltaNet does to q and k.

    Parameters
    ----------
    x : array_like, shape (..., d), real
    eps : float, default 1e-6

    Returns
    -------
    numpy.ndarray, shape (..., d), floating
        Rows of length just under 1 (exactly ``sqrt(|x|^2 / (|x|^2 + eps))``).

    Notes
    -----
    With ``|k| <= 1`` and ``beta`` in [0, 2], ``I - beta k k^T`` has eigenvalues in [-1, 1], so
    the delta rule's state cannot grow without bound (Yang et al. 2024, section 3). Taught in
    chapter 13.

    Examples
    --------
    >>> l2_normalize([[3.0, 4.0]], eps=0.0)
    array([[0.6, 0.8]])
    """
    x = float_array(x, "x", min_rank=1, axes="(..., d)")
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


# --- causal linear attention, with an optional scalar decay -------------------------------

def _decay_mask(g: np.ndarray) -> np.ndarray:
    """(..., n, n): ``exp(G_i - G_j)`` for ``j <= i`` (G the cumulative log decay), else 0."""
    cum = np.cumsum(g, axis=-1)
    diff = cum[..., :, None] - cum[..., None, :]
    causal = np.tril(np.ones((g.shape[-1],) * 2, dtype=bool))
    return np.exp(np.where(causal, diff, -np.inf))


def linear_attention_parallel(query, key, value, *, log_decay=None,
                              initial_state=None):
    """Causal linear attention as one masked matrix product: ``O = (Q K^T * D) V``.

    Parameters
    ----------
    query, key : array_like, shape (batch, heads, n, d_k), real
        Already passed through the model's feature map (e.g. :func:`feature_map`).
    value : array_like, shape (batch, heads, n, d_v), real
    log_decay : array_like, shape (batch, heads, n), real <= 0, optional
        ``g_t = log alpha_t``; ``None`` means no decay (``alpha_t = 1``).
    initial_state : array_like, shape (batch, heads, d_v, d_k), optional
        The state before the first token (zeros if ``None``).

    Returns
    -------
    output : numpy.ndarray, shape (batch, heads, n, d_v), float64
        ``o_i = Gamma_i S_0 q_i + sum_{j <= i} exp(G_i - G_j) (q_i . k_j) v_j``, with
        ``G_i = g_1 + ... + g_i`` and ``Gamma_i = exp(G_i)``.
    state : numpy.ndarray, shape (batch, heads, d_v, d_k), float64
        The state after the last token, equal to the recurrent form's.

    Raises
    ------
    ValueError
        If an array has the wrong number of axes or shapes disagree, or ``log_decay > 0``.

    Notes
    -----
    Katharopoulos et al. (2020), equation (6) without the normaliser; with the decay, the
    parallel form of RetNet (Sun et al. 2023, equation 5) and Mamba-2's masked form (Dao and
    Gu 2024, the "1-semiseparable" mask). Taught in chapter 13.

    Examples
    --------
    >>> q = k = np.ones((1, 1, 3, 1)); v = np.arange(1.0, 4.0).reshape(1, 1, 3, 1)
    >>> linear_attention_parallel(q, k, v)[0].ravel()  # running sums of v
    array([1., 3., 6.])
    """
    q, k, v, g, _, s0 = _inputs(query, key, value, log_decay=log_decay,
                                initial_state=initial_state)
    mask = _decay_mask(g)
    output = (q @ np.swapaxes(k, -1, -2) * mask) @ v
    gamma = np.exp(np.cumsum(g, axis=-1))
    output = output + gamma[..., None] * (q @ np.swapaxes(s0, -1, -2))
    # exp(G_n - G_j): how much of token j the final state keeps
    last = mask[..., -1, :]
    state = (gamma[..., -1, None, None] * s0
             + np.swapaxes(v * last[..., None], -1, -2) @ k)
    return output, state


def linear_attention_recurrent(query, key, value, *, log_decay=None,
                               initial_state=None):
    """Causal linear attention as a recurrence: ``S_t = alpha_t S_{t-1} + v_t k_t^T``.

    The output is ``o_t = S_t q_t``. Arguments and returns as in
    :func:`linear_attention_parallel`; this form keeps one (d_v, d_k) matrix per head
    instead of every past key and value.

    Raises
    ------
    ValueError
        As :func:`linear_attention_parallel`.

    Notes
    -----
    Katharopoulos et al. (2020), equations (18)-(20). Taught in chapter 13.

    Examples
    --------
    >>> q = k = np.ones((1, 1, 3, 1)); v = np.arange(1.0, 4.0).reshape(1, 1, 3, 1)
    >>> output, state = linear_attention_recurrent(q, k, v, log_decay=np.full((1, 1, 3), -1.0))
    >>> output.ravel().round(3)
    array([1.   , 2.368, 3.871])
    """
    q, k, v, g, _, state = _inputs(query, key, value, log_decay=log_decay,
                                   initial_state=initial_state)
    outputs = []
    for t in range(q.shape[2]):
        write = v[:, :, t, :, None] * k[:, :, t, None, :]  # v_t k_t^T
        state = np.exp(g[:, :, t, None, None]) * state + write
        outputs.append(state @ q[:, :, t, :, None])
    return np.concatenate(outputs, axis=-1).swapaxes(-1, -2), state


def _chunks(n: int, chunk_size) -> list[slice]:
    chunk_size = positive_int(chunk_size, "chunk_size")
    return [slice(i, min(i + chunk_size, n)) for i in range(0, n, chunk_size)]


def _by_chunks(step, arrays, state, chunk_size):
    """Run ``step(*pieces, state) -> (output, state)`` on each chunk of the arrays (cut along
    the tokens, axis 2), passing the state on; the outputs joined, and the last state."""
    outputs = []
    for part in _chunks(arrays[0].shape[2], chunk_size):
        out, state = step(*(x[:, :, part] for x in arrays), state)
        outputs.append(out)
    return np.concatenate(outputs, axis=2), state


def linear_attention_chunked(query, key, value, *, log_decay=None, initial_state=None,
                             chunk_size: int = 16):
    """Causal linear attention by chunks: parallel inside a chunk, recurrent between chunks.

    Parameters
    ----------
    query, key, value, log_decay, initial_state
        As in :func:`linear_attention_parallel`.
    chunk_size : int, default 16
        Tokens per chunk, at least 1; the last chunk may be shorter.

    Returns
    -------
    output, state
        As in :func:`linear_attention_parallel`, equal to it up to rounding.

    Raises
    ------
    ValueError
        As :func:`linear_attention_parallel`; also if ``chunk_size < 1``.

    Notes
    -----
    Yang et al. (2024), "Gated Linear Attention Transformers with Hardware-Efficient
    Training", section 3.2 (the chunkwise form). Taught in chapter 13.

    Examples
    --------
    >>> q = k = np.ones((1, 1, 5, 1)); v = np.ones((1, 1, 5, 1))
    >>> linear_attention_chunked(q, k, v, chunk_size=2)[0].ravel()
    array([1., 2., 3., 4., 5.])
    """
    q, k, v, g, _, state = _inputs(query, key, value, log_decay=log_decay,
                                   initial_state=initial_state)
    return _by_chunks(_linear_chunk, (q, k, v, g), state, chunk_size)


def _linear_chunk(q, k, v, g, state):
    """One chunk of linear attention: the writes are the values themselves."""
    return _read_and_pass_on(q, k, g, _decay_mask(g), v, state)


def _read_and_pass_on(q, k, g, mask, writes, state):
    """One chunk: read the incoming state, attend inside the chunk through ``mask``, pass the
    state on with ``writes`` (one row per token) written under the keys."""
    cum = np.cumsum(g, axis=-1)
    gamma = np.exp(cum)  # decay from the chunk's start to each token
    inter = gamma[..., None] * (q @ np.swapaxes(state, -1, -2))
    intra = (q @ np.swapaxes(k, -1, -2) * mask) @ writes
    keep = np.exp(cum[..., -1:] - cum)  # exp(G_C - G_j)
    state = gamma[..., -1, None, None] * state \
        + np.swapaxes(writes * keep[..., None], -1, -2) @ k
    return inter + intra, state


# --- the delta rule and Gated DeltaNet --------------------------------------------------

def delta_rule_recurrent(query, key, value, beta, *, log_decay=None,
                         initial_state=None, order: str = "decay_first"):
    """The (gated) delta rule, one token at a time.

    ``S_t = alpha_t S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T`` and ``o_t = S_t q_t``:
    decay the state, read what it holds for ``k_t``, move that read towards ``v_t`` by a step
    ``beta_t``. Without ``log_decay`` this is DeltaNet, with it Gated DeltaNet.

    Parameters
    ----------
    query, key : array_like, shape (batch, heads, n, d_k), real
        L2-normalised by the model (:func:`l2_normalize`); the rule does not normalise.
    value : array_like, shape (batch, heads, n, d_v), real
    beta : array_like, shape (batch, heads, n), real in [0, 2]
        The writing strength (a sigmoid of a projection in the models).
    log_decay : array_like, shape (batch, heads, n), real <= 0, optional
        ``g_t = log alpha_t``; ``None`` means ``alpha_t = 1`` (DeltaNet).
    initial_state : array_like, shape (batch, heads, d_v, d_k), optional
    order : {"decay_first", "correct_first"}, default "decay_first"
        ``"decay_first"`` is Gated DeltaNet. ``"correct_first"`` is a different rule,
        ``S_t = alpha_t [S_{t-1} (I - beta_t k_t k_t^T) + beta_t v_t k_t^T]``, which also
        decays the value just written; it is here to show that the order matters.

    Returns
    -------
    output : numpy.ndarray, shape (batch, heads, n, d_v), float64
    state : numpy.ndarray, shape (batch, heads, d_v, d_k), float64

    Raises
    ------
    ValueError
        If shapes disagree, ``beta`` leaves [0, 2], ``log_decay > 0``, or ``order`` is unknown.

    Notes
    -----
    Schlag et al. (2021), equation (23); Yang et al. (2024), "Parallelizing Linear
    Transformers with the Delta Rule", equation (1); Yang, Kautz and Hatamizadeh (2025),
    "Gated Delta Networks", equation (10). Taught in chapter 13.

    Examples
    --------
    >>> k = np.ones((1, 1, 2, 1)); v = np.array([1.0, 5.0]).reshape(1, 1, 2, 1)
    >>> output, state = delta_rule_recurrent(k, k, v, np.ones((1, 1, 2)))
    >>> output.ravel()  # the second write replaces the first instead of adding to it
    array([1., 5.])
    """
    q, k, v, g, b, state = _inputs(query, key, value, log_decay=log_decay, beta=beta,
                                   initial_state=initial_state)
    one_of(order, "order", ("decay_first", "correct_first"))
    outputs = []
    for t in range(q.shape[2]):
        alpha = np.exp(g[:, :, t, None, None])
        if order == "decay_first":
            state = alpha * state
        read = state @ k[:, :, t, :, None]  # what the state holds for k_t
        error = v[:, :, t, :, None] - read
        state = state + b[:, :, t, None, None] * error * k[:, :, t, None, :]
        if order == "correct_first":
            state = alpha * state
        outputs.append(state @ q[:, :, t, :, None])
    return np.concatenate(outputs, axis=-1).swapaxes(-1, -2), state


def _ut_transform(a):
    """``T = (I + A)^{-1}`` for a strictly lower-triangular ``A`` (..., C, C), by forward
    substitution: row i of ``(I + A) T = I`` reads ``T_i = e_i - sum_{j<i} A_ij T_j``, so each
    row follows from the rows above it."""
    size = a.shape[-1]
    t = np.broadcast_to(np.eye(size), a.shape).copy()
    for i in range(1, size):
        t[..., i, :] -= (a[..., i, None, :i] @ t[..., :i, :])[..., 0, :]
    return t


def _corrected_writes(k, v, b, mask, decayed_keys, state):
    """The writes ``U = T (beta V) - W S_0^T``, ``W = T (beta Gamma K)``, of one chunk, with
    ``T`` the UT transform of ``A_ij = beta_i (k_i . k_j) mask_ij`` (j < i);
    ``decayed_keys`` is Gamma K."""
    strict = np.tril(np.ones(mask.shape[-2:]), -1)
    t = _ut_transform(b[..., :, None] * (k @ np.swapaxes(k, -1, -2)) * mask * strict)
    u0 = t @ (b[..., None] * v)  # the writes if the incoming state were 0
    w = t @ (b[..., None] * decayed_keys)  # how the incoming state changes them
    # the true writes beta_j (v_j - read_j)
    return u0 - w @ np.swapaxes(state, -1, -2)


def _delta_chunk(q, k, v, b, g, state):
    """One chunk of the gated delta rule: linear attention's chunk with corrected writes."""
    gamma, mask = np.exp(np.cumsum(g, axis=-1)), _decay_mask(g)
    writes = _corrected_writes(k, v, b, mask, gamma[..., None] * k, state)
    return _read_and_pass_on(q, k, g, mask, writes, state)


def delta_rule_chunked(query, key, value, beta, *, log_decay=None, initial_state=None,
                       chunk_size: int = 16):
    """The (gated) delta rule by chunks, through the UT (WY) representation.

    Inside a chunk the writes ``u_j = beta_j (v_j - alpha_j S_{j-1} k_j)`` depend on each
    other through a unit lower-triangular system, ``(I + A) U = beta V - (beta Gamma K)
    S_0^T``; solving it once (``T = (I + A)^{-1}``, by forward substitution) turns the chunk
    into matrix products.

    Parameters
    ----------
    query, key, value, beta, log_decay, initial_state
        As in :func:`delta_rule_recurrent` (order ``"decay_first"``).
    chunk_size : int, default 16
        Tokens per chunk, at least 1; the last chunk may be shorter.

    Returns
    -------
    output, state
        As in :func:`delta_rule_recurrent`, equal to it up to rounding.

    Raises
    ------
    ValueError
        As :func:`delta_rule_recurrent`; also for ``chunk_size < 1``.

    Notes
    -----
    Yang et al. (2024), "Parallelizing Linear Transformers with the Delta Rule", section 3.2
    (WY representation, UT transform); Yang, Kautz and Hatamizadeh (2025), section 3.3
    (the gated version). The same computation as ``naive_chunk_gated_delta_rule`` of
    flash-linear-attention, which also inverts ``I + A`` row by row, written with the state
    as (d_v, d_k). Taught in chapter 13.

    Examples
    --------
    >>> k = np.ones((1, 1, 3, 1)); v = np.array([1.0, 5.0, 2.0]).reshape(1, 1, 3, 1)
    >>> delta_rule_chunked(k, k, v, np.ones((1, 1, 3)), chunk_size=2)[0].ravel()
    array([1., 5., 2.])
    """
    q, k, v, g, b, state = _inputs(query, key, value, log_decay=log_decay, beta=beta,
                                   initial_state=initial_state)
    return _by_chunks(_delta_chunk, (q, k, v, b, g), state, chunk_size)


def delta_rule_parallel(query, key, value, beta, *, log_decay=None, initial_state=None):
    """The (gated) delta rule as one matrix computation over the whole sequence.

    The chunked form with a single chunk: ``O = (Q K^T * D) T (beta V - (beta Gamma K)
    S_0^T) + Gamma Q S_0^T``, with ``T`` the UT transform of all n tokens. Arguments and
    returns as in :func:`delta_rule_recurrent`; it costs an n x n triangular solve, so it
    suits short sequences and tests.

    Raises
    ------
    ValueError
        As :func:`delta_rule_recurrent`.

    Notes
    -----
    Yang et al. (2024), "Parallelizing Linear Transformers with the Delta Rule", section
    3.2. Taught in chapter 13.

    Examples
    --------
    >>> k = np.ones((1, 1, 2, 1)); v = np.array([1.0, 5.0]).reshape(1, 1, 2, 1)
    >>> delta_rule_parallel(k, k, v, np.full((1, 1, 2), 0.5))[0].ravel()
    array([0.5 , 2.75])
    """
    n = float_array(key, "key", ndim=4, axes="(batch, heads, n, d_k)").shape[2]
    return delta_rule_chunked(query, key, value, beta, log_decay=log_decay,
                              initial_state=initial_state, chunk_size=max(n, 1))


# --- Kimi Delta Attention: one gate per key channel -------------------------------------

def _kda_inputs(query, key, value, beta, log_decay, initial_state):
    """As :func:`_inputs`, with a gate of shape (batch, heads, n, d_k) (required, <= 0)."""
    q, k, v, _, b, s = _inputs(query, key, value, beta=beta, initial_state=initial_state)
    g = float_array(log_decay, "log_decay", ndim=4, axes="(batch, heads, n, d_k)")
    if g.shape != k.shape:
        raise ValueError(f"log_decay must have the keys' shape (batch, heads, n, d_k) = "
                         f"{k.shape}: one gate per key channel; got {g.shape}")
    if np.any(g > 0):
        raise ValueError(f"log_decay must be <= 0 everywhere (alpha = exp(log_decay) in (0, 1]); "
                         f"got a maximum of {float(g.max())!r}")
    return q, k, v, g, b, s


def kda_recurrent(query, key, value, beta, log_decay, *, initial_state=None):
    """Kimi Delta Attention, one token at a time: Gated DeltaNet with a gate per key channel.

    ``S_t = S_{t-1} Diag(alpha_t) (I - beta_t k_t k_t^T) + beta_t v_t k_t^T`` and
    ``o_t = S_t q_t``: column ``d`` of the state (what it holds under key channel ``d``)
    decays by its own ``alpha_t[d]``, then the delta rule reads and corrects as in
    :func:`delta_rule_recurrent`.

    Parameters
    ----------
    query, key : array_like, shape (batch, heads, n, d_k), real
        L2-normalised by the model.
    value : array_like, shape (batch, heads, n, d_v), real
    beta : array_like, shape (batch, heads, n), real in [0, 2]
    log_decay : array_like, shape (batch, heads, n, d_k), real <= 0
        ``g_t = log alpha_t``, one value per key channel.
    initial_state : array_like, shape (batch, heads, d_v, d_k), optional

    Returns
    -------
    output : numpy.ndarray, shape (batch, heads, n, d_v), float64
    state : numpy.ndarray, shape (batch, heads, d_v, d_k), float64

    Raises
    ------
    ValueError
        If shapes disagree, ``beta`` leaves [0, 2] or ``log_decay > 0``.

    Notes
    -----
    Kimi Team (2025), "Kimi Linear", equation (1), written with the state as (d_v, d_k) (the
    paper's ``S_t`` is this one transposed). The same steps as ``naive_recurrent_kda`` of
    flash-linear-attention (``fla/ops/kda/naive.py``): decay, then read and correct; the
    kernel's ``1/sqrt(d_k)`` on the query is left to the model. With every channel's gate
    equal it is :func:`delta_rule_recurrent`. Taught in chapter 13.

    Examples
    --------
    >>> k = np.array([[[[1.0, 0.0], [0.0, 1.0]]]]); v = np.ones((1, 1, 2, 1))
    >>> g = np.log([[[[1.0, 1.0], [0.5, 1.0]]]])  # the second token halves channel 0 only
    >>> kda_recurrent(k, k, v, np.ones((1, 1, 2)), g)[1]
    array([[[[0.5, 1. ]]]])
    """
    q, k, v, g, b, state = _kda_inputs(query, key, value, beta, log_decay,
                                       initial_state)
    outputs = []
    for t in range(q.shape[2]):
        # each column by its own alpha_t[d]
        state = state * np.exp(g[:, :, t, None, :])
        read = state @ k[:, :, t, :, None]
        error = v[:, :, t, :, None] - read
        state = state + b[:, :, t, None, None] * error * k[:, :, t, None, :]
        outputs.append(state @ q[:, :, t, :, None])
    return np.concatenate(outputs, axis=-1).swapaxes(-1, -2), state


def _channel_mask(a, b, g):
    """(..., C, C): ``sum_d a_i[d] b_j[d] exp(G_i[d] - G_j[d])`` for ``j <= i``, else 0, with
    ``G`` the cumulative gate of each channel: ``a_i^T Diag(e^{G_i - G_j}) b_j``."""
    cum = np.cumsum(g, axis=-2)
    diff = cum[..., :, None, :] - cum[..., None, :, :]
    causal = np.tril(np.ones((g.shape[-2],) * 2, dtype=bool))[..., None]
    return np.einsum("...id,...jd,...ijd->...ij", a, b,
                     np.exp(np.where(causal, diff, -np.inf)))


def _kda_chunk(q, k, v, b, g, state):
    """One chunk of KDA: the gated delta rule's chunk with every decay taken per channel."""
    cum = np.cumsum(g, axis=-2)
    gamma = np.exp(cum)  # (..., C, d_k): each channel's decay from the chunk's start
    strict = np.tril(np.ones((g.shape[-2],) * 2), -1)
    t = _ut_transform(b[..., :, None] * _channel_mask(k, k, g) * strict)
    u0 = t @ (b[..., None] * v)
    w = t @ (b[..., None] * gamma * k)
    writes = u0 - w @ np.swapaxes(state, -1, -2)
    output = ((gamma * q) @ np.swapaxes(state, -1, -2)
              + _channel_mask(q, k, g) @ writes)
    keep = np.exp(cum[..., -1:, :] - cum)  # exp(G_C[d] - G_j[d])
    state = state * gamma[..., -1, None, :] + np.swapaxes(writes, -1, -2) @ (keep * k)
    return output, state


def kda_chunked(query, key, value, beta, log_decay, *, initial_state=None,
                chunk_size: int = 16):
    """Kimi Delta Attention by chunks: the UT transform with a decay per key channel.

    As in :func:`delta_rule_chunked`, with every ``e^{G_i - G_j}`` taken channel by channel:
    ``A_ij = beta_i k_i^T Diag(e^{G_i - G_j}) k_j``, ``W = T diag(beta) (Gamma * K)``, the
    incoming state read by ``Gamma_i * q_i`` and passed on as ``S_0 Diag(Gamma_C)``.

    Parameters
    ----------
    query, key, value, beta, log_decay, initial_state
        As in :func:`kda_recurrent`.
    chunk_size : int, default 16
        Tokens per chunk, at least 1; ``chunk_size >= n`` is the one-matrix form.

    Returns
    -------
    output, state
        As in :func:`kda_recurrent`, equal to it up to rounding.

    Raises
    ------
    ValueError
        As :func:`kda_recurrent`; also for ``chunk_size < 1``.

    Notes
    -----
    Kimi Team (2025), "Kimi Linear", section 3.1, equations (6)-(8), and
    ``naive_chunk_kda`` of flash-linear-attention, which inverts ``I + A`` by the same
    forward substitution. Taught in chapter 13.

    Examples
    --------
    >>> k = np.array([[[[1.0, 0.0], [0.0, 1.0]]]]); v = np.ones((1, 1, 2, 1))
    >>> g = np.log([[[[1.0, 1.0], [0.5, 1.0]]]])
    >>> kda_chunked(k, k, v, np.ones((1, 1, 2)), g, chunk_size=2)[1]
    array([[[[0.5, 1. ]]]])
    """
    q, k, v, g, b, state = _kda_inputs(query, key, value, beta, log_decay, initial_state)
    return _by_chunks(_kda_chunk, (q, k, v, b, g), state, chunk_size)


# --- a token mixer: projections around a rule -------------------------------------------

class TokenMixer:
    """A layer that mixes tokens with one of the rules instead of softmax attention.

    ``x`` (batch, n, d_model) is projected to per-head queries and keys (L2-normalised), values,
    ``beta = sigmoid(x W_beta)`` and the gate ``g = -exp(a_log) softplus(x W_decay + dt_bias)``
    (the Mamba-2 gate that Gated DeltaNet uses); the rule mixes the tokens; the heads are
    concatenated and projected back. The short convolutions, output gate and norm of the
    published layers are left out.

    Parameters
    ----------
    weights : dict of str to array_like
        ``query``, ``key``, ``value`` (d_model, heads * head_dim) and ``output``
        (heads * head_dim, d_model); for the delta rules also ``beta`` (d_model, heads); for
        Gated DeltaNet also ``decay`` (d_model, heads), ``a_log`` and ``dt_bias`` (heads,).
        The names of :class:`helpers.keras_linear_attention.TokenMixer`'s weights
        (``MIXER_WEIGHTS[rule]``); other entries are ignored.
    num_heads : int
    rule : {"linear", "delta", "gated_delta"}
    chunk_size : int, default 16

    Raises
    ------
    TypeError, ValueError
        If a weight is missing or not a float array, a size is wrong, or ``rule`` unknown.

    Notes
    -----
    Yang, Kautz and Hatamizadeh (2025), section 3.4 and figure 1 (the block, without its
    convolution and output gate). Taught in chapter 13.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mixer = TokenMixer.random(8, num_heads=2, rule="gated_delta", rng=rng)
    >>> mixer(rng.normal(size=(1, 5, 8))).shape
    (1, 5, 8)
    """

    def __init__(self, weights: dict, *, num_heads: int, rule: str, chunk_size: int = 16):
        self.rule = one_of(rule, "rule", RULES)
        names = MIXER_WEIGHTS[self.rule]
        missing = [name for name in names if name not in weights]
        if missing:
            raise ValueError(f"weights must hold {', '.join(names)} for rule={self.rule!r}; "
                             f"missing {', '.join(missing)}")
        self.weights = {name: float_array(weights[name], name) for name in names}
        self.num_heads = positive_int(num_heads, "num_heads")
        self.chunk_size = positive_int(chunk_size, "chunk_size")
        width = self.weights["query"].shape[-1]
        if width % self.num_heads:
            raise ValueError(f"num_heads={self.num_heads} must divide the query width {width}")

    @classmethod
    def random(cls, d_model: int, *, num_heads: int, rule: str, rng, chunk_size: int = 16):
        """Random weights (normal, scaled by 1/sqrt(fan-in)), head_dim = d_model // heads."""
        rng = generator(rng)
        d, h = positive_int(d_model, "d_model"), positive_int(num_heads, "num_heads")
        shapes = {"query": (d, d), "key": (d, d), "value": (d, d), "beta": (d, h),
                  "decay": (d, h), "output": (d, d)}
        weights = {name: rng.normal(size=shape) / np.sqrt(shape[0])
                   for name, shape in shapes.items()}
        weights.update(a_log=np.zeros(h), dt_bias=np.full(h, DT_BIAS))
        return cls(weights, num_heads=h, rule=rule, chunk_size=chunk_size)

    @classmethod
    def from_keras(cls, layer):
        """Copy a built :class:`helpers.keras_linear_attention.TokenMixer`."""
        weights = {variable.name: np.asarray(variable) for variable in layer.weights}
        return cls(weights, num_heads=layer.num_heads, rule=layer.rule,
                   chunk_size=layer.chunk_size)

    def _heads(self, x, name):
        batch, n, _ = x.shape
        return (x @ self.weights[name]).reshape(batch, n, self.num_heads, -1).transpose(0, 2, 1, 3)

    def inputs(self, x):
        """The rule's inputs ``(q, k, v, beta, log_decay)`` for ``x`` (batch, n, d_model);
        ``beta`` is None for the linear rule, ``log_decay`` None unless Gated DeltaNet."""
        x = float_array(x, "x", ndim=3, axes="(batch, n, d_model)")
        q, k = l2_normalize(self._heads(x, "query")), l2_normalize(self._heads(x, "key"))
        v, w = self._heads(x, "value"), self.weights
        beta = log_decay = None
        if "beta" in w:
            beta = 1 / (1 + np.exp(-(x @ w["beta"]))).transpose(0, 2, 1)
        if "decay" in w:
            softplus = np.logaddexp(0.0, x @ w["decay"] + w["dt_bias"])
            log_decay = (-np.exp(w["a_log"]) * softplus).transpose(0, 2, 1)
        return q, k, v, beta, log_decay

    def __call__(self, x):
        """The mixed tokens, (batch, n, d_model), float64."""
        q, k, v, beta, log_decay = self.inputs(x)
        if self.rule == "linear":
            out = linear_attention_chunked(q, k, v, chunk_size=self.chunk_size)[0]
        else:
            out = delta_rule_chunked(q, k, v, beta, log_decay=log_decay,
                                     chunk_size=self.chunk_size)[0]
        batch, _, n, _ = out.shape
        return out.transpose(0, 2, 1, 3).reshape(batch, n, -1) @ self.weights["output"]


# --- what the delta rule fixes: retrieval from one matrix -------------------------------

def retrieval_error(num_pairs: int, *, rule: str, dim: int = 32, num_keys: int | None = None,
                    trials: int = 20, rng=None) -> float:
    """Mean relative error of reading back the latest value of every key from one state.

    ``num_pairs`` key-value pairs are written in order into a (dim, dim) state, by plain
    linear attention (``S += v k^T``) or by the delta rule with ``beta = 1``
    (``S += (v - S k) k^T``). The keys are drawn from a pool of ``num_keys`` random unit
    vectors (all different if ``None``), so with a pool a key may be written again with a new
    value. Then each key still in use is read, ``S k``, and compared with the last value
    written under it: ``|S k - v|^2 / |v|^2``, averaged over keys and ``trials``.

    Parameters
    ----------
    num_pairs : int
        Pairs written, at least 1.
    rule : {"linear", "delta"}
    dim : int, default 32
        d_k = d_v.
    num_keys : int, optional
        Size of the key pool (at least 1); ``None`` means ``num_pairs`` different keys.
    trials : int, default 20
    rng : numpy.random.Generator
        Draws keys, values and the order.

    Returns
    -------
    float
        0 means every latest value comes back exactly.

    Raises
    ------
    TypeError
        If ``rng`` is not a ``Generator`` or a count is not an integer.
    ValueError
        If a count is below 1 or ``rule`` is unknown.

    Notes
    -----
    Schlag et al. (2021), section 4 (capacity of the fast weight memory, and why the delta
    rule writes by correction). Taught in chapter 13.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> round(retrieval_error(4, rule="delta", dim=8, num_keys=1, rng=rng), 12)  # rewritten
    0.0
    >>> round(retrieval_error(4, rule="linear", dim=8, num_keys=1, rng=rng), 1)  # a blend
    5.3
    """
    num_pairs, dim = positive_int(num_pairs, "num_pairs"), positive_int(dim, "dim")
    pool = num_pairs if num_keys is None else positive_int(num_keys, "num_keys")
    trials, rng = positive_int(trials, "trials"), generator(rng)
    one_of(rule, "rule", ("linear", "delta"))
    errors = [_one_trial(num_pairs, pool, dim, rule, rng, distinct=num_keys is None)
              for _ in range(trials)]
    return float(np.mean(errors))


def _one_trial(num_pairs, pool, dim, rule, rng, distinct):
    keys = l2_normalize(rng.normal(size=(pool, dim)), eps=0.0)
    which = (np.arange(num_pairs) if distinct
             else rng.integers(0, pool, size=num_pairs))
    values = rng.normal(size=(num_pairs, dim))
    state, latest = np.zeros((dim, dim)), {}
    for key_index, value in zip(which, values, strict=True):
        key = keys[key_index]
        error = value - state @ key if rule == "delta" else value
        state = state + np.outer(error, key)
        latest[int(key_index)] = value
    used = sorted(latest)
    read = keys[used] @ state.T
    wanted = np.array([latest[i] for i in used])
    return np.mean(np.sum((read - wanted) ** 2, axis=1) / np.sum(wanted**2, axis=1))


# --- cost of generating one token ---------------------------------------------------------

KINDS = ("softmax", "linear", "gated_delta")


def decode_flops(cached_tokens: int, *, kind: str, d_k: int, d_v: int) -> int:
    """Floating-point operations of one head for one generated token (multiply-add = 2).

    Parameters
    ----------
    cached_tokens : int
        ``m``, the tokens in the KV cache when the new query attends, the new token included
        (>= 1). Only softmax attention depends on it.
    kind : {"softmax", "linear", "gated_delta"}
        Softmax attention over the KV cache; the linear-attention state's update and read;
        the gated delta rule's decay, read, correction and output.
    d_k, d_v : int
        Head sizes of keys and values.

    Returns
    -------
    int
        Softmax: ``2 d_k m + 2 d_v m`` (scores and weighted sum over the ``m`` keys; the
        softmax's exponentials are not counted). Linear: ``2 d_v d_k`` (write)
        ``+ 2 d_v d_k`` (read). Gated delta: decay ``d_v d_k``, read ``2 d_v d_k``, write
        ``2 d_v d_k``, output ``2 d_v d_k`` (vector operations of size ``d_v`` not counted).

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer or ``kind`` is unknown.

    Notes
    -----
    Taught in chapter 13; chapter 9 counts the KV cache's reads the same way.

    Examples
    --------
    >>> decode_flops(128, kind="softmax", d_k=128, d_v=128)
    65536
    >>> decode_flops(10**6, kind="gated_delta", d_k=128, d_v=128)
    114688
    """
    m, d_k, d_v, kind = _cost_inputs(cached_tokens, kind, d_k, d_v)
    if kind == "softmax":
        return 2 * (d_k + d_v) * m
    return (4 if kind == "linear" else 7) * d_k * d_v


def decode_bytes(cached_tokens: int, *, kind: str, d_k: int, d_v: int,
                 bytes_per_number: int = 2) -> int:
    """Bytes one head keeps in memory to generate a token: the KV cache, or the state.

    Parameters
    ----------
    cached_tokens : int
        ``m``, as in :func:`decode_flops` (>= 1).
    kind : {"softmax", "linear", "gated_delta"}
        Softmax attention keeps ``m`` keys and values, ``(d_k + d_v) m`` numbers; both
        linear rules keep one state of ``d_v d_k`` numbers whatever ``m``.
    d_k, d_v : int
    bytes_per_number : int, default 2
        2 for bfloat16/float16, 4 for float32.

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        As :func:`decode_flops`, and for a ``bytes_per_number`` below 1.

    Notes
    -----
    Taught in chapter 13 (chapter 9 introduces the KV cache).

    Examples
    --------
    >>> decode_bytes(32768, kind="softmax", d_k=256, d_v=256)
    33554432
    >>> decode_bytes(32768, kind="gated_delta", d_k=128, d_v=128)
    32768
    """
    m, d_k, d_v, kind = _cost_inputs(cached_tokens, kind, d_k, d_v)
    size = positive_int(bytes_per_number, "bytes_per_number")
    numbers = (d_k + d_v) * m if kind == "softmax" else d_v * d_k
    return numbers * size


def _cost_inputs(cached_tokens, kind, d_k, d_v):
    return (positive_int(cached_tokens, "cached_tokens"), positive_int(d_k, "d_k"),
            positive_int(d_v, "d_v"), one_of(kind, "kind", KINDS))


# --- the memory of published hybrid models ---------------------------------------------------

@dataclass(frozen=True)
class HybridConfig:
    """What a hybrid model keeps per sequence while it generates: caches and states.

    Parameters
    ----------
    name : str
    num_layers : int
    global_layers : tuple of int
        The softmax-attention layers, numbered from 1; every other layer is a linear one.
    state_heads, state_key_dim, state_value_dim : int
        Each linear layer keeps one (state_value_dim, state_key_dim) state per state head.
    num_kv_heads, head_dim : int, optional
        Grouped-query global layers: a token caches ``2 num_kv_heads head_dim`` numbers.
    latent_dim, rope_dim : int, optional
        Multi-head latent attention global layers (chapter 12): a token caches
        ``latent_dim + rope_dim`` numbers (d_c + d_h^R).
    source : str
        Where the numbers come from.

    Raises
    ------
    ValueError
        If a global layer is outside 1..num_layers or repeated, a size is not positive, or
        the global layers are described both (or neither) as grouped-query and latent.

    Notes
    -----
    Taught in chapter 13; the values of :data:`PUBLISHED` are the released configurations.

    Examples
    --------
    >>> toy = HybridConfig("toy", 4, (4,), 2, 8, 8, num_kv_heads=1, head_dim=8)
    >>> toy.kind, toy.linear_layers, toy.cache_numbers_per_token
    ('GQA', 3, 16)
    """

    name: str
    num_layers: int
    global_layers: tuple[int, ...]
    state_heads: int
    state_key_dim: int
    state_value_dim: int
    num_kv_heads: int | None = None
    head_dim: int | None = None
    latent_dim: int | None = None
    rope_dim: int = 0
    source: str = ""

    def __post_init__(self):
        for name in ("num_layers", "state_heads", "state_key_dim", "state_value_dim"):
            positive_int(getattr(self, name), name)
        layers = [integer(i, "global_layers", low=1, high=self.num_layers)
                  for i in self.global_layers]
        if len(set(layers)) != len(layers):
            raise ValueError(f"global_layers must not repeat a layer; got {self.global_layers}")
        gqa = self.num_kv_heads is not None and self.head_dim is not None
        mla = self.latent_dim is not None
        if gqa == mla:
            raise ValueError("the global layers must be grouped-query (num_kv_heads and "
                             "head_dim) or latent (latent_dim, rope_dim), not both or neither; "
                             f"got num_kv_heads={self.num_kv_heads}, head_dim={self.head_dim}, "
                             f"latent_dim={self.latent_dim}")
        for name in ("num_kv_heads", "head_dim", "latent_dim"):
            if getattr(self, name) is not None:
                positive_int(getattr(self, name), name)
        integer(self.rope_dim, "rope_dim", low=0)

    @property
    def kind(self) -> str:
        """``"MLA"`` or ``"GQA"``: the attention of the global layers."""
        return "MLA" if self.latent_dim is not None else "GQA"

    @property
    def linear_layers(self) -> int:
        """The layers that keep a state instead of a cache."""
        return self.num_layers - len(self.global_layers)

    @property
    def cache_numbers_per_token(self) -> int:
        """Numbers one global layer caches for each token."""
        if self.kind == "MLA":
            return self.latent_dim + self.rope_dim
        return 2 * self.num_kv_heads * self.head_dim


PUBLISHED = {
    "Qwen3-Next-80B-A3B": HybridConfig(
        "Qwen3-Next-80B-A3B", num_layers=48, global_layers=tuple(range(4, 49, 4)),
        state_heads=32, state_key_dim=128, state_value_dim=128, num_kv_heads=2, head_dim=256,
        source="Qwen/Qwen3-Next-80B-A3B-Instruct, config.json: num_hidden_layers 48, "
               "full_attention_interval 4, num_key_value_heads 2, head_dim 256, "
               "linear_num_value_heads 32, linear_key_head_dim 128, linear_value_head_dim 128 "
               "(the defaults of transformers' Qwen3NextConfig; model card)"),
    "Kimi-Linear-48B-A3B": HybridConfig(
        "Kimi-Linear-48B-A3B", num_layers=27, global_layers=(4, 8, 12, 16, 20, 24, 27),
        state_heads=32, state_key_dim=128, state_value_dim=128, latent_dim=512, rope_dim=64,
        source="moonshotai/Kimi-Linear-48B-A3B-Instruct, config.json: num_hidden_layers 27, "
               "linear_attn_config (full_attn_layers [4, 8, 12, 16, 20, 24, 27], num_heads 32, "
               "head_dim 128), kv_lora_rank 512, qk_rope_head_dim 64; Kimi Linear report, "
               "section 4 (d_k = d_v = 128)"),
}
"""Two published hybrid models, each with its source (checked in chapter 13)."""


def hybrid_memory(config: HybridConfig, tokens: int, *, bytes_per_number: int = 2,
                  all_global: bool = False) -> tuple[int, int]:
    """Bytes one sequence of ``tokens`` tokens keeps while a hybrid model generates.

    Parameters
    ----------
    config : HybridConfig
    tokens : int
        Tokens in the caches (>= 0).
    bytes_per_number : int, default 2
    all_global : bool, default False
        Count the model as if every layer were one of its global layers (no states).

    Returns
    -------
    cache, state : int
        The global layers' caches (growing with ``tokens``) and the linear layers' states
        (fixed), in bytes. The short convolutions' few cached inputs are not counted.

    Raises
    ------
    TypeError, ValueError
        If ``config`` is not a ``HybridConfig`` or a count is out of range.

    Notes
    -----
    Taught in chapter 13.

    Examples
    --------
    >>> cache, state = hybrid_memory(PUBLISHED["Qwen3-Next-80B-A3B"], 2**15)
    >>> cache // 2**20, state // 2**20  # MiB
    (768, 36)
    """
    if not isinstance(config, HybridConfig):
        raise TypeError(f"config must be a HybridConfig; got {type(config).__name__}")
    tokens = integer(tokens, "tokens", low=0)
    size = positive_int(bytes_per_number, "bytes_per_number")
    if all_global:
        return config.num_layers * config.cache_numbers_per_token * tokens * size, 0
    cache = len(config.global_layers) * config.cache_numbers_per_token * tokens * size
    state = config.linear_layers * config.state_heads * config.state_key_dim \
        * config.state_value_dim * size
    return cache, state


# --- two known mistakes of the chunked forms, reproduced for chapter 13 ----------------------
# Each is one wrong argument in an otherwise correct chunk; chapter 13 shows that comparing the
# forms catches both, and that neither shows without a decay.

def _plain_mask(g):
    """The first mistake: a causal mask of ones inside the chunk, without the decay ratios."""
    return np.tril(np.ones((g.shape[-1],) * 2))


def _linear_chunk_plain_mask(q, k, v, g, state):
    """:func:`_linear_chunk` with the first mistake."""
    return _read_and_pass_on(q, k, g, _plain_mask(g), v, state)  # not _decay_mask(g)


def _delta_chunk_plain_mask(q, k, v, b, g, state):
    """:func:`_delta_chunk` with the first mistake, in ``A`` and in the output."""
    gamma, mask = np.exp(np.cumsum(g, axis=-1)), _plain_mask(g)  # not _decay_mask(g)
    writes = _corrected_writes(k, v, b, mask, gamma[..., None] * k, state)
    return _read_and_pass_on(q, k, g, mask, writes, state)


def _delta_chunk_undecayed_keys(q, k, v, b, g, state):
    """The second mistake: ``W = T diag(beta) K``, the keys without their decay Gamma."""
    mask = _decay_mask(g)
    writes = _corrected_writes(k, v, b, mask, k, state)  # not gamma[..., None] * k
    return _read_and_pass_on(q, k, g, mask, writes, state)
