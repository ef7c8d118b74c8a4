"""xgboost's JSON model format (its ``doc/model.schema``): export and import.

A daskboost model maps onto an xgboost ``gbtree`` model one to one: the same trees in
the same order (tree ``t`` adds to output ``t % K``), each node's split feature, default
direction, children, gain (``loss_changes``) and hessian sum (``sum_hessian``), leaf
values in ``split_conditions``, category sets in xgboost's layout (the categories in a
node's set go right, in both), and the constant start as ``base_score``.

Two things differ and are translated:

- **Thresholds.**  daskboost sends a row left when ``x <= t`` (``t`` a float64); xgboost
  when ``x < t'`` with ``x`` and ``t'`` float32.  For a float32 ``x``, ``x <= t`` holds
  exactly when ``x <= d``, ``d`` the largest float32 not above ``t``, that is when
  ``x < next float32 after d``: that is ``t'`` (``xgboost_thresholds``).  Every float32
  value goes the same way in both (a value of +inf, on a split whose threshold is
  +inf, excepted: xgboost cannot send it left).  Import inverts it: ``t = previous
  float32 before t'``.
- **base_score.**  xgboost stores the start as a prediction for some objectives (a
  probability for ``binary:logistic``, a mean for the log-link ones) and as a margin
  for the others (``_BASE_SCORE_LINKS``), written with at most 9 digits, as xgboost 2
  reads it.  One start serves every output; where a multiclass model's outputs start
  apart, the differences go into the first round's leaves (``_start_and_first_round``).

Categorical features: xgboost reads a category as its code in the input's pandas
``category`` dtype.  daskboost's dictionary of a feature (sorted, ``Booster.categories``)
is written as that order, so xgboost predicts the same on a DataFrame whose category
columns have exactly those categories (``pd.Categorical(values,
categories=booster.categories[f])``).  Import matches categories by value when the file
stores them (xgboost 3 trained on pandas ``category`` columns: its ``cats`` section);
otherwise xgboost's codes are the dictionary (the integers ``0 .. n - 1``): give the
imported model those codes.
"""

import math
import warnings

import numpy as np

from .binning import MAX_BIN_LIMIT
from .model_file import (MAX_PARALLEL_TREES, OWN_ATTRIBUTES, string_attributes,
                         xgboost_tree_order)
from .objectives import (AFT_DEFAULTS, LOGISTIC_OBJECTIVES, OBJECTIVES, RANKING_DEFAULTS,
                         ranking_settings)
from .tree import Tree
from .verbosity import DaskBoostWarning

# the most categories a feature's codes can hold (uint16 codes, one for missing)
MAX_CATEGORIES = MAX_BIN_LIMIT - 1

# the xgboost version whose layout the export follows (read by xgboost 2.0 and later)
EXPORT_VERSION = [2, 1, 0]
_ROOT_PARENT = 2147483647  # xgboost's "no parent"

# the typed arrays of xgboost's UBJSON model (its tree fields), by key: float32 "d",
# int32 "l", uint8 "U", int64 "L"; its other lists are written item by item
UBJSON_ARRAY_TYPES = {
    **dict.fromkeys(("base_weights", "loss_changes", "split_conditions", "sum_hessian"), b"d"),
    **dict.fromkeys(("left_children", "right_children", "parents", "split_indices",
                     "categories", "categories_nodes"), b"l"),
    **dict.fromkeys(("default_left", "split_type"), b"U"),
    **dict.fromkeys(("categories_segments", "categories_sizes"), b"L"),
}

# objectives whose base_score xgboost stores through a link, and the link
_BASE_SCORE_LINKS = {"binary:logistic": "logit", "reg:logistic": "logit",
                     "count:poisson": "log", "reg:gamma": "log", "reg:tweedie": "log",
                     "survival:aft": "log"}


def _objective_section(objective, params):
    """xgboost's ``learner.objective`` object for a daskboost objective."""
    section = {"name": objective}
    if objective in ("reg:squarederror", "reg:squaredlogerror", "reg:logistic",
                     "binary:logistic", "binary:logitraw", "reg:gamma"):
        scale = params.get("scale_pos_weight", 1.0)
        section["reg_loss_param"] = {"scale_pos_weight": "1" if scale == 1.0 else _number(scale)}
    elif objective == "reg:pseudohubererror":
        section["pseudo_huber_param"] = {"huber_slope": _number(params["huber_slope"])}
    elif objective == "reg:quantileerror":
        levels = np.atleast_1d(params["quantile_alpha"])
        section["quantile_loss_param"] = {
            "quantile_alpha": f"[{','.join(_number(a) for a in levels)}]"}
    elif objective == "count:poisson":
        section["poisson_regression_param"] = {
            "max_delta_step": _number(params.get("max_delta_step") or 0.7)}
    elif objective == "reg:tweedie":
        section["tweedie_regression_param"] = {
            "tweedie_variance_power": _number(params["tweedie_variance_power"])}
    elif objective.startswith("multi:"):
        section["softmax_multiclass_param"] = {"num_class": str(params["num_class"])}
    elif objective == "survival:aft":
        section["aft_loss_param"] = {
            "aft_loss_distribution": params.get("aft_loss_distribution", "normal"),
            "aft_loss_distribution_scale": _number(
                params.get("aft_loss_distribution_scale", 1.0))}
    elif objective.startswith("rank:"):
        settings = ranking_settings(**{k: params[k] for k in RANKING_DEFAULTS if k in params})
        k = params.get("lambdarank_num_pair_per_sample")
        section["lambdarank_param"] = {
            "lambdarank_bias_norm": "1",
            "lambdarank_normalization": _flag(settings["lambdarank_normalization"]),
            "lambdarank_num_pair_per_sample": str(_NOT_SET if k is None else k),
            "lambdarank_pair_method": settings["lambdarank_pair_method"],
            "lambdarank_score_normalization": _flag(
                settings["lambdarank_score_normalization"]),
            "lambdarank_unbiased": "0",
            "ndcg_exp_gain": _flag(settings["ndcg_exp_gain"])}
    return section


# xgboost's "not set" of ``lambdarank_num_pair_per_sample`` (its default for the method)
_NOT_SET = 2 ** 32 - 1


def _flag(value):
    return "1" if value else "0"


def _number(value):
    """A number as xgboost writes one ("1.6867428E0"): the shortest repr of its float32.
    (xgboost 2 reads a longer decimal, such as a float64's repr, as its default.)"""
    text = np.format_float_scientific(np.float32(value), unique=True, exp_digits=1)
    return text.replace("e+", "E").replace("e", "E")


def xgboost_thresholds(thresholds):
    """float32 ``t'`` with ``x < t'`` exactly when ``x <= t`` for every float32 ``x``
    (module docstring), for float64 thresholds ``t``."""
    t = np.asarray(thresholds, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as intended
        nearest = t.astype(np.float32)
        below = np.where(nearest.astype(np.float64) > t,
                         np.nextafter(nearest, np.float32(-np.inf)), nearest)
        return np.nextafter(below, np.float32(np.inf))


def daskboost_thresholds(xgboost_split_conditions):
    """The inverse of ``xgboost_thresholds``: ``x < t'`` as ``x <= t`` (float32 ``x``)."""
    t = np.asarray(xgboost_split_conditions, dtype=np.float32)
    with np.errstate(over="ignore"):
        return np.nextafter(t, np.float32(-np.inf)).astype(np.float64)


def _base_score(objective, margin):
    """xgboost's ``base_score`` string for the constant start ``margin`` (one for all
    outputs: see ``_start_and_first_round``)."""
    link = _BASE_SCORE_LINKS.get(objective)
    if link == "logit":
        return _number(1.0 / (1.0 + math.exp(-margin)))
    if link == "log":
        return _number(math.exp(margin))
    return _number(margin)


def _start_and_first_round(base_margin, trees):
    """(one start for every output, the trees) for a model whose outputs may start at
    different margins (multiclass).  xgboost 3 can store one start per output, but
    xgboost 2 reads such a ``base_score`` as its default 0.5, silently; so the start
    written is their mean, and each output's difference from it is added to every leaf
    of that output's first tree: every row's margin is the same in both versions, and
    so are its SHAP values (a constant added to a tree's leaves moves only the bias)."""
    margins = np.asarray(base_margin, dtype=np.float64)
    start = float(margins.mean())
    if np.all(margins == margins[0]) or len(trees) < len(margins):
        return float(margins[0]), trees
    shifted = list(trees)
    for k, shift in enumerate(margins - start):
        tree = trees[k]
        shifted[k] = Tree(tree.feature, tree.threshold, tree.default_left, tree.left,
                          tree.right, tree.value + shift, tree.gain, tree.cover,
                          categories=tree.categories)
    return start, shifted


def _margins(objective, base_score, n_outputs, source):
    """The constant start (K,) from xgboost's ``base_score`` string."""
    text = str(base_score).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        values = np.array([float(v) for v in text.split(",")], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{source}: base_score {base_score!r} is not a number or a "
                         "list of numbers") from None
    if len(values) not in (1, n_outputs) or not np.all(np.isfinite(values)):
        raise ValueError(f"{source}: base_score {base_score!r} must be one finite number "
                         f"or {n_outputs}")
    values = np.broadcast_to(values, (n_outputs,)).copy()
    link = _BASE_SCORE_LINKS.get(objective)
    with np.errstate(divide="ignore"):
        if link == "logit":
            if not np.all((values > 0) & (values < 1)):
                raise ValueError(f"{source}: base_score {base_score!r} of objective "
                                 f"{objective!r} must be in (0, 1)")
            values = np.log(values) - np.log1p(-values)
        elif link == "log":
            if not np.all(values > 0):
                raise ValueError(f"{source}: base_score {base_score!r} of objective "
                                 f"{objective!r} must be positive")
            values = np.log(values)
    return values


# ---- export ------------------------------------------------------------------------------

def tree_to_xgboost(tree, tree_id, n_features):
    """One tree as xgboost's JSON tree object."""
    n = tree.n_nodes
    split = tree.feature >= 0
    categorical = np.zeros(n, dtype=bool)
    for node in (tree.categories or {}):
        categorical[node] = True
    parents = np.full(n, _ROOT_PARENT, dtype=np.int64)
    parents[tree.left[split]] = np.flatnonzero(split)
    parents[tree.right[split]] = np.flatnonzero(split)
    numeric_split = split & ~categorical
    conditions = np.where(split, 0.0, tree.value).astype(np.float32)
    conditions[numeric_split] = xgboost_thresholds(tree.threshold[numeric_split])
    nodes = sorted(tree.categories or {})
    sizes = [len(tree.categories[node]) for node in nodes]
    return {
        "id": tree_id,
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(n), "size_leaf_vector": "1"},
        "left_children": np.where(split, tree.left, -1).tolist(),
        "right_children": np.where(split, tree.right, -1).tolist(),
        "parents": parents.tolist(),
        "split_indices": np.where(split, tree.feature, 0).tolist(),
        "split_conditions": [float(v) for v in conditions],
        "split_type": categorical.astype(int).tolist(),
        "default_left": (tree.default_left & split).astype(int).tolist(),
        "loss_changes": [float(v) for v in np.where(split, tree.gain, 0.0).astype(np.float32)],
        "sum_hessian": [float(v) for v in tree.cover.astype(np.float32)],
        "base_weights": [float(v) for v in tree.value.astype(np.float32)],
        "categories_nodes": nodes,
        "categories_segments": [int(s) for s in np.cumsum([0] + sizes[:-1])] if nodes else [],
        "categories_sizes": sizes,
        "categories": [int(c) for node in nodes for c in tree.categories[node]],
    }


def _xgboosts_objective(booster, what):
    """``booster``'s objective, one of xgboost's; ValueError saying that only such models
    ``what`` otherwise (a custom objective)."""
    if booster.objective not in OBJECTIVES:
        raise ValueError(f"objective={booster.objective!r} has no xgboost equivalent; only "
                         f"models of xgboost's objectives ({', '.join(OBJECTIVES)}) {what}")
    return booster.objective


def _learner_model_param(booster, start):
    """xgboost's ``learner_model_param`` of ``booster``, whose outputs start at ``start``
    (``_start_and_first_round``)."""
    objective = booster.objective
    return {"base_score": _base_score(objective, start), "boost_from_average": "1",
            "num_class": str(booster.n_outputs if objective.startswith("multi:") else 0),
            "num_feature": str(booster.n_features),
            "num_target": str(1 if objective.startswith("multi:") else booster.n_outputs)}


def base_scores(booster):
    """Each output's start as xgboost's ``base_score`` holds it (a probability for the
    logistic objectives, a mean for the log-link ones, the margin for the others), as
    float32: xgboost's ``intercept_`` of a tree model."""
    return np.array([float(_base_score(booster.objective, m)) for m in booster.base_margin],
                    dtype=np.float32)


def xgboost_config(booster, metrics, nthread):
    """xgboost's ``save_config()`` object for ``booster``: what a model holds (its
    objective and parameters, ``learner_model_param``, the tree booster and its tree
    count, ``metrics`` and ``nthread``, the settings it predicts and evaluates with).
    The training parameters (``eta``, ``max_depth``...) are a fit's, not kept in a model
    here, and are left out; ValueError for a custom objective, as ``to_xgboost``."""
    objective = _xgboosts_objective(booster, "have its config")
    start = _start_and_first_round(booster.base_margin, booster.trees[:booster.n_outputs])[0]
    return {
        "version": EXPORT_VERSION,
        "learner": {
            "generic_param": {"device": "cpu", "nthread": str(nthread or 0)},
            "gradient_booster": {"name": "gbtree", "gbtree_model_param": {
                "num_parallel_tree": str(booster.parallel_trees),
                "num_trees": str(len(booster.trees))}},
            "learner_model_param": _learner_model_param(booster, start),
            "learner_train_param": {"booster": "gbtree", "objective": objective,
                                    "multi_strategy": "one_output_per_tree",
                                    "disable_default_eval_metric": "0"},
            "metrics": [{"name": str(m)} for m in metrics],
            "objective": _objective_section(objective, booster.objective_params),
        },
    }


def to_xgboost(booster):
    """The model as an xgboost JSON model (a dict for ``json.dump``); ValueError for
    what xgboost cannot represent (a custom objective)."""
    objective = _xgboosts_objective(booster, "export")
    K = booster.n_outputs
    F = booster.n_features
    types = booster.feature_types or ["q"] * F
    feature_types = ["c" if t == "c" else "float" for t in types]
    attributes = dict(booster._attributes)
    if booster.best_iteration is not None:
        attributes["best_iteration"] = str(booster.best_iteration)
    if booster.best_score is not None:
        attributes["best_score"] = repr(float(booster.best_score))
    start, trees = _start_and_first_round(booster.base_margin, booster.trees)
    n_trees, P = len(trees), booster.parallel_trees
    order = xgboost_tree_order(K, P, booster.n_rounds)
    if order is not None:  # xgboost's order: round, output, copy (daskboost's: copy, output)
        trees = [trees[i] for i in order]
    return {
        "version": EXPORT_VERSION,
        "learner": {
            "attributes": attributes,
            "feature_names": list(booster.feature_names or []),
            "feature_types": feature_types if booster.feature_names or booster.categories
            else [],
            "learner_model_param": _learner_model_param(booster, start),
            "objective": _objective_section(objective, booster.objective_params),
            "gradient_booster": {
                "name": "gbtree",
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": str(P),
                                           "num_trees": str(n_trees)},
                    "iteration_indptr": list(range(0, n_trees + 1, K * P)),
                    "tree_info": [t // P % K for t in range(n_trees)],
                    "trees": [tree_to_xgboost(tree, t, F)
                              for t, tree in enumerate(trees)],
                },
            },
        },
    }


# ---- import ------------------------------------------------------------------------------

def is_xgboost_model(data):
    """Whether a model file's JSON object is xgboost's (it has a ``learner``)."""
    return isinstance(data, dict) and "learner" in data and "format" not in data


def from_xgboost(data, source):
    """``Booster`` keyword arguments from an xgboost JSON model (checked afterwards, as
    every model file, by ``model_file.check_model``).  ValueError naming ``source`` for
    what a daskboost model cannot represent (gblinear, dart, random forests, vector
    leaves, several targets, objectives daskboost does not have) or a malformed file."""
    try:
        return _from_xgboost(data, source)
    except ValueError as err:
        if str(err).startswith(f"{source}:"):
            raise
        problem = err  # e.g. numpy refusing a NaN as a child id
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError) as err:
        problem = err  # a field missing, of the wrong type, or a number out of range
    raise ValueError(f"{source}: not a readable xgboost JSON model ({type(problem).__name__}: "
                     f"{problem!s:.120})") from None


# the xgboost versions whose JSON model schema this reads (1.0 to 3.x)
READ_VERSIONS = (1, 2, 3)


def _from_xgboost(data, source):
    version = data.get("version")
    if not (isinstance(version, list) and version and isinstance(version[0], int)
            and not isinstance(version[0], bool)):
        raise ValueError(f"{source}: an xgboost JSON model has a version [major, minor, "
                         f"patch]; got {version!r:.60}")
    if version[0] not in READ_VERSIONS:
        raise ValueError(f"{source}: xgboost model version {version} is not one this "
                         f"daskboost reads (xgboost {READ_VERSIONS[0]}.x to "
                         f"{READ_VERSIONS[-1]}.x); export it from such an xgboost")
    learner = data["learner"]
    booster = learner["gradient_booster"]
    name = booster.get("name")
    if name != "gbtree":
        raise ValueError(f"{source}: gradient_booster {name!r} cannot be read: daskboost "
                         "models are gbtree ensembles (not gblinear, not dart)")
    model = booster["model"]
    params = learner["learner_model_param"]
    objective_section = learner["objective"]
    objective = objective_section["name"]
    if objective not in OBJECTIVES:
        raise ValueError(f"{source}: objective {objective!r} has no daskboost equivalent "
                         f"(daskboost has {', '.join(OBJECTIVES)})")
    P = _parallel_trees(model["gbtree_model_param"].get("num_parallel_tree", "1"), source)
    n_targets = int(params.get("num_target", "1"))
    if n_targets != 1 and not (OBJECTIVES[objective].multi_target
                               or objective == "reg:quantileerror"):
        raise ValueError(f"{source}: num_target = {params['num_target']} (several targets) "
                         f"with objective {objective!r}, which takes one label per row")
    n_features = int(params["num_feature"])
    K = max(1, int(params.get("num_class", "0")), n_targets)
    trees = model["trees"]
    if not isinstance(trees, list):
        raise ValueError(f"{source}: gradient_booster.model.trees must be an array")
    expected = [t // P % K for t in range(len(trees))]
    tree_info = list(model.get("tree_info", expected))
    if len(trees) % (K * P) or tree_info != expected:
        raise ValueError(f"{source}: the trees are not whole rounds of {K * P} trees, "
                         f"{P} per output in output order (tree_info)")
    feature_types = list(learner.get("feature_types") or [])
    categorical = [f for f, t in enumerate(feature_types) if t == "c"]
    parsed = [_tree_from_xgboost(tree, t, source) for t, tree in enumerate(trees)]
    order = xgboost_tree_order(K, P, len(trees) // (K * P))
    if order is not None:  # daskboost's order: round, copy, output
        in_order = [None] * len(parsed)
        for j, i in enumerate(order):
            in_order[i] = parsed[j]
        parsed = in_order
    categories = {}
    for f in categorical:  # without stored categories, xgboost's codes are the dictionary
        codes = [int(c.max()) for tree in parsed for node, c in (tree.categories or {}).items()
                 if tree.feature[node] == f and len(c)]
        largest = max(codes, default=0)
        if largest >= MAX_CATEGORIES:
            raise ValueError(f"{source}: a split on feature {f} names category {largest}; "
                             f"daskboost holds at most {MAX_CATEGORIES} categories a feature")
        categories[f] = list(range(largest + 1))
    stored = _stored_categories(model.get("cats"), categorical, n_features, source)
    if stored:  # xgboost 3 stored the categories: match them by value, as xgboost does
        index_maps = {}
        for f, values in stored.items():
            if len(values) < len(categories[f]):
                raise ValueError(f"{source}: feature {f} has {len(values)} stored categories "
                                 f"but its splits use code {len(categories[f]) - 1}")
            dictionary = sorted(values)
            position = {v: i for i, v in enumerate(dictionary)}
            index_maps[f] = np.array([position[v] for v in values], dtype=np.int64)
            categories[f] = dictionary
        parsed = [tree.recoded(index_maps) for tree in parsed]
    attributes = learner.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise ValueError(f"{source}: learner.attributes must be an object; got "
                         f"{attributes!r:.80}")
    best = attributes.get("best_iteration")
    best_score = attributes.get("best_score")
    others = string_attributes({k: v for k, v in attributes.items()
                                if k not in OWN_ATTRIBUTES}, f"{source}: learner")
    return {
        "trees": parsed,
        "base_margin": _margins(objective, params["base_score"], K, source),
        "objective": objective,
        "objective_params": _objective_params(objective, objective_section, K, n_targets),
        "n_features": n_features,
        "feature_names": list(learner.get("feature_names") or []) or None,
        "best_iteration": None if best is None else int(best),
        "best_score": None if best_score is None else float(best_score),
        "feature_types": (["c" if t == "c" else "q" for t in feature_types]
                          if categorical else None),
        "categories": categories or None,
        "attributes": others,
        "parallel_trees": P,
    }


def _parallel_trees(value, source):
    """xgboost's ``num_parallel_tree`` string: an integer in [1, MAX_PARALLEL_TREES]."""
    try:
        P = int(value)
    except (TypeError, ValueError):
        P = None
    if P is None or not 1 <= P <= MAX_PARALLEL_TREES:
        raise ValueError(f"{source}: num_parallel_tree {value!r:.40} must be an integer in "
                         f"[1, {MAX_PARALLEL_TREES}]")
    return P


def _stored_categories(cats, categorical, n_features, source):
    """{feature: its categories in code order} from xgboost 3's ``cats`` section (the
    categories of the pandas columns it was trained on), or {} when there is none.
    Strings are stored as their UTF-8 bytes (signed) cut at ``offsets``; numbers as
    ``values``."""
    encodings = (cats or {}).get("enc") or []
    if not encodings or not categorical:
        return {}
    if len(encodings) != n_features:
        raise ValueError(f"{source}: cats.enc has {len(encodings)} entries for "
                         f"{n_features} features")
    stored = {}
    for f in categorical:
        entry = encodings[f]
        offsets, values = entry.get("offsets"), entry.get("values") or []
        if offsets:
            if any(int(v) < 0 for v in values):
                # xgboost (3.2) cuts strings at offsets counted in characters, not bytes:
                # text beyond ASCII comes back cut and shifted, unusable as values
                warnings.warn(f"{source}: the stored categories of feature {f} are not all "
                              "ASCII, which xgboost stores garbled; the imported model reads "
                              "xgboost's category codes instead of the values",
                              DaskBoostWarning, stacklevel=4)
                return {}
            raw = bytes(int(v) for v in values)
            found = [raw[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:])]
        else:
            found = [v if isinstance(v, int) else float(v) for v in values]
        if not found:
            return {}  # (a feature typed 'c' without stored categories: codes, as xgboost 2)
        if len(found) > MAX_CATEGORIES:
            raise ValueError(f"{source}: feature {f} has {len(found)} stored categories; "
                             f"daskboost holds at most {MAX_CATEGORIES} a feature")
        if len(set(found)) != len(found):
            raise ValueError(f"{source}: the stored categories of feature {f} repeat a value")
        stored[f] = found
    return stored


def _objective_params(objective, section, n_outputs, n_targets=1):
    params = {}
    if objective.startswith("multi:"):
        params["num_class"] = n_outputs
    if n_targets > 1 and objective != "reg:quantileerror":  # (its outputs are levels)
        params["num_target"] = n_targets
    if objective in LOGISTIC_OBJECTIVES:
        scale = float(section.get("reg_loss_param", {}).get("scale_pos_weight", 1.0))
        if scale != 1.0:
            params["scale_pos_weight"] = scale
    if objective == "reg:pseudohubererror":
        params["huber_slope"] = float(section["pseudo_huber_param"]["huber_slope"])
    elif objective == "reg:quantileerror":
        text = str(section["quantile_loss_param"]["quantile_alpha"])
        alphas = [float(a) for a in text.strip("[]").split(",")]
        if len(alphas) != n_outputs:
            raise ValueError(f"quantile_alpha {text} has {len(alphas)} levels, but the model "
                             f"has {n_outputs} outputs (num_target)")
        params["quantile_alpha"] = alphas[0] if n_outputs == 1 else alphas
    elif objective == "survival:aft":
        aft = section.get("aft_loss_param", {})
        for key, default in AFT_DEFAULTS.items():
            value = type(default)(aft.get(key, default))
            if value != default:
                params[key] = value
    elif objective == "reg:tweedie":
        params["tweedie_variance_power"] = float(
            section["tweedie_regression_param"]["tweedie_variance_power"])
    elif objective.startswith("rank:"):
        params.update(_ranking_params(section.get("lambdarank_param", {})))
    return params


def _ranking_params(section):
    """The lambdarank parameters of xgboost's ``lambdarank_param`` that differ from
    the defaults (as a fit here stores them).  A model trained with
    ``lambdarank_unbiased`` predicts as any other; continuing its training here would
    not estimate the position bias (a warning says so)."""
    given = {"lambdarank_pair_method": section.get("lambdarank_pair_method", "topk"),
             "ndcg_exp_gain": section.get("ndcg_exp_gain", "1") == "1",
             "lambdarank_normalization": section.get("lambdarank_normalization", "1") == "1",
             "lambdarank_score_normalization":
                 section.get("lambdarank_score_normalization", "1") == "1"}
    k = int(section.get("lambdarank_num_pair_per_sample", _NOT_SET))
    if k != _NOT_SET:
        given["lambdarank_num_pair_per_sample"] = k
    if section.get("lambdarank_unbiased", "0") == "1":
        warnings.warn("the xgboost model was trained with lambdarank_unbiased=True (position-"
                      "bias estimation), which is not implemented here: it predicts as in "
                      "xgboost, but continued training would not estimate the bias",
                      DaskBoostWarning, stacklevel=5)
    ranking_settings(**given)  # (checked: a bad value is the file's error)
    return {k: v for k, v in given.items() if v != RANKING_DEFAULTS[k]}


def _tree_from_xgboost(data, t, source):
    """One xgboost tree as a ``Tree``, its nodes renumbered breadth first (each split's
    right child right after its left one, as in trees grown here; xgboost's ids may have
    gaps where nodes were pruned)."""
    where = f"{source}: tree {t}"
    if int(data["tree_param"].get("size_leaf_vector", "1")) > 1:
        raise ValueError(f"{where}: vector leaves (multi_strategy) cannot be read")
    left = np.asarray(data["left_children"], dtype=np.int64)
    right = np.asarray(data["right_children"], dtype=np.int64)
    n = len(left)
    fields = {name: np.asarray(data[name]) for name in
              ("split_indices", "split_conditions", "default_left", "loss_changes",
               "sum_hessian")}
    split_type = np.asarray(data.get("split_type") or [0] * n, dtype=np.int64)
    if n == 0 or any(len(v) != n for v in (right, split_type, *fields.values())):
        raise ValueError(f"{where}: the node arrays must have one entry per node")
    order = []  # breadth first from the root: old ids in their new order
    queue, seen = [0], set()
    while queue:
        node = queue.pop(0)
        if not 0 <= node < n or node in seen or len(order) > n:
            raise ValueError(f"{where}: the children do not form a tree from node 0")
        seen.add(node)
        order.append(node)
        if left[node] >= 0:
            queue += [int(left[node]), int(right[node])]
    order = np.array(order, dtype=np.int64)
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    split = left[order] >= 0
    conditions = fields["split_conditions"].astype(np.float64)[order]
    is_categorical = split & (split_type[order] == 1)
    sets = _xgboost_category_sets(data, n)
    categories = {int(new_id[old]): sets.get(int(old), np.zeros(0, np.int32))
                  for old in order[is_categorical]}
    threshold = np.where(split & ~is_categorical,
                         daskboost_thresholds(np.where(split, conditions, 0.0)), 0.0)
    return Tree(
        feature=np.where(split, fields["split_indices"][order], -1).astype(np.int32),
        threshold=threshold,
        default_left=(fields["default_left"][order].astype(np.int64) != 0) & split,
        left=np.where(split, new_id[np.maximum(left[order], 0)], -1).astype(np.int32),
        right=np.where(split, new_id[np.maximum(right[order], 0)], -1).astype(np.int32),
        value=np.where(split, 0.0, conditions),
        gain=np.where(split, fields["loss_changes"].astype(np.float64)[order], 0.0),
        cover=fields["sum_hessian"].astype(np.float64)[order],
        categories=categories or None)


def _xgboost_category_sets(data, n_nodes):
    """{old node id: sorted category codes going right} of a tree's categorical splits."""
    nodes = data.get("categories_nodes") or []
    segments = data.get("categories_segments") or []
    sizes = data.get("categories_sizes") or []
    members = np.asarray(data.get("categories") or [], dtype=np.int64)
    if not len(nodes) == len(segments) == len(sizes):
        raise ValueError("categories_nodes, categories_segments and categories_sizes "
                         "must have one entry per categorical node")
    out = {}
    for node, start, size in zip(nodes, segments, sizes):
        codes = members[int(start):int(start) + int(size)]
        if len(codes) != int(size) or (codes < 0).any():
            raise ValueError(f"the category set of node {node} is out of range")
        out[int(node)] = np.unique(codes).astype(np.int32)
    return out
