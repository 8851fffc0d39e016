"""device: the backend's type is registered, its devices exist, and misuse is named."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
from torch_core.testing import BackendAdapter


def test_device_type_is_registered_with_devices(backend: BackendAdapter) -> None:
    assert backend.device_type in tc.registered_device_types()
    assert tc.is_available(backend.device_type)
    assert tc.device_count(backend.device_type) == backend.device_count() >= 1


def test_tensors_land_on_every_device_index(backend: BackendAdapter) -> None:
    for index in range(backend.device_count()):
        t = tc.full((3,), float(index), device=backend.device(index))
        assert str(t.device) == backend.device(index)
        assert t.device.index == index
        np.testing.assert_array_equal(t.numpy(), np.full(3, float(index), np.float32))


def test_an_index_past_the_last_device_is_named(backend: BackendAdapter) -> None:
    count = backend.device_count()
    if backend.device_type == "cpu":
        pytest.skip("the CPU is one device and ignores its index")
    with pytest.raises(RuntimeError, match=rf"device '{backend.device(count)}' does not exist"):
        tc.ones(1, device=backend.device(count))


def test_synchronize_returns_with_the_device_idle(backend: BackendAdapter) -> None:
    t = tc.ones(1000, device=backend.device(0)) + 1
    tc.synchronize(backend.device(0))
    assert tc.current_stream(backend.device(0)).query()
    assert float(t.numpy()[0]) == 2.0
