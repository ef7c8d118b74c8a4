"""Bin mapping: from merged quantile sketches to cut points, and the binning kernel.

Feature ``f`` has cut points ``cuts[f]`` (strictly increasing); a value ``v`` gets the
bin code ``#{c in cuts[f] : c < v}``, so bin ``b`` holds ``(cuts[b-1], cuts[b]]``.
Values below or above the training range fall into the first or last bin, ``-inf`` and
``+inf`` included.  Missing values (NaN) get ``missing_code``, one code past the largest
value bin of any feature, the same for every feature.

When a feature has at most ``max_bin`` distinct values every value has a bin of its own
(see ``sketch.cut_points``), and histogram split finding is the exact greedy algorithm.
Codes are uint8 when ``missing_code <= 255`` (``max_bin <= 255``, or fewer distinct
values), uint16 otherwise (up to ``max_bin=65535``).  At ``max_bin=256`` (the default)
a numeric feature's values get at most 255 bins when the training data has a missing
value in some numeric feature, so that the missing code is 255 and every code fits in
one byte (LightGBM counts its NaN bin in ``max_bin`` the same way): the 256th value bin
is worth less than codes of half the size (half the memory and the bytes every pass and
out-of-core block moves; the 1M-row benchmark fits ~5% faster, benchmarks/RESULTS.md).
Without missing values a feature keeps 256 bins and its codes, wider when binned, are
kept as uint8 (``narrowed``).
"""

import numba
import numpy as np
import pandas as pd

from .histogram import uniform_width
from .sketch import cut_points
from .sparse import is_sparse

MAX_BIN_LIMIT = 65535
# the number of codes one byte holds: at ``max_bin == ONE_BYTE_CODES`` with missing
# values, the values get one bin fewer (see the module docstring)
ONE_BYTE_CODES = 256


class BinMapper:
    """Cut points of every feature and the mapping of raw values to bin codes.

    Parameters
    ----------
    cuts : list of 1-D float64 arrays, one per feature.
    categories : {feature: sorted list of its categories} for categorical features
        (issue 13).  Such a feature's values are dictionary indices (``data.feature_block``
        with ``encoders``) and its cuts ``0, 1, ..., n - 2``: the code of a category is
        its index in the dictionary, missing (and unseen) values get ``missing_code``.
    """

    def __init__(self, cuts, categories=None):
        self.categories = dict(categories or {})
        cuts = list(cuts)
        for f, dictionary in self.categories.items():
            cuts[f] = np.arange(len(dictionary) - 1, dtype=np.float64)
        self.is_categorical = np.zeros(len(cuts), dtype=np.bool_)
        self.is_categorical[list(self.categories)] = True
        self.encoders = {f: pd.Index(d, dtype=object) for f, d in self.categories.items()}
        self.cuts = [np.asarray(c, dtype=np.float64) for c in cuts]
        self.n_bins = np.array([len(c) + 1 for c in self.cuts], dtype=np.int32)
        self.missing_code = int(self.n_bins.max()) if len(self.cuts) else 1
        self.n_codes = self.missing_code + 1
        # histogram layout (``histogram``): each feature's bins, then its missing cell.
        # With categorical features each feature is as wide as its own bins (one with
        # thousands of categories would widen every other); without, every feature is
        # as wide as the codes (its unused bins stay empty), so the kernels index
        # ``feature * width + code`` with no test for the missing code: on the 1M-row
        # benchmark, whose 4 ten-valued features make the widths differ, the general
        # indexing cost 9% more kernel time
        widths = (self.n_bins + 1 if self.categories
                  else np.full(len(self.cuts), self.n_codes, dtype=np.int64))
        self.cell_offsets = np.zeros(len(self.cuts) + 1, dtype=np.int64)
        self.cell_offsets[1:] = np.cumsum(widths)
        self.cell_width = uniform_width(self.cell_offsets)  # the kernels' fast indexing
        self.dtype = np.uint8 if self.n_codes <= 256 else np.uint16
        self._depths = np.array([_search_depth(len(c)) for c in self.cuts], dtype=np.int64)
        tables = [_eytzinger_table(c, d) for c, d in zip(self.cuts, self._depths)]
        self._table_offsets = np.zeros(len(tables), dtype=np.int64)
        self._table_offsets[1:] = np.cumsum([len(t) for t in tables])[:-1]
        self._tables = np.concatenate(tables) if tables else np.empty(0, dtype=np.float64)

    @classmethod
    def from_summaries(cls, summaries, max_bin, categories=None):
        """Choose each feature's cut points from its merged weighted quantile summary
        (categorical features: their dictionaries, see the class)."""
        categories = categories or {}
        value_bins = max_bin
        if max_bin == ONE_BYTE_CODES and any(
                summary.missing for f, summary in enumerate(summaries) if f not in categories):
            value_bins = max_bin - 1  # the missing code is then the 256th (module docstring)
        return cls([np.empty(0) if f in categories else cut_points(summary, value_bins)
                    for f, summary in enumerate(summaries)], categories)

    @property
    def has_categorical(self):
        return bool(self.categories)

    @property
    def n_features(self):
        return len(self.cuts)

    def transform(self, X):
        """Bin a float (n_rows, n_features) block; NaN becomes ``missing_code``.  A sparse
        block (CSR, ``sparse.rows``): its stored entries are binned, every other entry
        is missing."""
        if is_sparse(X):
            codes = np.full(X.shape, self.missing_code, dtype=self.dtype)
            _bin_stored_kernel(X.indptr, X.indices, X.data, self._tables, self._table_offsets,
                               self._depths, self.missing_code, codes)
            return codes
        codes = np.empty(X.shape, dtype=self.dtype)
        _bin_kernel(X, self._tables, self._table_offsets, self._depths, self.missing_code, codes)
        return codes

    def transform_columns(self, column, n_rows):
        """``transform`` of a block given one column at a time (``column(f)``: feature
        ``f``'s 1-D float values, ``n_rows`` of them): the same codes, one column of
        raw values held at a time."""
        codes = np.empty((n_rows, self.n_features), dtype=self.dtype)
        for f in range(self.n_features):
            values = np.ascontiguousarray(column(f)).reshape(n_rows, 1)
            _bin_column_kernel(values, self._tables[self._table_offsets[f]:],
                               self._depths[f], self.missing_code, codes, f)
        return codes

    def thresholds(self, features, bins):
        """Raw-value thresholds of the splits ``code <= bins[i]`` on ``features[i]``
        (-inf for bin -1: every present value goes right, a monotone-constrained split;
        +inf past the last cut; 0.0 where a node is a leaf (feature -1) or splits on a
        categorical feature)."""
        features = np.asarray(features)
        bins = np.asarray(bins)
        table = self._threshold_table()
        out = np.zeros(len(features), dtype=np.float64)
        numeric = features >= 0
        numeric[numeric] = ~self.is_categorical[features[numeric]]
        f, b = features[numeric], bins[numeric]
        out[numeric] = np.where(b < 0, -np.inf,
                                table[f, np.clip(b, 0, table.shape[1] - 1)])
        return out

    def _threshold_table(self):
        """(n_features, cuts + 1) float64: numeric feature f's cut points, then +inf
        (categorical features' rows all +inf, unused); made at the first call."""
        table = getattr(self, "_thresholds", None)
        if table is None:
            numeric = [c for f, c in enumerate(self.cuts) if not self.is_categorical[f]]
            width = max((len(c) for c in numeric), default=0) + 1
            table = np.full((self.n_features, width), np.inf, dtype=np.float64)
            for f, cuts in enumerate(self.cuts):
                if not self.is_categorical[f]:
                    table[f, :len(cuts)] = cuts
            self._thresholds = table
        return table


def narrowed(codes):
    """``codes`` as uint8 when they are wider but every one fits: at ``max_bin=256`` the
    value bins are codes 0..255 and only a missing value takes code 256, so a block
    with no missing value needs one byte a code.  The kernels then read half the bytes
    (the histogram kernel 9% faster, 500k rows x 28 features) and a budget holds twice
    the rows; the codes are the same numbers, so the models do not change.  Otherwise
    ``codes`` itself (a block with a missing value is found at its first one)."""
    if codes.dtype == np.uint8 or codes.size == 0:
        return codes
    out = np.empty(codes.shape, dtype=np.uint8)
    return out if _copy_if_below_256(codes.reshape(-1), out.reshape(-1)) else codes


@numba.njit(nogil=True, cache=True)
def _copy_if_below_256(codes, out):
    """Copy ``codes`` into ``out`` while every one is below 256; False at the first that
    is not (``out`` then partly written)."""
    for i in range(codes.shape[0]):
        code = codes[i]
        if code > 255:
            return False
        out[i] = code
    return True


def _search_depth(n_cuts):
    """Levels of the smallest complete binary tree holding ``n_cuts`` keys."""
    return int(n_cuts).bit_length()


def _eytzinger_table(cuts, depth):
    """The cuts in breadth-first (Eytzinger) order of a complete binary search tree.

    Entry ``k`` (1-based; entry 0 unused) holds the key of tree node ``k``, whose
    children are ``2k`` and ``2k+1``; the tree is padded with ``+inf`` to
    ``2**depth - 1`` keys.  Node ``k`` on level ``l`` (``2**l <= k < 2**(l+1)``) with
    ``h = depth - 1 - l`` levels below it is the key of sorted rank
    ``(2 (k - 2**l) + 1) 2**h - 1``.
    """
    size = (1 << depth) - 1
    padded = np.full(size, np.inf)
    padded[:len(cuts)] = cuts
    table = np.full(size + 1, np.nan)
    nodes = np.arange(1, size + 1)
    level = np.floor(np.log2(nodes)).astype(np.int64)
    below = depth - 1 - level
    ranks = (2 * (nodes - (1 << level)) + 1) * (1 << below) - 1
    table[1:] = padded[ranks]
    return table


@numba.njit(nogil=True, cache=True, inline="always")
def _eytzinger_rank(table, depth, v):
    """Number of keys below ``v`` in a complete Eytzinger search tree of ``depth`` levels:
    walk ``k = 2k + (key < v)`` down every level; the leaf reached, ``k - 2**depth``, is
    the count.  No data-dependent branch (random values make branches unpredictable:
    this measured 3x faster than a classic binary search)."""
    k = 1
    for _ in range(depth):
        k = 2 * k + np.intp(table[k] < v)
    return k - (1 << depth)


@numba.njit(nogil=True, cache=True)
def _bin_kernel(X, tables, table_offsets, depths, missing_code, codes):
    """codes[i, f] = number of cuts of feature f below X[i, f] (missing_code for NaN).

    Feature by feature (its table stays in L1 cache), four rows at a time: each search
    is a chain of ``depth`` dependent loads, and four independent chains keep the core
    busy while each waits.  (Measured on 125k x 28 float32 values with 256 bins: 35-44
    ms, against 64-97 ms for one row at a time through all the features.)
    """
    for f in range(X.shape[1]):
        _bin_feature(X, f, tables[table_offsets[f]:], depths[f], missing_code, codes, f)


@numba.njit(nogil=True, cache=True)
def _bin_column_kernel(values, table, depth, missing_code, codes, f):
    """codes[:, f] from one feature's values, an (n_rows, 1) array."""
    _bin_feature(values, 0, table, depth, missing_code, codes, f)


@numba.njit(nogil=True, cache=True, inline="always")
def _bin_feature(X, x_column, table, depth, missing_code, codes, f):
    """codes[i, f] = the code of X[i, x_column], for every row i (see ``_bin_kernel``)."""
    n_rows = X.shape[0]
    top = 1 << depth
    i = 0
    while i + 4 <= n_rows:
        v0, v1 = X[i, x_column], X[i + 1, x_column]
        v2, v3 = X[i + 2, x_column], X[i + 3, x_column]
        k0 = k1 = k2 = k3 = 1
        for _ in range(depth):
            k0 = 2 * k0 + np.intp(table[k0] < v0)
            k1 = 2 * k1 + np.intp(table[k1] < v1)
            k2 = 2 * k2 + np.intp(table[k2] < v2)
            k3 = 2 * k3 + np.intp(table[k3] < v3)
        codes[i, f] = missing_code if np.isnan(v0) else k0 - top
        codes[i + 1, f] = missing_code if np.isnan(v1) else k1 - top
        codes[i + 2, f] = missing_code if np.isnan(v2) else k2 - top
        codes[i + 3, f] = missing_code if np.isnan(v3) else k3 - top
        i += 4
    for j in range(i, n_rows):
        v = X[j, x_column]
        codes[j, f] = missing_code if np.isnan(v) else _eytzinger_rank(table, depth, v)


@numba.njit(nogil=True, cache=True)
def _bin_stored_kernel(indptr, indices, data, tables, table_offsets, depths, missing_code,
                       codes):
    """``_bin_kernel``'s rule for the stored entries of a CSR block: ``codes[i, f]`` =
    number of cuts of feature f below the stored value (``_eytzinger_rank``),
    missing_code for a stored NaN.  Entries not stored are left as they are (the
    caller fills ``codes`` with missing_code): one pass over the stored values."""
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            f = indices[k]
            v = data[k]
            codes[i, f] = missing_code if np.isnan(v) else _eytzinger_rank(
                tables[table_offsets[f]:], depths[f], v)
