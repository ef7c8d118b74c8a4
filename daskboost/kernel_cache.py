"""Where numba caches daskboost's compiled kernels, and when a cached kernel is stale.

numba's on-disk cache (``cache=True``) keys a compiled function on its own source file
and nothing else. Three things it misses crash or corrupt a fit:

* **The thread count.** A kernel that calls a ``parallel=True`` kernel, cached by a
  process with one ``NUMBA_NUM_THREADS``, crashes a process with another (numba's
  cache does not record it; see numba issues #7518 and #8578). Seen here: after one
  run with ``NUMBA_NUM_THREADS=1``, the 2-thread workers of a ``LocalCluster`` fit
  died with signal 11 in every following run, until the cache was deleted.
* **Whether native threads run at all.** A process with ``DASKBOOST_NATIVE_THREADS=0``
  never starts numba's threading layer; loading the kernels the test process had cached
  (which link parallel ones) crashed it with signal 11 (``tests/test_native_threads.py``
  run on its own with an empty cache, since before this module).
* **The helpers it inlines.** A kernel that calls a helper of another module keeps
  its cached machine code when only the helper's module changes: it runs the old
  helper (wrong trees, or a crash, since numba does not check bounds).

So daskboost's kernels are cached in a directory of their own per thread count
(``__pycache__/daskboost-threads-<N>`` where numba would cache them;
``daskboost-serial-<N>`` without native threads), stamped with a hash of every
daskboost module that imports numba: any change to one compiles them all again. (A
fourth, numba's threading layer not started when such a kernel is loaded, is for the
fit to prevent: ``native_threads.available``.) ``install`` registers the locator that
does this; it runs before any kernel module is imported (``daskboost/__init__``).
Where numba's internals are not as expected, numba caches as it always does.
"""

import functools
import hashlib
import os
import re

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_IMPORTS_NUMBA = re.compile(rb"^[ \t]*(import|from) numba\b", re.MULTILINE)


@functools.lru_cache(maxsize=None)
def kernel_sources_stamp(directory=PACKAGE_DIR):
    """A hash of the sources of the modules in ``directory`` that hold numba code (the
    ones that import numba), in name order."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(directory, name), "rb") as file:
            source = file.read()
        if _IMPORTS_NUMBA.search(source):
            digest.update(name.encode() + b"\0" + source + b"\0")
    return digest.hexdigest()


def native_threads_switched_off():
    """Whether the environment says ``DASKBOOST_NATIVE_THREADS=0`` (``native_threads``:
    every kernel runs its serial version, numba's threading layer never starts)."""
    return os.environ.get("DASKBOOST_NATIVE_THREADS", "1") == "0"


def cache_subdirectory(n_threads, serial=False):
    """The directory name daskboost's kernels are cached under, for a thread count, or
    for processes whose kernels never take native threads (``serial``)."""
    return f"daskboost-{'serial' if serial else 'threads'}-{int(n_threads)}"


def install():
    """Register the locator for daskboost's kernels with numba's cache (once); False
    where numba's caching internals are not those this was written for."""
    try:
        from numba.core import caching, config
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
        base = caching._CacheLocator
    except (ImportError, AttributeError):
        return False
    classes = impl._locator_classes
    if any(getattr(cls, "_daskboost", False) for cls in classes):
        return True

    class DaskboostKernelLocator(base):
        """numba's own locator for the function, its directory and stamp extended."""

        _daskboost = True

        def __init__(self, inner):
            self._inner = inner
            self._path = os.path.join(inner.get_cache_path(), cache_subdirectory(
                config.NUMBA_NUM_THREADS, native_threads_switched_off()))

        def get_cache_path(self):
            return self._path

        def get_source_stamp(self):
            return (self._inner.get_source_stamp(), kernel_sources_stamp())

        def get_disambiguator(self):
            return self._inner.get_disambiguator()

        @property
        def _py_file(self):  # (numba's warning that a kernel cannot be cached names it)
            return self._inner._py_file

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.abspath(py_file)) != PACKAGE_DIR:
                return None
            for other in classes:
                if other is cls:
                    continue
                inner = other.from_function(py_func, py_file)
                if inner is None:
                    continue
                locator = cls(inner)
                try:
                    locator.ensure_cache_path()
                except OSError:  # (no room to write there: the next place numba tries)
                    continue
                return locator
            return None

    classes.insert(0, DaskboostKernelLocator)
    return True
