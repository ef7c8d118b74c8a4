"""Plots of a model: feature importances, one tree, learning curves (matplotlib only);
one tree as a graphviz graph (``to_graphviz``, xgboost's).

matplotlib is an optional extra (``pip install daskboost[plot]``): it is imported when
a plot is drawn, and its absence is an ImportError that says how to install it; so is
graphviz's Python package for ``to_graphviz``.  Each
function draws on ``ax`` (a new figure's axes if None) and returns the Axes, as
xgboost's and LightGBM's plotting functions do.  ``model`` is a fitted estimator or a
``Booster``.  ``fmap``, xgboost's feature map file (``feature_map``), names features
as in ``Booster.get_dump``: in trees an indicator (``i``) split shows its name alone,
"yes" the branch of rows that have the feature and "no, missing" the other, and an
integer (``int``) split ``name <= floor(threshold)``.
"""

import numpy as np

from .inspection import _depths
from .tree_dot import node_label, tree_dot, tree_splits


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("daskboost's plots need matplotlib: pip install "
                          "'daskboost[plot]' (or pip install matplotlib)") from None
    return plt


def _booster(model):
    from .booster import Booster
    if isinstance(model, Booster):
        return model
    if hasattr(model, "get_booster"):
        return model.get_booster()
    raise TypeError(f"model must be a fitted DaskBoostRegressor/DaskBoostClassifier or a "
                    f"Booster; got {type(model).__name__}")


def _axes(ax, figsize=None):
    if ax is None:
        _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def plot_importance(model, importance_type="weight", max_num_features=None, ax=None,
                    title="Feature importance", xlabel=None, ylabel="Features",
                    show_values=True, precision=3, height=0.6, fmap="", **bar_kwargs):
    """Horizontal bars of ``Booster.get_score(fmap, importance_type=importance_type)``
    (xgboost's types: weight, gain, cover, total_gain, total_cover), largest at the
    top; the ``max_num_features`` largest only if given.  Features no split uses are not
    shown (as in xgboost)."""
    scores = _booster(model).get_score(fmap, importance_type=importance_type)
    if not scores:
        raise ValueError("the model has no splits: there are no importances to plot")
    if max_num_features is not None and (
            isinstance(max_num_features, bool) or not isinstance(max_num_features, int)
            or max_num_features < 1):
        raise ValueError(f"max_num_features={max_num_features!r} must be a positive integer "
                         "or None")
    ranked = sorted(scores.items(), key=lambda item: item[1])  # smallest at the bottom
    if max_num_features is not None:
        ranked = ranked[-max_num_features:]
    names, values = zip(*ranked)
    ax = _axes(ax)
    positions = np.arange(len(values))
    ax.barh(positions, values, height=height, align="center", **bar_kwargs)
    ax.set_yticks(positions, labels=names)
    if show_values:
        for y, value in zip(positions, values):
            text = f"{value:.{precision}g}" if isinstance(value, float) else str(value)
            ax.text(value, y, " " + text, va="center")
    ax.set_title(title)
    ax.set_xlabel(xlabel or f"importance ({importance_type})")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, max(values) * 1.15)
    return ax


def plot_metric(model, metric=None, dataset_names=None, ax=None, title="Metric during training",
                xlabel="Iterations", ylabel=None):
    """Learning curves: ``metric`` (default: the first one recorded) after each round,
    one line per eval set, from a fitted estimator's ``evals_result()`` or such a dict
    ({eval set name: {metric: [value per round]}})."""
    results = model if isinstance(model, dict) else (
        model.evals_result() if hasattr(model, "evals_result") else None)
    if not results:
        raise ValueError("no evaluation results to plot: fit with eval_set=[...] (or pass "
                         "the dict of evals_result())")
    names = list(results) if dataset_names is None else list(dataset_names)
    unknown = [n for n in names if n not in results]
    if unknown:
        raise ValueError(f"dataset_names {unknown} are not among the eval sets {list(results)}")
    metrics = list(results[names[0]])
    if metric is None:
        metric = metrics[0]
    elif metric not in metrics:
        raise ValueError(f"metric={metric!r} was not recorded; the eval sets have {metrics}")
    ax = _axes(ax)
    for name in names:
        values = results[name][metric]
        ax.plot(np.arange(1, len(values) + 1), values, label=name)
    ax.legend(loc="best")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel or metric)
    ax.grid(True, alpha=0.3)
    return ax


def _leaf_order_positions(tree):
    """x position of every node: leaves 0, 1, 2, ... left to right, a split centred
    over its children."""
    x = np.zeros(tree.n_nodes)
    next_leaf = [0.0]

    def place(i):  # iterative post-order
        stack = [(i, False)]
        while stack:
            node, done = stack.pop()
            if tree.feature[node] < 0:
                x[node] = next_leaf[0]
                next_leaf[0] += 1
            elif done:
                x[node] = (x[tree.left[node]] + x[tree.right[node]]) / 2
            else:
                stack += [(node, True), (int(tree.right[node]), False),
                          (int(tree.left[node]), False)]
    place(0)
    return x


def plot_tree(model, tree_index=None, ax=None, precision=4, fontsize=8, figsize=None, fmap="",
              *, tree_idx=None, num_trees=None, rankdir=None, with_stats=False):
    """One tree drawn with matplotlib alone (no graphviz): a box per node, the split
    (``f <= t``, or ``f in {set}`` for categorical splits, whose set takes "yes") or the
    leaf value (``with_stats``: and the node's gain and cover); each edge says "yes" /
    "no" and, on the way missing values take, "missing".  ``fmap``: a feature map file
    (the module's docstring).  The tree: ``tree_index``, or xgboost's names for it,
    ``tree_idx`` and ``num_trees`` (default 0); ``rankdir``: xgboost's, top to bottom
    ("TB") only here (``to_graphviz`` draws the others)."""
    booster = _booster(model)
    given = {name: value for name, value in (("tree_index", tree_index), ("tree_idx", tree_idx),
                                             ("num_trees", num_trees)) if value is not None}
    if len(given) > 1:
        raise ValueError(f"plot_tree: {' and '.join(given)} name the same tree; give one")
    name, tree_index = next(iter(given.items()), ("tree_index", 0))
    if isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer)) \
            or not 0 <= tree_index < len(booster.trees):
        raise ValueError(f"{name}={tree_index!r} must be in [0, {len(booster.trees)}) "
                         "(the model's trees)")
    if rankdir not in (None, "TB"):
        raise ValueError(f"rankdir={rankdir!r}: plot_tree draws top to bottom ('TB'); "
                         "to_graphviz(model, rankdir=...) draws the other directions")
    tree = booster.trees[int(tree_index)]
    splits = tree_splits(booster, int(tree_index), fmap)
    x = _leaf_order_positions(tree)
    y = -_depths(tree).astype(float)
    ax = _axes(ax, figsize)
    box = dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.3")
    leaf_box = dict(box, facecolor="#e8f0fe")
    for i, split in enumerate(splits):
        if split is not None:
            for child, word in ((split.yes, "yes"), (split.no, "no")):
                ax.plot([x[i], x[child]], [y[i], y[child]], color="0.5", lw=0.8, zorder=1)
                label = word + (", missing" if child == split.missing else "")
                ax.text((x[i] + x[child]) / 2, (y[i] + y[child]) / 2, label,
                        fontsize=fontsize - 1, ha="center", va="center", color="0.3",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.5), zorder=2)
        label = node_label(tree, split, i, precision)
        if with_stats:
            label += (f"\ngain={tree.gain[i]:.{precision}g}" if split is not None else "") + \
                f"\ncover={tree.cover[i]:.{precision}g}"
        ax.text(x[i], y[i], label,
                fontsize=fontsize, ha="center", va="center", zorder=3,
                bbox=leaf_box if tree.feature[i] < 0 else box)
    ax.set_xlim(x.min() - 0.7, x.max() + 0.7)
    ax.set_ylim(y.min() - 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(f"tree {tree_index}")
    return ax


def to_graphviz(booster, fmap="", num_trees=None, rankdir=None, yes_color=None, no_color=None,
                condition_node_params=None, leaf_node_params=None, with_stats=False,
                tree_idx=0, **kwargs):
    """xgboost's ``to_graphviz``: tree ``tree_idx`` (``num_trees``, its older name) of
    ``booster`` (a Booster or a fitted estimator) as a ``graphviz.Source``: a node per
    split (``f <= t``, or ``f in {set}``) and leaf, edges "yes"/"no" in ``yes_color`` /
    ``no_color`` (blue / red), the one missing values take marked "missing";
    ``rankdir`` (default ``"TB"``), node attributes (``condition_node_params``,
    ``leaf_node_params``) and ``with_stats`` (gain and cover) as xgboost's.  Further
    keyword arguments go to ``graphviz.Source``.  ``fmap``: a feature map file, whose
    names the nodes take (and its types: the module's docstring)."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("to_graphviz needs graphviz's Python package: pip install graphviz "
                          "(plot_tree draws a tree with matplotlib alone)") from None
    model = _booster(booster)
    index = tree_idx if num_trees is None else num_trees
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < len(model.trees):
        raise ValueError(f"tree_idx={index!r} must be in [0, {len(model.trees)}) (the model's "
                         "trees)")
    return graphviz.Source(tree_dot(model, int(index), fmap, rankdir, yes_color, no_color,
                                    condition_node_params, leaf_node_params, with_stats),
                           **kwargs)
