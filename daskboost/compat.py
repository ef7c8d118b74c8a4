"""The one door to ``distributed``'s internals.

Everything daskboost does on a cluster goes through distributed's public API (``Client``,
``get_worker``, ``submit``/``run``/``get``/``gather``, actors) except what is here. Each
use says why no public API serves; a new distributed release that changes one of them
breaks this module only. Imported only when a fit runs on a ``distributed.Client``
(``runtime.make_runtime``), so ``import daskboost`` does not import distributed.
"""

import asyncio

from distributed import get_worker
from distributed.actor import ProxyRPC
from distributed.comm import CommClosedError, connect
from distributed.core import clean_exception
from distributed.protocol import to_serialize
from distributed.protocol.pickle import dumps, loads

__all__ = ["CommClosedError", "actor_is_held", "call_actor", "dumps", "install_handler", "loads",
           "open_stream", "remove_handler", "run_on_client_loop", "to_serialize",
           "worker_memory_limit", "worker_rpc", "worker_threads"]

# dumps / loads: distributed's own pickling (cloudpickle with out-of-band buffers). The
# client pickles a pass's function and arguments once and sends the same bytes to
# every worker; the actor API would pickle them once per worker.

# to_serialize / CommClosedError: messages on distributed's comms (partial sums between
# workers) are serialised with distributed's protocol; a peer's comm closing raises
# CommClosedError. Both are what distributed's own handlers use; no public wrapper.


def worker_threads():
    """The number of threads of the worker this runs on (``Worker.state`` is internal;
    ``get_worker().nthreads`` would do, but reads the same state)."""
    return get_worker().state.nthreads


def worker_memory_limit():
    """The memory limit of the worker this runs on (None when unlimited or not on a
    worker). ``memory_manager`` is internal; the limit has no public accessor."""
    try:
        return get_worker().memory_manager.memory_limit
    except (ValueError, AttributeError):  # not in a worker task / no manager
        return None


def actor_is_held(worker, instance):
    """Whether ``worker`` still holds the actor ``instance``.  When the client that made
    it is gone, the scheduler releases its keys and the worker drops the actor; there
    is no public way to learn that from the actor (``Worker.state.actors`` is
    internal)."""
    return any(actor is instance for actor in worker.state.actors.values())


def install_handler(worker, name, handler):
    """Serve ``handler`` for comms that open with ``{"op": name}`` on ``worker``.

    Worker handlers are how distributed itself serves a stream of messages; there is no
    public registration (``Worker.handlers`` is a plain dict). Pair with
    :func:`remove_handler` when the fit ends.
    """
    worker.handlers[name] = handler


def remove_handler(worker, name):
    worker.handlers.pop(name, None)


async def open_stream(worker, address):
    """A comm from ``worker`` to the worker at ``address``, with the worker's own
    connection settings (TLS and the like: ``Worker.connection_args`` is internal)."""
    return await connect(address, **worker.connection_args)


def worker_rpc(client, address):
    """An rpc to the worker at ``address`` for actor calls: direct from the client
    unless it cannot reach the worker (or must not: ``direct_to_workers=False``), then
    through the scheduler (``ProxyRPC``, what distributed's ``Actor`` does itself).
    distributed's actor handles go through the scheduler and each result through a
    thread hop: ~3 ms more per level measured here."""
    if client.direct_to_workers is not False:
        try:
            client.sync(client.rpc(address).identity)
            return client.rpc(address)
        except OSError:  # not reachable from here: through the scheduler
            pass
    return ProxyRPC(client.scheduler, address)


def run_on_client_loop(client, coroutine):
    """Schedule ``coroutine`` on the client's event loop; a concurrent future."""
    return asyncio.run_coroutine_threadsafe(coroutine, client.loop.asyncio_loop)


async def call_actor(rpc, key, method, args, reply=True):
    """Run actor ``key``'s ``method(*args)`` on its worker over ``rpc``, as
    distributed's ``Actor`` does (its ``actor_execute`` operation, internal); returns
    the result or raises the exception the method raised (``reply=False``: only send
    the call)."""
    response = await rpc.actor_execute(actor=key, function=method, reply=reply,
                                       args=[to_serialize(a) for a in args], kwargs={})
    if not reply:
        return None
    if response["status"] == "OK":
        return response["result"]
    _, exc, tb = clean_exception(**response)
    raise exc.with_traceback(tb)
