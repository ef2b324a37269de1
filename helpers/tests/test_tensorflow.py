"""helpers._tensorflow: the settings TensorFlow starts with, and XLA's notice filtered out."""

import os
import subprocess
import sys

from helpers._tensorflow import SETTINGS, without_xla_notice


def _run(code: str, **env) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**clean, **env}, check=True)
    return result.stdout.strip()


def test_import_helpers_sets_the_settings_without_importing_tensorflow():
    code = ("import os, sys, helpers; print('tensorflow' in sys.modules, "
            "os.environ['TF_CPP_MIN_LOG_LEVEL'], os.environ['TF_ENABLE_ONEDNN_OPTS'], "
            "os.environ['TF_NUM_INTRAOP_THREADS'])")
    assert _run(code) == "False 3 0 1"


def test_a_value_the_user_set_wins():
    code = "import os, helpers; print(os.environ['TF_ENABLE_ONEDNN_OPTS'])"
    assert _run(code, TF_ENABLE_ONEDNN_OPTS="1") == "1"


def test_tensorflow_starts_one_thread_per_operation_unless_the_user_says_otherwise():
    # Eigen's intra-op pool is started with TensorFlow's CPU device: one thread each
    code = ("import os; from helpers._tensorflow import tf; tf.constant(1.0) + 1; "
            "print(len(os.listdir('/proc/self/task')))")
    ours, four = int(_run(code)), int(_run(code, TF_NUM_INTRAOP_THREADS="4"))
    assert four - ours == 3, (ours, four)


def test_keras_from_helpers_is_keras_with_tensorflow_quiet():
    code = ("from helpers._tensorflow import keras, tf; import keras as k; "
            "print(keras is k, keras.backend.backend(), tf.get_logger().level)")
    assert _run(code) == "True tensorflow 40"


def test_xla_notice_is_dropped_and_everything_else_on_stderr_kept(capfd):
    with without_xla_notice():
        os.write(2, b"WARNING: All log messages before absl::InitializeLog() is called are "
                    b"written to STDERR\n")
        os.write(2, b"I0000 00:00:1795411403.412833   29268 device_compiler.h:196] Compiled "
                    b"cluster using XLA!  This line is logged at most once for the lifetime "
                    b"of the process.\n")
        os.write(2, b"E0000 something real went wrong\n")
    assert capfd.readouterr().err == "E0000 something real went wrong\n"
