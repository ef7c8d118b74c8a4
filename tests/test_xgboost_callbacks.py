"""xgboost's own callbacks work as they are: ``EarlyStopping`` (through the Booster's
``set_attr``), ``LearningRateScheduler`` (``set_param``), ``TrainingCheckPoint`` and
``EvaluationMonitor``; and the Booster's string attributes, saved with the model."""

import json

import numpy as np
import pytest

xgboost = pytest.importorskip("xgboost")

import daskboost  # noqa: E402
from daskboost import Booster, DaskBoostClassifier, TrainingCallback  # noqa: E402


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2500, 6))
    return X, (X[:, 0] - X[:, 1] + rng.normal(0, 1.0, 2500) > 0).astype(np.int64)


def test_xgboosts_early_stopping_is_the_built_in_one(xy):
    X, y = xy
    fit, valid = slice(500, None), slice(0, 500)
    theirs = DaskBoostClassifier(n_estimators=200, learning_rate=1.0).fit(
        X[fit], y[fit], eval_set=[(X[valid], y[valid])],
        callbacks=[xgboost.callback.EarlyStopping(rounds=3)])
    ours = DaskBoostClassifier(n_estimators=200, learning_rate=1.0, early_stopping_rounds=3).fit(
        X[fit], y[fit], eval_set=[(X[valid], y[valid])])
    booster = theirs.get_booster()
    assert booster.best_iteration == ours.get_booster().best_iteration is not None
    assert booster.num_boosted_rounds() == ours.get_booster().num_boosted_rounds() < 200
    assert booster.best_score == pytest.approx(ours.get_booster().best_score, rel=1e-12)
    assert np.array_equal(theirs.predict_proba(X), ours.predict_proba(X))  # the best rounds


def test_xgboosts_early_stopping_in_continued_training(xy):
    # its epochs count from 0 in each call (it adds the rounds the model started with),
    # as xgboost's train passes them; daskboost's once counted on and broke it
    X, y = xy
    fit, valid = slice(500, None), slice(0, 500)
    first = DaskBoostClassifier(n_estimators=3, learning_rate=1.0).fit(X[fit], y[fit])
    more = dict(n_estimators=200, learning_rate=1.0)
    theirs = DaskBoostClassifier(**more, callbacks=[xgboost.callback.EarlyStopping(rounds=3)])
    theirs.fit(X[fit], y[fit], eval_set=[(X[valid], y[valid])], xgb_model=first)
    ours = DaskBoostClassifier(**more, early_stopping_rounds=3).fit(
        X[fit], y[fit], eval_set=[(X[valid], y[valid])], xgb_model=first)
    assert theirs.best_iteration == ours.best_iteration >= 3
    assert theirs.get_booster().n_rounds == ours.get_booster().n_rounds < 203


def test_cv_with_xgboosts_early_stopping_ends_at_its_best_round(xy):
    X, y = xy
    params = {"objective": "binary:logistic", "eta": 1.0}
    theirs = daskboost.cv(params, X, y, num_boost_round=100, nfold=3,
                          callbacks=[xgboost.callback.EarlyStopping(rounds=3)])
    ours = daskboost.cv(params, X, y, num_boost_round=100, nfold=3, early_stopping_rounds=3)
    assert len(theirs) < 100
    assert theirs.equals(ours)


def test_a_learning_rate_schedule_applies_to_the_rounds_after_it_is_set(xy):
    X, y = xy
    # xgboost's scheduler sets the rate after each round for the rounds that follow
    scheduled = DaskBoostClassifier(n_estimators=5, learning_rate=0.3).fit(
        X, y, callbacks=[xgboost.callback.LearningRateScheduler(lambda epoch: 0.05)])
    first = DaskBoostClassifier(n_estimators=1, learning_rate=0.3).fit(X, y)
    then = DaskBoostClassifier(n_estimators=4, learning_rate=0.05).fit(X, y, xgb_model=first)
    np.testing.assert_allclose(scheduled.predict_proba(X), then.predict_proba(X),
                               rtol=0, atol=1e-12)
    plain = DaskBoostClassifier(n_estimators=5, learning_rate=0.3).fit(X, y)
    assert np.abs(plain.predict_proba(X) - scheduled.predict_proba(X)).max() > 0.05


def test_a_schedule_and_early_stopping_on_a_cluster_give_the_local_model(xy, cluster):
    import dask.array as da
    import distributed
    X, y = xy
    Xd, yd = da.from_array(X, chunks=800), da.from_array(y, chunks=800)

    def fit():
        return DaskBoostClassifier(n_estimators=6).fit(
            Xd, yd, eval_set=[(Xd, yd)],
            callbacks=[xgboost.callback.LearningRateScheduler(lambda epoch: 0.05),
                       xgboost.callback.EarlyStopping(rounds=2)])

    local = fit()
    with distributed.Client(cluster):
        remote = fit()
    assert json.dumps(local.get_booster().to_dict()) == json.dumps(remote.get_booster().to_dict())
    plain = DaskBoostClassifier(n_estimators=6).fit(Xd, yd)
    assert json.dumps(local.get_booster().to_dict()) != json.dumps(plain.get_booster().to_dict())


def test_cv_takes_a_learning_rate_schedule(xy):
    X, y = xy
    params = {"objective": "binary:logistic", "eta": 0.3}
    plain = daskboost.cv(params, X, y, num_boost_round=4, nfold=3)
    scheduled = daskboost.cv(params, X, y, num_boost_round=4, nfold=3, callbacks=[
        xgboost.callback.LearningRateScheduler(lambda epoch: 0.01)])
    assert scheduled.iloc[0].equals(plain.iloc[0])  # round 0 grew before the change
    # later rounds learn ~30x less: the test loss falls far more slowly
    assert (plain["test-logloss-mean"].iloc[0] - plain["test-logloss-mean"].iloc[3]) > 10 * (
        scheduled["test-logloss-mean"].iloc[0] - scheduled["test-logloss-mean"].iloc[3])


def test_set_param_is_checked_and_only_for_a_fit_in_progress(xy):
    X, y = xy

    class Setting(TrainingCallback):
        def __init__(self, *change):
            self.change = change

        def after_iteration(self, model, epoch, evals_log):
            model.set_param(*self.change)
            return False

    with pytest.raises(ValueError, match="only learning_rate / eta can change"):
        DaskBoostClassifier(n_estimators=2).fit(X, y, callbacks=[Setting("max_depth", 3)])
    with pytest.raises(ValueError, match="learning_rate=-1.0 must be > 0"):
        DaskBoostClassifier(n_estimators=2).fit(X, y, callbacks=[Setting({"eta": -1})])
    fitted = DaskBoostClassifier(n_estimators=2).fit(X, y).get_booster()
    with pytest.raises(ValueError, match=r"set_param\('eta'\) on a trained Booster: outside "
                                         "a fit a Booster takes nthread"):
        fitted.set_param("eta", 0.1)


def test_training_checkpoints_and_the_evaluation_monitor(xy, tmp_path, capsys):
    X, y = xy
    DaskBoostClassifier(n_estimators=5).fit(
        X, y, eval_set=[(X[:300], y[:300])],
        callbacks=[xgboost.callback.TrainingCheckPoint(tmp_path, interval=2),
                   xgboost.callback.EvaluationMonitor()])
    written = sorted(p.name for p in tmp_path.iterdir())
    assert len(written) == 2 and all(name.startswith("model_") for name in written)
    assert all(Booster.load(tmp_path / name).num_boosted_rounds() in (3, 5) for name in written)
    assert capsys.readouterr().out.count("validation_0-logloss:") == 5


# ---- the Booster's string attributes (xgboost's ``attr`` / ``set_attr``) ---------------

def test_attributes_are_kept_saved_and_exported(xy, tmp_path):
    X, y = xy
    booster = DaskBoostClassifier(n_estimators=3).fit(X, y).get_booster()
    plain = json.dumps(booster.to_dict(), sort_keys=True)
    booster.set_attr(owner="data team", run="42")
    assert booster.attr("owner") == "data team" and booster.attr("absent") is None
    booster.set_attr(run=None)
    assert booster.attributes() == {"owner": "data team"}
    booster.set_attr(best_iteration="1", best_score="0.25")
    assert booster.best_iteration == 1 and booster.best_score == 0.25
    assert booster.attributes()["best_iteration"] == "1"
    booster.save_model(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["attributes"] == {"owner": "data team"}
    loaded = Booster.load(tmp_path / "m.json")
    assert loaded.attributes() == booster.attributes()
    booster.save_model(tmp_path / "x.json", format="xgboost")
    theirs = xgboost.Booster(model_file=str(tmp_path / "x.json"))
    assert theirs.attr("owner") == "data team" and theirs.attr("best_iteration") == "1"
    assert Booster.load(tmp_path / "x.json").attributes() == booster.attributes()
    # a model without attributes keeps its bytes; a copy is independent
    twin = booster.copy()
    twin.set_attr(owner=None, best_iteration=None, best_score=None)
    assert json.dumps(twin.to_dict(), sort_keys=True) == plain
    assert booster.attr("owner") == "data team"
    assert booster.num_features() == 6
    assert booster.get_fscore() == booster.get_score(importance_type="weight")


@pytest.mark.parametrize("attributes,error,match", [
    ({"a": 1}, TypeError, "attribute values are strings"),
    ({"best_iteration": "x"}, ValueError, "must be a int"),
    ({"best_iteration": "3"}, ValueError, "out of range: the model has 3 rounds"),
    ({"best_score": "nan"}, ValueError, "out of range"),
])
def test_bad_attributes(xy, attributes, error, match):
    X, y = xy
    booster = DaskBoostClassifier(n_estimators=3).fit(X, y).get_booster()
    with pytest.raises(error, match=match):
        booster.set_attr(**attributes)


@pytest.mark.parametrize("value,match", [
    ([1], "attributes must map strings to strings"),
    ({"a": 1}, "attributes must map strings to strings"),
    ({"best_iteration": "0"}, "attributes.best_iteration is the model's own field"),
])
def test_crafted_attributes_in_a_model_file(xy, tmp_path, value, match):
    X, y = xy
    DaskBoostClassifier(n_estimators=3).fit(X, y).get_booster().save_model(tmp_path / "m.json")
    payload = json.loads((tmp_path / "m.json").read_text())
    payload["attributes"] = value
    (tmp_path / "bad.json").write_text(json.dumps(payload))
    with pytest.raises(ValueError, match=match):
        Booster.load(tmp_path / "bad.json")
