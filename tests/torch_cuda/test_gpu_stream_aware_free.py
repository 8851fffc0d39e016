"""Stream-aware frees on cuda:0: a block read by a busy side stream is not
handed to a stream-0 allocation (the emu twin is
tests/torch_emu/test_stream_aware_free.py, deterministic with gates)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import torch_core as tc
import torch_cuda

pytestmark = pytest.mark.gpu

SPIN = 100_000_000  # ~50-90 ms on an H100: the side stream is still busy below
N = 1 << 20  # 4 MiB: a large-pool block alone in its segment


@pytest.mark.asynchronous
def test_a_block_read_by_another_stream_is_not_overwritten() -> None:
    torch_cuda.synchronize()
    gc.collect()
    torch_cuda.empty_cache(0)
    s = torch_cuda.Stream(0)
    x = tc.full((N,), 1.0, device="cuda:0")  # stream 0 (legacy)
    torch_cuda.synchronize()
    x_ptr = x.data_ptr()
    torch_cuda._sleep(SPIN, s)
    with tc.stream(s):
        y = x * 2  # queued behind the spin: reads x later
    del x
    z = tc.full((N,), 5.0, device="cuda:0")  # stream 0: nothing orders it after s
    reused = z.data_ptr() == x_ptr
    side_busy = s.query() is False
    pending = torch_cuda.memory_stats(0)["pending_frees"]
    s.synchronize()
    with tc.stream(s):
        got = y.numpy()
    assert side_busy, "the spin ended too early for this check to mean anything"
    assert not reused
    assert pending == 1
    np.testing.assert_array_equal(got, np.full(N, 2.0, np.float32))
    np.testing.assert_array_equal(z.numpy(), np.full(N, 5.0, np.float32))
