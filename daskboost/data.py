"""User input -> aligned per-partition (X, y, w) blocks, described as a raw Dask graph.

Dask DataFrames, dask Arrays (numpy or scipy.sparse chunks), pandas DataFrames/Series,
numpy arrays and scipy.sparse matrices are accepted.  Nothing here computes anything: a
``PartitionedInput`` holds a task graph and, for each partition, the keys of its X
block, its label block and its weight block; every one of those keys is defined in the
graph (``_dask_blocks``).  The graph's tasks are run later by the first pass over the
data (``partition.scan_partition``), which converts each block with the helpers at the
bottom of this module.

In-memory input (numpy, pandas, scipy.sparse) is cut into row blocks (``_row_slices``),
so it is processed like a dask collection, in parallel (numpy and pandas blocks are
views; sparse blocks are row slices of its CSR form).

Validation that needs only metadata (types, dtypes, column names, partition counts and
divisions, lengths of in-memory input) happens here, before any work.  Validation that
needs the values (labels finite, weights non-negative, partition lengths matching when
divisions are unknown) happens in the first pass, before training starts.
"""

import math
import operator
from dataclasses import dataclass, field

import dask
import numpy as np
import pandas as pd

from . import sparse
from .graphs import ref, task, value
from .lake import (ParquetColumns, lake_frame_input, lake_input, lake_partition_groups,
                   open_features, read_frames, read_series)
from .query_groups import qid_block, snap_to_groups

ROWS_PER_BLOCK = 2 ** 17
MIN_ROWS_PER_BLOCK = 2 ** 15
MAX_SPLIT_BLOCKS = 2


@dataclass
class PartitionedInput:
    """Per-partition keys of X, y and sample weights in one raw task graph."""

    graph: dict
    x_keys: list
    y_keys: list = None
    w_keys: list = None
    m_keys: list = None             # per-row starting margins (base_margin), if given
    feature_names: list = None      # list of str, or None when X has no string column names
    n_features: int = 0
    feature_types: list = None      # 'q'/'c' per feature (categorical features: issue 13)
    in_memory: bool = False
    extra: dict = field(default_factory=dict)
    q_keys: list = None             # per-row query ids (ranking: ``query_groups``), if given

    @property
    def n_partitions(self):
        return len(self.x_keys)


# dask.dataframe and dask.array are imported only for an object that is a dask collection:
# importing them (with scipy, which dask.array pulls in) took ~0.5 s of a fresh process's
# first fit on numpy data


def _is_dask_dataframe(obj):
    if not dask.is_dask_collection(obj):
        return False
    import dask.dataframe as dd
    return isinstance(obj, (dd.DataFrame, dd.Series))


def _is_dask_array(obj):
    if not dask.is_dask_collection(obj):
        return False
    import dask.array as da
    return isinstance(obj, da.Array)


def is_dask_collection(obj):
    return _is_dask_dataframe(obj) or _is_dask_array(obj)


def table_as_frame(X):
    """X as a pandas DataFrame where it is an Arrow table: pyarrow's ``Table`` or
    ``RecordBatch``, or any table that exports an Arrow stream (``__arrow_c_stream__``:
    a polars DataFrame, a DuckDB relation, ...), converted by pyarrow (``to_pandas``:
    dictionary and categorical columns become ``category``, strings stay strings, a
    missing value in an integer column makes it float with NaN).  Anything else (pandas,
    numpy, dask, scipy.sparse, a polars Series or other single column) is returned as it
    is."""
    if isinstance(X, (pd.DataFrame, pd.Series, np.ndarray)) or is_dask_collection(X) \
            or sparse.is_sparse(X) or not hasattr(X, "__arrow_c_stream__"):
        return X
    import pyarrow as pa
    if not isinstance(X, (pa.Table, pa.RecordBatch)):
        try:
            X = pa.table(X)
        except (TypeError, ValueError, pa.ArrowException):  # a stream of one column
            return X
    return X.to_pandas()


def same_input(a, b):
    """Whether ``a`` and ``b`` are the same input data: the same object (both None
    included), or dask collections of the same name (the same graph: the same
    partitions).  Arrays with equal values that are different objects are not compared
    (that would read them): the test is cheap and never wrong in saying "same"."""
    if a is b:
        return True
    if is_dask_collection(a) and is_dask_collection(b):
        return dask.base.tokenize(a) == dask.base.tokenize(b)
    return False


def _check_dtype(name, dtype):
    """Raise TypeError unless ``dtype`` is numeric or boolean (nullable ones included)."""
    ok = (pd.api.types.is_bool_dtype(dtype)
          or (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)))
    if not ok:
        raise TypeError(
            f"feature {name} has dtype {dtype}; only numeric and boolean features are supported "
            "(encode strings/categories as numbers first)"
        )


# ---- feature types (issue 13): 'q' numeric, 'c' categorical (xgboost's letters) -------

def _is_categorical_dtype(dtype):
    """pandas ``category``, strings (object, ``string``/``str``, pyarrow string,
    large_string and dictionary columns): the dtypes read as categorical features."""
    if isinstance(dtype, pd.CategoricalDtype) or dtype == object:
        return True
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa
        kind = dtype.pyarrow_dtype
        return (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_dictionary(kind))
    return pd.api.types.is_string_dtype(dtype)


def _column_type(name, dtype, enable_categorical, given):
    """'q' or 'c' for one column of dtype ``dtype`` (``given``: its feature_types entry)."""
    # (numpy's bool, integer and float dtypes first: pandas' tests cost ~10 us a column,
    # on every prediction of a frame)
    numeric = (isinstance(dtype, np.dtype) and dtype.kind in "biuf") or \
        pd.api.types.is_bool_dtype(dtype) or (
            pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype))
    if numeric:
        kind = given or "q"
    elif _is_categorical_dtype(dtype):
        if not enable_categorical:
            _check_dtype(name, dtype)  # today's error
        if given == "q":
            raise TypeError(f"feature {name} has dtype {dtype}; feature_types says 'q' "
                            "(numeric), which needs a numeric column")
        kind = "c"
    elif pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        raise TypeError(f"feature {name} has dtype {dtype}; datetime features are not supported: "
                        "convert it to numbers (e.g. seconds since an epoch) or drop the column")
    else:
        raise TypeError(f"feature {name} has dtype {dtype}; supported: numeric, boolean, "
                        "category and string columns (convert or drop it)")
    if kind == "c" and not enable_categorical:
        raise ValueError(f"feature {name} is categorical in feature_types but "
                         "enable_categorical=False")
    return kind


def _given_types(feature_types, n_features):
    if feature_types is None:
        return [None] * n_features
    types = list(feature_types)
    if len(types) != n_features or any(t not in ("q", "c") for t in types):
        raise ValueError(f"feature_types={feature_types!r} must list 'q' (numeric) or 'c' "
                         f"(categorical) for each of the {n_features} features")
    return types


def feature_types_of(X, enable_categorical=False, feature_types=None):
    """Per feature 'q' (numeric) or 'c' (categorical), from X's dtypes and the
    ``feature_types`` parameter; TypeError naming the column otherwise."""
    if isinstance(X, pd.DataFrame) or _is_dask_dataframe(X):
        given = _given_types(feature_types, len(X.columns))
        return [_column_type(f"column {column!r}", dtype, enable_categorical, g)
                for (column, dtype), g in zip(X.dtypes.items(), given)]
    given = _given_types(feature_types, int(X.shape[1]))
    _check_dtype("array", X.dtype)  # arrays: numeric; categorical through feature_types
    return [_column_type("array", X.dtype, enable_categorical, g) for g in given]


def categorical_features(types):
    """Indices of the categorical features of a ``feature_types_of`` list."""
    return tuple(f for f, t in enumerate(types) if t == "c")


def check_unique_names(names, what):
    """ValueError naming the first of ``names`` given twice (``what``: how to say where,
    e.g. "X has the column")."""
    if len(set(names)) != len(names):
        repeated = next(n for i, n in enumerate(names) if n in names[:i])
        raise ValueError(f"{what} {repeated!r:.80} more than once; feature names must be "
                         "unique")


def describe_features(X, enable_categorical=False, feature_types=None):
    """Return ``(feature_names, n_features, types)`` of X after checking its type and
    dtypes (``types``: ``feature_types_of``'s 'q'/'c' per feature)."""
    if isinstance(X, pd.DataFrame) or _is_dask_dataframe(X):
        if getattr(X, "ndim", 2) != 2:
            raise TypeError("X must be two-dimensional (a DataFrame, not a Series)")
        columns = list(X.columns)
        check_unique_names(columns, "X has the column")
        types = feature_types_of(X, enable_categorical, feature_types)
        names = [str(c) for c in columns] if all(isinstance(c, str) for c in columns) else None
        return names, len(columns), types
    if isinstance(X, np.ndarray) or _is_dask_array(X) or sparse.is_sparse(X):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array; got an array with ndim={X.ndim}")
        return None, int(X.shape[1]), feature_types_of(X, enable_categorical, feature_types)
    raise TypeError(
        "X must be a dask DataFrame, dask Array, pandas DataFrame, numpy array or "
        f"scipy.sparse matrix; got {type(X).__name__}"
    )


def _row_slices(n_rows):
    """Near-equal row blocks of in-memory input (``row_block_count`` of them)."""
    n_blocks = row_block_count(n_rows)
    bounds = np.linspace(0, n_rows, n_blocks + 1).astype(np.int64)
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def row_block_count(n_rows):
    """How many blocks ``n_rows`` rows are processed in, when that is ours to choose
    (in-memory input; a parquet lake of small files, ``lake``): at most
    ``ROWS_PER_BLOCK`` rows each, and two from ``2 * MIN_ROWS_PER_BLOCK`` rows on, so
    that medium data keeps two threads busy.  A function of the row count alone: the
    same blocks, so the same model, on any machine.  (Binary, 100,000 rows: one block
    2.02 s a fit, two 1.58 s, four 1.66 s; 20,000 rows in two blocks were slower than
    in one; 10 classes, 200,000 rows: two blocks 11.1-12.4 s, four 14.6-15.3 s, each
    block's K histograms to zero and add.)"""
    split = 1
    while split < MAX_SPLIT_BLOCKS and n_rows >= 2 * split * MIN_ROWS_PER_BLOCK:
        split *= 2
    return max(1, split, math.ceil(n_rows / ROWS_PER_BLOCK))


def _in_memory_blocks(obj, slices):
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return [obj.iloc[s] for s in slices]
    return [obj[s] for s in slices]


def _dask_blocks(obj):
    """(graph, keys) of the partitions of a dask DataFrame/Series/Array (single column
    block): the collection's optimised graph, which defines every one of the keys.

    Optimising drops the keys a collection holds already computed: persisted on
    ``distributed``, its graph maps each key to the Future of that same key, an alias of
    the key to itself, which dask's graph conversion removes.  Those entries are taken
    back from the collection's own graph, so the graph is complete (it can be culled
    per worker, and a task tuple naming one of its keys gets the value, where an
    undefined key reached the task as a literal tuple), and the Futures in it keep the
    data alive while the graph is in use.
    """
    if _is_dask_array(obj):
        if obj.ndim == 2 and len(obj.chunks[1]) > 1:
            obj = obj.rechunk({1: -1})
        parts = obj.to_delayed(optimize_graph=True)
        parts = parts[:, 0] if parts.ndim == 2 else parts
        parts = list(parts)
    else:
        parts = obj.to_delayed(optimize_graph=True)
    graph, merged = {}, set()
    for part in parts:  # parts often share one graph: merge each graph once
        if id(part.__dask_graph__()) not in merged:
            merged.add(id(part.__dask_graph__()))
            graph.update(part.__dask_graph__())
    keys = [part.key for part in parts]
    held = [key for key in keys if key not in graph]
    if held:
        own = obj.__dask_graph__()
        graph.update((key, own[key]) for key in held)
    return graph, keys


def _as_labels_in_memory(values):
    """y in memory: one-dimensional, or a 2-D array / DataFrame with one column per
    target (a multi-target model: ``label_block``)."""
    if isinstance(values, pd.DataFrame) and values.shape[1] > 1:
        return values
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[1] > 1:
        return values
    if isinstance(values, np.ndarray) and values.ndim > 2:
        raise ValueError(f"y must be 1-D, or 2-D with one column per target; got shape "
                         f"{values.shape}")
    return _as_1d_in_memory("y", values)


def _as_1d_in_memory(name, values):
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise ValueError(f"{name} must be one-dimensional; got a DataFrame with {values.shape[1]} columns")
        values = values.iloc[:, 0]
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    if isinstance(values, np.ndarray):
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {values.shape}")
    elif not isinstance(values, pd.Series):
        raise TypeError(f"{name} must be array-like; got {type(values).__name__}")
    return values


def _check_dask_alignment(X, other, name):
    """Raise ValueError unless ``other`` is partitioned exactly like X."""
    if not is_dask_collection(other):
        raise TypeError(
            f"X is a dask collection, so {name} must be one too (a dask Series or Array "
            f"partitioned like X); got {type(other).__name__}"
        )
    if getattr(other, "ndim", 1) != 1 and name not in ("base_margin", "y"):
        raise ValueError(f"{name} must be one-dimensional; got ndim={other.ndim}")
    if name == "y" and getattr(other, "ndim", 1) > 2:
        raise ValueError(f"y must be 1-D, or 2-D with one column per target; got ndim="
                         f"{other.ndim}")
    n_x, n_o = _n_blocks(X), _n_blocks(other)
    if n_x != n_o:
        raise ValueError(
            f"X and {name} must have the same partitions; X has {n_x} partitions, {name} has {n_o}"
        )
    if _is_dask_dataframe(X) and _is_dask_dataframe(other):
        if X.known_divisions and other.known_divisions and tuple(X.divisions) != tuple(other.divisions):
            raise ValueError(f"X and {name} have different divisions (index ranges per partition)")
    if _is_dask_array(X) and _is_dask_array(other) and not any(
            math.isnan(c) for c in X.chunks[0] + other.chunks[0]):
        if tuple(X.chunks[0]) != tuple(other.chunks[0]):
            raise ValueError(
                f"X and {name} must have the same row chunks; X has {X.chunks[0]}, "
                f"{name} has {other.chunks[0]}"
            )


def _n_blocks(obj):
    return obj.npartitions if _is_dask_dataframe(obj) else obj.numblocks[0]


LABEL_COLUMN = "__daskboost_label__"
WEIGHT_COLUMN = "__daskboost_weight__"
MARGIN_COLUMN = "__daskboost_margin_"
QID_COLUMN = "__daskboost_qid__"
# the collections that keep their columns (one per target; one per output)
_MULTI_COLUMN = (LABEL_COLUMN, MARGIN_COLUMN)


def partition_input(X, y=None, sample_weight=None, base_margin=None, enable_categorical=False,
                    feature_types=None, feature_names=None, qid=None):
    """Describe X (and y, weights, base margins, query ids) as aligned partitions of
    one raw graph.

    ``base_margin`` may have one column per output (multiclass).  ``feature_names``: the
    features' names when X holds none (a sparse matrix named by a ``DMatrix``).
    ``qid``: each row's query id (ranking); in-memory input is then cut into blocks at
    query starts (``query_groups``).  Raises TypeError/ValueError for input whose
    problems show in metadata alone.
    """
    own_names, n_features, types = describe_features(X, enable_categorical, feature_types)
    feature_names = _given_names(own_names, feature_names, n_features)
    if n_features == 0:
        raise ValueError("X has no feature columns")
    data = _partition_input(X, y, sample_weight, base_margin, feature_names, n_features,
                            numeric="c" not in types, qid=qid)
    data.feature_types = types
    return data


def _given_names(own_names, given, n_features):
    """X's own feature names, or the ``given`` ones when it has none (the same when both)."""
    if given is None:
        return own_names
    given = [str(n) for n in given]
    if len(given) != n_features:
        raise ValueError(f"feature_names has {len(given)} names; X has {n_features} features")
    if own_names is not None and own_names != given:
        raise ValueError(f"feature_names {given!r:.200} are not X's columns "
                         f"{own_names!r:.200}")
    return given


def _partition_input(X, y, sample_weight, base_margin, feature_names, n_features,
                     numeric=False, qid=None):
    named = {"y": y, "sample_weight": sample_weight, "base_margin": base_margin, "qid": qid}
    if is_dask_collection(X):
        for name, values in named.items():
            if values is not None:
                _check_dask_alignment(X, values, name)
        if _is_dask_dataframe(X):
            return _partition_dask_frame(X, named, feature_names, n_features, numeric)
        graph, x_keys = _dask_blocks(X)
        keys = {}
        for name, values in named.items():
            keys[name] = None
            if values is not None:
                g, keys[name] = _dask_blocks(values)
                graph.update(g)
        return PartitionedInput(graph, x_keys, keys["y"], keys["sample_weight"],
                                keys["base_margin"], feature_names, n_features,
                                q_keys=keys["qid"])
    return _partition_in_memory(X, named, feature_names, n_features)


def _partition_dask_frame(X, named, feature_names, n_features, numeric=False):
    """X, y and weights as ONE dask DataFrame, combined partition by partition; or, when
    all of them are columns of one plain read_parquet of local files, the lake's files
    of each of the partitions dask would read them in, read by the passes themselves
    (``lake``).

    Combining them matters: optimised separately, collections that come from the same
    parquet lake may be read with different partitionings (dask fuses small files when
    fewer columns are read); combined, every partition is read once, with just the
    columns needed.  A lake is read a column at a time where all are numeric
    (``numeric``: no categorical feature), else each partition as one frame, string
    features as ``category`` columns (a read without dask's per-task machinery: half a
    small fit's time went there).
    """
    import dask.dataframe as dd

    # (planned from the read's expression alone: combining the collections below took
    # ~2 ms of a 40 ms small fit from a lake)
    lake_reader = lake_input if numeric else lake_frame_input
    lake = None if has_target_columns(named["y"]) else lake_reader(
        X, named["y"], named["sample_weight"], named["base_margin"], row_block_count,
        named["qid"])
    if lake is not None:
        return (_partition_lake if numeric else _partition_lake_frames)(lake, feature_names,
                                                                        n_features)
    columns = {LABEL_COLUMN: named["y"], WEIGHT_COLUMN: named["sample_weight"],
               MARGIN_COLUMN: named["base_margin"], QID_COLUMN: named["qid"]}
    columns = {name: _as_dask_frame(v, name) for name, v in columns.items() if v is not None}
    meta = X._meta.copy()
    selections, selects = {}, {}
    for name, frame in columns.items():
        several = name in _MULTI_COLUMN and (name == MARGIN_COLUMN or len(frame.columns) > 1)
        selections[name] = [f"{name}{j}" if several else name
                            for j in range(len(frame.columns))]
        for column, source in zip(selections[name], frame.columns):
            meta[column] = frame._meta[source].to_numpy()
        # (what a partition's task takes: its columns as a frame, or its one column)
        selects[name] = selections[name] if several else name
    combined = dd.map_partitions(_combine_partition, X, *columns.values(),
                                 names=list(selections.values()), align_dataframes=False,
                                 meta=meta, enforce_metadata=False)
    optimized = combined.optimize(fuse=False)
    graph, combined_keys = _dask_blocks(combined)
    token = combined_keys[0][0]
    groups = lake_partition_groups((X, *named.values()), optimized, row_block_count)
    if groups is not None and sum(map(len, groups)) == len(combined_keys):
        combined_keys = _read_together(graph, combined_keys, groups, token)
    x_columns = list(X.columns)
    x_keys, keys = [], {name: [] for name in columns}
    for i, key in enumerate(combined_keys):
        x_keys.append((f"{token}-X", i))
        graph[x_keys[-1]] = task(x_keys[-1], _select_columns, ref(key), x_columns)
        for name in columns:
            keys[name].append((f"{token}-{name}", i))
            graph[keys[name][-1]] = task(keys[name][-1], _select_columns, ref(key),
                                         selects[name])
    return PartitionedInput(graph, x_keys, keys.get(LABEL_COLUMN), keys.get(WEIGHT_COLUMN),
                            keys.get(MARGIN_COLUMN), feature_names, n_features,
                            q_keys=keys.get(QID_COLUMN))


def _read_together(graph, keys, groups, token):
    """Keys of partitions made of ``groups`` of consecutive partitions ``keys``, each
    group one frame (``lake.lake_partition_groups``: small files of a lake dask reads)."""
    out = []
    for k, group in enumerate(groups):
        if len(group) == 1:
            out.append(keys[group[0]])
            continue
        out.append((f"{token}-together", k))
        graph[out[-1]] = task(out[-1], _concat_frames, *(ref(keys[i]) for i in group))
    return out


def _concat_frames(*frames):
    return pd.concat(frames, ignore_index=True)


def _partition_lake(lake, feature_names, n_features):
    """The graph of ``lake``'s partitions: per partition, a ``ParquetColumns`` task for
    X and one column read each for y, the weights and the query ids."""
    token = f"daskboost-lake-{lake.name}"
    graph, keys = {}, {"X": [], "y": [], "w": [], "q": []}
    for i, partition in enumerate(lake.partitions):
        keys["X"].append((f"{token}-X", i))
        graph[keys["X"][-1]] = task(keys["X"][-1], open_features, partition,
                                    lake.feature_columns)
        for name, column in (("y", lake.label_column), ("w", lake.weight_column),
                             ("q", lake.qid_column)):
            if column is not None:
                keys[name].append((f"{token}-{name}", i))
                graph[keys[name][-1]] = task(keys[name][-1], read_series, partition.pieces,
                                             column)
    return PartitionedInput(graph, keys["X"], keys["y"] or None, keys["w"] or None, None,
                            feature_names, n_features, q_keys=keys["q"] or None)


def _partition_lake_frames(lake, feature_names, n_features):
    """The graph of ``lake``'s partitions read as frames: per partition, one
    ``read_frames`` task and a task each taking X, y, the weights and the query ids
    from it."""
    token = f"daskboost-lake-{lake.name}"
    graph, keys = {}, {"X": [], "y": [], "w": [], "q": []}
    for i, partition in enumerate(lake.partitions):
        read = (f"{token}-frames", i)
        graph[read] = task(read, read_frames, partition, lake.feature_columns,
                           lake.label_column, lake.weight_column, lake.string_features,
                           lake.qid_column)
        for j, (name, present) in enumerate((("X", True), ("y", lake.label_column),
                                             ("w", lake.weight_column),
                                             ("q", lake.qid_column))):
            if present is not None:
                keys[name].append((f"{token}-{name}", i))
                graph[keys[name][-1]] = task(keys[name][-1], operator.getitem, ref(read), j)
    return PartitionedInput(graph, keys["X"], keys["y"] or None, keys["w"] or None, None,
                            feature_names, n_features, q_keys=keys["q"] or None)


def has_target_columns(y):
    """Whether y has several columns (one per target of a multi-target model)."""
    if isinstance(y, (list, tuple)):
        y = np.asarray(y)
    return y is not None and getattr(y, "ndim", 1) == 2 and (
        len(y.columns) > 1 if isinstance(y, pd.DataFrame) or _is_dask_dataframe(y)
        else y.shape[1] != 1)


def _as_dask_frame(values, name):
    """Weights and query ids as a one-column dask DataFrame; y (its targets) and base
    margins (their outputs) keep all their columns."""
    import dask.dataframe as dd
    if _is_dask_array(values):
        values = dd.from_dask_array(values)
    if isinstance(values, dd.Series):
        values = values.to_frame(name="0")
    elif name not in _MULTI_COLUMN:
        values = values[[values.columns[0]]]
    return values


_WHAT = {LABEL_COLUMN: "y", WEIGHT_COLUMN: "sample_weight", QID_COLUMN: "qid"}


def _combine_partition(x, *others, names, partition_info=None):
    where = "" if partition_info is None else f" (partition {partition_info['number']})"
    out = x.copy(deep=False)
    for columns, other in zip(names, others):
        what = "y" if columns[0].startswith(LABEL_COLUMN) else _WHAT.get(columns[0],
                                                                          "base_margin")
        if len(other) != len(x):
            raise ValueError(f"X has {len(x)} rows but {what} has {len(other)}{where}")
        for column, source in zip(columns, other.columns):
            out[column] = other[source].array  # positional: the other index is not used
    return out


def _select_columns(frame, columns):
    return frame[columns]


def _partition_in_memory(X, named, feature_names, n_features):
    n_rows = X.shape[0]
    if n_rows == 0:
        raise ValueError("X has 0 rows; training needs at least one row")
    if sparse.is_sparse(X):
        X = sparse.canonical(X)  # CSR: row blocks are cheap slices
    slices = _row_slices(n_rows)
    if named.get("qid") is not None and not is_dask_collection(named["qid"]):
        # a block never splits a query's rows (checked here: the ids are at hand)
        qid = named["qid"] = qid_block(_as_1d_in_memory("qid", named["qid"]))
        if len(qid) == n_rows:
            slices = snap_to_groups(slices, qid)
    token = f"daskboost-input-{id(X):x}"
    graph, all_keys = {}, {}
    for name, values in [("X", X)] + list(named.items()):
        if values is None:
            all_keys[name] = None
            continue
        if name != "X":
            if is_dask_collection(values):
                raise TypeError(f"X is in memory, so {name} must be too; got a dask {type(values).__name__}")
            values = (_as_rows_in_memory(name, values) if name == "base_margin"
                      else _as_labels_in_memory(values) if name == "y"
                      else _as_1d_in_memory(name, values))
            if len(values) != n_rows:
                raise ValueError(f"X has {n_rows} rows but {name} has {len(values)}")
        keys = [(f"{token}-{name}", i) for i in range(len(slices))]
        for key, block in zip(keys, _in_memory_blocks(values, slices)):
            graph[key] = value(key, block)
        all_keys[name] = keys
    return PartitionedInput(graph, all_keys["X"], all_keys["y"], all_keys["sample_weight"],
                            all_keys["base_margin"], feature_names, n_features, in_memory=True,
                            q_keys=all_keys["qid"])


def _as_rows_in_memory(name, values):
    """Base margins in memory: (n,) or (n, K) numpy."""
    values = np.asarray(values.to_numpy() if isinstance(values, (pd.Series, pd.DataFrame))
                        else values, dtype=np.float64)
    if values.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D, or 2-D with one column per output; "
                         f"got shape {values.shape}")
    return values


# ---- block conversion (run inside tasks) -----------------------------------------------

def feature_block(block, encoders=None):
    """One partition of X as a float 2-D array; NaN / pd.NA / None become NaN.

    float32 data stays float32 (no copy to float64: every float32 value is exactly a
    float64, so cuts and comparisons come out the same); anything else becomes float64.
    ``encoders``: {categorical column position: pandas Index of its dictionary, or None
    (scan pass: the column reads as missing)}; such a column becomes the index of each
    value in its dictionary, matched by value; missing and unseen values become NaN.
    A scipy.sparse block stays sparse (``sparse.rows``: canonical CSR, float32 kept,
    else float64); its entries not stored are missing.
    """
    if isinstance(block, ParquetColumns):  # (only for numeric features: ``lake``)
        return block.to_numpy()
    if encoders:
        return _encoded_block(block, encoders)
    if sparse.is_sparse(block):
        return sparse.rows(block)
    if isinstance(block, pd.DataFrame):
        return block.to_numpy(dtype=_frame_float_dtype(block), na_value=np.nan)
    block = np.asarray(block)
    return block if block.dtype in (np.float32, np.float64) else block.astype(np.float64)


def _frame_float_dtype(frame):
    """The float dtype of a DataFrame's features: float32 when every column is."""
    return np.float32 if all(dt == np.float32 for dt in frame.dtypes) else np.float64


def feature_rows(block, encoders=None):
    """One partition of X for the passes that read it in pieces (the scan's sketches
    and the binning, column by column): a DataFrame as ``FrameRows``, converted a
    column at a time; a ``lake.ParquetColumns`` as it is (read a column at a time);
    anything else as ``feature_block`` has it."""
    if isinstance(block, pd.DataFrame):
        return FrameRows(block, encoders)
    if isinstance(block, ParquetColumns):
        return block
    return feature_block(block, encoders)


class FrameRows:
    """A DataFrame partition's features, converted to floats a column at a time:
    ``column(f)``, of the whole frame or of its rows ``rows(start, stop)``, holds the
    values ``feature_block`` gives the whole frame (the same float dtype, NaN for
    missing, categorical columns as dictionary indices), so sketching and binning it in
    pieces gives the same sketches and codes.  A pass then holds the frame dask read and
    one column, not a float copy of the whole partition beside the frame (issue 17; 56
    MB for 500,000 x 28 float32 rows, on each thread)."""

    def __init__(self, frame, encoders=None):
        self.frame = frame
        self.encoders = encoders or None
        self.shape = frame.shape
        # (with categorical columns every value is float64, as in ``_encoded_block``)
        self.dtype = np.float64 if self.encoders else _frame_float_dtype(frame)

    def rows(self, rows):
        """Rows ``rows`` (a slice, or an array of row numbers) as a ``FrameRows`` of
        their own."""
        return FrameRows(self.frame.iloc[rows], self.encoders)

    def column(self, f):
        """Feature ``f`` of every row, 1-D."""
        values = self.frame.iloc[:, f]
        if self.encoders and f in self.encoders:
            dictionary = self.encoders[f]
            return (np.full(len(values), np.nan) if dictionary is None
                    else encode_column(values, dictionary))
        return values.to_numpy(dtype=self.dtype, na_value=np.nan)


def label_block(block):
    """One partition of y as a 1-D numpy array (dtype kept: labels may be strings);
    several columns (a multi-target model's): a float64 ``(n_targets, n_rows)`` array,
    rows on the last axis as every per-row array of a partition."""
    if isinstance(block, pd.DataFrame) and block.shape[1] > 1 or (
            isinstance(block, np.ndarray) and block.ndim == 2 and block.shape[1] > 1):
        return _target_columns(block)
    if isinstance(block, pd.DataFrame):
        block = block.iloc[:, 0]
    if isinstance(block, pd.Series):
        if block.isna().any():
            raise ValueError("y contains missing values (NaN / NA / None)")
        if isinstance(block.dtype, pd.api.extensions.ExtensionDtype):
            return block.to_numpy(dtype=None if block.dtype.kind == "O" else block.dtype.numpy_dtype)
        return block.to_numpy()
    labels = np.asarray(block).reshape(-1)
    if labels.dtype.kind in "fO" and pd.isna(labels).any():
        raise ValueError("y contains missing values (NaN / NA / None)")
    return labels


def _target_columns(block):
    """A multi-target partition of y, ``(n_rows, n_targets)``, as numeric
    ``(n_targets, n_rows)``."""
    values = block.to_numpy() if isinstance(block, pd.DataFrame) else block
    if values.dtype.kind not in "biuf":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"y with {values.shape[1]} columns (one per target) must be "
                            f"numeric; got dtype {values.dtype}") from None
    values = np.ascontiguousarray(values.T, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError("y contains missing values (NaN / NA / None)")
    return values


def interval_labels(lower, upper):
    """Each row's ``[lower, upper]`` bounds as one label of two columns: numpy
    ``(n, 2)`` in memory, a dask array or DataFrame (partitioned as the bounds) for dask
    collections."""
    if is_dask_collection(lower) or is_dask_collection(upper):
        if not (is_dask_collection(lower) and is_dask_collection(upper)):
            raise TypeError("label_lower_bound and label_upper_bound must both be dask "
                            "collections, or both in memory")
        if hasattr(lower, "chunks") and hasattr(upper, "chunks"):
            import dask.array as da
            return da.stack([lower.astype(np.float64), upper.astype(np.float64)], axis=1)
        if hasattr(lower, "to_frame") and hasattr(upper, "to_frame"):
            import dask.dataframe as dd
            return dd.concat([lower.rename("lower").to_frame(),
                              upper.rename("upper").to_frame()], axis=1)
        raise TypeError("label_lower_bound and label_upper_bound must be collections of "
                        "one kind (dask arrays, or dask Series)")
    bounds = [np.asarray(b, dtype=np.float64).reshape(-1) for b in (lower, upper)]
    if bounds[0].shape != bounds[1].shape:
        raise ValueError(f"label_lower_bound has {bounds[0].shape[0]} rows, "
                         f"label_upper_bound {bounds[1].shape[0]}")
    return np.column_stack(bounds)


def weight_block(block):
    """One partition of sample weights as a float64 1-D array."""
    if isinstance(block, (pd.Series, pd.DataFrame)):
        return np.asarray(block.to_numpy(dtype=np.float64, na_value=np.nan)).reshape(-1)
    return np.asarray(block, dtype=np.float64).reshape(-1)


def margin_block(block, n_outputs, n_rows, index=None):
    """One partition of base margins as a (K, n_rows) float64 array, checked."""
    where = "" if index is None else f" (partition {index})"
    if isinstance(block, (pd.Series, pd.DataFrame)):
        block = block.to_numpy(dtype=np.float64, na_value=np.nan)
    values = np.asarray(block, dtype=np.float64)
    values = values.reshape(-1, 1) if values.ndim == 1 else values
    if values.shape != (n_rows, n_outputs):
        raise ValueError(f"base_margin has shape {values.shape}; expected ({n_rows}, {n_outputs})"
                         f" (one column per output){where}")
    if not np.isfinite(values).all():
        raise ValueError(f"base_margin contains NaN or inf{where}")
    return np.ascontiguousarray(values.T)


def _encoded_block(block, encoders):
    """``feature_block`` with categorical columns encoded (float64)."""
    if sparse.is_sparse(block):
        return _encoded_sparse(block, encoders)
    frame = isinstance(block, pd.DataFrame)
    numeric = [f for f in range(block.shape[1]) if f not in encoders]
    out = np.full(block.shape, np.nan)
    if numeric:
        part = block.iloc[:, numeric] if frame else np.asarray(block)[:, numeric]
        out[:, numeric] = feature_block(part)
    for f, dictionary in encoders.items():
        if dictionary is not None:
            column = block.iloc[:, f] if frame else np.asarray(block)[:, f]
            out[:, f] = encode_column(column, dictionary)
    return out


def _encoded_sparse(block, encoders):
    """``_encoded_block`` of a sparse block: the stored values of a categorical column
    become dictionary indices (NaN: unseen, or the whole column with no dictionary);
    entries not stored stay missing."""
    raw = sparse.canonical(block)
    out = raw.astype(np.float64)  # a copy: its values are replaced below
    for f, dictionary in encoders.items():
        at = raw.indices == f
        out.data[at] = np.nan if dictionary is None else encode_column(raw.data[at], dictionary)
    return out


def encode_column(column, dictionary):
    """Dictionary index (float) of each value of a column, NaN for missing and unseen
    values; a pandas ``category`` column by its categories' values, never its codes."""
    codes, distinct = _codes_and_distinct(column)
    # code -1 (missing) takes the NaN appended last
    return np.append(_dictionary_indices(distinct, dictionary), np.nan).take(codes)


# ``pd.Index.get_indexer`` costs ~0.1 ms even for a handful of values (it builds an
# index of them); looked up one by one in the dictionary's own hash table below this
_FEW_DISTINCT = 32


def _dictionary_indices(distinct, dictionary):
    """Each of the ``distinct`` values' index in ``dictionary`` (a ``pd.Index``) as a
    float, NaN where it is not there."""
    if len(distinct) > _FEW_DISTINCT:
        found = dictionary.get_indexer(distinct).astype(np.float64)
        found[found < 0] = np.nan
        return found
    found = np.full(len(distinct), np.nan)
    for k, value in enumerate(distinct):
        try:
            found[k] = dictionary.get_loc(value)
        except (KeyError, TypeError):
            pass
    return found


def _is_category(column):
    """A pandas Series of ``category`` dtype (coded by its dtype's categories)."""
    return isinstance(column, pd.Series) and isinstance(column.dtype, pd.CategoricalDtype)


def _codes_and_distinct(column):
    """``(codes, distinct)``: each value's index into ``distinct`` (-1 for missing), and
    the distinct values as a Python object array, so that only they are matched against
    a dictionary (a pandas ``category`` column: its categories, by value).  Factorizing
    first keeps strings in arrow or numpy form; converting every row to a Python object
    and hashing it cost ~10% of a fit with string columns (flights)."""
    if _is_category(column):
        return column.cat.codes.to_numpy(), column.cat.categories.to_numpy(dtype=object)
    if not isinstance(column, pd.Series):
        column = np.asarray(column, dtype=object)
    codes, distinct = pd.factorize(column)  # an Index for a Series, else an array
    distinct = (distinct.to_numpy(dtype=object) if hasattr(distinct, "to_numpy")
                else np.asarray(distinct, dtype=object))
    return np.asarray(codes), distinct


def column_categories(column, name, max_cat):
    """The sorted distinct non-missing values of a categorical column (categories
    present in it, matched by value); raises naming the column if there are more than
    ``max_cat`` or they cannot be ordered."""
    codes, distinct = _codes_and_distinct(column)
    if _is_category(column):  # (a category dtype's categories may be unused)
        counts = np.bincount(codes[codes >= 0], minlength=len(distinct))
        distinct = distinct[counts > 0]
    return checked_categories(distinct.tolist(), name, max_cat)


def with_category_columns(frame, features):
    """``frame`` (a shallow copy) with its columns ``features`` as pandas ``category``
    columns of the same values: factorized once here, their codes are then read, not
    hashed again (``_codes_and_distinct``), by whichever pass reads the frame next."""
    frame = frame.copy(deep=False)
    for f in features:
        column = frame.iloc[:, f]
        if not _is_category(column):
            codes, distinct = pd.factorize(column)
            frame.isetitem(f, pd.Categorical.from_codes(codes, categories=distinct))
    return frame


def checked_categories(values, name, max_cat):
    """The distinct ``values`` sorted (the dictionary order: by value, whatever the
    partitioning); two partitions' dictionaries are merged by passing both."""
    values = set(v.item() if isinstance(v, np.generic) else v for v in values)
    if len(values) > max_cat:
        raise ValueError(f"categorical feature {name} has {len(values)} categories, more than "
                         f"max_cat={max_cat}; raise max_cat, or drop the column if it is an id")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (str, int, float)) or (
                isinstance(v, float) and not math.isfinite(v)):
            advice = ("; a column of booleans with missing values is a feature once "
                      "converted: .astype('boolean')" if isinstance(v, bool) else "")
            raise TypeError(f"categorical feature {name} has the category {v!r}; categories "
                            f"must be strings or finite numbers{advice}")
    try:
        return sorted(values)
    except TypeError:
        raise TypeError(f"categorical feature {name} mixes strings and numbers as categories; "
                        "use one type per column") from None
