"""A progress line for long fits: rounds done, the latest eval metrics, elapsed, ETA.

Written with a carriage return to a terminal (one line that updates in place) and as
plain lines elsewhere (notebooks, logs), at most every ``min_interval`` seconds plus
the last round.
"""

import sys
import time


class ProgressReporter:
    """Callable ``(rounds_done, n_rounds, evals_result)`` that prints progress."""

    def __init__(self, stream=None, min_interval=1.0):
        self.stream = sys.stderr if stream is None else stream
        self.min_interval = min_interval
        self.start = time.perf_counter()
        self._last = -float("inf")
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done, total, evals_result):
        now = time.perf_counter()
        if now - self._last < self.min_interval and done < total:
            return
        self._last = now
        self.stream.write(("\r" if self._tty else "") + self.line(done, total, evals_result, now)
                          + ("" if self._tty and done < total else "\n"))
        self.stream.flush()

    def line(self, done, total, evals_result, now=None):
        elapsed = (time.perf_counter() if now is None else now) - self.start
        eta = elapsed / done * (total - done) if done else float("nan")
        metrics = " ".join(f"{data}-{name}={values[-1]:.6g}"
                           for data, by_name in evals_result.items()
                           for name, values in by_name.items() if values)
        return (f"[daskboost] round {done}/{total} {metrics + ' ' if metrics else ''}"
                f"elapsed {_duration(elapsed)} ETA {_duration(eta)}")


def _duration(seconds):
    if seconds != seconds:  # nan
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
