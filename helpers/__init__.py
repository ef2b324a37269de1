"""Shared code of the course *어텐션 메커니즘*, one concept per module.

NumPy only (import in an instant, run anywhere):

helpers.attention
    Softmax, scaled dot-product attention, masks, additive attention, chunked attention and
    multi-head attention (chapters 1-4 and 7).
helpers.timeseries
    The planted-pattern series and the GunPoint data set of chapter 5.
helpers.korean_numbers
    Korean readings of numbers and the character vocabulary of chapter 6.
helpers.plotting
    Attention heatmaps with Korean labels.
helpers.claims
    Checks and glue for the numbers a chapter's prose quotes about trained models.
helpers.notebook
    ``setup()``, the one set-up call at the top of every chapter, and ``show_source()``.

Keras (import TensorFlow, through ``helpers._tensorflow`` with the course's log settings):

helpers.training
    ``fit``: ``model.fit`` with the training step traced once.
helpers.classifiers
    The LSTM classifiers with and without attention of chapter 5.
helpers.seq2seq
    The recurrent encoder-decoder with cross-attention of chapter 6, and greedy decoding.

``import helpers`` is cheap: it imports neither matplotlib nor TensorFlow.
"""

from .notebook import setup, show_source

__all__ = ["setup", "show_source"]
__version__ = "0.1.0"
