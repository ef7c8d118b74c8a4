"""How many threads work in this process uses: ``n_jobs``, as xgboost, LightGBM and
scikit-learn users give it.

The in-process runtime (its passes and its kernels' native threads), the threaded
scheduler's graphs and in-memory prediction all take dask's ``num_workers`` setting,
else every core; ``local_threads(n_jobs)`` sets it for a block.  A ``distributed``
cluster's workers keep their own threads.
"""

import contextlib
import numbers
import os

import dask


def check_n_jobs(n_jobs, name="n_jobs"):
    """``n_jobs`` as a number of threads, or None (dask's ``num_workers`` setting, else
    every core): n >= 1 threads; -1 every core, -2 all but one, ... (joblib's count).
    TypeError/ValueError naming it (as ``name``) otherwise."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"{name}={n_jobs!r} must be an integer or None")
    if n_jobs == 0:
        raise ValueError(f"{name}=0 must be a number of threads >= 1, or negative (-1: every "
                         "core, -2: all but one), or None")
    return int(n_jobs) if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


@contextlib.contextmanager
def local_threads(n_jobs):
    """Within the block, work in this process (the in-process runtime's passes and its
    kernels' native threads, the threaded scheduler's graphs, in-memory prediction)
    uses ``check_n_jobs(n_jobs)`` threads; None leaves dask's setting.  A
    ``distributed`` cluster's workers keep their own threads."""
    n = check_n_jobs(n_jobs)
    if n is None:
        yield
        return
    with dask.config.set(num_workers=n):
        yield


def local_thread_count():
    """The threads work in this process may use: dask's ``num_workers`` setting (see
    ``local_threads``), else every core."""
    return dask.config.get("num_workers", None) or os.cpu_count() or 1
