"""xgboost's text ``DMatrix`` files read: ``"path?format=libsvm"`` and
``"path?format=csv&label_column=K"`` (``dmatrix_files`` parses the URI; its parameters are
xgboost's parsers').

- libsvm: a line is ``label[:weight] index:value ...``; ``#`` starts a comment, blank
  lines are skipped.  An entry not on a line is missing (the rows are a scipy.sparse CSR
  matrix, float32); every entry written is a value, zeros included; ``nan`` is missing
  (a stored NaN, as in any scipy.sparse matrix here).
  Indices are 0-based (``indexing_mode=0``, xgboost's default); ``indexing_mode=1`` reads
  them from 1, a negative one from 1 when no index is 0.  There are as many columns as
  the largest index + 1.  ``qid:N`` right after the label is the row's query id (a
  whole number; ranking), on every line or on none.  Refused, as what xgboost's parser
  reads silently as something else: a line without a weight among weighted lines
  (xgboost: weight 0), or without a qid among lines with one, a ``qid:`` elsewhere, an
  index twice on a line, a token that is not a number or not ``index:value``.
- csv: ``label_column`` and ``weight_column`` (0-based positions, each optional) and
  ``delimiter`` (one character, ``,`` by default); the other columns are the features,
  a dense float32 array; an empty field (or ``nan``) is missing.  Every line has the same
  number of fields; there is no header line and no quoting.

Malformed content is a ValueError naming the file and the line.  A numba pass over the
bytes checks the structure and fills the arrays, converting each number itself where
its float64 is one exact operation (at most 15 significant digits, a power of ten
within 1e22: Clinger's fast path); a second pass, only when some are not (nan, inf,
longer numbers), hands those to numpy's conversion.  Numbers become float32 from the
correctly rounded float64, as numpy's and pandas' do (xgboost's own parser is one
float32 ulp off in a few percent of values, ``1.999283`` among them).

The file is read twice, in windows of whole lines (16 MiB; one buffer, reused): first to
count its lines (and colons), which sizes the output arrays once, then to parse it.
Each window is cut at line starts into one piece per thread; each piece fills its own
room in the output arrays, and the rows are then moved down over the room left unused
(blank lines, comments).  So the only new memory is the result's.  Within a window the
lines' structure is checked before the numbers left to numpy; when pieces disagree
(some with weights, some without) the window is parsed again in one piece, so the error
and its line are those one pass finds first, whatever the threads.
"""

import concurrent.futures

import numba
import numpy as np

__all__ = ["read_text_file", "scipy_sparse"]

_CHUNK = 2 ** 16                # numbers converted by numpy at once
_MAX_INDEX = 2 ** 31 - 2        # the largest feature index (the column count fits int32)

# ---- the kernels -------------------------------------------------------------------------

_OK, _BAD_NUMBER, _BAD_ENTRY, _BAD_INDEX, _BIG_INDEX, _QID, _MIXED_WEIGHTS, _BAD_LABEL, \
    _RAGGED, _BAD_QID, _MIXED_QID = range(11)
_QID_DIGITS = 18   # the longest query id read (below 10^18: an int64)
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
def _libsvm_pass(buf, begin, end, weighted_before, queried_before, mode, label, weight, qid,
                 indptr, indices, values, row_line, fallbacks):
    """One pass over the lines of a libsvm file's bytes ``buf[begin:end]`` (``begin`` a
    line's start; lines counted from 1 there; ``weighted_before``: 1 when the lines
    before have weights, 0 when not, -1 when there are none; ``queried_before``: the
    same of query ids).  ``_FILL``: the labels, weights, query ids,
    feature indices and values (the fast path's; NaN where numpy is to convert), each
    row's end in ``indptr[1:]`` and its line; the arrays have room for the rows and
    entries there can be (lines, colons).  ``_FALLBACKS`` (after a ``_FILL`` pass that
    was ``_OK``): the numbers left to numpy, in ``fallbacks`` (their spans in ``buf``).
    Returns ``(status, line, start, stop, rows, entries, weighted rows, rows with a query
    id, fallbacks, unsorted)``: the first malformed token's line and span when status is
    not ``_OK`` (and the fallbacks before it); ``unsorted``: some line's indices do not
    rise."""
    n = end
    pos = begin
    line = 0
    row = 0
    entry = 0
    weighted = 0
    queried = 0
    found = 0
    unsorted = False
    while pos < n:
        line += 1
        t = pos
        k = 0
        has_qid = 0
        label_start = label_stop = pos
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
                label_start, label_stop = s, t
                if colons == 1 and _is_qid(buf, s, colon):
                    return _QID, line, s, t, 0, 0, 0, 0, found, False
                if colons > 1 or colon == s or colon == t - 1:
                    return _BAD_LABEL, line, s, t, 0, 0, 0, 0, found, False
                if weighted_before >= 0 and colons != weighted_before:
                    return _MIXED_WEIGHTS, line, s, t, 0, 0, 0, 0, found, False
                weighted_before = colons
                weighted += colons
                found = _number(buf, s, t if colons == 0 else colon, mode, _LABEL, row, line,
                                label, fallbacks, found)
                if found >= 0 and colons == 1:
                    found = _number(buf, colon + 1, t, mode, _WEIGHT, row, line, weight,
                                    fallbacks, found)
                if found < 0:
                    return _BAD_NUMBER, line, s, t, 0, 0, 0, 0, found, False
            elif k == 1 and colons >= 1 and _is_qid(buf, s, colon):   # qid:N
                if colons != 1 or t - colon - 1 < 1 or t - colon - 1 > _QID_DIGITS:
                    return _BAD_QID, line, s, t, 0, 0, 0, 0, found, False
                query = 0
                for i in range(colon + 1, t):
                    c = buf[i]
                    if c < 48 or c > 57:
                        return _BAD_QID, line, s, t, 0, 0, 0, 0, found, False
                    query = query * 10 + (c - 48)
                if mode == _FILL:
                    qid[row] = query
                has_qid = 1
            else:        # index:value
                if colons >= 1 and _is_qid(buf, s, colon):
                    return _QID, line, s, t, 0, 0, 0, 0, found, False
                if colons != 1 or colon == t - 1:
                    return _BAD_ENTRY, line, s, t, 0, 0, 0, 0, found, False
                if colon == s or colon - s > 10:
                    return _BAD_INDEX, line, s, t, 0, 0, 0, 0, found, False
                index = 0
                for i in range(s, colon):
                    c = buf[i]
                    if c < 48 or c > 57:
                        return _BAD_INDEX, line, s, t, 0, 0, 0, 0, found, False
                    index = index * 10 + (c - 48)
                if index > _MAX_INDEX:
                    return _BIG_INDEX, line, s, t, 0, 0, 0, 0, found, False
                if index <= previous:
                    unsorted = True
                previous = index
                if mode == _FILL:
                    indices[entry] = index
                found = _number(buf, colon + 1, t, mode, _VALUE, entry, line, values,
                                fallbacks, found)
                if found < 0:
                    return _BAD_NUMBER, line, colon + 1, t, 0, 0, 0, 0, found, False
                entry += 1
            k += 1
        while t < n and buf[t] != 10:   # a comment
            t += 1
        if k > 0:
            if queried_before >= 0 and has_qid != queried_before:
                return _MIXED_QID, line, label_start, label_stop, 0, 0, 0, 0, found, False
            queried_before = has_qid
            queried += has_qid
            if mode == _FILL:
                indptr[row + 1] = entry
                row_line[row] = line
            row += 1
        pos = t + 1
    return _OK, 0, 0, 0, row, entry, weighted, queried, found, unsorted


@numba.njit(nogil=True, cache=True)
def _csv_pass(buf, begin, end, width, delimiter, mode, max_rows, places, data, label,
              weight, row_line, fallbacks):
    """One pass over the lines of a CSV file's bytes ``buf[begin:end]``, as
    ``_libsvm_pass``: every line has ``width`` fields (-1: as many as the first);
    ``places[column]`` is a feature column's position in a row of
    ``data`` (the rows' features one after the other), or ``_LABEL`` / ``_WEIGHT``; an
    empty field is NaN.  ``_COUNT`` reads the structure only, of the first ``max_rows``
    rows.  Returns ``(status, line, start, stop, rows, fields per row, fallbacks)`` (the
    fallbacks before a malformed line too); a line with another number of fields:
    ``_RAGGED``, start and stop its count and the lines before's."""
    n = end
    pos = begin
    line = 0
    row = 0
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
                            return _BAD_NUMBER, line, a, b, 0, 0, found
                k += 1
                if e >= end:
                    break
                s = e + 1
            if width < 0:
                width = k
            elif k != width:
                return _RAGGED, line, k, width, 0, 0, found
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


# ---- reading a file: windows of whole lines, pieces on threads ------------------------------

_WINDOW_BYTES = 2 ** 24      # bytes of a file parsed at a time (16 MiB), over the threads
_MIN_PIECE_BYTES = 2 ** 22   # a thread parses at least this much of a window (4 MiB)
_NO_FALLBACKS = np.empty((0, 5), dtype=np.int64)
_BOM = b"\xef\xbb\xbf"


@numba.njit(nogil=True, cache=True)
def _next_line_start(buf, pos, end):
    """The position after the first newline in ``buf[pos:end]`` (``end`` if none)."""
    while pos < end and buf[pos] != 10:
        pos += 1
    return min(pos + 1, end)


@numba.njit(nogil=True, cache=True)
def _after_last_newline(buf, end):
    """The position after the last newline in ``buf[:end]`` (0 if none)."""
    pos = end
    while pos > 0 and buf[pos - 1] != 10:
        pos -= 1
    return pos


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


@numba.njit(nogil=True, cache=True)
def _move_down(a, src, dst, n, add):
    """``a[dst:dst + n] = a[src:src + n] + add`` for ``dst <= src`` (the ranges may
    overlap: each value is read before anything is written over it); with ``add == 0``
    the values as they are (-0.0 stays -0.0)."""
    if add == 0:
        if dst != src:
            for i in range(n):
                a[dst + i] = a[src + i]
    else:
        for i in range(n):
            a[dst + i] = a[src + i] + add


class _Reading:
    """One read of a text file: its path, its window buffer (reused, larger for a line
    longer than it), and the threads that parse a window's pieces."""

    def __init__(self, path, n_threads, window_bytes):
        self.path = path
        self.n_threads = max(1, int(n_threads))
        self.buf = np.empty(max(1, window_bytes), dtype=np.uint8)
        self.pool = (concurrent.futures.ThreadPoolExecutor(self.n_threads - 1)
                     if self.n_threads > 1 else None)

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()

    def windows(self):
        """The file's bytes as consecutive windows of whole lines: yields ``(begin,
        end)``, the window ``self.buf[begin:end]`` (valid until the next one; ``begin``
        skips a UTF-8 BOM at the file's start), each but the last ending with a
        newline."""
        held, first = 0, True
        with open(self.path, "rb") as f:
            while True:
                n_read = f.readinto(memoryview(self.buf)[held:])
                total = held + n_read
                if n_read and total < self.buf.size:
                    held = total
                    continue   # (until the window is full or the file ends)
                at_end = n_read == 0
                end = total if at_end else _after_last_newline(self.buf, total)
                if end == 0 and not at_end:   # no line ends in the window: a larger one
                    self.buf = np.concatenate([self.buf, np.empty_like(self.buf)])
                    held = total
                    continue
                begin = 3 if first and bytes(self.buf[:min(3, end)]) == _BOM else 0
                first = False
                if end > begin:
                    yield begin, end
                if at_end:
                    return
                held = total - end
                self.buf[:held] = self.buf[end:total].copy()

    def pieces(self, begin, end):
        """``(begin, end)`` ranges that cover ``buf[begin:end]`` in order, each beginning
        at a line's start: about equal, one per thread at most, at least
        ``_MIN_PIECE_BYTES`` each."""
        n_pieces = max(1, min(self.n_threads, (end - begin) // _MIN_PIECE_BYTES))
        cuts = [begin]
        for k in range(1, n_pieces):
            cut = _next_line_start(self.buf, max(begin + k * (end - begin) // n_pieces,
                                                 cuts[-1]), end)
            if cuts[-1] < cut < end:
                cuts.append(cut)
        cuts.append(end)
        return list(zip(cuts[:-1], cuts[1:]))

    def on_threads(self, func, items):
        """``[func(*item) for item in items]``: the first on this thread, the others on
        the pool's (``func`` runs nogil kernels)."""
        if len(items) == 1 or self.pool is None:
            return [func(*item) for item in items]
        later = [self.pool.submit(func, *item) for item in items[1:]]
        return [func(*items[0])] + [future.result() for future in later]

    def counts(self):
        """``(newlines, colons)`` in the whole file (a first pass over it): room for every
        row and libsvm entry."""
        newlines = colons = 0
        for begin, end in self.windows():
            for n, c in self.on_threads(lambda b, e: _count_lines_and_colons(self.buf, b, e),
                                        self.pieces(begin, end)):
                newlines, colons = newlines + n, colons + c
        return newlines, colons


class _Piece:
    """A byte range ``[begin, end)`` of a window, its ``newlines``, and the room its rows
    (and libsvm entries) have in the output arrays, from ``row`` (``entry``)."""

    def __init__(self, buf, begin, end, newlines, colons, row, entry):
        self.begin, self.end, self.newlines = begin, end, newlines
        # a row per line: a line ends with a newline, but for the file's last
        self.row, self.rows_room = row, newlines + int(end > begin and buf[end - 1] != 10)
        self.entry, self.entries_room = entry, colons


def _laid_out(reading, begin, end, row, entry, rows_room, entries_room):
    """The window's pieces, counted on the threads, each given room in the output
    arrays after the one before (from ``row`` and ``entry``); ValueError when the
    arrays (``rows_room`` rows, ``entries_room`` entries, from the first pass) have
    not that much room: the file changed while it was read."""
    ranges = reading.pieces(begin, end)
    counted = reading.on_threads(lambda b, e: _count_lines_and_colons(reading.buf, b, e),
                                 ranges)
    pieces = []
    for (b, e), (newlines, colons) in zip(ranges, counted):
        pieces.append(_Piece(reading.buf, b, e, newlines, colons, row, entry))
        row, entry = row + pieces[-1].rows_room, entry + colons
    if row > rows_room or entry > entries_room:
        raise ValueError(f"{reading.path}: the file changed while it was read")
    return pieces


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


def _malformed(path, status, line, start, stop, buf):
    token = bytes(buf[start:stop]).decode("utf-8", "replace")[:60]
    what = {_QID: "is a query id away from its place: qid:N comes right after the label",
            _BAD_QID: "is not qid:N with N a whole number (at most 18 digits)",
            _MIXED_QID: "(the label) and the lines before differ in having a query id "
                        "(qid:N after the label): give every line's or none",
            _BAD_NUMBER: "is not a number",
            _BAD_ENTRY: "is not index:value",
            _BAD_INDEX: "has no feature index (an integer from 0)",
            _BIG_INDEX: f"has a feature index above {_MAX_INDEX}",
            _MIXED_WEIGHTS: "(label:weight) and the lines before differ in having a weight: "
                            "give every line's weight or none",
            _BAD_LABEL: "is not a label or label:weight"}[status]
    return ValueError(f"{path}, line {line}: {token!r} {what}")


def scipy_sparse(path):
    """scipy.sparse, which the rows of the file ``path`` need (ImportError saying so)."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(f"{path}: its rows are a scipy.sparse matrix, which needs scipy: "
                          "pip install scipy") from None
    return scipy.sparse


def _numbers_then_error(reading, parse, piece, result, found, line_at, error, hint=""):
    """The numbers of ``piece`` that its ``_FILL`` pass (``result``, ``found`` of them)
    left to numpy, converted: ``(fallbacks, numbers)``, or None when there are none.
    The piece's first error in line order is raised: a number numpy cannot read (its
    ``_fallback_numbers`` error), or the malformed token or line (``error(status, line,
    start, stop)``), whichever comes first (a ``_FALLBACKS`` pass stops at the first
    token that cannot be a number, or at the malformed line)."""
    status, line, start, stop = result[:4]
    converted = None
    if found > 0:
        fallbacks = np.zeros((found, 5), dtype=np.int64)   # (line 0: not recorded)
        status, line, start, stop = parse(piece, _FALLBACKS, fallbacks)[:4]
        fallbacks = fallbacks[fallbacks[:, 4] > 0]
        fallbacks[:, 4] += line_at
        if len(fallbacks):
            converted = fallbacks, _fallback_numbers(reading.buf, fallbacks, reading.path,
                                                     hint)
    if status != _OK:
        raise error(status, line + line_at, start, stop)
    return converted


def read_text_file(path, fmt, params, n_threads, window_bytes=None):
    """The rows of the text file ``path`` in format ``fmt`` ("libsvm" or "csv", with the
    URI's ``params``), parsed on ``n_threads`` threads: ``(data, label, weight, qid)``,
    data a float32 CSR matrix (libsvm) or a float32 array (csv), label and weight
    float32 arrays or None, qid (libsvm's query ids) an int64 array or None."""
    reading = _Reading(path, n_threads, window_bytes or _WINDOW_BYTES)
    try:
        if fmt == "libsvm":
            return _read_libsvm(reading, scipy_sparse(path), params)
        return _read_csv(reading, params)
    finally:
        reading.close()


def _read_libsvm(reading, sparse, params):
    path = reading.path
    newlines, colons = reading.counts()
    rows_room, entries_room = newlines + 1, colons
    label = np.empty(rows_room, dtype=np.float32)
    weight = np.empty(rows_room, dtype=np.float32)
    qid = np.empty(rows_room, dtype=np.int64)
    row_line = np.empty(rows_room, dtype=np.int64)
    indptr = np.zeros(rows_room + 1, dtype=np.int64)
    indices = np.empty(entries_room, dtype=np.int32)
    values = np.empty(entries_room, dtype=np.float32)
    rows = entries = lines = 0
    weighted = -1   # whether the rows so far have weights (1) or not (0); -1: no rows yet
    queried = -1    # the same of query ids
    unsorted = False

    def parse(piece, mode=_FILL, fallbacks=_NO_FALLBACKS):
        r = slice(piece.row, piece.row + piece.rows_room)
        e = slice(piece.entry, piece.entry + piece.entries_room)
        return _libsvm_pass(reading.buf, piece.begin, piece.end, weighted_before,
                            queried_before, mode, label[r], weight[r], qid[r],
                            indptr[piece.row:piece.row + piece.rows_room + 1], indices[e],
                            values[e], row_line[r], fallbacks)

    for begin, end in reading.windows():
        # (what every piece of the window expects)
        weighted_before, queried_before = weighted, queried
        pieces = _laid_out(reading, begin, end, rows, entries, rows_room, entries_room)
        results = reading.on_threads(parse, [(p,) for p in pieces])
        kinds = {(bool(result[6]), bool(result[7])) for result in results if result[4]}
        if len(pieces) > 1 and (len(kinds) > 1 or any(r[0] != _OK for r in results)):
            # the window in one piece: its first error, as one pass finds it
            pieces = [_Piece(reading.buf, begin, end, sum(p.newlines for p in pieces),
                             sum(p.entries_room for p in pieces), rows, entries)]
            results = [parse(pieces[0])]
        line_at = lines
        for piece, result in zip(pieces, results):
            n_rows, n_entries, n_weighted, n_queried, found, falls = result[4:]
            converted = _numbers_then_error(
                reading, parse, piece, result, found, line_at,
                lambda *error: _malformed(path, *error, reading.buf))
            if converted is not None:
                fallbacks, numbers = converted
                for place, target, first in ((_LABEL, label, piece.row),
                                             (_WEIGHT, weight, piece.row),
                                             (_VALUE, values, piece.entry)):
                    chosen = fallbacks[:, 0] == place
                    target[first + fallbacks[chosen, 1]] = numbers[chosen]
            # the piece's rows and entries right after those before it
            for array in (label, weight, qid):
                _move_down(array, piece.row, rows, n_rows, 0)
            _move_down(row_line, piece.row, rows, n_rows, line_at)
            _move_down(indptr, piece.row + 1, rows + 1, n_rows, entries)
            _move_down(indices, piece.entry, entries, n_entries, 0)
            _move_down(values, piece.entry, entries, n_entries, 0)
            rows, entries = rows + n_rows, entries + n_entries
            line_at += piece.newlines
            unsorted = unsorted or falls
            if n_rows:
                weighted, queried = int(n_weighted > 0), int(n_queried > 0)
        lines = line_at
    label, row_line, indptr = label[:rows], row_line[:rows], indptr[:rows + 1]
    weight = weight[:rows] if weighted == 1 else None
    qid = qid[:rows] if queried == 1 else None
    indices, values = indices[:entries], values[:entries]

    def entry_line(i):
        return int(row_line[np.searchsorted(indptr, i, side="right") - 1])

    mode = params.get("indexing_mode", 0)
    if entries and (mode > 0 or (mode < 0 and indices.min() > 0)):
        if mode > 0 and indices.min() == 0:
            raise ValueError(f"{path}, line {entry_line(int(np.argmin(indices)))}: feature "
                             "index 0, but indexing_mode=1 reads indices from 1")
        indices -= 1
    if unsorted:   # a line's indices do not rise
        row_of = np.repeat(np.arange(rows), np.diff(indptr))
        same_row = row_of[1:] == row_of[:-1]
        order = np.lexsort((indices, row_of))
        indices, values = indices[order], values[order]
        twice = np.flatnonzero(same_row & (indices[1:] == indices[:-1]))
        if twice.size:
            raise ValueError(f"{path}, line {int(row_line[row_of[twice[0]]])}: feature index "
                             f"{int(indices[twice[0]])} appears twice")
    n_cols = int(indices.max()) + 1 if indices.size else 0
    return (sparse.csr_matrix((values, indices, indptr), shape=(rows, n_cols)), label, weight,
            qid)


_CSV_HINT = " (a CSV file has numbers only: no header line, no quotes)"


def _read_csv(reading, params):
    path = reading.path
    delimiter = ord(params.get("delimiter", ","))
    label_column = params.get("label_column")
    weight_column = params.get("weight_column")
    newlines, colons = reading.counts()
    rows_room = newlines + 1
    places = data = label = weight = row_line = None
    width = -1   # the fields of a line, from the first
    rows = lines = 0

    def malformed(status, line, start, stop):
        if status == _RAGGED:
            return ValueError(f"{path}, line {line}: {start} fields, but {stop} on the lines "
                              "before (every line has the same columns)")
        token = bytes(reading.buf[start:stop]).decode("utf-8", "replace")[:60]
        return ValueError(f"{path}, line {line}: {token!r} is not a number{_CSV_HINT}")

    def parse(piece, mode=_FILL, fallbacks=_NO_FALLBACKS):
        r = slice(piece.row, piece.row + piece.rows_room)
        return _csv_pass(reading.buf, piece.begin, piece.end, width, delimiter, mode,
                         piece.rows_room, places, data[r].reshape(-1), label[r], weight[r],
                         row_line[r], fallbacks)

    for begin, end in reading.windows():
        if width < 0:   # the first line's fields: the columns
            empty = np.empty(0, dtype=np.float32)
            no_places = np.empty(0, dtype=np.int64)
            status, _, _, _, found_rows, width, _ = _csv_pass(
                reading.buf, begin, end, -1, delimiter, _COUNT, 1, no_places, empty, empty,
                empty, no_places, _NO_FALLBACKS)
            if not found_rows:   # (blank lines only so far)
                width = -1
                lines += _count_lines_and_colons(reading.buf, begin, end)[0]
                continue
            for name, column in (("label_column", label_column),
                                 ("weight_column", weight_column)):
                if column is not None and column >= width:
                    raise ValueError(f"{path}: {name}={column}, but the file has {width} "
                                     f"columns (0 to {width - 1})")
            features = [c for c in range(width) if c not in (label_column, weight_column)]
            places = np.empty(width, dtype=np.int64)
            places[features] = np.arange(len(features))
            for column, place in ((label_column, _LABEL), (weight_column, _WEIGHT)):
                if column is not None:
                    places[column] = place
            data = np.empty((rows_room, len(features)), dtype=np.float32)
            label, weight = (np.empty(rows_room, dtype=np.float32) for _ in range(2))
            row_line = np.empty(rows_room, dtype=np.int64)
        pieces = _laid_out(reading, begin, end, rows, 0, rows_room, colons)
        results = reading.on_threads(parse, [(p,) for p in pieces])
        flat = data.reshape(-1)
        n_features = data.shape[1]
        line_at = lines
        for piece, result in zip(pieces, results):
            n_rows, found = result[4], result[6]
            converted = _numbers_then_error(reading, parse, piece, result, found, line_at,
                                            malformed, _CSV_HINT)
            if converted is not None:
                fallbacks, numbers = converted
                for chosen, target, first in (
                        (fallbacks[:, 0] == _LABEL, label, piece.row),
                        (fallbacks[:, 0] == _WEIGHT, weight, piece.row),
                        (fallbacks[:, 0] >= 0, flat, piece.row * n_features)):
                    target[first + fallbacks[chosen, 1]] = numbers[chosen]
            # the piece's rows right after those before it
            _move_down(flat, piece.row * n_features, rows * n_features, n_rows * n_features,
                       0)
            for array in (label, weight):
                _move_down(array, piece.row, rows, n_rows, 0)
            rows, line_at = rows + n_rows, line_at + piece.newlines
        lines = line_at
    if data is None:   # no line with a field
        data = np.empty((0, 0), dtype=np.float32)
        label = weight = np.empty(0, dtype=np.float32)
    return (data[:rows], None if label_column is None else label[:rows],
            None if weight_column is None else weight[:rows], None)
