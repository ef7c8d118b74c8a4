"""Quantized gradients (``quantized_grad=True``): the rounding, the packed histograms, and
fits that keep their accuracy and their invariances."""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, DaskBoostRegressor, histogram, quantize
from daskboost.histogram import build_histograms
from daskboost.partition import no_splits


def gradients(n, seed=0, trees=1):
    rng = np.random.default_rng(seed)
    grad = rng.standard_normal((trees, n)).astype(np.float32)
    hess = rng.uniform(0.05, 0.25, (trees, n)).astype(np.float32)
    return grad, hess


def unpacked(packed):
    """(q_g, q_h) of packed values: rows (``quantize.row_dtype``, the two halves of
    their bits) or int64 sums of them (``q_g * 2**32 + q_h``)."""
    packed = np.asarray(packed)
    bits = packed.dtype.itemsize * 4
    packed = packed.astype(np.int64)
    h = ((packed + 2 ** (bits - 1)) & (2 ** bits - 1)) - 2 ** (bits - 1)
    return (packed - h) >> bits, h


def quantized(grad, hess, n_bins, keys, row_offset=0, maxima=None):
    """(packed, scales) as a fit has them: scales from the largest values of all rows."""
    maxima = quantize.gradient_maxima(grad, hess) if maxima is None else maxima
    scales = quantize.scales_from_maxima(maxima, n_bins)
    return quantize.quantize(grad, hess, scales, keys, row_offset, n_bins), scales


def test_rounding_stays_within_one_quantum_and_is_unbiased():
    grad, hess = gradients(200_000)
    packed, scales = quantized(grad, hess, 8, [quantize.tree_key(3, 5, 0)])
    q_g, q_h = unpacked(packed[0])
    g, h = grad[0] / scales[0, 0], hess[0] / scales[0, 1]
    # g scaled into [-4, 4], h into [0, 8]; each rounded to one of its two neighbours
    assert np.abs(q_g).max() <= 4 and q_h.min() >= 0 and q_h.max() <= 8
    assert np.all((q_g == np.floor(g)) | (q_g == np.floor(g) + 1))
    assert np.all((q_h == np.floor(h)) | (q_h == np.floor(h) + 1))
    # stochastic rounding: E[q] = x, also for the values just above an integer (which
    # rounding to the nearest integer would always round down). The mean error of m
    # independent roundings, each of standard deviation <= 0.5, is within 5 standard
    # errors of 0
    for q, x in ((q_g, g), (q_h, h)):
        low = (x - np.floor(x) > 0.1) & (x - np.floor(x) < 0.4)
        assert low.sum() > 10_000
        assert abs(np.mean(q[low] - x[low])) < 5 * 0.5 / np.sqrt(low.sum())


def test_draws_are_keyed_on_the_global_row_not_on_the_partitioning():
    grad, hess = gradients(1000)
    key = [quantize.tree_key(1, 2, 0)]
    whole, _ = quantized(grad, hess, 16, key)
    # the second half alone, with its global offset and the scales of all rows
    maxima = quantize.gradient_maxima(grad, hess)
    half, _ = quantized(grad[:, 500:], hess[:, 500:], 16, key, 500, maxima)
    np.testing.assert_array_equal(half, whole[:, 500:])
    other_round, _ = quantized(grad, hess, 16, [quantize.tree_key(1, 3, 0)])
    assert (other_round != whole).mean() > 0.5


def test_partial_maxima_combine_to_the_largest_gradients():
    a = quantize.GradientMaxima(np.array([[1.0, 0.5], [2.0, 0.1]]))
    b = quantize.GradientMaxima(np.array([[3.0, 0.2], [1.0, 0.3]]))
    total = histogram.add_histograms_into(a, b)  # the reduction's step
    np.testing.assert_array_equal(total.maxima, [[3.0, 0.5], [2.0, 0.3]])
    np.testing.assert_array_equal(quantize.scales_from_maxima(total.maxima, 4),
                                  [[1.5, 0.125], [1.0, 0.075]])
    # a tree whose rows are all left out: steps of 1, not 0
    np.testing.assert_array_equal(quantize.scales_from_maxima(np.zeros((1, 2)), 4), [[1, 1]])


def test_packed_sums_unpack_to_the_integer_sums_with_negative_parts():
    rng = np.random.default_rng(1)
    q_g = rng.integers(-2, 3, 100_000)
    q_h = rng.integers(-4, 5, 100_000)  # custom objectives may give negative hessians
    total = ((q_g << 32) + q_h).sum()
    assert unpacked(total) == (q_g.sum(), q_h.sum())
    hist = np.array([[total, -total, 0], [total, 0, 0]], dtype=np.int64)
    out = quantize.unpack_histograms(hist, 0.5, 0.25)
    assert out.shape == (2, 3, 2)
    np.testing.assert_array_equal(out[0], [[q_g.sum() * 0.5, q_h.sum() * 0.25],
                                           [-q_g.sum() * 0.5, -q_h.sum() * 0.25], [0, 0]])
    np.testing.assert_array_equal(out[1, 0], [q_g.sum() * 0.5, q_h.sum() * 0.25])
    # a sum of cells (one value) unpacks alike
    np.testing.assert_array_equal(quantize.unpack_histograms(hist[0, :2].sum(), 0.5, 0.25),
                                  [0.0, 0.0])


@pytest.mark.parametrize("n_bins, dtype", [(4, np.int16), (64, np.int16), (65, np.int32),
                                           (1024, np.int32)])
def test_rows_are_stored_narrow_and_add_up_as_int64_cells(n_bins, dtype):
    """A row's (q_g, q_h) in an int16 (up to 64 bins) or int32, both parts at the ends
    of their ranges and negative hessians included; the histograms of the narrow rows
    are the int64 sums of ``q_g * 2**32 + q_h``, as with rows stored in int64."""
    n, n_codes = 4000, 5
    rng = np.random.default_rng(n_bins)
    grad, hess = gradients(n, n_bins)
    hess[0, ::3] *= -1  # custom objectives may give negative hessians
    grad[0, 0], hess[0, 0] = np.abs(grad[0]).max(), np.abs(hess[0]).max()
    grad[0, 1], hess[0, 1] = -np.abs(grad[0]).max(), -np.abs(hess[0]).max()
    packed, _ = quantized(grad, hess, n_bins, [quantize.tree_key(0, 0, 0)])
    assert packed.dtype == dtype
    q_g, q_h = unpacked(packed[0])
    assert np.abs(q_g).max() in (n_bins // 2, n_bins // 2 + 1)
    assert np.abs(q_h).max() in (n_bins, n_bins + 1)
    assert q_h.min() < 0
    codes = rng.integers(0, n_codes, (n, 2)).astype(np.uint8)
    offsets = np.arange(3, dtype=np.int64) * n_codes
    positions = np.zeros((1, n), np.int32)
    _, sums = build_histograms(codes, None, None, positions, *no_splits(1, 1), n_codes - 1,
                               np.zeros((1, 1), np.int32), 1, offsets, quantized=packed)
    wide = (q_g << 32) + q_h
    expected = [wide[codes[:, f] == c].sum() for f in range(2) for c in range(n_codes)]
    np.testing.assert_array_equal(sums[0], expected)


def test_quantized_histograms_are_within_one_quantum_per_row_of_the_float_ones():
    n, n_features, n_codes = 5000, 3, 9
    rng = np.random.default_rng(2)
    codes = rng.integers(0, n_codes, (n, n_features)).astype(np.uint8)
    grad, hess = gradients(n, 2, trees=2)
    grad[1] *= 10  # the second tree's gradients: another scale
    offsets = np.arange(n_features + 1, dtype=np.int64) * n_codes
    positions = np.zeros((2, n), np.int32)
    node_to_slot = np.array([[0], [1]], np.int32)  # both trees' roots
    args = (positions, *no_splits(2, 1), n_codes - 1, node_to_slot, 2, offsets)
    _, exact = build_histograms(codes, grad, hess, *args)
    keys = [quantize.tree_key(0, 0, t) for t in range(2)]
    packed, scales = quantized(grad, hess, 16, keys)
    _, sums = build_histograms(codes, None, None, *args, quantized=packed)
    assert sums.dtype == np.int64 and sums.shape == (2, n_features * n_codes)
    approx = np.stack([quantize.unpack_histograms(sums[t], *scales[t]) for t in range(2)])
    assert approx.shape == exact.shape == (2, n_features * n_codes, 2)
    counts = np.stack([np.bincount(codes[:, f], minlength=n_codes)
                       for f in range(n_features)]).ravel()
    for t in range(2):
        for j in range(2):  # g, h: each row's rounding moves it by less than a quantum
            error = np.abs(approx[t, :, j] - exact[t, :, j])
            assert np.all(error <= counts * scales[t, j] * (1 + 1e-9))
            # and the errors cancel: far below the bound on the whole histogram
            assert error.sum() < 0.2 * (counts * scales[t, j]).sum()


def test_rows_left_out_add_nothing():
    grad, hess = gradients(100)
    grad[0, ::2] = hess[0, ::2] = 0.0  # sampled out
    packed, _ = quantized(grad, hess, 4, [quantize.tree_key(0, 0, 0)])
    assert np.all(packed[0, ::2] == 0)


def binary_data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    logit = 1.5 * np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def auc(y, score):
    from sklearn.metrics import roc_auc_score
    return roc_auc_score(y, score)


@pytest.mark.parametrize("bins", [4, 64])
def test_quantized_fit_is_as_accurate_as_the_float_fit(bins):
    X, y = binary_data(30_000, 0)
    X_test, y_test = binary_data(20_000, 1)
    params = dict(n_estimators=40, max_depth=5, learning_rate=0.2)
    exact = DaskBoostClassifier(**params).fit(X, y)
    quantized = DaskBoostClassifier(**params, quantized_grad=True,
                                    num_grad_quant_bins=bins).fit(X, y)
    # Shi et al. and LightGBM report no loss of accuracy at 4 bins and up; on this task
    # the test AUC stays within 0.005 of the float model's
    a_exact = auc(y_test, exact.predict_proba(X_test)[:, 1])
    a_quantized = auc(y_test, quantized.predict_proba(X_test)[:, 1])
    assert a_exact > 0.75
    assert abs(a_quantized - a_exact) < 0.005
    # and it is another model (the option is not ignored)
    assert not np.array_equal(exact.predict_proba(X_test), quantized.predict_proba(X_test))


def test_quantized_regression_multiclass_and_weights_fit():
    X, y = binary_data(6000, 3)
    target = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 3])
    reg = DaskBoostRegressor(n_estimators=30, quantized_grad=True).fit(X, target)
    rmse = np.sqrt(np.mean((reg.predict(X) - target) ** 2))
    assert rmse < 0.35 * target.std()
    classes = np.digitize(target, np.quantile(target, [0.33, 0.66]))
    weights = np.arange(len(X)) % 3 + 0.5
    clf = DaskBoostClassifier(n_estimators=20, quantized_grad=True, num_grad_quant_bins=8)
    clf.fit(X, classes, sample_weight=weights)
    assert (clf.predict(X) == classes).mean() > 0.8


def test_quantized_model_does_not_depend_on_the_memory_budget(tmp_path):
    # blocks of a partition spilled to disk quantize as the partition in memory does
    X, y = binary_data(20_000, 4)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=2)
    labels = dd.from_pandas(pd.Series(y), npartitions=2)
    params = dict(n_estimators=5, max_depth=4, quantized_grad=True, num_grad_quant_bins=8,
                  subsample=0.8, random_state=3)
    in_memory = DaskBoostClassifier(**params).fit(frame, labels)
    spilled = DaskBoostClassifier(**params, memory_budget="100KB",
                                  cache_dir=str(tmp_path)).fit(frame, labels)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    in_memory.save_model(a)
    spilled.save_model(b)
    assert a.read_bytes() == b.read_bytes()


def test_quantized_fits_are_repeatable_and_saved_with_their_parameters(tmp_path):
    X, y = binary_data(5000, 5)
    paths = []
    for name in ("a", "b"):
        model = DaskBoostClassifier(n_estimators=5, quantized_grad=True,
                                    num_grad_quant_bins=16).fit(X, y)
        paths.append(tmp_path / f"{name}.json")
        model.save_model(paths[-1])
    assert paths[0].read_bytes() == paths[1].read_bytes()
    loaded = DaskBoostClassifier().load_model(paths[0])
    assert loaded.quantized_grad is True and loaded.num_grad_quant_bins == 16
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_bad_quantization_parameters_are_refused_before_any_pass():
    X, y = binary_data(500, 6)
    with pytest.raises(TypeError, match=r"quantized_grad='yes' must be True, False or 'auto'"):
        DaskBoostClassifier(quantized_grad="yes").fit(X, y)
    with pytest.raises(ValueError, match=r"num_grad_quant_bins=1 must be in \[2, 1024\]"):
        DaskBoostClassifier(quantized_grad=True, num_grad_quant_bins=1).fit(X, y)


def test_data_too_large_for_packed_sums_is_refused_after_the_scan(monkeypatch):
    X, y = binary_data(3000, 7)
    binned = []  # the bin pass starts with the bin mapper
    import daskboost.training as training
    original = training.BinMapper.from_summaries
    monkeypatch.setattr(training.BinMapper, "from_summaries",
                        staticmethod(lambda *a, **k: binned.append(1) or original(*a, **k)))
    # the bound is 2**31 / bins rows; pretend it is 1,000 rows
    monkeypatch.setattr(quantize, "_MAX_ABS_SUM", 4000)
    with pytest.raises(ValueError, match=r"num_grad_quant_bins=4 sums at most 1000 rows "
                                         r"in one int64 histogram cell; the data has 3000 "):
        DaskBoostClassifier(quantized_grad=True).fit(X, y)
    assert binned == []
    DaskBoostClassifier(n_estimators=2).fit(X, y)  # float gradients: no such bound
    assert binned == [1]


def test_continued_quantized_training_equals_training_in_one_go():
    # the draws are keyed on the round, the scales on the round's gradients
    X, y = binary_data(4000, 8)
    params = dict(quantized_grad=True, subsample=0.8, random_state=1, max_depth=4)
    one_go = DaskBoostClassifier(n_estimators=8, **params).fit(X, y)
    first = DaskBoostClassifier(n_estimators=4, **params).fit(X, y)
    continued = DaskBoostClassifier(n_estimators=4, **params).fit(
        X, y, xgb_model=first.get_booster())
    np.testing.assert_array_equal(continued.predict_proba(X), one_go.predict_proba(X))


def test_auto_settles_on_rows_feature_types_weights_and_objective():
    from daskboost.objectives import get_objective
    from daskboost.params import QUANTIZED_FROM_ROWS, settle_quantized_grad, validate_params
    auto = validate_params(DaskBoostClassifier().get_params(), ("binary:logistic",))
    assert auto.quantized_grad == "auto"
    logistic = get_objective("binary:logistic")

    def settle(params=auto, rows=QUANTIZED_FROM_ROWS, weighted=False, categorical=False,
               objective=logistic):
        return settle_quantized_grad(params, objective, rows, weighted,
                                     categorical).quantized_grad

    assert settle() is True
    assert settle(rows=QUANTIZED_FROM_ROWS - 1) is False
    assert settle(rows=10 * QUANTIZED_FROM_ROWS, categorical=True) is False
    assert settle(rows=10 * QUANTIZED_FROM_ROWS, weighted=True) is False
    # more rows than packed sums hold: float gradients, not the explicit setting's error
    limit = quantize.max_rows(auto.num_grad_quant_bins)
    assert settle(rows=limit) is True and settle(rows=limit + 1) is False
    # bounded hessians only
    for name in ("reg:squarederror", "reg:absoluteerror", "reg:quantileerror",
                 "reg:pseudohubererror", "reg:logistic", "binary:logitraw", "multi:softprob",
                 "multi:softmax"):
        assert settle(objective=get_objective(name, num_class=3)) is True, name
    for name in ("reg:gamma", "reg:tweedie", "count:poisson"):
        assert settle(objective=get_objective(name)) is False, name
    for given in (True, False):  # a setting given is kept, whatever the data
        params = validate_params({**DaskBoostClassifier().get_params(),
                                  "quantized_grad": given}, ("binary:logistic",))
        assert settle(params, rows=10, categorical=True) is given
        assert settle(params, rows=10 ** 7, objective=get_objective("reg:gamma")) is given


def test_default_fit_is_quantized_from_the_threshold_on(monkeypatch):
    import daskboost.params as params_module
    monkeypatch.setattr(params_module, "QUANTIZED_FROM_ROWS", 2000)
    X, y = binary_data(3000, 9)

    def proba(X_fit, y_fit, **setting):
        return DaskBoostClassifier(n_estimators=5, **setting).fit(X_fit, y_fit).predict_proba(X)

    np.testing.assert_array_equal(proba(X, y), proba(X, y, quantized_grad=True))
    assert not np.array_equal(proba(X, y), proba(X, y, quantized_grad=False))
    np.testing.assert_array_equal(proba(X[:1999], y[:1999]),
                                  proba(X[:1999], y[:1999], quantized_grad=False))
    # weights keep float gradients
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    weighted = [DaskBoostClassifier(n_estimators=5, **setting).fit(X, y, sample_weight=w)
                for setting in ({}, {"quantized_grad": False})]
    np.testing.assert_array_equal(*(m.predict_proba(X) for m in weighted))
    # a categorical feature keeps float gradients at any size
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["c"] = pd.Categorical(np.where(X[:, 0] > 0, "a", "b"))
    auto_cat = DaskBoostClassifier(n_estimators=5).fit(frame, y)
    float_cat = DaskBoostClassifier(n_estimators=5, quantized_grad=False).fit(frame, y)
    np.testing.assert_array_equal(auto_cat.predict_proba(frame), float_cat.predict_proba(frame))


def test_cv_settles_auto_on_a_folds_training_rows(monkeypatch):
    import daskboost
    import daskboost.params as params_module
    X, y = binary_data(3000, 10)
    params = dict(n_estimators=3, max_depth=3)

    def results(**extra):
        return daskboost.cv({**params, **extra}, X, y, nfold=3, metrics="logloss", seed=2)

    # a fold trains on 2,000 of the 3,000 rows
    monkeypatch.setattr(params_module, "QUANTIZED_FROM_ROWS", 2000)
    pd.testing.assert_frame_equal(results(), results(quantized_grad=True))
    monkeypatch.setattr(params_module, "QUANTIZED_FROM_ROWS", 2001)
    pd.testing.assert_frame_equal(results(), results(quantized_grad=False))
    assert not results(quantized_grad=True).equals(results(quantized_grad=False))


def test_auto_is_decided_once_on_the_client_a_cluster_fits_the_same(monkeypatch, cluster):
    # the scan's row count decides on the client; the workers grow with that decision
    import dask
    import distributed
    import daskboost.params as params_module
    monkeypatch.setattr(params_module, "QUANTIZED_FROM_ROWS", 2000)
    X, y = binary_data(3000, 11)
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]),
                           npartitions=3)
    labels = dd.from_pandas(pd.Series(y), npartitions=3)

    def proba(**setting):
        model = DaskBoostClassifier(n_estimators=4, max_depth=3, **setting)
        return model.fit(frame, labels).predict_proba(X)

    with dask.config.set(scheduler="threads"):
        threaded = proba()
        np.testing.assert_array_equal(threaded, proba(quantized_grad=True))
    with distributed.Client(cluster):
        np.testing.assert_array_equal(proba(), threaded)
