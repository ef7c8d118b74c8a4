"""Training knobs: early stopping, eval sets and their metrics, row and column sampling,
multiclass handling, bad input, feature importances.

Data sets are small and their features take few distinct values, so every value has a
bin of its own and models trained on differently partitioned copies of the same rows
differ only by the order in which float64 sums are added.
"""

import math
import re

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor

N_FEATURES = 6
COLUMNS = [f"f{i}" for i in range(N_FEATURES)]


def features(seed, n):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, N_FEATURES)).astype(np.float64)
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, rng


def signal_of(X):
    Z = np.nan_to_num(X, nan=3.0)
    return np.sin(Z[:, 0]) + 0.3 * Z[:, 1] - 0.2 * Z[:, 2] * (Z[:, 3] > 4)


def regression_data(seed, n=1500, noise=0.3):
    X, rng = features(seed, n)
    s = signal_of(X)
    return X, s + rng.normal(0, noise, n)


def binary_data(seed, n=1500, temperature=1.0):
    X, rng = features(seed, n)
    s = signal_of(X)
    logit = 3.0 * (s - 1.0) * temperature
    return X, (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)


def multiclass_data(seed, n=1500, n_classes=3):
    X, rng = features(seed, n)
    s = signal_of(X) + rng.normal(0, 0.3, n)
    return X, np.digitize(s, np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))


def as_dask(X, y, n_partitions, w=None):
    frame = pd.DataFrame(X, columns=COLUMNS)
    parts = [dd.from_pandas(frame, npartitions=n_partitions),
             dd.from_pandas(pd.Series(y, name="y"), npartitions=n_partitions)]
    if w is not None:
        parts.append(dd.from_pandas(pd.Series(w, name="w"), npartitions=n_partitions))
    assert parts[0].npartitions == n_partitions
    return parts


def assert_same_trees(model_a, model_b, rtol=1e-9):
    trees_a, trees_b = model_a.get_booster().trees, model_b.get_booster().trees
    assert len(trees_a) == len(trees_b)
    for a, b in zip(trees_a, trees_b):
        for name in ("feature", "threshold", "default_left", "left", "right"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_allclose(a.value, b.value, rtol=rtol, atol=1e-12)


def trees_differ(model_a, model_b):
    trees_a, trees_b = model_a.get_booster().trees, model_b.get_booster().trees
    if len(trees_a) != len(trees_b):
        return True
    return any(a.feature.shape != b.feature.shape or not np.array_equal(a.feature, b.feature)
               or not np.allclose(a.value, b.value) for a, b in zip(trees_a, trees_b))


# ---- early stopping --------------------------------------------------------------------

def early_stopping_case(kind, metric):
    """(estimator, X, y, eval_set) whose last eval loss first falls, then provably rises.

    Regression: training labels are the signal itself, the eval labels half of it.  The
    predictions move from the mean towards the signal, passing 0.5 * signal on the way
    (the eval optimum) and then moving away from it.  Classification: the eval labels
    are drawn with a third of the training log-odds, so the growing confidence of the
    model first helps and then hurts the eval log loss.
    """
    params = dict(n_estimators=60, max_depth=3, early_stopping_rounds=3, eval_metric=metric)
    if kind == "regression":
        X, _ = features(1, 1500)
        X_eval, _ = features(2, 600)
        model = DaskBoostRegressor(learning_rate=0.1, **params)
        return model, X, signal_of(X), [(X, signal_of(X)), (X_eval, 0.5 * signal_of(X_eval))]
    X, y = binary_data(3)
    X_eval, y_eval = binary_data(4, n=600, temperature=1 / 3)
    model = DaskBoostClassifier(learning_rate=0.3, **params)
    return model, X, y, [(X, y), (X_eval, y_eval)]


@pytest.mark.parametrize("kind,metric,higher_is_better", [
    ("regression", None, False),            # default: rmse
    ("regression", ["rmse", "mae"], False),  # the last metric drives
    ("regression", ["mae", "rmse"], False),
    ("classification", None, False),        # default: logloss
    ("classification", ["error", "logloss"], False),
    ("classification", ["logloss", "auc"], True),
])
def test_early_stopping(kind, metric, higher_is_better):
    model, X, y, eval_set = early_stopping_case(kind, metric)
    model.fit(X, y, eval_set=eval_set)
    result = model.evals_result()
    assert list(result) == ["validation_0", "validation_1"]
    names = list(result["validation_1"])
    last = names[-1]
    if metric is not None:
        assert names == list(metric)
    curve = np.array(result["validation_1"][last])
    best = model.best_iteration
    # it stopped early, after 3 rounds without improvement of the last set's last metric
    assert 3 <= len(curve) < 60
    assert best == (np.argmax(curve) if higher_is_better else np.argmin(curve))
    assert model.best_score == curve[best]
    assert len(curve) == best + 1 + 3
    later = curve[best + 1:]
    assert np.all(later <= curve[best]) if higher_is_better else np.all(later >= curve[best])
    # every metric of every eval set was recorded for every round, trees kept
    for per_set in result.values():
        assert all(len(values) == len(curve) for values in per_set.values())
    booster = model.get_booster()
    assert booster.n_rounds == best + 1 + 3
    assert len(booster.trees) == len(booster.get_dump()) == best + 1 + 3
    # prediction defaults to the best round
    X_test, _ = features(9, 500)
    default = model.predict(X_test, output_margin=True)
    np.testing.assert_array_equal(
        default, model.predict(X_test, output_margin=True, iteration_range=(0, best + 1)))
    assert np.max(np.abs(default - model.predict(X_test, output_margin=True,
                                                 iteration_range=(0, best + 4)))) > 0
    params = model.get_params()
    params.update(n_estimators=best + 1, early_stopping_rounds=None, eval_metric=None)
    short = type(model)(**params).fit(X, y)
    np.testing.assert_allclose(default, short.predict(X_test, output_margin=True),
                               rtol=1e-9, atol=1e-9)
    if kind == "classification":
        np.testing.assert_allclose(model.predict_proba(X_test), short.predict_proba(X_test),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(model.predict(X_test), short.predict(X_test))
    else:
        np.testing.assert_allclose(model.predict(X_test), short.predict(X_test),
                                   rtol=1e-9, atol=1e-9)


def test_early_stopping_case_is_not_trivial():
    # the eval loss really does fall before it rises: the best round is not the first
    model, X, y, eval_set = early_stopping_case("regression", None)
    model.fit(X, y, eval_set=eval_set)
    assert model.best_iteration >= 3


def test_no_early_stop_keeps_every_round_and_predicts_with_the_best():
    model, X, y, eval_set = early_stopping_case("regression", None)
    model.set_params(n_estimators=6, early_stopping_rounds=10)
    model.fit(X, y, eval_set=eval_set[:1])  # the training data: the loss keeps falling
    curve = model.evals_result()["validation_0"]["rmse"]
    assert len(curve) == 6 and model.get_booster().n_rounds == 6
    assert model.best_iteration == int(np.argmin(curve)) == 5


# ---- evals_result against the model's own predictions ------------------------------------

def as_stored(values):
    """Labels and weights as training keeps them: float32, as xgboost does."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def recompute(name, y, pred, w=None):
    """The metric ``name`` from predictions (output space), xgboost's definitions."""
    from sklearn.metrics import roc_auc_score
    y = as_stored(y)
    w = np.ones(len(y)) if w is None else as_stored(w)
    if name == "rmse":
        return math.sqrt(np.sum(w * (y - pred) ** 2) / w.sum())
    if name == "mae":
        return np.sum(w * np.abs(y - pred)) / w.sum()
    if name == "logloss":
        p = np.clip(pred, 1e-16, 1 - 1e-16)
        return -np.sum(w * (y * np.log(p) + (1 - y) * np.log(1 - p))) / w.sum()
    if name == "error":
        return np.sum(w * ((pred > 0.5) != y)) / w.sum()
    if name == "auc":
        return roc_auc_score(y, pred, sample_weight=w)
    if name == "mlogloss":
        p = np.maximum(pred[np.arange(len(y)), y.astype(np.int64)], 1e-16)
        return -np.sum(w * np.log(p)) / w.sum()
    if name == "merror":
        return np.sum(w * (np.argmax(pred, axis=1) != y)) / w.sum()
    raise AssertionError(name)


def round_predictions(model, X, r):
    """Round r's predictions in output space (positive-class probability for binary)."""
    if isinstance(model, DaskBoostClassifier):
        proba = model.predict_proba(X, iteration_range=(0, r + 1))
        return proba[:, 1] if proba.shape[1] == 2 else proba
    return model.predict(X, iteration_range=(0, r + 1))


def check_evals_result(model, eval_sets, weights):
    result = model.evals_result()
    assert list(result) == [f"validation_{i}" for i in range(len(eval_sets))]
    for i, ((X, y), w) in enumerate(zip(eval_sets, weights)):
        for name, values in result[f"validation_{i}"].items():
            assert len(values) == model.n_estimators
            for r, value in enumerate(values):
                expected = recompute(name, np.asarray(y), round_predictions(model, X, r), w)
                tol = dict(rtol=0, atol=1e-6) if name == "auc" else dict(rtol=1e-9, atol=1e-12)
                np.testing.assert_allclose(value, expected, **tol,
                                           err_msg=f"validation_{i} {name} round {r}")


def test_regression_evals_result_equals_metrics_of_the_predictions():
    X, y = regression_data(10)
    sets = [regression_data(11, n=400), regression_data(12, n=500), regression_data(13, n=300)]
    weights = [None, np.random.default_rng(0).uniform(0.1, 3.0, 500), None]
    model = DaskBoostRegressor(n_estimators=8, max_depth=3, eval_metric=["rmse", "mae"])
    model.fit(X, y, eval_set=sets, sample_weight_eval_set=weights)
    assert list(model.evals_result()["validation_2"]) == ["rmse", "mae"]
    check_evals_result(model, sets, weights)


def test_binary_evals_result_equals_metrics_of_the_predictions():
    X, y = binary_data(20)
    sets = [binary_data(21, n=500), binary_data(22, n=400)]
    weights = [np.random.default_rng(1).uniform(0.1, 3.0, 500), None]
    model = DaskBoostClassifier(n_estimators=8, max_depth=3,
                                eval_metric=["logloss", "auc", "error"])
    model.fit(X, y, eval_set=sets, sample_weight_eval_set=weights)
    check_evals_result(model, sets, weights)


def test_multiclass_evals_result_equals_metrics_of_the_predictions():
    X, y = multiclass_data(30, n_classes=4)
    sets = [multiclass_data(31, n=500, n_classes=4)]
    weights = [np.random.default_rng(2).uniform(0.1, 3.0, 500)]
    model = DaskBoostClassifier(n_estimators=6, max_depth=3, eval_metric=["mlogloss", "merror"])
    model.fit(X, y, eval_set=sets, sample_weight_eval_set=weights)
    check_evals_result(model, sets, weights)


def test_default_metric_is_recorded():
    X, y = multiclass_data(32)
    model = DaskBoostClassifier(n_estimators=3, max_depth=2).fit(X, y, eval_set=[(X, y)])
    assert list(model.evals_result()["validation_0"]) == ["mlogloss"]
    X, y = regression_data(33)
    model = DaskBoostRegressor(n_estimators=3, max_depth=2).fit(X, y, eval_set=[(X, y)])
    assert list(model.evals_result()["validation_0"]) == ["rmse"]


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_dask_and_in_memory_eval_sets_give_the_same_values(estimator):
    if estimator == "regressor":
        make, X, y = DaskBoostRegressor, *regression_data(40)
        (Xa, ya), (Xb, yb) = regression_data(41, n=700), regression_data(42, n=500)
        metric = ["rmse", "mae"]
    else:
        make, X, y = DaskBoostClassifier, *binary_data(40)
        (Xa, ya), (Xb, yb) = binary_data(41, n=700), binary_data(42, n=500)
        metric = ["logloss", "auc"]
    wb = np.random.default_rng(3).uniform(0.1, 3.0, len(yb))
    params = dict(n_estimators=6, max_depth=3, eval_metric=metric)
    in_memory = make(**params).fit(X, y, eval_set=[(Xa, ya), (Xb, yb)],
                                   sample_weight_eval_set=[None, wb])
    Xa_d, ya_d = as_dask(Xa, ya, 3)
    Xb_d, yb_d, wb_d = as_dask(Xb, yb, 4, wb)
    # a pandas training frame, so that the dask frames' column names match it
    frame = pd.DataFrame(X, columns=COLUMNS)
    on_dask = make(**params).fit(frame, y, eval_set=[(Xa_d, ya_d), (Xb_d, yb_d)],
                                 sample_weight_eval_set=[None, wb_d])
    assert_same_trees(in_memory, on_dask, rtol=0)
    expected, got = in_memory.evals_result(), on_dask.evals_result()
    assert list(expected) == list(got)
    for name in expected:
        assert list(expected[name]) == list(got[name])
        for metric_name in expected[name]:
            np.testing.assert_allclose(got[name][metric_name], expected[name][metric_name],
                                       rtol=1e-9, atol=1e-12)


def _eval_passes_on_training_states(monkeypatch):
    """Count the passes that evaluate an eval set on the training states."""
    import daskboost.training as training
    calls = []
    evaluate = training.training_eval_step

    def counted(state, step):
        calls.append(step)
        return evaluate(state, step)

    monkeypatch.setattr(training, "training_eval_step", counted)
    return calls


@pytest.mark.parametrize("case", ["numpy", "weighted", "multiclass", "dask frame",
                                  "out of core", "approx, adaptive leaves"])
def test_an_eval_set_that_is_the_training_data_is_evaluated_on_the_training_states(
        case, monkeypatch):
    # the same values, bit for bit, as for an equal copy of the data (evaluated on eval
    # states of its own), and the same model; early stopping reads them
    make, params, fit_kw = DaskBoostClassifier, {}, {}
    X, y = binary_data(60, n=2000)
    if case == "multiclass":
        X, y = multiclass_data(61, n=2000, n_classes=4)
    elif case == "approx, adaptive leaves":
        make, (X, y) = DaskBoostRegressor, regression_data(62, n=2000)
        params = dict(tree_method="approx", objective="reg:absoluteerror")
    elif case == "out of core":
        params = dict(memory_budget="8KB")
    if case == "weighted":
        fit_kw["sample_weight"] = np.random.default_rng(4).uniform(0.1, 3.0, len(y))
    X_eval, y_eval = X.copy(), y.copy()
    if case == "dask frame":
        X, y = as_dask(X, y, 3)
        X_eval, y_eval = as_dask(X_eval, y_eval, 3)
        X_eval = X_eval[list(reversed(COLUMNS))][COLUMNS]  # equal partitions, another graph
    params = dict(n_estimators=12, max_depth=3, early_stopping_rounds=3, **params)
    weights = [fit_kw.get("sample_weight")] * 2 if fit_kw else None
    calls = _eval_passes_on_training_states(monkeypatch)
    copied = make(**params).fit(X, y, eval_set=[(X_eval, y_eval)],
                                sample_weight_eval_set=weights and weights[:1], **fit_kw)
    assert not calls
    same = make(**params).fit(X, y, eval_set=[(X, y)],
                              sample_weight_eval_set=weights and weights[:1], **fit_kw)
    rounds = same.get_booster().num_boosted_rounds()
    assert sorted({step.finish.round for step in calls}) == list(range(1, rounds + 1))
    assert same.evals_result() == copied.evals_result()
    assert same.get_booster().to_dict() == copied.get_booster().to_dict()
    assert same.best_iteration == copied.best_iteration


def test_an_eval_set_with_the_training_x_but_other_labels_or_weights_gets_states_of_its_own(
        monkeypatch):
    X, y = binary_data(63, n=800)
    w = np.random.default_rng(5).uniform(0.1, 3.0, len(y))
    calls = _eval_passes_on_training_states(monkeypatch)
    params = dict(n_estimators=3, max_depth=3)
    for eval_set, weights in (([(X, 1 - y)], None), ([(X, y)], [w])):
        model = DaskBoostClassifier(**params).fit(X, y, eval_set=eval_set,
                                                  sample_weight_eval_set=weights)
        assert not calls
        expected = DaskBoostClassifier(**params).fit(
            X, y, eval_set=[(X.copy(), eval_set[0][1].copy())], sample_weight_eval_set=weights)
        assert model.evals_result() == expected.evals_result()


def weighted_mae(y_true, y_pred, sample_weight=None):
    return float(np.average(np.abs(y_true - y_pred), weights=sample_weight))


def test_callable_eval_metric():
    X, y = regression_data(50)
    X_eval, y_eval = regression_data(51, n=600)
    model = DaskBoostRegressor(n_estimators=5, max_depth=3, eval_metric=weighted_mae)
    model.fit(X, y, eval_set=[(X_eval, y_eval)])
    values = model.evals_result()["validation_0"]["weighted_mae"]
    assert len(values) == 5
    for r, value in enumerate(values):
        pred = model.predict(X_eval, iteration_range=(0, r + 1))
        assert value == pytest.approx(np.mean(np.abs(as_stored(y_eval) - pred)), rel=1e-9)
    # a mean over rows: exact on a partitioned, weighted eval set too
    w = np.random.default_rng(5).uniform(0.1, 3.0, len(y_eval))
    X_d, y_d, w_d = as_dask(X_eval, y_eval, 4, w)
    model.fit(pd.DataFrame(X, columns=COLUMNS), y, eval_set=[(X_d, y_d)],
              sample_weight_eval_set=[w_d])
    values = model.evals_result()["validation_0"]["weighted_mae"]
    for r, value in enumerate(values):
        pred = model.predict(X_eval, iteration_range=(0, r + 1))
        assert value == pytest.approx(weighted_mae(as_stored(y_eval), pred, as_stored(w)),
                                      rel=1e-9)


def test_callable_eval_metric_gets_probabilities_and_drives_early_stopping():
    seen = []

    def brier(y_true, y_pred):
        seen.append(np.asarray(y_pred).shape)
        assert np.all((y_pred >= 0) & (y_pred <= 1))
        return float(np.mean((y_true - y_pred) ** 2))

    model, X, y, eval_set = early_stopping_case("classification", [brier])
    model.fit(X, y, eval_set=eval_set)
    X_eval, y_eval = eval_set[-1]
    assert (len(y_eval),) in seen
    curve = model.evals_result()["validation_1"]["brier"]
    assert model.best_iteration == int(np.argmin(curve))
    assert len(curve) == model.best_iteration + 4
    p = model.predict_proba(X_eval)[:, 1]
    assert curve[model.best_iteration] == pytest.approx(np.mean((y_eval - p) ** 2), rel=1e-9)


def test_gamma_default_metric_with_an_eval_set():
    X, _ = features(60, 800)
    y = np.exp(0.3 * signal_of(X)) * np.random.default_rng(0).gamma(4.0, 0.25, 800)
    model = DaskBoostRegressor(objective="reg:gamma", n_estimators=4, max_depth=3)
    model.fit(X, y, eval_set=[(X, y)])
    (name, values), = model.evals_result()["validation_0"].items()
    assert name == "gamma-deviance"
    y32 = y.astype(np.float32).astype(np.float64)   # labels are kept as float32
    for r, value in enumerate(values):
        mu = model.predict(X, iteration_range=(0, r + 1))
        # xgboost's gamma-deviance: 2 * mean(t - log t - 1), t = (y + 1e-6) / (mu + 1e-6)
        t = (y32 + 1e-6) / (mu + 1e-6)
        assert value == pytest.approx(2 * np.mean(t - np.log(t) - 1), rel=1e-9)


def test_mphe_metric_uses_huber_slope():
    X, y = regression_data(61, n=800, noise=1.0)
    slope = 3.0
    model = DaskBoostRegressor(objective="reg:pseudohubererror", huber_slope=slope,
                               n_estimators=3, max_depth=3)
    model.fit(X, y, eval_set=[(X, y)])
    values = model.evals_result()["validation_0"]["mphe"]
    y32 = y.astype(np.float32).astype(np.float64)   # labels are kept as float32
    for r, value in enumerate(values):
        z = (model.predict(X, iteration_range=(0, r + 1)) - y32) / slope
        assert value == pytest.approx(np.mean(slope ** 2 * (np.sqrt(1 + z * z) - 1)), rel=1e-9)


# ---- row and column sampling -----------------------------------------------------------

SAMPLING = [dict(subsample=0.5), dict(colsample_bytree=0.5), dict(colsample_bylevel=0.5),
            dict(colsample_bynode=0.5),
            dict(subsample=0.7, colsample_bytree=0.8, colsample_bylevel=0.8,
                 colsample_bynode=0.7)]


def sampled_fit(n_partitions, sampling, random_state, estimator="regressor"):
    if estimator == "regressor":
        X, y = regression_data(70, n=2000)
        model = DaskBoostRegressor(n_estimators=6, max_depth=4, random_state=random_state,
                                   **sampling)
    else:
        X, y = multiclass_data(71, n=2000)
        model = DaskBoostClassifier(n_estimators=4, max_depth=3, random_state=random_state,
                                    **sampling)
    return model.fit(*as_dask(X, y, n_partitions))


@pytest.mark.parametrize("sampling", SAMPLING, ids=lambda s: ",".join(s))
def test_sampling_is_reproducible_and_seeded(tmp_path, sampling):
    first = sampled_fit(2, sampling, 7)
    again = sampled_fit(2, sampling, 7)
    first.save_model(tmp_path / "first.json")
    again.save_model(tmp_path / "again.json")
    assert (tmp_path / "first.json").read_bytes() == (tmp_path / "again.json").read_bytes()
    other = sampled_fit(2, sampling, 8)
    assert trees_differ(first, other)
    unsampled = sampled_fit(2, {}, 7)
    assert trees_differ(first, unsampled)


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
@pytest.mark.parametrize("sampling", SAMPLING, ids=lambda s: ",".join(s))
def test_sampling_does_not_depend_on_the_partitioning(sampling, estimator):
    one = sampled_fit(1, sampling, 11, estimator)
    four = sampled_fit(4, sampling, 11, estimator)
    assert_same_trees(one, four)


def test_subsample_uses_about_that_fraction_of_the_rows():
    model = sampled_fit(3, dict(subsample=0.5), 3)
    # squared error: a node's cover is its number of rows
    roots = np.array([tree.cover[0] for tree in model.get_booster().trees])
    assert np.all((roots > 0.45 * 2000) & (roots < 0.55 * 2000))
    assert len(set(roots)) > 1  # a new sample every round


def test_colsample_bytree_limits_the_features_of_each_tree():
    model = sampled_fit(2, dict(colsample_bytree=0.5), 5)
    used = [set(t.feature[t.feature >= 0]) for t in model.get_booster().trees]
    assert all(len(u) <= N_FEATURES // 2 for u in used)
    assert len(set(map(frozenset, used))) > 1


def test_colsample_bylevel_limits_the_features_of_each_level():
    model = sampled_fit(2, dict(colsample_bylevel=0.5), 5)
    for tree in model.get_booster().trees:
        depth = {0: 0}
        per_level = {}
        for node in range(len(tree.feature)):
            if tree.feature[node] >= 0:
                per_level.setdefault(depth[node], set()).add(int(tree.feature[node]))
                depth[int(tree.left[node])] = depth[int(tree.right[node])] = depth[node] + 1
        assert all(len(f) <= N_FEATURES // 2 for f in per_level.values())


def test_sampling_fractions_of_one_equal_the_unsampled_model():
    plain = sampled_fit(2, {}, None)
    for random_state in (None, 0, 12345):
        ones = sampled_fit(2, dict(subsample=1.0, colsample_bytree=1.0, colsample_bylevel=1.0,
                                   colsample_bynode=1.0), random_state)
        assert ones.get_booster().to_dict() == plain.get_booster().to_dict()


# ---- multiclass ------------------------------------------------------------------------

def test_multiclass_probabilities_and_string_labels():
    X, codes = multiclass_data(80, n_classes=4)
    names = np.array(["ant", "bee", "cat", "dog"])
    labels = names[::-1][codes]  # sorted order differs from the code order
    model = DaskBoostClassifier(n_estimators=5, max_depth=3).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, names)
    assert model.n_classes_ == 4
    assert model.get_booster().n_outputs == 4
    X_test, _ = multiclass_data(81, n=500, n_classes=4)
    proba = model.predict_proba(X_test)
    assert proba.shape == (500, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(model.predict(X_test), names[np.argmax(proba, axis=1)])
    # the same model as on the sorted integer codes of the labels
    sorted_codes = np.searchsorted(names, labels)
    on_codes = DaskBoostClassifier(n_estimators=5, max_depth=3).fit(X, sorted_codes)
    assert_same_trees(model, on_codes, rtol=0)
    assert model.score(X, labels) > 0.5


def test_softmax_predicts_labels():
    X, codes = multiclass_data(82, n_classes=3)
    labels = np.array(["low", "mid", "high"])[codes]
    model = DaskBoostClassifier(objective="multi:softmax", n_estimators=5, max_depth=3)
    model.fit(X, labels)
    prediction = model.predict(X)
    assert set(prediction) <= {"low", "mid", "high"}
    np.testing.assert_array_equal(prediction,
                                  model.classes_[np.argmax(model.predict_proba(X), axis=1)])
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0, atol=1e-9)
    assert np.mean(prediction == labels) > 0.6


def test_multiclass_one_versus_seven_partitions_give_the_same_trees():
    X, codes = multiclass_data(83, n=2100, n_classes=3)
    labels = np.array(["x", "y", "z"])[codes]
    fits = [DaskBoostClassifier(n_estimators=5, max_depth=4).fit(*as_dask(X, labels, parts))
            for parts in (1, 7)]
    assert len(fits[0].get_booster().trees) == 15
    assert_same_trees(*fits)
    np.testing.assert_array_equal(fits[0].classes_, fits[1].classes_)


# ---- bad input -------------------------------------------------------------------------

FAST = dict(n_estimators=2, max_depth=2)


@pytest.fixture
def xy():
    return regression_data(90, n=300)


@pytest.mark.parametrize("metric", ["nope", ["rmse", "rsme"], "error@x"])
def test_unknown_eval_metric(xy, metric):
    X, y = xy
    with pytest.raises(ValueError) as info:
        DaskBoostRegressor(**FAST, eval_metric=metric).fit(X, y, eval_set=[(X, y)])
    message = str(info.value)
    assert "eval_metric" in message
    if metric != "error@x":
        for valid in ("rmse", "mae", "logloss", "auc", "mlogloss"):
            assert repr(valid) in message


def test_unknown_eval_metric_without_eval_set(xy):
    X, y = xy
    with pytest.raises(ValueError, match="eval_metric"):
        DaskBoostRegressor(**FAST, eval_metric="nope").fit(X, y)


def test_early_stopping_without_eval_set(xy):
    X, y = xy
    with pytest.raises(ValueError, match="early_stopping_rounds.*eval_set"):
        DaskBoostRegressor(**FAST, early_stopping_rounds=3).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping_rounds.*eval_set"):
        DaskBoostRegressor(**FAST, early_stopping_rounds=3).fit(X, y, eval_set=[])


@pytest.mark.parametrize("num_class,objective", [(4, None), (2, "multi:softprob"),
                                                 (5, "multi:softmax")])
def test_num_class_mismatch(num_class, objective):
    X, y = multiclass_data(91, n=300)
    model = DaskBoostClassifier(**FAST, num_class=num_class, objective=objective)
    with pytest.raises(ValueError, match=f"num_class={num_class}.*3 classes"):
        model.fit(X, y)


def test_binary_objective_with_three_classes():
    X, y = multiclass_data(92, n=300)
    with pytest.raises(ValueError, match="binary:logistic.*2 classes"):
        DaskBoostClassifier(**FAST, objective="binary:logistic").fit(X, y)


@pytest.mark.parametrize("objective,labels,match", [
    ("count:poisson", lambda y: y - y.mean(), "count:poisson.*non-negative"),
    ("reg:gamma", lambda y: np.where(np.arange(len(y)) == 7, 0.0, np.abs(y) + 1),
     "reg:gamma.*positive"),
    ("reg:gamma", lambda y: np.abs(y) + 1 - 2 * (np.arange(len(y)) == 3) * (np.abs(y) + 1),
     "reg:gamma.*positive"),
    ("reg:tweedie", lambda y: y - y.mean(), "reg:tweedie.*non-negative"),
    ("reg:logistic", lambda y: y, r"reg:logistic.*\[0, 1\]"),
])
def test_labels_outside_the_objectives_domain(xy, objective, labels, match):
    X, y = xy
    with pytest.raises(ValueError, match=match):
        DaskBoostRegressor(**FAST, objective=objective).fit(X, labels(y))


@pytest.mark.parametrize("objective", ["multi:softprob", "multi:softmax", "binary:logitraw"])
def test_regressor_rejects_classification_objectives(xy, objective):
    X, y = xy
    with pytest.raises(ValueError) as info:
        DaskBoostRegressor(**FAST, objective=objective, num_class=3).fit(X, np.round(y))
    message = str(info.value)
    assert objective in message and "reg:squarederror" in message


def test_classifier_refuses_non_integer_float_labels_as_scikit_learn_does():
    # non-integer floats are a continuous target to scikit-learn (type_of_target), even
    # three distinct ones; integer-valued floats are classes
    X, codes = multiclass_data(93, n=300)
    with pytest.raises(ValueError, match=r"Unknown label type: continuous .*such as 0\.5\)"):
        DaskBoostClassifier(**FAST, objective="multi:softprob").fit(
            X, np.array([0.5, 1.5, 2.25])[codes])
    labels = np.array([-1.0, 2.0, 7.0])[codes]
    model = DaskBoostClassifier(**FAST, objective="multi:softprob").fit(X, labels)
    np.testing.assert_array_equal(model.classes_, [-1.0, 2.0, 7.0])
    assert set(model.predict(X)) <= {-1.0, 2.0, 7.0}


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "text", None])
def test_custom_eval_metric_returning_a_non_number(xy, bad):
    X, y = xy

    def broken(y_true, y_pred):
        return bad

    with pytest.raises(ValueError, match="broken"):
        DaskBoostRegressor(**FAST, eval_metric=broken).fit(X, y, eval_set=[(X, y)])


@pytest.mark.parametrize("name,value", [
    ("subsample", 0), ("subsample", 0.0), ("subsample", 1.5), ("subsample", -0.5),
    ("subsample", float("nan")), ("colsample_bytree", 0), ("colsample_bytree", 1.01),
    ("colsample_bylevel", 0.0), ("colsample_bylevel", 2), ("colsample_bynode", 0),
    ("colsample_bynode", -1.0),
])
def test_bad_sampling_fraction(xy, name, value):
    X, y = xy
    with pytest.raises(ValueError, match=name):
        DaskBoostRegressor(**FAST, **{name: value}).fit(X, y)


@pytest.mark.parametrize("name", ["subsample", "colsample_bytree", "colsample_bylevel",
                                  "colsample_bynode"])
def test_sampling_fraction_of_wrong_type(xy, name):
    X, y = xy
    with pytest.raises(TypeError, match=name):
        DaskBoostRegressor(**FAST, **{name: "half"}).fit(X, y)


# ---- feature importances ---------------------------------------------------------------

def importance_data(seed=100, n=1500):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 4)).astype(np.float64)
    y = 2.0 * X[:, 2] + 0.3 * X[:, 1] + rng.normal(0, 0.5, n)
    return pd.DataFrame(X, columns=["noise_a", "weak", "strong", "noise_b"]), y


def test_feature_importances():
    frame, y = importance_data()
    model = DaskBoostRegressor(n_estimators=10, max_depth=3).fit(frame, y)
    importances = model.feature_importances_
    assert importances.shape == (4,)
    assert importances.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(importances >= 0)
    assert np.argmax(importances) == 2
    assert importances[2] > importances[1] > 0


@pytest.mark.parametrize("importance_type", ["weight", "gain", "cover", "total_gain",
                                             "total_cover"])
def test_importance_type(importance_type, tmp_path):
    frame, y = importance_data()
    model = DaskBoostRegressor(n_estimators=10, max_depth=3,
                               importance_type=importance_type).fit(frame, y)
    scores = model.get_booster().get_score(importance_type=importance_type)
    expected = np.array([scores.get(name, 0.0) for name in frame.columns])
    np.testing.assert_allclose(model.feature_importances_, expected / expected.sum(),
                               rtol=1e-12)
    path = tmp_path / "model.json"
    model.save_model(path)
    loaded = DaskBoostRegressor().load_model(path)
    assert loaded.importance_type == importance_type
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    assert ("importance_type" in path.read_text()) == (importance_type != "gain")


def test_importance_type_changes_the_report_not_the_model():
    frame, y = importance_data()
    model = DaskBoostRegressor(n_estimators=10, max_depth=3).fit(frame, y)
    gain = model.feature_importances_
    model.set_params(importance_type="weight")
    weight = model.feature_importances_
    assert not np.allclose(gain, weight)
    assert weight[1] > gain[1]  # the weak feature is split often, for little gain


def test_bad_importance_type_is_refused_at_fit():
    frame, y = importance_data()
    with pytest.raises(ValueError, match=r"importance_type='split' is not supported"):
        DaskBoostRegressor(importance_type="split").fit(frame, y)


def test_feature_importances_classifier():
    frame, y = importance_data(101)
    labels = (y > np.median(y)).astype(int)
    model = DaskBoostClassifier(n_estimators=10, max_depth=3).fit(frame, labels)
    importances = model.feature_importances_
    assert importances.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.argmax(importances) == 2


@pytest.mark.parametrize("importance_type", ["weight", "gain", "cover", "total_gain",
                                             "total_cover"])
def test_get_score_keys_are_the_column_names(importance_type):
    frame, y = importance_data(102)
    dask_frame, dask_y = (dd.from_pandas(frame, npartitions=3),
                          dd.from_pandas(pd.Series(y), npartitions=3))
    model = DaskBoostRegressor(n_estimators=10, max_depth=3).fit(dask_frame, dask_y)
    score = model.get_booster().get_score(importance_type=importance_type)
    assert set(score) <= set(frame.columns)
    assert {"strong", "weak"} <= set(score)
    assert all(v > 0 for v in score.values())
    assert max(score, key=score.get) == "strong" or importance_type in ("weight", "cover")
    # the splits of the trees, counted from their dumps
    dump = "\n".join(model.get_booster().get_dump())
    used = set(re.findall(r"\[(\w+)<", dump))
    assert set(score) == used


def test_reg_lambda_zero_with_an_empty_row_sample_fits():
    # a round whose row sample is empty gives nodes without hessian: with reg_lambda=0
    # they are leaves of weight 0 (as in xgboost), not a division by zero
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    model = DaskBoostRegressor(reg_lambda=0, subsample=0.1, max_depth=2, n_estimators=10)
    prediction = model.fit(X, y).predict(X)
    assert np.isfinite(prediction).all()
    assert any(t.n_nodes == 1 and t.value[0] == 0.0 for t in model.get_booster().trees)
