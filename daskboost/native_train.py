"""``daskboost.train``: xgboost's native ``train(params, ...) -> Booster``.

A script written against ``xgboost.train`` (or ``xgboost.dask.train``) keeps its
parameter dict, its eval names, ``evals_result`` and its callbacks; X and y are given
as they are to the estimators (dask, pandas, numpy, scipy.sparse: no ``DMatrix``).  The
fit is the estimator's: the same model bytes as ``DaskBoostRegressor(**params).fit``
(or ``DaskBoostClassifier`` for a ``binary:``/``multi:`` objective).
"""

from .dmatrix import (DMatrix, matrix_arguments, training_data, with_native_metric,
                      with_native_objective)
from .params import integer_param
from .query_groups import row_weights
from .params_dict import (default_metric_disabled, estimator_and_settings, params_as_dict,
                          setting)


def train(params, X=None, y=None, num_boost_round=None, evals=None, early_stopping_rounds=None,
          sample_weight=None, base_margin=None, evals_result=None, verbose_eval=None,
          xgb_model=None, callbacks=None, feature_weights=None, obj=None, custom_metric=None,
          maximize=None, *, dtrain=None):
    """Train a model; returns its ``Booster``.

    Parameters
    ----------
    params : dict of the estimators' parameters (``DaskBoostRegressor().get_params()``
        names; xgboost's ``eta``, ``lambda``, ``alpha``, ``min_split_loss``, ``seed``
        and ``nthread`` also), or xgboost's list of ``(name, value)`` pairs
        (``params_dict.params_as_dict``).  A ``binary:``/``multi:`` objective makes y class labels:
        their sorted order gives the class indices the Booster predicts (0 and 1, or
        0 .. K-1, are themselves).
    X, y, sample_weight, base_margin, feature_weights : as for the estimators' ``fit``.
        Or xgboost's call, ``train(params, dtrain, num_boost_round, evals=[(dvalid,
        "valid")])``: X a ``DMatrix`` (``daskboost.DMatrix``) holding the label, weights
        and base margins, the third argument the rounds, and eval sets ``(DMatrix,
        name)`` pairs (also xgboost's fourth positional argument).  ``dtrain=`` is
        xgboost's keyword for X.
    num_boost_round : rounds (default ``params["n_estimators"]``, else 10, xgboost's).
    evals : eval sets scored after every round: ``(X, y)`` pairs (named
        ``validation_<i>``) or ``(X, y, name)`` triples; the last drives early
        stopping.  An eval set whose X and y are the training ones is scored in the
        training passes.
    early_stopping_rounds : stop when the last eval set's last metric has not improved
        for this many rounds; the Booster's ``best_iteration`` is then the best round,
        and prediction uses the rounds up to it.
    evals_result : a dict to fill with ``{name: {metric: [value per round]}}``.
    verbose_eval : progress lines: True (at most every second), k (every k rounds),
        False (none; default ``params["verbose"]``, else False).
    xgb_model : a Booster, an estimator or a model file to continue from.
    callbacks : ``TrainingCallback``-shaped objects, as for ``fit``.
    obj : xgboost's native custom objective, ``obj(predt, dtrain) -> (grad, hess)``
        (``predt`` the raw margins; ``dtrain.get_label()`` the labels), in place of
        ``params["objective"]``; see ``dmatrix.NativeObjective``.  The Booster then
        predicts raw margins, as xgboost's.
    custom_metric : xgboost's native custom metric, ``custom_metric(predt, dmatrix) ->
        (name, value)``, evaluated on each eval set after its other metrics (the
        objective's default one when ``eval_metric`` is not given), so early stopping
        watches it.  ``predt`` holds the eval set's predictions as ``Booster.predict``
        gives them (raw margins with a custom ``obj``); ``dmatrix.get_label()`` and
        ``get_weight()`` its labels and weights.  It is called once per eval set and
        round with all its rows (``dmatrix.NativeMetric``).
    maximize : whether a higher ``custom_metric`` is better (default False).

    ``params["disable_default_eval_metric"]`` (xgboost's): the objective's default
    metric is not evaluated beside ``custom_metric``.
    """
    X = training_data("train", X, dtrain)
    params = with_native_objective(params_as_dict(params), obj)
    if isinstance(X, DMatrix) and isinstance(num_boost_round, (list, tuple)) and evals is None:
        evals, num_boost_round = num_boost_round, None  # (params, dtrain, rounds, evals)
    disabled = default_metric_disabled(params, "train", custom_metric, params.get("eval_metric"),
                                       evaluates=bool(evals))
    if custom_metric is not None or maximize is not None:
        params = {**params, "eval_metric": with_native_metric(
            params.get("eval_metric"), custom_metric, maximize, beside_default=not disabled)}
    if isinstance(X, DMatrix):
        rounds = matrix_arguments("train", X, y, num_boost_round, sample_weight=sample_weight,
                                  base_margin=base_margin)
        return train_from_sets(X.fit_params(params), X.data_set(), _matrix_evals(evals),
                               rounds, early_stopping_rounds, evals_result, verbose_eval,
                               xgb_model, callbacks,
                               X.feature_weights_or(feature_weights, "train"),
                               X.names_beside_data)
    if y is None:
        raise TypeError("train(params, X, y): y is missing (or give a DMatrix as X)")
    if evals is not None and (not isinstance(evals, (list, tuple)) or not all(
            isinstance(e, (list, tuple)) and len(e) in (2, 3) for e in evals)):
        raise TypeError("evals must be a list of (X, y) pairs or (X, y, name) triples")
    named = [((e[0], e[1], None, None, None), e[2] if len(e) == 3 else f"validation_{i}")
             for i, e in enumerate(evals or [])]
    return train_from_sets(params, (X, y, sample_weight, base_margin, None), named,
                           num_boost_round, early_stopping_rounds, evals_result, verbose_eval,
                           xgb_model, callbacks, feature_weights)


def train_from_sets(params, training, evals, num_boost_round=None, early_stopping_rounds=None,
                    evals_result=None, verbose_eval=None, xgb_model=None, callbacks=None,
                    feature_weights=None, feature_names=None):
    """``train`` on data sets given as ``(X, y, sample_weight, base_margin, qid)``
    tuples: ``training``, and ``evals``, a list of ``(set, name)`` pairs (each eval set
    with its own weights, base margins and query ids, as xgboost's eval DMatrix has
    them; a set with query ids may weigh each query, ``query_groups.row_weights``).
    ``feature_names``: the features' names when the training X holds none (a named
    sparse DMatrix)."""
    estimator, settings = estimator_and_settings(params, "train", checkpoints=True)
    rounds = integer_param("num_boost_round", setting(
        "num_boost_round", num_boost_round, "n_estimators", settings, 10), 1)
    stopping = setting("early_stopping_rounds", early_stopping_rounds,
                       "early_stopping_rounds", settings, None)
    if evals_result is not None and not isinstance(evals_result, dict):
        raise TypeError(f"evals_result must be a dict to fill; got {type(evals_result).__name__}")
    names = _checked_names([name for _, name in evals])
    sets = [data for data, _ in evals]
    weights = [row_weights(w, q) for _, _, w, _, q in sets]
    margins = [m for _, _, _, m, _ in sets]
    qids = [q for _, _, _, _, q in sets]
    X, y, sample_weight, base_margin, qid = training
    estimator.set_params(n_estimators=rounds, early_stopping_rounds=stopping)
    estimator._fit(X, y, row_weights(sample_weight, qid),
                   estimator._estimator_type == "classifier",
                   [(Xe, ye) for Xe, ye, _, _, _ in sets] or None,
                   weights if any(w is not None for w in weights) else None, xgb_model,
                   base_margin=base_margin,
                   base_margin_eval_set=margins if any(m is not None for m in margins)
                   else None, callbacks=callbacks,
                   verbose=settings.get("verbose", False) if verbose_eval is None
                   else verbose_eval, eval_names=names or None,
                   feature_weights=feature_weights, feature_names=feature_names, qid=qid,
                   qid_eval_set=qids if any(q is not None for q in qids) else None)
    if evals_result is not None:
        evals_result.clear()
        evals_result.update(estimator.evals_result_)
    return estimator.get_booster()


def _checked_names(names):
    """The eval sets' names: non-empty strings, all different."""
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"evals: an eval set's name must be a non-empty string; got "
                            f"{name!r:.80}")
    if len(set(names)) != len(names):
        raise ValueError(f"evals: names must differ; got {names}")
    return names


def _matrix_evals(evals):
    """xgboost's ``evals``, ``(DMatrix, name)`` pairs, as ``train_from_sets`` takes them."""
    if evals is None:
        return []
    if not isinstance(evals, (list, tuple)) or not all(
            isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[0], DMatrix)
            and isinstance(e[1], str) for e in evals):
        raise TypeError("evals must be a list of (DMatrix, name) pairs when dtrain is a "
                        "DMatrix")
    return [(matrix.data_set(), name) for matrix, name in evals]
