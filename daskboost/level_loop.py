"""The level loop: growing a batch of rounds' trees, one pass over the partitions per level.

The loop is a generator of passes (``grow_rounds`` / ``grow_levels``): it yields each
pass's ``LevelStep``, is sent back that pass's result (``partition_step`` run on every
partition, its histograms reduced in the fixed order of ``reduction``), and decides the
splits of the next level with one ``TreeGrower`` per tree. It is deterministic, so a
cluster can run it on every worker at once from the same sums. ``drive`` is the one
driver of such a loop: a coroutine, awaited on a worker's event loop (``worker_states``)
and run to completion in process by ``run_sync`` (``runtime``).
"""

from dataclasses import replace

import numpy as np

from .grower import TreeGrower, stack_node_arrays
from .levels_in_place import InPlaceLevels
from .partition import LevelStep, category_table, no_splits, position_dtype
from .quantize import GradientMaxima, scales_from_maxima, tree_key


async def drive(passes, reduce_pass):
    """Run a pass loop: ``passes`` is a generator that yields the argument of each pass
    and is sent back the pass's result, ``await reduce_pass(arg)``; returns what the
    generator returns. (A generator, not a callback, so that the same loop runs in
    process and as a coroutine on a cluster worker's event loop.)"""
    try:
        arg = next(passes)
        while True:
            arg = passes.send(await reduce_pass(arg))
    except StopIteration as stop:
        return stop.value


def run_sync(coroutine):
    """Run a coroutine that never suspends (every ``await`` in it finishes at once, as
    ``drive`` over an in-process ``reduce_pass``), without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    coroutine.close()
    raise RuntimeError("run_sync: the coroutine suspended; it needs an event loop")


def grow_rounds(mapper, params, objective, rounds, pending, leaf_values, trim,
                in_place=False, deferred=None):
    """Grow the trees of ``rounds`` one round after the other; returns
    ``[(growers, pending splits)]``, one per round.

    A pass loop, as ``grow_levels`` (a generator: it yields each pass's step and is
    sent back the pass's reduced histograms).  ``pending`` and ``leaf_values``: what
    the round before ``rounds[0]`` left (its last splits and its trees' node values,
    applied by the next round's first pass).

    With ``num_parallel_tree`` P > 1 (boosted random forests) a boosting round is P
    rounds here, a copy of the K trees each: ``rounds`` number copies (boosting round
    ``r``'s copy ``p`` is ``r * P + p``; a call starts at a boosting round), so each
    copy draws its own rows and columns; each leaf is scaled by learning_rate / P, as
    xgboost's.  Every copy grows from the gradients at the boosting round's start: its
    copies' trees are not added to the margins until the next boosting round's first
    pass, which adds them all in bin space (``deferred``: the boosting round before
    ``rounds[0]``'s copies as ``binned_round``s; ``pending`` and ``leaf_values`` are
    then unused), so the copies' first passes compute the same gradients again.
    """
    P = params.num_parallel_tree
    tree_params = params if P == 1 else replace(params,
                                                learning_rate=params.learning_rate / P)
    grown = []
    copies = []  # P > 1: the binned trees of the boosting round's copies so far
    for round_ in rounds:
        # column sampling keyed on (seed, round, tree), like row sampling: continuing a
        # fit draws the same columns as training in one go (cross-validation grows
        # nfold models of K trees, each tree keyed as in its own fit: ``fold_states``)
        per_model = getattr(objective, "outputs_per_model", objective.n_outputs())
        growers = [TreeGrower(mapper, tree_params, [params.seed, round_, k % per_model])
                   for k in range(objective.n_outputs())]
        first = dict(new_tree=True, leaf_values=leaf_values, objective=objective,
                     subsample=params.subsample, sample_seed=params.seed, round=round_,
                     trim_threshold=trim, position_dtype=position_dtype(params.max_nodes),
                     quant_bins=params.num_grad_quant_bins if params.quantized_grad else 0)
        if P > 1:
            first.update(leaf_values=None, parallel_trees=P,
                         deferred=deferred if round_ % P == 0 else None)
            pending = None
        growers, pending = yield from grow_levels(growers, pending, mapper, first, in_place)
        leaf_values = round_leaf_values(growers)
        if P > 1:
            copies.append(binned_round(growers))
            if round_ % P == P - 1:
                deferred, copies = tuple(copies), []
        grown.append((growers, pending))
    return grown


def round_leaf_values(growers):
    """(K, n_nodes) node values of a round's trees (learning rate included)."""
    return stack_node_arrays([g.leaf_values() for g in growers], 0.0, np.float64)


def grow_levels(growers, pending, mapper, first, in_place=False):
    """Grow a round's trees level by level; returns ``(growers, pending)``.

    A generator: it yields the ``LevelStep`` of each pass and is sent back the pass's
    result, ``partition_step`` with that step run on every partition and its
    histograms reduced (``drive`` runs such a loop).  ``pending``: the previous
    round's last splits; ``first``: the ``LevelStep`` fields of the round's first pass
    (``new_tree=True``, the previous round's leaf values, the objective, row
    sampling).  Deterministic: on a cluster every worker runs it on the same sums and
    takes the same decisions.  ``in_place``: the fit's partitions are in this process
    and can grow trees in place (``Runtime.grows_in_place``); a tree that can
    too (``TreeGrower.grows_in_place``) then grows from its root's histogram in one
    pass (``levels_in_place``).
    """
    leaf_values = first["leaf_values"]
    quantized = {}  # quantized gradients: the round's scales and keys (``quantize``)
    new_tree = roots = True
    while True:
        # rows may still sit in the previous round's trees: cover their node ids
        min_width = leaf_values.shape[1] if new_tree and leaf_values is not None else 1
        step, slot_counts = level_step(growers, pending, mapper, min_width)
        if new_tree:
            for name, value in first.items():
                setattr(step, name, value)
            new_tree = False
        for name, value in quantized.items():
            setattr(step, name, value)
        hist = yield step
        if isinstance(hist, GradientMaxima):  # a round's first pass, quantized gradients
            quantized = dict(quant_scales=scales_from_maxima(hist.maxima, first["quant_bins"]),
                             quant_keys=quantization_keys(first, len(growers)),
                             quant_bins=first["quant_bins"])
            step = root_step(step, quantized)
            hist = yield step
        if roots and in_place and all(g.grows_in_place() for g in growers):
            # each tree grows from its root's histogram in one compiled call, one tree
            # after the other (the round's trees are independent: the same trees)
            last_splits = []
            for k, (grower, root_slot) in enumerate(zip(growers, np.cumsum(slot_counts)
                                                        - slot_counts)):
                grown = yield in_place_step(grower, hist, mapper,
                                            quantized.get("quant_scales"), k, int(root_slot))
                last_splits.append(grower.grown_in_place(grown))
            pending = stack_splits(growers, last_splits)
            break
        roots = False
        pending = receive_histograms(growers, hist, slot_counts,
                                     quantized.get("quant_scales"))
        if all(g.finished for g in growers):
            break
    for grower in growers:
        grower.drop_histograms()
    return growers, pending


def root_step(first_step, quantized):
    """The pass after a round's first with quantized gradients: the roots' histograms
    (of the rows the first pass left at the roots) from the rounded gradients."""
    step = LevelStep(node_to_slot=first_step.node_to_slot, n_slots=first_step.n_slots,
                     cell_offsets=first_step.cell_offsets, cell_width=first_step.cell_width,
                     missing_code=first_step.missing_code, **quantized)
    (step.split_feature, step.split_bin, step.default_left, step.left_child,
     step.right_child) = no_splits(*first_step.node_to_slot.shape)
    return step


def quantization_keys(first, n_trees):
    """The stochastic rounding keys of a round's trees (``first``: the fields of the
    round's first step): tree k of a model draws as in its own fit, also among the
    nfold models of cross-validation (``fold_states``)."""
    objective = first["objective"]
    per_model = getattr(objective, "outputs_per_model", n_trees)
    return np.array([tree_key(first["sample_seed"], first["round"], t % per_model)
                     for t in range(n_trees)], dtype=np.uint64)


def level_step(growers, pending, mapper, min_width=1):
    """The pass that builds what every still-growing tree asked for.

    Returns the step and the number of histogram slots of each tree.  Node arrays are
    as wide as the largest tree, the previous round's included (``min_width``: its last
    splits and leaf values are applied at a round's first pass): the kernels index them
    by node id unchecked.
    """
    n_nodes = max(max(g.n_nodes for g in growers), min_width)
    if pending is not None:
        n_nodes = max(n_nodes, pending[0].shape[1])
    node_to_slot = np.full((len(growers), n_nodes), -1, dtype=np.int32)
    counts = []
    offset = 0
    for t, grower in enumerate(growers):
        n = 0 if grower.finished else grower.build_request(node_to_slot[t], offset)[1]
        counts.append(n)
        offset += n
    step = LevelStep(node_to_slot=node_to_slot, n_slots=offset,
                     cell_offsets=mapper.cell_offsets, cell_width=mapper.cell_width,
                     missing_code=mapper.missing_code)
    splits = no_splits(len(growers), n_nodes) if pending is None else pending
    (step.split_feature, step.split_bin, step.default_left, step.left_child,
     step.right_child) = (pad_nodes(a, n_nodes) for a in splits[:5])
    step.cat_table = category_table(splits)
    return step, counts


def pad_nodes(array, n_nodes):
    """Widen a (K, m) node array to (K, n_nodes); new nodes are 'not split'."""
    if array.shape[1] == n_nodes:
        return array
    out = np.full((array.shape[0], n_nodes), False if array.dtype == np.bool_ else -1,
                  dtype=array.dtype)
    out[:, :array.shape[1]] = array
    return out


def in_place_step(grower, root_hist, mapper, scales, tree=0, root_slot=0):
    """The pass that grows the round's tree ``tree`` in place from its root's histogram,
    slot ``root_slot`` of ``root_hist`` (the round's first pass's: ``levels_in_place``);
    ``scales``: the round's (K, 2) quantization steps, or None."""
    return InPlaceLevels(grower=grower, root_hist=root_hist,
                         missing_code=mapper.missing_code, cell_width=mapper.cell_width,
                         quant_scale=None if scales is None else tuple(scales[tree]),
                         tree=tree, root_slot=root_slot)


def receive_histograms(growers, hist, slot_counts, scales=None):
    """Hand each growing tree its histogram slots; stack the splits they decide.
    ``scales``: (K, 2) quantization steps when ``hist`` holds packed integer sums."""
    offset = 0
    splits = []
    for t, (grower, n) in enumerate(zip(growers, slot_counts)):
        if n == 0:
            splits.append(None)
            continue
        splits.append(grower.receive(hist[offset:offset + n],
                                     None if scales is None else tuple(scales[t])))
        offset += n
    return stack_splits(growers, splits)


def stack_splits(growers, splits):
    """The splits the K trees decided in a pass (``TreeGrower.receive``'s answers, None
    for a tree that split nothing) as (K, n_nodes) arrays, with the table of the
    categorical right sets for a model with categorical features; None if no tree
    split."""
    if all(s is None for s in splits):
        return None
    n_nodes = max(g.n_nodes for g in growers)
    columns = []
    for j, (fill, dtype) in enumerate(SPLIT_FILLS):
        rows = [np.full(1, fill, dtype) if s is None else s[j] for s in splits]
        columns.append(stack_node_arrays(rows, fill, dtype, n_nodes))
    if growers[0].mapper.has_categorical:
        columns[1], table = stack_category_tables(columns[1], [s and s[5] for s in splits])
        columns.append(table)
    return tuple(columns)


def stack_category_tables(bins, tables):
    """The K trees' categorical right sets as one table: tree t's rows come after those
    of the trees before it, and its categorical nodes' ``bin = -1 - row`` move with them.
    ``bins``: (K, n_nodes) stacked split bins; ``tables``: per tree, a table or None."""
    if len(tables) == 1:  # one tree: its rows and bins as they are
        return bins, tables[0]
    bins = bins.copy()
    offset = 0
    for t, table in enumerate(tables):
        if table is not None:
            bins[t] = np.where(bins[t] < 0, bins[t] - offset, bins[t])  # -1 - row
            offset += len(table)
    present = [t for t in tables if t is not None]
    return bins, np.concatenate(present) if present else None


# fill values and dtypes of (feature, bin, default_left, left, right) for nodes not split
SPLIT_FILLS = ((-1, np.int32), (-1, np.int32), (False, np.bool_), (-1, np.int32),
               (-1, np.int32))


def binned_round(growers):
    """The K trees of a round as (K, n_nodes) arrays with bin thresholds, and the table
    of their categorical right sets (None without categorical features)."""
    arrays = [g.binned_arrays() for g in growers]
    n_nodes = max(len(a[0]) for a in arrays)
    fills = SPLIT_FILLS + ((0.0, np.float64),)
    stacked = [stack_node_arrays([a[j] for a in arrays], fill, dtype, n_nodes)
               for j, (fill, dtype) in enumerate(fills)]
    if not growers[0].mapper.has_categorical:
        return tuple(stacked), None
    stacked[1], table = stack_category_tables(stacked[1], [a[6] for a in arrays])
    return tuple(stacked), table
