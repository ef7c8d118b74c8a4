"""Training callbacks with xgboost's ``TrainingCallback`` shape.

A callback is any object with some of these methods (subclass ``TrainingCallback`` to
inherit no-op defaults; xgboost's own ``xgboost.callback.TrainingCallback`` subclasses,
such as Optuna's pruning callback, work as they are):

``before_training(model) -> model``
    once, before the first round (``model``: the ``Booster`` continued, or an empty one).
``before_iteration(model, epoch, evals_log) -> bool``
    before each round; True stops training before the round is grown.
``after_iteration(model, epoch, evals_log) -> bool``
    after each round, its eval metrics recorded; True stops training (the round is kept).
``after_training(model) -> model``
    once, with the final model; what it returns is the fitted model.

``epoch`` is the 0-based round number (continued training counts on from the model's
rounds, as xgboost does); ``model`` is a ``Booster`` of the trees so far, the same object
every round, so what a callback sets on it holds for the rest of the fit: ``set_attr``
(``best_iteration``/``best_score`` as xgboost's ``EarlyStopping`` records them: the fit's
best round) and ``set_param("learning_rate", ...)`` (the rounds still to grow: xgboost's
``LearningRateScheduler``); ``evals_log``
is ``{eval set: {metric: [one value per round]}}``, the same dict as ``evals_result_``.
With callbacks, rounds are grown one per call (on a cluster: one client round trip per
round), so a callback sees every round.
"""

METHODS = ("before_training", "after_training", "before_iteration", "after_iteration")


class TrainingCallback:
    """Base class with no-op methods; override the ones you need."""

    def before_training(self, model):
        return model

    def after_training(self, model):
        return model

    def before_iteration(self, model, epoch, evals_log):
        return False

    def after_iteration(self, model, epoch, evals_log):
        return False


class CallbackList:
    """The callbacks of one fit, called in order."""

    def __init__(self, callbacks):
        if callbacks is None:
            callbacks = []
        if not isinstance(callbacks, (list, tuple)):
            raise TypeError(f"callbacks must be a list of callback objects, got "
                            f"{type(callbacks).__name__}")
        for i, callback in enumerate(callbacks):
            if not any(callable(getattr(callback, name, None)) for name in METHODS):
                raise TypeError(f"callbacks[{i}] ({type(callback).__name__}) has none of "
                                f"the methods {', '.join(METHODS)}")
        self.callbacks = list(callbacks)

    def __bool__(self):
        return bool(self.callbacks)

    def before_training(self, model):
        for callback in self._having("before_training"):
            model = _checked_model(callback.before_training(model), model, callback,
                                   "before_training")
        return model

    def after_training(self, model):
        for callback in self._having("after_training"):
            model = _checked_model(callback.after_training(model), model, callback,
                                   "after_training")
        return model

    def before_iteration(self, model, epoch, evals_log):
        """True if a callback asks to stop before round ``epoch``."""
        return any([bool(c.before_iteration(model, epoch, evals_log))
                    for c in self._having("before_iteration")])

    def after_iteration(self, model, epoch, evals_log):
        """True if a callback asks to stop after round ``epoch`` (every callback is
        called, as xgboost does, even after one asked to stop)."""
        return any([bool(c.after_iteration(model, epoch, evals_log))
                    for c in self._having("after_iteration")])

    def _having(self, name):
        return [c for c in self.callbacks if callable(getattr(c, name, None))]


def _checked_model(returned, model, callback, method):
    """A callback's ``before/after_training`` returns the model (xgboost's contract);
    None keeps it as it was, anything else that is not a model is an error."""
    if returned is None:
        return model
    if type(returned) is not type(model):
        raise TypeError(f"{type(callback).__name__}.{method} returned "
                        f"{type(returned).__name__}; it must return the model it was given "
                        "(a Booster)")
    return returned
