"""``fast_log.log1p_unit`` against the C library's ``log1p`` (numba's ``math.log1p``).  (The
sigmoid log loss that uses it: ``test_metrics.py``.)"""

import math

import numba
import numpy as np

from daskboost.fast_log import log1p_unit


@numba.njit(error_model="numpy")
def fast(x, out):
    for i in range(x.shape[0]):
        out[i] = log1p_unit(x[i])


@numba.njit
def libm(x, out):
    for i in range(x.shape[0]):
        out[i] = math.log1p(x[i])


def both(x):
    a, b = np.empty_like(x), np.empty_like(x)
    fast(x, a)
    libm(x, b)
    return a, b


def test_within_one_ulp_of_the_c_library_on_zero_to_one():
    # [0, 1] densely, the two sides of sqrt(2) - 1 (where 1 + z is halved), tiny and
    # subnormal arguments, and exp(-|m|) of margins up to 745 (what the log loss takes)
    rng = np.random.default_rng(0)
    edge = math.sqrt(2.0) - 1.0
    x = np.concatenate([np.linspace(0.0, 1.0, 2_000_001), rng.random(500_000),
                        rng.uniform(edge - 1e-6, edge + 1e-6, 100_000),
                        rng.uniform(0.0, 1e-8, 100_000), np.exp(-rng.uniform(0, 745, 300_000)),
                        [0.0, 5e-324, 2.2e-308, 1e-300, 1.0, edge, np.nextafter(edge, 1.0)]])
    got, want = both(x)
    ulps = np.abs(got.view(np.int64) - want.view(np.int64))
    assert ulps.max() <= 1
    assert (ulps == 0).mean() > 0.8  # measured: 85% equal bits
    assert got[-7] == 0.0 and got[-3] == math.log(2.0)


def test_nan_gives_nan():
    got, _ = both(np.array([np.nan]))
    assert np.isnan(got[0])

