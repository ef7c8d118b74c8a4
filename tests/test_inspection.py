"""Importances, dumps and the node table: hand-built trees with known answers, and
agreement with XGBoost on trees rebuilt from XGBoost's own dump."""

import json

import numpy as np
import pandas as pd
import pytest

from daskboost.inspection import (
    IMPORTANCE_TYPES,
    dump_json,
    dump_text,
    feature_importances,
    get_score,
    trees_to_dataframe,
)
from daskboost.tree import Tree


def make_tree(nodes):
    """``nodes``: per node id, either ("leaf", value, cover) or
    (feature, threshold, default_left, left, right, gain, cover)."""
    cols = {k: [] for k in ("feature", "threshold", "default_left", "left", "right",
                            "value", "gain", "cover")}
    for node in nodes:
        if node[0] == "leaf":
            _, value, cover = node
            row = (-1, 0.0, False, -1, -1, value, 0.0, cover)
        else:
            feature, threshold, default_left, left, right, gain, cover = node
            row = (feature, threshold, default_left, left, right, 0.0, gain, cover)
        for key, v in zip(cols, row):
            cols[key].append(v)
    dtypes = {"feature": np.int32, "threshold": np.float64, "default_left": np.bool_,
              "left": np.int32, "right": np.int32, "value": np.float64,
              "gain": np.float64, "cover": np.float64}
    return Tree(**{k: np.asarray(v, dtype=dtypes[k]) for k, v in cols.items()})


def tree_a():
    # 0: x0 <= 0.5 (missing left) -> 1 | 2;  2: x1 <= inf (missing right) -> 3 | 4
    return make_tree([
        (0, 0.5, True, 1, 2, 5.0, 10.0),
        ("leaf", -1.0, 4.0),
        (1, np.inf, False, 3, 4, 1.0, 6.0),
        ("leaf", 2.0, 5.0),
        ("leaf", 3.0, 1.0),
    ])


def tree_b():
    # depth-first order (0, 1, 3, 4, 2) differs from id order
    return make_tree([
        (1, 2.0, False, 1, 2, 3.0, 8.0),
        (1, 1.0, True, 3, 4, 2.0, 5.0),
        ("leaf", 0.1 + 0.2, 3.0),
        ("leaf", -0.25, 2.0),
        ("leaf", 1e-05, 3.0),
    ])


def leaf_only(value=0.25, cover=7.0):
    return make_tree([("leaf", value, cover)])


NAMES = ["a", "b", "c"]


def no_constants(name):
    raise AssertionError(f"non-standard JSON constant {name}")


# ---- importances on hand-built trees ----------------------------------------------------
@pytest.mark.parametrize("importance_type, expected", [
    ("weight", {"a": 1.0, "b": 3.0}),
    ("total_gain", {"a": 5.0, "b": 6.0}),
    ("total_cover", {"a": 10.0, "b": 19.0}),
    ("gain", {"a": 5.0, "b": 2.0}),
    ("cover", {"a": 10.0, "b": 19.0 / 3}),
])
def test_get_score_known_answers(importance_type, expected):
    trees = [tree_a(), tree_b(), leaf_only()]
    score = get_score(trees, NAMES, 3, importance_type)
    assert list(score) == ["a", "b"]  # feature order; unused "c" is absent
    assert score == pytest.approx(expected, rel=1e-15)
    assert all(type(v) is float for v in score.values())


def test_get_score_default_names_and_type():
    score = get_score([tree_a(), tree_b()], None, 3)
    assert score == {"f0": 1.0, "f1": 3.0}


def test_get_score_rejects_bad_input():
    with pytest.raises(ValueError, match="total_gain"):
        get_score([tree_a()], NAMES, 3, "split")
    with pytest.raises(ValueError, match="feature names"):
        get_score([tree_a()], ["a"], 3)
    with pytest.raises(ValueError, match="feature 1"):
        get_score([tree_a()], None, 1)
    with pytest.raises(ValueError, match="valid types"):
        feature_importances([tree_a()], 3, "gini")


@pytest.mark.parametrize("importance_type, raw", [
    ("gain", [5.0, 2.0, 0.0]),
    ("weight", [1.0, 3.0, 0.0]),
    ("cover", [10.0, 19.0 / 3, 0.0]),
    ("total_gain", [5.0, 6.0, 0.0]),
    ("total_cover", [10.0, 19.0, 0.0]),
])
def test_feature_importances_normalised(importance_type, raw):
    imp = feature_importances([tree_a(), tree_b()], 3, importance_type)
    assert imp.shape == (3,) and imp.dtype == np.float64
    np.testing.assert_allclose(imp, np.array(raw) / sum(raw), rtol=1e-15)
    assert imp.sum() == pytest.approx(1.0)


def test_feature_importances_default_is_gain_and_no_split_is_zero():
    trees = [tree_a(), tree_b()]
    np.testing.assert_array_equal(feature_importances(trees, 3),
                                  feature_importances(trees, 3, "gain"))
    for trees in ([], [leaf_only(), leaf_only()]):
        imp = feature_importances(trees, 4)
        np.testing.assert_array_equal(imp, np.zeros(4))
        assert get_score(trees, None, 4, "gain") == {}


# ---- text dump --------------------------------------------------------------------------
def test_dump_text_exact():
    out = dump_text([tree_a(), tree_b(), leaf_only()], NAMES)
    assert out == [
        "0:[a<=0.5] yes=1,no=2,missing=1\n"
        "\t1:leaf=-1.0\n"
        "\t2:[b<=inf] yes=3,no=4,missing=4\n"
        "\t\t3:leaf=2.0\n"
        "\t\t4:leaf=3.0\n",
        "0:[b<=2.0] yes=1,no=2,missing=2\n"
        "\t1:[b<=1.0] yes=3,no=4,missing=3\n"
        "\t\t3:leaf=-0.25\n"
        "\t\t4:leaf=1e-05\n"
        "\t2:leaf=0.30000000000000004\n",
        "0:leaf=0.25\n",
    ]


def test_dump_text_with_stats_and_default_names():
    out = dump_text([tree_a()], None, with_stats=True)
    assert out == [
        "0:[f0<=0.5] yes=1,no=2,missing=1,gain=5.0,cover=10.0\n"
        "\t1:leaf=-1.0,cover=4.0\n"
        "\t2:[f1<=inf] yes=3,no=4,missing=4,gain=1.0,cover=6.0\n"
        "\t\t3:leaf=2.0,cover=5.0\n"
        "\t\t4:leaf=3.0,cover=1.0\n"
    ]


def test_dump_text_numbers_round_trip():
    rng = np.random.default_rng(0)
    values = rng.normal(size=3) * 1e-7
    tree = make_tree([
        (0, float(rng.normal()), True, 1, 2, float(rng.random()), float(rng.random())),
        ("leaf", values[0], 1.0),
        ("leaf", values[1], 1.0),
    ])
    text = dump_text([tree], None, with_stats=True)[0]
    threshold = float(text.split("<=")[1].split("]")[0])
    gain = float(text.split("gain=")[1].split(",")[0])
    leaves = [float(line.split("leaf=")[1].split(",")[0])
              for line in text.splitlines() if "leaf=" in line]
    assert threshold == tree.threshold[0] and gain == tree.gain[0]
    assert leaves == [tree.value[1], tree.value[2]]


def test_dump_text_rejects_short_feature_names():
    with pytest.raises(ValueError, match="feature 1"):
        dump_text([tree_a()], ["only"])


# ---- JSON dump --------------------------------------------------------------------------
def test_dump_json_structure():
    docs = dump_json([tree_a(), tree_b(), leaf_only()], NAMES, with_stats=True)
    assert len(docs) == 3
    a, b, leaf = (json.loads(d, parse_constant=no_constants) for d in docs)

    assert a == {
        "nodeid": 0, "depth": 0, "split": "a", "split_condition": 0.5,
        "yes": 1, "no": 2, "missing": 1, "gain": 5.0, "cover": 10.0, "children": [
            {"nodeid": 1, "depth": 1, "leaf": -1.0, "cover": 4.0},
            {"nodeid": 2, "depth": 1, "split": "b", "split_condition": "inf",
             "yes": 3, "no": 4, "missing": 4, "gain": 1.0, "cover": 6.0, "children": [
                 {"nodeid": 3, "depth": 2, "leaf": 2.0, "cover": 5.0},
                 {"nodeid": 4, "depth": 2, "leaf": 3.0, "cover": 1.0},
             ]},
        ]}
    assert float(a["children"][1]["split_condition"]) == np.inf
    assert b["children"][0]["children"][1]["leaf"] == 1e-05
    assert b["children"][1] == {"nodeid": 2, "depth": 1, "leaf": 0.1 + 0.2, "cover": 3.0}
    assert b["children"][0]["missing"] == 3 and b["missing"] == 2
    assert leaf == {"nodeid": 0, "depth": 0, "leaf": 0.25, "cover": 7.0}


def test_dump_json_without_stats_has_no_stats():
    doc = json.loads(dump_json([tree_a()], None)[0], parse_constant=no_constants)

    def walk(node):
        assert "gain" not in node and "cover" not in node
        for child in node.get("children", []):
            walk(child)

    walk(doc)
    assert doc["split"] == "f0" and doc["children"][1]["split"] == "f1"


# ---- data frame -------------------------------------------------------------------------
def test_trees_to_dataframe_hand_built():
    df = trees_to_dataframe([tree_a(), tree_b(), leaf_only()], NAMES, n_outputs=2)
    assert list(df.columns) == ["Tree", "Node", "ID", "Feature", "Split", "Yes", "No",
                                "Missing", "Gain", "Cover", "Class"]
    assert len(df) == 11
    assert df["Tree"].tolist() == [0] * 5 + [1] * 5 + [2]
    assert df["Node"].tolist() == [0, 1, 2, 3, 4] * 2 + [0]
    assert df["Class"].tolist() == [0] * 5 + [1] * 5 + [0]
    assert df["ID"].tolist()[:6] == ["0-0", "0-1", "0-2", "0-3", "0-4", "1-0"]
    assert df["Feature"].tolist() == (["a", "Leaf", "b", "Leaf", "Leaf",
                                       "b", "b", "Leaf", "Leaf", "Leaf", "Leaf"])
    root = df.iloc[0]
    assert (root["Split"], root["Yes"], root["No"], root["Missing"]) == (0.5, "0-1", "0-2", "0-1")
    assert df.iloc[2]["Split"] == np.inf and df.iloc[2]["Missing"] == "0-4"
    assert df.iloc[6]["Missing"] == "1-3"
    leaves = df[df["Feature"] == "Leaf"]
    assert leaves[["Split", "Yes", "No", "Missing"]].isna().all().all()
    np.testing.assert_array_equal(leaves["Gain"], [-1.0, 2.0, 3.0, 0.1 + 0.2, -0.25, 1e-05, 0.25])
    np.testing.assert_array_equal(df["Gain"][df["Feature"] != "Leaf"], [5.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(df["Cover"], [10, 4, 6, 5, 1, 8, 5, 3, 2, 3, 7])
    for col in ("Tree", "Node", "Class"):
        assert df[col].dtype == np.int64
    for col in ("Split", "Gain", "Cover"):
        assert df[col].dtype == np.float64


def test_trees_to_dataframe_empty_and_bad_outputs():
    df = trees_to_dataframe([], None)
    assert len(df) == 0 and "Class" in df.columns
    with pytest.raises(ValueError, match="n_outputs"):
        trees_to_dataframe([tree_a()], None, n_outputs=0)


# ---- agreement with XGBoost on identical trees ------------------------------------------
def trees_from_xgboost_dump(booster):
    """daskboost Trees equal to the booster's, from its JSON dump with stats.

    XGBoost's node ids are compacted in order (they are already compact when nothing
    was pruned); returns the trees and, per tree, {xgboost id: daskboost id}.
    XGBoost sends ``x < c`` left; on float32-representable data that is
    ``x <= nextafter(c, -inf)``.
    """
    trees, id_maps = [], []
    for doc in booster.get_dump(dump_format="json", with_stats=True):
        nodes, stack = {}, [json.loads(doc)]
        while stack:
            node = stack.pop()
            nodes[node["nodeid"]] = node
            stack.extend(node.get("children", []))
        ids = {xid: i for i, xid in enumerate(sorted(nodes))}
        rows = []
        for xid in sorted(nodes):
            node = nodes[xid]
            if "leaf" in node:
                rows.append(("leaf", node["leaf"], node["cover"]))
            else:
                assert node["split"].startswith("f")
                threshold = np.nextafter(np.float64(np.float32(node["split_condition"])), -np.inf)
                rows.append((int(node["split"][1:]), threshold, node["missing"] == node["yes"],
                             ids[node["yes"]], ids[node["no"]], node["gain"], node["cover"]))
        trees.append(make_tree(rows))
        id_maps.append(ids)
    return trees, id_maps


def traverse(tree, row):
    """The leaf value ``row`` reaches (daskboost's rule: left iff x <= threshold)."""
    node = 0
    while tree.feature[node] >= 0:
        v = row[tree.feature[node]]
        go_left = tree.default_left[node] if np.isnan(v) else v <= tree.threshold[node]
        node = tree.left[node] if go_left else tree.right[node]
    return tree.value[node]


def few_valued_data(rng, n=400, n_features=6):
    X = rng.integers(0, 5, size=(n, n_features)).astype(np.float64)
    y = 2.0 * X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + rng.normal(scale=0.5, size=n)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


@pytest.fixture(scope="module")
def xgb_regressor():
    xgboost = pytest.importorskip("xgboost")
    X, y = few_valued_data(np.random.default_rng(42))
    model = xgboost.XGBRegressor(tree_method="hist", n_estimators=5, max_depth=3,
                                 n_jobs=1).fit(X, y)
    trees, id_maps = trees_from_xgboost_dump(model.get_booster())
    return xgboost, model, X, trees, id_maps


def test_rebuilt_trees_predict_like_xgboost(xgb_regressor):
    # guards the rebuilding itself: the trees below really are XGBoost's trees
    xgboost, model, X, trees, _ = xgb_regressor
    assert len(trees) == 5 and sum(t.n_nodes > 1 for t in trees) == 5
    dm = xgboost.DMatrix(X, base_margin=np.zeros(len(X)))
    expected = model.get_booster().predict(dm, output_margin=True)
    margin = [sum(traverse(tree, row) for tree in trees) for row in X]
    np.testing.assert_allclose(margin, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("importance_type", IMPORTANCE_TYPES)
def test_get_score_matches_xgboost(xgb_regressor, importance_type):
    _, model, X, trees, _ = xgb_regressor
    expected = model.get_booster().get_score(importance_type=importance_type)
    got = get_score(trees, None, X.shape[1], importance_type)
    assert set(got) == set(expected) and len(got) >= 3
    assert got == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("importance_type", [None, *IMPORTANCE_TYPES])
def test_feature_importances_match_xgboost_sklearn(xgb_regressor, importance_type):
    _, model, X, trees, _ = xgb_regressor
    model.set_params(importance_type=importance_type)
    try:
        expected = model.feature_importances_
    finally:
        model.set_params(importance_type=None)
    if importance_type is None:  # the sklearn wrapper's default for tree boosters
        got = feature_importances(trees, X.shape[1])
    else:
        got = feature_importances(trees, X.shape[1], importance_type)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_trees_to_dataframe_matches_xgboost(xgb_regressor):
    _, model, X, trees, id_maps = xgb_regressor
    expected = model.get_booster().trees_to_dataframe()
    got = trees_to_dataframe(trees, None)
    assert len(got) == len(expected)
    assert got["Tree"].tolist() == expected["Tree"].tolist()
    mapped = [id_maps[t][n] for t, n in zip(expected["Tree"], expected["Node"])]
    assert got["Node"].tolist() == mapped
    assert got["Feature"].tolist() == expected["Feature"].tolist()
    np.testing.assert_allclose(got["Gain"], expected["Gain"], rtol=1e-6)
    np.testing.assert_allclose(got["Cover"], expected["Cover"], rtol=1e-6)
    assert (got["Class"] == 0).all()
    # same splits, written as daskboost's "<=" threshold instead of XGBoost's "<" one
    splits = expected["Feature"] != "Leaf"
    np.testing.assert_array_equal(
        got["Split"][splits], np.nextafter(expected["Split"][splits].to_numpy(), -np.inf))
    assert got["Split"][~splits].isna().all()

    # ID / Yes / No / Missing: "tree-node" strings naming the same nodes as XGBoost's
    def remap(ref, tree):
        if pd.isna(ref):
            return None
        t, n = ref.split("-")
        assert int(t) == tree
        return f"{t}-{id_maps[tree][int(n)]}"

    for col in ("ID", "Yes", "No", "Missing"):
        want = [remap(r, t) for r, t in zip(expected[col], expected["Tree"])]
        have = [None if pd.isna(r) else r for r in got[col]]
        assert have == want, col
    assert (got["ID"] == got["Tree"].astype(str) + "-" + got["Node"].astype(str)).all()


def test_multiclass_importances_and_class_column_match_xgboost():
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(7)
    X, score = few_valued_data(rng, n=300, n_features=4)
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    model = xgboost.XGBClassifier(tree_method="hist", n_estimators=3, max_depth=2,
                                  n_jobs=1).fit(X, y)
    booster = model.get_booster()
    trees, _ = trees_from_xgboost_dump(booster)
    assert len(trees) == 9
    for importance_type in IMPORTANCE_TYPES:
        assert get_score(trees, None, 4, importance_type) == pytest.approx(
            booster.get_score(importance_type=importance_type), rel=1e-6)
    np.testing.assert_allclose(feature_importances(trees, 4), model.feature_importances_,
                               rtol=1e-6, atol=1e-7)
    tree_info = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"][
        "tree_info"]
    df = trees_to_dataframe(trees, None, n_outputs=3)
    assert df.groupby("Tree")["Class"].first().tolist() == tree_info
