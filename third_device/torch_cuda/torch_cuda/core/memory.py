"""Caching-allocator statistics of CUDA devices, as ``torch.cuda`` names them.

Core's caching allocator sits on cudaMalloc/cudaFree (CudaHooks); these are
its counters for one device.
"""

from __future__ import annotations

import torch_core
from torch_core import memory as _memory
from torch_cuda.core.runtime import resolve


def memory_stats(device: int | str | torch_core.Device | None = None) -> dict[str, int]:
    return _memory.memory_stats(resolve(device))


def memory_allocated(device: int | str | torch_core.Device | None = None) -> int:
    return _memory.memory_allocated(resolve(device))


def memory_reserved(device: int | str | torch_core.Device | None = None) -> int:
    return _memory.memory_reserved(resolve(device))


def max_memory_allocated(device: int | str | torch_core.Device | None = None) -> int:
    return _memory.max_memory_allocated(resolve(device))


def reset_peak_memory_stats(device: int | str | torch_core.Device | None = None) -> None:
    _memory.reset_peak_memory_stats(resolve(device))


def empty_cache(device: int | str | torch_core.Device | None = None) -> None:
    """Returns cached, unused blocks to the driver (cudaFree)."""
    _memory.empty_cache(resolve(device))
