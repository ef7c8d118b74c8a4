"""A tree's rows grouped by node, kept from level to level (LightGBM's data partition),
for the levels grown in one compiled call (``levels_in_place``).

The level passes (``histogram.level_pass``) visit every row at every level: the row
moves to its child, then every thread adding a range of features reads every row's
slot and skips the rows of nodes not built (three in four on diamonds' levels, in an
order no branch predictor follows).  Here instead ``order`` holds the partition's row
indices grouped by node, each node's rows at ``order[begin[node]:begin[node] +
count[node]]`` in increasing row order:

- a level's splits move each split node's rows into its two children's runs, left
  child first (``split_rows``; a stable partition, so each run stays in row order);
- a built node's histogram adds the rows of its run alone (``node_histograms``).

Each histogram cell then gets the same rows in the same order as from the level pass,
so the same sums, bit for bit.  The next round's first pass adds the tree's leaf values
from the runs (``RowRuns.add_leaf_values``); each row's node id (``positions``) is
written from them only when something reads it (``write_positions``).

On native threads the rows are held in shares: share ``s`` of ``n`` is the rows
``part_range(s, n, n_rows)``, kept in ``order``'s same place, and each node has a run
in each share (``begin[s, node]``, ``count[s, node]``).  A level's moves then run one
share a thread, each in place, with no hand-over between the threads; a node's rows in
row order are its runs share after share, which is how the histograms and the leaf
values read them.  (The node's one run split in chunks between the threads, each chunk
moved to spares and copied back, took 1.45x the time of the shares on a diamonds-sized
replay, two threads: ``benchmarks/RESULTS.md``.)  Without native threads there is one
share.

The level loop's passes over a partition held whole in memory keep the runs in its
state from pass to pass (``RowRuns``), one set of runs per tree of the round (a
multiclass round's K trees, a cross-validation's ``nfold * K``); a tree's levels grown
in one compiled call use the same arrays.

On a captured diamonds fit's 500 level passes (2 threads) this took the passes' kernels
from ~120 to ~90 ms (``benchmarks/RESULTS.md``).

A sparse run (``sparse_run``: deep in the tree, its rows far apart) of a partition
whose codes outgrow a core's cache has each row's codes in a cache line of their own,
in an order no hardware prefetcher follows; its moves and histograms ask for the codes
of the row ``PREFETCH_DISTANCE`` places ahead (``prefetch``).
"""

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from .histogram import (_add_packed_row_features, _add_row_features, goes_left, part_range,
                        wide_packed)
from .prefetch import prefetch


def run_row_bytes(n_trees):
    """Bytes a row's runs take for a round of ``n_trees`` trees: its index in each tree's
    ``order`` and in the spare, which the trees share."""
    return 4 * n_trees + 4


class RowRuns:
    """A partition's rows grouped by node in each tree of a round (K trees: a
    multiclass round's, or a cross-validation's ``nfold * K``), kept in its state
    between the passes of a round (``PartitionState.row_runs``): per tree, ``order``
    (n_rows) and each node's run in each share, ``begin``/``count`` (n_shares, room
    for as many nodes as asked so far); the spare (n_rows) is scratch, shared by the
    trees (their level passes run one after the other).  Tree ``k``'s kernels take row
    ``k:k+1`` of the round's (K, ...) arrays: one tree's arrays, as for K = 1.

    ``live``: the runs hold the rows' nodes of the trees being grown (a round's first
    pass puts every row back at the root: not live until the next level pass starts
    them); ``stale``: the state's node ids (``positions``) lag behind the runs until
    ``write_positions`` writes them."""

    def __init__(self, n_rows, n_trees=1):
        self.orders = [np.empty(n_rows, dtype=np.int32) for _ in range(n_trees)]
        self.spare = np.empty(n_rows, dtype=np.int32)
        self.begins = [np.zeros((1, 0), dtype=np.int64) for _ in range(n_trees)]
        self.counts = [np.zeros((1, 0), dtype=np.int64) for _ in range(n_trees)]
        self.n_shares = 1
        self.live = False
        self.stale = False

    @property
    def n_rows(self):
        return self.spare.shape[0]

    @property
    def n_trees(self):
        return len(self.orders)

    def arrays(self, n_nodes, n_threads, tree=0):
        """Tree ``tree``'s ``(order, spare, begin, count)`` as the kernels take them,
        with room for ``n_nodes`` nodes (a node's runs kept where the room grows).  Runs
        not live yet (about to start: ``start_rows``) take ``n_threads`` shares; while
        they are live every tree keeps that number."""
        if not self.live:
            self.n_shares = max(1, n_threads)
        n_shares = self.n_shares
        begin, count = self.begins[tree], self.counts[tree]
        if begin.shape[1] < n_nodes or begin.shape[0] != n_shares:
            room = max(n_nodes, 2 * begin.shape[1])
            self.begins[tree] = np.zeros((n_shares, room), np.int64)
            self.counts[tree] = np.zeros((n_shares, room), np.int64)
            if begin.shape[0] == n_shares:
                self.begins[tree][:, :begin.shape[1]] = begin
                self.counts[tree][:, :count.shape[1]] = count
            begin, count = self.begins[tree], self.counts[tree]
        return self.orders[tree], self.spare, begin, count

    def level_pass(self, codes, grad, hess, packed, splits, missing_code, node_to_slot,
                   cat_table, hist, cell_offsets, width, n_threads):
        """A level pass of the level loop (``partition.partition_step``), tree by tree:
        each tree's runs move under its ``splits`` (rows of the (K, n_nodes) arrays),
        then its built nodes' histograms are added into ``hist`` (the first level pass
        of a round starts the runs: every row at the root).  The node ids go stale."""
        n_nodes = node_to_slot.shape[1]
        for k in range(self.n_trees):
            runs = self.arrays(n_nodes, n_threads, k)
            tree = slice(k, k + 1)
            if not self.live:
                start_rows(runs[0], runs[2], runs[3])
            split_rows(codes, *runs, tuple(s[tree] for s in splits), missing_code,
                       cat_table, n_threads)
            _node_histograms(codes, _rows_of(grad, tree), _rows_of(hess, tree),
                             _rows_of(packed, tree), runs[0], runs[2], runs[3],
                             node_to_slot[tree], hist, cell_offsets, width, n_threads)
        self.live = True
        self.stale = True

    def write_positions(self, positions):
        """Bring the node ids ``positions`` (K, n_rows) up to the runs, if stale."""
        if self.live and self.stale:
            for k in range(self.n_trees):
                write_positions(self.orders[k], self.begins[k], self.counts[k],
                                positions[k:k + 1])
        self.stale = False

    def add_leaf_values(self, codes, splits, missing_code, leaf_values, margin, cat_table,
                        n_threads):
        """``margin += `` each row's leaf value in every tree, the trees finished under
        their last ``splits`` ((K, n_nodes) arrays, not applied to the runs yet) with
        ``leaf_values`` (K, n_nodes): ``histogram.add_leaf_values`` from the runs (the
        same value added to each row), node by node, one share a thread."""
        for k in range(self.n_trees):
            tree = slice(k, k + 1)
            tree_splits = tuple(s[tree] for s in splits)
            sides = (None if cat_table is None else
                     side_tables(*tree_splits[:3], missing_code, cat_table))
            args = (codes, self.orders[k], self.begins[k], self.counts[k], tree_splits,
                    missing_code, sides, leaf_values[tree], margin[tree])
            if n_threads > 1 and self.begins[k].shape[0] > 1:
                _add_leaf_values_parallel(*args)
            else:
                for share in range(self.begins[k].shape[0]):
                    _add_leaf_values(*args, share)


def _rows_of(array, rows):
    """``array[rows]``, or None where ``array`` is."""
    return None if array is None else array[rows]


@numba.njit(nogil=True, cache=True)
def _node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                     cell_offsets, width, n_threads):
    """``node_histograms`` for Python callers."""
    node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                    cell_offsets, width, n_threads)


@numba.njit(nogil=True, cache=True)
def start_rows(order, begin, count):
    """Every row at the root (node 0), in row order, each share's rows (``begin``,
    ``count``: (n_shares, n_nodes)) in its place; no other node has rows yet."""
    for i in range(order.shape[0]):
        order[i] = i
    begin[:] = 0
    count[:] = 0
    n_shares = begin.shape[0]
    for share in range(n_shares):
        first, stop = part_range(share, n_shares, order.shape[0])
        begin[share, 0] = first
        count[share, 0] = stop - first


@numba.njit(nogil=True, cache=True)
def split_rows(codes, order, spare, begin, count, splits, missing_code, cat_table,
               n_threads):
    """Move each node with a split in ``splits`` ((1, n_nodes) arrays, as the level
    passes take them) into its children's runs, in each share: the rows going left
    first, then those going right, each in row order (``goes_left``'s decision, so the
    same rows as the level pass moves).  The split node keeps no rows (count 0).
    ``spare``: (n_rows,) scratch; ``cat_table``: None for a model without categorical
    features.  On ``n_threads`` > 1, one share a thread.

    A model with categorical features reads each row's side from its node's side table
    (``side_tables``): one load where ``goes_left`` is several tests and, at a
    categorical split, a load from the category table after the code's."""
    # (``sides`` None or an array by the argument's type, as numba compiles each case)
    if cat_table is None:
        _split_shares(codes, order, spare, begin, count, splits, missing_code, None,
                      n_threads)
    else:
        sides = side_tables(splits[0], splits[1], splits[2], missing_code, cat_table)
        _split_shares(codes, order, spare, begin, count, splits, missing_code, sides,
                      n_threads)


@numba.njit(nogil=True, cache=True)
def _split_shares(codes, order, spare, begin, count, splits, missing_code, sides,
                  n_threads):
    if n_threads > 1 and begin.shape[0] > 1:
        _split_shares_parallel(codes, order, spare, begin, count, splits, missing_code,
                               sides)
    else:
        for share in range(begin.shape[0]):
            _split_share(codes, order, spare, begin, count, splits, missing_code, sides,
                         share)


@numba.njit(nogil=True, cache=True, parallel=True)
def _split_shares_parallel(codes, order, spare, begin, count, splits, missing_code, sides):
    for share in numba.prange(begin.shape[0]):
        _split_share(codes, order, spare, begin, count, splits, missing_code, sides, share)


@numba.njit(nogil=True, cache=True)
def _split_share(codes, order, spare, begin, count, splits, missing_code, sides, share):
    """``split_rows`` in one share: each split node's run there, in place (its rights
    waiting in the share's part of ``spare``), then its children's runs."""
    split_feature, _, _, left_child, right_child = splits
    for node in range(split_feature.shape[1]):
        if split_feature[0, node] < 0:
            continue
        first, n = begin[share, node], count[share, node]
        n_left = _split_run_in_place(codes, order, spare[first:], first, n, node, splits,
                                     missing_code, sides)
        left, right = left_child[0, node], right_child[0, node]
        begin[share, left], count[share, left] = first, n_left
        begin[share, right], count[share, right] = first + n_left, n - n_left
        count[share, node] = 0


@numba.njit(nogil=True, cache=True)
def side_tables(split_feature, split_bin, default_left, missing_code, cat_table):
    """(n_nodes, missing_code + 1) uint8 (the codes run from 0 to the missing code): at
    a node with a split, 1 where a row with that code goes left (``goes_left``), 0
    where it goes right; the other nodes' rows are not written.  Made for models with
    categorical features only: on a captured diamonds fit's 500 row moves they took
    45 -> 38 ms (2 threads), while a numeric 1M-row fit's moves were ~3% slower with
    them than with ``goes_left``'s two compares (``row_goes_left``;
    ``benchmarks/RESULTS.md``)."""
    n_codes = np.int64(missing_code) + 1
    sides = np.empty((split_feature.shape[1], n_codes), dtype=np.uint8)
    for node in range(split_feature.shape[1]):
        if split_feature[0, node] < 0:
            continue
        s, d = split_bin[0, node], default_left[0, node]
        for code in range(n_codes):
            sides[node, code] = goes_left(code, s, missing_code, d, cat_table)
    return sides


@numba.njit(nogil=True, cache=True, inline="always")
def node_sides(sides, node):
    """Node ``node``'s side table (``side_tables``), or None where ``sides`` is."""
    if sides is None:
        return None
    return sides[node]


@numba.njit(nogil=True, cache=True, inline="always")
def row_goes_left(code, side, split_bin, default_left, missing_code):
    """Whether a row with ``code`` goes left: from its node's side table ``side``, or with
    ``side`` None ``goes_left``'s numeric test on the node's ``split_bin``."""
    if side is None:
        return goes_left(code, split_bin, missing_code, default_left, None)
    return side[np.uint64(code)] != 0


# how many places ahead in a sparse run a row's codes are prefetched; how sparse a run
# must be (rows of the run's span of row indices, at most one in this many); and how
# large the codes (below: they stay in a core's cache, 1 MB here, and asking for them
# made diamonds' small fits ~8% slower)
PREFETCH_DISTANCE = 16
SPARSE_RUN_SPAN = 4
PREFETCH_MIN_BYTES = 2 << 20


@numba.njit(nogil=True, cache=True, inline="always")
def sparse_run(codes, order, first, n):
    """Whether the kernels prefetch the codes of the run ``order[first:first + n]`` (row
    indices in increasing order): codes of at least ``PREFETCH_MIN_BYTES``, and a run
    holding at most one row in ``SPARSE_RUN_SPAN`` of its span, its rows' codes then
    cache lines apart (``prefetch``)."""
    return (codes.size * codes.itemsize >= PREFETCH_MIN_BYTES and n > PREFETCH_DISTANCE
            and (np.int64(order[first + n - 1]) - np.int64(order[first])
                 > SPARSE_RUN_SPAN * n))


@numba.njit(nogil=True, cache=True, inline="always")
def prefetch_stop(codes, order, first, n):
    """Where a kernel visiting the run ``order[first:first + n]`` stops prefetching the
    codes of the row ``PREFETCH_DISTANCE`` places ahead (``first``: it never starts,
    the run not being ``sparse_run``)."""
    return first + n - PREFETCH_DISTANCE if sparse_run(codes, order, first, n) else first


@numba.njit(nogil=True, cache=True)
def _split_run_in_place(codes, order, spare, first, n, node, splits, missing_code, sides):
    """One thread: the run ``order[first:first + n]`` of ``node`` becomes its lefts then
    its rights (each in the order they were); returns the number of lefts.  A left is
    written back at or before the place it was read from; the rights wait in
    ``spare``.  Both writes happen for every row, the counters moving by the row's side
    (no branch on it: ``histogram``'s note on the row's move)."""
    uf = np.uint64(splits[0][0, node])
    side, s, d = node_sides(sides, node), splits[1][0, node], splits[2][0, node]
    n_left = 0
    n_right = 0
    ahead = prefetch_stop(codes, order, first, n)
    for k in range(first, first + n):
        if k < ahead:
            prefetch(codes[order[k + PREFETCH_DISTANCE]], uf)
        i = order[k]
        left = np.int64(row_goes_left(codes[np.uint64(i), uf], side, s, d, missing_code))
        order[first + n_left] = i
        spare[n_right] = i
        n_left += left
        n_right += 1 - left
    for j in range(n_right):
        order[first + n_left + j] = spare[j]
    return n_left


def node_histograms(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                    cell_offsets, width, n_threads):
    """Each built node's histogram (``node_to_slot[0, node]`` >= 0, into that slot of
    ``hist``) from the rows of its run, in row order, rows whose gradients are both 0
    skipped (as in ``histogram``'s kernels); float ``grad``, ``hess`` or, with
    ``packed`` not None, quantized sums; the features in ``n_threads`` ranges, one a
    thread (each cell summed by one thread, in row order).  Chosen by ``packed``'s type
    where numba compiles the caller (``_node_histograms_for``)."""
    raise NotImplementedError("for compiled callers")


@overload(node_histograms, jit_options={"nogil": True, "cache": True})
def _node_histograms_for(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                         cell_offsets, width, n_threads):
    if isinstance(packed, types.NoneType):
        def float_sums(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                       cell_offsets, width, n_threads):
            if n_threads > 1:
                _float_node_histograms_parallel(codes, grad, hess, order, begin, count,
                                                node_to_slot, hist, cell_offsets, width,
                                                n_threads)
            else:
                _float_node_histograms(codes, grad, hess, order, begin, count, node_to_slot,
                                       hist, cell_offsets, width, 0, codes.shape[1])
        return float_sums

    def packed_sums(codes, grad, hess, packed, order, begin, count, node_to_slot, hist,
                    cell_offsets, width, n_threads):
        if n_threads > 1:
            _packed_node_histograms_parallel(codes, packed, order, begin, count,
                                             node_to_slot, hist, cell_offsets, width,
                                             n_threads)
        else:
            _packed_node_histograms(codes, packed, order, begin, count, node_to_slot, hist,
                                    cell_offsets, width, 0, codes.shape[1])
    return packed_sums


@numba.njit(nogil=True, cache=True, parallel=True)
def _float_node_histograms_parallel(codes, grad, hess, order, begin, count, node_to_slot,
                                    hist, cell_offsets, width, n_threads):
    for t in numba.prange(n_threads):
        first, stop = part_range(t, n_threads, codes.shape[1])
        _float_node_histograms(codes, grad, hess, order, begin, count, node_to_slot, hist,
                               cell_offsets, width, first, stop)


@numba.njit(nogil=True, cache=True)
def _float_node_histograms(codes, grad, hess, order, begin, count, node_to_slot, hist,
                           cell_offsets, width, first, stop):
    """Features ``first..stop-1`` of ``node_histograms``, float gradients."""
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for node in range(node_to_slot.shape[1]):
        slot = node_to_slot[0, node]
        if slot < 0:
            continue
        row_hist = flat[np.uint64(slot)]
        for share in range(begin.shape[0]):  # (the node's rows in row order)
            start, n = begin[share, node], count[share, node]
            ahead = prefetch_stop(codes, order, start, n)
            for k in range(start, start + n):
                if k < ahead:
                    prefetch(codes[order[k + PREFETCH_DISTANCE]], first)
                i = np.uint64(order[k])
                g = np.float64(grad[0, i])
                h = np.float64(hess[0, i])
                if g == 0.0 and h == 0.0:
                    continue
                _add_row_features(row_hist, codes, i, first, stop, g, h, cell_offsets,
                                  width)


@numba.njit(nogil=True, cache=True, parallel=True)
def _packed_node_histograms_parallel(codes, packed, order, begin, count, node_to_slot, hist,
                                     cell_offsets, width, n_threads):
    for t in numba.prange(n_threads):
        first, stop = part_range(t, n_threads, codes.shape[1])
        _packed_node_histograms(codes, packed, order, begin, count, node_to_slot, hist,
                                cell_offsets, width, first, stop)


@numba.njit(nogil=True, cache=True)
def _packed_node_histograms(codes, packed, order, begin, count, node_to_slot, hist,
                            cell_offsets, width, first, stop):
    """Features ``first..stop-1`` of ``node_histograms``, quantized gradients."""
    row_bits = packed.itemsize * 4
    for node in range(node_to_slot.shape[1]):
        slot = node_to_slot[0, node]
        if slot < 0:
            continue
        row_hist = hist[np.uint64(slot)]
        for share in range(begin.shape[0]):  # (the node's rows in row order)
            start, n = begin[share, node], count[share, node]
            ahead = prefetch_stop(codes, order, start, n)
            for k in range(start, start + n):
                if k < ahead:
                    prefetch(codes[order[k + PREFETCH_DISTANCE]], first)
                i = np.uint64(order[k])
                v = packed[0, i]
                if v == 0:
                    continue
                _add_packed_row_features(row_hist, codes, i, first, stop,
                                         wide_packed(v, row_bits), cell_offsets, width)


@numba.njit(nogil=True, cache=True, parallel=True)
def _add_leaf_values_parallel(codes, order, begin, count, splits, missing_code, sides,
                              leaf_values, margin):
    for share in numba.prange(begin.shape[0]):
        _add_leaf_values(codes, order, begin, count, splits, missing_code, sides,
                         leaf_values, margin, share)


@numba.njit(nogil=True, cache=True)
def _add_leaf_values(codes, order, begin, count, splits, missing_code, sides, leaf_values,
                     margin, share):
    """Share ``share``'s runs of ``RowRuns.add_leaf_values``: a node split by the last
    ``splits`` sends each row to a child (``row_goes_left``), whose value it adds; any
    other node adds its own value to its rows.  By node, the node's split and values are
    read once (row by row, a categorical and a numeric split alternated at random: 3.5
    ns a diamonds row, 2 threads)."""
    split_feature, _, _, left_child, right_child = splits
    n_nodes = min(count.shape[1], split_feature.shape[1])
    for node in range(n_nodes):
        first = begin[share, node]
        stop = first + count[share, node]
        feature = split_feature[0, node]
        if feature < 0:
            value = leaf_values[0, node]
            for k in range(first, stop):
                i = np.uint64(order[k])
                margin[0, i] += value
            continue
        uf = np.uint64(feature)
        side, s, d = node_sides(sides, node), splits[1][0, node], splits[2][0, node]
        left_value = leaf_values[0, left_child[0, node]]
        right_value = leaf_values[0, right_child[0, node]]
        for k in range(first, stop):
            i = np.uint64(order[k])
            left = row_goes_left(codes[i, uf], side, s, d, missing_code)
            margin[0, i] += left_value if left else right_value


@numba.njit(nogil=True, cache=True)
def write_positions(order, begin, count, positions):
    """Each row's node id, ``positions[0, row]``, from the runs of the nodes holding
    rows."""
    for share in range(count.shape[0]):
        for node in range(count.shape[1]):
            for k in range(begin[share, node], begin[share, node] + count[share, node]):
                positions[0, np.uint64(order[k])] = node
