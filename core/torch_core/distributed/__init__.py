"""torch_core.distributed: process groups and collectives, with backends keyed by device.

Rank 0 hosts a TCP key-value store on loopback; every rank joins it with
:func:`init_process_group`. Collectives work in place on the given tensor,
like PyTorch's, and go to the backend registered for the tensor's device type:
core ships ``tcp`` (CPU tensors, a ring over loopback sockets); device plugins
register their own (:func:`register_backend`; torch_emu registers ``eccl``).
``async_op=True`` returns a :class:`Work` whose ``wait()`` re-raises errors.
Every wait is bounded by the group timeout, and errors name the ranks at fault.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch_core import _C
from torch_core.distributed.backend import (
    Backend,
    GroupContext,
    HostRingBackend,
    Launched,
    ReduceOp,
    Staged,
    register_backend,
    registered_backends,
)
from torch_core.distributed.errors import DistBackendError, DistError, DistTimeoutError
from torch_core.distributed.group import (
    ProcessGroup,
    Work,
    destroy_process_group,
    group,
    init_process_group,
    is_initialized,
)
from torch_core.distributed.store import TCPStore
from torch_core.distributed.tcp import TcpBackend

Tensor = _C.Tensor

register_backend("tcp", TcpBackend, ["cpu"])

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "DistTimeoutError",
    "GroupContext",
    "HostRingBackend",
    "Launched",
    "ProcessGroup",
    "ReduceOp",
    "Staged",
    "TCPStore",
    "Work",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_initialized",
    "reduce_scatter",
    "register_backend",
    "registered_backends",
]

_OPS = {
    "sum": ReduceOp.SUM,
    "avg": ReduceOp.AVG,
    "mean": ReduceOp.AVG,
    "max": ReduceOp.MAX,
    "min": ReduceOp.MIN,
    "product": ReduceOp.PRODUCT,
}


def get_rank() -> int:
    return group().rank


def get_world_size() -> int:
    return group().world_size


def get_backend(device_type: str = "cpu") -> str:
    """The name of the backend the default group uses for ``device_type``."""
    from torch_core.distributed.backend import default_backend

    names = group().backend_names
    return names.get(device_type) or names.get("*") or default_backend(device_type)


def _op(op: ReduceOp | str, name: str, tensor: Tensor) -> ReduceOp:
    if isinstance(op, str):
        if op.lower() not in _OPS:
            raise ValueError(f"{name}: unknown reduce op '{op}' (use one of {', '.join(_OPS)})")
        op = _OPS[op.lower()]
    if op is ReduceOp.AVG and not tensor.dtype.is_floating_point:
        raise ValueError(
            f"{name}: ReduceOp.AVG needs a floating-point tensor, got {tensor.dtype.name}"
        )
    return op


def _check(name: str, tensors: Sequence[Tensor]) -> None:
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected torch_core Tensors, got {type(t).__name__}")
    devices = {str(t.device) for t in tensors}
    if len(devices) > 1:
        raise ValueError(
            f"{name}: all tensors must be on one device, got {', '.join(sorted(devices))}"
        )


def _check_list(name: str, what: str, ref: Tensor, tensors: Sequence[Tensor], world: int) -> None:
    if len(tensors) != world:
        raise ValueError(f"{name}: {what} must hold world_size={world} tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(ref.shape) or t.dtype != ref.dtype:
            raise ValueError(
                f"{name}: {what}[{i}] is {t.dtype.name}{tuple(t.shape)} but the tensor is "
                f"{ref.dtype.name}{tuple(ref.shape)}"
            )


def all_reduce(
    tensor: Tensor, op: ReduceOp | str = ReduceOp.SUM, *, async_op: bool = False
) -> Work | None:
    """Reduces ``tensor`` across ranks in place: ``sum``, ``avg``, ``max``, ``min``, ``product``."""
    _check("all_reduce", [tensor])
    rop = _op(op, "all_reduce", tensor)
    return group().submit(
        "all_reduce", [tensor], {"reduce": rop.value}, lambda b: b.all_reduce(tensor, rop), async_op
    )


def broadcast(tensor: Tensor, src: int, *, async_op: bool = False) -> Work | None:
    """Copies rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    _check("broadcast", [tensor])
    pg = group()
    if not 0 <= src < pg.world_size:
        raise ValueError(f"broadcast: src {src} is outside world_size {pg.world_size}")
    return pg.submit(
        "broadcast", [tensor], {"src": src}, lambda b: b.broadcast(tensor, src), async_op
    )


def all_gather(tensor_list: list[Tensor], tensor: Tensor, *, async_op: bool = False) -> Work | None:
    """Fills ``tensor_list[r]`` with rank r's ``tensor`` on every rank."""
    pg = group()
    _check("all_gather", [tensor, *tensor_list])
    _check_list("all_gather", "tensor_list", tensor, tensor_list, pg.world_size)
    outputs = list(tensor_list)
    return pg.submit("all_gather", [tensor], {}, lambda b: b.all_gather(outputs, tensor), async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: ReduceOp | str = ReduceOp.SUM,
    *,
    async_op: bool = False,
) -> Work | None:
    """``output`` on rank r becomes the reduction of every rank's ``input_list[r]``."""
    pg = group()
    _check("reduce_scatter", [output, *input_list])
    _check_list("reduce_scatter", "input_list", output, input_list, pg.world_size)
    rop = _op(op, "reduce_scatter", output)
    inputs = list(input_list)
    return pg.submit(
        "reduce_scatter",
        [output],
        {"reduce": rop.value},
        lambda b: b.reduce_scatter(output, inputs, rop),
        async_op,
    )


def barrier(*, async_op: bool = False) -> Work | None:
    """Returns once every rank has reached the barrier (or raises naming the ranks that did not)."""
    return group().submit("barrier", [], {}, None, async_op)
