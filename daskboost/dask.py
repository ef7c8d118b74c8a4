"""``xgboost.dask``'s functional API: a script written for it runs with
``from daskboost import dask as dxgb`` in place of ``from xgboost import dask as dxgb``.

``DaskDMatrix(client, X, y, weight=..., base_margin=..., missing=...)`` holds the dask
collections (nothing is read until ``train``); ``train(client, params, dtrain,
num_boost_round, evals=[(dvalid, "valid")], early_stopping_rounds=...)`` returns xgboost's
``{"booster": Booster, "history": evals_result}``; ``predict`` and ``inplace_predict``
give lazy dask predictions.  The fit is ``daskboost.train``'s (the estimators' fit): on
the ``client`` given, or the active scheduler when it is None (unlike xgboost's, the
threaded scheduler too).  ``DaskXGBClassifier``, ``DaskXGBRegressor``,
``DaskXGBRanker`` and the random forests ``DaskXGBRFClassifier``/``DaskXGBRFRegressor``
are the estimators (``DaskBoostClassifier``/``DaskBoostRegressor``/``DaskBoostRanker``/
``DaskBoostRF*`` under xgboost.dask's names), with xgboost.dask's ``client``
attribute: the client a fit runs on.  Ranking's query ids (``qid``) are a dask
collection partitioned like X, each query's rows in one partition; survival's
``label_lower_bound`` / ``label_upper_bound`` dask collections partitioned like X.
"""

import contextlib
import math

import numpy as np

from .booster import Booster, strict_shape_of
from .dmatrix import DMatrix, QuantileDMatrix
from .native_train import train as native_train
from .sklearn import (DaskBoostClassifier, DaskBoostRanker, DaskBoostRegressor,
                      DaskBoostRFClassifier, DaskBoostRFRegressor, booster_predictions)

__all__ = ["DaskDMatrix", "DaskQuantileDMatrix", "DaskXGBClassifier", "DaskXGBRFClassifier",
           "DaskXGBRFRegressor", "DaskXGBRanker", "DaskXGBRegressor", "inplace_predict", "predict", "train"]

# xgboost.dask's estimators are daskboost's: the same classes under xgboost.dask's names
# (their ``client`` attribute included), so a script's ``dxgb.DaskXGBClassifier(...)``
# fits, predicts lazily, pickles and saves as ``DaskBoostClassifier`` does
DaskXGBClassifier = DaskBoostClassifier
DaskXGBRegressor = DaskBoostRegressor
DaskXGBRanker = DaskBoostRanker
DaskXGBRFClassifier = DaskBoostRFClassifier
DaskXGBRFRegressor = DaskBoostRFRegressor


class DaskDMatrix(DMatrix):
    """xgboost.dask's ``DaskDMatrix``: a ``DMatrix`` (``daskboost.dmatrix``) of X (a dask
    DataFrame or Array; pandas and numpy too) with its label, weights and base margins,
    aligned with it.  ``client`` is not used here: ``train`` takes its own."""

    def __init__(self, client, data, label=None, **kwargs):
        super().__init__(data, label, **kwargs)


class DaskQuantileDMatrix(DaskDMatrix, QuantileDMatrix):
    """xgboost.dask's ``DaskQuantileDMatrix``: a ``QuantileDMatrix`` (the same as
    ``DaskDMatrix`` here, with ``max_bin`` for the fit on it)."""


def train(client, params, dtrain, num_boost_round=10, *, evals=None, obj=None,
          early_stopping_rounds=None, xgb_model=None, verbose_eval=True, callbacks=None,
          custom_metric=None, maximize=None, coll_cfg=None):
    """Train on ``dtrain`` (a ``DaskDMatrix``); returns ``{"booster": Booster,
    "history": {eval name: {metric: [value per round]}}}`` as xgboost.dask's ``train``.
    ``evals``: ``(DaskDMatrix, name)`` pairs, each with its own weights and base margins;
    ``params``, ``early_stopping_rounds``, ``xgb_model``, ``verbose_eval``,
    ``callbacks``, ``obj``, ``custom_metric`` and ``maximize`` as ``daskboost.train``'s."""
    if not isinstance(dtrain, DMatrix):
        raise TypeError(f"dtrain must be a DaskDMatrix; got {type(dtrain).__name__}")
    history = {}
    with _scheduler_of(client):
        booster = native_train(params, dtrain, num_boost_round, evals=evals,
                               early_stopping_rounds=early_stopping_rounds,
                               evals_result=history, verbose_eval=verbose_eval,
                               xgb_model=xgb_model, callbacks=callbacks, obj=obj,
                               custom_metric=custom_metric, maximize=maximize)
    return {"booster": booster, "history": history}


def predict(client, model, data, *, output_margin=False, missing=math.nan, pred_leaf=False,
            pred_contribs=False, approx_contribs=False, pred_interactions=False,
            validate_features=True, iteration_range=(0, 0), strict_shape=False):
    """Lazy predictions of ``model`` (``train``'s result, a Booster or a future of one) on
    ``data`` (a ``DaskDMatrix`` or a dask collection): a dask array, one block per
    partition (a dask DataFrame's predictions as a dask Series, or a DataFrame of
    one column per output).  Margins, leaves and contributions as ``Booster.predict``'s;
    ``iteration_range=(0, 0)``: every round.  ``strict_shape``: xgboost's shapes that keep
    every axis (``Booster.predict``'s), as a dask array."""
    booster = _booster_of(model)
    kind = _prediction_kind(output_margin, pred_leaf, pred_contribs, approx_contribs,
                            pred_interactions)
    if isinstance(data, DMatrix):  # (its missing value applied already)
        values = booster_predictions(booster, data.data, kind, _rounds(iteration_range),
                                     validate_features)
    else:
        values = booster_predictions(booster, data, kind, _rounds(iteration_range),
                                     validate_features, missing=missing)
    return _strict(values, booster, kind) if strict_shape else values


def inplace_predict(client, model, data, *, iteration_range=(0, 0), predict_type="value",
                    missing=math.nan, validate_features=True, base_margin=None,
                    strict_shape=False):
    """``predict`` with xgboost's ``inplace_predict`` arguments: ``predict_type`` "value"
    or "margin", ``base_margin`` per row (partitioned like ``data``)."""
    if predict_type not in ("value", "margin"):
        raise ValueError(f"predict_type={predict_type!r} must be 'value' or 'margin'")
    booster = _booster_of(model)
    kind = "margin" if predict_type == "margin" else "value"
    values = booster_predictions(booster, data, kind, _rounds(iteration_range),
                                 validate_features, base_margin, missing)
    return _strict(values, booster, kind) if strict_shape else values


# ---- helpers --------------------------------------------------------------------------

def _scheduler_of(client):
    """The fit's scheduler: ``client`` (made the current client), or the active one."""
    return contextlib.nullcontext() if client is None else client.as_current()


def _booster_of(model):
    """The Booster in ``model``: ``train``'s result, a Booster, or a future of either."""
    if hasattr(model, "result") and callable(model.result):  # a distributed Future
        model = model.result()
    if isinstance(model, dict) and "booster" in model:
        model = model["booster"]
    if not isinstance(model, Booster):
        raise TypeError(f"model must be train's result or a daskboost Booster; got "
                        f"{type(model).__name__}")
    return model


def _strict(values, booster, kind):
    """Lazy predictions ``values`` (a dask array, Series or DataFrame) in xgboost's
    ``strict_shape`` (``booster.strict_shape_of``), as a dask array."""
    if not hasattr(values, "map_blocks"):  # a dask Series / DataFrame: its rows' values
        values = values.to_dask_array()
    shaped = "leaf" if kind == "leaf" else "contributions" if kind.startswith(
        ("contributions", "interactions")) else "value"
    trailing = strict_shape_of(np.zeros((1,) + values.shape[1:], values.dtype),
                               booster.n_outputs, shaped, booster.parallel_trees).shape[1:]
    return values.map_blocks(strict_shape_of, booster.n_outputs, shaped,
                             booster.parallel_trees,
                             chunks=(values.chunks[0],) + tuple((d,) for d in trailing),
                             new_axis=list(range(values.ndim, 1 + len(trailing)))
                             if 1 + len(trailing) > values.ndim else None,
                             dtype=values.dtype)


def _rounds(iteration_range):
    return None if tuple(iteration_range) == (0, 0) else tuple(iteration_range)


def _prediction_kind(output_margin, pred_leaf, pred_contribs, approx_contribs,
                     pred_interactions):
    kinds = [k for k, on in (("leaf", pred_leaf), ("interactions", pred_interactions),
                             ("contributions", pred_contribs)) if on]
    if len(kinds) > 1:
        raise ValueError("give one of pred_leaf, pred_contribs and pred_interactions")
    if kinds:
        return kinds[0] + ("-approx" if approx_contribs and kinds[0] != "leaf" else "")
    return "margin" if output_margin else "value"
