"""Gradient histograms: the one heavy pass per tree level.

A histogram holds, for each node being built, each feature and each bin code, the sums
of the rows' gradients and hessians (XGBoost paper §3.3: split finding only needs these
bucket sums).  Sums are float64 so adding partitions in any fixed order loses nothing
that matters.

Layout: a node's histogram is one run of cells, feature after feature, each feature as
wide as its own bins plus one cell for its missing rows (LightGBM's layout):
``hist[slot, cell] = (sum g, sum h)`` with feature ``f``'s value bin ``b`` at cell
``cell_offsets[f] + b`` and its missing rows at ``cell_offsets[f + 1] - 1``
(``binning.BinMapper.cell_offsets``).  A feature with 4,000 categories next to features
with 256 bins widens only itself.

A row whose gradient and hessian are both 0 (sampled out, of weight 0, or held out by a
cross-validation fold, ``cv``) is moved to its child but added to no histogram: adding
zeros changes no sum (a cell is never -0.0, so not even its sign), and with 5-fold
``cv`` a fifth of each tree's rows are such rows.

Rows are visited once, row-major: each row's codes are contiguous; the same pass first
moves the row to its child under the previous level's splits, then the row's node
decides which histogram slot it feeds (``node_to_slot[node] == -1``: not built this
level, e.g. the larger sibling that is derived by subtraction).  Streaming every row
once per level measured faster on this hardware than gathering each level's built rows
through an index list made for the pass (random row fetches) or than one pass per group
of nodes; where a tree's levels grow in one compiled call, the rows are instead kept
grouped by node from level to level (``row_partition``), which is faster.  On native
threads, and for a model with categorical features on one thread too, the pass is two
phases instead (all rows moved, then added; see ``add_block_histograms``).
"""

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from . import native_threads


def row_blocks(codes):
    """``(start, stop, block)`` row blocks of a code matrix: a numpy array is one block;
    a ``blockstore.StoredArray`` streams its blocks (prefetching those on disk)."""
    if isinstance(codes, np.ndarray):
        yield 0, codes.shape[0], codes
    else:
        yield from codes.blocks()


# the cells of a row are uint16: a histogram of at most this many cells
MAX_CELLS_OF = 1 << 16


def cells_of(codes, cell_offsets):
    """Each row's histogram cell for each feature, (n_rows, n_features) uint16, for the
    row kernels given them as codes with ``cell_offsets=None``: where the features'
    widths differ (categorical features, ``uniform_width`` 0) the kernels would
    otherwise find each cell with a min() against the feature's missing cell, which
    took a third more time a feature and row (diamonds' roots: 0.93 against 0.65 ns).
    Twice the bytes of one-byte codes; None where the cells do not fit in uint16."""
    if cell_offsets[-1] > MAX_CELLS_OF:
        return None
    cells = np.empty(codes.shape, dtype=np.uint16)
    _fill_cells(codes, cell_offsets, cells)
    return cells


@numba.njit(nogil=True, cache=True)
def _fill_cells(codes, cell_offsets, cells):
    for i in range(codes.shape[0]):
        for f in range(codes.shape[1]):
            # the missing code is above every feature's bins: min() sends it to the
            # feature's last cell, as ``_add_row_features`` does
            cells[i, f] = min(cell_offsets[f] + np.int64(codes[i, f]), cell_offsets[f + 1] - 1)


def uniform_width(cell_offsets):
    """The common width of every feature's cells when all features are as wide as the
    codes (each has ``missing_code`` value bins: continuous data), else 0.  The kernels
    then find a cell as ``feature * width + code``, with no test for the missing code:
    the min() of the general case cost 7-10% of the 1M-row kernel's time."""
    widths = np.diff(cell_offsets)
    return int(widths[0]) if len(widths) and (widths == widths[0]).all() else 0


def build_histograms(codes, grad, hess, positions, split_feature, split_bin, default_left,
                     left_child, right_child, missing_code, node_to_slot, n_slots, cell_offsets,
                     out_positions=None, cat_table=None, cell_width=None, quantized=None):
    """Apply the last level's splits and sum (g, h) per (node slot, feature, bin code).

    For each of the K trees grown together (K = 1, or one tree per class), one pass
    over the rows: a row's codes are read once, for moving it to its child and for
    adding it to its node's histogram.  (Trees outermost: with all K trees in the inner
    loop, K = 10 thrashed the cache with K times more histograms and ran 3x slower.)

    Parameters
    ----------
    codes : (n_rows, n_features) uint8 or uint16 array of bin codes.
    grad, hess : (K, n_rows) float32 arrays.
    positions : (K, n_rows) int32 node id of every row in every tree, before the splits.
    split_feature, split_bin, default_left, left_child, right_child : (K, n_nodes)
        arrays describing the splits to apply (``split_feature == -1``: node not split).
    missing_code : int, the code of missing values.
    node_to_slot : (K, n_nodes) int32, the histogram slot of each node, -1 to skip it.
    n_slots : number of histograms (slots are numbered across the K trees).
    cell_offsets : (n_features + 1,) int64, where each feature's cells start (see the
        module docstring); ``cell_offsets[-1]`` cells per histogram.
    cat_table : None, or for models with categorical features the (n_sets, n_codes) bool
        right sets of the categorical splits: a node with ``split_bin = -1 - r`` sends a
        row whose code is ``c`` right iff ``cat_table[r, c]`` (None: numba compiles
        the kernels without the category test).
    cell_width : ``uniform_width(cell_offsets)`` if known (``BinMapper.cell_width``),
        else None to compute it here.
    quantized : None, or the (K, n_rows) packed gradients of ``quantize.quantize``
        (``grad`` and ``hess`` are then not read): the histograms are then packed integer
        sums, (n_slots, n_cells) int64 (``quantize.unpack_histograms``).

    Returns
    -------
    new_positions : (K, n_rows) int32 (``out_positions`` if given: it may be
        ``positions`` itself, each row's node is read before it is overwritten).
    hist : (n_slots, n_cells, 2) float64, or with ``quantized`` (n_slots, n_cells) int64.
    """
    new_positions = np.empty_like(positions) if out_positions is None else out_positions
    if cell_width is None:
        cell_width = uniform_width(cell_offsets)
    hist = new_histograms(n_slots, cell_offsets, quantized is not None)
    splits = (split_feature, split_bin, default_left, left_child, right_child)
    # block by block, into the same histogram: each cell sums its rows in row order
    # whatever the blocks, so the sums do not depend on the memory budget
    for start, stop, block in row_blocks(codes):
        rows = slice(start, stop)
        g, h, packed = ((grad[:, rows], hess[:, rows], None) if quantized is None
                        else (None, None, quantized[:, rows]))
        add_block_histograms(hist, block, g, h, positions[:, rows], new_positions[:, rows],
                             splits, missing_code, node_to_slot, cell_offsets, cell_width,
                             cat_table, packed)
    return new_positions, hist


def new_histograms(n_slots, cell_offsets, quantized=False):
    """Zeroed histograms of ``n_slots`` nodes: (n_slots, n_cells, 2) float64 (g, h), or
    with quantized gradients (n_slots, n_cells) int64 packed sums."""
    n_cells = cell_offsets[-1]
    if quantized:
        return np.zeros((n_slots, n_cells), dtype=np.int64)
    return np.zeros((n_slots, n_cells, 2), dtype=np.float64)


def add_block_histograms(hist, codes, grad, hess, positions, new_positions, splits,
                         missing_code, node_to_slot, cell_offsets, cell_width, cat_table=None,
                         quantized=None):
    """``build_histograms`` on one block of rows: its rows move under ``splits`` (the
    five split arrays) from ``positions`` to ``new_positions`` (may be the same array)
    and add into ``hist``; ``cell_width``: ``uniform_width(cell_offsets)``."""
    level_pass(codes, grad, hess, quantized, positions, new_positions, tuple(splits),
               missing_code, node_to_slot, cat_table, hist, cell_offsets, cell_width,
               kernel_threads_of(codes))


@numba.njit(nogil=True, cache=True)
def level_pass(codes, grad, hess, packed, positions, new_positions, splits, missing_code,
               node_to_slot, cat_table, hist, cell_offsets, width, n_threads):
    """A level's pass over a block of rows (``add_block_histograms``; a tree's levels
    in one call, ``levels_in_place``, call it too): on ``n_threads`` > 1 native
    threads, and for a model with categorical features (``cat_table`` not None) on one
    thread too, two phases, the rows moved, then added; else the fused one-thread
    kernel (on one thread, with categorical features the fused kernel's category test
    made it 15-25% slower than the two phases: flights' and diamonds' level calls
    replayed).  ``packed``: quantized gradients, or None for float ``grad``, ``hess``.
    The same sums whichever runs."""
    if n_threads > 1 or cat_table is not None:
        row_slots = np.empty(positions.shape, dtype=np.int32)
        route_level_rows(codes, positions, splits, missing_code, node_to_slot,
                         new_positions, cat_table, row_slots, n_threads)
        add_level_rows(codes, grad, hess, packed, row_slots, hist, cell_offsets, width,
                       min(n_threads, codes.shape[1]))
    else:
        fused_level(codes, grad, hess, packed, positions, new_positions, splits,
                    missing_code, node_to_slot, cat_table, hist, cell_offsets, width)


def fused_level(codes, grad, hess, packed, positions, new_positions, splits, missing_code,
                node_to_slot, cat_table, hist, cell_offsets, width):
    """The fused one-thread level kernel of a numeric model: ``accumulate_histograms``,
    or with ``packed`` its packed version (chosen by ``packed``'s type where numba
    compiles the caller: ``_fused_level_for``).  Never run for a model with
    categorical features (``cat_table`` not None), for which nothing is compiled."""
    raise NotImplementedError("for compiled callers")


@overload(fused_level, jit_options={"nogil": True, "cache": True})
def _fused_level_for(codes, grad, hess, packed, positions, new_positions, splits,
                     missing_code, node_to_slot, cat_table, hist, cell_offsets, width):
    if not isinstance(cat_table, types.NoneType):
        return (lambda codes, grad, hess, packed, positions, new_positions, splits,
                missing_code, node_to_slot, cat_table, hist, cell_offsets, width: None)
    if isinstance(packed, types.NoneType):
        def fused_float(codes, grad, hess, packed, positions, new_positions, splits,
                        missing_code, node_to_slot, cat_table, hist, cell_offsets, width):
            accumulate_histograms(codes, grad, hess, positions, splits[0], splits[1],
                                  splits[2], splits[3], splits[4], missing_code,
                                  node_to_slot, new_positions, hist, cell_offsets, width,
                                  None)
        return fused_float

    def fused_packed(codes, grad, hess, packed, positions, new_positions, splits,
                     missing_code, node_to_slot, cat_table, hist, cell_offsets, width):
        accumulate_packed_histograms(codes, packed, positions, splits[0], splits[1],
                                     splits[2], splits[3], splits[4], missing_code,
                                     node_to_slot, new_positions, hist, cell_offsets, width,
                                     None)
    return fused_packed


@numba.njit(nogil=True, cache=True, inline="always")
def _add_row(row_hist, codes, i, g, h, cell_offsets, width):
    """Add a row's (g, h) into the cells of its codes in one node's histogram
    (``row_hist``: cell c's (g, h) at 2c, 2c + 1); ``width``: ``uniform_width``."""
    _add_row_features(row_hist, codes, i, 0, codes.shape[1], g, h, cell_offsets, width)


@numba.njit(nogil=True, cache=True, inline="always")
def _add_row_features(row_hist, codes, i, first, stop, g, h, cell_offsets, width):
    """``_add_row`` for features ``first..stop-1`` only; ``cell_offsets`` None:
    ``codes`` holds the rows' cells (``cells_of``; numba compiles the other cases
    away, and this one away where ``cell_offsets`` is an array: a test of ``width``
    inside the kernels instead doubled the time of the others).  (Feature indices
    unsigned: numba then skips its negative-index fix-up, which a range not starting
    at a constant 0 would need.)"""
    if cell_offsets is None:
        for f in range(first, stop):
            cell = np.uint64(2) * np.uint64(codes[i, np.uint64(f)])
            row_hist[cell] += g
            row_hist[cell + np.uint64(1)] += h
    elif width:  # every feature as wide as the codes (see uniform_width)
        for f in range(first, stop):
            uf = np.uint64(f)
            # (unsigned arithmetic: ~3% faster than int64's, 500k rows x 28 features)
            cell = np.uint64(2) * (uf * np.uint64(width) + np.uint64(codes[i, uf]))
            row_hist[cell] += g
            row_hist[cell + np.uint64(1)] += h
    else:
        for f in range(first, stop):
            uf = np.uint64(f)
            # the missing code is above every feature's bins: min() sends it to the
            # feature's last cell
            cell = np.uint64(2) * min(np.uint64(cell_offsets[uf]) + np.uint64(codes[i, uf]),
                                      np.uint64(cell_offsets[uf + np.uint64(1)])
                                      - np.uint64(1))
            row_hist[cell] += g
            row_hist[cell + np.uint64(1)] += h


# ---- a row's move under its node's split ----------------------------------------------
# Every kernel that moves rows writes the move out (five lines) around ``goes_left``, a
# helper of scalars.  A helper taking the node arrays was not compiled away (the
# diamonds fit took twice as long).  A model without categorical splits passes
# ``cat_table=None``, which numba compiles away: an empty table passed instead slowed
# the packed kernel's additions too, by up to half of its time (roots' pass of 125k rows
# x 28 features 5.0 -> 2.5 ms).  And the side a row takes is computed without a branch:
# a split sends rows either way at random, and the mispredicted branch cost up to a
# quarter of a level's kernel (``benchmarks/RESULTS.md``).

@numba.njit(nogil=True, cache=True, inline="always")
def goes_left(code, split_bin, missing_code, default_left, cat_table):
    """Whether a row with ``code`` goes left at a split on ``split_bin``: missing rows
    take the default direction; with ``split_bin >= 0``, or any split when ``cat_table``
    is None: numeric, ``code <= split_bin`` (a monotone-constrained split may have bin
    -1: every present value right); else categorical, left unless ``code`` is in
    ``cat_table[-1 - split_bin]``.  Computed without a branch on the outcome."""
    missing = code == missing_code
    if cat_table is None:
        present_left = code <= split_bin
    elif split_bin >= 0:
        present_left = code <= split_bin
    else:  # (the missing code may lie past the table: clamped, its answer unused)
        present_left = not cat_table[np.uint64(-1 - split_bin),
                                     min(np.uint64(code), np.uint64(cat_table.shape[1] - 1))]
    return (missing & default_left) | ((not missing) & present_left)


@numba.njit(nogil=True, cache=True)
def accumulate_histograms(codes, grad, hess, positions, split_feature, split_bin,
                          default_left, left_child, right_child, missing_code, node_to_slot,
                          new_positions, hist, cell_offsets, width, cat_table=None):
    """The kernel of ``build_histograms`` on one block of rows (adds into ``hist``);
    ``width``: ``uniform_width(cell_offsets)``; ``cat_table``: None for a model without
    categorical features (numba then compiles a version without the category test)."""
    n_trees = positions.shape[0]
    n_rows = codes.shape[0]
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for t in range(n_trees):
        for i in range(n_rows):
            # the row moves to its child (the move written out in each kernel: see
            # ``goes_left``); unsigned indices: numba then skips its negative-index
            # fix-up (~18% of this loop's time)
            node = np.uint64(positions[t, i])
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                    missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            new_positions[t, i] = node
            slot = node_to_slot[t, node]
            if slot < 0:
                continue
            g = np.float64(grad[t, i])
            h = np.float64(hess[t, i])
            if g == 0.0 and h == 0.0:
                continue  # a row left out (sampled out, weight 0, held out by a cv fold)
            _add_row(flat[np.uint64(slot)], codes, i, g, h, cell_offsets, width)


@numba.njit(nogil=True, cache=True)
def accumulate_root_histograms(codes, grad, hess, root_slots, hist, cell_offsets, width):
    """``accumulate_histograms`` where every row sits at its trees' roots and no split
    is applied (a round's first pass): tree t's rows add into slot ``root_slots[t]``,
    in row order, without the per-row routing and slot lookup (~15% of the kernel's
    time on 125k rows x 28 features).  The same cells, the same sums."""
    _add_root_rows(codes, grad, hess, root_slots, hist, cell_offsets, width, 0,
                   codes.shape[1])


@numba.njit(nogil=True, cache=True, parallel=True)
def add_root_rows_parallel(codes, grad, hess, root_slots, hist, cell_offsets, width,
                           n_parts):
    """``accumulate_root_histograms`` with the features in ``n_parts`` ranges, one a
    thread (each cell's sums in row order still: the same sums)."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, codes.shape[1])
        _add_root_rows_of_features(codes, grad, hess, root_slots, hist, cell_offsets, width,
                                   first, stop)


@numba.njit(nogil=True, cache=True)
def _add_root_rows_of_features(codes, grad, hess, root_slots, hist, cell_offsets, width,
                               first, stop):
    """A thread's part of ``add_root_rows_parallel`` (a function of its own, as
    ``_add_rows_of_features``)."""
    _add_root_rows(codes, grad, hess, root_slots, hist, cell_offsets, width, first, stop)


@numba.njit(nogil=True, cache=True, inline="always")
def _add_root_rows(codes, grad, hess, root_slots, hist, cell_offsets, width, first, stop):
    """``accumulate_root_histograms`` for features ``first..stop-1``."""
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for t in range(grad.shape[0]):
        if root_slots[t] < 0:
            continue
        row_hist = flat[np.uint64(root_slots[t])]
        for i in range(codes.shape[0]):
            g = np.float64(grad[t, i])
            h = np.float64(hess[t, i])
            if g == 0.0 and h == 0.0:
                continue  # a row left out (sampled out, weight 0, held out by a cv fold)
            _add_row_features(row_hist, codes, i, first, stop, g, h, cell_offsets, width)


def add_root_histograms(hist, codes, grad, hess, root_slots, cell_offsets, width):
    """``accumulate_root_histograms``, its features spread over native threads when a
    kernel may use them.  (Before, ``add_rows`` with a slot array holding each row's
    root: with its fill and its read per row, a diamonds fit's roots took 29-32 ms
    against 22-25 ms now.)"""
    if _on_native_threads(codes):
        add_root_rows_parallel(codes, grad, hess, root_slots, hist, cell_offsets, width,
                               min(kernel_threads_of(codes), codes.shape[1]))
    else:
        accumulate_root_histograms(codes, grad, hess, root_slots, hist, cell_offsets, width)


def add_histograms(a, b):
    """Reduction step for the tree-reduce over partitions (fixed order: a then b); float
    or packed integer histograms, or a round start's ``quantize.GradientMaxima``."""
    return a + b


def add_histograms_into(a, b):
    """``add_histograms`` reusing ``a``'s memory (same sums, same order).

    Only where each partial sum is used exactly once: in-process passes, a worker's
    own partial sums, and the client's sum of the workers' replies (not in task
    graphs: a retried task on ``distributed`` could see an input it already mutated).
    A read-only ``a`` (e.g. a reply deserialized over a read-only buffer) is not
    touched.
    """
    if not isinstance(a, np.ndarray) or not a.flags.writeable:
        return a + b  # (also a round start's ``quantize.GradientMaxima``)
    return np.add(a, b, out=a)


def add_leaf_values(codes, positions, split_feature, split_bin, default_left, left_child,
                    right_child, missing_code, leaf_values, margin, out, cat_table=None):
    """``out = margin + leaf value of each row`` after applying the last splits, for
    one block of rows (``out`` may be ``margin`` itself).

    Finishes the K trees of a round: the rows move to their leaves and the leaves'
    outputs (learning rate included) are added to the margins.  ``positions``/``margin``
    /``out``: (K, n_rows); split arrays and ``leaf_values``: (K, n_nodes); ``cat_table``
    as for ``accumulate_histograms``.  On native threads the rows are spread over them
    (a row's value depends on that row alone: the same values on any number of
    threads).
    """
    args = (codes, positions, split_feature, split_bin, default_left, left_child,
            right_child, missing_code, leaf_values, margin, out, cat_table)
    if _on_native_threads(codes):
        add_leaf_values_parallel(*args, native_threads.threads())
    else:
        add_leaf_values_kernel(*args)


@numba.njit(nogil=True, cache=True)
def add_leaf_values_kernel(codes, positions, split_feature, split_bin, default_left,
                           left_child, right_child, missing_code, leaf_values, margin, out,
                           cat_table=None):
    """``add_leaf_values`` on one thread."""
    _add_leaf_values_rows(codes, positions, split_feature, split_bin, default_left,
                          left_child, right_child, missing_code, leaf_values, margin, out,
                          cat_table, 0, positions.shape[1])


@numba.njit(nogil=True, cache=True, parallel=True)
def add_leaf_values_parallel(codes, positions, split_feature, split_bin, default_left,
                             left_child, right_child, missing_code, leaf_values, margin, out,
                             cat_table, n_parts):
    """``add_leaf_values`` with the rows in ``n_parts`` ranges, one a thread."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, positions.shape[1])
        _add_leaf_values_rows(codes, positions, split_feature, split_bin, default_left,
                              left_child, right_child, missing_code, leaf_values, margin,
                              out, cat_table, first, stop)


@numba.njit(nogil=True, cache=True)
def _add_leaf_values_rows(codes, positions, split_feature, split_bin, default_left,
                          left_child, right_child, missing_code, leaf_values, margin, out,
                          cat_table, first, stop):
    """``add_leaf_values`` for rows ``first..stop-1``."""
    for t in range(positions.shape[0]):
        for row in range(first, stop):
            i = np.uint64(row)  # unsigned indices (see above)
            node = np.uint64(positions[t, i])
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                    missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            out[t, i] = margin[t, i] + leaf_values[t, node]


@numba.njit(nogil=True, cache=True, inline="always")
def wide_packed(v, row_bits):
    """A row's packed quantized ``q_g * 2**row_bits + q_h`` (``quantize.row_dtype``;
    ``row_bits``: half the bits of its integer type) as a histogram cell's
    ``q_g * 2**32 + q_h``.  (Here beside the kernels that inline it: numba's cache of a
    kernel does not notice a change to a function of another module.)"""
    v = np.int64(v)
    half = np.int64(1) << (row_bits - 1)
    low = (np.int64(1) << row_bits) - 1
    h = ((v + half) & low) - half  # the low row_bits bits, signed
    return (((v - h) >> row_bits) << 32) + h


@numba.njit(nogil=True, cache=True)
def accumulate_packed_histograms(codes, packed, positions, split_feature, split_bin,
                                 default_left, left_child, right_child, missing_code,
                                 node_to_slot, new_positions, hist, cell_offsets, width,
                                 cat_table):
    """``accumulate_histograms`` for quantized gradients (``quantize``):
    ``packed`` (K, n_rows) holds each row's (g, h) (``quantize.row_dtype``), and a cell
    of ``hist`` (n_slots, n_cells) int64 is one addition (half the memory and about half
    the time of a float64 pair); ``cat_table`` as for ``accumulate_histograms``."""
    row_bits = packed.itemsize * 4
    n_trees = positions.shape[0]
    n_rows, n_features = codes.shape
    for t in range(n_trees):
        for i in range(n_rows):
            node = np.uint64(positions[t, i])  # unsigned indices (see above)
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                    missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            new_positions[t, i] = node
            slot = node_to_slot[t, node]
            if slot < 0:
                continue
            v = packed[t, i]
            if v == 0:
                continue  # a row left out (or whose g and h both rounded to 0)
            _add_packed_row_features(hist[np.uint64(slot)], codes, i, 0, n_features,
                                     wide_packed(v, row_bits), cell_offsets, width)


@numba.njit(nogil=True, cache=True, inline="always")
def _add_packed_row_features(row_hist, codes, i, first, stop, v, cell_offsets, width):
    """``_add_row_features`` for a packed quantized (g, h): one int64 addition a cell."""
    if cell_offsets is None:  # (cells: see ``_add_row_features``)
        for f in range(first, stop):
            row_hist[np.uint64(codes[i, np.uint64(f)])] += v
    elif width:  # every feature as wide as the codes (see uniform_width)
        for f in range(first, stop):
            uf = np.uint64(f)
            row_hist[uf * np.uint64(width) + np.uint64(codes[i, uf])] += v
    else:
        for f in range(first, stop):
            uf = np.uint64(f)
            row_hist[min(np.uint64(cell_offsets[uf]) + np.uint64(codes[i, uf]),
                         np.uint64(cell_offsets[uf + np.uint64(1)]) - np.uint64(1))] += v


# ---- the pass on native threads (``native_threads``) ---------------------------------
# Two phases, each one parallel region: the rows move to their children (rows spread
# over the threads; a row's move depends on that row alone), then the threads add the
# rows into the histograms, each thread the cells of its own range of features, every
# row in row order.  Each cell gets the same additions in the same order as in the
# one-thread kernels above: the same sums, bit for bit, on any number of threads.  (The
# threads do not split the rows: that would sum each cell in two halves.)

# rows of a block below which its pass stays on one thread (two regions' start, ~10 us,
# against ~15 ns a row of 28 features)
NATIVE_MIN_ROWS = 2048


def _on_native_threads(codes):
    return codes.shape[0] >= NATIVE_MIN_ROWS and native_threads.threads() > 1


def kernel_threads_of(codes):
    """The native threads a kernel on this block may use now (1: its serial version)."""
    return native_threads.threads() if _on_native_threads(codes) else 1


@numba.njit(nogil=True, cache=True)
def route_level_rows(codes, positions, splits, missing_code, node_to_slot, new_positions,
                     cat_table, row_slots, n_threads):
    """Phase one on ``n_threads`` native threads (one: the serial kernel, no parallel
    region)."""
    split_feature, split_bin, default_left, left_child, right_child = splits
    if n_threads > 1:
        route_rows_parallel(codes, positions, split_feature, split_bin, default_left,
                            left_child, right_child, missing_code, node_to_slot,
                            new_positions, cat_table, row_slots, n_threads)
    else:
        _route_rows(codes, positions, split_feature, split_bin, default_left, left_child,
                    right_child, missing_code, node_to_slot, new_positions, cat_table,
                    row_slots, np.int64(0), codes.shape[0])


def add_level_rows(codes, grad, hess, packed, row_slots, hist, cell_offsets, width, n_parts):
    """Phase two: float ``(grad, hess)`` or packed ``packed`` sums into ``hist``, the
    features in ``n_parts`` ranges on as many native threads (one: the serial kernel),
    chosen by ``packed``'s type where numba compiles the caller
    (``_add_level_rows_for``; from Python: ``add_rows``)."""
    raise NotImplementedError("for compiled callers")


@overload(add_level_rows, jit_options={"nogil": True, "cache": True})
def _add_level_rows_for(codes, grad, hess, packed, row_slots, hist, cell_offsets, width,
                        n_parts):
    if isinstance(packed, types.NoneType):
        def add_float(codes, grad, hess, packed, row_slots, hist, cell_offsets, width,
                      n_parts):
            if n_parts > 1:
                add_rows_parallel(codes, grad, hess, row_slots, hist, cell_offsets, width,
                                  n_parts)
            else:
                _add_rows_of_features(codes, grad, hess, row_slots, hist, cell_offsets,
                                      width, np.int64(0), codes.shape[1])
        return add_float

    def add_packed(codes, grad, hess, packed, row_slots, hist, cell_offsets, width, n_parts):
        if n_parts > 1:
            add_packed_rows_parallel(codes, packed, row_slots, hist, cell_offsets, width,
                                     n_parts)
        else:
            _add_packed_rows_of_features(codes, packed, row_slots, hist, cell_offsets, width,
                                         np.int64(0), codes.shape[1])
    return add_packed


@numba.njit(nogil=True, cache=True)
def add_rows(codes, grad, hess, packed, row_slots, hist, cell_offsets, width, n_parts):
    """``add_level_rows`` for Python callers."""
    add_level_rows(codes, grad, hess, packed, row_slots, hist, cell_offsets, width, n_parts)


@numba.njit(nogil=True, cache=True, parallel=True)
def route_rows_parallel(codes, positions, split_feature, split_bin, default_left, left_child,
                        right_child, missing_code, node_to_slot, new_positions, cat_table,
                        row_slots, n_parts):
    """Phase one: each row of each tree moves under the splits (as in
    ``accumulate_histograms``; a numeric model's ``cat_table`` is None) from
    ``positions`` to ``new_positions`` (may be the same array), and ``row_slots[t, i]``
    is its node's histogram slot (-1: none); the rows in ``n_parts`` ranges, one a
    thread."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, codes.shape[0])
        _route_rows(codes, positions, split_feature, split_bin, default_left, left_child,
                    right_child, missing_code, node_to_slot, new_positions, cat_table,
                    row_slots, first, stop)


@numba.njit(nogil=True, cache=True)
def _route_rows(codes, positions, split_feature, split_bin, default_left, left_child,
                right_child, missing_code, node_to_slot, new_positions, cat_table, row_slots,
                first, stop):
    """A thread's part of ``route_rows_parallel``: rows ``first..stop-1``."""
    for t in range(positions.shape[0]):
        for row in range(first, stop):
            i = np.uint64(row)  # unsigned indices (see above)
            node = np.uint64(positions[t, i])
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                    missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            new_positions[t, i] = node
            row_slots[t, i] = node_to_slot[t, node]


@numba.njit(nogil=True, cache=True, inline="always")
def part_range(part, n_parts, n_items):
    """The items (rows, features or nodes) of thread ``part`` of ``n_parts``:
    contiguous, in order."""
    return part * n_items // n_parts, (part + 1) * n_items // n_parts


@numba.njit(nogil=True, cache=True, parallel=True)
def add_rows_parallel(codes, grad, hess, row_slots, hist, cell_offsets, width, n_parts):
    """Phase two, float gradients: every row with a slot adds its (g, h) into that
    slot's cells (rows whose g and h are both 0 skipped, as in the one-thread kernels);
    the features in ``n_parts`` ranges, one a thread."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, codes.shape[1])
        _add_rows_of_features(codes, grad, hess, row_slots, hist, cell_offsets, width,
                              first, stop)


@numba.njit(nogil=True, cache=True)
def _add_rows_of_features(codes, grad, hess, row_slots, hist, cell_offsets, width, first,
                          stop):
    """A thread's part of ``add_rows_parallel``: features ``first..stop-1``.  (A
    function of its own, not the parallel loop's body: compiled inside the parallel
    loop the same loop ran 1.5x slower.)"""
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for t in range(row_slots.shape[0]):
        for i in range(codes.shape[0]):
            slot = row_slots[t, i]
            if slot < 0:
                continue
            g = np.float64(grad[t, i])
            h = np.float64(hess[t, i])
            if g == 0.0 and h == 0.0:
                continue
            _add_row_features(flat[np.uint64(slot)], codes, i, first, stop, g, h,
                              cell_offsets, width)


@numba.njit(nogil=True, cache=True, parallel=True)
def add_packed_rows_parallel(codes, packed, row_slots, hist, cell_offsets, width, n_parts):
    """Phase two, quantized gradients (``accumulate_packed_histograms``' additions)."""
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, codes.shape[1])
        _add_packed_rows_of_features(codes, packed, row_slots, hist, cell_offsets, width,
                                     first, stop)


@numba.njit(nogil=True, cache=True)
def _add_packed_rows_of_features(codes, packed, row_slots, hist, cell_offsets, width, first,
                                 stop):
    """A thread's part of ``add_packed_rows_parallel``: features ``first..stop-1``."""
    row_bits = packed.itemsize * 4
    for t in range(row_slots.shape[0]):
        for i in range(codes.shape[0]):
            slot = row_slots[t, i]
            if slot < 0:
                continue
            v = packed[t, i]
            if v == 0:
                continue
            _add_packed_row_features(hist[np.uint64(slot)], codes, i, first, stop,
                                     wide_packed(v, row_bits), cell_offsets, width)
