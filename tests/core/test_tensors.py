"""Creation, conversion and printing of tensors."""

from __future__ import annotations

import numpy as np
import pytest

import torch_core as tc
import torch_emu  # noqa: F401


@pytest.mark.parametrize("device", ["cpu", "emu:1"])
def test_creation_functions(device) -> None:
    assert tc.zeros(2, 3, device=device).numpy().tolist() == [[0.0] * 3] * 2
    assert tc.ones((2,), dtype=tc.int64, device=device).numpy().tolist() == [1, 1]
    assert tc.full((2, 2), 7, device=device).dtype == tc.int64
    assert tc.full((1,), 1.5, device=device).dtype == tc.float32
    assert tc.arange(5, device=device).numpy().tolist() == [0, 1, 2, 3, 4]
    assert tc.arange(0, 1, 0.25, device=device).numpy().tolist() == [0.0, 0.25, 0.5, 0.75]
    assert tc.empty(3, 0, device=device).shape == (3, 0)
    t = tc.empty(4, 5, dtype=tc.float64, device=device)
    assert (t.shape, t.dtype, t.dim(), t.numel(), len(t)) == ((4, 5), tc.float64, 2, 20, 4)


def test_tensor_infers_dtypes_like_pytorch() -> None:
    assert tc.tensor([1.0, 2.0]).dtype == tc.float32
    assert tc.tensor([[1, 2], [3, 4]]).dtype == tc.int64
    assert tc.tensor([True]).dtype == tc.bool
    assert tc.tensor(np.ones(3)).dtype == tc.float64  # NumPy keeps its dtype
    assert tc.tensor(np.ones(3, dtype=np.int32)).dtype == tc.int64
    assert tc.tensor(3.5).shape == ()
    assert tc.tensor([1, 2], dtype=tc.float64).numpy().dtype == np.float64
    with pytest.raises(TypeError, match="cannot make a tensor from"):
        tc.tensor(["a"])
    with pytest.raises(TypeError, match="unsupported NumPy dtype"):
        tc._C.from_numpy(np.ones(2, dtype=np.complex64), tc.device("cpu"))


def test_non_contiguous_numpy_input_is_copied_in_order() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4).T
    np.testing.assert_array_equal(tc.tensor(a, device="emu:0").numpy(), a)


def test_to_dtype_and_device() -> None:
    t = tc.tensor([1.7, -2.2], device="emu:0")
    assert t.to(tc.int64).numpy().tolist() == [1, -2]
    assert t.to(tc.bool).numpy().tolist() == [True, True]
    assert t.to("emu:0") is not None and str(t.to("cpu").device) == "cpu"


def test_repr_shows_values_device_and_non_default_dtype() -> None:
    assert repr(tc.tensor([[1.0, 2.5]])) == "tensor([[1.0, 2.5]])"
    assert repr(tc.tensor([1, 2], device="emu:1")) == "tensor([1, 2], device='emu:1')"
    assert repr(tc.tensor([1.0], dtype=tc.float64)) == "tensor([1.], dtype=torch_core.float64)"
