"""The folds' models of a cross-validation (``cv(..., return_cvbooster=True)``), and
their out-of-fold predictions.

``CVBooster`` is LightGBM's ``CVBooster`` for daskboost: the folds' models
(``boosters``, and the same models as fitted scikit-learn estimators, ``estimators``)
and ``best_iteration``; ``predict`` and ``predict_proba`` return one prediction per
fold.  It also keeps how ``cv`` split the rows (``FoldSplit``), so
``predict_out_of_fold(X, y)`` predicts each row of the X given to ``cv`` with the model
of the fold that held that row out: scikit-learn's ``cross_val_predict``, on dask data
too, one task per partition and no row read twice.

The fold of a row is found as ``cv`` found it: the folds the user gave, or the folds
``cv`` dealt (``folds.FoldLayout``, keyed on the seed and the row's global index, and
for stratified folds on its class among the rows of its class before it).  For dask X
each partition needs its first row's global index, taken from the rows ``cv``'s scan
counted in each partition; so X is partitioned with y (and the weights) as ``cv``
partitioned them (``data.partition_input``), and checked: the number of partitions
before any work, each partition's rows in its task.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from dask.base import is_dask_collection

from .data import partition_input
from .folds import FoldLayout
from .lake import ParquetColumns
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
        offset = int(sum(self.partition_rows[:index]))
        if self.given is not None:
            return np.asarray(self.given[offset:offset + n_rows], dtype=np.int64)
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

    @classmethod
    def of_boosters(cls, template, boosters, best_iteration, split):
        """The folds' ``boosters`` as estimators with ``template``'s parameters (a
        classifier's classes: ``split.classes``)."""
        estimators = []
        for booster in boosters:
            estimator = type(template)(**template.get_params())
            estimator._set_fitted(booster)
            if split.classes is not None:
                estimator._set_classes(split.classes)
            estimator.evals_result_ = {}
            estimators.append(estimator)
        return cls(estimators, best_iteration, split)

    @property
    def boosters(self):
        return [e.get_booster() for e in self.estimators]

    def __len__(self):
        return len(self.estimators)

    def __repr__(self):
        return (f"CVBooster({len(self)} folds of {type(self.estimators[0]).__name__}, "
                f"best_iteration={self.best_iteration})")

    def predict(self, X, **kwargs):
        """Each fold's model's ``predict(X, **kwargs)``, a list in fold order."""
        return [e.predict(X, **kwargs) for e in self.estimators]

    def predict_proba(self, X, **kwargs):
        """Each fold's model's ``predict_proba(X, **kwargs)`` (classification)."""
        self._check_method("predict_proba")
        return [e.predict_proba(X, **kwargs) for e in self.estimators]

    def predict_out_of_fold(self, X, y=None, method="predict", sample_weight=None):
        """Each row of X predicted by the model of the fold that held it out, with
        ``method`` ``"predict"`` or ``"predict_proba"``: scikit-learn's
        ``cross_val_predict``.  X, y and ``sample_weight``: as given to ``cv``, the rows
        in their order.  y is needed for dask X (``cv`` partitioned X, y and the weights
        together, and a parquet lake's read plan depends on the columns read) and for
        stratified folds; the weights only where ``cv`` had them with dask X.

        In-memory X gives numpy, as ``cross_val_predict``; dask X a lazy collection, one
        task per partition ``cv`` read: a Series (or a DataFrame of class probabilities)
        for a dask DataFrame, each partition's rows with their index where it has one;
        an array for a dask Array."""
        if method not in METHODS:
            raise ValueError(f"method={method!r} must be one of {list(METHODS)}")
        self._check_method(method)
        if is_dask_collection(X):
            if y is None:
                raise ValueError("y is needed with dask X: give the y given to cv (cv "
                                 "partitioned X and y together)")
            return self._dask_out_of_fold(X, y, sample_weight, method)
        if y is None and self._needs_labels():
            raise ValueError("y is needed: cv's folds were stratified, and a row's fold "
                             "depends on its class; give the y given to cv")
        if is_dask_collection(y):
            raise TypeError("y is a dask collection but X is in memory; give both in memory")
        n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
        folds = self._split.of_rows(n_rows, y)
        return _OutOfFold(self.estimators, method)(X, folds)

    def _check_method(self, method):
        if method == "predict_proba" and not hasattr(self.estimators[0], "predict_proba"):
            raise ValueError("predict_proba: cv's models are regressions; use predict")

    def _dask_out_of_fold(self, X, y, sample_weight, method):
        """One task per partition ``cv`` read: X (with y, when given) is partitioned as
        ``cv`` partitioned it (``data.partition_input``: dask's partitions, or for a
        parquet lake its own read plan, which may group files or pieces)."""
        import dask
        import dask.array as da
        import dask.dataframe as dd
        from dask.delayed import Delayed

        if not is_dask_collection(y):
            raise TypeError("X is a dask collection but y is not; give y as cv had it")
        params = self.estimators[0].get_params()  # (cv's: how it typed the columns)
        data = partition_input(X, y, sample_weight, None, params["enable_categorical"],
                               params["feature_types"])
        rows = self._split.partition_rows
        if data.n_partitions != len(rows):
            raise ValueError(f"X has {data.n_partitions} partitions; cv's had {len(rows)}: "
                             "give the X (and y) given to cv, partitioned as they were")
        labels = data.y_keys if self._needs_labels() else [None] * len(rows)
        frame = isinstance(X, (dd.DataFrame, dd.Series))
        job = _PartitionOutOfFold(_OutOfFold(self.estimators, method), self._split, frame)
        outputs = [dask.delayed(job)(Delayed(x, data.graph), i,
                                     None if label is None else Delayed(label, data.graph))
                   for i, (x, label) in enumerate(zip(data.x_keys, labels))]
        meta = self._meta(method)
        if frame:
            return dd.from_delayed(outputs, meta=meta, verify_meta=False)
        tail, dtype = meta.shape[1:], np.float64 if meta.ndim == 2 else meta.dtype
        return da.concatenate([da.from_delayed(out, shape=(n, *tail), dtype=dtype)
                               for out, n in zip(outputs, rows)], axis=0)

    def _needs_labels(self):
        return self._split.given is None and self._split.layout.stratified

    def _meta(self, method):
        """An empty output of ``method`` (its dtype, and its columns: the classes)."""
        estimator = self.estimators[0]
        if method == "predict_proba":
            return pd.DataFrame({c: pd.Series(dtype=np.float64)
                                 for c in _class_columns(estimator)})
        if self._split.classes is not None:  # class labels
            return pd.Series(dtype=self._split.classes.dtype)
        return pd.Series(dtype=np.float64)


class _OutOfFold:
    """Rows predicted by the model of their fold (in memory)."""

    def __init__(self, estimators, method):
        self.estimators = estimators
        self.method = method

    def __call__(self, X, folds):
        out = None
        for f, estimator in enumerate(self.estimators):
            rows = np.flatnonzero(folds == f)
            if len(rows):
                out = self._into(out, rows, self._predict(estimator, X, rows), len(folds))
        if out is None:  # no rows: an empty output of the method's shape and type
            out = self._predict(self.estimators[0], X, np.flatnonzero(folds))
        return out

    def _predict(self, estimator, X, rows):
        return np.asarray(getattr(estimator, self.method)(_take_rows(X, rows)))

    @staticmethod
    def _into(out, rows, values, n_rows):
        if out is None:
            out = np.empty((n_rows, *values.shape[1:]), dtype=values.dtype)
        out[rows] = values
        return out


class _PartitionOutOfFold:
    """One partition's out-of-fold predictions (a dask task)."""

    def __init__(self, out_of_fold, split, frame):
        self.out_of_fold = out_of_fold
        self.split = split
        self.frame = frame

    def __call__(self, part, index, labels=None):
        if isinstance(part, ParquetColumns):  # a numeric lake's partition, read here
            part = part.to_numpy()
        folds = self.split.of_partition(index, part.shape[0], labels)
        values = self.out_of_fold(part, folds)
        if not self.frame:
            return values
        # (a lake's partition may be read as an array: no index of its own)
        index = getattr(part, "index", None)
        if values.ndim == 1:
            return pd.Series(values, index=index)
        return pd.DataFrame(values, index=index,
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
