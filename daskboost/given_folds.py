"""Folds the user gives ``cv`` (``folds=``), as the fold of each row.

``cv`` deals the rows to folds itself (``folds``, keyed on the seed and each row's
global index).  Where the rows must be split another way (all the rows of a customer,
a site or a patient in one fold: scikit-learn's ``GroupKFold``; or folds fixed in a
column of the lake), ``folds`` takes:

- the fold of each row: a 1-d array-like, pandas Series, or dask Series or Array (a
  column of the same dask DataFrame as X), of integers ``0 .. nfold - 1``, in the
  rows' order, each fold holding out at least one row;
- xgboost's shapes: a list of ``(train, test)`` row-index pairs, or a scikit-learn
  splitter (``KFold``, ``StratifiedKFold``: its ``split(X, y)``, for in-memory X).

``cv`` grows each fold's model on every row it does not hold out, so a pair's train
rows must be every row outside its test rows, and every row must be in exactly one
fold's test rows (a split that trains on fewer rows, such as ``TimeSeriesSplit``, is
refused, naming the fold).  A dask collection of folds is computed on the client (a
byte a row with up to 127 folds) and each partition gets its own rows' part.
"""

import numpy as np
from dask.base import is_dask_collection

from .folds import check_nfold


def fold_ids(folds, X, y, n_rows, nfold=None):
    """``(ids, nfold)``: each row's fold as a compact int array (int8 where the folds
    fit) and the number of folds, from ``cv``'s ``folds`` argument (see the module's
    docstring); ``n_rows``: X's rows if known before any pass, else None; ``nfold`` as
    given to ``cv`` (None: not given), which must then agree.  ValueError/TypeError
    naming ``folds`` on anything else."""
    if hasattr(folds, "split") and not _is_column(folds):
        if is_dask_collection(X) or is_dask_collection(y):
            raise TypeError(
                f"folds={type(folds).__name__}(...): a scikit-learn splitter needs X and y "
                "in memory; for dask data give the fold of each row (a dask Series or Array "
                "aligned with X, such as a column of its DataFrame)")
        ids = _from_pairs(list(folds.split(X, y)), n_rows)
    elif _is_pairs(folds):
        ids = _from_pairs(list(folds), n_rows)
    else:
        ids = _from_column(folds)
    check_fold_rows(ids, n_rows)
    given = int(ids.max()) + 1
    if nfold is not None and check_nfold(nfold) != given:
        raise ValueError(f"nfold={nfold} and folds disagree: folds has {given} folds; give "
                         "one of them")
    if given < 2:
        raise ValueError("folds: every row is in fold 0; cv needs at least 2 folds")
    counts = np.bincount(ids, minlength=given)
    if (counts == 0).any():
        raise ValueError(f"folds: fold {int(np.argmin(counts))} holds out no row; the folds "
                         f"must be 0 .. {given - 1}, each holding out at least one row")
    return ids.astype(np.min_scalar_type(-given)), given


def partition_parts(ids, partition_rows):
    """Each partition's part of ``ids``, in order (``partition_rows``: its rows)."""
    stops = np.cumsum(partition_rows)
    return [ids[stop - n:stop] for stop, n in zip(stops, partition_rows)]


def check_fold_rows(ids, n_rows):
    """The folds name one fold per row of X (``n_rows``)."""
    if ids is not None and n_rows is not None and len(ids) != n_rows:
        raise ValueError(f"folds has {len(ids)} rows' folds but X has {n_rows} rows; give "
                         "the fold of each row of X, in its order")


def _is_column(folds):
    return (is_dask_collection(folds) or isinstance(folds, np.ndarray)
            or hasattr(folds, "to_numpy"))


def _is_pairs(folds):
    """A list (or tuple) of (train, test) pairs of index arrays."""
    if not isinstance(folds, (list, tuple)) or not folds:
        return False
    first = folds[0]
    return (isinstance(first, (list, tuple)) and len(first) == 2
            and all(np.ndim(part) == 1 for part in first))


def _from_pairs(pairs, n_rows):
    """Each row's fold from (train, test) index pairs (see the module's docstring)."""
    if n_rows is None:
        raise TypeError("folds as (train, test) index pairs needs X with a known number of "
                        "rows; for dask data give the fold of each row (a dask Series or "
                        "Array aligned with X)")
    ids = np.full(n_rows, -1, dtype=np.int64)
    for f, pair in enumerate(pairs):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"folds[{f}] must be a (train, test) pair of row indices; got "
                             f"{type(pair).__name__}")
        train, test = (_indices(part, f, name, n_rows) for part, name in
                       zip(pair, ("train", "test")))
        if len(test) == 0:
            raise ValueError(f"folds[{f}] holds out no row (its test indices are empty)")
        twice = test[ids[test] >= 0]
        if not len(twice):
            values, counts = np.unique(test, return_counts=True)
            twice = values[counts > 1]
        if len(twice):
            raise ValueError(f"folds: row {int(twice[0])} is in the test rows of more than "
                             f"one fold (folds[{f}] among them); cv holds out each row in "
                             "exactly one fold")
        ids[test] = f
        outside = n_rows - len(test)
        if (len(train) != outside or len(np.unique(train)) != outside
                or np.isin(train, test).any()):
            raise ValueError(
                f"folds[{f}]: its {len(train)} train indices are not the {outside} rows "
                "outside its test indices; cv trains each fold's model on every row it does "
                "not hold out (splits that leave rows out of training, such as "
                "TimeSeriesSplit, are not supported)")
    missing = np.flatnonzero(ids < 0)
    if len(missing):
        raise ValueError(f"folds: row {int(missing[0])} is in no fold's test rows; cv holds "
                         "out each row in exactly one fold")
    return ids


def _indices(part, f, name, n_rows):
    values = np.asarray(part)
    if values.dtype.kind not in "iu" and values.size:
        raise TypeError(f"folds[{f}]'s {name} indices must be integers; got "
                        f"{values.dtype}")
    values = values.astype(np.int64)
    if values.size and (values.min() < 0 or values.max() >= n_rows):
        bad = int(values[(values < 0) | (values >= n_rows)][0])
        raise ValueError(f"folds[{f}]'s {name} index {bad} is not a row of X (0 .. "
                         f"{n_rows - 1})")
    return values


def _from_column(folds):
    """Each row's fold from a 1-d collection of fold ids (computed, if dask)."""
    if is_dask_collection(folds):
        folds = folds.compute()
    values = np.asarray(folds.to_numpy() if hasattr(folds, "to_numpy") else folds)
    if values.ndim != 1:
        raise ValueError(f"folds must be the fold of each row (1-d), (train, test) index "
                         f"pairs or a scikit-learn splitter; got an array of shape "
                         f"{values.shape}")
    if values.size == 0:
        raise ValueError("folds is empty: give the fold of each row of X")
    if values.dtype.kind == "f":
        not_folds = ~np.isfinite(values) | (values != np.round(values))
        if not_folds.any():
            bad = values[not_folds][0]
            raise ValueError(f"folds: {float(bad)!r} is not a fold: folds are integers 0 .. "
                             "nfold - 1")
    elif values.dtype.kind not in "iu":
        raise TypeError(f"folds must hold integer fold numbers; got dtype {values.dtype}")
    values = values.astype(np.int64)
    if values.min() < 0:
        raise ValueError(f"folds: {int(values.min())} is not a fold: folds are integers "
                         "0 .. nfold - 1")
    return values
