"""Arrow tables as input: pyarrow's Table and RecordBatch, polars DataFrames (anything
that exports an Arrow stream) are read as the pandas DataFrame pyarrow makes of them."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor, cv


@pytest.fixture(scope="module")
def table():
    """Numbers with nulls, a string column and a dictionary (categorical) column."""
    rng = np.random.default_rng(3)
    n = 400
    number = rng.normal(size=n)
    count = rng.integers(0, 6, size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    size = rng.choice(["s", "m", "l", "xl"], size=n)
    y = ((number > 0) ^ (colour == "red") | (size == "xl")).astype(np.int64)
    count_with_nulls = pa.array(count, mask=rng.random(n) < 0.1)
    return pa.table({"number": number, "count": count_with_nulls,
                     "colour": pa.array(colour),
                     "size": pa.array(size).dictionary_encode()}), y


def model_of(estimator):
    return estimator.get_booster().to_dict()


def test_a_pyarrow_table_is_its_pandas_frame(table):
    X, y = table
    frame = X.to_pandas()
    assert str(frame["size"].dtype) == "category" and frame["count"].isna().any()
    fitted = DaskBoostClassifier(n_estimators=5).fit(X, y, eval_set=[(X, y)])
    reference = DaskBoostClassifier(n_estimators=5).fit(frame, y, eval_set=[(frame, y)])
    assert model_of(fitted) == model_of(reference)
    booster = fitted.get_booster()
    assert booster.feature_names == ["number", "count", "colour", "size"]
    assert booster.feature_types == ["q", "q", "c", "c"]
    np.testing.assert_array_equal(fitted.predict_proba(X), reference.predict_proba(frame))
    np.testing.assert_array_equal(booster.predict(X), booster.predict(frame))
    np.testing.assert_array_equal(booster.inplace_predict(X), booster.inplace_predict(frame))
    batch = X.to_batches()[0]
    np.testing.assert_array_equal(fitted.predict_proba(batch), reference.predict_proba(frame))
    assert fitted.evals_result_ == reference.evals_result_


def test_a_table_with_its_columns_reordered_is_refused(table):
    X, y = table
    fitted = DaskBoostClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="number"):
        fitted.predict(X.select(["count", "number", "colour", "size"]))


def test_missing_and_cv_read_tables_as_frames(table):
    X, y = table
    numbers = X.select(["number", "count"])
    target = X.column("number").to_numpy() + X.column("count").fill_null(0).to_numpy()
    masked = DaskBoostRegressor(n_estimators=3, missing=0.0).fit(numbers, target)
    reference = DaskBoostRegressor(n_estimators=3, missing=0.0).fit(numbers.to_pandas(),
                                                                    target)
    assert model_of(masked) == model_of(reference)
    assert model_of(masked) != model_of(DaskBoostRegressor(n_estimators=3).fit(numbers, target))
    params = {"objective": "binary:logistic", "max_depth": 3}
    pd.testing.assert_frame_equal(cv(params, X, y, nfold=3, num_boost_round=3),
                                  cv(params, X.to_pandas(), y, nfold=3, num_boost_round=3))


def test_a_polars_frame_is_its_pandas_frame(table):
    pl = pytest.importorskip("polars")
    X, y = table
    frame = pl.from_arrow(X).with_columns(pl.col("colour").cast(pl.Categorical))
    labels = pl.Series("label", y)
    fitted = DaskBoostClassifier(n_estimators=5).fit(frame, labels, eval_set=[(frame, labels)])
    reference = DaskBoostClassifier(n_estimators=5).fit(X.to_pandas(), y,
                                                        eval_set=[(X.to_pandas(), y)])
    assert model_of(fitted) == model_of(reference)
    np.testing.assert_array_equal(fitted.predict(frame), reference.predict(X.to_pandas()))
    np.testing.assert_array_equal(fitted.get_booster().inplace_predict(frame),
                                  reference.get_booster().inplace_predict(X.to_pandas()))


def test_a_single_column_is_not_a_table(table):
    pl = pytest.importorskip("polars")
    X, y = table
    with pytest.raises(ValueError, match="2-D"):
        DaskBoostClassifier(n_estimators=3).fit(pl.Series("number", X.column("number")), y)
