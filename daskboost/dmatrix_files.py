"""xgboost's ``DMatrix`` files: text URIs read as xgboost 2+ reads them, and
daskboost's own binary file of a matrix (``DMatrix.save_binary``) written and read.

Text: ``"path?format=libsvm"`` and ``"path?format=csv&label_column=K"``, the URI
parameters xgboost's parsers take (others are refused by name), read by ``text_files``.

Binary: a numpy ``.npz`` archive (not xgboost's binary format, which is not read here):
a format marker and version, the matrix's shape and its data (a dense numeric array, or
a CSR matrix's data/indices/indptr), and the label, weight, base_margin, feature names,
feature types and feature weights that are set.  It is written atomically.  Reading
treats it as untrusted: no pickles, every member's dtype and shape checked against its
size on disk before it is read, and the arrays' consistency (lengths, CSR structure)
before anything is built from them.
"""

import collections
import errno
import math
import os
import zipfile

import numpy as np

from .data import is_dask_collection
from .local_threads import local_thread_count
from .sparse import is_sparse
from .text_files import read_text_file, scipy_sparse

__all__ = ["FORMAT_MARKER", "FORMAT_VERSION", "FileMatrix", "read_matrix_file",
           "write_matrix_file"]

FORMAT_MARKER = "daskboost.DMatrix"
FORMAT_VERSION = 1

# what a file holds beside its data, as DMatrix's constructor arguments
FileMatrix = collections.namedtuple(
    "FileMatrix", ["data", "label", "weight", "base_margin", "feature_names",
                   "feature_types", "feature_weights", "enable_categorical", "qid"],
    defaults=(None,) * 6 + (False, None))

# the URI parameters of xgboost's parsers, beside format
_PARAMETERS = {"libsvm": ("indexing_mode",), "csv": ("label_column", "weight_column",
                                                     "delimiter")}
_NPZ_MAGIC = b"PK\x03\x04"
_XGBOOST_BINARY_MAGIC = b"\x01\xab\xff\xff"


def read_matrix_file(uri, caller="DMatrix", n_threads=None):
    """The matrix in the file ``uri`` (str, bytes or os.PathLike; ``~`` expanded): a
    text file with xgboost's ``?format=`` URI, or a file written by ``save_binary``.
    A text file is parsed in pieces on ``n_threads`` threads (default
    ``local_thread_count()``); the matrix, and the first error, do not depend on them.
    Returns a ``FileMatrix``."""
    text = os.fsdecode(os.fspath(uri))
    path, fmt, params = _parsed_uri(text, caller)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, f"{caller}: no such file", path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, f"{caller}: a directory, not a file", path)
    if fmt is None:
        with open(path, "rb") as f:
            head = f.read(4)
        if head == _NPZ_MAGIC:
            return read_binary(path)
        if head == _XGBOOST_BINARY_MAGIC:
            raise ValueError(f"{caller}({path!r}): an xgboost binary DMatrix file, which is "
                             "not read here; save the matrix as text (libsvm/csv) with "
                             "xgboost, or with daskboost's DMatrix.save_binary")
        raise ValueError(f"{caller}({path!r}): not a file written by DMatrix.save_binary; a "
                         "text file needs its format in the URI (as xgboost 2+): add "
                         "'?format=libsvm' or '?format=csv&label_column=K'")
    data, label, weight, qid = read_text_file(
        path, fmt, params, local_thread_count() if n_threads is None else n_threads)
    return FileMatrix(data, label=label, weight=weight, qid=qid)


# ---- the URI -------------------------------------------------------------------------------

def _parsed_uri(text, caller):
    """``(path, format or None, {parameter: value})`` of a URI; ValueError for an unknown
    format or parameter, or a value that is not one."""
    path, question, query = text.partition("?")
    path = os.path.expanduser(path)
    if not question:
        return path, None, {}
    if "#" in query:
        raise ValueError(f"{caller}({text!r}): a '#cache' suffix is xgboost's external "
                         "memory for text files, which xgboost 2 removed and is not read "
                         "here (a dask collection, or a parquet lake, is larger than memory)")
    given = {}
    for item in query.split("&"):
        if not item:
            continue
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ValueError(f"{caller}({text!r}): URI parameter {item!r} is not name=value")
        if key in given:
            raise ValueError(f"{caller}({text!r}): URI parameter {key!r} given twice")
        given[key] = value
    fmt = given.pop("format", None)
    if fmt not in _PARAMETERS:
        said = "has no format=" if fmt is None else f"format={fmt!r} is not read here"
        raise ValueError(f"{caller}({text!r}): the URI {said}; the formats are "
                         "'?format=libsvm' and '?format=csv&label_column=K'")
    allowed = _PARAMETERS[fmt]
    for key in given:
        if key not in allowed:
            raise ValueError(f"{caller}({text!r}): {key!r} is not a parameter of "
                             f"format={fmt}; its parameters are {', '.join(allowed)}")
    params = {}
    for key, value in given.items():
        if key == "delimiter":
            if len(value) != 1 or ord(value) > 127 or value.isalnum() or value in '+-.\n"':
                raise ValueError(f"{caller}({text!r}): delimiter={value!r} must be one "
                                 "ASCII character that is not part of a number, a newline "
                                 "or a quote")
            params[key] = value
            continue
        try:
            number = int(value, 10)
        except ValueError:
            raise ValueError(f"{caller}({text!r}): {key}={value!r} must be an integer") \
                from None
        if key != "indexing_mode" and number < 0:
            raise ValueError(f"{caller}({text!r}): {key}={number} must be a column position "
                             "from 0 (leave it out when the file has no such column)")
        params[key] = number
    if params.get("label_column") is not None and \
            params.get("label_column") == params.get("weight_column"):
        raise ValueError(f"{caller}({text!r}): label_column and weight_column are both "
                         f"{params['label_column']}; they must be different columns")
    return path, fmt, params


# ---- binary --------------------------------------------------------------------------------

_MEMBERS = {   # name: (kinds of dtype, dimensions allowed)
    "format": ("U", (0,)), "version": ("i", (0,)), "kind": ("U", (0,)),
    "shape": ("i", (1,)), "data": ("biuf", (1, 2)), "indices": ("i", (1,)),
    "indptr": ("i", (1,)), "label": ("biuf", (1, 2)), "weight": ("biuf", (1,)),
    "base_margin": ("biuf", (1, 2)), "feature_names": ("U", (1,)),
    "feature_types": ("U", (1,)), "feature_weights": ("biuf", (1,)),
    "enable_categorical": ("b", (0,)), "qid": ("iu", (1,)),
}
_INFO = ("label", "weight", "base_margin", "qid")
_FEATURE_INFO = ("feature_names", "feature_types", "feature_weights")


def write_matrix_file(fname, matrix):
    """Write ``matrix`` (a ``DMatrix``) to ``fname`` as daskboost's binary DMatrix file,
    atomically; ValueError/TypeError naming what it cannot hold, before anything is
    written."""
    from .booster import write_atomically   # (booster imports dmatrix, which imports this)
    arrays = _matrix_arrays(matrix)
    _checked(arrays, "save_binary")
    path = os.path.expanduser(os.fspath(fname))
    write_atomically(path, lambda f: np.savez(f, **arrays), binary=True)


def _matrix_arrays(matrix):
    arrays = {"format": np.array(FORMAT_MARKER), "version": np.array(FORMAT_VERSION)}
    data = matrix.data
    if is_dask_collection(data):
        raise TypeError("save_binary: the data is a dask collection; a binary DMatrix file "
                        "holds in-memory data.  Write the collection as a parquet lake "
                        "(dd.to_parquet) and read it with dd.read_parquet instead")
    if is_sparse(data):
        csr = data.tocsr()
        arrays.update(kind=np.array("csr"), data=np.asarray(csr.data),
                      indices=np.asarray(csr.indices), indptr=np.asarray(csr.indptr))
        _numeric(arrays["data"], "the data (a sparse matrix's values)")
    elif hasattr(data, "columns") and hasattr(data, "dtypes"):   # a pandas DataFrame
        arrays.update(kind=np.array("dense"), data=frame_values(data))
    else:
        values = np.asarray(data)
        _numeric(values, "the data")
        arrays.update(kind=np.array("dense"), data=values)
    arrays["shape"] = np.array(data.shape, dtype=np.int64)
    if matrix.feature_names is not None:  # (a frame's columns, or a sparse matrix's names)
        arrays["feature_names"] = np.array(matrix.feature_names, dtype=str)
    for name in _INFO:
        value = getattr(matrix, name)
        if value is not None:
            arrays[name] = _info_array(value, name)
    if matrix.feature_types is not None:
        arrays["feature_types"] = np.array([str(t) for t in matrix.feature_types], dtype=str)
    if matrix.feature_weights is not None:
        arrays["feature_weights"] = _info_array(matrix.feature_weights, "feature_weights")
    arrays["enable_categorical"] = np.array(bool(matrix.enable_categorical))
    return arrays


def _numeric(values, what):
    if values.dtype.kind not in "biuf":
        raise TypeError(f"save_binary: {what} has dtype {values.dtype}; a binary DMatrix "
                        "file holds numbers only (write strings or categories to a parquet "
                        "lake instead: df.to_parquet / dd.to_parquet)")


def frame_values(frame, caller="save_binary", advice=" (a binary DMatrix file holds "
                 "numbers only: write the frame as a parquet lake instead, df.to_parquet, "
                 "read with dd.read_parquet)"):
    """A pandas DataFrame's values as one numeric array: its dtype when the columns
    share one numpy dtype, else float64 (missing values NaN); TypeError from ``caller``
    naming a column that is not numeric."""
    import pandas as pd
    for column, dtype in frame.dtypes.items():
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) \
                or isinstance(dtype, pd.CategoricalDtype):
            raise TypeError(f"{caller}: column {column!r} has dtype {dtype}, not numbers"
                            f"{advice}")
    dtypes = set(frame.dtypes)
    if len(dtypes) == 1 and isinstance(next(iter(dtypes)), np.dtype):
        return frame.to_numpy()
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


def _info_array(value, name):
    if is_dask_collection(value):
        raise TypeError(f"save_binary: {name} is a dask collection; a binary DMatrix file "
                        "holds in-memory data (compute it first, or write a parquet lake)")
    array = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    _numeric(array, name)
    return array


def read_binary(path):
    """The ``FileMatrix`` in daskboost's binary DMatrix file ``path``; ValueError for a
    file that is not one, or is not consistent."""
    try:
        arrays = _archive_arrays(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise ValueError(f"{path}: not a readable binary DMatrix file ({error})") from None
    _checked(arrays, path)
    data = arrays["data"]
    if str(arrays["kind"]) == "csr":
        sparse = scipy_sparse(path)
        data = sparse.csr_matrix((data, arrays["indices"], arrays["indptr"]),
                                 shape=tuple(int(n) for n in arrays["shape"]))
    names = arrays.get("feature_names")
    types = arrays.get("feature_types")
    return FileMatrix(
        data, label=arrays.get("label"), weight=arrays.get("weight"),
        base_margin=arrays.get("base_margin"),
        feature_names=None if names is None else [str(n) for n in names],
        feature_types=None if types is None else [str(t) for t in types],
        feature_weights=arrays.get("feature_weights"),
        enable_categorical=bool(arrays.get("enable_categorical", False)),
        qid=arrays.get("qid"))


def _archive_arrays(path):
    """The members of the archive at ``path``, each checked (name, dtype, dimensions,
    size against the bytes stored) before it is read; never a pickle."""
    arrays = {}
    size = os.path.getsize(path)
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if name not in _MEMBERS or name in arrays:
                raise ValueError(f"{path}: {info.filename!r} is not a member of a binary "
                                 "DMatrix file")
            kinds, dimensions = _MEMBERS[name]
            if info.compress_type != zipfile.ZIP_STORED or info.compress_size != \
                    info.file_size or info.header_offset + info.file_size > size:
                raise ValueError(f"{path}: {name} is compressed or larger than the file "
                                 "(save_binary stores arrays as they are)")
            with archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
                else:
                    raise ValueError(f"{path}: {name} is in .npy version {version}")
                header_size = f.tell()
            if dtype.hasobject or dtype.kind not in kinds or not dtype.isnative \
                    or dtype.fields is not None or dtype.subdtype is not None:
                raise ValueError(f"{path}: {name} has dtype {dtype}, not one of a binary "
                                 "DMatrix file")
            if len(shape) not in dimensions:
                raise ValueError(f"{path}: {name} has shape {shape}")
            if math.prod(shape) * dtype.itemsize != info.file_size - header_size:
                raise ValueError(f"{path}: {name} of shape {shape} and dtype {dtype} does not "
                                 f"match its {info.file_size - header_size} bytes")
            with archive.open(info) as f:
                arrays[name] = np.lib.format.read_array(f, allow_pickle=False)
    return arrays


def _checked(arrays, where):
    """ValueError unless ``arrays`` are a consistent binary DMatrix file."""
    def bad(message):
        return ValueError(f"{where}: {message}")
    for name in ("format", "version", "kind", "shape", "data"):
        if name not in arrays:
            raise bad(f"no {name}: not a binary DMatrix file")
    for name, array in arrays.items():
        kinds, dimensions = _MEMBERS[name]
        if array.dtype.kind not in kinds or array.ndim not in dimensions or array.dtype.hasobject:
            raise bad(f"{name} has dtype {array.dtype} and shape {array.shape}")
    if str(arrays["format"]) != FORMAT_MARKER:
        raise bad(f"the format marker is {str(arrays['format'])[:40]!r}, not "
                  f"{FORMAT_MARKER!r}: not a binary DMatrix file")
    if int(arrays["version"]) != FORMAT_VERSION:
        raise bad(f"format version {int(arrays['version'])}; this daskboost reads version "
                  f"{FORMAT_VERSION}")
    shape = arrays["shape"]
    if shape.shape != (2,) or shape.min() < 0 or shape.max() > 2 ** 62:
        raise bad(f"shape {shape.tolist()} is not (rows, columns)")
    n_rows, n_cols = int(shape[0]), int(shape[1])
    kind = str(arrays["kind"])
    data = arrays["data"]
    if kind == "dense":
        if data.shape != (n_rows, n_cols) or "indices" in arrays or "indptr" in arrays:
            raise bad(f"dense data of shape {data.shape} for a shape of {(n_rows, n_cols)}")
    elif kind == "csr":
        if "indices" not in arrays or "indptr" not in arrays:
            raise bad("a CSR matrix without its indices and indptr")
        indices, indptr = arrays["indices"], arrays["indptr"]
        if data.ndim != 1 or indices.shape != data.shape or indptr.shape != (n_rows + 1,):
            raise bad(f"CSR arrays of lengths data {data.shape}, indices {indices.shape}, "
                      f"indptr {indptr.shape} for {n_rows} rows")
        if indptr[0] != 0 or indptr[-1] != data.size or np.any(np.diff(indptr) < 0):
            raise bad("the CSR indptr does not rise from 0 to the number of entries")
        if indices.size and (indices.min() < 0 or indices.max() >= n_cols):
            raise bad(f"a CSR column index outside [0, {n_cols})")
    else:
        raise bad(f"kind {kind[:20]!r} is neither 'dense' nor 'csr'")
    for name in _INFO:
        if name in arrays and arrays[name].shape[:1] != (n_rows,):
            raise bad(f"{name} of shape {arrays[name].shape} for {n_rows} rows")
    for name in _FEATURE_INFO:
        if name in arrays and arrays[name].shape != (n_cols,):
            raise bad(f"{name} of shape {arrays[name].shape} for {n_cols} features")
    names = arrays.get("feature_names")
    if names is not None and len(set(names.tolist())) != n_cols:
        raise bad("feature_names are not unique")
    if "enable_categorical" in arrays and arrays["enable_categorical"].shape != ():
        raise bad("enable_categorical is not one value")
