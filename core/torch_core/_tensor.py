"""The Tensor type (implemented in C++) and its Python-side printing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from torch_core import _C

if TYPE_CHECKING:
    from torch_core._streams import Stream

Tensor = _C.Tensor


def _repr(self: Tensor) -> str:
    values = np.array2string(
        self.numpy(), separator=", ", prefix="tensor(", precision=4, floatmode="maxprec_equal"
    )
    extras = []
    if str(self.device) != "cpu":
        extras.append(f"device='{self.device}'")
    if self.dtype not in (_C.dtype.float32, _C.dtype.int64, _C.dtype.bool):
        extras.append(f"dtype=torch_core.{self.dtype.name}")
    return "tensor(" + ", ".join([values, *extras]) + ")"


def _record_stream(self: Tensor, stream: Stream) -> None:
    """Work queued on ``stream`` uses this tensor: its memory is not reused
    when freed until that work has run (as ``torch.Tensor.record_stream``).

    Core's dispatcher already records the stream of every op; this is for
    work it does not see (a vendor library call, a collective on a side stream).
    """
    self._record_stream(stream.device, stream.id)


Tensor.record_stream = _record_stream
Tensor.__repr__ = _repr
Tensor.__str__ = _repr
