"""The Keras twins of :mod:`helpers.linear_attention`: the rules and a token mixer in ``keras.ops``.

:func:`linear_attention_chunked` and :func:`delta_rule_chunked` compute the chunked forms with
``keras.ops`` (matrix products inside a chunk, a Python loop over chunks, the UT transform as a
triangular solve), so they run in a Keras model and can be differentiated.
:class:`TokenMixer` is the Keras layer whose weights
:meth:`helpers.linear_attention.TokenMixer.from_keras` copies; the two give the same output
(tested). Taught in chapter 13. Imports TensorFlow/Keras (through ``helpers._tensorflow``).
"""

from __future__ import annotations

from . import _checks
from ._tensorflow import keras
from .linear_attention import DT_BIAS, MIXER_WEIGHTS, RULES

__all__ = ["linear_attention_chunked", "delta_rule_chunked", "TokenMixer"]

ops = keras.ops


def _swap(x):
    return ops.swapaxes(x, -1, -2)


def _masks(g):
    """Cumulative log decay, and the mask ``exp(G_i - G_j)`` for ``j <= i`` (else 0)."""
    cum = ops.cumsum(g, axis=-1)
    size = ops.shape(g)[-1]
    causal = ops.tril(ops.ones((size, size), dtype="bool"))
    diff = ops.expand_dims(cum, -1) - ops.expand_dims(cum, -2)
    return cum, ops.where(causal, ops.exp(ops.where(causal, diff, 0.0)), 0.0)


def _start(query, value, log_decay, initial_state):
    shape = ops.shape(query)
    if log_decay is None:
        log_decay = ops.zeros(shape[:3], dtype=query.dtype)
    if initial_state is None:
        initial_state = ops.zeros((shape[0], shape[1], ops.shape(value)[-1], shape[-1]),
                                  dtype=query.dtype)
    return log_decay, initial_state


def _read_and_keep(q, cum, state):
    """``Gamma_i S_0 q_i`` for each token, and ``exp(G_C - G_j)`` for the state update."""
    inter = ops.expand_dims(ops.exp(cum), -1) * ops.matmul(q, _swap(state))
    return inter, ops.exp(cum[..., -1:] - cum)


def _pass_on(state, cum, keep, writes, k):
    decayed = ops.exp(cum[..., -1])[..., None, None] * state
    return decayed + ops.matmul(_swap(writes * ops.expand_dims(keep, -1)), k)


def linear_attention_chunked(query, key, value, *, log_decay=None, initial_state=None,
                             chunk_size: int = 16):
    """Keras twin of :func:`helpers.linear_attention.linear_attention_chunked`.

    Parameters
    ----------
    query, key : tensor, shape (batch, heads, n, d_k), float
    value : tensor, shape (batch, heads, n, d_v), float
    log_decay : tensor, shape (batch, heads, n), <= 0, optional
    initial_state : tensor, shape (batch, heads, d_v, d_k), optional
    chunk_size : int, default 16

    Returns
    -------
    output : tensor, shape (batch, heads, n, d_v)
    state : tensor, shape (batch, heads, d_v, d_k)

    Raises
    ------
    TypeError, ValueError
        If ``chunk_size`` is not a positive integer. The tensors are not checked (use the
        NumPy function to validate).

    Notes
    -----
    Taught in chapter 13.

    Examples
    --------
    >>> x = keras.ops.ones((1, 1, 5, 1))
    >>> keras.ops.convert_to_numpy(linear_attention_chunked(x, x, x, chunk_size=2)[0]).ravel()
    array([1., 2., 3., 4., 5.], dtype=float32)
    """
    chunk_size = _checks.positive_int(chunk_size, "chunk_size")
    g, state = _start(query, value, log_decay, initial_state)
    outputs = []
    for start in range(0, ops.shape(query)[2], chunk_size):
        part = slice(start, start + chunk_size)
        q, k, v = query[:, :, part], key[:, :, part], value[:, :, part]
        cum, mask = _masks(g[:, :, part])
        inter, keep = _read_and_keep(q, cum, state)
        outputs.append(inter + ops.matmul(ops.matmul(q, _swap(k)) * mask, v))
        state = _pass_on(state, cum, keep, v, k)
    return ops.concatenate(outputs, axis=2), state


def delta_rule_chunked(query, key, value, beta, *, log_decay=None, initial_state=None,
                       chunk_size: int = 16):
    """Keras twin of :func:`helpers.linear_attention.delta_rule_chunked` (the UT form).

    Parameters
    ----------
    query, key, value, log_decay, initial_state, chunk_size
        As in :func:`linear_attention_chunked`.
    beta : tensor, shape (batch, heads, n), in [0, 2]

    Returns
    -------
    output, state
        As in :func:`linear_attention_chunked`.

    Raises
    ------
    TypeError, ValueError
        If ``chunk_size`` is not a positive integer.

    Notes
    -----
    Yang et al. (2024), section 3.2; Yang, Kautz and Hatamizadeh (2025), section 3.3. The
    triangular system is solved with ``keras.ops.solve_triangular``. Taught in chapter 13.

    Examples
    --------
    >>> k = keras.ops.ones((1, 1, 3, 1)); v = keras.ops.reshape([1.0, 5.0, 2.0], (1, 1, 3, 1))
    >>> out = delta_rule_chunked(k, k, v, keras.ops.ones((1, 1, 3)), chunk_size=2)[0]
    >>> keras.ops.convert_to_numpy(out).ravel()
    array([1., 5., 2.], dtype=float32)
    """
    chunk_size = _checks.positive_int(chunk_size, "chunk_size")
    g, state = _start(query, value, log_decay, initial_state)
    outputs = []
    for start in range(0, ops.shape(query)[2], chunk_size):
        part = slice(start, start + chunk_size)
        q, k, v, b = query[:, :, part], key[:, :, part], value[:, :, part], beta[:, :, part]
        cum, mask = _masks(g[:, :, part])
        writes = _corrected_writes(k, v, b, cum, mask, state)
        inter, keep = _read_and_keep(q, cum, state)
        outputs.append(inter + ops.matmul(ops.matmul(q, _swap(k)) * mask, writes))
        state = _pass_on(state, cum, keep, writes, k)
    return ops.concatenate(outputs, axis=2), state


def _corrected_writes(k, v, b, cum, mask, state):
    """``U' = T (beta V) - T (beta Gamma K) S_0^T`` with ``T = (I + A)^{-1}``."""
    size = ops.shape(k)[2]
    strict = ops.tril(ops.ones((size, size), dtype=k.dtype), -1)
    b = ops.expand_dims(b, -1)
    system = ops.eye(size, dtype=k.dtype) + b * ops.matmul(k, _swap(k)) * mask * strict
    right = ops.concatenate([b * v, b * ops.expand_dims(ops.exp(cum), -1) * k], axis=-1)
    solved = ops.solve_triangular(system, right, lower=True)
    u, w = solved[..., : ops.shape(v)[-1]], solved[..., ops.shape(v)[-1]:]
    return u - ops.matmul(w, _swap(state))


@keras.saving.register_keras_serializable(package="helpers")
class TokenMixer(keras.layers.Layer):
    """Keras twin of :class:`helpers.linear_attention.TokenMixer`.

    Only the weights its rule uses (``helpers.linear_attention.MIXER_WEIGHTS[rule]``), of the
    shapes the NumPy class documents, so that training leaves none without a gradient.
    ``a_log`` starts at 0 and ``dt_bias`` at ``log(expm1(0.01))``, so for a zero input the
    gate starts at ``alpha = exp(-0.01)``, close to 1 (remember almost everything), as the
    released code starts it with a small time step.

    Parameters
    ----------
    num_heads, head_dim : int
    rule : {"linear", "delta", "gated_delta"}
    chunk_size : int, default 16
    **kwargs
        Passed to ``keras.layers.Layer``.

    Call arguments
    --------------
    x : tensor, shape (batch, n, d_model)

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer or ``rule`` is unknown.

    Notes
    -----
    Yang, Kautz and Hatamizadeh (2025), section 3.4, without the short convolutions and the
    output gate. Taught in chapter 13.
    """

    def __init__(self, num_heads: int, head_dim: int, *, rule: str = "gated_delta",
                 chunk_size: int = 16, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = _checks.positive_int(num_heads, "num_heads")
        self.head_dim = _checks.positive_int(head_dim, "head_dim")
        self.rule = _checks.one_of(rule, "rule", RULES)
        self.chunk_size = _checks.positive_int(chunk_size, "chunk_size")

    def build(self, input_shape):
        d, width, h = input_shape[-1], self.num_heads * self.head_dim, self.num_heads
        shapes = {"query": (d, width), "key": (d, width), "value": (d, width),
                  "beta": (d, h), "decay": (d, h), "a_log": (h,), "dt_bias": (h,),
                  "output": (width, d)}
        starts = {"a_log": "zeros", "dt_bias": keras.initializers.Constant(DT_BIAS)}
        self.kernels = {name: self.add_weight(shape=shapes[name], name=name,
                                              initializer=starts.get(name, "glorot_uniform"))
                        for name in MIXER_WEIGHTS[self.rule]}

    def _heads(self, x, name):
        y = ops.reshape(ops.matmul(x, self.kernels[name]),
                        (ops.shape(x)[0], ops.shape(x)[1], self.num_heads, self.head_dim))
        return ops.transpose(y, (0, 2, 1, 3))

    def call(self, x):
        w = self.kernels
        q = _l2_normalize(self._heads(x, "query"))
        k, v = _l2_normalize(self._heads(x, "key")), self._heads(x, "value")
        if self.rule == "linear":
            out = linear_attention_chunked(q, k, v, chunk_size=self.chunk_size)[0]
        else:
            beta = ops.transpose(ops.sigmoid(ops.matmul(x, w["beta"])), (0, 2, 1))
            g = None
            if self.rule == "gated_delta":
                pre = ops.matmul(x, w["decay"]) + w["dt_bias"]
                g = ops.transpose(-ops.exp(w["a_log"]) * ops.softplus(pre), (0, 2, 1))
            out = delta_rule_chunked(q, k, v, beta, log_decay=g,
                                     chunk_size=self.chunk_size)[0]
        out = ops.reshape(ops.transpose(out, (0, 2, 1, 3)),
                          (ops.shape(x)[0], ops.shape(x)[1], -1))
        return ops.matmul(out, w["output"])

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads,
                "head_dim": self.head_dim, "rule": self.rule, "chunk_size": self.chunk_size}


def _l2_normalize(x, eps: float = 1e-6):
    return x / ops.sqrt(ops.sum(x * x, axis=-1, keepdims=True) + eps)


