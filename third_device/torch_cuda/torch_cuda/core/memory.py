"""Caching-allocator statistics of CUDA devices, as ``torch.cuda`` names them.

Core's caching allocator sits on cudaMalloc/cudaFree (CudaHooks).
"""

from torch_core import memory

_memory = memory.for_device_type("cuda")

memory_stats = _memory.memory_stats
memory_allocated = _memory.memory_allocated
memory_reserved = _memory.memory_reserved
max_memory_allocated = _memory.max_memory_allocated
reset_peak_memory_stats = _memory.reset_peak_memory_stats
empty_cache = _memory.empty_cache
