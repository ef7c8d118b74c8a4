"""What runs inside one Dask task on one partition.

Three kinds of task touch rows, and only these:

1. ``scan_partition`` (first pass over the raw data): checks the labels and weights,
   summarises every feature with the weighted quantile sketch and returns small label
   statistics.  Results of all partitions are combined with ``merge_scans``.
2. ``bin_partition`` (second pass): bins the feature block and returns the partition's
   ``PartitionState``: codes, labels, weights and the starting margin.
3. ``partition_step`` (once per tree level): applies the previous level's splits to the
   rows' node positions, and at the start of a tree adds the finished tree's leaf values
   to the margin and recomputes gradients; then builds the histograms of the nodes the
   client asked for.  It returns a new state (sharing the unchanged arrays) and the
   histograms; the state is never mutated, so a lost task can be recomputed.
"""

from dataclasses import dataclass, replace

import numpy as np

from .data import feature_block, label_block, weight_block
from .histogram import add_leaf_values, build_histograms
from .sketch import merge_blocks, summarize_block


@dataclass
class ScanResult:
    """Small per-partition facts, mergeable across partitions."""

    n_rows: int
    summaries: list          # one sketch.FeatureSummary per feature
    weight_sum: float
    weighted_label_sum: float  # only for numeric labels
    label_min: float
    label_max: float
    class_weights: dict      # label -> weight sum (classifiers), else None


def _where(index):
    return f" (partition {index})"


def _check_weights(w, index):
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"sample_weight contains NaN or inf{_where(index)}: {w[bad][0]}")
    if (w < 0).any():
        raise ValueError(f"sample_weight must be >= 0; found {w[w < 0][0]}{_where(index)}")


def read_partition(x, y, w, index):
    """Convert one partition's blocks and check that they line up."""
    X = feature_block(x)
    labels = None if y is None else label_block(y)
    weights = None if w is None else weight_block(w)
    n = X.shape[0]
    if labels is not None and labels.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has {labels.shape[0]}{_where(index)}")
    if weights is not None:
        if weights.shape[0] != n:
            raise ValueError(f"X has {n} rows but sample_weight has {weights.shape[0]}{_where(index)}")
        _check_weights(weights, index)
    return X, labels, weights


def scan_partition(x, y, w, index, sketch_size, collect_classes):
    """First pass: sketch summaries and label statistics of one partition."""
    X, labels, weights = read_partition(x, y, w, index)
    n = X.shape[0]
    numeric = labels.dtype.kind in "biuf"
    if numeric and labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"y contains inf{_where(index)}")
    weight_sum = float(n if weights is None else weights.sum())
    class_weights = None
    if collect_classes:
        uniques, inverse = np.unique(labels, return_inverse=True)
        sums = np.bincount(inverse, weights=weights, minlength=len(uniques))
        class_weights = dict(zip(uniques.tolist(), sums.tolist()))
        weighted_label_sum, label_min, label_max = 0.0, np.inf, -np.inf
    else:
        if not numeric:
            raise TypeError(f"y must be numeric for regression; got dtype {labels.dtype}{_where(index)}")
        y64 = labels.astype(np.float64, copy=False)
        weighted_label_sum = float(y64.sum() if weights is None else y64 @ weights)
        label_min = float(y64.min()) if n else np.inf
        label_max = float(y64.max()) if n else -np.inf
    summaries = summarize_block(X, weights, sketch_size)
    return ScanResult(n, summaries, weight_sum, weighted_label_sum, label_min, label_max,
                      class_weights)


def merge_scans(a, b, sketch_size):
    """Combine two ScanResults (a before b)."""
    if a.class_weights is None:
        classes = None
    else:
        classes = dict(a.class_weights)
        for label, weight in b.class_weights.items():
            classes[label] = classes.get(label, 0.0) + weight
    return ScanResult(
        a.n_rows + b.n_rows,
        merge_blocks(a.summaries, b.summaries, sketch_size),
        a.weight_sum + b.weight_sum,
        a.weighted_label_sum + b.weighted_label_sum,
        min(a.label_min, b.label_min),
        max(a.label_max, b.label_max),
        classes,
    )


@dataclass
class PartitionState:
    """Everything training keeps per partition.  Replaced, never mutated."""

    codes: np.ndarray            # (n_rows, n_features) uint8/uint16 bin codes
    label: np.ndarray            # (n_rows,) float32
    weight: np.ndarray           # (n_rows,) float32 or None
    margin: np.ndarray           # (n_rows,) float64 current prediction (margin space)
    grad: np.ndarray = None      # (n_rows,) float32 of the current tree
    hess: np.ndarray = None
    positions: np.ndarray = None  # (n_rows,) int32 node of each row in the current tree


def encode_labels(labels, classes):
    """Map labels to their index in the sorted ``classes`` array."""
    if labels.dtype.kind in "biuf" and classes.dtype.kind in "biuf":
        codes = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
        unseen = classes[codes] != labels
        if unseen.any():
            raise ValueError(f"y has label {labels[unseen][0]!r} that is not one of {classes.tolist()}")
        return codes
    index = {label: i for i, label in enumerate(classes.tolist())}
    try:
        return np.fromiter((index[v] for v in labels.tolist()), dtype=np.int64, count=len(labels))
    except KeyError as err:
        raise ValueError(f"y has label {err.args[0]!r} that is not one of {classes.tolist()}") from None


def bin_partition(x, y, w, index, mapper, base_margin, classes):
    """Second pass: bin one partition and set up its training state."""
    X, labels, weights = read_partition(x, y, w, index)
    if classes is not None:
        labels = encode_labels(labels, classes)
    return PartitionState(
        codes=mapper.transform(X),
        label=np.asarray(labels, dtype=np.float32),
        weight=None if weights is None else weights.astype(np.float32),
        margin=np.full(X.shape[0], base_margin, dtype=np.float64),
    )


@dataclass
class LevelStep:
    """The client's instructions for one pass over every partition."""

    # splits decided at the previous level, indexed by node id (feature -1: not split)
    split_feature: np.ndarray = None
    split_bin: np.ndarray = None
    default_left: np.ndarray = None
    left_child: np.ndarray = None
    right_child: np.ndarray = None
    missing_code: int = 0
    # set at the first level of a tree: the finished tree's leaf values (indexed by node
    # id, None for the very first tree) and the objective to recompute gradients with
    new_tree: bool = False
    leaf_values: np.ndarray = None
    objective: object = None
    # which nodes to build histograms for
    node_to_slot: np.ndarray = None
    n_slots: int = 0
    n_codes: int = 0

    def split_arrays(self):
        if self.split_feature is None:
            return no_splits(1)
        return (self.split_feature, self.split_bin, self.default_left, self.left_child,
                self.right_child)


def no_splits(n_nodes):
    """Split arrays saying that none of ``n_nodes`` nodes is split.

    The kernels index these arrays by node id without bounds checks, so they must cover
    every node id present in the positions.
    """
    return (np.full(n_nodes, -1, dtype=np.int32), np.zeros(n_nodes, dtype=np.int32),
            np.zeros(n_nodes, dtype=np.bool_), np.zeros(n_nodes, dtype=np.int32),
            np.zeros(n_nodes, dtype=np.int32))


def partition_step(state, step):
    """One level on one partition: move rows to their children, build histograms.

    At the first level of a tree, the previous tree's last splits are applied first,
    its leaf values added to the margin and the gradients recomputed; every row then
    starts at the root.
    """
    positions, margin, grad, hess = state.positions, state.margin, state.grad, state.hess
    splits = step.split_arrays()
    if step.new_tree:
        if step.leaf_values is not None:
            margin = add_leaf_values(state.codes, positions, *splits, step.missing_code,
                                     step.leaf_values, margin)
        grad, hess = step.objective.gradients(margin, state.label, state.weight)
        positions = np.zeros(state.codes.shape[0], dtype=np.int32)
        splits = no_splits(1)  # every row is at the root
    positions, hist = build_histograms(state.codes, grad, hess, positions, *splits,
                                       step.missing_code, step.node_to_slot, step.n_slots,
                                       step.n_codes)
    return replace(state, margin=margin, grad=grad, hess=hess, positions=positions), hist
