"""The adaptive leaves' residual sketches, packed: every (tree, leaf) of a partition in
one set of arrays, built and merged in compiled loops.

Objectives whose leaves are refitted to a quantile of their rows' residuals (absolute
and quantile error) sketch each leaf's residuals on every partition and merge the
sketches over the partitions, every round (``partition.leaf_residual_summaries``).  A
dict of ``sketch.FeatureSummary`` per leaf did that one Python call at a time: up to
192 sketches and 576 merges a round for three quantile levels on four partitions, the
larger part of such a fit's refit.  Here a partition's sketches of one tree come out
of one compiled call and two partitions' are merged in one; the sketches and merges
are the ``sketch`` module's own kernels (the weighted quantile summary of appendix A of
the XGBoost paper), in the same order, so the leaves are the same bits.

A ``LeafSketches`` holds ``m`` sketches in ascending (tree, leaf) order: ``keys`` (m, 2),
each sketch's entries ``values/rmin/rmax/wmin[offsets[j]:offsets[j + 1]]``, its total
weight and its eps.  Residuals are finite (labels and margins are), so no sketch has a
missing value.
"""

from dataclasses import dataclass

import numba
import numpy as np

from .sketch import FeatureSummary, _exact_from_order, _exact_from_sorted, _merge, _prune
from .sorting import _float64_keys, _radix_sort, _values_of_keys

__all__ = ["LeafSketches", "merge_leaf_sketches", "rows_by_leaf", "sketch_leaves"]

_SIGN64 = np.uint64(1 << 63)
_DIGITS64 = 6  # (``sorting._keys``: float64 keys sort in 6 digits)


@dataclass
class LeafSketches:
    keys: np.ndarray      # (m, 2) int64: (tree, leaf), ascending
    offsets: np.ndarray   # (m + 1,) int64
    values: np.ndarray    # the sketches' entries, packed (float64)
    rmin: np.ndarray
    rmax: np.ndarray
    wmin: np.ndarray
    totals: np.ndarray    # (m,) float64: each sketch's total weight
    eps: np.ndarray       # (m,) float64

    def __len__(self):
        return self.keys.shape[0]

    def summaries(self):
        """{(tree, leaf): its ``FeatureSummary``}."""
        out = {}
        for j in range(len(self)):
            a, b = self.offsets[j], self.offsets[j + 1]
            out[(int(self.keys[j, 0]), int(self.keys[j, 1]))] = FeatureSummary(
                self.values[a:b], self.rmin[a:b], self.rmax[a:b], self.wmin[a:b],
                float(self.eps[j]), float(self.totals[j]))
        return out

    @classmethod
    def joined(cls, parts):
        """The sketches of several trees in one (``parts`` in ascending tree order)."""
        if len(parts) == 1:
            return parts[0]
        starts = np.cumsum([0] + [p.values.shape[0] for p in parts[:-1]])
        offsets = np.concatenate([parts[0].offsets[:1]] + [
            p.offsets[1:] + s for p, s in zip(parts, starts)])
        return cls(np.concatenate([p.keys for p in parts]), offsets,
                   *(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("values", "rmin", "rmax", "wmin", "totals", "eps")))


def sketch_leaves(tree, leaves, residuals, weight, size):
    """The sketch of each leaf's ``residuals`` (its rows in their order), as
    ``sketch.summarize_column`` builds it, of tree ``tree``: ``leaves`` its rows' node
    ids, ``weight`` their weights or None."""
    leaves = np.ascontiguousarray(leaves)
    residuals = np.ascontiguousarray(residuals, dtype=np.float64)
    weighted = weight is not None
    w = (np.ascontiguousarray(weight, dtype=np.float64) if weighted
         else np.empty(0, dtype=np.float64))
    n_nodes = int(leaves.max()) + 1 if leaves.shape[0] else 0
    return LeafSketches(*_sketch_leaves(tree, leaves, n_nodes, residuals, w, weighted, size))


def merge_leaf_sketches(a, b, size):
    """Two partition groups' sketches merged per (tree, leaf) (``a`` before ``b``), as
    ``sketch.merge`` merges two summaries."""
    return LeafSketches(*_merge_packed(
        a.keys, a.offsets, a.values, a.rmin, a.rmax, a.wmin, a.totals, a.eps,
        b.keys, b.offsets, b.values, b.rmin, b.rmax, b.wmin, b.totals, b.eps, size))


@numba.njit(nogil=True, cache=True)
def rows_by_leaf(leaves, n_nodes):
    """A counting sort of the rows by node (stable: a node's rows in row order):
    ``order[starts[v]:starts[v + 1]]`` are node ``v``'s rows.  O(n), where a stable
    argsort took half of the sketches' time."""
    starts = np.zeros(n_nodes + 1, dtype=np.int64)
    for i in range(leaves.shape[0]):
        starts[leaves[i] + 1] += 1
    for v in range(n_nodes):
        starts[v + 1] += starts[v]
    fill = starts[:-1].copy()
    order = np.empty(leaves.shape[0], dtype=np.int64)
    for i in range(leaves.shape[0]):
        v = leaves[i]
        order[fill[v]] = i
        fill[v] += 1
    return order, starts


@numba.njit(nogil=True, cache=True)
def _one_sketch(column, weights, weighted, size):
    # ``sketch.summarize_column`` of a contiguous float64 column: sorted by the radix
    # sort of ``sorting.sort_floats`` / ``argsort_floats``, then the exact summary,
    # pruned to ``size`` entries when larger (eps 1 / (size - 1))
    keys = _float64_keys(column)
    if weighted:
        _, order = _radix_sort(keys, np.arange(keys.shape[0]), _DIGITS64)
        values, rmin, rmax, wmin, total = _exact_from_order(column, weights, order)
    else:
        keys, _ = _radix_sort(keys, None, _DIGITS64)
        values, rmin, rmax, wmin, total = _exact_from_sorted(
            _values_of_keys(keys, _SIGN64).view(np.float64))
    eps = 0.0
    if values.shape[0] > size:
        values, rmin, rmax, wmin = _prune(values, rmin, rmax, wmin, total, size)
        eps = 0.0 + 1.0 / (size - 1)
    return values, rmin, rmax, wmin, total, eps


@numba.njit(nogil=True, cache=True)
def _new_packed(m, capacity):
    # (keys, offsets, values, rmin, rmax, wmin, totals, eps) for m sketches of at most
    # ``capacity`` entries in all
    return (np.empty((m, 2), dtype=np.int64), np.zeros(m + 1, dtype=np.int64),
            np.empty(capacity, np.float64), np.empty(capacity, np.float64),
            np.empty(capacity, np.float64), np.empty(capacity, np.float64),
            np.empty(m, np.float64), np.empty(m, np.float64))


@numba.njit(nogil=True, cache=True)
def _put(packed, j, key0, key1, sketch, total, e):
    # sketch j of ``packed``: its key, its entries (after sketch j - 1's), total and eps
    keys, offsets, values, rmin, rmax, wmin, totals, eps = packed
    sv, sr, sx, sw = sketch
    k = sv.shape[0]
    o = offsets[j]
    values[o:o + k] = sv
    rmin[o:o + k] = sr
    rmax[o:o + k] = sx
    wmin[o:o + k] = sw
    keys[j, 0] = key0
    keys[j, 1] = key1
    totals[j] = total
    eps[j] = e
    offsets[j + 1] = o + k


@numba.njit(nogil=True, cache=True)
def _trimmed(packed):
    # the packed arrays with the entries' unused room cut off
    keys, offsets, values, rmin, rmax, wmin, totals, eps = packed
    used = offsets[keys.shape[0]]
    return (keys, offsets, values[:used].copy(), rmin[:used].copy(), rmax[:used].copy(),
            wmin[:used].copy(), totals, eps)


@numba.njit(nogil=True, cache=True)
def _sketch_leaves(tree, leaves, n_nodes, residuals, weights, weighted, size):
    order, starts = rows_by_leaf(leaves, n_nodes)
    m = 0
    capacity = 0
    for v in range(n_nodes):
        rows = starts[v + 1] - starts[v]
        if rows:
            m += 1
            capacity += rows
    packed = _new_packed(m, capacity)
    j = 0
    for v in range(n_nodes):
        a, b = starts[v], starts[v + 1]
        if a == b:
            continue
        column = np.empty(b - a, np.float64)
        w = np.empty(b - a if weighted else 0, np.float64)
        for r in range(a, b):
            column[r - a] = residuals[order[r]]
            if weighted:
                w[r - a] = weights[order[r]]
        sv, sr, sx, sw, total, e = _one_sketch(column, w, weighted, size)
        _put(packed, j, tree, v, (sv, sr, sx, sw), total, e)
        j += 1
    return _trimmed(packed)


@numba.njit(nogil=True, cache=True)
def _merge_packed(ka, oa, va, ra, xa, wa, ta, ea, kb, ob, vb, rb, xb, wb, tb, eb, size):
    # a merge-join of the two ascending key lists; a key in both: ``sketch.merge``
    # (an empty side gives the other as it is; else appendix A's merge, eps the larger,
    # pruned to ``size`` when larger)
    na, nb = ka.shape[0], kb.shape[0]
    m = 0
    i = j = 0
    while i < na or j < nb:
        if j == nb or (i < na and (ka[i, 0], ka[i, 1]) < (kb[j, 0], kb[j, 1])):
            i += 1
        elif i == na or (kb[j, 0], kb[j, 1]) < (ka[i, 0], ka[i, 1]):
            j += 1
        else:
            i += 1
            j += 1
        m += 1
    packed = _new_packed(m, va.shape[0] + vb.shape[0])
    i = j = 0
    for out in range(m):
        take_a = j == nb or (i < na and (ka[i, 0], ka[i, 1]) <= (kb[j, 0], kb[j, 1]))
        take_b = i == na or (j < nb and (kb[j, 0], kb[j, 1]) <= (ka[i, 0], ka[i, 1]))
        if take_a and take_b:  # in both
            a0, a1, b0, b1 = oa[i], oa[i + 1], ob[j], ob[j + 1]
            if a1 == a0 or b1 == b0:  # one is empty: the other, as it is
                if b1 == b0:
                    sv, sr, sx, sw = va[a0:a1], ra[a0:a1], xa[a0:a1], wa[a0:a1]
                    total, e = ta[i], ea[i]
                else:
                    sv, sr, sx, sw = vb[b0:b1], rb[b0:b1], xb[b0:b1], wb[b0:b1]
                    total, e = tb[j], eb[j]
            else:
                total = ta[i] + tb[j]
                e = max(ea[i], eb[j])
                sv, sr, sx, sw = _merge(va[a0:a1], ra[a0:a1], xa[a0:a1], wa[a0:a1], ta[i],
                                        vb[b0:b1], rb[b0:b1], xb[b0:b1], wb[b0:b1], tb[j])
            if sv.shape[0] > size:
                sv, sr, sx, sw = _prune(sv, sr, sx, sw, total, size)
                e = e + 1.0 / (size - 1)
            key0, key1 = ka[i, 0], ka[i, 1]
            i += 1
            j += 1
        elif take_a:
            a0, a1 = oa[i], oa[i + 1]
            sv, sr, sx, sw = va[a0:a1], ra[a0:a1], xa[a0:a1], wa[a0:a1]
            total, e, key0, key1 = ta[i], ea[i], ka[i, 0], ka[i, 1]
            i += 1
        else:
            b0, b1 = ob[j], ob[j + 1]
            sv, sr, sx, sw = vb[b0:b1], rb[b0:b1], xb[b0:b1], wb[b0:b1]
            total, e, key0, key1 = tb[j], eb[j], kb[j, 0], kb[j, 1]
            j += 1
        _put(packed, out, key0, key1, (sv, sr, sx, sw), total, e)
    return _trimmed(packed)
