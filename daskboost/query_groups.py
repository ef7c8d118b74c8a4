"""Query groups of learning to rank: each row's query id (``qid``) -> the groups' bounds.

xgboost's rule: the rows of a query are consecutive, and ``qid`` never decreases along
the rows (``DMatrix(qid=...)`` refuses anything else).  A group is then the run of rows
of one ``qid``, and a partition's groups are given by their offsets, ``group_ptr``
(``[0, end of group 0, end of group 1, ..., n_rows]``, xgboost's name).

A ranking objective's gradients and a ranking metric's value of a group need all its
rows together, so a group never spans two partitions: in-memory input is cut into row
blocks at group starts (``snap_to_groups``), and a dask collection whose partitions
split a group is refused (``check_partition_bounds``, from the first pass's
``PartitionQueries`` of each partition: its first and last query ids, and its queries'
count and weights, from which training takes each query's index among all of them and
xgboost's ``n_queries / sum of the query weights``).  xgboost's ``group`` (the size of each
group, in order) is turned into query ids here (``qid_from_group``).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd


def qid_block(block, index=None):
    """One partition of query ids as an int64 1-D array, checked: whole numbers >= 0,
    none missing, never decreasing."""
    where = "" if index is None else f" (partition {index})"
    if isinstance(block, pd.DataFrame):
        block = block.iloc[:, 0]
    if isinstance(block, pd.Series):
        if block.isna().any():
            raise ValueError(f"qid contains missing values{where}")
        block = block.to_numpy()
    values = np.asarray(block).reshape(-1)
    if values.dtype.kind not in "iuf" and len(values):
        raise ValueError(f"qid must hold whole numbers (query ids); got dtype "
                         f"{values.dtype}{where}")
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.floor(values))
        if bad.any():
            raise ValueError(f"qid must hold whole numbers (query ids); found "
                             f"{float(values[bad][0])}{where}")
    qid = values.astype(np.int64)
    if len(qid) and qid.min() < 0:
        raise ValueError(f"qid must be >= 0; found {qid.min()}{where}")
    down = np.flatnonzero(qid[1:] < qid[:-1])
    if len(down):
        row = int(down[0]) + 1
        raise ValueError(f"qid must be sorted in non-decreasing order along the rows (the "
                         f"rows of a query consecutive); qid {qid[row]} follows qid "
                         f"{qid[row - 1]} at row {row}{where}")
    return qid


def group_pointer(qid):
    """``group_ptr`` of checked query ids (``qid_block``): (n_groups + 1,) int64 offsets."""
    starts = np.flatnonzero(np.diff(qid)) + 1
    return np.concatenate(([0], starts, [len(qid)])).astype(np.int64)


@dataclass(frozen=True)
class PartitionQueries:
    """A partition's queries, from the first pass: its first and last query ids (None
    without rows), how many queries it holds and the sum of their weights (a query's
    weight is its first row's)."""

    first: int
    last: int
    count: int
    weight_sum: float


def partition_queries(qid, weights, index=None):
    """The ``PartitionQueries`` of a partition's checked query ids and its weights
    (checked: one per query, ``query_weights``)."""
    if not len(qid):
        return PartitionQueries(None, None, 0, 0.0)
    group_ptr = group_pointer(qid)
    per_query = query_weights(group_ptr, weights, index)
    n_queries = len(group_ptr) - 1
    weight_sum = float(n_queries if per_query is None else per_query.sum(dtype=np.float64))
    return PartitionQueries(int(qid[0]), int(qid[-1]), n_queries, weight_sum)


def query_weights(group_ptr, weights, index=None):
    """Each query's weight, (n_queries,) float32 (xgboost's weights are per query): the
    weight of its rows, which must be the same for all of them; None unweighted."""
    if weights is None:
        return None
    first = weights[group_ptr[:-1]]
    differs = np.flatnonzero(np.repeat(first, np.diff(group_ptr)) != weights)
    if len(differs):
        where = "" if index is None else f" (partition {index})"
        raise ValueError(f"sample_weight weighs queries (one weight per query group, as "
                         f"xgboost's): the rows of a query must have the same weight; row "
                         f"{int(differs[0])} has {float(weights[differs[0]])}, the first row "
                         f"of its query {float(first[np.searchsorted(group_ptr, differs[0], 'right') - 1])}"
                         f"{where}")
    return first.astype(np.float32)


def check_partition_bounds(partitions):
    """Raise ValueError where one partition's last query continues in the next one (or
    a later one starts below it): a query's rows must all be in one partition.
    ``partitions``: each partition's ``PartitionQueries``, in order."""
    last, last_index = None, None
    for i, p in enumerate(partitions):
        if p.first is None:
            continue
        if last is not None and p.first <= last:
            what = ("is split between partitions" if p.first == last
                    else "is not sorted in non-decreasing order across partitions")
            raise ValueError(f"qid {p.first} {what} {last_index} and {i}: the rows of a query "
                             "must all be in one partition, in non-decreasing qid order "
                             "(repartition at query boundaries, e.g. with the qid as the "
                             "index: set_index('qid'))")
        last, last_index = p.last, i


def snap_to_groups(slices, qid):
    """Row blocks ``slices`` of in-memory input moved to group starts: each block's
    start moves forward to the first row of a query (no block splits a group; a block
    may end up empty and is dropped)."""
    starts = group_pointer(qid)
    bounds = [0]
    for s in slices[1:]:
        at = int(starts[np.searchsorted(starts, s.start)])
        if at > bounds[-1] and at < len(qid):
            bounds.append(at)
    bounds.append(len(qid))
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def qid_from_group(group, n_rows, name="group"):
    """Query ids ``0, 0, ..., 1, ...`` of xgboost's ``group`` (each group's size)."""
    sizes = np.asarray(group).reshape(-1)
    if sizes.dtype.kind not in "iuf" or not (np.isfinite(sizes).all()
                                             and (sizes == np.floor(sizes)).all()
                                             and (sizes >= 0).all()):
        raise ValueError(f"{name} must hold the size of each query group (whole numbers "
                         f">= 0); got {sizes[:5]!r:.80}")
    sizes = sizes.astype(np.int64)
    if int(sizes.sum()) != n_rows:
        raise ValueError(f"{name} sizes add up to {int(sizes.sum())} rows; X has {n_rows}")
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _is_dask(obj):
    """A dask collection (told by its type's module: no dask import here)."""
    return type(obj).__module__.split(".")[0] == "dask"


def _is_frame(X):
    """A pandas or a dask DataFrame."""
    return isinstance(X, pd.DataFrame) or (_is_dask(X) and hasattr(X, "columns"))


def query_input(X, qid=None, group=None, what="X", required=True):
    """``(X, qid)`` of a ranking fit's input (xgboost's ``XGBRanker`` conventions): the
    query ids given, or X's own ``qid`` column (taken out of X; a pandas or dask
    DataFrame), or xgboost's ``group`` (each query's size, in memory) turned into query
    ids.  ValueError when more than one is given, or none and ``required``."""
    own = _is_frame(X) and "qid" in X.columns
    given = [name for name, v in (("a 'qid' column", own), ("qid", qid is not None),
                                  ("group", group is not None)) if v]
    if len(given) > 1:
        raise ValueError(f"{what} has {' and '.join(given)}: give the query groups once")
    if own:  # (a selection of X's other columns: a lake's reader takes it, ``lake``)
        return X[[c for c in X.columns if c != "qid"]], X["qid"]
    if group is not None:
        if _is_dask(X) or not hasattr(X, "shape"):
            raise ValueError(f"group (the size of each query) needs {what} in memory; for a "
                             "dask collection give each row's query id (qid=..., partitioned "
                             "like X, or a 'qid' column)")
        return X, qid_from_group(group, X.shape[0])
    if qid is None and required:
        raise ValueError(f"ranking needs the query groups of {what}: give qid (each row's "
                         "query id), group (each query's size) or a 'qid' column in X")
    return X, qid


def row_weights(sample_weight, qid):
    """Ranking weights as one per row: xgboost's one weight per query (in memory, one
    per query group of ``qid``, in order) repeated over the query's rows; weights with
    one per row (a dask collection, or as many as the rows) as they are."""
    if sample_weight is None or qid is None or _is_dask(sample_weight) or _is_dask(qid):
        return sample_weight
    weights = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    ids = qid_block(qid)
    sizes = np.diff(group_pointer(ids))
    if len(weights) == len(ids):
        return weights
    if len(weights) != len(sizes):
        raise ValueError(f"sample_weight has {len(weights)} values: ranking weighs queries, one "
                         f"weight per query group ({len(sizes)} queries), or one per row "
                         f"({len(ids)} rows, the same within each query)")
    return np.repeat(weights, sizes)
