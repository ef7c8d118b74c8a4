"""Weighted quantile sketch used to choose histogram cut points.

This module implements the mergeable, prunable weighted quantile summary of
Chen & Guestrin, "XGBoost: A Scalable Tree Boosting System" (KDD 2016),
section 3.3 and appendix A.  Every Dask partition summarises each of its
feature columns (:func:`summarize_block`), the per-partition summaries are
combined pairwise in a tree reduction (:func:`merge_blocks`, which prunes after
each merge), and the cut points of a feature's histogram are read off the
final summary (:func:`cut_points`).

Representation
--------------
A :class:`FeatureSummary` summarises a weighted multiset ``D`` of non-missing
values of one feature.  It stores strictly increasing values
``x_1 < ... < x_k`` taken from ``D`` (always including ``min D`` and
``max D``) and, for every stored value ``x``, three weights:

``rmin(x)``
    lower bound on ``r-(x)``, the total weight of the data strictly less
    than ``x`` (the paper's ``r~-_D(x)``);
``rmax(x)``
    upper bound on ``r+(x)``, the total weight of the data less than or
    equal to ``x`` (the paper's ``r~+_D(x)``);
``wmin(x)``
    lower bound on ``w(x)``, the total weight of the data equal to ``x``
    (the paper's ``w~_D(x)``).

It also carries ``W = total_weight``, the (exact) total weight of ``D``, and
``eps``, an error bound.  A summary built straight from data is *exact*:
``rmin = r-``, ``rmax = r+``, ``wmin = w`` and ``eps = 0``.  The first entry
always has ``rmin = 0`` and the last entry always has ``rmax = W``.

Guarantee
---------
A summary is ``eps``-approximate in the sense of appendix A (definition A.2,
with the equivalent per-entry form of lemma A.1) when both

(1) ``rmax(x_i) - rmin(x_i) - wmin(x_i) <= eps * W``  for every entry, and
(2) ``rmax(x_{i+1}) - wmin(x_{i+1}) - rmin(x_i) - wmin(x_i) <= eps * W``
    for every pair of consecutive entries.

Definition A.2 asks ``r~+(y) - r~-(y) - w~(y) <= eps * W`` for every ``y``,
where a value ``y`` strictly between ``x_i`` and ``x_{i+1}`` gets
``r~-(y) = rmin(x_i) + wmin(x_i)``, ``r~+(y) = rmax(x_{i+1}) - wmin(x_{i+1})``
and ``w~(y) = 0``; (1) and (2) are that requirement for stored and for
unstored ``y``.  So the rank of every value, stored or not, is known to within
``eps * W``.  (2) is twice as strong as the Greenwald-Khanna style condition
``... <= 2 * eps * W``.  The operations keep the paper's bookkeeping:

* an exact summary is 0-approximate;
* :func:`merge` of an ``eps_a``- and an ``eps_b``-approximate summary is
  ``max(eps_a, eps_b)``-approximate (appendix A, merge operation);
* pruning to ``size = b + 1`` entries turns an ``eps``-approximate summary
  into an ``(eps + 1/b)``-approximate one (appendix A, prune operation).

Hence after summarising the partitions and ``L`` levels of pairwise merges
(pruning whenever a summary is larger than ``size``), the reported ``eps`` is
at most ``(L + 1) / (size - 1)``.  Every ``rmin``/``rmax``/``wmin`` remains a
valid bound on the true weighted ranks of the full data throughout.

The query function of appendix A returns, for a target rank ``d``, a stored
value ``x`` with ``r-(x) - eps*W/2 <= d <= r+(x) + eps*W/2``; :func:`cut_points`
uses it at ``d = j * W / max_bin``.

The numeric kernels are ``numba.njit(cache=True, nogil=True)`` functions over
plain arrays, so several partitions can be summarised in parallel threads.
Columns are sorted by ``sorting``'s radix sort (~4x numpy's sort).  Results are
deterministic: the weights of equal values are added in row order (the argsort is
stable) and ``-0.0`` is stored as ``0.0``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace

import numba
import numpy as np

from .sorting import argsort_floats, sort_floats

__all__ = [
    "FeatureSummary",
    "summarize_column",
    "summarize_block",
    "summarize_columns",
    "merge",
    "merge_blocks",
    "cut_points",
]


@dataclass(eq=False)
class FeatureSummary:
    """Weighted quantile summary of one feature.

    Attributes
    ----------
    values : numpy.ndarray
        float64, strictly increasing stored values (no NaN).
    rmin : numpy.ndarray
        float64, lower bounds on the weight of data strictly below each value.
    rmax : numpy.ndarray
        float64, upper bounds on the weight of data at or below each value.
    wmin : numpy.ndarray
        float64, lower bounds on the weight of data equal to each value.
    eps : float
        Approximation error relative to ``total_weight`` (see the module
        docstring); ``0.0`` for an exact summary.
    total_weight : float
        Total weight ``W`` of the non-missing values summarised.

    Notes
    -----
    Summaries are treated as immutable: operations return new summaries and
    may share arrays with their inputs.  Equality is identity (numpy arrays
    do not support the element-wise ``==`` a dataclass would generate).
    """

    values: np.ndarray
    rmin: np.ndarray
    rmax: np.ndarray
    wmin: np.ndarray
    eps: float
    total_weight: float
    # some value of the feature was missing (NaN, or not stored in a sparse block),
    # whatever its row's weight: its codes then include the missing code
    # (``binning.BinMapper.from_summaries``)
    missing: bool = False

    def __post_init__(self) -> None:
        n = len(self.values)
        for name in ("rmin", "rmax", "wmin"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"{name} has length {len(getattr(self, name))}, "
                    f"expected len(values) = {n}"
                )

    @property
    def is_exact(self) -> bool:
        """True if the summary holds exact ranks (``eps == 0``)."""
        return self.eps == 0.0

    def __len__(self) -> int:
        return len(self.values)


# ---------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _empty_entries(n):
    """Uninitialised (values, rmin, rmax, wmin) arrays for ``n`` summary entries."""
    return (np.empty(n, np.float64), np.empty(n, np.float64), np.empty(n, np.float64),
            np.empty(n, np.float64))


@numba.njit(cache=True, nogil=True)
def _exact_from_sorted(sorted_values):
    """Exact unit-weight summary of an ascending array (NaNs last)."""
    n = sorted_values.shape[0]
    # First pass: number of distinct non-NaN values, so outputs are allocated
    # at their final size.
    k = 0
    i = 0
    while i < n:
        x = sorted_values[i]
        if np.isnan(x):
            break
        k += 1
        i += 1
        while i < n and sorted_values[i] == x:
            i += 1
    values, rmin, rmax, wmin = _empty_entries(k)
    cum = 0.0
    i = 0
    for e in range(k):
        x = sorted_values[i]
        j = i + 1
        while j < n and sorted_values[j] == x:
            j += 1
        w = np.float64(j - i)
        # "+ 0.0" maps -0.0 to +0.0, so the stored value of the (equal)
        # group {-0.0, 0.0} does not depend on how the sort ordered them.
        values[e] = np.float64(x) + 0.0
        rmin[e] = cum
        wmin[e] = w
        cum += w
        rmax[e] = cum
        i = j
    return values, rmin, rmax, wmin, cum


@numba.njit(cache=True, nogil=True)
def _exact_from_order(column, weights, order):
    """Exact weighted summary of ``column`` given its stable ascending argsort.

    Rows with NaN value (sorted last) are excluded, and so are values whose
    total weight is zero.  Within a run of equal values the weights are
    summed in increasing row order (the sort is stable), so the floating
    point result does not depend on the partitioning of the rows.
    """
    n = order.shape[0]
    values, rmin, rmax, wmin = _empty_entries(n)
    k = 0
    cum = 0.0
    i = 0
    while i < n:
        x = column[order[i]]
        if np.isnan(x):
            break
        j = i + 1
        while j < n and column[order[j]] == x:
            j += 1
        w = 0.0
        for r in range(i, j):
            w += weights[order[r]]
        if w > 0.0:
            values[k] = np.float64(x) + 0.0
            rmin[k] = cum
            wmin[k] = w
            cum += w
            rmax[k] = cum
            k += 1
        i = j
    return (
        values[:k].copy(),
        rmin[:k].copy(),
        rmax[:k].copy(),
        wmin[:k].copy(),
        cum,
    )


@numba.njit(cache=True, nogil=True)
def _query_indices(rmin, rmax, wmin, targets):
    """The query function g(Q, d) of appendix A for ascending targets ``d``.

    Returns, for every target, the index of the entry the paper's query
    function selects.  With ``mid(i) = (rmin[i] + rmax[i]) / 2``:

    * ``d < mid(0)``            -> entry 0;
    * ``d >= mid(k - 1)``       -> entry k - 1;
    * ``mid(i) <= d < mid(i+1)`` -> entry ``i`` if
      ``2d < rmin[i] + wmin[i] + rmax[i+1] - wmin[i+1]``, else ``i + 1``.

    For an eps-approximate summary the selected ``x`` satisfies
    ``rmax(x) - wmin(x) - eps*W/2 <= d`` unless it is the first entry, and
    ``d <= rmin(x) + wmin(x) + eps*W/2`` unless it is the last entry.  As the
    true ranks obey ``r-(x) <= rmax(x) - wmin(x)``, ``r+(x) >= rmin(x) +
    wmin(x)``, ``r-(x_1) = 0`` and ``r+(x_k) = W``, in every case
    ``r-(x) - eps*W/2 <= d <= r+(x) + eps*W/2`` for ``0 <= d <= W``.
    Targets are processed with one forward sweep, so the result is
    non-decreasing in ``d``.  Requires at least one entry.
    """
    k = rmin.shape[0]
    m = targets.shape[0]
    out = np.empty(m, np.int64)
    first2 = rmin[0] + rmax[0]
    last2 = rmin[k - 1] + rmax[k - 1]
    i = 0  # invariant in the middle case: mid(i) <= d
    for t in range(m):
        d2 = 2.0 * targets[t]
        if d2 < first2:
            out[t] = 0
        elif d2 >= last2:
            out[t] = k - 1
        else:
            # d < mid(k-1), so this stops at i + 1 <= k - 1.
            while rmin[i + 1] + rmax[i + 1] <= d2:
                i += 1
            if d2 < rmin[i] + wmin[i] + rmax[i + 1] - wmin[i + 1]:
                out[t] = i
            else:
                out[t] = i + 1
    return out


@numba.njit(cache=True, nogil=True)
def _prune(values, rmin, rmax, wmin, total, size):
    """Prune operation of appendix A: keep at most ``size = b + 1`` entries.

    Keeps the first and the last entry and, for ``d = j * W / b`` with
    ``j = 1 .. b-1``, the entry the query function returns.  If the input is
    eps-approximate the output is (eps + 1/b)-approximate: consecutive kept
    entries answer targets at most ``W / b`` apart, and each answer is within
    ``eps * W / 2`` of its target.
    """
    k = values.shape[0]
    b = size - 1
    targets = np.empty(b - 1, np.float64)
    for j in range(1, b):
        targets[j - 1] = j * total / b
    picked = _query_indices(rmin, rmax, wmin, targets)
    keep = np.empty(size, np.int64)
    keep[0] = 0
    m = 1
    for t in range(picked.shape[0]):
        p = picked[t]
        if p > keep[m - 1] and p < k - 1:
            keep[m] = p
            m += 1
    if keep[m - 1] != k - 1:
        keep[m] = k - 1
        m += 1
    keep = keep[:m]
    return values[keep], rmin[keep], rmax[keep], wmin[keep]


@numba.njit(cache=True, nogil=True)
def _merge(va, rmina, rmaxa, wmina, wa, vb, rminb, rmaxb, wminb, wb):
    """Merge operation of appendix A.

    For a value in both summaries the ranks and ``wmin`` add.  For a value
    ``x`` only in A (symmetrically only in B), with ``y`` the largest entry
    of B below ``x`` and ``z`` the smallest entry of B above ``x``:

    * ``rmin = rmin_A(x) + rmin_B(y) + wmin_B(y)``   (0 if there is no ``y``)
    * ``rmax = rmax_A(x) + rmax_B(z) - wmin_B(z)``   (``W_B`` if there is no ``z``)
    * ``wmin = wmin_A(x)``
    """
    na = va.shape[0]
    nb = vb.shape[0]
    n = na + nb
    values, rmin, rmax, wmin = _empty_entries(n)
    i = 0
    j = 0
    k = 0
    while i < na or j < nb:
        if i < na and j < nb and va[i] == vb[j]:
            values[k] = va[i]
            rmin[k] = rmina[i] + rminb[j]
            rmax[k] = rmaxa[i] + rmaxb[j]
            wmin[k] = wmina[i] + wminb[j]
            i += 1
            j += 1
        elif j >= nb or (i < na and va[i] < vb[j]):
            # va[i] is only in A; B's entries j-1 < va[i] < j.
            below = rminb[j - 1] + wminb[j - 1] if j > 0 else 0.0
            above = rmaxb[j] - wminb[j] if j < nb else wb
            values[k] = va[i]
            rmin[k] = rmina[i] + below
            rmax[k] = rmaxa[i] + above
            wmin[k] = wmina[i]
            i += 1
        else:
            # vb[j] is only in B; A's entries i-1 < vb[j] < i.
            below = rmina[i - 1] + wmina[i - 1] if i > 0 else 0.0
            above = rmaxa[i] - wmina[i] if i < na else wa
            values[k] = vb[j]
            rmin[k] = rminb[j] + below
            rmax[k] = rmaxb[j] + above
            wmin[k] = wminb[j]
            j += 1
        k += 1
    return (
        values[:k].copy(),
        rmin[:k].copy(),
        rmax[:k].copy(),
        wmin[:k].copy(),
    )


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------


def _check_int_at_least_2(value, name: str) -> int:
    try:
        ivalue = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer >= 2, got {value!r}") from None
    if ivalue < 2:
        raise ValueError(f"{name} must be an integer >= 2, got {value!r}")
    return ivalue


def _check_weights(weights, n_rows: int) -> np.ndarray | None:
    if weights is None:
        return None
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ValueError(
            f"weights must be 1-D with one entry per row ({n_rows}), "
            f"got shape {w.shape}"
        )
    if w.size and not (np.isfinite(w).all() and (w >= 0.0).all()):
        raise ValueError("weights must be finite and >= 0")
    return w


def _as_float(a: np.ndarray) -> np.ndarray:
    if a.dtype != np.float32 and a.dtype != np.float64:
        a = a.astype(np.float64)
    return a


def _finish(values, rmin, rmax, wmin, total, eps, size, missing) -> FeatureSummary:
    """Build a summary, pruning it to ``size`` entries if it is larger."""
    if values.shape[0] > size:
        values, rmin, rmax, wmin = _prune(values, rmin, rmax, wmin, total, size)
        eps = eps + 1.0 / (size - 1)
    return FeatureSummary(values, rmin, rmax, wmin, float(eps), float(total), bool(missing))


def _summary_from_sorted(sorted_values: np.ndarray, size: int) -> FeatureSummary:
    values, rmin, rmax, wmin, total = _exact_from_sorted(sorted_values)
    missing = sorted_values.shape[0] > 0 and np.isnan(sorted_values[-1])  # NaNs sort last
    return _finish(values, rmin, rmax, wmin, total, 0.0, size, missing)


def _summary_from_order(
    column: np.ndarray, weights: np.ndarray, order: np.ndarray, size: int
) -> FeatureSummary:
    values, rmin, rmax, wmin, total = _exact_from_order(column, weights, order)
    missing = order.shape[0] > 0 and np.isnan(column[order[-1]])  # NaNs sort last
    return _finish(values, rmin, rmax, wmin, total, 0.0, size, missing)


def summarize_column(
    values: np.ndarray, weights: np.ndarray | None, size: int
) -> FeatureSummary:
    """Summarise one feature column.

    Builds the exact summary (sort, then group equal values) and prunes it to
    ``size`` entries only if it has more than ``size`` entries, so a column
    with at most ``size`` distinct values gets an exact summary (``eps = 0``)
    and otherwise ``eps = 1 / (size - 1)``.

    Parameters
    ----------
    values : numpy.ndarray
        1-D float array.  NaN marks a missing value and is excluded; +-inf are
        ordinary values.
    weights : numpy.ndarray or None
        1-D non-negative finite weights, one per value, or None for unit
        weights.  Rows with weight 0 are excluded.
    size : int
        Maximum number of entries of the summary, ``>= 2``.

    Returns
    -------
    FeatureSummary
        Summary of the non-missing, positively weighted values.

    Raises
    ------
    ValueError
        If ``size < 2``, ``values`` is not 1-D, or ``weights`` has the wrong
        shape or negative / non-finite entries.
    """
    size = _check_int_at_least_2(size, "size")
    v = np.asarray(values)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    v = np.ascontiguousarray(_as_float(v))
    return _summarize_checked(v, _check_weights(weights, v.shape[0]), size)


def _summarize_checked(v: np.ndarray, w: np.ndarray | None, size: int) -> FeatureSummary:
    """``summarize_column`` of a checked contiguous float column and weights."""
    if w is None:
        return _summary_from_sorted(sort_floats(v), size)
    return _summary_from_order(v, w, argsort_floats(v), size)


def summarize_block(
    X: np.ndarray, weights: np.ndarray | None, size: int
) -> list[FeatureSummary]:
    """Summarise every column of a data block.

    Parameters
    ----------
    X : numpy.ndarray
        2-D array of shape ``(n_rows, n_features)``, float32 or float64 (other
        dtypes are converted to float64), C or Fortran order; ``n_rows`` may
        be 0.  NaN marks a missing value.
    weights : numpy.ndarray or None
        1-D non-negative finite row weights of length ``n_rows``, or None for
        unit weights.  Rows with weight 0 are excluded.
    size : int
        Maximum number of entries per summary, ``>= 2``.

    Returns
    -------
    list of FeatureSummary
        One summary per column, as :func:`summarize_column` would build it.

    Raises
    ------
    ValueError
        If ``size < 2``, ``X`` is not 2-D, or ``weights`` is invalid.
    """
    size = _check_int_at_least_2(size, "size")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_rows, n_features), got shape {X.shape}")
    w = _check_weights(weights, X.shape[0])
    X = _as_float(X)
    return _summarize_each_column(lambda f: X[:, f], X.shape[1], w, size)


def summarize_columns_of(column, n_features, n_rows, weights, size):
    """:func:`summarize_block` of a block given one column at a time: ``column(f)`` is
    feature ``f``'s 1-D float32 or float64 values (``n_rows`` of them).  The same
    summaries; only one column is held at a time."""
    size = _check_int_at_least_2(size, "size")
    return _summarize_each_column(column, n_features, _check_weights(weights, n_rows), size)


def _summarize_each_column(column, n_features, w, size):
    # Column by column, each copied out contiguous on its own: a copy of the whole
    # block (transposed, then sorted) doubled the scan pass's memory (4M x 28 float32
    # rows in two partitions: 2.15 GB peak against 1.14 GB for the data).
    if w is None:
        # Only the values are needed: a plain sort is much faster than argsort.
        return [_summary_from_sorted(sort_floats(column(f)), size) for f in range(n_features)]
    summaries = []
    for f in range(n_features):
        values = np.ascontiguousarray(column(f))
        summaries.append(_summary_from_order(values, w, argsort_floats(values), size))
    return summaries


def summarize_columns(
    indptr: np.ndarray, values: np.ndarray, weights: np.ndarray | None, size: int,
    n_rows: int,
) -> list[FeatureSummary]:
    """Summarise every column of a sparse block from its stored values only.

    Column ``f`` holds ``values[indptr[f]:indptr[f + 1]]`` in row order (the ``indptr``
    and ``data`` of a CSC matrix with sorted indices); an entry not stored is missing.
    Each summary is the one :func:`summarize_column` builds for the dense column with
    NaN wherever nothing is stored: the same values, and the weights of equal values
    added in the same (row) order.

    Parameters
    ----------
    indptr : numpy.ndarray
        1-D, ``n_features + 1`` non-decreasing offsets into ``values``.
    values : numpy.ndarray
        1-D stored values (NaN: missing, as if not stored).
    weights : numpy.ndarray or None
        The weight of each stored value's row, one per stored value, or None for unit
        weights.
    size : int
        Maximum number of entries per summary, ``>= 2``.
    n_rows : int
        The block's rows: a column with fewer stored values has missing ones.

    Returns
    -------
    list of FeatureSummary
        One summary per column.
    """
    size = _check_int_at_least_2(size, "size")
    v = np.ascontiguousarray(_as_float(np.asarray(values)))
    w = _check_weights(weights, v.shape[0])
    bounds = np.asarray(indptr, dtype=np.int64)
    summaries = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        summary = _summarize_checked(v[a:b], None if w is None else w[a:b], size)
        if b - a < n_rows:  # (summaries are immutable: a new one)
            summary = replace(summary, missing=True)
        summaries.append(summary)
    return summaries


def merge(a: FeatureSummary, b: FeatureSummary, size: int) -> FeatureSummary:
    """Merge two summaries of disjoint data sets of the same feature.

    Applies the merge operation of appendix A (error ``max(a.eps, b.eps)``),
    then prunes to ``size`` entries only if the merged summary is larger than
    ``size`` (error grows by ``1 / (size - 1)``).

    Parameters
    ----------
    a, b : FeatureSummary
        Summaries to merge; either may be empty.
    size : int
        Maximum number of entries of the result, ``>= 2``.

    Returns
    -------
    FeatureSummary
        Summary of the union, with ``total_weight = a.total_weight +
        b.total_weight``.

    Raises
    ------
    ValueError
        If ``size < 2``.
    """
    size = _check_int_at_least_2(size, "size")
    eps = max(a.eps, b.eps)
    missing = a.missing or b.missing
    if len(b) == 0 or len(a) == 0:
        s = a if len(b) == 0 else b
        return _finish(s.values, s.rmin, s.rmax, s.wmin, s.total_weight, s.eps, size,
                       missing)
    total = a.total_weight + b.total_weight
    values, rmin, rmax, wmin = _merge(
        a.values, a.rmin, a.rmax, a.wmin, a.total_weight,
        b.values, b.rmin, b.rmax, b.wmin, b.total_weight,
    )  # fmt: skip
    return _finish(values, rmin, rmax, wmin, total, eps, size, missing)


def merge_blocks(
    a: list[FeatureSummary], b: list[FeatureSummary], size: int
) -> list[FeatureSummary]:
    """Merge two per-feature lists of summaries feature by feature.

    Parameters
    ----------
    a, b : list of FeatureSummary
        Per-feature summaries of two disjoint blocks with the same features.
    size : int
        Maximum number of entries per summary, ``>= 2``.

    Returns
    -------
    list of FeatureSummary
        ``[merge(a[f], b[f], size) for f in features]``.

    Raises
    ------
    ValueError
        If the lists differ in length or ``size < 2``.
    """
    size = _check_int_at_least_2(size, "size")
    if len(a) != len(b):
        raise ValueError(
            f"a and b must have the same number of features, got {len(a)} and {len(b)}"
        )
    return [merge(sa, sb, size) for sa, sb in zip(a, b)]


def cut_points(summary: FeatureSummary, max_bin: int) -> np.ndarray:
    """Choose histogram cut points from a summary.

    A value ``v`` falls in bin ``searchsorted(cuts, v, side="left")`` (the
    number of cuts below ``v``): bin ``b`` holds ``(cuts[b-1], cuts[b]]`` and
    the last bin holds ``v > cuts[-1]``, so ``k`` cuts make ``k + 1`` bins.

    * Exact summary with at most ``max_bin`` distinct values: every distinct
      value except the largest, so each distinct value gets its own bin.
    * Otherwise: for ``j = 1 .. max_bin-1`` the value returned by the query
      function of appendix A at rank ``d_j = j * W / max_bin``, duplicates
      removed, and never the largest summary value (so no bin is empty).
      Each cut ``c`` satisfies, for the ``j`` that produced it,
      ``W(< c) - eps*W/2 <= d_j <= W(<= c) + eps*W/2`` with ``W(< c)`` and
      ``W(<= c)`` the true weights of the data below / at or below ``c``.

    Parameters
    ----------
    summary : FeatureSummary
        Summary of the feature.
    max_bin : int
        Maximum number of bins, ``>= 2``.

    Returns
    -------
    numpy.ndarray
        float64, strictly increasing, at most ``max_bin - 1`` values; empty
        for an empty summary (no non-missing data) or a constant feature.

    Raises
    ------
    ValueError
        If ``max_bin < 2``.
    """
    max_bin = _check_int_at_least_2(max_bin, "max_bin")
    k = len(summary)
    if k == 0:
        return np.empty(0, np.float64)
    if summary.is_exact and k <= max_bin:
        return summary.values[:-1].copy()
    W = summary.total_weight
    targets = np.arange(1, max_bin, dtype=np.float64) * W / max_bin
    picked = _query_indices(summary.rmin, summary.rmax, summary.wmin, targets)
    picked = np.unique(picked)  # sorted; the sweep is monotone anyway
    picked = picked[picked < k - 1]
    return summary.values[picked]


def weighted_quantile(summary: FeatureSummary, q: float) -> float:
    """The weighted ``q``-quantile of the summarised data, read off a summary.

    Returns the stored value the query function of appendix A (the one
    :func:`cut_points` uses) selects for the target rank ``d = q * W``,
    ``W = summary.total_weight``: roughly the value whose rank interval
    ``[rmin, rmax]`` contains ``d``.

    Error bound: the returned ``x`` satisfies
    ``W(< x) - eps*W/2 <= q*W <= W(<= x) + eps*W/2``, with ``W(< x)`` and
    ``W(<= x)`` the true weights of the data below / at or below ``x``: its
    weighted rank is within ``eps * W / 2`` of ``q * W``.  For an exact
    summary (``eps = 0``) ``x`` is an exact weighted ``q``-quantile, the
    data value at which the weighted CDF reaches ``q * W`` (for a target that
    falls exactly on the boundary between two values, the upper one); it
    minimises the pinball loss ``sum_i w_i rho_q(y_i - x)``.  ``q = 0`` gives
    the smallest and ``q = 1`` the largest value.  No interpolation: the
    result is always one of the summarised values.

    Parameters
    ----------
    summary : FeatureSummary
        Summary of the data (e.g. a weighted sketch of the labels).
    q : float
        Quantile in ``[0, 1]``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``q`` is not in ``[0, 1]`` or the summary is empty.
    """
    try:
        qf = float(q)
    except (TypeError, ValueError):
        raise ValueError(f"q={q!r} must be a number in [0, 1]") from None
    if not 0.0 <= qf <= 1.0:
        raise ValueError(f"q={q!r} must be in [0, 1]")
    if len(summary) == 0:
        raise ValueError("weighted_quantile of an empty summary "
                         "(no non-missing, positively weighted values)")
    target = np.array([qf * summary.total_weight], dtype=np.float64)
    index = _query_indices(summary.rmin, summary.rmax, summary.wmin, target)[0]
    return float(summary.values[index])


__all__.append("weighted_quantile")
