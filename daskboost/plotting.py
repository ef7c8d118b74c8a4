"""Plots of a model: feature importances, one tree, learning curves (matplotlib only);
one tree as a graphviz graph (``to_graphviz``, xgboost's).

matplotlib is an optional extra (``pip install daskboost[plot]``): it is imported when
a plot is drawn, and its absence is an ImportError that says how to install it; so is
graphviz's Python package for ``to_graphviz``.  Each
function draws on ``ax`` (a new figure's axes if None) and returns the Axes, as
xgboost's and LightGBM's plotting functions do.  ``model`` is a fitted estimator or a
``Booster``.
"""

import numpy as np

from .inspection import _category_split, _depths, _missing_child, _namer


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
                    show_values=True, precision=3, height=0.6, **bar_kwargs):
    """Horizontal bars of ``Booster.get_score(importance_type)`` (xgboost's types:
    weight, gain, cover, total_gain, total_cover), largest at the top; the
    ``max_num_features`` largest only if given.  Features no split uses are not shown
    (as in xgboost)."""
    scores = _booster(model).get_score(importance_type)
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


def _node_label(tree, i, name, categories, precision):
    if tree.feature[i] < 0:
        return f"leaf {tree.value[i]:.{precision}g}"
    split = _category_split(tree, i, categories)
    if split is not None:
        shown = split[0]
        listed = ", ".join(str(c) for c in shown[:6]) + (", ..." if len(shown) > 6 else "")
        return f"{name(int(tree.feature[i]))} in {{{listed}}}"
    return f"{name(int(tree.feature[i]))} <= {tree.threshold[i]:.{precision}g}"


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


def plot_tree(model, tree_index=0, ax=None, precision=4, fontsize=8, figsize=None):
    """One tree drawn with matplotlib alone (no graphviz): a box per node, the split
    (``f <= t``, or ``f in {set}`` for categorical splits, whose set takes "yes") or the
    leaf value; each edge says "yes" / "no" and, on the way missing values take,
    "missing"."""
    booster = _booster(model)
    if isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer)) \
            or not 0 <= tree_index < len(booster.trees):
        raise ValueError(f"tree_index={tree_index!r} must be in [0, {len(booster.trees)}) "
                         "(the model's trees)")
    tree = booster.trees[int(tree_index)]
    name = _namer(booster.feature_names)
    x = _leaf_order_positions(tree)
    y = -_depths(tree).astype(float)
    ax = _axes(ax, figsize)
    box = dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.3")
    leaf_box = dict(box, facecolor="#e8f0fe")
    for i in range(tree.n_nodes):
        if tree.feature[i] >= 0:
            split = _category_split(tree, i, booster.categories)
            yes, no = (split[1], split[2]) if split else (int(tree.left[i]), int(tree.right[i]))
            missing = _missing_child(tree, i)
            for child, word in ((yes, "yes"), (no, "no")):
                ax.plot([x[i], x[child]], [y[i], y[child]], color="0.5", lw=0.8, zorder=1)
                label = word + (", missing" if child == missing else "")
                ax.text((x[i] + x[child]) / 2, (y[i] + y[child]) / 2, label,
                        fontsize=fontsize - 1, ha="center", va="center", color="0.3",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.5), zorder=2)
        ax.text(x[i], y[i], _node_label(tree, i, name, booster.categories, precision),
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
    keyword arguments go to ``graphviz.Source``.  ``fmap`` is not read: the nodes name
    the model's features."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("to_graphviz needs graphviz's Python package: pip install graphviz "
                          "(plot_tree draws a tree with matplotlib alone)") from None
    if fmap:
        raise ValueError(f"fmap={fmap!r}: feature map files are not read; the nodes name the "
                         "model's features (feature_names)")
    model = _booster(booster)
    index = tree_idx if num_trees is None else num_trees
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < len(model.trees):
        raise ValueError(f"tree_idx={index!r} must be in [0, {len(model.trees)}) (the model's "
                         "trees)")
    return graphviz.Source(_dot(model, model.trees[int(index)], rankdir or "TB",
                                yes_color or "#0000FF", no_color or "#FF0000",
                                condition_node_params or {"shape": "box"},
                                leaf_node_params or {}, bool(with_stats)), **kwargs)


def _dot(booster, tree, rankdir, yes_color, no_color, split_params, leaf_params, with_stats):
    """One tree in graphviz's DOT language (``to_graphviz``)."""
    name = _namer(booster.feature_names)

    def attributes(params):
        return "".join(f", {k}={_quoted(v)}" for k, v in params.items())

    lines = ["digraph {", f"    graph [rankdir={_quoted(rankdir)}]"]
    for i in range(tree.n_nodes):
        label = _node_label(tree, i, name, booster.categories, 6)
        if with_stats:
            label += (f"\ngain={tree.gain[i]:.6g}" if tree.feature[i] >= 0 else "") + \
                f"\ncover={tree.cover[i]:.6g}"
        is_leaf = tree.feature[i] < 0
        lines.append(f"    {i} [label={_quoted(label)}"
                     f"{attributes(leaf_params if is_leaf else split_params)}]")
        if is_leaf:
            continue
        split = _category_split(tree, i, booster.categories)
        yes, no = (split[1], split[2]) if split else (int(tree.left[i]), int(tree.right[i]))
        missing = _missing_child(tree, i)
        for child, word, color in ((yes, "yes", yes_color), (no, "no", no_color)):
            text = word + (", missing" if child == missing else "")
            lines.append(f"    {i} -> {child} [label={_quoted(text)}, color={_quoted(color)}]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quoted(value):
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text + '"'
