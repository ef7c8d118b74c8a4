"""Cross-validation folds keyed on (seed, global row index): the same whatever the
partitioning, computed where each partition is, without a pass of their own.

Row ``i`` of ``n`` (its global index, counted over the partitions in order) goes to the
fold that holds position ``p = perm(i)`` when ``0 .. n - 1`` is cut into ``nfold``
contiguous pieces the way ``numpy.array_split`` cuts them (the first ``n % nfold``
pieces one longer): every fold has ``n // nfold`` or ``n // nfold + 1`` rows, as
xgboost's and scikit-learn's ``KFold`` have.  ``perm`` is a pseudo-random permutation
of ``0 .. n - 1`` keyed on the seed (a four-round Feistel network over the smallest
even number of bits that covers ``n``, walked again from its output until that output
is below ``n``), evaluated per row: no row needs to know any other, so a partition
needs only its global offset.  ``shuffle=False``: ``perm`` is the identity, contiguous
folds (``KFold(shuffle=False)``).

Stratified: the same within each class, with ``i`` the row's index among the rows of
its class (so a partition also needs, per class, the rows of that class in the
partitions before it: the scan pass counts them) and a permutation keyed on (seed,
class); each class's pieces start at the fold after the previous classes' (the
running count of rows modulo ``nfold``), so the longer pieces of successive classes
go to successive folds and the folds' sizes differ by at most one row.

By query (ranking): the same with ``i`` the query's index among all the queries (a
partition needs the queries of the partitions before it: the scan pass counts them),
and each row in its query's fold, so that a query is never split between folds.

``cv_folds`` gives the fold of every row of an in-memory data set, for
``sklearn.model_selection.PredefinedSplit`` and the like (``qid=``: by query).
"""

from dataclasses import dataclass

import numba
import numpy as np

from .keyed_random import GOLDEN, MIX1, MIX2, mix
from .params import integer_param
from .query_groups import group_pointer, qid_block

_FEISTEL_ROUNDS = 4


@numba.njit(nogil=True, cache=True)
def _half_bits(n):
    """Bits of each Feistel half: the smallest h >= 1 with 4**h >= n."""
    h = 1
    while (np.int64(1) << (2 * h)) < n:
        h += 1
    return h


@numba.njit(nogil=True, cache=True)
def _permuted(i, n, half_bits, key):
    """Position of ``i`` (< n) under the permutation of ``0 .. n - 1`` keyed by ``key``:
    a Feistel network on 2 * half_bits bits (a bijection of that range), applied again
    to its output until the output is below n (cycle walking: a bijection of 0..n-1)."""
    h = np.uint64(half_bits)
    mask = (np.uint64(1) << h) - np.uint64(1)
    x = np.uint64(i)
    while True:
        left = x >> h
        right = x & mask
        for r in range(_FEISTEL_ROUNDS):
            f = mix(key + np.uint64(r + 1) * MIX1 + right * GOLDEN) & mask
            left, right = right, left ^ f
        x = (left << h) | right
        if x < np.uint64(n):
            return np.int64(x)


@numba.njit(nogil=True, cache=True)
def _piece(p, n, nfold):
    """The piece of position ``p`` when ``0 .. n - 1`` is cut like ``array_split``."""
    q, r = n // nfold, n % nfold
    long_part = r * (q + 1)
    if p < long_part:
        return p // (q + 1)
    return r + (p - long_part) // q


@numba.njit(nogil=True, cache=True)
def _assign(classes, first, totals, shifts, nfold, seed, shuffle):
    """Fold of each row of one partition. ``classes``: (n_rows,) class of each row (all 0
    when not stratified); per class, ``first``: index among the class's rows of the
    partition's first row of the class, ``totals``: the class's rows in all,
    ``shifts``: the fold its first piece goes to."""
    n_classes = totals.shape[0]
    keys = np.empty(n_classes, dtype=np.uint64)
    bits = np.empty(n_classes, dtype=np.int64)
    for c in range(n_classes):
        keys[c] = mix(np.uint64(seed) * GOLDEN + np.uint64(c + 1) * MIX2)
        bits[c] = _half_bits(totals[c])
    seen = first.copy()
    out = np.empty(classes.shape[0], dtype=np.int32)
    for i in range(classes.shape[0]):
        c = classes[i]
        j = seen[c]
        seen[c] += 1
        p = _permuted(j, totals[c], bits[c], keys[c]) if shuffle else j
        out[i] = (_piece(p, totals[c], nfold) + shifts[c]) % nfold
    return out


@dataclass(frozen=True)
class FoldLayout:
    """How the rows of a data set of ``n_rows`` rows are dealt to ``nfold`` folds.

    ``class_counts``: for stratified folds, (n_partitions, n_classes) rows of each class
    (encoded 0 .. n_classes - 1) in each partition; None otherwise.
    ``query_counts``: for folds of whole queries (ranking), (n_partitions,) queries in
    each partition (``n_rows`` is then the number of queries); None otherwise.
    """

    nfold: int
    seed: int
    shuffle: bool
    n_rows: int
    class_counts: np.ndarray = None
    query_counts: np.ndarray = None

    @property
    def stratified(self):
        return self.class_counts is not None

    @property
    def by_query(self):
        return self.query_counts is not None

    def of_partition(self, index, row_offset, classes=None, groups=None):
        """The (n,) int32 fold of each row of partition ``index``, whose first row is
        global row ``row_offset``; ``classes``: its rows' encoded classes (stratified)
        or the number of rows (int); ``groups``: by query, its queries' ``group_ptr``."""
        if self.by_query:
            first = int(self.query_counts[:index].sum())
            n = len(groups) - 1
            of_queries = _assign(np.zeros(n, np.int64), np.array([first], np.int64),
                                 np.array([self.n_rows], np.int64), np.zeros(1, np.int64),
                                 self.nfold, self.seed, self.shuffle)
            return np.repeat(of_queries, np.diff(groups)).astype(np.int32)
        if not self.stratified:
            n = int(classes)
            return _assign(np.zeros(n, np.int64), np.array([row_offset], np.int64),
                           np.array([self.n_rows], np.int64), np.zeros(1, np.int64),
                           self.nfold, self.seed, self.shuffle)
        counts = self.class_counts
        totals = counts.sum(axis=0)
        shifts = (np.cumsum(totals) - totals) % self.nfold
        return _assign(np.asarray(classes, dtype=np.int64), counts[:index].sum(axis=0),
                       totals, shifts.astype(np.int64), self.nfold, self.seed, self.shuffle)


def check_nfold(nfold, n_rows=None, what="rows"):
    """``nfold`` as an int in [2, n_rows]; ValueError/TypeError naming it otherwise
    (``what``: "queries" when the folds are of whole queries)."""
    nfold = integer_param("nfold", nfold, 2)
    if n_rows is not None and nfold > n_rows:
        raise ValueError(f"nfold={nfold} is more than the {n_rows} {what} of X: every fold "
                         f"needs at least one {what[:-1] if what == 'rows' else 'query'}")
    return nfold


def cv_folds(n_rows, nfold=5, seed=0, shuffle=True, stratify=None, qid=None):
    """The fold ``cv`` deals each of ``n_rows`` rows to, as an (n_rows,) int array.

    ``stratify``: the labels (stratified folds, ``cv(stratified=True)``), else None.
    ``qid``: each row's query id (ranking, non-decreasing): the folds of whole queries
    ``cv`` deals a ranking's rows to.
    The fold of a row depends only on its index (its query's), the seed and the labels,
    never on how the rows are partitioned; ``sklearn.model_selection.PredefinedSplit(
    cv_folds(...))`` gives scikit-learn the same splits.
    """
    n_rows = integer_param("n_rows", n_rows, 1)
    seed = integer_param("seed", seed, 0)
    if qid is not None:
        if stratify is not None:
            raise ValueError("cv_folds: stratify and qid: folds of whole queries are not "
                             "stratified; give one of them")
        qid = qid_block(qid)
        if qid.shape != (n_rows,):
            raise ValueError(f"qid has shape {qid.shape}; expected ({n_rows},), one id per row")
        groups = group_pointer(qid)
        n_queries = len(groups) - 1
        nfold = check_nfold(nfold, n_queries, "queries")
        layout = FoldLayout(nfold, seed, bool(shuffle), n_queries,
                            query_counts=np.array([n_queries], np.int64))
        return layout.of_partition(0, 0, groups=groups)
    nfold = check_nfold(nfold, n_rows)
    if stratify is None:
        return FoldLayout(nfold, seed, bool(shuffle), n_rows).of_partition(0, 0, n_rows)
    labels = np.asarray(stratify)
    if labels.shape != (n_rows,):
        raise ValueError(f"stratify has shape {labels.shape}; expected ({n_rows},), one "
                         "label per row")
    _, encoded, counts = np.unique(labels, return_inverse=True, return_counts=True)
    layout = FoldLayout(nfold, seed, bool(shuffle), n_rows, counts[None, :].astype(np.int64))
    return layout.of_partition(0, 0, encoded)
