"""What a CUDA device is (cudaGetDeviceProperties), as ``torch.cuda`` reports it."""

from __future__ import annotations

from typing import Any

import torch_core
from torch_cuda import _CUDAC
from torch_cuda.core.runtime import resolve


def get_device_properties(device: int | str | torch_core.Device | None = None) -> Any:
    """Name, compute capability (major, minor), total_memory, multi_processor_count, ..."""
    return _CUDAC._device_properties(resolve(device).index)


def get_device_name(device: int | str | torch_core.Device | None = None) -> str:
    """E.g. ``"NVIDIA H100 80GB HBM3"``."""
    return str(get_device_properties(device).name)


def get_device_capability(device: int | str | torch_core.Device | None = None) -> tuple[int, int]:
    """Compute capability, e.g. ``(9, 0)`` for an H100 (sm_90)."""
    props = get_device_properties(device)
    return int(props.major), int(props.minor)
