"""Survival analysis: the accelerated failure time (AFT) model's loss, gradients and
hessians, for ``survival:aft`` and its metrics.

Each row's label is an interval ``[lower, upper]`` of its event time: ``lower ==
upper`` an observed time (uncensored), ``upper = inf`` right-censored (the event had
not happened by ``lower``), ``lower = 0`` left-censored, else interval-censored.  The
model says ``log T = m + sigma Z``, ``m`` the margin and ``Z`` a standard normal,
logistic or extreme-value (Gumbel minimum) variable (``aft_loss_distribution``,
``sigma = aft_loss_distribution_scale``); the loss is the negative log-likelihood of
the interval (Barnwal, Cho & Hocking 2022, eq. 3-5):

- uncensored: ``-log(f(z) / (sigma y))``, ``z = (log y - m) / sigma``
- censored: ``-log(F(z_u) - F(z_l))``, with ``F(z_u) = 1`` when ``upper = inf`` and
  ``F(z_l) = 0`` when ``lower = 0``.

Its derivatives in ``m`` (eq. 6-9 there) are xgboost's, with its safeguards: a
denominator below 1e-12 that makes a derivative NaN or infinite gives the derivative's
limit as the margin goes to infinity (which depends on the distribution, the
censoring and the sign of ``z``), gradients are clipped to [-15, 15] and hessians to
[1e-16, 15].  Margins predict ``log T``: the prediction is ``exp(m)``.

A. Barnwal, H. Cho, T. Hocking, "Survival regression with accelerated failure time
model in XGBoost", J. Comput. Graph. Stat. 31(4), 2022 (arXiv:2006.04920).
"""

import math

import numba
import numpy as np

DISTRIBUTIONS = ("normal", "logistic", "extreme")
NORMAL, LOGISTIC, EXTREME = range(3)

_MIN_GRADIENT, _MAX_GRADIENT = -15.0, 15.0
_MIN_HESSIAN, _MAX_HESSIAN = 1e-16, 15.0
_EPS = 1e-12  # a denominator below it is regularised
_UNCENSORED, _RIGHT, _LEFT, _INTERVAL = range(4)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


@numba.njit(nogil=True, cache=True, inline="always")
def _pdf(z, dist):
    if dist == NORMAL:
        return math.exp(-z * z / 2.0) / _SQRT_2PI
    w = math.exp(z)
    if dist == LOGISTIC:
        if math.isinf(w) or math.isinf(w * w):
            return 0.0
        return w / ((1.0 + w) * (1.0 + w))
    return 0.0 if math.isinf(w) else w * math.exp(-w)


@numba.njit(nogil=True, cache=True, inline="always")
def _cdf(z, dist):
    if dist == NORMAL:
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
    w = math.exp(z)
    if dist == LOGISTIC:
        return 1.0 if math.isinf(w) else w / (1.0 + w)
    return 1.0 - math.exp(-w)


@numba.njit(nogil=True, cache=True, inline="always")
def _densities(z, dist):
    """(f, f', f'') at ``z``: the density and its first two derivatives in ``z``
    (xgboost's formulas, zero where ``exp(z)`` overflows), sharing one ``exp``."""
    if dist == NORMAL:
        pdf = math.exp(-z * z / 2.0) / _SQRT_2PI
        return pdf, -z * pdf, (z * z - 1.0) * pdf
    w = math.exp(z)
    if math.isinf(w):
        return 0.0, 0.0, 0.0
    if dist == LOGISTIC:
        if math.isinf(w * w):
            return 0.0, 0.0, 0.0
        pdf = w / ((1.0 + w) * (1.0 + w))
        return (pdf, pdf * (1.0 - w) / (1.0 + w),
                pdf * (w * w - 4.0 * w + 1.0) / ((1.0 + w) * (1.0 + w)))
    pdf = w * math.exp(-w)
    hess = 0.0 if math.isinf(w * w) else (w * w - 3.0 * w + 1.0) * pdf
    return pdf, (1.0 - w) * pdf, hess


@numba.njit(nogil=True, cache=True, inline="always")
def _at_bound(bound, m, sigma, dist):
    """(z, f(z), F(z), f'(z)) at a bound of the interval, ``z = (log bound - m) / sigma``."""
    z = (math.log(bound) - m) / sigma
    pdf, grad_pdf, _ = _densities(z, dist)
    return z, pdf, _cdf(z, dist), grad_pdf


@numba.njit(nogil=True, cache=True, error_model="numpy")
def aft_loss(lower, upper, m, sigma, dist):
    """The negative log-likelihood of one row's interval at margin ``m``."""
    if lower == upper:
        z = (math.log(lower) - m) / sigma
        return -math.log(max(_pdf(z, dist) / (sigma * lower), _EPS))
    cdf_u = 1.0 if math.isinf(upper) else _cdf((math.log(upper) - m) / sigma, dist)
    cdf_l = 0.0 if lower <= 0.0 else _cdf((math.log(lower) - m) / sigma, dist)
    return -math.log(max(cdf_u - cdf_l, _EPS))


@numba.njit(nogil=True, cache=True)
def _limit_gradient(censoring, positive, sigma, dist):
    """The gradient's limit as the margin goes to -inf (``positive``: z > 0) or +inf
    (xgboost's table, per distribution and censoring)."""
    bound = _MAX_GRADIENT if dist == NORMAL else 1.0 / sigma
    low = -1.0 / sigma if dist == LOGISTIC else _MIN_GRADIENT
    if censoring == _RIGHT:
        return low if positive else 0.0
    if censoring == _LEFT:
        return 0.0 if positive else bound
    return low if positive else bound


@numba.njit(nogil=True, cache=True)
def _limit_hessian(censoring, positive, sigma, dist):
    """The hessian's limit, as ``_limit_gradient``'s."""
    if dist == NORMAL:
        exact = 1.0 / (sigma * sigma)
        if censoring == _RIGHT:
            return exact if positive else _MIN_HESSIAN
        if censoring == _LEFT:
            return _MIN_HESSIAN if positive else exact
        return exact
    if dist == LOGISTIC:
        return _MIN_HESSIAN
    if censoring == _LEFT:
        return _MIN_HESSIAN
    return _MAX_HESSIAN if positive else _MIN_HESSIAN


@numba.njit(nogil=True, cache=True, error_model="numpy")
def aft_gradient(lower, upper, m, sigma, dist):
    """(dl/dm, d2l/dm2) of one row, xgboost's safeguards applied (module docstring)."""
    if lower == upper:
        z = (math.log(lower) - m) / sigma
        pdf, grad_pdf, hess_pdf = _densities(z, dist)
        censoring, positive = _UNCENSORED, z > 0.0
        g_num, g_den = grad_pdf, sigma * pdf
        h_num = -(pdf * hess_pdf - grad_pdf * grad_pdf)
        h_den = sigma * sigma * pdf * pdf
    else:
        censoring = _INTERVAL
        if math.isinf(upper):  # (no upper bound: F = 1 there, f = f' = 0)
            z_u, pdf_u, cdf_u, grad_u = 0.0, 0.0, 1.0, 0.0
            censoring = _RIGHT
        else:
            z_u, pdf_u, cdf_u, grad_u = _at_bound(upper, m, sigma, dist)
        if lower <= 0.0:  # (no lower bound: F = f = f' = 0 there)
            z_l, pdf_l, cdf_l, grad_l = 0.0, 0.0, 0.0, 0.0
            censoring = _LEFT
        else:
            z_l, pdf_l, cdf_l, grad_l = _at_bound(lower, m, sigma, dist)
        positive = z_u > 0.0 or z_l > 0.0
        cdf_diff, pdf_diff = cdf_u - cdf_l, pdf_u - pdf_l
        g_num, g_den = pdf_diff, sigma * cdf_diff
        h_num = -(cdf_diff * (grad_u - grad_l) - pdf_diff * pdf_diff)
        h_den = g_den * g_den
    gradient = g_num / g_den
    if g_den < _EPS and (math.isnan(gradient) or math.isinf(gradient)):
        gradient = _limit_gradient(censoring, positive, sigma, dist)
    hessian = h_num / h_den
    if h_den < _EPS and (math.isnan(hessian) or math.isinf(hessian)):
        hessian = _limit_hessian(censoring, positive, sigma, dist)
    return (_clip(gradient, _MIN_GRADIENT, _MAX_GRADIENT),
            _clip(hessian, _MIN_HESSIAN, _MAX_HESSIAN))


@numba.njit(nogil=True, cache=True, inline="always")
def _clip(x, low, high):
    # (xgboost's: NaN stays NaN)
    if x < low:
        return low
    if x > high:
        return high
    return x


@numba.njit(nogil=True, cache=True, error_model="numpy")
def interval_losses(lower, upper, margin, sigma, dist):
    """Each row's ``aft_loss`` (the ``aft-nloglik`` metric's terms)."""
    out = np.empty(margin.shape[0])
    for i in range(margin.shape[0]):
        out[i] = aft_loss(np.float64(lower[i]), np.float64(upper[i]), margin[i], sigma, dist)
    return out
