"""The Tensor type (implemented in C++) and its Python-side printing."""

from __future__ import annotations

import numpy as np

from torch_core import _C

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


Tensor.__repr__ = _repr
Tensor.__str__ = _repr
