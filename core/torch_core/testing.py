"""What core's conformance suite (tests/conformance/) needs to know about a backend.

The suite is written against torch_core's public API only. The little it cannot
learn from that API a backend states in a :class:`BackendAdapter`, exposed as
``ADAPTER`` in its ``<package>.testing`` module:

* how to hold a stream at a point until the host releases it (ordering tests
  use this instead of timing);
* which capabilities it lacks, each with the reason a reader of the skip sees.

Capabilities are the suite's file names: ``device``, ``memory``, ``streams``,
``copies``, ``ops``, ``profiler``, ``fusion``, ``distributed``; one op is
``ops.<name>`` (e.g. ``ops.softmax``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from torch_core import _devices
from torch_core._streams import Stream

CAPABILITIES = (
    "device",
    "memory",
    "streams",
    "copies",
    "ops",
    "profiler",
    "fusion",
    "distributed",
)

# Opens a held stream: what block_stream returns.
Release = Callable[[], None]


@dataclass(frozen=True)
class BackendAdapter:
    """A backend as the conformance suite sees it.

    Args:
      device_type: the registered device type ("emu").
      package: the Python package that registers it (imported before testing),
        or None when it is registered already (the CPU).
      block: ``block(stream) -> release``: queues work that holds ``stream``
        until ``release()`` is called; None when the device cannot be held
        (the ordering tests then skip with ``unsupported["streams.block"]``).
      unsupported: capability (or ``ops.<name>``) -> why this backend lacks it.
      asynchronous: whether work is queued (True) or done before the call
        returns (the CPU); synchronous devices skip the queued-work checks.
    """

    device_type: str
    package: str | None = None
    block: Callable[[Stream], Release] | None = None
    unsupported: Mapping[str, str] = field(default_factory=dict)
    asynchronous: bool = True

    def load(self) -> None:
        """Imports the backend's package (which registers the device type)."""
        if self.package is not None:
            importlib.import_module(self.package)

    def device_count(self) -> int:
        return _devices.device_count(self.device_type)

    def is_available(self) -> bool:
        return _devices.is_available(self.device_type)

    def device(self, index: int = 0) -> str:
        """The device's name as tensors print it ("emu:1"; the CPU is just "cpu")."""
        return str(_devices.device(f"{self.device_type}:{index}"))

    def lacks(self, capability: str) -> str | None:
        """Why the backend lacks ``capability`` (or its parent ``x`` of ``x.y``), else None."""
        if capability in self.unsupported:
            return self.unsupported[capability]
        parent = capability.split(".", 1)[0]
        return self.unsupported.get(parent)

    def block_stream(self, stream: Stream) -> Release | None:
        return None if self.block is None else self.block(stream)


CPU = BackendAdapter(
    device_type="cpu",
    asynchronous=False,
    unsupported={
        "streams.block": "the CPU runs every op before the call returns: nothing to hold",
        "profiler": "the CPU has no device-side timeline (ops are timed on the host)",
        "memory": "CPU tensors use the host allocator, not core's caching allocator",
    },
)


def adapter_for(package: str) -> BackendAdapter:
    """``<package>.testing.ADAPTER`` (the backend's own), imported with the package."""
    if package in ("cpu", "torch_core"):
        return CPU
    module = importlib.import_module(f"{package}.testing")
    adapter = getattr(module, "ADAPTER", None)
    if not isinstance(adapter, BackendAdapter):
        raise TypeError(f"{package}.testing.ADAPTER must be a torch_core.testing.BackendAdapter")
    return adapter
