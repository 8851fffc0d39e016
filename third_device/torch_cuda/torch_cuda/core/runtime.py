"""Device queries and selection over the CUDA runtime, as ``torch.cuda`` offers them."""

from __future__ import annotations

import torch_core
from torch_core import _C
from torch_cuda import _CUDAC

DEVICE_TYPE = "cuda"

CudaError = _CUDAC.CudaError


def is_available() -> bool:
    """True when the CUDA runtime found a driver and at least one device."""
    return torch_core.is_available(DEVICE_TYPE)


def device_count() -> int:
    """Number of CUDA devices; 0 without a driver or a GPU."""
    return torch_core.device_count(DEVICE_TYPE)


def current_device() -> int:
    """Index of this thread's current CUDA device (raises, naming the cause, without one)."""
    return int(_C.current_device(DEVICE_TYPE))


def set_device(device: int | str | torch_core.Device) -> None:
    """Makes ``device`` this thread's current CUDA device."""
    _C.set_device(resolve(device))


def resolve(device: int | str | torch_core.Device | None) -> torch_core.Device:
    """``None`` means this thread's current device; ints are CUDA indices."""
    return torch_core.resolve_device(DEVICE_TYPE, device)


def synchronize(device: int | str | torch_core.Device | None = None) -> None:
    """Waits for all work on every stream of ``device`` (default: the current one)."""
    torch_core.synchronize(resolve(device))


def device(index: int | str | torch_core.Device) -> torch_core.DeviceGuard:
    """``with torch_cuda.device(1):`` makes cuda:1 this thread's current device in the block."""
    return torch_core.DeviceGuard(resolve(index))


def runtime_version() -> int:
    """CUDA runtime version linked into _CUDAC, e.g. 13000 for 13.0 (needs no GPU)."""
    return int(_CUDAC._runtime_version())


def driver_version() -> int:
    """Newest CUDA runtime the installed driver supports, e.g. 12080; 0 without a driver."""
    return int(_CUDAC._driver_version())
