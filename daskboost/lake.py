"""A parquet lake's partitions read by daskboost itself, one column at a time (issue 17).

``dd.read_parquet`` turns each partition into one pandas DataFrame: the whole Arrow
table, then the frame made from it.  The passes over the raw data only need one column
at a time (the scan sketches each feature on its own, the bin pass bins each feature on
its own), so a lake read that way holds a partition's Arrow table and its frame only
to let go of them column by column: on two threads, 500,000-row files of 28 float32
columns kept ~270 MB of Arrow memory at the bin pass's peak under a 256 MB budget.

When X, y and the sample weights are plain column selections of ONE ``dd.read_parquet``
of local files, with numeric or boolean columns only and no categorical feature, the
graph's X task of a partition is instead a ``ParquetColumns``: the partition's files
and row groups, each column read when it is asked for (a few MB at a time); y and the
weights are read as their one column each.  The values are those dask's reading gives
(each column converted to the features' float dtype, missing values as NaN; the label
and weight columns as pandas makes them), and the partitions are dask's (one piece of
the lake each, or the pieces its optimiser fuses into one), so the sketches, codes and
models are the same; except that a lake of small files is read in fewer, larger
partitions (``_grouped``), as in-memory data of its size would be.  Anything else
(filters, hive partition columns, remote filesystems, string or categorical columns,
derived columns, base margins, a file without one of the columns) stays with dask's
reading; a plain read of local files dask reads (string columns, say) still has its
small files read together (``lake_partition_groups``: dask's frames of a group
concatenated into one partition).

This reads dask's parquet expression (``ReadParquetFSSpec``: its path, its partition
plan); when that is not there, or not as expected, the lake is read by dask as before.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

_PLAIN_DEFAULTS = {"filters": None, "categories": None, "_partitions": None}


@dataclass(frozen=True)
class ParquetPiece:
    """One partition of a parquet lake: a file and its row groups (None: all)."""

    path: str
    row_groups: tuple | None


@dataclass(frozen=True)
class LakePartition:
    """The pieces one partition reads, in order, with its row count and the float dtype
    of its features (from the files' footers, read once when the input is planned)."""

    pieces: tuple
    n_rows: int
    dtype: type


@dataclass
class LakeInput:
    """The partitions of X, y, weights and query ids, all columns of one
    ``dd.read_parquet``: a ``LakePartition`` each."""

    partitions: list
    feature_columns: list
    label_column: object
    weight_column: object
    string_features: tuple = ()  # (read as frames: the string features, ``read_frames``)
    name: str = ""  # the tasks' name: of the read, its columns and their roles
    qid_column: object = None  # (ranking: each row's query id)


def lake_input(X, y, sample_weight, base_margin, block_count, qid=None):
    """A ``LakeInput`` when every one of X, y, ``sample_weight`` and ``qid`` (dask
    DataFrame / Series) is a selection of numeric or boolean columns of the same plain
    ``dd.read_parquet`` of local files, else None.  Its partitions are the ones dask
    would read these columns in (``_read_plan``): one piece each, or the pieces dask's
    optimiser reads together (``FusedIO``: a narrow selection of many small files);
    then consecutive ones are read together while there are more of them than
    ``block_count(rows)`` (``_grouped``)."""
    return _planned_input((X, y, sample_weight, qid), base_margin, block_count, _piece_facts)


def lake_frame_input(X, y, sample_weight, base_margin, block_count, qid=None):
    """As ``lake_input``, for features that may also be string or dictionary columns
    (categorical features), each partition then read as one pandas frame
    (``read_frames``); None unless every file types each column alike (string,
    dictionary, numeric or boolean features; numeric or boolean y, weights and query
    ids)."""
    return _planned_input((X, y, sample_weight, qid), base_margin, block_count, _frame_facts)


def _planned_input(collections, base_margin, block_count, facts_of):
    """The ``LakeInput`` of ``collections`` (X, y, weights, query ids) when they are columns of one
    plain read (``_lake_plan``) and ``facts_of(pieces, names, features)`` (each
    piece's rows, whether its features are all float32, and the string features;
    None when these files cannot be read so) says yes."""
    if base_margin is not None:
        return None
    plan = _lake_plan(collections)
    if plan is None:
        return None
    columns, pieces, buckets, name = plan
    needed = _needed_columns(columns)
    facts = (None if not all(isinstance(c, str) for c in needed)
             else facts_of(pieces, needed, columns[0]))
    if facts is None:
        return None
    rows, float32, strings = facts
    groups = _grouped(buckets, [sum(rows[i] for i in bucket) for bucket in buckets],
                      block_count)
    partitions = [LakePartition(tuple(pieces[i] for i in group), sum(rows[i] for i in group),
                                np.float32 if all(float32[i] for i in group) else np.float64)
                  for group in groups]
    return LakeInput(partitions, columns[0], columns[1], columns[2], strings, name, columns[3])


def lake_partition_groups(collections, optimized, block_count):
    """For ``collections`` (X, y, weights, base margins; None where absent) that are all
    columns of one plain ``dd.read_parquet`` of local files, of any column types (read
    by dask: string columns, say): the partitions of ``optimized`` (indices, in order)
    to read together, consecutive ones while there are more of them than
    ``block_count(rows)`` (``_grouped``, from the files' row counts), as in-memory
    data of that size would be blocked.  None when the lake is not such a read, or when
    no partition is to be read with another."""
    plan = _lake_plan(collections, optimized)
    if plan is None:
        return None
    _, pieces, buckets, _ = plan
    rows = _piece_rows(pieces, _footers(pieces))
    groups = _grouped([(i,) for i in range(len(buckets))],
                      [sum(rows[i] for i in bucket) for bucket in buckets], block_count)
    return groups if len(groups) < len(buckets) else None


def _lake_plan(collections, optimized=None):
    """(the columns each collection selects, the read's pieces, the pieces of each
    partition, a name for them) when every collection given is columns of the same
    plain ``dd.read_parquet`` of local files; else None.  The partitions are those of
    ``optimized`` (the collection the passes would read, optimised by dask without
    fusing tasks), or, with None, those dask gives the read of the columns needed
    (``_read_plan``)."""
    try:
        from dask.dataframe.dask_expr.io.parquet import ReadParquetFSSpec
    except ImportError:  # (another dask layout: dask reads the lake)
        return None
    reads, columns = [], []
    for obj in collections:
        if obj is None:
            columns.append(None)
            continue
        found = _read_and_columns(obj, ReadParquetFSSpec)
        if found is None:
            return None
        reads.append(found[0])
        columns.append(found[1])
    read = reads[0]
    if any(not _same_read(read, other) for other in reads[1:]) or not _plain(read):
        return None
    if optimized is None:
        optimized = _read_plan(read, columns)
        if optimized is None:
            return None
    pieces = _pieces(read)
    buckets = _partition_buckets(optimized, read, ReadParquetFSSpec)
    if pieces is None or buckets is None:
        return None
    return columns, pieces, buckets, _plan_name(optimized, columns)


def _read_plan(read, columns):
    """The read of the columns ``columns`` select (X's, then y's, then the weights'),
    optimised by dask without fusing tasks, as it reads X, y and the weights combined:
    one read of their columns, fused by dask's optimiser into fewer partitions
    (``FusedIO``) where it reads few of a lake's columns, which it decides for a read
    under another expression (``_tune_up``).  None if dask cannot plan it."""
    from dask.dataframe.dask_expr._collection import new_collection
    from dask.dataframe.dask_expr._expr import Projection
    needed = _needed_columns(columns)
    try:
        expr = new_collection(read)[needed].optimize(fuse=False).expr
        tuned = expr._tune_up(Projection(expr, needed))
        return new_collection(expr if tuned is None else tuned.frame)
    except Exception:  # (dask internals not as expected: dask reads the lake)
        return None


def _needed_columns(columns):
    """The lake's columns a read of ``columns`` (X's list, then y's and the weights'
    names or None) needs, each once, X's first."""
    needed = list(columns[0])
    return needed + [c for c in columns[1:] if c is not None and c not in needed]


def _plan_name(optimized, columns):
    """The name of a planned input's tasks: the read's (its files, its columns) and
    which columns are X, y and the weights."""
    from dask.base import tokenize
    return tokenize(optimized._name, columns)


def _grouped(partitions, rows, block_count):
    """Consecutive partitions (tuples of piece indices) read as one, ``block_count(total rows)`` of them, with
    near-equal rows, when the files are smaller than that (none is split).  A partition
    costs its own histograms in every pass, K trees' worth of them: 10 classes, 200,000
    rows in 8 files of 25,000 rows took 6.1-6.3 s for 20 rounds, the same in 2 files
    4.1-4.3 s.  A function of the files' row counts alone: the same partitions on any
    machine and scheduler."""
    n_groups = block_count(sum(rows))
    if n_groups >= len(partitions):
        return partitions
    ends = np.cumsum(rows)
    targets = ends[-1] * np.arange(1, n_groups) / n_groups
    # each group ends after the partition whose end is nearest its share of the rows
    cuts = sorted(set(int(np.argmin(np.abs(ends[:-1] - t))) + 1 for t in targets))
    bounds = [0] + cuts + [len(partitions)]
    return [sum(partitions[a:b], ()) for a, b in zip(bounds[:-1], bounds[1:])]


def _partition_buckets(optimized, read, read_type):
    """For each partition of ``optimized``, the indices of the read's pieces it holds,
    in order; None when that cannot be told (not one read of the lake, or a partition
    plan other than the read's own or one fusion of it)."""
    try:
        n_pieces = len(read._plan["parts"])
        fused, reads = set(), []
        for node in optimized.expr.walk():
            if hasattr(type(node), "_fusion_buckets"):
                inner = node.operand("_expr")
                if not isinstance(inner, read_type) or not _same_read(read, inner):
                    return None
                fused.add(tuple(tuple(bucket) for bucket in node._fusion_buckets))
            elif isinstance(node, read_type):
                reads.append(node)
        if len(fused) > 1 or any(not _same_read(read, other) for other in reads):
            return None
        buckets = fused.pop() if fused else tuple((i,) for i in range(n_pieces))
        covered = [i for bucket in buckets for i in bucket]
        if covered != list(range(n_pieces)) or len(buckets) != optimized.npartitions:
            return None
        return buckets
    except Exception:  # (dask internals not as expected: dask reads the lake)
        return None


def _read_and_columns(obj, read_type):
    """(the read_parquet expression, the column names selected) of a dask DataFrame or
    Series that is columns of one read_parquet, else None.  A selection of a read's
    columns is seen as it is (dask's ``simplify``, needed for anything else, took 1.1
    ms a call of a 40 ms small fit)."""
    def read_of(expr):  # the read under a selection of its columns, or None
        if type(expr).__name__ == "Projection":
            expr = expr.frame
        return expr if isinstance(expr, read_type) else None

    try:
        expr = read_of(obj.expr)
        if expr is None:
            expr = read_of(obj.expr.simplify())
    except Exception:  # (dask internals not as expected: dask reads the lake)
        return None
    if expr is None:
        return None
    if getattr(obj, "ndim", 2) == 1:
        return expr, obj.name
    return expr, list(obj.columns)


def _same_read(a, b):
    """Two read_parquet expressions of the same lake with the same options (they differ
    in the columns they read)."""
    skip = {"columns", "_series", "_dataset_info_cache", "_pq_length_stats"}
    try:
        return all(a.operand(p) == b.operand(p) for p in a._parameters if p not in skip)
    except Exception:  # (an operand without a plain equality)
        return False


def _plain(read):
    """A read of local files without filters, categories, a partition subset, or any
    reading option beyond the defaults."""
    try:
        if any(read.operand(p) is not v for p, v in _PLAIN_DEFAULTS.items()):
            return False
        if read.operand("index") not in (None, False):
            return False
        if any(v is not None for v in (read.operand("kwargs") or {}).values()):
            return False
        protocol = read._dataset_info["fs"].protocol
        protocol = (protocol,) if isinstance(protocol, str) else tuple(protocol)
        return "file" in protocol and not read._plan["empty"]
    except Exception:
        return False


def _pieces(read):
    """The read's partitions as ``ParquetPiece``s (partition i is ``_plan['parts'][i]``),
    None unless every one is a single file without hive partition keys."""
    pieces = []
    for part in read._plan["parts"]:
        piece = part.get("piece") if isinstance(part, dict) and len(part) == 1 else None
        if not (isinstance(piece, tuple) and len(piece) == 3 and isinstance(piece[0], str)):
            return None
        path, row_groups, keys = piece
        if keys:
            return None
        pieces.append(ParquetPiece(path, None if row_groups is None else tuple(row_groups)))
    return pieces


def _piece_facts(pieces, names, features):
    """(each piece's row count, whether its file types every one of ``features``
    float32, no string features), from the files' footers (one read per file); None
    unless every file has the columns ``names``, numeric or boolean (a file without
    one, which dask's reading fills with nulls, or with another type: dask reads the
    lake)."""
    import pyarrow as pa
    metadata, float32 = _footers(pieces), {}
    for path, meta in metadata.items():
        schema = meta.schema.to_arrow_schema()
        if not all(name in schema.names and _numeric(schema.field(name).type)
                   for name in names):
            return None
        # (dask reads each file with its own types and concatenates the frames)
        float32[path] = all(schema.field(c).type == pa.float32() for c in features)
    return _piece_rows(pieces, metadata), [float32[piece.path] for piece in pieces], ()


def _frame_facts(pieces, names, features):
    """(each piece's row count, no float32 flags, the string features) for a lake read
    as frames (``read_frames``): None unless every file has the columns ``names``, each
    typed alike in every file (concatenated as one table, they convert as dask's
    per-file frames concatenated do), features string, dictionary, numeric or boolean,
    the other columns (y, weights) numeric or boolean."""
    metadata, types = _footers(pieces), {}
    for meta in metadata.values():
        schema = meta.schema.to_arrow_schema()
        for name in names:
            if name not in schema.names:
                return None
            kind = schema.field(name).type
            if types.setdefault(name, kind) != kind or not (
                    _numeric(kind) or (name in features and _categorical(kind))):
                return None
    strings = tuple(name for name in features if _string(types[name]))
    return _piece_rows(pieces, metadata), [False] * len(pieces), strings


def _categorical(arrow_type):
    """Strings, or a dictionary of strings or integers (pandas ``category``)."""
    import pyarrow as pa
    if pa.types.is_dictionary(arrow_type):
        return _string(arrow_type.value_type) or pa.types.is_integer(arrow_type.value_type)
    return _string(arrow_type)


def _string(arrow_type):
    import pyarrow as pa
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _footers(pieces):
    """{path: parquet metadata} of the pieces' files, each read once."""
    import pyarrow.parquet as pq
    return {path: pq.read_metadata(path)
            for path in dict.fromkeys(piece.path for piece in pieces)}


def _piece_rows(pieces, metadata):
    """Each piece's row count, from its file's footer (``_footers``)."""
    return [sum(metadata[piece.path].row_group(i).num_rows
                for i in _row_groups(piece, metadata[piece.path].num_row_groups))
            for piece in pieces]


def _row_groups(piece, n_row_groups):
    """The row groups a piece reads, of its file's ``n_row_groups``."""
    return range(n_row_groups) if piece.row_groups is None else piece.row_groups


def _numeric(arrow_type):
    import pyarrow as pa
    return (pa.types.is_boolean(arrow_type) or pa.types.is_integer(arrow_type)
            or pa.types.is_float32(arrow_type) or pa.types.is_float64(arrow_type))


# a partition of at most this many values (rows x columns) is read whole, once, each of
# its files in one read: a file read a column at a time costs a file open and a read
# per column (200 files of 1,000 x 28 float32: 7.6 ms a file, against 1.4 ms whole),
# which pays only where the whole partition's table is what must not be held
WHOLE_READ_VALUES = 2 ** 22


def _read_columns(piece, names, as_dictionary=()):
    """Columns ``names`` of one piece, one Arrow table, as its file types them (string
    columns ``as_dictionary`` as dictionaries of their values)."""
    import pyarrow.parquet as pq
    with pq.ParquetFile(piece.path, read_dictionary=list(as_dictionary) or None) as file:
        return file.read_row_groups(list(_row_groups(piece, file.num_row_groups)),
                                    columns=names, use_threads=False)


def _read_column(piece, name):
    """Column ``name`` of one piece, as its file types it (dask reads each file so)."""
    return _read_columns(piece, [name]).column(0)


class ParquetColumns:
    """A partition's features (``columns``), read from its pieces one column at a time
    (or, for a small partition, all at once on the first ``column`` call, kept while
    the object lives): ``column(f)`` holds what ``data.FrameRows.column`` gives of the
    frame dask would have read, in the ``LakePartition``'s dtype (float32 when every one
    of the columns is float32 in every piece's file, else float64), missing values as
    NaN."""

    def __init__(self, partition, columns):
        self.pieces = partition.pieces
        self.columns = list(columns)
        self.shape = (partition.n_rows, len(self.columns))
        self.dtype = np.dtype(partition.dtype)
        self._tables = None  # each piece's table of all the columns (a small partition)

    def column(self, f):
        """Feature ``f`` of every row, 1-D."""
        if self._tables is None and self.shape[0] * self.shape[1] <= WHOLE_READ_VALUES:
            self._tables = [_read_columns(piece, self.columns) for piece in self.pieces]
        if self._tables is not None:
            chunks = [table.column(f) for table in self._tables]
        else:
            chunks = [_read_column(piece, self.columns[f]) for piece in self.pieces]
        values = [_as_floats(chunk, self.dtype) for chunk in chunks]
        return values[0] if len(values) == 1 else np.concatenate(values)

    def __getstate__(self):  # (what travels to a worker: the pieces, not their tables)
        return {**self.__dict__, "_tables": None}

    def to_numpy(self):
        """All features, (n_rows, n_features) in ``dtype``."""
        out = np.empty(self.shape, dtype=self.dtype)
        for f in range(self.shape[1]):
            out[:, f] = self.column(f)
        return out

    def __getitem__(self, rows):
        if not isinstance(rows, slice):
            raise TypeError(f"ParquetColumns takes a slice of rows; got {rows!r}")
        return self.to_numpy()[rows]


def _as_floats(column, dtype):
    """An Arrow column as ``dtype`` values, null as NaN: what pandas gives for it
    (``to_numpy(dtype, na_value=nan)`` of the column Arrow's ``to_pandas`` makes; an
    integer becomes the nearest float, as numpy's cast does)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    values = column.cast(pa.from_numpy_dtype(dtype), safe=False)
    if values.null_count:  # (3x faster than ``to_numpy`` writing NaN for each null)
        values = pc.fill_null(values, pa.scalar(np.nan, values.type))
    return values.to_numpy()


def open_features(partition, columns):
    """The graph task of a partition's X: its ``ParquetColumns``."""
    return ParquetColumns(partition, columns)


def read_frames(partition, features, label, weight, strings, qid=None):
    """The graph task of a partition of a lake read as frames (``lake_frame_input``):
    (X, y, weights, query ids) as pandas, None where absent.  Each piece's
    columns are read once, the tables concatenated and converted together; the string
    features (``strings``) come as ``category`` columns (their dictionaries unified),
    which the passes match by value, as they match the strings dask's reading gives."""
    import pyarrow as pa
    names = list(dict.fromkeys([*features, *(c for c in (label, weight, qid)
                                             if c is not None)]))
    tables = [_read_columns(piece, names, strings) for piece in partition.pieces]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    X = table.select(features).to_pandas(use_threads=False)

    def series(name):
        return None if name is None else table.column(name).to_pandas().rename(name)
    return X, series(label), series(weight), series(qid)


def read_series(pieces, name):
    """The graph task of a partition's y or weights: the column as a pandas Series, as
    dask's reading makes it (each file's column by ``to_pandas``, concatenated by
    pandas)."""
    series = [_read_column(piece, name).to_pandas() for piece in pieces]
    out = series[0] if len(series) == 1 else pd.concat(series, ignore_index=True)
    return out.rename(name)
