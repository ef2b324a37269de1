"""helpers.timing: CPU time, in turns, best of each, one BLAS thread."""

import sys
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from helpers import timing
from helpers.timing import best_times


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def burn(seconds: float) -> None:
    """Keep the CPU busy for ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_each_round_gives_every_function_a_turn_of_two_calls_starting_one_later():
    order = []
    calls = {name: (lambda name=name: order.append(name)) for name in "abc"}
    best_times(calls, repeats=3, min_total=0)
    assert order == list("aabbcc" "bbccaa" "ccaabb")


@pytest.mark.skipif(sys.platform == "win32", reason="wall-clock time on Windows")
def test_time_the_process_does_not_run_is_not_counted():
    """A call that waits (as if another program held the core) is charged its work only."""
    times = best_times({"waits": lambda: (time.sleep(0.03), burn(0.002))}, repeats=2)
    assert 0.002 <= times["waits"] < 0.015


def test_a_disturbed_call_does_not_reach_the_best_time():
    """The third call of ``disturbed`` does twenty times its usual work."""
    count = {"n": 0}

    def disturbed():
        count["n"] += 1
        burn(0.04 if count["n"] == 3 else 0.002)

    times = best_times({"steady": lambda: burn(0.002), "disturbed": disturbed}, repeats=2)
    assert 0.002 <= times["disturbed"] < 0.01
    assert abs(times["disturbed"] - times["steady"]) < 0.005


def test_min_total_makes_rounds_go_on_until_that_much_time_was_timed():
    counts = {"fast": 0, "slow": 0}

    def fast():
        counts["fast"] += 1

    def slow():
        counts["slow"] += 1
        burn(0.005)

    best_times({"fast": fast, "slow": slow}, repeats=1, min_total=0)
    assert counts == {"fast": 2, "slow": 2}  # one turn of two calls
    counts.update(fast=0, slow=0)
    best_times({"fast": fast, "slow": slow}, repeats=1, min_total=0.05)
    assert counts["fast"] == counts["slow"] >= 2 * 5  # 5 turns of slow's 0.01 s or more


def test_blas_threads_are_limited_while_timing_and_restored_after():
    before = blas_threads()
    seen = []
    best_times({"probe": lambda: seen.append(blas_threads())}, repeats=1, min_total=0)
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before
    best_times({"probe": lambda: seen.append(blas_threads())}, repeats=1, min_total=0,
               threads=None)
    assert seen[-1] == before


def test_the_clock_is_cpu_time_except_on_windows():
    expected = time.perf_counter if sys.platform == "win32" else time.process_time
    assert timing.CLOCK is expected


def test_returns_python_floats_keyed_like_the_calls():
    x = np.ones((8, 8))
    times = best_times({(8, "matmul"): lambda: x @ x}, repeats=1, min_total=0)
    assert list(times) == [(8, "matmul")] and type(times[(8, "matmul")]) is float


@pytest.mark.parametrize("calls, error, message", [
    ([lambda: None], TypeError, "calls must be a mapping of name to callable; got list"),
    ({}, ValueError, "at least one function"),
    ({"a": 3}, TypeError, r"not callable: \['a'\]"),
])
def test_bad_calls(calls, error, message):
    with pytest.raises(error, match=message):
        best_times(calls)


@pytest.mark.parametrize("options, error, message", [
    ({"repeats": 0}, ValueError, r"repeats must be an integer in \[1, inf\); got 0"),
    ({"repeats": 2.0}, TypeError, "repeats must be an integer"),
    ({"min_total": -1}, ValueError, "min_total must be a finite number"),
    ({"threads": 0}, ValueError, "threads must be an integer"),
])
def test_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        best_times({"a": lambda: None}, **options)
