"""Split constraints, xgboost's ``monotone_constraints`` and ``interaction_constraints``.

Monotone: predictions along a fine grid of a constrained feature (the other features
fixed at random points, some missing) never decrease (+1) / increase (-1), for
depthwise and lossguide growth and with ``max_delta_step``/``reg_alpha``, where the
unconstrained model on the same data does (leaves refit by reg:absoluteerror included).
Interaction: with the sets {a} and {b, c} the model is additive in a and (b, c), and
every root-to-leaf path stays within one set. On discrete data (every value its own
bin) the models equal xgboost's. The forms of the parameters, their errors, model files
and the command line; byte-identical models on every scheduler. Defaults leave every
model as it was (test_golden_models.py).
"""

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostRegressor
from daskboost.sklearn import load_estimator
from daskboost import training
from daskboost.splitting import find_splits, find_splits_monotone

COLUMNS = ["a", "b", "c"]


def wavy_data(seed=0, n=3000):
    """A target that rises and falls along a (and b), with an a*b interaction; 5% NaN."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    y = (np.sin(2 * X[:, 0]) + X[:, 0] - np.cos(3 * X[:, 1]) - 0.5 * X[:, 1]
         + X[:, 0] * X[:, 1] + 0.5 * X[:, 2] + 0.2 * rng.normal(size=n))
    X[rng.random(X.shape) < 0.05] = np.nan
    return pd.DataFrame(X, columns=COLUMNS), y


def grid_steps(model, feature, seed=1, n_points=8, n_grid=500):
    """Differences of consecutive predictions along a fine grid of ``feature`` (past
    the data's range at both ends), the other features fixed at random points (some
    of them missing): one row of differences per point."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(-3, 3, size=(n_points, 3))
    points[rng.random(points.shape) < 0.3] = np.nan
    grid = np.linspace(-3.5, 3.5, n_grid)
    steps = []
    for point in points:
        rows = np.repeat(point[None], n_grid, axis=0)
        rows[:, feature] = grid
        margin = model.predict(pd.DataFrame(rows, columns=COLUMNS), output_margin=True)
        steps.append(np.diff(margin))
    return np.array(steps)


GROWTH = {
    "depthwise": dict(max_depth=5),
    "lossguide": dict(grow_policy="lossguide", max_depth=0, max_leaves=24),
    "max_delta_step": dict(max_depth=5, max_delta_step=0.3, reg_alpha=0.5),
    # leaves refit to their rows' median: kept in their bounds (xgboost does not)
    "absoluteerror": dict(max_depth=5, objective="reg:absoluteerror"),
}


@pytest.mark.parametrize("growth", sorted(GROWTH))
def test_monotone_predictions_along_a_grid(growth):
    X, y = wavy_data()
    params = dict(n_estimators=25, learning_rate=0.3, **GROWTH[growth])
    model = DaskBoostRegressor(monotone_constraints=(1, -1, 0), **params).fit(X, y)
    assert (grid_steps(model, 0) >= 0).all()   # non-decreasing in a
    assert (grid_steps(model, 1) <= 0).all()   # non-increasing in b
    free = DaskBoostRegressor(**params).fit(X, y)
    assert (grid_steps(free, 0) < -1e-3).any() and (grid_steps(free, 1) > 1e-3).any()


def test_monotone_forms_give_the_same_model():
    X, y = wavy_data()
    trees = []
    for form in [(1, -1, 0), [1, -1, 0], np.array([1, -1, 0]), {"a": 1, "b": -1},
                 "(1,-1,0)", " (1, -1, 0) "]:
        model = DaskBoostRegressor(n_estimators=5, monotone_constraints=form).fit(X, y)
        trees.append(model.get_booster().to_dict())
    assert all(t == trees[0] for t in trees)
    # all zeros is no constraint (as in xgboost): the unconstrained model exactly
    zeros = DaskBoostRegressor(n_estimators=5, monotone_constraints={"a": 0}).fit(X, y)
    free = DaskBoostRegressor(n_estimators=5).fit(X, y)
    assert zeros.get_booster().to_dict() == free.get_booster().to_dict() != trees[0]


BAD = [
    (dict(monotone_constraints=(1, 0)), True, r"monotone_constraints=\(1, 0\) has 2 values; "
                                              r"X has 3 features"),
    (dict(monotone_constraints=(1, 2, 0)), True, r"monotone_constraints=\(1, 2, 0\) must hold "
                                                 r"only -1, 0 or 1; got 2"),
    (dict(monotone_constraints=(1, 0.5, 0)), True, "must hold only -1, 0 or 1; got 0.5"),
    (dict(monotone_constraints="(1,x,0)"), True, r"monotone_constraints='\(1,x,0\)' must hold"),
    (dict(monotone_constraints="1,0,0"), True, "must look like"),
    (dict(monotone_constraints={"a": 1, "zz": -1, "yy": 1}), True, r"names columns not in X: "
                                                                    r"\['zz', 'yy'\]"),
    (dict(monotone_constraints={"a": 1}), False, "X has no column names"),
    (dict(monotone_constraints={"a": True}), True, "got True"),
    (dict(monotone_constraints=1), True, "must be a list of -1/0/1"),
    (dict(interaction_constraints=[["a"], ["b", "zz"]]), True, "names column 'zz', not in X"),
    (dict(interaction_constraints=[["a"]]), False, "X has no column names"),
    (dict(interaction_constraints=[[0], [1, 3]]), True, "feature index 3 is out of range; "
                                                        "X has 3 features"),
    (dict(interaction_constraints=[[0], [-1]]), True, "feature index -1 is out of range"),
    (dict(interaction_constraints=["ab"]), True, "must be a list of lists"),
    (dict(interaction_constraints=[[0.5]]), True, "0.5 is not a column name or a feature"),
    (dict(interaction_constraints="[[0, "), True, "must be a list of lists"),
]


@pytest.mark.parametrize("params,named,message", BAD)
def test_bad_constraints_are_refused_before_any_pass(monkeypatch, params, named, message):
    def no_scan(*args, **kwargs):
        raise AssertionError("the data was scanned before the parameters were checked")
    monkeypatch.setattr(training, "scan", no_scan)
    X, y = wavy_data(n=50)
    X = X if named else X.to_numpy()
    with pytest.raises((ValueError, TypeError), match=message):
        DaskBoostRegressor(n_estimators=2, **params).fit(X, y)


def interaction(model, rng, n_pairs=300):
    """f(a1, r1) - f(a2, r1) - f(a1, r2) + f(a2, r2) for random a1, a2 and rests r1, r2
    (some values missing): 0 when the model is additive in a and the rest."""
    def rows(n):
        X = rng.uniform(-3.5, 3.5, size=(n, 3))
        X[rng.random(X.shape) < 0.1] = np.nan
        return X
    a, r = rows(2 * n_pairs), rows(2 * n_pairs)
    a1, a2, r1, r2 = a[:n_pairs], a[n_pairs:], r[:n_pairs], r[n_pairs:]

    def f(x_a, x_r):
        X = np.column_stack([x_a[:, 0], x_r[:, 1], x_r[:, 2]])
        return model.predict(pd.DataFrame(X, columns=COLUMNS), output_margin=True)
    return f(a1, r1) - f(a2, r1) - f(a1, r2) + f(a2, r2)


@pytest.mark.parametrize("constraints", [[["a"], ["b", "c"]], [[0], [1, 2]], '[[0], ["b", 2]]'])
def test_interaction_constraints_make_the_model_additive(constraints):
    X, y = wavy_data()
    params = dict(n_estimators=20, max_depth=5)
    model = DaskBoostRegressor(interaction_constraints=constraints, **params).fit(X, y)
    rng = np.random.default_rng(5)
    assert np.abs(interaction(model, rng)).max() <= 1e-9
    free = DaskBoostRegressor(**params).fit(X, y)
    assert np.abs(interaction(free, rng)).max() > 0.1


def paths(tree, node=0, used=frozenset()):
    """The set of features used on each root-to-leaf path of a tree."""
    if tree.feature[node] < 0:
        return [used]
    used = used | {int(tree.feature[node])}
    return paths(tree, tree.left[node], used) + paths(tree, tree.right[node], used)


@pytest.mark.parametrize("growth", [
    dict(grow_policy="lossguide", max_leaves=12),
    dict(colsample_bynode=0.6, random_state=3),  # ANDed with column sampling
])
def test_every_path_stays_in_one_interaction_set(growth):
    # overlapping sets; feature 2 in none of them may only be used alone
    X, y = wavy_data()
    X["d"] = X["a"] * X["c"]
    sets = [{0, 1}, {1, 3}]
    model = DaskBoostRegressor(n_estimators=15, max_depth=4, **growth,
                               interaction_constraints=[[0, 1], ["b", "d"]])
    model.fit(X, y + X["d"].fillna(0).to_numpy())
    used = [p for tree in model.get_booster().trees for p in paths(tree)]
    assert all(len(p) == 1 or any(p <= s for s in sets) for p in used)
    assert {0, 1} in used and {1, 3} in used and {2} in used


def test_monotone_split_kernel_rejects_a_split_against_the_direction():
    # one feature, values 0..3 (lambda 1): the best split, {0} | {1, 2, 3}, has weights
    # 2 > -0.25; the best increasing one is {0, 1, 2} | {3}: 0 <= 1.5
    g = np.array([-4.0, 2.0, 2.0, -3.0])
    hist = np.zeros((1, 5, 2))  # one node, one feature: 4 value bins, then missing
    hist[0, :4, 0], hist[0, :4, 1] = g, 1.0
    sums = np.array([[g.sum(), 4.0]])
    args = (np.array([0, 5]), np.ones((1, 1), dtype=np.bool_))
    reg = (1.0, 0.0, 0.0, 0.0, 0.0)
    free = find_splits(hist, sums, *args, *reg)
    assert free[1][0] == 0 and free[2][0] == 0
    np.testing.assert_allclose(free[0][0], 8.25 - 1.8)
    bounds = np.array([[-np.inf, np.inf]])
    up = find_splits_monotone(hist, sums, bounds, *args, np.array([1], np.int8), *reg)
    assert up[1][0] == 0 and up[2][0] == 2
    np.testing.assert_allclose(up[0][0], 4.5 - 1.8)
    down = find_splits_monotone(hist, sums, bounds, *args, np.array([-1], np.int8), *reg)
    assert down[1][0] == 0 and down[2][0] == 0
    # bounds [-0.1, 0.1] clip the weights (parent's 0.6 too): scores at the clipped
    # weights, -(2 G w + (H + lambda) w^2); {0, 1} | {2, 3} has equal weights 0.1 but
    # loses; {0, 1, 2} | {3} (weights 0 and 0.1) gains 0.58 - 0.55
    tight = find_splits_monotone(hist, sums, np.array([[-0.1, 0.1]]), *args,
                                 np.array([1], np.int8), *reg)
    assert tight[1][0] == 0 and tight[2][0] == 2
    np.testing.assert_allclose(tight[0][0], 0.58 - 0.55)


def test_monotone_split_may_send_only_the_missing_rows_left():
    # present values 0..3 weigh 0.8 together, the missing rows -1.5: increasing, the
    # only split keeping both is missing left, every present value right (bin -1), as
    # xgboost's backward scan finds it (the same partition with missing right is refused)
    hist = np.zeros((1, 5, 2))  # one node, one feature: 4 value bins, then missing
    hist[0, :4] = (-1.0, 1.0)
    hist[0, 4] = (3.0, 1.0)
    sums = np.array([[-1.0, 5.0]])
    gain, feature, bin_, default_left, left_sums = find_splits_monotone(
        hist, sums, np.array([[-np.inf, np.inf]]), np.array([0, 5]),
        np.ones((1, 1), dtype=np.bool_), np.array([1], np.int8), 1.0, 0.0, 0.0, 0.0, 0.0)
    assert (feature[0], bin_[0], default_left[0]) == (0, -1, True)
    np.testing.assert_allclose(left_sums[0], [3.0, 1.0])
    np.testing.assert_allclose(gain[0], 3.2 + 4.5 - 1 / 6)


def test_constraints_round_trip_through_a_model_file(tmp_path):
    X, y = wavy_data()
    model = DaskBoostRegressor(n_estimators=5, monotone_constraints={"a": 1, "b": -1},
                               interaction_constraints=(("a",), ("b", 2))).fit(X, y)
    model.save_model(tmp_path / "m.json")
    loaded = load_estimator(tmp_path / "m.json")
    assert loaded.monotone_constraints == {"a": 1, "b": -1}
    assert loaded.interaction_constraints == [["a"], ["b", 2]]
    refit = DaskBoostRegressor(**loaded.get_params()).fit(X, y)
    assert refit.get_booster().to_dict() == model.get_booster().to_dict()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # a file without constraints (as every file before them) loads them as None
    DaskBoostRegressor(n_estimators=2).fit(X, y).save_model(tmp_path / "free.json")
    assert b"constraints" not in (tmp_path / "free.json").read_bytes()
    model.load_model(tmp_path / "free.json")
    assert model.monotone_constraints is None and model.interaction_constraints is None
    for form in ["(1,-1,0)", (1, -1, 0)]:
        model.set_params(monotone_constraints=form).save_model(tmp_path / "s.json")
        assert load_estimator(tmp_path / "s.json").monotone_constraints in ("(1,-1,0)",
                                                                            [1, -1, 0])


def test_equal_to_xgboost_on_discrete_data():
    xgb = pytest.importorskip("xgboost")
    from test_xgboost_parity import XGB_COMMON, agreement, discrete_data
    X, signal, rng = discrete_data(3)
    y = signal - 0.5 * np.cos(2 * np.nan_to_num(X[:, 1])) + rng.normal(0, 0.3, len(signal))
    columns = [f"x{i}" for i in range(X.shape[1])]
    X = pd.DataFrame(X, columns=columns)
    X_test = pd.DataFrame(discrete_data(103)[0], columns=columns)
    params = dict(n_estimators=12, max_depth=4, learning_rate=0.3, reg_alpha=0.5,
                  max_delta_step=0.5, monotone_constraints={"x0": 1, "x1": -1, "x3": 1},
                  interaction_constraints=[["x0", "x1"], ["x1", "x2", "x3"]])
    ours = DaskBoostRegressor(**params).fit(X, y)
    theirs = xgb.XGBRegressor(**params, base_score=float(np.mean(y)), **XGB_COMMON).fit(X, y)
    assert agreement(ours.predict(X_test), theirs.predict(X_test)) >= 0.99


CONSTRAINED = dict(n_estimators=6, max_depth=4, monotone_constraints={"a": 1, "b": -1},
                   interaction_constraints=[["a"], ["b", "c"]])


def saved_constrained_model(path):
    X, y = wavy_data()
    model = DaskBoostRegressor(**CONSTRAINED).fit(dd.from_pandas(X, npartitions=4),
                                                  dd.from_pandas(pd.Series(y), npartitions=4))
    model.save_model(path)
    return path.read_bytes()


def test_constrained_models_are_byte_identical_across_schedulers(tmp_path):
    with dask.config.set(scheduler="threads"):
        threaded = saved_constrained_model(tmp_path / "threads.json")
    with dask.config.set(scheduler="synchronous"):
        synchronous = saved_constrained_model(tmp_path / "sync.json")
    assert threaded == synchronous
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        on_cluster = saved_constrained_model(tmp_path / "cluster.json")
    assert on_cluster == threaded


def test_command_line_takes_the_constraints(tmp_path, capsys):
    from daskboost.cli import main
    X, y = wavy_data(n=1500)
    X.assign(y=y).to_parquet(tmp_path / "data.parquet")
    model_path = tmp_path / "m.json"
    common = ["train", str(tmp_path / "data.parquet"), "--label", "y", "--quiet",
              "--scheduler", "synchronous", "--param", "n_estimators=5"]
    assert main(common + ["--param", "monotone_constraints=(1,-1,0)",
                          "--param", 'interaction_constraints=[["a"], ["b", "c"]]',
                          "--output", str(model_path)]) == 0
    model = load_estimator(model_path)
    assert model.monotone_constraints == "(1,-1,0)"
    assert model.interaction_constraints == [["a"], ["b", "c"]]
    assert (grid_steps(model, 0) >= 0).all() and (grid_steps(model, 1) <= 0).all()
    assert main(common + ["--param", 'monotone_constraints={"zz": 1}',
                          "--output", str(tmp_path / "bad.json")]) != 0
    assert "monotone_constraints={'zz': 1} names columns not in X: ['zz']" in \
        capsys.readouterr().err
    assert not (tmp_path / "bad.json").exists()


def test_monotone_constraints_with_categorical_features_are_refused_before_any_pass():
    # the categorical split search does not bound child weights: the combination is
    # refused up front, naming the categorical features
    X = pd.DataFrame({"a": np.arange(40.0), "city": ["x", "y"] * 20})
    y = np.arange(40.0)
    with pytest.raises(ValueError, match=r"monotone_constraints=.*categorical features \['city'\]"):
        DaskBoostRegressor(n_estimators=2, monotone_constraints={"a": 1}).fit(X, y)
    # interaction constraints work with categorical features (they only mask features)
    model = DaskBoostRegressor(n_estimators=2, interaction_constraints=[["a"], ["city"]])
    assert np.isfinite(model.fit(X, y).predict(X)).all()
