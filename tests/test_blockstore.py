"""Tests of the block store: memory budget, spill to disk, streaming, cleanup, errors."""

import gc
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from daskboost import blockstore
from daskboost.blockstore import (
    BlockStore,
    CacheCorruptError,
    CacheFullError,
    StoreConfig,
    check_cache_dirs,
    close_store,
    fit_dir_name,
    open_store,
    parse_memory_budget,
    remove_fit_dirs,
)

BLOCKSTORE_PY = str(Path(blockstore.__file__).resolve())

# Subprocess scripts load blockstore.py by path: it only needs numpy, numba and pyarrow,
# and skipping the package import (dask) keeps each subprocess well under a second.
# Loaded so, as a module "blockstore", numba's cache entries of its compiled functions
# name that module, which the package's own processes cannot import (nor a script that
# did not register it: "No module named '<dynamic>'"), so these scripts register it and
# keep a numba cache of their own.
PRELUDE = f"""
import importlib.util, os, sys, tempfile
os.environ["NUMBA_CACHE_DIR"] = os.path.join(tempfile.gettempdir(),
                                             "daskboost-tests-numba-cache-by-path")
import numpy as np
spec = importlib.util.spec_from_file_location("blockstore", {BLOCKSTORE_PY!r})
bs = importlib.util.module_from_spec(spec)
sys.modules["blockstore"] = bs
spec.loader.exec_module(bs)
"""


def run_script(body, timeout=60):
    script = PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout
    )


def make_codes(n_rows, n_features, dtype, seed=0):
    rng = np.random.default_rng(seed)
    high = 256 if dtype == np.uint8 else 3000
    return rng.integers(0, high, size=(n_rows, n_features)).astype(dtype)


def make_store(tmp_path, budget, compression="lz4", block_rows=100, n_dirs=1, fit_id="fit"):
    dirs = check_cache_dirs([tmp_path / f"cache{i}" for i in range(n_dirs)])
    return BlockStore(fit_id, StoreConfig(budget, tuple(dirs), compression, block_rows))


def cache_entries(*dirs):
    return [name for d in dirs if os.path.isdir(d) for name in os.listdir(d)]


def block_files(root):
    return [p for p in Path(root).rglob("*.blk")]


# --- parse_memory_budget -----------------------------------------------------------

@pytest.mark.parametrize(
    "value, expected",
    [
        (0, 0),
        (12345, 12345),
        (np.int64(7), 7),
        ("1024", 1024),
        ("10B", 10),
        ("100kb", 100_000),
        ("512MB", 512_000_000),
        ("1.5GB", 1_500_000_000),
        ("2TB", 2 * 10**12),
        ("1KiB", 1024),
        ("256MiB", 256 * 2**20),
        ("1GiB", 2**30),
        ("1TiB", 2**40),
        ("3k", 3 * 1024),
        ("2m", 2 * 2**20),
        ("2g", 2 * 2**30),
        ("1t", 2**40),
        (" 64 MB ", 64_000_000),
    ],
)
def test_parse_memory_budget_units(value, expected):
    assert parse_memory_budget(value) == expected


def test_parse_memory_budget_auto():
    assert parse_memory_budget("auto", available=8_000_000_000) == 4_000_000_000
    assert parse_memory_budget("AUTO", available=1001) == 500
    assert parse_memory_budget("auto") > 0  # read from the system


@pytest.mark.parametrize(
    "value, error",
    [
        ("lots", ValueError),
        ("", ValueError),
        ("-1MB", ValueError),
        ("5XB", ValueError),
        ("1e9", ValueError),
        ("nan", ValueError),
        (-1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (True, TypeError),
        (None, TypeError),
        ([512], TypeError),
    ],
)
def test_parse_memory_budget_bad_values(value, error):
    with pytest.raises(error, match="memory_budget") as info:
        parse_memory_budget(value)
    assert repr(value) in str(info.value)


# --- round trips -------------------------------------------------------------------

def assert_blocks_cover(stored):
    expected_start = 0
    for start, stop, block in stored.blocks():
        assert start == expected_start and stop >= start
        assert block.shape == (stop - start, stored.shape[1])
        assert block.dtype == stored.dtype
        assert block.flags.c_contiguous and block.flags.writeable
        expected_start = stop
    assert expected_start == stored.shape[0]


@pytest.mark.parametrize("compression", ["lz4", "zstd", None])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("budget", ["all", 0, 150])  # 150 bytes < one block
def test_round_trip(tmp_path, compression, dtype, budget):
    shapes = [(0, 5), (1, 3), (100, 4), (250, 7), (301, 2)]
    arrays = [make_codes(n, f, dtype, seed=n) for n, f in shapes]
    if budget == "all":
        budget = sum(a.nbytes for a in arrays)
    store = make_store(tmp_path, budget, compression, block_rows=100)
    try:
        stored = [store.put(a) for a in arrays]
        for a, s in zip(arrays, stored):
            assert s.shape == a.shape and s.dtype == a.dtype and s.nbytes == a.nbytes
            assert_blocks_cover(s)
            out = s.to_numpy()
            assert out.dtype == a.dtype and out.shape == a.shape
            np.testing.assert_array_equal(out, a)
            if budget >= sum(x.nbytes for x in arrays):
                assert s.n_blocks == 1 and out is a  # fast path: kept as is
            elif a.nbytes:
                assert s.n_blocks == -(-a.shape[0] // 100)
        assert store.memory_bytes <= budget
        if budget == 0:  # every row is on disk
            n_blocks = sum(-(-n // 100) for n, _ in shapes)
            assert store.spilled_blocks == n_blocks == len(block_files(tmp_path))
        kept = [b for s in stored for _, _, b in s._blocks if isinstance(b, np.ndarray)]
        assert store.memory_bytes == sum(b.nbytes for b in kept)
        assert store.spilled_blocks == len(block_files(tmp_path))
        assert store.spilled_blocks + len(kept) == sum(s.n_blocks for s in stored)
    finally:
        store.close()
    assert cache_entries(tmp_path / "cache0") == []


def test_partially_spilled(tmp_path):
    a = make_codes(1000, 10, np.uint8)  # 10 blocks of 100 rows, 1000 bytes each
    store = make_store(tmp_path, budget=3500, compression="zstd", block_rows=100)
    try:
        stored = store.put(a)
        in_memory = [b for _, _, b in stored._blocks if isinstance(b, np.ndarray)]
        assert stored.n_blocks == 10
        assert len(in_memory) == 3 and all(b.base is None for b in in_memory)  # copies
        assert store.memory_bytes == 3000 <= store.config.memory_budget
        assert store.spilled_blocks == 7 == len(block_files(tmp_path))
        assert store.disk_bytes == sum(f.stat().st_size for f in block_files(tmp_path))
        np.testing.assert_array_equal(stored.to_numpy(), a)
        # A second array only fits the 500 bytes left for blocks of its own size.
        small = store.put(make_codes(50, 10, np.uint8))
        assert small.n_blocks == 1 and store.memory_bytes == 3500
        assert_blocks_cover(stored)
    finally:
        store.close()
    assert store.memory_bytes == 0 and store.disk_bytes == 0


def test_blocks_stop_early_and_prefetch(tmp_path):
    a = make_codes(1000, 8, np.uint16)
    store = make_store(tmp_path, budget=0, block_rows=100)
    threads_before = set(threading.enumerate())
    try:
        stored = store.put(a)
        for i, (start, stop, block) in enumerate(stored.blocks()):
            if i == 2:
                break  # the prefetch of block 3 is waited for or cancelled
        gen = stored.blocks()
        next(gen)
        gen.close()
        np.testing.assert_array_equal(stored.to_numpy(), a)
        new_threads = set(threading.enumerate()) - threads_before
        assert len(new_threads) <= blockstore.PREFETCH_THREADS
        assert all(t.name.startswith("daskboost-prefetch") for t in new_threads)
    finally:
        store.close()
    with pytest.raises(RuntimeError, match="closed"):
        next(stored.blocks())
    with pytest.raises(RuntimeError, match="closed"):
        store.put(a)


def counting_reads(store, monkeypatch):
    """The paths of the disk blocks ``store`` reads, in order (a list, filled)."""
    read, paths = store._read, []

    def counted(disk):
        paths.append(disk.path)
        return read(disk)
    monkeypatch.setattr(store, "_read", counted)
    return paths


def test_a_read_ahead_first_block_is_taken_by_the_next_pass_not_read_again(
        tmp_path, monkeypatch):
    a = make_codes(1000, 8, np.uint8)
    store = make_store(tmp_path, budget=2000, block_rows=100)  # blocks 0-1 kept
    try:
        stored = store.put(a)
        disk_paths = [b.path for _, _, b in stored._blocks if not isinstance(b, np.ndarray)]
        assert len(disk_paths) == 8
        reads = counting_reads(store, monkeypatch)
        stored.read_ahead()
        stored.read_ahead()  # (started already: not read twice)
        stored._first_read.result()
        assert reads == disk_paths[:1]  # the first block on disk, read before the pass
        np.testing.assert_array_equal(np.concatenate([b for _, _, b in stored.blocks()]), a)
        assert reads == disk_paths  # each block read once
        np.testing.assert_array_equal(stored.to_numpy(), a)  # a pass without: the same
        assert reads == disk_paths * 2
        stored.read_ahead()
        stored.release()  # a read ahead no pass took is dropped with the array
        assert stored._first_read is None
    finally:
        store.close()


def test_a_read_ahead_row_block_stored_again_since_is_read_again(tmp_path, monkeypatch):
    store = make_store(tmp_path, budget=0, block_rows=100)
    try:
        column = store.new_column((1,), 300, np.float32)
        for i in range(3):
            column.set(i, np.full((1, 100), i, np.float32))
        reads = counting_reads(store, monkeypatch)
        column.prefetch(1)
        column.prefetch(1)  # (being read: not read twice)
        np.testing.assert_array_equal(column.get(1), 1.0)
        assert len(reads) == 1
        column.prefetch(2)
        column._ahead[2][1].result()
        column.set(2, np.full((1, 100), 7, np.float32))  # over the file read ahead
        np.testing.assert_array_equal(column.get(2), 7.0)
        # a read of a block file since replaced (as by a pass that failed before
        # taking it) is not taken for the block there now
        column.prefetch(0)
        column._ahead[0][1].result()
        column._blocks[0] = store._spill(np.full((1, 100), 5, np.float32))
        np.testing.assert_array_equal(column.get(0), 5.0)
    finally:
        store.close()


def test_sharding_over_cache_dirs(tmp_path):
    store = make_store(tmp_path, budget=0, block_rows=100, n_dirs=2)
    try:
        a = make_codes(400, 3, np.uint8)
        np.testing.assert_array_equal(store.put(a).to_numpy(), a)
        for i in range(2):
            files = block_files(tmp_path / f"cache{i}")
            assert len(files) == 2
            assert all(f.parent.name == fit_dir_name("fit") for f in files)
    finally:
        store.close()
    assert cache_entries(tmp_path / "cache0", tmp_path / "cache1") == []


def test_concurrent_puts(tmp_path):
    budget = 5000
    store = make_store(tmp_path, budget=budget, block_rows=50)
    arrays = [make_codes(120 + 17 * i, 9, np.uint8, seed=i) for i in range(8)]
    results = [None] * 8
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for _ in range(3):
                results[i] = store.put(arrays[i])
                assert store.memory_bytes <= budget
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert 0 < store.memory_bytes <= budget and store.spilled_blocks > 0
        for a, s in zip(arrays, results):
            np.testing.assert_array_equal(s.to_numpy(), a)
        names = [f.name for f in block_files(tmp_path)]
        assert len(names) == len(set(names)) == store.spilled_blocks
    finally:
        store.close()


# --- registry and cleanup ----------------------------------------------------------

def test_open_store_registry(tmp_path):
    config = StoreConfig(0, tuple(check_cache_dirs(tmp_path)), "lz4", 10)
    stores = []
    threads = [
        threading.Thread(target=lambda: stores.append(open_store("reg", config)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(stores) == 4 and all(s is stores[0] for s in stores)
        assert open_store("reg", config) is stores[0]
        stores[0].put(make_codes(30, 2, np.uint8))
        assert os.path.isdir(tmp_path / fit_dir_name("reg"))
    finally:
        close_store("reg")
    close_store("reg")  # absent: no error
    assert stores[0].closed and cache_entries(tmp_path) == []
    assert open_store("reg", config) is not stores[0]
    close_store("reg")


def test_close_is_idempotent_and_lazy_dir(tmp_path):
    store = make_store(tmp_path, budget=10**6)
    store.put(make_codes(100, 4, np.uint8))
    assert cache_entries(tmp_path / "cache0") == []  # nothing spilled, no directory
    store.close()
    store.close()


def test_cleanup_after_exception(tmp_path):
    config = StoreConfig(0, tuple(check_cache_dirs(tmp_path)), "lz4", 10)
    with pytest.raises(ZeroDivisionError):
        store = open_store("boom", config)
        try:
            store.put(make_codes(100, 4, np.uint8))
            assert os.path.isdir(tmp_path / fit_dir_name("boom"))
            1 / 0
        finally:
            close_store("boom")
    assert cache_entries(tmp_path) == []


def test_cleanup_at_garbage_collection(tmp_path):
    store = make_store(tmp_path, budget=0, block_rows=10)
    stored = store.put(make_codes(100, 4, np.uint8))
    assert len(block_files(tmp_path)) == 10
    del store, stored
    gc.collect()
    assert cache_entries(tmp_path / "cache0") == []


def test_remove_fit_dirs(tmp_path):
    dirs = check_cache_dirs([tmp_path / "a", tmp_path / "b"])
    for d in dirs:
        os.makedirs(os.path.join(d, fit_dir_name("dead")))
        Path(d, fit_dir_name("dead"), "123-0.blk").write_bytes(b"x")
    os.makedirs(os.path.join(dirs[0], fit_dir_name("other")))
    remove_fit_dirs("dead", dirs)
    remove_fit_dirs("dead", dirs)  # absent: no error
    remove_fit_dirs("dead", str(tmp_path / "missing"))
    assert cache_entries(*dirs) == [fit_dir_name("other")]
    with pytest.raises(ValueError, match="fit_id"):
        fit_dir_name("../x")


def test_cleanup_on_keyboard_interrupt(tmp_path):
    cache = tmp_path / "cache"
    script = PRELUDE + textwrap.dedent(f"""
        config = bs.StoreConfig(0, tuple(bs.check_cache_dirs({str(cache)!r})), "lz4", 64)
        store = bs.open_store("sigint", config)
        try:
            rng = np.random.default_rng(0)
            for i in range(100_000):
                stored = store.put(rng.integers(0, 255, (1000, 16), dtype=np.uint8))
                for block in stored.blocks():
                    pass
                if i == 0:
                    print("ready", flush=True)
        finally:
            bs.close_store("sigint")
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert os.path.isdir(cache / fit_dir_name("sigint"))
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in stderr
    assert cache_entries(cache) == []


def test_cleanup_at_exit_without_close(tmp_path):
    cache = tmp_path / "cache"
    result = run_script(f"""
        config = bs.StoreConfig(0, tuple(bs.check_cache_dirs({str(cache)!r})), None, 10)
        store = bs.open_store("noclose", config)
        store.put(np.zeros((100, 3), np.uint16))
        print(len(os.listdir(os.path.join({str(cache)!r}, bs.fit_dir_name("noclose")))))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "10"
    assert cache_entries(cache) == []


# --- errors ------------------------------------------------------------------------

def test_check_cache_dirs(tmp_path):
    assert check_cache_dirs(None) == [os.path.abspath(tempfile.gettempdir())]
    nested = tmp_path / "x" / "y"
    assert check_cache_dirs(nested) == [str(nested)]
    assert check_cache_dirs((tmp_path / "a", str(tmp_path / "b"))) == [
        str(tmp_path / "a"), str(tmp_path / "b")
    ]
    assert sorted(cache_entries(tmp_path)) == ["a", "b", "x"]  # no probe files left
    assert cache_entries(nested) == []
    for bad in ([], 3):
        with pytest.raises(ValueError, match="cache_dir"):
            check_cache_dirs(bad)


def test_check_cache_dirs_under_a_file(tmp_path):
    regular = tmp_path / "file"
    regular.write_text("not a directory")
    path = regular / "cache"
    with pytest.raises(ValueError, match="cache_dir") as info:
        check_cache_dirs(path)
    assert str(path) in str(info.value) and "Not a directory" in str(info.value)
    assert cache_entries(tmp_path) == ["file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_check_cache_dirs_read_only(tmp_path):
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="cache_dir") as info:
            check_cache_dirs(read_only)
        assert str(read_only) in str(info.value) and "Permission denied" in str(info.value)
        assert cache_entries(read_only) == []
    finally:
        read_only.chmod(0o700)


def test_check_cache_dirs_probe_failure_removes_created_dirs(tmp_path, monkeypatch):
    # Runs as root too: a failing probe stands in for an unwritable directory.
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(blockstore.tempfile, "mkstemp", refuse)
    path = tmp_path / "new" / "cache"
    with pytest.raises(ValueError, match="cache_dir") as info:
        check_cache_dirs(path)
    assert str(path) in str(info.value) and "Permission denied" in str(info.value)
    assert cache_entries(tmp_path) == []


def test_cache_full(tmp_path):
    cache = tmp_path / "cache"
    result = run_script(f"""
        import resource, signal
        config = bs.StoreConfig(0, tuple(bs.check_cache_dirs({str(cache)!r})), None, 1000)
        store = bs.open_store("full", config)
        fit_dir = os.path.join({str(cache)!r}, bs.fit_dir_name("full"))
        store.put(np.ones((10, 8), np.uint8))  # one small block file: 80 bytes
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
        try:
            store.put(np.ones((3000, 64), np.uint8))  # blocks of 64000 bytes
        except bs.CacheFullError as e:
            print(e)
            print(len(os.listdir(fit_dir)), store.spilled_blocks, store.disk_bytes)
        finally:
            bs.close_store("full")
        print(os.path.exists(fit_dir))
    """)
    assert result.returncode == 0, result.stderr
    message, listing, exists = result.stdout.strip().splitlines()
    assert str(cache) in message and "64000 bytes" in message
    assert "memory_budget" in message and "cache_dir" in message
    assert listing == "1 1 80"  # only the first block's file: the partial one is removed
    assert exists == "False" and cache_entries(cache) == []


def test_cache_full_error_is_os_error():
    assert issubclass(CacheFullError, OSError)


@pytest.mark.parametrize("compression", ["snappy", "gzip", "LZ5", ""])
def test_invalid_compression(tmp_path, compression):
    with pytest.raises(ValueError, match="cache_compression") as info:
        StoreConfig(0, (str(tmp_path),), compression)
    assert repr(compression) in str(info.value)


def test_invalid_config(tmp_path):
    with pytest.raises(ValueError, match="block_rows"):
        StoreConfig(0, (str(tmp_path),), "lz4", 0)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match=f"pass_bytes must be an integer >= 0; got {bad}"):
            StoreConfig(0, (str(tmp_path),), pass_bytes=bad)
        with pytest.raises(ValueError, match=f"code_rows must be an integer >= 0; got {bad}"):
            StoreConfig(0, (str(tmp_path),), code_rows=bad)
    with pytest.raises(ValueError, match="cache_dir"):
        StoreConfig(0, (), "lz4")
    store = make_store(tmp_path, budget=0)
    with pytest.raises(ValueError, match="2-D"):
        store.put(np.zeros(5, np.uint8))
    store.close()


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_compression_is_kept_only_where_it_pays(tmp_path, compression):
    store = make_store(tmp_path, budget=0, compression=compression, block_rows=1000)
    try:
        runs = np.repeat(np.arange(4, dtype=np.uint8), 250)[:, None].repeat(8, axis=1)
        noise = make_codes(1000, 8, np.uint8)  # incompressible: stored raw
        stored_runs, stored_noise = store.put(runs), store.put(noise)
        sizes = [os.path.getsize(b.path) for s in (stored_runs, stored_noise)
                 for _, _, b in s._blocks]
        assert sizes[0] < 0.1 * runs.nbytes
        assert sizes[1] == noise.nbytes
        np.testing.assert_array_equal(stored_runs.to_numpy(), runs)
        np.testing.assert_array_equal(stored_noise.to_numpy(), noise)
    finally:
        store.close()


class _CountingCodec:
    def __init__(self, codec):
        self.codec, self.compressions = codec, 0

    def compress(self, data):
        self.compressions += 1
        return self.codec.compress(data)

    def decompress(self, *args, **kwargs):
        return self.codec.decompress(*args, **kwargs)


@pytest.mark.parametrize("put", ["put", "put_rows"])
def test_an_array_whose_first_block_did_not_compress_is_written_raw(tmp_path, put):
    """An array's blocks are alike: once one of them did not compress enough, the rest
    of that array is written raw without trying (each try costs a compression); the
    next array tries again."""
    store = make_store(tmp_path, budget=0, compression="lz4", block_rows=1000)
    store._codec = codec = _CountingCodec(store._codec)
    try:
        noise_then_runs = np.concatenate([make_codes(1000, 8, np.uint8),
                                          np.zeros((2000, 8), np.uint8)])
        runs = np.zeros((3000, 8), np.uint8)
        sizes = []
        for array in (noise_then_runs, runs):
            stored = (store.put(array) if put == "put" else
                      store.put_rows(array.shape, array.dtype, lambda a, b: array[a:b]))
            np.testing.assert_array_equal(stored.to_numpy(), array)
            sizes.append([os.path.getsize(b.path) for _, _, b in stored._blocks])
        assert codec.compressions == 1 + 3  # the first array's first block; each of runs'
        assert sizes[0] == [8000, 8000, 8000]  # raw, though its last two blocks are zeros
        assert max(sizes[1]) < 800
    finally:
        store.close()


@pytest.mark.parametrize("compression", ["zstd", None])
@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "append", "swap blocks"])
def test_a_damaged_block_file_is_reported_never_read(tmp_path, compression, damage):
    """Compressed (zstd on runs) and raw (noise) blocks alike: a block file changed after
    it was written raises CacheCorruptError naming it, before its bytes are used."""
    store = make_store(tmp_path, budget=0, compression=compression, block_rows=100)
    try:
        runs = np.repeat(np.arange(5, dtype=np.uint8), 100)[:, None].repeat(8, axis=1)
        stored = store.put(runs if compression else make_codes(500, 8, np.uint8))
        paths = [b.path for _, _, b in stored._blocks]
        target = paths[2]
        data = open(target, "rb").read()
        if damage == "flip a byte":
            data = data[:7] + bytes([data[7] ^ 0x10]) + data[8:]
        elif damage == "truncate":
            data = data[:-3]
        elif damage == "append":
            data = data + b"\0"
        else:
            data = open(paths[3], "rb").read()  # another block's (valid) bytes
        open(target, "wb").write(data)
        seen = []
        with pytest.raises(blockstore.CacheCorruptError, match=re.escape(target)):
            for start, _, block in stored.blocks():
                seen.append(start)
        assert seen == [0, 100]  # the blocks before the damaged one, nothing after
    finally:
        store.close()
    assert cache_entries(tmp_path / "cache0") == []


def test_checksum_sees_every_byte_and_its_place():
    data = np.random.default_rng(0).integers(0, 256, 1003, dtype=np.uint8).tobytes()
    reference = blockstore.block_checksum(data)
    for i in (0, 7, 8, 500, 1000, 1002):  # in a word, at word edges, in the tail
        changed = bytearray(data)
        changed[i] ^= 1
        assert blockstore.block_checksum(bytes(changed)) != reference
    swapped = data[8:16] + data[:8] + data[16:]  # two words trade places
    assert blockstore.block_checksum(swapped) != reference
    swapped = data[32:40] + data[8:32] + data[:8] + data[40:]  # ... in the same lane
    assert blockstore.block_checksum(swapped) != reference
    assert blockstore.block_checksum(data[:-1]) != reference
    assert blockstore.block_checksum(data) == reference


@pytest.mark.parametrize("budget", [10_000, 250])
def test_put_rows_keeps_narrower_blocks_narrow(tmp_path, budget):
    # uint8 blocks of an array declared uint16 (codes that fit: binning.narrowed) are
    # kept as uint8, in memory (taking their own bytes of the budget) or on disk
    full = make_codes(1050, 4, np.uint8)
    store = make_store(tmp_path, budget, "lz4", block_rows=100)
    try:
        stored = store.put_rows(full.shape, np.uint16, lambda a, b: full[a:b])
        assert {b.dtype for _, _, b in stored._blocks} == {np.dtype(np.uint8)}
        np.testing.assert_array_equal(stored.to_numpy(), full)
        assert store.memory_bytes == sum(b.nbytes for _, _, b in stored._blocks
                                         if isinstance(b, np.ndarray))
        assert store.memory_bytes == (full.nbytes if budget > full.nbytes else 200)
    finally:
        store.close()


@pytest.mark.parametrize("budget", ["all", 0, 250])
def test_put_rows_makes_one_block_at_a_time_beyond_the_budget(tmp_path, budget):
    full = make_codes(1050, 4, np.uint8)
    store = make_store(tmp_path, full.nbytes if budget == "all" else budget, "lz4",
                       block_rows=100)
    asked = []

    def make_rows(start, stop):
        asked.append((start, stop))
        return full[start:stop]

    try:
        stored = store.put_rows(full.shape, np.uint8, make_rows)
        np.testing.assert_array_equal(stored.to_numpy(), full)
        if budget == "all":
            assert asked == [(0, 1050)] and stored.n_blocks == 1
        else:  # block by block, in order: never the whole array
            assert asked == [(s, min(s + 100, 1050)) for s in range(0, 1050, 100)]
            assert store.memory_bytes <= budget
        with pytest.raises(ValueError, match=r"expected a uint16 \(3, 4\) block"):
            store.put_rows((3, 4), np.uint16, lambda a, b: full[a:b].astype(np.int16))
        assert store.memory_bytes == sum(b.nbytes for _, _, b in stored._blocks
                                         if isinstance(b, np.ndarray))
    finally:
        store.close()
    assert cache_entries(tmp_path / "cache0") == []


# ---- RowColumn: a partition's per-row state in row blocks (issue 17) ----------------------

@pytest.mark.parametrize("budget", [0, 4 * 250, 10**9])  # on disk; half in memory; in memory
def test_row_column_round_trip_and_rewrites(tmp_path, budget):
    store = make_store(tmp_path, budget, block_rows=100)
    values = np.arange(2 * 450, dtype=np.float32).reshape(2, 450)
    column = store.new_column((2,), 450, np.float32)
    assert column.bounds == [(0, 100), (100, 200), (200, 300), (300, 400), (400, 450)]
    for i, (start, stop) in enumerate(column.bounds):
        column.set(i, values[:, start:stop])
    np.testing.assert_array_equal(column.to_numpy(), values)
    files = block_files(tmp_path)
    # written again: a block on disk goes over its own file, one in memory in place
    for i, (start, stop) in enumerate(column.bounds):
        column.prefetch(i)
        block = column.get(i)
        block += 1.0
        column.set(i, block)
    np.testing.assert_array_equal(column.to_numpy(), values + 1.0)
    assert block_files(tmp_path) == files
    assert store.disk_bytes == sum(os.path.getsize(f) for f in files)
    assert (len(files) > 0) == (budget < values.nbytes)
    column.release()
    assert store.memory_bytes == 0 and store.disk_bytes == 0
    assert block_files(tmp_path) == []
    with pytest.raises(RuntimeError, match="closed"):
        column.get(0)
    store.close()


def test_row_column_refuses_wrong_shapes_and_unset_blocks(tmp_path):
    store = make_store(tmp_path, 0, block_rows=100)
    column = store.new_column((), 150, np.uint8)
    with pytest.raises(ValueError, match=r"expected a \(100,\) block; got \(50,\)"):
        column.set(0, np.zeros(50, np.uint8))
    with pytest.raises(RuntimeError, match="block 1 .* never set"):
        column.get(1)
    store.close()


def test_a_damaged_row_column_block_is_never_read(tmp_path):
    store = make_store(tmp_path, 0, block_rows=100)
    column = store.new_column((1,), 100, np.float64)
    column.set(0, np.ones((1, 100)))
    (path,) = block_files(tmp_path)
    with open(path, "r+b") as f:
        f.write(b"\x00" * 8)
    with pytest.raises(CacheCorruptError, match="checksum mismatch"):
        column.get(0)
    store.close()
    assert block_files(tmp_path) == []


def test_the_per_pass_part_of_the_budget_is_kept_for_per_pass_columns(tmp_path):
    """``pass_bytes`` of the budget go to the node ids and gradients (every pass reads
    them), not to the codes or the other per-row arrays, which take only the rest."""
    dirs = check_cache_dirs([tmp_path / "cache0"])
    store = BlockStore("fit", StoreConfig(3000, tuple(dirs), None, 100, pass_bytes=2000))
    try:
        codes = store.put(make_codes(300, 5, np.uint8))  # 1,500 bytes, 500 a block
        assert [isinstance(b, np.ndarray) for _, _, b in codes._blocks] == [True, True, False]
        margins = store.new_column((1,), 300, np.float64)  # 800 bytes a block: the rest
        node_ids = store.new_column((1,), 300, np.uint8, per_pass=True)  # 100 a block
        gradients = store.new_column((1,), 300, np.float32, per_pass=True)  # 400 a block
        for column in (margins, node_ids, gradients):
            for i in range(3):
                column.set(i, np.full((1, 100), i, column.dtype))
        in_memory = {name: [isinstance(b, np.ndarray) for b in column._blocks]
                     for name, column in [("margins", margins), ("node ids", node_ids),
                                          ("gradients", gradients)]}
        assert in_memory == {"margins": [False] * 3, "node ids": [True] * 3,
                             "gradients": [True] * 3}
        assert store.memory_bytes == 1000 + 300 + 1200
        for column in (margins, node_ids, gradients):
            np.testing.assert_array_equal(column.to_numpy()[0], np.repeat([0, 1, 2], 100))
    finally:
        store.close()


@pytest.mark.parametrize("row_bytes, rows", [(28, 262144), (56, 131072), (1, 2**20),
                                             (8 * 2**20, 4096), (0, 2**20)])
def test_a_fits_blocks_hold_about_eight_megabytes_of_codes(row_bytes, rows):
    assert blockstore.block_rows_for(row_bytes) == rows


def test_a_store_without_block_rows_takes_the_default(tmp_path):
    config = StoreConfig(0, tuple(check_cache_dirs([tmp_path])))
    assert config.block_rows is None
    store = BlockStore("fit", config)
    try:
        assert store.config.block_rows == blockstore.DEFAULT_BLOCK_ROWS
        codes = store.put(make_codes(blockstore.DEFAULT_BLOCK_ROWS + 1, 2, np.uint8))
        assert codes.n_blocks == 2
    finally:
        store.close()


def test_room_is_kept_for_the_codes_still_to_come(tmp_path):
    """With ``code_rows``, the codes of every partition come before the other per-row
    arrays in the budget (the passes read codes every time, labels and margins once a
    round): a column made after the first partition's codes does not take the room the
    second partition's codes will need, and takes what is left once they are stored.
    Without ``code_rows``, first come, first served."""
    dirs = tuple(check_cache_dirs([tmp_path / "cache0"]))

    def stored(code_rows):
        store = BlockStore("fit", StoreConfig(2000, dirs, None, 100, code_rows=code_rows))
        try:
            first = store.put(make_codes(200, 5, np.uint8))  # 1,000 bytes, whole
            labels = store.new_column((), 200, np.float32)  # 400 bytes a block
            labels.set(0, np.zeros(100, np.float32))
            second = store.put_rows((200, 5), np.uint8,  # 500 bytes a block
                                    lambda start, stop: make_codes(stop - start, 5, np.uint8))
            labels.set(1, np.ones(100, np.float32))
            return [[isinstance(b, np.ndarray) for _, _, b in a._blocks]
                    for a in (first, second)] + [
                [isinstance(b, np.ndarray) for b in labels._blocks]]
        finally:
            store.close()

    first, second, labels = stored(code_rows=400)
    assert (first, second, labels) == ([True], [True], [False, False])
    first, second, labels = stored(code_rows=0)
    assert (first, second, labels) == ([True], [True, False], [True, False])
    # the codes' rows all stored: the rest goes to other arrays again
    store = BlockStore("fit", StoreConfig(2000, dirs, None, 100, code_rows=200))
    try:
        store.put(make_codes(200, 5, np.uint8))
        margins = store.new_column((1,), 200, np.float64)  # 800 bytes a block
        margins.set(0, np.zeros((1, 100)))
        assert isinstance(margins._blocks[0], np.ndarray)
    finally:
        store.close()


def test_read_buffers_are_reused_only_once_nothing_refers_to_them(tmp_path):
    """Disk blocks are read into buffers kept by the store; a buffer is read into again
    only when no block given out still views it, so a block kept stays as read."""
    store = make_store(tmp_path, 0, compression=None, block_rows=100)
    try:
        full = make_codes(1000, 4, np.uint16)
        stored = store.put(full)
        kept = [block for _, _, block in stored.blocks()][:3]  # blocks 0-2 held on to
        for _ in range(3):  # passes over all blocks, each dropped once used
            for start, stop, block in stored.blocks():
                np.testing.assert_array_equal(block, full[start:stop])
        for i, block in enumerate(kept):
            np.testing.assert_array_equal(block, full[100 * i:100 * (i + 1)])
        buffers = store._read_buffers[full[:100].nbytes + 1]
        assert len(buffers) == blockstore.READ_BUFFERS
        held = {id(block.base) for block in kept}
        assert held <= {id(b) for b in buffers}  # the first pass filled the kept buffers
        del kept, block
        reads = {id(block.base) for _, _, block in stored.blocks()}
        assert reads <= {id(b) for b in buffers}  # reused, none new
    finally:
        store.close()
