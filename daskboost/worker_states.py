"""Partition states living in a worker process, for ``distributed`` runs.

On a cluster, each worker keeps the training states of the partitions it binned in a
process-wide registry (keyed by fit, collection and partition index).  Each worker
also holds one ``StateHolder`` actor per fit, which the client calls directly, without
the scheduler in the loop:

- ``run``: one pass over the worker's partitions (with as many threads as the worker
  has).  It returns only partial sums: the nodes of the fixed pairwise reduction tree
  (see ``reduction``) that the worker's partitions complete, so the client
  finishes the same sums, in the same order, as the in-process scheduler: same model,
  byte for byte.
- ``run_loop``: a loop of such passes (the levels of a round), run by every worker at
  once, as a coroutine on its event loop.  After each pass the workers send their
  partial sums to each other (worker to worker, over a dask comm kept per peer for the
  fit, read by the ``daskboost_sums`` handler) and each completes the same reduction
  tree, so every worker holds the same totals and the deterministic loop takes the
  same decisions everywhere; the client waits for the round instead of relaying every
  level.

If a worker dies, its states die with it; ``partition_index`` says which partitions a
worker still holds, and the client rebuilds the lost ones from the raw data (see
``cluster.py``).  A worker whose peer's stream of sums closes stops its loops at once
(``PeerLost``), and a worker whose fit's client is gone (the scheduler released the
StateHolder) frees the fit's states by itself within ``WATCH_SECONDS``: so if the
client and a worker die together, the other workers neither wait forever nor keep
the states.
"""

import asyncio
import itertools
import threading
from concurrent.futures import ThreadPoolExecutor

from distributed import get_worker

from . import compat, memory, native_threads
from .blockstore import close_store
from .level_loop import drive
from .reduction import reduce_nodes
from .thread_passes import kernel_threads, run_partitions

_lock = threading.Lock()
_fits = {}     # fit_id -> {(collection, index): state}
_pools = {}    # fit_id -> (ThreadPoolExecutor, its number of threads)
# (fit_id, worker address) -> that worker's StateHolder of the fit (it receives the
# peers' sums); a process may hold several workers (``LocalCluster(processes=False)``)
_holders = {}

SUMS_HANDLER = "daskboost_sums"  # the worker handler that reads a peer's sums stream
WATCH_SECONDS = 1.0  # how often a worker checks that the fit's client still holds it


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
    if fit_id not in _fits:
        memory.begin_fit()
        native_threads.available()  # (numba's threading layer before any kernel loads)
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
    """Forget the fit's states, stop its thread pool, close its block store and its
    streams; with no fit left, put the worker back as it was (its handler for partial
    sums removed, glibc's settings restored)."""
    with _lock:
        if _fits.pop(fit_id, None) is not None:
            memory.end_fit()
        pool, _ = _pools.pop(fit_id, (None, 0))
        holders = [_holders.pop(key) for key in list(_holders) if key[0] == fit_id]
    if pool is not None:
        pool.shutdown()
    for holder in holders:
        holder.close_streams()
        if not any(address == holder.worker.address for _, address in _holders):
            compat.remove_handler(holder.worker, SUMS_HANDLER)
    close_store(fit_id)


def _pool(fit_id):
    """(pool, threads): the fit's threads on this worker, as many as the worker has."""
    with _lock:
        if fit_id not in _pools:
            try:
                threads = compat.worker_threads()
            except ValueError:  # not on a worker
                threads = 1
            _pools[fit_id] = (ThreadPoolExecutor(threads, thread_name_prefix="daskboost"),
                              threads)
        return _pools[fit_id]


async def run_pass(fit_id, collection, indices, n_partitions, func, arg, combine):
    """``func(state, arg) -> (new_state, result)`` on the given local partitions, from
    the worker's event loop, in the fit's thread pool: contiguous groups of partitions,
    one per thread, each group reducing its own results (``thread_passes``).
    Never on the event loop itself: a pass longer than the heartbeat interval would
    stop the worker's heartbeats and get it declared dead.

    The new states replace the old ones; returns the reduction-tree nodes
    {(level, j): partial sum} that these partitions complete.
    """
    states = [lookup(fit_id, collection, i) for i in indices]
    pool, threads = _pool(fit_id)
    # one task drives the pass from a pool thread, the others run its other groups
    new_states, nodes = await asyncio.wrap_future(pool.submit(
        run_partitions, func, states, arg, combine, pool, threads, indices, n_partitions))
    for i, new_state in zip(indices, new_states):
        register(fit_id, collection, i, new_state)
    return reduce_nodes(nodes, n_partitions, combine)


class StateHolder:
    """Actor giving the client direct access to one worker's states of one fit."""

    def __init__(self, fit_id):
        self.fit_id = fit_id
        self.worker = get_worker()
        self._inbox = {}     # (loop call, pass, sender) -> future of the sender's sums
        self._ended = set()  # loop calls finished or aborted here
        self._streams = {}   # peer address -> open comm for this fit's partial sums
        self._lost_peers = set()  # peers whose stream of sums closed
        self._watchdog = None
        compat.install_handler(self.worker, SUMS_HANDLER, _read_sums)  # removed by release
        with _lock:
            _holders[(fit_id, self.worker.address)] = self

    async def run(self, collection, indices, n_partitions, shared):
        """``run_pass``; ``shared`` = pickled (func, arg, combine), the same bytes for
        every worker (pickled once by the client)."""
        func, arg, combine = compat.loads(shared)
        return await run_pass(self.fit_id, collection, indices, n_partitions, func, arg,
                              combine)

    async def run_loop(self, collection, indices, n_partitions, shared, call, peers, leader):
        """Run the pass loop ``loop()`` (see ``level_loop.drive``) with ``shared`` =
        pickled (loop, func, combine, combine_into): each pass runs ``func`` on the
        local partitions, swaps partial sums with ``peers`` (the addresses of the
        loop's other workers) and sends the total back into the loop.
        ``call`` tells this loop's messages from other loops'.  Returns the loop's
        result if ``leader`` (one worker answers for all), else None.

        A coroutine on the worker's event loop; the partitions' work runs in the fit's
        threads (``run_pass``), the exchange on the loop.  Measured against the whole
        loop in the actor's thread with the event loop only exchanging (1M rows, 100
        trees, 2 workers): a 1.84 MB message took ~11 ms to arrive there, against ~4 ms
        between idle workers.
        """
        loop, func, combine, combine_into = compat.loads(shared)
        steps = itertools.count()
        if self._watchdog is None:
            self._watchdog = asyncio.ensure_future(self._watch())

        async def reduce_pass(arg):
            nodes = await run_pass(self.fit_id, collection, indices, n_partitions, func, arg,
                                   combine_into)
            if peers:
                for partial in await self._exchange(call, next(steps), nodes, peers):
                    nodes.update(partial)
                # every worker adds the same partial sums in the same tree: same totals
                # (into fresh arrays: what was sent and received stays as is)
                nodes = reduce_nodes(nodes, n_partitions, combine)
            (total,) = nodes.values()
            return total

        try:
            pool, threads = _pool(self.fit_id)
            with kernel_threads(pool, threads):
                result = await drive(loop(), reduce_pass)
        finally:
            self._end(call)
        return result if leader else None

    async def _exchange(self, call, step, nodes, peers):
        """Send ``nodes`` to every peer; the peers' nodes, in ``peers`` order.

        Each peer gets them over this fit's stream to it (``_stream``): one message per
        pass, no reply (waiting for one would be a round trip).
        """
        message = {"call": call, "step": step, "sender": self.worker.address,
                   "nodes": compat.to_serialize(nodes)}
        sends = [self._send(address, message) for address in peers]
        inbox = [self._slot(call, step, address) for address in peers]
        received = await asyncio.gather(*sends, *inbox)
        return received[len(sends):]

    async def _send(self, address, message):
        try:
            comm = await self._stream(address)
            await comm.write(message)
        except Exception as err:  # noqa: BLE001 - a peer died or failed: stop the loop
            self._streams.pop(address, None)
            raise PeerLost(f"could not send partial sums to {address}: {err!r}") from err

    async def _stream(self, address):
        """This fit's open comm to the worker at ``address``, which hands what it reads
        to its own StateHolder of the fit (``_read_sums``).  A comm of dask's own,
        to the peer's listener, kept for the fit: the per-message handling of an actor
        call measured ~0.8 ms more per message (2.2 vs 1.4 ms one way for 115 KB)."""
        if address not in self._streams:
            comm = await compat.open_stream(self.worker, address)
            await comm.write({"op": SUMS_HANDLER, "fit_id": self.fit_id, "to": address,
                              "reply": False, "sender": self.worker.address})
            self._streams[address] = comm
        return self._streams[address]

    def close_streams(self):
        """Close the comms to the peers (on the worker's event loop)."""
        for comm in self._streams.values():
            comm.abort()
        self._streams.clear()

    def _slot(self, call, step, sender):
        key = (call, step, sender)
        if key not in self._inbox:
            self._inbox[key] = asyncio.get_running_loop().create_future()
            if call in self._ended:
                self._inbox[key].set_exception(PeerLost(f"loop {call} was aborted"))
            elif sender in self._lost_peers:
                self._inbox[key].set_exception(PeerLost(f"worker {sender} was lost"))
        return self._inbox[key]

    def peer_lost(self, sender):
        """``sender``'s stream of sums closed (it died, or its fit ended there): every
        wait for its sums, now or later, raises ``PeerLost``."""
        self._lost_peers.add(sender)
        for key, slot in self._inbox.items():
            if key[2] == sender and not slot.done():
                slot.set_exception(PeerLost(f"worker {sender} was lost"))

    async def _watch(self):
        """Free the fit here once its client no longer holds this actor (the client
        died): nobody else would call ``release``."""
        while _holders.get((self.fit_id, self.worker.address)) is self:
            await asyncio.sleep(WATCH_SECONDS)
            if not compat.actor_is_held(self.worker, self):
                for call in {key[0] for key in self._inbox}:
                    await self.abort(call)
                release(self.fit_id)
                return

    def deliver(self, call, step, sender, nodes):
        """A peer's partial sums of one pass (from ``_read_sums``)."""
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

    def _end(self, call):
        self._ended.add(call)
        for key in [key for key in self._inbox if key[0] == call]:
            del self._inbox[key]


async def _read_sums(comm, fit_id, to, sender=None, **_):
    """Worker handler for a peer's stream of partial sums (see ``StateHolder._stream``):
    each message goes to the StateHolder of ``fit_id`` of worker ``to`` (this one),
    until the peer closes the comm or dies (then the holder learns that ``sender`` is
    lost)."""
    while True:
        try:
            message = await comm.read()
        except (compat.CommClosedError, OSError):
            holder = _holders.get((fit_id, to))
            if holder is not None and sender is not None:
                holder.peer_lost(sender)
            return
        holder = _holders.get((fit_id, to))
        if holder is not None:
            holder.deliver(message["call"], message["step"], message["sender"],
                           message["nodes"])
