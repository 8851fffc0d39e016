"""``eccl``: torch_emu's process-group backend for ``emu`` tensors.

Registered with torch_core.distributed when torch_emu is imported, as the
default backend for the ``emu`` device type. A collective is launched on the
tensor's current stream (:class:`torch_emu._EMUC._Collective`): in stream
order, the device copies the tensors into a host staging buffer and then
waits, like a collective kernel waiting for its peers; the group's worker
thread exchanges the staged bytes with the other ranks over core's TCP ring
and releases the stream, which copies the results into the tensors. Work
queued on the same stream after the call is ordered after the collective.

What is emulated: the exchange itself runs on the host (each emu "device" is
memory inside its own process, so there is no device-to-device path between
ranks); a real backend would run a kernel on the stream instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import torch_core
from torch_core import distributed as dist
from torch_emu import _EMUC

DEVICE_TYPE = "emu"


class _StreamStaged(dist.Staged):
    def __init__(self, handle: _EMUC._Collective, what: str) -> None:
        self._handle = handle
        self._what = what

    def arrays(self, timeout: float) -> list[np.ndarray]:
        if not self._handle.wait_staged(timeout):
            raise dist.DistTimeoutError(
                f"eccl: work queued before the collective on {self._what}'s stream did not "
                f"finish within {timeout:.1f} s"
            )
        return list(self._handle.arrays())

    def finish(self, ok: bool, timeout: float) -> None:
        self._handle.release(ok)
        if ok and not self._handle.wait_finished(timeout):
            raise dist.DistTimeoutError(
                f"eccl: copying the results back on {self._what}'s stream took over {timeout:.1f} s"
            )


class EcclBackend(dist.HostRingBackend):
    """Collectives for emu tensors, ordered on each tensor's current stream."""

    def stage(self, tensors: Sequence[torch_core.Tensor], writes: Sequence[bool]) -> dist.Staged:
        handle = _EMUC._launch_collective(list(tensors), list(writes))
        return _StreamStaged(handle, str(tensors[0].device))


dist.register_backend("eccl", EcclBackend, [DEVICE_TYPE])

__all__ = ["EcclBackend"]
