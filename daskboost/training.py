"""The boosting loop.

``train`` runs, on the active Dask scheduler:

1. the scan pass: per-partition sketches and label statistics, tree-reduced;
2. the binning pass: per-partition ``PartitionState`` (codes, labels, weights, margins),
   kept where the partitions are (eval sets are binned with the same cut points);
3. for each round, one pass per tree level (``partition.partition_step``) for the K
   trees of the round together; their histograms are tree-reduced and one
   ``grower.TreeGrower`` per tree decides the splits (``grow_levels``).  The last
   level's splits and the finished trees' leaf values travel with the next round's
   first pass, which updates the margins and gradients in the same task.  The level
   loop of a batch of rounds (``grow_rounds``, a generator of passes) runs where the
   runtime puts it (``run_loop``): in process on the client, on a cluster on every
   worker at once;
4. after each round, one pass per eval set adds the round's trees to the eval margins
   (kept per partition, so nothing is recomputed) and returns metric partial sums.  An
   eval set that is the training data itself (``data.same_input``) has no states of
   its own: its pass runs on the training states, whose margins it computes ahead for
   the next round (``training_eval_step``).

The client only ever holds sketches, histograms, metric sums and trees: never rows.
"""

import functools
import logging
import operator
import time
import uuid
import warnings
from dataclasses import dataclass, replace

import numpy as np

from .binning import BinMapper
from .blockstore import StoreConfig, StoreRef, block_rows_for, check_cache_dirs
from .callbacks import CallbackList, Patience
from .booster import Booster, write_model_file
from .data import categorical_features, checked_categories, partition_input, same_input
from .level_loop import binned_round, grow_rounds, pad_nodes, round_leaf_values
from .metrics import WholeRowsMetric, get_metric, partial_of
from .model_file import check_model, in_memory_checks_enabled
from .objectives import (AFT_DEFAULTS, OBJECTIVES, RANKING_DEFAULTS, CustomObjective,
                         LabelStats, check_scale_pos_weight, get_objective,
                         takes_label_columns)
from .params import (MAX_EXACT_VALUES, changed_during_fit, check_feature_weights,
                     resolve_constraints, settle_quantized_grad)
from .quantize import check_rows
from .histogram import add_histograms, add_histograms_into
from .partition import (LeafSummaryMerger, LevelStep, bin_partition, category_table,
                        hessian_self_summaries, hessian_summaries, leaf_residual_summaries,
                        margins_ahead, merge_scans, no_splits, partition_step, pass_row_bytes,
                        position_dtype, rebin_partition, rebuild_fit_partition, scan_partition,
                        scan_queries, store_whole, whole)
from .graphs import (StatesLost, add_tree_reduction, margin_input, per_partition_graph,
                     qid_input, raw_inputs)
from .query_groups import check_partition_bounds
from .runtime import make_runtime
from .sketch import merge_blocks, weighted_quantile
from .tree import add_binned_tree_outputs
from .verbosity import DaskBoostWarning, logger

log = logger()

OBJECTIVE_PARAMS = ("num_class", "huber_slope", "quantile_alpha", "tweedie_variance_power")
# objective parameters a model keeps only where they differ from these defaults (added
# after model files existed: a model that does not use them keeps its bytes)
OBJECTIVE_PARAMS_WHEN_CHANGED = {"scale_pos_weight": 1.0, **RANKING_DEFAULTS,
                                 **AFT_DEFAULTS}


def sketch_size_for(max_bin):
    """Entries kept per feature summary: 8 per bin, and always more than ``max_bin``."""
    return min(8 * max_bin, max(max_bin + 1, 2 ** 16))


def scan(runtime, data, params, classifier):
    """The first pass over the data; raises ValueError on empty or weightless data."""
    size = sketch_size_for(params.max_bin)
    name = runtime.new_name("scan")
    categorical = _categorical_spec(data, params)
    summarize_label = needs_label_summary(params.objective, classifier)
    graph, keys = per_partition_graph(
        data, name, lambda i: (scan_partition, *raw_inputs(data, i), i, size, classifier,
                               categorical, runtime.keep_raw(data, i), summarize_label,
                               qid_input(data, i)))
    total_key = add_tree_reduction(graph, keys, merge_scans, name, size, categorical)
    result = runtime.compute(graph, [total_key])[0]
    if result.n_rows == 0:
        raise ValueError("the training data has 0 rows")
    if result.weight_sum <= 0:
        raise ValueError("sample_weight is zero for every row (it sums to 0); at least one row "
                         "needs a positive weight")
    if result.partition_queries is not None:
        check_partition_bounds(result.partition_queries)
    return result


def needs_label_summary(objective, classifier):
    """Whether the scan sketches a regression's labels: only for an objective named in
    ``OBJECTIVES`` whose start reads their quantiles (``needs_label_summary``; a name
    not there is refused later, with its own message).  The sketch sorts the labels:
    ~1 ms of a 43,000-row fit's ~20 ms outside its rounds."""
    if classifier or callable(objective):
        return False
    try:
        objective_class = OBJECTIVES.get(objective or "reg:squarederror")
    except TypeError:  # (not a name: refused later)
        return True
    return objective_class is None or objective_class.needs_label_summary


def settle_for_data(params, objective, data, training_rows):
    """``params.settle_quantized_grad`` for ``data`` (``data.partition_input``: whether
    it has weights or categorical features) and ``training_rows`` rows a model trains on."""
    return settle_quantized_grad(params, objective, training_rows, data.w_keys is not None,
                                 bool(categorical_features(data.feature_types or [])))


def _categorical_spec(data, params):
    """(indices, names, max_cat) of the categorical features for the scan, or None."""
    features = categorical_features(data.feature_types or [])
    if not features:
        return None
    names = tuple(repr(data.feature_names[f]) if data.feature_names else str(f)
                  for f in features)
    return features, names, params.max_cat


def _as_stored(value):
    """A parameter as a model file holds it (several quantile levels: a list)."""
    return list(value) if isinstance(value, tuple) else value


def resolve_objective(params, scanned, classifier, known_classes=None):
    """The objective, the sorted classes (classifiers) and the label statistics.
    ``known_classes``: a classifier's classes when y need not hold them all (sorted and
    unique: ``partial_fit``'s); y's labels must be among them."""
    objective_params = {k: _as_stored(getattr(params, k)) for k in OBJECTIVE_PARAMS
                        if getattr(params, k) is not None}
    objective_params.update({k: getattr(params, k) for k, default
                             in OBJECTIVE_PARAMS_WHEN_CHANGED.items()
                             if getattr(params, k) != default})
    n_targets = 1 if scanned.target_scans is None else len(scanned.target_scans)
    name = params.objective
    if n_targets > 1 and not takes_label_columns(name):  # (a model file keeps it only then)
        objective_params["num_target"] = n_targets
    if isinstance(name, str) and name == "count:poisson":  # xgboost also scales the Poisson hessian by exp(max_delta_step)
        objective_params["max_delta_step"] = params.max_delta_step
    classes = None
    if classifier:
        labels = sorted(scanned.class_weights)
        if known_classes is not None:
            labels = _within_known_classes(labels, known_classes)
        continuous = [v for v in labels if isinstance(v, float) and not v.is_integer()]
        if continuous:  # scikit-learn's words (type_of_target), for a regression target
            raise ValueError(f"Unknown label type: continuous (y has non-integer labels such as "
                             f"{continuous[0]!r}); a classifier needs discrete classes: use "
                             "DaskBoostRegressor for a continuous target")
        n_classes = len(labels)
        if n_classes < 2:
            raise ValueError(f"y has only one class ({labels[0]!r}); a classifier needs at "
                             "least 2")
        name = name or ("binary:logistic" if n_classes == 2 else "multi:softprob")
        if callable(name):
            objective_params["num_class"] = n_classes
        elif name.startswith("binary:") and n_classes != 2:
            raise ValueError(f"objective={name!r} needs exactly 2 classes; y has {n_classes}: "
                             f"{labels[:10]}")
        if not callable(name) and name.startswith("multi:"):
            given = objective_params.get("num_class")
            if given is not None and given != n_classes:
                raise ValueError(f"num_class={given} does not match the {n_classes} classes in y")
            objective_params["num_class"] = n_classes
        classes = np.array(labels)
        if params.class_weight is not None:
            objective_params["class_weight"] = class_factors(params.class_weight, labels,
                                                             scanned)
    else:
        name = name or "reg:squarederror"
        if params.class_weight is not None:
            raise ValueError(f"class_weight={params.class_weight!r:.120} weighs classes: it "
                             "needs a classifier (DaskBoostClassifier, or cv on class labels)")
    check_scale_pos_weight(name, params.scale_pos_weight)
    if callable(name) and params.class_weight is not None:
        raise ValueError("class_weight weighs the built-in objectives' gradients; a custom "
                         "objective does not use it (weigh its gradients itself)")
    stats = label_stats(scanned, labels if classifier else None)
    if callable(name):
        objective = CustomObjective(name, objective_params.get("num_class"), classifier,
                                    objective_params.get("num_target", 1))
    else:
        objective = get_objective(name, **objective_params)
    objective.check_labels(stats)
    if getattr(objective, "ranks_queries", False):
        objective.set_queries(stats, scanned.partition_rows)
    return objective, objective_params, classes, stats


def _a_known_class_is_absent(stats, known_classes):
    """Whether one of ``partial_fit``'s ``classes`` has no weight in y (``stats``)."""
    return known_classes is not None and stats.class_weights is not None and any(
        not weight > 0 for weight in stats.class_weights.values())


def _within_known_classes(labels, known_classes):
    """``known_classes`` as the classifier's labels, once y's ``labels`` are among them."""
    known = np.asarray(known_classes).tolist()
    members = set(known)
    outside = [label for label in labels if label not in members]
    if outside:
        raise ValueError(f"y has the label {outside[0]!r}, which is not one of classes="
                         f"{known!r:.200}")
    return known


def class_factors(class_weight, labels, scanned):
    """scikit-learn's ``class_weight`` (``params.class_weight``) as one factor per class
    index of the sorted ``labels``: "balanced" gives ``n_rows / (n_classes * rows of the
    class)``; (label, factor) pairs give their factors, 1 for the classes not named."""
    if class_weight == "balanced":
        counts = {}
        for partition in scanned.partition_class_counts:
            for label, rows in partition.items():
                counts[label] = counts.get(label, 0) + rows
        return [scanned.n_rows / (len(labels) * counts[label]) for label in labels]
    given = dict(class_weight)
    known = set(labels)
    unknown = [label for label in given if label not in known]
    if unknown:
        raise ValueError(f"class_weight names classes that are not in y: {unknown[:10]!r}; "
                         f"the classes are {labels[:10]!r}")
    return [float(given.get(label, 1.0)) for label in labels]


def label_stats(scanned, labels=None):
    """The ``LabelStats`` of scanned labels (a ``ScanResult``); ``labels``: a
    classifier's sorted classes (class ``i`` is the label ``labels[i]``), else None."""
    if labels is None:
        queries = scanned.partition_queries
        targets = None if scanned.target_scans is None else tuple(
            label_stats(target) for target in scanned.target_scans)
        return LabelStats(scanned.n_rows, scanned.weight_sum, scanned.weighted_label_sum,
                          scanned.label_min, scanned.label_max, scanned.all_integer,
                          scanned.label_summary, None, scanned.positive_weight,
                          scanned.weighted_log1p_label_sum,
                          None if queries is None else tuple(q.count for q in queries),
                          0.0 if queries is None else sum(q.weight_sum for q in queries),
                          targets, scanned.crossed_bounds)
    weights = {i: float(scanned.class_weights.get(label, 0.0)) for i, label in enumerate(labels)}
    return LabelStats(scanned.n_rows, scanned.weight_sum,
                      float(sum(i * w for i, w in weights.items())), 0.0,
                      float(len(labels) - 1), True, None, weights, weights.get(1, 0.0))


def start_margin(objective, stats, params):
    """The (K,) starting margin: ``base_score`` if given (a number: mapped to the margin
    of every output; a vector: output k's margin from its k-th number), else the
    objective's constant start on the labels (``stats``)."""
    if params.base_score is None:
        base_margin = objective.base_margin(stats)
    elif isinstance(params.base_score, tuple):
        n_outputs = objective.n_outputs()
        if len(params.base_score) != n_outputs:
            raise ValueError(f"base_score has {len(params.base_score)} values; the model has "
                             f"{n_outputs} output{'s' if n_outputs > 1 else ''} (give one "
                             "value per output)")
        base_margin = [objective.margin_from_base_score(b)[k]
                       for k, b in enumerate(params.base_score)]
    else:
        base_margin = objective.margin_from_base_score(params.base_score)
    return np.atleast_1d(np.asarray(base_margin, dtype=np.float64))


class EvalSet:
    """An eval set binned with the training cut points, with margins kept per partition;
    ``states`` None: the training data itself (evaluated on the training states)."""

    def __init__(self, name, states, metrics):
        self.name = name
        self.states = states
        self.metrics = metrics


@dataclass(frozen=True)
class EvalStep:
    """The pass over an eval set after a round: the round's trees in bin space
    (``_binned_round``), the code of missing values, the metrics and the objective."""

    trees: tuple
    missing_code: int
    metrics: list
    objective: object
    round: int
    cat_table: object = None  # categorical right sets (``histogram.build_histograms``)


def eval_step(state, step):
    """Add round ``step.round``'s trees to one eval partition's margins (unless they are
    in already: a round grown again after a lost worker); metric partial sums."""
    margin = whole(state.margin)  # (held in row blocks: one partition at a time)
    if state.rounds == step.round:
        add_binned_tree_outputs(state.codes, *step.trees, step.missing_code, margin,
                                in_place=True, cat_table=step.cat_table)
        store_whole(state.margin, margin)
        state.rounds = step.round + 1
    label, weight = whole(state.label), whole(state.weight)
    partials = tuple(partial_of(m, label, margin, weight, step.objective, state.groups)
                     for m in step.metrics)
    return state, partials


@dataclass(frozen=True)
class TrainingEvalStep:
    """The pass over the training states after a round, for an eval set that is the
    training data: ``finish`` (``finish_step``) adds the round's trees to a copy of the
    margins; ``metrics`` of ``objective``."""

    finish: object
    metrics: list
    objective: object


def training_eval_step(state, step):
    """Metric partial sums of the training rows after the round, from their margins
    with the round's trees (``partition.margins_ahead``: kept for the next round's
    first pass, the state's own margins left as they are).  The same margins, row for
    row, as an eval set of the same rows would hold: the same trees' leaf values added
    to the same starting margins in the same order."""
    margin = margins_ahead(state, step.finish)
    label, weight = whole(state.label), whole(state.weight)
    return state, tuple(partial_of(m, label, margin, weight, step.objective, state.groups)
                        for m in step.metrics)


class _PartialsCombiner:
    """Picklable combine function for a tuple of metric partials."""

    def __init__(self, metrics):
        self.metrics = metrics

    def __call__(self, a, b):
        return tuple(m.combine(x, y) for m, x, y in zip(self.metrics, a, b))


def _metric_names(params, objective):
    """The metrics to evaluate: ``eval_metric``'s, else the objective's default; a metric
    that comes ``beside_default`` (xgboost's native ``custom_metric``) after the default
    when it is all ``eval_metric`` holds."""
    names = params.eval_metric
    names = [] if names is None else list(names) if isinstance(names, (list, tuple)) \
        else [names]
    if all(getattr(name, "beside_default", False) for name in names):
        return [objective.default_metric] + names
    return names


def check_eval_queries(runtime, data, evals, metrics, eval_names=None):
    """Before any binning: a metric that ranks within queries needs each eval set's
    query ids (``None`` in ``evals``: the training data, which the scan checked), and an
    eval set's queries must each be in one partition (a pass over its query ids and
    weights, ``partition.scan_queries``)."""
    ranking = [m.name for m in metrics if m.ranks_queries]
    for i, e in enumerate(evals):
        name = eval_names[i] if eval_names else f"eval_set[{i}]"
        source = data if e is None else e
        if ranking and source.q_keys is None:
            raise ValueError(f"eval_metric={ranking[0]!r} ranks the rows of each query: "
                             f"{name} needs its query ids (eval_qid / eval_group, or a 'qid' "
                             "column)")
        if e is None or e.q_keys is None:
            continue
        graph, keys = per_partition_graph(
            e, runtime.new_name("queries"),
            lambda j: (scan_queries, qid_input(e, j), raw_inputs(e, j)[2], j))
        total = add_tree_reduction(graph, keys, operator.add, runtime.new_name("queries"))
        try:
            check_partition_bounds(runtime.compute(graph, [total])[0])
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None


def resolve_metrics(params, objective, runtime):
    """The fit's metrics (``_metric_names``).  A metric function gathers its eval set's
    rows in this process every round (``WholeRowsMetric``): with a ``memory_budget``
    set (out of core), a DaskBoostWarning says that this memory grows with the rows."""
    metrics = [get_metric(name, objective, params.quantile_alpha, params.huber_slope)
               for name in _metric_names(params, objective)]
    gathering = [m.name for m in metrics if isinstance(m, WholeRowsMetric)]
    if gathering and runtime.store_config.memory_budget is not None:
        warnings.warn(f"the metric function {gathering[0]!r} is called on all of an eval "
                      "set's rows at once: each round they come to this process, so its memory "
                      "grows with the eval sets' rows whatever memory_budget says (a built-in "
                      "metric name keeps it flat)", DaskBoostWarning, stacklevel=2)
    return metrics


def train(params, X, y, sample_weight=None, classifier=False, eval_set=None,
          sample_weight_eval_set=None, previous=None, base_margin=None,
          base_margin_eval_set=None, progress=None, checkpoint=None, store_config=None,
          callbacks=None, eval_names=None, known_classes=None, feature_names=None,
          qid=None, qid_eval_set=None):
    """Fit a Booster; ``params`` are validated hyperparameters (see ``params.py``).

    ``store_config``: a ``blockstore.StoreConfig`` (memory budget, cache dirs) for the
    binned blocks; default: "auto" budget in the system temp dir.

    ``previous``: a Booster to continue (its trees come first; its predictions are the
    starting margins).  ``checkpoint``: a ``Checkpoint`` (the model written every
    ``every`` rounds).  ``callbacks``: objects with xgboost's ``TrainingCallback``
    methods (see ``callbacks``).  ``eval_names``: the eval sets' names in
    ``evals_result`` (default ``validation_<i>``).  ``known_classes``: a classifier's
    classes when y need not hold them all (``resolve_objective``).  ``feature_names``: the
    features' names when X holds none (``partition_input``).  ``qid`` (and
    ``qid_eval_set``): each row's query id, for ranking (``query_groups``).  Returns
    ``(booster, info)``: info has ``classes`` and ``evals_result``.
    """
    callbacks = CallbackList(callbacks)
    types = (params.enable_categorical, params.feature_types)
    data = partition_input(X, y, sample_weight, base_margin, *types, feature_names, qid)
    check_feature_weights(params.feature_weights, data.n_features)
    # split constraints name features: checked on X's features before any pass
    params = resolve_constraints(params, data.feature_names, data.n_features,
                                 data.feature_types)
    n_evals = len(eval_set or [])
    # an eval set that is the training data (the same X, y, weights and base margins)
    # is evaluated on the training states: None here
    evals = [None if _is_training_data((Xe, ye, we, me, qe),
                                       (X, y, sample_weight, base_margin, qid))
             else partition_input(Xe, ye, we, me, *types, qid=qe) for (Xe, ye), we, me, qe in
             zip(eval_set or [], sample_weight_eval_set or [None] * n_evals,
                 base_margin_eval_set or [None] * n_evals, qid_eval_set or [None] * n_evals)]
    for i, e in enumerate(evals):
        if e is not None:
            _check_eval_types(data, e, i)
    if store_config is None:
        store_config = StoreConfig(None, tuple(check_cache_dirs(None)))
    with make_runtime(uuid.uuid4().hex[:12], store_config, data.in_memory) as runtime:
        return _train(runtime, params, data, evals, classifier, previous, progress, checkpoint,
                      callbacks, eval_names, known_classes)


def _is_training_data(eval_inputs, training_inputs):
    """Whether an eval set's (X, y, weights, base margins, query ids) are the training
    ones (``data.same_input``, each)."""
    return all(same_input(a, b) for a, b in zip(eval_inputs, training_inputs))


def _check_eval_types(data, evals, index):
    """An eval set's features must have the training features' types (issue 13)."""
    for f, (ours, theirs) in enumerate(zip(data.feature_types, evals.feature_types)):
        if ours != theirs:
            name = repr(data.feature_names[f]) if data.feature_names else str(f)
            kinds = {"q": "numeric", "c": "categorical"}
            raise TypeError(f"feature {name} is {kinds[theirs]} in eval_set[{index}] but "
                            f"{kinds[ours]} in X")


class TrainingInfo:
    def __init__(self, classes, evals_result):
        self.classes = classes
        self.evals_result = evals_result


def _continued_dictionaries(previous, data, categories, max_cat):
    """The dictionaries of a continued fit: for each categorical feature the sorted
    union of the model's categories and the new data's, so the new trees know the new
    categories and the model's trees keep theirs (issue 13)."""
    theirs = set(previous.categories)
    ours = set(categorical_features(data.feature_types or []))
    if theirs != ours:
        f = min(theirs ^ ours)
        name = repr(data.feature_names[f]) if data.feature_names else str(f)
        kinds = ("categorical", "numeric") if f in theirs else ("numeric", "categorical")
        raise TypeError(f"feature {name} is {kinds[0]} in xgb_model but {kinds[1]} in X; "
                        "continuing a fit needs the same feature types")
    merged = {}
    for f in sorted(ours):
        name = repr(data.feature_names[f]) if data.feature_names else str(f)
        merged[f] = checked_categories(previous.categories[f] + categories[f], name, max_cat)
    return merged


def _check_previous(previous, objective, data, parallel_trees):
    if previous.n_outputs != objective.n_outputs() or previous.objective != objective.name:
        raise ValueError(
            f"xgb_model was trained with objective={previous.objective!r} and "
            f"{previous.n_outputs} output(s); this fit uses objective={objective.name!r} with "
            f"{objective.n_outputs()}")
    if previous.parallel_trees != parallel_trees:
        raise ValueError(f"xgb_model was trained with num_parallel_tree="
                         f"{previous.parallel_trees}; this fit uses num_parallel_tree="
                         f"{parallel_trees} (a round's trees must be alike)")
    if previous.n_features != data.n_features or (
            previous.feature_names is not None and data.feature_names is not None
            and previous.feature_names != data.feature_names):
        raise ValueError(f"xgb_model was trained on the features {previous.feature_names or previous.n_features}; "
                         f"X has {data.feature_names or data.n_features}")


@dataclass(frozen=True)
class Checkpoint:
    """Write the model so far to ``path`` every ``every`` rounds (atomically)."""

    path: str
    every: int


def _trained_model(trees, base_margin, objective, data, objective_params, best=(None, None),
                   categories=None, check=True, attributes=None, parallel_trees=1):
    """The Booster of the trees grown so far; with ``DASKBOOST_CHECK_MODELS=1`` (the test
    suite) it passes the checks a model file passes, so the kernels' assumptions hold
    for models built in memory too."""
    booster = Booster(trees, base_margin, objective.name, data.n_features, data.feature_names,
                      objective_params, best_iteration=best[0], best_score=best[1],
                      feature_types=data.feature_types, categories=categories,
                      attributes=attributes, parallel_trees=parallel_trees)
    if check and in_memory_checks_enabled():
        check_model(booster, "the trained model")
    return booster


def _write_checkpoint(path, trees, base_margin, objective, data, objective_params,
                      categories=None, parallel_trees=1):
    """The model so far, written atomically (a crash never leaves half a file)."""
    booster = _trained_model(trees, base_margin, objective, data, objective_params,
                             categories=categories, parallel_trees=parallel_trees)
    write_model_file(path, booster.to_dict())


def _train(runtime, params, data, evals, classifier, previous=None, progress=None,
           checkpoint=None, callbacks=CallbackList(None), eval_names=None, known_classes=None):
    scanned = scan(runtime, data, params, classifier)
    objective, objective_params, classes, stats = resolve_objective(params, scanned, classifier,
                                                                    known_classes)
    params = settle_for_data(params, objective, data, scanned.n_rows)
    check_scanned(scanned, params, data.feature_names)
    categories = scanned.categories
    if previous is not None:
        _check_previous(previous, objective, data, params.num_parallel_tree)
        categories = _continued_dictionaries(previous, data, categories, params.max_cat)
        previous = previous.recoded(categories)
        base_margin = np.atleast_1d(np.asarray(previous.base_margin, dtype=np.float64))
    else:
        base_margin = start_margin(objective, stats, params)
        if params.base_score is None and _a_known_class_is_absent(stats, known_classes):
            # (from the labels' frequencies, that class would start at the probability
            # floor, and the Newton steps on its rows, whose hessians are then near 0,
            # would overshoot for rounds: it starts from equal probabilities instead)
            base_margin = np.zeros_like(base_margin)
    metrics = resolve_metrics(params, objective, runtime)
    check_eval_queries(runtime, data, evals, metrics, eval_names)
    mapper = BinMapper.from_summaries(scanned.summaries, params.max_bin, categories)
    _log_settled(params, objective, base_margin, data, scanned.n_rows, runtime)
    offsets = row_offsets(scanned)
    fit = _Boosting(runtime, params, data, evals, objective, mapper, metrics,
                    (base_margin, classes, previous), offsets, every_round=bool(callbacks),
                    n_rows=scanned.n_rows, eval_names=eval_names)
    # {eval set: {metric: values}}, a metric's entry made with its first value (a native
    # custom metric's name is known only then: ``dmatrix.NativeMetric``)
    evals_result = {e.name: {} for e in fit.eval_sets}

    # what callbacks see: one Booster, its trees the trees so far (unchecked: cheap);
    # what they set on it (``set_attr``, ``set_param``) holds for the rest of the fit
    view = _trained_model(fit.trees, base_margin, objective, data, objective_params,
                          categories=mapper.categories, check=False,
                          parallel_trees=params.num_parallel_tree)
    view._fit_in_progress = fit.change_param

    def model_so_far():
        view.trees, view._packed = list(fit.trees), {}
        return view

    first_round = 0 if previous is None else previous.n_rounds

    def stop_before(round_):  # (callbacks count the epochs of this call from 0, as xgboost)
        return bool(callbacks) and callbacks.before_iteration(
            model_so_far(), round_ - first_round, evals_result)

    if callbacks:
        callbacks.before_training(model_so_far())
    stopping = None  # early_stopping_rounds: on the last eval set's last metric
    if fit.eval_sets and params.early_stopping_rounds:
        watched = fit.eval_sets[-1]
        stopping = Patience(params.early_stopping_rounds, watched.metrics[-1].higher_is_better)
    end = first_round + params.n_estimators
    clock = RoundClock()
    for round_, scores in _each_round(fit, first_round, end, progress, checkpoint,
                                      stop_before):
        clock.round_done(round_, ((f"{name}-{metric}", value) for name, values in scores.items()
                                  for metric, value in values.items()))
        for name, values in scores.items():
            for metric_name, value in values.items():
                evals_result[name].setdefault(metric_name, []).append(value)
        if progress is not None:
            progress(round_ - first_round + 1, params.n_estimators, evals_result)
        if checkpoint is not None and (round_ + 1) % checkpoint.every == 0:
            _write_checkpoint(checkpoint.path, fit.trees, base_margin, objective, data,
                              objective_params, mapper.categories, params.num_parallel_tree)
        asked_to_stop = bool(callbacks) and callbacks.after_iteration(
            model_so_far(), round_ - first_round, evals_result)
        if stopping is not None:
            if stopping.update(round_, evals_result[watched.name][watched.metrics[-1].name][-1]):
                break
        if asked_to_stop:
            break
    best = stopping.best if stopping is not None else (None, None)
    if best[0] is None:  # a callback's early stopping (xgboost's ``EarlyStopping``)
        best = (view.best_iteration, view.best_score)
    booster = _trained_model(fit.trees, base_margin, objective, data, objective_params, best,
                             mapper.categories, attributes=view._attributes,
                             parallel_trees=params.num_parallel_tree)
    clock.finished(booster.n_rounds - first_round, best)
    if callbacks:
        booster = callbacks.after_training(booster)
    return booster, TrainingInfo(classes, evals_result)


def _log_settled(params, objective, base_margin, data, n_rows, runtime, prefix=""):
    """At INFO (``verbosity=2``): what the fit settled from the data and the defaults."""
    if not log.isEnabledFor(logging.INFO):
        return
    budget = runtime.store_config.memory_budget
    log.info(prefix + "%d rows x %d features in %d partitions; objective %s, start margin %s; "
             "tree_method %s, max_bin %d, max_depth %d; quantized gradients %s; "
             "memory budget %s", n_rows, data.n_features, data.n_partitions,
             getattr(objective, "name", objective),
             np.array2string(np.atleast_1d(base_margin), precision=6),
             params.tree_method, params.max_bin, params.max_depth,
             "on" if params.quantized_grad else "off",
             "auto (half the available memory)" if budget is None else f"{budget} bytes")


class RoundClock:
    """The rounds' times on the ``"daskboost"`` logger: each round at DEBUG
    (``verbosity=3``), the whole at INFO (``verbosity=2``)."""

    def __init__(self):
        self.started = self.last = time.perf_counter()

    def round_done(self, round_, named_values):
        if log.isEnabledFor(logging.DEBUG):
            now = time.perf_counter()
            log.debug("round %d: %.3f s%s", round_, now - self.last,
                      "".join(f" {name}={value:.6g}" for name, value in named_values))
            self.last = now

    def finished(self, rounds, best=(None, None)):
        log.info("%d rounds in %.2f s%s", rounds, time.perf_counter() - self.started,
                 "" if best[0] is None else f"; best iteration {best[0]} ({best[1]:.6g})")


MAX_RECOVERIES = 10  # lost-worker recoveries per round before giving up


def _each_round(fit, first_round, end, progress, checkpoint, stop_before=None):
    """``(round, scores)`` of every round, grown as many at a time as
    ``fit.rounds_per_call`` allows; ``stop_before(round)`` True ends it before that
    round."""
    round_ = first_round
    while round_ < end:
        if stop_before is not None and stop_before(round_):
            return
        count = fit.rounds_per_call(round_, end, progress, checkpoint)
        for scores in fit.boost_rounds(round_, count):
            yield round_, scores
            round_ += 1


class _Boosting:
    """The training states and the model so far; grows the trees of one round.

    What a round leaves for the next: ``pending`` (K, n_nodes) splits of the last pass,
    applied by the next pass, and ``leaf_values`` (K, n_nodes) node outputs of the
    round's trees, added to the margins by the next round's first pass.
    """

    # how a training partition's state is built from the raw data, and rebuilt after a
    # lost worker (cross-validation grows its folds with states of its own: ``fold_states``)
    bin_state = staticmethod(bin_partition)
    rebuild_state = staticmethod(rebuild_fit_partition)

    def __init__(self, runtime, params, data, evals, objective, mapper, metrics, start,
                 offsets, every_round=False, n_rows=0, eval_names=None):
        self.runtime, self.params, self.data, self.evals = runtime, params, data, evals
        self.every_round = every_round  # the client acts after every round (callbacks)
        self.objective, self.mapper = objective, mapper
        self.start = start  # (base_margin, classes, previous) of bin_partition
        self.offsets = offsets
        if not isinstance(params.quantized_grad, bool):  # "auto" is truthy: never past here
            raise RuntimeError("quantized_grad must be settled for the data before training "
                               f"(params.settle_quantized_grad); got {params.quantized_grad!r}")
        # the budget's parts for the arrays every pass reads and for the codes, of the
        # rows each process holds
        row_bytes = pass_row_bytes(objective.n_outputs(), params.max_nodes,
                                   data.w_keys is not None,
                                   params.quantized_grad and params.num_grad_quant_bins)
        processes = runtime.state_processes()
        config = runtime.store_config
        self.store = StoreRef(runtime.fit_id, replace(
            config, pass_bytes=n_rows * row_bytes // processes,
            code_rows=-(-n_rows // processes),
            block_rows=config.block_rows or block_rows_for(
                len(mapper.cuts) * np.dtype(mapper.dtype).itemsize)))
        previous = start[2]
        self.n_previous_trees = 0 if previous is None else len(previous.trees)
        self.trees = [] if previous is None else list(previous.trees)
        self.pending = None
        self.leaf_values = None
        # num_parallel_tree > 1: the last boosting round's copies of its trees, for the
        # next round's first pass (``level_loop.grow_rounds``); pending and leaf_values
        # are then unused
        self.deferred = None
        self.states = runtime.create_states("train", data, self.bin_state,
                                            self._bin_args(), self._last_args(data, offsets))
        names = eval_names or [f"validation_{i}" for i in range(len(evals))]
        self.eval_sets = [
            EvalSet(names[i], None if e is None else runtime.create_states(
                f"validation_{i}", e, bin_partition, self._bin_args(),
                self._last_args(e, np.zeros(e.n_partitions, np.int64))), metrics)
            for i, e in enumerate(evals)]

    def _bin_args(self):
        return (self.mapper, *self.start, self.store)

    def change_param(self, name, value):
        """A callback's ``set_param``: parameter ``name`` (``Booster.TRAINING_PARAM_
        CHANGES``) is ``value`` for the rounds still to grow (each round's growers take
        the parameters when the round starts)."""
        self.params = replace(self.params, **{name: changed_during_fit(name, value)})

    @staticmethod
    def _last_args(data, offsets, extra=()):
        """Per partition: global row offset, refs to its base margins and its query ids
        (or None), extra."""
        return [(int(o), margin_input(data, i), qid_input(data, i), *extra)
                for i, o in enumerate(offsets)]

    def rounds_per_call(self, round_, end, progress, checkpoint):
        """How many rounds to grow in one go from ``round_``: all the rounds left (up to
        the next checkpoint) when the client has nothing to do between rounds (no eval
        set, progress display, callbacks, approx re-binning, trimming or leaf refit);
        else one.
        On a cluster the workers then grow them without a client round trip per round.
        """
        p = self.params
        if (self.eval_sets or progress is not None or self.every_round
                or p.tree_method == "approx"
                or p.trim_fraction or self.objective.leaf_quantiles is not None):
            return 1
        count = end - round_
        if checkpoint is not None:
            count = min(count, checkpoint.every - round_ % checkpoint.every)
        return count

    def boost_rounds(self, first, count):
        """Grow rounds ``first .. first + count - 1``; returns each round's
        {eval set: {metric: value}}.

        A worker lost on the way (``StatesLost``) is recovered from: the lost states
        are rebuilt as they were at the start of ``first`` (all the states if several
        rounds were in flight: the others may have moved on) and the rounds are grown
        again, which is deterministic, so the trees are the same.
        """
        at_start = (self.pending, self.leaf_values, self.deferred, self.mapper)
        n_trees = len(self.trees)
        for attempt in range(MAX_RECOVERIES + 1):
            try:
                return self._grow_rounds(first, count)
            except StatesLost:
                if attempt == MAX_RECOVERIES:
                    raise
                self.pending, self.leaf_values, self.deferred, self.mapper = at_start
                del self.trees[n_trees:]  # (a round's trees, kept before it was lost)
                self.runtime.recover(
                    lambda states: self._rebuild_args(states, first * self.copies),
                    everything=count > 1 or self.copies > 1)

    @property
    def copies(self):
        """The copies of each tree a boosting round grows (``num_parallel_tree``): the
        level loop's rounds per boosting round."""
        return self.params.num_parallel_tree

    def _rebuild_args(self, states, round_):
        """How to rebuild a lost partition of ``states`` at the start of the level
        loop's round ``round_`` (a boosting round's first copy): bin
        it with the current cut points and add the trees of the finished rounds of this
        fit to its starting margins (the same additions, in the same order, as training
        made)."""
        new_trees = self.trees[self.n_previous_trees:]
        if states is self.states:
            return (self.rebuild_state, self._bin_args(),
                    self._last_args(self.data, self.offsets, (new_trees, round_)))
        data = self.evals[[e.states for e in self.eval_sets].index(states)]
        return (rebuild_fit_partition, self._bin_args(),
                self._last_args(data, np.zeros(len(states), np.int64), (new_trees, round_)))

    def _grow_rounds(self, first, count):
        runtime, params, objective = self.runtime, self.params, self.objective
        P = self.copies
        trim = None
        # approx, trimming and leaf refits come with one round per call (rounds_per_call)
        if params.tree_method == "approx" or params.trim_fraction:
            self.states = _finish_round(runtime, self.states, self.pending, self.leaf_values,
                                        objective, self.mapper, params, first * P,
                                        self.deferred)
            self.pending = self.leaf_values = self.deferred = None
            if params.tree_method == "approx":
                self.states, self.mapper, self.eval_sets = _propose_again(
                    runtime, self.data, self.evals, self.states, self.eval_sets, self.mapper,
                    params, self.store)
            if params.trim_fraction:
                trim = _trim_thresholds(runtime, self.states, params)
        rounds = range(first * P, (first + count) * P)  # (P copies a boosting round)
        # adaptive leaves are refitted to each tree's rows before the next tree grows: a
        # boosting round's copies then grow one call of the level loop each
        calls = [rounds] if objective.leaf_quantiles is None else [[r] for r in rounds]
        all_scores = []
        copies = []  # P > 1: the boosting round's copies so far, binned
        for call in calls:
            all_scores += self._grow_call(call, trim, copies)
        return all_scores

    def _grow_call(self, rounds, trim, copies):
        """Grow the level loop's ``rounds`` in one call of it; each round's scores
        (with ``num_parallel_tree``: a boosting round's, after its last copy;
        ``copies``: its copies so far, binned, added to)."""
        runtime, params, objective, P = self.runtime, self.params, self.objective, self.copies
        # the level loop runs where the runtime puts it: on a cluster, on every worker
        self.states, grown = runtime.run_loop(
            self.states, functools.partial(grow_rounds, self.mapper, params,
                                           objective, rounds, self.pending, self.leaf_values,
                                           trim, runtime.grows_in_place(self.states),
                                           self.deferred),
            partition_step, add_histograms, add_histograms_into)
        all_scores = []
        for round_, (growers, pending) in zip(rounds, grown):
            if objective.leaf_quantiles is not None:
                pending = self._refit_leaves(growers, pending)
            if P == 1:
                all_scores.append(self._evaluate(growers, round_, pending))
            else:
                copies.append(binned_round(growers))
                last_copy = round_ % P == P - 1
                scores = self._evaluate(growers, round_, pending,
                                        tuple(copies) if last_copy else None)
                if last_copy:
                    all_scores.append(scores)
                    self.deferred = tuple(copies)
                    copies.clear()
            # the round is done: only now does it change what the next round starts from
            self.trees.extend(g.to_tree() for g in growers)
            if P == 1:
                self.pending = pending
                self.leaf_values = round_leaf_values(growers)
        return all_scores

    def _refit_leaves(self, growers, pending):
        """Adaptive leaves (``_refit_leaves``); returns the splits left pending (none)."""
        self.states, pending = _refit_leaves(self.runtime, self.states, pending, growers,
                                             self.objective, self.mapper, self.params)
        return pending

    def _finish_of(self, growers, round_, pending, copies=None):
        """The step that finishes round ``round_`` on the training states (its last
        ``pending`` splits and its trees' leaf values; ``copies``: a boosted random
        forest's round, binned), for a pass after the round (``finish_step``)."""
        if copies is not None:
            return finish_step(None, None, self.objective, self.mapper, self.params,
                               round_ + 1, copies)
        return finish_step(pending, round_leaf_values(growers), self.objective, self.mapper,
                           self.params, round_ + 1)

    def _evaluate(self, growers, round_, pending, copies=None):
        """Add the round's trees to the eval margins; {eval set: {metric: value}}.
        (``pending``: the round's last splits, not applied to the training rows yet.)
        With ``num_parallel_tree`` P > 1 a round here is one copy of a boosting round's
        trees: the eval sets' margins take each copy's trees, and the metrics are
        computed after the last (``copies``: the boosting round's copies, binned; None
        before the last)."""
        scores = {}
        if not self.eval_sets:
            return scores
        between_copies = self.copies > 1 and copies is None
        binned = table = None
        for e in self.eval_sets:
            if e.states is None and between_copies:
                continue  # (the training rows' margins take the copies at the round's end)
            if e.states is None:  # the training data: from the training states' margins
                self.states, partials = self.runtime.map_reduce(
                    training_eval_step, self.states,
                    TrainingEvalStep(self._finish_of(growers, round_, pending, copies),
                                     e.metrics, self.objective),
                    _PartialsCombiner(e.metrics))
            else:
                if binned is None:
                    binned, table = binned_round(growers)
                e.states, partials = self.runtime.map_reduce(
                    eval_step, e.states,
                    EvalStep(binned, self.mapper.missing_code,
                             [] if between_copies else e.metrics, self.objective, round_,
                             table),
                    _PartialsCombiner(e.metrics))
            if between_copies:
                continue
            values = [float(m.finalize(total)) for m, total in zip(e.metrics, partials)]
            scores[e.name] = {m.name: value for m, value in zip(e.metrics, values)}
        return scores


def row_offsets(scanned):
    """The global index of each partition's first row (row sampling and cross-validation
    folds are keyed on global row indices)."""
    return np.concatenate([[0], np.cumsum(scanned.partition_rows)[:-1]]).astype(np.int64)


def check_scanned(scanned, params, feature_names):
    """What the scan pass tells against the parameters, checked before any other pass."""
    if params.tree_method == "exact":
        check_exact(scanned.summaries, feature_names)
    if params.quantized_grad:
        check_rows(scanned.n_rows, params.num_grad_quant_bins)


def check_exact(summaries, feature_names):
    """tree_method="exact": every distinct value must be a candidate (one bin each)."""
    for f, summary in enumerate(summaries):
        if not summary.is_exact or len(summary) > MAX_EXACT_VALUES:
            name = repr(feature_names[f]) if feature_names else str(f)
            raise ValueError(
                f"tree_method='exact' considers every distinct value of a feature, up to "
                f"{MAX_EXACT_VALUES}; feature {name} has more. Use tree_method='hist' or 'approx'")


def _finish_round(runtime, states, pending, leaf_values, objective, mapper, params, round_,
                  deferred=None):
    """Apply the last round's splits and leaf values (or a boosted random forest's
    ``deferred`` copies) on every partition and compute the new round's gradients,
    building no histogram (before a pass that needs them)."""
    finish = finish_step(pending, leaf_values, objective, mapper, params, round_, deferred)
    states, _ = runtime.map_reduce(partition_step, states, finish, add_histograms)
    return states


def finish_step(pending, leaf_values, objective, mapper, params, round_, deferred=None):
    """The first pass of round ``round_`` without histograms: ``pending`` (the last
    splits of the round before) and ``leaf_values`` (its trees' node values) move the
    rows to their leaves and add the trees to the margins; ``deferred``: a boosted
    random forest's last round, its copies binned (``LevelStep.deferred``)."""
    K = objective.n_outputs()
    finish = LevelStep(new_tree=True, leaf_values=leaf_values, objective=objective,
                       node_to_slot=np.full((K, 1), -1, np.int32), n_slots=0,
                       cell_offsets=mapper.cell_offsets, cell_width=mapper.cell_width,
                       missing_code=mapper.missing_code,
                       subsample=params.subsample, sample_seed=params.seed,
                       round=round_, position_dtype=position_dtype(params.max_nodes),
                       deferred=deferred, parallel_trees=params.num_parallel_tree)
    width = max(1, 0 if leaf_values is None else leaf_values.shape[1])
    splits = no_splits(K, width) if pending is None else pending
    (finish.split_feature, finish.split_bin, finish.default_left, finish.left_child,
     finish.right_child) = (pad_nodes(a, width) for a in splits[:5])
    finish.cat_table = category_table(splits)
    return finish


def _propose_again(runtime, data, evals, states, eval_sets, mapper, params, store):
    """tree_method="approx": sketch the raw features weighted by the current hessians
    and bin the raw partitions (training and eval) again with the new cut points, into
    the fit's block store (``store``: its ``StoreRef``)."""
    size = sketch_size_for(params.max_bin)
    summaries = runtime.source_pass(data, states, hessian_summaries, (size, mapper.encoders),
                                    _SummaryMerger(size))
    mapper = BinMapper.from_summaries(summaries, params.max_bin, mapper.categories)
    states = runtime.source_pass(data, states, rebin_partition, (mapper, store))
    for e, source in zip(eval_sets, evals):
        if e.states is not None:  # (an eval set on the training states: binned with them)
            e.states = runtime.source_pass(source, e.states, rebin_partition, (mapper, store))
    return states, mapper, eval_sets


def _trim_thresholds(runtime, states, params):
    """Friedman's influence trimming: per output, the hessian below which rows carry at
    most ``trim_fraction`` of the total hessian (weighted quantile of the hessians,
    weighted by themselves, from merged per-partition sketches)."""
    size = sketch_size_for(params.max_bin)
    _, summaries = runtime.map_reduce(hessian_self_summaries, states, size, _SummaryMerger(size))
    return np.array([weighted_quantile(s, params.trim_fraction) if s.total_weight > 0 else 0.0
                     for s in summaries])


class _SummaryMerger:
    def __init__(self, size):
        self.size = size

    def __call__(self, a, b):
        return merge_blocks(a, b, self.size)


def _refit_leaves(runtime, states, pending, growers, objective, mapper, params):
    """Adaptive leaves: each leaf of output k's tree becomes the weighted
    ``leaf_quantiles[k]`` quantile of its rows' residuals (Friedman's LAD step for
    absolute error; quantile regression likewise), from per-partition residual sketches
    merged per (tree, leaf).  The pass also moves the rows to their leaves, so no splits
    are left pending."""
    size = sketch_size_for(params.max_bin)
    states, summaries = runtime.map_reduce(
        leaf_residual_summaries, states, (pending, mapper.missing_code, size),
        LeafSummaryMerger(size))
    refit_from_summaries(growers, summaries, objective.leaf_quantiles,
                         params.learning_rate / params.num_parallel_tree)
    return states, None


def refit_from_summaries(growers, sketches, quantiles, eta):
    """Set each leaf of ``sketches`` (the merged ``LeafSketches`` of the residuals) to
    ``eta`` times the weighted ``quantiles[tree]`` quantile of its rows' residuals, in
    ``growers[tree]``."""
    summaries = sketches.summaries()
    for t, grower in enumerate(growers):
        grower.refit_leaves({leaf: eta * float(weighted_quantile(summary, quantiles[t]))
                             for (tree, leaf), summary in summaries.items()
                             if tree == t and summary.total_weight > 0})
