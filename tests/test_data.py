"""Input handling: every accepted input kind trains and predicts consistently.

In-memory input (numpy, pandas) is cut into blocks of ``2**17`` rows, so with fewer rows
it is one block, exactly like a dask collection with one partition: same data and same
partitioning must give the same model.  Different partitionings of the same rows give the
same trees here (few distinct feature values: exact bins), so predictions agree up to
floating point summation order (1e-6).
"""

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor

ATOL = 1e-6


def _tree_structure(model):
    """Split features and thresholds of every tree (what must not depend on partitioning)."""
    return [(t.feature.tolist(), np.round(t.threshold, 12).tolist())
            for t in model.get_booster().trees]


def _with_missing(X, frac=0.15, seed=7):
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < frac] = np.nan
    return X


# ---- same rows, same partitioning -> same model ----------------------------------------

def test_numpy_and_pandas_give_identical_models(reg_xy, fast):
    X, y = reg_xy
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    from_numpy = DaskBoostRegressor(**fast).fit(X, y)
    from_pandas = DaskBoostRegressor(**fast).fit(df, pd.Series(y))
    p_numpy = from_numpy.predict(X)
    assert np.array_equal(p_numpy, from_pandas.predict(df))
    # and each model gives the same predictions for either representation of the rows
    assert np.array_equal(p_numpy, from_numpy.predict(df))
    assert np.array_equal(p_numpy, from_pandas.predict(X))
    # sanity: the model learned something (so equality is not trivially of constants)
    assert np.corrcoef(p_numpy, y)[0, 1] > 0.8


@pytest.mark.parametrize("y_kind", ["list", "column", "frame", "series_other_index"])
def test_label_container_does_not_matter(reg_xy, fast, y_kind):
    X, y = reg_xy
    reference = DaskBoostRegressor(**fast).fit(X, y).predict(X)
    labels = {
        "list": y.tolist(),
        "column": y.reshape(-1, 1),
        "frame": pd.DataFrame({"target": y}),
        # in-memory labels are aligned by position, not by index
        "series_other_index": pd.Series(y, index=np.arange(len(y))[::-1] + 1000),
    }[y_kind]
    assert np.array_equal(DaskBoostRegressor(**fast).fit(X, labels).predict(X), reference)


def test_one_partition_dask_dataframe_matches_pandas(reg_df, fast):
    df, y = reg_df
    in_memory = DaskBoostRegressor(**fast).fit(df, y)
    ddf = dd.from_pandas(df, npartitions=1)
    dy = dd.from_pandas(y, npartitions=1)
    on_dask = DaskBoostRegressor(**fast).fit(ddf, dy)
    expected = in_memory.predict(df)
    np.testing.assert_allclose(on_dask.predict(ddf).compute().to_numpy(), expected, rtol=0, atol=ATOL)
    np.testing.assert_allclose(on_dask.predict(df), expected, rtol=0, atol=ATOL)
    assert _tree_structure(on_dask) == _tree_structure(in_memory)


def test_one_block_dask_array_matches_numpy(reg_xy, fast):
    X, y = reg_xy
    in_memory = DaskBoostRegressor(**fast).fit(X, y)
    on_dask = DaskBoostRegressor(**fast).fit(da.from_array(X, chunks=-1), da.from_array(y, chunks=-1))
    np.testing.assert_allclose(on_dask.predict(X), in_memory.predict(X), rtol=0, atol=ATOL)
    assert _tree_structure(on_dask) == _tree_structure(in_memory)


def test_dask_dataframe_and_dask_array_with_same_partitions_match(reg_df, fast):
    df, y = reg_df
    ddf = dd.from_pandas(df, npartitions=4)
    dy = dd.from_pandas(y, npartitions=4)
    sizes = tuple(int(n) for n in ddf.map_partitions(len).compute())
    assert sum(sizes) == len(df) and len(sizes) == 4
    Xa = da.from_array(df.to_numpy(), chunks=(sizes, 4))
    ya = da.from_array(y.to_numpy(), chunks=(sizes,))
    from_frame = DaskBoostRegressor(**fast).fit(ddf, dy)
    from_array = DaskBoostRegressor(**fast).fit(Xa, ya)
    np.testing.assert_allclose(from_array.predict(df.to_numpy()), from_frame.predict(df.to_numpy()),
                               rtol=0, atol=ATOL)


@pytest.mark.parametrize("npartitions", [2, 5])
def test_partitioning_does_not_change_the_trees(reg_df, fast, npartitions):
    df, y = reg_df
    reference = DaskBoostRegressor(**fast).fit(df, y)
    ddf = dd.from_pandas(df, npartitions=npartitions)
    model = DaskBoostRegressor(**fast).fit(ddf, dd.from_pandas(y, npartitions=npartitions))
    assert model.get_booster().trees  # trained
    assert _tree_structure(model) == _tree_structure(reference)
    np.testing.assert_allclose(model.predict(df), reference.predict(df), rtol=0, atol=ATOL)


def test_dask_dataframe_with_unknown_divisions(reg_df, fast):
    df, y = reg_df
    bounds = [0, 100, 700, len(df)]
    pieces = [(df.iloc[a:b], y.iloc[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    ddf = dd.from_map(lambda p: p[0], pieces)
    dy = dd.from_map(lambda p: p[1], pieces)
    assert not ddf.known_divisions
    model = DaskBoostRegressor(**fast).fit(ddf, dy)
    reference = DaskBoostRegressor(**fast).fit(df, y)
    np.testing.assert_allclose(model.predict(df), reference.predict(df), rtol=0, atol=ATOL)


# ---- dtypes and missing values ---------------------------------------------------------

def _nullable_frame(X):
    """X (with NaN) as nullable Int64 / Float64 / boolean columns holding pd.NA."""
    def nullable(column, dtype):
        return pd.array([None if np.isnan(v) else v for v in column], dtype=dtype)
    return pd.DataFrame({
        "i": nullable(X[:, 0], "Int64"),
        "f": nullable(X[:, 1], "Float64"),
        "b": pd.array([None if np.isnan(v) else bool(v > 2) for v in X[:, 2]], dtype="boolean"),
        "g": X[:, 3],
    })


def _float_twin(X):
    """The float64 NaN-coded equivalent of ``_nullable_frame(X)``."""
    out = X.copy()
    out[:, 2] = np.where(np.isnan(X[:, 2]), np.nan, (X[:, 2] > 2).astype(np.float64))
    return out


def test_nullable_dtypes_with_pd_na_equal_float_with_nan(reg_xy, fast):
    X, y = reg_xy
    Xm = _with_missing(X)
    nullable = _nullable_frame(Xm)
    assert nullable["i"].dtype == "Int64" and nullable["f"].dtype == "Float64"
    assert nullable["b"].dtype == "boolean"
    assert all(nullable[c].isna().any() for c in "ifb")
    floats = _float_twin(Xm)

    from_na = DaskBoostRegressor(**fast).fit(nullable, y)
    from_nan = DaskBoostRegressor(**fast).fit(floats, y)
    expected = from_nan.predict(floats)
    assert np.array_equal(from_na.predict(nullable), expected)
    # prediction also treats pd.NA as missing
    assert np.array_equal(from_nan.predict(nullable), expected)
    # missing values are not silently turned into a value: rows with NA in a feature used
    # by a split follow the default direction, which differs from at least one value
    assert not np.array_equal(expected, from_nan.predict(np.nan_to_num(floats, nan=0.0)))


def test_nullable_dtypes_in_dask_dataframe(reg_xy, fast):
    X, y = reg_xy
    Xm = _with_missing(X)
    nullable = _nullable_frame(Xm)
    floats = _float_twin(Xm)
    ddf = dd.from_pandas(nullable, npartitions=3)
    assert ddf.dtypes["i"] == "Int64"
    model = DaskBoostRegressor(**fast).fit(ddf, dd.from_pandas(pd.Series(y), npartitions=3))
    reference = DaskBoostRegressor(**fast).fit(floats, y)
    np.testing.assert_allclose(model.predict(ddf).compute().to_numpy(), reference.predict(floats),
                               rtol=0, atol=ATOL)


def test_none_in_nullable_float_is_missing(fast):
    rng = np.random.default_rng(3)
    values = rng.integers(0, 4, size=400).astype(np.float64)
    y = values + rng.normal(scale=0.1, size=400)
    holes = rng.random(400) < 0.2
    y[holes] = 10.0  # missing rows have their own target: the model must separate them
    with_none = pd.DataFrame({"x": pd.array([None if h else v for v, h in zip(values, holes)],
                                            dtype="Float64")})
    with_nan = np.where(holes, np.nan, values).reshape(-1, 1)
    a = DaskBoostRegressor(n_estimators=10, max_depth=2).fit(with_none, y)
    b = DaskBoostRegressor(n_estimators=10, max_depth=2).fit(with_nan, y)
    assert np.array_equal(a.predict(with_none), b.predict(with_nan))
    np.testing.assert_allclose(a.predict(with_none)[holes], 10.0, atol=0.5)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "uint16", "float32"])
def test_plain_numeric_and_bool_columns(reg_xy, fast, dtype):
    X, y = reg_xy
    if dtype == "bool":
        X = (X > 2).astype(np.float64)
    typed = pd.DataFrame({f"c{j}": X[:, j].astype(dtype) for j in range(X.shape[1])})
    assert all(str(t) == dtype for t in typed.dtypes)
    reference = DaskBoostRegressor(**fast).fit(X, y)
    model = DaskBoostRegressor(**fast).fit(typed, y)
    assert np.array_equal(model.predict(typed), reference.predict(X))
    # numpy arrays of that dtype too
    model_np = DaskBoostRegressor(**fast).fit(X.astype(dtype), y)
    assert np.array_equal(model_np.predict(X.astype(dtype)), reference.predict(X))


def test_mixed_dtype_frame(reg_xy, fast):
    X, y = reg_xy
    mixed = pd.DataFrame({"a": X[:, 0].astype(np.int16), "b": X[:, 1] > 2,
                          "c": X[:, 2].astype(np.float32), "d": X[:, 3]})
    floats = mixed.to_numpy(dtype=np.float64)
    a = DaskBoostRegressor(**fast).fit(mixed, y)
    b = DaskBoostRegressor(**fast).fit(floats, y)
    assert np.array_equal(a.predict(mixed), b.predict(floats))


# ---- empty partitions ------------------------------------------------------------------

def test_empty_partition_from_filtering(reg_df, fast):
    df, y = reg_df
    ddf = dd.from_pandas(df, npartitions=3)
    dy = dd.from_pandas(y, npartitions=3)
    lo, hi = ddf.divisions[1], ddf.divisions[2]

    def drop_middle(part):
        return part[(part.index < lo) | (part.index >= hi)]

    ddf_e, dy_e = ddf.map_partitions(drop_middle), dy.map_partitions(drop_middle)
    lengths = [len(p) for p in ddf_e.partitions]
    assert ddf_e.npartitions == 3 and lengths[1] == 0 and lengths[0] > 0 and lengths[2] > 0

    keep = (df.index < lo) | (df.index >= hi)
    model = DaskBoostRegressor(**fast).fit(ddf_e, dy_e)
    reference = DaskBoostRegressor(**fast).fit(df[keep], y[keep])
    assert _tree_structure(model) == _tree_structure(reference)
    np.testing.assert_allclose(model.predict(df), reference.predict(df), rtol=0, atol=ATOL)

    # predicting on the collection with the empty partition keeps its layout
    pred = model.predict(ddf_e)
    assert pred.npartitions == 3
    computed = pred.compute()
    assert len(computed) == keep.sum()
    assert computed.index.equals(df.index[keep])


def test_empty_partitions_from_map(reg_df, fast):
    df, y = reg_df
    empty_x, empty_y = df.iloc[:0], y.iloc[:0]
    pieces = [(empty_x, empty_y), (df.iloc[:500], y.iloc[:500]), (empty_x, empty_y),
              (df.iloc[500:], y.iloc[500:]), (empty_x, empty_y)]
    ddf = dd.from_map(lambda p: p[0], pieces)
    dy = dd.from_map(lambda p: p[1], pieces)
    model = DaskBoostRegressor(**fast).fit(ddf, dy)
    without = DaskBoostRegressor(**fast).fit(
        dd.from_map(lambda p: p[0], [pieces[1], pieces[3]]),
        dd.from_map(lambda p: p[1], [pieces[1], pieces[3]]))
    assert _tree_structure(model) == _tree_structure(without)
    np.testing.assert_allclose(model.predict(df), without.predict(df), rtol=0, atol=ATOL)


def test_empty_partition_classifier_with_string_labels(clf_xy, fast):
    X, y = clf_xy
    labels = np.where(y == 1, "yes", "no")
    df = pd.DataFrame(X, columns=list("abcd"))
    s = pd.Series(labels)
    pieces = [(df.iloc[:0], s.iloc[:0]), (df.iloc[:600], s.iloc[:600]), (df.iloc[600:], s.iloc[600:])]
    model = DaskBoostClassifier(**fast).fit(dd.from_map(lambda p: p[0], pieces),
                                            dd.from_map(lambda p: p[1], pieces))
    reference = DaskBoostClassifier(**fast).fit(df, labels)
    assert model.classes_.tolist() == ["no", "yes"]
    np.testing.assert_allclose(model.predict_proba(df), reference.predict_proba(df), rtol=0, atol=ATOL)
    assert np.array_equal(model.predict(df), reference.predict(df))


# ---- dask Arrays -----------------------------------------------------------------------

def test_dask_array_with_several_column_chunks(reg_xy, fast):
    X, y = reg_xy
    row_chunks = (300, 300, 600)
    Xa = da.from_array(X, chunks=(row_chunks, (1, 2, 1)))
    assert len(Xa.chunks[1]) == 3
    ya = da.from_array(y, chunks=(row_chunks,))
    model = DaskBoostRegressor(**fast).fit(Xa, ya)
    assert model.n_features_in_ == 4
    single = DaskBoostRegressor(**fast).fit(da.from_array(X, chunks=(row_chunks, 4)), ya)
    assert np.array_equal(model.predict(X), single.predict(X))
    reference = DaskBoostRegressor(**fast).fit(X, y)
    np.testing.assert_allclose(model.predict(X), reference.predict(X), rtol=0, atol=ATOL)


def test_dask_array_weights_with_matching_chunks(reg_xy, fast):
    X, y = reg_xy
    w = np.random.default_rng(5).integers(1, 4, size=len(y)).astype(np.float64)
    chunks = (400, 400, 400)
    model = DaskBoostRegressor(**fast).fit(da.from_array(X, chunks=(chunks, 4)),
                                           da.from_array(y, chunks=(chunks,)),
                                           sample_weight=da.from_array(w, chunks=(chunks,)))
    reference = DaskBoostRegressor(**fast).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(model.predict(X), reference.predict(X), rtol=0, atol=ATOL)


# ---- prediction output types -----------------------------------------------------------

def test_predict_in_memory_returns_numpy(reg_df, fast):
    df, y = reg_df
    model = DaskBoostRegressor(**fast).fit(df, y)
    for X in (df, df.to_numpy()):
        pred = model.predict(X)
        assert type(pred) is np.ndarray
        assert pred.shape == (len(df),) and pred.dtype == np.float64


def test_predict_dask_dataframe_keeps_index_and_partitions(reg_df, fast):
    df, y = reg_df
    df = df.set_index(pd.Index(np.arange(len(df)) * 3 + 10, name="row"))
    y = pd.Series(y.to_numpy(), index=df.index)
    ddf = dd.from_pandas(df, npartitions=4)
    model = DaskBoostRegressor(**fast).fit(ddf, dd.from_pandas(y, npartitions=4))
    pred = model.predict(ddf)
    assert isinstance(pred, dd.Series)
    assert pred.npartitions == ddf.npartitions
    assert tuple(pred.divisions) == tuple(ddf.divisions)
    computed = pred.compute()
    assert computed.index.equals(df.index)
    np.testing.assert_array_equal(computed.to_numpy(), model.predict(df))
    margin = model.predict(ddf, output_margin=True).compute()
    np.testing.assert_array_equal(margin.to_numpy(), computed.to_numpy())  # identity link


def test_classifier_predictions_on_dask_dataframe(clf_xy, fast):
    X, y = clf_xy
    labels = np.where(y == 1, "yes", "no")
    df = pd.DataFrame(X, columns=list("abcd"), index=pd.Index(np.arange(len(X)) + 500))
    ddf = dd.from_pandas(df, npartitions=3)
    model = DaskBoostClassifier(**fast).fit(ddf, dd.from_pandas(pd.Series(labels, index=df.index),
                                                                npartitions=3))
    proba = model.predict_proba(ddf)
    assert isinstance(proba, dd.DataFrame) and proba.npartitions == 3
    proba = proba.compute()
    assert proba.index.equals(df.index)
    assert proba.shape == (len(df), 2) and list(proba.columns) == ["no", "yes"]
    np.testing.assert_array_equal(proba.to_numpy(), model.predict_proba(df))
    # integer classes name their columns as pandas and xgboost.dask do: proba[1]
    numeric = DaskBoostClassifier(**fast).fit(ddf, dd.from_pandas(
        pd.Series(y, index=df.index), npartitions=3))
    np.testing.assert_array_equal(numeric.predict_proba(ddf)[1].compute().to_numpy(),
                                  numeric.predict_proba(df)[:, 1])
    pred = model.predict(ddf)
    assert isinstance(pred, dd.Series) and pred.npartitions == 3
    pred = pred.compute()
    assert pred.index.equals(df.index)
    assert pred.tolist() == model.predict(df).tolist()


def test_predict_dask_array_returns_dask_array_with_same_row_chunks(reg_xy, fast):
    X, y = reg_xy
    chunks = (500, 200, 500)
    Xa = da.from_array(X, chunks=(chunks, (2, 2)))
    model = DaskBoostRegressor(**fast).fit(Xa, da.from_array(y, chunks=(chunks,)))
    pred = model.predict(Xa)
    assert isinstance(pred, da.Array)
    assert pred.ndim == 1 and pred.chunks == (chunks,)
    np.testing.assert_array_equal(pred.compute(), model.predict(X))


def test_classifier_predict_on_dask_array(clf_xy, fast):
    X, y = clf_xy
    chunks = (600, 600)
    Xa = da.from_array(X, chunks=(chunks, 4))
    model = DaskBoostClassifier(**fast).fit(Xa, da.from_array(y, chunks=(chunks,)))
    proba = model.predict_proba(Xa)
    assert isinstance(proba, da.Array) and proba.chunks == (chunks, (2,))
    np.testing.assert_array_equal(proba.compute(), model.predict_proba(X))
    pred = model.predict(Xa)
    assert isinstance(pred, da.Array) and pred.chunks == (chunks,)
    np.testing.assert_array_equal(pred.compute(), model.predict(X))


# ---- a DataFrame partition read in pieces (scan and bin passes) --------------------------

def _frame_of_every_kind(n=1000, seed=3):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n)
    values[rng.random(n) < 0.2] = np.nan
    return pd.DataFrame({
        "f32": values.astype(np.float32),
        "f64": values * 3.0,
        "i16": rng.integers(-5, 5, n).astype(np.int16),
        "flag": rng.random(n) < 0.5,
        "nullable": pd.array(np.where(np.isnan(values), None, values), dtype="Float64"),
        "city": pd.Categorical(rng.choice(["b", "a", None, "c"], n)),
    })


@pytest.mark.parametrize("columns", [["f32"], ["f32", "f64", "i16", "flag", "nullable"],
                                     ["f32", "city", "f64"]])
def test_frame_rows_pieces_equal_the_whole_conversion(columns):
    """Columns taken one at a time, of the whole frame and of its row blocks, hold
    exactly the values (and dtype) ``feature_block`` gives the whole frame: the pieces a
    scan sketches and a bin pass bins are those of the whole partition."""
    from daskboost.data import FrameRows, feature_block
    frame = _frame_of_every_kind()[columns]
    encoders = ({columns.index("city"): pd.Index(["a", "c"])} if "city" in columns
                else None)
    whole = feature_block(frame, encoders)
    rows = FrameRows(frame, encoders)
    assert rows.shape == whole.shape and rows.dtype == whole.dtype
    for f in range(whole.shape[1]):
        column = rows.column(f)
        assert column.dtype == whole.dtype
        np.testing.assert_array_equal(column, whole[:, f])  # NaN where NaN
        pieces = [rows.rows(slice(start, start + 300)).column(f)
                  for start in range(0, len(frame), 300)]
        assert all(piece.dtype == whole.dtype for piece in pieces)
        np.testing.assert_array_equal(np.concatenate(pieces), whole[:, f])
        order = np.random.default_rng(f).permutation(len(frame))  # rows picked by number
        np.testing.assert_array_equal(rows.rows(order).column(f), whole[order, f])


def test_frame_rows_sketch_and_codes_equal_those_of_the_array():
    """The scan's summaries column by column and the bin pass's codes column by column,
    of the whole frame and of row blocks, equal those of the whole float array."""
    from daskboost import partition
    from daskboost.binning import BinMapper
    from daskboost.data import FrameRows, feature_block
    frame = _frame_of_every_kind(n=5000)[["f32", "f64", "i16", "flag", "nullable"]]
    X = feature_block(frame)
    weights = np.random.default_rng(1).random(len(frame))
    for w in (None, weights):
        by_column = partition.summarize_features(FrameRows(frame), w, 64)
        whole = partition.summarize_features(X, w, 64)
        for a, b in zip(by_column, whole):
            for field in ("values", "rmin", "rmax", "wmin"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    mapper = BinMapper.from_summaries(partition.summarize_features(X, None, 64), 32)
    codes = partition.binned_codes(FrameRows(frame), mapper, None)
    np.testing.assert_array_equal(codes, mapper.transform(X))
    blocks = [partition._binned_rows(FrameRows(frame), mapper, start, min(start + 777, 5000))
              for start in range(0, 5000, 777)]
    np.testing.assert_array_equal(np.concatenate(blocks), mapper.transform(X))
