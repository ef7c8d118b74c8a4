"""The fitted model (``Booster``) and its model file.

A model is a constant start (one margin per output) plus trees whose outputs add up in
margin space; with K outputs (multiclass) each boosting round has K trees, stored round
by round, tree ``t`` adding to output ``t % K``.
"""

import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from . import contributions, inspection, ubjson
from .model_file import (CATEGORICAL_FORMAT_VERSION, FORMAT_NAME, FORMAT_VERSION, check_model,
                         garbage_collection_paused, model_source, parse_model,
                         read_model_json, xgboost_tree_order)
from .data import feature_block, is_dask_collection, table_as_frame
from .booster_settings import DEFAULT_METRIC, with_settings
from .dmatrix import DMatrix, NativeMetric
from .feature_map import load_feature_map
from .local_threads import local_thread_count, local_threads
from .metrics import evaluate, get_metric
from .missing_values import with_missing_as_nan
from .objectives import CustomObjective, get_objective
from .query_groups import group_pointer, qid_block, row_weights
from .sparse import DENSE_CELLS, dense_rows, is_sparse
from .tree import PackedForest, dense_floats
from .tree_dot import tree_dot
from .xgboost_format import (UBJSON_ARRAY_TYPES, from_xgboost, is_xgboost_model, to_xgboost,
                             xgboost_config)


# rows explained by one task (a dense block of them: 8 MiB at most, ``DENSE_CELLS``)
CONTRIBUTION_CHUNK_ROWS = 4096


class Booster:
    """A fitted ensemble.

    Parameters
    ----------
    trees : list of Tree, round by round (K x ``parallel_trees`` per round: tree ``t``
        adds to output ``t % K``).
    base_margin : (K,) starting margin of each output.
    objective : objective name; ``objective_params`` its parameters (num_class, ...).
    n_features, feature_names : the training columns.
    best_iteration, best_score : set by early stopping (rounds are 0-based).
    feature_types : 'q'/'c' per feature, or None (all numeric); ``categories``:
        {feature: its sorted category dictionary} of the categorical ones (issue 13).
    parallel_trees : xgboost's ``num_parallel_tree``, the trees per output in a round
        (boosted random forests), stored round by round, then copy by copy, then output.
    """

    def __init__(self, trees=None, base_margin=None, objective=None, n_features=None,
                 feature_names=None, objective_params=None, best_iteration=None,
                 best_score=None, feature_types=None, categories=None, attributes=None, *,
                 params=None, cache=None, model_file=None, parallel_trees=1):
        if trees is None or isinstance(trees, dict):  # xgboost's (params, cache, model_file)
            self._init_as_xgboost(trees if isinstance(trees, dict) else params, cache,
                                  model_file, base_margin, objective, n_features)
            return
        if model_file is not None or params is not None:
            raise TypeError("Booster(trees, ...) builds a model from its trees; "
                            "Booster(model_file=path) loads one: give one of them")
        self.trees = list(trees)
        self.base_margin = np.atleast_1d(np.asarray(base_margin, dtype=np.float64))
        self.objective = objective
        self.objective_params = dict(objective_params or {})
        self.n_features = int(n_features)
        self.feature_names = None if feature_names is None else list(feature_names)
        self.best_iteration = best_iteration
        self.best_score = best_score
        self.parallel_trees = parallel_trees
        self.categories = {int(f): list(c) for f, c in (categories or {}).items()}
        self.feature_types = (None if feature_types is None or not self.categories
                              else list(feature_types))
        self._attributes = dict(attributes or {})  # xgboost's string attributes (``attr``)
        self._packed = {}
        # set while the Booster is a fit's model in its callbacks: ``set_param(k, v)``
        # changes that fit's parameter ``k`` for the rounds still to grow
        self._fit_in_progress = None
        # xgboost's parameters that act on a trained model (``booster_settings``)
        self._settings = {}

    def _init_as_xgboost(self, params, cache, model_file, *model_parts):
        """xgboost's ``Booster(params, cache, model_file)``: the model in ``model_file``
        (a path or bytes), or no model until ``load_model``.  Of ``params`` (a dict),
        the settings of a trained model hold (``booster_settings``: ``nthread``,
        ``eval_metric``, ``device``); its training parameters would shape xgboost's
        ``update``, which daskboost does not have (``train(..., xgb_model=booster)``
        continues a model), and are not kept; ``cache`` (xgboost's DMatrix cache) is
        accepted for the call's shape."""
        if any(part is not None for part in model_parts):
            raise TypeError("Booster(trees, base_margin, objective, n_features, ...): trees "
                            "is missing")
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"Booster(params=...) takes a dict; got {type(params).__name__}")
        if cache is not None and not isinstance(cache, (list, tuple)):
            raise TypeError(f"Booster(cache=...) takes a list; got {type(cache).__name__}")
        settings = with_settings({}, params or {}, strict=False)
        if model_file is None:  # no model: an empty shell for load_model
            self.__init__([], [0.0], "reg:squarederror", 0)
        else:
            self.__dict__.update(Booster.load(model_file).__dict__)
        self._settings = settings

    def load_model(self, fname):
        """Replace this Booster's model with the one in ``fname`` (a path or the bytes of
        a model file; daskboost's or xgboost's JSON), checked first: xgboost's
        ``Booster().load_model(path)``.  On a bad file this Booster is left as it was;
        its settings (``set_param``) stay."""
        settings = self._settings
        self.__dict__.update(Booster.load(fname).__dict__)
        self._settings = settings

    def _threads(self):
        """The block predicting with ``set_param(nthread=...)``'s threads, if set."""
        return local_threads(self._settings.get("nthread"))

    def _check_has_model(self):
        if self.n_features == 0:
            raise ValueError("this Booster holds no model: load one (load_model(path)) or "
                             "train one (daskboost.train)")

    @property
    def encoders(self):
        """{categorical feature: pandas Index of its dictionary} for
        ``data.feature_block`` (categories matched by value; unseen ones read as missing)."""
        return {f: pd.Index(c, dtype=object) for f, c in self.categories.items()}
    def recoded(self, categories):
        """The same model with the dictionaries ``categories`` ({feature: sorted list},
        each a superset of this model's for the same features): every category set is
        re-indexed, so predictions, matched by value, do not change."""
        index_maps = {}
        for f, old in self.categories.items():
            position = {v: i for i, v in enumerate(categories[f])}
            index_maps[f] = np.array([position[v] for v in old], dtype=np.int64)
        return Booster([t.recoded(index_maps) for t in self.trees], self.base_margin,
                       self.objective, self.n_features, self.feature_names,
                       self.objective_params, self.best_iteration, self.best_score,
                       self.feature_types, categories, parallel_trees=self.parallel_trees)

    @property
    def n_outputs(self):
        return len(self.base_margin)

    @property
    def n_targets(self):
        """The columns of y the model was fitted to (xgboost's ``num_target``), one
        output each."""
        return int(self.objective_params.get("num_target", 1))

    @property
    def trees_per_round(self):
        """K x ``parallel_trees``: the trees of one boosting round."""
        return self.n_outputs * self.parallel_trees

    @property
    def n_rounds(self):
        return len(self.trees) // self.trees_per_round

    def num_boosted_rounds(self):
        """The number of rounds (xgboost's name, for callbacks written for xgboost)."""
        return self.n_rounds

    def get_objective(self):
        if self.objective == CustomObjective.name:  # only its output transform is needed
            return CustomObjective(num_class=self.n_outputs)
        return get_objective(self.objective, **self.objective_params)

    def rounds(self, iteration_range):
        """``(start, stop)`` of ``iteration_range`` (None: all rounds); ValueError unless
        ``0 <= start <= stop <= n_rounds``."""
        start, stop = (0, self.n_rounds) if iteration_range is None else iteration_range
        if not 0 <= start <= stop <= self.n_rounds:
            raise ValueError(f"iteration_range={iteration_range!r} must satisfy "
                             f"0 <= start <= stop <= {self.n_rounds} (the number of rounds)")
        return start, stop

    # ---- xgboost's Booster methods that callbacks and scripts call ----------------------
    def attr(self, key):
        """The string attribute ``key``, or None (xgboost's): ``best_iteration`` and
        ``best_score`` are the model's own, the others set with ``set_attr``."""
        return self.attributes().get(key)

    def attributes(self):
        """Every string attribute: ``{key: value}``."""
        own = {"best_iteration": self.best_iteration, "best_score": self.best_score}
        return {**self._attributes, **{k: _attribute_text(v) for k, v in own.items()
                                       if v is not None}}

    def set_attr(self, **kwargs):
        """Set string attributes (None deletes one), as xgboost's ``set_attr``; they
        are saved with the model.  ``best_iteration``/``best_score`` set the model's
        best round and its score (what early-stopping callbacks such as xgboost's
        ``EarlyStopping`` record); prediction then uses the rounds up to it."""
        for key, value in kwargs.items():
            if value is not None and not isinstance(value, str):
                raise TypeError(f"set_attr({key}={value!r:.80}): attribute values are "
                                "strings (or None to delete)")
        for key, value in kwargs.items():
            if key == "best_iteration":
                self.best_iteration = None if value is None else _attribute_number(
                    key, value, int, range(self.n_rounds))
            elif key == "best_score":
                self.best_score = None if value is None else _attribute_number(
                    key, value, float)
            elif value is None:
                self._attributes.pop(key, None)
            else:
                self._attributes[key] = value

    def set_param(self, params, value=None):
        """xgboost's ``set_param``.  ``params``: a name (with ``value``), a dict, or a list
        of ``(name, value)`` pairs.  From a
        training callback: ``learning_rate`` (or ``eta``) for the rounds still to grow,
        e.g. xgboost's ``LearningRateScheduler`` (the other parameters shape the data or
        the trees already grown).  Outside a fit: the settings of a trained model
        (``booster_settings``): ``nthread`` (the threads ``predict`` uses),
        ``eval_metric`` (what ``eval``/``eval_set`` report) and ``device="cpu"``."""
        pairs = (list(params.items()) if isinstance(params, dict) else list(params)
                 if isinstance(params, (list, tuple)) else [(params, value)])
        if self._fit_in_progress is None:
            settings = self._settings
            if "eval_metric" not in settings and any(k == "eval_metric" for k, _ in pairs):
                # (as xgboost's: a trained model's metrics start with the default one)
                settings = {**settings, "eval_metric": [DEFAULT_METRIC]}
            self._settings = with_settings(settings, pairs, strict=True)
            return
        changes = dict(pairs)
        unknown = [k for k in changes if k not in TRAINING_PARAM_CHANGES]
        if unknown:
            raise ValueError(f"set_param({unknown[0]!r}): only "
                             f"{' / '.join(TRAINING_PARAM_CHANGES)} can change during a fit")
        for key, new in changes.items():
            self._fit_in_progress(TRAINING_PARAM_CHANGES[key], new)

    def update(self, dtrain, iteration, fobj=None):
        """Not here (xgboost's one round on ``dtrain``): a trained Booster does not hold
        its training data's bins; ``daskboost.train(params, dtrain, 1,
        xgb_model=booster)`` grows a round (or more) on it."""
        raise TypeError("Booster.update is not supported: daskboost.train(params, dtrain, "
                        "num_boost_round, xgb_model=booster) continues a model")

    def boost(self, dtrain, iteration, grad, hess):
        """Not here (xgboost's one round from given gradients), as ``update``: a custom
        objective, ``daskboost.train(params, dtrain, 1, obj=f, xgb_model=booster)``."""
        raise TypeError("Booster.boost is not supported: daskboost.train(params, dtrain, "
                        "num_boost_round, obj=f, xgb_model=booster) grows rounds from a "
                        "custom objective's gradients")

    def save_config(self):
        """xgboost's ``save_config``: the model's configuration as a JSON string, in
        xgboost's layout (``xgboost_format.xgboost_config``: the objective and its
        parameters, ``learner_model_param`` with ``base_score``, ``num_class`` and
        ``num_feature``, the tree count, the metrics ``eval``/``eval_set`` report and the
        ``nthread`` setting).  A fit's training parameters are not part of a model
        here and are not in it."""
        self._check_has_model()
        default = self.get_objective().default_metric
        metrics = [default if name is DEFAULT_METRIC else name
                   for name in self._settings.get("eval_metric", [DEFAULT_METRIC])]
        return json.dumps(xgboost_config(self, metrics, self._settings.get("nthread")))

    def copy(self):
        """An independent copy (xgboost's ``Booster.copy``), its settings too."""
        copied = Booster(self.trees, self.base_margin, self.objective, self.n_features,
                         self.feature_names, self.objective_params, self.best_iteration,
                         self.best_score, self.feature_types, self.categories,
                         self._attributes, parallel_trees=self.parallel_trees)
        copied._settings = dict(self._settings)
        return copied

    def num_features(self):
        """The number of training features (xgboost's)."""
        return self.n_features

    def get_fscore(self, fmap=""):
        """Splits per feature (xgboost's ``get_fscore``: ``get_score(fmap,
        importance_type="weight")``)."""
        return inspection.get_score(self.trees, self.feature_names, self.n_features, "weight",
                                    load_feature_map(fmap))

    def __getitem__(self, index):
        """xgboost's slicing: ``booster[start:stop:step]`` (a positive step) is a Booster
        of those rounds, ``booster[i]`` of round i alone (negative indices count from
        the end); the same start margins, no best iteration (the rounds are renumbered).
        Iterating a Booster gives its rounds one by one."""
        if isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
            position = int(index) + (self.n_rounds if index < 0 else 0)
            if not 0 <= position < self.n_rounds:
                raise IndexError(f"round {index} is out of range: the model has "
                                 f"{self.n_rounds} rounds")
            chosen = [position]
        elif isinstance(index, slice):
            if index.step is not None and index.step <= 0:
                raise ValueError(f"booster[{_slice_text(index)}]: the step must be > 0")
            chosen = list(range(*index.indices(self.n_rounds)))
            if not chosen:
                raise ValueError(f"booster[{_slice_text(index)}] holds no round of the "
                                 f"{self.n_rounds}")
        else:
            raise TypeError(f"a Booster is indexed by a round or a slice of rounds; got "
                            f"{type(index).__name__}")
        per_round = self.trees_per_round
        trees = [tree for r in chosen
                 for tree in self.trees[r * per_round:(r + 1) * per_round]]
        return Booster(trees, self.base_margin, self.objective, self.n_features,
                       self.feature_names, self.objective_params, None, None,
                       self.feature_types, self.categories, self._attributes,
                       parallel_trees=self.parallel_trees)

    def _forest(self, iteration_range, packing=PackedForest):
        """The trees of the rounds ``iteration_range`` (None: all; checked) packed by
        ``packing(trees, n_outputs)`` (for prediction, or ``contributions``), cached."""
        start, stop = self.rounds(iteration_range)
        key = (packing, start, stop)
        if key not in self._packed:
            per_round = self.trees_per_round
            self._packed[key] = packing(self.trees[start * per_round:stop * per_round],
                                        self.n_outputs)
        return self._packed[key]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_packed"] = {}
        state["_fit_in_progress"] = None  # (a pickle is the model, not the fit)
        return state

    def __setstate__(self, state):
        state.setdefault("_attributes", {})      # (pickled before attributes existed)
        state.setdefault("_fit_in_progress", None)
        state.setdefault("_settings", {})        # (pickled before settings existed)
        state.setdefault("parallel_trees", 1)    # (pickled before random forests)
        self.__dict__.update(state)
        check_model(self, "unpickled model")  # a pickle is a model file too

    def _features(self, X):
        """X as the kernels read it: a float (n_rows, n_features) array or a CSR block
        (entries not stored are missing); a DataFrame's categories encoded here (an
        Arrow table, pyarrow's or polars', read as a DataFrame)."""
        self._check_has_model()
        X = table_as_frame(X)
        if isinstance(X, pd.DataFrame):
            X = feature_block(X, self.encoders)
        # a sparse block stays sparse (entries not stored are missing)
        X = feature_block(X) if is_sparse(X) else dense_floats(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X has shape {X.shape}; the model takes (n_rows, "
                             f"{self.n_features}) features")
        return X

    def _start(self, n_rows, base_margin):
        """(K, n_rows) starting margins: the constant start, or ``base_margin``."""
        if base_margin is None:
            return np.repeat(self.base_margin[:, None], n_rows, axis=1)
        margin = np.array(base_margin, dtype=np.float64, copy=True)
        if margin.shape != (self.n_outputs, n_rows):
            raise ValueError(f"base_margin has shape {margin.shape}; expected "
                             f"({self.n_outputs}, {n_rows}) (outputs, rows)")
        return margin

    def predict_margin(self, X, iteration_range=None, base_margin=None):
        """(K, n_rows) margins for a float (n_rows, n_features) array or scipy.sparse
        matrix (categorical features as dictionary indices), or a pandas DataFrame
        (encoded here).

        ``base_margin``: per-row starting margins (K, n_rows) replacing the constant start.
        """
        X = self._features(X)
        margin = self._start(X.shape[0], base_margin)
        self._forest(iteration_range).add_block_margin(X, margin)
        return margin

    def predict_contributions(self, X, iteration_range=None, base_margin=None,
                              approx=False, interactions=False):
        """Feature contributions of each row (``contributions``): (n_rows, K, F + 1),
        the last column the bias (the trees' expected values and the start), each row
        summing to its margin; ``approx``: Saabas' instead of TreeSHAP;
        ``interactions``: SHAP interaction values, (n_rows, K, F + 1, F + 1).  X and
        ``base_margin`` as for ``predict_margin``."""
        X = self._features(X)
        start = self._start(X.shape[0], base_margin)
        forest = self._forest(iteration_range, contributions.ContributionForest)
        explain = contributions.interactions if interactions else contributions.contributions
        def explain_rows(first, stop):  # a sparse chunk is densified alone (NaN: missing)
            block = dense_rows(X, first, stop) if is_sparse(X) else X[first:stop]
            return explain(forest, block, start[:, first:stop], approx)

        step = max(1, min(CONTRIBUTION_CHUNK_ROWS, DENSE_CELLS // max(1, self.n_features)))
        return map_row_chunks(explain_rows, X.shape[0], step)

    def predict_leaf(self, X, iteration_range=None):
        """xgboost's ``pred_leaf``: (n_rows, n_trees) int32, the node id (within its tree,
        as ``trees_to_dataframe`` and the xgboost export number them) of the leaf each row
        reaches in each tree of the rounds ``iteration_range``, a round's K trees side by
        side (with ``parallel_trees`` P, in xgboost's order: output by output, the P
        trees of each side by side).  X as for ``predict_margin``."""
        X = self._features(X)
        forest = self._forest(iteration_range)
        start, stop = self.rounds(iteration_range)
        order = xgboost_tree_order(self.n_outputs, self.parallel_trees, stop - start)

        def leaves_of_rows(first, stop):  # a sparse chunk is densified alone (NaN: missing)
            leaves = forest.leaves(dense_rows(X, first, stop) if is_sparse(X)
                                   else X[first:stop])
            return leaves if order is None else leaves[:, order]

        step = max(1, DENSE_CELLS // max(1, self.n_features))
        return map_row_chunks(leaves_of_rows, X.shape[0], step)

    def output(self, margin, output_margin=False):
        """(K, n) margins -> predictions: raw margins ((n,) or (n, K)) or transformed."""
        if output_margin:
            return margin[0] if self.n_outputs == 1 else margin.T
        return self.get_objective().transform(margin)

    def predict(self, X, output_margin=False, iteration_range=None, pred_contribs=False,
                approx_contribs=False, pred_interactions=False, pred_leaf=False,
                strict_shape=False):
        """Predictions (``output_margin``: margins); xgboost's ``pred_contribs`` /
        ``pred_interactions`` (``approx_contribs``: Saabas): contributions in xgboost's
        shapes, (n, F + 1) / (n, F + 1, F + 1) with one output, (n, K, ...) with K;
        ``pred_leaf``: each row's leaf in each tree (``predict_leaf``).  X may be a
        ``DMatrix`` of in-memory data (xgboost's call): its base margins are the start.
        ``strict_shape``: xgboost's shapes that keep every axis (``_strict_shape``).
        Threads: ``set_param(nthread=...)``'s, else ``n_jobs``/dask's ``num_workers``."""
        if isinstance(X, DMatrix) and X.batch_files is not None:  # batch by batch
            return np.concatenate([self.predict(
                batch, output_margin, iteration_range, pred_contribs, approx_contribs,
                pred_interactions, pred_leaf, strict_shape) for batch in X.in_memory_batches()])
        with self._threads():
            values = self._predict(X, output_margin, iteration_range, pred_contribs,
                                   approx_contribs, pred_interactions, pred_leaf)
        if not strict_shape:
            return values
        return strict_shape_of(values, self.n_outputs, "leaf" if pred_leaf else
                               "contributions" if pred_contribs or pred_interactions else
                               "value", self.parallel_trees)

    def _predict(self, X, output_margin, iteration_range, pred_contribs, approx_contribs,
                 pred_interactions, pred_leaf):
        X, base_margin = _matrix_rows(X, self.n_outputs, self.feature_names)
        if pred_leaf:
            if output_margin or pred_contribs or approx_contribs or pred_interactions:
                raise ValueError("pred_leaf=True excludes output_margin, pred_contribs, "
                                 "approx_contribs and pred_interactions: it gives leaf ids")
            return self.predict_leaf(X, iteration_range)
        if contributions.wants_contributions(output_margin, pred_contribs, approx_contribs,
                                             pred_interactions):
            values = self.predict_contributions(X, iteration_range, base_margin,
                                                approx=approx_contribs,
                                                interactions=pred_interactions)
            return values[:, 0] if self.n_outputs == 1 else values
        return self.output(self.predict_margin(X, iteration_range, base_margin), output_margin)

    def inplace_predict(self, data, iteration_range=(0, 0), predict_type="value",
                        missing=np.nan, validate_features=True, base_margin=None,
                        strict_shape=False):
        """xgboost's ``inplace_predict``: ``predict`` on in-memory data (numpy, pandas,
        scipy.sparse, Arrow tables) with ``missing`` read as missing; ``predict_type``
        ``"value"`` or ``"margin"``; ``iteration_range=(0, 0)``: every round;
        ``base_margin`` as ``predict_margin``'s (n_rows,) or (n_rows, K).
        ``validate_features``: a DataFrame's column names must be the training columns,
        in order."""
        if predict_type not in ("value", "margin"):
            raise ValueError(f"predict_type={predict_type!r} must be 'value' or 'margin'")
        data = table_as_frame(data)
        if validate_features and isinstance(data, pd.DataFrame) and \
                self.feature_names is not None and list(data.columns) != self.feature_names:
            raise ValueError(f"data's columns {list(data.columns)!r:.200} are not the training "
                             f"columns {self.feature_names!r:.200} (validate_features=False "
                             "takes them by position)")
        data = with_missing_as_nan(data, missing)
        rounds = None if tuple(iteration_range) == (0, 0) else tuple(iteration_range)
        with self._threads():
            margin = self.predict_margin(data, rounds, None if base_margin is None else
                                         _margin_rows(base_margin, self.n_outputs))
        values = self.output(margin, output_margin=predict_type == "margin")
        return strict_shape_of(values, self.n_outputs, "value") if strict_shape else values

    # ---- inspection -----------------------------------------------------------------
    def get_score(self, fmap="", importance_type="weight"):
        """xgboost's ``Booster.get_score``: {feature name: importance} of used features
        (``inspection.get_score``), named by the feature map file ``fmap`` if given
        (``feature_map``; features past its end keep the model's names).  As in
        xgboost, ``fmap`` is the first parameter: ``get_score("gain")``, an importance
        type where the map is due, is a ValueError saying to write
        ``importance_type="gain"``."""
        feature_map = load_feature_map(_fmap_argument(fmap, "get_score", "importance_type"))
        return inspection.get_score(self.trees, self.feature_names, self.n_features,
                                    importance_type, feature_map)

    def get_split_value_histogram(self, feature, fmap="", bins=None, as_pandas=True):
        """xgboost's ``get_split_value_histogram``: how often the numeric splits on the
        feature named ``feature`` use each threshold (daskboost's, ``x <= t``), in at most
        ``bins`` bins: a DataFrame of ``SplitValue`` (a bin's right edge) and ``Count``
        (``as_pandas=False``: the ``(n, 2)`` array); ``inspection.split_value_histogram``."""
        values = inspection.split_value_histogram(
            self.trees, self.feature_names, self.n_features, self.categories, feature,
            load_feature_map(fmap), bins)
        return pd.DataFrame(values, columns=["SplitValue", "Count"]) if as_pandas else values

    def reset(self):
        """xgboost's ``reset`` (release what training cached): a trained Booster here
        holds no training data; its packed trees for prediction are dropped (built again
        on the next ``predict``).  Returns the Booster."""
        self._packed = {}
        return self

    def get_dump(self, fmap="", with_stats=False, dump_format="text"):
        """One text (JSON, or graphviz's DOT: ``to_graphviz``'s) dump per tree, xgboost's
        ``get_dump``; splits read ``x <= threshold`` (``inspection.dump_text`` /
        ``dump_json``).  ``fmap``: a feature map file (``feature_map``): its names, and
        its types shown as xgboost does (indicator splits without a threshold, integer
        thresholds for ``int``: ``[age<=2]``, ``floor`` of daskboost's threshold, which
        xgboost writes ``[age<3]``)."""
        return self._dump(_fmap_argument(fmap, "get_dump", "with_stats"), with_stats,
                          dump_format)

    def _dump(self, fmap, with_stats, dump_format):
        if dump_format not in ("text", "json", "dot"):
            raise ValueError(f"dump_format={dump_format!r} must be 'text', 'json' or 'dot'")
        feature_map = load_feature_map(fmap)
        if dump_format == "dot":   # (to_graphviz's text, as xgboost's)
            return [tree_dot(self, t, feature_map, with_stats=with_stats)
                    for t in range(len(self.trees))]
        dump = inspection.dump_text if dump_format == "text" else inspection.dump_json
        return dump(self.trees, self.feature_names, with_stats, self.categories, feature_map)

    def dump_model(self, fout, fmap="", with_stats=False, dump_format="text"):
        """xgboost's ``dump_model``: ``get_dump(fmap, with_stats, dump_format)`` written
        to the file ``fout``: each tree after a ``booster[i]:`` line (text), or one JSON
        list of the trees (json).  Written atomically (nothing is written if the dump
        fails, a bad feature map say)."""
        dump = self._dump(fmap, with_stats, dump_format)
        if dump_format == "json":
            text = "[\n" + ",\n".join(dump) + "\n]\n"
        else:
            text = "".join(f"booster[{i}]:\n{tree}" for i, tree in enumerate(dump))
        write_atomically(fout, lambda f: f.write(text))

    def eval_set(self, evals, iteration=0, feval=None, output_margin=True):
        """xgboost's ``eval_set``: ``"[iteration]\t<name>-<metric>:<value>..."`` for each
        ``(DMatrix, name)`` pair of in-memory data (its label, weights and base margins),
        with every round of the model.  The metrics: ``set_param(eval_metric=...)``'s,
        else the objective's default one (a fit's ``eval_metric`` is not part of the
        model; ``set_param`` adds its metrics after that one, as xgboost's); then
        ``feval(predt, dmatrix) -> (name, value)``, xgboost's custom metric
        (``dmatrix.NativeMetric``), given the raw margins (``output_margin``, xgboost's
        default here) or the predictions as ``predict`` gives them."""
        objective = self.get_objective()
        metrics = [(get_metric(objective.default_metric if name is DEFAULT_METRIC else name,
                               objective), objective)
                   for name in self._settings.get("eval_metric", [DEFAULT_METRIC])]
        if feval is not None:
            metrics.append((NativeMetric(feval), None if output_margin else objective))
        line = f"[{iteration}]"
        for matrix, name in evals:
            if not isinstance(matrix, DMatrix):
                raise TypeError(f"eval_set takes (DMatrix, name) pairs; got a "
                                f"{type(matrix).__name__} for {name!r}")
            X, base_margin = _matrix_rows(matrix, self.n_outputs, self.feature_names)
            if matrix.label is None:
                raise ValueError(f"eval_set: the DMatrix {name!r} has no label")
            with self._threads():
                margin = self.predict_margin(X, None, base_margin)
            qid = matrix.qid  # (ranking: each query's weight over its rows)
            weight = (None if matrix.weight is None
                      else np.asarray(row_weights(matrix.weight, qid), np.float64))
            groups = None if qid is None else group_pointer(qid_block(np.asarray(qid)))
            rows = [(np.asarray(matrix.label), margin, weight, groups)]
            for metric, output in metrics:
                value = evaluate(metric, rows, output)  # (xgboost prints feval's with %f)
                text = f"{value:f}" if isinstance(metric, NativeMetric) else f"{value:.17f}"
                line += f"\t{name}-{metric.name}:{text}"
        return line

    def eval(self, data, name="eval", iteration=0):
        """xgboost's ``eval``: ``eval_set([(data, name)], iteration)``."""
        return self.eval_set([(data, name)], iteration)

    def trees_to_dataframe(self, fmap=""):
        """One row per node of every tree (pandas DataFrame, xgboost's columns + Class);
        ``Feature`` named by the feature map file ``fmap`` if given (its types do not
        change the table: ``inspection.trees_to_dataframe``)."""
        feature_map = load_feature_map(fmap)
        return inspection.trees_to_dataframe(self.trees, self.feature_names, self.n_outputs,
                                             self.categories, feature_map)

    # ---- serialisation --------------------------------------------------------------
    def to_dict(self):
        out = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "objective": self.objective,
            "objective_params": self.objective_params,
            "base_margin": self.base_margin.tolist(),
            "n_features": self.n_features,
            "feature_names": self.feature_names,
            "best_iteration": self.best_iteration,
            "best_score": self.best_score,
            "trees": [tree.to_dict() for tree in self.trees],
        }
        if self.parallel_trees != 1:  # (only then: other models keep their bytes)
            out["num_parallel_tree"] = self.parallel_trees
        if self._attributes:  # (only when set: a model without them keeps its bytes)
            out["attributes"] = dict(sorted(self._attributes.items()))
        if self.categories:  # format version 2; numeric models stay version 1, unchanged
            out["version"] = CATEGORICAL_FORMAT_VERSION
            out["feature_types"] = self.feature_types
            out["categories"] = {str(f): c for f, c in sorted(self.categories.items())}
        return out

    def save_model(self, path, format="daskboost"):
        """Write the model to ``path`` (atomically: no half-written file):
        ``format="daskboost"``, its own versioned JSON, or ``"xgboost"``, xgboost's JSON
        model (``xgboost.Booster(model_file=path)`` and treelite load it; see
        ``xgboost_format``).  As xgboost does, a name ending in ``.ubj`` is written in
        UBJSON (binary JSON), and so is xgboost's format under any name but ``.json``
        (``write_model_file``); ``load`` reads both."""
        write_model_file(path, self.to_payload(format), format)

    def to_payload(self, format="daskboost"):
        """The model file's JSON object in ``format`` (see ``save_model``)."""
        self._check_has_model()
        if format == "daskboost":
            return self.to_dict()
        if format == "xgboost":
            return to_xgboost(self)
        raise ValueError(f"format={format!r} must be 'daskboost' or 'xgboost'")

    @classmethod
    def from_dict(cls, data, source="model"):
        """The model in a model file's JSON object (daskboost's, or xgboost's JSON model
        format: ``xgboost_format``), checked completely (``model_file``); ValueError
        naming ``source`` (the file) and the bad field otherwise."""
        if is_xgboost_model(data):
            booster = cls(**from_xgboost(data, source))
        else:
            booster = cls(**parse_model(data, source))
        check_model(booster, source)
        return booster

    def save_raw(self, raw_format="json", format="daskboost"):
        """The model file's bytes, as a ``bytearray`` (xgboost's ``save_raw``): what
        ``save_model(path, format)`` writes, for a database or a message rather than a
        file; ``Booster.load`` and the estimators' ``load_model`` read them back.
        ``raw_format``: "json", or "ubj" (UBJSON, binary JSON: for xgboost's format,
        written as xgboost's own ``save_raw()`` writes it, which xgboost loads)."""
        if raw_format not in ("json", "ubj"):
            raise ValueError(f"raw_format={raw_format!r:.40} must be 'json' or 'ubj'")
        return bytearray(model_bytes(self.to_payload(format), format, raw_format))

    @classmethod
    @garbage_collection_paused()
    def load(cls, model):
        """The model in the file at path ``model`` (written by ``save_model``, or an
        xgboost JSON model), or in its bytes (``save_raw``), checked."""
        return cls.from_dict(read_model_json(model), model_source(model))


# what ``set_param`` may change during a fit, by xgboost's names -> the parameter
TRAINING_PARAM_CHANGES = {"learning_rate": "learning_rate", "eta": "learning_rate"}


def strict_shape_of(values, n_outputs, kind, parallel_trees=1):
    """xgboost's ``strict_shape=True`` shapes, every axis kept whatever the model:
    values and margins (n, K) (a single output's, and ``multi:softmax``'s classes,
    (n, 1)); leaves (n, rounds, K, ``parallel_trees``); contributions (n, K, F + 1)
    and interactions (n, K, F + 1, F + 1)."""
    n = values.shape[0]
    if kind == "leaf":
        return values.reshape(n, -1, n_outputs, parallel_trees)
    if kind == "contributions":
        return values if n_outputs > 1 else values[:, None]
    return values.reshape(n, -1)


def _fmap_argument(fmap, method, old_first):
    """``fmap`` as given to ``method``, refused where it is what the method took first
    before it had xgboost's signature (``fmap`` first): ``old_first``, an importance
    type (``get_score("gain")``) or ``with_stats`` (``get_dump(True)``)."""
    shown = f'"{fmap}"' if isinstance(fmap, str) else repr(fmap)
    hint = f"{method}({shown}): fmap, the feature map file, is {method}'s first " \
        f"parameter, as in xgboost; write {old_first}={shown}"
    if old_first == "importance_type" and isinstance(fmap, str) \
            and fmap in inspection.IMPORTANCE_TYPES:
        raise ValueError(f"{hint} (a feature map file named {fmap!r}: './{fmap}')")
    if old_first == "with_stats" and isinstance(fmap, (bool, np.bool_)):
        raise TypeError(hint)
    return fmap


def _attribute_text(value):
    return repr(float(value)) if isinstance(value, float) else str(value)


def _attribute_number(key, text, kind, allowed=None):
    """An attribute's string read as ``kind``; ValueError naming it otherwise."""
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"set_attr({key}={text!r:.80}) must be a {kind.__name__}") from None
    if kind is float and not np.isfinite(value) or allowed is not None and value not in allowed:
        raise ValueError(f"set_attr({key}={text!r:.80}) is out of range"
                         + ("" if allowed is None else f": the model has {len(allowed)} rounds"))
    return value


def _margin_rows(base_margin, n_outputs):
    """Per-row margins (n_rows,) or (n_rows, K) as ``predict_margin`` takes them: (K, n)."""
    values = np.asarray(base_margin, dtype=np.float64)
    values = values.reshape(-1, 1) if values.ndim == 1 else values
    if values.ndim != 2 or values.shape[1] != n_outputs:
        raise ValueError(f"base_margin has shape {np.shape(base_margin)}; the model takes "
                         f"(n_rows,{' ' + str(n_outputs) if n_outputs > 1 else ''}) margins")
    return np.ascontiguousarray(values.T)


def _slice_text(index):
    return ":".join("" if v is None else str(v) for v in (index.start, index.stop, index.step))


def map_row_chunks(func, n_rows, step, axis=0):
    """``func(start, stop)`` for the chunks of ``step`` rows (one empty chunk when there
    are no rows) on the process's threads (``func``'s kernels release the GIL), the
    results concatenated along ``axis``."""
    chunks = [(i, min(i + step, n_rows)) for i in range(0, n_rows, step)] or [(0, 0)]
    if len(chunks) == 1:
        return func(*chunks[0])
    with ThreadPoolExecutor(max_workers=local_thread_count()) as pool:
        return np.concatenate(list(pool.map(lambda chunk: func(*chunk), chunks)), axis=axis)


JSON_STYLE = {"sort_keys": True, "separators": (",", ":")}  # model files' JSON, compact


def _matrix_rows(X, n_outputs, feature_names):
    """``(X, base_margin)`` for ``predict``: a ``DMatrix``'s data and its base margins as
    ``predict_margin`` takes them, or ``(X, None)`` for anything else.  A sparse matrix
    named by its ``DMatrix`` must have the model's ``feature_names`` (when it has any)."""
    if not isinstance(X, DMatrix):
        return X, None
    names = X.names_beside_data
    if names is not None and feature_names is not None and names != feature_names:
        raise ValueError(f"the DMatrix's feature_names {names!r:.200} are not the model's "
                         f"{feature_names!r:.200}")
    if is_dask_collection(X.data):
        raise TypeError("Booster.predict predicts in-memory data; a DMatrix of dask "
                        "collections: daskboost.dask.predict(client, booster, dmatrix)")
    margin = X.get_base_margin()
    return X.data, None if margin is None else _margin_rows(margin, n_outputs)


def write_model_file(path, payload, format="daskboost"):
    """Write the model file's object ``payload`` (in ``format``) to ``path`` through a
    temporary file in the same directory: as UBJSON when the name ends in ``.ubj`` and,
    in xgboost's format, whatever the name but ``.json`` (xgboost's rule, so that xgboost
    reads it); as JSON otherwise."""
    name = os.fspath(path).lower()
    binary = name.endswith(".ubj") or (format == "xgboost" and not name.endswith(".json"))
    data = model_bytes(payload, format, "ubj" if binary else "json")
    write_atomically(path, lambda f: f.write(data), binary=True)


def model_bytes(payload, format, raw_format):
    """A model file's bytes: ``payload`` as compact JSON (``raw_format="json"``) or as
    UBJSON (``"ubj"``; xgboost's format with its typed arrays and float32 numbers,
    daskboost's with float64 ones, lossless)."""
    if raw_format == "json":
        return json.dumps(payload, **JSON_STYLE).encode("utf-8")
    if raw_format == "ubj":
        if format == "xgboost":
            return ubjson.encode(payload, UBJSON_ARRAY_TYPES, float_marker=b"d")
        return ubjson.encode(payload)
    raise ValueError(f"raw_format={raw_format!r:.40} must be 'json' or 'ubj'")


def write_atomically(path, write, binary=False):
    """Call ``write(file)`` on a temporary file in ``path``'s directory, then move it to
    ``path``: no half-written file is ever at ``path``, and none is left on an error."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".daskboost-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


