"""A TCP key-value store on loopback: rank 0 hosts it, every rank is a client.

The wire format is length-prefixed binary (no pickle): a request is a command
byte, a timeout in milliseconds and a list of byte strings; a reply is a status
byte and a list of byte strings. Waits happen on the server, bounded by the
client's timeout, so no client ever polls.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

from torch_core.distributed.errors import DistError, DistTimeoutError

_SET, _GET, _ADD, _DELETE, _CHECK = 1, 2, 3, 4, 5
_OK, _TIMEOUT, _ERROR = 0, 1, 2
_HEADER = struct.Struct("!BIH")  # command/status, timeout ms, item count
_LEN = struct.Struct("!I")
_MAX_ITEM = 64 << 20


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = bytearray(n)
    view = memoryview(data)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise ConnectionError("connection closed")
        got += k
    return bytes(data)


def _send_message(sock: socket.socket, code: int, timeout_ms: int, items: list[bytes]) -> None:
    parts = [_HEADER.pack(code, timeout_ms, len(items))]
    for item in items:
        parts.append(_LEN.pack(len(item)))
        parts.append(item)
    sock.sendall(b"".join(parts))


def _recv_message(sock: socket.socket) -> tuple[int, int, list[bytes]]:
    code, timeout_ms, count = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    items = []
    for _ in range(count):
        (length,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
        if length > _MAX_ITEM:
            raise DistError(f"store: item of {length} bytes exceeds the {_MAX_ITEM}-byte limit")
        items.append(_recv_exact(sock, length))
    return code, timeout_ms, items


class StoreServer:
    """Serves the store on 127.0.0.1 (port 0 picks a free one) from daemon threads."""

    def __init__(self, port: int = 0) -> None:
        self._data: dict[bytes, bytes] = {}
        self._cond = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        self._connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept_loop, name="store-accept", daemon=True)
        self._thread.start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._cond:
                self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ConnectionError, DistError):
            while True:
                code, timeout_ms, items = _recv_message(conn)
                status, reply = self._handle(code, timeout_ms / 1000.0, items)
                _send_message(conn, status, 0, reply)
        conn.close()

    def _handle(self, code: int, timeout: float, items: list[bytes]) -> tuple[int, list[bytes]]:
        with self._cond:
            if code == _SET:
                self._data[items[0]] = items[1]
                self._cond.notify_all()
                return _OK, []
            if code == _ADD:
                value = int(self._data.get(items[0], b"0")) + int(items[1])
                self._data[items[0]] = str(value).encode()
                self._cond.notify_all()
                return _OK, [str(value).encode()]
            if code == _DELETE:
                for key in items:
                    self._data.pop(key, None)
                return _OK, []
            if code == _CHECK:
                return _OK, [b"1" if key in self._data else b"0" for key in items]
            if code == _GET:
                deadline = time.monotonic() + timeout
                while True:
                    missing = [key for key in items if key not in self._data]
                    if not missing:
                        return _OK, [self._data[key] for key in items]
                    left = deadline - time.monotonic()
                    if left <= 0 or self._closed:
                        return _TIMEOUT, missing
                    self._cond.wait(min(left, 1.0))
        return _ERROR, [f"unknown store command {code}".encode()]

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._cond:
            self._cond.notify_all()
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            self._connections.clear()


class TCPStore:
    """A client of the store (``host`` must be loopback); rank 0 also starts the server.

    Every call is bounded by ``timeout`` seconds. ``get`` waits for keys that are
    not set yet; on timeout it raises DistTimeoutError listing the missing keys.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        is_server: bool = False,
        timeout: float = 300.0,
    ) -> None:
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError(f"the store binds to loopback only; got host '{host}'")
        self.timeout = float(timeout)
        self._server = StoreServer(port) if is_server else None
        self.host = "127.0.0.1"
        self.port = self._server.port if self._server else port
        self._lock = threading.Lock()
        self._sock = self._connect()

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self.timeout
        delay = 0.01
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            except OSError as error:
                if time.monotonic() + delay > deadline:
                    raise DistTimeoutError(
                        f"store at {self.host}:{self.port} (hosted by rank 0) did not answer "
                        f"within {self.timeout:.1f} s: {error}"
                    ) from error
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock

    def _call(
        self, code: int, items: list[bytes], timeout: float | None = None
    ) -> tuple[int, list[bytes]]:
        wait = self.timeout if timeout is None else timeout
        with self._lock:
            try:
                self._sock.settimeout(wait + 5.0)
                _send_message(self._sock, code, int(wait * 1000), items)
                status, _, reply = _recv_message(self._sock)
            except (OSError, ConnectionError) as error:
                raise DistError(
                    f"store at {self.host}:{self.port} (hosted by rank 0) is unreachable: {error}"
                ) from error
        if status == _ERROR:
            raise DistError(reply[0].decode())
        return status, reply

    def set(self, key: str, value: bytes) -> None:
        self._call(_SET, [key.encode(), bytes(value)])

    def get(self, key: str, timeout: float | None = None) -> bytes:
        return self.multi_get([key], timeout)[0]

    def multi_get(self, keys: list[str], timeout: float | None = None) -> list[bytes]:
        """Values of ``keys``, once all are set; DistTimeoutError names the missing ones."""
        status, reply = self._call(_GET, [k.encode() for k in keys], timeout)
        if status != _OK:
            wait = self.timeout if timeout is None else timeout
            missing = [k.decode() for k in reply]
            raise DistTimeoutError(f"store keys {missing} were not set within {wait:.1f} s")
        return reply

    def wait(self, keys: list[str], timeout: float | None = None) -> list[str]:
        """Waits until every key is set; returns the keys still missing at the timeout."""
        status, reply = self._call(_GET, [k.encode() for k in keys], timeout)
        return [] if status == _OK else [k.decode() for k in reply]

    def add(self, key: str, amount: int) -> int:
        _, reply = self._call(_ADD, [key.encode(), str(int(amount)).encode()])
        return int(reply[0])

    def check(self, keys: list[str]) -> list[bool]:
        _, reply = self._call(_CHECK, [k.encode() for k in keys])
        return [r == b"1" for r in reply]

    def delete(self, keys: list[str]) -> None:
        self._call(_DELETE, [k.encode() for k in keys])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        if self._server is not None:
            self._server.close()
