"""Core's caching allocator, exercised through the emulated device."""

from __future__ import annotations

import gc
import re

import pytest

import torch_core as tc
import torch_emu
from torch_emu import _EMUC

GRANULE = tc._C.allocation_granularity()


def rounded(nbytes: int) -> int:
    return max(GRANULE, -(-nbytes // GRANULE) * GRANULE)


@pytest.fixture
def device():
    """emu:1, drained and emptied, so counts start from a known state."""
    torch_emu.synchronize(1)
    gc.collect()
    torch_emu.empty_cache(1)
    torch_emu.reset_peak_memory_stats(1)
    yield 1
    torch_emu.synchronize(1)
    gc.collect()
    torch_emu.empty_cache(1)


def test_stats_are_exact(device) -> None:
    a = tc.empty(1000, device="emu:1")  # 4000 bytes
    b = tc.empty(10, 10, dtype=tc.float64, device="emu:1")  # 800 bytes
    assert torch_emu.memory_allocated(device) == rounded(4000) + rounded(800)
    peak = torch_emu.max_memory_allocated(device)
    del a
    assert torch_emu.memory_allocated(device) == rounded(800)
    assert torch_emu.max_memory_allocated(device) == peak
    stats = torch_emu.memory_stats(device)
    assert stats["num_allocs"] - stats["num_frees"] == 1
    assert torch_emu.memory_reserved(device) == _EMUC._memory_used(device)
    del b


def test_an_unsplit_large_block_counts_whole(device) -> None:
    """3 MiB takes a 4 MiB segment whose 1 MiB rest is too small for the large
    pool: the block is not split and counts 4 MiB (the rule cuda's
    test_gpu_memory.py::test_peak_tracks_the_largest_moment relies on)."""
    base = torch_emu.memory_allocated(device)
    big = tc.empty(3 << 20, dtype=tc.bool, device="emu:1")
    del big
    assert torch_emu.max_memory_allocated(device) == base + (4 << 20)
    assert torch_emu.memory_allocated(device) == base


def test_blocks_split_and_merge(device) -> None:
    a = tc.empty(1024, device="emu:1")
    b = tc.empty(1024, device="emu:1")
    stats = torch_emu.memory_stats(device)
    assert stats["num_raw_allocs"] >= 1 and stats["num_splits"] >= 2
    del a, b
    merged = torch_emu.memory_stats(device)["num_merges"]
    assert merged >= stats["num_merges"] + 2
    # After merging, one whole segment is free again and empty_cache returns it.
    torch_emu.empty_cache(device)
    assert torch_emu.memory_reserved(device) == 0


def test_empty_cache_returns_memory_to_the_device(device) -> None:
    t = tc.empty(5_000_000, device="emu:1")
    del t
    assert torch_emu.memory_reserved(device) > 0
    assert _EMUC._memory_used(device) > 0
    torch_emu.empty_cache(device)
    assert torch_emu.memory_reserved(device) == 0
    assert _EMUC._memory_used(device) == 0


def test_per_stream_pools_do_not_share_free_blocks(device) -> None:
    side = torch_emu.Stream(device)
    t = tc.empty(1000, device="emu:1")
    del t
    raw = torch_emu.memory_stats(device)["num_raw_allocs"]
    with tc.stream(side):
        u = tc.empty(1000, device="emu:1")  # the default stream's free block is not reused
    assert torch_emu.memory_stats(device)["num_raw_allocs"] == raw + 1
    del u


def test_out_of_memory_is_clear_and_the_allocator_stays_usable(device) -> None:
    limit = torch_emu.backends.memory.limit(device)
    torch_emu.backends.memory.set_limit(8 << 20, device)
    try:
        keep = tc.empty(1 << 20, device="emu:1")  # 4 MiB
        ooms = torch_emu.memory_stats(device)["num_ooms"]
        with pytest.raises(tc.OutOfMemoryError, match=re.escape("emu:1 is out of memory")) as info:
            tc.empty(2 << 20, device="emu:1")  # 8 MiB more
        assert "tried to allocate 8.0 MiB" in str(info.value)
        assert isinstance(info.value, RuntimeError)
        assert torch_emu.memory_stats(device)["num_ooms"] == ooms + 1
        small = tc.ones(100, device="emu:1")  # still usable
        assert float(small.sum().numpy()) == 100.0
        del keep, small
    finally:
        torch_emu.backends.memory.set_limit(limit, device)


def test_out_of_memory_frees_the_cache_and_retries(device) -> None:
    limit = torch_emu.backends.memory.limit(device)
    torch_emu.backends.memory.set_limit(6 << 20, device)
    try:
        a = tc.empty(1 << 20, device="emu:1")  # 4 MiB segment
        del a  # cached, not returned
        before = torch_emu.memory_stats(device)
        b = tc.empty(1_300_000, device="emu:1")  # needs a 6 MiB segment: only fits after freeing
        after = torch_emu.memory_stats(device)
        assert after["num_ooms"] == before["num_ooms"]
        assert after["num_raw_frees"] == before["num_raw_frees"] + 1
        del b
    finally:
        torch_emu.backends.memory.set_limit(limit, device)
