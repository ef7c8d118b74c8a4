"""A tree's levels grown in one compiled call, where the fit's rows are one partition
held in this process, or a few small ones.

The level loop (``level_loop``) runs one pass per level: a ``LevelStep`` built in
Python, the pass (``partition.partition_step``) and the reduction, then
``TreeGrower.receive``. Around the kernels, that Python is 6-14% of a 2,000-50,000-row
fit (``benchmarks/RESULTS.md``, "A tree's levels in one compiled call"). When a round's
trees grow depthwise, without constraints or per-level/per-node column sampling, and
each of the fit's partitions is one in-memory block in this process (several: only
where the level passes run them one after the other with native threads in each
kernel, ``runtime.Runtime.grows_in_place``), the loop hands each tree over with its
root's histogram, built by the round's first pass (``InPlaceLevels``): the round's K
trees (a multiclass round's, a cross-validation's ``nfold * K``) one after the other,
each on its own row of the per-row arrays and its own runs (they are independent once
the round's gradients are computed). ``grow_levels`` then runs what the root's
``receive`` and every later level's pass and ``receive`` would run, with the same
kernels, in the same order, on the same arrays:

- the rows move under the last splits and the requested histograms are built,
  partition by partition, and added in the fixed order of ``reduction``.  Unlike the
  level passes, which visit every row at every level (``histogram.level_pass``), each
  partition's rows are kept grouped by node from level to level (``row_partition``):
  a split moves only its node's rows, a built histogram adds only its node's rows, in
  row order, so each cell gets the same sums;
- the siblings are derived by subtraction (parent - built child);
- the new nodes' splits are searched (``splitting.find_splits_of``, as
  ``TreeGrower._split_kernel`` calls it; quantized sums unpacked first, as
  ``TreeGrower._unpacked`` does);
- ``node_columns.decide_splits`` takes the decisions.

So the trees are the same, bit for bit (``tests/test_levels_in_place.py``). What is left
pending at the end (the last level's splits, applied by the next round's first pass)
goes back to the loop as ``receive`` would have returned it.
"""

from dataclasses import dataclass

import numba
import numpy as np
from numba import types
from numba.extending import overload
from numba.typed import List

from . import native_threads
from .blockstore import StoredArray, single_block
from .histogram import MAX_CELLS_OF, cells_of, kernel_threads_of, part_range
from .node_columns import G, H, decide_splits, split_arrays
from .partition import row_runs_of
from .quantize import float_sums
from .row_partition import node_histograms, split_rows, start_rows
from .splitting import NATIVE_MIN_SEARCH_CELLS, find_splits_of


@dataclass
class InPlaceLevels:
    """The step of a round's tree grown in place from its root's histogram: the
    grower (its node columns are filled in: ``TreeGrower.in_place_root``), the
    histograms of the round's first pass (the root's in slot 0), and what the kernels
    need of the binning and of the round."""

    grower: object
    root_hist: np.ndarray  # the roots' histograms of the round's first pass
    missing_code: int
    cell_width: int
    quant_scale: tuple = None  # (g step, h step) of a quantized round, else None
    # the tree's place among the round's K trees: its row of the per-row (K, n_rows)
    # arrays and of the runs; and its root's slot in ``root_hist``
    tree: int = 0
    root_slot: int = 0


@dataclass
class LevelsGrown:
    """What ``grow_levels`` returns to the loop: the grower's counts after the last
    level, and the nodes split at the last level (their splits are left pending)."""

    n_nodes: int
    n_leaves: int
    n_candidates: int
    chosen: np.ndarray


def grow_in_place(states, step):
    """Run ``step`` (``InPlaceLevels``) on the partition ``states``, each of which
    ``partition.grows_in_place``; returns ``LevelsGrown``.  The partitions' passes run
    one after the other, each pass's kernels on the native threads
    ``histogram.kernel_threads_of`` gives its block (as the level loop's passes over
    such partitions do: ``thread_passes.pass_on_native_threads``); the split search on
    ``native_threads.threads()``."""
    grower, k = step.grower, step.tree
    nodes, mask, root_hist = grower.in_place_root(step.root_hist[step.root_slot:],
                                                  step.quant_scale)
    mapper, p = grower.mapper, grower.params
    g_scale, h_scale = step.quant_scale if step.quant_scale is not None else (1.0, 1.0)
    codes = [single_block(state.codes) for state in states]
    pass_threads = np.array([kernel_threads_of(block) for block in codes], dtype=np.int64)
    tree = slice(k, k + 1)  # (one row of a C-ordered (K, n_rows) array: C-ordered too)
    rows = _partition_arrays(
        codes, [s.grad[tree] for s in states], [s.hess[tree] for s in states],
        None if states[0].quantized is None else [s.quantized[tree] for s in states],
        [_row_runs(s, nodes.ints.shape[0], k, int(n))
         for s, n in zip(states, pass_threads)])
    cells = [_cells(state, block, mapper) for state, block in zip(states, codes)]
    added, add_offsets = ((codes, mapper.cell_offsets) if any(c is None for c in cells)
                          else (cells, None))
    n_nodes, n_leaves, n_candidates, chosen = grow_levels(
        *rows, added[0] if len(added) == 1 else List(added), add_offsets, g_scale, h_scale,
        np.zeros((0, nodes.right_sets.shape[1]), np.bool_) if mapper.has_categorical
        else None, root_hist, nodes.ints, nodes.floats, nodes.candidate_ints, nodes.candidate_floats,
        nodes.right_sets, nodes.candidate_right_sets, mask, mapper.is_categorical,
        mapper.cell_offsets, step.cell_width, nodes.n_codes, step.missing_code,
        p.reg_lambda, p.reg_alpha, p.max_delta_step, p.min_child_weight, p.gamma,
        p.max_cat_to_onehot, p.max_cat_threshold, p.max_depth, p.max_leaves,
        pass_threads, native_threads.threads())
    for state in states:  # (node ids written when read: ``partition._node_ids``)
        state.row_runs.stale = True
    return LevelsGrown(n_nodes, n_leaves, n_candidates, chosen)


def _cells(state, codes, mapper):
    """The histogram cells (``histogram.cells_of``) of the partition's rows, whose
    codes are ``codes``, where the features' widths differ: made by the first tree and
    kept in the state with the codes they are of (``PartitionState.cells``), their
    bytes taken from the memory budget (those of cells of codes binned again given
    back); None where the widths are uniform, the cells do not fit in two bytes or the
    budget has no room for them."""
    if mapper.cell_width or mapper.cell_offsets[-1] > MAX_CELLS_OF:
        return None
    if state.cells is not None and state.cells[0] is codes:
        return state.cells[1]
    store = state.codes.store if isinstance(state.codes, StoredArray) else None
    if store is not None and state.cells is not None and state.cells[1] is not None:
        store.give_back(state.cells[1].nbytes)
    room = store is None or store.reserve(codes.size * np.dtype(np.uint16).itemsize)
    state.cells = (codes, cells_of(codes, mapper.cell_offsets) if room else None)
    return state.cells[1]


def _row_runs(state, n_nodes, tree, n_threads):
    """A partition's rows grouped by node in the round's tree ``tree`` (``row_partition``),
    as ``grow_levels`` takes them, for a tree of ``n_nodes`` nodes at most: from its
    state's ``RowRuns`` (there: ``partition.grows_in_place``), live once the round's
    trees are grown (``level_loop.grow_levels`` grows them all in place, or none); in
    as many shares as its pass has native threads, ``n_threads``."""
    runs = row_runs_of(state)
    arrays = runs.arrays(n_nodes, n_threads, tree)
    runs.live, runs.stale = True, False
    return arrays


def _partition_arrays(codes, grad, hess, packed, runs):
    """The per-row arrays of ``grow_levels``: each partition's (codes, g, h, packed or
    None, row runs); one partition's as they are, several partitions' as typed lists
    (one compiled version for any number of partitions; the runs: a tuple of typed
    lists)."""
    if len(codes) == 1:
        return codes[0], grad[0], hess[0], None if packed is None else packed[0], runs[0]
    return (tuple(None if arrays is None else List(arrays)
                  for arrays in (codes, grad, hess, packed))
            + (tuple(List(arrays) for arrays in zip(*runs)),))


@numba.njit(nogil=True, cache=True)
def grow_levels(codes, grad, hess, packed, runs, added, add_offsets, g_scale,
                h_scale, cat_marker, root_hist, ints, floats, candidate_ints,
                candidate_floats, right_sets, candidate_right_sets, tree_mask,
                is_categorical, cell_offsets, width, n_codes, missing_code, reg_lambda,
                reg_alpha, max_delta_step, min_child_weight, gamma, max_cat_to_onehot,
                max_cat_threshold, max_depth, max_leaves, pass_threads, search_threads):
    """Grow one tree from its root's histogram (see the module docstring).

    ``codes``, ``grad``, ``hess``, ``packed``: one partition's arrays, or
    typed lists of several partitions' (``_partition_arrays``); each pass then builds
    every partition's histograms and adds them in the fixed order of ``reduction``, as
    the level loop's passes do (``_level_histograms``).  ``runs``: each partition's
    (order, spare, begin, count) of ``row_partition``, its rows in as many shares as
    its pass has threads (a tuple of typed lists for several partitions); every row
    starts at the root, and the runs
    hold each row's node at the end (the caller marks the node ids stale).  ``added``,
    ``add_offsets``:
    what the histograms' additions read for each row and the cell offsets they take:
    the codes and ``cell_offsets``, or the partitions' cells (``histogram.cells_of``)
    and None.

    ``cat_marker``: None for a model without categorical features (the kernels then
    get no table, as the level passes do, and numba compiles the category test away),
    else an empty table of right sets; ``root_hist``: (1, ...) the root's histogram
    (the round's first pass built it), whose sums are in the node columns; ``packed``:
    the rows' quantized gradients (then ``grad`` and ``hess`` are not read and
    histograms are packed integer sums, unpacked with ``g_scale``, ``h_scale`` for the
    split search) or None; node columns as ``decide_splits`` takes them, holding the
    tree's largest size; ``pass_threads``: (n_partitions,) native threads of each
    partition's level kernels, ``search_threads``: of the split search.

    Returns ``(n_nodes, n_leaves, n_candidates, chosen)``: the nodes split by the last
    level's decisions (sorted), whose splits are left pending.
    """
    # the root is built (by the round's first pass): the first level searches it
    hist = root_hist
    built = np.zeros(1, dtype=np.int64)
    derive = np.zeros(0, dtype=np.int64)
    parents = np.zeros(0, dtype=np.int64)
    n_nodes, n_leaves = 1, 1
    # the parents' histograms of a level: ``parent_source[j]`` 0 (the last pass's built
    # histograms, ``last_built``) or 1 (its derived ones), at ``parent_index[j]``
    last_built = root_hist
    last_derived = np.empty((0,) + root_hist.shape[1:], dtype=root_hist.dtype)
    parent_source = np.zeros(0, dtype=np.int64)
    parent_index = np.zeros(0, dtype=np.int64)
    # depthwise growth; not a literal False, so that ``decide_splits`` is called with
    # the types the level loop compiled it for
    lossguide = np.bool_(False)
    for p in range(_n_parts(codes)):
        start_rows(_part(runs[0], p), _part(runs[2], p), _part(runs[3], p))
    while True:
        # ``TreeGrower.receive``: the siblings by subtraction, then the new nodes' splits
        n_built = built.shape[0]
        derived = np.empty((derive.shape[0],) + hist.shape[1:], dtype=hist.dtype)
        order = np.concatenate((built, derive))
        n = order.shape[0]
        gain = np.empty(n)
        feature = np.empty(n, dtype=np.int32)
        bin_ = np.empty(n, dtype=np.int32)
        dl = np.empty(n, dtype=np.bool_)
        left_sums = np.empty((n, 2))
        found_sets = np.zeros((n, right_sets.shape[1]), dtype=np.bool_)
        masks = np.empty((n, tree_mask.shape[0]), dtype=np.bool_)
        sums = np.empty((n, 2))
        for i in range(n):
            for f in range(tree_mask.shape[0]):
                masks[i, f] = tree_mask[f]
            sums[i, 0] = floats[order[i], G]
            sums[i, 1] = floats[order[i], H]
        found = (gain, feature, bin_, dl, left_sums, found_sets)
        params = (cell_offsets, n_codes, is_categorical, reg_lambda, reg_alpha,
                  max_delta_step, min_child_weight, gamma, max_cat_to_onehot,
                  max_cat_threshold)
        stacks = (hist, derived, last_built, last_derived, parent_source, parent_index)
        if search_threads > 1 and n > 1 and n * hist.shape[1] >= NATIVE_MIN_SEARCH_CELLS:
            _derive_and_search_parallel(stacks, g_scale, h_scale, sums, masks, found,
                                        cat_marker, params, min(search_threads, n))
        else:
            _derive_and_search(stacks, g_scale, h_scale, sums, masks, found, cat_marker,
                               params, 0, n)
        (n_nodes, n_leaves, n_candidates, chosen, build, derive, parents, _) = decide_splits(
            ints, floats, candidate_ints, candidate_floats, right_sets, candidate_right_sets,
            order, gain, feature, bin_, dl, left_sums, found_sets, is_categorical, order,
            n_nodes, n_leaves, max_depth, max_leaves, lossguide)
        chosen = np.sort(chosen)
        if build.shape[0] == 0:
            return n_nodes, n_leaves, n_candidates, chosen
        # the next pass: the rows move under these splits, the built nodes' histograms;
        # its parents' histograms are this pass's
        f, b, d, lc, rc, table = split_arrays(ints, right_sets, is_categorical, chosen, n_nodes)
        splits = (f.reshape((1, -1)), b.reshape((1, -1)), d.reshape((1, -1)),
                  lc.reshape((1, -1)), rc.reshape((1, -1)))
        parent_source, parent_index = _locate(parents, built, order[n_built:])
        last_built, last_derived = hist, derived
        built = build
        node_to_slot = np.full((1, n_nodes), -1, dtype=np.int32)
        for k in range(built.shape[0]):
            node_to_slot[0, built[k]] = k
        hist = _level_histograms(codes, added, add_offsets, grad, hess, packed, runs, splits,
                                 missing_code, node_to_slot, table, cat_marker,
                                 built.shape[0], root_hist, width, pass_threads)


@numba.njit(nogil=True, cache=True)
def _level_histograms(codes, added, add_offsets, grad, hess, packed, runs, splits,
                      missing_code, node_to_slot, table, cat_marker, n_built, shaped_as,
                      width, pass_threads):
    """A level's pass over each partition's row runs (``row_partition``): the rows
    move under ``splits``, the built nodes' histograms are summed from their runs;
    returns the ``n_built`` histograms (shaped as ``shaped_as``' rows), summed over
    the partitions in the fixed order of ``reduction``: one partition after the other,
    each pass into the top of a stack of partial sums; two on top covering as many
    partitions are added (left + right), and at the end the stack is added from the
    top down: the pairs and the order of ``reduction.reduction_steps`` (pairs of
    partitions, then pairs of pairs, an odd one out carried up), with at most
    log2(n) + 1 partial sums held."""
    n_parts = _n_parts(codes)
    depth = 1
    while (1 << (depth - 1)) < n_parts:
        depth += 1
    stack = np.empty((depth, n_built) + shaped_as.shape[1:], dtype=shaped_as.dtype)
    covered = np.zeros(depth, dtype=np.int64)
    top = 0
    for p in range(n_parts):
        stack[top] = 0
        _partition_pass(_part(codes, p), _part(added, p), add_offsets, width,
                        _part(grad, p), _part(hess, p), _part(packed, p), _part(runs[0], p),
                        _part(runs[1], p), _part(runs[2], p), _part(runs[3], p), splits,
                        missing_code,
                        node_to_slot, table, cat_marker, stack[top], pass_threads[p])
        covered[top] = 1
        top += 1
        while top >= 2 and covered[top - 1] == covered[top - 2]:
            _add_into(stack[top - 2], stack[top - 1])
            covered[top - 2] += covered[top - 1]
            top -= 1
    while top >= 2:
        _add_into(stack[top - 2], stack[top - 1])
        top -= 1
    return stack[0]


@numba.njit(nogil=True, cache=True)
def _add_into(left, right):
    """``left += right`` elementwise (C-contiguous arrays of one shape): a reduction
    step, ``histogram.add_histograms``' ``left + right``."""
    left_flat, right_flat = left.reshape(-1), right.reshape(-1)
    for i in range(left_flat.shape[0]):
        left_flat[i] += right_flat[i]


@numba.njit(nogil=True, cache=True)
def _partition_pass(codes, added, add_offsets, width, grad, hess, packed, order, spare,
                    begin, count, splits, missing_code, node_to_slot, table, cat_marker,
                    hist, n_threads):
    """One partition's level pass into ``hist``; ``cat_marker`` None: a model without
    categorical features (the row moves get no table, and numba compiles the category
    test away)."""
    if cat_marker is None:
        split_rows(codes, order, spare, begin, count, splits, missing_code, None, n_threads)
    else:
        split_rows(codes, order, spare, begin, count, splits, missing_code, table, n_threads)
    node_histograms(added, grad, hess, packed, order, begin, count, node_to_slot, hist,
                    add_offsets, width, n_threads)


def _n_parts(arrays):
    """The number of partitions: 1 for one partition's array, else the typed list's
    length."""
    raise NotImplementedError("for compiled callers")


@overload(_n_parts, jit_options={"nogil": True, "cache": True}, inline="always")
def _n_parts_for(arrays):
    if isinstance(arrays, types.Array):
        return lambda arrays: 1
    return lambda arrays: len(arrays)


def _part(arrays, p):
    """Partition ``p``'s array: one partition's array itself (p = 0), a typed list's
    item ``p``, or None for None (a fit without quantized gradients)."""
    raise NotImplementedError("for compiled callers")


@overload(_part, jit_options={"nogil": True, "cache": True}, inline="always")
def _part_for(arrays, p):
    if isinstance(arrays, (types.NoneType, types.Array)):
        return lambda arrays, p: arrays
    return lambda arrays, p: arrays[p]


@numba.njit(nogil=True, cache=True)
def _locate(parents, built, derived_nodes):
    """Where each parent's histogram is: (0, k) for ``built[k]``, (1, j) for
    ``derived_nodes[j]``."""
    source = np.zeros(parents.shape[0], dtype=np.int64)
    index = np.zeros(parents.shape[0], dtype=np.int64)
    for j in range(parents.shape[0]):
        found = False
        for k in range(built.shape[0]):
            if built[k] == parents[j]:
                index[j] = k
                found = True
                break
        if not found:
            for k in range(derived_nodes.shape[0]):
                if derived_nodes[k] == parents[j]:
                    source[j], index[j] = 1, k
                    break
    return source, index


@numba.njit(nogil=True, cache=True, parallel=True)
def _derive_and_search_parallel(stacks, g_scale, h_scale, sums, masks, found, cat_marker,
                                params, n_parts):
    """``_derive_and_search`` with the level's nodes in ``n_parts`` ranges, one a native
    thread (each node's subtraction and search as on one thread: the same results)."""
    n = stacks[0].shape[0] + stacks[1].shape[0]
    for part in numba.prange(n_parts):
        first, stop = part_range(part, n_parts, n)
        _derive_and_search(stacks, g_scale, h_scale, sums, masks, found, cat_marker, params,
                           first, stop)


@numba.njit(nogil=True, cache=True)
def _derive_and_search(stacks, g_scale, h_scale, sums, masks, found, cat_marker, params,
                       first, stop):
    """``TreeGrower.receive`` for the level's nodes ``first..stop-1`` (the built stack's
    nodes, then the derived one's): each derived node's histogram by subtraction
    (parent - its built sibling, the built node of the same place), then each node's
    split search on one thread (``_search``), the results into ``found``."""
    hist, derived, last_built, last_derived, parent_source, parent_index = stacks
    n_built = hist.shape[0]
    a, b = first, min(stop, n_built)
    if a < b:
        _search(float_sums(hist[a:b], g_scale, h_scale), sums, masks, a, b, found,
                cat_marker, *params, 1)
    a, b = max(first, n_built) - n_built, stop - n_built
    if a < b:
        for j in range(a, b):
            parent = (last_built[parent_index[j]] if parent_source[j] == 0
                      else last_derived[parent_index[j]])
            _subtract(parent, hist[j], derived[j])
        _search(float_sums(derived[a:b], g_scale, h_scale), sums, masks, n_built + a,
                n_built + b, found, cat_marker, *params, 1)


@numba.njit(nogil=True, cache=True)
def _search(hists, sums, masks, first, stop, found, cat_marker, cell_offsets, n_codes,
            is_categorical, reg_lambda, reg_alpha, max_delta_step, min_child_weight, gamma,
            max_cat_to_onehot, max_cat_threshold, threads):
    """``TreeGrower._split_kernel`` on one stack of histograms, the nodes
    ``first..stop-1`` of the pass's order; its results into ``found`` (the arrays of
    ``decide_splits``' ``found_*``) at those places."""
    result = find_splits_of(hists, sums[first:stop], masks[first:stop], cell_offsets,
                            n_codes, is_categorical, cat_marker, reg_lambda, reg_alpha,
                            max_delta_step, min_child_weight, gamma, max_cat_to_onehot,
                            max_cat_threshold, threads)
    gain, feature, bin_, dl, left_sums, right_sets = found
    for i in range(stop - first):  # (loops, not slice assignments: ~3 s less to compile)
        gain[first + i] = result[0][i]
        feature[first + i] = result[1][i]
        bin_[first + i] = result[2][i]
        dl[first + i] = result[3][i]
        left_sums[first + i, 0] = result[4][i, 0]
        left_sums[first + i, 1] = result[4][i, 1]
        for c in range(right_sets.shape[1]):
            right_sets[first + i, c] = result[5][i, c]


@numba.njit(nogil=True, cache=True)
def _subtract(a, b, out):
    """``out = a - b`` elementwise (C-contiguous arrays of one shape), as
    ``np.subtract`` does it."""
    a_flat, b_flat, out_flat = a.reshape(-1), b.reshape(-1), out.reshape(-1)
    for i in range(out_flat.shape[0]):
        out_flat[i] = a_flat[i] - b_flat[i]
