"""What runs on one partition in a cross-validation (``cross_validation.cv``): the
folds' models grow together, ``nfold * K`` trees per round.

- ``bin_fold_partition`` / ``rebuild_fold_partition``: ``partition.bin_partition`` /
  ``rebuild_partition`` whose state (``FoldState``) also holds the fold of each row
  (``folds.FoldLayout``) and, after the first binning, each fold's label statistics of
  the rows it trains on, taken from the raw labels as a fit's scan takes them;
- ``take_label_scans`` and ``set_start_margins``: the two small passes after binning
  (the folds' statistics to the client, the folds' starting margins to the rows);
- ``FoldObjective``: the gradients of every fold's trees, zero for the rows a fold holds
  out (``partition._round_gradients`` calls its ``fold_gradients``);
- ``fold_leaf_residual_summaries``: adaptive leaves, per fold;
- ``fold_partials``: after a round, each fold's metric partial sums on its training
  rows and on its held-out rows, from margins with the round's trees added (kept for
  the next round's first pass, which then does not add them again).
"""

import copy
import dataclasses
from dataclasses import dataclass

import numba
import numpy as np

from .blockstore import RowColumn
from .leaf_sketches import LeafSketches, sketch_leaves
from .metrics import partial_of
from .partition import (PartitionState, encode_labels, groups_of, in_row_blocks,
                        leaf_positions, margins_ahead, merge_scans, output_labels,
                        read_partition, scan_labels, start_state, started_again, whole,
                        with_positions)
from .query_groups import partition_queries, qid_block
from .reduction import reduce_all
from .training import _PartialsCombiner


class FoldObjective:
    """The objective of ``nfold`` models grown together: ``nfold * K`` outputs, fold
    ``f``'s K trees being outputs ``f*K .. f*K + K - 1``."""

    def __init__(self, objective, nfold):
        self.objective = objective
        self.nfold = nfold
        self.outputs_per_model = objective.n_outputs()
        # ranking: each fold's objective, which knows the queries that fold trains on
        # (``set_fold_queries``)
        self.ranks_queries = getattr(objective, "ranks_queries", False)
        self.fold_objectives = None
        # adaptive leaves: each fold's outputs refit at the objective's quantiles
        self.leaf_quantiles = (None if objective.leaf_quantiles is None
                               else tuple(objective.leaf_quantiles) * nfold)

    def n_outputs(self):
        return self.nfold * self.outputs_per_model

    def fold_gradients(self, margin, y, weight, folds):
        """(g, h) of every fold's trees, (nfold * K, n) of the objective's dtype: each
        fold's from its own margins, zero for the rows it holds out (``folds == f``)."""
        K = self.outputs_per_model
        grad = hess = None
        for f in range(self.nfold):
            trees = slice(f * K, (f + 1) * K)
            g, h = self.objective.gradients(margin[trees], y, weight)
            if grad is None:  # the objective's dtype (scale_pos_weight weighs the rows)
                grad = np.empty(margin.shape, dtype=g.dtype)
                hess = np.empty(margin.shape, dtype=h.dtype)
            grad[trees], hess[trees] = g, h
        _zero_held_out(grad, hess, folds, K)
        return grad, hess

    def set_fold_queries(self, fold_stats, row_counts):
        """Ranking: each fold's copy of the objective takes the queries it trains on
        (``fold_stats[f]``: ``LabelStats`` of fold f's training rows, their queries per
        partition; ``row_counts``: every partition's rows), as a fit on those rows
        would (``_LambdaRank.set_queries``): their number and weights, and each
        partition's first among them."""
        self.fold_objectives = []
        for stats in fold_stats:
            objective = copy.copy(self.objective)
            objective.set_queries(stats, row_counts)
            self.fold_objectives.append(objective)

    def query_gradients(self, margin, y, weight, group_ptr, first_row, iteration, folds):
        """Ranking: (g, h) of every fold's trees, (nfold, n) float32, each fold's from
        the whole queries it trains on, as a fit on them would compute them (its queries
        numbered among its own: ``set_fold_queries``); zero for the rows it holds out."""
        grad = np.zeros(margin.shape, dtype=np.float32)
        hess = np.zeros(margin.shape, dtype=np.float32)
        sizes = np.diff(group_ptr)
        query_folds = folds[group_ptr[:-1]]
        K = self.outputs_per_model  # (1: a ranking has one output)
        for f, objective in enumerate(self.fold_objectives):
            trains = folds != f
            if not trains.any():
                continue
            ptr = _group_pointer_of(sizes[query_folds != f])
            g, h = objective.query_gradients(
                margin[f * K:(f + 1) * K, trains], y[trains],
                None if weight is None else weight[trains], ptr, first_row, iteration)
            grad[f * K:(f + 1) * K, trains], hess[f * K:(f + 1) * K, trains] = g, h
        return grad, hess


@numba.njit(nogil=True, cache=True)
def _zero_held_out(grad, hess, folds, per_model):
    """(g, h) = 0 in each row's held-out trees: fold f's trees are ``f * per_model`` ..
    ``f * per_model + per_model - 1`` and ``folds`` (n,) holds each row's fold, in
    [0, nfold).  (One pass writing only those cells: a boolean mask per fold measured
    ~8x slower at 125,000 rows and 5 folds.)"""
    for i in range(folds.shape[0]):
        first = folds[i] * per_model
        for t in range(first, first + per_model):
            grad[t, i] = 0.0
            hess[t, i] = 0.0


@dataclass
class FoldState(PartitionState):
    """A partition state of a cross-validation: until the pass after binning takes
    them (``take_label_scans``), each fold's label statistics of the partition's rows
    that the fold trains on (``partition.scan_labels``).  Under a memory budget its
    per-row arrays, the folds included, go to row blocks as a fit's do
    (``partition.in_row_blocks``)."""

    label_scans: list = None
    fold_order: tuple = None  # (rows sorted by fold, each fold's bounds): ``fold_partials``


def bin_fold_partition(x, y, w, index, mapper, base_margin, classes, previous, store,
                       layout, sketch_size, in_fold_order, row_offset=0, margins=None,
                       qid=None, given_folds=None):
    """``partition.bin_partition`` for a cross-validation: the state also holds its
    rows' folds (``layout``'s, or ``given_folds``: the partition's part of the folds
    the user gave) and, with ``sketch_size`` (the first binning), the folds' label
    statistics; with ``in_fold_order``, its rows in fold order (``_in_fold_order``).
    ``base_margin``: (nfold * K,) starting margins."""
    X, labels, weights = read_partition(x, y, w, index, mapper.encoders,
                                        in_pieces=previous is None)
    encoded = _encoded(labels, classes)
    folds, order = _folds_and_order(layout, index, row_offset, encoded, given_folds,
                                    in_fold_order, qid)
    state = start_state(X, encoded, weights, index, mapper, base_margin, None, previous,
                        store, row_offset, margins, qid, code_order=order)
    scans = None if sketch_size is None else _label_scans(
        folds, layout.nfold, labels, weights, index, sketch_size, classes is not None,
        None if qid is None else qid_block(qid, index))
    return in_row_blocks(_in_fold_order(_fold_state(state, folds, scans), order), store)


def rebuild_fold_partition(x, y, w, index, mapper, base_margin, classes, previous, store,
                           layout, sketch_size, in_fold_order, row_offset, margins, qid,
                           new_trees, rounds, given_folds=None):
    """``partition.rebuild_partition`` for a cross-validation (a state lost with a
    worker, rebuilt with the folds' trees so far), in the rows' order of
    ``bin_fold_partition``."""
    X, labels, weights = read_partition(x, y, w, index, mapper.encoders)
    encoded = _encoded(labels, classes)
    folds, order = _folds_and_order(layout, index, row_offset, encoded, given_folds,
                                    in_fold_order, qid)
    state = started_again(X, encoded, weights, index, mapper, base_margin, None, previous,
                          store, row_offset, margins, qid, new_trees, rounds,
                          code_order=order)
    return in_row_blocks(_in_fold_order(_fold_state(state, folds), order), store)


# the per-row arrays of a state, (..., n_rows) each (None: not held)
_ROW_ARRAYS = ("label", "weight", "margin", "grad", "hess", "positions", "quantized", "folds")


def _in_fold_order(state, order):
    """``state``, whose codes are binned in ``order`` (the rows sorted by fold, stable:
    each fold's rows in the order read; None: rows as read), with its per-row arrays
    in that order too; ``row_order`` keeps each row's place as read, by which it still
    draws (``keyed_random.global_row``).  Before the arrays go to row blocks (under a
    memory budget the codes are binned block by block in that order:
    ``partition.binned_codes``).  A fold's held-out rows are then one run in every
    pass, which the level kernels skip (zero gradients) on a branch taken the same way
    row after row, not on one in ``nfold`` at random; the evaluation's rows by fold
    (``fold_partials``) are in order already.  For quantized gradients only
    (``cross_validation``): their integer sums do not depend on the rows' order, so the
    folds' models and metrics are the same bytes either way (each fold's sums of
    metric partials add its rows in the order read in both).  Float sums would change,
    and each fold's model would no longer be the fit on its training rows to the last
    bit (``tests/test_cv.py``)."""
    if order is None:
        return state
    for name in _ROW_ARRAYS:
        array = getattr(state, name)
        if array is not None:
            setattr(state, name, np.ascontiguousarray(array[..., order]))
    state.row_order, state.ahead, state.fold_order = order, None, None
    return state


def _encoded(labels, classes):
    """A partition's labels as its state holds them: a classifier's encoded once, here,
    for its folds and its state alike (``start_state`` is then given no ``classes``)."""
    return labels if classes is None else encode_labels(labels, classes)


def _folds_and_order(layout, index, row_offset, labels, given_folds, in_fold_order,
                     qid=None):
    """(the fold of each row of a partition, as read; with ``in_fold_order``, the rows
    sorted by fold, stable, else None).  The folds: ``given_folds`` if not None, else
    ``layout``'s (from the rows' classes, the encoded ``labels``, where its folds are
    stratified; from the partition's queries, ``qid``, where they are of whole
    queries)."""
    if given_folds is not None:
        folds = np.asarray(given_folds, dtype=np.int32)
    elif layout.by_query:
        folds = layout.of_partition(index, row_offset,
                                    groups=groups_of(qid, labels.shape[-1], index))
    elif layout.stratified:
        folds = layout.of_partition(index, row_offset, labels)
    else:
        folds = layout.of_partition(index, row_offset, labels.shape[-1])
    return folds, np.argsort(folds, kind="stable") if in_fold_order else None


def _label_scans(folds, nfold, labels, weights, index, sketch_size, classifier, qid=None):
    """Each fold's label statistics of its training rows, from the raw ``labels`` and
    ``weights`` (as a fit's scan takes them); with the rows' query ids ``qid``
    (ranking), of its training queries too."""
    scans = []
    for f in range(nfold):
        trains = folds != f
        weight = None if weights is None else weights[trains]
        scan = scan_labels(labels[..., trains], weight, index, sketch_size, classifier)
        if qid is not None:
            scan.partition_queries = [partition_queries(qid[trains], weight, index)]
        scans.append(scan)
    return scans


def _fold_state(state, folds, label_scans=None):
    """``state`` as a ``FoldState`` with its rows' ``folds``."""
    fields = {field.name: getattr(state, field.name)
              for field in dataclasses.fields(PartitionState)}
    return FoldState(**{**fields, "folds": folds}, label_scans=label_scans)


def fold_leaf_residual_summaries(state, arg):
    """``partition.leaf_residual_summaries`` for the folds' trees (tree ``t`` is output
    ``t % K`` of fold ``t // K``): the ``LeafSketches`` of the residuals of each leaf's
    rows that the tree's fold trains on.  ``arg``: (pending splits, missing_code, sketch
    size, K outputs per model)."""
    splits, missing_code, size, K = arg
    positions = leaf_positions(state, splits, missing_code)
    folds, label, margin, weight = (whole(a) for a in (state.folds, state.label,
                                                       state.margin, state.weight))
    parts = []
    for t in range(positions.shape[0]):
        trains = np.flatnonzero(folds != t // K)
        residuals = output_labels(label, t % K)[trains].astype(np.float64) - margin[t, trains]
        parts.append(sketch_leaves(t, positions[t, trains], residuals,
                                   None if weight is None else weight[trains], size))
    return with_positions(state, positions), LeafSketches.joined(parts)


def take_label_scans(state, _):
    """The pass after binning: hand over the folds' label statistics."""
    scans, state.label_scans = state.label_scans, None
    return state, scans


class FoldScanMerger:
    """Combine two partition groups' per-fold label statistics (a before b)."""

    def __init__(self, size):
        self.size = size

    def __call__(self, a, b):
        return [merge_scans(x, y, self.size) for x, y in zip(a, b)]


def set_start_margins(state, base_margin):
    """Every row starts at its folds' constants, (nfold * K,) ``base_margin``."""
    if isinstance(state.margin, RowColumn):
        for i, (start, stop) in enumerate(state.margin.bounds):
            state.margin.set(i, np.repeat(base_margin[:, None], stop - start, axis=1))
    else:
        state.margin[:] = base_margin[:, None]
    return state, None


def no_result(a, b):
    return None


@dataclass(frozen=True)
class FoldEvalStep:
    """The pass after a round: ``finish`` moves the rows to the round's leaves and adds
    their values (``training.finish_step``); ``metrics`` of one model's ``objective``."""

    finish: object
    metrics: list
    objective: object
    nfold: int


def fold_partials(state, step):
    """Metric partial sums of every fold after the round, on its training rows and on
    the rows it holds out: a flat tuple, fold by fold, train then test, metric by
    metric.  The margins with the round's trees are computed here and kept for the
    next round's first pass (``partition.margins_ahead``); so is the rows' order by
    fold, unless the state is held in row blocks.

    Each model is evaluated on each fold's rows; a model's training partials are the
    sum of those of the folds it trains on (metric partials add up), so no row is
    evaluated twice per model.  Metrics of summed row losses (``Metric.row_losses``:
    RMSE, log loss...) are summed per fold in one pass over the rows in their order;
    the others are evaluated on each fold's rows, contiguous once the rows are sorted
    by fold (stable; the same order every round, kept in the state too).  (A state
    held in row blocks is read whole here, one partition at a time.)"""
    margin = margins_ahead(state, step.finish)
    folds = whole(state.folds)
    label = np.asarray(whole(state.label), dtype=np.float64)  # (as the metrics take it)
    weight = None if state.weight is None else whole(state.weight)
    # each fold's rows' weight (or count): the second sum of every row-loss partial
    fold_weights = np.bincount(folds, weight, step.nfold).astype(np.float64)
    K = step.objective.n_outputs()
    models = [margin[f * K:(f + 1) * K] for f in range(step.nfold)]
    # by_model[f][g]: model f's partials (one per metric) on fold g's rows
    by_model = [[[] for _ in range(step.nfold)] for _ in range(step.nfold)]
    sorted_rows = None
    for m in step.metrics:
        for f, model in enumerate(models):
            losses = m.row_losses(label, model, step.objective)
            if losses is not None:
                pieces = _fold_sums(losses, weight, folds, fold_weights)
            else:
                if sorted_rows is None:
                    sorted_rows = _sorted_by_fold(state, folds, label, weight, step.nfold)
                pieces = _partials_by_fold(m, model, step.objective, *sorted_rows)
            for g, piece in enumerate(pieces):
                by_model[f][g].append(piece)
    partials = []
    for f in range(step.nfold):
        train = reduce_all([tuple(p) for g, p in enumerate(by_model[f]) if g != f],
                           _PartialsCombiner(step.metrics))
        partials.extend(train)
        partials.extend(by_model[f][f])
    return state, tuple(partials)


def _fold_sums(loss, weight, folds, fold_weights):
    """``[sum w * loss, sum w]`` of each fold's rows (``Metric.row_losses``;
    ``fold_weights``: each fold's ``sum w``)."""
    sums = _sum_by_fold(loss if weight is None else loss * weight, folds,
                        len(fold_weights))
    return [np.array([sums[g], fold_weights[g]]) for g in range(len(fold_weights))]


@numba.njit(nogil=True, cache=True)
def _sum_by_fold(values, folds, nfold):
    """(nfold,) float64: each fold's sum of ``values``, added in row order, as
    ``np.bincount(folds, values)`` adds them.  A run of rows of one fold (the rows in
    fold order: ``_in_fold_order``) adds into a register, not into the fold's cell
    through memory: the same sums (each still starts from 0 and adds the fold's rows
    in order), 4.2 -> 0.9 ns a row in fold order, 1.6 -> 0.8 ns in random order
    (125,000 rows, 5 folds)."""
    sums = np.zeros(nfold, dtype=np.float64)
    fold = -1
    total = 0.0
    for i in range(folds.shape[0]):
        if folds[i] != fold:
            if fold >= 0:
                sums[fold] = total
            fold = folds[i]
            total = sums[fold]
        total += values[i]
    if fold >= 0:
        sums[fold] = total
    return sums


def _sorted_by_fold(state, folds, label, weight, nfold):
    """(the rows' fold order's slices of each fold, and the label, weight and order
    themselves, and each fold's query groups in that order or None) for metrics
    evaluated fold by fold."""
    by_fold, bounds = state.fold_order or _fold_order(folds, nfold)
    if not isinstance(state.margin, RowColumn):
        state.fold_order = (by_fold, bounds)
    pieces = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    return (pieces, label[..., by_fold], None if weight is None else weight[by_fold], by_fold,
            _fold_groups(state.groups, folds, nfold))


def _fold_groups(groups, folds, nfold):
    """Each fold's ``group_ptr`` of its rows taken in order (ranking: each query whole
    in one fold), or None without query groups."""
    if groups is None:
        return [None] * nfold
    sizes = np.diff(groups)
    query_folds = folds[groups[:-1]]
    return [_group_pointer_of(sizes[query_folds == g]) for g in range(nfold)]


def _group_pointer_of(sizes):
    """The ``group_ptr`` of consecutive queries of ``sizes`` rows: a fold's queries, in
    order, of a partition whose queries are each whole in one fold."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _partials_by_fold(metric, model, objective, pieces, label, weight, by_fold, groups):
    """``metric``'s partials of ``model`` on each fold's rows (``_sorted_by_fold``)."""
    model = model[:, by_fold]
    return [partial_of(metric, label[..., rows], model[:, rows],
                       None if weight is None else weight[rows], objective, fold_groups)
            for rows, fold_groups in zip(pieces, groups)]


def _fold_order(folds, nfold):
    """(the rows sorted by fold, stable; the bounds of each fold's rows in that order)."""
    by_fold = np.argsort(folds, kind="stable")
    return by_fold, np.searchsorted(folds[by_fold], np.arange(nfold + 1))
