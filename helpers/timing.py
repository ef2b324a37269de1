"""Timing that holds on a busy machine: CPU time, in turns, best of each, one BLAS thread.

A reader's computer always runs something else beside the notebook: a browser, an update, a
build. Four rules keep a comparison of times from turning upside down when it does:

1. **CPU time, not wall-clock time.** ``time.process_time`` counts only the time this process
   ran on a CPU, so the moments another program holds the core are not counted.
2. **Take turns.** The functions being compared are called in turns (a, b, c, then b, c, a,
   ...), not one after the other, so what still changes while they are measured (the clock
   speed, a neighbour sharing the core's caches) reaches every one of them alike. Each turn
   calls its function twice in a row: the second call finds the caches the first one warmed,
   and whatever a first call prepares (memory, a lookup) ready.
3. **Take the best.** Disturbances only ever add time, so the fastest call is the one least
   disturbed.
4. **One BLAS thread.** NumPy's matrix products run on several threads of its BLAS library
   (OpenBLAS). When another program holds a core, one thread waits for the other at every
   product, and a loop of small products can become tens of times slower. With one thread,
   the work is the same whatever the machine is doing. threadpoolctl sets the limit for the
   duration of the measurement.

Chapter 7 (attention's cost) and chapter 9 (the KV cache) measure with :func:`best_times`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping

from threadpoolctl import threadpool_limits

from ._checks import positive_int, real

__all__ = ["best_times"]

# CPU time of the process; wall-clock time on Windows, whose CPU-time clock is too coarse.
CLOCK = time.perf_counter if sys.platform == "win32" else time.process_time


def best_times(calls: Mapping, *, repeats: int = 3, min_total: float = 0.1,
               threads: int | None = 1) -> dict:
    """The fastest time of each call, measured in turns.

    Parameters
    ----------
    calls : mapping of name to callable
        The functions to compare, each called with no arguments. Names can be any hashable
        (a label, or a tuple such as ``(n, "cached")``).
    repeats : int, default 3
        Each function gets at least this many turns of two timed calls.
    min_total : float, default 0.1
        Seconds: rounds go on until all the calls together have run at least this long, so
        that fast functions are timed many times.
    threads : int or None, default 1
        Threads NumPy's BLAS may use while timing; None leaves the library's own setting.

    Returns
    -------
    dict
        ``{name: seconds}``, a Python float for each call: the CPU time of its fastest run.
        A function whose work runs on several threads (Keras, or BLAS with ``threads=None``)
        is charged the CPU time of all of them.

    Raises
    ------
    TypeError
        If ``calls`` is not a mapping of callables, or a number has the wrong type.
    ValueError
        If ``calls`` is empty, ``repeats`` or ``threads`` is not positive, or ``min_total``
        is negative.

    Notes
    -----
    Each round gives every function one turn of two calls, starting one later than the round
    before, so that no function always runs first. The clock is ``time.process_time``, except
    on Windows, where it advances only every 15.6 ms, too coarse for a call of a millisecond:
    there it is ``time.perf_counter``. Taught in chapter 7; used for the KV cache's speed-up in
    chapter 9.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.ones((64, 64))
    >>> t = best_times({"matmul": lambda: x @ x, "sum": lambda: x.sum()}, min_total=0.01)
    >>> sorted(t), t["matmul"] > 0
    (['matmul', 'sum'], True)
    """
    functions, threads = _callables(calls), _threads(threads)
    repeats = positive_int(repeats, "repeats")
    min_total = real(min_total, "min_total", low=0.0)
    names = list(functions)
    best, total, rounds = dict.fromkeys(names, float("inf")), 0.0, 0
    with threadpool_limits(limits=threads, user_api="blas"):
        while rounds < repeats or total < min_total:
            for i in range(len(names)):
                name = names[(rounds + i) % len(names)]  # each round starts one later
                for _ in range(2):  # the second call finds what the first one warmed
                    start = CLOCK()
                    functions[name]()
                    elapsed = CLOCK() - start
                    best[name], total = min(best[name], elapsed), total + elapsed
            rounds += 1
    return best


def _callables(calls) -> dict:
    if not isinstance(calls, Mapping):
        raise TypeError(f"calls must be a mapping of name to callable; got "
                        f"{type(calls).__name__}")
    if not calls:
        raise ValueError("calls must name at least one function; got an empty mapping")
    wrong = [name for name, fn in calls.items() if not callable(fn)]
    if wrong:
        raise TypeError(f"calls must map names to callables; not callable: {wrong}")
    return dict(calls)


def _threads(threads) -> int | None:
    return None if threads is None else positive_int(threads, "threads")
