"""Caching-allocator statistics and control for any accelerator device."""

from __future__ import annotations

from torch_core import _C
from torch_core._devices import Device, device, resolve_device


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


class DeviceTypeMemory:
    """The functions above for one device type, taking a backend API's device
    argument (``None``: the current device; an int: an index). A backend
    re-exports them: ``memory_allocated = memory.for_device_type("emu").memory_allocated``."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type

    def _device(self, target: int | str | Device | None) -> Device:
        return resolve_device(self.device_type, target)

    def memory_stats(self, device: int | str | Device | None = None) -> dict[str, int]:
        return memory_stats(self._device(device))

    def memory_allocated(self, device: int | str | Device | None = None) -> int:
        return memory_allocated(self._device(device))

    def memory_reserved(self, device: int | str | Device | None = None) -> int:
        return memory_reserved(self._device(device))

    def max_memory_allocated(self, device: int | str | Device | None = None) -> int:
        return max_memory_allocated(self._device(device))

    def reset_peak_memory_stats(self, device: int | str | Device | None = None) -> None:
        reset_peak_memory_stats(self._device(device))

    def empty_cache(self, device: int | str | Device | None = None) -> None:
        empty_cache(self._device(device))


def for_device_type(device_type: str) -> DeviceTypeMemory:
    return DeviceTypeMemory(device_type)
