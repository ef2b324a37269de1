"""TensorFlow's settings, in one place, and Keras imported with them (private).

The settings are environment variables TensorFlow reads when it starts, so they must be set
before it is imported. ``import helpers`` sets them (cheaply, without importing TensorFlow),
and every module of helpers that needs Keras imports it from here::

    from ._tensorflow import keras, tf

which applies them again and then imports TensorFlow. Values the user has already set win.

- ``TF_CPP_MIN_LOG_LEVEL=3``: TensorFlow's C++ start-up messages stay out of the chapters.
- ``TF_ENABLE_ONEDNN_OPTS=0``: the course's default CPU kernel path (Eigen). ``1`` selects
  oneDNN's kernels; ``tools/course.py robustness`` runs the chapters on both.
- ``TF_NUM_INTRAOP_THREADS=1``: each operation runs on one thread. The course's models are
  small, so splitting an operation across cores gains nothing on a quiet machine (the
  benchmark's training throughput is the same), while the threads that wait on each other
  burn CPU time, which on a machine busy with other work (a reader's browser) makes
  training about a quarter slower. With one thread an operation also adds its numbers in
  the same order whatever the number of cores. TensorFlow still runs independent
  operations side by side (``TF_NUM_INTEROP_THREADS`` is left alone).
- TensorFlow's Python logger at ERROR.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import tempfile
import weakref

# Also ``keras`` and ``tf``, made by __getattr__ below.
__all__ = ["SETTINGS", "apply_settings", "as_graph", "without_xla_notice"]

SETTINGS = {"TF_CPP_MIN_LOG_LEVEL": "3", "TF_ENABLE_ONEDNN_OPTS": "0",
            "TF_NUM_INTRAOP_THREADS": "1"}


def apply_settings() -> None:
    """Set the variables of ``SETTINGS`` that are not set yet; imports nothing."""
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)


def __getattr__(name: str):
    """``keras`` and ``tf``: imported on first use, after :func:`apply_settings`."""
    if name not in ("keras", "tf"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    apply_settings()
    tf = importlib.import_module("tensorflow")
    tf.get_logger().setLevel("ERROR")
    modules = {"keras": importlib.import_module("keras"), "tf": tf}
    globals().update(modules)
    return modules[name]


# What TensorFlow 2.20 writes to the process's stderr when it first compiles with XLA, at
# INFO level and whatever TF_CPP_MIN_LOG_LEVEL says. A notebook would show it as output.
_XLA_NOTICE = re.compile(r"^(WARNING: All log messages before absl::InitializeLog\(\) is "
                         r"called are written to STDERR|I\d{4} .*Compiled cluster using XLA!.*)$")


@contextlib.contextmanager
def without_xla_notice():
    """Pass everything written to file descriptor 2 through, except XLA's compile notice."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = [line for line in captured.read().decode(errors="replace").splitlines()
                    if not _XLA_NOTICE.match(line)]
            if kept:
                print("\n".join(kept), file=sys.stderr)


_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def as_graph(model):
    """``model`` (inference) as one TensorFlow graph for every batch size and length.

    Called eagerly, a small model costs more in per-op overhead than in arithmetic (a GRU
    runs its time loop op by op). The graph's input signature is the model's own input
    shapes, whose batch and length axes Keras leaves open, so it is traced once per model
    and reused for every call, e.g. every step of greedy decoding.
    """
    if model not in _GRAPHS:
        keras, tf = __getattr__("keras"), __getattr__("tf")
        specs = [tf.TensorSpec(tensor.shape, keras.backend.standardize_dtype(tensor.dtype))
                 for tensor in model.inputs]
        _GRAPHS[model] = tf.function(lambda *inputs: model(list(inputs), training=False),
                                     input_signature=specs)
    return _GRAPHS[model]
