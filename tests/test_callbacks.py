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


# ---- the ready-made callbacks (daskboost.callbacks, xgboost's names and meanings) -------

from daskboost import DaskBoostClassifier  # noqa: E402
from daskboost.callbacks import (EarlyStopping, EvaluationMonitor,  # noqa: E402
                                 LearningRateScheduler, TrainingCheckPoint)


@pytest.fixture(scope="module")
def noisy():
    """Labels with much noise: at learning rate 1 the held-out loss soon rises."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 5))
    y = (X[:, 0] + rng.normal(0, 1.5, 1500) > 0).astype(np.int64)
    return (X[300:], y[300:]), (X[:300], y[:300])


def stopped_fit(noisy, callbacks=None, eval_metric=None, **params):
    (X, y), valid = noisy
    params = {"n_estimators": 60, "max_depth": 3, "learning_rate": 1.0, **params}
    return DaskBoostClassifier(eval_metric=eval_metric, callbacks=callbacks, **params).fit(
        X, y, eval_set=[valid])


def test_early_stopping_is_early_stopping_rounds(noisy):
    built_in = stopped_fit(noisy, early_stopping_rounds=3).get_booster()
    called = stopped_fit(noisy, [EarlyStopping(rounds=3)]).get_booster()
    assert 3 < called.n_rounds < 60
    assert called.to_dict() == built_in.to_dict()  # best round and score included


def test_save_best_cuts_the_model_after_its_best_round(noisy):
    full = stopped_fit(noisy, [EarlyStopping(rounds=3)])
    best = stopped_fit(noisy, [EarlyStopping(rounds=3, save_best=True)])
    kept = best.get_booster()
    assert kept.n_rounds == full.best_iteration + 1 < full.get_booster().n_rounds
    assert (kept.best_iteration, kept.best_score) == (full.best_iteration, full.best_score)
    X = noisy[1][0]
    np.testing.assert_array_equal(best.predict_proba(X), full.predict_proba(X))


def test_early_stopping_watches_the_named_metric_in_its_direction(noisy):
    metrics = ["auc", "logloss"]
    up = stopped_fit(noisy, [EarlyStopping(rounds=4, metric_name="auc")], metrics)
    auc = up.evals_result()["validation_0"]["auc"]
    assert len(auc) == up.best_iteration + 5 and auc[up.best_iteration] == max(auc)
    down = stopped_fit(noisy, [EarlyStopping(rounds=4, metric_name="auc", maximize=False)],
                       metrics)
    auc = down.evals_result()["validation_0"]["auc"]
    assert auc[down.best_iteration] == min(auc)
    # an improvement must exceed min_delta: none does, round 0 stays the best
    still = stopped_fit(noisy, [EarlyStopping(rounds=2, min_delta=1.0)])
    assert (still.best_iteration, still.get_booster().n_rounds) == (0, 3)


def test_early_stopping_in_continued_training_records_the_models_round(noisy):
    (X, y), valid = noisy
    first = DaskBoostClassifier(n_estimators=2, max_depth=3, learning_rate=1.0).fit(X, y)
    more = dict(n_estimators=60, max_depth=3, learning_rate=1.0)
    called = DaskBoostClassifier(**more, callbacks=[EarlyStopping(rounds=3)]).fit(
        X, y, eval_set=[valid], xgb_model=first)
    built_in = DaskBoostClassifier(**more, early_stopping_rounds=3).fit(
        X, y, eval_set=[valid], xgb_model=first)
    assert 2 <= called.best_iteration < called.get_booster().n_rounds - 3
    assert called.get_booster().to_dict() == built_in.get_booster().to_dict()


def test_one_early_stopping_object_serves_fit_after_fit(noisy):
    callback = EarlyStopping(rounds=3)
    first = stopped_fit(noisy, [callback], "error")  # (error rates: below any log loss)
    again = stopped_fit(noisy, [callback]).get_booster()
    fresh = stopped_fit(noisy, [EarlyStopping(rounds=3)]).get_booster()
    assert first.best_score < fresh.best_score
    assert again.to_dict() == fresh.to_dict()


def test_early_stopping_in_cv_is_early_stopping_rounds(noisy):
    import daskboost
    X, y = noisy[0]
    params = {"objective": "binary:logistic", "eta": 1.0, "max_depth": 3}
    called = daskboost.cv(params, X, y, nfold=3, num_boost_round=60,
                          callbacks=[EarlyStopping(rounds=3)])
    assert len(called) < 60
    assert called.equals(daskboost.cv(params, X, y, nfold=3, num_boost_round=60,
                                      early_stopping_rounds=3))
    with pytest.raises(ValueError, match="cv returns no model"):
        daskboost.cv(params, X, y, nfold=3, callbacks=[EarlyStopping(rounds=3, save_best=True)])


@pytest.mark.parametrize("make, error, match", [
    (lambda: EarlyStopping(rounds=0), ValueError, r"EarlyStopping\(rounds=0\)"),
    (lambda: EarlyStopping(rounds=2.5), ValueError, "rounds must be an integer"),
    (lambda: EarlyStopping(rounds=2, min_delta=-1), ValueError, "min_delta=-1"),
    (lambda: EarlyStopping(rounds=2, data_name=0), TypeError, "data_name=0"),
    (lambda: EvaluationMonitor(period=0), ValueError, "period=0"),
    (lambda: EvaluationMonitor(logger="stdout"), TypeError, "logger='stdout'"),
    (lambda: LearningRateScheduler(0.1), TypeError, "learning_rates=0.1"),
    (lambda: TrainingCheckPoint("/no/such/dir"), ValueError, "not a directory"),
    (lambda: TrainingCheckPoint(".", interval=0), ValueError, "interval=0"),
])
def test_bad_callback_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_early_stopping_needs_the_eval_set_and_metric_it_names(noisy):
    (X, y), valid = noisy
    for callback, match in ((EarlyStopping(rounds=2), "needs an eval set"),
                            (EarlyStopping(rounds=2, data_name="test"),
                             r"data_name='test'\): no such eval set; the eval sets are "
                             r"\['validation_0'\]"),
                            (EarlyStopping(rounds=2, metric_name="auc"),
                             r"metric_name='auc'\): eval set 'validation_0' has no such")):
        with pytest.raises(ValueError, match=match):
            DaskBoostClassifier(n_estimators=3, callbacks=[callback]).fit(
                X, y, eval_set=[valid] if "needs" not in match else None)


def test_the_evaluation_monitor_prints_every_period_and_the_last_round(noisy, capsys):
    (X, y), valid = noisy
    DaskBoostClassifier(n_estimators=8, callbacks=[EvaluationMonitor(period=3)]).fit(
        X, y, eval_set=[valid])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[3]", "[6]", "[7]"]
    assert all(re_cell(line, "validation_0-logloss") for line in lines)
    import daskboost
    seen = []
    daskboost.cv({"objective": "binary:logistic"}, X, y, nfold=3, num_boost_round=2,
                 callbacks=[EvaluationMonitor(show_stdv=True, logger=seen.append)])
    assert len(seen) == 2 and re_cell(seen[1], r"test-logloss", stdv=True)


def re_cell(line, name, stdv=False):
    import re
    return re.search(rf"\t{name}:\d\.\d{{5}}" + (r"\+\d\.\d{5}" if stdv else ""), line)


def test_a_learning_rate_schedule_from_a_function_or_a_sequence(noisy):
    (X, y), _ = noisy
    # after round e the rate is learning_rates(e), for the rounds that follow (xgboost's)
    rates = [0.2, 0.1, 0.05, 0.02]
    listed = DaskBoostClassifier(n_estimators=4, callbacks=[LearningRateScheduler(rates)]).fit(X, y)
    called = DaskBoostClassifier(n_estimators=4, callbacks=[
        LearningRateScheduler(lambda epoch: rates[epoch])]).fit(X, y)
    assert listed.get_booster().to_dict() == called.get_booster().to_dict()
    by_hand = DaskBoostClassifier(n_estimators=1).fit(X, y)  # round 0 at 0.3
    for rate in rates[:3]:
        by_hand = DaskBoostClassifier(n_estimators=1, learning_rate=rate).fit(
            X, y, xgb_model=by_hand)
    np.testing.assert_allclose(listed.predict_proba(X), by_hand.predict_proba(X), atol=1e-12)
    with pytest.raises(ValueError, match="no rate for epoch 4"):
        DaskBoostClassifier(n_estimators=6, callbacks=[LearningRateScheduler(rates)]).fit(X, y)


@pytest.mark.parametrize("as_pickle", [False, True])
def test_training_checkpoints_every_interval(noisy, tmp_path, as_pickle):
    """At xgboost's rounds and under its file names: after the call's epochs interval,
    2 * interval, ..., named by the model's 0-based last round."""
    import pickle
    (X, y), _ = noisy
    first = DaskBoostClassifier(n_estimators=1).fit(X, y)
    DaskBoostClassifier(n_estimators=5, callbacks=[
        TrainingCheckPoint(tmp_path, name="m", as_pickle=as_pickle, interval=2)]).fit(
        X, y, xgb_model=first)
    suffix = ".pkl" if as_pickle else f".{TrainingCheckPoint.default_format}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"m_3{suffix}", f"m_5{suffix}"]
    for rounds, path in ((4, tmp_path / f"m_3{suffix}"), (6, tmp_path / f"m_5{suffix}")):
        if as_pickle:
            with open(path, "rb") as f:
                model = pickle.load(f)
        else:
            model = Booster.load(path)
        assert model.n_rounds == rounds


@pytest.mark.parametrize("rounds, interval", [(10, 2), (7, 3), (4, 1), (3, 5)])
def test_training_checkpoints_are_xgboosts_files(tmp_path, rounds, interval):
    xgboost = pytest.importorskip("xgboost")
    import daskboost
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), rng.normal(size=200)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir(), theirs.mkdir()
    daskboost.train({"max_depth": 2}, daskboost.DMatrix(X, y), rounds, callbacks=[
        daskboost.callback.TrainingCheckPoint(ours, interval=interval)])
    xgboost.train({"max_depth": 2}, xgboost.DMatrix(X, y), rounds, callbacks=[
        xgboost.callback.TrainingCheckPoint(theirs, interval=interval)])
    stems = sorted(p.stem for p in theirs.iterdir())
    assert sorted(p.stem for p in ours.iterdir()) == stems
    assert all(p.suffix == ".json" for p in ours.iterdir())


def test_cv_refuses_a_training_checkpoint(noisy, tmp_path):
    (X, y), _ = noisy
    import daskboost
    with pytest.raises(ValueError, match="cv has none to save"):
        daskboost.cv({}, X, y, nfold=3, callbacks=[TrainingCheckPoint(tmp_path)])


def test_callbacks_as_a_constructor_argument_as_in_xgboost_2(tmp_path):
    from sklearn.base import clone
    X, y = data()
    recorder = Recorder(stop_after=2)
    model = DaskBoostRegressor(n_estimators=8, max_depth=3, callbacks=[recorder]).fit(X, y)
    assert model.get_booster().n_rounds == 3 and recorder.calls[-1] == ("after_training", 3)
    assert clone(model).fit(X, y).get_booster().n_rounds == 3
    with pytest.raises(ValueError, match="callbacks given both as a parameter and to fit"):
        model.fit(X, y, callbacks=[recorder])
    # a callback is code: not in the model file, which is a plain fit's
    quiet = DaskBoostRegressor(n_estimators=3, max_depth=3, callbacks=[TrainingCallback()])
    quiet.fit(X, y).save_model(tmp_path / "called.json")
    DaskBoostRegressor(n_estimators=3, max_depth=3).fit(X, y).save_model(tmp_path / "plain.json")
    assert (tmp_path / "called.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
