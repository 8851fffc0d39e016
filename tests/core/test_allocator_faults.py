"""Core's caching allocator under backend faults, driven by the test-only
"faulty" backend (tests/backends/FaultyBackend.cpp): its streams are busy
until the test finishes them, its memory has a capacity, and its event and
stream calls fail on request.

Each test states the guarantee it checks: a failed backend call never makes
a block reusable while another stream may still use it, never breaks later
allocations, and never loses a block without a warning; running out of
memory and empty_cache wait for the frees pending on other streams first;
the allocator's own events are sync-only and pooled.
"""

from __future__ import annotations

import gc

import _faulty_device as _faulty
import pytest

import torch_core as tc

DEVICE = "faulty:0"
N = 1 << 20  # float32 elements: 4 MiB, a large-pool block alone in its 4 MiB segment
SEGMENT = 4 << 20


def _stats() -> dict[str, int]:
    return tc.memory.memory_stats(DEVICE)


@pytest.fixture(autouse=True)
def fresh() -> None:
    """No pending free, cached block or fault left over from an earlier test."""
    gc.collect()
    tc.synchronize(DEVICE)  # finishes every stream
    _faulty._set_capacity(1 << 40)
    for call in ("query_event", "record_event", "synchronize_event"):
        _faulty._fail(call, 0)
    tc.memory.empty_cache(DEVICE)
    assert _stats()["pending_frees"] == 0
    assert _stats()["reserved_bytes"] == _stats()["allocated_bytes"] == 0


def _used_on(stream: tc.Stream) -> tuple[tc.Tensor, int]:
    x = tc.empty(N, device=DEVICE)
    x.record_stream(stream)
    return x, x.data_ptr()


def test_a_query_that_throws_never_frees_a_block_its_stream_still_uses() -> None:
    s1, s2 = tc.Stream(DEVICE), tc.Stream(DEVICE)
    a, a_ptr = _used_on(s1)
    b, b_ptr = _used_on(s2)
    _faulty._hold(s1.id)
    _faulty._hold(s2.id)
    del a, b  # both pending: s1 and s2 are busy
    assert _stats()["pending_frees"] == 2
    # a's query answers "not yet"; b's throws.
    _faulty._fail("query_event", times=1, after=1)
    with pytest.raises(RuntimeError, match="injected query_event failure"):
        tc.empty(N, device=DEVICE)
    assert _stats()["pending_frees"] == 2
    # s1 is still busy: a's block must not be handed out (the old code had
    # moved a's events out of its entry, so the next pass saw none to wait for).
    c = tc.empty(N, device=DEVICE)
    assert c.data_ptr() not in (a_ptr, b_ptr)
    assert _stats()["pending_frees"] == 2
    _faulty._finish(s1.id)
    _faulty._finish(s2.id)
    d = tc.empty(N, device=DEVICE)
    assert d.data_ptr() in (a_ptr, b_ptr)
    assert _stats()["pending_frees"] == 0


def test_after_a_query_throws_later_allocations_work_and_reuse_each_block_once() -> None:
    s = tc.Stream(DEVICE)
    a, a_ptr = _used_on(s)
    b, b_ptr = _used_on(s)
    _faulty._hold(s.id)
    del a, b
    _faulty._finish(s.id)
    # a's query succeeds (a is returned), b's throws.
    _faulty._fail("query_event", times=1, after=1)
    with pytest.raises(RuntimeError, match="injected query_event failure"):
        tc.empty(N, device=DEVICE)
    # The old code kept a's entry after destroying its event: every later
    # allocation then failed with "no faulty event N".
    got = [tc.empty(N, device=DEVICE) for _ in range(3)]
    ptrs = [t.data_ptr() for t in got]
    assert len(set(ptrs)) == 3, "a block was handed out twice"
    assert {a_ptr, b_ptr} <= set(ptrs)
    assert _stats()["pending_frees"] == 0


def _full_device_with_a_pending_free() -> tuple[tc.Tensor, int]:
    """Two segments' capacity: one held by the returned tensor, one by a block
    freed while a busy stream still uses it (its pointer is returned)."""
    _faulty._set_capacity(2 * SEGMENT)
    s = tc.Stream(DEVICE)
    keep = tc.empty(N, device=DEVICE)
    a, a_ptr = _used_on(s)
    _faulty._hold(s.id)
    del a
    assert _stats()["pending_frees"] == 1
    return keep, a_ptr


def test_out_of_memory_waits_for_pending_frees_before_raising() -> None:
    keep, a_ptr = _full_device_with_a_pending_free()
    synced = _faulty._counters()["event_synchronizations"]
    # The old code raised here: "0.0 MiB allocated ... 8.0 MiB reserved" counted
    # only `keep`, while a's block was waiting for s.
    c = tc.empty(N, device=DEVICE)
    assert c.data_ptr() == a_ptr
    assert _faulty._counters()["event_synchronizations"] == synced + 1
    stats = _stats()
    assert stats["pending_frees"] == 0 and stats["num_ooms"] == 0
    assert keep.data_ptr() != c.data_ptr()


def test_out_of_memory_still_raises_when_nothing_is_pending_and_stays_usable() -> None:
    _faulty._set_capacity(2 * SEGMENT)
    held = [tc.empty(N, device=DEVICE), tc.empty(N, device=DEVICE)]
    with pytest.raises(tc.OutOfMemoryError, match="faulty:0 is out of memory: tried to allocate"):
        tc.empty(N, device=DEVICE)
    assert _stats()["num_ooms"] == 1
    ptr = held.pop().data_ptr()
    assert tc.empty(N, device=DEVICE).data_ptr() == ptr


def test_a_failed_wait_keeps_the_free_pending() -> None:
    keep, a_ptr = _full_device_with_a_pending_free()
    _faulty._fail("synchronize_event")
    with pytest.raises(RuntimeError, match="injected synchronize_event failure"):
        tc.empty(N, device=DEVICE)
    assert _stats()["pending_frees"] == 1  # not returned: s may still use it
    c = tc.empty(N, device=DEVICE)  # the wait works this time
    assert c.data_ptr() == a_ptr
    assert _stats()["pending_frees"] == 0
    del keep


def test_empty_cache_waits_for_pending_frees_first() -> None:
    s = tc.Stream(DEVICE)
    a, _ = _used_on(s)
    _faulty._hold(s.id)
    del a
    assert _stats()["pending_frees"] == 1
    tc.memory.empty_cache(DEVICE)
    # The old code only queried: the block stayed pending and its segment reserved.
    stats = _stats()
    assert stats["pending_frees"] == 0
    assert stats["reserved_bytes"] == 0


def test_the_allocators_events_are_sync_only_and_pooled() -> None:
    s = tc.Stream(DEVICE)
    before = _faulty._counters()
    for _ in range(20):
        x, _ = _used_on(s)
        del x  # s is idle: the event completes when recorded
        assert _stats()["pending_frees"] == 1  # each free went through an event
    tc.empty(N, device=DEVICE)  # returns the last pending block
    after = _faulty._counters()
    # The old code created (and destroyed) one timing event per free.
    assert after["timing_events"] == before["timing_events"]
    assert after["sync_only_events"] >= 1
    assert after["sync_only_events"] - before["sync_only_events"] <= 1
    assert after["destroyed_events"] == before["destroyed_events"]
    # A user's event still measures time.
    start = tc.Event(DEVICE)
    assert _faulty._counters()["timing_events"] == after["timing_events"] + 1
    del start


def test_record_stream_on_a_stream_that_does_not_exist_warns_and_leaks_nothing() -> None:
    x = tc.empty(N, device=DEVICE)
    ptr = x.data_ptr()
    bogus = tc.Stream(DEVICE, _id=999)
    with pytest.warns(RuntimeWarning, match=r"record_stream: faulty:0 stream 999 cannot be used"):
        x.record_stream(bogus)
    del x
    assert _stats()["pending_frees"] == 0
    # The old code recorded the stream silently; the free then failed to record
    # an event on it and dropped the block without a word.
    assert tc.empty(N, device=DEVICE).data_ptr() == ptr


def test_a_free_that_cannot_record_its_event_warns_and_never_reuses_the_block() -> None:
    s = tc.Stream(DEVICE)
    x, ptr = _used_on(s)
    _faulty._fail("record_event")
    destroyed = _faulty._counters()["destroyed_events"]
    with pytest.warns(RuntimeWarning, match=r"never reused: recording an event on faulty:0 stream"):
        del x
    assert _stats()["pending_frees"] == 0
    assert tc.empty(N, device=DEVICE).data_ptr() != ptr
    # The event taken for it is in an unknown state: destroyed, not pooled.
    assert _faulty._counters()["destroyed_events"] == destroyed + 1
