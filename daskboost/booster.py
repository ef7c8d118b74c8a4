"""The boosting loop, and the fitted model (``Booster``).

``train`` runs, on the active Dask scheduler:

1. the scan pass: per-partition sketches and label statistics, tree-reduced;
2. the binning pass: per-partition ``PartitionState`` (codes, labels, weights, margin),
   persisted where the partitions are;
3. for each round, one pass per tree level (``partition.partition_step``) whose
   histograms are tree-reduced to the client, where ``grower.TreeGrower`` decides the
   splits.  The last level's splits and the finished tree's leaf values travel with the
   next round's first pass, which updates the margins and gradients in the same task.

The client only ever holds sketches, histograms and trees: never rows.
"""

import json
import os
import tempfile

import numpy as np

from .binning import BinMapper
from .data import feature_block, partition_input
from .grower import TreeGrower
from .histogram import add_histograms, add_histograms_into
from .objectives import get_objective
from .partition import LevelStep, bin_partition, merge_scans, partition_step, scan_partition
from .runtime import Runtime, add_tree_reduction
from .tree import PackedForest, Tree

FORMAT_NAME = "daskboost"
FORMAT_VERSION = 1


def sketch_size_for(max_bin):
    """Entries kept per feature summary: 8 per bin, and always more than ``max_bin``."""
    return min(8 * max_bin, max(max_bin + 1, 2 ** 16))


class Booster:
    """A fitted ensemble: a constant start plus trees whose outputs add up in margin space."""

    def __init__(self, trees, base_margin, objective, n_features, feature_names=None):
        self.trees = list(trees)
        self.base_margin = float(base_margin)
        self.objective = objective
        self.n_features = int(n_features)
        self.feature_names = None if feature_names is None else list(feature_names)
        self._packed = None

    @property
    def packed(self):
        if self._packed is None:
            self._packed = PackedForest(self.trees)
        return self._packed

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_packed"] = None
        return state

    def predict_margin(self, X):
        """Margins for a float64 (n_rows, n_features) array."""
        margin = np.full(X.shape[0], self.base_margin, dtype=np.float64)
        self.packed.add_margin(np.ascontiguousarray(X, dtype=np.float64), margin)
        return margin

    def output(self, margin, output_margin=False):
        """Margins as they are, or mapped through the objective's link (e.g. sigmoid)."""
        return margin if output_margin else get_objective(self.objective).transform(margin)

    def predict(self, X, output_margin=False):
        return self.output(self.predict_margin(X), output_margin)

    # ---- serialisation --------------------------------------------------------------
    def to_dict(self):
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "objective": self.objective,
            "base_margin": self.base_margin,
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "trees": [tree.to_dict() for tree in self.trees],
        }

    @classmethod
    def from_dict(cls, data):
        if data.get("format") != FORMAT_NAME:
            raise ValueError(f"not a daskboost model: format={data.get('format')!r}")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"model format version {data.get('version')!r} is not supported "
                f"(this daskboost reads version {FORMAT_VERSION})")
        return cls([Tree.from_dict(t) for t in data["trees"]], data["base_margin"],
                   data["objective"], data["n_features"], data["feature_names"])


def write_json_atomically(path, payload):
    """Write JSON to ``path`` through a temporary file in the same directory."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".daskboost-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, sort_keys=True, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


# ---- training --------------------------------------------------------------------------

class TrainingData:
    """The result of the two passes over the input: states, bin mapper, label facts."""

    def __init__(self, states, mapper, scan, classes):
        self.states = states
        self.mapper = mapper
        self.scan = scan
        self.classes = classes


def prepare(runtime, data, params, objective, classifier):
    """Scan pass + binning pass.  Raises ValueError on bad labels/weights/empty data."""
    sketch_size = sketch_size_for(params["max_bin"])
    graph = dict(data.graph)
    name = runtime.new_name("scan")
    scan_keys = []
    for i in range(data.n_partitions):
        key = (name, i)
        w = None if data.w_keys is None else data.w_keys[i]
        graph[key] = (scan_partition, data.x_keys[i], data.y_keys[i], w, i, sketch_size, classifier)
        scan_keys.append(key)
    total_key = add_tree_reduction(graph, scan_keys, merge_scans, name, sketch_size)
    scan = runtime.compute(graph, [total_key])[0]
    if scan.n_rows == 0:
        raise ValueError("the training data has 0 rows")
    if scan.weight_sum <= 0:
        raise ValueError("sample_weight sums to 0; at least one row needs a positive weight")

    classes = None
    if classifier:
        labels = sorted(scan.class_weights)
        if len(labels) != 2:
            raise ValueError(
                f"DaskBoostClassifier needs exactly 2 classes in y for binary:logistic; "
                f"found {len(labels)}: {labels[:10]}")
        classes = np.array(labels)
        scan.weighted_label_sum = float(scan.class_weights[labels[1]])
    else:
        objective.check_labels(scan.label_min, scan.label_max)

    if params.get("base_score") is None:
        base_margin = objective.base_margin(scan.weighted_label_sum, scan.weight_sum)
    else:
        base_margin = objective.margin_from_base_score(params["base_score"])
    mapper = BinMapper.from_summaries(scan.summaries, params["max_bin"])

    name = runtime.new_name("bin")
    graph = dict(data.graph)
    state_keys = []
    for i in range(data.n_partitions):
        key = (name, i)
        w = None if data.w_keys is None else data.w_keys[i]
        graph[key] = (bin_partition, data.x_keys[i], data.y_keys[i], w, i, mapper, base_margin, classes)
        state_keys.append(key)
    states = runtime.persist(graph, state_keys)
    return TrainingData(states, mapper, scan, classes), base_margin


def train(params, X, y, sample_weight=None, classifier=False):
    """Fit a Booster; ``params`` are validated hyperparameters (see ``params.py``).

    Returns ``(booster, training_data_info)`` where the info holds the classes.
    """
    objective = get_objective(params["objective"])
    data = partition_input(X, y, sample_weight)
    with Runtime() as runtime:
        return _boost(runtime, params, data, objective, classifier)


def _boost(runtime, params, data, objective, classifier):
    prepared, base_margin = prepare(runtime, data, params, objective, classifier)
    mapper = prepared.mapper
    states = prepared.states
    trees = []
    pending = None        # splits of the previous pass, to apply at the next one
    leaf_values = None    # previous tree's node outputs, for the margin update
    for _ in range(params["n_estimators"]):
        grower = TreeGrower(mapper, params)
        new_tree = True
        while True:
            node_to_slot, n_slots = grower.build_request()
            step = _level_step(pending, mapper, node_to_slot, n_slots)
            if new_tree:
                step.new_tree, step.leaf_values, step.objective = True, leaf_values, objective
                new_tree = False
            states, hist = runtime.map_reduce(partition_step, states, step, add_histograms,
                                              add_histograms_into)
            pending = grower.receive(hist)
            if grower.finished:
                break
        trees.append(grower.to_tree())
        leaf_values = grower.leaf_values()
    booster = Booster(trees, base_margin, objective.name, data.n_features, data.feature_names)
    return booster, prepared


def _level_step(pending, mapper, node_to_slot, n_slots):
    step = LevelStep(node_to_slot=node_to_slot, n_slots=n_slots, n_codes=mapper.n_codes,
                     missing_code=mapper.missing_code)
    if pending is not None:
        (step.split_feature, step.split_bin, step.default_left,
         step.left_child, step.right_child) = pending
    return step


def predict_block(booster, block, output_margin):
    """Predictions for one partition (pandas DataFrame or numpy block)."""
    return booster.predict(feature_block(block), output_margin=output_margin)
