"""A tree's levels grown in one compiled call (``levels_in_place``) where the fit's rows
are one partition, or a few small ones, in this process: the same model, byte for byte,
as the level loop's passes; taken only where it applies."""

import functools

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import daskboost.sklearn
from daskboost import DaskBoostClassifier, DaskBoostRegressor, blockstore, partition, runtime


@pytest.fixture
def in_place_calls(monkeypatch):
    """How many trees grew their levels in place since the fixture started."""
    calls = []
    grow = runtime.grow_in_place

    def counted(states, step):
        calls.append(len(states))
        return grow(states, step)
    monkeypatch.setattr(runtime, "grow_in_place", counted)
    return calls


def _level_passes_only(monkeypatch):
    """From now on, every fit grows its trees with the level loop's passes that visit
    every row, without row runs (so the next round's first pass also adds the leaf
    values from the node ids, not from the runs)."""
    monkeypatch.setattr(runtime.Runtime, "grows_in_place", lambda self, states: False)
    monkeypatch.setattr(partition, "row_runs_of", lambda state: None)


def _saved(model, tmp_path, name):
    path = tmp_path / f"{name}.json"
    model.save_model(path)
    return path.read_bytes()


def _numeric(n, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).astype(np.float32)
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * (X[:, 3] > 0) + rng.normal(0, 0.3, n)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def _categorical(n, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        "few": pd.Categorical(rng.choice(list("abc"), n)),
        "many": pd.Categorical(rng.choice([f"c{i}" for i in range(40)], n)),
        "z": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
    })
    effect = {f"c{i}": (i % 7) - 3.0 for i in range(40)}
    y = (frame["x"] + frame["many"].map(effect).astype(float)
         + (frame["few"] == "b") * 2.0 + rng.normal(0, 0.3, n))
    return frame, y.to_numpy()


BASE = dict(n_estimators=6, max_depth=5, learning_rate=0.3)

CASES = {
    # 3,000 rows: the level kernels on native threads; 1,500: the one-thread kernels
    "numeric, quantized": (DaskBoostRegressor, dict(quantized_grad=True), _numeric(3000)),
    "numeric, float, missing values": (DaskBoostRegressor, dict(quantized_grad=False),
                                       _numeric(3000, missing=0.1)),
    "numeric, one thread's kernels": (DaskBoostRegressor, dict(quantized_grad=False),
                                      _numeric(1500)),
    "numeric, quantized, one thread's kernels": (DaskBoostRegressor,
                                                 dict(quantized_grad=True), _numeric(1500)),
    "categorical": (DaskBoostRegressor, dict(max_cat_to_onehot=4), _categorical(3000)),
    "categorical, quantized": (DaskBoostRegressor, dict(quantized_grad=True),
                               _categorical(3000)),
    "categorical, one thread's kernels": (DaskBoostRegressor, dict(), _categorical(1500)),
    # binned again every round, by the hessians (a classifier's differ from row to row):
    # the rows' cells (``histogram.cells_of``) are of the codes they were made from
    "categorical, approx": (DaskBoostClassifier, dict(tree_method="approx"),
                            _categorical(3000)),
    "regularised and limited": (DaskBoostRegressor,
                                dict(reg_alpha=2.0, max_delta_step=0.4, gamma=1.0,
                                     min_child_weight=20.0, max_leaves=12),
                                _numeric(3000, seed=1)),
    "sampled": (DaskBoostRegressor, dict(subsample=0.7, colsample_bytree=0.6),
                _numeric(3000, seed=2)),
    "binary": (DaskBoostClassifier, dict(), _numeric(3000, seed=3)),
    "adaptive leaves": (DaskBoostRegressor, dict(objective="reg:absoluteerror"),
                        _numeric(3000, seed=4)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_in_place_levels_grow_the_model_the_level_passes_grow(case, tmp_path, monkeypatch,
                                                              in_place_calls):
    cls, params, (X, y) = CASES[case]
    if cls is DaskBoostClassifier:
        y = (y > np.median(y)).astype(int)
    in_place = _saved(cls(**BASE, **params).fit(X, y), tmp_path, "in_place")
    assert len(in_place_calls) == BASE["n_estimators"]  # every tree grew in place
    _level_passes_only(monkeypatch)
    passes = _saved(cls(**BASE, **params).fit(X, y), tmp_path, "passes")
    assert len(in_place_calls) == BASE["n_estimators"]
    assert in_place == passes


def test_in_place_levels_with_an_eval_set_and_weights(tmp_path, monkeypatch, in_place_calls):
    X, y = _numeric(4000, seed=5)
    weights = np.random.default_rng(5).uniform(0.2, 2.0, len(y))

    def fit():
        model = DaskBoostRegressor(n_estimators=40, max_depth=4, learning_rate=0.5,
                                   early_stopping_rounds=3)
        return model.fit(X[:3000], y[:3000], sample_weight=weights[:3000],
                         eval_set=[(X[3000:], y[3000:])])

    in_place = fit()
    assert len(in_place_calls) == len(in_place.get_booster().trees) > 0
    _level_passes_only(monkeypatch)
    passes = fit()
    assert in_place.best_iteration == passes.best_iteration
    assert _saved(in_place, tmp_path, "a") == _saved(passes, tmp_path, "b")


@pytest.mark.parametrize("params", [
    dict(grow_policy="lossguide", max_leaves=8),
    dict(colsample_bylevel=0.5),
    dict(colsample_bynode=0.5),
    dict(monotone_constraints=(1, 0, 0, 0, 0, 0)),
    dict(interaction_constraints=[[0, 1], [2, 3, 4, 5]]),
], ids=str)
def test_trees_that_cannot_grow_in_place_take_the_level_passes(params, in_place_calls):
    X, y = _numeric(3000)
    model = DaskBoostRegressor(**BASE, **params).fit(X, y)
    assert len(model.get_booster().trees) == BASE["n_estimators"]
    assert in_place_calls == []


@pytest.mark.parametrize("kind, n_partitions, rows", [
    ("float", 3, 2500), ("float", 7, 1500), ("quantized", 6, 1500), ("categorical", 5, 2500)])
def test_several_small_partitions_grow_in_place(kind, n_partitions, rows, tmp_path,
                                                monkeypatch, in_place_calls):
    # partitions whose passes run one after the other with native threads in each kernel
    # (small ones: ``thread_passes.pass_on_native_threads``) grow in one compiled call,
    # their histograms added in the fixed order of ``reduction`` (float sums: another
    # order gives other bytes: weighted float gradients use all of float64's digits);
    # 2,500-row partitions: kernels on native threads
    n = rows * n_partitions
    weights = np.random.default_rng(n_partitions).uniform(0.5, 1.5, n)
    if kind == "categorical":
        frame, y = _categorical(n)
        X, y = dd.from_pandas(frame, chunksize=rows), dd.from_pandas(pd.Series(y), chunksize=rows)
        weights = dd.from_pandas(pd.Series(weights), chunksize=rows)
    else:
        X, y = _numeric(n, seed=n_partitions)
        X, y = da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=rows)
        weights = da.from_array(weights, chunks=rows)
    if kind == "quantized":  # (rounded gradients: integer sums, the same in any order)
        params, weights = dict(quantized_grad=True), None
    else:
        params = dict(quantized_grad=False)

    def fit():
        model = DaskBoostRegressor(**BASE, **params).fit(X, y, sample_weight=weights)
        return _saved(model, tmp_path, "model")

    in_place = fit()
    assert in_place_calls == [n_partitions] * BASE["n_estimators"]
    _level_passes_only(monkeypatch)
    assert fit() == in_place


def test_large_partitions_take_the_level_passes(in_place_calls):
    # three partitions of 40,000 rows on two threads: their passes run on the pool's
    # runners; two such partitions (no more than the threads) grow in place
    X, y = _numeric(120_000)
    with dask.config.set(num_workers=2):
        DaskBoostRegressor(n_estimators=2, max_depth=3).fit(
            da.from_array(X, chunks=(40_000, -1)), da.from_array(y, chunks=40_000))
        assert in_place_calls == []
        DaskBoostRegressor(n_estimators=2, max_depth=3).fit(
            da.from_array(X[:80_000], chunks=(40_000, -1)),
            da.from_array(y[:80_000], chunks=40_000))
    assert in_place_calls == [2, 2]


SEVERAL_TREES = {
    "multiclass, float": dict(quantized_grad=False),
    "multiclass, quantized": dict(quantized_grad=True),
    "multiclass, sampled": dict(subsample=0.7, colsample_bytree=0.6),
    "multiclass, categorical": dict(max_cat_to_onehot=4),
}


@pytest.mark.parametrize("case", list(SEVERAL_TREES))
def test_rounds_of_several_trees_grow_each_tree_in_place(case, tmp_path, monkeypatch,
                                                          in_place_calls):
    # a round's K trees grow one after the other, each in one compiled call from its
    # root's histogram (its row of the per-row arrays, its own runs): the same model as
    # the level passes growing the K trees together
    X, y = _categorical(3000) if case.endswith("categorical") else _numeric(3000, seed=6)
    classes = np.digitize(y, np.quantile(y, [0.3, 0.7]))  # three trees a round

    def fit():
        model = DaskBoostClassifier(**BASE, **SEVERAL_TREES[case]).fit(X, classes)
        return _saved(model, tmp_path, "model")

    in_place = fit()
    assert len(in_place_calls) == 3 * BASE["n_estimators"]
    _level_passes_only(monkeypatch)
    assert fit() == in_place


@pytest.mark.parametrize("quantized", [False, True])
def test_cross_validation_grows_its_folds_trees_in_place(quantized, monkeypatch,
                                                         in_place_calls):
    # cv's nfold trees a round grow in place too: the same frame and folds' models
    from daskboost import TrainingCallback, cv

    class Keep(TrainingCallback):
        def after_training(self, model):
            self.models = [pack.bst.to_dict() for pack in model.cvfolds]
            return model

    X, y = _numeric(3000, seed=7, missing=0.05)

    def run():
        keep = Keep()
        frame = cv(dict(BASE, quantized_grad=quantized), X, y, nfold=4,
                   num_boost_round=BASE["n_estimators"], seed=2, callbacks=[keep])
        return frame, keep.models

    frame, models = run()
    assert len(in_place_calls) == 4 * BASE["n_estimators"]
    _level_passes_only(monkeypatch)
    frame_passes, models_passes = run()
    pd.testing.assert_frame_equal(frame, frame_passes, rtol=0, atol=0)
    assert models == models_passes


def test_a_partition_in_several_blocks_takes_the_level_passes(tmp_path, monkeypatch,
                                                              in_place_calls):
    # no budget: the codes go to disk in blocks of 1,000 rows, the per-row arrays to row
    # blocks, and no in-place pass is even tried
    small = functools.partial(blockstore.StoreConfig, block_rows=1000)
    monkeypatch.setattr(daskboost.sklearn, "StoreConfig", small)
    monkeypatch.setattr(blockstore, "StoreConfig", small)
    X, y = _numeric(6000)

    def fit():
        model = DaskBoostRegressor(**BASE, memory_budget="0MB", cache_dir=str(tmp_path))
        return _saved(model.fit(X, y), tmp_path, "model")

    in_blocks = fit()
    assert in_place_calls == []
    _level_passes_only(monkeypatch)
    assert fit() == in_blocks


def test_in_place_under_a_budget_that_holds_the_partition(tmp_path, monkeypatch,
                                                          in_place_calls):
    # codes held by the block store, in memory: the rows' runs and cells take their
    # bytes from the budget; the same model as the level passes and as the default
    # budget's fit
    X, y = _categorical(3000)

    def fit(**kw):
        model = DaskBoostRegressor(**BASE, **kw)
        return _saved(model.fit(X, y), tmp_path, "model")

    budgeted = fit(memory_budget="1GB", cache_dir=str(tmp_path))
    assert len(in_place_calls) == BASE["n_estimators"]
    assert fit() == budgeted
    _level_passes_only(monkeypatch)
    assert fit(memory_budget="1GB", cache_dir=str(tmp_path)) == budgeted
