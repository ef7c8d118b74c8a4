"""scipy.sparse feature blocks: a stored entry is a value, an entry not stored is missing.

That is xgboost's meaning of sparse input (its ``missing=np.nan``): a sparse matrix
trains and predicts like the dense matrix with NaN wherever nothing is stored.  Explicit
zeros are zeros; an explicit NaN is missing (like an entry not stored); ``+-inf`` are
values, as in dense input (the highest / lowest bin).

A sparse block (a scipy.sparse matrix given in memory, or a chunk of a dask array) stays
sparse in the passes over the raw data: ``rows`` puts it in one canonical form (CSR,
float), the scan pass sketches each feature's stored values only (``summarize``), the
binning kernel codes the stored entries and gives every other entry the missing code
(``binning.BinMapper.transform``).  Only predictions need dense rows: they are made
``DENSE_CELLS`` cells at a time (``add_margin``), never a whole block.

scipy is not a dependency of daskboost: a block can only be sparse if ``scipy.sparse``
has been imported (by whoever made it).
"""

import sys

import numpy as np

from .sketch import summarize_columns

# cells of a sparse block densified at once to predict (8 MiB of float64)
DENSE_CELLS = 2 ** 20


def is_sparse(obj):
    """True for a scipy.sparse matrix or array."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(obj)


def canonical(block):
    """The block as CSR in canonical form (sorted column indices, duplicates summed, as
    scipy reads duplicates), values as given; the caller's matrix is never modified."""
    csr = block.tocsr()
    if not csr.has_canonical_format:
        csr = csr.copy() if csr is block else csr
        csr.sum_duplicates()
    return csr


def rows(block):
    """``canonical(block)`` with float values: float32 stays float32 (every float32 is
    exactly a float64, as for dense blocks), anything else becomes float64."""
    csr = canonical(block)
    if csr.dtype not in (np.float32, np.float64):
        csr = csr.astype(np.float64)
    return csr


def columns(csr):
    """The CSC form of a CSR block, row indices sorted within each column: column
    ``f``'s stored values are ``data[indptr[f]:indptr[f + 1]]``, in row order."""
    csc = csr.tocsc()
    if not csc.has_sorted_indices:
        csc.sort_indices()
    return csc


def stored_columns(block, features):
    """{feature: the values stored in its column, in row order} of a sparse block."""
    csc = columns(canonical(block))
    return {f: csc.data[csc.indptr[f]:csc.indptr[f + 1]] for f in features}


def summarize(csr, weights, size):
    """Per feature, the weighted quantile summary of its stored values (see
    ``sketch.summarize_columns``); ``weights``: one per row, or None."""
    csc = columns(csr)
    per_value = None if weights is None else np.asarray(weights, dtype=np.float64)[csc.indices]
    return summarize_columns(csc.indptr, csc.data, per_value, size, csr.shape[0])


def dense_rows(csr, start, stop):
    """Rows ``start:stop`` of a CSR block as a dense float64 array, NaN where nothing is
    stored."""
    out = np.full((stop - start, csr.shape[1]), np.nan)
    first, last = csr.indptr[start], csr.indptr[stop]
    row = np.repeat(np.arange(stop - start), np.diff(csr.indptr[start:stop + 1]))
    out[row, csr.indices[first:last]] = csr.data[first:last]
    return out


def add_margin(forest, csr, margin):
    """``forest.add_margin(X, margin)`` for a CSR block ``X``, ``DENSE_CELLS`` cells of
    it densified at a time (``dense_rows``): each row gets the additions it gets as a
    dense row with NaN where nothing is stored."""
    n_rows, n_features = csr.shape
    step = max(1, DENSE_CELLS // max(1, n_features))
    for start in range(0, n_rows, step):
        stop = min(n_rows, start + step)
        part = np.ascontiguousarray(margin[:, start:stop])  # a view when K == 1
        forest.add_margin(dense_rows(csr, start, stop), part)
        margin[:, start:stop] = part
