"""What runs on one partition: every function here that touches rows.

- reading the raw data: ``scan_partition`` (first pass: labels, weights and a
  weighted quantile sketch of every feature; combined with ``merge_scans``),
  ``bin_partition`` / ``rebuild_partition`` (second pass, or a lost partition rebuilt
  with the trees so far: the ``PartitionState`` with codes, labels, weights, margins),
  and for ``tree_method="approx"`` ``hessian_summaries`` and ``rebin_partition``;
- on the states: ``partition_step`` (once per tree level: applies the last level's
  splits to the rows' node positions; at a round's start adds the finished trees to the
  margins and computes new gradients; then builds the histograms the growers asked
  for), ``leaf_residual_summaries`` (adaptive leaves) and ``hessian_self_summaries``
  (influence trimming).

Each returns the state (updated in place) and a small result that is reduced in the
fixed order of ``reduction``; a state lost with a worker is rebuilt from the raw data
and the trees so far, and the round grown again (see ``cluster.py``).
"""

from dataclasses import dataclass, replace

import numba
import numpy as np
import pandas as pd

from .data import (FrameRows, checked_categories, column_categories, feature_block,
                   feature_rows, label_block, margin_block, weight_block,
                   with_category_columns)
from . import native_threads, raw_cache
from .binning import narrowed
from .blockstore import RowColumn, StoredArray, single_block
from .lake import ParquetColumns
from .histogram import (add_block_histograms, add_leaf_values, add_root_histograms,
                        build_histograms, kernel_threads_of, new_histograms, row_blocks)
from .keyed_random import GOLDEN, MIX1, global_row, uniform
from .leaf_sketches import LeafSketches, merge_leaf_sketches, sketch_leaves
from .quantize import GradientMaxima, gradient_maxima, quantize, row_dtype
from .query_groups import group_pointer, partition_queries, qid_block
from .row_partition import RowRuns, run_row_bytes
from .sketch import merge, merge_blocks, summarize_block, summarize_column, summarize_columns_of
from .sparse import is_sparse, stored_columns, summarize as summarize_stored
from .tree import PackedForest, add_binned_tree_outputs


@dataclass
class ScanResult:
    """Small per-partition facts, mergeable across partitions."""

    n_rows: int
    summaries: list            # one sketch.FeatureSummary per feature
    weight_sum: float
    weighted_label_sum: float  # only for numeric labels
    label_min: float
    label_max: float
    all_integer: bool          # every (numeric) label is a whole number
    label_summary: object      # sketch.FeatureSummary of the labels (regression), else None
    class_weights: dict        # label -> weight sum (classifiers), else None
    partition_rows: list = None  # rows of each partition, in partition order
    categories: dict = None      # categorical feature -> its sorted categories (issue 13)
    # classifiers: {label: rows} of each partition, in partition order (stratified folds)
    partition_class_counts: list = None
    positive_weight: float = 0.0  # weight sum of the rows labelled 1 (numeric labels)
    # sum of w log1p(y) (numeric labels; -inf/nan where a label is <= -1): the start of
    # ``reg:squaredlogerror``
    weighted_log1p_label_sum: float = 0.0
    # ranking: the ``query_groups.PartitionQueries`` of each partition, in partition
    # order; None without qid
    partition_queries: list = None
    # a multi-target y: the label facts of each target (a ScanResult each, without
    # feature summaries), in target order; None for one-dimensional labels
    target_scans: tuple = None
    # a y of two columns: the rows whose first is above their second (survival:aft's
    # interval bounds crossed)
    crossed_bounds: int = 0


def _where(index):
    return f" (partition {index})"


def _check_weights(w, index):
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"sample_weight contains NaN or inf{_where(index)}: {w[bad][0]}")
    if (w < 0).any():
        raise ValueError(f"sample_weight must be >= 0; found {w[w < 0][0]}{_where(index)}")


def read_partition(x, y, w, index, encoders=None, in_pieces=False):
    """Convert one partition's blocks and check that they line up (``encoders``: see
    ``data.feature_block``).  ``in_pieces``: X as ``data.feature_rows`` has it (a
    DataFrame converted a piece at a time), for a pass that only sketches or bins it."""
    X = (feature_rows if in_pieces else feature_block)(x, encoders)
    labels = None if y is None else label_block(y)
    weights = None if w is None else weight_block(w)
    n = X.shape[0]
    if labels is not None and labels.shape[-1] != n:  # (several targets: rows last)
        raise ValueError(f"X has {n} rows but y has {labels.shape[-1]}{_where(index)}")
    if weights is not None:
        if weights.shape[0] != n:
            raise ValueError(f"X has {n} rows but sample_weight has {weights.shape[0]}{_where(index)}")
        _check_weights(weights, index)
    return X, labels, weights


def scan_partition(x, y, w, index, sketch_size, collect_classes, categorical=None,
                   keep=None, summarize_label=True, qid=None):
    """First pass: sketch summaries and label statistics of one partition.

    ``categorical``: (feature indices, names, max_cat) of the categorical features, whose
    categories are collected (their sketches see only missing values).  ``keep``: None,
    or ``(fit id, key, cap)`` to keep the raw blocks for the bin pass (``raw_cache``).
    ``summarize_label``: whether a regression's labels are sketched too (only an
    objective that starts from their quantiles reads it: ``needs_label_summary``).
    ``qid``: the rows' query ids block (ranking), checked; the result holds its queries'
    bounds, count and weight (``ScanResult.partition_queries``)."""
    if keep is not None and categorical and isinstance(x, pd.DataFrame):
        # kept for the bin pass: its string columns factorized once, for both passes
        x = with_category_columns(x, categorical[0])
    X, labels, weights = read_partition(
        x, y, w, index, None if not categorical else {f: None for f in categorical[0]},
        in_pieces=True)
    result = scan_labels(labels, weights, index, sketch_size if summarize_label else None,
                         collect_classes)
    result.summaries = summarize_features(X, weights, sketch_size)
    result.categories = _partition_categories(x, categorical)
    if qid is not None:
        qid = qid_block(qid, index)
        if len(qid) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but qid has {len(qid)}{_where(index)}")
        result.partition_queries = [partition_queries(qid, weights, index)]
    if keep is not None:
        fit_id, key, cap = keep
        raw_cache.keep(fit_id, key, (x, y, w), cap)
    return result


def scan_queries(qid, w, index):
    """The ``PartitionQueries`` of a partition of an eval set (its query ids and
    weights, checked), as a one-item list: the lists of the partitions add up."""
    weights = None if w is None else weight_block(w)
    return [partition_queries(qid_block(qid, index), weights, index)]


def scan_labels(labels, weights, index, sketch_size, collect_classes, finite=True):
    """The label statistics of one block of labels and weights, as a ``ScanResult``
    without feature summaries (the scan pass's, and a cross-validation fold's); a
    regression's labels are sketched in ``sketch_size`` entries, unless None.  Labels
    ``(n_targets, n_rows)`` (a multi-target y; survival:aft's bounds): each column's facts
    in ``target_scans`` (infinite values let through: the objective checks its
    columns' ranges), the first's also in the result's own fields."""
    if labels.ndim == 2:
        if collect_classes:
            raise ValueError(f"a classifier's y must be one-dimensional; got {labels.shape[0]} "
                             f"columns{_where(index)}")
        targets = tuple(scan_labels(column, weights, index, sketch_size, False, finite=False)
                        for column in labels)
        crossed = int((labels[0] > labels[1]).sum()) if labels.shape[0] == 2 else 0
        return replace(targets[0], target_scans=targets, crossed_bounds=crossed)
    n = labels.shape[0]
    numeric = labels.dtype.kind in "biuf"
    if finite and numeric and labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"y contains inf{_where(index)}")
    weight_sum = float(n if weights is None else weights.sum())
    class_weights, label_summary, class_counts = None, None, None
    weighted_label_sum, label_min, label_max, all_integer = 0.0, np.inf, -np.inf, True
    positive_weight = weighted_log1p_label_sum = 0.0
    if collect_classes:
        uniques, inverse = np.unique(labels, return_inverse=True)
        sums = np.bincount(inverse, weights=weights, minlength=len(uniques))
        class_weights = dict(zip(uniques.tolist(), sums.tolist()))
        counts = np.bincount(inverse, minlength=len(uniques))
        class_counts = [dict(zip(uniques.tolist(), counts.tolist()))]
    else:
        if not numeric:
            raise TypeError(f"y must be numeric for regression; got dtype {labels.dtype}{_where(index)}")
        y64 = labels.astype(np.float64, copy=False)
        weighted_label_sum = float(y64.sum() if weights is None else y64 @ weights)
        if n:
            label_min, label_max = float(y64.min()), float(y64.max())
        all_integer = bool(np.all(y64 == np.floor(y64)))
        positive = y64 == 1.0
        positive_weight = float(positive.sum() if weights is None else weights[positive].sum())
        with np.errstate(divide="ignore", invalid="ignore"):  # (labels <= -1: refused later)
            logs = np.log1p(y64)
            weighted_log1p_label_sum = float(logs.sum() if weights is None else logs @ weights)
        if sketch_size is not None:
            label_summary = summarize_column(y64, weights, sketch_size)
    return ScanResult(n, [], weight_sum, weighted_label_sum, label_min, label_max,
                      all_integer, label_summary, class_weights, [n],
                      partition_class_counts=class_counts, positive_weight=positive_weight,
                      weighted_log1p_label_sum=weighted_log1p_label_sum)


def summarize_features(X, weights, size):
    """A weighted quantile summary per feature of a block (``sketch.summarize_block``;
    column by column for ``data.FrameRows`` and ``lake.ParquetColumns``; of a sparse
    block's stored values only, ``sparse.summarize``)."""
    if isinstance(X, (FrameRows, ParquetColumns)):
        return summarize_columns_of(X.column, X.shape[1], X.shape[0], weights, size)
    return (summarize_stored if is_sparse(X) else summarize_block)(X, weights, size)


def _partition_categories(x, categorical):
    """{feature: sorted categories present in this partition} (None: no categorical)."""
    if not categorical:
        return None
    features, names, max_cat = categorical
    if is_sparse(x):  # the stored values only (the rest is missing)
        columns = stored_columns(x, features)
    elif isinstance(x, pd.DataFrame):
        columns = {f: x.iloc[:, f] for f in features}
    else:
        columns = {f: np.asarray(x)[:, f] for f in features}
    return {f: column_categories(columns[f], name, max_cat) for f, name in zip(features, names)}


def _merge_categories(a, b, categorical):
    """Union of two partitions' category dictionaries, sorted (so the dictionary does not
    depend on how the rows are partitioned)."""
    if a is None:
        return None
    _, names, max_cat = categorical
    return {f: checked_categories(a[f] + b[f], name, max_cat) for f, name in zip(a, names)}


def merge_scans(a, b, sketch_size, categorical=None):
    """Combine two ScanResults (a before b)."""
    if a.class_weights is None:
        classes = None
    else:
        classes = dict(a.class_weights)
        for label, weight in b.class_weights.items():
            classes[label] = classes.get(label, 0.0) + weight
    label_summary = None
    if a.label_summary is not None:
        label_summary = merge(a.label_summary, b.label_summary, sketch_size)
    return ScanResult(
        a.n_rows + b.n_rows,
        merge_blocks(a.summaries, b.summaries, sketch_size),
        a.weight_sum + b.weight_sum,
        a.weighted_label_sum + b.weighted_label_sum,
        min(a.label_min, b.label_min),
        max(a.label_max, b.label_max),
        a.all_integer and b.all_integer,
        label_summary,
        classes,
        a.partition_rows + b.partition_rows,
        _merge_categories(a.categories, b.categories, categorical),
        None if a.partition_class_counts is None
        else a.partition_class_counts + b.partition_class_counts,
        a.positive_weight + b.positive_weight,
        a.weighted_log1p_label_sum + b.weighted_log1p_label_sum,
        None if a.partition_queries is None else a.partition_queries + b.partition_queries,
        _merge_targets(a.target_scans, b.target_scans, sketch_size),
        a.crossed_bounds + b.crossed_bounds,
    )


def _merge_targets(a, b, sketch_size):
    """Two partitions' ``target_scans`` merged target by target."""
    if a is None and b is None:
        return None
    if a is None or b is None or len(a) != len(b):
        counts = [1 if t is None else len(t) for t in (a, b)]
        raise ValueError(f"y has {counts[0]} column(s) in one partition and {counts[1]} in "
                         "another")
    return tuple(merge_scans(x, y, sketch_size) for x, y in zip(a, b))


@dataclass
class PartitionState:
    """Everything training keeps per partition (its arrays belong to it alone).

    K is the number of trees grown per round (1, or the number of classes).
    """

    codes: np.ndarray            # (n_rows, n_features) uint8/uint16 bin codes
    label: np.ndarray            # (n_rows,) float32; (T, n_rows): T targets, or bounds
    weight: np.ndarray           # (n_rows,) float32 or None
    margin: np.ndarray           # (K, n_rows) float64 current prediction (margin space)
    grad: np.ndarray = None      # (K, n_rows) float32 of the current round's trees
    hess: np.ndarray = None
    positions: np.ndarray = None  # (K, n_rows) node of each row in each tree (uint8..int32)
    row_offset: int = 0          # global index of the partition's first row
    rounds: int = 0              # boosting rounds whose trees are in ``margin``
    # cross-validation (``fold_states``): the fold of each row, (n_rows,) int32; the K trees of
    # fold f are trees f*K .. f*K + K - 1, and a row has zero gradients in its own
    # fold's trees.  None in a fit.
    folds: np.ndarray = None
    # rows reordered (cross-validation's rows in fold order, ``fold_states``): each row's
    # place in the partition as read, (n_rows,) int64, so that it draws by its global
    # index still (``keyed_random.global_row``); None: rows in the order read
    row_order: np.ndarray = None
    # quantized gradients (``quantize``): (K, n_rows) packed (g, h) of the round's
    # trees (``quantize.row_dtype``), from its second pass on; None: float gradients
    quantized: np.ndarray = None
    # (round, margins): the margins with the trees of every round before ``round``,
    # computed ahead by a pass that evaluates the training rows after a round
    # (``margins_ahead``); that round's first pass takes them instead of adding the
    # trees again; any other round's first pass drops them (a round grown again after
    # a lost worker starts from ``margin``).
    ahead: tuple = None
    # a state held in row blocks, quantized gradients: the step of the round's first
    # pass, whose gradients the next pass computes again from the stored margins, to
    # quantize them, instead of the first pass writing them out for it to read back
    # (``_level_in_row_blocks``)
    gradient_step: object = None
    # the rows grouped by node (``row_partition.RowRuns``), made by the first level pass
    # that uses them (``row_runs_of``) and reused; False where the memory budget had no
    # room for them; the node ids ``positions`` may lag behind them (``_node_ids``)
    row_runs: object = None
    # ranking: the query groups' row offsets, (n_groups + 1,) int64 (``query_groups``;
    # a group's rows are consecutive and all in this partition); None without qid
    groups: np.ndarray = None
    # (codes, each row's histogram cells of them: ``histogram.cells_of``, or None where
    # the memory budget had no room) where the features' widths differ, made by the
    # first tree grown in place; the histograms' additions of the levels grown in place
    # and of the roots read the cells instead of those codes (codes binned again,
    # ``rebin_partition``, are other codes)
    cells: tuple = None

    @property
    def n_rows(self):
        return self.codes.shape[0]


def encode_labels(labels, classes):
    """Map labels to their index in the sorted ``classes`` array."""
    if labels.dtype.kind in "biuf" and classes.dtype.kind in "biuf":
        codes = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
        unseen = classes[codes] != labels
        if unseen.any():
            raise ValueError(f"y has label {labels[unseen][0].item()!r} that is not one of "
                             f"{classes.tolist()}")
        return codes
    index = {label: i for i, label in enumerate(classes.tolist())}
    try:
        return np.fromiter((index[v] for v in labels.tolist()), dtype=np.int64, count=len(labels))
    except KeyError as err:
        raise ValueError(f"y has label {err.args[0]!r} that is not one of {classes.tolist()}") from None


def bin_partition(x, y, w, index, mapper, base_margin, classes, previous, store=None,
                  row_offset=0, margins=None, qid=None):
    """Second pass: bin one partition (of the training data or of an eval set) and set
    up its state.

    The starting margins: ``margins`` (the user's per-row base_margin block) if given,
    else the (K,) ``base_margin`` of every row; plus, when ``previous`` (a Booster whose
    training continues) is given, its trees' outputs.  ``row_offset`` is the global
    index of the partition's first row (row sampling is keyed on global indices).
    ``qid``: the rows' query ids block (ranking), kept as the groups' bounds.
    The per-row arrays go to the block store in row blocks when they do not fit the
    memory budget (``in_row_blocks``).
    """
    X, labels, weights = read_partition(x, y, w, index, mapper.encoders,
                                        in_pieces=previous is None)
    return in_row_blocks(start_state(X, labels, weights, index, mapper, base_margin, classes,
                                     previous, store, row_offset, margins, qid), store)


# bytes a row of a training state holds besides its codes, per tree of a round (margin
# float64, gradient and hessian float32, node id up to 4 bytes) and per row (label,
# weight)
ROW_BYTES_PER_TREE = 8 + 4 + 4 + 4
ROW_BYTES = 4 + 4


def in_row_blocks(state, store):
    """The state with its per-row arrays (label, weight, margins; the gradients and
    node ids a round adds follow) as ``blockstore.RowColumn``s in the store's row
    blocks, when its codes did not fit in memory whole or its per-row arrays do not fit
    what is left of the memory budget; else the state as it is, whole arrays whose
    bytes are taken from the budget (issue 17).  The columns go to the store holding
    the codes (not one opened again: a fit that failed and closed its store meanwhile
    must not get a new one from a task still running)."""
    if store is None or not isinstance(state.codes, StoredArray):
        return state
    store = state.codes.store
    n_trees, n_rows = state.margin.shape
    nbytes = n_rows * (ROW_BYTES + n_trees * ROW_BYTES_PER_TREE)
    if state.folds is not None:  # cross-validation: each row's fold
        nbytes += state.folds.nbytes
    nbytes += state.label.nbytes - 4 * n_rows  # (a multi-target y: a label per target)
    if state.codes.whole_in_memory and store.reserve(nbytes):
        return state

    def column(array):
        return None if array is None else _as_column(store, array)

    return replace(state, label=column(state.label), weight=column(state.weight),
                   margin=column(state.margin), folds=column(state.folds))


def _as_column(store, array):
    """``array`` (rows on its last axis) as a ``RowColumn`` of ``store``."""
    column = store.new_column(array.shape[:-1], array.shape[-1], array.dtype)
    store_whole(column, array)
    return column


def binned_codes(X, mapper, store, order=None):
    """X's codes, kept by the fit's block store (``store``: a ``blockstore.StoreRef``)
    in this process, binned block by block straight into it when they do not fit the
    budget (as they are when ``store`` is None).  A ``data.FrameRows`` or a
    ``lake.ParquetColumns`` is binned a column at a time (a frame's row blocks too:
    ``_binned_rows``; a lake's codes made whole first: a column is what its file gives
    at a time); each block is kept as uint8 where its codes fit
    (``binning.narrowed``).  ``order`` (None: as read): the codes of X's rows
    ``order[0], order[1], ...`` (a cross-validation's rows in fold order,
    ``fold_states``), block by block too."""
    if isinstance(X, ParquetColumns) or (store is None and isinstance(X, FrameRows)):
        codes = _in_order(narrowed(mapper.transform_columns(X.column, X.shape[0])), order)
        return codes if store is None else store.open().put(codes)
    if store is None:
        return _in_order(narrowed(mapper.transform(X)), order)
    return store.open().put_rows((X.shape[0], len(mapper.cuts)), mapper.dtype,
                                 lambda start, stop: narrowed(_binned_rows(X, mapper, start,
                                                                           stop, order)))


def _in_order(codes, order):
    return codes if order is None else codes[order]


def _binned_rows(X, mapper, start, stop, order=None):
    """The codes of rows ``start:stop`` of X (``order``: of rows ``order[start:stop]``):
    a ``data.FrameRows`` binned a column at a time, without the rows' float block
    (which cost 2 of the 5.2 ms of binning diamonds' 43,146 x 9 frame: 3.8 ms now)."""
    rows = slice(start, stop) if order is None else order[start:stop]
    if isinstance(X, FrameRows):
        return mapper.transform_columns(X.rows(rows).column, stop - start)
    return mapper.transform(X[rows])


def start_state(X, labels, weights, index, mapper, base_margin, classes, previous, store,
                row_offset, margins, qid=None, code_order=None):
    """The training state of a read partition (``bin_partition``'s second half).
    ``code_order``: its codes binned with the rows in that order (``binned_codes``),
    the per-row arrays left as read: the caller puts them in that order too
    (``fold_states``)."""
    if classes is not None:
        labels = encode_labels(labels, classes)
    n = X.shape[0]
    K = len(base_margin)
    if margins is not None:
        start = margin_block(margins, K, n, index).copy()  # updated in place in training
        if previous is not None:
            start = start + previous.predict_margin(X) - previous.base_margin[:, None]
    elif previous is not None:
        start = previous.predict_margin(X)
    else:
        start = np.repeat(np.asarray(base_margin, dtype=np.float64)[:, None], n, axis=1)
    return PartitionState(
        codes=binned_codes(X, mapper, store, code_order),
        label=np.asarray(labels, dtype=np.float32),
        weight=None if weights is None else weights.astype(np.float32),
        margin=start,
        row_offset=row_offset,
        rounds=0 if previous is None else previous.n_rounds,
        groups=None if qid is None else groups_of(qid, n, index),
    )


def groups_of(qid, n_rows, index):
    """``group_ptr`` of a partition's query ids block (``query_groups``; the first
    pass checked them and the weights: ``partition_queries``)."""
    qid = qid_block(qid, index)
    if len(qid) != n_rows:
        raise ValueError(f"X has {n_rows} rows but qid has {len(qid)}{_where(index)}")
    return group_pointer(qid)


def rebuild_partition(x, y, w, index, mapper, base_margin, classes, previous, store,
                      row_offset, margins, qid, new_trees, rounds):
    """A partition's state as training had it at the start of round ``rounds``: binned
    like ``bin_partition``, with the fit's finished trees ``new_trees`` added to the
    starting margins one by one, in order (the additions training made, so the same
    floating-point values).  Used to rebuild a state lost with a worker."""
    X, labels, weights = read_partition(x, y, w, index, mapper.encoders)
    return started_again(X, labels, weights, index, mapper, base_margin, classes, previous,
                         store, row_offset, margins, qid, new_trees, rounds)


def started_again(X, labels, weights, index, mapper, base_margin, classes, previous, store,
                  row_offset, margins, qid, new_trees, rounds, code_order=None):
    """``rebuild_partition``'s state of a read partition (``code_order``: as for
    ``start_state``; the margins, trees added, stay in the order read)."""
    state = start_state(X, labels, weights, index, mapper, base_margin, classes, previous,
                        store, row_offset, margins, qid, code_order)
    PackedForest(new_trees, len(base_margin)).add_block_margin(X, state.margin)
    return replace(state, rounds=rounds)


def rebuild_fit_partition(x, y, w, index, mapper, base_margin, classes, previous, store,
                          row_offset, margins, qid, new_trees, rounds):
    """``rebuild_partition`` for a fit's partition (training data or an eval set): its
    per-row arrays in row blocks as ``bin_partition`` has them."""
    return in_row_blocks(rebuild_partition(x, y, w, index, mapper, base_margin, classes,
                                           previous, store, row_offset, margins, qid,
                                           new_trees, rounds), store)


@dataclass
class LevelStep:
    """The client's instructions for one pass over every partition.

    Arrays over nodes are (K, n_nodes): one row per tree of the round.
    """

    # splits decided at the previous level (feature -1: node not split)
    split_feature: np.ndarray = None
    split_bin: np.ndarray = None
    default_left: np.ndarray = None
    left_child: np.ndarray = None
    right_child: np.ndarray = None
    missing_code: int = 0
    # set at the first level of a round: the finished trees' node values (None for the
    # very first round) and the objective to recompute gradients with
    new_tree: bool = False
    leaf_values: np.ndarray = None
    objective: object = None
    # row subsampling of the new round: keep rows whose hash of (seed, round, global
    # row index) falls below ``subsample``
    subsample: float = 1.0
    sample_seed: int = 0
    round: int = 0
    # influence trimming: per output, rows whose hessian is below it are left out
    trim_threshold: np.ndarray = None
    # boosted random forests (``num_parallel_tree`` P > 1; ``level_loop.grow_rounds``):
    # the trees of the previous boosting round's P copies, each copy's as a
    # ``level_loop.binned_round``, added to the margins in that order at a boosting
    # round's first pass (None: nothing to add); ``round`` counts copies, the
    # objective's round is ``round // parallel_trees``
    deferred: tuple = None
    parallel_trees: int = 1
    # quantized gradients (``quantize``): ``num_grad_quant_bins`` (0: float gradients);
    # in the passes after a round's first, the (K, 2) steps of the round's trees too
    quant_bins: int = 0
    quant_scales: np.ndarray = None
    quant_keys: np.ndarray = None  # (K,) uint64 keys of the stochastic rounding
    # which nodes to build histograms for
    node_to_slot: np.ndarray = None
    n_slots: int = 0
    cell_offsets: np.ndarray = None  # the histograms' layout (``histogram``)
    # ``BinMapper.cell_width``; 0 selects the kernels' general indexing (always right)
    cell_width: int = 0
    # categorical splits' right sets (see histogram.build_histograms), None if no
    # categorical feature
    cat_table: np.ndarray = None
    # the dtype of the rows' node ids (``position_dtype``), set at a round's first pass
    position_dtype: object = np.int32

    def split_arrays(self):
        """The splits to apply; the client always sets them, covering every node id."""
        return (self.split_feature, self.split_bin, self.default_left, self.left_child,
                self.right_child)


def no_splits(n_trees, n_nodes):
    """Split arrays saying that no node of ``n_trees`` trees is split.

    The kernels index these arrays by node id without bounds checks, so they must cover
    every node id present in the positions.
    """
    shape = (n_trees, n_nodes)
    return (np.full(shape, -1, dtype=np.int32), np.zeros(shape, dtype=np.int32),
            np.zeros(shape, dtype=np.bool_), np.zeros(shape, dtype=np.int32),
            np.zeros(shape, dtype=np.int32))


def position_dtype(max_nodes):
    """The smallest dtype of the rows' node ids in trees of at most ``max_nodes`` nodes:
    uint8 up to depth 7, uint16 up to depth 15, else int32.  A quarter of int32's
    memory for the usual depths, and of the bytes each level pass reads and writes."""
    if max_nodes <= 256:
        return np.uint8
    return np.uint16 if max_nodes <= 65536 else np.int32


def category_table(splits):
    """The categorical right sets of a split tuple: split tuples of models with
    categorical features carry them as a sixth array (see ``histogram``), None else."""
    return splits[5] if len(splits) > 5 else None


@numba.njit(nogil=True, cache=True)
def sampled_rows(seed, round_, row_offset, n_rows, fraction, row_order=None):
    """float32 0/1 mask: row ``row_offset + i`` (``row_order``: of rows reordered,
    ``keyed_random.global_row``) is kept in round ``round_`` when its draw keyed on
    (seed, round, global row index) falls below ``fraction`` (``keyed_random``): the
    same whatever the partitioning."""
    keep = np.empty(n_rows, dtype=np.float32)
    key = np.uint64(seed) * GOLDEN + np.uint64(round_) * MIX1
    for i in range(n_rows):
        keep[i] = 1.0 if uniform(key, global_row(row_offset, row_order, i)) < fraction else 0.0
    return keep


def partition_step(state, step):
    """One level on one partition: move rows to their children, build histograms.

    At the first level of a round, the previous round's last splits are applied first,
    its leaf values added to the margins and the gradients recomputed; every row then
    starts at the root of each new tree.  The state is updated in place (its arrays
    belong to it alone): keeping the old arrays until every partition is done would
    hold a second copy of the margins, gradients and positions of all rows.
    """
    if step.new_tree:
        return _start_round(state, step)
    if isinstance(state.margin, RowColumn):
        return state, _level_in_row_blocks(state, step)
    if step.quant_scales is not None and state.quantized is None:  # the round's 2nd pass
        state.quantized = quantize(state.grad, state.hess, step.quant_scales,
                                   step.quant_keys, state.row_offset, step.quant_bins,
                                   state.row_order)
    runs = row_runs_of(state)
    if runs is not None:  # each tree's rows grouped by node: ``row_partition``
        codes = single_block(state.codes)
        hist = new_histograms(step.n_slots, step.cell_offsets, state.quantized is not None)
        runs.level_pass(codes, state.grad, state.hess, state.quantized, step.split_arrays(),
                        step.missing_code, step.node_to_slot, step.cat_table, hist,
                        step.cell_offsets, step.cell_width, kernel_threads_of(codes))
        return state, hist
    _, hist = build_histograms(state.codes, state.grad, state.hess, state.positions,
                               *step.split_arrays(), step.missing_code, step.node_to_slot,
                               step.n_slots, step.cell_offsets, out_positions=state.positions,
                               cat_table=step.cat_table, cell_width=step.cell_width,
                               quantized=state.quantized)
    return state, hist


def row_runs_of(state):
    """The state's ``RowRuns`` for the trees of its rounds (made at the first call), or
    None where its rows cannot keep them: codes not one block in memory, per-row arrays
    in row blocks, or no room in the memory budget for them (``run_row_bytes`` a row,
    taken from the budget once and kept for the fit)."""
    runs = state.row_runs
    if (runs is False or single_block(state.codes) is None
            or isinstance(state.margin, RowColumn)):
        return None
    n_trees = state.margin.shape[0]
    if runs is not None and (runs.n_rows, runs.n_trees) == (state.n_rows, n_trees):
        return runs
    if isinstance(state.codes, StoredArray) and not state.codes.store.reserve(
            run_row_bytes(n_trees) * state.n_rows):
        state.row_runs = False
        return None
    state.row_runs = RowRuns(state.n_rows, n_trees)
    return state.row_runs


def _node_ids(state):
    """The state's node ids (``positions``), brought up to its rows' runs first where
    they lag behind (``row_partition.RowRuns``)."""
    if state.row_runs and not isinstance(state.positions, RowColumn):
        state.row_runs.write_positions(state.positions)
    return state.positions


def grows_in_place(state):
    """Whether a tree's levels may grow in one compiled call (``levels_in_place``) on
    this partition: its codes are one block in memory, its per-row arrays whole, and
    its kernels may use native threads (the compiled loop links the parallel kernels,
    and loading them starts numba's threading layer, which a forked child of a process
    that used OpenMP cannot survive: ``native_threads``), and the budget has room for
    its rows' runs (made here: ``row_runs_of``)."""
    return (single_block(state.codes) is not None and not isinstance(state.margin, RowColumn)
            and native_threads.available() and row_runs_of(state) is not None)


def _added_of(state, block, cell_offsets):
    """What the histograms' additions read for the rows of ``block``, and the cell
    offsets the row kernels then take: the cells of ``block`` (``PartitionState.cells``)
    and None where they are made (the block is the whole partition), else the codes and
    ``cell_offsets``."""
    if state.cells is not None and state.cells[0] is block and state.cells[1] is not None:
        return state.cells[1], None
    return block, cell_offsets


def _level_in_row_blocks(state, step):
    """``partition_step``'s level pass on a state held in row blocks: block by block,
    the block's node ids move and are stored back; with quantized gradients the
    round's second pass computes each block's gradients again from its margins (the
    first pass stored none: ``gradient_step``) and quantizes them (stored for the
    passes after it, which then read only those)."""
    quantizing = step.quant_scales is not None and state.quantized is None
    columns = _level_reads(state, step)  # (read ahead, block by block)
    if quantizing:
        state.quantized = _new_column(state, row_dtype(step.quant_bins))
    quantized = step.quant_scales is not None
    hist = new_histograms(step.n_slots, step.cell_offsets, quantized)
    for i, rows, codes in _state_blocks(state, columns):
        positions = state.positions.get(i)
        grad = hess = packed = None
        if quantizing:
            if state.gradient_step is None:  # (stored by the first pass: whole queries')
                block_grad, block_hess = state.grad.get(i), state.hess.get(i)
            else:  # the first pass's gradients again (the same values: the same margins)
                block_grad, block_hess = _round_gradients(state, state.gradient_step, i, rows,
                                                          state.margin.get(i))
            offset, order = _draw_rows(state, rows)
            packed = quantize(block_grad, block_hess, step.quant_scales, step.quant_keys,
                              offset, step.quant_bins, order)
            state.quantized.set(i, packed)
        elif quantized:
            packed = state.quantized.get(i)
        else:
            grad, hess = state.grad.get(i), state.hess.get(i)
        add_block_histograms(hist, codes, grad, hess, positions, positions,
                             step.split_arrays(), step.missing_code, step.node_to_slot,
                             step.cell_offsets, step.cell_width, step.cat_table, packed)
        state.positions.set(i, positions)
    state.gradient_step = None
    return hist


def _level_reads(state, step):
    """The per-row columns a level pass on a state held in row blocks reads besides the
    codes: the round's second pass with quantized gradients computes them again from
    the margins (``_level_in_row_blocks``)."""
    if step.quant_scales is not None and state.quantized is None:
        return (state.positions, state.margin, state.label, state.weight, state.folds)
    if step.quant_scales is not None:
        return (state.positions, state.quantized)
    return (state.positions, state.grad, state.hess)


def _adds_round_trees(state, step):
    """Whether a round's first pass adds the previous round's trees to the state's
    margins: not when it has them already (a round grown again after a lost worker)."""
    return step.leaf_values is not None and state.rounds < step.round


def _adds_deferred_trees(state, step):
    """Whether a boosting round's first pass adds the previous boosting round's copies
    of its trees (``LevelStep.deferred``; ``num_parallel_tree``) to the state's
    margins: not when it has them already (as ``_adds_round_trees``)."""
    return step.deferred is not None and state.rounds < step.round


def _add_deferred_trees(codes, step, margin):
    """``margin +=`` the outputs of ``step.deferred``'s trees, copy after copy, for the
    rows of ``codes`` (in place)."""
    for trees, cat_table in step.deferred:
        add_binned_tree_outputs(codes, *trees, step.missing_code, margin, in_place=True,
                                cat_table=cat_table)


def _round_start_reads(state, old_positions):
    """The per-row columns a round's first pass reads besides the codes
    (``old_positions``: the node ids of the previous round's trees, when the pass adds
    them; else None)."""
    return (state.margin, state.label, state.weight, state.folds, old_positions)


def read_ahead(state, step):
    """Start reading the first row block of what ``partition_step(state, step)`` reads
    from disk: its codes' and, held in row blocks, its columns' (``thread_passes`` calls
    this for the partition a runner will take next, so that the pass does not wait on
    it; within a partition each block is read while the one before is worked on).
    Nothing changes in the state: a read started here is taken by the pass or, for a
    block stored again since, dropped (``RowColumn.get``)."""
    if hasattr(state.codes, "read_ahead"):
        state.codes.read_ahead()
    if not isinstance(state.margin, RowColumn):
        return
    if step.new_tree:
        columns = _round_start_reads(
            state, state.positions if _adds_round_trees(state, step) else None)
    else:
        columns = _level_reads(state, step)
    for column in columns:
        if isinstance(column, RowColumn):
            column.prefetch(0)


partition_step.read_ahead = read_ahead  # (``thread_passes.run_partitions``)


def _state_blocks(state, columns_read=()):
    """``(i, rows, codes)`` of each row block of a state: the blocks of its codes, or
    for a state held in row blocks (``in_row_blocks``) the blocks of its columns, whose
    codes are the same blocks or slices of codes held whole.  Block ``i + 1`` of the
    ``columns_read`` is read while block ``i`` is worked on."""
    if not isinstance(state.margin, RowColumn):
        for i, (start, stop, codes) in enumerate(row_blocks(state.codes)):
            yield i, slice(start, stop), codes
        return
    bounds = state.margin.bounds
    columns = [c for c in columns_read if isinstance(c, RowColumn)]
    for column in columns:
        column.prefetch(0)
    if getattr(state.codes, "n_blocks", 1) == len(bounds):  # blocks of the same grid
        blocks = (codes for _, _, codes in row_blocks(state.codes))
    else:  # codes held whole
        whole = next(row_blocks(state.codes))[2]
        blocks = (whole[start:stop] for start, stop in bounds)
    for i, ((start, stop), codes) in enumerate(zip(bounds, blocks)):
        for column in columns:
            column.prefetch(i + 1)
        yield i, slice(start, stop), codes


def _new_column(state, dtype):
    """An empty (K, n_rows) column of ``dtype`` in the store of a state held in row
    blocks: node ids or gradients, read at every pass (``pass_row_bytes``)."""
    return state.margin.new_like(dtype, per_pass=True)


def pass_row_bytes(n_trees, max_nodes, weighted, quant_bins):
    """Bytes of a row's arrays that a level pass reads: its node ids and its gradients
    and hessians (float32, float64 with weights; packed in one ``quantize.row_dtype``
    with ``quant_bins`` bins, 0: not quantized)."""
    gradients = (row_dtype(quant_bins).itemsize if quant_bins
                 else 2 * (8 if weighted else 4))
    return n_trees * (np.dtype(position_dtype(max_nodes)).itemsize + gradients)


def _block_of(array, i, rows):
    """Block ``i`` (rows ``rows``) of a per-row array: a ``RowColumn``'s block, a view
    of a whole array, or None."""
    if array is None:
        return None
    if isinstance(array, RowColumn):
        return array.get(i)
    return array[..., rows]


def _start_round(state, step):
    """A round's first pass, in one read of the codes, block by block: add the previous
    round's trees to the margins (unless this state has them already: a round grown
    again after a lost worker), compute the new gradients, build the roots' histograms.
    (Elementwise, so block by block gives the same values as whole arrays.)  With
    quantized gradients the result is the largest gradients instead
    (``quantize.GradientMaxima``): the next pass quantizes with the scales of all rows
    and builds the roots' histograms.  A state held in row blocks stores each block's
    margins, float gradients and node ids back as it goes (with quantized gradients,
    the margins and node ids: the next pass computes the gradients again)."""
    n_trees, n_rows = state.margin.shape
    in_blocks = isinstance(state.margin, RowColumn)
    add_trees = _adds_round_trees(state, step)
    add_deferred = _adds_deferred_trees(state, step)
    ahead, state.ahead = state.ahead, None
    if (add_trees or add_deferred) and ahead is not None and ahead[0] == step.round:
        # the same additions, made ahead
        state.margin, add_trees, add_deferred = ahead[1], False, False
    runs = state.row_runs
    if add_trees and runs and runs.live and not in_blocks:
        # the previous round's rows are grouped by node: its leaves' values are added
        # node by node, and the node ids need not be brought up to the runs
        _add_round_trees_from_runs(state, step, state.margin)
        add_trees = False
        old_positions = positions = state.positions  # (every row back at the root below)
    else:
        # the old positions become the new ones, block by block once read (every row
        # back at the root); the old gradients are freed before the new ones are made
        # (held in row blocks, their columns are reused).  Node ids behind the runs
        # are brought up to them only where the trees are added from them.
        old_positions = positions = _node_ids(state) if add_trees else state.positions
    if runs:  # every row back at the root: the runs start again
        runs.live = runs.stale = False
    if positions is None or positions.dtype != step.position_dtype:
        positions = (_new_column(state, step.position_dtype) if in_blocks
                     else np.zeros(state.margin.shape, dtype=step.position_dtype))
    grads, hesses = (state.grad, state.hess) if in_blocks else (None, None)
    # a ranking objective's gradients come from whole queries (below)
    ranks = state.groups is not None and getattr(step.objective, "ranks_queries", False)
    # held in row blocks, quantized: the gradients are not stored (the next pass
    # computes them again from the margins: ``gradient_step``), but for whole queries'
    recomputed = in_blocks and bool(step.quant_bins) and not ranks
    for column in (grads, hesses, state.quantized) if recomputed else (state.quantized,):
        if isinstance(column, RowColumn):
            column.release()
    if recomputed:
        grads = hesses = None
    state.grad = state.hess = state.positions = state.quantized = None
    if not step.quant_bins:
        hist = new_histograms(step.n_slots, step.cell_offsets)
    maxima = None
    ranked = None
    if ranks:
        # a query's gradients need all its rows' margins: the round's trees are added to
        # every block first, and the partition's gradients made at once
        if add_trees or add_deferred:
            for i, rows, block in _state_blocks(state):
                _add_finished_trees(state, step, i, rows, block, old_positions, add_trees,
                                    add_deferred)
            add_trees = add_deferred = False
        # (cross-validation: each fold's from the queries it trains on, ``fold_states``)
        folds = () if state.folds is None else (whole(state.folds),)
        ranked = step.objective.query_gradients(
            whole(state.margin), whole(state.label), whole(state.weight), state.groups,
            state.row_offset, step.round // step.parallel_trees, *folds)
    root_slots = np.ascontiguousarray(step.node_to_slot[:, 0])  # all rows start there
    reads = _round_start_reads(state, old_positions if add_trees else None)
    for i, rows, block in _state_blocks(state, reads):
        margin = _add_finished_trees(state, step, i, rows, block, old_positions, add_trees,
                                     add_deferred)
        if in_blocks:
            block_positions = np.zeros((n_trees, rows.stop - rows.start), step.position_dtype)
        else:
            block_positions = positions[:, rows]
            block_positions[...] = 0
        grad, hess = _round_gradients(state, step, i, rows, margin, ranked)
        if not step.quant_bins:
            added, offsets = _added_of(state, block, step.cell_offsets)
            add_root_histograms(hist, added, grad, hess, root_slots, offsets, step.cell_width)
        elif in_blocks:  # the largest gradients, block by block (a maximum: any order)
            block_maxima = gradient_maxima(grad, hess)
            maxima = block_maxima if maxima is None else np.maximum(maxima, block_maxima)
        if in_blocks:
            positions.set(i, block_positions)
            if not recomputed:
                if grads is None or grads.dtype != grad.dtype:
                    grads = _new_column(state, grad.dtype)
                    hesses = _new_column(state, hess.dtype)
                grads.set(i, grad)
                hesses.set(i, hess)
        elif rows.stop - rows.start == n_rows:  # one block: its arrays are the partition's
            grads, hesses = grad, hess
        else:
            if grads is None:
                grads = np.empty(state.margin.shape, dtype=grad.dtype)
                hesses = np.empty(state.margin.shape, dtype=hess.dtype)
            grads[:, rows], hesses[:, rows] = grad, hess
    state.grad, state.hess = grads, hesses
    state.positions, state.rounds = positions, step.round
    state.gradient_step = step if recomputed else None
    if step.quant_bins:
        if maxima is None:  # (whole arrays; or no row at all)
            maxima = (np.zeros((n_trees, 2)) if recomputed
                      else gradient_maxima(state.grad, state.hess))
        return state, GradientMaxima(maxima)
    return state, hist


def _add_finished_trees(state, step, i, rows, block, old_positions, add_trees, add_deferred):
    """Block ``i``'s margins (rows ``rows``, codes ``block``) with the previous round's
    trees added, as a round's first pass adds them: from the rows' node ids
    (``old_positions``) if ``add_trees``, and the copies of a boosted random forest's
    round (``LevelStep.deferred``) if ``add_deferred``; stored back into the state."""
    margin = _block_of(state.margin, i, rows)
    if add_deferred:
        _add_deferred_trees(block, step, margin)
    if add_trees:
        _add_round_trees(block, _block_of(old_positions, i, rows), step, margin, margin)
    if (add_trees or add_deferred) and isinstance(state.margin, RowColumn):
        state.margin.set(i, margin)
    return margin


def _add_round_trees(block, positions, step, margin, out):
    """``out = margin +`` the round's leaf values, for one block of rows: each row moves
    to its leaf under the round's last splits (``step``'s) from ``positions``."""
    add_leaf_values(block, positions, *step.split_arrays(), step.missing_code,
                    step.leaf_values, margin, out, step.cat_table)


def _add_round_trees_from_runs(state, step, margin):
    """``margin +=`` the round's leaf values (``step``'s last splits and values), from
    the rows' runs of a state held whole in memory (``RowRuns.add_leaf_values``)."""
    codes = single_block(state.codes)
    state.row_runs.add_leaf_values(codes, step.split_arrays(), step.missing_code,
                                   step.leaf_values, margin, step.cat_table,
                                   kernel_threads_of(codes))


def margins_ahead(state, step):
    """The state's margins with the round's finished trees added, as a new array:
    ``step`` carries the round's last splits and leaf values, as the next round's first
    pass does, and that pass takes them (``PartitionState.ahead``) instead of adding
    the trees again.  ``margin`` and ``rounds`` are left as they are, so a worker lost
    during this pass costs the round, grown again from them.  A state held in row
    blocks keeps nothing (no whole per-row array outlives a pass there) and reads its
    margins whole here, one partition at a time.  For the pass after a round that
    evaluates metrics on the training rows (``training.training_eval_step``,
    ``fold_states.fold_partials``)."""
    runs = state.row_runs
    if step.leaf_values is None:  # a boosted random forest's copies, in bin space
        out = whole(state.margin).copy()
        if step.deferred is not None:
            for start, stop, block in row_blocks(state.codes):
                _add_deferred_trees(block, step, out[:, start:stop])
        if not isinstance(state.margin, RowColumn):
            state.ahead = (step.round, out)
        return out
    if runs and runs.live and not isinstance(state.margin, RowColumn):
        # the rows grouped by node: the leaves' values added node by node (the same
        # sums: one addition a row and tree)
        out = state.margin.copy()
        _add_round_trees_from_runs(state, step, out)
        state.ahead = (step.round, out)
        return out
    margin, positions = whole(state.margin), whole(_node_ids(state))
    out = np.empty_like(margin)
    for start, stop, block in row_blocks(state.codes):
        rows = slice(start, stop)
        _add_round_trees(block, positions[:, rows], step, margin[:, rows], out[:, rows])
    if not isinstance(state.margin, RowColumn):
        state.ahead = (step.round, out)
    return out


def _round_gradients(state, step, i, rows, margin, ranked=None):
    """The new round's (g, h) of row block ``i`` (``rows``; ``margin``: its margins),
    with row subsampling and trimming applied.  ``ranked``: the (g, h) of the whole
    partition's queries (a ranking objective's), of which the block's are taken."""
    weight = _block_of(state.weight, i, rows)
    label = _block_of(state.label, i, rows)
    if ranked is not None:
        grad, hess = ranked[0][:, rows], ranked[1][:, rows]
    elif state.folds is None:
        grad, hess = step.objective.gradients(margin, label, weight)
    else:  # cross-validation: zero where a fold holds the row out (``fold_states``)
        grad, hess = step.objective.fold_gradients(margin, label, weight,
                                                   _block_of(state.folds, i, rows))
    if step.subsample < 1.0:
        offset, order = _draw_rows(state, rows)
        keep = sampled_rows(step.sample_seed, step.round, offset, rows.stop - rows.start,
                            step.subsample, order)
        grad, hess = grad * keep, hess * keep  # unsampled rows add nothing
    if step.trim_threshold is not None:
        kept = hess >= step.trim_threshold[:, None]
        grad, hess = grad * kept, hess * kept
    return np.ascontiguousarray(grad), np.ascontiguousarray(hess)


def _draw_rows(state, rows):
    """(row offset, row order) by which the rows ``rows`` of a state draw
    (``keyed_random.global_row``): rows reordered draw by their places as read
    (``row_order``)."""
    if state.row_order is None:
        return state.row_offset + rows.start, None
    return state.row_offset, state.row_order[rows]


def leaf_residual_summaries(state, arg):
    """Move rows to their leaves; per leaf of each tree, a weighted sketch of
    ``y - margin`` (tree k's residuals from output k's margins).

    For objectives whose leaves are re-estimated as a quantile of their rows' residuals
    (Friedman's LAD, quantile regression).  ``arg`` = (pending splits (K, n_nodes) or
    None, missing_code, sketch size).  Returns the new state and the ``LeafSketches`` of
    every (tree, leaf).
    (A state held in row blocks is read whole here, one partition at a time.)
    """
    splits, missing_code, size = arg
    positions = leaf_positions(state, splits, missing_code)
    label, margin, weight = whole(state.label), whole(state.margin), whole(state.weight)
    label = label.astype(np.float64)
    sketches = LeafSketches.joined([
        sketch_leaves(k, positions[k], output_labels(label, k) - margin[k], weight, size)
        for k in range(positions.shape[0])])
    return with_positions(state, positions), sketches


def output_labels(label, k):
    """The labels output ``k`` is fitted to: a multi-target y's column ``k`` (labels
    ``(n_targets, n_rows)``), else the one label of each row."""
    return label if label.ndim == 1 else label[k]


def with_positions(state, positions):
    """The state with the rows' node ids ``positions`` (whole): stored into its row
    blocks when it is held so, else in place of its array."""
    if isinstance(state.positions, RowColumn):
        store_whole(state.positions, positions)
        return state
    if state.row_runs:  # the node ids are now ahead of the runs
        state.row_runs.live = state.row_runs.stale = False
    return replace(state, positions=positions)


def leaf_positions(state, splits, missing_code):
    """The rows' nodes in every tree once the pending ``splits`` (or None) are applied."""
    if splits is None:
        return whole(_node_ids(state))
    no_slots = np.full(splits[0].shape, -1, dtype=np.int32)
    empty = np.zeros((1, 0), dtype=np.float32)
    positions, _ = build_histograms(state.codes, empty, empty, whole(_node_ids(state)),
                                    *splits[:5], missing_code, no_slots, 0,
                                    np.zeros(state.codes.shape[1] + 1, np.int64),
                                    cat_table=category_table(splits))
    return positions


def whole(array):
    """A per-row array whole: a ``RowColumn`` read into one array, else as it is."""
    return array.to_numpy() if isinstance(array, RowColumn) else array


def store_whole(column, array):
    """Store a whole array into a ``RowColumn``, block by block (an array: nothing to
    do, it is the state's)."""
    if not isinstance(column, RowColumn):
        return
    for i, (start, stop) in enumerate(column.bounds):
        column.set(i, array[..., start:stop])


class LeafSummaryMerger:
    """Combine the ``LeafSketches`` of two partition groups (a before b)."""

    def __init__(self, size):
        self.size = size

    def __call__(self, a, b):
        return merge_leaf_sketches(a, b, self.size)


def hessian_summaries(x, w, state, size, encoders=None):
    """Weighted quantile summaries of a raw partition, weighted by the current hessians
    (summed over the round's outputs): the paper's split proposal for
    ``tree_method="approx"`` (§3.3, eq. 8-9)."""
    X = feature_rows(x, encoders)
    return summarize_features(X, whole(state.hess).sum(axis=0, dtype=np.float64), size)


def rebin_partition(x, w, state, mapper, store):
    """The state with the raw partition binned again by a new mapper (the old codes'
    memory and disk go back to the block store first: the new ones take their place)."""
    X = feature_rows(x, mapper.encoders)
    if hasattr(state.codes, "release"):
        state.codes.release()
    return replace(state, codes=binned_codes(X, mapper, store))


def hessian_self_summaries(state, size):
    """Per output, a summary of the rows' hessians weighted by themselves (trimming)."""
    hess = whole(state.hess).astype(np.float64)
    return state, [summarize_column(h, h, size) for h in hess]
