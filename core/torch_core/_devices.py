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


def resolve_device(device_type: str, target: int | str | Device | None) -> Device:
    """A backend's device argument, as PyTorch's device modules take it: ``None`` is this
    thread's current device of ``device_type``, an int is an index, a string or
    Device must be of ``device_type``."""
    if target is None:
        target = int(_C.current_device(device_type))
    if isinstance(target, int):
        return device(f"{device_type}:{target}")
    resolved = device(target)
    if resolved.type != device_type:
        raise ValueError(f"expected a '{device_type}' device, got '{resolved}'")
    return resolved
