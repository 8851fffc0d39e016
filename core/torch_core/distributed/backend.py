"""The process-group backend seam: a registry of backends keyed by device type.

A backend moves one device type's tensors between ranks. Core ships ``tcp``
for CPU tensors; a device plugin registers its own when imported (torch_emu:
``eccl`` for ``emu`` tensors; a vendor: its collective library).

Each collective runs in two phases:

* **launch**, on the caller's thread, right when the user calls the
  collective: the backend captures what must be captured there (for an
  accelerator, the tensor's current stream, so the collective is ordered after
  the work already queued on it) and returns a :class:`Launched` (progress and cancel);
* **progress**, on the group's worker thread, after core has checked that every
  rank called the same collective with matching tensors: the data exchange.

A device library that runs collectives itself (launching kernels on the
stream) does its work at launch and returns a ``run`` that waits for its
completion. :class:`HostRingBackend` is the other way: stage the tensor in
host memory, run core's ring over TCP, write the result back; subclasses only
say how to stage (:meth:`HostRingBackend.stage`).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from torch_core import _C
from torch_core._registration import Registry, calling_package
from torch_core.distributed import ring
from torch_core.distributed.errors import DistBackendError
from torch_core.distributed.store import TCPStore
from torch_core.distributed.transport import RingTransport

Tensor = _C.Tensor


@dataclass
class Launched:
    """What a backend returns at launch: ``run`` (the progress phase) or ``cancel``.

    The group calls exactly one of them on its worker thread: ``cancel`` when
    the collective does not go ahead (ranks disagree, the group is broken), so
    a backend can release what it holds (a stream waiting for the exchange).
    """

    run: Callable[[], None]
    cancel: Callable[[], None] = lambda: None


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


_REDUCERS: dict[ReduceOp, Callable[[np.ndarray, np.ndarray], None]] = {
    ReduceOp.SUM: lambda acc, x: np.add(acc, x, out=acc),
    ReduceOp.AVG: lambda acc, x: np.add(acc, x, out=acc),
    ReduceOp.MAX: lambda acc, x: np.maximum(acc, x, out=acc),
    ReduceOp.MIN: lambda acc, x: np.minimum(acc, x, out=acc),
    ReduceOp.PRODUCT: lambda acc, x: np.multiply(acc, x, out=acc),
}


@dataclass(frozen=True)
class GroupContext:
    """What a backend gets from its process group."""

    rank: int
    world_size: int
    store: TCPStore
    timeout: float
    prefix: str  # store key prefix unique to this group and backend


class Backend(abc.ABC):
    """One process group's communicator for the device types it registered for.

    Every method is called on the caller's thread (launch) with tensors of
    this backend's device type, checked locally, and returns a
    :class:`Launched`. Its ``run`` is called on the group's worker thread only
    once every rank is known to have called the same collective with the same
    shapes and dtypes.
    """

    def __init__(self, ctx: GroupContext) -> None:
        self.ctx = ctx

    @abc.abstractmethod
    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> Launched: ...

    @abc.abstractmethod
    def broadcast(self, tensor: Tensor, src: int) -> Launched: ...

    @abc.abstractmethod
    def all_gather(self, outputs: Sequence[Tensor], tensor: Tensor) -> Launched: ...

    @abc.abstractmethod
    def reduce_scatter(
        self, output: Tensor, inputs: Sequence[Tensor], op: ReduceOp
    ) -> Launched: ...

    def close(self) -> None:  # noqa: B027  (optional hook)
        """Releases connections; called by destroy_process_group."""


class Staged(abc.ABC):
    """Tensors staged in host memory for a host-side exchange (see HostRingBackend)."""

    @abc.abstractmethod
    def arrays(self, timeout: float) -> list[np.ndarray]:
        """Host arrays of the tensors, once their contents are readable (worker thread)."""

    @abc.abstractmethod
    def finish(self, ok: bool, timeout: float) -> None:
        """Writes results back (if ``ok``) and releases the tensors (always called)."""


class HostRingBackend(Backend):
    """Collectives on host memory over core's TCP ring; subclasses define :meth:`stage`."""

    def __init__(self, ctx: GroupContext) -> None:
        super().__init__(ctx)
        self._ring: RingTransport | None = None

    @abc.abstractmethod
    def stage(self, tensors: Sequence[Tensor], writes: Sequence[bool]) -> Staged:
        """Launch-time staging of ``tensors`` (all on one device); ``writes[i]`` marks results."""

    def ring(self) -> RingTransport:
        if self._ring is None:
            c = self.ctx
            self._ring = RingTransport(c.store, c.prefix + "/ring", c.rank, c.world_size, c.timeout)
        return self._ring

    def _run(
        self,
        tensors: Sequence[Tensor],
        writes: Sequence[bool],
        body: Callable[[list[np.ndarray]], None],
    ) -> Launched:
        staged = self.stage(tensors, writes)

        def run() -> None:
            ok = False
            try:
                body([a.reshape(-1) for a in staged.arrays(self.ctx.timeout)])
                ok = True
            finally:
                staged.finish(ok, self.ctx.timeout)

        return Launched(run, lambda: staged.finish(False, self.ctx.timeout))

    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> Launched:
        reduce = _REDUCERS[op]

        def body(arrays: list[np.ndarray]) -> None:
            (flat,) = arrays
            ring.all_reduce(self.ring(), flat, reduce, "all_reduce")
            if op is ReduceOp.AVG:
                np.divide(flat, self.ctx.world_size, out=flat)

        return self._run([tensor], [True], body)

    def broadcast(self, tensor: Tensor, src: int) -> Launched:
        def body(arrays: list[np.ndarray]) -> None:
            ring.broadcast(self.ring(), arrays[0], src, "broadcast")

        return self._run([tensor], [self.ctx.rank != src], body)

    def all_gather(self, outputs: Sequence[Tensor], tensor: Tensor) -> Launched:
        def body(arrays: list[np.ndarray]) -> None:
            src, outs = arrays[0], arrays[1:]
            n = src.size
            gathered = np.empty(n * len(outs), dtype=src.dtype)
            r = self.ctx.rank
            gathered[r * n : (r + 1) * n] = src
            ring.all_gather(self.ring(), gathered, "all_gather")
            for i, out in enumerate(outs):
                out[...] = gathered[i * n : (i + 1) * n]

        return self._run([tensor, *outputs], [False] + [True] * len(outputs), body)

    def reduce_scatter(self, output: Tensor, inputs: Sequence[Tensor], op: ReduceOp) -> Launched:
        reduce = _REDUCERS[op]

        def body(arrays: list[np.ndarray]) -> None:
            out, ins = arrays[0], arrays[1:]
            flat = np.concatenate(ins) if ins else np.empty(0, dtype=out.dtype)
            lo, hi = ring.reduce_scatter_blocks(self.ring(), flat, reduce, "reduce_scatter")
            out[...] = flat[lo:hi]
            if op is ReduceOp.AVG:
                np.divide(out, self.ctx.world_size, out=out)

        return self._run([output, *inputs], [True] + [False] * len(inputs), body)

    def close(self) -> None:
        if self._ring is not None:
            self._ring.close()
            self._ring = None


# ---- the registry ------------------------------------------------------------------

BackendFactory = Callable[[GroupContext], Backend]


@dataclass(frozen=True)
class BackendInfo:
    name: str
    factory: BackendFactory
    device_types: tuple[str, ...]


_BACKENDS: Registry[BackendInfo] = Registry("process-group backend")
_DEFAULTS: dict[str, str] = {}


def register_backend(
    name: str,
    factory: BackendFactory,
    device_types: Sequence[str],
    *,
    default: bool = True,
    owner: str | None = None,
) -> None:
    """Registers a process-group backend for ``device_types``.

    With ``default`` (the usual case) it becomes the backend that
    ``init_process_group(backend=None)`` uses for those device types, unless
    one was registered before. ``owner`` (default: the caller's top-level
    package) holds the name: the same owner registering again replaces its
    backend, another owner gets a RegistrationError naming both.
    """
    if not name or not device_types:
        raise ValueError("register_backend needs a name and at least one device type")
    info = BackendInfo(name, factory, tuple(device_types))
    _BACKENDS.claim(name, info, owner or calling_package())
    if default:
        for device_type in device_types:
            _DEFAULTS.setdefault(device_type, name)


def registered_backends() -> dict[str, tuple[str, ...]]:
    """Backend name -> the device types it serves."""
    return {name: info.device_types for name, info in _BACKENDS.items()}


def default_backend(device_type: str) -> str:
    if device_type not in _DEFAULTS:
        raise DistBackendError(
            f"no process-group backend is registered for device type '{device_type}' "
            f"(registered: {_describe()}); import the device's package first"
        )
    return _DEFAULTS[device_type]


def backend_info(name: str) -> BackendInfo:
    info = _BACKENDS.get(name)
    if info is None:
        raise DistBackendError(
            f"unknown process-group backend '{name}' (registered: {_describe()}); "
            "a device plugin registers its backend when imported (e.g. import torch_emu for 'eccl')"
        )
    return info


def _describe() -> str:
    return ", ".join(f"{n} ({'/'.join(i.device_types)})" for n, i in _BACKENDS.items()) or "none"
