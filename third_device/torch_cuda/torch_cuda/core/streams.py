"""CUDA streams and events: torch_core's generic ones on ``cuda:N`` devices."""

from __future__ import annotations

import torch_core
from torch_cuda import _CUDAC
from torch_cuda.core.runtime import resolve

stream = torch_core.stream


def Stream(device: int | str | torch_core.Device | None = None) -> torch_core.Stream:
    """A new non-blocking CUDA stream on ``device`` (default: the current one)."""
    return torch_core.Stream(resolve(device))


def Event(device: int | str | torch_core.Device | None = None) -> torch_core.Event:
    """A CUDA event (timing enabled) on ``device`` (default: the current one)."""
    return torch_core.Event(resolve(device))


def current_stream(device: int | str | torch_core.Device | None = None) -> torch_core.Stream:
    """This thread's current stream on ``device`` (stream 0, CUDA's default stream, unless set)."""
    return torch_core.current_stream(resolve(device))


def _sleep(cycles: int, stream: torch_core.Stream | None = None) -> None:
    """Queues a kernel spinning ``cycles`` GPU clocks on ``stream`` (like ``torch.cuda._sleep``)."""
    s = stream or current_stream()
    _CUDAC._sleep(cycles, s.device.index, s.id)
