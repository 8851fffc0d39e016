"""Tensor creation, with PyTorch's defaults (float32, the CPU)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torch_core import _C
from torch_core._devices import Device, device

DeviceArg = str | Device

_NUMPY = {
    _C.dtype.float32: np.float32,
    _C.dtype.float64: np.float64,
    _C.dtype.int64: np.int64,
    _C.dtype.bool: np.bool_,
}


def _shape(size: tuple[Any, ...]) -> list[int]:
    if len(size) == 1 and isinstance(size[0], Sequence):
        size = tuple(size[0])
    return [int(s) for s in size]


def empty(*size: Any, dtype: _C.dtype = _C.dtype.float32, device: DeviceArg = "cpu") -> _C.Tensor:
    """An uninitialised tensor."""
    return _C.empty(_shape(size), dtype, _device(device))


def full(
    size: Sequence[int],
    fill_value: float,
    *,
    dtype: _C.dtype | None = None,
    device: DeviceArg = "cpu",
) -> _C.Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, like PyTorch)."""
    if dtype is None:
        dtype = _infer_scalar_dtype(fill_value)
    return _C.full(_shape((size,)), float(fill_value), dtype, _device(device))


def zeros(*size: Any, dtype: _C.dtype = _C.dtype.float32, device: DeviceArg = "cpu") -> _C.Tensor:
    return _C.full(_shape(size), 0.0, dtype, _device(device))


def ones(*size: Any, dtype: _C.dtype = _C.dtype.float32, device: DeviceArg = "cpu") -> _C.Tensor:
    return _C.full(_shape(size), 1.0, dtype, _device(device))


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    *,
    dtype: _C.dtype | None = None,
    device: DeviceArg = "cpu",
) -> _C.Tensor:
    """Values from ``start`` to ``end`` (exclusive); int64 unless any bound is a float."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = _C.dtype.float32 if floats else _C.dtype.int64
    return _C.arange(float(start), float(end), float(step), dtype, _device(device))


def tensor(data: Any, *, dtype: _C.dtype | None = None, device: DeviceArg = "cpu") -> _C.Tensor:
    """A tensor from nested lists, Python numbers or a NumPy array (always a copy).

    Python floats give float32 and ints int64, as in PyTorch; NumPy arrays keep
    their dtype (float32, float64, int64, bool; other integer widths become int64).
    """
    if isinstance(data, _C.Tensor):
        raise TypeError("tensor() copies data; use t.to(...) to move or convert a Tensor")
    if isinstance(data, np.ndarray):
        array = data
        if array.dtype.kind in "iu" and array.dtype != np.int64:
            array = array.astype(np.int64)
    else:
        array = np.asarray(data)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype.kind in "iu":
            array = array.astype(np.int64)
        elif array.dtype == object or array.dtype.kind not in "fb":
            raise TypeError(f"tensor(): cannot make a tensor from {type(data).__name__} data")
    if dtype is not None:
        array = array.astype(_NUMPY[dtype])
    # np.require keeps 0-d arrays 0-d (ascontiguousarray would make them 1-d).
    return _C.from_numpy(np.require(array, requirements="C"), _device(device))


def _infer_scalar_dtype(value: float) -> _C.dtype:
    if isinstance(value, bool):
        return _C.dtype.bool
    if isinstance(value, int):
        return _C.dtype.int64
    return _C.dtype.float32


def _device(target: DeviceArg) -> Device:
    return device(target)
