"""Every objective, and the L1 / max_delta_step regularisers, against xgboost 3.2.

Same set-up as ``test_xgboost_parity.py``: features take few distinct values, the same
values in training and test data, so both libraries give each value a bin of its own,
histogram split finding is the exact greedy algorithm in both, and the models must
agree.  Both sides start from the same intercept: daskboost's fitted start
(``get_booster().base_margin``) is handed to xgboost as the equivalent ``base_score``
(through the objective's inverse link), or the same ``base_score`` is given to both.

Margins (``output_margin=True``) must agree to 1e-4 on at least 99% of the test rows.
The tolerance is relative for margins larger than 1 in magnitude
(``|a - b| <= 1e-4 * max(1, |b|)``): for the log-link objectives a margin is a log, and
xgboost keeps margins in float32.  Adaptive leaves (absolute and quantile error) are
held to 1e-3 on 95% of the rows.

On continuous data the cut points come from different sketches, so only the test
metric is compared there (within 1%).
"""

import json

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from daskboost import DaskBoostClassifier, DaskBoostRegressor  # noqa: E402

XGB_COMMON = dict(tree_method="hist", max_bin=256, n_jobs=1)
N_VALUES = 10
# the same non-integer distinct values for every seed, so test rows hold the values the
# models were trained on
LEVELS = np.arange(N_VALUES) + 0.01 * np.sin(np.arange(N_VALUES))


def discrete_data(seed, n=3000, n_features=5, missing=0.1):
    """(X, signal, rng): X has few distinct values (and 10% missing)."""
    rng = np.random.default_rng(seed)
    X = LEVELS[rng.integers(0, N_VALUES, size=(n, n_features))]
    signal = np.sin(X[:, 0]) + 0.3 * X[:, 1] - 0.2 * X[:, 2] * (X[:, 3] > 5)
    X[rng.random(X.shape) < missing] = np.nan
    return X, signal - signal.mean(), rng


def held_out_rows(seed):
    return discrete_data(seed, n=2000)[0]


def agreement(a, b, tol=1e-4):
    """Fraction of entries with ``|a - b| <= tol * max(1, |b|)``."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    return float(np.mean(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b))))


def sigmoid(m):
    return 1.0 / (1.0 + np.exp(-m))


def xgb_intercept(model):
    """xgboost's fitted intercept (``base_score``) as an array."""
    config = json.loads(model.get_booster().save_config())
    value = config["learner"]["learner_model_param"]["base_score"]
    return np.atleast_1d(np.array(json.loads(value), dtype=np.float64))


# ---- labels for each objective ---------------------------------------------------------

def squared_labels(signal, rng):
    return signal + rng.normal(0, 0.3, len(signal))


def unit_interval_labels(signal, rng):
    return sigmoid(signal + rng.normal(0, 0.5, len(signal)))


def count_labels(signal, rng):
    return rng.poisson(np.exp(0.5 * signal)).astype(np.float64)


def positive_labels(signal, rng):
    return rng.gamma(2.0, np.exp(0.5 * signal) / 2.0)


def tweedie_labels(signal, rng):
    # compound Poisson-gamma: exact zeros and positive amounts
    counts = rng.poisson(np.exp(0.5 * signal))
    return np.array([rng.gamma(2.0, 0.5, c).sum() for c in counts])


def binary_labels(signal, rng):
    return (signal + rng.logistic(0, 0.5, len(signal)) > 0).astype(np.int64)


def class_labels(signal, rng, n_classes):
    noisy = signal + rng.normal(0, 0.3, len(signal))
    return np.digitize(noisy, np.quantile(noisy, np.linspace(0, 1, n_classes + 1)[1:-1]))


# objective, extra parameters, labels, base_score (output space) from daskboost's margin
REGRESSION_CASES = {
    "squarederror": ("reg:squarederror", {}, squared_labels, lambda m: float(m)),
    "squaredlogerror": ("reg:squaredlogerror", {}, positive_labels, lambda m: float(m)),
    # daskboost starts pseudo-Huber from the true minimiser, xgboost from one Newton
    # step: hand daskboost's start to xgboost
    "pseudohuber": ("reg:pseudohubererror", {}, squared_labels, lambda m: float(m)),
    "pseudohuber-slope3": ("reg:pseudohubererror", {"huber_slope": 3.0}, squared_labels,
                           lambda m: float(m)),
    "reg-logistic": ("reg:logistic", {}, unit_interval_labels, lambda m: float(sigmoid(m))),
    # max_delta_step left at its default on both sides (0.7 for Poisson)
    "poisson": ("count:poisson", {}, count_labels, lambda m: float(np.exp(m))),
    "gamma": ("reg:gamma", {}, positive_labels, lambda m: float(np.exp(m))),
    "tweedie-1.2": ("reg:tweedie", {"tweedie_variance_power": 1.2}, tweedie_labels,
                    lambda m: float(np.exp(m))),
    "tweedie-1.7": ("reg:tweedie", {"tweedie_variance_power": 1.7}, tweedie_labels,
                    lambda m: float(np.exp(m))),
}

DEPTH_LAMBDA = [(2, 1.0), (4, 0.0), (6, 5.0)]


def fit_pair(our_class, their_class, X, y, to_base_score, sample_weight=None, **params):
    """Fit daskboost, then xgboost from daskboost's start; returns both models."""
    ours = our_class(**params).fit(X, y, sample_weight=sample_weight)
    margin = ours.get_booster().base_margin
    assert margin.shape == (1,)
    base_score = to_base_score(margin[0])
    theirs = their_class(**params, base_score=base_score, **XGB_COMMON)
    theirs.fit(X, y, sample_weight=sample_weight)
    return ours, theirs


@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
@pytest.mark.parametrize("case", sorted(REGRESSION_CASES))
def test_regression_objective_matches_xgboost(case, max_depth, reg_lambda):
    objective, extra, make_labels, to_base_score = REGRESSION_CASES[case]
    X, signal, rng = discrete_data(max_depth)
    y = make_labels(signal, rng)
    ours, theirs = fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y, to_base_score,
                            objective=objective, n_estimators=12, max_depth=max_depth,
                            learning_rate=0.3, reg_lambda=reg_lambda, **extra)
    X_test = held_out_rows(100 + max_depth)
    margin_ours = ours.predict(X_test, output_margin=True)
    margin_theirs = theirs.predict(X_test, output_margin=True)
    assert np.std(margin_theirs) > 0.05  # the trees did something
    assert agreement(margin_ours, margin_theirs) >= 0.99
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
def test_binary_logistic_matches_xgboost(max_depth, reg_lambda):
    X, signal, rng = discrete_data(10 + max_depth)
    y = binary_labels(signal, rng)
    ours, theirs = fit_pair(DaskBoostClassifier, xgb.XGBClassifier, X, y,
                            lambda m: float(sigmoid(m)), objective="binary:logistic",
                            n_estimators=12, max_depth=max_depth, reg_lambda=reg_lambda)
    X_test = held_out_rows(110 + max_depth)
    assert agreement(ours.predict(X_test, output_margin=True),
                     theirs.predict(X_test, output_margin=True)) >= 0.99
    assert agreement(ours.predict_proba(X_test), theirs.predict_proba(X_test)) >= 0.99


@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
@pytest.mark.parametrize("base_score", [None, 0.25])
def test_binary_logitraw_matches_xgboost(max_depth, reg_lambda, base_score):
    # xgboost's base_score for binary:logitraw is the margin itself; daskboost's too
    X, signal, rng = discrete_data(20 + max_depth)
    y = binary_labels(signal, rng)
    params = dict(objective="binary:logitraw", n_estimators=12, max_depth=max_depth,
                  reg_lambda=reg_lambda)
    ours = DaskBoostClassifier(**params, base_score=base_score).fit(X, y)
    start = ours.get_booster().base_margin
    if base_score is not None:
        np.testing.assert_array_equal(start, [base_score])
    theirs = xgb.XGBClassifier(**params, base_score=float(start[0]), **XGB_COMMON).fit(X, y)
    X_test = held_out_rows(120 + max_depth)
    margin_ours = ours.predict(X_test, output_margin=True)
    assert agreement(margin_ours, theirs.predict(X_test, output_margin=True)) >= 0.99
    # logitraw's labels: the sign of the margin
    np.testing.assert_array_equal(ours.predict(X_test), (margin_ours > 0).astype(np.int64))


@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
@pytest.mark.parametrize("lean, weighted", [(0.0, False), (1.5, True), (-1.5, False)])
def test_binary_hinge_matches_xgboost(max_depth, reg_lambda, lean, weighted):
    # both start from xgboost's Newton step put through the hinge's output (1 or 0, as
    # the labels lean), with no base_score handed over; 0/1 outputs and probabilities
    X, signal, rng = discrete_data(40 + max_depth)
    y = (signal + lean + rng.logistic(0, 0.5, len(signal)) > 0).astype(np.int64)
    w = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    params = dict(objective="binary:hinge", n_estimators=12, max_depth=max_depth,
                  reg_lambda=reg_lambda)
    ours = DaskBoostClassifier(**params).fit(X, y, sample_weight=w)
    theirs = xgb.XGBClassifier(**params, **XGB_COMMON).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(ours.get_booster().base_margin, xgb_intercept(theirs))
    X_test = held_out_rows(140 + max_depth)
    margin_ours = ours.predict(X_test, output_margin=True)
    assert agreement(margin_ours, theirs.predict(X_test, output_margin=True)) >= 0.99
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99
    np.testing.assert_array_equal(ours.predict_proba(X_test)[:, 1], ours.predict(X_test))
    assert agreement(ours.predict_proba(X_test), theirs.predict_proba(X_test)) >= 0.99


@pytest.mark.parametrize("n_classes", [3, 5])
@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
@pytest.mark.parametrize("base_score", [None, 0.5])
def test_softprob_matches_xgboost(n_classes, max_depth, reg_lambda, base_score):
    """Default start: both estimate the centred log class priors (checked first); a
    given base_score is every class's margin, untransformed, in both."""
    X, signal, rng = discrete_data(30 + max_depth + n_classes)
    y = class_labels(signal, rng, n_classes)
    params = dict(n_estimators=8, max_depth=max_depth, reg_lambda=reg_lambda,
                  objective="multi:softprob", base_score=base_score)
    ours = DaskBoostClassifier(**params).fit(X, y)
    theirs = xgb.XGBClassifier(**params, **XGB_COMMON).fit(X, y)
    start = ours.get_booster().base_margin
    assert start.shape == (n_classes,)
    np.testing.assert_allclose(start, xgb_intercept(theirs), atol=1e-6)
    X_test = held_out_rows(130 + max_depth)
    proba = ours.predict_proba(X_test)
    assert proba.shape == (len(X_test), n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    margin_ours = ours.predict(X_test, output_margin=True)
    margin_theirs = theirs.predict(X_test, output_margin=True)
    assert margin_ours.shape == margin_theirs.shape == (len(X_test), n_classes)
    assert agreement(margin_ours, margin_theirs) >= 0.99
    assert agreement(proba, theirs.predict_proba(X_test)) >= 0.99


@pytest.mark.parametrize("max_depth,reg_lambda", DEPTH_LAMBDA)
def test_softmax_matches_xgboost(max_depth, reg_lambda):
    X, signal, rng = discrete_data(40 + max_depth)
    y = class_labels(signal, rng, 4)
    params = dict(n_estimators=8, max_depth=max_depth, reg_lambda=reg_lambda,
                  objective="multi:softmax")
    ours = DaskBoostClassifier(**params).fit(X, y)
    theirs = xgb.XGBClassifier(**params, **XGB_COMMON).fit(X, y)
    np.testing.assert_allclose(ours.get_booster().base_margin, xgb_intercept(theirs),
                               atol=1e-6)
    X_test = held_out_rows(140 + max_depth)
    assert agreement(ours.predict(X_test, output_margin=True),
                     theirs.predict(X_test, output_margin=True)) >= 0.99
    assert np.mean(ours.predict(X_test) == theirs.predict(X_test)) >= 0.99
    np.testing.assert_allclose(ours.predict_proba(X_test).sum(axis=1), 1.0, atol=1e-9)


# ---- regularisers -----------------------------------------------------------------------

@pytest.mark.parametrize("reg_alpha,reg_lambda,max_depth", [(2.0, 1.0, 4), (0.5, 0.0, 6),
                                                            (20.0, 1.0, 3)])
def test_reg_alpha_squared_error_matches_xgboost(reg_alpha, reg_lambda, max_depth):
    X, signal, rng = discrete_data(50 + max_depth)
    y = squared_labels(signal, rng)
    ours, theirs = fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y, lambda m: float(m),
                            n_estimators=12, max_depth=max_depth, reg_alpha=reg_alpha,
                            reg_lambda=reg_lambda)
    X_test = held_out_rows(150 + max_depth)
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


def test_reg_alpha_changes_the_model():
    # guards the parity test above against reg_alpha being ignored on both sides
    X, signal, rng = discrete_data(51)
    y = squared_labels(signal, rng)
    plain = DaskBoostRegressor(n_estimators=5, max_depth=4).fit(X, y)
    l1 = DaskBoostRegressor(n_estimators=5, max_depth=4, reg_alpha=20.0).fit(X, y)
    assert np.max(np.abs(plain.predict(X) - l1.predict(X))) > 1e-3


@pytest.mark.parametrize("reg_alpha", [2.0, 0.5])
def test_reg_alpha_logistic_matches_xgboost(reg_alpha):
    X, signal, rng = discrete_data(60)
    y = binary_labels(signal, rng)
    ours, theirs = fit_pair(DaskBoostClassifier, xgb.XGBClassifier, X, y,
                            lambda m: float(sigmoid(m)), n_estimators=12, max_depth=4,
                            reg_alpha=reg_alpha)
    X_test = held_out_rows(160)
    assert agreement(ours.predict(X_test, output_margin=True),
                     theirs.predict(X_test, output_margin=True)) >= 0.99


# max_delta_step with reg_lambda > 0 only: with reg_lambda = 0, a node whose children
# are both clipped to the same +-max_delta_step has a split gain of exactly 0, which
# xgboost (gains in float32) sees as rounding noise above its 1e-6 threshold and splits
# anyway: a split into two equal leaves that changes what the next levels may find.
@pytest.mark.parametrize("max_delta_step", [0.3, 0.05])
@pytest.mark.parametrize("max_depth,reg_lambda", [(3, 1.0), (6, 5.0)])
def test_max_delta_step_squared_error_matches_xgboost(max_delta_step, max_depth, reg_lambda):
    X, signal, rng = discrete_data(70 + max_depth)
    y = 3.0 * squared_labels(signal, rng)  # large leaves, so the clip binds
    ours, theirs = fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y, lambda m: float(m),
                            n_estimators=12, max_depth=max_depth, reg_lambda=reg_lambda,
                            learning_rate=1.0, max_delta_step=max_delta_step)
    leaves = [t.value[t.feature < 0] for t in ours.get_booster().trees]
    assert max(np.max(np.abs(v)) for v in leaves) == pytest.approx(max_delta_step)
    X_test = held_out_rows(170 + max_depth)
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


@pytest.mark.parametrize("max_delta_step", [0.3, 0.1])
@pytest.mark.parametrize("objective", ["binary:logistic", "reg:logistic"])
def test_max_delta_step_logistic_matches_xgboost(max_delta_step, objective):
    X, signal, rng = discrete_data(80)
    estimator, their_class = DaskBoostClassifier, xgb.XGBClassifier
    y = binary_labels(3.0 * signal, rng)
    if objective == "reg:logistic":
        estimator, their_class = DaskBoostRegressor, xgb.XGBRegressor
        y = y.astype(np.float64)
    ours, theirs = fit_pair(estimator, their_class, X, y, lambda m: float(sigmoid(m)),
                            objective=objective, n_estimators=12, max_depth=4,
                            reg_lambda=1.0, learning_rate=1.0, max_delta_step=max_delta_step)
    X_test = held_out_rows(180)
    assert agreement(ours.predict(X_test, output_margin=True),
                     theirs.predict(X_test, output_margin=True)) >= 0.99


def test_explicit_max_delta_step_for_poisson_matches_xgboost():
    X, signal, rng = discrete_data(90)
    y = count_labels(2.0 * signal, rng)
    ours, theirs = fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y,
                            lambda m: float(np.exp(m)), objective="count:poisson",
                            n_estimators=12, max_depth=4, max_delta_step=0.2)
    X_test = held_out_rows(190)
    assert agreement(ours.predict(X_test, output_margin=True),
                     theirs.predict(X_test, output_margin=True)) >= 0.99


def test_reg_alpha_with_max_delta_step_matches_xgboost():
    X, signal, rng = discrete_data(95)
    y = squared_labels(signal, rng)
    ours, theirs = fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y, lambda m: float(m),
                            n_estimators=12, max_depth=4, max_delta_step=0.3, reg_alpha=1.0)
    X_test = held_out_rows(195)
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


# ---- adaptive leaves -------------------------------------------------------------------
# 2000 training rows: every leaf has fewer rows than the residual sketch holds (2048 for
# max_bin=256), so daskboost's leaf quantiles are exact.  Labels are float32 numbers,
# as both libraries keep them.

QUANTILE_CASES = [("reg:absoluteerror", 0.5), ("reg:quantileerror", 0.5),
                  ("reg:quantileerror", 0.2), ("reg:quantileerror", 0.9)]


def heavy_tailed(seed):
    X, signal, rng = discrete_data(seed, n=2000)
    y = (signal + rng.standard_t(2, len(signal))).astype(np.float32).astype(np.float64)
    return X, y, rng


def quantile_pair(objective, alpha, max_depth, X, y, sample_weight):
    params = dict(objective=objective, n_estimators=5, max_depth=max_depth,
                  learning_rate=0.5)
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = alpha
    return fit_pair(DaskBoostRegressor, xgb.XGBRegressor, X, y, lambda m: float(m),
                    sample_weight=sample_weight, **params)


@pytest.mark.parametrize("max_depth", [1, 3, 5])
@pytest.mark.parametrize("objective,alpha", QUANTILE_CASES)
def test_adaptive_leaves_match_xgboost_with_sample_weights(objective, alpha, max_depth):
    """With sample weights xgboost takes the weighted alpha-quantile of each leaf's
    residuals (the smallest value whose cumulative weight reaches alpha * W); continuous
    weights leave no ties, so that quantile is unique."""
    X, y, rng = heavy_tailed(200 + max_depth)
    w = rng.uniform(0.5, 2.0, len(y))
    ours, theirs = quantile_pair(objective, alpha, max_depth, X, y, w)
    X_test = held_out_rows(210 + max_depth)
    assert np.std(theirs.predict(X_test)) > 0.05
    assert agreement(ours.predict(X_test), theirs.predict(X_test), tol=1e-3) >= 0.95


@pytest.mark.parametrize("max_depth", [1, 4])
def test_several_quantiles_match_xgboost_with_sample_weights(max_depth):
    """quantile_alpha as a list: one output per level (its start, trees and adaptive
    leaves at its own level), as xgboost's multi-quantile regression."""
    X, y, rng = heavy_tailed(250 + max_depth)
    w = rng.uniform(0.5, 2.0, len(y))
    params = dict(objective="reg:quantileerror", quantile_alpha=[0.2, 0.5, 0.9],
                  n_estimators=5, max_depth=max_depth, learning_rate=0.5)
    ours = DaskBoostRegressor(**params).fit(X, y, sample_weight=w)
    theirs = xgb.XGBRegressor(**params, **XGB_COMMON).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.get_booster().base_margin, xgb_intercept(theirs),
                               rtol=1e-6)
    X_test = held_out_rows(260 + max_depth)
    expected = theirs.predict(X_test)
    assert expected.shape == (len(X_test), 3)
    assert np.std(expected, axis=0).min() > 0.05
    assert agreement(ours.predict(X_test), expected, tol=1e-3) >= 0.95


@pytest.mark.parametrize("objective,alpha", QUANTILE_CASES)
@pytest.mark.xfail(strict=True, reason=(
    "bug (xgboost parity): without sample weights xgboost's adaptive leaves use "
    "common::Quantile, which interpolates between order statistics (position "
    "alpha * (n + 1)); daskboost takes a weighted quantile (an order statistic), so "
    "leaves differ and later trees split differently"))
def test_adaptive_leaves_match_xgboost_without_sample_weights(objective, alpha):
    X, y, _ = heavy_tailed(220)
    ours, theirs = quantile_pair(objective, alpha, 3, X, y, None)
    X_test = held_out_rows(230)
    assert agreement(ours.predict(X_test), theirs.predict(X_test), tol=1e-3) >= 0.95


@pytest.mark.parametrize("objective,alpha", QUANTILE_CASES)
def test_quantile_start_matches_xgboost_with_sample_weights(objective, alpha):
    X, y, rng = heavy_tailed(240)
    w = rng.uniform(0.5, 2.0, len(y))
    params = dict(objective=objective, n_estimators=1, max_depth=2)
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = alpha
    ours = DaskBoostRegressor(**params).fit(X, y, sample_weight=w)
    theirs = xgb.XGBRegressor(**params, **XGB_COMMON).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.get_booster().base_margin, xgb_intercept(theirs),
                               rtol=1e-6)


@pytest.mark.xfail(strict=True, reason=(
    "bug (xgboost parity): xgboost's unweighted intercept for reg:absoluteerror is the "
    "interpolated median (common::Quantile); daskboost's start is an order statistic"))
def test_absolute_error_start_matches_xgboost_without_sample_weights():
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    y = np.array([0.0, 1.0, 10.0, 14.0])
    ours = DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=1).fit(X, y)
    theirs = xgb.XGBRegressor(objective="reg:absoluteerror", n_estimators=1,
                              **XGB_COMMON).fit(X, y)
    assert xgb_intercept(theirs)[0] == 5.5
    assert ours.get_booster().base_margin[0] == pytest.approx(5.5)


@pytest.mark.xfail(strict=True, reason=(
    "bug (xgboost parity): on an exact tie (cumulative weight equal to alpha * W, e.g. "
    "unit weights and an even count) xgboost's common::WeightedQuantile takes the lower "
    "value (lower_bound); daskboost takes the upper one"))
def test_absolute_error_start_with_a_weight_tie_matches_xgboost():
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    y = np.array([0.0, 1.0, 10.0, 14.0])
    w = np.ones(4)
    ours = DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=1).fit(
        X, y, sample_weight=w)
    theirs = xgb.XGBRegressor(objective="reg:absoluteerror", n_estimators=1,
                              **XGB_COMMON).fit(X, y, sample_weight=w)
    assert xgb_intercept(theirs)[0] == 1.0
    assert ours.get_booster().base_margin[0] == 1.0


# ---- continuous data: test metrics within 1% --------------------------------------------

def continuous_data(seed, n):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    f = 0.6 * X[:, 0] - 0.4 * X[:, 1] * X[:, 2] + 0.4 * np.sin(2 * X[:, 3])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, f, rng


N_TRAIN = 20000
CONTINUOUS = dict(n_estimators=100, max_depth=6, learning_rate=0.1)


def poisson_deviance(y, mu):
    term = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mu), 0.0)
    return float(np.mean(2.0 * (term - (y - mu))))


def gamma_deviance(y, mu):
    return float(np.mean(2.0 * (np.log(mu / y) + y / mu - 1.0)))


def mean_absolute_error(y, p):
    return float(np.mean(np.abs(y - p)))


def multi_logloss(y, proba):
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-16, None))))


@pytest.mark.parametrize("objective,make_labels,metric,extra", [
    ("count:poisson", lambda f, rng: rng.poisson(np.exp(f)).astype(np.float64),
     poisson_deviance, {}),
    # eval_metric given: see test_training_knobs for the default ('gamma-deviance')
    ("reg:gamma", lambda f, rng: rng.gamma(8.0, np.exp(f) / 8.0), gamma_deviance,
     {"eval_metric": "gamma-nloglik"}),
    ("reg:absoluteerror", lambda f, rng: f + rng.laplace(0, 0.5, len(f)),
     mean_absolute_error, {}),
])
def test_continuous_regression_metric_matches_xgboost(objective, make_labels, metric, extra):
    X, f, rng = continuous_data(7, 2 * N_TRAIN)
    y = make_labels(f, rng)
    train, test = slice(0, N_TRAIN), slice(N_TRAIN, None)
    ours = DaskBoostRegressor(objective=objective, **CONTINUOUS, **extra).fit(X[train], y[train])
    theirs = xgb.XGBRegressor(objective=objective, **CONTINUOUS, **XGB_COMMON)
    theirs.fit(X[train], y[train])
    ours_value = metric(y[test], ours.predict(X[test]))
    theirs_value = metric(y[test], theirs.predict(X[test]))
    assert abs(ours_value / theirs_value - 1.0) <= 0.01, (ours_value, theirs_value)


def test_continuous_multiclass_mlogloss_matches_xgboost():
    X, f, rng = continuous_data(8, 2 * N_TRAIN)
    logits = np.stack([f, 0.8 * np.nan_to_num(X[:, 4]), -f], axis=1)
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (rng.random(len(f))[:, None] > np.cumsum(proba, axis=1)).sum(axis=1)
    n = N_TRAIN // 2
    train, test = slice(0, n), slice(N_TRAIN, None)
    ours = DaskBoostClassifier(**CONTINUOUS).fit(X[train], y[train])
    theirs = xgb.XGBClassifier(**CONTINUOUS, **XGB_COMMON).fit(X[train], y[train])
    ours_value = multi_logloss(y[test], ours.predict_proba(X[test]))
    theirs_value = multi_logloss(y[test], theirs.predict_proba(X[test]))
    assert abs(ours_value / theirs_value - 1.0) <= 0.01, (ours_value, theirs_value)


def test_squared_log_error_starts_where_xgboost_does():
    X, signal, rng = discrete_data(21)
    y = positive_labels(signal, rng)
    weights = rng.uniform(0.5, 2.0, len(y))
    params = dict(objective="reg:squaredlogerror", n_estimators=2, max_depth=3)
    ours = DaskBoostRegressor(**params).fit(X, y, sample_weight=weights)
    theirs = xgb.XGBRegressor(**params, **XGB_COMMON).fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(ours.get_booster().base_margin, xgb_intercept(theirs),
                               rtol=1e-6)
