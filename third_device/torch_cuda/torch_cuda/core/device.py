"""Device queries over the CUDA runtime, as ``torch.cuda`` offers them."""

from __future__ import annotations

from torch_cuda import _CUDAC

CudaError = _CUDAC.CudaError


def is_available() -> bool:
    """True when the CUDA runtime found a driver and at least one device."""
    return bool(_CUDAC._is_available())


def device_count() -> int:
    """Number of CUDA devices; 0 without a driver or a GPU."""
    return int(_CUDAC._device_count())


def _require() -> None:
    if not is_available():
        raise RuntimeError(f"CUDA is not available: {_CUDAC._unavailable_reason()}")


def current_device() -> int:
    """Index of the current device of this thread."""
    _require()
    return int(_CUDAC._current_device())


def set_device(device: int) -> None:
    """Makes ``device`` current for this thread."""
    _require()
    _CUDAC._set_device(device)


def synchronize(device: int | None = None) -> None:
    """Waits for all work on ``device`` (default: the current one)."""
    _require()
    _CUDAC._synchronize(current_device() if device is None else device)


def runtime_version() -> int:
    """CUDA runtime version linked into _CUDAC, e.g. 13000 for 13.0 (needs no GPU)."""
    return int(_CUDAC._runtime_version())
