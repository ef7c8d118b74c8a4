"""scikit-learn style estimators: ``DaskBoostRegressor`` and ``DaskBoostClassifier``.

They follow scikit-learn's rules (``__init__`` only stores parameters, ``fit`` validates
them, fitted attributes end in ``_``, ``get_params``/``set_params`` so ``clone`` and
pipelines work) without importing scikit-learn, and use xgboost's parameter names.
"""

import inspect
import json
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from .booster import Booster, predict_block, train, write_json_atomically
from .data import describe_features, feature_block, is_dask_collection
from .params import validate_params

_ESTIMATOR_KEY = "estimator"


class _DaskBoostModel:
    _estimator_type = None
    _objectives = ()

    def __init__(self, *, n_estimators=100, max_depth=6, learning_rate=0.3, reg_lambda=1.0,
                 gamma=0.0, min_child_weight=1.0, max_bin=256, base_score=None, objective=None):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.reg_lambda = reg_lambda
        self.gamma = gamma
        self.min_child_weight = min_child_weight
        self.max_bin = max_bin
        self.base_score = base_score
        self.objective = objective

    # ---- scikit-learn parameter protocol ----------------------------------------------
    @classmethod
    def _param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values() if p.name != "self")

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {valid}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = type(self)().get_params()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k]]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):  # only called by scikit-learn, so importing it here is fine
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags
        tags = Tags(estimator_type=self._estimator_type, target_tags=TargetTags(required=True))
        if self._estimator_type == "classifier":
            tags.classifier_tags = ClassifierTags()
        else:
            tags.regressor_tags = RegressorTags()
        tags.input_tags.allow_nan = True
        return tags

    # ---- fitting ------------------------------------------------------------------------
    def _checked_params(self):
        raw = self.get_params()
        if raw["objective"] is None:
            raw["objective"] = self._objectives[0]
        return validate_params(raw, self._objectives)

    def _fit(self, X, y, sample_weight, classifier):
        params = self._checked_params()
        booster, prepared = train(params, X, y, sample_weight, classifier=classifier)
        self._set_fitted(booster)
        return prepared

    def _set_fitted(self, booster):
        self._booster = booster
        self.n_features_in_ = booster.n_features
        if booster.feature_names is not None:
            self.feature_names_in_ = np.array(booster.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def get_booster(self):
        """The fitted ``Booster``."""
        self._check_fitted()
        return self._booster

    def _check_fitted(self):
        if not hasattr(self, "_booster"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")

    # ---- prediction ---------------------------------------------------------------------
    def _check_predict_input(self, X):
        self._check_fitted()
        names, n_features = describe_features(X)
        booster = self._booster
        if names is not None and booster.feature_names is not None and names != booster.feature_names:
            missing = [c for c in booster.feature_names if c not in names]
            extra = [c for c in names if c not in booster.feature_names]
            detail = (f"missing {missing}, unexpected {extra}" if missing or extra
                      else "same columns in a different order")
            raise ValueError(f"X's columns do not match the training columns ({detail}); "
                             f"expected {booster.feature_names}")
        if n_features != booster.n_features:
            raise ValueError(f"X has {n_features} features, but the model was trained with "
                             f"{booster.n_features}")

    def _predict_values(self, X, output_margin):
        """Margins or transformed predictions; dask in -> dask out, in-memory -> numpy."""
        self._check_predict_input(X)
        booster = self._booster
        if not is_dask_collection(X):
            return _predict_in_memory(booster, X, output_margin)
        import dask.dataframe as dd
        if isinstance(X, dd.DataFrame):
            return X.map_partitions(_predict_series, booster, output_margin,
                                    meta=pd.Series(dtype=np.float64))
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        return X.map_blocks(_predict_array_block, booster, output_margin, dtype=np.float64,
                            drop_axis=1)

    # ---- persistence --------------------------------------------------------------------
    def _model_extras(self):
        return {}

    def _check_extras(self, extras):
        pass

    def _load_extras(self, extras):
        pass

    def save_model(self, path):
        """Write the fitted model as versioned JSON (atomically: no half-written file)."""
        payload = self.get_booster().to_dict()
        params = {k: v.item() if isinstance(v, np.generic) else v
                  for k, v in self.get_params().items()}
        payload[_ESTIMATOR_KEY] = {"class": type(self).__name__, "params": params,
                                   **self._model_extras()}
        write_json_atomically(path, payload)

    def load_model(self, path):
        """Load a model written by ``save_model``; returns self."""
        with open(os.fspath(path)) as f:
            payload = json.load(f)
        booster = Booster.from_dict(payload)
        extras = payload.get(_ESTIMATOR_KEY, {})
        self._check_extras(extras)
        if "params" in extras:
            self.set_params(**{k: v for k, v in extras["params"].items() if k in self._param_names()})
        self._load_extras(extras)
        self._set_fitted(booster)
        return self


class DaskBoostRegressor(_DaskBoostModel):
    """Gradient-boosted trees for regression (objective ``reg:squarederror``)."""

    _estimator_type = "regressor"
    _objectives = ("reg:squarederror", "binary:logistic")

    def fit(self, X, y, sample_weight=None):
        """Fit on X (dask/pandas/numpy) and y aligned with it; returns self."""
        self._fit(X, y, sample_weight, classifier=False)
        return self

    def predict(self, X, output_margin=False):
        return self._predict_values(X, output_margin)

    def score(self, X, y, sample_weight=None):
        """R^2 of the predictions (in-memory data)."""
        y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(self.predict(X))
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        mean = np.average(y, weights=w)
        return 1.0 - np.sum(w * (y - pred) ** 2) / np.sum(w * (y - mean) ** 2)


class DaskBoostClassifier(_DaskBoostModel):
    """Gradient-boosted trees for binary classification (objective ``binary:logistic``).

    Any two labels are accepted; they are sorted into ``classes_`` and the second is
    the positive class.
    """

    _estimator_type = "classifier"
    _objectives = ("binary:logistic",)

    def fit(self, X, y, sample_weight=None):
        """Fit on X (dask/pandas/numpy) and labels y aligned with it; returns self."""
        prepared = self._fit(X, y, sample_weight, classifier=True)
        self.classes_ = prepared.classes
        self.n_classes_ = len(self.classes_)
        return self

    def predict_proba(self, X):
        """Probabilities of ``classes_`` (two columns)."""
        p = self._predict_values(X, output_margin=False)
        if isinstance(p, np.ndarray):
            return np.column_stack([1.0 - p, p])
        if _is_dask_series(p):
            return p.to_frame(name=_column(self.classes_[1])).map_partitions(
                _two_columns, [_column(c) for c in self.classes_],
                meta=pd.DataFrame({_column(c): pd.Series(dtype=np.float64) for c in self.classes_}))
        return p.map_blocks(lambda b: np.column_stack([1.0 - b, b]), new_axis=1,
                            chunks=(p.chunks[0], (2,)), dtype=np.float64)

    def predict(self, X, output_margin=False):
        """Class labels (or margins with ``output_margin=True``)."""
        p = self._predict_values(X, output_margin)
        if output_margin:
            return p
        classes = self.classes_
        if isinstance(p, np.ndarray):
            return classes[(p > 0.5).astype(np.int64)]
        if _is_dask_series(p):
            return p.map_partitions(lambda s: pd.Series(classes[(s.to_numpy() > 0.5).astype(np.int64)],
                                                        index=s.index),
                                    meta=pd.Series(dtype=classes.dtype))
        return p.map_blocks(lambda b: classes[(b > 0.5).astype(np.int64)], dtype=classes.dtype)

    def score(self, X, y, sample_weight=None):
        """Accuracy (in-memory data)."""
        correct = np.asarray(self.predict(X)) == np.asarray(y)
        return float(np.average(correct, weights=sample_weight))

    def _model_extras(self):
        return {"classes": self.classes_.tolist()}

    def _check_extras(self, extras):
        if "classes" not in extras:
            raise ValueError("the model file has no classes; was it saved by a DaskBoostClassifier?")

    def _load_extras(self, extras):
        self.classes_ = np.array(extras["classes"])
        self.n_classes_ = len(self.classes_)


def _column(label):
    return label if isinstance(label, str) else str(label)


def _two_columns(frame, columns):
    p = frame.iloc[:, 0].to_numpy()
    return pd.DataFrame({columns[0]: 1.0 - p, columns[1]: p}, index=frame.index)


def _is_dask_series(obj):
    import dask.dataframe as dd
    return isinstance(obj, dd.Series)


def _predict_array_block(block, booster, output_margin):
    return predict_block(booster, block, output_margin)


def _predict_series(part, booster, output_margin):
    return pd.Series(predict_block(booster, part, output_margin), index=part.index)


def _predict_in_memory(booster, X, output_margin, rows_per_chunk=65536):
    """Predict a numpy/pandas X on a few threads (the kernel releases the GIL)."""
    values = np.ascontiguousarray(feature_block(X))
    chunks = [values[i:i + rows_per_chunk] for i in range(0, values.shape[0], rows_per_chunk)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        margin = np.concatenate([np.empty(0)] + list(pool.map(booster.predict_margin, chunks)))
    return booster.output(margin, output_margin)
