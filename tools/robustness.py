"""Run every chapter that trains under seeds 0-4 on both TensorFlow CPU kernel paths.

A chapter trains when its code calls ``claims.check`` (or ``claims.report``): those calls are
the claims its prose makes about trained models. Each such chapter is executed top to bottom
in a fresh kernel for every ``COURSE_SEED`` in 0-4 and every ``TF_ENABLE_ONEDNN_OPTS`` in 0, 1
(TensorFlow's own Eigen kernels and oneDNN's), ten runs a chapter. Every value the claims
record is collected, and the table of min, median and max beside the asserted bound is
written to ``helpers/robustness.json`` (the chapters glue the ranges from there into their
prose) and into ``status.md``. The table records a hash of each chapter's code cells, so the
tests fail when a chapter's code changed after the table was made.

    python3.11 tools/course.py robustness            # every chapter that trains
    python3.11 tools/course.py robustness chapters/05_lstm_attention_time_series.ipynb

After it, re-execute the chapters it ran (``tools/course.py execute``) so that the ranges
their pages quote are the new ones.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.execute import run  # noqa: E402
from tools.markers import replace_block  # noqa: E402
from tools.toc import toc_notebooks  # noqa: E402

TABLE = ROOT / "helpers" / "robustness.json"
STATUS = ROOT / "status.md"
SEEDS = (0, 1, 2, 3, 4)
KERNEL_PATHS = ("0", "1")  # TF_ENABLE_ONEDNN_OPTS: TensorFlow's Eigen kernels, oneDNN's
CLAIM_FUNCTIONS = {"check", "report"}


def code_cells(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def code_hash(path: Path) -> str:
    """SHA-256 of the chapter's code cells, in order; markdown and outputs do not count."""
    return hashlib.sha256(json.dumps(code_cells(path)).encode()).hexdigest()


def claimed_metrics(path: Path) -> dict[str, str]:
    """``{metric name: "check" or "report"}`` for every claim call in the chapter's code."""
    found = {}
    for source in code_cells(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics; claims are never written in them
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name not in CLAIM_FUNCTIONS:
                continue
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise ValueError(f"{path.name}: {ast.unparse(node)[:80]} - name every claim "
                                 "with a string literal, so that the tools can find it")
            found[first.value] = name
    return found


def training_chapters() -> list[Path]:
    """The toc's chapters that make claims about trained models."""
    return [path for path in toc_notebooks() if claimed_metrics(ROOT / path)]


def run_once(path: Path, seed: int, kernel_path: str) -> tuple[list[dict], list[str], float]:
    """Execute ``path`` once; return (recorded metrics, error messages, seconds)."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        metrics_file = Path(tmp) / "metrics.jsonl"
        os.environ.update(COURSE_SEED=str(seed), TF_ENABLE_ONEDNN_OPTS=kernel_path,
                          COURSE_METRICS=str(metrics_file))
        start = time.perf_counter()
        try:
            run(nb, path.parent, allow_errors=True)
        finally:
            for name in ("COURSE_SEED", "TF_ENABLE_ONEDNN_OPTS", "COURSE_METRICS"):
                os.environ.pop(name, None)
        seconds = time.perf_counter() - start
        lines = metrics_file.read_text(encoding="utf-8").splitlines() \
            if metrics_file.exists() else []
    errors = [f"cell {i}: {out.get('ename')}: {out.get('evalue', '')[:200]}"
              for i, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    return [json.loads(line) for line in lines], errors, seconds


def summarise(records: list[dict]) -> dict:
    """Per metric: the bound, every value in run order, and min/median/max."""
    metrics: dict[str, dict] = {}
    for record in records:
        entry = metrics.setdefault(record["name"], {"at_least": record["at_least"],
                                                    "at_most": record["at_most"],
                                                    "values": []})
        entry["values"].append(round(record["value"], 4))
        entry["fmt"] = record.get("fmt", ".3f")
    for entry in metrics.values():
        values = entry["values"]
        entry.update(min=min(values), median=round(statistics.median(values), 4),
                     max=max(values))
    return metrics


def measure(path: Path) -> dict:
    """Run one chapter for every seed and kernel path; return its table entry."""
    records, runs = [], []
    for seed in SEEDS:
        for kernel_path in KERNEL_PATHS:
            found, errors, seconds = run_once(ROOT / path, seed, kernel_path)
            records += found
            runs.append({"seed": seed, "onednn": int(kernel_path), "errors": errors,
                         "seconds": round(seconds, 1)})
            print(f"{path.stem} seed {seed} oneDNN {kernel_path}: {seconds:5.1f} s"
                  + (f", {len(errors)} errors: {errors}" if errors else ""), flush=True)
    return {"code_hash": code_hash(ROOT / path), "runs": runs, "metrics": summarise(records)}


def bound_text(entry: dict) -> str:
    low, high = entry["at_least"], entry["at_most"]
    if low is None and high is None:
        return "—"
    if high is None:
        return f"≥ {low:g}"
    if low is None:
        return f"≤ {high:g}"
    return f"{low:g} – {high:g}"


def markdown(table: dict) -> str:
    """The status page's section: one row per metric of every chapter that trains."""
    lines = ["| 장 | 지표 | 최소 | 중앙값 | 최대 | 장이 단언하는 범위 |",
             "|---|---|---:|---:|---:|---|"]
    for chapter, entry in table["chapters"].items():
        for name, m in entry["metrics"].items():
            lines.append(f"| {Path(chapter).stem[:2]} | `{name}` | {m['min']:g} | "
                         f"{m['median']:g} | {m['max']:g} | {bound_text(m)} |")
    runs = len(SEEDS) * len(KERNEL_PATHS)
    return ("\n".join(lines) + f"\n\n(장마다 {runs}회 실행: `COURSE_SEED` 0–4 × "
            f"`TF_ENABLE_ONEDNN_OPTS` 0·1. {table['when']}, {table['versions']})")


def versions() -> str:
    import importlib.metadata as md  # noqa: PLC0415
    import platform  # noqa: PLC0415

    try:
        tensorflow = md.version("tensorflow-cpu")
    except md.PackageNotFoundError:
        tensorflow = md.version("tensorflow")
    return (f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
            f"TensorFlow {tensorflow}, Keras {md.version('keras')}")


def main(paths: list[str]) -> None:
    chosen = [Path(p) for p in paths] or training_chapters()
    table = json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {}
    chapters = table.get("chapters", {})
    for path in chosen:
        chapters[path.as_posix()] = measure(path)
    keep = {p.as_posix() for p in training_chapters()}
    chapters = {name: chapters[name] for name in sorted(chapters) if name in keep}
    table = {"when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
             "versions": versions(), "chapters": chapters}
    TABLE.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    replace_block(STATUS, "robustness", markdown(table))
    print(markdown(table))
    failed = [(c, r) for c, e in chapters.items() for r in e["runs"] if r["errors"]]
    if failed:
        sys.exit(f"runs with errors: {failed}")


if __name__ == "__main__":
    main(sys.argv[1:])
