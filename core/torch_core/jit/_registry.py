"""The fuser seam: one fuser per device type, registered by name.

A device backend makes its tensors fusible by registering a Fuser for its
device type (core registers the CPU's). A fuser turns a checked Graph into a
FusedKernel, or returns None to let the call run eagerly (e.g. no compiler).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from torch_core import _C
from torch_core.jit._ir import Graph

Tensor = _C.Tensor


class FusedKernel(Protocol):
    """A compiled graph, ready to launch."""

    name: str

    def __call__(self, inputs: Sequence[Tensor]) -> Tensor:
        """Runs the graph on tensor inputs in argument order (same device, dtype and shape)."""
        ...


class Fuser(Protocol):
    def compile(self, graph: Graph) -> FusedKernel | None:
        """A kernel for ``graph``, or None to run it eagerly (the fuser warns why)."""
        ...


class _FuserRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fusers: dict[str, Fuser] = {}

    def register(self, device_type: str, fuser: Fuser, replace: bool) -> None:
        with self._lock:
            if device_type in self._fusers and not replace:
                existing = self._fusers[device_type]
                raise ValueError(f"device type '{device_type}' already has a fuser ({existing!r})")
            self._fusers[device_type] = fuser

    def get(self, device_type: str) -> Fuser | None:
        with self._lock:
            return self._fusers.get(device_type)

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._fusers)


_REGISTRY = _FuserRegistry()


def register_fuser(device_type: str, fuser: Fuser, *, replace: bool = False) -> None:
    """Makes ``fuser`` compile fused graphs for tensors of ``device_type``."""
    _REGISTRY.register(device_type, fuser, replace)


def get_fuser(device_type: str) -> Fuser | None:
    """The device type's fuser; None means its fused functions run eagerly."""
    return _REGISTRY.get(device_type)


def registered_fusers() -> list[str]:
    """Device types with a fuser."""
    return _REGISTRY.names()
