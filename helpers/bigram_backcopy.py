"""Bigram-backcopy: a language task where an attention head has nothing to read at most tokens.

Each sequence starts with the token ``<s>`` (id 0) and then follows a fixed random bigram
table (the next token depends only on the current one), except after a trigger token: there
the next token is the one *before* the trigger, which only attention can fetch. A one-layer
model predicts the bigram from the current token through its residual stream and feed-forward
network, and needs its attention only at triggers; at every other query the head has nothing
useful to read. Guo et al. (2024, "Active-Dormant Attention Heads", arXiv:2410.13835) built
this task to study attention sinks; chapter 16 trains softmax, sink-logit and gated attention on
it. Imports only NumPy.
"""

from __future__ import annotations

import numpy as np

from . import _checks

__all__ = ["BOS", "bigram_table", "bigram_backcopy"]

BOS = 0


def bigram_table(vocab_size: int, *, concentration: float = 0.2, rng) -> np.ndarray:
    """A random bigram table: for each current token, a distribution over the next token.

    Parameters
    ----------
    vocab_size : int
        Token ids ``0 .. vocab_size - 1``, 0 being ``<s>``; at least 3.
    concentration : float, default 0.2
        Of the Dirichlet distribution each row is drawn from; below 1, each token has a few
        likely successors (so the bigram is worth learning).
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (vocab_size, vocab_size), float64
        Row ``a`` is P(next | current = a); column 0 (``<s>``) is 0 in every row, since
        ``<s>`` appears only first.

    Raises
    ------
    ValueError
        If ``vocab_size`` < 3 or ``concentration`` is not positive.
    """
    vocab_size = _checks.integer(vocab_size, "vocab_size", low=3)
    concentration = _checks.real(concentration, "concentration", low=0, low_open=True)
    rng = _checks.generator(rng)
    table = np.zeros((vocab_size, vocab_size))
    table[:, 1:] = rng.dirichlet(np.full(vocab_size - 1, concentration), size=vocab_size)
    return table


def bigram_backcopy(num_examples: int, length: int, table, *, triggers, rng):
    """Sequences of the bigram-backcopy task, with the next token as the target.

    Position 0 is ``<s>``, position 1 a uniformly drawn non-trigger token, and then for
    ``t >= 1``: if token ``t`` is a trigger, token ``t + 1`` is token ``t - 1`` (back-copy);
    otherwise it is drawn from ``table[token t]``.

    Parameters
    ----------
    num_examples : int
        Rows, at least 1.
    length : int
        Positions per row, at least 3.
    table : array_like, shape (vocab_size, vocab_size)
        From :func:`bigram_table`: rows are probability distributions.
    triggers : sequence of int
        Trigger token ids, in ``1 .. vocab_size - 1``, not all of them.
    rng : numpy.random.Generator

    Returns
    -------
    inputs : numpy.ndarray, shape (num_examples, length), int32
        Token ids, ``<s>`` first.
    targets : numpy.ndarray, shape (num_examples, length), int32
        The token after each position.
    is_trigger : numpy.ndarray, shape (num_examples, length), bool
        True where the input token is a trigger: the queries whose target is a back-copy.

    Raises
    ------
    ValueError
        If a size is out of range, ``table`` is not square with rows summing to 1, or a
        trigger is not a token id other than ``<s>``.
    """
    num_examples = _checks.integer(num_examples, "num_examples", low=1)
    length = _checks.integer(length, "length", low=3)
    table = _checks.float_array(table, "table", ndim=2)
    vocab_size = table.shape[0]
    if table.shape != (vocab_size, vocab_size) or not np.allclose(table.sum(axis=1), 1):
        raise ValueError(f"table must be a square matrix whose rows sum to 1, got shape "
                         f"{table.shape}")
    triggers = np.unique(_checks.int_array(triggers, "triggers", ndim=1, low=1,
                                           high=vocab_size - 1))
    if len(triggers) >= vocab_size - 1:
        raise ValueError(f"triggers must leave some tokens ordinary, got {len(triggers)} "
                         f"of {vocab_size - 1}")
    rng = _checks.generator(rng)
    ordinary = np.setdiff1d(np.arange(1, vocab_size), triggers)
    ids = np.zeros((num_examples, length + 1), np.int32)
    ids[:, 1] = rng.choice(ordinary, size=num_examples)
    cumulative = np.cumsum(table, axis=1)
    for t in range(1, length):
        current = ids[:, t]
        drawn = (rng.random(num_examples)[:, None] > cumulative[current]).sum(axis=1)
        drawn = np.minimum(drawn, vocab_size - 1)           # rounding of the last cumsum
        ids[:, t + 1] = np.where(np.isin(current, triggers), ids[:, t - 1], drawn)
    return ids[:, :-1], ids[:, 1:], np.isin(ids[:, :-1], triggers)
