"""The prefetch hint of the row kernels (``daskboost.prefetch``) and when they use it
(``row_partition.sparse_run``).  That the kernels asking for it move the same rows and
add the same sums is checked in ``tests/test_row_partition.py``
(``test_runs_of_codes_beyond_a_cores_cache``: codes large enough, deep runs sparse)."""

import numba
import numpy as np
import pytest

from daskboost.prefetch import prefetch
from daskboost.row_partition import (PREFETCH_DISTANCE, PREFETCH_MIN_BYTES, SPARSE_RUN_SPAN,
                                     sparse_run)


@numba.njit
def _sum_with_prefetch(values, rows, distance):
    total = 0.0
    for k in range(rows.shape[0]):
        if k + distance < rows.shape[0]:
            prefetch(values, rows[k + distance])
        total += values[rows[k]]
    return total


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int64, np.float32])
def test_prefetch_is_a_hint_that_changes_nothing(dtype):
    rng = np.random.default_rng(3)
    values = rng.integers(0, 200, 10_000).astype(dtype)
    rows = np.sort(rng.choice(values.shape[0], 500, replace=False)).astype(np.int32)
    before = values.copy()
    assert _sum_with_prefetch(values, rows, 16) == float(values[rows].astype(np.float64).sum())
    assert np.array_equal(values, before)


def test_prefetch_takes_a_one_dimensional_array_and_an_integer():
    @numba.njit
    def of_rows(codes):
        prefetch(codes, 0)

    @numba.njit
    def of_a_float_place(values):
        prefetch(values, 0.5)

    with pytest.raises(numba.core.errors.TypingError):
        of_rows(np.zeros((3, 4), np.uint8))
    with pytest.raises(numba.core.errors.TypingError):
        of_a_float_place(np.zeros(3))


LARGE_CODES = np.zeros((PREFETCH_MIN_BYTES // 28 + 1, 28), np.uint8)


def _run(order, first=0, n=None, codes=LARGE_CODES):
    order = np.asarray(order, dtype=np.int32)
    return sparse_run.py_func(codes, order, first, len(order) - first if n is None else n)


def test_sparse_runs_are_long_and_hold_few_rows_of_their_span():
    n = 4 * PREFETCH_DISTANCE
    assert not _run(np.arange(n))  # every row of its span
    assert not _run(np.arange(n) * SPARSE_RUN_SPAN)  # one row in SPARSE_RUN_SPAN, just
    assert _run(np.arange(n) * (SPARSE_RUN_SPAN + 1))
    assert not _run(np.arange(PREFETCH_DISTANCE) * 1000)  # too short to look ahead
    assert _run(np.arange(PREFETCH_DISTANCE + 1) * 1000)
    # a run inside the order: its own rows only
    order = np.concatenate([np.arange(n), np.arange(n) * 100 + n])
    assert not _run(order, 0, n) and _run(order, n, n)


def test_codes_that_stay_in_a_cores_cache_are_not_prefetched():
    sparse = np.arange(4 * PREFETCH_DISTANCE) * 1000
    assert _run(sparse, codes=np.zeros((PREFETCH_MIN_BYTES // 2, 2), np.uint8))
    assert not _run(sparse, codes=np.zeros((PREFETCH_MIN_BYTES // 2 - 1, 2), np.uint8))
    # uint16 cells (``histogram.cells_of``) take twice the bytes
    assert _run(sparse, codes=np.zeros((PREFETCH_MIN_BYTES // 4, 2), np.uint16))
