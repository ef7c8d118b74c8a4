"""Training callbacks (issue 14): xgboost's TrainingCallback shape, through ``train``."""

import numpy as np
import pytest

from daskboost import Booster, DaskBoostRegressor, TrainingCallback
from daskboost.objectives import regressor_objectives
from daskboost.params import validate_params
from daskboost.training import train


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] * 2 + np.sin(X[:, 1]) + rng.normal(0, 0.1, n)


def params(**overrides):
    raw = {**DaskBoostRegressor(n_estimators=8, max_depth=3).get_params(), **overrides}
    return validate_params(raw, regressor_objectives())


class Recorder(TrainingCallback):
    def __init__(self, stop_after=None, stop_before=None):
        self.calls = []
        self.stop_after, self.stop_before = stop_after, stop_before

    def before_training(self, model):
        self.calls.append(("before_training", model.num_boosted_rounds()))
        return model

    def before_iteration(self, model, epoch, evals_log):
        self.calls.append(("before_iteration", epoch, model.num_boosted_rounds()))
        return epoch == self.stop_before

    def after_iteration(self, model, epoch, evals_log):
        lengths = {len(v) for by_metric in evals_log.values() for v in by_metric.values()}
        self.calls.append(("after_iteration", epoch, model.num_boosted_rounds(), lengths))
        return epoch == self.stop_after

    def after_training(self, model):
        self.calls.append(("after_training", model.num_boosted_rounds()))
        return model


def test_callbacks_see_every_round_in_order_with_the_model_and_the_eval_log():
    X, y = data()
    recorder = Recorder()
    booster, info = train(params(eval_metric="rmse"), X, y, eval_set=[(X, y)],
                          callbacks=[recorder])
    assert recorder.calls[0] == ("before_training", 0)
    for epoch in range(8):
        assert recorder.calls[1 + 2 * epoch] == ("before_iteration", epoch, epoch)
        assert recorder.calls[2 + 2 * epoch] == ("after_iteration", epoch, epoch + 1, {epoch + 1})
    assert recorder.calls[-1] == ("after_training", 8) and len(recorder.calls) == 18
    assert len(info.evals_result["validation_0"]["rmse"]) == 8


@pytest.mark.parametrize("stop_after, stop_before, rounds", [(3, None, 4), (None, 2, 2),
                                                             (0, None, 1), (None, 0, 0)])
def test_a_callback_stops_training(stop_after, stop_before, rounds):
    X, y = data()
    booster, _ = train(params(), X, y, callbacks=[Recorder(stop_after, stop_before)])
    assert booster.n_rounds == rounds


def test_callbacks_do_not_change_the_model():
    X, y = data()
    plain, _ = train(params(), X, y)
    called, _ = train(params(), X, y, callbacks=[TrainingCallback()])
    assert called.to_dict() == plain.to_dict()


def test_continued_training_counts_the_calls_epochs_from_zero():
    # as xgboost's train: epoch 0 is this call's first round; before_training sees the
    # rounds the model started with (xgboost's EarlyStopping adds them to the epoch)
    X, y = data()
    first, _ = train(params(n_estimators=3), X, y)
    recorder = Recorder()
    train(params(n_estimators=2), X, y, previous=first, callbacks=[recorder])
    assert recorder.calls[0] == ("before_training", 3)
    assert [c[1:3] for c in recorder.calls if c[0].endswith("iteration")] == [
        (0, 3), (0, 4), (1, 4), (1, 5)]


def test_after_training_may_replace_the_model_and_must_return_one():
    X, y = data()

    class Truncate(TrainingCallback):
        def after_training(self, model):
            return Booster(model.trees[:2], model.base_margin, model.objective,
                           model.n_features)

    assert train(params(), X, y, callbacks=[Truncate()])[0].n_rounds == 2

    class Wrong(TrainingCallback):
        def after_training(self, model):
            return "not a model"

    with pytest.raises(TypeError, match="Wrong.after_training returned str"):
        train(params(), X, y, callbacks=[Wrong()])


def test_an_error_in_a_callback_surfaces():
    X, y = data()

    class Boom(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            if epoch == 2:
                raise RuntimeError("boom at 2")
            return False

    with pytest.raises(RuntimeError, match="boom at 2"):
        train(params(), X, y, callbacks=[Boom()])


def test_bad_callbacks_are_refused_before_any_work():
    X, y = data()
    with pytest.raises(TypeError, match="callbacks must be a list"):
        train(params(), X, y, callbacks=Recorder())
    with pytest.raises(TypeError, match=r"callbacks\[1\] \(object\) has none of the methods"):
        train(params(), X, y, callbacks=[Recorder(), object()])


def test_an_xgboost_callback_subclass_works_as_it_is():
    xgb = pytest.importorskip("xgboost")
    epochs = []

    class Theirs(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            epochs.append((epoch, model.num_boosted_rounds()))
            return epoch == 4

    X, y = data()
    booster, _ = train(params(), X, y, callbacks=[Theirs()])
    assert booster.n_rounds == 5 and epochs == [(e, e + 1) for e in range(5)]


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_estimators_take_callbacks_in_fit(estimator):
    from daskboost import DaskBoostClassifier
    X, y = data()
    recorder = Recorder(stop_after=2)
    if estimator == "regressor":
        model = DaskBoostRegressor(n_estimators=8, max_depth=3)
    else:
        model, y = DaskBoostClassifier(n_estimators=8, max_depth=3), y > 0
    model.fit(X, y, eval_set=[(X, y)], callbacks=[recorder])
    assert model.get_booster().n_rounds == 3
    assert recorder.calls[-1] == ("after_training", 3)
    with pytest.raises(TypeError, match="callbacks must be a list"):
        model.fit(X, y, callbacks=recorder)


def test_the_optuna_pruning_example_prunes_trials(capsys):
    pytest.importorskip("optuna")  # in the test extra; optional for users
    import importlib.util
    import pathlib
    import re
    path = pathlib.Path(__file__).parent.parent / "examples" / "optuna_pruning.py"
    spec = importlib.util.spec_from_file_location("optuna_pruning", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.main(["--trials", "8", "--rows", "4000"])
    out = capsys.readouterr().out
    finished, pruned = (int(v) for v in re.search(r"(\d+) finished, (\d+) pruned", out).groups())
    assert finished + pruned == 8 and pruned >= 1 and finished >= 3
