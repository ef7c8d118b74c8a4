"""xgboost's ``missing``: a feature value read as missing, wherever the data comes from.

A fit with ``missing=v`` on data holding v is the fit on the same data with NaN in
those places: the same model bytes, the same predictions (exactly), in fit, eval sets,
``cv``, prediction and ``apply``.
"""

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import daskboost
from daskboost import DaskBoostClassifier, DaskBoostRegressor
from daskboost.missing_values import with_missing_as_nan

MARK = -999.0
PARAMS = dict(n_estimators=6, max_depth=4)


def data(seed=0, n=2000, dtype=np.float64):
    """(X with NaN, X with MARK where the NaN are, binary y)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(dtype)
    X[rng.random(X.shape) < 0.25] = np.nan
    y = (np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + rng.normal(0, 0.5, n) > 0)
    # rows whose feature is missing lean one way: the default direction matters
    y = (y | np.isnan(X[:, 2])).astype(np.int64)
    return X, np.where(np.isnan(X), np.asarray(MARK, dtype), X), y


def model_json(estimator):
    return json.dumps(estimator.get_booster().to_dict(), sort_keys=True)


def test_a_marked_value_is_the_fit_with_nan_there():
    X_nan, X_marked, y = data()
    ours = DaskBoostClassifier(missing=MARK, **PARAMS).fit(X_marked, y)
    theirs = DaskBoostClassifier(**PARAMS).fit(X_nan, y)
    assert model_json(ours) == model_json(theirs)
    assert np.array_equal(ours.predict_proba(X_marked), theirs.predict_proba(X_nan))
    assert np.array_equal(ours.apply(X_marked), theirs.apply(X_nan))
    assert np.array_equal(ours.predict(X_marked, pred_contribs=True),
                          theirs.predict(X_nan, pred_contribs=True))
    # NaN stays missing too
    assert np.array_equal(ours.predict_proba(X_nan), theirs.predict_proba(X_nan))
    # without ``missing`` the mark is an ordinary (small) value: another model
    plain = DaskBoostClassifier(**PARAMS).fit(X_marked, y)
    assert model_json(plain) != model_json(theirs)


def test_the_callers_array_is_left_alone_and_nan_means_no_copy():
    X_nan, X_marked, y = data(n=300)
    before = X_marked.copy()
    DaskBoostClassifier(missing=MARK, **PARAMS).fit(X_marked, y)
    assert np.array_equal(X_marked, before)
    assert with_missing_as_nan(X_nan, np.nan) is X_nan
    assert with_missing_as_nan(X_nan, float("nan")) is X_nan


def test_float32_data_is_compared_in_float32():
    rng = np.random.default_rng(1)
    X = rng.choice(np.array([0.1, 0.2, 0.3, 0.7], np.float32), size=(1500, 3))
    y = (X[:, 0] + X[:, 1] > 0.5).astype(float)
    ours = DaskBoostRegressor(missing=0.1, **PARAMS).fit(X, y)
    theirs = DaskBoostRegressor(**PARAMS).fit(np.where(X == np.float32(0.1), np.nan, X), y)
    assert model_json(ours) == model_json(theirs)


def test_integer_features_with_zero_as_missing():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, size=(1500, 4))
    y = X[:, 0] * 1.5 - X[:, 1] + rng.normal(0, 0.1, 1500)
    ours = DaskBoostRegressor(missing=0, **PARAMS).fit(X, y)
    theirs = DaskBoostRegressor(**PARAMS).fit(np.where(X == 0, np.nan, X.astype(float)), y)
    assert model_json(ours) == model_json(theirs)
    assert np.array_equal(ours.predict(X), theirs.predict(np.where(X == 0, np.nan, X)))


def test_pandas_columns_numeric_nullable_and_categorical():
    rng = np.random.default_rng(3)
    n = 1500
    codes = rng.integers(0, 4, n)
    frame = pd.DataFrame({
        "ints": rng.integers(-1, 4, n),                               # -1: missing
        "floats": np.where(rng.random(n) < 0.2, -1.0, rng.normal(size=n)).astype(np.float32),
        "nullable": pd.array(np.where(rng.random(n) < 0.2, -1, rng.integers(0, 9, n)),
                             dtype="Int64"),
        "level": pd.Categorical(np.array([-1, 10, 20, 30])[codes]),  # -1: a category
    })
    y = (frame["ints"].to_numpy() > 1).astype(float) + (codes == 1) + rng.normal(0, 0.1, n)
    expected = frame.copy()
    expected["ints"] = frame["ints"].astype(float).where(frame["ints"] != -1)
    expected["floats"] = frame["floats"].where(frame["floats"] != -1)
    expected["nullable"] = frame["nullable"].mask(frame["nullable"] == -1)
    ours = DaskBoostRegressor(missing=-1, **PARAMS).fit(frame, y)
    theirs = DaskBoostRegressor(**PARAMS).fit(expected, y)
    assert model_json(ours) == model_json(theirs)
    assert np.array_equal(ours.predict(frame), theirs.predict(expected))
    assert frame["ints"].min() == -1  # the caller's frame unchanged


@pytest.mark.parametrize("kind", ["dask array", "dask frame"])
def test_dask_collections_are_masked_lazily(kind):
    X_nan, X_marked, y = data(n=3000)

    def as_dask(X):
        if kind == "dask array":
            return da.from_array(X, chunks=(1000, 5))
        return dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=3)

    def labels():
        return (da.from_array(y, chunks=1000) if kind == "dask array"
                else dd.from_pandas(pd.Series(y), npartitions=3))

    ours = DaskBoostClassifier(missing=MARK, **PARAMS).fit(as_dask(X_marked), labels())
    theirs = DaskBoostClassifier(**PARAMS).fit(as_dask(X_nan), labels())
    assert model_json(ours) == model_json(theirs)
    got = ours.predict_proba(as_dask(X_marked))
    assert hasattr(got, "compute")
    assert np.array_equal(np.asarray(got.compute()), theirs.predict_proba(X_nan))


def test_sparse_stored_entries_equal_to_missing_are_dropped():
    X_nan, X_marked, y = data(n=1500)
    every_entry = sp.csr_matrix(X_marked)            # -999 stored wherever X is missing
    assert every_entry.nnz == X_marked.size
    ours = DaskBoostClassifier(missing=MARK, **PARAMS).fit(every_entry, y)
    theirs = DaskBoostClassifier(**PARAMS).fit(X_nan, y)
    assert model_json(ours) == model_json(theirs)
    assert np.array_equal(ours.predict_proba(every_entry.tocsc()), theirs.predict_proba(X_nan))
    chunks = da.from_array(every_entry, chunks=(500, 5), asarray=False)
    assert np.array_equal(np.asarray(ours.predict_proba(chunks).compute()),
                          theirs.predict_proba(X_nan))
    # missing=0: a stored zero is missing, as the entries not stored are
    zeros = sp.csr_matrix((np.zeros(3), ([0, 1, 2], [0, 1, 2])), shape=(3, 5))
    assert with_missing_as_nan(zeros, 0.0).nnz == 0


def test_eval_sets_and_the_training_data_as_one():
    X_nan, X_marked, y = data(n=2000)
    ours = DaskBoostClassifier(missing=MARK, **PARAMS).fit(
        X_marked, y, eval_set=[(X_marked, y), (X_marked[:500], y[:500])])
    theirs = DaskBoostClassifier(**PARAMS).fit(
        X_nan, y, eval_set=[(X_nan, y), (X_nan[:500], y[:500])])
    assert ours.evals_result() == theirs.evals_result()
    assert model_json(ours) == model_json(theirs)


def test_cv_reads_missing_from_params():
    X_nan, X_marked, y = data(n=1500)
    params = {"objective": "binary:logistic", "max_depth": 3}
    ours = daskboost.cv({**params, "missing": MARK}, X_marked, y, nfold=3, num_boost_round=4)
    theirs = daskboost.cv(params, X_nan, y, nfold=3, num_boost_round=4)
    pd.testing.assert_frame_equal(ours, theirs, rtol=0, atol=0)
    marked_plain = daskboost.cv(params, X_marked, y, nfold=3, num_boost_round=4)
    assert not marked_plain.equals(theirs)


def test_a_label_column_is_not_masked():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.integers(0, 3, 900), "b": rng.normal(size=900)})
    frame["target"] = (frame["a"] == 2).astype(int)   # labels 0 and 1; 0 is ``missing``
    model = DaskBoostClassifier(missing=0, **PARAMS).fit(frame, "target")
    assert model.classes_.tolist() == [0, 1]


def test_saved_with_the_model_when_not_nan(tmp_path):
    X_nan, X_marked, y = data(n=800)
    marked = DaskBoostClassifier(missing=MARK, **PARAMS).fit(X_marked, y)
    plain = DaskBoostClassifier(**PARAMS).fit(X_nan, y)
    marked.save_model(tmp_path / "marked.json")
    plain.save_model(tmp_path / "plain.json")
    assert json.loads((tmp_path / "marked.json").read_text())["estimator"]["params"][
        "missing"] == MARK
    assert "missing" not in json.loads((tmp_path / "plain.json").read_text())["estimator"][
        "params"]  # a model without it keeps its bytes
    loaded = DaskBoostClassifier().load_model(tmp_path / "marked.json")
    assert loaded.missing == MARK
    assert np.array_equal(loaded.predict_proba(X_marked), plain.predict_proba(X_nan))
    assert np.isnan(DaskBoostClassifier().load_model(tmp_path / "plain.json").missing)


def test_a_crafted_missing_in_a_model_file_is_refused(tmp_path):
    X_nan, X_marked, y = data(n=500)
    DaskBoostClassifier(missing=MARK, **PARAMS).fit(X_marked, y).save_model(tmp_path / "m.json")
    payload = json.loads((tmp_path / "m.json").read_text())
    payload["estimator"]["params"]["missing"] = "zero"
    (tmp_path / "bad.json").write_text(json.dumps(payload))
    with pytest.raises(ValueError, match="missing='zero'"):
        DaskBoostClassifier().load_model(tmp_path / "bad.json")


@pytest.mark.parametrize("bad,error", [("x", TypeError), (True, TypeError), (None, TypeError),
                                       (float("inf"), ValueError), ([0], TypeError)])
def test_bad_values_are_refused_before_any_work(bad, error):
    X = np.zeros((4, 2))
    with pytest.raises(error, match="missing="):
        DaskBoostRegressor(missing=bad).fit(X, [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(error, match="missing="):
        daskboost.cv({"missing": bad}, X, [0.0, 1.0, 2.0, 3.0], nfold=2)
