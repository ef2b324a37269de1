"""tools/cpu_paths.py: the AVX2 cap is the same whether or not the process is capped already."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
X86 = platform.machine().lower() in ("x86_64", "amd64")
PROBE = ("from tools import cpu_paths; "
         "print(cpu_paths.environment('avx2')['NPY_DISABLE_CPU_FEATURES'])")


def _features(**env) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    return subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(not X86, reason="the AVX2 path exists on x86-64 processors only")
def test_a_capped_process_caps_its_children_the_same_way():
    uncapped = _features()
    assert _features(NPY_DISABLE_CPU_FEATURES=uncapped) == uncapped
