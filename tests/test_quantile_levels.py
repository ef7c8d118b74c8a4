"""Several quantile levels in one model (xgboost's multi-quantile regression).

``objective="reg:quantileerror", quantile_alpha=[a_1, ..., a_Q]`` grows one tree per
level and round, each from its own level's gradients, start and adaptive leaves, so
output k is the model that ``quantile_alpha=a_k`` alone grows (to the bit, as nothing
else couples the outputs); predictions are ``(n, Q)``.
"""

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost
from daskboost import DaskBoostRegressor

LEVELS = [0.1, 0.5, 0.9]


def data(seed=0, n=3000):
    """Noise that grows with |x1|: the quantiles spread apart where it is large."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    y = X[:, 0] + rng.normal(size=n) * (0.3 + np.abs(X[:, 1]))
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y.astype(np.float32).astype(np.float64), rng.uniform(0.5, 2.0, n)


def model(levels=LEVELS, **kw):
    return DaskBoostRegressor(objective="reg:quantileerror", quantile_alpha=levels,
                              n_estimators=8, max_depth=3, **kw)


def trees_of_output(booster, k):
    """Output k's trees as dicts (a round's K trees are side by side)."""
    trees = booster.to_dict()["trees"]
    return trees[k::booster.n_outputs]


@pytest.mark.parametrize("weighted", [False, True])
def test_each_output_is_the_model_of_its_level_alone(weighted):
    X, y, w = data()
    w = w if weighted else None
    # (row subsampling draws a round's rows for all its trees; column sampling draws per
    # tree, so it would differ between output k and the model of one level)
    several = model(subsample=0.8).fit(X, y, sample_weight=w)
    booster = several.get_booster()
    assert booster.n_outputs == 3
    predictions = several.predict(X)
    assert predictions.shape == (len(X), 3)
    for k, level in enumerate(LEVELS):
        alone = model(level, subsample=0.8).fit(X, y, sample_weight=w)
        assert trees_of_output(booster, k) == alone.get_booster().to_dict()["trees"], level
        assert booster.base_margin[k] == alone.get_booster().base_margin[0]
        np.testing.assert_array_equal(predictions[:, k], alone.predict(X))


def test_held_out_coverage_is_each_level():
    """On held-out rows, the share of labels at or below output k is a_k (+-0.03 on
    20,000 rows, binomial sd <= 0.004)."""
    X, y, _ = data(1, n=20_000)
    fitted = model(n_jobs=2).set_params(n_estimators=40).fit(X[:10_000], y[:10_000])
    p = fitted.predict(X[10_000:])
    coverage = (y[10_000:, None] <= p).mean(axis=0)
    np.testing.assert_allclose(coverage, LEVELS, atol=0.03)
    assert np.all(np.diff(p.mean(axis=0)) > 0.5)  # the levels apart, in order


def test_one_level_in_a_list_is_that_level():
    X, y, _ = data()
    listed = model([0.3]).fit(X, y).get_booster()
    plain = model(0.3).fit(X, y).get_booster()
    assert listed.save_raw() == plain.save_raw()


def test_dask_partitions_give_the_model_of_the_whole_data():
    """Labels of one decimal: every residual sketch is exact, so the starts and leaves do
    not depend on the partitioning (``test_adaptive_leaves``)."""
    X, y, w = data()
    y = np.round(y, 1)
    in_memory = model().fit(X, y, sample_weight=w)
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    on_dask = model().fit(frame, dd.from_pandas(pd.Series(y), npartitions=3),
                          sample_weight=dd.from_pandas(pd.Series(w), npartitions=3))
    for ours, whole in zip(on_dask.get_booster().trees, in_memory.get_booster().trees):
        np.testing.assert_array_equal(ours.feature, whole.feature)
        np.testing.assert_allclose(ours.value, whole.value, rtol=1e-12)
    expected = on_dask.predict(X)
    np.testing.assert_allclose(expected, in_memory.predict(X), rtol=1e-9, atol=1e-12)
    lazy = on_dask.predict(frame)
    assert isinstance(lazy, dd.DataFrame) and list(lazy.columns) == [0, 1, 2]
    np.testing.assert_array_equal(lazy.compute().to_numpy(), expected)
    array = on_dask.predict(da.from_array(X, chunks=(1000, 4)))
    assert array.shape == (len(X), 3)
    np.testing.assert_array_equal(array.compute(), expected)


def test_on_a_cluster_the_same_model(cluster):
    distributed = pytest.importorskip("distributed")
    X, y, _ = data()
    threaded = model().fit(X, y)
    with distributed.Client(cluster):
        on_cluster = model().fit(da.from_array(X, chunks=(1000, 4)),
                                 da.from_array(y, chunks=1000))
    assert on_cluster.get_booster().save_raw() == threaded.get_booster().save_raw()


def test_native_train_eval_metric_and_early_stopping():
    X, y, _ = data()
    train, valid = daskboost.DMatrix(X[:2000], y[:2000]), daskboost.DMatrix(X[2000:], y[2000:])
    log = {}
    booster = daskboost.train({"objective": "reg:quantileerror", "quantile_alpha": LEVELS,
                               "max_depth": 3, "learning_rate": 0.5}, train, 200,
                              evals=[(valid, "valid")], evals_result=log,
                              early_stopping_rounds=5, verbose_eval=False)
    losses = log["valid"]["quantile"]
    assert booster.best_iteration < 199 and len(losses) == booster.best_iteration + 6
    assert losses[booster.best_iteration] == min(losses)
    # the metric is the pinball loss averaged over the levels (xgboost's)
    margins = booster.predict(valid, iteration_range=(0, len(losses)))
    d = y[2000:, None] - margins
    alpha = np.array(LEVELS)
    expected = np.maximum(alpha * d, (alpha - 1) * d).mean()
    assert losses[-1] == pytest.approx(expected, rel=1e-6)


def test_cv_frame_and_its_early_stopping():
    X, y, _ = data()
    frame = daskboost.cv({"objective": "reg:quantileerror", "quantile_alpha": LEVELS,
                          "max_depth": 3, "learning_rate": 0.5}, daskboost.DMatrix(X, y),
                         num_boost_round=200, nfold=3, early_stopping_rounds=3, seed=1)
    assert list(frame.columns) == ["train-quantile-mean", "train-quantile-std",
                                   "test-quantile-mean", "test-quantile-std"]
    assert len(frame) < 200
    assert frame["test-quantile-mean"].iloc[-1] == frame["test-quantile-mean"].min()


def test_contributions_add_up_to_each_output():
    X, y, _ = data()
    fitted = model().fit(X, y)
    contributions = fitted.predict(X[:50], pred_contribs=True)
    assert contributions.shape == (50, 3, X.shape[1] + 1)
    np.testing.assert_allclose(contributions.sum(axis=2), fitted.predict(X[:50]), atol=1e-5)


def test_model_file_and_xgboost_round_trips(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y, _ = data()
    fitted = model().fit(X, y)
    booster = fitted.get_booster()
    expected = fitted.predict(X)
    booster.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(daskboost.Booster(model_file=tmp_path / "m.json")
                                  .predict(daskboost.DMatrix(X)), expected)
    reloaded = DaskBoostRegressor()
    reloaded.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(reloaded.predict(X), expected)
    booster.save_model(tmp_path / "x.json", format="xgboost")
    exported = json.loads((tmp_path / "x.json").read_text())["learner"]
    assert exported["learner_model_param"]["num_target"] == "3"
    levels = exported["objective"]["quantile_loss_param"]["quantile_alpha"]
    np.testing.assert_allclose([float(a) for a in levels.strip("[]").split(",")], LEVELS,
                               rtol=1e-7)
    theirs = xgb.Booster(model_file=str(tmp_path / "x.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X)), expected, atol=1e-5)
    back = daskboost.Booster(model_file=tmp_path / "x.json")
    assert back.n_outputs == 3 and back.objective_params["quantile_alpha"] == LEVELS
    np.testing.assert_allclose(back.predict(daskboost.DMatrix(X)), expected, atol=1e-5)


def test_an_xgboost_multi_quantile_model_predicts_as_in_xgboost(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y, _ = data()
    theirs = xgb.train({"objective": "reg:quantileerror", "quantile_alpha": LEVELS,
                        "tree_method": "hist", "max_depth": 3}, xgb.QuantileDMatrix(X, y), 6)
    theirs.save_model(str(tmp_path / "theirs.json"))
    ours = daskboost.Booster(model_file=tmp_path / "theirs.json")
    np.testing.assert_allclose(ours.predict(daskboost.DMatrix(X)),
                               theirs.predict(xgb.DMatrix(X)), atol=1e-5)


@pytest.mark.parametrize("levels,message", [
    ([], r"quantile_alpha=\[\] must be a number in \(0, 1\) or a non-empty list"),
    ([0.5, 1.2], r"quantile_alpha\[1\]=1\.2 must be in \(0, 1\)"),
    ([0.5, "x"], r"quantile_alpha\[1\]='x' must be a number"),
    ([[0.1, 0.2]], r"quantile_alpha=\[\[0\.1, 0\.2\]\] must be a number in \(0, 1\) or"),
    (np.array([[0.1], [0.2]]), r"must be a number in \(0, 1\) or a non-empty list"),
])
def test_bad_levels_are_refused_by_name_before_any_pass(levels, message):
    X, y, _ = data(n=50)
    with pytest.raises((ValueError, TypeError), match=message):
        model(levels).fit(X, y)


def test_one_prediction_metrics_and_r2_are_refused_with_several_levels():
    X, y, _ = data(n=300)
    with pytest.raises(ValueError, match=r"eval_metric='rmse' scores one prediction per "
                                         r"row.*predicts 3 quantiles.*use 'quantile'"):
        model(eval_metric="rmse").fit(X, y, eval_set=[(X, y)])
    fitted = model().fit(X, y)
    with pytest.raises(ValueError, match=r"R\^2 of one prediction per row; this model "
                                         r"predicts 3 quantiles"):
        fitted.score(X, y)
