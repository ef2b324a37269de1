"""The chapters hold on another CPU's vector path and beside a busy machine.

A reader's computer is not the machine that recorded the outputs: its CPU may lack AVX-512, and
a browser always runs beside the notebook. These tests run chapters in those conditions. They
compare no outputs (nbval does that on the default path); the chapters' asserts and
``claims.check`` carry the checks, so a claim that holds only on a quiet AVX-512 machine fails
here rather than for a reader.

- Every chapter that trains, once, with TensorFlow's oneDNN kernels and NumPy capped to AVX2
  (tools/cpu_paths.py). TensorFlow's default Eigen kernels do not dispatch on the CPU's vector
  instructions, so oneDNN is the path the cap changes; nbval runs the default one.
- Every chapter that times things (calls ``helpers.timing.best_times``), with two processes
  keeping both cores busy.
"""

import os
import platform
import subprocess
import sys
import time

import nbformat
import psutil
import pytest

from tools import cpu_paths, robustness
from tools.execute import errors, run
from tools.toc import ROOT, toc_notebooks

X86 = platform.machine().lower() in ("x86_64", "amd64")
BUSY_SECONDS = 1200  # the busy processes stop by themselves, even if pytest is killed


def timing_chapters():
    return [path for path in toc_notebooks()
            if any("best_times(" in source for source in robustness.code_cells(ROOT / path))]


def errors_when_run(path, env) -> list[str]:
    nb = nbformat.read(ROOT / path, as_version=4)
    run(nb, (ROOT / path).parent, allow_errors=True, env=env)
    return errors(nb)


def test_chapters_that_time_things_are_found():
    assert {path.name[:2] for path in timing_chapters()} >= {"07", "09"}


@pytest.mark.skipif(not X86, reason="the AVX2 path exists on x86-64 processors only")
def test_the_avx2_cap_reaches_numpy_openblas_and_onednn():
    env = {**cpu_paths.environment("avx2"), "TF_ENABLE_ONEDNN_OPTS": "1",
           "ONEDNN_VERBOSE": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    probe = ("import numpy as np, threadpoolctl, tensorflow as tf\n"
             "from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__\n"
             "print('numpy', [f for f in __cpu_dispatch__ if __cpu_features__[f]])\n"
             "print('blas', [p['architecture'] for p in threadpoolctl.threadpool_info()])\n"
             "tf.matmul(tf.ones((64, 64)), tf.ones((64, 64)))\n")
    out = subprocess.run([sys.executable, "-c", probe], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=300, check=True).stdout
    numpy_line = next(line for line in out.splitlines() if line.startswith("numpy"))
    assert "AVX512" not in numpy_line and "X86_V4" not in numpy_line, numpy_line
    assert "blas ['Haswell']" in out, out[-500:]
    assert "isa:Intel AVX2" in out and "AVX-512" not in out, out[-2000:]


@pytest.mark.skipif(not X86, reason="the AVX2 path exists on x86-64 processors only")
@pytest.mark.parametrize("path", robustness.training_chapters(), ids=str)
def test_chapters_that_train_hold_on_the_avx2_path(path):
    env = {**cpu_paths.environment("avx2"), "TF_ENABLE_ONEDNN_OPTS": "1"}
    assert errors_when_run(path, env) == []


@pytest.fixture(scope="module")
def two_busy_processes():
    """Two processes that keep both cores busy; yields them, to check they really ran."""
    spin = f"import time\nend = time.time() + {BUSY_SECONDS}\nwhile time.time() < end: pass"
    busy = [psutil.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        yield busy
    finally:
        for process in busy:
            process.kill()
            process.wait()


@pytest.mark.parametrize("path", timing_chapters(), ids=str)
def test_chapters_that_time_things_hold_beside_two_busy_processes(path, two_busy_processes):
    before = [p.cpu_times().user for p in two_busy_processes]
    start = time.perf_counter()
    found = errors_when_run(path, {})
    seconds = time.perf_counter() - start
    used = [p.cpu_times().user - b for p, b in zip(two_busy_processes, before)]
    assert min(used) > 0.05 * seconds, f"the busy processes ran {used} s of {seconds:.0f} s"
    assert found == []
