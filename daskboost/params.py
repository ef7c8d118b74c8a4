"""Hyperparameters: xgboost's names, defaults and meanings, validated before any work.

``validate_params`` turns the estimator's raw parameters into one frozen, typed
``TrainingParams``, with the defaults that depend on other parameters settled there and
nowhere else. Each error names the parameter and the value: ``learning_rate=-0.1 must be
> 0``.
"""

import dataclasses
import json
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from .binning import MAX_BIN_LIMIT
from .metrics import Metric
from .objectives import (AFT_DEFAULTS, RANKING_DEFAULTS, check_scale_pos_weight,
                         get_objective, quantile_levels,
                         ranking_settings)
from .quantize import max_rows

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
    quantile_alpha: Union[float, tuple]  # a tuple: several levels, one output each
    tweedie_variance_power: float
    base_score: Optional[Union[float, tuple]]  # a tuple: one per output
    # xgboost's weight of the rows labelled 1 in the logistic losses' gradients
    # (``objectives.LOGISTIC_OBJECTIVES``); 1: none
    scale_pos_weight: float = 1.0
    # survival:aft's noise distribution and its scale (xgboost's names)
    aft_loss_distribution: str = "normal"
    aft_loss_distribution_scale: float = 1.0
    # scikit-learn's class_weight (classifiers): None, "balanced", or a tuple of
    # (label, factor) pairs; ``training.resolve_objective`` settles it per class
    class_weight: Union[str, tuple, None] = None
    # split constraints (xgboost's names). As validated: a tuple of -1/0/1, or of
    # (column name, -1/0/1) pairs; tuples of names/indices. ``resolve_constraints``
    # settles them on the data's features: one int per feature (None when all 0), and
    # tuples of feature indices. None: no constraint.
    monotone_constraints: Optional[tuple] = None
    interaction_constraints: Optional[tuple] = None
    # categorical features (issue 13; xgboost's names and defaults, max_cat ours)
    enable_categorical: bool = True
    feature_types: Optional[tuple] = None
    max_cat_to_onehot: int = 4
    max_cat_threshold: int = 64
    max_cat: int = 4096
    # quantized gradients (issue 15; LightGBM's ``use_quantized_grad`` and
    # ``num_grad_quant_bins``): see ``quantize``; "auto" until ``settle_quantized_grad``
    # decides it for the data, True or False from then on
    quantized_grad: Union[bool, str] = "auto"
    num_grad_quant_bins: int = 4
    # xgboost's ``fit(feature_weights=...)``: each feature's weight in column sampling
    # (a tuple of floats >= 0, one per feature), or None: every feature alike
    feature_weights: Optional[tuple] = None
    # learning to rank (xgboost's lambdarank parameters: ``objectives.RANKING_DEFAULTS``;
    # ``lambdarank_num_pair_per_sample`` None: xgboost's default for the pair method)
    lambdarank_pair_method: str = "topk"
    lambdarank_num_pair_per_sample: Optional[int] = None
    ndcg_exp_gain: bool = True
    lambdarank_normalization: bool = True
    lambdarank_score_normalization: bool = True
    lambdarank_unbiased: bool = False
    # xgboost's ``num_parallel_tree``: trees grown per output and round from the same
    # gradients, each on its own row and column samples, each leaf scaled by
    # learning_rate / num_parallel_tree (boosted random forests; ``level_loop``)
    num_parallel_tree: int = 1

    @property
    def lossguide(self):
        return self.grow_policy == "lossguide"

    @property
    def max_nodes(self):
        """The most nodes a tree can have (node ids are below it): 2^(depth+1) - 1 for
        a depth limit, 2 * max_leaves - 1 for a leaf limit, the smaller of the two."""
        bounds = []
        if self.max_depth:
            bounds.append(2 ** (self.max_depth + 1) - 1)
        if self.lossguide and self.max_leaves:
            bounds.append(2 * self.max_leaves - 1)
        return min(bounds)


def integer_param(name, value, low, high=None):
    """``value`` of parameter ``name`` as an int in [low, high]; TypeError/ValueError
    naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} must be an integer")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name}={value!r} must be {bound}")
    return int(value)


# xgboost's native names of the estimators' parameters (its params dicts use them, and its
# scikit-learn estimators pass them on in **kwargs: ``XGBClassifier(eta=0.1)``)
XGBOOST_ALIASES = {"eta": "learning_rate", "lambda": "reg_lambda", "alpha": "reg_alpha",
                   "min_split_loss": "gamma", "seed": "random_state", "nthread": "n_jobs"}
# keywords of old xgboost estimators that are accepted and not used, with why
UNUSED_XGBOOST_KEYWORDS = {
    "use_label_encoder": "xgboost 2 removed it; the classifier encodes its labels as "
                         "scikit-learn's classifiers do (classes_)",
    "silent": "xgboost removed it; verbosity says how much is printed",
}


def _base_score(value):
    """``base_score``: a number, or xgboost's (3.1+) vector of one per output (a
    multi-class model's start) as a tuple of floats; a vector of one is that number."""
    if isinstance(value, (list, tuple, np.ndarray)):
        values = np.asarray(value, dtype=object)
        if values.ndim != 1 or len(values) == 0:
            raise ValueError(f"base_score={value!r:.80} must be a number or a vector of "
                             "one number per output")
        values = tuple(_real("base_score", v.item() if isinstance(v, np.generic) else v,
                             -math.inf) for v in values)
        return values[0] if len(values) == 1 else values
    return _real("base_score", value, -math.inf)


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


def _aft_params(raw):
    """``aft_loss_distribution`` and ``aft_loss_distribution_scale`` checked (as
    ``survival:aft`` checks them), at their defaults where not given."""
    given = {k: raw.get(k, default) for k, default in AFT_DEFAULTS.items()}
    get_objective("survival:aft", **given)  # (ValueError naming the parameter)
    return {"aft_loss_distribution": given["aft_loss_distribution"],
            "aft_loss_distribution_scale": float(given["aft_loss_distribution_scale"])}


def quantile_alphas(value):
    """``quantile_alpha`` checked (``objectives.quantile_levels``): one level as a float,
    several (xgboost's list: a model with one output per level) as a tuple; a one-level
    list is that level."""
    levels = quantile_levels(value)
    return levels[0] if len(levels) == 1 else levels


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

# defaults of the quantized-gradient parameters (issue 15); the most bins: the data may
# then still hold 2**21 rows (``quantize.check_rows``)
QUANTIZATION_DEFAULTS = {"quantized_grad": "auto", "num_grad_quant_bins": 4}
MAX_GRAD_QUANT_BINS = 1024
# quantized_grad="auto": quantized gradients for unweighted numeric data of at least this
# many training rows, with an objective whose hessian is bounded
# (``Objective.bounded_hessian``).  There they fit 1.1-1.7x faster at the same test metric
# (benchmarks/RESULTS.md, "Quantized gradients by default"); below this size the fixed
# cost per pass dominates and they gain nothing.  Not with categorical features: the
# order of a node's categories, from the rounded gradients of the few rows each of
# thousands of categories has, is noise (flights: -0.023 AUC).  Not with weights or an
# unbounded hessian: rounded to steps of the largest, most rows' hessians become 0 or 1
# step (gamma: +11.5% test deviance, benchmarks/bench_quantized_objectives.py).
QUANTIZED_FROM_ROWS = 100_000


def ranking_params(raw):
    """The lambdarank parameters of ``raw`` (defaults where absent), checked
    (``objectives.ranking_settings``) before any pass over the data."""
    given = {k: raw[k] for k in RANKING_DEFAULTS if k in raw}
    ranking_settings(**given)
    return {**RANKING_DEFAULTS, **given}


def quantization_params(raw):
    """The checked quantized-gradient parameters of ``raw`` (defaults where absent)."""
    raw = {**QUANTIZATION_DEFAULTS,
           **{k: v for k, v in raw.items() if k in QUANTIZATION_DEFAULTS}}
    if not (isinstance(raw["quantized_grad"], bool) or raw["quantized_grad"] == "auto"):
        raise TypeError(f"quantized_grad={raw['quantized_grad']!r} must be True, False or "
                        "'auto'")
    return dict(quantized_grad=raw["quantized_grad"],
                num_grad_quant_bins=integer_param("num_grad_quant_bins",
                                                  raw["num_grad_quant_bins"], 2,
                                                  MAX_GRAD_QUANT_BINS))


def settle_quantized_grad(params, objective, training_rows, weighted, has_categorical):
    """``params`` with ``quantized_grad="auto"`` decided for ``objective`` and data of
    ``training_rows`` rows (known after the scan pass): True for unweighted numeric data
    of at least ``QUANTIZED_FROM_ROWS`` rows that packed sums can hold
    (``quantize.max_rows``) and an objective with a bounded hessian, else False.  Given
    True or False, ``params`` as they are."""
    if params.quantized_grad != "auto":
        return params
    # an objective that weighs rows by their labels (scale_pos_weight, class_weight)
    # makes a weighted fit
    weighted = weighted or getattr(objective, "weighs_rows", lambda: False)()
    on = (getattr(objective, "bounded_hessian", False) and not weighted
          and not has_categorical
          and QUANTIZED_FROM_ROWS <= training_rows <= max_rows(params.num_grad_quant_bins))
    return dataclasses.replace(params, quantized_grad=on)


def changed_during_fit(name, value):
    """``value`` checked for parameter ``name``, changed by a training callback
    (``Booster.set_param``) for the rounds still to grow: only ``learning_rate``."""
    if name != "learning_rate":
        raise ValueError(f"{name} cannot change during a fit")
    return _real("learning_rate", value, 0.0, strict=True)


def check_feature_weights(values, n_features=None):
    """xgboost's ``feature_weights`` as a tuple of finite floats >= 0, not all 0, one per
    feature (``n_features``: checked when given); None stays None; ValueError/TypeError
    naming it otherwise."""
    if values is None:
        return None
    try:
        weights = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"feature_weights={values!r:.80} must be numbers, one per feature"
                        ) from None
    if weights.ndim != 1 or (n_features is not None and len(weights) != n_features):
        raise ValueError(f"feature_weights has shape {weights.shape}; X has "
                         f"{n_features or 'one weight per'} features (one weight each)")
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        f = int(np.flatnonzero(bad)[0])
        raise ValueError(f"feature_weights[{f}]={float(weights[f])!r} must be a finite "
                         "number >= 0")
    if not weights.any():
        raise ValueError("feature_weights are all 0: no feature could be sampled")
    return tuple(weights.tolist())


def check_booster(value):
    """xgboost's ``booster``: None or "gbtree" (trees are what daskboost grows)."""
    if value not in (None, "gbtree"):
        raise ValueError(f"booster={value!r:.80} is not supported: daskboost grows "
                         "gradient-boosted trees, booster='gbtree' (xgboost's 'dart' and "
                         "'gblinear' are not implemented)")


def check_device(value):
    """xgboost's ``device``: None or "cpu" (no GPU kernels)."""
    if value not in (None, "cpu"):
        raise ValueError(f"device={value!r:.80} is not supported: daskboost runs on CPUs "
                         "(device='cpu'); scale out with a dask.distributed cluster instead")


def one_given(name, first, first_place, second, second_place):
    """``first`` or ``second``, the two places ``name`` may come from (None: not given
    there); ValueError naming both places when both are given."""
    if first is not None and second is not None:
        raise ValueError(f"{name} given both {first_place} and {second_place}; give one")
    return second if first is None else first


# xgboost parameters that take one value here: {name: (accepted values, why no other)}
SINGLE_VALUED = {
    "sampling_method": ((None, "uniform"), "rows are sampled uniformly (xgboost's "
                        "'gradient_based' sampling is GPU-only there and not implemented)"),
    "multi_strategy": ((None, "one_output_per_tree"), "a multiclass model grows one tree "
                       "per class (vector-leaf trees are not implemented)"),
    "validate_parameters": ((None, True, False), "parameters are always validated here"),
}


def check_single_valued(estimator):
    """xgboost's parameters that take one value here (``SINGLE_VALUED``): ValueError
    naming the parameter and the value otherwise."""
    for name, (accepted, why) in SINGLE_VALUED.items():
        value = getattr(estimator, name)
        if not any(_is_value(value, a) for a in accepted):
            raise ValueError(f"{name}={value!r:.80} is not supported: {why}; accepted: "
                             f"{', '.join(repr(a) for a in accepted)}")


def _is_value(value, accepted):
    """``value`` is ``accepted``: None and booleans as themselves (numpy's bool too), an
    integer (not a bool) or a string by value."""
    if accepted is None or isinstance(accepted, bool):
        return value is accepted or (isinstance(value, np.bool_) and bool(value) is accepted)
    if isinstance(accepted, int):
        return (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
                and value == accepted)
    return isinstance(value, str) and value == accepted


def validate_params(raw, valid_objectives):
    """The ``TrainingParams`` of the raw parameters ``raw`` (a dict of every estimator
    parameter); raises on the first bad one."""
    objective = raw["objective"]
    if objective is not None and not callable(objective) and objective not in valid_objectives:
        valid = ", ".join(repr(o) for o in valid_objectives)
        raise ValueError(f"objective={objective!r} is not supported here; valid objectives: {valid}")
    base_score = raw["base_score"]
    if base_score is not None:
        base_score = _base_score(base_score)
    metric = raw["eval_metric"]
    metrics = metric if isinstance(metric, (list, tuple)) else [metric]
    for m in metrics:
        if m is not None and not (isinstance(m, (str, Metric)) or callable(m)):
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
    scale_pos_weight = _real("scale_pos_weight", raw.get("scale_pos_weight", 1.0), 0.0,
                             strict=True)
    if objective is not None:  # a defaulted objective is checked once the labels are known
        check_scale_pos_weight(objective, scale_pos_weight)
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
        quantile_alpha=quantile_alphas(raw["quantile_alpha"]),
        tweedie_variance_power=_real("tweedie_variance_power", raw["tweedie_variance_power"],
                                     1.0),
        base_score=base_score,
        scale_pos_weight=scale_pos_weight,
        **_aft_params(raw),
        class_weight=_class_weight(raw.get("class_weight")),
        monotone_constraints=_monotone_constraints(raw.get("monotone_constraints")),
        interaction_constraints=_interaction_constraints(raw.get("interaction_constraints")),
        **categorical_params(raw),
        **quantization_params(raw),
        **ranking_params(raw),
        num_parallel_tree=(1 if raw.get("num_parallel_tree") is None else
                           integer_param("num_parallel_tree", raw["num_parallel_tree"], 1)),
    )


def _class_weight(raw):
    """scikit-learn's ``class_weight``: None, "balanced", or a dict {label: factor >= 0}
    (as a tuple of pairs, in the dict's order)."""
    if raw is None or (isinstance(raw, str) and raw == "balanced"):
        return raw
    if not isinstance(raw, dict):
        raise TypeError(f"class_weight={raw!r:.200} must be None, 'balanced' or a dict "
                        "{class label: weight}")
    return tuple((label, _real(f"class_weight[{label!r}]", w, 0.0)) for label, w in raw.items())


MONOTONE_DIRECTIONS = (-1, 0, 1)


def _direction(value, raw):
    """One monotone direction; ValueError naming the whole parameter otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or int(value) not in MONOTONE_DIRECTIONS:
        raise ValueError(f"monotone_constraints={raw!r:.200} must hold only -1, 0 or 1; "
                         f"got {value!r:.40}")
    return int(value)


def _monotone_constraints(raw):
    """xgboost's three forms of ``monotone_constraints``: a sequence of -1/0/1 (one per
    feature), a dict {column name: -1/0/1} (missing names: 0), or the string
    "(1,0,-1)". Returns a tuple of ints, a tuple of (name, int) pairs, or None."""
    if raw is None:
        return None
    value = raw
    if isinstance(value, str):
        text = value.strip()
        if len(text) < 2 or text[0] + text[-1] not in ("()", "[]"):
            raise ValueError(f"monotone_constraints={raw!r:.200} must look like '(1,0,-1)'")
        tokens = [t.strip() for t in text[1:-1].split(",")]
        if tokens == [""]:
            return None
        try:
            value = [int(t) for t in tokens]
        except ValueError:
            raise ValueError(f"monotone_constraints={raw!r:.200} must hold only -1, 0 or 1"
                             ) from None
    if isinstance(value, dict):
        for name in value:
            if not isinstance(name, str):
                raise ValueError(f"monotone_constraints={raw!r:.200}: keys must be column "
                                 f"names (strings); got {name!r:.40}")
        pairs = tuple((name, _direction(v, raw)) for name, v in value.items())
        return pairs or None
    if not isinstance(value, (list, tuple)) and not hasattr(value, "tolist"):
        raise TypeError(f"monotone_constraints={raw!r:.200} must be a list of -1/0/1, a "
                        "dict {column name: -1/0/1} or a string like '(1,0,-1)'")
    if hasattr(value, "tolist"):  # numpy array
        value = value.tolist()
    return tuple(_direction(v, raw) for v in value) or None


def _interaction_constraints(raw):
    """xgboost's ``interaction_constraints``: a list of lists of column names or feature
    indices (or its JSON string). Returns a tuple of tuples, or None."""
    if raw is None:
        return None
    value = raw
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"interaction_constraints={raw!r:.200} must be a list of lists of "
                             "column names or feature indices") from None
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(group, (list, tuple, set, frozenset)) for group in value):
        raise TypeError(f"interaction_constraints={raw!r:.200} must be a list of lists of "
                        "column names or feature indices")
    groups = []
    for group in value:
        for item in group:
            if isinstance(item, bool) or not isinstance(item, (str, numbers.Integral)):
                raise TypeError(f"interaction_constraints={raw!r:.200}: {item!r:.40} is not "
                                "a column name or a feature index")
        groups.append(tuple(item if isinstance(item, str) else int(item) for item in group))
    return tuple(groups) or None


def resolve_constraints(params, feature_names, n_features, feature_types=None):
    """``params`` with the split constraints settled on the data's features (known once
    ``data.describe_features`` has run; called before any pass over the data):
    ``monotone_constraints`` one direction per feature, or None when all are 0 (xgboost:
    no constraint); ``interaction_constraints`` sorted feature indices per set.
    ``feature_types``: 'q'/'c' per feature; monotone constraints need numeric features
    only (the categorical split search does not bound weights)."""
    monotone = params.monotone_constraints
    if monotone is not None:
        monotone = _monotone_per_feature(monotone, feature_names, n_features)
        monotone = monotone if any(monotone) else None
    if monotone is not None and feature_types is not None and "c" in feature_types:
        names = feature_names or [str(f) for f in range(n_features)]
        categorical = [names[f] for f, t in enumerate(feature_types) if t == "c"]
        raise ValueError(f"monotone_constraints={params.monotone_constraints!r} with the "
                         f"categorical features {categorical} is not supported: constrain a "
                         "model of numeric features, or make those features numeric "
                         "(feature_types / enable_categorical=False)")
    interactions = params.interaction_constraints
    if interactions is not None:
        interactions = tuple(tuple(sorted({_feature_index(item, interactions, feature_names,
                                                          n_features) for item in group}))
                             for group in interactions)
    return dataclasses.replace(params, monotone_constraints=monotone,
                               interaction_constraints=interactions)


def _monotone_per_feature(monotone, feature_names, n_features):
    if monotone and isinstance(monotone[0], tuple):  # {column name: direction}
        given = dict(monotone)
        if feature_names is None:
            raise ValueError(f"monotone_constraints={given!r:.200} names columns, but X has "
                             "no column names; pass a list with one value per feature")
        unknown = [name for name in given if name not in feature_names]
        if unknown:
            raise ValueError(f"monotone_constraints={given!r:.200} names columns not in X: "
                             f"{unknown}; X's columns: {feature_names}")
        return tuple(given.get(name, 0) for name in feature_names)
    if len(monotone) != n_features:
        raise ValueError(f"monotone_constraints={monotone!r:.200} has {len(monotone)} values; "
                         f"X has {n_features} features (one value per feature)")
    return monotone


def _feature_index(item, interactions, feature_names, n_features):
    """The index of one feature of ``interaction_constraints`` (a name or an index)."""
    if isinstance(item, str):
        if feature_names is None or item not in feature_names:
            where = "X has no column names" if feature_names is None else \
                f"X's columns: {feature_names}"
            raise ValueError(f"interaction_constraints={interactions!r:.200} names column "
                             f"{item!r}, not in X ({where})")
        return feature_names.index(item)
    if not 0 <= item < n_features:
        raise ValueError(f"interaction_constraints={interactions!r:.200}: feature index "
                         f"{item} is out of range; X has {n_features} features")
    return item
