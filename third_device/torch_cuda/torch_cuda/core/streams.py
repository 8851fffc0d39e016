"""CUDA streams, as ``torch.cuda.Stream`` offers them."""

from __future__ import annotations

from torch_cuda import _CUDAC
from torch_cuda.core.device import _require, current_device


class Stream:
    """A non-blocking CUDA stream on one device."""

    def __init__(self, device: int | None = None) -> None:
        _require()
        self._stream = _CUDAC._Stream(current_device() if device is None else device)

    @property
    def device(self) -> int:
        return int(self._stream.device)

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        return bool(self._stream.query())

    def synchronize(self) -> None:
        """Waits for all work queued on the stream."""
        self._stream.synchronize()
