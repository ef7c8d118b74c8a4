"""A tree's nodes as text for drawings: their labels and the tree in graphviz's DOT
language (``plotting.to_graphviz``, ``plotting.plot_tree``, ``Booster.get_dump(dump_format=
"dot")``)."""

from .feature_map import load_feature_map
from .inspection import _Features, _Split


def node_label(tree, split, i, precision):
    """A node's text: its leaf value, or ``split`` (an ``inspection._Split``)."""
    if split is None:
        return f"leaf {tree.value[i]:.{precision}g}"
    if split.kind == "c":
        shown = split.condition
        listed = ", ".join(str(c) for c in shown[:6]) + (", ..." if len(shown) > 6 else "")
        return f"{split.name} in {{{listed}}}"
    if split.kind == "i":
        return split.name
    if split.kind == "int" and isinstance(split.condition, int):
        return f"{split.name} <= {split.condition}"
    return f"{split.name} <= {split.condition:.{precision}g}"


def tree_splits(booster, t, fmap):
    """Tree ``t``'s split nodes as dumps show them (``inspection._Split``), by node id
    (None for leaves), named by the feature map file ``fmap`` if given."""
    tree = booster.trees[t]
    features = _Features(booster.feature_names, load_feature_map(fmap))
    return [None if tree.feature[i] < 0 else _Split(tree, t, i, features, booster.categories)
            for i in range(tree.n_nodes)]


def dot_source(tree, splits, rankdir, yes_color, no_color, split_params, leaf_params, with_stats):
    """One tree in graphviz's DOT language (``to_graphviz``); ``splits`` its nodes as
    ``tree_splits`` gives them."""

    def attributes(params):
        return "".join(f", {k}={_quoted(v)}" for k, v in params.items())

    lines = ["digraph {", f"    graph [rankdir={_quoted(rankdir)}]"]
    for i, split in enumerate(splits):
        label = node_label(tree, split, i, 6)
        if with_stats:
            label += (f"\ngain={tree.gain[i]:.6g}" if tree.feature[i] >= 0 else "") + \
                f"\ncover={tree.cover[i]:.6g}"
        is_leaf = tree.feature[i] < 0
        lines.append(f"    {i} [label={_quoted(label)}"
                     f"{attributes(leaf_params if is_leaf else split_params)}]")
        if is_leaf:
            continue
        for child, word, color in ((split.yes, "yes", yes_color), (split.no, "no", no_color)):
            text = word + (", missing" if child == split.missing else "")
            lines.append(f"    {i} -> {child} [label={_quoted(text)}, color={_quoted(color)}]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quoted(value):
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text + '"'


def tree_dot(booster, t, fmap="", rankdir=None, yes_color=None, no_color=None,
             condition_node_params=None, leaf_node_params=None, with_stats=False):
    """Tree ``t`` of ``booster`` in DOT (``dot_source``) with xgboost's ``to_graphviz``
    defaults: top to bottom, "yes" edges blue, "no" red, splits in boxes.  ``fmap``: a
    feature map file, or one ``load_feature_map`` read."""
    return dot_source(booster.trees[t], tree_splits(booster, t, fmap), rankdir or "TB",
                      yes_color or "#0000FF", no_color or "#FF0000",
                      condition_node_params or {"shape": "box"}, leaf_node_params or {},
                      bool(with_stats))

