"""Same math as xgboost (tree_method="hist").

With at most ``max_bin`` distinct values per feature, both libraries give every value a
bin of its own, so histogram split finding is the exact greedy algorithm in both and
the models must agree: predictions to 1e-4 on at least 99% of rows.  On continuous data
the cut points come from different sketches, so only the test metric is compared
(within 0.5%).
"""

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from daskboost import DaskBoostClassifier, DaskBoostRegressor  # noqa: E402


def discrete_data(seed, n=6000, n_features=6, n_values=12, missing=0.1):
    rng = np.random.default_rng(seed)
    # the same non-integer distinct values for every seed, so test rows hold the values
    # the models were trained on
    levels = np.arange(n_values) + 0.01 * np.sin(np.arange(n_values))
    X = levels[rng.integers(0, n_values, size=(n, n_features))]
    signal = np.sin(X[:, 0]) + 0.3 * X[:, 1] - 0.2 * X[:, 2] * (X[:, 3] > 5)
    X[rng.random(X.shape) < missing] = np.nan
    return X, signal, rng


def agreement(a, b, tol=1e-4):
    return float(np.mean(np.abs(a - b) <= tol))


XGB_COMMON = dict(tree_method="hist", max_bin=256, n_jobs=1)


@pytest.mark.parametrize("max_depth,reg_lambda", [(2, 1.0), (4, 0.0), (6, 5.0)])
def test_squared_error_matches_xgboost(max_depth, reg_lambda):
    X, signal, rng = discrete_data(max_depth)
    y = signal + rng.normal(0, 0.3, len(signal))
    params = dict(n_estimators=15, max_depth=max_depth, learning_rate=0.3,
                  reg_lambda=reg_lambda, min_child_weight=1.0)
    ours = DaskBoostRegressor(**params).fit(X, y)
    base = float(np.mean(y))
    theirs = xgb.XGBRegressor(**params, base_score=base, **XGB_COMMON).fit(X, y)
    X_test, _, _ = discrete_data(100 + max_depth)
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


@pytest.mark.parametrize("max_depth,reg_lambda,gamma,min_child_weight",
                         [(3, 1.0, 0.0, 1.0), (5, 2.0, 0.5, 0.5), (6, 0.5, 0.0, 5.0)])
def test_logistic_matches_xgboost(max_depth, reg_lambda, gamma, min_child_weight):
    X, signal, rng = discrete_data(10 + max_depth)
    y = (signal + rng.logistic(0, 0.5, len(signal)) > np.median(signal)).astype(int)
    params = dict(n_estimators=15, max_depth=max_depth, learning_rate=0.3,
                  reg_lambda=reg_lambda, gamma=gamma, min_child_weight=min_child_weight)
    ours = DaskBoostClassifier(**params).fit(X, y)
    theirs = xgb.XGBClassifier(**params, base_score=float(np.mean(y)), **XGB_COMMON).fit(X, y)
    X_test, _, _ = discrete_data(200 + max_depth)
    p_ours = ours.predict_proba(X_test)[:, 1]
    p_theirs = theirs.predict_proba(X_test)[:, 1]
    assert agreement(p_ours, p_theirs) >= 0.99
    margin_ours = ours.predict(X_test, output_margin=True)
    margin_theirs = theirs.predict(X_test, output_margin=True)
    assert agreement(margin_ours, margin_theirs, tol=1e-3) >= 0.99


def test_sample_weights_match_xgboost():
    X, signal, rng = discrete_data(42)
    y = signal + rng.normal(0, 0.3, len(signal))
    w = rng.uniform(0.2, 3.0, len(y))
    params = dict(n_estimators=10, max_depth=4, learning_rate=0.3)
    ours = DaskBoostRegressor(**params).fit(X, y, sample_weight=w)
    theirs = xgb.XGBRegressor(**params, base_score=float(np.average(y, weights=w)),
                              **XGB_COMMON).fit(X, y, sample_weight=w)
    assert agreement(ours.predict(X), theirs.predict(X)) >= 0.99


def continuous_data(seed, n):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    logit = X[:, 0] - X[:, 1] * X[:, 2] + np.sin(2 * X[:, 3]) + 0.5 * X[:, 4] ** 2
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, logit, rng


def test_continuous_regression_metric_matches_xgboost():
    X, signal, rng = continuous_data(0, 40000)
    y = signal + rng.normal(0, 0.5, len(signal))
    X_train, X_test, y_train, y_test = X[:30000], X[30000:], y[:30000], y[30000:]
    params = dict(n_estimators=100, max_depth=6, learning_rate=0.2)
    ours = DaskBoostRegressor(**params).fit(X_train, y_train)
    theirs = xgb.XGBRegressor(**params, **XGB_COMMON).fit(X_train, y_train)
    rmse = lambda p: float(np.sqrt(np.mean((p - y_test) ** 2)))
    assert rmse(ours.predict(X_test)) <= rmse(theirs.predict(X_test)) * 1.005


def test_continuous_classification_metric_matches_xgboost():
    from sklearn.metrics import roc_auc_score
    X, logit, rng = continuous_data(1, 40000)
    y = (logit + rng.logistic(size=len(logit)) > 0).astype(int)
    X_train, X_test, y_train, y_test = X[:30000], X[30000:], y[:30000], y[30000:]
    params = dict(n_estimators=100, max_depth=6, learning_rate=0.2)
    ours = DaskBoostClassifier(**params).fit(X_train, y_train)
    theirs = xgb.XGBClassifier(**params, **XGB_COMMON).fit(X_train, y_train)
    auc_ours = roc_auc_score(y_test, ours.predict_proba(X_test)[:, 1])
    auc_theirs = roc_auc_score(y_test, theirs.predict_proba(X_test)[:, 1])
    assert auc_ours >= auc_theirs * 0.995
