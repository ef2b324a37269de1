"""Execute every chapter in a fresh kernel and report wall time and peak memory.

Writes the table into README.md (between the bench markers) and regenerates status.md, the
site's page about when and with what the notebooks were last executed. Not a test: numbers
depend on the machine. Run it through ``python3.11 tools/course.py bench``.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.execute import run  # noqa: E402
from tools.toc import toc_notebooks  # noqa: E402
PEAK_CODE = ("import resource, sys\n"
             "_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "print(_kb / 1024 / (1024 if sys.platform == 'darwin' else 1))")
VERSIONS_CODE = ("import importlib.metadata as m, platform\n"
                 "print(platform.python_version(), m.version('numpy'), end=' ')\n"
                 "try:\n    print(m.version('tensorflow-cpu'))\n"
                 "except m.PackageNotFoundError:\n    print(m.version('tensorflow'))")
TARGET_SECONDS, TARGET_MB = 30, 1024
MHA_SHAPE = {"d_model": 64, "num_heads": 8, "key_dim": 8}
MHA_LENGTHS = (64, 256, 1024)


def title(path: Path) -> str:
    """The chapter's title: the first line of its first cell, without the '#'."""
    nb = nbformat.read(path, as_version=4)
    return nb.cells[0].source.splitlines()[0].lstrip("# ").strip()


def stdout(cell) -> str:
    """All that a cell printed (the kernel may send it in several chunks)."""
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


def execute(path: Path) -> tuple[float, float, str]:
    """Run one notebook top to bottom; return (seconds, peak MB of the kernel, versions)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(VERSIONS_CODE), nbformat.v4.new_code_cell(PEAK_CODE)]
    start = time.perf_counter()
    run(nb, path.parent)
    seconds = time.perf_counter() - start
    peak_mb = float(stdout(nb.cells[-1]))
    versions = stdout(nb.cells[-2]).strip()
    return seconds, peak_mb, versions


def best_seconds(fn, repeats: int = 5) -> float:
    """The fastest of ``repeats`` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def mha_timings() -> str:
    """Looped vs vectorised NumPy multi-head attention, and NumPy vs Keras, as a table."""
    import os  # noqa: PLC0415
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from helpers.attention import MultiHeadAttention  # noqa: PLC0415

    rng = np.random.default_rng(0)
    lines = ["| 길이 n | NumPy 반복문 (ms) | NumPy 벡터화 (ms) | 반복문/벡터화 | Keras (ms) |",
             "|---:|---:|---:|---:|---:|"]
    for n in MHA_LENGTHS:
        layer = keras.layers.MultiHeadAttention(num_heads=MHA_SHAPE["num_heads"],
                                                key_dim=MHA_SHAPE["key_dim"])
        x = rng.normal(size=(1, n, MHA_SHAPE["d_model"])).astype("float32")
        layer(x, x)
        looped = MultiHeadAttention.from_keras(layer, vectorized=False)
        vectorized = MultiHeadAttention.from_keras(layer, vectorized=True)
        t_loop = best_seconds(lambda: looped(x, x))
        t_vec = best_seconds(lambda: vectorized(x, x))
        t_keras = best_seconds(lambda: layer(x, x))
        lines.append(f"| {n} | {t_loop * 1e3:.2f} | {t_vec * 1e3:.2f} | "
                     f"{t_loop / t_vec:.2f} | {t_keras * 1e3:.2f} |")
    shape = ", ".join(f"{k}={v}" for k, v in MHA_SHAPE.items())
    return "\n".join(lines) + f"\n\n(batch 1, {shape}, float32, CPU; 5회 중 가장 빠른 값)"


def table(rows: list[tuple[str, float, float]]) -> str:
    lines = ["| 장 | 실행 시간 (초) | 최대 메모리 (MB) |", "|---|---:|---:|"]
    lines += [f"| {name} | {sec:.1f} | {mb:.0f} |" for name, sec, mb in rows]
    return "\n".join(lines)


def update_readme(text: str, block: str = "bench") -> None:
    readme = ROOT / "README.md"
    pattern = re.compile(rf"(<!-- {block}:start -->\n).*?(<!-- {block}:end -->)", re.S)
    content = readme.read_text(encoding="utf-8")
    if not pattern.search(content):
        raise SystemExit(f"README.md has no <!-- {block}:start --> ... <!-- {block}:end --> block")
    readme.write_text(pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), content),
                      encoding="utf-8")


def write_status(rows, versions: str, when: str, mha: str) -> None:
    python, numpy, tensorflow = versions.split()
    machine = f"{platform.system()} {platform.machine()}, 코어 {os.cpu_count()}개"
    (ROOT / "status.md").write_text(
        "# 실행 환경과 실행 기록\n\n"
        "이 페이지는 `python3.11 tools/course.py bench`가 만듭니다. 모든 장을 새 커널에서 처음부터\n"
        "끝까지 실행하고 걸린 시간과 커널 프로세스의 최대 메모리(RSS)를 잽니다.\n\n"
        f"- 마지막 실행: {when}\n- 기계: {machine}, CPU만 사용\n"
        f"- Python {python}, NumPy {numpy}, TensorFlow {tensorflow}\n\n"
        f"{table(rows)}\n\n"
        f"목표는 장마다 {TARGET_SECONDS}초, {TARGET_MB} MB 미만입니다(코어 2개 기계 기준).\n\n"
        "## 멀티 헤드 어텐션: 반복문, 벡터화, Keras\n\n"
        "3장의 NumPy `MultiHeadAttention`을 헤드마다 도는 반복문과 reshape/transpose로 한 번에 "
        "계산하는 벡터화 방식으로 실행하고, 같은 가중치의 Keras 레이어와 비교합니다.\n\n"
        f"{mha}\n",
        encoding="utf-8")


def main() -> None:
    rows, versions = [], ""
    for path in toc_notebooks():
        seconds, peak_mb, versions = execute(ROOT / path)
        rows.append((title(ROOT / path), seconds, peak_mb))
        print(f"{path.stem:40s} {seconds:6.1f} s {peak_mb:7.0f} MB", flush=True)
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = table(rows) + f"\n\n({when}, {platform.system()} {platform.machine()}, " \
                         f"Python/NumPy/TensorFlow {versions.replace(' ', ' / ')})"
    mha = mha_timings()
    update_readme(text)
    update_readme(mha, block="bench-mha")
    write_status(rows, versions, when, mha)
    print(text, mha, sep="\n\n")
    over = [r for r in rows if r[1] > TARGET_SECONDS or r[2] > TARGET_MB]
    if over:
        print(f"over the per-chapter target: {[r[0] for r in over]}", file=sys.stderr)


if __name__ == "__main__":
    main()
