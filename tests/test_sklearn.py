"""scikit-learn conventions, classifier labels, scoring, sample weights and persistence."""

import json
import os
import pickle
from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.validation import check_is_fitted

from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.params import validate_params
from daskboost.sklearn import _ClassIndex, _Probabilities

XGBOOST_DEFAULTS = {
    "n_estimators": 100, "max_depth": 6, "learning_rate": 0.3, "reg_lambda": 1.0, "gamma": 0.0,
    "min_child_weight": 1.0, "max_bin": 256, "base_score": None, "objective": None,
    "eval_metric": None, "early_stopping_rounds": None, "num_class": None, "huber_slope": 1.0,
    "quantile_alpha": 0.5, "tweedie_variance_power": 1.5, "reg_alpha": 0.0,
    "max_delta_step": None, "subsample": 1.0, "colsample_bytree": 1.0, "colsample_bylevel": 1.0,
    "colsample_bynode": 1.0, "random_state": None, "tree_method": "hist",
    "grow_policy": "depthwise", "max_leaves": 0, "trim_fraction": 0.0, "verbose": False,
    "checkpoint_path": None, "checkpoint_interval": 10, "memory_budget": "auto",
    "cache_dir": None, "cache_compression": "lz4", "monotone_constraints": None,
    "interaction_constraints": None,
    # categorical features (issue 13): xgboost's names and defaults, max_cat ours
    "enable_categorical": True, "feature_types": None, "max_cat_to_onehot": 4,
    "max_cat_threshold": 64, "max_cat": 4096,
    # quantized gradients (issue 15): LightGBM's names (without its ``use_``) and defaults
    "quantized_grad": "auto", "num_grad_quant_bins": 4,
    # xgboost's weight of the positive rows; its importance_type ("gain" by default)
    "scale_pos_weight": 1.0, "importance_type": "gain",
    # scikit-learn's (and LightGBM's) class_weight; classifiers only
    "class_weight": None,
    # threads in this process (not saved with the model)
    "n_jobs": None,
    # xgboost's value read as missing (NaN always is), its log level, and its booster and
    # device (one value each here)
    "missing": np.nan, "verbosity": None, "booster": None, "device": None,
    # xgboost 2's constructor arguments, and its parameters that take one value here
    "callbacks": None, "feature_weights": None, "sampling_method": None,
    "num_parallel_tree": None, "multi_strategy": None, "validate_parameters": None,
    "aft_loss_distribution": "normal", "aft_loss_distribution_scale": 1.0,
}
ESTIMATORS = [DaskBoostRegressor, DaskBoostClassifier]


# ---- parameters ------------------------------------------------------------------------

@pytest.mark.parametrize("cls", ESTIMATORS)
def test_default_params(cls):
    assert cls().get_params() == XGBOOST_DEFAULTS
    assert cls().get_params(deep=False) == XGBOOST_DEFAULTS


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_get_set_params_round_trip(cls):
    new = {"n_estimators": 7, "max_depth": 2, "learning_rate": 0.05, "reg_lambda": 3.0,
           "gamma": 0.5, "min_child_weight": 2.0, "max_bin": 32, "base_score": 0.4,
           "objective": "binary:logistic"}
    expected = {**XGBOOST_DEFAULTS, **new}
    est = cls()
    assert est.set_params(**new) is est
    assert est.get_params() == expected
    other = cls().set_params(**est.get_params())
    assert other.get_params() == expected
    assert cls(**new).get_params() == expected


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_init_stores_parameters_unchanged_without_validation(cls, reg_xy):
    marker = object()
    est = cls(learning_rate=-1, max_depth="deep", n_estimators=0, base_score=marker,
              objective="nonsense")
    assert est.learning_rate == -1 and est.max_depth == "deep" and est.n_estimators == 0
    assert est.base_score is marker and est.objective == "nonsense"
    X, y = reg_xy
    with pytest.raises((TypeError, ValueError)):
        est.fit(X, (y > 0).astype(int))
    # fit did not rewrite the parameters either
    assert est.get_params()["learning_rate"] == -1 and est.get_params()["base_score"] is marker


def test_invalid_param_constructs_and_fit_raises(reg_xy):
    X, y = reg_xy
    est = DaskBoostRegressor(learning_rate=-1)
    with pytest.raises(ValueError, match=r"learning_rate=-1"):
        est.fit(X, y)


def test_accepted_objectives_come_from_the_objectives_metadata():
    # the lists each estimator accepted before the metadata, in the same order
    assert DaskBoostRegressor._objectives == (
        "reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "reg:quantileerror",
        "reg:logistic", "binary:logistic", "count:poisson", "reg:gamma", "reg:tweedie",
        "reg:squaredlogerror", "survival:aft")  # (added since, at the end)
    assert DaskBoostClassifier._objectives == (
        "binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob",
        "multi:softmax")
    params = DaskBoostRegressor().get_params()
    with pytest.raises(ValueError, match=r"objective='binary:logitraw' is not supported here; "
                       r"valid objectives: 'reg:squarederror', .*'survival:aft'$"):
        validate_params({**params, "objective": "binary:logitraw"}, DaskBoostRegressor._objectives)
    with pytest.raises(ValueError, match="objective='reg:logistic' is not supported"):
        validate_params({**params, "objective": "reg:logistic"}, DaskBoostClassifier._objectives)


@pytest.mark.parametrize("K", [1, 2, 3, 6])
def test_probabilities_and_classes_from_margins_are_the_old_values(K):
    """predict_proba's and predict's per-partition functions, bit for bit as before links.py."""
    rng = np.random.default_rng(K)
    margin = rng.normal(0.0, 6.0, (K, 3000))
    margin[:, :1000] = rng.choice([-800.0, -745.2, -709.8, -0.0, 0.0, 36.7, 709.8, 800.0, 1e300,
                                   -1e300], size=(K, 1000))
    booster = SimpleNamespace(n_outputs=K, n_targets=1, objective="binary:logistic")
    if K == 1:
        with np.errstate(over="ignore"):
            p = 1.0 / (1.0 + np.exp(-margin[0]))
        old_proba = np.column_stack([1.0 - p, p])
        old_index = (margin[0] > 0).astype(np.float64)
    else:
        shifted = np.exp(margin - margin.max(axis=0))
        old_proba = (shifted / shifted.sum(axis=0)).T
        old_index = np.argmax(margin, axis=0).astype(np.float64)
    proba = np.ascontiguousarray(_Probabilities()(booster, margin))
    np.testing.assert_array_equal(proba.view(np.uint64),
                                  np.ascontiguousarray(old_proba).view(np.uint64))
    index = _ClassIndex()(booster, margin)
    np.testing.assert_array_equal(index.view(np.uint64), old_index.view(np.uint64))


def test_objective_none_is_kept_after_fit(reg_xy, fast):
    X, y = reg_xy
    est = DaskBoostRegressor(**fast).fit(X, y)
    assert est.objective is None
    assert est.get_booster().objective == "reg:squarederror"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_clone(cls, clf_xy, fast):
    X, y = clf_xy
    est = cls(base_score=0.5, learning_rate=0.2, **fast).fit(X, y)
    cloned = clone(est)
    assert type(cloned) is cls and cloned is not est
    assert cloned.get_params() == est.get_params()
    with pytest.raises(ValueError, match="not fitted"):
        cloned.get_booster()
    assert not hasattr(cloned, "n_features_in_")
    # clone checks that __init__ stores each parameter object as given (even odd ones)
    marker = [1, 2]
    assert clone(cls(gamma=marker)).gamma == marker


def test_repr():
    assert repr(DaskBoostRegressor()) == "DaskBoostRegressor()"
    assert repr(DaskBoostClassifier(learning_rate=0.1, n_estimators=5)) == \
        "DaskBoostClassifier(learning_rate=0.1, n_estimators=5)"
    assert repr(DaskBoostRegressor(objective="binary:logistic")) == \
        "DaskBoostRegressor(objective='binary:logistic')"


def test_estimator_type_tags():
    assert is_regressor(DaskBoostRegressor()) and not is_classifier(DaskBoostRegressor())
    assert is_classifier(DaskBoostClassifier()) and not is_regressor(DaskBoostClassifier())


def test_check_is_fitted(reg_xy, fast):
    X, y = reg_xy
    est = DaskBoostRegressor(**fast)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    check_is_fitted(est.fit(X, y))


# ---- fitted attributes -----------------------------------------------------------------

def test_feature_attributes(reg_df, fast):
    df, y = reg_df
    est = DaskBoostRegressor(**fast).fit(df, y)
    assert est.n_features_in_ == 4
    assert isinstance(est.feature_names_in_, np.ndarray)
    assert est.feature_names_in_.tolist() == ["f0", "f1", "f2", "f3"]
    # refitting on data without names removes the names
    est.fit(df.to_numpy()[:, :3], y)
    assert est.n_features_in_ == 3
    assert not hasattr(est, "feature_names_in_")
    # non-string column names are not feature names
    est.fit(pd.DataFrame(df.to_numpy()), y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 4


# ---- scikit-learn tools ----------------------------------------------------------------

def test_pipeline_with_function_transformer(reg_xy, fast):
    X, y = reg_xy
    pipe = Pipeline([("double", FunctionTransformer(lambda a: a * 2.0 + 1.0)),
                     ("model", DaskBoostRegressor(**fast))])
    pipe.fit(X, y)
    direct = DaskBoostRegressor(**fast).fit(X * 2.0 + 1.0, y)
    assert np.array_equal(pipe.predict(X), direct.predict(X * 2.0 + 1.0))
    assert pipe.score(X, y) == pytest.approx(r2_score(y, direct.predict(X * 2.0 + 1.0)), abs=1e-12)


def test_cross_val_score_regressor(reg_xy, fast):
    X, y = reg_xy
    cv = KFold(n_splits=3, shuffle=True, random_state=0)
    scores = cross_val_score(DaskBoostRegressor(**fast), X, y, cv=cv)
    expected = []
    for train, test in cv.split(X):
        model = DaskBoostRegressor(**fast).fit(X[train], y[train])
        expected.append(r2_score(y[test], model.predict(X[test])))
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)
    assert np.all(scores > 0.7)


def test_cross_val_score_classifier(clf_xy, fast):
    X, y = clf_xy
    scores = cross_val_score(DaskBoostClassifier(**fast), X, y, cv=3, scoring="accuracy")
    assert scores.shape == (3,) and np.all(scores > 0.7)


# ---- scoring ---------------------------------------------------------------------------

def test_regressor_score_is_r2(reg_xy, fast):
    X, y = reg_xy
    est = DaskBoostRegressor(**fast).fit(X, y)
    pred = est.predict(X)
    assert est.score(X, y) == pytest.approx(r2_score(y, pred), abs=1e-12)
    w = np.random.default_rng(0).integers(0, 4, size=len(y)).astype(float)
    assert est.score(X, y, sample_weight=w) == pytest.approx(r2_score(y, pred, sample_weight=w), abs=1e-12)
    assert est.score(X, y) != pytest.approx(est.score(X, y, sample_weight=w), abs=1e-6)


def test_classifier_score_is_accuracy(clf_xy, fast):
    X, y = clf_xy
    labels = np.where(y == 1, "yes", "no")
    est = DaskBoostClassifier(**fast).fit(X, labels)
    pred = est.predict(X)
    assert est.score(X, labels) == pytest.approx(accuracy_score(labels, pred), abs=1e-12)
    w = np.random.default_rng(1).random(len(y))
    assert est.score(X, labels, sample_weight=w) == pytest.approx(
        accuracy_score(labels, pred, sample_weight=w), abs=1e-12)
    assert 0.7 < est.score(X, labels) < 1.0


# ---- classifier labels -----------------------------------------------------------------

LABEL_SETS = {
    "strings": (np.array(["yes", "no"]), ["no", "yes"]),
    "bools": (np.array([True, False]), [False, True]),
    "ints": (np.array([7, 3]), [3, 7]),
    # integer-valued floats: non-integer ones are a continuous target (test_validation.py)
    "floats": (np.array([1.0, -2.0]), [-2.0, 1.0]),
}


@pytest.mark.parametrize("kind", list(LABEL_SETS))
def test_classifier_labels(clf_xy, fast, kind):
    X, y01 = clf_xy
    pair, sorted_classes = LABEL_SETS[kind]
    # pair[0] for y01 == 1, so the positive class (classes_[1]) is not always the "1" rows
    labels = np.where(y01 == 1, pair[0], pair[1])
    est = DaskBoostClassifier(**fast).fit(X, labels)
    assert est.classes_.tolist() == sorted_classes
    assert est.n_classes_ == 2
    assert est.classes_.dtype.kind == labels.dtype.kind

    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    pred = est.predict(X)
    assert pred.dtype.kind == labels.dtype.kind
    assert set(pred.tolist()) <= set(sorted_classes)
    assert np.array_equal(pred, np.where(proba[:, 1] > 0.5, est.classes_[1], est.classes_[0]))

    # column 1 is the probability of classes_[1]: the same as a 0/1 model of that event
    positive = (labels == est.classes_[1]).astype(int)
    reference = DaskBoostClassifier(**fast).fit(X, positive)
    np.testing.assert_allclose(proba[:, 1], reference.predict_proba(X)[:, 1], rtol=0, atol=1e-12)
    assert np.mean(pred == labels) > 0.7


def test_classifier_pandas_string_labels(clf_xy, fast):
    X, y = clf_xy
    labels = pd.Series(np.where(y == 1, "b", "a"), dtype="string")
    est = DaskBoostClassifier(**fast).fit(pd.DataFrame(X, columns=list("wxyz")), labels)
    assert est.classes_.tolist() == ["a", "b"]
    assert set(est.predict(X).tolist()) == {"a", "b"}


def test_classifier_output_margin(clf_xy, fast):
    X, y = clf_xy
    est = DaskBoostClassifier(**fast).fit(X, y)
    margin = est.predict(X, output_margin=True)
    np.testing.assert_allclose(1.0 / (1.0 + np.exp(-margin)), est.predict_proba(X)[:, 1],
                               rtol=0, atol=1e-12)


# ---- sample weights --------------------------------------------------------------------

@pytest.mark.parametrize("cls", ESTIMATORS)
def test_integer_weights_equal_repeated_rows(cls, reg_xy, clf_xy, fast):
    X, y = clf_xy if cls is DaskBoostClassifier else reg_xy
    w = np.random.default_rng(11).integers(1, 4, size=len(y))
    weighted = cls(**fast).fit(X, y, sample_weight=w)
    repeated = cls(**fast).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    predict = (lambda m: m.predict_proba(X)[:, 1]) if cls is DaskBoostClassifier else \
        (lambda m: m.predict(X))
    np.testing.assert_allclose(predict(weighted), predict(repeated), rtol=0, atol=1e-6)
    # and the weights matter
    unweighted = cls(**fast).fit(X, y)
    assert np.abs(predict(weighted) - predict(unweighted)).max() > 1e-3


@pytest.mark.parametrize("n_classes", [2, 3])
def test_integer_weights_add_exactly_what_repeated_rows_add(n_classes):
    # a weighted row's (g, h) is w * float32(dl/dm) in float64, exact for small integer w,
    # so the histograms, gains and leaves of the weighted and the repeated fit are the same
    # numbers and the margins agree to the last bit (weight 3 is where float32(w * g)
    # differed).  Weight 0 rows are dropped from the repeated data; rows are shuffled.
    rng = np.random.default_rng(5)
    X = rng.random((2000, 5))
    y = np.minimum((X[:, 0] * n_classes).astype(int), n_classes - 1)
    noisy = rng.random(len(y)) < 0.25
    y[noisy] = rng.integers(0, n_classes, noisy.sum())
    w = rng.integers(0, 5, size=len(y))
    params = dict(n_estimators=15, max_depth=4, learning_rate=0.3)
    weighted = DaskBoostClassifier(**params).fit(X, y, sample_weight=w)
    order = rng.permutation(int(w.sum()))
    repeated = DaskBoostClassifier(**params).fit(np.repeat(X, w, axis=0)[order],
                                                 np.repeat(y, w)[order])
    np.testing.assert_array_equal(weighted.predict(X, output_margin=True),
                                  repeated.predict(X, output_margin=True))


def test_zero_weights_equal_dropped_rows(reg_xy, fast):
    X, y = reg_xy
    w = np.random.default_rng(12).integers(0, 3, size=len(y)).astype(float)
    assert (w == 0).any()
    weighted = DaskBoostRegressor(**fast).fit(X, y, sample_weight=w)
    keep = w > 0
    dropped = DaskBoostRegressor(**fast).fit(np.repeat(X[keep], w[keep].astype(int), axis=0),
                                             np.repeat(y[keep], w[keep].astype(int)))
    np.testing.assert_allclose(weighted.predict(X), dropped.predict(X), rtol=0, atol=1e-6)


# ---- persistence -----------------------------------------------------------------------

def _strict_json(path):
    def reject(constant):
        raise ValueError(f"non-standard JSON constant {constant}")
    with open(path) as f:
        return json.loads(f.read(), parse_constant=reject)


def _with_missing(X):
    X = X.copy()
    X[np.random.default_rng(2).random(X.shape) < 0.2] = np.nan
    return X


def test_save_load_regressor(tmp_path, reg_df, fast):
    df, y = reg_df
    df = pd.DataFrame(_with_missing(df.to_numpy()), columns=df.columns)
    est = DaskBoostRegressor(learning_rate=0.2, **fast).fit(df, y)
    path = tmp_path / "reg.json"
    est.save_model(path)

    loaded = DaskBoostRegressor()
    assert loaded.load_model(path) is loaded
    assert np.array_equal(loaded.predict(df), est.predict(df))
    assert np.array_equal(loaded.predict(df, output_margin=True), est.predict(df, output_margin=True))
    assert loaded.get_params() == est.get_params()
    assert loaded.n_features_in_ == 4
    assert loaded.feature_names_in_.tolist() == est.feature_names_in_.tolist()
    with pytest.raises(ValueError, match="different order"):
        loaded.predict(df[df.columns[::-1]])

    data = _strict_json(path)
    assert data["format"] == "daskboost"
    assert isinstance(data["version"], int)
    assert len(data["trees"]) == fast["n_estimators"]
    # saving the loaded model gives the same file
    loaded.save_model(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    # string paths work too
    loaded2 = DaskBoostRegressor().load_model(str(path))
    assert np.array_equal(loaded2.predict(df.to_numpy()), est.predict(df.to_numpy()))


@pytest.mark.parametrize("kind", list(LABEL_SETS))
def test_save_load_classifier(tmp_path, clf_xy, fast, kind):
    X, y01 = clf_xy
    X = _with_missing(X)
    pair, sorted_classes = LABEL_SETS[kind]
    labels = np.where(y01 == 1, pair[0], pair[1])
    est = DaskBoostClassifier(**fast).fit(X, labels)
    path = tmp_path / "clf.json"
    est.save_model(path)
    _strict_json(path)

    loaded = DaskBoostClassifier().load_model(path)
    assert loaded.classes_.tolist() == sorted_classes
    assert loaded.classes_.dtype.kind == est.classes_.dtype.kind
    assert loaded.n_classes_ == 2
    assert np.array_equal(loaded.predict_proba(X), est.predict_proba(X))
    assert np.array_equal(loaded.predict(X), est.predict(X))
    assert loaded.get_params() == est.get_params()


def test_model_with_infinite_threshold_is_standard_json(tmp_path):
    # a split "every present value left, missing right" has threshold +inf
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=500).astype(float)
    missing = rng.random(500) < 0.3
    y = np.where(missing, 5.0, 0.0) + rng.normal(scale=0.01, size=500)
    x[missing] = np.nan
    est = DaskBoostRegressor(n_estimators=3, max_depth=1, learning_rate=1.0).fit(x.reshape(-1, 1), y)
    thresholds = np.concatenate([t.threshold[t.feature >= 0] for t in est.get_booster().trees])
    assert np.isinf(thresholds).any()
    path = tmp_path / "inf.json"
    est.save_model(path)
    _strict_json(path)
    loaded = DaskBoostRegressor().load_model(path)
    X_test = np.array([[0.0], [1.0], [2.0], [np.nan], [-np.inf], [np.inf]])
    assert np.array_equal(loaded.predict(X_test), est.predict(X_test))
    np.testing.assert_allclose(est.predict(X_test)[3], 5.0, atol=0.5)


def test_load_wrong_version(tmp_path, reg_xy, fast):
    X, y = reg_xy
    path = tmp_path / "m.json"
    DaskBoostRegressor(**fast).fit(X, y).save_model(path)
    data = _strict_json(path)
    data["version"] = data["version"] + 2  # version 2 is the categorical format
    path.write_text(json.dumps(data))
    est = DaskBoostRegressor()
    with pytest.raises(ValueError, match=rf"version {data['version']}"):
        est.load_model(path)
    with pytest.raises(ValueError, match="not fitted"):
        est.get_booster()


def test_load_wrong_format(tmp_path, reg_xy, fast):
    X, y = reg_xy
    path = tmp_path / "m.json"
    DaskBoostRegressor(**fast).fit(X, y).save_model(path)
    data = _strict_json(path)
    data["format"] = "xgboost"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="format='xgboost'"):
        DaskBoostRegressor().load_model(path)


def test_load_regressor_file_into_classifier(tmp_path, reg_xy, fast):
    X, y = reg_xy
    path = tmp_path / "m.json"
    DaskBoostRegressor(**fast).fit(X, y).save_model(path)
    est = DaskBoostClassifier()
    with pytest.raises(ValueError, match="classes"):
        est.load_model(path)
    with pytest.raises(ValueError, match="not fitted"):
        est.get_booster()


def test_save_into_missing_directory(tmp_path, reg_xy, fast):
    X, y = reg_xy
    est = DaskBoostRegressor(**fast).fit(X, y)
    with pytest.raises(OSError):
        est.save_model(tmp_path / "no" / "such" / "dir" / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_failed_save_keeps_old_file_and_leaves_no_temp_file(tmp_path, reg_xy, fast):
    X, y = reg_xy
    est = DaskBoostRegressor(**fast).fit(X, y)
    path = tmp_path / "m.json"
    est.save_model(path)
    before = path.read_bytes()
    est.set_params(base_score=Decimal("0.5"))  # not JSON serialisable: the write fails midway
    with pytest.raises(TypeError):
        est.save_model(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.json"]


def test_save_load_with_numpy_scalar_params(tmp_path, reg_xy):
    X, y = reg_xy
    est = DaskBoostRegressor(n_estimators=np.int64(4), max_depth=np.int32(3),
                             learning_rate=np.float32(0.25), max_bin=np.int64(64)).fit(X, y)
    path = tmp_path / "m.json"
    est.save_model(path)
    _strict_json(path)
    loaded = DaskBoostRegressor().load_model(path)
    assert np.array_equal(loaded.predict(X), est.predict(X))
    assert loaded.get_params()["n_estimators"] == 4 and loaded.get_params()["max_depth"] == 3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pickle_round_trip(cls, clf_xy, fast):
    X, y = clf_xy
    labels = np.where(y == 1, "pos", "neg") if cls is DaskBoostClassifier else y.astype(float)
    est = cls(**fast).fit(pd.DataFrame(X, columns=list("abcd")), labels)
    # use the packed forest before pickling, so the cache is in the state
    before = est.predict(X)
    restored = pickle.loads(pickle.dumps(est))
    assert np.array_equal(restored.predict(X), before)
    got, expected = restored.get_params(), est.get_params()
    assert np.isnan(got.pop("missing")) and np.isnan(expected.pop("missing"))  # (a new NaN)
    assert got == expected
    assert restored.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    if cls is DaskBoostClassifier:
        assert restored.classes_.tolist() == ["neg", "pos"]
        assert np.array_equal(restored.predict_proba(X), est.predict_proba(X))
    # an unfitted estimator pickles too
    assert pickle.loads(pickle.dumps(cls(max_depth=2))).get_params()["max_depth"] == 2
