"""Tests of the attention layers of helpers.attention as one family (multi-head attention is
grouped-query attention with as many key/value heads as query heads, and every layer shares
its steps), of the package's one-way imports, and of helpers.attention_layers, the layers'
earlier address."""

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import helpers.attention as attention
import helpers.attention_layers as attention_layers
from helpers.attention import causal_mask, split_heads
from helpers.attention_layers import (
    GroupedQueryAttention,
    KVCache,
    LatentCache,
    MultiHeadAttention,
    MultiHeadLatentAttention,
    combine_heads,
    project_heads,
)

PACKAGE = Path(attention.__file__).parent
# the package's modules in the order they build on each other: each imports only earlier ones
ORDER = ("functions", "multi_head", "grouped_query", "latent", "sink_logit", "gated")
# and the one each builds on (the variants of chapters 12 and 16 all extend grouped-query)
BUILDS_ON = {"multi_head": "functions", "grouped_query": "multi_head",
             "latent": "grouped_query", "sink_logit": "grouped_query", "gated": "grouped_query"}


def helpers_imports(module: str) -> set[str]:
    """The modules of ``helpers`` that ``helpers.attention.<module>`` imports, by full name,
    read from its source."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level in (1, 2):
            base = "helpers.attention" if node.level == 1 else "helpers"
            found |= ({f"{base}.{node.module}"} if node.module
                      else {f"{base}.{alias.name}" for alias in node.names})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module] if isinstance(node, ast.ImportFrom) else [
                alias.name for alias in node.names]
            found |= {name for name in names if name.split(".")[0] == "helpers"}
    return found


@pytest.mark.parametrize("index", range(len(ORDER)))
def test_each_module_of_the_package_imports_only_the_ones_before_it(index):
    imported = helpers_imports(ORDER[index])
    family = {"helpers.attention", "helpers.attention_layers",
              *(f"helpers.attention.{m}" for m in ORDER)}
    assert imported & family <= {f"helpers.attention.{m}" for m in ORDER[:index]}, imported
    assert index == 0 or f"helpers.attention.{BUILDS_ON[ORDER[index]]}" in imported


def test_the_package_hands_out_every_name_of_its_modules():
    for module in ORDER:
        names = getattr(attention, module).__all__
        assert all(getattr(attention, name) is getattr(getattr(attention, module), name)
                   for name in names), module
    assert sorted(attention.__all__) == sorted(
        name for module in ORDER for name in getattr(attention, module).__all__)


def test_each_layer_lives_in_the_module_of_its_variant():
    homes = {MultiHeadAttention: "multi_head", project_heads: "multi_head",
             combine_heads: "multi_head", GroupedQueryAttention: "grouped_query",
             KVCache: "grouped_query", MultiHeadLatentAttention: "latent", LatentCache: "latent",
             attention.SinkLogitAttention: "sink_logit", attention.GatedAttention: "gated"}
    assert all(obj.__module__ == f"helpers.attention.{home}" for obj, home in homes.items())


def test_the_old_address_hands_out_the_same_objects():
    assert attention_layers.__all__ and all(
        getattr(attention_layers, name) is getattr(attention, name)
        for name in attention_layers.__all__)
    from helpers.attention import MultiHeadAttention as chapter_4_name  # noqa: PLC0415 - the name

    assert chapter_4_name is MultiHeadAttention


def test_the_old_modules_hand_out_the_same_classes():
    from helpers import decoder_only, latent_attention  # noqa: PLC0415 - what they re-export

    assert decoder_only.GroupedQueryAttention is GroupedQueryAttention
    assert decoder_only.KVCache is KVCache
    assert latent_attention.MultiHeadLatentAttention is MultiHeadLatentAttention
    assert latent_attention.LatentCache is LatentCache


@pytest.mark.parametrize("with_bias", [True, False])
def test_multi_head_attention_equals_grouped_query_attention_with_as_many_kv_heads(with_bias):
    rng = np.random.default_rng(0)
    gqa = GroupedQueryAttention.random(12, 4, 4, rng=rng)
    for name in ("query", "key", "value", "output"):
        bias = getattr(gqa, f"{name}_bias")
        setattr(gqa, f"{name}_bias", rng.normal(size=bias.shape) if with_bias else None)
    names = [f"{n}_{w}" for w in ("kernel", "bias") for n in ("query", "key", "value", "output")]
    mha = MultiHeadAttention(**{name: getattr(gqa, name) for name in names})
    x = rng.normal(size=(2, 6, 12))
    gqa_out, gqa_w = gqa(x, causal_mask(6))
    mha_out, mha_w = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(mha_out, gqa_out, rtol=0, atol=1e-13)
    np.testing.assert_allclose(mha_w, gqa_w, rtol=0, atol=1e-15)
    assert mha.num_kv_heads == mha.num_heads == gqa.num_kv_heads == gqa.num_query_heads == 4
    assert mha.count_params() == gqa.count_params()


def test_grouped_query_attention_is_multi_head_attention_with_tied_key_value_heads():
    rng = np.random.default_rng(1)
    gqa = GroupedQueryAttention.random(8, 4, 2, rng=rng)
    tied = [np.repeat(k, 2, axis=1) for k in (gqa.key_kernel, gqa.value_kernel)]
    tied_bias = [np.repeat(b, 2, axis=0) for b in (gqa.key_bias, gqa.value_bias)]
    mha = MultiHeadAttention(gqa.query_kernel, *tied, gqa.output_kernel, gqa.query_bias,
                             *tied_bias, gqa.output_bias)
    assert mha.num_kv_heads == 4 and gqa.num_kv_heads == 2
    x = rng.normal(size=(3, 5, 8))
    np.testing.assert_allclose(mha(x, x, use_causal_mask=True), gqa(x, causal_mask(5))[0],
                               rtol=0, atol=1e-13)


def test_project_and_combine_heads_are_split_and_merge_around_the_kernels():
    rng = np.random.default_rng(2)
    x, kernel, bias = rng.normal(size=(2, 5, 6)), rng.normal(size=(6, 3, 4)), rng.normal(
        size=(3, 4))
    heads = project_heads(x, kernel, bias)
    np.testing.assert_allclose(heads, split_heads(x @ kernel.reshape(6, 12) + bias.ravel(), 3),
                               rtol=0, atol=0)
    for h in range(3):
        np.testing.assert_allclose(heads[:, h], x @ kernel[:, h] + bias[h], atol=1e-14)
    output_kernel, output_bias = rng.normal(size=(3, 4, 6)), rng.normal(size=6)
    by_head = sum(heads[:, h] @ output_kernel[h] for h in range(3)) + output_bias
    np.testing.assert_allclose(combine_heads(heads, output_kernel, output_bias), by_head,
                               rtol=0, atol=1e-12)                # concatenation then W^O


@pytest.mark.parametrize("absorbed", [False, True])
def test_latent_attention_with_the_identity_latent_is_multi_head_attention(absorbed):
    rng = np.random.default_rng(3)
    gqa = GroupedQueryAttention.random(8, 2, 2, rng=rng)
    gqa.query_bias = gqa.key_bias = gqa.value_bias = gqa.output_bias = None
    mla = MultiHeadLatentAttention.from_grouped_query_attention(gqa)
    mha = MultiHeadAttention(gqa.query_kernel, gqa.key_kernel, gqa.value_kernel,
                             gqa.output_kernel)
    x = rng.normal(size=(1, 6, 8))
    np.testing.assert_allclose(mla(x, absorbed=absorbed)[0], mha(x, x, use_causal_mask=True),
                               rtol=0, atol=1e-12)


def test_the_family_module_imports_numpy_only():
    code = ("import sys, helpers.attention_layers, helpers.positions, helpers.normalization; "
            "print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False False"
