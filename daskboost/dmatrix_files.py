"""xgboost's ``DMatrix`` files: text URIs read as xgboost 2+ reads them, and
daskboost's own binary file of a matrix (``DMatrix.save_binary``) written and read.

Text: ``"path?format=libsvm"`` and ``"path?format=csv&label_column=K"``, the URI
parameters xgboost's parsers take (others are refused by name):

- libsvm: a line is ``label[:weight] index:value ...``; ``#`` starts a comment, blank
  lines are skipped.  An entry not on a line is missing (the rows are a scipy.sparse CSR
  matrix, float32); every entry written is a value, zeros included; ``nan`` is missing
  (a stored NaN, as in any scipy.sparse matrix here).
  Indices are 0-based (``indexing_mode=0``, xgboost's default); ``indexing_mode=1`` reads
  them from 1, a negative one from 1 when no index is 0.  There are as many columns as
  the largest index + 1.  ``qid:`` is refused (daskboost does no ranking), and so are
  what xgboost's parser reads silently as something else: a line without a weight among
  weighted lines (xgboost: weight 0), an index twice on a line, a token that is not a
  number or not ``index:value``.
- csv: ``label_column`` and ``weight_column`` (0-based positions, each optional) and
  ``delimiter`` (one character, ``,`` by default); the other columns are the features,
  a dense float32 array; an empty field (or ``nan``) is missing.  Every line has the same
  number of fields; there is no header line and no quoting.

Malformed content is a ValueError naming the file and the line.  One numba pass over
the file's bytes checks the structure and fills the arrays, converting each number
itself where its float64 is one exact operation (at most 15 significant digits, a power
of ten within 1e22: Clinger's fast path); a second pass, only when some are not (nan,
inf, longer numbers), hands those to numpy's conversion.  A large file is cut at line
starts into one piece per thread, each parsed into arrays of its own, then joined; when
a piece is malformed, or the pieces disagree (weights on some lines only, another number
of CSV fields), the file is parsed again in one piece, so the error is the one a single
pass finds first, whatever the threads.  Numbers become float32 from
the correctly rounded float64, as numpy's and pandas' do (xgboost's own parser is one
float32 ulp off in a few percent of values, ``1.999283`` among them).

Binary: a numpy ``.npz`` archive (not xgboost's binary format, which is not read here):
a format marker and version, the matrix's shape and its data (a dense numeric array, or
a CSR matrix's data/indices/indptr), and the label, weight, base_margin, feature names,
feature types and feature weights that are set.  It is written atomically.  Reading
treats it as untrusted: no pickles, every member's dtype and shape checked against its
size on disk before it is read, and the arrays' consistency (lengths, CSR structure)
before anything is built from them.
"""

import collections
import concurrent.futures
import errno
import math
import os
import zipfile

import numba
import numpy as np

from .data import is_dask_collection
from .local_threads import local_thread_count
from .sparse import is_sparse

__all__ = ["FORMAT_MARKER", "FORMAT_VERSION", "FileMatrix", "read_matrix_file",
           "write_matrix_file"]

FORMAT_MARKER = "daskboost.DMatrix"
FORMAT_VERSION = 1

# what a file holds beside its data, as DMatrix's constructor arguments
FileMatrix = collections.namedtuple(
    "FileMatrix", ["data", "label", "weight", "base_margin", "feature_names",
                   "feature_types", "feature_weights", "enable_categorical"],
    defaults=(None,) * 6 + (False,))

# the URI parameters of xgboost's parsers, beside format
_PARAMETERS = {"libsvm": ("indexing_mode",), "csv": ("label_column", "weight_column",
                                                     "delimiter")}
_NPZ_MAGIC = b"PK\x03\x04"
_XGBOOST_BINARY_MAGIC = b"\x01\xab\xff\xff"
_CHUNK = 2 ** 16                # numbers converted by numpy at once
_MAX_INDEX = 2 ** 31 - 2        # the largest feature index (the column count fits int32)


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
    buf = np.fromfile(path, dtype=np.uint8)
    n_threads = local_thread_count() if n_threads is None else n_threads
    if fmt == "libsvm":
        return _read_libsvm(buf, path, params, n_threads)
    return _read_csv(buf, path, params, n_threads)


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


# ---- text: the kernels ---------------------------------------------------------------------

_OK, _BAD_NUMBER, _BAD_ENTRY, _BAD_INDEX, _BIG_INDEX, _QID, _MIXED_WEIGHTS, _BAD_LABEL, \
    _RAGGED = range(9)
_COUNT, _FILL, _FALLBACKS = 0, 1, 2    # what a pass over the bytes does
_LABEL, _WEIGHT, _VALUE = -1, -2, -3   # a number's place (>= 0: a CSV feature column)
_POW10 = np.array([10.0 ** k for k in range(23)])   # exact in float64


@numba.njit(nogil=True, cache=True, inline="always")
def _is_blank(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12   # space \t \r \v \f


@numba.njit(nogil=True, cache=True)
def _fast_number(buf, s, e):
    """``(True, value)`` when buf[s:e] is a decimal number whose float64 is one exact
    product or quotient (at most 15 significant digits, a power of ten within 1e22:
    Clinger's fast path, so ``value`` is the correctly rounded float64, as numpy's and
    Python's conversion); ``(False, nan)`` for anything else (nan, inf, longer numbers,
    and what is not a number), which numpy then converts or refuses."""
    i = s
    negative = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        negative = buf[i] == 45
        i += 1
    mantissa = 0
    digits = 0
    fraction = 0
    seen = False
    point = False
    while i < e:
        c = buf[i]
        if 48 <= c <= 57:
            seen = True
            if mantissa or c != 48:
                digits += 1
                if digits > 15:
                    return False, np.nan
                mantissa = mantissa * 10 + (c - 48)
            if point:
                fraction += 1
        elif c == 46 and not point:
            point = True
        else:
            break
        i += 1
    if not seen:
        return False, np.nan
    exponent = 0
    if i < e and buf[i] | 32 == 101:   # e / E
        i += 1
        minus = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            minus = buf[i] == 45
            i += 1
        n = 0
        while i < e and 48 <= buf[i] <= 57 and n < 5:
            exponent = exponent * 10 + (buf[i] - 48)
            n += 1
            i += 1
        if n == 0:
            return False, np.nan
        if minus:
            exponent = -exponent
    if i != e:
        return False, np.nan
    exponent -= fraction
    if mantissa == 0:
        value = 0.0
    elif exponent > 22 or exponent < -22:
        return False, np.nan
    elif exponent >= 0:
        value = mantissa * _POW10[exponent]
    else:
        value = mantissa / _POW10[-exponent]
    return True, -value if negative else value


@numba.njit(nogil=True, cache=True)
def _number_chars(buf, start, stop):
    """Whether buf[start:stop] is made of the characters of a number (digits, sign,
    point, exponent, or the letters of nan / inf / infinity): what numpy may convert."""
    for i in range(start, stop):
        c = buf[i]
        lower = c | 32
        if not ((48 <= c <= 57) or c == 43 or c == 45 or c == 46 or lower == 101
                or lower == 110 or lower == 97 or lower == 105 or lower == 102
                or lower == 116 or lower == 121):
            return False
    return True


@numba.njit(nogil=True, cache=True)
def _number(buf, s, e, mode, place, slot, line, out, fallbacks, n_fallbacks):
    """The number at buf[s:e] into ``out[slot]`` (``_FILL``: the fast path's value or
    NaN), or, when the fast path does not take it, its place, slot, span and line as
    row ``n_fallbacks`` of ``fallbacks`` (``_FALLBACKS``).  Returns the new count of
    fallbacks, or -1 when the text cannot be a number."""
    ok, value = _fast_number(buf, s, e)
    if mode == _FILL:
        out[slot] = value
    if ok:
        return n_fallbacks
    if mode == _FALLBACKS:
        if e - s > 100 or not _number_chars(buf, s, e):
            return -1
        fallbacks[n_fallbacks, 0] = place
        fallbacks[n_fallbacks, 1] = slot
        fallbacks[n_fallbacks, 2] = s
        fallbacks[n_fallbacks, 3] = e
        fallbacks[n_fallbacks, 4] = line
    return n_fallbacks + 1


@numba.njit(nogil=True, cache=True)
def _is_qid(buf, start, stop):
    return (stop - start == 3 and buf[start] | 32 == 113 and buf[start + 1] | 32 == 105
            and buf[start + 2] | 32 == 100)


@numba.njit(nogil=True, cache=True)
def _libsvm_pass(buf, begin, end, mode, label, weight, indptr, indices, values, row_line,
                 fallbacks):
    """One pass over the lines of a libsvm file's bytes ``buf[begin:end]`` (``begin`` a
    line's start; lines counted from 1 there).  ``_FILL``: the labels, weights,
    feature indices and values (the fast path's; NaN where numpy is to convert), each
    row's end in ``indptr[1:]`` and its line; the arrays have room for the rows and
    entries there can be (lines, colons).  ``_FALLBACKS`` (after a ``_FILL`` pass that
    was ``_OK``): the numbers left to numpy, in ``fallbacks`` (their spans in ``buf``).
    Returns ``(status, line, start, stop, rows, entries, weighted rows, fallbacks,
    unsorted)``: the first malformed token's line and span when status is not ``_OK``;
    ``unsorted``: some line's indices do not rise."""
    n = end
    pos = begin
    if begin == 0 and n >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        pos = 3   # a UTF-8 BOM
    line = 0
    row = 0
    entry = 0
    weighted = 0
    found = 0
    unsorted = False
    while pos < n:
        line += 1
        t = pos
        k = 0
        previous = -1   # the line's last index
        while True:
            while t < n and _is_blank(buf[t]):
                t += 1
            if t >= n or buf[t] == 10 or buf[t] == 35:   # the line's end, or '#'
                break
            s = t
            colon = -1
            colons = 0
            while t < n and not _is_blank(buf[t]) and buf[t] != 10 and buf[t] != 35:
                if buf[t] == 58:
                    colons += 1
                    if colon < 0:
                        colon = t
                t += 1
            if k == 0:   # label[:weight]
                if colons == 1 and _is_qid(buf, s, colon):
                    return _QID, line, s, t, 0, 0, 0, 0, False
                if colons > 1 or colon == s or colon == t - 1:
                    return _BAD_LABEL, line, s, t, 0, 0, 0, 0, False
                if row > 0 and (colons == 1) != (weighted == row):
                    return _MIXED_WEIGHTS, line, s, t, 0, 0, 0, 0, False
                weighted += colons
                found = _number(buf, s, t if colons == 0 else colon, mode, _LABEL, row, line,
                                label, fallbacks, found)
                if found >= 0 and colons == 1:
                    found = _number(buf, colon + 1, t, mode, _WEIGHT, row, line, weight,
                                    fallbacks, found)
                if found < 0:
                    return _BAD_NUMBER, line, s, t, 0, 0, 0, 0, False
            else:        # index:value
                if colons >= 1 and _is_qid(buf, s, colon):
                    return _QID, line, s, t, 0, 0, 0, 0, False
                if colons != 1 or colon == t - 1:
                    return _BAD_ENTRY, line, s, t, 0, 0, 0, 0, False
                if colon == s or colon - s > 10:
                    return _BAD_INDEX, line, s, t, 0, 0, 0, 0, False
                index = 0
                for i in range(s, colon):
                    c = buf[i]
                    if c < 48 or c > 57:
                        return _BAD_INDEX, line, s, t, 0, 0, 0, 0, False
                    index = index * 10 + (c - 48)
                if index > _MAX_INDEX:
                    return _BIG_INDEX, line, s, t, 0, 0, 0, 0, False
                if index <= previous:
                    unsorted = True
                previous = index
                if mode == _FILL:
                    indices[entry] = index
                found = _number(buf, colon + 1, t, mode, _VALUE, entry, line, values,
                                fallbacks, found)
                if found < 0:
                    return _BAD_NUMBER, line, colon + 1, t, 0, 0, 0, 0, False
                entry += 1
            k += 1
        while t < n and buf[t] != 10:   # a comment
            t += 1
        if k > 0:
            if mode == _FILL:
                indptr[row + 1] = entry
                row_line[row] = line
            row += 1
        pos = t + 1
    return _OK, 0, 0, 0, row, entry, weighted, found, unsorted


@numba.njit(nogil=True, cache=True)
def _csv_pass(buf, begin, end, delimiter, mode, max_rows, places, data, label, weight,
              row_line, fallbacks):
    """One pass over the lines of a CSV file's bytes ``buf[begin:end]``, as
    ``_libsvm_pass``: ``places[column]`` is a feature column's position in a row of
    ``data`` (the rows' features one after the other), or ``_LABEL`` / ``_WEIGHT``; an
    empty field is NaN.  ``_COUNT`` reads the structure only, of the first ``max_rows``
    rows.  Returns ``(status, line, start, stop, rows, fields per row, fallbacks)``; a
    line with another number of fields: ``_RAGGED``, start and stop its count and the
    lines before's."""
    n = end
    pos = begin
    if begin == 0 and n >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        pos = 3
    line = 0
    row = 0
    width = -1
    found = 0
    n_features = 0
    for place in places:
        n_features += place >= 0
    while pos < n and row < max_rows:
        line += 1
        end = pos
        blank = True
        while end < n and buf[end] != 10:
            if blank and (buf[end] == delimiter or not _is_blank(buf[end])):
                blank = False
            end += 1
        if not blank:
            k = 0
            s = pos
            while True:
                e = s
                while e < end and buf[e] != delimiter:
                    e += 1
                a = s        # the field, blanks around it trimmed
                while a < e and _is_blank(buf[a]):
                    a += 1
                b = e
                while b > a and _is_blank(buf[b - 1]):
                    b -= 1
                if mode != _COUNT and k < places.size:
                    place = places[k]
                    out = data if place >= 0 else label if place == _LABEL else weight
                    slot = row * n_features + place if place >= 0 else row
                    if a == b:
                        if mode == _FILL:
                            out[slot] = np.nan
                    else:
                        found = _number(buf, a, b, mode, place, slot, line, out, fallbacks,
                                        found)
                        if found < 0:
                            return _BAD_NUMBER, line, a, b, 0, 0, 0
                k += 1
                if e >= end:
                    break
                s = e + 1
            if width < 0:
                width = k
            elif k != width:
                return _RAGGED, line, k, width, 0, 0, 0
            if mode == _FILL:
                row_line[row] = line
            row += 1
        pos = end + 1
    return _OK, 0, 0, 0, row, max(width, 0), found


@numba.njit(nogil=True, cache=True)
def _copy_numbers(buf, spans, first, out):
    """Row i of ``out`` (zero-filled, as wide as the longest) <- the text of span
    ``first + i``."""
    for i in range(out.shape[0]):
        s = spans[first + i, 0]
        for j in range(spans[first + i, 1] - s):
            out[i, j] = buf[s + j]


# ---- text: the readers ---------------------------------------------------------------------

def _fallback_numbers(buf, fallbacks, path, hint=""):
    """numpy's float64 of each number of ``fallbacks`` (rows: place, slot, start, stop,
    line); ValueError naming the line of the first that is not a number."""
    spans = fallbacks[:, 2:4]
    width = int((spans[:, 1] - spans[:, 0]).max())
    out = np.empty(len(fallbacks), dtype=np.float64)
    for first in range(0, len(fallbacks), _CHUNK):
        count = min(_CHUNK, len(fallbacks) - first)
        text = np.zeros((count, width), dtype=np.uint8)
        _copy_numbers(buf, spans, first, text)
        strings = text.view(f"S{width}").reshape(count)
        try:
            out[first:first + count] = strings.astype(np.float64)
        except ValueError:
            for i, token in enumerate(strings):   # only to find the token, on an error
                try:
                    float(token)
                except ValueError:
                    raise ValueError(f"{path}, line {fallbacks[first + i, 4]}: "
                                     f"{token.decode('latin-1')!r} is not a number{hint}") \
                        from None
            raise
    return out


# ---- text: a file in pieces, one per thread -------------------------------------------------

_MIN_PIECE_BYTES = 2 ** 22   # a thread parses at least this much of a file (4 MiB)
_NO_FALLBACKS = np.empty((0, 5), dtype=np.int64)


class _Piece:
    """A byte range ``[begin, end)`` of a text file (``newlines`` in it), the arrays a
    pass filled from it, and what the pass returned (set by the reader)."""

    def __init__(self, begin, end, newlines, **arrays):
        self.begin, self.end, self.newlines = begin, end, newlines
        self.__dict__.update(arrays)


@numba.njit(nogil=True, cache=True)
def _next_line_start(buf, pos):
    """The position after the first newline at or after ``pos`` (``buf.size`` if none)."""
    n = buf.size
    while pos < n and buf[pos] != 10:
        pos += 1
    return min(pos + 1, n)


@numba.njit(nogil=True, cache=True)
def _count_lines_and_colons(buf, begin, end):
    """``(newlines, colons)`` in ``buf[begin:end]``: room for rows and libsvm entries."""
    newlines = 0
    colons = 0
    for i in range(begin, end):
        c = buf[i]
        newlines += c == 10
        colons += c == 58
    return newlines, colons


def _pieces(buf, n_threads):
    """``(begin, end)`` byte ranges that cover ``buf`` in order, each beginning at a line's
    start: about equal, at most ``n_threads`` of them and at least ``_MIN_PIECE_BYTES``
    each (one for a small file)."""
    n = buf.size
    n_pieces = max(1, min(n_threads, n // _MIN_PIECE_BYTES))
    cuts = [0]
    for k in range(1, n_pieces):
        cut = _next_line_start(buf, max(k * n // n_pieces, cuts[-1]))
        if cuts[-1] < cut < n:
            cuts.append(cut)
    cuts.append(n)
    return list(zip(cuts[:-1], cuts[1:]))


def _parsed_in_pieces(parse, buf, n_threads):
    """``[parse(begin, end)]`` for the ``_pieces`` of ``buf``, in their order: the first on
    this thread, each other on a thread of its own (``parse`` runs nogil kernels).  The
    lines of a piece are numbered from 1 at its start (``newlines``: what comes before)."""
    pieces = _pieces(buf, n_threads)
    if len(pieces) == 1:
        return [parse(*pieces[0])]
    with concurrent.futures.ThreadPoolExecutor(len(pieces) - 1) as pool:
        later = [pool.submit(parse, *piece) for piece in pieces[1:]]
        first = parse(*pieces[0])
        return [first] + [future.result() for future in later]


def _stacked(arrays, counts, copy=True):
    """The first ``counts[i]`` rows of each of ``arrays``, one after the other: a new
    array, or of one array, itself when all of it is kept, else (``copy=False``) a view."""
    if len(arrays) > 1:
        return np.concatenate([a[:n] for a, n in zip(arrays, counts)])
    (array,), (n,) = arrays, counts
    return array if n == len(array) else array[:n].copy() if copy else array[:n]


def _malformed(path, status, line, start, stop, buf):
    token = bytes(buf[start:stop]).decode("utf-8", "replace")[:60]
    if status == _QID:
        return ValueError(f"{path}, line {line}: {token!r}: qid is for ranking, which "
                          "daskboost does not train")
    what = {_BAD_NUMBER: "is not a number",
            _BAD_ENTRY: "is not index:value",
            _BAD_INDEX: "has no feature index (an integer from 0)",
            _BIG_INDEX: f"has a feature index above {_MAX_INDEX}",
            _MIXED_WEIGHTS: "(label:weight) and the lines before differ in having a weight: "
                            "give every line's weight or none",
            _BAD_LABEL: "is not a label or label:weight"}[status]
    return ValueError(f"{path}, line {line}: {token!r} {what}")


def _scipy_sparse(path):
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(f"{path}: reading a libsvm file needs scipy (its rows are a "
                          "scipy.sparse matrix): pip install scipy") from None
    return scipy.sparse


def _read_libsvm(buf, path, params, n_threads):
    sparse = _scipy_sparse(path)
    pieces = _parsed_in_pieces(lambda begin, end: _libsvm_piece(buf, begin, end), buf,
                               n_threads)
    weighted = {bool(p.weighted) for p in pieces if p.rows}
    if len(pieces) > 1 and (len(weighted) > 1 or any(p.status != _OK for p in pieces)):
        pieces = [_libsvm_piece(buf, 0, buf.size)]   # the first error, as one pass finds it
    if pieces[0].status != _OK:
        p = pieces[0]
        raise _malformed(path, p.status, p.line, p.start, p.stop, buf)
    lines_before = 0
    for p in pieces:
        if p.found:
            fallbacks = np.empty((p.found, 5), dtype=np.int64)
            status, line, start, stop = _libsvm_pass(
                buf, p.begin, p.end, _FALLBACKS, p.label, p.weight, p.indptr, p.indices,
                p.values, p.row_line, fallbacks)[:4]
            if status != _OK:
                raise _malformed(path, status, line + lines_before, start, stop, buf)
            fallbacks[:, 4] += lines_before
            numbers = _fallback_numbers(buf, fallbacks, path)
            for place, target in ((_LABEL, p.label), (_WEIGHT, p.weight), (_VALUE, p.values)):
                chosen = fallbacks[:, 0] == place
                target[fallbacks[chosen, 1]] = numbers[chosen]
        p.row_line[:p.rows] += lines_before
        lines_before += p.newlines
    rows, entries = [p.rows for p in pieces], [p.entries for p in pieces]
    label = _stacked([p.label for p in pieces], rows)
    weight = _stacked([p.weight for p in pieces], rows) if True in weighted else None
    row_line = _stacked([p.row_line for p in pieces], rows, copy=False)
    if len(pieces) == 1:
        indptr = pieces[0].indptr[:rows[0] + 1]
    else:   # each piece's row ends after the entries of the pieces before it
        ends = [p.indptr[1:] + first for p, first in zip(pieces, np.cumsum([0] + entries))]
        indptr = np.concatenate([[0], _stacked(ends, rows)])
    indices = _stacked([p.indices for p in pieces], entries, copy=False)
    values = _stacked([p.values for p in pieces], entries, copy=False)
    n_rows, n_entries = len(label), len(indices)

    def entry_line(i):
        return int(row_line[np.searchsorted(indptr, i, side="right") - 1])

    mode = params.get("indexing_mode", 0)
    if n_entries and (mode > 0 or (mode < 0 and indices.min() > 0)):
        if mode > 0 and indices.min() == 0:
            raise ValueError(f"{path}, line {entry_line(int(np.argmin(indices)))}: feature "
                             "index 0, but indexing_mode=1 reads indices from 1")
        indices -= 1
    if any(p.unsorted for p in pieces):   # a line's indices do not rise
        rows = np.repeat(np.arange(n_rows), np.diff(indptr))
        same_row = rows[1:] == rows[:-1]
        order = np.lexsort((indices, rows))
        indices, values = indices[order], values[order]
        twice = np.flatnonzero(same_row & (indices[1:] == indices[:-1]))
        if twice.size:
            raise ValueError(f"{path}, line {int(row_line[rows[twice[0]]])}: feature index "
                             f"{int(indices[twice[0]])} appears twice")
    n_cols = int(indices.max()) + 1 if indices.size else 0
    data = sparse.csr_matrix((values, indices, indptr), shape=(n_rows, n_cols))
    return FileMatrix(data, label=label, weight=weight)


def _libsvm_piece(buf, begin, end):
    """``_libsvm_pass``'s ``_FILL`` pass over ``buf[begin:end]`` into arrays of its own
    (room for as many rows as lines, entries as colons), and what it returned."""
    newlines, colons = _count_lines_and_colons(buf, begin, end)
    max_rows, max_entries = newlines + 1, colons
    piece = _Piece(begin, end, newlines, label=np.empty(max_rows, dtype=np.float32),
                   weight=np.empty(max_rows, dtype=np.float32),
                   indptr=np.zeros(max_rows + 1, dtype=np.int64),
                   indices=np.empty(max_entries, dtype=np.int32),
                   values=np.empty(max_entries, dtype=np.float32),
                   row_line=np.empty(max_rows, dtype=np.int64))
    (piece.status, piece.line, piece.start, piece.stop, piece.rows, piece.entries,
     piece.weighted, piece.found, piece.unsorted) = _libsvm_pass(
        buf, begin, end, _FILL, piece.label, piece.weight, piece.indptr, piece.indices,
        piece.values, piece.row_line, _NO_FALLBACKS)
    return piece


_CSV_HINT = " (a CSV file has numbers only: no header line, no quotes)"


def _read_csv(buf, path, params, n_threads):
    delimiter = ord(params.get("delimiter", ","))
    label_column = params.get("label_column")
    weight_column = params.get("weight_column")
    empty = np.empty(0, dtype=np.float32)
    no_places = np.empty(0, dtype=np.int64)
    status, line, start, stop, n_rows, width, _ = _csv_pass(      # the first row's width
        buf, 0, buf.size, delimiter, _COUNT, 1, no_places, empty, empty, empty, no_places,
        _NO_FALLBACKS)
    if status == _OK and n_rows:
        for name, column in (("label_column", label_column), ("weight_column",
                                                              weight_column)):
            if column is not None and column >= width:
                raise ValueError(f"{path}: {name}={column}, but the file has {width} "
                                 f"columns (0 to {width - 1})")
    features = [c for c in range(width) if c not in (label_column, weight_column)]
    places = np.empty(width, dtype=np.int64)
    places[features] = np.arange(len(features))
    for column, place in ((label_column, _LABEL), (weight_column, _WEIGHT)):
        if column is not None and column < width:
            places[column] = place

    def piece_of(begin, end):
        return _csv_piece(buf, begin, end, delimiter, places, len(features))

    pieces = _parsed_in_pieces(piece_of, buf, n_threads)
    if len(pieces) > 1 and any(p.status != _OK or (p.rows and p.width != width)
                               for p in pieces):
        pieces = [piece_of(0, buf.size)]   # the first error, as one pass finds it
    lines_before = 0
    for p in pieces:
        status, line, start, stop = p.status, p.line, p.start, p.stop
        if status == _OK and p.found:
            fallbacks = np.empty((p.found, 5), dtype=np.int64)
            status, line, start, stop = _csv_pass(
                buf, p.begin, p.end, delimiter, _FALLBACKS, p.max_rows, places,
                p.data.reshape(-1), p.label, p.weight, p.row_line, fallbacks)[:4]
        if status == _RAGGED:
            raise ValueError(f"{path}, line {line + lines_before}: {start} fields, but {stop} "
                             "on the lines before (every line has the same columns)")
        if status != _OK:
            token = bytes(buf[start:stop]).decode("utf-8", "replace")[:60]
            raise ValueError(f"{path}, line {line + lines_before}: {token!r} is not a "
                             f"number{_CSV_HINT}")
        if p.found:
            fallbacks[:, 4] += lines_before
            numbers = _fallback_numbers(buf, fallbacks, path, _CSV_HINT)
            for chosen, target in ((fallbacks[:, 0] == _LABEL, p.label),
                                   (fallbacks[:, 0] == _WEIGHT, p.weight),
                                   (fallbacks[:, 0] >= 0, p.data.reshape(-1))):
                target[fallbacks[chosen, 1]] = numbers[chosen]
        lines_before += p.newlines
    rows = [p.rows for p in pieces]
    return FileMatrix(
        _stacked([p.data for p in pieces], rows),
        label=None if label_column is None else _stacked([p.label for p in pieces], rows),
        weight=None if weight_column is None else _stacked([p.weight for p in pieces], rows))


def _csv_piece(buf, begin, end, delimiter, places, n_features):
    """``_csv_pass``'s ``_FILL`` pass over ``buf[begin:end]`` into arrays of its own (room
    for as many rows as lines), and what it returned."""
    newlines = _count_lines_and_colons(buf, begin, end)[0]
    max_rows = newlines + 1
    piece = _Piece(begin, end, newlines, max_rows=max_rows,
                   data=np.empty((max_rows, n_features), dtype=np.float32),
                   label=np.empty(max_rows, dtype=np.float32),
                   weight=np.empty(max_rows, dtype=np.float32),
                   row_line=np.empty(max_rows, dtype=np.int64))
    (piece.status, piece.line, piece.start, piece.stop, piece.rows, piece.width,
     piece.found) = _csv_pass(buf, begin, end, delimiter, _FILL, max_rows, places,
                              piece.data.reshape(-1), piece.label, piece.weight,
                              piece.row_line, _NO_FALLBACKS)
    return piece


# ---- binary --------------------------------------------------------------------------------

_MEMBERS = {   # name: (kinds of dtype, dimensions allowed)
    "format": ("U", (0,)), "version": ("i", (0,)), "kind": ("U", (0,)),
    "shape": ("i", (1,)), "data": ("biuf", (1, 2)), "indices": ("i", (1,)),
    "indptr": ("i", (1,)), "label": ("biuf", (1, 2)), "weight": ("biuf", (1,)),
    "base_margin": ("biuf", (1, 2)), "feature_names": ("U", (1,)),
    "feature_types": ("U", (1,)), "feature_weights": ("biuf", (1,)),
    "enable_categorical": ("b", (0,)),
}
_INFO = ("label", "weight", "base_margin")
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
        arrays.update(kind=np.array("dense"), data=_frame_values(data))
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


def _frame_values(frame):
    """A pandas DataFrame's values as one numeric array: its dtype when the columns
    share one numpy dtype, else float64 (missing values NaN)."""
    import pandas as pd
    for column, dtype in frame.dtypes.items():
        if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) \
                or isinstance(dtype, pd.CategoricalDtype):
            raise TypeError(f"save_binary: column {column!r} has dtype {dtype}; a binary "
                            "DMatrix file holds numbers only.  Write the frame as a parquet "
                            "lake instead (df.to_parquet, read with dd.read_parquet)")
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
        sparse = _scipy_sparse(path)
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
        enable_categorical=bool(arrays.get("enable_categorical", False)))


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
