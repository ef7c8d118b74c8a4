"""The ``distributed`` runtime: states held by workers, one actor call per worker per pass.

- Binning is a task graph on top of the input's graph; each binning task keeps its
  partition's state in its worker's registry (``worker_states``) and returns the
  worker's address.  Partitions are placed in contiguous ranges (partitions 0..3 on
  the first worker, 4..7 on the second, ...), so each worker completes whole subtrees
  of the fixed reduction tree and sends one or two partial sums per pass.
- A pass is one direct call per worker to its ``StateHolder`` actor: no scheduler
  round trip, no task per partition.  On this 2-core machine that measured about 4 ms
  per level against about 16 ms for one task per worker (and 29 ms for one task per
  partition plus the reduction tasks).
- The levels of a round are one call per worker (``run_loop``): the workers grow the
  round's trees themselves, swapping partial histograms with each other after each
  level and taking the same decisions from the same sums, so the client is out of the
  per-level path (one message between workers per level instead of a round trip
  through the client).
- Passes that also read the raw data (re-binning for ``tree_method="approx"``) are task
  graphs, each task restricted to the worker holding the partition's state.

Losing a worker loses its states.  Calls to it fail (or, for a worker already gone,
are noticed by polling the scheduler's worker list); the other workers' loops are
aborted (they would wait for the lost worker's sums); the runtime raises
``StatesLost``, and ``recover`` rebuilds every missing partition on the live workers
from the raw data, with the trees finished so far added to its margins.  Training
then redoes the current round, which is deterministic, so the model is the one an
undisturbed run gives.
"""

import concurrent.futures
import itertools
import logging
import time

from dask.optimization import cull
from distributed import get_worker

from . import compat
from .blockstore import remove_fit_dirs
from .reduction import reduce_all, reduce_nodes
from .graphs import StatesLost, per_partition_graph, raw_inputs
from .worker_states import (MissingStateError, PeerLost, StateHolder, begin_fit, forget_states,
                            lookup, partition_index, register, release)

logger = logging.getLogger("daskboost")

POLL_SECONDS = 1.0       # how often a waiting call checks that its worker is alive
WORKER_WAIT_SECONDS = 60  # how long recovery waits for at least one live worker


class ClusterStates:
    """Handle to one collection of partition states held on the workers."""

    def __init__(self, name, n_partitions, recipe):
        self.name = name
        self.n_partitions = n_partitions
        self.owners = {}       # partition index -> worker address
        self.recipe = recipe   # (data, func, args, last_args) that built the states

    def __len__(self):
        return self.n_partitions

    def by_worker(self):
        """{address: sorted partition indices}."""
        out = {}
        for index, address in sorted(self.owners.items()):
            out.setdefault(address, []).append(index)
        return out


def _create_and_register(fit_id, collection, index, func, *args):
    """Task: build a partition's state and keep it on this worker; return the address."""
    register(fit_id, collection, index, func(*args))
    return get_worker().address


def _with_registered(fit_id, collection, index, replaces_state, func, x, w, *args):
    """Task: ``func(x, w, state, *args)`` with the partition's state on this worker."""
    result = func(x, w, lookup(fit_id, collection, index), *args)
    if replaces_state:
        register(fit_id, collection, index, result)
        return get_worker().address
    return result


class ClusterRuntime:
    """Runtime for a ``distributed.Client``; same interface as ``runtime.Runtime``."""

    def __init__(self, client, fit_id, store_config):
        self.client = client
        self.fit_id = fit_id
        self.store_config = store_config
        self._counter = itertools.count()
        self._holders = {}      # worker address -> (StateHolder actor future, rpc)
        self._collections = []
        client.run(begin_fit, fit_id)

    # ---- lifetime ------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Drop the fit's states on every worker and remove its spilled blocks."""
        try:
            self.client.run(release, self.fit_id)
        except Exception:  # noqa: BLE001 - best effort: a worker may be gone
            pass
        if self.store_config is not None:
            remove_fit_dirs(self.fit_id, self.store_config.cache_dirs)
        self._holders.clear()

    def state_processes(self):
        """How many processes the training states are spread over: the live workers
        (each gets a contiguous range of the partitions, ``_build``)."""
        return len(self._live_workers())

    def grows_in_place(self, states):
        """Never on a cluster: the level loop runs on every worker, apart from most
        partitions (``runtime.Runtime.grows_in_place``)."""
        return False

    def new_name(self, what):
        return f"daskboost-{self.fit_id}-{what}-{next(self._counter)}"

    # ---- plain graphs --------------------------------------------------------------
    def compute(self, graph, keys):
        try:
            return self.client.get(graph, keys, sync=True)
        except MissingStateError as err:
            raise StatesLost(str(err)) from err

    # ---- states ----------------------------------------------------------------------
    @staticmethod
    def keep_raw(data, i):
        """None: a partition's bin task may run on another worker than its scan task,
        so nothing is kept between them (``runtime.Runtime.keep_raw``)."""
        return None

    def create_states(self, collection, data, func, args, last_args):
        states = ClusterStates(collection, data.n_partitions, (data, func, args, last_args))
        self._build(states, range(data.n_partitions), func, args, last_args)
        self._collections.append(states)
        return states

    def _build(self, states, indices, func, args, last_args):
        """Build the given partitions' states on the live workers, contiguous ranges."""
        data = states.recipe[0]
        indices = list(indices)
        workers = self._live_workers()
        name = self.new_name(func.__name__)
        graph, keys = per_partition_graph(
            data, name, lambda i: (_create_and_register, self.fit_id, states.name, i, func,
                                   *raw_inputs(data, i), i, *args, *last_args[i]),
            indices)
        placement = {key: workers[j * len(workers) // len(keys)] for j, key in enumerate(keys)}
        addresses = self._get_placed(graph, keys, placement)
        states.owners.update(zip(indices, addresses))

    def source_pass(self, data, states, func, args, combine=None):
        name = self.new_name(func.__name__)
        graph, keys = per_partition_graph(
            data, name, lambda i: (_with_registered, self.fit_id, states.name, i,
                                   combine is None, func, raw_inputs(data, i)[0],
                                   raw_inputs(data, i)[2], *args))
        placement = {(name, i): address for i, address in states.owners.items()}
        results = self._get_placed(graph, keys, placement)
        if combine is None:
            states.owners.update(enumerate(results))
            return states
        return reduce_all(results, combine)

    def _get_placed(self, graph, keys, placement):
        """Values of ``keys``, each computed (with its inputs) on ``placement[key]``
        when that worker is alive.  One submission per worker, since ``client.get``
        restricts a whole graph at once."""
        by_worker = {}
        for key in keys:
            by_worker.setdefault(placement[key], []).append(key)
        futures = {}
        for address, group in by_worker.items():
            subgraph, _ = cull(graph, group)
            futures.update(zip(group, self.client.get(
                subgraph, group, workers=[address], allow_other_workers=True, sync=False)))
        try:
            values = self.client.gather([futures[key] for key in keys])
        except MissingStateError as err:
            raise StatesLost(str(err)) from err
        return values

    def map_reduce(self, func, states, arg, combine, combine_into=None):
        """One call per worker; returns the same handle and the reduced total."""
        # partial sums on a worker are fresh arrays used once: combine them in place
        shared = compat.dumps((func, arg, combine_into or combine))  # pickled once, for all
        calls = [(address, self._call_holder(address, "run", states.name, indices,
                                             states.n_partitions, shared))
                 for address, indices in states.by_worker().items()]
        nodes = {}
        for partial in self._wait_all(calls):
            nodes.update(partial)
        # the replies are fresh copies, each used once here: in place too
        nodes = reduce_nodes(nodes, states.n_partitions, combine_into or combine)
        return states, next(iter(nodes.values()))

    def run_loop(self, states, loop, func, combine, combine_into=None):
        """The pass loop ``loop()`` run by every worker holding ``states`` (see
        ``Runtime.run_loop``); the workers swap partial sums after each pass."""
        shared = compat.dumps((loop, func, combine, combine_into or combine))
        by_worker = states.by_worker()
        for address in by_worker:  # every holder is ready to read its peers' sums first
            self._holder(address)
        call = next(self._counter)
        leader = min(by_worker)
        calls = [(address, self._call_holder(
                    address, "run_loop", states.name, indices, states.n_partitions, shared,
                    call, [peer for peer in by_worker if peer != address], address == leader))
                 for address, indices in by_worker.items()]

        def abort():  # the others would wait for the failed worker's sums
            for address in by_worker:
                if address in self._holders:  # not one found lost
                    self._call_holder(address, "abort", call)

        results = self._wait_all(calls, on_failure=abort)
        return states, results[[address for address, _ in calls].index(leader)]

    # ---- workers and failures ------------------------------------------------------
    def _live_workers(self):
        workers = list(self.client.scheduler_info(n_workers=-1)["workers"])
        deadline = time.monotonic() + WORKER_WAIT_SECONDS
        while not workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no live dask worker for {WORKER_WAIT_SECONDS} s")
            time.sleep(0.2)
            workers = list(self.client.scheduler_info(n_workers=-1)["workers"])
        return sorted(workers)

    def _scheduler_workers(self):
        return set(self.client.run_on_scheduler(_worker_addresses))

    def _holder(self, address):
        """(actor key, rpc) of the worker's StateHolder: the rpc connects to the worker
        directly unless the client cannot (or must not: ``direct_to_workers=False``),
        then it goes through the scheduler."""
        if address not in self._holders:
            future = self.client.submit(StateHolder, self.fit_id, workers=[address],
                                        actor=True, pure=False)
            future.result()
            self._holders[address] = (future, self._rpc(address))
        future, rpc = self._holders[address]
        return future.key, rpc

    def _rpc(self, address):
        return compat.worker_rpc(self.client, address)

    def _call_holder(self, address, method, *args):
        """Start ``method(*args)`` on the worker's StateHolder; a concurrent future.

        Sent from the client's event loop straight to the worker (distributed's own
        actor calls from a client go through the scheduler, which measured ~3 ms more
        per level here, and each ``ActorFuture.result`` is another thread hop)."""
        key, rpc = self._holder(address)
        return compat.run_on_client_loop(self.client, compat.call_actor(rpc, key, method, args))

    def _wait_all(self, calls, on_failure=None):
        """Results of actor calls [(address, future)], in order.  If a call fails or
        its worker is lost, ``on_failure()`` is called once, the other calls are still
        waited for (so that no pass runs during recovery), and the first error is
        raised: ``StatesLost`` for a lost worker or state."""
        results, failure = {}, None
        pending = dict(calls)
        while pending:
            done, _ = concurrent.futures.wait(list(pending.values()), timeout=POLL_SECONDS,
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            finished = [(a, f) for a, f in pending.items() if f in done]
            if not done:  # a worker gone without closing its connection: poll
                live = self._scheduler_workers()
                finished = [(a, f) for a, f in pending.items() if a not in live]
            for address, future in finished:
                del pending[address]
                try:
                    results[address] = self._result(address, future, future in done)
                except Exception as err:  # noqa: BLE001 - re-raised below
                    if failure is None and on_failure is not None:
                        on_failure()
                    failure = failure or err
        if failure is not None:
            raise failure
        return [results[address] for address, _ in calls]

    def _result(self, address, future, done):
        if not done:
            future.cancel()
            self._holders.pop(address, None)
            raise StatesLost(f"worker {address} was lost")
        try:
            return future.result()
        except (MissingStateError, PeerLost) as err:
            raise StatesLost(str(err)) from err
        except OSError as err:  # the worker died during the call
            self._holders.pop(address, None)
            raise StatesLost(f"worker {address} was lost: {err}") from err

    def recover(self, rebuild_args, everything=False):
        """Rebuild every lost partition state on the live workers.

        ``rebuild_args(collection_name)`` gives, for a collection, the (func, args,
        last_args) that build its states as they are at the start of the current
        round.  ``everything``: rebuild the states the live workers still hold as well
        (after a loop over several rounds they may be rounds ahead of that start).
        """
        self._live_workers()  # wait for at least one
        live = self._scheduler_workers()
        for address in list(self._holders):
            if address not in live:
                del self._holders[address]
        held = self.client.run(partition_index, self.fit_id, on_error="ignore")
        if everything:
            self.client.run(forget_states, self.fit_id, on_error="ignore")
        for states in self._collections:
            states.owners = {i: address for address, index in held.items()
                             for i in index.get(states.name, [])}
            missing = [i for i in range(states.n_partitions) if i not in states.owners]
            if missing:
                logger.warning("daskboost: partitions %s of %r were lost with a worker; "
                               "rebuilding them%s and growing the round again", missing,
                               states.name, " (and the others)" if everything else "")
            if everything:
                states.owners, missing = {}, list(range(states.n_partitions))
            if missing:
                func, args, last_args = rebuild_args(states)
                self._build(states, missing, func, args, last_args)


def _worker_addresses(dask_scheduler):
    return list(dask_scheduler.workers)
