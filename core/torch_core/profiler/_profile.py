"""``profile`` and ``record_function``."""

from __future__ import annotations

import enum
import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from torch_core import _C
from torch_core.profiler._events import EventList, FunctionEvent
from torch_core.profiler._trace import write_chrome_trace

F = TypeVar("F", bound=Callable[..., Any])


class ProfilerActivity(enum.Enum):
    CPU = "cpu"  # host-side op and user-range intervals (always recorded)
    DEVICE = "device"  # device-side kernel intervals, from each device's profiler stubs


class profile:
    """Records every dispatched op while active (profiles do not nest)."""

    # Read by record_function on every entry: a class attribute, not a C++
    # call, keeps user ranges nearly free when nothing is profiling.
    running = False

    def __init__(self, activities: Iterable[ProfilerActivity] | None = None) -> None:
        chosen = set(activities) if activities is not None else set(ProfilerActivity)
        self.record_device = ProfilerActivity.DEVICE in chosen
        self.events: list[FunctionEvent] = []

    def __enter__(self) -> profile:
        _C._profiler_start(self.record_device)
        profile.running = True
        return self

    def __exit__(self, *exc: object) -> None:
        profile.running = False
        self.events = [FunctionEvent.from_dict(d) for d in _C._profiler_stop()]

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """Per-name count, host time and device time (the table PyTorch prints)."""
        return EventList.aggregate(self.events, group_by_shapes=group_by_input_shape)

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Host and device tracks with launch -> kernel flow arrows."""
        write_chrome_trace(path, self.events)


class record_function:
    """A named user range in profiles (and, through the profiler stubs, in the
    vendor's own timeline tools). Usable as a context manager or a decorator.
    Outside a profile it does nothing but check a flag."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._pushed = False

    def __enter__(self) -> record_function:
        if profile.running:
            _C._push_range(self.name)
            self._pushed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pushed:
            self._pushed = False
            _C._pop_range()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
