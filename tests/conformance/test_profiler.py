"""profiler: ops on the backend's device get device-side intervals on their stream."""

from __future__ import annotations

import pytest

import torch_core as tc
from torch_core.profiler import profile
from torch_core.testing import BackendAdapter


def test_every_op_gets_a_device_interval_on_its_stream(backend: BackendAdapter) -> None:
    dev = backend.device(0)
    x = tc.ones(1000, device=dev)
    s = tc.Stream(dev)
    tc.synchronize(dev)
    with profile() as prof:
        with tc.stream(s):
            y = (x + 1).relu()
        s.synchronize()
    events = [e for e in prof.events if e.name in ("add", "relu")]
    assert [e.name for e in events] == ["add", "relu"]
    for e in events:
        assert e.device == dev and e.stream == s.id
        assert 0 < e.device_start_ns <= e.device_end_ns
    # Stream order: relu started on the device after add ended there.
    assert events[0].device_end_ns <= events[1].device_start_ns
    del y


@pytest.mark.asynchronous
def test_a_held_kernel_starts_after_the_host_returned(backend: BackendAdapter) -> None:
    dev = backend.device(0)
    s = tc.Stream(dev)
    x = tc.ones(1000, device=dev)
    tc.synchronize(dev)
    with profile() as prof:
        release = backend.block_stream(s)
        if release is None:
            pytest.skip(f"{backend.device_type} lacks streams.block")
        with tc.stream(s):
            y = x.relu()
        release()  # the kernel can only start now, after relu() returned on the host
        s.synchronize()
    relu = next(e for e in prof.events if e.name == "relu")
    assert relu.host_end_ns < relu.device_start_ns <= relu.device_end_ns
    del y
