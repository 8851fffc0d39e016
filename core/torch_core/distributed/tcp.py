"""``tcp``: core's backend for CPU tensors, the ring over loopback sockets.

CPU tensors are host memory, so staging is a zero-copy NumPy view of each
tensor's storage: the ring reduces straight into the tensor.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from torch_core import _C
from torch_core.distributed.backend import GroupContext, HostRingBackend, Staged

_NUMPY = {
    _C.dtype.float32: np.float32,
    _C.dtype.float64: np.float64,
    _C.dtype.int64: np.int64,
    _C.dtype.bool: np.bool_,
}


def host_view(tensor: _C.Tensor) -> np.ndarray:
    """A NumPy array over a CPU tensor's storage (the tensor must outlive it)."""
    dtype = np.dtype(_NUMPY[tensor.dtype])
    nbytes = tensor.numel() * dtype.itemsize
    if nbytes == 0:
        return np.empty(tuple(tensor.shape), dtype=dtype)
    raw = (ctypes.c_char * nbytes).from_address(tensor.data_ptr())
    return np.frombuffer(raw, dtype=dtype).reshape(tuple(tensor.shape))


class _CpuStaged(Staged):
    def __init__(self, tensors: Sequence[_C.Tensor]) -> None:
        self._tensors = list(tensors)  # keeps the storage alive while views exist

    def arrays(self, timeout: float) -> list[np.ndarray]:
        return [host_view(t) for t in self._tensors]

    def finish(self, ok: bool, timeout: float) -> None:
        self._tensors.clear()


class TcpBackend(HostRingBackend):
    """Ring collectives for CPU tensors, in place in their storage."""

    def __init__(self, ctx: GroupContext) -> None:
        super().__init__(ctx)

    def stage(self, tensors: Sequence[_C.Tensor], writes: Sequence[bool]) -> Staged:
        return _CpuStaged(tensors)
