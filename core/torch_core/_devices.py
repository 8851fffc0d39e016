"""Devices by name: ``"cpu"``, and whatever the imported backends registered."""

from __future__ import annotations

from torch_core import _C

Device = _C.Device


def device(text: str | Device) -> Device:
    """Parses ``"cpu"``, ``"emu"`` or ``"emu:1"`` into a Device."""
    return text if isinstance(text, Device) else Device(text)


def registered_device_types() -> list[str]:
    """Device types known to this process: ``"cpu"`` and those of imported backends."""
    return list(_C.registered_device_types())


def device_count(device_type: str) -> int:
    """Number of devices of a registered type."""
    return int(_C.device_count(device_type))


def is_available(device_type: str) -> bool:
    """Whether a registered device type has a usable device."""
    return bool(_C.is_available(device_type))


def synchronize(target: str | Device) -> None:
    """Waits for all queued work on a device."""
    _C.synchronize(device(target))
