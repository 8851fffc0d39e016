"""Ring transport over loopback TCP: each rank sends to rank+1 and receives from rank-1.

Bulk data moves in frames (4 MiB by default) so any size works with bounded
scratch memory; sending runs on a helper thread while the caller receives, so
two neighbours never deadlock on full socket buffers. Every socket operation
is bounded by the group timeout, and errors name the peer rank.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

from torch_core.distributed.errors import DistError, DistTimeoutError
from torch_core.distributed.store import TCPStore

FRAME_BYTES = 4 << 20
_HELLO = struct.Struct("!ii")  # rank, ring generation check


class RingTransport:
    """Two sockets per rank: ``to_next`` (rank+1) and ``from_prev`` (rank-1)."""

    def __init__(
        self, store: TCPStore, prefix: str, rank: int, world_size: int, timeout: float
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout
        self.next = (rank + 1) % world_size
        self.prev = (rank - 1) % world_size
        self._scratch = bytearray(FRAME_BYTES)
        self._sender_error: BaseException | None = None
        if world_size == 1:
            return
        listener = socket.create_server(("127.0.0.1", 0))
        try:
            listener.settimeout(timeout)
            store.set(f"{prefix}/addr/{rank}", str(listener.getsockname()[1]).encode())
            port = int(store.get(f"{prefix}/addr/{self.next}", timeout))
            self.to_next = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            self.to_next.sendall(_HELLO.pack(rank, world_size))
            try:
                self.from_prev, _ = listener.accept()
            except TimeoutError as error:
                raise DistTimeoutError(
                    f"rank {self.prev} did not connect to rank {rank} within {timeout:.1f} s"
                ) from error
            self.from_prev.settimeout(timeout)
            peer, world = _HELLO.unpack(self._recv_exact_small(_HELLO.size))
            if (peer, world) != (self.prev, world_size):
                raise DistError(
                    f"rank {rank} expected rank {self.prev} of {world_size} on its ring link, "
                    f"got rank {peer} of {world}"
                )
        finally:
            listener.close()
        for sock in (self.to_next, self.from_prev):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(timeout)

    def _recv_exact_small(self, n: int) -> bytes:
        buf = bytearray(n)
        self._recv_into(memoryview(buf), "connecting")
        return bytes(buf)

    # -- primitives --------------------------------------------------------------
    def _recv_into(self, view: memoryview, what: str) -> None:
        got = 0
        while got < len(view):
            try:
                k = self.from_prev.recv_into(view[got:])
            except TimeoutError as error:
                raise DistTimeoutError(
                    f"{what}: rank {self.prev} sent nothing to rank {self.rank} "
                    f"for {self.timeout:.1f} s"
                ) from error
            except OSError as error:
                raise DistError(
                    f"{what}: connection from rank {self.prev} failed: {error}"
                ) from error
            if k == 0:
                raise DistError(f"{what}: rank {self.prev} closed its connection (did it exit?)")
            got += k

    def _send(self, view: memoryview, what: str) -> None:
        try:
            for start in range(0, len(view), FRAME_BYTES):
                self.to_next.sendall(view[start : start + FRAME_BYTES])
        except TimeoutError as error:
            raise DistTimeoutError(
                f"{what}: rank {self.next} accepted no data from rank {self.rank} "
                f"for {self.timeout:.1f} s"
            ) from error
        except OSError as error:
            raise DistError(f"{what}: connection to rank {self.next} failed: {error}") from error

    def exchange(
        self,
        send: memoryview | None,
        recv_bytes: int,
        on_frame: Callable[[int, memoryview], None] | None = None,
        recv_into: memoryview | None = None,
        what: str = "collective",
    ) -> None:
        """Sends ``send`` to the next rank while receiving ``recv_bytes`` from the previous one.

        Received bytes go straight into ``recv_into`` when given; otherwise each
        frame is handed to ``on_frame(offset, frame)`` (valid only during the call).
        """
        sender: threading.Thread | None = None
        errors: list[BaseException] = []
        if send is not None and len(send):

            def run() -> None:
                try:
                    self._send(send, what)
                except BaseException as error:  # re-raised on the calling thread
                    errors.append(error)

            sender = threading.Thread(target=run, name="ring-send", daemon=True)
            sender.start()
        try:
            if recv_into is not None:
                for start in range(0, recv_bytes, FRAME_BYTES):
                    self._recv_into(recv_into[start : start + FRAME_BYTES], what)
            elif recv_bytes:
                scratch = memoryview(self._scratch)
                for start in range(0, recv_bytes, FRAME_BYTES):
                    frame = scratch[: min(FRAME_BYTES, recv_bytes - start)]
                    self._recv_into(frame, what)
                    assert on_frame is not None
                    on_frame(start, frame)
        except BaseException:
            # Unblock the sender so its thread ends; the group is broken anyway.
            self.close()
            raise
        finally:
            if sender is not None:
                sender.join(self.timeout + 1.0)
        if errors:
            raise errors[0]
        if sender is not None and sender.is_alive():
            raise DistTimeoutError(f"{what}: sending to rank {self.next} did not finish")

    def send(self, view: memoryview, what: str) -> None:
        self._send(view, what)

    def recv_into(self, view: memoryview, what: str) -> None:
        for start in range(0, len(view), FRAME_BYTES):
            self._recv_into(view[start : start + FRAME_BYTES], what)

    def close(self) -> None:
        for name in ("to_next", "from_prev"):
            sock = getattr(self, name, None)
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
