"""Guards: what a traced graph assumes about its arguments.

A trace is valid for the arguments it was made with as long as every tensor
keeps its dtype, shape and device, and every Python number its type and
value (numbers become constants of the graph). ``guard_key`` turns arguments
into that key; a new key means a new trace (which may still find its kernel
in the cache: shapes are not part of the graph).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch_core import _C
from torch_core.jit._ir import DTYPES

Tensor = _C.Tensor

GuardKey = tuple[tuple[Any, ...], ...]


def guard_key(args: Sequence[Any]) -> GuardKey | None:
    """The guard key of positional arguments, or None when one cannot be guarded
    (a type other than Tensor, bool, int or float: the call then runs eagerly)."""
    key: list[tuple[Any, ...]] = []
    for arg in args:
        if isinstance(arg, Tensor):
            key.append(("tensor", arg.dtype.name, tuple(arg.shape), str(arg.device)))
        elif isinstance(arg, bool | int | float):
            # hex() keeps -0.0 and nan apart and hashable; the type keeps 1 and 1.0 apart.
            key.append(("number", type(arg).__name__, float(arg).hex()))
        else:
            return None
    return tuple(key)


def unfusible_reason(args: Sequence[Any]) -> str | None:
    """Why these arguments cannot run as one fused loop, or None when they can.

    The fuser needs at least one tensor, and all tensors on one device with
    one floating dtype and one shape: fused kernels index every input by the
    same flat element index, so broadcasting and type promotion between
    tensors are left to eager mode.
    """
    tensors = [arg for arg in args if isinstance(arg, Tensor)]
    if not tensors:
        return "no tensor arguments"
    first = tensors[0]
    for t in tensors[1:]:
        if t.device != first.device:
            return f"tensors on different devices ({first.device}, {t.device})"
        if t.dtype != first.dtype:
            return f"tensors of different dtypes ({first.dtype.name}, {t.dtype.name})"
        if tuple(t.shape) != tuple(first.shape):
            return (
                f"tensors of different shapes {tuple(first.shape)} and {tuple(t.shape)} "
                "(broadcasting is not fused)"
            )
    if first.dtype.name not in DTYPES:
        return f"dtype {first.dtype.name} is not fusible (supported: {', '.join(DTYPES)})"
    return None
