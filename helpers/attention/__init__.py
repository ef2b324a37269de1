"""The attention family in NumPy: functions on arrays, and the layers built from them.

functions
    Softmax, the masks, scaled dot-product attention and its grouped-query form, the head
    split and merge, additive and chunked attention (chapters 1-4, 7 and 10).
multi_head
    Multi-head attention and the steps every layer shares (chapters 3 and 4).
grouped_query
    Grouped-query attention with RoPE or ALiBi, and its KV cache, in full, as a ring buffer
    (chapters 9-11) or a ring with pinned sinks (chapter 16).
latent
    Multi-head latent attention, naive and absorbed, and its cache of latents (chapter 12).
sink_logit
    Attention with a learned sink logit per head, as in gpt-oss (chapter 16).
gated
    Attention with a sigmoid gate on every head's output, as in Qwen3-Next (chapter 16).

Every name is importable from here. The layers import the functions, never the other way;
``sink_logit`` and ``gated`` build on ``grouped_query``, and nothing here imports them.
"""

from .functions import (
    additive_attention,
    causal_mask,
    chunked_attention,
    grouped_query_attention,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
    split_heads,
    visible_keys,
)
from .gated import GatedAttention, gate_heads, split_query_gate
from .grouped_query import GroupedQueryAttention, KVCache
from .latent import LatentCache, MultiHeadLatentAttention
from .multi_head import MultiHeadAttention, combine_heads, keras_attention_weights, project_heads
from .sink_logit import SinkLogitAttention, sink_logit_attention

__all__ = ["softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask",
           "sliding_window_mask", "visible_keys", "grouped_query_attention", "split_heads",
           "merge_heads", "additive_attention", "chunked_attention",
           "MultiHeadAttention", "project_heads", "combine_heads", "keras_attention_weights",
           "GroupedQueryAttention", "KVCache", "MultiHeadLatentAttention", "LatentCache",
           "sink_logit_attention", "SinkLogitAttention", "gate_heads", "split_query_gate",
           "GatedAttention"]
