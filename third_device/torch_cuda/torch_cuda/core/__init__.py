"""The ``torch.cuda``-like API of torch_cuda."""

from torch_cuda.core.device import (
    CudaError,
    current_device,
    device_count,
    is_available,
    runtime_version,
    set_device,
    synchronize,
)
from torch_cuda.core.streams import Stream

__all__ = [
    "CudaError",
    "Stream",
    "current_device",
    "device_count",
    "is_available",
    "runtime_version",
    "set_device",
    "synchronize",
]
