"""xgboost's data iterators: a ``DataIter`` handing over its data batch by batch.

A script written for xgboost's external memory subclasses ``xgboost.DataIter`` with
``next(input_data)`` (hand one batch to ``input_data(data=X, label=y, ...)``, return
False at the end) and ``reset()``, and builds ``DMatrix(it)``, ``QuantileDMatrix(it)`` or
``ExtMemQuantileDMatrix(it)`` from it.  Here the iterator is run once, when the matrix
is made (``read_batches``):

- ``DMatrix`` / ``QuantileDMatrix``: the batches are joined into one in-memory data set
  (numpy, pandas or scipy.sparse, as the batches are).
- ``ExtMemQuantileDMatrix``: each batch is written to a file of its own in a cache
  directory (``.npy`` for arrays, parquet for frames) and the matrix holds a dask
  collection with one partition per file, read from disk by every pass over the raw
  data, as a parquet lake is.  The binned blocks of a fit stay in memory unless the fit
  has a ``memory_budget`` (then they are spilled too).  The directory is removed with
  the matrix (or at exit).

Batches must agree: the same columns (names and count), each with a label if the first
has one (likewise weights, base margins and ranking's query ids: each batch holds
whole queries, in non-decreasing ``qid`` across the batches, as a fit checks);
survival's ``label_lower_bound`` and ``label_upper_bound`` make a batch's label (both or
neither).  xgboost's ``group`` sizes are refused by name.
"""

import os
import shutil
import tempfile
import weakref

import numpy as np
import pandas as pd

from .data import interval_labels, is_dask_collection
from .sparse import is_sparse

__all__ = ["DataIter", "read_batches", "remove_with"]

_FIELDS = ("label", "weight", "base_margin", "qid")
_REFUSED = ("group",)
_BOUNDS = ("label_lower_bound", "label_upper_bound")


class DataIter:
    """xgboost's ``DataIter``: subclass it with ``next(input_data) -> bool`` and
    ``reset()``.  ``cache_prefix``: where ``ExtMemQuantileDMatrix`` writes its batch
    files (a directory is made beside that prefix; default: the system's temporary
    directory).  ``release_data``, ``on_host`` and ``min_cache_page_bytes`` are
    xgboost's and accepted (a batch is never kept by the iterator machinery here)."""

    def __init__(self, cache_prefix=None, release_data=True, *, on_host=True,
                 min_cache_page_bytes=None):
        self.cache_prefix = cache_prefix
        self.release_data = release_data
        self.on_host = on_host
        self.min_cache_page_bytes = min_cache_page_bytes

    def next(self, input_data):
        """Hand the next batch to ``input_data(data=..., label=..., ...)`` and return
        True; return False when there is none left."""
        raise NotImplementedError(f"{type(self).__name__}.next(input_data) must be written "
                                  "(a subclass of DataIter hands over its batches)")

    def reset(self):
        """Go back to the first batch."""
        raise NotImplementedError(f"{type(self).__name__}.reset() must be written (a "
                                  "subclass of DataIter goes back to its first batch)")


class _Batches:
    """What ``input_data`` received, batch by batch."""

    def __init__(self, caller):
        self.caller = caller
        self.data, self.fields = [], {name: [] for name in _FIELDS}
        self.feature_names = self.feature_types = None

    def __call__(self, *, data, label=None, weight=None, base_margin=None, qid=None,
                 feature_names=None, feature_types=None, **others):
        where = f"{self.caller}: batch {len(self.data)}"
        given = sorted(k for k in _REFUSED if others.get(k) is not None)
        if given and given[0] == "group":
            raise ValueError(f"{where}: group (query sizes) is not read from a batch here; "
                             "give each row's query id (qid=...)")
        bounds = [others.get(k) for k in _BOUNDS]
        if any(b is not None for b in bounds):  # survival: the label is the interval
            if any(b is None for b in bounds):
                raise ValueError(f"{where}: give both label_lower_bound and "
                                 "label_upper_bound (each row's interval of event times)")
            label = interval_labels(*bounds)
        unknown = sorted(set(others) - set(_REFUSED) - set(_BOUNDS))
        if unknown:
            raise TypeError(f"{where}: input_data() got an unexpected keyword {unknown[0]!r}")
        data = _batch_data(data, where)
        if self.data and _columns(data) != _columns(self.data[0]):
            raise ValueError(f"{where}: its columns {_columns(data)[:10]} are not the first "
                             f"batch's {_columns(self.data[0])[:10]}")
        if self.data and type(data) is not type(self.data[0]) \
                and not (is_sparse(data) and is_sparse(self.data[0])):
            raise TypeError(f"{where}: a {type(data).__name__} after a "
                            f"{type(self.data[0]).__name__}: give every batch as the first")
        for name, value in (("label", label), ("weight", weight),
                            ("base_margin", base_margin), ("qid", qid)):
            if self.data and (value is None) != (self.fields[name][0] is None):
                raise ValueError(f"{where}: {name} is {'missing' if value is None else 'given'}"
                                 f", but the first batch's {name} was "
                                 f"{'given' if value is None else 'not'}")
            if value is not None:
                value = np.asarray(value)
                if value.shape[0] != data.shape[0]:
                    raise ValueError(f"{where}: {name} has {value.shape[0]} rows, the data "
                                     f"{data.shape[0]}")
            self.fields[name].append(value)
        if not self.data:
            self.feature_names, self.feature_types = feature_names, feature_types
        self.data.append(data)


def _batch_data(data, where):
    if isinstance(data, pd.DataFrame) or is_sparse(data):
        return data
    if is_dask_collection(data):
        raise TypeError(f"{where}: data is a dask collection; a DataIter hands over "
                        "in-memory batches (give the dask collection to DMatrix itself)")
    values = np.asarray(data)
    if values.ndim != 2:
        raise ValueError(f"{where}: data must be two-dimensional; got shape {values.shape}")
    return values


def _columns(data):
    return [str(c) for c in data.columns] if isinstance(data, pd.DataFrame) \
        else list(range(data.shape[1]))


def read_batches(it, caller, spill=False):
    """Run the iterator ``it`` once (``reset()``, then ``next`` until False).  Returns
    ``(data, label, weight, base_margin, qid, feature_names, feature_types, directory)``: the
    batches joined in memory (``directory`` None), or with ``spill`` a dask collection
    of one partition per batch, read from the files in the new cache ``directory``
    (the caller removes it when done: ``remove_with``)."""
    if not isinstance(it, DataIter):
        raise TypeError(f"{caller}: {type(it).__name__} is not a daskboost.DataIter")
    batches = _Batches(caller)
    it.reset()
    while it.next(batches):
        pass
    it.reset()
    if not batches.data:
        raise ValueError(f"{caller}: the iterator handed over no batch")
    if not spill:
        return (*_joined(batches), batches.feature_names, batches.feature_types, None)
    if is_sparse(batches.data[0]):
        raise TypeError(f"{caller}: sparse batches are not written to disk here; "
                        "DMatrix(it) joins them in memory")
    directory = _cache_directory(it)
    try:
        spilled = _spilled(batches, directory)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return (*spilled, batches.feature_names, batches.feature_types, directory)


def remove_with(owner, directory):
    """Remove ``directory`` when ``owner`` is garbage collected (or at exit)."""
    if directory is not None:
        weakref.finalize(owner, shutil.rmtree, directory, True)


def _joined(batches):
    first = batches.data[0]
    if isinstance(first, pd.DataFrame):
        data = pd.concat(batches.data, ignore_index=True)
    elif is_sparse(first):
        import scipy.sparse
        data = scipy.sparse.vstack(batches.data, format="csr")
    else:
        data = np.concatenate(batches.data)
    fields = [None if values[0] is None else np.concatenate(values)
              for values in batches.fields.values()]
    return (data, *fields)


def _spilled(batches, directory):
    """The batches written to ``directory``, as lazy dask collections read back from
    there: a frame's batches as a dask DataFrame (their fields as dask Series), an
    array's as a dask array (and dask arrays)."""
    import dask
    import dask.array as da
    import dask.dataframe as dd

    frames = isinstance(batches.data[0], pd.DataFrame)
    parts = []
    for i, data in enumerate(batches.data):
        if frames:
            path = os.path.join(directory, f"batch-{i:05d}.parquet")
            data.reset_index(drop=True).to_parquet(path, index=False)
            parts.append(dask.delayed(pd.read_parquet)(path))
        else:
            parts.append(_saved_array(directory, f"data-{i:05d}", data))
    out = [dd.from_delayed(parts, meta=batches.data[0].iloc[:0], verify_meta=False)
           if frames else da.concatenate(parts)]
    for name, values in batches.fields.items():
        if values[0] is None:
            out.append(None)
        elif frames and values[0].ndim == 1:  # a Series per batch, partitioned as X
            paths = [_saved(directory, f"{name}-{i:05d}", v) for i, v in enumerate(values)]
            out.append(dd.from_delayed([dask.delayed(_read_series)(p) for p in paths],
                                       meta=pd.Series(dtype=values[0].dtype),
                                       verify_meta=False))
        else:
            out.append(da.concatenate([_saved_array(directory, f"{name}-{i:05d}", v)
                                       for i, v in enumerate(values)]))
    return tuple(out)


def _saved(directory, name, values):
    path = os.path.join(directory, name + ".npy")
    np.save(path, np.ascontiguousarray(values))
    return path


def _read_series(path):
    return pd.Series(np.load(path))


def _saved_array(directory, name, values):
    """``values`` written to ``directory/name.npy``, as a lazy dask array that a task
    reads back when it needs it."""
    import dask
    import dask.array as da

    return da.from_delayed(dask.delayed(np.load)(_saved(directory, name, values)),
                           shape=np.shape(values), dtype=np.asarray(values).dtype)


def _cache_directory(it):
    """A new directory for the batch files: beside the iterator's ``cache_prefix``
    (xgboost's: a path prefix), else in the system's temporary directory."""
    prefix = it.cache_prefix
    if prefix:
        parent = os.path.dirname(os.path.abspath(prefix))
        os.makedirs(parent, exist_ok=True)
        return tempfile.mkdtemp(prefix=os.path.basename(prefix) + "-daskboost-", dir=parent)
    return tempfile.mkdtemp(prefix="daskboost-extmem-")
