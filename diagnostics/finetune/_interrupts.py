"""Ctrl+C that a library cannot lose: a job remembers that SIGINT came and stops at its next step.

Python turns SIGINT into a ``KeyboardInterrupt`` raised wherever the main thread happens to be. Code that catches
too broadly on that path, or a native extension that checks for signals and clears the error, swallows it, and the
job trains on to its end as if nobody had pressed Ctrl+C. While a job trains, :func:`watching_interrupts` chains a
handler in front of the one installed (Python's own, a notebook kernel's): it notes the signal, then hands it on
unchanged. The job asks :func:`raise_if_interrupted` between steps and when a run takes a slot, so a swallowed
interrupt still ends the job there, leaving ``INTERRUPTED`` as an interrupt that was not swallowed does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_received = threading.Event()


def _noting(previous):
    def handler(signum, frame):
        _received.set()
        if callable(previous):
            previous(signum, frame)
        else:  # SIG_DFL or a handler installed outside Python: the interrupt Python gives by default
            signal.default_int_handler(signum, frame)

    return handler


@contextmanager
def watching_interrupts() -> Iterator[None]:
    """Note every SIGINT that comes while the block runs (see :func:`raise_if_interrupted`).

    Only the main thread can install a signal handler: elsewhere (a job trained in a thread), where SIGINT is
    ignored (a job started in the background of a shell script) and where it is handled outside Python, the block
    runs unwatched. Nested blocks watch once.

    Yields
    ------
    None
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or previous == signal.SIG_IGN or getattr(previous, "notes_interrupts", False):
        yield
        return
    handler = _noting(previous)
    handler.notes_interrupts = True
    _received.clear()
    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _received.clear()


def raise_if_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` when SIGINT came during :func:`watching_interrupts` (even if it was swallowed).

    Raises
    ------
    KeyboardInterrupt
        SIGINT was received since the watch began.
    """
    if _received.is_set():
        raise KeyboardInterrupt("SIGINT received while training (the interrupt it raised was lost on its way)")
