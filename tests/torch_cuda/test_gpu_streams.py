"""CUDA streams and events through torch_core's generic Stream and Event.

Tests marked `asynchronous` check that work is still running when the host
looks; `tools/dev gpu-check` deselects them in its CUDA_LAUNCH_BLOCKING=1 pass,
where every launch returns only after its kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
import torch_cuda

pytestmark = pytest.mark.gpu

# ~50 ms on an H100 (1.98 GHz boost), ~90 ms at base clock: long enough that
# a query right after queuing it still sees it running.
SPIN = 100_000_000


def test_stream_is_cores_stream_on_the_current_cuda_device() -> None:
    s = torch_cuda.Stream()
    assert isinstance(s, tc.Stream)
    assert str(s.device) == f"cuda:{torch_cuda.current_device()}"
    assert s.id != 0  # 0 is the default stream
    assert torch_cuda.current_stream().id == 0
    with torch_cuda.stream(s):
        assert torch_cuda.current_stream() == s
    assert torch_cuda.current_stream().id == 0


@pytest.mark.asynchronous
def test_query_and_synchronize() -> None:
    s = torch_cuda.Stream()
    torch_cuda._sleep(SPIN, s)
    assert s.query() is False
    s.synchronize()
    assert s.query() is True


def test_work_ordered_by_an_event_reads_the_producers_result() -> None:
    producer, consumer = torch_cuda.Stream(), torch_cuda.Stream()
    x = tc.tensor(np.arange(1000, dtype=np.float32), device="cuda:0")
    torch_cuda.synchronize()
    torch_cuda._sleep(SPIN, producer)
    with tc.stream(producer):
        y = x * 2
    consumer.wait_event(producer.record_event())
    with tc.stream(consumer):
        got = (y + 1).numpy()
    np.testing.assert_array_equal(got, np.arange(1000, dtype=np.float32) * 2 + 1)


@pytest.mark.asynchronous
def test_an_event_orders_work_across_streams() -> None:
    producer, consumer = torch_cuda.Stream(), torch_cuda.Stream()
    x = tc.tensor(np.arange(1000, dtype=np.float32), device="cuda:0")
    torch_cuda.synchronize()
    torch_cuda._sleep(SPIN, producer)
    with tc.stream(producer):
        y = x * 2  # runs after the spin
    ready = producer.record_event()
    consumer.wait_event(ready)
    with tc.stream(consumer):
        z = y + 1  # must wait for y: without the event it would read garbage
        assert ready.query() is False and consumer.query() is False
        got = z.numpy()  # ordered on the consumer stream
    np.testing.assert_array_equal(got, np.arange(1000, dtype=np.float32) * 2 + 1)
    assert ready.query() is True


@pytest.mark.asynchronous
def test_wait_stream() -> None:
    a, b = torch_cuda.Stream(), torch_cuda.Stream()
    torch_cuda._sleep(SPIN, a)
    b.wait_stream(a)
    with tc.stream(b):
        t = tc.ones(4, device="cuda:0")  # a kernel queued behind the wait
    assert b.query() is False
    b.synchronize()
    assert t.numpy().sum() == 4
    assert a.query() is True


def test_elapsed_time_measures_device_time() -> None:
    s = torch_cuda.Stream()
    start, end = torch_cuda.Event(), torch_cuda.Event()
    start.record(s)
    torch_cuda._sleep(SPIN, s)
    end.record(s)
    end.synchronize()
    assert end.query() is True
    ms = start.elapsed_time(end)
    assert 5.0 < ms < 5000.0, ms  # SPIN clocks at 0.02-20 GHz


def test_device_synchronize_waits_for_every_stream() -> None:
    streams = [torch_cuda.Stream() for _ in range(3)]
    for s in streams:
        torch_cuda._sleep(SPIN // 4, s)
    torch_cuda.synchronize()
    assert all(s.query() for s in streams)
