"""The radix sort of the scan pass (``sorting``): numpy's ascending order, NaN last and
-0.0 as +0.0, and the sketch's summaries unchanged by it."""

import numpy as np
import pytest

from daskboost import sketch
from daskboost.sorting import argsort_floats, sort_floats


def special_values(dtype, n=20_000, seed=0):
    """Normal values with NaNs of both signs, signed zeros, infinities and ties."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(dtype)
    x[::97] = np.nan
    x[5::101] = -np.nan
    x[7::50] = 0.0
    x[9::50] = -0.0
    x[11::1000] = np.inf
    x[13::1000] = -np.inf
    x[15::300] = np.finfo(dtype).tiny / 4  # subnormals
    x[17::300] = -np.finfo(dtype).max
    x[19::40] = 2.5  # a tie group
    return x


def canonical(x):
    """Numpy's ascending sort with -0.0 as +0.0 (the order ``sort_floats`` gives)."""
    return np.sort(x) + x.dtype.type(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make", [
    lambda d: special_values(d),
    lambda d: np.random.default_rng(1).integers(-3, 4, 5000).astype(d),  # few distinct
    lambda d: np.full(1000, 7.25, dtype=d),  # one value: every digit pass skipped
    lambda d: np.full(10, np.nan, dtype=d),
    lambda d: np.array([-0.0], dtype=d),
    lambda d: np.empty(0, dtype=d),
    lambda d: np.arange(3000, dtype=d)[::-1].copy(),
])
def test_sort_is_numpys_ascending_order_with_nan_last_and_zero_unsigned(dtype, make):
    x = make(dtype)
    before = x.copy()
    got = sort_floats(x)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, canonical(x))  # NaNs compare equal here
    assert not np.signbit(got[got == 0]).any()
    assert np.isnan(got).sum() == np.isnan(x).sum()
    assert np.isnan(got[len(got) - np.isnan(x).sum():]).all()  # NaNs last
    np.testing.assert_array_equal(x, before)  # the input is left alone


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argsort_is_stable_with_ties_in_row_order(dtype):
    x = special_values(dtype)
    order = argsort_floats(x)
    assert order.dtype == np.int64
    np.testing.assert_array_equal(order, np.argsort(x + dtype(0), kind="stable"))


def test_a_strided_column_sorts_as_its_copy():
    X = special_values(np.float32, 6000).reshape(2000, 3)
    np.testing.assert_array_equal(sort_floats(X[:, 1]), canonical(X[:, 1].copy()))
    np.testing.assert_array_equal(argsort_floats(X[:, 2]),
                                  np.argsort(X[:, 2] + np.float32(0), kind="stable"))


def test_other_dtypes_are_refused_by_name():
    with pytest.raises(TypeError, match="int64"):
        sort_floats(np.arange(3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_sketch_summaries_are_those_of_numpys_sort(dtype, weighted):
    # the summary built from numpy's sort and argsort (ties' weights added in row
    # order): what the sketch gave before the radix sort, entry for entry
    X = np.stack([special_values(dtype, 30_000, seed) for seed in range(3)], axis=1)
    with np.errstate(over="ignore"):  # (its -max becomes -inf)
        X[:, 2] = np.round(X[:, 2] * 4)  # many ties
    rng = np.random.default_rng(5)
    w = rng.uniform(0, 2, X.shape[0]) if weighted else None
    if weighted:
        w[::7] = 0.0
    size = 64
    got = sketch.summarize_block(X, w, size)
    for f, summary in enumerate(got):
        column = np.ascontiguousarray(X[:, f])
        if w is None:
            want = sketch._summary_from_sorted(np.sort(column), size)
        else:
            want = sketch._summary_from_order(column, w, np.argsort(column, kind="stable"), size)
        for field in ("values", "rmin", "rmax", "wmin"):
            np.testing.assert_array_equal(getattr(summary, field), getattr(want, field))
        assert (summary.eps, summary.total_weight) == (want.eps, want.total_weight)
