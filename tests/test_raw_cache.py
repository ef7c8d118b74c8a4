"""The scan pass keeps the raw partitions it read for the bin pass (``raw_cache``): in
process, a dask DataFrame partition is read once a fit instead of twice, the model is
the same, and nothing stays kept after the fit."""

import collections
import threading

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from daskboost import DaskBoostClassifier, raw_cache
from daskboost.data import with_category_columns
from daskboost.runtime import Runtime

N_PARTITIONS = 4
ROWS = 500


def counted_frame(reads, one_class=False):
    """A dask DataFrame of ``N_PARTITIONS`` delayed parts (a string column among them,
    with missing values)
    that counts in ``reads`` how often each part is made (``one_class``: every label 0)."""
    lock = threading.Lock()

    def part(i):
        with lock:
            reads[i] += 1
        rng = np.random.default_rng(i)
        x = rng.normal(size=ROWS)
        color = rng.choice(["red", "green", "blue", None], size=ROWS, p=[0.3, 0.3, 0.3, 0.1])
        label = ((x + (color == "red")) > 0.5).astype(np.int64) * (not one_class)
        return pd.DataFrame({"x": x, "z": rng.normal(size=ROWS),
                             "color": pd.array(color, dtype="string"), "label": label})

    meta = part(0).iloc[:0]
    reads.clear()
    return dd.from_delayed([dask.delayed(part)(i) for i in range(N_PARTITIONS)], meta=meta,
                           verify_meta=False)


def fit_model(frame, **params):
    model = DaskBoostClassifier(n_estimators=5, max_depth=3, **params)
    with dask.config.set(scheduler="threads"):
        model.fit(frame[["x", "z", "color"]], frame["label"])
    return model


def test_partitions_read_once_with_the_same_model(monkeypatch):
    reads = collections.Counter()
    kept = fit_model(counted_frame(reads))
    assert dict(reads) == {i: 1 for i in range(N_PARTITIONS)}  # the scan's read only
    assert raw_cache._kept == {}  # taken by the bin pass, nothing left over
    monkeypatch.setattr(Runtime, "keep_raw", lambda self, data, i: None)
    reads_again = collections.Counter()
    read_twice = fit_model(counted_frame(reads_again))
    assert dict(reads_again) == {i: 2 for i in range(N_PARTITIONS)}
    assert kept.get_booster().to_payload() == read_twice.get_booster().to_payload()


def test_partitions_past_the_cap_are_read_again(monkeypatch):
    part = counted_frame(collections.Counter()).partitions[0].compute()
    # what is kept of a partition: X with its string column as a category column, y
    kept_x = with_category_columns(part[["x", "z", "color"]], [2])
    cap = (raw_cache._nbytes(kept_x) + raw_cache._nbytes(part["label"])) * 3 // 2
    monkeypatch.setattr(Runtime, "keep_raw", lambda self, data, i: (
        self.fit_id, data.x_keys[i], cap))
    reads = collections.Counter()
    fit_model(counted_frame(reads))
    assert sorted(reads.values()) == [1] + [2] * (N_PARTITIONS - 1)
    assert raw_cache._kept == {}


def test_nothing_kept_after_a_fit_that_fails_between_the_passes():
    reads = collections.Counter()
    with pytest.raises(ValueError, match="only one class"):  # found from the scan's sums
        fit_model(counted_frame(reads, one_class=True))
    assert dict(reads) == {i: 1 for i in range(N_PARTITIONS)}  # all scanned, and kept
    assert raw_cache._kept == {} and raw_cache._bytes == {}


def test_keep_respects_the_cap_and_take_forgets():
    frame = pd.DataFrame({"a": np.arange(100.0), "s": pd.Series(["x"] * 100, dtype=object)})
    size = raw_cache._nbytes(frame)
    assert size >= 100 * 8 + 100 * raw_cache.OBJECT_VALUE_BYTES
    assert raw_cache.keep("fit", 0, (frame, None, None), cap=size)
    assert not raw_cache.keep("fit", 1, (frame, None, None), cap=size)  # over the cap
    assert raw_cache.holds("fit", 0) and not raw_cache.holds("fit", 1)
    assert raw_cache.take("fit", 0)[0] is frame
    assert not raw_cache.holds("fit", 0)
    assert raw_cache.keep("fit", 1, (frame, None, None), cap=size)  # room again
    raw_cache.drop("fit")
    assert not raw_cache.holds("fit", 1) and "fit" not in raw_cache._bytes


def test_kept_bytes_are_counted_by_dtype_without_visiting_values():
    n = 50
    frame = pd.DataFrame({
        "f32": np.zeros(n, dtype=np.float32),
        "cat": pd.Categorical(["a", "b"] * (n // 2)),
        "text": pd.Series(["long string " * 10] * n, dtype="string"),
        "ints": pd.array(range(n), dtype="Int64"),  # its values and a validity byte
    })
    per_row = 4 + 8 + raw_cache.OBJECT_VALUE_BYTES + 9
    assert raw_cache._nbytes(frame) == n * per_row
    assert raw_cache._nbytes(frame["ints"]) == n * 9
    assert raw_cache._nbytes(np.zeros((n, 3))) == n * 3 * 8
