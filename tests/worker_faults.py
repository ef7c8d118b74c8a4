"""Faults planted in a cluster's worker processes (run there with ``client.run``)."""

import importlib
import os
import signal
import time


def die_once_in_pass(module_name, function_name, flag, round_, delay=0.5):
    """Wrap the pass function ``module_name.function_name(state, step)`` so that the
    first worker to run it for the pass after round ``round_`` (``step.finish.round ==
    round_ + 1``) finishes that partition, waits ``delay`` seconds (the other worker's
    partitions go on meanwhile) and kills itself: once in all, the worker that creates
    the file ``flag`` first.  A pass function is sent to the workers by name, so they
    run the wrapper."""
    module = importlib.import_module(module_name)
    run_pass = getattr(module, function_name)

    def dying(state, step):
        result = run_pass(state, step)
        if step.finish.round == round_ + 1:
            try:
                os.close(os.open(flag, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return result
            time.sleep(delay)
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(module, function_name, dying)
