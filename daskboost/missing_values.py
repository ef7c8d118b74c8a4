"""xgboost's ``missing``: a feature value that stands for "no value".

NaN (the default) is always missing.  Another value given as ``missing`` is read as NaN
wherever it occurs in a numeric feature, before anything else sees the data: in
``fit``, its eval sets, ``cv``, prediction, ``apply`` and the contributions.  The rows
then learn and predict exactly as the same data with NaN in those places (the learned
default direction of each split), which is xgboost's meaning.

Dense data is compared in its own dtype (the value cast to it: ``missing=0.1`` matches
float32 data's 0.1, as xgboost's float32 matrix does); integer and boolean features
become float64.  In a scipy.sparse matrix an entry not stored is already missing; stored
entries equal to ``missing`` are dropped from it.  Categorical and string columns are not
compared (their values are categories, not numbers).  Dask collections are masked
lazily, block by block; a dask DataFrame is then read through pandas partitions rather
than a parquet lake's columns.
"""

import math
import numbers

import numpy as np
import pandas as pd

from .sparse import is_sparse


def check_missing(value):
    """``missing`` as a float (NaN, or a finite number); ValueError/TypeError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"missing={value!r:.80} must be a number (the value read as missing) "
                        "or NaN")
    value = float(value)
    if math.isinf(value):
        raise ValueError(f"missing={value!r} must be NaN or a finite number")
    return value


def with_missing_as_nan(X, missing):
    """X with every numeric value equal to ``missing`` as NaN (``missing`` checked;
    X as the estimators take it: numpy, scipy.sparse, pandas or dask).  X itself when
    ``missing`` is NaN; otherwise a masked copy (dask: a lazy one), X left unchanged."""
    missing = check_missing(missing)
    if math.isnan(missing):
        return X
    import dask.array as da
    import dask.dataframe as dd
    if isinstance(X, dd.DataFrame):
        meta = _masked_frame(X._meta, missing)
        return X.map_partitions(_masked_frame, missing, meta=meta)
    if isinstance(X, da.Array):
        meta = _masked_block(X._meta, missing)
        return X.map_blocks(_masked_block, missing, dtype=meta.dtype, meta=meta)
    if isinstance(X, pd.DataFrame):
        return _masked_frame(X, missing)
    return _masked_block(X, missing)


def _masked_block(block, missing):
    """A numpy or scipy.sparse block with ``missing`` as NaN (dense) or not stored
    (sparse)."""
    if is_sparse(block):
        return _masked_sparse(block, missing)
    values = _float_values(np.asarray(block))
    hits = values == values.dtype.type(missing)
    if not hits.any():
        return values
    return np.where(hits, values.dtype.type(np.nan), values)


def _float_values(values):
    """float32/float64 as they are; any other number as float64."""
    return values if values.dtype in (np.float32, np.float64) else values.astype(np.float64)


def _masked_sparse(matrix, missing):
    """The matrix without its stored entries equal to ``missing`` (the same format)."""
    import scipy.sparse as sp
    coo = matrix.tocoo()
    data = _float_values(coo.data)
    keep = data != data.dtype.type(missing)
    kept = sp.coo_matrix((data[keep], (coo.row[keep], coo.col[keep])), shape=matrix.shape)
    return kept.asformat(matrix.format)


def _masked_frame(frame, missing):
    """A pandas DataFrame with ``missing`` as NaN / <NA> in its numeric and boolean
    columns (non-nullable integers and booleans as float64); other columns as they
    are."""
    columns = {}
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype.kind not in "biuf":
            continue
        if isinstance(column.dtype, np.dtype):
            values = _float_values(column.to_numpy())
            column = pd.Series(values, index=frame.index, name=name)
            columns[name] = column.mask(values == values.dtype.type(missing))
        else:  # pandas' nullable dtypes keep their dtype, <NA> for missing
            columns[name] = column.mask((column == missing).fillna(False))
    if not columns:
        return frame
    out = frame.copy(deep=False)
    for name, column in columns.items():
        out[name] = column
    return out
