"""``nccl``: torch_cuda's process-group backend for ``cuda`` tensors.

Registered with torch_core.distributed when torch_cuda is imported, as the
default backend for the ``cuda`` device type. NCCL comes from the
``nvidia-nccl-cu13`` wheel (tools/cuda/requirements_lock.txt), or
``$TORCH_CUDA_NCCL_LIBRARY``: first beside the toolkit of the CUDA runtime
_CUDAC loaded, then in the installed ``nvidia`` package (torch_cuda._libraries
says why). It is loaded at run time;
``ncclGetVersion`` works without a GPU.

Per device, rank 0 makes an ``ncclUniqueId`` and hands it to the others
through the group's TCP store; every rank then creates its communicator with
``ncclCommInitRankConfig`` in non-blocking mode, polled until ready and
aborted when the group's timeout runs out.

NCCL checks nothing across ranks, and a collective is queued on the GPU when
it is called, so before queueing, the backend makes every rank agree through
the store, as core does for every backend: same collective, same shapes,
dtypes, reduce op and source. A mismatch or a missing rank raises from the
call itself (same messages as core's check), before anything reaches NCCL.
The collective then runs on the communicator's stream after the work queued
before it on the tensor's current stream, and that stream waits for its end
(events, see csrc/distributed/Nccl.h). ``Work.wait()`` blocks until the
results are in the tensors, bounded by the timeout (then the communicator is
aborted and the group is unusable).
"""

from __future__ import annotations

import glob
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

import torch_core
from torch_core import distributed as dist
from torch_core.distributed.group import _check_headers
from torch_cuda import _CUDAC, _libraries

DEVICE_TYPE = "cuda"
LIBRARY_ENV = "TORCH_CUDA_NCCL_LIBRARY"

NcclError = _CUDAC.NcclError
NcclTimeout = _CUDAC.NcclTimeout

_load_lock = threading.Lock()


def nccl_library() -> str | None:
    """The NCCL library load_nccl() loads: the pinned toolkit's first (torch_cuda._libraries)."""
    named = os.environ.get(LIBRARY_ENV, "")
    if named:
        return named
    for lib in _libraries.search_directories(("nccl",)):
        found = sorted(glob.glob(str(lib / "libnccl.so*")))
        if found:
            return found[0]
    return None


def load_nccl() -> None:
    """Loads NCCL once; raises DistBackendError saying what is missing."""
    with _load_lock:
        if _CUDAC._nccl_loaded():
            return
        if not _CUDAC._nccl_headers_available():
            raise dist.DistBackendError(
                "nccl: torch_cuda was built without NCCL's header (the nvidia-nccl-cu13 wheel was "
                "not installed for the build's Python; run tools/dev bootstrap and rebuild)"
            )
        library = nccl_library()
        if not library:
            raise dist.DistBackendError(
                "nccl: NCCL not found: install the nvidia-nccl-cu13 wheel "
                f"(tools/cuda/requirements_lock.txt: tools/dev bootstrap) or set ${LIBRARY_ENV}"
            )
        try:
            _CUDAC._nccl_load(library)
        except RuntimeError as error:
            raise dist.DistBackendError(f"nccl: {error}") from error


def nccl_version() -> tuple[int, int, int]:
    """NCCL's (major, minor, patch), e.g. (2, 28, 9); needs no GPU."""
    load_nccl()
    code = _CUDAC._nccl_version()
    # NCCL_VERSION(X, Y, Z): X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
    if code >= 10000:
        return code // 10000, (code % 10000) // 100, code % 100
    return code // 1000, (code % 1000) // 100, code % 100


class NcclBackend(dist.Backend):
    """Collectives for cuda tensors through NCCL, one communicator per device."""

    def __init__(self, ctx: dist.GroupContext) -> None:
        super().__init__(ctx)
        load_nccl()
        if _CUDAC._device_count() == 0:
            raise dist.DistBackendError(
                f"nccl: CUDA is not available: {_CUDAC._unavailable_reason()}"
            )
        self._comms: dict[int, Any] = {}
        self._seq = 0

    # -- communicators ----------------------------------------------------------------
    def _comm(self, device: int) -> Any:
        comm = self._comms.get(device)
        if comm is not None:
            return comm
        c = self.ctx
        # The n-th communicator of every rank is one NCCL communicator, whatever
        # device each rank uses (usually cuda:<local rank>).
        key = f"{c.prefix}/unique_id/{len(self._comms)}"
        # NCCL's bootstrap sockets stay on the loopback interface, like the
        # store (single host), unless the user chose an interface.
        os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
        if c.rank == 0:
            c.store.set(key, _CUDAC._nccl_unique_id())
        elif c.store.wait([key], c.timeout):
            raise dist.DistTimeoutError(
                f"nccl: rank 0 did not publish communicator #{len(self._comms)}'s id "
                f"within {c.timeout:.1f} s"
            )
        (unique_id,) = c.store.multi_get([key], c.timeout)
        try:
            comm = _CUDAC._NcclCommunicator(unique_id, c.rank, c.world_size, device, c.timeout)
        except NcclTimeout as error:
            raise dist.DistTimeoutError(str(error)) from error
        except RuntimeError as error:  # NcclError, or CudaError naming the device's problem
            raise dist.DistBackendError(str(error)) from error
        self._comms[device] = comm
        return comm

    # -- agreement before anything is queued ---------------------------------------------
    def _agree(self, op: str, tensors: Sequence[torch_core.Tensor], extra: dict[str, Any]) -> None:
        c = self.ctx
        self._seq += 1
        seq = self._seq
        header = {
            "seq": seq,
            "op": op,
            "shapes": [list(t.shape) for t in tensors],
            "dtypes": [t.dtype.name for t in tensors],
            **extra,
        }
        key = f"{c.prefix}/check/{{}}/{{}}"
        c.store.set(key.format(seq, c.rank), json.dumps(header).encode())
        if seq > 2:  # every rank has read seq-2 once anyone passed seq-1
            c.store.delete([key.format(seq - 2, c.rank)])
        keys = [key.format(seq, r) for r in range(c.world_size)]
        missing = c.store.wait(keys, c.timeout)
        if missing:
            ranks = sorted(int(k.rsplit("/", 1)[1]) for k in missing)
            who = f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))
            raise dist.DistTimeoutError(
                f"{op} (nccl collective #{seq}): {who} did not arrive within {c.timeout:.1f} s "
                "(dead, hung, or behind in its collectives)"
            )
        _check_headers([json.loads(v) for v in c.store.multi_get(keys, c.timeout)])

    def _launch(
        self,
        kind: str,
        tensors: Sequence[torch_core.Tensor],
        op: str,
        root: int,
        extra: dict[str, Any],
    ) -> dist.Launched:
        comm = self._comm(tensors[0].device.index)
        self._agree(kind, tensors, extra)
        try:
            work = comm.launch(kind, list(tensors), op, root, self.ctx.timeout)
        except NcclTimeout as error:
            raise dist.DistTimeoutError(str(error)) from error
        except RuntimeError as error:
            raise dist.DistBackendError(str(error)) from error
        timeout = self.ctx.timeout

        def run() -> None:
            try:
                work.run(timeout)
            except NcclTimeout as error:
                raise dist.DistTimeoutError(str(error)) from error
            except RuntimeError as error:
                raise dist.DistBackendError(str(error)) from error

        return dist.Launched(run, work.cancel)

    def all_reduce(self, tensor: torch_core.Tensor, op: dist.ReduceOp) -> dist.Launched:
        return self._launch("all_reduce", [tensor], op.value, 0, {"reduce": op.value})

    def broadcast(self, tensor: torch_core.Tensor, src: int) -> dist.Launched:
        return self._launch("broadcast", [tensor], "", src, {"src": src})

    def all_gather(
        self, outputs: Sequence[torch_core.Tensor], tensor: torch_core.Tensor
    ) -> dist.Launched:
        return self._launch("all_gather", [tensor, *outputs], "", 0, {})

    def reduce_scatter(
        self, output: torch_core.Tensor, inputs: Sequence[torch_core.Tensor], op: dist.ReduceOp
    ) -> dist.Launched:
        return self._launch("reduce_scatter", [output, *inputs], op.value, 0, {"reduce": op.value})

    def close(self) -> None:
        for comm in self._comms.values():
            comm.close()
        self._comms.clear()


dist.register_backend("nccl", NcclBackend, [DEVICE_TYPE])

__all__ = ["NcclBackend", "NcclError", "NcclTimeout", "load_nccl", "nccl_version"]
