"""The remote cache under faults: a private nginx cache, a tiny workspace, real Bazel.

Each scenario must end with a successful build whose outputs are correct, and the
stats must show the lowered hit rate instead of hiding it. The workspace is a temp
dir with a few genrules (its own --output_base), so a build takes about a second;
the cache is `torchsplit.cache_server.CacheServer` on a free loopback port with its
own state directory. Servers (nginx and Bazel) are shut down afterwards.
"""

from __future__ import annotations

import hashlib
import http.server
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from builds import REPO
from torchsplit.cache.server import CacheServer
from torchsplit.cache.stats import CacheStats, parse_summary

pytestmark = pytest.mark.bazel


BIG_BYTES = 256 * 1024
BUILD = f"""
genrule(name = "hello", outs = ["hello.txt"], cmd = "echo hello > $@")
genrule(name = "big", outs = ["big.txt"], cmd = "head -c {BIG_BYTES} /dev/zero | tr '\\\\0' b > $@")
genrule(
    name = "joined",
    srcs = [":hello", ":big"],
    outs = ["joined.txt"],
    cmd = "cat $(SRCS) | sha256sum | cut -c1-64 > $@",
)
# Its key changes with --define=SALT=...; it leaves a marker, then takes a while,
# so a test can act while the build is running.
genrule(
    name = "slow",
    outs = ["slow.txt"],
    cmd = "touch $(MARKER) && sleep 3 && echo $(SALT) > $@",
)
genrule(name = "after_slow", srcs = [":slow"], outs = ["after_slow.txt"], cmd = "cat $< $< > $@")
"""
TARGETS = ["//:joined", "//:after_slow"]
ACTIONS = 5  # one per genrule


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TinyWorkspace:
    """A genrule-only workspace built by the project's Bazel with its own output base."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.output_base = root / "output_base"
        self.marker = root / "slow.marker"
        ws = root / "ws"
        ws.mkdir()
        repos = REPO / "tools" / "repos"
        (ws / "WORKSPACE").write_text(
            "".join(
                f'local_repository(name = "{n}", path = "{repos / n}")\n'
                for n in ("rules_cc", "rules_java", "remote_coverage_tools")
            )
        )
        (ws / "BUILD.bazel").write_text(BUILD)
        self.ws = ws

    def bazel(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), cwd=self.ws, capture_output=True, text=True, timeout=timeout
        )

    def command(self, *args: str) -> list[str]:
        startup = ["--nohome_rc", f"--output_base={self.output_base}"]
        return [str(REPO / "tools" / "bazel"), *startup, *args]

    def build_args(self, url: str, salt: str, *extra: str) -> list[str]:
        return [
            "build",
            f"--remote_cache={url}",
            "--remote_timeout=5",
            "--spawn_strategy=local",
            "--nosandbox_debug",
            "--incompatible_strict_action_env",
            f"--define=SALT={salt}",
            f"--define=MARKER={self.marker}",
            *extra,
            *TARGETS,
        ]

    def build(self, url: str, salt: str, *extra: str) -> CacheStats:
        proc = self.bazel(*self.build_args(url, salt, *extra))
        assert proc.returncode == 0, proc.stderr[-3000:]
        self.check_outputs(salt)
        return parse_summary(proc.stderr)

    def check_outputs(self, salt: str) -> None:
        bin_dir = self.ws / "bazel-bin"
        assert (bin_dir / "hello.txt").read_text() == "hello\n"
        big = b"b" * BIG_BYTES
        assert (bin_dir / "big.txt").read_bytes() == big
        expected = hashlib.sha256(b"hello\n" + big).hexdigest() + "\n"
        assert (bin_dir / "joined.txt").read_text() == expected
        assert (bin_dir / "after_slow.txt").read_text() == f"{salt}\n{salt}\n"

    def clean(self) -> None:
        assert self.bazel("clean").returncode == 0


@pytest.fixture(scope="module")
def workspace() -> Iterator[TinyWorkspace]:
    root = Path(tempfile.mkdtemp(prefix="torchsplit-cache-test-"))
    tiny = TinyWorkspace(root)
    try:
        yield tiny
    finally:
        tiny.bazel("shutdown", timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def server() -> Iterator[CacheServer]:
    """A private, empty cache; its state dir comes from mkdtemp (nobody can traverse it)."""
    state = Path(tempfile.mkdtemp(prefix="torchsplit-cache-state-"))
    cache = CacheServer(state, port=_free_port())
    cache.start()
    try:
        yield cache
    finally:
        cache.stop()
        shutil.rmtree(state, ignore_errors=True)


def _fill(workspace: TinyWorkspace, server: CacheServer, salt: str) -> None:
    """From clean outputs, builds everything once (uploads), then cleans again."""
    workspace.clean()
    first = workspace.build(server.url, salt)
    assert first.hits == 0 and first.cacheable == ACTIONS
    workspace.clean()


def test_rebuild_after_clean_hits_every_action(
    workspace: TinyWorkspace, server: CacheServer
) -> None:
    _fill(workspace, server, "rebuild")
    stats = workspace.build(server.url, "rebuild")
    assert (stats.hits, stats.cacheable, stats.warnings) == (ACTIONS, ACTIONS, 0)
    assert stats.sentence() == "remote cache: 5/5 cacheable actions hit (100%)"


def test_read_only_mode_reads_but_never_writes(
    workspace: TinyWorkspace, server: CacheServer
) -> None:
    workspace.clean()
    before = server.usage()
    stats = workspace.build(server.url, "read-only", "--remote_upload_local_results=false")
    assert stats.hits == 0
    assert server.usage() == before  # nothing uploaded


def test_corrupted_cas_blob_is_detected_and_rebuilt(
    workspace: TinyWorkspace, server: CacheServer
) -> None:
    _fill(workspace, server, "corrupt")
    big = hashlib.sha256(b"b" * BIG_BYTES).hexdigest()
    blob = server.data_dir / "cas" / big
    assert blob.is_file(), "the big output was not uploaded"
    blob.write_bytes(b"x" * BIG_BYTES)  # same size, wrong content
    stats = workspace.build(server.url, "corrupt")  # checks the outputs' content
    # Bazel verified the digest, rejected the blob, ran the action and uploaded again.
    assert (stats.hits, stats.cacheable) == (ACTIONS - 1, ACTIONS)
    assert stats.warnings > 0
    assert stats.sentence().startswith("remote cache: 4/5 cacheable actions hit (80%); 1 cache")
    assert blob.read_bytes() == b"b" * BIG_BYTES  # repaired by the re-upload


def test_server_stopped_mid_build(workspace: TinyWorkspace, server: CacheServer) -> None:
    _fill(workspace, server, "stop-1")
    workspace.marker.unlink(missing_ok=True)
    # A new salt: hello/big/joined hit, slow and after_slow must run; stop the
    # server while slow runs.
    proc = subprocess.Popen(
        workspace.command(*workspace.build_args(server.url, "stop-2")),
        cwd=workspace.ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not workspace.marker.exists() and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    assert workspace.marker.exists(), "the slow action never started"
    assert server.stop()
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    workspace.check_outputs("stop-2")
    stats = parse_summary(stderr)
    assert stats.hits == 3 and stats.cacheable == ACTIONS  # hello, big, joined: from the cache
    assert stats.warnings > 0, stderr  # the failed upload/lookup is reported
    assert "cache warning" in stats.sentence()


def test_slow_server_still_serves_correct_outputs(workspace: TinyWorkspace) -> None:
    state = Path(tempfile.mkdtemp(prefix="torchsplit-cache-state-"))
    slow = CacheServer(state, port=_free_port(), limit_rate="128k")
    slow.start()
    try:
        _fill(workspace, slow, "slow")
        started = time.monotonic()
        stats = workspace.build(slow.url, "slow")
        assert time.monotonic() - started > 1.0  # the 256 KiB blob took >= 2 s at 128k/s
        assert stats.hits == stats.cacheable == ACTIONS
    finally:
        slow.stop()
        shutil.rmtree(state, ignore_errors=True)


class _StallingProxy(http.server.ThreadingHTTPServer):
    """Forwards to the cache, but holds every GET longer than Bazel's --remote_timeout."""

    def __init__(self, upstream: str, stall: float) -> None:
        self.upstream = upstream
        self.stall = stall
        super().__init__(("127.0.0.1", 0), _StallingHandler)


class _StallingHandler(http.server.BaseHTTPRequestHandler):
    server: _StallingProxy

    def do_GET(self) -> None:
        time.sleep(self.server.stall)
        self._forward(None)

    def do_PUT(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self._forward(self.rfile.read(length))

    def _forward(self, body: bytes | None) -> None:
        req = urllib.request.Request(
            self.server.upstream + self.path, data=body, method=self.command
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, data = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, data = exc.code, b""
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # Bazel gave up waiting: that is the point

    def log_message(self, format: str, *args: object) -> None:
        del format, args


def test_stalling_server_times_out_and_builds_locally(
    workspace: TinyWorkspace, server: CacheServer
) -> None:
    _fill(workspace, server, "stall")
    proxy = _StallingProxy(server.url, stall=4.0)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{proxy.server_address[1]}"
        stats = workspace.build(url, "stall", "--remote_timeout=1")
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert stats.hits == 0 and stats.cacheable == ACTIONS
    assert stats.warnings > 0
