"""Caching-allocator statistics and control for any accelerator device."""

from __future__ import annotations

from torch_core import _C
from torch_core._devices import Device, device


def memory_stats(target: str | Device) -> dict[str, int]:
    """All counters of the device's caching allocator."""
    return dict(_C.memory_stats(device(target)))


def memory_allocated(target: str | Device) -> int:
    """Bytes held by live tensors (sizes rounded to the allocation granularity)."""
    return memory_stats(target)["allocated_bytes"]


def memory_reserved(target: str | Device) -> int:
    """Bytes the allocator obtained from the device, cached or in use."""
    return memory_stats(target)["reserved_bytes"]


def max_memory_allocated(target: str | Device) -> int:
    """Peak of memory_allocated since start or the last reset_peak_memory_stats."""
    return memory_stats(target)["max_allocated_bytes"]


def reset_peak_memory_stats(target: str | Device) -> None:
    _C.reset_peak_memory_stats(device(target))


def empty_cache(target: str | Device) -> None:
    """Returns cached, unused memory to the device."""
    _C.empty_cache(device(target))
