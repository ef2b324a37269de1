"""Execute every chapter in a fresh kernel and report wall time, peak memory and throughput.

Each chapter runs twice as it runs by default and twice with the vector instructions capped to
AVX2 (tools/cpu_paths.py: NumPy's loops and OpenBLAS as on a CPU without AVX-512), the two
paths in turns; the table gives the faster time of each path, the largest peak memory and, for
the chapters that train, the training throughput they report (sequence steps per second, see
``helpers.claims.report``). Times are also given as multiples of F, the wall time of
``import keras, tensorflow`` in a fresh Python process measured in the same run (the median
of one sample before each chapter and one at the end): seconds drift with the machine and the
hour, a ratio to F measured alongside does much less. Writes the table into README.md and
status.md (between the bench markers; the rest of status.md is written by hand and by
tools/robustness.py) and the roadmap table into intro.md. Not a test: numbers depend on the
machine (tests/test_status.py checks the ratios against the targets). Run it through
``python3.11 tools/course.py bench``; ``.venv/bin/python tools/benchmark.py --no-lighthouse``
times the chapters only and leaves the Lighthouse table of status.md as it is;
``.venv/bin/python tools/benchmark.py --status`` runs nothing and rewrites only the notes under
status.md's table (``notes``), keeping the measured lines, after their wording changed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import cpu_paths, lighthouse  # noqa: E402
from tools.execute import run  # noqa: E402
from tools.markers import block, replace_block  # noqa: E402
from tools.toc import toc_notebooks  # noqa: E402

PEAK_CODE = ("import resource, sys\n"
             "_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
             "print(_kb / 1024 / (1024 if sys.platform == 'darwin' else 1))")
VERSIONS_CODE = ("import importlib.metadata as m, platform\n"
                 "print(platform.python_version(), m.version('numpy'), end=' ')\n"
                 "try:\n    print(m.version('tensorflow-cpu'))\n"
                 "except m.PackageNotFoundError:\n    print(m.version('tensorflow'))")
# Targets, as multiples of F: every chapter within TARGET_RATIO, the course on average within
# TARGET_MEAN_RATIO (tests/test_status.py checks them); every kernel under TARGET_MB.
TARGET_RATIO, TARGET_MEAN_RATIO, TARGET_MB = 5.0, 3.5, 1024
IMPORT_CODE = "import keras, tensorflow"
REPEATS = 3  # runs of each chapter on each path; the fastest counts (load only adds time)
CPU_PATHS = ("native", "avx2")
THROUGHPUT_SUFFIX = "sequence_steps_per_second"
MHA_SHAPE = {"d_model": 64, "num_heads": 8, "key_dim": 8}
MHA_LENGTHS = (64, 256, 1024)


def title(path: Path) -> str:
    """The chapter's title: the first line of its first cell, without the '#'."""
    nb = nbformat.read(path, as_version=4)
    return nb.cells[0].source.splitlines()[0].lstrip("# ").strip()


def stdout(cell) -> str:
    """All that a cell printed (the kernel may send it in several chunks)."""
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


def execute(path: Path, cpu: str = "native") -> tuple[float, float, str, float | None]:
    """Run one notebook top to bottom on the ``cpu`` path (tools/cpu_paths.py).

    Returns (seconds, peak MB of the kernel, versions, training throughput or None).
    """
    nb = nbformat.read(path, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell(VERSIONS_CODE), nbformat.v4.new_code_cell(PEAK_CODE)]
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "metrics.jsonl"
        env = {"COURSE_METRICS": str(metrics), **cpu_paths.environment(cpu)}
        start = time.perf_counter()
        run(nb, path.parent, env=env)
        seconds = time.perf_counter() - start
        records = [json.loads(line) for line in metrics.read_text().splitlines()] \
            if metrics.exists() else []
    throughput = [r["value"] for r in records if r["name"].endswith(THROUGHPUT_SUFFIX)]
    peak_mb = float(stdout(nb.cells[-1]))
    versions = stdout(nb.cells[-2]).strip()
    return seconds, peak_mb, versions, (sum(throughput) if throughput else None)


def import_seconds() -> float:
    """One sample of F: the wall time of ``import keras, tensorflow`` in a fresh process."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORT_CODE], check=True, capture_output=True)
    return time.perf_counter() - start


def measure(path: Path) -> tuple[dict[str, float], float, str, float | None]:
    """The fastest time on each CPU path, the largest peak memory and the median throughput
    (of the default path) over REPEATS runs per path, the paths in turns."""
    runs = {cpu: [] for cpu in CPU_PATHS}
    for _ in range(REPEATS):
        for cpu in CPU_PATHS:
            runs[cpu].append(execute(path, cpu))
    rates = [r[3] for r in runs["native"] if r[3] is not None]
    every = [r for cpu in CPU_PATHS for r in runs[cpu]]
    return ({cpu: min(r[0] for r in runs[cpu]) for cpu in CPU_PATHS},
            max(r[1] for r in every), every[-1][2],
            statistics.median(rates) if rates else None)


def mha_timings() -> str:
    """Looped vs vectorised NumPy multi-head attention, and NumPy vs Keras, as a table."""
    import numpy as np  # noqa: PLC0415 - the chapters are timed before this imports anything

    from helpers._tensorflow import keras  # noqa: PLC0415
    from helpers.attention_layers import MultiHeadAttention  # noqa: PLC0415
    from helpers.timing import best_times  # noqa: PLC0415

    rng = np.random.default_rng(0)
    lines = ["| 길이 n | NumPy 루프 (ms) | NumPy 벡터화 (ms) | 루프/벡터화 | Keras (ms) |",
             "|---:|---:|---:|---:|---:|"]
    for n in MHA_LENGTHS:
        layer = keras.layers.MultiHeadAttention(num_heads=MHA_SHAPE["num_heads"],
                                                key_dim=MHA_SHAPE["key_dim"])
        x = rng.normal(size=(1, n, MHA_SHAPE["d_model"])).astype("float32")
        layer(x, x)
        looped = MultiHeadAttention.from_keras(layer, vectorized=False)
        vectorized = MultiHeadAttention.from_keras(layer, vectorized=True)
        best = best_times({"loop": partial(looped, x, x), "vec": partial(vectorized, x, x),
                           "keras": partial(layer, x, x)}, repeats=5, min_total=0)
        t_loop, t_vec, t_keras = best["loop"], best["vec"], best["keras"]
        lines.append(f"| {n} | {t_loop * 1e3:.2f} | {t_vec * 1e3:.2f} | "
                     f"{t_loop / t_vec:.2f} | {t_keras * 1e3:.2f} |")
    shape = ", ".join(f"{k}={v}" for k, v in MHA_SHAPE.items())
    return "\n".join(lines) + (f"\n\n(batch 1, {shape}, float32, CPU 시간; "
                               "`helpers.timing.best_times`로 번갈아 5차례, 가장 빠른 값)")


def table(rows: list[tuple[str, dict, float, float | None]], f_seconds: float) -> str:
    """The benchmark table: seconds, multiples of F on both CPU paths, peak MB and throughput
    of every chapter."""
    lines = ["| 장 | 실행 시간 (초) | F의 배수 | AVX2로 제한 (F의 배수) | 최대 메모리 (MB) | "
             "학습 처리량 (시퀀스·시점/초) |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {name} | {sec['native']:.1f} | {sec['native'] / f_seconds:.2f} | "
              f"{sec['avx2'] / f_seconds:.2f} | {mb:.0f} | "
              f"{'—' if rate is None else f'{rate:,.0f}'} |" for name, sec, mb, rate in rows]
    means = [statistics.mean(r[1][cpu] / f_seconds for r in rows) for cpu in CPU_PATHS]
    lines.append(f"| 합계 (배수는 평균) | {sum(r[1]['native'] for r in rows):.1f} | "
                 f"{means[0]:.2f} | {means[1]:.2f} | | |")
    return "\n".join(lines)


def f_note(f_seconds: float, samples: int) -> str:
    return (f"F = `{IMPORT_CODE}`의 시간 {f_seconds:.2f}초(새 Python 프로세스에서 {samples}회 잰 "
            "값의 중앙값: 장마다 그 장을 재기 전에 한 번, 끝에 한 번)")


def roadmap(times: dict[str, tuple[float, float]]) -> str:
    """The intro's roadmap table: question, prerequisites and run time of every chapter.

    ``times`` maps each chapter's toc path (``chapters/NN_name``) to its measured seconds and
    their multiple of F.
    """
    import yaml  # noqa: PLC0415

    entries = yaml.safe_load((ROOT / "roadmap.yml").read_text(encoding="utf-8"))
    lines = ["| 장 | 이 장이 답하는 질문 | 먼저 알면 좋은 것 | 실행 시간 |", "|---|---|---|---:|"]
    for number, path in enumerate(toc_notebooks(), start=1):
        key = path.with_suffix("").as_posix()
        entry, (seconds, ratio) = entries[key], times[key]
        lines.append(f"| [{number}. {title(ROOT / path)}]({key}.ipynb) | {entry['question']} | "
                     f"{entry['prerequisites']} | {seconds:.0f}초 ({ratio:.1f} F) |")
    return "\n".join(lines)


def notes() -> str:
    """The paragraph under status.md's table: what its columns mean and the targets."""
    return (f"실행 시간은 {REPEATS}회 실행 가운데 가장 빠른 실행, "
            "최대 메모리는 그중 가장 큰 값입니다. "
            "‘AVX2로 제한’은 같은 장을 AVX-512가 없는 CPU처럼 NumPy와 OpenBLAS의 벡터 명령을 "
            "AVX2까지로 막고(`tools/cpu_paths.py`) 실행한 시간입니다. "
            "초로 잰 시간은 기계와 시간대에 따라 달라지므로(같은 기계에서도 TensorFlow가 4분의 1쯤 "
            "느려지는 때가 있습니다), 같은 실행에서 잰 F의 배수로도 적습니다. 목표는 장마다 "
            f"{TARGET_RATIO:g} F 이하, 모든 장의 평균 {TARGET_MEAN_RATIO:g} F 이하, 장마다 "
            f"{TARGET_MB} MB 미만이고, 테스트는 배수로 확인합니다. "
            "학습 처리량은 함께 학습한 모델 수 × 모델마다 학습한 시퀀스 수 × 시퀀스 길이 × "
            "에포크 수를 학습 시간으로 나눈 값입니다. 여러 모델을 함께 학습하는 장은 그 모델들을 "
            "합친 값이고, 장마다 모델이 몇 개인지는 아래 시드별 결과 표의 "
            f"`chN_{THROUGHPUT_SUFFIX}` 행에 적혀 있습니다.")


def status_text(rows, f_seconds: float, samples: int, versions: str, when: str) -> str:
    python, numpy, tensorflow = versions.split()
    machine = f"{platform.system()} {platform.machine()}, 코어 {os.cpu_count()}개"
    return (f"- 마지막 실행: {when}\n- 기계: {machine}, CPU만 사용\n"
            f"- Python {python}, NumPy {numpy}, TensorFlow {tensorflow}\n"
            f"- {f_note(f_seconds, samples)}\n\n"
            f"{table(rows, f_seconds)}\n\n{notes()}")


def rewrite_notes(status: Path = ROOT / "status.md") -> str:
    """Replace the last paragraph of ``status``'s bench block by :func:`notes`, keeping every
    measured line above it; run no chapter. Returns the new block."""
    measured, _, _ = block(status, "bench").rpartition("\n\n")
    if not measured:
        raise SystemExit(f"{status.name}'s bench block has no notes under its table: run "
                         "python3.11 tools/course.py bench")
    text = f"{measured}\n\n{notes()}"
    replace_block(status, "bench", text)
    return text


def main() -> None:
    if "--status" in sys.argv:
        print(rewrite_notes())
        return
    rows, versions, f_samples = [], "", []
    for path in toc_notebooks():
        f_samples.append(import_seconds())  # F interleaved with the chapters: drift hits both
        seconds, peak_mb, versions, rate = measure(ROOT / path)
        rows.append((title(ROOT / path), seconds, peak_mb, rate))
        print(f"{path.stem:40s} {seconds['native']:6.1f} s (AVX2 {seconds['avx2']:6.1f} s) "
              f"{peak_mb:7.0f} MB" + (f" {rate:10,.0f} steps/s" if rate else "")
              + f"   (F sample {f_samples[-1]:.2f} s)", flush=True)
    f_samples.append(import_seconds())
    f_seconds = statistics.median(f_samples)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = table(rows, f_seconds) + f"\n\n({when}, {platform.system()} {platform.machine()}, " \
        f"Python/NumPy/TensorFlow {versions.replace(' ', ' / ')}; 경로마다 {REPEATS}회 실행 " \
        f"가운데 가장 빠른 실행; {f_note(f_seconds, len(f_samples))})"
    mha = mha_timings()
    replace_block(ROOT / "README.md", "bench", text)
    replace_block(ROOT / "README.md", "bench-mha", mha)
    replace_block(ROOT / "status.md", "bench",
                  status_text(rows, f_seconds, len(f_samples), versions, when))
    replace_block(ROOT / "status.md", "bench-mha", mha)
    replace_block(ROOT / "intro.md", "roadmap",  # rounded as status.md shows them
                  roadmap({path.with_suffix("").as_posix():
                           (round(row[1]["native"], 1), round(row[1]["native"] / f_seconds, 2))
                           for path, row in zip(toc_notebooks(), rows)}))
    print(text, mha, sep="\n\n")
    for cpu in CPU_PATHS:
        ratios = {r[0]: r[1][cpu] / f_seconds for r in rows}
        over = [name for name, ratio in ratios.items() if ratio > TARGET_RATIO]
        if over:
            print(f"{cpu}: over the per-chapter target ({TARGET_RATIO:g} F): {over}",
                  file=sys.stderr)
        if statistics.mean(ratios.values()) > TARGET_MEAN_RATIO:
            print(f"{cpu}: over the course's target: mean "
                  f"{statistics.mean(ratios.values()):.2f} F > {TARGET_MEAN_RATIO:g} F",
                  file=sys.stderr)
    heavy = [r[0] for r in rows if r[2] > TARGET_MB]
    if heavy:
        print(f"over {TARGET_MB} MB: {heavy}", file=sys.stderr)
    if "--no-lighthouse" not in sys.argv:  # the phone scores are kept as they are
        lighthouse.update_status()  # the built site's speed on a phone, per page, into status.md


if __name__ == "__main__":
    main()
