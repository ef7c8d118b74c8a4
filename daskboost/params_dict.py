"""xgboost's native API takes its parameters as one dict: ``cv(params, ...)`` and
``train(params, ...)``.  Here that dict becomes the estimator that holds them (every
name checked, xgboost's native aliases allowed) and the settings that stand for the
function's own arguments."""

from .objectives import is_classification
from .sklearn import DaskBoostClassifier, DaskBoostRegressor

# xgboost's native names of the estimator's parameters
XGBOOST_ALIASES = {"eta": "learning_rate", "lambda": "reg_lambda", "alpha": "reg_alpha",
                   "min_split_loss": "gamma", "seed": "random_state", "nthread": "n_jobs"}
# parameters that stand for an argument of the function when it is not given
SETTINGS = ("n_estimators", "early_stopping_rounds", "verbose")


def estimator_and_settings(params, caller, checkpoints=False):
    """An estimator holding ``params`` (their names checked: xgboost's aliases allowed):
    a ``DaskBoostClassifier`` for a classification objective, else a
    ``DaskBoostRegressor``; and ``params``' ``SETTINGS`` for ``caller``'s own
    arguments.  ``checkpoints``: whether ``checkpoint_path`` may be set."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of parameters; got {type(params).__name__}")
    valid = DaskBoostRegressor._param_names()
    named, given_as = {}, {}
    for key, value in params.items():
        name = XGBOOST_ALIASES.get(key, key)
        if name not in valid:
            raise ValueError(f"params: {key!r} is not a parameter; valid: "
                             f"{sorted(valid + list(XGBOOST_ALIASES))}")
        if name in named:
            raise ValueError(f"params: {given_as[name]!r} and {key!r} are the same "
                             f"parameter ({name}); give one")
        named[name], given_as[name] = value, key
    if not checkpoints and named.get("checkpoint_path") is not None:
        raise ValueError(f"params: checkpoint_path={named['checkpoint_path']!r}: {caller} "
                         "writes no checkpoints")
    settings = {name: named.pop(name) for name in SETTINGS if name in named}
    classifier = is_classification(named.get("objective"))
    return (DaskBoostClassifier if classifier else DaskBoostRegressor)(**named), settings


def setting(argument, value, name, settings, default):
    """The function's argument ``argument``, or ``params[name]``, or ``default``; both
    given and different is an error."""
    if name not in settings or settings[name] is None:
        return default if value is None else value
    if value is not None and value != settings[name]:
        raise ValueError(f"{argument}={value!r} and params[{name!r}]={settings[name]!r} "
                         "disagree; give one")
    return settings[name]
