"""streams: streams and events order work; a held stream holds what is queued behind it.

Ordering is checked by holding a stream (the adapter's block_stream), never
by timing.
"""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
from torch_core.testing import BackendAdapter


def _held(backend: BackendAdapter, stream: tc.Stream):
    release = backend.block_stream(stream)
    if release is None:
        pytest.skip(f"{backend.device_type} lacks streams.block: {backend.lacks('streams.block')}")
    return release


def test_new_streams_are_distinct_and_current_per_device(backend: BackendAdapter) -> None:
    dev = backend.device(0)
    default = tc.current_stream(dev)
    s = tc.Stream(dev)
    assert s != default and str(s.device) == dev
    with tc.stream(s):
        assert tc.current_stream(dev) == s
    assert tc.current_stream(dev) == default
    s.synchronize()
    assert s.query()


def test_events_record_query_and_synchronize(backend: BackendAdapter) -> None:
    dev = backend.device(0)
    s = tc.Stream(dev)
    start, end = tc.Event(dev), tc.Event(dev)
    start.record(s)
    with tc.stream(s):
        tc.ones(10_000, device=dev).fill_(2.0)
    end.record(s)
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) >= 0.0


@pytest.mark.asynchronous
def test_work_behind_a_held_stream_waits_for_it(backend: BackendAdapter) -> None:
    dev = backend.device(0)
    s = tc.Stream(dev)
    x = tc.zeros(64, device=dev)
    tc.synchronize(dev)
    release = _held(backend, s)
    with tc.stream(s):
        x.fill_(5.0)  # queued behind the hold
    assert s.query() is False
    release()
    s.synchronize()
    assert s.query() is True
    np.testing.assert_array_equal(x.numpy(), np.full(64, 5.0, np.float32))


def _producer_consumer(backend: BackendAdapter, use_event: bool) -> np.ndarray:
    """Stream A writes x while held; stream B reads x into y (after A's event, or not)."""
    dev = backend.device(0)
    x = tc.zeros(8, device=dev)
    tc.synchronize(dev)
    a, b = tc.Stream(dev), tc.Stream(dev)
    release = _held(backend, a)
    with tc.stream(a):
        x.fill_(7.0)
    if use_event:
        b.wait_event(a.record_event())
    with tc.stream(b):
        y = tc.empty(8, device=dev)
        y.copy_(x)
    if not use_event:
        b.synchronize()  # B ran while A was still held: it saw the old x
    release()
    tc.synchronize(dev)
    return y.numpy()


@pytest.mark.asynchronous
def test_an_event_orders_two_streams(backend: BackendAdapter) -> None:
    np.testing.assert_array_equal(_producer_consumer(backend, True), np.full(8, 7.0, np.float32))


@pytest.mark.asynchronous
def test_without_the_event_the_reader_does_not_wait(backend: BackendAdapter) -> None:
    np.testing.assert_array_equal(_producer_consumer(backend, False), np.zeros(8, np.float32))
