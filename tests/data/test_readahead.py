"""podium.data.readahead.read_ahead: the items of an iterator prepared on another thread, in order; an error raised in
its turn, after the items before it; closing stops the thread (and closes the source)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from podium.data.readahead import read_ahead


def test_items_come_out_in_order_prepared_on_another_thread() -> None:
    threads: set[str] = set()

    def prepare(x: int) -> int:
        threads.add(threading.current_thread().name)
        time.sleep(0.001 * (x % 3))  # uneven work: the order must not depend on it
        return x * x

    assert list(read_ahead(range(50), prepare, depth=3)) == [x * x for x in range(50)]
    assert threads == {"podium-read-ahead"}


def test_an_error_is_raised_after_the_items_before_it() -> None:
    def source() -> Iterator[int]:
        yield from range(4)
        raise KeyError("the fifth")

    got = []
    with pytest.raises(KeyError, match="the fifth"):
        for x in read_ahead(source(), lambda x: x):
            got.append(x)
    assert got == [0, 1, 2, 3]
    got = []
    with pytest.raises(ZeroDivisionError):
        for x in read_ahead(range(5), lambda x: 1 // (3 - x)):
            got.append(x)
    assert got == [0, 0, 1]


def test_closing_early_stops_the_thread_and_closes_the_source() -> None:
    made: list[int] = []
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            for x in range(10_000):
                made.append(x)
                yield x
        finally:
            closed.set()

    items = read_ahead(source(), lambda x: x, depth=2)
    assert [next(items) for _ in range(3)] == [0, 1, 2]
    items.close()
    assert closed.is_set()  # (close waits for the thread, then closes the source)
    assert len(made) <= 3 + 2 + 2  # the thread stopped a queue's depth or so ahead, not at the end
    assert not any(t.name == "podium-read-ahead" and t.is_alive() for t in threading.enumerate())


def test_an_error_in_the_caller_stops_the_reader() -> None:
    def source() -> Iterator[int]:
        yield from range(1_000_000)

    with pytest.raises(RuntimeError):
        for x in read_ahead(source(), lambda x: x):
            if x == 5:
                raise RuntimeError("the caller fails")
    time.sleep(0.01)
    assert not any(t.name == "podium-read-ahead" and t.is_alive() for t in threading.enumerate())
