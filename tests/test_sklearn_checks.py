"""scikit-learn's own estimator checks (``parametrize_with_checks``) on both estimators.

Every check scikit-learn yields for them runs here, on the checks' own small data sets,
with 10 trees (as scikit-learn runs its own boosting estimators' checks with few
iterations).  One check, on dense and on sparse data, is expected to fail, for the reason
given in ``EXPECTED_FAILED``; it is strict, so this file fails if it starts passing.  No check may
be skipped: ``check_array_api_input`` needs ``SCIPY_ARRAY_API=1`` before scipy is
imported, which ``conftest.py`` sets.
"""

import unittest
import warnings

import pytest

from sklearn.utils.estimator_checks import parametrize_with_checks

from daskboost import DaskBoostClassifier, DaskBoostRegressor

# every check passes for both estimators (xfail_strict below turns a listed check that
# passes into a failure, so an entry here must be a real, explained failure)
EXPECTED_FAILED = {}

with warnings.catch_warnings():
    # scikit-learn warns that the estimators do not inherit BaseEstimator: they follow its
    # protocol without importing scikit-learn (see daskboost/sklearn.py), which these
    # checks verify
    warnings.filterwarnings("ignore", message=".*does not inherit from `sklearn.base")
    CHECKS = parametrize_with_checks(
        [DaskBoostRegressor(n_estimators=10), DaskBoostClassifier(n_estimators=10)],
        expected_failed_checks=lambda estimator: EXPECTED_FAILED.get(type(estimator), {}),
        xfail_strict=True)


@CHECKS
def test_scikit_learn_estimator_check(estimator, check):
    try:
        check(estimator)
    except unittest.SkipTest as skip:  # a skipped check would pass unnoticed
        pytest.fail(f"scikit-learn skipped the check: {skip}")
