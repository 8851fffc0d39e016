"""Streams and events of emu devices, over torch_core's generic ones."""

from __future__ import annotations

import torch_core
from torch_emu.core.runtime import resolve

Event = torch_core.Event
stream = torch_core.stream


def Stream(device: int | str | torch_core.Device | None = None) -> torch_core.Stream:
    """A new stream (its own worker) on an emu device."""
    return torch_core.Stream(resolve(device))


def current_stream(device: int | str | torch_core.Device | None = None) -> torch_core.Stream:
    return torch_core.current_stream(resolve(device))
