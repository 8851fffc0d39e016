"""What is emu's own about its streams: the _sleep kernel, per-thread current device.

Stream and event ordering for every backend is in tests/conformance/test_streams.py.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import torch_core as tc
import torch_emu
from torch_emu import _EMUC


def test_numpy_waits_for_the_work_it_reads() -> None:
    s = torch_emu.current_stream(0)
    _EMUC._sleep(0, s.id, 50.0)
    t = tc.full((4,), 2.0, device="emu:0") + 1
    np.testing.assert_array_equal(t.numpy(), np.full(4, 3.0, dtype=np.float32))


@pytest.mark.asynchronous
def test_sleep_kernel_returns_to_the_host_at_once() -> None:
    s = torch_emu.Stream(0)
    start = time.monotonic()
    _EMUC._sleep(0, s.id, 300.0)
    queued = time.monotonic() - start
    busy = s.query()
    s.synchronize()
    assert busy is False
    assert queued < 0.3  # sanity only: the real assertion is query() above


@pytest.mark.asynchronous
def test_event_query_synchronize_and_elapsed_time() -> None:
    s = torch_emu.Stream(0)
    start, end = tc.Event("emu:0"), tc.Event("emu:0")
    gate = _EMUC._block_stream(0, s.id)
    start.record(s)
    _EMUC._sleep(0, s.id, 20.0)
    end.record(s)
    assert end.query() is False
    gate.open()
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) >= 19.0


def test_kernel_errors_surface_at_synchronize() -> None:
    # A stream on another device id does not exist: a clear host-side error.
    try:
        tc.Stream("emu:5")
    except Exception as error:
        assert "emu:5" in str(error)
    else:
        raise AssertionError("expected an error for emu:5")


def test_current_device_is_per_thread_and_checked() -> None:
    import threading

    torch_emu.set_device(1)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch_emu.current_device()))
    thread.start()
    thread.join()
    try:
        assert torch_emu.current_device() == 1
        assert seen == [0]
    finally:
        torch_emu.set_device(0)


def test_device_guard_sets_and_restores_the_current_device() -> None:
    assert torch_emu.current_device() == 0
    with torch_emu.device(1):
        assert torch_emu.current_device() == 1
        assert str(torch_emu.Stream().device) == "emu:1"
    assert torch_emu.current_device() == 0
