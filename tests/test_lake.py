"""A parquet lake read by daskboost a column at a time (``daskboost.lake``): the same
values, partitions and models as dask's reading, and dask's reading wherever the lake
or the selection is not plain."""

import pickle
import shutil

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor, lake
from daskboost.data import FrameRows, feature_block, partition_input

FEATURES = ["f32", "f64", "i16", "i64_nulls", "flag", "flag_nulls"]


def _write_lake(directory, n_files=3, rows=700, row_groups=1, seed=0):
    """Files of every numeric column kind, NaN and nulls included, an int label, a
    weight column and a string column."""
    rng = np.random.default_rng(seed)
    directory.mkdir()
    for i in range(n_files):
        values = rng.normal(size=rows)
        missing = rng.random(rows) < 0.1
        values[missing] = np.nan
        table = pa.table({
            "f32": pa.array(values.astype(np.float32)),
            "f64": pa.array(values * 3.0 + 1e-9 * i),
            "i16": pa.array(rng.integers(-5, 5, rows).astype(np.int16)),
            "i64_nulls": pa.array(np.where(missing, None, rng.integers(0, 2 ** 60, rows)).tolist(),
                                  type=pa.int64()),
            "flag": pa.array(rng.random(rows) < 0.5),
            "flag_nulls": pa.array([None if m else bool(b) for m, b in
                                    zip(missing, rng.random(rows) < 0.3)], type=pa.bool_()),
            "city": pa.array(rng.choice(["a", "b", "c"], rows)),
            "label": pa.array((values > 0).astype(np.int8)),
            "weight": pa.array(rng.random(rows) + 0.5),
        })
        pq.write_table(table, directory / f"part-{i}.parquet",
                       row_group_size=-(-rows // row_groups))
    return str(directory)


@pytest.fixture
def ungrouped(monkeypatch):
    """The lake's partitions as dask reads them: small files not read together
    (``lake._grouped``), so that values and models compare with dask's reading."""
    monkeypatch.setattr("daskboost.lake._grouped", lambda partitions, rows, count: partitions)


def _uses_lake(data):
    return data.x_keys[0][0].startswith("daskboost-lake-")


def _computed(data, keys, i):
    return dask.get(data.graph, keys[i])


@pytest.mark.parametrize("row_groups", [1, 3])
@pytest.mark.parametrize("whole_read", [True, False])
def test_lake_columns_hold_what_dasks_partitions_give(tmp_path, ungrouped, monkeypatch,
                                                      row_groups, whole_read):
    """Each partition's columns, read one at a time from its file (or all at once, a
    small partition), equal what ``FrameRows`` gives of dask's partition (values,
    dtype, NaN for nulls; integers above 2**53 rounded as numpy rounds them); y and the
    weights equal dask's columns."""
    monkeypatch.setattr(lake, "WHOLE_READ_VALUES", 2 ** 22 if whole_read else 0)
    path = _write_lake(tmp_path / "lake", row_groups=row_groups)
    ddf = dd.read_parquet(path, split_row_groups=row_groups > 1)
    for columns in (FEATURES, ["f32"], ["f32", "i16"]):
        data = partition_input(ddf[columns], ddf["label"], sample_weight=ddf["weight"])
        assert _uses_lake(data)
        # dask's partitions of what the passes read (it may read files together)
        through_dask = ddf[columns].assign(label=ddf["label"], weight=ddf["weight"]).optimize()
        assert data.n_partitions == through_dask.npartitions
        for i in range(data.n_partitions):
            whole = through_dask.get_partition(i).compute()
            frame = whole[columns]
            expected = FrameRows(frame)
            got = _computed(data, data.x_keys, i)
            assert got.shape == expected.shape and got.dtype == expected.dtype
            for f in range(len(columns)):
                column = got.column(f)
                assert column.dtype == expected.dtype
                np.testing.assert_array_equal(column, expected.column(f))
            np.testing.assert_array_equal(feature_block(got), feature_block(frame))
            np.testing.assert_array_equal(got[5:17], feature_block(frame)[5:17])
            for keys, name in ((data.y_keys, "label"), (data.w_keys, "weight")):
                pd.testing.assert_series_equal(_computed(data, keys, i).reset_index(drop=True),
                                               whole[name].reset_index(drop=True))


def test_lake_columns_pickle_without_an_open_file(tmp_path):
    """A partition's X travels to a cluster worker as its files and columns, without
    the tables it may hold."""
    path = _write_lake(tmp_path / "lake")
    ddf = dd.read_parquet(path)
    data = partition_input(ddf[FEATURES], ddf["label"])
    columns = _computed(data, data.x_keys, 0)
    values = columns.to_numpy()  # (a small partition: its tables are now held)
    assert columns._tables is not None
    again = pickle.loads(pickle.dumps(columns))
    assert again._tables is None
    np.testing.assert_array_equal(again.to_numpy(), values)


def _by_the_reader_then_by_dask(monkeypatch, reader, fits):
    """``fits()`` with daskboost's ``reader`` (``lake_input`` or ``lake_frame_input``)
    reading the lake at every fit, then with dask reading it: both results."""
    taken, real = [], getattr(lake, reader)
    monkeypatch.setattr(f"daskboost.data.{reader}",
                        lambda *a: taken.append(real(*a)) or taken[-1])
    by_the_reader = fits()
    assert taken and all(t is not None for t in taken)
    monkeypatch.setattr(f"daskboost.data.{reader}", lambda *a: None)
    return by_the_reader, fits()


@pytest.mark.parametrize("budget", [None, 0])
def test_a_fit_from_the_lake_equals_the_fit_through_dasks_reading(tmp_path, monkeypatch,
                                                                 ungrouped, budget):
    """The model is the same, bit for bit, whether the passes read the lake's columns
    themselves or take dask's partitions: in memory and spilled to the block store."""
    path = _write_lake(tmp_path / "lake", n_files=4, rows=3000)
    ddf = dd.read_parquet(path)
    params = dict(n_estimators=4, max_depth=4, max_bin=32)
    if budget is not None:
        params.update(memory_budget=budget, cache_dir=str(tmp_path / "cache"))

    def fit():
        return DaskBoostClassifier(**params).fit(
            ddf[FEATURES], ddf["label"], sample_weight=ddf["weight"],
            eval_set=[(ddf[FEATURES], ddf["label"])]).get_booster().to_dict()

    from_lake, through_dask = _by_the_reader_then_by_dask(monkeypatch, "lake_input", fit)
    assert from_lake == through_dask


def test_anything_but_a_plain_read_stays_with_dask(tmp_path):
    """Filters, base margins, y from another lake, a derived column or derived
    features, a file without a column: dask's reading."""
    path = _write_lake(tmp_path / "lake")
    copy = shutil.copytree(path, tmp_path / "copy")
    ddf = dd.read_parquet(path)
    label = ddf["label"]
    cases = {
        "filters": (dd.read_parquet(path, filters=[("f64", ">", -100.0)])[FEATURES],
                    dd.read_parquet(path, filters=[("f64", ">", -100.0)])["label"], {}),
        "base margin": (ddf[FEATURES], label, {"base_margin": ddf["f64"]}),
        "another lake": (ddf[FEATURES], dd.read_parquet(copy)["label"], {}),
        "derived column": (ddf[FEATURES], label + 0, {}),
        "derived features": (ddf[FEATURES] * 2, label, {}),
    }
    for case, (X, y, extra) in cases.items():
        data = partition_input(X, y, enable_categorical=True, **extra)
        assert not _uses_lake(data), case
    # a file without one of the columns (dask's reading fills it with nulls)
    table = pq.read_table(f"{path}/part-1.parquet").drop_columns(["i16"])
    pq.write_table(table, f"{path}/part-1.parquet")
    assert _uses_lake(partition_input(ddf[["f32", "f64"]], label))
    assert not _uses_lake(partition_input(ddf[["f32", "i16"]], label))


def test_a_selection_dask_reads_in_fused_partitions_is_read_in_those_partitions(
        tmp_path, monkeypatch, ungrouped):
    """A narrow selection of a wide lake: dask's optimiser reads several files as one
    partition; the lake's partitions are those same files, in order, and the model is
    the one through dask's reading."""
    rng = np.random.default_rng(0)
    directory = tmp_path / "wide"
    directory.mkdir()
    for i in range(8):
        pq.write_table(pa.table({f"c{j:02d}": rng.normal(size=200) for j in range(40)}
                                | {"label": rng.normal(size=200)}),
                       directory / f"part-{i}.parquet")
    ddf = dd.read_parquet(str(directory))
    X, y = ddf[["c00", "c01"]], ddf["label"]
    data = partition_input(X, y)
    assert _uses_lake(data) and 1 < data.n_partitions < 8  # (what this test is about)
    through_dask = X.assign(label=y).optimize()
    assert through_dask.npartitions == data.n_partitions
    for i in range(data.n_partitions):
        frame = through_dask.get_partition(i).compute()
        np.testing.assert_array_equal(_computed(data, data.x_keys, i).to_numpy(),
                                      feature_block(frame[["c00", "c01"]]))
        np.testing.assert_array_equal(_computed(data, data.y_keys, i), frame["label"])

    def fit():
        return DaskBoostRegressor(n_estimators=3, max_depth=3).fit(X, y).get_booster().to_dict()

    from_lake = fit()
    monkeypatch.setattr("daskboost.data.lake_input", lambda *a: None)
    assert not _uses_lake(partition_input(X, y))
    assert from_lake == fit()


def test_regression_from_a_lake_on_a_cluster_equals_the_threaded_fit(tmp_path):
    """The lake's pieces are read on the workers: the same model as threaded."""
    distributed = pytest.importorskip("distributed")
    path = _write_lake(tmp_path / "lake", n_files=4, rows=2000)
    ddf = dd.read_parquet(path)

    def fit(**extra):
        model = DaskBoostRegressor(n_estimators=3, max_depth=3, max_bin=16, **extra)
        return model.fit(ddf[FEATURES], ddf["weight"]).get_booster().to_dict()

    assert _uses_lake(partition_input(ddf[FEATURES], ddf["weight"]))
    with dask.config.set(scheduler="threads"):
        threaded = fit()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        assert fit(memory_budget=0, cache_dir=str(tmp_path / "cache")) == threaded


def test_files_typing_a_column_differently_read_as_the_lakes_schema(tmp_path, ungrouped):
    """Files that type a column differently (int32 / int64 features, a float32 feature
    in one file and float64 in the other, float64 / float32 labels), read one file a
    partition or several fused: the values and dtypes of dask's reading, which reads
    each file with its own types and concatenates the frames."""
    directory = tmp_path / "mixed"
    directory.mkdir()
    rng = np.random.default_rng(5)
    kinds = [(pa.int32(), pa.float32(), pa.float64()), (pa.int64(), pa.float64(), pa.float32()),
             (pa.int32(), pa.float32(), pa.float32()), (pa.int64(), pa.float32(), pa.float64())]
    for i, (int_type, b_type, label_type) in enumerate(kinds):
        pq.write_table(pa.table({
            "a": pa.array(rng.integers(-1000, 1000, 300), type=int_type),
            "b": pa.array(rng.normal(size=300), type=b_type),
            "label": pa.array(rng.normal(size=300), type=label_type),
            **{f"pad{j}": rng.normal(size=300) for j in range(4)}}),
            directory / f"part-{i}.parquet")
    ddf = dd.read_parquet(str(directory))
    for features in (["a", "b"], ["b"], ["a", "b", "pad0", "pad1", "pad2", "pad3"]):
        data = partition_input(ddf[features], ddf["label"])
        assert _uses_lake(data)
        through_dask = ddf[features].assign(label=ddf["label"]).optimize()
        assert through_dask.npartitions == data.n_partitions
        for i in range(data.n_partitions):
            whole = through_dask.get_partition(i).compute()
            X = _computed(data, data.x_keys, i)
            expected = feature_block(whole[features])
            assert X.dtype == expected.dtype
            np.testing.assert_array_equal(X.to_numpy(), expected)
            pd.testing.assert_series_equal(
                _computed(data, data.y_keys, i).reset_index(drop=True),
                whole["label"].reset_index(drop=True))


def _fits_of_every_kind(X, y, base, first):
    """approx, lossguide, training continued from ``first`` and cross-validation on
    (X, y) with parameters ``base``: their models, and ``cv``'s frame, as dicts."""
    import daskboost
    return [
        DaskBoostClassifier(tree_method="approx", **base).fit(X, y).get_booster().to_dict(),
        DaskBoostClassifier(grow_policy="lossguide", max_leaves=5, **base)
        .fit(X, y).get_booster().to_dict(),
        DaskBoostClassifier(**base).fit(X, y, xgb_model=first.get_booster())
        .get_booster().to_dict(),
        daskboost.cv({"objective": "binary:logistic", "max_depth": 3, "max_bin": 16},
                     X, y, nfold=3, num_boost_round=3, metrics="logloss").to_dict(),
    ]


def test_every_kind_of_fit_from_a_lake_equals_the_fit_through_dasks_reading(
        tmp_path, monkeypatch, ungrouped):
    """approx (the raw partitions re-binned), lossguide, continued training (the old
    model's margins from a partition's whole X), cross-validation, and a lake with an
    empty file: the same models and metrics whether the lake's columns are read by
    daskboost or by dask."""
    path = _write_lake(tmp_path / "lake", n_files=3, rows=1500)
    empty = pq.read_table(f"{path}/part-0.parquet").slice(0, 0)
    pq.write_table(empty, f"{path}/part-9-empty.parquet")
    ddf = dd.read_parquet(path)
    X, y = ddf[FEATURES], ddf["label"]
    base = dict(n_estimators=3, max_depth=3, max_bin=16)

    def fits():
        return _fits_of_every_kind(X, y, base, DaskBoostClassifier(**base).fit(X, y))

    assert _uses_lake(partition_input(X, y))
    from_lake = fits()
    monkeypatch.setattr("daskboost.data.lake_input", lambda *a: None)
    assert fits() == from_lake


def test_small_files_are_read_together_in_near_equal_groups():
    """Consecutive partitions go together, ``block_count(rows)`` groups, each ending
    at the partition boundary nearest its share of the rows; never more groups than
    partitions."""
    from daskboost.data import row_block_count
    parts = [(lake.ParquetPiece(f"p{i}", None),) for i in range(5)]
    rows = [50_000, 10_000, 10_000, 10_000, 100_000]
    grouped = lake._grouped(parts, rows, row_block_count)  # 180,000 rows: 2 groups
    assert grouped == [sum(parts[:4], ()), parts[4]]
    assert lake._grouped(parts, [1000] * 5, row_block_count) == [sum(parts, ())]
    assert lake._grouped(parts, [200_000] * 5, row_block_count) == parts
    assert lake._grouped(parts[:1], [10], row_block_count) == parts[:1]


def test_a_lake_dask_reads_has_its_small_files_read_together(tmp_path, monkeypatch):
    """A lake that dask reads (here: not read as frames) of six 30,000-row files: read
    in the two partitions in-memory data of 180,000 rows is cut into, whole files of
    dask's partitions each, their frames as dask reads them, in order; the fit is the
    fit of those same frames in memory, byte for byte (weights and an eval set
    included)."""
    from daskboost.data import row_block_count
    monkeypatch.setattr("daskboost.data.lake_frame_input", lambda *a: None)
    path = _write_lake(tmp_path / "lake", n_files=6, rows=30_000)
    ddf = dd.read_parquet(path)
    columns = ["f32", "f64", "i16", "flag", "city"]
    data = partition_input(ddf[columns], ddf["label"], sample_weight=ddf["weight"],
                           enable_categorical=True)
    assert not _uses_lake(data) and ddf.npartitions == 6
    assert data.n_partitions == row_block_count(180_000) == 2
    whole = ddf.compute().reset_index(drop=True)
    frames, start = [], 0
    for i in range(data.n_partitions):
        X = _computed(data, data.x_keys, i)
        assert len(X) % 30_000 == 0  # whole files
        rows = whole.iloc[start:start + len(X)].reset_index(drop=True)
        pd.testing.assert_frame_equal(X.reset_index(drop=True), rows[columns])
        np.testing.assert_array_equal(_computed(data, data.w_keys, i).to_numpy().ravel(),
                                      rows["weight"].to_numpy())
        frames.append(rows)
        start += len(X)
    assert start == len(whole) == 180_000
    in_memory = dd.from_delayed([dask.delayed(f) for f in frames], meta=whole.iloc[:0])
    fits = []
    for source in (ddf, in_memory):
        fits.append(DaskBoostClassifier(n_estimators=3, max_depth=4).fit(
            source[columns], source["label"], sample_weight=source["weight"],
            eval_set=[(source[columns], source["label"])]))
    assert fits[0].get_booster().to_dict() == fits[1].get_booster().to_dict()
    assert fits[0].evals_result() == fits[1].evals_result()


def test_a_lake_of_small_files_reads_them_together(tmp_path):
    """Six files of 30,000 rows (180,000 in all) are read as the two partitions
    in-memory data of that size would be cut into, three whole files each, holding
    the rows dask reads from them, in order; the fit works on them."""
    from daskboost.data import row_block_count
    path = _write_lake(tmp_path / "lake", n_files=6, rows=30_000)
    ddf = dd.read_parquet(path)
    data = partition_input(ddf[FEATURES], ddf["label"], sample_weight=ddf["weight"])
    assert _uses_lake(data) and ddf.npartitions == 6
    assert data.n_partitions == row_block_count(180_000) == 2
    whole = ddf.compute().reset_index(drop=True)
    start = 0
    for i in range(data.n_partitions):
        X = _computed(data, data.x_keys, i)
        assert [piece.path.rsplit("/", 1)[1] for piece in X.pieces] == [
            f"part-{j}.parquet" for j in range(3 * i, 3 * i + 3)]
        rows = whole.iloc[start:start + X.shape[0]]
        np.testing.assert_array_equal(X.to_numpy(), feature_block(rows[FEATURES]))
        for keys, name in ((data.y_keys, "label"), (data.w_keys, "weight")):
            np.testing.assert_array_equal(_computed(data, keys, i).to_numpy(),
                                          rows[name].to_numpy())
        start += X.shape[0]
    assert start == len(whole)
    model = DaskBoostClassifier(n_estimators=2, max_depth=3).fit(ddf[FEATURES], ddf["label"])
    assert model.n_features_in_ == len(FEATURES)


STRING_FEATURES = ["f64", "i16", "city", "shop", "code"]


def _write_string_lake(directory, n_files=3, rows=700, seed=0):
    """Files with string features: ``city`` (strings with nulls), ``shop`` (a pandas
    ``category`` column, stored as a dictionary, with a category no row has) and
    ``code`` (large strings), numeric features, an int label and a weight column."""
    rng = np.random.default_rng(seed)
    directory.mkdir()
    for i in range(n_files):
        city = rng.choice(["oslo", "rome", "lima", "kyiv"], rows).astype(object)
        city[rng.random(rows) < 0.1] = None
        shop = pd.Categorical(rng.choice(["s1", "s2", "s3"], rows),
                              categories=["s0", "s1", "s2", "s3"])
        code = rng.choice([f"c{j}" for j in range(3 + i)], rows)  # (more codes in later files)
        f64 = rng.normal(size=rows)
        table = pa.Table.from_pandas(pd.DataFrame({
            "f64": f64, "i16": rng.integers(-5, 5, rows).astype(np.int16),
            "city": city, "shop": shop,
            "label": ((f64 > 0) ^ (city == "rome")).astype(np.int8),
            "weight": rng.random(rows) + 0.5}), preserve_index=False)
        table = table.append_column("code", pa.array(code, type=pa.large_string()))
        pq.write_table(table, directory / f"part-{i}.parquet")
    return str(directory)


def _reads_frames(data):
    return any(key[0].endswith("-frames") for key in data.graph)


def _as_values(series):
    """A column's values as Python objects, None for missing (strings and categories
    compare by value)."""
    values = series.astype(object).to_numpy()
    return [None if pd.isna(v) else v for v in values]


@pytest.mark.parametrize("grouped", [True, False])
def test_a_lake_with_string_features_is_read_as_frames_holding_dasks_values(
        tmp_path, monkeypatch, grouped):
    """A plain read with string features is read by daskboost, a frame per partition:
    the partitions dask's reading would make (small files read together), each
    column the values dask gives (string features as ``category`` columns of the
    same strings, nulls missing; numbers with their dtypes), y and weights dask's."""
    if not grouped:
        monkeypatch.setattr("daskboost.lake._grouped", lambda partitions, rows, count: partitions)
    path = _write_string_lake(tmp_path / "lake")
    ddf = dd.read_parquet(path)
    data = partition_input(ddf[STRING_FEATURES], ddf["label"], sample_weight=ddf["weight"],
                           enable_categorical=True)
    assert _uses_lake(data) and _reads_frames(data)
    assert data.n_partitions == (1 if grouped else 3)
    whole = ddf.compute().reset_index(drop=True)
    start = 0
    for i in range(data.n_partitions):
        X = _computed(data, data.x_keys, i)
        assert list(X.columns) == STRING_FEATURES
        rows = whole.iloc[start:start + len(X)].reset_index(drop=True)
        for column in STRING_FEATURES:
            if column in ("f64", "i16"):
                pd.testing.assert_series_equal(X[column], rows[column])
            else:
                assert isinstance(X[column].dtype, pd.CategoricalDtype), column
                assert _as_values(X[column]) == _as_values(rows[column]), column
        for keys, name in ((data.y_keys, "label"), (data.w_keys, "weight")):
            pd.testing.assert_series_equal(_computed(data, keys, i), rows[name])
        start += len(X)
    assert start == len(whole)


def test_every_kind_of_fit_from_a_lake_read_as_frames_equals_the_fit_through_dask(
        tmp_path, monkeypatch):
    """Weights and an eval set, approx, lossguide, continued training and
    cross-validation, in memory and spilled: the same models and metrics whether
    daskboost reads the string lake's frames or dask does; a prediction on the lake
    too."""
    path = _write_string_lake(tmp_path / "lake", rows=1500)
    ddf = dd.read_parquet(path)
    X, y, w = ddf[STRING_FEATURES], ddf["label"], ddf["weight"]
    base = dict(n_estimators=3, max_depth=3, max_bin=16, max_cat_to_onehot=2)

    def fits():
        first = DaskBoostClassifier(**base).fit(X, y, sample_weight=w, eval_set=[(X, y)])
        spilled = DaskBoostClassifier(memory_budget=0, cache_dir=str(tmp_path / "cache"),
                                      **base).fit(X, y, sample_weight=w)
        return [first.get_booster().to_dict(), first.evals_result(),
                spilled.get_booster().to_dict(), *_fits_of_every_kind(X, y, base, first),
                np.asarray(first.predict_proba(X)).tolist()]

    assert any(t.categories for t in DaskBoostClassifier(**base).fit(X, y).get_booster().trees)
    from_frames, through_dask = _by_the_reader_then_by_dask(monkeypatch, "lake_frame_input",
                                                            fits)
    assert from_frames == through_dask


def test_a_string_lake_dask_must_read_stays_with_dask(tmp_path):
    """Read as frames only where the files agree: a string label, a file typing a
    string feature as large strings where another has strings, or a file without a
    column, is dask's reading."""
    path = _write_string_lake(tmp_path / "lake")
    ddf = dd.read_parquet(path)
    assert _reads_frames(partition_input(ddf[["f64", "city"]], ddf["label"],
                                         enable_categorical=True))
    assert not _uses_lake(partition_input(ddf[["f64", "city"]], ddf["code"],
                                          enable_categorical=True))
    table = pq.read_table(f"{path}/part-1.parquet")
    pq.write_table(table.set_column(table.schema.get_field_index("code"), "code",
                                    table["code"].cast(pa.string())),
                   f"{path}/part-1.parquet")
    ddf = dd.read_parquet(path)
    assert _reads_frames(partition_input(ddf[["f64", "city"]], ddf["label"],
                                         enable_categorical=True))
    assert not _uses_lake(partition_input(ddf[["f64", "code"]], ddf["label"],
                                          enable_categorical=True))
    pq.write_table(table.drop_columns(["city"]), f"{path}/part-2.parquet")
    ddf = dd.read_parquet(path)
    assert not _uses_lake(partition_input(ddf[["f64", "city"]], ddf["label"],
                                          enable_categorical=True))
