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

``epoch`` is the 0-based round of this call (continued training starts again at 0, as
xgboost's ``train`` does; ``model.num_boosted_rounds()`` in ``before_training`` gives the
rounds it started with); ``model`` is a ``Booster`` of the trees so far, the same object
every round, so what a callback sets on it holds for the rest of the fit: ``set_attr``
(``best_iteration``/``best_score`` as xgboost's ``EarlyStopping`` records them: the fit's
best round) and ``set_param("learning_rate", ...)`` (the rounds still to grow: xgboost's
``LearningRateScheduler``); ``evals_log``
is ``{eval set: {metric: [one value per round]}}``, the same dict as ``evals_result_``.
With callbacks, rounds are grown one per call (on a cluster: one client round trip per
round), so a callback sees every round.

Ready-made callbacks, with xgboost's ``xgboost.callback`` names, arguments and meanings
(xgboost's own work as well; these need no xgboost and can keep the best model):

``EarlyStopping(rounds=, metric_name=, data_name=, maximize=, save_best=, min_delta=)``
    stop after ``rounds`` rounds without improvement of an eval metric; ``save_best=True``
    returns the model cut at its best round.
``EvaluationMonitor(period=, show_stdv=, logger=)``
    print each round's metrics.
``LearningRateScheduler(learning_rates)``
    the learning rate of each round from a function of the round or a sequence.
``TrainingCheckPoint(directory, name=, as_pickle=, interval=)``
    save the model every ``interval`` rounds (at xgboost's rounds, under its file names).
"""

import math
import os
import pickle
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Dict, List, Tuple, Union

from .booster import Booster, write_atomically, write_model_file

METHODS = ("before_training", "after_training", "before_iteration", "after_iteration")


class TrainingCallback:
    """Base class with no-op methods; override the ones you need."""

    # xgboost's type of ``evals_log`` (for the annotations of callbacks written for it):
    # {eval set: {metric: values}}, a value per round, or cv's (mean, std) per round
    EvalsLog = Dict[str, Dict[str, Union[List[float], List[Tuple[float, float]]]]]

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


# ---- the early-stopping rule ---------------------------------------------------------------

class Patience:
    """Early stopping's rule, xgboost's: a round's score is an improvement when it beats
    the best so far by more than ``min_delta`` (higher when ``maximize``, else lower);
    stop once ``rounds`` rounds in a row were not.  A NaN score never improves (the first
    round's score is the best so far whatever it is)."""

    def __init__(self, rounds, maximize, min_delta=0.0):
        self.rounds = rounds
        self.maximize = bool(maximize)
        self.min_delta = min_delta
        self.best = (None, None)  # (round, score)

    def update(self, round_, score):
        """Record round ``round_``'s score; True when training should stop.  (A round
        that improved is in ``best``.)"""
        best_round, best_score = self.best
        if best_round is None or self._improves(score, best_score):
            self.best = (round_, score)
            return False
        return round_ - best_round >= self.rounds

    def _improves(self, score, best):
        if self.maximize:
            return score - self.min_delta > best
        return best - self.min_delta > score


def _positive_integer(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{owner}({name}={value!r}): {name} must be an integer >= 1")
    return int(value)


def _metric_maximized(name):
    """Whether early stopping on the metric ``name`` maximises it: a daskboost metric by
    its own direction; any other name (a custom metric's) by xgboost's rule, the names
    that start like a ranking or AUC metric."""
    from .metrics import get_metric
    try:
        return get_metric(name).higher_is_better
    except (TypeError, ValueError):
        return name != "mape" and name.startswith(("auc", "aucpr", "pre", "map", "ndcg"))


def _mean(score):
    """A round's score: ``cv`` logs (mean, std) pairs."""
    return score[0] if isinstance(score, tuple) else score


class EarlyStopping(TrainingCallback):
    """Stop when an eval metric has not improved for ``rounds`` rounds (xgboost's
    ``EarlyStopping``).

    ``data_name`` / ``metric_name``: the eval set and metric watched (default: the last
    eval set and its last metric, as ``early_stopping_rounds``); ``maximize``: None takes
    the metric's direction (``auc`` up, ``logloss`` down, ...); ``min_delta``: the least
    change that counts as an improvement.  The best round and score are recorded on the
    model (``best_iteration``, ``best_score``: what prediction then uses by default);
    ``save_best=True`` also cuts the model after its best round (not for ``cv``, which
    returns no model).  The object keeps no state from one fit to the next.
    """

    def __init__(self, rounds, *, metric_name=None, data_name=None, maximize=None,
                 save_best=False, min_delta=0.0):
        self.rounds = _positive_integer("EarlyStopping", "rounds", rounds)
        for name, value in (("metric_name", metric_name), ("data_name", data_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"EarlyStopping({name}={value!r}): a name (str) or None")
        if (isinstance(min_delta, bool) or not isinstance(min_delta, Real)
                or not math.isfinite(min_delta) or min_delta < 0):
            raise ValueError(f"EarlyStopping(min_delta={min_delta!r}): min_delta must be a "
                             "finite number >= 0")
        self.metric_name, self.data_name = metric_name, data_name
        self.maximize = None if maximize is None else bool(maximize)
        self.save_best = bool(save_best)
        self.min_delta = float(min_delta)
        self._patience, self._start = None, 0

    def before_training(self, model):
        if self.save_best and not isinstance(model, Booster):
            raise ValueError("EarlyStopping(save_best=True) keeps a model's best rounds; "
                             "cv returns no model (leave save_best False)")
        self._patience, self._start = None, model.num_boosted_rounds()
        return model

    def after_iteration(self, model, epoch, evals_log):
        if not evals_log:
            raise ValueError("EarlyStopping needs an eval set: give fit() an eval_set "
                             "(train: evals)")
        data = self.data_name or list(evals_log)[-1]
        if data not in evals_log:
            raise ValueError(f"EarlyStopping(data_name={data!r}): no such eval set; the eval "
                             f"sets are {list(evals_log)}")
        metric = self.metric_name or list(evals_log[data])[-1]
        if metric not in evals_log[data]:
            raise ValueError(f"EarlyStopping(metric_name={metric!r}): eval set {data!r} has "
                             f"no such metric; its metrics are {list(evals_log[data])}")
        if self._patience is None:
            maximize = _metric_maximized(metric) if self.maximize is None else self.maximize
            self._patience = Patience(self.rounds, maximize, self.min_delta)
        score = float(_mean(evals_log[data][metric][-1]))
        round_ = self._start + epoch  # the model's round (training continued)
        stop = self._patience.update(round_, score)
        if self._patience.best[0] == round_:
            model.set_attr(best_iteration=str(round_), best_score=repr(score))
        return stop

    def after_training(self, model):
        if not self.save_best or model.best_iteration is None:
            return model
        best = model[:model.best_iteration + 1]
        best.best_iteration, best.best_score = model.best_iteration, model.best_score
        return best


class EvaluationMonitor(TrainingCallback):
    """Print every ``period``-th round's metrics (and the last round's), as xgboost's
    ``EvaluationMonitor``: ``[epoch]\t<eval set>-<metric>:<value>`` ...; in ``cv``,
    ``show_stdv=True`` adds the folds' standard deviation (``+<std>``).  ``logger``: the
    function given each line (default ``print``).  ``rank``: which process prints, as in
    xgboost; here the client is the only one (rank 0)."""

    def __init__(self, rank=0, period=1, show_stdv=False, logger=print):
        self.rank = rank
        self.period = _positive_integer("EvaluationMonitor", "period", period)
        self.show_stdv = bool(show_stdv)
        if not callable(logger):
            raise TypeError(f"EvaluationMonitor(logger={logger!r}): a function of one "
                            "string")
        self.logger = logger
        self._unprinted = None

    def after_iteration(self, model, epoch, evals_log):
        if not evals_log or self.rank != 0:
            return False
        line = f"[{epoch}]" + "".join(
            self._cell(data, metric, values[-1])
            for data, metrics in evals_log.items() for metric, values in metrics.items())
        if epoch % self.period == 0:
            self.logger(line)
            self._unprinted = None
        else:
            self._unprinted = line
        return False

    def after_training(self, model):
        if self._unprinted is not None:  # the last round, when the period skipped it
            self.logger(self._unprinted)
            self._unprinted = None
        return model

    def _cell(self, data, metric, score):
        text = f"\t{data}-{metric}:{_mean(score):.5f}"
        if self.show_stdv and isinstance(score, tuple):
            text += f"+{score[1]:.5f}"
        return text


class LearningRateScheduler(TrainingCallback):
    """Change the learning rate as training goes (xgboost's
    ``LearningRateScheduler``): ``learning_rates`` is a function of the epoch or a
    sequence indexed by it.  As in xgboost, after round ``epoch`` the rate becomes
    ``learning_rates(epoch)``: round 0 uses the model's ``learning_rate``, round ``e``
    (> 0) the rate for ``e - 1``."""

    def __init__(self, learning_rates):
        if callable(learning_rates):
            self._rate = learning_rates
        elif isinstance(learning_rates, Sequence) and not isinstance(learning_rates, str):
            rates = list(learning_rates)
            self._rate = rates.__getitem__
        else:
            raise TypeError(f"LearningRateScheduler(learning_rates={learning_rates!r:.80}): "
                            "a function of the epoch or a sequence of rates")
        self.learning_rates = learning_rates

    def after_iteration(self, model, epoch, evals_log):
        try:
            rate = self._rate(epoch)
        except IndexError:
            raise ValueError(f"LearningRateScheduler: learning_rates has no rate for epoch "
                             f"{epoch} (give one per round)") from None
        model.set_param("learning_rate", rate)
        return False


class TrainingCheckPoint(TrainingCallback):
    """Save the model every ``interval`` rounds, as xgboost's ``TrainingCheckPoint``:
    after the call's rounds ``interval``, ``2 * interval``, ... (0-based epochs; so the
    first file has ``interval + 1`` rounds), each written atomically as
    ``<directory>/<name>_<round>.<default_format>``, ``round`` the model's 0-based last
    round: daskboost's model file (``Booster.load``; xgboost writes its UBJSON under
    the same scheme); or with ``as_pickle=True`` a pickle of the Booster,
    ``<name>_<round>.pkl``.  Not for ``cv`` (no model to save)."""

    default_format = "json"

    def __init__(self, directory, name="model", as_pickle=False, interval=100):
        self.directory = os.fspath(directory)
        if not os.path.isdir(self.directory):
            raise ValueError(f"TrainingCheckPoint(directory={self.directory!r}): not a "
                             "directory")
        if not isinstance(name, str) or not name or os.sep in name:
            raise ValueError(f"TrainingCheckPoint(name={name!r}): a file name prefix")
        self.name = name
        self.as_pickle = bool(as_pickle)
        self.interval = _positive_integer("TrainingCheckPoint", "interval", interval)
        self._start = 0

    def before_training(self, model):
        if not isinstance(model, Booster):
            raise ValueError("TrainingCheckPoint saves a model; cv has none to save")
        self._start = model.num_boosted_rounds()
        return model

    def after_iteration(self, model, epoch, evals_log):
        if epoch == 0 or epoch % self.interval:
            return False
        stem = os.path.join(self.directory, f"{self.name}_{self._start + epoch}")
        if self.as_pickle:
            write_atomically(stem + ".pkl", lambda f: pickle.dump(model, f), binary=True)
        else:
            write_model_file(f"{stem}.{self.default_format}", model.to_payload())
        return False
