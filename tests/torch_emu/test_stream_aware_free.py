"""Stream-aware frees: a block read by another stream is not reused under it.

x is allocated on stream 0 and read by a kernel queued on stream s behind a
gate; x is then freed and a new tensor is allocated and filled on stream 0,
which is not blocked. Without stream-aware frees the new tensor gets x's
block and overwrites it before s reads it. The emu launcher does not keep its
operands alive (as a real device's does not), so only the allocator protects x.
Ordering comes from gates, never from timing.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
import torch_emu
from torch_emu import _EMUC

N = 1 << 20  # 4 MiB: a large-pool block, alone in its segment (no split)


def _pending(device: str = "emu:0") -> int:
    return tc.memory.memory_stats(device)["pending_frees"]


def _fresh() -> None:
    """No free large block left on emu:0, so a reuse can only be x's block."""
    torch_emu.synchronize(0)
    tc.memory.empty_cache("emu:0")


@pytest.mark.asynchronous
def test_a_block_read_by_another_stream_is_not_overwritten() -> None:
    _fresh()
    s = torch_emu.Stream(0)
    x = tc.full((N,), 1.0, device="emu:0")  # on stream 0
    torch_emu.synchronize(0)
    x_ptr = x.data_ptr()
    gate = _EMUC._block_stream(0, s.id)
    with tc.stream(s):
        y = x * 2  # queued behind the gate: reads x later
    del x
    z = tc.full((N,), 5.0, device="emu:0")  # stream 0: runs at once
    torch_emu.current_stream(0).synchronize()
    reused = z.data_ptr() == x_ptr
    pending = _pending()
    gate.open()
    s.synchronize()
    with tc.stream(s):
        got = y.numpy()
    # Without stream-aware frees: z takes x's block, and y reads 5 * 2 = 10.
    np.testing.assert_array_equal(got, np.full(N, 2.0, np.float32))
    assert not reused, "x's block went to a stream-0 allocation while stream s still had to read it"
    assert pending == 1
    np.testing.assert_array_equal(z.numpy(), np.full(N, 5.0, np.float32))


@pytest.mark.asynchronous
def test_the_block_returns_once_the_other_stream_has_passed() -> None:
    _fresh()
    s = torch_emu.Stream(0)
    x = tc.zeros(N, device="emu:0")
    x_ptr = x.data_ptr()
    gate = _EMUC._block_stream(0, s.id)
    x.record_stream(s)  # work the dispatcher does not see
    del x
    blocked = tc.zeros(N, device="emu:0")
    assert blocked.data_ptr() != x_ptr
    assert _pending() == 1
    gate.open()
    s.synchronize()
    reused = tc.zeros(N, device="emu:0")  # the next allocation queries the event
    assert _pending() == 0
    assert reused.data_ptr() == x_ptr


def test_recording_the_allocation_stream_defers_nothing() -> None:
    _fresh()
    x = tc.zeros(N, device="emu:0")
    x_ptr = x.data_ptr()
    x.record_stream(torch_emu.current_stream(0))
    del x
    assert _pending() == 0
    assert tc.zeros(N, device="emu:0").data_ptr() == x_ptr


def test_empty_cache_returns_blocks_whose_streams_have_passed() -> None:
    _fresh()
    s = torch_emu.Stream(0)
    x = tc.zeros(N, device="emu:0")
    with tc.stream(s):
        (x * 2).numpy()
    del x
    s.synchronize()
    tc.memory.empty_cache("emu:0")
    assert _pending() == 0
