"""The attention layers at their earlier address; they live in :mod:`helpers.attention`.

:class:`MultiHeadAttention` (chapter 3) is in :mod:`helpers.attention.multi_head` with the
steps every layer shares (:func:`project_heads`, :func:`combine_heads`,
:func:`keras_attention_weights`); :class:`GroupedQueryAttention` and :class:`KVCache`
(chapters 9-11) in :mod:`helpers.attention.grouped_query`; :class:`MultiHeadLatentAttention`
and :class:`LatentCache` (chapter 12) in :mod:`helpers.attention.latent`. Importing them from
here gives the same objects.
"""

from .attention import (
    GroupedQueryAttention,
    KVCache,
    LatentCache,
    MultiHeadAttention,
    MultiHeadLatentAttention,
    combine_heads,
    keras_attention_weights,
    project_heads,
)

__all__ = ["MultiHeadAttention", "GroupedQueryAttention", "KVCache", "MultiHeadLatentAttention",
           "LatentCache", "project_heads", "combine_heads", "keras_attention_weights"]
