"""Streams and events of any device, with the interface PyTorch users know."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch_core import _C
from torch_core._devices import Device, device


class Stream:
    """A queue of work on one device; ``Stream(device)`` creates a new one."""

    def __init__(self, target: str | Device, *, _id: int | None = None) -> None:
        self.device = device(target)
        self.id = _C.create_stream(self.device) if _id is None else _id

    def query(self) -> bool:
        """True when all work queued so far has finished."""
        return bool(_C.query_stream(self.device, self.id))

    def synchronize(self) -> None:
        """Waits for all work queued so far."""
        _C.synchronize_stream(self.device, self.id)

    def record_event(self, event: Event | None = None) -> Event:
        """Records ``event`` (a new one by default) at this point of the stream."""
        event = event or Event(self.device)
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on waits for ``event``."""
        event.wait(self)

    def wait_stream(self, other: Stream) -> None:
        """Work queued from now on waits for everything queued on ``other`` so far."""
        self.wait_event(other.record_event())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.device, self.id) == (other.device, other.id)

    def __hash__(self) -> int:
        return hash((str(self.device), self.id))

    def __repr__(self) -> str:
        return f"Stream(device='{self.device}', id={self.id})"


class Event:
    """A marker in a stream: completes when the stream reaches it; timestamps for timing."""

    def __init__(self, target: str | Device) -> None:
        self.device = device(target)
        self._event = _C._Event(self.device)

    def record(self, stream: Stream | None = None) -> None:
        stream = stream or current_stream(self.device)
        self._event.record(stream.id)

    def query(self) -> bool:
        return bool(self._event.query())

    def synchronize(self) -> None:
        self._event.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        stream = stream or current_stream(self.device)
        self._event.wait(stream.id)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        return float(self._event.elapsed_time(end._event))


def current_stream(target: str | Device) -> Stream:
    """The calling thread's current stream on a device (stream 0 by default)."""
    dev = device(target)
    return Stream(dev, _id=_C.current_stream(dev))


@contextlib.contextmanager
def stream(s: Stream) -> Iterator[Stream]:
    """Makes ``s`` current for its device inside the block (this thread only)."""
    previous = _C.current_stream(s.device)
    _C.set_current_stream(s.device, s.id)
    try:
        yield s
    finally:
        _C.set_current_stream(s.device, previous)
