"""Process groups: the default group, its worker thread, Work handles and agreement checks."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from torch_core import _C
from torch_core.distributed.backend import (
    Backend,
    GroupContext,
    Launched,
    backend_info,
    default_backend,
)
from torch_core.distributed.errors import DistBackendError, DistError, DistTimeoutError
from torch_core.distributed.store import TCPStore

Tensor = _C.Tensor
DEFAULT_TIMEOUT = 300.0


class Work:
    """The handle of a collective: ``wait()`` blocks until it is done and re-raises its error."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._done = threading.Event()
        self._error: BaseException | None = None

    def _finish(self, error: BaseException | None = None) -> None:
        self._error = error
        self._done.set()

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._error is None

    def exception(self) -> BaseException | None:
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Waits for the collective (the results are in the tensors after it); raises its error.

        With ``timeout`` (seconds), raises DistTimeoutError if it is still running then.
        """
        if not self._done.wait(timeout):
            raise DistTimeoutError(f"{self.name} did not complete within {timeout:.1f} s")
        if self._error is not None:
            raise self._error
        return True


@dataclass
class _Job:
    work: Work
    header: dict[str, Any]
    launched: Launched | None


@dataclass
class ProcessGroup:
    rank: int
    world_size: int
    store: TCPStore
    timeout: float
    backend_names: dict[str, str]  # device type -> backend; empty = the registry's defaults
    name: str = "default"
    _backends: dict[str, Backend] = field(default_factory=dict)
    _seq: int = 0
    _broken: BaseException | None = None
    _queue: queue.Queue[_Job | None] = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    _launch_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=f"pg-{self.name}", daemon=True)
        self._thread.start()

    # -- backends ------------------------------------------------------------------
    def backend_for(self, device_type: str) -> Backend:
        if device_type not in self._backends:
            names = self.backend_names
            name = names.get(device_type) or names.get("*") or default_backend(device_type)
            info = backend_info(name)
            if device_type not in info.device_types:
                raise DistBackendError(
                    f"process-group backend '{name}' does not support {device_type} tensors "
                    f"(it serves: {', '.join(info.device_types)})"
                )
            ctx = GroupContext(
                self.rank, self.world_size, self.store, self.timeout, f"{self.name}/{name}"
            )
            self._backends[device_type] = info.factory(ctx)
        return self._backends[device_type]

    # -- submission ----------------------------------------------------------------
    def submit(
        self, op: str, tensors: Sequence[Tensor], extra: dict[str, Any], launch: Any, async_op: bool
    ) -> Work | None:
        """Launches on this thread, queues the progress; waits unless ``async_op``."""
        if self._thread is None:
            raise DistError("the process group was destroyed")
        with self._launch_lock:  # launch order = queue order = the order ranks must agree on
            self._seq += 1
            seq = self._seq
            work = Work(f"{op} (collective #{seq} of rank {self.rank})")
            header = {
                "op": op,
                "shapes": [list(t.shape) for t in tensors],
                "dtypes": [t.dtype.name for t in tensors],
                **extra,
            }
            launched = None
            if tensors:
                device_type = tensors[0].device.type
                launched = launch(self.backend_for(device_type))
            self._queue.put(_Job(work, {"seq": seq, **header}, launched))
        if async_op:
            return work
        work.wait()
        return None

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                if self._broken is not None:
                    raise DistError(
                        f"{job.header['op']}: the process group is unusable after an earlier "
                        f"error: {self._broken}"
                    )
                self._agree(job.header)
            except BaseException as error:
                if job.launched is not None:
                    with contextlib.suppress(BaseException):
                        job.launched.cancel()
                job.work._finish(error)
                continue
            try:
                if job.launched is not None:
                    job.launched.run()
                job.work._finish()
            except BaseException as error:
                self._broken = error
                job.work._finish(error)

    # -- agreement: every rank called the same collective with matching tensors --------
    def _agree(self, header: dict[str, Any]) -> None:
        seq, op = header["seq"], header["op"]
        key = f"{self.name}/coll/{{}}/{{}}"
        try:
            self.store.set(key.format(seq, self.rank), json.dumps(header).encode())
            if seq > 2:  # every rank has read seq-2 once anyone passed seq-1
                self.store.delete([key.format(seq - 2, self.rank)])
            keys = [key.format(seq, r) for r in range(self.world_size)]
            missing = self.store.wait(keys, self.timeout)
            if missing:
                ranks = sorted(int(k.rsplit("/", 1)[1]) for k in missing)
                raise DistTimeoutError(
                    f"{op} (collective #{seq}): {_ranks(ranks)} did not arrive within "
                    f"{self.timeout:.1f} s (dead, hung, or behind in its collectives)"
                )
            headers = [json.loads(v) for v in self.store.multi_get(keys, self.timeout)]
        except DistTimeoutError as error:
            self._broken = error
            raise
        except DistError as error:
            self._broken = error
            raise
        _check_headers(headers)


def _ranks(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks)


def _shape(shape: list[int]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _check_headers(headers: list[dict[str, Any]]) -> None:
    """Raises the same error on every rank when any rank's header differs from rank 0's."""
    ref = headers[0]
    op = ref["op"]
    for r, h in enumerate(headers[1:], start=1):
        if h["op"] != op:
            raise DistError(
                f"collective #{ref['seq']}: rank {r} called {h['op']} but rank 0 called {op}"
            )
        for k in sorted(set(ref) | set(h)):
            if k in ("shapes", "dtypes") or ref.get(k) == h.get(k):
                continue
            raise DistError(f"{op}: rank {r} has {k}={h.get(k)!r} but rank 0 has {ref.get(k)!r}")
        if len(h["shapes"]) != len(ref["shapes"]):
            raise DistError(
                f"{op}: rank {r} passed {len(h['shapes'])} tensors "
                f"but rank 0 passed {len(ref['shapes'])}"
            )
        for i, (a, b) in enumerate(zip(h["shapes"], ref["shapes"], strict=True)):
            if a != b:
                what = "has shape" if len(ref["shapes"]) == 1 else f"has tensor {i} of shape"
                raise DistError(f"{op}: rank {r} {what} {_shape(a)} but rank 0 has {_shape(b)}")
        for i, (a, b) in enumerate(zip(h["dtypes"], ref["dtypes"], strict=True)):
            if a != b:
                what = "has dtype" if len(ref["dtypes"]) == 1 else f"has tensor {i} of dtype"
                raise DistError(f"{op}: rank {r} {what} {a} but rank 0 has {b}")


# ---- the default group ------------------------------------------------------------------

_default: ProcessGroup | None = None
_default_lock = threading.Lock()


def _parse_backend(backend: str | None) -> dict[str, str]:
    """None -> defaults; "eccl" -> eccl for its device types; "cpu:tcp,emu:eccl" -> explicit."""
    if backend is None or backend in ("", "default"):
        return {}
    if ":" not in backend:
        backend_info(backend)
        return {"*": backend}  # this backend for every device type (others are refused)
    names = {}
    for part in backend.split(","):
        device_type, _, name = part.strip().partition(":")
        backend_info(name)
        names[device_type] = name
    return names


def _parse_init_method(init_method: str | None) -> tuple[str, int]:
    if init_method is None or init_method == "env://":
        addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
        port = os.environ.get("MASTER_PORT")
        if port is None:
            raise ValueError("init_method env:// needs MASTER_PORT (and optionally MASTER_ADDR)")
        return addr, int(port)
    url = urlparse(init_method)
    if url.scheme != "tcp" or url.hostname is None or url.port is None:
        raise ValueError(f"init_method must look like tcp://127.0.0.1:PORT, got '{init_method}'")
    return url.hostname, url.port


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    *,
    rank: int | None = None,
    world_size: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    store: TCPStore | None = None,
) -> None:
    """Joins the default process group; returns once all ``world_size`` ranks have joined.

    ``backend``: None picks each device type's default (``tcp`` for cpu,
    ``eccl`` for emu once torch_emu is imported); a name ("eccl") uses that
    backend for every tensor (tensors of other device types are refused);
    "cpu:tcp,emu:eccl" names one per device type. Rank 0 hosts the store on
    loopback at ``init_method`` (``tcp://127.0.0.1:PORT``).
    ``timeout`` (seconds) bounds every wait; a rank missing past it is named.
    """
    global _default
    with _default_lock:
        if _default is not None:
            raise DistError(
                "init_process_group was already called; call destroy_process_group first"
            )
        rank = int(os.environ["RANK"]) if rank is None else rank
        world_size = int(os.environ["WORLD_SIZE"]) if world_size is None else world_size
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside world_size {world_size}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout}")
        names = _parse_backend(backend)
        if store is None:
            host, port = _parse_init_method(init_method)
            store = TCPStore(host, port, is_server=rank == 0, timeout=timeout)
        try:
            store.set(f"join/{rank}", b"1")
            missing = store.wait([f"join/{r}" for r in range(world_size)], timeout)
            if missing:
                ranks = sorted(int(k.split("/")[1]) for k in missing)
                store.set(f"join/gave_up/{rank}", b"1")
                if rank == 0:
                    # Keep hosting the store until the ranks that did join
                    # have timed out too, so they report the same error.
                    joined = [r for r in range(world_size) if r not in ranks and r != 0]
                    store.wait([f"join/gave_up/{r}" for r in joined], timeout)
                raise DistTimeoutError(
                    f"init_process_group: {_ranks(ranks)} did not join within {timeout:.1f} s "
                    f"(world_size {world_size})"
                )
        except BaseException:
            store.close()
            raise
        _default = ProcessGroup(rank, world_size, store, float(timeout), names)


def is_initialized() -> bool:
    return _default is not None


def group() -> ProcessGroup:
    if _default is None:
        raise DistError(
            "the default process group is not initialised: call init_process_group first"
        )
    return _default


def destroy_process_group() -> None:
    """Finishes queued collectives, closes connections and (rank 0) the store."""
    global _default
    with _default_lock:
        pg, _default = _default, None
    if pg is None:
        return
    pg._queue.put(None)
    if pg._thread is not None:
        pg._thread.join(pg.timeout + 5.0)
        pg._thread = None
    for backend in pg._backends.values():
        with contextlib.suppress(Exception):
            backend.close()
    # Rank 0 hosts the store: keep it up until every rank has left, so that the
    # others can finish (or report their own errors); bounded by the timeout
    # since a dead rank never leaves.
    with contextlib.suppress(DistError):
        pg.store.set(f"leave/{pg.rank}", b"1")
        if pg.rank == 0:
            pg.store.wait([f"leave/{r}" for r in range(pg.world_size)], pg.timeout)
    pg.store.close()
