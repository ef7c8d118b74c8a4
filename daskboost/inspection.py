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
"""

import json

import numpy as np
import pandas as pd

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
def get_score(trees, feature_names, n_features, importance_type="weight"):
    """Importance of each feature used in at least one split, as XGBoost's ``get_score``.

    * ``weight``: the number of splits on the feature, over all trees;
    * ``total_gain`` / ``total_cover``: the sum of those splits' gains (loss reductions)
      / covers (hessian sums);
    * ``gain`` / ``cover``: the same sums divided by ``weight`` (averages per split).

    Returns ``{feature name: score}`` in feature order.  Features never used in a split
    are absent, as in XGBoost.  ``feature_names=None`` names features ``f0, f1, ...``.
    """
    names = _feature_names(feature_names, n_features)
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


def dump_text(trees, feature_names, with_stats=False, categories=None):
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
    is written ``inf``.
    """
    name = _namer(feature_names)
    dumps = []
    for tree in trees:
        depth = _depths(tree)
        lines = []
        for i in _preorder(tree):
            indent = "\t" * int(depth[i])
            if tree.feature[i] < 0:
                line = f"{indent}{i}:leaf={_fmt(tree.value[i])}"
                if with_stats:
                    line += f",cover={_fmt(tree.cover[i])}"
            elif _category_split(tree, i, categories) is not None:
                shown, yes, no = _category_split(tree, i, categories)
                line = (f"{indent}{i}:[{name(int(tree.feature[i]))}:{{"
                        f"{','.join(str(c) for c in shown)}}}] yes={yes},no={no},"
                        f"missing={_missing_child(tree, i)}")
            else:
                line = (f"{indent}{i}:[{name(int(tree.feature[i]))}<={_fmt(tree.threshold[i])}]"
                        f" yes={int(tree.left[i])},no={int(tree.right[i])},"
                        f"missing={_missing_child(tree, i)}")
                if with_stats:
                    line += f",gain={_fmt(tree.gain[i])},cover={_fmt(tree.cover[i])}"
            lines.append(line + "\n")
        dumps.append("".join(lines))
    return dumps


def _json_nodes(tree, name, with_stats, categories=None):
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
            left, right = int(tree.left[i]), int(tree.right[i])
            node["split"] = name(int(tree.feature[i]))
            category_split = _category_split(tree, i, categories)
            if category_split is None:
                node["split_condition"] = _json_number(tree.threshold[i])
                node["yes"] = left
                node["no"] = right
            else:
                node["categories"], node["yes"], node["no"] = category_split
            node["missing"] = _missing_child(tree, i)
            if with_stats:
                node["gain"] = _json_number(tree.gain[i])
                node["cover"] = _json_number(tree.cover[i])
            node["children"] = [nodes[node["yes"]], nodes[node["no"]]]
            nodes[left] = nodes[right] = None
        nodes[i] = node
    return nodes[0] if nodes else {}


def dump_json(trees, feature_names, with_stats=False, categories=None):
    """One standard JSON document per tree, nested like XGBoost's JSON ``get_dump``.

    Split nodes: ``nodeid, depth, split`` (feature name), ``split_condition`` (the
    daskboost threshold: ``yes`` is taken when ``x <= split_condition``), ``yes, no,
    missing`` (child ids), with_stats ``gain, cover``, and ``children`` ([yes, no]).
    Leaves: ``nodeid, depth, leaf`` (its output), with_stats ``cover``.  Non-finite
    numbers (an ``inf`` threshold) are written as strings (``"inf"``) since JSON has no
    infinity; ``float()`` reads them back.
    """
    name = _namer(feature_names)
    return [json.dumps(_json_nodes(tree, name, with_stats, categories), allow_nan=False)
            for tree in trees]


def trees_to_dataframe(trees, feature_names, n_outputs=1, categories=None):
    """One row per node, sorted by tree then node, like XGBoost's ``trees_to_dataframe``.

    Columns: ``Tree, Node, ID`` (``"tree-node"``), ``Feature`` (name, ``"Leaf"`` for
    leaves), ``Split`` (the ``<=`` threshold; NaN for leaves), ``Yes, No, Missing``
    (child IDs as ``"tree-node"``; NaN for leaves), ``Gain`` (the split's loss reduction,
    or the leaf's value for leaves, as XGBoost does), ``Cover`` (hessian sum) and
    ``Class`` (``tree % n_outputs``, the output the tree contributes to).
    """
    n_outputs = int(n_outputs)
    if n_outputs < 1:
        raise ValueError(f"n_outputs must be at least 1, got {n_outputs}")
    name = _namer(feature_names)
    columns = {key: [] for key in ("Tree", "Node", "ID", "Feature", "Split", "Yes", "No",
                                   "Missing", "Gain", "Cover", "Class", "Category")}
    for t, tree in enumerate(trees):
        for i in range(tree.n_nodes):
            columns["Tree"].append(t)
            columns["Node"].append(i)
            columns["ID"].append(f"{t}-{i}")
            columns["Cover"].append(float(tree.cover[i]))
            columns["Class"].append(t % n_outputs)
            category_split = _category_split(tree, i, categories)
            columns["Category"].append(np.nan if category_split is None else category_split[0])
            if tree.feature[i] < 0:
                columns["Feature"].append("Leaf")
                columns["Split"].append(np.nan)
                for key in ("Yes", "No", "Missing"):
                    columns[key].append(np.nan)
                columns["Gain"].append(float(tree.value[i]))
            else:
                yes, no = (int(tree.left[i]), int(tree.right[i])) if category_split is None \
                    else category_split[1:]
                columns["Feature"].append(name(int(tree.feature[i])))
                columns["Split"].append(np.nan if category_split else float(tree.threshold[i]))
                columns["Yes"].append(f"{t}-{yes}")
                columns["No"].append(f"{t}-{no}")
                columns["Missing"].append(f"{t}-{_missing_child(tree, i)}")
                columns["Gain"].append(float(tree.gain[i]))
    if not any(tree.categories for tree in trees):
        del columns["Category"]  # numeric models: the columns they always had
    df = pd.DataFrame(columns)
    dtypes = {"Tree": np.int64, "Node": np.int64, "Split": np.float64, "Gain": np.float64,
              "Cover": np.float64, "Class": np.int64}
    return df.astype(dtypes)  # (text columns keep pandas' default string dtype)
