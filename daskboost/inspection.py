"""Model inspection: feature importances, text/JSON tree dumps and a node table.

Everything here works on a plain list of :class:`daskboost.tree.Tree` objects plus the
feature names, so the functions can back ``Booster`` methods and the estimators'
``feature_importances_`` without depending on how the model was trained.

Conventions follow XGBoost's ``Booster.get_score``, ``Booster.get_dump`` and
``Booster.trees_to_dataframe``, with these deliberate differences:

* **Split direction.**  daskboost sends a row left when ``x <= threshold``; XGBoost sends
  it left when ``x < split_condition``.  Dumps therefore write ``[f1<=0.5]`` (text) and
  report the daskboost threshold as ``split_condition`` (JSON) / ``Split`` (data frame):
  the same number means a different test, so do not feed a daskboost dump to a parser
  that assumes XGBoost's ``<``.
* **Infinite thresholds.**  A split whose threshold is ``+inf`` sends every present value
  left and only missing values right.  The text dump writes ``inf``; the JSON dump
  writes the *string* ``"inf"`` because standard JSON has no infinity (``"-inf"`` and
  ``"nan"`` likewise, should they ever appear in any numeric field).
* **Numbers** are written with Python's shortest round-tripping ``repr`` (``float(s)``
  gives back the exact float64), so ``200.0`` rather than XGBoost's ``200``.
* **JSON leaves carry ``depth``** as well (XGBoost only gives it for split nodes).
* **Multi-output models.**  Trees are stored round-major with ``n_outputs`` trees per
  boosting round; tree ``t`` belongs to output ``t % n_outputs``.  Importances are summed
  over all trees of all outputs, as XGBoost does.  ``trees_to_dataframe`` adds a
  ``Class`` column.
* **Categorical splits** (issue 13), as XGBoost: rows whose category is in the node's
  set take ``yes`` (the right child), the others ``no``; the text dump writes
  ``[city:{lima,oslo}]`` (category values when the model's dictionaries are given,
  else their indices), the JSON dump a ``categories`` list instead of
  ``split_condition``, and ``trees_to_dataframe`` a ``Category`` column (the set, as a
  list; NaN elsewhere) when the model has categorical splits.
* **Feature maps** (xgboost's ``fmap`` files, read by ``feature_map``): the map's names
  replace the model's for the features it covers (features past its end keep theirs;
  xgboost requires a map of exactly the model's features).  In dumps and plots its
  types change how splits are shown, as in xgboost: an indicator (``i``) split reads
  ``3:[name] yes=4,no=5`` (``no`` is the child rows missing the feature take, ``yes`` the
  other: an indicator is present or missing, so there is no threshold), an integer
  (``int``) split shows an integer threshold: ``[age<=2]`` for a threshold of 2.5,
  since for an integer ``x``, ``x <= t`` exactly when ``x <= floor(t)`` (xgboost, whose
  test is ``x < t``, writes ``[age<3]``); ``q`` and ``float`` show the threshold as
  without a map; ``c`` must name a feature of categorical splits, and a numeric type a
  feature of numeric ones (ValueError otherwise, as xgboost's check).  xgboost's text
  dump (since 1.0) writes indicator lines without their indentation; daskboost indents
  them like every other line.  ``trees_to_dataframe`` takes the map's names (and
  checks its types) but keeps every node's exact threshold and children.
"""

import json
import math

import numpy as np
import pandas as pd

from .feature_map import FEATURE_TYPES

IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")

__all__ = [
    "IMPORTANCE_TYPES",
    "check_importance_type",
    "dump_json",
    "dump_text",
    "feature_importances",
    "get_score",
    "trees_to_dataframe",
]


# ---- helpers ---------------------------------------------------------------------------
def check_importance_type(importance_type):
    """ValueError naming ``importance_type`` unless it is one of ``IMPORTANCE_TYPES``."""
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(
            f"importance_type={importance_type!r} is not supported; "
            f"valid types are {', '.join(repr(t) for t in IMPORTANCE_TYPES)}")


def _feature_names(feature_names, n_features):
    """The names of features ``0 .. n_features-1`` (XGBoost-style ``f<i>`` if None)."""
    if feature_names is None:
        return [f"f{i}" for i in range(n_features)]
    names = [str(name) for name in feature_names]
    if len(names) != n_features:
        raise ValueError(f"got {len(names)} feature names for {n_features} features")
    return names


def _namer(feature_names):
    """A function from feature index to name, for dumps that do not know n_features."""
    if feature_names is None:
        return lambda i: f"f{i}"
    names = [str(name) for name in feature_names]

    def name(i):
        if i >= len(names):
            raise ValueError(
                f"a split uses feature {i} but only {len(names)} feature names were given")
        return names[i]

    return name


def split_value_histogram(trees, feature_names, n_features, categories, feature, feature_map,
                          bins):
    """xgboost's ``get_split_value_histogram``: the thresholds of the numeric splits on the
    feature named ``feature`` (by ``feature_map``'s names if given, else the model's, else
    ``f<i>``), as an ``(n, 2)`` array of (a bin's right edge, its count), the empty bins
    left out: ``bins`` bins (default, or when more, one per distinct threshold).
    ValueError for a name that is no feature, or for a categorical feature."""
    features = _Features(feature_names, feature_map)
    names = [features.name(f) for f in range(n_features)]
    if feature not in names:
        raise ValueError(f"feature={feature!r:.80} is not one of the model's features "
                         f"{names!r:.200}")
    index = names.index(feature)
    if index in categories:
        raise ValueError(f"feature {feature!r:.80} is categorical: its splits are category "
                         "sets, which have no split values")
    values = np.concatenate([t.threshold[t.feature == index] for t in trees] or [[]])
    n_unique = len(np.unique(values))
    counts, edges = np.histogram(values, bins=max(n_unique if bins is None else
                                                  min(n_unique, bins), 1))
    stacked = np.column_stack((edges[1:], counts))
    return stacked[stacked[:, 1] > 0]


class _Features:
    """The names, and the feature map's types, that a dump shows features with."""

    def __init__(self, feature_names, feature_map=None):
        self._name = _namer(feature_names)
        self.map = feature_map

    def name(self, feature):
        if self.map is not None and feature < len(self.map):
            return self.map.names[feature]
        return self._name(feature)

    def kind(self, tree, t, i, categorical):
        """How node ``i`` of tree ``t`` is shown: the map's type of its feature (``"q"``
        past the map's end), ``"c"`` for a categorical split; ValueError where the map's
        type contradicts the split."""
        feature = int(tree.feature[i])
        kind = None if self.map is None else self.map.type_of(feature)
        where = f"feature {feature} ({self.name(feature)!r})"
        if categorical and kind not in (None, "c"):
            raise ValueError(
                f"{self.map.source}: {where} has type {kind!r} "
                f"({FEATURE_TYPES[kind]}), but node {i} of tree {t} splits it by category; "
                "a categorical feature has type 'c'")
        if not categorical and kind == "c":
            raise ValueError(
                f"{self.map.source}: {where} has type 'c' (categorical), but node {i} of "
                f"tree {t} is a numeric split (x <= threshold); give it a numeric type "
                "(q, int, float or i)")
        return "c" if categorical else kind or "q"


class _Split:
    """Node ``i`` of tree ``t`` as a dump shows it: ``kind`` (see ``_Features.kind``),
    the feature's ``name``, ``condition`` (the category set shown for "c", the integer
    threshold for "int" (a float if infinite), None for "i", else the threshold) and
    the ``yes``, ``no`` and ``missing`` children."""

    __slots__ = ("kind", "name", "condition", "yes", "no", "missing")

    def __init__(self, tree, t, i, features, categories):
        category_split = _category_split(tree, i, categories)
        self.kind = features.kind(tree, t, i, category_split is not None)
        self.name = features.name(int(tree.feature[i]))
        self.missing = _missing_child(tree, i)
        left, right = int(tree.left[i]), int(tree.right[i])
        if self.kind == "c":
            self.condition, self.yes, self.no = category_split
        elif self.kind == "i":  # xgboost's: "no" is where missing (absent) rows go
            self.condition = None
            self.yes, self.no = (right, left) if self.missing == left else (left, right)
        else:
            threshold = float(tree.threshold[i])
            self.condition = _integer_threshold(threshold) if self.kind == "int" \
                else threshold
            self.yes, self.no = left, right


def _integer_threshold(threshold):
    """The integer ``k`` with ``x <= threshold`` exactly when ``x <= k``, for every
    integer ``x``: ``floor(threshold)``; an infinite threshold stays a float."""
    return int(math.floor(threshold)) if math.isfinite(threshold) else threshold


def _fmt(v):
    """Shortest round-tripping text of a float: ``'0.5'``, ``'1e-05'``, ``'inf'``."""
    return repr(float(v))


def _json_number(v):
    """A float for JSON, or its text if it is not finite (JSON has no inf/nan)."""
    v = float(v)
    return v if np.isfinite(v) else repr(v)


def _depths(tree):
    """Depth of every node (children always have larger ids than their parents)."""
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for i in range(tree.n_nodes):
        if tree.feature[i] >= 0:
            depth[tree.left[i]] = depth[tree.right[i]] = depth[i] + 1
    return depth


def _missing_child(tree, i):
    return int(tree.left[i] if tree.default_left[i] else tree.right[i])


def _preorder(tree):
    """Node ids in depth-first order, left ("yes") subtree before right ("no")."""
    if tree.n_nodes == 0:
        return []
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if tree.feature[i] >= 0:
            stack.append(int(tree.right[i]))
            stack.append(int(tree.left[i]))
    return order


def _split_stats(trees, n_features):
    """Per feature: number of splits using it, and the sums of their gains and covers."""
    weight = np.zeros(n_features, dtype=np.int64)
    total_gain = np.zeros(n_features, dtype=np.float64)
    total_cover = np.zeros(n_features, dtype=np.float64)
    for tree in trees:
        split = tree.feature >= 0
        feats = tree.feature[split].astype(np.int64)
        if feats.size and feats.max() >= n_features:
            raise ValueError(
                f"a split uses feature {int(feats.max())} but the model has {n_features} features")
        weight += np.bincount(feats, minlength=n_features)
        total_gain += np.bincount(feats, weights=tree.gain[split], minlength=n_features)
        total_cover += np.bincount(feats, weights=tree.cover[split], minlength=n_features)
    return weight, total_gain, total_cover


def _scores(trees, n_features, importance_type):
    """(used, score) arrays over features for one importance type."""
    check_importance_type(importance_type)
    weight, total_gain, total_cover = _split_stats(trees, n_features)
    used = weight > 0
    if importance_type == "weight":
        score = weight.astype(np.float64)
    elif importance_type == "total_gain":
        score = total_gain
    elif importance_type == "total_cover":
        score = total_cover
    else:
        total = total_gain if importance_type == "gain" else total_cover
        score = np.zeros(n_features, dtype=np.float64)
        np.divide(total, weight, out=score, where=used)
    return used, score


# ---- importances -------------------------------------------------------------------------
def get_score(trees, feature_names, n_features, importance_type="weight", feature_map=None):
    """Importance of each feature used in at least one split, as XGBoost's ``get_score``.

    * ``weight``: the number of splits on the feature, over all trees;
    * ``total_gain`` / ``total_cover``: the sum of those splits' gains (loss reductions)
      / covers (hessian sums);
    * ``gain`` / ``cover``: the same sums divided by ``weight`` (averages per split).

    Returns ``{feature name: score}`` in feature order.  Features never used in a split
    are absent, as in XGBoost.  ``feature_names=None`` names features ``f0, f1, ...``;
    a ``feature_map`` (``feature_map.FeatureMap``) renames the features it covers.
    """
    names = _feature_names(feature_names, n_features)
    if feature_map is not None:
        names = feature_map.rename(names)
    used, score = _scores(trees, n_features, importance_type)
    return {names[i]: float(score[i]) for i in np.flatnonzero(used)}


def feature_importances(trees, n_features, importance_type="gain"):
    """``(n_features,)`` importances normalised to sum to 1, like XGBoost's sklearn
    ``feature_importances_`` (whose default for tree boosters is ``"gain"``, the average
    gain per split).  Unused features get 0; all zeros if the model has no split (or
    every score is 0).  float64 (XGBoost's is float32).
    """
    _, score = _scores(trees, n_features, importance_type)
    total = score.sum()
    if total == 0:
        return np.zeros(n_features, dtype=np.float64)
    return score / total


# ---- dumps --------------------------------------------------------------------------------
def _category_split(tree, i, categories):
    """(shown set, yes child, no child) of node i: categorical splits send the categories
    of their set to the right child, which is ``yes`` as in XGBoost; None if numeric."""
    if not tree.categories or i not in tree.categories:
        return None
    cats = tree.categories[i].tolist()
    dictionary = (categories or {}).get(int(tree.feature[i]))
    shown = cats if dictionary is None else [dictionary[c] for c in cats]
    return shown, int(tree.right[i]), int(tree.left[i])


def dump_text(trees, feature_names, with_stats=False, categories=None, feature_map=None):
    """One string per tree in the spirit of XGBoost's text ``get_dump``.

    Nodes are listed depth first (yes subtree first), indented with one tab per level,
    each line ending in a newline::

        0:[f0<=0.5] yes=1,no=2,missing=1
        \t1:leaf=-1.0
        \t2:[f1<=inf] yes=3,no=4,missing=4
        \t\t3:leaf=2.0
        \t\t4:leaf=3.0

    ``[f0<=0.5]`` means rows with ``f0 <= 0.5`` take ``yes`` (XGBoost writes ``<`` for its
    own strict test); ``missing`` is the child that rows missing the feature take.
    ``with_stats`` appends ``,gain=..,cover=..`` to splits and ``,cover=..`` to leaves.
    Numbers are written with ``repr`` so they round-trip exactly; an infinite threshold
    is written ``inf``.  A ``feature_map`` renames features and shows indicator
    (``[name] yes=..,no=..``) and integer (``[name<=2]``) splits as the module's
    docstring says.
    """
    features = _Features(feature_names, feature_map)
    dumps = []
    for t, tree in enumerate(trees):
        depth = _depths(tree)
        lines = []
        for i in _preorder(tree):
            indent = "\t" * int(depth[i])
            if tree.feature[i] < 0:
                line = f"{indent}{i}:leaf={_fmt(tree.value[i])}"
                if with_stats:
                    line += f",cover={_fmt(tree.cover[i])}"
                lines.append(line + "\n")
                continue
            split = _Split(tree, t, i, features, categories)
            if split.kind == "i":
                line = f"{indent}{i}:[{split.name}] yes={split.yes},no={split.no}"
            else:
                if split.kind == "c":
                    test = f"{split.name}:{{{','.join(str(c) for c in split.condition)}}}"
                elif split.kind == "int":
                    test = f"{split.name}<={split.condition}"  # (an inf: 'inf')
                else:
                    test = f"{split.name}<={_fmt(split.condition)}"
                line = (f"{indent}{i}:[{test}] yes={split.yes},no={split.no},"
                        f"missing={split.missing}")
            if with_stats:
                line += f",gain={_fmt(tree.gain[i])},cover={_fmt(tree.cover[i])}"
            lines.append(line + "\n")
        dumps.append("".join(lines))
    return dumps


def _json_nodes(tree, t, features, with_stats, categories=None):
    """The root's nested dict, built bottom-up (children have larger ids than parents)."""
    depth = _depths(tree)
    nodes = [None] * tree.n_nodes
    for i in range(tree.n_nodes - 1, -1, -1):
        node = {"nodeid": i, "depth": int(depth[i])}
        if tree.feature[i] < 0:
            node["leaf"] = _json_number(tree.value[i])
            if with_stats:
                node["cover"] = _json_number(tree.cover[i])
        else:
            split = _Split(tree, t, i, features, categories)
            node["split"] = split.name
            if split.kind == "c":
                node["categories"] = split.condition
            elif split.kind == "int":
                condition = split.condition
                node["split_condition"] = condition if isinstance(condition, int) \
                    else _json_number(condition)
            elif split.kind != "i":
                node["split_condition"] = _json_number(split.condition)
            node["yes"], node["no"] = split.yes, split.no
            if split.kind != "i":  # (an indicator's "no" is where missing rows go)
                node["missing"] = split.missing
            if with_stats:
                node["gain"] = _json_number(tree.gain[i])
                node["cover"] = _json_number(tree.cover[i])
            node["children"] = [nodes[split.yes], nodes[split.no]]
            nodes[split.yes] = nodes[split.no] = None
        nodes[i] = node
    return nodes[0] if nodes else {}


def dump_json(trees, feature_names, with_stats=False, categories=None, feature_map=None):
    """One standard JSON document per tree, nested like XGBoost's JSON ``get_dump``.

    Split nodes: ``nodeid, depth, split`` (feature name), ``split_condition`` (the
    daskboost threshold: ``yes`` is taken when ``x <= split_condition``), ``yes, no,
    missing`` (child ids), with_stats ``gain, cover``, and ``children`` ([yes, no]).
    Leaves: ``nodeid, depth, leaf`` (its output), with_stats ``cover``.  Non-finite
    numbers (an ``inf`` threshold) are written as strings (``"inf"``) since JSON has no
    infinity; ``float()`` reads them back.  With a ``feature_map``: its names; an
    indicator split has no ``split_condition`` and no ``missing`` (``no`` is the child
    rows missing the feature take), an integer split an integer ``split_condition``
    (``floor`` of the threshold), as XGBoost's.
    """
    features = _Features(feature_names, feature_map)
    return [json.dumps(_json_nodes(tree, t, features, with_stats, categories),
                       allow_nan=False)
            for t, tree in enumerate(trees)]


def trees_to_dataframe(trees, feature_names, n_outputs=1, categories=None, feature_map=None):
    """One row per node, sorted by tree then node, like XGBoost's ``trees_to_dataframe``.

    Columns: ``Tree, Node, ID`` (``"tree-node"``), ``Feature`` (name, ``"Leaf"`` for
    leaves), ``Split`` (the ``<=`` threshold; NaN for leaves), ``Yes, No, Missing``
    (child IDs as ``"tree-node"``; NaN for leaves), ``Gain`` (the split's loss reduction,
    or the leaf's value for leaves, as XGBoost does), ``Cover`` (hessian sum) and
    ``Class`` (``tree % n_outputs``, the output the tree contributes to).  A
    ``feature_map`` gives the ``Feature`` names (its types are checked against the
    splits, but the table keeps each node's exact threshold and children whatever the
    type).
    """
    n_outputs = int(n_outputs)
    if n_outputs < 1:
        raise ValueError(f"n_outputs must be at least 1, got {n_outputs}")
    features = _Features(feature_names, feature_map)
    columns = {key: [] for key in ("Tree", "Node", "ID", "Feature", "Split", "Yes", "No",
                                   "Missing", "Gain", "Cover", "Class", "Category")}
    for t, tree in enumerate(trees):
        for i in range(tree.n_nodes):
            columns["Tree"].append(t)
            columns["Node"].append(i)
            columns["ID"].append(f"{t}-{i}")
            columns["Cover"].append(float(tree.cover[i]))
            columns["Class"].append(t % n_outputs)
            if tree.feature[i] < 0:
                columns["Category"].append(np.nan)
                columns["Feature"].append("Leaf")
                columns["Split"].append(np.nan)
                for key in ("Yes", "No", "Missing"):
                    columns[key].append(np.nan)
                columns["Gain"].append(float(tree.value[i]))
                continue
            split = _Split(tree, t, i, features, categories)
            categorical = split.kind == "c"
            yes, no = (split.yes, split.no) if categorical \
                else (int(tree.left[i]), int(tree.right[i]))
            columns["Category"].append(split.condition if categorical else np.nan)
            columns["Feature"].append(split.name)
            columns["Split"].append(np.nan if categorical else float(tree.threshold[i]))
            columns["Yes"].append(f"{t}-{yes}")
            columns["No"].append(f"{t}-{no}")
            columns["Missing"].append(f"{t}-{split.missing}")
            columns["Gain"].append(float(tree.gain[i]))
    if not any(tree.categories for tree in trees):
        del columns["Category"]  # numeric models: the columns they always had
    df = pd.DataFrame(columns)
    dtypes = {"Tree": np.int64, "Node": np.int64, "Split": np.float64, "Gain": np.float64,
              "Cover": np.float64, "Class": np.int64}
    return df.astype(dtypes)  # (text columns keep pandas' default string dtype)
