"""The fuser seam: one fuser per device type, registered by name.

A device backend makes its tensors fusible by registering a Fuser for its
device type (core registers the CPU's). A fuser turns a checked Graph into a
FusedKernel, or returns None to let the call run eagerly (e.g. no compiler).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from torch_core import _C
from torch_core._registration import Registry, calling_package
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


_REGISTRY: Registry[Fuser] = Registry("fuser for device type")


def register_fuser(device_type: str, fuser: Fuser, *, owner: str | None = None) -> None:
    """Makes ``fuser`` compile fused graphs for tensors of ``device_type``.

    ``owner`` (default: the caller's top-level package) must be the same for
    every registration of one device type: another owner's raises
    RegistrationError naming both.
    """
    _REGISTRY.claim(device_type, fuser, owner or calling_package())


def get_fuser(device_type: str) -> Fuser | None:
    """The device type's fuser; None means its fused functions run eagerly."""
    return _REGISTRY.get(device_type)


def registered_fusers() -> list[str]:
    """Device types with a fuser."""
    return [name for name, _ in _REGISTRY.items()]
