"""scikit-learn's ``class_weight`` on the classifier: a factor per class on each row's
weight in the gradients and the start.

On data whose features take few distinct values (every value a bin of its own, so the
weighted sketch cannot move a cut point) a fit with ``class_weight`` is the fit with those
factors given as ``sample_weight``: the same predictions to 1e-12.
"""

import numpy as np
import pandas as pd
import pytest

import daskboost
from daskboost import DaskBoostClassifier, DaskBoostRegressor


def discrete(seed=0, n=3000, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, 4)).astype(np.float64)
    noisy = X[:, 0] + X[:, 1] * 0.5 + rng.normal(0, 2, n)
    cuts = np.quantile(noisy, [0.8] if n_classes == 2 else [0.6, 0.85])
    return X, np.digitize(noisy, cuts)


def assert_same_predictions(a, b, X, tol=1e-12):
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=tol, atol=tol)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_a_dict_is_the_fit_with_those_sample_weights(n_classes):
    X, y = discrete(n_classes=n_classes)
    weights = {0: 0.5, 1: 3.0} if n_classes == 2 else {1: 2.0, 2: 6.0}
    params = dict(n_estimators=6, max_depth=4)
    ours = DaskBoostClassifier(class_weight=weights, **params).fit(X, y)
    factors = np.array([weights.get(c, 1.0) for c in range(n_classes)])
    theirs = DaskBoostClassifier(**params).fit(X, y, sample_weight=factors[y])
    assert_same_predictions(ours, theirs, X)
    plain = DaskBoostClassifier(**params).fit(X, y)
    assert np.abs(ours.predict_proba(X) - plain.predict_proba(X)).max() > 0.05


@pytest.mark.parametrize("n_classes", [2, 3])
def test_balanced_is_scikit_learns_balanced_sample_weights(n_classes):
    from sklearn.utils.class_weight import compute_sample_weight
    X, y = discrete(seed=1, n_classes=n_classes)
    params = dict(n_estimators=6, max_depth=4)
    ours = DaskBoostClassifier(class_weight="balanced", **params).fit(X, y)
    theirs = DaskBoostClassifier(**params).fit(
        X, y, sample_weight=compute_sample_weight("balanced", y))
    # the start from n_c * factor against a sum of n_c factors: the last bits differ,
    # and a float32 gradient may round the other way
    assert_same_predictions(ours, theirs, X, tol=1e-7)
    counts = np.bincount(y)
    np.testing.assert_allclose(ours.get_booster().objective_params["class_weight"],
                               len(y) / (n_classes * counts), rtol=1e-15)


def test_it_multiplies_sample_weight_and_scale_pos_weight():
    X, y = discrete(seed=2)
    rng = np.random.default_rng(0)
    w = rng.integers(1, 4, len(y)).astype(np.float64)
    params = dict(n_estimators=5, max_depth=3)
    ours = DaskBoostClassifier(class_weight={0: 2.0, 1: 0.5}, scale_pos_weight=3.0,
                               **params).fit(X, y, sample_weight=w)
    theirs = DaskBoostClassifier(**params).fit(
        X, y, sample_weight=w * np.where(y == 1, 0.5 * 3.0, 2.0))
    assert_same_predictions(ours, theirs, X)


def test_labels_of_any_kind_and_dask_input():
    dd = pytest.importorskip("dask.dataframe")
    X, y = discrete(seed=3)
    names = np.where(y == 1, "yes", "no")  # sorted: "no" is class 0, "yes" class 1
    params = dict(n_estimators=5, max_depth=3)
    by_index = DaskBoostClassifier(class_weight={1: 5.0}, **params).fit(X, y)
    by_name = DaskBoostClassifier(class_weight={"yes": 5.0}, **params).fit(X, names)
    assert_same_predictions(by_index, by_name, X)
    lazy = DaskBoostClassifier(class_weight="balanced", **params).fit(
        dd.from_pandas(pd.DataFrame(X), npartitions=3),
        dd.from_pandas(pd.Series(names), npartitions=3))
    local = DaskBoostClassifier(class_weight="balanced", **params).fit(X, names)
    assert_same_predictions(lazy, local, X)


@pytest.mark.parametrize("class_weight", [{1: 4.0}, {"fraud": 4.0}, "balanced"])
def test_saved_and_loaded(class_weight, tmp_path):
    X, y = discrete(seed=4)
    labels = np.where(y == 1, "fraud", "ok") if "fraud" in class_weight else y
    model = DaskBoostClassifier(n_estimators=3, class_weight=class_weight).fit(X, labels)
    path = tmp_path / "model.json"
    model.save_model(path)
    loaded = DaskBoostClassifier().load_model(path)
    assert loaded.class_weight == class_weight
    assert_same_predictions(loaded, model, X)
    refit = DaskBoostClassifier(**loaded.get_params()).fit(X, labels)
    assert_same_predictions(refit, model, X)


def test_cv_takes_it():
    X, y = discrete(seed=5)
    params = {"objective": "binary:logistic", "max_depth": 3}
    plain = daskboost.cv(params, X, y, nfold=3, num_boost_round=4)
    weighted = daskboost.cv({**params, "class_weight": {1: 8.0}}, X, y, nfold=3,
                            num_boost_round=4)
    # the minority class weighs more, so the (unweighted) log loss is worse
    assert weighted["train-logloss-mean"].iloc[-1] > plain["train-logloss-mean"].iloc[-1] + 0.02


@pytest.mark.parametrize("class_weight, error, match", [
    ({7: 2.0}, ValueError, r"class_weight names classes that are not in y: \[7\]"),
    ("bal", TypeError, r"class_weight='bal' must be None, 'balanced' or a dict"),
    ([1.0, 2.0], TypeError, r"class_weight=\[1\.0, 2\.0\] must be None, 'balanced' or a dict"),
    ({1: -1}, ValueError, r"class_weight\[1\]=-1\.0 must be >= 0"),
    ({1: float("nan")}, ValueError, r"class_weight\[1\]=nan must be finite"),
    ({1: "2"}, TypeError, r"class_weight\[1\]='2' must be a number"),
])
def test_bad_class_weight(class_weight, error, match):
    X, y = discrete()
    with pytest.raises(error, match=match):
        DaskBoostClassifier(class_weight=class_weight).fit(X, y)


def test_where_it_does_not_apply():
    X, y = discrete()
    with pytest.raises(ValueError, match=r"DaskBoostRegressor has none"):
        DaskBoostRegressor(class_weight="balanced").fit(X, y)
    with pytest.raises(ValueError, match=r"needs a classifier"):
        daskboost.cv({"objective": "reg:squarederror", "class_weight": {1: 2.0}}, X, y,
                     nfold=3, num_boost_round=2)

    def custom(labels, margins):
        p = 1 / (1 + np.exp(-margins))
        return p - labels, p * (1 - p)

    with pytest.raises(ValueError, match=r"a custom objective does not use it"):
        DaskBoostClassifier(objective=custom, class_weight="balanced").fit(X, y)


@pytest.mark.parametrize("crafted", [5, [1.0], [1.0, -2.0], [1.0, float("inf")], "ab"])
def test_a_model_file_with_bad_class_factors_is_refused(crafted, tmp_path):
    import json
    X, y = discrete()
    path = tmp_path / "model.json"
    DaskBoostClassifier(n_estimators=2, class_weight={1: 2.0}).fit(X, y).save_model(path)
    payload = json.loads(path.read_text())
    assert payload["objective_params"]["class_weight"] == [1.0, 2.0]
    payload["objective_params"]["class_weight"] = crafted
    path.write_text(json.dumps(payload))
    with pytest.raises(ValueError, match=r"model\.json: objective_params"):
        DaskBoostClassifier().load_model(path)
