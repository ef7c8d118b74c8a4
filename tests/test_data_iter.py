"""xgboost's ``DataIter``: ``DMatrix(it)`` / ``QuantileDMatrix(it)`` join the batches in
memory; ``ExtMemQuantileDMatrix(it)`` writes them to files read back as one partition
each.  The same models as the data given whole (the same partitioning)."""

import gc
import os

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import scipy.sparse

import daskboost

BATCH_ROWS = 400
PARAMS = {"max_depth": 3, "learning_rate": 0.5}


def batches(n_batches=4, frames=False, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        X = rng.normal(size=(BATCH_ROWS, 4))
        X[rng.random(X.shape) < 0.05] = np.nan
        y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=BATCH_ROWS)
        w = rng.uniform(0.5, 2.0, BATCH_ROWS)
        if frames:
            X = pd.DataFrame(X, columns=["a", "b", "c", "d"])
            X["e"] = pd.Categorical(rng.choice(["x", "y", "z"], BATCH_ROWS),
                                    categories=["x", "y", "z"])
        out.append((X, y, w))
    return out


class Batches(daskboost.DataIter):
    """Hands over ``parts`` (X, y, w) one by one; counts its calls."""

    def __init__(self, parts, cache_prefix=None, **fields):
        self.parts, self.fields, self.position, self.calls = parts, fields, 0, 0
        super().__init__(cache_prefix=cache_prefix)

    def next(self, input_data):
        self.calls += 1
        if self.position == len(self.parts):
            return False
        X, y, w = self.parts[self.position]
        input_data(data=X, label=y, weight=w, **{k: v[self.position]
                                                 for k, v in self.fields.items()})
        self.position += 1
        return True

    def reset(self):
        self.position = 0


def trained(matrix, rounds=6):
    return daskboost.train(PARAMS, matrix, rounds, evals=[(matrix, "train")],
                           verbose_eval=False)


def test_a_dmatrix_of_batches_is_the_dmatrix_of_their_rows():
    parts = batches()
    it = Batches(parts)
    from_batches = trained(daskboost.DMatrix(it))
    assert it.calls == len(parts) + 1 and it.position == 0  # read once, then reset
    X, y, w = (np.concatenate(a) for a in zip(*parts))
    whole = trained(daskboost.DMatrix(X, y, weight=w))
    assert from_batches.save_raw() == whole.save_raw()
    quantile = daskboost.QuantileDMatrix(Batches(parts), max_bin=32)
    assert quantile.fit_params({})["max_bin"] == 32
    assert quantile.num_row() == len(X)


def test_extmem_batches_are_files_read_back_as_partitions(tmp_path):
    parts = batches()
    it = Batches(parts, cache_prefix=str(tmp_path / "cache"))
    matrix = daskboost.ExtMemQuantileDMatrix(it)
    files = sorted(os.listdir(matrix.batch_files))
    assert os.path.dirname(matrix.batch_files) == str(tmp_path)
    assert files == sorted([f"data-{i:05d}.npy" for i in range(4)]
                           + [f"label-{i:05d}.npy" for i in range(4)]
                           + [f"weight-{i:05d}.npy" for i in range(4)])
    assert matrix.data.chunks[0] == (BATCH_ROWS,) * 4
    booster = trained(matrix)
    X, y, w = (np.concatenate(a) for a in zip(*parts))
    chunked = daskboost.DMatrix(da.from_array(X, chunks=(BATCH_ROWS, 4)),
                                da.from_array(y, chunks=BATCH_ROWS),
                                weight=da.from_array(w, chunks=BATCH_ROWS))
    assert booster.save_raw() == trained(chunked).save_raw()
    # predicted batch by batch, as the whole matrix
    np.testing.assert_array_equal(booster.predict(matrix), booster.predict(daskboost.DMatrix(X)))
    directory = matrix.batch_files
    del matrix, it
    gc.collect()
    assert not os.path.exists(directory)  # removed with the matrix


def test_extmem_frame_batches_with_a_category_column(tmp_path):
    parts = batches(3, frames=True)
    margins = [np.full(BATCH_ROWS, 0.25 * i) for i in range(3)]
    matrix = daskboost.ExtMemQuantileDMatrix(
        Batches(parts, cache_prefix=str(tmp_path / "c"), base_margin=margins),
        enable_categorical=True)
    assert isinstance(matrix.data, dd.DataFrame) and matrix.data.npartitions == 3
    booster = trained(matrix)
    assert booster.feature_names == ["a", "b", "c", "d", "e"]
    frame = dd.from_delayed([dask.delayed(lambda p: p)(X) for X, _, _ in parts],
                            meta=parts[0][0].iloc[:0])
    label = dd.from_delayed([dask.delayed(pd.Series)(y) for _, y, _ in parts],
                            meta=pd.Series(dtype=float))
    weight = dd.from_delayed([dask.delayed(pd.Series)(w) for _, _, w in parts],
                             meta=pd.Series(dtype=float))
    margin = dd.from_delayed([dask.delayed(pd.Series)(m) for m in margins],
                             meta=pd.Series(dtype=float))
    given = daskboost.DMatrix(frame, label, weight=weight, base_margin=margin,
                              enable_categorical=True)
    assert booster.save_raw() == trained(given).save_raw()
    X = pd.concat([X for X, _, _ in parts], ignore_index=True)
    expected = booster.predict(daskboost.DMatrix(X, base_margin=np.concatenate(margins),
                                                 enable_categorical=True))
    np.testing.assert_allclose(booster.predict(matrix), expected, rtol=0, atol=1e-12)


def test_sparse_batches_are_joined_in_memory():
    parts = batches()
    sparse = [(scipy.sparse.csr_matrix(np.nan_to_num(X)), y, w) for X, y, w in parts]
    joined = daskboost.DMatrix(Batches(sparse))
    assert scipy.sparse.issparse(joined.data) and joined.data.shape == (4 * BATCH_ROWS, 4)
    with pytest.raises(TypeError, match="sparse batches are not written to disk"):
        daskboost.ExtMemQuantileDMatrix(Batches(sparse))


class Odd(Batches):
    """Batches whose second one is wrong in the way ``kind`` says."""

    def __init__(self, kind):
        super().__init__(batches(2))
        self.kind = kind

    def next(self, input_data):
        if self.position == 1:
            X, y, w = self.parts[1]
            self.position += 1
            if self.kind == "columns":
                return input_data(data=X[:, :3], label=y, weight=w) or True
            if self.kind == "label":
                return input_data(data=X, weight=w) or True
            if self.kind == "qid":
                return input_data(data=X, label=y, weight=w, qid=np.zeros(len(y))) or True
            if self.kind == "group":
                return input_data(data=X, label=y, weight=w, group=[len(y)]) or True
            if self.kind == "rows":
                return input_data(data=X, label=y[:10], weight=w) or True
        return super().next(input_data)


@pytest.mark.parametrize("kind,error,message", [
    ("columns", ValueError, r"batch 1: its columns \[0, 1, 2\] are not the first batch's"),
    ("label", ValueError, r"batch 1: label is missing, but the first batch's label was given"),
    ("qid", ValueError, r"batch 1: qid is given, but the first batch's qid was not"),
    ("group", ValueError, r"batch 1: group \(query sizes\) is not read from a batch here"),
    ("rows", ValueError, r"batch 1: label has 10 rows, the data 400"),
])
def test_batches_that_disagree_are_refused_by_name(kind, error, message, tmp_path):
    for make in (daskboost.DMatrix, daskboost.ExtMemQuantileDMatrix):
        with pytest.raises(error, match=message):
            make(Odd(kind))


def test_what_is_not_an_iterator_of_batches_is_refused(tmp_path):
    with pytest.raises(ValueError, match="the iterator handed over no batch"):
        daskboost.DMatrix(Batches([]))
    with pytest.raises(TypeError, match="ExtMemQuantileDMatrix takes a daskboost.DataIter"):
        daskboost.ExtMemQuantileDMatrix(np.zeros((3, 2)))
    with pytest.raises(NotImplementedError, match=r"DataIter.reset\(\) must be written"):
        daskboost.DMatrix(daskboost.DataIter())
    with pytest.raises(TypeError, match="batch 0: data is a dask collection"):
        daskboost.DMatrix(Batches([(da.zeros((4, 2)), np.zeros(4), np.ones(4))]))
    with pytest.raises(ValueError, match=r"batch 0: data must be two-dimensional"):
        daskboost.DMatrix(Batches([(np.zeros(4), np.zeros(4), np.ones(4))]))
    # batches refused: no cache directory is left behind
    broken = Odd("label")
    broken.cache_prefix = str(tmp_path / "cache")
    with pytest.raises(ValueError, match="batch 1"):
        daskboost.ExtMemQuantileDMatrix(broken)
    assert os.listdir(tmp_path) == []
