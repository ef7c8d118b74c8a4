"""Block store: keep each partition's binned codes within a memory budget.

Training reads every partition's code matrix (a C-contiguous 2-D uint8/uint16 array)
on every pass.  ``BlockStore.put`` keeps an array in memory, as is, while the
per-process ``memory_budget`` has room for it.  Beyond the budget the array is cut into
row blocks of ``block_rows`` rows: blocks are copied into memory while the budget lasts,
the rest are compressed (pyarrow ``lz4`` frame or ``zstd`` codecs, or raw bytes when
compression saves less than 20%) and written to ``<cache_dir>/daskboost-cache-<fit_id>/``.  With several cache directories
the spilled blocks are spread over them round-robin (block sharding across disks).

``StoredArray.blocks()`` streams the blocks back in row order; a small thread pool
reads and decompresses the next disk block while the caller works on the current one.

Cleanup: ``BlockStore.close()`` (or ``close_store(fit_id)``) removes the fit's
directories, and a ``weakref.finalize`` does the same when a store that was never closed
is garbage collected or the interpreter exits (including after KeyboardInterrupt).
``remove_fit_dirs`` removes them by path, after a worker process died.  A full disk,
quota or file-size limit raises ``CacheFullError`` and leaves no partial file behind.

Integrity: each disk block's bytes (as written: compressed or raw) carry a checksum
kept in memory (``block_checksum``), checked on every read before the bytes are used;
a block file changed, cut short or replaced since it was written raises
``CacheCorruptError`` naming it: such bytes are never read as codes.
"""

import errno
import math
import numbers
import os
import re
import sys
import shutil
import tempfile
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, replace

import numba
import numpy as np
import pyarrow as pa

DEFAULT_BLOCK_ROWS = 65536  # of a store whose config leaves them to its codes' width
# a fit's row blocks: the most rows, a power of two, whose codes take at most
# BLOCK_BYTES (``block_rows_for``)
BLOCK_BYTES = 8 * 2**20
MIN_BLOCK_ROWS, MAX_BLOCK_ROWS = 4096, 2**20
PREFETCH_THREADS = 2
READ_BUFFERS = 6  # read buffers kept per block size (``BlockStore._read_buffer``)
# a block whose compressed size is above this fraction of its size is written raw:
# e.g. uint16 codes of continuous features compress to ~94% with lz4, and decompressing
# them on every pass cost more CPU than reading raw bytes from the page cache
MAX_COMPRESSED_FRACTION = 0.8

# what an array is to the budget (``BlockStore._reserve``)
PER_PASS, CODES, OTHER = "per pass", "codes", "other"

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_UNITS = {"": 1, "b": 1}
for _i, _prefix in enumerate("kmgt", start=1):
    _UNITS[_prefix + "b"] = 1000**_i
    _UNITS[_prefix + "ib"] = 1024**_i
    _UNITS[_prefix] = 1024**_i
_SIZE_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)")
_BUDGET_HELP = "memory_budget must be a number of bytes, a size like '512MB', or 'auto'"


class CacheFullError(OSError):
    """The cache directory is out of space (disk full, quota or file-size limit)."""


class CacheCorruptError(OSError):
    """A block file no longer holds what was written (changed, cut short, replaced)."""


@numba.njit(nogil=True, cache=True)
def _fletcher64x4(words, tail):
    """Fletcher's checksum over 64-bit words (sums mod 2^64) in four lanes, word ``i``
    in lane ``i % 4``: a lane's ``s1`` adds its words, its ``s2`` adds the running
    ``s1``, so a changed, missing or moved word changes them; ``tail`` holds the last
    ``len % 8`` bytes (lane 0).  Four independent chains of two additions a word: one
    lane's chain ran at 26-29 GB/s, four at 47 GB/s on a block in cache (it is read
    right after its copy from the page cache)."""
    a0 = a1 = a2 = a3 = np.uint64(0)
    b0 = b1 = b2 = b3 = np.uint64(0)
    n = words.shape[0] - words.shape[0] % 4
    for i in range(0, n, 4):
        a0 += words[i]
        b0 += a0
        a1 += words[i + 1]
        b1 += a1
        a2 += words[i + 2]
        b2 += a2
        a3 += words[i + 3]
        b3 += a3
    for i in range(n, words.shape[0]):
        a0 += words[i]
        b0 += a0
    for i in range(tail.shape[0]):
        a0 += np.uint64(tail[i])
        b0 += a0
    return a0, a1, a2, a3, b0, b1, b2, b3


def block_checksum(data):
    """A checksum (eight uint64 sums and the length) of a bytes-like object."""
    raw = np.frombuffer(data, dtype=np.uint8)
    n_words = raw.shape[0] // 8
    sums = _fletcher64x4(raw[:n_words * 8].view(np.uint64), raw[n_words * 8:])
    return tuple(int(x) for x in sums) + (raw.shape[0],)


def block_rows_for(row_bytes):
    """Rows of a fit's blocks whose codes take ``row_bytes`` a row: the most rows, a
    power of two in [MIN_BLOCK_ROWS, MAX_BLOCK_ROWS], whose codes fit in BLOCK_BYTES
    (262,144 rows of 28 one-byte codes).  Each block read or written costs a few
    system calls and a pass a few Python steps per column: a 20M-row fit under a 256MB
    budget took 60-63 s with blocks of 262,144 rows against 67-72 s with 65,536
    (``benchmarks/RESULTS.md``)."""
    rows = BLOCK_BYTES // max(1, int(row_bytes))
    rows = 1 << max(0, rows.bit_length() - 1)
    return min(MAX_BLOCK_ROWS, max(MIN_BLOCK_ROWS, rows))


def parse_memory_budget(value, available=None):
    """Bytes of memory budget from an int, a size string like ``"512MB"``, or ``"auto"``.

    Decimal units ``B, KB, MB, GB, TB``; binary units ``KiB, MiB, GiB, TiB`` and the
    single letters ``k, m, g, t``; case-insensitive.  ``"auto"`` is half of
    ``available`` (bytes of available RAM, read from the system when None).
    """
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            if available is None:
                available = _available_memory()
            return int(available) // 2
        match = _SIZE_RE.fullmatch(text)
        if match is None or match.group(2) not in _UNITS:
            raise ValueError(f"{_BUDGET_HELP}; got {value!r}")
        return int(float(match.group(1)) * _UNITS[match.group(2)])
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{_BUDGET_HELP}; got {value!r} of type {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{_BUDGET_HELP}; got {value!r}")
    return int(value)


def _available_memory():
    """MemAvailable from /proc/meminfo, else half of the physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.5)


def check_cache_dirs(cache_dir):
    """Absolute paths of the cache directories, each created if needed and writable."""
    if cache_dir is None:
        dirs = [tempfile.gettempdir()]
    elif isinstance(cache_dir, (str, os.PathLike)):
        dirs = [cache_dir]
    elif isinstance(cache_dir, (list, tuple)) and cache_dir:
        dirs = list(cache_dir)
    else:
        raise ValueError(
            f"cache_dir must be a path or a non-empty list of paths; got {cache_dir!r}"
        )
    paths = []
    for d in dirs:
        if not isinstance(d, (str, os.PathLike)):
            raise ValueError(f"cache_dir entries must be paths; got {d!r}")
        paths.append(os.path.abspath(os.fspath(d)))
    paths = list(dict.fromkeys(paths))
    for path in paths:
        _check_writable(path)
    return paths


def _check_writable(path):
    missing = []  # directories this check creates, deepest first
    parent = path
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        missing.append(parent)
        parent = os.path.dirname(parent)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        _remove_dirs(missing)
        raise ValueError(f"cache_dir {path!r} cannot be created: {e.strerror or e}") from e
    try:
        fd, probe = tempfile.mkstemp(prefix=".daskboost-probe-", dir=path)
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        _remove_dirs(missing)
        raise ValueError(f"cache_dir {path!r} is not writable: {e.strerror or e}") from e


def _remove_dirs(dirs):
    for d in dirs:
        try:
            os.rmdir(d)
        except OSError:
            pass


@dataclass(frozen=True)
class StoreConfig:
    """Settings of a block store; ``cache_dirs`` as returned by ``check_cache_dirs``."""

    memory_budget: int            # bytes; None: "auto", resolved by each process
    cache_dirs: tuple
    compression: str = "lz4"
    # rows of a block; None: ``block_rows_for`` the codes' width (set by training),
    # DEFAULT_BLOCK_ROWS in a store opened without it
    block_rows: int = None
    # bytes of the budget kept for the per-row arrays that every level pass reads (node
    # ids, gradients: ``RowColumn(per_pass=True)``); the codes and the other arrays
    # take the rest (``BlockStore._reserve``)
    pass_bytes: int = 0
    # rows of training codes this process will store: until they are stored, room for
    # them is kept from the other arrays (labels, margins...), which the passes read
    # once a round against the codes' every pass (``BlockStore._reserve``)
    code_rows: int = 0

    def __post_init__(self):
        object.__setattr__(self, "cache_dirs", tuple(self.cache_dirs))
        if not self.cache_dirs:
            raise ValueError("cache_dir must name at least one directory")
        if self.compression not in ("lz4", "zstd", None):
            raise ValueError(
                f"cache_compression must be 'lz4', 'zstd' or None; got {self.compression!r}"
            )
        if self.compression is not None and not pa.Codec.is_available(self.compression):
            raise ValueError(
                f"cache_compression={self.compression!r} is not available in this pyarrow"
            )
        if self.block_rows is not None and (isinstance(self.block_rows, bool) or not isinstance(
                self.block_rows, numbers.Integral) or self.block_rows < 1):
            raise ValueError(f"block_rows must be a positive integer; got {self.block_rows!r}")
        for name in ("pass_bytes", "code_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0; got {value!r}")


_stores = {}
_stores_lock = threading.Lock()


@dataclass(frozen=True)
class StoreRef:
    """The block store a binning task writes a partition's codes to: the fit's, in the
    process the task runs in, opened with ``config`` (travels with the tasks)."""

    fit_id: str
    config: StoreConfig

    def open(self):
        return open_store(self.fit_id, self.config)


def open_store(fit_id, config):
    """The process-wide store of ``fit_id``, created by the first call.

    A ``memory_budget`` of None means "auto", resolved in this process: half of its
    available memory, and on a ``distributed`` worker at most half of its memory limit.
    """
    with _stores_lock:
        store = _stores.get(fit_id)
        if store is None or store.closed:
            config = replace(config, memory_budget=budget_bytes(config))
            store = _stores[fit_id] = BlockStore(fit_id, config)
        return store


def budget_bytes(config):
    """The memory budget of ``config`` in bytes in this process ("auto" resolved)."""
    return _auto_budget() if config.memory_budget is None else config.memory_budget


def _auto_budget():
    budget = parse_memory_budget("auto")
    if "distributed" not in sys.modules:
        # not on a worker (a worker process has imported distributed); importing it
        # (compat does) only to learn that cost ~0.2 s of a fresh process's first fit
        return budget
    from .compat import worker_memory_limit
    limit = worker_memory_limit()
    return min(budget, limit // 2) if limit else budget


def close_store(fit_id):
    """Close and forget the store of ``fit_id``, if any."""
    with _stores_lock:
        store = _stores.pop(fit_id, None)
    if store is not None:
        store.close()


def fit_dir_name(fit_id):
    """Name of the directory of ``fit_id`` under each cache dir."""
    name = str(fit_id)
    if not name or os.sep in name or (os.altsep and os.altsep in name):
        raise ValueError(f"fit_id must be a name without path separators; got {fit_id!r}")
    return f"daskboost-cache-{name}"


def remove_fit_dirs(fit_id, cache_dirs):
    """Remove the directories of ``fit_id`` under each cache dir (missing ones are fine)."""
    if isinstance(cache_dirs, (str, os.PathLike)):
        cache_dirs = [cache_dirs]
    _cleanup(None, [os.path.join(os.fspath(d), fit_dir_name(fit_id)) for d in cache_dirs])


def _cleanup(pool, dirs):
    # weakref.finalize callback: must not refer to the store.
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


class _DiskBlock:
    __slots__ = ("path", "shape", "dtype", "size", "compressed", "checksum")

    def __init__(self, path, shape, dtype, size, compressed, checksum):
        self.path, self.shape, self.dtype, self.size = path, shape, dtype, size
        self.compressed = compressed
        self.checksum = checksum  # of the bytes in the file (``block_checksum``)


class BlockStore:
    """Arrays of one fit in one process, in memory within the budget, else on disk."""

    def __init__(self, fit_id, config):
        self.fit_id = fit_id
        if config.block_rows is None:
            config = replace(config, block_rows=DEFAULT_BLOCK_ROWS)
        self.config = config
        self.memory_bytes = 0
        self.disk_bytes = 0
        self.spilled_blocks = 0
        self.closed = False
        self._codec = pa.Codec(config.compression) if config.compression else None
        self._dirs = [os.path.join(d, fit_dir_name(fit_id)) for d in config.cache_dirs]
        self._made_dirs = set()
        self._n_spills = 0
        self._code_rows_to_come = config.code_rows
        self._code_row_bytes = 0  # bytes a row of the last codes stored took
        self._lock = threading.Lock()
        self._arrays = weakref.WeakSet()
        self._read_buffers = {}  # bytes -> buffers that disk blocks are read into
        self._pool = ThreadPoolExecutor(PREFETCH_THREADS, thread_name_prefix="daskboost-prefetch")
        self._finalizer = weakref.finalize(self, _cleanup, self._pool, self._dirs)

    def put(self, array):
        """Store a 2-D array; returns a ``StoredArray``."""
        array = np.ascontiguousarray(array)
        if array.ndim != 2 or array.dtype.kind not in "biuf":
            raise ValueError(f"expected a 2-D numeric array; got {array.dtype} {array.shape}")
        if self.closed:
            raise RuntimeError(f"block store {self.fit_id!r} is closed")
        self._codes_coming(array.shape[0], array.shape[1] * array.dtype.itemsize)
        if self._reserve(array.nbytes, CODES):
            blocks = [(0, array.shape[0], array)]
        else:
            blocks, spill = [], self._array_spiller()
            try:
                for start in range(0, array.shape[0], self.config.block_rows):
                    part = array[start:start + self.config.block_rows]
                    data = part.copy() if self._reserve(part.nbytes, CODES) else spill(part)
                    blocks.append((start, start + part.shape[0], data))
            except BaseException:
                self._discard(blocks)
                raise
        return self._stored(array.shape, array.dtype, blocks)

    def _array_spiller(self):
        """``_spill`` for the blocks of one array, which stops trying to compress them
        once a block did not compress enough: an array's blocks are alike (uint16 codes
        of continuous features never do), and each try cost an lz4 compression of the
        block (~4% of a 20M-row fit's CPU time under a 256MB budget)."""
        compress = [True]

        def spill(block):
            disk = self._spill(block, compress=compress[0])
            compress[0] = compress[0] and disk.compressed
            return disk
        return spill

    def put_rows(self, shape, dtype, make_rows):
        """Store the 2-D array of ``shape`` whose rows ``start:stop`` are
        ``make_rows(start, stop)``: made whole when the budget has room for it (one
        block, as ``put``), else one block at a time, each kept or spilled before the
        next is made, so that no more than one block of it is ever outside the store
        (the bin pass: a partition's codes go straight to the store).  A block may come
        as unsigned integers narrower than ``dtype`` (codes that fit in uint8:
        ``binning.narrowed``) and is kept so."""
        n_rows, width = shape
        dtype = np.dtype(dtype)
        if self.closed:
            raise RuntimeError(f"block store {self.fit_id!r} is closed")
        nbytes = n_rows * width * dtype.itemsize
        self._codes_coming(n_rows, width * dtype.itemsize)
        if self._reserve(nbytes, CODES):
            try:
                whole = self._checked(make_rows(0, n_rows), (n_rows, width), dtype)
            except BaseException:
                with self._lock:
                    self.memory_bytes -= nbytes
                raise
            with self._lock:  # a narrower block gives back what it does not take
                self.memory_bytes -= nbytes - whole.nbytes
            return self._stored(shape, dtype, [(0, n_rows, whole)])
        blocks, spill = [], self._array_spiller()
        try:
            for start in range(0, n_rows, self.config.block_rows):
                stop = min(n_rows, start + self.config.block_rows)
                part = self._checked(make_rows(start, stop), (stop - start, width), dtype)
                data = part if self._reserve(part.nbytes, CODES) else spill(part)
                blocks.append((start, stop, data))
        except BaseException:
            self._discard(blocks)
            raise
        return self._stored(shape, dtype, blocks)

    @staticmethod
    def _checked(block, shape, dtype):
        block = np.ascontiguousarray(block)
        narrower = (block.dtype.kind == dtype.kind == "u"
                    and block.dtype.itemsize < dtype.itemsize)
        if block.shape != shape or not (block.dtype == dtype or narrower):
            raise ValueError(f"expected a {dtype} {shape} block; got {block.dtype} "
                             f"{block.shape}")
        return block

    def _stored(self, shape, dtype, blocks):
        stored = StoredArray(self, shape, dtype, blocks)
        self._arrays.add(stored)
        return stored

    def reserve(self, nbytes):
        """Take ``nbytes`` of the memory budget if it has room for them (outside the
        per-pass part); True if taken (given back when the store closes)."""
        return self._reserve(nbytes)

    def give_back(self, nbytes):
        """Return ``nbytes`` taken with ``reserve`` to the budget (their array is
        dropped)."""
        with self._lock:
            self.memory_bytes -= nbytes

    def new_column(self, lead_shape, n_rows, dtype, per_pass=False):
        """An empty ``RowColumn`` of shape ``lead_shape + (n_rows,)``; ``per_pass``: one
        that every level pass reads (its blocks may take the budget's ``pass_bytes``)."""
        if self.closed:
            raise RuntimeError(f"block store {self.fit_id!r} is closed")
        column = RowColumn(self, tuple(lead_shape), n_rows, np.dtype(dtype), per_pass)
        self._arrays.add(column)
        return column

    def _codes_coming(self, n_rows, row_bytes):
        """Codes of ``n_rows`` rows of ``row_bytes`` each are being stored: the room kept
        for the codes to come shrinks by them (``_reserve``)."""
        with self._lock:
            self._code_rows_to_come = max(0, self._code_rows_to_come - n_rows)
            self._code_row_bytes = row_bytes

    def _reserve(self, nbytes, kind=OTHER):
        """Take ``nbytes`` of the budget if there is room, in order of how often a pass
        reads the array (``kind``):

        * ``PER_PASS`` columns (node ids, gradients) may take the whole budget, and the
          last ``pass_bytes`` of it are theirs alone.  Their blocks are small (256 KB
          of node ids, 512 KB of quantized gradients, against 7.3 MB of codes at
          262,144 rows x 28), read (node ids also written) at every pass: on disk, a
          20M-row fit under a 256MB budget spent more time on them than on the codes'
          bytes.
        * ``CODES`` (``put``, ``put_rows``) take the rest.
        * ``OTHER`` arrays (labels, margins, a partition's per-row arrays kept whole)
          take the rest minus room for the codes still to come (``code_rows``): read or
          written once or twice a round, they are worth less of the budget than the
          codes every pass reads (a 20M-row fit under 256MB had half its codes' part
          taken by the first partitions' per-row arrays).  Once every partition's codes
          are stored they may take what is left."""
        budget = self.config.memory_budget
        limit = budget if kind == PER_PASS else budget - min(self.config.pass_bytes, budget)
        with self._lock:
            if kind == OTHER:
                limit -= self._code_rows_to_come * self._code_row_bytes
            if self.memory_bytes + nbytes > limit:
                return False
            self.memory_bytes += nbytes
            return True

    def _spill(self, block, compress=True, path=None):
        """Write ``block`` to a new block file (or over ``path``, a block file of this
        store given back already), compressed if ``compress`` and it saves enough.
        Refused once the store is closed: a task still running after its fit failed
        must not make the fit's directory again."""
        if path is None:
            with self._lock:
                index = self._n_spills
                self._n_spills += 1
            directory = self._dirs[index % len(self._dirs)]
            path = os.path.join(directory, f"{os.getpid()}-{index}.blk")
        directory = os.path.dirname(path)
        raw = memoryview(block).cast("B")
        data = self._codec.compress(block) if self._codec and compress else raw
        compressed = data is not raw and len(data) < MAX_COMPRESSED_FRACTION * block.nbytes
        if not compressed:  # compression that saves little costs a decompression per read
            data = raw
        try:
            with self._lock:  # (``close`` says closed under the lock, then removes)
                if self.closed:
                    raise RuntimeError(f"block store {self.fit_id!r} is closed")
                if directory not in self._made_dirs:
                    os.makedirs(directory, exist_ok=True)
                    self._made_dirs.add(directory)
            # a block written again over its file (as long): in place, without cutting
            # the file first (truncating frees its cached pages for the kernel to
            # allocate again: a 20M-row fit wrote 10.3 GB to the device, 3.1 GB in place)
            rewrite = os.path.exists(path) and os.path.getsize(path) == len(data)
            with open(path, "r+b" if rewrite else "wb") as f:
                f.write(data)
        except OSError as e:
            _remove_file(path)
            cache_dir = os.path.dirname(directory)
            if e.errno in _FULL_ERRNOS:
                raise CacheFullError(
                    e.errno,
                    f"cache_dir {cache_dir!r} is full ({e.strerror}) writing a block of "
                    f"{block.nbytes} bytes; use a larger memory_budget or another cache_dir",
                ) from e
            raise OSError(e.errno, f"cannot write cache block {path!r}: {e.strerror}") from e
        with self._lock:
            self.disk_bytes += len(data)
            self.spilled_blocks += 1
        return _DiskBlock(path, block.shape, block.dtype, len(data), compressed,
                          block_checksum(data))

    def _forget_disk_block(self, disk):
        """Take a disk block out of the accounts (its file is about to be written
        again)."""
        with self._lock:
            self.disk_bytes -= disk.size
            self.spilled_blocks -= 1

    def _discard(self, blocks):
        """Give back the memory and disk of the blocks of a failed ``put``."""
        on_disk = [b for _, _, b in blocks if isinstance(b, _DiskBlock)]
        for b in on_disk:
            _remove_file(b.path)
        with self._lock:
            self.memory_bytes -= sum(b.nbytes for _, _, b in blocks if isinstance(b, np.ndarray))
            self.disk_bytes -= sum(b.size for b in on_disk)
            self.spilled_blocks -= len(on_disk)

    def _read(self, disk):
        """Read, check and decompress one disk block (runs in the prefetch pool)."""
        nbytes = math.prod(disk.shape) * disk.dtype.itemsize
        if not disk.compressed:
            buf = self._read_buffer(nbytes + 1)  # (one byte more: a longer file shows)
            fd = os.open(disk.path, os.O_RDONLY)
            try:
                n_read = os.readv(fd, [buf])
            finally:
                os.close(fd)
            _check_block(disk, buf[:n_read])
            return buf[:nbytes].view(disk.dtype).reshape(disk.shape)
        with open(disk.path, "rb") as f:
            data = f.read()
        _check_block(disk, data)
        buf = self._codec.decompress(data, decompressed_size=nbytes)
        out = np.frombuffer(buf, disk.dtype).reshape(disk.shape)
        return out if out.flags.writeable else out.copy()

    def _read_buffer(self, nbytes):
        """A uint8 array of ``nbytes`` to read a block into: one read before and no longer
        referenced (the arrays given out are views of it, so it is free once the last
        of them is gone), else a new one, kept for reuse (up to ``READ_BUFFERS`` of a
        size).  A fresh buffer for every block cost page faults on every pass: ~8% of
        the prefetch threads' time in a 20M-row fit under a 256MB budget."""
        with self._lock:
            kept = self._read_buffers.setdefault(nbytes, [])
            for buf in kept:
                if sys.getrefcount(buf) == _UNREFERENCED:
                    return buf[:]  # (a view, made under the lock: the buffer is taken)
            buf = np.empty(nbytes, dtype=np.uint8)
            if len(kept) < READ_BUFFERS:
                kept.append(buf)
            return buf[:]

    def close(self):
        """Drop the blocks and remove this fit's directories; idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        for stored in list(self._arrays):
            stored._blocks = None
        self._read_buffers = {}
        self.memory_bytes = self.disk_bytes = 0
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._finalizer()


def _references_of_a_kept_buffer():
    """``sys.getrefcount`` of a buffer seen in ``_read_buffer``'s loop when nothing else
    refers to it (its list's reference, the loop's and the call's own)."""
    for buf in [np.empty(0)]:
        return sys.getrefcount(buf)


_UNREFERENCED = _references_of_a_kept_buffer()


def _check_block(disk, data):
    """Raise ``CacheCorruptError`` unless ``data`` is what was written to the block."""
    if block_checksum(data) != disk.checksum:
        size = len(data) if not isinstance(data, memoryview) else data.nbytes
        what = (f"has {size} bytes, {disk.size} were written" if size != disk.size
                else "does not hold the bytes written (checksum mismatch)")
        raise CacheCorruptError(errno.EIO, f"cache block {disk.path!r} {what}: the file was "
                                "changed after daskboost wrote it; nothing was read from it")


def _remove_file(path):
    try:
        os.remove(path)
    except OSError:
        pass


def single_block(array):
    """An array of rows (a partition's codes) as one ndarray when it is one block held in
    memory (a numpy array, or a ``StoredArray`` of one block in memory), else None (in
    several blocks, or on disk)."""
    if isinstance(array, np.ndarray):
        return array
    return array.single_memory_block() if isinstance(array, StoredArray) else None


class StoredArray:
    """An array held by a ``BlockStore``: row blocks in memory or on disk."""

    def __init__(self, store, shape, dtype, blocks):
        self._store = store
        self._blocks = blocks  # [(start_row, stop_row, ndarray or _DiskBlock)]
        self.shape = shape
        self.dtype = dtype
        self.nbytes = math.prod(shape) * dtype.itemsize
        self.n_blocks = len(blocks)
        self._first_read = None  # future of the first disk block's read (``read_ahead``)

    def blocks(self):
        """Yield ``(start_row, stop_row, block)`` in row order, prefetching disk blocks."""
        blocks = self._blocks
        if blocks is None:
            raise RuntimeError(f"block store {self._store.fit_id!r} is closed")
        on_disk = iter([i for i, (_, _, b) in enumerate(blocks) if isinstance(b, _DiskBlock)])
        first, self._first_read = self._first_read, None
        ahead, future = self._prefetch(blocks, on_disk, first)
        try:
            for i, (start, stop, block) in enumerate(blocks):
                if i == ahead:
                    block = future.result()
                    ahead, future = self._prefetch(blocks, on_disk)
                yield start, stop, block
        finally:
            if future is not None and not future.cancel():
                wait_futures([future])

    def single_memory_block(self):
        """The array as one ndarray when it is one block held in memory, else None."""
        blocks = self._blocks
        if blocks is None or len(blocks) != 1 or isinstance(blocks[0][2], _DiskBlock):
            return None
        return blocks[0][2]

    def read_ahead(self):
        """Start reading the first disk block, for the next ``blocks()`` to take: a pass
        over many partitions calls this for the partition it will run next
        (``partition.read_ahead``), whose first block would otherwise be read while the
        pass waits (the blocks after it are read while the block before is worked on).
        The blocks never change, so a read started here is good whenever it is taken."""
        blocks = self._blocks
        if blocks is None or self._first_read is not None:
            return
        i = next((i for i, (_, _, b) in enumerate(blocks) if isinstance(b, _DiskBlock)), None)
        if i is not None:
            self._first_read = self._store._pool.submit(self._store._read, blocks[i][2])

    def _prefetch(self, blocks, on_disk, started=None):
        i = next(on_disk, None)
        if i is None:
            return None, None
        return i, started or self._store._pool.submit(self._store._read, blocks[i][2])

    def release(self):
        """Give the array's memory back to the budget and delete its disk blocks (when
        it is replaced, e.g. by codes binned again); it cannot be read afterwards."""
        blocks, self._blocks = self._blocks, None
        first, self._first_read = self._first_read, None
        if first is not None:
            first.cancel()
        if blocks:
            self._store._discard(blocks)

    @property
    def store(self):
        """The ``BlockStore`` holding the array."""
        return self._store

    @property
    def whole_in_memory(self):
        """True when the array is one block in memory (it fit the budget)."""
        return self.n_blocks == 1 and isinstance(self._blocks[0][2], np.ndarray)

    def to_numpy(self):
        """The whole array (the block itself when stored as one block)."""
        if self.n_blocks == 1:
            return next(self.blocks())[2]
        out = np.empty(self.shape, self.dtype)
        for start, stop, block in self.blocks():
            out[start:stop] = block
        return out

    def __repr__(self):
        return f"StoredArray(shape={self.shape}, dtype={self.dtype}, n_blocks={self.n_blocks})"


class RowColumn:
    """A per-row array of a partition (labels, margins, gradients, node ids: shape
    ``lead_shape + (n_rows,)``, rows on the last axis) held in row blocks of the store's
    grid (``block_rows`` rows from row 0, the blocks of the codes it goes with), each in
    memory while the budget lasts, else on disk (issue 17: under a budget, what grows
    with the rows lives in the store).

    ``set(i, values)`` stores block ``i`` (in place when it is in memory);
    ``get(i)`` gives it back: the block itself when in memory (changes to it stay), a
    fresh array read and checked from disk otherwise (``set`` it to keep changes);
    ``prefetch(i)`` starts reading block ``i`` on the store's read-ahead threads.
    """

    def __init__(self, store, lead_shape, n_rows, dtype, per_pass=False):
        self._store = store
        self.per_pass = per_pass
        self.lead_shape = lead_shape
        self.n_rows = n_rows
        self.dtype = dtype
        self.shape = lead_shape + (n_rows,)
        rows = store.config.block_rows
        self.bounds = [(start, min(n_rows, start + rows)) for start in range(0, n_rows, rows)]
        self._blocks = [None] * len(self.bounds)
        self._ahead = {}  # block index -> (the _DiskBlock read, the future of its read)

    @property
    def n_blocks(self):
        return len(self.bounds)

    def new_like(self, dtype, per_pass=False):
        """An empty column of ``dtype`` with this one's shape, in the same store."""
        return self._store.new_column(self.lead_shape, self.n_rows, dtype, per_pass)

    def set(self, i, values):
        blocks = self._live()
        start, stop = self.bounds[i]
        shape = self.lead_shape + (stop - start,)
        values = np.asarray(values)
        if values.shape != shape:
            raise ValueError(f"expected a {shape} block; got {values.shape}")
        _, stale = self._ahead.pop(i, (None, None))  # a read of what this replaces
        if stale is not None and not stale.cancel():
            wait_futures([stale])
        old = blocks[i]
        if isinstance(old, np.ndarray):
            if old is not values:
                old[...] = values
            return
        block = np.ascontiguousarray(values, dtype=self.dtype)
        if isinstance(old, _DiskBlock):  # written again over its file, raw
            self._store._forget_disk_block(old)
            blocks[i] = self._store._spill(block, compress=False, path=old.path)
        elif self._store._reserve(block.nbytes, PER_PASS if self.per_pass else OTHER):
            blocks[i] = block.copy() if block is values else block
        else:
            # raw: per-row values (margins, gradients) compress little, and a column's
            # blocks are written again and again
            blocks[i] = self._store._spill(block, compress=False)

    def get(self, i):
        blocks = self._live()
        block = blocks[i]
        if block is None:
            raise RuntimeError(f"row block {i} of a {self.shape} column was never set")
        read, future = self._ahead.pop(i, (None, None))
        if isinstance(block, np.ndarray):
            return block
        if read is block:
            return future.result()
        if future is not None and not future.cancel():  # a read of what was there before
            wait_futures([future])
        return self._store._read(block)

    def prefetch(self, i):
        """Start reading block ``i`` if it is on disk (``get(i)`` then takes it).  A read
        is taken only for the block file it read: a block stored again since (``set``)
        is read again."""
        blocks = self._live()
        if i < len(blocks) and isinstance(blocks[i], _DiskBlock):
            if self._ahead.get(i, (None,))[0] is not blocks[i]:
                self._ahead[i] = (blocks[i], self._store._pool.submit(self._store._read,
                                                                      blocks[i]))

    def to_numpy(self):
        """The whole array, as a new array."""
        out = np.empty(self.shape, self.dtype)
        for i, (start, stop) in enumerate(self.bounds):
            out[..., start:stop] = self.get(i)
        return out

    def release(self):
        """Give the column's memory and disk back to the store."""
        blocks, self._blocks = self._blocks, None
        for _, future in self._ahead.values():
            future.cancel()
        self._ahead = {}
        if blocks:
            self._store._discard([(start, stop, b) for (start, stop), b
                                  in zip(self.bounds, blocks) if b is not None])

    def _live(self):
        if self._blocks is None:
            raise RuntimeError(f"block store {self._store.fit_id!r} is closed")
        return self._blocks

    def __repr__(self):
        return f"RowColumn(shape={self.shape}, dtype={self.dtype}, n_blocks={self.n_blocks})"
