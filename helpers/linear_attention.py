"""Linear attention, the delta rule and Gated DeltaNet in NumPy, each in equal forms.

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
a small triangular system per chunk (the UT / WY representation of the products of
``I - beta k k^T``).

Shapes follow the rest of the course: ``(batch, heads, n, d)`` for queries, keys and values;
``(batch, heads, n)`` for the per-token scalars ``beta`` and ``log_decay`` (``g_t = log
alpha_t <= 0``, as the released Gated DeltaNet code passes it); ``(batch, heads, d_v, d_k)``
for the state. Every function returns the output and the final state, and takes an optional
initial state, so a long sequence can be processed in pieces.

The rules do not normalise queries and keys and do not scale by ``1/sqrt(d_k)``; the model
around them does (Gated DeltaNet L2-normalises ``q`` and ``k``). Taught in chapter 13. Imports
only NumPy.
"""

from __future__ import annotations

import numpy as np

from ._checks import float_array, generator, integer, one_of, positive_int, same_size

__all__ = ["feature_map", "l2_normalize", "linear_attention_parallel",
           "linear_attention_recurrent", "linear_attention_chunked",
           "delta_rule_recurrent", "delta_rule_chunked", "delta_rule_parallel",
           "TokenMixer", "retrieval_error", "decode_flops", "decode_bytes"]

MISTAKES = (None, "causal_mask", "decay_on_keys")
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


def linear_attention_parallel(query, key, value, *, log_decay=None, initial_state=None):
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
    last = mask[..., -1, :]  # exp(G_n - G_j): how much of token j the final state keeps
    state = gamma[..., -1, None, None] * s0 + np.swapaxes(v * last[..., None], -1, -2) @ k
    return output, state


def linear_attention_recurrent(query, key, value, *, log_decay=None, initial_state=None):
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


def _intra_mask(g: np.ndarray, mistake) -> np.ndarray:
    """The mask inside a chunk: decay ratios, or (the mistake) a plain causal mask."""
    if mistake == "causal_mask":
        return np.tril(np.ones((g.shape[-1],) * 2))
    return _decay_mask(g)


def linear_attention_chunked(query, key, value, *, log_decay=None, initial_state=None,
                             chunk_size: int = 16, mistake=None):
    """Causal linear attention by chunks: parallel inside a chunk, recurrent between chunks.

    Parameters
    ----------
    query, key, value, log_decay, initial_state
        As in :func:`linear_attention_parallel`.
    chunk_size : int, default 16
        Tokens per chunk, at least 1; the last chunk may be shorter.
    mistake : {None, "causal_mask"}, default None
        ``"causal_mask"`` reproduces a known implementation error (a plain causal mask inside
        the chunk, without the decay ratios), to show that the equality of the forms catches
        it. Leave it ``None``.

    Returns
    -------
    output, state
        As in :func:`linear_attention_parallel`, equal to it up to rounding.

    Raises
    ------
    ValueError
        As :func:`linear_attention_parallel`; also if ``chunk_size < 1`` or ``mistake`` is not
        one of the listed values.

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
    one_of(mistake, "mistake", MISTAKES[:2])
    outputs = []
    for part in _chunks(q.shape[2], chunk_size):
        out, state = _linear_chunk(q[:, :, part], k[:, :, part], v[:, :, part],
                                   g[:, :, part], state, mistake)
        outputs.append(out)
    return np.concatenate(outputs, axis=2), state


def _linear_chunk(q, k, v, g, state, mistake):
    """One chunk: read the incoming state, attend inside the chunk, pass the state on."""
    cum = np.cumsum(g, axis=-1)
    gamma = np.exp(cum)  # decay from the chunk's start to each token
    inter = gamma[..., None] * (q @ np.swapaxes(state, -1, -2))
    intra = (q @ np.swapaxes(k, -1, -2) * _intra_mask(g, mistake)) @ v
    keep = np.exp(cum[..., -1:] - cum)  # exp(G_C - G_j)
    state = gamma[..., -1, None, None] * state + np.swapaxes(v * keep[..., None], -1, -2) @ k
    return inter + intra, state


# --- the delta rule and Gated DeltaNet --------------------------------------------------

def delta_rule_recurrent(query, key, value, beta, *, log_decay=None, initial_state=None,
                         order: str = "decay_first"):
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


def _ut_transform(k, b, mask):
    """``T = (I + A)^{-1}`` with ``A_ij = beta_i (k_i . k_j) mask_ij`` for ``j < i``."""
    size = k.shape[-2]
    strict = np.tril(np.ones((size, size)), -1)
    a = b[..., :, None] * (k @ np.swapaxes(k, -1, -2)) * mask * strict
    return np.linalg.solve(np.eye(size) + a, np.broadcast_to(np.eye(size), a.shape))


def _delta_chunk(q, k, v, b, g, state, mistake):
    """One chunk of the gated delta rule in the UT (WY) form; returns output and state."""
    cum = np.cumsum(g, axis=-1)
    gamma = np.exp(cum)
    mask = _intra_mask(g, mistake)
    t = _ut_transform(k, b, mask)
    u = t @ (b[..., None] * v)  # the writes if the incoming state were 0
    decayed = k if mistake == "decay_on_keys" else gamma[..., None] * k
    w = t @ (b[..., None] * decayed)  # how the incoming state changes them
    new = u - w @ np.swapaxes(state, -1, -2)  # the true writes beta_j (v_j - read_j)
    inter = gamma[..., None] * (q @ np.swapaxes(state, -1, -2))
    output = inter + (q @ np.swapaxes(k, -1, -2) * mask) @ new
    keep = np.exp(cum[..., -1:] - cum)
    state = gamma[..., -1, None, None] * state + np.swapaxes(new * keep[..., None], -1, -2) @ k
    return output, state


def delta_rule_chunked(query, key, value, beta, *, log_decay=None, initial_state=None,
                       chunk_size: int = 16, mistake=None):
    """The (gated) delta rule by chunks, through the UT (WY) representation.

    Inside a chunk the writes ``u'_j = beta_j (v_j - alpha_j S_{j-1} k_j)`` depend on each
    other through a unit lower-triangular system, ``(I + A) U' = beta V - (beta Gamma K)
    S_0^T``; solving it once (``T = (I + A)^{-1}``) turns the chunk into matrix products.

    Parameters
    ----------
    query, key, value, beta, log_decay, initial_state
        As in :func:`delta_rule_recurrent` (order ``"decay_first"``).
    chunk_size : int, default 16
        Tokens per chunk, at least 1; the last chunk may be shorter.
    mistake : {None, "causal_mask", "decay_on_keys"}, default None
        Reproduce one of two known implementation errors, to show that the equality of the
        forms catches it: a plain causal mask inside the chunk instead of the decay ratios,
        or the keys of ``W`` left without their cumulative decay. Leave it ``None``.

    Returns
    -------
    output, state
        As in :func:`delta_rule_recurrent`, equal to it up to rounding.

    Raises
    ------
    ValueError
        As :func:`delta_rule_recurrent`; also for ``chunk_size < 1`` or an unknown
        ``mistake``.

    Notes
    -----
    Yang et al. (2024), "Parallelizing Linear Transformers with the Delta Rule", section 3.2
    (WY representation, UT transform); Yang, Kautz and Hatamizadeh (2025), section 3.3
    (the gated version). The same computation as ``naive_chunk_gated_delta_rule`` of
    flash-linear-attention, written with the state as (d_v, d_k). Taught in chapter 13.

    Examples
    --------
    >>> k = np.ones((1, 1, 3, 1)); v = np.array([1.0, 5.0, 2.0]).reshape(1, 1, 3, 1)
    >>> delta_rule_chunked(k, k, v, np.ones((1, 1, 3)), chunk_size=2)[0].ravel()
    array([1., 5., 2.])
    """
    q, k, v, g, b, state = _inputs(query, key, value, log_decay=log_decay, beta=beta,
                                   initial_state=initial_state)
    one_of(mistake, "mistake", MISTAKES)
    outputs = []
    for part in _chunks(q.shape[2], chunk_size):
        out, state = _delta_chunk(q[:, :, part], k[:, :, part], v[:, :, part],
                                  b[:, :, part], g[:, :, part], state, mistake)
        outputs.append(out)
    return np.concatenate(outputs, axis=2), state


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
    which = np.arange(num_pairs) if distinct else rng.integers(0, pool, size=num_pairs)
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

def decode_flops(context: int, *, kind: str, d_k: int, d_v: int) -> int:
    """Floating-point operations of one head for one generated token (multiply-add = 2).

    Parameters
    ----------
    context : int
        Tokens already in the context (>= 0); softmax attention reads all of them.
    kind : {"softmax", "linear", "gated_delta"}
        Softmax attention over a KV cache of ``context + 1`` tokens; the linear-attention
        state update and read; the gated delta rule's decay, read, correction and output.
    d_k, d_v : int
        Head sizes of keys and values.

    Returns
    -------
    int
        Softmax: ``2 d_k m + 2 d_v m`` (scores and weighted sum over ``m = context + 1``
        keys; the softmax's exponentials are not counted). Linear: ``2 d_v d_k`` (write)
        ``+ 2 d_v d_k`` (read). Gated delta: decay ``d_v d_k``, read ``2 d_v d_k``, write
        ``2 d_v d_k``, output ``2 d_v d_k`` (vector operations of size ``d_v`` not counted).

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer, ``context < 0`` or ``kind`` is unknown.

    Notes
    -----
    Taught in chapter 13; chapter 9 counts the KV cache's reads the same way.

    Examples
    --------
    >>> decode_flops(127, kind="softmax", d_k=128, d_v=128)
    65536
    >>> decode_flops(10**6, kind="gated_delta", d_k=128, d_v=128)
    114688
    """
    context = _context(context)
    d_k, d_v = positive_int(d_k, "d_k"), positive_int(d_v, "d_v")
    one_of(kind, "kind", ("softmax", "linear", "gated_delta"))
    if kind == "softmax":
        return 2 * (d_k + d_v) * (context + 1)
    return (4 if kind == "linear" else 7) * d_k * d_v


def decode_bytes(context: int, *, kind: str, d_k: int, d_v: int, bytes_per_number: int = 2):
    """Bytes one head keeps in memory to generate the next token (the KV cache or the state).

    Parameters
    ----------
    context : int
        Tokens in the context (>= 0).
    kind : {"softmax", "state"}
        A KV cache holds ``context`` keys and values, ``(d_k + d_v) * context`` numbers; a
        state holds ``d_v * d_k`` numbers whatever the context.
    d_k, d_v : int
    bytes_per_number : int, default 2
        2 for bfloat16/float16, 4 for float32.

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        As :func:`decode_flops`.

    Notes
    -----
    Taught in chapter 13 (chapter 9 introduces the KV cache).

    Examples
    --------
    >>> decode_bytes(32768, kind="softmax", d_k=256, d_v=256)
    33554432
    >>> decode_bytes(32768, kind="state", d_k=128, d_v=128)
    32768
    """
    context = _context(context)
    d_k, d_v = positive_int(d_k, "d_k"), positive_int(d_v, "d_v")
    size = positive_int(bytes_per_number, "bytes_per_number")
    one_of(kind, "kind", ("softmax", "state"))
    numbers = (d_k + d_v) * context if kind == "softmax" else d_v * d_k
    return numbers * size


def _context(context) -> int:
    return integer(context, "context", low=0)
