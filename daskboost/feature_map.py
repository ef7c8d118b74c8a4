"""xgboost's feature map files (the ``fmap`` argument of ``get_dump``, ``dump_model``,
``get_score``, ``trees_to_dataframe`` and the plots): reading and checking one.

A feature map names the model's features and says how a dump shows their splits, one
feature per line, three whitespace-separated fields::

    0\tcap-shape=bell\ti
    1\tcap-shape=conical\ti
    2\tage\tint

``<index> <name> <type>``: indices ``0, 1, 2, ...`` in order, a name without whitespace,
and a type: ``i`` (an indicator: a 0/1 feature whose rows missing it take the "no"
branch), ``q`` (quantitative), ``int`` (integer valued), ``float`` or ``c``
(categorical).  What the types change in a dump is ``inspection``'s business; this
module reads the file, as xgboost's ``FeatureMap::LoadText`` does, with these checks
made stricter (xgboost reads the file as one stream of tokens and stops silently at the
first one that is not an integer where an index is due, so a header line, or a name with
a space in it, gives it a shorter map or a confusing error):

* every non-blank line has exactly three fields; a line with fewer or more is an
  error naming the file and the line (blank lines are skipped);
* the index is a decimal integer and equals the number of features read before it;
* the type is one of ``i``, ``q``, ``int``, ``float``, ``c``.

Errors are ``ValueError``\\ s naming the file and the line; a file that does not exist is
a ``FileNotFoundError`` naming it.
"""

import errno
import os
import re

__all__ = ["FEATURE_TYPES", "FeatureMap", "load_feature_map", "read_feature_map"]

# a feature map's types, xgboost's names for them
FEATURE_TYPES = {"i": "indicator", "q": "quantitative", "int": "integer", "float": "float",
                 "c": "categorical"}

_INDEX = re.compile(r"[0-9]+")


class FeatureMap:
    """The features of a feature map file: ``names[i]`` and ``types[i]`` (one of
    ``FEATURE_TYPES``) of feature ``i``, for ``i < len(map)``; ``source`` names the file
    in error messages."""

    __slots__ = ("names", "types", "source")

    def __init__(self, names, types, source="feature map"):
        self.names = tuple(str(name) for name in names)
        self.types = tuple(types)
        if len(self.names) != len(self.types):
            raise ValueError(f"{source}: {len(self.names)} names for {len(self.types)} types")
        unknown = [t for t in self.types if t not in FEATURE_TYPES]
        if unknown:
            raise ValueError(f"{source}: unknown feature type {unknown[0]!r}; "
                             f"{_TYPES_HINT}")
        self.source = source

    def __len__(self):
        return len(self.names)

    def __repr__(self):
        return f"FeatureMap({len(self)} features from {self.source})"

    def type_of(self, feature):
        """The map's type of ``feature``, or None past the map's end."""
        return self.types[feature] if feature < len(self.types) else None

    def rename(self, names):
        """``names`` (a list over the model's features) with the map's names in place of
        those of the features the map covers; features past its end keep theirs."""
        covered = min(len(self.names), len(names))
        return list(self.names[:covered]) + list(names[covered:])


_TYPES_HINT = ("the types are i (indicator), q (quantitative), int (integer), float and "
               "c (categorical)")


def read_feature_map(path):
    """The ``FeatureMap`` in the file at ``path`` (``~`` expanded), checked line by line
    (see the module's docstring)."""
    path = os.fspath(os.path.expanduser(os.fspath(path)))
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "no such feature map file (fmap)", path) \
            from None
    except UnicodeDecodeError as e:
        raise ValueError(f"feature map {path!r} is not UTF-8 text ({e.reason} at byte "
                         f"{e.start})") from None
    names, types = [], []
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"feature map {path!r}, line {number}"
        if len(fields) != 3:
            hint = " (a feature name cannot contain whitespace)" if len(fields) > 3 else ""
            raise ValueError(f"{where}: expected 3 whitespace-separated fields "
                             f"'<index> <name> <type>', got {len(fields)}{hint}: "
                             f"{line.strip()!r:.80}")
        index, name, kind = fields
        if not _INDEX.fullmatch(index):
            raise ValueError(f"{where}: the feature index {index!r:.40} is not a "
                             "non-negative integer")
        if int(index) != len(names):
            raise ValueError(f"{where}: feature index {int(index)} out of order; the indices "
                             f"must be 0, 1, 2, ... in order, so {len(names)} was due")
        if kind not in FEATURE_TYPES:
            raise ValueError(f"{where}: unknown feature type {kind!r:.40} for {name!r:.80}; "
                             f"{_TYPES_HINT}")
        names.append(name)
        types.append(kind)
    return FeatureMap(names, types, source=f"feature map {path!r}")


def load_feature_map(fmap):
    """``fmap`` as xgboost's methods take it: ``""`` (or None) for no map, else a path
    (str or ``os.PathLike``) read by ``read_feature_map``; a ``FeatureMap`` passes
    through.  Returns a ``FeatureMap`` or None."""
    if fmap is None or isinstance(fmap, FeatureMap):
        return fmap
    if not isinstance(fmap, (str, os.PathLike)):
        raise TypeError(f"fmap={fmap!r:.60} must be the path of a feature map file (or '' "
                        "for none)")
    if isinstance(fmap, str) and fmap == "":
        return None
    return read_feature_map(fmap)
