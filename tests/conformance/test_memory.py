"""memory: core's caching allocator on the backend's device, with exact statistics."""

from __future__ import annotations

import gc

import pytest

import torch_core as tc
from torch_core import memory
from torch_core.testing import BackendAdapter

GRANULE = tc._C.allocation_granularity()


def rounded(nbytes: int) -> int:
    return max(GRANULE, -(-nbytes // GRANULE) * GRANULE)


@pytest.fixture
def device(backend: BackendAdapter):
    """The backend's last device, drained and emptied, so counts start known."""
    name = backend.device(backend.device_count() - 1)
    tc.synchronize(name)
    gc.collect()
    memory.empty_cache(name)
    memory.reset_peak_memory_stats(name)
    yield name
    tc.synchronize(name)
    gc.collect()
    memory.empty_cache(name)


def test_allocated_bytes_are_exact_and_peak_stays(device: str) -> None:
    base = memory.memory_allocated(device)
    a = tc.empty(1000, device=device)  # 4000 bytes
    b = tc.empty(10, 10, dtype=tc.float64, device=device)  # 800 bytes
    assert memory.memory_allocated(device) - base == rounded(4000) + rounded(800)
    peak = memory.max_memory_allocated(device)
    del a
    tc.synchronize(device)
    assert memory.memory_allocated(device) - base == rounded(800)
    assert memory.max_memory_allocated(device) == peak
    del b


def test_freed_blocks_are_reused_without_new_device_allocations(device: str) -> None:
    sizes = [10, 1000, 300_000]
    tensors = [tc.empty(n, device=device) for n in sizes]
    raw_before = memory.memory_stats(device)["num_raw_allocs"]
    for _ in range(3):
        del tensors
        tc.synchronize(device)
        tensors = [tc.empty(n, device=device) for n in sizes]
    assert memory.memory_stats(device)["num_raw_allocs"] == raw_before
    del tensors


def test_empty_cache_returns_every_free_segment(device: str) -> None:
    t = tc.empty(100_000, device=device)
    assert memory.memory_reserved(device) >= rounded(400_000)
    del t
    tc.synchronize(device)
    memory.empty_cache(device)
    assert memory.memory_reserved(device) == 0
    stats = memory.memory_stats(device)
    assert stats["num_allocs"] == stats["num_frees"]
