"""numba's cache of daskboost's kernels (``kernel_cache``): a directory per thread
count, stale when any module with numba code changes."""

import os
import subprocess
import sys

from numba.core import config

from daskboost import kernel_cache
from daskboost.native_threads import _probe_kernel


def test_kernels_are_cached_apart_for_each_thread_count():
    """A cached kernel lives under its process's thread count's directory; another
    count in a fresh process gets another directory, and so does a process whose
    kernels never take native threads."""
    path = _probe_kernel._cache._cache_path
    assert os.path.basename(path) == kernel_cache.cache_subdirectory(config.NUMBA_NUM_THREADS)
    assert os.path.dirname(os.path.abspath(path)).startswith(kernel_cache.PACKAGE_DIR)
    code = ("import daskboost.native_threads as n; "
            "print(n._probe_kernel._cache._cache_path)")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "NUMBA_NUM_THREADS": "1"}, check=True)
    assert os.path.basename(other.stdout.strip()) == kernel_cache.cache_subdirectory(1)
    assert os.path.dirname(other.stdout.strip()) == os.path.dirname(path)
    # a process without native threads (its kernels loaded the test process's kernels,
    # which link parallel ones, and crashed): a directory of its own
    serial = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "DASKBOOST_NATIVE_THREADS": "0"}, check=True)
    assert os.path.basename(serial.stdout.strip()) == kernel_cache.cache_subdirectory(
        config.NUMBA_NUM_THREADS, serial=True) != os.path.basename(path)


def test_the_stamp_changes_with_any_module_holding_numba_code(tmp_path):
    """Editing a module that holds numba code (a helper another kernel inlines) makes
    every cached kernel stale; editing one without numba code does not."""
    (tmp_path / "kernels.py").write_text("import numba\n@numba.njit\ndef f(x): return x\n")
    (tmp_path / "helpers.py").write_text("from numba.extending import overload\n")
    (tmp_path / "plain.py").write_text("def g(): return 1  # (no numba here)\n")
    stamp = kernel_cache.kernel_sources_stamp.__wrapped__
    before = stamp(str(tmp_path))
    (tmp_path / "plain.py").write_text("def g(): return 2  # (no numba here)\n")
    assert stamp(str(tmp_path)) == before
    (tmp_path / "helpers.py").write_text("from numba.extending import overload  # edited\n")
    assert stamp(str(tmp_path)) != before
    locator = _probe_kernel._cache._impl.locator
    assert locator.get_source_stamp()[1] == kernel_cache.kernel_sources_stamp()


def test_install_registers_the_locator_once():
    from numba.core import caching
    assert kernel_cache.install()
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    assert sum(getattr(c, "_daskboost", False) for c in impl._locator_classes) == 1


def test_the_locator_names_the_kernels_file():
    # numba's warning that a kernel cannot be cached (dynamic globals) reads the
    # locator's file; without it that warning was an AttributeError
    locator = _probe_kernel._cache._impl.locator
    assert os.path.samefile(locator._py_file, sys.modules[_probe_kernel.__module__].__file__)
