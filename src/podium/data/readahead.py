"""Reading ahead: the next items of an iterator prepared on a thread of its own while the caller works on the
last one (:meth:`podium.League.record_many` replays a batch of :func:`podium.scan_matches` while the next one is
read from Parquet and its players mapped: pyarrow and the compiled code release the GIL, so two cores work).

The items come out in order; an exception raised while preparing one is raised where it would have been, after
the items before it.  Closing the generator (or an exception in the caller) stops the thread and waits for it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

__all__ = ["read_ahead"]

T = TypeVar("T")
R = TypeVar("R")

_POLL = 0.05  # seconds between looks at the stop flag while the queue is full


def read_ahead(items: Iterable[T], prepare: Callable[[T], R], depth: int = 1) -> Generator[R, None, None]:
    """``prepare(item)`` for each item in order, computed up to ``depth`` items ahead on another thread."""
    done: Any = object()
    handoff: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(entry: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(entry, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if stop.is_set() or not put((True, prepare(item))):
                    return
            put((True, done))
        except BaseException as error:  # raised in the caller, in its turn
            put((False, error))

    thread = threading.Thread(target=work, name="podium-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            ok, value = handoff.get()
            if not ok:
                raise value
            if value is done:
                return
            yield value
    finally:
        stop.set()
        thread.join()
        close = getattr(items, "close", None)
        if close is not None:
            close()
