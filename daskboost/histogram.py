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
once per level measured faster on this hardware than gathering each node's rows
through an index list (random row fetches) or than one pass per group of nodes.
"""

import numba
import numpy as np


# the category table of models without categorical splits (the packed kernel serves both)
NO_CATEGORIES = np.zeros((0, 1), dtype=np.bool_)


def row_blocks(codes):
    """``(start, stop, block)`` row blocks of a code matrix: a numpy array is one block;
    a ``blockstore.StoredArray`` streams its blocks (prefetching those on disk)."""
    if isinstance(codes, np.ndarray):
        yield 0, codes.shape[0], codes
    else:
        yield from codes.blocks()


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
        row whose code is ``c`` right iff ``cat_table[r, c]`` (the ``_categorical``
        kernel; numeric models keep the plain one).
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
    moves = (positions, *splits, missing_code, node_to_slot, new_positions, hist,
             cell_offsets, cell_width)
    if quantized is not None:
        accumulate_packed_histograms(codes, quantized, *moves,
                                     NO_CATEGORIES if cat_table is None else cat_table)
    elif cat_table is None:
        accumulate_histograms(codes, grad, hess, *moves)
    else:
        accumulate_histograms_categorical(codes, grad, hess, *moves, cat_table)


@numba.njit(nogil=True, cache=True, inline="always")
def _add_row(row_hist, codes, i, g, h, cell_offsets, width):
    """Add a row's (g, h) into the cells of its codes in one node's histogram
    (``row_hist``: cell c's (g, h) at 2c, 2c + 1); ``width``: ``uniform_width``."""
    if width:  # every feature as wide as the codes (see uniform_width)
        for f in range(codes.shape[1]):
            # (unsigned arithmetic: ~3% faster than int64's, 500k rows x 28 features)
            cell = np.uint64(2) * (np.uint64(f) * np.uint64(width) + np.uint64(codes[i, f]))
            row_hist[cell] += g
            row_hist[cell + np.uint64(1)] += h
    else:
        for f in range(codes.shape[1]):
            # the missing code is above every feature's bins: min() sends it to the
            # feature's last cell
            cell = np.uint64(2) * min(np.uint64(cell_offsets[f]) + np.uint64(codes[i, f]),
                                      np.uint64(cell_offsets[f + 1]) - np.uint64(1))
            row_hist[cell] += g
            row_hist[cell + np.uint64(1)] += h


@numba.njit(nogil=True, cache=True)
def accumulate_histograms(codes, grad, hess, positions, split_feature, split_bin,
                           default_left, left_child, right_child, missing_code, node_to_slot,
                           new_positions, hist, cell_offsets, width):
    """The kernel of ``build_histograms`` on one block of rows (adds into ``hist``);
    ``width``: ``uniform_width(cell_offsets)``."""
    n_trees = positions.shape[0]
    n_rows = codes.shape[0]
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for t in range(n_trees):
        for i in range(n_rows):
            # move the row to its child (the split test is written out here and in
            # add_leaf_values_kernel, not called: a function call in this loop, even
            # numba-inlined, measured 1.3-2.7x slower)
            # unsigned indices: numba then skips its negative-index fix-up (~18% of
            # this loop's time)
            node = np.uint64(positions[t, i])
            f_split = split_feature[t, node]
            if f_split >= 0:
                code = codes[i, np.uint64(f_split)]
                if code == missing_code:
                    go_left = default_left[t, node]
                else:
                    go_left = code <= split_bin[t, node]
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
            _add_row(row_hist, codes, i, g, h, cell_offsets, width)


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


@numba.njit(nogil=True, cache=True)
def add_leaf_values_kernel(codes, positions, split_feature, split_bin, default_left,
                           left_child, right_child, missing_code, leaf_values, margin, out):
    """``out = margin + leaf value of each row`` after applying the last splits, for
    one block of rows (``out`` may be ``margin`` itself).

    Finishes the K trees of a round: the rows move to their leaves and the leaves'
    outputs (learning rate included) are added to the margins.  ``positions``/``margin``
    /``out``: (K, n_rows); split arrays and ``leaf_values``: (K, n_nodes).
    """
    for t in range(positions.shape[0]):
        for i in range(positions.shape[1]):
            # the split test of build_histograms, written out (see there)
            node = np.uint64(positions[t, i])  # unsigned indices (see above)
            f_split = split_feature[t, node]
            if f_split >= 0:
                code = codes[i, np.uint64(f_split)]
                if code == missing_code:
                    go_left = default_left[t, node]
                else:
                    go_left = code <= split_bin[t, node]
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            out[t, i] = margin[t, i] + leaf_values[t, node]


# ---- models with categorical features (issue 13) -------------------------------------
# The two kernels above with the category-set test; kept apart so that the numeric
# kernels stay exactly as fast as they were.  Here the test is one inlined function,
# ``_goes_left``, shared with the packed kernel: measured as fast as written out (1M
# rows, 16 slots: 17.15 / 17.08 ms, 18.64 / 18.60 ms written out / called).

@numba.njit(nogil=True, cache=True, inline="always")
def _goes_left(code, split_bin, missing_code, default_left, cat_table):
    """Whether a row with ``code`` goes left at a split on ``split_bin``: missing rows
    take the default direction; ``split_bin >= 0``: numeric, ``code <= split_bin``;
    else categorical, left unless ``code`` is in ``cat_table[-1 - split_bin]``."""
    if code == missing_code:
        return default_left
    if split_bin >= 0:
        return code <= split_bin
    return not cat_table[-1 - split_bin, code]


@numba.njit(nogil=True, cache=True)
def accumulate_histograms_categorical(codes, grad, hess, positions, split_feature, split_bin,
                                      default_left, left_child, right_child, missing_code,
                                      node_to_slot, new_positions, hist, cell_offsets,
                                      width, cat_table):
    """``accumulate_histograms`` where a split with ``split_bin < 0`` is categorical: rows
    whose code is in ``cat_table[-1 - split_bin]`` go right (see ``build_histograms``)."""
    n_trees = positions.shape[0]
    n_rows = codes.shape[0]
    flat = hist.reshape((hist.shape[0], hist.shape[1] * 2))
    for t in range(n_trees):
        for i in range(n_rows):
            node = np.uint64(positions[t, i])  # unsigned indices (see above)
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = _goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
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
def add_leaf_values_kernel_categorical(codes, positions, split_feature, split_bin,
                                       default_left, left_child, right_child, missing_code,
                                       leaf_values, margin, out, cat_table):
    """``add_leaf_values_kernel`` with categorical splits (see
    ``accumulate_histograms_categorical``)."""
    for t in range(positions.shape[0]):
        for i in range(positions.shape[1]):
            node = np.uint64(positions[t, i])  # unsigned indices (see above)
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = _goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                     missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            out[t, i] = margin[t, i] + leaf_values[t, node]


@numba.njit(nogil=True, cache=True)
def accumulate_packed_histograms(codes, packed, positions, split_feature, split_bin,
                                 default_left, left_child, right_child, missing_code,
                                 node_to_slot, new_positions, hist, cell_offsets, width,
                                 cat_table):
    """``accumulate_histograms_categorical`` for quantized gradients (``quantize``):
    ``packed`` (K, n_rows) int64 holds each row's (g, h), and a cell of ``hist``
    (n_slots, n_cells) int64 is one addition (half the memory and about half the time
    of a float64 pair).  Numeric splits only when ``cat_table`` is ``NO_CATEGORIES``."""
    n_trees = positions.shape[0]
    n_rows, n_features = codes.shape
    for t in range(n_trees):
        for i in range(n_rows):
            node = np.uint64(positions[t, i])  # unsigned indices (see above)
            f_split = split_feature[t, node]
            if f_split >= 0:
                go_left = _goes_left(codes[i, np.uint64(f_split)], split_bin[t, node],
                                     missing_code, default_left[t, node], cat_table)
                node = np.uint64(left_child[t, node] if go_left else right_child[t, node])
            new_positions[t, i] = node
            slot = node_to_slot[t, node]
            if slot < 0:
                continue
            v = packed[t, i]
            if v == 0:
                continue  # a row left out (or whose g and h both rounded to 0)
            row_hist = hist[np.uint64(slot)]
            if width:  # every feature as wide as the codes (see uniform_width)
                for f in range(n_features):
                    row_hist[np.uint64(f) * np.uint64(width) + np.uint64(codes[i, f])] += v
            else:
                for f in range(n_features):
                    row_hist[min(np.uint64(cell_offsets[f]) + np.uint64(codes[i, f]),
                                 np.uint64(cell_offsets[f + 1]) - np.uint64(1))] += v
