"""Run code as a CPU with fewer vector instructions would: AVX2 instead of AVX-512.

The same chapter gives slightly different numbers on different CPUs, because the libraries
pick their kernels by the instructions the processor has. A machine with AVX-512 can check the
AVX2 path that most readers' laptops take, by capping each library's choice through the
environment of the process that runs the chapter:

- ``ONEDNN_MAX_CPU_ISA=AVX2``: TensorFlow's oneDNN kernels (used with ``TF_ENABLE_ONEDNN_OPTS=1``;
  TensorFlow's own Eigen kernels are compiled for one instruction set and do not dispatch).
- ``NPY_DISABLE_CPU_FEATURES``: NumPy's own loops (exp, sums, comparisons); the features named
  are those this NumPy dispatches to and this CPU has beyond AVX2. Naming one the CPU lacks
  would make NumPy warn, so the list is read from NumPy itself.
- ``OPENBLAS_CORETYPE=Haswell``: the kernels of NumPy's OpenBLAS (matrix products).

A machine without AVX-512 already runs the AVX2 path; the reverse cannot be emulated, which is
why outputs that depend on a trained model's last digits are never compared exactly
(CONTRIBUTING.md, "nbval이 비교하는 것").

    .venv/bin/python tools/cpu_paths.py avx2   # print the variables, e.g. to export them
"""

from __future__ import annotations

import os
import platform
import sys

CHOICES = ("native", "avx2")
# NumPy's dispatch targets beyond AVX2: the x86-64-v4 group (NumPy 2.4 and later) and the
# AVX-512 features of older NumPy (AVX512F ... AVX512_SPR).
_BEYOND_AVX2 = ("X86_V4", "AVX512")


def numpy_features_beyond_avx2() -> list[str]:
    """The NumPy dispatch targets this CPU has beyond AVX2, in NumPy's order.

    In a process that is already capped, NumPy reports the features it was told to disable
    as absent; they are the CPU's all the same, so those named in this process's
    ``NPY_DISABLE_CPU_FEATURES`` are kept (a capped run's children stay capped).
    """
    from numpy._core._multiarray_umath import (  # noqa: PLC0415 - only when capping
        __cpu_dispatch__,
        __cpu_features__,
    )

    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split()
    return [name for name in __cpu_dispatch__ if name.startswith(_BEYOND_AVX2)
            and (__cpu_features__.get(name) or name in disabled)]


def environment(cpu: str) -> dict[str, str]:
    """The variables that make a new process take the ``cpu`` path ("native": none).

    Raises ValueError for an unknown ``cpu``, or for "avx2" on a processor that is not x86-64.
    """
    if cpu not in CHOICES:
        raise ValueError(f"cpu must be one of {CHOICES}; got {cpu!r}")
    if cpu == "native":
        return {}
    if platform.machine().lower() not in ("x86_64", "amd64"):
        raise ValueError(f"the avx2 path exists on x86-64 processors only; this is "
                         f"{platform.machine()}")
    return {"ONEDNN_MAX_CPU_ISA": "AVX2",
            "NPY_DISABLE_CPU_FEATURES": " ".join(numpy_features_beyond_avx2()),
            "OPENBLAS_CORETYPE": "Haswell"}


if __name__ == "__main__":
    for name, value in environment(sys.argv[1] if len(sys.argv) > 1 else "avx2").items():
        print(f"export {name}='{value}'")
