"""xgboost's ``DMatrix``: the data of a native-API call, held as it is given.

A script written for ``xgboost.train``/``xgboost.cv`` builds ``DMatrix(X, label=y,
weight=w, ...)`` and passes it on; ``daskboost.train``, ``daskboost.cv`` and
``Booster.predict`` take it here, so such a script runs with ``import daskboost as xgb``.
Nothing is read, binned or copied when a matrix is made: it holds X (numpy, pandas,
scipy.sparse, an Arrow table, or a dask collection) with its label, weights and base
margins, and the fit reads them as the estimators' ``fit`` does.  A file path is read
at once (``dmatrix_files``): xgboost's text URIs (``"train.txt?format=libsvm"``,
``"train.csv?format=csv&label_column=0"``) and daskboost's own binary file, which
``save_binary`` writes (not xgboost's binary format).  ``missing`` and
``feature_names`` apply to this matrix's X at once (a lazy mask or rename for dask
data); ``feature_types``, ``enable_categorical`` and ``max_bin`` are parameters of a fit
on it.  ``qid`` / ``group`` give ranking's query groups (``query_groups``);
``label_lower_bound`` / ``label_upper_bound`` each row's interval of event times
(``survival:aft``), which the fit reads as a label of two columns.
"""

import copy
import numbers
import os

import numpy as np
import pandas as pd

from .data import check_unique_names, interval_labels, is_dask_collection, table_as_frame
from .data_iter import DataIter, read_batches, remove_with
from .dmatrix_files import frame_values, read_matrix_file, write_matrix_file
from .local_threads import check_n_jobs
from .metrics import WholeRowsMetric
from .missing_values import with_missing_as_nan
from .params import one_given
from .query_groups import group_pointer, qid_block, qid_from_group
from .sparse import is_sparse

__all__ = ["DMatrix", "ExtMemQuantileDMatrix", "NativeObjective", "QuantileDMatrix",
           "matrix_arguments"]


class DMatrix:
    """xgboost's ``DMatrix``: ``data`` (in memory or a dask collection) with its
    ``label``, ``weight`` and ``base_margin``, aligned with it.

    ``missing``: a value read as missing in the numeric columns (NaN always is).
    ``feature_names``: the columns renamed to them (an array becomes a DataFrame).
    ``feature_types`` (``"q"``/``"c"`` per feature) and ``enable_categorical``: as the
    estimators' parameters, for a fit on this matrix; ``feature_weights``: as ``fit``'s.
    ``nthread``: the threads that parse a text file (as ``n_jobs``; default every core,
    or dask's ``num_workers``); a fit's threads are its own ``nthread``.  ``silent`` is
    accepted and unused.
    """

    # a matrix made from a ``DataIter`` writes its batches to files (read back as a dask
    # collection) rather than joining them in memory
    _spills_batches = False
    # the directory of those files (while this matrix lives), else None
    batch_files = None

    def __init__(self, data, label=None, *, weight=None, base_margin=None, missing=None,
                 silent=False, feature_names=None, feature_types=None, nthread=None,
                 group=None, qid=None, label_lower_bound=None, label_upper_bound=None,
                 feature_weights=None, enable_categorical=False, data_split_mode=None):
        if data_split_mode not in (None, 0, "row"):
            raise ValueError(f"{type(self).__name__}: data_split_mode={data_split_mode!r}: "
                             "data is split by rows (partitions) here")
        if isinstance(data, DataIter):  # xgboost's iterator: its batches, read once
            (data, label, weight, base_margin, batch_qid, names, types,
             directory) = read_batches(data, type(self).__name__, self._spills_batches)
            qid = one_given("qid", batch_qid, "by the iterator's batches", qid,
                            f"to {type(self).__name__}")
            remove_with(self, directory)
            self.batch_files = directory
            feature_names = names if feature_names is None else feature_names
            feature_types = types if feature_types is None else feature_types
        elif isinstance(data, (str, bytes, os.PathLike)):  # a file (dmatrix_files)
            read = read_matrix_file(data, type(self).__name__,
                                    check_n_jobs(nthread, "nthread"))
            data = read.data  # what is given here wins over the file's (as xgboost's)
            label = read.label if label is None else label
            weight = read.weight if weight is None else weight
            base_margin = read.base_margin if base_margin is None else base_margin
            feature_names = read.feature_names if feature_names is None else feature_names
            feature_types = read.feature_types if feature_types is None else feature_types
            feature_weights = (read.feature_weights if feature_weights is None
                               else feature_weights)
            enable_categorical = enable_categorical or read.enable_categorical
            if qid is None and group is None:  # (a libsvm file's qid:N, a binary file's)
                qid = read.qid
        self.data, self._sparse_names = _named(table_as_frame(data), feature_names)
        if missing is not None:  # (NaN: the data as it is)
            self.data = with_missing_as_nan(self.data, missing)
        self.label, self.weight, self.base_margin = label, weight, base_margin
        self.label_lower_bound = self.label_upper_bound = None
        self._set_bounds(label_lower_bound, label_upper_bound)
        self.qid = None
        self._set_queries(qid, group)
        self.feature_types = None if feature_types is None else list(feature_types)
        self.enable_categorical = bool(enable_categorical)
        self.feature_weights = feature_weights

    # ---- xgboost's accessors -------------------------------------------------------------
    @property
    def feature_names(self):
        """The columns' names (a DataFrame's, or those given with sparse data), else None.
        Set (xgboost's ``dtrain.feature_names = [...]``) as the constructor's
        ``feature_names``; None takes away the names of an array or sparse data."""
        if self._sparse_names is not None:
            return list(self._sparse_names)
        columns = getattr(self.data, "columns", None)
        return None if columns is None else [str(c) for c in columns]

    @feature_names.setter
    def feature_names(self, names):
        if names is not None:
            self.data, self._sparse_names = _named(self.data, names)
        elif self._sparse_names is not None:
            self._sparse_names = None
        elif hasattr(self.data, "columns"):
            raise ValueError("feature_names = None: the data is a DataFrame, whose columns "
                             "are its feature names; give other names to rename them")

    def get_data(self):
        """xgboost's ``get_data``: the features as a float32 scipy.sparse CSR matrix of the
        values that are not missing (a categorical column as its category codes).
        In-memory data only."""
        import scipy.sparse

        data = self.data
        if is_dask_collection(data):
            raise TypeError("get_data: the data is a dask collection; compute the rows "
                            "wanted first (get_data reads in-memory data)")
        if is_sparse(data):
            return scipy.sparse.csr_matrix(data, dtype=np.float32)
        if hasattr(data, "columns"):
            data = data.apply(lambda c: c.cat.codes.where(c.cat.codes >= 0)
                              if isinstance(c.dtype, pd.CategoricalDtype) else c)
            values = frame_values(data, "get_data", "")
        else:
            values = np.asarray(data)
        values = np.asarray(values, dtype=np.float32)
        rows, columns = np.nonzero(~np.isnan(values))
        return scipy.sparse.csr_matrix((values[rows, columns], (rows, columns)),
                                       shape=values.shape)

    def num_row(self):
        """The number of rows (a dask collection's computed when not known)."""
        n = self.data.shape[0]
        if isinstance(n, numbers.Integral):
            return int(n)
        if hasattr(self.data, "compute_chunk_sizes"):  # a dask array, chunk sizes unknown
            return int(self.data.copy().compute_chunk_sizes().shape[0])
        return int(len(self.data))  # a dask DataFrame

    def num_col(self):
        return int(self.data.shape[1])

    def get_label(self):
        return self.label

    def get_weight(self):
        return self.weight

    def get_base_margin(self):
        return self.base_margin

    def set_label(self, label):
        self.label = label

    def set_weight(self, weight):
        self.weight = weight

    def set_base_margin(self, margin):
        self.base_margin = margin

    def _set_bounds(self, lower=None, upper=None):
        """Survival's interval of each row's event time (either bound may be given now,
        the other kept); once both are known, the label a fit reads is the two of them
        as columns (``survival:aft``'s ``(2, n)`` labels), in place of ``label``."""
        if lower is not None:
            self.label_lower_bound = lower
        if upper is not None:
            self.label_upper_bound = upper
        if self.label_lower_bound is not None and self.label_upper_bound is not None:
            self.label = interval_labels(self.label_lower_bound, self.label_upper_bound)

    def _set_queries(self, qid, group):
        """Ranking's query groups: each row's query id (``qid``), or each query's size
        (``group``, turned into query ids: ``query_groups.qid_from_group``)."""
        if qid is not None and group is not None:
            raise ValueError(f"{type(self).__name__}: give qid or group, not both")
        if group is not None:
            if is_dask_collection(self.data):
                raise ValueError(f"{type(self).__name__}: group (each query's size) needs "
                                 "in-memory data; give a dask collection's qid instead "
                                 "(partitioned like it)")
            qid = qid_from_group(group, self.num_row())
        self.qid = qid

    def set_group(self, group):
        """xgboost's ``set_group``: the size of each query group, in order."""
        self._set_queries(None, group)

    def get_group(self):
        """The size of each query group (xgboost's ``get_group``; empty without)."""
        return np.diff(self.get_uint_info("group_ptr")).astype(np.uint32)

    def get_uint_info(self, field):
        """xgboost's ``get_uint_info("group_ptr")``: the query groups' row offsets
        (empty without query groups; a dask collection's query ids are computed)."""
        if field != "group_ptr":
            raise ValueError(f"get_uint_info({field!r}): the field is 'group_ptr'")
        if self.qid is None:
            return np.empty(0, dtype=np.uint32)
        qid = self.qid.compute() if hasattr(self.qid, "compute") else self.qid
        return group_pointer(qid_block(qid)).astype(np.uint32)

    def get_float_info(self, field):
        """xgboost's ``get_float_info``: ``"label"``, ``"weight"`` or ``"base_margin"`` as
        a float32 numpy array (empty when not set; a dask collection is computed)."""
        value = getattr(self, _float_field(field, "get_float_info"))
        if field == "label" and self.label_lower_bound is not None:
            value = None  # (the bounds stand in for it: get them by their names)
        if value is None:
            return np.empty(0, dtype=np.float32)
        if hasattr(value, "compute"):
            value = value.compute()
        return np.asarray(value, dtype=np.float32).reshape(-1)

    def set_float_info(self, field, data):
        """xgboost's ``set_float_info``: set ``"label"``, ``"weight"``, ``"base_margin"``,
        ``"label_lower_bound"`` or ``"label_upper_bound"``."""
        field = _float_field(field, "set_float_info")
        if field in _SURVIVAL_FIELDS:  # (lower, upper)
            self._set_bounds(*(data if name == field else None for name in _SURVIVAL_FIELDS))
        else:
            setattr(self, field, data)

    def set_info(self, *, label=None, weight=None, base_margin=None, feature_types=None,
                 feature_weights=None, group=None, qid=None, **others):
        """xgboost's ``set_info``: the fields given are set, the others kept (the label
        bounds of survival too)."""
        self._set_bounds(others.pop("label_lower_bound", None),
                         others.pop("label_upper_bound", None))
        if group is not None or qid is not None:
            self._set_queries(qid, group)
        if others:
            raise TypeError(f"set_info: {sorted(others)[0]!r} is not a field of a "
                            f"{type(self).__name__} here")
        for name, value in (("label", label), ("weight", weight), ("base_margin", base_margin),
                            ("feature_weights", feature_weights)):
            if value is not None:
                setattr(self, name, value)
        if feature_types is not None:
            self.feature_types = list(feature_types)

    def num_nonmissing(self):
        """The number of values that are not missing: NaN (and ``missing``) are; in a
        scipy.sparse matrix, so is every entry not stored.  A dask collection's is
        computed."""
        data = self.data
        if is_sparse(data):
            count = np.count_nonzero(~np.isnan(data.tocsr().data))
        elif hasattr(data, "notna"):  # a pandas or dask DataFrame
            count = data.notna().sum().sum()
        else:  # a numpy or dask array
            count = (~np.isnan(data)).sum()
        return int(count.compute() if hasattr(count, "compute") else count)

    def save_binary(self, fname, silent=True):
        """Write the matrix to ``fname`` as daskboost's own binary DMatrix file (a numpy
        ``.npz`` archive, not xgboost's binary format: xgboost does not read it, and
        ``DMatrix(fname)`` here reads it back): the data (a dense numeric array, or a
        sparse matrix as CSR) with the label, weight, base_margin, query ids, feature
        names, types and weights that are set.  Written atomically.  A dask collection, or categorical
        or string columns, are refused (write them as a parquet lake instead).
        ``silent`` is accepted and unused."""
        write_matrix_file(fname, self)

    def slice(self, rindex, allow_groups=False):
        """xgboost's ``slice``: a matrix of the rows at positions ``rindex`` (integers, in
        the order given), with their labels, weights and base margins and this matrix's
        parameters.  In-memory data, or a dask array with known chunk sizes; a dask
        DataFrame has no positions (select its rows with its index instead)."""
        rows = np.asarray(rindex)
        if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
            raise TypeError(f"slice(rindex): rindex must be a 1-D array of row positions; got "
                            f"{rows.dtype} of shape {rows.shape}")
        n = self.num_row()
        if rows.size and (rows.min() < -n or rows.max() >= n):
            raise IndexError(f"slice(rindex): a row position is outside [-{n}, {n}): "
                             f"[{rows.min()}, {rows.max()}]")
        if self.qid is not None and not allow_groups:
            raise ValueError("slice(rindex): this matrix has query groups; slicing rows "
                             "would split them (allow_groups=True slices the query ids too)")
        sliced = copy.copy(self)
        sliced.data = _rows_at(self.data, rows, "the data")
        sliced.qid = None if self.qid is None else _rows_at(self.qid, rows, "qid")
        for name in ("label", "weight", "base_margin") + _SURVIVAL_FIELDS:
            value = getattr(self, name)
            setattr(sliced, name, None if value is None else _rows_at(value, rows, name))
        return sliced

    def in_memory_batches(self):
        """A matrix of batch files (``ExtMemQuantileDMatrix``): each batch read back as an
        in-memory matrix, one at a time (``Booster.predict`` goes batch by batch)."""
        data = self.data
        parts = data.to_delayed() if hasattr(data, "dtypes") else data.to_delayed().ravel()
        margins = self.base_margin
        margins = [None] * len(parts) if margins is None else list(
            margins.to_delayed() if hasattr(margins, "dtype") and hasattr(margins, "index")
            else margins.to_delayed().ravel())
        for part, margin in zip(parts, margins):
            batch = copy.copy(self)
            batch.batch_files = None
            batch.data = part.compute()
            batch.label = batch.weight = None
            batch.base_margin = None if margin is None else margin.compute()
            yield batch

    # ---- what a fit takes from it --------------------------------------------------------
    def data_set(self):
        """``(X, y, sample_weight, base_margin, qid)``, as a fit takes a data set."""
        return self.data, self.label, self.weight, self.base_margin, self.qid

    @property
    def names_beside_data(self):
        """The features' names when the data cannot hold them (sparse data), else None:
        a fit on this matrix takes them with the data."""
        return None if self._sparse_names is None else list(self._sparse_names)

    def fit_params(self, params):
        """``params`` (a native API's dict) with this matrix's parameters under them: its
        features' types, ``enable_categorical``, and a ``QuantileDMatrix``'s
        ``max_bin``; the dict's own values win."""
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict of parameters; got "
                            f"{type(params).__name__}")
        own = {}
        if self.feature_types is not None:
            own["feature_types"] = list(self.feature_types)
        if self.enable_categorical:
            own["enable_categorical"] = True
        return {**own, **self._more_params(), **params}

    def _more_params(self):
        return {}

    def feature_weights_or(self, argument, caller):
        """The ``feature_weights`` given to ``caller`` or this matrix's: one of them."""
        return one_given("feature_weights", argument, f"to {caller}", self.feature_weights,
                         f"to the {type(self).__name__}")


_SURVIVAL_FIELDS = ("label_lower_bound", "label_upper_bound")
_FLOAT_FIELDS = ("label", "weight", "base_margin") + _SURVIVAL_FIELDS


def _float_field(field, caller):
    if field not in _FLOAT_FIELDS:
        raise ValueError(f"{caller}({field!r}): the fields are {', '.join(_FLOAT_FIELDS)}")
    return field


def _rows_at(values, rows, what):
    """``values``' rows at positions ``rows`` (``DMatrix.slice``)."""
    if hasattr(values, "iloc") and not hasattr(values, "compute"):
        return values.iloc[rows]
    if is_sparse(values):
        return values.tocsr()[rows]
    if hasattr(values, "compute"):
        if not hasattr(values, "chunks"):
            raise TypeError(f"slice: {what} is a dask DataFrame or Series, which has no row "
                            "positions; select its rows by its index (or give a dask array)")
        if any(np.isnan(c) for c in values.chunks[0]):
            raise ValueError(f"slice: {what} is a dask array of unknown chunk sizes; call "
                             "compute_chunk_sizes() first")
        return values[rows]
    return np.asarray(values)[rows]


class QuantileDMatrix(DMatrix):
    """xgboost's ``QuantileDMatrix``: the same as ``DMatrix`` here (every fit bins its
    data with the training data's cuts, so ``ref`` is accepted, not needed); ``max_bin``
    is the estimators' parameter, for a fit on this matrix."""

    def __init__(self, data, label=None, *, max_bin=None, ref=None,
                 max_quantile_batches=None, **kwargs):
        super().__init__(data, label, **kwargs)
        self.max_bin = max_bin

    def _more_params(self):
        return {} if self.max_bin is None else {"max_bin": self.max_bin}


class ExtMemQuantileDMatrix(QuantileDMatrix):
    """xgboost's ``ExtMemQuantileDMatrix(it)``: the batches of a ``DataIter`` written to
    files of a cache directory (beside the iterator's ``cache_prefix``), one partition
    each of the dask collection this matrix holds; every pass over the raw data reads
    them from disk.  Give the fit a ``memory_budget`` to keep its binned blocks on disk
    too.  The directory is removed with the matrix."""

    _spills_batches = True

    def __init__(self, data, label=None, *, max_bin=None, ref=None,
                 max_quantile_batches=None, **kwargs):
        if not isinstance(data, DataIter):
            raise TypeError(f"ExtMemQuantileDMatrix takes a daskboost.DataIter (xgboost's "
                            f"external-memory iterator); got {type(data).__name__}: give "
                            "other data to DMatrix or QuantileDMatrix")
        super().__init__(data, label, max_bin=max_bin, ref=ref,
                         max_quantile_batches=max_quantile_batches, **kwargs)


class NativeObjective:
    """xgboost's native custom objective, ``obj(predt, dtrain) -> (grad, hess)``, as the
    estimators' callable objective ``f(y_true, y_pred)``: called partition by partition,
    ``dtrain`` a ``PartitionRows`` of the partition's labels.  The estimators multiply
    the gradients and hessians by the sample weights themselves, so ``get_weight()``
    gives an empty array, as xgboost's does for unweighted data (an ``obj`` that weighs
    its rows only when there are weights gives the weighted gradients once)."""

    def __init__(self, obj):
        if not callable(obj):
            raise TypeError(f"obj must be a function obj(predt, dtrain) -> (grad, hess); got "
                            f"{type(obj).__name__}")
        self.obj = obj
        self.__name__ = getattr(obj, "__name__", type(obj).__name__)

    def __call__(self, y_true, y_pred):
        return self.obj(y_pred, PartitionRows(y_true))


class NativeMetric(WholeRowsMetric):
    """xgboost's native custom metric, ``custom_metric(predt, dmatrix) -> (name, value)``,
    called once per eval set and round on all its rows (``metrics.WholeRowsMetric``).

    ``predt`` is what ``Booster.predict`` gives: probabilities for ``binary:logistic``,
    ``(n, K)`` for ``multi:softprob``, and the raw margins for a custom objective (as
    xgboost's ``output_margin=callable(obj)``); ``dmatrix`` a ``PartitionRows`` of the
    eval set's labels and weights.  The metric's name is the
    one the function returns, known from its first call on; it must not change.  It
    is evaluated after the eval set's built-in metrics (``beside_default``: the
    objective's default metric stays when ``eval_metric`` is not given, unless
    ``beside_default=False``: xgboost's ``disable_default_eval_metric``), so early
    stopping watches it; ``maximize`` says which way is better.
    """

    def __init__(self, func, maximize=False, beside_default=True):
        if not callable(func):
            raise TypeError(f"custom_metric must be a function f(predt, dmatrix) -> (name, "
                            f"value); got {type(func).__name__}")
        self.func = func
        self.name = getattr(func, "__name__", type(func).__name__)  # until its first call
        self._named = False
        self.higher_is_better = bool(maximize)
        self.beside_default = beside_default

    def value(self, y, pred, weight):
        result = self.func(pred, PartitionRows(y, weight))
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str)
                and result[0]):
            raise TypeError(f"custom_metric {self.name!r} must return one (name, value) pair, "
                            f"the name a non-empty string; got {result!r:.120}")
        name, value = result
        if self._named and name != self.name:
            raise ValueError(f"custom_metric returned the name {name!r} after {self.name!r}: a "
                             "metric's name must not change between calls")
        self.name, self._named = name, True
        return value


class PartitionRows:
    """What a native custom objective or metric reads of its ``dtrain``/``dmatrix``: the
    labels (float32, as xgboost's) and the weights (empty when there are none) of the
    rows it is given."""

    def __init__(self, label, weight=None):
        self._label = np.asarray(label, dtype=np.float32)
        self._weight = (np.empty(0, dtype=np.float32) if weight is None
                        else np.asarray(weight, dtype=np.float32))

    def get_label(self):
        return self._label

    def get_weight(self):
        return self._weight

    def get_base_margin(self):
        return np.empty(0, dtype=np.float32)

    def num_row(self):
        return int(self._label.shape[0])


def training_data(caller, X, dtrain):
    """``caller``'s training data: ``X``, or ``dtrain``, xgboost's keyword for it."""
    if dtrain is None:
        if X is None:
            raise TypeError(f"{caller}() is missing its training data: X (or dtrain, a "
                            "DMatrix)")
        return X
    if X is not None:
        raise TypeError(f"{caller}(): X and dtrain are the same argument; give one")
    return dtrain


def with_native_objective(params, obj):
    """``params`` with xgboost's native custom objective ``obj`` as the objective."""
    if obj is None or not isinstance(params, dict):
        return params
    if params.get("objective") is not None:
        raise ValueError(f"obj and params['objective']={params['objective']!r}: give one "
                         "objective")
    return {**params, "objective": NativeObjective(obj)}


def with_native_metric(eval_metric, custom_metric, maximize, beside_default=True):
    """``eval_metric`` (a name, a callable, a list of them, or None) with xgboost's native
    ``custom_metric`` after it (``NativeMetric``; ``beside_default``: as its), or as it
    is when there is none."""
    if custom_metric is None:
        if maximize is not None:
            raise ValueError(f"maximize={maximize!r} is custom_metric's direction; there is no "
                             "custom_metric (a built-in metric has its own direction)")
        return eval_metric
    if maximize is not None and not isinstance(maximize, (bool, np.bool_)):
        raise TypeError(f"maximize={maximize!r} must be True, False or None")
    given = ([] if eval_metric is None else list(eval_metric)
             if isinstance(eval_metric, (list, tuple)) else [eval_metric])
    return given + [NativeMetric(custom_metric, bool(maximize), beside_default)]


def matrix_arguments(caller, matrix, rounds_given_as_y, num_boost_round, **unused):
    """``caller`` (``train``/``cv``) called as xgboost's, ``(params, dtrain,
    num_boost_round)``: the third positional argument, in daskboost's ``y`` place, is
    the number of rounds.  Returns the rounds; TypeError when it is not a number, or
    when both it and ``num_boost_round`` are given, or when one of ``unused`` (the data
    arguments that the matrix holds) is given too."""
    given = [name for name, value in unused.items() if value is not None]
    if given:
        raise TypeError(f"{caller}: {given[0]} is held by the {type(matrix).__name__} "
                        f"(give it to the matrix)")
    if rounds_given_as_y is None:
        return num_boost_round
    if isinstance(rounds_given_as_y, bool) or not isinstance(rounds_given_as_y,
                                                             numbers.Integral):
        raise TypeError(f"{caller}(params, dtrain, ...): with a {type(matrix).__name__} the "
                        "labels are the matrix's; the third argument is num_boost_round, "
                        f"got {type(rounds_given_as_y).__name__}")
    if num_boost_round is not None:
        raise TypeError(f"{caller}: num_boost_round given twice")
    return int(rounds_given_as_y)


def _named(data, feature_names):
    """``(data, names)``: ``data`` with its features named ``feature_names``, and None; a
    dense array becomes a frame with those columns.  Sparse data (a scipy.sparse matrix, a
    dask array of them) stays as it is, and the names come second: a fit takes them with
    it (``partition_input``'s ``feature_names``)."""
    if feature_names is None:
        return data, None
    names = [str(n) for n in feature_names]
    n_features = data.shape[1]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names; the data has {n_features} "
                         "features")
    check_unique_names(names, "feature_names has")
    if is_sparse(data) or is_sparse(getattr(data, "_meta", None)):
        return data, names
    if hasattr(data, "columns"):
        return data.rename(columns=dict(zip(data.columns, names))), None
    if hasattr(data, "to_dask_dataframe"):  # a dask array
        return data.to_dask_dataframe(columns=names), None
    import pandas as pd
    return pd.DataFrame(data, columns=names), None
