"""The folds' models of a cross-validation (``cv(..., return_cvbooster=True)``), and
their out-of-fold predictions.

``CVBooster`` is LightGBM's ``CVBooster`` for daskboost: the folds' models
(``boosters``, and the same models as fitted scikit-learn estimators, ``estimators``)
and ``best_iteration``; ``predict`` and ``predict_proba`` return one prediction per
fold.  It also keeps how ``cv`` split the rows (``FoldSplit``), so
``predict_out_of_fold(X)`` predicts each row of the X given to ``cv`` with the model
of the fold that held that row out: scikit-learn's ``cross_val_predict``, on dask data
too, one task per partition and no row read twice.

The fold of a row is found as ``cv`` found it: the folds the user gave, or the folds
``cv`` dealt (``folds.FoldLayout``, keyed on the seed and the row's global index, and
for stratified folds on its class among the rows of its class before it).  For dask X
each partition needs its first row's global index, taken from the rows ``cv``'s scan
counted in each partition; so X must be partitioned as it was for ``cv`` (checked:
the number of partitions before any work, each partition's rows in its task).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from dask.base import is_dask_collection

from .folds import FoldLayout
from .given_folds import partition_parts
from .partition import encode_labels
from .sklearn import _column

METHODS = ("predict", "predict_proba")


@dataclass(frozen=True)
class FoldSplit:
    """How ``cv`` split the rows: its ``FoldLayout`` (dealt folds), or ``given`` (each
    row's fold, ``given_folds.fold_ids``); the rows ``cv``'s scan counted in each
    partition; and the classes (sorted labels) of a classification, else None."""

    layout: FoldLayout
    partition_rows: tuple
    given: np.ndarray = None
    classes: np.ndarray = None

    @property
    def n_rows(self):
        return int(sum(self.partition_rows))

    def of_rows(self, n_rows, y=None):
        """The fold of each of the ``n_rows`` rows of in-memory data, (n_rows,)."""
        if n_rows != self.n_rows:
            raise ValueError(f"X has {n_rows} rows; cv was given {self.n_rows}: out-of-fold "
                             "predictions are for the rows cv split, in their order")
        if self.given is not None:
            return np.asarray(self.given, dtype=np.int64)
        if not self.layout.stratified:
            return self.layout.of_partition(0, 0, n_rows)
        # the whole data as partition 0: each row's index among all rows of its class
        classes = self._classes_of(y, n_rows, self.layout.class_counts.sum(axis=0), "y")
        return self.layout.of_partition(0, 0, classes)

    def of_partition(self, index, n_rows, y=None):
        """The fold of each row of partition ``index`` (``n_rows`` rows, checked against
        the rows ``cv`` counted there; ``y``: its labels, for stratified folds)."""
        expected = self.partition_rows[index]
        if n_rows != expected:
            raise ValueError(f"X's partition {index} has {n_rows} rows; cv's had {expected}: "
                             "give the X given to cv, partitioned as it was")
        if self.given is not None:
            return np.asarray(partition_parts(self.given, self.partition_rows)[index],
                              dtype=np.int64)
        offset = int(sum(self.partition_rows[:index]))
        if not self.layout.stratified:
            return self.layout.of_partition(index, offset, n_rows)
        classes = self._classes_of(y, n_rows, self.layout.class_counts[index],
                                   f"y's partition {index}")
        return self.layout.of_partition(index, offset, classes)

    def _classes_of(self, y, n_rows, counts, name):
        """The labels ``y`` encoded (the index of each in ``classes``), checked to hold
        each class as many times as the labels ``cv`` had (``counts``), without which a
        row's index among its class's rows would not be the one ``cv`` dealt by."""
        labels = np.asarray(y)
        if labels.shape != (n_rows,):
            raise ValueError(f"y has shape {labels.shape}; expected ({n_rows},), the label of "
                             "each row of X")
        encoded = encode_labels(labels, self.classes).astype(np.int64)
        found = np.bincount(encoded, minlength=len(self.classes))
        if not np.array_equal(found, counts):
            raise ValueError(
                f"{name} holds the classes {self.classes.tolist()} {found.tolist()} times; "
                f"cv's labels there held them {np.asarray(counts).tolist()} times: give the y "
                "given to cv")
        return encoded


class CVBooster:
    """The folds' models of a ``cv``: fold f's model was trained on every row but fold
    f's.

    Attributes
    ----------
    estimators : list of fitted ``DaskBoostRegressor`` / ``DaskBoostClassifier``, one per
        fold (their ``predict`` uses the trees up to ``best_iteration``, as after a fit
        with early stopping).
    boosters : their ``Booster``s (LightGBM's name).
    best_iteration : the 0-based round with the best mean test metric when ``cv``
        stopped early, else None; every fold's model has it.
    """

    def __init__(self, estimators, best_iteration, split):
        self.estimators = list(estimators)
        self.best_iteration = best_iteration
        self._split = split

    @property
    def boosters(self):
        return [e.get_booster() for e in self.estimators]

    def __len__(self):
        return len(self.estimators)

    def predict(self, X, **kwargs):
        """Each fold's model's ``predict(X, **kwargs)``, a list in fold order."""
        return [e.predict(X, **kwargs) for e in self.estimators]

    def predict_proba(self, X, **kwargs):
        """Each fold's model's ``predict_proba(X, **kwargs)`` (classification)."""
        self._check_method("predict_proba")
        return [e.predict_proba(X, **kwargs) for e in self.estimators]

    def predict_out_of_fold(self, X, y=None, method="predict"):
        """Each row of X (the X given to ``cv``, its rows in their order; a dask
        collection partitioned as it was) predicted by the model of the fold that held it
        out, with ``method`` ``"predict"`` or ``"predict_proba"``: scikit-learn's
        ``cross_val_predict``.  ``y``: the labels given to ``cv``, needed only when its
        folds were stratified.  In-memory X gives numpy, as ``cross_val_predict``; dask X
        a lazy collection, one task per partition: a Series (or a DataFrame of class
        probabilities) with X's index for a dask DataFrame, an array for a dask Array."""
        if method not in METHODS:
            raise ValueError(f"method={method!r} must be one of {list(METHODS)}")
        self._check_method(method)
        split = self._split
        if y is None and split.given is None and split.layout.stratified:
            raise ValueError("y is needed: cv's folds were stratified, and a row's fold "
                             "depends on its class; give the y given to cv")
        if is_dask_collection(X):
            return self._dask_out_of_fold(X, y, method)
        if is_dask_collection(y):
            raise TypeError("y is a dask collection but X is in memory; give both in memory")
        n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
        folds = self._split.of_rows(n_rows, y)
        return _OutOfFold(self.estimators, method)(X, folds)

    def _check_method(self, method):
        if method == "predict_proba" and not hasattr(self.estimators[0], "predict_proba"):
            raise ValueError("predict_proba: cv's models are regressions; use predict")

    def _dask_out_of_fold(self, X, y, method):
        """One task per partition of X (and of y, for stratified folds): a DataFrame's
        output is partitioned (and indexed) as X, so it lines up with X's columns."""
        import dask
        import dask.array as da
        import dask.dataframe as dd

        frame = isinstance(X, (dd.DataFrame, dd.Series))
        rows = self._split.partition_rows
        n_parts = X.npartitions if frame else len(X.chunks[0])
        if n_parts != len(rows):
            raise ValueError(f"X has {n_parts} partitions; cv's had {len(rows)}: give the "
                             "X given to cv, partitioned as it was")
        needs_y = self._split.given is None and self._split.layout.stratified
        if needs_y:
            if not is_dask_collection(y):
                raise TypeError("X is a dask collection but y is not; give y as cv had it")
            y_parts = y.npartitions if hasattr(y, "npartitions") else len(y.chunks[0])
            if y_parts != n_parts:
                raise ValueError(f"y has {y_parts} partitions but X has {n_parts}")
        job = _PartitionOutOfFold(_OutOfFold(self.estimators, method), self._split, frame)
        meta = self._meta(method)
        if frame:
            return dd.map_partitions(job.frame_part, X, *((y,) if needs_y else ()), meta=meta,
                                     align_dataframes=False)
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        parts = list(X.to_delayed().ravel())
        labels = list(y.to_delayed().ravel()) if needs_y else [None] * n_parts
        tail, dtype = meta.shape[1:], np.float64 if meta.ndim == 2 else meta.dtype
        return da.concatenate([da.from_delayed(dask.delayed(job)(part, i, label),
                                               shape=(n, *tail), dtype=dtype)
                               for i, (part, label, n) in enumerate(zip(parts, labels, rows))],
                              axis=0)

    def _meta(self, method):
        """An empty output of ``method`` (its dtype, and its columns: the classes)."""
        estimator = self.estimators[0]
        if method == "predict_proba":
            return pd.DataFrame({c: pd.Series(dtype=np.float64)
                                 for c in _class_columns(estimator)})
        return pd.Series(dtype=getattr(estimator, "classes_", np.zeros(0)).dtype)


class _OutOfFold:
    """Rows predicted by the model of their fold (in memory)."""

    def __init__(self, estimators, method):
        self.estimators = estimators
        self.method = method

    def __call__(self, X, folds):
        out = None
        for f, estimator in enumerate(self.estimators):
            rows = np.flatnonzero(folds == f)
            if len(rows) == 0 and (out is not None or f < len(self.estimators) - 1):
                continue  # (an empty X still gets an output of the method's shape)
            values = np.asarray(getattr(estimator, self.method)(_take_rows(X, rows)))
            if out is None:
                out = np.empty((len(folds), *values.shape[1:]), dtype=values.dtype)
            out[rows] = values
        return out


class _PartitionOutOfFold:
    """One partition's out-of-fold predictions (a dask task)."""

    def __init__(self, out_of_fold, split, frame):
        self.out_of_fold = out_of_fold
        self.split = split
        self.frame = frame

    def frame_part(self, part, labels=None, partition_info=None):
        """A dask DataFrame's partition (dask gives ``partition_info``: its number)."""
        return self(part, partition_info["number"], labels)

    def __call__(self, part, index, labels=None):
        folds = self.split.of_partition(index, part.shape[0], labels)
        values = self.out_of_fold(part, folds)
        if not self.frame:
            return values
        if values.ndim == 1:
            return pd.Series(values, index=part.index)
        return pd.DataFrame(values, index=part.index,
                            columns=_class_columns(self.out_of_fold.estimators[0]))


def _class_columns(classifier):
    """The columns of its ``predict_proba`` frames: its classes, as its own name them."""
    return [_column(c) for c in classifier.classes_]


def _take_rows(X, rows):
    """The rows ``rows`` (positions) of X: pandas, scipy.sparse, numpy or an array-like."""
    if isinstance(X, (pd.DataFrame, pd.Series)):
        return X.iloc[rows]
    if hasattr(X, "tocsr"):  # scipy.sparse
        return X.tocsr()[rows]
    return np.asarray(X)[rows]
