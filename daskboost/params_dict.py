"""xgboost's native API takes its parameters as one dict: ``cv(params, ...)`` and
``train(params, ...)``.  Here that dict becomes the estimator that holds them (every
name checked, xgboost's native aliases allowed) and the settings that stand for the
function's own arguments."""

from .params import XGBOOST_ALIASES
from .sklearn import DaskBoostRanker, estimator_class_for
# parameters that stand for an argument of the function when it is not given
SETTINGS = ("n_estimators", "early_stopping_rounds", "verbose")
# xgboost's parameters of the native calls alone (read by them, not the estimator's)
NATIVE_ONLY = ("disable_default_eval_metric",)
# xgboost's parameters of what is not built here, and what they would need
NOT_BUILT = {
    "process_type": "updating a trained model's trees in place (xgboost's refresh and prune "
                    "updaters) is not implemented; train(..., xgb_model=) adds rounds",
    "updater": "xgboost's updater sequences are not exposed; tree_method chooses the method",
}


def params_as_dict(params):
    """The native calls' parameters as a dict: a dict as it is, or xgboost's list of
    ``(name, value)`` pairs, applied in order as xgboost applies them (a later value of
    a name replaces an earlier one; ``eval_metric`` given more than once is a list of
    all of them, in order)."""
    if isinstance(params, dict):
        return params
    if not isinstance(params, (list, tuple)) or not all(
            isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)
            for pair in params):
        raise TypeError(f"params must be a dict of parameters or xgboost's list of (name, "
                        f"value) pairs; got {params!r:.80}")
    out, metrics = {}, []
    for name, value in params:
        if name == "eval_metric":
            metrics.extend(value if isinstance(value, (list, tuple)) else [value])
        else:
            out[name] = value
    if metrics:
        out["eval_metric"] = metrics[0] if len(metrics) == 1 else metrics
    return out


def estimator_and_settings(params, caller, checkpoints=False):
    """An estimator holding ``params`` (their names checked: xgboost's aliases allowed):
    a ``DaskBoostClassifier`` for a classification objective, a ``DaskBoostRanker`` for a
    ranking one, else a ``DaskBoostRegressor``; and ``params``' ``SETTINGS`` for
    ``caller``'s own arguments.  ``checkpoints``: whether ``checkpoint_path`` may be
    set."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of parameters; got {type(params).__name__}")
    valid = DaskBoostRanker._param_names()  # (the shared ones and the ranking ones)
    named, given_as = {}, {}
    for key, value in params.items():
        if key in NATIVE_ONLY:
            continue
        name = XGBOOST_ALIASES.get(key, key)
        if key in NOT_BUILT:
            raise ValueError(f"params: {key}={value!r}: {NOT_BUILT[key]}")
        if name not in valid:
            raise ValueError(f"params: {key!r} is not a parameter; valid: "
                             f"{sorted(valid + list(XGBOOST_ALIASES) + list(NATIVE_ONLY))}")
        if name in named:
            raise ValueError(f"params: {given_as[name]!r} and {key!r} are the same "
                             f"parameter ({name}); give one")
        named[name], given_as[name] = value, key
    if not checkpoints and named.get("checkpoint_path") is not None:
        raise ValueError(f"params: checkpoint_path={named['checkpoint_path']!r}: {caller} "
                         "writes no checkpoints")
    settings = {name: named.pop(name) for name in SETTINGS if name in named}
    return estimator_class_for(named.get("objective"))(**named), settings


def setting(argument, value, name, settings, default):
    """The function's argument ``argument``, or ``params[name]``, or ``default``; both
    given and different is an error."""
    if name not in settings or settings[name] is None:
        return default if value is None else value
    if value is not None and value != settings[name]:
        raise ValueError(f"{argument}={value!r} and params[{name!r}]={settings[name]!r} "
                         "disagree; give one")
    return settings[name]


def default_metric_disabled(params, caller, custom_metric, eval_metric, evaluates):
    """xgboost's ``params["disable_default_eval_metric"]`` (True/False, 0/1, or their
    text): whether the objective's default metric is left out beside a
    ``custom_metric``.  When ``caller`` ``evaluates`` eval sets, a metric must be left
    (``eval_metric`` or ``custom_metric``): xgboost would log none, which a fit here
    does not do."""
    value = params.get("disable_default_eval_metric", False)
    flags = {False: False, True: True, 0: False, 1: True, "0": False, "1": True,
             "false": False, "true": True}
    key = value.lower() if isinstance(value, str) else value
    if isinstance(key, float) or key not in flags:  # (1.0 == 1 would pass as a key)
        raise ValueError(f"params: disable_default_eval_metric={value!r} must be True, False, "
                         "0 or 1")
    if flags[key] and evaluates and custom_metric is None and eval_metric is None:
        raise ValueError(f"{caller}: params['disable_default_eval_metric'] leaves the eval "
                         "sets no metric; give eval_metric or custom_metric")
    return flags[key]
