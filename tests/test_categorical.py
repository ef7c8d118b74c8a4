"""Categorical and string features (issue 13): feature types, dictionaries, splits,
the model, prediction."""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost.binning import BinMapper
from daskboost.blockstore import StoreConfig
from daskboost.data import feature_block, partition_input
from daskboost.params import validate_params
from daskboost.runtime import make_runtime
from daskboost.sklearn import DaskBoostRegressor
from daskboost.training import scan

CITIES = ["oslo", "rome", "lima", "kiev", "baku", "doha", "riga", "bern"]


def frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    city = rng.choice(CITIES, n).astype(object)
    city[rng.random(n) < 0.05] = None
    df = pd.DataFrame({
        "city": pd.Series(city, dtype="category"),
        "carrier": pd.Series(rng.choice(["AA", "BA", "CX"], n), dtype="string"),
        "x": rng.normal(size=n),
    })
    effect = {c: i * 0.7 - 2 for i, c in enumerate(CITIES)}
    y = (df["city"].astype(object).map(effect).fillna(1.0).astype(float)
         + (df["carrier"] == "BA").astype(float) + 0.3 * df["x"] + rng.normal(0, 0.1, n))
    return df, y.to_numpy()


def scanned(X, y, **params):
    p = validate_params({**DaskBoostRegressor(**params).get_params()}, DaskBoostRegressor._objectives)
    data = partition_input(X, y, None, None, p.enable_categorical, p.feature_types)
    with make_runtime("test", StoreConfig(None, ("/tmp",))) as runtime:
        return data, scan(runtime, data, p, False)


# ---- milestone 1: feature types and dictionaries ---------------------------------------

@pytest.mark.parametrize("nparts", [1, 2, 5])
def test_dictionaries_are_sorted_and_independent_of_partitioning(nparts):
    df, y = frame()
    X = dd.from_pandas(df, npartitions=nparts)
    data, result = scanned(X, dd.from_array(y, chunksize=int(np.ceil(len(y) / nparts))))
    assert data.feature_types == ["c", "c", "q"]
    assert result.categories == {0: sorted(CITIES), 1: ["AA", "BA", "CX"]}


def test_pyarrow_and_object_string_columns_are_categorical():
    pa = pytest.importorskip("pyarrow")
    df = pd.DataFrame({
        "s": pd.Series(["b", "a", None, "c"], dtype=pd.ArrowDtype(pa.string())),
        "l": pd.Series(["x", "y", "x", None], dtype=pd.ArrowDtype(pa.large_string())),
        "d": pd.Series(["u", "v", "u", "v"], dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))),
        "o": pd.Series(["k", None, "j", "k"], dtype=object),
        "flag": [True, False, True, False],
    })
    data, result = scanned(df, np.arange(4.0))
    assert data.feature_types == ["c", "c", "c", "c", "q"]  # bool stays numeric
    assert result.categories == {0: ["a", "b", "c"], 1: ["x", "y"], 2: ["u", "v"], 3: ["j", "k"]}


def test_encoding_is_by_value_not_by_pandas_code():
    mapper = BinMapper([np.empty(0)], {0: ["a", "b", "c"]})
    one = pd.DataFrame({"f": pd.Categorical(["c", "a", None, "z"], categories=["c", "a", "z"])})
    two = pd.DataFrame({"f": pd.Categorical(["c", "a", None, "z"], categories=["z", "a", "c"])})
    for df in (one, two, df_object := pd.DataFrame({"f": ["c", "a", None, "z"]})):
        X = feature_block(df, mapper.encoders)
        np.testing.assert_array_equal(X[:, 0], [2.0, 0.0, np.nan, np.nan])  # unseen -> missing
    codes = mapper.transform(feature_block(df_object, mapper.encoders))
    assert codes[:, 0].tolist() == [2, 0, mapper.missing_code, mapper.missing_code]


def test_feature_types_make_an_integer_column_categorical():
    X = np.array([[3.0, 1.0], [7.0, 2.0], [3.0, np.nan], [5.0, 4.0]])
    data, result = scanned(X, np.arange(4.0), feature_types=["c", "q"])
    assert data.feature_types == ["c", "q"] and result.categories == {0: [3.0, 5.0, 7.0]}


def test_enable_categorical_false_gives_the_old_error():
    df, y = frame(100)
    with pytest.raises(TypeError, match="column 'city' has dtype category; only numeric"):
        DaskBoostRegressor(n_estimators=1, enable_categorical=False).fit(df, y)


def test_datetime_column_is_refused_with_advice():
    df = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=4), "x": np.arange(4.0)})
    with pytest.raises(TypeError, match="column 't' has dtype datetime64.*seconds since an epoch"):
        DaskBoostRegressor(n_estimators=1).fit(df, np.arange(4.0))


def test_too_many_categories_are_refused_naming_the_column():
    df = pd.DataFrame({"id": [f"u{i}" for i in range(50)], "x": np.arange(50.0)})
    with pytest.raises(ValueError, match="feature 'id' has 50 categories, more than max_cat=20"):
        DaskBoostRegressor(n_estimators=1, max_cat=20).fit(df, np.arange(50.0))


def test_bad_feature_types_and_params():
    df, y = frame(100)
    with pytest.raises(ValueError, match="feature_types"):
        DaskBoostRegressor(n_estimators=1, feature_types=["c", "q"]).fit(df, y)
    with pytest.raises(TypeError, match="column 'city'.*feature_types says 'q'"):
        DaskBoostRegressor(n_estimators=1, feature_types=["q", "c", "q"]).fit(df, y)
    with pytest.raises(ValueError, match="max_cat_to_onehot=0"):
        DaskBoostRegressor(n_estimators=1, max_cat_to_onehot=0).fit(df, y)
    with pytest.raises(TypeError, match="mixes strings and numbers"):
        DaskBoostRegressor(n_estimators=1).fit(pd.DataFrame({"m": ["a", 1, "b", 2]}), np.arange(4.0))
