"""Hyperparameters: xgboost's names, defaults and meanings, validated before any work.

``validate_params`` turns the estimator's raw parameters into one frozen, typed
``TrainingParams``, with the defaults that depend on other parameters settled there and
nowhere else. Each error names the parameter and the value: ``learning_rate=-0.1 must be
> 0``.
"""

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from .binning import MAX_BIN_LIMIT

MAX_EXACT_VALUES = 65535  # tree_method="exact": candidates per feature (one bin per value)
POISSON_MAX_DELTA_STEP = 0.7  # xgboost's default max_delta_step for count:poisson


@dataclass(frozen=True)
class TrainingParams:
    """What a fit learns with: checked, normalised, derived defaults settled.

    Names and meanings are xgboost's. ``max_delta_step`` is 0.7 for ``count:poisson``
    unless given (xgboost's safeguard), else 0; ``max_bin`` is ``MAX_EXACT_VALUES`` for
    ``tree_method="exact"``; ``seed`` is ``random_state`` or 0.
    """

    n_estimators: int
    max_depth: int
    learning_rate: float
    reg_lambda: float
    reg_alpha: float
    gamma: float
    min_child_weight: float
    max_delta_step: float
    max_bin: int
    subsample: float
    colsample_bytree: float
    colsample_bylevel: float
    colsample_bynode: float
    seed: int
    tree_method: str
    grow_policy: str
    max_leaves: int
    trim_fraction: float
    objective: Union[str, Callable, None]
    eval_metric: Any
    early_stopping_rounds: Optional[int]
    num_class: Optional[int]
    huber_slope: float
    quantile_alpha: float
    tweedie_variance_power: float
    base_score: Optional[float]
    # categorical features (issue 13; xgboost's names and defaults, max_cat ours)
    enable_categorical: bool = True
    feature_types: Optional[tuple] = None
    max_cat_to_onehot: int = 4
    max_cat_threshold: int = 64
    max_cat: int = 4096

    @property
    def lossguide(self):
        return self.grow_policy == "lossguide"


def integer_param(name, value, low, high=None):
    """``value`` of parameter ``name`` as an int in [low, high]; TypeError/ValueError
    naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} must be an integer")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name}={value!r} must be {bound}")
    return int(value)


def _real(name, value, low, strict=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r} must be a number")
    try:
        value = float(value)
    except OverflowError:  # an integer beyond the float range
        raise ValueError(f"{name}={value!r:.40} must be finite") from None
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name}={value!r} must be finite")
    if value < low or (strict and value == low):
        raise ValueError(f"{name}={value!r} must be {'>' if strict else '>='} {low}")
    return value


TREE_METHODS = ("hist", "approx", "exact")

# defaults of the categorical parameters (issue 13); ``max_cat``: most categories a
# feature may have (each is a bin code; more usually means an id column)
CATEGORICAL_DEFAULTS = {"enable_categorical": True, "feature_types": None,
                        "max_cat_to_onehot": 4, "max_cat_threshold": 64, "max_cat": 4096}


def categorical_params(raw):
    """The checked categorical parameters of ``raw`` (defaults where absent)."""
    raw = {**CATEGORICAL_DEFAULTS, **{k: v for k, v in raw.items() if k in CATEGORICAL_DEFAULTS}}
    if not isinstance(raw["enable_categorical"], bool):
        raise TypeError(f"enable_categorical={raw['enable_categorical']!r} must be True or False")
    types = raw["feature_types"]
    if types is not None:
        if isinstance(types, str) or not all(t in ("q", "c") for t in types):
            raise ValueError(f"feature_types={types!r} must be a list of 'q' (numeric) or 'c' "
                             "(categorical), one per feature")
        types = tuple(types)
    return dict(enable_categorical=raw["enable_categorical"], feature_types=types,
                max_cat_to_onehot=integer_param("max_cat_to_onehot", raw["max_cat_to_onehot"], 1),
                max_cat_threshold=integer_param("max_cat_threshold", raw["max_cat_threshold"], 1),
                max_cat=integer_param("max_cat", raw["max_cat"], 1, MAX_BIN_LIMIT - 1))
GROW_POLICIES = ("depthwise", "lossguide")


def validate_params(raw, valid_objectives):
    """The ``TrainingParams`` of the raw parameters ``raw`` (a dict of every estimator
    parameter); raises on the first bad one."""
    objective = raw["objective"]
    if objective is not None and not callable(objective) and objective not in valid_objectives:
        valid = ", ".join(repr(o) for o in valid_objectives)
        raise ValueError(f"objective={objective!r} is not supported here; valid objectives: {valid}")
    base_score = raw["base_score"]
    if base_score is not None:
        base_score = _real("base_score", base_score, -math.inf)
    metric = raw["eval_metric"]
    metrics = metric if isinstance(metric, (list, tuple)) else [metric]
    for m in metrics:
        if m is not None and not (isinstance(m, str) or callable(m)):
            raise TypeError(f"eval_metric={metric!r} must be a metric name, a callable or a "
                            "list of them")
    optional_int = {}
    for name, low in (("early_stopping_rounds", 1), ("num_class", 2)):
        optional_int[name] = None if raw[name] is None else integer_param(name, raw[name], low)
    fractions = {}
    for name in ("subsample", "colsample_bytree", "colsample_bylevel", "colsample_bynode"):
        value = _real(name, raw[name], 0.0, strict=True)
        if value > 1.0:
            raise ValueError(f"{name}={raw[name]!r} must be in (0, 1]")
        fractions[name] = value
    random_state = raw["random_state"]
    if random_state is not None:
        random_state = integer_param("random_state", random_state, 0)
    max_delta_step = raw["max_delta_step"]
    if max_delta_step is not None:
        max_delta_step = _real("max_delta_step", max_delta_step, 0.0)
    if raw["tree_method"] not in TREE_METHODS:
        raise ValueError(f"tree_method={raw['tree_method']!r} is not supported; valid: "
                         f"{', '.join(repr(m) for m in TREE_METHODS)}")
    if raw["grow_policy"] not in GROW_POLICIES:
        raise ValueError(f"grow_policy={raw['grow_policy']!r} is not supported; valid: "
                         f"{', '.join(repr(m) for m in GROW_POLICIES)}")
    max_leaves = integer_param("max_leaves", raw["max_leaves"], 0)
    if max_leaves == 1:
        raise ValueError("max_leaves=1 must be 0 (no limit) or >= 2")
    max_depth = integer_param("max_depth", raw["max_depth"], 0)
    if max_depth == 0 and raw["grow_policy"] != "lossguide":
        raise ValueError("max_depth=0 (no depth limit) needs grow_policy='lossguide'")
    if max_depth == 0 and max_leaves == 0:
        raise ValueError("max_depth=0 and max_leaves=0 leave tree size unbounded; "
                         "set one of them")
    trim_fraction = _real("trim_fraction", raw["trim_fraction"], 0.0)
    if trim_fraction >= 1.0:
        raise ValueError(f"trim_fraction={raw['trim_fraction']!r} must be in [0, 1)")
    if max_delta_step is None:  # xgboost's safeguard for Poisson regression
        max_delta_step = POISSON_MAX_DELTA_STEP if objective == "count:poisson" else 0.0
    max_bin = integer_param("max_bin", raw["max_bin"], 2, MAX_BIN_LIMIT)
    return TrainingParams(
        n_estimators=integer_param("n_estimators", raw["n_estimators"], 1),
        max_depth=max_depth,
        learning_rate=_real("learning_rate", raw["learning_rate"], 0.0, strict=True),
        reg_lambda=_real("reg_lambda", raw["reg_lambda"], 0.0),
        reg_alpha=_real("reg_alpha", raw["reg_alpha"], 0.0),
        gamma=_real("gamma", raw["gamma"], 0.0),
        min_child_weight=_real("min_child_weight", raw["min_child_weight"], 0.0),
        max_delta_step=max_delta_step,
        max_bin=MAX_EXACT_VALUES if raw["tree_method"] == "exact" else max_bin,
        **fractions,
        seed=0 if random_state is None else random_state,
        tree_method=raw["tree_method"],
        grow_policy=raw["grow_policy"],
        max_leaves=max_leaves,
        trim_fraction=trim_fraction,
        objective=objective,
        eval_metric=metric,
        **optional_int,
        huber_slope=_real("huber_slope", raw["huber_slope"], 0.0, strict=True),
        quantile_alpha=_real("quantile_alpha", raw["quantile_alpha"], 0.0, strict=True),
        tweedie_variance_power=_real("tweedie_variance_power", raw["tweedie_variance_power"],
                                     1.0),
        base_score=base_score,
        **categorical_params(raw),
    )
