"""Partition states living in a worker process, for ``distributed`` runs.

On a cluster, each worker keeps the training states of the partitions it binned in a
process-wide registry (keyed by fit, collection and partition index).  Each worker
also holds one ``StateHolder`` actor per fit, which the client calls directly, without
the scheduler in the loop:

- ``run``: one pass over the worker's partitions (with as many threads as the worker
  has).  It returns only partial sums: the nodes of the fixed pairwise reduction tree
  (see ``runtime.reduce_nodes``) that the worker's partitions complete, so the client
  finishes the same sums, in the same order, as the in-process scheduler: same model,
  byte for byte.
- ``run_loop``: a loop of such passes (the levels of a round), run by every worker at
  once.  After each pass the workers send their partial sums to each other (``deliver``,
  worker to worker) and each completes the same reduction tree, so every worker holds
  the same totals and the deterministic loop takes the same decisions everywhere; the
  client waits for the round instead of relaying every level.

If a worker dies, its states die with it; ``partition_index`` says which partitions a
worker still holds, and the client rebuilds the lost ones from the raw data (see
``cluster.py``).
"""

import asyncio
import ctypes
import ctypes.util
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from .runtime import reduce_nodes

_lock = threading.Lock()
_fits = {}   # fit_id -> {(collection, index): state}
_pools = {}  # fit_id -> ThreadPoolExecutor


# glibc's mallopt: dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=64 KiB, which
# also pins glibc's mmap threshold at 128 KiB.  Then every histogram and position array
# of a level is a fresh mmap whose pages fault in on first touch (the histogram kernel
# measured 1.55x slower in a worker than in a plain process, 5.9 vs 3.8 ms per 125k
# rows), and whatever is freed at the top of the heap goes back to the OS at once, to
# be faulted in again by the next level: a 1M-row, 100-tree fit on two workers took
# 14.5 s, against 12.8 s with both thresholds at 64 MiB.  While a fit runs, a worker
# keeps both at 64 MiB; ``release`` puts the worker's settings back and trims the heap.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_FIT_THRESHOLD = 64 * 2 ** 20
_DEFAULT_MMAP_THRESHOLD = 128 * 2 ** 10
_DEFAULT_TRIM_THRESHOLD = 128 * 2 ** 10


def _tune_malloc(during_fit):
    """glibc's mmap and trim thresholds for a fit (``during_fit``), or back to the
    process's own (the trim threshold from MALLOC_TRIM_THRESHOLD_ if set)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        if during_fit:
            libc.mallopt(_M_MMAP_THRESHOLD, _FIT_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _FIT_THRESHOLD)
        else:
            trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "")
            libc.mallopt(_M_TRIM_THRESHOLD,
                         int(trim) if trim.isdigit() else _DEFAULT_TRIM_THRESHOLD)
            libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_MMAP_THRESHOLD)
            libc.malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        pass


class MissingStateError(RuntimeError):
    """A pass needed a partition state that this worker does not hold (it was lost)."""


class PeerLost(RuntimeError):
    """A loop stopped because another worker of the loop failed or was lost."""


def begin_fit(fit_id):
    """Make room for the fit's states in this process (and tune glibc for it from its
    first pass over the raw data on: reading and sketching allocate large arrays too)."""
    with _lock:
        _begin(fit_id)


def _begin(fit_id):
    if not _fits:
        _tune_malloc(during_fit=True)
    return _fits.setdefault(fit_id, {})


def register(fit_id, collection, index, state):
    """Keep ``state`` as partition ``index`` of ``collection`` in this process."""
    with _lock:
        _begin(fit_id)[(collection, index)] = state


def forget_states(fit_id):
    """Drop the fit's states held here (they are about to be rebuilt)."""
    with _lock:
        _fits.get(fit_id, {}).clear()


def lookup(fit_id, collection, index):
    try:
        return _fits[fit_id][(collection, index)]
    except KeyError:
        raise MissingStateError(
            f"partition {index} of {collection!r} is not held by this worker "
            f"(it was lost with another worker)") from None


def partition_index(fit_id):
    """{collection: sorted partition indices} held by this process."""
    out = {}
    for collection, index in list(_fits.get(fit_id, {})):
        out.setdefault(collection, []).append(index)
    return {c: sorted(v) for c, v in out.items()}


def release(fit_id):
    """Forget the fit's states and stop its thread pool (and close its block store)."""
    from .blockstore import close_store
    with _lock:
        _fits.pop(fit_id, None)
        pool = _pools.pop(fit_id, None)
        if not _fits:
            _tune_malloc(during_fit=False)
    if pool is not None:
        pool.shutdown()
    close_store(fit_id)


def _pool(fit_id):
    with _lock:
        if fit_id not in _pools:
            try:
                from distributed import get_worker
                threads = get_worker().state.nthreads
            except (ImportError, ValueError):
                threads = 1
            _pools[fit_id] = (None if threads == 1 else
                              ThreadPoolExecutor(threads, thread_name_prefix="daskboost"))
        return _pools[fit_id]


def run_pass(fit_id, collection, indices, n_partitions, func, arg, combine):
    """``func(state, arg) -> (new_state, result)`` on the given local partitions.

    The new states replace the old ones; returns the reduction-tree nodes
    {(level, j): partial sum} that these partitions complete.
    """
    states = [lookup(fit_id, collection, i) for i in indices]  # fail before any change
    pool = _pool(fit_id)
    if pool is None:  # one thread: run here, in the actor's thread (no hand-offs)
        outputs = [func(state, arg) for state in states]
    else:
        outputs = [f.result() for f in [pool.submit(func, state, arg) for state in states]]
    nodes = {}
    for i, (new_state, result) in zip(indices, outputs):
        register(fit_id, collection, i, new_state)
        nodes[(0, i)] = result
    return reduce_nodes(nodes, n_partitions, combine)


class StateHolder:
    """Actor giving the client direct access to one worker's states of one fit."""

    def __init__(self, fit_id):
        from distributed import get_worker
        self.fit_id = fit_id
        self._worker = get_worker()
        self._inbox = {}     # (loop call, pass, sender) -> future of the sender's sums
        self._ended = set()  # loop calls finished or aborted here

    def run(self, collection, indices, n_partitions, shared):
        """``run_pass``; ``shared`` = pickled (func, arg, combine), the same bytes for
        every worker (pickled once by the client)."""
        from distributed.protocol.pickle import loads
        func, arg, combine = loads(shared)
        return run_pass(self.fit_id, collection, indices, n_partitions, func, arg, combine)

    def run_loop(self, collection, indices, n_partitions, shared, call, peers, leader):
        """``loop(reduce_pass)`` with ``shared`` = pickled (loop, func, combine,
        combine_into): each ``reduce_pass(arg)`` runs ``func`` on the local partitions,
        swaps partial sums with ``peers`` ([(address, StateHolder key)] of the loop's
        other workers) and returns the total.  ``call`` tells this loop's messages from
        other loops'.  Returns the loop's result if ``leader`` (one worker answers for
        all), else None.  Runs in the actor's thread, while the worker's event loop
        exchanges."""
        from distributed.protocol.pickle import loads
        loop, func, combine, combine_into = loads(shared)
        passes = itertools.count()

        def reduce_pass(arg):
            nodes = run_pass(self.fit_id, collection, indices, n_partitions, func, arg,
                             combine_into)
            if peers:
                received = self._on_loop(self._exchange(call, next(passes), nodes, peers))
                for partial in received:
                    nodes.update(partial)
                # every worker adds the same partial sums in the same tree: same totals
                # (not in place: the sums sent may still be on their way out)
                nodes = reduce_nodes(nodes, n_partitions, combine)
            (total,) = nodes.values()
            return total

        try:
            result = loop(reduce_pass)
        finally:
            self._on_loop(self._end(call))
        return result if leader else None

    def _on_loop(self, coroutine):
        """Run ``coroutine`` on the worker's event loop from the actor's thread."""
        return asyncio.run_coroutine_threadsafe(
            coroutine, self._worker.loop.asyncio_loop).result()

    async def _exchange(self, call, step, nodes, peers):
        """Send ``nodes`` to every peer; the peers' nodes, in ``peers`` order.

        The sends expect no reply (waiting for the peer's reply would be a round trip),
        but they are written before this returns: the actor's thread, let go on to
        Python work, would hold the GIL that the event loop needs to write them, and the
        peer would get the sums ~1 ms later.
        """
        me = self._worker.address
        sends = [actor_execute(self._worker.rpc(address), key, "deliver", (call, step, me, nodes),
                               reply=False)
                 for address, key in peers]
        inbox = [self._slot(call, step, address) for address, _ in peers]
        try:
            received = await asyncio.gather(*sends, *inbox)
        except PeerLost:
            raise
        except Exception as err:  # noqa: BLE001 - a peer died or failed: stop the loop
            raise PeerLost(f"could not send partial sums to a peer: {err!r}") from err
        return received[len(sends):]

    def _slot(self, call, step, sender):
        key = (call, step, sender)
        if key not in self._inbox:
            self._inbox[key] = asyncio.get_running_loop().create_future()
            if call in self._ended:
                self._inbox[key].set_exception(PeerLost(f"loop {call} was aborted"))
        return self._inbox[key]

    async def deliver(self, call, step, sender, nodes):
        """A peer's partial sums of one pass (runs on the event loop: the actor's
        thread is busy running the loop)."""
        if call in self._ended:  # a loop that stopped here: nobody will read it
            return
        slot = self._slot(call, step, sender)
        if not slot.done():
            slot.set_result(nodes)

    async def abort(self, call):
        """Stop loop ``call``: its waits for peers raise ``PeerLost`` (the client calls
        this when one of the loop's workers failed or was lost)."""
        self._ended.add(call)
        for key, slot in self._inbox.items():
            if key[0] == call and not slot.done():
                slot.set_exception(PeerLost(f"loop {call} was aborted"))

    async def _end(self, call):
        self._ended.add(call)
        for key in [key for key in self._inbox if key[0] == call]:
            del self._inbox[key]


async def actor_execute(rpc, key, method, args, reply=True):
    """Run an actor's method on its worker over ``rpc`` (as distributed's Actor does);
    its result, or the exception it raised (with ``reply=False``: only send the call)."""
    from distributed.core import clean_exception
    from distributed.protocol import to_serialize
    response = await rpc.actor_execute(actor=key, function=method, reply=reply,
                                       args=[to_serialize(a) for a in args], kwargs={})
    if not reply:
        return None
    if response["status"] == "OK":
        return response["result"]
    _, exc, tb = clean_exception(**response)
    raise exc.with_traceback(tb)
