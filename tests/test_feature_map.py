"""xgboost's feature map files (``fmap``): reading them (``daskboost.feature_map``) and
what they change in dumps, importances, the node table and plots; a hand-built tree
with known lines, a trained model, and xgboost's own dump of the same trees."""

import json
import re

import numpy as np
import pytest

import daskboost
from daskboost.booster import Booster
from daskboost.feature_map import FeatureMap, load_feature_map, read_feature_map
from daskboost.tree import Tree

MAP = "0\thas_a\ti\n1\thas_b\ti\n2\tage\tint\n"  # feature 3 ("d") is past its end


def write(tmp_path, text, name="featmap.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


def tree(nodes, categories=None):
    """``nodes``: ("leaf", value) or (feature, threshold, default_left, left, right)."""
    rows = [(-1, 0.0, False, -1, -1, node[1]) if node[0] == "leaf" else (*node, 0.0)
            for node in nodes]
    feature, threshold, default_left, left, right, value = map(list, zip(*rows))
    n = len(nodes)
    return Tree(feature=np.array(feature, np.int32), threshold=np.array(threshold),
                default_left=np.array(default_left), left=np.array(left, np.int32),
                right=np.array(right, np.int32), value=np.array(value),
                gain=np.arange(n, dtype=np.float64), cover=np.full(n, 10.0),
                categories=categories)


def hand_built(categories=None):
    first = tree([
        (0, 0.5, False, 1, 2),       # indicator, missing right: yes=1, no=2
        (1, 0.5, True, 3, 4),        # indicator, missing left: yes=4, no=3
        (2, 2.5, False, 5, 6),       # int: age <= 2
        ("leaf", -1.0), ("leaf", 1.0),
        (3, 0.25, True, 7, 8),       # past the map: the model's name
        (2, np.inf, False, 9, 10),   # int, infinite threshold
        ("leaf", 2.0), ("leaf", 3.0), ("leaf", 4.0), ("leaf", 5.0),
    ])
    second = tree([(2, -0.5, True, 1, 2), ("leaf", 0.5), ("leaf", -0.5)], categories)
    return Booster([first, second], [0.0], "reg:squarederror", 4, list("abcd"))


EXPECTED_TEXT = (
    "0:[has_a] yes=1,no=2\n"
    "\t1:[has_b] yes=4,no=3\n"
    "\t\t3:leaf=-1.0\n"
    "\t\t4:leaf=1.0\n"
    "\t2:[age<=2] yes=5,no=6,missing=6\n"
    "\t\t5:[d<=0.25] yes=7,no=8,missing=7\n"
    "\t\t\t7:leaf=2.0\n"
    "\t\t\t8:leaf=3.0\n"
    "\t\t6:[age<=inf] yes=9,no=10,missing=10\n"
    "\t\t\t9:leaf=4.0\n"
    "\t\t\t10:leaf=5.0\n",
    "0:[age<=-1] yes=1,no=2,missing=1\n"
    "\t1:leaf=0.5\n"
    "\t2:leaf=-0.5\n",
)


# ---- reading the file ---------------------------------------------------------------------
def test_read_feature_map_takes_xgboosts_format(tmp_path):
    path = write(tmp_path, "0\tcap-shape=bell\ti\r\n\n1  odor=none   q\n 2\tage\tint\n"
                           "3 weight float\n4\tcity\tc\n")
    fmap = read_feature_map(path)
    assert fmap.names == ("cap-shape=bell", "odor=none", "age", "weight", "city")
    assert fmap.types == ("i", "q", "int", "float", "c")
    assert load_feature_map(str(path)).names == fmap.names  # a str path too
    assert load_feature_map("") is None and load_feature_map(None) is None
    assert load_feature_map(fmap) is fmap
    assert fmap.rename(list("abcdefg")) == [*fmap.names, "f", "g"]  # past the end: kept
    assert read_feature_map(write(tmp_path, "", "empty.txt")).names == ()


@pytest.mark.parametrize("text, message", [
    ("0 a i\n2 b q\n", r"line 2: feature index 2 out of order.*so 1 was due"),
    ("1 a i\n", r"line 1: feature index 1 out of order"),
    ("id name type\n0 a i\n", r"line 1: the feature index 'id' is not a non-negative integer"),
    ("0 a i\n1 b x\n", r"line 2: unknown feature type 'x' for 'b'; the types are i "),
    ("0 a\n", r"line 1: expected 3 whitespace-separated fields '<index> <name> <type>', got 2"),
    ("0 a i\n\n1 cap shape q\n", r"line 3: expected 3 .* got 4 \(a feature name cannot "
                                 r"contain whitespace\)"),
])
def test_bad_feature_maps_are_refused_naming_file_and_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=message) as error:
        read_feature_map(path)
    assert str(path) in str(error.value)


def test_a_missing_map_file_is_file_not_found_naming_it(tmp_path):
    booster = hand_built()
    missing = tmp_path / "nowhere.fmap"
    for call in (lambda: booster.get_dump(missing), lambda: booster.get_score(missing),
                 lambda: booster.trees_to_dataframe(missing)):
        with pytest.raises(FileNotFoundError, match="nowhere.fmap"):
            call()
    with pytest.raises(FileNotFoundError, match="nowhere.fmap"):
        booster.dump_model(tmp_path / "dump.txt", missing)
    assert not (tmp_path / "dump.txt").exists()  # nothing half written
    with pytest.raises(TypeError, match="fmap=3 must be the path"):
        booster.get_dump(3)


# ---- what a map changes -------------------------------------------------------------------
def test_text_dump_with_a_map_hand_built(tmp_path):
    booster = hand_built()
    assert tuple(booster.get_dump(write(tmp_path, MAP))) == EXPECTED_TEXT
    # without a map: the model's names and thresholds, as before
    assert booster.get_dump()[0].splitlines()[:2] == [
        "0:[a<=0.5] yes=1,no=2,missing=2", "\t1:[b<=0.5] yes=3,no=4,missing=3"]
    stats = booster.get_dump(str(write(tmp_path, MAP)), with_stats=True)[0].splitlines()
    assert stats[0] == "0:[has_a] yes=1,no=2,gain=0.0,cover=10.0"
    assert stats[4] == "\t2:[age<=2] yes=5,no=6,missing=6,gain=2.0,cover=10.0"
    # "q" and "float" show thresholds as without a map
    floats = write(tmp_path, "0 a q\n1 b float\n2 c q\n", "floats.txt")
    assert booster.get_dump(floats) == booster.get_dump()


def test_json_dump_with_a_map_hand_built(tmp_path):
    root = json.loads(hand_built().get_dump(write(tmp_path, MAP), dump_format="json")[0])
    assert {k: v for k, v in root.items() if k != "children"} == {
        "nodeid": 0, "depth": 0, "split": "has_a", "yes": 1, "no": 2}
    has_b, age = root["children"]
    assert (has_b["split"], has_b["yes"], has_b["no"], "missing" in has_b) == (
        "has_b", 4, 3, False)
    assert [child["nodeid"] for child in has_b["children"]] == [4, 3]  # [yes, no]
    assert (age["split"], age["split_condition"], age["missing"]) == ("age", 2, 6)
    assert isinstance(age["split_condition"], int)
    d, infinite = age["children"]
    assert (d["split"], d["split_condition"]) == ("d", 0.25)
    assert infinite["split_condition"] == "inf"


def test_importances_and_node_table_take_the_maps_names(tmp_path):
    booster, fmap = hand_built(), write(tmp_path, MAP)
    assert booster.get_score(fmap) == {"has_a": 1.0, "has_b": 1.0, "age": 3.0, "d": 1.0}
    assert booster.get_fscore(fmap) == booster.get_score(fmap, importance_type="weight")
    assert booster.get_score(fmap, importance_type="gain")["age"] == pytest.approx(
        (2 + 6 + 0) / 3)
    plain, table = booster.trees_to_dataframe(), booster.trees_to_dataframe(fmap)
    names = {"a": "has_a", "b": "has_b", "c": "age", "d": "d", "Leaf": "Leaf"}
    assert table["Feature"].tolist() == plain["Feature"].map(names).tolist()
    # the table keeps exact thresholds and children whatever the map's types
    assert table.drop(columns="Feature").equals(plain.drop(columns="Feature"))


def test_dump_model_with_a_map_writes_the_file(tmp_path):
    booster, fmap = hand_built(), write(tmp_path, MAP)
    booster.dump_model(tmp_path / "dump.nice.txt", fmap)
    assert (tmp_path / "dump.nice.txt").read_text() == \
        f"booster[0]:\n{EXPECTED_TEXT[0]}booster[1]:\n{EXPECTED_TEXT[1]}"
    booster.dump_model(tmp_path / "dump.json", fmap=fmap, dump_format="json")
    assert json.loads((tmp_path / "dump.json").read_text()) == [
        json.loads(doc) for doc in booster.get_dump(fmap, dump_format="json")]


def test_categorical_type_must_match_the_split(tmp_path):
    numeric = hand_built()
    with pytest.raises(ValueError, match=r"feature 2 \('age'\) has type 'c' \(categorical\), "
                                         r"but node 2 of tree 0 is a numeric split") as error:
        numeric.get_dump(write(tmp_path, "0 has_a i\n1 has_b i\n2 age c\n"))
    assert "featmap.txt" in str(error.value)
    categorical = hand_built(categories={0: np.array([1, 3], np.int32)})  # tree 1, age
    with pytest.raises(ValueError, match=r"feature 2 \('age'\) has type 'int' \(integer\), "
                                         r"but node 0 of tree 1 splits it by category"):
        categorical.get_dump(write(tmp_path, MAP), dump_format="json")
    with pytest.raises(ValueError, match="splits it by category"):
        categorical.trees_to_dataframe(write(tmp_path, MAP))
    fine = write(tmp_path, "0 has_a i\n1 has_b i\n", "short.txt")  # age past the end
    assert categorical.get_dump(fine)[1].startswith("0:[c:{1,3}] yes=2,no=1,missing=1\n")
    assert categorical.get_dump(fine, with_stats=True)[1].startswith(  # (stats as xgboost's)
        "0:[c:{1,3}] yes=2,no=1,missing=1,gain=0.0,cover=10.0\n")
    typed = write(tmp_path, "0 has_a i\n1 has_b i\n2 age c\n", "typed.txt")
    with pytest.raises(ValueError, match="numeric split"):  # tree 0 splits age numerically
        categorical.get_dump(typed)


def test_old_positional_calls_say_fmap_comes_first():
    booster = hand_built()
    with pytest.raises(ValueError, match=r'get_score\("gain"\): fmap, the feature map file, '
                                         r"is get_score's first parameter, as in xgboost; "
                                         r'write importance_type="gain"'):
        booster.get_score("gain")
    with pytest.raises(TypeError, match=r"get_dump\(True\).* write with_stats=True"):
        booster.get_dump(True)
    assert booster.get_score(importance_type="gain") == booster.get_score("", "gain")


# ---- a trained model, and xgboost ------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    """Indicators (1 or missing, as a libsvm file's 0/1 columns), an integer feature
    and a float one."""
    rng = np.random.default_rng(7)
    n = 600
    a, b = rng.random(n) < 0.5, rng.random(n) < 0.3
    age, d = rng.integers(0, 10, n).astype(np.float64), rng.random(n)
    y = 2.0 * a - 1.5 * b + 0.4 * age + d + rng.normal(0, 0.1, n)
    X = np.column_stack([np.where(a, 1.0, np.nan), np.where(b, 1.0, np.nan), age, d])
    return X, y


@pytest.fixture(scope="module")
def trained(data):
    X, y = data
    return daskboost.train({"max_depth": 3, "eta": 0.5}, daskboost.DMatrix(
        X, y, feature_names=list("abcd")), num_boost_round=4)


def test_trained_model_dump_with_a_map(trained, tmp_path):
    fmap = write(tmp_path, MAP)
    mapped, plain = trained.get_dump(fmap), trained.get_dump()
    seen = set()
    for t, (text, raw) in enumerate(zip(mapped, plain)):
        tree = trained.trees[t]
        for line, raw_line in zip(text.splitlines(), raw.splitlines()):
            assert line.count("\t") == raw_line.count("\t")  # indented alike
            i = int(line.strip().split(":")[0])
            if tree.feature[i] < 0:
                assert line == raw_line
                continue
            left, right = int(tree.left[i]), int(tree.right[i])
            missing = left if tree.default_left[i] else right
            feature = int(tree.feature[i])
            seen.add(feature)
            if feature in (0, 1):
                present = right if missing == left else left
                assert line.strip() == f"{i}:[{'has_' + 'ab'[feature]}] " \
                                       f"yes={present},no={missing}"
            elif feature == 2:
                k = int(np.floor(tree.threshold[i]))
                assert line.strip() == f"{i}:[age<={k}] yes={left},no={right},missing={missing}"
                ages = np.arange(-1, 11)  # the same test on every integer value
                assert np.array_equal(ages <= tree.threshold[i], ages <= k)
            else:
                assert line == raw_line  # "d": past the map's end
    assert seen == {0, 1, 2, 3}
    scores = trained.get_score(fmap)
    renamed = {"a": "has_a", "b": "has_b", "c": "age", "d": "d"}
    assert scores == {renamed[k]: v for k, v in trained.get_score().items()}
    table = trained.trees_to_dataframe(fmap)
    assert set(table["Feature"]) == {"has_a", "has_b", "age", "d", "Leaf"}


def test_indicator_and_integer_lines_match_xgboosts_dump(data, tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = data
    theirs = xgb.train({"max_depth": 3, "eta": 0.5, "tree_method": "hist", "nthread": 1},
                       xgb.DMatrix(X, y, feature_names=list("abcd")), num_boost_round=4)
    theirs.save_model(tmp_path / "model.json")
    ours = Booster.load(str(tmp_path / "model.json"))  # the same trees, the same node ids
    fmap = write(tmp_path, MAP + "3\td\tq\n")  # (xgboost wants the whole model mapped)
    compared = {"i": 0, "int": 0}
    for mine, xgbs in zip(ours.get_dump(fmap), theirs.get_dump(str(fmap))):
        mine, xgbs = mine.splitlines(), xgbs.splitlines()
        assert len(mine) == len(xgbs)
        for line, reference in zip(mine, xgbs):
            # (xgboost writes indicator lines unindented, the others indented)
            if "<" not in reference and "leaf" not in reference:
                assert line.strip() == reference
                compared["i"] += 1
            elif reference.strip().split(":[")[-1].startswith("age<"):
                # xgboost's [age<k] is daskboost's [age<=k-1]: the same integers go left
                match = re.fullmatch(r"(\t*\d+):\[age<(-?\d+)\](.*)", reference)
                assert line == f"{match[1]}:[age<={int(match[2]) - 1}]{match[3]}"
                compared["int"] += 1
    assert compared["i"] > 0 and compared["int"] > 0
    assert ours.get_score(fmap) == theirs.get_score(str(fmap))


# ---- plots -----------------------------------------------------------------------------
def test_to_graphviz_and_plots_name_nodes_by_the_map(trained, tmp_path):
    fmap = write(tmp_path, MAP)
    try:
        import graphviz  # noqa: F401
    except ImportError:
        graphviz = None
    if graphviz is not None:
        source = daskboost.to_graphviz(trained, fmap=fmap).source
        labels = re.findall(r'^    \d+ \[label="([^"]*)"', source, flags=re.M)
        splits = [label for label in labels if not label.startswith("leaf")]
        assert splits and all(label in ("has_a", "has_b")
                              or label.startswith(("age <= ", "d <= ")) for label in splits)
        assert all(re.fullmatch(r"age <= -?\d+", label) for label in splits
                   if label.startswith("age"))
    hand = daskboost.to_graphviz(hand_built(), fmap=fmap).source if graphviz else None
    if hand is not None:  # an indicator: "yes" where present rows go, "no, missing" else
        assert '1 -> 4 [label="yes"' in hand and '1 -> 3 [label="no, missing"' in hand
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    try:
        ax = daskboost.plot_tree(hand_built(), fmap=fmap)
        texts = {text.get_text() for text in ax.texts}
        assert {"has_a", "has_b", "age <= 2", "age <= inf", "d <= 0.25"} <= texts
        ax = daskboost.plot_importance(hand_built(), fmap=fmap)
        assert {label.get_text() for label in ax.get_yticklabels()} == {
            "has_a", "has_b", "age", "d"}
    finally:
        plt.close("all")
    if graphviz is None:
        pytest.skip("graphviz's Python package is not installed: to_graphviz not checked")


def test_feature_map_object_checks_its_types():
    with pytest.raises(ValueError, match="unknown feature type 'x'"):
        FeatureMap(["a"], ["x"])
    assert FeatureMap(["a", "b"], ["i", "q"]).type_of(5) is None
