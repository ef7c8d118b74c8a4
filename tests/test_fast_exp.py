"""``fast_exp.exp_nonpositive`` against the C library's ``exp`` (numba's ``math.exp``)."""

import math

import numba
import numpy as np

from daskboost.fast_exp import exp_nonpositive


@numba.njit
def fast(x, out):
    for i in range(x.shape[0]):
        out[i] = exp_nonpositive(x[i])


@numba.njit
def libm(x, out):
    for i in range(x.shape[0]):
        out[i] = math.exp(x[i])


def both(x):
    a, b = np.empty_like(x), np.empty_like(x)
    fast(x, a)
    libm(x, b)
    return a, b


def test_within_one_ulp_of_the_c_library_and_equal_in_float32():
    # 0 .. -800 densely (the subnormal results below -708.4 and the underflow to 0 below
    # -745.13 included), and small arguments where exp is near 1
    rng = np.random.default_rng(0)
    x = np.concatenate([-np.linspace(0.0, 800.0, 1_600_001), -rng.exponential(4.0, 400_000),
                        -rng.uniform(0.0, 1e-6, 100_000)])
    got, want = both(x)
    ulps = np.abs(got.view(np.int64) - want.view(np.int64))
    assert ulps.max() <= 1
    assert (ulps == 0).mean() > 0.85  # measured: 90.6% equal bits
    assert np.array_equal(got.astype(np.float32), want.astype(np.float32))


def test_edges():
    x = np.array([0.0, -0.0, -5e-324, -1e-300, -708.39, -708.4, -745.13, -745.14, -746.0,
                  -1e300, -np.inf, np.nan])
    got, want = both(x)
    assert got[0] == got[1] == 1.0
    assert got[-1] != got[-1]                       # NaN stays NaN
    assert np.array_equal(got[:-1], want[:-1])      # these agree to the bit
    assert got[6] == 5e-324 and got[7] == 0.0       # the smallest subnormal, then 0
