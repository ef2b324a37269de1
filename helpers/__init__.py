"""Shared code of the course *어텐션 메커니즘*.

Modules
-------
helpers.attention
    NumPy reference implementations (softmax, scaled dot-product attention, masks).
helpers.plotting
    Attention heatmaps with Korean labels.
helpers.notebook
    ``setup()``, the one set-up call at the top of every chapter, and ``show_source()``.
helpers.claims
    Checks and glue for the numbers a chapter's prose quotes about trained models.
helpers.layers
    Keras layers and model builders (the only module that imports TensorFlow).
helpers.data
    Data sets generated in code or shipped with the package; nothing is downloaded.

``import helpers`` is cheap: it imports neither matplotlib nor TensorFlow.
"""

from .notebook import setup, show_source

__all__ = ["setup", "show_source"]
__version__ = "0.1.0"
