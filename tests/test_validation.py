"""Bad input and bad parameters give a clear error before training, and leave no model.

Every failing ``fit`` here runs on a fresh estimator and checks the exception type, that
the message names the offending parameter/column/argument and value, and that afterwards
the estimator is still unfitted (``get_booster()`` raises).
"""

import re

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from daskboost import DaskBoostClassifier, DaskBoostRegressor

NOT_FITTED = "not fitted"


def assert_fit_fails(estimator, X, y, exc, match, sample_weight=None):
    """``estimator.fit`` raises ``exc`` matching ``match`` and leaves no model behind."""
    with pytest.raises(exc, match=match):
        estimator.fit(X, y, sample_weight=sample_weight)
    with pytest.raises(ValueError, match=NOT_FITTED):
        estimator.get_booster()
    assert not hasattr(estimator, "n_features_in_")
    assert not hasattr(estimator, "classes_")


@pytest.fixture
def df_y(reg_xy):
    X, y = reg_xy
    return pd.DataFrame(X[:300], columns=["a", "b", "c", "d"]), y[:300]


def _dask(df, y, npartitions=2):
    return dd.from_pandas(df, npartitions=npartitions), dd.from_pandas(pd.Series(y), npartitions=npartitions)


# ---- labels ----------------------------------------------------------------------------

def _with(values, index, value, dtype=None):
    out = np.array(values, dtype=dtype if dtype else np.asarray(values).dtype)
    out[index] = value
    return out


@pytest.mark.parametrize("container", ["numpy", "pandas", "dask"])
def test_nan_label(df_y, fast, container):
    df, y = df_y
    y = _with(y, 17, np.nan)
    if container == "numpy":
        X, labels = df.to_numpy(), y
    elif container == "pandas":
        X, labels = df, pd.Series(y)
    else:
        X, labels = _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError, r"\by\b.*missing")


@pytest.mark.parametrize("container", ["numpy", "dask"])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_label_regressor(df_y, fast, container, value):
    df, y = df_y
    y = _with(y, 3, value)
    X, labels = (df.to_numpy(), y) if container == "numpy" else _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError, r"\by\b.*inf")


@pytest.mark.parametrize("estimator_class", [DaskBoostRegressor, DaskBoostClassifier])
@pytest.mark.parametrize("dtype", ["Int64", "Float64", "boolean"])
def test_pd_na_label_in_nullable_series(df_y, fast, estimator_class, dtype):
    df, y = df_y
    labels = pd.Series((y > np.median(y)).astype(int), dtype=dtype)
    labels[5] = pd.NA
    assert_fit_fails(estimator_class(**fast), df, labels, ValueError, r"\by\b.*missing")
    ddf, _ = _dask(df, y)
    assert_fit_fails(estimator_class(**fast), ddf, dd.from_pandas(labels, npartitions=2),
                     ValueError, r"\by\b.*missing")


def test_missing_string_label_in_series(df_y, fast):
    df, y = df_y
    labels = pd.Series(np.where(y > np.median(y), "yes", "no"), dtype=object)
    labels[9] = None
    assert_fit_fails(DaskBoostClassifier(**fast), df, labels, ValueError, r"\by\b.*missing")


@pytest.mark.parametrize("labels", [
    ["no", "yes", None],
    np.array(["no", "yes", None], dtype=object),
    np.array([0, 1, pd.NA], dtype=object),
], ids=["list-None", "object-None", "object-pd.NA"])
def test_missing_label_in_object_array_classifier(df_y, fast, labels):
    df, _ = df_y
    y = (list(labels) * 100)[:len(df)]
    if isinstance(labels, np.ndarray):
        y = np.array(y, dtype=object)
    assert_fit_fails(DaskBoostClassifier(**fast), df, y, ValueError, r"\by\b.*missing")


def test_three_classes_with_a_binary_objective(df_y, fast):
    df, _ = df_y
    y = np.arange(len(df)) % 3
    assert_fit_fails(DaskBoostClassifier(objective="binary:logistic", **fast), df, y, ValueError,
                     r"objective='binary:logistic' needs exactly 2 classes; y has 3")


def test_num_class_that_does_not_match_the_labels(df_y, fast):
    df, _ = df_y
    y = np.arange(len(df)) % 3
    assert_fit_fails(DaskBoostClassifier(num_class=4, **fast), df, y, ValueError,
                     r"num_class=4 does not match the 3 classes in y")


@pytest.mark.parametrize("label", [1, "yes"])
def test_single_class(df_y, fast, label):
    df, _ = df_y
    y = np.full(len(df), label)
    assert_fit_fails(DaskBoostClassifier(**fast), df, y, ValueError,
                     rf"y has only one class \({label!r}\); a classifier needs at least 2")


def test_binary_logistic_regressor_labels_outside_unit_interval(df_y, fast):
    df, y = df_y
    labels = (y > np.median(y)).astype(float)
    labels[0] = 2.0
    assert_fit_fails(DaskBoostRegressor(objective="binary:logistic", **fast), df, labels,
                     ValueError, r"labels in \[0, 1\].*2\.0")


def test_string_labels_for_regression(df_y, fast):
    df, y = df_y
    labels = np.where(y > 0, "a", "b")
    assert_fit_fails(DaskBoostRegressor(**fast), df, labels, TypeError, r"\by\b.*numeric")


def test_labels_of_more_than_two_dimensions(df_y, fast):
    # (a y of two dimensions is a column per target: tests/test_multi_target.py)
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df, np.stack([y, y], axis=1)[:, :, None],
                     ValueError, r"y must be 1-D, or 2-D with one column per target")


# ---- feature dtypes --------------------------------------------------------------------

BAD_COLUMNS = {
    "object": lambda n: pd.Series(np.array(["x", "y"] * (n // 2), dtype=object), dtype=object),
    "string": lambda n: pd.Series(["x", "y"] * (n // 2), dtype="string"),
    "category": lambda n: pd.Series(pd.Categorical(["x", "y"] * (n // 2))),
    "categorical-of-ints": lambda n: pd.Series(pd.Categorical([1, 2] * (n // 2))),
    "datetime": lambda n: pd.Series(pd.date_range("2020-01-01", periods=n)),
    "timedelta": lambda n: pd.Series(pd.to_timedelta(np.arange(n), unit="s")),
}


@pytest.mark.parametrize("kind", list(BAD_COLUMNS))
@pytest.mark.parametrize("container", ["pandas", "dask"])
def test_unsupported_feature_column_is_named(df_y, fast, kind, container):
    df, y = df_y
    df = df.assign(bad_col=BAD_COLUMNS[kind](len(df)))
    assert str(df["bad_col"].dtype) != "float64"
    X, labels = (df, y) if container == "pandas" else _dask(df, y)
    # strings and categories are categorical features (issue 13) unless disabled
    params = dict(fast, enable_categorical=False) if "time" not in kind else fast
    assert_fit_fails(DaskBoostRegressor(**params), X, labels, TypeError, r"column 'bad_col'.*dtype")


@pytest.mark.parametrize("container", ["pandas", "dask"])
def test_a_repeated_column_name_is_refused(df_y, fast, container):
    # (xgboost's rule: a feature is found by its name in prediction, importances, dumps)
    df, y = df_y
    df = pd.concat([df, df.iloc[:, [1]]], axis=1)
    X, labels = (df, y) if container == "pandas" else _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError,
                     rf"X has the column '{df.columns[1]}' more than once; feature names "
                     "must be unique")


def test_booleans_with_missing_values_in_an_object_column(df_y, fast):
    df, y = df_y
    df = df.assign(flag=pd.Series([True, False, None] * (len(df) // 3) + [True] * (len(df) % 3),
                                  dtype=object))
    assert_fit_fails(DaskBoostRegressor(**fast), df, y, TypeError,
                     r"categorical feature 'flag' has the category (True|False); .*"
                     r"\.astype\('boolean'\)")
    fitted = DaskBoostRegressor(**fast).fit(df.assign(flag=df["flag"].astype("boolean")), y)
    assert fitted.get_booster().feature_types is None  # numeric: 0, 1 and missing


@pytest.mark.parametrize("bad, exc, match", [
    ("x", ValueError, r"X is an object array with a value that is not a number "
                      r"\(could not convert string to float: 'x'\).*pandas DataFrame"),
    ({"a": 1}, TypeError, r"X is an object array with a value that is not a number "
                          r"\(.*argument must be a string or a real number, not 'dict'\)"),
])
def test_object_numpy_array_with_a_non_number(df_y, fast, bad, exc, match):
    # (object arrays of numbers are read as float64: test_array_likes.py)
    df, y = df_y
    X = df.to_numpy().astype(object)
    X[7, 2] = bad
    assert_fit_fails(DaskBoostRegressor(**fast), X, y, exc, match)


def test_complex_features_rejected(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df.to_numpy().astype(complex), y, ValueError,
                     r"Complex data not supported: X has dtype complex128")


# ---- shapes and alignment --------------------------------------------------------------

def test_in_memory_length_mismatch(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df, y[:-1], ValueError,
                     rf"{len(df)} rows but y has {len(df) - 1}")
    assert_fit_fails(DaskBoostRegressor(**fast), df.to_numpy(), np.r_[y, 1.0], ValueError,
                     rf"{len(df)} rows but y has {len(df) + 1}")


def test_sample_weight_length_mismatch(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df, y, ValueError,
                     rf"{len(df)} rows but sample_weight has {len(df) - 2}",
                     sample_weight=np.ones(len(df) - 2))


def test_dask_partition_count_mismatch(df_y, fast):
    df, y = df_y
    ddf = dd.from_pandas(df, npartitions=2)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, dy, ValueError,
                     r"X has 2 partitions, y has 3")


def test_dask_divisions_mismatch(df_y, fast):
    df, y = df_y
    ddf = dd.from_pandas(df, npartitions=2)
    dy = dd.from_pandas(pd.Series(y, index=df.index + 1000), npartitions=2)
    assert ddf.npartitions == dy.npartitions == 2
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, dy, ValueError, r"\by\b.*divisions")


def test_dask_array_row_chunks_mismatch(df_y, fast):
    df, y = df_y
    Xa = da.from_array(df.to_numpy(), chunks=(100, 4))
    ya = da.from_array(y, chunks=((150, 50, 100),))
    assert_fit_fails(DaskBoostRegressor(**fast), Xa, ya, ValueError, r"row chunks.*\(150, 50, 100\)")


def test_dask_unknown_divisions_partition_length_mismatch(df_y, fast):
    df, y = df_y
    s = pd.Series(y)
    ddf = dd.from_map(lambda p: p, [df.iloc[:150], df.iloc[150:]])
    dy = dd.from_map(lambda p: p, [s.iloc[:140], s.iloc[150:]])  # only partition 0 is short
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, dy, ValueError,
                     r"150 rows but y has 140.*partition 0")


def test_dask_weights_misaligned(df_y, fast):
    df, y = df_y
    ddf, dy = _dask(df, y)
    w = dd.from_pandas(pd.Series(np.ones(len(y))), npartitions=3)
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, dy, ValueError,
                     r"X has 2 partitions, sample_weight has 3", sample_weight=w)


def test_in_memory_x_with_dask_labels(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df, da.from_array(y), TypeError,
                     r"in memory, so y must be too")
    assert_fit_fails(DaskBoostRegressor(**fast), df, y, TypeError,
                     r"in memory, so sample_weight must be too",
                     sample_weight=dd.from_pandas(pd.Series(np.ones(len(y))), npartitions=1))


def test_dask_x_with_in_memory_labels(df_y, fast):
    df, y = df_y
    ddf, dy = _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, y, TypeError,
                     r"dask collection, so y must be one too.*ndarray")
    assert_fit_fails(DaskBoostRegressor(**fast), da.from_array(df.to_numpy()), pd.Series(y), TypeError,
                     r"dask collection, so y must be one too.*Series")
    assert_fit_fails(DaskBoostRegressor(**fast), ddf, dy, TypeError,
                     r"dask collection, so sample_weight must be one too",
                     sample_weight=np.ones(len(y)))


@pytest.mark.parametrize("make_x", [
    lambda df: df.iloc[:0].to_numpy(),
    lambda df: df.iloc[:0],
    lambda df: dd.from_pandas(df.iloc[:0], npartitions=1),
    lambda df: da.from_array(df.iloc[:0].to_numpy()),
], ids=["numpy", "pandas", "dask-dataframe", "dask-array"])
def test_empty_training_data(df_y, fast, make_x):
    df, y = df_y
    X = make_x(df)
    labels = y[:0]
    if isinstance(X, dd.DataFrame):
        labels = dd.from_pandas(pd.Series(labels), npartitions=1)
    elif isinstance(X, da.Array):
        labels = da.from_array(labels)
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError, r"0 rows")


def test_all_partitions_empty_after_filtering(df_y, fast):
    df, y = df_y
    ddf, dy = _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), ddf[ddf["a"] > 100], dy[dy > 1e9],
                     ValueError, r"0 rows")


def test_no_feature_columns(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df[[]], y, ValueError, r"no feature columns")


@pytest.mark.parametrize("make_x", [
    lambda df: df["a"].to_numpy(),
    lambda df: da.from_array(df["a"].to_numpy()),
], ids=["numpy", "dask-array"])
def test_one_dimensional_array_x(df_y, fast, make_x):
    df, y = df_y
    X = make_x(df)
    labels = da.from_array(y) if isinstance(X, da.Array) else y
    advice = "" if isinstance(X, da.Array) else r".*Reshape your data: X.reshape\(-1, 1\)"
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError, r"2-D.*ndim=1" + advice)


def test_series_x(df_y, fast):
    df, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), df["a"], y, TypeError, r"got Series")
    ddf, dy = _dask(df, y)
    assert_fit_fails(DaskBoostRegressor(**fast), ddf["a"], dy, TypeError, r"two-dimensional")


@pytest.mark.parametrize("X", [None, "features", 3.5, {"a": [1, 2]}])
def test_x_that_is_not_array_like(df_y, fast, X):
    _, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), X, y, TypeError,
                     rf"X must be a dask DataFrame, .*array-like.*got {type(X).__name__}")


def test_x_with_three_dimensions(df_y, fast):
    _, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), np.zeros((len(y), 2, 2)), y, ValueError,
                     r"X must be a 2-D array; got an array with ndim=3")


def test_x_with_zero_features(df_y, fast):
    _, y = df_y
    assert_fit_fails(DaskBoostRegressor(**fast), np.zeros((len(y), 0)), y, ValueError,
                     rf"X has 0 feature\(s\) \(shape=\({len(y)}, 0\)\) while a minimum of 1")


@pytest.mark.parametrize("cls", [DaskBoostRegressor, DaskBoostClassifier])
def test_y_none(df_y, fast, cls):
    df, _ = df_y
    assert_fit_fails(cls(**fast), df, None, ValueError,
                     rf"{cls.__name__} requires y to be passed, but the target y is None")


def test_sparse_x_is_checked_like_a_dense_array(df_y, fast):
    # sparse input itself is tested in test_sparse.py
    scipy_sparse = pytest.importorskip("scipy.sparse")
    df, y = df_y
    X = scipy_sparse.csr_matrix(df.to_numpy())
    assert_fit_fails(DaskBoostRegressor(**fast), X.astype(np.complex128), y, ValueError,
                     r"Complex data not supported: X has dtype complex128")
    assert_fit_fails(DaskBoostRegressor(**fast), X[:, :0], y, ValueError,
                     rf"X has 0 feature\(s\) \(shape=\({len(y)}, 0\)\) while a minimum of 1")
    model = DaskBoostRegressor(**fast).fit(X, y)
    with pytest.raises(ValueError, match=r"X has 3 features, but .* is expecting 4 features"):
        model.predict(scipy_sparse.csr_array(df.to_numpy()[:, :3]))


@pytest.mark.parametrize("container", ["numpy", "dask"])
def test_classifier_on_a_continuous_target(df_y, fast, container):
    df, y = df_y
    X, labels = (df, y) if container == "numpy" else _dask(df, y)
    assert_fit_fails(DaskBoostClassifier(**fast), X, labels, ValueError,
                     r"Unknown label type: continuous \(y has non-integer labels such as "
                     r"-?\d+\.\d+\).*DaskBoostRegressor")


# ---- sample weights --------------------------------------------------------------------

@pytest.mark.parametrize("bad, match", [
    (-1.5, r"sample_weight must be >= 0.*-1\.5"),
    (np.nan, r"sample_weight contains NaN.*nan"),
    (np.inf, r"sample_weight contains NaN or inf.*inf"),
])
@pytest.mark.parametrize("container", ["numpy", "dask"])
def test_bad_sample_weight(df_y, fast, bad, match, container):
    df, y = df_y
    w = np.ones(len(y))
    w[42] = bad
    if container == "numpy":
        X, labels = df, y
    else:
        X, labels = _dask(df, y)
        w = dd.from_pandas(pd.Series(w), npartitions=2)
    assert_fit_fails(DaskBoostRegressor(**fast), X, labels, ValueError, match, sample_weight=w)


def test_pd_na_sample_weight(df_y, fast):
    df, y = df_y
    w = pd.Series(np.ones(len(y)), dtype="Float64")
    w[3] = pd.NA
    assert_fit_fails(DaskBoostRegressor(**fast), df, y, ValueError, r"sample_weight contains NaN",
                     sample_weight=w)


@pytest.mark.parametrize("estimator_class", [DaskBoostRegressor, DaskBoostClassifier])
def test_all_zero_sample_weights(df_y, fast, estimator_class):
    df, y = df_y
    labels = (y > np.median(y)).astype(int)
    assert_fit_fails(estimator_class(**fast), df, labels, ValueError,
                     r"sample_weight is zero for every row \(it sums to 0\)",
                     sample_weight=np.zeros(len(y)))


# ---- hyperparameters -------------------------------------------------------------------

BAD_PARAMS = [
    ("learning_rate", 0, ValueError, r"learning_rate=0(\.0)? must be > 0"),
    ("learning_rate", -0.1, ValueError, r"learning_rate=-0\.1 must be > 0"),
    ("learning_rate", float("nan"), ValueError, r"learning_rate=nan must be finite"),
    ("learning_rate", "0.1", TypeError, r"learning_rate='0\.1' must be a number"),
    ("learning_rate", True, TypeError, r"learning_rate=True must be a number"),
    ("max_depth", 0, ValueError, r"max_depth=0 \(no depth limit\) needs grow_policy='lossguide'"),
    ("max_depth", -1, ValueError, r"max_depth=-1 must be >= 0"),
    ("max_depth", True, TypeError, r"max_depth=True must be an integer"),
    ("max_depth", 3.0, TypeError, r"max_depth=3\.0 must be an integer"),
    ("n_estimators", 0, ValueError, r"n_estimators=0 must be >= 1"),
    ("n_estimators", -5, ValueError, r"n_estimators=-5 must be >= 1"),
    ("n_estimators", False, TypeError, r"n_estimators=False must be an integer"),
    ("n_estimators", "10", TypeError, r"n_estimators='10' must be an integer"),
    ("max_bin", 1, ValueError, r"max_bin=1 must be in \[2, 65535\]"),
    ("max_bin", 70000, ValueError, r"max_bin=70000 must be in \[2, 65535\]"),
    ("reg_lambda", -1, ValueError, r"reg_lambda=-1(\.0)? must be >= 0"),
    ("reg_lambda", float("inf"), ValueError, r"reg_lambda=inf must be finite"),
    ("gamma", -1, ValueError, r"gamma=-1(\.0)? must be >= 0"),
    ("gamma", None, TypeError, r"gamma=None must be a number"),
    ("min_child_weight", -1, ValueError, r"min_child_weight=-1(\.0)? must be >= 0"),
    ("min_child_weight", [1], TypeError, r"min_child_weight=\[1\] must be a number"),
    ("base_score", "0.5", TypeError, r"base_score='0\.5' must be a number"),
    ("base_score", float("nan"), ValueError, r"base_score=nan must be finite"),
]


@pytest.mark.parametrize("estimator_class", [DaskBoostRegressor, DaskBoostClassifier])
@pytest.mark.parametrize("name, value, exc, match", BAD_PARAMS,
                         ids=[f"{p[0]}={p[1]!r}" for p in BAD_PARAMS])
def test_invalid_parameter(df_y, estimator_class, name, value, exc, match):
    df, y = df_y
    labels = (y > np.median(y)).astype(int)
    estimator = estimator_class(n_estimators=5, max_depth=3).set_params(**{name: value})
    assert_fit_fails(estimator, df, labels, exc, match)


@pytest.mark.parametrize("name, value, exc, match", BAD_PARAMS[:4])
def test_parameters_are_checked_before_the_data(name, value, exc, match):
    # parameter errors come first, before anything looks at X or y
    with pytest.raises(exc, match=match):
        DaskBoostRegressor(**{name: value}).fit("not data", None)


def test_unknown_objective_lists_valid_ones(df_y, fast):
    df, y = df_y
    with pytest.raises(ValueError, match=r"objective='reg:nonsense'") as info:
        DaskBoostRegressor(objective="reg:nonsense", **fast).fit(df, y)
    assert "'reg:squarederror'" in str(info.value) and "'binary:logistic'" in str(info.value)
    estimator = DaskBoostClassifier(objective="reg:squarederror", **fast)
    assert_fit_fails(estimator, df, (y > 0).astype(int), ValueError,
                     r"objective='reg:squarederror'.*valid objectives: 'binary:logistic'")


@pytest.mark.parametrize("base_score", [1.5, 0.0, 1.0, -0.2])
def test_base_score_outside_unit_interval_for_logistic(df_y, fast, base_score):
    df, y = df_y
    labels = (y > np.median(y)).astype(int)
    match = rf"base_score={re.escape(str(base_score))}.*\(0, 1\).*binary:logistic"
    assert_fit_fails(DaskBoostClassifier(base_score=base_score, **fast), df, labels, ValueError, match)
    assert_fit_fails(DaskBoostRegressor(objective="binary:logistic", base_score=base_score, **fast),
                     df, labels.astype(float), ValueError, match)


def test_base_score_any_finite_value_for_squared_error(df_y, fast):
    df, y = df_y
    model = DaskBoostRegressor(base_score=1.5, **fast).fit(df, y)
    assert model.get_booster().base_margin == 1.5


# ---- set_params and unfitted estimators -------------------------------------------------

@pytest.mark.parametrize("estimator_class", [DaskBoostRegressor, DaskBoostClassifier])
def test_set_params_unknown_name(estimator_class):
    estimator = estimator_class()
    with pytest.raises(ValueError, match=r"invalid parameter 'etaa'.*learning_rate"):
        estimator.set_params(etaa=0.1)
    assert not hasattr(estimator, "etaa")
    # xgboost's alias sets the parameter it names
    assert estimator.set_params(eta=0.1).learning_rate == 0.1 and not hasattr(estimator, "eta")


@pytest.mark.parametrize("method", ["predict", "predict_proba", "get_booster", "save_model"])
def test_use_before_fit(tmp_path, method):
    X = np.zeros((3, 2))
    calls = {
        "predict": lambda e: e.predict(X),
        "predict_proba": lambda e: e.predict_proba(X),
        "get_booster": lambda e: e.get_booster(),
        "save_model": lambda e: e.save_model(tmp_path / "model.json"),
    }
    classes = [DaskBoostClassifier] if method == "predict_proba" else [DaskBoostRegressor,
                                                                       DaskBoostClassifier]
    for cls in classes:
        with pytest.raises(NotFittedError,
                           match=rf"This {cls.__name__} instance is not fitted yet"):
            calls[method](cls())
    assert list(tmp_path.iterdir()) == []


# ---- prediction input must match the training columns -----------------------------------

@pytest.fixture
def fitted_on_frame(df_y, fast):
    df, y = df_y
    return DaskBoostRegressor(**fast).fit(df, y), df


def test_predict_reordered_columns(fitted_on_frame):
    model, df = fitted_on_frame
    with pytest.raises(ValueError, match=r"different order.*\['a', 'b', 'c', 'd'\]"):
        model.predict(df[["b", "a", "c", "d"]])
    with pytest.raises(ValueError, match=r"different order"):
        model.predict(dd.from_pandas(df[["d", "c", "b", "a"]], npartitions=2))


def test_predict_renamed_column(fitted_on_frame):
    model, df = fitted_on_frame
    with pytest.raises(ValueError, match=r"missing \['c'\], unexpected \['z'\]"):
        model.predict(df.rename(columns={"c": "z"}))


@pytest.mark.parametrize("change, named", [
    (lambda df: df.drop(columns=["c"]), "'c'"),
    (lambda df: df.assign(extra=1.0), "'extra'"),
], ids=["missing", "extra"])
def test_predict_missing_or_extra_column_is_named(fitted_on_frame, change, named):
    model, df = fitted_on_frame
    with pytest.raises(ValueError, match=re.escape(named)):
        model.predict(change(df))


@pytest.mark.parametrize("change", [
    lambda df: df.drop(columns=["c"]),
    lambda df: df.assign(extra=1.0),
], ids=["missing", "extra"])
def test_predict_missing_or_extra_column_fails(fitted_on_frame, change):
    # (the message is checked loosely here; naming the column is tested above)
    model, df = fitted_on_frame
    with pytest.raises(ValueError, match=r"(?i)features|columns"):
        model.predict(change(df))
    with pytest.raises(ValueError, match=r"(?i)features|columns"):
        model.predict(dd.from_pandas(change(df), npartitions=2))


@pytest.mark.parametrize("n_features", [3, 5])
def test_predict_numpy_wrong_number_of_features(fitted_on_frame, n_features):
    model, df = fitted_on_frame
    message = rf"X has {n_features} features, but DaskBoostRegressor is expecting 4 features"
    with pytest.raises(ValueError, match=message):
        model.predict(np.zeros((10, n_features)))
    with pytest.raises(ValueError, match=message):
        model.predict(da.zeros((10, n_features), chunks=5))
    with pytest.raises(ValueError, match=message):
        model.predict(np.zeros((10, n_features)).tolist())


def test_predict_bad_dtype_column(fitted_on_frame):
    model, df = fitted_on_frame
    bad = df.assign(d=pd.Series(["x"] * len(df), dtype=object))
    with pytest.raises(TypeError, match=r"column 'd'"):
        model.predict(bad)


def test_classifier_fit_after_failed_fit(df_y, fast):
    # a classifier whose fit failed on its labels has no classes_ or model, and fits later
    df, y = df_y
    clf = DaskBoostClassifier(**fast)
    assert_fit_fails(clf, df, np.zeros(len(df), dtype=int), ValueError, r"only one class")
    # and can then be fitted normally
    clf.fit(df, (y > np.median(y)).astype(int))
    assert clf.classes_.tolist() == [0, 1]
    assert clf.get_booster() is not None
