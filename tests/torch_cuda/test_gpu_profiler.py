"""Core's profiler with CUDA's stubs: kernel intervals timed on the stream."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
import torch_cuda
from torch_core.profiler import ProfilerActivity, profile, record_function

pytestmark = pytest.mark.gpu

SPIN = 100_000_000  # ~50-90 ms


@pytest.mark.asynchronous
def test_kernel_interval_is_measured_on_the_stream_not_at_launch() -> None:
    s = torch_cuda.Stream()
    x = tc.ones(1000, device="cuda:0")
    torch_cuda.synchronize()
    with profile() as prof:
        torch_cuda._sleep(SPIN, s)  # not an op: the stream is busy for ~50 ms
        with tc.stream(s):
            y = x.relu()  # returns at once on the host
        s.synchronize()
        after_sync = tc._C._host_now_ns()
    relu = next(e for e in prof.events if e.name == "relu")
    assert relu.device == "cuda:0" and relu.stream == s.id
    # The kernel ran after the spin, long after relu() returned on the host;
    # the anchor's conversion error (microseconds) is far below the spin.
    assert relu.host_end_ns + 10_000_000 < relu.device_start_ns <= relu.device_end_ns
    assert relu.device_end_ns <= after_sync + 1_000_000
    np.testing.assert_array_equal(y.numpy(), np.ones(1000, dtype=np.float32))


def test_device_time_appears_in_the_table_and_the_trace(tmp_path) -> None:
    a = tc.tensor(np.random.default_rng(0).standard_normal((512, 512)), device="cuda:0")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.DEVICE]) as prof:
        with record_function("step"):
            assert torch_cuda._CUDAC._nvtx_depth() == 1  # the range went to NVTX too
            (a @ a).softmax(1)
    assert torch_cuda._CUDAC._nvtx_depth() == 0
    matmul = next(e for e in prof.events if e.name == "matmul")
    assert matmul.device_time_ns > 0
    assert "matmul" in prof.key_averages().table(sort_by="device_time_total")
    prof.export_chrome_trace(tmp_path / "trace.json")
    assert "cuda:0" in (tmp_path / "trace.json").read_text()


def test_without_device_activity_no_marks_are_taken() -> None:
    x = tc.ones(10, device="cuda:0")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x.exp()
    (event,) = [e for e in prof.events if e.name == "exp"]
    assert event.device_start_ns == -1
