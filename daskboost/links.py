"""Link functions, defined once: the sigmoid, the softmax, the logit, the class rule.

An objective's margin ``m`` becomes its output through the inverse of its link
(McCullagh & Nelder 1989, sec. 2.2): the logistic sigmoid ``1 / (1 + exp(-m))`` for
``binary:logistic`` and ``reg:logistic`` (the logit link), the softmax
``p_k = exp(m_k) / sum_j exp(m_j)`` for ``multi:*`` (the multinomial logit link;
Friedman 2001, sec. 4.6).  Every module (gradient kernels, output transforms, metrics,
``predict_proba``) takes them from here; this module imports nothing else of the package
but ``fast_exp``.

Two compiled forms
------------------
The gradient kernels are numba functions and call the compiled forms
(:func:`sigmoid_scalar`, :func:`softmax_rows`); predictions and metrics call the numpy
forms (:func:`sigmoid`, :func:`softmax`, :func:`log_softmax`).  A compiled form does the
same floating-point operations as its numpy form, but they are not interchangeable bit
for bit: the compiled forms take ``exp`` from ``fast_exp`` (vectorisable, within 1 ulp
of the C library's), numpy its own SIMD ``exp``, and the two differ in the last bit for
some arguments.  Models are built from the kernels' values (gradients, rounded to
float32) and predictions from numpy's, so each keeps its form.  (An edit here compiles
the kernels that inline these forms again: ``kernel_cache``.)

Numerical stability
-------------------
:func:`sigmoid` evaluates ``1 / (1 + e)`` for ``m >= 0`` and ``e / (1 + e)`` for
``m < 0``, ``e = exp(-|m|)``, so ``exp`` never overflows and tiny probabilities keep
their relative precision (subnormal down to ``m = -745``).  :func:`sigmoid_direct` is
the plain ``1 / (1 + exp(-m))``: the same values for ``m >= 0``, but for ``m < 0`` it
rounds differently (measured: 38% of negative arguments differ, by up to 3 ulp) and
``exp(-m)`` overflows to ``inf`` below ``m = -709.78`` (the result is then 0, without a
warning).  It stays for the callers that always used it, AUC scores and
``predict_proba``, whose values must not move.  The softmax subtracts the largest
margin of each row before ``exp`` (``softmax(m) = softmax(m - max m)``), so the largest
term is ``exp(0) = 1`` and nothing overflows for finite margins.
"""

import math

import numba
import numpy as np

from .fast_exp import exp_nonpositive

__all__ = ["class_index", "log_softmax", "logit", "sigmoid", "sigmoid_direct",
           "sigmoid_scalar", "softmax", "softmax_rows"]


# ---------------------------------------------------------------------------------------
# sigmoid, the inverse of the logit link
# ---------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, inline="always", error_model="numpy")
def sigmoid_scalar(m):
    """``1 / (1 + exp(-m))`` of one float (numba), in the overflow-free split form:
    ``1 / (1 + e)`` for ``m >= 0``, ``e / (1 + e)`` for ``m < 0``, ``e = exp(-|m|)``
    (``fast_exp``: a loop of it is vectorised)."""
    e = exp_nonpositive(-abs(m))
    return 1.0 / (1.0 + e) if m >= 0.0 else e / (1.0 + e)


def sigmoid(margin):
    """``1 / (1 + exp(-m))`` elementwise (numpy, float64), in the overflow-free split form:
    ``1 / (1 + e)`` for ``m >= 0``, ``e / (1 + e)`` for ``m < 0``, ``e = exp(-|m|)``."""
    margin = np.asarray(margin, dtype=np.float64)
    e = np.exp(-np.abs(margin))
    return np.where(margin >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sigmoid_direct(x):
    """``1 / (1 + exp(-x))`` elementwise, evaluated as written (numpy).

    Equal to :func:`sigmoid` for ``x >= 0``; for ``x < 0`` it may differ in the last
    bit, and it underflows to 0 sooner (``exp(-x) = inf`` below ``x = -709.78``; that
    overflow is silenced).  Used by the AUC scores and ``predict_proba``, which always
    computed it this way.
    """
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def logit(p):
    """``log(p / (1 - p))``, the logit link (inverse of the sigmoid), of one float."""
    return math.log(p / (1.0 - p))


# ---------------------------------------------------------------------------------------
# softmax, the inverse of the multinomial logit link, over the class axis of (K, n)
# ---------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, error_model="numpy")
def softmax_rows(margin, start, n, out, top, total):
    """Write the softmax of the margins of rows ``start .. start + n - 1`` into
    ``out[:, :n]`` (numba; ``out`` (K, >= n), ``top`` and ``total`` (>= n,) work arrays,
    all C-contiguous).

    ``out[k, j] = exp(m_k - top) / sum_l exp(m_l - top)``, ``top = max_l m_l`` of the
    row: shifting by the largest margin leaves the softmax unchanged and keeps ``exp``
    from overflowing.  The sum runs over ``l = 0, 1, ...`` in order.  Each step goes
    over the n rows (a loop the compiler vectorises, ``exp`` included: ``fast_exp``).
    """
    K = out.shape[0]
    for j in range(n):
        top[j] = margin[0, start + j]
    for k in range(1, K):
        row = margin[k, start:start + n]
        for j in range(n):
            top[j] = max(top[j], row[j])
    for j in range(n):
        total[j] = 0.0
    for k in range(K):
        row = margin[k, start:start + n]
        probs = out[k]
        for j in range(n):
            e = exp_nonpositive(row[j] - top[j])
            probs[j] = e
            total[j] += e
    for k in range(K):
        probs = out[k]
        for j in range(n):
            probs[j] = probs[j] / total[j]


def softmax(margin):
    """Class probabilities ``(n, K)`` from margins ``(K, n)`` (numpy):
    ``p_k = exp(m_k - top) / sum_j exp(m_j - top)``, ``top`` the row's largest margin."""
    z = margin - margin.max(axis=0, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=0, keepdims=True)).T


def log_softmax(m):
    """``log softmax`` over the class axis of ``(K, n)`` margins, ``(K, n)`` (numpy):
    ``log p_k = (m_k - top) - log sum_j exp(m_j - top)``, ``top`` the row's largest margin."""
    shifted = m - m.max(axis=0)
    return shifted - np.log(np.exp(shifted).sum(axis=0))


# ---------------------------------------------------------------------------------------
# margins -> predicted class
# ---------------------------------------------------------------------------------------


def class_index(margin):
    """The predicted class of each row, ``(n,)`` float64, from margins ``(K, n)``.

    One margin per row (binary): class 1 when ``m > 0``, i.e. ``sigmoid(m) > 1/2``.
    Several (multiclass): the class with the largest margin, the first one on ties; the
    softmax is increasing in each margin, so that is the most probable class.
    """
    if margin.shape[0] == 1:
        return (margin[0] > 0).astype(np.float64)
    return np.argmax(margin, axis=0).astype(np.float64)
