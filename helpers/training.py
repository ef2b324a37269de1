"""Training Keras models: ``fit``, which traces the training step once, and ``FusedAdam``.

Imports TensorFlow/Keras (through ``helpers._tensorflow``, with the course's log settings).
"""

from __future__ import annotations

import numpy as np

from ._tensorflow import keras, tf, without_xla_notice

__all__ = ["FusedAdam", "fit"]


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


@keras.saving.register_keras_serializable(package="helpers")
class FusedAdam(keras.optimizers.Adam):
    """Keras's Adam, with each variable updated by TensorFlow's one-kernel Adam update.

    The rule is Keras's ``Adam`` unchanged (the same arguments, state and bias correction);
    only the update of one variable is TensorFlow's ``ResourceApplyAdam`` kernel instead of
    Keras's twenty-odd small operations. For the course's small models, which have a few
    dozen variables each, those operations were most of the optimizer's part of the training
    step: with one kernel per variable, the step is traced into a graph faster and runs fewer
    tiny operations. On dense gradients the results agree with ``keras.optimizers.Adam`` to
    float32 rounding. On an embedding table they follow the paper where Keras 3's Adam does
    not: Keras updates the moments from the gradient's sparse pieces, one per occurrence of
    a token in the batch, so a token seen three times does not get the paper's first step
    ``lr * sign(g)``; here the pieces are summed into the table's gradient first.

    Parameters
    ----------
    **kwargs
        As ``keras.optimizers.Adam`` (``learning_rate``, ``beta_1``, ``beta_2``,
        ``epsilon``). ``amsgrad=True`` is not supported.

    Raises
    ------
    ValueError
        If ``amsgrad`` is true.

    Notes
    -----
    Kingma and Ba (2015), Algorithm 1, with the bias corrections folded into the step size
    (the paper's section 2, last paragraph), as both Keras and TensorFlow's kernel do:
    ``m += (1 - beta_1)(g - m)``, ``v += (1 - beta_2)(g^2 - v)``,
    ``w -= lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)``.
    Used by :func:`helpers.keras_decoder_only.train_language_model` (chapters 9-12 and 14)
    and by the classifiers of :mod:`helpers.classifiers` (chapter 5).

    Examples
    --------
    >>> optimizer = FusedAdam(learning_rate=0.1)
    >>> weight = keras.Variable([1.0, -2.0])
    >>> _ = optimizer.apply_gradients([(tf.constant([0.5, -0.5]), weight)])
    >>> weight.value.numpy().astype(float).round(4).tolist()
    [0.9, -1.9]
    """

    def __init__(self, **kwargs):
        if kwargs.get("amsgrad"):
            raise ValueError("FusedAdam does not support amsgrad=True; "
                             "use keras.optimizers.Adam for AMSGrad")
        super().__init__(**kwargs)

    def update_step(self, gradient, variable, learning_rate):
        """Update ``variable`` in place from ``gradient`` (Keras's hook for one variable)."""
        index = self._get_variable_index(variable)
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1, beta_2 = tf.constant(self.beta_1, dtype), tf.constant(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self._momentums[index].handle,
            v=self._velocities[index].handle,
            beta1_power=tf.pow(beta_1, step), beta2_power=tf.pow(beta_2, step),
            lr=tf.cast(learning_rate, dtype), beta1=beta_1, beta2=beta_2,
            epsilon=tf.constant(self.epsilon, dtype),
            grad=tf.cast(tf.convert_to_tensor(gradient), dtype))
