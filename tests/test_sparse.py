"""scipy.sparse input (issue 14, item 4): an entry not stored is missing.

A sparse matrix (in memory, or as the chunks of a dask array) must give the model of
the dense matrix with NaN wherever nothing is stored, byte for byte: the same
summaries (``sparse.summarize``: stored values only), the same codes
(``BinMapper.transform``'s stored-entry kernel), the same predictions (dense rows made
a bounded block at a time, ``sparse.add_margin``).  Explicit NaN are missing; +-inf
are values, as in dense input; a model does not remember whether it was trained on
sparse or dense data (only what is missing matters).
"""

import dask
import dask.array as da
import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")

from daskboost import DaskBoostClassifier, DaskBoostRegressor, sparse  # noqa: E402
from daskboost.binning import BinMapper  # noqa: E402
from daskboost.data import partition_input  # noqa: E402
from daskboost.partition import rebuild_partition  # noqa: E402
from daskboost.sketch import merge_blocks, summarize_block  # noqa: E402

N, N_FEATURES = 1200, 5


def sparse_and_dense(seed=3, density=0.4, dtype=np.float64):
    """(CSR matrix, the same as dense with NaN where nothing is stored, y).

    Values 0..6, explicit zeros among them; column 4 has nothing stored at all."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 7, size=(N, N_FEATURES)).astype(dtype)
    stored = rng.random(values.shape) < density
    stored[:, 4] = False
    rows, cols = np.nonzero(stored)
    X = sp.csr_matrix((values[rows, cols], (rows, cols)), shape=values.shape)
    dense = np.where(stored, values, np.nan).astype(dtype)
    y = np.nan_to_num(dense[:, 0], nan=2.5) - np.isnan(dense[:, 1]) + rng.normal(0, 0.3, N)
    return X, dense, y


def set_stored(X, dense, values):
    """Give the first stored entries of CSR ``X`` (and the same cells of ``dense``)
    ``values``."""
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[:len(values)]
    X.data[:len(values)] = values
    dense[rows, X.indices[:len(values)]] = values


def model_bytes(model, tmp_path, name="model"):
    path = tmp_path / f"{name}.json"
    model.save_model(path)
    return path.read_bytes()


FIT = {"n_estimators": 4, "max_depth": 3}


# ---- the pieces: sketch, binning, dense rows ---------------------------------------------

@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_summaries_are_those_of_the_dense_matrix_with_nan(weighted, dtype):
    X, dense, _ = sparse_and_dense(dtype=dtype)
    set_stored(X, dense, [np.nan, np.inf, -np.inf, 0.0, -0.0])  # a stored NaN is missing
    weights = np.random.default_rng(0).random(N) if weighted else None
    for size in (4096, 4):  # exact, and pruned
        ours = sparse.summarize(sparse.rows(X), weights, size)
        theirs = summarize_block(dense, weights, size)
        assert len(ours) == N_FEATURES and len(ours[4]) == 0
        for a, b in zip(ours, theirs):
            for field in ("values", "rmin", "rmax", "wmin"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
            assert (a.eps, a.total_weight) == (b.eps, b.total_weight)


def test_binned_codes_are_those_of_the_dense_matrix_with_nan():
    X, dense, _ = sparse_and_dense()
    set_stored(X, dense, [np.nan, np.inf, -np.inf])
    for max_bin in (256, 3):  # a bin per value; and cuts between stored values
        summaries = merge_blocks(summarize_block(dense[:600], None, 64),
                                 summarize_block(dense[600:], None, 64), 64)
        mapper = BinMapper.from_summaries(summaries, max_bin)
        codes = mapper.transform(sparse.rows(X))
        np.testing.assert_array_equal(codes, mapper.transform(dense))
        assert (codes[:, 4] == mapper.missing_code).all()


def test_canonical_form_sums_duplicates_and_leaves_the_input_alone():
    # scipy reads duplicate entries as their sum; unsorted indices are sorted
    coo = sp.coo_matrix(([1.0, 2.0, 5.0, 0.0], ([0, 0, 1, 1], [2, 2, 0, 1])), shape=(2, 3))
    csr = sp.csr_matrix((np.array([5.0, 3.0]), np.array([2, 0]), np.array([0, 2])),
                        shape=(1, 3))
    before = (csr.data.copy(), csr.indices.copy())
    got = sparse.canonical(coo)
    assert got.format == "csr" and got.nnz == 3  # the explicit zero is kept: a value
    np.testing.assert_array_equal(sparse.dense_rows(got, 0, 2),
                                  [[np.nan, np.nan, 3.0], [5.0, 0.0, np.nan]])
    np.testing.assert_array_equal(sparse.canonical(csr).indices, [0, 2])
    np.testing.assert_array_equal(csr.data, before[0])
    np.testing.assert_array_equal(csr.indices, before[1])
    assert sparse.rows(sp.csr_matrix(np.eye(2, dtype=np.int64))).dtype == np.float64
    assert sparse.rows(sp.csr_matrix(np.eye(2, dtype=np.float32))).dtype == np.float32


def test_dense_rows():
    X = sp.csr_matrix(([1.5, -2.0, 7.0], ([0, 2, 2], [1, 0, 2])), shape=(4, 3))
    np.testing.assert_array_equal(sparse.dense_rows(X, 1, 4),
                                  [[np.nan] * 3, [-2.0, np.nan, 7.0], [np.nan] * 3])


def test_predictions_densify_a_bounded_block_at_a_time(monkeypatch, tmp_path):
    X, dense, y = sparse_and_dense()
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))  # 3 classes: K = 3 margins
    model = DaskBoostClassifier(**FIT).fit(dense, labels)
    expected = model.predict_proba(dense)
    shapes = []
    original = sparse.dense_rows

    def recording(csr, start, stop):
        shapes.append((stop - start, csr.shape[1]))
        return original(csr, start, stop)

    monkeypatch.setattr(sparse, "DENSE_CELLS", 3 * N_FEATURES)
    monkeypatch.setattr(sparse, "dense_rows", recording)
    np.testing.assert_array_equal(model.predict_proba(X), expected)
    assert max(rows * columns for rows, columns in shapes) <= 3 * N_FEATURES
    assert sum(rows for rows, _ in shapes) == N


def test_training_and_prediction_never_densify_a_matrix(monkeypatch, tmp_path):
    X, dense, y = sparse_and_dense()

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    model = DaskBoostRegressor(**FIT).fit(X, y, eval_set=[(X.tocsc(), y)])
    model.predict(X)
    X_dask = da.from_array(X, chunks=(300, 2))  # column chunks: joined sparse
    DaskBoostRegressor(**FIT).fit(X_dask, da.from_array(y, chunks=300)).predict(X_dask).compute()


# ---- whole fits: sparse == dense with NaN --------------------------------------------------

@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "csr_array", "float32"])
def test_in_memory_sparse_gives_the_dense_model(kind, tmp_path):
    X, dense, y = sparse_and_dense(dtype=np.float32 if kind == "float32" else np.float64)
    X = {"csc": X.tocsc(), "coo": X.tocoo(), "csr_array": sp.csr_array(X)}.get(kind, X)
    ours = DaskBoostRegressor(**FIT).fit(X, y, eval_set=[(X, y)])
    theirs = DaskBoostRegressor(**FIT).fit(dense, y, eval_set=[(dense, y)])
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    assert ours.evals_result() == theirs.evals_result()
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(dense))
    assert np.corrcoef(ours.predict(X), y)[0, 1] > 0.8  # it learned something


def test_in_memory_sparse_is_cut_into_row_blocks_like_dense(monkeypatch, tmp_path):
    from daskboost import data
    monkeypatch.setattr(data, "ROWS_PER_BLOCK", 300)  # 4 blocks: CSR row slices
    X, dense, y = sparse_and_dense()
    assert partition_input(X, y).n_partitions == 4
    ours = DaskBoostRegressor(**FIT).fit(X, y)
    theirs = DaskBoostRegressor(**FIT).fit(dense, y)
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    margins = np.linspace(-1, 1, N)
    np.testing.assert_array_equal(ours.predict(X, base_margin=margins),
                                  theirs.predict(dense, base_margin=margins))


def test_a_lost_partition_is_rebuilt_from_sparse_rows_as_from_dense():
    # rebuild_partition (a worker lost): binned again, the trees so far added to margins
    X, dense, y = sparse_and_dense()
    trees = DaskBoostRegressor(**FIT).fit(dense, y).get_booster().trees
    mapper = BinMapper.from_summaries(summarize_block(dense, None, 64), 256)
    states = [rebuild_partition(x, y, None, 0, mapper, np.array([0.5]), None, None, None, 0,
                                None, None, trees, len(trees)) for x in (X, dense)]
    np.testing.assert_array_equal(states[0].codes, states[1].codes)
    np.testing.assert_array_equal(states[0].margin, states[1].margin)
    assert not np.all(states[0].margin == 0.5)


@pytest.mark.parametrize("column_chunks", [5, 2])
def test_dask_array_of_sparse_chunks_gives_the_dense_model(column_chunks, tmp_path):
    X, dense, y = sparse_and_dense()
    X_dask = da.from_array(X, chunks=(300, column_chunks))
    assert isinstance(X_dask._meta, sp.csr_matrix)
    y_dask = da.from_array(y, chunks=300)
    dense_dask = da.from_array(dense, chunks=(300, N_FEATURES))
    ours = DaskBoostRegressor(**FIT).fit(X_dask, y_dask, eval_set=[(X_dask, y_dask)])
    theirs = DaskBoostRegressor(**FIT).fit(dense_dask, y_dask, eval_set=[(dense_dask, y_dask)])
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    assert ours.evals_result() == theirs.evals_result()
    predicted = ours.predict(X_dask)
    assert isinstance(predicted, da.Array) and predicted.chunks == ((300,) * 4,)
    np.testing.assert_array_equal(predicted.compute(), theirs.predict(dense))


def test_persisted_sparse_dask_array_on_a_cluster(cluster, tmp_path):
    import distributed
    X, dense, y = sparse_and_dense()
    with dask.config.set(scheduler="threads"):
        theirs = DaskBoostRegressor(**FIT).fit(da.from_array(dense, chunks=(300, 5)),
                                                da.from_array(y, chunks=300))
    with distributed.Client(cluster):
        X_dask = da.from_array(X, chunks=(300, 5)).persist()
        ours = DaskBoostRegressor(**FIT).fit(X_dask, da.from_array(y, chunks=300).persist())
        predicted = ours.predict(X_dask).compute()
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    np.testing.assert_array_equal(predicted, theirs.predict(dense))


@pytest.mark.parametrize("setting", ["weights", "approx", "continued", "categorical"])
def test_other_training_paths_give_the_dense_model(setting, tmp_path):
    X, dense, y = sparse_and_dense()
    labels = (y > np.median(y)).astype(int)
    weights = np.random.default_rng(1).random(N)

    def fit(data):
        if setting == "weights":  # weighted sketches: weights of equal values in row order
            return DaskBoostClassifier(**FIT).fit(data, labels, sample_weight=weights)
        if setting == "approx":  # hessian-weighted re-sketching and re-binning
            return DaskBoostRegressor(tree_method="approx", **FIT).fit(data, y)
        if setting == "continued":  # the previous model's margins of sparse rows
            first = DaskBoostRegressor(**FIT).fit(data, y)
            return DaskBoostRegressor(**FIT).fit(data, y, xgb_model=first)
        # stored values of column 2 as categories; entries not stored are missing
        return DaskBoostRegressor(feature_types=["q", "q", "c", "q", "q"],
                                  max_cat_to_onehot=1, **FIT).fit(data, y)

    ours, theirs = fit(X), fit(dense)
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    if setting == "categorical":
        assert ours.get_booster().categories == {2: [float(v) for v in range(7)]}
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(dense))


# ---- what entries mean ---------------------------------------------------------------------

def test_an_explicit_nan_is_missing_like_an_entry_not_stored(tmp_path):
    X, _, y = sparse_and_dense()
    with_nan = X.copy()
    with_nan.data[::4] = np.nan
    # the same matrix with the NaN entries not stored (explicit zeros kept)
    kept = ~np.isnan(with_nan.data)
    rows = np.repeat(np.arange(N), np.diff(with_nan.indptr))
    without = sp.csr_matrix((with_nan.data[kept], (rows[kept], with_nan.indices[kept])),
                            shape=X.shape)
    assert without.nnz < with_nan.nnz
    a = DaskBoostRegressor(**FIT).fit(with_nan, y)
    b = DaskBoostRegressor(**FIT).fit(without, y)
    assert model_bytes(a, tmp_path, "a") == model_bytes(b, tmp_path, "b")
    np.testing.assert_array_equal(a.predict(with_nan), a.predict(without))


def test_infinities_are_values_as_in_dense_input(tmp_path):
    X, dense, y = sparse_and_dense()
    big = X.data >= 6
    X.data[big] = np.inf
    X.data[X.data == 1] = -np.inf
    dense[dense >= 6] = np.inf
    dense[dense == 1] = -np.inf
    ours = DaskBoostRegressor(**FIT).fit(X, y)
    theirs = DaskBoostRegressor(**FIT).fit(dense, y)
    assert model_bytes(ours, tmp_path, "ours") == model_bytes(theirs, tmp_path, "theirs")
    assert np.isinf(ours.get_booster().trees[0].threshold).any()  # a cut at -inf is used
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(dense))


def test_sparse_and_dense_mix_between_fit_eval_and_predict(tmp_path):
    # a model does not remember the format: sparse rows predict as the dense rows with
    # NaN where nothing is stored (a dense 0 is a value, not missing)
    X, dense, y = sparse_and_dense()
    on_sparse = DaskBoostRegressor(**FIT).fit(X, y, eval_set=[(dense, y)])
    on_dense = DaskBoostRegressor(**FIT).fit(dense, y, eval_set=[(X, y)])
    assert on_sparse.evals_result() == on_dense.evals_result()
    np.testing.assert_array_equal(on_sparse.predict(dense), on_dense.predict(X))
    np.testing.assert_array_equal(on_sparse.predict(X), on_dense.predict(dense))
    zeros = X.toarray()  # the zero-filled reading of the same matrix is other data
    assert not np.array_equal(on_sparse.predict(zeros), on_sparse.predict(X))


# ---- bad input -------------------------------------------------------------------------------

def test_complex_sparse_matrix_is_refused():
    X, _, y = sparse_and_dense()
    with pytest.raises(ValueError, match=r"Complex data not supported: X has dtype complex128"):
        DaskBoostRegressor(**FIT).fit(X.astype(np.complex128), y)
    with pytest.raises(TypeError, match=r"feature array has dtype complex128"):  # dask
        DaskBoostRegressor(**FIT).fit(da.from_array(X.astype(np.complex128), chunks=600),
                                      da.from_array(y, chunks=600))


def test_one_dimensional_sparse_array_is_refused():
    if not hasattr(sp, "coo_array"):
        pytest.skip("scipy without sparse arrays")
    vector = sp.coo_array(np.array([1.0, 0.0, 2.0]))
    if vector.ndim != 1:
        pytest.skip("this scipy makes 2-D sparse arrays only")
    with pytest.raises(ValueError, match=r"X must be a 2-D array; got an array with ndim=1"):
        DaskBoostRegressor(**FIT).fit(vector, [1.0, 2.0, 3.0])


def test_predicting_sparse_rows_with_other_features_is_refused():
    X, _, y = sparse_and_dense()
    model = DaskBoostRegressor(**FIT).fit(X, y)
    with pytest.raises(ValueError, match=r"X has 4 features, but DaskBoostRegressor is "
                                         r"expecting 5 features"):
        model.predict(X[:, :4])
    with pytest.raises(ValueError, match=r"X has shape \(1200, 4\)"):
        model.get_booster().predict(X[:, :4])
