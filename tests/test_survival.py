"""Survival analysis: ``survival:aft``, the accelerated failure time model, on each
row's interval of event times (``label_lower_bound`` / ``label_upper_bound``, or a y of
two columns): xgboost's gradients, metrics and models."""

import math

import dask.array as da
import numpy as np
import pytest

import daskboost as dxb
from daskboost import DMatrix, DaskBoostRegressor, cv
from daskboost.survival import DISTRIBUTIONS, aft_gradient, aft_loss
from row_batches import RowBatches

FAST = {"max_depth": 3, "learning_rate": 0.3, "objective": "survival:aft"}


def censored(n=1200, seed=0):
    """Discrete features (each value a bin: xgboost's cuts are ours), event times
    ``exp(f(x) + noise)``; a third right-censored, a tenth left-censored, a tenth
    interval-censored, the rest observed."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 4)).astype(np.float64)
    time = np.exp(0.4 * X[:, 0] - 0.3 * X[:, 1] + 0.1 * X[:, 2] * X[:, 3]
                  + rng.normal(scale=0.4, size=n))
    lower, upper = time.copy(), time.copy()
    kind = rng.random(n)
    right = kind < 1 / 3
    lower[right] = time[right] * rng.uniform(0.3, 1.0, right.sum())
    upper[right] = np.inf
    left = (kind >= 1 / 3) & (kind < 0.43)
    lower[left], upper[left] = 0.0, time[left] * rng.uniform(1.0, 2.0, left.sum())
    interval = (kind >= 0.43) & (kind < 0.53)
    lower[interval] = time[interval] * 0.8
    upper[interval] = time[interval] * 1.25
    return X, lower, upper, rng


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_gradients_are_the_derivatives_of_the_loss(distribution):
    code = DISTRIBUTIONS.index(distribution)
    for lower, upper in [(2.0, 2.0), (2.0, math.inf), (0.0, 3.0), (1.0, 4.0)]:
        for m in (-1.0, 0.3, 1.2, 2.5):
            g, h = aft_gradient(lower, upper, m, 0.8, code)
            eps = 1e-5
            slope = (aft_loss(lower, upper, m + eps, 0.8, code)
                     - aft_loss(lower, upper, m - eps, 0.8, code)) / (2 * eps)
            curve = (aft_gradient(lower, upper, m + eps, 0.8, code)[0]
                     - aft_gradient(lower, upper, m - eps, 0.8, code)[0]) / (2 * eps)
            assert g == pytest.approx(slope, rel=1e-5, abs=1e-6), (lower, upper, m)
            assert h == pytest.approx(max(curve, 1e-16), rel=1e-4, abs=1e-6), (lower, upper, m)
    # far from the data, xgboost's limits: the gradient clipped, the hessian bounded
    assert aft_gradient(2.0, 2.0, 80.0, 1.0, code)[0] == (15.0 if code == 0 else 1.0)
    assert 1e-16 <= aft_gradient(2.0, math.inf, -80.0, 1.0, code)[1] <= 15.0


@pytest.mark.parametrize("distribution,scale", [("normal", 1.0), ("logistic", 0.7),
                                                ("extreme", 1.3)])
def test_the_model_and_metrics_of_xgboost(distribution, scale):
    xgb = pytest.importorskip("xgboost")
    X, lower, upper, rng = censored(seed=1)
    weight = rng.uniform(0.5, 2.0, len(X))
    params = {**FAST, "tree_method": "hist", "aft_loss_distribution": distribution,
              "aft_loss_distribution_scale": scale,
              "eval_metric": ["aft-nloglik", "interval-regression-accuracy"]}
    ours, theirs = {}, {}
    matrix = DMatrix(X, weight=weight, label_lower_bound=lower, label_upper_bound=upper)
    model = dxb.train(params, matrix, 8, evals=[(matrix, "train")], evals_result=ours,
                      verbose_eval=False)
    reference_matrix = xgb.DMatrix(X, weight=weight)
    reference_matrix.set_float_info("label_lower_bound", lower)
    reference_matrix.set_float_info("label_upper_bound", upper)
    reference = xgb.train(params, reference_matrix, 8, evals=[(reference_matrix, "train")],
                          evals_result=theirs, verbose_eval=False)
    assert model.base_margin[0] == pytest.approx(math.log(0.5))  # xgboost's start
    np.testing.assert_allclose(model.predict(DMatrix(X)),
                               reference.predict(xgb.DMatrix(X)), rtol=2e-5)
    np.testing.assert_allclose(ours["train"]["aft-nloglik"], theirs["train"]["aft-nloglik"],
                               rtol=1e-5)
    np.testing.assert_allclose(ours["train"]["interval-regression-accuracy"],
                               theirs["train"]["interval-regression-accuracy"], atol=1e-6)


def test_every_way_to_give_the_bounds_is_the_same_model(cluster, tmp_path):
    distributed = pytest.importorskip("distributed")
    X, lower, upper, _ = censored(n=1500, seed=2)
    expected = dxb.train(FAST, DMatrix(X, label_lower_bound=lower, label_upper_bound=upper), 5)
    matrix = DMatrix(X)
    matrix.set_float_info("label_lower_bound", lower)
    matrix.set_info(label_upper_bound=upper)
    assert dxb.train(FAST, matrix, 5).save_raw() == expected.save_raw()
    np.testing.assert_array_equal(matrix.get_float_info("label_upper_bound"),
                                  upper.astype(np.float32))
    rows = np.arange(0, 1500, 3)
    part = matrix.slice(rows)
    np.testing.assert_array_equal(part.get_float_info("label_lower_bound"),
                                  lower[rows].astype(np.float32))
    assert dxb.train(FAST, part, 2).save_raw() == dxb.train(
        FAST, DMatrix(X[rows], label_lower_bound=lower[rows],
                      label_upper_bound=upper[rows]), 2).save_raw()
    # a y of two columns, lower and upper, with the estimator
    estimator = DaskBoostRegressor(n_estimators=5, **FAST).fit(X, np.column_stack([lower,
                                                                                   upper]))
    assert estimator.get_booster().save_raw() == expected.save_raw()
    predicted = estimator.predict(X)
    np.testing.assert_allclose(predicted, np.exp(estimator.predict(X, output_margin=True)))
    contributions = estimator.predict(X, pred_contribs=True)
    np.testing.assert_allclose(contributions.sum(axis=1), np.log(predicted), rtol=1e-6)
    weight = np.linspace(0.5, 2.0, len(X))
    result = {}
    dxb.train({**FAST, "eval_metric": "aft-nloglik"}, DMatrix(X, label_lower_bound=lower,
              label_upper_bound=upper), 5,
              evals=[(DMatrix(X, weight=weight, label_lower_bound=lower,
                              label_upper_bound=upper), "all")], evals_result=result)
    # score: minus the mean aft-nloglik (higher is better, for scikit-learn's searches;
    # the metric reads the bounds as the fit holds them, in float32)
    assert estimator.score(X, np.column_stack([lower, upper]), sample_weight=weight) == \
        pytest.approx(-result["all"]["aft-nloglik"][-1], rel=1e-7)
    # dask collections, on the threaded scheduler and on a cluster, in memory and out of core
    dX, dl, du = (da.from_array(a, chunks=500) for a in (X, lower, upper))
    dask_matrix = DMatrix(dX, label_lower_bound=dl, label_upper_bound=du)
    assert dxb.train(FAST, dask_matrix, 5).save_raw() == expected.save_raw()
    assert dxb.train({**FAST, "memory_budget": "40KB"}, dask_matrix, 5).save_raw() == \
        expected.save_raw()
    with distributed.Client(cluster) as client:
        result = dxb.dask.train(client, FAST, dxb.dask.DaskDMatrix(
            client, dX, label_lower_bound=dl, label_upper_bound=du), 5)
    assert result["booster"].save_raw() == expected.save_raw()
    batches = RowBatches(500, str(tmp_path / "cache"), data=X, label_lower_bound=lower,
                         label_upper_bound=upper)
    assert dxb.train(FAST, DMatrix(batches), 5).save_raw() == expected.save_raw()


def test_early_stopping_cv_and_model_files(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, lower, upper, _ = censored(n=1500, seed=3)
    train = DMatrix(X[:1000], label_lower_bound=lower[:1000], label_upper_bound=upper[:1000])
    held = DMatrix(X[1000:], label_lower_bound=lower[1000:], label_upper_bound=upper[1000:])
    params = {**FAST, "aft_loss_distribution": "logistic", "learning_rate": 0.8,
              "max_depth": 6}
    result = {}
    model = dxb.train(params, train, 200, evals=[(held, "held")], evals_result=result,
                      early_stopping_rounds=3, verbose_eval=False)
    scores = result["held"]["aft-nloglik"]
    assert model.best_iteration < 199 and len(scores) == model.best_iteration + 4
    assert model.best_score == pytest.approx(min(scores))
    frame = cv({**FAST, "aft_loss_distribution": "logistic"}, train, num_boost_round=6,
               nfold=3, seed=1)
    assert list(frame.columns) == ["train-aft-nloglik-mean", "train-aft-nloglik-std",
                                   "test-aft-nloglik-mean", "test-aft-nloglik-std"]
    assert frame["test-aft-nloglik-mean"].iloc[-1] < frame["test-aft-nloglik-mean"].iloc[0]
    # files: ours and xgboost's, both ways, the distribution kept
    path = str(tmp_path / "aft.json")
    model.save_model(path)
    again = dxb.Booster.load(path)
    assert again.objective_params["aft_loss_distribution"] == "logistic"
    assert "aft_loss_distribution_scale" not in again.objective_params  # (its default)
    np.testing.assert_array_equal(again.predict(held), model.predict(held))
    model.save_model(str(tmp_path / "x.json"), format="xgboost")
    theirs = xgb.Booster(model_file=str(tmp_path / "x.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X[1000:])), model.predict(held),
                               rtol=1e-5)
    theirs.save_model(str(tmp_path / "back.json"))
    assert dxb.Booster.load(str(tmp_path / "back.json")).objective_params[
        "aft_loss_distribution"] == "logistic"


def test_bad_intervals_and_parameters_are_refused_by_name():
    X, lower, upper, _ = censored(n=300, seed=4)

    def fit(lo, up, **params):
        return dxb.train({**FAST, **params}, DMatrix(X, label_lower_bound=lo,
                                                     label_upper_bound=up), 2)
    crossed = upper.copy()
    rows = np.flatnonzero(lower > 0)[:3]
    crossed[rows] = lower[rows] / 2
    with pytest.raises(ValueError, match=r"label_lower_bound is above label_upper_bound in "
                                         r"3 row\(s\)"):
        fit(lower, crossed)
    negative = lower.copy()
    negative[7] = -1.0
    with pytest.raises(ValueError, match="label_lower_bound must be finite and >= 0"):
        fit(negative, upper)
    with pytest.raises(ValueError, match="label_upper_bound must be > 0"):
        fit(np.zeros(300), np.zeros(300))
    with pytest.raises(ValueError, match="aft_loss_distribution='weibull' must be one of"):
        fit(lower, upper, aft_loss_distribution="weibull")
    with pytest.raises(ValueError, match="aft_loss_distribution_scale=0 must be a finite "
                                         "number > 0"):
        fit(lower, upper, aft_loss_distribution_scale=0)
    with pytest.raises(ValueError, match="needs each row's interval of event times"):
        dxb.train(FAST, DMatrix(X, lower), 2)
    with pytest.raises(ValueError, match="eval_metric='rmse' scores one label per row; "
                                         "objective='survival:aft'"):
        fit(lower, upper, eval_metric="rmse")
    with pytest.raises(ValueError, match="eval_metric='aft-nloglik' scores an interval"):
        dxb.train({"eval_metric": "aft-nloglik"}, DMatrix(X, lower), 2)
    with pytest.raises(ValueError, match="label_lower_bound has 300 rows, label_upper_bound "
                                         "299"):
        DMatrix(X, label_lower_bound=lower, label_upper_bound=upper[:299])
