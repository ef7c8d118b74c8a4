"""xgboost's DMatrix files (``daskboost.dmatrix_files``): text URIs read as xgboost reads
them (compared with the installed xgboost), and daskboost's own binary file written by
``DMatrix.save_binary`` and read back, a crafted one refused."""

import io
import os
import pathlib
import zipfile

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import scipy.sparse

import daskboost
from daskboost import dmatrix_files, text_files

xgboost = pytest.importorskip("xgboost")
pytestmark = [pytest.mark.filterwarnings("ignore:.*Text file input has been deprecated"),
              pytest.mark.filterwarnings("ignore:Duplicate name")]

# explicit zeros (0:0, 4:0), rows with nothing stored, feature 6 (the last) on two rows
# only, indices out of order, a comment, a blank line, tabs and CRLF
LIBSVM = """\
1 0:0 2:1.5 6:-2
0 1:3\t3:0.25 # a comment after the entries

1\r
0 4:0 0:7.5 2:-1e-3\r
2 6:1e5 1:-0.5
1 0:1 1:1 2:1 3:1 4:1
"""
# label:weight on every line
WEIGHTED = "1:0.5 0:1 2:0\n0:2 1:1.5\n1:1.25 0:-3 1:0 2:4\n"
# empty fields are missing; a zero is a value
CSV = "1,2.5,,0\n0,,4,1\n1,-1,0,5\n2,1e3,-7.25,3\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def dense(matrix):
    """A matrix's values, NaN where nothing is stored (scipy.sparse) or NaN."""
    data = matrix.get_data() if isinstance(matrix, xgboost.DMatrix) else matrix.data
    if scipy.sparse.issparse(data):
        out = np.full(data.shape, np.nan)
        coo = data.tocoo()
        out[coo.row, coo.col] = coo.data
        return out
    return np.asarray(data, dtype=np.float64)


def assert_as_xgboost(uri, **kwargs):
    ours, theirs = daskboost.DMatrix(uri, **kwargs), xgboost.DMatrix(uri, **kwargs)
    assert (ours.num_row(), ours.num_col(), ours.num_nonmissing()) == \
        (theirs.num_row(), theirs.num_col(), theirs.num_nonmissing())
    for field in ("label", "weight"):
        np.testing.assert_array_equal(ours.get_float_info(field), theirs.get_float_info(field))
    np.testing.assert_array_equal(dense(ours), dense(theirs))
    return ours


def test_libsvm_as_xgboost(tmp_path):
    path = write(tmp_path, "train.txt", LIBSVM)
    matrix = assert_as_xgboost(f"{path}?format=libsvm")
    # hand-built: 0-based indices, 7 columns, explicit zeros kept, float32 as xgboost's
    assert matrix.num_col() == 7 and matrix.num_nonmissing() == 15
    assert matrix.data.dtype == np.float32 and matrix.get_weight() is None
    np.testing.assert_array_equal(matrix.get_label(), [1, 0, 1, 0, 2, 1])
    expected = np.full((6, 7), np.nan)
    expected[0, [0, 2, 6]] = 0, 1.5, -2
    expected[1, [1, 3]] = 3, 0.25
    expected[3, [0, 2, 4]] = 7.5, np.float32(-1e-3), 0
    expected[4, [1, 6]] = -0.5, 1e5
    expected[5, :5] = 1
    np.testing.assert_array_equal(dense(matrix), expected)
    # lines that are only a comment are skipped (xgboost 3.2's parser fails on them)
    commented = write(tmp_path, "commented.txt", "# header\n" + LIBSVM.replace("\n", "\n#\n", 2))
    np.testing.assert_array_equal(dense(daskboost.DMatrix(f"{commented}?format=libsvm")),
                                  expected)
    # nan is missing (xgboost 3.2's parser reads it as 0)
    nan = daskboost.DMatrix(f"{write(tmp_path, 'nan.txt', '1 0:nan 1:2')}?format=libsvm")
    assert nan.num_nonmissing() == 1 and np.isnan(dense(nan)[0, 0])
    # label:weight; indices read from 1, or from 1 when no index is 0 (xgboost's modes)
    assert_as_xgboost(f"{write(tmp_path, 'w.txt', WEIGHTED)}?format=libsvm")
    from_one = write(tmp_path, "one.txt", "1 1:1 3:2\n0 2:5\n")
    assert assert_as_xgboost(f"{from_one}?format=libsvm").num_col() == 4   # (agaricus: 127)
    for mode in (1, -1, 0):
        assert_as_xgboost(f"{from_one}?format=libsvm&indexing_mode={mode}")
    assert daskboost.DMatrix(f"{from_one}?format=libsvm&indexing_mode=-1").num_col() == 3


RANKED = """2 qid:1 0:1 2:0.5
0 qid:1 1:3
1 qid:1 0:2 1:1
0 qid:4 2:7
1 qid:4 0:1 1:1 2:1
3 qid:10 1:0.5
"""


def test_libsvm_query_ids_as_xgboost(tmp_path):
    """``qid:N`` after the label: each row's query id, as xgboost's parser reads it (its
    group pointer), and a ranking fit on the file is the fit on the same rows in
    memory; written to a binary file and read back, the query ids stay."""
    path = write(tmp_path, "rank.txt", RANKED)
    ours = assert_as_xgboost(f"{path}?format=libsvm")
    theirs = xgboost.DMatrix(f"{path}?format=libsvm")
    np.testing.assert_array_equal(ours.qid, [1, 1, 1, 4, 4, 10])
    np.testing.assert_array_equal(ours.get_uint_info("group_ptr"),
                                  theirs.get_uint_info("group_ptr"))
    params = {"objective": "rank:ndcg", "max_depth": 2}
    from_file = daskboost.train(params, ours, 3)
    in_memory = daskboost.train(params, daskboost.DMatrix(ours.data, ours.get_label(),
                                                          qid=[1, 1, 1, 4, 4, 10]), 3)
    assert from_file.save_raw() == in_memory.save_raw()
    ours.save_binary(tmp_path / "rank.dmatrix")
    back = daskboost.DMatrix(str(tmp_path / "rank.dmatrix"))
    np.testing.assert_array_equal(back.qid, ours.qid)
    # query ids given to the constructor win over the file's (as its label does)
    assert daskboost.DMatrix(f"{path}?format=libsvm", group=[3, 3]).get_group().tolist() \
        == [3, 3]
    down = write(tmp_path, "down.txt", "1 qid:2 0:1\n0 qid:1 0:2\n")
    with pytest.raises(ValueError, match="qid 1 follows qid 2 at row 1"):  # (as xgboost)
        daskboost.train(params, daskboost.DMatrix(f"{down}?format=libsvm"), 1)


def test_csv_as_xgboost(tmp_path):
    path = write(tmp_path, "train.csv", CSV)
    matrix = assert_as_xgboost(f"{path}?format=csv&label_column=0")
    assert isinstance(matrix.data, np.ndarray) and matrix.data.dtype == np.float32
    np.testing.assert_array_equal(
        matrix.data, [[2.5, np.nan, 0], [np.nan, 4, 1], [-1, 0, 5], [1e3, -7.25, 3]])
    assert_as_xgboost(f"{path}?format=csv")                         # no label
    weighted = assert_as_xgboost(f"{path}?format=csv&label_column=3&weight_column=0")
    np.testing.assert_array_equal(weighted.get_weight(), [1, 0, 1, 2])
    semicolons = write(tmp_path, "semi.csv", CSV.replace(",", ";") + "\n")
    ours = assert_as_xgboost(f"{semicolons}?format=csv&label_column=0&delimiter=;")
    # an empty label field is a NaN label (xgboost 3.2 reads 0)
    np.testing.assert_array_equal(
        daskboost.DMatrix(f"{semicolons}?format=csv&label_column=1&delimiter=;").get_label(),
        np.array([2.5, np.nan, -1, 1e3], dtype=np.float32))
    # a line of blanks is skipped too (xgboost 3.2 fails on it: no delimiter)
    blanks = write(tmp_path, "blanks.csv", CSV.replace("\n", "\n \t\n", 1).replace(",", ";"))
    np.testing.assert_array_equal(
        daskboost.DMatrix(f"{blanks}?format=csv&label_column=0&delimiter=;").data, ours.data)


def test_numbers_are_correctly_rounded(tmp_path):
    # the fast path (<= 15 digits) and numpy's conversion (the rest: long numbers, large
    # exponents, nan, inf) both give float32(float(text)), pandas' value too
    rng = np.random.default_rng(3)
    values = rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000)
    texts = ([f"{v:.6g}" for v in values[:1000]] + [f"{v:.9g}" for v in values[1000:2000]]
             + [f"{v:.17g}" for v in values[2000:]] + ["nan", "-inf", "1e400", "-0", ".5",
                                                       "+3.", "1E2", "0.000"])
    path = write(tmp_path, "numbers.csv", "\n".join(f"{i},{t}" for i, t in enumerate(texts)))
    matrix = daskboost.DMatrix(f"{path}?format=csv&label_column=0")
    expected = np.array([float(t) for t in texts]).astype(np.float32)
    np.testing.assert_array_equal(matrix.data[:, 0], expected)
    assert np.signbit(matrix.data[-5, 0])                          # -0 is -0
    np.testing.assert_array_equal(
        matrix.data[:, 0],
        pd.read_csv(path, header=None, float_precision="round_trip")[1].to_numpy(np.float32))


@pytest.mark.parametrize("digits", [1, 6, 9, 15])
def test_the_fast_path_is_floats_conversion(digits):
    # the kernel's own conversion (Clinger's fast path) against Python's float(): equal
    # float64s where it takes a number; what it does not take is left to numpy
    rng = np.random.default_rng(digits)
    values = rng.standard_normal(2000) * 10.0 ** rng.integers(-12, 12, 2000)
    texts = [f"{v:.{digits}g}" for v in values] + [f"{v:.{digits}f}" for v in values[:200]]
    taken = 0
    for text in texts:
        buf = np.frombuffer(text.encode(), dtype=np.uint8)
        ok, value = text_files._fast_number(buf, 0, buf.size)
        assert not ok or (value == float(text) and np.signbit(value) == text.startswith("-"))
        taken += ok
    assert taken > 0.7 * len(texts)   # (not taken: over 15 digits, or beyond 1e22)
    for text in ("nan", "inf", "1e400", "0.12345678901234567", "1e-30", "1.2.3", "1e", "",
                 "-", ".", "1_0", "0x10"):
        buf = np.frombuffer(text.encode(), dtype=np.uint8)
        assert not text_files._fast_number(buf, 0, buf.size)[0], text


def test_a_file_trains_as_the_same_data_in_memory(tmp_path):
    rng = np.random.default_rng(7)
    X = np.where(rng.uniform(size=(300, 5)) < 0.3, np.nan, rng.integers(0, 4, (300, 5)))
    X[rng.uniform(size=X.shape) < 0.1] = 0                         # explicit zeros
    y = np.array([float(f"{v:.6g}") for v in np.nansum(X, axis=1) + rng.normal(size=300)])
    lines = [" ".join([f"{label:.6g}"] + [f"{j}:{v:g}" for j, v in enumerate(row)
                                           if not np.isnan(v)]) for label, row in zip(y, X)]
    path = write(tmp_path, "train.txt", "\n".join(lines) + "\n")
    params = {"tree_method": "hist", "max_depth": 3}
    from_file = daskboost.train(params, daskboost.DMatrix(f"{path}?format=libsvm"), 5)
    in_memory = daskboost.train(
        params, daskboost.DMatrix(X.astype(np.float32), label=y.astype(np.float32)), 5)
    assert from_file.save_raw() == in_memory.save_raw()
    np.testing.assert_array_equal(from_file.predict(daskboost.DMatrix(X)),
                                  in_memory.predict(daskboost.DMatrix(X)))


def test_paths_and_arguments_with_a_file(tmp_path, monkeypatch):
    path = write(tmp_path, "train.csv", CSV)
    uri = f"{path}?format=csv&label_column=0"
    for given in (pathlib.Path(uri), os.fsencode(uri)):
        assert daskboost.DMatrix(given).num_row() == 4
    monkeypatch.setenv("HOME", str(tmp_path))
    assert daskboost.DMatrix("~/train.csv?format=csv&label_column=0").num_col() == 3
    # label= and weight= win over the file's, as xgboost's (its set_info after loading)
    assert_as_xgboost(uri, label=np.arange(4.0), weight=np.full(4, 2.0))
    assert_as_xgboost(f"{write(tmp_path, 'w.txt', WEIGHTED)}?format=libsvm",
                      weight=np.array([3.0, 4.0, 5.0]))
    # feature_names / feature_types as for data in memory
    named = daskboost.DMatrix(uri, feature_names=["a", "b", "c"], feature_types=["q"] * 3)
    assert named.feature_names == ["a", "b", "c"]
    assert named.fit_params({})["feature_types"] == ["q"] * 3
    # missing: daskboost's meaning (xgboost ignores it for text files)
    masked = daskboost.DMatrix(uri, missing=0)
    assert masked.num_nonmissing() == 8 and np.isnan(masked.data[0, 2])
    libsvm = daskboost.DMatrix(f"{write(tmp_path, 't.txt', LIBSVM)}?format=libsvm", missing=0)
    assert libsvm.num_nonmissing() == 13


def test_save_binary_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5, (60, 4)).astype(np.float64)
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    y = rng.integers(0, 2, 60)
    frame = pd.DataFrame(X.astype(np.float32), columns=["a", "b", "c", "d"])
    frame["d"] = frame["d"].fillna(1).astype(np.int64)                      # mixed dtypes
    sparse = scipy.sparse.csc_matrix(np.nan_to_num(X))
    cases = [
        daskboost.DMatrix(X, label=y),
        daskboost.DMatrix(X.astype(np.float32), label=y.astype(np.float32),
                          weight=rng.uniform(size=60), base_margin=rng.normal(size=(60, 2)),
                          feature_types=["q", "c", "q", "q"], enable_categorical=True,
                          feature_weights=[1.0, 2.0, 0.5, 1.0]),
        daskboost.DMatrix(frame, label=pd.Series(y), base_margin=rng.normal(size=60)),
        daskboost.DMatrix(sparse, label=y),
    ]
    for i, matrix in enumerate(cases):
        path = tmp_path / f"m{i}.dmatrix"
        matrix.save_binary(path)
        back = daskboost.DMatrix(str(path))
        assert back.num_row() == matrix.num_row() and back.num_col() == matrix.num_col()
        assert back.feature_names == matrix.feature_names
        assert back.feature_types == matrix.feature_types
        assert back.enable_categorical == matrix.enable_categorical
        assert scipy.sparse.issparse(back.data) == scipy.sparse.issparse(matrix.data)
        np.testing.assert_array_equal(dense(back), dense(matrix))
        for name in ("label", "weight", "base_margin", "feature_weights"):
            ours, theirs = getattr(back, name), getattr(matrix, name)
            assert (ours is None) == (theirs is None)
            if ours is not None:
                np.testing.assert_array_equal(ours, np.asarray(theirs))
                assert ours.dtype == np.asarray(theirs).dtype
    assert dense(daskboost.DMatrix(str(tmp_path / "m0.dmatrix"))).dtype == np.float64
    # xgboost's demo: predictions on the matrix read back are the same
    booster = daskboost.train({"max_depth": 3}, cases[3], 3)
    read_back = daskboost.DMatrix(str(tmp_path / "m3.dmatrix"))
    np.testing.assert_array_equal(booster.predict(cases[3]), booster.predict(read_back))
    # written atomically: a refused matrix leaves an existing file as it was
    before = (tmp_path / "m0.dmatrix").read_bytes()
    with pytest.raises(TypeError, match="column 'k' has dtype category"):
        daskboost.DMatrix(pd.DataFrame({"k": pd.Categorical(["x", "y"])})).save_binary(
            tmp_path / "m0.dmatrix")
    assert (tmp_path / "m0.dmatrix").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [f"m{i}.dmatrix" for i in range(4)]


def test_save_binary_leaves_no_half_written_file(tmp_path, monkeypatch):
    path = tmp_path / "m.dmatrix"
    daskboost.DMatrix(np.ones((3, 2)), label=np.zeros(3)).save_binary(path)
    before = path.read_bytes()

    def fails_halfway(f, **arrays):
        f.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", fails_halfway)
    with pytest.raises(OSError, match="disk full"):
        daskboost.DMatrix(np.zeros((5, 2))).save_binary(path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.dmatrix"]


@pytest.mark.parametrize("make, error, match", [
    (lambda: daskboost.DMatrix(da.ones((4, 2), chunks=2)),
     TypeError, "the data is a dask collection.*parquet"),
    (lambda: daskboost.DMatrix(pd.DataFrame({"s": ["a", "b"]})), TypeError,
     "column 's' has dtype"),
    (lambda: daskboost.DMatrix(np.ones((2, 2)), label=np.array(["a", "b"])), TypeError,
     "label has dtype <U1"),
    (lambda: daskboost.DMatrix(np.ones((2, 2)), label=np.ones(3)), ValueError,
     r"label of shape \(3,\) for 2 rows"),
])
def test_save_binary_refuses_what_it_cannot_hold(tmp_path, make, error, match):
    with pytest.raises(error, match=match):
        make().save_binary(tmp_path / "x.dmatrix")
    assert os.listdir(tmp_path) == []


def crafted(tmp_path, change=None, extra=None, compress=False):
    """A binary DMatrix file of a 3 x 4 CSR matrix, its arrays changed by ``change``."""
    matrix = daskboost.DMatrix(scipy.sparse.csr_matrix(np.eye(3, 4)), label=np.arange(3.0))
    arrays = dmatrix_files._matrix_arrays(matrix)
    if change:
        change(arrays)
    path = tmp_path / "crafted.dmatrix"
    with open(path, "wb") as f:
        (np.savez_compressed if compress else np.savez)(f, **arrays)
    if extra:
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr(*extra)
    return path


def _object_array(name):
    def change(arrays):
        arrays[name] = np.array([{"a": 1}, None], dtype=object)
    return change


@pytest.mark.parametrize("kwargs, match", [
    ({}, None),
    ({"change": lambda a: a.update(format=np.array("xgboost"))}, "format marker is 'xgboost'"),
    ({"change": lambda a: a.update(version=np.array(2))}, "format version 2"),
    ({"change": lambda a: a.update(data=a["data"].astype(complex))}, "data has dtype complex"),
    ({"change": _object_array("label")}, "label has dtype object"),
    ({"change": lambda a: a.update(indptr=np.array([0, 2, 1, 3]))}, "indptr does not rise"),
    ({"change": lambda a: a.update(indptr=np.array([0, 1, 2, 4]))}, "indptr does not rise"),
    ({"change": lambda a: a.update(indices=np.array([0, 1, 4]))}, "column index outside"),
    ({"change": lambda a: a.update(indices=np.array([0, 1]))}, "CSR arrays of lengths"),
    ({"change": lambda a: a.update(kind=np.array("dense"))}, "dense data of shape"),
    ({"change": lambda a: a.update(label=np.arange(4.0))}, r"label of shape \(4,\)"),
    ({"change": lambda a: a.update(feature_names=np.array(["a", "a", "b", "c"]))},
     "not unique"),
    ({"change": lambda a: a.pop("format")}, "no format"),
    ({"extra": ("payload.pkl", b"\x80\x04K\x01.")}, "'payload.pkl' is not a member"),
    ({"extra": ("label.npy", b"")}, "'label.npy' is not a member"),
    ({"compress": True}, "compressed"),
])
def test_crafted_binary_files_are_refused(tmp_path, kwargs, match):
    path = crafted(tmp_path, **kwargs)
    if match is None:                                   # the file as written reads back
        assert daskboost.DMatrix(str(path)).num_nonmissing() == 3
        return
    with pytest.raises(ValueError, match=match):
        daskboost.DMatrix(str(path))


def test_truncated_and_foreign_binary_files_are_refused(tmp_path):
    whole = crafted(tmp_path).read_bytes()
    cut = tmp_path / "cut.dmatrix"
    cut.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(ValueError, match="cut.dmatrix"):
        daskboost.DMatrix(str(cut))
    # an .npy member whose header claims more than it holds
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 9,)})
    path = crafted(tmp_path, extra=("weight.npy", buffer.getvalue() + b"\0" * 8))
    with pytest.raises(ValueError, match="does not match its 8 bytes"):
        daskboost.DMatrix(str(path))
    other = tmp_path / "other.npz"
    np.savez(other, x=np.ones(3))
    with pytest.raises(ValueError, match="'x.npy' is not a member"):
        daskboost.DMatrix(str(other))
    xgb_binary = tmp_path / "xgb.buffer"
    xgboost.DMatrix(np.ones((2, 2))).save_binary(str(xgb_binary))
    with pytest.raises(ValueError, match="an xgboost binary DMatrix file, which is not read"):
        daskboost.DMatrix(str(xgb_binary))


@pytest.mark.parametrize("uri, error, match", [
    ("train.txt", ValueError, r"train.txt.*add '\?format=libsvm' or '\?format=csv&label_col"),
    ("absent.txt?format=libsvm", FileNotFoundError, "no such file: '.*absent.txt'"),
    ("absent.dmatrix", FileNotFoundError, "no such file"),
    ("train.txt?format=svm", ValueError, "format='svm' is not read here"),
    ("train.txt?label_column=0", ValueError, "has no format="),
    ("train.txt?format=libsvm&label_column=0", ValueError,
     "'label_column' is not a parameter of format=libsvm; its parameters are indexing_mode"),
    ("train.csv?format=csv&label_column=a", ValueError, "label_column='a' must be an integer"),
    ("train.csv?format=csv&label_column=-1", ValueError, "label_column=-1 must be a column"),
    ("train.csv?format=csv&label_column=4", ValueError,
     "label_column=4, but the file has 4 columns"),
    ("train.csv?format=csv&weight_column=9", ValueError, "weight_column=9, but the file has"),
    ("train.csv?format=csv&label_column=1&weight_column=1", ValueError,
     "label_column and weight_column are both 1"),
    ("train.csv?format=csv&delimiter=ab", ValueError, "delimiter='ab' must be one"),
    ("train.csv?format=csv&delimiter=.", ValueError, "delimiter='.' must be one ASCII"),
    ("train.txt?format=libsvm#dtrain.cache", ValueError, "'#cache' suffix is xgboost's ext"),
    ("train.csv?format=csv&format=libsvm", ValueError, "'format' given twice"),
    ("train.csv?format=csv&label_column", ValueError, "'label_column' is not name=value"),
])
def test_bad_uris_name_what_is_wrong(tmp_path, monkeypatch, uri, error, match):
    write(tmp_path, "train.txt", LIBSVM)
    write(tmp_path, "train.csv", CSV)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error, match=match):
        daskboost.DMatrix(uri)


MALFORMED = [
    ("1 0:1\n0 qid:3 1:2\n", "libsvm", "line 2: '0' \\(the label\\) and the lines before "
     "differ in having a query id"),
    ("1 qid:3 0:1\n0 1:2\n", "libsvm", "line 2: '0' \\(the label\\) and the lines before"),
    ("qid:1 0:1\n", "libsvm", "line 1: 'qid:1' is a query id away from its place"),
    ("1 0:1 qid:1\n", "libsvm", "line 1: 'qid:1' is a query id away from its place"),
    ("1 qid:x 0:1\n", "libsvm", "line 1: 'qid:x' is not qid:N with N a whole number"),
    ("1 qid:-1 0:1\n", "libsvm", "line 1: 'qid:-1' is not qid:N"),
    ("1 qid: 0:1\n", "libsvm", "line 1: 'qid:' is not qid:N"),
    ("1 qid:1:2 0:1\n", "libsvm", "line 1: 'qid:1:2' is not qid:N"),
    ("1 0:1\n\n0 1 2\n", "libsvm", "line 3: '1' is not index:value"),
    ("1 0:x\n", "libsvm", "line 1: 'x' is not a number"),
    ("1 0:1_0\n", "libsvm", "line 1: '1_0' is not a number"),
    ("1 0:1.2.3\n", "libsvm", "line 1: '1.2.3' is not a number"),
    ("1 0:\n", "libsvm", "line 1: '0:' is not index:value"),
    ("1 0:1:2\n", "libsvm", "line 1: '0:1:2' is not index:value"),
    ("1 a:1\n", "libsvm", "line 1: 'a:1' has no feature index"),
    ("1 -1:1\n", "libsvm", "line 1: '-1:1' has no feature index"),
    ("1 9999999999:1\n", "libsvm", "line 1: '9999999999:1' has a feature index above"),
    ("y 0:1\n", "libsvm", "line 1: 'y' is not a number"),
    ("1:2:3 0:1\n", "libsvm", "line 1: '1:2:3' is not a label or label:weight"),
    ("1:0.5 0:1\n#\n0 1:1\n", "libsvm", "line 3: '0' \\(label:weight\\) and the lines before"),
    ("1 0:1\n1:2 0:1\n", "libsvm", "line 2: '1:2' \\(label:weight\\)"),
    ("1 0:1\n0 2:1 1:3 2:4\n", "libsvm", "line 2: feature index 2 appears twice"),
    ("1 0:1\n0 1:3\n", "libsvm&indexing_mode=1", "line 1: feature index 0, but indexing_m"),
    ("y,a,b\n1,2,3\n", "csv&label_column=0", "line 1: '[yab]' is not a number.*no header"),
    ("1,2,3\n\n1,2\n", "csv&label_column=0", "line 3: 2 fields, but 3 on the lines before"),
    ('1,"2",3\n', "csv&label_column=0", "line 1: '\"2\"' is not a number"),
    ("1,2,3\n4,5,6e\n", "csv&label_column=0", "line 2: '6e' is not a number.*no header"),
    ("1 0:1\n0 1:2\n\n1 0:1.2.3\n", "libsvm", "line 4: '1.2.3' is not a number"),
    ("1,2,3\n1,2,3,4\n1,2\n", "csv&label_column=0", "line 2: 4 fields, but 3 on"),
    # the first error in line order: a number, then a line of another width
    ("1,2,3\n1,2,x\n1,2\n", "csv&label_column=0", "line 2: 'x' is not a number"),
    ("1,2,3\n1,2,1.2.3\n1,2\n", "csv&label_column=0", "line 2: '1.2.3' is not a number"),
    ("1 0:1\n0 0:1.2.3\n1 0:1:2\n", "libsvm", "line 2: '1.2.3' is not a number"),
    ("1 0:1\n0 0:1e400\n1 0:1:2\n", "libsvm", "line 3: '0:1:2' is not index:value"),
    ("1,2,3\n1,2,x\n1,2,3\n", "csv&label_column=0", "line 2: 'x' is not a number"),
    ("1,2\n1,2,3\n1,x,3\n", "csv&label_column=0", "line 2: 3 fields, but 2 on"),
]


@pytest.mark.parametrize("text, uri, match", MALFORMED)
def test_malformed_lines_name_the_line(tmp_path, text, uri, match):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match=f"bad.txt, {match}"):
        daskboost.DMatrix(f"{path}?format={uri}")


def test_a_file_in_pieces_reads_as_at_once(tmp_path, monkeypatch):
    """Windows as small as a few bytes (a line longer than one makes it larger) cut into
    pieces as small as a line, each on a thread of its own, against the file read at
    once: the same matrix, labels and weights, and the same first error and line."""
    rng = np.random.default_rng(4)
    numbers = "\n".join(f"{i},{v:.17g},{'nan' if i % 7 == 0 else i}"
                        for i, v in enumerate(rng.standard_normal(50)))
    files = [(LIBSVM, "libsvm"), (WEIGHTED, "libsvm"), ("\ufeff" + LIBSVM, "libsvm"),
             (RANKED, "libsvm"),
             ("\n\n# none\n" + LIBSVM + "\n\n", "libsvm"), (CSV, "csv&label_column=0"),
             (CSV, "csv&label_column=1&weight_column=0"), ("\n\n" + CSV, "csv&label_column=0"),
             (numbers, "csv&label_column=0")]
    at_once = []
    for i, (text, uri) in enumerate(files):
        path = write(tmp_path, f"f{i}.txt", text)
        at_once.append(daskboost.DMatrix(f"{path}?format={uri}", nthread=1))
    most = []
    pieces = text_files._Reading.pieces
    monkeypatch.setattr(text_files._Reading, "pieces",
                        lambda self, *a: most.append(len(pieces(self, *a))) or pieces(self, *a))
    monkeypatch.setattr(text_files, "_MIN_PIECE_BYTES", 1)
    for window in (4, 16, 64):
        monkeypatch.setattr(text_files, "_WINDOW_BYTES", window)
        for (text, uri), expected in zip(files, at_once):
            path = tmp_path / f"f{files.index((text, uri))}.txt"
            for n in (1, 3):
                read = daskboost.DMatrix(f"{path}?format={uri}", nthread=n)
                np.testing.assert_array_equal(dense(read), dense(expected))
                for field in ("label", "weight"):
                    np.testing.assert_array_equal(read.get_float_info(field),
                                                  expected.get_float_info(field))
                assert (read.qid is None) == (expected.qid is None)
                if read.qid is not None:
                    np.testing.assert_array_equal(read.qid, expected.qid)
        for text, uri, match in MALFORMED:
            path = write(tmp_path, "bad.txt", text)
            with pytest.raises(ValueError, match=f"bad.txt, {match}"):
                daskboost.DMatrix(f"{path}?format={uri}", nthread=4)
    assert max(most) > 1   # (pieces were read on several threads)


def test_feature_names_name_a_libsvm_files_features(tmp_path):
    """The names go with the sparse rows into the model (and a binary file), which
    predicts as the unnamed one; a matrix with other names is refused by predict."""
    path = write(tmp_path, "t.txt", LIBSVM)
    unnamed = daskboost.DMatrix(f"{path}?format=libsvm")
    names = [f"f{i}" for i in range(unnamed.num_col())]
    named = daskboost.DMatrix(f"{path}?format=libsvm", feature_names=names)
    assert scipy.sparse.issparse(named.data) and named.feature_names == names
    params = {"max_depth": 2, "min_child_weight": 0}
    booster = daskboost.train(params, named, 3)
    assert booster.feature_names == names and set(booster.get_score()) <= set(names)
    assert np.array_equal(booster.predict(named),
                          daskboost.train(params, unnamed, 3).predict(unnamed))
    named.save_binary(tmp_path / "named.bin")
    assert daskboost.DMatrix(str(tmp_path / "named.bin")).feature_names == names
    renamed = daskboost.DMatrix(f"{path}?format=libsvm", feature_names=names[::-1])
    with pytest.raises(ValueError, match="feature_names .* are not the model's"):
        booster.predict(renamed)
    with pytest.raises(ValueError, match="more than once"):
        daskboost.DMatrix(f"{path}?format=libsvm", feature_names=["a"] * len(names))


def test_empty_files(tmp_path):
    libsvm = daskboost.DMatrix(f"{write(tmp_path, 'e.txt', '# nothing')}?format=libsvm")
    csv = daskboost.DMatrix(f"{write(tmp_path, 'e.csv', '')}?format=csv&label_column=0")
    assert (libsvm.num_row(), libsvm.num_col()) == (0, 0) == (csv.num_row(), csv.num_col())
    assert csv.get_label().shape == (0,)
