"""Device queries, properties and the device guard on a real GPU."""

from __future__ import annotations

import pytest

import torch_core as tc
import torch_cuda

pytestmark = pytest.mark.gpu


def test_availability() -> None:
    assert torch_cuda.is_available() is True
    assert torch_cuda.device_count() >= 1
    assert tc.is_available("cuda") and tc.device_count("cuda") == torch_cuda.device_count()


def test_properties_come_from_the_runtime() -> None:
    props = torch_cuda.get_device_properties(0)
    assert torch_cuda.get_device_name(0) == props.name != ""
    major, minor = torch_cuda.get_device_capability(0)
    assert (major, minor) == (props.major, props.minor)
    # _CUDAC carries SASS for sm_80..sm_120 and PTX for later GPUs: any device
    # this suite runs on is at least sm_80 (an H100 reports (9, 0)).
    assert major >= 8
    assert props.total_memory > 1 << 30
    assert props.multi_processor_count > 0 and props.warp_size == 32
    assert "multi_processor_count" in repr(props)


def test_device_guard_restores_the_previous_device() -> None:
    torch_cuda.set_device(0)
    with torch_cuda.device(0):
        assert torch_cuda.current_device() == 0
    last = torch_cuda.device_count() - 1
    with torch_cuda.device(last):
        assert torch_cuda.current_device() == last
        t = tc.ones(3, device=f"cuda:{last}")
        assert str(t.device) == f"cuda:{last}"
    assert torch_cuda.current_device() == 0


def test_a_missing_device_is_named() -> None:
    n = torch_cuda.device_count()
    with pytest.raises(
        RuntimeError, match=rf"'cuda:{n}' does not exist: there are {n} cuda device"
    ):
        tc.ones(1, device=f"cuda:{n}")
