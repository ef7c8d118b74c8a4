"""Universal Binary JSON (ubjson.org, draft 12), read and written: xgboost's binary model
format.

xgboost writes a model as UBJSON when its file name does not end in ``.json`` (its
``save_model("model.ubj")``) and in ``Booster.save_raw()``'s default.  The document is the
same as its JSON model (``xgboost_format`` reads that), only encoded in binary: numbers
big-endian, strings and object keys length-prefixed, and arrays of one number type as
``[$<type>#<count>`` followed by the raw values (xgboost's float32 node arrays).

A model file is untrusted input (``model_file``): every length and count is checked
against the bytes left before anything is allocated, nesting is bounded, an unknown
marker or bytes after the document are a ValueError, and an object key given twice is
refused as in the JSON reader.  Typed number arrays come back as Python lists, as the
JSON reader gives them.

Written (``encode``) as xgboost writes it: lengths and counts as int64, objects ended by
``}``, arrays count-prefixed, a list given a type in ``typed`` (by its key) as one typed
array of raw big-endian values, any other list item by item.
"""

import numpy as np

MAX_DEPTH = 128  # nesting of arrays and objects (xgboost's models nest about 8 deep)

# marker -> (big-endian numpy dtype of one value)
_NUMBERS = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8", b"d": ">f4",
            b"D": ">f8"}
_INTEGERS = (b"i", b"U", b"I", b"l", b"L")
_TYPED = tuple(_NUMBERS) + (b"S", b"C")  # what a typed container may hold here


def encode(value, typed=None, float_marker=b"D"):
    """``value`` (what ``json.dumps`` takes: dicts with string keys, lists, strings,
    numbers, booleans, None) as a UBJSON document (bytes).  ``typed``: {key: marker} of
    the lists to write as typed arrays of that number type (b"d" float32, b"l" int32,
    b"U" uint8, b"L" int64...: xgboost's model fields); other floats are written with
    ``float_marker`` (b"D" float64, lossless; b"d" float32)."""
    out = []
    _write(value, out, typed or {}, float_marker, 0)
    return b"".join(out)


def _write(value, out, typed, float_marker, depth, key=None):
    if depth > MAX_DEPTH:
        raise ValueError(f"the document nests deeper than {MAX_DEPTH} levels")
    if value is None:
        out.append(b"Z")
    elif value is True or value is False:
        out.append(b"T" if value else b"F")
    elif isinstance(value, (int, np.integer)):
        out.append(b"L" + np.array(value, dtype=">i8").tobytes())
    elif isinstance(value, (float, np.floating)):
        out.append(float_marker + np.array(value, dtype=_NUMBERS[float_marker]).tobytes())
    elif isinstance(value, str):
        out.append(b"S" + _length(value.encode("utf-8")))
    elif isinstance(value, dict):
        out.append(b"{")
        for k, item in value.items():
            if not isinstance(k, str):
                raise TypeError(f"an object key must be a string; got {k!r:.40}")
            out.append(_length(k.encode("utf-8")))
            _write(item, out, typed, float_marker, depth + 1, k)
        out.append(b"}")
    elif isinstance(value, (list, tuple)):
        marker = typed.get(key)
        if marker is not None:
            values = np.asarray(value, dtype=_NUMBERS[marker]) if len(value) else \
                np.empty(0, dtype=_NUMBERS[marker])
            out.append(b"[$" + marker + b"#L" + np.array(len(values), ">i8").tobytes()
                       + values.tobytes())
        else:
            out.append(b"[#L" + np.array(len(value), dtype=">i8").tobytes())
            for item in value:
                _write(item, out, typed, float_marker, depth + 1)
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _length(data):
    return b"L" + np.array(len(data), dtype=">i8").tobytes() + data


def is_ubjson(raw):
    """Whether the bytes ``raw`` look like a UBJSON object (``{`` then a key's length
    marker, ``}``, or an optimized container's ``$``/``#``), not a JSON text."""
    return len(raw) >= 2 and raw[:1] == b"{" and raw[1:2] in (b"iUIlL}$#")


def decode(raw, duplicate_key):
    """The value the UBJSON document ``raw`` (bytes) holds.  ``duplicate_key(key)``
    makes the error for an object key given twice (the JSON reader's).  ValueError on anything else that is
    not one well-formed document."""
    reader = _Reader(bytes(raw), duplicate_key)
    value = reader.value(0)
    if reader.at != len(reader.raw):
        raise ValueError(f"{len(reader.raw) - reader.at} bytes after the UBJSON document "
                         f"(at byte {reader.at})")
    return value


class _Reader:
    def __init__(self, raw, duplicate_key):
        self.raw = raw
        self.at = 0
        self.duplicate_key = duplicate_key

    # ---- bytes ------------------------------------------------------------------------
    def take(self, n, what):
        if n < 0 or n > len(self.raw) - self.at:
            raise ValueError(f"{what} of {n} bytes at byte {self.at}: the document has "
                             f"{len(self.raw) - self.at} left")
        start, self.at = self.at, self.at + n
        return self.raw[start:self.at]

    def marker(self):
        marker = self.take(1, "a type marker")
        while marker == b"N":  # no-op
            marker = self.take(1, "a type marker")
        return marker

    def number(self, marker):
        dtype = np.dtype(_NUMBERS[marker])
        return np.frombuffer(self.take(dtype.itemsize, "a number"), dtype)[0].item()

    def length(self, what):
        marker = self.marker()
        if marker not in _INTEGERS:
            raise ValueError(f"{what} at byte {self.at - 1} has the marker {marker!r}, not an "
                             "integer's")
        n = self.number(marker)
        if n < 0:
            raise ValueError(f"{what} at byte {self.at} is negative ({n})")
        return n

    def string(self):
        n = self.length("a string's length")
        try:
            return self.take(n, "a string").decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"a string before byte {self.at} is not UTF-8 ({err})") from None

    # ---- values -----------------------------------------------------------------------
    def value(self, depth, marker=None):
        marker = marker or self.marker()
        if marker in _NUMBERS:
            return self.number(marker)
        if marker == b"S":
            return self.string()
        if marker == b"C":
            return self.take(1, "a char").decode("latin-1")
        if marker in (b"T", b"F"):
            return marker == b"T"
        if marker == b"Z":
            return None
        if marker in (b"[", b"{"):
            if depth >= MAX_DEPTH:
                raise ValueError(f"containers nested more than {MAX_DEPTH} deep at byte "
                                 f"{self.at}")
            return self.array(depth + 1) if marker == b"[" else self.object(depth + 1)
        raise ValueError(f"unknown UBJSON marker {marker!r} at byte {self.at - 1}")

    def container_header(self):
        """(element type marker or None, count or None) of an optimized container."""
        kind = count = None
        if self.raw[self.at:self.at + 1] == b"$":
            self.at += 1
            kind = self.take(1, "a container's type")
            if kind not in _TYPED:  # (a count of T/F/Z would take no bytes: unbounded)
                raise ValueError(f"a typed container of {kind!r} at byte {self.at - 1}")
            if self.raw[self.at:self.at + 1] != b"#":
                raise ValueError(f"a typed container without a count at byte {self.at}")
        if self.raw[self.at:self.at + 1] == b"#":
            self.at += 1
            count = self.length("a container's count")
            # every element takes at least one byte (a typed number: its size)
            size = np.dtype(_NUMBERS[kind]).itemsize if kind in _NUMBERS else 1
            if count * size > len(self.raw) - self.at:
                raise ValueError(f"a container of {count} elements at byte {self.at}: the "
                                 f"document has {len(self.raw) - self.at} bytes left")
        return kind, count

    def array(self, depth):
        kind, count = self.container_header()
        if kind in _NUMBERS:
            dtype = np.dtype(_NUMBERS[kind])
            values = np.frombuffer(self.take(count * dtype.itemsize, "a typed array"), dtype)
            return values.tolist()
        if count is not None:
            return [self.value(depth, kind) for _ in range(count)]
        out = []
        while True:
            marker = self.marker()
            if marker == b"]":
                return out
            out.append(self.value(depth, marker))

    def object(self, depth):
        kind, count = self.container_header()
        out = {}

        def add(key):
            if key in out:
                raise self.duplicate_key(key)
            out[key] = self.value(depth, kind)

        if count is not None:
            for _ in range(count):
                add(self.string())
            return out
        while True:
            if self.raw[self.at:self.at + 1] == b"}":
                self.at += 1
                return out
            add(self.string())


__all__ = ["MAX_DEPTH", "decode", "is_ubjson"]
