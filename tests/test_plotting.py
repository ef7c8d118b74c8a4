"""Plots (issue 16): importance bars, one tree, learning curves; matplotlib optional."""

import io
import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import daskboost as db  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.standard_normal((600, 4)), columns=["age", "income", "score", "x"])
    frame["city"] = rng.choice(["oslo", "rome", "lima"], 600)
    y = (frame.age + (frame.city == "rome") > 0.3).astype(int)
    model = db.DaskBoostClassifier(n_estimators=6, max_depth=3, max_cat_to_onehot=1)
    model.fit(frame.iloc[:400], y.iloc[:400],
              eval_set=[(frame.iloc[:400], y.iloc[:400]), (frame.iloc[400:], y.iloc[400:])])
    yield model
    plt.close("all")


def test_plot_importance_draws_the_scores_largest_on_top(fitted):
    scores = fitted.get_booster().get_score(importance_type="gain")
    ax = db.plot_importance(fitted, importance_type="gain")
    bars = ax.patches
    assert len(bars) == len(scores)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [b.get_width() for b in bars]
    assert widths == sorted(widths)  # the largest last: drawn at the top
    assert dict(zip(labels, widths)) == pytest.approx(scores)
    fig, mine = plt.subplots()
    assert db.plot_importance(fitted.get_booster(), max_num_features=2, ax=mine) is mine
    assert len(mine.patches) == 2
    assert [t.get_text() for t in mine.get_yticklabels()] == labels[-2:]
    with pytest.raises(ValueError, match="max_num_features=0"):
        db.plot_importance(fitted, max_num_features=0)
    with pytest.raises(ValueError, match="importance_type"):
        db.plot_importance(fitted, importance_type="shap")


def test_plot_tree_draws_every_node_and_edge(fitted):
    booster = fitted.get_booster()
    index = next(t for t, tree in enumerate(booster.trees) if tree.categories)
    tree = booster.trees[index]
    ax = db.plot_tree(fitted, tree_index=index)
    texts = [t.get_text() for t in ax.texts]
    n_splits = int((tree.feature >= 0).sum())
    assert len(texts) == tree.n_nodes + 2 * n_splits  # a box per node, a label per edge
    assert sum(t.startswith("leaf ") for t in texts) == tree.n_nodes - n_splits
    assert any(" in {" in t for t in texts)  # a categorical split shows its set
    assert sum("missing" in t for t in texts) == n_splits
    assert len(ax.lines) == 2 * n_splits
    with pytest.raises(ValueError, match="tree_index=99"):
        db.plot_tree(fitted, tree_index=99)


def test_plot_tree_takes_xgboosts_keywords(fitted):
    """xgboost's ``plot_tree(booster, tree_idx=, num_trees=, with_stats=, rankdir=)``."""
    booster = fitted.get_booster()
    texts = [t.get_text() for t in db.plot_tree(booster, tree_index=1).texts]
    assert [t.get_text() for t in db.plot_tree(booster, tree_idx=1).texts] == texts
    assert [t.get_text() for t in db.plot_tree(booster, num_trees=1, rankdir="TB").texts] \
        == texts
    tree = booster.trees[1]
    with_stats = [t.get_text() for t in db.plot_tree(booster, tree_idx=1, with_stats=True).texts]
    assert sum("\ngain=" in t for t in with_stats) == int((tree.feature >= 0).sum())
    assert sum("\ncover=" in t for t in with_stats) == tree.n_nodes
    with pytest.raises(ValueError, match="tree_idx=99"):
        db.plot_tree(booster, tree_idx=99)
    with pytest.raises(ValueError, match="tree_index and tree_idx name the same tree"):
        db.plot_tree(booster, 1, tree_idx=1)
    with pytest.raises(ValueError, match="rankdir='LR': plot_tree draws top to bottom"):
        db.plot_tree(booster, rankdir="LR")


def test_to_graphviz_is_the_tree_in_dot(fitted):
    graphviz = pytest.importorskip("graphviz")
    booster = fitted.get_booster()
    index = next(t for t, tree in enumerate(booster.trees) if tree.categories)
    tree = booster.trees[index]
    source = db.to_graphviz(fitted, tree_idx=index, with_stats=True, yes_color="green",
                            leaf_node_params={"shape": "ellipse"})
    assert isinstance(source, graphviz.Source)
    dot = source.source
    n_splits = int((tree.feature >= 0).sum())
    nodes = [line for line in dot.splitlines() if "[label=" in line and "->" not in line]
    edges = [line for line in dot.splitlines() if "->" in line]
    assert len(nodes) == tree.n_nodes and len(edges) == 2 * n_splits
    assert sum('color="green"' in e for e in edges) == n_splits        # the "yes" edges
    assert sum('color="#FF0000"' in e for e in edges) == n_splits      # the "no" edges
    assert sum("missing" in e for e in edges) == n_splits
    assert sum('shape="ellipse"' in n for n in nodes) == tree.n_nodes - n_splits
    assert sum("\\ngain=" in n for n in nodes) == n_splits
    assert any(" in {" in n for n in nodes)                           # a categorical split
    # each edge goes to the child the tree says, its "yes" one first
    first = int(np.flatnonzero(tree.feature >= 0)[0])
    pair = [line for line in edges if line.strip().startswith(f"{first} ->")]
    assert {int(line.split("->")[1].split("[")[0]) for line in pair} == {
        int(tree.left[first]), int(tree.right[first])}
    assert db.to_graphviz(booster, num_trees=0).source == db.to_graphviz(booster).source
    # xgboost's get_dump(dump_format="dot"): each tree's to_graphviz text
    dumps = booster.get_dump(with_stats=True, dump_format="dot")
    assert len(dumps) == len(booster.trees)
    assert dumps[index] == db.to_graphviz(booster, tree_idx=index, with_stats=True).source
    with pytest.raises(ValueError, match="tree_idx=99"):
        db.to_graphviz(booster, tree_idx=99)
    with pytest.raises(FileNotFoundError, match="features.txt"):
        db.to_graphviz(booster, fmap="features.txt")  # (tests/test_feature_map.py reads maps)


def test_plot_metric_draws_one_curve_per_eval_set(fitted):
    results = fitted.evals_result()
    ax = db.plot_metric(fitted)
    assert len(ax.lines) == len(results)
    name = next(iter(results))
    metric = next(iter(results[name]))
    np.testing.assert_allclose(ax.lines[0].get_ydata(), results[name][metric])
    assert ax.get_ylabel() == metric
    assert db.plot_metric(results, dataset_names=[name]).lines[0].get_label() == name
    with pytest.raises(ValueError, match="metric='auc'"):
        db.plot_metric(fitted, metric="auc")
    unfitted_results = db.DaskBoostRegressor(n_estimators=2).fit(np.ones((20, 2)), np.arange(20.0))
    with pytest.raises(ValueError, match="eval_set"):
        db.plot_metric(unfitted_results)


def test_without_matplotlib_a_plot_says_how_to_install_it(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"daskboost\[plot\]"):
        db.plot_importance(fitted)


def test_import_daskboost_does_not_import_matplotlib():
    code = "import sys, daskboost; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_each_plot_renders_to_png(fitted):
    for draw in (lambda: db.plot_importance(fitted), lambda: db.plot_tree(fitted, 1),
                 lambda: db.plot_metric(fitted)):
        ax = draw()
        buffer = io.BytesIO()
        ax.figure.savefig(buffer, format="png")
        assert buffer.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(buffer.getvalue()) > 5000  # something drawn
        plt.close(ax.figure)
