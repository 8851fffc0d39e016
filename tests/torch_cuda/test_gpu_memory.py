"""Core's caching allocator over cudaMalloc/cudaFree: exact statistics."""

from __future__ import annotations

import gc

import pytest

import torch_core as tc
import torch_cuda

pytestmark = pytest.mark.gpu

GRANULE = tc._C.allocation_granularity()  # 512
SEGMENT = 2 << 20  # small-pool segments are 2 MiB


@pytest.fixture
def fresh_stream():
    """A new stream: the allocator's pools are per stream, so it starts with
    no cached block, whatever earlier tests left on other streams."""
    torch_cuda.synchronize()
    gc.collect()
    torch_cuda.empty_cache(0)
    torch_cuda.reset_peak_memory_stats(0)
    s = torch_cuda.Stream(0)
    with tc.stream(s):
        yield s
    torch_cuda.synchronize()
    gc.collect()
    torch_cuda.empty_cache(0)


def test_allocate_free_reallocate_exact_counts(fresh_stream) -> None:
    before = torch_cuda.memory_stats(0)
    t = tc.empty(1000, device="cuda:0")  # 4000 bytes -> 4096
    after = torch_cuda.memory_stats(0)
    assert after["allocated_bytes"] - before["allocated_bytes"] == 4096
    assert after["reserved_bytes"] - before["reserved_bytes"] == SEGMENT
    assert after["num_raw_allocs"] - before["num_raw_allocs"] == 1
    assert torch_cuda.memory_allocated(0) == after["allocated_bytes"]
    assert torch_cuda.memory_reserved(0) == after["reserved_bytes"]

    del t
    freed = torch_cuda.memory_stats(0)
    assert freed["allocated_bytes"] == before["allocated_bytes"]
    assert freed["reserved_bytes"] == after["reserved_bytes"]  # cached, not returned

    u = tc.empty(1000, device="cuda:0")  # free-then-allocate: no cudaMalloc
    again = torch_cuda.memory_stats(0)
    assert again["num_raw_allocs"] == after["num_raw_allocs"]
    assert again["num_allocs"] == after["num_allocs"] + 1
    del u

    torch_cuda.empty_cache(0)
    emptied = torch_cuda.memory_stats(0)
    assert emptied["reserved_bytes"] == before["reserved_bytes"]
    assert emptied["num_raw_frees"] == before["num_raw_frees"] + 1


def test_peak_tracks_the_largest_moment(fresh_stream) -> None:
    base = torch_cuda.memory_allocated(0)
    # 3 MiB comes from a 4 MiB segment; the 1 MiB remainder is too small for
    # the large pool, so the block is not split and counts as 4 MiB (as in PyTorch).
    big = tc.empty(3 << 20, dtype=tc.bool, device="cuda:0")
    del big
    assert torch_cuda.max_memory_allocated(0) == base + (4 << 20)
    assert torch_cuda.memory_allocated(0) == base


def test_out_of_memory_is_reported_and_the_allocator_stays_usable(fresh_stream) -> None:
    with pytest.raises(tc.OutOfMemoryError):
        tc.empty(1 << 50, dtype=tc.bool, device="cuda:0")  # 1 PiB
    assert torch_cuda.memory_stats(0)["num_ooms"] >= 1
    assert tc.ones(10, device="cuda:0").sum().numpy() == 10
