"""Shared code of the course *어텐션 메커니즘*, one concept per module.

NumPy only (import in an instant, run anywhere):

helpers.attention
    The attention family, every name importable from it. ``functions``: softmax, scaled
    dot-product attention, masks (causal, padding, sliding window), grouped-query attention,
    the head split and merge, additive and chunked attention (chapters 1-4, 7 and 10). The
    layers built from them, one module per variant: ``multi_head`` (chapter 3, with the steps
    every layer shares), ``grouped_query`` with its KV cache (chapters 9-11) and ``latent``,
    multi-head latent attention with its cache of latents, naive and absorbed (chapter 12).
helpers.attention_layers
    The layers' earlier address: the same classes, from helpers.attention.
helpers.positions
    The sinusoidal positional encoding (chapter 8), rotary position embedding and ALiBi
    (chapter 11).
helpers.normalization
    Layer normalisation (chapter 8) and RMSNorm (chapters 11 and 12).
helpers.transformer
    The feed-forward networks (ReLU and SwiGLU), encoder and decoder layers (chapters 8 and
    11); re-exports the positions and normalisations.
helpers.decoder_only
    The decoder-only Transformer and greedy generation (chapters 9 and 10), with sinusoidal,
    rotary, ALiBi or no positions (chapter 11).
helpers.latent_attention
    Multi-head latent attention examined: why RoPE is decoupled, grouped-query attention as
    a special case, cache and FLOPs of published models (chapter 12).
helpers.linear_attention
    Causal linear attention, the delta rule and Gated DeltaNet in parallel, recurrent and
    chunked forms; retrieval from one state matrix; decoding cost (chapter 13).
helpers.sparse_attention
    Sparse attention the model chooses: DeepSeek Sparse Attention (lightning indexer, top-k,
    MLA over the selected latents) and Native Sparse Attention (compressed, selected and
    window branches with gates); their cost per generated token (chapter 17).
helpers.sampling
    Temperature, top-k and top-p sampling of the next token (chapter 9).
helpers.timeseries
    The planted-pattern series and the GunPoint data set of chapter 5.
helpers.korean_numbers
    Korean readings of numbers and the character vocabulary of chapter 6.
helpers.plotting
    Attention heatmaps with Korean labels.
helpers.diagrams
    The architecture diagrams (chapters 3, 6, 8, 9, 10, 13), shown as SVG whose labels stay
    text.
helpers.claims
    Checks and glue for the numbers a chapter's prose quotes about trained models.
helpers.notebook
    ``setup()``, the one set-up call at the top of every chapter, and ``show_source()``.
helpers.timing
    ``best_times``: timing that holds on a busy machine (chapters 7 and 9).

Keras (import TensorFlow, through ``helpers._tensorflow`` with the course's log settings):

helpers.training
    ``fit``: ``model.fit`` with the training step traced once.
helpers.classifiers
    The LSTM classifiers with and without attention of chapter 5.
helpers.seq2seq
    The recurrent encoder-decoder with cross-attention of chapter 6, and greedy decoding.
helpers.keras_transformer
    The Keras twins of helpers.transformer, and chapter 8's encoder-decoder model.
helpers.keras_decoder_only
    The Keras twin of helpers.decoder_only, with ``keras.layers.GroupQueryAttention``, and
    the rotary and ALiBi layers of chapter 11.
helpers.keras_latent_attention
    The Keras twin of helpers.latent_attention (chapter 12).
helpers.keras_linear_attention
    The Keras twins of helpers.linear_attention's chunked rules and token mixer (chapter 13).
helpers.keras_associative_recall
    The one-layer recall model of chapters 14 and 17, with any of their token mixers.
helpers.keras_sparse_attention
    Trainable sliding-window, top-k (DSA, with its indexer's KL loss) and NSA mixers
    (chapter 17).

``import helpers`` is cheap: it imports neither matplotlib nor TensorFlow.
"""

from .notebook import setup, show_source

__all__ = ["setup", "show_source"]
__version__ = "0.1.0"
