"""Reading model files: untrusted input, checked completely before any kernel sees it.

A model file is shared, downloaded and edited, so every path that reads one (an
estimator's ``load_model``, ``xgb_model=`` and checkpoint paths, the CLI, unpickling)
goes through :func:`read_model_json`, :func:`parse_model` and :func:`check_model`. The
prediction kernel (``tree._predict_kernel``) indexes node arrays with the child ids and
the input row with the split features without bounds checks; it can rely on exactly
what :func:`check_forest` establishes:

- every node array of a tree has one entry per node, with the dtype the kernel expects;
- a split's children are nodes of its tree, and the nodes form one tree: each node but
  the root is the child of exactly one node, and every node is reached from the root
  (so no cycle: a walk from the root ends at a leaf within ``n_nodes`` steps);
- split features are in ``[0, n_features)`` (``-1`` marks a leaf), and leaves have no
  children (``left = right = -1``);
- thresholds are numbers or +-inf, never NaN; leaf values, gains and covers are finite;
- (format version 2, categorical features, issue 13) ``feature_types`` has one 'q'/'c'
  per feature and ``categories`` one dictionary per 'c' feature (distinct strings, or
  distinct finite numbers, sorted); a split on a categorical feature has a category set
  and no other node has one; a set is non-empty, sorted, distinct, within its
  dictionary (the categorical kernel indexes a table of the set's size).

Anything else is a ``ValueError`` naming the file, the tree and the field:
``model.json: tree 0, left[0] = 1000000 is not a node of a 7-node tree``.

Models built in memory (by training) pass the same :func:`check_model` when the
environment variable ``DASKBOOST_CHECK_MODELS=1`` is set (the test suite sets it).
"""

import contextlib
import gc
import json
import math
import numbers
import os

import numpy as np

from .objectives import OBJECTIVES, CustomObjective, get_objective
from .tree import NODE_DTYPES, NODE_FIELDS, Tree
from . import ubjson

FORMAT_NAME = "daskboost"
FORMAT_VERSION = 1
CATEGORICAL_FORMAT_VERSION = 2  # models with categorical features (issue 13)
ESTIMATOR_KEY = "estimator"  # the estimator's section: class, params, classes (sklearn.py)

_REQUIRED_KEYS = ("format", "version", "objective", "base_margin", "n_features", "trees")
_OPTIONAL_KEYS = ("objective_params", "feature_names", "best_iteration", "best_score",
                  "attributes", "num_parallel_tree", ESTIMATOR_KEY)
# the most trees per output and round a model file may declare
MAX_PARALLEL_TREES = 1 << 20
# xgboost's attributes kept in the model itself, not in ``attributes``
OWN_ATTRIBUTES = ("best_iteration", "best_score")
_CATEGORICAL_KEYS = ("feature_types", "categories")  # version 2 only
_TREE_CATEGORY_KEYS = ("categories_nodes", "categories_segments", "categories_sizes",
                       "categories")
_INT32 = np.iinfo(np.int32)
_FIELD_DTYPES = [np.dtype(NODE_DTYPES[name]) for name in NODE_FIELDS]


def in_memory_checks_enabled():
    """True when models built in memory are checked too (``DASKBOOST_CHECK_MODELS=1``)."""
    return os.environ.get("DASKBOOST_CHECK_MODELS") == "1"


# ---- the file ---------------------------------------------------------------------------

@contextlib.contextmanager
def garbage_collection_paused():
    """For reading a model file, start to end: it is several Python objects per node,
    none in a reference cycle (reference counting frees them), so the collections their
    allocation would trigger traverse them all and find nothing (measured: ~15% of
    loading a 1,000-tree model). Also a decorator."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


RAW_SOURCE = "the model bytes"  # how messages name a model given as bytes


def is_raw_model(model):
    """Whether ``model`` is a model file's bytes (``Booster.save_raw``), not a path."""
    return isinstance(model, (bytes, bytearray, memoryview))


def model_source(model):
    """How messages name ``model``, a path or a model file's bytes."""
    return RAW_SOURCE if is_raw_model(model) else os.fspath(model)


@garbage_collection_paused()
def read_model_json(model):
    """The JSON object in the model file at path ``model``, or in ``model`` itself given
    as the file's bytes (``bytes``/``bytearray``: ``Booster.save_raw``'s).

    xgboost's binary models (UBJSON: ``ubjson``) are read too.  Raises OSError when the
    file cannot be read, ValueError naming the file when it is not one JSON object
    (truncated, not UTF-8, nested too deeply, a key given twice).
    """
    source = model_source(model)
    if is_raw_model(model):
        raw = bytes(model)
    else:
        with open(source, "rb") as f:
            raw = f.read()
    if ubjson.is_ubjson(raw):  # xgboost's binary format (its save_model("model.ubj"))
        try:
            payload = ubjson.decode(raw, duplicate_key=_duplicate_key)
        except ValueError as err:
            raise ValueError(f"{source}: not a valid UBJSON model file ({err})") from None
    else:
        try:
            payload = json.loads(raw.decode("utf-8"),
                                 object_pairs_hook=_object_without_duplicates)
        except (ValueError, RecursionError) as err:  # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"{source}: not a valid JSON model file ({err})") from None
    if not isinstance(payload, dict):
        raise ValueError(f"{source}: a model file holds a JSON object; got "
                         f"{_json_type(payload)}")
    return payload


def _object_without_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _duplicate_key(key)
        out[key] = value
    return out


def _duplicate_key(key):
    return ValueError(f"the key {key!r} appears twice in one object")


def _json_type(value):
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             type(None): "null", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


# ---- JSON values -> model fields ------------------------------------------------------------

@garbage_collection_paused()
def parse_model(data, source):
    """``Booster`` keyword arguments from a model file's JSON object (types checked).

    ``source`` names the file in error messages. The values are then checked together
    by :func:`check_model`.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a model is a JSON object; got {_json_type(data)}")
    if data.get("format") != FORMAT_NAME:
        raise ValueError(f"{source}: neither a daskboost model (format={data.get('format')!r}) "
                         "nor an xgboost JSON model (no 'learner')")
    version = data.get("version")
    if version not in (FORMAT_VERSION, CATEGORICAL_FORMAT_VERSION) or isinstance(version, bool):
        raise ValueError(f"{source}: model format version {version!r} is not supported "
                         f"(this daskboost reads versions {FORMAT_VERSION} and "
                         f"{CATEGORICAL_FORMAT_VERSION})")
    categorical = version == CATEGORICAL_FORMAT_VERSION
    _check_keys(data, _REQUIRED_KEYS + (_CATEGORICAL_KEYS if categorical else ()),
                _OPTIONAL_KEYS, source)
    trees = data["trees"]
    if not isinstance(trees, list):
        raise ValueError(f"{source}: trees must be an array; got {_json_type(trees)}")
    objective_params = data.get("objective_params")
    if objective_params is not None and not isinstance(objective_params, dict):
        raise ValueError(f"{source}: objective_params must be an object; got "
                         f"{_json_type(objective_params)}")
    extra = {}
    if categorical:
        extra = {"feature_types": _optional_string_list(data["feature_types"], "feature_types",
                                                        source),
                 "categories": _parse_categories(data["categories"], source)}
    return {
        **extra,
        "trees": parse_trees(trees, source, categorical),
        "base_margin": _number_array(data["base_margin"], "base_margin", source),
        "objective": data["objective"],
        "objective_params": objective_params,
        "n_features": _json_integer(data["n_features"], "n_features", source),
        "feature_names": _optional_string_list(data.get("feature_names"), "feature_names",
                                               source),
        "best_iteration": _optional_json_integer(data.get("best_iteration"), "best_iteration",
                                                 source),
        "best_score": _optional_json_number(data.get("best_score"), "best_score", source),
        "attributes": string_attributes(data.get("attributes"), source),
        "parallel_trees": _optional_json_integer(data.get("num_parallel_tree", 1),
                                                 "num_parallel_tree", source),
    }


def string_attributes(value, source):
    """A model's ``attributes`` object (xgboost's ``set_attr``): {string: string}, not
    ``OWN_ATTRIBUTES``; {} for null."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise ValueError(f"{source}: attributes must map strings to strings; got "
                         f"{value!r:.80}")
    own = [k for k in value if k in OWN_ATTRIBUTES]
    if own:
        raise ValueError(f"{source}: attributes.{own[0]} is the model's own field, not an "
                         "attribute")
    return dict(value)


def _parse_categories(value, source):
    """The ``categories`` object: {"feature index": [categories]} -> {int: list}."""
    if not isinstance(value, dict) or not all(
            isinstance(v, list) and k.isdigit() and len(k) < 10 for k, v in value.items()):
        raise ValueError(f"{source}: categories must map feature indices to arrays; got "
                         f"{value!r:.80}")
    return {int(k): v for k, v in value.items()}


def _parse_tree_categories(data, n_nodes, where):
    """A tree's category sets in xgboost's layout -> {node: int32 array}, or None.
    (Whether they fit the tree and the dictionaries is ``check_forest``'s job.)"""
    present = [k for k in _TREE_CATEGORY_KEYS if k in data]
    if not present:
        return None
    if len(present) != len(_TREE_CATEGORY_KEYS):
        missing = next(k for k in _TREE_CATEGORY_KEYS if k not in data)
        raise ValueError(f"{where}: missing field {missing!r}")
    arrays = {}
    for key in _TREE_CATEGORY_KEYS:
        values = data[key]
        if not isinstance(values, list) or not all(_is_json_integer(v) and 0 <= v <= _INT32.max
                                                   for v in values):
            raise ValueError(f"{where}: {key} must be an array of integers in [0, "
                             f"{_INT32.max}]; got {values!r:.80}")
        arrays[key] = values
    nodes, starts, sizes = (arrays[k] for k in _TREE_CATEGORY_KEYS[:3])
    members = arrays["categories"]
    if not len(nodes) == len(starts) == len(sizes):
        raise ValueError(f"{where}: categories_nodes, categories_segments and "
                         "categories_sizes must have one entry per categorical node")
    if len(set(nodes)) != len(nodes) or any(n >= n_nodes for n in nodes):
        raise ValueError(f"{where}: categories_nodes = {nodes!r:.80} must be distinct nodes "
                         f"of this {n_nodes}-node tree")
    out = {}
    for node, start, size in zip(nodes, starts, sizes):
        if start + size > len(members):
            raise ValueError(f"{where}: the category set of node {node} ends past "
                             f"categories ({len(members)} entries)")
        out[node] = np.array(members[start:start + size], dtype=np.int32)
    return out


def parse_trees(trees, source, categorical=False):
    """The trees' ``Tree`` objects from their JSON objects. Each field is read as float64 numbers tree by tree
    (one numpy call per field, on values still in cache), then the integer fields are
    checked and converted for all trees at once: loading a model of many small trees
    costs about what reading it unchecked did."""
    numbers = {name: [] for name in NODE_FIELDS}
    sets = []
    for t, tree in enumerate(trees):
        _check_tree_object(tree, source, t, categorical)
        for name in NODE_FIELDS:
            numbers[name].append(_numbers(tree[name], name, source, t))
        if categorical:
            sets.append(_parse_tree_categories(tree, len(tree["feature"]), f"{source}: tree {t}"))
    fields = {name: _typed(numbers[name], name, source) for name in NODE_FIELDS}
    return [Tree(*(fields[name][t] for name in NODE_FIELDS),
                 **({"categories": sets[t]} if categorical else {}))
            for t in range(len(trees))]


def _check_tree_object(data, source, tree, categorical=False):
    """A tree's JSON object: exactly the node fields, arrays of one non-zero length
    (version 2: and optionally the category sets)."""
    where = f"{source}: tree {tree}"
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a tree is an object; got {_json_type(data)}")
    _check_keys(data, NODE_FIELDS, _TREE_CATEGORY_KEYS if categorical else (), where)
    n_nodes = None
    for name in NODE_FIELDS:
        values = data[name]
        if not isinstance(values, list):
            raise ValueError(f"{where}: {name} must be an array of numbers; got "
                             f"{_json_type(values)}")
        if n_nodes is None:
            n_nodes = len(values)
            if n_nodes == 0:
                raise ValueError(f"{where}: a tree has at least one node; feature is empty")
        elif len(values) != n_nodes:
            raise ValueError(f"{where}: {name} has {len(values)} entries; the tree has "
                             f"{n_nodes} nodes (the length of feature)")


def _check_keys(data, required, optional, where):
    missing = [key for key in required if key not in data]
    if missing:
        raise ValueError(f"{where}: missing field {missing[0]!r}")
    unknown = [key for key in data if key not in required and key not in optional]
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}")


def _numbers(values, name, source, tree):
    """A node field's JSON array as float64: numbers (and numeric strings, as the "inf" /
    "-inf" of thresholds: JSON has no infinity). A null reads as NaN, refused later."""
    try:
        array = np.array(values, dtype=np.float64)
        if array.ndim == 1:
            return array
    except (ValueError, TypeError, OverflowError):
        pass
    _fail_on_first(values, _is_number_like, f"{source}: tree {tree}: {name}", "is not a number")
    raise ValueError(f"{source}: tree {tree}: {name} must be an array of numbers")


def _typed(arrays, name, source):
    """Per-tree float64 arrays of one field in its node dtype; integer fields must hold
    integers of int32 (0/1 for flags), checked for all trees at once."""
    dtype = NODE_DTYPES[name]
    if dtype == np.float64 or not arrays:
        return arrays
    forest = np.concatenate(arrays)
    low, high = (0, 1) if dtype == np.bool_ else (_INT32.min, _INT32.max)
    with np.errstate(invalid="ignore"):
        bad = ~((forest >= low) & (forest <= high) & (forest == np.floor(forest)))  # NaN: bad
    ends = np.cumsum([a.size for a in arrays])
    if bad.any():
        i = int(np.argmax(bad))
        t = int(np.searchsorted(ends, i, side="right"))
        node = i - (int(ends[t - 1]) if t else 0)
        expected = "0/1 (or true/false)" if dtype == np.bool_ else "an integer in int32's range"
        raise ValueError(f"{source}: tree {t}: {name}[{node}] = {_show(forest[i])} is not "
                         f"{expected}")
    return np.split(forest.astype(dtype), ends[:-1])


def _show(value):
    """A float read from the file as it was most likely written."""
    return str(int(value)) if value.is_integer() and abs(value) < 2 ** 53 else f"{value:.17g}"


def _is_number_like(value):
    if isinstance(value, str) or _is_json_number(value):
        try:
            float(value)
            return True
        except (ValueError, OverflowError):  # not numeric; an integer beyond the floats
            return False
    return False


def _is_json_integer(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_json_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fail_on_first(values, is_good, what, problem):
    """Raise ``ValueError("{what}[i] = value {problem}")`` for the first bad value."""
    for i, value in enumerate(values):
        if not is_good(value):
            raise ValueError(f"{what}[{i}] = {value!r:.80} {problem}")


def _number_array(values, name, source):
    if isinstance(values, list) and all(_is_json_number(v) for v in values):
        try:
            return np.array(values, dtype=np.float64)
        except OverflowError:  # an integer beyond the float range
            pass
    raise ValueError(f"{source}: {name} must be an array of numbers; got {values!r:.80}")


def _json_integer(value, name, source):
    if not _is_json_integer(value):
        raise ValueError(f"{source}: {name} must be an integer; got {value!r:.80}")
    return value


def _optional_json_integer(value, name, source):
    return None if value is None else _json_integer(value, name, source)


def _optional_string_list(value, name, source):
    if value is not None and not (isinstance(value, list)
                                  and all(isinstance(v, str) for v in value)):
        raise ValueError(f"{source}: {name} must be an array of strings or null; got "
                         f"{value!r:.80}")
    return value


def _optional_json_number(value, name, source):
    if value is None:
        return None
    if _is_json_number(value):
        try:
            return float(value)
        except OverflowError:  # an integer beyond the float range
            pass
    raise ValueError(f"{source}: {name} must be a number or null; got {value!r:.80}")


# ---- the checks every model passes ---------------------------------------------------------

@garbage_collection_paused()
def check_model(booster, source):
    """Raise ValueError unless ``booster`` is a model the kernels can run safely.

    ``booster``: a ``Booster`` (its trees, base margin, objective, features, best
    iteration); ``source`` names it in the messages (the file's path).
    """
    K = _check_base_margin(booster.base_margin, source)
    max_margin = _check_objective(booster.objective, booster.objective_params, K, source)
    n_features = booster.n_features
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) \
            or not 1 <= n_features <= _INT32.max:
        raise ValueError(f"{source}: n_features = {n_features!r} must be an integer in "
                         f"[1, {_INT32.max}]")
    _check_feature_names(booster.feature_names, n_features, source)
    n_trees = len(booster.trees)
    P = getattr(booster, "parallel_trees", 1)
    if isinstance(P, bool) or not isinstance(P, numbers.Integral) \
            or not 1 <= P <= MAX_PARALLEL_TREES:
        raise ValueError(f"{source}: num_parallel_tree = {P!r} must be an integer in "
                         f"[1, {MAX_PARALLEL_TREES}]")
    if n_trees % (K * P):
        raise ValueError(f"{source}: {n_trees} trees is not a whole number of rounds of "
                         f"{K * P} trees ({P} per output)" if P > 1 else
                         f"{source}: {n_trees} trees is not a whole number of rounds of "
                         f"{K} trees (one per output)")
    n_rounds = n_trees // (K * P)
    categories = getattr(booster, "categories", None) or {}
    _check_categories(getattr(booster, "feature_types", None), categories, n_features, source)
    largest_value = check_forest(booster.trees, n_features, source)
    _check_category_sets(booster.trees, categories, source)
    _check_margin_bound(booster.base_margin, largest_value, max_margin, source)
    best = booster.best_iteration
    if best is not None and (isinstance(best, bool) or not isinstance(best, numbers.Integral)
                             or not 0 <= best < n_rounds):
        raise ValueError(f"{source}: best_iteration = {best!r} is not a round of this "
                         f"{n_rounds}-round model")
    score = booster.best_score
    if score is not None and (isinstance(score, bool) or not isinstance(score, numbers.Real)
                              or not math.isfinite(score)):
        raise ValueError(f"{source}: best_score = {score!r} must be a finite number or null")


def _check_categories(feature_types, categories, n_features, source):
    """Feature types and category dictionaries of a model (issue 13)."""
    if not isinstance(categories, dict):
        raise ValueError(f"{source}: categories must map features to dictionaries")
    if not categories and feature_types is None:
        return
    if not (isinstance(feature_types, list) and len(feature_types) == n_features
            and all(t in ("q", "c") for t in feature_types)):
        raise ValueError(f"{source}: feature_types = {feature_types!r:.80} must list 'q' or "
                         f"'c' for each of the {n_features} features")
    wanted = {f for f, t in enumerate(feature_types) if t == "c"}
    if set(categories) != wanted:
        raise ValueError(f"{source}: categories has dictionaries for features "
                         f"{sorted(categories)!r:.80}; feature_types makes {sorted(wanted)!r:.80} "
                         "categorical")
    for f, dictionary in categories.items():
        what = f"{source}: categories of feature {f}"
        if not isinstance(dictionary, list):
            raise ValueError(f"{what} must be an array")
        strings = all(isinstance(v, str) for v in dictionary)
        if not strings and not all(_is_finite_float(v) for v in dictionary):
            raise ValueError(f"{what} must all be strings or all finite numbers; got "
                             f"{dictionary!r:.80}")
        if any(not a < b for a, b in zip(dictionary, dictionary[1:])):
            raise ValueError(f"{what} must be distinct and sorted; got {dictionary!r:.80}")


def _is_finite_float(value):
    """A JSON number that is a finite float (not a boolean, not beyond the floats)."""
    try:
        return _is_json_number(value) and math.isfinite(float(value))
    except OverflowError:
        return False


def _check_category_sets(trees, categories, source):
    """Each split on a categorical feature has a category set, no other node has one; a
    set is a non-empty sorted array of distinct indices into its feature's dictionary."""
    for t, tree in enumerate(trees):
        sets = tree.categories or {}
        where = f"{source}: tree {t}"
        if not isinstance(sets, dict):
            raise ValueError(f"{where}: categories must map nodes to category sets")
        for node in range(tree.n_nodes):
            f = int(tree.feature[node])
            if f >= 0 and f in categories and node not in sets:
                raise ValueError(f"{where}: node {node} splits the categorical feature {f} "
                                 "without a category set")
        for node, cats in sets.items():
            if isinstance(node, bool) or not isinstance(node, numbers.Integral) \
                    or not 0 <= node < tree.n_nodes:
                raise ValueError(f"{where}: category set of {node!r:.40}, not a node")
            f = int(tree.feature[node])
            if f < 0 or f not in categories:
                raise ValueError(f"{where}: node {node} has a category set but does not split "
                                 "a categorical feature")
            if not (isinstance(cats, np.ndarray) and cats.dtype == np.int32 and cats.ndim == 1):
                raise ValueError(f"{where}: the category set of node {node} must be a 1-D "
                                 "int32 array")
            n = len(categories[f])
            if cats.size == 0 or (cats < 0).any() or (cats >= n).any() or \
                    (np.diff(cats) <= 0).any():
                raise ValueError(f"{where}: the category set of node {node} = "
                                 f"{cats.tolist()!r:.80} must be distinct sorted indices of "
                                 f"the {n} categories of feature {f}")


def _check_base_margin(base_margin, source):
    margin = np.asarray(base_margin)
    if margin.ndim != 1 or margin.size == 0 or margin.dtype != np.float64:
        raise ValueError(f"{source}: base_margin must hold one float per output; got "
                         f"{base_margin!r:.80}")
    if not np.isfinite(margin).all():
        raise ValueError(f"{source}: base_margin = {margin.tolist()!r:.80} must be finite")
    return margin.size


def _check_objective(name, params, n_outputs, source):
    if not isinstance(name, str) or (name not in OBJECTIVES and name != CustomObjective.name):
        valid = ", ".join(repr(n) for n in (*OBJECTIVES, CustomObjective.name))
        raise ValueError(f"{source}: objective = {name!r:.80} is not known; valid: {valid}")
    if not isinstance(params, dict):
        raise ValueError(f"{source}: objective_params must be a dict; got {params!r:.80}")
    if name == CustomObjective.name:
        # a custom objective's outputs are the margins, as many as base_margin has
        objective_outputs, max_margin = n_outputs, math.inf
    else:
        try:
            objective = get_objective(name, **params)
            objective_outputs, max_margin = objective.n_outputs(), objective.max_margin
        except TypeError as err:  # an unknown parameter
            raise ValueError(f"{source}: objective_params {sorted(params)!r:.120} are not all "
                             f"parameters of objective={name!r} ({err})") from None
        except ValueError as err:
            raise ValueError(f"{source}: objective_params: {err}") from None
    if objective_outputs != n_outputs:
        raise ValueError(f"{source}: objective={name!r} gives {objective_outputs} outputs per "
                         f"row, but base_margin has {n_outputs}")
    return max_margin


def _check_margin_bound(base_margin, largest_value, max_margin, source):
    """No row's margin can overflow, nor its prediction (``exp`` of a log link): the
    largest |margin| of output k is at most |base_margin[k]| plus the largest |value| of
    each of its trees."""
    K = base_margin.size
    with np.errstate(over="ignore"):
        bound = np.abs(base_margin) + np.array([largest_value[k::K].sum() for k in range(K)])
    fits = np.isfinite(bound) & (bound <= max_margin)
    if not fits.all():
        k = int(np.argmin(fits))
        raise ValueError(f"{source}: the trees' values add up to margins as large as {bound[k]:g}"
                         f" (output {k}); objective predictions overflow beyond {max_margin:g}")


def _check_feature_names(names, n_features, source):
    if names is None:
        return
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{source}: feature_names must be a list of strings or null; got "
                         f"{names!r:.80}")
    if len(names) != n_features:
        raise ValueError(f"{source}: {len(names)} feature_names for n_features = {n_features}")
    if len(set(names)) != len(names):
        repeated = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"{source}: feature name {repeated!r} appears twice in feature_names")


def check_forest(trees, n_features, source):
    """Raise ValueError unless every tree is one well-formed tree over ``n_features``.

    All trees are checked at once on their concatenated node arrays (a 1,000-tree model
    in a few milliseconds); the message names the first bad tree, node and field.
    Returns each tree's largest |value| (bounds the margins it can add).
    """
    sizes = np.array([_check_tree_arrays(tree, f"{source}: tree {t}")
                      for t, tree in enumerate(trees)], dtype=np.int64)
    if sizes.size == 0:
        return np.zeros(0)
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    tree_of = np.repeat(np.arange(sizes.size), sizes)
    start = offsets[:-1][tree_of]  # global id of each node's root
    size = sizes[tree_of]
    fields = {name: np.concatenate([getattr(tree, name) for tree in trees])
              for name in NODE_FIELDS}

    def fail(node, message):
        t = int(tree_of[node])
        raise ValueError(f"{source}: tree {t}, {message(int(node - offsets[t]), int(sizes[t]))}")

    def first(mask):
        return int(np.argmax(mask))

    feature, left, right = fields["feature"], fields["left"], fields["right"]
    bad = (feature < -1) | (feature >= n_features)
    if bad.any():
        i = first(bad)
        fail(i, lambda n, s: f"feature[{n}] = {feature[i]} is not a feature of this "
                             f"{n_features}-feature model (-1 marks a leaf)")
    split = feature >= 0
    for name, child in (("left", left), ("right", right)):
        bad = ~split & (child != -1)
        if bad.any():
            i = first(bad)
            fail(i, lambda n, s: f"{name}[{n}] = {child[i]}: node {n} is a leaf "
                                 "(feature = -1) and has no children (-1)")
        bad = split & ((child < 0) | (child >= size))
        if bad.any():
            i = first(bad)
            fail(i, lambda n, s: f"{name}[{n}] = {child[i]} is not a node of a {s}-node tree")
    _check_one_tree(split, left, right, start, int(sizes.max()), fail)
    threshold = fields["threshold"]
    if np.isnan(threshold).any():
        i = first(np.isnan(threshold))
        fail(i, lambda n, s: f"threshold[{n}] is NaN")
    for name in ("value", "gain", "cover"):
        bad = ~np.isfinite(fields[name])
        if bad.any():
            i = first(bad)
            fail(i, lambda n, s: f"{name}[{n}] = {fields[name][i]} is not finite")
    return np.maximum.reduceat(np.abs(fields["value"]), offsets[:-1])


def _check_tree_arrays(tree, where):
    """Every node field a 1-D array of its dtype, all of one length; returns that length."""
    if not isinstance(tree, Tree):
        raise ValueError(f"{where}: not a Tree ({type(tree).__name__})")
    arrays = [getattr(tree, name) for name in NODE_FIELDS]
    try:  # the common case in one expression; the loop below says what is wrong
        n_nodes = arrays[0].shape[0]
        if n_nodes > 0 and {a.shape for a in arrays} == {(n_nodes,)} and \
                [a.dtype for a in arrays] == _FIELD_DTYPES and \
                all(type(a) is np.ndarray for a in arrays):
            return n_nodes
    except (AttributeError, IndexError, TypeError):
        pass
    n_nodes = None
    for name in NODE_FIELDS:
        array = getattr(tree, name)
        if not isinstance(array, np.ndarray) or array.ndim != 1 or array.dtype != NODE_DTYPES[name]:
            raise ValueError(f"{where}: {name} must be a 1-D {np.dtype(NODE_DTYPES[name])} array")
        if n_nodes is None:
            n_nodes = array.size
            if n_nodes == 0:
                raise ValueError(f"{where}: a tree has at least one node; feature is empty")
        elif array.size != n_nodes:
            raise ValueError(f"{where}: {name} has {array.size} entries; the tree has {n_nodes} "
                             "nodes (the length of feature)")
    return n_nodes


def _check_one_tree(split, left, right, root_of, max_nodes, fail):
    """Each node but its tree's root is the child of exactly one split, and every node is
    reached from its root (global node ids; ``root_of[i]``: the root of node i's tree;
    ``max_nodes``: the size of the largest tree)."""
    parents = np.flatnonzero(split)
    parent_of_child = np.concatenate([parents, parents])  # left children, then right
    children = np.concatenate([left[parents], right[parents]]) + root_of[parent_of_child]
    count = np.bincount(children, minlength=split.size)
    is_root = np.arange(split.size) == root_of
    if not np.array_equal(count, ~is_root):  # a root with a parent, a node with 0 or 2+
        _fail_on_parent_count(count, is_root, children, parent_of_child, root_of, fail)
    if (children > parent_of_child).all():
        return  # ids grow from parent to child (as training writes them): no cycle
    # Every node has one parent, so following parents either reaches the root or goes
    # round a cycle that the root never reaches. Pointer doubling: after k steps
    # ``up[i]`` is the 2^k-th ancestor (a root is its own parent).
    up = np.arange(split.size)
    up[children] = parent_of_child
    for _ in range(int(max_nodes).bit_length()):  # 2^k >= max_nodes > any depth
        up = up[up]
    cycle = up != root_of
    if cycle.any():
        fail(int(np.argmax(cycle)),
             lambda n, s: f"node {n} is on a cycle of nodes that the root does not reach")


def _fail_on_parent_count(count, is_root, children, parent_of_child, root_of, fail):
    """Name the first node whose number of parents is wrong."""
    def side(j):  # "left[3]": the child reference j in the tree of its parent
        parent = parent_of_child[j]
        return f"{'left' if j < parent_of_child.size // 2 else 'right'}[{parent - root_of[parent]}]"

    if count[is_root].any():
        j = int(np.argmax(is_root[children]))
        fail(parent_of_child[j], lambda n, s: f"{side(j)} = 0 points back to the root")
    if (count > 1).any():
        node = int(np.argmax(count > 1))
        a, b = np.flatnonzero(children == node)[:2]
        fail(node, lambda n, s: f"node {n} is the child of two splits ({side(a)} and {side(b)})")
    fail(int(np.argmax((count == 0) & ~is_root)),
         lambda n, s: f"node {n} is not reached from the root (no split has it as a child)")


def xgboost_tree_order(n_outputs, parallel_trees, n_rounds):
    """Where xgboost's tree ``j`` of a model with ``parallel_trees`` copies per output
    is in daskboost's order (round, copy, output; xgboost's: round, output, copy), for
    every tree of ``n_rounds`` rounds; None when the orders are the same (one copy)."""
    if parallel_trees == 1:
        return None
    K, P = n_outputs, parallel_trees
    return np.array([r * K * P + p * K + k for r in range(n_rounds) for k in range(K)
                     for p in range(P)], dtype=np.int64)
