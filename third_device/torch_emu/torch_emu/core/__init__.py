"""The ``torch.cuda``-like API of torch_emu, over torch_core's generic runtime."""

from torch_emu.core.memory import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
)
from torch_emu.core.runtime import (
    current_device,
    device,
    device_count,
    is_available,
    set_device,
    synchronize,
)
from torch_emu.core.streams import Event, Stream, current_stream, stream

__all__ = [
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "device",
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device",
    "stream",
    "synchronize",
]
