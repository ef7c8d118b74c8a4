"""Cross-validation on dask data: ``cv``, xgboost's ``xgboost.cv`` for daskboost.

The nfold models grow together, as one boosting with ``nfold * K`` trees per round
(``fold_states`` runs it on the partitions): the data is read, sketched and binned
once; each partition state holds every fold's margins, gradients and node positions
(rows ``f*K .. f*K + K - 1`` for fold ``f``) and the fold of each row (``folds``); a
row's gradient and hessian are zero in the trees of the fold that holds it out, so it
adds nothing to their histograms (and the histogram kernel skips it), and one pass
over the partitions per level builds the histograms of every fold's trees.  Each fold
starts from the constant its own training rows give (their label statistics are taken
in the binning pass, from the raw labels, exactly as a fit's scan takes them).

After each round one more pass, which leaves the states as they are, adds the round's
trees to a copy of the margins and returns each fold's metric partial sums on its
training rows ("train") and on the rows it holds out ("test"), reduced in the fixed
order; the client reports their mean and standard deviation (numpy's, ddof=0) over
the folds, as xgboost does.

Folds are keyed on (seed, global row index) (``folds``), so they do not depend on the
partitioning; or the user gives them (``given_folds``), each binning task getting its
partition's part.  With the same bins, fold ``f``'s model is the model a fit on that
fold's training rows grows (``tests/test_cv.py``), row subsampling apart (it is keyed
on global row indices, which differ).
"""

import uuid
from dataclasses import dataclass, replace

import numpy as np

from .binning import BinMapper
from .callbacks import CallbackList, Patience
from .data import has_target_columns, partition_input
from .dmatrix import (DMatrix, NativeMetric, matrix_arguments, training_data,
                      with_native_metric, with_native_objective)
from .fold_states import (FoldEvalStep, FoldObjective, FoldScanMerger, bin_fold_partition,
                          fold_leaf_residual_summaries, fold_partials, no_result,
                          rebuild_fold_partition, set_start_margins, take_label_scans)
from .cv_models import CVBooster, FoldSplit
from .folds import FoldLayout, check_nfold
from .given_folds import check_fold_rows, fold_ids, partition_parts
from .local_threads import local_threads
from .missing_values import with_missing_as_nan
from .objectives import (RANKING, classifier_objectives, is_classification,
                         objectives_of_kind, regressor_objectives)
from .params import check_feature_weights, integer_param, resolve_constraints, validate_params
from .params_dict import (default_metric_disabled, estimator_and_settings, params_as_dict,
                          setting)
from .partition import LeafSummaryMerger
from .runtime import leaves_worker_pool, make_runtime
from .sklearn import _fit_input, estimator_or_call_value
from .training import (RoundClock, _Boosting, _each_round, _log_settled, _PartialsCombiner,
                       _trained_model, check_scanned, label_stats, refit_from_summaries,
                       resolve_metrics, resolve_objective, row_offsets, scan,
                       settle_for_data, sketch_size_for, start_margin)
from .verbosity import speaking

DATA_NAMES = ("train", "test")


# ---- the boosting of all folds ---------------------------------------------------------

class _FoldBoosting(_Boosting):
    """``training._Boosting`` growing the folds' models together (see the module's
    docstring); ``fold_start(scan)`` is a fold's (K,) starting margin."""

    bin_state = staticmethod(bin_fold_partition)
    rebuild_state = staticmethod(rebuild_fold_partition)

    def __init__(self, runtime, params, data, objective, mapper, metrics, classes, offsets,
                 layout, fold_start, n_rows=0, given_parts=None):
        self.layout = layout
        self.given_parts = given_parts
        self.model_objective = objective
        self.fold_metrics = metrics
        size = sketch_size_for(params.max_bin)
        self._label_sketch = size  # binning takes the folds' label statistics
        placeholder = np.zeros(layout.nfold * objective.n_outputs())
        super().__init__(runtime, params, data, [], FoldObjective(objective, layout.nfold),
                         mapper, metrics, (placeholder, classes, None), offsets,
                         every_round=True, n_rows=n_rows)
        self._label_sketch = None
        self.states, scans = runtime.map_reduce(take_label_scans, self.states, None,
                                                FoldScanMerger(size))
        base = np.concatenate([fold_start(s) for s in scans])
        if self.objective.ranks_queries:  # each fold's queries, for its gradients
            rows = np.diff(np.append(np.asarray(offsets, np.int64), n_rows))
            self.objective.set_fold_queries([label_stats(s) for s in scans], rows.tolist())
        self.start = (base, classes, None)  # what a lost partition is rebuilt with
        self.states, _ = runtime.map_reduce(set_start_margins, self.states, base, no_result)

    def _bin_args(self):
        # rows in fold order (``fold_states._in_fold_order``): with quantized gradients,
        # and not for adaptive leaves (whose residual sketches take the rows in order)
        # (nor for a ranking, whose query groups are the rows' as read)
        in_fold_order = (bool(self.params.quantized_grad)
                         and self.objective.leaf_quantiles is None
                         and not self.objective.ranks_queries)
        return super()._bin_args() + (self.layout, self._label_sketch, in_fold_order)

    def _last_args(self, data, offsets, extra=()):
        """``training._Boosting._last_args``, then the partition's part of the folds the
        user gave (``cv(folds=...)``), or None: each task gets its own rows' folds.
        (cv has no eval sets, whose states this would not fit.)"""
        parts = self.given_parts or [None] * len(offsets)
        return [args + (part,) for args, part in
                zip(super()._last_args(data, offsets, extra), parts)]

    def _refit_leaves(self, growers, pending):
        """Adaptive leaves, each fold's from the residuals of the rows it trains on."""
        size = sketch_size_for(self.params.max_bin)
        self.states, summaries = self.runtime.map_reduce(
            fold_leaf_residual_summaries, self.states,
            (pending, self.mapper.missing_code, size, self.objective.outputs_per_model),
            LeafSummaryMerger(size))
        refit_from_summaries(growers, summaries, self.objective.leaf_quantiles,
                             self.params.learning_rate / self.copies)
        return None

    def _evaluate(self, growers, round_, pending, copies=None):
        """{"train"/"test": {metric: [one value per fold]}} after the round (with
        ``num_parallel_tree``: after a boosting round's last copy, ``copies`` its
        copies binned; nothing before)."""
        if self.copies > 1 and copies is None:
            return {}
        metrics = self.fold_metrics
        step = FoldEvalStep(self._finish_of(growers, round_, pending, copies), metrics,
                            self.model_objective, self.layout.nfold)
        self.states, totals = self.runtime.map_reduce(
            fold_partials, self.states, step, _PartialsCombiner(metrics * 2 * step.nfold))
        values = iter([float(m.finalize(t)) for m, t in zip(metrics * 2 * step.nfold, totals)])
        # (the names after ``finalize``: a native custom metric's is known only then)
        scores = {name: {m.name: [] for m in metrics} for name in DATA_NAMES}
        for _ in range(step.nfold):
            for name in DATA_NAMES:
                for m in metrics:
                    scores[name][m.name].append(next(values))
        return scores

    def fold_trees(self, f):
        """Fold ``f``'s trees so far, round by round."""
        K, FK = self.model_objective.n_outputs(), self.objective.n_outputs()
        return [t for r in range(0, len(self.trees), FK)
                for t in self.trees[r + f * K:r + (f + 1) * K]]


# ---- what callbacks see ------------------------------------------------------------------

class CVPack:
    """One fold, as xgboost's ``cv`` hands it to callbacks: ``bst``, its Booster."""

    def __init__(self, bst):
        self.bst = bst


class PackedBooster:
    """The folds' models so far, what callbacks of ``cv`` get as ``model`` (xgboost's
    shape: ``cvfolds``, a list of ``CVPack``)."""

    def __init__(self, cvfolds):
        self.cvfolds = cvfolds

    def num_boosted_rounds(self):
        return self.cvfolds[0].bst.num_boosted_rounds()

    def attr(self, key):
        return self.cvfolds[0].bst.attr(key)

    def set_attr(self, **kwargs):
        """``Booster.set_attr`` on every fold's model."""
        for pack in self.cvfolds:
            pack.bst.set_attr(**kwargs)

    def set_param(self, params, value=None):
        """``Booster.set_param`` for every fold (``learning_rate`` from a callback)."""
        self.cvfolds[0].bst.set_param(params, value)  # (the folds grow in one fit)

    @property
    def best_iteration(self):
        return self.cvfolds[0].bst.best_iteration

    @property
    def best_score(self):
        return self.cvfolds[0].bst.best_score


# ---- the entry point ---------------------------------------------------------------------

@leaves_worker_pool
def cv(params, X=None, y=None, nfold=None, num_boost_round=None, metrics=None,
       early_stopping_rounds=None, seed=0, stratified=False, shuffle=True, callbacks=None,
       sample_weight=None, as_pandas=True, verbose_eval=None, show_stdv=True, folds=None,
       return_cvbooster=False, feature_weights=None, custom_metric=None, maximize=None,
       obj=None, fpreproc=None, *, dtrain=None):
    """Cross-validation: ``nfold`` models, each trained on all the rows but one fold's
    and evaluated on that fold, grown together in one pass over the data per level.

    Parameters
    ----------
    params : dict of the estimators' parameters (``DaskBoostRegressor().get_params()``
        names; xgboost's ``eta``, ``lambda``, ``alpha``, ``min_split_loss`` and ``seed``
        also).  ``objective`` says what is learnt: a ``binary:``/``multi:`` objective
        makes the labels classes (a classifier's fit); a ``rank:`` objective ranks within
        the query groups of a ``DMatrix`` (``qid=``/``group=``): each query is dealt
        whole to a fold (``cv_folds(..., qid=qid)``), and each fold's model is the fit
        on the queries it trains on; anything else, or none (``reg:squarederror``), a
        regression.  ``n_estimators`` and
        ``early_stopping_rounds`` stand for the arguments of the same meaning when
        those are not given; ``memory_budget``/``cache_dir`` apply as in a fit.
    X, y, sample_weight, feature_weights : as for ``fit`` (dask or in-memory collections).
        Or xgboost's call, ``cv(params, dtrain, num_boost_round, nfold)``: X a
        ``DMatrix`` holding the label and weights, the third argument the rounds
        (``dtrain=`` is xgboost's keyword for X).
    nfold : number of folds, in [2, number of rows] (of queries for a ranking; default
        5, or as many as ``folds`` gives).
    num_boost_round : rounds per model (default: ``params["n_estimators"]``, else 10).
    metrics : metric name(s) (a list, or a set: in sorted order); default
        ``params["eval_metric"]``, else the objective's.
    custom_metric, maximize : xgboost's native custom metric ``f(predt, dmatrix) ->
        (name, value)`` after the other metrics, and its direction, as ``train``'s; it is
        called once per fold, round and train/test side with that side's rows.
        ``params["disable_default_eval_metric"]``: alone, without the objective's
        default metric.
    obj : xgboost's native custom objective ``obj(predt, dtrain) -> (grad, hess)``, as
        ``train``'s, for every fold.  (``fpreproc``, xgboost's per-fold preprocessing, is
        refused: the folds grow together, with the same parameters.)
    early_stopping_rounds : stop when the mean test value of the last metric has not
        improved for this many rounds; the result then ends at the best round.
    seed, shuffle : the folds (``folds.cv_folds`` gives them for in-memory data);
        ``params``' ``random_state`` keys the row and column sampling, as in a fit.
    stratified : each class spread evenly over the folds (classification only; not
        with query groups).
    folds : the folds to use instead of dealing the rows: the fold of each row (integers
        ``0 .. nfold - 1``; an array-like, pandas Series, or dask Series/Array aligned
        with X, such as a column of its DataFrame), a list of xgboost's ``(train, test)``
        index pairs, or a scikit-learn splitter (``split(X, y)``; in-memory X).  Each row
        must be in exactly one fold's test rows, and a fold trains on all the others
        (``given_folds``).  ``seed``, ``shuffle`` and ``stratified`` then do not apply.
    callbacks : ``TrainingCallback``-shaped objects; ``model`` is a ``PackedBooster``
        (``model.cvfolds[f].bst``: fold f's Booster so far) and ``evals_log`` is
        ``{"train"/"test": {metric: [(mean, std) per round]}}``, as in xgboost's ``cv``.
    as_pandas : return a pandas DataFrame (else a dict of lists).
    verbose_eval : print the means (and standard deviations: ``show_stdv``) every round
        (True) or every ``verbose_eval`` rounds.
    return_cvbooster : also return the folds' models, as LightGBM's ``cv`` does: a
        ``cv_models.CVBooster`` (each fold's fitted estimator and Booster, their
        predictions, and ``predict_out_of_fold``: each row of X predicted by the model
        that did not train on it).

    Returns
    -------
    pandas.DataFrame with columns ``train-<metric>-mean``, ``train-<metric>-std``, ...,
    ``test-<metric>-mean``, ``test-<metric>-std``, one row per round: the mean and the
    standard deviation (numpy's, ddof=0) over the folds, as xgboost's ``cv``; with
    ``return_cvbooster=True``, ``(that frame, CVBooster)``.
    """
    X = training_data("cv", X, dtrain)
    feature_names = None  # (a named sparse DMatrix's names)
    qid = None  # (a DMatrix's query groups: a ranking's folds keep each query whole)
    if fpreproc is not None:
        raise ValueError("fpreproc: cv grows the folds together in the same passes, with one "
                         "set of parameters, so a fold cannot have its own; give the "
                         "parameters to params (or use fits on the folds)")
    params = with_native_objective(params_as_dict(params), obj)
    if isinstance(metrics, (set, frozenset)):  # (xgboost's demos pass {"error"})
        metrics = sorted(metrics)
    if isinstance(X, DMatrix):
        num_boost_round = matrix_arguments("cv", X, y, num_boost_round,
                                           sample_weight=sample_weight)
        if X.base_margin is not None:
            raise ValueError("cv: the DMatrix has a base_margin; cv starts every fold from "
                             "the objective's start (base_score)")
        feature_weights = X.feature_weights_or(feature_weights, "cv")
        params = X.fit_params(params)
        feature_names = X.names_beside_data
        X, y, sample_weight, qid = X.data, X.label, X.weight, X.qid
    elif y is None:
        raise TypeError("cv(params, X, y): y is missing (or give a DMatrix as X)")
    estimator, settings = estimator_and_settings(params, "cv")
    num_boost_round = setting("num_boost_round", num_boost_round, "n_estimators",
                              settings, 10)
    num_boost_round = integer_param("num_boost_round", num_boost_round, 1)
    stopping = setting("early_stopping_rounds", early_stopping_rounds,
                       "early_stopping_rounds", settings, None)
    if stopping is not None:
        stopping = integer_param("early_stopping_rounds", stopping, 1)
    seed = integer_param("seed", seed, 0)
    estimator._check_settings()
    if not isinstance(return_cvbooster, (bool, np.bool_)):
        raise TypeError(f"return_cvbooster={return_cvbooster!r} must be True or False")
    # array-likes (lists, sparse matrices) read as fit reads them
    X, y, sample_weight = _fit_input(estimator, X, y, sample_weight)
    if folds is None:
        nfold = check_nfold(5 if nfold is None else nfold, _rows_in_metadata(X))
    elif stratified:
        raise ValueError("stratified=True and folds: the folds given are used as they are; "
                         "give one of them")
    eval_metric = estimator.eval_metric if metrics is None else metrics
    train_params = validate_params(
        {**estimator.get_params(), "n_estimators": num_boost_round,
         "early_stopping_rounds": None,
         "eval_metric": with_native_metric(
             eval_metric, custom_metric, maximize, beside_default=not default_metric_disabled(
                 params, "cv", custom_metric, eval_metric, evaluates=True))},
        tuple(dict.fromkeys(regressor_objectives() + classifier_objectives()
                            + objectives_of_kind(RANKING))))
    # (a params dict may hold them too: xgboost 2's estimators take them)
    feature_weights = check_feature_weights(
        estimator_or_call_value(estimator, "feature_weights", feature_weights, "cv"))
    callbacks = estimator_or_call_value(estimator, "callbacks", callbacks, "cv")
    train_params = replace(train_params, feature_weights=feature_weights)
    several_targets = has_target_columns(y)  # (binary:logistic: one per label)
    if several_targets and stratified:
        raise ValueError("stratified=True with a y of several columns: the folds are "
                         "stratified by one class per row; leave stratified False")
    classifier = is_classification(train_params.objective) and not several_targets
    _check_supported(train_params, stratified, classifier, qid is not None, folds is not None)
    callbacks = CallbackList(callbacks)
    if verbose_eval is None:
        verbose_eval = settings.get("verbose", False)
    period = _period(verbose_eval)
    types = (train_params.enable_categorical, train_params.feature_types)
    data = partition_input(with_missing_as_nan(X, estimator.missing), y, sample_weight, None,
                           *types, feature_names, qid)
    check_feature_weights(feature_weights, data.n_features)
    train_params = resolve_constraints(train_params, data.feature_names, data.n_features,
                                       data.feature_types)
    given = None
    if folds is not None:  # (last of the checks: a dask column of folds is computed here)
        given, nfold = fold_ids(folds, X, y, _rows_in_metadata(X), nfold)
    run = _Run(nfold, seed, bool(shuffle), bool(stratified), stopping, callbacks, period,
               bool(show_stdv), given, bool(return_cvbooster))
    with local_threads(estimator.n_jobs), speaking(estimator.verbosity), make_runtime(
            uuid.uuid4().hex[:12], estimator._store_config(), data.in_memory) as runtime:
        columns, fold_models = _cross_validate(runtime, train_params, data, classifier, run)
    results = _as_frame(columns) if as_pandas else columns
    if not return_cvbooster:
        return results
    return results, CVBooster.of_boosters(estimator.set_params(n_estimators=num_boost_round),
                                          *fold_models)


@dataclass(frozen=True)
class _Run:
    """What ``cv`` was asked for besides the training parameters."""

    nfold: int
    seed: int
    shuffle: bool
    stratified: bool
    early_stopping_rounds: object
    callbacks: CallbackList
    period: int
    show_stdv: bool
    given_folds: object = None  # each row's fold (``given_folds.fold_ids``), or None
    return_cvbooster: bool = False


def _rows_in_metadata(X):
    """The number of rows of X if its metadata tell it (numpy, pandas, a dask Array
    with known chunks), else None (a dask DataFrame: known after the first pass)."""
    n = getattr(X, "shape", (None,))[0] if getattr(X, "shape", None) else None
    return int(n) if isinstance(n, (int, np.integer)) else None


def _check_supported(params, stratified, classifier, queries=False, given_folds=False):
    """Refuse, before any pass, what the folds grown together cannot do (``queries``:
    the data has query groups; ``given_folds``: the user gives the folds)."""
    if not isinstance(stratified, (bool, np.bool_)):
        raise TypeError(f"stratified={stratified!r} must be True or False")
    if queries and stratified:
        raise ValueError("stratified=True with query groups (qid): the folds of a ranking "
                         "hold whole queries, not classes; leave stratified False")
    if queries and given_folds:
        raise ValueError("folds with query groups (qid) are not supported: cv deals each "
                         "query whole to a fold (cv_folds(n, nfold, seed, qid=qid) gives "
                         "those folds); leave folds None")
    if stratified and not classifier:
        raise ValueError(
            f"stratified=True needs a classification objective (binary:* or multi:*) in "
            f"params; objective={params.objective!r} is a regression"
            + (" (reg:squarederror)" if params.objective is None else ""))
    if params.tree_method == "approx":
        raise ValueError("tree_method='approx' is not supported by cv: it bins the data "
                         "again for each model, while cv grows every fold on one binning; "
                         "use 'hist' or 'exact'")
    if params.trim_fraction:
        raise ValueError(f"trim_fraction={params.trim_fraction!r} is not supported by cv")


def _period(verbose_eval):
    if isinstance(verbose_eval, (bool, np.bool_)) or verbose_eval is None:
        return 1 if verbose_eval else 0
    return integer_param("verbose_eval", verbose_eval, 1)


def _cross_validate(runtime, params, data, classifier, run):
    scanned = scan(runtime, data, params, classifier)
    check_nfold(run.nfold, scanned.n_rows)
    check_fold_rows(run.given_folds, scanned.n_rows)
    objective, objective_params, classes, _ = resolve_objective(params, scanned, classifier)
    # quantized or not as a fit on a fold's training rows would be
    params = settle_for_data(params, objective, data,
                             scanned.n_rows - scanned.n_rows // run.nfold)
    check_scanned(scanned, params, data.feature_names)
    labels = None if classes is None else classes.tolist()
    class_counts = None
    if run.stratified:
        class_counts = np.array([[counts.get(label, 0) for label in labels]
                                 for counts in scanned.partition_class_counts], np.int64)
    if getattr(objective, "ranks_queries", False):  # each query whole in one fold
        query_counts = np.array([q.count for q in scanned.partition_queries], np.int64)
        check_nfold(run.nfold, int(query_counts.sum()), "queries")
        layout = FoldLayout(run.nfold, run.seed, run.shuffle, int(query_counts.sum()),
                            query_counts=query_counts)
    else:
        layout = FoldLayout(run.nfold, run.seed, run.shuffle, scanned.n_rows, class_counts)
    metrics = resolve_metrics(params, objective, runtime)
    mapper = BinMapper.from_summaries(scanned.summaries, params.max_bin, scanned.categories)

    def fold_start(fold_scan):
        return start_margin(objective, label_stats(fold_scan, labels), params)

    parts = (None if run.given_folds is None
             else partition_parts(run.given_folds, scanned.partition_rows))
    fit = _FoldBoosting(runtime, params, data, objective, mapper, metrics, classes,
                        row_offsets(scanned), layout, fold_start, n_rows=scanned.n_rows,
                        given_parts=parts)
    K = objective.n_outputs()
    _log_settled(params, objective, fit.start[0], data, scanned.n_rows, runtime,
                 f"cv, {run.nfold} folds: ")
    clock = RoundClock()

    def model(best=(None, None)):
        return PackedBooster([CVPack(_trained_model(
            fit.fold_trees(f), fit.start[0][f * K:(f + 1) * K], objective, data,
            objective_params, best, mapper.categories, check=False,
            parallel_trees=params.num_parallel_tree))
            for f in range(run.nfold)])

    # what callbacks see: one PackedBooster, its folds' trees those so far; what they set
    # on it (``set_attr``, ``set_param``) holds for the rest of the run
    view = model()
    for pack in view.cvfolds:
        pack.bst._fit_in_progress = fit.change_param

    def model_so_far():
        for f, pack in enumerate(view.cvfolds):
            pack.bst.trees, pack.bst._packed = fit.fold_trees(f), {}
        return view

    log = {name: {} for name in DATA_NAMES}  # (a metric's entry made with its first value)
    callbacks = run.callbacks
    if callbacks:
        callbacks.before_training(model_so_far())

    def stop_before(round_):
        return bool(callbacks) and callbacks.before_iteration(model_so_far(), round_, log)

    best, stopped = (None, None), False
    last = metrics[-1]
    # early_stopping_rounds: on the mean test value of the last metric
    stopping = (Patience(run.early_stopping_rounds, last.higher_is_better)
                if run.early_stopping_rounds else None)
    for round_, scores in _each_round(fit, 0, params.n_estimators, None, None, stop_before):
        for name in DATA_NAMES:
            for m in metrics:
                values = np.array(scores[name][m.name])
                log[name].setdefault(m.name, []).append((float(np.mean(values)),
                                                         float(np.std(values))))
        clock.round_done(round_, ((f"{name}-{metric}-mean", values[-1][0])
                                  for name in DATA_NAMES
                                  for metric, values in log[name].items()))
        if run.period and (round_ % run.period == 0 or round_ == params.n_estimators - 1):
            print(_progress_line(round_, log, metrics, run.show_stdv), flush=True)
        asked_to_stop = bool(callbacks) and callbacks.after_iteration(model_so_far(), round_,
                                                                       log)
        if stopping is not None:
            stopped = stopping.update(round_, log["test"][last.name][-1][0])
            best = stopping.best
            if stopped:
                break
        if asked_to_stop:
            # a callback's early stopping: the results end at its best round, as in
            # xgboost's ``cv``
            if view.best_iteration is not None:
                best, stopped = (view.best_iteration, view.best_score), True
            break
    grown = len(log["test"].get(last.name, ()))
    rounds = best[0] + 1 if stopped else grown
    clock.finished(grown, best if stopped else (None, None))
    if callbacks:
        callbacks.after_training(model(best))
    fold_models = None
    if run.return_cvbooster:  # (the boosters, their best round, how the rows were split)
        fold_models = ([pack.bst for pack in model(best).cvfolds], best[0],
                       FoldSplit(layout, tuple(int(n) for n in scanned.partition_rows),
                                 run.given_folds, classes))
    return {f"{name}-{metric}-{stat}": [v[j] for v in log[name][metric][:rounds]]
            for name, metric in _in_xgboosts_order(log, metrics)
            for j, stat in enumerate(("mean", "std"))}, fold_models


def _in_xgboosts_order(log, metrics):
    """The (side, metric) pairs of ``log`` in xgboost's order: the built-in metrics of the
    train side, then of the test side; then a native ``custom_metric`` on each side (it
    comes after the built-in ones in xgboost's evaluation text)."""
    native = {m.name for m in metrics if isinstance(m, NativeMetric)}
    return [(name, metric) for group in (False, True) for name in DATA_NAMES
            for metric in log[name] if (metric in native) == group]


def _progress_line(round_, log, metrics, show_stdv):
    """xgboost's ``[round]\\ttrain-rmse:mean+std\\t...``."""
    parts = [f"[{round_}]"]
    for name, metric in _in_xgboosts_order(log, metrics):
        mean, std = log[name][metric][-1]
        parts.append(f"{name}-{metric}:{mean:.5f}" + (f"+{std:.5f}" if show_stdv else ""))
    return "\t".join(parts)


def _as_frame(columns):
    import pandas as pd
    return pd.DataFrame(columns)
