"""Training Keras models: ``fit``, which traces the training step once.

Imports TensorFlow/Keras (through ``helpers._tensorflow``, with the course's log settings).
"""

from __future__ import annotations

import numpy as np

from ._tensorflow import keras, without_xla_notice

__all__ = ["fit"]


def fit(model, x, y, *, sample_weight=None, **kwargs):
    """``model.fit(x, y, ...)``, with the training step traced into a graph once, not twice.

    Keras creates the optimizer's variables and the loss and metric state the first time the
    training step runs. TensorFlow traces a step that creates variables twice (once to create
    them, once for the graph it keeps), and for the small models of this course that tracing
    takes longer than the training. This builds that state first, with Keras's public
    ``optimizer.build``, ``compute_loss`` and ``compute_metrics`` on two examples, then calls
    ``model.fit`` unchanged: the same training, about half the start-up time.

    Parameters
    ----------
    model : keras.Model
        A compiled model.
    x, y : array_like or list of array_like
        Inputs and targets as ``model.fit`` takes them; at least two examples.
    sample_weight : array_like, optional
        Passed to ``model.fit``.
    **kwargs
        Passed to ``model.fit`` (``epochs``, ``batch_size``, ``verbose``, ...).

    Returns
    -------
    keras.callbacks.History
        What ``model.fit`` returns.

    Raises
    ------
    TypeError
        If ``model`` is not a Keras model.
    ValueError
        If ``model`` is not compiled.

    Notes
    -----
    Used by every chapter that trains (chapter 5 explains why).
    """
    if not isinstance(model, keras.Model):
        raise TypeError(f"model must be a keras.Model; got {type(model).__name__}")
    if getattr(model, "optimizer", None) is None or not model.compiled:
        raise ValueError(f"model {model.name!r} is not compiled; call model.compile() first")

    def first_two(a):
        if isinstance(a, (list, tuple)):
            return [first_two(part) for part in a]
        return None if a is None else np.asarray(a)[:2]

    x2, y2, weight2 = first_two(x), first_two(y), first_two(sample_weight)
    model.optimizer.build(model.trainable_variables)
    y_pred = model(x2, training=False)
    model.compute_loss(x=x2, y=y2, y_pred=y_pred, sample_weight=weight2)
    model.compute_metrics(x2, y2, y_pred, sample_weight=weight2)
    if not model.jit_compile:
        return model.fit(x, y, sample_weight=sample_weight, **kwargs)
    with without_xla_notice():
        return model.fit(x, y, sample_weight=sample_weight, **kwargs)
