"""``scale_pos_weight``: xgboost's weight of the positive rows in the logistic losses.

A row labelled 1 weighs ``scale_pos_weight`` times its sample weight in the gradients
(and in the start, the minimiser of the loss so weighted). So a fit with it is the fit
with those weights given as ``sample_weight``, and xgboost's fit from the same start.
"""

import json

import numpy as np
import pandas as pd
import pytest

import daskboost
from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.booster import Booster
from daskboost.objectives import LOGISTIC_OBJECTIVES, LabelStats, get_objective

# few distinct values, the same in every fit, so that every value has a bin of its own
# and histogram split finding is exact (as in test_objective_parity.py)
LEVELS = np.arange(10) + 0.01 * np.sin(np.arange(10))


def imbalanced(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    X = LEVELS[rng.integers(0, 10, size=(n, 5))]
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.sin(np.nan_to_num(X[:, 0])) + 0.3 * np.nan_to_num(X[:, 1])
    y = (signal + rng.normal(0, 1, n) > 2.3).astype(int)
    return X, y


def test_the_data_is_imbalanced():
    _, y = imbalanced()
    assert 0.05 < y.mean() < 0.3


@pytest.mark.parametrize("objective", LOGISTIC_OBJECTIVES)
def test_gradients_are_those_of_the_positive_rows_weighted(objective):
    rng = np.random.default_rng(1)
    y = (rng.random(500) < 0.3).astype(np.float64)
    margin = rng.normal(size=(1, 500))
    weight = rng.uniform(0.5, 2.0, 500)
    scaled = get_objective(objective, scale_pos_weight=3.5)
    plain = get_objective(objective)
    for w in (None, weight):
        as_weights = np.where(y == 1, 3.5, 1.0) * (1.0 if w is None else w)
        g, h = scaled.gradients(margin, y, w)
        g0, h0 = plain.gradients(margin, y, as_weights)
        np.testing.assert_array_equal(g, g0)
        np.testing.assert_array_equal(h, h0)
    assert not np.array_equal(scaled.gradients(margin, y, None)[0],
                              plain.gradients(margin, y, None)[0])


def test_start_is_the_minimiser_of_the_weighted_loss():
    # 30 positives of 100 rows, weighted 4 times: p = 120 / (120 + 70)
    y = np.r_[np.ones(30), np.zeros(70)]
    for objective in ("binary:logistic", "reg:logistic"):
        start = get_objective(objective, scale_pos_weight=4.0).base_margin(
            LabelStats.from_labels(y))[0]
        assert start == pytest.approx(np.log(120 / 70), rel=1e-12)
    # soft labels (reg:logistic): only the rows labelled exactly 1 weigh more
    y = np.r_[np.ones(10), np.full(10, 0.5), np.zeros(20)]
    start = get_objective("reg:logistic", scale_pos_weight=2.0).base_margin(
        LabelStats.from_labels(y))[0]
    p = (20 + 5) / (20 + 10 + 20)
    assert start == pytest.approx(np.log(p / (1 - p)), rel=1e-12)


@pytest.mark.parametrize("scale", [0.25, 4.0])
def test_fit_equals_the_fit_with_the_positive_rows_weighted(scale):
    X, y = imbalanced()
    params = dict(n_estimators=8, max_depth=4, random_state=0)
    scaled = DaskBoostClassifier(scale_pos_weight=scale, **params).fit(X, y)
    weighted = DaskBoostClassifier(**params).fit(X, y, sample_weight=np.where(y == 1, scale, 1.0))
    np.testing.assert_allclose(scaled.get_booster().base_margin,
                               weighted.get_booster().base_margin, rtol=1e-12)
    np.testing.assert_allclose(scaled.predict_proba(X), weighted.predict_proba(X),
                               rtol=1e-9, atol=1e-12)
    plain = DaskBoostClassifier(**params).fit(X, y)
    assert np.abs(scaled.predict_proba(X) - plain.predict_proba(X)).max() > 0.01


def test_a_larger_weight_raises_the_positive_predictions_and_recall():
    X, y = imbalanced()
    params = dict(n_estimators=20, max_depth=3, learning_rate=0.3)
    plain = DaskBoostClassifier(**params).fit(X, y)
    scaled = DaskBoostClassifier(scale_pos_weight=(y == 0).sum() / (y == 1).sum(),
                                 **params).fit(X, y)
    assert scaled.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean() + 0.1
    recall = lambda m: (m.predict(X)[y == 1] == 1).mean()  # noqa: E731
    assert recall(scaled) > recall(plain) + 0.2


@pytest.mark.parametrize("objective", ["binary:logistic", "binary:logitraw"])
@pytest.mark.parametrize("max_depth", [2, 5])
def test_matches_xgboost(objective, max_depth):
    xgb = pytest.importorskip("xgboost")
    X, y = imbalanced(seed=3)
    params = dict(n_estimators=10, max_depth=max_depth, scale_pos_weight=5.0,
                  objective=objective)
    ours = DaskBoostClassifier(**params).fit(X, y)
    margin = ours.get_booster().base_margin[0]
    # xgboost starts from one Newton step: hand it daskboost's start (output space)
    base_score = 1 / (1 + np.exp(-margin)) if objective == "binary:logistic" else margin
    theirs = xgb.XGBClassifier(**params, base_score=float(base_score), tree_method="hist",
                               max_bin=256, n_jobs=1).fit(X, y)
    a = ours.predict(X, output_margin=True)
    b = theirs.predict(X, output_margin=True)
    np.testing.assert_allclose(a, b, atol=1e-4)


def test_saved_loaded_and_exported(tmp_path):
    X, y = imbalanced()
    model = DaskBoostClassifier(n_estimators=5, scale_pos_weight=2.5).fit(X, y)
    path = tmp_path / "m.json"
    model.save_model(path)
    loaded = DaskBoostClassifier().load_model(path)
    assert loaded.scale_pos_weight == 2.5
    assert loaded.get_booster().get_objective().scale_pos_weight == 2.5
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    exported = tmp_path / "x.json"
    model.save_model(exported, format="xgboost")
    section = json.loads(exported.read_text())["learner"]["objective"]["reg_loss_param"]
    assert float(section["scale_pos_weight"]) == 2.5
    assert Booster.load(exported).objective_params["scale_pos_weight"] == 2.5


def test_default_leaves_the_model_file_without_it(tmp_path):
    X, y = imbalanced()
    model = DaskBoostClassifier(n_estimators=3).fit(X, y)
    path = tmp_path / "m.json"
    model.save_model(path)
    assert "scale_pos_weight" not in path.read_text()
    model.save_model(path, format="xgboost")
    section = json.loads(path.read_text())["learner"]["objective"]["reg_loss_param"]
    assert section == {"scale_pos_weight": "1"}


def test_cv_uses_it():
    X, y = imbalanced()
    params = {"objective": "binary:logistic", "max_depth": 3}
    plain = daskboost.cv(params, X, y, nfold=3, num_boost_round=5)
    scaled = daskboost.cv({**params, "scale_pos_weight": 6.0}, X, y, nfold=3,
                          num_boost_round=5)
    # the positives weigh more, so the (unweighted) log loss of the skewed model is worse
    assert scaled["train-logloss-mean"].iloc[-1] > plain["train-logloss-mean"].iloc[-1] + 0.02


@pytest.mark.parametrize("value, error, match", [
    (0, ValueError, r"scale_pos_weight=0\.0 must be > 0"),
    (-1.5, ValueError, r"scale_pos_weight=-1\.5 must be > 0"),
    (float("nan"), ValueError, r"scale_pos_weight=nan must be finite"),
    (float("inf"), ValueError, r"scale_pos_weight=inf must be finite"),
    ("3", TypeError, r"scale_pos_weight='3' must be a number"),
    (True, TypeError, r"scale_pos_weight=True must be a number"),
])
def test_bad_values_are_refused_before_any_work(value, error, match):
    X, y = imbalanced()
    with pytest.raises(error, match=match):
        DaskBoostClassifier(scale_pos_weight=value).fit(X, y)


def test_objectives_that_do_not_use_it_refuse_it():
    X, y = imbalanced()
    with pytest.raises(ValueError, match=r"objective='reg:squarederror' does not use it"):
        DaskBoostRegressor(scale_pos_weight=2.0).fit(X, y)
    with pytest.raises(ValueError, match=r"objective='reg:gamma' does not use it"):
        DaskBoostRegressor(objective="reg:gamma", scale_pos_weight=2.0).fit(X, y + 1.0)
    with pytest.raises(ValueError, match=r"objective='multi:softprob' does not use it"):
        DaskBoostClassifier(scale_pos_weight=2.0).fit(X, np.arange(len(y)) % 3)

    def custom(labels, margins):
        p = 1 / (1 + np.exp(-margins))
        return p - labels, p * (1 - p)

    with pytest.raises(ValueError, match=r"objective='a custom objective' does not use it"):
        DaskBoostClassifier(objective=custom, scale_pos_weight=2.0).fit(X, y)
    # 1 is no weight: every objective takes it
    DaskBoostRegressor(n_estimators=1, scale_pos_weight=1.0).fit(X, y)


def test_dask_input_gives_the_same_model():
    dd = pytest.importorskip("dask.dataframe")
    X, y = imbalanced()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    params = dict(n_estimators=5, max_depth=3, scale_pos_weight=3.0)
    local = DaskBoostClassifier(**params).fit(frame, y)
    lazy = DaskBoostClassifier(**params).fit(dd.from_pandas(frame, npartitions=3),
                                             dd.from_pandas(pd.Series(y), npartitions=3))
    np.testing.assert_allclose(lazy.predict_proba(frame), local.predict_proba(frame),
                               rtol=1e-12)


@pytest.mark.parametrize("crafted", [0.0, -1.0, "x", None])
def test_a_model_file_with_a_bad_scale_pos_weight_is_refused(crafted, tmp_path):
    X, y = imbalanced()
    path = tmp_path / "model.json"
    DaskBoostClassifier(n_estimators=2, scale_pos_weight=3.0).fit(X, y).save_model(path)
    payload = json.loads(path.read_text())
    payload["objective_params"]["scale_pos_weight"] = crafted
    path.write_text(json.dumps(payload))
    with pytest.raises(ValueError, match=r"model\.json: objective_params"):
        Booster.load(path)
