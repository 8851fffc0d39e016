"""The ``torch.cuda``-like API of torch_cuda, over torch_core's generic runtime."""

from torch_cuda.core.memory import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
)
from torch_cuda.core.properties import (
    get_device_capability,
    get_device_name,
    get_device_properties,
)
from torch_cuda.core.runtime import (
    CudaError,
    current_device,
    device,
    device_count,
    driver_version,
    is_available,
    runtime_version,
    set_device,
    synchronize,
)
from torch_cuda.core.streams import Event, Stream, current_stream, stream

__all__ = [
    "CudaError",
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "device",
    "device_count",
    "driver_version",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "runtime_version",
    "set_device",
    "stream",
    "synchronize",
]
