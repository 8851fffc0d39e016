"""copies: host <-> device and device <-> device moves are bit exact, for every dtype."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
from torch_core.testing import BackendAdapter

DTYPES = [np.float32, np.float64, np.int64, np.bool_]


def _data(np_dtype: type) -> np.ndarray:
    rng = np.random.default_rng(5)
    if np_dtype is np.bool_:
        return rng.random((33, 17)) > 0.5
    if np_dtype is np.int64:
        return rng.integers(-(2**62), 2**62, size=(33, 17), dtype=np.int64)
    data = rng.standard_normal((33, 17)).astype(np_dtype)
    data[0, :3] = [np.nan, np.inf, -0.0]
    return data


@pytest.mark.parametrize("np_dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_host_to_device_to_host_is_bit_exact(backend: BackendAdapter, np_dtype: type) -> None:
    data = _data(np_dtype)
    on_device = tc.tensor(data).to(backend.device(0))
    assert str(on_device.device) == backend.device(0)
    back = on_device.to("cpu")
    assert str(back.device) == "cpu"
    assert back.numpy().tobytes() == data.tobytes()


@pytest.mark.parametrize("np_dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_between_devices_is_bit_exact(backend: BackendAdapter, np_dtype: type) -> None:
    data = _data(np_dtype)
    last = backend.device(backend.device_count() - 1)
    moved = tc.tensor(data, device=backend.device(0)).to(last).to(backend.device(0))
    assert str(moved.device) == backend.device(0)
    assert moved.numpy().tobytes() == data.tobytes()


def test_copy_after_queued_work_sees_its_result(backend: BackendAdapter) -> None:
    t = tc.zeros(100_000, device=backend.device(0))
    t.fill_(3.0)
    out = (t * 1 if backend.lacks("ops.mul") is None else t + 0).to("cpu")
    np.testing.assert_array_equal(out.numpy(), np.full(100_000, 3.0, np.float32))
