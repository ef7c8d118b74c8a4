"""Custom objectives, continued training and the tree methods."""

import json

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor

xgb = pytest.importorskip("xgboost")


def discrete(seed=0, n=4000):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n, 4)).astype(np.float64)
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + rng.normal(0, 0.3, n)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


# ---- custom objectives -----------------------------------------------------------------

def squared_error(y, pred):
    return pred - y, np.ones_like(pred)


def test_custom_objective_equals_the_builtin_loss():
    X, y = discrete()
    base = float(np.mean(y))
    custom = DaskBoostRegressor(objective=squared_error, n_estimators=8, base_score=base).fit(X, y)
    builtin = DaskBoostRegressor(n_estimators=8, base_score=base).fit(X, y)
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=0, atol=1e-6)


def test_custom_multiclass_objective_gets_one_column_per_class():
    X, _ = discrete(1)
    y = np.arange(len(X)) % 3
    seen = []

    def softmax_loss(y_true, pred):
        seen.append(pred.shape)
        p = np.exp(pred - pred.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        onehot = np.eye(3)[y_true.astype(int)]
        return p - onehot, 2 * p * (1 - p)

    custom = DaskBoostClassifier(objective=softmax_loss, n_estimators=4).fit(X, y)
    builtin = DaskBoostClassifier(n_estimators=4, base_score=0.0).fit(X, y)
    assert all(len(shape) == 2 and shape[1] == 3 for shape in seen)
    np.testing.assert_allclose(custom.predict_proba(X), builtin.predict_proba(X), atol=1e-5)


def test_negative_hessians_train_as_in_xgboost():
    """xgboost's own tutorial objective (squared log error) has negative hessians where a
    prediction is far above its label: they are summed as given, and a node whose sum is
    not positive gets weight 0 (xgboost's CalcWeight).  No base_score: both start from
    a margin of 0.5."""
    import daskboost
    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, size=(4000, 4)).astype(np.float64)
    y = np.exp(0.2 * X[:, 0] + rng.normal(0, 0.5, 4000)) - 0.5
    y[rng.random(4000) < 0.05] *= 20
    X[rng.random(X.shape) < 0.1] = np.nan
    negative = []

    def squared_log(predt, dtrain):
        label = dtrain.get_label()
        predt = np.maximum(predt, -1 + 1e-6)
        hess = (np.log1p(label) - np.log1p(predt) + 1) / (predt + 1) ** 2
        negative.append(int((hess < 0).sum()))
        return (np.log1p(predt) - np.log1p(label)) / (predt + 1), hess

    params = {"tree_method": "hist", "max_depth": 4, "eta": 0.5, "min_child_weight": 0.5}
    theirs = xgb.train(params, xgb.DMatrix(X, y), 15, obj=squared_log)
    ours = daskboost.train(params, daskboost.DMatrix(X, y), 15, obj=squared_log)
    assert sum(negative[:15]) > 500 and negative[:15] == negative[15:]
    np.testing.assert_allclose(ours.predict(daskboost.DMatrix(X), output_margin=True),
                               theirs.predict(xgb.DMatrix(X), output_margin=True),
                               rtol=0, atol=1e-5)


@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_a_custom_objective_starts_where_xgboosts_does(n_classes):
    """xgboost's default base_score, 0.5, in the output space of the objective it puts in
    the function's place: a margin of 0.5, but 0 (the logit of 0.5) for a binary
    classifier."""
    X, y = discrete(n=600)
    X = np.nan_to_num(X)
    if n_classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))

    def constant_push(y_true, y_pred):
        return np.full_like(y_pred, 0.1), np.ones_like(y_pred)

    ours = (DaskBoostClassifier if n_classes else DaskBoostRegressor)(
        objective=constant_push, n_estimators=1).fit(X, y)
    theirs = (xgb.XGBClassifier if n_classes else xgb.XGBRegressor)(
        objective=constant_push, n_estimators=1).fit(X, y)
    np.testing.assert_allclose(
        ours.get_booster().predict(X, output_margin=True),
        theirs.get_booster().predict(xgb.DMatrix(X), output_margin=True), rtol=0, atol=1e-6)


@pytest.mark.parametrize("bad,match", [
    (lambda y, p: (p - y,), r"must return \(grad, hess\)"),
    (lambda y, p: (p - y, np.ones(3)), r"hess with shape \(3,\)"),
    (lambda y, p: (p - y, np.full_like(p, np.nan)), r"non-finite hess"),
])
def test_custom_objective_errors_are_clear(bad, match):
    X, y = discrete()
    model = DaskBoostRegressor(objective=bad, n_estimators=2)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        model.get_booster()


# ---- continued training ----------------------------------------------------------------

@pytest.mark.parametrize("as_what", ["estimator", "booster", "path"])
def test_continuing_equals_training_in_one_go(tmp_path, as_what):
    X, y = discrete(2)
    params = dict(subsample=0.7, colsample_bytree=0.75, random_state=4, max_depth=3)
    full = DaskBoostRegressor(n_estimators=9, **params).fit(X, y)
    first = DaskBoostRegressor(n_estimators=4, **params).fit(X, y)
    previous = {"estimator": first, "booster": first.get_booster()}.get(as_what)
    if as_what == "path":
        previous = tmp_path / "first.json"
        first.save_model(previous)
    more = DaskBoostRegressor(n_estimators=5, **params).fit(X, y, xgb_model=previous)
    assert len(more.get_booster().trees) == 9
    np.testing.assert_array_equal(more.predict(X), full.predict(X))


def test_continuing_checks_objective_and_features():
    X, y = discrete(3)
    first = DaskBoostRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="xgb_model was trained with objective='reg:squarederror'"):
        DaskBoostRegressor(objective="reg:absoluteerror", n_estimators=1).fit(X, y, xgb_model=first)
    with pytest.raises(ValueError, match="xgb_model was trained on the features"):
        DaskBoostRegressor(n_estimators=1).fit(X[:, :3], y, xgb_model=first)
    with pytest.raises(TypeError, match="xgb_model must be"):
        DaskBoostRegressor(n_estimators=1).fit(X, y, xgb_model=42)


# ---- tree methods ----------------------------------------------------------------------

def test_exact_method_matches_xgboost_exact_greedy():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(5000, 4)) * 40)          # ~300 distinct values per feature
    y = X[:, 0] / 40 + np.sin(X[:, 1] / 20) + rng.normal(0, 0.2, 5000)
    ours = DaskBoostRegressor(n_estimators=6, max_depth=4, tree_method="exact").fit(X, y)
    theirs = xgb.XGBRegressor(n_estimators=6, max_depth=4, tree_method="exact",
                              base_score=float(np.mean(y))).fit(X, y)
    assert np.mean(np.abs(ours.predict(X) - theirs.predict(X)) < 1e-4) >= 0.99


def test_exact_method_refuses_too_many_distinct_values():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(70000, 2))
    with pytest.raises(ValueError, match="tree_method='exact'.*up to 65535; feature 0 has more"):
        DaskBoostRegressor(tree_method="exact", n_estimators=1).fit(X, X[:, 0])


def test_approx_equals_hist_for_unit_hessians():
    # squared error: hessians are the sample weights, so the re-sketch proposes the same cuts
    X, y = discrete(7)
    X = X + np.random.default_rng(7).normal(0, 0.01, X.shape)   # many distinct values
    hist = DaskBoostRegressor(n_estimators=5, max_bin=16).fit(X, y)
    approx = DaskBoostRegressor(n_estimators=5, max_bin=16, tree_method="approx").fit(X, y)
    np.testing.assert_allclose(approx.predict(X), hist.predict(X), rtol=1e-12)


def test_approx_reproposes_cuts_with_hessian_weights():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(8000, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.logistic(size=8000) > 0).astype(int)
    frame = pd.DataFrame(X, columns=list("abc"))
    parts = dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
    hist = DaskBoostClassifier(n_estimators=6, max_bin=8).fit(*parts)
    approx = DaskBoostClassifier(n_estimators=6, max_bin=8, tree_method="approx").fit(
        *parts, eval_set=[parts])
    # different proposals give different thresholds after the first round ...
    assert not np.array_equal(hist.get_booster().trees[3].threshold,
                              approx.get_booster().trees[3].threshold)
    # ... and the eval margins, kept per partition through the re-binning, stay exact
    p = approx.predict_proba(frame)[:, 1]
    logloss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert approx.evals_result()["validation_0"]["logloss"][-1] == pytest.approx(logloss, rel=1e-9)
    assert abs(logloss - (-np.mean(y * np.log(hist.predict_proba(frame)[:, 1])
                                   + (1 - y) * np.log(hist.predict_proba(frame)[:, 0])))) < 0.02


def test_unknown_tree_method():
    X, y = discrete()
    with pytest.raises(ValueError, match=r"tree_method='gpu_hist' is not supported; valid: 'hist'"):
        DaskBoostRegressor(tree_method="gpu_hist").fit(X, y)


# ---- influence trimming ----------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.1, 0.25])
def test_trimming_leaves_out_the_lightest_hessians(fraction):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(6000, 3))
    y = (X[:, 0] + rng.logistic(size=6000) > 0).astype(int)
    w = rng.uniform(0.1, 10.0, 6000)          # round 0: hessian = w * p (1 - p), p constant
    model = DaskBoostClassifier(n_estimators=1, trim_fraction=fraction).fit(X, y, sample_weight=w)
    p = 1 / (1 + np.exp(-model.get_booster().base_margin[0]))
    hess = (w * max(p * (1 - p), 1e-16)).astype(np.float32).astype(np.float64)
    kept = np.sort(hess)[::-1]
    expected = kept[np.cumsum(kept[::-1])[::-1] > fraction * hess.sum()].sum()
    cover = model.get_booster().trees[0].cover[0]
    assert cover == pytest.approx((1 - fraction) * hess.sum(), rel=0.01)
    assert cover == pytest.approx(expected, rel=0.01)


def test_trim_fraction_zero_changes_nothing_and_bad_values_fail():
    X, y = discrete(10)
    a = DaskBoostRegressor(n_estimators=3, trim_fraction=0.0).fit(X, y)
    b = DaskBoostRegressor(n_estimators=3).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    with pytest.raises(ValueError, match=r"trim_fraction=1\.0 must be in \[0, 1\)"):
        DaskBoostRegressor(trim_fraction=1.0).fit(X, y)


# ---- base_margin -------------------------------------------------------------------------

def test_base_margin_matches_xgboost():
    X, y = discrete(11)
    margin = np.sin(np.nan_to_num(X[:, 2]))            # a per-row offset the trees build on
    ours = DaskBoostRegressor(n_estimators=6, max_depth=3).fit(X, y, base_margin=margin)
    dtrain = xgb.DMatrix(X, y, base_margin=margin)
    theirs = xgb.train(dict(tree_method="hist", max_depth=3, eta=0.3, max_bin=256), dtrain, 6)
    dtest = xgb.DMatrix(X, base_margin=margin)
    agree = np.abs(ours.predict(X, base_margin=margin) - theirs.predict(dtest)) < 1e-4
    assert agree.mean() >= 0.99
    # without the offset the model starts from its constant instead
    assert not np.allclose(ours.predict(X), ours.predict(X, base_margin=margin))


def test_base_margin_on_dask_partitions_and_for_multiclass():
    X, _ = discrete(12)
    y = np.arange(len(X)) % 3
    offsets = np.random.default_rng(0).normal(size=(len(X), 3))
    frame = pd.DataFrame(X, columns=list("abcd"))
    in_memory = DaskBoostClassifier(n_estimators=3).fit(X, y, base_margin=offsets)
    on_dask = DaskBoostClassifier(n_estimators=3).fit(
        dd.from_pandas(frame, npartitions=1), dd.from_pandas(pd.Series(y), npartitions=1),
        base_margin=dd.from_pandas(pd.DataFrame(offsets), npartitions=1))
    np.testing.assert_allclose(on_dask.predict(X, output_margin=True),
                               in_memory.predict(X, output_margin=True), rtol=1e-9)
    np.testing.assert_allclose(on_dask.predict_proba(X, base_margin=offsets),
                               in_memory.predict_proba(X, base_margin=offsets), rtol=1e-9)


def test_bad_base_margin_is_rejected():
    X, y = discrete(13)
    with pytest.raises(ValueError, match=r"base_margin has shape \(4000, 2\); expected \(4000, 1\)"):
        DaskBoostRegressor(n_estimators=1).fit(X, y, base_margin=np.zeros((len(X), 2)))
    bad = np.zeros(len(X))
    bad[5] = np.nan
    with pytest.raises(ValueError, match="base_margin contains NaN or inf"):
        DaskBoostRegressor(n_estimators=1).fit(X, y, base_margin=bad)


# ---- checkpoints -------------------------------------------------------------------------

class FlakySquaredError:
    """Squared error that fails once it has been called ``fail_at`` times (a crash)."""

    def __init__(self, fail_at=None):
        self.calls, self.fail_at = 0, fail_at

    def __call__(self, y, pred):
        self.calls += 1
        if self.fail_at is not None and self.calls >= self.fail_at:
            raise RuntimeError("worker lost")
        return pred - y, np.ones_like(pred)


def test_interrupted_training_resumes_from_its_checkpoint(tmp_path):
    X, y = discrete(14)
    path = tmp_path / "checkpoint.json"
    params = dict(n_estimators=12, subsample=0.8, colsample_bynode=0.75, random_state=5,
                  checkpoint_path=path, checkpoint_interval=3, base_score=0.0)
    # one partition: the objective is called once per round; round 7 crashes
    crashing = DaskBoostRegressor(objective=FlakySquaredError(fail_at=7), **params)
    with pytest.raises(RuntimeError, match="worker lost"):
        crashing.fit(X, y)
    assert len(json.loads(path.read_text())["trees"]) == 6      # rounds 3 and 6 were saved
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    resumed = DaskBoostRegressor(objective=FlakySquaredError(), **params).fit(X, y, resume=True)
    uninterrupted = DaskBoostRegressor(objective=FlakySquaredError(),
                                       **{**params, "checkpoint_path": None}).fit(X, y)
    assert len(resumed.get_booster().trees) == 12
    np.testing.assert_array_equal(resumed.predict(X), uninterrupted.predict(X))


def test_checkpoint_errors(tmp_path):
    X, y = discrete(15)
    with pytest.raises(ValueError, match="resume=True needs checkpoint_path"):
        DaskBoostRegressor(n_estimators=2).fit(X, y, resume=True)
    with pytest.raises(ValueError, match="does not exist or is not writable"):
        DaskBoostRegressor(n_estimators=2, checkpoint_path=tmp_path / "no" / "c.json").fit(X, y)
    with pytest.raises(ValueError, match=r"checkpoint_interval=0 must be >= 1"):
        DaskBoostRegressor(n_estimators=2, checkpoint_path=tmp_path / "c.json",
                           checkpoint_interval=0).fit(X, y)
