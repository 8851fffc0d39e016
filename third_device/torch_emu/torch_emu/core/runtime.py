"""Device queries, as ``torch.cuda`` offers them."""

from __future__ import annotations

import torch_core
from torch_core import _C

DEVICE_TYPE = "emu"


def is_available() -> bool:
    return torch_core.is_available(DEVICE_TYPE)


def device_count() -> int:
    return torch_core.device_count(DEVICE_TYPE)


def current_device() -> int:
    """Index of this thread's current emu device."""
    return int(_C.current_device(DEVICE_TYPE))


def set_device(index: int) -> None:
    """Selects this thread's current emu device."""
    _C.set_device(torch_core.device(f"{DEVICE_TYPE}:{index}"))


def resolve(device: int | str | torch_core.Device | None) -> torch_core.Device:
    """``None`` means this thread's current device; ints are emu indices."""
    return torch_core.resolve_device(DEVICE_TYPE, device)


def synchronize(device: int | str | torch_core.Device | None = None) -> None:
    """Waits for all work on every stream of the device."""
    torch_core.synchronize(resolve(device))


def device(index: int) -> torch_core.DeviceGuard:
    """``with torch_emu.device(1):`` makes emu:1 this thread's current device in the block."""
    return torch_core.DeviceGuard(resolve(index))
