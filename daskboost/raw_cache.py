"""Raw partitions the scan pass read, kept in process for the bin pass.

A fit reads its training data twice: the scan pass sketches it, the bin pass bins it
with the cuts the sketches gave.  For a dask DataFrame every read is a parquet decode
(and a factorization of each string column, in both passes); on the flights lake that
was 40 of the bin pass's 85 ms.  In process (threaded or synchronous scheduler) the scan
task keeps the frame it was given here, and the bin pass takes it back instead of
reading the partition again: the same values, so the same model.

Memory: what is kept stays until the bin pass takes it (at most ``cap`` bytes a fit,
``runtime.Runtime``: a quarter of the memory budget); a partition that would go past
the cap is read again, as before.  A fit's leftovers (an error between the passes) go
with ``drop`` when its runtime closes.  Not on a cluster: the bin task of a partition
may run on another worker than its scan task.
"""

import threading

import numpy as np
import pandas as pd

# bytes counted for each value of an object column (a Python str: its header and
# characters; ``memory_usage(deep=True)`` would visit every value)
OBJECT_VALUE_BYTES = 64

_lock = threading.Lock()
_kept = {}    # fit id -> {partition key: ((x, y, w), their bytes)}
_bytes = {}   # fit id -> bytes kept


def keep(fit_id, key, parts, cap):
    """Keep a partition's raw ``parts`` (its X, y and weight blocks) under ``key`` for
    fit ``fit_id`` if the fit's kept bytes stay within ``cap``; returns whether it did."""
    size = sum(_nbytes(part) for part in parts)
    with _lock:
        used = _bytes.get(fit_id, 0)
        if used + size > cap:
            return False
        _kept.setdefault(fit_id, {})[key] = (parts, size)
        _bytes[fit_id] = used + size
        return True


def holds(fit_id, key):
    """Whether a partition is kept under ``key`` for fit ``fit_id``."""
    with _lock:
        return key in _kept.get(fit_id, ())


def take(fit_id, key):
    """The parts kept under ``key``, forgotten here (KeyError if none are)."""
    with _lock:
        parts, size = _kept[fit_id].pop(key)
        _bytes[fit_id] -= size
        return parts


def call_with_kept(fit_id, key, func, *args):
    """``func(x, y, w, *args)`` on the partition kept under ``key`` (a bin pass task)."""
    return func(*take(fit_id, key), *args)


def drop(fit_id):
    """Forget whatever fit ``fit_id`` still keeps."""
    with _lock:
        _kept.pop(fit_id, None)
        _bytes.pop(fit_id, None)


def _nbytes(part):
    """Bytes a block holds, about: its rows times the bytes of a row's values by dtype
    (``_value_bytes``).  ``memory_usage`` cost 0.3-0.5 ms for a Series or a 9-column
    frame, ~1% of a small lake fit."""
    if part is None:
        return 0
    if isinstance(part, pd.Series):
        return _value_bytes(part.dtype) * len(part)
    if isinstance(part, pd.DataFrame):
        return sum(_value_bytes(dtype) for dtype in part.dtypes.tolist()) * len(part)
    return int(getattr(part, "nbytes", 0))


def _value_bytes(dtype):
    """A value's bytes in a pandas column of ``dtype``: a numpy dtype's item size (an
    object value: ``OBJECT_VALUE_BYTES``), a category's code, a fixed-width extension
    type's width and its validity byte; any other (strings): ``OBJECT_VALUE_BYTES``."""
    if isinstance(dtype, pd.CategoricalDtype):
        return 8  # (codes of int8 to int64: counted at the widest)
    if isinstance(dtype, np.dtype):
        return OBJECT_VALUE_BYTES if dtype == object else dtype.itemsize
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # (nullable ints, floats, bools)
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind in "biufc":
        return numpy_dtype.itemsize + 1
    return OBJECT_VALUE_BYTES
