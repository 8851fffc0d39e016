"""The profiler: ops and user ranges on the host, kernel intervals on device streams."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import torch_core as tc
import torch_emu
from torch_core.profiler import ProfilerActivity, profile, record_function
from torch_emu import _EMUC


def test_records_every_op_with_shapes_device_and_times() -> None:
    a = tc.ones(4, 3)
    with profile() as prof:
        b = a * 2
        b.sum(0)
    names = [e.name for e in prof.events]
    assert names == ["fill", "mul", "sum"]  # fill: the scalar 2 becomes a 0-d tensor
    mul = prof.events[1]
    assert mul.input_shapes == ((4, 3), ())
    assert mul.device == "cpu"
    assert 0 < mul.host_start_ns <= mul.host_end_ns
    assert mul.device_start_ns == -1  # the CPU has no device-side interval


def test_user_ranges_enclose_their_ops_and_work_as_decorators() -> None:
    @record_function("decorated")
    def step(x):
        return x + 1

    with profile() as prof:
        with record_function("outer"):
            step(tc.ones(2))
    by_name = {e.name: e for e in prof.events}
    outer, inner, add = by_name["outer"], by_name["decorated"], by_name["add"]
    assert outer.kind == inner.kind == "user"
    assert outer.host_start_ns <= inner.host_start_ns <= add.host_start_ns
    assert add.host_end_ns <= inner.host_end_ns <= outer.host_end_ns


@pytest.mark.asynchronous
def test_emu_kernel_intervals_are_measured_on_the_stream_after_the_host_returned() -> None:
    s = torch_emu.Stream(0)
    x = tc.ones(1000, device="emu:0")
    torch_emu.synchronize(0)
    with profile() as prof:
        gate = _EMUC._block_stream(0, s.id)
        with tc.stream(s):
            y = x.relu()
        gate.open()  # the kernel can only start now, after relu() returned on the host
        s.synchronize()
    relu = next(e for e in prof.events if e.name == "relu")
    assert relu.device == "emu:0" and relu.stream == s.id
    assert relu.host_end_ns < relu.device_start_ns <= relu.device_end_ns
    del y


def test_device_activity_can_be_left_out() -> None:
    x = tc.ones(10, device="emu:1")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x.exp()
    assert [e.device_start_ns for e in prof.events] == [-1]


def test_key_averages_counts_and_sorts() -> None:
    x = tc.ones(100, device="emu:0")
    with profile() as prof:
        for _ in range(3):
            x = x.tanh()
        x.neg()
    averages = {a.name: a for a in prof.key_averages()}
    assert averages["tanh"].count == 3 and averages["neg"].count == 1
    assert averages["tanh"].device_time_total_ns > 0
    table = prof.key_averages().table(sort_by="count")
    lines = table.splitlines()
    assert lines[1].split() == [
        "Name",
        "Count",
        "Host",
        "total",
        "Host",
        "avg",
        "Device",
        "total",
        "Devices",
    ]
    assert lines[3].split()[0] == "tanh"  # most frequent first
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="nope")
    grouped = prof.key_averages(group_by_input_shape=True).table()
    assert "Input shapes" in grouped and "[[100]]" in grouped


def test_chrome_trace_has_host_and_device_tracks_linked_by_flows(tmp_path: Path) -> None:
    x = tc.ones(64, device="emu:1")
    with profile() as prof:
        with record_function("block"):
            (x * x).sum()
        tc.ones(2) + 1
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    assert set(processes.values()) == {"host", "emu:1"}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {k["name"] for k in kernels} == {"mul", "sum"}
    assert all(processes[k["pid"]] == "emu:1" for k in kernels)
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert set(starts) == set(finishes) == {k["args"]["correlation"] for k in kernels}
    for flow_id, finish in finishes.items():
        assert processes[finish["pid"]] == "emu:1"
        assert processes[starts[flow_id]["pid"]] == "host"
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically


def test_ops_from_other_threads_are_recorded_with_their_thread() -> None:
    with profile() as prof:
        worker = threading.Thread(target=lambda: tc.ones(3).exp())
        worker.start()
        worker.join()
        tc.ones(3).neg()
    threads = {e.name: e.thread for e in prof.events if e.name in ("exp", "neg")}
    assert threads["exp"] != threads["neg"]


def test_profiles_do_not_nest_and_nothing_is_recorded_outside() -> None:
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    assert tc._C._profiler_active() is False
    with profile() as prof:
        pass
    tc.ones(3) * 2  # after the profile: not recorded
    assert prof.events == []
