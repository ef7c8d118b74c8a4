"""Hyperparameters: xgboost's names, defaults and meanings, validated before any work.

Each error names the parameter and the value: ``learning_rate=-0.1 must be > 0``.
"""

import math
import numbers

from .binning import MAX_BIN_LIMIT


def _integer(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={value!r} must be an integer")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name}={value!r} must be {bound}")
    return int(value)


def _real(name, value, low, strict=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={value!r} must be a number")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name}={value!r} must be finite")
    if value < low or (strict and value == low):
        raise ValueError(f"{name}={value!r} must be {'>' if strict else '>='} {low}")
    return value


def validate_params(raw, valid_objectives):
    """Return a dict of checked, normalised hyperparameters (raises on the first bad one)."""
    objective = raw["objective"]
    if objective not in valid_objectives:
        valid = ", ".join(repr(o) for o in valid_objectives)
        raise ValueError(f"objective={objective!r} is not supported here; valid objectives: {valid}")
    base_score = raw["base_score"]
    if base_score is not None:
        base_score = _real("base_score", base_score, -math.inf)
    return {
        "objective": objective,
        "n_estimators": _integer("n_estimators", raw["n_estimators"], 1),
        "max_depth": _integer("max_depth", raw["max_depth"], 1),
        "learning_rate": _real("learning_rate", raw["learning_rate"], 0.0, strict=True),
        "reg_lambda": _real("reg_lambda", raw["reg_lambda"], 0.0),
        "gamma": _real("gamma", raw["gamma"], 0.0),
        "min_child_weight": _real("min_child_weight", raw["min_child_weight"], 0.0),
        "max_bin": _integer("max_bin", raw["max_bin"], 2, MAX_BIN_LIMIT),
        "base_score": base_score,
    }
