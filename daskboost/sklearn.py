"""scikit-learn style estimators: ``DaskBoostRegressor``, ``DaskBoostClassifier`` and
``DaskBoostRanker``.

They follow scikit-learn's rules (``__init__`` only stores parameters, ``fit`` validates
them, fitted attributes end in ``_``, ``get_params``/``set_params`` so ``clone`` and
pipelines work, ``NotFittedError`` before ``fit``, array-likes read as ``check_array``
reads them; its ``check_estimator`` passes) and use xgboost's parameter names.

They do not inherit scikit-learn's base classes: importing scikit-learn costs ~0.65 s
(it imports scipy.stats), which would more than double ``import daskboost``.
scikit-learn is imported only where it is the API: its exception and warning classes
when one is raised, and its tags when it asks for them.
"""

import contextlib
import dataclasses
import functools
import inspect
import math
import os
import sys
import warnings

import numpy as np
import pandas as pd

from . import inspection
from .blockstore import StoreConfig, check_cache_dirs, parse_memory_budget
from .booster import Booster, map_row_chunks, write_model_file
from .callbacks import CallbackList
from .contributions import wants_contributions
from .training import Checkpoint, train
from .data import (describe_features, feature_block, has_target_columns, is_dask_collection,
                   margin_block, table_as_frame)
from .links import class_index, sigmoid_direct, softmax
from .model_file import ESTIMATOR_KEY, garbage_collection_paused, model_source, read_model_json
from .metrics import Metric, get_metric, partial_of
from .xgboost_format import base_scores, is_xgboost_model
from .objectives import (AFT_DEFAULTS, OBJECTIVES, RANKING, classifier_objectives,
                         is_classification,
                         objective_kind, objectives_of_kind, regressor_objectives)
from .query_groups import group_pointer, qid_block, query_input, row_weights
from .local_threads import check_n_jobs, local_threads
from .metadata_routing import RoutingConsumer
from .missing_values import check_missing, with_missing_as_nan
from .params import (CATEGORICAL_DEFAULTS, QUANTIZATION_DEFAULTS, UNUSED_XGBOOST_KEYWORDS,
                     XGBOOST_ALIASES, check_booster, check_device, check_feature_weights,
                     check_single_valued, integer_param, one_given, validate_params)
from .progress import reporter_for
from .runtime import leaves_worker_pool
from .sparse import is_sparse
from .verbosity import check_verbosity, speaking


# how a fit runs, not what it learns: not saved with the model (a model trained out of
# core or with progress on is the same model, and a cache path means nothing elsewhere);
# xgboost's parameters that take one value here (``booster``, ``device``, ...); and the
# callbacks, code that a model file cannot hold
RUN_SETTINGS = ("memory_budget", "cache_dir", "cache_compression", "verbose", "n_jobs",
                "verbosity", "booster", "device", "sampling_method",
                "multi_strategy", "validate_parameters", "callbacks")
# parameters added after model files existed: written only when they differ from their
# defaults, so a model that does not use them keeps its bytes; a file without them loads
# them at their defaults
WRITTEN_WHEN_CHANGED = {"monotone_constraints": None, "interaction_constraints": None,
                        "scale_pos_weight": 1.0, "importance_type": "gain",
                        "class_weight": None, "missing": np.nan, "feature_weights": None,
                        "num_parallel_tree": None,
                        **AFT_DEFAULTS,
                        **CATEGORICAL_DEFAULTS,
                        **QUANTIZATION_DEFAULTS}


def _on_own_client(method):
    """An estimator's ``method`` run on the estimator's ``client`` when one is set
    (``_DaskBoostModel._on_client``), every computation of its inputs included."""
    @functools.wraps(method)
    def on_client(self, *args, **kwargs):
        with self._on_client():
            return method(self, *args, **kwargs)
    return on_client


class _DaskBoostModel(RoutingConsumer):
    _estimator_type = None
    _objectives = ()

    def __init__(self, *, n_estimators=100, max_depth=6, learning_rate=0.3, reg_lambda=1.0,
                 gamma=0.0, min_child_weight=1.0, max_bin=256, base_score=None, objective=None,
                 eval_metric=None, early_stopping_rounds=None, num_class=None, huber_slope=1.0,
                 quantile_alpha=0.5, tweedie_variance_power=1.5, reg_alpha=0.0,
                 max_delta_step=None, subsample=1.0, colsample_bytree=1.0, colsample_bylevel=1.0,
                 colsample_bynode=1.0, random_state=None, tree_method="hist",
                 grow_policy="depthwise", max_leaves=0, trim_fraction=0.0, verbose=False,
                 checkpoint_path=None, checkpoint_interval=10, memory_budget="auto",
                 cache_dir=None, cache_compression="lz4", monotone_constraints=None,
                 interaction_constraints=None, enable_categorical=True, feature_types=None,
                 max_cat_to_onehot=4, max_cat_threshold=64, max_cat=4096,
                 quantized_grad="auto", num_grad_quant_bins=4, scale_pos_weight=1.0,
                 importance_type="gain", class_weight=None, n_jobs=None, missing=np.nan,
                 verbosity=None, booster=None, device=None, callbacks=None,
                 feature_weights=None, sampling_method=None, num_parallel_tree=None,
                 aft_loss_distribution="normal", aft_loss_distribution_scale=1.0,
                 multi_strategy=None, validate_parameters=None, **xgboost_keywords):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.reg_lambda = reg_lambda
        self.gamma = gamma
        self.min_child_weight = min_child_weight
        self.max_bin = max_bin
        self.base_score = base_score
        self.objective = objective
        self.eval_metric = eval_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.num_class = num_class
        self.huber_slope = huber_slope
        self.quantile_alpha = quantile_alpha
        self.tweedie_variance_power = tweedie_variance_power
        self.reg_alpha = reg_alpha
        self.max_delta_step = max_delta_step
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.colsample_bynode = colsample_bynode
        self.random_state = random_state
        self.tree_method = tree_method
        self.grow_policy = grow_policy
        self.max_leaves = max_leaves
        self.trim_fraction = trim_fraction
        self.verbose = verbose
        self.checkpoint_path = checkpoint_path
        self.checkpoint_interval = checkpoint_interval
        self.memory_budget = memory_budget
        self.cache_dir = cache_dir
        self.cache_compression = cache_compression
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.enable_categorical = enable_categorical
        self.feature_types = feature_types
        self.max_cat_to_onehot = max_cat_to_onehot
        self.max_cat_threshold = max_cat_threshold
        self.max_cat = max_cat
        self.quantized_grad = quantized_grad
        self.num_grad_quant_bins = num_grad_quant_bins
        self.scale_pos_weight = scale_pos_weight
        self.importance_type = importance_type
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.missing = missing
        self.verbosity = verbosity
        self.booster = booster
        self.device = device
        self.callbacks = callbacks
        self.feature_weights = feature_weights
        self.sampling_method = sampling_method
        self.num_parallel_tree = num_parallel_tree
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = aft_loss_distribution_scale
        self.multi_strategy = multi_strategy
        self.validate_parameters = validate_parameters
        self._take_xgboost_keywords(xgboost_keywords)

    def _take_xgboost_keywords(self, keywords):
        """xgboost's estimators take any booster parameter in ``**kwargs``; here every
        parameter is named, and its native aliases (``eta=0.1``: ``learning_rate``) set
        the named one: ``get_params`` gives that name, so ``clone`` and searches work.
        Keywords old xgboost versions took (``use_label_encoder``) are accepted with a
        warning; anything else is the TypeError of an unknown keyword."""
        if not keywords:  # (the common case: every construction, every clone)
            return
        defaults = {name: p.default for name, p in inspect.signature(type(self)).parameters.items()}
        for key, value in keywords.items():
            if key in UNUSED_XGBOOST_KEYWORDS:
                warnings.warn(f"{type(self).__name__}({key}={value!r}) is not used: "
                              f"{UNUSED_XGBOOST_KEYWORDS[key]}", UserWarning, stacklevel=3)
                continue
            if key not in XGBOOST_ALIASES:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                                f"argument {key!r} (the parameters: get_params(); xgboost's "
                                f"aliases {sorted(XGBOOST_ALIASES)} are taken too)")
            name = XGBOOST_ALIASES[key]
            current = getattr(self, name)
            if not _same_value(current, defaults[name]) and not _same_value(current, value):
                raise ValueError(f"{key}={value!r} and {name}={current!r} are the same "
                                 "parameter; give one")
            setattr(self, name, value)

    # ---- scikit-learn parameter protocol ----------------------------------------------
    @classmethod
    def _param_names(cls):
        """The parameters of the constructors of the class and of its bases up to this
        one (``DaskBoostRanker`` adds its own to the shared ones)."""
        names = set()
        for klass in cls.__mro__:
            if "__init__" in vars(klass) and issubclass(klass, _DaskBoostModel):
                names.update(p.name for p in inspect.signature(klass.__init__).parameters.values()
                             if p.name != "self" and p.kind != p.VAR_KEYWORD)
        return sorted(names)

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for name, value in params.items():
            name = XGBOOST_ALIASES.get(name, name)  # (xgboost's set_params(eta=...))
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {valid}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = type(self)().get_params()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not _same_value(v, defaults[k])]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):  # only called by scikit-learn, so importing it here is fine
        from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags
        several = self._estimator_type in ("classifier", "regressor")  # (a column per target)
        tags = Tags(estimator_type=self._estimator_type,
                    target_tags=TargetTags(required=True, multi_output=several))
        if self._estimator_type == "classifier":
            tags.classifier_tags = ClassifierTags(multi_label=True)
        else:
            tags.regressor_tags = RegressorTags()
        tags.input_tags.allow_nan = True   # missing values take the learned default direction
        tags.input_tags.sparse = True      # entries not stored are missing
        return tags

    def _repr_html_(self):
        """Jupyter's rich display: scikit-learn's estimator diagram, as its own estimators
        show, where scikit-learn is installed and its ``display`` setting is "diagram";
        else None (Jupyter then shows the text repr)."""
        try:
            import sklearn
            from sklearn.utils import estimator_html_repr
        except ImportError:
            return None
        if sklearn.get_config().get("display") != "diagram":
            return None
        return estimator_html_repr(self)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_booster")

    # ---- xgboost.dask's ``client`` ------------------------------------------------------
    @property
    def client(self):
        """The ``distributed.Client`` a fit runs on (xgboost.dask's estimators'
        attribute); None, the default: the active scheduler (the current client, if
        any, else dask's local one).  Not a parameter: ``clone``, pickling and model
        files leave it out."""
        return self.__dict__.get("_client")

    @client.setter
    def client(self, client):
        if client is not None and not callable(getattr(client, "as_current", None)):
            raise TypeError(f"client must be a distributed.Client or None; got "
                            f"{type(client).__name__}")
        self.__dict__["_client"] = client

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_client", None)  # (a connection, not part of the model)
        return state

    def _on_client(self):
        """The scope of a fit: on ``client`` when one is set, else the active scheduler."""
        client = self.client
        return contextlib.nullcontext() if client is None else client.as_current()

    # ---- fitting ------------------------------------------------------------------------
    def _check_settings(self):
        """Check the parameters that are not training parameters (``validate_params``):
        how the fit runs and reads its input."""
        inspection.check_importance_type(self.importance_type)
        check_n_jobs(self.n_jobs)
        check_missing(self.missing)
        check_verbosity(self.verbosity)
        check_booster(self.booster)
        check_device(self.device)
        check_single_valued(self)
        reporter_for(self.verbose)

    def _checked_params(self):
        raw = self.get_params()
        params = validate_params(raw, self._objectives)
        self._check_settings()
        if params.class_weight is not None and self._estimator_type != "classifier":
            raise ValueError(f"class_weight={self.class_weight!r:.120} weighs classes: "
                             f"{type(self).__name__} has none (leave it None)")
        if params.early_stopping_rounds is not None and not self._fit_has_eval_set:
            raise ValueError(f"early_stopping_rounds={params.early_stopping_rounds} needs an "
                             "eval_set in fit()")
        return params

    @leaves_worker_pool
    @_on_own_client
    def _fit(self, X, y, sample_weight, classifier, eval_set, sample_weight_eval_set, xgb_model,
             base_margin=None, base_margin_eval_set=None, resume=False, callbacks=None,
             verbose=None, eval_names=None, feature_weights=None, known_classes=None,
             feature_names=None, qid=None, qid_eval_set=None):
        self._fit_has_eval_set = bool(eval_set)
        # xgboost 2's constructor arguments, or (as before it) fit's: one or the other
        callbacks = CallbackList(  # (checked before any work)
            estimator_or_call_value(self, "callbacks", callbacks))
        feature_weights = check_feature_weights(
            estimator_or_call_value(self, "feature_weights", feature_weights))
        params = dataclasses.replace(self._checked_params(), feature_weights=feature_weights)
        progress = reporter_for(self.verbose if verbose is None else verbose)
        X, y, sample_weight = _fit_input(self, X, y, sample_weight)
        if isinstance(y, str):
            X, y = _split_label_column(X, y)
        multilabel = classifier and has_target_columns(y)
        if multilabel:  # a column of 0/1 per label: a target each (xgboost's multi-label)
            params = dataclasses.replace(params, objective=params.objective or "binary:logistic")
            classifier = False
        eval_set, sample_weight_eval_set = _check_eval_set(self, eval_set, sample_weight_eval_set)
        checkpoint = self._checkpoint()
        store_config = self._store_config()
        if resume:
            if checkpoint is None:
                raise ValueError("resume=True needs checkpoint_path")
            if xgb_model is not None:
                raise ValueError("pass either xgb_model or resume=True, not both")
            if os.path.exists(checkpoint.path):
                xgb_model = checkpoint.path
        previous = _previous_booster(xgb_model)
        if resume and previous is not None:
            params = dataclasses.replace(params,
                                         n_estimators=params.n_estimators - previous.n_rounds)
            if params.n_estimators <= 0:  # the checkpoint already has every round
                self._set_fitted(previous)
                self.evals_result_ = {}
                return _ResumedInfo(previous, X, y, classifier)
        X, eval_set = _with_missing_as_nan(self.missing, X, eval_set)
        with local_threads(self.n_jobs), speaking(self.verbosity):
            booster, info = train(params, X, y, sample_weight, classifier=classifier,
                                  eval_set=eval_set,
                                  sample_weight_eval_set=sample_weight_eval_set,
                                  previous=previous, base_margin=base_margin,
                                  base_margin_eval_set=base_margin_eval_set, progress=progress,
                                  checkpoint=checkpoint, store_config=store_config,
                                  callbacks=callbacks.callbacks, eval_names=eval_names,
                                  known_classes=known_classes, feature_names=feature_names,
                                  qid=qid, qid_eval_set=qid_eval_set)
        self._set_fitted(booster)
        self.evals_result_ = info.evals_result
        if multilabel:  # every target's classes (xgboost's classes_ of a multi-label fit)
            info.classes = np.array([0, 1])
        return info

    def _partial_fit(self, X, y, sample_weight, base_margin, known_classes=None):
        """One step of incremental training (scikit-learn's ``partial_fit``): grow
        ``n_estimators`` more rounds on this X and y, starting from the model so far (a
        fit with ``xgb_model`` the estimator itself), or a first model."""
        fitted = self.__sklearn_is_fitted__()
        if fitted:  # (scikit-learn's message for another number of features)
            self._check_predict_input(X)
        return self._fit(X, y, sample_weight, self._estimator_type == "classifier", None, None,
                         self._booster if fitted else None, base_margin=base_margin,
                         known_classes=known_classes)

    def _store_config(self):
        """Where binned blocks beyond ``memory_budget`` go; checked before any work."""
        budget = self.memory_budget
        if not (isinstance(budget, str) and budget.strip().lower() == "auto"):
            budget = parse_memory_budget(budget)
        else:
            budget = None  # resolved by each process: half of its available memory
        return StoreConfig(budget, tuple(check_cache_dirs(self.cache_dir)),
                           self.cache_compression)

    def _checkpoint(self):
        if self.checkpoint_path is None:
            return None
        every = integer_param("checkpoint_interval", self.checkpoint_interval, 1)
        directory = os.path.dirname(os.path.abspath(os.fspath(self.checkpoint_path)))
        if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
            raise ValueError(f"checkpoint_path={os.fspath(self.checkpoint_path)!r}: directory "
                             f"{directory!r} does not exist or is not writable")
        return Checkpoint(os.fspath(self.checkpoint_path), every)

    def _set_fitted(self, booster):
        self._booster = booster
        self.n_features_in_ = booster.n_features
        if booster.feature_names is not None:
            self.feature_names_in_ = np.array(booster.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    @property
    def feature_importances_(self):
        """Importance of each feature by ``importance_type`` (default ``"gain"``: the
        average gain of its splits), normalised to sum 1, as in xgboost's scikit-learn
        wrapper."""
        self._check_fitted()
        return inspection.feature_importances(self._booster.trees, self._booster.n_features,
                                              self.importance_type)

    @property
    def intercept_(self):
        """Each output's start as xgboost's ``intercept_`` of a tree model gives it: its
        ``base_score`` (a probability for ``binary:logistic``, the margin for the
        objectives without a link), float32, one per output
        (``xgboost_format.base_scores``)."""
        self._check_fitted()
        return base_scores(self._booster)

    def evals_result(self):
        """Metric values per eval set and round: ``{"validation_0": {"rmse": [...]}}``."""
        self._check_fitted()
        return getattr(self, "evals_result_", {})

    @property
    def best_iteration(self):
        """The 0-based round with the best eval score (set when early stopping is used)."""
        return self.get_booster().best_iteration

    @property
    def best_score(self):
        return self.get_booster().best_score

    def _default_range(self, iteration_range):
        if iteration_range is None and self.get_booster().best_iteration is not None:
            return (0, self.get_booster().best_iteration + 1)
        return iteration_range

    def get_num_boosting_rounds(self):
        """The number of rounds a fit grows (xgboost's: ``n_estimators``)."""
        return self.n_estimators

    def get_xgb_params(self):
        """The parameters as ``daskboost.train`` takes them (xgboost's: every parameter
        but the rounds, early stopping and progress, which are ``train``'s arguments).
        A classifier's objective left to the labels is the fitted model's, else
        ``binary:logistic`` (as xgboost's classifier says before its fit)."""
        params = {k: v for k, v in self.get_params().items()
                  if k not in ("n_estimators", "early_stopping_rounds", "verbose", "callbacks",
                               "feature_weights")}
        if params["objective"] is None and self._estimator_type == "classifier":
            params["objective"] = (self._booster.objective if self.__sklearn_is_fitted__()
                                   else "binary:logistic")
        return params

    def get_booster(self):
        """The fitted ``Booster``."""
        self._check_fitted()
        return self._booster

    def _check_fitted(self):
        """Raise scikit-learn's ``NotFittedError`` (a ValueError and an AttributeError,
        so ``hasattr`` on a fitted-only property of an unfitted estimator is False)."""
        if not self.__sklearn_is_fitted__():
            raise _not_fitted_error(self)

    # ---- prediction ---------------------------------------------------------------------
    def _check_predict_input(self, X, validate_features=True):
        """X to predict on, checked against the training features (array-likes as numpy);
        ``validate_features=False`` (xgboost's): columns taken by position, not name."""
        self._check_fitted()
        if not isinstance(validate_features, (bool, np.bool_)):
            raise TypeError(f"validate_features={validate_features!r:.80} must be True or False")
        X = with_missing_as_nan(_feature_input(X), self.missing)
        names, n_features, types = describe_features(X, enable_categorical=True)
        booster = self._booster
        if validate_features and names is not None and booster.feature_names is not None \
                and names != booster.feature_names:
            missing = [c for c in booster.feature_names if c not in names]
            extra = [c for c in names if c not in booster.feature_names]
            detail = (f"missing {missing}, unexpected {extra}" if missing or extra
                      else "same columns in a different order")
            raise ValueError(f"X's columns do not match the training columns ({detail}); "
                             f"expected {booster.feature_names}")
        if n_features != booster.n_features:
            raise ValueError(f"X has {n_features} features, but {type(self).__name__} is "
                             f"expecting {booster.n_features} features as input")
        _check_predict_types(types, booster)
        return X

    def _predict_values(self, X, finish, width, iteration_range, base_margin=None,
                        validate_features=True):
        """``finish(margins (K, n)) -> (n,) or (n, width)`` on every partition of X.

        dask in -> dask out (same partitions; a DataFrame's index kept), else numpy.
        ``base_margin``: per-row starting margins (in memory, with in-memory X).
        """
        X = self._check_predict_input(X, validate_features)
        job = _PredictJob(self._booster, finish, self._default_range(iteration_range))
        if base_margin is not None:
            if is_dask_collection(X) or is_dask_collection(base_margin):
                raise TypeError("predict(base_margin=...) takes in-memory X and base_margin; "
                                "for dask data add the margins to output_margin=True predictions")
            with local_threads(self.n_jobs):
                return job.in_memory(X, margin_block(base_margin, self._booster.n_outputs,
                                                     X.shape[0]))
        if not is_dask_collection(X):
            with local_threads(self.n_jobs):
                return job.in_memory(X)
        import dask.dataframe as dd
        if isinstance(X, dd.DataFrame):
            if width is None:
                meta = pd.Series(dtype=np.float64)
            else:
                meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in width})
            return X.map_partitions(job.frame, width, meta=meta)
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        if width is None:
            return X.map_blocks(job, dtype=np.float64, drop_axis=1)
        return X.map_blocks(job, dtype=np.float64, chunks=(X.chunks[0], (len(width),)))

    def _explain(self, X, iteration_range, base_margin, approx, interactions,
                 validate_features=True):
        """Contributions (``Booster.predict_contributions``) in xgboost's shapes: numpy
        for in-memory X, a lazy dask array for dask X (one task per partition)."""
        X = self._check_predict_input(X, validate_features)
        job = _ContributionJob(self._booster, self._default_range(iteration_range), approx,
                               interactions)
        if not is_dask_collection(X):
            margin = None if base_margin is None else margin_block(
                base_margin, self._booster.n_outputs, X.shape[0])
            with local_threads(self.n_jobs):
                return job(X, margin)
        if base_margin is not None:
            raise TypeError("predict(base_margin=...) takes in-memory X and base_margin; for "
                            "dask data the margins' contributions go to the bias column: add them")
        return _lazy_rows(X, job, job.shape_tail(), np.float64)

    def apply(self, X, iteration_range=None, validate_features=True):
        """The leaf each row reaches in each tree (xgboost's ``apply``): (n_rows, n_trees)
        int32 node ids within the trees (``Booster.predict_leaf``), numpy for in-memory
        X, a lazy dask array for dask X.  ``iteration_range`` as for ``predict`` (the
        best iteration's rounds after early stopping)."""
        X = self._check_predict_input(X, validate_features)
        job = _LeafJob(self._booster, self._default_range(iteration_range))
        if not is_dask_collection(X):
            with local_threads(self.n_jobs):
                return job(X)
        return _lazy_rows(X, job, job.shape_tail(), np.int32)

    # ---- persistence --------------------------------------------------------------------
    def _model_extras(self):
        return {}

    def _check_extras(self, section, booster, source):
        """Raise ValueError unless the estimator section's extras fit the model."""

    def _load_extras(self, section):
        pass

    def _imported_extras(self, booster):
        """The estimator section's extras for a model read from an xgboost file."""
        return {}

    def save_model(self, path, format="daskboost"):
        """Write the fitted model as versioned JSON (atomically: no half-written file);
        ``format="xgboost"``: as xgboost's JSON model instead (``Booster.save_model``)."""
        booster = self.get_booster()
        if format != "daskboost":
            booster.save_model(path, format)
            return
        payload = booster.to_dict()
        # parameters added after model files existed (categorical, quantized gradients)
        # are left out at their defaults: a model without them has the file it had
        params = {k: _jsonable(v) for k, v in self.get_params().items()
                  if k not in RUN_SETTINGS
                  and not (k in WRITTEN_WHEN_CHANGED and _same_value(v, WRITTEN_WHEN_CHANGED[k]))}
        if isinstance(self.class_weight, dict):  # labels as JSON values, not key strings
            params["class_weight"] = [[_jsonable(k), _jsonable(w)]
                                      for k, w in self.class_weight.items()]
        payload[ESTIMATOR_KEY] = {"class": type(self).__name__, "params": params,
                                  **self._model_extras()}
        write_model_file(path, payload)

    @garbage_collection_paused()
    def load_model(self, path):
        """Load a model written by ``save_model`` (or its bytes: ``Booster.save_raw``);
        returns self.

        The file is checked completely before anything is used: a damaged or crafted
        file raises ValueError naming the file and the field, and leaves this
        estimator as it was.
        """
        return self._load_payload(read_model_json(path), model_source(path))

    def _load_payload(self, payload, source):
        booster = Booster.from_dict(payload, source)
        if is_xgboost_model(payload):  # as xgboost's own estimators would read it
            section = {"params": {"objective": booster.objective},
                       **self._imported_extras(booster)}
        else:
            section = payload.get(ESTIMATOR_KEY, {})
        params = self._checked_section(section, source)
        self._check_extras(section, booster, source)
        self.set_params(**params)
        self._load_extras(section)
        self._set_fitted(booster)
        return self

    def _checked_section(self, section, source):
        """The saved parameters this estimator takes, validated as ``fit`` would."""
        if not isinstance(section, dict):
            raise ValueError(f"{source}: {ESTIMATOR_KEY} must be an object; got {section!r:.80}")
        unknown = [key for key in section if key not in ("class", "params", "classes")]
        if unknown:
            raise ValueError(f"{source}: {ESTIMATOR_KEY} has an unknown field {unknown[0]!r}")
        saved = section.get("params", {})
        if not isinstance(saved, dict):
            raise ValueError(f"{source}: {ESTIMATOR_KEY}.params must be an object; got "
                             f"{saved!r:.80}")
        params = {**WRITTEN_WHEN_CHANGED,
                  **{k: v for k, v in saved.items() if k in self._param_names()}}
        try:
            params["class_weight"] = _saved_class_weight(params["class_weight"])
            validate_params({**type(self)().get_params(), **params}, self._objectives)
            inspection.check_importance_type(params["importance_type"])
            check_missing(params["missing"])
            check_feature_weights(params["feature_weights"])
        except (TypeError, ValueError) as err:
            raise ValueError(f"{source}: {ESTIMATOR_KEY}.params: {err}") from None
        return params


# from the objectives' metadata (daskboost.objectives): the regressor takes the regression
# objectives and binary:logistic, the classifier the binary and multiclass ones
REGRESSION_OBJECTIVES = regressor_objectives()
CLASSIFICATION_OBJECTIVES = classifier_objectives()
RANKING_OBJECTIVES = objectives_of_kind(RANKING)


# The estimators' signature, as scikit-learn introspects it (``inspect.signature`` of the
# class): their parameters, without the ``**xgboost_keywords`` that only map xgboost's
# aliases onto them (``_take_xgboost_keywords``), which are not parameters of their own
_DaskBoostModel.__signature__ = inspect.signature(_DaskBoostModel.__init__).replace(
    parameters=[p for p in inspect.signature(_DaskBoostModel.__init__).parameters.values()
                if p.name != "self" and p.kind != p.VAR_KEYWORD])


class DaskBoostRegressor(_DaskBoostModel):
    """Gradient-boosted trees for regression (default objective ``reg:squarederror``)."""

    _estimator_type = "regressor"
    _objectives = REGRESSION_OBJECTIVES

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            xgb_model=None, base_margin=None, base_margin_eval_set=None, resume=False,
            callbacks=None, verbose=None, feature_weights=None):
        """Fit on X (dask/pandas/numpy) and y aligned with it; returns self.

        ``eval_set``: list of (X, y) pairs scored after every round with ``eval_metric``
        (``evals_result()``); the last one drives ``early_stopping_rounds``.
        ``xgb_model``: a fitted estimator, Booster or model file to continue training:
        ``n_estimators`` more rounds are appended to its trees.
        ``base_margin`` (and ``base_margin_eval_set``): per-row starting margins, one
        column per output, partitioned like X; they replace ``base_score``.
        ``resume=True``: continue from ``checkpoint_path`` if it exists (written every
        ``checkpoint_interval`` rounds), up to ``n_estimators`` rounds in all.
        ``callbacks``: objects with xgboost's ``TrainingCallback`` methods, called
        around every round (``daskboost.callbacks``; True from ``after_iteration``
        stops training).
        ``verbose``: progress for this fit (the eval sets' latest metrics, elapsed time):
        True at most every second, k every k rounds (xgboost's ``fit(verbose=k)``),
        False none; None: the estimator's ``verbose``.
        ``feature_weights``: one weight >= 0 per feature, each feature's chance in the
        column sampling (``colsample_by*``) in proportion to it, as xgboost's; without
        column sampling they change nothing.
        """
        self._fit(X, y, sample_weight, False, eval_set, sample_weight_eval_set, xgb_model,
                  base_margin, base_margin_eval_set, resume, callbacks, verbose,
                  feature_weights=feature_weights)
        return self

    def partial_fit(self, X, y, sample_weight=None, base_margin=None):
        """Incremental training, as scikit-learn's ``partial_fit`` (what dask-ml's
        ``Incremental`` calls, block by block): each call grows ``n_estimators`` more
        rounds on this X and y, from the model so far.  Returns self."""
        self._partial_fit(X, y, sample_weight, base_margin)
        return self

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None,
                pred_contribs=False, approx_contribs=False, pred_interactions=False,
                validate_features=True):
        """Predictions (or raw margins); ``iteration_range=(start, stop)`` selects rounds
        (default: up to the best round when early stopping was used); ``base_margin``
        replaces the model's constant start with per-row margins, as in fit.
        ``pred_contribs`` / ``pred_interactions`` (``approx_contribs``): feature
        contributions instead, as ``Booster.predict`` (a lazy dask array for dask X).
        ``validate_features=False``: a DataFrame's columns are taken by position, their
        names not checked against the training columns (xgboost's)."""
        if wants_contributions(output_margin, pred_contribs, approx_contribs,
                               pred_interactions):
            return self._explain(X, iteration_range, base_margin, approx_contribs,
                                 pred_interactions, validate_features)
        self._check_fitted()
        K = self._booster.n_outputs  # several quantile levels: (n, K)
        return self._predict_values(X, _Output(output_margin), None if K == 1 else list(range(K)),
                                    iteration_range, base_margin, validate_features)

    def score(self, X, y, sample_weight=None):
        """R^2 of the predictions (in-memory data); several targets: the mean of their
        R^2.  ``survival:aft`` (y: each row's lower and upper bound): minus the mean
        ``aft-nloglik``, so that higher is better, as a scorer's."""
        self._check_fitted()
        objective = self._booster.get_objective()
        if getattr(objective, "label_columns", None) is not None:
            intervals = np.asarray(_target_input(y, numeric=True), dtype=np.float64)
            if intervals.ndim != 2 or intervals.shape[1] != objective.label_columns:
                raise ValueError(f"y has shape {intervals.shape}; objective="
                                 f"'{objective.name}' scores each row's interval, (n_rows, "
                                 f"{objective.label_columns})")
            margin = np.asarray(self.predict(X, output_margin=True), dtype=np.float64)
            losses = objective.loss(intervals.T, margin[None, :])
            return -float(np.average(losses, weights=sample_weight))
        if self._booster.n_outputs > self._booster.n_targets:
            levels = list(self._booster.objective_params.get("quantile_alpha", ()))
            raise ValueError(f"score is the R^2 of one prediction per row; this model predicts "
                             f"{self._booster.n_outputs} quantiles per row (quantile_alpha="
                             f"{levels}): score each column of predict(X), e.g. with "
                             "sklearn.metrics.mean_pinball_loss")
        pred = np.asarray(self.predict(X))
        y = np.asarray(_target_input(y, numeric=True), dtype=np.float64)
        if y.shape != pred.shape:
            raise ValueError(f"y has shape {y.shape}; the predictions have {pred.shape}")
        w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight,
                                                                         dtype=np.float64)
        w = w if y.ndim == 1 else w[:, None]  # several targets: R^2 of each, averaged
        mean = np.sum(w * y, axis=0) / np.sum(w * np.ones_like(y), axis=0)
        r2 = 1.0 - np.sum(w * (y - pred) ** 2, axis=0) / np.sum(w * (y - mean) ** 2, axis=0)
        return float(np.mean(r2))


class DaskBoostClassifier(_DaskBoostModel):
    """Gradient-boosted trees for classification.

    Labels (strings, integers, booleans, integer-valued floats; non-integer floats are a
    continuous target, refused as scikit-learn refuses them) are sorted into
    ``classes_``.  Two classes train
    ``binary:logistic`` (the second class is the positive one), more train
    ``multi:softprob`` with ``num_class`` set from the data (one tree per class and
    round).
    """

    _estimator_type = "classifier"
    _objectives = CLASSIFICATION_OBJECTIVES

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            xgb_model=None, base_margin=None, base_margin_eval_set=None, resume=False,
            callbacks=None, verbose=None, feature_weights=None):
        """Fit on X (dask/pandas/numpy) and labels y aligned with it; returns self.

        ``eval_set``, ``xgb_model``, ``base_margin``, ``resume``, ``callbacks``,
        ``verbose``, ``feature_weights``: as for ``DaskBoostRegressor.fit``.
        """
        info = self._fit(X, y, sample_weight, True, eval_set, sample_weight_eval_set, xgb_model,
                         base_margin, base_margin_eval_set, resume, callbacks, verbose,
                         feature_weights=feature_weights)
        self._set_classes(info.classes)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None, base_margin=None):
        """Incremental training, as scikit-learn's ``partial_fit`` (what dask-ml's
        ``Incremental`` calls, block by block): each call grows ``n_estimators`` more
        rounds on this X and y, from the model so far.  ``classes``: every label the
        model will see, needed on the first call when this y does not hold them all;
        later calls keep the first call's ``classes_`` (their y's labels must be among
        them).  Returns self."""
        known = None if classes is None else _partial_fit_classes(classes)
        if self.__sklearn_is_fitted__():
            if known is not None and not _same_labels(known, self.classes_):
                raise ValueError(f"classes={known.tolist()!r:.200} differs from the classes of "
                                 f"the first partial_fit call, {self.classes_.tolist()!r:.200}")
            known = self.classes_
        info = self._partial_fit(X, y, sample_weight, base_margin, known)
        self._set_classes(info.classes)
        return self

    def _set_classes(self, classes):
        """The fitted labels, sorted (``classes_``, ``n_classes_``)."""
        self.classes_ = np.asarray(classes)
        self.n_classes_ = len(self.classes_)

    def predict_proba(self, X, iteration_range=None, base_margin=None, validate_features=True):
        """Probabilities of ``classes_``: (n, n_classes); a dask DataFrame for one.
        A multi-label model (y of several 0/1 columns): each label's probability of 1,
        (n, n_labels), as xgboost's."""
        self._check_fitted()
        columns = (list(range(self._booster.n_targets)) if self._booster.n_targets > 1
                   else [_column(c) for c in self.classes_])
        return self._predict_values(X, _Probabilities(), columns, iteration_range, base_margin,
                                    validate_features)

    def decision_function(self, X, iteration_range=None, base_margin=None,
                          validate_features=True):
        """The margins, scikit-learn's decision function: (n,) for two classes (> 0:
        ``classes_[1]``), (n, n_classes) for more (the largest: the predicted class); as
        ``predict(X, output_margin=True)``."""
        return self.predict(X, output_margin=True, iteration_range=iteration_range,
                            base_margin=base_margin, validate_features=validate_features)

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None,
                pred_contribs=False, approx_contribs=False, pred_interactions=False,
                validate_features=True):
        """Class labels (or margins with ``output_margin=True``, or contributions as
        ``DaskBoostRegressor.predict``; ``validate_features`` as there)."""
        self._check_fitted()
        if wants_contributions(output_margin, pred_contribs, approx_contribs,
                               pred_interactions):
            return self._explain(X, iteration_range, base_margin, approx_contribs,
                                 pred_interactions, validate_features)
        if output_margin:
            K = self._booster.n_outputs
            return self._predict_values(X, _Output(True), None if K == 1 else list(range(K)),
                                        iteration_range, base_margin, validate_features)
        T = self._booster.n_targets  # several labels per row: (n, T)
        index = self._predict_values(X, _ClassIndex(), None if T == 1 else list(range(T)),
                                     iteration_range, base_margin, validate_features)
        classes = self.classes_
        if T > 1:  # (the classes of each label are 0 and 1)
            return index.astype(np.int64)
        if isinstance(index, np.ndarray):
            return classes[index.astype(np.int64)]
        to_labels = _ToLabels(classes)
        if _is_dask_series(index):
            return index.map_partitions(to_labels.series, meta=pd.Series(dtype=classes.dtype))
        return index.map_blocks(to_labels, dtype=classes.dtype)

    def score(self, X, y, sample_weight=None):
        """Accuracy (in-memory data); several labels per row: the share of rows with
        every label right (scikit-learn's subset accuracy)."""
        correct = np.asarray(self.predict(X)) == np.asarray(_target_input(y, numeric=False))
        if correct.ndim == 2:
            correct = correct.all(axis=1)
        return float(np.average(correct, weights=sample_weight))

    def _model_extras(self):
        return {"classes": self.classes_.tolist()}

    def _check_extras(self, section, booster, source):
        classes = section.get("classes")
        if classes is None:
            raise ValueError(f"{source}: the model file has no classes; was it saved by a "
                             "DaskBoostClassifier?")
        expected = 2 if booster.n_outputs == booster.n_targets else booster.n_outputs
        if not isinstance(classes, list) or len(classes) != expected:
            raise ValueError(f"{source}: classes = {classes!r:.80} must list the model's "
                             f"{expected} classes")
        if len({type(c) for c in classes}) != 1 or not isinstance(classes[0], (str, int, float)) \
                or len(set(classes)) != len(classes):
            raise ValueError(f"{source}: classes = {classes!r:.80} must be distinct labels of "
                             "one type (strings, integers, numbers or booleans)")

    def _load_extras(self, section):
        self._set_classes(np.array(section["classes"]))

    def _imported_extras(self, booster):
        # xgboost's classifiers number the classes 0 .. n - 1
        return {"classes": list(range(2 if booster.n_outputs == booster.n_targets
                                      else booster.n_outputs))}


class DaskBoostRanker(_DaskBoostModel):
    """Gradient-boosted trees for learning to rank: LambdaMART (default objective
    ``rank:ndcg``; also ``rank:pairwise`` and ``rank:map``), xgboost's ``XGBRanker``.

    The rows of a query are consecutive, in non-decreasing order of their query ids, and
    all in one partition of a dask collection (``daskboost.query_groups``).  The
    lambdarank parameters are xgboost's (``lambdarank_pair_method`` "topk" or "mean",
    ``lambdarank_num_pair_per_sample``, ``ndcg_exp_gain``, ``lambdarank_normalization``,
    ``lambdarank_score_normalization``; ``lambdarank_unbiased`` is not implemented);
    every other parameter is the other estimators'.
    """

    _estimator_type = "ranker"
    _objectives = RANKING_OBJECTIVES

    def __init__(self, *, objective="rank:ndcg", lambdarank_pair_method="topk",
                 lambdarank_num_pair_per_sample=None, ndcg_exp_gain=True,
                 lambdarank_normalization=True, lambdarank_score_normalization=True,
                 lambdarank_unbiased=False, **params):
        self.lambdarank_pair_method = lambdarank_pair_method
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.ndcg_exp_gain = ndcg_exp_gain
        self.lambdarank_normalization = lambdarank_normalization
        self.lambdarank_score_normalization = lambdarank_score_normalization
        self.lambdarank_unbiased = lambdarank_unbiased
        super().__init__(objective=objective, **params)

    def fit(self, X, y, *, group=None, qid=None, sample_weight=None, base_margin=None,
            eval_set=None, eval_group=None, eval_qid=None, verbose=None, xgb_model=None,
            sample_weight_eval_set=None, base_margin_eval_set=None, feature_weights=None,
            resume=False, callbacks=None):
        """Fit on X and relevance labels y, ranked within the queries given by ``qid``
        (each row's query id), ``group`` (each query's size, in memory) or a ``qid``
        column of a pandas or dask DataFrame X; returns self.

        ``sample_weight``: one weight per query (xgboost's), or per row (the same for
        all the rows of a query; a dask collection's are per row).  ``eval_set`` with
        ``eval_qid`` / ``eval_group`` (or ``qid`` columns) is scored with ``eval_metric``
        (default ``ndcg@32``).  The other arguments: as for ``DaskBoostRegressor.fit``.
        """
        X, qid = query_input(X, qid, group)
        sample_weight = row_weights(sample_weight, qid)
        eval_qids, eval_weights = None, sample_weight_eval_set
        if eval_set is not None:
            n = len(eval_set)
            for name, values in (("eval_qid", eval_qid), ("eval_group", eval_group),
                                 ("sample_weight_eval_set", sample_weight_eval_set)):
                if values is not None and len(values) != n:
                    raise ValueError(f"{name} has {len(values)} entries but eval_set has {n}")
            sets, eval_qids = [], []
            for i, ((Xe, ye), qe, ge) in enumerate(zip(eval_set, eval_qid or [None] * n,
                                                       eval_group or [None] * n)):
                Xe, qe = query_input(Xe, qe, ge, f"eval_set[{i}]")
                sets.append((Xe, ye))
                eval_qids.append(qe)
            eval_set = sets
            if sample_weight_eval_set is not None:
                eval_weights = [row_weights(w, q) for w, q in
                                zip(sample_weight_eval_set, eval_qids)]
        self._fit(X, y, sample_weight, False, eval_set, eval_weights, xgb_model, base_margin,
                  base_margin_eval_set, resume, callbacks, verbose,
                  feature_weights=feature_weights, qid=qid, qid_eval_set=eval_qids)
        return self

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None,
                pred_contribs=False, approx_contribs=False, pred_interactions=False,
                validate_features=True):
        """The rows' scores (higher: ranked higher); a ``qid`` column of X is left out
        (xgboost's).  The other arguments: as for ``DaskBoostRegressor.predict``."""
        X, _ = query_input(X, required=False)
        if wants_contributions(output_margin, pred_contribs, approx_contribs,
                               pred_interactions):
            return self._explain(X, iteration_range, base_margin, approx_contribs,
                                 pred_interactions, validate_features)
        self._check_fitted()
        return self._predict_values(X, _Output(output_margin), None, iteration_range,
                                    base_margin, validate_features)

    def apply(self, X, iteration_range=None, validate_features=True):
        X, _ = query_input(X, required=False)
        return super().apply(X, iteration_range, validate_features)

    def score(self, X, y, qid=None, group=None):
        """The last of ``eval_metric`` (default: the objective's, ``ndcg@32``) on X, y
        ranked within X's queries (a ``qid`` column, ``qid`` or ``group``), as xgboost's
        ``XGBRanker.score``; X and its query ids are brought into memory."""
        self._check_fitted()
        X, qid = query_input(X, qid, group)
        scores = np.asarray(self.predict(X, output_margin=True), dtype=np.float64)
        labels = np.asarray(_target_input(y, numeric=True), dtype=np.float32)
        ids = qid_block(np.asarray(qid))
        if not len(ids) == len(labels) == len(scores):
            raise ValueError(f"X has {len(scores)} rows, y {len(labels)} and qid {len(ids)}")
        names = self.eval_metric if self.eval_metric is not None else []
        names = names if isinstance(names, (list, tuple)) else [names]
        objective = self._booster.get_objective()
        metric = get_metric(names[-1] if names else objective.default_metric, objective)
        groups = group_pointer(ids)
        return float(metric.finalize(partial_of(metric, labels, scores[None, :], None,
                                                objective, groups)))


class _RandomForest:
    """xgboost's random forest estimators (``XGBRFRegressor``, ``XGBRFClassifier``): one
    boosting round of ``n_estimators`` trees per output (``num_parallel_tree``), each
    grown on its own sample of the rows (``subsample``) and of the columns at each node
    (``colsample_bynode``), from the gradients at the start, averaged (each leaf scaled
    by learning_rate / n_estimators; ``learning_rate=1``: the forest's mean); nearly
    unregularised (``reg_lambda=1e-5``).  xgboost's defaults; ``num_parallel_tree`` is
    set from ``n_estimators``, as xgboost's.  A forest is one round: no early stopping."""

    def __init__(self, *, learning_rate=1.0, subsample=0.8, colsample_bynode=0.8,
                 reg_lambda=1e-5, **params):
        super().__init__(learning_rate=learning_rate, subsample=subsample,
                         colsample_bynode=colsample_bynode, reg_lambda=reg_lambda, **params)

    def _checked_params(self):
        params = super()._checked_params()
        if params.early_stopping_rounds is not None:
            raise ValueError(f"early_stopping_rounds={params.early_stopping_rounds}: a random "
                             f"forest ({type(self).__name__}) is one boosting round, with "
                             "nothing to stop early; leave it None")
        return dataclasses.replace(params, n_estimators=1,
                                   num_parallel_tree=params.n_estimators)

    def get_num_boosting_rounds(self):
        """The rounds a fit grows: one (xgboost's)."""
        return 1

    def get_xgb_params(self):
        """As the boosted estimators', with ``num_parallel_tree = n_estimators``."""
        return {**super().get_xgb_params(), "num_parallel_tree": self.n_estimators}


class DaskBoostRFRegressor(_RandomForest, DaskBoostRegressor):
    """A random forest regressor (xgboost's ``XGBRFRegressor``; ``_RandomForest``)."""


class DaskBoostRFClassifier(_RandomForest, DaskBoostClassifier):
    """A random forest classifier (xgboost's ``XGBRFClassifier``; ``_RandomForest``)."""


def _forest_signature():
    """The boosted estimators' signature with the random forests' defaults."""
    base = inspect.signature(_DaskBoostModel)
    defaults = {name: p.default for name, p in
                inspect.signature(_RandomForest.__init__).parameters.items()
                if p.default is not p.empty}
    return base.replace(parameters=[p.replace(default=defaults.get(p.name, p.default))
                                    for p in base.parameters.values()])


DaskBoostRFRegressor.__signature__ = DaskBoostRFClassifier.__signature__ = _forest_signature()


def estimator_class_for(objective):
    """The estimator of an objective (a name, a callable or None): the classifier for a
    classification objective (``binary:*``, ``multi:*``), the ranker for a ranking one
    (``rank:*``), else the regressor."""
    if is_classification(objective):
        return DaskBoostClassifier
    if objective_kind(objective) == RANKING:
        return DaskBoostRanker
    return DaskBoostRegressor


def estimator_or_call_value(estimator, name, value, call="fit()"):
    """The estimator's parameter ``name`` or ``value``, given to ``call`` for it (xgboost
    2 moved ``callbacks`` and ``feature_weights`` from ``fit`` to the constructor; the
    native API's params dict holds the estimator's); ValueError when both are given."""
    return one_given(name, getattr(estimator, name), "as a parameter", value, f"to {call}")


def _jsonable(value):
    """A parameter as JSON: numpy scalars as numbers; functions (custom objectives and
    metrics cannot be stored in a model file) as None, i.e. the default, and left out of
    a list (``eval_metric=["auc", f]`` is saved as ``["auc"]``)."""
    if isinstance(value, np.generic):
        return value.item()
    if _is_function(value):
        return None
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return [_jsonable(v) for v in value if not _is_function(v)]
    if isinstance(value, dict):  # e.g. monotone_constraints={column name: direction}
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def _is_function(value):
    """A user's function, or a metric made of one: not storable in a model file."""
    return callable(value) or isinstance(value, Metric)


def _partial_fit_classes(classes):
    """``partial_fit``'s ``classes``: its labels, sorted and unique, at least two."""
    if is_dask_collection(classes):
        classes = classes.compute()
    labels = np.asarray(classes)
    if labels.ndim != 1 or len(labels) == 0:
        raise ValueError(f"classes={classes!r:.120} must be a 1-D list of labels")
    labels = np.unique(labels)
    if len(labels) < 2:
        raise ValueError(f"classes={labels.tolist()!r} has one label; a classifier needs at "
                         "least 2")
    return labels


def _same_labels(a, b):
    return len(a) == len(b) and all(x == y for x, y in zip(a.tolist(), b.tolist()))


def _saved_class_weight(saved):
    """``class_weight`` as ``save_model`` wrote it: a dict as [label, weight] pairs."""
    if not isinstance(saved, list):
        return saved
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in saved):
        raise ValueError(f"class_weight={saved!r:.120} must be [label, weight] pairs")
    return {label: weight for label, weight in saved}


def _check_predict_types(types, booster):
    """A column categorical in X (``types``: X's ``feature_types_of``) must be categorical
    in the model, and a categorical feature with string categories cannot be read from a
    numeric column (issue 13)."""
    for f, kind in enumerate(types):
        name = repr(booster.feature_names[f]) if booster.feature_names else str(f)
        dictionary = booster.categories.get(f)
        if kind == "c" and dictionary is None:
            raise TypeError(f"feature column {name} is categorical (strings or category "
                            "dtype) in X but was numeric at training")
        if kind == "q" and dictionary and isinstance(dictionary[0], str):
            raise TypeError(f"feature column {name} is numeric in X but was categorical with "
                            f"string categories at training (e.g. {dictionary[0]!r})")


def _same_value(a, b):
    try:
        if math.isnan(a) and math.isnan(b):
            return True  # (``missing``'s default, NaN, is no change)
    except (TypeError, ValueError):
        pass
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _column(label):
    """A class's column in a dask DataFrame of probabilities: the label itself, as a
    Python value (``proba[1]``, as pandas and xgboost.dask name them)."""
    return label.item() if isinstance(label, np.generic) else label


def _is_dask_series(obj):
    if not is_dask_collection(obj):
        return False
    import dask.dataframe as dd
    return isinstance(obj, dd.Series)


class _ResumedInfo:
    """Training info when a checkpoint already holds every round: classes from the data."""

    def __init__(self, booster, X, y, classifier):
        self.evals_result = {}
        self.classes = None
        if classifier:
            import dask
            labels = y.unique() if hasattr(y, "unique") else np.unique(np.asarray(y))
            labels = dask.compute(labels)[0] if is_dask_collection(labels) else labels
            self.classes = np.array(sorted(np.asarray(labels).tolist()))


def _split_label_column(X, label):
    """``fit(df, "target")``: the label is a column of X (read with X, one pass)."""
    columns = list(getattr(X, "columns", []))
    if label not in columns:
        raise ValueError(f"label column {label!r} is not a column of X; columns: {columns}")
    return X.drop(columns=[label]), X[label]


def _previous_booster(xgb_model):
    """The Booster to continue from: an estimator, a Booster or a model file path."""
    if xgb_model is None or isinstance(xgb_model, Booster):
        return xgb_model
    if isinstance(xgb_model, _DaskBoostModel):
        return xgb_model.get_booster()
    if isinstance(xgb_model, (str, os.PathLike)):
        return Booster.load(xgb_model)
    raise TypeError(f"xgb_model must be a fitted estimator, a Booster or a model file path; "
                    f"got {type(xgb_model).__name__}")


@garbage_collection_paused()
def booster_predictions(booster, X, kind="value", iteration_range=None,
                        validate_features=True, base_margin=None, missing=np.nan):
    """``booster``'s predictions on X of any kind the estimators take, a dask collection's
    lazily (one task per partition), as the estimators predict: ``kind`` "value" (the
    objective's output, ``Booster.predict``'s), "margin", "leaf" (``apply``),
    "contributions" or "interactions" (SHAP; "-approx" appended: Saabas').
    ``iteration_range``: rounds (default every round, the best iteration aside);
    ``missing``: a value read as missing in X."""
    holder = DaskBoostRegressor(missing=missing)  # (prediction reads only the booster)
    holder._set_fitted(booster)
    rounds = (0, booster.num_boosted_rounds()) if iteration_range is None else iteration_range
    if kind == "leaf":
        return holder.apply(X, rounds, validate_features)
    explained = kind.split("-")[0]
    if explained in ("contributions", "interactions") and kind in (
            explained, explained + "-approx"):
        return holder._explain(X, rounds, base_margin, kind.endswith("-approx"),
                               explained == "interactions", validate_features)
    if kind not in ("value", "margin"):
        raise ValueError(f"kind={kind!r:.40} must be 'value', 'margin', 'leaf', "
                         "'contributions' or 'interactions' (+ '-approx')")
    output_margin = kind == "margin"
    shape = booster.output(np.zeros((booster.n_outputs, 1)), output_margin).shape
    return holder._predict_values(X, _Output(output_margin),
                                  list(range(shape[1])) if len(shape) > 1 else None, rounds,
                                  base_margin, validate_features)


def load_estimator(path):
    """The estimator saved at ``path`` (or in a model file's bytes): a
    ``DaskBoostClassifier``, ``DaskBoostRegressor`` or ``DaskBoostRanker`` as the file
    says (checked completely, as ``load_model``)."""
    source = model_source(path)
    payload = read_model_json(path)
    section = payload.get(ESTIMATOR_KEY, {})
    name = section.get("class", DaskBoostRegressor.__name__) if isinstance(section, dict) else None
    if is_xgboost_model(payload):  # xgboost's classification objectives: the classifier
        learner = payload["learner"]
        objective = learner.get("objective") if isinstance(learner, dict) else None
        objective = objective.get("name") if isinstance(objective, dict) else None
        name = estimator_class_for(objective).__name__
    classes = {cls.__name__: cls for cls in (DaskBoostRegressor, DaskBoostClassifier,
                                             DaskBoostRanker, DaskBoostRFRegressor,
                                             DaskBoostRFClassifier)}
    if not isinstance(name, str) or name not in classes:
        raise ValueError(f"{source}: {ESTIMATOR_KEY}.class = {name!r:.80} is not one of "
                         f"{sorted(classes)}")
    return classes[name]()._load_payload(payload, source)


def _with_missing_as_nan(missing, X, eval_set):
    """X and the eval sets' X with ``missing`` read as NaN (``missing_values``); an eval
    set that is the training X stays that same object (evaluated in the fit's passes)."""
    masked = with_missing_as_nan(X, missing)
    if eval_set is None or masked is X:
        return masked, eval_set
    return masked, [(masked if ex is X else with_missing_as_nan(ex, missing), ey)
                    for ex, ey in eval_set]


def _check_eval_set(estimator, eval_set, sample_weight_eval_set):
    """The eval sets and their weights, each (X, y, w) read as ``fit`` reads its input."""
    if eval_set is None:
        return None, sample_weight_eval_set
    if not isinstance(eval_set, (list, tuple)) or not all(
            isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in eval_set):
        raise TypeError("eval_set must be a list of (X, y) pairs")
    if sample_weight_eval_set is not None and len(sample_weight_eval_set) != len(eval_set):
        raise ValueError(f"sample_weight_eval_set has {len(sample_weight_eval_set)} entries but "
                         f"eval_set has {len(eval_set)}")
    weights = sample_weight_eval_set or [None] * len(eval_set)
    checked = [_fit_input(estimator, X, y, w) for (X, y), w in zip(eval_set, weights)]
    return ([(X, y) for X, y, _ in checked],
            None if sample_weight_eval_set is None else [w for _, _, w in checked])


# ---- scikit-learn's input conventions ---------------------------------------------------
# Dask collections and pandas objects go to ``data.py`` as they are (it reads their
# columns, dtypes and partitions); any other array-like becomes numpy here, as
# scikit-learn's ``check_array`` would read it, with scikit-learn's messages where its
# estimator checks expect them.

def _fit_input(estimator, X, y, sample_weight):
    """``fit``'s X, y and sample_weight with in-memory array-likes as numpy arrays."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None")
    numeric = estimator._estimator_type != "classifier"
    return _feature_input(X), _target_input(y, numeric), _as_numpy(sample_weight)


def _feature_input(X):
    """X as the estimators take it: dask collections and pandas objects unchanged, Arrow
    tables (pyarrow, polars, ...) as pandas DataFrames (``data.table_as_frame``), other
    array-likes (numpy arrays, lists of rows, objects with ``__array__``) as a 2-D
    numpy array, scipy.sparse matrices checked as such arrays and kept sparse (entries
    not stored are missing: ``sparse.py``); object arrays of numbers become float64.  A
    numeric numpy array or sparse matrix is returned as it is (no copy)."""
    X = table_as_frame(X)  # (Arrow tables: pyarrow's, polars')
    if isinstance(X, (pd.DataFrame, pd.Series)) or is_dask_collection(X):
        return X
    values = X if is_sparse(X) else np.asarray(X)  # sparse: checked as an array, kept sparse
    if values.ndim == 0:
        raise TypeError("X must be a dask DataFrame, dask Array, pandas DataFrame, numpy array "
                        f"or another 2-D array-like (such as a list of rows); got "
                        f"{type(X).__name__}")
    if values.ndim != 2:
        advice = (" Reshape your data: X.reshape(-1, 1) if it has a single feature, "
                  "X.reshape(1, -1) if it is a single sample" if values.ndim == 1 else "")
        raise ValueError(f"X must be a 2-D array; got an array with ndim={values.ndim} "
                         f"(shape {values.shape}).{advice}")
    if values.shape[1] == 0:
        raise ValueError(f"X has 0 feature(s) (shape={values.shape}) while a minimum of 1 is "
                         "required.")
    if values.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: X has dtype {values.dtype}")
    if values.dtype == object:
        try:
            return values.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise type(err)(f"X is an object array with a value that is not a number ({err}); "
                            "numpy input must be numeric: pass a pandas DataFrame to use "
                            "string columns as categorical features") from None
    return values


def _target_input(y, numeric):
    """y with in-memory array-likes as numpy; a column vector (n, 1) is flattened with
    scikit-learn's ``DataConversionWarning``.  A string is a label column of X.
    ``numeric`` (regression): an in-memory object y of numbers becomes float64."""
    if isinstance(y, str) or is_dask_collection(y):
        return y
    values = _as_numpy(y)  # pandas objects stay pandas
    if values.ndim == 2 and values.shape[1] == 1:
        _warn_column_vector(values.shape)
        values = values.iloc[:, 0] if isinstance(values, pd.DataFrame) else values[:, 0]
    if numeric and values.ndim == 1 and values.dtype == object:
        try:
            return values.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"y must be numeric for regression; got an object array with a "
                            f"value that is not a number ({err})") from None
    return values


def _as_numpy(values):
    """In-memory array-likes other than pandas objects as numpy arrays (no copy of a
    numpy array); dask collections, pandas objects and None unchanged."""
    if values is None or isinstance(values, (pd.DataFrame, pd.Series)) or \
            is_dask_collection(values):
        return values
    return np.asarray(values)


def _not_fitted_error(estimator):
    """scikit-learn's NotFittedError for an unfitted ``estimator`` (ours if it is not
    installed: the same two base classes)."""
    try:
        from sklearn.exceptions import NotFittedError
    except ImportError:
        NotFittedError = _NotFittedError
    return NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call "
                          "'fit' with appropriate arguments before using this estimator.")


class _NotFittedError(ValueError, AttributeError):
    """scikit-learn's ``NotFittedError`` when scikit-learn is not installed."""


def _warn_column_vector(shape):
    try:
        from sklearn.exceptions import DataConversionWarning
    except ImportError:
        DataConversionWarning = UserWarning
    warnings.warn(DataConversionWarning(
        f"A column-vector y was passed when a 1d array was expected (shape {shape}). Please "
        "change the shape of y to (n_samples,), for example using ravel()."),
        stacklevel=_stack_level_outside_package())


def _stack_level_outside_package():
    """``stacklevel`` for a warning of the caller: the first frame not in daskboost."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


# ---- prediction: picklable per-partition functions ------------------------------------

class _Output:
    """Margins -> the model's output (or the raw margins)."""

    def __init__(self, output_margin):
        self.output_margin = output_margin

    def __call__(self, booster, margin):
        return booster.output(margin, self.output_margin)


class _Probabilities:
    """Margins -> class probabilities, (n, 2) for binary, (n, K) softmax for K classes;
    (n, T) for T labels per row (multi-label: each label's probability of 1)."""

    def __call__(self, booster, margin):
        if booster.n_outputs > booster.n_targets:
            return softmax(margin)
        objective = OBJECTIVES.get(booster.objective)
        if objective is not None and objective.outputs_classes:  # 0 or 1 (hinge)
            p = booster.output(margin, False)
        else:
            p = sigmoid_direct(margin[0]) if booster.n_targets == 1 else \
                sigmoid_direct(margin).T
        # several labels per row: each label's probability, (n, n_targets)
        return np.column_stack([1.0 - p, p]) if booster.n_targets == 1 else p


class _ClassIndex:
    """Margins -> index of the predicted class (float, for dask meta)."""

    def __call__(self, booster, margin):
        if booster.n_targets > 1:  # each label: 1 where its margin is > 0
            return (margin > 0.0).T.astype(np.float64)
        return class_index(margin)


class _ToLabels:
    def __init__(self, classes):
        self.classes = classes

    def __call__(self, index):
        return self.classes[index.astype(np.int64)]

    def series(self, index):
        return pd.Series(self(index.to_numpy()), index=index.index)


class _ContributionJob:
    """A block's contributions in xgboost's shapes (``Booster.predict``)."""

    def __init__(self, booster, iteration_range, approx, interactions):
        self.booster = booster
        self.iteration_range = iteration_range
        self.approx = approx
        self.interactions = interactions

    def shape_tail(self):
        """The output's shape after the rows."""
        K, width = self.booster.n_outputs, self.booster.n_features + 1
        return (*((K,) if K > 1 else ()), width, *((width,) if self.interactions else ()))

    def __call__(self, block, base_margin=None):
        values = self.booster.predict_contributions(
            block, self.iteration_range, base_margin, self.approx, self.interactions)
        return values[:, 0] if self.booster.n_outputs == 1 else values


class _LeafJob:
    """A block's leaf ids (``Booster.predict_leaf``)."""

    def __init__(self, booster, iteration_range):
        self.booster = booster
        self.iteration_range = iteration_range
        self.rounds = booster.rounds(iteration_range)  # checked before any work

    def shape_tail(self):
        start, stop = self.rounds
        return ((stop - start) * self.booster.n_outputs,)

    def __call__(self, block):
        return self.booster.predict_leaf(block, self.iteration_range)


def _lazy_rows(X, job, tail, dtype):
    """``job(block)`` -> (rows, *tail) of ``dtype`` on every partition of dask X, as one
    lazy dask array (a DataFrame's partitions of unknown lengths; an array's row
    chunks, its columns in one chunk)."""
    import dask
    import dask.array as da
    import dask.dataframe as dd
    if isinstance(X, dd.DataFrame):
        parts = [da.from_delayed(dask.delayed(job)(part), shape=(np.nan, *tail), dtype=dtype)
                 for part in X.to_delayed()]
        return da.concatenate(parts, axis=0)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X.map_blocks(job, dtype=dtype, chunks=(X.chunks[0], *((d,) for d in tail)),
                        new_axis=list(range(2, 1 + len(tail))) or None)


class _PredictJob:
    """Margins of a block with a booster, then ``finish``; the unit of dask prediction."""

    def __init__(self, booster, finish, iteration_range, rows_per_chunk=65536):
        self.booster = booster
        self.finish = finish
        self.iteration_range = iteration_range
        self.rows_per_chunk = rows_per_chunk

    def margin(self, values, base_margin=None):
        return self.booster.predict_margin(values, self.iteration_range, base_margin)

    def __call__(self, block):
        return self.finish(self.booster, self.margin(feature_block(block, self.booster.encoders)))

    def frame(self, part, columns):
        values = self(part)
        if columns is None:
            return pd.Series(values, index=part.index)
        return pd.DataFrame(values, index=part.index, columns=columns)

    def in_memory(self, X, base_margin=None):
        """Predict a numpy/pandas X on a few threads (the kernel releases the GIL).

        ``base_margin``: (K, n) per-row starting margins, or None.
        """
        values = feature_block(X, self.booster.encoders)  # sparse stays sparse (CSR)
        values = values if is_sparse(values) else np.ascontiguousarray(values)

        def margin_rows(start, stop):
            return self.margin(values[start:stop],
                               None if base_margin is None else base_margin[:, start:stop])

        margins = map_row_chunks(margin_rows, values.shape[0], self.rows_per_chunk, axis=1)
        return self.finish(self.booster, margins)
